//! Where an OpenAPI description comes from and how its API is reached: the
//! `[[openapi]]` tables of the configuration file and the
//! `--openapi NAME=SPEC` flag.
//!
//! A source has a name — the capability root of its operations, checked by
//! the rule upstream names follow — a document (a path, relative to the
//! configuration file, or an http(s) URL), an optional base URL (default:
//! the document's first `servers[].url`), headers sent with every call,
//! `include`/`exclude` globs over operation IDs, and which HTTP the calls
//! speak ([`HttpVersion`]). `${VAR}` in the base URL
//! and header values is replaced by the environment variable at start; a
//! missing one is an error naming it. Header values may hold credentials:
//! `Debug` shows header names only, and nothing here logs them. A base URL
//! with userinfo (`https://user:pw@host`) is refused: credentials go in a
//! header (`Authorization = "Basic ${API_BASIC}"`), never in a URL that
//! logs and errors show. A document fetched from a URL does not choose
//! where configured headers go: a table with `headers` and an http(s)
//! `spec` must set `base_url`.

use crate::upstream::config::valid_root;
use globset::{Glob, GlobSet, GlobSetBuilder};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// One `[[openapi]]` table.
#[derive(Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct OpenApiConfig {
    /// The capability root of the operations (`github` gives
    /// `github.pulls.list`).
    pub name: String,
    /// The OpenAPI document: a path (relative to the configuration file)
    /// or an http(s) URL.
    pub spec: String,
    /// The API's base URL; default: the document's first `servers[].url`.
    pub base_url: Option<String>,
    /// Headers sent with every call (`${VAR}` read from the environment).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Operation ID globs to import; default all.
    #[serde(default)]
    pub include: Vec<String>,
    /// Operation ID globs to leave out.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Which HTTP the calls speak: `"auto"` (the default), `"1.1"` or
    /// `"2"`.
    #[serde(default)]
    pub http: HttpVersion,
}

impl fmt::Debug for OpenApiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenApiConfig")
            .field("name", &self.name)
            .field("spec", &self.spec)
            .field("base_url", &self.base_url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("include", &self.include)
            .field("exclude", &self.exclude)
            .field("http", &self.http)
            .finish()
    }
}

/// Where the document is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    /// A file.
    File(PathBuf),
    /// An http(s) URL.
    Url(String),
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Spec::File(path) => write!(f, "{}", path.display()),
            Spec::Url(url) => write!(f, "{url}"),
        }
    }
}

/// A validated source, its variables substituted.
#[derive(Clone)]
pub struct OpenApiSource {
    /// The capability root.
    pub name: String,
    /// The document.
    pub spec: Spec,
    /// The base URL, if configured.
    pub base_url: Option<String>,
    /// Headers sent with every call (values never shown).
    pub headers: HeaderMap,
    /// Which operation IDs are imported.
    pub filter: Filter,
    /// Which HTTP the calls speak.
    pub http: HttpVersion,
}

/// Which HTTP an API's calls speak (the `http` key of a table).
///
/// Over HTTP/1.1 a connection carries one call at a time, so every call in
/// flight has a connection of its own (about 24 KiB in the client). Over
/// HTTP/2 the calls in flight are streams of one connection (about 11 KiB
/// each), and the API's `SETTINGS_MAX_CONCURRENT_STREAMS` (often 100 to
/// 250) bounds how many are in flight at once: the client opens no second
/// connection to the same API (RFC 9113, section 9.1), so the rest wait
/// their turn, and the wait counts toward their time limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum HttpVersion {
    /// `"auto"`: HTTP/2 where TLS negotiates it (ALPN offers `h2` and
    /// `http/1.1`), HTTP/1.1 over `http://`.
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// `"1.1"`: HTTP/1.1 only, also where TLS would negotiate HTTP/2.
    #[serde(rename = "1.1")]
    Http1,
    /// `"2"`: HTTP/2 from the first byte, also over `http://` (h2c, by
    /// prior knowledge), for an API known to serve it.
    #[serde(rename = "2")]
    Http2,
}

