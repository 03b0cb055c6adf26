//! CPU slots: where and how many steps of executions run at once.
//!
//! A step of an execution runs its program's instructions until the
//! program calls a capability or ends (see [`crate::service`]); it never
//! waits for anything else. At most `max_concurrent_executions` steps run
//! at once, each holding one slot; an execution that waits for a slot
//! holds nothing else, and is stopped by its cancellation while it waits.
//! A paused execution (awaiting a capability) holds no slot.
//!
//! On a multi-threaded runtime a step runs on the worker that polls the
//! execution while all workers but one are free: most steps end within
//! microseconds, and handing the work to another thread and back costs
//! more than they do, while the free worker keeps serving accept, health
//! and every other task. Otherwise the worker hands its other tasks to
//! the rest of the runtime first (`block_in_place`), so a long step never
//! holds up I/O; the slots bound how many threads do that at once. A
//! current-thread runtime cannot spare its only thread, so there a step
//! runs on the blocking pool. A panic in a step is an internal failure.

use crate::error::Error;
use crate::service::Count;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio_util::sync::CancellationToken;

/// Runs one step, `step`, on a CPU slot of `inner` (see the module's
/// documentation), once a slot is free.
pub(crate) async fn run<T: Send + 'static>(
    inner: &crate::service::Inner,
    token: &CancellationToken,
    step: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Error> {
    let slot = match inner.cpu.try_acquire() {
        Ok(slot) => slot,
        Err(_) => tokio::select! {
            slot = inner.cpu.acquire() => slot.map_err(|_| Error::Internal)?,
            _ = token.cancelled() => return Err(Error::Canceled),
        },
    };
    let _running = Count::up(&inner.counts.running);
    let handle = Handle::current();
    let outcome = if handle.runtime_flavor() == RuntimeFlavor::MultiThread {
        let inline = InlineSlot::take(handle.metrics().num_workers());
        catch_unwind(AssertUnwindSafe(|| match &inline {
            Some(_) => step(),
            None => tokio::task::block_in_place(step),
        }))
        .map_err(|_| Error::Internal)
    } else {
        tokio::task::spawn_blocking(step)
            .await
            .map_err(|_| Error::Internal)
    };
    drop(slot);
    outcome
}

/// Programs running right now on a worker thread that kept its core, in
/// the whole process (whatever the service or runtime: counting them all
/// together can only make fewer run that way).
static INLINE: AtomicUsize = AtomicUsize::new(0);

/// A program running on a worker thread that keeps its core; at most one
/// fewer than the runtime has workers, so one always stays free.
struct InlineSlot;

impl InlineSlot {
    fn take(workers: usize) -> Option<InlineSlot> {
        let limit = workers.saturating_sub(1);
        INLINE
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()
            .map(|_| InlineSlot)
    }
}

impl Drop for InlineSlot {
    fn drop(&mut self) {
        INLINE.fetch_sub(1, Ordering::AcqRel);
    }
}
