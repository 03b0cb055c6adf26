//! The binary's log: stderr only, filtered by `RUST_LOG` (default:
//! warnings), with two caps that no directive can lift, and the helpers
//! that keep foreign text out of it.
//!
//! The caps are a second filter on the same layer, applied after
//! `RUST_LOG`'s: rmcp's events never below `info` (at `debug` and `trace`
//! they carry whole requests, program source and results — a directive as
//! specific as `rmcp::service=debug` used to win over a blanket cap), and
//! an upstream child's stderr ([`CHILD_STDERR_TARGET`], logged at `trace`)
//! only when a directive enables that target at `trace`. Text that comes
//! from elsewhere is logged through [`foreign`] (names an upstream server
//! chose: escaped, at most [`MAX_FOREIGN_CHARS`] characters) and
//! [`redact_urls`] (URLs without userinfo, query or fragment). Every line
//! the log writes passes [`redact_urls`] last ([`Redacting`]), so a URL in
//! any event — rmcp's, a library error's, a configured spec's — loses its
//! userinfo and query before it is written.

use tracing::{Level, Metadata};
use tracing_subscriber::filter::{filter_fn, EnvFilter, FilterExt};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The target of an upstream child's stderr lines.
pub const CHILD_STDERR_TARGET: &str = "codemode::upstream::stderr";

/// The longest foreign name logged, in characters (escapes included).
pub const MAX_FOREIGN_CHARS: usize = 128;

/// Whether the caps let an event through, whatever `RUST_LOG` says.
pub fn within_caps(metadata: &Metadata<'_>) -> bool {
    let target = metadata.target();
    let rmcp = target == "rmcp" || target.starts_with("rmcp::");
    !(rmcp && *metadata.level() > Level::INFO)
}

/// The log layer of `directives` (`RUST_LOG`'s syntax), capped, writing
/// to `writer` (tests capture the output).
pub fn layer_to<S, W>(directives: &str, writer: W) -> impl Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let env = EnvFilter::try_new(directives).unwrap_or_else(|_| EnvFilter::new("warn"));
    tracing_subscriber::fmt::layer()
        .with_writer(Redacting(writer))
        .with_ansi(false)
        .with_filter(env.and(filter_fn(within_caps)))
}

/// A log writer that writes each formatted event with its URLs redacted
/// ([`redact_urls`]); the formatter hands it one whole event per write.
pub struct Redacting<M>(pub M);

impl<'a, M: tracing_subscriber::fmt::MakeWriter<'a>> tracing_subscriber::fmt::MakeWriter<'a>
    for Redacting<M>
{
    type Writer = RedactingWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter(self.0.make_writer())
    }

    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> Self::Writer {
        RedactingWriter(self.0.make_writer_for(meta))
    }
}

/// The writer of [`Redacting`].
pub struct RedactingWriter<W>(W);

impl<W: std::io::Write> std::io::Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        if next_url(&text).is_some() {
            self.0.write_all(redact_urls(&text).as_bytes())?;
        } else {
            self.0.write_all(buf)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Installs the log of `RUST_LOG` (default `warn`), written to `writer`,
/// as the global subscriber (the binary holds the lines of a one-shot
/// command back until its outcome is printed).
pub fn init_to<W>(writer: W)
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let directives = std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".to_string());
    tracing_subscriber::registry()
        .with(layer_to(&directives, writer))
        .init();
}

/// A name chosen elsewhere (an upstream tool's), fit for one log field:
/// control characters, quotes and non-ASCII escaped, at most
/// [`MAX_FOREIGN_CHARS`] characters, with `…` when cut.
pub fn foreign(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let escaped: String = if (c.is_ascii_graphic() && c != '"' && c != '\\') || c == ' ' {
            c.to_string()
        } else {
            c.escape_default().collect()
        };
        if out.chars().count() + escaped.chars().count() > MAX_FOREIGN_CHARS {
            out.push('…');
            break;
        }
        out.push_str(&escaped);
    }
    out
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`), so that
/// foreign text in a log line cannot end the line or drive a terminal.
pub fn escape_controls(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().collect()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `text` with every `http://` or `https://` URL in it cut to its scheme,
/// host, port and path: userinfo, query and fragment removed.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = next_url(rest) {
        out.push_str(&rest[..at]);
        let url = &rest[at..];
        let end = url
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | ')' | '`'))
            .unwrap_or(url.len());
        out.push_str(&redact_url(&url[..end]));
        rest = &url[end..];
    }
    out.push_str(rest);
    out
}

