//! The CodeMode service: search, describe and execute for a subject.
//!
//! [`CodeMode`] holds an immutable [`Catalog`], a [`Policy`] and a
//! [`Config`] (the VM's limits, the search limits, and how many executions
//! may run at once, in all and per subject, and wait for a slot, for how
//! long: see [`crate::admission`]). A source beyond `max_source_bytes` is
//! refused before it waits. The catalog can
//! be replaced as a whole ([`CodeMode::replace_catalog`], when an upstream
//! server's tools change): search and describe see the newest one, and an
//! execution keeps the catalog it started with to its end. `execute` runs
//! the VM on the calling thread (keeping the worker's core while another
//! worker is free, else after `block_in_place`; on a current-thread
//! runtime, on the blocking pool) with a cancellation flag that the token
//! raises through a registered waker; the VM calls back into the host
//! bridge, which for each capability call binds the keyword arguments,
//! authorizes the canonical arguments (waiting for a person's approval
//! when the policy answers *ask*, a wait the time limit does not count),
//! and polls the handler in place —
//! once, and only if it has to wait, on the runtime bounded by the
//! remaining deadline and the cancellation token — catching its panics
//! and checking and converting its output. Cancellation is checked before
//! the policy and again before the handler. Every failure leaves as one
//! [`Error`] with a fixed text; the original (a handler's private detail, a
//! panic's payload, the path of an output mismatch) is logged with the
//! capability's ID, never with the arguments. [`CodeMode::call`] runs one
//! capability without a program, through the same steps.

use crate::admission::{Admission, Bounds};
use crate::approval::{Approval, ApprovalRequest, Approver, RefuseAll};
use crate::auth::{AuthorizationRequest, Decision, Policy, Subject};
use crate::binding::bind;
use crate::capability::{BoxFuture, CallFailure, CallInfo};
use crate::catalog::{CapabilityRef, Catalog, Description};
use crate::conform::conform_output;
use crate::convert::data_to_json;
use crate::error::Error;
use crate::progress::{CallDone, Progress};
use crate::search::{SearchError, SearchLimits, SearchResponse};
use codemode_vm::{Capabilities, Data, ExecError, Host, HostCall, Limits};
use futures_util::FutureExt;
use std::any::Any;
use std::cell::Cell;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};
use tokio::runtime::{Handle, RuntimeFlavor};
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
    /// How long a call whose policy answered *ask* waits for a person
    /// before it is refused (not counted against the time limit).
    pub approval_timeout: Duration,
    /// Executions of one subject running at once; more wait.
    pub max_executions_per_subject: usize,
    /// Executions waiting for a slot at once; more are refused
    /// (`resource limit exceeded`).
    pub max_queued_executions: usize,
    /// The longest an execution waits for a slot before it is refused
    /// (`resource limit exceeded`).
    pub max_queue_wait: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            limits: Limits::default(),
            search: SearchLimits::default(),
            max_concurrent_executions: 8,
            approval_timeout: Duration::from_secs(120),
            max_executions_per_subject: 4,
            max_queued_executions: 64,
            max_queue_wait: Duration::from_secs(2),
        }
    }
}

/// The service.
#[derive(Clone)]
pub struct CodeMode {
    inner: Arc<Inner>,
    approver: Arc<dyn Approver>,
}

