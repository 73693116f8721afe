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
use proven_sandbox::{Language, RunRequest};
use serde_json::json;

use super::attempt::{Attempt, FIXED, REJECTED};
use super::gather::Proved;
use super::held::{HeldTo, Runs, SuitesRun};
use super::nearest::NarrowedSuite;
use crate::core::outcome::{outcome, read_input, to_json};
use crate::core::rows::result_of;
use crate::core::step::ReviewStep;
use crate::core::step_name::StepName;
use crate::core::test_runs::{TEST_TIMEOUT, run_ref, runs_key};
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

/// The languages whose tests the patch's files belong to; each language it touches whose
/// tests the sandbox does not run is added to `open`.
fn languages_touched(attempt: &Attempt, open: &mut Vec<String>) -> Vec<Language> {
    let touches: BTreeSet<Touched> = attempt
        .edits
        .iter()
        .filter_map(|e| touched(&e.path))
        .collect();
    let mut languages = Vec::new();
    for t in touches {
        match t {
            Touched::Runs(l) => languages.push(l),
            Touched::NotRun(what) => open.push(format!(
                "the patch touches {what} files, whose tests the sandbox does not run: what it \
                 breaks there cannot be known"
            )),
        }
    }
    languages
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
        narrowed: Vec::new(),
        diff: attempt.diff.clone(),
    };
    let languages = languages_touched(&attempt, &mut result.open);
    let rechecked =
        super::recheck::advisories(&view, s.rows, &attempt.edits, &attempt.proved).await?;
    result.open.extend(rechecked.open);
    result
        .fixes
        .extend(rechecked.closed.iter().map(|(t, _)| t.clone()));
    let mut requests = requests(&view, &attempt, &languages, timeout, &mut trace).await?;
    let key = runs_key(&[
        view.head,
        &serde_json::to_string(&attempt).unwrap_or_default(),
    ]);
    let mut done = crate::core::test_runs::run_in_turn(
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
    let patch = crate::core::test_runs::patch(&attempt.edits);
    let paths: Vec<String> = attempt.edits.iter().map(|e| e.path.clone()).collect();
    let narrowed = super::nearest::narrow(
        s,
        lease,
        &key,
        (&patch, &paths, timeout),
        (&languages, first_suite),
        &mut requests,
        &mut done,
    )
    .await?;
    result.narrowed = narrowed.iter().map(|n| n.words.clone()).collect();
    let base = SuitesRun::on_base(
        s,
        lease,
        &key,
        (&languages, first_suite),
        (&done, &narrowed),
        timeout,
        &mut trace,
    )
    .await?;
    let again = SuitesRun::again(s, lease, &key, (&requests, first_suite), &done, &base).await?;
    let base_again = SuitesRun::base_again(s, lease, &key, &base, &again).await?;
    let held_to = |i: usize| HeldTo {
        base: base.of(i),
        again: again.of(i),
        base_again: base_again.of(i),
    };
    let verdicts = Runs {
        names: requests.iter().map(|(n, _)| n.clone()).collect(),
        first_suite,
        timeout,
        narrowed: narrowed.iter().map(|n| n.at).collect(),
    };
    verdicts.settle(&mut result, &done, &held_to);
    result.runs = recorded(&done, &narrowed, [&base, &again, &base_again]);
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

/// Every run of the attempt, by side: the whole suites killed at autofix_timeout stay on
/// the record, each before the files that ran in its place.
fn recorded(
    done: &crate::core::test_runs::RunsDone,
    narrowed: &[NarrowedSuite],
    [base, again, base_again]: [&SuitesRun; 3],
) -> Vec<RunRef> {
    let mut patched = Vec::new();
    for (i, r) in done.runs.iter().enumerate() {
        patched.extend(narrowed.iter().filter(|n| n.at == i).map(|n| &n.killed));
        patched.push(r);
    }
    let sides = [
        ("change+autofix", patched),
        ("base", base.runs.iter().collect()),
        ("change+autofix", again.runs.iter().collect()),
        ("base", base_again.runs.iter().collect()),
    ];
    sides
        .into_iter()
        .flat_map(|(side, runs)| runs.into_iter().map(move |r| run_ref(side, r)))
        .collect()
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
}
