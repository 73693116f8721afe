//! The durable pipeline measured beside its peers, in the same run.
//!
//! 1. Throughput: no-op steps through the service's whole path (outbox push, Redis
//!    delivery, claim, fenced commit) served by N workers (each a worker process's stack:
//!    its own store pool, Redis connections, reconciler and executor with `SLOTS` steps at
//!    once), against `pgbench -N` with N clients (one small write transaction each) on a
//!    pgbench database in the same Postgres, for N = 1, 2, 4: steps/s ÷ transactions/s.
//! 2. Latency: a review of five no-op hops (intake → plan → collect → fan-out of 2 → judge),
//!    one at a time, end to end and per hop:
//!    - embedded (SQLite, in-process queue, wired as `proven review` wires it), beside one
//!      SQLite write transaction on the same store;
//!    - service (Postgres, Redis, a worker), from submission (admission included), beside one
//!      Postgres round trip and one Redis round trip.
//!
//! Needs Postgres (PROVEN_TEST_POSTGRES_URL, and `pgbench` on PATH) and Redis on
//! 127.0.0.1:6379. Run: `cargo bench -p proven-worker --bench queue` or
//! `cargo xtask bench queue`. PROVEN_BENCH_JOBS (default 4000) steps per throughput run;
//! PROVEN_BENCH_CLIENTS (default `1,2,4`) the client counts measured;
//! PROVEN_BENCH_LATENCY=0 leaves the latency runs out (for profiling one throughput point);
//! PROVEN_BENCH_DIAG=1 adds where the time goes (statements, transactions and Redis
//! commands per step, CPU per process, Postgres wait events).

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use proven_pipeline::memory::MemoryQueue;
use proven_pipeline::reconciler::{self, ReconcilerConfig, Wake};
use proven_pipeline::redis::{RedisConfig, RedisQueue};
use proven_pipeline::{BoxFuture, Executor, Lease, NewStep, Outcome, Queue, StepError, Steps};
use proven_store::testing::{Backend, TestStore};
use proven_store::{NewPipelineReview, Store, StoreError};

/// Steps at once per worker (the `worker_concurrency` default).
const SLOTS: usize = 8;

/// Sequential hops of the chain review: intake, plan, collect, file (two at once), judge.
const HOPS: f64 = 5.0;

/// Steps that do nothing: `single` ends at once; `chain` walks five hops with a fan-out.
/// `finishing` counts the steps that returned a review's end (so the throughput run waits
/// without reading the store once per step).
struct Noop {
    chain: bool,
    finishing: Arc<std::sync::atomic::AtomicUsize>,
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
            if out.finish.is_some() {
                self.finishing
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(out)
        })
    }
    fn judge_dead_lettered<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
}

/// The peer's database: `pgbench -i` in the same Postgres, made once and kept.
const PGBENCH_DB: &str = "proven_bench_pgbench";

fn pg_args() -> Vec<String> {
    // postgres://user@host:port/db → pgbench's -h -p -U.
    let url = proven_store::testing::postgres_admin_url();
    let rest = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
    let (auth, hostpart) = rest.rsplit_once('@').unwrap_or(("postgres", rest));
    let user = auth.split(':').next().unwrap_or("postgres");
    let hostport = hostpart.split('/').next().unwrap_or("127.0.0.1:5432");
    let (host, port) = hostport.split_once(':').unwrap_or((hostport, "5432"));
    vec![
        "-h".into(),
        host.into(),
        "-p".into(),
        port.into(),
        "-U".into(),
        user.into(),
    ]
}

fn run_tool(program: &str, args: &[String]) -> String {
    let out = Command::new(program).args(args).output();
    // The peer is the point of the benchmark: without it there is no ratio to report.
    match out {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        Ok(out) => panic!(
            "{program} {} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!(
            "{program} is needed as the peer of this benchmark (Debian package postgresql-contrib or postgresql-client): {e}"
        ),
    }
}

/// Initialises the pgbench database (scale 1) when it is not there yet.
fn pgbench_init() {
    let mut args = pg_args();
    args.extend([
        "-d".into(),
        "postgres".into(),
        "-Atc".into(),
        format!("SELECT 1 FROM pg_database WHERE datname = '{PGBENCH_DB}'"),
    ]);
    if run_tool("psql", &args).trim() != "1" {
        let mut args = pg_args();
        args.extend([
            "-d".into(),
            "postgres".into(),
            "-c".into(),
            format!("CREATE DATABASE {PGBENCH_DB}"),
        ]);
        run_tool("psql", &args);
    }
    let mut args = pg_args();
    args.extend([
        "-i".into(),
        "-q".into(),
        "-s".into(),
        "1".into(),
        PGBENCH_DB.into(),
    ]);
    run_tool("pgbench", &args);
}

