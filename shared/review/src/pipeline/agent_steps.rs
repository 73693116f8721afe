//! The model agents' steps, run from the pipeline: each reads the review's view (its intake
//! and the scope of its memory) and hands over to the agent's own module.

use proven_pipeline::{Lease, NewStep, Outcome, StepError};
use proven_store::StepRow;

use super::wire::{FileResult, PlanResult};
use super::{DEPS_COLLECT, DEPS_FILE, PLAN, ReviewSteps};
use crate::outcome::Next;
use crate::rows::result_of;
use crate::step_name::StepName;

impl ReviewSteps {
    /// Runs an agent step. When it ends in an error its outcome is dropped, so the lines it
    /// recorded (each model call's usage, latency and cost; the guardrail's verdicts) are
    /// written here, with a `step_failed` line naming the error.
    pub(super) async fn agent_step(&self, lease: &Lease) -> Result<Outcome, StepError> {
        let (result, mut lines) = crate::trace::capture(self.run_agent_step(lease)).await;
        match &result {
            Err(StepError::Waiting { .. }) | Ok(_) => {}
            Err(e) => {
                lines.push((
                    "step_failed".into(),
                    serde_json::json!({"step": lease.id.step, "key": lease.id.key,
                                       "attempt": lease.attempt, "error": e.to_string()}),
                ));
                let run_id = uuid::Uuid::now_v7().to_string();
                if let Err(store_error) = self
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

    pub(super) async fn run_agent_step(&self, lease: &Lease) -> Result<Outcome, StepError> {
        use crate::agents;
        let (intake, scope) = self.view(&lease.id.review_id).await?;
        let changed: Vec<String> = intake
            .facts
            .iter()
            .filter(|f| !f.binary)
            .map(|f| f.path.clone())
            .collect();
        let view = crate::wire::ReviewView {
            store: &self.store,
            repository: &scope.repository,
            tenant: &scope.tenant,
            repository_dir: &intake.repository_dir,
            base: &intake.base.commit,
            head: &intake.head.commit,
            changed: &changed,
        };
        let needs_models = || {
            self.agents.as_deref().ok_or_else(|| {
                StepError::Permanent("the model agents are not configured in this process".into())
            })
        };
        match lease.id.step.as_str() {
            agents::PLANNER => {
                let rows = self.results(&lease.id.review_id).await?;
                let evidence = self.dependency_evidence(lease, &rows)?;
                let deep =
                    result_of::<PlanResult>(&rows, PLAN).is_ok_and(|p| p.plan.band == "deep");
                let mut out = agents::planner(needs_models()?, view, &evidence).await?;
                // Deep band: the coverage auditor follows, shown the manifests, never the risks.
                if deep {
                    out.next.push(NewStep {
                        ..Next::then(StepName::Auditor, "model")
                    });
                }
                Ok(out)
            }
            crate::auditor::AUDITOR => {
                let rows = self.results(&lease.id.review_id).await?;
                crate::auditor::auditor(needs_models()?, view, &rows).await
            }
            agents::SECOND_REVIEWER => agents::second_reviewer(needs_models()?, view).await,
            agents::PROVER => agents::prover(needs_models()?, view, lease).await,
            agents::SKEPTIC => crate::skeptic::skeptic(needs_models()?, view, lease).await,
            crate::investigator::INVESTIGATOR => {
                crate::investigator::investigator(needs_models()?, view, lease).await
            }
            crate::investigator::SKEPTIC_QUERY => {
                crate::investigator::skeptic_query(needs_models()?, view, lease).await
            }
            crate::investigator::SKEPTIC_DEPS => {
                let rows = self.results(&lease.id.review_id).await?;
                let file: FileResult = crate::rows::step_result(&rows, DEPS_FILE, &lease.id.key)
                    .ok_or_else(|| {
                        StepError::Permanent(format!(
                            "skeptic.deps: the dependency file {} has no result",
                            lease.id.key
                        ))
                    })?;
                crate::investigator::skeptic_deps(needs_models()?, view, lease, &file.findings)
                    .await
            }
            agents::REPRODUCE => {
                let cassette = self.agents.as_ref().and_then(|a| a.cassette());
                let mut out =
                    agents::reproduce(self.sandbox.as_ref(), cassette, view, lease).await?;
                // Reproduced: the Fixer tries beside the Skeptic (a fix is shown only for a
                // finding the Judge keeps).
                let reproduced = out.next.iter().any(|s| s.step == agents::SKEPTIC);
                let attempts =
                    result_of::<PlanResult>(&self.results(&lease.id.review_id).await?, PLAN)
                        .map_or(0, |p| p.fix_attempts);
                if reproduced {
                    let job: crate::wire::ProveJob = crate::outcome::read_input(lease, "job")?;
                    out.next
                        .extend(crate::fixer::first_try(&lease.id.key, &job, attempts));
                }
                Ok(out)
            }
            crate::fixer::FIXER => crate::fixer::fixer(needs_models()?, view, lease).await,
            crate::autofix::AUTOFIX => {
                let cassette = self.agents.as_ref().and_then(|a| a.cassette());
                crate::autofix::autofix(self.sandbox.as_ref(), cassette, view, lease).await
            }
            crate::fixer::SANDBOX_FIX => {
                let cassette = self.agents.as_ref().and_then(|a| a.cassette());
                crate::fixer::prove_fix(self.sandbox.as_ref(), cassette, view, lease).await
            }
            agents::REFUTE => {
                let cassette = self.agents.as_ref().and_then(|a| a.cassette());
                crate::skeptic::refute(self.sandbox.as_ref(), cassette, view, lease).await
            }
            other => Err(StepError::Permanent(format!("unknown step {other:?}"))),
        }
    }

    /// The dependency evidence for the Planner: the findings of every dependency file. While
    /// dependency steps of the review are unfinished the Planner waits (spending no attempt),
    /// for at most [`PLANNER_WAIT`] from its creation; then it plans with what there is and
    /// says so.
    pub(super) fn dependency_evidence(
        &self,
        lease: &Lease,
        rows: &[StepRow],
    ) -> Result<crate::wire::DependencyEvidence, StepError> {
        let pending = crate::rows::unfinished(rows, |r| {
            r.id.step == DEPS_COLLECT || r.id.step == DEPS_FILE
        });
        let waited_us = rows
            .iter()
            .find(|r| r.id == lease.id)
            .map_or(i64::MAX, |r| proven_store::now_us() - r.created_us);
        if !pending.is_empty() {
            let limit_us = i64::try_from(self.planner_wait.as_micros()).unwrap_or(i64::MAX);
            if waited_us < limit_us {
                // 0.1 s at first, then a tenth of the time waited so far, at most 2 s.
                let after = (waited_us / 10_000).clamp(100, 2_000).unsigned_abs();
                return Err(StepError::Waiting {
                    message: format!(
                        "the Planner reads the dependency evidence, still running: {}",
                        pending.join(", ")
                    ),
                    after: std::time::Duration::from_millis(after),
                });
            }
        }
        let mut evidence = crate::wire::DependencyEvidence {
            pending,
            ..Default::default()
        };
        for (_, file) in crate::rows::done_results::<FileResult>(rows, DEPS_FILE) {
            evidence.findings.extend(
                file.findings
                    .iter()
                    .filter_map(crate::wire::DependencyNote::of),
            );
        }
        Ok(evidence)
    }
}

#[cfg(test)]
mod tests {
    use proven_store::testing::{Backend, TestStore};
    use proven_store::{Claim, Lease, NewPipelineReview, Retry};

    use super::super::*;
    use super::*;
    use proven_pipeline::NewStep;

    async fn lease(store: &Store, step: &str, key: &str) -> Lease {
        let id = proven_store::StepId {
            review_id: "r".into(),
            step: step.into(),
            key: key.into(),
        };
        match store
            .claim(&id, "test", 60_000_000, 3)
            .await
            .expect("claim")
        {
            Claim::Run(lease) => lease,
            other => panic!("{step} did not run: {other:?}"),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_planner_waits_for_the_dependency_evidence_then_plans_without_it() {
        let test = TestStore::new(Backend::Sqlite).await;
        let store = &test.store;
        store
            .start_review(
                &NewPipelineReview {
                    id: "r".into(),
                    tenant_id: None,
                    repository: "/repo".into(),
                    base_rev: "a".into(),
                    head_rev: "b".into(),
                    priority: 0,
                    batch_id: None,
                    pr_key: None,
                    request: "{}".into(),
                    deadline_us: None,
                    trace_id: None,
                },
                &NewStep {
                    ..Next::then(StepName::DepsCollect, "evidence")
                },
            )
            .await
            .expect("start");
        // deps.collect fans out to one dependency file; the Planner runs beside it.
        let collect = lease(store, DEPS_COLLECT, "").await;
        let next = vec![
            NewStep {
                key: "Cargo.lock".into(),
                ..Next::then(StepName::DepsFile, "evidence")
            },
            NewStep {
                ..Next::then(StepName::Planner, "model")
            },
        ];
        store
            .commit(
                &collect,
                &Outcome {
                    result: "{}".into(),
                    next,
                    closes_pipeline: true,
                    ..Default::default()
                },
            )
            .await
            .expect("fan out");
        let steps = ReviewSteps::new(
            store.clone(),
            Layers::default(),
            proven_source::Sources::cli(&Layers::default().resolve().expect("settings")),
        )
        .with_planner_wait(std::time::Duration::from_secs(2));
        let started = std::time::Instant::now();
        for waited in 0..12 {
            let planner = lease(store, crate::agents::PLANNER, "").await;
            let rows = store.steps_of("r").await.expect("steps");
            match steps.dependency_evidence(&planner, &rows) {
                Err(StepError::Waiting { message, after }) => {
                    assert!(message.contains("deps.file Cargo.lock"), "{message}");
                    assert!(after <= std::time::Duration::from_secs(2));
                }
                // The store was slower than the wait itself: it may go on, never sooner.
                Ok(_) if started.elapsed() >= std::time::Duration::from_secs(2) => break,
                other => panic!("wait {waited}: the Planner went on: {other:?}"),
            }
            assert!(
                store
                    .retry_later(&planner, 0, Retry::Wait, "waiting")
                    .await
                    .expect("defer")
            );
        }
        // Waiting is neither an attempt nor a rate-limit deferral (those are capped).
        let id = proven_store::StepId {
            review_id: "r".into(),
            step: crate::agents::PLANNER.into(),
            key: String::new(),
        };
        assert_eq!(store.deferrals(&id).await.expect("deferrals"), 0);
        tokio::time::sleep(std::time::Duration::from_secs(2).saturating_sub(started.elapsed()))
            .await;
        // Waited long enough: it plans with what there is, naming what it did not read.
        let planner = lease(store, crate::agents::PLANNER, "").await;
        let rows = store.steps_of("r").await.expect("steps");
        let evidence = steps
            .dependency_evidence(&planner, &rows)
            .expect("plans without it");
        assert_eq!(evidence.pending, ["deps.file Cargo.lock"]);
        assert!(evidence.findings.is_empty());
        assert_eq!(planner.attempt, 1, "waiting spent no attempt");
        test.cleanup().await;
    }
}
