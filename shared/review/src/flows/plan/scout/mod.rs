//! Scout Intent: classify the change from its files and choose the plan, written as one
//! plan line before anything else runs. No model: the rules are plain code a reader can
//! check against the trace (seeds/architecture.txt, "Five rules"):
//! 1. the floor: a plan never runs below the class the configured path rules set
//!    (`path_rules`; by default every manifest is security); a lower plan runs the floor's
//!    class in full;
//! 2. ambiguity: a change that is not wholly one kind runs its rules' class in full;
//! 3. security is never outvoted: one file with a security signal makes the whole change
//!    security (a security path rule's match is a signal too: it sets the floor);
//! 4. only verified prose runs no model: every file a `prose_suffixes` suffix (never a
//!    source, script, build or template one), no executable bit, no shebang, on both sides;
//! 5. the plan line names the class, the confidence and its band, the review band, the
//!    signals, the ambiguity and the plan (or "no plan chosen" with `scout_intent: off`),
//!    and each part the plan leaves out gets a line of its own.

mod classify;
mod plan;

pub use classify::{Band, ChangeKind, Classification, Floor, Signal, classify};
pub use plan::{PlanOptions, Planned, plan, plan_entry};

#[cfg(test)]
mod tests;
