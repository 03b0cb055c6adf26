//! The `--http` listener as clients meet it over real sockets: slow
//! clients cut at the header, body and keep-alive deadlines, the cap on
//! open connections, `/healthz` and `/readyz`, and the graceful drain on
//! SIGTERM and SIGINT of the built binary.

use codemode_catalog::Config;
use codemode_server::ConnectionLimits;
use codemode_server::DrainOptions;
use codemode_server::{load_catalogs, serve_listener};
use codemode_server::{router, HttpOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Serves the conformance catalog with `limits` on a free loopback port.
fn serve(limits: ConnectionLimits, drain: DrainOptions) -> SocketAddr {
    serve_with(limits, drain, None)
}

/// As [`serve`], with at most `in_flight` bytes of request bodies held.
fn serve_with(
    limits: ConnectionLimits,
    drain: DrainOptions,
    in_flight: Option<usize>,
) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let service = load_catalogs(&["conformance".to_string()], &[], Config::default())
                .expect("catalog");
            let options = HttpOptions {
                limits,
                drain: drain.token.clone(),
                body_bytes_in_flight: in_flight,
                ..HttpOptions::default()
            };
            let socket = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            tx.send(socket.local_addr().expect("addr")).expect("send");
            serve_listener(socket, router(service, &options), limits, drain).await;
        });
    });
    rx.recv().expect("the server started")
}

fn limits(header_ms: u64, body_ms: u64, keep_alive_ms: u64, max: usize) -> ConnectionLimits {
    ConnectionLimits {
        header_read: Duration::from_millis(header_ms),
        body_read: Duration::from_millis(body_ms),
        keep_alive: Duration::from_millis(keep_alive_ms),
        max_connections: max,
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream
}

/// Reads until the server closes the connection; what it sent and when.
fn read_to_close(stream: &mut TcpStream) -> (String, Instant) {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
        }
    }
    (String::from_utf8_lossy(&bytes).into_owned(), Instant::now())
}

/// Reads one response to a keep-alive request (status line to the end of
/// its `Content-Length` body).
fn read_response(stream: &mut TcpStream) -> String {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut head = String::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("read");
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().expect("length");
        }
        head.push_str(&line);
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).expect("body");
    head + &String::from_utf8_lossy(&body)
}

fn get(path: &str, close: bool) -> String {
    let connection = if close { "Connection: close\r\n" } else { "" };
    format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{connection}\r\n")
}

fn post(body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn execute(source: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "execute", "arguments": {"source": source}}})
    .to_string()
}

#[test]
fn a_head_that_never_ends_is_cut_at_the_header_deadline() {
    let addr = serve(limits(300, 5000, 5000, 64), DrainOptions::default());
    let mut streams: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut s = connect(addr);
            s.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n")
                .expect("write");
            s
        })
        .collect();
    let started = Instant::now();
    for s in &mut streams {
        let (_, closed) = read_to_close(s);
        let after = closed - started;
        assert!(after < Duration::from_secs(3), "{after:?}");
    }
    assert!(started.elapsed() >= Duration::from_millis(250));
    // A client that sends nothing at all is cut the same way.
    let mut silent = connect(addr);
    let started = Instant::now();
    read_to_close(&mut silent);
    let after = started.elapsed();
    assert!(
        after >= Duration::from_millis(250) && after < Duration::from_secs(3),
        "{after:?}"
    );
}

/// An `execute` request whose head carries a header of `bytes` bytes.
fn with_header_of(bytes: usize) -> String {
    let padding = format!("X-Padding: {}\r\nContent-Length:", "p".repeat(bytes));
    post(&execute("def main():\n    return 1\n")).replacen("Content-Length:", &padding, 1)
}

#[test]
fn a_head_longer_than_16_kib_is_431() {
    assert_eq!(codemode_server::MAX_HEAD_BYTES, 16 << 10);
    let addr = serve(limits(2_000, 2_000, 2_000, 8), DrainOptions::default());
    // Just under the bound (the rest of the head is about 200 bytes): served.
    let mut stream = connect(addr);
    stream
        .write_all(with_header_of(15 << 10).as_bytes())
        .expect("send");
    let (answer, _) = read_to_close(&mut stream);
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    assert!(answer.contains("{\\\"result\\\":1}"), "{answer}");
    // Over it, and far over it (hyper's own bound was about 400 KiB): 431
    // once the buffer is full, without reading the rest.
    for bytes in [17 << 10, 300 << 10] {
        let mut stream = connect(addr);
        let request = with_header_of(bytes);
        // The server may answer and close before all is sent.
        let _ = stream.write_all(request.as_bytes());
        let (answer, _) = read_to_close(&mut stream);
        assert!(
            answer.starts_with("HTTP/1.1 431 "),
            "{bytes} bytes: {}",
            &answer[..answer.len().min(200)]
        );
    }
}

