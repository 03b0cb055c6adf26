//! Conversion of a handler's typed output to [`Data`].
//!
//! [`to_data`] is a serde `Serializer` that builds [`Data`] directly, so
//! struct fields keep their declaration order and skipped fields stay
//! absent. It refuses what the contract forbids in results: non-finite
//! floats, integers outside i64 (a `u64` above `i64::MAX`), non-string map
//! keys. A refusal makes the call `capability failed`.

use codemode_vm::Data;
use serde::ser::{self, Serialize};
use std::fmt;

/// Why an output cannot cross to the program.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    #[error("non-finite float")]
    NonFinite,
    #[error("integer outside the signed 64-bit range")]
    IntegerRange,
    #[error("map key is not a string")]
    MapKey,
    #[error("{0}")]
    Custom(String),
}

impl ser::Error for ConvertError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ConvertError::Custom(msg.to_string())
    }
}

/// Serializes `value` into [`Data`].
pub fn to_data<T: Serialize + ?Sized>(value: &T) -> Result<Data, ConvertError> {
    value.serialize(DataSerializer)
}

struct DataSerializer;

type R = Result<Data, ConvertError>;

fn float(x: f64) -> R {
    if x.is_finite() {
        Ok(Data::Float(x))
    } else {
        Err(ConvertError::NonFinite)
    }
}

fn int<T: TryInto<i64>>(x: T) -> R {
    x.try_into()
        .map(Data::Int)
        .map_err(|_| ConvertError::IntegerRange)
}

/// Collects a list.
struct Seq(Vec<Data>);
/// Collects a map or struct.
struct Fields {
    entries: Vec<(String, Data)>,
    key: Option<String>,
}
/// Collects a variant's payload under its name.
struct Variant<T> {
    name: &'static str,
    inner: T,
}

impl ser::Serializer for DataSerializer {
    type Ok = Data;
    type Error = ConvertError;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = Variant<Seq>;
    type SerializeMap = Fields;
    type SerializeStruct = Fields;
    type SerializeStructVariant = Variant<Fields>;

