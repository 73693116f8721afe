//! What every step shares, below them all: the steps' names ([`step_name`]), the one shape
//! of a step ([`step`]: its context, the review it is handed, its handler), a step's outcome
//! and the errors steps share (`outcome`), a review's rows read back ([`rows`]), the trace
//! ([`trace`]), model calls with the guardrail ([`model`]), test runs with their one
//! cassette path (`test_runs`) and suites (`suite`), a commit as a tree (`git_tree`), a
//! model's citation of a file checked against it ([`citation`]), what a model's patch may
//! be ([`patch`]), and the settings a review fixes for all its steps ([`review`]). A step
//! module, the Judge and the registry import from here; nothing here imports them
//! (`tests/tidy` checks it).

pub mod bounded;
pub mod citation;
pub mod depfix;
pub mod deps;
pub mod error;
pub(crate) mod git_tree;
pub mod model;
pub(crate) mod nearest;
pub(crate) mod nearest_packages;
pub mod outcome;
pub mod patch;
pub mod pin;
pub mod query;
pub mod review;
pub mod rows;
pub mod step;
pub mod step_name;
pub(crate) mod suite;
pub(crate) mod test_runs;
pub mod trace;
pub mod wire;
