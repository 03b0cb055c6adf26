//! How an upstream MCP server is reached: the `[[upstream]]` tables of the
//! configuration file and the `--upstream NAME=COMMAND|URL` flag.
//!
//! An upstream has a name — the capability root its tools appear under, so
//! it must be a Starlark identifier that is no reserved root — and either a
//! command line to start as a stdio child process (with optional extra
//! environment and working directory) or the URL of a Streamable HTTP
//! endpoint (with optional extra headers, e.g. a bearer token). The flag's
//! command is split as a POSIX shell would split it, without running a
//! shell. Header and environment values may hold credentials: `Debug`
//! shows their names only, and nothing here logs them.

use crate::openapi::config::{process_env, substitute, Unset};
use codemode_catalog::is_reserved_root;
use codemode_catalog::CapabilityName;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// One `[[upstream]]` table.
#[derive(Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    /// The capability root of the server's tools (`fs` gives `fs.read_file`).
    pub name: String,
    /// The program and its arguments, for a stdio child process.
    pub command: Option<Vec<String>>,
    /// Extra environment variables of the child process.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The working directory of the child process.
    pub cwd: Option<PathBuf>,
    /// The Streamable HTTP endpoint (`https://host/mcp`, `http://host:port/mcp`).
    pub url: Option<String>,
    /// Extra HTTP headers sent with every request to the endpoint.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

impl fmt::Debug for UpstreamConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpstreamConfig")
            .field("name", &self.name)
            .field("command", &self.command)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("cwd", &self.cwd)
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// A validated upstream: its name and how to reach it.
#[derive(Clone, PartialEq, Eq)]
pub struct Upstream {
    /// The capability root.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
}

/// How an upstream is reached.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process spoken to over its stdin and stdout.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
        /// The working directory.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint URL.
        url: String,
        /// Extra headers (values never shown).
        headers: BTreeMap<String, String>,
    },
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.transport)
    }
}

impl fmt::Debug for Transport {
    /// Environment and header values are left out: they may be secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Stdio {
                program,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("program", program)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .finish(),
            Transport::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

impl fmt::Display for Transport {
    /// The program or the URL, for logs: never environment or header
    /// values, nor the URL's userinfo, query or fragment.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Stdio { program, .. } => write!(f, "command {program}"),
            Transport::Http { url, .. } => write!(f, "{}", crate::logging::redact_urls(url)),
        }
    }
}

/// Why an upstream's configuration is refused (a usage error).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    #[error("--upstream {0:?}: expected NAME=COMMAND or NAME=URL")]
    Flag(String),
    #[error("upstream {0:?}: the name must be a Starlark identifier that is no reserved name")]
    Name(String),
    #[error("upstream {0:?}: set either command or url")]
    Target(String),
    #[error("upstream {0:?}: the command is empty or its quoting is unbalanced")]
    Command(String),
    #[error("upstream {0:?}: env and cwd apply to a command, headers to a url")]
    Misplaced(String),
    #[error("upstream {0:?}: the url must be http:// or https:// with a host")]
    Url(String),
    #[error("upstream {0:?}: header {1:?} is not a valid HTTP header")]
    Header(String, String),
    #[error("upstream {0:?} is configured twice")]
    Duplicate(String),
    #[error("upstream {0:?}: environment variable {1} is not set")]
    Variable(String, String),
}

/// The variables of codemode's environment a stdio child gets besides its
/// `env` table (as the reference MCP SDKs do): the program search path,
/// the home directory, the time zone and the locale (`LANG`, `LANGUAGE`
/// and every `LC_*`). Nothing else — no cloud credentials, no tokens meant
/// for other sources.
pub const INHERITED_VARIABLES: [&str; 5] = ["PATH", "HOME", "TZ", "LANG", "LANGUAGE"];

/// Whether a child inherits codemode's variable `name`.
pub fn inherited(name: &str) -> bool {
    INHERITED_VARIABLES.contains(&name) || name.starts_with("LC_")
}

