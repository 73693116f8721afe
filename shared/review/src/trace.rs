//! The review trace: one JSON line per thing the review did or decided, so a reader can
//! follow any finding (or any package that gave none) from intake to verdict.

use proven_store::{Store, StoreError};
use serde_json::Value;

/// Trace lines buffered by a step and written in one statement when the step ends.
#[derive(Debug)]
pub struct Trace {
    run_id: String,
    pending: Vec<(String, Value)>,
}

impl Trace {
    pub fn new(run_id: impl Into<String>) -> Trace {
        Trace {
            run_id: run_id.into(),
            pending: Vec::new(),
        }
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Records one line. `event` should be a JSON object.
    pub fn push(&mut self, kind: &str, event: Value) {
        tracing::debug!(kind, %event, "trace");
        self.pending.push((kind.to_string(), event));
    }

    /// The buffered lines, for a step's outcome (committed with its result).
    pub fn into_lines(self) -> Vec<(String, Value)> {
        self.pending
    }

    /// Lines not yet written (for steps without a stored review, e.g. a scan).
    pub fn lines(&self) -> &[(String, Value)] {
        &self.pending
    }

    /// Appends the lines another part of the same run buffered (e.g. on a blocking thread).
    pub fn absorb(&mut self, other: Trace) {
        self.pending.extend(other.pending);
    }

    pub async fn flush(&mut self, store: &Store, review_id: &str) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        store
            .append_trace(review_id, &self.run_id, &self.pending)
            .await?;
        self.pending.clear();
        Ok(())
    }
}
