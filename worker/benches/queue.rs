//! Queue overhead, measured beside the raw Redis limit in the same run.
//!
//! - `redis-benchmark` (single client, SET and LPUSH): the raw Redis request rate.
//! - No-op steps through the pipeline (Postgres claim + fenced commit + outbox + Redis
//!   delivery through apalis), served by 1 and by 4 workers: jobs per second.
//! - A review of five no-op steps (intake → plan → collect → fan-out of 2 → judge), one
//!   at a time: end-to-end latency and latency per hop.
//!
//! Needs Postgres (PROVEN_TEST_POSTGRES_URL) and Redis on 127.0.0.1:6379.
//! Run: `cargo bench -p proven-worker --bench queue` (PROVEN_BENCH_JOBS, default 3000).

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use proven_pipeline::reconciler::{self, ReconcilerConfig, Wake};
use proven_pipeline::redis::{RedisConfig, RedisQueue};
use proven_pipeline::{BoxFuture, Executor, Lease, NewStep, Outcome, Queue, StepError, Steps};
use proven_store::testing::{Backend, TestStore};
use proven_store::{NewPipelineReview, Store, StoreError};

/// Steps that do nothing: `single` ends at once; `chain` walks five hops with a fan-out.
struct Noop {
    chain: bool,
}

impl Steps for Noop {
    fn run<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Outcome, StepError>> {
        Box::pin(async move {
            let mut out = Outcome {
                result: "{}".into(),
                ..Default::default()
            };
            if self.chain {
                match lease.id.step.as_str() {
                    "intake" => out.next = vec![NewStep::new("plan", "control")],
                    "plan" => out.next = vec![NewStep::new("collect", "evidence")],
                    "collect" => {
                        out.next = (0..2)
                            .map(|i| NewStep {
                                key: format!("f{i}"),
                                pipeline: true,
                                ..NewStep::new("file", "evidence")
                            })
                            .collect()
                    }
                    "file" => out.closes_pipeline = true,
                    "judge" => {
                        out.finish = Some((proven_store::ReviewStatus::Complete, "{}".into()))
                    }
                    _ => {}
                }
            } else {
                out.finish = Some((proven_store::ReviewStatus::Complete, "{}".into()));
            }
            Ok(out)
        })
    }
    fn judge_dead_lettered<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
}

fn redis_benchmark() -> Vec<(String, f64)> {
    let out = Command::new("redis-benchmark")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            "6379",
            "-c",
            "1",
            "-n",
            "50000",
            "-t",
            "set,lpush",
            "-q",
        ])
        .output();
    // The peer is the point of the benchmark: without it there is no ratio to report.
    let out = match out {
        Ok(out) if out.status.success() => out,
        Ok(out) => panic!(
            "redis-benchmark failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!(
            "redis-benchmark is needed as the peer of this benchmark (Debian package redis-tools): {e}"
        ),
    };
    String::from_utf8_lossy(&out.stdout)
        .split(['\n', '\r'])
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let rate: f64 = rest.split_whitespace().next()?.parse().ok()?;
            Some((name.trim().to_string(), rate))
        })
        .collect()
}

async fn submit(store: &Store, n: usize) -> Vec<String> {
    submit_admitted(store, n, false).await
}

/// Submits `n` reviews; `admit` also admits them (their first job waits in the outbox).
async fn submit_admitted(store: &Store, n: usize, admit: bool) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let id = uuid::Uuid::now_v7().to_string();
        store
            .submit_review(&NewPipelineReview {
                id: id.clone(),
                tenant_id: None,
                repository: "bench".into(),
                base_rev: "a".into(),
                head_rev: "b".into(),
                priority: 0,
                batch_id: None,
                pr_key: None,
                request: "{}".into(),
                deadline_us: None,
                trace_id: None,
            })
            .await
            .expect("submit");
        if admit {
            store
                .admit_review(&id, &NewStep::new("intake", "evidence"))
                .await
                .expect("admit");
        }
        ids.push(id);
    }
    ids
}

