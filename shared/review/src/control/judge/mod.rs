//! The judge step: the review's rows judged by each flow's pure rule (`flows/NAME/judge.rs`;
//! here, the rules over the whole review: [`branches`], [`ignore`]), what a rule dropped
//! written to H-MEM (the Judge's only IO), and the report sealed. The review's row
//! is read once; the report is opened, judged and closed by [`assembly`] and [`verdicts`].

use proven_pipeline::{Lease, Outcome, StepError};
use proven_report::Report;
use proven_store::ReviewStatus;

mod assembly;
pub mod branches;
pub mod ignore;
mod ignored;
mod kept;
mod memory;
#[cfg(test)]
mod tests;
mod verdicts;
mod writer;

use assembly::Judging;
pub use kept::kept;

use crate::core::outcome::{outcome, retryable, to_json};
use crate::core::rows::StepState;
use crate::core::step::StepContext;
use crate::core::step_name::DEPS_FILE;
use crate::core::trace::Trace;
use crate::core::wire::FileResult;

pub async fn run(cx: &StepContext, lease: &Lease) -> Result<Outcome, StepError> {
    let review_id = &lease.id.review_id;
    let rows = cx.rows(review_id).await?;
    let review = cx.store.review(review_id).await.map_err(retryable)?;
    let scope = cx.memory_scope_of(&review).await?;
    let mut judging = Judging {
        cx,
        review_id,
        scope: &scope,
        rows: &rows,
        report: assembly::opening(&review, &rows),
        trace: Trace::new(uuid::Uuid::now_v7().to_string()),
        from_queries: Default::default(),
    };
    let first = judging.agents().await?;
    judging
        .report
        .reviewers
        .extend(crate::flows::plan::judge::side_by_side(&rows, &first));
    let mut broken_review_step = false;
    for row in &rows {
        if row.id.step == DEPS_FILE && StepState::of(row) == StepState::Done {
            if let Some(r) = row
                .result
                .as_deref()
                .and_then(|t| serde_json::from_str::<FileResult>(t).ok())
            {
                let findings = judging.deps_findings(&row.id.key, &r).await?;
                judging.report.findings.extend(findings);
                r.unread.into_report(&mut judging.report);
                judging.report.dependency_files.extend(r.files);
            }
        } else if let Some(unended) = crate::control::judge::branches::unended(row) {
            judging.report.not_seen.extend(unended.not_seen);
            judging.report.failed_services.push(unended.failed);
            broken_review_step |= unended.breaks_review;
        }
    }
    // The tool evidence: each analyzer's runs judged by its flow's rule.
    for (row, result) in crate::core::rows::done_results::<crate::flows::tool::wire::ToolResult>(
        &rows,
        crate::flows::tool::TOOL,
    ) {
        let skeptic = crate::core::rows::step_result::<crate::flows::tool::wire::SkepticToolResult>(
            &rows,
            crate::flows::tool::SKEPTIC_TOOL,
            &row.id.key,
        );
        let verdict = crate::flows::tool::judge::judge_tool(&result, skeptic.as_ref());
        judging.report.findings.extend(verdict.findings);
        judging.report.not_seen.extend(verdict.not_seen);
        judging.report.unproven.extend(verdict.unproven);
    }
    let Judging {
        report,
        mut trace,
        from_queries,
        ..
    } = judging;
    let (report, status) =
        assembly::closing(report, &mut trace, &rows, &from_queries, broken_review_step);
    let json = to_json(&report)?;
    record_metrics(&report, status, &review);
    let mut out = outcome(trace, json.clone(), Vec::new(), false);
    out.finish = Some((status, json));
    Ok(out)
}

/// What a sealed review adds to the metrics: its status, its findings by proof level and
/// kind, its unproven claims, and its time from submission.
fn record_metrics(report: &Report, status: ReviewStatus, review: &proven_store::ReviewRow) {
    use proven_pipeline::metrics_names as m;
    metrics::counter!(m::REVIEWS_TOTAL, "status" => status.as_str(), "priority" => m::priority_label(review.priority))
        .increment(1);
    for f in &report.findings {
        metrics::counter!(m::FINDINGS_TOTAL, "proof_level" => f.proof_level.as_str(), "kind" => f.kind.as_str())
            .increment(1);
    }
    metrics::counter!(m::UNPROVEN_TOTAL).increment(report.unproven.len() as u64);
    let created = time::OffsetDateTime::parse(
        &review.created_at,
        &time::format_description::well_known::Rfc3339,
    );
    if let Ok(created) = created {
        let secs = (time::OffsetDateTime::now_utc() - created).as_seconds_f64();
        metrics::histogram!(m::REVIEW_DURATION_SECONDS, "priority" => m::priority_label(review.priority))
            .record(secs.max(0.0));
    }
}
