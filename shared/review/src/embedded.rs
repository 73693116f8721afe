//! The embedded default: a whole review in this process, on the local store.

use std::path::PathBuf;

use proven_config::{Config, Layers};
use proven_report::{FailedService, LeftOutEntry, NotSeen, Report, ReportKind, RevisionRef};
use proven_store::{NewReview, ReviewStatus, Store};

use crate::steps::{deps, intake, scout, writer};
use crate::{ReviewError, Trace};

pub struct ReviewRequest {
    pub repository: PathBuf,
    pub base: String,
    pub head: String,
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ReviewError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ReviewError::Input(format!("a blocking step failed: {e}")))
}

/// Runs a review. `layers` are the process's settings; `proven.yaml` from the base revision
/// is layered under them before any work (a wrong value there is a [`ReviewError::Config`]).
pub async fn review(
    store: &Store,
    layers: &Layers,
    request: ReviewRequest,
) -> Result<Report, ReviewError> {
    let review_id = uuid::Uuid::now_v7().to_string();
    let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());

    // Intake.
    let input = intake::IntakeInput {
        repository: request.repository.clone(),
        base: request.base.clone(),
        head: request.head.clone(),
        limits: proven_change::Limits::default(),
    };
    let intake = blocking(move || intake::run(&input)).await??;
    let config: Config = match &intake.config {
        Some((origin, text)) => layers.clone().with_yaml(text, origin)?.resolve()?,
        None => layers.resolve()?,
    };

    let target = request.repository.display().to_string();
    store
        .create_review(&NewReview {
            id: review_id.clone(),
            repository: target.clone(),
            base_rev: request.base.clone(),
            head_rev: request.head.clone(),
        })
        .await?;
    store
        .set_review_commits(&review_id, &intake.base.commit, &intake.head.commit)
        .await?;
    intake::trace(&intake, &mut trace);

    let mut report = Report::new(ReportKind::Review, target);
    report.review_id = Some(review_id.clone());
    report.base = Some(RevisionRef {
        rev: intake.base.spec.clone(),
        commit: intake.base.commit.clone(),
    });
    report.head = Some(RevisionRef {
        rev: intake.head.spec.clone(),
        commit: intake.head.commit.clone(),
    });
    report.left_out = intake
        .change
        .left_out
        .iter()
        .map(|l| LeftOutEntry {
            path: l.path.display(),
            reason: l.reason.as_str().into(),
        })
        .collect();
    if intake.change.truncated {
        report.not_seen.push(NotSeen {
            what: "files beyond the intake limit".into(),
            reason: format!(
                "the change has more than {} files",
                proven_change::Limits::default().max_files
            ),
        });
    }

    // Scout: the plan line, before any evidence step.
    let plan = scout::plan(&intake.facts, config.dependencies, &mut trace);
    let run_deps = plan.runs.iter().any(|r| r == "dependency evidence");
    report.plan = Some(plan);
    trace.flush(store, &review_id).await?;

    // Dependency evidence.
    if run_deps {
        let options = deps::DepsOptions {
            informational: config.informational,
            dev_dependencies: config.dev_dependencies,
            limits: proven_lockfile::Limits {
                max_bytes: config.max_lockfile_bytes,
                ..Default::default()
            },
        };
        let (advisories, _, _) = store.advisory_counts().await?;
        if advisories == 0 {
            report.failed_services.push(FailedService {
                service: "advisories".into(),
                message: "the advisory store is empty: run `proven db import PATH` (or `proven db sync`) first".into(),
            });
            trace.push(
                "failed_service",
                serde_json::json!({"service": "advisories", "message": "no advisories imported"}),
            );
        }
        let input = deps::CollectInput {
            repository: request.repository.clone(),
            base_commit: intake.base.commit.clone(),
            head_commit: intake.head.commit.clone(),
            changed_paths: intake
                .change
                .files
                .iter()
                .flat_map(|f| [f.old_path.as_ref(), f.new_path.as_ref()])
                .flatten()
                .map(|p| p.as_bytes().to_vec())
                .collect(),
        };
        let (opts, run_id) = (options.clone(), trace.run_id().to_string());
        let (collected, mut step_trace) = blocking(move || {
            let mut t = Trace::new(run_id);
            deps::collect(&input, &opts, &mut t).map(|c| (c, t))
        })
        .await??;
        let outcome = deps::evaluate(store, &collected.pairs, &options, &mut step_trace).await?;
        trace.absorb(step_trace);
        report.findings = outcome.findings;
        report.not_seen.extend(collected.not_seen);
        report.not_seen.extend(outcome.not_seen);
        report.input_errors = collected.input_errors;
        report.dependency_files = collected.files;
    }

    // Writer.
    let report = writer::seal(report, &mut trace);
    let status = match report.status {
        proven_report::Status::Complete => ReviewStatus::Complete,
        proven_report::Status::Incomplete => ReviewStatus::Incomplete,
        proven_report::Status::Failed => ReviewStatus::Failed,
    };
    let json = serde_json::to_string(&report).map_err(|e| ReviewError::Input(e.to_string()))?;
    trace.flush(store, &review_id).await?;
    store.finish_review(&review_id, status, &json).await?;
    Ok(report)
}
