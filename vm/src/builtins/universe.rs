//! The top-level builtin functions (`len`, `sorted`, `int`, ...).
//!
//! Each follows starlark-go's `library.go`: the same parameters, the same
//! conversions and the same error texts (which the reference binary shows
//! to programs verbatim). `sum` is the exception: it is the original
//! product's addition (docs/architecture.md, "The language"). Work that grows with the
//! input charges the heap before building and checks the deadline.

use super::args::{self, collect, collect_items, for_each, is_iterable, pos, positional, unpack};
use super::{Args, BuiltinFn};
use crate::budget::Budget;
use crate::error::{Error, ErrorKind, Result};
use crate::format;
use crate::interp::Thread;
use crate::ops;
use crate::text;
use crate::value::{RangeObj, Value};
use codemode_lang::ast::{BinOp, UnaryOp};
use num_bigint::BigInt;
use num_traits::Num;
use std::cmp::Ordering;

macro_rules! builtin {
    ($id:ident, $name:literal, $f:path) => {
        pub static $id: BuiltinFn = BuiltinFn {
            name: $name,
            call: $f,
        };
    };
}

builtin!(ABS, "abs", abs);
builtin!(ALL, "all", all);
builtin!(ANY, "any", any);
builtin!(BOOL, "bool", bool_);
builtin!(BYTES, "bytes", bytes);
builtin!(CHR, "chr", chr);
builtin!(DICT, "dict", dict);
builtin!(DIR, "dir", dir);
builtin!(ENUMERATE, "enumerate", enumerate);
builtin!(FAIL, "fail", fail);
builtin!(FLOAT, "float", float);
builtin!(GETATTR, "getattr", getattr);
builtin!(HASATTR, "hasattr", hasattr);
builtin!(HASH, "hash", hash);
builtin!(INT, "int", int);
builtin!(LEN, "len", len);
builtin!(LIST, "list", list);
builtin!(MAX, "max", max);
builtin!(MIN, "min", min);
builtin!(ORD, "ord", ord);
builtin!(PRINT, "print", print);
builtin!(RANGE, "range", range);
builtin!(REPR, "repr", repr);
builtin!(REVERSED, "reversed", reversed);
builtin!(SORTED, "sorted", sorted);
builtin!(STR, "str", str);
builtin!(SUM, "sum", sum);
builtin!(TUPLE, "tuple", tuple);
builtin!(TYPE, "type", type_);
builtin!(ZIP, "zip", zip);

type R<'h> = Result<Value<'h>>;

fn abs<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("abs", a, 1, 1)?;
    match p[0] {
        Value::Float(f) => Ok(Value::Float(f.abs())),
        Value::Int(i) if i >= 0 => Ok(p[0]),
        Value::BigInt(b) if !b.negative => Ok(p[0]),
        Value::Int(_) | Value::BigInt(_) => ops::unary(th.heap, UnaryOp::Neg, p[0]),
        x => Err(Error::msg(format!(
            "got {}, want int or float",
            x.type_name()
        ))),
    }
}

fn all<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("all", a, 1, 1)?;
    let x = pos("all", p, 0, args::want_iterable)?.unwrap_or(Value::None);
    let mut result = true;
    for_each(th.budget, x, |_, v| {
        result = v.truth();
        Ok(result)
    })?;
    Ok(Value::Bool(result))
}

fn any<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("any", a, 1, 1)?;
    let x = pos("any", p, 0, args::want_iterable)?.unwrap_or(Value::None);
    let mut result = false;
    for_each(th.budget, x, |_, v| {
        result = v.truth();
        Ok(!result)
    })?;
    Ok(Value::Bool(result))
}

fn bool_<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("bool", a, 0, 1)?;
    Ok(Value::Bool(p.first().is_some_and(|v| v.truth())))
}

fn bytes<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    if !a.named.is_empty() {
        return Err(Error::msg("bytes does not accept keyword arguments"));
    }
    if a.positional.len() != 1 {
        return Err(Error::msg(format!(
            "bytes: got {} arguments, want exactly 1",
            a.positional.len()
        )));
    }
    let x = a.positional[0];
    match x {
        Value::Bytes(_) => Ok(x),
        // starlark-go writes U+FFFD for each invalid byte.
        Value::Str(s) => th.heap.bytes(text::lossy(s.text).as_bytes()),
        _ if is_iterable(x) => {
            th.heap.charge(args::iter_len(x))?;
            let mut out = Vec::with_capacity(args::iter_len(x));
            for_each(th.budget, x, |i, v| {
                let b = match v {
                    Value::Int(n) if (0..256).contains(&n) => n as u8,
                    Value::Int(_) | Value::BigInt(_) => {
                        let mut t = String::new();
                        format::write_repr(&mut t, v, th.budget)?;
                        return Err(Error::msg(format!(
                            "bytes: at index {i}, {t} out of range (want value in unsigned 8-bit range)"
                        )));
                    }
                    _ => {
                        return Err(Error::msg(format!(
                            "bytes: at index {i}, got {}, want int",
                            v.type_name()
                        )))
                    }
                };
                out.push(b);
                Ok(true)
            })?;
            th.heap.bytes(&out)
        }
        _ => Err(Error::msg(format!(
            "bytes: got {}, want string, bytes, or iterable of ints",
            x.type_name()
        ))),
    }
}

