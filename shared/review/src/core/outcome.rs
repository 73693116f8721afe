//! What a step hands back to the pipeline, and the error shapes every step shares: one
//! place for the result's JSON, the outcome with its trace, a blocking part run off the
//! async threads, a store error that is tried again, and a lease's input read back.

use proven_pipeline::{Lease, NewStep, Outcome, StepError};
use proven_store::StoreError;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::core::step_name::StepName;
use crate::core::trace::Trace;

/// A step's outcome: its result, the steps it creates, whether it closes its pipeline's
/// slot in the review's fan-in, and its trace.
pub fn outcome(trace: Trace, result: String, next: Vec<NewStep>, closes: bool) -> Outcome {
    let run_id = trace.run_id().to_string();
    Outcome {
        result,
        next,
        closes_pipeline: closes,
        trace: trace.into_lines(),
        run_id,
        ..Default::default()
    }
}

/// The steps a step hands over to.
pub struct Next;

impl Next {
    /// A step of a finding pipeline: its branch counts in the review's fan-in until a step
    /// of it closes its slot (the flag is set here, never by the caller).
    pub fn then(step: StepName) -> NewStep {
        NewStep {
            pipeline: true,
            ..Next::first(step)
        }
    }

    /// A step outside any finding pipeline (a control step, or a review's first), on the
    /// queue its name runs on.
    pub fn first(step: StepName) -> NewStep {
        NewStep::new(step.as_str(), step.queue())
    }
}

/// A step's result as the store keeps it.
pub fn to_json<T: Serialize>(value: &T) -> Result<String, StepError> {
    serde_json::to_string(value)
        .map_err(|e| StepError::Permanent(format!("result does not serialise: {e}")))
}

/// Runs `f` on the blocking pool (git, files); a panic there fails the step permanently.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, StepError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StepError::Permanent(format!("a blocking part of the step panicked: {e}")))
}

/// A store error: the step is tried again shortly.
pub fn retryable(e: StoreError) -> StepError {
    StepError::Retryable {
        message: e.to_string(),
        after: std::time::Duration::from_secs(2),
    }
}

/// The step's input, or a permanent error naming the step and what did not read.
pub fn read_input<T: DeserializeOwned>(lease: &Lease, what: &str) -> Result<T, StepError> {
    serde_json::from_str(lease.input.as_deref().unwrap_or("null")).map_err(|e| {
        StepError::Permanent(format!("{}: the {what} does not read: {e}", lease.id.step))
    })
}

/// What a step's stored error is a failure of. The store keeps one message per step, so the
/// kind travels as the message's leading name: written by [`FailureKind::error`] and read by
/// [`FailureKind::of`], and nowhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The review's settings (`proven.yaml`, the environment, flags) are wrong.
    Configuration,
    /// The step's own failure.
    Step,
}

impl FailureKind {
    /// The leading name of a configuration failure's message, and its failed service's name.
    const CONFIGURATION: &'static str = "configuration";

    /// A permanent step error of this kind.
    pub fn error(self, message: impl std::fmt::Display) -> StepError {
        match self {
            FailureKind::Configuration => {
                StepError::Permanent(format!("{}: {message}", Self::CONFIGURATION))
            }
            FailureKind::Step => StepError::Permanent(message.to_string()),
        }
    }

    /// The kind of a stored error message.
    pub fn of(message: &str) -> FailureKind {
        match message.split_once(':') {
            Some((Self::CONFIGURATION, _)) => FailureKind::Configuration,
            _ => FailureKind::Step,
        }
    }

    /// The failed service a configuration failure is reported as (None: the step's own).
    pub fn service(self) -> Option<&'static str> {
        match self {
            FailureKind::Configuration => Some(Self::CONFIGURATION),
            FailureKind::Step => None,
        }
    }
}
