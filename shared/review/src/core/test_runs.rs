//! The test runner as the steps use it: run requests built from a proving job, runs in
//! turn in the sandbox under keys derived from the step's job key, with the one cassette
//! path of sample mode (recorded, or replayed), and runs as the report shows them.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use proven_models::{Cassette, CassetteMode};
use proven_pipeline::{Lease, StepError};
use proven_report::{PatchEdit, RunRef, TestRef};
use proven_sandbox::{Edit, Language, RunKey, RunRecord, RunRequest, SandboxError, Selection};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::core::step::ReviewStep;
use crate::core::wire::{ProveJob, ReviewView};

pub(crate) const MAX_FILE_BYTES: u64 = 32 * 1024;

pub(crate) const TEST_TIMEOUT: Duration = Duration::from_secs(300);

/// The cassette key of sandbox runs: what ran, where.
pub(crate) fn runs_key(parts: &[&str]) -> String {
    let mut d = Sha256::new();
    for p in parts {
        d.update(p.as_bytes());
        d.update([0]);
    }
    hex::encode(d.finalize())
}

fn replaying(cassette: Option<&Arc<Cassette>>) -> bool {
    cassette.is_some_and(|c| c.mode() == CassetteMode::Replay)
}

pub(crate) fn language_of(path: &str) -> Option<Language> {
    let ext = Path::new(path).extension()?.to_str()?;
    match ext {
        "py" => Some(Language::Python),
        "rs" => Some(Language::Rust),
        "js" | "mjs" | "cjs" => Some(Language::Node),
        "go" => Some(Language::Go),
        _ => None,
    }
}

/// The tests a proving file selects: the names a model gave, each checked against the file's
/// own declarations (Go: every test the file declares when none is named); the Rust member
/// the file belongs to. The command is built from it by the sandbox's conventions.
pub(crate) fn selection_for(
    language: Language,
    test_path: &str,
    source: &str,
    names: &[String],
    package: Option<String>,
) -> Result<Selection, String> {
    use proven_sandbox::language::{declared_tests, declares_test};
    const MAX_NAMES: usize = 20;
    if names.len() > MAX_NAMES {
        return Err(format!("more than {MAX_NAMES} test names"));
    }
    for name in names {
        if name.len() > 200 || !declares_test(language, source, name) {
            return Err(format!("test {name:?} is not a test {test_path} declares"));
        }
    }
    let mut names: Vec<String> = names.to_vec();
    if language == Language::Go && names.is_empty() {
        names = declared_tests(language, source);
        if names.is_empty() {
            return Err(format!(
                "{test_path} declares no Go test (func TestX(t *testing.T))"
            ));
        }
    }
    Ok(Selection {
        path: test_path.to_string(),
        names,
        package,
    })
}

/// The Rust workspace member an integration test file belongs to (`crates/x/tests/a.rs`:
/// the package named in `crates/x/Cargo.toml` at the change), `None` for the root package.
pub(crate) fn rust_member(
    repo: &proven_change::Repo,
    head: &str,
    test_path: &str,
) -> Result<Option<String>, String> {
    let Some((dir, _)) = test_path.rsplit_once("tests/") else {
        return Err(format!("{test_path} is not under a tests/ directory"));
    };
    let dir = dir.trim_end_matches('/');
    let manifest = if dir.is_empty() {
        "Cargo.toml".to_string()
    } else {
        format!("{dir}/Cargo.toml")
    };
    let text = match repo
        .read_blob(head, manifest.as_bytes(), MAX_FILE_BYTES)
        .map_err(|e| e.to_string())?
    {
        proven_change::BlobRead::Content(b) => String::from_utf8_lossy(&b).into_owned(),
        _ => return Err(format!("{manifest} is not a readable file of the change")),
    };
    let value: toml::Table = text
        .parse()
        .map_err(|e| format!("{manifest} does not parse: {e}"))?;
    let name = value
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_string);
    match (dir.is_empty(), name) {
        (_, None) => Err(format!(
            "{manifest} names no package (a virtual workspace has no tests of its own)"
        )),
        (true, Some(_)) => Ok(None),
        (false, Some(name)) => Ok(Some(name)),
    }
}

/// A dependency a run's environment could not prepare, as its runs show it.
fn not_prepared_line(what: &str, source: &str, reason: &str) -> String {
    format!("not prepared: {what} ({source}): {reason}")
}

