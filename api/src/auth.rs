//! Bearer-token authentication: the extractor that turns a request into its tenant.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use proven_store::Tenant;

use crate::ApiState;
use crate::error::ApiError;

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
        let tenant = state
            .store
            .tenant_for_token(token)
            .await?
            .ok_or(ApiError::BadToken)?;
        Ok(AuthTenant(tenant))
    }
}
