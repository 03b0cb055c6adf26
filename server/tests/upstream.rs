//! Code mode over upstream MCP servers, through the built binary and the
//! fixture server (`tests/fixture/upstream.rs`), over stdio and over
//! Streamable HTTP: import (pagination, snake-case names, collisions),
//! describe's shapes (`any`, the `{text: str}` result), search, calls,
//! argument names made identifiers (`max-count` as `max_count`),
//! upstream tool errors, malformed results, flood bounds, cancellation
//! reaching the upstream, disabling and policies on `upstream.…` IDs, an
//! unavailable upstream, and — on a long-running `serve` — restart after a
//! crash and a tool list change.

mod common;

use serde_json::{json, Value};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CODEMODE: &str = env!("CARGO_BIN_EXE_codemode");
const FIXTURE: &str = env!("CARGO_BIN_EXE_codemode-upstream-fixture");

fn fx() -> String {
    format!("fx={FIXTURE}")
}

/// A fresh scratch directory under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("upstream-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Output {
    fn json(&self) -> Value {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        serde_json::from_str(self.stdout.trim()).expect("one line of JSON")
    }

    fn error(&self) -> &str {
        assert_eq!(self.code, Some(1), "stdout: {}", self.stdout);
        self.stderr.lines().next().unwrap_or("")
    }

    /// The error text, before the warnings about an unavailable upstream.
    fn error_before_warnings(&self) -> &str {
        assert_eq!(self.code, Some(1), "stdout: {}", self.stdout);
        // One-shot commands hold their log lines back until the outcome
        // is printed: the error is the first line, warnings follow.
        self.stderr.lines().next().unwrap_or("")
    }
}

