//! The embedded default: a whole review in this process, through the same step handlers as
//! the service, on an in-process queue and the local store.

use std::sync::Arc;
use std::time::Duration;

use proven_config::Layers;
use proven_pipeline::memory::MemoryQueue;
use proven_pipeline::reconciler::{self, ReconcilerConfig, Wake};
use proven_pipeline::{Executor, Queue};
use proven_report::Report;
use proven_store::{NewPipelineReview, ReviewStatus, Store};

use crate::ReviewError;
use crate::core::outcome::Next;
use crate::core::step_name::StepName;
use crate::pipeline::ReviewRequest;

/// Steps run at once per queue in the embedded default.
const CONCURRENCY: usize = 4;

/// What the embedded runner may use besides the store.
#[derive(Default)]
pub struct Services {
    /// The model agents, when configured.
    pub agents: Option<Arc<crate::core::model::Agents>>,
    /// Docker, when a socket answers; without it, tests cannot run and the review says so.
    pub sandbox: Option<Arc<proven_sandbox::Sandbox>>,
}

/// Runs a review to its end and returns the result document. `layers` are the process's
/// settings (`proven.yaml` from the base revision is layered under them by the steps);
/// `sources` says what the request's repository may be and where mirrors live.
pub async fn review(
    store: &Store,
    layers: &Layers,
    request: ReviewRequest,
    sources: proven_source::Sources,
    services: Services,
) -> Result<Report, ReviewError> {
    let step_deadline = layers
        .resolve()
        .map_or(proven_pipeline::STEP_DEADLINE, |c| c.step_deadline);
    let review_id = uuid::Uuid::now_v7().to_string();
    let request_json =
        serde_json::to_string(&request).map_err(|e| ReviewError::Input(e.to_string()))?;
    store
        .start_review(
            &NewPipelineReview {
                id: review_id.clone(),
                tenant_id: None,
                repository: request.repository.clone(),
                base_rev: request.base.clone(),
                head_rev: request.head.clone(),
                priority: 0,
                batch_id: None,
                pr_key: None,
                request: request_json,
                deadline_us: request
                    .deadline_secs
                    .map(|s| proven_store::now_us() + (s as i64) * 1_000_000),
                trace_id: request.trace_id.clone(),
            },
            &Next::first(StepName::Intake),
        )
        .await?;

    let wake = Wake::default();
    let mut steps = crate::pipeline::ReviewSteps::new(store.clone(), layers.clone(), sources);
    if let Some(agents) = services.agents {
        steps = steps.with_agents(agents);
    }
    if let Some(sandbox) = services.sandbox {
        steps = steps.with_sandbox(sandbox);
    }
    let steps = Arc::new(steps);
    let ended = Arc::new(tokio::sync::Notify::new());
    let executor = Arc::new(
        Executor::new(
            store.clone(),
            steps,
            format!("embedded-{}", std::process::id()),
            Duration::from_secs(30),
        )
        .with_step_deadline(step_deadline)
        .with_wake(wake.clone())
        .with_review_ended(ended.clone()),
    );
    let queue = Arc::new(MemoryQueue::new());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let serve = tokio::spawn(
        queue
            .clone()
            .serve(executor, CONCURRENCY, stopped(stop_rx.clone())),
    );
    let config = ReconcilerConfig {
        push_every: Duration::from_millis(200),
        ..ReconcilerConfig::default()
    };
    let dyn_queue: Arc<dyn Queue> = queue;
    let recon = tokio::spawn(reconciler::run(
        store.clone(),
        dyn_queue,
        config,
        wake.clone(),
        stopped(stop_rx),
    ));
    wake.wake();

    // Wait for the judge's verdict: the executor says when a step may have ended the review
    // (the slow tick only covers an end it did not see).
    let result = loop {
        let row = store.review(&review_id).await?;
        match row.status {
            ReviewStatus::Queued | ReviewStatus::Running => {
                let _ = tokio::time::timeout(Duration::from_secs(1), ended.notified()).await;
            }
            _ => break row.result,
        }
    };
    let _ = stop_tx.send(true);
    let _ = serve.await;
    let _ = recon.await;
    let text = result
        .ok_or_else(|| ReviewError::Input(format!("review {review_id} ended without a result")))?;
    serde_json::from_str(&text)
        .map_err(|e| ReviewError::Input(format!("review {review_id}: result does not read: {e}")))
}
