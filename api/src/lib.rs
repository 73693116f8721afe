//! Proven's HTTP API: the small front of the service. It authenticates tenants, records
//! reviews and batches in the store (where admission picks them up), and reads results and
//! traces back. It never runs a step and never talks to Docker.
//!
//! Invariants:
//! - Every `/v1` route but the OpenAPI document needs a valid bearer token; a tenant only
//!   ever sees its own reviews and batches (anything else is 404, never 403, so ids leak
//!   nothing).
//! - A review's `repository` is checked by the operator's policy before anything is stored:
//!   a refusal is 422 with the field and the setting that decides it.
//! - Errors map to HTTP in one exhaustive match ([`error::ApiError`]) with stable codes;
//!   internal causes are logged, not returned.
//! - `openapi.json` documents exactly the routes of [`ROUTES`] (a test holds them together).

mod auth;
pub mod dto;
pub mod error;
mod routes;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use metrics_exporter_prometheus::PrometheusHandle;
use proven_store::Store;

/// The checked-in OpenAPI document, served at `/v1/openapi.json`.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// Every route, as `(method, path)` in OpenAPI's path syntax.
pub const ROUTES: &[(&str, &str)] = &[
    ("post", "/v1/reviews"),
    ("get", "/v1/reviews"),
    ("get", "/v1/reviews/{id}"),
    ("get", "/v1/reviews/{id}/trace"),
    ("post", "/v1/batches"),
    ("get", "/v1/batches/{id}"),
    ("get", "/v1/openapi.json"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
];

#[derive(Clone)]
pub struct ApiState {
    pub store: Store,
    /// What a review's `repository` may name: checked at submission (422 naming the field
    /// and the setting), and again at intake.
    pub repositories: Arc<proven_source::RepoPolicy>,
    /// Checked by /readyz.
    pub redis_url: Option<String>,
    pub metrics: Option<PrometheusHandle>,
}

pub fn router(state: ApiState) -> Router {
    Router::new()
        .route(
            "/v1/reviews",
            post(routes::create_review).get(routes::list_reviews),
        )
        .route("/v1/reviews/{id}", get(routes::get_review))
        .route("/v1/reviews/{id}/trace", get(routes::get_trace))
        .route("/v1/batches", post(routes::create_batch))
        .route("/v1/batches/{id}", get(routes::get_batch))
        .route("/v1/openapi.json", get(routes::openapi))
        .route("/healthz", get(routes::healthz))
        .route("/readyz", get(routes::readyz))
        .route("/metrics", get(routes::metrics))
        .layer(axum::middleware::from_fn(routes::http_span))
        .with_state(Arc::new(state))
}

/// Serves until `shutdown` resolves, finishing requests in flight.
pub async fn serve(
    state: ApiState,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}
