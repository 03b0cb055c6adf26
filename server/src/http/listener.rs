//! The accept loop of the `--http` listener: a cap on open connections,
//! the timeouts of [`super::connection`], and a graceful drain.
//!
//! Connections are served by hyper's HTTP/1.1 server, each on its own task,
//! with its socket in a [`TimedIo`]. Accepting, and health probes, run on
//! a thread of their own (see [`serve`]). At most
//! [`ConnectionLimits::max_connections`] connections are served at once;
//! a few more (half of [`PROBE_SLOTS`]) wait for a slot, and further ones
//! are answered 503 with `Retry-After: 1` and closed, so that health
//! probes always find a socket of their own. A connection that waits for
//! a slot first closes the idlest keep-alive connection (the one idle for
//! longest, if any is idle): an idle connection gives up its slot to a new
//! one. When the drain token is cancelled (SIGTERM or SIGINT,
//! see [`crate::drain`]), `/readyz` answers 503 at once and every response
//! carries `Connection: close` (so that a proxy opens its next request on a
//! fresh connection, to a replica that is not draining, rather than
//! sending it on one this server is about to close). After the drain
//! delay the loop stops accepting without dropping a request a client has
//! already sent: it first has the kernel drop new connections' SYNs
//! ([`stop_handshakes`]: the client tries again a second later and then
//! finds the port closed, a refusal that a proxy passes on to another
//! replica), accepts what the kernel completed meanwhile (closing the
//! socket would reset those, requests and all), then closes its socket.
//! Every connection then finishes the request it is serving and closes; a
//! connection that is reading a head, or has not sent its first byte yet,
//! is served one request (its response says `Connection: close`), within
//! the head deadline; only a keep-alive connection idle between requests
//! is closed at once. [`serve`] returns once all are closed or the grace
//! period is over.

use super::connection::{ConnectionLimits, Phase, TimedIo, UntilSent};
use axum::body::Body;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower_service::Service;

/// How the listener drains.
#[derive(Clone, Debug, Default)]
pub struct DrainOptions {
    /// Cancelled to start the drain.
    pub token: CancellationToken,
    /// How long `/readyz` answers 503 before the listener stops accepting
    /// (time for load balancers to take the replica out).
    pub delay: Duration,
    /// The longest the open connections may take to finish after that.
    pub grace: Duration,
}

/// Sockets beyond `max_connections` that the front thread may hold: for
/// health probes, and for a few connections that wait for a slot.
pub const PROBE_SLOTS: usize = 16;

/// Connections that may wait for a slot while all are taken; more are
/// answered 503 at once, so that at least `PROBE_SLOTS - WAITING_SLOTS`
/// sockets stay free for probes.
const WAITING_SLOTS: usize = PROBE_SLOTS / 2;

/// The longest request line of a probe: `GET /healthz ` and `GET /readyz `.
const PROBE_PREFIX: usize = 13;

/// The longest request head read (request line and headers), which is
/// also the most a connection's read buffer grows to: a longer head is
/// answered 431. hyper's own bound is about 400 KiB, which let 1,024
/// connections hold 400 MiB of heads at once.
pub const MAX_HEAD_BYTES: usize = 16 << 10;

/// Once new handshakes are refused at the end of the drain delay, how long
/// without a newly completed connection before the listening socket is
/// closed (a handshake under way when the SYNs stopped completes within a
/// round trip).
const LAST_HANDSHAKES: Duration = Duration::from_millis(50);

