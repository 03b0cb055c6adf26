//! The interpreter: one dispatch loop over register bytecode.
//!
//! A [`Thread`] holds the register stack of all active Starlark frames and
//! runs them in [`Thread::run`] without Rust recursion: a call of a
//! Starlark function pushes a frame and continues in the same loop, a
//! return pops it. Only builtins that call back into Starlark (`sorted`
//! with `key=`, ...) re-enter the loop, and that nesting is bounded by
//! [`MAX_REENTRY`]. Steps are drawn from the budget in batches: the loop
//! keeps the current batch in a local and hands it back to the budget
//! around every call out of the loop. The common cases of the common
//! instructions (int arithmetic and comparisons, jumps, range loops, plain
//! calls and returns, builtin calls with a few arguments, list appends,
//! dict gets and sets) run in a smaller loop (the `fast` module), which
//! hands everything else back to the general one.
//!
//! Both loops take what each instruction does from one place, the
//! `semantics` module: the general loop ([`Thread::run_loop`]) runs an
//! instruction's common case, then its general case, and turns what the
//! common case could not do (an unbound variable, ...) into the error the
//! program sees, at the instruction's position. Likewise both enter and
//! leave the frames of Starlark calls as the `calls` module defines. The
//! `no-fast-path` feature leaves every instruction to the general loop.

use crate::budget::{Budget, ITEM_UNITS};
use crate::builtins::{self, Args, BuiltinFn};
use crate::data::{self, Data, Oversize};
use crate::error::{Error, ErrorKind, LimitKind, Result};
use crate::gc::{Collected, Roots, Space};
use crate::heap::Heap;
use crate::opcode::*;
use crate::value::*;
use codemode_lang::Hint;
use std::any::Any;
use std::cell::Cell;

/// The instructions only the general loop runs: the fast path hands them
/// back, and the general loop does not enter the fast path for them. A
/// pattern, for both loops' matches.
macro_rules! general_only {
    () => {
        Instr::StoreGlobal { .. }
            | Instr::InplaceOr { .. }
            | Instr::GetAttr { .. }
            | Instr::SetAttr { .. }
            | Instr::MakeFunction { .. }
            | Instr::Load
    };
}

/// A reference to register-or-constant operand `op` of `code`, whose frame
/// registers start at `regs` (both loops inspect an operand's tag in place:
/// copying a 16-byte value out and reading its tag back stalls
/// store-to-load forwarding).
macro_rules! operand_ref {
    ($code:expr, $regs:expr, $op:expr) => {{
        let op = $op;
        if op & RK_CONST != 0 {
            // SAFETY: `verify` proved every constant index in range.
            unsafe { $code.consts.get_unchecked((op & !RK_CONST) as usize) }
        } else {
            // SAFETY: `regs` points at the current frame's registers and
            // `verify` proved every register operand below `nregs`.
            unsafe { &*$regs.add(op as usize) }
        }
    }};
}

mod calls;
mod fast;
mod semantics;

use calls::{Refused, Resume};
use fast::LoopState;
use semantics::{self as sem, Binary as _, Compare as _, Unary as _};
pub(crate) use semantics::{floor_div, floor_mod};

/// The most Starlark frames that may be active at once.
pub const MAX_FRAMES: usize = 1000;

/// Registers the stack grows by beyond what a call needs, so that most
/// calls find their registers already there.
const STACK_SLACK: usize = 256;

/// How deeply builtins may call back into Starlark.
pub const MAX_REENTRY: u32 = 64;

/// The host as the interpreter sees it: capability calls by dotted name,
/// with errors kept opaque until [`crate::execute`] classifies them.
pub trait DynHost {
    fn call(
        &self,
        name: &str,
        args: Vec<(String, Data)>,
    ) -> std::result::Result<Data, Box<dyn Any + Send>>;

    /// See [`crate::Host::take_paused`].
    fn take_paused(&self) -> std::time::Duration;
}

struct Frame<'h> {
    code: &'h Code<'h>,
    func: Option<&'h FunctionObj<'h>>,
    pc: usize,
    base: usize,
    /// The caller's register that receives the result.
    ret: Reg,
    /// Height of the iterator stack when the frame started.
    iters: usize,
    /// Whether Rust entered this frame ([`Thread::run_frames`]): its
    /// return ends that run, so the fast path leaves it to the general
    /// loop.
    entry: bool,
}

