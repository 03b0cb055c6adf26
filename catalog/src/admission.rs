//! Admission of executions: how many are open at once (running, paused at
//! a capability call, or waiting for a CPU slot), in all and per subject,
//! and how many may wait to open, for how long.
//!
//! An execution takes a slot of its subject
//! ([`Config::max_executions_per_subject`](crate::Config)) and then one of
//! the whole service (`max_open_executions`). When both are free it
//! opens at once; otherwise it waits — if fewer than `max_queued_executions`
//! are waiting already, and at most `max_queue_wait` — or is refused with
//! `resource limit exceeded`. One subject may hold at most half of the
//! waiting places (at least one, [`Bounds::per_subject_waiting`]), so
//! that one subject's burst cannot refuse another subject's first call. Cancellation ends the wait as `context
//! canceled`. The slots of a subject exist only while it has executions
//! running or waiting, so any number of subjects costs nothing at rest.

use crate::error::Error;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// The bounds of admission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Executions open at once.
    pub open: usize,
    /// Executions of one subject open at once.
    pub per_subject: usize,
    /// Executions waiting for a slot at once.
    pub waiting: usize,
    /// The longest one execution waits for a slot.
    pub wait: Duration,
}

impl Bounds {
    /// The waiting places one subject may hold: half of `waiting`, at
    /// least one.
    pub fn per_subject_waiting(&self) -> usize {
        (self.waiting / 2).max(1)
    }
}

/// The admission state of one service.
pub(crate) struct Admission {
    bounds: Bounds,
    slots: Arc<Semaphore>,
    subjects: Arc<Mutex<HashMap<String, Arc<SubjectState>>>>,
    waiting: AtomicUsize,
}

/// The slots an admitted execution holds until it is dropped.
pub(crate) struct Admitted {
    _slot: OwnedSemaphorePermit,
    _subject: SubjectSlot,
}