fn chr<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    if !a.named.is_empty() {
        return Err(Error::msg("chr does not accept keyword arguments"));
    }
    if a.positional.len() != 1 {
        return Err(Error::msg(format!(
            "chr: got {} arguments, want 1",
            a.positional.len()
        )));
    }
    let i = ops::as_int32(a.positional[0], th.budget).map_err(|e| e.prefixed("chr: "))?;
    if i < 0 {
        return Err(Error::msg(format!(
            "chr: Unicode code point {i} out of range (<0)"
        )));
    }
    if i > 0x10FFFF {
        return Err(Error::msg(format!(
            "chr: Unicode code point U+{i:X} out of range (>0x10FFFF)"
        )));
    }
    // Go turns a surrogate code point into U+FFFD.
    let c = char::from_u32(i as u32).unwrap_or('\u{FFFD}');
    let mut buf = [0u8; 4];
    th.heap.str(c.encode_utf8(&mut buf))
}

fn dict<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    if a.positional.len() > 1 {
        return Err(Error::msg(format!(
            "dict: got {} arguments, want at most 1",
            a.positional.len()
        )));
    }
    let n = a.positional.first().map_or(0, |v| args::iter_len(*v)) + a.named.len();
    let d = th.heap.dict(n)?;
    super::dict::update_dict(th, d, a.positional, a.named).map_err(|e| e.prefixed("dict: "))?;
    Ok(Value::Dict(d))
}

/// The attribute names of `v`, sorted, as `dir` lists them.
pub fn attr_names(v: Value<'_>) -> Vec<&str> {
    match v {
        Value::Namespace(ns) => ns.names().collect(),
        Value::Module(m) => m.members.iter().map(|(n, _)| *n).collect(),
        _ => super::methods_of(v).iter().map(|b| b.name).collect(),
    }
}

fn dir<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    if !a.named.is_empty() {
        return Err(Error::msg("dir does not accept keyword arguments"));
    }
    if a.positional.len() != 1 {
        return Err(Error::msg(format!(
            "dir: got {} arguments, want 1",
            a.positional.len()
        )));
    }
    let mut names = attr_names(a.positional[0]);
    names.sort_unstable();
    let mut out = th.heap.vec_with_capacity(names.len())?;
    for n in names {
        out.push(th.heap.str(n)?);
    }
    th.heap.list_from_vec(out)
}

fn enumerate<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("enumerate", a, 1, 2)?;
    let x = pos("enumerate", p, 0, args::want_iterable)?.unwrap_or(Value::None);
    let start = pos("enumerate", p, 1, args::want_int)?.unwrap_or(0);
    let items = collect_items(th.budget, x)?;
    let heap = th.heap;
    heap.tuple_list(items.len(), 2, |flat| {
        for (i, (v, row)) in items.iter().zip(flat.chunks_exact_mut(2)).enumerate() {
            // Go's int arithmetic, as starlark-go: past the largest int
            // the count wraps around.
            row[0] = Value::Int(start.wrapping_add(i as i64));
            row[1] = *v;
            args::tick(th.budget, i)?;
        }
        Ok(())
    })
}

fn fail<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let u = args::unpack_from("fail", &[], a.named, ["sep"], 0)?;
    let sep = u.conv(0, args::want_str)?.unwrap_or(b" ");
    let mut msg = b"fail: ".to_vec();
    for (i, v) in a.positional.iter().enumerate() {
        if i > 0 {
            msg.extend_from_slice(sep);
        }
        // `str(v)`: strings bare.
        format::write_str(&mut msg, *v, th.budget)?;
        if msg.len() > th.budget.limits.max_heap_bytes {
            return Err(Error::limit(crate::error::LimitKind::HeapBytes));
        }
    }
    Err(Error::msg(text::lossy(&msg).into_owned()))
}

fn print<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    // The output is discarded, so only the arguments are checked.
    let u = args::unpack_from("print", &[], a.named, ["sep"], 0)?;
    u.conv(0, args::want_str)?;
    Ok(Value::None)
}

/// Go's `strconv.ParseFloat` rule for underscores: only between digits.
fn underscores_ok(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().all(|(i, &c)| {
        c != b'_'
            || (i > 0
                && i + 1 < b.len()
                && b[i - 1].is_ascii_alphanumeric()
                && b[i + 1].is_ascii_hexdigit())
    })
}

