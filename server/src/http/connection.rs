//! One accepted HTTP connection: its timeouts, and the cap on how many are
//! open at once.
//!
//! A connection is in one of three phases. It starts *reading a head*: the
//! request line and headers must be complete within
//! [`ConnectionLimits::header_read`]. Once hyper hands the request to the
//! router it is *busy*: the body must arrive within
//! [`ConnectionLimits::body_read`] (enforced where the body is read, see
//! [`read_body`]) and the execution is bounded by its own limits. After the
//! response it is *idle*: the next request's first byte must come within
//! [`ConnectionLimits::keep_alive`], and the first byte starts a new head
//! deadline. A connection past its deadline is closed; so is one whose
//! client stops reading a response for longer than the idle timeout.
//! [`TimedIo`] enforces the head and idle deadlines on the socket itself;
//! [`Phase`] is shared with the connection's service, which marks the
//! request's start and end.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};

/// The bounds of every connection of one listener.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// From the connection's opening, or the first byte of a following
    /// request, until its head is complete.
    pub header_read: Duration,
    /// From the head until the whole body is read.
    pub body_read: Duration,
    /// From a response until the next request's first byte.
    pub keep_alive: Duration,
    /// Connections open at once; more wait in the listen backlog.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            header_read: Duration::from_secs(10),
            body_read: Duration::from_secs(30),
            keep_alive: Duration::from_secs(60),
            max_connections: 1024,
        }
    }
}

const HEAD: u64 = 0;
const BUSY: u64 = 1;
const IDLE: u64 = 2;

/// The phase of one connection: the low two bits are the phase, the rest
/// counts transitions (so a deadline is armed once per phase entered),
/// and the waker of the socket's last poll while busy — hyper does not
/// read again after a response until something wakes it, so the idle
/// deadline is armed by waking it.
#[derive(Default)]
pub struct Phase {
    value: AtomicU64,
    waker: Mutex<Option<Waker>>,
    /// When the connection last turned idle, in the order of
    /// [`IDLE_ORDER`] (lower is idle for longer).
    idle_since: AtomicU64,
    /// Notified to close the connection (see [`Phase::evict`]).
    evicted: tokio::sync::Notify,
}

/// Orders the moments connections turn idle.
static IDLE_ORDER: AtomicU64 = AtomicU64::new(0);

impl Phase {
    fn set(&self, phase: u64) {
        let _ = self
            .value
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                Some(((v >> 2) + 1) << 2 | phase)
            });
    }

    /// Remembers who to wake when the busy phase ends.
    fn wake_when_idle(&self, waker: &Waker) {
        let mut slot = self.waker.lock().unwrap_or_else(|p| p.into_inner());
        if !slot.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *slot = Some(waker.clone());
        }
    }

    /// A request's head was read: no socket deadline until its response.
    pub fn busy(&self) {
        self.set(BUSY);
    }

    /// The response is out: the idle deadline runs.
    pub fn idle(&self) {
        self.idle_since
            .store(IDLE_ORDER.fetch_add(1, Ordering::AcqRel), Ordering::Release);
        self.set(IDLE);
        let waker = self.waker.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn load(&self) -> u64 {
        self.value.load(Ordering::Acquire)
    }

    /// How long the connection has been idle, as an order (lower is
    /// longer); `None` while it reads a head or serves a request.
    pub fn idle_order(&self) -> Option<u64> {
        (self.load() & 3 == IDLE).then(|| self.idle_since.load(Ordering::Acquire))
    }

    /// Asks the connection to close: its task shuts it down gracefully
    /// (at once if it is still idle; a request that has begun is served
    /// first), see [`Phase::evicted`].
    pub fn evict(&self) {
        self.evicted.notify_one();
    }

    /// Returns once [`Phase::evict`] was called.
    pub async fn evicted(&self) {
        self.evicted.notified().await;
    }
}

/// A socket with the head and idle deadlines of its connection.
pub struct TimedIo<T> {
    io: T,
    phase: Arc<Phase>,
    limits: ConnectionLimits,
    sleep: Pin<Box<Sleep>>,
    /// The phase value the sleep was armed for.
    armed: Option<u64>,
}

impl<T> TimedIo<T> {
    /// Wraps a just-accepted socket; returns the phase its service marks.
    pub fn new(io: T, limits: ConnectionLimits) -> (TimedIo<T>, Arc<Phase>) {
        let phase = Arc::new(Phase::default());
        (TimedIo::with_phase(io, limits, phase.clone()), phase)
    }

    /// Wraps a just-accepted socket whose service marks `phase`.
    pub fn with_phase(io: T, limits: ConnectionLimits, phase: Arc<Phase>) -> TimedIo<T> {
        TimedIo {
            io,
            phase,
            limits,
            sleep: Box::pin(tokio::time::sleep(limits.header_read)),
            armed: None,
        }
    }

    /// Whether the deadline of the current phase has passed; arms it on
    /// the first look in each phase (registering the waker).
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        let value = self.phase.load();
        let timeout = match value & 3 {
            HEAD => self.limits.header_read,
            IDLE => self.limits.keep_alive,
            _ => {
                self.phase.wake_when_idle(cx.waker());
                return false;
            }
        };
        if self.armed != Some(value) {
            self.armed = Some(value);
            self.sleep.as_mut().reset(Instant::now() + timeout);
        }
        self.sleep.as_mut().poll(cx).is_ready()
    }
}

