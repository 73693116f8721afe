//! What the rows say beyond each pipeline's verdict: a step that failed or never ended is
//! a failed service (and, unended, something this review could not see); a package the
//! dependency evidence already reported is not reported again by a query.

use std::collections::HashSet;

use proven_report::{FailedService, Finding, NotSeen};
use proven_store::StepRow;

use crate::core::outcome::FailureKind;
use crate::core::rows::{StepState, display_name};
use crate::core::step_name::StepName;

/// What one failed or unended row adds to the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Unended {
    /// An unended step: what the review could not see because of it.
    pub not_seen: Option<NotSeen>,
    pub failed: FailedService,
    /// A failed step of the review itself (not of a finding pipeline): with no plan, the
    /// review failed.
    pub breaks_review: bool,
}

/// A failed, dead-lettered or unended row's entry (None for a row that ended well, was
/// cancelled, or is the judge itself).
pub fn unended(row: &StepRow) -> Option<Unended> {
    let name = display_name(row);
    match StepState::of(row) {
        StepState::Failed | StepState::Dead => {
            let message = row.error.clone().unwrap_or_default();
            let service = if let Some(service) = FailureKind::of(&message).service() {
                service.to_string()
            } else if row.id.step == StepName::Intake {
                StepName::Intake.as_str().to_string()
            } else {
                name
            };
            let what = if StepState::of(row) == StepState::Dead {
                "dead-lettered: "
            } else {
                ""
            };
            Some(Unended {
                not_seen: None,
                failed: FailedService {
                    service,
                    message: format!("{what}{message}"),
                },
                breaks_review: !row.pipeline,
            })
        }
        StepState::Queued | StepState::Running if row.id.step != StepName::Judge => Some(Unended {
            not_seen: Some(NotSeen {
                what: name,
                reason: "inconclusive: not finished before the review's deadline".into(),
            }),
            failed: FailedService {
                service: row.id.step.clone(),
                message: "did not finish before the deadline".into(),
            },
            breaks_review: false,
        }),
        _ => None,
    }
}

/// Drops each query finding whose package, version and advisory a dependency file's finding
/// already reports (`from_queries`: the ids of the findings a query pipeline proved);
/// returns the dropped findings' ids.
pub fn drop_repeated_packages(
    findings: &mut Vec<Finding>,
    from_queries: &HashSet<String>,
) -> Vec<String> {
    let from_a_query = |f: &Finding| from_queries.contains(&f.id);
    let package_of = |f: &Finding| {
        let p = f.package.as_ref()?;
        Some((
            p.ecosystem.clone(),
            p.name.to_lowercase(),
            p.new_version.clone(),
            f.advisory_id().to_string(),
        ))
    };
    let proved_by_files: HashSet<_> = findings
        .iter()
        .filter(|f| !from_a_query(f))
        .filter_map(package_of)
        .collect();
    let mut dropped = Vec::new();
    findings.retain(|f| {
        let repeated =
            from_a_query(f) && package_of(f).is_some_and(|p| proved_by_files.contains(&p));
        if repeated {
            dropped.push(f.id.clone());
        }
        !repeated
    });
    dropped
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::core::rows::test_row;

    #[test]
    fn a_failed_step_is_a_failed_service_by_its_name() {
        let mut row = test_row("deps.file", "Cargo.lock", "failed", None);
        row.error = Some("unreadable".into());
        let u = unended(&row).expect("failed");
        assert_eq!(u.failed.service, "deps.file Cargo.lock");
        assert_eq!(u.failed.message, "unreadable");
        assert_eq!(u.not_seen, None);
        assert!(!u.breaks_review, "a finding pipeline's step");
    }

    #[test]
    fn intake_and_configuration_failures_are_named_so_and_break_the_review() {
        let mut row = test_row("intake", "", "dead", None);
        row.pipeline = false;
        row.error = Some("no such revision".into());
        let u = unended(&row).expect("dead");
        assert_eq!(u.failed.service, "intake");
        assert_eq!(u.failed.message, "dead-lettered: no such revision");
        assert!(u.breaks_review);
        let mut plan = test_row("plan", "", "failed", None);
        plan.error = Some("configuration: bad yaml".into());
        assert_eq!(
            unended(&plan).expect("failed").failed.service,
            "configuration"
        );
    }

    #[test]
    fn an_open_branch_is_inconclusive_and_names_what_did_not_finish() {
        for state in ["queued", "running"] {
            let u = unended(&test_row("prover", "r1", state, None)).expect("open");
            assert_eq!(u.not_seen.expect("not seen").what, "prover r1");
            assert_eq!(u.failed.service, "prover");
        }
        assert_eq!(unended(&test_row("judge", "", "running", None)), None);
        for state in ["done", "cancelled"] {
            assert_eq!(unended(&test_row("prover", "r1", state, None)), None);
        }
    }

    fn finding(id: &str, name: &str, version: &str) -> Finding {
        serde_json::from_value(json!({
            "id": id, "proof_level": "advisory", "kind": "vulnerability", "title": "t",
            "location": {"path": "x"}, "evidence": [],
            "package": {"ecosystem": "PyPI", "name": name, "old_version": null,
                        "new_version": version, "dependency": "direct", "dev": false},
            "advisory": {"id": "GHSA-1", "aliases": [], "severity": []}
        }))
        .expect("finding")
    }

    #[test]
    fn a_query_finding_the_dependency_evidence_already_reports_is_dropped() {
        let mut findings = vec![
            finding("deps:requirements.txt:requests", "requests", "2.19.0"),
            finding("query:Dockerfile:requests", "Requests", "2.19.0"),
            finding("query:Dockerfile:django", "django", "3.2.0"),
            finding("query:Dockerfile:requests-new", "requests", "2.20.0"),
        ];
        let from_queries: HashSet<String> = findings.iter().skip(1).map(|f| f.id.clone()).collect();
        let dropped = drop_repeated_packages(&mut findings, &from_queries);
        assert_eq!(dropped, ["query:Dockerfile:requests"]);
        let kept: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(
            kept,
            [
                "deps:requirements.txt:requests",
                "query:Dockerfile:django",
                "query:Dockerfile:requests-new"
            ]
        );
    }
}
