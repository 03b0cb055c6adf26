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
//! state across its many calls. Int arithmetic and comparisons, jumps (a
//! comparison and the conditional jump on its result run together), range
//! and list loops, plain calls of Starlark functions with their returns,
//! list appends and dict gets and sets are done in place; other operands of
//! the operators, and builtin functions and methods called with a few
//! positional arguments, go to the same routines as in the general loop.
//!
//! Every instruction run here costs one step, as in the general loop, and
//! has the same effect and the same errors: an instruction that fails is
//! charged, and the error is returned with the instruction pointer just
//! past it, where the general loop reports it.

use super::{Thread, MAX_FRAMES};
use crate::error::Result;
use crate::heap::Heap;
use crate::opcode::*;
use crate::ops;
use crate::value::*;
use codemode_lang::ast::{BinOp, UnaryOp};

/// The most arguments of a builtin call made from the fast path.
const MAX_FAST_ARGS: usize = 4;

/// The part of the dispatch loop's state that the fast path runs on and
/// hands back.
pub(super) struct LoopState<'h> {
    pub code: &'h Code<'h>,
    /// The next instruction (see [`Thread::run_loop`] for its invariant).
    pub ip: *const Instr,
    /// The current frame's registers (see [`Thread::run_loop`]).
    pub regs: *mut Value<'h>,
    /// Steps left in the current batch.
    pub fuel: i64,
}

