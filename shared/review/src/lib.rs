//! The review: its steps and the embedded runner that runs them in one process.
//!
//! Layers, each importing only from the ones below (`tests/tidy` checks it):
//! - data: [`core`] (every step's name, typed, in [`core::step_name`], and the settings a review fixes for all its steps), [`wire`] (what the agent steps store
//!   and pass each other), [`rows`] (a review's rows read back), [`citation`] (a model's
//!   citation of a file, checked against the file);
//! - services: [`step`] (the one shape of a step: its context, the review it is handed,
//!   its handler), `outcome` (a step's outcome and shared errors, `FailureKind`),
//!   [`model`] (model access with the guardrail, by `Role`), `test_runs` (the test runner
//!   with its one cassette path), [`bounded`], [`steps`] (the control steps' logic: intake,
//!   scout, the dependency evidence, the writer), `git_tree`, [`patch`] (what a model's patch may be);
//! - one module per step: [`agents`], [`auditor`], [`autofix`], [`fixer`],
//!   [`investigator`], [`skeptic`], [`sandbox_job`]; a step names the next by
//!   [`step_name::StepName`], never by importing it;
//! - the Judge: [`judge`], pure functions over a review's rows;
//! - the registry and the control steps' handlers: [`pipeline`] ([`pipeline::registry`]
//!   maps every step name to its `run`, one line each);
//!   [`embedded::review`] runs them for `proven review`; [`scan::scan_file`] runs
//!   dependency evidence on one lock file; [`ask`] answers `proven ask` (a question, not a
//!   change: cited claims, the refuter and the coverage auditor); [`rereview`] finds the
//!   repositories an advisory change set newly affects.
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

pub mod agents;
pub mod ask;
pub mod auditor;
pub mod autofix;
pub mod bounded;
pub mod citation;
pub mod core;
pub mod embedded;
mod error;
pub mod fixer;
mod git_tree;
pub mod investigator;
pub mod judge;
pub mod model;
mod outcome;
pub mod patch;
pub mod pipeline;
pub mod rereview;
pub mod rows;
pub mod sandbox_job;
pub mod scan;
pub mod skeptic;
pub mod step;
pub mod steps;
pub(crate) mod suite;
pub(crate) mod test_runs;
pub mod trace;
pub mod wire;

pub use error::ReviewError;
pub use trace::Trace;