/// `float(s)` for a string, as starlark-go parses it.
pub fn parse_float(s: &str) -> Result<f64> {
    if s.is_empty() {
        return Err(Error::msg("float: empty string"));
    }
    let lower = s.to_ascii_lowercase();
    match lower.as_str() {
        "infinity" | "+infinity" | "inf" | "+inf" => return Ok(f64::INFINITY),
        "-infinity" | "-inf" => return Ok(f64::NEG_INFINITY),
        "nan" | "+nan" | "-nan" => return Ok(f64::NAN),
        _ => {}
    }
    let invalid = || Error::msg(format!("invalid float literal: {s}"));
    // Rust's parser takes the decimal forms Go takes; it also spells
    // infinities and NaN, which were answered above (so any other such
    // word is invalid here, as in Go).
    if lower.contains("inf") || lower.contains("nan") || !underscores_ok(s) {
        return Err(invalid());
    }
    let cleaned: String = s.chars().filter(|c| *c != '_').collect();
    let f = match cleaned.parse::<f64>() {
        Ok(f) => f,
        Err(_) => parse_hex_float(&cleaned).ok_or_else(invalid)?,
    };
    if f.is_infinite() {
        return Err(Error::msg("floating-point number too large"));
    }
    Ok(f)
}

/// Go's hexadecimal float form (`0x1.8p3`): a mantissa and a mandatory
/// binary exponent.
fn parse_hex_float(s: &str) -> Option<f64> {
    let (neg, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let rest = rest
        .strip_prefix("0x")
        .or_else(|| rest.strip_prefix("0X"))?;
    let (mant, exp) = rest.split_once(['p', 'P'])?;
    let exp: i32 = exp.parse().ok()?;
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((mant, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut m = 0f64;
    for c in int_part.chars().chain(frac_part.chars()) {
        m = m * 16.0 + c.to_digit(16)? as f64;
    }
    let e = exp.checked_sub(4 * frac_part.len() as i32)?;
    let v = m * 2f64.powi(e);
    Some(if neg { -v } else { v })
}

fn float<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    if !a.named.is_empty() {
        return Err(Error::msg("float does not accept keyword arguments"));
    }
    if a.positional.is_empty() {
        return Ok(Value::Float(0.0));
    }
    if a.positional.len() != 1 {
        return Err(Error::msg(format!(
            "float got {} arguments, wants 1",
            a.positional.len()
        )));
    }
    let x = a.positional[0];
    match x {
        Value::Bool(b) => Ok(Value::Float(if b { 1.0 } else { 0.0 })),
        Value::Int(_) | Value::BigInt(_) => Ok(Value::Float(finite_float(x)?)),
        Value::Float(_) => Ok(x),
        Value::Str(s) => Ok(Value::Float(parse_float(&text::lossy(s.text))?)),
        _ => Err(Error::msg(format!(
            "float got {}, want number or string",
            x.type_name()
        ))),
    }
}

/// The float of an int, refusing ints beyond the float range.
pub fn finite_float(v: Value<'_>) -> Result<f64> {
    let f = ops::as_float(v).unwrap_or(0.0);
    if f.is_infinite() {
        return Err(Error::msg("int too large to convert to float"));
    }
    Ok(f)
}

/// The attribute `name` of `x`, if it has one (`dir`, `getattr`,
/// `hasattr` see namespaces, modules and methods).
pub fn lookup_attr<'h>(th: &mut Thread<'h>, x: Value<'h>, name: &str) -> Result<Option<Value<'h>>> {
    match x {
        Value::Namespace(ns) => Ok(ns.attr(name)),
        Value::Module(m) => Ok(super::module_attr(m, name)),
        _ => match super::method(x, name) {
            None => Ok(None),
            Some(_) => th.get_attr(x, name).map(Some),
        },
    }
}

fn getattr<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("getattr", a, 2, 3)?;
    let name = pos("getattr", p, 1, args::want_str)?.unwrap_or(b"");
    let name = &*text::lossy(name);
    if let Some(v) = lookup_attr(th, p[0], name)? {
        return Ok(v);
    }
    if let Some(d) = p.get(2) {
        return Ok(*d);
    }
    Err(match p[0] {
        Value::Namespace(ns) => Error::msg(format!(
            "getattr: namespace {} has no .{name} field or method",
            ns.path
        )),
        x => Error::msg(format!(
            "getattr: {} has no .{name} field or method",
            x.type_name()
        )),
    })
}

fn hasattr<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("hasattr", a, 2, 2)?;
    let name = pos("hasattr", p, 1, args::want_str)?.unwrap_or(b"");
    let name = &*text::lossy(name);
    Ok(Value::Bool(lookup_attr(th, p[0], name)?.is_some()))
}

fn hash<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("hash", a, 1, 1)?;
    Ok(Value::Int(crate::hash::starlark_hash(p[0])?))
}

/// `int(s)` in base 10 for the common text: an optional sign and 1 to 18
/// decimal digits (which fit an i64); `None` for anything else, which
/// [`parse_int`] decides.
pub(crate) fn small_decimal(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut n: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + i64::from(c - b'0');
    }
    Some(if neg { -n } else { n })
}

