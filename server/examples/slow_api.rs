//! A loopback JSON API that answers every request after a fixed delay:
//! the stand-in for a REST API in benches/capacity/run.sh and for the
//! `outbound_memory` example.
//!
//! `GET /items/{id}` answers `{"id": ID, "value": 7 * ID}` after DELAY_MS
//! milliseconds, and `GET /openapi.json` describes that one operation
//! (operationId `getItem`), so that `[[openapi]]` imports it as
//! `api.get_item`. It speaks HTTP/1.1 and HTTP/2 without TLS (h2c, by
//! prior knowledge: a client that starts with the HTTP/2 preface), as an
//! API behind TLS speaks HTTP/2 to a client that offers it by ALPN.
//!
//! `cargo run --release -p codemode-server --example slow_api -- PORT DELAY_MS`

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use std::convert::Infallible;
use std::time::Duration;

/// The OpenAPI document of the one operation, for this port.
fn spec(port: u16) -> String {
    serde_json::json!({
        "openapi": "3.0.3",
        "info": {"title": "items", "version": "1"},
        "servers": [{"url": format!("http://127.0.0.1:{port}")}],
        "paths": {"/items/{id}": {"get": {
            "operationId": "getItem",
            "summary": "Get one item by its ID.",
            "parameters": [{
                "name": "id", "in": "path", "required": true,
                "schema": {"type": "integer"},
            }],
            "responses": {"200": {
                "description": "The item.",
                "content": {"application/json": {"schema": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer"},
                        "value": {"type": "integer"},
                    },
                }}},
            }},
        }}},
    })
    .to_string()
}

fn json(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut answer = Response::new(Full::new(Bytes::from(body)));
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    answer
}

async fn answer(
    request: Request<Incoming>,
    spec: &'static str,
    delay: Duration,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = request.uri().path();
    if path == "/openapi.json" {
        return Ok(json(StatusCode::OK, spec.to_string()));
    }
    let Some(item) = path.strip_prefix("/items/") else {
        return Ok(json(StatusCode::NOT_FOUND, r#"{"error":"path"}"#.into()));
    };
    let id = item.parse::<i64>();
    tokio::time::sleep(delay).await;
    Ok(match id {
        Ok(n) => json(
            StatusCode::OK,
            format!(r#"{{"id":{n},"value":{}}}"#, n.wrapping_mul(7)),
        ),
        Err(_) => json(StatusCode::BAD_REQUEST, r#"{"error":"id"}"#.into()),
    })
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(Ok(port)), Some(Ok(delay))) = (
        args.next().map(|a| a.parse::<u16>()),
        args.next().map(|a| a.parse::<u64>()),
    ) else {
        eprintln!("usage: slow_api PORT DELAY_MS");
        std::process::exit(2);
    };
    let spec: &'static str = Box::leak(spec(port).into_boxed_str());
    let delay = Duration::from_millis(delay);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        // A backlog for a thousand clients connecting at once (a bound
        // listener's default is 1,024, and a burst past it waits a second
        // for the SYN to be sent again).
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.set_reuseaddr(true).expect("SO_REUSEADDR");
        let listener = socket
            .bind(([127, 0, 0, 1], port).into())
            .and_then(|()| socket.listen(4096))
            .unwrap_or_else(|e| panic!("port {port}: {e}"));
        let mut server = auto::Builder::new(TokioExecutor::new());
        // As many streams at once as a client sends: the fixture must not
        // be the bound a benchmark measures.
        server.http2().max_concurrent_streams(None);
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let server = server.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |r| answer(r, spec, delay));
                // A connection that ends badly ends only itself.
                let _ = server.serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
}
