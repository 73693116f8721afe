//! Both reviewers side by side: the first reviewer's risks with what the evidence made of
//! each, beside what the second reviewer (its own Planner, shown only the change) named.
//! Never merged: the second reviewer's words are not evidence.

use crate::core::step_name::Name;
use proven_report::{ReviewerVerdict, ReviewerVerdicts};
use proven_store::StepRow;

use crate::core::rows::{StepState, find};
use crate::core::step_name::StepName;
use crate::core::wire::RiskOutcome;
use crate::core::wire::{Risk, fingerprint};
use crate::flows::plan::wire::SecondReview;

/// Whether two reviewers' risks name the same thing: the same file, and the same symbol
/// or the same normalised claim.
pub fn same_risk(a: &Risk, b: &Risk) -> bool {
    let symbol = |r: &Risk| {
        r.symbol
            .as_deref()
            .map(|s| s.trim().to_lowercase())
            .filter(|s| !s.is_empty())
    };
    a.path == b.path
        && match (symbol(a), symbol(b)) {
            (Some(x), Some(y)) => x == y,
            _ => {
                fingerprint("any", &a.path, None, &a.claim)
                    == fingerprint("any", &b.path, None, &b.claim)
            }
        }
}

fn said(verdict: &str, reason: Option<String>) -> ReviewerVerdict {
    ReviewerVerdict {
        verdict: verdict.into(),
        reason,
    }
}

/// The second reviewer's verdict on its own risk `i`: `refuted` when its Skeptic's
/// refutation held Proven's check (its reason, and the lines that showed it), else
/// `reported` in its own words (with why a claimed refutation did not count).
fn own(second: &SecondReview, i: usize, risk: &Risk) -> ReviewerVerdict {
    match second.skeptic.iter().find(|v| v.risk == i) {
        Some(v) if v.refuted => {
            let shown = v
                .cited
                .as_ref()
                .map(|c| format!(" (shown by {})", c.place()))
                .unwrap_or_default();
            said("refuted", Some(format!("{}{shown}", v.reason)))
        }
        Some(v) => match &v.not_counted {
            Some(why) => said(
                "reported",
                Some(format!(
                    "{} (its Skeptic's refutation did not count: {why})",
                    risk.claim
                )),
            ),
            None => said("reported", Some(risk.claim.clone())),
        },
        None => said("reported", Some(risk.claim.clone())),
    }
}

