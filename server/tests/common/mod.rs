//! What the MCP tests share: the exact `tools/list` entries of the
//! specification (descriptions, input and output schemas), and
//! [`StdioServer`], `codemode serve` on stdio spoken to in raw JSON-RPC,
//! [`run_codemode`], one run of the binary, and [`http_server`], the HTTP
//! router on an ephemeral loopback port. Each test crate uses part of it.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Output, Stdio};

/// `codemode ARGS` with `stdin` written to its standard input and `env`
/// added to its environment (`RUST_LOG` removed, so that what it logs does
/// not depend on the caller's); its whole output.
pub fn run_codemode(args: &[&str], stdin: &str, env: &[(&str, &OsStr)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(args)
        .envs(env.iter().copied())
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn codemode");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write to codemode's stdin");
    child.wait_with_output().expect("codemode runs")
}

/// `codemode serve ARGS` on stdio, initialized, one JSON message per line;
/// killed when dropped.
pub struct StdioServer {
    child: Child,
    /// `None` once [`StdioServer::close_input`] closed it.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl StdioServer {
    /// Starts the server with `args` and extra environment `env`, and runs
    /// the initialize handshake (request id 1).
    pub fn start(args: &[&str], env: &[(&str, &OsStr)]) -> StdioServer {
        let mut command = Command::new(env!("CARGO_BIN_EXE_codemode"));
        command.arg("serve").args(args).env_remove("RUST_LOG");
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn codemode serve");
        let stdin = Some(child.stdin.take().expect("stdin"));
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut server = StdioServer {
            child,
            stdin,
            stdout,
        };
        let init = server.request(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}
            }),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(init["result"]["capabilities"], json!({"tools": {}}));
        assert_eq!(init["result"]["serverInfo"]["name"], "codemode");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    /// Writes one line as it is.
    #[allow(dead_code)]
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the server's input is open");
        writeln!(stdin, "{line}").expect("write");
        stdin.flush().expect("flush");
    }

    /// Closes the server's standard input: the client is gone, and the
    /// server shuts down.
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// The server's exit status, if it exits within `within`.
    pub fn exit_within(&mut self, within: std::time::Duration) -> Option<ExitStatus> {
        let until = std::time::Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() >= until {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Sends a request and returns the response with its `id`, skipping
    /// any other message.
    pub fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }

    /// The next message with `id`, skipping any other message.
    pub fn response(&mut self, id: i64) -> Value {
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "server closed stdout");
            let message: Value = serde_json::from_str(&line).expect("one JSON message per line");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The three tools exactly as `tools/list` must return them.
pub fn expected_tools() -> Value {
    let field = json!({
        "type": "object",
        "required": ["name", "type", "required"],
        "additionalProperties": false,
        "properties": {"name": {"type": "string"}, "type": {"type": "string"}, "required": {"type": "boolean"}}
    });
    let input = |p: &str| json!({"type": "object", "required": [p], "additionalProperties": false, "properties": {p: {"type": "string"}}});
    json!([
        {
            "name": "search_api",
            "description": "Search enabled capabilities using task, resource, or exact-name vocabulary. Results are relevance-ranked. Pass the exact returned name to describe_api. If truncated is true and no result fits, submit a more specific task/resource query.",
            "inputSchema": input("query"),
            "outputSchema": {
                "type": "object",
                "required": ["results", "truncated"],
                "additionalProperties": false,
                "properties": {
                    "results": {"type": "array", "items": {
                        "type": "object",
                        "required": ["name", "signature", "summary"],
                        "additionalProperties": false,
                        "properties": {"name": {"type": "string"}, "signature": {"type": "string"}, "summary": {"type": "string"}}
                    }},
                    "truncated": {"type": "boolean"}
                }
            }
        },
        {
            "name": "describe_api",
            "description": "Describe one enabled capability by the exact name returned by search_api, without whitespace or case changes.",
            "inputSchema": input("name"),
            "outputSchema": {
                "type": "object",
                "required": ["name", "signature", "summary", "description", "input", "output"],
                "additionalProperties": false,
                "properties": {
                    "name": {"type": "string"},
                    "signature": {"type": "string"},
                    "summary": {"type": "string"},
                    "description": {"type": "string"},
                    "input": {"type": "array", "items": field.clone()},
                    "output": {"type": "array", "items": field}
                }
            }
        },
        {
            "name": "execute",
            "description": "Execute one Starlark program that defines def main(): with zero arguments, calls only names confirmed through search_api and describe_api inside main, and returns main's final result. Standard Starlark builtins plus sum(iterable), json.decode/encode/indent, and math.* are directly available without import. import, while, f-strings, filter, and map are unavailable; load is disabled; print is discarded.",
            "inputSchema": input("source"),
            "outputSchema": {"type": "object", "required": ["result"], "additionalProperties": false, "properties": {"result": {}}}
        }
    ])
}

/// Serves `sources` with `config` over HTTP (the router with default
/// options) on an ephemeral loopback port.
pub async fn http_server(
    sources: &[&str],
    config: codemode_catalog::Config,
) -> std::net::SocketAddr {
    let sources: Vec<String> = sources.iter().map(|s| s.to_string()).collect();
    let service = codemode_server::load_catalogs(&sources, &[], config).expect("catalogs load");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let app = codemode_server::router(service, &Default::default());
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}