/// The dependencies `runs`' environments could not prepare, in the words their runs show,
/// each once (the Judge names them in what the review could not see).
pub(crate) fn not_prepared<'a>(runs: impl IntoIterator<Item = &'a RunRecord>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in runs
        .into_iter()
        .flat_map(|r| r.dependencies.iter())
        .flat_map(|d| d.not_prepared.iter())
        .map(|n| not_prepared_line(&n.what, &n.source, &n.reason))
    {
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

pub(crate) fn run_ref(side: &str, r: &RunRecord) -> RunRef {
    RunRef {
        run_id: r.run_id.clone(),
        tests: r.tests.map(|t| proven_report::RunTests {
            passed: t.passed,
            failed: t.failed,
            skipped: t.skipped,
            errors: t.errors,
        }),
        environment: r
            .tree
            .missing
            .iter()
            .map(|path| format!("not in the object store, left out of the tree: {path}"))
            .chain(
                r.interpreter
                    .iter()
                    .map(|i| format!("{} {} ({}): {}", r.language, i.version, i.image, i.because)),
            )
            .chain(
                (!r.test_tools.is_empty())
                    .then(|| format!("test tools: {}", r.test_tools.join(", "))),
            )
            .chain(r.setup.iter().cloned())
            .chain(r.dependencies.iter().flat_map(|d| {
                d.not_prepared
                    .iter()
                    .map(|n| not_prepared_line(&n.what, &n.source, &n.reason))
                    .chain(d.notes.iter().cloned())
            }))
            .collect(),
        side: side.into(),
        commit: r.tree.commit.clone(),
        image: r.image.clone(),
        image_id: r.image_id.clone(),
        command: r.command.clone(),
        exit_code: r.exit_code,
        // As evidence: a record whose counts do not bear its outcome out says so.
        outcome: match &proven_sandbox::proof::evidence_outcome(r) {
            proven_sandbox::Outcome::Passed => "passed".into(),
            proven_sandbox::Outcome::TestFailed => "test_failed".into(),
            proven_sandbox::Outcome::EnvironmentError { reason } => {
                format!("environment_error: {reason}")
            }
        },
        duration_ms: r.duration_ms,
        output_tail: {
            let t = if r.output.tail.is_empty() {
                &r.output.head
            } else {
                &r.output.tail
            };
            t.chars()
                .rev()
                .take(2000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect()
        },
        output_sha256: r.output.sha256.clone(),
    }
}

impl ReviewView<'_> {
    /// A sandbox run of this review: on `revision` of its repository, for its tenant, its
    /// dependencies prepared as of the review's one instant (so base, change and patched
    /// runs share one environment).
    pub fn run_request(
        &self,
        revision: &str,
        language: proven_sandbox::Language,
        command: Vec<String>,
    ) -> proven_sandbox::RunRequest {
        let request =
            proven_sandbox::RunRequest::new(self.repository_dir, revision, language, command)
                .for_tenant(self.tenant)
                .for_repository(self.repository);
        match self
            .resolve_before
            .and_then(|at| time::OffsetDateTime::from_unix_timestamp(at).ok())
        {
            Some(at) => request.resolved_as_of(at),
            None => request,
        }
    }
}

pub(crate) fn requests(
    view: &ReviewView<'_>,
    job: &ProveJob,
    test: &TestRef,
) -> Result<(RunRequest, RunRequest), StepError> {
    let language = job.language;
    let mut base = view
        .run_request(view.base, language, job.command.clone())
        .with_file(test.path.clone(), test.code.clone().into_bytes())
        .with_timeout(TEST_TIMEOUT);
    for (name, value) in &job.env {
        base = base.with_env(name.clone(), value.clone());
    }
    let change = base.clone().at_revision(view.head);
    Ok((base, change))
}

/// A proved patch's edits as the sandbox applies them.
pub(crate) fn patch(edits: &[PatchEdit]) -> Vec<Edit> {
    edits
        .iter()
        .map(|e| Edit {
            path: e.path.clone(),
            old_text: e.old_text.clone(),
            new_text: e.new_text.clone(),
        })
        .collect()
}

/// A sandbox error as a step error: retried shortly when the sandbox says it may pass.
pub(crate) fn sandbox_error(e: SandboxError) -> StepError {
    if e.is_retryable() {
        StepError::Retryable {
            message: format!("sandbox: {e}"),
            after: Duration::from_secs(5),
        }
    } else {
        StepError::Permanent(format!("sandbox: {e}"))
    }
}

/// The one cassette path of sandbox runs: replaying sample mode, what was recorded under
/// `(kind, key)` (`run` is not started); otherwise `run`'s runs, recorded when a cassette is
/// on.
pub(crate) async fn recorded<T: Serialize + DeserializeOwned>(
    cassette: Option<&Arc<Cassette>>,
    (kind, key): (&str, &str),
    run: impl Future<Output = Result<T, StepError>>,
) -> Result<T, StepError> {
    if replaying(cassette) {
        return cassette
            .and_then(|c| c.get("runs", kind, key))
            .and_then(|v| serde_json::from_value(v).ok())
            .ok_or_else(|| {
                StepError::Permanent(format!(
                    "sample mode: the cassette has no {kind} runs ({key})"
                ))
            });
    }
    let done = run.await?;
    if let Some(c) = cassette {
        let _ = c.put(
            "runs",
            kind,
            key,
            &serde_json::to_value(&done).unwrap_or_default(),
        );
    }
    Ok(done)
}

pub(crate) fn no_sandbox() -> StepError {
    StepError::Permanent("sandbox: no Docker engine in this process: tests cannot run".into())
}

/// A reproduction's runs as a cassette keeps them.
#[derive(Serialize, Deserialize)]
pub(crate) struct RecordedRuns {
    pub base: Vec<RunRecord>,
    pub change: Vec<RunRecord>,
}

/// What a sequence of sandbox runs gave (recorded and replayed in sample mode).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct RunsDone {
    pub runs: Vec<RunRecord>,
    /// The tree refused a request (a patch that does not apply): the runs stopped there.
    pub refused: Option<String>,
}

