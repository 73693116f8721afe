//! Tenants, their API tokens (stored hashed), and what a tenant may see.

use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::sql::now;
use crate::{Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    pub id: String,
    pub name: String,
    pub max_running_reviews: i64,
}

/// One line of a tenant's review list.
#[derive(Debug, Clone)]
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

pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
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
        let token = format!(
            "pvn_{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
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
        sqlx::query(
            "INSERT INTO api_tokens (token_sha256, tenant_id, created_at) VALUES ($1, $2, $3)",
        )
        .bind(token_hash(&token))
        .bind(id.as_str())
        .bind(now())
        .execute(&mut *tx)
        .await?;
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
        let row = sqlx::query(
            "SELECT t.id, t.name, t.max_running_reviews FROM api_tokens k JOIN tenants t ON t.id = k.tenant_id \
             WHERE k.token_sha256 = $1 AND k.revoked_at IS NULL",
        )
        .bind(token_hash(token))
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(Tenant {
                id: r.try_get(0)?,
                name: r.try_get(1)?,
                max_running_reviews: r.try_get(2)?,
            })
        })
        .transpose()
    }

    /// The tenant owning a review (`None` for reviews from the command line).
    pub async fn review_tenant(&self, review_id: &str) -> Result<Option<String>, StoreError> {
        let row = sqlx::query("SELECT tenant_id FROM reviews WHERE id = $1")
            .bind(review_id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("review {review_id}")))?;
        Ok(row.try_get(0)?)
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
        let rows = sqlx::query(
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
        .await?;
        rows.iter().map(summary).collect()
    }

    /// One of a tenant's reviews (`None` when it is not the tenant's).
    pub async fn review_summary(
        &self,
        tenant_id: &str,
        review_id: &str,
    ) -> Result<Option<ReviewSummary>, StoreError> {
        let row = sqlx::query(
            "SELECT id, status, created_at, finished_at, repository, base_rev, head_rev, priority, batch_id, created_us \
             FROM reviews WHERE tenant_id = $1 AND id = $2",
        )
        .bind(tenant_id)
        .bind(review_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(summary).transpose()
    }

    pub async fn create_batch(
        &self,
        id: &str,
        tenant_id: &str,
        total: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO batches (id, tenant_id, created_at, total) VALUES ($1, $2, $3, $4)",
        )
        .bind(id)
        .bind(tenant_id)
        .bind(now())
        .bind(total)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// A batch of `tenant_id`: its size and its reviews' counts by status.
    pub async fn batch(
        &self,
        id: &str,
        tenant_id: &str,
    ) -> Result<(i64, Vec<(String, i64)>), StoreError> {
        let total: i64 = sqlx::query("SELECT total FROM batches WHERE id = $1 AND tenant_id = $2")
            .bind(id)
            .bind(tenant_id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("batch {id}")))?
            .try_get(0)?;
        let rows = sqlx::query("SELECT status, COUNT(*) FROM reviews WHERE batch_id = $1 GROUP BY status ORDER BY status")
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
        let counts = rows
            .into_iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, StoreError>>()?;
        Ok((total, counts))
    }
}

fn summary(r: &sqlx::any::AnyRow) -> Result<ReviewSummary, StoreError> {
    Ok(ReviewSummary {
        id: r.try_get(0)?,
        status: r.try_get(1)?,
        created_at: r.try_get(2)?,
        finished_at: r.try_get(3)?,
        repository: r.try_get(4)?,
        base_rev: r.try_get(5)?,
        head_rev: r.try_get(6)?,
        priority: r.try_get(7)?,
        batch_id: r.try_get(8)?,
        created_us: r.try_get(9)?,
    })
}
