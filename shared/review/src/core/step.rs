//! The one shape every step has: an async `run(cx, lease)` over the services this process
//! holds ([`StepContext`]), returning the step's outcome. The registry
//! (`pipeline/registry.rs`) maps each [`StepName`](crate::core::step_name::StepName) to one
//! [`Handler`]; a step module exposes its `run` and imports neither another step nor the
//! registry.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use proven_config::Layers;
use proven_models::Cassette;
use proven_pipeline::{BoxFuture, Lease, Outcome, StepError};
use proven_sandbox::Sandbox;
use proven_store::{StepRow, Store};
use serde::de::DeserializeOwned;

use crate::core::model::Agents;
use crate::core::outcome::retryable;
use crate::core::rows::{result_of, step_result};
use crate::core::step_name::StepName;
use crate::core::wire::{IntakeResult, ReviewView};

/// What a step may use: the store, the settings, where repositories come from, and the
/// sandbox and the model agents when this process runs them.
#[derive(Clone)]
pub struct StepContext {
    pub store: Store,
    pub layers: Layers,
    /// What a `repository` may name, how it is fetched, where mirrors live.
    pub sources: Arc<proven_source::Sources>,
    /// Docker, in processes that serve the sandbox queue.
    pub sandbox: Option<Arc<Sandbox>>,
    /// The model agents, when configured.
    pub agents: Option<Arc<Agents>>,
    /// How long the Planner waits for unfinished dependency steps.
    pub planner_wait: Duration,
    /// The GitHub App (its installations' tokens), when this process is one.
    pub github: Option<Arc<proven_github::AppClient>>,
}

impl StepContext {
    /// The model agents, or a permanent error in a process that has none.
    pub fn agents(&self) -> Result<&Agents, StepError> {
        self.agents.as_deref().ok_or_else(|| {
            StepError::Permanent("the model agents are not configured in this process".into())
        })
    }

    /// The cassette of sample mode, when the agents record or replay one.
    pub fn cassette(&self) -> Option<&Arc<Cassette>> {
        self.agents.as_ref().and_then(|a| a.cassette())
    }

    /// Every step row of a review (a store error is retried).
    pub async fn rows(&self, review_id: &str) -> Result<Vec<StepRow>, StepError> {
        self.store.steps_of(review_id).await.map_err(retryable)
    }

    /// Where H-MEM records of a review live.
    pub async fn memory_scope(&self, review_id: &str) -> Result<MemoryScope, StepError> {
        let review = self.store.review(review_id).await.map_err(retryable)?;
        self.memory_scope_of(&review).await
    }

    /// Where H-MEM records of a review already read live (only its tenant is read).
    pub async fn memory_scope_of(
        &self,
        review: &proven_store::ReviewRow,
    ) -> Result<MemoryScope, StepError> {
        let tenant = self
            .store
            .review_tenant(&review.id)
            .await
            .map_err(retryable)?
            .unwrap_or_default();
        Ok(MemoryScope {
            tenant,
            repository: memory_identity(&review.repository),
        })
    }

    /// What a step after intake needs to know about its review: its rows, its intake and
    /// the scope of its memory.
    pub async fn review(&self, review_id: &str) -> Result<Review, StepError> {
        let rows = self.rows(review_id).await?;
        let intake: IntakeResult = result_of(&rows, StepName::Intake.as_str())?;
        let scope = self.memory_scope(review_id).await?;
        let changed = intake
            .facts
            .iter()
            .filter(|f| !f.binary)
            .map(|f| f.path.clone())
            .collect();
        Ok(Review {
            rows,
            intake,
            scope,
            changed,
        })
    }
}

/// A review as a step after intake reads it.
pub struct Review {
    pub rows: Vec<StepRow>,
    pub intake: IntakeResult,
    pub scope: MemoryScope,
    /// The changed files that are not binary.
    pub changed: Vec<String>,
}

impl Review {
    /// The review as the agents see it.
    pub fn view<'a>(&'a self, store: &'a Store) -> ReviewView<'a> {
        ReviewView {
            store,
            repository: &self.scope.repository,
            tenant: &self.scope.tenant,
            repository_dir: &self.intake.repository_dir,
            base: &self.intake.base.commit,
            head: &self.intake.head.commit,
            changed: &self.changed,
            resolve_before: self.intake.resolve_before,
        }
    }
}

/// Where H-MEM records of a review live: its tenant's memory of its repository.
pub struct MemoryScope {
    pub tenant: String,
    pub repository: String,
}

