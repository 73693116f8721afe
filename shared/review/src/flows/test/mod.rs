//! The test evidence flow (the Planner's risks are [`crate::flows::plan`]): the Prover writes a test
//! for each, the sandbox reproduces it (passes on the base, fails on the change), the
//! Skeptic — another model family, shown the claim and its evidence only — tries to refute
//! it, and a refutation counts only when its own test shows it. The Judge (plain code, in
//! `judge/`, applied by the pipeline's judge step) settles what stays.
//!
//! ```text
//! planner ─┬─ prover r0 ─ sandbox.reproduce r0 ─ skeptic r0 ─(test)─ sandbox.refute r0
//!          └─ prover r1 ─ …                            each branch is one finding pipeline
//! ```
//!
//! Invariants:
//! - The change is untrusted data: it reaches a model as a JSON string between markers,
//!   and every answer is parsed against a closed shape. Nothing a model says is executed
//!   except a test file, inside the sandbox, with a command Proven chooses.
//! - Every prompt and every answer passes the guardrail (when on); its verdicts are trace
//!   lines; a blocked prompt or answer stops the step by name.
//! - A risk whose fingerprint H-MEM holds is not raised again; the trace names the record.

pub mod judge;
pub mod prover;
pub mod reproduce;
pub mod skeptic;
pub mod wire;

use crate::core::step_name::StepName;

pub const REPRODUCE: &str = StepName::Reproduce.as_str();
