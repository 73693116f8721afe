//! The review: its steps and the embedded runner that runs them in one process.
//!
//! Owns one implementation of each step, each a module of the same shape (input, handler,
//! outcome): [`steps::intake`] reads the change from git, [`steps::scout`] writes the plan
//! line, [`steps::deps`] turns the packages a change brings in into advisory findings, and
//! [`steps::writer`] assembles the result document. [`embedded::review`] runs them in order
//! for `proven review`; [`scan::scan_file`] runs dependency evidence on one lock file.
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
pub mod auditor;
pub mod autofix;
pub mod bounded;
pub mod embedded;
mod error;
pub mod fixer;
mod git_tree;
pub mod investigator;
pub mod judge;
pub mod model;
mod outcome;
pub mod pipeline;
pub mod rows;
pub mod sandbox_job;
pub mod scan;
pub mod skeptic;
pub mod step_name;
pub mod steps;
pub(crate) mod test_runs;
pub mod trace;
pub mod wire;

pub use error::ReviewError;
pub use trace::Trace;
