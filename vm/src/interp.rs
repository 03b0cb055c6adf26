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
//! `semantics` module: the general loop ([`Thread::run_loop`], the
//! `general` module) runs an instruction's common case, then its general
//! case, and turns what the common case could not do (an unbound variable,
//! ...) into the error the program sees, at the instruction's position.
//! Likewise both enter and leave the frames of Starlark calls as the
//! `calls` module defines; the arguments of a call that is not a plain
//! copy are bound by the `binding` module, and calls of builtins and
//! capabilities leave the loop through the `native` module. The
//! `no-fast-path` feature leaves every instruction to the general loop.
//! This module holds the thread itself: its frames, its entry points from
//! Rust, the collector's safe point and roots, and iteration.

use crate::budget::Budget;
use crate::data::Data;
use crate::error::{Error, LimitKind, Result};
use crate::gc::{Collected, Roots, Space};
use crate::heap::Heap;
use crate::opcode::*;
use crate::value::*;
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
/// registers are `regs` (a `Regs`; both loops inspect an operand's tag in
/// place: copying a 16-byte value out and reading its tag back stalls
/// store-to-load forwarding).
macro_rules! operand_ref {
    ($code:expr, $regs:expr, $op:expr) => {{
        let op = $op;
        if op & RK_CONST != 0 {
            // SAFETY: `verify` proved every constant index in range.
            unsafe { $code.consts.get_unchecked((op & !RK_CONST) as usize) }
        } else {
            $regs.get(op as usize)
        }
    }};
}

mod binding;
mod calls;
mod fast;
mod general;
mod native;
mod regs;
mod semantics;

use fast::LoopState;
use general::site_method;
use regs::Regs;
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
            heap: Heap::in_space(space, budget),
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
        if self.budget.take_widening() {
            self.space.widen();
            if !self.budget.gc_due() {
                return Ok(());
            }
        }
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
        let values = self.budget.heap_bytes().saturating_sub(self.code_bytes);
        // SAFETY: called only at a safe point, where the thread holds every
        // value that will be used again.
        let r = unsafe { crate::gc::collect(space, heap, self, values) }?;
        match r {
            Collected::Done {
                live,
                young,
                bookkeeping,
                ..
            } => self.budget.collected(
                self.code_bytes + live,
                live + bookkeeping,
                self.code_bytes + young,
            ),
            Collected::NoRoom => self.budget.collection_skipped(),
            // The budget has put the next one off already.
            Collected::Deferred => {}
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
            // SAFETY: the stack holds the registers of every frame on it;
            // the fast loop makes them anew after anything that may
            // reallocate it.
            regs: unsafe { Regs::new(&mut self.stack, base, code.nregs as usize) },
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
