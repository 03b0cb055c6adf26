//! The one reading of a `/mcp` POST body: strict (a duplicate member at any
//! depth is found, as `codemode_catalog::parse_strict` finds it, with the
//! same message and position), straight into the members a plain
//! `tools/call` has, and validated ([`ToolCall::new`]) in the same step.
//!
//! A body reads as one of three [`McpRequest`]s: a `tools/call` with a
//! duplicate member (refused with its ID), a plain `tools/call` (exactly
//! `{"jsonrpc": "2.0", "id", "method": "tools/call", "params": {"name",
//! "arguments"}}` with a number or string ID; the call validated or its
//! invalid-params error), or anything else, which rmcp reads and answers
//! from the bytes. The members of a plain call are read typed; any other
//! member is read as a [`Strict`] value (for its duplicates) and makes the
//! request one for rmcp.

use crate::tool::{Invalid, ToolCall};
use codemode_catalog::JsonError;
use codemode_catalog::{duplicate_member, Strict};
use rmcp::model::NumberOrString;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// What a `/mcp` POST body is.
#[derive(Debug, PartialEq)]
pub(crate) enum McpRequest {
    /// A `tools/call` with a duplicate member: its ID as the client wrote
    /// it (the last of several, as rmcp would read it) and the
    /// invalid-params message naming the member.
    Refused { id: Value, message: String },
    /// A plain `tools/call`: its ID and the validated call, or the call's
    /// invalid-params error.
    Call {
        id: NumberOrString,
        call: Result<ToolCall, Invalid>,
    },
    /// Anything else: rmcp's to read and answer.
    Other,
}

impl McpRequest {
    /// Reads a POST body.
    pub(crate) fn read(body: &[u8]) -> McpRequest {
        let Ok(text) = std::str::from_utf8(body) else {
            return McpRequest::Other;
        };
        match serde_json::from_str::<Envelope>(text) {
            Ok(envelope) => envelope.into_request(),
            Err(e) => {
                let error = JsonError::of(e);
                match crate::strict::refusal(text, &error) {
                    Some(id) => McpRequest::Refused {
                        id,
                        message: error.to_string(),
                    },
                    None => McpRequest::Other,
                }
            }
        }
    }
}

/// The top-level members of a JSON-RPC message, as a plain `tools/call`
/// has them.
#[derive(Default)]
struct Envelope {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Params>,
    /// Whether there was any other member.
    other: bool,
}

/// The members of a plain call's `params`.
#[derive(Default)]
struct Params {
    name: Option<Value>,
    arguments: Option<Value>,
    /// Whether `params` was not an object or had any other member.
    other: bool,
}

impl Envelope {
    fn into_request(self) -> McpRequest {
        let plain = !self.other
            && self.jsonrpc.as_ref().is_some_and(|v| v == "2.0")
            && self.method.as_ref().is_some_and(|v| v == "tools/call");
        let (Some(id), Some(params)) = (self.id.as_ref().and_then(request_id), self.params) else {
            return McpRequest::Other;
        };
        let arguments = match params.arguments {
            None | Some(Value::Null) => None,
            Some(Value::Object(arguments)) => Some(arguments),
            Some(_) => return McpRequest::Other,
        };
        match (plain && !params.other, params.name) {
            (true, Some(Value::String(name))) => McpRequest::Call {
                id,
                call: ToolCall::new(&name, arguments),
            },
            _ => McpRequest::Other,
        }
    }
}

/// A JSON-RPC request ID as rmcp reads it, for the forms taken here.
fn request_id(id: &Value) -> Option<NumberOrString> {
    match id {
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        _ => None,
    }
}

/// Reads the members of one object, refusing a second member of a name
/// right after its key (where [`Strict`] refuses it): `member` reads the
/// value of each.
fn members<'de, A, T>(
    mut map: A,
    into: &mut T,
    mut member: impl FnMut(&str, &mut A, &mut T) -> Result<(), A::Error>,
) -> Result<(), A::Error>
where
    A: MapAccess<'de>,
{
    let mut seen: Vec<String> = Vec::new();
    while let Some(key) = map.next_key::<String>()? {
        if seen.contains(&key) {
            return Err(duplicate_member(&key));
        }
        member(&key, &mut map, into)?;
        seen.push(key);
    }
    Ok(())
}

