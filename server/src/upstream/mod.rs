//! Code mode over existing MCP servers: every tool of every configured
//! upstream server becomes a capability.
//!
//! An upstream is configured with `--upstream NAME=COMMAND|URL` or an
//! `[[upstream]]` table ([`config`]). [`start`] connects to each with
//! rmcp's client ([`client`]), imports its tools as capabilities named
//! `NAME.<snake_case tool>` with IDs `upstream.NAME.<tool>` ([`naming`],
//! [`import`]) and supervises the connections ([`supervisor`]): restarts
//! with backoff, re-imports on tool list changes, and swaps each new
//! catalog into the service atomically. Calls go through binding and
//! authorization like native ones and are forwarded with the canonical
//! arguments; cancelling an execution cancels the upstream request.

pub mod client;
pub mod config;
pub mod import;
pub mod naming;
pub mod supervisor;
pub mod text_result;

pub use config::{collect, parse_flag, Transport, Upstream, UpstreamConfig, UpstreamError};
pub use supervisor::{start, StartError, StopOnDrop, Upstreams};
