//! What one connection, request, token and tenant may ask of the API: body size and read
//! time, the per-token request rate, queued reviews, batch size and deadlines.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::Clock;
use http_body_util::BodyExt;

use crate::ApiState;
use crate::error::ApiError;

/// The API's limits: the settings `PROVEN_HTTP_*`, `PROVEN_MAX_QUEUED_REVIEWS`,
/// `PROVEN_MAX_BATCH_REVIEWS` and `PROVEN_MAX_DEADLINE_SECONDS`, whose defaults live with
/// the settings table (proven-config) only.
#[derive(Debug, Clone)]
pub struct ApiLimits {
    /// A tenant's unfinished (queued or running) reviews at most.
    pub max_queued_reviews: i64,
    /// Reviews one batch request may hold.
    pub max_batch_reviews: usize,
    /// The largest `deadline_secs` a request may ask for.
    pub max_deadline_secs: u64,
    pub max_body_bytes: usize,
    /// Time to receive a whole request body.
    pub body_timeout: Duration,
    /// Time to receive a request's headers (a new or an idle kept-alive connection).
    pub header_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
    pub rate_per_second: NonZeroU32,
    pub rate_burst: NonZeroU32,
}

/// One GCRA rate limiter per API token (keyed by token id, so only live tokens ever get
/// an entry: the key set is bounded by the tokens issued).
pub type TokenRateLimiter = governor::DefaultKeyedRateLimiter<String>;

pub fn token_rate_limiter(limits: &ApiLimits) -> Arc<TokenRateLimiter> {
    let quota = governor::Quota::per_second(limits.rate_per_second).allow_burst(limits.rate_burst);
    Arc::new(governor::RateLimiter::keyed(quota))
}

/// Spends one request of `token_id`'s rate, or says how long to wait (whole seconds,
/// rounded up, as `Retry-After` carries them).
pub fn check_rate(state: &ApiState, token_id: &str) -> Result<(), ApiError> {
    match state.rate.check_key(&token_id.to_string()) {
        Ok(()) => Ok(()),
        Err(not_until) => {
            let wait = not_until.wait_time_from(state.rate.clock().now());
            let retry_after_secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            Err(ApiError::RateLimited {
                retry_after_secs: retry_after_secs.max(1),
                per_second: state.limits.rate_per_second.get(),
                burst: state.limits.rate_burst.get(),
            })
        }
    }
}

/// Reads the whole request body before any handler runs: at most `max_body_bytes` (413
/// past it; at once when `Content-Length` says so) within `body_timeout` in total (408).
///
/// Written here rather than taken from tower-http: its `RequestBodyTimeoutLayer` restarts
/// its timer at every frame, so a client trickling one byte at a time is never cut off; a
/// deadline on the whole body needs the read and the deadline in one place, and then the
/// cap costs one more line. Bodies are small JSON documents, so buffering them is free.
pub async fn read_body(
    State(state): State<Arc<ApiState>>,
    request: Request,
    next: Next,
) -> Response {
    let limit = state.limits.max_body_bytes;
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return ApiError::BodyTooLarge { limit }.into_response();
    }
    let read = tokio::time::timeout(
        state.limits.body_timeout,
        http_body_util::Limited::new(body, limit).collect(),
    )
    .await;
    let bytes = match read {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return ApiError::BodyTooLarge { limit }.into_response();
        }
        Ok(Err(e)) => {
            return ApiError::InvalidRequest(format!("the request body could not be read: {e}"))
                .into_response();
        }
        Err(_) => {
            return ApiError::BodyTimeout {
                secs: state.limits.body_timeout.as_secs(),
            }
            .into_response();
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
