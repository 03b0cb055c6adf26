//! Deserialization of a handler's typed input straight from [`Data`].
//!
//! The canonical arguments that binding produced are handed to a typed
//! handler through [`from_data`], a serde `Deserializer` over [`Data`], with
//! no detour through `serde_json::Value`. It reads data as serde_json reads
//! the same JSON value: null is a unit or a `None`, ints and floats visit as
//! i64 and f64, maps visit as maps (or structs), lists as sequences, a
//! string is a unit enum variant and a one-entry map a variant with a
//! payload; a map or list with elements left over after the visitor is
//! done is an error, as in serde_json.

use codemode_vm::Data;
use serde::de::value::{MapDeserializer, SeqDeserializer, StringDeserializer};
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use std::fmt;

/// The input does not fit the handler's type; the detail stays on the host.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(String);

impl de::Error for DecodeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DecodeError(msg.to_string())
    }
}

/// Deserializes `data` into `T`.
pub fn from_data<T: DeserializeOwned>(data: Data) -> Result<T, DecodeError> {
    T::deserialize(DataDeserializer(data))
}

/// A deserializer that owns the data it reads.
pub struct DataDeserializer(pub Data);

impl<'de> IntoDeserializer<'de, DecodeError> for DataDeserializer {
    type Deserializer = DataDeserializer;
    fn into_deserializer(self) -> DataDeserializer {
        self
    }
}

/// Wraps each element for serde's sequence and map helpers.
fn wrap(d: Data) -> DataDeserializer {
    DataDeserializer(d)
}

/// A map's keys, as owned strings.
fn key(k: String) -> StringDeserializer<DecodeError> {
    k.into_deserializer()
}

fn visit_list<'de, V: Visitor<'de>>(items: Vec<Data>, visitor: V) -> Result<V::Value, DecodeError> {
    let mut seq = SeqDeserializer::new(items.into_iter().map(wrap));
    let value = visitor.visit_seq(&mut seq)?;
    seq.end()?;
    Ok(value)
}

fn visit_map<'de, V: Visitor<'de>>(
    entries: Vec<(String, Data)>,
    visitor: V,
) -> Result<V::Value, DecodeError> {
    let mut map = MapDeserializer::new(entries.into_iter().map(|(k, v)| (key(k), wrap(v))));
    let value = visitor.visit_map(&mut map)?;
    map.end()?;
    Ok(value)
}

