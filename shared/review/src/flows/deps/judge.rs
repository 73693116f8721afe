//! The rule for one dependency file's findings: each faces the Skeptic (query kind); a
//! finding stays unless the Skeptic's own query, run and judged by Proven, refuted it with
//! evidence. A Skeptic's words alone never drop one.

use proven_report::Finding;
use proven_store::StepRow;

use crate::core::query::QueryRefutation;
use crate::core::wire::{FileResult, SkepticResult};
use crate::flows::deps::skeptic::{DepsSkeptic, SKEPTIC_DEPS};

/// What becomes of one dependency finding.
#[derive(Debug, Clone)]
pub enum DepsVerdict {
    /// Kept; `skeptic` is what the Skeptic said of it, when it was asked.
    Keep {
        finding: Finding,
        skeptic: Option<SkepticResult>,
    },
    /// Dropped: Proven's run of the Skeptic's query refuted it (to be remembered).
    Dropped {
        finding: Finding,
        refutation: QueryRefutation,
        skeptic_reason: String,
    },
}

/// The verdict on each finding of the dependency file of pipeline `key`.
pub fn judge_deps(rows: &[StepRow], key: &str, file: &FileResult) -> Vec<DepsVerdict> {
    let said: Option<DepsSkeptic> = crate::core::rows::step_result(rows, SKEPTIC_DEPS, key);
    file.findings
        .iter()
        .cloned()
        .map(|finding| {
            let verdict = said
                .as_ref()
                .and_then(|s| s.verdicts.iter().find(|(id, _)| *id == finding.id))
                .map(|(_, v)| v.clone());
            match verdict {
                Some(v) => match v.refutation {
                    Some(refutation) if refutation.evidenced => DepsVerdict::Dropped {
                        finding,
                        refutation,
                        skeptic_reason: v.skeptic.reason,
                    },
                    _ => DepsVerdict::Keep {
                        finding,
                        skeptic: Some(v.skeptic),
                    },
                },
                None => DepsVerdict::Keep {
                    finding,
                    skeptic: None,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::core::rows::test_row;

    fn finding(id: &str) -> serde_json::Value {
        json!({"id": id, "proof_level": "advisory", "kind": "vulnerability", "title": id,
               "package": null, "location": {"path": "Cargo.lock", "line": null}, "advisory": null,
               "exploited": null, "epss": null, "fix": null, "evidence": []})
    }

    fn file(ids: &[&str]) -> FileResult {
        serde_json::from_value(json!({
            "findings": ids.iter().map(|id| finding(id)).collect::<Vec<_>>(),
            "input_errors": [], "not_seen": [], "files": [],
        }))
        .expect("a file result")
    }

    fn skeptic(verdicts: serde_json::Value) -> StepRow {
        test_row(
            SKEPTIC_DEPS,
            "Cargo.lock",
            "done",
            Some(json!({"verdicts": verdicts}).to_string()),
        )
    }

    fn said(verdict: &str, refutation: Option<bool>) -> serde_json::Value {
        json!({
            "skeptic": {"verdict": verdict, "reason": format!("{verdict} it"), "artifact": null, "test": null},
            "refutation": refutation.map(|evidenced| json!({"evidenced": evidenced, "reason": "withdrawn", "query": null})),
        })
    }

    fn outcome(v: &DepsVerdict) -> (&str, &str) {
        match v {
            DepsVerdict::Keep { finding, .. } => (finding.id.as_str(), "keep"),
            DepsVerdict::Dropped { finding, .. } => (finding.id.as_str(), "dropped"),
        }
    }

    #[test]
    fn only_a_query_proven_ran_drops_a_dependency_finding() {
        let rows = [skeptic(json!([
            ["a", said("refuted", Some(true))],
            ["b", said("refuted", Some(false))],
            ["c", said("refuted", None)],
            ["d", said("conceded", None)],
        ]))];
        let verdicts = judge_deps(&rows, "Cargo.lock", &file(&["a", "b", "c", "d", "e"]));
        let outcomes: Vec<(&str, &str)> = verdicts.iter().map(outcome).collect();
        assert_eq!(
            outcomes,
            [
                ("a", "dropped"),
                ("b", "keep"),
                ("c", "keep"),
                ("d", "keep"),
                ("e", "keep")
            ],
            "an unevidenced refutation, a refutation without a query, a concession, no verdict: kept"
        );
        match &verdicts[0] {
            DepsVerdict::Dropped {
                skeptic_reason,
                refutation,
                ..
            } => {
                assert_eq!(
                    (skeptic_reason.as_str(), refutation.reason.as_str()),
                    ("refuted it", "withdrawn")
                );
            }
            other => panic!("{other:?}"),
        }
        // The Skeptic's verdict rides on a kept finding; none when it was not asked.
        assert!(matches!(
            &verdicts[1],
            DepsVerdict::Keep {
                skeptic: Some(_),
                ..
            }
        ));
        assert!(matches!(
            &verdicts[4],
            DepsVerdict::Keep { skeptic: None, .. }
        ));
        // Another file's Skeptic says nothing of this one's findings.
        let elsewhere = judge_deps(&rows, "package-lock.json", &file(&["a"]));
        assert_eq!(
            elsewhere.iter().map(outcome).collect::<Vec<_>>(),
            [("a", "keep")]
        );
    }
}
