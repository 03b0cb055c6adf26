//! Argument unpacking and iteration shared by all builtins.
//!
//! starlark-go's builtins check their arguments with `UnpackArgs` (named
//! parameters, keywords allowed) or `UnpackPositionalArgs` (positional
//! only), and programs see those functions' exact error texts. [`unpack`]
//! and [`positional`] reproduce them (in the wording of the reference
//! binary, which quotes keyword names), and the `want_*` converters give
//! the per-argument texts (`got int, want string`). [`for_each`] and
//! [`collect`] walk the iterable values (lists, tuples, dict keys, ranges;
//! not strings) with the live-iteration marks starlark-go sets, checking
//! the deadline as they go.

use super::Args;
use crate::budget::{Budget, ITEM_UNITS, WORK_BLOCK};
use crate::error::{Error, Result};
use crate::heap::Heap;
use crate::value::{ElemsObj, TupleObj, Value};
use bumpalo::collections::Vec as BumpVec;

/// Items walked between two deadline checks by a loop that checks the
/// clock itself (blocks of a string mapped in place).
pub const CHECK_EVERY: usize = 1024;

/// Items a loop walks between two charges of their work (see [`tick`]).
const TICK_BATCH: usize = 16;

/// The arguments of an `UnpackArgs`-style call, by parameter.
pub struct Unpacked<'h, const N: usize> {
    fname: &'static str,
    names: [&'static str; N],
    vals: [Option<Value<'h>>; N],
    by_keyword: [bool; N],
}

/// starlark-go's `UnpackArgs`: binds positional and keyword arguments to
/// the parameters `names`, of which the first `required` are mandatory.
pub fn unpack<'h, const N: usize>(
    fname: &'static str,
    args: &Args<'h, '_>,
    names: [&'static str; N],
    required: usize,
) -> Result<Unpacked<'h, N>> {
    unpack_from(fname, args.positional, args.named, names, required)
}

/// [`unpack`] over explicit argument lists (for builtins that take some
/// arguments apart first, like `fail`'s `*args`).
pub fn unpack_from<'h, const N: usize>(
    fname: &'static str,
    positional: &[Value<'h>],
    named: &[(&'h str, Value<'h>)],
    names: [&'static str; N],
    required: usize,
) -> Result<Unpacked<'h, N>> {
    if positional.len() > N {
        return Err(Error::msg(format!(
            "{fname}: got {} arguments, want at most {N}",
            positional.len()
        )));
    }
    let mut vals = [None; N];
    let mut by_keyword = [false; N];
    for (i, v) in positional.iter().enumerate() {
        vals[i] = Some(*v);
    }
    for (k, v) in named {
        let Some(i) = names.iter().position(|n| n == k) else {
            return Err(Error::msg(format!(
                "{fname}: unexpected keyword argument \"{k}\""
            )));
        };
        if vals[i].is_some() {
            return Err(Error::msg(format!(
                "{fname}: got multiple values for keyword argument \"{k}\""
            )));
        }
        vals[i] = Some(*v);
        by_keyword[i] = true;
    }
    for i in positional.len()..required.min(N) {
        if vals[i].is_none() {
            return Err(Error::msg(format!(
                "{fname}: missing argument for {}",
                names[i]
            )));
        }
    }
    Ok(Unpacked {
        fname,
        names,
        vals,
        by_keyword,
    })
}

impl<'h, const N: usize> Unpacked<'h, N> {
    /// The argument of parameter `i`, if given.
    pub fn get(&self, i: usize) -> Option<Value<'h>> {
        self.vals[i]
    }

    /// Wraps a conversion error of parameter `i` as starlark-go does: the
    /// name is quoted when the argument came by keyword.
    pub fn err(&self, i: usize, msg: String) -> Error {
        let name = self.names[i];
        if self.by_keyword[i] {
            Error::msg(format!("{}: for parameter \"{name}\": {msg}", self.fname))
        } else {
            Error::msg(format!("{}: for parameter {name}: {msg}", self.fname))
        }
    }

    /// Converts parameter `i` (if given) with `f`.
    pub fn conv<T>(
        &self,
        i: usize,
        f: impl FnOnce(Value<'h>) -> std::result::Result<T, String>,
    ) -> Result<Option<T>> {
        match self.vals[i] {
            None => Ok(None),
            Some(v) => f(v).map(Some).map_err(|m| self.err(i, m)),
        }
    }
}

/// starlark-go's `UnpackPositionalArgs` count checks: no keywords, between
/// `min` and `max` positional arguments.
#[inline]
pub fn positional<'h, 'a>(
    fname: &str,
    args: &Args<'h, 'a>,
    min: usize,
    max: usize,
) -> Result<&'a [Value<'h>]> {
    let n = args.positional.len();
    if args.named.is_empty() && n >= min && n <= max {
        return Ok(args.positional);
    }
    positional_error(fname, args, min, max)
}

