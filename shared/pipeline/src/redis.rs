//! The service's queue: Redis, through apalis-redis, one queue per step family.
//!
//! Settings chosen around apalis-redis 1.0's measured behaviour (DESIGN.md appendix):
//! - worker names are unique per process start (a reused name defeats orphan recovery);
//! - heartbeat 5 s × 3 missed beats: a dead worker's in-flight jobs come back in ~15 s;
//! - idle workers poll every 50 ms (otherwise pickup waits for the next heartbeat);
//! - handlers always acknowledge (attempts are counted in the store), so apalis's
//!   hard-coded retries never run; a store outage is the one error returned, and apalis's
//!   backoff then doubles as ours;
//! - any backend error ends an apalis worker: [`serve`] restarts it with a fresh name;
//! - finished jobs are vacuumed, so Redis holds only what is due.

use std::sync::Arc;
use std::time::Duration;

use apalis::prelude::*;
use apalis_core::backend::Vacuum;
use apalis_redis::{Config, ConnectionManager, RedisStorage};
use tracing::Instrument;

use crate::{BoxFuture, Executor, Queue, QueueError, QueuedJob, Steps};

/// How the Redis queues are named and tuned.
#[derive(Debug, Clone)]
pub struct RedisConfig {
    pub url: String,
    /// Key prefix (tests use one per test so they never share queues).
    pub prefix: String,
    pub heartbeat: Duration,
    pub missed_heartbeats: usize,
    pub poll: Duration,
}

impl RedisConfig {
    pub fn new(url: impl Into<String>, prefix: impl Into<String>) -> RedisConfig {
        RedisConfig {
            url: url.into(),
            prefix: prefix.into(),
            heartbeat: Duration::from_secs(5),
            missed_heartbeats: 3,
            poll: Duration::from_millis(50),
        }
    }

    fn apalis_config(&self, queue: &str) -> Config {
        Config::default()
            .queue(format!("{}:{queue}", self.prefix))
            .heartbeat_interval(self.heartbeat)
            .missed_heartbeats(self.missed_heartbeats)
            // Jobs fetched but not started die with their worker and wait for the reconciler:
            // fetch few at a time.
            .batch_size(4)
            // apalis defaults to EXPIRE 0 on idempotency keys unless a TTL is given.
            .idempotency_ttl(Some(Duration::from_secs(3600)))
    }
}

pub async fn connect(url: &str) -> Result<ConnectionManager, QueueError> {
    apalis_redis::connect(url)
        .await
        .map_err(|e| QueueError::Unavailable {
            queue: "redis".into(),
            message: e.to_string(),
        })
}

/// Pushes jobs to their family's Redis queue.
pub struct RedisQueue {
    storages: Vec<(String, tokio::sync::Mutex<RedisStorage<QueuedJob>>)>,
}

impl RedisQueue {
    pub async fn connect(config: &RedisConfig) -> Result<RedisQueue, QueueError> {
        let conn = connect(&config.url).await?;
        let storages = crate::ALL_QUEUES
            .iter()
            .map(|q| {
                let storage = RedisStorage::new(conn.clone()).with_config(config.apalis_config(q));
                (q.to_string(), tokio::sync::Mutex::new(storage))
            })
            .collect();
        Ok(RedisQueue { storages })
    }
}

impl Queue for RedisQueue {
    fn push<'a>(&'a self, jobs: Vec<QueuedJob>) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            for job in jobs {
                let (_, storage) = self
                    .storages
                    .iter()
                    .find(|(q, _)| *q == job.queue)
                    .ok_or_else(|| QueueError::UnknownQueue(job.queue.clone()))?;
                let queue = job.queue.clone();
                storage
                    .lock()
                    .await
                    .push(job)
                    .await
                    .map_err(|e| QueueError::Unavailable {
                        queue,
                        message: e.to_string(),
                    })?;
            }
            Ok(())
        })
    }
}

async fn handle<S: Steps>(
    job: QueuedJob,
    executor: Data<Arc<Executor<S>>>,
) -> Result<(), BoxDynError> {
    let span = tracing::info_span!(
        "queue_job",
        queue = %job.queue,
        trace_id = %job.trace_id.as_deref().unwrap_or("")
    );
    // The step runs in its own task: when apalis drops this handler (its worker ends on a
    // backend error and is rebuilt), the step still finishes and commits instead of being
    // cancelled halfway with an attempt spent and its lease left to expire.
    let executor = executor.0.clone();
    let step = job.job();
    let running = tokio::spawn(async move { executor.execute(&step).await }.instrument(span));
    match running.await {
        Ok(Ok(_)) => Ok(()),
        // Only the store failing gets here; apalis retries with its backoff, and the
        // reconciler covers the job if Redis drops it meanwhile.
        Ok(Err(e)) => Err(Box::new(e)),
        Err(e) => Err(Box::new(e)),
    }
}

/// Serves `queues` with `concurrency` jobs each, until `stop` resolves. An apalis worker
/// that ends on a backend error is rebuilt with a fresh name after a short pause.
pub async fn serve<S: Steps>(
    config: RedisConfig,
    executor: Arc<Executor<S>>,
    queues: Vec<String>,
    concurrency: usize,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    // Each family is served with its isolated twin, one job at a time.
    let queues: Vec<(String, usize)> = queues
        .into_iter()
        .flat_map(|q| {
            [
                (proven_store::isolated_queue(&q), 1),
                (q, concurrency.max(1)),
            ]
        })
        .collect();
    for (queue, concurrency) in queues {
        let config = config.clone();
        let executor = executor.clone();
        let mut stop_rx = stop_rx.clone();
        tasks.spawn(async move {
            let mut restarts = 0u32;
            while !*stop_rx.borrow() {
                let conn = match connect(&config.url).await {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::warn!(queue, error = %e, "Redis unavailable; retrying");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                };
                let storage: RedisStorage<QueuedJob> = RedisStorage::new(conn).with_config(config.apalis_config(&queue));
                let vacuum = tokio::spawn(vacuum_loop(storage.clone(), config.clone(), queue.clone()));
                let name = format!("{queue}-{}-{}", std::process::id(), uuid::Uuid::now_v7().simple());
                let worker = WorkerBuilder::new(name.clone())
                    .backend(storage.poll_with_interval(config.poll))
                    .concurrency(concurrency)
                    .data(executor.clone())
                    .build(handle::<S>);
                let mut stop_rx2 = stop_rx.clone();
                let result = worker
                    .run_until(async move {
                        let _ = stop_rx2.wait_for(|s| *s).await;
                        Ok::<(), std::io::Error>(())
                    })
                    .await;
                vacuum.abort();
                if *stop_rx.borrow() {
                    break;
                }
                restarts += 1;
                tracing::warn!(queue, worker = %name, restarts, result = ?result, "queue worker ended; restarting with a fresh name");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                    _ = stop_rx.changed() => {}
                }
            }
        });
    }
    stop.await;
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
}

/// Removes finished jobs' data so Redis holds only what is due.
async fn vacuum_loop(mut storage: RedisStorage<QueuedJob>, config: RedisConfig, queue: String) {
    let mut tick = tokio::time::interval(Duration::from_secs(10));
    loop {
        tick.tick().await;
        if let Err(e) = storage.vacuum().await {
            tracing::debug!(queue, error = %e, "vacuum failed");
        }
        // The done set only lists ids; their data is gone after the vacuum.
        let done = format!("{}:{queue}:done", config.prefix);
        let _: Result<(), _> = ::redis::cmd("DEL")
            .arg(&done)
            .query_async(storage.get_connection())
            .await;
    }
}
