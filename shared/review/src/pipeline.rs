//! The review's steps as pipeline jobs: one handler per step, each reading its inputs from
//! the store and returning its result and the next steps. The same handlers serve the
//! service (Redis workers) and the embedded default (in-process queue).
//!
//! ```text
//! intake ─► plan ─► deps.collect ─┬─► deps.file (one finding pipeline per dependency file) ─┐
//!                                 └─(none)──────────────────────────────────────────────────┴─► judge
//! ```

use std::path::Path;
use std::sync::Arc;

use proven_config::{Informational, Layers};
use proven_pipeline::{BoxFuture, Lease, NewStep, Outcome, StepError, Steps};
use proven_report::{
    DependencyFileSummary, Evidence, FailedService, Finding, FindingKind, InputError, LeftOutEntry,
    Level, Location, NotSeen, Plan, Report, ReportKind, RevisionRef, SkepticRef, Status, Unproven,
};
use proven_store::{ReviewStatus, StepRow, Store, StoreError};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::Trace;
use crate::judge::RiskOutcome;
pub(crate) use crate::outcome::retryable;
use crate::outcome::{blocking, outcome, to_json};
use crate::rows::{StepState, result_of};
use crate::steps::{deps, intake, scout, writer};

pub const INTAKE: &str = "intake";
pub const PLAN: &str = "plan";
pub const DEPS_COLLECT: &str = "deps.collect";
pub const DEPS_FILE: &str = "deps.file";
pub const JUDGE: &str = proven_store::JUDGE_STEP;
/// How long (from its creation) the Planner waits for unfinished dependency steps before it
/// plans without their findings. Waiting spends neither an attempt nor a rate-limit deferral.
pub const PLANNER_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

