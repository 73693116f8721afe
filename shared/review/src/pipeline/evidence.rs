//! The dependency evidence steps: `deps.collect` finds the dependency files the change
//! touches and starts one finding pipeline for each; `deps.file` evaluates one.

use std::path::Path;

use proven_pipeline::{Lease, NewStep, Outcome, StepError};
use proven_report::FailedService;

use super::{INTAKE, PLAN, retryable};
use crate::Trace;
use crate::git_tree::{GitTree, Side};
use crate::outcome::Next;
use crate::outcome::{blocking, outcome, to_json};
use crate::rows::result_of;
use crate::step::StepContext;
use crate::step_name::StepName;
use crate::steps::deps;
use crate::wire::{
    CollectResult, DepsSettings, FileResult, IntakeResult, PlanResult, Unread, deps_fingerprint,
};

pub(super) async fn collect(cx: &StepContext, lease: &Lease) -> Result<Outcome, StepError> {
    let rows = cx.rows(&lease.id.review_id).await?;
    let intake: IntakeResult = result_of(&rows, INTAKE)?;
    let mut result = CollectResult::default();
    let (advisories, _, _) = cx.store.advisory_counts().await.map_err(retryable)?;
    if advisories == 0 {
        result.unread.failed_services.push(FailedService {
                service: "advisories".into(),
                message: "the advisory store is empty: run `proven db import PATH` (or `proven db sync`) first".into(),
            });
    }
    let paths: Vec<Vec<u8>> = intake
        .changed_paths
        .iter()
        .filter_map(|h| hex::decode(h).ok())
        .collect();
    let ((sources, errors, not_seen), trace) =
        on_trees(intake, "deps.collect", move |sides, trace| {
            deps::sources(sides, &paths, trace)
        })
        .await?;
    result.sources = sources;
    result.unread.input_errors = errors;
    result.unread.not_seen = not_seen;
    // One finding pipeline per dependency file, created in this step's transaction; this
    // step's own slot closes (with no file, that may be the last one: the judge).
    let next: Vec<NewStep> = result
        .sources
        .iter()
        .map(|path| NewStep {
            key: path.clone(),
            ..Next::then(StepName::DepsFile, "evidence")
        })
        .collect();
    Ok(outcome(trace, to_json(&result)?, next, true))
}

pub(super) async fn file(cx: &StepContext, lease: &Lease) -> Result<Outcome, StepError> {
    let rows = cx.rows(&lease.id.review_id).await?;
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
    let opts = options.clone();
    let (read, mut trace) = on_trees(intake, "deps.file", move |sides, trace| {
        deps::read_pair(sides, &path, &opts, trace)
    })
    .await?;
    let mut result = FileResult {
        unread: Unread {
            input_errors: read.input_errors,
            not_seen: read.not_seen,
            ..Default::default()
        },
        files: read.files,
        ..Default::default()
    };
    if let Some(pair) = read.pair {
        let evaluated =
            deps::evaluate(&cx.store, std::slice::from_ref(&pair), &options, &mut trace)
                .await
                .map_err(retryable)?;
        result.findings = evaluated.findings;
        result.unread.not_seen.extend(evaluated.not_seen);
    }
    let mut next = Vec::new();
    if plan.agents && !result.findings.is_empty() {
        // A finding H-MEM holds an evidenced refutation of does not come back.
        let scope = cx.memory_scope(&lease.id.review_id).await?;
        let mut kept = Vec::new();
        for f in std::mem::take(&mut result.findings) {
            let memory = cx
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
                ..Next::then(StepName::SkepticDeps, "model")
            });
        }
    }
    Ok(outcome(trace, to_json(&result)?, next, true))
}

/// Runs `f` over the change's two trees (base, head) on the blocking pool (git2 blocks),
/// with a trace of its own; a repository that does not open fails `step` by name.
async fn on_trees<T: Send + 'static>(
    intake: IntakeResult,
    step: &'static str,
    f: impl FnOnce(&[(Side, GitTree<'_>); 2], &mut Trace) -> T + Send + 'static,
) -> Result<(T, Trace), StepError> {
    let run_id = uuid::Uuid::now_v7().to_string();
    blocking(move || {
        let mut trace = Trace::new(run_id);
        let repo = proven_change::Repo::open(Path::new(&intake.repository_dir))
            .map_err(|e| e.to_string())?;
        let sides = GitTree::sides(&repo, &intake.base.commit, &intake.head.commit);
        let out = f(&sides, &mut trace);
        Ok::<_, String>((out, trace))
    })
    .await?
    .map_err(|e| StepError::Permanent(format!("{step}: {e}")))
}
