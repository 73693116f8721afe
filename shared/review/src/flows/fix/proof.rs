//! `sandbox.fix`: a Fixer's candidate proved on a scratch copy of the change: the
//! finding's own test twice, then the package's whole suite.

use proven_pipeline::{Lease, Outcome, StepError};
use proven_report::RunRef;
use proven_sandbox::RunRecord;
use serde_json::json;

use super::candidate::{Candidate, next_try};
use crate::core::nearest::{Narrowed, files_request, narrowed};
use crate::core::outcome::{outcome, read_input, to_json};
use crate::core::rows::result_of;
use crate::core::step::ReviewStep;
use crate::core::step_name::StepName;
use crate::core::suite::{
    compare_with_base, new_failures, no_other_tests, suite_against_base, suite_request,
    suite_timeout,
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
        .with_patch(edits.clone())
        .with_timeout(suite_timeout);
    let cassette_key = runs_key(&[
        view.head,
        &job.test.path,
        &job.test.code,
        &serde_json::to_string(&candidate.edits).unwrap_or_default(),
    ]);
    // The proving test twice (a flaky pass proves nothing), then the whole suite.
    let mut requests = twice("test", proving).to_vec();
    requests.push(("suite".into(), suite.clone()));
    let done = run_in_turn(s, lease, ("fix", &cassette_key), requests, true).await?;
    let refused = done
        .refused
        .map(|e| format!("the patch does not apply: {e}"));
    // A whole suite that outlasted suite_timeout: the tests nearest the patch run in its
    // place, and stand for it from here on.
    let mut records = done.runs.clone();
    let mut suite = suite;
    let narrowed = match refused {
        None => {
            let paths = candidate.edits.iter().map(|e| e.path.clone()).collect();
            let nearest = (&view, language, paths, (edits, suite_timeout));
            narrowed(s, lease, nearest, &cassette_key, &records).await?
        }
        Some(_) => None,
    };
    if let Some(n) = &narrowed {
        records[2] = n.run.clone();
        suite = n.request.clone();
    }
    // A suite that fails with the patch is run on the base too: what failed there already
    // is not the patch's doing.
    let (base_suite, base_request) = match records.get(2) {
        Some(patched) if refused.is_none() && !passed(patched) && compare_with_base(patched) => {
            let on_base = (language, narrowed.as_ref(), suite_timeout);
            suite_on_base(s, lease, on_base, &cassette_key, &mut trace).await?
        }
        _ => (None, None),
    };
    let mut runs: Vec<RunRef> = done
        .runs
        .iter()
        .chain(narrowed.iter().map(|n| &n.run))
        .map(|r| run_ref("change+patch", r))
        .collect();
    runs.extend(base_suite.iter().map(|r| run_ref("base", r)));
    let mut refs = runs.clone();
    if narrowed.is_some() {
        refs.remove(2);
    }
    let mut held = verdict(refused, &records, base_suite.as_ref(), &refs);
    if narrowed.is_some() {
        held = none_ran_nearest(held);
    }
    if let (Some(patched), Some(base), Some(base_request)) =
        (records.get(2), base_suite.as_ref(), base_request)
        && !held.proved
    {
        let again = Again {
            key: &cassette_key,
            suite,
            base_request,
        };
        held = held_to_runs_again(s, lease, held, (patched, base), again, &mut runs).await?;
    }
    for r in &runs {
        trace.push("sandbox_run", serde_json::to_value(r).unwrap_or_default());
    }
    if let Some(n) = &narrowed {
        let why = n.words("suite_timeout", suite_timeout);
        held.reason = format!("{} ({why})", held.reason);
    }
    let (proved, reason) = (held.proved, held.reason.clone());
    trace.push(
        "fix_verdict",
        json!({"key": lease.id.key, "attempt": input.attempt, "proved": proved, "reason": reason}),
    );
    let result = fix_result(&candidate, held, runs, narrowed);
    let next = if proved {
        Vec::new()
    } else {
        next_try(input, &reason)?
    };
    Ok(outcome(trace, to_json(&result)?, next, true))
}