impl fmt::Debug for OpenApiSource {
    /// Header values are left out: they may be secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenApiSource")
            .field("name", &self.name)
            .field("spec", &self.spec)
            .field("base_url", &self.base_url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

/// The `include` and `exclude` globs of a source.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl Filter {
    /// Whether the operation with this ID (its operationId, or
    /// `METHOD path`) is imported.
    pub fn admits(&self, id: &str) -> bool {
        self.include.as_ref().is_none_or(|g| g.is_match(id))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(id))
    }
}

/// Why a source's configuration is refused (a usage error).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenApiConfigError {
    #[error("--openapi {0:?}: expected NAME=SPEC")]
    Flag(String),
    #[error("openapi {0:?}: the name must be a Starlark identifier that is no reserved name")]
    Name(String),
    #[error("openapi {0:?}: the spec must be a file path or an http(s) URL")]
    Spec(String),
    #[error("openapi {0:?}: the base_url must be http:// or https:// with a host")]
    BaseUrl(String),
    #[error(
        "openapi {0:?}: the base_url carries userinfo (user:password@); send credentials \
         as a header instead, e.g. headers = {{ Authorization = \"Basic ${{API_BASIC}}\" }}"
    )]
    BaseUrlUserinfo(String),
    #[error(
        "openapi {0:?}: set base_url: with headers and a spec fetched from a URL, the \
         document would decide where the headers are sent"
    )]
    BaseUrlRequired(String),
    #[error("openapi {0:?}: environment variable {1} is not set")]
    Variable(String, String),
    #[error("openapi {0:?}: header {1:?} is not a valid HTTP header")]
    Header(String, String),
    #[error("openapi {0:?}: invalid glob {1:?}")]
    Glob(String, String),
    #[error("openapi {0:?} is configured twice")]
    Duplicate(String),
}

