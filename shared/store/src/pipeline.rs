//! The durable pipeline's truth: one row per step with its state, attempts and lease
//! generation; the outbox of jobs to push; the fan-in counter; admission and supersede.
//!
//! Invariants (each enforced by a conditional statement inside one transaction):
//! - Only the holder of a step's current lease generation commits its result; a worker
//!   whose lease was taken over gets [`Committed::Conflict`] and changes nothing.
//! - A commit writes the step's result, its next steps and their outbox rows together;
//!   next steps are keyed by (review, step, key), so a replayed commit adds nothing.
//! - The judge step of a review is inserted at most once (primary key), whoever gets the
//!   fan-in counter to zero, a dead letter, or the deadline.
//! - A step claimed more than `max_attempts` times without finishing is dead-lettered.

use sqlx::Row;

use crate::group::{Lane, Waiting};
use crate::sql::{now, trusted};
use crate::{Dialect, Store, StoreError};

pub const JUDGE_STEP: &str = "judge";
pub const JUDGE_QUEUE: &str = "control";

/// Microseconds since the epoch.
pub fn now_us() -> i64 {
    let t = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1000;
    i64::try_from(t).unwrap_or(i64::MAX)
}

#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct StepId {
    pub review_id: String,
    pub step: String,
    pub key: String,
}

/// A job on a queue: which step to wake up. Everything else is in the store.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, sqlx::FromRow)]
pub struct Job {
    pub review_id: String,
    pub step: String,
    pub key: String,
    pub queue: String,
    /// The trace id of the request that submitted the review (job metadata).
    #[serde(default)]
    pub trace_id: Option<String>,
}

impl Job {
    pub fn id(&self) -> StepId {
        StepId {
            review_id: self.review_id.clone(),
            step: self.step.clone(),
            key: self.key.clone(),
        }
    }
}

/// A step to create.
#[derive(Debug, Clone)]
pub struct NewStep {
    pub step: String,
    pub key: String,
    pub queue: String,
    pub input: Option<String>,
    /// Its branch counts in the review's fan-in (a finding pipeline).
    pub pipeline: bool,
    pub not_before_us: i64,
}

impl NewStep {
    pub fn new(step: &str, queue: &str) -> NewStep {
        NewStep {
            step: step.into(),
            key: String::new(),
            queue: queue.into(),
            input: None,
            pipeline: false,
            not_before_us: 0,
        }
    }
}

/// The right to run a step, until `until_us`; `generation` fences the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub id: StepId,
    pub queue: String,
    pub generation: i64,
    pub attempt: i64,
    pub owner: String,
    pub input: Option<String>,
    pub pipeline: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    Run(Lease),
    /// Finished already (a redelivered job): acknowledge and do nothing.
    Finished,
    /// Another worker holds a live lease.
    Busy,
    /// The review was cancelled or superseded.
    Cancelled,
    /// No such step.
    Missing,
    /// Claimed too often without finishing: dead-lettered now; its branch is closed.
    DeadLettered {
        attempts: i64,
    },
    /// Not due yet (a retry scheduled for later).
    NotYet,
    /// Tried before and delivered by a shared queue: sent to its isolated queue instead.
    Isolated,
}

/// What a finished step hands back.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub result: String,
    pub next: Vec<NewStep>,
    /// This step ends its finding pipeline (fan-in).
    pub closes_pipeline: bool,
    pub trace: Vec<(String, serde_json::Value)>,
    pub run_id: String,
    /// Ends the review with this status and result document (the judge's commit).
    pub finish: Option<(crate::ReviewStatus, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Committed {
    /// Written; `judge_enqueued` when this commit closed the last pipeline.
    Done { judge_enqueued: bool, jobs: usize },
    /// The lease was taken over (or the step finished elsewhere): nothing was written.
    Conflict,
}

#[derive(Debug, Clone)]
pub struct StepRow {
    pub id: StepId,
    pub queue: String,
    pub state: String,
    pub attempts: i64,
    pub lease_gen: i64,
    pub pipeline: bool,
    pub result: Option<String>,
    pub error: Option<String>,
    /// When the step was created (µs since the epoch).
    pub created_us: i64,
}

/// What putting a step back spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// A failure that may pass later: the attempt counts.
    Attempt,
    /// A service rate-limited it: no attempt, one deferral (deferrals are capped).
    Deferral,
    /// It waits for other steps of its review: neither an attempt nor a deferral (the step
    /// bounds its own waiting).
    Wait,
}

/// A review waiting for admission.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PendingReview {
    pub id: String,
    pub tenant_id: Option<String>,
    pub priority: i64,
    pub created_us: i64,
}

#[derive(Debug, Clone)]
pub struct NewPipelineReview {
    pub id: String,
    pub tenant_id: Option<String>,
    pub repository: String,
    pub base_rev: String,
    pub head_rev: String,
    pub priority: i64,
    pub batch_id: Option<String>,
    pub pr_key: Option<String>,
    pub request: String,
    pub deadline_us: Option<i64>,
    pub trace_id: Option<String>,
}

/// The priority of a batch's reviews (interactive 0, rerun 1, batch 2: admission takes the
/// lower first).
pub const BATCH_PRIORITY: i64 = 2;

impl NewPipelineReview {
    /// The stored form of `request` by `tenant_id` at `priority`, in `batch_id` if any (a
    /// new id; the request kept as JSON for the review's intake).
    pub fn of_request(
        tenant_id: &str,
        request: &crate::ReviewRequest,
        priority: i64,
        batch_id: Option<String>,
    ) -> Result<NewPipelineReview, serde_json::Error> {
        Ok(NewPipelineReview {
            id: uuid::Uuid::now_v7().to_string(),
            tenant_id: Some(tenant_id.to_string()),
            repository: request.repository.clone(),
            base_rev: request.base.clone(),
            head_rev: request.head.clone(),
            priority,
            batch_id,
            pr_key: request.pull_request.clone(),
            request: serde_json::to_string(request)?,
            // Checked against the maximum (at most a day by default), so this never
            // overflows.
            deadline_us: request.deadline_secs.map(|s| {
                now_us().saturating_add(
                    i64::try_from(s)
                        .unwrap_or(i64::MAX)
                        .saturating_mul(1_000_000),
                )
            }),
            trace_id: request.trace_id.clone(),
        })
    }
}

impl Store {
    /// Records a review waiting for admission. A newer review of the same pull request
    /// (tenant + `pr_key`) supersedes older unfinished ones: their queued steps are
    /// cancelled before they start. Returns the ids it superseded.
    pub async fn submit_review(&self, r: &NewPipelineReview) -> Result<Vec<String>, StoreError> {
        let mut tx = self.write_tx().await?;
        let superseded = insert_review(&mut tx, r, None).await?;
        tx.commit().await?;
        Ok(superseded)
    }

