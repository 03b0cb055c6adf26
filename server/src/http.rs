//! The stateless Streamable HTTP transport at `/mcp`, on axum and rmcp.
//!
//! JSON responses, no session ID, no SSE keep-alive, 4 MiB request bodies
//! (413 beyond), 405 for GET and DELETE, and `Host`/`Origin` allow-lists
//! against DNS rebinding (loopback by default) — those are rmcp's; this
//! module adds bearer authentication in front: tokens are kept as SHA-256
//! digests and compared in constant time, a request without a valid token
//! gets 401 with `WWW-Authenticate: Bearer`, and the subject of the token
//! travels in the request's extensions to the handler's resolver. Without
//! tokens every request is the local subject — unless the embedding host
//! gives a subject resolver ([`HttpOptions::subjects`]), which maps each
//! request (say, what its own authentication middleware put in the
//! extensions) to a subject or to none (`unauthenticated`) — and
//! [`serve_http`] refuses a non-loopback address.
//!
//! With [`Metrics`] in the options, `GET /metrics` serves them in the
//! Prometheus text format. It is behind the same two gates as `/mcp`: the
//! `Host` allow-list (checked here as rmcp checks it, 403 otherwise) and,
//! when tokens are configured, a valid bearer token (any subject's).

use crate::config::HttpConfig;
use crate::direct::{self, Direct};
use crate::mcp::CodeModeServer;
use crate::telemetry::{self, Metrics};
use axum::extract::{Request, State};
use axum::http::uri::Authority;
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use codemode_catalog::{CodeMode, Subject, SubjectResolver, Unauthenticated};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::RoleServer;
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// The largest request body.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// One accepted bearer token.
#[derive(Clone)]
pub struct Token {
    digest: [u8; 32],
    subject: Subject,
}

