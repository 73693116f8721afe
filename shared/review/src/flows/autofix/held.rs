//! How the suites of an autofix attempt are held: run again on the base when they failed
//! with the patch, once more with the patch when they failed a test the base passes, once
//! more on the base when that second run still does; and the verdict on each named run.

use std::time::Duration;

use proven_pipeline::{Lease, StepError};
use proven_report::Autofix;
use proven_sandbox::{Language, RunRecord, RunRequest};

use super::nearest::{NarrowedSuite, base_request};
use crate::core::step::ReviewStep;
use crate::core::test_runs::passed;
use crate::core::trace::Trace;

/// Suites of the attempt run again: on the base when they failed with the patch (the
/// Fixer's rule: what failed there already is not the patch's doing), or once more with the
/// patch when they failed a test the base passes (a project's flaky test does not reject
/// the attempt; the suite is held to its second run), and once more on the base when that
/// second run still fails a test the base passed (a timing that fails most runs under load:
/// the second run with the patch is held to the base's second, as the Fixer's proof does).
pub(super) struct SuitesRun {
    /// The index of each run's suite among the attempt's runs.
    at: Vec<usize>,
    /// What was run, in the order of `at`.
    requests: Vec<RunRequest>,
    pub(super) runs: Vec<RunRecord>,
}

/// The runs a suite of the attempt is held to: the base's, its second run with the patch,
/// and the base's second run.
#[derive(Clone, Copy, Default)]
pub(super) struct HeldTo<'a> {
    pub(super) base: Option<&'a RunRecord>,
    pub(super) again: Option<&'a RunRecord>,
    pub(super) base_again: Option<&'a RunRecord>,
}

impl SuitesRun {
    pub(super) async fn on_base(
        s: &ReviewStep<'_>,
        lease: &Lease,
        key: &str,
        (languages, first_suite): (&[Language], usize),
        (done, narrowed): (&crate::core::test_runs::RunsDone, &[NarrowedSuite]),
        timeout: Duration,
        trace: &mut Trace,
    ) -> Result<SuitesRun, StepError> {
        let mut at = Vec::new();
        let mut requests = Vec::new();
        for (i, language) in languages.iter().enumerate() {
            if let Some(r) = done.runs.get(first_suite + i)
                && !passed(r)
                && crate::core::suite::compare_with_base(r)
            {
                let suite = (*language, first_suite + i);
                let Some(request) = base_request(s, suite, narrowed, trace).await? else {
                    continue;
                };
                let request = request.with_timeout(timeout);
                at.push(first_suite + i);
                requests.push((format!("suite-base-{language}"), request));
            }
        }
        Self::in_turn(s, lease, ("autofix-base", key), at, requests).await
    }

    pub(super) async fn again(
        s: &ReviewStep<'_>,
        lease: &Lease,
        key: &str,
        (requests, first_suite): (&[(String, RunRequest)], usize),
        done: &crate::core::test_runs::RunsDone,
        base: &SuitesRun,
    ) -> Result<SuitesRun, StepError> {
        let mut at = Vec::new();
        let mut again = Vec::new();
        for (i, (_, request)) in requests.iter().enumerate().skip(first_suite) {
            if let (Some(r), Some(b)) = (done.runs.get(i), base.of(i))
                && !passed(r)
                && !crate::core::suite::new_failures(r, b).is_empty()
            {
                at.push(i);
                again.push((format!("suite-again-{i}"), request.clone()));
            }
        }
        Self::in_turn(s, lease, ("autofix-again", key), at, again).await
    }

    /// The base's suite once more wherever the second run with the patch still fails a
    /// test the base's first run passed.
    pub(super) async fn base_again(
        s: &ReviewStep<'_>,
        lease: &Lease,
        key: &str,
        base: &SuitesRun,
        again: &SuitesRun,
    ) -> Result<SuitesRun, StepError> {
        let mut at = Vec::new();
        let mut requests = Vec::new();
        for (k, i) in base.at.iter().enumerate() {
            if let (Some(a), Some(b), Some(request)) =
                (again.of(*i), base.of(*i), base.requests.get(k))
                && !crate::core::suite::new_failures(a, b).is_empty()
            {
                at.push(*i);
                requests.push((format!("suite-base-again-{i}"), request.clone()));
            }
        }
        Self::in_turn(s, lease, ("autofix-base-again", key), at, requests).await
    }

    async fn in_turn(
        s: &ReviewStep<'_>,
        lease: &Lease,
        kind: (&str, &str),
        at: Vec<usize>,
        requests: Vec<(String, RunRequest)>,
    ) -> Result<SuitesRun, StepError> {
        let requests_run = requests.iter().map(|(_, r)| r.clone()).collect();
        let runs = if requests.is_empty() {
            Vec::new()
        } else {
            crate::core::test_runs::run_in_turn(s, lease, kind, requests, false)
                .await?
                .runs
        };
        Ok(SuitesRun {
            at,
            requests: requests_run,
            runs,
        })
    }

    /// This run of the suite at index `i` of the attempt's runs.
    pub(super) fn of(&self, i: usize) -> Option<&RunRecord> {
        self.at
            .iter()
            .position(|at| *at == i)
            .and_then(|k| self.runs.get(k))
    }
}

