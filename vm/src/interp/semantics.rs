//! What each instruction does, written once for both dispatch loops.
//!
//! `Thread::run_loop` (the general loop, `general.rs`) and
//! `Thread::run_fast` (the fast loop, `fast.rs`) expand the definitions
//! here; neither states an instruction's behaviour itself. An
//! instruction's semantics comes in up to two parts:
//!
//! - its *common case*, done in place: an `#[inline(always)]` function
//!   that returns the result, or says that the case does not apply
//!   (`None`, or a [`Miss`]: an unbound variable, a value of the wrong
//!   kind);
//! - its *general case*: every other operand, and every error, in one
//!   out-of-line function (`ops`, the heap).
//!
//! The fast loop runs the common case and either goes on to the general
//! case itself (the operators) or hands the instruction back to the
//! general loop (a miss); the general loop runs the common case and then
//! the general case, and turns a miss into its error, with the message
//! and position the program sees. So the loops differ only in how they
//! dispatch, charge steps and report errors, and a fix to what an
//! instruction does lands here once.
//!
//! The operators are marker types implementing [`Binary`], [`Compare`] or
//! [`Unary`]; the int-operand forms (`AddI`, `LtI`, ...) use the same type
//! as their register form with the int as the second operand.

use super::Regs;
use crate::budget::Budget;
use crate::error::{Error, Result};
use crate::heap::Heap;
use crate::opcode::{CallSite, Code, InPlace, Record, Reg, ITER_REGS, RK_CONST};
use crate::ops;
use crate::template::Template;
use crate::value::*;
use codemode_lang::ast::{BinOp, UnaryOp};
use std::cell::Cell;

/// Why an instruction's common case does not apply, when that is not an
/// error of the operation: the fast loop hands the instruction back, the
/// general loop reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Miss {
    /// The variable has no value yet ("referenced before assignment",
    /// named by the general loop).
    Unbound,
    /// The compiler's invariants do not hold (this message, never expected
    /// in a verified program).
    Internal(&'static str),
}

/// `a in b` when `b` is a dict and `a` a string or an int (a lookup that
/// cannot fail but on the deadline), or `b` a list or tuple and `a` a
/// short string (which only a string of the same text equals; a long
/// scan is charged as work); `None` for every other case.
#[inline(always)]
fn quick_in<'h>(heap: Heap<'h>, a: &Value<'h>, b: &Value<'h>) -> Option<Result<bool>> {
    let scan = |items: &[Value<'h>], s: &StrObj<'h>| -> Result<bool> {
        if items.len() > 64 {
            heap.budget.charge_work(items.len() as u64)?;
        }
        Ok(has_text(items, s))
    };
    match (a, b) {
        (Value::Str(_) | Value::Int(_), Value::Dict(d)) => Some(d.map.borrow().contains(*a)),
        (Value::Str(s), Value::List(l)) if s.text.len() <= 64 => Some(scan(&l.items.borrow(), s)),
        (Value::Str(s), Value::Tuple(t)) if s.text.len() <= 64 => Some(scan(t.items, s)),
        _ => None,
    }
}

/// Whether a string of the text of `s` is among `items` (only a string
/// equals a string).
#[inline(always)]
fn has_text<'h>(items: &[Value<'h>], s: &StrObj<'h>) -> bool {
    items
        .iter()
        .any(|x| matches!(x, Value::Str(t) if t.same_text(s)))
}

/// `a == b` decided without the general comparison: either is `None`, or
/// both are bools, or short strings. `None` for every other case.
#[inline(always)]
fn quick_equal<'h>(a: Value<'h>, b: Value<'h>) -> Option<bool> {
    match (a, b) {
        (Value::None, x) | (x, Value::None) => Some(matches!(x, Value::None)),
        (Value::Bool(x), Value::Bool(y)) => Some(x == y),
        (Value::Str(x), Value::Str(y)) if x.text.len() <= 64 => Some(x.same_text(y)),
        _ => None,
    }
}

/// A binary operator instruction (and its int-operand form).
pub(super) trait Binary {
    const OP: BinOp;

    /// The result for two int operands, or `None` when the general case
    /// decides (overflow, division by zero, an operator without an int
    /// case).
    #[inline(always)]
    fn ints(_i: i64, _j: i64) -> Option<i64> {
        None
    }

    /// Every other case, errors included. (The operands are passed by
    /// reference: copies made for this rare call would be made in the
    /// common path too.)
    #[cold]
    #[inline(never)]
    fn general<'h>(heap: Heap<'h>, a: &Value<'h>, b: &Value<'h>) -> Result<Value<'h>> {
        ops::binary(heap, Self::OP, *a, *b)
    }
}

/// A comparison instruction (and its int-operand form).
pub(super) trait Compare {
    const OP: BinOp;

    /// The result for two int operands.
    fn ints(i: &i64, j: &i64) -> bool;