impl Token {
    /// A token from the hex SHA-256 digest of its secret.
    pub fn from_hex_digest(subject: &str, hex: &str) -> Result<Token, String> {
        let bytes = hex.as_bytes();
        if bytes.len() != 64 {
            return Err(format!(
                "token of {subject:?}: sha256 must be 64 hex digits"
            ));
        }
        let mut digest = [0u8; 32];
        for (i, pair) in bytes.chunks(2).enumerate() {
            let hi = hex_value(pair[0]);
            let lo = hex_value(pair[1]);
            match (hi, lo) {
                (Some(h), Some(l)) => digest[i] = h << 4 | l,
                _ => return Err(format!("token of {subject:?}: sha256 must be hex")),
            }
        }
        if subject.is_empty() {
            return Err("a token's subject must not be empty".into());
        }
        Ok(Token {
            digest,
            subject: Subject::new(subject),
        })
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The hex SHA-256 digest of a token (what the config stores).
pub fn token_digest_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The options of the HTTP transport.
#[derive(Clone, Default)]
pub struct HttpOptions {
    /// Allowed `Host` values; `None` keeps rmcp's loopback default.
    pub allowed_hosts: Option<Vec<String>>,
    /// Allowed `Origin` values; empty checks none.
    pub allowed_origins: Vec<String>,
    /// Accepted bearer tokens; empty means no authentication.
    pub tokens: Vec<Token>,
    /// Metrics to record tool calls in and serve at `/metrics`; `None`
    /// serves no `/metrics`.
    pub metrics: Option<Metrics>,
    /// Without tokens: the host's mapping of a request to its subject
    /// (`None`: every request is `local`).
    pub subjects: Option<HttpResolver>,
    /// `serverInfo` name and version (`None`: `codemode` and the crate's
    /// version).
    pub server_info: Option<(String, String)>,
}

/// Maps an HTTP request (its headers and extensions) to its subject.
pub type HttpResolver = Arc<dyn SubjectResolver<axum::http::request::Parts>>;

impl HttpOptions {
    /// The options of a config's `[http]` table.
    pub fn from_config(config: &HttpConfig) -> Result<HttpOptions, String> {
        let tokens = config
            .tokens
            .iter()
            .map(|t| Token::from_hex_digest(&t.subject, &t.sha256))
            .collect::<Result<_, _>>()?;
        Ok(HttpOptions {
            allowed_hosts: config.allowed_hosts.clone(),
            allowed_origins: config.allowed_origins.clone(),
            tokens,
            ..HttpOptions::default()
        })
    }
}

/// Constant-time equality of two digests.
fn same_digest(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The subject of a bearer token, checking every token in constant time.
fn authenticate(tokens: &[Token], header: Option<&str>) -> Option<Subject> {
    let presented = header?.strip_prefix("Bearer ")?.trim();
    let mut digest = [0u8; 32];
    digest.copy_from_slice(&Sha256::digest(presented.as_bytes()));
    let mut found = None;
    for t in tokens {
        if same_digest(&t.digest, &digest) {
            found = Some(t.subject.clone());
        }
    }
    found
}

/// How requests get their subject.
struct Auth {
    tokens: Vec<Token>,
    subjects: Option<HttpResolver>,
}

async fn auth(State(auth): State<Arc<Auth>>, mut request: Request, next: Next) -> Response {
    let subject = if !auth.tokens.is_empty() {
        let value = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let Some(subject) = authenticate(&auth.tokens, value) else {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
            )
                .into_response();
        };
        Some(subject)
    } else if let Some(resolver) = &auth.subjects {
        // No subject: the call's resolution fails (`unauthenticated`).
        let (parts, body) = request.into_parts();
        let subject = resolver.resolve(&parts).ok();
        request = Request::from_parts(parts, body);
        subject
    } else {
        Some(Subject::new("local"))
    };
    if let Some(subject) = subject {
        request.extensions_mut().insert(subject);
    }
    next.run(request).await
}

/// Resolves the subject the auth layer put in the HTTP request.
struct HttpSubject;

impl SubjectResolver<RequestContext<RoleServer>> for HttpSubject {
    fn resolve(&self, context: &RequestContext<RoleServer>) -> Result<Subject, Unauthenticated> {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Subject>())
            .filter(|s| s.is_authenticated())
            .cloned()
            .ok_or(Unauthenticated)
    }
}

/// The `Host` values accepted when none are configured (rmcp's default).
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A host name (without IPv6 brackets) and an optional port.
fn authority_parts(authority: &Authority) -> (&str, Option<u16>) {
    (
        authority.host().trim_matches(['[', ']']),
        authority.port_u16(),
    )
}

/// A `Host` allow-list, parsed once: an entry without a port allows the
/// host on any port, one with a port only on that port, and an empty list
/// allows every host. Host names compare without regard to ASCII case.
pub(crate) struct Hosts {
    entries: Vec<(String, Option<u16>)>,
}

impl Hosts {
    pub(crate) fn new(allowed: &[String]) -> Hosts {
        let entries = allowed
            .iter()
            .map(|entry| {
                let entry = entry.trim();
                match Authority::try_from(entry) {
                    Ok(a) => {
                        let (name, port) = authority_parts(&a);
                        (name.to_ascii_lowercase(), port)
                    }
                    Err(_) => (entry.trim_matches(['[', ']']).to_ascii_lowercase(), None),
                }
            })
            .collect();
        Hosts { entries }
    }

    /// Whether a `Host` header value is allowed.
    pub(crate) fn allows(&self, host: Option<&str>) -> bool {
        if self.entries.is_empty() {
            return true;
        }
        let Some(Ok(authority)) = host.map(Authority::try_from) else {
            return false;
        };
        let (host, port) = authority_parts(&authority);
        self.entries.iter().any(|(name, entry_port)| {
            name.eq_ignore_ascii_case(host) && entry_port.is_none_or(|p| port == Some(p))
        })
    }
}

/// `GET /metrics`: the exposition, for allowed hosts only.
async fn serve_metrics(
    State((metrics, hosts)): State<(Metrics, Arc<Hosts>)>,
    request: Request,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok());
    if !hosts.allows(host) {
        return (
            StatusCode::FORBIDDEN,
            "Forbidden: Host header is not allowed",
        )
            .into_response();
    }
    (
        [(header::CONTENT_TYPE, telemetry::CONTENT_TYPE)],
        metrics.encode(),
    )
        .into_response()
}