/// Serves `router` on `listener` until the drain completes.
///
/// Accepting runs on a thread of its own (the *front*, with a
/// single-threaded runtime), so that a runtime busy with thousands of
/// requests never delays the next accept or a health probe. The front
/// looks at each new connection's first bytes without reading them: a
/// `GET /healthz` or `GET /readyz` is answered on the front itself (one
/// request, then the connection closes), anything else is handed to this
/// runtime, where hyper serves it. Probes have [`PROBE_SLOTS`] sockets of
/// their own beyond `max_connections`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    drain: DrainOptions,
) {
    let front = Front {
        main: tokio::runtime::Handle::current(),
        router,
        limits,
        slots: Arc::new(Semaphore::new(limits.max_connections.max(1))),
        sockets: Arc::new(Semaphore::new(limits.max_connections.max(1) + PROBE_SLOTS)),
        waiting: Arc::new(Semaphore::new(WAITING_SLOTS)),
        tasks: TaskTracker::new(),
        closing: CancellationToken::new(),
        drain: drain.clone(),
        open: Arc::new(Open::default()),
    };
    let tasks = front.tasks.clone();
    let closing = front.closing.clone();
    let (done, accepted_all) = tokio::sync::oneshot::channel();
    let started = listener.into_std().and_then(|listener| {
        std::thread::Builder::new()
            .name("codemode-front".into())
            .spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(front.run(listener)),
                    Err(e) => tracing::error!("cannot start the front runtime: {e}"),
                }
                let _ = done.send(());
            })
    });
    if let Err(e) = started {
        tracing::error!("cannot start the front thread: {e}");
        return;
    }
    let _ = accepted_all.await;
    closing.cancel();
    tasks.close();
    if tokio::time::timeout(drain.grace, tasks.wait())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the drain's grace period; closing");
    }
}

/// The accept loop's state, on the front thread.
struct Front {
    /// The runtime that serves connections other than probes.
    main: tokio::runtime::Handle,
    router: Router,
    limits: ConnectionLimits,
    /// Connections served by `main` (`max_connections`).
    slots: Arc<Semaphore>,
    /// Sockets open in all: the slots and [`PROBE_SLOTS`].
    sockets: Arc<Semaphore>,
    /// Connections waiting for a slot.
    waiting: Arc<Semaphore>,
    /// Every connection's task, on either runtime.
    tasks: TaskTracker,
    /// Cancelled when accepting has stopped: connections finish the
    /// request they serve and close.
    closing: CancellationToken,
    drain: DrainOptions,
    /// The phases of the connections served by `main`.
    open: Arc<Open>,
}

/// The connections that hold a slot, by a number of their own: the
/// phase each one's service marks.
#[derive(Default)]
struct Open {
    next: AtomicU64,
    phases: Mutex<HashMap<u64, Weak<Phase>>>,
}

impl Open {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Weak<Phase>>> {
        self.phases.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts `phase` among the open connections until the guard drops.
    fn register(self: &Arc<Self>, phase: &Arc<Phase>) -> Registered {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, Arc::downgrade(phase));
        Registered {
            id,
            open: self.clone(),
        }
    }

    /// Closes the connection idle for longest; `false` if none is idle.
    fn evict_idlest(&self) -> bool {
        let idlest = self
            .lock()
            .values()
            .filter_map(Weak::upgrade)
            .filter_map(|phase| phase.idle_order().map(|order| (order, phase)))
            .min_by_key(|(order, _)| *order);
        match idlest {
            Some((_, phase)) => {
                phase.evict();
                true
            }
            None => false,
        }
    }
}

/// Removes a connection from [`Open`] when it ends.
struct Registered {
    id: u64,
    open: Arc<Open>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.open.lock().remove(&self.id);
    }
}

