//! The call protocol, written once for both dispatch loops: how a frame is
//! entered and left.
//!
//! A call of a Starlark function pushes the callee's frame and the loop
//! goes on in it; its `return` pops it, writes the result into the
//! caller's register and the loop goes on in the caller. Both loops do
//! this with the definitions here, as they do operators with the
//! `semantics` module's: [`Thread::enter_call`] for a call on the quickest
//! path (its arguments copied into the callee's first registers),
//! [`Thread::exit_frame`] for a return to a caller, each giving the
//! [`Resume`] point the loop continues at. A call or return these do not
//! take is the rare path, and only there do the loops differ: the fast
//! loop hands the instruction to the general one, which binds arguments
//! ([`Thread::enter_bound`]), grows the stack, ends the iterations a
//! `return` leaves, ends the run at the frame Rust entered
//! ([`Thread::unwind_frame`]), and reports the errors ([`Refused`]).
//!
//! `ForNext`'s step is `semantics::for_next`; a loop's start is
//! [`Thread::start_loop`] and its end `Thread::loop_end`.

use super::{Frame, Regs, Thread, MAX_FRAMES, STACK_SLACK};
use crate::error::{Error, Result};
use crate::opcode::*;
use crate::value::*;

/// Where a dispatch loop continues after entering or leaving a frame: the
/// frame's code, its next instruction and its registers (the loops'
/// `code`, `ip` and `regs`, under their invariants).
pub(super) struct Resume<'h> {
    pub code: &'h Code<'h>,
    pub ip: *const Instr,
    pub regs: Regs<'h>,
}

/// Why a call does not enter its callee on the quickest path. The fast
/// loop hands such a call to the general one, which takes another path
/// (`Binding`, `Stack`) or reports the error (`Recursive`, `Depth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// The arguments need binding (a call with names or `*args`, or a
    /// callee whose parameters take more than a copy; see
    /// [`Code::fast_arity`]).
    Binding,
    /// The callee's code is running already (the error [`recursion`]).
    Recursive,
    /// [`MAX_FRAMES`] frames are active (the call-depth limit).
    Depth,
    /// The stack does not hold the callee's registers yet.
    Stack,
}

/// The error of calling `callee` while its code runs: starlark-go forbids
/// recursion, and reports it at the callee's first instruction.
#[cold]
pub(super) fn recursion(callee: &Code<'_>) -> Error {
    Error::msg(format!("function {} called recursively", callee.name)).at(callee.entry_pos)
}

