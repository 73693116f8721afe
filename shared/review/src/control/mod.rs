//! The control steps: intake and the repository it reaches ([`intake`]), the plan
//! ([`plan`]), and the judge step ([`judge`]: the review's rows judged by the pure rules of
//! [`crate::judge`], what a rule dropped written to H-MEM, the report sealed). Control may
//! read every flow's results; a flow never imports control (`tests/tidy` checks it).

pub mod intake;
pub mod judge;
pub mod plan;
pub mod sandbox_job;
