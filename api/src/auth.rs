//! Bearer-token authentication: the extractor that turns a request into its tenant, and
//! spends one request of the token's rate.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use proven_store::{Tenant, TokenCheck};

use crate::ApiState;
use crate::error::ApiError;
use crate::limits::check_rate;

pub struct AuthTenant(pub Tenant);

impl FromRequestParts<Arc<ApiState>> for AuthTenant {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<ApiState>,
    ) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
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
}
