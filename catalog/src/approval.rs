//! Approval of single calls by a person.
//!
//! When a [`crate::Policy`] answers [`crate::Decision::Ask`], the service
//! pauses the program at that call and hands an [`ApprovalRequest`] — the
//! subject, the capability's ID, name, summary and annotations, and the
//! canonical arguments — to an [`Approver`]. Only [`Approval::Approved`]
//! lets the call proceed; anything else, and no answer within the service's
//! approval timeout, is `permission denied`. The time spent waiting does not
//! count against the execution's time limit. The MCP server's approver asks
//! through `elicitation/create`; an embedding host plugs its own (a chat
//! prompt, a ticket, a second factor) with [`crate::CodeMode::with_approver`]
//! or per execution. Without one, [`RefuseAll`] refuses every ask.

use crate::annotations::Annotations;
use crate::auth::Subject;
use crate::convert::data_to_json;
use crate::names::{CapabilityId, CapabilityName};
use codemode_vm::Data;
use std::future::Future;
use std::pin::Pin;

/// The longest rendering of the arguments shown to a person; longer ones
/// are cut at a character boundary and end with `…`.
pub const MAX_SHOWN_ARGUMENT_BYTES: usize = 2048;

/// One call waiting for a person's approval.
#[derive(Clone, Debug)]
pub struct ApprovalRequest<'a> {
    pub subject: &'a Subject,
    pub capability_id: &'a CapabilityId,
    pub name: &'a CapabilityName,
    pub summary: &'a str,
    pub annotations: Annotations,
    /// The canonical argument map (what the handler will get).
    pub arguments: &'a Data,
}

impl ApprovalRequest<'_> {
    /// The canonical arguments as compact JSON, at most
    /// [`MAX_SHOWN_ARGUMENT_BYTES`] bytes (cut with `…`).
    pub fn shown_arguments(&self) -> String {
        let text = data_to_json(self.arguments).to_string();
        if text.len() <= MAX_SHOWN_ARGUMENT_BYTES {
            return text;
        }
        let mut end = MAX_SHOWN_ARGUMENT_BYTES - '…'.len_utf8();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &text[..end])
    }

    /// The question put to a person: the capability, its summary and its
    /// arguments.
    pub fn message(&self) -> String {
        format!(
            "Allow the program to call {} ({})?\n{}\nArguments: {}",
            self.name.as_str(),
            self.capability_id.as_str(),
            self.summary,
            self.shown_arguments()
        )
    }
}

/// A person's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    /// The call may proceed.
    Approved,
    /// Declined, cancelled, or nobody could be asked.
    Refused,
}

/// The future of an approval.
pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = Approval> + Send + 'a>>;

/// Asks a person whether one call may proceed.
pub trait Approver: Send + Sync {
    /// The answer; the service bounds the wait with its approval timeout
    /// and cancels it with the execution.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> ApprovalFuture<'a>;
}

/// Refuses every ask (the default: nobody to ask).
#[derive(Clone, Copy, Debug, Default)]
pub struct RefuseAll;

impl Approver for RefuseAll {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        Box::pin(std::future::ready(Approval::Refused))
    }
}

/// An approver from a closure returning the answer's future.
pub struct ApproverFn<F>(pub F);

impl<F, Fut> Approver for ApproverFn<F>
where
    F: Fn(&ApprovalRequest<'_>) -> Fut + Send + Sync,
    Fut: Future<Output = Approval> + Send + 'static,
{
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        Box::pin((self.0)(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_bounded() {
        let subject = Subject::new("alice");
        let id = CapabilityId::new("files.delete").unwrap();
        let name = CapabilityName::new("files.delete").unwrap();
        let arguments = Data::Map(vec![("path".into(), Data::Str("é".repeat(3000)))]);
        let request = ApprovalRequest {
            subject: &subject,
            capability_id: &id,
            name: &name,
            summary: "Delete a file.",
            annotations: Annotations::default(),
            arguments: &arguments,
        };
        let shown = request.shown_arguments();
        assert!(shown.len() <= MAX_SHOWN_ARGUMENT_BYTES, "{}", shown.len());
        assert!(shown.starts_with("{\"path\":\"éé") && shown.ends_with('…'));
        let small = Data::Map(vec![("key".into(), Data::Str("a".into()))]);
        let request = ApprovalRequest {
            arguments: &small,
            ..request
        };
        assert_eq!(
            request.message(),
            "Allow the program to call files.delete (files.delete)?\nDelete a file.\nArguments: {\"key\":\"a\"}"
        );
    }
}
