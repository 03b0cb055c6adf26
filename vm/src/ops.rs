//! The operators of the language on values: arithmetic, comparison,
//! equality, membership, indexing and slicing, with starlark-go's
//! semantics and error texts (hashing is [`crate::hash`]).
//!
//! Ints take an `i64` fast path with checked arithmetic and move to big ints
//! (num-bigint) only on overflow. Everything that can grow or run long is
//! weighed first: repetition and big-int products are charged to the heap
//! before they are built, and big-int multiplication and division are
//! refused when their estimated work exceeds the time left. Comparison
//! recursion is bounded by starlark-go's depth limit ([`COMPARE_DEPTH`]),
//! and the total work of one comparison or hash is bounded too, so a shared
//! (DAG-shaped) structure cannot make one call run unbounded.

use crate::budget::{Budget, ITEM_UNITS, WORK_BLOCK};
use crate::error::{Error, ErrorKind, LimitKind, Result};
use crate::format;
use crate::heap::Heap;
use crate::value::{BigIntObj, BytesObj, DictObj, ListObj, RangeObj, TupleObj, Value};
use bumpalo::collections::Vec as BumpVec;
use codemode_lang::ast::{BinOp, UnaryOp};
use codemode_lang::Hint;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{FromPrimitive, ToPrimitive, Zero};
use std::cmp::Ordering;

/// starlark-go's `CompareLimit`: containers nested this deep cannot be
/// compared (`comparison exceeded maximum recursion depth`).
pub const COMPARE_DEPTH: u32 = 10;

/// Values visited by one comparison or hash without a budget to check the
/// deadline against; beyond this the call fails as over time. Only shared
/// (DAG-shaped) structures reach it: it is more than a full heap holds.
pub(crate) const WORK_CAP: u64 = 1 << 22;

/// Values a comparison visits between two charges of its work to the
/// budget at hand: at most this many less one go uncharged per comparison,
/// which the step that ran it covers.
pub(crate) const CMP_CHARGE_EVERY: u64 = 64;

/// starlark-go refuses repetition results of this many elements or more.
const MAX_REPEAT: u64 = 1 << 30;

/// Big-int work (in estimated nanoseconds) below which no deadline check
/// is made.
const CHEAP_WORK_NS: u128 = 1_000_000;

fn unknown_binary(op: BinOp, a: Value<'_>, b: Value<'_>) -> Error {
    operand_error(
        format!(
            "unknown binary op: {} {} {}",
            a.type_name(),
            op.as_str(),
            b.type_name()
        ),
        a,
        b,
    )
}

/// An error of an operation on `a` and `b`, hinted when Python code would
/// have mixed those types on purpose: text with a number, a list with a
/// tuple.
fn operand_error(msg: String, a: Value<'_>, b: Value<'_>) -> Error {
    let (x, y) = (a.type_name(), b.type_name());
    let number = |t| t == "int" || t == "float";
    let hint = if (x == "string" && number(y)) || (number(x) && y == "string") {
        Some(Hint::Convert)
    } else if matches!((x, y), ("list", "tuple") | ("tuple", "list")) {
        Some(Hint::ConvertSequence)
    } else {
        None
    };
    match hint {
        Some(hint) => Error::hinted(msg, hint),
        None => Error::msg(msg),
    }
}

// ---------------------------------------------------------------------------
// Number helpers

/// Any int as a big int.
pub fn to_bigint(v: Value<'_>) -> Option<BigInt> {
    match v {
        Value::Int(i) => Some(BigInt::from(i)),
        Value::BigInt(b) => Some(b.to_bigint()),
        _ => None,
    }
}

/// The float nearest to an int or float (infinite for a huge int).
pub fn as_float(v: Value<'_>) -> Option<f64> {
    match v {
        Value::Float(f) => Some(f),
        Value::Int(i) => Some(i as f64),
        Value::BigInt(b) => Some(bigint_to_f64(b)),
        _ => None,
    }
}

fn bigint_to_f64(b: &BigIntObj<'_>) -> f64 {
    // Correctly rounded (num-bigint rounds to odd, then to nearest even);
    // infinite beyond the float range, as Go's Int.Float.
    b.to_bigint().to_f64().unwrap_or(f64::INFINITY)
}

/// starlark-go's `finiteFloat`: the float of an int, refusing huge ints.
fn finite_float(v: Value<'_>) -> Result<f64> {
    let f = as_float(v).unwrap_or(0.0);
    if f.is_infinite() {
        return Err(Error::msg("int too large to convert to float"));
    }
    Ok(f)
}

/// An int value for a finite float, truncated towards zero.
pub fn float_to_int<'h>(heap: Heap<'h>, f: f64) -> Result<Value<'h>> {
    // Both bounds are exactly representable as floats.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        return Ok(Value::Int(f as i64));
    }
    match BigInt::from_f64(f.trunc()) {
        Some(b) => heap.int(b),
        None => Err(Error::msg("cannot convert float to integer")),
    }
}

/// starlark-go's `NumberToInt`: an int unchanged, a float truncated.
pub fn number_to_int<'h>(heap: Heap<'h>, v: Value<'h>) -> Result<Value<'h>> {
    match v {
        Value::Int(_) | Value::BigInt(_) => Ok(v),
        Value::Float(f) if f.is_infinite() => {
            Err(Error::msg("cannot convert float infinity to integer"))
        }
        Value::Float(f) if f.is_nan() => Err(Error::msg("cannot convert float NaN to integer")),
        Value::Float(f) => float_to_int(heap, f),
        _ => Err(Error::msg(format!(
            "cannot convert {} to int",
            v.type_name()
        ))),
    }
}

/// The decimal text of an int for an error message.
fn int_text(v: Value<'_>, budget: &Budget) -> Result<String> {
    let mut s = String::new();
    format::write_repr(&mut s, v, budget)?;
    Ok(s)
}

/// starlark-go's `AsInt32`: an int in the signed 32-bit range, else
/// `got T, want int` or `N out of range`.
pub fn as_int32(v: Value<'_>, budget: &Budget) -> Result<i64> {
    match v {
        Value::Int(i) if i32::try_from(i).is_ok() => Ok(i),
        Value::Int(_) | Value::BigInt(_) => {
            Err(Error::msg(format!("{} out of range", int_text(v, budget)?)))
        }
        _ => Err(Error::msg(format!("got {}, want int", v.type_name()))),
    }
}

/// Resolves a possibly negative index against `len` as starlark-go's
/// indexing does, failing with `<type> index ...` texts: `type_name` is
/// the indexed value's type.
pub fn to_index(i: Value<'_>, len: usize, type_name: &str, budget: &Budget) -> Result<usize> {
    let i = as_int32(i, budget).map_err(|e| e.prefixed(&format!("{type_name} index: ")))?;
    resolve_index(i, len, type_name)
}

fn resolve_index(orig: i64, len: usize, type_name: &str) -> Result<usize> {
    let n = len as i64;
    let i = if orig < 0 { orig + n } else { orig };
    if i < 0 || i >= n {
        return Err(if n == 0 {
            Error::msg(format!("index {orig} out of range: empty {type_name}"))
        } else {
            Error::msg(format!(
                "{type_name} index {orig} out of range [{}:{}]",
                -n,
                n - 1
            ))
        });
    }
    Ok(i as usize)
}

/// The length of a sized value (a string counts bytes).
pub fn len(v: Value<'_>) -> Option<usize> {
    match v {
        Value::Str(s) => Some(s.text.len()),
        Value::Bytes(b) => Some(b.bytes.len()),
        Value::List(l) => Some(l.len()),
        Value::Tuple(t) => Some(t.items.len()),
        Value::Dict(d) => Some(d.len()),
        Value::Range(r) => usize::try_from(r.len()).ok(),
        _ => None,
    }
}

fn bytes_from_vec<'h>(heap: Heap<'h>, v: BumpVec<'h, u8>) -> Result<Value<'h>> {
    let bytes = v.into_bump_slice();
    Ok(Value::Bytes(heap.alloc(BytesObj { bytes })?))
}

/// An empty byte vector with room for `n` bytes, charged.
fn byte_vec<'h>(heap: Heap<'h>, n: usize) -> Result<BumpVec<'h, u8>> {
    heap.charge(n)?;
    Ok(BumpVec::with_capacity_in(n, heap.bump))
}

fn tuple_from_vec<'h>(heap: Heap<'h>, v: BumpVec<'h, Value<'h>>) -> Result<Value<'h>> {
    let items = v.into_bump_slice();
    Ok(Value::Tuple(heap.alloc(TupleObj { items })?))
}

// ---------------------------------------------------------------------------
// Big-int cost

/// Estimated nanoseconds of multiplying (or dividing) numbers of `a` and
/// `b` 64-bit words with num-bigint: schoolbook for short operands,
/// Toom-3 (exponent ~1.47) beyond.
fn bigint_work_ns(a: usize, b: usize, division: bool) -> u128 {
    let (lo, hi) = (a.min(b) as u128, a.max(b) as u128);
    if division || lo < 64 {
        return lo * hi;
    }
    let hi_f = hi as f64;
    (hi_f.powf(1.47) * 16.0) as u128
}

/// Refuses a big-int multiplication or division whose result cannot fit in
/// the heap or whose work cannot finish before the deadline. Returns
/// whether the work is large enough to check the deadline afterwards.
fn weigh_bigint(heap: Heap<'_>, a: &BigInt, b: &BigInt, division: bool) -> Result<bool> {
    let bits_a = a.bits();
    let bits_b = b.bits();
    if !division {
        let result_bytes = usize::try_from((bits_a + bits_b) / 8).unwrap_or(usize::MAX);
        let budget = heap.budget;
        if budget.heap_bytes().saturating_add(result_bytes) > budget.limits.max_heap_bytes {
            return Err(Error::limit(LimitKind::HeapBytes));
        }
    }
    let words = |bits: u64| usize::try_from(bits / 64 + 1).unwrap_or(usize::MAX);
    let work = bigint_work_ns(words(bits_a), words(bits_b), division);
    if work <= CHEAP_WORK_NS {
        return Ok(false);
    }
    heap.budget.admit_work(work)?;
    Ok(true)
}

// ---------------------------------------------------------------------------
// Int arithmetic

/// `a op b` for two ints (small or big); `None` when `op` does not apply.
fn int_binary<'h>(heap: Heap<'h>, op: BinOp, a: Value<'h>, b: Value<'h>) -> Result<Value<'h>> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        let fast = match op {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::FloorDiv => {
                if y == 0 {
                    return Err(Error::msg("floored division by zero"));
                }
                // i64::MIN // -1 overflows and goes the big way.
                if y == -1 {
                    x.checked_neg()
                } else {
                    Some(Integer::div_floor(&x, &y))
                }
            }
            BinOp::Mod => {
                if y == 0 {
                    return Err(Error::msg("integer modulo by zero"));
                }
                if y == -1 {
                    Some(0)
                } else {
                    Some(Integer::mod_floor(&x, &y))
                }
            }
            BinOp::BitAnd => Some(x & y),
            BinOp::BitOr => Some(x | y),
            BinOp::BitXor => Some(x ^ y),
            _ => None,
        };
        if let Some(z) = fast {
            return Ok(Value::Int(z));
        }
    }
    let (Some(x), Some(y)) = (to_bigint(a), to_bigint(b)) else {
        return Err(unknown_binary(op, a, b));
    };
    let z = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => {
            let slow = weigh_bigint(heap, &x, &y, false)?;
            let z = x * y;
            if slow {
                heap.budget.check_time()?;
            }
            z
        }
        BinOp::FloorDiv | BinOp::Mod => {
            if y.is_zero() {
                return Err(Error::msg(if op == BinOp::FloorDiv {
                    "floored division by zero"
                } else {
                    "integer modulo by zero"
                }));
            }
            let slow = weigh_bigint(heap, &x, &y, true)?;
            let z = if op == BinOp::FloorDiv {
                x.div_floor(&y)
            } else {
                x.mod_floor(&y)
            };
            if slow {
                heap.budget.check_time()?;
            }
            z
        }
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        _ => return Err(unknown_binary(op, a, b)),
    };
    heap.int(z)
}

