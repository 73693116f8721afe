//! Autofix (DESIGN section 3, step 10; `autofix: on`): one whole-change patch made of every
//! proved fix, proved again as a whole.
//!
//! ```text
//! plan ─ autofix (waits until every other step of the review has ended) ─ judge
//! ```
//!
//! Invariants:
//! - Only fixes the sandbox proved, of findings the Judge keeps (the Judge's own rules,
//!   [`crate::judge::risk::judge_risk`], decide which), go into the patch.
//! - The whole patch is applied to a scratch copy of the change; each fixed finding's own
//!   test must pass on it, then the package's whole suite. Any failure rejects the patch,
//!   naming each finding left open. Nothing is ever committed to the author's branch.
//! - Waiting spends no attempt; the review's deadline still judges a review whose autofix
//!   never ran, naming it.

use std::time::Duration;

use proven_pipeline::{Lease, Outcome, StepError};
use proven_report::{Autofix, PatchEdit, RunRef};
use proven_sandbox::{Language, RunRequest};
use proven_store::StepRow;
use serde_json::json;

use crate::Trace;
use crate::judge::risk::{Verdict, judge_risk};
use crate::outcome::{outcome, to_json};
use crate::rows::step_result;
use crate::step::ReviewStep;
use crate::step_name::StepName;
use crate::test_runs::{TEST_TIMEOUT, run_ref, runs_key};
use crate::wire::{PlannerResult, ProveJob, ReviewView};

pub const AUTOFIX: &str = StepName::Autofix.as_str();

pub const FIXED: &str = "fixed automatically, waiting for a person";
pub const REJECTED: &str = "rejected";
pub const NOTHING: &str = "nothing to fix";

/// The steps that have not ended, other than this one and the judge.
fn unfinished(rows: &[StepRow], me: &str) -> Vec<String> {
    crate::rows::unfinished(rows, |r| r.id.step != me && r.id.step != StepName::Judge)
}

/// A kept finding and its proved fix (None: kept without one).
struct Kept {
    title: String,
    job: ProveJob,
    fix: Option<Vec<PatchEdit>>,
}

/// The findings the Judge will keep (test evidence), each with its proved fix if any.
fn kept(rows: &[StepRow]) -> Vec<Kept> {
    let mut risks = Vec::new();
    if let Some(p) = step_result::<PlannerResult>(rows, StepName::Planner.as_str(), "") {
        risks.extend(p.proving);
    }
    if let Some(a) = step_result::<crate::wire::AuditResult>(rows, StepName::Auditor.as_str(), "") {
        risks.extend(a.probing);
    }
    risks
        .into_iter()
        .filter_map(|(key, risk)| match judge_risk(rows, &key, &risk) {
            Verdict::Keep { job, .. } => Some(Kept {
                title: risk.title.clone(),
                fix: crate::judge::fix::proved_fix(rows, &key).map(|f| f.edits),
                job,
            }),
            _ => None,
        })
        .collect()
}

