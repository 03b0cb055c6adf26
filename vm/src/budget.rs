//! Budgets: every limit of one execution in one type.
//!
//! [`Limits`] are the configured maxima (the original's defaults);
//! [`Budget`] is what is left of them during one execution. The interpreter
//! draws steps from the budget in batches ([`Budget::draw_steps`]) so the
//! hot loop pays one decrement and one compare per instruction, and the
//! deadline and cancellation flag are checked once per batch. Builtins and
//! operators whose work grows with their input charge that work
//! ([`Budget::charge_work`]): the charges add up across calls, and the clock
//! is looked at once per [`WORK_CHECK_UNITS`], so a loop of many calls that
//! each do a little less than a check's worth is bounded as tightly as one
//! call that does a great deal.

use crate::error::{Error, LimitKind, Result};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many times slower than an optimized build an unoptimized one does
/// the work that [`Budget::admit_work`] weighs.
const BUILD_SLOWDOWN: u128 = if cfg!(debug_assertions) { 16 } else { 1 };

/// Instructions run between two checks of the deadline and cancellation.
pub const CHECK_INTERVAL: u64 = 256;

/// Units of work charged between two looks at the clock (and the
/// cancellation flag) by [`Budget::charge_work`]. A unit is the cheapest
/// piece of work that grows with an input: one value copied or compared.
/// Dearer per-item work charges more units per item (see [`ITEM_UNITS`]),
/// so that this many units take well under a millisecond even in an
/// unoptimized build.
pub const WORK_CHECK_UNITS: u64 = 1 << 14;

/// Units charged for one item of a builtin's loop that does more than copy
/// or compare it (converts, hashes, formats or inserts it): a look at the
/// clock every 1,024 such items.
pub const ITEM_UNITS: u64 = 16;

/// Bytes of text (or other plain bytes) copied or written in bulk that
/// count as one unit: as many as one value occupies. A loop that handles
/// text a byte or a character at a time (escaping, decoding) charges a
/// unit per byte.
pub const BYTES_PER_UNIT: usize = 16;

/// The most items [`Budget::in_blocks`] hands over at once.
pub const WORK_BLOCK: usize = 4096;

/// The largest piece of byte work (a search, a copy, a hash of a long
/// string) done between two charges of [`Budget::charge_bytes`]: long
/// texts are worked on in windows of this size, each charged before it is
/// done, so that at most one window runs past the deadline.
pub const WORK_CHECK_BYTES: usize = 64 << 10;

/// The configured limits of one execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Source length in bytes, checked before parsing.
    pub max_source_bytes: usize,
    /// Bytecode instructions, top level and `main` together.
    pub max_steps: u64,
    /// Wall time from the start of parsing to the final conversion.
    pub max_time: Duration,
    /// Capability calls, counted before binding.
    pub max_native_calls: u32,
    /// Depth of a crossing value (scalar = 1, each container + 1).
    pub max_value_depth: u32,
    /// Compact JSON bytes of one native argument set, one native result or
    /// the final value.
    pub max_value_bytes: usize,
    /// Sum of the compact JSON bytes of successful native results.
    pub max_intermediate_bytes: usize,
    /// Bytes the interpreter allocates for values.
    pub max_heap_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_source_bytes: 65_536,
            max_steps: 1_000_000,
            max_time: Duration::from_secs(5),
            max_native_calls: 100,
            max_value_depth: 32,
            max_value_bytes: 1 << 20,
            max_intermediate_bytes: 8 << 20,
            max_heap_bytes: 64 << 20,
        }
    }
}

/// What is left of the limits during one execution.
pub struct Budget {
    pub limits: Limits,
    steps_left: Cell<u64>,
    /// Steps drawn and not yet spent, while no interpreter loop holds them.
    fuel: Cell<u64>,
    deadline: Cell<Instant>,
    cancel: Option<Arc<AtomicBool>>,
    native_calls: Cell<u32>,
    intermediate_bytes: Cell<usize>,
    heap_bytes: Cell<usize>,
    /// Heap charges up to this many bytes in all need no more than the
    /// one compare: the heap limit, or less while the execution has
    /// reserved less of a [`HeapTotal`].
    heap_ceiling: Cell<usize>,
    /// The bound on the heaps of many executions together, if any, and
    /// what this execution has reserved of it.
    total: Option<Arc<HeapTotal>>,
    reserved: Cell<usize>,
    /// Work units charged since the clock was last looked at.
    work: Cell<u64>,
    /// Heap bytes charged in all past which the next safe point of the
    /// interpreter collects (see [`Budget::collected`]).
    gc_at: Cell<usize>,
    /// Whether the space's chunks have been made large (see
    /// [`crate::gc::Space::widen`]).
    widened: Cell<bool>,
    /// Whether the last collection found most of the values reachable (or
    /// there was none): then the next one marks first, to see whether it
    /// can be put off (see [`Budget::collection_deferred`]).
    mostly_kept: Cell<bool>,
    /// Whether a collection has been made or put off yet: the first one
    /// comes early, after [`GC_EARLY_BYTES`], and gives up as soon as it
    /// finds much reachable (see [`Budget::probe_limit`]).
    probed: Cell<bool>,
}

