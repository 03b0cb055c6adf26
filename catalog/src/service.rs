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
//! the VM on the calling thread while another worker is free, else on the
//! service's step threads (see [`crate::cpu`]), with a cancellation flag that the token
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
use crate::cpu;
use crate::error::Error;
use crate::progress::{CallDone, Progress};
use crate::search::{SearchError, SearchLimits, SearchResponse};
use codemode_vm::{
    Capabilities, CapabilityCall, Data, ExecError, Execution, HeapTotal, Limits, Step,
};
use futures_util::FutureExt;
use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Every configurable bound of the service, with the reference's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The limits of one execution.
    pub limits: Limits,
    /// The limits of one search.
    pub search: SearchLimits,
    /// Executions running instructions at once (MaxConcurrentExecutions):
    /// CPU slots. An execution paused at a capability call holds none;
    /// one that wants to run waits for a free slot.
    pub max_concurrent_executions: usize,
    /// Executions open at once — running, paused at a capability call, or
    /// waiting for a CPU slot; more wait to open (see
    /// `max_queued_executions`).
    pub max_open_executions: usize,
    /// The heap bytes all open executions may hold together (each also
    /// within its own `limits.max_heap_bytes`); an allocation that finds
    /// no room fails its execution with `resource limit exceeded`.
    pub max_open_heap_bytes: usize,
    /// How long a call whose policy answered *ask* waits for a person
    /// before it is refused (not counted against the time limit).
    pub approval_timeout: Duration,
    /// Executions of one subject open at once; more wait.
    pub max_executions_per_subject: usize,
    /// Executions waiting to open at once; more are refused
    /// (`resource limit exceeded`).
    pub max_queued_executions: usize,
    /// The longest an execution waits to open before it is refused
    /// (`resource limit exceeded`).
    pub max_queue_wait: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            limits: Limits::default(),
            search: SearchLimits::default(),
            max_concurrent_executions: 8,
            max_open_executions: 4096,
            max_open_heap_bytes: 512 << 20,
            approval_timeout: Duration::from_secs(120),
            max_executions_per_subject: 1024,
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

pub(crate) struct Inner {
    current: RwLock<Arc<Snapshot>>,
    policy: Arc<dyn Policy>,
    config: Config,
    admission: Admission,
    /// The CPU slots (see [`crate::cpu`]).
    pub(crate) cpu: Arc<Semaphore>,
    /// The threads that run steps off the runtime's workers.
    pub(crate) threads: cpu::Threads,
    /// The heap bytes of the open executions, bounded.
    heap_total: Arc<HeapTotal>,
    pub(crate) counts: Counts,
}

/// One catalog and its capability tree (built once, shared by every
/// execution), as an execution sees it from start to end.
struct Snapshot {
    catalog: Arc<Catalog>,
    capabilities: Arc<Capabilities>,
}

