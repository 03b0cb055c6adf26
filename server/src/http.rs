//! The stateless Streamable HTTP transport at `/mcp`, on axum and rmcp.
//!
//! JSON responses, no session ID, no SSE keep-alive, request bodies of at
//! most [`max_body_bytes`] (413 beyond), 405 for GET and DELETE, and `Host`/`Origin` allow-lists
//! against DNS rebinding (loopback names and loopback origins by default;
//! a config with `allowed_hosts = []` is refused) — those are rmcp's; this
//! module adds bearer authentication in front: tokens are kept as SHA-256
//! digests and compared in constant time (the scheme `Bearer` in any case), a request without a valid token
//! gets 401 with `WWW-Authenticate: Bearer`, and the subject of the token
//! travels in the request's extensions to the handler's resolver. Without
//! tokens every request is the local subject — unless the embedding host
//! gives a subject resolver ([`HttpOptions::subjects`]), which maps each
//! request (say, what its own authentication middleware put in the
//! extensions) to a subject or to none (`unauthenticated`) — and
//! [`serve_http`] refuses a non-loopback address.
//!
//! Every request body is read in whole within the body deadline before it
//! goes on ([`connection`]); `GET /healthz` and `GET /readyz`
//! ([`health`]) sit outside every check; [`serve_http`] serves on hyper
//! with the connection timeouts, the connection cap and the graceful
//! drain of [`listener`].
//!
//! With [`Metrics`] in the options, `GET /metrics` serves them in the
//! Prometheus text format. It is behind the same two gates as `/mcp`: the
//! `Host` allow-list (checked here as rmcp checks it, 403 otherwise) and,
//! when tokens are configured, a valid bearer token (any subject's).
//! [`metrics_router`], the `[telemetry] listen` listener, also admits a
//! `Host` that is an IP address (what a scraper by pod IP sends; a DNS
//! rebinding request always names a host).

pub mod connection;
pub mod health;
pub(crate) mod hosts;
pub mod listener;
pub mod plain_call;
pub(crate) mod request;

use crate::config::{HttpConfig, TelemetryConfig};
use crate::mcp::CodeModeServer;
use crate::telemetry::{self, Metrics};
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use codemode_catalog::{CodeMode, Subject, SubjectResolver, Unauthenticated};
use connection::ConnectionLimits;
use hosts::Hosts;
use listener::DrainOptions;
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::RoleServer;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What a request body may hold beyond its program's source: the
/// JSON-RPC envelope and the other arguments.
pub const BODY_ENVELOPE_BYTES: usize = 64 * 1024;

/// The largest request body for programs of at most `max_source_bytes`:
/// six bytes per byte of source (a control character JSON-escaped as
/// `\u0001` is six) and [`BODY_ENVELOPE_BYTES`].
pub fn max_body_bytes(max_source_bytes: usize) -> usize {
    max_source_bytes
        .saturating_mul(6)
        .saturating_add(BODY_ENVELOPE_BYTES)
}

/// The default of `[http] max_body_bytes_in_flight`: bytes of request
/// bodies held at once across all connections.
pub const DEFAULT_BODY_BYTES_IN_FLIGHT: usize = 64 * 1024 * 1024;

/// Why an `[http]` (or `[telemetry] listen`) configuration is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HttpConfigError {
    /// `allowed_hosts = []`, which would turn the `Host` check off.
    #[error(
        "[http] allowed_hosts = [] would allow every Host: list the names clients use, \
         or remove the key to allow loopback names only"
    )]
    NoAllowedHosts,
    /// A subject's token is the documented example token.
    #[error(
        "token of {0:?}: that is the digest of the documented example token \
         \"example-token\"; configure a secret token of your own"
    )]
    ExampleToken(String),
    /// A subject's digest is all zeros, the shipped Secret's placeholder.
    #[error(
        "token of {0:?}: its sha256 is all zeros, the placeholder of the shipped \
         Secret; put the digest of a secret token of your own there \
         (printf %s \"$TOKEN\" | sha256sum)"
    )]
    PlaceholderToken(String),
    /// A subject's digest is not 64 characters long.
    #[error("token of {0:?}: sha256 must be 64 hex digits")]
    DigestLength(String),
    /// A subject's digest has a character that is not a hex digit.
    #[error("token of {0:?}: sha256 must be hex")]
    DigestNotHex(String),
    /// A token whose subject is empty.
    #[error("a token's subject must not be empty")]
    NoSubject,
    /// Two subjects have one token.
    #[error("tokens of {0:?} and {1:?} have the same sha256: every token must be distinct")]
    SharedToken(String, String),
    /// Metrics without a token on a non-loopback address, not allowed.
    #[error(
        "refusing to serve metrics on non-loopback address {0} without a token: \
         configure [[http.tokens]] (and keep listen_requires_token), or set \
         [telemetry] allow_public_listen = true to serve them to anyone who reaches it"
    )]
    PublicMetrics(std::net::SocketAddr),
}