/// The offset of the next `http://` or `https://` in `text`.
fn next_url(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    [lower.find("http://"), lower.find("https://")]
        .into_iter()
        .flatten()
        .min()
}

/// One URL without userinfo, query or fragment.
fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (authority, path) = match rest.find('/') {
        Some(slash) => rest.split_at(slash),
        None => (rest, ""),
    };
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What the capped log of `directives` prints for one event of each
    /// kind.
    fn logged(directives: &str) -> String {
        let captured = Captured::default();
        let sink = captured.clone();
        let subscriber =
            tracing_subscriber::registry().with(layer_to(directives, move || sink.clone()));
        tracing::subscriber::with_default(subscriber, || {
            tracing::debug!(target: "rmcp::service", "rmcp-service-debug");
            tracing::trace!(target: "rmcp", "rmcp-trace");
            tracing::info!(target: "rmcp::service", "rmcp-info");
            tracing::trace!(target: CHILD_STDERR_TARGET, "child-stderr");
            tracing::debug!(target: "codemode_server::http", "own-debug");
            tracing::warn!(target: "codemode_server::http", "own-warn");
            tracing::warn!(
                target: "rmcp::transport",
                url = "https://u:pw@up.example:8443/mcp?token=s3cret",
                "own-url https://u:pw@api.example/v1/items?q=private#f"
            );
        });
        let bytes = captured.0.lock().expect("lock").clone();
        String::from_utf8(bytes).expect("utf-8")
    }

    #[test]
    fn rmcp_is_capped_at_info_whatever_the_directives() {
        for directives in [
            "warn,rmcp::service=debug",
            "rmcp::service=trace",
            "trace",
            "debug,rmcp=trace",
        ] {
            let log = logged(directives);
            assert!(!log.contains("rmcp-service-debug"), "{directives}: {log}");
            assert!(!log.contains("rmcp-trace"), "{directives}: {log}");
        }
        assert!(logged("rmcp=info").contains("rmcp-info"));
        assert!(!logged("warn").contains("rmcp-info"));
        let own = logged("warn,rmcp::service=debug");
        assert!(
            own.contains("own-warn") && !own.contains("own-debug"),
            "{own}"
        );
    }

    #[test]
    fn every_logged_url_is_redacted() {
        let log = logged("warn");
        assert!(
            log.contains("own-url https://api.example/v1/items"),
            "{log}"
        );
        assert!(log.contains("https://up.example:8443/mcp"), "{log}");
        for secret in ["pw", "s3cret", "private", "u:"] {
            assert!(!log.contains(secret), "{secret}: {log}");
        }
    }

    #[test]
    fn child_stderr_only_at_trace() {
        assert!(!logged("debug").contains("child-stderr"));
        assert!(!logged("codemode=debug").contains("child-stderr"));
        assert!(logged("trace").contains("child-stderr"));
        assert!(logged(&format!("warn,{CHILD_STDERR_TARGET}=trace")).contains("child-stderr"));
    }

    #[test]
    fn foreign_names_are_escaped_and_cut() {
        assert_eq!(foreign("read_file"), "read_file");
        assert_eq!(foreign("a\nb\"c\u{1b}[31m"), "a\\nb\\\"c\\u{1b}[31m");
        let long = foreign(&"x".repeat(1000));
        assert_eq!(long.chars().count(), MAX_FOREIGN_CHARS + 1);
        assert!(long.ends_with('…'));
        let escapes = foreign(&"\n".repeat(100));
        assert_eq!(escapes, format!("{}…", "\\n".repeat(MAX_FOREIGN_CHARS / 2)));
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_controls("a\nb\u{1b}[2Jé"), "a\\nb\\u{1b}[2Jé");
    }

    #[test]
    fn urls_lose_userinfo_query_and_fragment() {
        assert_eq!(
            redact_urls("error sending request for url (https://user:pw@api.example.com:8443/mcp?token=s3cret#x)"),
            "error sending request for url (https://api.example.com:8443/mcp)"
        );
        assert_eq!(
            redact_urls("HTTP://a@h/p?q and http://h2?k=v, done"),
            "HTTP://h/p and http://h2 done"
        );
        assert_eq!(redact_urls("no url here"), "no url here");
    }
}
