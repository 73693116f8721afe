//! The queues and the executor around them: Redis delivery with blocking pops, and the end
//! of a review signalled by the executor rather than found by polling.

use std::sync::Arc;
use std::time::Duration;

use proven_pipeline::redis::{RedisConfig, RedisQueue};
use proven_pipeline::{
    BoxFuture, Executed, Executor, Lease, NewStep, Outcome, Queue, StepError, Steps,
};
use proven_store::testing::{Backend, TestStore};
use proven_store::{NewPipelineReview, ReviewStatus, Store, StoreError};

const REDIS: &str = "redis://127.0.0.1:6379";

fn review(id: &str) -> NewPipelineReview {
    proven_store::testing::pipeline_review(id)
}

/// Steps that end their review at once, or (`gate`) only once the gate lets them.
struct Finish {
    gate: Option<Arc<tokio::sync::Semaphore>>,
    started: Arc<tokio::sync::Notify>,
}

impl Steps for Finish {
    fn run<'a>(&'a self, _lease: &'a Lease) -> BoxFuture<'a, Result<Outcome, StepError>> {
        Box::pin(async move {
            self.started.notify_one();
            if let Some(gate) = &self.gate {
                gate.acquire().await.expect("gate").forget();
            }
            Ok(Outcome {
                result: "{}".into(),
                finish: Some((ReviewStatus::Complete, "{}".into())),
                ..Default::default()
            })
        })
    }
    fn judge_dead_lettered<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
}

async fn admitted(store: &Store, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..n {
        let id = uuid::Uuid::now_v7().to_string();
        store.submit_review(&review(&id)).await.expect("submit");
        assert!(
            store
                .admit_review(&id, &NewStep::new("intake", "evidence"))
                .await
                .expect("admit")
        );
        ids.push(id);
    }
    ids
}

async fn redis_len(config: &RedisConfig, queue: &str) -> i64 {
    let client = redis::Client::open(REDIS).expect("redis url");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("Redis is needed for this test (127.0.0.1:6379)");
    redis::cmd("LLEN")
        .arg(config.key(queue))
        .query_async(&mut conn)
        .await
        .expect("LLEN")
}

async fn status(store: &Store, id: &str) -> ReviewStatus {
    store.review(id).await.expect("review").status
}

/// A worker with one slot holds one job: the others stay in Redis (where a worker that
/// dies loses nothing) until its slot is free, and then every one of them runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_takes_no_more_jobs_than_it_has_free_slots_and_runs_them_all() {
    let t = TestStore::new(Backend::Postgres).await;
    let config = RedisConfig::new(
        REDIS,
        format!("proven-test-{}", uuid::Uuid::now_v7().simple()),
    );
    let queue = RedisQueue::connect(&config)
        .await
        .expect("Redis is needed (127.0.0.1:6379)");
    let ids = admitted(&t.store, 3).await;
    let jobs = t.store.drain_outbox(10).await.expect("drain");
    assert_eq!(jobs.len(), 3);
    queue.push(jobs).await.expect("push");
    assert_eq!(
        redis_len(&config, "evidence").await,
        3,
        "one RPUSH delivered the batch"
    );

    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let started = Arc::new(tokio::sync::Notify::new());
    let ended = Arc::new(tokio::sync::Notify::new());
    let executor = Arc::new(
        Executor::new(
            t.store.clone(),
            Arc::new(Finish {
                gate: Some(gate.clone()),
                started: started.clone(),
            }),
            "test-worker".into(),
            Duration::from_secs(30),
        )
        .with_review_ended(ended.clone()),
    );
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    let serve = tokio::spawn(proven_pipeline::redis::serve(
        config.clone(),
        executor,
        vec!["evidence".into()],
        1,
        async move {
            let _ = stop_rx.wait_for(|s| *s).await;
        },
    ));
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .expect("the first job starts");
    assert_eq!(
        redis_len(&config, "evidence").await,
        2,
        "a busy worker leaves the other jobs in Redis"
    );
    gate.add_permits(3);
    for id in &ids {
        tokio::time::timeout(Duration::from_secs(10), async {
            while status(&t.store, id).await != ReviewStatus::Complete {
                let _ = tokio::time::timeout(Duration::from_millis(200), ended.notified()).await;
            }
        })
        .await
        .expect("every job ran");
    }
    assert_eq!(redis_len(&config, "evidence").await, 0);
    let _ = stop_tx.send(true);
    tokio::time::timeout(Duration::from_secs(10), serve)
        .await
        .expect("serve stops")
        .expect("serve task");
    t.cleanup().await;
}

/// The executor says when a step ended its review, so a waiter needs no polling; a step
/// that does not end it says nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executor_signals_a_review_that_ended_and_nothing_else() {
    let t = TestStore::new(Backend::Sqlite).await;
    let ended = Arc::new(tokio::sync::Notify::new());
    let executor = Executor::new(
        t.store.clone(),
        Arc::new(Finish {
            gate: None,
            started: Arc::new(tokio::sync::Notify::new()),
        }),
        "test-worker".into(),
        Duration::from_secs(30),
    )
    .with_review_ended(ended.clone());
    let ids = admitted(&t.store, 1).await;
    let job = t.store.drain_outbox(10).await.expect("drain").remove(0);

    assert!(matches!(
        executor.execute(&job).await.expect("execute"),
        Executed::Committed { .. }
    ));
    tokio::time::timeout(Duration::from_secs(1), ended.notified())
        .await
        .expect("the end of the review was signalled");
    assert_eq!(status(&t.store, &ids[0]).await, ReviewStatus::Complete);
    // Delivered again, the finished step changes nothing and ends nothing.
    assert_eq!(
        executor.execute(&job).await.expect("execute"),
        Executed::Finished
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(200), ended.notified())
            .await
            .is_err(),
        "a redelivery that changed nothing signals nothing"
    );
    t.cleanup().await;
}
