//! `sandbox.autofix`: the attempt's patch proved on scratch copies of the change, by
//! Proven's runs and rows only. Each test finding's own test must pass with the patch;
//! each advisory and query finding's rows must no longer match ([`super::recheck`]); then
//! the tests of every language a patched file belongs to must hold (a suite that fails
//! with the patch is held only to what it breaks, by name, against the same suite on the
//! base). Each run is bounded by `autofix_timeout`.

use std::collections::BTreeSet;
use std::time::Duration;

use proven_pipeline::{Lease, Outcome, StepError};
use proven_report::{Autofix, RunRef};
use proven_sandbox::{Language, RunRecord, RunRequest};
use serde_json::json;

use super::attempt::{Attempt, FIXED, REJECTED};
use super::gather::Proved;
use crate::core::outcome::{outcome, read_input, to_json};
use crate::core::rows::result_of;
use crate::core::step::ReviewStep;
use crate::core::step_name::StepName;
use crate::core::test_runs::{TEST_TIMEOUT, passed, run_ref, runs_key};
use crate::core::trace::Trace;
use crate::core::wire::{PlanResult, ReviewView};

/// What a patched file's tests run in: a language the sandbox runs, or one it does not
/// (its tests cannot run, so the patch's breakage there cannot be known).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Touched {
    Runs(Language),
    NotRun(&'static str),
}

/// The language a file belongs to (None: a file of no language's package: prose, a
/// Dockerfile).
fn touched(path: &str) -> Option<Touched> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let by_name = match name {
        "package.json"
        | "package-lock.json"
        | "npm-shrinkwrap.json"
        | "yarn.lock"
        | "pnpm-lock.yaml" => Some(Touched::Runs(Language::Node)),
        "Cargo.toml" | "Cargo.lock" => Some(Touched::Runs(Language::Rust)),
        "go.mod" | "go.sum" => Some(Touched::Runs(Language::Go)),
        "pyproject.toml" | "poetry.lock" | "uv.lock" | "Pipfile" | "Pipfile.lock" | "setup.py"
        | "setup.cfg" => Some(Touched::Runs(Language::Python)),
        "composer.json" | "composer.lock" => Some(Touched::NotRun("PHP")),
        "Gemfile" | "Gemfile.lock" => Some(Touched::NotRun("Ruby")),
        "pom.xml" => Some(Touched::NotRun("Java")),
        _ if name.starts_with("requirements") && name.ends_with(".txt") => {
            Some(Touched::Runs(Language::Python))
        }
        _ => None,
    };
    let ext = std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    by_name
        .or_else(|| crate::core::test_runs::language_of(path).map(Touched::Runs))
        .or(match ext {
            "ts" | "tsx" | "jsx" => Some(Touched::Runs(Language::Node)),
            "php" => Some(Touched::NotRun("PHP")),
            "rb" => Some(Touched::NotRun("Ruby")),
            "java" | "kt" => Some(Touched::NotRun("Java")),
            _ => None,
        })
}

/// How long each run may take (`autofix_timeout`, fixed at the plan).
fn run_timeout(plan: Option<&PlanResult>) -> Duration {
    plan.and_then(|p| p.autofix_timeout_secs)
        .map_or(TEST_TIMEOUT, Duration::from_secs)
}

/// The runs, each named: each test finding's own test, then each touched language's
/// suite (the package's other tests).
async fn requests(
    view: &ReviewView<'_>,
    attempt: &Attempt,
    languages: &[Language],
    timeout: Duration,
    trace: &mut Trace,
) -> Result<Vec<(String, RunRequest)>, StepError> {
    let patch = crate::core::test_runs::patch(&attempt.edits);
    let mut out = Vec::new();
    for p in &attempt.proved {
        if let Proved::Test { title, job } = p {
            out.push((
                title.clone(),
                crate::core::test_runs::requests(view, job, &job.test)?
                    .1
                    .with_patch(patch.clone())
                    .with_timeout(timeout),
            ));
        }
    }
    for language in languages {
        out.push((
            suite_name(*language),
            suite(view, view.head, *language, trace)
                .await?
                .with_patch(patch.clone())
                .with_timeout(timeout),
        ));
    }
    Ok(out)
}