/// starlark-go's `parseInt`: an optional sign, an optional base prefix
/// (`0x`, `0o`, `0b`, taken when it matches `base` or `base` is 0), then
/// digits of the base. `None` when invalid.
fn parse_int(th: &Thread<'_>, s: &str, base: u32) -> Result<Option<BigInt>> {
    let (neg, mut s) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let mut base = base;
    let b = s.as_bytes();
    if b.len() > 1 && b[0] == b'0' {
        let prefix = if b.len() > 2 {
            match b[1] {
                b'o' | b'O' => 8,
                b'x' | b'X' => 16,
                b'b' | b'B' => 2,
                _ => 0,
            }
        } else {
            0
        };
        if prefix != 0 {
            if base == 0 || base == prefix {
                base = prefix;
                s = &s[2..];
            }
        } else if base == 0 {
            // With automatic base, a leading zero means all zeros.
            return Ok(b[1..].iter().all(|c| *c == b'0').then(|| BigInt::from(0)));
        }
    }
    if base == 0 {
        base = 10;
    }
    if s.is_empty() || !s.chars().all(|c| c.is_digit(base)) {
        return Ok(None);
    }
    // Conversion from a non-power-of-two base is quadratic in length.
    let bits = s.len() as f64 * (base as f64).log2();
    format::check_int_text_cost((bits / 32.0) as usize + 1, th.budget)?;
    let Ok(n) = BigInt::from_str_radix(s, base) else {
        return Ok(None);
    };
    Ok(Some(if neg { -n } else { n }))
}

fn int<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let u = unpack("int", a, ["x", "base"], 1)?;
    let x = u.get(0).unwrap_or(Value::Int(0));
    let base = u.get(1);
    if let Value::Str(s) = x {
        let mut b = 10;
        if let Some(bv) = base {
            b = ops::as_int32(bv, th.budget).map_err(|_| {
                Error::msg(format!("int: for base, got {}, want int", bv.type_name()))
            })?;
            if b != 0 && !(2..=36).contains(&b) {
                return Err(Error::msg("int: base must be an integer >= 2 && <= 36"));
            }
        }
        if b == 10 {
            if let Some(n) = small_decimal(s.text) {
                return Ok(Value::Int(n));
            }
        }
        let digits = text::lossy(s.text);
        return match parse_int(th, &digits, b as u32)? {
            Some(n) => th.heap.int(n),
            None => Err(Error::msg(format!(
                "int: invalid literal with base {b}: {digits}"
            ))),
        };
    }
    if base.is_some() {
        return Err(Error::msg(
            "int: can't convert non-string with explicit base",
        ));
    }
    if let Value::Bool(b) = x {
        return Ok(Value::Int(b as i64));
    }
    ops::number_to_int(th.heap, x).map_err(|e| e.prefixed("int: "))
}

fn len<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("len", a, 1, 1)?;
    match ops::len(p[0]) {
        Some(n) => Ok(Value::Int(n as i64)),
        None => Err(Error::msg(format!(
            "len: value of type {} has no len",
            p[0].type_name()
        ))),
    }
}

fn list<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("list", a, 0, 1)?;
    match pos("list", p, 0, args::want_iterable)? {
        None => th.heap.list(&[]),
        Some(x) => {
            let items = collect(th.heap, x)?;
            th.heap.list_from_vec(items)
        }
    }
}

fn min<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    minmax(th, a, "min", BinOp::Lt, Ordering::Less)
}

fn max<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    minmax(th, a, "max", BinOp::Gt, Ordering::Greater)
}

fn minmax<'h>(
    th: &mut Thread<'h>,
    a: &Args<'h, '_>,
    name: &'static str,
    op: BinOp,
    better: Ordering,
) -> R<'h> {
    if a.positional.is_empty() {
        return Err(Error::msg(format!(
            "{name} requires at least one positional argument"
        )));
    }
    let u = args::unpack_from(name, &[], a.named, ["key"], 0)?;
    let key = u.conv(0, args::want_callable)?;
    let collected;
    let items: &[Value<'h>] = if a.positional.len() == 1 {
        let x = a.positional[0];
        if !is_iterable(x) {
            return Err(Error::msg(format!(
                "{name}: {} value is not iterable",
                x.type_name()
            )));
        }
        collected = collect_items(th.budget, x)?;
        &collected
    } else {
        a.positional
    };
    let Some(&first) = items.first() else {
        return Err(Error::msg(format!("{name}: argument is an empty sequence")));
    };
    let mut best = first;
    let mut best_key = match key {
        Some(f) => th.call(f, &[first], &[])?,
        None => first,
    };
    for (i, &x) in items.iter().enumerate().skip(1) {
        let k = match key {
            Some(f) => th.call(f, &[x], &[])?,
            None => x,
        };
        let ord =
            order(th.budget, op, k, best_key).map_err(|e| e.prefixed(&format!("{name}: ")))?;
        if ord == better {
            best = x;
            best_key = k;
        }
        args::tick(th.budget, i)?;
    }
    Ok(best)
}