    /// [`Store::submit_review`] for a tenant with a cap on unfinished (queued or running)
    /// reviews: when the review would pass it, nothing is recorded and the answer is
    /// [`StoreError::QueueFull`]. A review that supersedes one of the tenant's takes that
    /// one's place. Counting and inserting are one transaction (the tenant's row is locked
    /// on Postgres; SQLite has one writer), so concurrent submissions never pass the cap.
    pub async fn submit_review_within(
        &self,
        r: &NewPipelineReview,
        max_unfinished: i64,
    ) -> Result<Vec<String>, StoreError> {
        let mut tx = self.write_tx().await?;
        if let Some(tenant) = r.tenant_id.as_deref() {
            lock_tenant(&mut tx, self.dialect, tenant).await?;
        }
        let superseded = insert_review(&mut tx, r, None).await?;
        if let Some(tenant) = r.tenant_id.as_deref() {
            within_cap(&mut tx, tenant, 1, max_unfinished).await?;
        }
        tx.commit().await?;
        Ok(superseded)
    }

    /// Records a batch and all its reviews in one transaction, within the tenant's cap on
    /// unfinished reviews: every review is recorded, or none is (and no batch).
    pub async fn submit_batch(
        &self,
        batch_id: &str,
        tenant_id: &str,
        reviews: &[NewPipelineReview],
        max_unfinished: i64,
    ) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        lock_tenant(&mut tx, self.dialect, tenant_id).await?;
        sqlx::query(
            "INSERT INTO batches (id, tenant_id, created_at, total) VALUES ($1, $2, $3, $4)",
        )
        .bind(batch_id)
        .bind(tenant_id)
        .bind(now())
        .bind(reviews.len() as i64)
        .execute(&mut *tx)
        .await?;
        for r in reviews {
            insert_review(&mut tx, r, None).await?;
        }
        within_cap(&mut tx, tenant_id, reviews.len() as i64, max_unfinished).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records a review that its caller runs at once (the embedded default, a lone sandbox
    /// job): admitted in the same transaction as it is recorded, with `first` as its first
    /// step, so no admission loop sharing the store can ever take it for itself.
    pub async fn start_review(
        &self,
        r: &NewPipelineReview,
        first: &NewStep,
    ) -> Result<Vec<String>, StoreError> {
        let mut tx = self.write_tx().await?;
        let superseded = insert_review(&mut tx, r, Some(first)).await?;
        tx.commit().await?;
        Ok(superseded)
    }

    /// Reviews waiting for admission: each tenant's oldest pending reviews — highest
    /// priority first, then oldest — at most `per_tenant` of each and never more than the
    /// tenant's own limit on running reviews. A window per tenant, not one global window:
    /// however many reviews one tenant queues, every other tenant's next ones are here.
    /// Reviews without a tenant (the command line's) count as one tenant without a limit.
    pub async fn pending_reviews(&self, per_tenant: i64) -> Result<Vec<PendingReview>, StoreError> {
        // ROW_NUMBER() OVER (PARTITION BY …) is standard SQL that SQLite (3.25+) and
        // Postgres both run; NULL tenants form one partition in both.
        let rows = sqlx::query_as(
            "SELECT w.id, w.tenant_id, w.priority, w.created_us FROM ( \
               SELECT r.id, r.tenant_id, r.priority, r.created_us, \
                      ROW_NUMBER() OVER (PARTITION BY r.tenant_id ORDER BY r.priority, r.created_us, r.id) AS rn \
               FROM reviews r WHERE r.admitted_us IS NULL AND r.status = 'queued' \
             ) w LEFT JOIN tenants t ON t.id = w.tenant_id \
             WHERE w.rn <= $1 AND (t.max_running_reviews IS NULL OR w.rn <= t.max_running_reviews) \
             ORDER BY w.priority, w.created_us, w.id",
        )
        .bind(per_tenant)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows)
    }

