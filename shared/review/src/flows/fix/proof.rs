//! `sandbox.fix`: a Fixer's candidate proved on a scratch copy of the change: the
//! finding's own test twice, then the package's whole suite.

use proven_pipeline::{Lease, Outcome, StepError};
use proven_report::RunRef;
use proven_sandbox::RunRecord;
use serde_json::json;

use super::candidate::{Candidate, next_try};
use crate::core::outcome::{outcome, read_input, to_json};
use crate::core::rows::result_of;
use crate::core::step::ReviewStep;
use crate::core::step_name::StepName;
use crate::core::suite::{
    compare_with_base, no_other_tests, suite_against_base, suite_request, suite_timeout,
};
use crate::core::test_runs::{passed, requests, run_in_turn, run_ref, runs_key, twice};
use crate::core::trace::Trace;
use crate::flows::fix::wire::FixResult;

/// How much of a failed run's output the next try is told.
const FAILURE_TAIL: usize = 2000;

/// Proves a candidate: with the patch on the change, the proving test passes, then the
/// package's other tests pass (its suite without the Prover's file: a project's lint over
/// every test file would judge the Prover's style, not the patch). A patch the tree refuses
/// (old text gone, a path outside the tree) is not proved, by name.
pub async fn run_sandbox_fix(s: &ReviewStep<'_>, lease: &Lease) -> Result<Outcome, StepError> {
    let view = s.view;
    let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
    let candidate: Candidate = read_input(lease, "fix candidate")?;
    let input = &candidate.input;
    let job = &input.job;
    let language = job.language;
    let edits = crate::core::test_runs::patch(&candidate.edits);
    let (_, change) = requests(&view, job, &job.test)?;
    let proving = change.clone().with_patch(edits.clone());
    let plan = result_of::<crate::core::wire::PlanResult>(s.rows, StepName::Plan.as_str()).ok();
    let suite_timeout = suite_timeout(plan.as_ref());
    let suite = suite_request(&view, view.head, language, &mut trace)
        .await?
        .with_patch(edits)
        .with_timeout(suite_timeout);
    let cassette_key = runs_key(&[
        view.head,
        &job.test.path,
        &job.test.code,
        &serde_json::to_string(&candidate.edits).unwrap_or_default(),
    ]);
    // The proving test twice (a flaky pass proves nothing), then the whole suite.
    let mut requests = twice("test", proving).to_vec();
    requests.push(("suite".into(), suite));
    let done = run_in_turn(s, lease, ("fix", &cassette_key), requests, true).await?;
    let refused = done
        .refused
        .map(|e| format!("the patch does not apply: {e}"));
    // A suite that fails with the patch is run on the base too: what failed there already
    // is not the patch's doing.
    let base_suite = match done.runs.get(2) {
        Some(patched) if refused.is_none() && !passed(patched) && compare_with_base(patched) => {
            let request = suite_request(&view, view.base, language, &mut trace)
                .await?
                .with_timeout(suite_timeout);
            let base = vec![("suite-base".to_string(), request)];
            run_in_turn(s, lease, ("fix-base", &cassette_key), base, false)
                .await?
                .runs
                .into_iter()
                .next()
        }
        _ => None,
    };
    let mut runs: Vec<RunRef> = done
        .runs
        .iter()
        .map(|r| run_ref("change+patch", r))
        .collect();
    runs.extend(base_suite.iter().map(|r| run_ref("base", r)));
    for r in &runs {
        trace.push("sandbox_run", serde_json::to_value(r).unwrap_or_default());
    }
    let held = verdict(refused, &done.runs, base_suite.as_ref(), &runs);
    let (proved, reason) = (held.proved, held.reason);
    trace.push(
        "fix_verdict",
        json!({"key": lease.id.key, "attempt": input.attempt, "proved": proved, "reason": reason}),
    );
    let result = FixResult {
        proved,
        attempt: input.attempt,
        reason: reason.clone(),
        edits: candidate.edits.clone(),
        explanation: candidate.explanation.clone(),
        runs,
        failing_on_base_too: held.failing_on_base_too,
        no_other_tests: held.no_other_tests,
    };
    let next = if proved {
        Vec::new()
    } else {
        next_try(input, &reason)?
    };
    Ok(outcome(trace, to_json(&result)?, next, true))
}

/// What the runs make of a patch.
struct Held {
    proved: bool,
    /// Why, naming the first run that did not pass with the end of its output.
    reason: String,
    /// The package's tests failing with the patch that fail on the base too.
    failing_on_base_too: Vec<String>,
    /// The package's suite ran no test with the patch nor on the base.
    no_other_tests: bool,
}

fn not_proved(reason: String) -> Held {
    Held {
        proved: false,
        reason,
        failing_on_base_too: Vec::new(),
        no_other_tests: false,
    }
}

/// Whether the runs prove the patch, and why. A package suite that fails with the patch
/// still holds when every test failing there fails on the base too (`base_suite`,
/// [`suite_against_base`]).
fn verdict(
    refused: Option<String>,
    records: &[RunRecord],
    base_suite: Option<&RunRecord>,
    runs: &[RunRef],
) -> Held {
    let passed = |i: usize| records.get(i).is_some_and(passed);
    let tail = |i: usize| runs.get(i).map(failure_tail).unwrap_or_default();
    if let Some(why) = refused {
        return not_proved(why);
    }
    if !passed(0) {
        return not_proved(format!(
            "with the patch the finding's own test does not pass: {}",
            tail(0)
        ));
    }
    if !passed(1) {
        return not_proved(format!(
            "with the patch the finding's own test does not pass twice: {}",
            tail(1)
        ));
    }
    if passed(2) {
        return Held {
            proved: true,
            reason: "with the patch the finding's own test passes, and so do the package's tests"
                .into(),
            failing_on_base_too: Vec::new(),
            no_other_tests: false,
        };
    }
    if let (Some(patched), Some(base)) = (records.get(2), base_suite)
        && no_other_tests(patched, base)
    {
        return Held {
            proved: true,
            reason: format!(
                "with the patch the finding's own test passes, {}",
                proven_report::NO_OTHER_TESTS
            ),
            failing_on_base_too: Vec::new(),
            no_other_tests: true,
        };
    }
    if let Some(killed) = records.get(2).filter(|r| r.timed_out) {
        return not_proved(format!(
            "with the patch the package's tests ran past suite_timeout ({} s) and were killed: a suite that did not finish proves nothing",
            killed.limits.timeout_ms / 1000
        ));
    }
    let against = match (records.get(2), base_suite) {
        (Some(patched), Some(base)) => suite_against_base(patched, base),
        _ => Err(String::new()),
    };
    match against {
        Ok(pre_existing) => Held {
            proved: true,
            reason: format!(
                "with the patch the finding's own test passes, {}",
                proven_report::suite_words(&pre_existing)
            ),
            failing_on_base_too: pre_existing,
            no_other_tests: false,
        },
        Err(why) if why.is_empty() => not_proved(format!(
            "with the patch the package's tests do not pass: {}",
            tail(2)
        )),
        Err(why) => not_proved(format!(
            "with the patch the package's tests do not pass ({why}): {}",
            tail(2)
        )),
    }
}

/// A run that did not pass as the next try is told of it: its outcome, its command and the
/// end of its output.
fn failure_tail(r: &RunRef) -> String {
    let t = &r.output_tail;
    let mut at = t.len().saturating_sub(FAILURE_TAIL);
    while !t.is_char_boundary(at) {
        at += 1;
    }
    format!("{} ({}): {}", r.outcome, r.command.join(" "), &t[at..])
}
