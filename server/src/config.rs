//! The TOML configuration file (`--config FILE`): catalogs, disabled
//! capability IDs, limits, the Rego policy, the HTTP transport (allowed
//! hosts and origins, bearer tokens as SHA-256 digests), telemetry and
//! upstream MCP servers ([`crate::upstream::config`]) and OpenAPI
//! documents ([`crate::openapi::config`]). Unknown keys are errors that name the key; every field is optional and
//! command-line flags override it. Relative paths in the file (manifests,
//! the policy, an upstream's `cwd`, an OpenAPI `spec`) are resolved against the directory of
//! the configuration file.
//!
//! ```toml
//! catalogs = ["demo", "conformance", "my-manifest.json"]
//! disabled = ["records.status"]
//!
//! [limits]
//! max_steps = 1000000
//! max_time_ms = 5000
//!
//! [http]
//! allowed_hosts = ["mcp.example.com"]
//! allowed_origins = ["https://app.example.com"]
//!
//! [[http.tokens]]
//! subject = "alice"
//! sha256 = "<hex SHA-256 digest of alice's bearer token>"
//!
//! [policy]
//! file = "policy.rego"          # or: allow_all = true
//! rule = "data.codemode.allow"
//!
//! [telemetry]
//! metrics = true
//! listen = "127.0.0.1:9464"
//!
//! [approval]
//! ask = ["destructive"]
//! timeout_ms = 120000
//!
//! [[upstream]]
//! name = "fs"
//! command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"]
//!
//! [[upstream]]
//! name = "tracker"
//! url = "http://127.0.0.1:9000/mcp"
//! headers = { Authorization = "Bearer <token>" }
//!
//! [[openapi]]
//! name = "github"
//! spec = "api.github.com.json"
//! headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }
//! include = ["pulls/*", "repos/*"]
//! ```

use codemode_catalog::{Config, RegoError, RegoPolicy};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The configuration file.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Built-in catalog names or manifest paths.
    pub catalogs: Option<Vec<String>>,
    /// Capability IDs to disable.
    #[serde(default)]
    pub disabled: Vec<String>,
    /// Limits; unset ones keep their defaults.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// The HTTP transport.
    #[serde(default)]
    pub http: HttpConfig,
    /// A Rego policy every capability call must also satisfy.
    pub policy: Option<PolicyConfig>,
    /// Telemetry.
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    /// Upstream MCP servers whose tools become capabilities.
    #[serde(default)]
    pub upstream: Vec<crate::upstream::UpstreamConfig>,
    /// OpenAPI documents whose operations become capabilities.
    #[serde(default)]
    pub openapi: Vec<crate::openapi::OpenApiConfig>,
    /// Which calls wait for a person's approval.
    #[serde(default)]
    pub approval: ApprovalConfig,
}

/// Approval of writes: calls of the capabilities named here wait for a
/// person's approval through the MCP client (`permission denied` unless
/// approved).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ApprovalConfig {
    /// Annotation names (`"destructive"`, …) or capability IDs to ask for.
    #[serde(default)]
    pub ask: Vec<String>,
    /// How long to wait for an answer (default 120000 ms); not counted
    /// against `max_time_ms`.
    pub timeout_ms: Option<u64>,
}

/// The policy for the whole server: a Rego module (a call is allowed only
/// when the catalogs' own policies and its rule allow it), or the explicit
/// `allow_all = true` that adds no check.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// The `.rego` module (relative: to the config file's directory).
    pub file: Option<PathBuf>,
    /// The rule that decides (default `data.codemode.allow`).
    pub rule: Option<String>,
    /// Every subject may call every enabled capability (no Rego module).
    #[serde(default)]
    pub allow_all: bool,
}

/// Telemetry settings.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TelemetryConfig {
    /// Serve Prometheus metrics at `/metrics` on the HTTP listener.
    #[serde(default)]
    pub metrics: bool,
    /// Serve them at `http://ADDR/metrics` on a listener of their own
    /// (for a stdio server too).
    pub listen: Option<String>,
    /// Whether the `listen` listener needs a bearer token of `[http]` when
    /// tokens are configured (default `true`); `false` for a scraper that
    /// sends none (Prometheus by pod annotations).
    pub listen_requires_token: Option<bool>,
    /// Whether `listen` may be a non-loopback address whose `/metrics`
    /// needs no token (no `[http]` tokens, or `listen_requires_token =
    /// false`); refused at start otherwise.
    #[serde(default)]
    pub allow_public_listen: bool,
}

