//! The general dispatch loop, [`Thread::run_loop`]: runs every
//! instruction, entering the fast path (the `fast` module) for the common
//! ones and running itself whatever the fast path hands back, in full —
//! argument binding, calls out of the loop, iteration, errors with their
//! positions. It is also the loop's only safe point, where the collector
//! may run.

use super::calls::{self, Refused, Resume};
use super::fast::LoopState;
use super::semantics::{self as sem, Binary as _, Compare as _, Unary as _};
use super::{Regs, Thread};
use crate::builtins::{self, BuiltinFn};
use crate::error::{Error, ErrorKind, LimitKind, Result};
use crate::opcode::*;
use crate::value::*;
use codemode_lang::Hint;

impl<'h> Thread<'h> {
    /// The main loop: runs until the frame at index `stop` returns, and
    /// returns its result.
    pub(super) fn run(&mut self, stop: usize) -> Result<Value<'h>> {
        self.run_loop(stop)
            .map_err(|e| self.attribute_first(e, stop))
    }

    /// The error starlark-go reports for `e`, raised while the frames from
    /// `stop` up ran: starlark-go looks a method up before it evaluates the
    /// call's arguments, where codemode looks it up at the call. So if a
    /// frame failed (or called what failed) while evaluating the arguments
    /// of a method call whose receiver lacks the method, that missing
    /// attribute is the error, taking the outermost frame and call first.
    /// Only the error path pays for this.
    #[cold]
    pub(super) fn attribute_first(&mut self, e: Error, stop: usize) -> Error {
        if !matches!(e.kind(), ErrorKind::Eval { .. }) {
            return e;
        }
        for k in stop..self.frames.len() {
            let (code, base, pc) = {
                let f = &self.frames[k];
                (f.code, f.base, f.pc)
            };
            let Some(i) = pc.checked_sub(1) else {
                continue;
            };
            let mut pending: Vec<&CallSite<'h>> = code
                .sites
                .iter()
                .filter(|s| !s.method.is_empty() && s.args as usize <= i && i < s.call as usize)
                .collect();
            pending.sort_by_key(|s| s.args);
            for site in pending {
                let Some(&recv) = self.stack.get(base + site.recv as usize) else {
                    continue;
                };
                if let Err(missing) = self.get_attr(recv, site.method) {
                    return missing.at(site.attr_pos);
                }
            }
        }
        e
    }

    /// The dispatch loop. The current batch of steps lives in the local
    /// `fuel` (a register, not memory) and goes back to the budget on every
    /// way out of the loop and around every call out of it. An instruction
    /// costs one decrement of `fuel` and a sign test.
    pub(super) fn run_loop(&mut self, stop: usize) -> Result<Value<'h>> {
        let budget = self.budget;
        let mut fuel = budget.take_fuel() as i64;
        let heap = self.heap;
        let (mut code, base, start_pc) = {
            let f = &self.frames[self.frames.len() - 1];
            (f.code, f.base, f.pc)
        };
        // The next instruction. Invariant: it points into `code.instrs` (or
        // one past an instruction that was just dispatched); `verify` proved
        // every jump target in range and that the code ends in an
        // unconditional return or jump, so it never runs past the end.
        // SAFETY: a frame's saved `pc` is within its code.
        let mut ip: *const Instr = unsafe { code.instrs.as_ptr().add(start_pc) };
        let mut positional: Vec<Value<'h>> = Vec::new();
        let mut named: Vec<(&'h str, Value<'h>)> = Vec::new();
        // The current frame's registers. Invariant: `self.stack.len() >=
        // base + code.nregs` while the frame runs (`base` being the current
        // frame's, [`Thread::frame_base`]), and `regs` are
        // `self.stack[base..base + code.nregs]`; they are made anew after
        // anything that may reallocate the stack (a frame entered or left,
        // by `resume!`; any call out of the loop, by `sync!`). Every
        // operand was proved in range by `verify`, which is what makes the
        // unchecked accesses of [`Regs`] sound.
        // SAFETY: the stack holds the registers of every frame on it.
        let mut regs = unsafe { Regs::new(&mut self.stack, base, code.nregs as usize) };

        macro_rules! sync {
            () => {
                let base = self.frame_base();
                // SAFETY: `self.stack.len() >= base + code.nregs` (the
                // invariant above).
                regs = unsafe { Regs::new(&mut self.stack, base, code.nregs as usize) }
            };
        }
        // The register and operand accessors (the fast loop's are the
        // same).
        macro_rules! reg {
            ($r:expr) => {
                *regs.get_mut($r as usize)
            };
        }
        macro_rules! konst {
            ($k:expr) => {
                // SAFETY: `verify` proved every constant index in range.
                *unsafe { code.consts.get_unchecked($k as usize) }
            };
        }
        macro_rules! rk {
            ($op:expr) => {{
                let op = $op;
                if op & RK_CONST != 0 {
                    konst!(op & !RK_CONST)
                } else {
                    reg!(op)
                }
            }};
        }
        macro_rules! rk_ref {
            ($op:expr) => {
                operand_ref!(code, regs, $op)
            };
        }
        // The index of the next instruction.
        macro_rules! pc {
            () => {
                // SAFETY: `ip` points into (or one past the end of)
                // `code.instrs`.
                unsafe { ip.offset_from(code.instrs.as_ptr()) as usize }
            };
        }
        // Continues at instruction `to`.
        macro_rules! goto {
            ($to:expr) => {
                // SAFETY: `verify` proved every jump target in range.
                ip = unsafe { code.instrs.as_ptr().add($to as usize) }
            };
        }
        // Saves the current frame's resume point (before a call).
        macro_rules! save_pc {
            ($pc:expr) => {
                if let Some(f) = self.frames.last_mut() {
                    f.pc = $pc;
                }
            };
        }
        macro_rules! fail {
            ($e:expr) => {{
                let e: Error = $e;
                budget.put_fuel(fuel as u64);
                let pc = pc!();
                save_pc!(pc);
                return Err(e.at(code.positions[pc - 1]));
            }};
        }
        macro_rules! tri {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(e) => fail!(e),
                }
            };
        }
        // Charges one step, drawing the next batch when this one is spent
        // (and failing when the budget has no more).
        macro_rules! charge_step {
            () => {
                fuel -= 1;
                if fuel < 0 {
                    fuel = match budget.draw_steps() {
                        Ok(f) => f as i64 - 1,
                        Err(e) => {
                            fuel = 0;
                            fail!(e)
                        }
                    };
                }
            };
        }
        // Hands the batch of steps back around a call out of the loop.
        macro_rules! out {
            ($e:expr) => {{
                budget.put_fuel(fuel as u64);
                let r = $e;
                fuel = budget.take_fuel() as i64;
                sync!();
                r
            }};
        }
        // Continues the loop in the frame just entered or returned to
        // (`to`, a `Resume`).
        macro_rules! resume {
            ($to:expr) => {{
                let to: Resume<'h> = $to;
                (code, ip, regs) = (to.code, to.ip, to.regs);
                continue;
            }};
        }
        // Calls the value `$f` on the arguments in `positional` and `named`,
        // the result for `r[$dst]`: a Starlark function goes on in this loop
        // (its frame entered with argument binding), anything else is
        // called out of the loop and gives its result.
        macro_rules! call_value {
            ($f:expr, $dst:expr) => {{
                let f: Value<'h> = $f;
                if let Value::Function(func) = f {
                    let pc = pc!();
                    let to = tri!(self.enter_bound(code, pc, func, $dst, &positional, &named));
                    resume!(to)
                }
                out!(self.call_native(f, &positional, &named))
            }};
        }
        // A binary operator `$S` (a `sem::Binary`): its int case, the int
        // stored in its own branch (storing a merged `Value` copies its
        // padding too), then its general case.
        macro_rules! binary {
            ($dst:expr, $a:expr, $b:expr, $S:ty) => {{
                if let (Value::Int(i), Value::Int(j)) = (rk_ref!($a), rk_ref!($b)) {
                    if let Some(r) = <$S>::ints(*i, *j) {
                        reg!($dst) = Value::Int(r);
                        continue;
                    }
                }
                let v = tri!(<$S>::general(heap, rk_ref!($a), rk_ref!($b)));
                reg!($dst) = v;
            }};
        }
        // The int-operand forms: `r[a]` against the int `k`.
        macro_rules! binary_k {
            ($dst:expr, $a:expr, $k:expr, $S:ty) => {{
                if let Value::Int(i) = reg!($a) {
                    if let Some(r) = <$S>::ints(i, $k as i64) {
                        reg!($dst) = Value::Int(r);
                        continue;
                    }
                }
                let v = tri!(<$S>::general(heap, &reg!($a), &Value::Int($k as i64)));
                reg!($dst) = v;
            }};
        }
        // A unary operator `$S` (a `sem::Unary`).
        macro_rules! unary {
            ($dst:expr, $src:expr, $S:ty) => {{
                let x = reg!($src);
                if let Value::Int(i) = x {
                    if let Some(r) = <$S>::int(i) {
                        reg!($dst) = Value::Int(r);
                        continue;
                    }
                }
                let v = tri!(<$S>::general(heap, x));
                reg!($dst) = v;
            }};
        }
        // A comparison `$S` (a `sem::Compare`).
        macro_rules! compare {
            ($dst:expr, $a:expr, $b:expr, $S:ty) => {{
                if let (Value::Int(i), Value::Int(j)) = (rk_ref!($a), rk_ref!($b)) {
                    reg!($dst) = Value::Bool(<$S>::ints(i, j));
                    continue;
                }
                let v = tri!(<$S>::general(heap, rk!($a), rk!($b)));
                reg!($dst) = Value::Bool(v);
            }};
        }
        macro_rules! compare_k {
            ($dst:expr, $a:expr, $k:expr, $S:ty) => {{
                if let Value::Int(i) = reg!($a) {
                    reg!($dst) = Value::Bool(<$S>::ints(&i, &($k as i64)));
                    continue;
                }
                let v = tri!(<$S>::general(heap, reg!($a), Value::Int($k as i64)));
                reg!($dst) = Value::Bool(v);
            }};
        }
        // The value of a variable or an operand of the expected kind, or
        // the error of a miss: `$unbound` is the message of an unbound
        // variable (omitted where the miss cannot be one).
        macro_rules! or_fail {
            ($e:expr, $unbound:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(sem::Miss::Unbound) => fail!(Error::msg($unbound)),
                    Err(sem::Miss::Internal(m)) => fail!(Error::msg(m)),
                }
            };
            ($e:expr) => {
                or_fail!($e, "internal error: unbound")
            };
        }

        loop {
            // A safe point (and the only one): the scratch argument vectors
            // are empty between instructions (a call fills them and they
            // are cleared before the next), and the locals of this loop
            // hold no value (the registers are in the thread's stack,
            // which a collection rewrites in place).
            if budget.gc_due() {
                positional.clear();
                named.clear();
                if let Err(e) = self.safe_point() {
                    // Between instructions: the error (the deadline, or
                    // cancellation) has no position.
                    budget.put_fuel(fuel as u64);
                    save_pc!(pc!());
                    return Err(e);
                }
            }
            // The common cases run in the fast path, which hands back the
            // first instruction it leaves to this loop. It is not entered
            // for an instruction it would hand straight back (a call of a
            // capability, a `def`, ...), which saves the round trip between
            // instructions that all run here.
            // SAFETY: `ip` points at an instruction (its invariant).
            let leave_here = cfg!(feature = "no-fast-path")
                || match *unsafe { &*ip } {
                    Instr::Call { base: b, .. } => {
                        !matches!(reg!(b), Value::Function(_) | Value::Builtin(_))
                    }
                    general_only!() => true,
                    _ => false,
                };
            if !leave_here {
                let st = LoopState {
                    code,
                    ip,
                    regs,
                    fuel,
                };
                let (st, r) = self.run_fast(st);
                (code, ip, regs, fuel) = (st.code, st.ip, st.regs, st.fuel);
                if let Err(e) = r {
                    fail!(e)
                }
            }
            let at = ip;
            // SAFETY: `ip` points at an instruction (its invariant), so one
            // past it is at most one past the end of `instrs`.
            ip = unsafe { ip.add(1) };
            charge_step!();
            // Matching the place (not a copy of the 12-byte instruction)
            // loads only the fields each arm uses.
            // SAFETY: `ip` pointed at an instruction (its invariant).
            match *unsafe { &*at } {
                Instr::Move { dst, src } => reg!(dst) = reg!(src),
                Instr::Const { dst, k } => reg!(dst) = konst!(k),
                Instr::CheckBound { reg, name } => or_fail!(sem::check_bound(&reg!(reg)), {
                    let n = konst!(name).as_str().unwrap_or("?");
                    format!("local variable {n} referenced before assignment")
                }),
                Instr::LoadGlobal { dst, g } => {
                    let v = or_fail!(
                        sem::load_global(&self.globals, g as usize),
                        format!(
                            "global variable {} referenced before assignment",
                            self.global_names[g as usize]
                        )
                    );
                    reg!(dst) = v;
                }
                Instr::StoreGlobal { g, src } => self.globals[g as usize] = reg!(src),
                Instr::LoadCell { dst, slot } => {
                    let v = or_fail!(
                        sem::load_cell(&reg!(slot)),
                        format!(
                            "local variable {} referenced before assignment",
                            code.local_names.get(slot as usize).copied().unwrap_or("?")
                        )
                    );
                    reg!(dst) = v;
                }
                Instr::StoreCell { slot, src } => {
                    or_fail!(sem::store_cell(
                        regs.get(slot as usize),
                        *regs.get(src as usize)
                    ))
                }
                Instr::LoadFree { dst, idx } => {
                    let func = self.frames.last().and_then(|f| f.func);
                    let v = or_fail!(
                        sem::load_free(func, idx as usize),
                        format!(
                            "local variable {} referenced before assignment",
                            code.freevars.get(idx as usize).map(|f| f.0).unwrap_or("?")
                        )
                    );
                    reg!(dst) = v;
                }
                Instr::Add { dst, a, b } => binary!(dst, a, b, sem::Add),
                Instr::InplaceAdd { dst, a, b } => binary!(dst, a, b, sem::InplaceAdd),
                Instr::InplaceOr { dst, a, b } => binary!(dst, a, b, sem::InplaceOr),
                Instr::Sub { dst, a, b } => binary!(dst, a, b, sem::Sub),
                Instr::Mul { dst, a, b } => binary!(dst, a, b, sem::Mul),
                Instr::Div { dst, a, b } => binary!(dst, a, b, sem::Div),
                Instr::FloorDiv { dst, a, b } => binary!(dst, a, b, sem::FloorDiv),
                Instr::Mod { dst, a, b } => binary!(dst, a, b, sem::Mod),
                Instr::BitAnd { dst, a, b } => binary!(dst, a, b, sem::BitAnd),
                Instr::BitOr { dst, a, b } => binary!(dst, a, b, sem::BitOr),
                Instr::BitXor { dst, a, b } => binary!(dst, a, b, sem::BitXor),
                Instr::Shl { dst, a, b } => binary!(dst, a, b, sem::Shl),
                Instr::Shr { dst, a, b } => binary!(dst, a, b, sem::Shr),
                Instr::In { dst, a, b } => binary!(dst, a, b, sem::In),
                Instr::NotIn { dst, a, b } => binary!(dst, a, b, sem::NotIn),
                Instr::Eq { dst, a, b } => compare!(dst, a, b, sem::Eq),
                Instr::Ne { dst, a, b } => compare!(dst, a, b, sem::Ne),
                Instr::Lt { dst, a, b } => compare!(dst, a, b, sem::Lt),
                Instr::Le { dst, a, b } => compare!(dst, a, b, sem::Le),
                Instr::Gt { dst, a, b } => compare!(dst, a, b, sem::Gt),
                Instr::Ge { dst, a, b } => compare!(dst, a, b, sem::Ge),
                Instr::AddI { dst, a, k } => binary_k!(dst, a, k, sem::Add),
                Instr::InplaceAddI { dst, a, k } => binary_k!(dst, a, k, sem::InplaceAdd),
                Instr::SubI { dst, a, k } => binary_k!(dst, a, k, sem::Sub),
                Instr::MulI { dst, a, k } => binary_k!(dst, a, k, sem::Mul),
                Instr::ModI { dst, a, k } => binary_k!(dst, a, k, sem::Mod),
                Instr::EqI { dst, a, k } => compare_k!(dst, a, k, sem::Eq),
                Instr::NeI { dst, a, k } => compare_k!(dst, a, k, sem::Ne),
                Instr::LtI { dst, a, k } => compare_k!(dst, a, k, sem::Lt),
                Instr::LeI { dst, a, k } => compare_k!(dst, a, k, sem::Le),
                Instr::GtI { dst, a, k } => compare_k!(dst, a, k, sem::Gt),
                Instr::GeI { dst, a, k } => compare_k!(dst, a, k, sem::Ge),
                Instr::Neg { dst, src } => unary!(dst, src, sem::Neg),
                Instr::Plus { dst, src } => unary!(dst, src, sem::Plus),
                Instr::Invert { dst, src } => unary!(dst, src, sem::Invert),
                Instr::Not { dst, src } => reg!(dst) = sem::not(reg!(src)),
                Instr::Jump { to } => goto!(to),
                Instr::JumpIfFalse { cond, to } => {
                    let t = reg!(cond).is_truthy();
                    if !t {
                        goto!(to);
                    }
                }
                Instr::JumpIfTrue { cond, to } => {
                    let t = reg!(cond).is_truthy();
                    if t {
                        goto!(to);
                    }
                }
                Instr::IterStart { dst, src, fill } => {
                    // `verify` proved `r[src]`, `r[dst..dst+ITER_REGS]` and
                    // any `r[fill]` in range.
                    tri!(self.start_loop(regs, dst, src, fill))
                }
                Instr::ForNext { iter, dst, body } => {
                    // `verify` proved `r[iter..iter+ITER_REGS]` and `r[dst]`
                    // in range.
                    if or_fail!(sem::for_next(regs, iter, dst)) {
                        goto!(body);
                    }
                }
                Instr::IterEnd { iter } => self.loop_end(reg!(iter)),
                Instr::Call { dst, base: b, site } => {
                    let base = self.frame_base();
                    // SAFETY: `verify` proved the call site in range.
                    let site = unsafe { code.sites.get_unchecked(site as usize) };
                    // `verify` checked the site's operands.
                    sem::fill_operands(code, site, regs);
                    let fbase = base + b as usize;
                    let f = reg!(b);
                    if let Value::Function(func) = f {
                        // The quickest path, as the fast loop takes it; this
                        // loop grows the stack and reports the errors.
                        let pc = pc!();
                        let entered = loop {
                            // SAFETY: the operands are the call's.
                            match unsafe { self.enter_call(code, pc, func, site, b, dst) } {
                                Ok(to) => break Some(to),
                                Err(Refused::Stack) => self.grow_stack(code, func.code),
                                Err(Refused::Recursive) => fail!(calls::recursion(func.code)),
                                Err(Refused::Depth) => fail!(Error::limit(LimitKind::CallDepth)),
                                Err(Refused::Binding) => break None,
                            }
                        };
                        if let Some(to) = entered {
                            resume!(to)
                        }
                        if site.plain {
                            save_pc!(pc!());
                            let new_base = base + code.nregs as usize;
                            let n = site.npos as usize;
                            if tri!(self.push_call_simple(func, new_base, dst, fbase + 1, n)) {
                                // SAFETY: `push_call_simple` made the stack
                                // hold the new frame's registers.
                                resume!(unsafe { self.resume_at(func.code, 0, new_base) })
                            }
                        }
                    }
                    positional.clear();
                    named.clear();
                    if site.plain {
                        let start = fbase + 1;
                        positional
                            .extend_from_slice(&self.stack[start..start + site.npos as usize]);
                    } else {
                        tri!(self.collect_args(fbase, site, &mut positional, &mut named));
                    }
                    let v = call_value!(f, dst);
                    reg!(dst) = tri!(v);
                }
                Instr::CallMethod { dst, base: b, site } => {
                    // SAFETY: `verify` proved the call site in range.
                    let site = unsafe { code.sites.get_unchecked(site as usize) };
                    // `verify` checked the site's operands.
                    sem::fill_operands(code, site, regs);
                    let recv = reg!(site.recv);
                    // `xs.append(x)` on a list that may be mutated: done in
                    // place. Anything else (and every error) takes the
                    // general path below.
                    if let Some(l) = sem::append_target(site, recv) {
                        // `verify` proved `r[b+1]` (the argument) in range.
                        tri!(sem::append(heap, l, reg!(b as usize + 1)));
                        reg!(dst) = Value::None;
                        continue;
                    }
                    let base = self.frame_base();
                    let fbase = base + b as usize;
                    // `d.get(k)` and `d.setdefault(k)` of an int or short
                    // string key: in place.
                    let args = &self.stack[fbase + 1..fbase + 1 + site.npos as usize];
                    if let Some(v) = sem::dict_get_in_place(site, recv, args) {
                        reg!(dst) = tri!(v);
                        continue;
                    }
                    // The commonest string methods: in place too.
                    if let Some(v) = sem::str_method_in_place(self, site, recv, args) {
                        reg!(dst) = tri!(v);
                        continue;
                    }
                    positional.clear();
                    named.clear();
                    if site.plain {
                        let start = fbase + 1;
                        positional
                            .extend_from_slice(&self.stack[start..start + site.npos as usize]);
                    } else {
                        tri!(self.collect_args(fbase, site, &mut positional, &mut named));
                    }
                    let v = match site_method(site, recv) {
                        Some(m) => out!(self.call_builtin(m, Some(recv), &positional, &named)),
                        None => {
                            let f = match self.get_attr(recv, site.method) {
                                Ok(f) => f,
                                Err(e) => {
                                    budget.put_fuel(fuel as u64);
                                    save_pc!(pc!());
                                    return Err(e.at(site.attr_pos));
                                }
                            };
                            call_value!(f, dst)
                        }
                    };
                    reg!(dst) = tri!(v);
                }
                Instr::GetAttr { dst, x, name } => {
                    let n = konst!(name).as_str().unwrap_or("");
                    let v = reg!(x);
                    reg!(dst) = tri!(self.get_attr(v, n));
                }
                Instr::SetAttr { x, name, .. } => {
                    let n = konst!(name).as_str().unwrap_or("");
                    let v = reg!(x);
                    fail!(Error::msg(format!(
                        "can't assign to .{n} field of {}",
                        v.type_name()
                    )))
                }
                Instr::Index { dst, x, i, hint } => {
                    let xv = reg!(x);
                    let hint = &code.hints[hint as usize];
                    reg!(dst) = match sem::dict_str_index(xv, rk_ref!(i), hint).copied() {
                        Some(v) => v,
                        None => match sem::index_common(xv, rk_ref!(i)) {
                            Some(v) => v,
                            None => tri!(sem::index(heap, xv, rk!(i))),
                        },
                    };
                }
                Instr::SetIndex { x, i, src, hint } => {
                    let (xv, iv, v) = (reg!(x), rk!(i), reg!(src));
                    match sem::set_index_target(xv) {
                        Some(d) => tri!(sem::dict_set(d, iv, v, Some(&code.hints[hint as usize]))),
                        None => tri!(sem::set_index(heap, xv, iv, v)),
                    }
                }
                Instr::Slice { dst, base: b } => {
                    let base = self.frame_base();
                    let s = base + b as usize;
                    let (x, lo, hi, step) = (
                        self.stack[s],
                        self.stack[s + 1],
                        self.stack[s + 2],
                        self.stack[s + 3],
                    );
                    reg!(dst) = tri!(sem::slice(heap, x, lo, hi, step));
                }
                Instr::Percent { dst, t, src } => {
                    let t = &code.templates[t as usize];
                    let s = self.frame_base() + src as usize;
                    let v = tri!(sem::percent(heap, t, &self.stack[s..s + t.nargs()]));
                    reg!(dst) = v;
                }
                Instr::MakeList { dst, base: b, n } => {
                    let base = self.frame_base();
                    let s = base + b as usize;
                    let v = tri!(heap.list(&self.stack[s..s + n as usize]));
                    reg!(dst) = v;
                }
                Instr::MakeRecord { dst, rec } => {
                    let rec = &code.records[rec as usize];
                    // The steps of the `DictPushNew`s it stands for.
                    for _ in rec.keys {
                        charge_step!();
                    }
                    let v = tri!(sem::make_record(heap, rec, |r| *regs.get(r as usize)));
                    reg!(dst) = v;
                }
                Instr::ListOf { dst, k } => {
                    let v = tri!(sem::list_of(heap, konst!(k)));
                    reg!(dst) = v;
                }
                Instr::MakeTuple { dst, base: b, n } => {
                    let base = self.frame_base();
                    let s = base + b as usize;
                    let v = tri!(heap.tuple(&self.stack[s..s + n as usize]));
                    reg!(dst) = v;
                }
                Instr::MakeDict { dst, n } => {
                    let d = tri!(heap.dict(n as usize));
                    reg!(dst) = Value::Dict(d);
                }
                Instr::DictSetUnique { dict, key, src } => {
                    let d = or_fail!(sem::dict_operand(reg!(dict)));
                    tri!(sem::dict_set_unique(d, reg!(key), reg!(src), budget));
                }
                Instr::DictPushNew { dict, k, src } => {
                    let d = or_fail!(sem::dict_operand(reg!(dict)));
                    tri!(sem::dict_push_new(d, konst!(k), reg!(src)));
                }
                Instr::ListAppend { list, src } => {
                    let l = or_fail!(sem::list_operand(reg!(list)));
                    tri!(sem::append(heap, l, reg!(src)));
                }
                Instr::DictSet { dict, key, src } => {
                    let d = or_fail!(sem::dict_operand(reg!(dict)));
                    tri!(sem::dict_set(d, reg!(key), reg!(src), None));
                }
                Instr::MakeFunction { dst, func, base: b } => {
                    let base = self.frame_base();
                    let fcode = code.functions[func as usize];
                    let s = base + b as usize;
                    let nd = fcode.params.ndefaults();
                    let defaults = tri!(heap
                        .charge(nd * 16)
                        .map(|_| heap.bump.alloc_slice_copy(&self.stack[s..s + nd])));
                    let mut cells = Vec::with_capacity(fcode.freevars.len());
                    for (_, src) in fcode.freevars {
                        let c = match *src {
                            FreeSource::Local(r) => match reg!(r) {
                                Value::Cell(c) => Some(c),
                                _ => None,
                            },
                            FreeSource::Free(i) => self
                                .frames
                                .last()
                                .and_then(|f| f.func)
                                .and_then(|f| f.freevars.get(i as usize).copied()),
                        };
                        match c {
                            Some(c) => cells.push(c),
                            None => fail!(Error::msg("internal error: missing cell")),
                        }
                    }
                    tri!(heap.charge(cells.len() * 8));
                    let freevars = heap.bump.alloc_slice_copy(&cells);
                    let f = tri!(heap.alloc(FunctionObj {
                        code: fcode,
                        defaults,
                        freevars,
                    }));
                    reg!(dst) = Value::Function(f);
                }
                Instr::Load => fail!(Error::hinted(
                    "load not implemented by this application",
                    Hint::Import
                )),
                Instr::Unpack { base: b, src, n } => {
                    let v = reg!(src);
                    if let Some(items) = sem::unpack_tuple(v, n) {
                        for (k, &x) in items.iter().enumerate() {
                            reg!(b as usize + k) = x;
                        }
                        continue;
                    }
                    let n = n as usize;
                    // The length is checked before any item is copied: a
                    // list of millions fails without a copy of it.
                    let len = match v {
                        Value::Tuple(t) => t.items.len(),
                        Value::Elems(e) => e.items.len(),
                        Value::List(l) => l.items.borrow().len(),
                        Value::Dict(d) => d.map.borrow().len(),
                        Value::Range(r) => r.len() as usize,
                        _ => fail!(Error::msg(format!(
                            "got {} in sequence assignment",
                            v.type_name()
                        ))),
                    };
                    if len > n {
                        // An element view has no length: the reference
                        // says -1 for it.
                        let got = if matches!(v, Value::Elems(_)) {
                            -1
                        } else {
                            len as i64
                        };
                        fail!(Error::msg(format!(
                            "too many values to unpack (got {got}, want {n})"
                        )))
                    }
                    if len < n {
                        fail!(Error::msg(format!(
                            "too few values to unpack (got {len}, want {n})"
                        )))
                    }
                    let items: Vec<Value<'h>> = match v {
                        Value::Tuple(t) => t.items.to_vec(),
                        Value::Elems(e) => e.items.to_vec(),
                        Value::List(l) => l.items.borrow().to_vec(),
                        Value::Dict(d) => d.map.borrow().iter().map(|(k, _)| k).collect(),
                        Value::Range(r) => (0..len as i64).map(|i| Value::Int(r.at(i))).collect(),
                        _ => Vec::new(),
                    };
                    for (k, v) in items.into_iter().enumerate() {
                        reg!(b as usize + k) = v;
                    }
                }
                Instr::Return { src } => {
                    let v = rk!(src);
                    let n = self.frames.len();
                    if n > stop + 1 {
                        // A frame this loop entered: the iterations the
                        // `return` leaves end, and the caller goes on.
                        self.release_iters(self.frames[n - 1].iters);
                        resume!(self.exit_frame(v))
                    }
                    // The frame Rust entered: this run ends.
                    budget.put_fuel(fuel as u64);
                    if self.unwind_frame().is_none() {
                        return Err(Error::msg("internal error: no frame"));
                    }
                    return Ok(v);
                }
            }
        }
    }
}

/// The builtin method `site.method` of `recv`, found through the call
/// site's cache.
pub(super) fn site_method(site: &CallSite<'_>, recv: Value<'_>) -> Option<&'static BuiltinFn> {
    let tag = recv.tag();
    match site.cache.get() {
        // Only a method found is noted, so a noted kind has it.
        (t, m) if t == tag => m,
        _ => {
            let m = builtins::method(recv, site.method);
            if m.is_some() {
                site.cache.set((tag, m));
            }
            m
        }
    }
}
