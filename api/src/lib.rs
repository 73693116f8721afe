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
//! - No client can hold the API: headers must arrive within a timeout, bodies are capped
//!   and must arrive within a deadline, connections are bounded (in all and per client
//!   address), each token has a request rate, and each tenant a cap on unfinished reviews
//!   and on unanswered questions ([`limits`], [`server`]).
//! - No body is read before its sender is known: an authenticated route checks the bearer
//!   token from the headers first; the webhook checks its signature as the body streams,
//!   within a server-wide budget of unverified bytes; anything else may send a few KiB.

mod auth;
pub mod dto;
pub mod error;
pub mod github;
pub mod limits;
mod routes;
pub mod server;
mod ui;

pub use limits::ApiLimits;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use metrics_exporter_prometheus::PrometheusHandle;
use proven_store::{Store, StoreError};

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
    ("post", "/v1/questions"),
    ("get", "/v1/questions/{id}"),
    ("post", "/v1/github/webhook"),
    ("get", "/v1/openapi.json"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
];

/// A repository a change set newly affects, with the change to review again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RereviewTarget {
    pub repository: String,
    pub base: String,
    pub head: String,
    /// The earlier review of that change.
    pub previous: String,
}

/// What an advisory change set newly affects, for one tenant: given by the process that
/// serves the API (the review crate evaluates the versions; the API never does).
pub trait Rereviews: Send + Sync {
    /// `change_set`: one change set's id; `since`: every change set recorded at or after
    /// this instant (RFC 3339). Exactly one is given.
    fn affected<'a>(
        &'a self,
        tenant: &'a str,
        selector: RereviewSelector<'a>,
    ) -> proven_pipeline::BoxFuture<'a, Result<Vec<RereviewTarget>, StoreError>>;
}

/// Which advisory changes a batch re-reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RereviewSelector<'a> {
    ChangeSet(&'a str),
    ChangedSince(&'a str),
}

#[derive(Clone)]
pub struct ApiState {
    pub store: Store,
    /// What a review's `repository` may name: checked at submission (422 naming the field
    /// and the setting), and again at intake.
    pub repositories: Arc<proven_source::RepoPolicy>,
    /// Checked by /readyz.
    pub redis_url: Option<String>,
    pub metrics: Option<PrometheusHandle>,
    pub limits: ApiLimits,
    /// The change-set selector of `POST /v1/batches` (None: refused by name).
    pub rereviews: Option<Arc<dyn Rereviews>>,
    /// Proven as a GitHub App (None: the webhook answers 404).
    pub github: Option<Arc<github::GitHubHook>>,
    rate: Arc<limits::TokenRateLimiter>,
    /// Room for webhook bodies whose signatures are not checked yet (permits are bytes).
    unverified: Arc<tokio::sync::Semaphore>,
}

impl ApiState {
    pub fn new(
        store: Store,
        repositories: Arc<proven_source::RepoPolicy>,
        redis_url: Option<String>,
        metrics: Option<PrometheusHandle>,
        limits: ApiLimits,
    ) -> ApiState {
        let rate = limits::token_rate_limiter(&limits);
        let unverified = limits::unverified_budget(&limits);
        ApiState {
            store,
            repositories,
            redis_url,
            metrics,
            limits,
            rereviews: None,
            github: None,
            rate,
            unverified,
        }
    }

    pub fn with_github(mut self, hook: github::GitHubHook) -> ApiState {
        self.github = Some(Arc::new(hook));
        self
    }

    pub fn with_rereviews(mut self, rereviews: Arc<dyn Rereviews>) -> ApiState {
        self.rereviews = Some(rereviews);
        self
    }
}

pub fn router(state: ApiState) -> Router {
    let state = Arc::new(state);
    Router::new()
        .route(
            "/v1/reviews",
            post(routes::create_review).get(routes::list_reviews),
        )
        .route("/v1/reviews/{id}", get(routes::get_review))
        .route("/v1/reviews/{id}/trace", get(routes::get_trace))
        .route("/v1/batches", post(routes::create_batch))
        .route("/v1/batches/{id}", get(routes::get_batch))
        .route("/v1/questions", post(routes::create_question))
        .route("/v1/questions/{id}", get(routes::get_question))
        .route("/v1/github/webhook", post(github::webhook))
        .route("/v1/openapi.json", get(routes::openapi))
        // Pages for a person (not part of the API's document).
        .route("/ui", get(ui::reviews))
        .route("/ui/login", get(ui::login_page).post(ui::login))
        .route("/ui/logout", post(ui::logout))
        .route("/ui/reviews/{id}", get(ui::review))
        .route("/ui/batches", get(ui::batches))
        .route("/healthz", get(routes::healthz))
        .route("/readyz", get(routes::readyz))
        .route("/metrics", get(routes::metrics))
        // Bodies are capped and read within a deadline by `limits::read_body`, before any
        // extractor (axum's own cap would answer through the JSON extractor's rejection),
        // and only once the request may send one: the token first, the webhook's signature
        // as its body streams.
        .layer(axum::extract::DefaultBodyLimit::disable())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            limits::read_body,
        ))
        .layer(axum::middleware::from_fn(routes::http_span))
        .with_state(state)
}

/// Serves until `shutdown` resolves, finishing requests in flight (for at most 30 s).
pub async fn serve(
    state: ApiState,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = server::ConnectionLimits {
        header_timeout: state.limits.header_timeout,
        max_connections: state.limits.max_connections,
        max_per_address: state.limits.max_connections_per_address,
    };
    server::serve(
        router(state),
        listener,
        limits,
        shutdown,
        std::time::Duration::from_secs(30),
    )
    .await
}
