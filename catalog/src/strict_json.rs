//! Strict decoding of JSON arguments.
//!
//! serde_json keeps the last of two members with the same name
//! (`{"name": "a", "name": "b"}` reads as `{"name": "b"}`); codemode
//! refuses such a document (`docs/architecture.md`, section 1), because
//! two parsers of the same bytes could then disagree about what was asked.
//! [`parse_strict`] decodes a JSON document into a [`serde_json::Value`]
//! and fails on a duplicate member at any depth (serde_json bounds the nesting at 128
//! levels); [`Strict`] is that reading of one part of a typed document.
//! [`parse_arguments`] is the form of a direct capability call:
//! one object, an empty text or `null` meaning `{}`.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// A JSON value that refused duplicate members while it was decoded: the
/// strict reading of one member of a larger typed document (the error is
/// [`parse_strict`]'s, at the same position).
pub struct Strict(pub Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Strict, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Strict, E> {
        Ok(Strict(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Strict, E> {
        Ok(Strict(Value::String(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Strict, E> {
        Ok(Strict(Value::String(v)))
    }

    fn visit_unit<E>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }

    fn visit_none<E>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Strict(Value::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if members.contains_key(&key) {
                return Err(duplicate_member(&key));
            }
            let Strict(value) = map.next_value()?;
            members.insert(key, value);
        }
        Ok(Strict(Value::Object(members)))
    }
}

/// The error of a second member named `key` in one object: a typed
/// reading refuses it with this, right after reading the key, as
/// [`Strict`] does (so the position serde_json adds is the same).
pub fn duplicate_member<E: de::Error>(key: &str) -> E {
    E::custom(format!("duplicate member {key:?}"))
}

/// Whether an error message of [`parse_strict`] (or of a typed reading
/// using [`duplicate_member`]) is a duplicate member's.
pub fn is_duplicate_member(message: &str) -> bool {
    message.starts_with("duplicate member")
}

/// Decodes one JSON document, refusing duplicate members at any depth. The
/// error is serde_json's message (with its line and column).
pub fn parse_strict(text: &str) -> Result<Value, String> {
    serde_json::from_str::<Strict>(text)
        .map(|Strict(v)| v)
        .map_err(|e| e.to_string())
}

/// Decodes the arguments of a direct call: one JSON object without
/// duplicate members; an empty (or blank) text and `null` are `{}`.
pub fn parse_arguments(text: &str) -> Result<Map<String, Value>, String> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match parse_strict(text)? {
        Value::Object(members) => Ok(members),
        Value::Null => Ok(Map::new()),
        _ => Err("arguments must be a JSON object".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn duplicates_are_refused_at_any_depth() {
        let e = parse_strict(r#"{"name": "a", "name": "b"}"#).unwrap_err();
        assert!(e.starts_with("duplicate member \"name\""), "{e}");
        let e = parse_strict(r#"{"a": [{"k": 1, "k": 2}]}"#).unwrap_err();
        assert!(e.starts_with("duplicate member \"k\""), "{e}");
        assert_eq!(
            parse_strict(r#"{"a": [{"k": 1}, {"k": 2}], "b": null}"#),
            Ok(json!({"a": [{"k": 1}, {"k": 2}], "b": null}))
        );
        assert!(parse_strict(&"[".repeat(200)).is_err());
        assert!(parse_strict("{} {}").is_err());
    }

    #[test]
    fn arguments_are_one_object() {
        assert_eq!(parse_arguments(""), Ok(Map::new()));
        assert_eq!(parse_arguments("null"), Ok(Map::new()));
        assert_eq!(
            parse_arguments("[1]"),
            Err("arguments must be a JSON object".into())
        );
        let m = parse_arguments(r#"{"b": 1, "a": 2}"#).unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "a"]);
    }
}
