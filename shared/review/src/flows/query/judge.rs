//! The rule for a query-evidence pipeline (investigator, skeptic.query).

use proven_report::Finding;
use proven_store::StepRow;

use crate::core::query::QueryRefutation;
use crate::core::query::skeptic::SkepticQueryResult;
use crate::core::rows::{StepState, find, state, step_result};
use crate::core::step_name::StepName;
use crate::core::wire::{Risk, SkepticResult};
use crate::flows::query::wire::InvestigatorResult;

/// What the Judge concludes about one query pipeline (plain code, no model).
pub enum QueryVerdict {
    /// The rows prove findings and no evidenced refutation defeats them.
    Keep {
        findings: Vec<Finding>,
        skeptic: Option<SkepticResult>,
    },
    /// The Skeptic's own query showed the claim false (written to H-MEM).
    Dropped {
        refutation: QueryRefutation,
        skeptic: SkepticResult,
    },
    Unproven {
        claim: String,
        reason: String,
    },
    Inconclusive {
        claim: String,
    },
}

/// The Judge's rule for a query pipeline: the Investigator's rows prove findings; only the
/// Skeptic's own query, run by Proven, whose rows show the claim false drops them.
pub fn judge_query(rows: &[StepRow], key: &str, risk: &Risk) -> QueryVerdict {
    let claim = risk.claim.clone();
    let Some(investigation) = find(rows, StepName::Investigator.as_str(), key) else {
        return QueryVerdict::Inconclusive { claim };
    };
    let Some(found) = step_result::<InvestigatorResult>(rows, StepName::Investigator.as_str(), key)
    else {
        return match StepState::of(investigation) {
            StepState::Failed | StepState::Dead => QueryVerdict::Unproven {
                claim,
                reason: investigation
                    .error
                    .clone()
                    .unwrap_or_else(|| "the investigation failed".into()),
            },
            _ => QueryVerdict::Inconclusive { claim },
        };
    };
    if found.findings.is_empty() {
        return QueryVerdict::Unproven {
            claim,
            reason: found.reason,
        };
    }
    match step_result::<SkepticQueryResult>(rows, StepName::SkepticQuery.as_str(), key) {
        Some(SkepticQueryResult {
            skeptic,
            refutation: Some(refutation),
        }) if refutation.evidenced => QueryVerdict::Dropped {
            refutation,
            skeptic,
        },
        Some(r) => QueryVerdict::Keep {
            findings: found.findings,
            skeptic: Some(r.skeptic),
        },
        None if matches!(
            state(rows, StepName::SkepticQuery.as_str(), key),
            Some(StepState::Queued | StepState::Running)
        ) =>
        {
            QueryVerdict::Inconclusive { claim }
        }
        // The Skeptic failed: the findings stand on their rows; the failure is named.
        None => QueryVerdict::Keep {
            findings: found.findings,
            skeptic: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::core::outcome::to_json;
    use crate::core::rows::test_row;
    use crate::core::wire::SkepticVerdict;
    use crate::flows::query::wire::{INVESTIGATOR, SKEPTIC_QUERY};

    fn row(step: &str, state: &str, result: Option<String>) -> StepRow {
        test_row(step, "r0", state, result)
    }

    #[test]
    fn the_judge_keeps_rows_unless_an_evidenced_query_refutes_them() {
        let risk = Risk {
            title: "t".into(),
            claim: "c".into(),
            path: "Dockerfile".into(),
            symbol: None,
            evidence: "query".into(),
        };
        let finding: Finding = serde_json::from_value(json!({
            "id": "query:Dockerfile:PyPI:requests:X", "proof_level": "advisory", "kind": "vulnerability",
            "title": "t", "location": {"path": "Dockerfile", "line": 2}, "evidence": []
        }))
        .expect("finding");
        let found = InvestigatorResult {
            findings: vec![finding],
            ..Default::default()
        };
        let investigated = row(INVESTIGATOR, "done", Some(to_json(&found).expect("json")));
        let skeptic = |evidenced: bool| {
            let r = SkepticQueryResult {
                skeptic: SkepticResult {
                    verdict: if evidenced {
                        SkepticVerdict::Refuted
                    } else {
                        SkepticVerdict::RefutedWithoutEvidence
                    },
                    reason: "r".into(),
                    artifact: None,
                    test: None,
                    refutation: Some("query".into()),
                    needs: None,
                },
                refutation: Some(QueryRefutation {
                    evidenced,
                    reason: "why".into(),
                    query: None,
                }),
            };
            row(SKEPTIC_QUERY, "done", Some(to_json(&r).expect("json")))
        };
        let verdict = |rows: &[StepRow]| match judge_query(rows, "r0", &risk) {
            QueryVerdict::Keep { findings, .. } => format!("keep {}", findings.len()),
            QueryVerdict::Dropped { .. } => "dropped".into(),
            QueryVerdict::Unproven { reason, .. } => format!("unproven {reason}"),
            QueryVerdict::Inconclusive { .. } => "inconclusive".into(),
        };
        assert_eq!(verdict(&[investigated.clone(), skeptic(false)]), "keep 1");
        assert_eq!(verdict(&[investigated.clone(), skeptic(true)]), "dropped");
        assert_eq!(
            verdict(&[investigated.clone(), row(SKEPTIC_QUERY, "running", None)]),
            "inconclusive"
        );
        assert_eq!(
            verdict(&[investigated, row(SKEPTIC_QUERY, "failed", None)]),
            "keep 1"
        );
        let nothing = InvestigatorResult {
            reason: "no line names it".into(),
            ..Default::default()
        };
        assert_eq!(
            verdict(&[row(
                INVESTIGATOR,
                "done",
                Some(to_json(&nothing).expect("json"))
            )]),
            "unproven no line names it"
        );
        assert_eq!(
            verdict(&[row(INVESTIGATOR, "queued", None)]),
            "inconclusive"
        );
    }
}
