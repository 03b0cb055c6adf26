//! Data that crosses the boundary between a program and its host.
//!
//! [`Data`] is the neutral JSON-like form of capability arguments, capability
//! results and the final value of `main`: null, bool, i64, finite f64,
//! string, list, and string-keyed map (insertion ordered). Conversion from
//! values enforces the depth limit (scalar = 1, each container + 1) and the
//! representable kinds; [`Data::encoded_len`] measures the compact JSON
//! size that the byte limits count, stopping early past a limit.

use crate::error::Result;
use crate::heap::Heap;
use crate::value::{DictObj, Value};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// The deepest value conversion recurses into, whatever the configured
/// depth limit: it keeps the Rust stack bounded.
pub const MAX_CONVERSION_DEPTH: u32 = 512;

/// A JSON-like value.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Data>),
    /// String keys, in insertion order, without duplicates.
    Map(Vec<(String, Data)>),
}

impl Serialize for Data {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Data::Null => s.serialize_unit(),
            Data::Bool(b) => s.serialize_bool(*b),
            Data::Int(i) => s.serialize_i64(*i),
            Data::Float(f) => s.serialize_f64(*f),
            Data::Str(t) => s.serialize_str(t),
            Data::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for x in items {
                    seq.serialize_element(x)?;
                }
                seq.end()
            }
            Data::Map(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl Data {
    /// The length of the compact JSON encoding (as serde_json writes it),
    /// or any number above `limit` once it is known to exceed it. Computed
    /// without encoding, except that floats are formatted the way
    /// serde_json formats them.
    pub fn encoded_len(&self, limit: usize) -> usize {
        let mut n = 0;
        if add_len(self, limit, &mut n) {
            n
        } else {
            limit.saturating_add(1)
        }
    }

    /// Checks the value against a depth limit (scalar = 1) and a limit on
    /// its compact JSON length, in one walk: [`Oversize::Depth`] when it is
    /// deeper than `max_depth`, whatever its length; else
    /// [`Oversize::Bytes`] when its encoding is longer than `max_bytes`;
    /// else the encoding's length (as [`Data::encoded_len`]).
    pub fn measure(
        &self,
        max_depth: u32,
        max_bytes: usize,
    ) -> std::result::Result<usize, Oversize> {
        if max_depth <= MAX_CONVERSION_DEPTH {
            let mut n = 0;
            match measure_within(self, max_depth, max_bytes, &mut n) {
                Fit::Fits => return Ok(n),
                Fit::TooDeep => return Err(Oversize::Depth),
                // The rest of the value may still be too deep, which takes
                // precedence.
                Fit::TooLong if deeper_than(self, max_depth) => return Err(Oversize::Depth),
                Fit::TooLong => return Err(Oversize::Bytes),
            }
        }
        if self.depth_exceeds(max_depth) {
            return Err(Oversize::Depth);
        }
        let n = self.encoded_len(max_bytes);
        if n > max_bytes {
            return Err(Oversize::Bytes);
        }
        Ok(n)
    }

    /// Whether the value is deeper than `max` (scalar = 1).
    pub fn depth_exceeds(&self, max: u32) -> bool {
        // Recursion stops one level below `max`, so it is bounded when `max`
        // is; deeper limits are walked with an explicit stack.
        if max <= MAX_CONVERSION_DEPTH {
            return deeper_than(self, max);
        }
        let mut stack: Vec<(&Data, u32)> = vec![(self, 1)];
        while let Some((d, depth)) = stack.pop() {
            if depth > max {
                return true;
            }
            match d {
                Data::List(items) => stack.extend(items.iter().map(|x| (x, depth + 1))),
                Data::Map(entries) => stack.extend(entries.iter().map(|(_, x)| (x, depth + 1))),
                _ => {}
            }
        }
        false
    }

    /// The compact JSON text.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Converts parsed JSON. Numbers that are neither i64 nor finite f64
    /// (u64 above i64::MAX) are rejected with `None`, as are values deeper
    /// than [`MAX_CONVERSION_DEPTH`].
    pub fn from_json(v: &serde_json::Value) -> Option<Data> {
        Data::from_json_at(v, 1)
    }

    fn from_json_at(v: &serde_json::Value, depth: u32) -> Option<Data> {
        if depth > MAX_CONVERSION_DEPTH {
            return None;
        }
        Some(match v {
            serde_json::Value::Null => Data::Null,
            serde_json::Value::Bool(b) => Data::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Data::Int(i)
                } else if n.is_u64() {
                    return None;
                } else {
                    let f = n.as_f64()?;
                    if !f.is_finite() {
                        return None;
                    }
                    Data::Float(f)
                }
            }
            serde_json::Value::String(s) => Data::Str(s.clone()),
            serde_json::Value::Array(items) => Data::List(
                items
                    .iter()
                    .map(|x| Data::from_json_at(x, depth + 1))
                    .collect::<Option<Vec<_>>>()?,
            ),
            serde_json::Value::Object(map) => Data::Map(
                map.iter()
                    .map(|(k, x)| Some((k.clone(), Data::from_json_at(x, depth + 1)?)))
                    .collect::<Option<Vec<_>>>()?,
            ),
        })
    }
}

