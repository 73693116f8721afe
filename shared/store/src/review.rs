//! Reviews and their traces.

use sqlx::Row;

use crate::sql::{now, trusted, values_rows};
use crate::{Store, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewStatus {
    /// Submitted, waiting for admission.
    Queued,
    Running,
    /// Every part ran.
    Complete,
    /// Some service failed; the result names it. Never reported as clean.
    Incomplete,
    /// Every part of its plan ran, but the plan lacked what the change needed (no model
    /// configured): never reported as clean.
    Partial,
    /// The review could not be done at all (e.g. a revision does not exist).
    Failed,
    /// A newer head of the same pull request replaced it before it finished.
    Superseded,
}

impl ReviewStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewStatus::Queued => "queued",
            ReviewStatus::Running => "running",
            ReviewStatus::Complete => "complete",
            ReviewStatus::Incomplete => "incomplete",
            ReviewStatus::Partial => "partial",
            ReviewStatus::Failed => "failed",
            ReviewStatus::Superseded => "superseded",
        }
    }

    pub fn parse(s: &str) -> Option<ReviewStatus> {
        [
            ReviewStatus::Queued,
            ReviewStatus::Running,
            ReviewStatus::Complete,
            ReviewStatus::Incomplete,
            ReviewStatus::Partial,
            ReviewStatus::Failed,
            ReviewStatus::Superseded,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }
}

#[derive(Debug, Clone)]
pub struct NewReview {
    pub id: String,
    pub repository: String,
    pub base_rev: String,
    pub head_rev: String,
}

#[derive(Debug, Clone)]
pub struct ReviewRow {
    pub id: String,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub repository: String,
    pub base_rev: String,
    pub head_rev: String,
    pub base_commit: Option<String>,
    pub head_commit: Option<String>,
    pub status: ReviewStatus,
    pub result: Option<String>,
    /// 0 interactive, 1 rerun, 2 batch.
    pub priority: i64,
}

/// One stored trace line.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRow {
    pub seq: i64,
    pub review_id: String,
    pub at: String,
    pub run_id: String,
    pub kind: String,
    pub event: serde_json::Value,
}

impl Store {
    pub async fn create_review(&self, review: &NewReview) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO reviews (id, created_at, repository, base_rev, head_rev, status) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(review.id.as_str())
        .bind(now())
        .bind(review.repository.as_str())
        .bind(review.base_rev.as_str())
        .bind(review.head_rev.as_str())
        .bind(ReviewStatus::Running.as_str())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn set_review_commits(
        &self,
        id: &str,
        base: &str,
        head: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE reviews SET base_commit = $1, head_commit = $2 WHERE id = $3")
            .bind(base)
            .bind(head)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn finish_review(
        &self,
        id: &str,
        status: ReviewStatus,
        result_json: &str,
    ) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE reviews SET status = $1, result = $2, finished_at = $3 WHERE id = $4",
        )
        .bind(status.as_str())
        .bind(result_json)
        .bind(now())
        .bind(id)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("review {id}")));
        }
        Ok(())
    }

    pub async fn review(&self, id: &str) -> Result<ReviewRow, StoreError> {
        let r = sqlx::query(
            "SELECT id, created_at, finished_at, repository, base_rev, head_rev, base_commit, head_commit, \
             status, result, priority FROM reviews WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("review {id}")))?;
        let status: String = r.try_get("status")?;
        Ok(ReviewRow {
            id: r.try_get("id")?,
            created_at: r.try_get("created_at")?,
            finished_at: r.try_get("finished_at")?,
            repository: r.try_get("repository")?,
            base_rev: r.try_get("base_rev")?,
            head_rev: r.try_get("head_rev")?,
            base_commit: r.try_get("base_commit")?,
            head_commit: r.try_get("head_commit")?,
            status: ReviewStatus::parse(&status)
                .ok_or_else(|| StoreError::Corrupt(format!("review {id} has status {status:?}")))?,
            result: r.try_get("result")?,
            priority: r.try_get("priority")?,
        })
    }

    /// Appends trace lines for one review in one statement. Each event is a JSON object;
    /// `kind` names what it records (plan, package, match, finding, ...).
    pub async fn append_trace(
        &self,
        review_id: &str,
        run_id: &str,
        events: &[(String, serde_json::Value)],
    ) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        insert_trace(&mut tx, review_id, run_id, events).await?;
        tx.commit().await?;
        self.log_trace(review_id, run_id, events);
        Ok(())
    }

    /// A review's trace in the order it was written.
    pub async fn trace(&self, review_id: &str) -> Result<Vec<TraceRow>, StoreError> {
        // A trace of an unknown review is an error, not an empty trace.
        self.review(review_id).await?;
        self.trace_lines(review_id, None).await
    }

    /// The review's trace lines of one kind (`model_call`, say), in order: what a page that
    /// sums one kind reads, without the rest.
    pub async fn trace_of_kind(
        &self,
        review_id: &str,
        kind: &str,
    ) -> Result<Vec<TraceRow>, StoreError> {
        self.trace_lines(review_id, Some(kind)).await
    }

    async fn trace_lines(
        &self,
        review_id: &str,
        kind: Option<&str>,
    ) -> Result<Vec<TraceRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, review_id, at, run_id, kind, event FROM trace_events WHERE review_id = $1 \
             AND ($2 IS NULL OR kind = $2) ORDER BY id",
        )
        .bind(review_id)
        .bind(kind)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                let seq: i64 = r.try_get("id")?;
                let event: String = r.try_get("event")?;
                Ok(TraceRow {
                    seq,
                    review_id: r.try_get("review_id")?,
                    at: r.try_get("at")?,
                    run_id: r.try_get("run_id")?,
                    kind: r.try_get("kind")?,
                    event: serde_json::from_str(&event)
                        .map_err(|e| StoreError::Corrupt(format!("trace line {seq}: {e}")))?,
                })
            })
            .collect()
    }
}

/// Appends trace lines inside a transaction (a step's lines commit with its result).
pub(crate) async fn insert_trace(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    review_id: &str,
    run_id: &str,
    events: &[(String, serde_json::Value)],
) -> Result<(), StoreError> {
    for chunk in events.chunks(500) {
        let sql = format!(
            "INSERT INTO trace_events (review_id, at, run_id, kind, event) VALUES {}",
            values_rows(chunk.len(), 5)
        );
        let at = now();
        let mut q = sqlx::query(trusted(sql));
        for (kind, event) in chunk {
            q = q
                .bind(review_id)
                .bind(at.as_str())
                .bind(run_id)
                .bind(kind.as_str())
                .bind(event.to_string());
        }
        q.execute(&mut **tx).await?;
    }
    Ok(())
}

impl Store {
    /// A sandbox job's record, if it has one.
    pub async fn sandbox_record(&self, job_key: &str) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT record FROM sandbox_runs WHERE job_key = $1")
                .bind(job_key)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    /// Stores a sandbox job's record unless it has one; returns whether this call stored it
    /// and the record that stands.
    pub async fn record_sandbox_once(
        &self,
        job_key: &str,
        record: &str,
    ) -> Result<(bool, String), StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO sandbox_runs (job_key, record, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (job_key) DO NOTHING",
        )
        .bind(job_key)
        .bind(record)
        .bind(now())
        .execute(&self.pool)
        .await?
        .rows_affected()
            == 1;
        let stored = self
            .sandbox_record(job_key)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("sandbox record {job_key} vanished")))?;
        Ok((inserted, stored))
    }
}