impl<'h> Thread<'h> {
    /// Runs instructions from `st` while the fast path handles them, and
    /// returns the state where it stopped. A frame Rust entered is never
    /// returned from here.
    #[inline(never)]
    pub(super) fn run_fast(&mut self, st: LoopState<'h>) -> (LoopState<'h>, Result<()>) {
        let heap = self.heap;
        let mut code = st.code;
        let mut ip = st.ip;
        // `code.instrs`'s start, for jumps.
        let mut instrs = code.instrs.as_ptr();
        let mut regs = st.regs;
        let mut fuel = st.fuel;

        // The register and operand accessors of `run_loop`, under the same
        // invariants (every operand proved in range by `verify`).
        macro_rules! reg {
            ($r:expr) => {
                // SAFETY: `regs` points at the current frame's registers and
                // `verify` proved every register operand below `nregs`.
                *unsafe { &mut *regs.add($r as usize) }
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
                ip = unsafe { instrs.add($to as usize) }
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
        macro_rules! tri {
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
        // Appends to a list through the heap, which charges any growth.
        macro_rules! push {
            ($l:expr, $v:expr) => {{
                let v = $v;
                tri!(heap.push(&mut $l.items.borrow_mut(), v));
            }};
        }
        // Charges the current instruction and continues at `to`.
        macro_rules! jump {
            ($to:expr) => {{
                goto!($to);
                charged!()
            }};
        }
        // A binary operator: ints in place, the rest (and int overflow)
        // in `ops`, as in the general loop.
        // `+` and `+=`: ints and strings here, the rest through `$other`.
        macro_rules! add {
            ($dst:expr, $a:expr, $b:expr, $other:expr) => {{
                // Two registers, the common case, tested at once.
                if ($a | $b) & RK_CONST == 0 {
                    if let (Value::Int(i), Value::Int(j)) = (reg!($a), reg!($b)) {
                        if let Some(r) = i.checked_add(j) {
                            int_result!($dst, r)
                        }
                    }
                } else if let (Value::Int(i), Value::Int(j)) = (rk_ref!($a), rk_ref!($b)) {
                    if let Some(r) = i.checked_add(*j) {
                        int_result!($dst, r)
                    }
                }
                reg!($dst) = match (rk_ref!($a), rk_ref!($b)) {
                    (Value::Str(x), Value::Str(y)) => tri!(cold_concat(heap, x.text, y.text)),
                    (x, y) => tri!($other(*x, *y)),
                }
            }};
        }
        macro_rules! int_op {
            ($dst:expr, $a:expr, $b:expr, $f:expr, $op:expr) => {{
                let r = match (rk_ref!($a), rk_ref!($b)) {
                    (Value::Int(i), Value::Int(j)) => $f(*i, *j),
                    _ => None,
                };
                if let Some(r) = r {
                    int_result!($dst, r)
                }
                reg!($dst) = tri!(cold_binary(heap, $op, *rk_ref!($a), *rk_ref!($b)))
            }};
        }
        macro_rules! int_op_k {
            ($dst:expr, $a:expr, $k:expr, $f:expr, $slow:expr) => {{
                let r = match reg!($a) {
                    Value::Int(i) => $f(i, $k as i64),
                    _ => None,
                };
                if let Some(r) = r {
                    int_result!($dst, r)
                }
                reg!($dst) = tri!($slow(heap, reg!($a), Value::Int($k as i64)))
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
                // SAFETY: the current frame is on top again, and the stack,
                // which Starlark run by the builtin may have grown, holds
                // its registers.
                regs = unsafe { self.stack.as_mut_ptr().add(self.frame_base()) };
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
        macro_rules! int_cmp {
            ($dst:expr, $a:expr, $b:expr, $f:expr, $op:expr) => {{
                let t = match (rk_ref!($a), rk_ref!($b)) {
                    (Value::Int(i), Value::Int(j)) => $f(i, j),
                    (x, y) => tri!(cold_compare(heap, $op, *x, *y)),
                };
                compared!($dst, t)
            }};
        }
        macro_rules! int_cmp_k {
            ($dst:expr, $a:expr, $k:expr, $f:expr, $op:expr) => {{
                let t = match reg!($a) {
                    Value::Int(i) => $f(&i, &($k as i64)),
                    x => tri!(cold_compare(heap, $op, x, Value::Int($k as i64))),
                };
                compared!($dst, t)
            }};
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
                Instr::CheckBound { reg, .. } => {
                    if matches!(reg!(reg), Value::Unbound) {
                        bail!()
                    }
                }
                Instr::LoadGlobal { dst, g } => match self.globals.get(g as usize) {
                    Some(&v) if !matches!(v, Value::Unbound) => reg!(dst) = v,
                    _ => bail!(),
                },
                Instr::LoadCell { dst, slot } => match reg!(slot) {
                    Value::Cell(c) if !matches!(c.value.get(), Value::Unbound) => {
                        reg!(dst) = c.value.get()
                    }
                    _ => bail!(),
                },
                Instr::StoreCell { slot, src } => match reg!(slot) {
                    Value::Cell(c) => c.value.set(reg!(src)),
                    _ => bail!(),
                },
                Instr::Neg { dst, src } => {
                    if let Value::Int(i) = reg!(src) {
                        if i != i64::MIN {
                            int_result!(dst, -i)
                        }
                    }
                    reg!(dst) = tri!(cold_unary(heap, UnaryOp::Neg, reg!(src)))
                }
                Instr::LoadFree { dst, idx } => {
                    let cell = self
                        .frames
                        .last()
                        .and_then(|f| f.func)
                        .and_then(|f| f.freevars.get(idx as usize));
                    match cell.map(|c| c.value.get()) {
                        Some(v) if !matches!(v, Value::Unbound) => reg!(dst) = v,
                        _ => bail!(),
                    }
                }
                Instr::Add { dst, a, b } => {
                    add!(dst, a, b, |x, y| cold_binary(heap, BinOp::Add, x, y))
                }
                Instr::InplaceAdd { dst, a, b } => {
                    add!(dst, a, b, |x, y| cold_inplace_add(heap, x, y))
                }
                Instr::Sub { dst, a, b } => int_op!(dst, a, b, i64::checked_sub, BinOp::Sub),
                Instr::Mul { dst, a, b } => int_op!(dst, a, b, i64::checked_mul, BinOp::Mul),
                Instr::FloorDiv { dst, a, b } => int_op!(dst, a, b, floor_div, BinOp::FloorDiv),
                Instr::Mod { dst, a, b } => int_op!(dst, a, b, floor_mod, BinOp::Mod),
                Instr::BitAnd { dst, a, b } => {
                    int_op!(dst, a, b, |i: i64, j: i64| Some(i & j), BinOp::BitAnd)
                }
                Instr::BitOr { dst, a, b } => {
                    int_op!(dst, a, b, |i: i64, j: i64| Some(i | j), BinOp::BitOr)
                }
                Instr::BitXor { dst, a, b } => {
                    int_op!(dst, a, b, |i: i64, j: i64| Some(i ^ j), BinOp::BitXor)
                }
                Instr::Div { dst, a, b } => {
                    reg!(dst) = tri!(cold_binary(heap, BinOp::Div, *rk_ref!(a), *rk_ref!(b)))
                }
                Instr::Shl { dst, a, b } => {
                    reg!(dst) = tri!(cold_binary(heap, BinOp::Shl, *rk_ref!(a), *rk_ref!(b)))
                }
                Instr::Shr { dst, a, b } => {
                    reg!(dst) = tri!(cold_binary(heap, BinOp::Shr, *rk_ref!(a), *rk_ref!(b)))
                }
                Instr::In { dst, a, b } => {
                    reg!(dst) = tri!(cold_binary(heap, BinOp::In, *rk_ref!(a), *rk_ref!(b)))
                }
                Instr::NotIn { dst, a, b } => {
                    reg!(dst) = tri!(cold_binary(heap, BinOp::NotIn, *rk_ref!(a), *rk_ref!(b)))
                }
                Instr::AddI { dst, a, k } => int_op_k!(dst, a, k, i64::checked_add, |h, x, y| {
                    cold_binary(h, BinOp::Add, x, y)
                }),
                Instr::InplaceAddI { dst, a, k } => {
                    int_op_k!(dst, a, k, i64::checked_add, cold_inplace_add)
                }
                Instr::SubI { dst, a, k } => int_op_k!(dst, a, k, i64::checked_sub, |h, x, y| {
                    cold_binary(h, BinOp::Sub, x, y)
                }),
                Instr::MulI { dst, a, k } => int_op_k!(dst, a, k, i64::checked_mul, |h, x, y| {
                    cold_binary(h, BinOp::Mul, x, y)
                }),
                Instr::ModI { dst, a, k } => int_op_k!(dst, a, k, floor_mod, |h, x, y| {
                    cold_binary(h, BinOp::Mod, x, y)
                }),
                Instr::Eq { dst, a, b } => int_cmp!(dst, a, b, i64::eq, BinOp::Eq),
                Instr::Ne { dst, a, b } => int_cmp!(dst, a, b, i64::ne, BinOp::Ne),
                Instr::Lt { dst, a, b } => int_cmp!(dst, a, b, i64::lt, BinOp::Lt),
                Instr::Le { dst, a, b } => int_cmp!(dst, a, b, i64::le, BinOp::Le),
                Instr::Gt { dst, a, b } => int_cmp!(dst, a, b, i64::gt, BinOp::Gt),
                Instr::Ge { dst, a, b } => int_cmp!(dst, a, b, i64::ge, BinOp::Ge),
                Instr::EqI { dst, a, k } => int_cmp_k!(dst, a, k, i64::eq, BinOp::Eq),
                Instr::NeI { dst, a, k } => int_cmp_k!(dst, a, k, i64::ne, BinOp::Ne),
                Instr::LtI { dst, a, k } => int_cmp_k!(dst, a, k, i64::lt, BinOp::Lt),
                Instr::LeI { dst, a, k } => int_cmp_k!(dst, a, k, i64::le, BinOp::Le),
                Instr::GtI { dst, a, k } => int_cmp_k!(dst, a, k, i64::gt, BinOp::Gt),
                Instr::GeI { dst, a, k } => int_cmp_k!(dst, a, k, i64::ge, BinOp::Ge),
                Instr::Plus { dst, src } => {
                    reg!(dst) = tri!(cold_unary(heap, UnaryOp::Plus, reg!(src)))
                }
                Instr::Invert { dst, src } => {
                    reg!(dst) = tri!(cold_unary(heap, UnaryOp::Invert, reg!(src)))
                }
                Instr::MakeList { dst, base: b, n } => {
                    // SAFETY: `verify` proved `r[b..b+n]` in range.
                    let items =
                        unsafe { std::slice::from_raw_parts(regs.add(b as usize), n as usize) };
                    reg!(dst) = tri!(heap.list(items));
                }
                Instr::MakeTuple { dst, base: b, n } => {
                    // SAFETY: `verify` proved `r[b..b+n]` in range.
                    let items =
                        unsafe { std::slice::from_raw_parts(regs.add(b as usize), n as usize) };
                    reg!(dst) = tri!(heap.tuple(items));
                }
                Instr::Not { dst, src } => reg!(dst) = Value::Bool(!reg!(src).truth()),
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
                Instr::ForNext { iter, dst, body } => match reg!(iter) {
                    // A range iterated in registers (see `IterStart`).
                    Value::Int(v) => {
                        let step = match reg!(iter as usize + 2) {
                            Value::Int(step) => step,
                            _ => bail!(),
                        };
                        // The counters are updated in place (their ints
                        // only), which keeps their loads in the next
                        // iteration forwarded from these stores.
                        let Value::Int(left) = &mut reg!(iter as usize + 1) else {
                            bail!()
                        };
                        if *left > 0 {
                            *left -= 1;
                            if let Value::Int(next) = &mut reg!(iter) {
                                *next = v.wrapping_add(step);
                            }
                            reg!(dst) = Value::Int(v);
                            jump!(body);
                        }
                    }
                    Value::Iter(IterObj::List { list, index }) => {
                        let i = index.get();
                        index.set(i + 1);
                        if let Some(v) = list.get(i) {
                            reg!(dst) = v;
                            jump!(body);
                        }
                    }
                    Value::Iter(IterObj::Tuple { items, index }) => {
                        let i = index.get();
                        index.set(i + 1);
                        if let Some(&v) = items.get(i) {
                            reg!(dst) = v;
                            jump!(body);
                        }
                    }
                    _ => bail!(),
                },
                Instr::IterEnd { iter } => {
                    // A range needs no ending; iterator objects do.
                    if !matches!(reg!(iter), Value::Int(_)) {
                        bail!()
                    }
                }
                Instr::Index { dst, x, i } => {
                    let v = match (reg!(x), *rk_ref!(i)) {
                        (Value::List(l), Value::Int(k)) if k >= 0 => l.get(k as usize),
                        // A missing or unhashable key is reported by the
                        // general loop.
                        (Value::Dict(d), iv) => d.map.borrow().get(iv).ok().flatten(),
                        _ => None,
                    };
                    match v {
                        Some(v) => reg!(dst) = v,
                        None => bail!(),
                    }
                }
                Instr::SetIndex { x, i, src } => match reg!(x) {
                    Value::Dict(d) if !d.frozen.get() && d.iterating.get() == 0 => {
                        let (k, v) = (*rk_ref!(i), reg!(src));
                        tri!(d.map.borrow_mut().insert(k, v));
                    }
                    _ => bail!(),
                },
                Instr::ListAppend { list, src } => {
                    let Value::List(l) = reg!(list) else { bail!() };
                    push!(l, reg!(src));
                }
                Instr::MakeDict { dst, n } => {
                    let d = tri!(heap.dict(n as usize));
                    reg!(dst) = Value::Dict(d);
                }
                Instr::DictSetUnique { dict, key, src } => {
                    let Value::Dict(d) = reg!(dict) else { bail!() };
                    let (k, v) = (reg!(key), reg!(src));
                    let fresh = tri!(d.map.borrow_mut().insert(k, v));
                    if !fresh {
                        tri!(Err(super::duplicate_key(k, self.budget)))
                    }
                }
                Instr::DictSet { dict, key, src } => {
                    let Value::Dict(d) = reg!(dict) else { bail!() };
                    let (k, v) = (reg!(key), reg!(src));
                    tri!(d.map.borrow_mut().insert(k, v));
                }
                Instr::CallMethod { dst, base: b, site } => {
                    // SAFETY: `verify` proved the call site in range.
                    let site = unsafe { code.sites.get_unchecked(site as usize) };
                    // `xs.append(x)` on a list that may be mutated.
                    match reg!(b) {
                        Value::List(l)
                            if site.append && !l.frozen.get() && l.iterating.get() == 0 =>
                        {
                            // `verify` proved the argument `r[b+1]` in range.
                            let v = reg!(b as usize + 1);
                            push!(l, v);
                            reg!(dst) = Value::None;
                        }
                        // Other builtin methods with a few plain arguments.
                        recv if site.plain && site.npos as usize <= MAX_FAST_ARGS => {
                            let Some(m) = super::site_method(site, recv) else {
                                bail!()
                            };
                            reg!(dst) = tri!(call_out!(m, Some(recv), b, site.npos as usize));
                        }
                        _ => bail!(),
                    }
                }
                Instr::Call { dst, base: b, site } => {
                    // SAFETY: `verify` proved the call site in range.
                    let site = unsafe { code.sites.get_unchecked(site as usize) };
                    let func = match reg!(b) {
                        Value::Function(func) => func,
                        Value::Builtin(f) if site.plain && site.npos as usize <= MAX_FAST_ARGS => {
                            reg!(dst) = tri!(call_out!(f, None, b, site.npos as usize));
                            // SAFETY: as at the end of the loop.
                            ip = unsafe { ip.add(1) };
                            charged!()
                        }
                        _ => bail!(),
                    };
                    let callee = func.code;
                    if !site.plain
                        || callee.fast_arity != site.npos
                        || callee.active.get()
                        || self.frames.len() >= MAX_FRAMES
                    {
                        bail!()
                    }
                    let base = self.frame_base();
                    let new_base = base + code.nregs as usize;
                    if self.stack.len() < new_base + callee.nregs as usize {
                        bail!()
                    }
                    // SAFETY: `ip` points at the call, inside the code.
                    let pc = unsafe { ip.offset_from(instrs) } as usize + 1;
                    if let Some(f) = self.frames.last_mut() {
                        f.pc = pc;
                    }
                    // SAFETY: the stack holds the callee's registers
                    // (checked above); `verify` proved the arguments in the
                    // caller's registers.
                    unsafe {
                        self.push_fast_frame(func, base + b as usize + 1, site.npos, new_base, dst)
                    };
                    code = callee;
                    instrs = code.instrs.as_ptr();
                    ip = instrs;
                    // SAFETY: the stack holds the new frame's registers.
                    regs = unsafe { self.stack.as_mut_ptr().add(new_base) };
                    charged!()
                }
                Instr::Return { src } => {
                    let n = self.frames.len();
                    // A frame Rust entered returns from the general loop
                    // (which ends that run), as does a frame that leaves
                    // iterations to end. (Not a `stop` parameter: a value
                    // live across the whole loop costs a spill and a reload
                    // in every instruction.) Any other frame has a caller.
                    if n < 2 {
                        bail!()
                    }
                    let (fr, caller) = (&self.frames[n - 1], &self.frames[n - 2]);
                    if fr.entry || self.iters.len() != fr.iters {
                        bail!()
                    }
                    let v = *rk_ref!(src);
                    fr.code.active.set(false);
                    let ret = fr.ret;
                    code = caller.code;
                    instrs = code.instrs.as_ptr();
                    // SAFETY: a frame's saved `pc` is within its code, and
                    // the stack holds the registers of every frame on it.
                    unsafe {
                        ip = instrs.add(caller.pc);
                        regs = self.stack.as_mut_ptr().add(caller.base);
                    }
                    self.frames.truncate(n - 1);
                    reg!(ret) = v;
                    charged!()
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

/// Floor division of ints, `None` when the general path must decide
/// (division by zero, overflow).
#[inline(always)]
pub(super) fn floor_div(i: i64, j: i64) -> Option<i64> {
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

/// Floored modulo of ints, `None` when the general path must decide.
#[inline(always)]
pub(super) fn floor_mod(i: i64, j: i64) -> Option<i64> {
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

// The general cases, out of line and marked cold: they are the rare ones in
// the loops the fast path is for, and kept out of its body they leave its
// common paths compact.

#[cold]
#[inline(never)]
fn cold_binary<'h>(heap: Heap<'h>, op: BinOp, a: Value<'h>, b: Value<'h>) -> Result<Value<'h>> {
    ops::binary(heap, op, a, b)
}

#[cold]
#[inline(never)]
fn cold_inplace_add<'h>(heap: Heap<'h>, a: Value<'h>, b: Value<'h>) -> Result<Value<'h>> {
    ops::inplace_add(heap, a, b)
}

#[cold]
#[inline(never)]
fn cold_unary<'h>(heap: Heap<'h>, op: UnaryOp, a: Value<'h>) -> Result<Value<'h>> {
    ops::unary(heap, op, a)
}

#[cold]
#[inline(never)]
fn cold_concat<'h>(heap: Heap<'h>, a: &[u8], b: &[u8]) -> Result<Value<'h>> {
    heap.concat(a, b)
}

#[cold]
#[inline(never)]
fn cold_compare<'h>(heap: Heap<'h>, op: BinOp, a: Value<'h>, b: Value<'h>) -> Result<bool> {
    ops::compare_in(heap.budget, op, a, b)
}

impl<'h> Thread<'h> {
    #[cold]
    #[inline(never)]
    fn call_builtin_cold(
        &mut self,
        f: &'static crate::builtins::BuiltinFn,
        recv: Option<Value<'h>>,
        args: &[Value<'h>],
    ) -> Result<Value<'h>> {
        self.call_builtin(f, recv, args, &[])
    }
}
