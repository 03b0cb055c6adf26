//! The stateless Streamable HTTP transport through its axum router: JSON
//! responses without a session ID, the tools over HTTP, 405 for GET and
//! DELETE, 413 beyond the body limit (from `max_source_bytes`), Host and Origin checks, bearer
//! authentication (401 with `WWW-Authenticate: Bearer`), a client
//! disconnect stopping its program, and the binary's refusal of a
//! non-loopback address without authentication.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use codemode_catalog::Config;
use codemode_server::load_catalogs;
use codemode_server::{router, token_digest_hex, HttpOptions, Token};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

fn app(options: HttpOptions) -> Router {
    let service = load_catalogs(
        &["demo".to_string(), "conformance".to_string()],
        &[],
        Config::default(),
    )
    .expect("catalogs");
    router(service, &options)
}

fn post() -> axum::http::request::Builder {
    Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
}

async fn send(
    app: &Router,
    request: Request<Body>,
) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    (status, headers, body)
}

async fn rpc(app: &Router, message: Value) -> (StatusCode, Value) {
    let body = message.to_string();
    let request = post().body(Body::from(body)).expect("request");
    let (status, headers, bytes) = send(app, request).await;
    if status == StatusCode::OK {
        assert_eq!(
            headers.get("content-type").and_then(|v| v.to_str().ok()),
            Some("application/json")
        );
        assert!(headers.get("mcp-session-id").is_none());
    }
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, value)
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

