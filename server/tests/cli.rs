//! The `codemode` binary's contract through the built binary: stdout,
//! stderr and exit codes of `run`, `search` and `describe`, catalogs from
//! flags, manifests and config files, limit flags and bad usage.

mod common;

use std::path::PathBuf;
use std::process::Output;

fn codemode(args: &[&str], stdin: &str) -> Output {
    common::run_codemode(args, stdin, &[])
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn first_stderr_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("codemode-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write temp file");
    path
}

const LOOKUP: &str = "def main():\n    return records.lookup(key=\"alpha\", limit=2)\n";

#[test]
fn run_a_program_file_and_stdin() {
    let path = temp_file("lookup.star", LOOKUP);
    let expected = "{\"result\":{\"records\":[{\"key\":\"alpha\",\"id\":\"rec-001\",\"label\":\"red\",\"active\":true,\"score\":2.5},{\"key\":\"alpha-beta\",\"id\":\"rec-002\",\"label\":\"blue\",\"active\":false,\"score\":1.0}]}}\n";
    let o = codemode(&["run", path.to_str().expect("utf-8 path")], "");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), expected);
    let o = codemode(&["run", "-"], LOOKUP);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), expected);
    assert!(o.stderr.is_empty());
}

#[test]
fn search_prints_compact_json() {
    let o = codemode(&["search", "look up record"], "");
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.starts_with("{\"results\":[{\"name\":\"records.lookup\",\"signature\":\"records.lookup(*, key: str, limit: int | None)\",\"summary\":\"Look up one record by key.\"}"), "{out}");
    assert!(out.ends_with("],\"truncated\":false}\n"), "{out}");
    assert_eq!(out.lines().count(), 1);
    let o = codemode(&["search", "  "], "");
    assert_eq!(stdout(&o), "{\"results\":[],\"truncated\":false}\n");
}

#[test]
fn describe_prints_the_exact_description() {
    let o = codemode(&["describe", "records.lookup"], "");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "{\"name\":\"records.lookup\",\"signature\":\"records.lookup(*, key: str, limit: int | None)\",\"summary\":\"Look up one record by key.\",\"description\":\"Returns the records of the built-in data set whose key starts with `key`, in key order, at most `limit` of them (default 10, 1 to 100).\",\"input\":[{\"name\":\"key\",\"type\":\"str\",\"required\":true},{\"name\":\"limit\",\"type\":\"int | None\",\"required\":false}],\"output\":[{\"name\":\"records\",\"type\":\"list[{key: str, id: str, label: str, active: bool, score: float}]\",\"required\":true}]}\n"
    );
    let o = codemode(&["describe", "records.nope"], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert_eq!(first_stderr_line(&o), "capability not found");
}

#[test]
fn tool_errors_exit_one_with_the_exact_text() {
    let o = codemode(&["run", "-"], "def main(:\n");
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert_eq!(
        first_stderr_line(&o),
        "invalid program: <codemode>:1:11: got ':', want ')'"
    );
    let o = codemode(
        &["run", "-"],
        "def main():\n    return shipping.quote(weight_grams=0)\n",
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        first_stderr_line(&o),
        "invalid capability arguments: weight_grams: must be at least 1"
    );
}

