//! The rows of a review, as the steps and the Judge read them: each step's state as an
//! enum (never its stored text), its result read back in its own shape, and which steps
//! have not ended. Reading only: the store writes them.

use proven_pipeline::StepError;
use proven_store::StepRow;
use serde::de::DeserializeOwned;

/// A step's state, as the store keeps it (`steps.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepState {
    Queued,
    Running,
    Done,
    Failed,
    /// Failed on every attempt it was given (dead-lettered).
    Dead,
    /// The review was superseded or cancelled before the step ran.
    Cancelled,
}

impl StepState {
    /// The state of a stored row; a state this code does not know reads as running (not
    /// ended, never judged as done or failed).
    pub fn of(row: &StepRow) -> StepState {
        match row.state.as_str() {
            "queued" => StepState::Queued,
            "done" => StepState::Done,
            "failed" => StepState::Failed,
            "dead" => StepState::Dead,
            "cancelled" => StepState::Cancelled,
            _ => StepState::Running,
        }
    }

    /// Done, failed, dead or cancelled: the step will not run again.
    pub fn ended(self) -> bool {
        !matches!(self, StepState::Queued | StepState::Running)
    }
}

/// A row's name as a trace or report says it: `step`, or `step key` for a keyed step.
pub fn display_name(row: &StepRow) -> String {
    match row.id.key.as_str() {
        "" => row.id.step.clone(),
        key => format!("{} {key}", row.id.step),
    }
}

/// The row of `step` with `key`.
pub fn find<'a>(rows: &'a [StepRow], step: &str, key: &str) -> Option<&'a StepRow> {
    rows.iter().find(|r| r.id.step == step && r.id.key == key)
}

/// The state of `step` with `key` (None: no such row).
pub fn state(rows: &[StepRow], step: &str, key: &str) -> Option<StepState> {
    find(rows, step, key).map(StepState::of)
}

/// The result of a done step, read back in its shape (None: not done, or unreadable).
pub fn step_result<T: DeserializeOwned>(rows: &[StepRow], step: &str, key: &str) -> Option<T> {
    find(rows, step, key)
        .filter(|r| StepState::of(r) == StepState::Done)
        .and_then(|r| r.result.as_deref())
        .and_then(|t| serde_json::from_str(t).ok())
}

/// The result of the first done row of `step` (any key), or a permanent error naming what
/// is missing or does not read.
pub fn result_of<T: DeserializeOwned>(rows: &[StepRow], step: &str) -> Result<T, StepError> {
    let row = rows
        .iter()
        .find(|r| r.id.step == step && StepState::of(r) == StepState::Done)
        .ok_or_else(|| StepError::Permanent(format!("{step} has no result")))?;
    let text = row.result.as_deref().unwrap_or("null");
    serde_json::from_str(text)
        .map_err(|e| StepError::Permanent(format!("{step} result does not read back: {e}")))
}

/// The done rows' results that read as `T`, with their rows.
pub fn done_results<'a, T: DeserializeOwned>(
    rows: &'a [StepRow],
    step: &'a str,
) -> impl Iterator<Item = (&'a StepRow, T)> + 'a {
    rows.iter()
        .filter(move |r| r.id.step == step && StepState::of(r) == StepState::Done)
        .filter_map(|r| Some((r, serde_json::from_str(r.result.as_deref()?).ok()?)))
}

/// The steps, of those `which` picks, that have not ended, by display name.
pub fn unfinished(rows: &[StepRow], which: impl Fn(&StepRow) -> bool) -> Vec<String> {
    rows.iter()
        .filter(|r| which(r) && !StepState::of(r).ended())
        .map(display_name)
        .collect()
}

/// Rows for unit tests: one step of review `r`.
#[cfg(test)]
pub(crate) fn test_row(step: &str, key: &str, state: &str, result: Option<String>) -> StepRow {
    StepRow {
        id: proven_store::StepId {
            review_id: "r".into(),
            step: step.into(),
            key: key.into(),
        },
        queue: "model".into(),
        state: state.into(),
        attempts: 1,
        lease_gen: 1,
        pipeline: true,
        result,
        error: None,
        created_us: 0,
    }
}

/// Starts the review `r` of the unit tests with its first step.
#[cfg(test)]
pub(crate) async fn start_test_review(
    store: &proven_store::Store,
    first: &proven_pipeline::NewStep,
) {
    let review = proven_store::testing::pipeline_review("r");
    store.start_review(&review, first).await.expect("start");
}

/// The lease of the test review's step `step` `key`, claimed (it must be free to run).
#[cfg(test)]
pub(crate) async fn claimed(
    store: &proven_store::Store,
    step: &str,
    key: &str,
) -> proven_store::Lease {
    let id = proven_store::StepId {
        review_id: "r".into(),
        step: step.into(),
        key: key.into(),
    };
    match store
        .claim(&id, "test", 60_000_000, 3)
        .await
        .expect("claim")
    {
        proven_store::Claim::Run(lease) => lease,
        other => panic!("{step} did not run: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_done_row_has_a_result() {
        let rows = [
            test_row("prover", "r0", "failed", Some("1".into())),
            test_row("prover", "r1", "done", Some("2".into())),
        ];
        assert_eq!(step_result::<u32>(&rows, "prover", "r0"), None);
        assert_eq!(step_result::<u32>(&rows, "prover", "r1"), Some(2));
        assert_eq!(result_of::<u32>(&rows, "prover").ok(), Some(2));
        assert!(result_of::<u32>(&rows, "planner").is_err());
    }

    #[test]
    fn unfinished_names_what_has_not_ended() {
        let rows = [
            test_row("deps.collect", "", "running", None),
            test_row("deps.file", "Cargo.lock", "queued", None),
            test_row("deps.file", "go.sum", "dead", None),
            test_row("planner", "", "cancelled", None),
        ];
        assert_eq!(
            unfinished(&rows, |_| true),
            ["deps.collect", "deps.file Cargo.lock"]
        );
        assert!(unfinished(&rows, |r| r.id.step == "planner").is_empty());
    }
}
