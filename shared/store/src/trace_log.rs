//! The review trace, also written as JSON Lines to a directory (`PROVEN_LOG_DIR`): one line
//! per event, appended after the transaction that stored it commits (a rolled-back step
//! writes nothing there either), so operators can ship the trace with their own log tools.
//! The store stays the truth (`proven trace ID`); the file is a copy.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Appends trace events to `DIR/trace.jsonl`.
#[derive(Debug, Clone)]
pub(crate) struct TraceLog {
    path: PathBuf,
    /// One writer at a time in this process (each line is one `write` of its own; other
    /// processes append with `O_APPEND` too).
    lock: Arc<Mutex<()>>,
}

impl TraceLog {
    pub(crate) fn new(dir: &Path) -> Result<TraceLog, crate::StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| crate::StoreError::Unavailable {
            what: format!("log directory {}", dir.display()),
            message: e.to_string(),
        })?;
        Ok(TraceLog {
            path: dir.join("trace.jsonl"),
            lock: Arc::new(Mutex::new(())),
        })
    }

    /// Writes the events; a failure to write is logged, never the step's failure (the
    /// events are in the store already).
    pub(crate) fn write(
        &self,
        review_id: &str,
        run_id: &str,
        events: &[(String, serde_json::Value)],
    ) {
        if events.is_empty() {
            return;
        }
        let at = crate::sql::now();
        let mut text = String::new();
        for (kind, event) in events {
            let line = serde_json::json!({
                "review_id": review_id, "at": at, "run_id": run_id, "kind": kind, "event": event,
            });
            text.push_str(&line.to_string());
            text.push('\n');
        }
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        if let Err(e) = written {
            tracing::warn!(path = %self.path.display(), error = %e, "the trace could not be written to the log directory");
        }
    }
}