    /// Running (admitted, unfinished) reviews per tenant, and each tenant's limit.
    pub async fn running_by_tenant(&self) -> Result<Vec<(String, i64, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT t.id, t.max_running_reviews, \
                    (SELECT COUNT(*) FROM reviews r WHERE r.tenant_id = t.id AND r.admitted_us IS NOT NULL \
                      AND r.status = 'running') AS running \
             FROM tenants t",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok((
                    r.try_get("id")?,
                    r.try_get("running")?,
                    r.try_get("max_running_reviews")?,
                ))
            })
            .collect()
    }

    /// Reviews admitted and not finished, across all tenants.
    pub async fn running_reviews(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM reviews WHERE status = 'running' AND admitted_us IS NOT NULL",
        )
        .fetch_one(&self.pool)
        .await?)
    }

    /// Admits one review: marks it running and creates its first step with its job, in one
    /// transaction. Returns false when someone else admitted it first.
    pub async fn admit_review(&self, review_id: &str, first: &NewStep) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        let done = sqlx::query(
            "UPDATE reviews SET admitted_us = $1, status = 'running' WHERE id = $2 AND admitted_us IS NULL \
             AND status = 'queued'",
        )
        .bind(now_us())
        .bind(review_id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        insert_steps(&mut tx, review_id, std::slice::from_ref(first)).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Takes the lease of a step. Counts the attempt in the store: a step claimed more than
    /// `max_attempts` times without finishing is dead-lettered here (its branch is closed,
    /// and the judge enqueued when it was the last).
    pub async fn claim(
        &self,
        id: &StepId,
        owner: &str,
        lease_for_us: i64,
        max_attempts: i64,
    ) -> Result<Claim, StoreError> {
        self.claim_from(id, owner, lease_for_us, max_attempts, false)
            .await
    }

    /// [`Store::claim`] for a job delivered by a shared queue: a step tried before is not
    /// run there but sent to its isolated queue ([`Claim::Isolated`]), so a poison job can
    /// never again take its neighbours down with it.
    pub async fn claim_from(
        &self,
        id: &StepId,
        owner: &str,
        lease_for_us: i64,
        max_attempts: i64,
        shared_queue: bool,
    ) -> Result<Claim, StoreError> {
        let ask = ClaimAsk {
            id: id.clone(),
            owner: owner.to_string(),
            lease_for_us,
            max_attempts,
            shared_queue,
        };
        if self.dialect != Dialect::Postgres {
            return self.claim_alone(&ask).await;
        }
        // The claims of jobs popped together (a worker takes one per free slot) run as one
        // statement on Postgres.
        let store = self.clone();
        self.groups
            .claims
            .join(ask, move |batch| {
                Box::pin(async move { store.claim_batch(batch).await })
            })
            .await
    }

    /// How many batches this store's claims ran in on Postgres.
    pub fn claim_batches(&self) -> u64 {
        self.groups.claims.batches()
    }

    async fn claim_alone(&self, ask: &ClaimAsk) -> Result<Claim, StoreError> {
        // The usual case in one statement (one round trip, no explicit transaction): a step
        // that is due, never tried (or delivered by its isolated queue), under its attempt
        // limit and of a review still going. The row lock of the UPDATE is the whole claim:
        // of two workers, the second re-reads the row the first wrote and matches nothing.
        // On Postgres the claim commits asynchronously (no WAL flush of its own; the step's
        // result commit flushes it): a claim lost with a crashed Postgres only gives the
        // step back, and generations never repeat (see `NEXT_GENERATION`), so the fence holds.
        let (id, owner) = (&ask.id, &ask.owner);
        let now = now_us();
        let row = sqlx::query(trusted(format!(
            "UPDATE steps SET state = 'running', attempts = attempts + 1, lease_gen = {NEXT_GENERATION}, \
             lease_owner = $1, lease_until_us = $2, updated_us = $3 \
             WHERE review_id = $4 AND step = $5 AND key = $6 \
               AND (state = 'queued' OR (state = 'running' AND (lease_until_us IS NULL OR lease_until_us <= $3))) \
               AND not_before_us <= $3 AND attempts < $7 AND ($8 = 0 OR attempts = 0) \
               AND NOT EXISTS (SELECT 1 FROM reviews r WHERE r.id = $4 AND r.status IN ('superseded', 'cancelled')){} \
             RETURNING lease_gen, attempts, input, queue, pipeline",
            async_commit(self.dialect)
        )))
        .bind(owner.as_str())
        .bind(now + ask.lease_for_us)
        .bind(now)
        .bind(id.review_id.as_str())
        .bind(id.step.as_str())
        .bind(id.key.as_str())
        .bind(ask.max_attempts)
        .bind(i64::from(ask.shared_queue))
        .fetch_optional(&self.pool)
        .await?;
        if let Some(row) = row {
            return Ok(Claim::Run(lease_of(&row, id.clone(), owner.to_string())?));
        }
        self.claim_decided(ask).await
    }

    /// The claims of a batch. One alone goes as [`Store::claim_alone`]; several are tried
    /// in one statement (the same conditions as one claim's, each row its own), and each
    /// that it did not take is decided alone under its row's lock, as one claim's would be.
    /// A failed statement changed nothing: each claim is then made alone.
    async fn claim_batch(&self, mut batch: Vec<Waiting<ClaimAsk, Claim>>) {
        if batch.len() == 1 {
            let w = batch.pop().expect("one");
            let r = self.claim_alone(&w.item).await;
            w.answer(r);
            return;
        }
        // A step asked for twice (a job delivered twice) goes once in the statement; the
        // other ask is decided after it (it finds the lease just taken: busy).
        batch.sort_by(|a, b| a.item.id.cmp(&b.item.id));
        let (once, again): (Vec<_>, Vec<_>) = {
            let mut seen = std::collections::HashSet::new();
            batch
                .into_iter()
                .partition(|w| seen.insert(w.item.id.clone()))
        };
        match self.claim_together(&once).await {
            Ok(mut leases) => {
                for w in once {
                    match leases.remove(&w.item.id) {
                        Some(lease) => w.answer(Ok(Claim::Run(lease))),
                        None => {
                            let r = self.claim_decided(&w.item).await;
                            w.answer(r);
                        }
                    }
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, claims = once.len(), "a grouped claim failed; claiming each alone");
                for w in once {
                    let r = self.claim_alone(&w.item).await;
                    w.answer(r);
                }
            }
        }
        for w in again {
            let r = self.claim_alone(&w.item).await;
            w.answer(r);
        }
    }

    /// One statement claiming every ask it can (Postgres): the leases it took, by step.
    async fn claim_together(
        &self,
        asks: &[Waiting<ClaimAsk, Claim>],
    ) -> Result<std::collections::HashMap<StepId, Lease>, StoreError> {
        let now = now_us();
        // A VALUES list of bound parameters, not a JSON document: the planner knows its few
        // rows and probes the primary key for each (a JSON set is taken for 100 rows and
        // joined by scanning every step).
        let sql = format!(
            "UPDATE steps SET state = 'running', attempts = steps.attempts + 1, \
             lease_gen = CASE WHEN steps.lease_gen + 1 > $1 THEN steps.lease_gen + 1 ELSE $1 END, \
             lease_owner = j.owner, lease_until_us = j.until_us, updated_us = $1 \
             FROM (VALUES {}) AS j(review_id, step, key, owner, until_us, max_attempts, shared) \
             WHERE steps.review_id = j.review_id AND steps.step = j.step AND steps.key = j.key \
               AND (steps.state = 'queued' OR (steps.state = 'running' \
                 AND (steps.lease_until_us IS NULL OR steps.lease_until_us <= $1))) \
               AND steps.not_before_us <= $1 AND steps.attempts < j.max_attempts \
               AND (j.shared = 0 OR steps.attempts = 0) \
               AND NOT EXISTS (SELECT 1 FROM reviews r WHERE r.id = steps.review_id \
                 AND r.status IN ('superseded', 'cancelled')) \
               AND set_config('synchronous_commit', 'off', true) IS NOT NULL \
             RETURNING steps.review_id, steps.step, steps.key, steps.lease_gen, steps.attempts, \
               steps.input, steps.queue, steps.pipeline, steps.lease_owner",
            crate::sql::values_rows_from(2, asks.len(), 7)
        );
        let mut q = sqlx::query(trusted(sql)).bind(now);
        for w in asks {
            let a = &w.item;
            q = q
                .bind(a.id.review_id.as_str())
                .bind(a.id.step.as_str())
                .bind(a.id.key.as_str())
                .bind(a.owner.as_str())
                .bind(now.saturating_add(a.lease_for_us))
                .bind(a.max_attempts)
                .bind(i64::from(a.shared_queue));
        }
        let found = q.fetch_all(&self.pool).await?;
        let mut leases = std::collections::HashMap::with_capacity(found.len());
        for row in found {
            let id = step_id(&row)?;
            let lease = lease_of(&row, id.clone(), row.try_get("lease_owner")?)?;
            leases.insert(id, lease);
        }
        Ok(leases)
    }

    /// A claim the one-statement path did not take: everything else (finished, busy, not
    /// due, cancelled, isolated, dead-lettered, missing, or due after all) decided under the
    /// row's lock.
    async fn claim_decided(&self, ask: &ClaimAsk) -> Result<Claim, StoreError> {
        let ClaimAsk {
            id,
            owner,
            lease_for_us,
            max_attempts,
            shared_queue,
        } = ask;
        let (lease_for_us, max_attempts, shared_queue) =
            (*lease_for_us, *max_attempts, *shared_queue);
        // Everything else (finished, busy, not due, cancelled, isolated, dead-lettered,
        // missing) is decided under the row's lock.
        let mut tx = self.write_tx().await?;
        let row = sqlx::query(trusted(select_step_for_update(self.dialect)))
            .bind(id.review_id.as_str())
            .bind(id.step.as_str())
            .bind(id.key.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else {
            return Ok(Claim::Missing);
        };
        let state: String = row.try_get("state")?;
        let attempts: i64 = row.try_get("attempts")?;
        let lease_until: Option<i64> = row.try_get("lease_until_us")?;
        let not_before: i64 = row.try_get("not_before_us")?;
        let now = now_us();
        match state.as_str() {
            "done" | "failed" | "dead" => return Ok(Claim::Finished),
            "cancelled" => return Ok(Claim::Cancelled),
            "running" if lease_until.is_some_and(|u| u > now) => return Ok(Claim::Busy),
            _ => {}
        }
        if not_before > now {
            return Ok(Claim::NotYet);
        }
        if shared_queue && attempts > 0 {
            let queue: String = row.try_get("queue")?;
            push_outbox(&mut tx, id, &isolated_queue(&queue), now).await?;
            tx.commit().await?;
            return Ok(Claim::Isolated);
        }
        let status: Option<String> = sqlx::query_scalar("SELECT status FROM reviews WHERE id = $1")
            .bind(id.review_id.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        if matches!(status.as_deref(), Some("superseded" | "cancelled")) {
            sqlx::query("UPDATE steps SET state = 'cancelled', updated_us = $1 WHERE review_id = $2 AND step = $3 AND key = $4")
                .bind(now)
                .bind(id.review_id.as_str())
                .bind(id.step.as_str())
                .bind(id.key.as_str())
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            return Ok(Claim::Cancelled);
        }
        if attempts >= max_attempts {
            let last_error: Option<String> = row.try_get("error")?;
            let last_owner: Option<String> = row.try_get("lease_owner")?;
            let message = format!(
                "claimed {attempts} times without finishing (its worker crashed or timed out each time; \
                 last owner {}, last error: {})",
                last_owner.as_deref().unwrap_or("none"),
                last_error.as_deref().unwrap_or("none")
            );
            close_branch(&mut tx, id, "dead", &message, now).await?;
            tx.commit().await?;
            return Ok(Claim::DeadLettered { attempts });
        }
        let row = sqlx::query(
            trusted(format!(
                "UPDATE steps SET state = 'running', attempts = attempts + 1, lease_gen = {NEXT_GENERATION}, \
                 lease_owner = $1, lease_until_us = $2, updated_us = $3 \
                 WHERE review_id = $4 AND step = $5 AND key = $6 \
                 RETURNING lease_gen, attempts, input, queue, pipeline"
            )),
        )
        .bind(owner)
        .bind(now + lease_for_us)
        .bind(now)
        .bind(id.review_id.as_str())
        .bind(id.step.as_str())
        .bind(id.key.as_str())
        .fetch_one(&mut *tx)
        .await?;
        let lease = lease_of(&row, id.clone(), owner.to_string())?;
        tx.commit().await?;
        Ok(Claim::Run(lease))
    }

    /// Sends a step tried before to its family's isolated queue instead of running it here
    /// (the caller got its job from a shared queue). Returns false when the step is not in
    /// a state to run (finished, or held by a live lease).
    pub async fn isolate(&self, id: &StepId) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        let now = now_us();
        let queue: Option<String> = sqlx::query_scalar(
            "SELECT queue FROM steps WHERE review_id = $1 AND step = $2 AND key = $3 AND attempts > 0 \
             AND (state = 'queued' OR (state = 'running' AND lease_until_us < $4))",
        )
        .bind(id.review_id.as_str())
        .bind(id.step.as_str())
        .bind(id.key.as_str())
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(queue) = queue else { return Ok(false) };
        push_outbox(&mut tx, id, &isolated_queue(&queue), now).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Whether a step was claimed before (so a delivery from a shared queue should be isolated).
    pub async fn tried_before(&self, id: &StepId) -> Result<bool, StoreError> {
        let attempts = self.step_count(id, "attempts").await?;
        Ok(attempts.is_some_and(|a| a > 0))
    }

    /// One of a step's counters (`attempts`, `deferrals`); None: no such step.
    async fn step_count(
        &self,
        id: &StepId,
        counter: &'static str,
    ) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar(trusted(format!(
            "SELECT {counter} FROM steps WHERE review_id = $1 AND step = $2 AND key = $3"
        )))
        .bind(id.review_id.as_str())
        .bind(id.step.as_str())
        .bind(id.key.as_str())
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Extends a lease still held; false when it was taken over.
    pub async fn renew(&self, lease: &Lease, lease_for_us: i64) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE steps SET lease_until_us = $1 WHERE review_id = $2 AND step = $3 AND key = $4 \
             AND lease_gen = $5 AND state = 'running'",
        )
        .bind(now_us() + lease_for_us)
        .bind(lease.id.review_id.as_str())
        .bind(lease.id.step.as_str())
        .bind(lease.id.key.as_str())
        .bind(lease.generation)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Commits a finished step, fenced by its lease generation: the result, the next steps
    /// with their outbox rows, the fan-in, and the trace, in one transaction. On Postgres
    /// the commits of this process's steps that arrive together share that transaction (one
    /// WAL flush for all of them; `group.rs`), each still fenced and answered on its own.
    pub async fn commit(&self, lease: &Lease, outcome: &Outcome) -> Result<Committed, StoreError> {
        if self.dialect != Dialect::Postgres {
            return self.commit_alone(lease, outcome).await;
        }
        let store = self.clone();
        self.groups
            .commits
            .join((lease.clone(), outcome.clone()), move |batch| {
                Box::pin(async move { store.commit_batch(batch).await })
            })
            .await
    }

    /// How many batches this store's step commits ran in on Postgres (each one transaction,
    /// unless a statement of it failed and its steps were committed again alone).
    pub fn commit_batches(&self) -> u64 {
        self.groups.commits.batches()
    }

    /// One step's commit in a transaction of its own (a step that starts nothing and writes
    /// no trace, on Postgres, in one statement).
    async fn commit_alone(
        &self,
        lease: &Lease,
        outcome: &Outcome,
    ) -> Result<Committed, StoreError> {
        if self.dialect == Dialect::Postgres && is_leaf(outcome) {
            let mut one = commit_leaves(&self.pool, &[(lease, outcome)]).await?;
            return Ok(one.pop().unwrap_or(Committed::Conflict));
        }
        let mut tx = self.write_tx().await?;
        let committed = commit_in(&mut tx, lease, outcome).await?;
        if committed == Committed::Conflict {
            return Ok(committed);
        }
        tx.commit().await?;
        self.log_trace(&lease.id.review_id, &outcome.run_id, &outcome.trace);
        Ok(committed)
    }

    /// Commits the steps of a batch. One alone takes its own transaction; several share
    /// one, taken in the order of their ids so two batches lock reviews in the same order
    /// (never a deadlock between them). If a statement fails before COMMIT nothing of the
    /// batch was written, and each step is committed again alone, so one step's bad write
    /// (a NUL in its result) fails that step only. A failed COMMIT leaves the outcome
    /// unknown, as for one step alone: each caller gets the error (its job is put back and
    /// the store decides when it comes again).
    async fn commit_batch(&self, mut batch: Vec<Waiting<(Lease, Outcome), Committed>>) {
        if batch.len() == 1 {
            let w = batch.pop().expect("one");
            let r = self.commit_alone(&w.item.0, &w.item.1).await;
            w.answer(r);
            return;
        }
        batch.sort_by(|a, b| a.item.0.id.cmp(&b.item.0.id));
        // Leaves (the usual end of a step) go in one statement; a review named by two of
        // them (its writes would race inside one statement) sends them one by one.
        let leaves: Vec<usize> = (0..batch.len())
            .filter(|i| is_leaf(&batch[*i].item.1))
            .collect();
        let one_each = leaves
            .windows(2)
            .any(|w| batch[w[0]].item.0.id.review_id == batch[w[1]].item.0.id.review_id);
        if leaves.len() == batch.len() && !one_each {
            // Leaves only: the one statement is the whole transaction.
            let items: Vec<_> = batch.iter().map(|w| (&w.item.0, &w.item.1)).collect();
            match commit_leaves(&self.pool, &items).await {
                Ok(done) => {
                    for (w, c) in batch.into_iter().zip(done) {
                        w.answer(Ok(c));
                    }
                }
                Err(e) => {
                    tracing::debug!(error = %e, steps = batch.len(), "a grouped commit failed; committing each alone");
                    for w in batch {
                        let r = self.commit_alone(&w.item.0, &w.item.1).await;
                        w.answer(r);
                    }
                }
            }
            return;
        }
        let written = async {
            let mut tx = self.write_tx().await?;
            let mut done = vec![Committed::Conflict; batch.len()];
            // The leaves in one statement, or one each when a review repeats among them.
            let groups: Vec<&[usize]> = if one_each {
                leaves.chunks(1).collect()
            } else {
                vec![&leaves[..]]
            };
            for group in groups.into_iter().filter(|g| !g.is_empty()) {
                let items: Vec<_> = group
                    .iter()
                    .map(|i| (&batch[*i].item.0, &batch[*i].item.1))
                    .collect();
                for (i, c) in group.iter().zip(commit_leaves(&mut *tx, &items).await?) {
                    done[*i] = c;
                }
            }
            for (i, w) in batch.iter().enumerate() {
                let (lease, outcome) = &w.item;
                if !is_leaf(outcome) {
                    done[i] = commit_in(&mut tx, lease, outcome).await?;
                }
            }
            Ok::<_, StoreError>((tx, done))
        }
        .await;
        let (tx, done) = match written {
            Ok(w) => w,
            Err(e) => {
                tracing::debug!(error = %e, steps = batch.len(), "a grouped commit failed; committing each alone");
                for w in batch {
                    let r = self.commit_alone(&w.item.0, &w.item.1).await;
                    w.answer(r);
                }
                return;
            }
        };
        if let Err(e) = tx.commit().await {
            let message = e.to_string();
            for w in batch {
                w.answer(Err(StoreError::Unavailable {
                    what: "database".into(),
                    message: message.clone(),
                }));
            }
            return;
        }
        for (w, c) in batch.into_iter().zip(done) {
            if c != Committed::Conflict {
                let (lease, outcome) = &w.item;
                self.log_trace(&lease.id.review_id, &outcome.run_id, &outcome.trace);
            }
            w.answer(Ok(c));
        }
    }

    /// Ends a step that failed for good (a permanent error): its branch closes like a
    /// finished one, with the error kept for the judge to name.
    pub async fn fail(&self, lease: &Lease, message: &str) -> Result<Committed, StoreError> {
        let mut tx = self.write_tx().await?;
        let owned = sqlx::query(
            "SELECT 1 FROM steps WHERE review_id = $1 AND step = $2 AND key = $3 AND lease_gen = $4 AND state = 'running'",
        )
        .bind(lease.id.review_id.as_str())
        .bind(lease.id.step.as_str())
        .bind(lease.id.key.as_str())
        .bind(lease.generation)
        .fetch_optional(&mut *tx)
        .await?;
        if owned.is_none() {
            return Ok(Committed::Conflict);
        }
        let judge_enqueued = close_branch(&mut tx, &lease.id, "failed", message, now_us()).await?;
        tx.commit().await?;
        Ok(Committed::Done {
            judge_enqueued,
            jobs: usize::from(judge_enqueued),
        })
    }

    /// Gives a step back to the queue for a later attempt (a retryable error, or a rate
    /// limit: `spend_attempt` false does not count it).
    pub async fn retry_later(
        &self,
        lease: &Lease,
        delay_us: i64,
        spends: Retry,
        message: &str,
    ) -> Result<bool, StoreError> {
        let (attempt_back, deferral) = match spends {
            Retry::Attempt => (0_i64, 0_i64),
            Retry::Deferral => (1, 1),
            Retry::Wait => (1, 0),
        };
        let mut tx = self.write_tx().await?;
        let when = now_us() + delay_us;
        let done = sqlx::query(
            "UPDATE steps SET state = 'queued', not_before_us = $1, error = $2, lease_until_us = NULL, \
             attempts = attempts - $3, deferrals = deferrals + $9, updated_us = $4 \
             WHERE review_id = $5 AND step = $6 AND key = $7 AND lease_gen = $8 AND state = 'running'",
        )
        .bind(when)
        .bind(message)
        .bind(attempt_back)
        .bind(now_us())
        .bind(lease.id.review_id.as_str())
        .bind(lease.id.step.as_str())
        .bind(lease.id.key.as_str())
        .bind(lease.generation)
        .bind(deferral)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        push_outbox(&mut tx, &lease.id, &lease.queue, when).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// How many times a step was deferred by rate limits.
    pub async fn deferrals(&self, id: &StepId) -> Result<i64, StoreError> {
        Ok(self.step_count(id, "deferrals").await?.unwrap_or(0))
    }

    /// Takes up to `limit` due jobs off the outbox to push them, and marks their steps
    /// pushed in the same statement (Postgres; one transaction on SQLite): the reconciler's
    /// clock for a job the queue lost starts now, and no mark is ever written while a
    /// worker claims the step it marks. A push that fails gives the jobs back with
    /// [`Store::unpushed`].
    pub async fn drain_outbox(&self, limit: i64) -> Result<Vec<Job>, StoreError> {
        let now = now_us();
        match self.dialect {
            // Asynchronous commit: rows a crashed Postgres forgets it deleted are pushed
            // again, and a job is only a wake-up.
            Dialect::Postgres => {
                let jobs = sqlx::query_as(
                    "WITH d AS (DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE not_before_us <= $1 \
                     ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) \
                     AND set_config('synchronous_commit', 'off', true) IS NOT NULL \
                     RETURNING review_id, step, key, queue), \
                     m AS (UPDATE steps s SET pushed_us = $1 FROM d \
                     WHERE s.review_id = d.review_id AND s.step = d.step AND s.key = d.key) \
                     SELECT d.review_id, d.step, d.key, d.queue, \
                     (SELECT trace_id FROM reviews r WHERE r.id = d.review_id) AS trace_id FROM d",
                )
                .bind(now)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
                Ok(jobs)
            }
            Dialect::Sqlite => {
                let mut tx = self.write_tx().await?;
                let jobs: Vec<Job> = sqlx::query_as(
                    "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE not_before_us <= $1 ORDER BY id \
                     LIMIT $2) \
                     RETURNING review_id, step, key, queue, \
                     (SELECT trace_id FROM reviews r WHERE r.id = outbox.review_id) AS trace_id",
                )
                .bind(now)
                .bind(limit)
                .fetch_all(&mut *tx)
                .await?;
                mark(&mut tx, &jobs, Some(now), self.dialect).await?;
                tx.commit().await?;
                Ok(jobs)
            }
        }
    }

    /// Gives back jobs whose push failed: their steps count as never pushed, so the
    /// reconciler's next pass pushes them again (without waiting for a stale push).
    pub async fn unpushed(&self, jobs: &[Job]) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        mark(&mut tx, jobs, None, self.dialect).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The reconciler: steps whose job the queue may have lost — queued and not pushed
    /// for `stale_us`, or running with an expired lease — get a fresh outbox row.
    /// Returns how many were re-enqueued.
    pub async fn requeue_lost(&self, stale_us: i64) -> Result<u64, StoreError> {
        let now = now_us();
        let mut tx = self.write_tx().await?;
        let rows = sqlx::query(
            "SELECT review_id, step, key, queue, attempts FROM steps s \
             WHERE ((state = 'queued' AND not_before_us <= $1 AND COALESCE(pushed_us, 0) < $2) \
                OR (state = 'running' AND lease_until_us < $1)) \
               AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.review_id = s.review_id AND o.step = s.step AND o.key = s.key) \
             LIMIT 1000",
        )
        .bind(now)
        .bind(now - stale_us)
        .fetch_all(&mut *tx)
        .await?;
        let mut n = 0;
        for r in rows {
            let id = step_id(&r)?;
            let queue: String = r.try_get("queue")?;
            let attempts: i64 = r.try_get("attempts")?;
            // A step that was claimed before and did not finish may have killed its worker:
            // it is retried alone (see `isolated_queue`).
            let queue = if attempts > 0 {
                isolated_queue(&queue)
            } else {
                queue
            };
            push_outbox(&mut tx, &id, &queue, now).await?;
            sqlx::query(
                "UPDATE steps SET pushed_us = $1 WHERE review_id = $2 AND step = $3 AND key = $4",
            )
            .bind(now)
            .bind(id.review_id.as_str())
            .bind(id.step.as_str())
            .bind(id.key.as_str())
            .execute(&mut *tx)
            .await?;
            n += 1;
        }
        tx.commit().await?;
        Ok(n)
    }

    /// Reviews past their deadline get their judge now (missing parts judged inconclusive).
    pub async fn judge_overdue(&self) -> Result<u64, StoreError> {
        let now = now_us();
        let mut tx = self.write_tx().await?;
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM reviews r WHERE status = 'running' AND deadline_us IS NOT NULL AND deadline_us < $1 \
             AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.review_id = r.id AND s.step = 'judge') LIMIT 100",
        )
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        let mut n = 0;
        for id in ids {
            if insert_judge(&mut tx, &id, now).await? {
                n += 1;
            }
        }
        tx.commit().await?;
        Ok(n)
    }

    pub async fn steps_of(&self, review_id: &str) -> Result<Vec<StepRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT review_id, step, key, queue, state, attempts, lease_gen, pipeline, result, error, created_us \
             FROM steps WHERE review_id = $1 ORDER BY created_us, step, key",
        )
        .bind(review_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok(StepRow {
                    id: step_id(&r)?,
                    queue: r.try_get("queue")?,
                    state: r.try_get("state")?,
                    attempts: r.try_get("attempts")?,
                    lease_gen: r.try_get("lease_gen")?,
                    pipeline: r.try_get::<i64, _>("pipeline")? != 0,
                    result: r.try_get("result")?,
                    error: r.try_get("error")?,
                    created_us: r.try_get("created_us")?,
                })
            })
            .collect()
    }

    /// The review's request as submitted (JSON).
    pub async fn review_request(&self, review_id: &str) -> Result<Option<String>, StoreError> {
        let request: Option<Option<String>> =
            sqlx::query_scalar("SELECT request FROM reviews WHERE id = $1")
                .bind(review_id)
                .fetch_optional(&self.pool)
                .await?;
        request.ok_or_else(|| StoreError::NotFound(format!("review {review_id}")))
    }

    /// Per queue, how many steps are queued and how many running (metrics); a queue and
    /// state with none is not listed.
    pub async fn pipeline_depth(&self) -> Result<Vec<(String, String, i64)>, StoreError> {
        // Only the live states: the queue's depth is what waits or runs now. The finished
        // states grow with history (and counting them scanned the whole table each tick).
        let rows = sqlx::query(
            "SELECT queue, state, COUNT(*) AS steps FROM steps WHERE state IN ('queued', 'running') \
             GROUP BY queue, state",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok((
                    r.try_get("queue")?,
                    r.try_get("state")?,
                    r.try_get("steps")?,
                ))
            })
            .collect()
    }
}

