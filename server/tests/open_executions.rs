//! Thousands of executions waiting on capabilities at once, through the
//! built binary over real sockets: with every bound raised out of the
//! way, none is refused or lost, nothing deadlocks (a paused execution
//! holds no thread), `/healthz` keeps answering within 50 ms, and the
//! process drains and exits 0 on SIGTERM after.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Concurrent executions.
const CLIENTS: usize = 2000;

/// The server process, killed if the test ends before it exits.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `codemode serve --http 127.0.0.1:0 --catalog conformance ARGS` and the
/// address it listens on.
fn start_binary(args: &[&str]) -> (Child, SocketAddr) {
    // CODEMODE_BIN runs the same test against another build (a release
    // binary, say).
    let binary = std::env::var("CODEMODE_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_codemode").to_string());
    let mut child = Command::new(binary)
        .args(["serve", "--http", "127.0.0.1:0", "--catalog", "conformance"])
        .args(args)
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn codemode");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("read stderr");
    let addr = line
        .trim()
        .strip_prefix("codemode: listening on http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .expect("an address");
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, addr)
}

/// Sends `request` on a new connection and reads the response to the
/// close.
async fn ask(addr: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.expect("read");
    String::from_utf8_lossy(&bytes).into_owned()
}

fn execute_request(source: &str) -> String {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "execute", "arguments": {"source": source}}})
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn two_thousand_waiting_executions_neither_deadlock_nor_starve_health() {
    let dir = std::env::temp_dir().join(format!("codemode-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("open.toml");
    std::fs::write(
        &config,
        "[limits]\n\
         max_concurrent_executions = 100000\n\
         max_open_executions = 100000\n\
         max_executions_per_subject = 100000\n\
         max_queued_executions = 100000\n\
         max_time_ms = 60000\n\
         [http]\n\
         max_connections = 100000\n\
         header_read_timeout_ms = 60000\n\
         body_read_timeout_ms = 60000\n\
         [telemetry]\n\
         metrics = true\n",
    )
    .expect("write");
    let (child, addr) = start_binary(&["--config", config.to_str().expect("utf-8")]);
    let mut server = Server(child);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (answers, slowest_probe, probes, most_open) = runtime.block_on(async move {
        // Five calls in a row: half a second of waiting per execution.
        let request = execute_request(
            "def main():\n    for _ in range(4):\n        conformance.sleep(ms=100)\n    return conformance.sleep(ms=100)\n",
        );
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Probes every 20 ms while the executions run, each timed, from a
        // thread of their own (so that the clients' tasks do not delay
        // them on this side).
        let prober = {
            let done = done.clone();
            std::thread::spawn(move || {
                use std::io::{Read, Write};
                let probe = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
                let scrape = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
                let ask = |request: &str| {
                    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
                    stream.write_all(request.as_bytes()).expect("write");
                    let mut answer = String::new();
                    stream.read_to_string(&mut answer).expect("read");
                    answer
                };
                let (mut times, mut most_open) = (Vec::new(), 0u64);
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let started = Instant::now();
                    let answer = ask(probe);
                    times.push(started.elapsed());
                    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
                    let open = ask(scrape)
                        .lines()
                        .find_map(|l| l.strip_prefix("codemode_executions_open "))
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0);
                    most_open = most_open.max(open);
                    std::thread::sleep(Duration::from_millis(20));
                }
                (times, most_open)
            })
        };
        // The clients arrive over 250 ms, and are all open at once.
        let mut clients = Vec::with_capacity(CLIENTS);
        for i in 0..CLIENTS {
            let request = request.clone();
            clients.push(tokio::spawn(async move { ask(addr, &request).await }));
            if i % 16 == 15 {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
        let mut answers = Vec::with_capacity(CLIENTS);
        for client in clients {
            answers.push(client.await.expect("joined"));
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let (times, most_open) = prober.join().expect("joined");
        let slowest = times.iter().max().copied().unwrap_or_default();
        (answers, slowest, times.len(), most_open)
    });
    let good = answers
        .iter()
        .filter(|a| a.starts_with("HTTP/1.1 200") && a.contains(r#"{\"result\":{\"slept\":100}}"#))
        .count();
    let odd = answers.iter().find(|a| !a.contains(r#"\"slept\":100"#));
    assert_eq!(good, CLIENTS, "first odd answer: {odd:?}");
    eprintln!(
        "{CLIENTS} executions, at most {most_open} open at once; {probes} probes, slowest {slowest_probe:?}"
    );
    assert!(most_open >= 1500, "at most {most_open} open at once");
    assert!(probes >= 3, "{probes} probes");
    assert!(
        slowest_probe <= Duration::from_millis(50),
        "slowest /healthz of {probes}: {slowest_probe:?}"
    );
    // SAFETY: kill with a child's PID and a signal number has no memory
    // effects.
    let sent = unsafe { libc::kill(server.0.id() as i32, libc::SIGTERM) };
    assert_eq!(sent, 0);
    let started = Instant::now();
    let code = loop {
        if let Some(status) = server.0.try_wait().expect("wait") {
            break status.code();
        }
        if started.elapsed() > Duration::from_secs(20) {
            panic!("still running 20 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}
