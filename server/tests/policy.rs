//! The configured Rego policy (`[policy]` in the config file) through the
//! built binary: it rules on every capability call on top of the catalogs'
//! own policies, its path is relative to the config file, a denial is
//! `permission denied` and an evaluation failure `authorization policy
//! failure`, and a missing or broken policy file is a start-up error that
//! names the file.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Denies shipping quotes above 1000 grams; allows everything else.
const POLICY: &str = r#"package codemode

import rego.v1

default allow := false

allow if input.capability.id != "shipping.quote"

allow if {
    input.capability.id == "shipping.quote"
    input.arguments.weight_grams <= 1000
}
"#;

/// A fresh directory holding `files` (name, contents).
fn scratch(test: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("codemode-policy-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (name, contents) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, contents).expect("write");
    }
    dir
}

fn run(config: &Path, program: &str) -> Output {
    let config = config.to_str().expect("a UTF-8 path");
    common::run_codemode(&["run", "--config", config, "-"], program, &[])
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn quote(grams: u32) -> String {
    format!("def main():\n    return shipping.quote(weight_grams={grams})\n")
}

/// A capability the policy does not rule on is still allowed.
fn assert_records_still_allowed(config: &Path) {
    let other = run(
        config,
        "def main():\n    return records.status()[\"count\"] > 0\n",
    );
    assert_eq!(stdout(&other), "{\"result\":true}\n", "{}", stderr(&other));
}

#[test]
fn the_policy_rules_on_every_capability_call() {
    // The policy sits in a subdirectory, named relative to the config.
    let dir = scratch(
        "rules",
        &[
            ("policies/shipping.rego", POLICY),
            (
                "codemode.toml",
                "catalogs = [\"demo\"]\n[policy]\nfile = \"policies/shipping.rego\"\nrule = \"data.codemode.allow\"\n",
            ),
        ],
    );
    let config = dir.join("codemode.toml");
    let allowed = run(&config, &quote(1000));
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    assert_eq!(stdout(&allowed), "{\"result\":{\"price_cents\":500}}\n");

    let denied = run(&config, &quote(1200));
    assert_eq!(denied.status.code(), Some(1));
    assert_eq!(stderr(&denied), "permission denied\n");
    assert_eq!(stdout(&denied), "");

    // Other capabilities are still allowed.
    assert_records_still_allowed(&config);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_policy_adds_to_the_catalogs_own() {
    // Allowing everything does not lift the conformance catalog's denial.
    let dir = scratch(
        "adds",
        &[
            (
                "all.rego",
                "package codemode\n\nimport rego.v1\n\nallow := true\n",
            ),
            (
                "codemode.toml",
                "catalogs = [\"conformance\"]\n[policy]\nfile = \"all.rego\"\n",
            ),
        ],
    );
    let config = dir.join("codemode.toml");
    let denied = run(&config, "def main():\n    return conformance.denied()\n");
    assert_eq!(stderr(&denied), "permission denied\n");
    let echoed = run(
        &config,
        "def main():\n    return conformance.echo(value=\"x\")\n",
    );
    assert_eq!(stdout(&echoed), "{\"result\":{\"value\":\"x\"}}\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_rule_that_is_not_boolean_is_a_policy_failure() {
    let dir = scratch(
        "failure",
        &[
            (
                "p.rego",
                "package authz\n\nimport rego.v1\n\ndecision := \"yes\" if input.capability.id == \"shipping.quote\"\n\ndecision := true if input.capability.id != \"shipping.quote\"\n",
            ),
            (
                "codemode.toml",
                "[policy]\nfile = \"p.rego\"\nrule = \"data.authz.decision\"\n",
            ),
        ],
    );
    let config = dir.join("codemode.toml");
    let failed = run(&config, &quote(10));
    assert_eq!(failed.status.code(), Some(1));
    // The error first; then the local log names the capability and why.
    let text = stderr(&failed);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("authorization policy failure"));
    assert!(
        lines.any(|l| l.contains("capability=shipping.quote") && l.contains("neither a boolean")),
        "{text}"
    );
    assert_records_still_allowed(&config);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_policy_is_a_start_up_error_naming_the_file() {
    let dir = scratch(
        "bad",
        &[
            ("broken.rego", "package codemode\n\nallow if {\n"),
            ("broken.toml", "[policy]\nfile = \"broken.rego\"\n"),
            ("missing.toml", "[policy]\nfile = \"nowhere.rego\"\n"),
            (
                "norule.toml",
                "[policy]\nfile = \"ok.rego\"\nrule = \"data.codemode.allow[\"\n",
            ),
            (
                "ok.rego",
                "package codemode\n\nimport rego.v1\n\nallow := true\n",
            ),
        ],
    );
    for (config, file) in [
        ("broken.toml", "broken.rego"),
        ("missing.toml", "nowhere.rego"),
        ("norule.toml", "ok.rego"),
    ] {
        let out = run(&dir.join(config), &quote(10));
        assert_eq!(out.status.code(), Some(2), "{config}: {}", stderr(&out));
        assert_eq!(stdout(&out), "");
        let first = stderr(&out);
        let first = first.lines().next().unwrap_or_default();
        let named = dir.join(file).display().to_string();
        assert!(first.starts_with("codemode: "), "{first}");
        assert!(first.contains(&named), "{config}: {first}");
        let serve = Command::new(env!("CARGO_BIN_EXE_codemode"))
            .args(["serve", "--config"])
            .arg(dir.join(config))
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run serve");
        assert_eq!(serve.status.code(), Some(2), "{config}");
        assert!(stderr(&serve).contains(&named));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
