//! The package's whole test suite: the run of it on a tree (the command its project
//! documents), and how a suite that fails with a patch compares with the same suite on the
//! base (a patch is held to what it breaks, by the runner's own names).

use std::path::Path;

use proven_pipeline::StepError;
use proven_sandbox::suite::{DocumentedSuite, PythonRunner};
use proven_sandbox::{Language, Outcome, RunRecord, RunRequest, Selection, TestRun};
use serde_json::json;

use crate::core::outcome::blocking;
use crate::core::test_runs::MAX_FILE_BYTES;
use crate::core::wire::ReviewView;

/// The suite a tree's project documents at `revision` (tox, nox, make, npm), translated to
/// the runner it wraps; the sandbox's convention when it documents none.
pub(crate) async fn documented(
    view: &ReviewView<'_>,
    revision: &str,
    language: Language,
) -> Result<DocumentedSuite, StepError> {
    let (dir, rev) = (view.repository_dir.to_string(), revision.to_string());
    blocking(move || {
        let repo = proven_change::Repo::open(Path::new(&dir)).ok();
        let read = |path: &str| -> Option<String> {
            if path.ends_with('/') {
                let names = repo.as_ref()?.list_dir(&rev, path).ok()?;
                return Some(names.join("\n"));
            }
            match repo
                .as_ref()?
                .read_blob(&rev, path.as_bytes(), MAX_FILE_BYTES)
                .ok()?
            {
                proven_change::BlobRead::Content(b) => String::from_utf8(b).ok(),
                _ => None,
            }
        };
        proven_sandbox::suite::documented_suite(language, &read)
    })
    .await
}

/// The run of a Prover's test within the project's documented suite: its runner script,
/// options and variables (tox's `setenv`), where that suite runs pytest, which runs the
/// pytest-style test the Prover writes; the sandbox's pytest command otherwise (a unittest
/// runner would find no test in a plain test function), after the suite's setup.
pub(crate) fn proving_run(
    suite: &DocumentedSuite,
    language: Language,
    selection: &Selection,
) -> TestRun {
    match &suite.selector {
        Some(selector) if selector.runner == PythonRunner::Pytest => {
            suite.select(language, selection, 0)
        }
        // After what the suite runs before its runner (a build, fixtures).
        Some(_) => suite.after_setup(language.test_run(selection, 0)),
        // The language's own command, built as the suite builds (a Rust suite's features).
        None => suite.select(language, selection, 0),
    }
}

/// The run of the package's whole test suite on a tree: the command its project documents
/// (tox, nox, make, npm), translated to the runner it wraps; the sandbox's convention when
/// it documents none. The trace says which.
pub(crate) async fn suite_request(
    view: &ReviewView<'_>,
    revision: &str,
    language: Language,
    trace: &mut crate::core::trace::Trace,
) -> Result<RunRequest, StepError> {
    let suite = documented(view, revision, language).await?;
    trace.push(
        "suite",
        json!({"command": suite.run.command, "from": suite.source}),
    );
    Ok(whole_suite_request(view, revision, language, suite.run))
}

/// A run of a suite (or of the files standing for it) on `revision`, with its variables and
/// a whole suite's budgets.
pub(crate) fn whole_suite_request(
    view: &ReviewView<'_>,
    revision: &str,
    language: Language,
    run: TestRun,
) -> RunRequest {
    let mut request = view
        .run_request(revision, language, run.command)
        .as_whole_suite();
    for (k, v) in run.env {
        request = request.with_env(k, v);
    }
    request
}

