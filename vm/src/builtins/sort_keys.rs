//! `sorted` of the common keys by their bytes.
//!
//! Most sorts of agent programs are by ints, by strings, or by tuples of
//! them (`key=lambda r: (-r["score"], r["name"])`). For such keys
//! Starlark's order is the order of a byte encoding of each key, made once
//! per key: an int as its eight bytes big-endian with the sign bit
//! flipped; a string as its bytes with each zero byte followed by `0xff`,
//! then two zero bytes; a tuple as each item after a `0x01`, then a
//! `0x00` (so a tuple that is a prefix of another is less). Each encoding
//! is prefix-free and keeps the order of the values encoded, so comparing
//! two encodings byte by byte is comparing the keys. The encodings are
//! then sorted by the library's sort (the order is total: no comparison
//! can fail), ties broken by position, which is exactly the stable sort
//! `sorted` promises.
//!
//! Only keys that Starlark compares without error take this path: every
//! key an int (not a big one), or every key a string, or every key a
//! tuple whose items at each position are all ints or all strings. Any
//! other keys (floats, big ints, mixed kinds, nested tuples, keys too
//! long to encode cheaply) take the comparison sort, which also reports
//! the errors.

use crate::error::Result;
use crate::interp::Thread;
use crate::value::Value;
use std::cmp::Ordering;

/// The longest encoding of one key taken: a comparison then costs at most
/// a short `memcmp`, which keeps the sort's time within the estimate the
/// caller checked (about 50 ns per comparison).
const MAX_KEY_BYTES: usize = 256;

/// The longest tuple key taken (positions whose kinds are tracked).
const MAX_ITEMS: usize = 8;

/// The kind of value at one position of the keys.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Unseen,
    Int,
    Str,
}

/// The positions of `keys` in sorted order (descending when `reverse`,
/// equal keys in their order either way), or `None` when the keys are not
/// all of the kinds this sort takes. The caller has checked the time the
/// comparisons may take.
pub(super) fn encoded_order(
    th: &Thread<'_>,
    keys: &[Value<'_>],
    reverse: bool,
) -> Result<Option<Vec<usize>>> {
    let n = keys.len();
    if u32::try_from(n).is_err() {
        return Ok(None);
    }
    // Sized, charged and checked before anything is encoded.
    let mut total = 0usize;
    let mut kinds = [Kind::Unseen; MAX_ITEMS + 1];
    let tuples = matches!(keys.first(), Some(Value::Tuple(_)));
    for k in keys {
        let size = match (tuples, k) {
            (true, Value::Tuple(t)) if t.items.len() <= MAX_ITEMS => {
                let mut size = 1;
                for (x, kind) in t.items.iter().zip(&mut kinds) {
                    let Some(s) = scalar_size(x, kind) else {
                        return Ok(None);
                    };
                    size += 1 + s;
                }
                size
            }
            (false, k) => match scalar_size(k, &mut kinds[MAX_ITEMS]) {
                Some(s) => s,
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        if size > MAX_KEY_BYTES {
            return Ok(None);
        }
        total += size;
    }
    // The buffers live only during the sort: charged, and given back.
    let entry = std::mem::size_of::<(&[u8], u32)>() + std::mem::size_of::<usize>();
    let transient = total.saturating_add(n.saturating_mul(entry));
    th.heap.charge(transient)?;
    let order = sort_encoded(th, keys, reverse, total);
    th.budget.release_heap(transient);
    order
}

/// [`encoded_order`] of keys whose encodings take `total` bytes.
fn sort_encoded(
    th: &Thread<'_>,
    keys: &[Value<'_>],
    reverse: bool,
    total: usize,
) -> Result<Option<Vec<usize>>> {
    let n = keys.len();
    th.budget.charge_bytes(total)?;
    let mut bytes = Vec::with_capacity(total);
    let mut ends = Vec::with_capacity(n);
    for k in keys {
        match k {
            Value::Tuple(t) => {
                for x in t.items {
                    bytes.push(1);
                    encode_scalar(&mut bytes, x);
                }
                bytes.push(0);
            }
            k => encode_scalar(&mut bytes, k),
        }
        ends.push(bytes.len());
    }
    if bytes.len() != total {
        // The sizes counted are the encodings' sizes; were they not, the
        // comparison sort decides.
        return Ok(None);
    }
    let mut start = 0;
    let mut entries: Vec<(&[u8], u32)> = Vec::with_capacity(n);
    for (i, &end) in ends.iter().enumerate() {
        entries.push((&bytes[start..end], i as u32));
        start = end;
    }
    if reverse {
        entries.sort_unstable_by(|a, b| bytes_order(b.0, a.0).then(a.1.cmp(&b.1)));
    } else {
        entries.sort_unstable_by(|a, b| bytes_order(a.0, b.0).then(a.1.cmp(&b.1)));
    }
    Ok(Some(entries.iter().map(|&(_, i)| i as usize).collect()))
}

/// The order of two short byte strings, eight bytes at a time (a key's
/// encoding is a few words: a `memcmp` call per comparison costs more).
#[inline(always)]
fn bytes_order(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_be_bytes(a[i..i + 8].try_into().expect("eight bytes"));
        let y = u64::from_be_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    while i < n {
        if a[i] != b[i] {
            return a[i].cmp(&b[i]);
        }
        i += 1;
    }
    a.len().cmp(&b.len())
}

/// The size of the encoding of `v`, a key or a tuple key's item, when it
/// is of the kind its position holds (noted in `kind` at its first key).
fn scalar_size(v: &Value<'_>, kind: &mut Kind) -> Option<usize> {
    let (k, size) = match v {
        Value::Int(_) => (Kind::Int, 8),
        Value::Str(s) if s.text.len() <= MAX_KEY_BYTES => {
            let zeros = s.text.iter().filter(|&&b| b == 0).count();
            (Kind::Str, s.text.len() + zeros + 2)
        }
        _ => return None,
    };
    if *kind == Kind::Unseen {
        *kind = k;
    }
    (*kind == k).then_some(size)
}

/// Appends the encoding of `v`, an int or a string.
fn encode_scalar(out: &mut Vec<u8>, v: &Value<'_>) {
    match v {
        Value::Int(i) => out.extend_from_slice(&((*i as u64) ^ (1 << 63)).to_be_bytes()),
        Value::Str(s) => {
            if memchr::memchr(0, s.text).is_none() {
                out.extend_from_slice(s.text);
            } else {
                for &b in s.text {
                    out.push(b);
                    if b == 0 {
                        out.push(0xff);
                    }
                }
            }
            out.extend_from_slice(&[0, 0]);
        }
        // Never reached: only ints and strings are sized (and a size
        // mismatch would be caught).
        _ => {}
    }
}