/// The slots of one subject, and how many of its executions wait.
struct SubjectState {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// A slot of one subject; the last one out removes the subject's entry.
struct SubjectSlot {
    permit: Option<OwnedSemaphorePermit>,
    subject: String,
    subjects: Arc<Mutex<HashMap<String, Arc<SubjectState>>>>,
}

impl Drop for SubjectSlot {
    fn drop(&mut self) {
        drop(self.permit.take());
        let mut subjects = lock(&self.subjects);
        // Only the map holds it (no execution running or waiting): remove.
        if subjects
            .get(&self.subject)
            .is_some_and(|s| Arc::strong_count(s) == 1)
        {
            subjects.remove(&self.subject);
        }
    }
}

/// Counts one waiting execution while it lives.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Takes one of `max` places counted by `count`; `false` when all are taken.
fn take_place(count: &AtomicUsize, max: usize) -> bool {
    count
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        })
        .is_ok()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Admission {
    pub(crate) fn new(bounds: Bounds) -> Admission {
        let bounds = Bounds {
            open: bounds.open.max(1),
            per_subject: bounds.per_subject.max(1),
            ..bounds
        };
        Admission {
            bounds,
            slots: Arc::new(Semaphore::new(bounds.open)),
            subjects: Arc::new(Mutex::new(HashMap::new())),
            waiting: AtomicUsize::new(0),
        }
    }

    /// The number of executions waiting now.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// The state of `subject`'s slots, created on first use.
    fn subject_slots(&self, subject: &str) -> Arc<SubjectState> {
        lock(&self.subjects)
            .entry(subject.to_string())
            .or_insert_with(|| {
                Arc::new(SubjectState {
                    slots: Arc::new(Semaphore::new(self.bounds.per_subject)),
                    waiting: AtomicUsize::new(0),
                })
            })
            .clone()
    }

    /// Admits one execution of `subject`, waiting within the bounds.
    pub(crate) async fn admit(
        &self,
        subject: &str,
        cancel: &CancellationToken,
    ) -> Result<Admitted, Error> {
        let mine = self.subject_slots(subject);
        let mut slot = SubjectSlot {
            permit: None,
            subject: subject.to_string(),
            subjects: self.subjects.clone(),
        };
        // The common case: both slots free, no waiting.
        if let Ok(permit) = mine.slots.clone().try_acquire_owned() {
            slot.permit = Some(permit);
            if let Ok(global) = self.slots.clone().try_acquire_owned() {
                drop(mine);
                return Ok(Admitted {
                    _slot: global,
                    _subject: slot,
                });
            }
        }
        // This subject's share of the waiting places first, then one of
        // all of them.
        let share = self.bounds.per_subject_waiting();
        if !take_place(&mine.waiting, share) {
            return Err(Error::ResourceLimitExceeded);
        }
        let subject_waiting = Waiting(&mine.waiting);
        if !take_place(&self.waiting, self.bounds.waiting) {
            return Err(Error::ResourceLimitExceeded);
        }
        let waiting = Waiting(&self.waiting);
        let acquire = async {
            if slot.permit.is_none() {
                let permit = mine.slots.clone().acquire_owned().await;
                slot.permit = Some(permit.map_err(|_| Error::Internal)?);
            }
            self.slots
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| Error::Internal)
        };
        let global = tokio::select! {
            acquired = tokio::time::timeout(self.bounds.wait, acquire) => {
                acquired.map_err(|_| Error::ResourceLimitExceeded)??
            }
            _ = cancel.cancelled() => return Err(Error::Canceled),
        };
        drop((waiting, subject_waiting));
        drop(mine);
        Ok(Admitted {
            _slot: global,
            _subject: slot,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn admission(open: usize, per_subject: usize, waiting: usize, wait_ms: u64) -> Arc<Admission> {
        Arc::new(Admission::new(Bounds {
            open,
            per_subject,
            waiting,
            wait: Duration::from_millis(wait_ms),
        }))
    }

    #[tokio::test]
    async fn a_subject_runs_at_most_its_share() {
        let a = admission(4, 2, 8, 50);
        let never = CancellationToken::new();
        let one = a.admit("alice", &never).await.expect("first");
        let two = a.admit("alice", &never).await.expect("second");
        // Alice's third waits for her own slot, then gives up.
        let started = Instant::now();
        let third = a.admit("alice", &never).await;
        assert!(matches!(third, Err(Error::ResourceLimitExceeded)));
        assert!(started.elapsed() >= Duration::from_millis(50));
        // Bob is not held up by Alice.
        let bob = a.admit("bob", &never).await.expect("bob runs");
        drop((one, bob));
        let again = a.admit("alice", &never).await.expect("a slot freed");
        drop((two, again));
        assert!(lock(&a.subjects).is_empty(), "no entry left at rest");
        assert_eq!(a.waiting(), 0);
    }

    #[tokio::test]
    async fn waiting_is_bounded_in_number_and_time() {
        let a = admission(1, 1, 1, 10_000);
        let never = CancellationToken::new();
        let running = a.admit("alice", &never).await.expect("runs");
        let waiter = {
            let a = a.clone();
            tokio::spawn(async move { a.admit("bob", &CancellationToken::new()).await.is_ok() })
        };
        while a.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        // The queue is full: refused at once, not after the wait.
        let started = Instant::now();
        let refused = a.admit("carol", &never).await;
        assert!(matches!(refused, Err(Error::ResourceLimitExceeded)));
        assert!(started.elapsed() < Duration::from_secs(1));
        drop(running);
        assert!(waiter.await.expect("joined"), "the waiter ran");
        // Cancelling ends a wait.
        let held = a.admit("alice", &never).await.expect("runs");
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(matches!(
            a.admit("bob", &cancel).await,
            Err(Error::Canceled)
        ));
        drop(held);
        assert_eq!(a.waiting(), 0);
    }

    #[tokio::test]
    async fn one_subject_holds_at_most_half_of_the_waiting_places() {
        let a = admission(1, 8, 4, 10_000);
        let never = CancellationToken::new();
        let running = a.admit("alice", &never).await.expect("runs");
        // Alice may wait twice (half of 4); her third is refused at once.
        let mut waiters = Vec::new();
        for _ in 0..2 {
            let a = a.clone();
            waiters.push(tokio::spawn(async move {
                a.admit("alice", &CancellationToken::new()).await.is_ok()
            }));
        }
        while a.waiting() < 2 {
            tokio::task::yield_now().await;
        }
        let started = Instant::now();
        assert!(matches!(
            a.admit("alice", &never).await,
            Err(Error::ResourceLimitExceeded)
        ));
        assert!(started.elapsed() < Duration::from_secs(1));
        // Bob's first call still finds a place to wait, and runs.
        let bob = {
            let a = a.clone();
            tokio::spawn(async move { a.admit("bob", &CancellationToken::new()).await.is_ok() })
        };
        while a.waiting() < 3 {
            tokio::task::yield_now().await;
        }
        drop(running);
        assert!(bob.await.expect("joined"), "bob ran");
        for w in waiters {
            assert!(w.await.expect("joined"), "alice's waiters ran");
        }
        assert_eq!(a.waiting(), 0);
        assert!(lock(&a.subjects).is_empty(), "no entry left at rest");
    }

    #[test]
    fn a_subjects_share_is_half_at_least_one() {
        let bounds = |waiting| Bounds {
            open: 1,
            per_subject: 1,
            waiting,
            wait: Duration::ZERO,
        };
        assert_eq!(bounds(0).per_subject_waiting(), 1);
        assert_eq!(bounds(1).per_subject_waiting(), 1);
        assert_eq!(bounds(64).per_subject_waiting(), 32);
        assert_eq!(bounds(65).per_subject_waiting(), 32);
    }
}
