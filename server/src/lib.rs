//! codemode-server: the MCP adapter, its transports, the built-in catalogs
//! and the `codemode` binary.
//!
//! The public API is what this file re-exports; every module is private to
//! the crate. [`load_catalogs`] builds the CodeMode service from built-in
//! catalogs and manifests ([`catalog_sources`] gives them unbuilt);
//! [`FileConfig`] is the TOML configuration; [`CodeModeServer`] exposes the
//! service as exactly three MCP tools, over stdio ([`serve_stdio`]) or over
//! stateless Streamable HTTP with bearer authentication ([`router`],
//! [`HttpOptions`], served by [`serve_listener`]); [`Tool`] names the three
//! tools and holds their texts and schemas; plain `tools/call` requests
//! are answered without rmcp's per-request service, and duplicate members
//! in tool calls are refused before rmcp parses them; [`AskPolicy`]
//! asks a person through the MCP client before the calls a policy marks
//! *ask*; [`Metrics`] counts and times tool calls for `/metrics`;
//! [`start_upstreams`] imports the tools of MCP servers and
//! [`load_openapi`] the operations of OpenAPI descriptions as
//! capabilities; [`Allocator`] is the binary's memory allocator; [`Cli`]
//! and [`run_cli`] are the binary's command line.

// A public type that a caller could not name is a re-export missing below.
#![warn(unnameable_types)]

pub(crate) mod allocator;
pub(crate) mod approval;
pub(crate) mod catalogs;
pub(crate) mod cli;
pub(crate) mod config;
pub(crate) mod drain;
pub(crate) mod http;
pub(crate) mod import_policy;
pub(crate) mod logging;
pub(crate) mod mcp;
pub(crate) mod openapi;
pub(crate) mod strict;
pub(crate) mod telemetry;
pub(crate) mod tool;
pub(crate) mod upstream;

pub use allocator::{limit_huge_pages, Allocator};
pub use approval::{AskPolicy, UnknownAskEntry};
pub use catalogs::conformance::{
    capabilities as conformance_capabilities, disabled as conformance_disabled, SECRET_DETAIL,
};
pub use catalogs::demo::{capabilities as demo_capabilities, DATA_VERSION as DEMO_DATA_VERSION};
pub use catalogs::{
    all_of as all_of_policies, load as load_catalogs, sources as catalog_sources,
    LoadError as CatalogError, Sources as CatalogSources,
};
pub use cli::{build_service, main as run_cli, program_text, Cli, Command, Common, SetupError};
pub use config::{
    ApprovalConfig, ConfigError, FileConfig, HttpConfig, LimitsConfig, PolicyConfig,
    PolicyConfigError, TelemetryConfig, TokenConfig,
};
pub use http::connection::ConnectionLimits;
pub use http::health::{HEALTHZ, READYZ};
pub use http::listener::{serve as serve_listener, DrainOptions, MAX_HEAD_BYTES, PROBE_SLOTS};
pub use http::{
    check_metrics_address, max_body_bytes, metrics_listener_options, metrics_router, router,
    token_digest_hex, HttpConfigError, HttpOptions, HttpResolver, Token, BODY_ENVELOPE_BYTES,
    DEFAULT_BODY_BYTES_IN_FLIGHT, EXAMPLE_TOKEN_DIGEST, LOOPBACK_ORIGINS,
};
pub use import_policy::PolicyRequired;
pub use logging::init_to as init_logging_to;
pub use mcp::{
    serve_stdio, serve_stdio_with, CodeModeServer, Resolver as McpResolver, INSTRUCTIONS,
};
pub use openapi::{
    collect as collect_openapi, load as load_openapi, load_text as load_openapi_text, process_env,
    DocumentError as OpenApiDocumentError, Filter as OpenApiFilter, HttpVersion, ImportedOperation,
    OpenApiConfig, OpenApiConfigError, OpenApiError, OpenApiSource, Spec as OpenApiSpec,
};
pub use telemetry::Metrics;
pub use tool::Tool;
pub use upstream::{
    collect as collect_upstreams, parse_flag as parse_upstream_flag, start as start_upstreams,
    StartError, StopOnDrop, Transport, Upstream, UpstreamConfig, UpstreamError, Upstreams,
};
