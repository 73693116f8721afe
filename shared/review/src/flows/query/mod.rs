//! The query evidence flow: for a risk the Planner says a query can prove, the Investigator
//! picks templates and values from a closed list; Proven checks every value, runs the
//! store's own parameterised SQL ([`crate::core::query`]), and the rows are the evidence.
//! No SQL text ever comes from a model. `skeptic.query` then attacks what it found.
//!
//! ```text
//! planner ─ investigator r2 ─(a finding)─ skeptic.query r2
//! ```
//!
//! Invariants:
//! - A query proves a finding only about what the change brings in: the package and the
//!   version must both appear on a line the change adds to the risk's file (the anchor).
//!   The version is then evaluated with the ecosystem's own rules, exactly as the dependency
//!   evidence does (`core::deps::evaluate`), so the finding is `advisory` or `exploited`.
//! - Advisory-by-id, KEV and EPSS rows describe an advisory, not the change: alone they are
//!   never a finding; they are shown as the rows the Investigator read.
//! - The Skeptic may refute a query finding only with a query of its own that Proven runs;
//!   it counts when its rows show the claim false (the advisory no longer affects that
//!   version, or it is withdrawn or gone).

pub mod investigator;
pub mod judge;
pub mod skeptic;
pub mod wire;
