//! The CodeMode service: search, describe and execute for a subject.
//!
//! [`CodeMode`] holds an immutable [`Catalog`], a [`Policy`] and a
//! [`Config`] (the VM's limits, the search limits and the number of
//! executions that may run at once; more wait for a slot). The catalog can
//! be replaced as a whole ([`CodeMode::replace_catalog`], when an upstream
//! server's tools change): search and describe see the newest one, and an
//! execution keeps the catalog it started with to its end. `execute` runs
//! the VM on the calling thread (keeping the worker's core while another
//! worker is free, else after `block_in_place`; on a current-thread
//! runtime, on the blocking pool) with a cancellation flag that the token
//! raises through a registered waker; the VM calls back into the host
//! bridge, which for each capability call binds the keyword arguments,
//! authorizes the canonical arguments, and polls the handler in place —
//! once, and only if it has to wait, on the runtime bounded by the
//! remaining deadline and the cancellation token — catching its panics
//! and checking and converting its output. Every failure leaves as one
//! [`Error`] with a fixed text.

use crate::auth::{AuthorizationRequest, Decision, Policy, Subject};
use crate::binding::bind;
use crate::capability::CallFailure;
use crate::catalog::{Catalog, Description};
use crate::error::Error;
use crate::progress::{CallDone, Progress};
use crate::search::{SearchError, SearchLimits, SearchResponse};
use codemode_vm::{Capabilities, Data, ExecError, Host, HostCall, Limits};
use futures_util::FutureExt;
use std::cell::Cell;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::{Semaphore, TryAcquireError};
use tokio_util::sync::CancellationToken;

/// Every configurable bound of the service, with the reference's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The limits of one execution.
    pub limits: Limits,
    /// The limits of one search.
    pub search: SearchLimits,
    /// Executions running at once (MaxConcurrentExecutions); more wait.
    pub max_concurrent_executions: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            limits: Limits::default(),
            search: SearchLimits::default(),
            max_concurrent_executions: 8,
        }
    }
}

/// The service.
#[derive(Clone)]
pub struct CodeMode {
    inner: Arc<Inner>,
}

struct Inner {
    current: RwLock<Arc<Snapshot>>,
    policy: Arc<dyn Policy>,
    config: Config,
    slots: Arc<Semaphore>,
}

/// One catalog and its capability tree (built once, shared by every
/// execution), as an execution sees it from start to end.
struct Snapshot {
    catalog: Arc<Catalog>,
    capabilities: Capabilities,
}

impl Snapshot {
    fn new(catalog: Catalog) -> Arc<Snapshot> {
        let capabilities = Capabilities::new(catalog.names());
        Arc::new(Snapshot {
            catalog: Arc::new(catalog),
            capabilities,
        })
    }
}

impl CodeMode {
    /// A service over `catalog` with `policy` and the default config.
    pub fn new(catalog: Catalog, policy: impl Policy + 'static) -> CodeMode {
        CodeMode::with_config(catalog, Arc::new(policy), Config::default())
    }

    /// A service with an explicit config.
    pub fn with_config(catalog: Catalog, policy: Arc<dyn Policy>, config: Config) -> CodeMode {
        CodeMode {
            inner: Arc::new(Inner {
                slots: Arc::new(Semaphore::new(config.max_concurrent_executions.max(1))),
                current: RwLock::new(Snapshot::new(catalog)),
                policy,
                config,
            }),
        }
    }