/// `x << n` and `x >> n` for an int `x`, with starlark-go's checks of `n`.
fn shift<'h>(heap: Heap<'h>, op: BinOp, x: Value<'h>, n: Value<'h>) -> Result<Value<'h>> {
    let n = as_int32(n, heap.budget)?;
    if n < 0 {
        return Err(Error::msg(format!("negative shift count: {n}")));
    }
    if op == BinOp::Shl {
        if n >= 512 {
            return Err(Error::msg(format!("shift count too large: {n}")));
        }
        if let Value::Int(i) = x {
            if n < 64 {
                let wide = (i as i128) << n;
                if (wide >> n) == i as i128 {
                    if let Ok(z) = i64::try_from(wide) {
                        return Ok(Value::Int(z));
                    }
                }
            }
        }
        let Some(b) = to_bigint(x) else {
            return Err(unknown_binary(op, x, Value::Int(n)));
        };
        return heap.int(b << (n as usize));
    }
    match x {
        Value::Int(i) => Ok(Value::Int(i >> n.min(63))),
        _ => match to_bigint(x) {
            // num-bigint's >> rounds towards negative infinity, like Go's.
            Some(b) => heap.int(b >> (n as usize)),
            None => Err(unknown_binary(op, x, Value::Int(n))),
        },
    }
}

/// Go's `math.Mod` with the result moved to the divisor's sign.
fn float_mod(x: f64, y: f64) -> f64 {
    let mut z = x % y;
    if (x < 0.0) != (y < 0.0) && z != 0.0 {
        z += y;
    }
    z
}

/// Arithmetic where at least one operand is a float and the other a
/// number, in starlark-go's order of checks.
fn float_binary<'h>(op: BinOp, a: Value<'h>, b: Value<'h>) -> Result<Value<'h>> {
    let is_int = |v: Value<'_>| matches!(v, Value::Int(_) | Value::BigInt(_));
    // Float % Int checks the zero divisor before converting it.
    if op == BinOp::Mod && matches!(b, Value::Int(0)) {
        return Err(Error::msg("floating-point modulo by zero"));
    }
    let x = if is_int(a) {
        finite_float(a)?
    } else {
        as_float(a).unwrap_or(0.0)
    };
    let y = if is_int(b) {
        finite_float(b)?
    } else {
        as_float(b).unwrap_or(0.0)
    };
    let z = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return Err(Error::msg("floating-point division by zero"));
            }
            x / y
        }
        BinOp::FloorDiv => {
            if y == 0.0 {
                return Err(Error::msg("floored division by zero"));
            }
            (x / y).floor()
        }
        BinOp::Mod => {
            if y == 0.0 {
                return Err(Error::msg("floating-point modulo by zero"));
            }
            float_mod(x, y)
        }
        _ => return Err(unknown_binary(op, a, b)),
    };
    Ok(Value::Float(z))
}

// ---------------------------------------------------------------------------
// Repetition

/// The repeat count of `seq * n` per starlark-go: 0 for an empty sequence or
/// a count below 1; refused when the result would have 2^30 elements.
fn repeat_count(n: Value<'_>, elems: usize, budget: &Budget) -> Result<usize> {
    if elems == 0 {
        return Ok(0);
    }
    // The heap budget: a repetition that cannot fit in what is left of the
    // heap is a resource limit, decided before starlark-go's own checks, so
    // `"x" * (1 << 40)` is refused as `resource limit exceeded`.
    let left = budget
        .limits
        .max_heap_bytes
        .saturating_sub(budget.heap_bytes()) as u128;
    let over_heap = match n {
        Value::Int(i) => i > 0 && (elems as u128).saturating_mul(i as u128) > left,
        Value::BigInt(b) => !b.negative,
        _ => false,
    };
    if over_heap {
        return Err(Error::limit(crate::error::LimitKind::HeapBytes));
    }
    let i = match n {
        Value::Int(i) if i32::try_from(i).is_ok() => i,
        _ => {
            return Err(Error::msg(format!(
                "repeat count {} too large",
                int_text(n, budget)?
            )))
        }
    };
    if i < 1 {
        return Ok(0);
    }
    let total = (elems as u64).saturating_mul(i as u64);
    if total >= MAX_REPEAT {
        return Err(Error::msg(format!(
            "excessive repeat ({elems} * {i} elements)"
        )));
    }
    Ok(i as usize)
}

/// How many copies a repetition makes per charge of its work: about a
/// block's worth of elements (or bytes).
fn repeat_check_every(elems: usize) -> usize {
    (WORK_BLOCK / elems.max(1)).max(1)
}

/// Charges the work of the copies `i..` of `k` copies of `elems` elements
/// (or bytes) when copy `i` starts a group of `every`: one charge per group,
/// made before its copies. An empty copy still counts as one unit.
fn charge_copies(budget: &Budget, i: usize, k: usize, every: usize, elems: usize) -> Result<()> {
    if i.is_multiple_of(every) {
        budget.charge_work(((k - i).min(every) * elems.max(1)) as u64)?;
    }
    Ok(())
}

/// Appends `k` copies of `items` to `out`, charging the work as it goes
/// (a long `items` is copied in blocks).
fn repeat_values<'h>(
    budget: &Budget,
    out: &mut BumpVec<'h, Value<'h>>,
    items: &[Value<'h>],
    k: usize,
) -> Result<()> {
    if items.len() >= WORK_BLOCK {
        for _ in 0..k {
            budget.in_blocks(items, |b| out.extend_from_slice(b))?;
        }
        return Ok(());
    }
    let every = repeat_check_every(items.len());
    for i in 0..k {
        charge_copies(budget, i, k, every, items.len())?;
        out.extend_from_slice(items);
    }
    Ok(())
}

/// Appends the values of `items` at `start, start+step, ...` before `end`
/// (`count` of them) to `out`, charging the work block by block.
fn copy_slice<'h>(
    budget: &Budget,
    out: &mut BumpVec<'h, Value<'h>>,
    items: &[Value<'h>],
    (start, end, step): (i64, i64, i64),
    count: usize,
) -> Result<()> {
    if step == 1 {
        let run = &items[start as usize..end as usize];
        return budget.in_blocks(run, |b| out.extend_from_slice(b));
    }
    let mut at = slice_positions(start, end, step);
    let mut left = count;
    while left > 0 {
        let n = left.min(WORK_BLOCK);
        budget.charge_work(n as u64)?;
        out.extend(at.by_ref().take(n).map(|i| items[i]));
        left -= n;
    }
    Ok(())
}

fn repeat<'h>(heap: Heap<'h>, seq: Value<'h>, n: Value<'h>) -> Result<Value<'h>> {
    let budget = heap.budget;
    match seq {
        Value::Str(s) => {
            let k = repeat_count(n, s.text.len(), budget)?;
            let mut out = heap.string_builder(s.text.len() * k)?;
            let every = repeat_check_every(s.text.len());
            for i in 0..k {
                charge_copies(budget, i, k, every, s.text.len())?;
                out.push_str(s.text);
            }
            heap.finish_str(out)
        }
        Value::Bytes(b) => {
            let k = repeat_count(n, b.bytes.len(), budget)?;
            let mut out = byte_vec(heap, b.bytes.len() * k)?;
            let every = repeat_check_every(b.bytes.len());
            for i in 0..k {
                charge_copies(budget, i, k, every, b.bytes.len())?;
                out.extend_from_slice(b.bytes);
            }
            bytes_from_vec(heap, out)
        }
        Value::List(l) => {
            let items = l.items.borrow();
            let k = repeat_count(n, items.len(), budget)?;
            let mut out = heap.vec_with_capacity(items.len() * k)?;
            repeat_values(budget, &mut out, &items, k)?;
            drop(items);
            heap.list_from_vec(out)
        }
        Value::Tuple(t) => {
            let k = repeat_count(n, t.items.len(), budget)?;
            let mut out = heap.vec_with_capacity(t.items.len() * k)?;
            repeat_values(budget, &mut out, t.items, k)?;
            tuple_from_vec(heap, out)
        }
        _ => Err(Error::msg("repeat of a non-sequence")),
    }
}

// ---------------------------------------------------------------------------
// Binary operators

/// `a op b` for every binary operator except `and`/`or`. Comparisons are
/// delegated to [`compare_in`].
pub fn binary<'h>(heap: Heap<'h>, op: BinOp, a: Value<'h>, b: Value<'h>) -> Result<Value<'h>> {
    use Value::*;
    let is_int = |v: Value<'_>| matches!(v, Int(_) | BigInt(_));
    let is_num = |v: Value<'_>| matches!(v, Int(_) | BigInt(_) | Float(_));
    match op {
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            Ok(Bool(compare_in(heap.budget, op, a, b)?))
        }
        BinOp::In => Ok(Bool(contains(heap, b, a)?)),
        BinOp::NotIn => Ok(Bool(!contains(heap, b, a)?)),
        BinOp::And | BinOp::Or => Err(unknown_binary(op, a, b)),
        BinOp::Add => match (a, b) {
            _ if is_int(a) && is_int(b) => int_binary(heap, op, a, b),
            _ if is_num(a) && is_num(b) => float_binary(op, a, b),
            (Str(x), Str(y)) => heap.concat(x.text, y.text),
            // starlark-go has no runtime `bytes + bytes`: only adjacent
            // literals are joined, by the compiler.
            (List(x), List(y)) => {
                let (xs, ys) = (x.items.borrow(), y.items.borrow());
                let mut v = heap.vec_with_capacity(xs.len().saturating_add(ys.len()))?;
                heap.budget.in_blocks(&xs, |b| v.extend_from_slice(b))?;
                heap.budget.in_blocks(&ys, |b| v.extend_from_slice(b))?;
                drop((xs, ys));
                heap.list_from_vec(v)
            }
            (Tuple(x), Tuple(y)) => {
                let mut v = heap.vec_with_capacity(x.items.len() + y.items.len())?;
                heap.budget.in_blocks(x.items, |b| v.extend_from_slice(b))?;
                heap.budget.in_blocks(y.items, |b| v.extend_from_slice(b))?;
                tuple_from_vec(heap, v)
            }
            _ => Err(unknown_binary(op, a, b)),
        },
        BinOp::Sub | BinOp::FloorDiv => {
            if is_int(a) && is_int(b) {
                int_binary(heap, op, a, b)
            } else if is_num(a) && is_num(b) {
                float_binary(op, a, b)
            } else {
                Err(unknown_binary(op, a, b))
            }
        }
        BinOp::Div => {
            if is_num(a) && is_num(b) {
                float_binary(op, a, b)
            } else {
                Err(unknown_binary(op, a, b))
            }
        }
        BinOp::Mul => match (a, b) {
            _ if is_int(a) && is_int(b) => int_binary(heap, op, a, b),
            _ if is_num(a) && is_num(b) => float_binary(op, a, b),
            (Str(_) | Bytes(_) | List(_) | Tuple(_), n) if is_int(n) => repeat(heap, a, n),
            (n, Str(_) | Bytes(_) | List(_) | Tuple(_)) if is_int(n) => repeat(heap, b, n),
            _ => Err(unknown_binary(op, a, b)),
        },
        BinOp::Mod => match a {
            Str(s) => format::percent(heap, s.text, b),
            _ if is_int(a) && is_int(b) => int_binary(heap, op, a, b),
            _ if is_num(a) && is_num(b) => float_binary(op, a, b),
            _ => Err(unknown_binary(op, a, b)),
        },
        BinOp::BitOr => match (a, b) {
            (Dict(x), Dict(y)) => dict_union(heap, x, y),
            _ if is_int(a) && is_int(b) => int_binary(heap, op, a, b),
            _ => Err(unknown_binary(op, a, b)),
        },
        BinOp::BitAnd | BinOp::BitXor => {
            if is_int(a) && is_int(b) {
                int_binary(heap, op, a, b)
            } else {
                Err(unknown_binary(op, a, b))
            }
        }
        BinOp::Shl | BinOp::Shr => {
            if is_int(a) {
                shift(heap, op, a, b)
            } else {
                Err(unknown_binary(op, a, b))
            }
        }
    }
}

