//! The review's steps as pipeline jobs: one handler per step, each reading its inputs from
//! the store and returning its result and the next steps. The same handlers serve the
//! service (Redis workers) and the embedded default (in-process queue).
//!
//! ```text
//! intake ─► plan ─► deps.collect ─┬─► deps.file (one finding pipeline per dependency file) ─┐
//!                                 └─(none)──────────────────────────────────────────────────┴─► judge
//! ```
//!
//! The control steps are [`crate::control`] (intake, the plan, the judge step), the
//! dependency evidence [`crate::flows::deps`]; [`registry`] maps every step name, the model
//! agents' included, to its `run`. The results the control steps pass each other are in
//! [`crate::core::wire`].

pub mod registry;

use std::collections::HashMap;
use std::sync::Arc;

use proven_config::Layers;
use proven_pipeline::{BoxFuture, Lease, Outcome, StepError, Steps};
use proven_report::{FailedService, Report, ReportKind, Status};
use proven_store::{ReviewStatus, Store, StoreError};

use crate::core::review::PLANNER_WAIT;
use crate::core::step::{Handler, StepContext};
use crate::core::step_name::{JUDGE, StepName};

pub use crate::core::step::memory_identity;
pub use proven_store::ReviewRequest;

/// The review's step handlers: the services every step may use, and every step this
/// process runs, by name ([`registry`]).
pub struct ReviewSteps {
    cx: StepContext,
    registry: HashMap<StepName, Handler>,
    /// Steps this process brings beside the built-in ones (a test's), by their stored name.
    extra: HashMap<&'static str, Handler>,
}

impl ReviewSteps {
    /// The services this process's steps use (what `proven-ask` answers questions with).
    pub fn context(&self) -> &StepContext {
        &self.cx
    }

    pub fn new(store: Store, layers: Layers, sources: proven_source::Sources) -> ReviewSteps {
        ReviewSteps {
            cx: StepContext {
                store,
                layers,
                sources: Arc::new(sources),
                sandbox: None,
                agents: None,
                planner_wait: PLANNER_WAIT,
                github: None,
            },
            registry: registry::builtin(),
            extra: HashMap::new(),
        }
    }

    /// Sets how long the Planner waits for unfinished dependency steps.
    pub fn with_planner_wait(mut self, wait: std::time::Duration) -> ReviewSteps {
        self.cx.planner_wait = wait;
        self
    }

    /// Lets this process run the model agents' steps.
    pub fn with_agents(mut self, agents: Arc<crate::core::model::Agents>) -> ReviewSteps {
        self.cx.agents = Some(agents);
        self
    }

    /// Makes this process the GitHub App: intake clones an installation's pull request with
    /// its token, and publications can post.
    pub fn with_github(mut self, github: Arc<proven_github::AppClient>) -> ReviewSteps {
        self.cx.github = Some(github);
        self
    }

    /// Lets this process run `sandbox.run` steps.
    pub fn with_sandbox(mut self, sandbox: Arc<proven_sandbox::Sandbox>) -> ReviewSteps {
        self.cx.sandbox = Some(sandbox);
        self
    }
}

impl ReviewSteps {
    /// Registers one more step under `name` (a step this process brings, or a test's).
    pub fn with_step(mut self, name: &'static str, handler: Handler) -> ReviewSteps {
        match StepName::parse(name) {
            Some(step) => self.registry.insert(step, handler),
            None => self.extra.insert(name, handler),
        };
        self
    }

    /// Runs the step the lease names, by the registry.
    async fn dispatch(&self, lease: &Lease) -> Result<Outcome, StepError> {
        let handler = match StepName::parse(&lease.id.step) {
            Some(step) => self.registry.get(&step),
            None => self.extra.get(lease.id.step.as_str()),
        };
        match handler {
            Some(handler) => handler.call(&self.cx, lease).await,
            None => Err(StepError::Permanent(format!(
                "unknown step {:?}",
                lease.id.step
            ))),
        }
    }
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
            let review = self.cx.store.review(review_id).await?;
            let mut report = Report::new(ReportKind::Review, review.repository);
            report.review_id = Some(review_id.to_string());
            report.status = Status::Failed;
            report.failed_services.push(FailedService {
                service: JUDGE.into(),
                message: "dead-lettered: the judge crashed its worker every time".into(),
            });
            report.seal();
            let json = serde_json::to_string(&report).unwrap_or_default();
            self.cx
                .store
                .finish_review(review_id, ReviewStatus::Failed, &json)
                .await
        })
    }
}

/// Shared handle for executors.
pub fn steps(store: Store, layers: Layers, sources: proven_source::Sources) -> Arc<ReviewSteps> {
    Arc::new(ReviewSteps::new(store, layers, sources))
}