impl<'de> de::Deserializer<'de> for DataDeserializer {
    type Error = DecodeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        match self.0 {
            Data::Null => visitor.visit_unit(),
            Data::Bool(b) => visitor.visit_bool(b),
            Data::Int(i) => visitor.visit_i64(i),
            Data::Float(f) => visitor.visit_f64(f),
            Data::Str(s) => visitor.visit_string(s),
            Data::List(items) => visit_list(items, visitor),
            Data::Map(entries) => visit_map(entries, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        match self.0 {
            Data::Null => visitor.visit_none(),
            other => visitor.visit_some(DataDeserializer(other)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        match self.0 {
            Data::Str(s) => visitor.visit_enum(key(s)),
            Data::Map(mut entries) if entries.len() == 1 => {
                let (variant, value) = entries.pop().ok_or_else(|| {
                    de::Error::invalid_value(de::Unexpected::Map, &"a map with a single key")
                })?;
                visitor.visit_enum(Variant {
                    name: variant,
                    value,
                })
            }
            Data::Map(_) => Err(de::Error::invalid_value(
                de::Unexpected::Map,
                &"map with a single key",
            )),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"string or map",
            )),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

fn unexpected(d: &Data) -> de::Unexpected<'_> {
    match d {
        Data::Null => de::Unexpected::Unit,
        Data::Bool(b) => de::Unexpected::Bool(*b),
        Data::Int(i) => de::Unexpected::Signed(*i),
        Data::Float(f) => de::Unexpected::Float(*f),
        Data::Str(s) => de::Unexpected::Str(s),
        Data::List(_) => de::Unexpected::Seq,
        Data::Map(_) => de::Unexpected::Map,
    }
}

/// An enum variant with a payload: `{"Name": payload}`.
struct Variant {
    name: String,
    value: Data,
}

impl<'de> de::EnumAccess<'de> for Variant {
    type Error = DecodeError;
    type Variant = Payload;

    fn variant_seed<S: de::DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Payload), DecodeError> {
        let name = seed.deserialize(key(self.name))?;
        Ok((name, Payload(self.value)))
    }
}

/// The payload of a variant.
struct Payload(Data);

impl<'de> de::VariantAccess<'de> for Payload {
    type Error = DecodeError;

    fn unit_variant(self) -> Result<(), DecodeError> {
        match self.0 {
            Data::Null => Ok(()),
            other => Err(de::Error::invalid_type(unexpected(&other), &"unit variant")),
        }
    }

    fn newtype_variant_seed<S: de::DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<S::Value, DecodeError> {
        seed.deserialize(DataDeserializer(self.0))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        match self.0 {
            Data::List(items) => visit_list(items, visitor),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        match self.0 {
            Data::Map(entries) => visit_map(entries, visitor),
            Data::List(items) => visit_list(items, visitor),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"struct variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, PartialEq, Deserialize)]
    enum Kind {
        Plain,
        Sized(u32),
        Pair(i64, String),
        Named { x: f64 },
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Input {
        name: String,
        count: u8,
        ratio: f64,
        tags: Vec<String>,
        extra: Option<bool>,
        kinds: Vec<Kind>,
        pair: (i64, bool),
        map: std::collections::BTreeMap<String, i32>,
    }

    /// Data and JSON give the same result through both deserializers.
    fn both<T: DeserializeOwned + PartialEq + fmt::Debug>(v: serde_json::Value) -> Option<T> {
        let data = Data::from_json(&v).expect("representable");
        let ours = from_data::<T>(data).ok();
        let theirs = serde_json::from_value::<T>(v.clone()).ok();
        assert_eq!(ours, theirs, "{v}");
        ours
    }

    #[test]
    fn reads_data_as_serde_json_reads_the_same_json() {
        let ok = json!({
            "name": "a", "count": 3, "ratio": 2, "tags": ["x", "y"],
            "kinds": ["Plain", {"Sized": 4}, {"Pair": [1, "p"]}, {"Named": {"x": 1.5}}],
            "pair": [-1, true], "map": {"k": -2}
        });
        let input = both::<Input>(ok.clone()).expect("decodes");
        assert_eq!(input.extra, None);
        assert_eq!(input.ratio, 2.0);
        assert_eq!(input.kinds[1], Kind::Sized(4));
        let mut with = ok.clone();
        with["extra"] = json!(true);
        assert_eq!(both::<Input>(with).map(|i| i.extra), Some(Some(true)));
        for (field, bad) in [
            ("count", json!(300)),
            ("count", json!(-1)),
            ("count", json!(1.5)),
            ("name", json!(1)),
            ("pair", json!([1, true, 3])),
            ("pair", json!([1])),
            ("kinds", json!([{"Plain": 1, "Sized": 2}])),
            ("kinds", json!(["Nope"])),
            ("kinds", json!([{"Sized": "4"}])),
            ("map", json!({"k": 1.0})),
        ] {
            let mut v = ok.clone();
            v[field] = bad;
            assert_eq!(both::<Input>(v), None);
        }
        assert!(from_data::<crate::NoInput>(Data::Map(vec![])).is_ok());
        let extra = Data::Map(vec![("x".into(), Data::Int(1))]);
        assert!(from_data::<crate::NoInput>(extra).is_err());
        assert_eq!(both::<()>(json!(null)), Some(()));
        assert_eq!(both::<Option<i64>>(json!(null)), Some(None));
    }
}