/// Inserts every entry of `from` into `into`, charging the work of each.
fn dict_add_all<'h>(
    budget: &Budget,
    into: &DictObj<'h>,
    from: &[(Value<'h>, Value<'h>)],
) -> Result<()> {
    let mut map = into.map.borrow_mut();
    for &(k, v) in from {
        budget.charge_work(ITEM_UNITS)?;
        map.insert(k, v)?;
    }
    Ok(())
}

fn dict_entries<'h>(d: &DictObj<'h>) -> Vec<(Value<'h>, Value<'h>)> {
    d.map.borrow().iter().collect()
}

/// `x | y` for dicts: a new dict, `y`'s values winning.
fn dict_union<'h>(heap: Heap<'h>, x: &DictObj<'h>, y: &DictObj<'h>) -> Result<Value<'h>> {
    let z = heap.dict(x.len())?;
    dict_add_all(heap.budget, z, &dict_entries(x))?;
    dict_add_all(heap.budget, z, &dict_entries(y))?;
    Ok(Value::Dict(z))
}

/// `x += y`: a list `x` is extended in place by any iterable `y` (list,
/// tuple, dict keys, range); everything else is `x + y`.
pub fn inplace_add<'h>(heap: Heap<'h>, a: Value<'h>, b: Value<'h>) -> Result<Value<'h>> {
    let Value::List(x) = a else {
        return binary(heap, BinOp::Add, a, b);
    };
    if !matches!(
        b,
        Value::List(_) | Value::Tuple(_) | Value::Dict(_) | Value::Range(_)
    ) {
        return binary(heap, BinOp::Add, a, b);
    }
    x.check_mutable("apply += to")?;
    extend_list(heap, x, b)?;
    Ok(a)
}