/// Settings of the Streamable HTTP transport.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    /// Allowed `Host` values (default: loopback names only).
    pub allowed_hosts: Option<Vec<String>>,
    /// Allowed `Origin` values (default: loopback origins only).
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Bearer tokens and the subjects they authenticate.
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
    /// A TOML file of more `[[tokens]]` (`subject`, `sha256`), e.g. a
    /// mounted secret; read with the configuration, relative to it.
    pub tokens_file: Option<PathBuf>,
    /// Milliseconds to receive a request's head.
    pub header_read_timeout_ms: Option<u64>,
    /// Milliseconds to receive a request's body after its head.
    pub body_read_timeout_ms: Option<u64>,
    /// Milliseconds an idle keep-alive connection stays open.
    pub keep_alive_timeout_ms: Option<u64>,
    /// Connections open at once.
    pub max_connections: Option<usize>,
    /// Bytes of request bodies held at once across all connections.
    pub max_body_bytes_in_flight: Option<usize>,
    /// Milliseconds `/readyz` answers 503 before a drain stops accepting.
    pub drain_delay_ms: Option<u64>,
}

impl HttpConfig {
    /// The listener's limits: the defaults with every set key applied.
    pub fn connection_limits(&self) -> crate::http::connection::ConnectionLimits {
        let mut limits = crate::http::connection::ConnectionLimits::default();
        let ms = Duration::from_millis;
        if let Some(v) = self.header_read_timeout_ms {
            limits.header_read = ms(v);
        }
        if let Some(v) = self.body_read_timeout_ms {
            limits.body_read = ms(v);
        }
        if let Some(v) = self.keep_alive_timeout_ms {
            limits.keep_alive = ms(v);
        }
        if let Some(v) = self.max_connections {
            limits.max_connections = v;
        }
        limits
    }
}

/// One bearer token, stored as the hex SHA-256 digest of the token.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// The subject the token authenticates.
    pub subject: String,
    /// Hex SHA-256 digest of the token.
    pub sha256: String,
}

/// Every configurable limit; `None` keeps the default.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    /// MaxSourceBytes: source length in bytes.
    #[arg(long, value_name = "N")]
    pub max_source_bytes: Option<usize>,
    /// MaxExecutionSteps: bytecode instructions per execution.
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u64>,
    /// MaxExecutionTime in milliseconds.
    #[arg(long, value_name = "N")]
    pub max_time_ms: Option<u64>,
    /// MaxNativeCalls: capability calls per execution.
    #[arg(long, value_name = "N")]
    pub max_native_calls: Option<u32>,
    /// MaxValueDepth: depth of a crossing value (scalar = 1).
    #[arg(long, value_name = "N")]
    pub max_value_depth: Option<u32>,
    /// MaxValueBytes: compact JSON bytes of one crossing value.
    #[arg(long, value_name = "N")]
    pub max_value_bytes: Option<usize>,
    /// MaxIntermediateValueBytes: total bytes of native results.
    #[arg(long = "max-intermediate-bytes", value_name = "N")]
    pub max_intermediate_bytes: Option<usize>,
    /// MaxHeapBytes: bytes of values an execution may keep, plus those
    /// allocated since its last collection.
    #[arg(long, value_name = "N")]
    pub max_heap_bytes: Option<usize>,
    /// MaxSearchQueryBytes: raw search query bytes.
    #[arg(long, value_name = "N")]
    pub max_search_query_bytes: Option<usize>,
    /// MaxSearchResults: results per search.
    #[arg(long, value_name = "N")]
    pub max_search_results: Option<usize>,
    /// MaxConcurrentExecutions: executions running instructions at once
    /// (CPU slots; a paused execution holds none).
    #[arg(long, value_name = "N")]
    pub max_concurrent_executions: Option<usize>,
    /// Executions open at once: running, paused at a capability call, or
    /// waiting for a CPU slot.
    #[arg(long, value_name = "N")]
    pub max_open_executions: Option<usize>,
    /// Heap bytes of all open executions together.
    #[arg(long, value_name = "N")]
    pub max_open_heap_bytes: Option<usize>,
    /// Executions of one subject open at once.
    #[arg(long, value_name = "N")]
    pub max_executions_per_subject: Option<usize>,
    /// Executions waiting to open at once; more are refused.
    #[arg(long, value_name = "N")]
    pub max_queued_executions: Option<usize>,
    /// Milliseconds an execution may wait to open.
    #[arg(long, value_name = "N")]
    pub max_queue_wait_ms: Option<u64>,
}

