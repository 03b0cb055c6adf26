//! The memory of outbound HTTP requests in flight: starts N requests at
//! once to a slow API and prints the process's resident memory per
//! request while all of them wait for their answers — through reqwest
//! (the client an `[[openapi]]` import calls its API with: one connection
//! per request in flight under HTTP/1.1, one connection for all of them
//! with `h2`, HTTP/2 by prior knowledge), or over a bare TCP socket (the
//! floor: a task, a socket and a small buffer).
//!
//! The API must answer after more than a second, e.g.
//! `cargo run --release -p codemode-server --example slow_api -- 18092
//! 3000` (benches/capacity/run.sh uses it with a shorter delay), then:
//!
//! `cargo run --release -p codemode-server --example outbound_memory --
//! reqwest|h2|socket [N] [URL]` (N 1000, URL
//! `http://127.0.0.1:18092/items/1`)

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[global_allocator]
static ALLOCATOR: codemode_server::Allocator = codemode_server::Allocator;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// One request over a bare socket: the answer's first bytes are enough.
async fn over_socket(url: &reqwest::Url) -> usize {
    let host = url.host_str().expect("a URL with a host");
    let port = url.port_or_known_default().expect("an http URL");
    let mut socket = tokio::net::TcpStream::connect((host, port))
        .await
        .expect("the API accepts");
    let head = format!("GET {} HTTP/1.1\r\nHost: {host}\r\n\r\n", url.path());
    socket
        .write_all(head.as_bytes())
        .await
        .expect("the request is sent");
    let mut answer = Vec::with_capacity(1024);
    socket.read_buf(&mut answer).await.expect("the API answers")
}

/// N requests at once; the process's resident KiB while all wait.
async fn in_flight(client: &reqwest::Client, socket: bool, url: &reqwest::Url, n: usize) -> u64 {
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let client = client.clone();
            let url = url.clone();
            tokio::spawn(async move {
                if socket {
                    over_socket(&url).await
                } else {
                    let answer = client.get(url).send().await.expect("the API answers");
                    answer.bytes().await.expect("the body is read").len()
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let resident = rss_kib();
    for task in tasks {
        assert!(task.await.expect("the request ends") > 0, "an empty answer");
    }
    resident
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let (socket, http2) = match mode.as_str() {
        "reqwest" => (false, false),
        "h2" => (false, true),
        "socket" => (true, false),
        _ => {
            eprintln!("usage: outbound_memory reqwest|h2|socket [N] [URL]");
            std::process::exit(2);
        }
    };
    let n: usize = args.next().map_or(1000, |a| a.parse().expect("N"));
    let url: reqwest::Url = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:18092/items/1".into())
        .parse()
        .expect("a URL");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut client = reqwest::Client::builder().retry(reqwest::retry::never());
        if http2 {
            client = client.http2_prior_knowledge();
        }
        let client = client.build().expect("a client");
        // Warm up: the allocator and the runtime as a server has them.
        in_flight(&client, socket, &url, 64).await;
        let before = rss_kib();
        let during = in_flight(&client, socket, &url, n).await;
        println!(
            "{mode}: {n} requests in flight, {:.1} KiB resident each",
            during.saturating_sub(before) as f64 / n as f64
        );
    });
}
