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
//! and every other task. Otherwise (and always on a current-thread
//! runtime, which cannot spare its only thread) the step goes to the
//! service's step threads, [`Threads`], while the worker goes on with its
//! other tasks, so a long step never holds up I/O. There are never more
//! step threads than slots, so the process's threads stay few however
//! many executions are open. (Handing the worker's core to a new thread
//! instead, with `block_in_place`, rotated threads at every step, and the
//! runtime's blocking pool grows whenever a step is handed over before
//! the last one's thread is idle again: under load, 1,000 waiting
//! executions ran on 45 to 160 threads, each with its stack and
//! allocator caches.)
//!
//! The slot and the running count travel with the step: if the task
//! awaiting a step is dropped (its client went away), the step still
//! holds its slot until it ends, and its result is dropped then. A panic
//! in a step is an internal failure.

use crate::error::Error;
use crate::service::Count;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::{oneshot, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

/// Runs one step, `step`, on a CPU slot of `inner` (see the module's
/// documentation), once a slot is free.
pub(crate) async fn run<T: Send + 'static>(
    inner: &Arc<crate::service::Inner>,
    token: &CancellationToken,
    step: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Error> {
    let slot = match inner.cpu.clone().try_acquire_owned() {
        Ok(slot) => slot,
        Err(_) => tokio::select! {
            slot = inner.cpu.clone().acquire_owned() => slot.map_err(|_| Error::Internal)?,
            _ = token.cancelled() => return Err(Error::Canceled),
        },
    };
    let handle = Handle::current();
    let inline = match handle.runtime_flavor() {
        RuntimeFlavor::MultiThread => InlineSlot::take(handle.metrics().num_workers()),
        _ => None,
    };
    if inline.is_some() {
        return counted(inner, slot, step);
    }
    let (tx, rx) = oneshot::channel();
    let owner = inner.clone();
    inner.threads.run(Box::new(move || {
        // A step polls handlers once (those done at once answer within
        // it), so it runs inside the runtime, as on a worker.
        let _runtime = handle.enter();
        // The awaiting task may be gone: then the outcome is dropped here.
        let _ = tx.send(counted(&owner, slot, step));
    }));
    rx.await.map_err(|_| Error::Internal)?
}

/// Runs `step` counted as running, then gives its slot back.
fn counted<T>(
    inner: &crate::service::Inner,
    slot: OwnedSemaphorePermit,
    step: impl FnOnce() -> T,
) -> Result<T, Error> {
    let outcome = {
        let _running = Count::up(&inner.counts.running);
        catch_unwind(AssertUnwindSafe(step)).map_err(|_| Error::Internal)
    };
    drop(slot);
    outcome
}

/// A step handed to a step thread.
type Job = Box<dyn FnOnce() + Send>;

/// The threads that run a service's steps away from the runtime's
/// workers: started when first needed, never more than the service has
/// slots (a step is handed over only while it holds a slot), and ended
/// when the service is dropped.
pub(crate) struct Threads {
    shared: Arc<Shared>,
    max: usize,
}

struct Shared {
    state: Mutex<State>,
    ready: Condvar,
}

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    idle: usize,
    threads: usize,
    closed: bool,
}

impl Threads {
    /// At most `max` threads (at least one).
    pub(crate) fn new(max: usize) -> Threads {
        Threads {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                ready: Condvar::new(),
            }),
            max: max.max(1),
        }
    }

    fn state(shared: &Shared) -> MutexGuard<'_, State> {
        // Jobs run outside the lock, so a panic cannot leave it poisoned
        // with the state half changed.
        shared.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `job` on a step thread: an idle one, else a new one while
    /// there are fewer than the bound, else the first to finish.
    fn run(&self, job: Job) {
        let mut state = Threads::state(&self.shared);
        state.jobs.push_back(job);
        if state.idle > 0 {
            drop(state);
            self.shared.ready.notify_one();
            return;
        }
        if state.threads >= self.max {
            return;
        }
        state.threads += 1;
        drop(state);
        let shared = self.shared.clone();
        let started = std::thread::Builder::new()
            .name("codemode-step".into())
            .spawn(move || Threads::serve(&shared));
        if started.is_err() {
            // No thread could be made: the job waits for a running one;
            // with none, it is dropped, and its task answers an internal
            // failure.
            let mut state = Threads::state(&self.shared);
            state.threads -= 1;
            if state.threads == 0 {
                state.jobs.clear();
            }
        }
    }

    fn serve(shared: &Shared) {
        let mut state = Threads::state(shared);
        loop {
            if let Some(job) = state.jobs.pop_front() {
                drop(state);
                // A job catches its step's panic; nothing else in it panics.
                job();
                state = Threads::state(shared);
                continue;
            }
            if state.closed {
                state.threads -= 1;
                return;
            }
            state.idle += 1;
            state = shared.ready.wait(state).unwrap_or_else(|p| p.into_inner());
            state.idle -= 1;
        }
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        Threads::state(&self.shared).closed = true;
        self.shared.ready.notify_all();
    }
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