    /// The current catalog.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.snapshot().catalog.clone()
    }

    /// Replaces the catalog atomically: later searches, describes and
    /// executions see `catalog`; executions already running keep theirs.
    pub fn replace_catalog(&self, catalog: Catalog) {
        let next = Snapshot::new(catalog);
        match self.inner.current.write() {
            Ok(mut current) => *current = next,
            Err(poisoned) => *poisoned.into_inner() = next,
        }
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        match self.inner.current.read() {
            Ok(current) => current.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The config.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// `search_api`.
    pub async fn search(&self, subject: &Subject, query: &str) -> Result<SearchResponse, Error> {
        authenticated(subject)?;
        self.snapshot()
            .catalog
            .search_with(query, &self.inner.config.search)
            .map_err(|e: SearchError| match e {
                SearchError::QueryTooLong | SearchError::TooManyTokens => {
                    Error::ResourceLimitExceeded
                }
            })
    }

    /// `describe_api`.
    pub async fn describe(&self, subject: &Subject, name: &str) -> Result<Description, Error> {
        authenticated(subject)?;
        self.snapshot()
            .catalog
            .describe(name)
            .map_err(|_| Error::CapabilityNotFound)
    }

    /// `execute`: runs `source` and returns `main`'s converted result.
    /// Cancelling `cancel` (or dropping the returned future) stops the
    /// program.
    pub async fn execute(
        &self,
        subject: &Subject,
        source: &str,
        cancel: CancellationToken,
    ) -> Result<Data, Error> {
        self.execute_with_progress(subject, source, cancel, None)
            .await
    }

    /// [`CodeMode::execute`], telling `progress` after each capability
    /// call that returned its result.
    pub async fn execute_with_progress(
        &self,
        subject: &Subject,
        source: &str,
        cancel: CancellationToken,
        progress: Option<Arc<dyn Progress>>,
    ) -> Result<Data, Error> {
        authenticated(subject)?;
        let token = cancel.child_token();
        let _stop_on_drop = token.clone().drop_guard();
        let permit = match self.inner.slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(TryAcquireError::Closed) => return Err(Error::Internal),
            Err(TryAcquireError::NoPermits) => tokio::select! {
                p = self.inner.slots.clone().acquire_owned() => p.map_err(|_| Error::Internal)?,
                _ = token.cancelled() => return Err(Error::Canceled),
            },
        };
        // The VM watches a flag; the token raises it through a waker that
        // stays registered while the program runs: no task, no thread.
        let flag = Arc::new(AtomicBool::new(false));
        let raise = Waker::from(Arc::new(RaiseFlag(flag.clone())));
        let mut cancelled = std::pin::pin!(token.cancelled());
        if cancelled
            .as_mut()
            .poll(&mut Context::from_waker(&raise))
            .is_ready()
        {
            return Err(Error::Canceled);
        }
        // Dropping this future while the program runs elsewhere (on the
        // blocking pool) stops the program too.
        let _raise_on_drop = RaiseOnDrop(flag.clone());
        let snapshot = self.snapshot();
        let handle = Handle::current();
        // On a multi-threaded runtime the program runs on this thread. While
        // all workers but one are free, it keeps the worker's core: most
        // programs end within microseconds, and handing the core to another
        // thread and back costs more than they do, while the free worker
        // keeps serving everything else. Otherwise this thread hands its
        // other tasks to the rest of the runtime first (`block_in_place`). A
        // current-thread runtime cannot spare its only thread, so there it
        // runs on the blocking pool. A panic is an internal failure anyway.
        let outcome = if handle.runtime_flavor() == RuntimeFlavor::MultiThread {
            let inline = InlineSlot::take(handle.metrics().num_workers());
            let run = |inline| {
                let execution = Execution {
                    inner: &self.inner,
                    snapshot: &snapshot,
                    subject,
                    token: &token,
                    progress: progress.as_deref(),
                };
                run(execution, source, handle, flag, inline)
            };
            catch_unwind(AssertUnwindSafe(|| match &inline {
                Some(_) => run(true),
                None => tokio::task::block_in_place(|| run(false)),
            }))
            .map_err(|_| ())
        } else {
            let (inner, subject, source) =
                (self.inner.clone(), subject.clone(), source.to_string());
            let token = token.clone();
            let run = move || {
                let execution = Execution {
                    inner: &inner,
                    snapshot: &snapshot,
                    subject: &subject,
                    token: &token,
                    progress: progress.as_deref(),
                };
                run(execution, &source, handle, flag, false)
            };
            tokio::task::spawn_blocking(run).await.map_err(|_| ())
        };
        drop(permit);
        match outcome {
            Err(_) => Err(Error::Internal),
            Ok(Ok(data)) => Ok(data),
            Ok(Err(e)) => Err(classify(e)),
        }
    }
}

/// What one execution runs with, besides its source.
struct Execution<'a> {
    inner: &'a Inner,
    snapshot: &'a Snapshot,
    subject: &'a Subject,
    token: &'a CancellationToken,
    progress: Option<&'a dyn Progress>,
}

