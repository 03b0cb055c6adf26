//! Endpoint construction by an embedding host: its own subject resolver on
//! the HTTP router (mapping what an outer middleware put in the request),
//! its own `serverInfo`, and metrics for a stdio server on a listener of
//! their own (`[telemetry] listen`).

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use codemode_catalog::{
    AllowAll, CallContext, Capability, Catalog, CodeMode, NoInput, Subject, SubjectResolver,
    Unauthenticated,
};
use codemode_server::{router, HttpOptions};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

#[derive(Serialize, JsonSchema)]
struct Who {
    subject: String,
}

/// A catalog whose one capability tells who called it.
fn whoami() -> CodeMode {
    let catalog = Catalog::builder()
        .capability(
            Capability::with_context("who.ami", |cx: CallContext, _: NoInput| async move {
                Ok(Who {
                    subject: cx.subject().id().to_string(),
                })
            })
            .summary("Who is calling.")
            .read_only(true),
        )
        .build()
        .expect("catalog");
    CodeMode::new(catalog, AllowAll)
}

/// What the host's own authentication put in the request.
#[derive(Clone)]
struct User(String);

/// The host's authentication: the `x-user` header becomes a [`User`].
async fn outer_auth(mut request: Request, next: Next) -> Response {
    let user = request
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .map(|u| User(u.to_string()));
    if let Some(user) = user {
        request.extensions_mut().insert(user);
    }
    next.run(request).await
}

/// Maps the host's [`User`] to a subject.
struct FromUser;

impl SubjectResolver<axum::http::request::Parts> for FromUser {
    fn resolve(&self, parts: &axum::http::request::Parts) -> Result<Subject, Unauthenticated> {
        let user = parts.extensions.get::<User>().ok_or(Unauthenticated)?;
        Ok(Subject::new(user.0.clone()).with_attribute("via", json!("outer")))
    }
}

fn execute(source: &str) -> CallToolRequestParams {
    let Value::Object(arguments) = json!({ "source": source }) else {
        unreachable!()
    };
    CallToolRequestParams::new("execute").with_arguments(arguments)
}

const WHO: &str = "def main():\n    return who.ami()\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_router_takes_the_hosts_subject_resolver_and_server_info() {
    let options = HttpOptions {
        subjects: Some(Arc::new(FromUser)),
        server_info: Some(("shipping".into(), "1.0.0".into())),
        ..HttpOptions::default()
    };
    let app = router(whoami(), &options).layer(middleware::from_fn(outer_auth));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });

    // The rmcp client (through rmcp's own service at /mcp).
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            format!("http://{addr}/mcp"),
        )
        .custom_headers(
            [(
                axum::http::HeaderName::from_static("x-user"),
                axum::http::HeaderValue::from_static("carol"),
            )]
            .into_iter()
            .collect(),
        );
    let client =
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .expect("initialize");
    let info = client.peer_info().expect("server info");
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(
        (server.name.as_str(), server.version.as_str()),
        ("shipping", "1.0.0")
    );
    let result = client.call_tool(execute(WHO)).await.expect("call");
    assert_eq!(
        result.structured_content,
        Some(json!({"result": {"subject": "carol"}}))
    );

    // A plain POST (the plain-call path) with and without the host's user.
    for (user, want) in [
        (Some("dave"), r#"{"result":{"subject":"dave"}}"#),
        (None, "unauthenticated"),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "execute", "arguments": {"source": WHO}}})
        .to_string();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n",
            body.len()
        );
        if let Some(user) = user {
            request.push_str(&format!("x-user: {user}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        let response = http_exchange(addr, &request).await;
        let json: Value =
            serde_json::from_str(response.split("\r\n\r\n").nth(1).expect("body")).expect("json");
        assert_eq!(json["result"]["content"][0]["text"], want, "{response}");
    }
}

/// Sends one raw HTTP/1.1 request and reads the whole response.
async fn http_exchange(addr: std::net::SocketAddr, request: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_serves_metrics_on_its_own_listener() {
    let dir = std::env::temp_dir().join(format!("codemode-endpoint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("codemode.toml");
    std::fs::write(&config, "[telemetry]\nlisten = \"127.0.0.1:0\"\n").expect("write");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"));
    command
        .args(["serve", "--config"])
        .arg(&config)
        .env_remove("RUST_LOG");
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(stderr.expect("stderr")).lines();
    let addr = loop {
        let line = lines.next_line().await.expect("read").expect("a line");
        if let Some(rest) = line.strip_prefix("codemode: metrics on http://") {
            break rest.trim_end_matches("/metrics").to_string();
        }
    };
    let client = ().serve(transport).await.expect("initialize");
    let source = "def main():\n    return shipping.quote(weight_grams=10)\n";
    client.call_tool(execute(source)).await.expect("call");
    let request =
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".to_string();
    let response = http_exchange(addr.parse().expect("address"), &request).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response
            .lines()
            .any(|l| l == "codemode_tool_calls_total{tool=\"execute\",outcome=\"ok\"} 1"),
        "{response}"
    );
    let bad_host = "GET /metrics HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n";
    let response = http_exchange(addr.parse().expect("address"), bad_host).await;
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    client.cancel().await.expect("close");
    let _ = std::fs::remove_dir_all(&dir);
}
