//! The plan flow: the Planner names the change's risks in bounded steps
//! ([`crate::core::bounded`]), each with the evidence that would settle it (a test or a query),
//! and the second reviewer plans the same change on its own for the side-by-side verdict.
//! Every prompt and answer passes the guardrail; a risk whose fingerprint H-MEM holds is not
//! raised again.

pub mod judge;
pub mod planner;
pub mod scout;
pub mod second;
pub mod wire;

use crate::core::step_name::StepName;

pub const PLANNER: &str = StepName::Planner.as_str();