/// Runs one program with the catalog of its snapshot; `inline` when it
/// runs on a worker thread that kept its core.
fn run(
    execution: Execution<'_>,
    source: &str,
    handle: Handle,
    flag: Arc<AtomicBool>,
    inline: bool,
) -> Result<Data, ExecError<Error>> {
    let start = Instant::now();
    let Execution {
        inner,
        snapshot,
        subject,
        token,
        progress,
    } = execution;
    let bridge = Bridge {
        inner,
        catalog: &snapshot.catalog,
        subject,
        handle,
        token,
        deadline: start + inner.config.limits.max_time,
        inline,
        progress,
        calls: Cell::new(0),
    };
    codemode_vm::execute_with(
        source,
        &snapshot.capabilities,
        &bridge,
        &inner.config.limits,
        Some(flag),
    )
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

/// Raises the VM's cancellation flag when woken by the token.
struct RaiseFlag(Arc<AtomicBool>);

impl Wake for RaiseFlag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Raises the VM's cancellation flag when dropped.
struct RaiseOnDrop(Arc<AtomicBool>);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn authenticated(subject: &Subject) -> Result<(), Error> {
    if subject.is_authenticated() {
        Ok(())
    } else {
        Err(Error::Unauthenticated)
    }
}

fn classify(e: ExecError<Error>) -> Error {
    match e {
        ExecError::InvalidProgram(d) => Error::InvalidProgram(Some(d)),
        ExecError::InvalidArguments(d) => Error::InvalidArguments(Some(d)),
        ExecError::ResourceLimit(_) => Error::ResourceLimitExceeded,
        ExecError::Cancelled => Error::Canceled,
        ExecError::Host(e) => e,
    }
}

/// The VM's host: one per execution.
struct Bridge<'a> {
    inner: &'a Inner,
    catalog: &'a Catalog,
    subject: &'a Subject,
    handle: Handle,
    token: &'a CancellationToken,
    deadline: Instant,
    /// Whether the program runs on a worker that kept its core: waiting
    /// for a handler must then give the core up first.
    inline: bool,
    /// Who hears of each completed call, if anyone.
    progress: Option<&'a dyn Progress>,
    /// Capability calls that returned their result so far.
    calls: Cell<u64>,
}

impl Bridge<'_> {
    /// Makes a future with `start` (unless the deadline has passed) and
    /// drives it to its end right here, on the execution's thread, inside
    /// the runtime's context: no task spawn and no thread hand-off. It is
    /// polled once at once (most futures finish without waiting); only one
    /// that waits is driven further, bounded by the remaining deadline and
    /// the cancellation token, and dropped (which stops it) when either
    /// ends first.
    fn drive<F: Future + Unpin>(&self, start: impl FnOnce() -> F) -> Result<F::Output, Error> {
        let remaining = self.deadline.saturating_duration_since(Instant::now());
        if remaining == Duration::ZERO {
            return Err(Error::ResourceLimitExceeded);
        }
        let mut future = start();
        let first = {
            let _context = self.handle.enter();
            Pin::new(&mut future).poll(&mut Context::from_waker(Waker::noop()))
        };
        match first {
            Poll::Ready(output) => Ok(output),
            Poll::Pending => {
                let token = self.token;
                let wait = || {
                    self.handle.block_on(async move {
                        tokio::select! {
                            output = future => Ok(output),
                            _ = tokio::time::sleep(remaining) => Err(Error::ResourceLimitExceeded),
                            _ = token.cancelled() => Err(Error::Canceled),
                        }
                    })
                };
                if self.inline {
                    tokio::task::block_in_place(wait)
                } else {
                    wait()
                }
            }
        }
    }

    /// Tells the observer, if any, that the call of `name` completed.
    fn report(&self, name: &str) -> Result<(), Error> {
        let calls = self.calls.get() + 1;
        self.calls.set(calls);
        match self.progress {
            Some(progress) => self.drive(|| progress.call_done(CallDone { calls, name })),
            None => Ok(()),
        }
    }
}

impl Host for Bridge<'_> {
    type Error = Error;

    fn call(&self, call: HostCall<'_>) -> Result<Data, Error> {
        if self.token.is_cancelled() {
            return Err(Error::Canceled);
        }
        let cap = self.catalog.get(call.name).ok_or(Error::Internal)?;
        let arguments =
            bind(cap.input(), call.args).map_err(|e| Error::InvalidArguments(Some(e.0)))?;
        let request = AuthorizationRequest {
            subject: self.subject,
            capability_id: cap.id(),
            name: cap.name(),
            arguments: &arguments,
        };
        let policy = &self.inner.policy;
        match catch_unwind(AssertUnwindSafe(|| policy.authorize(&request))) {
            Ok(Ok(Decision::Allow)) => {}
            Ok(Ok(Decision::Deny)) => return Err(Error::PermissionDenied),
            Ok(Err(_)) | Err(_) => return Err(Error::PolicyFailure),
        }
        let handler = cap.handler().ok_or(Error::CapabilityFailed(None))?;
        // A panic while the handler is polled is caught and is a failure of
        // the capability.
        let outcome = self.drive(|| AssertUnwindSafe(handler(arguments)).catch_unwind())?;
        match outcome {
            Ok(Ok(data)) => {
                self.report(cap.name().as_str())?;
                Ok(data)
            }
            Ok(Err(CallFailure::Input)) => Err(Error::InvalidArguments(None)),
            Ok(Err(CallFailure::Handler(e))) => Err(Error::CapabilityFailed(
                e.public_message().map(str::to_string),
            )),
            Ok(Err(CallFailure::Output)) | Err(_) => Err(Error::CapabilityFailed(None)),
        }
    }
}