/// The state of one running execution.
pub struct Thread<'h> {
    pub heap: Heap<'h>,
    /// The arena the heap allocates in, which collections replace.
    space: &'h Space,
    /// Heap bytes charged before the program ran (its code: never
    /// collected).
    code_bytes: usize,
    pub budget: &'h Budget,
    stack: Vec<Value<'h>>,
    frames: Vec<Frame<'h>>,
    iters: Vec<&'h IterObj<'h>>,
    pub globals: Vec<Value<'h>>,
    pub global_names: &'h [&'h str],
    host: &'h dyn DynHost,
    /// Whether capability calls are allowed (only while `main` runs).
    pub allow_native: bool,
    reentry: u32,
}

impl<'h> Thread<'h> {
    /// A thread whose values live in `space`.
    pub fn new(
        space: &'h Space,
        budget: &'h Budget,
        global_names: &'h [&'h str],
        host: &'h dyn DynHost,
    ) -> Thread<'h> {
        Thread {
            heap: Heap::new(space.bump(), budget),
            space,
            code_bytes: budget.heap_bytes(),
            budget,
            stack: Vec::new(),
            frames: Vec::new(),
            iters: Vec::new(),
            globals: vec![Value::Unbound; global_names.len()],
            global_names,
            host,
            allow_native: false,
            reentry: 0,
        }
    }

    /// Runs the top level of a module.
    pub fn run_toplevel(&mut self, code: &'h Code<'h>) -> Result<Value<'h>> {
        let base = self.stack.len();
        self.stack
            .resize(base + code.nregs as usize, Value::Unbound);
        self.enter(code, None, base, 0)?;
        self.run_frames()
    }

    /// Calls a callable value with arguments.
    pub fn call(
        &mut self,
        f: Value<'h>,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<Value<'h>> {
        match f {
            Value::Function(func) => {
                let base = match self.frames.last() {
                    Some(fr) => fr.base + fr.code.nregs as usize,
                    None => self.stack.len(),
                };
                if !(named.is_empty() && self.push_call_positional(func, base, positional)?) {
                    self.push_call(func, base, 0, positional, named)?;
                }
                self.run_frames()
            }
            _ => self.call_native(f, positional, named),
        }
    }

    /// A safe point: collects when the heap has grown enough since the
    /// last collection (see [`Budget::collected`]) and no builtin is on the
    /// Rust stack below this loop (only the loop that runs the top level or
    /// `main` collects: a builtin that called back into Starlark may hold
    /// values in its locals). Called between two instructions, where every
    /// value the program can reach is in the thread ([`Roots`]). The caller
    /// has seen that a collection is due ([`Budget::gc_due`]). Fails when
    /// the deadline passes (or the execution is cancelled) during the
    /// collection.
    #[inline(always)]
    fn safe_point(&mut self) -> Result<()> {
        if self.reentry == 1 {
            return self.collect();
        }
        Ok(())
    }

    /// Collects now (see [`crate::gc`]).
    #[cold]
    #[inline(never)]
    fn collect(&mut self) -> Result<()> {
        // The registers above the top frame's are dead between two
        // instructions (a call writes its callee's before they are read):
        // cleared, so that what a returned call left there is not kept.
        if let Some(top) = self.frames.last() {
            let end = top.base + top.code.nregs as usize;
            if let Some(dead) = self.stack.get_mut(end..) {
                dead.fill(Value::None);
            }
        }
        let (space, heap) = (self.space, self.heap);
        // SAFETY: called only at a safe point, where the thread holds every
        // value that will be used again.
        let r = unsafe { crate::gc::collect(space, heap, self) }?;
        match r {
            Collected::Done {
                live, bookkeeping, ..
            } => self
                .budget
                .collected(self.code_bytes + live, live + bookkeeping),
            Collected::NoRoom => self.budget.collection_skipped(),
        }
        Ok(())
    }

    /// Runs frames pushed on top of the current ones until the first of
    /// them returns.
    fn run_frames(&mut self) -> Result<Value<'h>> {
        if self.reentry >= MAX_REENTRY {
            return Err(Error::limit(LimitKind::CallDepth));
        }
        self.reentry += 1;
        let stop = self.frames.len() - 1;
        self.frames[stop].entry = true;
        let r = match self.run_entry_fast(stop) {
            Some(r) => r.map_err(|e| self.attribute_first(e, stop)),
            None => self.run(stop),
        };
        self.reentry -= 1;
        if r.is_err() {
            // The execution fails as a whole; just clear the recursion
            // marks and the iteration marks of the unwound frames.
            while self.frames.len() > stop {
                self.unwind_frame();
            }
        }
        r
    }

    /// The frame `stop` (on top, entered from Rust: a key function of
    /// `sorted`, a callback of a builtin) run in the fast path alone when
    /// it returns there, as most short functions do: its result, with the
    /// `return` done here as the general loop does it (charged a step,
    /// the frame popped). `None` when the fast path stopped anywhere else:
    /// the frames are left where it stopped, for [`Thread::run`] to go on
    /// from. Errors are reported as the general loop reports them. This
    /// saves the general loop's set-up on every call of a small callback.
    fn run_entry_fast(&mut self, stop: usize) -> Option<Result<Value<'h>>> {
        if cfg!(feature = "no-fast-path") {
            return None;
        }
        let (code, base, pc) = {
            let f = &self.frames[stop];
            (f.code, f.base, f.pc)
        };
        let st = LoopState {
            code,
            // SAFETY: a frame's saved `pc` is within its code.
            ip: unsafe { code.instrs.as_ptr().add(pc) },
            // SAFETY: the stack holds the registers of every frame on it.
            regs: unsafe { self.stack.as_mut_ptr().add(base) },
            fuel: self.budget.take_fuel() as i64,
        };
        let (st, r) = self.run_fast(st);
        // SAFETY: `st.ip` points into (or one past an instruction of)
        // `st.code.instrs`.
        let at = unsafe { st.ip.offset_from(st.code.instrs.as_ptr()) } as usize;
        if let Some(f) = self.frames.last_mut() {
            f.pc = at;
        }
        if let Err(e) = r {
            // Failed in the instruction before `at`, which is charged.
            self.budget.put_fuel(st.fuel as u64);
            return Some(Err(e.at(st.code.positions[at - 1])));
        }
        // Handed back at `at`: not run, not charged.
        // SAFETY: the fast loop hands back only at an instruction of
        // `st.code.instrs` (never one past the end), so `st.ip` points at
        // one.
        let src = match *unsafe { &*st.ip } {
            Instr::Return { src } if self.frames.len() == stop + 1 => src,
            _ => {
                self.budget.put_fuel(st.fuel as u64);
                return None;
            }
        };
        let mut fuel = st.fuel - 1;
        if fuel < 0 {
            match self.budget.draw_steps() {
                Ok(f) => fuel = f as i64 - 1,
                Err(e) => {
                    self.budget.put_fuel(0);
                    self.frames[stop].pc = at + 1;
                    return Some(Err(e.at(st.code.positions[at])));
                }
            }
        }
        let v = *operand_ref!(st.code, st.regs, src);
        self.unwind_frame()?;
        self.budget.put_fuel(fuel as u64);
        Some(Ok(v))
    }

    /// Enters `func` on the quickest path ([`Code::fast_arity`], which the
    /// caller has checked equals `n`, as it has checked recursion and the
    /// frame limit): copies the `n` arguments at `args` into the callee's
    /// first registers at `new_base`, resets its other locals, and pushes
    /// its frame.
    ///
    /// # Safety
    ///
    /// `self.stack` holds at least `new_base + func.code.nregs` values, and
    /// `args..args + n` is inside the caller's registers (below `new_base`).
    #[inline(always)]
    unsafe fn push_fast_frame(
        &mut self,
        func: &'h FunctionObj<'h>,
        args: usize,
        n: u16,
        new_base: usize,
        ret: Reg,
    ) {
        let n = n as usize;
        // SAFETY: by the contract above, and `n == fast_arity <= nregs`
        // (`verify` checks the latter).
        unsafe {
            let p = self.stack.as_mut_ptr();
            let from = p.add(args);
            let to = p.add(new_base);
            // (Few arguments are copied one by one: `copy_nonoverlapping`
            // of an unknown length calls `memcpy`.)
            match n {
                0 => {}
                1 => to.write(from.read()),
                2 => {
                    to.write(from.read());
                    to.add(1).write(from.add(1).read());
                }
                3 => {
                    to.write(from.read());
                    to.add(1).write(from.add(1).read());
                    to.add(2).write(from.add(2).read());
                }
                _ => std::ptr::copy_nonoverlapping(from, to, n),
            }
            self.enter_fast_frame(func, n, new_base, ret);
        }
    }

    /// The rest of entering `func` on the quickest path, its `n` arguments
    /// already in its first registers at `base`: resets its other locals
    /// (the compiler writes every temporary before reading it) and pushes
    /// its frame.
    ///
    /// # Safety
    ///
    /// `self.stack` holds at least `base + func.code.nregs` values, and
    /// `n == func.code.fast_arity`.
    #[inline(always)]
    unsafe fn enter_fast_frame(
        &mut self,
        func: &'h FunctionObj<'h>,
        n: usize,
        base: usize,
        ret: Reg,
    ) {
        let callee = func.code;
        let nlocals = callee.local_names.len().min(callee.nregs as usize);
        // SAFETY: by the contract above, locals are below `nregs`.
        unsafe {
            let to = self.stack.as_mut_ptr().add(base);
            let mut i = n;
            while i < nlocals {
                to.add(i).write(Value::Unbound);
                i += 1;
            }
        }
        callee.active.set(true);
        self.frames.push(Frame {
            code: callee,
            func: Some(func),
            pc: 0,
            base,
            ret,
            iters: self.iters.len(),
            entry: false,
        });
    }

    /// Where the current frame's registers start in the stack.
    #[inline(always)]
    fn frame_base(&self) -> usize {
        self.frames.last().map_or(0, |f| f.base)
    }

    /// Pushes a frame for `code` whose registers start at `base`.
    #[inline(always)]
    fn enter(
        &mut self,
        code: &'h Code<'h>,
        func: Option<&'h FunctionObj<'h>>,
        base: usize,
        ret: Reg,
    ) -> Result<()> {
        if self.frames.len() >= MAX_FRAMES {
            return Err(Error::limit(LimitKind::CallDepth));
        }
        for &c in code.cells {
            let slot = base + c as usize;
            let cell = self.heap.cell(self.stack[slot])?;
            self.stack[slot] = Value::Cell(cell);
        }
        code.active.set(true);
        self.frames.push(Frame {
            code,
            func,
            pc: 0,
            base,
            ret,
            iters: self.iters.len(),
            entry: false,
        });
        Ok(())
    }

    fn release_iters(&mut self, down_to: usize) {
        while self.iters.len() > down_to {
            if let Some(it) = self.iters.pop() {
                release(it);
            }
        }
    }

    /// Prepares a call of a Starlark function: checks recursion, binds the
    /// arguments into a new frame at `base`, and pushes it.
    fn push_call(
        &mut self,
        func: &'h FunctionObj<'h>,
        base: usize,
        ret: Reg,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<()> {
        let code = func.code;
        if code.active.get() {
            return Err(calls::recursion(code));
        }
        self.stack.truncate(base);
        self.stack
            .resize(base + code.nregs as usize, Value::Unbound);
        // starlark-go reports binding errors inside the callee, at its
        // first instruction.
        self.bind_args(func, base, positional, named)
            .map_err(|e| e.at(code.entry_pos))?;
        self.enter(code, Some(func), base, ret)
    }

    /// The common call: exactly as many positional arguments as the
    /// function has parameters, all plain (no defaults needed, no `*args`,
    /// `**kwargs` or keyword-only ones). The arguments are copied straight
    /// from the caller's registers `arg_start..arg_start + n` into the new
    /// frame at `base`. Returns `false`, having done nothing, when the call
    /// needs the general binding.
    #[inline]
    fn push_call_simple(
        &mut self,
        func: &'h FunctionObj<'h>,
        base: usize,
        ret: Reg,
        arg_start: usize,
        n: usize,
    ) -> Result<bool> {
        let code = func.code;
        let p = &code.params;
        if p.has_args || p.has_kwargs || p.nkwonly != 0 || p.npositional as usize != n {
            return Ok(false);
        }
        if code.active.get() {
            return Err(calls::recursion(code));
        }
        // The stack only grows here (in steps, so that this is rare); the
        // callee's registers are reset in place. The arguments sit in the
        // caller's registers, below `base`.
        let nregs = code.nregs as usize;
        if self.stack.len() < base + nregs {
            self.stack
                .resize(base + nregs + STACK_SLACK, Value::Unbound);
        }
        let (caller, callee) = self.stack.split_at_mut(base);
        let regs = &mut callee[..nregs];
        regs.fill(Value::Unbound);
        for (&r, &v) in p.regs.iter().zip(&caller[arg_start..arg_start + n]) {
            regs[r as usize] = v;
        }
        self.enter(code, Some(func), base, ret)?;
        Ok(true)
    }

    /// [`Thread::push_call_simple`] for arguments outside the stack (calls
    /// from builtins such as `sorted(key=...)`).
    fn push_call_positional(
        &mut self,
        func: &'h FunctionObj<'h>,
        base: usize,
        positional: &[Value<'h>],
    ) -> Result<bool> {
        let code = func.code;
        let n = positional.len();
        if code.fast_arity as usize == n && !code.active.get() && self.frames.len() < MAX_FRAMES {
            // As `push_fast_frame` enters it: the arguments in the first
            // registers, the other locals reset (the compiler writes every
            // temporary before reading it), no cells to make.
            let nregs = code.nregs as usize;
            if self.stack.len() < base + nregs {
                self.stack.resize(base + nregs, Value::Unbound);
            }
            self.stack[base..base + n].copy_from_slice(positional);
            // SAFETY: the stack holds the callee's registers (made so
            // above), and `n` is its fast arity.
            unsafe { self.enter_fast_frame(func, n, base, 0) };
            return Ok(true);
        }
        let p = &code.params;
        if p.has_args
            || p.has_kwargs
            || p.nkwonly != 0
            || p.npositional as usize != positional.len()
        {
            return Ok(false);
        }
        if code.active.get() {
            return Err(calls::recursion(code));
        }
        self.stack.truncate(base);
        self.stack
            .resize(base + code.nregs as usize, Value::Unbound);
        for (&r, &v) in p.regs.iter().zip(positional) {
            self.stack[base + r as usize] = v;
        }
        self.enter(code, Some(func), base, 0)?;
        Ok(true)
    }

    /// Binds arguments to parameters as starlark-go's `setArgs` does.
    fn bind_args(
        &mut self,
        func: &'h FunctionObj<'h>,
        base: usize,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<()> {
        let code = func.code;
        let p = &code.params;
        let name = code.name;
        let nslots = p.nslots();
        if nslots == 0 {
            let n = positional.len() + named.len();
            if n > 0 {
                return Err(Error::msg(format!(
                    "function {name} accepts no arguments ({n} given)"
                )));
            }
            return Ok(());
        }
        let nordinary = p.npositional as usize + p.nkwonly as usize;
        let npos = p.npositional as usize;
        let mut kwdict = None;
        if p.has_kwargs {
            let d = self.heap.dict(0)?;
            let reg = p.regs[nslots - 1];
            self.stack[base + reg as usize] = Value::Dict(d);
            kwdict = Some(d);
        }
        let mut n = positional.len();
        if n > npos {
            if !p.has_args {
                let has_positional_default = p.has_default[..npos].iter().any(|d| *d);
                return Err(Error::msg(format!(
                    "function {name} accepts {}{npos} positional argument{} ({} given)",
                    if has_positional_default {
                        "at most "
                    } else {
                        ""
                    },
                    if npos == 1 { "" } else { "s" },
                    positional.len()
                )));
            }
            n = npos;
        }
        for (i, v) in positional[..n].iter().enumerate() {
            self.stack[base + p.regs[i] as usize] = *v;
        }
        if p.has_args {
            let t = self.heap.tuple(&positional[n..])?;
            self.stack[base + p.regs[nordinary] as usize] = t;
        }
        for (k, v) in named {
            match p.names[..nordinary].iter().position(|pn| pn == k) {
                Some(i) => {
                    let slot = base + p.regs[i] as usize;
                    if !matches!(self.stack[slot], Value::Unbound) {
                        return Err(Error::msg(format!(
                            "function {name} got multiple values for parameter {}",
                            quoted(k)
                        )));
                    }
                    self.stack[slot] = *v;
                }
                None => match kwdict {
                    None => {
                        return Err(Error::msg(format!(
                            "function {name} got an unexpected keyword argument {}",
                            quoted(k)
                        )))
                    }
                    Some(d) => {
                        let key = self.heap.str_in_arena(*k)?;
                        if !d.map.borrow_mut().insert(key, *v)? {
                            return Err(Error::msg(format!(
                                "function {name} got multiple values for parameter {}",
                                quoted(k)
                            )));
                        }
                    }
                },
            }
        }
        if n < nordinary {
            let mut missing: Vec<&str> = Vec::new();
            let mut d = p.has_default[..n].iter().filter(|x| **x).count();
            for i in n..nordinary {
                let slot = base + p.regs[i] as usize;
                let has_default = p.has_default[i];
                if matches!(self.stack[slot], Value::Unbound) {
                    if has_default {
                        self.stack[slot] = func.defaults[d];
                    } else {
                        missing.push(p.names[i]);
                    }
                }
                if has_default {
                    d += 1;
                }
            }
            if !missing.is_empty() {
                return Err(Error::msg(format!(
                    "function {name} missing {} argument{} ({})",
                    missing.len(),
                    if missing.len() > 1 { "s" } else { "" },
                    missing.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Calls anything that is not a Starlark function.
    fn call_native(
        &mut self,
        f: Value<'h>,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<Value<'h>> {
        match f {
            Value::Builtin(b) => self.call_builtin(b, None, positional, named),
            Value::BoundMethod(m) => {
                self.call_builtin(m.method, Some(m.receiver), positional, named)
            }
            Value::Capability(c) => self.call_capability(&c.name, positional, named),
            Value::Function(_) => self.call(f, positional, named),
            _ => Err(Error::msg(format!(
                "invalid call of non-function ({})",
                f.type_name()
            ))),
        }
    }

    fn call_builtin(
        &mut self,
        b: &'static BuiltinFn,
        recv: Option<Value<'h>>,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<Value<'h>> {
        let args = Args {
            recv,
            positional,
            named,
        };
        (b.call)(self, &args)
    }

    /// A capability call: counted, bound to keyword arguments, converted,
    /// sent to the host, and its result checked and converted back.
    fn call_capability(
        &mut self,
        name: &'h str,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<Value<'h>> {
        if !self.allow_native {
            return Err(Error::msg(format!(
                "capability {name} called during top-level execution; call capabilities only inside main"
            )));
        }
        self.budget.charge_native_call()?;
        if !positional.is_empty() {
            return Err(Error::invalid_arguments(
                "positional arguments are not accepted; pass every argument by keyword",
            ));
        }
        let limits = &self.budget.limits;
        let mut args = Vec::with_capacity(named.len());
        // The arguments' compact JSON length, as one object.
        let mut arg_bytes = data::map_frame_len(named.len());
        for (k, v) in named {
            arg_bytes = arg_bytes.saturating_add(data::json_str_len(k));
            // Each argument gets what the ones before it left of the limit,
            // so the conversion stops as soon as the set is too long.
            let room = limits.max_value_bytes.saturating_sub(arg_bytes);
            let (d, len) = data::to_data(
                *v,
                limits.max_value_depth.saturating_sub(1),
                room,
                self.budget,
            )
            .map_err(|e| e.into_limit_or_args(k))?;
            arg_bytes = arg_bytes.saturating_add(len);
            args.push(((*k).to_string(), d));
        }
        if arg_bytes > limits.max_value_bytes {
            return Err(Error::limit(LimitKind::ValueBytes));
        }
        let result = self.host.call(name, args);
        self.budget.extend_deadline(self.host.take_paused());
        let result = result.map_err(Error::host)?;
        let bytes = match result.measure(limits.max_value_depth, limits.max_value_bytes) {
            Ok(bytes) => bytes,
            Err(Oversize::Depth) => return Err(Error::limit(LimitKind::ValueDepth)),
            Err(Oversize::Bytes) => return Err(Error::limit(LimitKind::ValueBytes)),
        };
        self.budget.charge_intermediate(bytes)?;
        self.budget.check_time()?;
        data::from_data(self.heap, &result)
    }

    /// The attribute `name` of `x`.
    pub fn get_attr(&mut self, x: Value<'h>, name: &str) -> Result<Value<'h>> {
        match x {
            Value::Namespace(ns) => ns.attr(name).ok_or_else(|| {
                Error::msg(format!(
                    "namespace {} has no .{name} field or method",
                    ns.path
                ))
            }),
            Value::Module(m) => {
                builtins::module_attr(m, name).ok_or_else(|| Error::msg(no_attr(x, name)))
            }
            _ => match builtins::method(x, name) {
                Some(m) => Ok(Value::BoundMethod(self.heap.alloc(BoundMethodObj {
                    receiver: x,
                    method: m,
                })?)),
                None if matches!(x, Value::Dict(_)) => {
                    Err(Error::hinted(no_attr(x, name), Hint::DictField))
                }
                None => Err(Error::msg(no_attr(x, name))),
            },
        }
    }

    /// The value of `r[base + i]` for call arguments laid out by a site:
    /// collects positional and named arguments, expanding `*args` and
    /// `**kwargs`.
    fn collect_args(
        &mut self,
        base: usize,
        site: &CallSite<'h>,
        positional: &mut Vec<Value<'h>>,
        named: &mut Vec<(&'h str, Value<'h>)>,
    ) -> Result<()> {
        let mut r = base + 1;
        positional.extend_from_slice(&self.stack[r..r + site.npos as usize]);
        r += site.npos as usize;
        for name in site.names {
            named.push((name, self.stack[r]));
            r += 1;
        }
        if site.star {
            let v = self.stack[r];
            r += 1;
            // The values spread are copied once more into the callee's
            // parameters: their number is charged as work (a million of
            // them take milliseconds, far more than a step).
            let budget = self.budget;
            match v {
                Value::List(l) => {
                    budget.in_blocks(&l.items.borrow(), |b| positional.extend_from_slice(b))?
                }
                Value::Tuple(t) => {
                    budget.in_blocks(t.items, |b| positional.extend_from_slice(b))?
                }
                Value::Elems(e) => {
                    budget.in_blocks(e.items, |b| positional.extend_from_slice(b))?
                }
                Value::Dict(d) => {
                    let map = d.map.borrow();
                    budget.charge_work(map.len() as u64)?;
                    positional.extend(map.iter().map(|(k, _)| k));
                }
                Value::Range(rg) => {
                    let n = rg.len();
                    self.heap
                        .charge(n as usize * std::mem::size_of::<Value>())?;
                    budget.charge_work(n as u64)?;
                    positional.extend((0..n).map(|i| Value::Int(rg.at(i))));
                }
                _ => {
                    return Err(Error::msg(format!(
                        "argument after * must be iterable, not {}",
                        v.type_name()
                    )))
                }
            }
        }
        if site.star_star {
            let v = self.stack[r];
            let Value::Dict(d) = v else {
                return Err(Error::msg(format!(
                    "argument after ** must be a mapping, not {}",
                    v.type_name()
                )));
            };
            let map = d.map.borrow();
            self.budget.charge_work(map.len() as u64 * ITEM_UNITS)?;
            for (k, v) in map.iter() {
                match k {
                    // Names are text; a key with invalid bytes (which no
                    // parameter has) goes on with U+FFFD in their place.
                    Value::Str(s) => named.push((
                        match std::str::from_utf8(s.text) {
                            Ok(t) => t,
                            Err(_) => self.heap.bump.alloc_str(&crate::text::lossy(s.text)),
                        },
                        v,
                    )),
                    _ => {
                        return Err(Error::msg(format!(
                            "keywords must be strings, not {}",
                            k.type_name()
                        )))
                    }
                }
            }
        }
        Ok(())
    }

    /// What `IterStart` puts in the [`ITER_REGS`] registers of a loop
    /// over `v`: for a range, the next int, how many are left and the step
    /// (`ForNext` iterates it there); for anything else an iterator object
    /// (then two unused registers).
    #[inline]
    fn loop_start(&mut self, v: Value<'h>) -> Result<[Value<'h>; ITER_REGS]> {
        if let Value::Range(r) = v {
            return Ok([Value::Int(r.start), Value::Int(r.len()), Value::Int(r.step)]);
        }
        let it = self.iter_start(v)?;
        Ok([Value::Iter(it), Value::None, Value::None])
    }

    /// `IterEnd` of the loop whose first register holds `v`: an iterator
    /// object is released (a range needs no ending).
    #[inline]
    fn loop_end(&mut self, v: Value<'h>) {
        if let Value::Iter(it) = v {
            release(it);
            // Loops end in LIFO order.
            self.iters.pop();
        }
    }

    /// Starts iterating `v` (a `for` loop or comprehension).
    fn iter_start(&mut self, v: Value<'h>) -> Result<&'h IterObj<'h>> {
        let it = match v {
            Value::List(l) => {
                l.iterating.set(l.iterating.get() + 1);
                IterObj::List {
                    list: l,
                    index: Cell::new(0),
                }
            }
            Value::Tuple(t) => IterObj::Tuple {
                items: t.items,
                index: Cell::new(0),
            },
            Value::Elems(e) => IterObj::Tuple {
                items: e.items,
                index: Cell::new(0),
            },
            Value::Dict(d) => {
                d.iterating.set(d.iterating.get() + 1);
                IterObj::Dict {
                    dict: d,
                    index: Cell::new(0),
                }
            }
            _ => {
                return Err(Error::msg(format!(
                    "{} value is not iterable",
                    v.type_name()
                )))
            }
        };
        let it = self.heap.alloc(it)?;
        self.iters.push(it);
        Ok(it)
    }

    /// The main loop: runs until the frame at index `stop` returns, and
    /// returns its result.
    fn run(&mut self, stop: usize) -> Result<Value<'h>> {
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
    fn attribute_first(&mut self, e: Error, stop: usize) -> Error {
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
    fn run_loop(&mut self, stop: usize) -> Result<Value<'h>> {
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
        // frame's, [`Thread::frame_base`]), and `regs` is
        // `self.stack[base..]`'s start; it is re-derived after anything
        // that may reallocate the stack (a frame entered or left, by
        // `resume!`; any call out of the loop, by `sync!`). Every operand
        // was proved in range by `verify`, which is what makes the
        // unchecked accesses below sound.
        let mut regs: *mut Value<'h> = self.stack[base..].as_mut_ptr();

        macro_rules! sync {
            () => {
                // SAFETY: `self.stack.len() >= base + code.nregs` (the
                // invariant above), so the frame's base is within the
                // allocation.
                regs = unsafe { self.stack.as_mut_ptr().add(self.frame_base()) }
            };
        }
        // The register and operand accessors (the fast loop's are the
        // same).
        macro_rules! reg {
            ($r:expr) => {
                // SAFETY: `regs` points at the current frame's registers and
                // `verify` proved every register operand below `nregs`.
                *unsafe { &mut *regs.add($r as usize) }
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
                    or_fail!(sem::store_cell(&reg!(slot), reg!(src)))
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
                Instr::IterStart { dst, src } => {
                    // SAFETY: `verify` proved `r[src]` and
                    // `r[dst..dst+ITER_REGS]` in range.
                    tri!(unsafe { self.start_loop(regs, dst, src) })
                }
                Instr::ForNext { iter, dst, body } => {
                    // SAFETY: `verify` proved `r[iter..iter+ITER_REGS]` and
                    // `r[dst]` in range.
                    if or_fail!(unsafe { sem::for_next(regs, iter, dst) }) {
                        goto!(body);
                    }
                }
                Instr::IterEnd { iter } => self.loop_end(reg!(iter)),
                Instr::Call { dst, base: b, site } => {
                    let base = self.frame_base();
                    // SAFETY: `verify` proved the call site in range.
                    let site = unsafe { code.sites.get_unchecked(site as usize) };
                    // SAFETY: `verify` checked the site's operands.
                    unsafe { sem::fill_operands(code, site, regs) };
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
                    // SAFETY: `verify` checked the site's operands.
                    unsafe { sem::fill_operands(code, site, regs) };
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
                    let v = tri!(sem::make_record(heap, rec, |r| reg!(r)));
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
fn site_method(site: &CallSite<'_>, recv: Value<'_>) -> Option<&'static BuiltinFn> {
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

/// A string as starlark-go's `repr` quotes it.
fn quoted(s: &str) -> String {
    let mut out = String::new();
    crate::format::write_quoted(&mut out, s.as_bytes(), false);
    out
}

/// Ends an iteration: lists and dicts may be mutated again.
fn release(it: &IterObj<'_>) {
    match it {
        IterObj::List { list, .. } => list.iterating.set(list.iterating.get().saturating_sub(1)),
        IterObj::Dict { dict, .. } => dict.iterating.set(dict.iterating.get().saturating_sub(1)),
        _ => {}
    }
}

impl<'h> Roots<'h> for Thread<'h> {
    fn each_root(&mut self, visit: &mut dyn FnMut(&mut Value<'h>)) {
        // Every field, so that a new one is classified here.
        let Thread {
            heap: _,
            space: _,
            code_bytes: _,
            budget: _,
            stack,
            frames,
            iters,
            globals,
            global_names: _,
            host: _,
            allow_native: _,
            reentry: _,
        } = self;
        // (Registers above the top frame's were cleared by the caller.)
        stack.iter_mut().for_each(&mut *visit);
        globals.iter_mut().for_each(&mut *visit);
        for it in iters.iter_mut() {
            let mut v = Value::Iter(it);
            visit(&mut v);
            if let Value::Iter(new) = v {
                *it = new;
            }
        }
        for f in frames.iter_mut() {
            // The code is the program's, which is never collected.
            let Frame {
                code: _,
                func,
                pc: _,
                base: _,
                ret: _,
                iters: _,
                entry: _,
            } = f;
            if let Some(func) = func {
                let mut v = Value::Function(func);
                visit(&mut v);
                if let Value::Function(new) = v {
                    *func = new;
                }
            }
        }
    }
}

/// starlark-go's error for a missing attribute of a value that is not a
/// capability namespace: `TYPE has no .NAME field or method`, with
/// ` (did you mean .OTHER?)` when one of the type's attributes is close.
pub fn no_attr(x: Value<'_>, name: &str) -> String {
    let mut names = builtins::universe::attr_names(x);
    names.sort_unstable();
    match codemode_lang::nearest(name, &names) {
        Some(near) => format!(
            "{} has no .{name} field or method (did you mean .{near}?)",
            x.type_name()
        ),
        None => format!("{} has no .{name} field or method", x.type_name()),
    }
}