/// The error of [`positional`]'s arguments.
#[cold]
#[inline(never)]
fn positional_error<'h, 'a>(
    fname: &str,
    args: &Args<'h, 'a>,
    min: usize,
    max: usize,
) -> Result<&'a [Value<'h>]> {
    if !args.named.is_empty() {
        return Err(Error::msg(format!("{fname}: unexpected keyword arguments")));
    }
    let n = args.positional.len();
    if n < min {
        let atleast = if min < max { "at least " } else { "" };
        return Err(Error::msg(format!(
            "{fname}: got {n} arguments, want {atleast}{min}"
        )));
    }
    if n > max {
        let atmost = if max > min { "at most " } else { "" };
        return Err(Error::msg(format!(
            "{fname}: got {n} arguments, want {atmost}{max}"
        )));
    }
    Ok(args.positional)
}

/// The error of converting positional argument `i` (0-based).
#[cold]
#[inline(never)]
pub fn pos_err(fname: &str, i: usize, msg: String) -> Error {
    Error::msg(format!("{fname}: for parameter {}: {msg}", i + 1))
}

/// Converts positional argument `i` with `f`, wrapping its error.
#[inline(always)]
pub fn pos<'h, T>(
    fname: &str,
    args: &[Value<'h>],
    i: usize,
    f: impl FnOnce(Value<'h>) -> std::result::Result<T, String>,
) -> Result<Option<T>> {
    match args.get(i) {
        None => Ok(None),
        Some(v) => f(*v).map(Some).map_err(|m| pos_err(fname, i, m)),
    }
}

// ---------------------------------------------------------------------------
// Converters: the per-argument checks of starlark-go's `UnpackArg`.

/// A string argument: its bytes (see [`crate::text`] for reading them as
/// text).
pub fn want_str<'h>(v: Value<'h>) -> std::result::Result<&'h [u8], String> {
    match v {
        Value::Str(s) => Ok(s.text),
        _ => Err(format!("got {}, want string", v.type_name())),
    }
}

pub fn want_bool(v: Value<'_>) -> std::result::Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(b),
        _ => Err(format!("got {}, want bool", v.type_name())),
    }
}

/// A Go `int` (64 bits) as `AsInt` checks it.
pub fn want_int(v: Value<'_>) -> std::result::Result<i64, String> {
    match v {
        Value::Int(i) => Ok(i),
        Value::BigInt(b) => Err(format!(
            "{} out of range (want value in signed 64-bit range)",
            b.to_bigint()
        )),
        _ => Err(format!("got {}, want int", v.type_name())),
    }
}

pub fn want_iterable<'h>(v: Value<'h>) -> std::result::Result<Value<'h>, String> {
    if is_iterable(v) {
        Ok(v)
    } else {
        Err(format!("got {}, want iterable", v.type_name()))
    }
}

pub fn want_callable<'h>(v: Value<'h>) -> std::result::Result<Value<'h>, String> {
    match v {
        Value::Function(_) | Value::Builtin(_) | Value::BoundMethod(_) | Value::Capability(_) => {
            Ok(v)
        }
        _ => Err(format!("got {}, want callable", v.type_name())),
    }
}

// ---------------------------------------------------------------------------
// Iteration

/// Whether `for x in v` works: strings and bytes are not iterable.
pub fn is_iterable(v: Value<'_>) -> bool {
    matches!(
        v,
        Value::List(_) | Value::Tuple(_) | Value::Dict(_) | Value::Range(_) | Value::Elems(_)
    )
}

/// The number of items an iterable yields.
pub fn iter_len(v: Value<'_>) -> usize {
    match v {
        Value::List(l) => l.len(),
        Value::Tuple(t) => t.items.len(),
        Value::Elems(e) => e.items.len(),
        Value::Dict(d) => d.len(),
        Value::Range(r) => usize::try_from(r.len()).unwrap_or(usize::MAX),
        _ => 0,
    }
}

/// Clears the live-iteration mark of a list or dict when dropped, so that
/// an error or early exit never leaves the value locked.
struct IterMark<'h>(Value<'h>);

impl<'h> IterMark<'h> {
    fn new(v: Value<'h>) -> IterMark<'h> {
        match v {
            Value::List(l) => l.iterating.set(l.iterating.get() + 1),
            Value::Dict(d) => d.iterating.set(d.iterating.get() + 1),
            _ => {}
        }
        IterMark(v)
    }
}

impl Drop for IterMark<'_> {
    fn drop(&mut self) {
        match self.0 {
            Value::List(l) => l.iterating.set(l.iterating.get().saturating_sub(1)),
            Value::Dict(d) => d.iterating.set(d.iterating.get().saturating_sub(1)),
            _ => {}
        }
    }
}

