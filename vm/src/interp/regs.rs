//! The registers of the running frame, behind one type.
//!
//! Both dispatch loops read and write the current frame's registers
//! without bounds checks, through a pointer into the thread's stack. That
//! is sound for two reasons, stated here once rather than at every access:
//! the stack holds the frame's registers (`base..base + nregs`) while the
//! frame runs, and `verify` proved every register operand of the frame's
//! code below `nregs` (with the runs of registers an instruction reads or
//! writes: a call's arguments, an iteration's state, ...). A [`Regs`] is
//! made, unsafely, where the first holds ([`Regs::new`]); its accessors
//! are then given only register operands of the frame's verified code,
//! which is the second. A `Regs` is a raw pointer: it is made anew after
//! anything that may reallocate the stack (a call out of the loop, a frame
//! entered or left). Debug builds also carry the frame's register count
//! and check every access against it.

use crate::value::Value;

/// The registers of one frame: its first register in the thread's stack
/// (see the module's documentation for when using it is sound).
#[derive(Clone, Copy)]
pub(super) struct Regs<'h> {
    first: *mut Value<'h>,
    /// The frame's register count (debug builds check accesses with it).
    #[cfg(debug_assertions)]
    len: usize,
}

impl<'h> Regs<'h> {
    /// The registers `base..base + nregs` of `stack`.
    ///
    /// # Safety
    ///
    /// `stack` holds at least `base + nregs` values; the result is used
    /// only while the stack is neither reallocated nor shortened, and only
    /// with register operands below `nregs` of the code of the frame whose
    /// registers these are (as `verify` proved them).
    #[inline(always)]
    pub(super) unsafe fn new(stack: &mut Vec<Value<'h>>, base: usize, nregs: usize) -> Regs<'h> {
        debug_assert!(base + nregs <= stack.len());
        let _ = nregs;
        Regs {
            // SAFETY: `base` is within the stack (the contract above).
            first: unsafe { stack.as_mut_ptr().add(base) },
            #[cfg(debug_assertions)]
            len: nregs,
        }
    }

    /// Checks, in debug builds, that `r..r + n` are registers of the frame.
    #[inline(always)]
    fn check(&self, r: usize, n: usize) {
        #[cfg(debug_assertions)]
        assert!(r + n <= self.len, "register {r}+{n} of {}", self.len);
        let _ = (r, n);
    }

    /// Register `r`.
    #[inline(always)]
    pub(super) fn get(&self, r: usize) -> &Value<'h> {
        self.check(r, 1);
        // SAFETY: `r` is a register of the frame (see `Regs::new`), and
        // the stack holds them.
        unsafe { &*self.first.add(r) }
    }

    /// Register `r`, to write.
    #[inline(always)]
    pub(super) fn get_mut(&mut self, r: usize) -> &mut Value<'h> {
        self.check(r, 1);
        // SAFETY: as in `get`; the reference borrows `self`, so no other
        // is made through it meanwhile.
        unsafe { &mut *self.first.add(r) }
    }

    /// Copies `*v` into register `r` whole: a 16-byte copy, where an
    /// assignment copies the variant's parts. `v` is not register `r`
    /// itself.
    #[inline(always)]
    pub(super) fn copy_in(&mut self, r: usize, v: &Value<'h>) {
        self.check(r, 1);
        // SAFETY: as in `get`; `v` is a reference to another value, so the
        // two do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(v as *const Value<'h>, self.first.add(r), 1) }
    }

    /// Registers `r..r + n`.
    #[inline(always)]
    pub(super) fn slice(&self, r: usize, n: usize) -> &[Value<'h>] {
        self.check(r, n);
        // SAFETY: as in `get`, for each of the `n` registers (initialized
        // values of the frame).
        unsafe { std::slice::from_raw_parts(self.first.add(r), n) }
    }

    /// Registers `r..r + N`, to read and write as one (an iteration's
    /// state).
    #[inline(always)]
    pub(super) fn array_mut<const N: usize>(&mut self, r: usize) -> &mut [Value<'h>; N] {
        self.check(r, N);
        // SAFETY: as in `slice`; an array has the layout of its items.
        unsafe { &mut *(self.first.add(r) as *mut [Value<'h>; N]) }
    }
}