    /// Every other case, errors included.
    #[cold]
    #[inline(never)]
    fn general<'h>(heap: Heap<'h>, a: Value<'h>, b: Value<'h>) -> Result<bool> {
        ops::compare_in(heap.budget, Self::OP, a, b)
    }
}

/// A unary operator instruction.
pub(super) trait Unary {
    const OP: UnaryOp;

    /// The result for an int operand, or `None` when the general case
    /// decides.
    #[inline(always)]
    fn int(_i: i64) -> Option<i64> {
        None
    }

    /// Every other case, errors included.
    #[cold]
    #[inline(never)]
    fn general<'h>(heap: Heap<'h>, x: Value<'h>) -> Result<Value<'h>> {
        ops::unary(heap, Self::OP, x)
    }
}

/// Declares marker types for operators: `Name: Trait(OP);`, or with a
/// block of the trait's items that differ from its defaults.
macro_rules! operators {
    ($($(#[$doc:meta])* $name:ident: $tr:ident($op:expr) $({ $($body:item)* })?;)*) => {$(
        $(#[$doc])*
        pub(super) struct $name;
        impl $tr for $name {
            const OP: operators!(@op $tr) = $op;
            $($($body)*)?
        }
    )*};
    (@op Binary) => { BinOp };
    (@op Compare) => { BinOp };
    (@op Unary) => { UnaryOp };
}

/// `a + b` of the strings `a` (text `x`) and `b` (text `y`): when either
/// is empty, the other one itself (strings are immutable and have no
/// identity a program can see), else a new string.
#[inline(always)]
fn concat<'h>(
    heap: Heap<'h>,
    a: &Value<'h>,
    x: &StrObj<'h>,
    b: &Value<'h>,
    y: &StrObj<'h>,
) -> Result<Value<'h>> {
    match (x.text.is_empty(), y.text.is_empty()) {
        (_, true) => Ok(*a),
        (true, false) => Ok(*b),
        (false, false) => heap.concat(x.text, y.text),
    }
}