impl Store {
    /// Per queue, when its oldest queued step was last queued (microseconds since the
    /// epoch); a queue with none queued is not listed.
    pub async fn queue_oldest(&self) -> Result<Vec<(String, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT queue, MIN(updated_us) AS oldest_us FROM steps WHERE state = 'queued' GROUP BY queue",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| Ok((r.try_get("queue")?, r.try_get("oldest_us")?)))
            .collect()
    }
}

/// The queue where steps tried before run one at a time per worker. A poison job (one that
/// kills its worker) would otherwise be re-enqueued with the neighbours it killed, fetched
/// with them again and kill them again, until they were dead-lettered with it.
pub fn isolated_queue(queue: &str) -> String {
    if queue.ends_with(ISOLATED_SUFFIX) {
        queue.to_string()
    } else {
        format!("{queue}{ISOLATED_SUFFIX}")
    }
}

pub const ISOLATED_SUFFIX: &str = "-isolated";

pub(crate) async fn insert_review(
    tx: &mut Tx<'_>,
    r: &NewPipelineReview,
    admitted_with: Option<&NewStep>,
) -> Result<Vec<String>, StoreError> {
    let now_text = now();
    let (status, admitted_us) = match admitted_with {
        Some(_) => ("running", Some(now_us())),
        None => ("queued", None),
    };
    sqlx::query(
        "INSERT INTO reviews (id, created_at, repository, base_rev, head_rev, status, tenant_id, priority, \
         batch_id, pr_key, request, created_us, deadline_us, trace_id, admitted_us) \
         VALUES ($1, $2, $3, $4, $5, $14, $6, $7, $8, $9, $10, $11, $12, $13, $15)",
    )
    .bind(r.id.as_str())
    .bind(now_text.as_str())
    .bind(r.repository.as_str())
    .bind(r.base_rev.as_str())
    .bind(r.head_rev.as_str())
    .bind(r.tenant_id.as_deref())
    .bind(r.priority)
    .bind(r.batch_id.as_deref())
    .bind(r.pr_key.as_deref())
    .bind(r.request.as_str())
    .bind(now_us())
    .bind(r.deadline_us)
    .bind(r.trace_id.as_deref())
    .bind(status)
    .bind(admitted_us)
    .execute(&mut **tx)
    .await?;
    if let Some(first) = admitted_with {
        insert_steps(tx, &r.id, std::slice::from_ref(first)).await?;
    }
    let mut superseded = Vec::new();
    if let Some(pr) = &r.pr_key {
        let older: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM reviews WHERE pr_key = $1 AND id <> $2 AND superseded_by IS NULL \
             AND status IN ('queued', 'running') AND COALESCE(tenant_id, '') = COALESCE($3, '')",
        )
        .bind(pr.as_str())
        .bind(r.id.as_str())
        .bind(r.tenant_id.as_deref())
        .fetch_all(&mut **tx)
        .await?;
        for old in older {
            sqlx::query("UPDATE reviews SET superseded_by = $1, status = 'superseded', finished_at = $2 WHERE id = $3")
                .bind(r.id.as_str())
                .bind(now_text.as_str())
                .bind(old.as_str())
                .execute(&mut **tx)
                .await?;
            sqlx::query("UPDATE steps SET state = 'cancelled', updated_us = $1 WHERE review_id = $2 AND state = 'queued'")
                .bind(now_us())
                .bind(old.as_str())
                .execute(&mut **tx)
                .await?;
            sqlx::query("DELETE FROM outbox WHERE review_id = $1")
                .bind(old.as_str())
                .execute(&mut **tx)
                .await?;
            superseded.push(old);
        }
    }
    Ok(superseded)
}

