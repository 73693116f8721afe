//! Sandbox jobs as pipeline steps: a step on the `sandbox` queue family runs one command on
//! one tree through the sandbox-runner, records the run once per job in the store, and
//! hands the record to the next step. A step that needs a container never waits for one
//! inside a model or evidence worker: it names a `sandbox.run` step, and the pool runs it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use proven_pipeline::{Lease, NewStep, Outcome, StepError};
use proven_sandbox::{
    AddFile, Edit, Language, LedgerError, Recorded, RunKey, RunLedger, RunRecord, RunRequest,
    Sandbox,
};
use proven_store::Store;
use serde::{Deserialize, Serialize};

use crate::core::outcome::Next;
use crate::core::step::StepContext;
use crate::core::step_name::StepName;
pub use crate::core::test_runs::job_key;

pub const SANDBOX_RUN: &str = crate::core::step_name::StepName::SandboxRun.as_str();
pub const SANDBOX_QUEUE: &str = crate::core::step_name::StepName::SandboxRun.queue();

/// The input of a `sandbox.run` step (its wire type between steps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxJob {
    pub repository: String,
    pub revision: String,
    /// python, rust, node or go.
    pub language: String,
    pub command: Vec<String>,
    #[serde(default)]
    pub add_files: Vec<JobFile>,
    #[serde(default)]
    pub patch: Vec<JobEdit>,
    pub timeout_secs: Option<u64>,
    /// A plain command (exit 0 passes) rather than a test run (which passes only when its
    /// runner says tests ran and passed).
    #[serde(default)]
    pub plain: bool,
    /// The step to create when the run is recorded (its input is the record); none: the
    /// review goes to the judge.
    pub then: Option<String>,
    /// Resolve what the project does not pin as of this instant (the review's own, see
    /// `RunRequest::resolve_before`).
    pub resolve_before: Option<String>,
    /// The tenant and the repository's identity (`owner/name`) the run is for: its
    /// prepared layers are theirs alone.
    #[serde(default)]
    pub tenant: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
    /// A run of the package's whole suite: the sandbox gives it the suite's memory.
    #[serde(default)]
    pub whole_suite: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobFile {
    pub path: String,
    pub contents: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobEdit {
    pub path: String,
    pub old_text: String,
    pub new_text: String,
}

impl SandboxJob {
    pub fn step(&self, key: &str) -> Result<NewStep, serde_json::Error> {
        Ok(NewStep {
            key: key.to_string(),
            input: Some(serde_json::to_string(self)?),
            ..Next::first(StepName::SandboxRun)
        })
    }

    fn request(&self) -> Result<RunRequest, String> {
        let language: Language = self.language.parse().map_err(|e| format!("{e}"))?;
        let mut request = RunRequest::new(
            PathBuf::from(&self.repository),
            self.revision.clone(),
            language,
            self.command.clone(),
        );
        if self.plain {
            request = request.as_command();
        }
        request.add_files = self
            .add_files
            .iter()
            .map(|f| AddFile {
                path: f.path.clone(),
                contents: f.contents.clone().into_bytes(),
            })
            .collect();
        request.patch = self
            .patch
            .iter()
            .map(|e| Edit {
                path: e.path.clone(),
                old_text: e.old_text.clone(),
                new_text: e.new_text.clone(),
            })
            .collect();
        request.timeout = self.timeout_secs.map(Duration::from_secs);
        request.resolve_before = self.resolve_before.clone();
        request.tenant = self.tenant.clone();
        request.scope = self.scope.clone();
        request.whole_suite = self.whole_suite;
        Ok(request)
    }
}

/// The store as the sandbox's run ledger: one record per job key, first writer wins.
pub struct StoreLedger {
    pub store: Store,
}

impl RunLedger for StoreLedger {
    async fn get(&self, job: &RunKey) -> Result<Option<RunRecord>, LedgerError> {
        let text = self
            .store
            .sandbox_record(job.as_str())
            .await
            .map_err(|e| LedgerError::Unavailable(e.to_string()))?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| LedgerError::Corrupt {
                job: job.as_str().into(),
                message: e.to_string(),
            })
        })
        .transpose()
    }

    async fn record_once(&self, job: &RunKey, record: &RunRecord) -> Result<Recorded, LedgerError> {
        let json =
            serde_json::to_string(record).map_err(|e| LedgerError::Unavailable(e.to_string()))?;
        let (first, stored) = self
            .store
            .record_sandbox_once(job.as_str(), &json)
            .await
            .map_err(|e| LedgerError::Unavailable(e.to_string()))?;
        let stored: RunRecord =
            serde_json::from_str(&stored).map_err(|e| LedgerError::Corrupt {
                job: job.as_str().into(),
                message: e.to_string(),
            })?;
        Ok(if first {
            Recorded::First(stored)
        } else {
            Recorded::Already(stored)
        })
    }
}

/// `sandbox.run`: the registry's entry.
pub async fn run_step(cx: &StepContext, lease: &Lease) -> Result<Outcome, StepError> {
    run(cx.sandbox.as_ref(), &cx.store, lease).await
}

pub async fn run(
    sandbox: Option<&Arc<Sandbox>>,
    store: &Store,
    lease: &Lease,
) -> Result<Outcome, StepError> {
    let Some(sandbox) = sandbox else {
        // Only sandbox-runner processes serve this queue; a worker without Docker that gets
        // one anyway hands it back for one that has it.
        return Err(StepError::RateLimited {
            message:
                "this worker has no sandbox (Docker); another sandbox-runner will take the job"
                    .into(),
            after: Duration::from_secs(2),
        });
    };
    let job: SandboxJob = serde_json::from_str(lease.input.as_deref().unwrap_or("null"))
        .map_err(|e| StepError::Permanent(format!("sandbox job does not read: {e}")))?;
    let request = job
        .request()
        .map_err(|e| StepError::Permanent(format!("sandbox job: {e}")))?;
    let key = RunKey::new(job_key(lease)).map_err(|e| StepError::Permanent(e.to_string()))?;
    let ledger = StoreLedger {
        store: store.clone(),
    };
    let recorded = sandbox
        .run_job(&key, &request, &ledger)
        .await
        .map_err(crate::core::test_runs::sandbox_error)?;
    let (record, first) = match recorded {
        Recorded::First(r) => (r, true),
        Recorded::Already(r) => (r, false),
    };
    let result = serde_json::to_string(&record).map_err(|e| StepError::Permanent(e.to_string()))?;
    let mut trace = crate::core::trace::Trace::new(uuid::Uuid::now_v7().to_string());
    trace.push(
        "sandbox_run",
        serde_json::json!({"job": key.as_str(), "recorded_now": first, "image": record.image,
                           "command": record.command, "exit_code": record.exit_code,
                           "duration_ms": record.duration_ms, "outcome": record.outcome,
                           "output_sha256": record.output.sha256}),
    );
    let next = match &job.then {
        Some(step) => vec![NewStep {
            key: lease.id.key.clone(),
            input: Some(result.clone()),
            ..NewStep::new(step, "control")
        }],
        None => vec![NewStep::new(
            proven_store::JUDGE_STEP,
            proven_store::JUDGE_QUEUE,
        )],
    };
    let run_id = trace.run_id().to_string();
    Ok(Outcome {
        result,
        next,
        trace: trace.into_lines(),
        run_id,
        ..Default::default()
    })
}