operators! {
    /// `+`: ints in place, two strings concatenated, the rest in `ops`.
    Add: Binary(BinOp::Add) {
        #[inline(always)]
        fn ints(i: i64, j: i64) -> Option<i64> {
            i.checked_add(j)
        }
        #[cold]
        #[inline(never)]
        fn general<'h>(heap: Heap<'h>, a: &Value<'h>, b: &Value<'h>) -> Result<Value<'h>> {
            match (a, b) {
                (Value::Str(x), Value::Str(y)) => concat(heap, a, x, b, y),
                _ => ops::binary(heap, BinOp::Add, *a, *b),
            }
        }
    };
    /// `+=`: as `+`, except that a list is extended in place (`ops`).
    InplaceAdd: Binary(BinOp::Add) {
        #[inline(always)]
        fn ints(i: i64, j: i64) -> Option<i64> {
            i.checked_add(j)
        }
        #[cold]
        #[inline(never)]
        fn general<'h>(heap: Heap<'h>, a: &Value<'h>, b: &Value<'h>) -> Result<Value<'h>> {
            match (a, b) {
                (Value::Str(x), Value::Str(y)) => concat(heap, a, x, b, y),
                _ => ops::inplace_add(heap, *a, *b),
            }
        }
    };
    /// `|=`: a dict is updated in place (`ops`).
    InplaceOr: Binary(BinOp::BitOr) {
        #[cold]
        #[inline(never)]
        fn general<'h>(heap: Heap<'h>, a: &Value<'h>, b: &Value<'h>) -> Result<Value<'h>> {
            ops::inplace_or(heap, *a, *b)
        }
    };
    /// `-`.
    Sub: Binary(BinOp::Sub) {
        #[inline(always)]
        fn ints(i: i64, j: i64) -> Option<i64> {
            i.checked_sub(j)
        }
    };
    /// `*`.
    Mul: Binary(BinOp::Mul) {
        #[inline(always)]
        fn ints(i: i64, j: i64) -> Option<i64> {
            i.checked_mul(j)
        }
    };
    /// `/` (always a float: no int case).
    Div: Binary(BinOp::Div);
    /// `//`.
    FloorDiv: Binary(BinOp::FloorDiv) {
        #[inline(always)]
        fn ints(i: i64, j: i64) -> Option<i64> {
            floor_div(i, j)
        }
    };
    /// `%`: a string's interpolation without the general operator's
    /// dispatch.
    Mod: Binary(BinOp::Mod) {
        #[inline(always)]
        fn ints(i: i64, j: i64) -> Option<i64> {
            floor_mod(i, j)
        }
        #[cold]
        #[inline(never)]
        fn general<'h>(heap: Heap<'h>, a: &Value<'h>, b: &Value<'h>) -> Result<Value<'h>> {
            match a {
                Value::Str(s) => crate::format::percent(heap, s.text, *b),
                _ => ops::binary(heap, BinOp::Mod, *a, *b),
            }
        }
    };
    /// `&`.
    BitAnd: Binary(BinOp::BitAnd) {
        #[inline(always)]
        fn ints(i: i64, j: i64) -> Option<i64> {
            Some(i & j)
        }
    };
    /// `|`.
    BitOr: Binary(BinOp::BitOr) {
        #[inline(always)]
        fn ints(i: i64, j: i64) -> Option<i64> {
            Some(i | j)
        }
    };
    /// `^`.
    BitXor: Binary(BinOp::BitXor) {
        #[inline(always)]
        fn ints(i: i64, j: i64) -> Option<i64> {
            Some(i ^ j)
        }
    };
    /// `<<` (its range checks and big results in `ops`).
    Shl: Binary(BinOp::Shl);
    /// `>>`.
    Shr: Binary(BinOp::Shr);
    /// `in`: the common cases of [`quick_in`] without the general
    /// operator's dispatch.
    In: Binary(BinOp::In) {
        #[inline(never)]
        fn general<'h>(heap: Heap<'h>, a: &Value<'h>, b: &Value<'h>) -> Result<Value<'h>> {
            match quick_in(heap, a, b) {
                Some(found) => found.map(Value::Bool),
                None => ops::binary(heap, BinOp::In, *a, *b),
            }
        }
    };
    /// `not in`: as `in`.
    NotIn: Binary(BinOp::NotIn) {
        #[inline(never)]
        fn general<'h>(heap: Heap<'h>, a: &Value<'h>, b: &Value<'h>) -> Result<Value<'h>> {
            match quick_in(heap, a, b) {
                Some(found) => found.map(|f| Value::Bool(!f)),
                None => ops::binary(heap, BinOp::NotIn, *a, *b),
            }
        }
    };
    /// `==`: besides ints, `None` and short strings in place.
    Eq: Compare(BinOp::Eq) {
        #[inline(always)]
        fn ints(i: &i64, j: &i64) -> bool {
            i == j
        }
        #[inline(never)]
        fn general<'h>(heap: Heap<'h>, a: Value<'h>, b: Value<'h>) -> Result<bool> {
            match quick_equal(a, b) {
                Some(eq) => Ok(eq),
                None => ops::compare_in(heap.budget, BinOp::Eq, a, b),
            }
        }
    };
    /// `!=`: as `==`.
    Ne: Compare(BinOp::Ne) {
        #[inline(always)]
        fn ints(i: &i64, j: &i64) -> bool {
            i != j
        }
        #[inline(never)]
        fn general<'h>(heap: Heap<'h>, a: Value<'h>, b: Value<'h>) -> Result<bool> {
            match quick_equal(a, b) {
                Some(eq) => Ok(!eq),
                None => ops::compare_in(heap.budget, BinOp::Ne, a, b),
            }
        }
    };
    /// `<`.
    Lt: Compare(BinOp::Lt) {
        #[inline(always)]
        fn ints(i: &i64, j: &i64) -> bool {
            i < j
        }
    };
    /// `<=`.
    Le: Compare(BinOp::Le) {
        #[inline(always)]
        fn ints(i: &i64, j: &i64) -> bool {
            i <= j
        }
    };
    /// `>`.
    Gt: Compare(BinOp::Gt) {
        #[inline(always)]
        fn ints(i: &i64, j: &i64) -> bool {
            i > j
        }
    };
    /// `>=`.
    Ge: Compare(BinOp::Ge) {
        #[inline(always)]
        fn ints(i: &i64, j: &i64) -> bool {
            i >= j
        }
    };
    /// Unary `-`.
    Neg: Unary(UnaryOp::Neg) {
        #[inline(always)]
        fn int(i: i64) -> Option<i64> {
            i.checked_neg()
        }
    };
    /// Unary `+`.
    Plus: Unary(UnaryOp::Plus);
    /// `~`.
    Invert: Unary(UnaryOp::Invert);
}

/// Floor division of ints, `None` when the general case must decide
/// (division by zero, overflow).
#[inline(always)]
pub(crate) fn floor_div(i: i64, j: i64) -> Option<i64> {
    if j == 0 || (i == i64::MIN && j == -1) {
        return None;
    }
    let q = i / j;
    Some(if (i % j != 0) && ((i < 0) != (j < 0)) {
        q - 1
    } else {
        q
    })
}

/// Floored modulo of ints, `None` when the general case must decide.
#[inline(always)]
pub(crate) fn floor_mod(i: i64, j: i64) -> Option<i64> {
    if j == 0 || j == -1 {
        return None;
    }
    let r = i % j;
    Some(if r != 0 && ((r < 0) != (j < 0)) {
        r + j
    } else {
        r
    })
}