/// What the try came to: the candidate, what the runs made of it, and the runs.
fn fix_result(
    candidate: &Candidate,
    held: Held,
    runs: Vec<RunRef>,
    narrowed: Option<Narrowed>,
) -> FixResult {
    FixResult {
        proved: held.proved,
        attempt: candidate.input.attempt,
        reason: held.reason,
        edits: candidate.edits.clone(),
        explanation: candidate.explanation.clone(),
        runs,
        failing_on_base_too: held.failing_on_base_too,
        no_other_tests: held.no_other_tests,
        flaky_with_patch: held.flaky_with_patch,
        suite_narrowed_to: narrowed.map(|n| n.nearest.files).unwrap_or_default(),
    }
}

/// The test files nearest the patch that ran no test on either side are not "the package has
/// no other test": its whole suite had tests, and ran past `suite_timeout`. Nothing beyond
/// the finding's own test holds the patch then: not proved.
fn none_ran_nearest(held: Held) -> Held {
    if !held.no_other_tests {
        return held;
    }
    not_proved(
        "with the patch the finding's own test passes, but the test files that import what the patch edits ran no test, with it nor on the base, and the package's whole suite ran past suite_timeout: nothing else holds the patch"
            .into(),
    )
}

/// The package's suite on the base (the test files nearest the patch when they ran in place
/// of the whole suite), bounded by `suite_timeout`: its run, and what was run.
async fn suite_on_base(
    s: &ReviewStep<'_>,
    lease: &Lease,
    (language, narrowed, timeout): (
        proven_sandbox::Language,
        Option<&Narrowed>,
        std::time::Duration,
    ),
    key: &str,
    trace: &mut Trace,
) -> Result<(Option<RunRecord>, Option<proven_sandbox::RunRequest>), StepError> {
    let view = &s.view;
    let request = match narrowed {
        Some(n) => files_request(view, view.base, language, &n.nearest.files).await?,
        None => Some(suite_request(view, view.base, language, trace).await?),
    };
    let Some(request) = request else {
        return Err(StepError::Permanent(
            "the suite's test files cannot be selected on the base".into(),
        ));
    };
    let request = request.with_timeout(timeout);
    let run = one_run(s, lease, ("fix-base", key), "suite-base", request.clone()).await?;
    Ok((run, Some(request)))
}

/// The second runs of a suite a flaky test may call for: the cassette key of the step's
/// runs, the suite with the patch, and the suite on the base.
struct Again<'a> {
    key: &'a str,
    suite: proven_sandbox::RunRequest,
    base_request: proven_sandbox::RunRequest,
}

/// A test of the project's own that failed with the patch and passes on the base may be
/// flaky (a daemon it starts, a port, a timing): one run of it does not blame the patch.
/// The suite runs once more with the patch and the patch is held to that run; a test that
/// failed in the first and passes in the second and on the base is named as flaky. A test
/// that failed in both runs with the patch may still be flaky here (a timing that fails most
/// runs under load: luigi-6's test of several workers): the base's suite runs once more,
/// and the patch's second run is held to it as to the first. Each run is added to `runs`.
async fn held_to_runs_again(
    s: &ReviewStep<'_>,
    lease: &Lease,
    held: Held,
    (patched, base): (&RunRecord, &RunRecord),
    again: Again<'_>,
    runs: &mut Vec<RunRef>,
) -> Result<Held, StepError> {
    let first_new = new_failures(patched, base);
    if first_new.is_empty() {
        return Ok(held);
    }
    let key = ("fix-again", again.key);
    let Some(second) = one_run(s, lease, key, "suite-again", again.suite).await? else {
        return Ok(held);
    };
    runs.push(run_ref("change+patch", &second));
    let held = held_again(held, first_new.clone(), &second, base);
    if held.proved || new_failures(&second, base).is_empty() {
        return Ok(held);
    }
    let key = ("fix-base-again", again.key);
    let request = again.base_request;
    let Some(base_again) = one_run(s, lease, key, "suite-base-again", request).await? else {
        return Ok(held);
    };
    runs.push(run_ref("base", &base_again));
    Ok(held_on_base_again(
        held,
        &first_new,
        &second,
        base,
        &base_again,
    ))
}