pub use proven_store::ReviewRequest;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct IntakeResult {
    repository_dir: String,
    base: RevisionRef,
    head: RevisionRef,
    facts: Vec<intake::FileFacts>,
    /// Every path the change touches, old and new, hex-encoded (paths are bytes).
    changed_paths: Vec<String>,
    left_out: Vec<LeftOutEntry>,
    truncated: bool,
    config: Option<(String, String)>,
    /// Changed files intake could not read (over the blob limit): the review is incomplete.
    #[serde(default)]
    input_errors: Vec<InputError>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct DepsSettings {
    informational_ignore: bool,
    dev_dependencies: bool,
    max_file_bytes: u64,
}

impl DepsSettings {
    fn options(&self) -> deps::DepsOptions {
        deps::DepsOptions {
            informational: if self.informational_ignore {
                Informational::Ignore
            } else {
                Informational::Report
            },
            dev_dependencies: self.dev_dependencies,
            limits: proven_lockfile::Limits {
                max_bytes: self.max_file_bytes,
                ..Default::default()
            },
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct PlanResult {
    plan: Plan,
    deps: Option<DepsSettings>,
    /// Tries the Fixer gets per proved defect, fixed for the whole review at the plan (so
    /// every worker, whatever families it serves, reads the same value).
    #[serde(default)]
    fix_attempts: u32,
    /// Autofix runs for this review.
    #[serde(default)]
    autofix: bool,
    /// The model agents run for this review (the dependency findings face the Skeptic).
    #[serde(default)]
    agents: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct CollectResult {
    sources: Vec<String>,
    input_errors: Vec<InputError>,
    not_seen: Vec<NotSeen>,
    failed_services: Vec<FailedService>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct FileResult {
    findings: Vec<Finding>,
    input_errors: Vec<InputError>,
    not_seen: Vec<NotSeen>,
    files: Vec<DependencyFileSummary>,
    /// Findings H-MEM holds an evidenced refutation of: (finding id, memory record id).
    #[serde(default)]
    remembered: Vec<(String, String)>,
}

/// The H-MEM fingerprint of a dependency finding: the lock file, the package at its
/// version, and the advisory.
fn deps_fingerprint(f: &Finding) -> String {
    let package = f.package.as_ref().map(|p| {
        format!(
            "{}:{}@{}",
            p.ecosystem,
            p.name.to_lowercase(),
            p.new_version
        )
    });
    crate::agents::fingerprint(
        "deps",
        &f.location.path,
        package.as_deref(),
        f.advisory_id(),
    )
}

/// The review's step handlers.
pub struct ReviewSteps {
    store: Store,
    layers: Layers,
    /// What a `repository` may name, how it is fetched, where mirrors live.
    sources: Arc<proven_source::Sources>,
    /// Docker, in processes that serve the sandbox queue.
    sandbox: Option<Arc<proven_sandbox::Sandbox>>,
    /// The model agents, when configured.
    agents: Option<Arc<crate::agents::Agents>>,
    /// How long the Planner waits for the dependency evidence ([`PLANNER_WAIT`]).
    planner_wait: std::time::Duration,
}

impl ReviewSteps {
    pub fn new(store: Store, layers: Layers, sources: proven_source::Sources) -> ReviewSteps {
        ReviewSteps {
            store,
            layers,
            sources: Arc::new(sources),
            sandbox: None,
            agents: None,
            planner_wait: PLANNER_WAIT,
        }
    }

    /// Sets how long the Planner waits for unfinished dependency steps.
    pub fn with_planner_wait(mut self, wait: std::time::Duration) -> ReviewSteps {
        self.planner_wait = wait;
        self
    }

    /// Lets this process run the model agents' steps.
    pub fn with_agents(mut self, agents: Arc<crate::agents::Agents>) -> ReviewSteps {
        self.agents = Some(agents);
        self
    }

    /// What the agents' steps need to know about the review: its intake, and the scope of
    /// its memory (the repository's identity and the tenant).
    async fn view(&self, review_id: &str) -> Result<(IntakeResult, MemoryScope), StepError> {
        let rows = self.results(review_id).await?;
        let intake: IntakeResult = result_of(&rows, INTAKE)?;
        let scope = self.memory_scope(review_id).await?;
        Ok((intake, scope))
    }

    async fn memory_scope(&self, review_id: &str) -> Result<MemoryScope, StepError> {
        let review = self.store.review(review_id).await.map_err(retryable)?;
        let tenant = self
            .store
            .review_tenant(review_id)
            .await
            .map_err(retryable)?
            .unwrap_or_default();
        Ok(MemoryScope {
            tenant,
            repository: memory_identity(&review.repository),
        })
    }

    /// Runs an agent step. When it ends in an error its outcome is dropped, so the lines it
    /// recorded (each model call's usage, latency and cost; the guardrail's verdicts) are
    /// written here, with a `step_failed` line naming the error.
    async fn agent_step(&self, lease: &Lease) -> Result<Outcome, StepError> {
        let (result, mut lines) = crate::trace::capture(self.run_agent_step(lease)).await;
        match &result {
            Err(StepError::Waiting { .. }) | Ok(_) => {}
            Err(e) => {
                lines.push((
                    "step_failed".into(),
                    serde_json::json!({"step": lease.id.step, "key": lease.id.key,
                                       "attempt": lease.attempt, "error": e.to_string()}),
                ));
                let run_id = uuid::Uuid::now_v7().to_string();
                if let Err(store_error) = self
                    .store
                    .append_trace(&lease.id.review_id, &run_id, &lines)
                    .await
                {
                    tracing::warn!(%store_error, step = %lease.id.step, "the failed step's trace was not written");
                }
            }
        }
        result
    }

    async fn run_agent_step(&self, lease: &Lease) -> Result<Outcome, StepError> {
        use crate::agents;
        let (intake, scope) = self.view(&lease.id.review_id).await?;
        let changed: Vec<String> = intake
            .facts
            .iter()
            .filter(|f| !f.binary)
            .map(|f| f.path.clone())
            .collect();
        let view = agents::ReviewView {
            store: &self.store,
            repository: &scope.repository,
            tenant: &scope.tenant,
            repository_dir: &intake.repository_dir,
            base: &intake.base.commit,
            head: &intake.head.commit,
            changed: &changed,
        };
        let needs_models = || {
            self.agents.as_deref().ok_or_else(|| {
                StepError::Permanent("the model agents are not configured in this process".into())
            })
        };
        match lease.id.step.as_str() {
            agents::PLANNER => {
                let rows = self.results(&lease.id.review_id).await?;
                let evidence = self.dependency_evidence(lease, &rows)?;
                let deep =
                    result_of::<PlanResult>(&rows, PLAN).is_ok_and(|p| p.plan.band == "deep");
                let mut out = agents::planner(needs_models()?, view, &evidence).await?;
                // Deep band: the coverage auditor follows, shown the manifests, never the risks.
                if deep {
                    out.next.push(NewStep {
                        pipeline: true,
                        ..NewStep::new(crate::auditor::AUDITOR, "model")
                    });
                }
                Ok(out)
            }
            crate::auditor::AUDITOR => {
                let rows = self.results(&lease.id.review_id).await?;
                crate::auditor::auditor(needs_models()?, view, &rows).await
            }
            agents::SECOND_REVIEWER => agents::second_reviewer(needs_models()?, view).await,
            agents::PROVER => agents::prover(needs_models()?, view, lease).await,
            agents::SKEPTIC => crate::skeptic::skeptic(needs_models()?, view, lease).await,
            crate::investigator::INVESTIGATOR => {
                crate::investigator::investigator(needs_models()?, view, lease).await
            }
            crate::investigator::SKEPTIC_QUERY => {
                crate::investigator::skeptic_query(needs_models()?, view, lease).await
            }
            crate::investigator::SKEPTIC_DEPS => {
                let rows = self.results(&lease.id.review_id).await?;
                let file: FileResult = crate::rows::step_result(&rows, DEPS_FILE, &lease.id.key)
                    .ok_or_else(|| {
                        StepError::Permanent(format!(
                            "skeptic.deps: the dependency file {} has no result",
                            lease.id.key
                        ))
                    })?;
                crate::investigator::skeptic_deps(needs_models()?, view, lease, &file.findings)
                    .await
            }
            agents::REPRODUCE => {
                let cassette = self.agents.as_ref().and_then(|a| a.cassette());
                let mut out =
                    agents::reproduce(self.sandbox.as_ref(), cassette, view, lease).await?;
                // Reproduced: the Fixer tries beside the Skeptic (a fix is shown only for a
                // finding the Judge keeps).
                let reproduced = out.next.iter().any(|s| s.step == agents::SKEPTIC);
                let attempts =
                    result_of::<PlanResult>(&self.results(&lease.id.review_id).await?, PLAN)
                        .map_or(0, |p| p.fix_attempts);
                if reproduced {
                    let job: agents::ProveJob = agents::read_input(lease, "job")?;
                    out.next
                        .extend(crate::fixer::first_try(&lease.id.key, &job, attempts));
                }
                Ok(out)
            }
            crate::fixer::FIXER => crate::fixer::fixer(needs_models()?, view, lease).await,
            crate::autofix::AUTOFIX => {
                let cassette = self.agents.as_ref().and_then(|a| a.cassette());
                crate::autofix::autofix(self.sandbox.as_ref(), cassette, view, lease).await
            }
            crate::fixer::SANDBOX_FIX => {
                let cassette = self.agents.as_ref().and_then(|a| a.cassette());
                crate::fixer::prove_fix(self.sandbox.as_ref(), cassette, view, lease).await
            }
            agents::REFUTE => {
                let cassette = self.agents.as_ref().and_then(|a| a.cassette());
                crate::skeptic::refute(self.sandbox.as_ref(), cassette, view, lease).await
            }
            other => Err(StepError::Permanent(format!("unknown step {other:?}"))),
        }
    }

    /// The dependency evidence for the Planner: the findings of every dependency file. While
    /// dependency steps of the review are unfinished the Planner waits (spending no attempt),
    /// for at most [`PLANNER_WAIT`] from its creation; then it plans with what there is and
    /// says so.
    fn dependency_evidence(
        &self,
        lease: &Lease,
        rows: &[StepRow],
    ) -> Result<crate::agents::DependencyEvidence, StepError> {
        let pending = crate::rows::unfinished(rows, |r| {
            r.id.step == DEPS_COLLECT || r.id.step == DEPS_FILE
        });
        let waited_us = rows
            .iter()
            .find(|r| r.id == lease.id)
            .map_or(i64::MAX, |r| proven_store::now_us() - r.created_us);
        if !pending.is_empty() {
            let limit_us = i64::try_from(self.planner_wait.as_micros()).unwrap_or(i64::MAX);
            if waited_us < limit_us {
                // 0.1 s at first, then a tenth of the time waited so far, at most 2 s.
                let after = (waited_us / 10_000).clamp(100, 2_000).unsigned_abs();
                return Err(StepError::Waiting {
                    message: format!(
                        "the Planner reads the dependency evidence, still running: {}",
                        pending.join(", ")
                    ),
                    after: std::time::Duration::from_millis(after),
                });
            }
        }
        let mut evidence = crate::agents::DependencyEvidence {
            pending,
            ..Default::default()
        };
        for (_, file) in crate::rows::done_results::<FileResult>(rows, DEPS_FILE) {
            evidence.findings.extend(
                file.findings
                    .iter()
                    .filter_map(crate::agents::DependencyNote::of),
            );
        }
        Ok(evidence)
    }

    /// Lets this process run `sandbox.run` steps.
    pub fn with_sandbox(mut self, sandbox: Arc<proven_sandbox::Sandbox>) -> ReviewSteps {
        self.sandbox = Some(sandbox);
        self
    }

    async fn results(&self, review_id: &str) -> Result<Vec<StepRow>, StepError> {
        self.store.steps_of(review_id).await.map_err(retryable)
    }
}

/// The Skeptic's answer as a finding shows it.
fn skeptic_ref(s: crate::agents::SkepticResult) -> SkepticRef {
    SkepticRef {
        verdict: s.verdict,
        reason: s.reason,
        artifact: s.artifact,
        refutation: s.refutation,
        needs: s.needs,
    }
}

/// Where H-MEM records of a review live: its tenant's memory of its repository.
pub(crate) struct MemoryScope {
    pub tenant: String,
    pub repository: String,
}

/// A repository's identity for memory: a local path made absolute first (a relative path
/// and its absolute spelling are one repository).
pub fn memory_identity(spec: &str) -> String {
    let path = Path::new(spec.strip_prefix("file://").unwrap_or(spec));
    let local = !spec.contains("://") || spec.starts_with("file://");
    let spec = match (local, std::fs::canonicalize(path)) {
        (true, Ok(absolute)) => absolute.display().to_string(),
        _ => spec.to_string(),
    };
    proven_domain::repository_identity(&spec)
}

impl ReviewSteps {
    async fn intake(&self, lease: &Lease) -> Result<Outcome, StepError> {
        let request: ReviewRequest = {
            let text = self
                .store
                .review_request(&lease.id.review_id)
                .await
                .map_err(retryable)?
                .unwrap_or_default();
            serde_json::from_str(&text).map_err(|e| {
                StepError::Permanent(format!("intake: the request does not read: {e}"))
            })?
        };
        let (dir, fetched) = self.reach(&lease.id.review_id, &request.repository).await?;
        let input = intake::IntakeInput {
            repository: dir.clone(),
            base: request.base.clone(),
            head: request.head.clone(),
            layers: self.layers.clone(),
        };
        let outcome = blocking(move || intake::run(&input))
            .await?
            .map_err(|e| match e {
                crate::ReviewError::Config(c) => {
                    StepError::Permanent(format!("configuration: {c}"))
                }
                other => StepError::Permanent(format!("intake: {other}")),
            })?;
        let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
        if let Some(line) = fetched {
            trace.push("repository", line);
        }
        intake::trace(&outcome, &mut trace);
        let result = IntakeResult {
            repository_dir: dir.display().to_string(),
            base: RevisionRef {
                rev: outcome.base.spec.clone(),
                commit: outcome.base.commit.clone(),
            },
            head: RevisionRef {
                rev: outcome.head.spec.clone(),
                commit: outcome.head.commit.clone(),
            },
            facts: outcome.facts.clone(),
            changed_paths: outcome
                .change
                .files
                .iter()
                .flat_map(|f| [f.old_path.as_ref(), f.new_path.as_ref()])
                .flatten()
                .map(|p| hex::encode(p.as_bytes()))
                .collect(),
            left_out: outcome
                .change
                .left_out
                .iter()
                .map(|l| LeftOutEntry {
                    path: l.path.display(),
                    reason: l.reason.as_str().into(),
                })
                .collect(),
            truncated: outcome.change.truncated,
            config: outcome.config.clone(),
            input_errors: outcome
                .change
                .left_out
                .iter()
                .filter_map(|l| match l.reason {
                    proven_change::LeftOutReason::TooLarge { size, head } => Some(InputError {
                        path: l.path.display(),
                        line: None,
                        side: Some(if head { "head" } else { "base" }.into()),
                        message: intake::too_large_message(
                            &l.path.display(),
                            size,
                            &outcome.limits,
                        ),
                    }),
                    _ => None,
                })
                .collect(),
        };
        Ok(crate::outcome::outcome(
            trace,
            to_json(&result)?,
            vec![NewStep::new(PLAN, "control")],
            false,
        ))
    }

    /// The review's repository, checked again by the policy (a request stored before it, or
    /// a name that resolves elsewhere now, is refused here too): a local path as it really
    /// is, or the tenant's mirror fetched from the checked addresses. Returns the directory
    /// and, for a mirror, its trace line (the URL is credential-free by the policy).
    async fn reach(
        &self,
        review_id: &str,
        repository: &str,
    ) -> Result<(std::path::PathBuf, Option<serde_json::Value>), StepError> {
        use proven_source::{CheckError, Target};
        let target = self
            .sources
            .policy
            .check(repository)
            .await
            .map_err(|e| match e {
                CheckError::Unresolved { .. } => StepError::Retryable {
                    message: format!("intake: {e}"),
                    after: std::time::Duration::from_secs(5),
                },
                other => StepError::Permanent(format!("intake: {other}")),
            })?;
        match target {
            Target::Local(path) => {
                let sources = self.sources.clone();
                let dir = blocking(move || sources.policy.open_local(&path))
                    .await?
                    .map_err(|e| StepError::Permanent(format!("intake: {e}")))?;
                Ok((dir, None))
            }
            Target::Remote(checked) => {
                let tenant = self
                    .store
                    .review_tenant(review_id)
                    .await
                    .map_err(retryable)?;
                let dir = self.sources.mirrors.dir(tenant.as_deref(), &checked.remote);
                let fetched = proven_source::mirror(&checked, &dir, &self.sources.fetch)
                    .await
                    .map_err(|e| {
                        if e.is_transient() {
                            StepError::Retryable {
                                message: format!("intake: {e}"),
                                after: std::time::Duration::from_secs(5),
                            }
                        } else {
                            StepError::Permanent(format!("intake: {e}"))
                        }
                    })?;
                let line = serde_json::json!({
                    "url": checked.remote.url(),
                    "address": fetched.address.map(|a| a.to_string()),
                    "bytes": fetched.bytes,
                    "cloned": fetched.cloned,
                });
                Ok((fetched.dir, Some(line)))
            }
        }
    }

    async fn plan(&self, lease: &Lease) -> Result<Outcome, StepError> {
        let rows = self.results(&lease.id.review_id).await?;
        let intake: IntakeResult = result_of(&rows, INTAKE)?;
        let config = match &intake.config {
            Some((origin, text)) => self
                .layers
                .clone()
                .with_yaml(text, origin)
                .and_then(|l| l.resolve()),
            None => self.layers.resolve(),
        }
        .map_err(|e| StepError::Permanent(format!("configuration: {e}")))?;
        let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
        let agents_on = self.agents.is_some() && config.agents;
        let second_reviewer = self
            .agents
            .as_ref()
            .is_some_and(|a| a.has_second_reviewer());
        let plan = scout::plan(
            &intake.facts,
            scout::PlanOptions {
                dependencies: config.dependencies,
                agents: agents_on,
                fix_attempts: if agents_on { config.fix_attempts } else { 0 },
                autofix: agents_on && config.autofix,
                second_reviewer: agents_on && second_reviewer,
            },
            &mut trace,
        );
        let run_deps = plan.runs.iter().any(|r| r == "dependency evidence");
        let result = PlanResult {
            plan,
            deps: run_deps.then(|| DepsSettings {
                informational_ignore: config.informational == Informational::Ignore,
                dev_dependencies: config.dev_dependencies,
                max_file_bytes: config.max_lockfile_bytes,
            }),
            fix_attempts: if agents_on { config.fix_attempts } else { 0 },
            autofix: agents_on && config.autofix && config.fix_attempts > 0,
            agents: agents_on,
        };
        // Each branch is a finding pipeline: it hands its slot in the fan-in to its own
        // children, so the judge waits for every branch however they interleave.
        let mut next = Vec::new();
        if run_deps {
            next.push(NewStep {
                pipeline: true,
                ..NewStep::new(DEPS_COLLECT, "evidence")
            });
        }
        if agents_on && !matches!(result.plan.change_kind.as_str(), "docs" | "empty") {
            next.push(NewStep {
                pipeline: true,
                ..NewStep::new(crate::agents::PLANNER, "model")
            });
            if result.autofix {
                next.push(NewStep {
                    pipeline: true,
                    ..NewStep::new(crate::autofix::AUTOFIX, "sandbox")
                });
            }
            if second_reviewer {
                next.push(NewStep {
                    pipeline: true,
                    ..NewStep::new(crate::agents::SECOND_REVIEWER, "model")
                });
            }
        }
        if next.is_empty() {
            next.push(NewStep::new(JUDGE, "control"));
        }
        Ok(outcome(trace, to_json(&result)?, next, false))
    }

    async fn deps_collect(&self, lease: &Lease) -> Result<Outcome, StepError> {
        let rows = self.results(&lease.id.review_id).await?;
        let intake: IntakeResult = result_of(&rows, INTAKE)?;
        let mut result = CollectResult::default();
        let (advisories, _, _) = self.store.advisory_counts().await.map_err(retryable)?;
        if advisories == 0 {
            result.failed_services.push(FailedService {
                service: "advisories".into(),
                message: "the advisory store is empty: run `proven db import PATH` (or `proven db sync`) first".into(),
            });
        }
        let run_id = uuid::Uuid::now_v7().to_string();
        let (sources, errors, not_seen, trace) = blocking(move || {
            let mut trace = Trace::new(run_id);
            let repo = proven_change::Repo::open(Path::new(&intake.repository_dir))
                .map_err(|e| e.to_string())?;
            let paths: Vec<Vec<u8>> = intake
                .changed_paths
                .iter()
                .filter_map(|h| hex::decode(h).ok())
                .collect();
            let (s, e, n) = deps::sources(
                &repo,
                &intake.base.commit,
                &intake.head.commit,
                &paths,
                &mut trace,
            );
            Ok::<_, String>((s, e, n, trace))
        })
        .await?
        .map_err(|e| StepError::Permanent(format!("deps.collect: {e}")))?;
        result.sources = sources;
        result.input_errors = errors;
        result.not_seen = not_seen;
        // One finding pipeline per dependency file, created in this step's transaction; this
        // step's own slot closes (with no file, that may be the last one: the judge).
        let next: Vec<NewStep> = result
            .sources
            .iter()
            .map(|path| NewStep {
                key: path.clone(),
                pipeline: true,
                ..NewStep::new(DEPS_FILE, "evidence")
            })
            .collect();
        Ok(outcome(trace, to_json(&result)?, next, true))
    }

    async fn deps_file(&self, lease: &Lease) -> Result<Outcome, StepError> {
        let rows = self.results(&lease.id.review_id).await?;
        let intake: IntakeResult = result_of(&rows, INTAKE)?;
        let plan: PlanResult = result_of(&rows, PLAN)?;
        let options = plan
            .deps
            .as_ref()
            .map(DepsSettings::options)
            .ok_or_else(|| {
                StepError::Permanent("deps.file: the plan does not run dependency evidence".into())
            })?;
        let path = lease.id.key.clone();
        let run_id = uuid::Uuid::now_v7().to_string();
        let opts = options.clone();
        let (read, mut trace) = blocking(move || {
            let mut trace = Trace::new(run_id);
            let repo = proven_change::Repo::open(Path::new(&intake.repository_dir))
                .map_err(|e| e.to_string())?;
            let read = deps::read_pair(
                &repo,
                &intake.base.commit,
                &intake.head.commit,
                &path,
                &opts,
                &mut trace,
            );
            Ok::<_, String>((read, trace))
        })
        .await?
        .map_err(|e| StepError::Permanent(format!("deps.file: {e}")))?;
        let mut result = FileResult {
            input_errors: read.input_errors,
            not_seen: read.not_seen,
            files: read.files,
            ..Default::default()
        };
        if let Some(pair) = read.pair {
            let evaluated = deps::evaluate(
                &self.store,
                std::slice::from_ref(&pair),
                &options,
                &mut trace,
            )
            .await
            .map_err(retryable)?;
            result.findings = evaluated.findings;
            result.not_seen.extend(evaluated.not_seen);
        }
        let mut next = Vec::new();
        if plan.agents && !result.findings.is_empty() {
            // A finding H-MEM holds an evidenced refutation of does not come back.
            let scope = self.memory_scope(&lease.id.review_id).await?;
            let mut kept = Vec::new();
            for f in std::mem::take(&mut result.findings) {
                let memory = self
                    .store
                    .memory_lookup(&scope.tenant, &scope.repository, &deps_fingerprint(&f))
                    .await
                    .map_err(retryable)?;
                match memory {
                    Some(m) => {
                        trace.push(
                            "memory",
                            serde_json::json!({"finding": f.id, "memory_record": m.id,
                                               "evidence": m.refutation,
                                               "reason": "an earlier review refuted this finding with evidence; it is not raised again"}),
                        );
                        result.remembered.push((f.id.clone(), m.id));
                    }
                    None => kept.push(f),
                }
            }
            result.findings = kept;
            // Every dependency finding faces the Skeptic too (query kind).
            if !result.findings.is_empty() {
                next.push(NewStep {
                    key: lease.id.key.clone(),
                    pipeline: true,
                    ..NewStep::new(crate::investigator::SKEPTIC_DEPS, "model")
                });
            }
        }
        Ok(outcome(trace, to_json(&result)?, next, true))
    }

    /// The agents' part of the verdict: each risk pipeline kept, dropped (and remembered),
    /// unproven or inconclusive, by evidence only.
    async fn judge_agents(
        &self,
        review_id: &str,
        scope: &MemoryScope,
        rows: &[StepRow],
        report: &mut Report,
        trace: &mut Trace,
    ) -> Result<Vec<(crate::agents::Risk, RiskOutcome)>, StepError> {
        use crate::agents;
        let mut first = Vec::new();
        let Ok(planner) = result_of::<agents::PlannerResult>(rows, agents::PLANNER) else {
            return Ok(first);
        };
        for (risk, _) in &planner.remembered {
            first.push((risk.clone(), RiskOutcome::Remembered));
        }
        if planner.truncated {
            report.not_seen.push(NotSeen {
                what: "the end of a large change".into(),
                reason: format!(
                    "the Planner read the first {} parts of {} KiB of the diff",
                    crate::bounded::MAX_PARTS,
                    crate::bounded::PART_BYTES / 1024
                ),
            });
        }
        if !planner.planned_without.is_empty() {
            report.not_seen.push(NotSeen {
                what: format!(
                    "dependency evidence for the Planner ({})",
                    planner.planned_without.join(", ")
                ),
                reason: format!(
                    "still unfinished after the Planner waited {} s; it named risks without those findings",
                    PLANNER_WAIT.as_secs()
                ),
            });
        }
        for (title, reason) in &planner.unproven {
            report.unproven.push(Unproven {
                claim: title.clone(),
                reason: reason.clone(),
                runs: Vec::new(),
            });
        }
        for (key, risk) in &planner.proving {
            let said = self
                .judge_test_risk(review_id, scope, rows, key, risk, report, trace)
                .await?;
            first.push((risk.clone(), said));
        }
        for (key, risk) in &planner.investigating {
            let outcome = self
                .judge_query(review_id, scope, rows, key, risk, report, trace)
                .await?;
            first.push((risk.clone(), outcome));
        }
        // Round two: the coverage auditor's probes, judged by the same rules as any risk.
        let mut probed = Vec::new();
        if let Some(audit) =
            agents::step_result::<crate::auditor::AuditResult>(rows, crate::auditor::AUDITOR, "")
        {
            for (key, risk) in &audit.probing {
                let said = self
                    .judge_test_risk(review_id, scope, rows, key, risk, report, trace)
                    .await?;
                probed.push((key.clone(), said));
            }
            for (key, risk) in &audit.investigating {
                let said = self
                    .judge_query(review_id, scope, rows, key, risk, report, trace)
                    .await?;
                probed.push((key.clone(), said));
            }
        }
        report.coverage = crate::judge::coverage::coverage(rows, &probed, &mut report.not_seen);
        // What the test environments lacked: named once each, in what the review could not see.
        let mut seen = std::collections::BTreeSet::new();
        for (row, repro) in crate::rows::done_results::<agents::Reproduced>(rows, agents::REPRODUCE)
        {
            for line in repro.runs.iter().flat_map(|r| r.environment.iter()) {
                if line.starts_with("not prepared: ") && seen.insert(line.clone()) {
                    report.not_seen.push(NotSeen {
                        what: format!("the test environment of {}", row.id.key),
                        reason: line.clone(),
                    });
                }
            }
        }
        report.autofix = crate::autofix::verdict(rows);
        Ok(first)
    }

    /// One test-evidence pipeline (a Planner's risk or an auditor's probe) judged: kept,
    /// dropped and remembered, unproven or inconclusive. Returns what became of it.
    #[allow(clippy::too_many_arguments)]
    async fn judge_test_risk(
        &self,
        review_id: &str,
        scope: &MemoryScope,
        rows: &[StepRow],
        key: &str,
        risk: &crate::agents::Risk,
        report: &mut Report,
        trace: &mut Trace,
    ) -> Result<RiskOutcome, StepError> {
        use crate::judge::risk::{Verdict, judge_risk};
        let fp =
            crate::agents::fingerprint("test", &risk.path, risk.symbol.as_deref(), &risk.claim);
        let verdict = judge_risk(rows, key, risk);
        let said = verdict.outcome();
        match verdict {
            Verdict::Keep { job, runs, skeptic } => {
                let evidence = runs
                    .into_iter()
                    .enumerate()
                    .map(|(i, run)| Evidence {
                        kind: "test_run".into(),
                        advisory_id: None,
                        affected_index: None,
                        matched: None,
                        row: None,
                        run: Some(run),
                        test: (i == 0).then(|| job.test.clone()),
                    })
                    .collect();
                trace.push(
                    "verdict",
                    serde_json::json!({"key": key, "verdict": "kept", "title": risk.title}),
                );
                let patch = crate::fixer::proved_fix(rows, key).map(|f| proven_report::PatchRef {
                    edits: f.edits,
                    explanation: f.explanation,
                    attempt: f.attempt,
                    runs: f.runs,
                });
                let mut fix_not_proved = None;
                if patch.is_none() {
                    let tries = crate::fixer::tries(rows, key);
                    for t in &tries {
                        trace.push(
                            "fix_not_shown",
                            serde_json::json!({"key": key, "attempt": t.attempt, "reason": t.reason}),
                        );
                    }
                    // A fix that was tried and not proved is said, with why: never silence.
                    fix_not_proved = tries.last().map(|t| proven_report::FixNotProved {
                        attempts: tries.len() as u32,
                        reason: t.reason.clone(),
                        runs: t.runs.clone(),
                    });
                }
                report.findings.push(Finding {
                    id: format!("defect:{}:{}", risk.path, &fp[..16]),
                    proof_level: Level::Reproduced,
                    kind: FindingKind::Defect,
                    title: risk.title.clone(),
                    package: None,
                    location: Location {
                        path: risk.path.clone(),
                        line: None,
                    },
                    advisory: None,
                    exploited: None,
                    epss: None,
                    fix: None,
                    claim: Some(risk.claim.clone()),
                    skeptic: skeptic.map(skeptic_ref),
                    patch,
                    fix_not_proved,
                    evidence,
                });
            }
            Verdict::Dropped {
                job,
                refutation,
                skeptic,
            } => {
                let id = self
                    .remember(
                        (review_id, scope, key),
                        risk,
                        ("test", &fp),
                        serde_json::json!({"refutation": "flaky", "reason": refutation.reason,
                                           "skeptic": skeptic.reason, "runs": refutation.runs}),
                        serde_json::json!({"prover_test": job.test.path}),
                    )
                    .await?;
                trace.push(
                    "verdict",
                    serde_json::json!({"key": key, "verdict": "dropped", "title": risk.title,
                                       "reason": refutation.reason, "memory_record": id}),
                );
                report.unproven.push(Unproven {
                    claim: risk.claim.clone(),
                    reason: format!(
                        "refuted: Proven's reruns showed it ({}); remembered as {id}",
                        refutation.reason
                    ),
                    runs: refutation.runs,
                });
            }
            Verdict::Unproven {
                claim,
                reason,
                runs,
            } => {
                trace.push(
                    "verdict",
                    serde_json::json!({"key": key, "verdict": "unproven", "reason": reason}),
                );
                report.unproven.push(Unproven {
                    claim,
                    reason,
                    runs,
                });
            }
            Verdict::Inconclusive { claim } => {
                report.not_seen.push(NotSeen {
                    what: claim,
                    reason:
                        "inconclusive: its pipeline did not finish before the review's deadline"
                            .into(),
                });
            }
        }
        Ok(said)
    }

    /// A dependency file's findings, judged: each the Skeptic refuted with rows of its own
    /// query is dropped and remembered; the others are kept with what the Skeptic said.
    /// Findings H-MEM already held are named as unproven.
    #[allow(clippy::too_many_arguments)]
    async fn judge_deps_findings(
        &self,
        review_id: &str,
        scope: &MemoryScope,
        rows: &[StepRow],
        key: &str,
        file: &FileResult,
        report: &mut Report,
        trace: &mut Trace,
    ) -> Result<Vec<Finding>, StepError> {
        use crate::investigator::{DepsSkeptic, SKEPTIC_DEPS};
        for (finding, record) in &file.remembered {
            report.unproven.push(Unproven {
                claim: finding.clone(),
                reason: format!(
                    "an earlier review refuted it with evidence (H-MEM record {record}); not raised again"
                ),
                runs: Vec::new(),
            });
        }
        let said: Option<DepsSkeptic> = crate::rows::step_result(rows, SKEPTIC_DEPS, key);
        let mut kept = Vec::new();
        for mut f in file.findings.clone() {
            let verdict = said
                .as_ref()
                .and_then(|s| s.verdicts.iter().find(|(id, _)| *id == f.id))
                .map(|(_, v)| v.clone());
            match verdict {
                Some(v) if v.refutation.as_ref().is_some_and(|r| r.evidenced) => {
                    let refutation = v.refutation.clone().unwrap_or_else(|| {
                        crate::investigator::QueryRefutation {
                            evidenced: true,
                            reason: String::new(),
                            query: None,
                        }
                    });
                    let risk = crate::agents::Risk {
                        title: f.title.clone(),
                        claim: f.title.clone(),
                        path: f.location.path.clone(),
                        symbol: f.package.as_ref().map(|p| {
                            format!(
                                "{}:{}@{}",
                                p.ecosystem,
                                p.name.to_lowercase(),
                                p.new_version
                            )
                        }),
                        evidence: "deps".into(),
                    };
                    let id = self
                        .remember(
                            (review_id, scope, &format!("{key}#{}", f.id)),
                            &risk,
                            ("deps", &deps_fingerprint(&f)),
                            serde_json::json!({"reason": v.skeptic.reason, "query": refutation.query}),
                            serde_json::json!({"finding": f.id}),
                        )
                        .await?;
                    trace.push(
                        "verdict",
                        serde_json::json!({"finding": f.id, "verdict": "dropped",
                                           "reason": refutation.reason, "memory_record": id}),
                    );
                    report.unproven.push(Unproven {
                        claim: f.title.clone(),
                        reason: format!(
                            "refuted by the Skeptic's own query ({}); remembered as {id}",
                            refutation.reason
                        ),
                        runs: Vec::new(),
                    });
                }
                Some(v) => {
                    f.skeptic = Some(skeptic_ref(v.skeptic));
                    kept.push(f);
                }
                None => kept.push(f),
            }
        }
        Ok(kept)
    }

    /// Writes a dropped finding to H-MEM, so the same finding does not come back. The
    /// record's id is derived from the review and pipeline, so a replayed judge writes it once.
    async fn remember(
        &self,
        (review_id, scope, key): (&str, &MemoryScope, &str),
        risk: &crate::agents::Risk,
        (kind, fingerprint): (&str, &str),
        refutation: serde_json::Value,
        mut provenance: serde_json::Value,
    ) -> Result<String, StepError> {
        let id = hex::encode(&Sha256::digest(format!("{review_id}\n{key}").as_bytes())[..16]);
        provenance["review_id"] = review_id.into();
        provenance["pipeline"] = key.into();
        let record = proven_store::MemoryRecord {
            id: id.clone(),
            tenant: scope.tenant.clone(),
            repository: scope.repository.clone(),
            fingerprint: fingerprint.to_string(),
            kind: kind.into(),
            path: risk.path.clone(),
            symbol: risk.symbol.clone(),
            claim: risk.claim.clone(),
            refutation: refutation.to_string(),
            provenance: provenance.to_string(),
            confidence: 1.0,
            created_at: String::new(),
        };
        self.store.memory_write(&record).await.map_err(retryable)?;
        Ok(id)
    }

    /// One query pipeline: its findings kept, dropped (and remembered), or unproven.
    #[allow(clippy::too_many_arguments)]
    async fn judge_query(
        &self,
        review_id: &str,
        scope: &MemoryScope,
        rows: &[StepRow],
        key: &str,
        risk: &crate::agents::Risk,
        report: &mut Report,
        trace: &mut Trace,
    ) -> Result<RiskOutcome, StepError> {
        use crate::judge::query::{QueryVerdict, judge_query};
        let fp =
            crate::agents::fingerprint("query", &risk.path, risk.symbol.as_deref(), &risk.claim);
        Ok(match judge_query(rows, key, risk) {
            QueryVerdict::Keep { findings, skeptic } => {
                trace.push(
                    "verdict",
                    serde_json::json!({"key": key, "verdict": "kept", "title": risk.title,
                                       "findings": findings.iter().map(|f| &f.id).collect::<Vec<_>>()}),
                );
                for mut f in findings {
                    f.claim = Some(risk.claim.clone());
                    f.skeptic = skeptic.clone().map(skeptic_ref);
                    report.findings.push(f);
                }
                RiskOutcome::Finding
            }
            QueryVerdict::Dropped {
                refutation,
                skeptic,
            } => {
                let id = self
                    .remember(
                        (review_id, scope, key),
                        risk,
                        ("query", &fp),
                        serde_json::json!({"reason": skeptic.reason, "query": refutation.query}),
                        serde_json::json!({}),
                    )
                    .await?;
                trace.push(
                    "verdict",
                    serde_json::json!({"key": key, "verdict": "dropped", "title": risk.title,
                                       "reason": refutation.reason, "memory_record": id}),
                );
                report.unproven.push(Unproven {
                    claim: risk.claim.clone(),
                    reason: format!(
                        "refuted by the Skeptic's own query ({}); remembered as {id}",
                        refutation.reason
                    ),
                    runs: Vec::new(),
                });
                RiskOutcome::Dropped
            }
            QueryVerdict::Unproven { claim, reason } => {
                trace.push(
                    "verdict",
                    serde_json::json!({"key": key, "verdict": "unproven", "reason": reason}),
                );
                report.unproven.push(Unproven {
                    claim,
                    reason,
                    runs: Vec::new(),
                });
                RiskOutcome::Unproven
            }
            QueryVerdict::Inconclusive { claim } => {
                report.not_seen.push(NotSeen {
                    what: claim,
                    reason:
                        "inconclusive: its pipeline did not finish before the review's deadline"
                            .into(),
                });
                RiskOutcome::Inconclusive
            }
        })
    }

    async fn judge(&self, lease: &Lease) -> Result<Outcome, StepError> {
        let review_id = &lease.id.review_id;
        let rows = self.results(review_id).await?;
        let review = self.store.review(review_id).await.map_err(retryable)?;
        let mut report = Report::new(ReportKind::Review, review.repository.clone());
        report.review_id = Some(review_id.clone());
        let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
        if let Ok(intake) = result_of::<IntakeResult>(&rows, INTAKE) {
            report.base = Some(intake.base);
            report.head = Some(intake.head);
            report.left_out = intake.left_out;
            report.input_errors.extend(intake.input_errors);
            if intake.truncated {
                report.not_seen.push(NotSeen {
                    what: "files beyond the intake limit".into(),
                    reason: format!(
                        "the change has more than {} files",
                        proven_change::Limits::default().max_files
                    ),
                });
            }
        }
        if let Ok(plan) = result_of::<PlanResult>(&rows, PLAN) {
            report.plan = Some(plan.plan);
        }
        if let Ok(collect) = result_of::<CollectResult>(&rows, DEPS_COLLECT) {
            report.input_errors.extend(collect.input_errors);
            report.not_seen.extend(collect.not_seen);
            report.failed_services.extend(collect.failed_services);
        }
        let scope = self.memory_scope(review_id).await?;
        let first = self
            .judge_agents(review_id, &scope, &rows, &mut report, &mut trace)
            .await?;
        report
            .reviewers
            .extend(crate::judge::reviewers::side_by_side(&rows, &first));
        let mut broken_review_step = false;
        for row in &rows {
            if row.id.step == DEPS_FILE && StepState::of(row) == StepState::Done {
                if let Some(r) = row
                    .result
                    .as_deref()
                    .and_then(|t| serde_json::from_str::<FileResult>(t).ok())
                {
                    let findings = self
                        .judge_deps_findings(
                            review_id,
                            &scope,
                            &rows,
                            &row.id.key,
                            &r,
                            &mut report,
                            &mut trace,
                        )
                        .await?;
                    report.findings.extend(findings);
                    report.input_errors.extend(r.input_errors);
                    report.not_seen.extend(r.not_seen);
                    report.dependency_files.extend(r.files);
                }
            } else if let Some(unended) = crate::judge::branches::unended(row) {
                report.not_seen.extend(unended.not_seen);
                report.failed_services.push(unended.failed);
                broken_review_step |= unended.breaks_review;
            }
        }
        // A package the dependency evidence already reported is not reported twice.
        for id in crate::judge::branches::drop_repeated_packages(&mut report.findings) {
            trace.push("duplicate", serde_json::json!({"finding": id, "reason": "the dependency evidence reports the same package, version and advisory"}));
        }
        if broken_review_step && report.plan.is_none() {
            report.status = Status::Failed;
        }
        let report = writer::seal(report, &mut trace);
        let json = to_json(&report)?;
        let status = match report.status {
            Status::Complete => ReviewStatus::Complete,
            Status::Incomplete => ReviewStatus::Incomplete,
            Status::Failed => ReviewStatus::Failed,
        };
        metrics::counter!(proven_pipeline::metrics_names::REVIEWS_TOTAL, "status" => status.as_str()).increment(1);
        let mut out = outcome(trace, json.clone(), Vec::new(), false);
        out.finish = Some((status, json));
        Ok(out)
    }
}

impl Steps for ReviewSteps {
    fn run<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Outcome, StepError>> {
        Box::pin(async move {
            match lease.id.step.as_str() {
                INTAKE => self.intake(lease).await,
                PLAN => self.plan(lease).await,
                DEPS_COLLECT => self.deps_collect(lease).await,
                DEPS_FILE => self.deps_file(lease).await,
                JUDGE => self.judge(lease).await,
                crate::agents::PLANNER
                | crate::agents::PROVER
                | crate::agents::SKEPTIC
                | crate::agents::REPRODUCE
                | crate::agents::REFUTE
                | crate::agents::SECOND_REVIEWER
                | crate::investigator::INVESTIGATOR
                | crate::investigator::SKEPTIC_QUERY
                | crate::investigator::SKEPTIC_DEPS
                | crate::auditor::AUDITOR
                | crate::fixer::FIXER
                | crate::fixer::SANDBOX_FIX
                | crate::autofix::AUTOFIX => self.agent_step(lease).await,
                crate::sandbox_job::SANDBOX_RUN => {
                    crate::sandbox_job::run(self.sandbox.as_ref(), &self.store, lease).await
                }
                other => Err(StepError::Permanent(format!("unknown step {other:?}"))),
            }
        })
    }

    fn judge_dead_lettered<'a>(
        &'a self,
        review_id: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let review = self.store.review(review_id).await?;
            let mut report = Report::new(ReportKind::Review, review.repository);
            report.review_id = Some(review_id.to_string());
            report.status = Status::Failed;
            report.failed_services.push(FailedService {
                service: JUDGE.into(),
                message: "dead-lettered: the judge crashed its worker every time".into(),
            });
            report.seal();
            let json = serde_json::to_string(&report).unwrap_or_default();
            self.store
                .finish_review(review_id, ReviewStatus::Failed, &json)
                .await
        })
    }
}

/// Shared handle for executors.
pub fn steps(store: Store, layers: Layers, sources: proven_source::Sources) -> Arc<ReviewSteps> {
    Arc::new(ReviewSteps::new(store, layers, sources))
}

#[cfg(test)]
mod tests {
    use proven_store::testing::{Backend, TestStore};
    use proven_store::{Claim, Lease, NewPipelineReview, Retry};

    use super::*;

    async fn lease(store: &Store, step: &str, key: &str) -> Lease {
        let id = proven_store::StepId {
            review_id: "r".into(),
            step: step.into(),
            key: key.into(),
        };
        match store
            .claim(&id, "test", 60_000_000, 3)
            .await
            .expect("claim")
        {
            Claim::Run(lease) => lease,
            other => panic!("{step} did not run: {other:?}"),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_planner_waits_for_the_dependency_evidence_then_plans_without_it() {
        let test = TestStore::new(Backend::Sqlite).await;
        let store = &test.store;
        store
            .start_review(
                &NewPipelineReview {
                    id: "r".into(),
                    tenant_id: None,
                    repository: "/repo".into(),
                    base_rev: "a".into(),
                    head_rev: "b".into(),
                    priority: 0,
                    batch_id: None,
                    pr_key: None,
                    request: "{}".into(),
                    deadline_us: None,
                    trace_id: None,
                },
                &NewStep {
                    pipeline: true,
                    ..NewStep::new(DEPS_COLLECT, "evidence")
                },
            )
            .await
            .expect("start");
        // deps.collect fans out to one dependency file; the Planner runs beside it.
        let collect = lease(store, DEPS_COLLECT, "").await;
        let next = vec![
            NewStep {
                key: "Cargo.lock".into(),
                pipeline: true,
                ..NewStep::new(DEPS_FILE, "evidence")
            },
            NewStep {
                pipeline: true,
                ..NewStep::new(crate::agents::PLANNER, "model")
            },
        ];
        store
            .commit(
                &collect,
                &Outcome {
                    result: "{}".into(),
                    next,
                    closes_pipeline: true,
                    ..Default::default()
                },
            )
            .await
            .expect("fan out");
        let steps = ReviewSteps::new(
            store.clone(),
            Layers::default(),
            proven_source::Sources::cli(&Layers::default().resolve().expect("settings")),
        )
        .with_planner_wait(std::time::Duration::from_secs(2));
        let started = std::time::Instant::now();
        for waited in 0..12 {
            let planner = lease(store, crate::agents::PLANNER, "").await;
            let rows = store.steps_of("r").await.expect("steps");
            match steps.dependency_evidence(&planner, &rows) {
                Err(StepError::Waiting { message, after }) => {
                    assert!(message.contains("deps.file Cargo.lock"), "{message}");
                    assert!(after <= std::time::Duration::from_secs(2));
                }
                // The store was slower than the wait itself: it may go on, never sooner.
                Ok(_) if started.elapsed() >= std::time::Duration::from_secs(2) => break,
                other => panic!("wait {waited}: the Planner went on: {other:?}"),
            }
            assert!(
                store
                    .retry_later(&planner, 0, Retry::Wait, "waiting")
                    .await
                    .expect("defer")
            );
        }
        // Waiting is neither an attempt nor a rate-limit deferral (those are capped).
        let id = proven_store::StepId {
            review_id: "r".into(),
            step: crate::agents::PLANNER.into(),
            key: String::new(),
        };
        assert_eq!(store.deferrals(&id).await.expect("deferrals"), 0);
        tokio::time::sleep(std::time::Duration::from_secs(2).saturating_sub(started.elapsed()))
            .await;
        // Waited long enough: it plans with what there is, naming what it did not read.
        let planner = lease(store, crate::agents::PLANNER, "").await;
        let rows = store.steps_of("r").await.expect("steps");
        let evidence = steps
            .dependency_evidence(&planner, &rows)
            .expect("plans without it");
        assert_eq!(evidence.pending, ["deps.file Cargo.lock"]);
        assert!(evidence.findings.is_empty());
        assert_eq!(planner.attempt, 1, "waiting spent no attempt");
        test.cleanup().await;
    }
}
