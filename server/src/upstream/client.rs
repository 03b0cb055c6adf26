//! The MCP client side of one upstream server: connecting (a supervised
//! stdio child process or a Streamable HTTP endpoint), listing its tools
//! within bounds, and forwarding calls.
//!
//! [`connect`] starts the transport and runs rmcp's `initialize`
//! handshake. The child's stderr is read line by line into the debug log
//! (never onto our stdout or stderr, where it would break the command
//! line's contract), and the child is killed when its transport is dropped.
//! [`Listener`] is the client handler: it only turns
//! `notifications/tools/list_changed` into a signal for the supervisor.
//! [`list_tools`] follows pagination up to [`MAX_PAGES`] pages and
//! [`MAX_TOOLS`] tools. [`Link`] is the current connection as capability
//! handlers see it: a call while the server is down fails at once, and a
//! call whose future is dropped (execution cancelled or out of time) makes
//! rmcp send `notifications/cancelled` upstream.

use super::config::{Transport, Upstream};
use crate::logging::{foreign, redact_urls, CHILD_STDERR_TARGET};
use crate::upstream::config::inherited;
use codemode_catalog::HandlerError;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    JsonObject, PaginatedRequestParams, Tool,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, RwLock};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::Notify;

/// At most this many `tools/list` pages are read from one server.
pub const MAX_PAGES: usize = 64;
/// At most this many tools are imported from one server; the rest are
/// dropped with a warning.
pub const MAX_TOOLS: usize = 1000;
/// Longest line of a child's stderr copied to the log.
const MAX_STDERR_LINE: usize = 4096;

/// The client handler of an upstream connection.
#[derive(Clone)]
pub struct Listener {
    changed: Arc<Notify>,
}

impl Listener {
    /// A handler that signals `changed` on every tool list change.
    pub fn new(changed: Arc<Notify>) -> Listener {
        Listener { changed }
    }
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("codemode", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

/// A running connection to an upstream server.
pub type Connection = RunningService<RoleClient, Listener>;

/// Starts the transport and initializes the session. The error is for the
/// log: it names what failed, never header or environment values.
pub async fn connect(upstream: &Upstream, listener: Listener) -> Result<Connection, String> {
    match &upstream.transport {
        Transport::Stdio {
            program,
            args,
            env,
            cwd,
        } => {
            // A minimal environment: the few variables every program
            // needs, then what the table names (never codemode's secrets).
            let mut command = tokio::process::Command::new(program);
            command
                .args(args)
                .env_clear()
                .envs(std::env::vars_os().filter(|(k, _)| k.to_str().is_some_and(inherited)))
                .envs(env)
                .kill_on_drop(true);
            if let Some(cwd) = cwd {
                command.current_dir(cwd);
            }
            let (transport, stderr) = TokioChildProcess::builder(command)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start {program}: {e}"))?;
            if let Some(stderr) = stderr {
                let name = upstream.name.clone();
                tokio::spawn(async move {
                    let mut lines = BufReader::new(stderr);
                    let mut line = Vec::new();
                    loop {
                        line.clear();
                        match (&mut lines)
                            .take(MAX_STDERR_LINE as u64)
                            .read_until(b'\n', &mut line)
                            .await
                        {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {
                                let text = String::from_utf8_lossy(&line);
                                tracing::trace!(
                                    target: CHILD_STDERR_TARGET,
                                    upstream = %name,
                                    "stderr: {}",
                                    foreign_line(text.trim_end())
                                );
                            }
                        }
                    }
                });
            }
            listener
                .serve(transport)
                .await
                .map_err(|e| format!("initialize failed: {e}"))
        }
        Transport::Http { url, headers } => {
            let mut custom = HashMap::new();
            for (key, value) in headers {
                let (Ok(key), Ok(value)) = (
                    axum::http::HeaderName::from_bytes(key.as_bytes()),
                    axum::http::HeaderValue::from_str(value),
                ) else {
                    return Err(format!("header {key:?} is not a valid HTTP header"));
                };
                custom.insert(key, value);
            }
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            let transport = StreamableHttpClientTransport::from_config(config);
            listener
                .serve(transport)
                .await
                .map_err(|e| redact_urls(&format!("initialize failed: {e}")))
        }
    }
}

/// A line of a child's stderr, its control characters escaped.
fn foreign_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Every tool of the server, following pagination within the bounds. The
/// second value tells whether tools were dropped.
pub async fn list_tools(peer: &Peer<RoleClient>) -> Result<(Vec<Tool>, bool), String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor
            .take()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = peer
            .list_tools(params)
            .await
            .map_err(|e| redact_urls(&format!("tools/list failed: {e}")))?;
        tools.extend(page.tools);
        if tools.len() > MAX_TOOLS {
            tools.truncate(MAX_TOOLS);
            return Ok((tools, true));
        }
        match page.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok((tools, false)),
        }
    }
    Ok((tools, true))
}

/// The current connection of one upstream, shared by its capabilities.
pub struct Link {
    name: String,
    peer: RwLock<Option<Peer<RoleClient>>>,
}

impl Link {
    /// A link with no connection yet.
    pub fn new(name: &str) -> Arc<Link> {
        Arc::new(Link {
            name: name.to_string(),
            peer: RwLock::new(None),
        })
    }

    /// Sets (or, with `None`, clears) the connection.
    pub fn set(&self, peer: Option<Peer<RoleClient>>) {
        match self.peer.write() {
            Ok(mut current) => *current = peer,
            Err(poisoned) => *poisoned.into_inner() = peer,
        }
    }

    fn peer(&self) -> Option<Peer<RoleClient>> {
        match self.peer.read() {
            Ok(current) => current.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Calls `tool` with the canonical arguments. Transport failures are
    /// internal (`capability failed` without detail).
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Value,
    ) -> Result<CallToolResult, HandlerError> {
        let peer = self
            .peer()
            .ok_or_else(|| HandlerError::internal(format!("upstream {} is down", self.name)))?;
        let arguments: JsonObject = match arguments {
            serde_json::Value::Object(map) => map,
            serde_json::Value::Null => JsonObject::new(),
            _ => return Err(HandlerError::internal("arguments are not an object")),
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        peer.call_tool(params).await.map_err(|e| {
            let text = format!("upstream {} call {} failed: {e}", self.name, foreign(tool));
            HandlerError::internal(redact_urls(&text))
        })
    }
}
