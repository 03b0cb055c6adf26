//! The accept loop of the `--http` listener: a cap on open connections,
//! the timeouts of [`super::connection`], and a graceful drain.
//!
//! Connections are served by hyper's HTTP/1.1 server, each on its own task,
//! with its socket in a [`TimedIo`]. At most
//! [`ConnectionLimits::max_connections`] are open at once: the loop stops
//! accepting while the cap is reached, so further clients wait in the
//! kernel's backlog. When the drain token is cancelled (SIGTERM or SIGINT,
//! see [`crate::drain`]), `/readyz` answers 503 at once; after the drain
//! delay the loop stops accepting and closes its socket, every connection
//! finishes the request it is serving and closes, and [`serve`] returns
//! once all are closed or the grace period is over.

use super::connection::{ConnectionLimits, TimedIo};
use axum::body::Body;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
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

/// Serves `router` on `listener` until the drain completes.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    drain: DrainOptions,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let tasks = TaskTracker::new();
    let closing = CancellationToken::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    // The head deadline is TimedIo's (hyper's own would also cut idle
    // keep-alive connections at the head timeout).
    http.timer(TokioTimer::new())
        .header_read_timeout(None)
        .keep_alive(true);
    // Accepting goes on through the drain delay: until then only /readyz
    // tells load balancers to go elsewhere.
    let stop = async {
        drain.token.cancelled().await;
        tokio::time::sleep(drain.delay).await;
    };
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            biased;
            _ = &mut stop => break,
            accepted = accept(&listener, &slots) => accepted,
        };
        let Some((stream, slot)) = accepted else {
            continue;
        };
        let (io, phase) = TimedIo::new(stream, limits);
        let router = router.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let mut router = router.clone();
            let phase = phase.clone();
            phase.busy();
            async move {
                let response = router.call(request.map(Body::new)).await;
                phase.idle();
                Ok::<_, Infallible>(response.unwrap_or_else(|never| match never {}))
            }
        });
        let connection = http.serve_connection(TokioIo::new(io), service);
        let closing = closing.clone();
        tasks.spawn(async move {
            let _slot = slot;
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                _ = closing.cancelled() => {}
            }
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        });
    }
    drop(listener);
    closing.cancel();
    tasks.close();
    if tokio::time::timeout(drain.grace, tasks.wait())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the drain's grace period; closing");
    }
}

/// The next connection, once a slot is free; `None` when accepting failed
/// (logged; the loop goes on after a pause, as when out of descriptors).
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> Option<(tokio::net::TcpStream, tokio::sync::OwnedSemaphorePermit)> {
    let slot = slots.clone().acquire_owned().await.ok()?;
    match listener.accept().await {
        Ok((stream, _)) => {
            let _ = stream.set_nodelay(true);
            Some((stream, slot))
        }
        Err(e) => {
            tracing::warn!("accept failed: {e}");
            tokio::time::sleep(Duration::from_millis(50)).await;
            None
        }
    }
}