fn timed_out() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "connection deadline")
}

impl<T: AsyncRead + Unpin> AsyncRead for TimedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                // The first byte after a response starts the next head.
                if buf.filled().len() > before && self.phase.load() & 3 == IDLE {
                    self.phase.set(HEAD);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(timed_out())),
            other => other,
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for TimedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.io).poll_write(cx, buf) {
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(timed_out())),
            other => other,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.io).poll_flush(cx) {
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(timed_out())),
            other => other,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The bounds on request bodies of one router: the body deadline, the
/// largest body, and the bytes that all bodies being read or served may
/// hold at once (a semaphore of bytes).
#[derive(Clone)]
pub struct BodyLimits {
    timeout: Duration,
    max: usize,
    in_flight: Arc<Semaphore>,
}

impl BodyLimits {
    /// Bodies of at most `max` bytes, read within `timeout`, `in_flight`
    /// bytes of them at once (at most `u32::MAX`, at least one); a body
    /// is never larger than `in_flight`, so that every body fits.
    pub fn new(timeout: Duration, max: usize, in_flight: usize) -> BodyLimits {
        let in_flight = in_flight.clamp(1, u32::MAX as usize);
        BodyLimits {
            timeout,
            max: max.min(in_flight),
            in_flight: Arc::new(Semaphore::new(in_flight)),
        }
    }

    /// The largest body.
    pub fn max(&self) -> usize {
        self.max
    }
}

/// A request's body as [`bounded_body`] read it, in the request's
/// extensions: a handler that reads the body takes these bytes instead of
/// collecting the body again (the request's body holds the same bytes).
#[derive(Clone)]
pub(crate) struct ReadBody(pub(crate) Bytes);

/// The layer that reads every request's body in whole within the body
/// deadline (and the size limit) before the request goes on, with the
/// bytes in its extensions too ([`ReadBody`]). The body's
/// bytes are taken from the router's budget first (its `Content-Length`,
/// or the largest body when it has none, given back down to its length
/// once read) and held until the response: a request that cannot get them
/// within the body deadline is answered 503 with `Retry-After`.
pub(crate) async fn bounded_body(
    State(limits): State<BodyLimits>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let started = Instant::now();
    let declared = parts
        .headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max as u64) {
        return too_large(limits.max);
    }
    let wanted = declared.map_or(limits.max, |n| n as usize);
    let acquire = limits.in_flight.clone().acquire_many_owned(wanted as u32);
    let mut held = match tokio::time::timeout(limits.timeout, acquire).await {
        Ok(Ok(held)) => held,
        _ => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [
                    (axum::http::header::RETRY_AFTER, "1"),
                    (axum::http::header::CONNECTION, "close"),
                ],
                "Service Unavailable: too many request bodies in flight",
            )
                .into_response();
        }
    };
    let left = limits.timeout.saturating_sub(started.elapsed());
    match read_body(body, wanted, left).await {
        Ok(bytes) => {
            // A body without a length gives back what it did not use.
            drop(held.split(wanted - bytes.len()));
            let mut request = Request::from_parts(parts, Body::from(bytes.clone()));
            request.extensions_mut().insert(ReadBody(bytes));
            let response = next.run(request).await;
            drop(held);
            response
        }
        Err(response) => response,
    }
}

fn too_large(max: usize) -> Response {
    let text = format!("Payload Too Large: request body exceeds {max} bytes");
    plain(StatusCode::PAYLOAD_TOO_LARGE, text)
}

/// Reads a whole request body: at most `max` bytes (413 beyond, in rmcp's
/// words), within `timeout` (408), a read failure is a 500.
pub async fn read_body(body: Body, max: usize, timeout: Duration) -> Result<Bytes, Response> {
    match tokio::time::timeout(timeout, collect(body, max)).await {
        Ok(read) => read,
        Err(_) => Err((
            StatusCode::REQUEST_TIMEOUT,
            [(axum::http::header::CONNECTION, "close")],
            "Request Timeout: the request body was not received in time",
        )
            .into_response()),
    }
}

/// Reads a whole request body: at most `max` bytes (413 beyond), a read
/// failure is a 500 — rmcp's answers, word for word.
async fn collect(body: Body, max: usize) -> Result<Bytes, Response> {
    let mut body = body;
    let mut collected = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        match frame {
            Ok(frame) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                if data.len() > max.saturating_sub(collected.len()) {
                    return Err(too_large(max));
                }
                if collected.is_empty() {
                    collected = Vec::from(data);
                } else {
                    collected.extend_from_slice(&data);
                }
            }
            Err(e) => {
                let text = format!("Failed to read request body: {e}");
                return Err(plain(StatusCode::INTERNAL_SERVER_ERROR, text));
            }
        }
    }
    Ok(Bytes::from(collected))
}

/// A response with `status` and `body` and no headers, as rmcp builds them.
pub(crate) fn plain(status: StatusCode, body: impl Into<Body>) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_count_their_transitions() {
        let phase = Phase::default();
        assert_eq!(phase.load() & 3, HEAD);
        phase.busy();
        let busy = phase.load();
        assert_eq!(busy & 3, BUSY);
        phase.idle();
        phase.set(HEAD);
        phase.busy();
        assert_eq!(phase.load() & 3, BUSY);
        assert_ne!(phase.load(), busy, "a new busy phase is a new value");
    }
}
