//! The interpreter's fast path: a small loop over the common instructions.
//!
//! [`Thread::run_fast`] runs instructions until it meets one it does not
//! handle — an instruction outside its set (`def`, `load`, unpacking, an
//! iteration's start, ...), a case it leaves to the general loop (a call
//! that needs argument binding, a capability call, a missing dict key, an
//! unbound variable), or the end of the current batch of steps — and
//! returns with the instruction pointer at that instruction, neither run
//! nor charged, for [`Thread::run_loop`] to run it in full. Keeping this
//! loop small is the point: it carries only the frame's code, the
//! instruction pointer, the registers and the steps, which the compiler can
//! then keep in machine registers, while the general loop carries far more
//! state across its many calls.
//!
//! What an instruction does is not written here but in the `semantics`
//! module, which the general loop expands too: this loop only decides,
//! per instruction, whether to run it (its common case in place, and for
//! the operators their general case out of line) or to hand it back
//! (`bail!`: a `Miss` of the semantics, or a case such as a missing key
//! that the general loop reports), and does the mechanics: dispatch, step
//! charging (a comparison and the conditional jump on its result run
//! together) and where an int result is stored. Calls of Starlark
//! functions and their returns enter and leave frames as the `calls`
//! module defines for both loops; this loop hands back those that module
//! refuses (argument binding, a stack to grow, an error) and the returns
//! the general loop must do (from a frame Rust entered, or one that leaves
//! iterations to end). Builtin functions and methods called with a few
//! positional arguments go to the same routines as in the general loop.
//! This loop's macros that have a counterpart in the general loop are
//! named `fast_...`, since they end differently (`fast_tri!` hands an
//! error back to the general loop, which reports it).
//!
//! Every instruction run here costs one step, as in the general loop, and
//! has the same effect and the same errors: an instruction that fails is
//! charged, and the error is returned with the instruction pointer just
//! past it, where the general loop reports it.

use super::calls::Resume;
use super::semantics::{self as sem, Binary as _, Compare as _, Unary as _};
use super::{Regs, Thread};
use crate::error::Result;
use crate::opcode::*;
use crate::value::*;

/// The most arguments of a builtin call made from the fast path.
const MAX_FAST_ARGS: usize = 4;

/// The most named arguments of a builtin method call made from the fast
/// path.
const MAX_FAST_NAMES: usize = 8;

/// The part of the dispatch loop's state that the fast path runs on and
/// hands back.
pub(super) struct LoopState<'h> {
    pub code: &'h Code<'h>,
    /// The next instruction (see [`Thread::run_loop`] for its invariant).
    pub ip: *const Instr,
    /// The current frame's registers (see [`Thread::run_loop`]).
    pub regs: Regs<'h>,
    /// Steps left in the current batch.
    pub fuel: i64,
}

