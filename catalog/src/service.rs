//! The CodeMode service: search, describe and execute for a subject.
//!
//! [`CodeMode`] holds an immutable [`Catalog`], a [`Policy`] and a
//! [`Config`] (the VM's limits, the search limits and the number of
//! executions that may run at once; more wait for a slot). The catalog can
//! be replaced as a whole ([`CodeMode::replace_catalog`], when an upstream
//! server's tools change): search and describe see the newest one, and an
//! execution keeps the catalog it started with to its end. `execute` runs
//! the VM on tokio's blocking pool; the VM calls back into the host bridge,
//! which for each capability call binds the keyword arguments, authorizes
//! the canonical arguments, runs the async handler on the runtime bounded
//! by the remaining deadline and the cancellation token, catches its
//! panics, and checks and converts its output. Every failure leaves as one
//! [`Error`] with a fixed text.

use crate::auth::{AuthorizationRequest, Decision, Policy, Subject};
use crate::binding::bind;
use crate::capability::CallFailure;
use crate::catalog::{Catalog, Description};
use crate::convert::data_to_json;
use crate::error::Error;
use crate::search::{SearchError, SearchLimits, SearchResponse};
use codemode_vm::{Data, ExecError, Host, HostCall, Limits};
use futures_util::FutureExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::Semaphore;
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

/// One catalog and its names, as an execution sees it from start to end.
struct Snapshot {
    catalog: Arc<Catalog>,
    names: Vec<String>,
}

impl Snapshot {
    fn new(catalog: Catalog) -> Arc<Snapshot> {
        let names = catalog.names().map(str::to_string).collect();
        Arc::new(Snapshot {
            catalog: Arc::new(catalog),
            names,
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
        authenticated(subject)?;
        let token = cancel.child_token();
        let _stop_on_drop = token.clone().drop_guard();
        let permit = tokio::select! {
            p = self.inner.slots.clone().acquire_owned() => p.map_err(|_| Error::Internal)?,
            _ = token.cancelled() => return Err(Error::Canceled),
        };
        let flag = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (token, flag) = (token.clone(), flag.clone());
            tokio::spawn(async move {
                token.cancelled().await;
                flag.store(true, Ordering::Relaxed);
            })
        };
        let inner = self.inner.clone();
        let snapshot = self.snapshot();
        let subject = subject.clone();
        let source = source.to_string();
        let handle = Handle::current();
        let flavor = handle.runtime_flavor();
        let bridge_token = token.clone();
        let run = move || {
            let start = Instant::now();
            let bridge = Bridge {
                inner: &inner,
                catalog: &snapshot.catalog,
                subject: &subject,
                handle,
                token: bridge_token,
                deadline: start + inner.config.limits.max_time,
            };
            let names: Vec<&str> = snapshot.names.iter().map(String::as_str).collect();
            codemode_vm::execute(&source, &names, &bridge, &inner.config.limits, Some(flag))
        };
        // On a multi-threaded runtime the program runs on this thread, which
        // hands its other tasks to the rest of the runtime meanwhile: no
        // thread hand-off on the way in or out. A current-thread runtime
        // cannot spare its only thread, so there it runs on the blocking
        // pool. A panic is an internal failure either way.
        let outcome = if flavor == RuntimeFlavor::MultiThread {
            catch_unwind(AssertUnwindSafe(|| tokio::task::block_in_place(run))).map_err(|_| ())
        } else {
            tokio::task::spawn_blocking(run).await.map_err(|_| ())
        };
        watcher.abort();
        drop(permit);
        match outcome {
            Err(_) => Err(Error::Internal),
            Ok(Ok(data)) => Ok(data),
            Ok(Err(e)) => Err(classify(e)),
        }
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
    token: CancellationToken,
    deadline: Instant,
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
        let remaining = self.deadline.saturating_duration_since(Instant::now());
        if remaining == Duration::ZERO {
            return Err(Error::ResourceLimitExceeded);
        }
        // The handler runs right here, on the execution's blocking thread,
        // inside the runtime's context: no task spawn and no thread hand-off
        // per call. A panic while it is polled is caught and is a failure of
        // the capability; on the deadline or cancellation the future is
        // dropped, which stops it.
        let future = AssertUnwindSafe(handler(data_to_json(&arguments))).catch_unwind();
        let token = self.token.clone();
        self.handle.block_on(async move {
            tokio::select! {
                outcome = future => match outcome {
                    Ok(Ok(data)) => Ok(data),
                    Ok(Err(CallFailure::Input)) => Err(Error::InvalidArguments(None)),
                    Ok(Err(CallFailure::Handler(e))) => {
                        Err(Error::CapabilityFailed(e.public_message().map(str::to_string)))
                    }
                    Ok(Err(CallFailure::Output)) | Err(_) => Err(Error::CapabilityFailed(None)),
                },
                _ = tokio::time::sleep(remaining) => Err(Error::ResourceLimitExceeded),
                _ = token.cancelled() => Err(Error::Canceled),
            }
        })
    }
}
