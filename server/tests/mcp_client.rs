//! End to end with rmcp's own client: over stdio (the built binary, `codemode
//! serve`) and over Streamable HTTP (the router on an ephemeral loopback
//! port), and in-process for what only a host can arrange (a resolver that
//! counts or fails). Tool listing with the exact schemas, every error text a
//! client can provoke, invalid params before resolution, 100 concurrent
//! executes, a panicking handler, and cancellation stopping a running
//! program (`notifications/cancelled` on stdio, a dropped request on HTTP);
//! the `instructions` of `initialize`; a hinted program error.

mod common;
use common::http_server;

use codemode_catalog::{Subject, SubjectResolver, Unauthenticated};
use codemode_server::load_catalogs;
use codemode_server::{CodeModeServer, INSTRUCTIONS};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject,
};
use rmcp::service::{PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, RoleServer, ServiceExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

type Client = RunningService<RoleClient, ()>;

/// A program that loops for tens of seconds unless stopped.
const LONG_LOOP: &str =
    "def main():\n    t = 0\n    for i in range(2000000000):\n        t += i\n    return t\n";

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

fn params(tool: &'static str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool).with_arguments(object(arguments))
}

fn execute(source: &str) -> CallToolRequestParams {
    params("execute", json!({ "source": source }))
}

/// A result as it went over the wire.
fn wire(result: &CallToolResult) -> Value {
    serde_json::to_value(result).expect("serializable")
}

fn success(value: Value) -> Value {
    json!({"content": [{"type": "text", "text": value.to_string()}], "structuredContent": value, "isError": false})
}

fn failure(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// `codemode serve ARGS` over stdio.
async fn stdio_client(args: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"));
    command.arg("serve").args(args).env_remove("RUST_LOG");
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn codemode serve");
    ().serve(transport).await.expect("initialize over stdio")
}

async fn http_client(addr: SocketAddr) -> Client {
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    ().serve(transport).await.expect("initialize over HTTP")
}

async fn listed_tools(client: &Client) -> Value {
    let tools = client.list_all_tools().await.expect("tools/list");
    serde_json::to_value(tools).expect("serializable")
}

#[tokio::test]
async fn tools_are_listed_exactly_over_stdio_and_http() {
    let stdio = stdio_client(&[]).await;
    assert_eq!(listed_tools(&stdio).await, common::expected_tools());
    let info = stdio.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("codemode")
    );
    stdio.cancel().await.expect("close");

    let addr = http_server(&["demo"], Default::default()).await;
    let http = http_client(addr).await;
    assert_eq!(listed_tools(&http).await, common::expected_tools());
    let quote = http
        .call_tool(execute(
            "def main():\n    return shipping.quote(weight_grams=1200)\n",
        ))
        .await
        .expect("tools/call");
    assert_eq!(
        wire(&quote),
        success(json!({"result": {"price_cents": 900}}))
    );
}

#[tokio::test]
async fn initialize_carries_the_workflow_instructions() {
    let stdio = stdio_client(&[]).await;
    let addr = http_server(&["demo"], Default::default()).await;
    let http = http_client(addr).await;
    for client in [&stdio, &http] {
        let info = client.peer_info().expect("server info");
        let instructions = info.instructions.as_deref().expect("instructions");
        assert_eq!(instructions, INSTRUCTIONS);
    }
    assert!(INSTRUCTIONS.len() <= 1000, "{} bytes", INSTRUCTIONS.len());
    // The workflow in order, the program's shape, and the Python constructs
    // that do not exist.
    let steps = ["1. search_api", "2. describe_api", "3. execute"];
    let at: Vec<usize> = steps
        .iter()
        .map(|s| INSTRUCTIONS.find(s).unwrap_or_else(|| panic!("{s}")))
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
    for phrase in [
        "one Starlark program that defines def main(): with no parameters",
        "keyword arguments only, e.g. records.lookup(key=\"a\", limit=2)",
        "Only main's return value comes back",
        "no import (json and math are predeclared)",
        "no try/except/raise",
        "no f-strings",
        "no while",
        "no class, with, yield, is, ** or sets",
        "d.get(\"k\")",
    ] {
        assert!(INSTRUCTIONS.contains(phrase), "{phrase}");
    }
    stdio.cancel().await.expect("close");
}

/// Every error text a client can provoke, with the call that provokes it.
fn error_cases() -> Vec<(CallToolRequestParams, &'static str)> {
    vec![
        (
            params("describe_api", json!({"name": "conformance.hidden"})),
            "capability not found",
        ),
        (
            params("describe_api", json!({"name": " conformance.echo"})),
            "capability not found",
        ),
        (
            execute("def main(:\n"),
            "invalid program: <codemode>:1:11: got ':', want ')'",
        ),
        (
            execute("def main():\n    try:\n        pass\n"),
            "invalid program: <codemode>:2:8: got illegal token, want primary expression \
             (hint: there are no exceptions; check conditions first (k in d, d.get(k), len(x)) \
             and call fail(msg) to stop)",
        ),
        (
            execute("def main():\n    return conformance.hidden()\n"),
            "invalid program: <codemode>:2:23: namespace conformance has no .hidden field or method",
        ),
        (
            execute("def main():\n    return conformance.echo(value=1)\n"),
            "invalid capability arguments: value: want str, got int",
        ),
        (
            execute("def main():\n    return conformance.denied()\n"),
            "permission denied",
        ),
        (
            execute("def main():\n    return conformance.policy_error()\n"),
            "authorization policy failure",
        ),
        (
            params("search_api", json!({"query": "q".repeat(257)})),
            "resource limit exceeded",
        ),
        (
            // About 1.5 MB of result, over the 1 MiB value limit.
            execute("def main():\n    return conformance.items(n=50000)\n"),
            "resource limit exceeded",
        ),
        (
            execute("def main():\n    return conformance.fail(public=False)\n"),
            "capability failed",
        ),
        (
            execute("def main():\n    return conformance.fail(public=True)\n"),
            "capability failed: conformance failure",
        ),
        (
            execute("def main():\n    return conformance.nan()\n"),
            "capability failed",
        ),
        (
            execute("def main():\n    return conformance.panic()\n"),
            "capability failed",
        ),
    ]
}

#[tokio::test]
async fn every_error_text_goes_over_the_wire() {
    let addr = http_server(&["demo", "conformance"], Default::default()).await;
    let http = http_client(addr).await;
    let stdio = stdio_client(&["--catalog", "demo", "--catalog", "conformance"]).await;
    for client in [&http, &stdio] {
        for (call, text) in error_cases() {
            let name = call.name.clone();
            let result = client.call_tool(call).await.expect("tools/call");
            assert_eq!(wire(&result), failure(text), "{name}: {text}");
        }
    }
    // A program over its time limit is a resource limit, over the wire too.
    let slow = stdio_client(&["--catalog", "conformance", "--max-time-ms", "50"]).await;
    let result = slow
        .call_tool(execute(
            "def main():\n    return conformance.sleep(ms=5000)\n",
        ))
        .await
        .expect("tools/call");
    assert_eq!(wire(&result), failure("resource limit exceeded"));
    stdio.cancel().await.expect("close");
    slow.cancel().await.expect("close");
}

/// Counts resolutions; resolves to `local` unless told to fail.
struct Counting(Arc<AtomicUsize>, bool);

impl SubjectResolver<RequestContext<RoleServer>> for Counting {
    fn resolve(&self, _: &RequestContext<RoleServer>) -> Result<Subject, Unauthenticated> {
        self.0.fetch_add(1, Ordering::SeqCst);
        if self.1 {
            Ok(Subject::new("local"))
        } else {
            Err(Unauthenticated)
        }
    }
}

/// An in-process server with a counting resolver, and a client on it.
async fn in_process(resolves: bool) -> (Client, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let service = load_catalogs(&["demo".into()], &[], Default::default()).expect("demo");
    let server = CodeModeServer::new(service, Arc::new(Counting(count.clone(), resolves)));
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_end).await.expect("initialize");
    (client, count)
}