fn suite_name(language: Language) -> String {
    format!("the {language} tests")
}

/// A language's suite on `revision`: the package's other tests (each proving test runs on
/// its own first; a project's lint over every test file would judge the Prover's style).
async fn suite(
    view: &ReviewView<'_>,
    revision: &str,
    language: Language,
    trace: &mut Trace,
) -> Result<RunRequest, StepError> {
    crate::core::suite::suite_request(view, revision, language, trace).await
}

/// The step: every finding's evidence again on the patched copy, then the suites.
pub async fn run_proof(s: &ReviewStep<'_>, lease: &Lease) -> Result<Outcome, StepError> {
    let view = s.view;
    let attempt: Attempt = read_input(lease, "autofix attempt")?;
    let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
    let plan = result_of::<PlanResult>(s.rows, StepName::Plan.as_str()).ok();
    let timeout = run_timeout(plan.as_ref());
    let mut result = Autofix {
        verdict: REJECTED.into(),
        edits: attempt.edits.clone(),
        fixes: Vec::new(),
        open: Vec::new(),
        runs: Vec::new(),
        flaky: Vec::new(),
        diff: attempt.diff.clone(),
    };
    let touches: BTreeSet<Touched> = attempt
        .edits
        .iter()
        .filter_map(|e| touched(&e.path))
        .collect();
    let mut languages = Vec::new();
    for t in touches {
        match t {
            Touched::Runs(l) => languages.push(l),
            Touched::NotRun(what) => result.open.push(format!(
                "the patch touches {what} files, whose tests the sandbox does not run: what it \
                 breaks there cannot be known"
            )),
        }
    }
    let rechecked =
        super::recheck::advisories(&view, s.rows, &attempt.edits, &attempt.proved).await?;
    result.open.extend(rechecked.open);
    result
        .fixes
        .extend(rechecked.closed.iter().map(|(t, _)| t.clone()));
    let requests = requests(&view, &attempt, &languages, timeout, &mut trace).await?;
    let key = runs_key(&[
        view.head,
        &serde_json::to_string(&attempt).unwrap_or_default(),
    ]);
    let done = crate::core::test_runs::run_in_turn(
        s,
        lease,
        ("autofix", &key),
        requests
            .iter()
            .enumerate()
            .map(|(i, (_, r))| (format!("run-{i}"), r.clone()))
            .collect(),
        false,
    )
    .await?;
    let first_suite = requests.len() - languages.len();
    let base = SuitesRun::on_base(
        s,
        lease,
        &key,
        (&languages, first_suite),
        &done,
        timeout,
        &mut trace,
    )
    .await?;
    let again = SuitesRun::again(s, lease, &key, (&requests, first_suite), &done, &base).await?;
    let base_of = |i: usize| base.of(i);
    let again_of = |i: usize| again.of(i);
    let verdicts = Runs {
        names: requests.iter().map(|(n, _)| n.clone()).collect(),
        first_suite,
        timeout,
    };
    verdicts.settle(&mut result, &done, &base_of, &again_of);
    result.runs = done
        .runs
        .iter()
        .map(|r| run_ref("change+autofix", r))
        .chain(base.runs.iter().map(|r| run_ref("base", r)))
        .chain(again.runs.iter().map(|r| run_ref("change+autofix", r)))
        .collect::<Vec<RunRef>>();
    for r in &result.runs {
        trace.push("sandbox_run", serde_json::to_value(r).unwrap_or_default());
    }
    result.verdict = if result.open.is_empty() {
        FIXED
    } else {
        REJECTED
    }
    .into();
    trace.push(
        "autofix",
        json!({"verdict": result.verdict, "fixes": result.fixes, "open": result.open,
               "closed": rechecked.closed}),
    );
    Ok(outcome(trace, to_json(&result)?, Vec::new(), true))
}

/// Suites of the attempt run again: on the base when they failed with the patch (the
/// Fixer's rule: what failed there already is not the patch's doing), or once more with the
/// patch when they failed a test the base passes (a project's flaky test does not reject
/// the attempt; the suite is held to its second run).
struct SuitesRun {
    /// The index of each run's suite among the attempt's runs.
    at: Vec<usize>,
    runs: Vec<RunRecord>,
}