/// `not x`.
#[inline(always)]
pub(super) fn not(x: Value<'_>) -> Value<'_> {
    Value::Bool(!x.truth())
}

// Variables.

/// `CheckBound`: a local read before its first assignment is an error.
#[inline(always)]
pub(super) fn check_bound(v: &Value<'_>) -> std::result::Result<(), Miss> {
    match v {
        Value::Unbound => Err(Miss::Unbound),
        _ => Ok(()),
    }
}

/// `LoadGlobal`: global `g`'s value.
#[inline(always)]
pub(super) fn load_global<'h>(
    globals: &[Value<'h>],
    g: usize,
) -> std::result::Result<Value<'h>, Miss> {
    match globals.get(g) {
        Some(Value::Unbound) => Err(Miss::Unbound),
        Some(&v) => Ok(v),
        None => Err(Miss::Internal("internal error: no such global")),
    }
}

/// `LoadCell`: the value in the cell held by register `slot`.
#[inline(always)]
pub(super) fn load_cell<'h>(slot: &Value<'h>) -> std::result::Result<Value<'h>, Miss> {
    match slot {
        Value::Cell(c) => match c.value.get() {
            Value::Unbound => Err(Miss::Unbound),
            v => Ok(v),
        },
        _ => Err(Miss::Internal("internal error: not a cell")),
    }
}

/// `StoreCell`: stores `v` into the cell held by register `slot`.
#[inline(always)]
pub(super) fn store_cell<'h>(slot: &Value<'h>, v: Value<'h>) -> std::result::Result<(), Miss> {
    match slot {
        Value::Cell(c) => {
            c.value.set(v);
            Ok(())
        }
        _ => Err(Miss::Internal("internal error: not a cell")),
    }
}

/// `LoadFree`: free variable `idx` of the running function `func` (`None`
/// at top level).
#[inline(always)]
pub(super) fn load_free<'h>(
    func: Option<&FunctionObj<'h>>,
    idx: usize,
) -> std::result::Result<Value<'h>, Miss> {
    match func.and_then(|f| f.freevars.get(idx)) {
        Some(cell) => match cell.value.get() {
            Value::Unbound => Err(Miss::Unbound),
            v => Ok(v),
        },
        None => Err(Miss::Internal("internal error: free variable at top level")),
    }
}

// Containers.

/// `Index`, its common case: a list or tuple at an int within it (a
/// negative one counts from the end: `parts[-1]`), or a dict's value for a
/// key it holds. `None`: [`index`] decides (and reports a missing or
/// unhashable key, or an index out of range).
#[inline(always)]
pub(super) fn index_common<'h>(x: Value<'h>, i: &Value<'h>) -> Option<Value<'h>> {
    match (x, *i) {
        (Value::List(l), Value::Int(k)) => {
            // SAFETY: the list is not being mutated (checked), and the
            // item is copied out before anything can mutate it.
            let items = unsafe { l.items.try_borrow_unguarded() }.ok()?;
            seq_item(items, k)
        }
        (Value::Tuple(t), Value::Int(k)) => seq_item(t.items, k),
        (Value::Dict(d), iv) => d.map.borrow().get(iv).ok().flatten(),
        _ => None,
    }
}

/// The item of `items` at `k`, a negative `k` counting from the end, as
/// Starlark indexes a sequence; `None` out of range.
#[inline(always)]
fn seq_item<'h>(items: &[Value<'h>], k: i64) -> Option<Value<'h>> {
    let at = if k < 0 {
        items.len().checked_sub(k.unsigned_abs() as usize)?
    } else {
        k as usize
    };
    items.get(at).copied()
}

/// `Index` of a dict by a short string (`r["name"]`, the commonest index
/// of agent programs), looked for first where the site's `hint` says (see
/// [`crate::opcode::Code::hints`]): a reference to the value, which the
/// loops copy whole into the destination register. `None`:
/// [`index_common`] decides.
#[inline(always)]
pub(super) fn dict_str_index<'h>(
    x: Value<'h>,
    i: &Value<'h>,
    hint: &Cell<u32>,
) -> Option<&'h Value<'h>> {
    let (Value::Dict(d), Value::Str(k)) = (x, *i) else {
        return None;
    };
    // SAFETY: the dict is not being mutated (checked), and the reference
    // is copied from before anything can mutate it.
    let m = unsafe { d.map.try_borrow_unguarded() }.ok()?;
    m.get_str_hinted(k, hint)
}

/// `in` and `not in` decided in place: `a` an int or a short string key
/// of the dict `b` ([`crate::dict::DictMap::contains_in_place`]), or `a`
/// a short string among the few items of the list or tuple `b` (which only
/// a string of the same text equals, as in [`quick_in`]). `None`: [`In`]
/// or [`NotIn`] decides.
#[inline(always)]
pub(super) fn contains_in_place<'h>(a: &Value<'h>, b: &Value<'h>) -> Option<bool> {
    match (*a, *b) {
        (a, Value::Dict(d)) => {
            // SAFETY: the dict is not being mutated (checked), and
            // nothing is kept from it.
            let m = unsafe { d.map.try_borrow_unguarded() }.ok()?;
            m.contains_in_place(a)
        }
        (Value::Str(s), Value::List(l)) if s.text.len() <= 64 => {
            // SAFETY: as for the dict; the list is not being mutated.
            let items = unsafe { l.items.try_borrow_unguarded() }.ok()?;
            (items.len() <= 64).then(|| has_text(items, s))
        }
        (Value::Str(s), Value::Tuple(t)) if s.text.len() <= 64 && t.items.len() <= 64 => {
            Some(has_text(t.items, s))
        }
        _ => None,
    }
}

