//! The signals that drain the server: SIGTERM (what orchestrators send)
//! and SIGINT (Ctrl-C). The first one cancels the drain token; the HTTP
//! listener then turns `/readyz` to 503, stops accepting, lets in-flight
//! requests finish (bounded by the execution time limit) and returns, and
//! the binary ends its upstream children and exits 0. A second signal
//! changes nothing: the drain is already bounded.

use tokio_util::sync::CancellationToken;

/// Cancels `token` on the first SIGTERM or SIGINT. The handlers are
/// installed before this returns (in the runtime's context), not by the
/// task that waits for them: that task may first run after the server has
/// announced its address and answered requests, and a signal before then
/// would end the process by its default action instead of draining it.
pub fn cancel_on_signal(token: CancellationToken) {
    let Some(signalled) = installed() else {
        tracing::warn!("cannot install the SIGTERM/SIGINT handlers: no graceful drain");
        return;
    };
    tokio::spawn(async move {
        signalled.await;
        tracing::info!("signal received: draining");
        token.cancel();
    });
}

/// Installs the SIGTERM and SIGINT handlers; the future ends at the first
/// of those signals. `None` if a handler could not be installed.
#[cfg(unix)]
fn installed() -> Option<impl std::future::Future<Output = ()> + Send> {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return None;
    };
    Some(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

/// Waits for Ctrl-C (installed at the first poll, the closest this
/// platform's API offers); never ends if no handler could be installed.
#[cfg(not(unix))]
fn installed() -> Option<impl std::future::Future<Output = ()> + Send> {
    Some(async {
        if tokio::signal::ctrl_c().await.is_err() {
            tracing::warn!("cannot install the Ctrl-C handler: no graceful drain");
            std::future::pending::<()>().await;
        }
    })
}