/// The axum router serving `service` at `/mcp` (and `/metrics` when the
/// options have metrics).
pub fn router(service: CodeMode, options: &HttpOptions) -> Router {
    let mut handler = CodeModeServer::new(service, Arc::new(HttpSubject));
    if let Some(metrics) = &options.metrics {
        handler = handler.with_metrics(metrics.clone());
    }
    if let Some((name, version)) = &options.server_info {
        handler = handler.with_server_info(name, version);
    }
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    if let Some(hosts) = &options.allowed_hosts {
        config = config.with_allowed_hosts(hosts.clone());
    }
    if !options.allowed_origins.is_empty() {
        config = config.with_allowed_origins(options.allowed_origins.clone());
    }
    let fallback = {
        let handler = handler.clone();
        StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        )
    };
    let hosts = allowed_hosts(options);
    let mcp = Arc::new(Direct {
        server: handler,
        fallback,
        hosts: hosts.clone(),
        max_body_bytes: MAX_BODY_BYTES,
    });
    let mut router = Router::new()
        .nest_service("/mcp", any(direct::serve).with_state(mcp))
        .layer(middleware::from_fn_with_state(
            hosts.clone(),
            crate::strict::refuse_duplicates,
        ));
    if let Some(metrics) = &options.metrics {
        let state = (metrics.clone(), hosts);
        router = router.route("/metrics", get(serve_metrics).with_state(state));
    }
    with_auth(router, options)
}

/// The effective `Host` allow-list of `options`.
fn allowed_hosts(options: &HttpOptions) -> Arc<Hosts> {
    let hosts = match &options.allowed_hosts {
        Some(hosts) => hosts.clone(),
        None => LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect(),
    };
    Arc::new(Hosts::new(&hosts))
}

/// `router` behind the authentication of `options`.
fn with_auth(router: Router, options: &HttpOptions) -> Router {
    let auth_state = Arc::new(Auth {
        tokens: options.tokens.clone(),
        subjects: options.subjects.clone(),
    });
    router.layer(middleware::from_fn_with_state(auth_state, auth))
}

/// A router serving only `GET /metrics` (for a stdio server's metrics,
/// `[telemetry] listen`), behind the same `Host` allow-list and tokens as
/// `/mcp` would be.
pub fn metrics_router(metrics: Metrics, options: &HttpOptions) -> Router {
    let state = (metrics, allowed_hosts(options));
    let router = Router::new().route("/metrics", get(serve_metrics).with_state(state));
    with_auth(router, options)
}

/// Listens on `addr` and serves until the process ends. Refuses a
/// non-loopback address without tokens.
pub async fn serve_http(
    service: CodeMode,
    addr: &str,
    options: &HttpOptions,
) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() && options.tokens.is_empty() {
        return Err(format!(
            "refusing to listen on non-loopback address {local} without authentication \
             (configure [[http.tokens]])"
        )
        .into());
    }
    eprintln!("codemode: listening on http://{local}/mcp");
    axum::serve(listener, router(service, options)).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_allowed(host: Option<&str>, allowed: &[String]) -> bool {
        Hosts::new(allowed).allows(host)
    }

    #[test]
    fn hosts_match_like_rmcp() {
        let loopback: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
        assert!(host_allowed(Some("localhost:8080"), &loopback));
        assert!(host_allowed(Some("LOCALHOST"), &loopback));
        assert!(host_allowed(Some("127.0.0.1:1"), &loopback));
        assert!(host_allowed(Some("[::1]:8080"), &loopback));
        assert!(!host_allowed(Some("evil.example:8080"), &loopback));
        assert!(!host_allowed(Some("localhost.evil.example"), &loopback));
        assert!(!host_allowed(None, &loopback));
        assert!(!host_allowed(Some("bad host"), &loopback));
        let ported = vec!["mcp.example.com:443".to_string()];
        assert!(host_allowed(Some("mcp.example.com:443"), &ported));
        assert!(!host_allowed(Some("mcp.example.com:444"), &ported));
        assert!(!host_allowed(Some("mcp.example.com"), &ported));
        assert!(host_allowed(Some("anything"), &[]));
    }

    #[test]
    fn tokens_match_by_digest() {
        let digest = token_digest_hex("s3cret");
        let tokens = vec![Token::from_hex_digest("alice", &digest).expect("valid")];
        let alice = authenticate(&tokens, Some("Bearer s3cret")).expect("authenticated");
        assert_eq!(alice.id(), "alice");
        assert!(authenticate(&tokens, Some("Bearer s3cre")).is_none());
        assert!(authenticate(&tokens, Some("Basic s3cret")).is_none());
        assert!(authenticate(&tokens, None).is_none());
        assert!(Token::from_hex_digest("alice", "abc").is_err());
        assert!(Token::from_hex_digest("", &digest).is_err());
        assert!(Token::from_hex_digest("alice", &"g".repeat(64)).is_err());
    }
}
