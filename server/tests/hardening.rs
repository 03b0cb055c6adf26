//! Start-up refusals and log caps of the built binary: tokens with
//! imported tools need a `[policy]`, and no `RUST_LOG` directive makes rmcp
//! log program source.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

const FIXTURE: &str = env!("CARGO_BIN_EXE_codemode-upstream-fixture");

fn temp_config(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("codemode-hardening-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

fn config_with(policy: &str) -> String {
    format!(
        "{policy}[[http.tokens]]\nsubject = \"alice\"\nsha256 = \"{}\"\n\
         [[upstream]]\nname = \"fx\"\ncommand = [{FIXTURE:?}]\n",
        codemode_server::token_digest_hex("a real secret")
    )
}

#[test]
fn tokens_with_imported_tools_need_a_policy_at_start() {
    let refused = temp_config("refused.toml", &config_with(""));
    let out = Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&refused)
        .env_remove("RUST_LOG")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[[http.tokens]] authenticate subjects and [[upstream]] import tools")
            && stderr.contains("[policy] allow_all = true"),
        "{stderr}"
    );
    // With the explicit choice it serves.
    let allowed = temp_config("allowed.toml", &config_with("[policy]\nallow_all = true\n"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&allowed)
        .env_remove("RUST_LOG")
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut line)
        .expect("read");
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        line.starts_with("codemode: listening on http://127.0.0.1:"),
        "{line}"
    );
}

#[test]
fn no_directive_makes_rmcp_log_program_source() {
    let marker = "secret_marker_4711";
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "execute", "arguments": {"source": format!("def main():\n    return \"{marker}\"\n")}}}),
    ];
    for directives in ["info,rmcp::service=debug", "trace", "info,rmcp=trace"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_codemode"))
            .arg("serve")
            .env("RUST_LOG", directives)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut lines = Vec::new();
        for message in &messages {
            writeln!(stdin, "{message}").expect("write");
            if message.get("id").is_some() {
                let mut line = String::new();
                stdout.read_line(&mut line).expect("read");
                lines.push(line);
            }
        }
        drop(stdin);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr)
            .expect("read stderr");
        let _ = child.wait();
        assert!(lines[1].contains(marker), "the call ran: {}", lines[1]);
        assert!(
            stderr.contains("tool call finished"),
            "{directives}: the log is on: {stderr}"
        );
        assert!(
            !stderr.contains(marker),
            "{directives}: source logged: {stderr}"
        );
    }
}
