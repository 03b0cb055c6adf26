//! codemode-server: the MCP adapter, its transports, the built-in catalogs
//! and the `codemode` binary.
//!
//! [`catalogs::load`] builds the CodeMode service from built-in catalogs
//! and manifests; [`config`] reads the TOML configuration; [`mcp`] exposes
//! the service as exactly three MCP tools over stdio, [`http`] over
//! stateless Streamable HTTP with bearer authentication (plain
//! `tools/call` requests answered by [`direct`] without rmcp's
//! per-request service); [`telemetry`] counts and times tool calls for
//! `/metrics`; [`upstream`] imports the tools of MCP servers and
//! [`openapi`] the operations of OpenAPI descriptions as capabilities;
//! [`cli`] is the binary's command line.

pub mod allocator;
pub mod catalogs;
pub mod cli;
pub mod config;
pub mod direct;
pub mod http;
pub mod mcp;
pub mod openapi;
pub mod telemetry;
pub mod upstream;