/// Runs `requests` in turn in the sandbox, each under a key derived from the step's job key
/// and its name, or replays them from the cassette under `(kind, key)` in sample mode. A
/// request the tree refuses ends the runs with its reason; with `stop_at_failure` so does
/// the first run that does not pass.
pub(crate) async fn run_in_turn(
    step: &ReviewStep<'_>,
    lease: &Lease,
    (kind, cassette_key): (&str, &str),
    requests: Vec<(String, RunRequest)>,
    stop_at_failure: bool,
) -> Result<RunsDone, StepError> {
    recorded(step.cassette(), (kind, cassette_key), async {
        let sandbox = step.sandbox().ok_or_else(no_sandbox)?;
        let key = RunKey::new(job_key(lease)).map_err(|e| StepError::Permanent(e.to_string()))?;
        let mut done = RunsDone::default();
        for (name, request) in requests {
            let run_key = key
                .derive(&name)
                .map_err(|e| StepError::Permanent(e.to_string()))?;
            match sandbox.run(&request.with_key(run_key)).await {
                Ok(record) => {
                    let passed = record.outcome == proven_sandbox::Outcome::Passed;
                    done.runs.push(record);
                    if stop_at_failure && !passed {
                        break;
                    }
                }
                Err(proven_sandbox::SandboxError::Request(e)) => {
                    done.refused = Some(e.to_string());
                    break;
                }
                Err(e) => return Err(sandbox_error(e)),
            }
        }
        Ok(done)
    })
    .await
}

/// One request run twice under `name` (`name-1`, `name-2`): a pass or a failure that holds
/// twice is not chance.
pub(crate) fn twice(name: &str, request: RunRequest) -> [(String, RunRequest); 2] {
    [
        (format!("{name}-1"), request.clone()),
        (format!("{name}-2"), request),
    ]
}

/// Whether a run passed as evidence: the runner says tests ran and every test that ran
/// passed (a runner told to collect nothing also exits 0).
pub(crate) fn passed(record: &RunRecord) -> bool {
    proven_sandbox::proof::evidence_outcome(record) == proven_sandbox::Outcome::Passed
}

