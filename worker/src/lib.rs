//! A worker process: serves the queue families it is given (`evidence`, `control`, `model`,
//! `sandbox`) with the review's step handlers, and runs the reconciler beside them
//! (outbox pusher, admission, re-enqueue of lost jobs, overdue judging). Any number of
//! workers run against the same store and Redis; they share nothing else.

mod publish;
pub mod rereview;

use std::sync::Arc;
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusHandle;
use proven_config::{Config, Layers};
use proven_pipeline::admission::AdmissionConfig;
use proven_pipeline::reconciler::{self, ReconcilerConfig, Wake};
use proven_pipeline::redis::{RedisConfig, RedisQueue};
use proven_pipeline::{BoxFuture, Executor, Lease, Outcome, Queue, StepError, Steps};
use proven_review::pipeline::ReviewSteps;
use proven_store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("{0}")]
    Queue(#[from] proven_pipeline::QueueError),
    #[error("unknown queue family {0:?} (known: evidence, control, model, sandbox)")]
    UnknownFamily(String),
    #[error("the model agents: {0}")]
    Agents(String),
    #[error("the sandbox queue needs Docker: {0}")]
    Sandbox(#[from] proven_sandbox::SandboxError),
    #[error("the GitHub App: {0}")]
    GitHub(String),
    #[error("metrics listener {addr}: {source}")]
    Metrics {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
}

/// A deliberate fault, for the chaos tests only: a review whose repository path contains
/// `marker` aborts the worker process when its `step` runs (a poison job).
#[derive(Debug, Clone)]
pub struct Fault {
    pub marker: String,
    pub step: String,
}

pub struct WorkerOptions {
    pub queues: Vec<String>,
    pub layers: Layers,
    pub fault: Option<Fault>,
    pub metrics: Option<PrometheusHandle>,
}

struct Faulty {
    inner: ReviewSteps,
    fault: Fault,
    store: Store,
}

impl Steps for Faulty {
    fn run<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Outcome, StepError>> {
        Box::pin(async move {
            if lease.id.step == self.fault.step
                && let Ok(review) = self.store.review(&lease.id.review_id).await
                && review.repository.contains(&self.fault.marker)
            {
                tracing::error!(review = %lease.id.review_id, "fault injection: aborting the worker");
                std::process::abort();
            }
            self.inner.run(lease).await
        })
    }

    fn judge_dead_lettered<'a>(
        &'a self,
        review_id: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.judge_dead_lettered(review_id)
    }
}

/// The GitHub App, when the operator configured one (an id without its key is refused).
fn app_client(config: &Config) -> Result<Option<Arc<proven_github::AppClient>>, WorkerError> {
    let Some(id) = config.github.app_id else {
        return Ok(None);
    };
    let key = config.github.private_key.as_deref().ok_or_else(|| {
        WorkerError::GitHub(
            "PROVEN_GITHUB_APP_ID is set but PROVEN_GITHUB_PRIVATE_KEY is not".into(),
        )
    })?;
    proven_github::AppClient::new(id, key, &config.github.api_url)
        .map(|c| Some(Arc::new(c)))
        .map_err(WorkerError::GitHub)
}

/// Resolves once `rx` has seen the stop signal.
async fn stopped(mut rx: tokio::sync::watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}

/// Calls `once` until `stop` resolves: again at once when it did some work, after `idle`
/// when there was none, after two seconds when the store failed (logged, naming `what`).
async fn poll<F, Fut>(
    what: &'static str,
    idle: Duration,
    stop: impl std::future::Future<Output = ()>,
    mut once: F,
) where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool, StoreError>>,
{
    tokio::pin!(stop);
    loop {
        let pause = match once().await {
            Ok(true) => Duration::ZERO,
            Ok(false) => idle,
            Err(e) => {
                tracing::warn!(error = %e, "{what}: the store");
                Duration::from_secs(2)
            }
        };
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(pause) => {}
        }
    }
}