/// The file named by `[http] tokens_file`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    #[serde(default)]
    tokens: Vec<TokenConfig>,
}

/// Reading the configuration failed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("invalid config {path}: {error}")]
    Parse {
        path: String,
        error: toml::de::Error,
    },
}

impl FileConfig {
    /// Parses configuration TOML.
    pub fn from_toml(text: &str) -> Result<FileConfig, toml::de::Error> {
        toml::from_str(text)
    }

    /// Reads and parses a configuration file.
    pub fn read(path: &Path) -> Result<FileConfig, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: shown.clone(),
            error,
        })?;
        let mut config = FileConfig::from_toml(&text)
            .map_err(|error| ConfigError::Parse { path: shown, error })?;
        // Paths in the file are relative to the file, wherever the server
        // is started from.
        let dir = path.parent().unwrap_or(Path::new(""));
        let beside = |p: &Path| {
            if p.is_relative() {
                dir.join(p)
            } else {
                p.to_path_buf()
            }
        };
        if let Some(file) = config.policy.as_mut().and_then(|p| p.file.as_mut()) {
            *file = beside(file);
        }
        for source in config.catalogs.iter_mut().flatten() {
            if !crate::catalogs::BUILTIN.contains(&source.as_str()) {
                *source = beside(Path::new(source.as_str()))
                    .to_string_lossy()
                    .into_owned();
            }
        }
        for upstream in &mut config.upstream {
            if let Some(cwd) = &mut upstream.cwd {
                *cwd = beside(cwd);
            }
        }
        for source in &mut config.openapi {
            crate::openapi::config::resolve_spec_path(source, dir);
        }
        if let Some(file) = config.http.tokens_file.as_mut() {
            *file = beside(file);
            let shown = file.display().to_string();
            let text = std::fs::read_to_string(&file).map_err(|error| ConfigError::Read {
                path: shown.clone(),
                error,
            })?;
            let more: TokensFile =
                toml::from_str(&text).map_err(|error| ConfigError::Parse { path: shown, error })?;
            config.http.tokens.extend(more.tokens);
        }
        Ok(config)
    }
}

/// Why the `[policy]` table gives no policy: its keys contradict each
/// other, or its file cannot be read or is no valid policy.
#[derive(Debug, thiserror::Error)]
pub enum PolicyConfigError {
    #[error("[policy]: file and allow_all = true exclude each other")]
    FileAndAllowAll,
    #[error("[policy]: rule needs a file, not allow_all = true")]
    RuleWithoutFile,
    #[error("[policy]: set file (a Rego module) or allow_all = true")]
    Neither,
    #[error("cannot read policy {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("invalid Rego policy {path}: {}", .error.0)]
    Invalid { path: String, error: RegoError },
}

impl PolicyConfig {
    /// Reads, parses and checks the policy (`None` for `allow_all`); the
    /// error names the file, or the keys when the table is inconsistent.
    pub fn load(&self) -> Result<Option<RegoPolicy>, PolicyConfigError> {
        let file = match (&self.file, self.allow_all) {
            (Some(_), true) => return Err(PolicyConfigError::FileAndAllowAll),
            (None, true) if self.rule.is_some() => return Err(PolicyConfigError::RuleWithoutFile),
            (None, true) => return Ok(None),
            (None, false) => return Err(PolicyConfigError::Neither),
            (Some(file), false) => file,
        };
        let path = file.display().to_string();
        let source = match std::fs::read_to_string(file) {
            Ok(source) => source,
            Err(error) => return Err(PolicyConfigError::Read { path, error }),
        };
        let mut builder = RegoPolicy::builder().module(path.clone(), source);
        if let Some(rule) = &self.rule {
            builder = builder.rule(rule.clone());
        }
        builder
            .build()
            .map(Some)
            .map_err(|error| PolicyConfigError::Invalid { path, error })
    }
}

impl LimitsConfig {
    /// These limits with every value set in `over` replacing ours.
    pub fn overridden_by(&self, over: &LimitsConfig) -> LimitsConfig {
        macro_rules! pick {
            ($($f:ident),*) => { LimitsConfig { $($f: over.$f.or(self.$f)),* } };
        }
        pick!(
            max_source_bytes,
            max_steps,
            max_time_ms,
            max_native_calls,
            max_value_depth,
            max_value_bytes,
            max_intermediate_bytes,
            max_heap_bytes,
            max_search_query_bytes,
            max_search_results,
            max_concurrent_executions,
            max_open_executions,
            max_open_heap_bytes,
            max_executions_per_subject,
            max_queued_executions,
            max_queue_wait_ms
        )
    }

