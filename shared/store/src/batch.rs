//! A batch's re-reviews on advisory change, each compared with the review before, and a
//! tenant's batches (`GET /v1/batches/{id}`, `proven batch show|list`).

use crate::{ReviewRequest, Store, StoreError};

/// A re-review's findings against the earlier review's (finding ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RereviewRow {
    pub review: String,
    pub repository: String,
    pub previous: String,
    pub status: String,
    pub new: Vec<String>,
    pub still: Vec<String>,
    pub gone: Vec<String>,
}

/// One of a tenant's batches.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct BatchRow {
    pub id: String,
    pub created_at: String,
    pub total: i64,
}

impl Store {
    /// The ids of a review's findings once it has a result (None: not yet).
    async fn finding_ids(&self, review: &str) -> Result<Option<Vec<String>>, StoreError> {
        let row = self.review(review).await?;
        let Some(result) = row.result.as_deref() else {
            return Ok(None);
        };
        let doc: serde_json::Value = serde_json::from_str(result).unwrap_or_default();
        Ok(Some(
            doc["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["id"].as_str().map(str::to_string))
                .collect(),
        ))
    }

    /// Each re-review of the tenant's batch whose result and earlier review's result are
    /// both there: its findings new, still there and gone.
    pub async fn batch_rereviews(
        &self,
        tenant_id: &str,
        batch: &str,
    ) -> Result<Vec<RereviewRow>, StoreError> {
        let mut out = Vec::new();
        for r in self
            .list_reviews(tenant_id, None, Some(batch), None, 1000)
            .await?
        {
            let request: Option<ReviewRequest> = self
                .review_request(&r.id)
                .await?
                .and_then(|t| serde_json::from_str(&t).ok());
            let Some(previous) = request.and_then(|q| q.rereview_of) else {
                continue;
            };
            let (Some(now), Some(then)) = (
                self.finding_ids(&r.id).await?,
                self.finding_ids(&previous).await?,
            ) else {
                continue;
            };
            out.push(RereviewRow {
                review: r.id,
                repository: r.repository,
                previous,
                status: r.status,
                new: now.iter().filter(|f| !then.contains(f)).cloned().collect(),
                still: now.iter().filter(|f| then.contains(f)).cloned().collect(),
                gone: then.iter().filter(|f| !now.contains(f)).cloned().collect(),
            });
        }
        Ok(out)
    }

    /// The tenant's batches, newest first (at most `limit`).
    pub async fn batches(&self, tenant_id: &str, limit: i64) -> Result<Vec<BatchRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, created_at, total FROM batches WHERE tenant_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT $2",
        )
        .bind(tenant_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }
}
