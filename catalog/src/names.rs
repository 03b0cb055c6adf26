//! Capability names and IDs.
//!
//! A [`CapabilityName`] is what a program calls: dotted Starlark
//! identifiers (`records.lookup`), at least two segments, whose first
//! segment is not a reserved root (a universe name or `set`) and no segment
//! a keyword. A [`CapabilityId`] is the stable identity that policies and
//! disabling use (`records.entry.lookup`, `openapi.github.pulls/list`,
//! `openapi.pets.GET /pets/{petId}`): 1–128 printable ASCII characters,
//! not starting or ending with a space. Both are validated on construction, so a value of
//! either type is always well formed.

use codemode_vm::KEYWORDS;
use std::fmt;

/// Whether `root` may not be a capability name's first segment: every name
/// of the language surface's universe (the VM's own list, so the two cannot
/// drift), plus `set`, which the language reserves.
pub fn is_reserved_root(root: &str) -> bool {
    root == "set" || codemode_vm::UNIVERSE_NAMES.contains(&root)
}

/// The longest name or ID accepted.
pub const MAX_NAME_LEN: usize = 128;

/// Why a name or ID is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("capability name {0:?} must be dotted identifiers with at least two segments")]
    Syntax(String),
    #[error("capability name {0:?} has a reserved first segment")]
    ReservedRoot(String),
    #[error("capability name {0:?} has a keyword as a segment")]
    Keyword(String),
    #[error("capability ID {0:?} must be 1-128 printable ASCII characters, not starting or ending with a space")]
    IdSyntax(String),
}

/// A valid dotted capability name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CapabilityName(String);

impl CapabilityName {
    /// Validates `name`.
    pub fn new(name: impl Into<String>) -> Result<CapabilityName, NameError> {
        let name = name.into();
        if name.len() > MAX_NAME_LEN {
            return Err(NameError::Syntax(name));
        }
        let segments: Vec<&str> = name.split('.').collect();
        if segments.len() < 2 || !segments.iter().all(|s| is_identifier(s)) {
            return Err(NameError::Syntax(name));
        }
        if is_reserved_root(segments[0]) {
            return Err(NameError::ReservedRoot(name));
        }
        if segments.iter().any(|s| KEYWORDS.contains(s)) {
            return Err(NameError::Keyword(name));
        }
        Ok(CapabilityName(name))
    }

    /// The dotted name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CapabilityName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A valid stable capability ID.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CapabilityId(String);

impl CapabilityId {
    /// Validates `id`.
    pub fn new(id: impl Into<String>) -> Result<CapabilityId, NameError> {
        let id = id.into();
        let ok = !id.is_empty()
            && id.len() <= MAX_NAME_LEN
            && id.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
            && !id.starts_with(' ')
            && !id.ends_with(' ');
        if ok {
            Ok(CapabilityId(id))
        } else {
            Err(NameError::IdSyntax(id))
        }
    }

    /// The ID.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CapabilityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dotted_identifiers_outside_reserved_roots() {
        assert!(CapabilityName::new("records.lookup").is_ok());
        assert!(CapabilityName::new("stats.sum").is_ok());
        assert!(CapabilityName::new("time.now").is_ok());
        assert!(CapabilityName::new("_x.y2").is_ok());
        for bad in [
            "records", "", ".a", "a.", "a..b", "a.1b", "a.b-c", "a b.c", "é.x",
        ] {
            assert_eq!(
                CapabilityName::new(bad),
                Err(NameError::Syntax(bad.into())),
                "{bad}"
            );
        }
        let roots = codemode_vm::UNIVERSE_NAMES.iter().chain(&["set"]);
        for root in roots {
            let name = format!("{root}.x");
            assert_eq!(
                CapabilityName::new(name.clone()),
                Err(NameError::ReservedRoot(name))
            );
        }
        assert_eq!(
            CapabilityName::new("records.for"),
            Err(NameError::Keyword("records.for".into()))
        );
        assert!(CapabilityName::new(format!("a.{}", "b".repeat(127))).is_err());
    }

    #[test]
    fn ids_are_short_ascii_words() {
        assert!(CapabilityId::new("records.entry.lookup").is_ok());
        assert!(CapabilityId::new("github.actions.add-labels_2").is_ok());
        assert!(CapabilityId::new("").is_err());
        assert!(CapabilityId::new("openapi.github.pulls/list").is_ok());
        assert!(CapabilityId::new("openapi.pets.GET /pets/{petId}").is_ok());
        for bad in [" a", "a ", "a\tb", "a\nb", "é"] {
            assert!(CapabilityId::new(bad).is_err(), "{bad:?}");
        }
        assert!(CapabilityId::new("x".repeat(129)).is_err());
    }
}