struct Inner {
    current: RwLock<Arc<Snapshot>>,
    policy: Arc<dyn Policy>,
    config: Config,
    admission: Admission,
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
                admission: Admission::new(Bounds {
                    running: config.max_concurrent_executions,
                    per_subject: config.max_executions_per_subject,
                    waiting: config.max_queued_executions,
                    wait: config.max_queue_wait,
                }),
                current: RwLock::new(Snapshot::new(catalog)),
                policy,
                config,
            }),
            approver: Arc::new(RefuseAll),
        }
    }

    /// This service, asking `approver` when a policy answers *ask* (the
    /// default, [`RefuseAll`], refuses every ask).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> CodeMode {
        self.approver = approver;
        self
    }

    /// The approver asked when a policy answers *ask*.
    pub fn approver(&self) -> &Arc<dyn Approver> {
        &self.approver
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
        self.execute_observed(subject, source, cancel, self.approver.clone(), None)
            .await
    }

    /// [`CodeMode::execute`], asking `approver` instead of the service's
    /// approver when a policy answers *ask* (the MCP server asks the client
    /// of the request that runs the program).
    pub async fn execute_approved_by(
        &self,
        subject: &Subject,
        source: &str,
        cancel: CancellationToken,
        approver: Arc<dyn Approver>,
    ) -> Result<Data, Error> {
        self.execute_observed(subject, source, cancel, approver, None)
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
        self.execute_observed(subject, source, cancel, self.approver.clone(), progress)
            .await
    }

    /// [`CodeMode::execute`] with both: `approver` asked when a policy
    /// answers *ask*, `progress` told of each completed capability call.
    pub async fn execute_observed(
        &self,
        subject: &Subject,
        source: &str,
        cancel: CancellationToken,
        approver: Arc<dyn Approver>,
        progress: Option<Arc<dyn Progress>>,
    ) -> Result<Data, Error> {
        authenticated(subject)?;
        // Refused before it waits for a slot, holding its source.
        if source.len() > self.inner.config.limits.max_source_bytes {
            return Err(Error::ResourceLimitExceeded);
        }
        let token = cancel.child_token();
        let _stop_on_drop = token.clone().drop_guard();
        let permit = self.inner.admission.admit(subject.id(), &token).await?;
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
                    session: Session {
                        subject,
                        approver: &*approver,
                        token: &token,
                    },
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
            let approver = approver.clone();
            let run = move || {
                let execution = Execution {
                    inner: &inner,
                    snapshot: &snapshot,
                    session: Session {
                        subject: &subject,
                        approver: &*approver,
                        token: &token,
                    },
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

/// Who an execution or call runs for, who approves its asks, and what
/// cancels it.
#[derive(Clone, Copy)]
struct Session<'a> {
    subject: &'a Subject,
    approver: &'a dyn Approver,
    token: &'a CancellationToken,
}

/// What one execution runs with, besides its source.
struct Execution<'a> {
    inner: &'a Inner,
    snapshot: &'a Snapshot,
    session: Session<'a>,
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
        session,
        progress,
    } = execution;
    let bridge = Bridge {
        inner,
        catalog: &snapshot.catalog,
        session,
        handle,
        deadline: Cell::new(start + inner.config.limits.max_time),
        paused: Cell::new(Duration::ZERO),
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

impl CodeMode {
    /// Calls one capability directly, without a program: `json_arguments`
    /// (one JSON object; empty or `null` is `{}`, duplicate members are
    /// refused) is bound, authorized (asking the service's approver when
    /// the policy says so) and handed to the handler, whose result is
    /// checked as in a program — with the same errors, and within the
    /// execution time limit. For tests of a capability, like the guide's
    /// `shipping.Call(ctx, json)`. A name that is not enabled is
    /// `capability not found`.
    pub async fn call(
        &self,
        name: &str,
        json_arguments: &str,
        subject: &Subject,
    ) -> Result<serde_json::Value, Error> {
        self.call_with(name, json_arguments, subject, CancellationToken::new())
            .await
    }

    /// [`CodeMode::call`] with a cancellation token.
    pub async fn call_with(
        &self,
        name: &str,
        json_arguments: &str,
        subject: &Subject,
        cancel: CancellationToken,
    ) -> Result<serde_json::Value, Error> {
        authenticated(subject)?;
        let snapshot = self.snapshot();
        let cap = snapshot
            .catalog
            .get(name)
            .ok_or(Error::CapabilityNotFound)?;
        let members = crate::strict_json::parse_arguments(json_arguments)
            .map_err(|e| Error::InvalidArguments(Some(e)))?;
        let mut args = Vec::with_capacity(members.len());
        for (key, value) in members {
            let data = Data::from_json(&value).ok_or_else(|| {
                Error::InvalidArguments(Some(format!("{key}: integer out of range")))
            })?;
            args.push((key, data));
        }
        let session = Session {
            subject,
            approver: &*self.approver,
            token: &cancel,
        };
        let mut deadline = Instant::now() + self.inner.config.limits.max_time;
        let arguments = bind(cap.input(), args).map_err(|e| Error::InvalidArguments(Some(e.0)))?;
        let decision = authorize(&self.inner, &session, &cap, &arguments, Some(deadline))?;
        if decision == Decision::Ask {
            let asked = Instant::now();
            ask(&self.inner, &session, &cap, &arguments).await?;
            deadline += asked.elapsed();
        }
        let future = start_handler(&session, &cap, arguments, deadline)?;
        let remaining = deadline.saturating_duration_since(Instant::now());
        let outcome = tokio::select! {
            outcome = AssertUnwindSafe(future).catch_unwind() => outcome,
            _ = tokio::time::sleep(remaining) => return Err(Error::ResourceLimitExceeded),
            _ = cancel.cancelled() => return Err(Error::Canceled),
        };
        settle(&cap, outcome).map(|data| data_to_json(&data))
    }
}

/// Asks the policy about a call whose arguments are bound; cancellation is
/// checked first. Allow and ask come back; deny and failures are errors.
fn authorize(
    inner: &Inner,
    session: &Session<'_>,
    cap: &CapabilityRef<'_>,
    arguments: &Data,
    deadline: Option<Instant>,
) -> Result<Decision, Error> {
    if session.token.is_cancelled() {
        return Err(Error::Canceled);
    }
    let request = AuthorizationRequest {
        subject: session.subject,
        capability_id: cap.id(),
        name: cap.name(),
        annotations: cap.annotations(),
        arguments,
        deadline,
    };
    let policy = &inner.policy;
    match catch_unwind(AssertUnwindSafe(|| policy.authorize(&request))) {
        Ok(Ok(Decision::Deny)) => Err(Error::PermissionDenied),
        Ok(Ok(decision)) => Ok(decision),
        // A policy that ran out of the execution's time is the execution's
        // limit, not the policy's failure.
        Ok(Err(_)) if deadline.is_some_and(|d| Instant::now() >= d) => {
            Err(Error::ResourceLimitExceeded)
        }
        Ok(Err(e)) => {
            tracing::warn!(capability = %cap.id().as_str(), error = %e.0, "authorization policy failed");
            Err(Error::PolicyFailure)
        }
        Err(payload) => {
            tracing::error!(
                capability = %cap.id().as_str(),
                panic = %panic_text(&*payload),
                "authorization policy panicked"
            );
            Err(Error::PolicyFailure)
        }
    }
}

/// Asks the session's approver about a call, within the approval timeout;
/// anything but approval is `permission denied`, cancellation meanwhile
/// `context canceled`.
async fn ask(
    inner: &Inner,
    session: &Session<'_>,
    cap: &CapabilityRef<'_>,
    arguments: &Data,
) -> Result<(), Error> {
    let request = ApprovalRequest {
        subject: session.subject,
        capability_id: cap.id(),
        name: cap.name(),
        summary: cap.summary(),
        annotations: cap.annotations(),
        arguments,
    };
    let answer = AssertUnwindSafe(session.approver.approve(&request)).catch_unwind();
    let answer = tokio::select! {
        answer = tokio::time::timeout(inner.config.approval_timeout, answer) => answer,
        _ = session.token.cancelled() => return Err(Error::Canceled),
    };
    match answer {
        Ok(Ok(Approval::Approved)) => Ok(()),
        Ok(Ok(Approval::Refused)) => Err(Error::PermissionDenied),
        Ok(Err(payload)) => {
            tracing::error!(
                capability = %cap.id().as_str(),
                panic = %panic_text(&*payload),
                "approver panicked"
            );
            Err(Error::PermissionDenied)
        }
        Err(_) => {
            tracing::info!(capability = %cap.id().as_str(), "approval timed out");
            Err(Error::PermissionDenied)
        }
    }
}

/// Checks cancellation once more and starts the handler (a panic while
/// it is started is caught like one while it runs).
fn start_handler(
    session: &Session<'_>,
    cap: &CapabilityRef<'_>,
    arguments: Data,
    deadline: Instant,
) -> Result<BoxFuture, Error> {
    if session.token.is_cancelled() {
        return Err(Error::Canceled);
    }
    let handler = cap.handler().ok_or(Error::CapabilityFailed(None))?;
    let info = CallInfo {
        subject: session.subject,
        capability_id: cap.id(),
        deadline,
        cancel: session.token,
    };
    catch_unwind(AssertUnwindSafe(|| handler(arguments, &info)))
        .map_err(|payload| settle(cap, Err(payload)).err().unwrap_or(Error::Internal))
}

/// The text of a panic's payload (a `&str` or `String`; anything else is
/// named by what it is not).
fn panic_text(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a payload that is not a string)")
}

/// The result of a handler as the program sees it: failures become fixed
/// texts and are logged here with the capability's ID (never the
/// arguments); a result the capability must check is checked against its
/// published output shape.
fn settle(
    cap: &CapabilityRef<'_>,
    outcome: Result<Result<Data, CallFailure>, Box<dyn Any + Send>>,
) -> Result<Data, Error> {
    let id = cap.id().as_str();
    match outcome {
        Ok(Ok(data)) if cap.check_output() => conform_output(cap.output(), data).map_err(|m| {
            tracing::warn!(capability = %id, path = %m.0, "capability result does not match its output shape");
            Error::CapabilityFailed(None)
        }),
        Ok(Ok(data)) => Ok(data),
        Ok(Err(CallFailure::Input)) => Err(Error::InvalidArguments(None)),
        Ok(Err(CallFailure::Handler(e))) if e.is_resource_limit() => {
            Err(Error::ResourceLimitExceeded)
        }
        Ok(Err(CallFailure::Handler(e))) => {
            tracing::warn!(capability = %id, detail = %e.detail(), "capability handler failed");
            Err(Error::CapabilityFailed(
                e.public_message().map(str::to_string),
            ))
        }
        Ok(Err(CallFailure::Output)) => {
            tracing::warn!(capability = %id, "capability result cannot cross (a non-finite float, an integer outside i64, or not an object)");
            Err(Error::CapabilityFailed(None))
        }
        Err(payload) => {
            tracing::error!(capability = %id, panic = %panic_text(&*payload), "capability handler panicked");
            Err(Error::CapabilityFailed(None))
        }
    }
}

/// The VM's host: one per execution.
struct Bridge<'a> {
    inner: &'a Inner,
    catalog: &'a Catalog,
    session: Session<'a>,
    handle: Handle,
    /// The execution's deadline, moved out by the time spent waiting for
    /// approvals.
    deadline: Cell<Instant>,
    /// Time the last call spent waiting for approval, for the VM to add to
    /// its own deadline.
    paused: Cell<Duration>,
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
        let remaining = self
            .deadline
            .get()
            .saturating_duration_since(Instant::now());
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
                let token = self.session.token;
                self.block_on(async move {
                    tokio::select! {
                        output = future => Ok(output),
                        _ = tokio::time::sleep(remaining) => Err(Error::ResourceLimitExceeded),
                        _ = token.cancelled() => Err(Error::Canceled),
                    }
                })
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

impl Bridge<'_> {
    /// Runs `future` to its end on the runtime, from the execution's
    /// thread.
    fn block_on<T>(&self, future: impl Future<Output = T>) -> T {
        let wait = || self.handle.block_on(future);
        if self.inline {
            tokio::task::block_in_place(wait)
        } else {
            wait()
        }
    }
}

