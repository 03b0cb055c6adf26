//! Output conformance: a value that a capability backend produced from
//! outside the type system (a JSON handler, an upstream MCP server's
//! `structuredContent`), or a typed result with output rules, checked
//! against the capability's published output shape before it enters a
//! program.
//!
//! [`conform_output`] walks the value and the shape together and returns
//! the value as the shape describes it: struct fields in declaration order,
//! keys the shape does not name dropped (JSON Schema lets an object carry
//! more than its named properties), an int where a float is declared turned
//! into a float, and `None` for a field that may be absent dropped. Anything
//! else that does not fit — a missing required field, a value of another
//! type, a value that breaks an output rule — is a [`Mismatch`] naming the
//! path. Recursion follows the shape, whose depth is bounded by the schema
//! it came from.

use crate::binding::satisfies;
use crate::shape::{FieldShape, Shape, ShapeKind};
use codemode_vm::Data;

/// The value does not fit the output shape; the detail names the path and,
/// for a broken output rule, the rule (for host logs only).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("output does not match its shape at {0}")]
pub struct Mismatch(pub String);

/// Checks `value` (the output root, an object) against `fields` and returns
/// it in canonical form.
pub fn conform_output(fields: &[FieldShape], value: Data) -> Result<Data, Mismatch> {
    let mut path = String::new();
    match value {
        Data::Map(entries) => conform_struct(fields, entries, &mut path),
        _ => Err(Mismatch("(root)".into())),
    }
}

fn conform_struct(
    fields: &[FieldShape],
    mut entries: Vec<(String, Data)>,
    path: &mut String,
) -> Result<Data, Mismatch> {
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let value = entries
            .iter()
            .position(|(k, _)| *k == f.name)
            .map(|i| entries.swap_remove(i).1);
        let len = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(&f.name);
        match value {
            None if !f.required => {}
            Some(Data::Null) if !f.required && !f.shape.is_optional() => {}
            None => return Err(Mismatch(path.clone())),
            Some(v) => out.push((f.name.clone(), conform(&f.shape, v, path)?)),
        }
        path.truncate(len);
    }
    Ok(Data::Map(out))
}

fn conform(shape: &Shape, value: Data, path: &mut String) -> Result<Data, Mismatch> {
    let value = conform_kind(shape, value, path)?;
    if let Some(rule) = shape.rules.iter().find(|r| !satisfies(r, &value)) {
        return Err(Mismatch(format!("{}: {}", shown(path), rule.violation())));
    }
    Ok(value)
}

fn shown(path: &str) -> String {
    if path.is_empty() {
        "(root)".into()
    } else {
        path.to_string()
    }
}

fn conform_kind(shape: &Shape, value: Data, path: &mut String) -> Result<Data, Mismatch> {
    match (&shape.kind, value) {
        (ShapeKind::Optional(_), Data::Null) => Ok(Data::Null),
        (ShapeKind::Optional(inner), v) => conform(inner, v, path),
        (ShapeKind::Any, v) => Ok(v),
        (ShapeKind::Str, v @ Data::Str(_))
        | (ShapeKind::Int, v @ Data::Int(_))
        | (ShapeKind::Bool, v @ Data::Bool(_))
        | (ShapeKind::Float, v @ Data::Float(_)) => Ok(v),
        (ShapeKind::Float, Data::Int(i)) => Ok(Data::Float(i as f64)),
        (ShapeKind::List(inner), Data::List(items)) => {
            let len = path.len();
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                path.push_str(&format!("[{i}]"));
                out.push(conform(inner, item, path)?);
                path.truncate(len);
            }
            Ok(Data::List(out))
        }
        (ShapeKind::Map(inner), Data::Map(entries)) => {
            let len = path.len();
            let mut out = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                path.push_str("{}");
                out.push((k, conform(inner, v, path)?));
                path.truncate(len);
            }
            Ok(Data::Map(out))
        }
        (ShapeKind::Struct(fields), Data::Map(entries)) => conform_struct(fields, entries, path),
        _ => Err(Mismatch(shown(path))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{fields_from_schema, SchemaSource};
    use serde_json::json;

    fn fields(schema: serde_json::Value) -> Vec<FieldShape> {
        fields_from_schema(&schema, SchemaSource::Upstream).unwrap_or_default()
    }

    fn data(v: serde_json::Value) -> Data {
        Data::from_json(&v).unwrap_or(Data::Null)
    }

    #[test]
    fn a_fitting_value_comes_back_canonical() {
        let f = fields(json!({"type": "object", "properties": {
            "total": {"type": "number"},
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "size": {"type": ["integer", "null"]}
            }, "required": ["name"]}},
            "note": {"type": "string"}
        }, "required": ["total", "items"]}));
        let out = conform_output(
            &f,
            data(
                json!({"extra": 1, "items": [{"size": null, "name": "a"}], "total": 3, "note": null}),
            ),
        );
        assert_eq!(
            out.map(|d| d.to_json_string()),
            Ok(r#"{"total":3.0,"items":[{"name":"a","size":null}]}"#.to_string())
        );
    }

    #[test]
    fn mismatches_name_the_path() {
        let f = fields(json!({"type": "object", "properties": {
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "n": {"type": "integer"}}, "required": ["n"]}}
        }, "required": ["items"]}));
        let cases = [
            (json!({}), "items"),
            (json!({"items": [{"n": 1}, {"n": "x"}]}), "items[1].n"),
            (json!({"items": [{}]}), "items[0].n"),
            (json!({"items": {"n": 1}}), "items"),
        ];
        for (value, at) in cases {
            assert_eq!(conform_output(&f, data(value)), Err(Mismatch(at.into())));
        }
        assert_eq!(
            conform_output(&f, Data::List(vec![])),
            Err(Mismatch("(root)".into()))
        );
    }

    #[test]
    fn any_takes_every_json_value() {
        let f = fields(json!({"type": "object", "properties": {
            "v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
        }, "required": ["v"]}));
        assert_eq!(f[0].shape.notation(), "any");
        for v in [json!(1), json!("s"), json!([1, {"a": null}])] {
            let out = conform_output(&f, data(json!({ "v": v.clone() })));
            assert_eq!(
                out.map(|d| crate::convert::data_to_json(&d)),
                Ok(json!({ "v": v }))
            );
        }
    }
}