/// The autofix step: waits for the rest of the review, then proves the whole patch.
pub async fn run(s: &ReviewStep<'_>, lease: &Lease) -> Result<Outcome, StepError> {
    let view = s.view;
    let rows = s.rows;
    let pending = unfinished(rows, AUTOFIX);
    if !pending.is_empty() {
        return Err(StepError::Waiting {
            message: format!(
                "autofix waits for the review's other steps: {}",
                pending.join(", ")
            ),
            after: Duration::from_secs(1),
        });
    }
    let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
    let kept = kept(rows);
    let mut result = gathered(&kept);
    // Findings of other evidence the patch does not fix: each keeps it from "fixed".
    let left = left_by_the_patch(rows);
    if kept.is_empty() && left.is_empty() {
        trace.push("autofix", json!({"verdict": NOTHING}));
        return Ok(outcome(trace, to_json(&result)?, Vec::new(), true));
    }
    result.open.extend(left);
    if result.fixes.is_empty() {
        result.verdict = REJECTED.into();
        trace.push("autofix", json!({"verdict": REJECTED, "open": result.open}));
        return Ok(outcome(trace, to_json(&result)?, Vec::new(), true));
    }
    result.diff = patch_diff(&view, &result.edits).await?;
    let fixed: Vec<&Kept> = kept.iter().filter(|k| k.fix.is_some()).collect();
    let timeout = run_timeout(rows);
    let requests = patch_requests(&view, &fixed, &result.edits, timeout, &mut trace).await?;
    let cassette_key = runs_key(&[
        view.head,
        &serde_json::to_string(&result.edits).unwrap_or_default(),
        &fixed
            .iter()
            .map(|k| k.job.test.code.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    ]);
    let done = crate::test_runs::run_in_turn(
        s,
        lease,
        ("autofix", &cassette_key),
        requests
            .iter()
            .enumerate()
            .map(|(i, (_, request))| (format!("run-{i}"), request.clone()))
            .collect(),
        false,
    )
    .await?;
    // A suite that fails with the whole patch is run on the base too (the Fixer's rule):
    // what failed there already is not the patch's doing.
    let base_suite = match done.runs.get(requests.len() - 1) {
        Some(suite) if !crate::test_runs::passed(suite) && suite.failing_named().is_some() => {
            let language = fixed.first().map_or(Language::Python, |k| k.job.language);
            let mut request = crate::suite::suite_request(&view, view.base, language, &mut trace)
                .await?
                .with_timeout(timeout);
            for k in &fixed {
                request = request.with_file(
                    k.job.test.path.clone(),
                    k.job.test.code.clone().into_bytes(),
                );
            }
            let base = vec![("suite-base".to_string(), request)];
            crate::test_runs::run_in_turn(s, lease, ("autofix-base", &cassette_key), base, false)
                .await?
                .runs
                .into_iter()
                .next()
        }
        _ => None,
    };
    settle(
        &mut result,
        (&requests, timeout),
        done,
        base_suite,
        &mut trace,
    );
    Ok(outcome(trace, to_json(&result)?, Vec::new(), true))
}

/// The kept findings of other evidence than a test, which this patch (made of proved test
/// fixes) does not fix: a dependency finding (its advisory still matches the file; its
/// proposed fix is named) and a query finding (its advisory rows still show it).
fn left_by_the_patch(rows: &[StepRow]) -> Vec<String> {
    use crate::judge::deps::{DepsVerdict, judge_deps};
    use crate::judge::query::{QueryVerdict, judge_query};
    use crate::rows::StepState;
    let mut open = Vec::new();
    // A dependency file whose evidence did not finish has findings no one knows: the
    // attempt cannot say they are fixed.
    for row in rows
        .iter()
        .filter(|r| r.id.step == StepName::DepsFile.as_str())
    {
        if matches!(StepState::of(row), StepState::Failed | StepState::Dead) {
            open.push(format!(
                "{}: its dependency evidence did not finish, so its findings are not known",
                row.id.key
            ));
        }
    }
    for (row, file) in
        crate::rows::done_results::<crate::wire::FileResult>(rows, StepName::DepsFile.as_str())
    {
        for verdict in judge_deps(rows, &row.id.key, &file) {
            let DepsVerdict::Keep { finding, .. } = verdict else {
                continue;
            };
            let fix = match finding.fix.as_ref().and_then(|f| f.proposed.as_ref()) {
                Some(p) => match &p.command {
                    Some(c) => format!("; its fix is to run `{c}`"),
                    None => format!(
                        "; its fix raises it to {} in {}",
                        p.version, finding.location.path
                    ),
                },
                None => String::new(),
            };
            open.push(format!(
                "{}: the advisory still matches {}, which the patch leaves as it is{fix}",
                finding.title, finding.location.path
            ));
        }
    }
    if let Some(p) = step_result::<PlannerResult>(rows, StepName::Planner.as_str(), "") {
        for (key, risk) in &p.investigating {
            if let QueryVerdict::Keep { findings, .. } = judge_query(rows, key, risk) {
                open.extend(findings.iter().map(|f| {
                    format!(
                        "{}: its advisory rows still show it; the patch does not change them",
                        f.title
                    )
                }));
            }
        }
    }
    open
}

/// The whole patch as a unified diff against the head's files.
async fn patch_diff(view: &ReviewView<'_>, edits: &[PatchEdit]) -> Result<String, StepError> {
    let (dir, head) = (view.repository_dir.to_string(), view.head.to_string());
    let mut paths: Vec<String> = edits.iter().map(|e| e.path.clone()).collect();
    paths.dedup();
    let edits = edits.to_vec();
    crate::outcome::blocking(move || {
        let repo =
            proven_change::Repo::open(std::path::Path::new(&dir)).map_err(|e| e.to_string())?;
        let files = paths
            .into_iter()
            .map(|p| crate::git_tree::text_at(&repo, &head, &p, 4 << 20).map(|t| (p, t)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok::<_, String>(proven_report::unified_diff(&files, &edits))
    })
    .await?
    .map_err(|e| StepError::Permanent(format!("autofix: {e}")))
}

/// How long each of the attempt's runs may take (`autofix_timeout`, fixed at the plan).
fn run_timeout(rows: &[StepRow]) -> Duration {
    crate::rows::result_of::<crate::wire::PlanResult>(rows, StepName::Plan.as_str())
        .ok()
        .and_then(|p| p.autofix_timeout_secs)
        .map_or(TEST_TIMEOUT, Duration::from_secs)
}

/// The whole patch of the kept findings' proved fixes; a finding without one is open.
fn gathered(kept: &[Kept]) -> Autofix {
    let mut result = Autofix {
        verdict: NOTHING.into(),
        edits: Vec::new(),
        fixes: Vec::new(),
        open: Vec::new(),
        runs: Vec::new(),
        diff: String::new(),
    };
    for k in kept {
        match &k.fix {
            Some(edits) => {
                result.edits.extend(edits.iter().cloned());
                result.fixes.push(k.title.clone());
            }
            None => result.open.push(format!("{}: no proved fix", k.title)),
        }
    }
    result
}

/// The runs that prove the whole patch, each named: each fixed finding's own test, then the
/// package's suite with every proving test in it.
async fn patch_requests(
    view: &ReviewView<'_>,
    fixed: &[&Kept],
    edits: &[PatchEdit],
    timeout: Duration,
    trace: &mut Trace,
) -> Result<Vec<(String, RunRequest)>, StepError> {
    let patch = crate::test_runs::patch(edits);
    let mut requests = Vec::new();
    let mut language = None;
    for k in fixed {
        let parsed = k.job.language;
        language.get_or_insert(parsed);
        requests.push((
            k.title.clone(),
            crate::test_runs::requests(view, &k.job, &k.job.test)?
                .1
                .with_patch(patch.clone())
                .with_timeout(timeout),
        ));
    }
    let language = language.unwrap_or(Language::Python);
    let mut suite = crate::suite::suite_request(view, view.head, language, trace)
        .await?
        .with_patch(patch)
        .with_timeout(timeout);
    for k in fixed {
        suite = suite.with_file(
            k.job.test.path.clone(),
            k.job.test.code.clone().into_bytes(),
        );
    }
    requests.push(("the package's tests".into(), suite));
    Ok(requests)
}

/// The verdict from the runs: fixed only when the patch applied and every run passed (the
/// package's suite: or failed only where it fails on the base too, `base_suite`).
fn settle(
    result: &mut Autofix,
    (requests, timeout): (&[(String, RunRequest)], Duration),
    done: crate::test_runs::RunsDone,
    base_suite: Option<proven_sandbox::RunRecord>,
    trace: &mut Trace,
) {
    let records = done.runs;
    let refused = done
        .refused
        .map(|e| format!("the fixes do not apply together: {e}"));
    result.runs = records
        .iter()
        .map(|r| run_ref("change+autofix", r))
        .chain(base_suite.iter().map(|r| run_ref("base", r)))
        .collect::<Vec<RunRef>>();
    for r in &result.runs {
        trace.push("sandbox_run", serde_json::to_value(r).unwrap_or_default());
    }
    match refused {
        Some(why) => result.open.push(why),
        None => {
            let suite = requests.len().saturating_sub(1);
            for (i, (name, _)) in requests.iter().enumerate() {
                let passed = records.get(i).is_some_and(|r| {
                    crate::test_runs::passed(r)
                        || (i == suite
                            && base_suite
                                .as_ref()
                                .is_some_and(|b| crate::suite::suite_against_base(r, b).is_ok()))
                });
                if records.get(i).is_some_and(|r| r.timed_out) {
                    result.open.push(format!(
                        "{name}: ran past autofix_timeout ({} s) and was killed: a run that did not \
                         happen proves nothing",
                        timeout.as_secs()
                    ));
                } else if !passed {
                    result
                        .open
                        .push(format!("{name}: does not pass on the whole patch"));
                }
            }
        }
    }
    result.verdict = if result.open.is_empty() {
        FIXED.into()
    } else {
        REJECTED.into()
    };
    trace.push(
        "autofix",
        json!({"verdict": result.verdict, "fixes": result.fixes, "open": result.open}),
    );
}

/// The autofix verdict for the review document (None when autofix did not run).
pub fn verdict(rows: &[StepRow]) -> Option<Autofix> {
    step_result::<Autofix>(rows, AUTOFIX, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(step: &str, key: &str, state: &str) -> StepRow {
        crate::rows::test_row(step, key, state, None)
    }

    #[test]
    fn autofix_waits_for_every_other_step_but_the_judge() {
        let rows = vec![
            row(AUTOFIX, "", "running"),
            row(StepName::Prover.as_str(), "r0", "done"),
            row("fixer", "r0-fix1", "queued"),
            row("skeptic", "r0", "failed"),
            row(proven_store::JUDGE_STEP, "", "queued"),
        ];
        assert_eq!(unfinished(&rows, AUTOFIX), ["fixer r0-fix1"]);
        let done: Vec<StepRow> = rows.into_iter().filter(|r| r.id.step != "fixer").collect();
        assert!(unfinished(&done, AUTOFIX).is_empty());
    }

    #[test]
    fn a_dependency_file_whose_evidence_failed_keeps_the_attempt_open() {
        let rows = vec![
            row(StepName::DepsFile.as_str(), "requirements.txt", "failed"),
            row(StepName::DepsFile.as_str(), "Cargo.lock", "dead"),
        ];
        assert_eq!(
            left_by_the_patch(&rows),
            [
                "requirements.txt: its dependency evidence did not finish, so its findings are not known",
                "Cargo.lock: its dependency evidence did not finish, so its findings are not known"
            ]
        );
        assert!(left_by_the_patch(&[row(StepName::Prover.as_str(), "r0", "failed")]).is_empty());
    }
}
