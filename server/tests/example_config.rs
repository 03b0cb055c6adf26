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
    assert_eq!(file.http.tokens.len(), 1);
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
    // The digest really is the SHA-256 of the token the comment names.
    assert_eq!(
        file.http.tokens[0].sha256,
        "4d1566a1d7df42a8517456d60ea06ed284e535cfe4c956aa6ee172dbcdf945f7"
    );
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
