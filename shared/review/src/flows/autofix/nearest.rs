//! An attempt's suite that ran past `autofix_timeout` gives way to the test files of the
//! base that import what the patch edits ([`crate::core::nearest`]), as the Fixer's proof
//! does past `suite_timeout`: a popular project's whole suite on the sandbox's one CPU
//! (keras's, sqlalchemy's) would otherwise reject every attempt there by its size alone.
//! Only when every finding's own test passed with the patch: a patch that fails its own
//! test is rejected for that, whatever its suites do.

use std::time::Duration;

use proven_pipeline::{Lease, StepError};
use proven_sandbox::{Edit, Language, RunRecord, RunRequest};

use crate::core::nearest::{files_request, nearest_run};
use crate::core::step::ReviewStep;
use crate::core::suite::suite_request;
use crate::core::test_runs::{RunsDone, passed};
use crate::core::trace::Trace;

/// A suite of the attempt that ran in part: the test files nearest the patch ran in its
/// place.
pub(super) struct NarrowedSuite {
    /// Its index among the attempt's runs.
    pub(super) at: usize,
    /// The test files that ran (the base's).
    pub(super) files: Vec<String>,
    /// What every format says of it.
    pub(super) words: String,
    /// The whole suite's run, killed at `autofix_timeout`: kept among the attempt's runs.
    pub(super) killed: RunRecord,
}

/// Every suite of the attempt killed at `timeout` after each finding's own test passed with
/// the patch gives way to the test files nearest the patch: its request and run in
/// `requests` and `done` are theirs from here on (held to the base and run again as the
/// whole suite would have been). A suite with no such file, or whose runner names no files,
/// stays as it was: killed, and the attempt rejected for it.
pub(super) async fn narrow(
    s: &ReviewStep<'_>,
    lease: &Lease,
    key: &str,
    (patch, paths, timeout): (&[Edit], &[String], Duration),
    (languages, first_suite): (&[Language], usize),
    requests: &mut [(String, RunRequest)],
    done: &mut RunsDone,
) -> Result<Vec<NarrowedSuite>, StepError> {
    let mut out = Vec::new();
    let own_tests_passed =
        done.runs.len() >= first_suite && done.runs.iter().take(first_suite).all(passed);
    if done.refused.is_some() || !own_tests_passed {
        return Ok(out);
    }
    for (k, language) in languages.iter().enumerate() {
        let at = first_suite + k;
        if !done.runs.get(at).is_some_and(|r| r.timed_out) {
            continue;
        }
        let nearest = (
            &s.view,
            *language,
            paths.to_vec(),
            (patch.to_vec(), timeout),
        );
        let run_key = format!("{key}-{at}");
        let Some(n) = nearest_run(s, lease, nearest, ("autofix-nearest", &run_key)).await? else {
            continue;
        };
        let words = format!(
            "{}: {}",
            requests[at].0,
            n.words("autofix_timeout", timeout)
        );
        requests[at].1 = n.request;
        let killed = std::mem::replace(&mut done.runs[at], n.run);
        out.push(NarrowedSuite {
            at,
            files: n.nearest.files,
            words,
            killed,
        });
    }
    Ok(out)
}

/// The request a suite of the attempt runs on the base: the same test files where the
/// suite was narrowed (none where the base's suite cannot name them), else the whole suite.
pub(super) async fn base_request(
    s: &ReviewStep<'_>,
    (language, at): (Language, usize),
    narrowed: &[NarrowedSuite],
    trace: &mut Trace,
) -> Result<Option<RunRequest>, StepError> {
    match narrowed.iter().find(|n| n.at == at) {
        Some(n) => files_request(&s.view, s.view.base, language, &n.files).await,
        None => Ok(Some(
            suite_request(&s.view, s.view.base, language, trace).await?,
        )),
    }
}