/// Heap bytes charged at which the interpreter's next safe point makes the
/// space's next chunk a large one (see [`crate::gc::Space::widen`]). A
/// program that has allocated this much goes on, as a rule, to allocate
/// megabytes, which then take one page fault per 2 MiB instead of one per
/// 4 KiB; one that stops soon after pays for a huge page it half uses
/// (about 0.3 ms here), so the mark is not lower.
pub const WIDEN_AT: usize = 512 << 10;

/// Bytes allocated since the last collection (at least) before the next
/// one: a program that allocates less never collects.
pub const GC_MIN_BYTES: usize = 16 << 20;

/// Bytes allocated before the first collection, and between two while
/// each finds little reachable: a program that makes garbage in a loop
/// reuses the same few megabytes (see [`Budget::collected`]).
pub const GC_EARLY_BYTES: usize = 3 << 19;

/// Whether a collection that copied `live` of `before` bytes into the new
/// arena (tenured objects are not copied again: see `gc::Tenured`) found
/// little reachable: less than a third. The next comes after
/// [`GC_EARLY_BYTES`] then, and the arena it copied out of is kept for the
/// next to copy into.
pub fn little_kept(live: usize, before: usize) -> bool {
    live.saturating_mul(3) < before
}

/// Bytes an execution reserves of a [`HeapTotal`] at a time: its heap
/// charges between two reservations cost no shared write.
pub const HEAP_TOTAL_BLOCK: usize = 32 << 10;

/// A bound on the heap bytes of many executions at once (the service's
/// open executions). Each execution reserves its charges from it in
/// blocks of [`HEAP_TOTAL_BLOCK`] bytes (never past its own heap limit)
/// and gives all back when its budget is dropped; a charge that finds no
/// room fails the execution that made it with the heap limit (`resource
/// limit exceeded`), and the others go on.
#[derive(Debug)]
pub struct HeapTotal {
    limit: usize,
    used: AtomicUsize,
}

impl HeapTotal {
    /// A bound of `limit` bytes, none used.
    pub fn new(limit: usize) -> HeapTotal {
        HeapTotal {
            limit,
            used: AtomicUsize::new(0),
        }
    }

    /// The bound.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The bytes reserved now by the executions that share it.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Reserves `bytes` when they fit under the bound.
    fn reserve(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|&n| n <= self.limit)
            })
            .is_ok()
    }

    fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        if let Some(total) = &self.total {
            total.release(self.reserved.get());
        }
    }
}

impl Budget {
    /// A fresh budget whose deadline runs from `start`.
    pub fn new(limits: Limits, start: Instant, cancel: Option<Arc<AtomicBool>>) -> Budget {
        Budget {
            steps_left: Cell::new(limits.max_steps),
            fuel: Cell::new(0),
            deadline: Cell::new(start + limits.max_time),
            cancel,
            native_calls: Cell::new(0),
            intermediate_bytes: Cell::new(0),
            heap_bytes: Cell::new(0),
            heap_ceiling: Cell::new(limits.max_heap_bytes),
            total: None,
            reserved: Cell::new(0),
            work: Cell::new(0),
            gc_at: Cell::new(Self::first_gc_at(&limits).min(WIDEN_AT)),
            widened: Cell::new(false),
            mostly_kept: Cell::new(true),
            probed: Cell::new(false),
            limits,
        }
    }

    /// This budget, its heap charges also reserved from `total`.
    pub fn with_total(mut self, total: Arc<HeapTotal>) -> Budget {
        self.heap_ceiling.set(0);
        self.total = Some(total);
        self
    }

    /// Takes up to [`CHECK_INTERVAL`] steps for the interpreter to spend,
    /// after checking the deadline and cancellation. Fails when no step is
    /// left: the instruction that asked is the one over the limit.
    pub fn draw_steps(&self) -> Result<u64> {
        self.check_time()?;
        let left = self.steps_left.get();
        if left == 0 {
            return Err(Error::limit(LimitKind::Steps));
        }
        let take = left.min(CHECK_INTERVAL);
        self.steps_left.set(left - take);
        Ok(take)
    }