/// Appends the elements of an iterable to a list, charging the growth.
fn extend_list<'h>(heap: Heap<'h>, x: &ListObj<'h>, from: Value<'h>) -> Result<()> {
    let budget = heap.budget;
    match from {
        Value::List(y) if std::ptr::eq(x, y) => {
            // `x += x` reads and grows the same list: copy first.
            let mut xs = x.items.borrow_mut();
            let n = xs.len();
            heap.reserve(&mut xs, n)?;
            for start in (0..n).step_by(WORK_BLOCK) {
                let end = (start + WORK_BLOCK).min(n);
                budget.charge_work((end - start) as u64)?;
                for i in start..end {
                    let v = xs[i];
                    xs.push(v);
                }
            }
        }
        Value::List(y) => {
            let ys = y.items.borrow();
            let mut xs = x.items.borrow_mut();
            heap.reserve(&mut xs, ys.len())?;
            budget.in_blocks(&ys, |b| xs.extend_from_slice(b))?;
        }
        Value::Tuple(t) => {
            let mut xs = x.items.borrow_mut();
            heap.reserve(&mut xs, t.items.len())?;
            budget.in_blocks(t.items, |b| xs.extend_from_slice(b))?;
        }
        Value::Dict(d) => {
            let keys: Vec<Value<'h>> = d.map.borrow().iter().map(|(k, _)| k).collect();
            let mut xs = x.items.borrow_mut();
            heap.reserve(&mut xs, keys.len())?;
            budget.in_blocks(&keys, |b| xs.extend_from_slice(b))?;
        }
        Value::Range(r) => {
            let n = r.len();
            let mut xs = x.items.borrow_mut();
            heap.reserve(&mut xs, usize::try_from(n).unwrap_or(usize::MAX))?;
            let mut k = 0;
            while k < n {
                let end = (k + WORK_BLOCK as i64).min(n);
                budget.charge_work((end - k) as u64)?;
                xs.extend((k..end).map(|i| Value::Int(r.at(i))));
                k = end;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `x |= y`: a dict `x` is updated in place by a dict `y`; everything else
/// is `x | y`.
pub fn inplace_or<'h>(heap: Heap<'h>, a: Value<'h>, b: Value<'h>) -> Result<Value<'h>> {
    match (a, b) {
        (Value::Dict(x), Value::Dict(y)) => {
            x.check_mutable("apply |= to")?;
            // Snapshot first: `d |= d` reads and writes the same dict.
            dict_add_all(heap.budget, x, &dict_entries(y))?;
            Ok(a)
        }
        _ => binary(heap, BinOp::BitOr, a, b),
    }
}

/// `needle in container`.
fn contains<'h>(heap: Heap<'h>, container: Value<'h>, needle: Value<'h>) -> Result<bool> {
    let budget = heap.budget;
    match container {
        Value::List(l) => {
            let mut i = 0;
            let mut cmp = Cmp::new(Some(budget));
            while let Some(x) = l.get(i) {
                if cmp.top_equal(x, needle)? {
                    return Ok(true);
                }
                i += 1;
            }
            Ok(false)
        }
        Value::Tuple(t) => {
            let mut cmp = Cmp::new(Some(budget));
            for &x in t.items {
                if cmp.top_equal(x, needle)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        // Like starlark-go, a failed lookup (an unhashable needle) reads as
        // absent; the deadline passing while a long key is hashed or
        // compared does not.
        Value::Dict(d) => match d.map.borrow().get(needle) {
            Ok(found) => Ok(found.is_some()),
            Err(e) if matches!(e.kind(), ErrorKind::Eval { .. }) => Ok(false),
            Err(e) => Err(e),
        },
        Value::Str(s) => match needle {
            Value::Str(n) => {
                Ok(n.text.is_empty() || crate::text::find(budget, s.text, n.text)?.is_some())
            }
            _ => Err(Error::msg(format!(
                "'in <string>' requires string as left operand, not {}",
                needle.type_name()
            ))),
        },
        Value::Bytes(b) => match needle {
            Value::Bytes(n) => Ok(find_bytes(b.bytes, n.bytes)),
            Value::Int(i) if (0..=255).contains(&i) => Ok(b.bytes.contains(&(i as u8))),
            Value::Int(_) | Value::BigInt(_) => Err(Error::msg(format!(
                "int in bytes: {} out of range (want value in unsigned 8-bit range)",
                int_text(needle, budget)?
            ))),
            _ => Err(Error::msg(format!(
                "'in bytes' requires bytes or int as left operand, not {}",
                needle.type_name()
            ))),
        },
        Value::Range(r) => {
            let x = match needle {
                Value::Int(i) => Some(i),
                Value::BigInt(_) => None,
                Value::Float(f) if f.is_finite() => {
                    // starlark-go truncates a float needle: 1.5 in range(3).
                    match float_to_int(heap, f)? {
                        Value::Int(i) => Some(i),
                        _ => None,
                    }
                }
                _ => {
                    return Err(Error::msg(format!(
                        "'in <range>' requires integer as left operand, not {}",
                        needle.type_name()
                    )))
                }
            };
            Ok(x.is_some_and(|x| range_contains(r, x)))
        }
        _ => Err(unknown_binary(BinOp::In, needle, container)),
    }
}

fn find_bytes(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

fn range_contains(r: &RangeObj, x: i64) -> bool {
    // starlark-go only finds needles in the signed 32-bit range.
    if i32::try_from(x).is_err() {
        return false;
    }
    let delta = x as i128 - r.start as i128;
    let step = r.step as i128;
    if step == 0 {
        return false;
    }
    let (q, rem) = (delta / step, delta % step);
    rem == 0 && 0 <= q && q < r.len() as i128
}

// ---------------------------------------------------------------------------
// Unary operators

/// `op x` for `-`, `+`, `~` and `not`.
pub fn unary<'h>(heap: Heap<'h>, op: UnaryOp, x: Value<'h>) -> Result<Value<'h>> {
    let unknown = || {
        Error::msg(format!(
            "unknown unary op: {} {}",
            op.as_str(),
            x.type_name()
        ))
    };
    match (op, x) {
        (UnaryOp::Not, _) => Ok(Value::Bool(!x.truth())),
        (UnaryOp::Plus, Value::Int(_) | Value::BigInt(_) | Value::Float(_)) => Ok(x),
        (UnaryOp::Neg, Value::Int(i)) => match i.checked_neg() {
            Some(z) => Ok(Value::Int(z)),
            None => heap.int(-BigInt::from(i)),
        },
        (UnaryOp::Neg, Value::BigInt(b)) => heap.int(-b.to_bigint()),
        (UnaryOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
        (UnaryOp::Invert, Value::Int(i)) => Ok(Value::Int(!i)),
        (UnaryOp::Invert, Value::BigInt(b)) => heap.int(!b.to_bigint()),
        _ => Err(unknown()),
    }
}

// ---------------------------------------------------------------------------
// Equality and comparison

fn type_order_error(op: BinOp, a: Value<'_>, b: Value<'_>) -> Error {
    operand_error(
        format!(
            "{} {} {} not implemented",
            a.type_name(),
            op.as_str(),
            b.type_name()
        ),
        a,
        b,
    )
}

/// starlark-go's total order of floats: NaN above +Inf and equal to itself.
fn float_cmp(x: f64, y: f64) -> Ordering {
    match x.partial_cmp(&y) {
        Some(o) => o,
        None if x.is_nan() && y.is_nan() => Ordering::Equal,
        None if x.is_nan() => Ordering::Greater,
        None => Ordering::Less,
    }
}

/// Exact comparison of an int with a float (NaN above every int).
fn int_float_cmp(i: Value<'_>, f: f64) -> Ordering {
    if f.is_nan() {
        return Ordering::Less;
    }
    if f.is_infinite() {
        return if f > 0.0 {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let t = f.trunc();
    let frac = f - t;
    let by_int = match i {
        Value::Int(x) => {
            if t >= 9_223_372_036_854_775_808.0 {
                Ordering::Less
            } else if t < -9_223_372_036_854_775_808.0 {
                Ordering::Greater
            } else {
                x.cmp(&(t as i64))
            }
        }
        _ => match (to_bigint(i), BigInt::from_f64(t)) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => Ordering::Equal,
        },
    };
    if by_int != Ordering::Equal {
        return by_int;
    }
    // Equal integer parts: the fraction decides.
    0.0f64.partial_cmp(&frac).unwrap_or(Ordering::Equal)
}

/// Three-way comparison of two numbers; `None` unless both are numbers.
fn num_cmp(a: Value<'_>, b: Value<'_>) -> Option<Ordering> {
    Some(match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(&y),
        (Value::Float(x), Value::Float(y)) => float_cmp(x, y),
        (Value::Int(_) | Value::BigInt(_), Value::Int(_) | Value::BigInt(_)) => {
            to_bigint(a)?.cmp(&to_bigint(b)?)
        }
        (Value::Int(_) | Value::BigInt(_), Value::Float(f)) => int_float_cmp(a, f),
        (Value::Float(f), Value::Int(_) | Value::BigInt(_)) => int_float_cmp(b, f).reverse(),
        _ => return None,
    })
}

fn range_equal(x: &RangeObj, y: &RangeObj) -> bool {
    let n = x.len();
    n == y.len() && (n == 0 || (x.start == y.start && (n == 1 || x.step == y.step)))
}

/// One comparison: the work done so far and, when known, the budget whose
/// deadline bounds it (the work is charged to it in small batches).
struct Cmp<'b> {
    budget: Option<&'b Budget>,
    /// Work units charged (or, without a budget, counted) so far.
    work: u64,
    /// Work units not yet charged.
    pending: u64,
}

impl<'b> Cmp<'b> {
    fn new(budget: Option<&'b Budget>) -> Cmp<'b> {
        Cmp {
            budget,
            work: 0,
            pending: 0,
        }
    }

    /// Counts one value visited.
    #[inline(always)]
    fn tick(&mut self) -> Result<()> {
        self.tick_n(1)
    }

    /// Counts `units` of work: an addition and a test, inlined into every
    /// comparison; the charge itself is out of line.
    #[inline(always)]
    fn tick_n(&mut self, units: u64) -> Result<()> {
        self.pending += units;
        if self.pending >= CMP_CHARGE_EVERY {
            return self.charge_pending();
        }
        Ok(())
    }

    /// Charges the work counted since the last charge.
    #[cold]
    #[inline(never)]
    fn charge_pending(&mut self) -> Result<()> {
        self.work += self.pending;
        match self.budget {
            Some(b) => b.charge_work(self.pending)?,
            None if self.work >= WORK_CAP => return Err(Error::limit(LimitKind::Time)),
            None => {}
        }
        self.pending = 0;
        Ok(())
    }

    /// starlark-go's `Equal`: strings compare without a depth check.
    fn top_equal<'h>(&mut self, a: Value<'h>, b: Value<'h>) -> Result<bool> {
        if let Value::Str(x) = a {
            return match b {
                Value::Str(y) => crate::text::eq(self.budget, x.text, y.text),
                _ => Ok(false),
            };
        }
        self.equal(a, b, COMPARE_DEPTH)
    }

    fn equal<'h>(&mut self, a: Value<'h>, b: Value<'h>, depth: u32) -> Result<bool> {
        if depth < 1 {
            return Err(Error::msg("comparison exceeded maximum recursion depth"));
        }
        self.tick()?;
        if let Some(o) = num_cmp(a, b) {
            return Ok(o == Ordering::Equal);
        }
        Ok(match (a, b) {
            (Value::None, Value::None) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Str(x), Value::Str(y)) => crate::text::eq(self.budget, x.text, y.text)?,
            (Value::Bytes(x), Value::Bytes(y)) => x.bytes == y.bytes,
            (Value::List(x), Value::List(y)) => {
                if x.len() != y.len() {
                    return Ok(false);
                }
                let mut i = 0;
                while let (Some(p), Some(q)) = (x.get(i), y.get(i)) {
                    if !self.equal(p, q, depth - 1)? {
                        return Ok(false);
                    }
                    i += 1;
                }
                x.len() == y.len()
            }
            (Value::Tuple(x), Value::Tuple(y)) => {
                if x.items.len() != y.items.len() {
                    return Ok(false);
                }
                for (&p, &q) in x.items.iter().zip(y.items) {
                    if !self.equal(p, q, depth - 1)? {
                        return Ok(false);
                    }
                }
                true
            }
            (Value::Dict(x), Value::Dict(y)) => {
                if x.len() != y.len() {
                    return Ok(false);
                }
                for (k, xv) in dict_entries(x) {
                    // A lookup (hash and probe) besides the values visited.
                    self.tick_n(ITEM_UNITS)?;
                    let found = y.map.borrow().get(k);
                    let yv = match found {
                        Ok(Some(yv)) => yv,
                        Ok(None) => return Ok(false),
                        Err(e) if matches!(e.kind(), ErrorKind::Eval { .. }) => return Ok(false),
                        Err(e) => return Err(e),
                    };
                    if !self.equal(xv, yv, depth - 1)? {
                        return Ok(false);
                    }
                }
                true
            }
            (Value::Range(x), Value::Range(y)) => range_equal(x, y),
            (Value::Function(x), Value::Function(y)) => std::ptr::eq(x, y),
            (Value::Builtin(x), Value::Builtin(y)) => std::ptr::eq(x, y),
            (Value::BoundMethod(x), Value::BoundMethod(y)) => std::ptr::eq(x, y),
            (Value::Module(x), Value::Module(y)) => std::ptr::eq(x, y),
            // Namespaces and capabilities are identified by their names, so
            // equality holds however the interpreter materializes them.
            (Value::Namespace(x), Value::Namespace(y)) => x.path == y.path,
            (Value::Capability(x), Value::Capability(y)) => x.name == y.name,
            (Value::Cell(x), Value::Cell(y)) => std::ptr::eq(x, y),
            (Value::Iter(x), Value::Iter(y)) => std::ptr::eq(x, y),
            _ => false,
        })
    }

    /// Three-way ordering for `op` (one of `< <= > >=`, used in messages).
    fn order<'h>(&mut self, op: BinOp, a: Value<'h>, b: Value<'h>, depth: u32) -> Result<Ordering> {
        if depth < 1 {
            return Err(Error::msg("comparison exceeded maximum recursion depth"));
        }
        self.tick()?;
        if let Some(o) = num_cmp(a, b) {
            return Ok(o);
        }
        match (a, b) {
            (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(&y)),
            (Value::Str(x), Value::Str(y)) => {
                if let Some(b) = self.budget {
                    b.charge_bytes(x.text.len().min(y.text.len()))?;
                }
                Ok(x.text.cmp(y.text))
            }
            (Value::Bytes(x), Value::Bytes(y)) => Ok(x.bytes.cmp(y.bytes)),
            (Value::List(x), Value::List(y)) => {
                let mut i = 0;
                while let (Some(p), Some(q)) = (x.get(i), y.get(i)) {
                    if !self.equal(p, q, depth - 1)? {
                        return self.order(op, p, q, depth - 1);
                    }
                    i += 1;
                }
                Ok(x.len().cmp(&y.len()))
            }
            (Value::Tuple(x), Value::Tuple(y)) => {
                for (&p, &q) in x.items.iter().zip(y.items) {
                    if !self.equal(p, q, depth - 1)? {
                        return self.order(op, p, q, depth - 1);
                    }
                }
                Ok(x.items.len().cmp(&y.items.len()))
            }
            _ => Err(type_order_error(op, a, b)),
        }
    }
}

/// Starlark equality (`==`). Without a budget at hand, the work of one
/// call is capped; see [`equals_in`], which every caller outside the unit
/// tests uses.
#[cfg(test)]
pub fn equals<'h>(a: Value<'h>, b: Value<'h>) -> Result<bool> {
    Cmp::new(None).top_equal(a, b)
}

/// Starlark equality, checking `budget`'s deadline as the work grows.
pub fn equals_in<'h>(budget: &Budget, a: Value<'h>, b: Value<'h>) -> Result<bool> {
    Cmp::new(Some(budget)).top_equal(a, b)
}

/// `a op b` for `== != < <= > >=`, without a budget (the unit tests').
#[cfg(test)]
pub fn compare<'h>(op: BinOp, a: Value<'h>, b: Value<'h>) -> Result<bool> {
    compare_with(&mut Cmp::new(None), op, a, b)
}

/// [`compare`], checking `budget`'s deadline as the work grows. The
/// interpreter should prefer this one.
pub fn compare_in<'h>(budget: &Budget, op: BinOp, a: Value<'h>, b: Value<'h>) -> Result<bool> {
    compare_with(&mut Cmp::new(Some(budget)), op, a, b)
}

fn compare_with<'h>(cmp: &mut Cmp<'_>, op: BinOp, a: Value<'h>, b: Value<'h>) -> Result<bool> {
    Ok(match op {
        BinOp::Eq => cmp.equal(a, b, COMPARE_DEPTH)?,
        BinOp::Ne => !cmp.equal(a, b, COMPARE_DEPTH)?,
        BinOp::Lt => cmp.order(op, a, b, COMPARE_DEPTH)? == Ordering::Less,
        BinOp::Le => cmp.order(op, a, b, COMPARE_DEPTH)? != Ordering::Greater,
        BinOp::Gt => cmp.order(op, a, b, COMPARE_DEPTH)? == Ordering::Greater,
        BinOp::Ge => cmp.order(op, a, b, COMPARE_DEPTH)? != Ordering::Less,
        _ => return Err(Error::msg(format!("unknown comparison {}", op.as_str()))),
    })
}

/// The order `sorted`, `min` and `max` use: starlark-go's `<` as a
/// three-way comparison (floats totally ordered, NaN last), with the
/// deadline of `budget` and the operator `op` named in type errors (`max`
/// reports `>`).
pub fn total_cmp_in<'h>(
    budget: &Budget,
    op: BinOp,
    a: Value<'h>,
    b: Value<'h>,
) -> Result<Ordering> {
    Cmp::new(Some(budget)).order(op, a, b, COMPARE_DEPTH)
}

// ---------------------------------------------------------------------------
// Indexing and slicing

