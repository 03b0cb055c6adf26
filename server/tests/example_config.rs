//! The documented example configuration (`codemode.example.toml` at the
//! repository root) must load, must state the real defaults, and must be
//! accepted by the binary.

use codemode_catalog::Config;
use codemode_server::FileConfig;
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
    let digest = codemode_server::token_digest_hex("example-token");
    assert_eq!(digest, codemode_server::EXAMPLE_TOKEN_DIGEST);
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

/// The field names of a struct's `Deserialize` (what serde passes to
/// `deserialize_struct`): the keys of one table of the configuration.
fn keys_of<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::{Error as _, Visitor};
    use serde::Deserializer;
    struct Recorder<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Recorder<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(Self::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(Self::Error::custom("recorded"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Recorder(&mut fields));
    assert!(
        !fields.is_empty(),
        "{} is a struct",
        std::any::type_name::<T>()
    );
    fields
}

/// Every table of the configuration file (`""`: the top level) and its keys.
fn tables() -> Vec<(&'static str, &'static [&'static str])> {
    use codemode_server::OpenApiConfig;
    use codemode_server::UpstreamConfig;
    use codemode_server::{
        ApprovalConfig, HttpConfig, LimitsConfig, PolicyConfig, TelemetryConfig, TokenConfig,
    };
    vec![
        ("", keys_of::<FileConfig>()),
        ("limits", keys_of::<LimitsConfig>()),
        ("http", keys_of::<HttpConfig>()),
        ("http.tokens", keys_of::<TokenConfig>()),
        ("policy", keys_of::<PolicyConfig>()),
        ("telemetry", keys_of::<TelemetryConfig>()),
        ("approval", keys_of::<ApprovalConfig>()),
        ("upstream", keys_of::<UpstreamConfig>()),
        ("openapi", keys_of::<OpenApiConfig>()),
    ]
}

#[test]
fn the_example_config_documents_every_key() {
    let text = std::fs::read_to_string(example_path()).unwrap();
    // The keys set or shown (commented out) in each table, and the tables.
    let name = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.')
    };
    let mut table = String::new();
    let mut shown: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let line = line.trim_start_matches('#').trim();
        let header = line
            .strip_prefix("[[")
            .and_then(|h| h.strip_suffix("]]"))
            .or_else(|| line.strip_prefix('[').and_then(|h| h.strip_suffix(']')));
        if let Some(header) = header.filter(|h| name(h)) {
            table = header.to_string();
            let (parent, key) = header.rsplit_once('.').unwrap_or(("", header));
            shown.push((parent.to_string(), key.to_string()));
        } else if let Some((key, _)) = line.split_once('=') {
            let key = key.trim();
            if name(key) && !key.contains('.') {
                shown.push((table.clone(), key.to_string()));
            }
        }
    }
    let mut missing = Vec::new();
    for (name, keys) in tables() {
        for key in keys {
            if !shown.iter().any(|(t, k)| t == name && k == key) {
                missing.push(format!("[{name}] {key}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "codemode.example.toml lacks {missing:?}"
    );
}

#[test]
fn the_readme_names_every_key() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"),
    )
    .unwrap();
    // The configuration table has a row per top-level key; the row of a
    // table names its keys (`[limits]`'s are the rows of the limits table).
    let row = |name: &str| {
        readme
            .lines()
            .find(|l| {
                [
                    format!("| `{name}` |"),
                    format!("| `[{name}]` |"),
                    format!("| `[[{name}]]` |"),
                ]
                .iter()
                .any(|start| l.starts_with(start.as_str()))
            })
            .unwrap_or_else(|| panic!("README has no row for {name}"))
    };
    let mut missing = Vec::new();
    for (name, keys) in tables() {
        for key in keys {
            let named = match name {
                "" => !row(key).is_empty(),
                "limits" => readme.contains(&format!("| `{key}` |")),
                "http.tokens" => row("http").contains(&format!("`{key}`")),
                _ => [
                    format!("`{key}`"),
                    format!("`{key} "),
                    format!("`[[{name}.{key}]]`"),
                ]
                .iter()
                .any(|named| row(name).contains(named.as_str())),
            };
            if !named {
                missing.push(format!("[{name}] {key}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "README's configuration lacks {missing:?}"
    );
}