fn ord<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    if !a.named.is_empty() {
        return Err(Error::msg("ord does not accept keyword arguments"));
    }
    if a.positional.len() != 1 {
        return Err(Error::msg(format!(
            "ord: got {} arguments, want 1",
            a.positional.len()
        )));
    }
    match a.positional[0] {
        Value::Str(s) => match text::decode(s.text) {
            // Go's DecodeRune: an invalid byte alone is U+FFFD.
            (c, n) if n > 0 && n == s.text.len() => Ok(Value::Int(c as i64)),
            _ => Err(Error::msg(format!(
                "ord: string encodes {} Unicode code points, want 1",
                text::rune_count(s.text, th.budget)?
            ))),
        },
        Value::Bytes(b) => match b.bytes {
            [x] => Ok(Value::Int(*x as i64)),
            _ => Err(Error::msg(format!(
                "ord: bytes has length {}, want 1",
                b.bytes.len()
            ))),
        },
        x => Err(Error::msg(format!(
            "ord: got {}, want string or bytes",
            x.type_name()
        ))),
    }
}

fn range<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("range", a, 1, 3)?;
    let first = pos("range", p, 0, args::want_int)?.unwrap_or(0);
    let second = pos("range", p, 1, args::want_int)?;
    let step = pos("range", p, 2, args::want_int)?.unwrap_or(1);
    let (start, stop) = match second {
        None => (0, first),
        Some(stop) => (first, stop),
    };
    if step == 0 {
        return Err(Error::msg("range: step argument must not be zero"));
    }
    Ok(Value::Range(th.heap.alloc(RangeObj {
        start,
        stop,
        step,
    })?))
}

fn repr<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("repr", a, 1, 1)?;
    format::repr_value(th.heap, p[0])
}

fn reversed<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("reversed", a, 1, 1)?;
    let x = pos("reversed", p, 0, args::want_iterable)?.unwrap_or(Value::None);
    let mut items = collect(th.heap, x)?;
    // Reversing moves each value once more: as much work as collecting.
    th.budget.charge_work(items.len() as u64)?;
    items.reverse();
    th.heap.list_from_vec(items)
}

fn sorted<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let u = unpack("sorted", a, ["iterable", "key", "reverse"], 1)?;
    let x = u.conv(0, args::want_iterable)?.unwrap_or(Value::None);
    let key = u.conv(1, args::want_callable)?;
    let reverse = u.conv(2, args::want_bool)?.unwrap_or(false);
    if key.is_none() {
        if let Some(r) = sorted_few(th, x, reverse) {
            return r;
        }
    }
    let values = collect_items(th.budget, x)?;
    let keyed: Vec<Value<'h>>;
    let keys: &[Value<'h>] = match key {
        None => &values,
        Some(f) => {
            th.heap
                .charge(values.len() * std::mem::size_of::<Value>())?;
            let mut keys = Vec::with_capacity(values.len());
            for (i, v) in values.iter().enumerate() {
                keys.push(th.call(f, &[*v], &[])?);
                args::tick(th.budget, i)?;
            }
            keyed = keys;
            &keyed
        }
    };
    if keys.len() <= SMALL_SORT {
        return small_sorted(th, &values, keys, reverse);
    }
    let mut out = th.heap.vec_with_capacity(values.len())?;
    check_sort_time(th, keys.len())?;
    let order = match super::sort_keys::encoded_order(th, keys, reverse)? {
        Some(order) => order,
        None => sort_indices(th, keys, reverse).map_err(|e| sort_failure(th, keys, reverse, e))?,
    };
    out.extend(order.iter().map(|&i| values[i]));
    th.heap.list_from_vec(out)
}

/// The error of a sort that failed with `e`: for keys that do not all
/// compare, starlark-go's (the error of the last failing comparison its
/// sort made); any other error (a limit) as it is.
#[cold]
fn sort_failure(th: &Thread<'_>, keys: &[Value<'_>], reverse: bool, e: Error) -> Error {
    if !matches!(e.kind(), ErrorKind::Eval { .. }) {
        return e;
    }
    match go_sort_error(th, keys, reverse) {
        Ok(found) => found.unwrap_or(e),
        Err(limit) => limit,
    }
}

/// `sorted(x)` (`reverse` for `reverse=True`) without a key, of a list or
/// tuple of at most [`SMALL_SORT`] items: the items sorted as they are
/// (no key runs Starlark that could change the list meanwhile), without a
/// copy of them first. `None` for any other `x`.
#[inline]
pub(crate) fn sorted_few<'h>(th: &Thread<'h>, x: Value<'h>, reverse: bool) -> Option<R<'h>> {
    if !matches!(x, Value::List(_) | Value::Tuple(_)) || args::iter_len(x) > SMALL_SORT {
        return None;
    }
    Some(args::with_items(th.budget, x, |values| {
        small_sorted(th, values, values, reverse)
    }))
}

