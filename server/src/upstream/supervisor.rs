//! Supervision of the upstream servers and the catalog they feed.
//!
//! [`start`] builds the service over the native sources, then runs one
//! supervisor task per upstream and waits (at most [`START_WAIT`]) until
//! each has connected or failed once, so a command sees every upstream that
//! is up at start; one that is not is logged with the reason and joins the
//! catalog when it connects. A supervisor connects, lists and imports the
//! tools, publishes them, re-imports on `notifications/tools/list_changed`
//! (at most once per [`RELIST_INTERVAL`]: changes announced meanwhile are
//! read by the next re-import, so the last one always counts), and when the connection ends (a crashed child, a closed endpoint) keeps
//! the capabilities — calls fail with `capability failed` meanwhile — and
//! reconnects after a backoff that doubles from [`MIN_BACKOFF`] to
//! [`MAX_BACKOFF`] and resets after a connection that stayed up for
//! [`STABLE_AFTER`]. Every publish rebuilds the whole catalog from the
//! native capabilities and the latest import of every upstream and swaps
//! it into the service atomically; running executions keep theirs.
//! [`Upstreams::shutdown`] stops the supervisors and closes the
//! connections, which ends the children.

use super::client::{self, Connection, Link, Listener};
use super::config::Upstream;
use super::import;
use crate::catalogs::Sources;
use crate::logging::redact_urls;
use codemode_catalog::{CancellationToken, Capability, CodeMode, Config};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, Notify};
use tokio::task::JoinHandle;

/// How long [`start`] waits for the first attempt of every upstream.
pub const START_WAIT: Duration = Duration::from_secs(30);
/// How long one connection attempt (start, initialize, list) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The first delay before reconnecting.
pub const MIN_BACKOFF: Duration = Duration::from_millis(200);
/// The longest delay before reconnecting.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A connection up this long resets the backoff.
pub const STABLE_AFTER: Duration = Duration::from_secs(60);
/// The shortest time between two re-imports of one upstream's tools: a
/// server that announces changes every millisecond costs one listing and
/// one catalog rebuild per interval, not a core.
pub const RELIST_INTERVAL: Duration = Duration::from_millis(500);
/// How long shutdown waits for a connection to close.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// The running supervisors.
pub struct Upstreams {
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Upstreams {
    /// Stops every supervisor and closes its connection (a child process
    /// sees its stdin close and is killed if it does not exit).
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        for task in std::mem::take(&mut self.tasks) {
            let _ = tokio::time::timeout(CLOSE_WAIT * 2, task).await;
        }
    }
}

impl Upstreams {
    /// A guard that shuts the upstreams down on `runtime` when dropped (for
    /// a caller outside the runtime, however it returns).
    pub fn stop_on_drop(self, runtime: tokio::runtime::Handle) -> StopOnDrop {
        StopOnDrop {
            upstreams: Some(self),
            runtime,
        }
    }
}

/// Shuts the upstreams down when dropped; see [`Upstreams::stop_on_drop`].
pub struct StopOnDrop {
    upstreams: Option<Upstreams>,
    runtime: tokio::runtime::Handle,
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(upstreams) = self.upstreams.take() {
            if !upstreams.tasks.is_empty() {
                self.runtime.block_on(upstreams.shutdown());
            }
        }
    }
}

