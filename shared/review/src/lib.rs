//! The review: its steps and the embedded runner that runs them in one process.
//!
//! Layers by folder, each importing only from the ones below (`tests/tidy` checks it, file
//! by file, `super::` paths included):
//! - [`core`]: what every flow shares (step names with their queues, the step shape,
//!   outcomes, rows, the trace, model calls, test runs and suites, git trees, citations,
//!   patches, the advisory evaluation, the Planner's bounded steps, the wire types more
//!   than one flow reads); it imports nothing above it;
//! - [`flows`], one folder per evidence flow ([`flows::plan`], [`flows::test`],
//!   [`flows::query`], [`flows::deps`], [`flows::fix`], [`flows::autofix`],
//!   [`flows::audit`], [`flows::tool`]): its steps' `run`s, a `wire.rs` for what it stores and hands on,
//!   a `judge.rs` with its pure rule; a flow imports `core/` only, never another flow,
//!   control or the registry, and names the step after it by
//!   [`core::step_name::StepName`];
//! - [`control`]: intake, the plan, `sandbox.run`, the judge step (its assembly from the
//!   flows' rules, its H-MEM writes, the writer);
//! - the registry: [`pipeline`] ([`pipeline::registry`] maps every step name to its
//!   `run`, one line each); [`embedded::review`] runs them for `proven review`;
//!   [`scan::scan_file`] runs dependency evidence on one lock file.
//!
//! Invariants:
//! - A finding exists only with evidence: here, the advisory rows whose range holds the
//!   package's new version, compared with the ecosystem's own rules.
//! - A version outside every range is a trace line, never a finding; a version that
//!   cannot be compared is named in "what this review could not see", never silently
//!   dropped and never a finding.
//! - The base's own vulnerable packages are not reported as brought in by the change.
//! - Nothing is reported clean when part of the review did not run: an unreadable input
//!   or an empty advisory store makes the review incomplete, by name.

pub mod control;
pub mod core;
pub mod embedded;
pub mod flows;
pub mod pipeline;
pub mod scan;

pub use crate::core::error::ReviewError;
/// The model agents, as the binaries configure them (`proven_review::model::Agents`).
pub use crate::core::model;
pub use crate::core::trace::Trace;
