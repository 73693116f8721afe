//! Moves due jobs from the store's outbox to the queue. Jobs are written to the outbox in
//! the same transaction as the step that created them, so a crash between commit and push
//! loses nothing: the next drain (or the reconciler) pushes them.

use proven_store::Store;

use crate::Queue;
use crate::metrics_names as m;

#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error("store: {0}")]
    Store(#[from] proven_store::StoreError),
    #[error("{0}")]
    Queue(#[from] crate::QueueError),
}

/// Drains the outbox once; returns how many jobs went to the queue.
pub async fn push_due(store: &Store, queue: &dyn Queue, batch: i64) -> Result<usize, PushError> {
    let mut total = 0;
    loop {
        let jobs = store.drain_outbox(batch).await?;
        if jobs.is_empty() {
            return Ok(total);
        }
        let n = jobs.len();
        if let Err(e) = queue.push(jobs.clone()).await {
            // Taken off the outbox (and marked pushed) but not delivered: given back, so the
            // reconciler's next pass pushes them again. Were even that lost, they would be
            // pushed again once their push is stale: a failed push delays, never loses.
            tracing::warn!(error = %e, jobs = n, "push failed");
            if let Err(e) = store.unpushed(&jobs).await {
                tracing::warn!(error = %e, jobs = n, "the jobs could not be given back");
            }
            return Err(e.into());
        }
        metrics::counter!(m::JOBS_PUSHED_TOTAL).increment(n as u64);
        total += n;
        if (n as i64) < batch {
            return Ok(total);
        }
    }
}