    /// Takes the drawn, unspent steps for an interpreter loop to spend.
    #[inline]
    pub fn take_fuel(&self) -> u64 {
        self.fuel.replace(0)
    }

    /// Stores the unspent steps of a loop that calls out or stops.
    #[inline]
    pub fn put_fuel(&self, fuel: u64) {
        self.fuel.set(fuel);
    }

    /// Gives back steps drawn but not spent.
    pub fn return_steps(&self, unspent: u64) {
        self.steps_left.set(self.steps_left.get() + unspent);
    }

    /// Steps still available (not counting any drawn batch).
    pub fn steps_left(&self) -> u64 {
        self.steps_left.get()
    }

    /// Fails if the execution was cancelled or its deadline has passed.
    pub fn check_time(&self) -> Result<()> {
        if let Some(c) = &self.cancel {
            if c.load(Ordering::Relaxed) {
                return Err(Error::cancelled());
            }
        }
        if Instant::now() >= self.deadline.get() {
            return Err(Error::limit(LimitKind::Time));
        }
        Ok(())
    }

    /// Charges `units` of work done by a builtin or operator (see
    /// [`WORK_CHECK_UNITS`] for the scale). The charges of all calls add
    /// up; each time they reach [`WORK_CHECK_UNITS`]
    /// [`Budget::check_time`] runs, failing with the time limit (or
    /// cancellation) exactly as the interpreter's own check does, and the
    /// count restarts if it passes (after a failure, every later charge
    /// fails too, even where a caller swallowed the error). Between two
    /// looks at the clock this costs an add and a compare.
    #[inline]
    pub fn charge_work(&self, units: u64) -> Result<()> {
        let total = self.work.get().saturating_add(units);
        self.work.set(total);
        if total < WORK_CHECK_UNITS {
            return Ok(());
        }
        self.check_time()?;
        self.work.set(0);
        Ok(())
    }

    /// The work units charged since the clock was last looked at.
    #[cfg(test)]
    pub(crate) fn work_charged(&self) -> u64 {
        self.work.get()
    }

    /// Charges `bytes` bytes of work scanned, compared, hashed or copied in
    /// bulk (at [`BYTES_PER_UNIT`] bytes a unit, at least one unit for any
    /// work), through [`Budget::charge_work`].
    #[inline]
    pub fn charge_bytes(&self, bytes: usize) -> Result<()> {
        self.charge_work(bytes.div_ceil(BYTES_PER_UNIT) as u64)
    }

    /// Runs `f` on consecutive blocks of at most [`WORK_BLOCK`] items of
    /// `items`, charging each block's length in units before it runs: a
    /// bulk copy of a long slice is interrupted by the deadline within a
    /// block.
    pub fn in_blocks<'a, T>(&self, items: &'a [T], mut f: impl FnMut(&'a [T])) -> Result<()> {
        for block in items.chunks(WORK_BLOCK) {
            self.charge_work(block.len() as u64)?;
            f(block);
        }
        Ok(())
    }

    /// Admits one uninterruptible piece of work (a big-int multiplication,
    /// a conversion of a huge int) estimated at `est_ns` nanoseconds of an
    /// optimized build. It is refused with the time limit when it cannot
    /// finish before the deadline, or when it alone would take more than a
    /// twentieth of the whole time limit, so that even an estimate that is
    /// off by a factor of two ends within 10% of the deadline.
    pub fn admit_work(&self, est_ns: u128) -> Result<()> {
        self.check_time()?;
        let est = est_ns.saturating_mul(BUILD_SLOWDOWN);
        let cap = self.limits.max_time.as_nanos() / 20;
        if est > self.time_left().as_nanos().min(cap) {
            return Err(Error::limit(LimitKind::Time));
        }
        Ok(())
    }

    /// Admits one uninterruptible pass estimated at `est_ns` nanoseconds
    /// of an optimized build whose length the program's data bounds (a
    /// rebuild of a dict's index): refused with the time limit only when it
    /// cannot finish before the deadline. Unlike [`Budget::admit_work`]
    /// there is no cap: the estimate is linear in a size the heap limit
    /// bounds.
    pub fn admit_pass(&self, est_ns: u128) -> Result<()> {
        self.check_time()?;
        if est_ns.saturating_mul(BUILD_SLOWDOWN) > self.time_left().as_nanos() {
            return Err(Error::limit(LimitKind::Time));
        }
        Ok(())
    }

