//! The embedded default's queue: in-process channels, one per queue family, served by the
//! same [`Executor`] as the Redis workers.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{Mutex, mpsc};

use crate::{BoxFuture, Executor, Job, Queue, QueueError, Steps};

pub struct MemoryQueue {
    senders: HashMap<&'static str, mpsc::UnboundedSender<Job>>,
    receivers: Mutex<HashMap<&'static str, mpsc::UnboundedReceiver<Job>>>,
}

impl MemoryQueue {
    pub fn new() -> MemoryQueue {
        let mut senders = HashMap::new();
        let mut receivers = HashMap::new();
        for q in crate::ALL_QUEUES {
            let (tx, rx) = mpsc::unbounded_channel();
            senders.insert(*q, tx);
            receivers.insert(*q, rx);
        }
        MemoryQueue {
            senders,
            receivers: Mutex::new(receivers),
        }
    }

    /// Serves every queue with `concurrency` jobs at a time each, until `stop` resolves.
    pub async fn serve<S: Steps>(
        self: Arc<Self>,
        executor: Arc<Executor<S>>,
        concurrency: usize,
        stop: impl std::future::Future<Output = ()> + Send,
    ) {
        let receivers: Vec<_> = self.receivers.lock().await.drain().collect();
        let mut tasks = tokio::task::JoinSet::new();
        for (queue, rx) in receivers {
            let rx = Arc::new(Mutex::new(rx));
            let slots = if queue.ends_with(proven_store::ISOLATED_SUFFIX) {
                1
            } else {
                concurrency.max(1)
            };
            for _ in 0..slots {
                let rx = rx.clone();
                let executor = executor.clone();
                tasks.spawn(async move {
                    loop {
                        let job = { rx.lock().await.recv().await };
                        let Some(job) = job else { break };
                        if let Err(e) = executor.execute(&job).await {
                            // The store will be asked again by the reconciler; nothing is lost.
                            tracing::warn!(queue, error = %e, "job not executed");
                        }
                    }
                });
            }
        }
        stop.await;
        tasks.abort_all();
    }
}

impl Default for MemoryQueue {
    fn default() -> Self {
        MemoryQueue::new()
    }
}

impl Queue for MemoryQueue {
    fn push<'a>(&'a self, jobs: Vec<Job>) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            for job in jobs {
                let tx = self
                    .senders
                    .get(job.queue.as_str())
                    .ok_or_else(|| QueueError::UnknownQueue(job.queue.clone()))?;
                tx.send(job).map_err(|_| QueueError::Unavailable {
                    queue: "memory".into(),
                    message: "closed".into(),
                })?;
            }
            Ok(())
        })
    }
}