#[test]
fn a_body_that_never_ends_is_408_at_the_body_deadline() {
    let addr = serve(limits(5000, 300, 5000, 64), DrainOptions::default());
    let mut s = connect(addr);
    let started = Instant::now();
    s.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
          Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
    )
    .expect("write");
    let (response, _) = read_to_close(&mut s);
    let after = started.elapsed();
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(
        after >= Duration::from_millis(250) && after < Duration::from_secs(3),
        "{after:?}"
    );
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_its_timeout() {
    // The idle timeout is longer than the head's: an idle connection
    // outlives the head deadline, and each request's head gets its own.
    // (Not a probe: probes are answered once, then closed.)
    let addr = serve(limits(200, 5000, 900, 64), DrainOptions::default());
    let mut s = connect(addr);
    s.write_all(get("/missing", false).as_bytes())
        .expect("write");
    assert!(read_response(&mut s).starts_with("HTTP/1.1 404"));
    std::thread::sleep(Duration::from_millis(500));
    s.write_all(get("/missing", false).as_bytes())
        .expect("still open");
    let response = read_response(&mut s);
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    let idle = Instant::now();
    let (rest, _) = read_to_close(&mut s);
    assert_eq!(rest, "");
    let after = idle.elapsed();
    assert!(
        after >= Duration::from_millis(800) && after < Duration::from_secs(4),
        "{after:?}"
    );
}