#[tokio::test]
async fn arguments_are_validated_before_resolution() {
    let (client, resolutions) = in_process(true).await;
    let cases = [
        (
            params("execute", json!({"source": 1})),
            "property \"source\" must be a string",
        ),
        (
            params("execute", json!({"source": "x", "extra": 1})),
            "unexpected additional property \"extra\"",
        ),
        (
            params("search_api", json!({})),
            "missing required property \"query\"",
        ),
        (
            CallToolRequestParams::new("describe_api"),
            "missing required property \"name\"",
        ),
        (params("no_such_tool", json!({})), "unknown tool"),
    ];
    for (call, message) in cases {
        match client.call_tool(call).await {
            Err(rmcp::ServiceError::McpError(e)) => {
                assert_eq!(e.code.0, -32602);
                assert_eq!(e.message, message);
            }
            other => panic!("{message}: want invalid params, got {other:?}"),
        }
    }
    assert_eq!(resolutions.load(Ordering::SeqCst), 0);
    let found = client
        .call_tool(params("search_api", json!({"query": "quote"})))
        .await
        .expect("tools/call");
    assert_eq!(found.is_error, Some(false));
    assert_eq!(resolutions.load(Ordering::SeqCst), 1);

    // A resolver that yields no subject: `unauthenticated` for every tool.
    let (client, resolutions) = in_process(false).await;
    for call in [
        params("search_api", json!({"query": "quote"})),
        params("describe_api", json!({"name": "shipping.quote"})),
        execute("def main():\n    return 1\n"),
    ] {
        let result = client.call_tool(call).await.expect("tools/call");
        assert_eq!(wire(&result), failure("unauthenticated"));
    }
    assert_eq!(resolutions.load(Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_executes_over_http() {
    let addr = http_server(&["demo", "conformance"], Default::default()).await;
    let client = Arc::new(http_client(addr).await);
    let calls: Vec<_> = (0..100i64).map(|i| {
        let client = client.clone();
        tokio::spawn(async move {
            // Every tenth program makes its capability's handler panic.
            let (source, want) = if i % 10 == 7 {
                (
                    "def main():\n    return conformance.panic()\n".to_string(),
                    failure("capability failed"),
                )
            } else {
                (
                    format!(
                        "def main():\n    s = conformance.add(a={i}, b=1000)\n    e = conformance.echo(value=str({i}))\n    return [s[\"sum\"], e[\"value\"]]\n"
                    ),
                    success(json!({"result": [i + 1000, i.to_string()]})),
                )
            };
            let result = client.call_tool(execute(&source)).await.expect("tools/call");
            (wire(&result), want)
        })
    }).collect();
    for call in calls {
        let (got, want) = call.await.expect("the call's task");
        assert_eq!(got, want);
    }
    // The panics took nothing down: the server still answers.
    let after = client
        .call_tool(execute(
            "def main():\n    return conformance.echo(value=\"still here\")\n",
        ))
        .await
        .expect("tools/call");
    assert_eq!(
        wire(&after),
        success(json!({"result": {"value": "still here"}}))
    );
}

/// Starts the long loop as a cancellable request, cancels it, and checks
/// that a second program — which can only start once the first has
/// stopped, with one execution slot — finishes long before the loop could.
async fn cancel_and_check_it_stopped(client: &Client) {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(execute(LONG_LOOP)));
    let handle = client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .expect("send");
    tokio::time::sleep(Duration::from_millis(300)).await;
    handle
        .cancel(Some("test".to_string()))
        .await
        .expect("cancel");
    let started = Instant::now();
    let next = tokio::time::timeout(
        Duration::from_secs(10),
        client.call_tool(execute("def main():\n    return 7\n")),
    )
    .await
    .expect("the cancelled loop released its slot")
    .expect("tools/call");
    assert_eq!(wire(&next), success(json!({"result": 7})));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn cancellation_stops_a_running_program() {
    let limits = [
        "--max-steps",
        "100000000000",
        "--max-time-ms",
        "60000",
        "--max-concurrent-executions",
        "1",
    ];
    let stdio = stdio_client(&limits).await;
    cancel_and_check_it_stopped(&stdio).await;
    stdio.cancel().await.expect("close");

    let mut config = codemode_catalog::Config::default();
    config.limits.max_steps = 100_000_000_000;
    config.limits.max_time = Duration::from_secs(60);
    config.max_concurrent_executions = 1;
    let addr = http_server(&["demo"], config).await;
    let http = http_client(addr).await;
    cancel_and_check_it_stopped(&http).await;
}

/// A `tools/call` whose arguments repeat a member.
const DUPLICATE_CALL: &str = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"execute","arguments":{"source":"def main():\n    return 1\n","source":"def main():\n    return 2\n"}}}"#;

#[tokio::test]
async fn duplicate_members_in_tool_call_arguments_are_invalid_params() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    // stdio, through the binary.
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
        .arg("serve")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let text = format!("{init}\n{initialized}\n{DUPLICATE_CALL}\n");
    stdin.write_all(text.as_bytes()).await.expect("write");
    lines
        .next_line()
        .await
        .expect("read")
        .expect("initialize result");
    let response: Value =
        serde_json::from_str(&lines.next_line().await.expect("read").expect("a line"))
            .expect("json");
    assert_eq!(response["id"], 5);
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let message = response["error"]["message"].as_str().expect("message");
    assert!(
        message.starts_with("duplicate member \"source\""),
        "{message}"
    );

    // HTTP: a plain POST and one rmcp answers (with an Origin header).
    let addr = http_server(&["demo"], Default::default()).await;
    for origin in ["", "Origin: http://localhost\r\n"] {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{origin}Content-Length: {}\r\n\
             Connection: close\r\n\r\n{DUPLICATE_CALL}",
            DUPLICATE_CALL.len()
        );
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut response = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stream, &mut response)
            .await
            .expect("read");
        let body: Value =
            serde_json::from_str(response.split("\r\n\r\n").nth(1).expect("body")).expect("json");
        assert_eq!(body["error"]["code"], -32602, "{response}");
        assert_eq!(body["id"], 5);
    }
}