/// What the executor serving the queues needs besides its steps.
struct Serving {
    store: Store,
    redis: RedisConfig,
    queues: Vec<String>,
    owner: String,
    wake: Wake,
    stop: tokio::sync::watch::Receiver<bool>,
}

impl Serving {
    /// Serves the queues with `steps` (each job claimed, run and committed by one
    /// executor) until the stop signal.
    fn spawn<S: Steps>(self, steps: S, config: &Config) -> tokio::task::JoinHandle<()> {
        let executor = Arc::new(
            Executor::new(self.store, Arc::new(steps), self.owner, config.lease)
                .with_step_deadline(config.step_deadline)
                .with_wake(self.wake),
        );
        tokio::spawn(proven_pipeline::redis::serve(
            self.redis,
            executor,
            self.queues,
            config.worker_concurrency,
            stopped(self.stop),
        ))
    }
}

/// Serves `/metrics` on `addr` until `stop` resolves.
async fn serve_metrics(
    addr: std::net::SocketAddr,
    handle: PrometheusHandle,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), WorkerError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| WorkerError::Metrics { addr, source })?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || async move { handle.render() }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(stop)
            .await;
    });
    Ok(())
}

/// The reconciler beside the queues (outbox pusher, admission, re-enqueue of lost jobs,
/// overdue judging), until `stop` resolves.
fn spawn_reconciler(
    store: Store,
    queue: Arc<dyn Queue>,
    config: &Config,
    wake: Wake,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let recon_config = ReconcilerConfig {
        stale_after: config.requeue_after,
        admission: AdmissionConfig {
            max_running: config.max_running_reviews,
            ..AdmissionConfig::default()
        },
        ..ReconcilerConfig::default()
    };
    tokio::spawn(reconciler::run(store, queue, recon_config, wake, stop))
}

/// The sandbox-runner pool: Docker, a sweep of the containers a killed runner left (now,
/// then every minute until `stop` resolves), and warm containers for each image.
async fn start_sandbox(
    config: &Config,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<Arc<proven_sandbox::Sandbox>, WorkerError> {
    let sandbox = Arc::new(
        proven_sandbox::Sandbox::connect(proven_sandbox::SandboxConfig::from_settings(
            &config.sandbox,
        )?)
        .await?,
    );
    proven_sandbox::metrics::register_zeros();
    match sandbox.sweep().await {
        Ok(n) if n > 0 => tracing::info!(removed = n, "swept containers left by a dead runner"),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "sweep failed"),
    }
    // Warm containers for each image, so the first runs start warm too (a language
    // whose image is missing is only logged: its runs will name the image).
    for language in sandbox.config().pool_languages.clone() {
        let warming = sandbox.clone();
        tokio::spawn(async move {
            if let Err(e) = warming.prewarm(language).await {
                tracing::warn!(%language, error = %e, "could not warm the pool");
            }
        });
    }
    let sweeper = sandbox.clone();
    tokio::spawn(async move {
        tokio::pin!(stop);
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        tick.tick().await;
        loop {
            tokio::select! {
                _ = &mut stop => return,
                _ = tick.tick() => {
                    if let Err(e) = sweeper.sweep().await {
                        tracing::warn!(error = %e, "sweep failed");
                    }
                }
            }
        }
    });
    Ok(sandbox)
}

/// Publishes finished reviews to GitHub (check runs, comments), one claimed publication at
/// a time, until `stop` resolves.
fn spawn_publications(
    steps: &ReviewSteps,
    config: &Config,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let publications = publish::Publications::new(
        steps,
        proven_github::CheckOptions {
            name: config.github.check_name.clone(),
            findings: config.github.findings_conclusion.clone(),
            advisory_only: config.github.advisory_conclusion.clone(),
            not_reached: config.github.not_reached_conclusion.clone(),
        },
        config.github.sarif,
        config.github.publish_lease_secs,
    );
    tokio::spawn(async move {
        poll("publications", Duration::from_millis(250), stop, || {
            publications.publish_one()
        })
        .await
    });
}

