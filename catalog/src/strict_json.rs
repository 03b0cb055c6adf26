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

/// Why a text is not strict JSON (or not arguments); the text of the first
/// two is serde_json's message, with its line and column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// An object has two members with one name.
    #[error("{0}")]
    DuplicateMember(String),
    /// The text is not one JSON document (syntax, end of input, nesting),
    /// or (in a typed reading) not of the type's shape.
    #[error("{0}")]
    Invalid(String),
    /// Arguments that are JSON but no object.
    #[error("arguments must be a JSON object")]
    NotAnObject,
}

/// The start of a duplicate member's error message.
const DUPLICATE: &str = "duplicate member";

/// The error of a second member named `key` in one object: a typed
/// reading refuses it with this, right after reading the key, as
/// [`Strict`] does (so the position serde_json adds is the same).
pub fn duplicate_member<E: de::Error>(key: &str) -> E {
    E::custom(format!("{DUPLICATE} {key:?}"))
}

impl JsonError {
    /// The kind of a strict reading's failure, [`Strict`]'s or a typed
    /// reading's that uses [`duplicate_member`]: the duplicate is the one
    /// data error whose message this module wrote.
    pub fn of(e: serde_json::Error) -> JsonError {
        let message = e.to_string();
        if e.classify() == serde_json::error::Category::Data && message.starts_with(DUPLICATE) {
            JsonError::DuplicateMember(message)
        } else {
            JsonError::Invalid(message)
        }
    }
}

/// Decodes one JSON document, refusing duplicate members at any depth.
pub fn parse_strict(text: &str) -> Result<Value, JsonError> {
    serde_json::from_str::<Strict>(text)
        .map(|Strict(v)| v)
        .map_err(JsonError::of)
}

/// Decodes the arguments of a direct call: one JSON object without
/// duplicate members; an empty (or blank) text and `null` are `{}`.
pub fn parse_arguments(text: &str) -> Result<Map<String, Value>, JsonError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match parse_strict(text)? {
        Value::Object(members) => Ok(members),
        Value::Null => Ok(Map::new()),
        _ => Err(JsonError::NotAnObject),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn duplicates_are_refused_at_any_depth() {
        let e = parse_strict(r#"{"name": "a", "name": "b"}"#).unwrap_err();
        assert_eq!(
            e,
            JsonError::DuplicateMember("duplicate member \"name\" at line 1 column 20".into())
        );
        let e = parse_strict(r#"{"a": [{"k": 1, "k": 2}]}"#).unwrap_err();
        assert!(
            matches!(&e, JsonError::DuplicateMember(m) if m.starts_with("duplicate member \"k\"")),
            "{e}"
        );
        assert_eq!(
            parse_strict(r#"{"a": [{"k": 1}, {"k": 2}], "b": null}"#),
            Ok(json!({"a": [{"k": 1}, {"k": 2}], "b": null}))
        );
        for invalid in [
            "[".repeat(200),
            "{} {}".into(),
            "{\"a\": }".into(),
            "[1".into(),
        ] {
            let e = parse_strict(&invalid).unwrap_err();
            assert!(matches!(e, JsonError::Invalid(_)), "{invalid}: {e:?}");
        }
        assert_eq!(
            parse_strict("[1,]").unwrap_err().to_string(),
            "trailing comma at line 1 column 4"
        );
    }

    #[test]
    fn arguments_are_one_object() {
        assert_eq!(parse_arguments(""), Ok(Map::new()));
        assert_eq!(parse_arguments("null"), Ok(Map::new()));
        assert_eq!(parse_arguments("[1]"), Err(JsonError::NotAnObject));
        assert_eq!(
            JsonError::NotAnObject.to_string(),
            "arguments must be a JSON object"
        );
        let m = parse_arguments(r#"{"b": 1, "a": 2}"#).unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "a"]);
    }
}