    /// The service config: the defaults with every set limit applied.
    pub fn to_config(&self) -> Config {
        let mut c = Config::default();
        let l = &mut c.limits;
        if let Some(v) = self.max_source_bytes {
            l.max_source_bytes = v;
        }
        if let Some(v) = self.max_steps {
            l.max_steps = v;
        }
        if let Some(v) = self.max_time_ms {
            l.max_time = Duration::from_millis(v);
        }
        if let Some(v) = self.max_native_calls {
            l.max_native_calls = v;
        }
        if let Some(v) = self.max_value_depth {
            l.max_value_depth = v;
        }
        if let Some(v) = self.max_value_bytes {
            l.max_value_bytes = v;
        }
        if let Some(v) = self.max_intermediate_bytes {
            l.max_intermediate_bytes = v;
        }
        if let Some(v) = self.max_heap_bytes {
            l.max_heap_bytes = v;
        }
        if let Some(v) = self.max_search_query_bytes {
            c.search.max_query_bytes = v;
        }
        if let Some(v) = self.max_search_results {
            c.search.max_results = v;
        }
        if let Some(v) = self.max_concurrent_executions {
            c.max_concurrent_executions = v;
        }
        if let Some(v) = self.max_open_executions {
            c.max_open_executions = v;
        }
        if let Some(v) = self.max_open_heap_bytes {
            c.max_open_heap_bytes = v;
        }
        if let Some(v) = self.max_executions_per_subject {
            c.max_executions_per_subject = v;
        }
        if let Some(v) = self.max_queued_executions {
            c.max_queued_executions = v;
        }
        if let Some(v) = self.max_queue_wait_ms {
            c.max_queue_wait = Duration::from_millis(v);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key() {
        let c = FileConfig::from_toml(
            "catalogs = [\"demo\"]\ndisabled = [\"records.status\"]\n[limits]\nmax_steps = 7\nmax_time_ms = 250\n",
        )
        .expect("valid");
        assert_eq!(c.catalogs, Some(vec!["demo".to_string()]));
        assert_eq!(c.disabled, ["records.status"]);
        let config = c.limits.to_config();
        assert_eq!(config.limits.max_steps, 7);
        assert_eq!(config.limits.max_time, Duration::from_millis(250));
        assert_eq!(config.limits.max_native_calls, 100);
    }

    #[test]
    fn unknown_keys_are_named() {
        let e = FileConfig::from_toml("catalog = [\"demo\"]\n").expect_err("unknown");
        assert!(e.to_string().contains("catalog"), "{e}");
        let e = FileConfig::from_toml("[limits]\nmax_stepz = 1\n").expect_err("unknown");
        assert!(e.to_string().contains("max_stepz"), "{e}");
    }

    #[test]
    fn paths_are_relative_to_the_config_file() {
        let dir = std::env::temp_dir().join(format!("codemode-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("c.toml");
        let text = "[policy]\nfile = \"p/allow.rego\"\nrule = \"data.x.allow\"\n[telemetry]\nmetrics = true\n";
        std::fs::write(&path, text).expect("write");
        let c = FileConfig::read(&path).expect("valid");
        let policy = c.policy.expect("a policy");
        assert_eq!(policy.file, Some(dir.join("p/allow.rego")));
        assert_eq!(policy.rule.as_deref(), Some("data.x.allow"));
        assert!(c.telemetry.metrics);
        let absolute = format!("[policy]\nfile = {:?}\n", dir.join("abs.rego"));
        std::fs::write(&path, absolute).expect("write");
        let c = FileConfig::read(&path).expect("valid");
        assert_eq!(c.policy.expect("a policy").file, Some(dir.join("abs.rego")));
        let text = "catalogs = [\"demo\", \"m/one.json\", \"/abs/two.json\"]\n\
            [[upstream]]\nname = \"up\"\ncommand = [\"srv\"]\ncwd = \"work\"\n";
        std::fs::write(&path, text).expect("write");
        let c = FileConfig::read(&path).expect("valid");
        let one = dir.join("m/one.json").to_string_lossy().into_owned();
        let catalogs = c.catalogs.expect("catalogs");
        assert_eq!(catalogs, ["demo", one.as_str(), "/abs/two.json"]);
        assert_eq!(
            c.upstream[0].cwd.as_deref(),
            Some(dir.join("work").as_path())
        );
        let _ = std::fs::remove_dir_all(&dir);
        let policy = |text: &str| FileConfig::from_toml(text).expect("valid").policy;
        let no_file = policy("[policy]\nrule = \"data.x.allow\"\n").expect("a table");
        let e = no_file.load().expect_err("no file");
        assert!(matches!(e, PolicyConfigError::Neither), "{e:?}");
        assert_eq!(
            e.to_string(),
            "[policy]: set file (a Rego module) or allow_all = true"
        );
        let both = policy("[policy]\nfile = \"p.rego\"\nallow_all = true\n").expect("a table");
        let e = both.load().expect_err("both");
        assert_eq!(
            e.to_string(),
            "[policy]: file and allow_all = true exclude each other"
        );
        let ruled = policy("[policy]\nallow_all = true\nrule = \"data.x\"\n").expect("a table");
        let e = ruled.load().expect_err("rule without file");
        assert_eq!(
            e.to_string(),
            "[policy]: rule needs a file, not allow_all = true"
        );
        let missing = policy("[policy]\nfile = \"/no/such/policy.rego\"\n").expect("a table");
        let e = missing.load().expect_err("no such file");
        assert!(
            matches!(&e, PolicyConfigError::Read { path, .. } if path == "/no/such/policy.rego"),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .starts_with("cannot read policy /no/such/policy.rego: "),
            "{e}"
        );
        let all = policy("[policy]\nallow_all = true\n").expect("a table");
        assert!(all.load().expect("valid").is_none());
        let e = FileConfig::from_toml("[telemetry]\nmetric = true\n").expect_err("unknown");
        assert!(e.to_string().contains("metric"), "{e}");
        assert!(!FileConfig::default().telemetry.metrics);
    }

    #[test]
    fn tokens_file_adds_tokens() {
        let dir = std::env::temp_dir().join(format!("codemode-tokens-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("secret")).expect("temp dir");
        let path = dir.join("c.toml");
        let token = |s: &str| format!("subject = \"{s}\"\nsha256 = \"{}\"\n", "a".repeat(64));
        let text = format!(
            "[[http.tokens]]\n{}[http]\ntokens_file = \"secret/t.toml\"\n",
            token("alice")
        );
        std::fs::write(&path, text).expect("write");
        std::fs::write(
            dir.join("secret/t.toml"),
            format!("[[tokens]]\n{}", token("bob")),
        )
        .expect("write");
        let c = FileConfig::read(&path).expect("valid");
        let subjects: Vec<&str> = c.http.tokens.iter().map(|t| t.subject.as_str()).collect();
        assert_eq!(subjects, ["alice", "bob"]);
        assert_eq!(c.http.tokens_file, Some(dir.join("secret/t.toml")));
        std::fs::write(dir.join("secret/t.toml"), "[[tokenz]]\n").expect("write");
        let e = FileConfig::read(&path)
            .expect_err("unknown key")
            .to_string();
        assert!(e.contains("secret/t.toml") && e.contains("tokenz"), "{e}");
        std::fs::remove_file(dir.join("secret/t.toml")).expect("remove");
        let e = FileConfig::read(&path).expect_err("missing").to_string();
        assert!(
            e.starts_with("cannot read config") && e.contains("secret/t.toml"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn http_keys_set_the_connection_limits() {
        let c = FileConfig::from_toml(
            "[http]\nheader_read_timeout_ms = 1\nbody_read_timeout_ms = 2\n\
             keep_alive_timeout_ms = 3\nmax_connections = 4\ndrain_delay_ms = 5\n",
        )
        .expect("valid");
        let limits = c.http.connection_limits();
        assert_eq!(limits.header_read, Duration::from_millis(1));
        assert_eq!(limits.body_read, Duration::from_millis(2));
        assert_eq!(limits.keep_alive, Duration::from_millis(3));
        assert_eq!(limits.max_connections, 4);
        assert_eq!(c.http.drain_delay_ms, Some(5));
        let defaults = FileConfig::default().http.connection_limits();
        assert_eq!(
            defaults,
            crate::http::connection::ConnectionLimits::default()
        );
        assert_eq!(defaults.header_read, Duration::from_secs(10));
    }

    #[test]
    fn flags_override_the_file() {
        let file = LimitsConfig {
            max_steps: Some(1),
            max_heap_bytes: Some(2),
            ..LimitsConfig::default()
        };
        let flags = LimitsConfig {
            max_steps: Some(3),
            ..LimitsConfig::default()
        };
        let merged = file.overridden_by(&flags);
        assert_eq!(merged.max_steps, Some(3));
        assert_eq!(merged.max_heap_bytes, Some(2));
    }
}
