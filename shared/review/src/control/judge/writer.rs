//! Writer: assembles the result document from the steps' outcomes and seals it.

use proven_report::{Report, ReportKind};

pub fn seal(mut report: Report, trace: &mut crate::core::trace::Trace) -> Report {
    report.seal();
    debug_assert_eq!(
        report.kind == ReportKind::Review,
        report.review_id.is_some()
    );
    trace.push(
        "result",
        serde_json::json!({
            "status": report.status.as_str(),
            "findings": report.findings.len(),
            "proof_counts": report.proof_counts,
            "failed_services": report.failed_services,
            "input_errors": report.input_errors.len(),
        }),
    );
    report
}
