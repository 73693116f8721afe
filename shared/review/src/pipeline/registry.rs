//! The registry: every step the review runs, by name, and what runs it. The only place a
//! step is wired in: adding a step is its own module and one line of `builtin` (or, for
//! a process that brings its own, one [`ReviewSteps::with_step`]). A step names the step
//! after it by its typed name; it never imports it.

use std::collections::HashMap;
use std::sync::Arc;

use proven_pipeline::{BoxFuture, Lease, Outcome, StepError};

use super::ReviewSteps;
use crate::step_name::StepName;

/// One step of the review, as the registry runs it.
pub trait Step: Send + Sync {
    fn run<'a>(
        &'a self,
        review: &'a ReviewSteps,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<Outcome, StepError>>;
}

/// How each built-in step runs: the review's control steps have handlers in this module's
/// siblings; the agents' steps share one (it records their trace even when they fail).
#[derive(Debug, Clone, Copy)]
enum Runs {
    Intake,
    Plan,
    DepsCollect,
    DepsFile,
    Judge,
    Agent,
    SandboxRun,
}

impl Step for Runs {
    fn run<'a>(
        &'a self,
        review: &'a ReviewSteps,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<Outcome, StepError>> {
        Box::pin(async move {
            match self {
                Runs::Intake => review.intake(lease).await,
                Runs::Plan => review.plan(lease).await,
                Runs::DepsCollect => review.deps_collect(lease).await,
                Runs::DepsFile => review.deps_file(lease).await,
                Runs::Judge => review.judge(lease).await,
                Runs::Agent => review.agent_step(lease).await,
                Runs::SandboxRun => {
                    crate::sandbox_job::run(review.sandbox.as_ref(), &review.store, lease).await
                }
            }
        })
    }
}

/// Every built-in step: one line each.
pub(super) fn builtin() -> HashMap<&'static str, Arc<dyn Step>> {
    [
        (StepName::Intake, Runs::Intake),
        (StepName::Plan, Runs::Plan),
        (StepName::DepsCollect, Runs::DepsCollect),
        (StepName::DepsFile, Runs::DepsFile),
        (StepName::Planner, Runs::Agent),
        (StepName::SecondReviewer, Runs::Agent),
        (StepName::Prover, Runs::Agent),
        (StepName::Reproduce, Runs::Agent),
        (StepName::Skeptic, Runs::Agent),
        (StepName::Refute, Runs::Agent),
        (StepName::Investigator, Runs::Agent),
        (StepName::SkepticQuery, Runs::Agent),
        (StepName::SkepticDeps, Runs::Agent),
        (StepName::Auditor, Runs::Agent),
        (StepName::Fixer, Runs::Agent),
        (StepName::SandboxFix, Runs::Agent),
        (StepName::Autofix, Runs::Agent),
        (StepName::SandboxRun, Runs::SandboxRun),
        (StepName::Judge, Runs::Judge),
    ]
    .into_iter()
    .map(|(name, runs)| (name.as_str(), Arc::new(runs) as Arc<dyn Step>))
    .collect()
}

impl ReviewSteps {
    /// Registers one more step under `name` (a step this process brings, or a test's).
    pub fn with_step(mut self, name: &'static str, step: Arc<dyn Step>) -> ReviewSteps {
        self.registry.insert(name, step);
        self
    }

    /// Runs the step the lease names, by the registry.
    pub(super) async fn dispatch(&self, lease: &Lease) -> Result<Outcome, StepError> {
        match self.registry.get(lease.id.step.as_str()) {
            Some(step) => step.run(self, lease).await,
            None => Err(StepError::Permanent(format!(
                "unknown step {:?}",
                lease.id.step
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use proven_config::Layers;
    use proven_pipeline::{NewStep, Steps};
    use proven_store::StepId;
    use proven_store::testing::{Backend, TestStore};

    use super::*;
    use crate::Trace;
    use crate::outcome::outcome;

    /// A step that exists only in this test: its own module (this impl) and one line that
    /// registers it. It hands over to the judge by name.
    struct Echo;

    impl Step for Echo {
        fn run<'a>(
            &'a self,
            _: &'a ReviewSteps,
            lease: &'a Lease,
        ) -> BoxFuture<'a, Result<Outcome, StepError>> {
            Box::pin(async move {
                let mut trace = Trace::new("echo");
                trace.push("echo", serde_json::json!({"key": lease.id.key}));
                let next = vec![NewStep::new(
                    StepName::Judge.as_str(),
                    proven_store::JUDGE_QUEUE,
                )];
                Ok(outcome(trace, format!("\"{}\"", lease.id.key), next, true))
            })
        }
    }

    fn lease(step: &str) -> Lease {
        Lease {
            id: StepId {
                review_id: "r".into(),
                step: step.into(),
                key: "k1".into(),
            },
            queue: "control".into(),
            generation: 1,
            attempt: 1,
            owner: "test".into(),
            input: None,
            pipeline: true,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_step_registered_in_one_line_runs_by_its_name() {
        let test = TestStore::new(Backend::Sqlite).await;
        let layers = Layers::default();
        let sources = proven_source::Sources::cli(&layers.resolve().expect("settings"));
        let review = ReviewSteps::new(test.store.clone(), layers, sources);
        let unknown = review.run(&lease("test.echo")).await;
        assert!(
            matches!(&unknown, Err(StepError::Permanent(m)) if m.contains("unknown step")),
            "not registered yet: {unknown:?}"
        );
        let review = review.with_step("test.echo", Arc::new(Echo));
        let out = review.run(&lease("test.echo")).await.expect("runs");
        assert_eq!(out.result, "\"k1\"");
        assert!(out.closes_pipeline);
        assert_eq!(out.next[0].step, "judge");
        test.cleanup().await;
    }

    #[test]
    fn every_step_name_is_registered_once() {
        let registry = builtin();
        assert_eq!(registry.len(), StepName::ALL.len());
        for step in StepName::ALL {
            assert!(
                registry.contains_key(step.as_str()),
                "{step} is not registered"
            );
        }
    }
}
