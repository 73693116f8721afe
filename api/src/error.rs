//! API errors: one exhaustive mapping to HTTP with stable, machine-readable codes.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::dto::ErrorBody;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("a bearer token is required")]
    MissingToken,
    #[error("the bearer token is not valid")]
    BadToken,
    #[error("the bearer token was revoked")]
    RevokedToken,
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    InvalidRequest(String),
    #[error(
        "a batch holds at most {limit} reviews (PROVEN_MAX_BATCH_REVIEWS); this one holds {count}: split it"
    )]
    BatchTooLarge { count: usize, limit: usize },
    #[error(
        "the tenant has {unfinished} unfinished reviews and {requested} more would pass its cap of {limit} \
         (PROVEN_MAX_QUEUED_REVIEWS); retry when some have finished"
    )]
    QueueFull {
        unfinished: i64,
        requested: i64,
        limit: i64,
    },
    #[error(
        "the tenant has {unfinished} unanswered questions and one more would pass its cap of {limit} \
         (PROVEN_MAX_QUEUED_QUESTIONS); retry when some have been answered"
    )]
    QuestionsFull { unfinished: i64, limit: i64 },
    #[error(
        "too many requests with this token: {per_second} per second, bursts of {burst} \
         (PROVEN_HTTP_RATE_PER_SECOND, PROVEN_HTTP_RATE_BURST); retry after {retry_after_secs} s"
    )]
    RateLimited {
        retry_after_secs: u64,
        per_second: u32,
        burst: u32,
    },
    #[error("the request body is larger than {limit} bytes (PROVEN_HTTP_MAX_BODY_BYTES)")]
    BodyTooLarge { limit: usize },
    #[error(
        "a request without a bearer token may carry at most {limit} bytes of body; this one is larger"
    )]
    OpenBodyTooLarge { limit: usize },
    #[error("the request body did not arrive within {secs} s (PROVEN_HTTP_BODY_TIMEOUT_SECONDS)")]
    BodyTimeout { secs: u64 },
    /// A `repository` the operator's policy refuses (or whose host does not resolve).
    #[error("{0}")]
    Repository(proven_source::CheckError),
    /// A webhook delivery whose signature does not hold (`unsigned` or `bad_signature`).
    #[error("{1}")]
    Signature(&'static str, String),
    /// A webhook delivery that cannot be read.
    #[error("{0}")]
    InvalidPayload(String),
    /// The store or queue is down; the cause is logged, not returned.
    #[error("the service is unavailable; retry later")]
    Unavailable(String),
}

impl ApiError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::MissingToken => (StatusCode::UNAUTHORIZED, "missing_token"),
            ApiError::BadToken => (StatusCode::UNAUTHORIZED, "invalid_token"),
            ApiError::RevokedToken => (StatusCode::UNAUTHORIZED, "revoked_token"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::InvalidRequest(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"),
            ApiError::BatchTooLarge { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "batch_too_large"),
            ApiError::QueueFull { .. } | ApiError::QuestionsFull { .. } => {
                (StatusCode::TOO_MANY_REQUESTS, "queue_full")
            }
            ApiError::RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            ApiError::BodyTooLarge { .. } | ApiError::OpenBodyTooLarge { .. } => {
                (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large")
            }
            ApiError::BodyTimeout { .. } => (StatusCode::REQUEST_TIMEOUT, "body_timeout"),
            ApiError::Repository(_) => (StatusCode::UNPROCESSABLE_ENTITY, "repository_refused"),
            ApiError::Signature(code, _) => (StatusCode::UNAUTHORIZED, code),
            ApiError::InvalidPayload(_) => (StatusCode::BAD_REQUEST, "invalid_payload"),
            ApiError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        }
    }
}

impl From<proven_store::StoreError> for ApiError {
    fn from(e: proven_store::StoreError) -> Self {
        match e {
            proven_store::StoreError::NotFound(what) => ApiError::NotFound(what),
            proven_store::StoreError::InvalidInput(m) => ApiError::InvalidRequest(m),
            proven_store::StoreError::QueueFull {
                unfinished,
                requested,
                limit,
            } => ApiError::QueueFull {
                unfinished,
                requested,
                limit,
            },
            proven_store::StoreError::QuestionsFull { unfinished, limit } => {
                ApiError::QuestionsFull { unfinished, limit }
            }
            other => ApiError::Unavailable(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        if let ApiError::Unavailable(cause) = &self {
            tracing::error!(%cause, "request failed: service unavailable");
        }
        let retry_after = match &self {
            ApiError::RateLimited {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            _ => None,
        };
        let mut body = ErrorBody::new(code, self.to_string());
        if let ApiError::Repository(refusal) = &self {
            body.error.field = Some(proven_source::FIELD.to_string());
            body.error.setting = refusal.setting().map(str::to_string);
        }
        let mut response = (status, Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED && !matches!(self, ApiError::Signature(..)) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(secs) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
