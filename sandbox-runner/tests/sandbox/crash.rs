//! Must-show 4 (the runner's part): a runner SIGKILLed mid-run leaves a container the
//! next sweep removes; the redelivered job removes the orphan of its own earlier attempt,
//! runs, and its result is recorded once.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use proven_change::testing::TestRepo;
use proven_sandbox::{FileLedger, Language, Outcome, Recorded, RunKey, RunLedger, RunRequest};

use crate::support::{self, container_exists, container_running};

const JOB_COMMAND: &[&str] = &["sh", "-c", "sleep 4; echo job done"];

/// Starts `proven-sandbox run` for a job, waits until the job's container runs, and
/// SIGKILLs the runner.
async fn start_and_kill_runner(
    sandbox: &proven_sandbox::Sandbox,
    repo: &Path,
    commit: &str,
    job: &RunKey,
    ledger: &Path,
    warm: bool,
) -> (String, u32) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_proven-sandbox"))
        .args([
            "run",
            "--lang",
            "python",
            "--rev",
            commit,
            "--job-id",
            job.as_str(),
        ])
        .arg("--repo")
        .arg(repo)
        .arg("--ledger")
        .arg(ledger)
        .arg("--plain")
        .args(warm.then_some("--warm"))
        .arg("--")
        .args(JOB_COMMAND)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start proven-sandbox");
    let pid = child.id().expect("the runner's pid");
    let name = format!("proven-sbx-{}", job.as_str());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !container_running(sandbox, &name).await {
        assert!(
            Instant::now() < deadline,
            "the runner's container never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.start_kill().expect("SIGKILL the runner");
    let status = child.wait().await.expect("reap the runner");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "the runner died of SIGKILL"
    );
    (name, pid)
}

/// The run directories (materialised trees) a runner with this pid left.
fn run_dirs_of(pid: u32) -> usize {
    dirs_of(pid, "run-")
}

/// The directories named `PREFIX…` a runner with this pid left in the work directory.
fn dirs_of(pid: u32, prefix: &str) -> usize {
    let work_dir = proven_sandbox::SandboxConfig::default().work_dir;
    std::fs::read_dir(work_dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.starts_with(prefix) && name.contains(&format!(".{pid}."))
                })
                .count()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_runners_container_is_swept_and_its_job_recorded_once() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = TestRepo::new();
    repo.write("README.md", "a job's tree\n");
    let commit = repo.commit("tree");
    let ledger_dir = tempfile::tempdir().expect("ledger directory");
    let ledger = FileLedger::new(ledger_dir.path());
    let job = RunKey::new(format!("crash-{}", support::unique())).expect("job id");

    // 1. The runner dies mid-run: its container is an orphan, still running, and no
    //    record was made. The next sweep (of any runner) removes it.
    let (orphan, pid) = start_and_kill_runner(
        &sandbox,
        repo.path(),
        &commit,
        &job,
        ledger_dir.path(),
        false,
    )
    .await;
    assert!(
        container_exists(&sandbox, &orphan).await,
        "the orphan is left"
    );
    assert_eq!(run_dirs_of(pid), 1, "and so is its tree");
    assert_eq!(ledger.get(&job).await.expect("ledger"), None);
    let swept = sandbox.sweep().await.expect("sweep");
    assert!(swept >= 1, "the sweep removed the orphan");
    assert!(
        !container_exists(&sandbox, &orphan).await,
        "the orphan is gone"
    );
    assert_eq!(run_dirs_of(pid), 0, "its tree is gone");

    // 2. The same happens again, and this time the queue redelivers the job before any
    //    sweep: the new attempt removes its predecessor's container (same name), runs,
    //    and records. A further delivery finds the record and does not run again.
    let (orphan, _) = start_and_kill_runner(
        &sandbox,
        repo.path(),
        &commit,
        &job,
        ledger_dir.path(),
        false,
    )
    .await;
    assert!(container_exists(&sandbox, &orphan).await);
    let request =
        RunRequest::new(repo.path(), &commit, Language::Python, JOB_COMMAND.to_vec()).as_command();
    let first = sandbox
        .run_job(&job, &request, &ledger)
        .await
        .expect("the redelivered job runs");
    let Recorded::First(record) = first else {
        panic!("the redelivered attempt is the first to record: {first:?}");
    };
    assert_eq!(record.outcome, Outcome::Passed);
    assert_eq!(record.run_id, job.as_str());
    assert!(support::output(&record).contains("job done"));
    assert!(!container_exists(&sandbox, &orphan).await);

    let started = Instant::now();
    let again = sandbox
        .run_job(&job, &request, &ledger)
        .await
        .expect("a duplicate delivery");
    assert_eq!(again, Recorded::Already(record.clone()));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "a recorded job does not run again"
    );
    let files = std::fs::read_dir(ledger_dir.path())
        .expect("ledger")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .count();
    assert_eq!(files, 1, "one record for the job");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_leaves_a_live_runners_container_alone() {
    let sandbox = std::sync::Arc::new(support::sandbox(&[Language::Python], |_| {}).await);
    let repo = TestRepo::new();
    repo.write("README.md", "tree\n");
    let commit = repo.commit("tree");
    let key = RunKey::new(format!("live-{}", support::unique())).expect("key");
    // Long enough that the sweep surely runs while it lives, even on a loaded machine.
    let request = RunRequest::new(repo.path(), &commit, Language::Python, ["sleep", "8"])
        .as_command()
        .with_key(key.clone());
    let running = {
        let sandbox = sandbox.clone();
        tokio::spawn(async move { sandbox.run(&request).await })
    };
    let name = format!("proven-sbx-{}", key.as_str());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !container_running(&sandbox, &name).await {
        assert!(Instant::now() < deadline, "the container never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sandbox.sweep().await.expect("sweep");
    assert!(
        container_exists(&sandbox, &name).await,
        "a live run's container is kept"
    );
    let record = running.await.expect("join").expect("run");
    assert_eq!(record.outcome, Outcome::Passed, "the run was not disturbed");
    assert!(!container_exists(&sandbox, &name).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_runners_warm_container_is_swept_with_its_tree() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = TestRepo::new();
    repo.write("README.md", "a job's tree\n");
    let commit = repo.commit("tree");
    let ledger_dir = tempfile::tempdir().expect("ledger directory");
    let job = RunKey::new(format!("crash-warm-{}", support::unique())).expect("job id");
    // The runner warms a container, its run takes it (renamed after the job), and the
    // runner dies mid-run: the container and the pool directory holding the tree are left.
    let (orphan, pid) = start_and_kill_runner(
        &sandbox,
        repo.path(),
        &commit,
        &job,
        ledger_dir.path(),
        true,
    )
    .await;
    assert!(
        container_exists(&sandbox, &orphan).await,
        "the orphan is left"
    );
    assert_eq!(dirs_of(pid, "pool-"), 1, "and so is its tree");
    let swept = sandbox.sweep().await.expect("sweep");
    assert!(swept >= 1, "the sweep removed the orphan");
    assert!(
        !container_exists(&sandbox, &orphan).await,
        "the orphan is gone"
    );
    assert_eq!(dirs_of(pid, "pool-"), 0, "its tree is gone");
    assert_eq!(run_dirs_of(pid), 0);
}
