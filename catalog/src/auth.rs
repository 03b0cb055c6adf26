//! Subjects and authorization.
//!
//! A [`Subject`] is the trusted caller identity that a transport resolves
//! ([`SubjectResolver`]) — never something a program or its arguments can
//! set; an empty one is `unauthenticated`. Every capability call is
//! authorized by a [`Policy`] with the subject, the capability's ID, dotted
//! name and annotations and the canonical arguments, before its handler
//! runs. The service is fail-closed: a denial is `permission denied`, an
//! error (or a panic) of the policy `authorization policy failure`. A
//! policy may also answer [`Decision::Ask`]: the call then waits for a
//! person's approval ([`crate::approval`]). Allowing everything takes an
//! explicit [`AllowAll`].

use crate::annotations::Annotations;
use crate::names::{CapabilityId, CapabilityName};
use codemode_vm::Data;
use std::fmt;

/// A trusted caller identity.
#[derive(Clone, PartialEq, Eq)]
pub struct Subject {
    id: String,
    attributes: serde_json::Map<String, serde_json::Value>,
}

impl fmt::Debug for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Attributes may hold claims; keep them out of logs.
        f.debug_struct("Subject")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Subject {
    /// A subject with this ID and no attributes.
    pub fn new(id: impl Into<String>) -> Subject {
        Subject {
            id: id.into(),
            attributes: serde_json::Map::new(),
        }
    }

    /// Adds an attribute (e.g. a role) that policies can read.
    pub fn with_attribute(mut self, key: impl Into<String>, value: serde_json::Value) -> Subject {
        self.attributes.insert(key.into(), value);
        self
    }

    /// The subject ID.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The attributes.
    pub fn attributes(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.attributes
    }

    /// Whether the subject identifies someone (a non-empty ID).
    pub fn is_authenticated(&self) -> bool {
        !self.id.is_empty()
    }
}

/// The resolver could not establish a subject (`unauthenticated`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unauthenticated")]
pub struct Unauthenticated;

/// Resolves the trusted subject of a request of type `R` (what `R` is
/// belongs to the transport).
pub trait SubjectResolver<R: ?Sized>: Send + Sync {
    /// The subject, or [`Unauthenticated`].
    fn resolve(&self, request: &R) -> Result<Subject, Unauthenticated>;
}

/// Resolves every request to one fixed subject (stdio, tests).
#[derive(Clone, Debug)]
pub struct FixedSubject(pub Subject);

impl<R: ?Sized> SubjectResolver<R> for FixedSubject {
    fn resolve(&self, _request: &R) -> Result<Subject, Unauthenticated> {
        if self.0.is_authenticated() {
            Ok(self.0.clone())
        } else {
            Err(Unauthenticated)
        }
    }
}

/// What a policy decides about one call.
#[derive(Clone, Debug)]
pub struct AuthorizationRequest<'a> {
    pub subject: &'a Subject,
    pub capability_id: &'a CapabilityId,
    pub name: &'a CapabilityName,
    /// The capability's behaviour hints.
    pub annotations: Annotations,
    /// The canonical argument map (omitted optionals and `None` left out).
    pub arguments: &'a Data,
    /// When the execution's time is up: a policy that evaluates something
    /// (Rego) stops by then; `None` outside an execution.
    pub deadline: Option<std::time::Instant>,
}

/// A policy's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny,
    /// Allow only if a person approves this call; refused (`permission
    /// denied`) when nobody can be asked, they decline, or no answer comes
    /// in time.
    Ask,
}

impl Decision {
    /// The stricter of two verdicts: deny over ask over allow.
    pub fn and(self, other: Decision) -> Decision {
        match (self, other) {
            (Decision::Deny, _) | (_, Decision::Deny) => Decision::Deny,
            (Decision::Ask, _) | (_, Decision::Ask) => Decision::Ask,
            _ => Decision::Allow,
        }
    }
}

/// A policy failed to evaluate; the detail is for the host's logs only.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("policy evaluation failed: {0}")]
pub struct PolicyError(pub String);

/// Authorizes capability calls.
pub trait Policy: Send + Sync {
    /// Allow, deny, or fail (which denies too).
    fn authorize(&self, request: &AuthorizationRequest<'_>) -> Result<Decision, PolicyError>;
}

/// Allows every call; must be chosen explicitly.
#[derive(Clone, Copy, Debug, Default)]
pub struct AllowAll;

impl Policy for AllowAll {
    fn authorize(&self, _request: &AuthorizationRequest<'_>) -> Result<Decision, PolicyError> {
        Ok(Decision::Allow)
    }
}

/// Denies every call.
#[derive(Clone, Copy, Debug, Default)]
pub struct DenyAll;

impl Policy for DenyAll {
    fn authorize(&self, _request: &AuthorizationRequest<'_>) -> Result<Decision, PolicyError> {
        Ok(Decision::Deny)
    }
}

/// A policy from a closure.
pub struct PolicyFn<F>(pub F);

impl<F> Policy for PolicyFn<F>
where
    F: Fn(&AuthorizationRequest<'_>) -> Result<Decision, PolicyError> + Send + Sync,
{
    fn authorize(&self, request: &AuthorizationRequest<'_>) -> Result<Decision, PolicyError> {
        (self.0)(request)
    }
}
