//! The rule for a test-evidence pipeline (planner or auditor risk: prover, sandbox.reproduce,
//! skeptic, sandbox.refute).

use proven_report::RunRef;
use proven_store::StepRow;

use crate::core::rows::{StepState, find, state, step_result};
use crate::core::step_name::StepName;
use crate::core::wire::RiskOutcome;
use crate::core::wire::{ProveJob, Risk, SkepticResult, SkepticVerdict};
use crate::flows::test::wire::{Refutation, RefutationKind, Reproduced};

/// What the Judge concludes about one risk pipeline (plain code, no model).
#[derive(Debug)]
pub enum Verdict {
    /// A finding: reproduced, and no evidenced refutation defeats it.
    Keep {
        job: ProveJob,
        runs: Vec<RunRef>,
        skeptic: Option<SkepticResult>,
    },
    /// Dropped: Proven's reruns showed the test flaky (written to H-MEM).
    Dropped {
        job: ProveJob,
        refutation: Refutation,
        skeptic: SkepticResult,
    },
    /// Not a finding, and why; with the runs that showed it when runs did.
    Unproven {
        claim: String,
        reason: String,
        runs: Vec<RunRef>,
    },
    /// Still running when judged (a deadline).
    Inconclusive { claim: String },
}

impl Verdict {
    pub fn outcome(&self) -> RiskOutcome {
        match self {
            Verdict::Keep { .. } => RiskOutcome::Finding,
            Verdict::Dropped { .. } => RiskOutcome::Dropped,
            Verdict::Unproven { .. } => RiskOutcome::Unproven,
            Verdict::Inconclusive { .. } => RiskOutcome::Inconclusive,
        }
    }
}

