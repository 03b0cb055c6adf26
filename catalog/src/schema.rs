//! The JSON Schema mapping: field shapes from the JSON Schema of a Rust
//! type (through `schemars`), of a manifest entry or of an upstream MCP
//! tool, so that one mapping serves all three.
//!
//! [`fields_from_schema`] maps a schema whose root is an object to its
//! fields in declaration order, following local `$ref`s (a recursive type
//! is refused, and at most [`MAX_SCHEMA_NODES`] nodes are mapped), and
//! turns `minimum`/`maximum`, lengths and `enum` into input [`Rule`]s. It
//! refuses what the notation cannot express (unions other than
//! `T | None`, non-string map keys, recursive types, tuples, free-form
//! values) with a [`ShapeError`] naming the field; how strict it is
//! depends on the [`SchemaSource`]: a manifest's free-form values and
//! whatever an upstream server's schema says that the notation cannot are
//! the extension type `any`.

use crate::shape::{FieldShape, Number, Rule, Shape, ShapeKind};
use codemode_vm::Data;
use serde_json::{Map, Value};

/// Why a schema has no field shapes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", if path.is_empty() { "(root)" } else { path.as_str() })]
pub struct ShapeError {
    /// The field path, e.g. `filter.owner` or `tags[]`.
    pub path: String,
    /// What the notation cannot express.
    pub reason: String,
}

/// How strict the JSON Schema mapping is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaSource {
    /// A schema derived from a Rust type: free-form values are refused.
    Derived,
    /// A manifest's hand-written schema: a free-form object below the root
    /// is `dict[str, any]`, a free-form value `any`, an array without
    /// `items` `list[any]`.
    Manifest,
    /// An upstream MCP server's schema, mapped as leniently as a manifest's,
    /// and more: any field whose schema the notation cannot express (unions,
    /// tuples, recursion, conditionals, ...) is `any`, and an object with
    /// named fields that also allows other keys is the struct of its named
    /// fields. Only a root that is not an object with named fields fails.
    Upstream,
}

/// At most this many schema nodes are mapped for one capability (each
/// `$ref` expansion counts again), so a small schema whose references fan
/// out cannot expand without bound.
pub const MAX_SCHEMA_NODES: usize = 10_000;

/// Maps a JSON Schema whose root is an object (or `null`, meaning no
/// fields) to its fields in declaration order.
pub fn fields_from_schema(
    schema: &Value,
    source: SchemaSource,
) -> Result<Vec<FieldShape>, ShapeError> {
    fields_from_schema_in(schema, schema, source)
}

/// Like [`fields_from_schema`], but local `$ref`s (`#/components/...`)
/// resolve against `document`, the document the schema is part of (an
/// OpenAPI description), instead of against the schema itself.
pub fn fields_from_schema_in(
    schema: &Value,
    document: &Value,
    source: SchemaSource,
) -> Result<Vec<FieldShape>, ShapeError> {
    let mut mapper = Mapper {
        root: document,
        source,
        // The root itself is `#`: a self-reference is recursion too.
        stack: vec!["#"],
        nodes: 0,
    };
    let obj = mapper.deref(schema, "")?;
    if obj.get("type").and_then(Value::as_str) == Some("null") && !obj.contains_key("properties") {
        return Ok(Vec::new());
    }
    let shape = mapper.map(schema, "", true)?;
    match shape.kind {
        ShapeKind::Struct(fields) => Ok(fields),
        _ => Err(ShapeError {
            path: String::new(),
            reason: format!(
                "the root must be an object with named fields, not {}",
                shape.notation()
            ),
        }),
    }
}

struct Mapper<'a> {
    root: &'a Value,
    source: SchemaSource,
    /// The `$ref`s being expanded, to refuse recursive types.
    stack: Vec<&'a str>,
    /// Nodes mapped so far, bounded by [`MAX_SCHEMA_NODES`].
    nodes: usize,
}

fn err(path: &str, reason: impl Into<String>) -> ShapeError {
    ShapeError {
        path: path.to_string(),
        reason: reason.into(),
    }
}

impl<'a> Mapper<'a> {
    /// The object of a schema node (a boolean schema has none).
    fn deref(&self, node: &'a Value, path: &str) -> Result<&'a Map<String, Value>, ShapeError> {
        match node {
            Value::Object(m) => Ok(m),
            Value::Bool(true) => Err(err(path, "free-form values (any type) are not supported")),
            _ => Err(err(path, "invalid schema")),
        }
    }

    fn resolve(&self, reference: &str, path: &str) -> Result<&'a Value, ShapeError> {
        let pointer = reference.strip_prefix('#').ok_or_else(|| {
            err(
                path,
                format!("external reference {reference} is not supported"),
            )
        })?;
        self.root
            .pointer(pointer)
            .ok_or_else(|| err(path, format!("unresolved reference {reference}")))
    }