#[test]
fn connections_beyond_the_cap_wait_for_a_free_one() {
    let addr = serve(limits(10_000, 10_000, 10_000, 2), DrainOptions::default());
    // Two connections in the middle of a head (not idle: nothing to
    // close for a newcomer) take both slots.
    let mut first = connect(addr);
    first
        .write_all(b"GET /missing HTTP/1.1\r\n")
        .expect("write");
    let mut second = connect(addr);
    second
        .write_all(b"GET /missing HTTP/1.1\r\n")
        .expect("write");
    std::thread::sleep(Duration::from_millis(100));
    // The third is accepted but not served while two are open.
    let mut third = connect(addr);
    third
        .set_read_timeout(Some(Duration::from_millis(500)))
        .expect("timeout");
    third
        .write_all(get("/missing", true).as_bytes())
        .expect("write");
    let mut byte = [0u8; 1];
    let waited = third.read(&mut byte);
    assert!(
        matches!(&waited, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut),
        "{waited:?}"
    );
    // Health probes are answered all the same, at once.
    for path in ["/healthz", "/readyz"] {
        let mut probe = connect(addr);
        probe.write_all(get(path, false).as_bytes()).expect("write");
        let (response, _) = read_to_close(&mut probe);
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
    // A few more wait beside the third (7 of 8 waiting slots); past those,
    // one is answered 503 at once rather than held.
    let waiting: Vec<_> = (0..7)
        .map(|_| {
            let mut s = connect(addr);
            s.write_all(get("/missing", true).as_bytes())
                .expect("write");
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut refused = connect(addr);
    refused
        .write_all(get("/missing", true).as_bytes())
        .expect("write");
    let (response, _) = read_to_close(&mut refused);
    assert!(response.starts_with("HTTP/1.1 503"), "{response}");
    assert!(response.contains("Retry-After: 1"), "{response}");
    drop(first);
    third
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let (response, _) = read_to_close(&mut third);
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    drop(second);
    for mut s in waiting {
        let (response, _) = read_to_close(&mut s);
        assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    }
}

#[test]
fn health_and_readiness_answer_without_any_check() {
    let drain = DrainOptions {
        delay: Duration::from_secs(30),
        ..DrainOptions::default()
    };
    let token = drain.token.clone();
    let addr = serve(ConnectionLimits::default(), drain);
    let ask = |request: &str| {
        let mut s = connect(addr);
        s.write_all(request.as_bytes()).expect("write");
        read_to_close(&mut s).0
    };
    // No Host check, no token, no Origin check.
    let odd = "GET /healthz HTTP/1.1\r\nHost: evil.example\r\nOrigin: http://evil.example\r\nConnection: close\r\n\r\n";
    let healthz = ask(odd);
    assert!(healthz.starts_with("HTTP/1.1 200"), "{healthz}");
    assert!(healthz.ends_with("\r\n\r\nok"), "{healthz}");
    let ready = ask(&get("/readyz", true));
    assert!(
        ready.starts_with("HTTP/1.1 200") && ready.ends_with("ready"),
        "{ready}"
    );
    token.cancel();
    let draining = ask(&get("/readyz", true));
    assert!(draining.starts_with("HTTP/1.1 503"), "{draining}");
    assert!(draining.ends_with("draining"), "{draining}");
    let healthz = ask(&get("/healthz", true));
    assert!(healthz.starts_with("HTTP/1.1 200"), "{healthz}");
}

/// `codemode serve --http 127.0.0.1:0 ARGS` and the address it listens on.
fn start_binary(args: &[&str]) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_codemode"))
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

fn signal(child: &Child, signal: i32) {
    // SAFETY: kill with a child's PID and a signal number has no memory
    // effects.
    let sent = unsafe { libc::kill(child.id() as i32, signal) };
    assert_eq!(sent, 0);
}

/// Waits at most `limit` for the child to exit; its exit code.
fn exit_within(child: &mut Child, limit: Duration) -> Option<i32> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some(status) = child.try_wait().expect("wait") {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("still running after {limit:?}");
}

#[test]
fn sigterm_drains_in_flight_executions_and_exits_0() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let (mut child, addr) = start_binary(&[]);
        let mut sleeper = connect(addr);
        let program = "def main():\n    return conformance.sleep(ms=1200)\n";
        sleeper
            .write_all(post(&execute(program)).as_bytes())
            .expect("write");
        std::thread::sleep(Duration::from_millis(300));
        signal(&child, sig);
        std::thread::sleep(Duration::from_millis(300));
        // No new connection is accepted while the execution finishes.
        assert!(
            TcpStream::connect(addr).is_err(),
            "signal {sig}: still accepting"
        );
        let (response, _) = read_to_close(&mut sleeper);
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(
            response.contains("{\\\"result\\\":{\\\"slept\\\":1200}}"),
            "{response}"
        );
        assert_eq!(
            exit_within(&mut child, Duration::from_secs(5)),
            Some(0),
            "signal {sig}"
        );
    }
}

/// The drain's signal handlers are in place once the server says it
/// listens: a SIGTERM right after that line drains (exit 0), it does not
/// end the process by the signal's default action.
#[test]
fn a_signal_right_after_the_listening_line_drains() {
    for round in 0..20 {
        let sig = if round % 2 == 0 {
            libc::SIGTERM
        } else {
            libc::SIGINT
        };
        let (mut child, _) = start_binary(&[]);
        signal(&child, sig);
        assert_eq!(
            exit_within(&mut child, Duration::from_secs(5)),
            Some(0),
            "round {round}, signal {sig}"
        );
    }
}

/// The PIDs of the child processes of `pid` (every thread's).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

#[test]
fn a_drain_ends_the_upstream_children() {
    let fixture = env!("CARGO_BIN_EXE_codemode-upstream-fixture");
    let upstream = format!("fx={fixture}");
    let (mut child, addr) = start_binary(&["--upstream", &upstream]);
    let ready = {
        let mut s = connect(addr);
        s.write_all(get("/readyz", true).as_bytes()).expect("write");
        read_to_close(&mut s).0
    };
    assert!(ready.starts_with("HTTP/1.1 200"), "{ready}");
    let upstreams = children(child.id());
    assert_eq!(upstreams.len(), 1, "one upstream child: {upstreams:?}");
    signal(&child, libc::SIGTERM);
    assert_eq!(exit_within(&mut child, Duration::from_secs(5)), Some(0));
    let gone = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |stat| stat.contains(") Z "))
    };
    let started = Instant::now();
    while !gone(upstreams[0]) && started.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(gone(upstreams[0]), "the upstream child outlived the server");
}