/// Parses one `--openapi NAME=SPEC` flag (the document's base URL, no
/// headers).
pub fn parse_flag(
    flag: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OpenApiSource, OpenApiConfigError> {
    let (name, spec) = flag
        .split_once('=')
        .ok_or_else(|| OpenApiConfigError::Flag(flag.to_string()))?;
    OpenApiConfig {
        name: name.to_string(),
        spec: spec.to_string(),
        ..OpenApiConfig::default()
    }
    .validate(env)
}

impl OpenApiConfig {
    /// Checks the table, substitutes `${VAR}` from `env` and turns it into
    /// an [`OpenApiSource`].
    pub fn validate(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<OpenApiSource, OpenApiConfigError> {
        let name = self.name.clone();
        if !valid_root(&name) {
            return Err(OpenApiConfigError::Name(name));
        }
        let spec = if is_http_url(&self.spec) {
            Spec::Url(self.spec.clone())
        } else if self.spec.is_empty() || self.spec.contains("://") {
            return Err(OpenApiConfigError::Spec(name));
        } else {
            Spec::File(PathBuf::from(&self.spec))
        };
        let base_url = match &self.base_url {
            Some(url) => {
                let url = substitute(url, env)
                    .map_err(|Unset(var)| OpenApiConfigError::Variable(name.clone(), var))?;
                let Some(parsed) = is_http_url(&url)
                    .then(|| url::Url::parse(&url).ok())
                    .flatten()
                else {
                    return Err(OpenApiConfigError::BaseUrl(name));
                };
                if !parsed.username().is_empty() || parsed.password().is_some() {
                    return Err(OpenApiConfigError::BaseUrlUserinfo(name));
                }
                Some(url)
            }
            None if matches!(spec, Spec::Url(_)) && !self.headers.is_empty() => {
                return Err(OpenApiConfigError::BaseUrlRequired(name));
            }
            None => None,
        };
        let mut headers = HeaderMap::new();
        for (key, value) in &self.headers {
            let value = substitute(value, env)
                .map_err(|Unset(var)| OpenApiConfigError::Variable(name.clone(), var))?;
            let (Ok(key), Ok(mut value)) = (
                HeaderName::from_bytes(key.as_bytes()),
                HeaderValue::from_str(&value),
            ) else {
                return Err(OpenApiConfigError::Header(name, key.clone()));
            };
            value.set_sensitive(true);
            headers.insert(key, value);
        }
        let filter = Filter {
            include: globs(&name, &self.include)?,
            exclude: globs(&name, &self.exclude)?,
        };
        Ok(OpenApiSource {
            name,
            spec,
            base_url,
            headers,
            filter,
            http: self.http,
        })
    }
}

fn is_http_url(text: &str) -> bool {
    let rest = text
        .strip_prefix("http://")
        .or_else(|| text.strip_prefix("https://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/'))
}

fn globs(name: &str, patterns: &[String]) -> Result<Option<GlobSet>, OpenApiConfigError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        let glob = Glob::new(p).map_err(|_| OpenApiConfigError::Glob(name.into(), p.clone()))?;
        set.add(glob);
    }
    set.build()
        .map(Some)
        .map_err(|_| OpenApiConfigError::Glob(name.into(), patterns.join(", ")))
}

/// A `${VAR}` whose variable is not set: its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unset(pub String);

/// `text` with every `${VAR}` replaced by the variable's value; the error
/// names a variable that is not set. A `$` not followed by `{` is kept, and
/// so is an unterminated `${`.
pub fn substitute(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, Unset> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        let var = &rest[start + 2..start + 2 + len];
        let value = env(var).ok_or_else(|| Unset(var.to_string()))?;
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The process environment, as [`collect`] reads it.
pub fn process_env(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

/// Validates the configured sources and the flags together (a name may
/// appear once). Relative file paths of tables are already resolved
/// against the configuration file; those of flags against the working
/// directory.
pub fn collect(
    tables: &[OpenApiConfig],
    flags: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<OpenApiSource>, OpenApiConfigError> {
    let mut out: Vec<OpenApiSource> = Vec::new();
    let parsed = tables
        .iter()
        .map(|t| t.validate(env))
        .chain(flags.iter().map(|f| parse_flag(f, env)));
    for source in parsed {
        let source = source?;
        if out.iter().any(|s| s.name == source.name) {
            return Err(OpenApiConfigError::Duplicate(source.name));
        }
        out.push(source);
    }
    Ok(out)
}

/// Resolves a table's relative spec path against `dir`, the directory of
/// the configuration file.
pub fn resolve_spec_path(config: &mut OpenApiConfig, dir: &Path) {
    if !is_http_url(&config.spec) && Path::new(&config.spec).is_relative() {
        config.spec = dir.join(&config.spec).to_string_lossy().into_owned();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(var: &str) -> Option<String> {
        match var {
            "TOKEN" => Some("SECRET".into()),
            "HOST" => Some("api.example.com".into()),
            _ => None,
        }
    }

    #[test]
    fn variables_are_substituted_and_missing_ones_named() {
        assert_eq!(
            substitute("Bearer ${TOKEN}", &env),
            Ok("Bearer SECRET".into())
        );
        assert_eq!(
            substitute("$x ${TOKEN}${TOKEN} ${open", &env),
            Ok("$x SECRETSECRET ${open".into())
        );
        assert_eq!(substitute("${NOPE}", &env), Err(Unset("NOPE".into())));
        let table = OpenApiConfig {
            name: "gh".into(),
            spec: "api.json".into(),
            base_url: Some("https://${HOST}/v3".into()),
            headers: [("Authorization".to_string(), "Bearer ${TOKEN}".to_string())].into(),
            ..OpenApiConfig::default()
        };
        let source = table.validate(&env).expect("valid");
        assert_eq!(
            source.base_url.as_deref(),
            Some("https://api.example.com/v3")
        );
        assert_eq!(source.headers["authorization"], "Bearer SECRET");
        let shown = format!("{table:?} {source:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("authorization") || shown.contains("Authorization"));
        let missing = OpenApiConfig {
            headers: [("X-Key".to_string(), "${API_KEY}".to_string())].into(),
            ..table
        };
        let e = missing
            .validate(&env)
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(
            e,
            Err("openapi \"gh\": environment variable API_KEY is not set".into())
        );
    }

    #[test]
    fn flags_and_tables_are_checked() {
        let s = parse_flag("pets=https://h/openapi.yaml", &env).expect("valid");
        assert_eq!(s.spec, Spec::Url("https://h/openapi.yaml".into()));
        assert!(s.base_url.is_none() && s.headers.is_empty());
        let s = parse_flag("pets=specs/pets.json", &env).expect("valid");
        assert_eq!(s.spec, Spec::File("specs/pets.json".into()));
        let cases = [
            ("pets", OpenApiConfigError::Flag("pets".into())),
            ("json=x.json", OpenApiConfigError::Name("json".into())),
            ("a.b=x.json", OpenApiConfigError::Name("a.b".into())),
            ("p=", OpenApiConfigError::Spec("p".into())),
            ("p=ftp://h/x", OpenApiConfigError::Spec("p".into())),
        ];
        for (flag, want) in cases {
            assert_eq!(parse_flag(flag, &env).map(|_| ()), Err(want), "{flag}");
        }
        let bad_url = OpenApiConfig {
            name: "p".into(),
            spec: "x.json".into(),
            base_url: Some("file:///etc".into()),
            ..OpenApiConfig::default()
        };
        assert_eq!(
            bad_url.validate(&env).map(|_| ()),
            Err(OpenApiConfigError::BaseUrl("p".into()))
        );
        let userinfo = OpenApiConfig {
            base_url: Some("https://bob:${TOKEN}@h/v1".into()),
            ..bad_url.clone()
        };
        assert_eq!(
            userinfo.validate(&env).map(|_| ()),
            Err(OpenApiConfigError::BaseUrlUserinfo("p".into()))
        );
        let shown = userinfo.validate(&env).expect_err("refused").to_string();
        assert!(
            !shown.contains("SECRET") && shown.contains("\"p\""),
            "{shown}"
        );
        // A fetched document must not choose where the headers go.
        let fetched = OpenApiConfig {
            name: "p".into(),
            spec: "https://h/openapi.json".into(),
            headers: [("Authorization".to_string(), "Bearer ${TOKEN}".to_string())].into(),
            ..OpenApiConfig::default()
        };
        assert_eq!(
            fetched.validate(&env).map(|_| ()),
            Err(OpenApiConfigError::BaseUrlRequired("p".into()))
        );
        let pinned = OpenApiConfig {
            base_url: Some("https://h/v1".into()),
            ..fetched.clone()
        };
        assert!(pinned.validate(&env).is_ok());
        let headerless = OpenApiConfig {
            headers: BTreeMap::new(),
            ..fetched
        };
        assert!(headerless.validate(&env).is_ok());
        let table = |http: &str| {
            toml::from_str::<OpenApiConfig>(&format!("name = \"p\"\nspec = \"x.json\"\n{http}"))
                .map(|t| t.validate(&env).expect("valid").http)
                .map_err(|e| e.message().to_string())
        };
        assert_eq!(table(""), Ok(HttpVersion::Auto));
        assert_eq!(table("http = \"auto\""), Ok(HttpVersion::Auto));
        assert_eq!(table("http = \"1.1\""), Ok(HttpVersion::Http1));
        assert_eq!(table("http = \"2\""), Ok(HttpVersion::Http2));
        assert_eq!(
            table("http = \"3\""),
            Err("unknown variant `3`, expected one of `auto`, `1.1`, `2`".into())
        );
        let twice = collect(&[], &["a=x.json".into(), "a=y.json".into()], &env);
        assert_eq!(
            twice.map(|_| ()),
            Err(OpenApiConfigError::Duplicate("a".into()))
        );
    }

    #[test]
    fn globs_filter_operation_ids() {
        let table = OpenApiConfig {
            name: "gh".into(),
            spec: "x.json".into(),
            include: vec!["pulls/*".into(), "repos/*".into()],
            exclude: vec!["repos/delete".into()],
            ..OpenApiConfig::default()
        };
        let filter = table.validate(&env).expect("valid").filter;
        assert!(filter.admits("pulls/list"));
        assert!(filter.admits("repos/get-content"));
        assert!(!filter.admits("repos/delete"));
        assert!(!filter.admits("issues/list"));
        assert!(Filter::default().admits("anything"));
        let bad = OpenApiConfig {
            include: vec!["a[".into()],
            ..table
        };
        assert_eq!(
            bad.validate(&env).map(|_| ()),
            Err(OpenApiConfigError::Glob("gh".into(), "a[".into()))
        );
    }
}