#[tokio::test]
async fn initialize_list_and_call() {
    let app = app(HttpOptions::default());
    let (status, init) = rpc(
        &app,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    let (_, listed) = rpc(
        &app,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["search_api", "describe_api", "execute"]);
    let (_, ok) = rpc(
        &app,
        call(
            3,
            "execute",
            json!({"source": "def main():\n    return shipping.quote(weight_grams=10)\n"}),
        ),
    )
    .await;
    assert_eq!(
        ok["result"],
        json!({"content": [{"type": "text", "text": "{\"result\":{\"price_cents\":500}}"}],
               "structuredContent": {"result": {"price_cents": 500}}, "isError": false})
    );
    let (_, failed) = rpc(
        &app,
        call(
            4,
            "execute",
            json!({"source": "def main():\n    return conformance.fail(public=True)\n"}),
        ),
    )
    .await;
    assert_eq!(
        failed["result"],
        json!({"content": [{"type": "text", "text": "capability failed: conformance failure"}], "isError": true})
    );
    let (_, invalid) = rpc(&app, call(5, "describe_api", json!({"name": 7}))).await;
    assert_eq!(invalid["error"]["code"], -32602);
}

/// Sends `message` as a plain POST (answered by the plain-call path) and again with a
/// header rmcp ignores below protocol 2026-07-28 but that sends the request
/// through rmcp; returns both responses.
async fn plain_call_and_rmcp(
    app: &Router,
    message: &Value,
) -> [(StatusCode, axum::http::HeaderMap, Vec<u8>); 2] {
    let body = message.to_string();
    let plain = post()
        .header("mcp-protocol-version", "2025-06-18")
        .body(Body::from(body.clone()))
        .expect("request");
    let routed = post()
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-name", "x")
        .body(Body::from(body))
        .expect("request");
    [send(app, plain).await, send(app, routed).await]
}

#[tokio::test]
async fn plain_call_answers_are_byte_identical_to_rmcp() {
    let app = app(HttpOptions::default());
    let source = "def main():\n    return {\"q\": shipping.quote(weight_grams=10), \"x\": 1.5}\n";
    let calls = [
        call(1, "execute", json!({"source": source})),
        call(
            2,
            "execute",
            json!({"source": "def main():\n    return 1 // 0\n"}),
        ),
        call(
            3,
            "execute",
            json!({"source": "def main():\n    return conformance.fail(public=True)\n"}),
        ),
        call(4, "search_api", json!({"query": "quote shipping"})),
        call(5, "describe_api", json!({"name": "shipping.quote"})),
        call(6, "describe_api", json!({"name": "nope"})),
        json!({"jsonrpc": "2.0", "id": "s-7", "method": "tools/call",
               "params": {"name": "execute", "arguments": {"source": "def main():\n    return None\n"}}}),
        // Invalid calls: the same invalid-params error whichever path.
        call(8, "describe_api", json!({"name": 7})),
        call(9, "nope", json!({})),
    ];
    for message in &calls {
        let [plain, routed] = plain_call_and_rmcp(&app, message).await;
        assert_eq!(plain.0, StatusCode::OK, "{message}");
        assert_eq!(plain.0, routed.0, "{message}");
        assert_eq!(
            plain.1.get("content-type"),
            routed.1.get("content-type"),
            "{message}"
        );
        assert!(plain.1.get("mcp-session-id").is_none());
        assert_eq!(
            String::from_utf8_lossy(&plain.2),
            String::from_utf8_lossy(&routed.2),
            "{message}"
        );
    }
}

/// The invalid-params errors of calls that are plain but invalid, answered
/// on the plain-call path (validated once there), are rmcp's to the byte.
#[tokio::test]
async fn invalid_calls_get_rmcps_error_text() {
    let app = app(HttpOptions::default());
    let envelope = |params: Value| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    for (message, text) in [
        (
            envelope(json!({"name": "execute"})),
            "missing required property \"source\"",
        ),
        (
            envelope(json!({"name": "execute", "arguments": null})),
            "missing required property \"source\"",
        ),
        (
            call(2, "search_api", json!({"query": "a", "more": 1})),
            "unexpected additional property \"more\"",
        ),
        (
            call(3, "describe_api", json!({})),
            "missing required property \"name\"",
        ),
        (
            call(4, "execute", json!({"source": ["x"]})),
            "property \"source\" must be a string",
        ),
        (call(5, "run", json!({"source": "x"})), "unknown tool"),
    ] {
        let [plain, routed] = plain_call_and_rmcp(&app, &message).await;
        assert_eq!(plain.0, StatusCode::OK, "{message}");
        assert_eq!(plain.2, routed.2, "{message}");
        let answer: Value = serde_json::from_slice(&plain.2).expect("json");
        assert_eq!(answer["id"], message["id"]);
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert_eq!(answer["error"]["message"], text, "{answer}");
    }
}

/// A `tools/call` with a duplicate member anywhere is refused once, before
/// any call (no tool call is counted), whichever path its headers would
/// take, with the strict parse's message and the request's ID.
#[tokio::test]
async fn a_duplicate_member_is_refused_before_any_call() {
    let metrics = codemode_server::Metrics::new();
    let app = app(HttpOptions {
        metrics: Some(metrics.clone()),
        ..HttpOptions::default()
    });
    for body in [
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"execute","arguments":{"source":"def main():\n    return 1\n","source":"def main():\n    return 2\n"}}}"#,
        r#"{"jsonrpc":"2.0","id":"a","id":"b","method":"tools/call","params":{"name":"search_api","arguments":{"query":"x"}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools\/call","params":{"name":"search_api","arguments":{"query":"x","query":"y"}}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"execute","arguments":{"source":"x"},"_meta":{"progressToken":1,"progressToken":2}}}"#,
    ] {
        let expected = codemode_catalog::parse_strict(body)
            .expect_err("duplicate")
            .to_string();
        let last_wins: Value = serde_json::from_str(body).expect("json");
        let answer = json!({"jsonrpc": "2.0", "id": last_wins["id"],
            "error": {"code": -32602, "message": expected}});
        for origin in [None, Some("http://localhost:1")] {
            let mut request = post();
            if let Some(origin) = origin {
                request = request.header("origin", origin);
            }
            let (status, headers, bytes) =
                send(&app, request.body(Body::from(body)).expect("request")).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(
                headers.get("content-type").and_then(|v| v.to_str().ok()),
                Some("application/json")
            );
            assert_eq!(
                String::from_utf8_lossy(&bytes),
                answer.to_string(),
                "{body}"
            );
        }
    }
    let text = metrics.encode();
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("codemode_tool_calls_total{")),
        "{text}"
    );
    // A disallowed host gets rmcp's 403 first.
    let mut request = post()
        .body(Body::from(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":1,"a":2}}"#,
        ))
        .expect("request");
    let host = axum::http::HeaderValue::from_static("evil.example");
    request.headers_mut().insert("host", host);
    assert_eq!(send(&app, request).await.0, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn methods_size_and_host_checks() {
    let app = app(HttpOptions::default());
    for method in ["GET", "DELETE"] {
        let request = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", "localhost")
            .body(Body::empty())
            .expect("request");
        let (status, _, _) = send(&app, request).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
    }
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"execute\",\"arguments\":{{\"source\":\"{}\"}}}}}}",
        "x".repeat(codemode_server::max_body_bytes(65_536))
    );
    let request = post().body(Body::from(huge)).expect("request");
    let (status, _, _) = send(&app, request).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let mut request = post().body(Body::from(body)).expect("request");
    request
        .headers_mut()
        .insert("host", "evil.example".parse().expect("header"));
    let (status, _, _) = send(&app, request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn origin_allow_list() {
    let app = app(HttpOptions {
        allowed_origins: vec!["http://localhost:3000".into()],
        ..HttpOptions::default()
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    for (origin, expected) in [
        ("http://localhost:3000", StatusCode::OK),
        ("http://evil.example", StatusCode::FORBIDDEN),
    ] {
        let request = post()
            .header("origin", origin)
            .body(Body::from(body.clone()))
            .expect("request");
        let (status, _, _) = send(&app, request).await;
        assert_eq!(status, expected, "{origin}");
    }
}

#[tokio::test]
async fn only_loopback_origins_by_default() {
    let app = app(HttpOptions::default());
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let execute = call(
        2,
        "execute",
        json!({"source": "def main():\n    return 1\n"}),
    )
    .to_string();
    for body in [&list, &execute] {
        for (origin, expected) in [
            ("http://evil.example", StatusCode::FORBIDDEN),
            ("https://localhost.evil.example", StatusCode::FORBIDDEN),
            ("null", StatusCode::FORBIDDEN),
            ("http://localhost:3000", StatusCode::OK),
            ("https://127.0.0.1", StatusCode::OK),
            ("http://[::1]:8080", StatusCode::OK),
        ] {
            let request = post()
                .header("origin", origin)
                .body(Body::from(body.clone()))
                .expect("request");
            let (status, _, _) = send(&app, request).await;
            assert_eq!(status, expected, "{origin}");
        }
    }
}

#[tokio::test]
async fn bearer_tokens() {
    let token = Token::from_hex_digest("alice", &token_digest_hex("s3cret")).expect("token");
    let app = app(HttpOptions {
        tokens: vec![token],
        ..HttpOptions::default()
    });
    let body = call(1, "search_api", json!({"query": "shipping quote"})).to_string();
    for auth in [None, Some("Bearer wrong"), Some("s3cret")] {
        let mut builder = post();
        if let Some(a) = auth {
            builder = builder.header("authorization", a);
        }
        let (status, headers, _) = send(
            &app,
            builder.body(Body::from(body.clone())).expect("request"),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{auth:?}");
        assert_eq!(
            headers
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok()),
            Some("Bearer")
        );
    }
    for auth in ["Bearer s3cret", "bearer s3cret", "BEARER s3cret"] {
        let request = post()
            .header("authorization", auth)
            .body(Body::from(body.clone()))
            .expect("request");
        let (status, _, bytes) = send(&app, request).await;
        assert_eq!(status, StatusCode::OK, "{auth}");
        let value: Value = serde_json::from_slice(&bytes).expect("json");
        assert_eq!(
            value["result"]["structuredContent"]["results"][0]["name"],
            "shipping.quote"
        );
    }
}

#[test]
fn refuses_non_loopback_without_auth() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--http", "0.0.0.0:0"])
        .output()
        .expect("codemode runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("refusing to listen"));
}

/// Sends one raw HTTP/1.1 POST of `body` and returns the stream.
async fn raw_post(addr: std::net::SocketAddr, body: &str) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnect_stops_the_program() {
    use std::time::{Duration, Instant};
    use tokio::io::AsyncReadExt;
    let config = Config {
        max_concurrent_executions: 1,
        ..Config::default()
    };
    let service = load_catalogs(&["conformance".to_string()], &[], config).expect("catalogs");
    let app = router(service, &HttpOptions::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let sleeper = call(
        1,
        "execute",
        json!({"source": "def main():\n    return conformance.sleep(ms=60000)\n"}),
    );
    let stream = raw_post(addr, &sleeper.to_string()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(stream);
    // The only execution slot frees up once the sleeping program stops.
    let started = Instant::now();
    let quick = call(
        2,
        "execute",
        json!({"source": "def main():\n    return conformance.echo(value=\"ok\")\n"}),
    );
    let mut stream = raw_post(addr, &quick.to_string()).await;
    let mut response = String::new();
    tokio::time::timeout(
        Duration::from_secs(10),
        stream.read_to_string(&mut response),
    )
    .await
    .expect("answered in time")
    .expect("read");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.contains("{\"result\":{\"value\":\"ok\"}}"),
        "{response}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}
