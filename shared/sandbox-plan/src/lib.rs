//! The sandbox's pure half: what a tree's tests need, and what a run's output says. No
//! Docker, no processes, no async: the runner (`proven-sandbox`) asks this crate what to
//! prepare and run, runs it in containers, and asks it again what the output means.
//!
//! What this crate owns:
//! - the languages and the test commands that select tests by name ([`language`]); the
//!   package's whole suite as its project documents it, and one test selected within it
//!   ([`suite`]), with tox's configuration wherever it is kept ([`tox`]);
//! - which Python a tree runs on, from its own declarations ([`interpreter`]), and the
//!   Python declarations themselves ([`python`], with what its CI installs,
//!   [`ci_install`]; the lock files it pins by are read by `proven_lockfile::pins`); a Go
//!   tree from before modules and its import path ([`gopath`]);
//! - what a tree's dependencies need prepared, read from its declaration files alone, the
//!   cache key of a prepared layer and the record of a preparation ([`deps`]), the skeleton
//!   a Rust preparation builds from ([`skeleton`]), the stand-ins of a Cargo.lock's git
//!   packages ([`cargo_git`]), and the registries a preparation may reach ([`registries`]);
//! - the run's key ([`key`]), the tree as data ([`tree`]), the record of a run and the rule
//!   that turns how it ended into its outcome ([`record`]), the test runner's own summary
//!   ([`tally`]), the captured output ([`output`]), the proof rule ([`proof`]);
//! - the tool evidence's analyzers (pyflakes, go vet, clippy, ESLint): their commands, versions and
//!   diagnostics ([`analyzer`]);
//! - reading a file a container wrote ([`written`]) and the test tools a prepared
//!   environment holds ([`tools`]).
//!
//! Invariants:
//! - Nothing here starts a process, talks to Docker or to the network; reading a tree's
//!   declaration files never runs them.
//! - An outcome is `TestFailed` only when the test itself failed, as the test runner's own
//!   summary says ([`tally`]): a run that was killed, reached a limit, lost its output, or
//!   could not build or collect is an `EnvironmentError`, never evidence
//!   ([`record::classify`]). `Passed` needs at least one test that ran and passed.
//! - `reproduced` needs every run of the base to pass and every run of the change to fail,
//!   with at least two runs a side ([`proof::prove`]).

pub mod analyzer;
pub mod cargo_ci;
pub mod cargo_git;
pub mod ci_env;
pub mod ci_install;
pub mod ci_matrix;
pub mod ci_steps;
pub mod deps;
pub mod error;
pub mod gopath;
mod grunt;
pub mod hatch;
pub mod interpreter;
pub mod just;
pub mod key;
pub mod language;
pub mod mount;
pub mod node_pm;
pub mod node_version;
pub mod nox;
pub mod output;
pub mod proof;
pub mod python;
pub mod record;
pub mod registries;
pub mod services;
pub mod skeleton;
pub mod suite;
pub mod tally;
pub mod test_installs;
pub mod toolchain;
pub mod tools;
pub mod tox;
pub mod tree;
pub mod written;

#[cfg(test)]
mod testing;

pub use error::{FileError, RequestError};
pub use key::RunKey;
pub use language::{Language, Selection, TestRun};
pub use proof::{NotProved, Proof, Side, prove};
pub use record::{
    DependencyRecord, InterpreterChoice, KillReason, NotPrepared, Outcome, PackageManager, RunKind,
    RunRecord,
};
pub use tally::TestCounts;
pub use tree::{AddFile, Edit};

/// serde-saphyr's options for a YAML file of the tree: one document, nested at most
/// `max_depth`, with few anchors and aliases (a tree's YAML is untrusted input).
pub(crate) fn yaml_options(max_depth: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = max_depth;
    budget.max_aliases = 100;
    budget.max_anchors = 100;
    budget.max_documents = 1;
    serde_saphyr::options! { budget: Some(budget) }
}
