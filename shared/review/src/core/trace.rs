//! The review trace: one JSON line per thing the review did or decided, so a reader can
//! follow any finding (or any package that gave none) from intake to verdict.

use proven_store::{Store, StoreError};
use serde_json::Value;

tokio::task_local! {
    /// A copy of every line recorded inside [`capture`]: a step that ends in an error drops
    /// its outcome (and with it its trace), so its runner writes these instead.
    static MIRROR: std::cell::RefCell<Vec<(String, Value)>>;
}

/// Runs `f`, keeping a copy of every trace line it records (on this task), and returns the
/// copy with its output.
pub async fn capture<F: std::future::Future>(f: F) -> (F::Output, Vec<(String, Value)>) {
    MIRROR
        .scope(std::cell::RefCell::new(Vec::new()), async move {
            let out = f.await;
            let lines = MIRROR.with(|m| m.take());
            (out, lines)
        })
        .await
}

fn mirror(line: &(String, Value)) {
    let _ = MIRROR.try_with(|m| m.borrow_mut().push(line.clone()));
}

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
        let line = (kind.to_string(), event);
        mirror(&line);
        self.pending.push(line);
    }

    /// The buffered lines, for a step's outcome (committed with its result).
    pub fn into_lines(self) -> Vec<(String, Value)> {
        self.pending
    }

    /// Lines not yet written (for steps without a stored review, e.g. a scan).
    pub fn lines(&self) -> &[(String, Value)] {
        &self.pending
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