/// Calls `f(index, item)` for each item of the iterable `v` until it
/// returns `false`. While it runs, a list or dict `v` counts as being
/// iterated (mutating it fails), as in starlark-go. No borrow of `v` is
/// held across `f`, so `f` may call back into Starlark.
pub fn for_each<'h>(
    budget: &Budget,
    v: Value<'h>,
    mut f: impl FnMut(usize, Value<'h>) -> Result<bool>,
) -> Result<()> {
    let _mark = IterMark::new(v);
    match v {
        Value::List(l) => {
            let mut i = 0;
            while let Some(x) = l.get(i) {
                if !f(i, x)? {
                    break;
                }
                tick(budget, i)?;
                i += 1;
            }
        }
        Value::Tuple(TupleObj { items }) | Value::Elems(ElemsObj { items, .. }) => {
            for (i, x) in items.iter().enumerate() {
                if !f(i, *x)? {
                    break;
                }
                tick(budget, i)?;
            }
        }
        Value::Dict(d) => {
            let mut pos = 0;
            let mut i = 0;
            loop {
                let entry = d.map.borrow().entry_at(pos);
                let Some(entry) = entry else { break };
                pos += 1;
                if let Some((k, _)) = entry {
                    if !f(i, k)? {
                        break;
                    }
                    tick(budget, i)?;
                    i += 1;
                }
            }
        }
        Value::Range(r) => {
            let n = r.len();
            for k in 0..n {
                let i = k as usize;
                if !f(i, Value::Int(r.at(k)))? {
                    break;
                }
                tick(budget, i)?;
            }
        }
        _ => {
            return Err(Error::msg(format!(
                "{} value is not iterable",
                v.type_name()
            )))
        }
    }
    Ok(())
}

/// The items of the iterable `v` in a new arena vector, charged first.
pub fn collect<'h>(heap: Heap<'h>, v: Value<'h>) -> Result<BumpVec<'h, Value<'h>>> {
    let mut out = heap.vec_with_capacity(iter_len(v))?;
    for_each_block(heap.budget, v, |b| out.extend_from_slice(b))?;
    Ok(out)
}

/// Values a builtin gathers only for itself (the items of an iterable it
/// reads, the pieces of a split before they become a list), in memory the
/// allocator takes back when the builtin returns and hands out again: an
/// arena vector would stay as dead memory the process had to fault in for
/// nothing. Charged to the heap budget while it lives, growth included.
pub struct Items<'b, 'h> {
    items: Vec<Value<'h>>,
    budget: &'b Budget,
    charged: usize,
}

/// The most values of a vector kept for the next [`Items`] of a thread.
const SPARE_ITEMS: usize = 4096;

thread_local! {
    /// An empty vector of [`Items`] kept for the next one: most builtin
    /// calls gather a few values, and a fresh allocation for each cost
    /// more than the builtin's own work.
    static SPARE: std::cell::Cell<Vec<Value<'static>>> = const { std::cell::Cell::new(Vec::new()) };
}

