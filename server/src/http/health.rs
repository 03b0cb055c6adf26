//! `GET /healthz` and `GET /readyz` on the `--http` listener, for load
//! balancers and orchestrators: answered without `Host`, `Origin` or token
//! checks, and revealing nothing but the status. `/healthz` is 200 `ok`
//! while the process serves. `/readyz` is 200 `ready` once the server
//! listens — the catalogs are built and every configured upstream has had
//! its first connection attempt by then — and 503 `draining` from the
//! moment a drain starts.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use tokio_util::sync::CancellationToken;

/// The liveness path.
pub const HEALTHZ: &str = "/healthz";
/// The readiness path.
pub const READYZ: &str = "/readyz";

/// The two routes; `/readyz` turns 503 once `drain` is cancelled.
pub fn routes(drain: CancellationToken) -> Router {
    Router::new()
        .route(HEALTHZ, get(|| async { "ok" }))
        .route(READYZ, get(ready).with_state(drain))
}

async fn ready(State(drain): State<CancellationToken>) -> (StatusCode, &'static str) {
    if drain.is_cancelled() {
        (StatusCode::SERVICE_UNAVAILABLE, "draining")
    } else {
        (StatusCode::OK, "ready")
    }
}
