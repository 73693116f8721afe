//! The coverage section: the auditor's surfaces, each probed one with what its round-two
//! pipeline proved, and what stays unresolved named in "what this review could not see".

use crate::core::step_name::Name;
use proven_report::{CoverageSurface, NotSeen};
use proven_store::StepRow;

use crate::core::rows::{StepState, find, step_result};
use crate::core::wire::RiskOutcome;
use crate::flows::audit::AUDITOR;
use crate::flows::audit::wire::{AuditResult, SurfaceStatus};

/// The judge's view of the auditor: the coverage section, with each probed surface's
/// outcome from its round-two pipeline (`outcomes` by key), and what stays unresolved
/// written into "what this review could not see".
pub fn coverage(
    rows: &[StepRow],
    outcomes: &[(String, RiskOutcome)],
    not_seen: &mut Vec<NotSeen>,
) -> Option<proven_report::Coverage> {
    let row = find(rows, AUDITOR, "")?;
    let Some(audit) = step_result::<AuditResult>(rows, AUDITOR, "") else {
        let verdict = if StepState::of(row) == StepState::Done {
            "unreadable"
        } else {
            "no answer"
        };
        not_seen.push(NotSeen {
            what: "the coverage of this change".into(),
            reason: format!("the coverage auditor gave {verdict}: its question is unasked"),
        });
        return Some(proven_report::Coverage {
            verdict: verdict.into(),
            surfaces: Vec::new(),
        });
    };
    let mut surfaces = Vec::new();
    for s in audit.surfaces {
        let (status, detail) = match (s.status, &s.key) {
            (SurfaceStatus::Probing, Some(key)) => {
                match outcomes.iter().find(|(k, _)| k == key).map(|(_, o)| *o) {
                    Some(RiskOutcome::Finding) => (
                        SurfaceStatus::Finding,
                        format!("round two's probe ({key}) proved a finding"),
                    ),
                    Some(RiskOutcome::Unproven | RiskOutcome::Dropped) => (
                        SurfaceStatus::Probed,
                        format!("round two's probe ({key}) ran and proved nothing"),
                    ),
                    Some(other) => (
                        SurfaceStatus::Unresolved,
                        format!("round two's probe ({key}) is {}", other.as_str()),
                    ),
                    None => (
                        SurfaceStatus::Unresolved,
                        format!("round two's probe ({key}) has no verdict"),
                    ),
                }
            }
            // A surface still probing without a key is unresolved.
            (SurfaceStatus::Probing, None) => (SurfaceStatus::Unresolved, s.detail.clone()),
            (status, _) => (status, s.detail.clone()),
        };
        // What round two could not settle, and what Proven could not probe at all (not a
        // path of the repository, past the limit), is what this review could not see.
        if matches!(status, SurfaceStatus::Unresolved | SurfaceStatus::Refused) {
            not_seen.push(NotSeen {
                what: format!("surface {}", s.surface),
                reason: format!(
                    "{} (needs {}): {detail}",
                    status.as_str(),
                    s.probe.as_deref().unwrap_or("a probe that would settle it")
                ),
            });
        }
        surfaces.push(CoverageSurface {
            surface: s.surface,
            probe: s.probe,
            status: status.as_str().into(),
            detail,
        });
    }
    Some(proven_report::Coverage {
        verdict: audit.verdict,
        surfaces,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::core::rows::test_row;

    fn audit(state: &str) -> StepRow {
        let result = json!({"verdict": "incomplete", "probing": [], "investigating": [],
        "surfaces": [
            {"surface": "src/a.py", "probe": null, "status": "examined", "key": null, "detail": "round one"},
            {"surface": "src/b.py", "probe": "b breaks", "status": "probing", "key": "a0", "detail": ""},
            {"surface": "src/c.py", "probe": "c breaks", "status": "probing", "key": "a1", "detail": ""},
            {"surface": "src/d.py", "probe": "d breaks", "status": "probing", "key": "a2", "detail": ""},
            {"surface": "deploy", "probe": null, "status": "whatever it said", "key": null, "detail": "asked"}
        ]});
        test_row(AUDITOR, "", state, Some(result.to_string()))
    }

    #[test]
    fn no_auditor_no_section() {
        let mut not_seen = Vec::new();
        assert_eq!(coverage(&[], &[], &mut not_seen), None);
        assert!(not_seen.is_empty());
    }

    #[test]
    fn an_auditor_without_an_answer_leaves_the_question_unasked() {
        let mut not_seen = Vec::new();
        let c = coverage(&[audit("failed")], &[], &mut not_seen).expect("section");
        assert_eq!(c.verdict, "no answer");
        assert_eq!(not_seen.len(), 1);
        assert!(not_seen[0].reason.contains("unasked"));
    }

    #[test]
    fn each_probed_surface_takes_its_round_two_outcome() {
        let mut not_seen = Vec::new();
        let outcomes = [
            ("a0".to_string(), RiskOutcome::Finding),
            ("a1".to_string(), RiskOutcome::Dropped),
        ];
        let c = coverage(&[audit("done")], &outcomes, &mut not_seen).expect("section");
        let statuses: Vec<(&str, &str)> = c
            .surfaces
            .iter()
            .map(|s| (s.surface.as_str(), s.status.as_str()))
            .collect();
        assert_eq!(
            statuses,
            [
                ("src/a.py", "examined"),
                ("src/b.py", "finding"),
                ("src/c.py", "probed"),
                ("src/d.py", "unresolved"),
                ("deploy", "unresolved"),
            ]
        );
        // What stays unresolved is named, with what would settle it.
        let unresolved: Vec<&str> = not_seen.iter().map(|n| n.what.as_str()).collect();
        assert_eq!(unresolved, ["surface src/d.py", "surface deploy"]);
        assert!(not_seen[0].reason.contains("needs d breaks"));
        assert!(not_seen[0].reason.contains("has no verdict"));
    }
}