/// Both reviewers' verdicts on every risk either named (empty when no second reviewer ran):
/// the first's risks in order, then the ones only the second named ("not examined").
pub fn side_by_side(rows: &[StepRow], first: &[(Risk, RiskOutcome)]) -> Vec<ReviewerVerdicts> {
    let Some(row) = find(rows, StepName::SecondReviewer.as_str(), "") else {
        return Vec::new();
    };
    let second: Option<SecondReview> = (StepState::of(row) == StepState::Done)
        .then(|| {
            row.result
                .as_deref()
                .and_then(|t| serde_json::from_str(t).ok())
        })
        .flatten();
    let mut verdicts = Vec::new();
    let mut matched = std::collections::HashSet::new();
    for (risk, outcome) in first {
        let theirs = second
            .as_ref()
            .map(|s| s.risks.iter().enumerate().find(|(_, r)| same_risk(risk, r)));
        let second_verdict = match theirs {
            None => said("no answer", None),
            Some(None) => said("not reported", None),
            Some(Some((i, r))) => {
                matched.insert(i);
                second
                    .as_ref()
                    .map_or_else(|| said("no answer", None), |s| own(s, i, r))
            }
        };
        verdicts.push(ReviewerVerdicts {
            title: risk.title.clone(),
            path: risk.path.clone(),
            outcome: outcome.as_str().into(),
            first: said("reported", Some(risk.claim.clone())),
            second: second_verdict,
        });
    }
    for (i, r) in second.iter().flat_map(|s| s.risks.iter().enumerate()) {
        if matched.contains(&i) {
            continue;
        }
        verdicts.push(ReviewerVerdicts {
            title: r.title.clone(),
            path: r.path.clone(),
            outcome: "not examined".into(),
            first: said("not reported", None),
            second: second
                .as_ref()
                .map_or_else(|| said("reported", Some(r.claim.clone())), |s| own(s, i, r)),
        });
    }
    verdicts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rows::test_row;

    fn risk(path: &str, symbol: Option<&str>, claim: &str) -> Risk {
        Risk {
            title: claim.into(),
            claim: claim.into(),
            path: path.into(),
            symbol: symbol.map(str::to_string),
            evidence: "test".into(),
        }
    }

    fn second(state: &str, risks: Vec<Risk>) -> StepRow {
        let result = serde_json::to_string(&SecondReview {
            risks,
            skeptic: Vec::new(),
        })
        .expect("json");
        test_row("second-reviewer", "", state, Some(result))
    }

    /// (title, outcome, first's verdict, second's verdict) of each row.
    fn table(v: &[ReviewerVerdicts]) -> Vec<(String, String, String, String)> {
        v.iter()
            .map(|r| {
                (
                    r.title.clone(),
                    r.outcome.clone(),
                    r.first.verdict.clone(),
                    r.second.verdict.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn the_same_risk_is_the_same_file_and_symbol_or_claim() {
        let a = risk("calc.py", Some("add"), "add subtracts");
        assert!(same_risk(
            &a,
            &risk("calc.py", Some(" ADD "), "other words")
        ));
        assert!(!same_risk(
            &a,
            &risk("calc.py", Some("sub"), "add subtracts")
        ));
        assert!(!same_risk(
            &a,
            &risk("other.py", Some("add"), "add subtracts")
        ));
        assert!(same_risk(
            &risk("calc.py", None, "Add subtracts!"),
            &risk("calc.py", Some("add"), "add subtracts")
        ));
    }

    #[test]
    fn no_second_reviewer_shows_no_table() {
        let first = [(risk("calc.py", None, "a"), RiskOutcome::Finding)];
        assert!(side_by_side(&[], &first).is_empty());
    }

    #[test]
    fn both_verdicts_stand_side_by_side_never_merged() {
        let first = [
            (risk("calc.py", Some("add"), "add"), RiskOutcome::Finding),
            (risk("calc.py", Some("sub"), "sub"), RiskOutcome::Dropped),
        ];
        let rows = [second(
            "done",
            vec![
                risk("calc.py", Some("add"), "add, in its words"),
                risk("io.py", None, "only the second saw it"),
            ],
        )];
        let s = |x: &str| x.to_string();
        assert_eq!(
            table(&side_by_side(&rows, &first)),
            [
                (s("add"), s("finding"), s("reported"), s("reported")),
                (s("sub"), s("dropped"), s("reported"), s("not reported")),
                (
                    s("only the second saw it"),
                    s("not examined"),
                    s("not reported"),
                    s("reported")
                ),
            ]
        );
        assert_eq!(
            side_by_side(&rows, &first)[0].second.reason.as_deref(),
            Some("add, in its words")
        );
    }

    #[test]
    fn its_own_skeptic_refutes_only_with_lines_that_held() {
        use crate::core::citation::Citation;
        use crate::flows::plan::wire::SecondVerdict;
        let first = [
            (risk("calc.py", Some("add"), "add"), RiskOutcome::Finding),
            (risk("calc.py", Some("sub"), "sub"), RiskOutcome::Finding),
        ];
        let review = SecondReview {
            risks: vec![
                risk("calc.py", Some("add"), "add breaks"),
                risk("calc.py", Some("sub"), "sub breaks"),
            ],
            skeptic: vec![
                SecondVerdict {
                    risk: 0,
                    refuted: true,
                    reason: "the subtraction is intended".into(),
                    cited: Some(Citation {
                        path: "calc.py".into(),
                        line_start: 3,
                        line_end: 3,
                        quote: "return a - b".into(),
                    }),
                    not_counted: None,
                },
                SecondVerdict {
                    risk: 1,
                    not_counted: Some("it cited no lines".into()),
                    ..Default::default()
                },
            ],
        };
        let rows = [test_row(
            "second-reviewer",
            "",
            "done",
            Some(serde_json::to_string(&review).expect("json")),
        )];
        let v = side_by_side(&rows, &first);
        assert_eq!(v[0].second.verdict, "refuted");
        assert_eq!(
            v[0].second.reason.as_deref(),
            Some("the subtraction is intended (shown by calc.py:3)")
        );
        assert_eq!(v[0].outcome, "finding", "evidence alone decides findings");
        assert_eq!(v[1].second.verdict, "reported");
        assert_eq!(
            v[1].second.reason.as_deref(),
            Some("sub breaks (its Skeptic's refutation did not count: it cited no lines)")
        );
    }

    #[test]
    fn a_second_reviewer_that_failed_gave_no_answer() {
        let first = [(risk("calc.py", None, "a"), RiskOutcome::Unproven)];
        let rows = [second("failed", vec![risk("calc.py", None, "a")])];
        let v = side_by_side(&rows, &first);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].second.verdict, "no answer");
        assert_eq!(v[0].outcome, "unproven");
    }
}
