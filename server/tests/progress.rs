//! Progress of `execute`: with `_meta.progressToken`, one
//! `notifications/progress` after each capability call that returned its
//! result (`progress` = calls completed, `message` = the capability's name),
//! before the response; without a token, none. Over stdio and over
//! Streamable HTTP with rmcp's client, over raw HTTP (an event stream with a
//! token, the plain JSON response without), and with the Python `mcp`
//! client's progress callback when its virtualenv exists.

mod common;
use common::http_server;

use axum::body::Body;
use axum::http::Request;
use codemode_server::load_catalogs;
use codemode_server::{router, HttpOptions};
use http_body_util::BodyExt;
use rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tower::ServiceExt as _;

/// Three capability calls of the demo catalog.
const PROGRAM: &str = "def main():
    found = records.lookup(key=\"al\", limit=2)
    quote = shipping.quote(weight_grams=1200)
    status = records.status()
    return {\"found\": len(found[\"records\"]), \"price\": quote[\"price_cents\"], \"count\": status[\"count\"]}
";

/// The structured content of the program's result.
fn result() -> Value {
    json!({"result": {"found": 2, "price": 900, "count": 8}})
}

/// What a client hears for [`PROGRAM`]: (progress, total, message).
fn expected_progress() -> Vec<(f64, Option<f64>, Option<String>)> {
    ["records.lookup", "shipping.quote", "records.status"]
        .iter()
        .enumerate()
        .map(|(i, name)| ((i + 1) as f64, None, Some(name.to_string())))
        .collect()
}

/// A client that records the progress notifications it hears.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl Heard {
    /// The notifications heard since the last call, waiting up to a second
    /// for `n` of them; all carry one token. rmcp's client handles each
    /// notification on a task of its own, so its handler may hear them in
    /// another order than they were sent (seen once in CI: 1, 3, 2): they
    /// are put back in the order of their `progress`. The order on the
    /// wire is pinned by `http_streams_progress_only_when_asked`.
    async fn take(&self, n: usize) -> Vec<(f64, Option<f64>, Option<String>)> {
        for _ in 0..100 {
            if self.0.lock().expect("lock").len() >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let heard = std::mem::take(&mut *self.0.lock().expect("lock"));
        assert!(heard
            .windows(2)
            .all(|w| w[0].progress_token == w[1].progress_token));
        let mut heard: Vec<_> = heard
            .iter()
            .map(|p| (p.progress, p.total, p.message.clone()))
            .collect();
        heard.sort_by(|a, b| a.0.total_cmp(&b.0));
        heard
    }
}

impl ClientHandler for Heard {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().expect("lock").push(params);
    }
}

fn execute(source: &str) -> CallToolRequestParams {
    let mut arguments = serde_json::Map::new();
    arguments.insert("source".into(), json!(source));
    CallToolRequestParams::new("execute").with_arguments(arguments)
}

/// Runs [`PROGRAM`] and checks the result and what was heard (rmcp's
/// client gives every request a progress token of its own), then a program
/// whose second call fails binding: one notification, then the error.
async fn check_progress(client: &RunningService<RoleClient, Heard>, heard: &Heard) {
    let outcome = client
        .call_tool(execute(PROGRAM))
        .await
        .expect("tools/call");
    assert_eq!(outcome.structured_content, Some(result()));
    assert_eq!(heard.take(3).await, expected_progress());

    let failing = "def main():\n    records.status()\n    return shipping.quote(weight_grams=0)\n";
    let outcome = client
        .call_tool(execute(failing))
        .await
        .expect("tools/call");
    assert_eq!(outcome.is_error, Some(true));
    assert_eq!(
        heard.take(1).await,
        vec![(1.0, None, Some("records.status".to_string()))]
    );
}

#[tokio::test]
async fn progress_over_stdio_with_rmcp() {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"));
    command.arg("serve").env_remove("RUST_LOG");
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn codemode serve");
    let heard = Heard::default();
    let client = heard.clone().serve(transport).await.expect("initialize");
    check_progress(&client, &heard).await;
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_over_http_with_rmcp() {
    let addr = http_server(&["demo"], Default::default()).await;
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let heard = Heard::default();
    let client = heard.clone().serve(transport).await.expect("initialize");
    check_progress(&client, &heard).await;
}

/// One raw `tools/call` of [`PROGRAM`] over the router: the content type
/// and the body.
async fn raw_call(meta: Option<Value>) -> (String, String) {
    let service =
        load_catalogs(&["demo".to_string()], &[], Default::default()).expect("demo loads");
    let app = router(service, &HttpOptions::default());
    let mut params = json!({"name": "execute", "arguments": {"source": PROGRAM}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params});
    let request = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(Body::from(body.to_string()))
        .expect("request");
    let response = app.oneshot(request).await.expect("infallible");
    assert_eq!(response.status(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (content_type, String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_streams_progress_only_when_asked() {
    let (content_type, body) = raw_call(Some(json!({"progressToken": 42}))).await;
    assert_eq!(content_type, "text/event-stream");
    let messages: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_json::from_str(d.trim()).expect("JSON event"))
        .collect();
    let expected: Vec<Value> = expected_progress()
        .into_iter()
        .map(|(progress, _, message)| {
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": 42, "progress": progress, "message": message}})
        })
        .collect();
    assert_eq!(messages.len(), 4, "{body}");
    assert_eq!(messages[..3], expected[..], "{body}");
    assert_eq!(messages[3]["id"], 5);
    assert_eq!(messages[3]["result"]["structuredContent"], result());

    // Without a token (with other metadata, or none), one JSON response.
    for meta in [Some(json!({"note": "x"})), None] {
        let (content_type, body) = raw_call(meta).await;
        assert_eq!(content_type, "application/json");
        let response: Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(response["result"]["structuredContent"], result());
    }
}

/// The Python interpreter of the virtualenv with the `mcp` client:
/// `$CODEMODE_MCP_PYTHON`, or `~/.cache/codemode-mcp-client/bin/python`.
fn python_with_mcp() -> Option<PathBuf> {
    let python = match std::env::var_os("CODEMODE_MCP_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => {
            PathBuf::from(std::env::var_os("HOME")?).join(".cache/codemode-mcp-client/bin/python")
        }
    };
    let has_mcp = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    has_mcp.then_some(python)
}

/// Runs the Python client script with `args` and returns its JSON line.
async fn python_client(python: &PathBuf, args: &[&str]) -> Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/progress_client.py"
    );
    let output = tokio::process::Command::new(python)
        .arg(script)
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .await
        .expect("run the Python client");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON line")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_hears_progress_over_stdio_and_http() {
    let Some(python) = python_with_mcp() else {
        println!(
            "skipped: no Python with the mcp client (create ~/.cache/codemode-mcp-client with \
             `python3 -m venv` and `pip install mcp==2.3.0`, or set CODEMODE_MCP_PYTHON)"
        );
        return;
    };
    let expected = json!({
        "progress": [
            [1.0, null, "records.lookup"],
            [2.0, null, "shipping.quote"],
            [3.0, null, "records.status"]
        ],
        "result": result()
    });
    let binary = env!("CARGO_BIN_EXE_codemode");
    let stdio = python_client(&python, &["stdio", binary, "serve"]).await;
    assert_eq!(stdio, expected);
    let addr = http_server(&["demo"], Default::default()).await;
    let http = python_client(&python, &["http", &format!("http://{addr}/mcp")]).await;
    assert_eq!(http, expected);
}
