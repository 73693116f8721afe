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
use http_body_util::BodyExt;

use crate::ApiState;
use crate::error::ApiError;

/// The API's limits: the settings `PROVEN_HTTP_*`, `PROVEN_MAX_QUEUED_REVIEWS`,
/// `PROVEN_MAX_QUEUED_QUESTIONS`, `PROVEN_MAX_BATCH_REVIEWS` and
/// `PROVEN_MAX_DEADLINE_SECONDS`, whose defaults live with the settings table
/// (proven-config) only.
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
    /// Connections one client address may hold at once.
    pub max_connections_per_address: usize,
    /// A tenant's unanswered (queued or running) questions at most.
    pub max_queued_questions: i64,
    /// Webhook body bytes held at once, across connections, before their signatures hold.
    pub unverified_body_bytes: usize,
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

/// The most body a request without a bearer token may carry (the `/ui` login form, a
/// logout): nothing the API serves to an anonymous client needs more, so an anonymous
/// client can never make the server hold more than this per connection.
pub const OPEN_BODY_BYTES: usize = 16 * 1024;

/// How a route's body is read, decided from the request line alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyPolicy {
    /// The GitHub webhook reads its own body, checking the signature as it streams in
    /// ([`read_unverified`]).
    Streamed,
    /// An authenticated route: the bearer token is checked before the body is read.
    Authenticated,
    /// Anything else: no token, so at most [`OPEN_BODY_BYTES`].
    Open,
}

fn body_policy(path: &str) -> BodyPolicy {
    match path {
        "/v1/github/webhook" => BodyPolicy::Streamed,
        "/v1/openapi.json" => BodyPolicy::Open,
        p if p.starts_with("/v1/") => BodyPolicy::Authenticated,
        _ => BodyPolicy::Open,
    }
}

/// Reads the whole request body before any handler runs, once the request may send one:
/// an authenticated route's token is checked first (401 without a byte of the body read),
/// an anonymous request may send at most [`OPEN_BODY_BYTES`], and the webhook streams its
/// own. Then at most `max_body_bytes` (413 past it; at once when `Content-Length` says so)
/// within `body_timeout` in total (408).
///
/// Written here rather than taken from tower-http: its `RequestBodyTimeoutLayer` restarts
/// its timer at every frame, so a client trickling one byte at a time is never cut off; a
/// deadline on the whole body needs the read and the deadline in one place, and then the
/// cap costs one more line. Authenticated bodies are small JSON documents.
pub async fn read_body(
    State(state): State<Arc<ApiState>>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let (limit, too_large) = match body_policy(parts.uri.path()) {
        BodyPolicy::Streamed => return next.run(Request::from_parts(parts, body)).await,
        BodyPolicy::Authenticated => {
            match crate::auth::authenticate(&state, &parts.headers).await {
                Ok(tenant) => {
                    parts.extensions.insert(tenant);
                    let limit = state.limits.max_body_bytes;
                    (limit, ApiError::BodyTooLarge { limit })
                }
                Err(e) => return e.into_response(),
            }
        }
        BodyPolicy::Open => {
            let limit = OPEN_BODY_BYTES.min(state.limits.max_body_bytes);
            (limit, ApiError::OpenBodyTooLarge { limit })
        }
    };
    if declared_length(&parts.headers).is_some_and(|n| n > limit as u64) {
        return too_large.into_response();
    }
    let read = tokio::time::timeout(
        state.limits.body_timeout,
        http_body_util::Limited::new(body, limit).collect(),
    )
    .await;
    let bytes = match read {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return too_large.into_response();
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

fn declared_length(headers: &axum::http::HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
}

/// The shared room for bodies whose sender is not known yet: permits are bytes
/// (`PROVEN_HTTP_UNVERIFIED_BODY_BYTES` in all, and at least one body's cap).
pub(crate) fn unverified_budget(limits: &ApiLimits) -> Arc<tokio::sync::Semaphore> {
    let bytes = limits
        .unverified_body_bytes
        .max(limits.max_body_bytes)
        .min(tokio::sync::Semaphore::MAX_PERMITS);
    Arc::new(tokio::sync::Semaphore::new(bytes))
}

/// Reads a body whose sender is proved only by the body itself (the webhook's signature).
/// Before a byte is read, the body takes its room in the server-wide budget for unverified
/// bodies (its `Content-Length`, or the cap when it declares none): however many anonymous
/// senders stream at once, the server holds at most that budget of their bytes, and the
/// rest wait in their sockets, first come first served (the semaphore is fair, and a body
/// takes its room whole, so no two half-served bodies can hold each other up). Each chunk
/// is handed to `check` as it arrives. At most `max_body_bytes` (413, at once when
/// `Content-Length` says so), all within `body_timeout` (408, the wait for room included).
/// The room is given back when the returned permit is dropped.
pub(crate) async fn read_unverified(
    state: &ApiState,
    headers: &axum::http::HeaderMap,
    body: Body,
    mut check: impl FnMut(&[u8]),
) -> Result<(Vec<u8>, tokio::sync::OwnedSemaphorePermit), ApiError> {
    let limit = state.limits.max_body_bytes;
    let declared = declared_length(headers);
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::BodyTooLarge { limit });
    }
    let room = declared.map_or(limit, |n| n as usize);
    let budget = state.unverified.clone();
    let read = async move {
        let permit = budget
            .acquire_many_owned(u32::try_from(room).unwrap_or(u32::MAX))
            .await
            .map_err(|_| ApiError::Unavailable("the unverified body budget was closed".into()))?;
        let mut buf = Vec::with_capacity(room);
        let mut body = body;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                ApiError::InvalidRequest(format!("the request body could not be read: {e}"))
            })?;
            let Ok(chunk) = frame.into_data() else {
                continue;
            };
            if buf.len() + chunk.len() > room {
                return Err(ApiError::BodyTooLarge { limit });
            }
            check(&chunk);
            buf.extend_from_slice(&chunk);
        }
        Ok((buf, permit))
    };
    match tokio::time::timeout(state.limits.body_timeout, read).await {
        Ok(r) => r,
        Err(_) => Err(ApiError::BodyTimeout {
            secs: state.limits.body_timeout.as_secs(),
        }),
    }
}
