//! One job: claim the step's lease, run its handler, commit through the lease.

use std::sync::Arc;

use std::time::{Duration, Instant};
use tracing::Instrument;

use proven_store::{Claim, Committed, Job, Lease, Outcome, Retry, Store, StoreError};

use crate::metrics_names as m;
use crate::{BoxFuture, MAX_ATTEMPTS};

/// A step handler's failure, with its retry policy.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StepError {
    /// Will not succeed on retry: the branch closes, and the judge names it.
    #[error("{0}")]
    Permanent(String),
    /// May succeed later: retried after `after`, spending an attempt.
    #[error("{message} (retry in {after:?})")]
    Retryable { message: String, after: Duration },
    /// Rate-limited by a service: retried after `after` without spending an attempt.
    #[error("rate limited: {message} (retry in {after:?})")]
    RateLimited { message: String, after: Duration },
    /// Waits for other steps of its review (its input is not complete yet): run again after
    /// `after`, spending no attempt. The step bounds its own waiting (the store counts each
    /// wait in `deferrals`) and then goes on with what there is.
    #[error("waiting: {message} (again in {after:?})")]
    Waiting { message: String, after: Duration },
}

/// The failure of the machinery around a step (the store), not of the step.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// The review's step handlers.
pub trait Steps: Send + Sync + 'static {
    /// Runs one step under its lease.
    fn run<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Outcome, StepError>>;
    /// The judge itself was dead-lettered: the review must still end, saying so.
    fn judge_dead_lettered<'a>(
        &'a self,
        review_id: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// What executing a job did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Executed {
    Committed {
        judge_enqueued: bool,
    },
    /// The lease was taken over while running: the result was dropped.
    Conflict,
    Finished,
    Busy,
    Cancelled,
    Missing,
    NotYet,
    DeadLettered,
    Failed,
    RetryScheduled,
    /// Tried before: sent to its isolated queue instead of running here.
    Isolated,
}

impl Executed {
    fn outcome_label(&self) -> &'static str {
        match self {
            Executed::Committed { .. } => "ok",
            Executed::Conflict => "conflict",
            Executed::Finished | Executed::Busy | Executed::NotYet | Executed::Missing => "skipped",
            Executed::Cancelled => "cancelled",
            Executed::DeadLettered => "dead_letter",
            Executed::Failed => "failed",
            Executed::RetryScheduled => "retry",
            Executed::Isolated => "isolated",
        }
    }
}

pub struct Executor<S> {
    store: Store,
    steps: Arc<S>,
    owner: String,
    lease_for: Duration,
    /// Longest run of one step; past it the handler is dropped (a child process it runs
    /// goes with it), the lease released and the step failed by name.
    deadline: Duration,
    wake: Option<crate::reconciler::Wake>,
    ended: Option<Arc<tokio::sync::Notify>>,
}

/// The default [`Executor::with_step_deadline`] (`PROVEN_STEP_DEADLINE_SECONDS`).
pub const STEP_DEADLINE: Duration = Duration::from_secs(3600);

impl<S: Steps> Executor<S> {
    /// `owner` names this worker process (unique per start); `lease_for` is how long a
    /// claim holds without renewal (renewed every third of it while the step runs).
    pub fn new(store: Store, steps: Arc<S>, owner: String, lease_for: Duration) -> Executor<S> {
        Executor {
            store,
            steps,
            owner,
            lease_for,
            deadline: STEP_DEADLINE,
            wake: None,
            ended: None,
        }
    }

    /// Sets the longest run of one step (`PROVEN_STEP_DEADLINE_SECONDS`).
    pub fn with_step_deadline(mut self, deadline: Duration) -> Executor<S> {
        self.deadline = deadline;
        self
    }

    /// Wakes this process's pusher after each commit, so the next step's job leaves at once
    /// instead of at the next tick.
    pub fn with_wake(mut self, wake: crate::reconciler::Wake) -> Executor<S> {
        self.wake = Some(wake);
        self
    }