/// The job key of a step: stable across redeliveries, and a valid container name.
pub fn job_key(lease: &Lease) -> String {
    let raw = format!("{}-{}-{}", lease.id.review_id, lease.id.step, lease.id.key);
    let mut key: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    key.truncate(100);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_names_missing_files_its_interpreter_test_tools_and_setup_in_its_environment() {
        let record: RunRecord = serde_json::from_value(serde_json::json!({
            "run_id": "r", "container": "c", "language": "python", "image": "i",
            "image_id": "sha256:0",
            "tree": {"repository": "/r", "revision": "HEAD", "commit": "0", "patch_sha256": null,
                     "added_files": [], "left_out": [], "missing": ["data/huge.bin"]},
            "setup": ["no go.mod: run in GOPATH mode"],
            "interpreter": {"version": "3.8", "image": "proven-sandbox-python3.8:local",
                            "because": "the newest Python the project names (tox.ini envlist)"},
            "test_tools": ["Python 3.8.18", "pytest 4.6.11"],
            "dependencies": null, "command": ["pytest"],
            "limits": {"memory_bytes": 1, "pids": 1, "cpus": 1.0, "scratch_bytes": 1,
                       "timeout_ms": 1, "output_kill_after_bytes": 1},
            "started_at": "", "duration_ms": 1, "exit_code": 0,
            "timed_out": false, "killed": null, "pids_limit_reached": false,
            "tests": {"passed": 1, "failed": 0, "skipped": 0, "errors": 0},
            "failing": [],
            "output": {"head": "", "tail": "", "bytes": 0, "sha256": "", "truncated": false},
            "outcome": {"kind": "passed"},
        }))
        .expect("a run record");
        assert_eq!(
            run_ref("base", &record).environment,
            vec![
                "not in the object store, left out of the tree: data/huge.bin".to_string(),
                "python 3.8 (proven-sandbox-python3.8:local): the newest Python the project names (tox.ini envlist)".to_string(),
                "test tools: Python 3.8.18, pytest 4.6.11".to_string(),
                "no go.mod: run in GOPATH mode".to_string()
            ]
        );
    }

    #[test]
    fn what_a_run_could_not_prepare_is_typed_apart_from_its_environment_lines() {
        let with = |deps: serde_json::Value| -> RunRecord {
            let mut record = serde_json::json!({
                "run_id": "r", "container": "c", "language": "python", "image": "i",
                "image_id": "sha256:0",
                "tree": {"repository": "/r", "revision": "HEAD", "commit": "0",
                         "patch_sha256": null, "added_files": [], "left_out": [], "missing": []},
                "setup": ["not prepared: looks like one, but is a setup line"],
                "dependencies": deps, "command": ["pytest"],
                "limits": {"memory_bytes": 1, "pids": 1, "cpus": 1.0, "scratch_bytes": 1,
                           "timeout_ms": 1, "output_kill_after_bytes": 1},
                "started_at": "", "duration_ms": 1, "exit_code": 0,
                "timed_out": false, "killed": null, "pids_limit_reached": false,
                "tests": null, "failing": [],
                "output": {"head": "", "tail": "", "bytes": 0, "sha256": "", "truncated": false},
                "outcome": {"kind": "passed"},
            });
            record["test_tools"] = serde_json::json!([]);
            serde_json::from_value(record).expect("a run record")
        };
        let lacking = serde_json::json!({"lock_files": [], "key": "k", "prepared_now": true,
            "not_prepared": [{"what": "foo==2", "source": "requirements.txt:1",
                              "reason": "no matching distribution"}],
            "notes": ["resolved, not pinned"]});
        let runs = [
            with(lacking.clone()),
            with(lacking),
            with(serde_json::Value::Null),
        ];
        let line = "not prepared: foo==2 (requirements.txt:1): no matching distribution";
        // Each once across the runs, and only what the preparation lacked: neither a note
        // nor a setup line that reads like one.
        assert_eq!(not_prepared(&runs), [line]);
        assert!(
            run_ref("base", &runs[0])
                .environment
                .contains(&line.to_string())
        );
    }

    #[test]
    fn a_rust_test_belongs_to_the_workspace_member_of_its_directory() {
        let repo = proven_change::testing::TestRepo::new();
        repo.write("Cargo.toml", "[workspace]\nmembers = [\"crates/core\"]\n")
            .write(
                "crates/core/Cargo.toml",
                "[package]\nname = \"demo-core\"\nversion = \"0.1.0\"\n",
            );
        let head = repo.commit("a workspace");
        let r = proven_change::Repo::open(repo.path()).expect("open");
        assert_eq!(
            rust_member(&r, &head, "crates/core/tests/proven.rs"),
            Ok(Some("demo-core".to_string()))
        );
        assert!(
            rust_member(&r, &head, "tests/proven.rs").is_err(),
            "a virtual workspace has no tests of its own"
        );
        assert!(rust_member(&r, &head, "crates/none/tests/x.rs").is_err());
        let single = proven_change::testing::TestRepo::new();
        single.write(
            "Cargo.toml",
            "[package]\nname = \"one\"\nversion = \"0.1.0\"\n",
        );
        let head = single.commit("a crate");
        let r = proven_change::Repo::open(single.path()).expect("open");
        assert_eq!(rust_member(&r, &head, "tests/proven.rs"), Ok(None));
    }

    #[test]
    fn selections_name_only_tests_the_file_declares() {
        let py = "def test_a():\n    pass\n";
        assert!(
            selection_for(
                Language::Python,
                "tests/test_x.py",
                py,
                &["test_a".into()],
                None
            )
            .is_ok()
        );
        assert!(
            selection_for(
                Language::Python,
                "tests/test_x.py",
                py,
                &["test_b".into()],
                None
            )
            .is_err()
        );
        let go = "package m\n\nfunc TestA(t *testing.T) {}\n";
        let s = selection_for(Language::Go, "m/a_test.go", go, &[], None).expect("go");
        assert_eq!(s.names, ["TestA"], "Go: the file's own tests, by name");
        assert!(selection_for(Language::Go, "m/a_test.go", "package m\n", &[], None).is_err());
    }

    #[test]
    fn the_language_of_a_path() {
        assert_eq!(language_of("cmd/server/main.go"), Some(Language::Go));
        assert_eq!(language_of("lib/a.mjs"), Some(Language::Node));
        assert_eq!(language_of("README.md"), None);
    }
}