impl Host for Bridge<'_> {
    type Error = Error;

    fn call(&self, call: HostCall<'_>) -> Result<Data, Error> {
        let session = &self.session;
        if session.token.is_cancelled() {
            return Err(Error::Canceled);
        }
        let cap = self.catalog.get(call.name).ok_or(Error::Internal)?;
        let arguments =
            bind(cap.input(), call.args).map_err(|e| Error::InvalidArguments(Some(e.0)))?;
        let deadline = self.deadline.get();
        if authorize(self.inner, session, &cap, &arguments, Some(deadline))? == Decision::Ask {
            let asked = Instant::now();
            let answer = self.block_on(ask(self.inner, session, &cap, &arguments));
            let waited = asked.elapsed();
            self.deadline.set(self.deadline.get() + waited);
            self.paused.set(waited);
            answer?;
        }
        // The handler runs right here, on the execution's thread (see
        // `drive`). A panic while it is polled is caught and is a failure of
        // the capability.
        let future = start_handler(session, &cap, arguments, self.deadline.get())?;
        let outcome = self.drive(|| AssertUnwindSafe(future).catch_unwind())?;
        let data = settle(&cap, outcome)?;
        self.report(cap.name().as_str())?;
        Ok(data)
    }

    fn take_paused(&self) -> Duration {
        self.paused.replace(Duration::ZERO)
    }
}