/// Serialises submissions of one tenant, so two of them never both pass its cap. SQLite's
/// write transaction (`BEGIN IMMEDIATE`) already holds the only write lock.
pub(crate) async fn lock_tenant(
    tx: &mut Tx<'_>,
    dialect: Dialect,
    tenant_id: &str,
) -> Result<(), StoreError> {
    if dialect == Dialect::Postgres {
        sqlx::query("SELECT id FROM tenants WHERE id = $1 FOR UPDATE")
            .bind(tenant_id)
            .fetch_optional(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Fails with [`StoreError::QueueFull`] when the tenant's unfinished reviews, counting the
/// `requested` ones just inserted in `tx`, pass `limit` (the caller then drops `tx`).
pub(crate) async fn within_cap(
    tx: &mut Tx<'_>,
    tenant_id: &str,
    requested: i64,
    limit: i64,
) -> Result<(), StoreError> {
    let unfinished = unfinished(tx, Unfinished::Reviews, tenant_id).await?;
    if unfinished > limit {
        return Err(StoreError::QueueFull {
            unfinished: unfinished - requested,
            requested,
            limit,
        });
    }
    Ok(())
}

/// What a tenant's cap counts: its reviews or its questions not yet ended.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Unfinished {
    Reviews,
    Questions,
}

/// The tenant's unfinished (queued or running) reviews or questions, as `tx` sees them
/// (the ones it just inserted included).
pub(crate) async fn unfinished(
    tx: &mut Tx<'_>,
    what: Unfinished,
    tenant_id: &str,
) -> Result<i64, StoreError> {
    let sql = match what {
        Unfinished::Reviews => {
            "SELECT COUNT(*) FROM reviews WHERE tenant_id = $1 AND status IN ('queued', 'running')"
        }
        Unfinished::Questions => {
            "SELECT COUNT(*) FROM questions WHERE tenant_id = $1 AND status IN ('queued', 'running')"
        }
    };
    Ok(sqlx::query_scalar(sql)
        .bind(tenant_id)
        .fetch_one(&mut **tx)
        .await?)
}

/// The steps' writes that are grouped (`group.rs`), per store.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    pub(crate) commits: Lane<(Lease, Outcome), Committed>,
    pub(crate) claims: Lane<ClaimAsk, Claim>,
}

/// One claim as asked ([`Store::claim_from`]'s arguments).
#[derive(Debug, Clone)]
pub(crate) struct ClaimAsk {
    id: StepId,
    owner: String,
    lease_for_us: i64,
    max_attempts: i64,
    shared_queue: bool,
}

/// A step that starts nothing, closes no pipeline and writes no trace: on Postgres its
/// commit is one statement.
fn is_leaf(outcome: &Outcome) -> bool {
    outcome.next.is_empty() && !outcome.closes_pipeline && outcome.trace.is_empty()
}

/// A step's commit inside `tx`: the fenced write (nothing else when it matches nothing:
/// [`Committed::Conflict`]), its next steps and outbox rows, the fan-in, the trace and the
/// review's end.
async fn commit_in(
    tx: &mut Tx<'_>,
    lease: &Lease,
    outcome: &Outcome,
) -> Result<Committed, StoreError> {
    let now = now_us();
    // The fenced write and the review's status in one round trip.
    let done = sqlx::query(
        "UPDATE steps SET state = 'done', result = $1, lease_until_us = NULL, updated_us = $2 \
         WHERE review_id = $3 AND step = $4 AND key = $5 AND lease_gen = $6 AND state = 'running' \
         RETURNING (SELECT status FROM reviews WHERE id = $3) AS status",
    )
    .bind(outcome.result.as_str())
    .bind(now)
    .bind(lease.id.review_id.as_str())
    .bind(lease.id.step.as_str())
    .bind(lease.id.key.as_str())
    .bind(lease.generation)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(done) = done else {
        return Ok(Committed::Conflict);
    };
    let status: Option<String> = done.try_get("status")?;
    let cancelled = !matches!(status.as_deref(), Some("running" | "queued"));
    let mut jobs = 0;
    let mut judge_enqueued = false;
    if !cancelled {
        let pipelines = outcome.next.iter().filter(|s| s.pipeline).count() as i64;
        if pipelines > 0 {
            sqlx::query("UPDATE reviews SET open_pipelines = open_pipelines + $1 WHERE id = $2")
                .bind(pipelines)
                .bind(lease.id.review_id.as_str())
                .execute(&mut **tx)
                .await?;
        }
        jobs += insert_steps(tx, &lease.id.review_id, &outcome.next).await?;
        if outcome.closes_pipeline {
            judge_enqueued = fan_in(tx, &lease.id.review_id, now).await?;
            jobs += usize::from(judge_enqueued);
        }
    }
    if !outcome.trace.is_empty() {
        crate::review::insert_trace(tx, &lease.id.review_id, &outcome.run_id, &outcome.trace)
            .await?;
    }
    if let Some((status, result)) = &outcome.finish {
        sqlx::query(
            "UPDATE reviews SET status = $1, result = $2, finished_at = $3 WHERE id = $4 \
             AND status NOT IN ('superseded', 'cancelled')",
        )
        .bind(status.as_str())
        .bind(result.as_str())
        .bind(crate::sql::now())
        .bind(lease.id.review_id.as_str())
        .execute(&mut **tx)
        .await?;
    }
    Ok(Committed::Done {
        judge_enqueued,
        jobs,
    })
}

/// The commits of leaves (steps that start nothing and write no trace; one or several, no
/// two of one review) in one statement, on Postgres: one round trip (and, outside a
/// transaction, one transaction with no BEGIN and COMMIT of its own). Each is fenced by its
/// own lease generation ([`Committed::Conflict`] when it matches nothing); a review a leaf
/// ends is ended only when that leaf's write matched (the join on `s`), and never over a
/// superseded or cancelled one, as in [`commit_in`]. SQLite has no writing CTE; it takes
/// [`commit_in`]. Answers in the order of `items`.
async fn commit_leaves<'e, E>(
    exec: E,
    items: &[(&Lease, &Outcome)],
) -> Result<Vec<Committed>, StoreError>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let sql = format!(
        "WITH j(review_id, step, key, gen, result, finishes, status, review_result) AS (VALUES {}), \
         s AS (UPDATE steps SET state = 'done', result = j.result, lease_until_us = NULL, updated_us = $1 \
           FROM j WHERE steps.review_id = j.review_id AND steps.step = j.step AND steps.key = j.key \
           AND steps.lease_gen = j.gen AND steps.state = 'running' \
           RETURNING steps.review_id, steps.step, steps.key), \
         r AS (UPDATE reviews SET status = j.status, result = j.review_result, finished_at = $2 \
           FROM j JOIN s ON s.review_id = j.review_id AND s.step = j.step AND s.key = j.key \
           WHERE j.finishes = 1 AND reviews.id = j.review_id \
           AND reviews.status NOT IN ('superseded', 'cancelled') RETURNING reviews.id) \
         SELECT review_id, step, key FROM s",
        crate::sql::values_rows_from(3, items.len(), 8)
    );
    let mut q = sqlx::query(trusted(sql))
        .bind(now_us())
        .bind(crate::sql::now());
    for (lease, outcome) in items {
        let (finishes, status, result) = match &outcome.finish {
            Some((status, result)) => (1_i64, status.as_str(), result.as_str()),
            None => (0, "", ""),
        };
        q = q
            .bind(lease.id.review_id.as_str())
            .bind(lease.id.step.as_str())
            .bind(lease.id.key.as_str())
            .bind(lease.generation)
            .bind(outcome.result.as_str())
            .bind(finishes)
            .bind(status)
            .bind(result);
    }
    let mut written = std::collections::HashSet::new();
    for row in q.fetch_all(exec).await? {
        written.insert(step_id(&row)?);
    }
    Ok(items
        .iter()
        .map(|(lease, _)| {
            if written.contains(&lease.id) {
                Committed::Done {
                    judge_enqueued: false,
                    jobs: 0,
                }
            } else {
                Committed::Conflict
            }
        })
        .collect())
}