fn codemode(args: &[&str], stdin: &str, envs: &[(&str, &Path)]) -> Output {
    let envs: Vec<(&str, &OsStr)> = envs.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
    let out = common::run_codemode(args, stdin, &envs);
    Output {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn run(upstream: &str, program: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", "--upstream", upstream];
    args.extend_from_slice(extra);
    args.push("-");
    codemode(&args, program, &[])
}

fn wait_for(what: &str, timeout: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn log_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn tools_are_imported_with_their_shapes() {
    let out = codemode(&["describe", "--upstream", &fx(), "fx.add"], "", &[]);
    assert_eq!(
        out.json(),
        json!({
            "name": "fx.add",
            "signature": "fx.add(*, a: int, b: int)",
            "summary": "Add two integers.",
            "description": "Add two integers. Returns their sum.",
            "input": [
                {"name": "a", "type": "int", "required": true},
                {"name": "b", "type": "int", "required": true}
            ],
            "output": [{"name": "sum", "type": "int", "required": true}]
        })
    );
    // Free-form and inexpressible schemas are `any`.
    let out = codemode(&["describe", "--upstream", &fx(), "fx.get_item"], "", &[]);
    assert_eq!(
        out.json()["output"],
        json!([
            {"name": "id", "type": "str", "required": true},
            {"name": "tags", "type": "list[str]", "required": true},
            {"name": "meta", "type": "any", "required": true},
            {"name": "weight", "type": "float", "required": false}
        ])
    );
    let out = codemode(&["describe", "--upstream", &fx(), "fx.union"], "", &[]);
    assert_eq!(
        out.json()["signature"],
        "fx.union(*, value: any, pairs: any | None)"
    );
    // Without an output schema: `{text: str, json: any | None}`, and
    // describe says so.
    let d = codemode(&["describe", "--upstream", &fx(), "fx.echo_text"], "", &[]).json();
    // `max-count` is an identifier argument, forwarded under its name.
    assert_eq!(
        d["signature"],
        "fx.echo_text(*, message: str, max_count: int | None)"
    );
    assert_eq!(
        d["output"],
        json!([
            {"name": "text", "type": "str", "required": true},
            {"name": "json", "type": "any | None", "required": true}
        ])
    );
    assert_eq!(
        d["description"],
        "Echo a message back as text. The result has two text items.\n\nReturns {text: str, \
         json: any | None}: the tool declares no output schema, so text is its text content \
         joined with newlines, and json is that text decoded when it is one JSON document \
         (else None)."
    );
    // The last page of the paginated list was read too, and the colliding
    // names resolved: the exact identifier keeps it.
    for name in ["fx.huge", "fx.get_item_2", "fx.add_tool", "fx.bad_output"] {
        let out = codemode(&["describe", "--upstream", &fx(), name], "", &[]);
        assert_eq!(out.code, Some(0), "{name}: {}", out.stderr);
    }
    let d = codemode(&["describe", "--upstream", &fx(), "fx.get_item_2"], "", &[]).json();
    assert_eq!(d["summary"], "Get one inventory item by id (legacy name).");
}

#[test]
fn search_finds_upstream_tools() {
    let out = codemode(&["search", "--upstream", &fx(), "inventory item"], "", &[]).json();
    let names: Vec<&str> = out["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    let mut names = names;
    names.sort();
    assert_eq!(names, ["fx.get_item", "fx.get_item_2"], "{out}");
    // The original tool name is search vocabulary.
    let out = codemode(&["search", "--upstream", &fx(), "echoText"], "", &[]).json();
    assert_eq!(out["results"][0]["name"], "fx.echo_text");
}

#[test]
fn calls_are_forwarded_and_composed() {
    let program = r#"
def main():
    total = 0
    for i in range(5):
        total = fx.add(a=total, b=i)["sum"]
    item = fx.get_item(id="k1")
    echoed = fx.echo_text(message="hi")
    return {
        "total": total,
        "item": item,
        "echo": echoed["text"].split("\n"),
        "legacy": fx.get_item_2(id="k1")["text"],
        "any": [fx.union(value=5)["text"], fx.union(value="s")["text"]],
        "renamed": fx.echo_text(message="x", max_count=2)["text"],
        "decoded": [echoed["json"], fx.union(value=5)["json"], fx.union(value="s")["json"]],
    }
"#;
    let out = run(&fx(), program, &[]).json();
    assert_eq!(
        out,
        json!({"result": {
            "total": 10,
            // Keys the output schema does not name are dropped; an int
            // where a float is declared is a float.
            "item": {"id": "k1", "tags": ["a", "b"], "meta": {"owner": "ops", "n": [1, 2]}, "weight": 2.0},
            "echo": ["echo", "hi"],
            "legacy": "legacy",
            "any": ["5", "\"s\""],
            "renamed": "echo\nx\nx",
            "decoded": [null, 5, "s"]
        }})
    );
}

#[test]
fn text_results_carry_their_json() {
    let program = r#"
def main():
    listing = fx.json_text(text='{"entries": [{"name": "a.txt", "size": 3}], "truncated": false}\n')
    out = {"names": [e["name"] for e in listing["json"]["entries"]]}
    for text in ["plain words", "[1, 2] [3]", "18446744073709551615", "[[[[1]]]]"]:
        out[text] = fx.json_text(text=text)["json"]
    return out
"#;
    let out = run(&fx(), program, &[]).json();
    assert_eq!(
        out,
        json!({"result": {
            "names": ["a.txt"],
            "plain words": null,
            "[1, 2] [3]": null,
            // Beyond the signed 64-bit range: the text only.
            "18446744073709551615": null,
            "[[[[1]]]]": [[[[1]]]]
        }})
    );
    // The value budgets bound `json`: beyond the depth or the size the call
    // still returns its text.
    let program = r#"
def main():
    deep = fx.json_text(text="[[[[1]]]]")
    wide = fx.json_text(text="[" + ",".join(["1"] * 30) + "]")
    return [deep["json"], len(deep["text"]), wide["json"], len(wide["text"])]
"#;
    let out = run(
        &fx(),
        program,
        &["--max-value-depth", "5", "--max-value-bytes", "100"],
    )
    .json();
    assert_eq!(out, json!({"result": [null, 9, null, 61]}));
}

#[test]
fn upstream_failures_have_the_contract_texts() {
    let out = run(
        &fx(),
        "def main():\n    return fx.fail(reason=\"no such file\")\n",
        &[],
    );
    assert_eq!(out.error(), "capability failed: no such file");
    // Upstream error texts are cut at 256 bytes.
    let long = "é".repeat(200);
    let out = run(
        &fx(),
        &format!("def main():\n    return fx.fail(reason=\"{long}\")\n"),
        &[],
    );
    assert_eq!(
        out.error(),
        format!("capability failed: {}", "é".repeat(128))
    );
    // A result that does not fit the output schema: no detail.
    let out = run(&fx(), "def main():\n    return fx.bad_output()\n", &[]);
    assert_eq!(out.error(), "capability failed");
    // Binding happens before anything is forwarded.
    let out = run(&fx(), "def main():\n    return fx.add(a=\"x\", b=1)\n", &[]);
    assert_eq!(
        out.error(),
        "invalid capability arguments: a: want int, got str"
    );
    let out = run(&fx(), "def main():\n    return fx.add(a=1)\n", &[]);
    assert_eq!(
        out.error(),
        "invalid capability arguments: b: missing required argument"
    );
    // A flood is bounded like any result.
    let out = run(&fx(), "def main():\n    return fx.huge(n=2000000)\n", &[]);
    assert_eq!(out.error(), "resource limit exceeded");
    let out = run(
        &fx(),
        "def main():\n    return len(fx.huge(n=1000)[\"text\"])\n",
        &["--max-intermediate-bytes", "500"],
    );
    assert_eq!(out.error(), "resource limit exceeded");
    // A crash mid-call is a transport failure (and the log may say that
    // the server stopped before the error line).
    let out = run(&fx(), "def main():\n    fx.crash()\n    return 1\n", &[]);
    assert_eq!(out.error_before_warnings(), "capability failed");
}

#[test]
fn cancellation_reaches_the_upstream() {
    // On a long-running server, so that the notification is not raced by
    // the end of the process.
    let dir = scratch("cancel");
    let log = dir.join("events");
    let config = fx_config(&dir, &["FIXTURE_LOG"]);
    let config = config.to_str().expect("utf-8");
    let mut server = Server::start(&["--config", config, "--max-time-ms", "400"], &log);
    let started = Instant::now();
    assert_eq!(
        server.execute("def main():\n    return fx.slow(ms=20000)\n"),
        Err("resource limit exceeded".to_string())
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    wait_for(
        "notifications/cancelled upstream",
        Duration::from_secs(5),
        || log_lines(&log).contains(&"cancelled slow".to_string()),
    );
    // The upstream connection is still usable.
    assert_eq!(
        server.execute("def main():\n    return fx.add(a=1, b=1)[\"sum\"]\n"),
        Ok(json!(2))
    );
}

#[test]
fn an_unavailable_upstream_does_not_stop_the_others() {
    let program = "def main():\n    return fx.add(a=1, b=2)\n";
    let out = codemode(
        &[
            "run",
            "--upstream",
            "gone=/nonexistent/mcp-server --stdio",
            "--upstream",
            &fx(),
            "-",
        ],
        program,
        &[],
    );
    assert_eq!(out.json(), json!({"result": {"sum": 3}}));
    let out = codemode(
        &[
            "describe",
            "--upstream",
            "gone=/nonexistent/mcp-server",
            "gone.x",
        ],
        "",
        &[],
    );
    assert_eq!(out.error_before_warnings(), "capability not found");
    // The log says why it is missing.
    let logged = Command::new(CODEMODE)
        .args(["search", "--upstream", "gone=/nonexistent/mcp-server", "x"])
        .env("RUST_LOG", "warn")
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&logged.stderr);
    assert!(
        stderr.contains("upstream=gone") && stderr.contains("cannot start /nonexistent/mcp-server"),
        "{stderr}"
    );
}

/// A config file in `dir` with the fixture as upstream `fx`, whose `env`
/// passes each of `vars` on from codemode's environment as `${VAR}` (a
/// child inherits no other variable).
fn fx_config(dir: &Path, vars: &[&str]) -> PathBuf {
    let env: Vec<String> = vars.iter().map(|v| format!("{v} = \"${{{v}}}\"")).collect();
    let path = dir.join("fx.toml");
    std::fs::write(
        &path,
        format!(
            "[[upstream]]\nname = \"fx\"\ncommand = [{FIXTURE:?}]\nenv = {{ {} }}\n",
            env.join(", ")
        ),
    )
    .expect("write");
    path
}

#[test]
fn a_child_gets_a_minimal_environment_and_its_expanded_env() {
    let dir = scratch("environment");
    let dump = dir.join("env");
    let config = dir.join("codemode.toml");
    std::fs::write(
        &config,
        format!(
            "[[upstream]]\nname = \"fx\"\ncommand = [{FIXTURE:?}]\n\
             env = {{ FIXTURE_ENV_DUMP = {:?}, API_TOKEN = \"Bearer ${{CODEMODE_TEST_TOKEN}}\", PLAIN = \"1\" }}\n",
            dump.to_str().expect("utf-8")
        ),
    )
    .expect("write");
    let out = Command::new(CODEMODE)
        .args(["describe", "--config"])
        .arg(&config)
        .arg("fx.add")
        .env("AWS_SECRET_ACCESS_KEY", "parent-secret")
        .env("CODEMODE_TEST_TOKEN", "t0ken")
        .env("LC_TIME", "C")
        .env_remove("RUST_LOG")
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let env = std::fs::read_to_string(&dump).expect("the child dumped its environment");
    let mut names: Vec<&str> = env
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k)
        .collect();
    names.sort_unstable();
    assert!(!env.contains("parent-secret"), "{env}");
    assert!(!names.contains(&"CODEMODE_TEST_TOKEN"), "{env}");
    assert!(env.lines().any(|l| l == "API_TOKEN=Bearer t0ken"), "{env}");
    assert!(env.lines().any(|l| l == "PLAIN=1"), "{env}");
    assert!(env.lines().any(|l| l == "LC_TIME=C"), "{env}");
    let allowed = |n: &str| {
        [
            "PATH",
            "HOME",
            "TZ",
            "LANG",
            "LANGUAGE",
            "FIXTURE_ENV_DUMP",
            "API_TOKEN",
            "PLAIN",
        ]
        .contains(&n)
            || n.starts_with("LC_")
    };
    assert!(names.iter().all(|n| allowed(n)), "{names:?}");
    if std::env::var_os("PATH").is_some() {
        assert!(names.contains(&"PATH"), "{names:?}");
    }
    // A variable the table reads but codemode's environment lacks is a
    // start-up error naming it.
    std::fs::write(
        &config,
        format!("[[upstream]]\nname = \"fx\"\ncommand = [{FIXTURE:?}]\nenv = {{ X = \"${{CODEMODE_TEST_UNSET}}\" }}\n"),
    )
    .expect("write");
    let out = Command::new(CODEMODE)
        .args(["describe", "--config"])
        .arg(&config)
        .arg("fx.add")
        .env_remove("CODEMODE_TEST_UNSET")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("upstream \"fx\": environment variable CODEMODE_TEST_UNSET is not set"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tool_list_floods_are_cut() {
    let dir = scratch("flood");
    let config = fx_config(
        &dir,
        &["FIXTURE_EXTRA_TOOLS", "FIXTURE_PAGE", "FIXTURE_LOG"],
    );
    let describe = |name: &str, extra: &str, page: &str| {
        let out = Command::new(CODEMODE)
            .args(["describe", "--config"])
            .arg(&config)
            .arg(name)
            .env("FIXTURE_EXTRA_TOOLS", extra)
            .env("FIXTURE_PAGE", page)
            .env("FIXTURE_LOG", dir.join("events"))
            .env_remove("RUST_LOG")
            .output()
            .expect("run");
        out.status.code()
    };
    // 12 tools, then extras: at most 1000 tools are imported.
    assert_eq!(describe("fx.extra_987", "1500", "100"), Some(0));
    assert_eq!(describe("fx.extra_988", "1500", "100"), Some(1));
    // At most 64 pages are read.
    assert_eq!(describe("fx.extra_51", "100", "1"), Some(0));
    assert_eq!(describe("fx.extra_52", "100", "1"), Some(1));
}

#[test]
fn bad_upstream_flags_are_usage_errors() {
    for flag in ["fx", "json=x", "a.b=x", "fx=", "fx=http://", "fx=https://"] {
        let out = codemode(&["search", "--upstream", flag, "x"], "", &[]);
        assert_eq!(out.code, Some(2), "{flag}: {}", out.stderr);
    }
    // A name that is already a native root.
    let out = codemode(
        &[
            "search",
            "--catalog",
            "demo",
            "--upstream",
            "records=x",
            "x",
        ],
        "",
        &[],
    );
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("records.lookup"), "{}", out.stderr);
}

#[test]
fn config_tables_disabling_and_policies_apply() {
    let dir = scratch("config");
    let policy = dir.join("policy.rego");
    std::fs::write(
        &policy,
        "package codemode\nimport rego.v1\ndefault allow := false\n\
         allow if input.capability.id != \"upstream.fx.add\"\n",
    )
    .expect("policy");
    let config = dir.join("codemode.toml");
    std::fs::write(
        &config,
        format!(
            "disabled = [\"upstream.fx.crash\"]\n\n[policy]\nfile = \"policy.rego\"\n\n\
             [[upstream]]\nname = \"fx\"\ncommand = [{FIXTURE:?}]\nenv = {{ FIXTURE_LOG = {:?} }}\ncwd = {:?}\n",
            dir.join("events").display().to_string(),
            dir.display().to_string(),
        ),
    )
    .expect("config");
    let config = config.display().to_string();
    let out = codemode(&["describe", "--config", &config, "fx.crash"], "", &[]);
    assert_eq!(out.error(), "capability not found");
    let out = codemode(
        &["run", "--config", &config, "-"],
        "def main():\n    return fx.add(a=1, b=2)\n",
        &[],
    );
    assert_eq!(out.error(), "permission denied");
    let out = codemode(
        &["run", "--config", &config, "-"],
        "def main():\n    return fx.echo_text(message=\"ok\")[\"text\"]\n",
        &[],
    );
    assert_eq!(out.json(), json!({"result": "echo\nok"}));
    // The env table reached the child.
    assert!(log_lines(&dir.join("events")).contains(&"started".to_string()));
}

#[test]
fn the_example_config_upstreams_are_valid() {
    // codemode.example.toml documents [[upstream]] tables commented out
    // (they name programs a test machine need not have); uncommented they
    // must load.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../codemode.example.toml"),
    )
    .expect("example");
    let start = text.find("# [[upstream]]").expect("an upstream example");
    let block: String = text[start..]
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').strip_prefix(' ').unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let file = codemode_server::FileConfig::from_toml(&block).expect("valid tables");
    let names: Vec<&str> = file.upstream.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["fs", "time", "tracker"]);
    for u in &file.upstream {
        u.validate(&codemode_server::process_env)
            .expect("a valid upstream");
    }
}

#[test]
fn the_readme_upstream_config_is_valid() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .expect("README");
    let section = &readme[readme
        .find("## Code mode over your existing MCP servers")
        .expect("the upstream section")..];
    let from = section.find("```toml\n").expect("a config") + "```toml\n".len();
    let toml = &section[from..from + section[from..].find("```").expect("end")];
    let file = codemode_server::FileConfig::from_toml(toml).expect("valid config");
    let names: Vec<&str> = file.upstream.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["fs", "git", "time", "tracker"]);
    for u in &file.upstream {
        u.validate(&codemode_server::process_env)
            .expect("a valid upstream");
    }
}

