//! The result of an upstream tool that declares no output schema.
//!
//! Such a tool answers with text, and most put JSON in it. Its capability
//! returns `{text: str, json: any | None}`: `text` is the text content
//! joined with newlines, and `json` the value of that text when it is
//! exactly one JSON document (surrounding whitespace allowed) that a
//! program can hold, else `None`. A value a program can hold is one the
//! execution's value budgets let through: every integer within the signed
//! 64-bit range, the whole result at most `MaxValueDepth` deep and at most
//! `MaxValueBytes` of compact JSON. A document beyond them leaves `json`
//! `None`, so that a tool answering with large or odd JSON returns its text
//! as it would without `json`.

use codemode_catalog::{Data, Limits};
use serde_json::{json, Value};

/// What describe says of such a tool.
pub const NOTE: &str = "Returns {text: str, json: any | None}: the tool declares no output \
schema, so text is its text content joined with newlines, and json is that text decoded when it \
is one JSON document (else None).";

/// The value budgets `json` is held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextResult {
    max_depth: usize,
    max_bytes: usize,
}

impl TextResult {
    /// The bounds of executions run under `limits`.
    pub fn new(limits: &Limits) -> TextResult {
        TextResult {
            max_depth: limits.max_value_depth as usize,
            max_bytes: limits.max_value_bytes,
        }
    }

    /// The output schema: `{text: str, json: any | None}`.
    pub fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "json": {"anyOf": [{}, {"type": "null"}]}
            },
            "required": ["text", "json"]
        })
    }

    /// The result for `text`.
    pub fn value(&self, text: String) -> Value {
        let decoded = self.decode(&text);
        let with_json = json!({"text": text, "json": decoded});
        if decoded_fits(&with_json, self.max_bytes) {
            with_json
        } else {
            let Value::Object(mut result) = with_json else {
                unreachable!("built as an object")
            };
            result.insert("json".into(), Value::Null);
            Value::Object(result)
        }
    }

    /// The one JSON document `text` holds, within the depth budget and
    /// the integer range; `Null` otherwise.
    fn decode(&self, text: &str) -> Value {
        // Only a document can start so; anything else is not decoded at
        // all (plain text is the common case).
        let starts_document = text.trim_start().starts_with([
            '{', '[', '"', '-', 't', 'f', 'n', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
        ]);
        if !starts_document {
            return Value::Null;
        }
        // serde_json's own recursion limit bounds the parse; the result
        // wraps the value in one more level.
        match serde_json::from_str::<Value>(text) {
            Ok(value) if depth(&value) < self.max_depth && Data::from_json(&value).is_some() => {
                value
            }
            _ => Value::Null,
        }
    }
}

/// Whether the result with its `json` fits `max_bytes` of compact JSON
/// (a result whose text alone is larger fails the execution's own check
/// either way).
fn decoded_fits(result: &Value, max_bytes: usize) -> bool {
    result["json"].is_null()
        || serde_json::to_vec(result).is_ok_and(|bytes| bytes.len() <= max_bytes)
}

/// The depth of a value as the value budgets count it: a scalar is 1, each
/// list or object around it one more.
fn depth(value: &Value) -> usize {
    // Iterative: (value, its depth), deepest first.
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|x| (x, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_of(result: &TextResult, text: &str) -> Value {
        let value = result.value(text.to_string());
        assert_eq!(value["text"], text);
        value["json"].clone()
    }

    #[test]
    fn one_json_document_is_decoded() {
        let r = TextResult::new(&Limits::default());
        assert_eq!(
            json_of(&r, " {\"a\": [1, 2.5, \"x\", true], \"b\": null}\n"),
            json!({"a": [1, 2.5, "x", true], "b": null})
        );
        assert_eq!(json_of(&r, "[]"), json!([]));
        assert_eq!(json_of(&r, "\"s\""), json!("s"));
        assert_eq!(json_of(&r, "-5"), json!(-5));
        assert_eq!(json_of(&r, "false"), json!(false));
        for text in [
            "",
            "hello",
            "echo\nhi",
            "1 2",
            "{\"a\": 1}{\"b\": 2}",
            "[1, 2",
            "{'a': 1}",
            "NaN",
            // Out of the signed 64-bit range.
            "18446744073709551615",
            "[1e400]",
        ] {
            assert_eq!(json_of(&r, text), Value::Null, "{text:?}");
        }
    }

    #[test]
    fn json_is_held_to_the_value_budgets() {
        let limits = Limits {
            max_value_depth: 4,
            max_value_bytes: 60,
            ..Limits::default()
        };
        let r = TextResult::new(&limits);
        // {text, json: [[x]]}: 4 levels fit, 5 do not.
        assert_eq!(json_of(&r, "[[1]]"), json!([[1]]));
        assert_eq!(json_of(&r, "[[[1]]]"), Value::Null);
        // {"text":"[1,2,3]","json":[1,2,3]} is 34 bytes; a longer list
        // goes over 60 with its value beside its text.
        assert_eq!(json_of(&r, "[1,2,3]"), json!([1, 2, 3]));
        let long = format!("[{}]", ["1"; 12].join(","));
        assert_eq!(json_of(&r, &long), Value::Null);
        // Deeper than serde_json parses: no value, no failure.
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(
            json_of(&TextResult::new(&Limits::default()), &deep),
            Value::Null
        );
    }

    #[test]
    fn the_schema_reads_text_and_optional_any() {
        let fields = codemode_catalog::fields_from_schema(
            &TextResult::schema(),
            codemode_catalog::SchemaSource::Upstream,
        )
        .expect("fields");
        let shapes: Vec<(String, String, bool)> = fields
            .iter()
            .map(|f| (f.name.clone(), f.shape.notation(), f.required))
            .collect();
        assert_eq!(
            shapes,
            [
                ("text".to_string(), "str".to_string(), true),
                ("json".to_string(), "any | None".to_string(), true)
            ]
        );
    }
}