    /// The time left before the deadline.
    pub fn time_left(&self) -> Duration {
        self.deadline
            .get()
            .saturating_duration_since(Instant::now())
    }

    /// Moves the deadline out by `by`: time the host spent waiting for a
    /// person, which the time limit does not count.
    pub fn extend_deadline(&self, by: Duration) {
        if !by.is_zero() {
            self.deadline.set(self.deadline.get() + by);
        }
    }

    /// Counts one capability call.
    pub fn charge_native_call(&self) -> Result<()> {
        let n = self.native_calls.get();
        if n >= self.limits.max_native_calls {
            return Err(Error::limit(LimitKind::NativeCalls));
        }
        self.native_calls.set(n + 1);
        Ok(())
    }

    pub fn native_calls(&self) -> u32 {
        self.native_calls.get()
    }

    /// Debits the encoded size of a successful native result.
    pub fn charge_intermediate(&self, bytes: usize) -> Result<()> {
        let total = self.intermediate_bytes.get().saturating_add(bytes);
        if total > self.limits.max_intermediate_bytes {
            return Err(Error::limit(LimitKind::IntermediateBytes));
        }
        self.intermediate_bytes.set(total);
        Ok(())
    }

    /// Charges `bytes` of heap before they are allocated.
    #[inline]
    pub fn charge_heap(&self, bytes: usize) -> Result<()> {
        let total = self.heap_bytes.get().saturating_add(bytes);
        if total > self.heap_ceiling.get() {
            return self.charge_heap_past_ceiling(total);
        }
        self.heap_bytes.set(total);
        Ok(())
    }

    /// [`Budget::charge_heap`] of a total past the ceiling: the heap limit,
    /// or another block of the shared [`HeapTotal`] to reserve first.
    #[cold]
    #[inline(never)]
    fn charge_heap_past_ceiling(&self, total: usize) -> Result<()> {
        let max = self.limits.max_heap_bytes;
        if total > max {
            return Err(Error::limit(LimitKind::HeapBytes));
        }
        if let Some(shared) = &self.total {
            let reserved = self.reserved.get();
            let more = (total - reserved)
                .div_ceil(HEAP_TOTAL_BLOCK)
                .saturating_mul(HEAP_TOTAL_BLOCK)
                .min(max - reserved);
            if !shared.reserve(more) {
                return Err(Error::limit(LimitKind::HeapBytes));
            }
            self.reserved.set(reserved + more);
            self.heap_ceiling.set(reserved + more);
        }
        self.heap_bytes.set(total);
        Ok(())
    }

    /// Where the first collection is due: after [`GC_EARLY_BYTES`], or
    /// earlier under a smaller heap limit; at once under `gc-stress`.
    fn first_gc_at(limits: &Limits) -> usize {
        if cfg!(feature = "gc-stress") {
            return 0;
        }
        GC_EARLY_BYTES.min(limits.max_heap_bytes / 2)
    }

    /// Where the first collection is due when the early one found much
    /// reachable: after [`GC_MIN_BYTES`], or earlier under a smaller heap
    /// limit.
    fn late_gc_at(limits: &Limits) -> usize {
        GC_MIN_BYTES.min(limits.max_heap_bytes / 2)
    }

    /// The most bytes the mark of the collection due may find reachable
    /// in containers (what a copy copies again at every collection: the
    /// strings it tenures are copied once) before it gives up: an eighth
    /// of `values` (what the values were charged) for the first, early collection when a later one is still
    /// to come (then [`Budget::probe_gave_up`]); no bound for the others.
    /// A program that keeps what it makes pays for a short look, not a
    /// copy; one that makes garbage is collected early and often, at the
    /// cost of copying little.
    pub fn probe_limit(&self, values: usize) -> usize {
        if !self.probed.get() && self.heap_bytes.get() < Self::late_gc_at(&self.limits) {
            values / 8
        } else {
            usize::MAX
        }
    }

    /// Records that the first collection's mark found more than
    /// [`Budget::probe_limit`] reachable: the next is due where it would
    /// have been without an early one (under `gc-stress`, at once).
    pub fn probe_gave_up(&self) {
        self.probed.set(true);
        let at = if cfg!(feature = "gc-stress") {
            0
        } else {
            Self::late_gc_at(&self.limits)
        };
        self.gc_at.set(at);
    }

    /// Whether the space should be widened now (once, at the first safe
    /// point past [`WIDEN_AT`]); after it, the first collection is due as
    /// if there had been no widening.
    /// Not under a heap limit of less than four large chunks, where a
    /// huge page would be much of what the program may use.
    pub fn take_widening(&self) -> bool {
        if self.widened.replace(true) {
            return false;
        }
        if !self.probed.get() {
            self.gc_at.set(Self::first_gc_at(&self.limits));
        }
        self.heap_bytes.get() >= WIDEN_AT && self.limits.max_heap_bytes >= 4 * crate::gc::WIDE_CHUNK
    }

