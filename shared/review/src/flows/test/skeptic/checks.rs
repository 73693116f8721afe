//! Proven's own checks of a refutation from the closed list: `flaky` (reruns of both
//! sides, each with its own seed), `wrong_cause` (the named file restored to the base) and
//! `intended` (the change's own tests that exercise the claim). Only what these runs show
//! moves a verdict.

use std::path::Path;

use proven_pipeline::{Lease, StepError};
use proven_report::RunRef;
use proven_sandbox::language::{declared_tests, is_test_path};
use proven_sandbox::proof::evidence_outcome;
use proven_sandbox::{Edit, Language, RunRecord, RunRequest, Selection};

/// How many more runs per side, with other seeds, a flaky refutation takes.
pub const FLAKY_RERUNS: u64 = 3;
use crate::core::outcome::blocking;
use crate::core::step::ReviewStep;
use crate::core::test_runs::{MAX_FILE_BYTES, TEST_TIMEOUT, language_of, run_ref, runs_key};
use crate::core::wire::{ProveJob, ReviewView};
use crate::flows::test::wire::Refutation;

/// Tests of the change that an `intended` check runs at most.
const MAX_INTENDED_TESTS: usize = 5;

pub(super) fn outcome_of(record: &RunRecord) -> proven_sandbox::Outcome {
    evidence_outcome(record)
}

