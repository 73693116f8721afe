//! Bearer-token authentication: the extractor that turns a request into its tenant, and
//! spends one request of the token's rate.
//!
//! The token is checked from the headers alone, before a byte of the body is read:
//! [`crate::limits::read_body`] authenticates every authenticated route first and leaves
//! the tenant in the request's extensions, where the extractor finds it (so the rate is
//! spent once per request).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use governor::clock::Clock;
use proven_store::{Tenant, TokenCheck};

use crate::ApiState;
use crate::error::ApiError;

#[derive(Debug, Clone)]
pub struct AuthTenant(pub Tenant);

/// The tenant of the request's bearer token, its rate spent; refused by name otherwise.
pub async fn authenticate(state: &ApiState, headers: &HeaderMap) -> Result<AuthTenant, ApiError> {
    let header = headers
        .get(axum::http::header::AUTHORIZATION)
        .ok_or(ApiError::MissingToken)?;
    let value = header.to_str().map_err(|_| ApiError::BadToken)?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or(ApiError::MissingToken)?;
    match state.store.check_token(token).await? {
        TokenCheck::Valid { tenant, token_id } => {
            // Limited per token once it is known to be live, so the limiter only ever
            // holds the tokens issued (an invalid one costs one indexed lookup).
            check_rate(state, &token_id)?;
            Ok(AuthTenant(tenant))
        }
        TokenCheck::Revoked => Err(ApiError::RevokedToken),
        TokenCheck::Unknown => Err(ApiError::BadToken),
    }
}

impl FromRequestParts<Arc<ApiState>> for AuthTenant {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<ApiState>,
    ) -> Result<Self, Self::Rejection> {
        if let Some(done) = parts.extensions.get::<AuthTenant>() {
            return Ok(done.clone());
        }
        authenticate(state, &parts.headers).await
    }
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