/// The review steps this worker runs, with what its families need: the models, the
/// sandbox (whose pool the caller drains at the end) and GitHub; the control family's
/// workers publish finished reviews and the model family's answer questions.
async fn review_steps(
    store: &Store,
    config: &Config,
    options: &WorkerOptions,
    stop_rx: &tokio::sync::watch::Receiver<bool>,
) -> Result<(ReviewSteps, Option<Arc<proven_sandbox::Sandbox>>), WorkerError> {
    let serves = |family: &str| options.queues.iter().any(|q| q == family);
    let mut steps = ReviewSteps::new(
        store.clone(),
        options.layers.clone(),
        proven_source::Sources::service(config),
    );
    // Every worker with the models configured holds them, whatever its families: the
    // `plan` step (not of the model family) plans the agents only when they are there, so a
    // worker of `evidence,control` without them planned every review of code as partial.
    if config.agents {
        let agents =
            proven_review::model::Agents::from_config(config).map_err(WorkerError::Agents)?;
        steps = steps.with_agents(Arc::new(agents));
    }
    let mut pool_owner = None;
    if serves("sandbox") {
        let sandbox = start_sandbox(config, stopped(stop_rx.clone())).await?;
        pool_owner = Some(sandbox.clone());
        steps = steps.with_sandbox(sandbox);
    }
    // Proven as a GitHub App: intake clones with an installation's token; the control
    // family's workers publish finished reviews (each publication claimed from the store
    // under a lease).
    if let Some(github) = app_client(config)? {
        steps = steps.with_github(github);
        if serves("control") {
            spawn_publications(&steps, config, stopped(stop_rx.clone()));
        }
    }
    // Questions (POST /v1/questions) are answered by the model family's workers, each
    // claimed from the store under a lease.
    if config.agents && serves("model") {
        let runner = proven_ask::QuestionRunner::new(&steps);
        let stop = stopped(stop_rx.clone());
        tokio::spawn(async move {
            poll("questions", Duration::from_secs(1), stop, || {
                runner.answer_one()
            })
            .await
        });
    }
    Ok((steps, pool_owner))
}

/// Runs until `shutdown` resolves.
pub async fn run(
    store: Store,
    config: &Config,
    options: WorkerOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), WorkerError> {
    for q in &options.queues {
        if !proven_pipeline::QUEUES.contains(&q.as_str()) {
            return Err(WorkerError::UnknownFamily(q.clone()));
        }
    }
    let redis = RedisConfig::new(config.redis_url.clone(), config.queue_prefix.clone());
    let queue: Arc<dyn Queue> = Arc::new(RedisQueue::connect(&redis).await?);
    let owner = format!(
        "worker-{}-{}",
        std::process::id(),
        uuid::Uuid::now_v7().simple()
    );
    let wake = Wake::default();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    if let (Some(addr), Some(handle)) = (config.metrics_listen, options.metrics.clone()) {
        serve_metrics(addr, handle, stopped(stop_rx.clone())).await?;
    }
    let recon = spawn_reconciler(
        store.clone(),
        queue,
        config,
        wake.clone(),
        stopped(stop_rx.clone()),
    );

    let (steps, pool_owner) = review_steps(&store, config, &options, &stop_rx).await?;
    let serving = Serving {
        store: store.clone(),
        redis,
        queues: options.queues,
        owner,
        wake,
        stop: stop_rx.clone(),
    };
    let serve = match options.fault {
        Some(fault) => serving.spawn(
            Faulty {
                inner: steps,
                fault,
                store: store.clone(),
            },
            config,
        ),
        None => serving.spawn(steps, config),
    };
    tracing::info!("worker started");
    shutdown.await;
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(10), serve).await;
    let _ = recon.await;
    // The pool's idle containers go with the runner (the sweep covers one that cannot).
    if let Some(sandbox) = pool_owner {
        sandbox.drain_pool().await;
    }
    Ok(())
}
