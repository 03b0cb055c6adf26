//! The three MCP tools, as one type: [`Tool`] is the single source of each
//! tool's name, description, input property and schemas, and
//! [`ToolCall::new`] the single validation of a call's arguments.
//!
//! Descriptions are the first paragraph under each tool's heading in the
//! MCP tool reference (`docs/architecture.md`, section 11), verbatim; input
//! schemas have one required string property and `additionalProperties:
//! false`; output schemas are that reference's, with `execute`'s `result`
//! written `{}`. rmcp validates nothing, so a call is validated here before
//! its subject is resolved: an unknown tool, or a missing, non-string or
//! additional property, is a JSON-RPC invalid-params error (-32602) with the
//! message of [`Invalid`].

use rmcp::model::JsonObject;
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};

/// One of the three tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tool {
    /// `search_api`: ranked capabilities for a query.
    SearchApi,
    /// `describe_api`: one capability's signature and fields.
    DescribeApi,
    /// `execute`: runs one Starlark program.
    Execute,
}

impl Tool {
    /// The three tools, in the order `tools/list` gives them.
    pub const ALL: [Tool; 3] = [Tool::SearchApi, Tool::DescribeApi, Tool::Execute];

    /// The tool's name on the wire.
    pub const fn name(self) -> &'static str {
        match self {
            Tool::SearchApi => "search_api",
            Tool::DescribeApi => "describe_api",
            Tool::Execute => "execute",
        }
    }

    /// The tool called `name`, if it is one of the three.
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The tool's description (the reference's first paragraph).
    pub const fn description(self) -> &'static str {
        match self {
            Tool::SearchApi => "Search enabled capabilities using task, resource, or exact-name vocabulary. Results are relevance-ranked. Pass the exact returned name to describe_api. If truncated is true and no result fits, submit a more specific task/resource query.",
            Tool::DescribeApi => "Describe one enabled capability by the exact name returned by search_api, without whitespace or case changes.",
            Tool::Execute => "Execute one Starlark program that defines def main(): with zero arguments, calls only names confirmed through search_api and describe_api inside main, and returns main's final result. Standard Starlark builtins plus sum(iterable), json.decode/encode/indent, and math.* are directly available without import. import, while, f-strings, filter, and map are unavailable; load is disabled; print is discarded.",
        }
    }

    /// The one required string property of the tool's arguments.
    pub const fn property(self) -> &'static str {
        match self {
            Tool::SearchApi => "query",
            Tool::DescribeApi => "name",
            Tool::Execute => "source",
        }
    }

    /// The input schema: the one required string property, nothing else.
    pub fn input_schema(self) -> JsonObject {
        let mut properties = serde_json::Map::new();
        properties.insert(self.property().to_string(), json!({ "type": "string" }));
        object(json!({
            "type": "object",
            "required": [self.property()],
            "additionalProperties": false,
            "properties": properties
        }))
    }

    /// The output schema of the tool's structured content.
    pub fn output_schema(self) -> JsonObject {
        let field = json!({
            "type": "object",
            "required": ["name", "type", "required"],
            "additionalProperties": false,
            "properties": {
                "name": { "type": "string" },
                "type": { "type": "string" },
                "required": { "type": "boolean" }
            }
        });
        object(match self {
            Tool::SearchApi => json!({
                "type": "object",
                "required": ["results", "truncated"],
                "additionalProperties": false,
                "properties": {
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name", "signature", "summary"],
                            "additionalProperties": false,
                            "properties": {
                                "name": { "type": "string" },
                                "signature": { "type": "string" },
                                "summary": { "type": "string" }
                            }
                        }
                    },
                    "truncated": { "type": "boolean" }
                }
            }),
            Tool::DescribeApi => json!({
                "type": "object",
                "required": ["name", "signature", "summary", "description", "input", "output"],
                "additionalProperties": false,
                "properties": {
                    "name": { "type": "string" },
                    "signature": { "type": "string" },
                    "summary": { "type": "string" },
                    "description": { "type": "string" },
                    "input": { "type": "array", "items": field.clone() },
                    "output": { "type": "array", "items": field }
                }
            }),
            Tool::Execute => json!({
                "type": "object",
                "required": ["result"],
                "additionalProperties": false,
                "properties": { "result": {} }
            }),
        })
    }

    /// The tool as `tools/list` gives it, built once (rmcp looks a tool up
    /// on every call it routes).
    pub fn definition(self) -> &'static rmcp::model::Tool {
        static TOOLS: OnceLock<Vec<rmcp::model::Tool>> = OnceLock::new();
        let tools = TOOLS.get_or_init(|| {
            Tool::ALL
                .into_iter()
                .map(|t| {
                    rmcp::model::Tool::new(t.name(), t.description(), Arc::new(t.input_schema()))
                        .with_raw_output_schema(Arc::new(t.output_schema()))
                })
                .collect()
        });
        &tools[self as usize]
    }
}

