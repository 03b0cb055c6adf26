//! What a capability says about its own behaviour.
//!
//! [`Annotations`] are the four hints of the typed tools guide
//! (`docs/architecture.md`, sections 6 and 11): whether a call only reads
//! (`read_only`), may destroy or overwrite something (`destructive`), may
//! be repeated with the same arguments without further effect
//! (`idempotent`), and reaches beyond the host's own data (`open_world`).
//! The defaults are the guide's: false, true, false, true — a capability
//! that says nothing is assumed to write, destroy and reach out. They
//! describe behaviour and enforce nothing by themselves: policies read them
//! (Rego sees `input.capability.annotations`), and an *ask* policy can ask
//! a person before a destructive call. Typed capabilities set them through
//! the builder, manifest entries through an `annotations` object, upstream
//! MCP tools through their `annotations` hints, and HTTP operations from
//! their method ([`Annotations::for_http_method`]).

use serde::{Deserialize, Serialize};

/// The behaviour hints of one capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Annotations {
    /// Calls only read; nothing changes.
    pub read_only: bool,
    /// A call may destroy or overwrite something (meaningful when not
    /// read-only).
    pub destructive: bool,
    /// Repeating a call with the same arguments has no further effect.
    pub idempotent: bool,
    /// Calls reach systems beyond the host's own data.
    pub open_world: bool,
}

impl Default for Annotations {
    /// The guide's defaults: read-only false, destructive true, idempotent
    /// false, open-world true.
    fn default() -> Annotations {
        Annotations {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        }
    }
}

impl Annotations {
    /// A capability that only reads the host's own data: read-only, not
    /// destructive, idempotent, closed-world.
    pub const fn read_only_closed() -> Annotations {
        Annotations {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        }
    }

    /// The annotations of an HTTP operation from its method (any case):
    /// `GET`, `HEAD`, `OPTIONS` and `TRACE` are read-only, not destructive
    /// and idempotent; `DELETE` is destructive and idempotent; `PUT` is
    /// idempotent (and destructive: it replaces); anything else (`POST`,
    /// `PATCH`) keeps the defaults. Every HTTP operation is open-world.
    pub fn for_http_method(method: &str) -> Annotations {
        let method = method.to_ascii_uppercase();
        match method.as_str() {
            "GET" | "HEAD" | "OPTIONS" | "TRACE" => Annotations {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: true,
            },
            "DELETE" | "PUT" => Annotations {
                idempotent: true,
                ..Annotations::default()
            },
            _ => Annotations::default(),
        }
    }

    /// The annotations of upstream MCP hints (`readOnlyHint`,
    /// `destructiveHint`, `idempotentHint`, `openWorldHint`); a hint left
    /// out keeps its default.
    pub fn from_hints(
        read_only: Option<bool>,
        destructive: Option<bool>,
        idempotent: Option<bool>,
        open_world: Option<bool>,
    ) -> Annotations {
        let d = Annotations::default();
        Annotations {
            read_only: read_only.unwrap_or(d.read_only),
            destructive: destructive.unwrap_or(d.destructive),
            idempotent: idempotent.unwrap_or(d.idempotent),
            open_world: open_world.unwrap_or(d.open_world),
        }
    }

    /// The annotation with this name (`read_only`, `destructive`,
    /// `idempotent`, `open_world`), or `None` for another name.
    pub fn get(&self, name: &str) -> Option<bool> {
        match name {
            "read_only" => Some(self.read_only),
            "destructive" => Some(self.destructive),
            "idempotent" => Some(self.idempotent),
            "open_world" => Some(self.open_world),
            _ => None,
        }
    }

    /// The four names, as policies and configuration spell them.
    pub const NAMES: [&'static str; 4] = ["read_only", "destructive", "idempotent", "open_world"];

    /// The JSON object policies see: exactly the four keys.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "read_only": self.read_only,
            "destructive": self.destructive,
            "idempotent": self.idempotent,
            "open_world": self.open_world,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_guides() {
        let d = Annotations::default();
        assert_eq!(
            (d.read_only, d.destructive, d.idempotent, d.open_world),
            (false, true, false, true)
        );
        let partial: Annotations = serde_json::from_str(r#"{"read_only": true}"#).unwrap();
        assert_eq!(
            partial,
            Annotations {
                read_only: true,
                ..Annotations::default()
            }
        );
        assert!(serde_json::from_str::<Annotations>(r#"{"readonly": true}"#).is_err());
    }

    #[test]
    fn http_methods() {
        let get = Annotations::for_http_method("get");
        assert!(get.read_only && !get.destructive && get.idempotent && get.open_world);
        assert_eq!(Annotations::for_http_method("HEAD"), get);
        let delete = Annotations::for_http_method("DELETE");
        assert!(!delete.read_only && delete.destructive && delete.idempotent);
        let put = Annotations::for_http_method("PUT");
        assert!(!put.read_only && put.idempotent);
        assert_eq!(Annotations::for_http_method("POST"), Annotations::default());
        assert_eq!(
            Annotations::for_http_method("PATCH"),
            Annotations::default()
        );
    }

    #[test]
    fn hints_and_names() {
        let a = Annotations::from_hints(Some(true), None, Some(true), Some(false));
        assert_eq!(
            a,
            Annotations {
                read_only: true,
                destructive: true,
                idempotent: true,
                open_world: false
            }
        );
        assert_eq!(a.get("open_world"), Some(false));
        assert_eq!(a.get("other"), None);
        assert_eq!(
            a.to_json(),
            serde_json::json!({"read_only": true, "destructive": true, "idempotent": true, "open_world": false})
        );
    }
}
