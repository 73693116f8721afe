//! The judge step's assembly: the report opened from the control rows, the test
//! environments' gaps named once, and the report closed with the review's status.

use std::collections::HashSet;

use proven_report::{FailedService, Status};
use proven_store::{ReviewRow, ReviewStatus, StepRow};
use serde_json::json;

use super::assembly::{closing, environments_not_seen, opening};
use crate::core::rows::test_row;
use crate::core::step_name::{DEPS_COLLECT, StepName};
use crate::core::trace::Trace;

fn review() -> ReviewRow {
    ReviewRow {
        id: "r".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        finished_at: None,
        repository: "/repos/demo".into(),
        base_rev: "main".into(),
        head_rev: "HEAD".into(),
        base_commit: None,
        head_commit: None,
        status: ReviewStatus::Running,
        result: None,
        priority: 0,
    }
}

fn reproduced(key: &str, not_prepared: &[&str], environment: &[&str]) -> StepRow {
    let result = json!({
        "reproduced": false, "reason": "passes on the change",
        "runs": [{"run_id": "x", "side": "base", "commit": "0", "image": "i",
                  "command": ["pytest"], "exit_code": 0, "outcome": "passed",
                  "duration_ms": 1, "output_tail": "", "output_sha256": "",
                  "environment": environment}],
        "not_prepared": not_prepared,
    });
    test_row(
        StepName::Reproduce.as_str(),
        key,
        "done",
        Some(result.to_string()),
    )
}

#[test]
fn the_report_opens_with_the_review_and_what_collecting_could_not_read() {
    let collect = json!({"sources": [], "input_errors": [], "not_seen": [],
                         "failed_services": [{"service": "advisories", "message": "empty"}]});
    let rows = [test_row(
        DEPS_COLLECT,
        "",
        "done",
        Some(collect.to_string()),
    )];
    let report = opening(&review(), &rows);
    assert_eq!(report.review_id.as_deref(), Some("r"));
    assert_eq!(report.target, "/repos/demo");
    assert_eq!(
        report.failed_services,
        [FailedService {
            service: "advisories".into(),
            message: "empty".into()
        }]
    );
    // No intake row: no revisions, and no plan.
    assert!(report.base.is_none() && report.plan.is_none());
}

#[test]
fn what_a_test_environment_lacked_is_named_once_from_the_typed_list() {
    let lacked = "not prepared: foo==2 (requirements.txt:1): no matching distribution";
    let rows = [
        reproduced("risk-a", &[lacked], &[lacked]),
        reproduced(
            "risk-b",
            &[lacked, "not prepared: bar (setup.py): refused"],
            &[],
        ),
        // A run's environment line that reads like one is not what the environment lacked.
        reproduced("risk-c", &[], &["not prepared: looks like one"]),
    ];
    let named: Vec<(String, String)> = environments_not_seen(&rows)
        .into_iter()
        .map(|n| (n.what, n.reason))
        .collect();
    assert_eq!(
        named,
        [
            ("the test environment of risk-a".into(), lacked.into()),
            (
                "the test environment of risk-b".into(),
                "not prepared: bar (setup.py): refused".into()
            ),
        ]
    );
}

#[test]
fn a_control_step_broken_before_the_plan_fails_the_review() {
    let broke = |broken: bool| {
        let mut report = opening(&review(), &[]);
        report.failed_services.push(FailedService {
            service: "intake".into(),
            message: "the repository does not open".into(),
        });
        let mut trace = Trace::new("t");
        closing(report, &mut trace, &[], &HashSet::new(), broken)
    };
    let (report, status) = broke(true);
    assert_eq!(
        (report.status, status),
        (Status::Failed, ReviewStatus::Failed)
    );
    let (report, status) = broke(false);
    assert_ne!(status, ReviewStatus::Failed, "{report:?}");
    assert_eq!(status.as_str(), report.status.as_str());
}
