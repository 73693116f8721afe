//! What a Fixer try is given (a stored try's JSON: field names are its format), and the
//! first try a reproduced risk starts: the test flow's hand-off to the fix flow (what a try
//! came to is the fix flow's own, `flows/fix/wire.rs`).

use proven_pipeline::NewStep;
use serde::{Deserialize, Serialize};

use super::risk::ProveJob;
use crate::core::outcome::Next;
use crate::core::step_name::StepName;

/// What a Fixer try is given.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FixInput {
    pub job: ProveJob,
    /// The risk's pipeline key (`r0`): each try's key is derived from it.
    pub risk_key: String,
    /// This try, 1-based.
    pub attempt: u32,
    /// Tries allowed.
    pub attempts: u32,
    /// What failed in the last try (only that).
    pub failed: Option<String>,
}

impl FixInput {
    /// The pipeline key of a try of the risk `risk_key`.
    pub fn key(risk_key: &str, attempt: u32) -> String {
        format!("{risk_key}-fix{attempt}")
    }

    /// Whether `key` is the key of a try of the risk `risk_key` (the reading of [`Self::key`]).
    pub fn is_try_of(key: &str, risk_key: &str) -> bool {
        key.strip_prefix(risk_key)
            .and_then(|rest| rest.strip_prefix("-fix"))
            .is_some_and(|n| n.parse::<u32>().is_ok())
    }

    /// The next try, carrying only what failed in this one (None: tries are spent).
    pub fn next(&self, failed: String) -> Option<FixInput> {
        (self.attempt < self.attempts).then(|| FixInput {
            job: self.job.clone(),
            risk_key: self.risk_key.clone(),
            attempt: self.attempt + 1,
            attempts: self.attempts,
            failed: Some(failed),
        })
    }
}

/// The first Fixer try of a reproduced risk, when fixes are on.
pub fn first_try(risk_key: &str, job: &ProveJob, attempts: u32) -> Option<NewStep> {
    if attempts == 0 {
        return None;
    }
    let input = FixInput {
        job: job.clone(),
        risk_key: risk_key.to_string(),
        attempt: 1,
        attempts,
        failed: None,
    };
    Some(NewStep {
        key: FixInput::key(risk_key, 1),
        input: serde_json::to_string(&input).ok(),
        ..Next::then(StepName::Fixer)
    })
}

//END