/// The Judge's rule for a test-evidence pipeline: a finding is kept when its test passed on
/// the base and failed on the change, unless Proven's own check of a refutation from the
/// closed list bore the refutation out (flaky: dropped; wrong cause or intended: unproven).
/// The Skeptic's words alone never move a verdict.
pub fn judge_risk(rows: &[StepRow], key: &str, risk: &Risk) -> Verdict {
    let error = |step: StepName| find(rows, step.as_str(), key).and_then(|r| r.error.clone());
    let state = |step: StepName| state(rows, step.as_str(), key);
    let claim = risk.claim.clone();
    let unproven = |reason: String| Verdict::Unproven {
        claim: risk.claim.clone(),
        reason,
        runs: Vec::new(),
    };
    if matches!(
        state(StepName::Prover),
        Some(StepState::Queued | StepState::Running) | None
    ) {
        return Verdict::Inconclusive { claim };
    }
    let Some(job) = step_result::<ProveJob>(rows, StepName::Prover.as_str(), key) else {
        let reason = find(rows, StepName::Prover.as_str(), key)
            .and_then(|r| r.error.clone().or_else(|| r.result.clone()))
            .unwrap_or_else(|| "no test was written".into());
        return unproven(reason);
    };
    let Some(repro) = step_result::<Reproduced>(rows, StepName::Reproduce.as_str(), key) else {
        return match state(StepName::Reproduce) {
            Some(StepState::Failed | StepState::Dead) => unproven(
                error(StepName::Reproduce).unwrap_or_else(|| "the test could not run".into()),
            ),
            _ => Verdict::Inconclusive { claim },
        };
    };
    if !repro.reproduced {
        // With the runs that showed it: a reader (and the corpus, counting the controls
        // that ran) tells a test that ran and proved nothing from one that never ran.
        return Verdict::Unproven {
            claim,
            reason: format!("the test does not prove it: {}", repro.shown.reason),
            runs: repro.shown.runs,
        };
    }
    let keep = |skeptic: Option<SkepticResult>| Verdict::Keep {
        job: job.clone(),
        runs: repro.shown.runs.clone(),
        skeptic,
    };
    let skeptic = step_result::<SkepticResult>(rows, StepName::Skeptic.as_str(), key);
    let Some(s) = skeptic
        .clone()
        .filter(|s| s.verdict == SkepticVerdict::Refuted)
    else {
        return keep(skeptic);
    };
    let without_evidence = |why: String| {
        let mut s = s.clone();
        s.verdict = SkepticVerdict::RefutedWithoutEvidence;
        s.reason = format!("{} ({why})", s.reason);
        keep(Some(s))
    };
    match step_result::<Refutation>(rows, StepName::Refute.as_str(), key) {
        Some(r) if r.evidenced => match r.kind {
            Some(RefutationKind::Flaky) => Verdict::Dropped {
                job,
                refutation: r,
                skeptic: s,
            },
            Some(RefutationKind::WrongCause | RefutationKind::Intended) => Verdict::Unproven {
                claim,
                reason: r.shown.reason,
                runs: r.shown.runs,
            },
            // A record of an older version (a Skeptic's own test): no evidence.
            None => {
                without_evidence("its own test is not evidence against a reproduced run".into())
            }
        },
        Some(r) => without_evidence(r.shown.reason),
        None => match state(StepName::Refute) {
            Some(StepState::Queued | StepState::Running) => Verdict::Inconclusive { claim },
            Some(_) => without_evidence(format!(
                "Proven's check could not run: {}",
                error(StepName::Refute).unwrap_or_else(|| "no result".into())
            )),
            None => without_evidence("no check was made".into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::core::rows::test_row;
    use crate::core::step_name::Name;
    use crate::core::wire::test_risk;

    fn done(step: StepName, value: serde_json::Value) -> StepRow {
        test_row(step.as_str(), "r0", "done", Some(value.to_string()))
    }

    fn job() -> serde_json::Value {
        serde_json::to_value(crate::core::wire::test_job()).expect("job")
    }

    fn reproduced(yes: bool) -> StepRow {
        done(
            StepName::Reproduce,
            json!({"reproduced": yes, "reason": "fails on the change", "runs": []}),
        )
    }

    fn skeptic(verdict: &str) -> StepRow {
        done(
            StepName::Skeptic,
            json!({"verdict": verdict, "reason": "it is flaky", "artifact": null, "test": null,
                   "refutation": "flaky"}),
        )
    }

    fn refuted(evidenced: bool, kind: Option<&str>) -> StepRow {
        done(
            StepName::Refute,
            json!({"evidenced": evidenced, "reason": "reruns", "runs": [], "kind": kind}),
        )
    }

    /// The verdict in short: its outcome, and the Skeptic's verdict as kept.
    fn said(rows: &[StepRow]) -> (RiskOutcome, Option<String>) {
        let verdict = judge_risk(rows, "r0", &test_risk("test"));
        let skeptic = match &verdict {
            Verdict::Keep { skeptic, .. } => {
                skeptic.as_ref().map(|s| s.verdict.as_str().to_string())
            }
            Verdict::Unproven { reason, .. } => Some(reason.clone()),
            _ => None,
        };
        (verdict.outcome(), skeptic)
    }

    #[test]
    fn a_pipeline_whose_prover_has_not_ended_is_inconclusive() {
        assert_eq!(said(&[]).0, RiskOutcome::Inconclusive);
        let running = test_row("prover", "r0", "running", None);
        assert_eq!(said(&[running]).0, RiskOutcome::Inconclusive);
    }

    #[test]
    fn no_test_or_no_reproduction_is_unproven_with_why() {
        let mut failed = test_row("prover", "r0", "failed", None);
        failed.error = Some("prover model: refused".into());
        assert_eq!(
            said(&[failed]),
            (RiskOutcome::Unproven, Some("prover model: refused".into()))
        );
        let mut broke = test_row("sandbox.reproduce", "r0", "dead", None);
        broke.error = Some("docker is gone".into());
        assert_eq!(
            said(&[done(StepName::Prover, job()), broke]),
            (RiskOutcome::Unproven, Some("docker is gone".into()))
        );
        let (outcome, reason) = said(&[done(StepName::Prover, job()), reproduced(false)]);
        assert_eq!(outcome, RiskOutcome::Unproven);
        assert!(
            reason
                .expect("reason")
                .starts_with("the test does not prove it")
        );
        // A test that ran and proved nothing keeps its runs; one that never ran has none.
        let run = json!({"side": "base", "commit": "0", "image": "i", "command": ["pytest"],
                         "exit_code": 0, "outcome": "passed", "duration_ms": 1,
                         "output_tail": "", "output_sha256": ""});
        let ran = done(
            StepName::Reproduce,
            json!({"reproduced": false, "reason": "passes on both", "runs": [run]}),
        );
        let runs = |rows: &[StepRow]| match judge_risk(rows, "r0", &test_risk("test")) {
            Verdict::Unproven { runs, .. } => runs.len(),
            other => panic!("unproven expected, not {:?}", other.outcome()),
        };
        assert_eq!(runs(&[done(StepName::Prover, job()), ran]), 1);
        let mut refused = test_row("prover", "r0", "failed", None);
        refused.error = Some("the test selects no test its file declares".into());
        assert_eq!(runs(&[refused]), 0);
        let waiting = test_row("sandbox.reproduce", "r0", "queued", None);
        assert_eq!(
            said(&[done(StepName::Prover, job()), waiting]).0,
            RiskOutcome::Inconclusive
        );
    }

    #[test]
    fn a_reproduced_test_is_kept_whatever_the_skeptic_says_without_evidence() {
        let base = [done(StepName::Prover, job()), reproduced(true)];
        assert_eq!(said(&base), (RiskOutcome::Finding, None));
        let conceded = [base[0].clone(), base[1].clone(), skeptic("conceded")];
        assert_eq!(
            said(&conceded),
            (RiskOutcome::Finding, Some("conceded".into()))
        );
        // Refuted, but Proven's check made none, ran none, or did not bear it out.
        for check in [
            None,
            Some(test_row("sandbox.refute", "r0", "failed", None)),
            Some(refuted(false, Some("flaky"))),
            Some(refuted(true, None)),
        ] {
            let mut rows = vec![base[0].clone(), base[1].clone(), skeptic("refuted")];
            rows.extend(check);
            assert_eq!(
                said(&rows),
                (
                    RiskOutcome::Finding,
                    Some("refuted_without_evidence".into())
                )
            );
        }
    }

    #[test]
    fn an_evidenced_refutation_drops_flaky_and_unproves_the_others() {
        let rows = |check: StepRow| {
            vec![
                done(StepName::Prover, job()),
                reproduced(true),
                skeptic("refuted"),
                check,
            ]
        };
        assert_eq!(
            said(&rows(refuted(true, Some("flaky")))).0,
            RiskOutcome::Dropped
        );
        for kind in ["wrong_cause", "intended"] {
            assert_eq!(
                said(&rows(refuted(true, Some(kind)))),
                (RiskOutcome::Unproven, Some("reruns".into()))
            );
        }
        let checking = test_row("sandbox.refute", "r0", "running", None);
        assert_eq!(said(&rows(checking)).0, RiskOutcome::Inconclusive);
    }
}