/// How a package's suite that did not pass on a patched tree compares with the same suite
/// on the base. A suite often fails before any change (a test that needs what the sandbox
/// has not, a release of a dependency that broke it): a patch is held only to what it
/// breaks, and only Proven's runs decide it, by name:
/// - `Ok(pre_existing)`: every test that failed or errored with the patch failed or errored
///   on the base too, at least as many tests passed as on the base (and some did), and no
///   more were skipped;
/// - `Err(why)`: a test failed with the patch that did not on the base (named), fewer
///   passed or more were skipped, or a run is not comparable: killed, timed out, no counts,
///   no test ran, an environment error no failing test explains, or failures not known by name (a runner that names none, fewer names than
///   failures and errors). Never held then.
pub(crate) fn suite_against_base(
    patched: &RunRecord,
    base: &RunRecord,
) -> Result<Vec<String>, String> {
    let comparable = |r: &RunRecord| {
        r.killed.is_none()
            && !r.timed_out
            && r.tests.is_some_and(|t| t.ran() > 0)
            && r.failing_named().is_some()
            // A run that is no test result is comparable only when the runner named what
            // went wrong (nose's ERROR lines): an exit no failing test explains (a part of
            // the suite that could not start, a full disk) hides what did not run.
            && (!matches!(r.outcome, Outcome::EnvironmentError { .. })
                || r.tests.is_some_and(|t| t.failed + t.errors > 0))
    };
    if !comparable(patched) {
        return Err(
            "with the patch the package's tests gave no result to compare with the base's (none ran, a kill, an exit no failing test explains, or failures not named)"
                .into(),
        );
    }
    if !comparable(base) {
        return Err("on the base the package's tests gave no result to compare with".into());
    }
    let (Some(with_patch), Some(_)) = (patched.failing_named(), base.failing_named()) else {
        return Err("the failing tests are not known by name".into());
    };
    let new = new_failures(patched, base);
    if !new.is_empty() {
        let shown: Vec<&str> = new.iter().take(5).map(|n| n.as_str()).collect();
        let more = new.len().saturating_sub(shown.len());
        return Err(format!(
            "{} test(s) fail with the patch that pass on the base: {}{}",
            new.len(),
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    let counts = |r: &RunRecord| r.tests.unwrap_or_default();
    let (p, b) = (counts(patched), counts(base));
    if p.passed == 0 || p.passed < b.passed {
        return Err(format!(
            "with the patch {} test(s) pass, on the base {}",
            p.passed, b.passed
        ));
    }
    if p.skipped > b.skipped {
        return Err(format!(
            "with the patch {} test(s) are skipped, on the base {}",
            p.skipped, b.skipped
        ));
    }
    Ok(with_patch.to_vec())
}

/// The tests failing by name in a suite run with a patch that do not fail on the base
/// (none when either side names no failure).
pub(crate) fn new_failures(patched: &RunRecord, base: &RunRecord) -> Vec<String> {
    match (patched.failing_named(), base.failing_named()) {
        (Some(with_patch), Some(on_base)) => with_patch
            .iter()
            .filter(|n| !on_base.contains(n))
            .cloned()
            .collect(),
        _ => Vec::new(),
    }
}

/// How long the package's suite may run when it proves a fix: the plan's `suite_timeout`
/// (a plan of an older version has none: the sandbox's test timeout).
pub(crate) fn suite_timeout(plan: Option<&crate::core::wire::PlanResult>) -> std::time::Duration {
    plan.and_then(|p| p.suite_timeout_secs).map_or(
        crate::core::test_runs::TEST_TIMEOUT,
        std::time::Duration::from_secs,
    )
}

/// A run of the package's suite that ran no test and was not cut short: a package whose
/// only test is the Prover's (left out of the suite, DESIGN: "the package's other tests"),
/// or a suite that stops before its tests on a tree.
pub(crate) fn ran_no_test(r: &RunRecord) -> bool {
    // A run whose set-up failed or whose disk filled never reached its tests: it did not
    // happen, and says nothing of whether the package has others.
    let said = |words: &str| r.output.head.contains(words) || r.output.tail.contains(words);
    r.killed.is_none()
        && !r.timed_out
        && r.tests.is_none_or(|t| t.ran() == 0)
        && !said(proven_sandbox::record::ENTRY_FAILED)
        && !said("No space left on device")
        && !said("ENOSPC")
}

/// The package has no other test that runs here: its suite ran none with the patch and none
/// on the base, and both stopped alike (one exit code). A patch that stops a suite the base
/// runs is never this; a suite that cannot start on either side hides nothing the patch did.
pub(crate) fn no_other_tests(patched: &RunRecord, base: &RunRecord) -> bool {
    ran_no_test(patched) && ran_no_test(base) && patched.exit_code == base.exit_code
}

/// Whether a suite that did not pass with a patch is worth running on the base: it names
/// its failures (held to them), or it ran no test (the package may have no other). A suite
/// cut short (past its timeout, or killed) proves nothing whatever the base does, so the
/// base's suite, as long again, is not run for it.
pub(crate) fn compare_with_base(patched: &RunRecord) -> bool {
    let cut_short = patched.timed_out || patched.killed.is_some();
    !cut_short && (patched.failing_named().is_some() || ran_no_test(patched))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// "No other test" is said only of suites that ran and found none on both sides: a run
    /// whose set-up failed or whose disk filled did not happen, on either side.
    #[test]
    fn a_suite_that_never_reached_its_tests_is_not_a_package_without_tests() {
        let record = |tail: &str| -> RunRecord {
            let mut r = suite("environment_error", 0, 0, 0, &[]);
            r.tests = None;
            r.exit_code = Some(5);
            r.output.tail = tail.into();
            r
        };
        let none = record("no tests ran in 0.01s");
        assert!(no_other_tests(&none, &none));
        for failed in [
            "proven-entry: cannot set the run up: copying the tree into /work failed",
            "OSError: [Errno 28] No space left on device",
        ] {
            assert!(!no_other_tests(&record(failed), &none), "{failed}");
            assert!(!no_other_tests(&none, &record(failed)), "{failed}");
        }
    }

    /// A Prover's test runs within the project's suite where that suite runs pytest (luigi's
    /// `coverage run test/runtests.py`, with tox's variables), and by the sandbox's pytest
    /// where it runs unittest (a plain test function is no unittest test).
    #[test]
    fn a_provers_test_runs_within_a_suite_that_runs_pytest() {
        let files = |tox: &'static str| {
            move |path: &str| match path {
                "tox.ini" => Some(tox.to_string()),
                "test/runtests.py" => {
                    Some("import pytest, sys\nsys.exit(pytest.main(sys.argv[1:]))\n".into())
                }
                _ => None,
            }
        };
        let selection = Selection {
            path: "test/test_claim.py".into(),
            names: vec!["test_claim".into()],
            package: None,
        };
        let suite = proven_sandbox::suite::documented_suite(
            Language::Python,
            &files(
                "[testenv]\nsetenv = CONF={toxinidir}/test/conf.cfg\ncommands = coverage run test/runtests.py {posargs}\n",
            ),
        );
        let run = proving_run(&suite, Language::Python, &selection);
        assert_eq!(
            run.command,
            [
                "python3",
                "test/runtests.py",
                "test/test_claim.py::test_claim"
            ]
        );
        assert!(
            run.env
                .contains(&("CONF".to_string(), "/work/test/conf.cfg".to_string()))
        );
        let suite = proven_sandbox::suite::documented_suite(
            Language::Python,
            &files("[testenv]\ncommands = python -m unittest discover\n"),
        );
        assert_eq!(
            proving_run(&suite, Language::Python, &selection),
            Language::Python.test_run(&selection, 0)
        );
    }

    /// A suite run's record: `outcome` as the sandbox stores it, the runner's counts and
    /// the failing tests it named.
    /// A suite's run record: its outcome, counts and the failing tests it named.
    pub(crate) fn suite(
        outcome: &str,
        passed: u64,
        failed: u64,
        skipped: u64,
        failing: &[&str],
    ) -> RunRecord {
        serde_json::from_value(json!({
            "run_id": "r", "container": "c", "language": "python", "image": "i",
            "image_id": "sha256:0",
            "tree": {"repository": "/r", "revision": "HEAD", "commit": "0", "patch_sha256": null,
                     "added_files": [], "left_out": []},
            "dependencies": null, "command": ["pytest"],
            "limits": {"memory_bytes": 1, "pids": 1, "cpus": 1.0, "scratch_bytes": 1,
                       "timeout_ms": 1, "output_kill_after_bytes": 1},
            "started_at": "", "duration_ms": 1, "exit_code": if failed > 0 { 1 } else { 0 },
            "timed_out": false, "killed": null, "pids_limit_reached": false,
            "tests": {"passed": passed, "failed": failed, "skipped": skipped, "errors": 0},
            "failing": failing,
            "output": {"head": "", "tail": "", "bytes": 0, "sha256": "", "truncated": false},
            "outcome": if outcome == "environment_error" {
                json!({"kind": outcome, "reason": "the build failed"})
            } else {
                json!({"kind": outcome})
            },
        }))
        .expect("a run record")
    }

    /// A suite killed after it had named a failure is not run on the base: nothing the
    /// base says can make a suite that did not finish prove a patch (luigi's suite, past
    /// its 900 s, ran 900 s more on the base).
    #[test]
    fn a_suite_cut_short_is_not_run_again_on_the_base() {
        let finished = suite("test_failed", 3, 1, 0, &["tests/test_a.py::test_one"]);
        assert!(compare_with_base(&finished));
        let mut timed_out = finished.clone();
        timed_out.timed_out = true;
        assert!(!compare_with_base(&timed_out));
        let mut killed = finished;
        killed.killed = Some(proven_sandbox::record::KillReason::OutOfMemory);
        assert!(!compare_with_base(&killed));
    }

    #[test]
    fn a_patched_suite_is_held_only_to_what_it_breaks_by_name() {
        let env = "tests/test_env.py::test_needs_network";
        let base = suite("test_failed", 9, 1, 0, &[env]);
        // The same test fails on both: the patch broke nothing.
        assert_eq!(
            suite_against_base(&suite("test_failed", 10, 1, 0, &[env]), &base),
            Ok(vec![env.to_string()])
        );
        // A test that passes on the base fails with the patch: named, never held.
        let broke = suite_against_base(
            &suite(
                "test_failed",
                9,
                2,
                0,
                &[env, "tests/test_sub.py::test_sub"],
            ),
            &base,
        );
        assert!(
            broke.as_ref().is_err_and(|e| e.contains(
                "1 test(s) fail with the patch that pass on the base: tests/test_sub.py::test_sub"
            )),
            "{broke:?}"
        );
        // Fewer names than failures: not known, never held.
        let unnamed = suite_against_base(&suite("test_failed", 9, 2, 0, &[env]), &base);
        assert!(unnamed.is_err_and(|e| e.contains("failures not named")));
        // A base whose failures are not named cannot vouch for any.
        let anonymous = suite("test_failed", 9, 1, 0, &[]);
        assert!(suite_against_base(&suite("test_failed", 10, 1, 0, &[env]), &anonymous).is_err());
        // Skipping what the base runs is no way around a failure, nor is passing fewer.
        let skips = suite_against_base(&suite("test_failed", 9, 1, 5, &[env]), &base);
        assert!(skips.is_err_and(|e| e.contains("skipped")));
        let fewer = suite_against_base(&suite("test_failed", 5, 1, 0, &[env]), &base);
        assert!(fewer.is_err_and(|e| e.contains("5 test(s) pass, on the base 9")));
        // An error named on both sides (nose's ERROR: lines, exit 1 with no failure) is
        // compared like a failure.
        let mut errored = suite("environment_error", 10, 0, 0, &["test_x (pkg.T)"]);
        errored.tests = errored
            .tests
            .map(|t| proven_sandbox::TestCounts { errors: 1, ..t });
        assert_eq!(
            suite_against_base(&errored, &errored.clone()),
            Ok(vec!["test_x (pkg.T)".to_string()])
        );
        // An exit no failing test explains (debug's karma without a browser after its node
        // tests passed) is no result, though it fails alike on the base.
        let unexplained = suite("environment_error", 16, 0, 0, &[]);
        assert!(suite_against_base(&unexplained, &unexplained.clone()).is_err());
        // A run that is no test result (a build error, a kill) is never compared.
        let env_error = suite("environment_error", 0, 0, 0, &[]);
        assert!(suite_against_base(&env_error, &base).is_err());
        assert!(suite_against_base(&suite("test_failed", 10, 1, 0, &[env]), &env_error).is_err());
    }
}