/// The object a `json!` object literal builds.
fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

/// A validated call: a known tool and its one string argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool called.
    pub tool: Tool,
    /// The value of its one property.
    pub argument: String,
}

/// A call that is a JSON-RPC invalid-params error, not a tool result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The tool, when the name was one of the three.
    pub tool: Option<Tool>,
    /// The error's message.
    pub message: String,
}

impl ToolCall {
    /// Validates a call of the tool called `name` with `arguments`, taking
    /// the argument out of them: the one validation of every transport.
    pub fn new(name: &str, arguments: Option<JsonObject>) -> Result<ToolCall, Invalid> {
        let Some(tool) = Tool::from_name(name) else {
            return Err(Invalid {
                tool: None,
                message: "unknown tool".into(),
            });
        };
        let invalid = |message: String| Invalid {
            tool: Some(tool),
            message,
        };
        let property = tool.property();
        let Some(mut arguments) = arguments else {
            return Err(invalid(format!("missing required property {property:?}")));
        };
        if let Some(extra) = arguments.keys().find(|k| k.as_str() != property) {
            return Err(invalid(format!("unexpected additional property {extra:?}")));
        }
        match arguments.remove(property) {
            None => Err(invalid(format!("missing required property {property:?}"))),
            Some(Value::String(argument)) => Ok(ToolCall { tool, argument }),
            Some(_) => Err(invalid(format!("property {property:?} must be a string"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: Value) -> Result<ToolCall, Invalid> {
        ToolCall::new(name, Some(object(arguments)))
    }

    fn message(result: Result<ToolCall, Invalid>) -> String {
        result.expect_err("invalid").message
    }

    #[test]
    fn names_round_trip_and_index_the_definitions() {
        for tool in Tool::ALL {
            assert_eq!(Tool::from_name(tool.name()), Some(tool));
            assert_eq!(tool.definition().name, tool.name());
        }
        assert_eq!(Tool::from_name("Execute"), None);
        assert_eq!(Tool::from_name("run"), None);
    }

    #[test]
    fn validation_messages() {
        assert_eq!(
            call("search_api", json!({"query": "a b"})),
            Ok(ToolCall {
                tool: Tool::SearchApi,
                argument: "a b".into()
            })
        );
        assert_eq!(
            message(ToolCall::new("search_api", None)),
            "missing required property \"query\""
        );
        assert_eq!(
            message(call("search_api", json!({"query": null}))),
            "property \"query\" must be a string"
        );
        assert_eq!(
            message(call("execute", json!({"more": 1, "source": "x"}))),
            "unexpected additional property \"more\""
        );
        assert_eq!(
            message(call("describe_api", json!({}))),
            "missing required property \"name\""
        );
        let unknown = call("nope", json!({})).expect_err("unknown");
        assert_eq!(unknown.tool, None);
        assert_eq!(unknown.message, "unknown tool");
    }

    /// Each tool's name is written once in the server's sources, in
    /// [`Tool::name`] (tests aside).
    #[test]
    fn tool_names_are_written_only_here() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = vec![dir];
        let mut found = Vec::new();
        while let Some(path) = files.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).expect("readable") {
                    files.push(entry.expect("entry").path());
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("readable");
            // The tests of a file follow its `#[cfg(test)]` module.
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for tool in Tool::ALL {
                let literal = format!("\"{}\"", tool.name());
                found.extend(code.matches(&literal).map(|_| path.clone()));
            }
        }
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tool.rs");
        assert_eq!(
            found,
            vec![here; 3],
            "tool names written outside Tool::name"
        );
    }
}
