//! The control steps: intake and the repository it reaches ([`intake`]), the plan
//! ([`plan`]), `sandbox.run` ([`sandbox_job`]), and the judge step ([`judge`]: the review's
//! rows judged by each flow's pure rule (`flows/NAME/judge.rs`), what a rule dropped written
//! to H-MEM, the report sealed). Control may read every flow's results; a flow never
//! imports control (`tests/tidy` checks it).

pub mod intake;
pub mod judge;
pub mod plan;
pub mod sandbox_job;
