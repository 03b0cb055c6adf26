//! The methods of lists.
//!
//! Mutations check the frozen flag and live iterations first, with
//! starlark-go's verbs (`append to`, `insert into`, `pop from`, ...), and
//! errors carry the method's name as starlark-go's `nameErr` adds it.
//! Growth is charged to the heap before it happens.

use super::args::{self, positional};
use super::{Args, BuiltinFn};
use crate::error::{Error, Result};
use crate::interp::Thread;
use crate::ops;
use crate::value::{ListObj, Value};

/// The methods of lists, sorted by name.
pub static METHODS: &[BuiltinFn] = &[
    method!("append", append),
    method!("clear", clear),
    method!("extend", extend),
    method!("index", index),
    method!("insert", insert),
    method!("pop", pop),
    method!("remove", remove),
];

type R<'h> = Result<Value<'h>>;

#[inline(always)]
fn recv<'h>(a: &Args<'h, '_>) -> Result<&'h ListObj<'h>> {
    match a.recv() {
        Value::List(l) => Ok(l),
        // The interpreter only binds list methods to lists.
        v => Err(super::receiver_error("list", v)),
    }
}

fn append<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("append", a, 1, 1)?;
    let l = recv(a)?;
    l.check_mutable("append to")
        .map_err(|e| e.prefixed("append: "))?;
    th.heap.push(&mut l.items.borrow_mut(), p[0])?;
    Ok(Value::None)
}

fn clear<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("clear", a, 0, 0)?;
    let l = recv(a)?;
    l.check_mutable("clear")
        .map_err(|e| e.prefixed("clear: "))?;
    l.items.borrow_mut().clear();
    Ok(Value::None)
}

fn extend<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("extend", a, 1, 1)?;
    let l = recv(a)?;
    let x = args::pos("extend", p, 0, args::want_iterable)?.unwrap_or(Value::None);
    l.check_mutable("extend")
        .map_err(|e| e.prefixed("extend: "))?;
    // Copied out first: `x` may be this very list.
    let items = args::collect_items(th.budget, x)?;
    let mut v = l.items.borrow_mut();
    th.heap.reserve(&mut v, items.len())?;
    th.budget.in_blocks(&items, |b| v.extend_from_slice(b))?;
    Ok(Value::None)
}

/// starlark-go's `indices`: optional start and end (negative counts from
/// the end), clamped to `[0, len]`. Errors name the bad index.
pub fn indices(
    th: &Thread<'_>,
    start: Option<Value<'_>>,
    end: Option<Value<'_>>,
    len: usize,
) -> Result<(usize, usize)> {
    let n = len as i64;
    let conv = |v: Option<Value<'_>>, dflt: i64, what: &str| -> Result<i64> {
        match v {
            None | Some(Value::None) => Ok(dflt),
            Some(v) => {
                let i = ops::as_int32(v, th.budget)
                    .map_err(|e| e.prefixed(&format!("invalid {what} index: ")))?;
                Ok(if i < 0 { i + n } else { i })
            }
        }
    };
    let s = conv(start, 0, "start")?.clamp(0, n);
    let e = conv(end, n, "end")?.clamp(0, n);
    Ok((s as usize, e as usize))
}

fn index<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("index", a, 1, 3)?;
    let l = recv(a)?;
    let (start, end) = indices(th, p.get(1).copied(), p.get(2).copied(), l.len())
        .map_err(|e| e.prefixed("index: "))?;
    let mut i = start;
    while i < end {
        let Some(x) = l.get(i) else { break };
        if ops::equals_in(th.budget, x, p[0]).map_err(|e| e.prefixed("index: "))? {
            return Ok(Value::Int(i as i64));
        }
        args::tick(th.budget, i)?;
        i += 1;
    }
    Err(Error::msg("index: value not in list"))
}

fn insert<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("insert", a, 2, 2)?;
    let l = recv(a)?;
    let mut i = args::pos("insert", p, 0, args::want_int)?.unwrap_or(0);
    l.check_mutable("insert into")
        .map_err(|e| e.prefixed("insert: "))?;
    let mut v = l.items.borrow_mut();
    let n = v.len() as i64;
    if i < 0 {
        i = i.saturating_add(n);
    }
    th.heap.reserve(&mut v, 1)?;
    if i >= n {
        v.push(p[1]);
    } else {
        // The values after `i` move up by one.
        th.budget.charge_work((n - i.max(0)) as u64)?;
        v.insert(i.max(0) as usize, p[1]);
    }
    Ok(Value::None)
}

fn pop<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("pop", a, 0, 1)?;
    let l = recv(a)?;
    let n = l.len() as i64;
    let orig = args::pos("pop", p, 0, args::want_int)?.unwrap_or(n - 1);
    let i = if orig < 0 {
        orig.saturating_add(n)
    } else {
        orig
    };
    if i < 0 || i >= n {
        return Err(if n == 0 {
            Error::msg(format!("pop: index {orig} out of range: empty list"))
        } else {
            Error::msg(format!(
                "pop: list index {orig} out of range [{}:{}]",
                -n,
                n - 1
            ))
        });
    }
    l.check_mutable("pop from")
        .map_err(|e| e.prefixed("pop: "))?;
    // The values after `i` move down by one.
    th.budget.charge_work((n - i) as u64)?;
    Ok(l.items.borrow_mut().remove(i as usize))
}

fn remove<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("remove", a, 1, 1)?;
    let l = recv(a)?;
    l.check_mutable("remove from")
        .map_err(|e| e.prefixed("remove: "))?;
    let mut i = 0;
    while let Some(x) = l.get(i) {
        if ops::equals_in(th.budget, x, p[0]).map_err(|e| e.prefixed("remove: "))? {
            th.budget.charge_work((l.len() - i) as u64)?;
            l.items.borrow_mut().remove(i);
            return Ok(Value::None);
        }
        args::tick(th.budget, i)?;
        i += 1;
    }
    Err(Error::msg("remove: element not found"))
}