    /// Whether a collection is due at the next safe point.
    #[inline(always)]
    pub fn gc_due(&self) -> bool {
        self.heap_bytes.get() >= self.gc_at.get()
    }

    /// Records a collection that left `live` bytes charged (the program's
    /// code, which is never collected, the values still reachable, and
    /// the tenured objects), whose copy took `copy` bytes with its
    /// bookkeeping, and of which `young` (the code and what was copied
    /// into the new arena) the next collection copies again unless it is
    /// full: the charge becomes `live`, what a shared [`HeapTotal`] had
    /// reserved beyond it (in whole blocks) goes back, and the next
    /// collection is due once the program has allocated twice `young`
    /// past `live` (at least [`GC_MIN_BYTES`], or [`GC_EARLY_BYTES`] when
    /// `young` is less than a third of the charge ([`little_kept`]):
    /// copying costs in proportion to what is copied, so this bounds it
    /// to half a byte per byte allocated) — but early enough that a copy twice as large still
    /// fits in [`Budget::collection_room`], at 3/4 of the limit at the
    /// latest (what one instruction allocates between two safe points, and
    /// the copy, must fit in the rest), and never before another 1/16 of
    /// the limit (or that least step, if less) is charged, so that a
    /// program that keeps about half its budget is not collected at every
    /// safe point.
    /// Under `gc-stress`, at every safe point while less than 16 KiB is
    /// live.
    pub fn collected(&self, live: usize, copy: usize, young: usize) {
        let max = self.limits.max_heap_bytes;
        let before = self.heap_bytes.get();
        self.probed.set(true);
        self.mostly_kept.set(young.saturating_mul(2) > before);
        let step = if little_kept(young, before) {
            GC_EARLY_BYTES
        } else {
            GC_MIN_BYTES
        };
        self.heap_bytes.set(live);
        if let Some(shared) = &self.total {
            let keep = live
                .div_ceil(HEAP_TOTAL_BLOCK)
                .saturating_mul(HEAP_TOTAL_BLOCK)
                .min(max);
            let reserved = self.reserved.get();
            if keep < reserved {
                shared.release(reserved - keep);
                self.reserved.set(keep);
                self.heap_ceiling.set(keep);
            }
        }
        let grown = live.saturating_add(young.saturating_mul(2).max(step));
        let mut next = grown
            .min(max.saturating_sub(max / 16 + copy.saturating_mul(2)))
            .min(max - max / 4)
            .max(live.saturating_add((max / 16).min(step)));
        if cfg!(feature = "gc-stress") {
            // At every safe point while little is live, else once it grew
            // by a quarter: a test that builds a large value stays linear.
            next = next.min(if live < 16 << 10 { 0 } else { live + live / 4 });
        }
        self.gc_at.set(next);
    }

    /// Whether the collection due should mark first: when the last one
    /// found most of the values reachable, or this is the first. A program
    /// that made mostly garbage is collected without the mark.
    pub fn worth_marking(&self) -> bool {
        self.mostly_kept.get()
    }

    /// Puts the next collection off when more than three quarters of what
    /// the values were charged is still reachable (`kept` bytes): it is due
    /// once the heap has grown by twice what is kept (at least
    /// [`GC_MIN_BYTES`]), as after a collection, but early enough that a
    /// copy of twice `kept` still fits in [`Budget::collection_room`], at
    /// 3/4 of the limit at the latest. Returns false, changing nothing,
    /// when that is no later than now: the collection must be made.
    pub fn collection_deferred(&self, kept: usize) -> bool {
        let max = self.limits.max_heap_bytes;
        let now = self.heap_bytes.get();
        let mut next = now
            .saturating_add(kept.saturating_mul(2).max(GC_MIN_BYTES))
            .min(max.saturating_sub(max / 16 + kept.saturating_mul(2)))
            .min(max - max / 4);
        if next <= now {
            return false;
        }
        self.probed.set(true);
        self.mostly_kept.set(true);
        if cfg!(feature = "gc-stress") {
            // As often as after a collection under `gc-stress`.
            next = next.min(if kept < 16 << 10 { 0 } else { now + now / 4 });
        }
        self.gc_at.set(next);
        true
    }