/// A repository's identity for memory: a local path made absolute first (a relative path
/// and its absolute spelling are one repository).
pub fn memory_identity(spec: &str) -> String {
    let path = Path::new(spec.strip_prefix("file://").unwrap_or(spec));
    let local = !spec.contains("://") || spec.starts_with("file://");
    let spec = match (local, std::fs::canonicalize(path)) {
        (true, Ok(absolute)) => absolute.display().to_string(),
        _ => spec.to_string(),
    };
    proven_domain::repository_identity(&spec)
}

/// A step after intake as it runs: the services, and its review read once for it.
pub struct ReviewStep<'a> {
    pub cx: &'a StepContext,
    /// The review as the agents see it.
    pub view: ReviewView<'a>,
    /// Every step row of the review, read when the step started.
    pub rows: &'a [StepRow],
}

impl ReviewStep<'_> {
    /// The model agents, or a permanent error in a process that has none.
    pub fn agents(&self) -> Result<&Agents, StepError> {
        self.cx.agents()
    }

    /// Docker, in processes that run the sandbox.
    pub fn sandbox(&self) -> Option<&Arc<Sandbox>> {
        self.cx.sandbox.as_ref()
    }

    /// The cassette of sample mode, when the agents record or replay one.
    pub fn cassette(&self) -> Option<&Arc<Cassette>> {
        self.cx.cassette()
    }

    /// What `step` recorded under this step's key (the step before it in its pipeline), or a
    /// permanent error naming `missing`.
    pub fn earlier<T: DeserializeOwned>(
        &self,
        step: StepName,
        lease: &Lease,
        missing: &str,
    ) -> Result<T, StepError> {
        step_result(self.rows, step.as_str(), &lease.id.key)
            .ok_or_else(|| StepError::Permanent(missing.to_string()))
    }
}

/// A control step's `run`, as the registry holds it.
pub type Run = for<'a> fn(&'a StepContext, &'a Lease) -> BoxFuture<'a, Result<Outcome, StepError>>;

/// The `run` of a step after intake (the model agents' steps and the sandbox steps they
/// start): it is handed its review.
pub type ReviewRun =
    for<'a> fn(&'a ReviewStep<'a>, &'a Lease) -> BoxFuture<'a, Result<Outcome, StepError>>;

#[derive(Clone, Copy)]
enum Runs {
    Control(Run),
    Review(ReviewRun),
}

/// One step as the registry runs it: its `run`, and whether its trace is written even when
/// it fails (the model agents' steps: each model call's usage, latency and cost, and the
/// guardrail's verdicts, are kept with a `step_failed` line naming the error).
#[derive(Clone, Copy)]
pub struct Handler {
    runs: Runs,
    keeps_failed_trace: bool,
}

impl Handler {
    /// A control step: its failure leaves no trace of its own.
    pub const fn control(run: Run) -> Handler {
        Handler {
            runs: Runs::Control(run),
            keeps_failed_trace: false,
        }
    }

    /// A model agent's step (or one it starts): handed its review; its trace survives a
    /// failure.
    pub const fn agent(run: ReviewRun) -> Handler {
        Handler {
            runs: Runs::Review(run),
            keeps_failed_trace: true,
        }
    }

    /// Runs the step.
    pub async fn call(&self, cx: &StepContext, lease: &Lease) -> Result<Outcome, StepError> {
        if !self.keeps_failed_trace {
            return self.runs(cx, lease).await;
        }
        let (result, mut lines) = crate::core::trace::capture(self.runs(cx, lease)).await;
        match &result {
            Err(StepError::Waiting { .. }) | Ok(_) => {}
            Err(e) => {
                lines.push((
                    "step_failed".into(),
                    serde_json::json!({"step": lease.id.step, "key": lease.id.key,
                                       "attempt": lease.attempt, "error": e.to_string()}),
                ));
                let run_id = uuid::Uuid::now_v7().to_string();
                if let Err(store_error) = cx
                    .store
                    .append_trace(&lease.id.review_id, &run_id, &lines)
                    .await
                {
                    tracing::warn!(%store_error, step = %lease.id.step, "the failed step's trace was not written");
                }
            }
        }
        result
    }

    async fn runs(&self, cx: &StepContext, lease: &Lease) -> Result<Outcome, StepError> {
        match self.runs {
            Runs::Control(run) => run(cx, lease).await,
            Runs::Review(run) => {
                let review = cx.review(&lease.id.review_id).await?;
                let step = ReviewStep {
                    cx,
                    view: review.view(&cx.store),
                    rows: &review.rows,
                };
                // The model calls the step makes are counted by the review's tenant.
                let tenant = step.view.tenant.to_string();
                proven_models::with_tenant(tenant, run(&step, lease)).await
            }
        }
    }
}

/// A step's `run` as the registry holds it: `run!(module::run)`.
#[macro_export]
macro_rules! run {
    ($run:path) => {
        |cx, lease| Box::pin($run(cx, lease))
    };
}