impl<'h> Thread<'h> {
    /// Runs instructions from `st` while the fast path handles them, and
    /// returns the state where it stopped. A frame Rust entered is never
    /// returned from here.
    #[inline(never)]
    pub(super) fn run_fast(&mut self, st: LoopState<'h>) -> (LoopState<'h>, Result<()>) {
        let mut code = st.code;
        let mut ip = st.ip;
        let mut regs = st.regs;
        let mut fuel = st.fuel;

        // The register and operand accessors of `run_loop`, under the same
        // invariants (every operand proved in range by `verify`).
        macro_rules! reg {
            ($r:expr) => {
                *regs.get_mut($r as usize)
            };
        }
        // Copies the value at `$v` into a register whole (a 16-byte copy,
        // where an assignment would copy the variant's parts).
        macro_rules! copy_reg {
            ($r:expr, $v:expr) => {
                regs.copy_in($r as usize, $v)
            };
        }
        macro_rules! rk_ref {
            ($op:expr) => {
                operand_ref!(code, regs, $op)
            };
        }
        macro_rules! goto {
            ($to:expr) => {
                // SAFETY: `verify` proved every jump target in range.
                ip = unsafe { code.instrs.as_ptr().add($to as usize) }
            };
        }
        // Hands the current instruction (not run, not charged) back to the
        // general loop.
        macro_rules! bail {
            () => {{
                let st = LoopState {
                    code,
                    ip,
                    regs,
                    fuel,
                };
                return (st, Ok(()));
            }};
        }
        // Fails in the current instruction: it is charged, and `ip` is left
        // just past it, where the general loop reports errors.
        macro_rules! fast_tri {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(e) => {
                        let st = LoopState {
                            code,
                            // SAFETY: `ip` points at an instruction.
                            ip: unsafe { ip.add(1) },
                            regs,
                            fuel: fuel - 1,
                        };
                        return (st, Err(e));
                    }
                }
            };
        }
        // Charges the instruction just run (`ip` is at the next one) and
        // goes on to the next, or hands it to the general loop when the
        // batch of steps is spent. Every instruction ends here, each in its
        // own copy of this check: one check shared by all (at the loop's
        // top) cost every instruction two more taken branches, the jump to
        // the check and the check's jump to the dispatch.
        macro_rules! charged {
            () => {{
                fuel -= 1;
                if fuel <= 0 {
                    // The general loop draws the next batch.
                    bail!()
                }
                continue;
            }};
        }
        // Stores an int result and moves on: in its own branch, since
        // storing a `Value` merged from several branches copies its padding
        // too.
        macro_rules! int_result {
            ($dst:expr, $r:expr) => {{
                reg!($dst) = Value::Int($r);
                // SAFETY: as at the end of the loop.
                ip = unsafe { ip.add(1) };
                charged!()
            }};
        }
        // Charges the current instruction and continues at `to`.
        macro_rules! jump {
            ($to:expr) => {{
                goto!($to);
                charged!()
            }};
        }
        // Continues in the frame just entered or returned to (`to`, a
        // `Resume`), charging the call or return.
        macro_rules! fast_resume {
            ($to:expr) => {{
                let to: Resume<'h> = $to;
                (code, ip, regs) = (to.code, to.ip, to.regs);
                charged!()
            }};
        }
        // A binary operator `$S` (a `sem::Binary`): its int case in place,
        // the int stored in its own branch; its general case out of line.
        // `+` and `+=` test two registers, the common case, at once.
        macro_rules! add {
            ($dst:expr, $a:expr, $b:expr, $S:ty) => {{
                if ($a | $b) & RK_CONST == 0 {
                    if let (Value::Int(i), Value::Int(j)) = (reg!($a), reg!($b)) {
                        if let Some(r) = <$S>::ints(i, j) {
                            int_result!($dst, r)
                        }
                    }
                } else if let (Value::Int(i), Value::Int(j)) = (rk_ref!($a), rk_ref!($b)) {
                    if let Some(r) = <$S>::ints(*i, *j) {
                        int_result!($dst, r)
                    }
                }
                reg!($dst) = fast_tri!(<$S>::general(self.heap, rk_ref!($a), rk_ref!($b)))
            }};
        }
        macro_rules! fast_binary {
            ($dst:expr, $a:expr, $b:expr, $S:ty) => {{
                let r = match (rk_ref!($a), rk_ref!($b)) {
                    (Value::Int(i), Value::Int(j)) => <$S>::ints(*i, *j),
                    _ => None,
                };
                if let Some(r) = r {
                    int_result!($dst, r)
                }
                reg!($dst) = fast_tri!(<$S>::general(self.heap, rk_ref!($a), rk_ref!($b)))
            }};
        }
        // The int-operand forms: `r[a]` against the int `k`.
        macro_rules! fast_binary_k {
            ($dst:expr, $a:expr, $k:expr, $S:ty) => {{
                let r = match reg!($a) {
                    Value::Int(i) => <$S>::ints(i, $k as i64),
                    _ => None,
                };
                if let Some(r) = r {
                    int_result!($dst, r)
                }
                reg!($dst) = fast_tri!(<$S>::general(self.heap, &reg!($a), &Value::Int($k as i64)))
            }};
        }
        // A unary operator `$S` (a `sem::Unary`).
        macro_rules! fast_unary {
            ($dst:expr, $src:expr, $S:ty) => {{
                if let Value::Int(i) = reg!($src) {
                    if let Some(r) = <$S>::int(i) {
                        int_result!($dst, r)
                    }
                }
                reg!($dst) = fast_tri!(<$S>::general(self.heap, reg!($src)))
            }};
        }
        // Calls the builtin `$f` (with receiver `$recv`) on the arguments
        // `r[$b+1..$b+1+$n]`, `$n <= MAX_FAST_ARGS`, charging the current
        // instruction first and handing the batch of steps back around the
        // call (the builtin may run Starlark), as the general loop does.
        macro_rules! call_out {
            ($f:expr, $recv:expr, $b:expr, $n:expr) => {{
                let n: usize = $n;
                let mut args = [Value::None; MAX_FAST_ARGS];
                for (i, a) in args[..n].iter_mut().enumerate() {
                    *a = reg!($b as usize + 1 + i);
                }
                fuel -= 1;
                self.budget.put_fuel(fuel as u64);
                let r = self.call_builtin_cold($f, $recv, &args[..n]);
                // (Charged again when the instruction ends.)
                fuel = self.budget.take_fuel() as i64 + 1;
                let base = self.frame_base();
                // SAFETY: the current frame is on top again, and the stack,
                // which Starlark run by the builtin may have grown, holds
                // its registers.
                regs = unsafe { Regs::new(&mut self.stack, base, code.nregs as usize) };
                r
            }};
        }
        // Stores the result `$t` of a comparison into `r[$dst]`. When the
        // next instruction is a conditional jump on that register, it runs
        // here too, without a dispatch: the same two instructions in the
        // same order, charged a step each (and only when the batch holds
        // both steps).
        macro_rules! compared {
            ($dst:expr, $t:expr) => {{
                let t: bool = $t;
                reg!($dst) = Value::Bool(t);
                // SAFETY: a comparison is never the last instruction (the
                // code ends in a return or jump), so the next one exists.
                let next = unsafe { ip.add(1) };
                // SAFETY: as above.
                let jump = match *unsafe { &*next } {
                    Instr::JumpIfFalse { cond, to } if cond == $dst => Some((!t, to)),
                    Instr::JumpIfTrue { cond, to } if cond == $dst => Some((t, to)),
                    _ => None,
                };
                if let Some((taken, to)) = jump {
                    if fuel >= 2 {
                        // The comparison's step; then the jump's, charged
                        // by `jump!` or when it falls through below.
                        fuel -= 1;
                        if taken {
                            jump!(to);
                        }
                        ip = next;
                    }
                }
            }};
        }
        // A comparison `$S` (a `sem::Compare`).
        macro_rules! fast_compare {
            ($dst:expr, $a:expr, $b:expr, $S:ty) => {{
                let t = match (rk_ref!($a), rk_ref!($b)) {
                    (Value::Int(i), Value::Int(j)) => <$S>::ints(i, j),
                    (x, y) => fast_tri!(<$S>::general(self.heap, *x, *y)),
                };
                compared!($dst, t)
            }};
        }
        macro_rules! fast_compare_k {
            ($dst:expr, $a:expr, $k:expr, $S:ty) => {{
                let t = match reg!($a) {
                    Value::Int(i) => <$S>::ints(&i, &($k as i64)),
                    x => fast_tri!(<$S>::general(self.heap, x, Value::Int($k as i64))),
                };
                compared!($dst, t)
            }};
        }
        // The value of a variable or an operand of the expected kind, or
        // the instruction back to the general loop, which reports the miss.
        macro_rules! or_back {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(_) => bail!(),
                }
            };
        }

        if fuel <= 0 {
            bail!()
        }
        loop {
            // Each arm runs the instruction at `ip`, or bails out, or jumps
            // (charging it); falling out of the match charges it and moves
            // to the next one.
            // SAFETY: `ip` points at an instruction (its invariant).
            match *unsafe { &*ip } {
                Instr::Move { dst, src } => match reg!(src) {
                    // An int is copied by its parts: it was most likely just
                    // written that way, and a whole-value load of parts
                    // just stored stalls store-to-load forwarding.
                    Value::Int(i) => int_result!(dst, i),
                    v => reg!(dst) = v,
                },
                Instr::Const { dst, k } => {
                    // SAFETY: `verify` proved every constant index in range.
                    reg!(dst) = *unsafe { code.consts.get_unchecked(k as usize) }
                }
                Instr::CheckBound { reg, .. } => or_back!(sem::check_bound(&reg!(reg))),
                Instr::LoadGlobal { dst, g } => {
                    reg!(dst) = or_back!(sem::load_global(&self.globals, g as usize))
                }
                Instr::LoadCell { dst, slot } => reg!(dst) = or_back!(sem::load_cell(&reg!(slot))),
                Instr::StoreCell { slot, src } => {
                    or_back!(sem::store_cell(
                        regs.get(slot as usize),
                        *regs.get(src as usize)
                    ))
                }
                Instr::LoadFree { dst, idx } => {
                    let func = self.frames.last().and_then(|f| f.func);
                    reg!(dst) = or_back!(sem::load_free(func, idx as usize))
                }
                Instr::Neg { dst, src } => fast_unary!(dst, src, sem::Neg),
                Instr::Plus { dst, src } => fast_unary!(dst, src, sem::Plus),
                Instr::Invert { dst, src } => fast_unary!(dst, src, sem::Invert),
                Instr::Add { dst, a, b } => add!(dst, a, b, sem::Add),
                Instr::InplaceAdd { dst, a, b } => add!(dst, a, b, sem::InplaceAdd),
                Instr::Sub { dst, a, b } => fast_binary!(dst, a, b, sem::Sub),
                Instr::Mul { dst, a, b } => fast_binary!(dst, a, b, sem::Mul),
                Instr::Div { dst, a, b } => fast_binary!(dst, a, b, sem::Div),
                Instr::FloorDiv { dst, a, b } => fast_binary!(dst, a, b, sem::FloorDiv),
                Instr::Mod { dst, a, b } => fast_binary!(dst, a, b, sem::Mod),
                Instr::BitAnd { dst, a, b } => fast_binary!(dst, a, b, sem::BitAnd),
                Instr::BitOr { dst, a, b } => fast_binary!(dst, a, b, sem::BitOr),
                Instr::BitXor { dst, a, b } => fast_binary!(dst, a, b, sem::BitXor),
                Instr::Shl { dst, a, b } => fast_binary!(dst, a, b, sem::Shl),
                Instr::Shr { dst, a, b } => fast_binary!(dst, a, b, sem::Shr),
                // Membership decided in place (a dict's key, a string among
                // a few) is a comparison's result, run with a jump on it;
                // anything else takes the operator.
                Instr::In { dst, a, b } => match sem::contains_in_place(rk_ref!(a), rk_ref!(b)) {
                    Some(t) => compared!(dst, t),
                    None => fast_binary!(dst, a, b, sem::In),
                },
                Instr::NotIn { dst, a, b } => {
                    match sem::contains_in_place(rk_ref!(a), rk_ref!(b)) {
                        Some(t) => compared!(dst, !t),
                        None => fast_binary!(dst, a, b, sem::NotIn),
                    }
                }
                Instr::AddI { dst, a, k } => fast_binary_k!(dst, a, k, sem::Add),
                Instr::InplaceAddI { dst, a, k } => fast_binary_k!(dst, a, k, sem::InplaceAdd),
                Instr::SubI { dst, a, k } => fast_binary_k!(dst, a, k, sem::Sub),
                Instr::MulI { dst, a, k } => fast_binary_k!(dst, a, k, sem::Mul),
                Instr::ModI { dst, a, k } => fast_binary_k!(dst, a, k, sem::Mod),
                Instr::Eq { dst, a, b } => fast_compare!(dst, a, b, sem::Eq),
                Instr::Ne { dst, a, b } => fast_compare!(dst, a, b, sem::Ne),
                Instr::Lt { dst, a, b } => fast_compare!(dst, a, b, sem::Lt),
                Instr::Le { dst, a, b } => fast_compare!(dst, a, b, sem::Le),
                Instr::Gt { dst, a, b } => fast_compare!(dst, a, b, sem::Gt),
                Instr::Ge { dst, a, b } => fast_compare!(dst, a, b, sem::Ge),
                Instr::EqI { dst, a, k } => fast_compare_k!(dst, a, k, sem::Eq),
                Instr::NeI { dst, a, k } => fast_compare_k!(dst, a, k, sem::Ne),
                Instr::LtI { dst, a, k } => fast_compare_k!(dst, a, k, sem::Lt),
                Instr::LeI { dst, a, k } => fast_compare_k!(dst, a, k, sem::Le),
                Instr::GtI { dst, a, k } => fast_compare_k!(dst, a, k, sem::Gt),
                Instr::GeI { dst, a, k } => fast_compare_k!(dst, a, k, sem::Ge),
                Instr::MakeList { dst, base: b, n } => {
                    // `verify` proved `r[b..b+n]` in range.
                    let items = regs.slice(b as usize, n as usize);
                    reg!(dst) = fast_tri!(self.heap.list(items));
                }
                Instr::ListOf { dst, k } => {
                    // SAFETY: `verify` proved the constant index in range.
                    let items = *unsafe { code.consts.get_unchecked(k as usize) };
                    reg!(dst) = fast_tri!(sem::list_of(self.heap, items));
                }
                Instr::MakeTuple { dst, base: b, n } => {
                    // `verify` proved `r[b..b+n]` in range.
                    let items = regs.slice(b as usize, n as usize);
                    reg!(dst) = fast_tri!(self.heap.tuple(items));
                }
                Instr::Not { dst, src } => reg!(dst) = sem::not(reg!(src)),
                Instr::Jump { to } => jump!(to),
                Instr::JumpIfFalse { cond, to } => {
                    let t = reg!(cond).is_truthy();
                    if !t {
                        jump!(to);
                    }
                }
                Instr::JumpIfTrue { cond, to } => {
                    let t = reg!(cond).is_truthy();
                    if t {
                        jump!(to);
                    }
                }
                Instr::ForNext { iter, dst, body } => {
                    // `verify` proved `r[iter..iter+ITER_REGS]` and `r[dst]`
                    // in range.
                    if or_back!(sem::for_next(regs, iter, dst)) {
                        jump!(body);
                    }
                }
                Instr::IterStart { dst, src, fill } => {
                    // `verify` proved `r[src]`, `r[dst..dst+ITER_REGS]` and
                    // any `r[fill]` in range.
                    fast_tri!(self.start_loop(regs, dst, src, fill))
                }
                Instr::IterEnd { iter } => self.loop_end(reg!(iter)),
                Instr::Index { dst, x, i, hint } => {
                    // SAFETY: `verify` proved every hint cell in range.
                    let hint = unsafe { code.hints.get_unchecked(hint as usize) };
                    if let Some(v) = sem::dict_str_index(reg!(x), rk_ref!(i), hint) {
                        copy_reg!(dst, v)
                    } else {
                        match sem::index_common(reg!(x), rk_ref!(i)) {
                            Some(v) => reg!(dst) = v,
                            // A missing or unhashable key is reported by
                            // the general loop.
                            None => bail!(),
                        }
                    }
                }
                Instr::SetIndex { x, i, src, hint } => {
                    let Some(d) = sem::set_index_target(reg!(x)) else {
                        bail!()
                    };
                    // SAFETY: `verify` proved every hint cell in range.
                    let hint = unsafe { code.hints.get_unchecked(hint as usize) };
                    fast_tri!(sem::dict_set(d, *rk_ref!(i), reg!(src), Some(hint)));
                }
                Instr::ListAppend { list, src } => {
                    let l = or_back!(sem::list_operand(reg!(list)));
                    fast_tri!(sem::append(self.heap, l, reg!(src)));
                }
                Instr::MakeRecord { dst, rec } => {
                    // SAFETY: `verify` proved the record in range, and its
                    // value registers.
                    let rec = unsafe { code.records.get_unchecked(rec as usize) };
                    // Its steps: `1 + n` (see `Instr::MakeRecord`), the
                    // `n` here when the batch holds them all.
                    let n = rec.keys.len() as i64;
                    if fuel <= n {
                        bail!()
                    }
                    fuel -= n;
                    reg!(dst) =
                        fast_tri!(sem::make_record(self.heap, rec, |r| *regs.get(r as usize)));
                }
                Instr::MakeDict { dst, n } => {
                    let d = fast_tri!(self.heap.dict(n as usize));
                    reg!(dst) = Value::Dict(d);
                }
                Instr::DictSetUnique { dict, key, src } => {
                    let d = or_back!(sem::dict_operand(reg!(dict)));
                    fast_tri!(sem::dict_set_unique(d, reg!(key), reg!(src), self.budget));
                }
                Instr::Slice { dst, base: b } => {
                    // `verify` proved `r[b..b+4]` in range.
                    let b = b as usize;
                    reg!(dst) = fast_tri!(sem::slice(
                        self.heap,
                        reg!(b),
                        reg!(b + 1),
                        reg!(b + 2),
                        reg!(b + 3)
                    ));
                }
                Instr::Percent { dst, t, src } => {
                    // SAFETY: `verify` proved the template index in range,
                    // and its argument registers `r[src..src+nargs]`.
                    let t = unsafe { code.templates.get_unchecked(t as usize) };
                    // The argument registers `r[src..src+nargs]` are below
                    // `nregs` (`verify`).
                    let args = regs.slice(src as usize, t.nargs());
                    reg!(dst) = fast_tri!(sem::percent(self.heap, t, args));
                }
                Instr::Unpack { base: b, src, n } => {
                    let Some(items) = sem::unpack_tuple(reg!(src), n) else {
                        bail!()
                    };
                    for (k, &x) in items.iter().enumerate() {
                        // `verify` proved `r[b..b+n]` in range.
                        reg!(b as usize + k) = x;
                    }
                }
                Instr::DictPushNew { dict, k, src } => {
                    let d = or_back!(sem::dict_operand(reg!(dict)));
                    // SAFETY: `verify` proved every constant index in range.
                    let key = *unsafe { code.consts.get_unchecked(k as usize) };
                    fast_tri!(sem::dict_push_new(d, key, reg!(src)));
                }
                Instr::DictSet { dict, key, src } => {
                    let d = or_back!(sem::dict_operand(reg!(dict)));
                    fast_tri!(sem::dict_set(d, reg!(key), reg!(src), None));
                }
                Instr::CallMethod { dst, base: b, site } => {
                    // SAFETY: `verify` proved the call site in range.
                    let site = unsafe { code.sites.get_unchecked(site as usize) };
                    // `verify` checked the site's operands.
                    sem::fill_operands(code, site, regs);
                    // `verify` proved the receiver's register in range.
                    let recv = reg!(site.recv);
                    if let Some(l) = sem::append_target(site, recv) {
                        // `verify` proved the argument `r[b+1]` in range.
                        fast_tri!(sem::append(self.heap, l, reg!(b as usize + 1)));
                        reg!(dst) = Value::None;
                    } else if let Some(v) = sem::dict_get_in_place(
                        site,
                        recv,
                        // `verify` proved the arguments `r[b+1..b+1+npos]`
                        // in range.
                        regs.slice(b as usize + 1, site.npos as usize),
                    ) {
                        reg!(dst) = fast_tri!(v);
                    } else if let Some(v) = sem::str_method_in_place(
                        self,
                        site,
                        recv,
                        regs.slice(b as usize + 1, site.npos as usize),
                    ) {
                        reg!(dst) = fast_tri!(v);
                    } else if site.plain {
                        // Other builtin methods with plain arguments. No
                        // method runs Starlark or touches the frames or the
                        // stack (they are leaves: see `builtins::method`),
                        // so the arguments are read where they are, and the
                        // loop's state (its steps, its registers) stays
                        // valid across the call.
                        let Some(m) = super::site_method(site, recv) else {
                            bail!()
                        };
                        // `verify` proved the arguments `r[b+1..b+1+npos]`
                        // in range; nothing writes the registers while the
                        // method runs.
                        let args = regs.slice(b as usize + 1, site.npos as usize);
                        reg!(dst) = fast_tri!(self.call_method_leaf(m, recv, args, &[]));
                    } else if !site.star && !site.star_star && site.names.len() <= MAX_FAST_NAMES {
                        // Builtin methods with named arguments
                        // (`row.format(name=...)`): the same, the names
                        // paired with their values (in the registers after
                        // the positional ones) on the stack.
                        let Some(m) = super::site_method(site, recv) else {
                            bail!()
                        };
                        let npos = site.npos as usize;
                        let mut pairs = [("", Value::None); MAX_FAST_NAMES];
                        for (k, name) in site.names.iter().enumerate() {
                            // `verify` proved the arguments
                            // `r[b+1..b+1+nargs]` in range.
                            pairs[k] = (name, reg!(b as usize + 1 + npos + k));
                        }
                        let args = regs.slice(b as usize + 1, npos);
                        let named = &pairs[..site.names.len()];
                        reg!(dst) = fast_tri!(self.call_method_leaf(m, recv, args, named));
                    } else {
                        bail!()
                    }
                }
                Instr::Call { dst, base: b, site } => {
                    // SAFETY: `verify` proved the call site in range.
                    let site = unsafe { code.sites.get_unchecked(site as usize) };
                    // `verify` checked the site's operands.
                    sem::fill_operands(code, site, regs);
                    let func = match reg!(b) {
                        Value::Function(func) => func,
                        Value::Builtin(f) if site.plain && site.npos as usize <= MAX_FAST_ARGS => {
                            // The argument register exists only when there
                            // is an argument (`verify` proved `r[b..b+1+npos]`
                            // in range, and no more).
                            let quick = match site.npos {
                                1 => {
                                    sem::builtin_in_place(self.heap, f, site, reg!(b as usize + 1))
                                }
                                _ => None,
                            };
                            reg!(dst) = fast_tri!(match quick {
                                Some(r) => r,
                                None => call_out!(f, None, b, site.npos as usize),
                            });
                            // SAFETY: as at the end of the loop.
                            ip = unsafe { ip.add(1) };
                            charged!()
                        }
                        _ => bail!(),
                    };
                    // SAFETY: `ip` points at the call, inside the code.
                    let pc = unsafe { ip.offset_from(code.instrs.as_ptr()) } as usize + 1;
                    // SAFETY: the operands are the call's.
                    match unsafe { self.enter_call(code, pc, func, site, b, dst) } {
                        Ok(to) => fast_resume!(to),
                        // Argument binding, a stack to grow and the errors
                        // are the general loop's.
                        Err(_) => bail!(),
                    }
                }
                Instr::Return { src } => {
                    // A frame Rust entered returns from the general loop
                    // (which ends that run), as does a frame that leaves
                    // iterations to end. (Not a `stop` parameter: a value
                    // live across the whole loop costs a spill and a reload
                    // in every instruction.) Any other frame has a caller.
                    let n = self.frames.len();
                    if n < 2 {
                        bail!()
                    }
                    let fr = &self.frames[n - 1];
                    if fr.entry || self.iters.len() != fr.iters {
                        bail!()
                    }
                    let to = self.exit_frame(*rk_ref!(src));
                    fast_resume!(to)
                }
                general_only!() => bail!(),
            }
            // SAFETY: the instruction just run is not the last one (the
            // code ends in an unconditional return or jump, which never
            // falls through), so the next one exists.
            ip = unsafe { ip.add(1) };
            charged!()
        }
    }
}

