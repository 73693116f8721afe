//! Questions (`POST /v1/questions`): each a durable job of its own in the store, claimed by
//! a worker under a lease (a question whose worker died is claimed again when the lease
//! ends, at most [`MAX_QUESTION_ATTEMPTS`] times), its answer or error kept with it. A
//! tenant only ever reads its own.

use sqlx::Row;

use crate::sql::now;
use crate::{Dialect, Store, StoreError};

/// Claims of one question at most: past them it fails, naming why.
pub const MAX_QUESTION_ATTEMPTS: i64 = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
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

fn row(r: &sqlx::any::AnyRow) -> Result<QuestionRow, StoreError> {
    Ok(QuestionRow {
        id: r.try_get(0)?,
        tenant_id: r.try_get(1)?,
        repository: r.try_get(2)?,
        rev: r.try_get(3)?,
        question: r.try_get(4)?,
        status: r.try_get(5)?,
        attempts: r.try_get(6)?,
        answer: r.try_get(7)?,
        error: r.try_get(8)?,
        created_at: r.try_get(9)?,
        updated_at: r.try_get(10)?,
    })
}

fn epoch() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl Store {
    /// Records a question, queued; its id.
    pub async fn submit_question(
        &self,
        tenant_id: &str,
        (repository, rev, question): (&str, &str, &str),
    ) -> Result<String, StoreError> {
        let id = uuid::Uuid::now_v7().to_string();
        let at = now();
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
        .execute(&self.pool)
        .await?;
        Ok(id)
    }

    /// The tenant's question `id` (None: no such question of this tenant).
    pub async fn question(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<Option<QuestionRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM questions WHERE id = $1 AND tenant_id = $2");
        sqlx::query(crate::sql::trusted(sql))
            .bind(id)
            .bind(tenant_id)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(row)
            .transpose()
    }

    /// Claims the oldest question waiting (queued, or running past its lease) for
    /// `lease_secs`; one claimed [`MAX_QUESTION_ATTEMPTS`] times already fails instead,
    /// named. None: nothing waits.
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
        let lock = match self.dialect {
            Dialect::Postgres => " FOR UPDATE SKIP LOCKED",
            Dialect::Sqlite => "",
        };
        let sql = format!(
            "UPDATE questions SET status = 'running', attempts = attempts + 1, lease_until = $1, \
             updated_at = $2 WHERE id = (SELECT id FROM questions WHERE status = 'queued' \
             OR (status = 'running' AND lease_until < $3) ORDER BY created_at, id LIMIT 1{lock}) \
             RETURNING {COLUMNS}"
        );
        sqlx::query(crate::sql::trusted(sql))
            .bind(now_s + lease_secs)
            .bind(now())
            .bind(now_s)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(row)
            .transpose()
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