/// A member's value, read strictly.
fn strict<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Value, A::Error> {
    map.next_value::<Strict>().map(|Strict(v)| v)
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Envelope, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not an object: never a plain call, nor a refused one.
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Envelope, A::Error> {
        let mut envelope = Envelope::default();
        members(map, &mut envelope, |key, map, e| {
            match key {
                "jsonrpc" => e.jsonrpc = Some(strict(map)?),
                "id" => e.id = Some(strict(map)?),
                "method" => e.method = Some(strict(map)?),
                "params" => e.params = Some(map.next_value()?),
                _ => {
                    strict(map)?;
                    e.other = true;
                }
            }
            Ok(())
        })?;
        Ok(envelope)
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Params, D::Error> {
        deserializer.deserialize_any(ParamsVisitor)
    }
}

struct ParamsVisitor;

impl ParamsVisitor {
    /// `params` that are not an object, read strictly.
    fn other<E>(self) -> Result<Params, E> {
        Ok(Params {
            other: true,
            ..Params::default()
        })
    }
}

impl<'de> Visitor<'de> for ParamsVisitor {
    type Value = Params;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Params, A::Error> {
        let mut params = Params::default();
        members(map, &mut params, |key, map, p| {
            match key {
                "name" => p.name = Some(strict(map)?),
                "arguments" => p.arguments = Some(strict(map)?),
                _ => {
                    strict(map)?;
                    p.other = true;
                }
            }
            Ok(())
        })?;
        Ok(params)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Params, A::Error> {
        while seq.next_element::<Strict>()?.is_some() {}
        self.other()
    }

    fn visit_bool<E>(self, _: bool) -> Result<Params, E> {
        self.other()
    }

    fn visit_i64<E>(self, _: i64) -> Result<Params, E> {
        self.other()
    }

    fn visit_u64<E>(self, _: u64) -> Result<Params, E> {
        self.other()
    }

    fn visit_f64<E>(self, _: f64) -> Result<Params, E> {
        self.other()
    }

    fn visit_str<E>(self, _: &str) -> Result<Params, E> {
        self.other()
    }

    fn visit_unit<E>(self) -> Result<Params, E> {
        self.other()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Tool;
    use codemode_catalog::parse_strict;

    fn read(text: &str) -> McpRequest {
        McpRequest::read(text.as_bytes())
    }

    #[test]
    fn a_plain_call_is_read_and_validated() {
        let body = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute","arguments":{"source":"x"}}}"#;
        assert_eq!(
            read(body),
            McpRequest::Call {
                id: NumberOrString::Number(3),
                call: Ok(ToolCall {
                    tool: Tool::Execute,
                    argument: "x".into()
                })
            }
        );
        let invalid = r#"{"params":{"arguments":{"query":7},"name":"search_api"},"method":"tools/call","id":"a","jsonrpc":"2.0"}"#;
        let McpRequest::Call { id, call } = read(invalid) else {
            panic!("a plain call");
        };
        assert_eq!(id, NumberOrString::String("a".into()));
        assert_eq!(
            call.expect_err("invalid").message,
            "property \"query\" must be a string"
        );
        let none = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":null}}"#;
        assert!(matches!(read(none), McpRequest::Call { call: Err(_), .. }));
    }

    #[test]
    fn anything_else_is_rmcps() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{},"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute"},"x":1}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"execute"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"execute"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"execute"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"execute"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute"}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute"}} x"#,
            "\u{ff}",
            "",
        ] {
            assert_eq!(read(body), McpRequest::Other, "{body}");
        }
        assert_eq!(McpRequest::read(b"{\"a\":\"\xff\"}"), McpRequest::Other);
    }

    /// The refusal's message is the strict parse's, at every depth; the ID
    /// is the last one written.
    #[test]
    fn duplicates_are_refused_as_the_strict_parse_finds_them() {
        for body in [
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"execute","arguments":{"source":"a","source":"b"}}}"#,
            r#"{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call","params":{"name":"execute","arguments":{"source":"a"}}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"execute","name":"execute","arguments":{"source":"a"}}}"#,
            "{\"jsonrpc\":\"2.0\",\n \"id\":\"x\", \"method\":\"tools/call\",\n \"params\":{\"name\":\"execute\",\"_meta\":{\"k\":[{\"a\":1,\"a\":2}]}}}",
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[{"k":1,"k":2}]}"#,
            r#"{"x":{"y":1,"y":2},"jsonrpc":"2.0","id":{"o":1},"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools\/call","params":{"name":"execute","arguments":{"source":"a","source":"b"}}}"#,
            r#"{"method":"tools/call","method":"tools/call","id":1}"#,
        ] {
            let McpRequest::Refused { id, message } = read(body) else {
                panic!("refused: {body}");
            };
            assert_eq!(Err(message), parse_strict(body).map_err(|e| e.to_string()), "{body}");
            let last_wins: Value = serde_json::from_str(body).expect("json");
            assert_eq!(id, last_wins["id"], "{body}");
        }
        for body in [
            // Not a tools/call, or no ID, or not JSON past the duplicate.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":1,"a":2}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"a":1,"a":2}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":1,"a":2} x"#,
        ] {
            assert_eq!(read(body), McpRequest::Other, "{body}");
        }
    }
}