/// `x[i]`.
pub fn index<'h>(heap: Heap<'h>, x: Value<'h>, i: Value<'h>) -> Result<Value<'h>> {
    let budget = heap.budget;
    match x {
        Value::Dict(d) => {
            let found = d.map.borrow().get(i)?;
            match found {
                Some(v) => Ok(v),
                None => {
                    let mut msg = String::from("key ");
                    format::write_repr(&mut msg, i, budget)?;
                    msg.push_str(" not in dict");
                    Err(Error::msg(msg))
                }
            }
        }
        Value::Str(s) => {
            let k = to_index(i, s.text.len(), "string", budget)?;
            // One byte, possibly of a multi-byte character: share the
            // arena bytes.
            heap.str_in_arena(&s.text[k..k + 1])
        }
        Value::Bytes(b) => {
            let k = to_index(i, b.bytes.len(), "bytes", budget)?;
            // starlark-go: an element of bytes is a one-byte bytes value.
            Ok(Value::Bytes(heap.alloc(BytesObj {
                bytes: &b.bytes[k..k + 1],
            })?))
        }
        Value::List(l) => {
            let k = to_index(i, l.len(), "list", budget)?;
            Ok(l.get(k).unwrap_or(Value::None))
        }
        Value::Tuple(t) => {
            let k = to_index(i, t.items.len(), "tuple", budget)?;
            Ok(t.items[k])
        }
        Value::Range(r) => {
            let n = usize::try_from(r.len()).unwrap_or(usize::MAX);
            let k = to_index(i, n, "range", budget)?;
            Ok(Value::Int(r.at(k as i64)))
        }
        _ => Err(Error::msg(format!(
            "unhandled index operation {}[{}]",
            x.type_name(),
            i.type_name()
        ))),
    }
}

/// `x[i] = v` for lists and dicts.
pub fn set_index<'h>(heap: Heap<'h>, x: Value<'h>, i: Value<'h>, v: Value<'h>) -> Result<()> {
    match x {
        Value::Dict(d) => {
            d.check_mutable("insert into")?;
            d.map.borrow_mut().insert(i, v)?;
            Ok(())
        }
        Value::List(l) => {
            let n = as_int32(i, heap.budget)?;
            let k = resolve_index(n, l.len(), "list")?;
            l.check_mutable("assign to element of")?;
            if let Some(slot) = l.items.borrow_mut().get_mut(k) {
                *slot = v;
            }
            Ok(())
        }
        _ => Err(Error::msg(format!(
            "{} value does not support item assignment",
            x.type_name()
        ))),
    }
}

/// A slice bound: `None` leaves `default`, a negative value counts from
/// the end.
fn slice_bound(v: Value<'_>, len: i64, default: i64, what: &str, budget: &Budget) -> Result<i64> {
    if matches!(v, Value::None) {
        return Ok(default);
    }
    let i = as_int32(v, budget).map_err(|e| e.prefixed(&format!("invalid {what} index: ")))?;
    Ok(if i < 0 { i + len } else { i })
}

/// The positions `start, start+step, ...` before `end`.
fn slice_positions(start: i64, end: i64, step: i64) -> impl Iterator<Item = usize> {
    let mut i = start;
    std::iter::from_fn(move || {
        let more = if step > 0 { i < end } else { i > end };
        if !more {
            return None;
        }
        let at = i as usize;
        i += step;
        Some(at)
    })
}

/// A bound of [`plain_slice`]: absent, or an int that [`as_int32`]
/// accepts.
#[inline(always)]
fn plain_bound(v: Value<'_>) -> Option<Option<i64>> {
    match v {
        Value::None => Some(None),
        Value::Int(i) if i32::try_from(i).is_ok() => Some(Some(i)),
        _ => None,
    }
}

/// The commonest slices, `s[a:b]` of a string or a list without a step and
/// with int bounds or none, with the bounds resolved as [`slice`]
/// resolves them but without its general dispatch. `None`: [`slice`]
/// decides.
#[inline(always)]
fn plain_slice<'h>(
    heap: Heap<'h>,
    x: Value<'h>,
    lo: Value<'h>,
    hi: Value<'h>,
    step: Value<'h>,
) -> Option<Result<Value<'h>>> {
    if !matches!(step, Value::None) {
        return None;
    }
    let (lo, hi) = (plain_bound(lo)?, plain_bound(hi)?);
    let range = |n: usize| {
        let n = n as i64;
        let at = |b: Option<i64>, default: i64| match b {
            None => default,
            Some(i) if i < 0 => (i + n).clamp(0, n),
            Some(i) => i.min(n),
        };
        let start = at(lo, 0);
        (start as usize, at(hi, n).max(start) as usize)
    };
    match x {
        Value::Str(s) => {
            let (a, b) = range(s.text.len());
            Some(heap.str_in_arena(&s.text[a..b]))
        }
        Value::List(l) => {
            let items = l.items.try_borrow().ok()?;
            let (a, b) = range(items.len());
            let run = &items[a..b];
            let copy = || {
                let mut v = heap.vec_with_capacity(run.len())?;
                heap.budget.in_blocks(run, |c| v.extend_from_slice(c))?;
                heap.list_from_vec(v)
            };
            Some(copy())
        }
        _ => None,
    }
}