impl<'h> Thread<'h> {
    /// Calls the builtin method `m` of `recv`, a leaf (see the
    /// `CallMethod` arm of the fast path).
    #[inline(never)]
    fn call_method_leaf(
        &mut self,
        m: &'static crate::builtins::BuiltinFn,
        recv: Value<'h>,
        args: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<Value<'h>> {
        #[cfg(debug_assertions)]
        let (frames, stack) = (self.frames.len(), self.stack.as_ptr());
        let r = self.call_builtin(m, Some(recv), args, named);
        #[cfg(debug_assertions)]
        debug_assert!(
            frames == self.frames.len() && std::ptr::eq(stack, self.stack.as_ptr()),
            "method {} is not a leaf",
            m.name
        );
        r
    }

    #[cold]
    #[inline(never)]
    fn call_builtin_cold(
        &mut self,
        f: &'static crate::builtins::BuiltinFn,
        recv: Option<Value<'h>>,
        args: &[Value<'h>],
    ) -> Result<Value<'h>> {
        // `sorted(x)` of a few items (a record's labels) without parsing
        // `sorted`'s parameters: the builtin's own small sort. (Here, out
        // of the loop: a test in the loop cost every other call more.)
        if let ([x], true) = (args, std::ptr::eq(f, &crate::builtins::universe::SORTED)) {
            if let Some(r) = crate::builtins::universe::sorted_few(self, *x, false) {
                return r;
            }
        }
        self.call_builtin(f, recv, args, &[])
    }
}
