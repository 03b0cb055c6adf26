//! One accepted HTTP connection: its timeouts, and the cap on how many are
//! open at once.
//!
//! A connection is in one of three phases. It starts *reading a head*: the
//! request line and headers must be complete within
//! [`ConnectionLimits::header_read`]. Once hyper hands the request to the
//! router it is *busy*: the body must arrive within
//! [`ConnectionLimits::body_read`] (enforced where the body is read, see
//! [`read_body`]) and the execution is bounded by its own limits; it stays
//! busy until the last byte of the response body is handed to hyper
//! ([`UntilSent`]), so that a response that streams (an event stream of
//! progress notifications, say) is never cut by the idle timeout however
//! long it runs. After the response it is *idle*: the next request's first
//! byte must come within [`ConnectionLimits::keep_alive`], and the first
//! byte starts a new head deadline. A connection past its deadline is
//! closed; so is one whose client stops reading for longer than the idle
//! timeout, in any phase: a write that makes no progress for that long
//! (the time between two successful writes, as nginx's `send_timeout`,
//! not the length of the response). [`TimedIo`] enforces the deadlines on
//! the socket itself; [`Phase`] is shared with the connection's service,
//! which marks the request's start and its response's end.

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
    /// Enters `phase`; returns the new value.
    fn set(&self, phase: u64) -> u64 {
        let next = |v: u64| ((v >> 2) + 1) << 2 | phase;
        match self
            .value
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(next(v)))
        {
            Ok(v) | Err(v) => next(v),
        }
    }

    /// Remembers who to wake when the busy phase ends.
    fn wake_when_idle(&self, waker: &Waker) {
        let mut slot = self.waker.lock().unwrap_or_else(|p| p.into_inner());
        if !slot.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *slot = Some(waker.clone());
        }
    }

    /// A request's head was read: no read deadline until its response
    /// has been sent. Returns the busy phase, for [`Phase::idle`].
    pub fn busy(&self) -> u64 {
        self.set(BUSY)
    }

    /// The response of the busy phase `busy` is out: the idle deadline
    /// runs. Nothing happens if the connection has left that phase.
    pub fn idle(&self, busy: u64) {
        self.idle_since
            .store(IDLE_ORDER.fetch_add(1, Ordering::AcqRel), Ordering::Release);
        let idle = (((busy >> 2) + 1) << 2) | IDLE;
        if self
            .value
            .compare_exchange(busy, idle, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
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

    /// Whether the connection is reading a head: its first request's (the
    /// first byte may not have come yet), or the next one's once its first
    /// byte has come.
    pub fn reading_head(&self) -> bool {
        self.load() & 3 == HEAD
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

/// A socket with the head and idle deadlines of its connection, and the
/// bound on a write that makes no progress.
pub struct TimedIo<T> {
    io: T,
    phase: Arc<Phase>,
    limits: ConnectionLimits,
    sleep: Pin<Box<Sleep>>,
    /// The phase value the sleep was armed for.
    armed: Option<u64>,
    /// Runs from a write (or flush) that could not proceed until the next
    /// one that does.
    stall: Pin<Box<Sleep>>,
    /// Whether `stall` is armed: the last write or flush was pending.
    stalled: bool,
}

impl<T> TimedIo<T> {
    /// Wraps a just-accepted socket whose service marks `phase`.
    pub fn with_phase(io: T, limits: ConnectionLimits, phase: Arc<Phase>) -> TimedIo<T> {
        TimedIo {
            io,
            phase,
            limits,
            sleep: Box::pin(tokio::time::sleep(limits.header_read)),
            armed: None,
            stall: Box::pin(tokio::time::sleep(limits.keep_alive)),
            stalled: false,
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

    /// Whether a write has been pending for longer than the idle timeout
    /// (the client reads nothing); arms the bound on the first pending
    /// write after one that proceeded.
    fn write_stalled(&mut self, cx: &mut Context<'_>) -> bool {
        if !self.stalled {
            self.stalled = true;
            let at = Instant::now() + self.limits.keep_alive;
            self.stall.as_mut().reset(at);
        }
        self.stall.as_mut().poll(cx).is_ready()
    }

    /// After a write or flush: whether it must fail with the connection's
    /// deadline (the phase's, or the stall's). Both are looked at, so that
    /// both wake the task.
    fn write_expired<R>(&mut self, cx: &mut Context<'_>, poll: &Poll<R>) -> bool {
        if poll.is_ready() {
            self.stalled = false;
            return false;
        }
        let phase = self.expired(cx);
        let stall = self.write_stalled(cx);
        phase || stall
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
        let poll = Pin::new(&mut self.io).poll_write(cx, buf);
        if self.write_expired(cx, &poll) {
            return Poll::Ready(Err(timed_out()));
        }
        poll
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.io).poll_flush(cx);
        if self.write_expired(cx, &poll) {
            return Poll::Ready(Err(timed_out()));
        }
        poll
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// A response body that keeps its connection busy until it has been
/// sent: the connection turns idle (see [`Phase::idle`]) when the body
/// ends, fails, or is dropped (hyper drops a body it does not send, as a
/// `HEAD` response's, and one whose connection failed).
pub struct UntilSent {
    body: Body,
    phase: Arc<Phase>,
    /// The busy phase of the request; `None` once the connection was
    /// marked idle.
    busy: Option<u64>,
}

impl UntilSent {
    /// Wraps the body of the response to the request of phase `busy`.
    pub fn new(body: Body, phase: Arc<Phase>, busy: u64) -> UntilSent {
        UntilSent {
            body,
            phase,
            busy: Some(busy),
        }
    }

    fn sent(&mut self) {
        if let Some(busy) = self.busy.take() {
            self.phase.idle(busy);
        }
    }
}

impl HttpBody for UntilSent {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, axum::Error>>> {
        let poll = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(poll, Poll::Ready(None | Some(Err(_)))) {
            self.sent();
        }
        poll
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for UntilSent {
    fn drop(&mut self) {
        self.sent();
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
        let busy = phase.busy();
        assert_eq!(busy, phase.load());
        assert_eq!(busy & 3, BUSY);
        phase.idle(busy);
        assert_eq!(phase.load() & 3, IDLE);
        phase.set(HEAD);
        let next = phase.busy();
        assert_eq!(phase.load() & 3, BUSY);
        assert_ne!(next, busy, "a new busy phase is a new value");
        // A late end of the earlier response leaves the new one busy.
        phase.idle(busy);
        assert_eq!(phase.load(), next);
    }
}