/// `Index`, every other case.
#[cold]
#[inline(never)]
pub(super) fn index<'h>(heap: Heap<'h>, x: Value<'h>, i: Value<'h>) -> Result<Value<'h>> {
    ops::index(heap, x, i)
}

/// `SetIndex`, its common case: the dict in `x` when it may be mutated.
/// `None`: [`set_index`] decides.
#[inline(always)]
pub(super) fn set_index_target<'h>(x: Value<'h>) -> Option<&'h DictObj<'h>> {
    match x {
        Value::Dict(d) if !d.frozen.get() && d.iterating.get() == 0 => Some(d),
        _ => None,
    }
}

/// `SetIndex`, every other case.
#[cold]
#[inline(never)]
pub(super) fn set_index<'h>(
    heap: Heap<'h>,
    x: Value<'h>,
    i: Value<'h>,
    v: Value<'h>,
) -> Result<()> {
    ops::set_index(heap, x, i, v)
}

/// Sets `d[k] = v` (`SetIndex` on a mutable dict, with its site's hint;
/// `DictSet` of a dict comprehension, without).
#[inline(always)]
pub(super) fn dict_set<'h>(
    d: &DictObj<'h>,
    k: Value<'h>,
    v: Value<'h>,
    hint: Option<&Cell<u32>>,
) -> Result<()> {
    let mut m = d.map.borrow_mut();
    if let Value::Str(s) = k {
        if m.set_present_str(s, v, hint) {
            return Ok(());
        }
    }
    m.insert(k, v).map(|_| ())
}

/// `DictSetUnique` (a dict display): sets `d[k] = v`, where `k` must be
/// new.
#[inline(always)]
pub(super) fn dict_set_unique<'h>(
    d: &DictObj<'h>,
    k: Value<'h>,
    v: Value<'h>,
    budget: &Budget,
) -> Result<()> {
    let fresh = d.map.borrow_mut().insert(k, v)?;
    if fresh {
        Ok(())
    } else {
        Err(duplicate_key(k, budget))
    }
}

/// `DictPushNew` (a display of distinct string literals): sets `d[k] = v`,
/// `k` known to be new.
#[inline(always)]
pub(super) fn dict_push_new<'h>(d: &DictObj<'h>, k: Value<'h>, v: Value<'h>) -> Result<()> {
    let mut m = d.map.borrow_mut();
    if let Value::Str(s) = k {
        if m.push_new_hashed_str(s, v) {
            return Ok(());
        }
    }
    m.push_new(k, v)
}

/// `MakeRecord`: a new dict of the record's keys with the values of its
/// registers (`reg` reads one), made as `MakeDict` and a `DictPushNew` per
/// key make it.
#[inline(always)]
pub(super) fn make_record<'h>(
    heap: Heap<'h>,
    rec: &Record<'h>,
    reg: impl Fn(Reg) -> Value<'h>,
) -> Result<Value<'h>> {
    let d = heap.dict(rec.keys.len())?;
    d.map
        .borrow_mut()
        .fill_distinct(rec.keys, rec.hashes, rec.srcs.iter().map(|&r| reg(r)))?;
    Ok(Value::Dict(d))
}

/// The error of a dict display that repeats key `k`.
#[cold]
#[inline(never)]
fn duplicate_key(k: Value<'_>, budget: &Budget) -> Error {
    let mut shown = String::new();
    match crate::format::write_repr(&mut shown, k, budget) {
        Ok(()) => Error::msg(format!("duplicate key: {shown}")),
        Err(e) => e,
    }
}

/// The dict a `DictSet` or `DictSetUnique` fills (the compiler's own
/// register).
#[inline(always)]
pub(super) fn dict_operand<'h>(v: Value<'h>) -> std::result::Result<&'h DictObj<'h>, Miss> {
    match v {
        Value::Dict(d) => Ok(d),
        _ => Err(Miss::Internal("internal error: not a dict")),
    }
}

/// The list a `ListAppend` (of a list comprehension) fills.
#[inline(always)]
pub(super) fn list_operand<'h>(v: Value<'h>) -> std::result::Result<&'h ListObj<'h>, Miss> {
    match v {
        Value::List(l) => Ok(l),
        _ => Err(Miss::Internal("internal error: not a list")),
    }
}

