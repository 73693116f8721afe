//! Tenants, their API tokens (stored hashed), and what a tenant may see.

use sha2::{Digest, Sha256};
use sqlx::{FromRow, Row};

use crate::sql::{now, trusted};
use crate::{Dialect, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Tenant {
    pub id: String,
    pub name: String,
    pub max_running_reviews: i64,
}

/// One line of a tenant's review list.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ReviewSummary {
    pub id: String,
    pub status: String,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub repository: String,
    pub base_rev: String,
    pub head_rev: String,
    pub priority: i64,
    pub batch_id: Option<String>,
    pub created_us: i64,
}

/// A tenant's reviews of one day (UTC, by creation), summed in SQL over every review of
/// that day: how many, their findings by proof level (from each result's `proof_counts`),
/// and their model cost (the `model_call` trace lines' `cost_usd`).
#[derive(Debug, Clone, PartialEq, Default, sqlx::FromRow)]
pub struct DayTotals {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub reviews: i64,
    pub reproduced: i64,
    pub exploited: i64,
    pub advisory: i64,
    pub tool: i64,
    pub cost_usd: f64,
}

/// One API token as an operator sees it: never the token, only its id and dates.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TokenInfo {
    /// `tok_` and the first 16 hex digits of the token's hash.
    pub id: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

/// What a presented bearer token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenCheck {
    /// A live token of this tenant; `token_id` names it (rate limits are per token).
    Valid {
        tenant: Tenant,
        token_id: String,
    },
    /// A token that was revoked (or replaced by `proven tenant rotate`).
    Revoked,
    Unknown,
}

pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The id under which a token is listed and revoked: a prefix of its hash.
pub fn token_id(hash: &str) -> String {
    format!("tok_{}", &hash[..hash.len().min(16)])
}

