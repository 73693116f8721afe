//! The service's queue: one Redis list per queue (each family and its isolated twin).
//!
//! A job is only a wake-up: the store holds every step's state, attempts and lease, so the
//! queue keeps no bookkeeping of its own.
//! - A push is one `RPUSH` per queue for the whole batch, pipelined in one round trip.
//! - A worker waits on each of its queues with a blocking pop (`BLMPOP … COUNT n`, n its
//!   free slots), so a pushed job starts at once: no poll interval, and an idle worker
//!   sends nothing but one pop per `block` period.
//! - A worker only pops what it can start now (a slot each), so a job sits in Redis, not
//!   in a dead worker's buffer. One popped by a worker that dies before claiming it is lost
//!   to Redis like a flushed one: the reconciler pushes a queued step again once its push
//!   is older than `stale_after`, and an expired lease as soon as it expires.
//! - A store outage while executing puts the job back after a pause (the step is untouched),
//!   so the queue retries it; a Redis outage makes the popper reconnect with a pause.
//!
//! This replaced apalis-redis (DESIGN.md §4 and its appendix): on this machine its
//! per-job Lua scripts (push, fetch, lease, acknowledge) and its 50 ms poll cost more than
//! the store's own claim and commit (docs/benchmarks.md), and its orphan recovery
//! duplicated what the store's leases and the reconciler already guarantee.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, MultiplexedConnection};
use tokio::sync::{Semaphore, watch};
use tracing::Instrument;

use crate::{BoxFuture, Executor, Job, Queue, QueueError, Steps};

/// How the Redis queues are named and waited on.
#[derive(Debug, Clone)]
pub struct RedisConfig {
    pub url: String,
    /// Key prefix (tests use one per test so they never share queues).
    pub prefix: String,
    /// How long one blocking pop waits before looking at the stop signal again (the
    /// longest a stopping worker waits for its poppers).
    pub block: Duration,
}

impl RedisConfig {
    pub fn new(url: impl Into<String>, prefix: impl Into<String>) -> RedisConfig {
        RedisConfig {
            url: url.into(),
            prefix: prefix.into(),
            block: Duration::from_secs(1),
        }
    }

    /// The Redis list of `queue`.
    pub fn key(&self, queue: &str) -> String {
        format!("{}:jobs:{queue}", self.prefix)
    }
}

fn unavailable(queue: &str, e: impl std::fmt::Display) -> QueueError {
    QueueError::Unavailable {
        queue: queue.to_string(),
        message: e.to_string(),
    }
}

/// A connection for pushes: multiplexed and reconnecting by itself.
pub async fn connect(url: &str) -> Result<ConnectionManager, QueueError> {
    let client = redis::Client::open(url).map_err(|e| unavailable("redis", e))?;
    client
        .get_connection_manager()
        .await
        .map_err(|e| unavailable("redis", e))
}

/// A connection of its own for one popper: a blocking pop holds its connection, so it never
/// shares one, and its response timeout must outlast the block.
async fn connect_blocking(url: &str, block: Duration) -> Result<MultiplexedConnection, QueueError> {
    let client = redis::Client::open(url).map_err(|e| unavailable("redis", e))?;
    let config = redis::AsyncConnectionConfig::new()
        .set_response_timeout(Some(block + Duration::from_secs(5)))
        .set_connection_timeout(Some(Duration::from_secs(5)));
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(|e| unavailable("redis", e))
}

/// Pushes jobs to their queue's Redis list.
#[derive(Clone)]
pub struct RedisQueue {
    conn: ConnectionManager,
    config: RedisConfig,
}

impl RedisQueue {
    pub async fn connect(config: &RedisConfig) -> Result<RedisQueue, QueueError> {
        Ok(RedisQueue {
            conn: connect(&config.url).await?,
            config: config.clone(),
        })
    }
}

impl Queue for RedisQueue {
    fn push<'a>(&'a self, jobs: Vec<Job>) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            if jobs.is_empty() {
                return Ok(());
            }
            // One RPUSH per queue, all in one pipelined round trip.
            let mut by_queue: Vec<(&str, Vec<String>)> = Vec::new();
            for job in &jobs {
                if !crate::ALL_QUEUES.contains(&job.queue.as_str()) {
                    return Err(QueueError::UnknownQueue(job.queue.clone()));
                }
                let payload = serde_json::to_string(job).map_err(|e| unavailable(&job.queue, e))?;
                match by_queue.iter_mut().find(|(q, _)| *q == job.queue) {
                    Some((_, items)) => items.push(payload),
                    None => by_queue.push((job.queue.as_str(), vec![payload])),
                }
            }
            let mut pipe = redis::pipe();
            for (queue, items) in &by_queue {
                pipe.rpush(self.config.key(queue), items).ignore();
            }
            let mut conn = self.conn.clone();
            pipe.query_async::<()>(&mut conn)
                .await
                .map_err(|e| unavailable(by_queue[0].0, e))
        })
    }
}

