//! The review: its steps and the embedded runner that runs them in one process.
//!
//! Layers, each importing only from the ones below (`tests/tidy` checks it, file by file):
//! - [`core`]: what every step shares (step names, the step shape, outcomes, rows, the
//!   trace, model calls, test runs and suites, git trees, citations, patches, the
//!   review-wide settings);
//! - data and services not yet in `core`: [`wire`] (what the steps store and pass each
//!   other), [`bounded`] (the Planner's bounded steps), [`steps`] (the control steps'
//!   logic: intake, scout, the dependency evidence, the writer);
//! - the evidence flows, one folder each, importing `core/` (and the data above) only,
//!   never another flow, control or the registry: [`flows::deps`] (the dependency
//!   evidence and its Skeptic), [`flows::query`] (evidence by query and its Skeptic), [`flows::fix`] (the Fixer,
//!   its sandbox proof and the rule of a proved fix), [`flows::audit`] (the coverage auditor), [`flows::plan`] (the
//!   Planner and the second reviewer), [`flows::test`] (the Prover, the reproduction and
//!   the Skeptic with its refutations);
//! - one module per step, until each moves into its flow: [`autofix`], [`sandbox_job`]; a step names the next by
//!   [`core::step_name::StepName`], never by importing it;
//! - the Judge: [`judge`], pure functions over a review's rows;
//! - the control steps: [`control`] (intake, the plan, the judge step's assembly and its
//!   H-MEM writes);
//! - the registry: [`pipeline`] ([`pipeline::registry`] maps every step name to its
//!   `run`, one line each); [`embedded::review`] runs them for `proven review`;
//!   [`scan::scan_file`] runs dependency evidence on one lock file;
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

pub mod bounded;
pub mod control;
pub mod core;
pub mod embedded;
mod error;
pub mod flows;
pub mod pipeline;
pub mod scan;

/// The model agents, as the binaries configure them (`proven_review::model::Agents`).
pub use crate::core::model;
pub use crate::core::trace::Trace;
pub use error::ReviewError;