impl Snapshot {
    fn new(catalog: Catalog) -> Arc<Snapshot> {
        let capabilities = Arc::new(Capabilities::new(catalog.names()));
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
                    open: config.max_open_executions,
                    per_subject: config.max_executions_per_subject,
                    waiting: config.max_queued_executions,
                    wait: config.max_queue_wait,
                }),
                current: RwLock::new(Snapshot::new(catalog)),
                policy,
                cpu: Arc::new(Semaphore::new(config.max_concurrent_executions.max(1))),
                threads: cpu::Threads::new(config.max_concurrent_executions),
                heap_total: Arc::new(HeapTotal::new(config.max_open_heap_bytes)),
                counts: Counts::default(),
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
    /// Cancelling `options.cancel` (or dropping the returned future) stops
    /// the program; `options` also names who approves its asks and who
    /// hears of its completed calls.
    ///
    /// The program runs as a future: an [`Execution`] of the VM run in
    /// steps. Each step takes one of `max_concurrent_executions` CPU slots
    /// and runs the program's instructions until it calls a capability or
    /// ends (see `cpu`); the capability's binding and authorization run in
    /// that step too. The call itself — a person's approval, the handler,
    /// the progress notice — is awaited on the runtime with no thread and
    /// no slot held, and the execution is resumed with its result.
    pub async fn execute(
        &self,
        subject: &Subject,
        source: &str,
        options: ExecuteOptions,
    ) -> Result<Data, Error> {
        authenticated(subject)?;
        let inner = &self.inner;
        // Refused before it waits for a slot, holding its source.
        if source.len() > inner.config.limits.max_source_bytes {
            return Err(Error::ResourceLimitExceeded);
        }
        let ExecuteOptions {
            cancel,
            approver,
            progress,
        } = options;
        let approver = approver.unwrap_or_else(|| self.approver.clone());
        let token = cancel.child_token();
        let _stop_on_drop = token.clone().drop_guard();
        let _admitted = inner.admission.admit(subject.id(), &token).await?;
        let _open = Count::up(&inner.counts.open);
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
        // Dropping this future while a step runs elsewhere (on the
        // blocking pool) stops the program too.
        let _raise_on_drop = RaiseOnDrop(flag.clone());
        let snapshot = self.snapshot();
        let start = Instant::now();
        let execution = Execution::with_heap_total(
            Arc::<str>::from(source),
            snapshot.capabilities.clone(),
            inner.config.limits.clone(),
            Some(flag),
            Some(inner.heap_total.clone()),
        );
        let mut running = Running {
            execution,
            inner: self.inner.clone(),
            snapshot: snapshot.clone(),
            subject: subject.clone(),
            token: token.clone(),
            deadline: start + inner.config.limits.max_time,
            reply: None,
            // With an observer, each completed call is reported between
            // steps; without one, a handler that is done at once answers
            // within the step.
            answer_in_step: progress.is_none(),
        };
        let session = Session {
            subject,
            approver: &*approver,
            token: &token,
        };
        let mut calls = 0u64;
        loop {
            let (back, segment) = cpu::run(inner, &token, move || running.step()).await?;
            running = back;
            let (name, (result, not_counted)) = match segment {
                Segment::Done(result) => return result.map_err(classify),
                Segment::Call(prepared) => {
                    let _paused = Count::up(&inner.counts.paused);
                    let name = prepared.name.clone();
                    let deadline = &mut running.deadline;
                    let answered =
                        answer(inner, &snapshot.catalog, &session, prepared, deadline).await;
                    (name, answered)
                }
                Segment::Waiting(Started { name, handling }) => {
                    let _paused = Count::up(&inner.counts.paused);
                    let result = match snapshot.catalog.get(&name) {
                        Some(cap) => finish(&cap, &session, handling, running.deadline).await,
                        None => Err(Error::Internal),
                    };
                    (name, (result, Duration::ZERO))
                }
            };
            let result = match (result, progress.as_deref()) {
                (Ok(data), Some(progress)) => {
                    calls += 1;
                    report(progress, &session, running.deadline, calls, &name)
                        .await
                        .map(|()| data)
                }
                (result, _) => result,
            };
            running.reply = Some((result, not_counted));
        }
    }
}

/// How one execution is run: what cancels it, who approves its asks,
/// who hears of its completed calls.
#[derive(Clone, Default)]
pub struct ExecuteOptions {
    /// Stops the program when cancelled (dropping the future does too).
    pub cancel: CancellationToken,
    /// Asked when a policy answers *ask*, instead of the service's
    /// approver (the MCP server asks the client of the request).
    pub approver: Option<Arc<dyn Approver>>,
    /// Told after each capability call that returned its result.
    pub progress: Option<Arc<dyn Progress>>,
}

impl ExecuteOptions {
    /// The defaults, cancelled by `cancel`.
    pub fn cancelled_by(cancel: CancellationToken) -> ExecuteOptions {
        ExecuteOptions {
            cancel,
            ..ExecuteOptions::default()
        }
    }

    /// These options, asking `approver`.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> ExecuteOptions {
        self.approver = Some(approver);
        self
    }

    /// These options, telling `progress`.
    pub fn progress(mut self, progress: Option<Arc<dyn Progress>>) -> ExecuteOptions {
        self.progress = progress;
        self
    }
}

/// How many executions are where, for the service's metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExecutionCounts {
    /// Admitted and not yet ended: running, paused, or waiting for a CPU
    /// slot.
    pub open: usize,
    /// Running instructions on a CPU slot.
    pub running: usize,
    /// Stopped at a capability call, awaiting it.
    pub paused: usize,
    /// Heap bytes reserved by the open executions (see
    /// [`codemode_vm::HeapTotal`]).
    pub heap_bytes: usize,
}

