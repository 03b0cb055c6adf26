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

/// The longest rendering of the arguments shown to a person, in bytes.
/// Arguments whose rendering (each value already shortened) is longer are
/// not shown cut: the request cannot be asked and is refused, so a prompt
/// never hides a key.
pub const MAX_SHOWN_ARGUMENT_BYTES: usize = 4096;

/// The longest string (value or key) shown whole, in bytes; a longer one
/// is shown as its start, `…` and its full length: `"xxxx…" (2100 bytes)`.
pub const MAX_SHOWN_VALUE_BYTES: usize = 200;

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
    /// The canonical arguments as compact JSON with every key shown and
    /// each string longer than [`MAX_SHOWN_VALUE_BYTES`] shortened to its
    /// start, `…` and its length in bytes; `None` when that rendering is
    /// still longer than [`MAX_SHOWN_ARGUMENT_BYTES`] (too many keys or
    /// items to show): such a request must be refused, not shown cut.
    pub fn shown_arguments(&self) -> Option<String> {
        let mut out = String::new();
        render(self.arguments, &mut out);
        (out.len() <= MAX_SHOWN_ARGUMENT_BYTES).then_some(out)
    }

    /// The question put to a person: the capability, its summary and its
    /// arguments; `None` when the arguments cannot all be shown
    /// ([`ApprovalRequest::shown_arguments`]).
    pub fn message(&self) -> Option<String> {
        Some(format!(
            "Allow the program to call {} ({})?\n{}\nArguments: {}",
            self.name.as_str(),
            self.capability_id.as_str(),
            self.summary,
            self.shown_arguments()?
        ))
    }
}

/// Appends `value` as compact JSON with long strings shortened; stops
/// early once the text is past [`MAX_SHOWN_ARGUMENT_BYTES`].
fn render(value: &Data, out: &mut String) {
    if out.len() > MAX_SHOWN_ARGUMENT_BYTES {
        return;
    }
    match value {
        Data::Str(s) => render_str(s, out),
        Data::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                render(item, out);
                if out.len() > MAX_SHOWN_ARGUMENT_BYTES {
                    return;
                }
            }
            out.push(']');
        }
        Data::Map(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                render_str(key, out);
                out.push(':');
                render(item, out);
                if out.len() > MAX_SHOWN_ARGUMENT_BYTES {
                    return;
                }
            }
            out.push('}');
        }
        scalar => out.push_str(&data_to_json(scalar).to_string()),
    }
}

/// Appends `s` as a JSON string, shortened past [`MAX_SHOWN_VALUE_BYTES`].
fn render_str(s: &str, out: &mut String) {
    if s.len() <= MAX_SHOWN_VALUE_BYTES {
        out.push_str(&serde_json::Value::from(s).to_string());
        return;
    }
    let mut end = MAX_SHOWN_VALUE_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let start = serde_json::Value::from(format!("{}…", &s[..end])).to_string();
    out.push_str(&format!("{start} ({} bytes)", s.len()));
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

    fn request<'a>(arguments: &'a Data, subject: &'a Subject) -> ApprovalRequest<'a> {
        static ID: std::sync::LazyLock<CapabilityId> =
            std::sync::LazyLock::new(|| CapabilityId::new("files.delete").unwrap());
        static NAME: std::sync::LazyLock<CapabilityName> =
            std::sync::LazyLock::new(|| CapabilityName::new("files.delete").unwrap());
        ApprovalRequest {
            subject,
            capability_id: &ID,
            name: &NAME,
            summary: "Delete a file.",
            annotations: Annotations::default(),
            arguments,
        }
    }

    #[test]
    fn every_key_is_shown_with_long_values_shortened() {
        let subject = Subject::new("alice");
        let arguments = Data::Map(vec![
            ("note".into(), Data::Str("x".repeat(2100))),
            ("path".into(), Data::Str("é".repeat(3000))),
            ("target".into(), Data::Str("production-db-DROP".into())),
            ("n".into(), Data::List(vec![Data::Int(1), Data::Null])),
        ]);
        let shown = request(&arguments, &subject)
            .shown_arguments()
            .expect("shown");
        assert!(shown.len() <= MAX_SHOWN_ARGUMENT_BYTES, "{}", shown.len());
        let note = format!("\"note\":\"{}…\" (2100 bytes)", "x".repeat(200));
        let path = format!("\"path\":\"{}…\" (6000 bytes)", "é".repeat(100));
        assert_eq!(
            shown,
            format!("{{{note},{path},\"target\":\"production-db-DROP\",\"n\":[1,null]}}")
        );
        let small = Data::Map(vec![("key".into(), Data::Str("a".into()))]);
        assert_eq!(
            request(&small, &subject).message().as_deref(),
            Some("Allow the program to call files.delete (files.delete)?\nDelete a file.\nArguments: {\"key\":\"a\"}")
        );
    }

    #[test]
    fn arguments_too_many_to_show_are_not_shown_cut() {
        let subject = Subject::new("alice");
        let keys = (0..400)
            .map(|i| (format!("key{i}"), Data::Str("value".into())))
            .collect();
        let arguments = Data::Map(keys);
        assert_eq!(request(&arguments, &subject).shown_arguments(), None);
        assert_eq!(request(&arguments, &subject).message(), None);
        let long_list = Data::List(vec![Data::Str("y".repeat(200)); 30]);
        assert_eq!(request(&long_list, &subject).shown_arguments(), None);
    }
}