    /// The bytes a collection may take for its copy and bookkeeping: what
    /// is left of the heap limit, less 1/16 of it to spare for the
    /// allocator's own overhead.
    pub fn collection_room(&self) -> usize {
        let max = self.limits.max_heap_bytes;
        max.saturating_sub(self.heap_bytes.get())
            .saturating_sub(max / 16)
    }

    /// Records a collection that could not be made (its copy would not
    /// have fit in the heap limit): the next is tried once another 1/16
    /// of the limit (or [`GC_MIN_BYTES`], if less) has been charged.
    pub fn collection_skipped(&self) {
        let max = self.limits.max_heap_bytes;
        let step = (max / 16).clamp(1, GC_MIN_BYTES);
        self.gc_at.set(self.heap_bytes.get().saturating_add(step));
    }

    /// Gives back a charge for Rust memory that was freed (a transient
    /// buffer charged while it lived, such as the text of a `repr` once it
    /// is copied into the heap).
    pub fn release_heap(&self, bytes: usize) {
        self.heap_bytes
            .set(self.heap_bytes.get().saturating_sub(bytes));
    }

    /// Heap bytes that may still be charged.
    pub fn heap_left(&self) -> usize {
        self.limits
            .max_heap_bytes
            .saturating_sub(self.heap_bytes.get())
    }