/// A claim's lease from the row its UPDATE returned (`lease_gen, attempts, input, queue,
/// pipeline`).
fn lease_of(row: &sqlx::any::AnyRow, id: StepId, owner: String) -> Result<Lease, StoreError> {
    Ok(Lease {
        id,
        generation: row.try_get("lease_gen")?,
        attempt: row.try_get("attempts")?,
        input: row.try_get("input")?,
        queue: row.try_get("queue")?,
        pipeline: row.try_get::<i64, _>("pipeline")? != 0,
        owner,
    })
}

/// The step a row names (`review_id, step, key`).
fn step_id(row: &sqlx::any::AnyRow) -> Result<StepId, StoreError> {
    Ok(StepId {
        review_id: row.try_get("review_id")?,
        step: row.try_get("step")?,
        key: row.try_get("key")?,
    })
}

fn select_step_for_update(dialect: Dialect) -> String {
    let lock = match dialect {
        Dialect::Postgres => " FOR UPDATE",
        Dialect::Sqlite => "",
    };
    format!(
        "SELECT state, attempts, lease_gen, lease_until_us, not_before_us, error, lease_owner, queue FROM steps \
         WHERE review_id = $1 AND step = $2 AND key = $3{lock}"
    )
}

pub(crate) type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

/// A claim's new lease generation: one more than the last, and never less than the claim's
/// time in µs (`$3`). A claim committed asynchronously and lost with a crashed Postgres can
/// then never hand its generation to a later claim: a worker still holding it stays fenced.
const NEXT_GENERATION: &str = "CASE WHEN lease_gen + 1 > $3 THEN lease_gen + 1 ELSE $3 END";