/// A new random token (shown once), with its hash and id.
fn new_token() -> (String, String, String) {
    let token = format!(
        "pvn_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let hash = token_hash(&token);
    let id = token_id(&hash);
    (token, hash, id)
}

async fn insert_token(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    tenant_id: &str,
) -> Result<(String, TokenInfo), StoreError> {
    let (token, hash, id) = new_token();
    let created_at = now();
    sqlx::query(
        "INSERT INTO api_tokens (token_sha256, tenant_id, created_at, id) VALUES ($1, $2, $3, $4)",
    )
    .bind(hash)
    .bind(tenant_id)
    .bind(created_at.as_str())
    .bind(id.as_str())
    .execute(&mut **tx)
    .await?;
    Ok((
        token,
        TokenInfo {
            id,
            created_at,
            revoked_at: None,
        },
    ))
}

/// The columns [`token_check`] reads: the tenant `t` and its API token `k`.
pub(crate) const TOKEN_COLUMNS: &str =
    "t.id, t.name, t.max_running_reviews, k.id AS token_id, k.revoked_at";

/// What a row of [`TOKEN_COLUMNS`], or none, says of the token (or session) it was found by.
pub(crate) fn token_check(row: Option<sqlx::any::AnyRow>) -> Result<TokenCheck, StoreError> {
    let Some(r) = row else {
        return Ok(TokenCheck::Unknown);
    };
    let revoked_at: Option<String> = r.try_get("revoked_at")?;
    if revoked_at.is_some() {
        return Ok(TokenCheck::Revoked);
    }
    Ok(TokenCheck::Valid {
        tenant: Tenant::from_row(&r)?,
        token_id: r.try_get("token_id")?,
    })
}

impl Store {
    /// Creates a tenant and returns it with a new API token (shown once; only its hash is kept).
    pub async fn create_tenant(
        &self,
        name: &str,
        max_running_reviews: i64,
    ) -> Result<(Tenant, String), StoreError> {
        if name.trim().is_empty() {
            return Err(StoreError::InvalidInput("tenant name is empty".into()));
        }
        let id = uuid::Uuid::now_v7().to_string();
        let mut tx = self.write_tx().await?;
        let inserted = sqlx::query(
            "INSERT INTO tenants (id, name, created_at, max_running_reviews) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(id.as_str())
        .bind(name)
        .bind(now())
        .bind(max_running_reviews)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(StoreError::InvalidInput(format!(
                "tenant {name:?} exists already"
            )));
        }
        let (token, _) = insert_token(&mut tx, &id).await?;
        tx.commit().await?;
        Ok((
            Tenant {
                id,
                name: name.to_string(),
                max_running_reviews,
            },
            token,
        ))
    }

    /// The tenant a bearer token belongs to, if the token is known and not revoked.
    pub async fn tenant_for_token(&self, token: &str) -> Result<Option<Tenant>, StoreError> {
        Ok(match self.check_token(token).await? {
            TokenCheck::Valid { tenant, .. } => Some(tenant),
            TokenCheck::Revoked | TokenCheck::Unknown => None,
        })
    }

    /// What a presented bearer token is: a live token of a tenant, a revoked one, or unknown.
    pub async fn check_token(&self, token: &str) -> Result<TokenCheck, StoreError> {
        let row = sqlx::query(trusted(format!(
            "SELECT {TOKEN_COLUMNS} FROM api_tokens k \
             JOIN tenants t ON t.id = k.tenant_id WHERE k.token_sha256 = $1"
        )))
        .bind(token_hash(token))
        .fetch_optional(&self.pool)
        .await?;
        token_check(row)
    }

    /// Every tenant (by name) with its tokens, oldest first. Tokens are listed by id: the
    /// store holds only their hashes.
    pub async fn list_tenants(&self) -> Result<Vec<(Tenant, Vec<TokenInfo>)>, StoreError> {
        let tenants: Vec<Tenant> =
            sqlx::query_as("SELECT id, name, max_running_reviews FROM tenants ORDER BY name")
                .fetch_all(&self.pool)
                .await?;
        let tokens = sqlx::query(
            "SELECT tenant_id, id, created_at, revoked_at FROM api_tokens ORDER BY created_at, id",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut out = Vec::with_capacity(tenants.len());
        for tenant in tenants {
            let mut mine = Vec::new();
            for k in &tokens {
                let owner: String = k.try_get("tenant_id")?;
                if owner == tenant.id {
                    mine.push(TokenInfo::from_row(k)?);
                }
            }
            out.push((tenant, mine));
        }
        Ok(out)
    }

    /// Revokes a tenant's live tokens (only `token_id` when given). Returns the ids revoked.
    /// An unknown tenant, or a token id that is not one of its live tokens, is `NotFound`.
    pub async fn revoke_tokens(
        &self,
        tenant: &str,
        token_id: Option<&str>,
    ) -> Result<Vec<String>, StoreError> {
        let mut tx = self.write_tx().await?;
        let tenant_id = tenant_id_by_name(&mut tx, tenant).await?;
        let revoked = revoke(&mut tx, &tenant_id, token_id).await?;
        if let (Some(id), true) = (token_id, revoked.is_empty()) {
            return Err(StoreError::NotFound(format!(
                "live token {id} of tenant {tenant}"
            )));
        }
        tx.commit().await?;
        Ok(revoked)
    }

    /// Issues a new token for a tenant and revokes every token it had, in one transaction:
    /// the old tokens stop working the moment the new one exists (no overlap). Returns the
    /// new token (shown once), its listing, and the ids revoked.
    pub async fn rotate_token(
        &self,
        tenant: &str,
    ) -> Result<(String, TokenInfo, Vec<String>), StoreError> {
        let mut tx = self.write_tx().await?;
        let tenant_id = tenant_id_by_name(&mut tx, tenant).await?;
        let revoked = revoke(&mut tx, &tenant_id, None).await?;
        let (token, info) = insert_token(&mut tx, &tenant_id).await?;
        tx.commit().await?;
        Ok((token, info, revoked))
    }

    /// The tenant owning a review (`None` for reviews from the command line).
    pub async fn review_tenant(&self, review_id: &str) -> Result<Option<String>, StoreError> {
        let tenant: Option<Option<String>> =
            sqlx::query_scalar("SELECT tenant_id FROM reviews WHERE id = $1")
                .bind(review_id)
                .fetch_optional(&self.pool)
                .await?;
        tenant.ok_or_else(|| StoreError::NotFound(format!("review {review_id}")))
    }

    /// A tenant's reviews, newest first, optionally by status, before a cursor (`created_us`).
    pub async fn list_reviews(
        &self,
        tenant_id: &str,
        status: Option<&str>,
        batch_id: Option<&str>,
        before_us: Option<i64>,
        limit: i64,
    ) -> Result<Vec<ReviewSummary>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, status, created_at, finished_at, repository, base_rev, head_rev, priority, batch_id, created_us \
             FROM reviews WHERE tenant_id = $1 AND ($2 IS NULL OR status = $2) AND ($3 IS NULL OR batch_id = $3) \
             AND ($4 IS NULL OR created_us < $4) ORDER BY created_us DESC, id DESC LIMIT $5",
        )
        .bind(tenant_id)
        .bind(status)
        .bind(batch_id)
        .bind(before_us)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    /// A tenant's reviews created on `since` (`YYYY-MM-DD`, UTC) or later, summed by day in
    /// one aggregate over the store (every review of the period, however many), oldest
    /// day first; days without a review are absent.
    pub async fn daily_totals(
        &self,
        tenant_id: &str,
        since: &str,
    ) -> Result<Vec<DayTotals>, StoreError> {
        let (level, cost) = match self.dialect {
            Dialect::Postgres => (
                "CAST(r.result AS jsonb)->'proof_counts'->>'{}'",
                "CAST(CAST(t.event AS jsonb)->>'cost_usd' AS DOUBLE PRECISION)",
            ),
            Dialect::Sqlite => (
                "json_extract(r.result, '$.proof_counts.{}')",
                "json_extract(t.event, '$.cost_usd')",
            ),
        };
        let (int, real) = match self.dialect {
            Dialect::Postgres => ("BIGINT", "DOUBLE PRECISION"),
            Dialect::Sqlite => ("INTEGER", "REAL"),
        };
        let sum_level = |name: &str| {
            format!(
                "CAST(COALESCE(SUM(CAST({} AS {int})), 0) AS {int})",
                level.replace("{}", name)
            )
        };
        let sql = format!(
            "SELECT substr(r.created_at, 1, 10) AS day, CAST(COUNT(*) AS {int}) AS reviews, \
             {} AS reproduced, {} AS exploited, {} AS advisory, {} AS tool, \
             CAST(COALESCE(SUM((SELECT SUM({cost}) FROM trace_events t \
             WHERE t.review_id = r.id AND t.kind = 'model_call')), 0) AS {real}) AS cost_usd \
             FROM reviews r WHERE r.tenant_id = $1 AND r.created_at >= $2 \
             GROUP BY substr(r.created_at, 1, 10) ORDER BY day",
            sum_level("reproduced"),
            sum_level("exploited"),
            sum_level("advisory"),
            sum_level("tool"),
        );
        // Built from the fixed fragments above only; the values are bound.
        Ok(sqlx::query_as(crate::sql::trusted(sql))
            .bind(tenant_id)
            .bind(since)
            .fetch_all(&self.pool)
            .await?)
    }

    /// The reviews of no tenant (`proven review`'s, run in this process), newest first.
    pub async fn local_reviews(&self, limit: i64) -> Result<Vec<ReviewSummary>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, status, created_at, finished_at, repository, base_rev, head_rev, priority, batch_id, created_us \
             FROM reviews WHERE tenant_id IS NULL ORDER BY created_us DESC, id DESC LIMIT $1",
        )
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    /// One of a tenant's reviews (`None` when it is not the tenant's).
    pub async fn review_summary(
        &self,
        tenant_id: &str,
        review_id: &str,
    ) -> Result<Option<ReviewSummary>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, status, created_at, finished_at, repository, base_rev, head_rev, priority, batch_id, created_us \
             FROM reviews WHERE tenant_id = $1 AND id = $2",
        )
        .bind(tenant_id)
        .bind(review_id)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// A batch of `tenant_id`: its size and its reviews' counts by status.
    pub async fn batch(
        &self,
        id: &str,
        tenant_id: &str,
    ) -> Result<(i64, Vec<(String, i64)>), StoreError> {
        let total: i64 =
            sqlx::query_scalar("SELECT total FROM batches WHERE id = $1 AND tenant_id = $2")
                .bind(id)
                .bind(tenant_id)
                .fetch_optional(&self.pool)
                .await?
                .ok_or_else(|| StoreError::NotFound(format!("batch {id}")))?;
        let rows = sqlx::query("SELECT status, COUNT(*) AS reviews FROM reviews WHERE batch_id = $1 GROUP BY status ORDER BY status")
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
        let counts = rows
            .into_iter()
            .map(|r| Ok((r.try_get("status")?, r.try_get("reviews")?)))
            .collect::<Result<_, StoreError>>()?;
        Ok((total, counts))
    }
}

async fn tenant_id_by_name(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    tenant: &str,
) -> Result<String, StoreError> {
    sqlx::query_scalar("SELECT id FROM tenants WHERE name = $1 OR id = $1")
        .bind(tenant)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("tenant {tenant}")))
}

async fn revoke(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    tenant_id: &str,
    token_id: Option<&str>,
) -> Result<Vec<String>, StoreError> {
    let ids: Vec<String> = sqlx::query_scalar(
        "SELECT id FROM api_tokens WHERE tenant_id = $1 AND revoked_at IS NULL AND ($2 IS NULL OR id = $2)",
    )
    .bind(tenant_id)
    .bind(token_id)
    .fetch_all(&mut **tx)
    .await?;
    let at = now();
    for id in &ids {
        sqlx::query("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2")
            .bind(at.as_str())
            .bind(id.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(ids)
}
