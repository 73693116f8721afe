//! `proven ask QUESTION --repo PATH [--rev REV]` (DESIGN section 9; the seeds' "deep mode:
//! two adversaries"): a question about a repository answered with cited claims, attacked
//! by two adversaries with asymmetric inputs and opposite defaults.
//!
//! ```text
//! generator (claims citing lines) ─ Proven's citation check ─ refuter (claims + cited lines only)
//!                                  coverage auditor (question + manifests only) ─ round two probes
//! ```
//!
//! Invariants:
//! - Every citation is checked by Proven against the file at the revision: lines that do
//!   not exist, or do not say what the claim quotes, refute the claim (a fact, not a view).
//! - The refuter is shown the claims and the lines they cite, never the question or the
//!   answer's reasoning; its default is refuted, and it concedes only by naming a cited
//!   artifact it opened and what that showed. A concession is recorded as conceded, never
//!   as validated.
//! - The coverage auditor is shown the question and the manifests, never the answer; its
//!   default is incomplete. Each surface it names is covered in round two (a conceded claim
//!   citing the surface) or written into "what this run could not see", naming what is
//!   needed. Two rounds at most.
//! - When the two adversaries cannot be given different inputs (every claim cites only the
//!   manifests the auditor would read), one reviewer runs and the answer says the design
//!   degraded: the coverage question is visibly unasked.

mod answer;
mod claims;
mod coverage;
mod files;
mod flow;
mod questions;
mod refuter;
pub mod render;

pub use questions::QuestionRunner;

pub use answer::{Answer, ClaimRecord, ClaimStatus, CoverageRecord, NotSeenRow, SurfaceRecord};
pub use files::Checkout;
pub use flow::ask;