/// `pgbench -N` (simple update: one UPDATE, one SELECT, one INSERT per transaction) with
/// `clients` clients for `secs` seconds: transactions per second.
fn pgbench(clients: usize, secs: u64) -> f64 {
    let mut args = pg_args();
    args.extend([
        "-N".into(),
        "-c".into(),
        clients.to_string(),
        "-j".into(),
        clients.to_string(),
        "-T".into(),
        secs.to_string(),
        PGBENCH_DB.into(),
    ]);
    let out = run_tool("pgbench", &args);
    out.lines()
        .find_map(|l| {
            let rest = l.strip_prefix("tps = ")?;
            rest.split_whitespace().next()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("pgbench printed no tps: {out}"))
}

fn review(id: &str) -> NewPipelineReview {
    NewPipelineReview {
        repository: "bench".into(),
        ..proven_store::testing::pipeline_review(id)
    }
}

/// Submits and admits `n` single-step reviews (their first jobs wait in the outbox).
async fn submit_admitted(store: &Store, n: usize) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let id = uuid::Uuid::now_v7().to_string();
        store.submit_review(&review(&id)).await.expect("submit");
        store
            .admit_review(&id, &NewStep::new("intake", "evidence"))
            .await
            .expect("admit");
        ids.push(id);
    }
    ids
}

