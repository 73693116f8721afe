//! Questions (`POST /v1/questions`): each a durable job of its own in the store, within its
//! tenant's cap on unanswered questions, claimed by a worker under a lease with tenants
//! taking turns (a question whose worker died is claimed again when the lease
//! ends, at most [`MAX_QUESTION_ATTEMPTS`] times), its answer or error kept with it. A
//! tenant only ever reads its own.

use crate::pipeline::{Unfinished, lock_tenant, unfinished};
use crate::sql::{epoch, now};
use crate::{Store, StoreError};

/// Claims of one question at most: past them it fails, naming why.
pub const MAX_QUESTION_ATTEMPTS: i64 = 3;

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct QuestionRow {
    pub id: String,
    pub tenant_id: String,
    pub repository: String,
    pub rev: String,
    pub question: String,
    /// queued, running, done, failed.
    pub status: String,
    pub attempts: i64,
    pub answer: Option<String>,
    pub error: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

const COLUMNS: &str = "id, tenant_id, repository, rev, question, status, attempts, answer, error, created_at, updated_at";

impl Store {
    /// Records a question, queued; its id. With `max_unfinished`, within the tenant's cap
    /// on unanswered (queued or running) questions: when one more would pass it, nothing is
    /// recorded and the answer is [`StoreError::QuestionsFull`]. Counting and inserting are
    /// one transaction with the tenant's row locked (on Postgres; SQLite has one writer),
    /// as a review's cap is kept, so concurrent submissions never pass it.
    pub async fn submit_question(
        &self,
        tenant_id: &str,
        (repository, rev, question): (&str, &str, &str),
        max_unfinished: Option<i64>,
    ) -> Result<String, StoreError> {
        let id = uuid::Uuid::now_v7().to_string();
        let at = now();
        let mut tx = self.write_tx().await?;
        lock_tenant(&mut tx, self.dialect, tenant_id).await?;
        sqlx::query(
            "INSERT INTO questions (id, tenant_id, repository, rev, question, status, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, 'queued', $6, $6)",
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(repository)
        .bind(rev)
        .bind(question)
        .bind(&at)
        .execute(&mut *tx)
        .await?;
        if let Some(limit) = max_unfinished {
            let open = unfinished(&mut tx, Unfinished::Questions, tenant_id).await?;
            if open > limit {
                return Err(StoreError::QuestionsFull {
                    unfinished: open - 1,
                    limit,
                });
            }
        }
        tx.commit().await?;
        Ok(id)
    }

    /// The tenant's question `id` (None: no such question of this tenant).
    pub async fn question(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<Option<QuestionRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM questions WHERE id = $1 AND tenant_id = $2");
        Ok(sqlx::query_as(crate::sql::trusted(sql))
            .bind(id)
            .bind(tenant_id)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// Claims a question waiting (queued, or running past its lease) for `lease_secs`, with
    /// tenants taking turns as publications do: each tenant's oldest first, then the next
    /// tenant's, turns counted over every unanswered question of the tenant (the ones in
    /// hand included), so one tenant's many questions never hold another's back. One claimed
    /// [`MAX_QUESTION_ATTEMPTS`] times already fails instead, named. None: nothing waits.
    pub async fn claim_question(&self, lease_secs: i64) -> Result<Option<QuestionRow>, StoreError> {
        let now_s = epoch();
        let gave_up = sqlx::query(
            "UPDATE questions SET status = 'failed', error = $1, updated_at = $2 \
             WHERE status = 'running' AND lease_until < $3 AND attempts >= $4",
        )
        .bind(format!(
            "its worker stopped {MAX_QUESTION_ATTEMPTS} times before it was answered"
        ))
        .bind(now())
        .bind(now_s)
        .bind(MAX_QUESTION_ATTEMPTS)
        .execute(&self.pool)
        .await?;
        if gave_up.rows_affected() > 0 {
            tracing::warn!(
                questions = gave_up.rows_affected(),
                "questions failed after their last attempt"
            );
        }
        // A window function cannot lock rows: the pick reads, and the claim's update checks
        // the question still waits (another worker may have taken it: pick again).
        let pick = "SELECT w.id FROM (SELECT q.id, q.created_at, ROW_NUMBER() OVER \
             (PARTITION BY q.tenant_id ORDER BY q.created_at, q.id) AS turn, \
             CASE WHEN q.status = 'queued' OR q.lease_until < $1 THEN 1 ELSE 0 END AS ready \
             FROM questions q WHERE q.status IN ('queued', 'running')) w \
             WHERE w.ready = 1 ORDER BY w.turn, w.created_at, w.id LIMIT 1";
        let claim = format!(
            "UPDATE questions SET status = 'running', attempts = attempts + 1, lease_until = $1, \
             updated_at = $2 WHERE id = $3 AND (status = 'queued' \
             OR (status = 'running' AND lease_until < $4)) RETURNING {COLUMNS}"
        );
        for _ in 0..8 {
            let Some(id) = self.next_in_turn(pick, now_s).await? else {
                return Ok(None);
            };
            let claimed: Option<QuestionRow> = sqlx::query_as(crate::sql::trusted(claim.clone()))
                .bind(now_s + lease_secs)
                .bind(now())
                .bind(&id)
                .bind(now_s)
                .fetch_optional(&self.pool)
                .await?;
            if claimed.is_some() {
                return Ok(claimed);
            }
        }
        // Others keep taking what this one picks: nothing for it now.
        Ok(None)
    }

    /// Keeps the question's answer (`Ok`, the document) or why it failed (`Err`).
    pub async fn finish_question(
        &self,
        id: &str,
        outcome: Result<&str, &str>,
    ) -> Result<(), StoreError> {
        let (status, answer, error) = match outcome {
            Ok(a) => ("done", Some(a), None),
            Err(e) => ("failed", None, Some(e)),
        };
        sqlx::query(
            "UPDATE questions SET status = $1, answer = $2, error = $3, lease_until = NULL, \
             updated_at = $4 WHERE id = $5",
        )
        .bind(status)
        .bind(answer)
        .bind(error)
        .bind(now())
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