/// Makes the statement's own (implicit) transaction commit without waiting for its WAL
/// flush, on Postgres; nothing on SQLite. For statements whose loss in a Postgres crash is
/// harmless (a claim, an outbox drain, a push mark): the next synchronous commit, a step's
/// result, flushes them anyway.
fn async_commit(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => " AND set_config('synchronous_commit', 'off', true) IS NOT NULL",
        Dialect::Sqlite => "",
    }
}

async fn push_outbox(
    tx: &mut Tx<'_>,
    id: &StepId,
    queue: &str,
    not_before_us: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO outbox (review_id, step, key, queue, not_before_us, created_us) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id.review_id.as_str())
    .bind(id.step.as_str())
    .bind(id.key.as_str())
    .bind(queue)
    .bind(not_before_us)
    .bind(now_us())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Inserts steps that do not exist yet, each with its outbox row. Returns how many.
async fn insert_steps(
    tx: &mut Tx<'_>,
    review_id: &str,
    steps: &[NewStep],
) -> Result<usize, StoreError> {
    let now = now_us();
    let mut n = 0;
    for s in steps {
        let inserted = sqlx::query(
            "INSERT INTO steps (review_id, step, key, queue, state, pipeline, input, not_before_us, created_us, updated_us) \
             VALUES ($1, $2, $3, $4, 'queued', $5, $6, $7, $8, $8) ON CONFLICT (review_id, step, key) DO NOTHING",
        )
        .bind(review_id)
        .bind(s.step.as_str())
        .bind(s.key.as_str())
        .bind(s.queue.as_str())
        .bind(i64::from(s.pipeline))
        .bind(s.input.as_deref())
        .bind(s.not_before_us)
        .bind(now)
        .execute(&mut **tx)
        .await?;
        if inserted.rows_affected() == 1 {
            let id = StepId {
                review_id: review_id.into(),
                step: s.step.clone(),
                key: s.key.clone(),
            };
            push_outbox(tx, &id, &s.queue, s.not_before_us.max(now)).await?;
            n += 1;
        }
    }
    Ok(n)
}