/// Whether `d` is deeper than `max` levels (scalar = 1), recursing at most
/// `max + 1` levels.
fn deeper_than(d: &Data, max: u32) -> bool {
    match d {
        _ if max == 0 => true,
        Data::List(items) => items.iter().any(|x| deeper_than(x, max - 1)),
        Data::Map(entries) => entries.iter().any(|(_, x)| deeper_than(x, max - 1)),
        _ => false,
    }
}

/// Which limit [`Data::measure`] found exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Oversize {
    Depth,
    Bytes,
}

/// How a value fits the limits of [`Data::measure`], as far as it was
/// walked.
enum Fit {
    Fits,
    TooDeep,
    /// Longer than the byte limit; the walk stopped there, so the depth of
    /// the rest is unknown.
    TooLong,
}

/// The encoded length and the depth check in one walk: adds the encoded
/// length of `d`, at most `levels` deep (scalar = 1), to `n`, stopping past
/// `limit`. Recurses at most `levels + 1` deep.
fn measure_within(d: &Data, levels: u32, limit: usize, n: &mut usize) -> Fit {
    if levels == 0 {
        return Fit::TooDeep;
    }
    let own = match d {
        Data::List(items) => {
            *n = n.saturating_add(list_frame_len(items.len()));
            for x in items {
                match measure_within(x, levels - 1, limit, n) {
                    Fit::Fits => {}
                    other => return other,
                }
            }
            0
        }
        Data::Map(entries) => {
            *n = n.saturating_add(map_frame_len(entries.len()));
            for (k, x) in entries {
                *n = n.saturating_add(json_str_len(k));
                match measure_within(x, levels - 1, limit, n) {
                    Fit::Fits => {}
                    other => return other,
                }
            }
            0
        }
        scalar => scalar_len(scalar),
    };
    *n = n.saturating_add(own);
    if *n <= limit {
        Fit::Fits
    } else {
        Fit::TooLong
    }
}

/// The encoded length of a scalar (0 for a container).
fn scalar_len(d: &Data) -> usize {
    match d {
        Data::Null => 4,
        Data::Bool(true) => 4,
        Data::Bool(false) => 5,
        Data::Int(i) => int_len(*i),
        Data::Float(f) => float_len(*f),
        Data::Str(s) => json_str_len(s),
        Data::List(_) | Data::Map(_) => 0,
    }
}

/// The length of a float as serde_json writes it: `null` when not finite,
/// else the shortest round-trip form of zmij, the formatter serde_json
/// uses (the tests compare the two).
fn float_len(f: f64) -> usize {
    if f.is_finite() {
        zmij::Buffer::new().format_finite(f).len()
    } else {
        4
    }
}

/// Adds the encoded length of `d` to `n`; `false` once `n` exceeds `limit`.
/// The walk of [`measure_within`] with no depth limit: its callers have
/// checked the depth already.
fn add_len(d: &Data, limit: usize, n: &mut usize) -> bool {
    matches!(measure_within(d, u32::MAX, limit, n), Fit::Fits)
}