impl<'h> Thread<'h> {
    /// Where a loop continues in the frame running `code` from instruction
    /// `pc`, its registers at `base` in the stack.
    ///
    /// # Safety
    ///
    /// `pc` is within `code.instrs`, and the stack holds the frame's
    /// registers (`base + code.nregs` values).
    #[inline(always)]
    pub(super) unsafe fn resume_at(
        &mut self,
        code: &'h Code<'h>,
        pc: usize,
        base: usize,
    ) -> Resume<'h> {
        // SAFETY: by the contract above.
        unsafe {
            Resume {
                code,
                ip: code.instrs.as_ptr().add(pc),
                regs: Regs::new(&mut self.stack, base, code.nregs as usize),
            }
        }
    }

    /// Frame entry on the quickest path, for a call of `func` by the
    /// instruction `Call { dst, base: b, site }` just before `pc` in the
    /// current frame, which runs `caller`. When the call is plain, passes
    /// exactly the callee's [`Code::fast_arity`] arguments, is not
    /// recursive, stays within [`MAX_FRAMES`] and finds the callee's
    /// registers on the stack: saves `pc` as the caller's resume point,
    /// copies the arguments into the callee's first registers, pushes its
    /// frame and returns where the loop goes on. Otherwise it does nothing
    /// and says why.
    ///
    /// # Safety
    ///
    /// `caller` is the code of the current frame, and `b`, `site` and `dst`
    /// are the operands of one of its `Call` instructions (checked by
    /// `verify`: the arguments `r[b+1..b+1+npos]` and `r[dst]` are
    /// registers of the frame).
    #[inline(always)]
    pub(super) unsafe fn enter_call(
        &mut self,
        caller: &'h Code<'h>,
        pc: usize,
        func: &'h FunctionObj<'h>,
        site: &CallSite<'h>,
        b: Reg,
        dst: Reg,
    ) -> std::result::Result<Resume<'h>, Refused> {
        let callee = func.code;
        if !site.plain || callee.fast_arity != site.npos {
            return Err(Refused::Binding);
        }
        if callee.active.get() {
            return Err(Refused::Recursive);
        }
        if self.frames.len() >= MAX_FRAMES {
            return Err(Refused::Depth);
        }
        let base = self.frame_base();
        let new_base = base + caller.nregs as usize;
        if self.stack.len() < new_base + callee.nregs as usize {
            return Err(Refused::Stack);
        }
        if let Some(f) = self.frames.last_mut() {
            f.pc = pc;
        }
        // SAFETY: the stack holds the callee's registers (checked above);
        // the arguments are in the caller's registers (by the contract
        // above), below `new_base`.
        unsafe {
            self.push_fast_frame(func, base + b as usize + 1, site.npos, new_base, dst);
            Ok(self.resume_at(callee, 0, new_base))
        }
    }

    /// Grows the stack to hold the registers of `callee` called from the
    /// current frame, running `caller` (after [`Refused::Stack`]), with
    /// room to spare so that most calls find their registers there.
    #[cold]
    #[inline(never)]
    pub(super) fn grow_stack(&mut self, caller: &Code<'h>, callee: &Code<'h>) {
        let need = self.frame_base() + caller.nregs as usize + callee.nregs as usize;
        if self.stack.len() < need {
            self.stack.resize(need + STACK_SLACK, Value::Unbound);
        }
    }

    /// Frame entry with argument binding (any call of a Starlark function
    /// [`Thread::enter_call`] refuses for [`Refused::Binding`]): saves `pc`
    /// as the current frame's resume point, binds the arguments into a new
    /// frame after the current one's registers (`caller`'s) and pushes it,
    /// with `dst` the caller's register for the result, and returns where
    /// the loop goes on.
    pub(super) fn enter_bound(
        &mut self,
        caller: &'h Code<'h>,
        pc: usize,
        func: &'h FunctionObj<'h>,
        dst: Reg,
        positional: &[Value<'h>],
        named: &[(&'h str, Value<'h>)],
    ) -> Result<Resume<'h>> {
        if let Some(f) = self.frames.last_mut() {
            f.pc = pc;
        }
        let new_base = self.frame_base() + caller.nregs as usize;
        self.push_call(func, new_base, dst, positional, named)?;
        // SAFETY: `push_call` made the stack hold the new frame's
        // registers.
        Ok(unsafe { self.resume_at(func.code, 0, new_base) })
    }

    /// Frame exit to a caller: pops the current frame, writes its result
    /// `v` into the caller's register for it and returns where the loop
    /// goes on in the caller. The current frame is one the loop entered (so
    /// it has a caller) and has ended its iterations (the general loop
    /// ends the ones a `return` leaves first; the fast loop leaves such a
    /// return to it).
    #[inline(always)]
    pub(super) fn exit_frame(&mut self, v: Value<'h>) -> Resume<'h> {
        let n = self.frames.len();
        let (fr, caller) = (&self.frames[n - 1], &self.frames[n - 2]);
        debug_assert!(!fr.entry && self.iters.len() == fr.iters);
        fr.code.active.set(false);
        let ret = fr.ret;
        let (code, pc, base) = (caller.code, caller.pc, caller.base);
        // SAFETY: a frame's saved `pc` is within its code, and the stack
        // holds the registers of every frame on it.
        let mut to = unsafe { self.resume_at(code, pc, base) };
        self.frames.truncate(n - 1);
        // `ret` is the `dst` of the caller's call, a register of its frame
        // (checked by `verify`).
        *to.regs.get_mut(ret as usize) = v;
        to
    }

    /// Pops the current frame whole, as its return from the frame Rust
    /// entered or an error unwinds it: clears its recursion mark and ends
    /// the iterations it left. `None` when no frame is active.
    pub(super) fn unwind_frame(&mut self) -> Option<Frame<'h>> {
        let fr = self.frames.pop()?;
        fr.code.active.set(false);
        self.release_iters(fr.iters);
        Some(fr)
    }

    /// `IterStart { dst, src, fill }`: starts a loop over `r[src]`, its
    /// state in `r[dst..dst+ITER_REGS]` (see [`Thread::loop_start`]),
    /// `regs` being the current frame's registers (`verify` proved `src`,
    /// `dst..dst+ITER_REGS` and any `fill` registers of it); a list a
    /// comprehension fills is given room first ([`Heap::presize`]).
    /// Starting a loop touches neither the registers nor the stack.
    #[inline(always)]
    pub(super) fn start_loop(
        &mut self,
        mut regs: Regs<'h>,
        dst: Reg,
        src: Reg,
        fill: Reg,
    ) -> Result<()> {
        let over = *regs.get(src as usize);
        if fill != NO_FILL {
            self.heap.presize(*regs.get(fill as usize), over);
        }
        let r = self.loop_start(over)?;
        *regs.array_mut::<ITER_REGS>(dst as usize) = r;
        Ok(())
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
    pub(super) unsafe fn push_fast_frame(
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
    pub(super) unsafe fn enter_fast_frame(
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
}