impl SuitesRun {
    async fn on_base(
        s: &ReviewStep<'_>,
        lease: &Lease,
        key: &str,
        (languages, first_suite): (&[Language], usize),
        done: &crate::core::test_runs::RunsDone,
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
                let request = suite(&s.view, s.view.base, *language, trace)
                    .await?
                    .with_timeout(timeout);
                at.push(first_suite + i);
                requests.push((format!("suite-base-{language}"), request));
            }
        }
        Self::in_turn(s, lease, ("autofix-base", key), at, requests).await
    }

    async fn again(
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

    async fn in_turn(
        s: &ReviewStep<'_>,
        lease: &Lease,
        kind: (&str, &str),
        at: Vec<usize>,
        requests: Vec<(String, RunRequest)>,
    ) -> Result<SuitesRun, StepError> {
        let runs = if requests.is_empty() {
            Vec::new()
        } else {
            crate::core::test_runs::run_in_turn(s, lease, kind, requests, false)
                .await?
                .runs
        };
        Ok(SuitesRun { at, runs })
    }

    /// This run of the suite at index `i` of the attempt's runs.
    fn of(&self, i: usize) -> Option<&RunRecord> {
        self.at
            .iter()
            .position(|at| *at == i)
            .and_then(|k| self.runs.get(k))
    }
}

/// The named runs of an attempt and how each is held.
struct Runs {
    names: Vec<String>,
    first_suite: usize,
    timeout: Duration,
}

impl Runs {
    /// Each run that did not hold, named: a test finding's test that did not pass, a suite
    /// that failed beyond what fails on the base, a run killed at `autofix_timeout`, a run
    /// that never happened.
    fn settle<'a>(
        &self,
        result: &mut Autofix,
        done: &crate::core::test_runs::RunsDone,
        base_of: &dyn Fn(usize) -> Option<&'a RunRecord>,
        again_of: &dyn Fn(usize) -> Option<&'a RunRecord>,
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
            let base = base_of(i);
            if base.is_some_and(|b| crate::core::suite::no_other_tests(r, b)) {
                continue;
            }
            // Failed a test the base passes: held to the suite's second run with the patch.
            if let (Some(again), Some(b)) = (again_of(i), base) {
                match crate::core::suite::suite_against_base(again, b) {
                    Ok(_) => {
                        for n in crate::core::suite::new_failures(r, b) {
                            if !result.flaky.contains(&n) {
                                result.flaky.push(n);
                            }
                        }
                    }
                    Err(why) => result.open.push(format!(
                        "{name}: broken by the patch (run {}, and run {} again): {why}",
                        r.run_id, again.run_id
                    )),
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_patched_file_belongs_to_its_language() {
        let t = |p: &str| touched(p);
        assert_eq!(t("calc.py"), Some(Touched::Runs(Language::Python)));
        assert_eq!(
            t("web/package-lock.json"),
            Some(Touched::Runs(Language::Node))
        );
        assert_eq!(t("Cargo.lock"), Some(Touched::Runs(Language::Rust)));
        assert_eq!(t("go.sum"), Some(Touched::Runs(Language::Go)));
        assert_eq!(
            t("requirements-dev.txt"),
            Some(Touched::Runs(Language::Python))
        );
        assert_eq!(t("composer.lock"), Some(Touched::NotRun("PHP")));
        assert_eq!(t("src/app.ts"), Some(Touched::Runs(Language::Node)));
        assert_eq!(t("Dockerfile"), None);
        assert_eq!(t("README.md"), None);
    }

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
        };
        let settled = |again: &RunRecord| {
            let mut result = Autofix {
                verdict: REJECTED.into(),
                edits: Vec::new(),
                fixes: Vec::new(),
                open: Vec::new(),
                runs: Vec::new(),
                flaky: Vec::new(),
                diff: String::new(),
            };
            let base_of = |i: usize| (i == 1).then_some(&base);
            let again_of = |i: usize| (i == 1).then_some(again);
            runs.settle(&mut result, &done, &base_of, &again_of);
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
}
