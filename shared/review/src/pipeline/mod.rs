//! The review's steps as pipeline jobs: one handler per step, each reading its inputs from
//! the store and returning its result and the next steps. The same handlers serve the
//! service (Redis workers) and the embedded default (in-process queue).
//!
//! ```text
//! intake ─► plan ─► deps.collect ─┬─► deps.file (one finding pipeline per dependency file) ─┐
//!                                 └─(none)──────────────────────────────────────────────────┴─► judge
//! ```
//!
//! One file a part: the results the control steps pass each other (`wire`), intake and the
//! repository it reaches (`intake`), the plan (`plan`), the dependency evidence
//! (`evidence`), the model agents' steps (`agent_steps`) and the judge step (`judge`: the
//! rules are pure functions in [`crate::judge`]; this part writes H-MEM and the report);
//! [`registry`] maps every step name to what runs it.

mod agent_steps;
mod evidence;
mod intake;
mod judge;
mod plan;
pub mod registry;
mod wire;

use std::path::Path;
use std::sync::Arc;

use proven_config::Layers;
use proven_pipeline::{BoxFuture, Lease, Outcome, StepError, Steps};
use proven_report::{FailedService, Report, ReportKind, Status};
use proven_store::{ReviewStatus, StepRow, Store, StoreError};

pub(crate) use crate::outcome::retryable;
use crate::rows::result_of;
use wire::IntakeResult;

pub const INTAKE: &str = "intake";
pub const PLAN: &str = "plan";
pub const DEPS_COLLECT: &str = "deps.collect";
pub const DEPS_FILE: &str = "deps.file";
pub const JUDGE: &str = proven_store::JUDGE_STEP;
/// How long (from its creation) the Planner waits for unfinished dependency steps before it
/// plans without their findings. Waiting spends neither an attempt nor a rate-limit deferral.
pub const PLANNER_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

pub use proven_store::ReviewRequest;

/// The review's step handlers.
pub struct ReviewSteps {
    store: Store,
    layers: Layers,
    /// What a `repository` may name, how it is fetched, where mirrors live.
    sources: Arc<proven_source::Sources>,
    /// Docker, in processes that serve the sandbox queue.
    sandbox: Option<Arc<proven_sandbox::Sandbox>>,
    /// The model agents, when configured.
    agents: Option<Arc<crate::model::Agents>>,
    /// How long the Planner waits for the dependency evidence ([`PLANNER_WAIT`]).
    planner_wait: std::time::Duration,
    /// Every step this process runs, by name ([`registry`]).
    registry: std::collections::HashMap<&'static str, Arc<dyn registry::Step>>,
}

impl ReviewSteps {
    pub fn new(store: Store, layers: Layers, sources: proven_source::Sources) -> ReviewSteps {
        ReviewSteps {
            store,
            layers,
            sources: Arc::new(sources),
            sandbox: None,
            agents: None,
            planner_wait: PLANNER_WAIT,
            registry: registry::builtin(),
        }
    }

    /// Sets how long the Planner waits for unfinished dependency steps.
    pub fn with_planner_wait(mut self, wait: std::time::Duration) -> ReviewSteps {
        self.planner_wait = wait;
        self
    }

    /// Lets this process run the model agents' steps.
    pub fn with_agents(mut self, agents: Arc<crate::model::Agents>) -> ReviewSteps {
        self.agents = Some(agents);
        self
    }

    /// What the agents' steps need to know about the review: its intake, and the scope of
    /// its memory (the repository's identity and the tenant).
    async fn view(&self, review_id: &str) -> Result<(IntakeResult, MemoryScope), StepError> {
        let rows = self.results(review_id).await?;
        let intake: IntakeResult = result_of(&rows, INTAKE)?;
        let scope = self.memory_scope(review_id).await?;
        Ok((intake, scope))
    }

    async fn memory_scope(&self, review_id: &str) -> Result<MemoryScope, StepError> {
        let review = self.store.review(review_id).await.map_err(retryable)?;
        let tenant = self
            .store
            .review_tenant(review_id)
            .await
            .map_err(retryable)?
            .unwrap_or_default();
        Ok(MemoryScope {
            tenant,
            repository: memory_identity(&review.repository),
        })
    }

    /// Lets this process run `sandbox.run` steps.
    pub fn with_sandbox(mut self, sandbox: Arc<proven_sandbox::Sandbox>) -> ReviewSteps {
        self.sandbox = Some(sandbox);
        self
    }

    async fn results(&self, review_id: &str) -> Result<Vec<StepRow>, StepError> {
        self.store.steps_of(review_id).await.map_err(retryable)
    }
}

/// Where H-MEM records of a review live: its tenant's memory of its repository.
pub(crate) struct MemoryScope {
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

impl Steps for ReviewSteps {
    fn run<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Outcome, StepError>> {
        Box::pin(self.dispatch(lease))
    }

    fn judge_dead_lettered<'a>(
        &'a self,
        review_id: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let review = self.store.review(review_id).await?;
            let mut report = Report::new(ReportKind::Review, review.repository);
            report.review_id = Some(review_id.to_string());
            report.status = Status::Failed;
            report.failed_services.push(FailedService {
                service: JUDGE.into(),
                message: "dead-lettered: the judge crashed its worker every time".into(),
            });
            report.seal();
            let json = serde_json::to_string(&report).unwrap_or_default();
            self.store
                .finish_review(review_id, ReviewStatus::Failed, &json)
                .await
        })
    }
}

/// Shared handle for executors.
pub fn steps(store: Store, layers: Layers, sources: proven_source::Sources) -> Arc<ReviewSteps> {
    Arc::new(ReviewSteps::new(store, layers, sources))
}