/// The list of `values` (at most [`SMALL_SORT`]) ordered by their `keys`:
/// a few items (a record's labels, a pair) sorted in place on the stack,
/// without the merge sort's buffers or its time estimate.
fn small_sorted<'h>(
    th: &Thread<'h>,
    values: &[Value<'h>],
    keys: &[Value<'h>],
    reverse: bool,
) -> R<'h> {
    let mut order = [0u8; SMALL_SORT];
    let n = keys.len();
    small_sort_indices(th, keys, reverse, &mut order[..n])
        .map_err(|e| sort_failure(th, keys, reverse, e))?;
    let mut sorted = [Value::None; SMALL_SORT];
    for (s, &i) in sorted.iter_mut().zip(&order[..n]) {
        *s = values[i as usize];
    }
    th.heap.list(&sorted[..n])
}

/// The most items [`sorted`] orders by insertion on the stack.
const SMALL_SORT: usize = 16;

/// A stable insertion sort of the positions `0..idx.len()` of `keys`
/// (at most [`SMALL_SORT`]) by Starlark `<`, reversed comparisons when
/// `reverse`, as [`sort_indices`]. Stops at the first comparison error.
fn small_sort_indices(
    th: &Thread<'_>,
    keys: &[Value<'_>],
    reverse: bool,
    idx: &mut [u8],
) -> Result<()> {
    let budget = th.budget;
    let less = |a: u8, b: u8| -> Result<bool> {
        let (x, y) = if reverse {
            (keys[b as usize], keys[a as usize])
        } else {
            (keys[a as usize], keys[b as usize])
        };
        Ok(order(budget, BinOp::Lt, x, y)? == Ordering::Less)
    };
    for i in 0..idx.len() {
        let x = i as u8;
        let mut j = i;
        // Move left only past strictly greater items: stable.
        while j > 0 && less(x, idx[j - 1])? {
            idx[j] = idx[j - 1];
            j -= 1;
        }
        idx[j] = x;
    }
    Ok(())
}

/// Fails with the time limit unless the comparisons of a sort of `n` keys
/// (about `n log n`, ~50 ns each) fit in the time left.
fn check_sort_time(th: &Thread<'_>, n: usize) -> Result<()> {
    let est_ns = (n as u128) * (usize::BITS - n.leading_zeros()) as u128 * 50;
    if est_ns > th.budget.time_left().as_nanos() {
        return Err(Error::limit(crate::error::LimitKind::Time));
    }
    Ok(())
}

/// A stable merge sort of the positions of `keys` by Starlark `<`
/// (reversed comparisons when `reverse`, so that equal keys keep their
/// order, as Go's `sort.Stable(sort.Reverse(..))`). Stops at the first
/// comparison error. Written out because Rust's library sorts may panic
/// on an inconsistent order, and comparisons here can fail.
fn sort_indices(th: &Thread<'_>, keys: &[Value<'_>], reverse: bool) -> Result<Vec<usize>> {
    let n = keys.len();
    th.heap
        .charge(n.saturating_mul(2 * std::mem::size_of::<usize>()))?;
    let budget = th.budget;
    let mut count = 0usize;
    let mut less = |a: usize, b: usize| -> Result<bool> {
        count += 1;
        args::tick(budget, count)?;
        let (x, y) = if reverse {
            (keys[b], keys[a])
        } else {
            (keys[a], keys[b])
        };
        Ok(order(budget, BinOp::Lt, x, y)? == Ordering::Less)
    };
    let mut src: Vec<usize> = (0..n).collect();
    let mut dst: Vec<usize> = vec![0; n];
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while i < mid && j < hi {
                // Take from the right only when strictly less: stable.
                if less(src[j], src[i])? {
                    dst[k] = src[j];
                    j += 1;
                } else {
                    dst[k] = src[i];
                    i += 1;
                }
                k += 1;
            }
            dst[k..k + (mid - i)].copy_from_slice(&src[i..mid]);
            k += mid - i;
            dst[k..k + (hi - j)].copy_from_slice(&src[j..hi]);
            lo = hi;
        }
        std::mem::swap(&mut src, &mut dst);
        width *= 2;
    }
    Ok(src)
}

/// The order `sorted`, `min` and `max` use ([`ops::total_cmp_in`], `op`
/// naming the operator in its errors), with the common keys compared in
/// place: ints, strings, and tuples while their items compared are ints
/// with ints and strings with strings.
#[inline(always)]
fn order<'h>(budget: &Budget, op: BinOp, x: Value<'h>, y: Value<'h>) -> Result<Ordering> {
    match (x, y) {
        (Value::Int(i), Value::Int(j)) => Ok(i.cmp(&j)),
        (Value::Str(s), Value::Str(t)) => {
            budget.charge_bytes(s.text.len().min(t.text.len()))?;
            Ok(s.text.cmp(t.text))
        }
        (Value::Tuple(s), Value::Tuple(t)) => match flat_tuple_order(budget, s.items, t.items)? {
            Some(o) => Ok(o),
            None => ops::total_cmp_in(budget, op, x, y),
        },
        _ => ops::total_cmp_in(budget, op, x, y),
    }
}

