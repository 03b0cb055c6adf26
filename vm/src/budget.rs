//! Budgets: every limit of one execution in one type.
//!
//! [`Limits`] are the configured maxima (the original's defaults);
//! [`Budget`] is what is left of them during one execution. The interpreter
//! draws steps from the budget in batches ([`Budget::draw_steps`]) so the
//! hot loop pays one decrement and one compare per instruction, and the
//! deadline and cancellation flag are checked once per batch and by every
//! builtin whose work grows with its input ([`Budget::check_time`]).

use crate::error::{Error, LimitKind, Result};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many times slower than an optimized build an unoptimized one does
/// the work that [`Budget::admit_work`] weighs.
const BUILD_SLOWDOWN: u128 = if cfg!(debug_assertions) { 16 } else { 1 };

/// Instructions run between two checks of the deadline and cancellation.
pub const CHECK_INTERVAL: u64 = 256;

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
    deadline: Instant,
    cancel: Option<Arc<AtomicBool>>,
    native_calls: Cell<u32>,
    intermediate_bytes: Cell<usize>,
    heap_bytes: Cell<usize>,
}

impl Budget {
    /// A fresh budget whose deadline runs from `start`.
    pub fn new(limits: Limits, start: Instant, cancel: Option<Arc<AtomicBool>>) -> Budget {
        Budget {
            steps_left: Cell::new(limits.max_steps),
            fuel: Cell::new(0),
            deadline: start + limits.max_time,
            cancel,
            native_calls: Cell::new(0),
            intermediate_bytes: Cell::new(0),
            heap_bytes: Cell::new(0),
            limits,
        }
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
        if Instant::now() >= self.deadline {
            return Err(Error::limit(LimitKind::Time));
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

    /// The time left before the deadline.
    pub fn time_left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
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
        if total > self.limits.max_heap_bytes {
            return Err(Error::limit(LimitKind::HeapBytes));
        }
        self.heap_bytes.set(total);
        Ok(())
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

    fn budget(steps: u64) -> Budget {
        let limits = Limits {
            max_steps: steps,
            ..Limits::default()
        };
        Budget::new(limits, Instant::now(), None)
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
