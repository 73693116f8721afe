//! A Fixer's try: the candidate it hands the sandbox, and the next try a failed one starts.

use proven_pipeline::{NewStep, StepError};
use proven_report::PatchEdit;
use serde::{Deserialize, Serialize};

use crate::core::outcome::{Next, to_json};
use crate::core::step_name::StepName;
use crate::core::wire::FixInput;

/// A try's candidate, handed to the sandbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Candidate {
    pub input: FixInput,
    pub edits: Vec<PatchEdit>,
    pub explanation: String,
}

pub(super) fn next_try(input: &FixInput, failed: &str) -> Result<Vec<NewStep>, StepError> {
    let Some(next) = input.next(failed.to_string()) else {
        return Ok(Vec::new());
    };
    Ok(vec![NewStep {
        key: FixInput::key(&input.risk_key, next.attempt),
        input: Some(to_json(&next)?),
        ..Next::then(StepName::Fixer)
    }])
}
