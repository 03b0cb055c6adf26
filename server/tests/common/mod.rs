//! What every MCP test checks the same way: the exact `tools/list` entries
//! of the specification (descriptions, input and output schemas).

use serde_json::{json, Value};

/// The three tools exactly as `tools/list` must return them.
pub fn expected_tools() -> Value {
    let field = json!({
        "type": "object",
        "required": ["name", "type", "required"],
        "additionalProperties": false,
        "properties": {"name": {"type": "string"}, "type": {"type": "string"}, "required": {"type": "boolean"}}
    });
    let input = |p: &str| json!({"type": "object", "required": [p], "additionalProperties": false, "properties": {p: {"type": "string"}}});
    json!([
        {
            "name": "search_api",
            "description": "Search enabled capabilities using task, resource, or exact-name vocabulary. Results are relevance-ranked. Pass the exact returned name to describe_api. If truncated is true and no result fits, submit a more specific task/resource query.",
            "inputSchema": input("query"),
            "outputSchema": {
                "type": "object",
                "required": ["results", "truncated"],
                "additionalProperties": false,
                "properties": {
                    "results": {"type": "array", "items": {
                        "type": "object",
                        "required": ["name", "signature", "summary"],
                        "additionalProperties": false,
                        "properties": {"name": {"type": "string"}, "signature": {"type": "string"}, "summary": {"type": "string"}}
                    }},
                    "truncated": {"type": "boolean"}
                }
            }
        },
        {
            "name": "describe_api",
            "description": "Describe one enabled capability by the exact name returned by search_api, without whitespace or case changes.",
            "inputSchema": input("name"),
            "outputSchema": {
                "type": "object",
                "required": ["name", "signature", "summary", "description", "input", "output"],
                "additionalProperties": false,
                "properties": {
                    "name": {"type": "string"},
                    "signature": {"type": "string"},
                    "summary": {"type": "string"},
                    "description": {"type": "string"},
                    "input": {"type": "array", "items": field.clone()},
                    "output": {"type": "array", "items": field}
                }
            }
        },
        {
            "name": "execute",
            "description": "Execute one Starlark program that defines def main(): with zero arguments, calls only names confirmed through search_api and describe_api inside main, and returns main's final result. Standard Starlark builtins plus sum(iterable), json.decode/encode/indent, and math.* are directly available without import. import, while, f-strings, filter, and map are unavailable; load is disabled; print is discarded.",
            "inputSchema": input("source"),
            "outputSchema": {"type": "object", "required": ["result"], "additionalProperties": false, "properties": {"result": {}}}
        }
    ])
}
