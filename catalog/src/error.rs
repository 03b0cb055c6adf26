//! The service's error taxonomy and its fixed texts.
//!
//! Every failure of search, describe and execute is one [`Error`], whose
//! `Display` is exactly one of the texts of `docs/architecture.md`, section
//! 5 (the MCP tool reference's): nine fixed ones and the two prefixed
//! classes `invalid program: …` and `invalid capability arguments: …`, plus
//! `capability failed: <message>` for a message a handler marked public (at
//! most 256 bytes). Nothing else reaches a client: handler details, policy
//! errors, budget values and panics are dropped where they are classified.

use std::fmt;

/// A failure of the CodeMode service, rendered as its public text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The subject is missing or empty.
    #[error("unauthenticated")]
    Unauthenticated,
    /// Describe found no enabled capability with that exact name.
    #[error("capability not found")]
    CapabilityNotFound,
    /// The program is invalid; the detail is model-derived.
    #[error("invalid program{}", Suffix(.0))]
    InvalidProgram(Option<String>),
    /// A capability call failed binding; the detail names the argument.
    #[error("invalid capability arguments{}", Suffix(.0))]
    InvalidArguments(Option<String>),
    /// The policy denied a call.
    #[error("permission denied")]
    PermissionDenied,
    /// The policy failed to evaluate.
    #[error("authorization policy failure")]
    PolicyFailure,
    /// A budget was exceeded (including the execution deadline).
    #[error("resource limit exceeded")]
    ResourceLimitExceeded,
    /// A handler failed or returned an invalid value; the message is the
    /// handler's public one, if any.
    #[error("capability failed{}", Suffix(.0))]
    CapabilityFailed(Option<String>),
    /// The request was cancelled.
    #[error("context canceled")]
    Canceled,
    /// A bare deadline error of a service.
    #[error("context deadline exceeded")]
    DeadlineExceeded,
    /// Anything else.
    #[error("internal failure")]
    Internal,
}

struct Suffix<'a>(&'a Option<String>);

impl fmt::Display for Suffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(d) if !d.is_empty() => write!(f, ": {d}"),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_renders_its_fixed_text() {
        let cases = [
            (Error::Unauthenticated, "unauthenticated"),
            (Error::CapabilityNotFound, "capability not found"),
            (Error::InvalidProgram(None), "invalid program"),
            (
                Error::InvalidProgram(Some("<codemode>:1:1: x".into())),
                "invalid program: <codemode>:1:1: x",
            ),
            (
                Error::InvalidArguments(None),
                "invalid capability arguments",
            ),
            (
                Error::InvalidArguments(Some("limit: want int, got str".into())),
                "invalid capability arguments: limit: want int, got str",
            ),
            (Error::PermissionDenied, "permission denied"),
            (Error::PolicyFailure, "authorization policy failure"),
            (Error::ResourceLimitExceeded, "resource limit exceeded"),
            (Error::CapabilityFailed(None), "capability failed"),
            (
                Error::CapabilityFailed(Some(String::new())),
                "capability failed",
            ),
            (
                Error::CapabilityFailed(Some("conformance failure".into())),
                "capability failed: conformance failure",
            ),
            (Error::Canceled, "context canceled"),
            (Error::DeadlineExceeded, "context deadline exceeded"),
            (Error::Internal, "internal failure"),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
    }
}