/// A worker's stack: its own store pool, queue connections, reconciler and executor.
struct Worker {
    store: Store,
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

async fn start_worker(
    url: &str,
    prefix: &str,
    name: &str,
    chain: bool,
    ended: Arc<tokio::sync::Notify>,
    finishing: Arc<std::sync::atomic::AtomicUsize>,
) -> Worker {
    let store = Store::open_url(url).await.expect("worker store");
    let redis = RedisConfig::new("redis://127.0.0.1:6379", prefix);
    let queue: Arc<dyn Queue> = Arc::new(RedisQueue::connect(&redis).await.expect("redis"));
    let (stop, rx) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let wake = Wake::default();
    let config = ReconcilerConfig {
        admission: proven_pipeline::admission::AdmissionConfig {
            max_running: 100_000,
            ..Default::default()
        },
        ..Default::default()
    };
    let worker_store = store.clone();
    let mut tasks = vec![tokio::spawn(reconciler::run(
        store.clone(),
        queue,
        config,
        wake.clone(),
        stopped(rx.clone()),
    ))];
    let exec = Arc::new(
        Executor::new(
            store,
            Arc::new(Noop { chain, finishing }),
            name.to_string(),
            Duration::from_secs(30),
        )
        .with_wake(wake)
        .with_review_ended(ended),
    );
    tasks.push(tokio::spawn(proven_pipeline::redis::serve(
        redis,
        exec,
        vec!["evidence".to_string(), "control".to_string()],
        SLOTS,
        stopped(rx),
    )));
    Worker {
        store: worker_store,
        stop,
        tasks,
    }
}

impl Worker {
    async fn stop(self) {
        let _ = self.stop.send(true);
        for t in self.tasks {
            let _ = t.await;
        }
    }
}

/// Waits until every review in `ids` is complete, woken by the executors' end signal.
async fn wait_all(store: &Store, ids: &[String], ended: &tokio::sync::Notify) {
    let deadline = Instant::now() + Duration::from_secs(600);
    for id in ids {
        loop {
            let r = store.review(id).await.expect("review");
            if r.status == proven_store::ReviewStatus::Complete {
                break;
            }
            assert!(Instant::now() < deadline, "bench did not finish");
            let _ = tokio::time::timeout(Duration::from_millis(100), ended.notified()).await;
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Proven's steps/s with `workers` workers.
async fn throughput(
    workers: usize,
    jobs: usize,
    statements: &Arc<std::sync::atomic::AtomicU64>,
) -> f64 {
    let t = TestStore::new(Backend::Postgres).await;
    let prefix = format!("proven-bench-{}", uuid::Uuid::now_v7().simple());
    // Admitted before the clock starts: this measures the queue path (outbox push, Redis
    // delivery, claim, fenced commit), not admission.
    let ids = submit_admitted(&t.store, jobs).await;
    let ended = Arc::new(tokio::sync::Notify::new());
    let diag = if diag_enabled() {
        Some(Diag::start(&t.url, statements.clone()).await)
    } else {
        None
    };
    let finishing = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    if diag.is_some() {
        // For a profiler started from outside (scripts wait for this line).
        eprintln!("measuring {workers} worker(s)");
    }
    let started = Instant::now();
    let mut running = Vec::new();
    for w in 0..workers {
        running.push(
            start_worker(
                &t.url,
                &prefix,
                &format!("bench-{w}"),
                false,
                ended.clone(),
                finishing.clone(),
            )
            .await,
        );
    }
    // Every step has run once its count is reached; then the store must say so.
    while finishing.load(std::sync::atomic::Ordering::Relaxed) < ids.len() {
        let _ = tokio::time::timeout(Duration::from_millis(100), ended.notified()).await;
    }
    // Then the last commits land: one count a wake-up (a read per review here would be the
    // harness's own round trips, thousands of them, inside the clock).
    while t.store.running_reviews().await.expect("count") > 0 {
        let _ = tokio::time::timeout(Duration::from_millis(5), ended.notified()).await;
    }
    let secs = started.elapsed().as_secs_f64();
    if let Some(d) = diag {
        d.finish(jobs, secs).await;
        let claims: u64 = running.iter().map(|w| w.store.claim_batches()).sum();
        let commits: u64 = running.iter().map(|w| w.store.commit_batches()).sum();
        println!(
            "  diag: grouped: {jobs} claims in {claims} statements ({:.1} a statement), {jobs} commits in {commits} transactions ({:.1} a transaction)",
            jobs as f64 / claims.max(1) as f64,
            jobs as f64 / commits.max(1) as f64
        );
    }
    // Every review is read back complete (outside the clock).
    wait_all(&t.store, &ids, &ended).await;
    for w in running {
        w.stop().await;
    }
    t.cleanup().await;
    jobs as f64 / secs
}

/// Service mode: `n` chain reviews one at a time through one worker, from submission.
async fn service_latency(n: usize) -> (Duration, Duration, Duration, Duration) {
    let t = TestStore::new(Backend::Postgres).await;
    let prefix = format!("proven-bench-{}", uuid::Uuid::now_v7().simple());
    let ended = Arc::new(tokio::sync::Notify::new());
    let finishing = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let worker = start_worker(
        &t.url,
        &prefix,
        "bench-latency",
        true,
        ended.clone(),
        finishing,
    )
    .await;
    let mut total = Vec::new();
    let mut hops = Vec::new();
    for _ in 0..n + 1 {
        let id = uuid::Uuid::now_v7().to_string();
        let started = Instant::now();
        let submitted_us = proven_store::now_us();
        t.store.submit_review(&review(&id)).await.expect("submit");
        wait_all(&t.store, std::slice::from_ref(&id), &ended).await;
        let took = started.elapsed();
        let ended_us = proven_store::now_us();
        // The hops proper: from admission (the first step's creation) to the end.
        let steps = t.store.steps_of(&id).await.expect("steps");
        let admitted_us = steps
            .iter()
            .map(|s| s.created_us)
            .min()
            .unwrap_or(submitted_us);
        total.push(took);
        hops.push(Duration::from_micros(
            ((ended_us - admitted_us).max(0) as f64 / HOPS) as u64,
        ));
    }
    worker.stop().await;
    // Peers on the same services: one Postgres round trip, one Redis round trip.
    let mut pg = Vec::new();
    for _ in 0..200 {
        let s = Instant::now();
        t.store.ping().await.expect("ping");
        pg.push(s.elapsed());
    }
    let client = redis::Client::open("redis://127.0.0.1:6379").expect("redis url");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("redis");
    let mut rd = Vec::new();
    for _ in 0..200 {
        let s = Instant::now();
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .expect("PING");
        rd.push(s.elapsed());
    }
    t.cleanup().await;
    total.remove(0); // warm-up
    hops.remove(0);
    (median(total), median(hops), median(pg), median(rd))
}

/// Embedded mode, wired as `proven review` wires it (proven-review's embedded.rs): a
/// SQLite store, the in-process queue, the reconciler, an executor whose end signal the
/// caller waits on; `n` chain reviews, each started (admitted) at once.
async fn embedded_latency(n: usize) -> (Duration, Duration, Duration) {
    let t = TestStore::new(Backend::Sqlite).await;
    let mut total = Vec::new();
    let mut hops = Vec::new();
    for _ in 0..n + 1 {
        let store = t.store.clone();
        let started = Instant::now();
        let id = uuid::Uuid::now_v7().to_string();
        store
            .start_review(&review(&id), &NewStep::new("intake", "evidence"))
            .await
            .expect("start");
        let wake = Wake::default();
        let ended = Arc::new(tokio::sync::Notify::new());
        let executor = Arc::new(
            Executor::new(
                store.clone(),
                Arc::new(Noop {
                    chain: true,
                    finishing: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
                }),
                "embedded-bench".into(),
                Duration::from_secs(30),
            )
            .with_wake(wake.clone())
            .with_review_ended(ended.clone()),
        );
        let queue = Arc::new(MemoryQueue::new());
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        let serve = tokio::spawn(queue.clone().serve(executor, 4, stopped(stop_rx.clone())));
        let dyn_queue: Arc<dyn Queue> = queue;
        let recon = tokio::spawn(reconciler::run(
            store.clone(),
            dyn_queue,
            ReconcilerConfig {
                push_every: Duration::from_millis(200),
                ..ReconcilerConfig::default()
            },
            wake.clone(),
            stopped(stop_rx),
        ));
        wake.wake();
        loop {
            let r = store.review(&id).await.expect("review");
            if r.status == proven_store::ReviewStatus::Complete {
                break;
            }
            let _ = tokio::time::timeout(Duration::from_secs(1), ended.notified()).await;
        }
        total.push(started.elapsed());
        hops.push(started.elapsed() / HOPS as u32);
        let _ = stop_tx.send(true);
        let _ = serve.await;
        let _ = recon.await;
    }
    // The peer: one write transaction on the same SQLite store (a review's insert).
    let mut tx = Vec::new();
    for _ in 0..200 {
        let id = uuid::Uuid::now_v7().to_string();
        let s = Instant::now();
        t.store.submit_review(&review(&id)).await.expect("submit");
        tx.push(s.elapsed());
    }
    t.cleanup().await;
    total.remove(0); // warm-up
    hops.remove(0);
    (median(total), median(hops), median(tx))
}

fn main() {
    let jobs: usize = std::env::var("PROVEN_BENCH_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let statements = Arc::new(std::sync::atomic::AtomicU64::new(0));
    if diag_enabled() {
        tracing::subscriber::set_global_default(StatementCounter(statements.clone()))
            .expect("no other subscriber");
    }
    pgbench_init();
    rt.block_on(async move {
        let mut ratios = Vec::new();
        let clients: Vec<usize> = std::env::var("PROVEN_BENCH_CLIENTS")
            .ok()
            .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
            .unwrap_or_else(|| vec![1, 2, 4]);
        for &n in &clients {
            // The peer right before and right after, so a change in the machine's load
            // during the run weighs on both sides.
            let before = pgbench(n, 4);
            let ours = throughput(n, jobs, &statements).await;
            let after = pgbench(n, 4);
            let peer = (before + after) / 2.0;
            let ratio = ours / peer;
            ratios.push(ratio);
            println!(
                "queue, {n} client(s): Proven {ours:.0} no-op steps/s ({n} worker(s) × {SLOTS} slots, {jobs} steps) \
                 vs pgbench -N {peer:.0} tps ({n} client(s), mean of {before:.0} before and {after:.0} after) = {ratio:.2}× (target ≥ 0.70)"
            );
        }
        println!(
            "queue ratios at {} clients: {} (target ≥ 0.70 each: {})",
            clients.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
            ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(", "),
            if ratios.iter().all(|r| *r >= 0.7) { "met" } else { "NOT met" }
        );

        if std::env::var("PROVEN_BENCH_LATENCY").is_ok_and(|v| v == "0") {
            return;
        }
        let (e2e, hop, tx) = embedded_latency(20).await;
        println!(
            "latency, embedded (SQLite, in-process queue): no-op review of 5 hops median {:.1} ms end to end (target ≤ 100 ms), \
             {:.2} ms per hop = {:.1}× one SQLite write transaction ({:.2} ms)",
            ms(e2e),
            ms(hop),
            hop.as_secs_f64() / tx.as_secs_f64(),
            ms(tx)
        );
        let (e2e, hop, pg, rd) = service_latency(20).await;
        println!(
            "latency, service (Postgres, Redis, 1 worker): no-op review of 5 hops median {:.1} ms end to end from submission, admission included (target ≤ 150 ms), \
             {:.2} ms per hop = {:.1}× one Postgres round trip ({:.3} ms), {:.1}× one Redis round trip ({:.3} ms)",
            ms(e2e),
            ms(hop),
            hop.as_secs_f64() / pg.as_secs_f64(),
            ms(pg),
            hop.as_secs_f64() / rd.as_secs_f64(),
            ms(rd)
        );
    });
}

// ---------------------------------------------------------------------------------------
// Diagnostics (PROVEN_BENCH_DIAG=1): where a step's time goes, measured beside the run.
// ---------------------------------------------------------------------------------------

/// Counts the statements sqlx sends (its `sqlx::query` events: one per round trip,
/// BEGIN and COMMIT included) and nothing else.
struct StatementCounter(Arc<std::sync::atomic::AtomicU64>);

impl tracing::Subscriber for StatementCounter {
    fn enabled(&self, m: &tracing::Metadata<'_>) -> bool {
        m.target() == "sqlx::query"
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, e: &tracing::Event<'_>) {
        if e.metadata().target() == "sqlx::query" {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

fn diag_enabled() -> bool {
    std::env::var("PROVEN_BENCH_DIAG").is_ok_and(|v| v == "1")
}

/// CPU seconds (user + system) of a process, from /proc.
fn cpu_secs(pid: &str) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces): state is field 3.
    let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

async fn redis_info(section: &str) -> std::collections::HashMap<String, String> {
    let client = redis::Client::open("redis://127.0.0.1:6379").expect("redis url");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("redis");
    let text: String = redis::cmd("INFO")
        .arg(section)
        .query_async(&mut conn)
        .await
        .expect("INFO");
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

fn redis_calls(info: &std::collections::HashMap<String, String>) -> Vec<(String, u64)> {
    info.iter()
        .filter_map(|(k, v)| {
            let cmd = k.strip_prefix("cmdstat_")?;
            let calls = v.split(',').find_map(|p| p.strip_prefix("calls="))?;
            Some((cmd.to_string(), calls.parse().ok()?))
        })
        .collect()
}

fn redis_cpu(info: &std::collections::HashMap<String, String>) -> f64 {
    ["used_cpu_sys", "used_cpu_user"]
        .iter()
        .filter_map(|k| info.get(*k)?.parse::<f64>().ok())
        .sum()
}

struct Diag {
    db: String,
    pg: sqlx::PgPool,
    stop: tokio::sync::watch::Sender<bool>,
    sampler: tokio::task::JoinHandle<(u64, std::collections::BTreeMap<String, u64>)>,
    statements: Arc<std::sync::atomic::AtomicU64>,
    statements0: u64,
    self_cpu0: f64,
    redis_cpu0: f64,
    redis_calls0: Vec<(String, u64)>,
    xact0: i64,
    wal0: i64,
    pg_cpu0: std::collections::HashMap<i32, f64>,
}

/// WAL flushes (fsyncs) of the whole server: other databases' commits count too.
async fn pg_wal_syncs(pg: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar("SELECT wal_sync FROM pg_stat_wal")
        .fetch_one(pg)
        .await
        .unwrap_or(0)
}

async fn pg_xacts(pg: &sqlx::PgPool, db: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1",
    )
    .bind(db)
    .fetch_one(pg)
    .await
    .unwrap_or(0)
}

/// CPU seconds of each backend connected to `db` (its pool's connections).
async fn pg_backend_cpu(pg: &sqlx::PgPool, db: &str) -> std::collections::HashMap<i32, f64> {
    let pids: Vec<(i32,)> = sqlx::query_as(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
    )
    .bind(db)
    .fetch_all(pg)
    .await
    .unwrap_or_default();
    pids.into_iter()
        .map(|(p,)| (p, cpu_secs(&p.to_string())))
        .collect()
}

impl Diag {
    async fn start(url: &str, statements: Arc<std::sync::atomic::AtomicU64>) -> Diag {
        let db = url.rsplit('/').next().unwrap_or_default().to_string();
        let admin = proven_store::testing::postgres_admin_url();
        // Its own statements are not counted (they are not the pipeline's).
        let options: sqlx::postgres::PgConnectOptions = admin.parse().expect("admin url");
        let pg = sqlx::postgres::PgPoolOptions::new()
            .max_connections(2)
            .connect_with(sqlx::ConnectOptions::disable_statement_logging(options))
            .await
            .expect("diag connection");
        let xact0 = pg_xacts(&pg, &db).await;
        let wal0 = pg_wal_syncs(&pg).await;
        let pg_cpu0 = pg_backend_cpu(&pg, &db).await;
        let (stop, mut rx) = tokio::sync::watch::channel(false);
        let sample_pg = pg.clone();
        let sample_db = db.clone();
        let sampler = tokio::spawn(async move {
            let mut seen = std::collections::BTreeMap::new();
            let mut ticks = 0u64;
            while !*rx.borrow() {
                let rows: Vec<(String, String, String)> = sqlx::query_as(
                    "SELECT COALESCE(wait_event_type, 'CPU'), COALESCE(wait_event, 'running'), \
                     LEFT(regexp_replace(query, '\\s+', ' ', 'g'), 48) FROM pg_stat_activity \
                     WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()",
                )
                .bind(&sample_db)
                .fetch_all(&sample_pg)
                .await
                .unwrap_or_default();
                ticks += 1;
                for (t, e, q) in rows {
                    *seen.entry(format!("{t}:{e} | {q}")).or_insert(0u64) += 1;
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(10)) => {}
                    _ = rx.changed() => {}
                }
            }
            (ticks, seen)
        });
        let info = redis_info("all").await;
        Diag {
            db,
            pg,
            stop,
            sampler,
            statements0: statements.load(std::sync::atomic::Ordering::Relaxed),
            statements,
            self_cpu0: cpu_secs("self"),
            redis_cpu0: redis_cpu(&info),
            redis_calls0: redis_calls(&info),
            xact0,
            wal0,
            pg_cpu0,
        }
    }

    /// Prints what `steps` steps cost, per step.
    async fn finish(self, steps: usize, secs: f64) {
        let self_cpu = cpu_secs("self") - self.self_cpu0;
        let statements =
            self.statements.load(std::sync::atomic::Ordering::Relaxed) - self.statements0;
        let info = redis_info("all").await;
        let redis_cpu = redis_cpu(&info) - self.redis_cpu0;
        let mut calls: Vec<(String, u64)> = redis_calls(&info)
            .into_iter()
            .map(|(c, n)| {
                let before = self
                    .redis_calls0
                    .iter()
                    .find(|(b, _)| *b == c)
                    .map_or(0, |(_, n)| *n);
                (c, n - before)
            })
            // The diagnostics' own INFO calls are not the pipeline's.
            .filter(|(c, n)| *n > 0 && c != "info")
            .collect();
        calls.sort_by_key(|c| std::cmp::Reverse(c.1));
        let wal = pg_wal_syncs(&self.pg).await - self.wal0;
        let pids = pg_backend_cpu(&self.pg, &self.db).await;
        let pg_cpu: f64 = pids
            .iter()
            .map(|(p, c)| c - self.pg_cpu0.get(p).copied().unwrap_or(0.0))
            .sum();
        let _ = self.stop.send(true);
        let (ticks, seen) = self.sampler.await.expect("sampler");
        // Statistics reach pg_stat_database when a backend goes idle: give them a moment.
        tokio::time::sleep(Duration::from_millis(1200)).await;
        let xact = pg_xacts(&self.pg, &self.db).await;
        let n = steps as f64;
        println!(
            "  diag: per step: {:.1} SQL statements (round trips), {:.2} Postgres transactions, {:.2} WAL flushes (whole server), Redis {}",
            statements as f64 / n,
            (xact - self.xact0) as f64 / n,
            wal as f64 / n,
            calls
                .iter()
                .take(8)
                .map(|(c, k)| format!("{c} {:.2}", *k as f64 / n))
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!(
            "  diag: CPU over {secs:.2} s wall: bench process {self_cpu:.2} s, its Postgres backends {pg_cpu:.2} s ({} backends), redis-server {redis_cpu:.2} s; per step {:.0} µs + {:.0} µs + {:.0} µs",
            pids.len(),
            self_cpu / n * 1e6,
            pg_cpu / n * 1e6,
            redis_cpu / n * 1e6
        );
        let mut seen: Vec<_> = seen.into_iter().collect();
        seen.sort_by_key(|s| std::cmp::Reverse(s.1));
        println!("  diag: active backends per sample ({ticks} samples of pg_stat_activity):");
        for (what, k) in seen.iter().take(10) {
            println!("    {:.2}  {what}", *k as f64 / ticks.max(1) as f64);
        }
        self.pg.close().await;
    }
}