/// `codemode serve` over stdio (the shared harness), with the fixture's
/// log path in its environment and request ids counted from 2.
struct Server {
    inner: common::StdioServer,
    next_id: i64,
}

impl Server {
    fn start(args: &[&str], log: &Path) -> Server {
        Server {
            inner: common::StdioServer::start(args, &[("FIXTURE_LOG", log.as_os_str())]),
            next_id: 2,
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.inner.request(id, method, params)
    }

    /// The tool result: `Ok(structuredContent)` or `Err(error text)`.
    fn tool(&mut self, tool: &str, property: &str, value: &str) -> Result<Value, String> {
        let r = self.request(
            "tools/call",
            json!({"name": tool, "arguments": {property: value}}),
        );
        let result = &r["result"];
        if result["isError"] == json!(true) {
            Err(result["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_string())
        } else {
            Ok(result["structuredContent"].clone())
        }
    }

    fn execute(&mut self, source: &str) -> Result<Value, String> {
        self.tool("execute", "source", source)
            .map(|v| v["result"].clone())
    }
}

#[test]
fn a_crashed_upstream_is_restarted_and_tool_changes_are_imported() {
    let dir = scratch("serve");
    let log = dir.join("events");
    let config = fx_config(&dir, &["FIXTURE_LOG"]);
    let mut server = Server::start(&["--config", config.to_str().expect("utf-8")], &log);
    let add = "def main():\n    return fx.add(a=20, b=22)[\"sum\"]\n";
    assert_eq!(server.execute(add), Ok(json!(42)));
    assert_eq!(
        server.execute("def main():\n    fx.crash()\n    return 1\n"),
        Err("capability failed".to_string())
    );
    // While down, calls fail; the supervisor restarts it with backoff.
    wait_for("the restarted upstream", Duration::from_secs(10), || {
        server.execute(add) == Ok(json!(42))
    });
    let starts = log_lines(&log).iter().filter(|l| *l == "started").count();
    assert_eq!(starts, 2);
    // A tool list change rebuilds the catalog.
    let late = "def main():\n    return fx.late()[\"text\"]\n";
    assert!(server.execute(late).is_err_and(|e| e.contains("fx")));
    assert_eq!(
        server.execute("def main():\n    return fx.add_tool()[\"text\"]\n"),
        Ok(json!("added"))
    );
    wait_for("the changed tool list", Duration::from_secs(10), || {
        server.execute(late) == Ok(json!("late"))
    });
    let found = server.tool("search_api", "query", "added while running");
    assert_eq!(found.expect("search")["results"][0]["name"], "fx.late");
    // Shutdown stops the child: closing our stdin ends the server.
    drop(server);
}

/// `codemode serve` over stdio with the fixture as upstream `fx`, its
/// events logged to a file in a scratch folder `name`, and `var` set to
/// `value` in the fixture's environment; the server and the log's path.
fn fx_server(name: &str, var: &str, value: &str) -> (Server, PathBuf) {
    let dir = scratch(name);
    let log = dir.join("events");
    let config = fx_config(&dir, &["FIXTURE_LOG", var]);
    let server = Server {
        inner: common::StdioServer::start(
            &["--config", config.to_str().expect("utf-8")],
            &[("FIXTURE_LOG", log.as_os_str()), (var, OsStr::new(value))],
        ),
        next_id: 2,
    };
    (server, log)
}

#[test]
fn a_flood_of_tool_list_changes_is_debounced_and_the_last_one_counts() {
    let (mut server, log) = fx_server("list-changed-flood", "FIXTURE_FLOOD_MS", "2000");
    let listed = || log_lines(&log).iter().filter(|l| *l == "listed").count();
    let before = listed();
    assert!(before >= 1);
    let late = "def main():\n    return fx.late()[\"text\"]\n";
    let started = Instant::now();
    assert_eq!(
        server.execute("def main():\n    return fx.add_tool()[\"text\"]\n"),
        Ok(json!("added"))
    );
    // About 2,000 announcements in 2 s; the tool comes with the last one.
    wait_for("the last change", Duration::from_secs(10), || {
        server.execute(late) == Ok(json!("late"))
    });
    assert!(started.elapsed() >= Duration::from_secs(2));
    std::thread::sleep(Duration::from_millis(600));
    let relists = listed() - before;
    let bound = started.elapsed().as_millis() / 500 + 2;
    assert!(
        (1..=bound as usize).contains(&relists),
        "{relists} listings in {:?}",
        started.elapsed()
    );
}

/// A shutdown that comes while a changed tool list is being read does not
/// wait for the listing (up to the 30 s connect timeout, or the 10 s the
/// shutdown gives each upstream's task): the connection is closed and the
/// child ended at once.
#[test]
fn a_shutdown_during_a_stalled_listing_closes_the_upstream_at_once() {
    let (mut server, log) = fx_server("stalled-listing", "FIXTURE_STALL_RELIST", "1");
    assert_eq!(
        server.execute("def main():\n    return fx.add_tool()[\"text\"]\n"),
        Ok(json!("added"))
    );
    let mut stalled = None;
    wait_for("the stalled listing", Duration::from_secs(10), || {
        stalled = log_lines(&log)
            .iter()
            .find_map(|l| l.strip_prefix("stalled ").map(str::to_string));
        stalled.is_some()
    });
    let pid = stalled.expect("logged");
    let started = Instant::now();
    server.inner.close_input();
    let status = server.inner.exit_within(Duration::from_secs(20));
    let took = started.elapsed();
    assert!(
        status.is_some_and(|s| s.success()),
        "{status:?} after {took:?}"
    );
    assert!(took < Duration::from_secs(4), "shut down in {took:?}");
    // The child was ended (gone, or a zombie until it is reaped).
    wait_for(
        "the child's end",
        Duration::from_secs(5),
        || match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
        },
    );
}

/// The fixture on Streamable HTTP, killed on drop.
struct HttpFixture {
    child: Child,
    url: String,
}

impl HttpFixture {
    fn start(log: &Path) -> HttpFixture {
        let mut child = Command::new(FIXTURE)
            .args(["--http", "127.0.0.1:0"])
            .env("FIXTURE_LOG", log)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn fixture");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the listening line");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .expect("listening on URL")
            .to_string();
        HttpFixture { child, url }
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn upstreams_over_streamable_http() {
    let dir = scratch("http");
    let log = dir.join("events");
    let fixture = HttpFixture::start(&log);
    let upstream = format!("fx={}", fixture.url);
    let d = codemode(
        &["describe", "--upstream", &upstream, "fx.get_item"],
        "",
        &[],
    )
    .json();
    assert_eq!(d["signature"], "fx.get_item(*, id: str)");
    let program = "def main():\n    return [fx.add(a=1, b=2)[\"sum\"], fx.echo_text(message=\"m\")[\"text\"]]\n";
    assert_eq!(
        run(&upstream, program, &[]).json(),
        json!({"result": [3, "echo\nm"]})
    );
    let out = run(
        &upstream,
        "def main():\n    return fx.fail(reason=\"nope\")\n",
        &[],
    );
    assert_eq!(out.error(), "capability failed: nope");
    let mut server = Server::start(&["--upstream", &upstream, "--max-time-ms", "400"], &log);
    assert_eq!(
        server.execute("def main():\n    return fx.slow(ms=20000)\n"),
        Err("resource limit exceeded".to_string())
    );
    wait_for(
        "notifications/cancelled over HTTP",
        Duration::from_secs(5),
        || log_lines(&log).contains(&"cancelled slow".to_string()),
    );
    drop(server);
    drop(fixture);
    // The endpoint is gone: the server still starts, without its tools.
    let out = codemode(&["describe", "--upstream", &upstream, "fx.add"], "", &[]);
    assert_eq!(out.error_before_warnings(), "capability not found");
}