/// Decimal digits of `i`, with its sign.
fn int_len(i: i64) -> usize {
    let mut u = i.unsigned_abs();
    let mut len = (i < 0) as usize + 1;
    while u >= 10 {
        u /= 10;
        len += 1;
    }
    len
}

/// A JSON string's length as serde_json escapes it: quotes, `\"` `\\`
/// and the short escapes take two bytes, other control characters six.
pub fn json_str_len(s: &str) -> usize {
    // A table lookup per byte, without branches.
    let extra: usize = s.bytes().map(|b| ESCAPE_EXTRA[b as usize] as usize).sum();
    2 + s.len() + extra
}

/// The bytes serde_json adds to escape each byte in a string.
static ESCAPE_EXTRA: [u8; 256] = escape_extra();

const fn escape_extra() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = match b {
            0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 1,
            _ => 5,
        };
        b += 1;
    }
    t[b'"' as usize] = 1;
    t[b'\\' as usize] = 1;
    t
}

/// The bytes of a JSON array of `n` items beyond the items: brackets and
/// commas.
fn list_frame_len(n: usize) -> usize {
    2 + n.saturating_sub(1)
}

/// The bytes of a JSON object of `n` entries beyond the keys and values:
/// braces, commas, and a colon per entry.
pub fn map_frame_len(n: usize) -> usize {
    2 + n.saturating_sub(1) + n
}

/// Why a value could not become [`Data`].
#[derive(Debug)]
pub enum ConvertError {
    /// Deeper than the depth limit.
    Depth,
    /// Certainly larger than the byte limit.
    Bytes,
    /// A value JSON cannot carry; the message says which.
    Unsupported(String),
    /// The deadline passed or the execution was cancelled meanwhile.
    Time(crate::error::Error),
}

impl ConvertError {
    /// The error of a capability argument named `arg`: depth is a resource
    /// limit, anything else a binding error naming the argument.
    pub fn into_limit_or_args(self, arg: &str) -> crate::error::Error {
        match self {
            ConvertError::Depth => crate::error::Error::limit(crate::error::LimitKind::ValueDepth),
            ConvertError::Bytes => crate::error::Error::limit(crate::error::LimitKind::ValueBytes),
            ConvertError::Unsupported(m) => {
                crate::error::Error::invalid_arguments(format!("{arg}: {m}"))
            }
            ConvertError::Time(e) => e,
        }
    }
}

/// Converts a value, allowing `max_depth` levels (scalar = 1) and
/// `max_bytes` bytes of compact JSON, and gives the length of the result's
/// encoding with it (exactly [`Data::encoded_len`] of the result, counted in
/// the same walk).
///
/// The walk counts each value's bytes as it enters it and stops at the
/// first problem it meets: a level too deep, a value JSON cannot carry, or
/// the byte limit passed. So a value whose shared parts expand to far more
/// than the limit (`x = [x, x]` thirty times) costs about `max_bytes` of
/// work and of built data, never its expansion.
pub fn to_data(
    v: Value<'_>,
    max_depth: u32,
    max_bytes: usize,
    budget: &crate::budget::Budget,
) -> std::result::Result<(Data, usize), ConvertError> {
    let max = max_depth.min(MAX_CONVERSION_DEPTH);
    let mut walk = Walk {
        steps: 0,
        len: 0,
        max_bytes,
    };
    let d = convert(v, 1, max, budget, &mut walk)?;
    Ok((d, walk.len))
}

/// What a conversion counts as it goes: values visited (for the deadline
/// checks) and encoded bytes, with the byte limit.
struct Walk {
    steps: usize,
    len: usize,
    max_bytes: usize,
}

impl Walk {
    /// Counts `n` more encoded bytes; fails once past the limit.
    #[inline]
    fn add(&mut self, n: usize) -> std::result::Result<(), ConvertError> {
        self.len = self.len.saturating_add(n);
        if self.len > self.max_bytes {
            return Err(ConvertError::Bytes);
        }
        Ok(())
    }
}

