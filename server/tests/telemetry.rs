//! Telemetry: `/metrics` on the HTTP listener (calls and durations by tool
//! and outcome in the Prometheus text format, behind the Host allow-list
//! and the bearer tokens, absent unless enabled), and the `tool_call`
//! tracing span of each call in the binary's log (tool, outcome, duration;
//! never arguments, source or results).

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use codemode_catalog::Config;
use codemode_server::load_catalogs;
use codemode_server::Metrics;
use codemode_server::{router, token_digest_hex, HttpOptions, Token};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;
use tower::ServiceExt;

/// Text in a program's source and result that must never reach telemetry.
const MARKER: &str = "SOURCE-MARKER-7f3a";

fn app(options: HttpOptions) -> Router {
    let sources = ["demo".to_string(), "conformance".to_string()];
    let service = load_catalogs(&sources, &[], Config::default()).expect("catalogs");
    router(service, &options)
}

fn with_metrics() -> HttpOptions {
    HttpOptions {
        metrics: Some(Metrics::new()),
        ..HttpOptions::default()
    }
}

async fn send(app: &Router, request: Request<Body>) -> (StatusCode, Option<String>, String) {
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        content_type,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

async fn call(app: &Router, tool: &str, arguments: Value) -> Value {
    call_as(app, "localhost", None, tool, arguments).await
}

async fn call_as(
    app: &Router,
    host: &str,
    token: Option<&str>,
    tool: &str,
    arguments: Value,
) -> Value {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let mut builder = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", host)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    let request = builder
        .body(Body::from(message.to_string()))
        .expect("request");
    let (status, _, body) = send(app, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_str(&body).expect("json")
}

fn get_metrics(host: &str, token: Option<&str>) -> Request<Body> {
    let mut builder = Request::builder()
        .method("GET")
        .uri("/metrics")
        .header("host", host);
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    builder.body(Body::empty()).expect("request")
}

/// The value of the series `name{labels}` in an exposition.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn metrics_count_calls_by_tool_and_outcome() {
    let app = app(with_metrics());
    let source = format!("def main():\n    return conformance.echo(value=\"{MARKER}\")\n");
    for _ in 0..3 {
        call(&app, "execute", json!({"source": source})).await;
    }
    let denied = "def main():\n    return conformance.denied()\n";
    call(&app, "execute", json!({"source": denied})).await;
    call(&app, "search_api", json!({"query": "shipping quote"})).await;
    call(&app, "describe_api", json!({"name": MARKER})).await;
    call(&app, "execute", json!({"source": 1})).await;
    call(&app, MARKER, json!({})).await;

    let (status, content_type, text) = send(&app, get_metrics("localhost", None)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        content_type.as_deref(),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let calls = |tool: &str, outcome: &str| {
        sample(
            &text,
            &format!("codemode_tool_calls_total{{tool=\"{tool}\",outcome=\"{outcome}\"}}"),
        )
    };
    assert_eq!(calls("execute", "ok"), Some(3.0), "{text}");
    assert_eq!(calls("execute", "permission_denied"), Some(1.0));
    assert_eq!(calls("execute", "invalid_params"), Some(1.0));
    assert_eq!(calls("search_api", "ok"), Some(1.0));
    assert_eq!(calls("describe_api", "capability_not_found"), Some(1.0));
    assert_eq!(calls("unknown", "invalid_params"), Some(1.0));
    let duration = "codemode_tool_call_duration_seconds_count{tool=\"execute\",outcome=\"ok\"}";
    assert_eq!(sample(&text, duration), Some(3.0));
    let sum = "codemode_tool_call_duration_seconds_sum{tool=\"execute\",outcome=\"ok\"}";
    assert!(sample(&text, sum).is_some_and(|s| s > 0.0 && s < 30.0));
    assert!(text.contains("# TYPE codemode_tool_call_duration_seconds histogram"));
    assert!(!text.contains(MARKER));
    assert!(!text.contains("echo"));
}

#[tokio::test]
async fn metrics_obey_the_host_allow_list_and_the_tokens() {
    let app = app(with_metrics());
    for host in ["localhost:8080", "127.0.0.1", "[::1]:1"] {
        let (status, _, _) = send(&app, get_metrics(host, None)).await;
        assert_eq!(status, StatusCode::OK, "{host}");
    }
    for host in ["evil.example", "localhost.evil.example:80"] {
        let (status, _, _) = send(&app, get_metrics(host, None)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{host}");
    }

    let app = self::app(HttpOptions {
        allowed_hosts: Some(vec!["mcp.example.com".to_string()]),
        tokens: vec![Token::from_hex_digest("ops", &token_digest_hex("scrape")).expect("token")],
        ..with_metrics()
    });
    let query = json!({"query": "quote"});
    call_as(&app, "mcp.example.com", Some("scrape"), "search_api", query).await;
    let (status, _, _) = send(&app, get_metrics("mcp.example.com", None)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _, _) = send(&app, get_metrics("mcp.example.com", Some("wrong"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _, text) = send(&app, get_metrics("mcp.example.com", Some("scrape"))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        text.contains("# TYPE codemode_tool_calls_total counter"),
        "{text}"
    );
    let (status, _, _) = send(&app, get_metrics("localhost", Some("scrape"))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_metrics_listener_admits_ip_addresses_and_may_skip_tokens() {
    use codemode_server::{metrics_listener_options, metrics_router};
    use codemode_server::{HttpConfig, TelemetryConfig, TokenConfig};
    let http = HttpConfig {
        allowed_hosts: Some(vec!["codemode.codemode.svc".to_string()]),
        tokens: vec![TokenConfig {
            subject: "ops".to_string(),
            sha256: token_digest_hex("scrape"),
        }],
        ..HttpConfig::default()
    };
    let listener = |telemetry: &TelemetryConfig| {
        let options = metrics_listener_options(&http, telemetry).expect("valid");
        metrics_router(Metrics::new(), &options)
    };
    let pod_ips = ["10.244.1.17:9464", "10.244.1.17", "[fd00::17]:9464"];

    // By default the listener needs the tokens of [http]; a Host that is
    // an IP address passes the Host check, a name must be listed.
    let app = listener(&TelemetryConfig::default());
    for host in pod_ips {
        let (status, _, _) = send(&app, get_metrics(host, None)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{host}");
        let (status, _, _) = send(&app, get_metrics(host, Some("scrape"))).await;
        assert_eq!(status, StatusCode::OK, "{host}");
    }
    for host in ["evil.example", "10.244.1.17.nip.io:9464", "localhost"] {
        let (status, _, _) = send(&app, get_metrics(host, Some("scrape"))).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{host}");
    }

    // listen_requires_token = false: a scraper without a token.
    let app = listener(&TelemetryConfig {
        listen_requires_token: Some(false),
        ..TelemetryConfig::default()
    });
    for host in pod_ips.into_iter().chain(["codemode.codemode.svc:9464"]) {
        let (status, _, _) = send(&app, get_metrics(host, None)).await;
        assert_eq!(status, StatusCode::OK, "{host}");
    }
    let (status, _, _) = send(&app, get_metrics("evil.example", None)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // The --http listener's /metrics and /mcp keep the names only.
    let app = self::app(HttpOptions {
        allowed_hosts: http.allowed_hosts.clone(),
        tokens: vec![Token::from_hex_digest("ops", &token_digest_hex("scrape")).expect("token")],
        ..with_metrics()
    });
    let (status, _, _) = send(&app, get_metrics("10.244.1.17:8080", Some("scrape"))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn without_metrics_there_is_no_endpoint() {
    let app = app(HttpOptions::default());
    let (status, _, _) = send(&app, get_metrics("localhost", None)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// One HTTP/1.1 request over a fresh connection; the whole response.
fn http(addr: &str, request: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("receive");
    response
}

#[test]
fn the_binary_serves_metrics_and_logs_spans_when_configured() {
    let dir = std::env::temp_dir().join(format!("codemode-telemetry-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let config = dir.join("codemode.toml");
    std::fs::write(
        &config,
        "catalogs = [\"conformance\"]\n[telemetry]\nmetrics = true\n",
    )
    .expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .env("RUST_LOG", "debug")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("the listening line");
    let addr = line
        .trim()
        .strip_prefix("codemode: listening on http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();

    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "execute",
        "arguments": {"source": format!("def main():\n    return conformance.echo(value=\"{MARKER}\")\n")}}})
    .to_string();
    let response = http(
        &addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let metrics = http(
        &addr,
        &format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    );
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(
        metrics.contains("\ncodemode_tool_calls_total{tool=\"execute\",outcome=\"ok\"} 1\n"),
        "{metrics}"
    );

    let _ = child.kill();
    let _ = child.wait();
    let mut log = String::new();
    stderr.read_to_string(&mut log).expect("the log");
    let span = log
        .lines()
        .find(|l| l.contains("tool call finished"))
        .unwrap_or_else(|| panic!("no span in {log}"));
    assert!(
        span.contains("tool_call{tool=\"execute\" outcome=\"ok\" duration_us="),
        "{span}"
    );
    assert!(!log.contains(MARKER), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts `codemode serve` (stdio, stdin held open) with `config`.
fn start_stdio(dir: &std::path::Path, config: &str) -> std::process::Child {
    std::fs::create_dir_all(dir).expect("mkdir");
    let path = dir.join("codemode.toml");
    std::fs::write(&path, config).expect("write");
    Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--config"])
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn")
}

#[test]
fn the_metrics_listener_cuts_a_head_that_never_ends() {
    let dir = std::env::temp_dir().join(format!("codemode-metrics-head-{}", std::process::id()));
    let mut child = start_stdio(
        &dir,
        "catalogs = [\"conformance\"]\n[http]\nheader_read_timeout_ms = 300\n\
         [telemetry]\nlisten = \"127.0.0.1:0\"\n",
    );
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("the metrics line");
    let addr = line
        .trim()
        .strip_prefix("codemode: metrics on http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    // A whole request is served.
    let metrics = http(
        &addr,
        &format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    );
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    // A head that never ends is closed at the header deadline.
    let mut slow = std::net::TcpStream::connect(&addr).expect("connect");
    slow.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    slow.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .expect("write");
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    let read = slow.read_to_end(&mut rest);
    assert!(read.is_ok(), "not closed: {read:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_public_metrics_address_without_a_token_is_refused_unless_allowed() {
    let dir = std::env::temp_dir().join(format!("codemode-metrics-public-{}", std::process::id()));
    let config = "catalogs = [\"conformance\"]\n[telemetry]\nlisten = \"0.0.0.0:0\"\n";
    let mut child = start_stdio(&dir, config);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut log = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut log)
        .expect("stderr");
    assert_eq!(status.and_then(|s| s.code()), Some(2), "{log}");
    assert!(log.contains("allow_public_listen"), "{log}");
    // Said on purpose, it starts.
    let mut child = start_stdio(&dir, &format!("{config}allow_public_listen = true\n"));
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("the metrics line");
    assert!(
        line.starts_with("codemode: metrics on http://0.0.0.0:"),
        "{line}"
    );
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
