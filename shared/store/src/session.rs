//! `/ui` sessions: an opaque random id in the browser's cookie, the session in the store.
//! The id is kept hashed (as tokens are), tied to the API token it was opened with: a
//! session ends when it expires, when that token is revoked, or at logout (deleted), and
//! its id says nothing of the token.

use crate::sql::{epoch, now, trusted};
use crate::tenant::{TOKEN_COLUMNS, token_check, token_hash};
use crate::{Store, StoreError, TokenCheck};

impl Store {
    /// Opens a session for a live `token` for `ttl_secs`; its id (shown once: only its hash
    /// is kept). None: the token is not live. Expired sessions are swept on the way.
    pub async fn open_session(
        &self,
        token: &str,
        ttl_secs: i64,
    ) -> Result<Option<String>, StoreError> {
        if !matches!(self.check_token(token).await?, TokenCheck::Valid { .. }) {
            return Ok(None);
        }
        sqlx::query("DELETE FROM ui_sessions WHERE expires_at <= $1")
            .bind(epoch())
            .execute(&self.pool)
            .await?;
        let id = format!(
            "pvs_{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        sqlx::query(
            "INSERT INTO ui_sessions (id_sha256, token_sha256, created_at, expires_at) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(token_hash(&id))
        .bind(token_hash(token))
        .bind(now())
        .bind(epoch() + ttl_secs)
        .execute(&self.pool)
        .await?;
        Ok(Some(id))
    }

    /// The session `id`'s tenant and token id, when the session is open, unexpired and its
    /// token live ([`TokenCheck::Unknown`] otherwise; `Revoked` when its token was).
    pub async fn check_session(&self, id: &str) -> Result<TokenCheck, StoreError> {
        let row = sqlx::query(trusted(format!(
            "SELECT {TOKEN_COLUMNS} FROM ui_sessions s \
             JOIN api_tokens k ON k.token_sha256 = s.token_sha256 \
             JOIN tenants t ON t.id = k.tenant_id WHERE s.id_sha256 = $1 AND s.expires_at > $2"
        )))
        .bind(token_hash(id))
        .bind(epoch())
        .fetch_optional(&self.pool)
        .await?;
        token_check(row)
    }

    /// Ends the session `id` (logout); ending one that is not open does nothing.
    pub async fn close_session(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM ui_sessions WHERE id_sha256 = $1")
            .bind(token_hash(id))
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
