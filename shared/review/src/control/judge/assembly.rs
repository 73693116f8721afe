//! The judge step's assembly, apart from its IO: the report opened from the review's
//! control rows, what the test environments lacked, and the report closed and sealed with
//! the review's status. The verdicts in between are [`super::verdicts`].

use std::collections::HashSet;

use proven_report::{NotSeen, Report, ReportKind, Status};
use proven_store::{ReviewRow, ReviewStatus, StepRow};

use super::writer;
use crate::core::rows::result_of;
use crate::core::step::{MemoryScope, StepContext};
use crate::core::step_name::{DEPS_COLLECT, INTAKE, PLAN};
use crate::core::trace::Trace;
use crate::core::wire::{IntakeResult, PlanResult};
use crate::flows::deps::wire::CollectResult;
use crate::flows::test::wire::Reproduced;

/// What the judge step works on: the review's rows and the scope of its memory, and the
/// report and trace it writes.
pub(super) struct Judging<'a> {
    pub(super) cx: &'a StepContext,
    pub(super) review_id: &'a str,
    pub(super) scope: &'a MemoryScope,
    pub(super) rows: &'a [StepRow],
    pub(super) report: Report,
    pub(super) trace: Trace,
    /// The ids of the findings query pipelines proved (a package the dependency evidence
    /// reports too is dropped from them).
    pub(super) from_queries: std::collections::HashSet<String>,
}

/// The report as the control steps leave it: the review's revisions, what intake left out
/// or could not read, the plan, and what collecting the dependency files could not read.
pub(super) fn opening(review: &ReviewRow, rows: &[StepRow]) -> Report {
    let mut report = Report::new(ReportKind::Review, review.repository.clone());
    report.review_id = Some(review.id.clone());
    if let Ok(intake) = result_of::<IntakeResult>(rows, INTAKE) {
        report.base = Some(intake.base);
        report.head = Some(intake.head);
        report.left_out = intake.left_out;
        report.input_errors.extend(intake.input_errors);
        if intake.truncated {
            report.not_seen.push(NotSeen {
                what: "files beyond the intake limit".into(),
                reason: format!(
                    "the change has more than {} files",
                    proven_change::Limits::default().max_files
                ),
            });
        }
    }
    if let Ok(plan) = result_of::<PlanResult>(rows, PLAN) {
        report.plan = Some(plan.plan);
    }
    if let Ok(collect) = result_of::<CollectResult>(rows, DEPS_COLLECT) {
        collect.unread.into_report(&mut report);
    }
    report
}

/// What the reproductions' test environments could not prepare, each named once (by the
/// first pipeline whose runs lacked it), from the typed list each reproduction keeps.
pub(super) fn environments_not_seen(rows: &[StepRow]) -> Vec<NotSeen> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (row, repro) in
        crate::core::rows::done_results::<Reproduced>(rows, crate::flows::test::REPRODUCE)
    {
        for line in repro.not_prepared {
            if seen.insert(line.clone()) {
                out.push(NotSeen {
                    what: format!("the test environment of {}", row.id.key),
                    reason: line,
                });
            }
        }
    }
    out
}

/// The judged report closed: a package the dependency evidence reports is dropped from the
/// query findings, a review whose control step broke before a plan fails, the plan's
/// `ignore` list applied, and the report sealed, with the review's status.
pub(super) fn closing(
    mut report: Report,
    trace: &mut Trace,
    rows: &[StepRow],
    from_queries: &HashSet<String>,
    broken_review_step: bool,
) -> (Report, ReviewStatus) {
    // A package the dependency evidence already reported is not reported twice.
    for id in
        crate::control::judge::branches::drop_repeated_packages(&mut report.findings, from_queries)
    {
        trace.push("duplicate", serde_json::json!({"finding": id, "reason": "the dependency evidence reports the same package, version and advisory"}));
    }
    if broken_review_step && report.plan.is_none() {
        report.status = Status::Failed;
    }
    super::ignored::apply(rows, &mut report, trace);
    let report = writer::seal(report, trace);
    let status = match report.status {
        Status::Complete => ReviewStatus::Complete,
        Status::Incomplete => ReviewStatus::Incomplete,
        Status::Partial => ReviewStatus::Partial,
        Status::Failed => ReviewStatus::Failed,
    };
    (report, status)
}