#[test]
fn readyz_turns_503_during_the_drain_delay() {
    let dir = std::env::temp_dir().join(format!("codemode-drain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("drain.toml");
    std::fs::write(&config, "[http]\ndrain_delay_ms = 1500\n").expect("write");
    let (mut child, addr) = start_binary(&["--config", config.to_str().expect("utf-8")]);
    let ask = |request: &str| {
        let mut s = connect(addr);
        s.write_all(request.as_bytes()).expect("write");
        read_to_close(&mut s).0
    };
    assert!(ask(&get("/readyz", true)).starts_with("HTTP/1.1 200"));
    let started = Instant::now();
    signal(&child, libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(200));
    let draining = ask(&get("/readyz", true));
    assert!(draining.starts_with("HTTP/1.1 503"), "{draining}");
    let served = ask(&post(&execute("def main():\n    return 7\n")));
    assert!(
        served.starts_with("HTTP/1.1 200"),
        "requests are still served: {served}"
    );
    assert_eq!(exit_within(&mut child, Duration::from_secs(5)), Some(0));
    assert!(
        started.elapsed() >= Duration::from_millis(1400),
        "{:?}",
        started.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_body_limit_follows_max_source_bytes() {
    let addr = serve(ConnectionLimits::default(), DrainOptions::default());
    let ask = |body: &str| {
        let mut s = connect(addr);
        s.write_all(post(body).as_bytes()).expect("write");
        read_to_close(&mut s).0
    };
    // The default max_source_bytes is 64 KiB: the limit is 6 x 64 KiB and
    // 64 KiB of envelope, well below the old 4 MiB.
    let max = codemode_server::max_body_bytes(65_536);
    assert_eq!(max, 6 * 65_536 + 65_536);
    // A longer declared body is refused before any of it is read.
    let mut s = connect(addr);
    let head = post("").replace("Content-Length: 0", &format!("Content-Length: {}", max + 1));
    s.write_all(head.as_bytes()).expect("write");
    let (response, _) = read_to_close(&mut s);
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(
        response.contains(&format!("exceeds {max} bytes")),
        "{response}"
    );
    // A source of max_source_bytes that escapes at worst (six bytes per
    // byte) still fits.
    let source = "\u{1}".repeat(65_536);
    let body = execute(&source);
    assert!(body.len() <= max, "{}", body.len());
    assert!(body.len() > 6 * 65_536);
    let response = ask(&body);
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

#[test]
fn bodies_in_flight_share_a_budget_of_bytes() {
    let addr = serve_with(
        limits(10_000, 600, 10_000, 16),
        DrainOptions::default(),
        Some(1_000),
    );
    // A request of about 600 bytes holds them until its response (a
    // sleep of 1.5 s).
    let slow = execute(&format!(
        "def main():\n    pad = \"{}\"\n    return conformance.sleep(ms=1500)\n",
        "z".repeat(450)
    ));
    assert!(slow.len() > 500 && slow.len() < 1_000, "{}", slow.len());
    let mut first = connect(addr);
    first.write_all(post(&slow).as_bytes()).expect("write");
    std::thread::sleep(Duration::from_millis(200));
    // Another of 740 bytes cannot get its bytes within the body deadline.
    let body = execute(&format!(
        "def main():\n    return \"{}\"\n",
        "y".repeat(300)
    ));
    assert!(body.len() + slow.len() > 1_000, "{}", body.len());
    let mut second = connect(addr);
    second.write_all(post(&body).as_bytes()).expect("write");
    let (response, _) = read_to_close(&mut second);
    assert!(response.starts_with("HTTP/1.1 503"), "{response}");
    assert!(response.contains("retry-after: 1"), "{response}");
    // Once the first is answered, its bytes are free.
    let (done, _) = read_to_close(&mut first);
    assert!(done.starts_with("HTTP/1.1 200"), "{done}");
    let mut third = connect(addr);
    third.write_all(post(&body).as_bytes()).expect("write");
    let (response, _) = read_to_close(&mut third);
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

#[test]
fn responses_during_the_drain_delay_close_their_connection() {
    let drain = DrainOptions {
        delay: Duration::from_secs(30),
        ..DrainOptions::default()
    };
    let token = drain.token.clone();
    let addr = serve(ConnectionLimits::default(), drain);
    let mut stream = connect(addr);
    stream
        .write_all(get("/missing", false).as_bytes())
        .expect("write");
    let before = read_response(&mut stream);
    assert!(before.starts_with("HTTP/1.1 404"), "{before}");
    assert!(
        !before.to_ascii_lowercase().contains("connection: close"),
        "{before}"
    );
    // The drain starts; the listener still accepts for 30 s, but the next
    // response on this keep-alive connection tells the client to close it,
    // and the server closes it.
    token.cancel();
    stream
        .write_all(get("/missing", false).as_bytes())
        .expect("write");
    let (during, _) = read_to_close(&mut stream);
    assert!(during.starts_with("HTTP/1.1 404"), "{during}");
    assert!(
        during.to_ascii_lowercase().contains("connection: close"),
        "{during}"
    );
    // A new connection during the delay is served, once.
    let mut fresh = connect(addr);
    fresh
        .write_all(get("/missing", false).as_bytes())
        .expect("write");
    let (fresh, _) = read_to_close(&mut fresh);
    assert!(fresh.starts_with("HTTP/1.1 404"), "{fresh}");
    assert!(
        fresh.to_ascii_lowercase().contains("connection: close"),
        "{fresh}"
    );
}

#[test]
fn at_the_cap_the_idlest_keep_alive_connection_gives_up_its_slot() {
    let addr = serve(limits(10_000, 10_000, 30_000, 2), DrainOptions::default());
    let mut first = connect(addr);
    first
        .write_all(get("/missing", false).as_bytes())
        .expect("write");
    assert!(read_response(&mut first).starts_with("HTTP/1.1 404"));
    std::thread::sleep(Duration::from_millis(50));
    let mut second = connect(addr);
    second
        .write_all(get("/missing", false).as_bytes())
        .expect("write");
    assert!(read_response(&mut second).starts_with("HTTP/1.1 404"));
    // Both are idle, both slots taken: a newcomer is served at once, in
    // the slot of the first (idle for longest), which is closed.
    let started = Instant::now();
    let mut third = connect(addr);
    third
        .write_all(get("/missing", false).as_bytes())
        .expect("write");
    assert!(read_response(&mut third).starts_with("HTTP/1.1 404"));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let (rest, _) = read_to_close(&mut first);
    assert_eq!(rest, "");
    // The second is still open and served.
    second
        .write_all(get("/missing", false).as_bytes())
        .expect("write");
    assert!(read_response(&mut second).starts_with("HTTP/1.1 404"));
}

/// Reads until the server closes the connection or `limit` passes.
fn read_for(stream: &mut TcpStream, limit: Duration) -> String {
    stream.set_read_timeout(Some(limit)).expect("timeout");
    read_to_close(stream).0
}

#[test]
fn an_event_stream_is_not_cut_at_the_keep_alive_timeout() {
    // The idle timeout is 300 ms; the execution runs about 1.4 s and is
    // answered as an event stream (a progress token): a progress event
    // after 700 ms of silence, then the result. The keep-alive timeout
    // is for idle connections between requests, not for a response
    // still streaming.
    let addr = serve(limits(5000, 5000, 300, 64), DrainOptions::default());
    let program = "def main():\n    a = conformance.sleep(ms=700)\n    \
                   b = conformance.sleep(ms=700)\n    return a[\"slept\"] + b[\"slept\"]\n";
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "execute", "arguments": {"source": program},
                   "_meta": {"progressToken": "p"}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = connect(addr);
    let started = Instant::now();
    stream.write_all(request.as_bytes()).expect("write");
    // A keep-alive request: the connection stays open after the stream,
    // until the idle timeout closes it.
    let response = read_for(&mut stream, Duration::from_secs(10));
    let took = started.elapsed();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response
            .to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{response}"
    );
    let messages: Vec<serde_json::Value> = response
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_json::from_str(d.trim()).expect("JSON event"))
        .collect();
    assert_eq!(messages.len(), 3, "{response}");
    assert_eq!(
        messages[0]["method"], "notifications/progress",
        "{response}"
    );
    assert_eq!(messages[1]["params"]["progress"], 2.0, "{response}");
    assert_eq!(messages[2]["id"], 7, "{response}");
    assert_eq!(
        messages[2]["result"]["structuredContent"],
        serde_json::json!({"result": 1400}),
        "{response}"
    );
    // The stream ended with its last chunk, then the idle timeout ran.
    assert!(response.ends_with("0\r\n\r\n"), "{response:?}");
    assert!(
        took >= Duration::from_millis(1600) && took < Duration::from_secs(5),
        "{took:?}"
    );
}

#[test]
fn a_client_that_stops_reading_is_cut_after_the_idle_timeout() {
    // Forty pipelined executions answered as event streams of about
    // 1.8 MB each, and a client that reads nothing: the server's writes
    // stop making progress once the socket buffers are full, in the
    // middle of a stream, and after 500 ms without progress the
    // connection is closed, long before all were sent.
    let addr = serve(limits(5000, 5000, 500, 64), DrainOptions::default());
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "execute", "_meta": {"progressToken": 1},
                   "arguments": {"source": "def main():\n    conformance.sleep(ms=1)\n    return \"x\" * 900000\n"}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = connect(addr);
    stream
        .write_all(request.repeat(40).as_bytes())
        .expect("write");
    // Read nothing: the server must close the connection (its state
    // here leaves ESTABLISHED: a reset, or its FIN behind the data).
    let started = Instant::now();
    while tcp_state(&stream) == TCP_ESTABLISHED {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the connection is still open after 60 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // What arrived before is less than everything.
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    let (received, _) = read_to_close(&mut stream);
    let responses = received.matches("HTTP/1.1 200 OK").count();
    assert!(responses < 40, "{responses} responses were sent");
}

/// `TCP_ESTABLISHED` of `linux/tcp.h`.
const TCP_ESTABLISHED: u8 = 1;

/// The kernel's state of a TCP socket (`tcpi_state`, the first byte of
/// `struct tcp_info`).
fn tcp_state(stream: &TcpStream) -> u8 {
    use std::os::fd::AsRawFd;
    let mut info = [0u8; 256];
    let mut len = info.len() as libc::socklen_t;
    // SAFETY: the descriptor is the stream's, open for the borrow; the
    // kernel writes at most `len` bytes into `info` and the new length
    // into `len`, both live across the call.
    let done = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    assert_eq!(done, 0, "TCP_INFO");
    info[0]
}

/// Serves with a drain of `delay_ms` and a grace of 10 s; the drain token.
fn serve_draining(
    limits: ConnectionLimits,
    delay_ms: u64,
) -> (SocketAddr, tokio_util::sync::CancellationToken) {
    let drain = DrainOptions {
        delay: Duration::from_millis(delay_ms),
        grace: Duration::from_secs(10),
        ..DrainOptions::default()
    };
    let token = drain.token.clone();
    (serve(limits, drain), token)
}

#[test]
fn a_connection_whose_request_comes_after_the_drain_delay_is_served() {
    // A proxy opened the connection during the drain delay and sends its
    // request just as the delay ends: the request is served (and the
    // connection closed after it), not dropped unread.
    let (addr, token) = serve_draining(limits(2000, 5000, 30_000, 64), 300);
    token.cancel();
    let mut early = connect(addr);
    std::thread::sleep(Duration::from_millis(600));
    early
        .write_all(get("/missing", false).as_bytes())
        .expect("write");
    let (response, _) = read_to_close(&mut early);
    assert!(response.starts_with("HTTP/1.1 404"), "{response:?}");
    assert!(
        response.to_ascii_lowercase().contains("connection: close"),
        "{response}"
    );
    // The port is closed by then: a new connection is refused.
    assert!(TcpStream::connect_timeout(&addr, Duration::from_secs(3)).is_err());
}

#[test]
fn connections_the_kernel_completed_before_the_socket_closes_are_served() {
    // One slot and its 16 spare sockets held by connections that send
    // nothing (each waits for its head for 2 s): the next connection is
    // completed by the kernel but not accepted, and sends its request.
    // The drain delay ends meanwhile; closing the listening socket would
    // reset that connection, request and all. It is served.
    let (addr, token) = serve_draining(limits(2000, 5000, 30_000, 1), 200);
    let silent: Vec<TcpStream> = (0..17).map(|_| connect(addr)).collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut queued = connect(addr);
    queued
        .write_all(get("/missing", false).as_bytes())
        .expect("write");
    token.cancel();
    let (response, _) = read_to_close(&mut queued);
    assert!(response.starts_with("HTTP/1.1 404"), "{response:?}");
    assert!(
        response.to_ascii_lowercase().contains("connection: close"),
        "{response}"
    );
    drop(silent);
}