/// Whether `name` can be the capability root of an imported source
/// (upstream server or OpenAPI document): a Starlark identifier that is no
/// reserved root.
pub fn valid_root(name: &str) -> bool {
    let probe = format!("{name}.tool");
    !name.contains('.') && !is_reserved_root(name) && CapabilityName::new(probe).is_ok()
}

/// Parses one `--upstream NAME=COMMAND|URL` flag: a value starting with
/// `http://` or `https://` is an endpoint, anything else a command line.
pub fn parse_flag(flag: &str) -> Result<Upstream, UpstreamError> {
    let (name, target) = flag
        .split_once('=')
        .ok_or_else(|| UpstreamError::Flag(flag.to_string()))?;
    let config = if target.starts_with("http://") || target.starts_with("https://") {
        UpstreamConfig {
            name: name.to_string(),
            url: Some(target.to_string()),
            ..UpstreamConfig::default()
        }
    } else {
        let words = shlex::split(target).ok_or_else(|| UpstreamError::Command(name.to_string()))?;
        UpstreamConfig {
            name: name.to_string(),
            command: Some(words),
            ..UpstreamConfig::default()
        }
    };
    config.validate(&process_env)
}

impl UpstreamConfig {
    /// Checks the table, substitutes `${VAR}` in `env` and `headers`
    /// values from `vars` and turns it into an [`Upstream`].
    pub fn validate(
        &self,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Upstream, UpstreamError> {
        let name = self.name.clone();
        if !valid_root(&name) {
            return Err(UpstreamError::Name(name));
        }
        let expand = |values: &BTreeMap<String, String>| {
            values
                .iter()
                .map(|(k, v)| {
                    substitute(v, vars)
                        .map(|v| (k.clone(), v))
                        .map_err(|Unset(var)| UpstreamError::Variable(name.clone(), var))
                })
                .collect::<Result<BTreeMap<String, String>, UpstreamError>>()
        };
        let env = expand(&self.env)?;
        let headers = expand(&self.headers)?;
        let transport = match (&self.command, &self.url) {
            (Some(command), None) => {
                if !self.headers.is_empty() {
                    return Err(UpstreamError::Misplaced(name));
                }
                let (program, args) = command
                    .split_first()
                    .filter(|(p, _)| !p.is_empty())
                    .ok_or_else(|| UpstreamError::Command(name.clone()))?;
                Transport::Stdio {
                    program: program.clone(),
                    args: args.to_vec(),
                    env,
                    cwd: self.cwd.clone(),
                }
            }
            (None, Some(url)) => {
                if !self.env.is_empty() || self.cwd.is_some() {
                    return Err(UpstreamError::Misplaced(name));
                }
                let rest = url
                    .strip_prefix("http://")
                    .or_else(|| url.strip_prefix("https://"))
                    .ok_or_else(|| UpstreamError::Url(name.clone()))?;
                if rest.is_empty() || url.parse::<axum::http::Uri>().is_err() {
                    return Err(UpstreamError::Url(name));
                }
                for (key, value) in &headers {
                    let valid = axum::http::HeaderName::from_bytes(key.as_bytes()).is_ok()
                        && axum::http::HeaderValue::from_str(value).is_ok();
                    if !valid {
                        return Err(UpstreamError::Header(name, key.clone()));
                    }
                }
                Transport::Http {
                    url: url.clone(),
                    headers,
                }
            }
            _ => return Err(UpstreamError::Target(name)),
        };
        Ok(Upstream { name, transport })
    }
}

/// Validates the configured upstreams (`${VAR}` read through `vars`) and
/// the flags together; a name may appear once.
pub fn collect(
    tables: &[UpstreamConfig],
    flags: &[String],
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Upstream>, UpstreamError> {
    let mut out: Vec<Upstream> = Vec::new();
    let parsed = tables
        .iter()
        .map(|t| t.validate(vars))
        .chain(flags.iter().map(|f| parse_flag(f)));
    for upstream in parsed {
        let upstream = upstream?;
        if out.iter().any(|u| u.name == upstream.name) {
            return Err(UpstreamError::Duplicate(upstream.name));
        }
        out.push(upstream);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_split_commands_like_a_shell_without_one() {
        let u = parse_flag("fs=npx -y '@scope/server fs' \"/data dir\" $HOME").expect("valid");
        assert_eq!(u.name, "fs");
        match u.transport {
            Transport::Stdio { program, args, .. } => {
                assert_eq!(program, "npx");
                assert_eq!(args, ["-y", "@scope/server fs", "/data dir", "$HOME"]);
            }
            Transport::Http { .. } => panic!("a command"),
        }
        let u = parse_flag("tracker=http://127.0.0.1:9000/mcp").expect("valid");
        assert_eq!(
            u.transport,
            Transport::Http {
                url: "http://127.0.0.1:9000/mcp".into(),
                headers: BTreeMap::new()
            }
        );
    }

    #[test]
    fn bad_flags_and_tables_are_refused() {
        let cases = [
            ("fs", UpstreamError::Flag("fs".into())),
            ("=x", UpstreamError::Name(String::new())),
            ("json=x", UpstreamError::Name("json".into())),
            ("a.b=x", UpstreamError::Name("a.b".into())),
            ("def=x", UpstreamError::Name("def".into())),
            ("fs=", UpstreamError::Command("fs".into())),
            ("fs=run 'open", UpstreamError::Command("fs".into())),
            ("t=http://", UpstreamError::Url("t".into())),
        ];
        for (flag, want) in cases {
            assert_eq!(parse_flag(flag).map(|_| ()), Err(want), "{flag}");
        }
        let both = UpstreamConfig {
            name: "x".into(),
            command: Some(vec!["a".into()]),
            url: Some("http://h/mcp".into()),
            ..UpstreamConfig::default()
        };
        assert_eq!(
            both.validate(&process_env),
            Err(UpstreamError::Target("x".into()))
        );
        let misplaced = UpstreamConfig {
            name: "x".into(),
            url: Some("http://h/mcp".into()),
            cwd: Some("/tmp".into()),
            ..UpstreamConfig::default()
        };
        assert_eq!(
            misplaced.validate(&process_env),
            Err(UpstreamError::Misplaced("x".into()))
        );
        let twice = collect(&[], &["a=x".into(), "a=y".into()], &process_env);
        assert_eq!(twice, Err(UpstreamError::Duplicate("a".into())));
    }

    #[test]
    fn debug_never_shows_secrets() {
        let config = UpstreamConfig {
            name: "t".into(),
            url: Some("http://h/mcp".into()),
            headers: [("Authorization".to_string(), "Bearer SECRET".to_string())].into(),
            ..UpstreamConfig::default()
        };
        let shown = format!("{config:?} {:?}", config.validate(&process_env));
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("Authorization"), "{shown}");
    }

    #[test]
    fn variables_are_substituted_in_env_and_headers() {
        let vars = |v: &str| (v == "TOKEN").then(|| "s3cret".to_string());
        let child = UpstreamConfig {
            name: "c".into(),
            command: Some(vec!["srv".into()]),
            env: [("API_TOKEN".to_string(), "${TOKEN}".to_string())].into(),
            ..UpstreamConfig::default()
        };
        match child.validate(&vars).expect("valid").transport {
            Transport::Stdio { env, .. } => assert_eq!(env["API_TOKEN"], "s3cret"),
            Transport::Http { .. } => panic!("a command"),
        }
        let endpoint = UpstreamConfig {
            name: "h".into(),
            url: Some("http://h/mcp".into()),
            headers: [("Authorization".to_string(), "Bearer ${TOKEN}".to_string())].into(),
            ..UpstreamConfig::default()
        };
        match endpoint.validate(&vars).expect("valid").transport {
            Transport::Http { headers, .. } => {
                assert_eq!(headers["Authorization"], "Bearer s3cret")
            }
            Transport::Stdio { .. } => panic!("a url"),
        }
        let missing = UpstreamConfig {
            env: [("X".to_string(), "${NOPE}".to_string())].into(),
            ..child
        };
        assert_eq!(
            missing.validate(&vars),
            Err(UpstreamError::Variable("c".into(), "NOPE".into()))
        );
        assert!(inherited("LC_ALL") && inherited("PATH") && !inherited("AWS_SECRET_ACCESS_KEY"));
    }
}
