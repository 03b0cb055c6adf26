//! The documented example configuration (`codemode.example.toml` at the
//! repository root) must load, must state the real defaults, and must be
//! accepted by the binary.

use codemode_catalog::Config;
use codemode_server::config::FileConfig;
use std::process::Command;

fn example_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../codemode.example.toml")
}

#[test]
fn the_example_config_states_the_defaults() {
    let text = std::fs::read_to_string(example_path()).unwrap();
    let file = FileConfig::from_toml(&text).unwrap();
    assert_eq!(file.catalogs, Some(vec!["demo".to_string()]));
    assert!(file.disabled.is_empty());
    // Every limit the file sets is the default.
    assert_eq!(file.limits.to_config(), Config::default());
    // No live token: the example's is commented out, and refused.
    assert!(file.http.tokens.is_empty());
    // No extra policy and no /metrics unless enabled.
    assert_eq!(file.policy, None);
    assert!(!file.telemetry.metrics);
    // Nothing is asked; the approval timeout is the default.
    assert!(file.approval.ask.is_empty());
    assert_eq!(
        file.approval
            .timeout_ms
            .map(std::time::Duration::from_millis),
        Some(Config::default().approval_timeout)
    );
    // The commented digest really is the SHA-256 of the token the comment
    // names, and the binary refuses it.
    let digest = codemode_server::http::token_digest_hex("example-token");
    assert_eq!(digest, codemode_server::http::EXAMPLE_TOKEN_DIGEST);
    assert!(text.contains(&format!("# sha256 = \"{digest}\"")));
}

#[test]
fn the_binary_refuses_the_example_token() {
    let dir = std::env::temp_dir().join(format!("codemode-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(example_path()).unwrap();
    let live = text
        .replace("# [[http.tokens]]", "[[http.tokens]]")
        .replace("# subject = \"example\"", "subject = \"example\"")
        .replace("# sha256 = ", "sha256 = ");
    let path = dir.join("live.toml");
    std::fs::write(&path, live).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args(["serve", "--http", "0.0.0.0:0", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("documented example token"), "{stderr}");
}

#[test]
fn the_binary_accepts_the_example_config() {
    let out = Command::new(env!("CARGO_BIN_EXE_codemode"))
        .arg("search")
        .arg("--config")
        .arg(example_path())
        .arg("look up record")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with("{\"results\":[{\"name\":\"records.lookup\""),
        "{stdout}"
    );
}
