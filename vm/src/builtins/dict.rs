//! The methods of dicts, and the update shared with `dict(...)`.
//!
//! Mutations check the frozen flag and live iterations first, with
//! starlark-go's verbs (`insert into`, `delete from`, `clear`). Arguments
//! that might alias the receiver (`d.update(d)`) are copied out before the
//! receiver is borrowed for writing.

use super::args::{self, for_each, is_iterable, iter_len, positional};
use super::{Args, BuiltinFn};
use crate::error::{Error, Result};
use crate::interp::Thread;
use crate::value::{DictObj, Value};

/// The methods of dicts, sorted by name.
pub static METHODS: &[BuiltinFn] = &[
    method!("clear", clear),
    method!("get", get),
    method!("items", items),
    method!("keys", keys),
    method!("pop", pop),
    method!("popitem", popitem),
    method!("setdefault", setdefault),
    method!("update", update),
    method!("values", values),
];

type R<'h> = Result<Value<'h>>;

#[inline(always)]
fn recv<'h>(a: &Args<'h, '_>) -> Result<&'h DictObj<'h>> {
    match a.recv() {
        Value::Dict(d) => Ok(d),
        // The interpreter only binds dict methods to dicts.
        v => Err(super::receiver_error("dict", v)),
    }
}

/// Sets `key` in `d`, after the mutability check.
fn set_key<'h>(d: &'h DictObj<'h>, k: Value<'h>, v: Value<'h>) -> Result<()> {
    d.check_mutable("insert into")?;
    d.map.borrow_mut().insert(k, v)?;
    Ok(())
}

/// The key and value of element `i` of a `dict`/`update` sequence: an
/// iterable of two items.
fn pair_of<'h>(
    budget: &crate::budget::Budget,
    i: usize,
    pair: Value<'h>,
) -> Result<[Value<'h>; 2]> {
    if !is_iterable(pair) {
        return Err(Error::msg(format!(
            "dictionary update sequence element #{i} is not iterable ({})",
            pair.type_name()
        )));
    }
    let n = iter_len(pair);
    if n != 2 {
        return Err(Error::msg(format!(
            "dictionary update sequence element #{i} has length {n}, want 2"
        )));
    }
    let mut kv = [Value::None; 2];
    for_each(budget, pair, |j, v| {
        kv[j] = v;
        Ok(j < 1)
    })?;
    Ok(kv)
}

/// starlark-go's `updateDict`: the pairs of the optional positional
/// argument (a dict's items, or an iterable of 2-element iterables), then
/// the keyword arguments. Errors are unprefixed.
pub fn update_dict<'h>(
    th: &mut Thread<'h>,
    d: &'h DictObj<'h>,
    positional: &[Value<'h>],
    named: &[(&'h str, Value<'h>)],
) -> Result<()> {
    if let Some(&x) = positional.first() {
        match x {
            Value::Dict(src) => {
                let pairs: Vec<_> = src.map.borrow().iter().collect();
                for (i, (k, v)) in pairs.into_iter().enumerate() {
                    set_key(d, k, v)?;
                    args::tick(th.budget, i)?;
                }
            }
            _ if is_iterable(x) => {
                // A list or tuple of pairs is read where it is: nothing
                // here runs Starlark, and the dict is another object.
                let budget = th.budget;
                args::with_items(budget, x, |items| {
                    for (i, pair) in items.iter().enumerate() {
                        let kv = match pair {
                            Value::Tuple(t) if t.items.len() == 2 => [t.items[0], t.items[1]],
                            _ => pair_of(budget, i, *pair)?,
                        };
                        set_key(d, kv[0], kv[1])?;
                        args::tick(budget, i)?;
                    }
                    Ok(())
                })?;
            }
            _ => return Err(Error::msg(format!("got {}, want iterable", x.type_name()))),
        }
    }
    let before = d.len();
    for (k, v) in named {
        let key = th.heap.str_in_arena(*k)?;
        set_key(d, key, *v)?;
    }
    if d.len() < before + named.len() {
        for (i, (k, _)) in named.iter().enumerate() {
            if named[..i].iter().any(|(k2, _)| k2 == k) {
                return Err(Error::msg(format!("duplicate keyword arg: \"{k}\"")));
            }
        }
    }
    Ok(())
}

