//! Metric names of the pipeline, in one place (`proven_<subsystem>_<name>_<unit>`).
//! Labels are bounded: step names, queue names and outcomes, never ids.

pub const STEPS_TOTAL: &str = "proven_pipeline_steps_total";
pub const STEP_DURATION_SECONDS: &str = "proven_pipeline_step_duration_seconds";
pub const STEP_ATTEMPTS: &str = "proven_pipeline_step_attempts";
pub const DEAD_LETTERS_TOTAL: &str = "proven_pipeline_dead_letters_total";
pub const JOBS_PUSHED_TOTAL: &str = "proven_pipeline_jobs_pushed_total";
pub const REQUEUED_TOTAL: &str = "proven_pipeline_requeued_total";
pub const QUEUE_DEPTH: &str = "proven_pipeline_queue_depth";
pub const REVIEWS_TOTAL: &str = "proven_reviews_total";
pub const REVIEWS_ADMITTED_TOTAL: &str = "proven_reviews_admitted_total";
pub const STEP_DEADLINES_TOTAL: &str = "proven_pipeline_step_deadlines_total";
/// Findings of finished reviews, by proof level and kind.
pub const FINDINGS_TOTAL: &str = "proven_findings_total";
/// Findings dropped by an evidenced refutation, by the evidence they had.
pub const REFUTATIONS_TOTAL: &str = "proven_refutations_total";
/// Claims of finished reviews that nothing proved.
pub const UNPROVEN_TOTAL: &str = "proven_unproven_claims_total";
/// A review from submission to its judgement, by priority.
pub const REVIEW_DURATION_SECONDS: &str = "proven_review_duration_seconds";
/// The age of the oldest step waiting in each queue family.
pub const QUEUE_OLDEST_SECONDS: &str = "proven_pipeline_queue_oldest_seconds";
/// The guardrail's verdicts on prompts and answers.
/// GitHub webhook deliveries, by event and outcome (accepted, duplicate, ignored,
/// unsigned, bad_signature, invalid, refused, queue_full, error).
pub const WEBHOOK_DELIVERIES_TOTAL: &str = "proven_webhook_deliveries_total";
/// Publications of reviews on GitHub, by how they ended.
pub const PUBLICATIONS_TOTAL: &str = "proven_github_publications_total";
pub const GUARDRAIL_VERDICTS_TOTAL: &str = "proven_guardrail_verdicts_total";

/// A priority's label (interactive, rerun, batch).
pub fn priority_label(priority: i64) -> &'static str {
    match priority {
        0 => "interactive",
        1 => "rerun",
        _ => "batch",
    }
}

/// Exports as 0 the counters of events that may not have happened yet (no dead letter yet
/// reads `0`, not a missing series). Call once after installing an exporter.
pub fn register_zeros() {
    for name in [
        DEAD_LETTERS_TOTAL,
        STEP_DEADLINES_TOTAL,
        REQUEUED_TOTAL,
        JOBS_PUSHED_TOTAL,
        REVIEWS_ADMITTED_TOTAL,
        FINDINGS_TOTAL,
        REFUTATIONS_TOTAL,
        UNPROVEN_TOTAL,
        GUARDRAIL_VERDICTS_TOTAL,
        WEBHOOK_DELIVERIES_TOTAL,
        PUBLICATIONS_TOTAL,
    ] {
        metrics::counter!(name).increment(0);
    }
}