    fn serialize_bool(self, v: bool) -> R {
        Ok(Data::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> R {
        int(v)
    }
    fn serialize_i16(self, v: i16) -> R {
        int(v)
    }
    fn serialize_i32(self, v: i32) -> R {
        int(v)
    }
    fn serialize_i64(self, v: i64) -> R {
        int(v)
    }
    fn serialize_i128(self, v: i128) -> R {
        int(v)
    }
    fn serialize_u8(self, v: u8) -> R {
        int(v)
    }
    fn serialize_u16(self, v: u16) -> R {
        int(v)
    }
    fn serialize_u32(self, v: u32) -> R {
        int(v)
    }
    fn serialize_u64(self, v: u64) -> R {
        int(v)
    }
    fn serialize_u128(self, v: u128) -> R {
        int(v)
    }
    fn serialize_f32(self, v: f32) -> R {
        float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> R {
        float(v)
    }
    fn serialize_char(self, v: char) -> R {
        Ok(Data::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> R {
        Ok(Data::Str(v.to_string()))
    }
    fn serialize_bytes(self, v: &[u8]) -> R {
        Ok(Data::List(
            v.iter().map(|b| Data::Int(i64::from(*b))).collect(),
        ))
    }
    fn serialize_none(self) -> R {
        Ok(Data::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> R {
        value.serialize(self)
    }
    fn serialize_unit(self) -> R {
        Ok(Data::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> R {
        Ok(Data::Null)
    }
    fn serialize_unit_variant(self, _n: &'static str, _i: u32, variant: &'static str) -> R {
        Ok(Data::Str(variant.to_string()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _n: &'static str, value: &T) -> R {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _n: &'static str,
        _i: u32,
        variant: &'static str,
        value: &T,
    ) -> R {
        Ok(Data::Map(vec![(variant.to_string(), to_data(value)?)]))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq, ConvertError> {
        Ok(Seq(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq, ConvertError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _n: &'static str, len: usize) -> Result<Seq, ConvertError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _n: &'static str,
        _i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Seq>, ConvertError> {
        Ok(Variant {
            name: variant,
            inner: Seq(Vec::with_capacity(len)),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Fields, ConvertError> {
        Ok(Fields {
            entries: Vec::with_capacity(len.unwrap_or(0)),
            key: None,
        })
    }
    fn serialize_struct(self, _n: &'static str, len: usize) -> Result<Fields, ConvertError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _n: &'static str,
        _i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Fields>, ConvertError> {
        Ok(Variant {
            name: variant,
            inner: Fields {
                entries: Vec::with_capacity(len),
                key: None,
            },
        })
    }
}

impl ser::SerializeSeq for Seq {
    type Ok = Data;
    type Error = ConvertError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ConvertError> {
        self.0.push(to_data(value)?);
        Ok(())
    }
    fn end(self) -> R {
        Ok(Data::List(self.0))
    }
}

impl ser::SerializeTuple for Seq {
    type Ok = Data;
    type Error = ConvertError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ConvertError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> R {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Seq {
    type Ok = Data;
    type Error = ConvertError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ConvertError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> R {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for Variant<Seq> {
    type Ok = Data;
    type Error = ConvertError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ConvertError> {
        ser::SerializeSeq::serialize_element(&mut self.inner, value)
    }
    fn end(self) -> R {
        Ok(Data::Map(vec![(
            self.name.to_string(),
            Data::List(self.inner.0),
        )]))
    }
}

impl Fields {
    fn put(&mut self, key: String, value: Data) {
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.entries.push((key, value)),
        }
    }
}

impl ser::SerializeMap for Fields {
    type Ok = Data;
    type Error = ConvertError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), ConvertError> {
        match to_data(key)? {
            Data::Str(s) => {
                self.key = Some(s);
                Ok(())
            }
            _ => Err(ConvertError::MapKey),
        }
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ConvertError> {
        let key = self.key.take().ok_or(ConvertError::MapKey)?;
        let value = to_data(value)?;
        self.put(key, value);
        Ok(())
    }
    fn end(self) -> R {
        Ok(Data::Map(self.entries))
    }
}

impl ser::SerializeStruct for Fields {
    type Ok = Data;
    type Error = ConvertError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ConvertError> {
        let value = to_data(value)?;
        self.put(key.to_string(), value);
        Ok(())
    }
    fn end(self) -> R {
        Ok(Data::Map(self.entries))
    }
}

impl ser::SerializeStructVariant for Variant<Fields> {
    type Ok = Data;
    type Error = ConvertError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ConvertError> {
        ser::SerializeStruct::serialize_field(&mut self.inner, key, value)
    }
    fn end(self) -> R {
        Ok(Data::Map(vec![(
            self.name.to_string(),
            Data::Map(self.inner.entries),
        )]))
    }
}

/// Converts data to JSON (every float in [`Data`] is finite).
pub fn data_to_json(d: &Data) -> serde_json::Value {
    use serde_json::Value;
    match d {
        Data::Null => Value::Null,
        Data::Bool(b) => Value::Bool(*b),
        Data::Int(i) => Value::from(*i),
        Data::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Data::Str(s) => Value::String(s.clone()),
        Data::List(items) => Value::Array(items.iter().map(data_to_json).collect()),
        Data::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), data_to_json(v)))
                .collect(),
        ),
    }
}

/// Converts data to JSON, moving its strings.
pub fn data_into_json(d: Data) -> serde_json::Value {
    use serde_json::Value;
    match d {
        Data::Null => Value::Null,
        Data::Bool(b) => Value::Bool(b),
        Data::Int(i) => Value::from(i),
        Data::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        Data::Str(s) => Value::String(s),
        Data::List(items) => Value::Array(items.into_iter().map(data_into_json).collect()),
        Data::Map(entries) => Value::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k, data_into_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(serde::Serialize)]
    struct Out {
        b: i64,
        a: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<String>,
        bytes: Vec<u8>,
        map: BTreeMap<String, f32>,
    }

    #[test]
    fn structs_keep_field_order_and_skip_skipped_fields() {
        let out = Out {
            b: 1,
            a: None,
            skipped: None,
            bytes: vec![0, 255],
            map: BTreeMap::from([("k".to_string(), 0.5)]),
        };
        assert_eq!(
            to_data(&out).map(|d| d.to_json_string()),
            Ok(r#"{"b":1,"a":null,"bytes":[0,255],"map":{"k":0.5}}"#.to_string())
        );
    }

    #[test]
    fn invalid_results_are_refused() {
        assert_eq!(to_data(&f64::NAN), Err(ConvertError::NonFinite));
        assert_eq!(to_data(&f32::INFINITY), Err(ConvertError::NonFinite));
        assert_eq!(to_data(&u64::MAX), Err(ConvertError::IntegerRange));
        assert_eq!(to_data(&(i64::MAX as u64)), Ok(Data::Int(i64::MAX)));
        assert_eq!(
            to_data(&BTreeMap::from([(1, 2)])),
            Err(ConvertError::MapKey)
        );
    }
}
