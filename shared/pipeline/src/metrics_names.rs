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
