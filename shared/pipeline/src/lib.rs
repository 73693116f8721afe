//! The durable review pipeline: every step of a review is a job; Postgres (or SQLite) holds
//! the truth and Redis (or an in-process queue) only delivers.
//!
//! Owns: the [`Queue`] abstraction and its two backends ([`redis::RedisQueue`]: Redis lists
//! with blocking pops; [`memory::MemoryQueue`] for the embedded default), the [`Executor`] that turns a job into
//! claim → handler → fenced commit, the outbox [`pusher`], the [`reconciler`] (re-pushes
//! what the queue lost, judges overdue reviews) and fair [`admission`].
//! The step handlers themselves live with the review (`proven-review`), behind [`Steps`].
//!
//! Invariants:
//! - A job is only a wake-up: `(review, step, key)`. A handler reads its input from the
//!   store and commits through its lease; delivering a job twice, late or to a zombie
//!   changes nothing (the store fences it).
//! - Handlers never make the queue retry: every outcome (done, failed, retry later,
//!   dead-lettered) is recorded in the store and the job is acknowledged. Attempts are
//!   counted in the store, so a job that crashes its worker is dead-lettered after
//!   [`MAX_ATTEMPTS`] claims whatever the queue does.
//! - Redis holds only what is due: work is admitted from the store in small batches.

pub mod admission;
mod executor;
pub mod memory;
pub mod metrics_names;
pub mod pusher;
pub mod reconciler;
pub mod redis;

pub use executor::{ExecError, Executed, Executor, STEP_DEADLINE, StepError, Steps};

use std::future::Future;
use std::pin::Pin;

// What travels on the queue is the store's `Job`: the step to wake, and the trace id of
// the request that started the review (so the job's span joins the request's trace).
pub use proven_store::{Job, Lease, NewStep, Outcome};

/// A step claimed this many times without finishing is dead-lettered.
pub const MAX_ATTEMPTS: i64 = 3;

/// A step rate-limited this many times (each rescheduled without spending an attempt)
/// fails, naming the service: a service that never stops refusing never hangs a review.
pub const MAX_DEFERRALS: i64 = 10;

/// The queue families: a worker process serves any subset.
pub const QUEUES: &[&str] = &["evidence", "control", "model", "sandbox"];

/// Every queue: each family, and its isolated twin (steps tried before, one at a time per
/// worker; see `proven_store::isolated_queue`).
pub const ALL_QUEUES: &[&str] = &[
    "evidence",
    "control",
    "model",
    "sandbox",
    "evidence-isolated",
    "control-isolated",
    "model-isolated",
    "sandbox-isolated",
];

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("queue {queue} is unavailable: {message}")]
    Unavailable { queue: String, message: String },
    #[error("unknown queue {0:?} (known: evidence, control, model, sandbox)")]
    UnknownQueue(String),
}

/// Where jobs are delivered.
pub trait Queue: Send + Sync + 'static {
    fn push<'a>(&'a self, jobs: Vec<Job>) -> BoxFuture<'a, Result<(), QueueError>>;
}