/// The order of two tuples decided in place while the items compared are
/// ints with ints and strings with strings: the first pair that differs
/// decides, else the shorter tuple is less. `None` when a pair of other
/// kinds is reached first (the general comparison decides).
#[inline(never)]
fn flat_tuple_order(budget: &Budget, a: &[Value<'_>], b: &[Value<'_>]) -> Result<Option<Ordering>> {
    for (x, y) in a.iter().zip(b) {
        match (x, y) {
            (Value::Int(i), Value::Int(j)) => {
                if i != j {
                    return Ok(Some(i.cmp(j)));
                }
            }
            (Value::Str(s), Value::Str(t)) => {
                budget.charge_bytes(s.text.len().min(t.text.len()))?;
                if !s.same_text(t) {
                    return Ok(Some(s.text.cmp(t.text)));
                }
            }
            _ => return Ok(None),
        }
    }
    Ok(Some(a.len().cmp(&b.len())))
}

/// The error starlark-go's `sorted` reports for `keys` that do not all
/// compare: it sorts with Go's `sort.Stable` (insertion sort of blocks of
/// 20, then in-place symmetric merges), whose comparison records an error
/// and answers "not less" and goes on, so the error of the last failing
/// comparison is the one reported. Replayed here (only on this error path,
/// which is why the fast merge sort above can stop at its first error).
/// `Ok(None)` if no comparison failed.
fn go_sort_error(th: &Thread<'_>, keys: &[Value<'_>], reverse: bool) -> Result<Option<Error>> {
    struct Replay<'a, 'h> {
        keys: &'a [Value<'h>],
        /// `order[i]`: the key now at position `i`.
        order: Vec<usize>,
        reverse: bool,
        budget: &'a crate::budget::Budget,
        count: usize,
        last: Option<Error>,
    }
    impl Replay<'_, '_> {
        fn less(&mut self, i: usize, j: usize) -> Result<bool> {
            self.count += 1;
            args::tick(self.budget, self.count)?;
            let (a, b) = if self.reverse { (j, i) } else { (i, j) };
            let (x, y) = (self.keys[self.order[a]], self.keys[self.order[b]]);
            match ops::total_cmp_in(self.budget, BinOp::Lt, x, y) {
                Ok(o) => Ok(o == Ordering::Less),
                Err(e) if matches!(e.kind(), ErrorKind::Eval { .. }) => {
                    self.last = Some(e);
                    Ok(false)
                }
                Err(e) => Err(e),
            }
        }
        fn insertion_sort(&mut self, a: usize, b: usize) -> Result<()> {
            for i in a + 1..b {
                let mut j = i;
                while j > a && self.less(j, j - 1)? {
                    self.order.swap(j, j - 1);
                    j -= 1;
                }
            }
            Ok(())
        }
        fn sym_merge(&mut self, a: usize, m: usize, b: usize) -> Result<()> {
            if m - a == 1 {
                // Insert order[a] into order[m..b].
                let (mut i, mut j) = (m, b);
                while i < j {
                    let h = (i + j) / 2;
                    if self.less(h, a)? {
                        i = h + 1;
                    } else {
                        j = h;
                    }
                }
                self.order[a..i].rotate_left(1);
                return Ok(());
            }
            if b - m == 1 {
                // Insert order[m] into order[a..m].
                let (mut i, mut j) = (a, m);
                while i < j {
                    let h = (i + j) / 2;
                    if !self.less(m, h)? {
                        i = h + 1;
                    } else {
                        j = h;
                    }
                }
                self.order[i..=m].rotate_right(1);
                return Ok(());
            }
            let mid = (a + b) / 2;
            let n = mid + m;
            let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
            let p = n - 1;
            while start < r {
                let c = (start + r) / 2;
                if !self.less(p - c, c)? {
                    start = c + 1;
                } else {
                    r = c;
                }
            }
            let end = n - start;
            if start < m && m < end {
                self.order[start..end].rotate_left(m - start);
            }
            if a < start && start < mid {
                self.sym_merge(a, start, mid)?;
            }
            if mid < end && end < b {
                self.sym_merge(mid, end, b)?;
            }
            Ok(())
        }
    }
    let n = keys.len();
    let mut s = Replay {
        keys,
        order: (0..n).collect(),
        reverse,
        budget: th.budget,
        count: 0,
        last: None,
    };
    let mut block = 20;
    let (mut a, mut b) = (0, block);
    while b <= n {
        s.insertion_sort(a, b)?;
        a = b;
        b += block;
    }
    s.insertion_sort(a, n)?;
    while block < n {
        let (mut a, mut b) = (0, 2 * block);
        while b <= n {
            s.sym_merge(a, a + block, b)?;
            a = b;
            b += 2 * block;
        }
        if a + block < n {
            s.sym_merge(a, a + block, n)?;
        }
        block *= 2;
    }
    Ok(s.last)
}