/// `len(x)`, `str(x)` and `int(x)` at `site`, done in place when `f` is
/// the builtin `len`, `str` or `int`, called with one plain argument of a
/// common kind: the length of a string, list, tuple or dict; the text of
/// an int, or the string itself; an int itself, or a short decimal text. `None`: the call takes its general path (the builtin,
/// which also reports the errors). The results, charges and errors are
/// the builtins' own.
#[inline(always)]
pub(super) fn builtin_in_place<'h>(
    heap: Heap<'h>,
    f: &'static crate::builtins::BuiltinFn,
    site: &CallSite<'_>,
    arg: Value<'h>,
) -> Option<Result<Value<'h>>> {
    if site.npos != 1 || !site.plain {
        return None;
    }
    if std::ptr::eq(f, &crate::builtins::universe::LEN) {
        let n = match arg {
            Value::Str(s) => s.text.len(),
            Value::List(l) => l.items.try_borrow().ok()?.len(),
            Value::Tuple(t) => t.items.len(),
            Value::Dict(d) => d.map.try_borrow().ok()?.len(),
            _ => return None,
        };
        return Some(Ok(Value::Int(n as i64)));
    }
    if std::ptr::eq(f, &crate::builtins::universe::STR) {
        return match arg {
            Value::Int(i) => Some(heap.str_of_int(i)),
            Value::Str(_) => Some(Ok(arg)),
            _ => None,
        };
    }
    if std::ptr::eq(f, &crate::builtins::universe::INT) {
        // An int, or the common decimal text (as `int` reads it first).
        return match arg {
            Value::Int(_) => Some(Ok(arg)),
            Value::Str(s) => {
                crate::builtins::universe::small_decimal(s.text).map(|n| Ok(Value::Int(n)))
            }
            _ => None,
        };
    }
    None
}

/// A string method called at `site` that is done in place: the commonest
/// calls of `startswith`, `endswith`, `strip`, `lstrip`, `rstrip`,
/// `lower`, `upper`, `split` and `replace`, on a string with string
/// arguments, by the routines the builtins use (the same results and
/// charges) without the builtin call's argument checks. `None`: the call
/// takes its general path (another receiver or argument kind, an empty
/// separator), which reports every error.
#[inline(always)]
pub(super) fn str_method_in_place<'h>(
    th: &super::Thread<'h>,
    site: &CallSite<'_>,
    recv: Value<'h>,
    args: &[Value<'h>],
) -> Option<Result<Value<'h>>> {
    use crate::builtins::string as s;
    let Value::Str(x) = recv else { return None };
    let x = x.text;
    let text = |i: usize| match args.get(i) {
        Some(Value::Str(a)) => Some(a.text),
        _ => None,
    };
    Some(match site.in_place {
        InPlace::StartsWith => s::affix(th, x, text(0)?, false).map(Value::Bool),
        InPlace::EndsWith => s::affix(th, x, text(0)?, true).map(Value::Bool),
        InPlace::Strip => s::strip_space(th, recv, x, true, true),
        InPlace::LStrip => s::strip_space(th, recv, x, true, false),
        InPlace::RStrip => s::strip_space(th, recv, x, false, true),
        InPlace::Lower => s::change_case(th, recv, x, false),
        InPlace::Upper => s::change_case(th, recv, x, true),
        InPlace::Split => match text(0)? {
            [] => return None,
            sep => s::split_all(th, x, sep),
        },
        InPlace::Replace => s::replace_text(th, x, text(0)?, text(1)?, usize::MAX),
        _ => return None,
    })
}

/// `Percent`: the template's text for `args` (see [`Template::nargs`]),
/// by the operator's general path when the template's quick one declines.
#[inline]
pub(super) fn percent<'h>(
    heap: Heap<'h>,
    t: &Template<'h>,
    args: &[Value<'h>],
) -> Result<Value<'h>> {
    if let [Value::Int(i)] = args {
        if let Some(r) = t.int_text(heap, *i) {
            return r;
        }
    }
    let items = match args {
        _ if t.spread => args,
        [Value::Tuple(tuple)] => tuple.items,
        _ => args,
    };
    match t.quick(heap, items) {
        Some(r) => r,
        None => percent_general(heap, t, args),
    }
}

/// `Percent` by the `%` operator's own path: its arguments as the operator
/// sees them (a spread template's registers as the tuple its display
/// makes).
#[cold]
#[inline(never)]
fn percent_general<'h>(heap: Heap<'h>, t: &Template<'h>, args: &[Value<'h>]) -> Result<Value<'h>> {
    let arg = match args {
        _ if t.spread => heap.tuple(args)?,
        [a] => *a,
        _ => return Err(Error::msg("internal error: percent arguments")),
    };
    crate::format::percent(heap, t.text, arg)
}

/// The list `xs` of a call `xs.append(x)` at `site` that is done in place:
/// a list that may be mutated. `None`: the method call takes its general
/// path.
#[inline(always)]
pub(super) fn append_target<'h>(site: &CallSite<'_>, recv: Value<'h>) -> Option<&'h ListObj<'h>> {
    match recv {
        Value::List(l)
            if site.in_place == InPlace::Append && !l.frozen.get() && l.iterating.get() == 0 =>
        {
            Some(l)
        }
        _ => None,
    }
}

