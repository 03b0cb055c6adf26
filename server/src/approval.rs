//! Approval of writes: the `[approval]` shortcut policy and the approver
//! that asks the person behind an MCP client.
//!
//! [`AskPolicy`] answers *ask* for every capability annotated with one of
//! the configured annotation names (`"destructive"`, …) or whose ID is
//! listed, and allows the rest; the server combines it with the other
//! policies, so a denial elsewhere still wins. [`Elicitation`] asks
//! through `elicitation/create` on the session of the request that runs
//! the program, when its client declared the elicitation capability (form
//! mode): the message names the capability, its summary and its canonical
//! arguments — every key, each long value shortened to its start and its
//! length — the requested form has no fields, and only the action `accept`
//! approves. Arguments with too many keys or items to show whole are not
//! asked about (a prompt must not hide a key): refused. A client without
//! elicitation, a failed request and a protocol that forbids server
//! requests (2026-07-28) all refuse. Stateless HTTP has no session to ask on: it refuses every ask.

use crate::config::ApprovalConfig;
use codemode_catalog::{
    Annotations, Approval, ApprovalFuture, ApprovalRequest, Approver, AuthorizationRequest,
    Decision, Policy, PolicyError,
};
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer};
use rmcp::RoleServer;
use std::collections::{BTreeMap, HashSet};

/// Asks for capabilities with a configured annotation or ID; allows the
/// rest.
#[derive(Clone, Debug, Default)]
pub struct AskPolicy {
    annotations: Vec<&'static str>,
    ids: HashSet<String>,
}

impl AskPolicy {
    /// The policy of `[approval] ask`: each entry is an annotation name
    /// (`read_only`, `destructive`, `idempotent`, `open_world`) or a
    /// capability ID.
    pub fn new(ask: &[String]) -> AskPolicy {
        let mut policy = AskPolicy::default();
        for entry in ask {
            match Annotations::NAMES.iter().find(|n| **n == entry.as_str()) {
                Some(name) => policy.annotations.push(name),
                None => {
                    policy.ids.insert(entry.clone());
                }
            }
        }
        policy
    }

    /// Whether the policy asks for nothing.
    pub fn is_empty(&self) -> bool {
        self.annotations.is_empty() && self.ids.is_empty()
    }
}

impl Policy for AskPolicy {
    fn authorize(&self, request: &AuthorizationRequest<'_>) -> Result<Decision, PolicyError> {
        let annotated = self
            .annotations
            .iter()
            .any(|name| request.annotations.get(name) == Some(true));
        Ok(
            if annotated || self.ids.contains(request.capability_id.as_str()) {
                Decision::Ask
            } else {
                Decision::Allow
            },
        )
    }
}

impl ApprovalConfig {
    /// The shortcut policy of this table.
    pub fn policy(&self) -> AskPolicy {
        AskPolicy::new(&self.ask)
    }

    /// Refuses an `ask` entry that is neither an annotation name nor a
    /// capability ID for which `known` is true: it would ask for nothing,
    /// and approval would be off without a word. The error names it.
    pub fn check(&self, known: &dyn Fn(&str) -> bool) -> Result<(), UnknownAskEntry> {
        match self
            .ask
            .iter()
            .find(|e| !Annotations::NAMES.contains(&e.as_str()) && !known(e))
        {
            None => Ok(()),
            Some(entry) => Err(UnknownAskEntry(entry.clone())),
        }
    }
}

/// An `[approval] ask` entry that names no annotation and no capability ID.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "[approval] ask entry {0:?} is neither an annotation ({names}) nor the ID of \
     a capability (see `codemode describe NAME` for IDs): it would ask for nothing",
    names = Annotations::NAMES.join(", ")
)]
pub struct UnknownAskEntry(pub String);

/// Asks the client of one MCP session through `elicitation/create`.
#[derive(Clone)]
pub struct Elicitation {
    peer: Peer<RoleServer>,
}

impl Elicitation {
    /// The approver of the session of `peer`.
    pub fn new(peer: Peer<RoleServer>) -> Elicitation {
        Elicitation { peer }
    }
}

impl Approver for Elicitation {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        Box::pin(async move {
            let modes = self.peer.supported_elicitation_modes();
            if !modes.contains(&ElicitationMode::Form) {
                return Approval::Refused;
            }
            let Some(message) = request.message() else {
                tracing::info!(
                    capability = %request.capability_id.as_str(),
                    "approval refused without asking: the arguments are too many to show"
                );
                return Approval::Refused;
            };
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: ElicitationSchema::new(BTreeMap::new()),
            };
            match self.peer.create_elicitation(params).await {
                Ok(result) if result.action == ElicitationAction::Accept => Approval::Approved,
                Ok(_) => Approval::Refused,
                Err(e) => {
                    tracing::info!(
                        capability = %request.capability_id.as_str(),
                        "approval request failed: {e}"
                    );
                    Approval::Refused
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codemode_catalog::{CapabilityId, CapabilityName, Data, Subject};

    #[test]
    fn the_shortcut_asks_by_annotation_or_id() {
        let policy = AskPolicy::new(&["destructive".into(), "records.status".into()]);
        let subject = Subject::new("a");
        let arguments = Data::Map(vec![]);
        let decide = |id: &str, annotations| {
            let id = CapabilityId::new(id).unwrap();
            let name = CapabilityName::new("x.y").unwrap();
            policy.authorize(&AuthorizationRequest {
                subject: &subject,
                capability_id: &id,
                name: &name,
                annotations,
                arguments: &arguments,
                deadline: None,
            })
        };
        assert_eq!(decide("a.b", Annotations::default()), Ok(Decision::Ask));
        assert_eq!(
            decide("a.b", Annotations::read_only_closed()),
            Ok(Decision::Allow)
        );
        assert_eq!(
            decide("records.status", Annotations::read_only_closed()),
            Ok(Decision::Ask)
        );
        assert!(AskPolicy::new(&[]).is_empty());
    }

    #[test]
    fn ask_entries_must_name_an_annotation_or_a_known_id() {
        let config = |ask: &[&str]| ApprovalConfig {
            ask: ask.iter().map(|s| s.to_string()).collect(),
            timeout_ms: None,
        };
        let known = |id: &str| id == "pets.create";
        assert_eq!(
            config(&["destructive", "pets.create"]).check(&known),
            Ok(())
        );
        for bad in ["Destructive", "pets.create_item"] {
            let e = config(&["read_only", bad]).check(&known).unwrap_err();
            assert_eq!(e, UnknownAskEntry(bad.to_string()));
            assert_eq!(
                e.to_string(),
                format!(
                    "[approval] ask entry {bad:?} is neither an annotation (read_only, \
                     destructive, idempotent, open_world) nor the ID of a capability (see \
                     `codemode describe NAME` for IDs): it would ask for nothing"
                )
            );
        }
    }
}
