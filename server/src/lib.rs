//! codemode-server: the MCP adapter, its transports, the built-in catalogs
//! and the `codemode` binary.
//!
//! [`catalogs::load`] builds the CodeMode service from built-in catalogs
//! and manifests; [`config`] reads the TOML configuration; [`mcp`] exposes
//! the service as exactly three MCP tools ([`tool`]) over stdio, [`http`]
//! over stateless Streamable HTTP with bearer authentication (plain
//! `tools/call` requests answered by [`http::plain_call`] without rmcp's
//! per-request service); [`strict`] refuses duplicate members in tool calls
//! before rmcp parses them; [`approval`] asks a person through the MCP
//! client before the calls a policy marks *ask*; [`telemetry`] counts and
//! times tool calls for `/metrics`; [`upstream`] imports the tools of MCP
//! servers and [`openapi`] the operations of OpenAPI descriptions as
//! capabilities; [`allocator`] is the binary's memory allocator; [`cli`]
//! is the binary's command line.

pub mod allocator;
pub mod approval;
pub mod catalogs;
pub mod cli;
pub mod config;
pub mod drain;
pub mod http;
pub mod imported;
pub mod logging;
pub mod mcp;
pub mod openapi;
pub mod strict;
pub mod telemetry;
pub mod tool;
pub mod upstream;