async fn insert_judge(tx: &mut Tx<'_>, review_id: &str, _now: i64) -> Result<bool, StoreError> {
    Ok(insert_steps(tx, review_id, &[NewStep::new(JUDGE_STEP, JUDGE_QUEUE)]).await? == 1)
}

/// One finding pipeline ended: the guarded decrement, and the judge when it was the last.
async fn fan_in(tx: &mut Tx<'_>, review_id: &str, now: i64) -> Result<bool, StoreError> {
    let left: i64 = sqlx::query_scalar(
        "UPDATE reviews SET open_pipelines = open_pipelines - 1 WHERE id = $1 AND open_pipelines > 0 \
         RETURNING open_pipelines",
    )
    .bind(review_id)
    .fetch_optional(&mut **tx)
    .await?
    .unwrap_or(-1);
    if left == 0 {
        insert_judge(tx, review_id, now).await
    } else {
        Ok(false)
    }
}

/// Ends a step without a result (failed or dead) and closes its branch: a pipeline step
/// counts in the fan-in; a review-level step (or the judge) sends the review to the judge,
/// which names the failure. A dead judge is recorded by the judge's caller.
async fn close_branch(
    tx: &mut Tx<'_>,
    id: &StepId,
    state: &str,
    message: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let pipeline: i64 = sqlx::query_scalar(
        "UPDATE steps SET state = $1, error = $2, lease_until_us = NULL, updated_us = $3 \
         WHERE review_id = $4 AND step = $5 AND key = $6 RETURNING pipeline",
    )
    .bind(state)
    .bind(message)
    .bind(now)
    .bind(id.review_id.as_str())
    .bind(id.step.as_str())
    .bind(id.key.as_str())
    .fetch_one(&mut **tx)
    .await?;
    if id.step == JUDGE_STEP {
        return Ok(false);
    }
    if pipeline != 0 {
        fan_in(tx, &id.review_id, now).await
    } else {
        insert_judge(tx, &id.review_id, now).await
    }
}

/// Sets (or clears) the push time of the jobs' steps.
async fn mark(
    tx: &mut Tx<'_>,
    jobs: &[Job],
    at: Option<i64>,
    dialect: Dialect,
) -> Result<(), StoreError> {
    for chunk in jobs.chunks(300) {
        // Asynchronous commit on Postgres: a forgotten mark only makes the reconciler push
        // the job once more.
        let sql = format!(
            "UPDATE steps SET pushed_us = $1 WHERE (review_id, step, key) IN (VALUES {}){}",
            crate::sql::values_rows_from(2, chunk.len(), 3),
            async_commit(dialect)
        );
        let mut q = sqlx::query(trusted(sql)).bind(at);
        for j in chunk {
            q = q
                .bind(j.review_id.as_str())
                .bind(j.step.as_str())
                .bind(j.key.as_str());
        }
        q.execute(&mut **tx).await?;
    }
    Ok(())
}