/// Serves `queues` with `concurrency` jobs at a time each (the isolated twins one job at a
/// time between them), until `stop` resolves; then waits for the steps running to end.
pub async fn serve<S: Steps>(
    config: RedisConfig,
    executor: Arc<Executor<S>>,
    queues: Vec<String>,
    concurrency: usize,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    // Each family is served with its isolated twin. The twins share one slot: a job tried
    // before runs with no other job tried before in this worker, whatever its family, so a
    // poison job that aborts its worker never costs another suspect an attempt (with a slot
    // per twin, a plan tried before and the poison's retries were claimed together, and the
    // plan was dead-lettered with them).
    let isolated = Arc::new(Semaphore::new(1));
    let slots = concurrency.max(1);
    let queues: Vec<(String, Arc<Semaphore>, usize)> = queues
        .into_iter()
        .flat_map(|q| {
            [
                (proven_store::isolated_queue(&q), isolated.clone(), 1),
                (q, Arc::new(Semaphore::new(slots)), slots),
            ]
        })
        .collect();
    for (queue, free, slots) in queues {
        tasks.spawn(consume(
            config.clone(),
            executor.clone(),
            queue,
            (free, slots),
            stop_rx.clone(),
        ));
    }
    stop.await;
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
}

/// One queue's popper: takes as many jobs as it has free slots (`slots` of `free`, which
/// the isolated twins share), each run in its own task (a popper that ends never cancels a
/// step halfway).
async fn consume<S: Steps>(
    config: RedisConfig,
    executor: Arc<Executor<S>>,
    queue: String,
    (free, slots): (Arc<Semaphore>, usize),
    mut stop: watch::Receiver<bool>,
) {
    let key = config.key(&queue);
    let mut conn: Option<MultiplexedConnection> = None;
    let mut requeue: Option<RedisQueue> = None;
    let pause = Duration::from_millis(500);
    while !*stop.borrow() {
        // A slot first: never take a job this worker cannot start now.
        let first = tokio::select! {
            permit = free.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = stop.changed() => continue,
        };
        let mut permits = vec![first];
        while let Ok(p) = free.clone().try_acquire_owned() {
            permits.push(p);
        }
        if conn.is_none() {
            match connect_blocking(&config.url, config.block).await {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    tracing::warn!(queue, error = %e, "Redis unavailable; retrying");
                    drop(permits);
                    let _ = tokio::time::timeout(pause * 2, stop.changed()).await;
                    continue;
                }
            }
        }
        if requeue.is_none() {
            requeue = RedisQueue::connect(&config).await.ok();
        }
        let Some(c) = conn.as_mut() else { continue };
        let popped: Result<Option<(String, Vec<String>)>, _> = redis::cmd("BLMPOP")
            .arg(config.block.as_secs_f64())
            .arg(1)
            .arg(&key)
            .arg("LEFT")
            .arg("COUNT")
            .arg(permits.len())
            .query_async(c)
            .await;
        let items = match popped {
            Ok(Some((_, items))) => items,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!(queue, error = %e, "Redis pop failed; reconnecting");
                conn = None;
                drop(permits);
                let _ = tokio::time::timeout(pause, stop.changed()).await;
                continue;
            }
        };
        for item in items {
            let Some(permit) = permits.pop() else { break };
            let job: Job = match serde_json::from_str(&item) {
                Ok(job) => job,
                Err(e) => {
                    // Not ours (or from an older release): the store's reconciler pushes the
                    // step again if it is real.
                    tracing::warn!(queue, error = %e, "dropped an unreadable job");
                    continue;
                }
            };
            let executor = executor.clone();
            let requeue = requeue.clone();
            let span = tracing::info_span!(
                "queue_job",
                queue = %job.queue,
                trace_id = %job.trace_id.as_deref().unwrap_or("")
            );
            tokio::spawn(
                async move {
                    let _slot = permit;
                    if let Err(e) = executor.execute(&job).await {
                        // Only the store failing gets here, before or after the step: the
                        // store is the truth, so the job goes back after a pause (and if
                        // that fails too, the reconciler pushes it again).
                        tracing::warn!(error = %e, "job not executed; retrying after a pause");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        if let Some(q) = requeue {
                            let _ = q.push(vec![job]).await;
                        }
                    }
                }
                .instrument(span),
            );
        }
    }
    // Stopping: the steps running end first (the caller bounds how long it waits).
    let _ = free.acquire_many(slots as u32).await;
}
