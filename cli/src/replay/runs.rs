//! Replaying a defect's evidence runs: each run's tree from its recorded commit, the
//! proving test added as the review added it, the same command under the same timeout, in
//! the sandbox (which prepares the environment as the review's runs did); then the run's
//! image, outcome and exit code against the record.

use std::path::Path;
use std::time::Duration;

use proven_report::{RunRef, TestRef};
use proven_sandbox::{Language, Outcome, RunRequest, Sandbox};
use serde::Serialize;

/// The timeout of a review's proving runs (the review's `TEST_TIMEOUT`).
const TEST_TIMEOUT: Duration = Duration::from_secs(300);

/// One run, run again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunReplay {
    pub run_id: String,
    pub side: String,
    pub commit: String,
    pub holds: bool,
    /// What the run did again (`passed, exit 0`), or why it does not hold.
    pub why: String,
}

/// The class of an outcome as a report writes it: `passed`, `test_failed`,
/// `environment_error` (its reason after a colon left off).
fn class(outcome: &str) -> &str {
    outcome.split(':').next().unwrap_or(outcome).trim()
}

fn outcome_class(o: &Outcome) -> &'static str {
    match o {
        Outcome::Passed => "passed",
        Outcome::TestFailed => "test_failed",
        Outcome::EnvironmentError { .. } => "environment_error",
    }
}

fn code(c: Option<i64>) -> String {
    c.map_or_else(|| "none".into(), |c| c.to_string())
}

/// Runs `run` again on `repo`, with the finding's proving `test`.
pub async fn replay(sandbox: &Sandbox, repo: &Path, test: &TestRef, run: &RunRef) -> RunReplay {
    let verdict = |holds: bool, why: String| RunReplay {
        run_id: run.run_id.clone(),
        side: run.side.clone(),
        commit: run.commit.clone(),
        holds,
        why,
    };
    let Some(language) = language_of(&test.path) else {
        return verdict(
            false,
            format!("could not run: no language for {}", test.path),
        );
    };
    let repository = match proven_change::Repo::open(repo) {
        Ok(r) => r,
        Err(e) => return verdict(false, format!("could not run: {e}")),
    };
    let revision = match repository.resolve(&run.commit) {
        Ok(r) if r.commit == run.commit => r,
        Ok(r) => {
            return verdict(
                false,
                format!(
                    "commit {} names {} in {}, not itself",
                    run.commit,
                    r.commit,
                    repo.display()
                ),
            );
        }
        Err(_) => {
            return verdict(
                false,
                format!("commit {} is not in {}", run.commit, repo.display()),
            );
        }
    };
    let mut request = RunRequest::new(repo, &revision.commit, language, run.command.clone())
        .with_file(test.path.clone(), test.code.clone().into_bytes())
        .with_timeout(TEST_TIMEOUT);
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    if let Some(at) = proven_review::core::review::resolve_before(revision.committed_at, now)
        .and_then(|at| time::OffsetDateTime::from_unix_timestamp(at).ok())
    {
        request = request.resolved_as_of(at);
    }
    let record = match sandbox.run(&request).await {
        Ok(r) => r,
        Err(e) => return verdict(false, format!("could not run: {e}")),
    };
    if !run.image_id.is_empty() && record.image_id != run.image_id {
        return verdict(
            false,
            format!(
                "image digest differs: the run had {} ({}), the record says {}",
                record.image_id, record.image, run.image_id
            ),
        );
    }
    let again = outcome_class(&proven_sandbox::proof::evidence_outcome(&record));
    let did = format!("{again}, exit {}", code(record.exit_code));
    if again != class(&run.outcome) || record.exit_code != run.exit_code {
        return verdict(
            false,
            format!(
                "outcome differs: {did} now, the record says {}, exit {}",
                class(&run.outcome),
                code(run.exit_code)
            ),
        );
    }
    let unchecked = if run.image_id.is_empty() {
        " (the record names no image digest: the image was not checked)"
    } else {
        ""
    };
    verdict(true, format!("{did}{unchecked}"))
}

/// The language of a proving test, by its file's extension (as the Prover's runs chose it).
fn language_of(path: &str) -> Option<Language> {
    match Path::new(path).extension()?.to_str()? {
        "py" => Some(Language::Python),
        "rs" => Some(Language::Rust),
        "js" | "mjs" | "cjs" => Some(Language::Node),
        "go" => Some(Language::Go),
        _ => None,
    }
}