impl Front {
    /// Accepts until the drain delay after the drain starts; then waits for
    /// the probes it serves itself to end.
    async fn run(self, listener: std::net::TcpListener) {
        let listener = match TcpListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!("cannot listen on the front thread: {e}");
                return;
            }
        };
        let this = Arc::new(self);
        let probes = TaskTracker::new();
        // Accepting goes on through the drain delay: until then only
        // /readyz tells load balancers to go elsewhere.
        let stop = async {
            this.drain.token.cancelled().await;
            tokio::time::sleep(this.drain.delay).await;
        };
        tokio::pin!(stop);
        loop {
            let accepted = tokio::select! {
                biased;
                _ = &mut stop => break,
                accepted = accept(&listener, &this.sockets) => accepted,
            };
            if let Some((stream, socket)) = accepted {
                probes.spawn(this.clone().sort(stream, socket));
            }
        }
        // The connections the kernel has completed are served: closing
        // the socket would reset them, with the requests already sent.
        match listener.into_std() {
            Ok(listener) => {
                let last = this.clone().last_connections(&listener, &probes);
                let _ = tokio::time::timeout(this.drain.grace, last).await;
            }
            Err(e) => tracing::warn!("cannot take the last connections: {e}"),
        }
        this.closing.cancel();
        probes.close();
        let _ = tokio::time::timeout(this.drain.grace, probes.wait()).await;
    }

    /// At the end of the drain delay: stops new handshakes and takes the
    /// connections completed until none has come for [`LAST_HANDSHAKES`]
    /// (without the SYN filter, only those already waiting). Accepts with
    /// the system call itself (the reactor's readiness may lag behind).
    async fn last_connections(
        self: Arc<Self>,
        listener: &std::net::TcpListener,
        probes: &TaskTracker,
    ) {
        let quiet = if stop_handshakes(listener) {
            LAST_HANDSHAKES
        } else {
            Duration::ZERO
        };
        let mut last = std::time::Instant::now();
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    last = std::time::Instant::now();
                    let stream = stream
                        .set_nonblocking(true)
                        .and_then(|()| TcpStream::from_std(stream));
                    let Ok(stream) = stream else {
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    let Ok(socket) = self.sockets.clone().acquire_owned().await else {
                        return;
                    };
                    probes.spawn(self.clone().sort(stream, socket));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if last.elapsed() >= quiet {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::warn!("accept failed while draining: {e}");
                    return;
                }
            }
        }
    }

    /// Serves a probe here, or hands the connection to the main runtime
    /// once it has a slot.
    async fn sort(self: Arc<Self>, stream: TcpStream, socket: OwnedSemaphorePermit) {
        let mut first = [0u8; PROBE_PREFIX];
        let peeked = tokio::time::timeout(self.limits.header_read, stream.peek(&mut first)).await;
        let n = match peeked {
            Ok(Ok(n)) if n > 0 => n,
            // No first byte within the head deadline, or the client left.
            _ => return,
        };
        let line = &first[..n];
        if line.starts_with(b"GET /healthz ") || line.starts_with(b"GET /readyz ") {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(None)
                .max_buf_size(MAX_HEAD_BYTES)
                .keep_alive(false);
            let health = super::health::routes(self.drain.token.clone());
            let phase = Arc::new(Phase::default());
            let connection = connection(&http, stream, self.limits, health, None, phase);
            let _ = tokio::time::timeout(self.limits.header_read, connection).await;
            drop(socket);
            return;
        }
        let slot = match self.slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                let Ok(_waiting) = self.waiting.clone().try_acquire_owned() else {
                    return refuse(stream).await;
                };
                // An idle keep-alive connection gives its slot to this one.
                self.open.evict_idlest();
                // Also once accepting has stopped: the connection may hold
                // a request already sent (bounded by the drain's grace).
                match self.slots.clone().acquire_owned().await {
                    Ok(slot) => slot,
                    Err(_) => return,
                }
            }
        };
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(_) => return,
        };
        let this = self.clone();
        let task = self.tasks.track_future(async move {
            let _held = (socket, slot);
            let Ok(stream) = TcpStream::from_std(stream) else {
                return;
            };
            let mut http = hyper::server::conn::http1::Builder::new();
            // The head deadline is TimedIo's (hyper's own would also cut
            // idle keep-alive connections at the head timeout).
            http.timer(TokioTimer::new())
                .header_read_timeout(None)
                .max_buf_size(MAX_HEAD_BYTES)
                .keep_alive(true);
            let draining = this.drain.token.clone();
            let phase = Arc::new(Phase::default());
            let _registered = this.open.register(&phase);
            let connection = connection(
                &http,
                stream,
                this.limits,
                this.router.clone(),
                Some(draining),
                phase.clone(),
            );
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                _ = this.closing.cancelled() => {
                    // A connection reading a head, or whose first request
                    // has not come yet, is served one request (its
                    // response closes it) within the head deadline: a
                    // proxy may have sent it already.
                    if phase.reading_head() {
                        let _ = connection.await;
                        return;
                    }
                }
                _ = phase.evicted() => {}
            }
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        });
        self.main.spawn(task);
    }
}