/// The named runs of an attempt and how each is held.
pub(super) struct Runs {
    pub(super) names: Vec<String>,
    pub(super) first_suite: usize,
    pub(super) timeout: Duration,
    /// The indices of the suites that gave way to the test files nearest the patch.
    pub(super) narrowed: Vec<usize>,
}

impl Runs {
    /// Each run that did not hold, named: a test finding's test that did not pass, a suite
    /// that failed beyond what fails on the base, a run killed at `autofix_timeout`, a run
    /// that never happened.
    pub(super) fn settle<'a>(
        &self,
        result: &mut Autofix,
        done: &crate::core::test_runs::RunsDone,
        held_to: &dyn Fn(usize) -> HeldTo<'a>,
    ) {
        if let Some(why) = &done.refused {
            result
                .open
                .push(format!("the patch does not apply to the change: {why}"));
        }
        for (i, name) in self.names.iter().enumerate() {
            let Some(r) = done.runs.get(i) else {
                if done.refused.is_none() {
                    result.open.push(format!("{name}: did not run"));
                }
                continue;
            };
            if r.timed_out {
                result.open.push(format!(
                    "{name}: ran past autofix_timeout ({} s) and was killed: a run that did not \
                     happen proves nothing",
                    self.timeout.as_secs()
                ));
                continue;
            }
            if passed(r) {
                if i < self.first_suite {
                    result.fixes.push(name.clone());
                }
                continue;
            }
            if i < self.first_suite {
                result.open.push(format!(
                    "{name}: its test does not pass with the patch (run {})",
                    r.run_id
                ));
                continue;
            }
            let held = held_to(i);
            let base = held.base;
            if base.is_some_and(|b| crate::core::suite::no_other_tests(r, b)) {
                // The whole suite had tests, and ran past autofix_timeout: files nearest
                // the patch that ran none hold it to nothing.
                if self.narrowed.contains(&i) {
                    result.open.push(format!(
                        "{name}: the test files that import what the patch edits ran no test, \
                         with the patch nor on the base, and the whole suite ran past \
                         autofix_timeout ({} s): nothing holds the patch to the package's tests",
                        self.timeout.as_secs()
                    ));
                }
                continue;
            }
            // Failed a test the base passes: held to the suite's second run with the patch.
            if let (Some(again), Some(b)) = (held.again, base) {
                held_again(result, name, (r, again), b, held.base_again);
                continue;
            }
            match base.map(|b| crate::core::suite::suite_against_base(r, b)) {
                Some(Ok(_)) => {}
                Some(Err(why)) => result.open.push(format!(
                    "{name}: broken by the patch (run {}): {why}",
                    r.run_id
                )),
                None => result.open.push(format!(
                    "{name}: do not pass with the patch (run {}), and no failure is named to hold \
                     against the base",
                    r.run_id
                )),
            }
        }
    }
}