    /// Notified (`notify_one`) after a step that may have ended its review: a commit that
    /// finishes it, or any end of a judge step. Whoever waits for a review's end re-reads
    /// it then, instead of polling the store.
    pub fn with_review_ended(mut self, ended: Arc<tokio::sync::Notify>) -> Executor<S> {
        self.ended = Some(ended);
        self
    }

    fn review_may_have_ended(&self) {
        if let Some(wake) = &self.wake {
            wake.wake_admission();
        }
        if let Some(ended) = &self.ended {
            ended.notify_one();
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    pub async fn execute(&self, job: &Job) -> Result<Executed, ExecError> {
        let lease = match self.claim(job).await? {
            Ok(lease) => lease,
            Err(executed) => return Ok(executed),
        };
        let span = tracing::info_span!(
            "job",
            step = %job.step,
            key = %job.key,
            review = %job.review_id,
            attempt = lease.attempt
        );
        async move {
            tracing::info!(owner = %self.owner, generation = lease.generation, "claimed");
            metrics::histogram!(m::STEP_ATTEMPTS, "step" => step_label(&job.step))
                .record(lease.attempt as f64);
            let started = Instant::now();
            let result = self.run_renewing(&lease).await;
            let finishes = matches!(&result, Ok(outcome) if outcome.finish.is_some());
            let (executed, wrote_jobs) = self.record(&lease, result).await?;
            tracing::info!(step = %job.step, review = %job.review_id, outcome = ?executed, "step ended");
            if wrote_jobs && let Some(wake) = &self.wake {
                wake.wake();
            }
            if finishes || job.step == proven_store::JUDGE_STEP {
                self.review_may_have_ended();
            }
            let label = executed.outcome_label();
            metrics::counter!(m::STEPS_TOTAL, "step" => step_label(&job.step), "outcome" => label)
                .increment(1);
            metrics::histogram!(
                m::STEP_DURATION_SECONDS,
                "step" => step_label(&job.step),
                "outcome" => label
            )
            .record(started.elapsed().as_secs_f64());
            Ok(executed)
        }
        .instrument(span)
        .await
    }

    /// Claims the job's step: its lease, or what became of the job instead (finished,
    /// busy, sent to its isolated queue, dead-lettered…).
    async fn claim(&self, job: &Job) -> Result<Result<Lease, Executed>, ExecError> {
        let lease_us = i64::try_from(self.lease_for.as_micros()).unwrap_or(i64::MAX);
        let shared = !job.queue.ends_with(proven_store::ISOLATED_SUFFIX);
        let claim = self
            .store
            .claim_from(&job.id(), &self.owner, lease_us, MAX_ATTEMPTS, shared)
            .await?;
        Ok(Err(match claim {
            Claim::Run(lease) => return Ok(Ok(lease)),
            Claim::Finished => Executed::Finished,
            Claim::Busy => Executed::Busy,
            Claim::Cancelled => Executed::Cancelled,
            Claim::Missing => Executed::Missing,
            Claim::NotYet => Executed::NotYet,
            Claim::Isolated => {
                if let Some(wake) = &self.wake {
                    wake.wake();
                }
                Executed::Isolated
            }
            Claim::DeadLettered { attempts } => {
                tracing::warn!(step = %job.step, key = %job.key, review = %job.review_id, attempts, "dead-lettered");
                metrics::counter!(m::DEAD_LETTERS_TOTAL, "step" => step_label(&job.step))
                    .increment(1);
                if job.step == proven_store::JUDGE_STEP {
                    self.steps.judge_dead_lettered(&job.review_id).await?;
                    self.review_may_have_ended();
                }
                Executed::DeadLettered
            }
        }))
    }

    /// Records what the handler returned, fenced by the lease: the commit, the failure, or
    /// the retry it asks for. Also whether the commit wrote jobs that are due now: only
    /// then is the pusher woken (a step that ends its branch writes none, and its wake
    /// would cost a drain).
    async fn record(
        &self,
        lease: &Lease,
        result: Result<Outcome, StepError>,
    ) -> Result<(Executed, bool), ExecError> {
        Ok(match result {
            Ok(outcome) => match self.store.commit(lease, &outcome).await? {
                Committed::Done {
                    judge_enqueued,
                    jobs,
                } => (Executed::Committed { judge_enqueued }, jobs > 0),
                Committed::Conflict => (Executed::Conflict, false),
            },
            Err(StepError::Permanent(message)) => {
                tracing::warn!(%message, "step failed");
                match self.store.fail(lease, &message).await? {
                    Committed::Done { judge_enqueued, .. } => (Executed::Failed, judge_enqueued),
                    Committed::Conflict => (Executed::Conflict, false),
                }
            }
            Err(StepError::Retryable { message, after }) => (
                self.retry(lease, after, Retry::Attempt, &message).await?,
                false,
            ),
            Err(StepError::RateLimited { message, .. })
                if self.store.deferrals(&lease.id).await? >= crate::MAX_DEFERRALS =>
            {
                let message = format!(
                    "{message}: still refused after {} deferrals",
                    crate::MAX_DEFERRALS
                );
                match self.store.fail(lease, &message).await? {
                    Committed::Done { .. } => (Executed::Failed, false),
                    Committed::Conflict => (Executed::Conflict, false),
                }
            }
            Err(StepError::RateLimited { message, after }) => (
                self.retry(lease, after, Retry::Deferral, &message).await?,
                false,
            ),
            Err(StepError::Waiting { message, after }) => (
                self.retry(lease, after, Retry::Wait, &message).await?,
                false,
            ),
        })
    }

    /// Gives the step back to its queue after `after`, spending what `spends` says.
    async fn retry(
        &self,
        lease: &Lease,
        after: Duration,
        spends: Retry,
        message: &str,
    ) -> Result<Executed, ExecError> {
        let delay = i64::try_from(after.as_micros()).unwrap_or(i64::MAX);
        Ok(
            if self
                .store
                .retry_later(lease, delay, spends, message)
                .await?
            {
                Executed::RetryScheduled
            } else {
                Executed::Conflict
            },
        )
    }

    /// Runs the handler while renewing the lease, so a long step is not presumed dead, but
    /// never past the step deadline: a hung step (a tarpit, a stuck service) would otherwise
    /// renew its lease forever and hold its slot for good. Past the deadline the handler is
    /// dropped and the step fails by name; the caller's `fail` releases the lease.
    async fn run_renewing(&self, lease: &Lease) -> Result<Outcome, StepError> {
        let lease_us = i64::try_from(self.lease_for.as_micros()).unwrap_or(i64::MAX);
        let run = self.steps.run(lease);
        tokio::pin!(run);
        let deadline = tokio::time::sleep(self.deadline);
        tokio::pin!(deadline);
        let mut tick = tokio::time::interval(self.lease_for / 3);
        tick.tick().await;
        loop {
            tokio::select! {
                out = &mut run => return out,
                _ = &mut deadline => {
                    metrics::counter!(m::STEP_DEADLINES_TOTAL, "step" => step_label(&lease.id.step)).increment(1);
                    return Err(StepError::Permanent(format!(
                        "step {} passed its deadline of {} s (PROVEN_STEP_DEADLINE_SECONDS): stopped, its slot freed",
                        lease.id.step,
                        self.deadline.as_secs()
                    )));
                }
                _ = tick.tick() => {
                    if let Ok(false) = self.store.renew(lease, lease_us).await {
                        tracing::warn!("lease taken over while running; the result will be dropped");
                    }
                }
            }
        }
    }
}

/// Step names are a closed set in practice; anything else is folded so labels stay bounded.
fn step_label(step: &str) -> String {
    if step.len() <= 32
        && step
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'.' || b == b'_')
    {
        step.to_string()
    } else {
        "other".to_string()
    }
}