/// Serves `router` on one connection, with the timeouts of
/// [`TimedIo`]; once `draining` is cancelled, every response carries
/// `Connection: close` (and hyper closes the connection after it). The
/// service marks `phase`.
fn connection(
    http: &hyper::server::conn::http1::Builder,
    stream: TcpStream,
    limits: ConnectionLimits,
    router: Router,
    draining: Option<CancellationToken>,
    phase: Arc<Phase>,
) -> hyper::server::conn::http1::Connection<
    TokioIo<TimedIo<TcpStream>>,
    impl hyper::service::Service<
            hyper::Request<Incoming>,
            Response = axum::response::Response,
            Error = Infallible,
            Future = impl Send,
        > + Send,
> {
    let io = TimedIo::with_phase(stream, limits, phase.clone());
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let mut router = router.clone();
        let phase = phase.clone();
        let draining = draining.clone();
        let busy = phase.busy();
        async move {
            let response = router.call(request.map(Body::new)).await;
            let mut response = response.unwrap_or_else(|never| match never {});
            if draining.is_some_and(|d| d.is_cancelled()) {
                response.headers_mut().insert(
                    hyper::header::CONNECTION,
                    hyper::header::HeaderValue::from_static("close"),
                );
            }
            // The connection turns idle once the body has been sent.
            let response = response.map(|body| Body::new(UntilSent::new(body, phase, busy)));
            Ok::<_, Infallible>(response)
        }
    });
    http.serve_connection(TokioIo::new(io), service)
}

/// Answers a connection that found every slot taken and too many waiting:
/// 503, and closed.
async fn refuse(mut stream: TcpStream) {
    const BODY: &str = "server at its connection limit";
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
         Retry-After: 1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = tokio::time::timeout(
        Duration::from_secs(1),
        tokio::io::AsyncWriteExt::write_all(&mut stream, response.as_bytes()),
    )
    .await;
}

/// Has the kernel drop every new connection's first segment (a SYN
/// without ACK) on `listener`, with a classic BPF socket filter, so that no
/// more handshakes complete while those under way still do; `false` where
/// that is not possible. A client whose SYN was dropped sends it again
/// about a second later, when the socket is closed: its connect is refused,
/// which a proxy passes on to another replica (the request was not sent).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn stop_handshakes(listener: &std::net::TcpListener) -> bool {
    use std::os::fd::AsRawFd;
    /// `SO_ATTACH_FILTER` of `asm-generic/socket.h`.
    const SO_ATTACH_FILTER: libc::c_int = 26;
    let op = |code: u32, jt: u8, jf: u8, k: u32| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    // A TCP socket's filter sees the segment from its TCP header: the
    // flags are byte 13, SYN is 0x02 and ACK 0x10.
    let mut program = [
        op(libc::BPF_LD | libc::BPF_B | libc::BPF_ABS, 0, 0, 13),
        op(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, 0, 0, 0x12),
        op(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, 0, 1, 0x02),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, 0),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, u32::MAX),
    ];
    let fprog = libc::sock_fprog {
        len: program.len() as libc::c_ushort,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: the descriptor is the listener's, open for the borrow; the
    // option value is a `sock_fprog` of the given size whose `filter`
    // points to `len` instructions that live across the call (the kernel
    // copies them).
    let done = unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_ATTACH_FILTER,
            (&fprog as *const libc::sock_fprog).cast(),
            std::mem::size_of::<libc::sock_fprog>() as libc::socklen_t,
        )
    };
    done == 0
}

/// Elsewhere new handshakes cannot be stopped before the socket closes.
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
fn stop_handshakes(_listener: &std::net::TcpListener) -> bool {
    false
}

/// The next connection, once a socket is free; `None` when accepting
/// failed (logged; the loop goes on after a pause, as when out of
/// descriptors).
async fn accept(
    listener: &TcpListener,
    sockets: &Arc<Semaphore>,
) -> Option<(TcpStream, OwnedSemaphorePermit)> {
    let socket = sockets.clone().acquire_owned().await.ok()?;
    match listener.accept().await {
        Ok((stream, _)) => {
            let _ = stream.set_nodelay(true);
            Some((stream, socket))
        }
        Err(e) => {
            tracing::warn!("accept failed: {e}");
            tokio::time::sleep(Duration::from_millis(50)).await;
            None
        }
    }
}