    fn map(&mut self, node: &'a Value, path: &str, root: bool) -> Result<Shape, ShapeError> {
        self.nodes += 1;
        if self.nodes > MAX_SCHEMA_NODES {
            return Err(err(path, "the schema is too large"));
        }
        if self.source != SchemaSource::Upstream || root {
            return self.map_strict(node, path, root);
        }
        // Upstream: what the notation cannot express below the root is
        // `any`; only the size bound still fails the whole schema.
        match self.map_strict(node, path, root) {
            Err(_) if self.nodes <= MAX_SCHEMA_NODES => Ok(Shape::new(ShapeKind::Any)),
            other => other,
        }
    }

    fn map_strict(&mut self, node: &'a Value, path: &str, root: bool) -> Result<Shape, ShapeError> {
        if self.source != SchemaSource::Derived {
            match node {
                Value::Bool(true) => return Ok(Shape::new(ShapeKind::Any)),
                Value::Object(m) if m.is_empty() => return Ok(Shape::new(ShapeKind::Any)),
                _ => {}
            }
        }
        let obj = self.deref(node, path)?;
        if let Some(r) = obj.get("$ref") {
            let r = r
                .as_str()
                .ok_or_else(|| err(path, "invalid schema: $ref is not a string"))?;
            if self.stack.contains(&r) {
                return Err(err(path, "recursive types are not supported"));
            }
            let target = self.resolve(r, path)?;
            self.stack.push(r);
            let shape = self.map(target, path, root);
            self.stack.pop();
            return shape;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(alts) = obj.get(key) {
                return self.union(alts, path);
            }
        }
        if let Some(all) = obj.get("allOf") {
            return match all.as_array().map(Vec::as_slice) {
                Some([one]) => self.map(one, path, root),
                _ => Err(err(path, "allOf with several schemas is not supported")),
            };
        }
        if obj.contains_key("not") || obj.contains_key("if") {
            return Err(err(path, "conditional schemas are not supported"));
        }
        let mut nullable = false;
        let mut ty: Option<&str> = None;
        match obj.get("type") {
            Some(Value::String(t)) => ty = Some(t),
            Some(Value::Array(ts)) => {
                for t in ts {
                    match t.as_str() {
                        Some("null") => nullable = true,
                        Some(t) if ty.is_none() => ty = Some(t),
                        Some(_) => {
                            return Err(err(
                                path,
                                "union types other than T | None are not supported",
                            ))
                        }
                        None => return Err(err(path, "invalid schema: type is not a string")),
                    }
                }
            }
            Some(_) => return Err(err(path, "invalid schema: type is not a string")),
            None => {}
        }
        let mut allowed: Option<Vec<Data>> = None;
        let enum_values: Option<Vec<&Value>> = match (obj.get("enum"), obj.get("const")) {
            (Some(Value::Array(vs)), _) => Some(vs.iter().collect()),
            (Some(_), _) => return Err(err(path, "invalid schema: enum is not an array")),
            (None, Some(c)) => Some(vec![c]),
            (None, None) => None,
        };
        if let Some(values) = enum_values {
            let mut out = Vec::new();
            for v in values {
                if v.is_null() {
                    nullable = true;
                    continue;
                }
                let inferred = match v {
                    Value::String(_) => "string",
                    Value::Bool(_) => "boolean",
                    Value::Number(n) if n.is_i64() => "integer",
                    Value::Number(_) => "number",
                    _ => return Err(err(path, "allowed values must be scalars")),
                };
                match ty {
                    None => ty = Some(inferred),
                    Some("number") if inferred == "integer" => {}
                    Some(t) if t == inferred => {}
                    Some(_) => {
                        return Err(err(
                            path,
                            "union types other than T | None are not supported",
                        ))
                    }
                }
                out.push(
                    Data::from_json(v)
                        .ok_or_else(|| err(path, "allowed values must be scalars"))?,
                );
            }
            allowed = Some(out);
        }
        let Some(ty) = ty else {
            return match self.source {
                SchemaSource::Manifest | SchemaSource::Upstream if !nullable => {
                    Ok(Shape::new(ShapeKind::Any))
                }
                _ => Err(err(path, "free-form values (any type) are not supported")),
            };
        };
        let mut rules = Vec::new();
        let kind = match ty {
            "string" => {
                length_rules(obj, "minLength", "maxLength", &mut rules, path)?;
                ShapeKind::Str
            }
            "integer" => {
                number_rules(obj, &mut rules, path)?;
                ShapeKind::Int
            }
            "number" => {
                number_rules(obj, &mut rules, path)?;
                ShapeKind::Float
            }
            "boolean" => ShapeKind::Bool,
            "array" => {
                length_rules(obj, "minItems", "maxItems", &mut rules, path)?;
                if obj.contains_key("prefixItems") || obj.get("items").is_some_and(Value::is_array)
                {
                    return Err(err(path, "tuples are not supported"));
                }
                let item_path = format!("{path}[]");
                match obj.get("items") {
                    Some(items) => ShapeKind::List(Box::new(self.map(items, &item_path, false)?)),
                    None if self.source == SchemaSource::Manifest => {
                        ShapeKind::List(Box::new(Shape::new(ShapeKind::Any)))
                    }
                    None => return Err(err(path, "a list needs an item type")),
                }
            }
            "object" => {
                length_rules(obj, "minProperties", "maxProperties", &mut rules, path)?;
                self.object(obj, path, root)?
            }
            "null" => return Err(err(path, "a field that is always None is not supported")),
            other => return Err(err(path, format!("type {other} is not supported"))),
        };
        if let Some(values) = allowed {
            rules.push(Rule::OneOf(values));
        }
        let shape = Shape { kind, rules };
        Ok(if nullable {
            Shape::optional(shape)
        } else {
            shape
        })
    }