/// `d.get(k)` / `d.get(k, default)` at `site`, done in place when `d` is a
/// dict and `k` an int or a string of at most 64 bytes (whose lookup cannot
/// fail: no charge, no comparison that can fail): the value, or `default`
/// (`None` when absent); `d.setdefault(k)` / `d.setdefault(k, default)`
/// likewise, adding an absent key when it can. `None`: the general path
/// (the builtin).
/// `args` are the call's arguments, `r[base+1..]`.
#[inline(always)]
pub(super) fn dict_get_in_place<'h>(
    site: &CallSite<'_>,
    recv: Value<'h>,
    args: &[Value<'h>],
) -> Option<Result<Value<'h>>> {
    let Value::Dict(d) = recv else { return None };
    if !matches!(site.in_place, InPlace::Get | InPlace::SetDefault) {
        return None;
    }
    let key = args[0];
    match key {
        Value::Int(_) => {}
        Value::Str(s) if s.text.len() <= 64 => {}
        _ => return None,
    }
    // SAFETY: the dict is not being mutated (checked), and the value
    // found is copied before anything can mutate it.
    let m = unsafe { d.map.try_borrow_unguarded() }.ok()?;
    let found = match key {
        Value::Str(s) => match m.get_hashed_str(s) {
            Some(v) => Some(*v),
            None => m.get(key).ok()?,
        },
        _ => m.get(key).ok()?,
    };
    let default = if site.npos == 2 { args[1] } else { Value::None };
    match found {
        Some(v) => Some(Ok(v)),
        None if site.in_place == InPlace::Get => Some(Ok(default)),
        // `setdefault` of an absent key adds it when the dict may be
        // changed (else the builtin reports why not), failing as the
        // builtin does when the entry does not fit.
        None => {
            if d.frozen.get() || d.iterating.get() != 0 {
                return None;
            }
            let added = d.map.borrow_mut().insert(key, default);
            Some(
                added
                    .map(|_| default)
                    .map_err(|e| e.prefixed("setdefault: ")),
            )
        }
    }
}

/// Appends `v` to `l` (`ListAppend`, and `xs.append(v)` in place), the
/// heap charging any growth.
#[inline(always)]
pub(super) fn append<'h>(heap: Heap<'h>, l: &ListObj<'h>, v: Value<'h>) -> Result<()> {
    heap.push(&mut l.items.borrow_mut(), v)
}

/// `Slice`: `x[lo:hi:step]` (every case in `ops`).
#[inline(never)]
pub(super) fn slice<'h>(
    heap: Heap<'h>,
    x: Value<'h>,
    lo: Value<'h>,
    hi: Value<'h>,
    step: Value<'h>,
) -> Result<Value<'h>> {
    ops::slice(heap, x, lo, hi, step)
}

/// `Unpack` of `n` values, its common case: a tuple of exactly `n`
/// items (`for k, v in d.items()`, `enumerate`), whose items go to the
/// registers. `None`: the general case decides (other kinds, errors).
#[inline(always)]
pub(super) fn unpack_tuple<'h>(v: Value<'h>, n: u16) -> Option<&'h [Value<'h>]> {
    match v {
        Value::Tuple(t) if t.items.len() == n as usize => Some(t.items),
        _ => None,
    }
}

// Iteration.

/// `ForNext` over a range iterated in registers `r = [next, left, step]`
/// (see `IterStart`), `next` being the int `v`: `v`, or `None` when the
/// range is done. The counters are updated in place (their ints only),
/// which keeps their loads in the next iteration forwarded from these
/// stores.
#[inline(always)]
pub(super) fn range_next(v: i64, r: &mut [Value<'_>; 3]) -> std::result::Result<Option<i64>, Miss> {
    const NOT_RANGE: Miss = Miss::Internal("internal error: not a range iteration");
    let Value::Int(step) = r[2] else {
        return Err(NOT_RANGE);
    };
    let Value::Int(left) = &mut r[1] else {
        return Err(NOT_RANGE);
    };
    if *left <= 0 {
        return Ok(None);
    }
    *left -= 1;
    if let Value::Int(next) = &mut r[0] {
        *next = v.wrapping_add(step);
    }
    Ok(Some(v))
}

/// `ForNext` over a list: its next item, if any. The object of the item
/// after it is prefetched: a loop over records reads each record's dict
/// (its header, then its entries) once, and those are rarely in the
/// nearest caches when a program has built many.
#[inline(always)]
pub(super) fn list_next<'h>(list: &ListObj<'h>, index: &Cell<usize>) -> Option<Value<'h>> {
    let i = index.get();
    index.set(i + 1);
    // SAFETY: the items are only read while this returns (the borrow
    // flag is checked, not counted): no `borrow_mut` is taken meanwhile.
    let items = unsafe { list.items.try_borrow_unguarded() }.ok()?;
    if let Some(&next) = items.get(i + 1) {
        prefetch_object(next);
    }
    items.get(i).copied()
}