/// `x[lo:hi:step]` (each `None` when absent) for strings, bytes, lists,
/// tuples and ranges, clamping the bounds as starlark-go does.
pub fn slice<'h>(
    heap: Heap<'h>,
    x: Value<'h>,
    lo: Value<'h>,
    hi: Value<'h>,
    step: Value<'h>,
) -> Result<Value<'h>> {
    if let Some(v) = plain_slice(heap, x, lo, hi, step) {
        return v;
    }
    let budget = heap.budget;
    let Some(n) = len(x).filter(|_| !matches!(x, Value::Dict(_))) else {
        return Err(Error::msg(format!(
            "invalid slice operand {}",
            x.type_name()
        )));
    };
    let n = n as i64;
    let step = if matches!(step, Value::None) {
        1
    } else {
        as_int32(step, budget).map_err(|e| e.prefixed("invalid slice step: "))?
    };
    if step == 0 {
        return Err(Error::msg("zero is not a valid slice step"));
    }
    let (start, end) = if step > 0 {
        let start = slice_bound(lo, n, 0, "start", budget)?.clamp(0, n);
        let end = slice_bound(hi, n, n, "end", budget)?.clamp(0, n);
        (start, end.max(start))
    } else {
        let start = slice_bound(lo, n, n - 1, "start", budget)?.min(n - 1);
        let end = slice_bound(hi, n, -1, "end", budget)?.max(-1);
        (start.max(end), end)
    };
    let count = if step > 0 {
        (end - start + step - 1) / step
    } else {
        (start - end + (-step) - 1) / (-step)
    } as usize;
    match x {
        Value::Str(s) => {
            let b = s.text;
            if step == 1 {
                return heap.str_in_arena(&b[start as usize..end as usize]);
            }
            let mut v = byte_vec(heap, count)?;
            for (k, i) in slice_positions(start, end, step).enumerate() {
                if k % crate::budget::WORK_CHECK_BYTES == 0 {
                    budget.charge_bytes(crate::budget::WORK_CHECK_BYTES)?;
                }
                v.push(b[i]);
            }
            heap.str_in_arena(v.into_bump_slice())
        }
        Value::Bytes(b) => {
            if step == 1 {
                let bytes = &b.bytes[start as usize..end as usize];
                return Ok(Value::Bytes(heap.alloc(BytesObj { bytes })?));
            }
            let mut v = byte_vec(heap, count)?;
            v.extend(slice_positions(start, end, step).map(|i| b.bytes[i]));
            bytes_from_vec(heap, v)
        }
        Value::List(l) => {
            let items = l.items.borrow();
            let mut v = heap.vec_with_capacity(count)?;
            copy_slice(budget, &mut v, &items, (start, end, step), count)?;
            drop(items);
            heap.list_from_vec(v)
        }
        Value::Tuple(t) => {
            if step == 1 {
                let items = &t.items[start as usize..end as usize];
                return Ok(Value::Tuple(heap.alloc(TupleObj { items })?));
            }
            let mut v = heap.vec_with_capacity(count)?;
            copy_slice(budget, &mut v, t.items, (start, end, step), count)?;
            tuple_from_vec(heap, v)
        }
        Value::Range(r) => {
            let at = |k: i64| (r.start as i128) + (r.step as i128) * (k as i128);
            let (a, z, s) = (at(start), at(end), (r.step as i128) * (step as i128));
            match (i64::try_from(a), i64::try_from(z), i64::try_from(s)) {
                (Ok(start), Ok(stop), Ok(step)) => {
                    Ok(Value::Range(heap.alloc(RangeObj { start, stop, step })?))
                }
                _ => Err(Error::msg("range slice out of int64 range")),
            }
        }
        _ => Err(Error::msg(format!(
            "invalid slice operand {}",
            x.type_name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Limits;
    use crate::hash::{hash, starlark_hash};
    use bumpalo::Bump;
    use proptest::prelude::*;
    use std::time::Instant;
    use BinOp::*;

    fn budget() -> Budget {
        Budget::new(Limits::default(), Instant::now(), None)
    }

    /// `repr` of a result, or the error's message (`LIMIT` for budgets).
    fn show(r: Result<Value<'_>>, b: &Budget) -> String {
        match r {
            Ok(v) => format::repr(v, b).unwrap_or_else(|_| "REPR?".into()),
            Err(e) => format!("ERR {}", e.message().unwrap_or("LIMIT")),
        }
    }

    struct T<'h> {
        heap: Heap<'h>,
    }

    impl<'h> T<'h> {
        fn s(&self, s: &str) -> Value<'h> {
            self.heap.str(s).unwrap()
        }
        fn b(&self, s: &[u8]) -> Value<'h> {
            self.heap.bytes(s).unwrap()
        }
        fn l(&self, v: &[Value<'h>]) -> Value<'h> {
            self.heap.list(v).unwrap()
        }
        fn t(&self, v: &[Value<'h>]) -> Value<'h> {
            self.heap.tuple(v).unwrap()
        }
        fn d(&self, kv: &[(Value<'h>, Value<'h>)]) -> Value<'h> {
            let d = self.heap.dict(kv.len()).unwrap();
            for &(k, v) in kv {
                d.map.borrow_mut().insert(k, v).unwrap();
            }
            Value::Dict(d)
        }
        fn r(&self, start: i64, stop: i64, step: i64) -> Value<'h> {
            Value::Range(self.heap.alloc(RangeObj { start, stop, step }).unwrap())
        }
        fn big(&self, s: &str) -> Value<'h> {
            self.heap.int(s.parse::<BigInt>().unwrap()).unwrap()
        }
        fn bin(&self, op: BinOp, a: Value<'h>, b: Value<'h>) -> String {
            show(binary(self.heap, op, a, b), self.heap.budget)
        }
        fn idx(&self, x: Value<'h>, i: Value<'h>) -> String {
            show(index(self.heap, x, i), self.heap.budget)
        }
        fn sl(&self, x: Value<'h>, lo: Value<'h>, hi: Value<'h>, st: Value<'h>) -> String {
            show(slice(self.heap, x, lo, hi, st), self.heap.budget)
        }
    }

    macro_rules! with_t {
        ($t:ident, $b:ident, $body:block) => {{
            let bump = Bump::new();
            let $b = budget();
            let $t = T {
                heap: Heap::new(&bump, &$b),
            };
            $body
        }};
    }

    #[allow(non_snake_case)]
    fn I<'h>(i: i64) -> Value<'h> {
        Value::Int(i)
    }

    #[allow(non_snake_case)]
    fn F<'h>(f: f64) -> Value<'h> {
        Value::Float(f)
    }

    #[test]
    fn int_arithmetic_and_overflow() {
        with_t!(t, b, {
            assert_eq!(t.bin(Add, I(i64::MAX), I(1)), "9223372036854775808");
            assert_eq!(t.bin(Sub, I(i64::MIN), I(1)), "-9223372036854775809");
            assert_eq!(
                t.bin(Mul, I(3037000500), I(3037000500)),
                "9223372037000250000"
            );
            assert_eq!(t.bin(FloorDiv, I(i64::MIN), I(-1)), "9223372036854775808");
            assert_eq!(t.bin(Mod, I(i64::MIN), I(-1)), "0");
            assert_eq!(t.bin(FloorDiv, I(-7), I(2)), "-4");
            assert_eq!(t.bin(Mod, I(-7), I(2)), "1");
            assert_eq!(t.bin(Mod, I(7), I(-2)), "-1");
            assert_eq!(t.bin(FloorDiv, I(7), I(-2)), "-4");
            let big = t.big("18446744073709551616");
            assert_eq!(t.bin(FloorDiv, big, I(-3)), "-6148914691236517206");
            assert_eq!(t.bin(Mod, big, I(-7)), "-5");
            let nbig = t.big("-18446744073709551616");
            assert_eq!(t.bin(Mod, nbig, I(7)), "5");
            assert_eq!(t.bin(BitAnd, I(5), I(3)), "1");
            assert_eq!(t.bin(BitOr, I(-5), I(3)), "-5");
            assert_eq!(t.bin(BitXor, I(-5), I(3)), "-8");
            let b70 = t.big("1180591620717411303424");
            assert_eq!(t.bin(BitAnd, b70, I(-1)), "1180591620717411303424");
            let nb70 = t.big("-1180591620717411303424");
            assert_eq!(t.bin(Shr, nb70, I(3)), "-147573952589676412928");
            assert_eq!(t.bin(Shr, I(-1), I(511)), "-1");
            assert_eq!(t.bin(Shl, I(1), I(70)), "1180591620717411303424");
            assert_eq!(t.bin(Shl, I(1), I(512)), "ERR shift count too large: 512");
            assert_eq!(t.bin(Shl, I(1), I(-1)), "ERR negative shift count: -1");
            assert_eq!(
                t.bin(Shl, I(1), I(1 << 40)),
                "ERR 1099511627776 out of range"
            );
            assert_eq!(
                t.bin(Shr, I(1), I(1 << 40)),
                "ERR 1099511627776 out of range"
            );
            assert_eq!(t.bin(Shl, I(1), t.s("a")), "ERR got string, want int");
            assert_eq!(
                t.bin(Shl, F(1.0), I(1)),
                "ERR unknown binary op: float << int"
            );
            assert_eq!(t.bin(FloorDiv, I(1), I(0)), "ERR floored division by zero");
            assert_eq!(t.bin(Mod, I(1), I(0)), "ERR integer modulo by zero");
            assert_eq!(t.bin(Mod, big, I(0)), "ERR integer modulo by zero");
            assert_eq!(
                t.bin(Add, I(1), t.s("a")),
                "ERR unknown binary op: int + string"
            );
            assert_eq!(
                t.bin(Add, Value::Bool(true), I(1)),
                "ERR unknown binary op: bool + int"
            );
            assert_eq!(
                t.bin(BitAnd, I(1), F(2.0)),
                "ERR unknown binary op: int & float"
            );
            let _ = b;
        })
    }

    #[test]
    fn float_arithmetic() {
        with_t!(t, b, {
            assert_eq!(t.bin(Div, I(1), I(3)), "0.3333333333333333");
            assert_eq!(t.bin(Div, I(10), I(4)), "2.5");
            assert_eq!(
                t.bin(Div, I(1), I(0)),
                "ERR floating-point division by zero"
            );
            assert_eq!(
                t.bin(Mod, F(1.0), I(0)),
                "ERR floating-point modulo by zero"
            );
            assert_eq!(
                t.bin(Mod, I(1), F(0.0)),
                "ERR floating-point modulo by zero"
            );
            assert_eq!(
                t.bin(FloorDiv, I(5), F(0.0)),
                "ERR floored division by zero"
            );
            assert_eq!(t.bin(FloorDiv, F(-7.0), I(2)), "-4.0");
            assert_eq!(t.bin(Mod, F(-7.0), I(2)), "1.0");
            assert_eq!(t.bin(Mod, F(7.0), I(-2)), "-1.0");
            assert_eq!(t.bin(Mod, F(-0.0), I(2)), "-0.0");
            assert_eq!(t.bin(Mod, I(5), F(-0.5)), "0.0");
            assert_eq!(t.bin(Mod, I(-5), F(3.0)), "1.0");
            assert_eq!(t.bin(Mod, F(5.5), I(-2)), "-0.5");
            assert_eq!(t.bin(FloorDiv, F(-1.5), I(1)), "-2.0");
            assert_eq!(t.bin(FloorDiv, F(7.5), I(2)), "3.0");
            assert_eq!(t.bin(Mul, F(1e308), I(10)), "+inf");
            let huge = t.heap.int(BigInt::from(1) << 1024).unwrap();
            let msg = "ERR int too large to convert to float";
            assert_eq!(t.bin(Mul, huge, F(1.0)), msg);
            assert_eq!(t.bin(Add, F(0.5), huge), msg);
            assert_eq!(t.bin(Div, huge, I(1)), msg);
            assert_eq!(t.bin(Div, F(1.0), huge), msg);
            let b1023 = t.heap.int(BigInt::from(1) << 1023).unwrap();
            assert_eq!(t.bin(Mul, b1023, F(1.0)), "8.98846567431158e+307");
            let _ = b;
        })
    }

    #[test]
    fn sequences_strings_and_dicts() {
        with_t!(t, b, {
            assert_eq!(t.bin(Add, t.s("ab"), t.s("cd")), "\"abcd\"");
            // Only the compiler joins bytes literals; at run time `+` fails.
            assert_eq!(
                t.bin(Add, t.b(b"ab"), t.b(b"cd")),
                "ERR unknown binary op: bytes + bytes"
            );
            assert_eq!(t.bin(Mul, t.b(b"ab"), I(2)), "b\"abab\"");
            assert_eq!(t.bin(Mul, I(2), t.s("ab")), "\"abab\"");
            assert_eq!(t.bin(Mul, t.s("x"), I(-1)), "\"\"");
            assert_eq!(t.bin(Mul, t.s(""), I(1 << 40)), "\"\"");
            // Beyond the heap: a resource limit, whatever starlark-go says.
            assert_eq!(t.bin(Mul, t.s("x"), I(1 << 40)), "ERR LIMIT");
            assert_eq!(t.bin(Mul, t.s("x"), I(1 << 30)), "ERR LIMIT");
            let l12 = t.l(&[I(1), I(2)]);
            assert_eq!(t.bin(Mul, l12, I(1 << 29)), "ERR LIMIT");
            // Within the repeat limit but beyond the heap: refused before allocating.
            assert_eq!(t.bin(Mul, t.s("xxxxxxxxxx"), I(100_000_000)), "ERR LIMIT");
            assert!(b.heap_bytes() < 1 << 20);
            assert_eq!(t.bin(Mul, l12, I(2)), "[1, 2, 1, 2]");
            assert_eq!(t.bin(Mul, I(2), t.t(&[I(1)])), "(1, 1)");
            assert_eq!(t.bin(Add, l12, t.l(&[I(3)])), "[1, 2, 3]");
            assert_eq!(t.bin(Add, t.t(&[I(1)]), t.t(&[I(2)])), "(1, 2)");
            assert_eq!(
                t.bin(Add, l12, t.t(&[])),
                "ERR unknown binary op: list + tuple"
            );
            let (ka, kb) = (t.s("a"), t.s("b"));
            let d1 = t.d(&[(ka, I(1))]);
            let d2 = t.d(&[(ka, I(2)), (kb, I(3))]);
            assert_eq!(t.bin(BitOr, d1, d2), "{\"a\": 2, \"b\": 3}");
            assert_eq!(t.bin(BitOr, d1, l12), "ERR unknown binary op: dict | list");
            assert_eq!(show(Ok(d1), &b), "{\"a\": 1}");
            assert_eq!(t.bin(Mod, t.s("%d-%s"), t.t(&[I(1), ka])), "\"1-a\"");
        })
    }

    #[test]
    fn membership() {
        with_t!(t, b, {
            let abc = t.s("abc");
            assert_eq!(t.bin(In, t.s("b"), abc), "True");
            assert_eq!(t.bin(NotIn, t.s("b"), abc), "False");
            assert_eq!(
                t.bin(In, I(1), abc),
                "ERR 'in <string>' requires string as left operand, not int"
            );
            let bs = t.b(b"abc");
            assert_eq!(t.bin(In, I(97), bs), "True");
            assert_eq!(t.bin(In, I(1), bs), "False");
            assert_eq!(t.bin(In, t.b(b"bc"), bs), "True");
            assert_eq!(
                t.bin(In, I(256), bs),
                "ERR int in bytes: 256 out of range (want value in unsigned 8-bit range)"
            );
            assert_eq!(
                t.bin(In, t.s("a"), bs),
                "ERR 'in bytes' requires bytes or int as left operand, not string"
            );
            let l1 = t.l(&[I(1)]);
            let d = t.d(&[(I(1), I(2))]);
            assert_eq!(t.bin(In, l1, t.d(&[])), "False");
            assert_eq!(t.bin(In, l1, d), "False");
            assert_eq!(t.bin(In, F(1.0), d), "True");
            assert_eq!(t.bin(In, F(1.0), t.l(&[I(0), I(1)])), "True");
            assert_eq!(t.bin(In, I(1), t.t(&[F(1.0)])), "True");
            let r3 = t.r(0, 3, 1);
            assert_eq!(t.bin(In, F(1.5), r3), "True");
            assert_eq!(t.bin(In, I(3), r3), "False");
            assert_eq!(t.bin(In, I(1 << 40), t.r(0, 1 << 41, 1)), "False");
            assert_eq!(t.bin(In, I(6), t.r(0, 10, 3)), "True");
            assert_eq!(t.bin(In, I(7), t.r(0, 10, 3)), "False");
            assert_eq!(t.bin(In, I(8), t.r(10, 0, -2)), "True");
            assert_eq!(
                t.bin(In, t.s("a"), r3),
                "ERR 'in <range>' requires integer as left operand, not string"
            );
            assert_eq!(t.bin(In, I(1), I(1)), "ERR unknown binary op: int in int");
            let _ = b;
        })
    }

    #[test]
    fn equality_and_ordering() {
        with_t!(t, b, {
            let nan = F(f64::NAN);
            assert!(compare(Eq, nan, nan).unwrap());
            assert!(compare(Eq, t.l(&[nan]), t.l(&[nan])).unwrap());
            assert!(!compare(Lt, nan, F(1.0)).unwrap());
            assert!(compare(Lt, F(1.0), nan).unwrap());
            assert!(compare(Gt, nan, F(f64::INFINITY)).unwrap());
            assert!(compare(Gt, nan, t.big("1180591620717411303424")).unwrap());
            assert!(equals(I(1), F(1.0)).unwrap());
            let b70 = t.big("1180591620717411303424");
            assert!(equals(b70, F(1180591620717411303424.0)).unwrap());
            let b70p1 = t.big("1180591620717411303425");
            assert!(!equals(b70p1, F(1180591620717411303424.0)).unwrap());
            assert!(compare(Lt, I(i64::MAX), F(9223372036854775808.0)).unwrap());
            assert!(compare(Lt, I(1), F(1.5)).unwrap());
            assert!(!compare(Le, F(1.5), I(1)).unwrap());
            assert!(compare(Lt, t.big("-1180591620717411303424"), F(1.0)).unwrap());
            assert!(!equals(I(1), Value::Bool(true)).unwrap());
            assert!(!equals(t.s("a"), t.b(b"a")).unwrap());
            assert!(equals(Value::None, Value::None).unwrap());
            assert!(!equals(t.t(&[I(1), I(2)]), t.l(&[I(1), I(2)])).unwrap());
            assert!(compare(Lt, t.t(&[I(1), I(2)]), t.t(&[I(1), I(3)])).unwrap());
            assert!(compare(Lt, t.l(&[I(1), I(2)]), t.l(&[I(1), I(2), I(0)])).unwrap());
            assert!(!compare(Lt, Value::Bool(true), Value::Bool(false)).unwrap());
            assert!(compare(Lt, t.s("ab"), t.s("b")).unwrap());
            assert!(compare(Lt, t.s("Z"), t.s("a")).unwrap());
            let (ka, kb) = (t.s("a"), t.s("b"));
            assert!(equals(
                t.d(&[(ka, I(1)), (kb, I(2))]),
                t.d(&[(kb, I(2)), (ka, F(1.0))])
            )
            .unwrap());
            assert!(!equals(t.d(&[(ka, I(1))]), t.d(&[(kb, I(1))])).unwrap());
            assert!(equals(t.r(0, 10, 2), t.r(0, 9, 2)).unwrap());
            assert!(equals(t.r(0, 0, 1), t.r(5, 2, 1)).unwrap());
            assert!(equals(t.r(1, 2, 5), t.r(1, 2, 3)).unwrap());
            assert!(!equals(t.r(0, 3, 1), t.r(0, 4, 1)).unwrap());
            let err = |r: Result<bool>| r.err().and_then(|e| e.message().map(str::to_string));
            assert_eq!(
                err(compare(Lt, t.l(&[]), t.d(&[]))).as_deref(),
                Some("list < dict not implemented")
            );
            assert_eq!(
                err(compare(Lt, I(1), ka)).as_deref(),
                Some("int < string not implemented")
            );
            assert_eq!(
                err(compare(Ge, t.d(&[]), t.d(&[]))).as_deref(),
                Some("dict >= dict not implemented")
            );
            assert_eq!(
                err(compare(Lt, t.r(0, 1, 1), t.r(0, 1, 1))).as_deref(),
                Some("range < range not implemented")
            );
            assert_eq!(
                err(compare(Lt, Value::None, Value::None)).as_deref(),
                Some("NoneType < NoneType not implemented")
            );
            assert_eq!(
                err(compare(Lt, t.l(&[I(1)]), t.l(&[ka]))).as_deref(),
                Some("int < string not implemented")
            );
            assert_eq!(
                total_cmp_in(&b, Gt, ka, I(1))
                    .err()
                    .and_then(|e| e.message().map(str::to_string))
                    .as_deref(),
                Some("string > int not implemented")
            );
            // sorted([3, nan, 1.0, inf]) == [1.0, 3, +inf, nan]
            let mut v = [I(3), nan, F(1.0), F(f64::INFINITY)];
            v.sort_by(|x, y| total_cmp_in(&budget(), Lt, *x, *y).unwrap());
            assert_eq!(show(t.heap.list(&v), &b), "[1.0, 3, +inf, nan]");
        })
    }

    #[test]
    fn comparison_depth_is_starlark_gos() {
        with_t!(t, b, {
            let deep = |n: usize| {
                let mut v = I(1);
                for _ in 0..n {
                    v = t.l(&[v]);
                }
                v
            };
            assert!(equals(deep(9), deep(9)).unwrap());
            let msg = "comparison exceeded maximum recursion depth";
            let e = equals(deep(10), deep(10)).unwrap_err();
            assert_eq!(e.message(), Some(msg));
            assert!(compare(Lt, deep(10), deep(10)).is_err());
            // a = [1]; a.append(a); a == a
            let a = t.l(&[I(1)]);
            if let Value::List(l) = a {
                l.items.borrow_mut().push(a);
            }
            assert_eq!(equals(a, a).unwrap_err().message(), Some(msg));
            // 100,000 levels fail quickly instead of overflowing the stack.
            assert!(equals(deep(100_000), deep(100_000)).is_err());
            let _ = b;
        })
    }

    #[test]
    fn shared_structures_are_bounded() {
        with_t!(t, b, {
            // x = (1,)*1000; y = (x,)*1000; z = (y,)*1000: 10^9 leaves.
            let x = t.bin(Mul, t.t(&[I(1)]), I(1000));
            assert!(x.starts_with("(1, 1"));
            let x = binary(t.heap, Mul, t.t(&[I(1)]), I(1000)).unwrap();
            let y = binary(t.heap, Mul, t.t(&[x]), I(1000)).unwrap();
            let z = binary(t.heap, Mul, t.t(&[y]), I(1000)).unwrap();
            let z2 = binary(t.heap, Mul, t.t(&[y]), I(1000)).unwrap();
            assert!(hash(z).is_err());
            assert!(equals(z, z2).is_err());
            let _ = b;
        })
    }

    #[test]
    fn hashing() {
        with_t!(t, b, {
            assert_eq!(hash(I(1)).unwrap(), hash(F(1.0)).unwrap());
            assert_eq!(hash(I(-3)).unwrap(), hash(F(-3.0)).unwrap());
            let b70 = t.big("1180591620717411303424");
            assert_eq!(
                hash(b70).unwrap(),
                hash(F(1180591620717411303424.0)).unwrap()
            );
            assert_eq!(hash(F(f64::NAN)).unwrap(), hash(F(f64::NAN)).unwrap());
            assert_eq!(hash(t.s("abc")).unwrap(), hash(t.s("abc")).unwrap());
            let t1 = t.t(&[I(1), t.s("a"), t.t(&[F(2.0)])]);
            let t2 = t.t(&[F(1.0), t.s("a"), t.t(&[I(2)])]);
            assert_eq!(hash(t1).unwrap(), hash(t2).unwrap());
            let msg = |v| hash(v).unwrap_err().message().map(str::to_string);
            assert_eq!(msg(t.l(&[])).as_deref(), Some("unhashable type: list"));
            assert_eq!(msg(t.d(&[])).as_deref(), Some("unhashable type: dict"));
            assert_eq!(msg(t.r(0, 1, 1)).as_deref(), Some("unhashable: range"));
            assert_eq!(
                msg(t.t(&[I(1), t.l(&[])])).as_deref(),
                Some("unhashable type: list")
            );
            // A dict keyed by 1 finds 1.0.
            let d = t.d(&[(I(1), t.s("one"))]);
            assert_eq!(t.idx(d, F(1.0)), "\"one\"");
            // hash() builtin, values from starlark-ref.
            assert_eq!(starlark_hash(t.s("abc")).unwrap(), 96354);
            assert_eq!(starlark_hash(t.s("😀")).unwrap(), 128512);
            assert_eq!(starlark_hash(t.s("é")).unwrap(), 233);
            assert_eq!(starlark_hash(t.b(b"abc")).unwrap(), 440920331);
            assert_eq!(
                starlark_hash(I(1)).unwrap_err().message(),
                Some("hash: got int, want string or bytes")
            );
            let _ = b;
        })
    }

    #[test]
    fn indexing() {
        with_t!(t, b, {
            let l12 = t.l(&[I(1), I(2)]);
            assert_eq!(t.idx(l12, I(-1)), "2");
            assert_eq!(t.idx(l12, I(5)), "ERR list index 5 out of range [-2:1]");
            assert_eq!(t.idx(l12, I(-3)), "ERR list index -3 out of range [-2:1]");
            assert_eq!(
                t.idx(t.l(&[]), I(0)),
                "ERR index 0 out of range: empty list"
            );
            assert_eq!(t.idx(t.s("abc"), I(1)), "\"b\"");
            assert_eq!(
                t.idx(t.s("abc"), I(5)),
                "ERR string index 5 out of range [-3:2]"
            );
            assert_eq!(
                t.idx(t.s(""), I(0)),
                "ERR index 0 out of range: empty string"
            );
            assert_eq!(t.idx(l12, t.s("a")), "ERR list index: got string, want int");
            assert_eq!(
                t.idx(l12, I(1 << 40)),
                "ERR list index: 1099511627776 out of range"
            );
            assert_eq!(t.idx(l12, F(1.0)), "ERR list index: got float, want int");
            assert_eq!(t.idx(t.b(b"abc"), I(1)), "b\"b\"");
            assert_eq!(
                t.idx(t.b(b"ab"), I(2)),
                "ERR bytes index 2 out of range [-2:1]"
            );
            assert_eq!(
                t.idx(t.t(&[I(1), I(2)]), I(2)),
                "ERR tuple index 2 out of range [-2:1]"
            );
            assert_eq!(
                t.idx(t.r(0, 3, 1), I(3)),
                "ERR range index 3 out of range [-3:2]"
            );
            assert_eq!(t.idx(t.r(0, 10, 3), I(-1)), "9");
            let d = t.d(&[]);
            assert_eq!(t.idx(d, t.s("x")), "ERR key \"x\" not in dict");
            assert_eq!(t.idx(d, I(1)), "ERR key 1 not in dict");
            assert_eq!(t.idx(d, F(1.5)), "ERR key 1.5 not in dict");
            assert_eq!(
                t.idx(d, t.t(&[I(1), t.s("a")])),
                "ERR key (1, \"a\") not in dict"
            );
            assert_eq!(t.idx(d, t.l(&[I(1)])), "ERR unhashable type: list");
            assert_eq!(t.idx(I(1), I(0)), "ERR unhandled index operation int[int]");
            assert_eq!(
                t.idx(Value::None, I(0)),
                "ERR unhandled index operation NoneType[int]"
            );
            // A cut through a multi-byte character is its raw byte.
            assert_eq!(t.idx(t.s("é"), I(0)), "\"\\xc3\"");
            assert_eq!(t.idx(t.s("é"), I(-1)), "\"\\xa9\"");
            let _ = b;
        })
    }

    #[test]
    fn item_assignment() {
        with_t!(t, b, {
            let l = t.l(&[I(1), I(2), I(3)]);
            set_index(t.heap, l, I(-1), I(9)).unwrap();
            assert_eq!(show(Ok(l), &b), "[1, 2, 9]");
            let err = |r: Result<()>| r.unwrap_err().message().unwrap_or("LIMIT").to_string();
            assert_eq!(
                err(set_index(t.heap, l, I(5), I(0))),
                "list index 5 out of range [-3:2]"
            );
            assert_eq!(
                err(set_index(t.heap, l, t.s("a"), I(0))),
                "got string, want int"
            );
            assert_eq!(
                err(set_index(t.heap, l, I(1 << 40), I(0))),
                "1099511627776 out of range"
            );
            assert_eq!(
                err(set_index(t.heap, t.t(&[I(1)]), I(0), I(0))),
                "tuple value does not support item assignment"
            );
            assert_eq!(
                err(set_index(t.heap, t.s("ab"), I(0), I(0))),
                "string value does not support item assignment"
            );
            let d = t.d(&[]);
            set_index(t.heap, d, t.s("k"), I(1)).unwrap();
            assert_eq!(show(Ok(d), &b), "{\"k\": 1}");
            assert_eq!(
                err(set_index(t.heap, d, t.l(&[]), I(0))),
                "unhashable type: list"
            );
            if let (Value::List(lo), Value::Dict(dob)) = (l, d) {
                lo.frozen.set(true);
                dob.frozen.set(true);
            }
            assert_eq!(
                err(set_index(t.heap, l, I(0), I(0))),
                "cannot assign to element of frozen list"
            );
            assert_eq!(
                err(set_index(t.heap, d, I(0), I(0))),
                "cannot insert into frozen hash table"
            );
            let it = t.l(&[I(1)]);
            if let Value::List(lo) = it {
                lo.iterating.set(1);
            }
            assert_eq!(
                err(set_index(t.heap, it, I(0), I(0))),
                "cannot assign to element of list during iteration"
            );
        })
    }

    #[test]
    fn slicing() {
        with_t!(t, b, {
            let s = t.s("abcdef");
            assert_eq!(t.sl(s, Value::None, Value::None, I(-2)), "\"fdb\"");
            assert_eq!(t.sl(s, I(4), I(1), I(-1)), "\"edc\"");
            assert_eq!(t.sl(s, I(-100), I(100), Value::None), "\"abcdef\"");
            assert_eq!(t.sl(s, I(100), I(-100), I(-1)), "\"fedcba\"");
            assert_eq!(t.sl(s, I(4), I(1), Value::None), "\"\"");
            assert_eq!(
                t.sl(s, Value::None, Value::None, I(0)),
                "ERR zero is not a valid slice step"
            );
            assert_eq!(
                t.sl(s, F(1.0), Value::None, Value::None),
                "ERR invalid start index: got float, want int"
            );
            assert_eq!(
                t.sl(s, Value::None, t.s("a"), Value::None),
                "ERR invalid end index: got string, want int"
            );
            assert_eq!(
                t.sl(s, Value::None, Value::None, t.s("a")),
                "ERR invalid slice step: got string, want int"
            );
            assert_eq!(
                t.sl(s, I(1 << 40), Value::None, Value::None),
                "ERR invalid start index: 1099511627776 out of range"
            );
            assert_eq!(t.sl(t.r(0, 10, 1), I(2), I(8), I(3)), "range(2, 8, 3)");
            assert_eq!(
                t.sl(t.r(0, 10, 1), Value::None, Value::None, I(-1)),
                "range(9, -1, -1)"
            );
            assert_eq!(
                t.sl(t.r(0, 10, 3), I(1), Value::None, Value::None),
                "range(3, 12, 3)"
            );
            assert_eq!(
                t.sl(t.t(&[I(1), I(2), I(3)]), Value::None, Value::None, I(-1)),
                "(3, 2, 1)"
            );
            assert_eq!(
                t.sl(t.l(&[I(1), I(2), I(3)]), I(1), Value::None, Value::None),
                "[2, 3]"
            );
            assert_eq!(
                t.sl(t.l(&[I(1), I(2), I(3)]), I(-2), I(-1), Value::None),
                "[2]"
            );
            assert_eq!(
                t.sl(t.b(b"abc"), Value::None, Value::None, I(-1)),
                "b\"cba\""
            );
            assert_eq!(
                t.sl(I(1), Value::None, Value::None, Value::None),
                "ERR invalid slice operand int"
            );
            assert_eq!(
                t.sl(t.d(&[]), Value::None, Value::None, Value::None),
                "ERR invalid slice operand dict"
            );
            assert_eq!(t.sl(t.s("héllo"), I(1), I(3), Value::None), "\"é\"");
            let _ = b;
        })
    }

    #[test]
    fn unary_operators() {
        with_t!(t, b, {
            let un = |op, x| show(unary(t.heap, op, x), &b);
            assert_eq!(un(UnaryOp::Neg, I(i64::MIN)), "9223372036854775808");
            assert_eq!(
                un(UnaryOp::Neg, t.big("9223372036854775808")),
                "-9223372036854775808"
            );
            assert_eq!(un(UnaryOp::Invert, I(5)), "-6");
            assert_eq!(
                un(UnaryOp::Invert, t.big("1180591620717411303424")),
                "-1180591620717411303425"
            );
            assert_eq!(un(UnaryOp::Neg, F(0.0)), "-0.0");
            assert_eq!(un(UnaryOp::Plus, F(1.5)), "1.5");
            assert_eq!(un(UnaryOp::Not, t.l(&[])), "True");
            assert_eq!(un(UnaryOp::Neg, t.s("a")), "ERR unknown unary op: - string");
            assert_eq!(
                un(UnaryOp::Plus, Value::Bool(true)),
                "ERR unknown unary op: + bool"
            );
            assert_eq!(un(UnaryOp::Invert, F(1.0)), "ERR unknown unary op: ~ float");
        })
    }

    #[test]
    fn augmented_assignment() {
        with_t!(t, b, {
            let x = t.l(&[I(1)]);
            let (k, r) = (t.s("k"), t.r(0, 2, 1));
            let y = inplace_add(t.heap, x, t.t(&[I(2), I(3)])).unwrap();
            inplace_add(t.heap, x, t.d(&[(k, I(1))])).unwrap();
            inplace_add(t.heap, x, r).unwrap();
            inplace_add(t.heap, x, x).unwrap();
            assert!(matches!((x, y), (Value::List(p), Value::List(q)) if std::ptr::eq(p, q)));
            assert_eq!(
                show(Ok(x), &b),
                "[1, 2, 3, \"k\", 0, 1, 1, 2, 3, \"k\", 0, 1]"
            );
            assert_eq!(
                show(inplace_add(t.heap, x, t.s("ab")), &b),
                "ERR unknown binary op: list + string"
            );
            assert_eq!(show(inplace_add(t.heap, I(1), I(2)), &b), "3");
            if let Value::List(lo) = x {
                lo.frozen.set(true);
            }
            assert_eq!(
                show(inplace_add(t.heap, x, t.l(&[])), &b),
                "ERR cannot apply += to frozen list"
            );
            let d = t.d(&[(k, I(1))]);
            let e = inplace_or(t.heap, d, t.d(&[(t.s("b"), I(2))])).unwrap();
            assert_eq!(show(Ok(d), &b), "{\"k\": 1, \"b\": 2}");
            assert!(matches!((d, e), (Value::Dict(p), Value::Dict(q)) if std::ptr::eq(p, q)));
            inplace_or(t.heap, d, d).unwrap();
            if let Value::Dict(dob) = d {
                dob.frozen.set(true);
            }
            assert_eq!(
                show(inplace_or(t.heap, d, t.d(&[])), &b),
                "ERR cannot apply |= to frozen hash table"
            );
        })
    }

    #[test]
    fn big_work_is_weighed_before_it_runs() {
        let bump = Bump::new();
        let b = Budget::new(
            Limits {
                max_heap_bytes: 1 << 20,
                ..Limits::default()
            },
            Instant::now(),
            None,
        );
        let heap = Heap::new(&bump, &b);
        // Squaring a 4-Mbit int needs 1 MiB: refused before multiplying.
        let x = heap.int(BigInt::from(1) << 4_000_000).unwrap();
        let before = b.heap_bytes();
        assert!(binary(heap, Mul, x, x).is_err());
        assert_eq!(b.heap_bytes(), before);
        assert!(len(x).is_none());
    }

    fn floor_div(a: &BigInt, b: &BigInt) -> BigInt {
        Integer::div_floor(a, b)
    }

    fn to_big(v: Value<'_>) -> BigInt {
        to_bigint(v).unwrap()
    }

    proptest! {
        #[test]
        fn int_ops_match_big_arithmetic(
            a in prop_oneof![any::<i64>(), any::<i32>().prop_map(i64::from), Just(i64::MIN), Just(i64::MAX), Just(-1i64)],
            b in prop_oneof![any::<i64>(), any::<i32>().prop_map(i64::from), Just(i64::MIN), Just(-1i64), Just(0i64)],
            hi in any::<i64>(),
            big_a in any::<bool>(),
            sh in 0i64..200,
        ) {
            let bump = Bump::new();
            let bud = budget();
            let heap = Heap::new(&bump, &bud);
            // Optionally widen `a` to an i128-sized operand.
            let wa = if big_a { (BigInt::from(hi) << 64) + BigInt::from(a as u64) } else { BigInt::from(a) };
            let va = heap.int(wa.clone()).unwrap();
            let vb = Value::Int(b);
            let wb = BigInt::from(b);
            let check = |op: BinOp, want: Option<BigInt>| {
                let got = binary(heap, op, va, vb);
                match want {
                    Some(w) => prop_assert_eq!(to_big(got.unwrap()), w),
                    None => prop_assert!(got.is_err()),
                }
                Ok(())
            };
            check(Add, Some(&wa + &wb))?;
            check(Sub, Some(&wa - &wb))?;
            check(Mul, Some(&wa * &wb))?;
            check(BitAnd, Some(&wa & &wb))?;
            check(BitOr, Some(&wa | &wb))?;
            check(BitXor, Some(&wa ^ &wb))?;
            if b == 0 {
                check(FloorDiv, None)?;
                check(Mod, None)?;
            } else {
                let q = floor_div(&wa, &wb);
                let r = &wa - &q * &wb;
                // Floored: the remainder takes the divisor's sign.
                prop_assert!(r.is_zero() || (r < BigInt::zero()) == (b < 0));
                check(FloorDiv, Some(q))?;
                check(Mod, Some(r))?;
            }
            let shl = to_big(binary(heap, Shl, va, Value::Int(sh)).unwrap());
            prop_assert_eq!(shl, &wa << (sh as usize));
            let shr = to_big(binary(heap, Shr, va, Value::Int(sh)).unwrap());
            prop_assert_eq!(shr, floor_div(&wa, &(BigInt::from(1) << (sh as usize))));
            // The small representation is used whenever the value fits.
            let sum = binary(heap, Add, va, vb).unwrap();
            prop_assert_eq!(matches!(sum, Value::Int(_)), (&wa + &wb).to_i64().is_some());
        }

        #[test]
        fn int_float_comparison_is_exact(a in any::<i64>(), f in any::<f64>()) {
            let bump = Bump::new();
            let bud = budget();
            let _heap = Heap::new(&bump, &bud);
            let got = num_cmp(Value::Int(a), Value::Float(f)).unwrap();
            let want = if f.is_nan() {
                Ordering::Less
            } else if f.is_infinite() {
                if f > 0.0 { Ordering::Less } else { Ordering::Greater }
            } else {
                // Exact rational comparison through scaled big ints.
                let (m, e, s) = num_traits::float::FloatCore::integer_decode(f);
                let fm = BigInt::from(m) * BigInt::from(s);
                let ai = BigInt::from(a);
                if e >= 0 { ai.cmp(&(fm << e as usize)) } else { (ai << (-e) as usize).cmp(&fm) }
            };
            prop_assert_eq!(got, want);
        }
    }
}
