//! The signals that drain the server: SIGTERM (what orchestrators send)
//! and SIGINT (Ctrl-C). The first one cancels the drain token; the HTTP
//! listener then turns `/readyz` to 503, stops accepting, lets in-flight
//! requests finish (bounded by the execution time limit) and returns, and
//! the binary ends its upstream children and exits 0. A second signal
//! changes nothing: the drain is already bounded.

use tokio_util::sync::CancellationToken;

/// Cancels `token` on the first SIGTERM or SIGINT.
pub fn cancel_on_signal(token: CancellationToken) {
    tokio::spawn(async move {
        if signalled().await {
            tracing::info!("signal received: draining");
            token.cancel();
        }
    });
}

/// Waits for SIGTERM or SIGINT; `false` if no handler could be installed.
#[cfg(unix)]
async fn signalled() -> bool {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::warn!("cannot install the SIGTERM/SIGINT handlers: no graceful drain");
        return false;
    };
    tokio::select! {
        _ = term.recv() => true,
        _ = int.recv() => true,
    }
}

/// Waits for Ctrl-C; `false` if no handler could be installed.
#[cfg(not(unix))]
async fn signalled() -> bool {
    tokio::signal::ctrl_c().await.is_ok()
}