/// Asks the processor to bring `v`'s object into the cache (for a dict,
/// also the line after its header, where [`Heap::dict`] puts the entries).
/// Only a hint: it cannot fault and changes no result.
#[inline(always)]
fn prefetch_object(v: Value<'_>) {
    // (Not under Miri, which need not model the hint.)
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p: *const i8 = match v {
            Value::Dict(d) => {
                let p = (d as *const DictObj<'_>).cast::<i8>();
                // SAFETY: a prefetch of any address is only a hint; it
                // never faults (`wrapping_add` keeps the pointer
                // arithmetic defined).
                unsafe {
                    _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(std::mem::size_of::<DictObj<'_>>()))
                };
                p
            }
            Value::List(l) => (l as *const ListObj<'_>).cast(),
            Value::Str(s) => (s as *const StrObj<'_>).cast(),
            Value::Tuple(t) => (t as *const TupleObj<'_>).cast(),
            _ => return,
        };
        // SAFETY: as above.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = v;
}

/// `ListOf`: a new list of the items of the constant tuple `k`.
#[inline]
pub(super) fn list_of<'h>(heap: Heap<'h>, k: Value<'h>) -> Result<Value<'h>> {
    match k {
        Value::Tuple(t) => heap.list(t.items),
        // `verify` allows only a tuple.
        _ => Err(Error::msg("internal error: list items not a tuple")),
    }
}

/// Fills the argument registers of a call that come from operands (see
/// [`CallSite::operands`]): both loops do this first at every call.
/// `regs` are the registers of the frame running `code`, and `site` one of
/// `code`'s call sites, checked by `verify` (its operands are registers of
/// the frame or constants of `code`, and each `r` an argument register of
/// the call).
#[inline(always)]
pub(super) fn fill_operands<'h>(code: &Code<'h>, site: &CallSite<'h>, mut regs: Regs<'h>) {
    for &(r, op) in site.operands {
        let v = *operand_ref!(code, regs, op);
        *regs.get_mut(r as usize) = v;
    }
}

/// `ForNext` over a tuple: its next item, if any.
#[inline(always)]
pub(super) fn tuple_next<'h>(items: &[Value<'h>], index: &Cell<usize>) -> Option<Value<'h>> {
    let i = index.get();
    index.set(i + 1);
    items.get(i).copied()
}

/// `ForNext` over a dict: its next key, if any.
pub(super) fn dict_next<'h>(dict: &DictObj<'h>, index: &Cell<usize>) -> Option<Value<'h>> {
    let map = dict.map.borrow();
    let mut i = index.get();
    let mut found = None;
    while let Some(e) = map.entry_at(i) {
        i += 1;
        if let Some((k, _)) = e {
            found = Some(k);
            break;
        }
    }
    index.set(i);
    found
}

/// `ForNext { iter, dst, .. }`: the loop whose state is in
/// `r[iter..iter+ITER_REGS]` (see `IterStart`) advanced, its next value
/// stored into `r[dst]`; whether there was one (the loop jumps to its
/// body) or the loop is done. `regs` are the registers of the frame
/// running the instruction (`verify` proved `iter..iter+ITER_REGS` and
/// `dst` registers of it).
#[inline(always)]
pub(super) fn for_next<'h>(
    mut regs: Regs<'h>,
    iter: Reg,
    dst: Reg,
) -> std::result::Result<bool, Miss> {
    let r = regs.array_mut::<ITER_REGS>(iter as usize);
    // `r` is no longer used when the value is stored into `r[dst]`
    // (`verify` does not keep `dst` out of the loop's registers).
    match r[0] {
        // A range: `r[iter]` is the next int, `r[iter+1]` how many are
        // left, `r[iter+2]` the step. The int is stored in its own branch
        // (a `Value` merged from several branches is stored with its
        // padding).
        Value::Int(v) => match range_next(v, r)? {
            Some(v) => {
                *regs.get_mut(dst as usize) = Value::Int(v);
                Ok(true)
            }
            None => Ok(false),
        },
        Value::Iter(it) => match iter_next(it) {
            Some(v) => {
                *regs.get_mut(dst as usize) = v;
                Ok(true)
            }
            None => Ok(false),
        },
        _ => Err(Miss::Internal("internal error: not an iterator")),
    }
}

/// `ForNext` over an iterator object: its next value, if any.
#[inline(always)]
pub(super) fn iter_next<'h>(it: &IterObj<'h>) -> Option<Value<'h>> {
    match it {
        IterObj::List { list, index } => list_next(list, index),
        IterObj::Tuple { items, index } => tuple_next(items, index),
        IterObj::Dict { dict, index } => dict_next(dict, index),
    }
}
