//! The `/mcp` endpoint: plain stateless `tools/call` POSTs answered here,
//! everything else by rmcp.
//!
//! rmcp's Streamable HTTP service gives every stateless request its own
//! MCP service: it decodes the body through its generic message types, looks
//! the tool up, builds a peer and a one-shot transport and spawns two tasks
//! before our handler runs. [`PlainCalls`] sits in front of it at `/mcp`.
//! A POST whose `Host` is allowed ([`Hosts`], rmcp's check) has its body —
//! already read once, within the body limits, by
//! [`connection::bounded_body`](super::connection) — read strictly once
//! into an [`McpRequest`]. A `tools/call` with a duplicate member is
//! refused with the invalid-params error (whatever its other headers).
//! A plain call is answered here when its headers are plain too: it
//! accepts JSON and SSE without parameters, sends JSON, carries no
//! `Origin`, session or `Mcp-*` header beyond a known protocol version
//! older than the one that requires per-request metadata. It runs, already
//! validated, through the same [`CodeModeServer::call`] (span, metrics,
//! subject, result) and gets the response rmcp would give: status 200,
//! `application/json`, the serialized JSON-RPC response or error.
//! Everything else (other methods, `_meta`, any unusual header) goes to
//! rmcp unchanged, with the body as it came. An execution runs on its own
//! task so that a client disconnect drops the waiting request and cancels
//! the program, as rmcp does.

use super::connection::{plain, ReadBody};
use super::hosts::Hosts;
use super::request::McpRequest;
use crate::mcp::CodeModeServer;
use crate::tool::{Tool, ToolCall};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use codemode_catalog::{CancellationToken, Subject, Unauthenticated};
use rmcp::model::{ProtocolVersion, ServerJsonRpcMessage, ServerResult};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use serde_json::json;
use std::sync::Arc;

/// rmcp's service at `/mcp`.
pub type Fallback = StreamableHttpService<CodeModeServer, NeverSessionManager>;

/// The plain-call path and the rmcp service it falls back to.
pub struct PlainCalls {
    pub(crate) server: CodeModeServer,
    pub(crate) fallback: Fallback,
    /// The effective `Host` allow-list (rmcp's, as configured).
    pub(crate) hosts: Arc<Hosts>,
}

/// Whether the headers are ones rmcp passes without a second look.
/// (The `Host` is checked before.)
fn plain_headers(headers: &HeaderMap) -> bool {
    if headers.contains_key(header::ORIGIN) {
        return false;
    }
    if headers.keys().any(|k| {
        let k = k.as_str();
        k == "last-event-id" || (k.starts_with("mcp-") && k != "mcp-protocol-version")
    }) {
        return false;
    }
    let mut versions = headers.get_all("mcp-protocol-version").iter();
    match (versions.next(), versions.next()) {
        (None, _) => {}
        (Some(v), None) => {
            let Ok(v) = v.to_str() else { return false };
            let known = ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|k| k.as_str() == v);
            if !known || v >= ProtocolVersion::STANDARD_HEADERS.as_str() {
                return false;
            }
        }
        _ => return false,
    }
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        });
    if !json_body {
        return false;
    }
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for item in value.split(',') {
            let item = item.trim();
            if item.contains([';', '"']) {
                return false;
            }
            json |= item.eq_ignore_ascii_case("application/json");
            sse |= item.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// rmcp's answer to `request`. Its future (several KiB) is boxed, so that
/// the endpoint's own future, which a plain call holds while its program
/// runs and waits, is not as large as rmcp's.
async fn to_rmcp(endpoint: &PlainCalls, request: Request) -> Response {
    Box::pin(endpoint.fallback.handle(request))
        .await
        .into_response()
}

/// The `/mcp` endpoint: a refusal or the plain-call path where they
/// apply, rmcp otherwise.
pub async fn serve(State(endpoint): State<Arc<PlainCalls>>, request: Request) -> Response {
    if request.method() != Method::POST || !endpoint.hosts.allow(request.headers()) {
        return to_rmcp(&endpoint, request).await;
    }
    let (mut parts, body) = request.into_parts();
    let Some(ReadBody(bytes)) = parts.extensions.remove::<ReadBody>() else {
        // Not behind the body layer: rmcp reads it.
        let request = Request::from_parts(parts, body);
        return to_rmcp(&endpoint, request).await;
    };
    let (id, call) = match McpRequest::read(&bytes) {
        McpRequest::Refused { id, message } => return refusal(id, message),
        McpRequest::Call { id, call }
            if parts.uri.authority().is_none() && plain_headers(&parts.headers) =>
        {
            (id, call)
        }
        _ => {
            let request = Request::from_parts(parts, body);
            return to_rmcp(&endpoint, request).await;
        }
    };
    // The call owns what it needs: the body is not held while it waits
    // for a slot or runs.
    drop((bytes, body));
    let subject = parts
        .extensions
        .get::<Subject>()
        .filter(|s| s.is_authenticated())
        .cloned();
    // Nor the request's head: its header values are slices of the
    // connection's read buffer, which would stay allocated while the
    // program waits.
    drop(parts);
    let resolve = move || subject.ok_or(Unauthenticated);
    let server = endpoint.server.clone();
    let cancel = CancellationToken::new();
    let outcome = if matches!(
        call,
        Ok(ToolCall {
            tool: Tool::Execute,
            ..
        })
    ) {
        // The program runs on its own task; if the client goes away, hyper
        // drops this future and the guard cancels the program.
        let guard = cancel.clone().drop_guard();
        let task = tokio::spawn(async move { server.call(call, resolve, &cancel).await });
        let joined = task.await;
        guard.disarm();
        match joined {
            Ok(outcome) => outcome,
            Err(_) => return empty_response(),
        }
    } else {
        // Boxed for the same reason as rmcp's answer (`to_rmcp`).
        Box::pin(server.call(call, resolve, &cancel)).await
    };
    let message = match outcome {
        Ok(result) => {
            // Every protocol version taken here predates 2026-07-28: the
            // result gets the legacy shape, as rmcp's handler gives it.
            let mut result = ServerResult::CallToolResult(result);
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
            ServerJsonRpcMessage::response(result, id)
        }
        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
    };
    match serde_json::to_vec(&message) {
        Ok(body) => json_response(body),
        Err(e) => plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("Encounter an error when serialize json response: {e}"),
        ),
    }
}

/// The answer to a `tools/call` with a duplicate member.
fn refusal(id: serde_json::Value, message: String) -> Response {
    let error = json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": -32602, "message": message}});
    json_response(error.to_string())
}

/// A 200 response with a JSON body.
fn json_response(body: impl Into<Body>) -> Response {
    let mut response = plain(StatusCode::OK, body);
    let json = header::HeaderValue::from_static("application/json");
    response.headers_mut().insert(header::CONTENT_TYPE, json);
    response
}

/// rmcp's answer when the handler produced no response.
fn empty_response() -> Response {
    plain(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Encounter an error when empty response: no response message received from handler",
    )
}
