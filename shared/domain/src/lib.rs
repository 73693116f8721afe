//! Proven's domain vocabulary: the package ecosystems it understands, the dependencies a
//! lock file declares and the levels of proof a finding can carry.
//!
//! This crate owns pure types only: no IO, no async, no serialisation format. Wire formats
//! live with whoever speaks them (the OSV crate for advisories, the report crate for
//! results), so a change here never silently changes a document someone else parses.

mod dependency;
mod ecosystem;
mod proof;
mod repository;

pub use dependency::{Dependency, DependencyKind, Origin};
pub use ecosystem::{Ecosystem, UnknownEcosystem};
pub use proof::{ProofCounts, ProofLevel};
pub use repository::repository_identity;