    fn union(&mut self, alts: &'a Value, path: &str) -> Result<Shape, ShapeError> {
        let alts = alts
            .as_array()
            .ok_or_else(|| err(path, "invalid schema: union is not an array"))?;
        let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
        let non_null: Vec<&'a Value> = alts.iter().filter(|v| !is_null(v)).collect();
        match non_null.as_slice() {
            [one] if non_null.len() < alts.len() => {
                Ok(Shape::optional(self.map(one, path, false)?))
            }
            [one] => self.map(one, path, false),
            _ => Err(err(
                path,
                "union types other than T | None are not supported",
            )),
        }
    }

    fn object(
        &mut self,
        obj: &'a Map<String, Value>,
        path: &str,
        root: bool,
    ) -> Result<ShapeKind, ShapeError> {
        if obj.contains_key("patternProperties") {
            return Err(err(path, "maps need string keys"));
        }
        if let Some(names) = obj.get("propertyNames") {
            let ty = names.get("type").and_then(Value::as_str);
            if ty.is_some_and(|t| t != "string") {
                return Err(err(path, "maps need string keys"));
            }
        }
        let additional = obj.get("additionalProperties");
        if let Some(props) = obj.get("properties") {
            let props = props
                .as_object()
                .ok_or_else(|| err(path, "invalid schema: properties is not an object"))?;
            if self.source != SchemaSource::Upstream
                && additional.is_some_and(|a| *a != Value::Bool(false))
            {
                return Err(err(
                    path,
                    "a struct with additional properties (named fields and map entries) is not supported",
                ));
            }
            let required: Vec<&str> = match obj.get("required") {
                None => Vec::new(),
                Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
                Some(_) => return Err(err(path, "invalid schema: required is not an array")),
            };
            let mut fields = Vec::with_capacity(props.len());
            for (name, schema) in props {
                let field_path = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                fields.push(FieldShape {
                    name: name.clone(),
                    shape: self.map(schema, &field_path, false)?,
                    required: required.contains(&name.as_str()),
                });
            }
            for r in &required {
                if !props.contains_key(*r) {
                    return Err(err(path, format!("required field {r} has no schema")));
                }
            }
            return Ok(ShapeKind::Struct(fields));
        }
        match additional {
            Some(Value::Bool(false)) => Ok(ShapeKind::Struct(Vec::new())),
            None if root || self.source == SchemaSource::Derived => {
                Ok(ShapeKind::Struct(Vec::new()))
            }
            Some(Value::Bool(true)) | None => match self.source {
                SchemaSource::Manifest | SchemaSource::Upstream => {
                    Ok(ShapeKind::Map(Box::new(Shape::new(ShapeKind::Any))))
                }
                SchemaSource::Derived => {
                    Err(err(path, "free-form values (any type) are not supported"))
                }
            },
            Some(values) => {
                let value_path = format!("{path}{{}}");
                Ok(ShapeKind::Map(Box::new(self.map(
                    values,
                    &value_path,
                    false,
                )?)))
            }
        }
    }
}

fn as_bound(v: &Value, path: &str, key: &str) -> Result<Number, ShapeError> {
    match v {
        Value::Number(n) => Ok(match n.as_i64() {
            Some(i) => Number::Int(i),
            None => Number::Float(n.as_f64().unwrap_or(f64::INFINITY)),
        }),
        _ => Err(err(path, format!("invalid schema: {key} is not a number"))),
    }
}

