//! codemode-server: the MCP adapter, its transports, the built-in catalogs
//! and the `codemode` binary.
//!
//! [`catalogs::load`] builds the CodeMode service from built-in catalogs
//! and manifests; [`config`] reads the TOML configuration; [`mcp`] exposes
//! the service as exactly three MCP tools over stdio, [`http`] over
//! stateless Streamable HTTP with bearer authentication (plain
//! `tools/call` requests answered by [`direct`] without rmcp's
//! per-request service); [`telemetry`] counts and times tool calls for
//! `/metrics`; [`cli`] is the binary's command line.

pub mod catalogs;
pub mod cli;
pub mod config;
pub mod direct;
pub mod drain;
pub mod http;
pub mod imported;
pub mod logging;
pub mod mcp;
pub mod telemetry;
pub mod upstream;