/// The live counters behind [`ExecutionCounts`].
#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) open: AtomicUsize,
    pub(crate) running: AtomicUsize,
    pub(crate) paused: AtomicUsize,
}

/// One count held up while it lives.
pub(crate) struct Count<'a>(&'a AtomicUsize);

impl<'a> Count<'a> {
    pub(crate) fn up(counter: &'a AtomicUsize) -> Count<'a> {
        counter.fetch_add(1, Ordering::Relaxed);
        Count(counter)
    }
}

impl Drop for Count<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl CodeMode {
    /// How many executions are open, running and paused now, and the heap
    /// they hold.
    pub fn execution_counts(&self) -> ExecutionCounts {
        let counts = &self.inner.counts;
        ExecutionCounts {
            open: counts.open.load(Ordering::Relaxed),
            running: counts.running.load(Ordering::Relaxed),
            paused: counts.paused.load(Ordering::Relaxed),
            heap_bytes: self.inner.heap_total.used(),
        }
    }
}

/// An execution between its steps, with everything a step needs, owned,
/// so that a step may run on another thread.
struct Running {
    execution: Execution<'static, Error>,
    inner: Arc<Inner>,
    snapshot: Arc<Snapshot>,
    subject: Subject,
    token: CancellationToken,
    /// The deadline of the execution's capability calls and policy
    /// evaluations, moved out by the time spent waiting for approvals.
    deadline: Instant,
    /// The answer to the call the execution stopped at, with the time
    /// that must not count against its time limit.
    reply: Option<(Result<Data, Error>, Duration)>,
    /// Whether a handler that is done when first polled answers the
    /// program within the step (no observer to tell between steps).
    answer_in_step: bool,
}

/// Where one step left the execution.
enum Segment {
    Done(Result<Data, ExecError<Error>>),
    /// At a capability call that is bound and allowed (or to be asked).
    Call(Prepared),
    /// At a capability call whose handler has started and waits.
    Waiting(Started),
}

/// A handler's future as the service polls it: a panic is caught.
type Handling = futures_util::future::CatchUnwind<AssertUnwindSafe<BoxFuture>>;

/// A capability call whose handler was polled once in the step and
/// must be awaited.
struct Started {
    name: String,
    handling: Handling,
}

/// A capability call ready for its handler.
struct Prepared {
    name: String,
    arguments: Data,
    ask: bool,
}

impl Running {
    /// Runs the program until it ends or calls a capability whose
    /// arguments bind and whose policy does not deny it; a call that fails
    /// before its handler answers the program at once, in the same step.
    fn step(mut self) -> (Running, Segment) {
        loop {
            let reply = self.reply.take();
            match self.execution.resume(reply) {
                Step::Done(result) => return (self, Segment::Done(result)),
                Step::Call(call) => match self.prepare(call) {
                    Ok(prepared) if prepared.ask || !self.answer_in_step => {
                        if prepared.ask {
                            // A person's answer takes seconds at least.
                            self.execution.release_stack();
                        }
                        return (self, Segment::Call(prepared));
                    }
                    Ok(prepared) => match self.start(prepared) {
                        Ok(answered) => self.reply = Some((answered, Duration::ZERO)),
                        Err(started) => {
                            // The handler waits: what the program's stack
                            // touched below the call goes back meanwhile.
                            self.execution.release_stack();
                            return (self, Segment::Waiting(started));
                        }
                    },
                    Err(e) => self.reply = Some((Err(e), Duration::ZERO)),
                },
            }
        }
    }

    /// Starts the handler of an allowed call and polls it once, here in
    /// the step: most in-process handlers are done at once, and the
    /// program goes on without leaving the step. One that waits comes
    /// back as started, to be awaited between steps.
    fn start(&self, prepared: Prepared) -> Result<Result<Data, Error>, Started> {
        let Some(cap) = self.snapshot.catalog.get(&prepared.name) else {
            return Ok(Err(Error::Internal));
        };
        if self.deadline <= Instant::now() {
            return Ok(Err(Error::ResourceLimitExceeded));
        }
        let session = Session {
            subject: &self.subject,
            approver: &RefuseAll,
            token: &self.token,
        };
        let future = match start_handler(&session, &cap, prepared.arguments, self.deadline) {
            Ok(future) => future,
            Err(e) => return Ok(Err(e)),
        };
        let mut handling = AssertUnwindSafe(future).catch_unwind();
        match Pin::new(&mut handling).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(outcome) => Ok(settle(&cap, outcome)),
            Poll::Pending => Err(Started {
                name: prepared.name,
                handling,
            }),
        }
    }