fn str<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    if !a.named.is_empty() {
        return Err(Error::msg("str does not accept keyword arguments"));
    }
    if a.positional.len() != 1 {
        return Err(Error::msg(format!(
            "str: got {} arguments, want exactly 1",
            a.positional.len()
        )));
    }
    match a.positional[0] {
        x @ Value::Str(_) => Ok(x),
        Value::Int(i) => th.heap.str_of_int(i),
        // starlark-go writes U+FFFD for each invalid byte.
        Value::Bytes(b) => th.heap.str(&*text::lossy(b.bytes)),
        x => format::repr_value(th.heap, x),
    }
}

/// The original product's `sum`: one iterable; ints add exactly until a
/// float appears, from then on the total is a float.
fn sum<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("sum", a, 1, 1)?;
    let x = pos("sum", p, 0, args::want_iterable)?.unwrap_or(Value::None);
    let heap = th.heap;
    let mut total = Value::Int(0);
    for_each(th.budget, x, |i, v| {
        match v {
            Value::Int(_) | Value::BigInt(_) | Value::Float(_) => {
                total = ops::binary(heap, BinOp::Add, total, v).map_err(|e| e.prefixed("sum: "))?;
            }
            _ => {
                return Err(Error::msg(format!(
                    "sum: at index {i}, got {}, want int or float",
                    v.type_name()
                )))
            }
        }
        Ok(true)
    })?;
    Ok(total)
}

fn tuple<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("tuple", a, 0, 1)?;
    match pos("tuple", p, 0, args::want_iterable)? {
        None => th.heap.tuple(&[]),
        Some(x @ Value::Tuple(_)) => Ok(x),
        Some(x) => {
            let items = collect(th.heap, x)?;
            let items = items.into_bump_slice();
            Ok(Value::Tuple(
                th.heap.alloc(crate::value::TupleObj { items })?,
            ))
        }
    }
}

fn type_<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    if !a.named.is_empty() {
        return Err(Error::msg("type does not accept keyword arguments"));
    }
    if a.positional.len() != 1 {
        return Err(Error::msg(format!(
            "type: got {} arguments, want exactly 1",
            a.positional.len()
        )));
    }
    th.heap.str(a.positional[0].type_name())
}

/// The most iterables [`zip_in_place`] reads where they are.
const ZIP_IN_PLACE: usize = 4;

/// `zip` of a few lists and tuples (`dict(zip(keys, values))`), read where
/// they are rather than gathered first: nothing runs Starlark while the
/// rows are copied, so no list can change meanwhile. `None` for other
/// arguments (or a list being changed), which are gathered.
fn zip_in_place<'h>(th: &Thread<'h>, xs: &[Value<'h>], rows: usize) -> Option<R<'h>> {
    if xs.len() > ZIP_IN_PLACE {
        return None;
    }
    let mut cols: [&[Value<'h>]; ZIP_IN_PLACE] = [&[]; ZIP_IN_PLACE];
    for (c, x) in cols.iter_mut().zip(xs) {
        *c = match x {
            // SAFETY: the list is not being changed (checked), and the
            // items are only read until the rows are copied, while nothing
            // can change it.
            Value::List(l) => unsafe { l.items.try_borrow_unguarded() }.ok()?.as_slice(),
            Value::Tuple(t) => t.items,
            _ => return None,
        };
    }
    let width = xs.len();
    Some(th.heap.tuple_list(rows, width, |flat| {
        for (i, row) in flat.chunks_exact_mut(width.max(1)).take(rows).enumerate() {
            for (slot, c) in row.iter_mut().zip(&cols) {
                *slot = c[i];
            }
            args::tick(th.budget, i)?;
        }
        Ok(())
    }))
}

fn zip<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    if !a.named.is_empty() {
        return Err(Error::msg("zip does not accept keyword arguments"));
    }
    let mut cols = Vec::with_capacity(a.positional.len());
    for (i, x) in a.positional.iter().enumerate() {
        if !is_iterable(*x) {
            return Err(Error::msg(format!(
                "zip: argument #{} is not iterable: {}",
                i + 1,
                x.type_name()
            )));
        }
    }
    let rows = a
        .positional
        .iter()
        .map(|x| args::iter_len(*x))
        .min()
        .unwrap_or(0);
    if let Some(r) = zip_in_place(th, a.positional, rows) {
        return r;
    }
    for x in a.positional {
        cols.push(collect_items(th.budget, *x)?);
    }
    let width = cols.len();
    th.heap.tuple_list(rows, width, |flat| {
        for i in 0..rows {
            for (j, c) in cols.iter().enumerate() {
                flat[i * width + j] = c[i];
            }
            args::tick(th.budget, i)?;
        }
        Ok(())
    })
}