fn clear<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("clear", a, 0, 0)?;
    let d = recv(a)?;
    // starlark-go's Dict.Clear reports its error without the name.
    d.check_mutable("clear")?;
    d.map.borrow_mut().clear();
    Ok(Value::None)
}

fn get<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("get", a, 1, 2)?;
    let found = recv(a)?
        .map
        .borrow()
        .get(p[0])
        .map_err(|e| e.prefixed("get: "))?;
    Ok(found.or(p.get(1).copied()).unwrap_or(Value::None))
}

fn items<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("items", a, 0, 0)?;
    let d = recv(a)?;
    let map = d.map.borrow();
    th.heap.tuple_list(map.len(), 2, |flat| {
        for (i, ((k, v), row)) in map.iter().zip(flat.chunks_exact_mut(2)).enumerate() {
            row[0] = k;
            row[1] = v;
            args::tick(th.budget, i)?;
        }
        Ok(())
    })
}

fn keys<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("keys", a, 0, 0)?;
    let d = recv(a)?;
    let mut out = th.heap.vec_with_capacity(d.len())?;
    for (i, (k, _)) in d.map.borrow().iter().enumerate() {
        args::tick(th.budget, i)?;
        out.push(k);
    }
    th.heap.list_from_vec(out)
}

fn values<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("values", a, 0, 0)?;
    let d = recv(a)?;
    let mut out = th.heap.vec_with_capacity(d.len())?;
    for (i, (_, v)) in d.map.borrow().iter().enumerate() {
        args::tick(th.budget, i)?;
        out.push(v);
    }
    th.heap.list_from_vec(out)
}

fn pop<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("pop", a, 1, 2)?;
    let d = recv(a)?;
    d.check_mutable("delete from")
        .map_err(|e| e.prefixed("pop: "))?;
    // starlark-go does not hash the key when the table is empty (never
    // allocated), so `{}.pop([1])` is a missing key, not an unhashable one.
    if d.map.borrow().is_empty() {
        return match p.get(1) {
            Some(dflt) => Ok(*dflt),
            None => Err(Error::msg("pop: missing key")),
        };
    }
    let removed = d
        .map
        .borrow_mut()
        .remove(p[0])
        .map_err(|e| e.prefixed("pop: "))?;
    match (removed, p.get(1)) {
        (Some(v), _) => Ok(v),
        (None, Some(dflt)) => Ok(*dflt),
        (None, None) => Err(Error::msg("pop: missing key")),
    }
}

fn popitem<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    positional("popitem", a, 0, 0)?;
    let d = recv(a)?;
    if d.map.borrow().is_empty() {
        return Err(Error::msg("popitem: empty dict"));
    }
    d.check_mutable("delete from")
        .map_err(|e| e.prefixed("popitem: "))?;
    let first = d.map.borrow_mut().pop_first()?;
    match first {
        Some((k, v)) => th.heap.tuple(&[k, v]),
        None => Err(Error::msg("popitem: empty dict")),
    }
}

fn setdefault<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    let p = positional("setdefault", a, 1, 2)?;
    let d = recv(a)?;
    let dflt = p.get(1).copied().unwrap_or(Value::None);
    let found = d
        .map
        .borrow()
        .get(p[0])
        .map_err(|e| e.prefixed("setdefault: "))?;
    if let Some(v) = found {
        return Ok(v);
    }
    set_key(d, p[0], dflt).map_err(|e| e.prefixed("setdefault: "))?;
    Ok(dflt)
}

fn update<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> R<'h> {
    if a.positional.len() > 1 {
        return Err(Error::msg(format!(
            "update: got {} arguments, want at most 1",
            a.positional.len()
        )));
    }
    update_dict(th, recv(a)?, a.positional, a.named).map_err(|e| e.prefixed("update: "))?;
    Ok(Value::None)
}
