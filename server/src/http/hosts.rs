//! The `Host` allow-list against DNS rebinding, checked as rmcp checks it.
//!
//! rmcp's Streamable HTTP service checks `Host` itself, but its matching
//! (`host_is_allowed` in rmcp 3.11's `tower.rs`) is private and runs only
//! inside `StreamableHttpService::handle`; the paths that answer before
//! rmcp — a `/mcp` POST's duplicate-member refusal and plain calls
//! ([`super::plain_call`]) — and `/metrics` need the same answer, so
//! [`Hosts`] is that matching, parsed once per router, for them all.

use super::HttpOptions;
use axum::http::uri::Authority;
use axum::http::{header, HeaderMap};

/// The `Host` values accepted when none are configured (rmcp's default).
pub(crate) const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

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
    /// Whether any IP address is allowed too.
    ip_addresses: bool,
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
        Hosts {
            entries,
            ip_addresses: false,
        }
    }

    /// This list, allowing any IP address too.
    pub(crate) fn and_ip_addresses(self) -> Hosts {
        Hosts {
            ip_addresses: true,
            ..self
        }
    }

    /// Whether the `Host` header of a request is allowed.
    pub(crate) fn allow(&self, headers: &HeaderMap) -> bool {
        self.allows(headers.get(header::HOST).and_then(|v| v.to_str().ok()))
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
        if self.ip_addresses && host.parse::<std::net::IpAddr>().is_ok() {
            return true;
        }
        self.entries.iter().any(|(name, entry_port)| {
            name.eq_ignore_ascii_case(host) && entry_port.is_none_or(|p| port == Some(p))
        })
    }
}

/// The effective `Host` allow-list of `options`: its `allowed_hosts`, or
/// the loopback names.
pub(crate) fn host_list(options: &HttpOptions) -> Hosts {
    let hosts = match &options.allowed_hosts {
        Some(hosts) => hosts.clone(),
        None => LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect(),
    };
    Hosts::new(&hosts)
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
}