fn convert(
    v: Value<'_>,
    depth: u32,
    max: u32,
    budget: &crate::budget::Budget,
    walk: &mut Walk,
) -> std::result::Result<Data, ConvertError> {
    if depth > max {
        return Err(ConvertError::Depth);
    }
    walk.steps += 1;
    if walk.steps.is_multiple_of(4096) {
        budget.check_time().map_err(ConvertError::Time)?;
    }
    Ok(match v {
        Value::None => {
            walk.add(4)?;
            Data::Null
        }
        Value::Bool(b) => {
            walk.add(if b { 4 } else { 5 })?;
            Data::Bool(b)
        }
        Value::Int(i) => {
            walk.add(int_len(i))?;
            Data::Int(i)
        }
        Value::BigInt(_) => {
            return Err(ConvertError::Unsupported(
                "int out of signed 64-bit range".into(),
            ))
        }
        Value::Float(f) => {
            if !f.is_finite() {
                return Err(ConvertError::Unsupported(format!(
                    "non-finite float {}",
                    crate::format::float_str(f)
                )));
            }
            walk.add(float_len(f))?;
            Data::Float(f)
        }
        Value::Str(s) => {
            // Invalid bytes become U+FFFD, as Go's JSON encoder writes them.
            let t = crate::text::lossy(s.text);
            walk.add(json_str_len(&t))?;
            Data::Str(t.into_owned())
        }
        Value::List(l) => {
            let items = l.items.borrow();
            walk.add(list_frame_len(items.len()))?;
            let mut out = Vec::with_capacity(items.len());
            for x in items.iter() {
                out.push(convert(*x, depth + 1, max, budget, walk)?);
            }
            Data::List(out)
        }
        Value::Tuple(t) => {
            walk.add(list_frame_len(t.items.len()))?;
            let mut out = Vec::with_capacity(t.items.len());
            for x in t.items {
                out.push(convert(*x, depth + 1, max, budget, walk)?);
            }
            Data::List(out)
        }
        Value::Range(r) => {
            // A range becomes the array of its elements, as the reference
            // converts it; each element takes at least one byte, so a range
            // too long for the limit stops before anything is built.
            let n = r.len();
            if depth + 1 > max && n > 0 {
                return Err(ConvertError::Depth);
            }
            let n = n as usize;
            if list_frame_len(n).saturating_add(n) > walk.max_bytes.saturating_sub(walk.len) {
                return Err(ConvertError::Bytes);
            }
            walk.add(list_frame_len(n))?;
            let mut items = Vec::with_capacity(n);
            for i in 0..n as i64 {
                let x = r.at(i);
                walk.add(int_len(x))?;
                items.push(Data::Int(x));
            }
            Data::List(items)
        }
        Value::Dict(d) => {
            let map = d.map.borrow();
            walk.add(map_frame_len(map.len()))?;
            let mut out = Vec::with_capacity(map.len());
            for (k, x) in map.iter() {
                let Value::Str(k) = k else {
                    return Err(ConvertError::Unsupported(format!(
                        "dict key must be a string, not {}",
                        k.type_name()
                    )));
                };
                let k = crate::text::lossy(k.text);
                walk.add(json_str_len(&k))?;
                out.push((k.into_owned(), convert(x, depth + 1, max, budget, walk)?));
            }
            Data::Map(out)
        }
        other => {
            return Err(ConvertError::Unsupported(format!(
                "{} value cannot be converted to JSON",
                other.type_name()
            )))
        }
    })
}

/// Converts host data into values in the execution's heap. The caller has
/// already checked the data's depth.
pub fn from_data<'h>(heap: Heap<'h>, d: &Data) -> Result<Value<'h>> {
    Ok(match d {
        Data::Null => Value::None,
        Data::Bool(b) => Value::Bool(*b),
        Data::Int(i) => Value::Int(*i),
        Data::Float(f) => Value::Float(*f),
        Data::Str(s) => heap.str(s)?,
        Data::List(items) => {
            let mut v = heap.vec_with_capacity(items.len())?;
            // A list of maps is usually rows with the same keys: each map
            // whose keys are its predecessor's, in the same order, shares
            // that dict's key strings, hashes and index.
            let mut row: Option<&'h DictObj<'h>> = None;
            for x in items {
                v.push(match x {
                    Data::Map(entries) => {
                        let dict = dict_from_data(heap, entries, row)?;
                        row = Some(dict);
                        Value::Dict(dict)
                    }
                    _ => from_data(heap, x)?,
                });
            }
            heap.list_from_vec(v)?
        }
        Data::Map(entries) => Value::Dict(dict_from_data(heap, entries, None)?),
    })
}

