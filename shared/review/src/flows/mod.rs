//! The review's evidence flows, one folder each: its steps' `run`s, what they store and
//! hand on, and its pure rule. A flow names the step after it by [`crate::core::step_name::StepName`];
//! it never imports another flow, the registry or control (`tests/tidy` checks it).

pub mod audit;
pub mod autofix;
pub mod deps;
pub mod fix;
pub mod plan;
pub mod query;
pub mod test;
pub mod tool;