    /// Binds a call's arguments and asks the policy about it.
    fn prepare(&self, call: CapabilityCall) -> Result<Prepared, Error> {
        if self.token.is_cancelled() {
            return Err(Error::Canceled);
        }
        let cap = self
            .snapshot
            .catalog
            .get(&call.name)
            .ok_or(Error::Internal)?;
        let arguments =
            bind(cap.input(), call.args).map_err(|e| Error::InvalidArguments(Some(e.0)))?;
        let session = Session {
            subject: &self.subject,
            approver: &RefuseAll,
            token: &self.token,
        };
        let decision = authorize(&self.inner, &session, &cap, &arguments, Some(self.deadline))?;
        Ok(Prepared {
            name: call.name,
            arguments,
            ask: decision == Decision::Ask,
        })
    }
}

/// Answers a prepared call: a person's approval if the policy asked for
/// one (the wait moves `deadline` out and is returned as the time the
/// execution's limit must not count), then the handler, bounded by the
/// deadline and the cancellation token, its result checked.
async fn answer(
    inner: &Inner,
    catalog: &Catalog,
    session: &Session<'_>,
    prepared: Prepared,
    deadline: &mut Instant,
) -> (Result<Data, Error>, Duration) {
    let Some(cap) = catalog.get(&prepared.name) else {
        return (Err(Error::Internal), Duration::ZERO);
    };
    let mut not_counted = Duration::ZERO;
    if prepared.ask {
        let asked = Instant::now();
        let answer = ask(inner, session, &cap, &prepared.arguments).await;
        not_counted = asked.elapsed();
        *deadline += not_counted;
        if let Err(e) = answer {
            return (Err(e), not_counted);
        }
    }
    let result = match start_handler(session, &cap, prepared.arguments, *deadline) {
        Ok(future) => {
            finish(
                &cap,
                session,
                AssertUnwindSafe(future).catch_unwind(),
                *deadline,
            )
            .await
        }
        Err(e) => Err(e),
    };
    (result, not_counted)
}

/// Awaits a started handler, bounded by the deadline and the token, and
/// checks its result.
async fn finish(
    cap: &CapabilityRef<'_>,
    session: &Session<'_>,
    handling: Handling,
    deadline: Instant,
) -> Result<Data, Error> {
    bounded(deadline, session.token, handling)
        .await
        .and_then(|outcome| settle(cap, outcome))
}

/// Tells `progress` that the `calls`th call, of `name`, completed.
async fn report(
    progress: &dyn Progress,
    session: &Session<'_>,
    deadline: Instant,
    calls: u64,
    name: &str,
) -> Result<(), Error> {
    bounded(
        deadline,
        session.token,
        progress.call_done(CallDone { calls, name }),
    )
    .await
}

/// Runs `future` to its end unless the deadline passes or the token is
/// cancelled first (then it is dropped, which stops it). It is polled once
/// before any timer is set: most futures end without waiting.
async fn bounded<F: Future>(
    deadline: Instant,
    token: &CancellationToken,
    future: F,
) -> Result<F::Output, Error> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    if remaining == Duration::ZERO {
        return Err(Error::ResourceLimitExceeded);
    }
    let mut future = std::pin::pin!(future);
    let first = std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await;
    match first {
        Poll::Ready(output) => Ok(output),
        Poll::Pending => tokio::select! {
            output = future => Ok(output),
            _ = tokio::time::sleep(remaining) => Err(Error::ResourceLimitExceeded),
            _ = token.cancelled() => Err(Error::Canceled),
        },
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
    /// execution time limit. For tests of a capability, like the typed tools
    /// guide's `shipping.Call(ctx, json)` (`docs/architecture.md`, section
    /// 11). A name that is not enabled is
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
            .map_err(|e| Error::InvalidArguments(Some(e.to_string())))?;
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
