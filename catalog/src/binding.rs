//! Binding: a call's keyword arguments against a capability's input shape.
//!
//! [`bind`] checks every argument against the declared fields — unknown,
//! missing, mistyped and rule-violating arguments fail with a detail that
//! names the argument or the path inside it (`filter.owner`, `tags[1]`,
//! `labels["k"]`) — and produces the canonical argument map: fields in
//! declaration order, with omitted optional arguments and explicit `None`
//! both left out. That map is what authorization sees and what the handler's
//! input is deserialized from. Integers are i64 by construction of
//! [`Data`]; an int is accepted where a float is declared.

use crate::shape::{FieldShape, Number, Rule, Shape, ShapeKind};
use codemode_vm::Data;

/// A binding failure; the detail follows `invalid capability arguments: `.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid capability arguments: {0}")]
pub struct BindError(pub String);

/// Binds keyword arguments (in call order) to `fields`, returning the
/// canonical argument map.
pub fn bind(fields: &[FieldShape], args: Vec<(String, Data)>) -> Result<Data, BindError> {
    for (i, (name, _)) in args.iter().enumerate() {
        if !fields.iter().any(|f| f.name == *name) {
            return Err(BindError(format!("{name}: unknown argument")));
        }
        if args[..i].iter().any(|(n, _)| n == name) {
            return Err(BindError(format!("{name}: duplicate argument")));
        }
    }
    let mut args: Vec<Option<(String, Data)>> = args.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let value = args
            .iter_mut()
            .find(|a| a.as_ref().is_some_and(|(n, _)| *n == f.name))
            .and_then(Option::take)
            .map(|(_, v)| v);
        match value {
            None | Some(Data::Null) if f.optional_argument() => {}
            None => return Err(BindError(format!("{}: missing required argument", f.name))),
            Some(v) => {
                let mut path = f.name.clone();
                out.push((f.name.clone(), bind_value(&f.shape, v, &mut path)?));
            }
        }
    }
    Ok(Data::Map(out))
}

fn type_name(d: &Data) -> &'static str {
    match d {
        Data::Null => "None",
        Data::Bool(_) => "bool",
        Data::Int(_) => "int",
        Data::Float(_) => "float",
        Data::Str(_) => "str",
        Data::List(_) => "list",
        Data::Map(_) => "dict",
    }
}

fn want(shape: &Shape) -> String {
    match &shape.kind {
        ShapeKind::Struct(_) => "dict".to_string(),
        _ => shape.notation(),
    }
}

fn bind_value(shape: &Shape, value: Data, path: &mut String) -> Result<Data, BindError> {
    let mismatch = |value: &Data, path: &str| {
        BindError(format!(
            "{path}: want {}, got {}",
            want(shape),
            type_name(value)
        ))
    };
    let bound = match (&shape.kind, value) {
        (ShapeKind::Optional(_), Data::Null) => return Ok(Data::Null),
        (ShapeKind::Optional(inner), v) => return bind_value(inner, v, path),
        (ShapeKind::Str, v @ Data::Str(_)) => v,
        (ShapeKind::Int, v @ Data::Int(_)) => v,
        (ShapeKind::Bool, v @ Data::Bool(_)) => v,
        (ShapeKind::Float | ShapeKind::Any, Data::Float(f)) if !f.is_finite() => {
            return Err(BindError(format!("{path}: want finite float")))
        }
        (ShapeKind::Float, v @ Data::Float(_)) => v,
        (ShapeKind::Float, Data::Int(i)) => Data::Float(i as f64),
        (ShapeKind::Any, v) => v,
        (ShapeKind::List(inner), Data::List(items)) => {
            let len = path.len();
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                path.push_str(&format!("[{i}]"));
                out.push(bind_value(inner, item, path)?);
                path.truncate(len);
            }
            Data::List(out)
        }
        (ShapeKind::Map(inner), Data::Map(entries)) => {
            let len = path.len();
            let mut out = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                path.push('[');
                path.push_str(&Data::Str(k.clone()).to_json_string());
                path.push(']');
                out.push((k, bind_value(inner, v, path)?));
                path.truncate(len);
            }
            Data::Map(out)
        }
        (ShapeKind::Struct(fields), Data::Map(mut entries)) => {
            let len = path.len();
            if let Some((k, _)) = entries
                .iter()
                .find(|(k, _)| !fields.iter().any(|f| f.name == *k))
            {
                return Err(BindError(format!("{path}.{k}: unknown field")));
            }
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                let value = entries
                    .iter()
                    .position(|(k, _)| *k == f.name)
                    .map(|i| entries.swap_remove(i).1);
                match value {
                    None | Some(Data::Null) if f.optional_argument() => {}
                    None => {
                        return Err(BindError(format!(
                            "{path}.{}: missing required field",
                            f.name
                        )))
                    }
                    Some(v) => {
                        path.push('.');
                        path.push_str(&f.name);
                        out.push((f.name.clone(), bind_value(&f.shape, v, path)?));
                        path.truncate(len);
                    }
                }
            }
            Data::Map(out)
        }
        (_, v) => return Err(mismatch(&v, path)),
    };
    for rule in &shape.rules {
        if !satisfies(rule, &bound) {
            return Err(BindError(format!("{path}: {}", rule.violation())));
        }
    }
    Ok(bound)
}

/// Compares a value with a bound: `Some(ordering of value vs bound)`.
fn compare(value: &Data, bound: Number) -> Option<std::cmp::Ordering> {
    match (value, bound) {
        (Data::Int(v), Number::Int(b)) => Some(v.cmp(&b)),
        (Data::Int(v), Number::Float(b)) => (*v as f64).partial_cmp(&b),
        (Data::Float(v), Number::Int(b)) => v.partial_cmp(&(b as f64)),
        (Data::Float(v), Number::Float(b)) => v.partial_cmp(&b),
        _ => None,
    }
}

fn length(value: &Data) -> Option<u64> {
    match value {
        Data::Str(s) => Some(s.chars().count() as u64),
        Data::List(items) => Some(items.len() as u64),
        Data::Map(entries) => Some(entries.len() as u64),
        _ => None,
    }
}

fn same(a: &Data, b: &Data) -> bool {
    match (a, b) {
        (Data::Int(x), Data::Float(y)) | (Data::Float(y), Data::Int(x)) => (*x as f64) == *y,
        _ => a == b,
    }
}

/// Whether `value` keeps `rule` (a rule on another type is kept).
pub(crate) fn satisfies(rule: &Rule, value: &Data) -> bool {
    use std::cmp::Ordering::*;
    match rule {
        Rule::Minimum(b) => compare(value, *b).is_none_or(|o| o != Less),
        Rule::Maximum(b) => compare(value, *b).is_none_or(|o| o != Greater),
        Rule::ExclusiveMinimum(b) => compare(value, *b).is_none_or(|o| o == Greater),
        Rule::ExclusiveMaximum(b) => compare(value, *b).is_none_or(|o| o == Less),
        Rule::MinLength(n) => length(value).is_none_or(|l| l >= *n),
        Rule::MaxLength(n) => length(value).is_none_or(|l| l <= *n),
        Rule::OneOf(allowed) => allowed.iter().any(|a| same(a, value)),
    }
}