async fn wait_all(store: &Store, ids: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(600);
    for id in ids {
        loop {
            let r = store.review(id).await.expect("review");
            if r.status == proven_store::ReviewStatus::Complete {
                break;
            }
            assert!(Instant::now() < deadline, "bench did not finish");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

struct Running {
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

async fn start(store: &Store, prefix: &str, workers: usize, chain: bool) -> Running {
    let redis = RedisConfig::new("redis://127.0.0.1:6379", prefix);
    let queue: Arc<dyn Queue> = Arc::new(RedisQueue::connect(&redis).await.expect("redis"));
    let (stop, rx) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let mut tasks = Vec::new();
    let wake = Wake::default();
    let config = ReconcilerConfig {
        push_every: Duration::from_millis(20),
        admission: proven_pipeline::admission::AdmissionConfig {
            max_running: 10_000,
            ..Default::default()
        },
        ..Default::default()
    };
    tasks.push(tokio::spawn(reconciler::run(
        store.clone(),
        queue,
        config,
        wake.clone(),
        stopped(rx.clone()),
    )));
    for w in 0..workers {
        let exec = Arc::new(
            Executor::new(
                store.clone(),
                Arc::new(Noop { chain }),
                format!("bench-{w}"),
                Duration::from_secs(30),
            )
            .with_wake(wake.clone()),
        );
        let families = vec!["evidence".to_string(), "control".to_string()];
        tasks.push(tokio::spawn(proven_pipeline::redis::serve(
            redis.clone(),
            exec,
            families,
            16,
            stopped(rx.clone()),
        )));
    }
    Running { stop, tasks }
}

impl Running {
    async fn stop(self) {
        let _ = self.stop.send(true);
        for t in self.tasks {
            let _ = t.await;
        }
    }
}

fn main() {
    let jobs: usize = std::env::var("PROVEN_BENCH_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let raw = redis_benchmark();
        println!("redis-benchmark, 1 client: {}", raw.iter().map(|(n, r)| format!("{n} {r:.0} req/s")).collect::<Vec<_>>().join(", "));
        let raw_set = raw
            .iter()
            .find(|(n, _)| n == "SET")
            .map(|(_, r)| *r)
            .unwrap_or_else(|| panic!("redis-benchmark reported no SET rate: {raw:?}"));

        for workers in [1usize, 4] {
            let t = TestStore::new(Backend::Postgres).await;
            let prefix = format!("proven-bench-{}", uuid::Uuid::now_v7().simple());
            // Admitted before the clock starts: this measures the queue path (outbox push,
            // Redis delivery, claim, fenced commit), not admission.
            let ids = submit_admitted(&t.store, jobs, true).await;
            let started = Instant::now();
            let running = start(&t.store, &prefix, workers, false).await;
            wait_all(&t.store, &ids).await;
            let secs = started.elapsed().as_secs_f64();
            running.stop().await;
            let rate = jobs as f64 / secs;
            println!(
                "no-op steps, {workers} worker(s): {jobs} jobs in {secs:.2} s = {rate:.0} jobs/s ({:.3} of raw SET, {:.2} ms/job)",
                rate / raw_set,
                1000.0 / rate
            );
            t.cleanup().await;
        }

        let t = TestStore::new(Backend::Postgres).await;
        let prefix = format!("proven-bench-{}", uuid::Uuid::now_v7().simple());
        let running = start(&t.store, &prefix, 1, true).await;
        let mut times = Vec::new();
        for _ in 0..21 {
            let ids = submit(&t.store, 1).await;
            let started = Instant::now();
            wait_all(&t.store, &ids).await;
            times.push(started.elapsed());
        }
        running.stop().await;
        times.remove(0); // warm-up
        times.sort();
        let median = times[times.len() / 2];
        // Hops: admission, intake, plan, collect, file (2 in parallel), judge.
        println!(
            "review of no-op steps (6 hops incl. admission): median {:.1} ms end to end, {:.1} ms per hop (of 20)",
            median.as_secs_f64() * 1000.0,
            median.as_secs_f64() * 1000.0 / 6.0
        );
        t.cleanup().await;
    });
}
