//! API errors: one exhaustive mapping to HTTP with stable, machine-readable codes.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::dto::ErrorBody;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("a bearer token is required")]
    MissingToken,
    #[error("the bearer token is not valid")]
    BadToken,
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    InvalidRequest(String),
    /// A `repository` the operator's policy refuses (or whose host does not resolve).
    #[error("{0}")]
    Repository(proven_source::CheckError),
    /// The store or queue is down; the cause is logged, not returned.
    #[error("the service is unavailable; retry later")]
    Unavailable(String),
}

impl ApiError {
    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::MissingToken => (StatusCode::UNAUTHORIZED, "missing_token"),
            ApiError::BadToken => (StatusCode::UNAUTHORIZED, "invalid_token"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::InvalidRequest(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request"),
            ApiError::Repository(_) => (StatusCode::UNPROCESSABLE_ENTITY, "repository_refused"),
            ApiError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        }
    }
}

impl From<proven_store::StoreError> for ApiError {
    fn from(e: proven_store::StoreError) -> Self {
        match e {
            proven_store::StoreError::NotFound(what) => ApiError::NotFound(what),
            proven_store::StoreError::InvalidInput(m) => ApiError::InvalidRequest(m),
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
        let mut body = ErrorBody::new(code, self.to_string());
        if let ApiError::Repository(refusal) = &self {
            body.error.field = Some(proven_source::FIELD.to_string());
            body.error.setting = refusal.setting().map(str::to_string);
        }
        let mut response = (status, Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                "www-authenticate",
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}
