//! Group commit for the steps of one worker process (Postgres).
//!
//! Every step ends with a synchronous commit, and on a busy worker several end at once: with
//! one transaction each, every one of them waits for its own WAL flush and its own backend,
//! and 4 workers × 8 slots kept 32 backends queueing on `WALWrite` (docs/benchmarks.md). A
//! [`Lane`] lets the commits (or claims) that arrive together run as one batch: whoever
//! finds a turn free takes everything waiting and runs it; whoever arrives while both turns
//! are taken waits for the next one, where it is batched with the others that arrived. One step
//! alone goes straight through (no timer, no added wait), so latency is unchanged when the
//! worker is idle and throughput grows with load. No crate offers this over sqlx (a batch
//! is a few dozen lines here, and each caller keeps its own answer).
//!
//! The batch runs in a task of its own: a leader whose future is dropped halfway (its
//! worker stopping) never leaves the others it took without an answer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::oneshot;

use crate::StoreError;

/// One item waiting in a lane, with where its answer goes.
pub(crate) struct Waiting<I, O> {
    pub item: I,
    reply: oneshot::Sender<Result<O, StoreError>>,
}

impl<I, O> Waiting<I, O> {
    /// Answers the item's caller (who may have gone: then nobody listens).
    pub fn answer(self, result: Result<O, StoreError>) {
        let _ = self.reply.send(result);
    }
}

type Batch<I, O> = Vec<Waiting<I, O>>;

/// How many batches of one lane run at once.
const TURNS: usize = 2;

/// Items that arrive while a batch runs wait for the next one, taken whole.
pub(crate) struct Lane<I, O> {
    pending: std::sync::Mutex<Batch<I, O>>,
    /// Batches that may run at once: two, so one is written while the other waits for its
    /// WAL flush. Both lock rows in the order of their items (the caller sorts), so they
    /// never deadlock each other.
    turns: Arc<tokio::sync::Semaphore>,
    /// Batches run (of any size), for diagnostics and tests.
    batches: std::sync::atomic::AtomicU64,
}

impl<I, O> Default for Lane<I, O> {
    fn default() -> Self {
        Lane {
            pending: std::sync::Mutex::new(Vec::new()),
            turns: Arc::new(tokio::sync::Semaphore::new(TURNS)),
            batches: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl<I, O> std::fmt::Debug for Lane<I, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane")
            .field(
                "batches",
                &self.batches.load(std::sync::atomic::Ordering::Relaxed),
            )
            .finish()
    }
}

impl<I: Send + 'static, O: Send + 'static> Lane<I, O> {
    /// Runs `item` in the next batch and returns its answer. `run` is handed a batch (this
    /// item, or others with it) and must answer every item of it.
    pub async fn join<F>(&self, item: I, run: F) -> Result<O, StoreError>
    where
        F: FnOnce(Batch<I, O>) -> Pin<Box<dyn Future<Output = ()> + Send + 'static>>,
    {
        let (reply, mut answer) = oneshot::channel();
        self.lock_pending().push(Waiting { item, reply });
        tokio::select! {
            biased;
            // Taken by a batch that was already running: its answer comes from there.
            a = &mut answer => return unanswered(a),
            turn = self.turns.clone().acquire_owned() => {
                let batch = std::mem::take(&mut *self.lock_pending());
                if !batch.is_empty() {
                    self.batches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let work = run(batch);
                    tokio::spawn(async move {
                        work.await;
                        drop(turn);
                    });
                }
                // Empty: the batch before took this item; it answers.
            }
        }
        unanswered(answer.await)
    }

    /// How many batches ran.
    pub fn batches(&self) -> u64 {
        self.batches.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Batch<I, O>> {
        // A panic while the lock is held leaves only a Vec behind: still usable.
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A batch that ended without answering (it panicked): the outcome is unknown, as when a
/// connection drops during COMMIT, and the caller treats it as the store failing.
fn unanswered<O>(
    a: Result<Result<O, StoreError>, oneshot::error::RecvError>,
) -> Result<O, StoreError> {
    a.unwrap_or_else(|_| {
        Err(StoreError::Unavailable {
            what: "database".into(),
            message: "the batch this write joined ended without an answer".into(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items that arrive while a batch runs are taken together by the next one, and every
    /// caller gets its own answer.
    #[tokio::test]
    async fn items_arriving_during_a_batch_share_the_next() {
        let lane: Arc<Lane<u32, u32>> = Arc::new(Lane::default());
        let sizes = Arc::new(std::sync::Mutex::new(Vec::new()));
        let calls = (0..16u32).map(|i| {
            let lane = lane.clone();
            let sizes = sizes.clone();
            async move {
                lane.join(i, move |batch| {
                    Box::pin(async move {
                        sizes.lock().expect("sizes").push(batch.len());
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        for w in batch {
                            let v = w.item * 10;
                            w.answer(Ok(v));
                        }
                    })
                })
                .await
            }
        });
        // Polled together in one task, as concurrent steps arrive.
        let answers = futures_util::future::join_all(calls).await;
        for (i, a) in answers.into_iter().enumerate() {
            assert_eq!(
                a.expect("answer"),
                i as u32 * 10,
                "each caller gets its own answer"
            );
        }
        let sizes = sizes.lock().expect("sizes").clone();
        assert_eq!(
            sizes.iter().sum::<usize>(),
            16,
            "every item ran once: {sizes:?}"
        );
        assert!(
            sizes.len() < 16 && sizes.iter().any(|s| *s > 1),
            "items that waited ran together: {sizes:?}"
        );
        assert_eq!(lane.batches(), sizes.len() as u64);
    }

    /// A leader dropped while its batch runs: the others it took still get their answers.
    #[tokio::test]
    async fn a_dropped_leader_never_strands_its_batch() {
        let lane: Arc<Lane<u32, u32>> = Arc::new(Lane::default());
        let slow = |batch: Batch<u32, u32>| -> Pin<Box<dyn Future<Output = ()> + Send>> {
            Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                for w in batch {
                    let v = w.item + 1;
                    w.answer(Ok(v));
                }
            })
        };
        // The first takes the lane; the second and third wait and are batched next.
        let l1 = lane.clone();
        let first = tokio::spawn(async move { l1.join(1, slow).await });
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        let l2 = lane.clone();
        let second = tokio::spawn(async move { l2.join(2, slow).await });
        let l3 = lane.clone();
        let third = tokio::spawn(async move { l3.join(3, slow).await });
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        first.abort();
        assert_eq!(second.await.expect("task").expect("answer"), 3);
        assert_eq!(third.await.expect("task").expect("answer"), 4);
    }

    /// A batch that never answers (it panicked) is an error for each caller, not a hang.
    #[tokio::test]
    async fn a_batch_that_panics_is_an_error_for_its_callers() {
        let lane: Arc<Lane<u32, u32>> = Arc::new(Lane::default());
        let a = lane
            .join(1, |_batch| Box::pin(async { panic!("boom") }))
            .await;
        let err = a.expect_err("no answer is an error");
        assert!(err.to_string().contains("without an answer"), "{err}");
        // The lane is free again afterwards.
        let b = lane
            .join(2, |batch| {
                Box::pin(async move {
                    for w in batch {
                        w.answer(Ok(7));
                    }
                })
            })
            .await;
        assert_eq!(b.expect("answer"), 7);
    }
}