fn number_rules(
    obj: &Map<String, Value>,
    rules: &mut Vec<Rule>,
    path: &str,
) -> Result<(), ShapeError> {
    type MakeRule = fn(Number) -> Rule;
    let kinds: [(&str, MakeRule); 4] = [
        ("minimum", Rule::Minimum),
        ("maximum", Rule::Maximum),
        ("exclusiveMinimum", Rule::ExclusiveMinimum),
        ("exclusiveMaximum", Rule::ExclusiveMaximum),
    ];
    for (key, make) in kinds {
        if let Some(v) = obj.get(key) {
            let bound = as_bound(v, path, key)?;
            // Bounds that every i64 meets (u64's maximum) carry no rule.
            let trivial = match (key, bound) {
                ("maximum" | "exclusiveMaximum", Number::Float(x)) => x >= 9.3e18,
                ("minimum" | "exclusiveMinimum", Number::Float(x)) => x <= -9.3e18,
                _ => false,
            };
            if !trivial {
                rules.push(make(bound));
            }
        }
    }
    Ok(())
}

fn length_rules(
    obj: &Map<String, Value>,
    min: &str,
    max: &str,
    rules: &mut Vec<Rule>,
    path: &str,
) -> Result<(), ShapeError> {
    for (key, make) in [
        (min, Rule::MinLength as fn(u64) -> Rule),
        (max, Rule::MaxLength as fn(u64) -> Rule),
    ] {
        if let Some(v) = obj.get(key) {
            let n = v
                .as_u64()
                .ok_or_else(|| err(path, format!("invalid schema: {key} is not a count")))?;
            rules.push(make(n));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{Number, Rule};
    use serde_json::json;

    #[test]
    fn schema_rules_become_input_rules() {
        let fields = fields_from_schema(
            &json!({"type": "object", "properties": {
                "n": {"type": ["integer", "null"], "minimum": 1, "maximum": 18446744073709551615u64},
                "s": {"type": "string", "minLength": 2, "enum": ["ab", "cd"]},
                "l": {"type": "array", "items": {"type": "number"}, "maxItems": 3}
            }}),
            SchemaSource::Manifest,
        )
        .unwrap_or_default();
        let rules: Vec<Vec<Rule>> = fields
            .iter()
            .map(|f| f.shape.non_optional().rules.clone())
            .collect();
        assert_eq!(
            rules,
            vec![
                vec![Rule::Minimum(Number::Int(1))],
                vec![
                    Rule::MinLength(2),
                    Rule::OneOf(vec![Data::Str("ab".into()), Data::Str("cd".into())])
                ],
                vec![Rule::MaxLength(3)],
            ]
        );
        assert_eq!(fields[0].shape.notation(), "int | None");
    }

    #[test]
    fn upstream_schemas_map_what_they_cannot_express_to_any() {
        let schema = json!({"type": "object", "properties": {
            "u": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "t": {"type": "array", "prefixItems": [{"type": "string"}]},
            "r": {"$ref": "#"},
            "c": {"if": {"type": "string"}},
            "o": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true},
            "m": {"type": "object"},
            "n": {"type": ["string", "null"]}
        }, "required": ["u"], "additionalProperties": {"type": "string"}});
        let fields = fields_from_schema(&schema, SchemaSource::Upstream).unwrap_or_default();
        let shapes: Vec<String> = fields.iter().map(|f| f.shape.notation()).collect();
        assert_eq!(
            shapes,
            [
                "any",
                "any",
                "any",
                "any",
                "{a?: str}",
                "dict[str, any]",
                "str | None"
            ]
        );
        // The same schema is refused from a manifest.
        assert!(fields_from_schema(&schema, SchemaSource::Manifest).is_err());
        // Only a root that is no object with fields still fails.
        let e = fields_from_schema(&json!({"type": "string"}), SchemaSource::Upstream);
        assert!(e.is_err());
    }

    #[test]
    fn references_that_fan_out_are_bounded() {
        // Each level refers to the next twice: 2^30 nodes if expanded.
        let mut defs = serde_json::Map::new();
        for i in 0..30 {
            let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
            defs.insert(
                format!("d{i}"),
                json!({"type": "object", "properties": {"a": next.clone(), "b": next}}),
            );
        }
        defs.insert("d30".into(), json!({"type": "string"}));
        let schema =
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs});
        for source in [
            SchemaSource::Manifest,
            SchemaSource::Upstream,
            SchemaSource::Derived,
        ] {
            let e = fields_from_schema(&schema, source).map_err(|e| e.reason);
            assert_eq!(e, Err("the schema is too large".to_string()));
        }
    }

    #[test]
    fn external_references_and_bad_schemas_are_refused() {
        let e = fields_from_schema(
            &json!({"type": "object", "properties": {"x": {"$ref": "http://x/y"}}}),
            SchemaSource::Derived,
        );
        assert_eq!(
            e.map_err(|e| e.to_string()),
            Err("x: external reference http://x/y is not supported".into())
        );
        let e = fields_from_schema(&json!({"type": "string"}), SchemaSource::Derived);
        assert_eq!(
            e.map_err(|e| e.to_string()),
            Err("(root): the root must be an object with named fields, not str".into())
        );
    }
}
