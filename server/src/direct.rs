//! Direct answers to plain stateless `tools/call` POSTs.
//!
//! rmcp's Streamable HTTP service gives every stateless request its own
//! MCP service: it decodes the body through its generic message types, looks
//! the tool up, builds a peer and a one-shot transport and spawns two tasks
//! before our handler runs. [`Direct`] sits in front of it at `/mcp` and
//! answers the common case itself — a POST that passes the same `Host`
//! check, accepts JSON and SSE without parameters, sends JSON, carries no
//! `Origin`, session or `Mcp-*` header beyond a known protocol version
//! older than the one that requires per-request metadata, and whose body
//! is exactly `{"jsonrpc": "2.0", "id", "method": "tools/call", "params":
//! {"name", "arguments"}}` with a known tool and well-formed arguments. It
//! runs the call through the same [`CodeModeServer::call`] (span, metrics,
//! subject, result) and writes the response rmcp would: status 200,
//! `application/json`, the serialized JSON-RPC response. Everything else
//! (other methods, errors, `_meta`, any unusual header) goes to rmcp
//! unchanged, with the body already read handed over as it came. An
//! execution runs on its own task so that a client disconnect drops the
//! waiting request and cancels the program, as rmcp does.

use crate::http::connection::{collect, plain};
use crate::http::Hosts;
use crate::mcp::{well_formed, CodeModeServer};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use codemode_catalog::{CancellationToken, Subject, Unauthenticated};
use rmcp::model::{
    JsonObject, NumberOrString, ProtocolVersion, ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use serde::Deserialize;
use std::sync::Arc;

/// rmcp's service at `/mcp`.
pub type Fallback = StreamableHttpService<CodeModeServer, NeverSessionManager>;

/// The direct path and the rmcp service it falls back to.
pub struct Direct {
    pub(crate) server: CodeModeServer,
    pub(crate) fallback: Fallback,
    /// The effective `Host` allow-list (rmcp's, as configured).
    pub(crate) hosts: Arc<Hosts>,
    /// The largest request body.
    pub(crate) max_body_bytes: usize,
}

/// A `tools/call` request, exactly; anything more falls back.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallRequest {
    jsonrpc: String,
    id: serde_json::Value,
    method: String,
    params: CallParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
}

/// A JSON-RPC request ID as rmcp reads it, for the forms taken directly.
fn request_id(id: &serde_json::Value) -> Option<NumberOrString> {
    match id {
        serde_json::Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        serde_json::Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        _ => None,
    }
}

/// Whether the headers are ones rmcp passes without a second look.
fn plain_headers(headers: &HeaderMap, hosts: &Hosts) -> bool {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    if host.is_none() || !hosts.allows(host) || headers.contains_key(header::ORIGIN) {
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

/// The `/mcp` endpoint: the direct path where it applies, rmcp otherwise.
pub async fn serve(State(direct): State<Arc<Direct>>, request: Request) -> Response {
    if request.method() != Method::POST
        || request.uri().authority().is_some()
        || !plain_headers(request.headers(), &direct.hosts)
    {
        return direct.fallback.handle(request).await.into_response();
    }
    let (parts, body) = request.into_parts();
    // Already read in whole by the body deadline's layer: no waiting here.
    let bytes = match collect(body, direct.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    let call = serde_json::from_slice::<CallRequest>(&bytes)
        .ok()
        .filter(|c| c.jsonrpc == "2.0" && c.method == "tools/call")
        .filter(|c| well_formed(&c.params.name, c.params.arguments.as_ref()))
        .and_then(|c| Some((request_id(&c.id)?, c.params)));
    let Some((id, params)) = call else {
        let request = Request::from_parts(parts, Body::from(bytes));
        return direct.fallback.handle(request).await.into_response();
    };
    // The call owns what it needs: the body is not held while it waits
    // for a slot or runs.
    drop(bytes);
    let subject = parts
        .extensions
        .get::<Subject>()
        .filter(|s| s.is_authenticated())
        .cloned();
    let resolve = move || subject.ok_or(Unauthenticated);
    let server = direct.server.clone();
    let outcome = if params.name == "execute" {
        // The program runs on its own task; if the client goes away, hyper
        // drops this future and the guard cancels the program.
        let cancel = CancellationToken::new();
        let guard = cancel.clone().drop_guard();
        let task = tokio::spawn(async move {
            server
                .call(&params.name, params.arguments.as_ref(), resolve, &cancel)
                .await
        });
        let joined = task.await;
        guard.disarm();
        match joined {
            Ok(outcome) => outcome,
            Err(_) => return empty_response(),
        }
    } else {
        let cancel = CancellationToken::new();
        server
            .call(&params.name, params.arguments.as_ref(), resolve, &cancel)
            .await
    };
    let Ok(result) = outcome else {
        // Well-formed calls have tool results; this cannot happen.
        return empty_response();
    };
    // Every protocol version taken here predates 2026-07-28: the result gets
    // the legacy shape, as rmcp's handler gives it.
    let mut result = ServerResult::CallToolResult(result);
    result.strip_result_type_for_legacy_peer();
    result.strip_non_object_output_for_legacy_peer();
    let message = ServerJsonRpcMessage::response(result, id);
    match serde_json::to_vec(&message) {
        Ok(body) => {
            let mut response = plain(StatusCode::OK, body);
            let json = header::HeaderValue::from_static("application/json");
            response.headers_mut().insert(header::CONTENT_TYPE, json);
            response
        }
        Err(e) => plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("Encounter an error when serialize json response: {e}"),
        ),
    }
}

/// rmcp's answer when the handler produced no response.
fn empty_response() -> Response {
    plain(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Encounter an error when empty response: no response message received from handler",
    )
}