pub(super) fn ids(runs: &[&RunRecord]) -> String {
    runs.iter()
        .map(|r| r.run_id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A run request of the finding's test on `revision` with the runner's seed `seed`.
pub(super) fn seeded(
    view: &ReviewView<'_>,
    job: &ProveJob,
    revision: &str,
    seed: u64,
) -> Result<RunRequest, StepError> {
    let language = job.language;
    let (command, env) = match &job.selection {
        // The Prover's own command (within the project's suite), with this seed: Python's
        // seeds are variables only.
        Some(_) if language == Language::Python && !job.command.is_empty() => {
            let mut env: Vec<(String, String)> = job
                .env
                .iter()
                .filter(|(k, _)| k != "PROVEN_TEST_SEED" && k != "PYTHONHASHSEED")
                .cloned()
                .collect();
            env.push(("PROVEN_TEST_SEED".into(), seed.to_string()));
            env.push(("PYTHONHASHSEED".into(), seed.to_string()));
            (job.command.clone(), env)
        }
        // Rust's command takes no seed: the Prover's own (built with the suite's features),
        // the seed in its variable.
        Some(_) if language == Language::Rust && !job.command.is_empty() => {
            let mut env: Vec<(String, String)> = job
                .env
                .iter()
                .filter(|(k, _)| k != "PROVEN_TEST_SEED")
                .cloned()
                .collect();
            env.push(("PROVEN_TEST_SEED".into(), seed.to_string()));
            (job.command.clone(), env)
        }
        Some(selection) => {
            let run = language.test_run(selection, seed);
            (run.command, run.env)
        }
        // A job of an older version: its own command, seeded only through the variable.
        None => (
            job.command.clone(),
            vec![("PROVEN_TEST_SEED".to_string(), seed.to_string())],
        ),
    };
    let mut request = view
        .run_request(revision, language, command)
        .with_file(job.test.path.clone(), job.test.code.clone().into_bytes())
        .with_timeout(TEST_TIMEOUT);
    for (k, v) in env {
        request = request.with_env(k, v);
    }
    Ok(request)
}

/// `flaky`: more runs per side, each with another seed; refuted only when a run disagrees
/// with the reproduction (a failure on the base, a pass on the change).
pub(super) async fn flaky(
    s: &ReviewStep<'_>,
    lease: &Lease,
    job: &ProveJob,
) -> Result<Refutation, StepError> {
    let view = &s.view;
    let mut requests = Vec::new();
    for seed in 1..=FLAKY_RERUNS {
        requests.push((
            format!("flaky-base-{seed}"),
            seeded(view, job, view.base, seed)?,
        ));
        requests.push((
            format!("flaky-change-{seed}"),
            seeded(view, job, view.head, seed)?,
        ));
    }
    let key = runs_key(&[
        view.base,
        view.head,
        &job.test.path,
        &job.test.code,
        "flaky",
    ]);
    let done =
        crate::core::test_runs::run_in_turn(s, lease, ("refute", &key), requests, false).await?;
    let sides: Vec<(bool, &RunRecord)> = done
        .runs
        .iter()
        .map(|r| (r.tree.commit == view.base, r))
        .collect();
    let side = |on_base: bool| if on_base { "base" } else { "change" };
    let runs: Vec<RunRef> = sides
        .iter()
        .map(|(on_base, r)| run_ref(side(*on_base), r))
        .collect();
    let disagree: Vec<&RunRecord> = sides
        .iter()
        .filter(|(on_base, r)| {
            let o = outcome_of(r);
            (*on_base && o == proven_sandbox::Outcome::TestFailed)
                || (!*on_base && o == proven_sandbox::Outcome::Passed)
        })
        .map(|(_, r)| *r)
        .collect();
    let incomplete: Vec<&RunRecord> = sides
        .iter()
        .filter(|(_, r)| {
            matches!(
                outcome_of(r),
                proven_sandbox::Outcome::EnvironmentError { .. }
            )
        })
        .map(|(_, r)| *r)
        .collect();
    let wanted = 2 * FLAKY_RERUNS as usize;
    Ok(if !disagree.is_empty() {
        Refutation::shown(
            true,
            format!(
                "flaky: rerun with other seeds, the test disagreed with its reproduction in run(s) {}",
                ids(&disagree)
            ),
            runs,
        )
    } else if sides.len() < wanted || !incomplete.is_empty() {
        Refutation::shown(
            false,
            format!(
                "the reruns could not check it: {} of {wanted} ran to a result{}",
                sides.len() - incomplete.len(),
                done.refused.map(|r| format!(" ({r})")).unwrap_or_default()
            ),
            runs,
        )
    } else {
        Refutation::shown(
            false,
            format!(
                "not flaky: {FLAKY_RERUNS} more runs per side with other seeds all agree with the reproduction"
            ),
            runs,
        )
    })
}

/// `wrong_cause`: the test on the change with `file` restored to its base content; still
/// failing (twice) shows the claim names the wrong cause.
pub(super) async fn wrong_cause(
    s: &ReviewStep<'_>,
    lease: &Lease,
    job: &ProveJob,
    file: &str,
) -> Result<Refutation, StepError> {
    let view = &s.view;
    let restore = match restoring(view, file).await? {
        Ok(edit) => edit,
        Err(why) => return Ok(Refutation::shown(false, why, Vec::new())),
    };
    let restored = seeded(view, job, view.head, 0)?.with_patch(vec![restore]);
    let key = runs_key(&[
        view.base,
        view.head,
        &job.test.path,
        &job.test.code,
        "wrong_cause",
        file,
    ]);
    let requests = crate::core::test_runs::twice("restored", restored).to_vec();
    let done =
        crate::core::test_runs::run_in_turn(s, lease, ("refute", &key), requests, false).await?;
    let side = format!("change with {file} restored to the base");
    let runs: Vec<RunRef> = done.runs.iter().map(|r| run_ref(&side, r)).collect();
    let outcomes: Vec<_> = done.runs.iter().map(outcome_of).collect();
    let all = |o: proven_sandbox::Outcome| outcomes.len() == 2 && outcomes.iter().all(|x| *x == o);
    let all_runs: Vec<&RunRecord> = done.runs.iter().collect();
    Ok(if all(proven_sandbox::Outcome::TestFailed) {
        Refutation::shown(
            true,
            format!(
                "wrong cause: with {file} restored to the base, the test still fails (runs {})",
                ids(&all_runs)
            ),
            runs,
        )
    } else if all(proven_sandbox::Outcome::Passed) {
        Refutation::shown(
            false,
            format!(
                "with {file} restored to the base the test passes (runs {}): {file} is the cause",
                ids(&all_runs)
            ),
            runs,
        )
    } else {
        Refutation::shown(
            false,
            format!(
                "the runs with {file} restored could not check it: {}",
                done.refused.unwrap_or_else(|| format!("{outcomes:?}"))
            ),
            runs,
        )
    })
}

/// The edit that restores `file` to its base content on the change, or why it cannot be
/// restored (a test file, not text, the same on both sides).
async fn restoring(view: &ReviewView<'_>, file: &str) -> Result<Result<Edit, String>, StepError> {
    if is_test_path(file) {
        return Ok(Err(format!(
            "{file} is a test file: restoring it would change the evidence, not the cause"
        )));
    }
    let (dir, base, head, path) = (
        view.repository_dir.to_string(),
        view.base.to_string(),
        view.head.to_string(),
        file.to_string(),
    );
    let sides = blocking(move || {
        let repo = proven_change::Repo::open(Path::new(&dir)).map_err(|e| e.to_string())?;
        let read = |rev: &str| -> Result<Option<String>, String> {
            match repo
                .read_blob(rev, path.as_bytes(), MAX_FILE_BYTES)
                .map_err(|e| e.to_string())?
            {
                proven_change::BlobRead::Content(b) => String::from_utf8(b)
                    .map(Some)
                    .map_err(|_| format!("{path} is not text")),
                _ => Ok(None),
            }
        };
        Ok::<_, String>((read(&base)?, read(&head)?))
    })
    .await?;
    let (base_text, head_text) = match sides {
        Ok(pair) => pair,
        Err(why) => return Ok(Err(format!("{file} could not be read: {why}"))),
    };
    let Some(head_text) = head_text.filter(|t| !t.is_empty()) else {
        return Ok(Err(format!(
            "{file} is not a text file of the change: it cannot be restored"
        )));
    };
    let base_text = base_text.unwrap_or_default();
    if base_text == head_text {
        return Ok(Err(format!("{file} is the same on both sides")));
    }
    Ok(Ok(Edit {
        path: file.to_string(),
        old_text: head_text,
        new_text: base_text,
    }))
}

/// Whether a test file's text reaches the claimed path: it names the claimed file's module
/// (its stem), or the claimed symbol; a Go test in the claimed file's package does.
pub(super) fn exercises(
    language: Language,
    test_path: &str,
    test_text: &str,
    job: &ProveJob,
) -> bool {
    let claimed = Path::new(&job.risk.path);
    if language == Language::Go {
        return Path::new(test_path).parent() == claimed.parent();
    }
    let stem = claimed.file_stem().and_then(|s| s.to_str()).filter(|s| {
        !s.is_empty() && *s != "index" && *s != "__init__" && *s != "mod" && *s != "lib"
    });
    let module = stem.or_else(|| {
        claimed
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|s| s.to_str())
    });
    // An identifier: `pkg.calc` and `from calc import` name `calc`; `calculus` does not.
    let word = |w: &str| {
        let inside = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        test_text.match_indices(w).any(|(at, _)| {
            !inside(test_text[..at].chars().next_back())
                && !inside(test_text[at + w.len()..].chars().next())
        })
    };
    module.is_some_and(word)
        || job
            .risk
            .symbol
            .as_deref()
            .is_some_and(|s| !s.is_empty() && word(s))
}

/// `intended`: the tests the change adds or edits, on the base (with the change's version
/// of the file) and on the change; one that fails on the base, passes on the change and
/// exercises the claimed path shows the behaviour change is deliberate.
pub(super) async fn intended(
    s: &ReviewStep<'_>,
    lease: &Lease,
    job: &ProveJob,
    language: Language,
) -> Result<Refutation, StepError> {
    let view = &s.view;
    let texts = changed_tests(view, job, language).await?;
    let suite = crate::core::suite::documented(view, view.head, language).await?;
    let mut requests = Vec::new();
    let mut checked = Vec::new();
    for (i, (path, text)) in texts.iter().enumerate() {
        if let Some([base, change]) = intended_runs(view, job, language, &suite, path, text) {
            requests.push((format!("intended-{i}-base"), base));
            requests.push((format!("intended-{i}-change"), change));
            checked.push(path.clone());
        }
    }
    if requests.is_empty() {
        return Ok(Refutation::shown(
            false,
            format!(
                "the change adds or edits no {} test that exercises {}",
                language.as_str(),
                job.risk.path
            ),
            Vec::new(),
        ));
    }
    let key = runs_key(&[
        view.base,
        view.head,
        &job.risk.path,
        &checked.join("\n"),
        "intended",
    ]);
    let done =
        crate::core::test_runs::run_in_turn(s, lease, ("refute", &key), requests, false).await?;
    Ok(intended_shown(job, &checked, &done.runs))
}

/// The tests of `language` the change adds or edits (not the Prover's), with their text at
/// the change.
async fn changed_tests(
    view: &ReviewView<'_>,
    job: &ProveJob,
    language: Language,
) -> Result<Vec<(String, String)>, StepError> {
    let candidates: Vec<String> = view
        .changed
        .iter()
        .filter(|p| is_test_path(p) && language_of(p) == Some(language) && **p != job.test.path)
        .take(MAX_INTENDED_TESTS)
        .cloned()
        .collect();
    let (dir, head) = (view.repository_dir.to_string(), view.head.to_string());
    blocking(move || {
        let repo = proven_change::Repo::open(Path::new(&dir)).map_err(|e| e.to_string())?;
        let mut texts = Vec::new();
        for path in candidates {
            if let Ok(proven_change::BlobRead::Content(b)) =
                repo.read_blob(&head, path.as_bytes(), MAX_FILE_BYTES)
                && let Ok(text) = String::from_utf8(b)
            {
                texts.push((path, text));
            }
        }
        Ok::<_, String>(texts)
    })
    .await?
    .map_err(|e| StepError::Permanent(format!("refute: {e}")))
}

/// The runs of one changed test that exercises the claimed path: on the base with the
/// change's version of the test (it may not exist there at all), and on the change.
fn intended_runs(
    view: &ReviewView<'_>,
    job: &ProveJob,
    language: Language,
    suite: &proven_sandbox::suite::DocumentedSuite,
    path: &str,
    text: &str,
) -> Option<[RunRequest; 2]> {
    if !exercises(language, path, text, job) {
        return None;
    }
    let names = if language == Language::Go {
        declared_tests(language, text)
    } else {
        Vec::new()
    };
    if language == Language::Go && names.is_empty() {
        return None;
    }
    let package = match language {
        Language::Rust => job.selection.as_ref().and_then(|s| s.package.clone()),
        _ => None,
    };
    // A test of the project's own, run within its suite as its runner names it.
    let run = suite.select(
        language,
        &Selection {
            path: path.to_string(),
            names,
            package,
        },
        0,
    );
    let request = |revision: &str| {
        let mut r = view
            .run_request(revision, language, run.command.clone())
            .with_timeout(TEST_TIMEOUT);
        for (k, v) in &run.env {
            r = r.with_env(k.clone(), v.clone());
        }
        r
    };
    Some([
        request(view.base).with_file(path.to_string(), text.to_string().into_bytes()),
        request(view.head),
    ])
}

/// What the changed tests' runs (base, change; in pairs) show: intended when one fails on
/// the base and passes on the change.
fn intended_shown(job: &ProveJob, checked: &[String], records: &[RunRecord]) -> Refutation {
    let mut runs = Vec::new();
    let mut shown_by = None;
    for (i, pair) in records.chunks(2).enumerate() {
        let path = checked.get(i).cloned().unwrap_or_default();
        if let [base, change] = pair {
            runs.push(run_ref(&format!("base, {path} of the change"), base));
            runs.push(run_ref(&format!("change, {path}"), change));
            if shown_by.is_none()
                && outcome_of(base) == proven_sandbox::Outcome::TestFailed
                && outcome_of(change) == proven_sandbox::Outcome::Passed
            {
                shown_by = Some((path, base.run_id.clone(), change.run_id.clone()));
            }
        }
    }
    match shown_by {
        Some((test, base_run, change_run)) => Refutation::shown(
            true,
            format!(
                "intended, shown by {test}: the change's own test fails on the base (run {base_run}), passes on the change (run {change_run}) and exercises {}",
                job.risk.path
            ),
            runs,
        ),
        None => Refutation::shown(
            false,
            format!(
                "none of the change's tests ({}) fails on the base and passes on the change",
                checked.join(", ")
            ),
            runs,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_exercises_the_claimed_module_or_symbol() {
        let mut job = crate::core::wire::test_job();
        job.risk.path = "pkg/calc.py".into();
        assert!(exercises(
            Language::Python,
            "tests/test_x.py",
            "from pkg.calc import add",
            &job
        ));
        assert!(exercises(
            Language::Python,
            "tests/test_x.py",
            "import calc\n",
            &job
        ));
        assert!(!exercises(
            Language::Python,
            "tests/test_x.py",
            "import calculus\n",
            &job
        ));
        job.risk.symbol = Some("clamp".into());
        assert!(exercises(
            Language::Python,
            "tests/test_x.py",
            "assert clamp(1) == 1",
            &job
        ));
        job.risk.path = "units/durations.go".into();
        assert!(exercises(Language::Go, "units/x_test.go", "", &job));
        assert!(!exercises(
            Language::Go,
            "other/x_test.go",
            "durations",
            &job
        ));
    }
}