    /// Heap bytes charged so far.
    pub fn heap_bytes(&self) -> usize {
        self.heap_bytes.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn budget(steps: u64) -> Budget {
        let limits = Limits {
            max_steps: steps,
            ..Limits::default()
        };
        Budget::new(limits, Instant::now(), None)
    }

    #[test]
    fn a_collection_is_put_off_only_while_a_later_copy_still_fits() {
        let limits = |max: usize| Limits {
            max_heap_bytes: max,
            ..Limits::default()
        };
        let b = Budget::new(limits(1 << 30), Instant::now(), None);
        b.charge_heap(20 << 20).unwrap();
        assert!(b.worth_marking(), "the first collection marks");
        // Twice what is kept past now, the copy of twice it fitting.
        assert!(b.collection_deferred(18 << 20));
        if !cfg!(feature = "gc-stress") {
            assert!(!b.gc_due());
            b.charge_heap((36 << 20) - 1).unwrap();
            assert!(!b.gc_due());
            b.charge_heap(1).unwrap();
            assert!(b.gc_due(), "due at 20 + 2 * 18 MiB");
        }

        // Under a limit where the copy of twice what is kept would not fit
        // later, the collection is made now, and nothing changes.
        let small = Budget::new(limits(64 << 20), Instant::now(), None);
        small.charge_heap(30 << 20).unwrap();
        let due = small.gc_due();
        assert!(!small.collection_deferred(28 << 20));
        assert_eq!(small.gc_due(), due);

        // A collection that kept little makes the next one skip the mark.
        small.collected(2 << 20, 3 << 20, 2 << 20);
        assert!(!small.worth_marking());
        small.collected(2 << 20, 3 << 20, 2 << 20);
        assert!(small.worth_marking(), "2 of 2 MiB kept");
    }

    #[test]
    fn the_first_collection_comes_early_and_looks_only_briefly() {
        if cfg!(feature = "gc-stress") {
            // Collections are due at every safe point.
            return;
        }
        // A program that keeps what it makes: the early mark gives up
        // past an eighth of the values, and the next collection is due
        // where it would have been without it.
        let keeper = budget(1000);
        keeper.charge_heap(GC_EARLY_BYTES).unwrap();
        assert!(keeper.gc_due());
        assert_eq!(keeper.probe_limit(GC_EARLY_BYTES), GC_EARLY_BYTES / 8);
        keeper.probe_gave_up();
        assert!(!keeper.gc_due());
        assert_eq!(keeper.probe_limit(GC_EARLY_BYTES), usize::MAX, "once only");
        assert!(keeper.worth_marking(), "the next one marks in full");
        keeper
            .charge_heap(GC_MIN_BYTES - GC_EARLY_BYTES - 1)
            .unwrap();
        assert!(!keeper.gc_due());
        keeper.charge_heap(1).unwrap();
        assert!(keeper.gc_due(), "due at {GC_MIN_BYTES}");

        // A program that makes garbage: collected every GC_EARLY_BYTES
        // while each collection copies less than a third.
        let churner = budget(1000);
        churner.charge_heap(GC_EARLY_BYTES).unwrap();
        churner.collected(64 << 10, 80 << 10, 64 << 10);
        assert!(!churner.worth_marking());
        assert_eq!(churner.probe_limit(1 << 20), usize::MAX);
        churner.charge_heap(GC_EARLY_BYTES - 1).unwrap();
        assert!(!churner.gc_due());
        churner.charge_heap(1).unwrap();
        assert!(churner.gc_due(), "due {GC_EARLY_BYTES} later");
        // Once a collection keeps a third or more outside the tenured
        // objects, the next waits for GC_MIN_BYTES more.
        let now = churner.heap_bytes();
        churner.collected(now.div_ceil(3), now / 2, now.div_ceil(3));
        churner.charge_heap(GC_MIN_BYTES - 1).unwrap();
        assert!(!churner.gc_due());
        churner.charge_heap(1).unwrap();
        assert!(churner.gc_due());
        assert!(little_kept(1, 4) && !little_kept(1, 3));
        // Tenured objects are not copied again: what sets the next
        // collection is what it copies (`young`), twice of it allocated
        // past all that is kept.
        let now = churner.heap_bytes();
        let young = now / 8;
        churner.collected(now / 2, now / 2, young);
        churner
            .charge_heap(GC_EARLY_BYTES.max(2 * young) - 1)
            .unwrap();
        assert!(!churner.gc_due());
        churner.charge_heap(1).unwrap();
        assert!(churner.gc_due(), "due GC_EARLY_BYTES past what is kept");

        // Under a heap limit of less than twice GC_MIN_BYTES, the first
        // collection comes early too, and its mark is bounded as long as
        // the later one is still to come.
        let small = Budget::new(
            Limits {
                max_heap_bytes: 8 << 20,
                ..Limits::default()
            },
            Instant::now(),
            None,
        );
        small.charge_heap(GC_EARLY_BYTES).unwrap();
        assert!(small.gc_due());
        assert_eq!(small.probe_limit(800), 100);
        small.probe_gave_up();
        small.charge_heap((4 << 20) - GC_EARLY_BYTES - 1).unwrap();
        assert!(!small.gc_due());
        small.charge_heap(1).unwrap();
        assert!(small.gc_due(), "due at half the limit");
    }

    #[test]
    fn a_heap_total_is_reserved_in_blocks_bounds_all_and_is_given_back() {
        let total = Arc::new(HeapTotal::new(3 * HEAP_TOTAL_BLOCK));
        let limits = Limits {
            max_heap_bytes: 2 * HEAP_TOTAL_BLOCK + 100,
            ..Limits::default()
        };
        let a = Budget::new(limits.clone(), Instant::now(), None).with_total(total.clone());
        a.charge_heap(10).unwrap();
        assert_eq!(total.used(), HEAP_TOTAL_BLOCK);
        a.charge_heap(HEAP_TOTAL_BLOCK).unwrap();
        assert_eq!(total.used(), 2 * HEAP_TOTAL_BLOCK);
        // Its own limit comes first, and reservations never pass it.
        let err = a.charge_heap(2 * HEAP_TOTAL_BLOCK).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Limit(LimitKind::HeapBytes)));
        assert_eq!(total.used(), 2 * HEAP_TOTAL_BLOCK);
        a.charge_heap(HEAP_TOTAL_BLOCK + 90).unwrap();
        assert_eq!(a.heap_bytes(), limits.max_heap_bytes);
        assert_eq!(total.used(), limits.max_heap_bytes);
        // Another execution finds less than a block left: it fails at the
        // total, below its own limit, without reserving anything.
        let b = Budget::new(limits, Instant::now(), None).with_total(total.clone());
        b.charge_heap(HEAP_TOTAL_BLOCK - 200).unwrap_err();
        assert_eq!(b.heap_bytes(), 0);
        drop(a);
        assert_eq!(total.used(), 0);
        b.charge_heap(HEAP_TOTAL_BLOCK - 200).unwrap();
        drop(b);
        assert_eq!(total.used(), 0);
    }

    #[test]
    fn the_space_is_widened_once_past_its_mark_and_the_first_collection_stays_where_it_was() {
        if cfg!(feature = "gc-stress") {
            // Collections are due at every safe point.
            return;
        }
        let b = budget(1000);
        b.charge_heap(WIDEN_AT - 1).unwrap();
        assert!(!b.gc_due());
        b.charge_heap(1).unwrap();
        assert!(b.gc_due());
        assert!(b.take_widening());
        assert!(!b.gc_due(), "no collection before {GC_EARLY_BYTES} bytes");
        assert!(!b.take_widening(), "once only");
        b.charge_heap(GC_EARLY_BYTES - WIDEN_AT).unwrap();
        assert!(b.gc_due());
        // Under a small heap limit the first collection comes first, and
        // the space is not widened.
        let small = Budget::new(
            Limits {
                max_heap_bytes: 4 << 20,
                ..Limits::default()
            },
            Instant::now(),
            None,
        );
        small.charge_heap(WIDEN_AT).unwrap();
        assert!(small.gc_due());
        assert!(!small.take_widening());
        assert!(!small.gc_due(), "due at half the limit");
        small.charge_heap(1 << 20).unwrap();
        small.charge_heap(1 << 20).unwrap();
        assert!(small.gc_due());
    }

    #[test]
    fn steps_are_drawn_in_batches_and_returned_exactly() {
        let b = budget(300);
        assert_eq!(b.draw_steps().unwrap(), 256);
        assert_eq!(b.draw_steps().unwrap(), 44);
        b.return_steps(4);
        assert_eq!(b.draw_steps().unwrap(), 4);
        assert!(b.draw_steps().is_err());
    }

    #[test]
    fn heap_charges_fail_past_the_limit_and_keep_the_total() {
        let b = Budget::new(
            Limits {
                max_heap_bytes: 100,
                ..Limits::default()
            },
            Instant::now(),
            None,
        );
        b.charge_heap(60).unwrap();
        b.charge_heap(40).unwrap();
        assert!(b.charge_heap(1).is_err());
        assert_eq!(b.heap_bytes(), 100);
    }

    fn is_time(r: Result<()>) -> bool {
        matches!(
            r.map_err(Error::into_kind),
            Err(ErrorKind::Limit(LimitKind::Time))
        )
    }

    #[test]
    fn work_charges_add_up_across_calls_before_the_clock_is_read() {
        // A deadline already past: only a look at the clock can fail.
        let b = Budget::new(
            Limits {
                max_time: Duration::ZERO,
                ..Limits::default()
            },
            Instant::now(),
            None,
        );
        for _ in 0..WORK_CHECK_UNITS / 4 - 1 {
            b.charge_work(4).unwrap();
        }
        b.charge_work(3).unwrap();
        assert!(is_time(b.charge_work(1)));
        // A failed look leaves the count full: the next charge looks again.
        assert!(is_time(b.charge_work(0)));
        // A passed look restarts the count.
        let b = budget(1);
        b.charge_work(WORK_CHECK_UNITS).unwrap();
        b.charge_work(WORK_CHECK_UNITS - 1).unwrap();
        b.charge_work(u64::MAX).unwrap();
        b.charge_work(0).unwrap();
    }

    #[test]
    fn blocks_cover_the_items_in_order_and_stop_at_the_deadline() {
        let items: Vec<u32> = (0..10_000).collect();
        let b = budget(1);
        let mut seen = Vec::new();
        b.in_blocks(&items, |block| {
            assert!(block.len() <= WORK_BLOCK);
            seen.extend_from_slice(block);
        })
        .unwrap();
        assert_eq!(seen, items);
        let late = Budget::new(
            Limits {
                max_time: Duration::ZERO,
                ..Limits::default()
            },
            Instant::now(),
            None,
        );
        let many: Vec<u32> = (0..100_000).collect();
        let mut copied = 0;
        let got = late.in_blocks(&many, |block| copied += block.len());
        assert!(is_time(got));
        assert!(copied < WORK_CHECK_UNITS as usize, "{copied}");
    }

    #[test]
    fn charged_bytes_are_units_of_work_and_any_work_counts() {
        let flag = Arc::new(AtomicBool::new(false));
        let b = Budget::new(Limits::default(), Instant::now(), Some(flag.clone()));
        flag.store(true, Ordering::Relaxed);
        // Below the interval the clock (and the flag) is not looked at.
        let bytes = (WORK_CHECK_UNITS as usize - 2) * BYTES_PER_UNIT;
        b.charge_bytes(bytes).unwrap();
        // One byte is a whole unit.
        b.charge_bytes(1).unwrap();
        assert!(b.charge_bytes(1).is_err());
        assert!(b.charge_bytes(usize::MAX).is_err());
    }

    #[test]
    fn cancellation_is_seen() {
        let flag = Arc::new(AtomicBool::new(false));
        let b = Budget::new(Limits::default(), Instant::now(), Some(flag.clone()));
        assert!(b.check_time().is_ok());
        flag.store(true, Ordering::Relaxed);
        assert!(b.check_time().is_err());
    }

    #[test]
    fn native_calls_are_counted_up_to_the_limit() {
        let b = Budget::new(
            Limits {
                max_native_calls: 2,
                ..Limits::default()
            },
            Instant::now(),
            None,
        );
        b.charge_native_call().unwrap();
        b.charge_native_call().unwrap();
        assert!(b.charge_native_call().is_err());
    }
}