/// A dict of `entries`, built from the keys of `like` when they are the
/// same strings in the same order.
fn dict_from_data<'h>(
    heap: Heap<'h>,
    entries: &[(String, Data)],
    like: Option<&'h DictObj<'h>>,
) -> Result<&'h DictObj<'h>> {
    if let Some(like) = like {
        let like = like.map.borrow();
        if like.has_str_keys(entries.iter().map(|(k, _)| k.as_str())) {
            let mut map = like.copy_keys()?;
            for (i, (_, x)) in entries.iter().enumerate() {
                map.set_value_at(i, from_data(heap, x)?);
            }
            return heap.dict_of(map);
        }
    }
    let dict = heap.dict(entries.len())?;
    for (k, x) in entries {
        let key = heap.str(k)?;
        let val = from_data(heap, x)?;
        dict.map.borrow_mut().insert(key, val)?;
    }
    Ok(dict)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_len_is_the_compact_json_length() {
        let d = Data::Map(vec![
            ("a".into(), Data::List(vec![Data::Int(1), Data::Float(1.5)])),
            ("b".into(), Data::Str("é\"".into())),
            ("c".into(), Data::Null),
        ]);
        let text = d.to_json_string();
        assert_eq!(text, r#"{"a":[1,1.5],"b":"é\"","c":null}"#);
        assert_eq!(d.encoded_len(usize::MAX), text.len());
        assert!(d.encoded_len(10) > 10);
        assert_eq!(d.encoded_len(text.len()), text.len());
    }

    #[test]
    fn computed_lengths_match_serde_json_exactly() {
        let samples = vec![
            Data::Int(0),
            Data::Int(-7),
            Data::Int(i64::MIN),
            Data::Int(i64::MAX),
            Data::Float(1.0),
            Data::Float(-0.0),
            Data::Float(1e300),
            Data::Float(1.5e-7),
            Data::Float(0.1 + 0.2),
            Data::Str("plain é 😀".into()),
            Data::Str("q\"b\\n\n r\r t\t \u{8}\u{c} c\u{1} d\u{7f} \u{1f}".into()),
            Data::List(vec![]),
            Data::Map(vec![]),
            Data::Map(vec![
                (
                    "k\"".into(),
                    Data::List(vec![Data::Null, Data::Bool(false), Data::Bool(true)]),
                ),
                ("".into(), Data::Map(vec![("x".into(), Data::Float(2.5))])),
            ]),
            Data::Float(1e21),
            Data::Float(1e-7),
            Data::Float(123456789.0),
            Data::Float(f64::MAX),
            Data::Float(f64::MIN_POSITIVE),
            Data::Float(5e-324),
            Data::Float(f64::NAN),
            Data::Float(f64::NEG_INFINITY),
        ];
        for d in samples {
            let text = d.to_json_string();
            assert_eq!(d.encoded_len(usize::MAX), text.len(), "{text}");
            assert_eq!(d.encoded_len(text.len()), text.len(), "{text}");
            if !text.is_empty() {
                assert!(d.encoded_len(text.len() - 1) > text.len() - 1, "{text}");
            }
        }
    }

    #[test]
    fn string_lengths_match_serde_json_for_every_ascii_character() {
        // Each character alone and amid others, as key and as value.
        for c in (0u8..0x80).map(char::from).chain(['é', '\u{2028}', '😀']) {
            for text in [c.to_string(), format!("a{c}b{c}{c}")] {
                let d = Data::Map(vec![(text.clone(), Data::Str(text))]);
                assert_eq!(d.encoded_len(usize::MAX), d.to_json_string().len(), "{c:?}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn float_lengths_match_serde_json(bits in proptest::num::u64::ANY) {
            let f = f64::from_bits(bits);
            let text = serde_json::to_string(&Data::Float(f)).unwrap_or_default();
            proptest::prop_assert_eq!(float_len(f), text.len(), "{}", text);
        }
    }

    #[test]
    fn measure_checks_depth_before_bytes_in_one_walk() {
        // Depth 4, 23 bytes: [1,[2,{"a":3.25}],"xy"]
        let d = Data::List(vec![
            Data::Int(1),
            Data::List(vec![
                Data::Int(2),
                Data::Map(vec![("a".into(), Data::Float(3.25))]),
            ]),
            Data::Str("xy".into()),
        ]);
        let text = d.to_json_string();
        assert_eq!(text.len(), 23);
        assert_eq!(d.measure(4, 23), Ok(23));
        assert_eq!(d.measure(4, 22), Err(Oversize::Bytes));
        assert_eq!(d.measure(3, 23), Err(Oversize::Depth));
        // Too long well before the too-deep part: depth still wins.
        let long_then_deep = Data::List(vec![
            Data::Str("x".repeat(100)),
            Data::List(vec![Data::List(vec![Data::Null])]),
        ]);
        assert_eq!(long_then_deep.measure(3, 10), Err(Oversize::Depth));
        assert_eq!(long_then_deep.measure(4, 10), Err(Oversize::Bytes));
        // Limits deeper than the recursion bound take the two-walk path.
        assert_eq!(d.measure(MAX_CONVERSION_DEPTH + 1, 23), Ok(23));
        assert_eq!(
            d.measure(MAX_CONVERSION_DEPTH + 1, 22),
            Err(Oversize::Bytes)
        );
        for limit in [0, 1, 22, 23, 24, usize::MAX] {
            for depth in 0..5 {
                let expected = if d.depth_exceeds(depth) {
                    Err(Oversize::Depth)
                } else if d.encoded_len(limit) > limit {
                    Err(Oversize::Bytes)
                } else {
                    Ok(d.encoded_len(limit))
                };
                assert_eq!(
                    d.measure(depth, limit),
                    expected,
                    "depth {depth} limit {limit}"
                );
            }
        }
    }

    #[test]
    fn conversion_counts_the_compact_json_length() {
        use crate::budget::{Budget, Limits};
        let bump = bumpalo::Bump::new();
        let budget = Budget::new(Limits::default(), std::time::Instant::now(), None);
        let heap = Heap::new(&bump, &budget);
        let s = |t: &str| heap.str(t).unwrap();
        let dict = heap.dict(0).unwrap();
        for (k, v) in [
            ("k\"", Value::Float(0.1)),
            ("", s("x\u{1}é")),
            ("n", Value::Int(-120)),
        ] {
            dict.map.borrow_mut().insert(s(k), v).unwrap();
        }
        let empty = heap.dict(0).unwrap();
        let range = heap
            .alloc(crate::value::RangeObj {
                start: -3,
                stop: 12,
                step: 4,
            })
            .unwrap();
        let values = [
            Value::None,
            Value::Bool(true),
            Value::Bool(false),
            Value::Int(i64::MIN),
            Value::Float(1e300),
            s("tab\tquote\"back\\"),
            heap.list(&[Value::Int(7), Value::None, Value::Dict(dict)])
                .unwrap(),
            heap.tuple(&[]).unwrap(),
            heap.tuple(&[Value::Dict(empty), s("")]).unwrap(),
            Value::Range(range),
            Value::Dict(dict),
        ];
        for v in values {
            let (d, len) = to_data(v, 10, usize::MAX, &budget).unwrap();
            assert_eq!(len, d.to_json_string().len(), "{}", d.to_json_string());
            assert_eq!(len, d.encoded_len(usize::MAX));
        }
        // A keyword-argument map: its frame plus each key and value.
        let (d, len) = to_data(Value::Dict(dict), 10, usize::MAX, &budget).unwrap();
        let Data::Map(entries) = d else { panic!() };
        let parts = entries
            .iter()
            .fold(map_frame_len(entries.len()), |n, (k, x)| {
                n + json_str_len(k) + x.encoded_len(usize::MAX)
            });
        assert_eq!(parts, len);
        assert_eq!(map_frame_len(0), "{}".len());
    }

    #[test]
    fn conversion_stops_at_the_byte_limit_without_expanding_shared_parts() {
        use crate::budget::{Budget, Limits};
        let bump = bumpalo::Bump::new();
        let budget = Budget::new(Limits::default(), std::time::Instant::now(), None);
        let heap = Heap::new(&bump, &budget);
        // 32 deep, 2^30 leaves of `["leaf"]`: 2^30 * 11 - 3 bytes in all.
        let mut x = heap.list(&[heap.str("leaf").unwrap()]).unwrap();
        for _ in 0..30 {
            x = heap.list(&[x, x]).unwrap();
        }
        let start = std::time::Instant::now();
        assert!(matches!(
            to_data(x, 32, 1 << 20, &budget),
            Err(ConvertError::Bytes)
        ));
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
        // Exactly at the limit passes, one byte less fails: 2^10 leaves.
        let mut y = heap.list(&[heap.str("leaf").unwrap()]).unwrap();
        for _ in 0..10 {
            y = heap.list(&[y, y]).unwrap();
        }
        let exact = (1 << 10) * 11 - 3;
        let (d, len) = to_data(y, 32, exact, &budget).unwrap();
        assert_eq!((len, d.to_json_string().len()), (exact, exact));
        assert!(matches!(
            to_data(y, 32, exact - 1, &budget),
            Err(ConvertError::Bytes)
        ));
        // The first problem met wins: a long prefix before a big int is
        // too long; a big int before the limit is unsupported.
        let long = heap.str(&"x".repeat(100)).unwrap();
        let big = heap.int(num_bigint::BigInt::from(1) << 70).unwrap();
        let v = heap.list(&[long, big]).unwrap();
        assert!(matches!(
            to_data(v, 32, 50, &budget),
            Err(ConvertError::Bytes)
        ));
        assert!(matches!(
            to_data(v, 32, 200, &budget),
            Err(ConvertError::Unsupported(_))
        ));
        // A range longer than the limit stops before it is built.
        let r = heap
            .alloc(crate::value::RangeObj {
                start: 0,
                stop: 1 << 40,
                step: 1,
            })
            .unwrap();
        assert!(matches!(
            to_data(Value::Range(r), 32, 1 << 20, &budget),
            Err(ConvertError::Bytes)
        ));
    }

    #[test]
    fn depth_counts_scalars_as_one() {
        assert!(!Data::Int(1).depth_exceeds(1));
        let one = Data::List(vec![Data::Int(1)]);
        assert!(!one.depth_exceeds(2));
        assert!(one.depth_exceeds(1));
        assert!(!Data::List(vec![]).depth_exceeds(1));
        let two = Data::List(vec![one]);
        assert!(two.depth_exceeds(2));
        assert!(!two.depth_exceeds(3));
        assert!(two.depth_exceeds(0));
        // Above the recursion bound the explicit stack answers the same.
        let mut deep = Data::Int(1);
        for _ in 0..MAX_CONVERSION_DEPTH + 5 {
            deep = Data::Map(vec![("k".into(), deep)]);
        }
        let levels = MAX_CONVERSION_DEPTH + 6;
        assert!(!deep.depth_exceeds(levels));
        assert!(deep.depth_exceeds(levels - 1));
        assert!(deep.depth_exceeds(MAX_CONVERSION_DEPTH));
    }

    #[test]
    fn json_numbers_outside_i64_and_f64_are_rejected() {
        let v: serde_json::Value = serde_json::from_str("18446744073709551615").unwrap();
        assert_eq!(Data::from_json(&v), None);
        let v: serde_json::Value = serde_json::from_str(r#"{"x":[1,2.5,"s",null,true]}"#).unwrap();
        assert_eq!(
            Data::from_json(&v),
            Some(Data::Map(vec![(
                "x".into(),
                Data::List(vec![
                    Data::Int(1),
                    Data::Float(2.5),
                    Data::Str("s".into()),
                    Data::Null,
                    Data::Bool(true)
                ])
            )]))
        );
    }
}