#[test]
fn conformance_failures_through_the_binary() {
    let run = |source: &str| {
        let o = codemode(&["run", "--catalog", "conformance", "-"], source);
        (o.status.code(), first_stderr_line(&o), o)
    };
    // The error is the first line of stderr; the original (the panic's
    // payload, the private detail) follows in the local log, with the
    // capability's ID and never on stdout.
    let logged_after = |o: &std::process::Output, needle: &str| {
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        stderr
            .lines()
            .skip(1)
            .any(|l| l.contains(needle) && l.contains("capability=conformance."))
            && !String::from_utf8_lossy(&o.stdout).contains(needle)
    };
    let (code, line, o) = run("def main():\n    return conformance.panic()\n");
    assert_eq!((code, line.as_str()), (Some(1), "capability failed"));
    assert!(logged_after(&o, "panic=conformance panic"));
    let (code, line, o) = run("def main():\n    return conformance.fail(public=False)\n");
    assert_eq!((code, line.as_str()), (Some(1), "capability failed"));
    assert!(logged_after(&o, "SECRET-HANDLER-DETAIL"));
    let (_, line, _) = run("def main():\n    return conformance.denied()\n");
    assert_eq!(line, "permission denied");
    let (_, line, _) = run("def main():\n    return conformance.policy_error()\n");
    assert_eq!(line, "authorization policy failure");
    // demo is not loaded when another catalog is named.
    let o = codemode(
        &["describe", "--catalog", "conformance", "records.lookup"],
        "",
    );
    assert_eq!(first_stderr_line(&o), "capability not found");
    let o = codemode(
        &[
            "describe",
            "--catalog",
            "conformance",
            "--catalog",
            "demo",
            "records.lookup",
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn limit_flags_apply() {
    let program =
        "def main():\n    t = 0\n    for i in range(1000):\n        t += i\n    return t\n";
    let o = codemode(&["run", "-"], program);
    assert_eq!(stdout(&o), "{\"result\":499500}\n");
    let o = codemode(&["run", "--max-steps", "100", "-"], program);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(first_stderr_line(&o), "resource limit exceeded");
    let o = codemode(
        &["run", "--max-native-calls", "1", "-"],
        "def main():\n    return [records.status(), records.status()]\n",
    );
    assert_eq!(first_stderr_line(&o), "resource limit exceeded");
}

#[test]
fn manifest_catalogs() {
    let manifest = temp_file(
        "manifest.json",
        r#"{"capabilities": [{"id": "tickets.open", "name": "tickets.open", "summary": "Open a support ticket.", "description": "Opens a ticket.", "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}, "extra": 1}]}"#,
    );
    let m = manifest.to_str().expect("utf-8 path");
    let o = codemode(&["search", "--catalog", m, "support ticket"], "");
    assert_eq!(
        stdout(&o),
        "{\"results\":[{\"name\":\"tickets.open\",\"signature\":\"tickets.open(*, title: str)\",\"summary\":\"Open a support ticket.\"}],\"truncated\":false}\n"
    );
    let o = codemode(
        &["run", "--catalog", m, "-"],
        "def main():\n    return tickets.open(title=\"x\")\n",
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(first_stderr_line(&o), "capability failed");
    let o = codemode(&["search", "--catalog", "/nonexistent/m.json", "x"], "");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn config_files() {
    let config = temp_file(
        "good.toml",
        "catalogs = [\"demo\", \"conformance\"]\ndisabled = [\"records.entry.lookup\"]\n[limits]\nmax_steps = 100\n",
    );
    let c = config.to_str().expect("utf-8 path");
    let o = codemode(&["describe", "--config", c, "records.lookup"], "");
    assert_eq!(first_stderr_line(&o), "capability not found");
    let o = codemode(&["describe", "--config", c, "conformance.echo"], "");
    assert_eq!(o.status.code(), Some(0));
    let program =
        "def main():\n    t = 0\n    for i in range(1000):\n        t += i\n    return t\n";
    let o = codemode(&["run", "--config", c, "-"], program);
    assert_eq!(first_stderr_line(&o), "resource limit exceeded");
    let o = codemode(
        &["run", "--config", c, "--max-steps", "100000", "-"],
        program,
    );
    assert_eq!(stdout(&o), "{\"result\":499500}\n");
    let bad = temp_file("bad.toml", "[limits]\nmax_stepz = 1\n");
    let o = codemode(
        &["search", "--config", bad.to_str().expect("utf-8 path"), "x"],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("max_stepz"));
}

#[test]
fn bad_usage_exits_two() {
    assert_eq!(
        codemode(&["run", "--bogus", "x"], "").status.code(),
        Some(2)
    );
    assert_eq!(codemode(&["search"], "").status.code(), Some(2));
    assert_eq!(codemode(&[], "").status.code(), Some(2));
    assert_eq!(
        codemode(&["run", "--max-steps", "many", "-"], "")
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        codemode(&["run", "/nonexistent/program.star"], "")
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        codemode(&["run", "--catalog", "nope", "-"], "")
            .status
            .code(),
        Some(2)
    );
    let help = codemode(&["run", "--help"], "");
    assert_eq!(help.status.code(), Some(0));
    let text = stdout(&help);
    for flag in [
        "--catalog",
        "--config",
        "--max-steps",
        "--max-time-ms",
        "--max-native-calls",
        "--max-value-depth",
        "--max-value-bytes",
        "--max-intermediate-bytes",
        "--max-heap-bytes",
    ] {
        assert!(text.contains(flag), "{flag}");
    }
}