/// One run of a suite, recorded under `key` (the cassette's kind and key) as `name`.
async fn one_run(
    s: &ReviewStep<'_>,
    lease: &Lease,
    key: (&str, &str),
    name: &str,
    request: proven_sandbox::RunRequest,
) -> Result<Option<RunRecord>, StepError> {
    let requests = vec![(name.to_string(), request)];
    Ok(run_in_turn(s, lease, key, requests, false)
        .await?
        .runs
        .into_iter()
        .next())
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
    /// The package's tests that failed in one run of its suite with the patch and passed in
    /// the next and on the base (flaky, not the patch's doing).
    flaky_with_patch: Vec<String>,
}

fn not_proved(reason: String) -> Held {
    Held {
        proved: false,
        reason,
        failing_on_base_too: Vec::new(),
        no_other_tests: false,
        flaky_with_patch: Vec::new(),
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
            flaky_with_patch: Vec::new(),
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
            flaky_with_patch: Vec::new(),
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
            flaky_with_patch: Vec::new(),
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

/// The verdict once the package's suite ran a second time with the patch, after a first run
/// in which `first_new` failed that pass on the base. The patch is held to the second run:
/// proved when it holds against the base ([`suite_against_base`]), with the tests of the
/// first run that did not fail again named as flaky; otherwise `first` stands, saying what
/// the second run showed.
fn held_again(first: Held, first_new: Vec<String>, again: &RunRecord, base: &RunRecord) -> Held {
    match suite_against_base(again, base) {
        Ok(pre_existing) => {
            let words = proven_report::suite_words_with_flaky(&pre_existing, &first_new);
            Held {
                proved: true,
                reason: format!("with the patch the finding's own test passes, {words}"),
                failing_on_base_too: pre_existing,
                no_other_tests: false,
                flaky_with_patch: first_new,
            }
        }
        Err(why) => Held {
            reason: format!(
                "{} (the package's tests run again with the patch: {why})",
                first.reason
            ),
            ..first
        },
    }
}

/// The verdict once the base's suite ran a second time, after two runs with the patch in
/// which tests failed that passed in the base's first run. The patch's second run is held to
/// the base's second ([`suite_against_base`]): proved when it holds, every test that failed
/// with the patch and passed in one of the runs of the same tree named as flaky (those of
/// `first_new`, and those the base's second run failed too); otherwise `first` stands,
/// saying what the base's second run showed.
fn held_on_base_again(
    first: Held,
    first_new: &[String],
    again: &RunRecord,
    base: &RunRecord,
    base_again: &RunRecord,
) -> Held {
    match suite_against_base(again, base_again) {
        Ok(pre_existing) => {
            let mut flaky = first_new.to_vec();
            for t in new_failures(again, base) {
                if !flaky.contains(&t) {
                    flaky.push(t);
                }
            }
            let failing_on_base_too: Vec<String> = pre_existing
                .into_iter()
                .filter(|t| !flaky.contains(t))
                .collect();
            let words = proven_report::suite_words_with_flaky(&failing_on_base_too, &flaky);
            Held {
                proved: true,
                reason: format!("with the patch the finding's own test passes, {words}"),
                failing_on_base_too,
                no_other_tests: false,
                flaky_with_patch: flaky,
            }
        }
        Err(why) => Held {
            reason: format!("{} (the base's tests run again: {why})", first.reason),
            ..first
        },
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::suite::tests::suite;

    /// The test files nearest the patch that ran no test on either side prove nothing: the
    /// package's whole suite had tests (it ran past `suite_timeout`), so "no other test" does
    /// not hold, and the patch is not proved.
    #[test]
    fn nearest_files_that_ran_no_test_do_not_prove_the_fix() {
        let pass = suite("passed", 1, 0, 0, &[]);
        let none = suite("test_failed", 0, 0, 0, &[]);
        let records = [pass.clone(), pass, none.clone()];
        let held = verdict(None, &records, Some(&none), &[]);
        assert!(held.proved && held.no_other_tests, "{}", held.reason);
        let narrowed = none_ran_nearest(held);
        assert!(!narrowed.proved, "{}", narrowed.reason);
        assert!(
            narrowed.reason.contains("ran no test"),
            "{}",
            narrowed.reason
        );
        let ran = verdict(
            None,
            &[records[0].clone(), records[1].clone(), records[0].clone()],
            None,
            &[],
        );
        assert!(none_ran_nearest(ran).proved);
    }

    /// A test of the project's own that failed in one run of the suite with the patch, and
    /// passes in the next and on the base, does not blame the patch (luigi-2's test of the
    /// daemon it starts): the fix is proved and the test named as flaky. One that fails
    /// again, or a second run that fails another test the base passes, is the patch's.
    #[test]
    fn a_test_that_fails_once_with_the_patch_and_passes_again_is_flaky_not_the_patchs() {
        let pass = suite("passed", 1, 0, 0, &[]);
        let base = suite("test_failed", 9, 1, 0, &["t.py::test_env"]);
        let first = suite(
            "test_failed",
            8,
            2,
            0,
            &["t.py::test_env", "t.py::test_ping"],
        );
        let records = [pass.clone(), pass, first.clone()];
        let held = || verdict(None, &records, Some(&base), &[]);
        assert!(!held().proved, "{}", held().reason);
        let new = new_failures(&first, &base);
        assert_eq!(new, ["t.py::test_ping"]);

        let again = suite("test_failed", 9, 1, 0, &["t.py::test_env"]);
        let flaky = held_again(held(), new.clone(), &again, &base);
        assert!(flaky.proved, "{}", flaky.reason);
        assert_eq!(flaky.flaky_with_patch, ["t.py::test_ping"]);
        assert_eq!(flaky.failing_on_base_too, ["t.py::test_env"]);
        assert!(
            flaky.reason.contains("1 (t.py::test_ping) failed in one run of the package's tests and passed in another of the same tree"),
            "{}",
            flaky.reason
        );

        let other = suite(
            "test_failed",
            8,
            2,
            0,
            &["t.py::test_env", "t.py::test_other"],
        );
        for (second, names) in [(&first, "t.py::test_ping"), (&other, "t.py::test_other")] {
            let broke = held_again(held(), new.clone(), second, &base);
            assert!(!broke.proved, "{}", broke.reason);
            assert!(broke.flaky_with_patch.is_empty());
            assert!(
                broke.reason.contains(&format!(
                    "(the package's tests run again with the patch: 1 test(s) fail with the patch that pass on the base: {names})"
                )),
                "{}",
                broke.reason
            );
        }
    }

    /// A test that fails in both runs of the suite with the patch and passed on the base
    /// (luigi-6's test of several workers, at load) does not blame the patch when it fails
    /// in the base's second run too: the fix is proved, the test named as flaky. One the
    /// base passes again is the patch's.
    #[test]
    fn a_test_that_fails_twice_with_the_patch_and_once_on_the_base_is_flaky_not_the_patchs() {
        let pass = suite("passed", 1, 0, 0, &[]);
        let base = suite("test_failed", 9, 1, 0, &["t.py::test_env"]);
        let twice = suite(
            "test_failed",
            8,
            2,
            0,
            &["t.py::test_env", "t.py::test_workers"],
        );
        let records = [pass.clone(), pass, twice.clone()];
        let first_new = new_failures(&twice, &base);
        let held = || {
            held_again(
                verdict(None, &records, Some(&base), &[]),
                first_new.clone(),
                &twice,
                &base,
            )
        };
        assert!(!held().proved, "{}", held().reason);

        let flaky_base = twice.clone();
        let flaky = held_on_base_again(held(), &first_new, &twice, &base, &flaky_base);
        assert!(flaky.proved, "{}", flaky.reason);
        assert_eq!(flaky.flaky_with_patch, ["t.py::test_workers"]);
        assert_eq!(flaky.failing_on_base_too, ["t.py::test_env"]);
        assert!(
            flaky.reason.contains("1 (t.py::test_workers) failed in one run of the package's tests and passed in another of the same tree"),
            "{}",
            flaky.reason
        );

        let broke = held_on_base_again(held(), &first_new, &twice, &base, &base);
        assert!(!broke.proved, "{}", broke.reason);
        assert!(broke.flaky_with_patch.is_empty());
        assert!(
            broke.reason.contains("(the base's tests run again: 1 test(s) fail with the patch that pass on the base: t.py::test_workers)"),
            "{}",
            broke.reason
        );
    }
}