impl Drop for Upstreams {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The native capabilities and the latest import of each upstream.
struct Composer {
    sources: Sources,
    imported: Mutex<BTreeMap<String, Vec<Capability>>>,
    service: CodeMode,
}

impl Composer {
    /// Replaces the capabilities of `upstream` and swaps in the new
    /// catalog.
    fn publish(&self, upstream: &str, caps: Vec<Capability>) {
        let mut imported = match self.imported.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        imported.insert(upstream.to_string(), caps);
        let all = imported.values().flatten().cloned();
        match self.sources.build_with(all) {
            Ok(catalog) => self.service.replace_catalog(catalog),
            Err(e) => tracing::warn!(upstream, "the catalog was not rebuilt: {e}"),
        }
    }
}

/// Why the upstreams cannot be started (a usage error).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("upstream {0:?}: the name is already the root of capability {1:?}")]
    Root(String, String),
    #[error(transparent)]
    Build(#[from] codemode_catalog::BuildError),
}

/// Builds the service over `sources` and the `upstreams`, connecting each
/// (see the module documentation). Configured disabled IDs of the form
/// `upstream.NAME.<tool>` apply to the tools of upstream NAME whenever they
/// are imported.
pub async fn start(
    mut sources: Sources,
    upstreams: Vec<Upstream>,
    config: Config,
) -> Result<(CodeMode, Upstreams), StartError> {
    for up in &upstreams {
        let clash = sources
            .capabilities
            .iter()
            .find(|c| c.name().split('.').next() == Some(up.name.as_str()));
        if let Some(cap) = clash {
            return Err(StartError::Root(up.name.clone(), cap.name().to_string()));
        }
    }
    let is_upstream_id = |id: &str| {
        upstreams.iter().any(|u| {
            id.strip_prefix("upstream.")
                .and_then(|rest| rest.strip_prefix(u.name.as_str()))
                .is_some_and(|rest| rest.starts_with('.'))
        })
    };
    let (upstream_disabled, native_disabled): (Vec<String>, Vec<String>) = sources
        .disabled
        .iter()
        .cloned()
        .partition(|id| is_upstream_id(id));
    sources.disabled = native_disabled;
    let catalog = sources.build_with([])?;
    let service = CodeMode::with_config(catalog, sources.policy.clone(), config);
    let composer = Arc::new(Composer {
        sources,
        imported: Mutex::new(BTreeMap::new()),
        service: service.clone(),
    });
    let disabled: Arc<HashSet<String>> = Arc::new(upstream_disabled.into_iter().collect());
    let stop = CancellationToken::new();
    let mut tasks = Vec::with_capacity(upstreams.len());
    let mut first = Vec::with_capacity(upstreams.len());
    for up in upstreams {
        let (ready, attempted) = oneshot::channel();
        first.push(attempted);
        let supervisor = Supervisor {
            link: Link::new(&up.name),
            upstream: up,
            composer: composer.clone(),
            disabled: disabled.clone(),
            stop: stop.clone(),
        };
        tasks.push(tokio::spawn(supervisor.run(ready)));
    }
    let _ = tokio::time::timeout(START_WAIT, async {
        for attempted in first {
            let _ = attempted.await;
        }
    })
    .await;
    Ok((service, Upstreams { stop, tasks }))
}

struct Supervisor {
    upstream: Upstream,
    link: Arc<Link>,
    composer: Arc<Composer>,
    disabled: Arc<HashSet<String>>,
    stop: CancellationToken,
}

impl Supervisor {
    async fn run(self, ready: oneshot::Sender<()>) {
        let name = self.upstream.name.clone();
        let mut ready = Some(ready);
        let mut backoff = MIN_BACKOFF;
        loop {
            let changed = Arc::new(Notify::new());
            let attempt = tokio::select! {
                r = tokio::time::timeout(CONNECT_TIMEOUT, self.connect(changed.clone())) => {
                    r.unwrap_or_else(|_| Err("the connection attempt timed out".to_string()))
                }
                _ = self.stop.cancelled() => return,
            };
            match attempt {
                Ok(connection) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(());
                    }
                    let since = Instant::now();
                    let why = self.watch(connection, &changed).await;
                    self.link.set(None);
                    if self.stop.is_cancelled() {
                        return;
                    }
                    if since.elapsed() >= STABLE_AFTER {
                        backoff = MIN_BACKOFF;
                    }
                    tracing::warn!(
                        upstream = %name,
                        "the upstream server stopped ({why}); its capabilities fail until it is back; reconnecting in {backoff:?}"
                    );
                }
                Err(why) => {
                    if let Some(r) = ready.take() {
                        let _ = r.send(());
                    }
                    tracing::warn!(
                        upstream = %name,
                        "the upstream server is unavailable ({why}); its capabilities are missing until it connects; retrying in {backoff:?}"
                    );
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = self.stop.cancelled() => return,
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Connects, lists and publishes the tools.
    async fn connect(&self, changed: Arc<Notify>) -> Result<Connection, String> {
        let connection = client::connect(&self.upstream, Listener::new(changed)).await?;
        self.link.set(Some(connection.peer().clone()));
        if let Err(why) = self.import(connection.peer()).await {
            self.link.set(None);
            return Err(why);
        }
        Ok(connection)
    }

    async fn import(&self, peer: &rmcp::Peer<rmcp::RoleClient>) -> Result<(), String> {
        let name = &self.upstream.name;
        let (tools, truncated) = client::list_tools(peer).await?;
        if truncated {
            tracing::warn!(
                upstream = %name,
                "the tool list was cut at {} tools or {} pages",
                client::MAX_TOOLS,
                client::MAX_PAGES
            );
        }
        let limits = &self.composer.service.config().limits;
        let caps = import::import(name, &tools, &self.link, &self.disabled, limits);
        tracing::info!(
            upstream = %name,
            "imported {} of {} tools",
            caps.len(),
            tools.len()
        );
        self.composer.publish(name, caps);
        Ok(())
    }

    /// Serves the connection until it ends or the supervisor stops;
    /// re-imports the tools when they change. Returns why it ended.
    async fn watch(&self, connection: Connection, changed: &Notify) -> String {
        let peer = connection.peer().clone();
        let closer = connection.cancellation_token();
        let waiting = connection.waiting();
        tokio::pin!(waiting);
        // A change announced while one is pending (or being read) is kept
        // by `changed` (one permit) and read by the next re-import.
        let mut pending = false;
        let mut next_relist = tokio::time::Instant::now();
        loop {
            tokio::select! {
                quit = &mut waiting => {
                    return match quit {
                        Ok(reason) => redact_urls(&format!("{reason:?}")),
                        Err(e) => redact_urls(&format!("{e}")),
                    };
                }
                _ = changed.notified(), if !pending => pending = true,
                _ = tokio::time::sleep_until(next_relist), if pending => {
                    pending = false;
                    next_relist = tokio::time::Instant::now() + RELIST_INTERVAL;
                    // A stop does not wait for a slow listing: the next
                    // turn of the loop closes the connection.
                    let relisted = tokio::select! {
                        r = tokio::time::timeout(CONNECT_TIMEOUT, self.import(&peer)) => r,
                        _ = self.stop.cancelled() => continue,
                    };
                    if let Err(why) = relisted.unwrap_or_else(|_| Err("timed out".into())) {
                        tracing::warn!(
                            upstream = %self.upstream.name,
                            "the changed tool list could not be read ({why}); keeping the last one"
                        );
                    }
                }
                _ = self.stop.cancelled() => {
                    closer.cancel();
                    let _ = tokio::time::timeout(CLOSE_WAIT, &mut waiting).await;
                    return "shutdown".to_string();
                }
            }
        }
    }
}