/// A suite that failed with the patch a test the base's first run passed, held to its
/// second run with the patch `again`: against the base's first run, or against the base's
/// second where it ran. Passing, every test that failed with the patch and passed in one
/// run of the same tree is named flaky; failing, the attempt is left open naming the runs.
fn held_again(
    result: &mut Autofix,
    name: &str,
    (first, again): (&RunRecord, &RunRecord),
    base: &RunRecord,
    base_again: Option<&RunRecord>,
) {
    match crate::core::suite::suite_against_base(again, base_again.unwrap_or(base)) {
        Ok(_) => {
            let mut flaky = crate::core::suite::new_failures(first, base);
            if base_again.is_some() {
                flaky.extend(crate::core::suite::new_failures(again, base));
            }
            for n in flaky {
                if !result.flaky.contains(&n) {
                    result.flaky.push(n);
                }
            }
        }
        Err(why) => {
            let on_base = base_again
                .map(|b| format!(", and the base's run {} again", b.run_id))
                .unwrap_or_default();
            result.open.push(format!(
                "{name}: broken by the patch (run {}, and run {} again{on_base}): {why}",
                first.run_id, again.run_id
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::autofix::attempt::REJECTED;

    /// A suite that failed with the patch a test the base passes is held to its second run
    /// with the patch: passing it there, the test is named flaky and the suite holds;
    /// failing it again, the attempt is left open naming it.
    #[test]
    fn a_suite_is_held_to_its_second_run_with_the_patch() {
        use crate::core::suite::tests::suite;
        let base = suite("test_failed", 9, 1, 0, &["t.py::test_env"]);
        let first = suite(
            "test_failed",
            8,
            2,
            0,
            &["t.py::test_env", "t.py::test_ping"],
        );
        let done = crate::core::test_runs::RunsDone {
            runs: vec![suite("passed", 1, 0, 0, &[]), first.clone()],
            refused: None,
        };
        let runs = Runs {
            names: vec!["add subtracts".into(), "the python tests".into()],
            first_suite: 1,
            timeout: Duration::from_secs(60),
            narrowed: Vec::new(),
        };
        let settled = |again: &RunRecord| {
            let mut result = Autofix {
                verdict: REJECTED.into(),
                edits: Vec::new(),
                fixes: Vec::new(),
                open: Vec::new(),
                runs: Vec::new(),
                flaky: Vec::new(),
                narrowed: Vec::new(),
                diff: String::new(),
            };
            let held_to = |i: usize| HeldTo {
                base: (i == 1).then_some(&base),
                again: (i == 1).then_some(again),
                base_again: None,
            };
            runs.settle(&mut result, &done, &held_to);
            result
        };
        let flaky = settled(&suite("test_failed", 9, 1, 0, &["t.py::test_env"]));
        assert!(flaky.open.is_empty(), "{:?}", flaky.open);
        assert_eq!(flaky.flaky, ["t.py::test_ping"]);
        assert_eq!(flaky.fixes, ["add subtracts"]);
        let broke = settled(&first);
        assert!(broke.flaky.is_empty());
        assert!(
            broke.open.iter().any(|o| o.contains(
                "the python tests: broken by the patch (run r, and run r again): 1 test(s) fail with the patch that pass on the base: t.py::test_ping"
            )),
            "{:?}",
            broke.open
        );
    }

    /// A test that failed in both runs of a suite with the patch and passed in the base's
    /// first run is held to the base's second run: failing there too, it is named flaky
    /// (the unpatched tree fails it as well) and the attempt holds; passing there, the patch
    /// broke it and the attempt is left open, naming the base's second run.
    #[test]
    fn a_test_that_fails_twice_with_the_patch_and_once_on_the_base_does_not_reject_the_attempt() {
        use crate::core::suite::tests::suite;
        let base = suite("test_failed", 9, 1, 0, &["t.py::test_env"]);
        let twice = suite(
            "test_failed",
            8,
            2,
            0,
            &["t.py::test_env", "t.py::test_workers"],
        );
        let done = crate::core::test_runs::RunsDone {
            runs: vec![suite("passed", 1, 0, 0, &[]), twice.clone()],
            refused: None,
        };
        let runs = Runs {
            names: vec!["add subtracts".into(), "the python tests".into()],
            first_suite: 1,
            timeout: Duration::from_secs(60),
            narrowed: Vec::new(),
        };
        let settled = |base_again: Option<&RunRecord>| {
            let mut result = Autofix {
                verdict: REJECTED.into(),
                edits: Vec::new(),
                fixes: Vec::new(),
                open: Vec::new(),
                runs: Vec::new(),
                flaky: Vec::new(),
                narrowed: Vec::new(),
                diff: String::new(),
            };
            let held_to = |i: usize| HeldTo {
                base: (i == 1).then_some(&base),
                again: (i == 1).then_some(&twice),
                base_again: if i == 1 { base_again } else { None },
            };
            runs.settle(&mut result, &done, &held_to);
            result
        };
        let flaky_base = twice.clone();
        let flaky = settled(Some(&flaky_base));
        assert!(flaky.open.is_empty(), "{:?}", flaky.open);
        assert_eq!(flaky.flaky, ["t.py::test_workers"]);
        let broke = settled(Some(&base));
        assert!(broke.flaky.is_empty());
        assert!(
            broke.open.iter().any(|o| o.contains(
                "the python tests: broken by the patch (run r, and run r again, and the base's run r again): 1 test(s) fail with the patch that pass on the base: t.py::test_workers"
            )),
            "{:?}",
            broke.open
        );
        let without = settled(None);
        assert!(
            without
                .open
                .iter()
                .any(|o| o.contains("t.py::test_workers")),
            "{:?}",
            without.open
        );
    }

    /// The test files nearest the patch that ran no test on either side, in place of a
    /// whole suite that ran past autofix_timeout, hold the patch to nothing: the attempt is
    /// left open by name. A whole suite that ran none on either side is a package without
    /// other tests, as before.
    #[test]
    fn nearest_files_that_ran_no_test_leave_the_attempt_open() {
        use crate::core::suite::tests::suite;
        let none = suite("test_failed", 0, 0, 0, &[]);
        let done = crate::core::test_runs::RunsDone {
            runs: vec![suite("passed", 1, 0, 0, &[]), none.clone()],
            refused: None,
        };
        let settled = |narrowed: Vec<usize>| {
            let runs = Runs {
                names: vec!["add subtracts".into(), "the python tests".into()],
                first_suite: 1,
                timeout: Duration::from_secs(60),
                narrowed,
            };
            let mut result = Autofix::default();
            let held_to = |i: usize| HeldTo {
                base: (i == 1).then_some(&none),
                ..HeldTo::default()
            };
            runs.settle(&mut result, &done, &held_to);
            result
        };
        let whole = settled(Vec::new());
        assert!(whole.open.is_empty(), "{:?}", whole.open);
        let nearest = settled(vec![1]);
        assert_eq!(nearest.fixes, ["add subtracts"]);
        assert!(
            nearest.open.iter().any(|o| o.starts_with(
                "the python tests: the test files that import what the patch edits ran no test"
            ) && o.contains("autofix_timeout (60 s)")),
            "{:?}",
            nearest.open
        );
    }
}
