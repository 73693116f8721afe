//! The dependency evidence steps: `deps.collect` finds the dependency files the change
//! touches and starts one finding pipeline for each; `deps.file` evaluates one.

use proven_pipeline::{Lease, NewStep, Outcome, StepError};
use proven_report::{FailedService, Finding};

use super::trees::on_trees;
use crate::core::deps;
use crate::core::outcome::Next;
use crate::core::outcome::retryable;
use crate::core::outcome::{outcome, to_json};
use crate::core::rows::result_of;
use crate::core::step::StepContext;
use crate::core::step_name::StepName;
use crate::core::step_name::{INTAKE, PLAN};
use crate::core::trace::Trace;
use crate::core::wire::{FileResult, IntakeResult, PlanResult, Unread};
use crate::flows::deps::wire::{CollectResult, deps_fingerprint};

pub async fn collect(cx: &StepContext, lease: &Lease) -> Result<Outcome, StepError> {
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
            ..Next::then(StepName::DepsFile)
        })
        .collect();
    Ok(outcome(trace, to_json(&result)?, next, true))
}

pub async fn file(cx: &StepContext, lease: &Lease) -> Result<Outcome, StepError> {
    let rows = cx.rows(&lease.id.review_id).await?;
    let intake: IntakeResult = result_of(&rows, INTAKE)?;
    let plan: PlanResult = result_of(&rows, PLAN)?;
    let options = plan.deps.map(deps::DepsOptions::from).ok_or_else(|| {
        StepError::Permanent("deps.file: the plan does not run dependency evidence".into())
    })?;
    let path = lease.id.key.clone();
    let opts = options.clone();
    let intake_head = (intake.head.commit.clone(), intake.head_committed_at);
    let for_fixes = intake.clone();
    let for_reach = intake.clone();
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
    let world = super::world::files(
        cx,
        lease,
        &intake_head,
        (&lease.id.key, read.pair.as_ref(), read.deleted),
        &mut trace,
    )
    .await?;
    if let Some(pair) = read.pair {
        let evaluated =
            deps::evaluate(&cx.store, std::slice::from_ref(&pair), &options, &mut trace)
                .await
                .map_err(retryable)?;
        result.findings = evaluated.findings;
        result.unread.not_seen.extend(evaluated.not_seen);
        result.findings = with_reachability(for_reach, result.findings, &mut trace).await?;
        super::fixes::propose(
            cx,
            for_fixes,
            &pair,
            &mut result.findings,
            &options,
            &mut trace,
        )
        .await?;
    }
    let mut next = Vec::new();
    if plan.agents && !result.findings.is_empty() {
        // A finding H-MEM holds an evidenced refutation of does not come back.
        let scope = cx.memory_scope(&lease.id.review_id).await?;
        let mut kept = Vec::new();
        let mut refuted = Vec::new();
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
                    refuted.push(f);
                }
                None => kept.push(f),
            }
        }
        result.findings = kept;
        if let Some(world) = &world {
            world.refuted(cx, &refuted, &result.remembered).await?;
        }
        // Every dependency finding faces the Skeptic too (query kind).
        if !result.findings.is_empty() {
            next.push(NewStep {
                key: lease.id.key.clone(),
                ..Next::then(StepName::SkepticDeps)
            });
        }
    }
    if let Some(world) = &world {
        world.findings(cx, &result.findings, &mut trace).await?;
    }
    Ok(outcome(trace, to_json(&result)?, next, true))
}

/// The findings, each given whether the head's code reaches what its advisory names
/// ([`super::reach`]), its trace lines added to `trace`.
async fn with_reachability(
    intake: IntakeResult,
    findings: Vec<Finding>,
    trace: &mut Trace,
) -> Result<Vec<Finding>, StepError> {
    if findings.is_empty() {
        return Ok(findings);
    }
    let (findings, lines) = on_trees(intake, "deps.file", move |sides, trace| {
        let mut findings = findings;
        let [(_, base), (_, head)] = sides;
        super::reach::assess_all(head.repo, (base.commit, head.commit), &mut findings, trace);
        findings
    })
    .await?;
    for (kind, line) in lines.into_lines() {
        trace.push(&kind, line);
    }
    Ok(findings)
}
