//! The repository's `ignore` list, fixed at the plan, applied to the judged findings
//! ([`crate::control::judge::ignore::apply`]) before the report is sealed.

use proven_report::Report;
use proven_store::StepRow;

use crate::core::rows::result_of;
use crate::core::step_name::PLAN;
use crate::core::trace::Trace;
use crate::core::wire::PlanResult;

/// Moves the findings the plan's `ignore` entries accept apart, with their notes.
pub(super) fn apply(rows: &[StepRow], report: &mut Report, trace: &mut Trace) {
    let Ok(plan) = result_of::<PlanResult>(rows, PLAN) else {
        return;
    };
    let findings = std::mem::take(&mut report.findings);
    let applied = crate::control::judge::ignore::apply(findings, &plan.ignore, &today());
    report.findings = applied.kept;
    for i in &applied.ignored {
        trace.push(
            "ignored",
            serde_json::json!({"finding": i.finding.id, "entry": i.entry, "reason": i.reason}),
        );
    }
    report.ignored = applied.ignored;
    report.ignore_notes = applied.notes;
}

/// Today (UTC) as `YYYY-MM-DD`, the day `ignore` entries expire against.
fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}