/// An empty vector of another value lifetime, on the same allocation.
fn relabel<'a, 'b>(v: Vec<Value<'a>>) -> Vec<Value<'b>> {
    let mut v = std::mem::ManuallyDrop::new(v);
    v.clear();
    // SAFETY: the vector is empty, and `Value<'a>` and `Value<'b>` have
    // one layout: only the allocation (pointer and capacity) carries over.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<Value<'b>>(), 0, v.capacity()) }
}

impl<'b, 'h> Items<'b, 'h> {
    /// Empty, with room for `n` values, charged first.
    pub fn with_capacity(budget: &'b Budget, n: usize) -> Result<Items<'b, 'h>> {
        let charged = n.saturating_mul(std::mem::size_of::<Value>());
        budget.charge_heap(charged)?;
        let mut out = Items {
            items: relabel(SPARE.with(std::cell::Cell::take)),
            budget,
            charged,
        };
        out.items.reserve_exact(n);
        Ok(out)
    }

    /// Appends `v`, a full vector first growing by its size (at least 4),
    /// the growth charged.
    #[inline]
    pub fn push(&mut self, v: Value<'h>) -> Result<()> {
        if self.items.len() == self.items.capacity() {
            let more = self.items.capacity().max(4);
            let bytes = more.saturating_mul(std::mem::size_of::<Value>());
            self.budget.charge_heap(bytes)?;
            self.charged += bytes;
            self.items.reserve_exact(more);
        }
        self.items.push(v);
        Ok(())
    }
}

impl<'h> std::ops::Deref for Items<'_, 'h> {
    type Target = [Value<'h>];
    fn deref(&self) -> &[Value<'h>] {
        &self.items
    }
}

impl Drop for Items<'_, '_> {
    fn drop(&mut self) {
        self.budget.release_heap(self.charged);
        if self.items.capacity() <= SPARE_ITEMS {
            let spare = relabel(std::mem::take(&mut self.items));
            SPARE.with(|c| c.set(spare));
        }
    }
}

/// The items of the iterable `v` as [`Items`], for a builtin that only
/// reads them (`zip`, `enumerate`, `dict(pairs)`, `sorted`, ...).
pub fn collect_items<'b, 'h>(budget: &'b Budget, v: Value<'h>) -> Result<Items<'b, 'h>> {
    let mut out = Items::with_capacity(budget, iter_len(v))?;
    // Within the capacity charged: `iter_len` is exact.
    for_each_block(budget, v, |b| out.items.extend_from_slice(b))?;
    Ok(out)
}

/// Runs `f` on the items of the iterable `v`: those of a list or a tuple
/// where they are (the list borrowed while `f` runs, so `f` must not run
/// Starlark), any other's gathered first by [`collect_items`]. Charges the
/// work of reading them as [`collect_items`] does.
pub fn with_items<'h, T>(
    budget: &Budget,
    v: Value<'h>,
    f: impl FnOnce(&[Value<'h>]) -> Result<T>,
) -> Result<T> {
    match v {
        Value::List(l) => {
            let items = l.items.borrow();
            budget.charge_work(items.len() as u64)?;
            f(&items)
        }
        Value::Tuple(t) => {
            budget.charge_work(t.items.len() as u64)?;
            f(t.items)
        }
        _ => f(&collect_items(budget, v)?),
    }
}

/// Calls `f` with the items of the iterable `v` in order, a block at a
/// time, charging the work.
fn for_each_block<'h>(
    budget: &Budget,
    v: Value<'h>,
    mut f: impl FnMut(&[Value<'h>]),
) -> Result<()> {
    match v {
        Value::List(l) => budget.in_blocks(&l.items.borrow(), f)?,
        Value::Tuple(t) => budget.in_blocks(t.items, f)?,
        Value::Elems(e) => budget.in_blocks(e.items, f)?,
        Value::Dict(d) => {
            let map = d.map.borrow();
            for (i, (k, _)) in map.iter().enumerate() {
                tick(budget, i)?;
                f(&[k]);
            }
        }
        Value::Range(r) => {
            let mut k = 0;
            let mut block = Vec::with_capacity(WORK_BLOCK.min(r.len() as usize));
            while k < r.len() {
                let end = (k + WORK_BLOCK as i64).min(r.len());
                budget.charge_work((end - k) as u64)?;
                block.clear();
                block.extend((k..end).map(|i| Value::Int(r.at(i))));
                f(&block);
                k = end;
            }
        }
        _ => {
            return Err(Error::msg(format!(
                "{} value is not iterable",
                v.type_name()
            )))
        }
    }
    Ok(())
}

/// Charges the work of a loop at its `i`-th item ([`ITEM_UNITS`] per
/// item, in batches of a few items): the charges of successive calls add
/// up, so the clock is looked at every thousand or so items however the
/// items are spread over calls.
#[inline]
pub fn tick(budget: &Budget, i: usize) -> Result<()> {
    if i % TICK_BATCH == TICK_BATCH - 1 {
        budget.charge_work(TICK_BATCH as u64 * ITEM_UNITS)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::TupleObj;

    #[test]
    fn items_are_charged_while_they_live_and_refused_past_the_budget() {
        let limits = crate::Limits {
            max_heap_bytes: 1000,
            ..crate::Limits::default()
        };
        let budget = Budget::new(limits, std::time::Instant::now(), None);
        let five = [
            Value::Int(1),
            Value::Int(2),
            Value::Int(3),
            Value::None,
            Value::Bool(true),
        ];
        let t = TupleObj { items: &five };
        {
            let items = collect_items(&budget, Value::Tuple(&t)).unwrap();
            assert_eq!(items.len(), 5);
            assert!(matches!(
                (items[0], items[4]),
                (Value::Int(1), Value::Bool(true))
            ));
            assert_eq!(budget.heap_bytes(), 5 * std::mem::size_of::<Value>());
        }
        assert_eq!(budget.heap_bytes(), 0, "given back when dropped");
        let many: Vec<Value> = (0..100).map(Value::Int).collect();
        let t = TupleObj { items: &many };
        let e = collect_items(&budget, Value::Tuple(&t)).err().unwrap();
        assert!(matches!(
            e.kind(),
            crate::error::ErrorKind::Limit(crate::error::LimitKind::HeapBytes)
        ));
        assert_eq!(budget.heap_bytes(), 0, "nothing charged when refused");
    }
}
