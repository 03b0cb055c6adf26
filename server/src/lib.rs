//! codemode-server: the MCP adapter, its transports and the `codemode`
//! binary.
//!
//! This crate is not written yet; the server issue builds it.
