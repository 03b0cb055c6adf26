//! Progress of an execution, for clients that asked to hear it.
//!
//! A [`Progress`] observer is told after each capability call of a program
//! completes: how many calls have completed so far and the dotted name of
//! the one that just did — never its arguments or its result. The observer
//! answers with a future (sending a notification, say); the execution
//! drives it to completion before the program goes on, within the same
//! deadline and cancellation as a handler, so what it reports arrives in
//! order and before the execution's own outcome.

use std::future::Future;
use std::pin::Pin;

/// A future an observer hands back.
pub type ProgressFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What an observer hears after one capability call completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallDone<'a> {
    /// Capability calls completed so far in this execution, this one
    /// included (1 for the first).
    pub calls: u64,
    /// The dotted name of the capability, e.g. `records.lookup`.
    pub name: &'a str,
}

/// Observes the capability calls of one execution.
pub trait Progress: Send + Sync {
    /// Called after a capability call returned its result; the returned
    /// future runs to completion before the program continues.
    fn call_done(&self, done: CallDone<'_>) -> ProgressFuture;
}

impl<F> Progress for F
where
    F: Fn(CallDone<'_>) -> ProgressFuture + Send + Sync,
{
    fn call_done(&self, done: CallDone<'_>) -> ProgressFuture {
        self(done)
    }
}