/// One accepted bearer token.
#[derive(Clone)]
pub struct Token {
    digest: [u8; 32],
    subject: Subject,
}

impl Token {
    /// A token from the hex SHA-256 digest of its secret.
    pub fn from_hex_digest(subject: &str, hex: &str) -> Result<Token, HttpConfigError> {
        let bytes = hex.as_bytes();
        if bytes.len() != 64 {
            return Err(HttpConfigError::DigestLength(subject.into()));
        }
        let mut digest = [0u8; 32];
        for (i, pair) in bytes.chunks(2).enumerate() {
            let hi = hex_value(pair[0]);
            let lo = hex_value(pair[1]);
            match (hi, lo) {
                (Some(h), Some(l)) => digest[i] = h << 4 | l,
                _ => return Err(HttpConfigError::DigestNotHex(subject.into())),
            }
        }
        if subject.is_empty() {
            return Err(HttpConfigError::NoSubject);
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
    /// Allowed `Origin` values; empty allows loopback origins only
    /// ([`LOOPBACK_ORIGINS`]).
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
    /// Timeouts and the connection cap of the listener (the body deadline
    /// applies in the router too).
    pub limits: ConnectionLimits,
    /// Cancelled to drain: `/readyz` turns 503 and the listener stops.
    pub drain: CancellationToken,
    /// How long `/readyz` answers 503 before the listener stops accepting.
    pub drain_delay: Duration,
    /// Bytes of request bodies held at once across all connections
    /// (`None`: [`DEFAULT_BODY_BYTES_IN_FLIGHT`]).
    pub body_bytes_in_flight: Option<usize>,
}

/// Maps an HTTP request (its headers and extensions) to its subject.
pub type HttpResolver = Arc<dyn SubjectResolver<axum::http::request::Parts>>;

impl HttpOptions {
    /// The options of a config's `[http]` table.
    /// Refuses `allowed_hosts = []` (it would turn the `Host` check off),
    /// the example configuration's token, an all-zero digest (the
    /// placeholder of `deploy/kubernetes/secret.yaml`) and two subjects
    /// with one token.
    pub fn from_config(config: &HttpConfig) -> Result<HttpOptions, HttpConfigError> {
        if config.allowed_hosts.as_ref().is_some_and(Vec::is_empty) {
            return Err(HttpConfigError::NoAllowedHosts);
        }
        let mut tokens: Vec<Token> = Vec::with_capacity(config.tokens.len());
        for t in &config.tokens {
            if t.sha256.eq_ignore_ascii_case(EXAMPLE_TOKEN_DIGEST) {
                return Err(HttpConfigError::ExampleToken(t.subject.clone()));
            }
            if !t.sha256.is_empty() && t.sha256.bytes().all(|b| b == b'0') {
                return Err(HttpConfigError::PlaceholderToken(t.subject.clone()));
            }
            let token = Token::from_hex_digest(&t.subject, &t.sha256)?;
            if let Some(other) = tokens.iter().find(|o| o.digest == token.digest) {
                return Err(HttpConfigError::SharedToken(
                    other.subject.id().to_string(),
                    token.subject.id().to_string(),
                ));
            }
            tokens.push(token);
        }
        Ok(HttpOptions {
            allowed_hosts: config.allowed_hosts.clone(),
            allowed_origins: config.allowed_origins.clone(),
            tokens,
            metrics: None,
            limits: config.connection_limits(),
            drain: CancellationToken::new(),
            drain_delay: Duration::from_millis(config.drain_delay_ms.unwrap_or(0)),
            body_bytes_in_flight: config.max_body_bytes_in_flight,
            ..HttpOptions::default()
        })
    }
}

/// The SHA-256 digest of `example-token`, the token of the documentation's
/// examples: refused in a configuration.
pub const EXAMPLE_TOKEN_DIGEST: &str =
    "4d1566a1d7df42a8517456d60ea06ed284e535cfe4c956aa6ee172dbcdf945f7";

/// Constant-time equality of two digests.
fn same_digest(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The subject of a bearer token, checking every token in constant time.
fn authenticate(tokens: &[Token], header: Option<&str>) -> Option<Subject> {
    // `Authorization: <scheme> <token>`; the scheme is case-insensitive.
    let (scheme, presented) = header?.trim_start().split_once([' ', '\t'])?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let presented = presented.trim();
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

/// The `Origin` values accepted when none are configured: the loopback
/// names on any port, over HTTP or HTTPS (rmcp's `:*` notation).
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// `GET /metrics`: the exposition, for allowed hosts only.
async fn serve_metrics(
    State((metrics, hosts)): State<(Metrics, Arc<Hosts>)>,
    request: Request,
) -> Response {
    if !hosts.allow(request.headers()) {
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
    let max_body = max_body_bytes(service.config().limits.max_source_bytes);
    let bodies = connection::BodyLimits::new(
        options.limits.body_read,
        max_body,
        options
            .body_bytes_in_flight
            .unwrap_or(DEFAULT_BODY_BYTES_IN_FLIGHT),
    );
    let max_body = bodies.max();
    let mcp = mcp_endpoint(service, options, max_body);
    let hosts = mcp.hosts.clone();
    let mut router = Router::new().nest_service("/mcp", any(plain_call::serve).with_state(mcp));
    if let Some(metrics) = &options.metrics {
        let state = (metrics.clone(), hosts);
        router = router.route("/metrics", get(serve_metrics).with_state(state));
    }
    let router = router.layer(middleware::from_fn_with_state(
        bodies,
        connection::bounded_body,
    ));
    with_auth(router, options).merge(health::routes(options.drain.clone()))
}

/// The `/mcp` endpoint of `service`: the plain-call path and rmcp's
/// service behind it, with request bodies of at most `max_body` bytes.
fn mcp_endpoint(
    service: CodeMode,
    options: &HttpOptions,
    max_body: usize,
) -> Arc<plain_call::PlainCalls> {
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
        .with_max_request_body_bytes(max_body);
    if let Some(hosts) = &options.allowed_hosts {
        config = config.with_allowed_hosts(hosts.clone());
    }
    config = if options.allowed_origins.is_empty() {
        config.with_allowed_origins(LOOPBACK_ORIGINS)
    } else {
        config.with_allowed_origins(options.allowed_origins.clone())
    };
    let fallback = {
        let handler = handler.clone();
        StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        )
    };
    Arc::new(plain_call::PlainCalls {
        server: handler,
        fallback,
        hosts: Arc::new(hosts::host_list(options)),
    })
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
/// `/mcp` would be, except that a `Host` that is an IP address is allowed
/// too: a scraper reaches each replica by its address, and a DNS
/// rebinding request names a host, never an address.
pub fn metrics_router(metrics: Metrics, options: &HttpOptions) -> Router {
    let hosts = hosts::host_list(options).and_ip_addresses();
    let state = (metrics, Arc::new(hosts));
    let router = Router::new().route("/metrics", get(serve_metrics).with_state(state));
    with_auth(router, options)
}

/// The options of the `[telemetry] listen` listener: those of `[http]`,
/// without its tokens when `listen_requires_token = false`.
pub fn metrics_listener_options(
    http: &HttpConfig,
    telemetry: &TelemetryConfig,
) -> Result<HttpOptions, HttpConfigError> {
    let mut options = HttpOptions::from_config(http)?;
    if telemetry.listen_requires_token == Some(false) {
        options.tokens.clear();
    }
    Ok(options)
}

/// Whether the `[telemetry] listen` listener may serve on `local`, with
/// `options` (from [`metrics_listener_options`]): a loopback address
/// always; any other address only if its `/metrics` needs a token, or if
/// `allow_public_listen = true` says that metrics without a token beyond
/// loopback are meant (a scraper by pod IP).
pub fn check_metrics_address(
    local: std::net::SocketAddr,
    options: &HttpOptions,
    telemetry: &TelemetryConfig,
) -> Result<(), HttpConfigError> {
    if local.ip().is_loopback() || !options.tokens.is_empty() || telemetry.allow_public_listen {
        return Ok(());
    }
    Err(HttpConfigError::PublicMetrics(local))
}

/// Serves `metrics_router` on `listener` (the `[telemetry] listen`
/// listener) with the timeouts and connection cap of `options`, as the
/// `--http` listener is served, until the process ends.
pub async fn serve_metrics_listener(
    listener: tokio::net::TcpListener,
    metrics: Metrics,
    options: &HttpOptions,
) {
    let app = metrics_router(metrics, options);
    let drain = DrainOptions {
        token: options.drain.clone(),
        delay: Duration::ZERO,
        grace: Duration::from_secs(1),
    };
    listener::serve(listener, app, options.limits, drain).await;
}

/// The listen backlog: connections the kernel completes before the server
/// accepts them (capped by `net.core.somaxconn`). A burst of clients past
/// it has its handshakes dropped and retried a second later, health
/// probes among them; tokio's default is 1,024.
pub const LISTEN_BACKLOG: u32 = 4096;

/// A listener on `addr` (`host:port`; the first of its addresses that
/// binds) with a backlog of [`LISTEN_BACKLOG`].
pub async fn bind(addr: &str) -> std::io::Result<tokio::net::TcpListener> {
    let mut last = None;
    for a in tokio::net::lookup_host(addr).await? {
        let socket = if a.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        // As `TcpListener::bind` does: a restarted server binds at once.
        socket.set_reuseaddr(true)?;
        match socket.bind(a) {
            Ok(()) => return socket.listen(LISTEN_BACKLOG),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{addr} names no address"),
        )
    }))
}

/// Listens on `addr` and serves until the drain (see [`listener`]) ends.
/// Refuses a non-loopback address without tokens.
pub async fn serve_http(
    service: CodeMode,
    addr: &str,
    options: &HttpOptions,
) -> Result<(), Box<dyn std::error::Error>> {
    let listener = bind(addr).await?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() && options.tokens.is_empty() {
        return Err(format!(
            "refusing to listen on non-loopback address {local} without authentication \
             (configure [[http.tokens]])"
        )
        .into());
    }
    eprintln!("codemode: listening on http://{local}/mcp");
    // In-flight requests may still wait for a slot and run to their limit.
    let config = service.config();
    let grace = config.max_queue_wait + config.limits.max_time + Duration::from_secs(1);
    let drain = DrainOptions {
        token: options.drain.clone(),
        delay: options.drain_delay,
        grace,
    };
    let app = router(service, options);
    listener::serve(listener, app, options.limits, drain).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http_config(text: &str) -> Result<HttpOptions, HttpConfigError> {
        let file = crate::config::FileConfig::from_toml(text).expect("valid TOML");
        HttpOptions::from_config(&file.http)
    }

    /// A plain call's request waits in the endpoint's future (boxed by
    /// axum) for as long as its program runs or waits on a capability, so
    /// that future is a part of every open execution's memory: it stays
    /// small because rmcp's path and the inline tools are boxed apart
    /// (5.8 KiB inline, 1.2 KiB boxed, in a release build).
    #[tokio::test]
    async fn a_waiting_plain_call_holds_a_small_future() {
        let service =
            crate::catalogs::load(&["demo".into()], &[], Default::default()).expect("demo loads");
        let endpoint = mcp_endpoint(service, &HttpOptions::default(), 1 << 20);
        let future = plain_call::serve(State(endpoint), Request::new(axum::body::Body::empty()));
        let size = std::mem::size_of_val(&future);
        assert!(size <= 2048, "the /mcp endpoint's future is {size} bytes");
    }

    #[test]
    fn metrics_without_a_token_stay_on_loopback_unless_allowed() {
        let options = http_config("").expect("valid");
        let mut telemetry = crate::config::TelemetryConfig::default();
        let loopback: std::net::SocketAddr = "127.0.0.1:9464".parse().expect("address");
        let public: std::net::SocketAddr = "10.0.0.7:9464".parse().expect("address");
        assert_eq!(
            check_metrics_address(loopback, &options, &telemetry),
            Ok(())
        );
        let e = check_metrics_address(public, &options, &telemetry).err();
        assert_eq!(e, Some(HttpConfigError::PublicMetrics(public)));
        assert_eq!(
            e.map(|e| e.to_string()).as_deref(),
            Some(
                "refusing to serve metrics on non-loopback address 10.0.0.7:9464 without a \
                 token: configure [[http.tokens]] (and keep listen_requires_token), or set \
                 [telemetry] allow_public_listen = true to serve them to anyone who reaches it"
            )
        );
        telemetry.allow_public_listen = true;
        assert_eq!(check_metrics_address(public, &options, &telemetry), Ok(()));
    }

    #[test]
    fn configs_that_weaken_the_checks_are_refused() {
        let e = http_config("[http]\nallowed_hosts = []\n")
            .err()
            .expect("refused");
        assert_eq!(e, HttpConfigError::NoAllowedHosts);
        assert_eq!(
            e.to_string(),
            "[http] allowed_hosts = [] would allow every Host: list the names clients use, \
             or remove the key to allow loopback names only"
        );
        let example = format!(
            "[[http.tokens]]\nsubject = \"x\"\nsha256 = \"{}\"\n",
            token_digest_hex("example-token")
        );
        let e = http_config(&example).err().expect("refused");
        assert_eq!(e, HttpConfigError::ExampleToken("x".into()));
        assert_eq!(
            e.to_string(),
            "token of \"x\": that is the digest of the documented example token \
             \"example-token\"; configure a secret token of your own"
        );
        let capitals = example.replace(
            &token_digest_hex("example-token"),
            &EXAMPLE_TOKEN_DIGEST.to_uppercase(),
        );
        let e = http_config(&capitals)
            .err()
            .expect("refused in capitals too");
        assert_eq!(e, HttpConfigError::ExampleToken("x".into()));
        let zeros = example.replace(&token_digest_hex("example-token"), &"0".repeat(64));
        let e = http_config(&zeros).err().expect("refused");
        assert_eq!(e, HttpConfigError::PlaceholderToken("x".into()));
        assert_eq!(
            e.to_string(),
            "token of \"x\": its sha256 is all zeros, the placeholder of the shipped Secret; \
             put the digest of a secret token of your own there (printf %s \"$TOKEN\" | sha256sum)"
        );
        let digest = token_digest_hex("s3cret");
        let twice = format!(
            "[[http.tokens]]\nsubject = \"alice\"\nsha256 = \"{digest}\"\n\
             [[http.tokens]]\nsubject = \"bob\"\nsha256 = \"{}\"\n",
            digest.to_uppercase()
        );
        let e = http_config(&twice).err().expect("refused");
        assert_eq!(
            e,
            HttpConfigError::SharedToken("alice".into(), "bob".into())
        );
        assert_eq!(
            e.to_string(),
            "tokens of \"alice\" and \"bob\" have the same sha256: every token must be distinct"
        );
        let two = format!(
            "[http]\nallowed_hosts = [\"mcp.example.com\"]\n[[http.tokens]]\nsubject = \"alice\"\nsha256 = \"{digest}\"\n\
             [[http.tokens]]\nsubject = \"bob\"\nsha256 = \"{}\"\n",
            token_digest_hex("other")
        );
        let options = http_config(&two).expect("valid");
        assert_eq!(options.tokens.len(), 2);
    }

    #[test]
    fn tokens_match_by_digest() {
        let digest = token_digest_hex("s3cret");
        let tokens = vec![Token::from_hex_digest("alice", &digest).expect("valid")];
        let alice = authenticate(&tokens, Some("Bearer s3cret")).expect("authenticated");
        assert_eq!(alice.id(), "alice");
        assert!(authenticate(&tokens, Some("Bearer s3cre")).is_none());
        assert!(authenticate(&tokens, Some("Basic s3cret")).is_none());
        for scheme in ["bearer", "BEARER", "BeArEr"] {
            let header = format!("{scheme} s3cret");
            let found = authenticate(&tokens, Some(&header)).expect("any case");
            assert_eq!(found.id(), "alice");
        }
        assert!(authenticate(&tokens, Some("Bearer\ts3cret")).is_some());
        assert!(authenticate(&tokens, Some("Bearers3cret")).is_none());
        assert!(authenticate(&tokens, Some("Bearer")).is_none());
        assert!(authenticate(&tokens, None).is_none());
        assert_eq!(
            Token::from_hex_digest("alice", "abc").err(),
            Some(HttpConfigError::DigestLength("alice".into()))
        );
        assert_eq!(
            Token::from_hex_digest("", &digest).err(),
            Some(HttpConfigError::NoSubject)
        );
        let e = Token::from_hex_digest("alice", &"g".repeat(64)).err();
        assert_eq!(e, Some(HttpConfigError::DigestNotHex("alice".into())));
        assert_eq!(
            e.map(|e| e.to_string()).as_deref(),
            Some("token of \"alice\": sha256 must be hex")
        );
    }
}
