//! The sandbox-runner pool consuming sandbox jobs from the queue (Docker, real images).

use std::time::{Duration, Instant};

use bollard::query_parameters::InspectContainerOptions;
use proven_change::testing::TestRepo;
use proven_review::control::sandbox_job::{JobFile, SandboxJob, job_key};
use proven_store::{NewPipelineReview, StepId};

use crate::service::Service;

async fn docker() -> bollard::Docker {
    let docker = bollard::Docker::connect_with_unix_defaults().expect(
        "Docker is needed for this test (scripts/test installs docker.io and starts dockerd)",
    );
    docker.negotiate_version().await.expect("Docker answers")
}

async fn exists(docker: &bollard::Docker, name: &str) -> Option<bool> {
    docker
        .inspect_container(name, None::<InspectContainerOptions>)
        .await
        .ok()
        .map(|c| c.state.and_then(|s| s.running).unwrap_or(false))
}

/// A sandbox job (a Python test sleeping `sleep` seconds) started as its review's only
/// step: its store, step, the lease it is keyed by and its container's name.
async fn start_job(
    service: &Service,
    repo: &TestRepo,
    sleep: u32,
) -> (String, StepId, proven_store::Lease, String) {
    repo.write("app.py", "def answer():\n    return 42\n");
    let rev = repo.commit("base");
    let job = SandboxJob {
        resolve_before: None,
        tenant: None,
        scope: None,
        whole_suite: false,
        repository: repo.path().display().to_string(),
        revision: rev,
        language: "python".into(),
        command: ["python3", "-m", "pytest", "-q", "tests/test_slow.py"]
            .into_iter()
            .map(String::from)
            .collect(),
        add_files: vec![JobFile {
            path: "tests/test_slow.py".into(),
            contents: format!(
                "import time\nfrom app import answer\n\ndef test_slow():\n    time.sleep({sleep})\n    assert answer() == 42\n"
            ),
        }],
        patch: Vec::new(),
        timeout_secs: Some(120),
        plain: false,
        then: None,
    };
    let store = &service.store.store;
    let review_id = uuid::Uuid::now_v7().to_string();
    // Started, not submitted: the service's admission loop must not take it for an intake.
    store
        .start_review(
            &NewPipelineReview {
                id: review_id.clone(),
                tenant_id: None,
                repository: repo.path().display().to_string(),
                base_rev: "HEAD".into(),
                head_rev: "HEAD".into(),
                priority: 0,
                batch_id: None,
                pr_key: None,
                request: "{}".into(),
                deadline_us: None,
                trace_id: None,
            },
            &job.step("t1").expect("job"),
        )
        .await
        .expect("start");
    let step = StepId {
        review_id: review_id.clone(),
        step: "sandbox.run".into(),
        key: "t1".into(),
    };
    let lease_like = proven_store::Lease {
        id: step.clone(),
        queue: "sandbox".into(),
        generation: 0,
        attempt: 0,
        owner: String::new(),
        input: None,
        pipeline: false,
    };
    let container = proven_sandbox::container::container_name(&job_key(&lease_like));
    (review_id, step, lease_like, container)
}

/// Waits (up to 180 s) until the step is done; returns it.
async fn until_done(
    store: &proven_store::Store,
    review_id: &str,
    step: &StepId,
) -> proven_store::StepRow {
    let started = Instant::now();
    loop {
        let steps = store.steps_of(review_id).await.expect("steps");
        if let Some(s) = steps.iter().find(|s| s.id == *step && s.state == "done") {
            return s.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "the job was not done: {steps:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The sandbox containers whose runner is the process `pid`.
async fn containers_of(docker: &bollard::Docker, pid: u32) -> Vec<String> {
    let filters = std::collections::HashMap::from([(
        "label".to_string(),
        vec![format!("{}=1", proven_sandbox::container::LABEL)],
    )]);
    docker
        .list_containers(Some(bollard::query_parameters::ListContainersOptions {
            all: true,
            filters: Some(filters),
            ..Default::default()
        }))
        .await
        .expect("list containers")
        .into_iter()
        .filter(|c| {
            c.labels
                .as_ref()
                .and_then(|l| l.get(proven_sandbox::container::LABEL_RUNNER))
                .and_then(|r| r.split(':').nth(2))
                .is_some_and(|p| p == pid.to_string())
        })
        .filter_map(|c| c.names.and_then(|n| n.into_iter().next()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_sigkilled_mid_run_is_redelivered_swept_and_recorded_once() {
    let mut service = Service::start(0).await;
    service.start_worker_serving(&["--steps", "sandbox"], &[]);
    let repo = TestRepo::new();
    let store = &service.store.store.clone();
    let (review_id, step, lease_like, container) = start_job(&service, &repo, 8).await;

    // Wait for the runner to start the container, then SIGKILL the runner mid-run.
    let docker = docker().await;
    let started = Instant::now();
    while exists(&docker, &container).await != Some(true) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the runner never started {container}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut runner = service.workers.remove(0);
    let _ = runner.0.kill();
    let _ = runner.0.wait();
    assert!(
        exists(&docker, &container).await.is_some(),
        "the killed runner's container is left behind"
    );

    // A fresh runner: the job comes back (lease expiry, reconciler), the orphan goes.
    service.start_worker_serving(&["--steps", "sandbox"], &[]);
    let done = until_done(store, &review_id, &step).await;
    assert_eq!(
        done.attempts, 2,
        "run once by the killed runner, once by the next"
    );
    let record: serde_json::Value =
        serde_json::from_str(done.result.as_deref().expect("record")).expect("json");
    assert_eq!(record["outcome"]["kind"], "passed", "{record:#}");
    assert!(
        record["output"]["sha256"]
            .as_str()
            .is_some_and(|d| d.len() == 64)
    );
    let stored = store
        .sandbox_record(&job_key(&lease_like))
        .await
        .expect("ledger")
        .expect("recorded");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&stored).expect("json"),
        record,
        "recorded once: the step's record is the ledger's"
    );
    assert_eq!(
        exists(&docker, &container).await,
        None,
        "no container is left"
    );
    // A redelivery of the finished job runs nothing and records nothing new.
    assert_eq!(
        store
            .claim(&step, "late", 60_000_000, 3)
            .await
            .expect("claim"),
        proven_store::Claim::Finished
    );
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_warms_its_pool_runs_a_job_in_it_and_leaves_nothing_when_stopped() {
    let mut service = Service::start(0).await;
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let metrics_addr = format!("127.0.0.1:{metrics_port}");
    service.start_worker_serving(
        &["--steps", "sandbox"],
        &[
            ("PROVEN_SANDBOX_POOL_SIZE", "1"),
            ("PROVEN_SANDBOX_POOL_LANGUAGES", "python"),
            ("PROVEN_METRICS_LISTEN", metrics_addr.as_str()),
        ],
    );
    let pid = service.workers[0].0.id();
    let docker = docker().await;
    let metric = |name: &'static str| {
        let url = format!("http://{metrics_addr}/metrics");
        async move {
            let text = match crate::service::http().get(&url).send().await {
                Ok(r) => r.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            text.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.rsplit(' ').next())
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        }
    };
    // The runner warms a Python container when it starts.
    let started = Instant::now();
    while metric("proven_sandbox_pool_ready").await < 1.0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the runner warmed no container"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(containers_of(&docker, pid).await.len(), 1);
    let repo = TestRepo::new();
    let store = &service.store.store.clone();
    let (review_id, step, _, container) = start_job(&service, &repo, 0).await;
    let done = until_done(store, &review_id, &step).await;
    let record: serde_json::Value =
        serde_json::from_str(done.result.as_deref().expect("record")).expect("json");
    assert_eq!(record["outcome"]["kind"], "passed", "{record:#}");
    assert_eq!(record["pooled"], true, "the job ran in a warm container");
    assert_eq!(
        record["container"],
        container.as_str(),
        "named after its job"
    );
    // Used once, then removed (in the background, right after the run).
    let started = Instant::now();
    while exists(&docker, &container).await.is_some() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the warm container {container} was not removed after its run"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        metric("proven_sandbox_pool_takes_total{result=\"warm\"}").await,
        1.0
    );
    // The pool refills behind the run; a stopping runner removes what it keeps.
    let started = Instant::now();
    while metric("proven_sandbox_pool_ready").await < 1.0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the pool did not refill"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("send SIGTERM");
    assert!(status.success());
    let mut worker = service.workers.remove(0);
    let started = Instant::now();
    while worker.0.try_wait().expect("wait").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the runner did not stop on SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        containers_of(&docker, pid).await,
        Vec::<String>::new(),
        "a stopped runner leaves no container"
    );
    service.stop().await;
}

/// `proven sandbox images` and `proven sandbox run` as a user types them: a file added to
/// the tree, a shell command, a patch applied first; the exit code says the outcome.
#[test]
fn proven_sandbox_run_adds_files_applies_patches_and_says_the_outcome() {
    let proven = || std::process::Command::new(env!("CARGO_BIN_EXE_proven"));
    let images = proven()
        .args(["sandbox", "images", "python"])
        .output()
        .expect("run proven sandbox images");
    assert!(images.status.success(), "{images:?}");

    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.commit("a bug");
    let dir = tempfile::tempdir().expect("tempdir");
    let test = dir.path().join("test_add.py");
    std::fs::write(
        &test,
        "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    )
    .expect("write test");
    let run = |extra: &[&str]| {
        let out = proven()
            .args(["sandbox", "run", "--repo"])
            .arg(repo.path())
            .args(["--rev", "HEAD", "--lang", "python", "--add-file"])
            .arg(format!("{}=tests/test_add.py", test.display()))
            .args(["--cmd", "python3 -m pytest -q tests/test_add.py"])
            .args(extra)
            .output()
            .expect("run proven sandbox run");
        let record: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("a run record: {e}: {out:?}"));
        (out.status.code(), record)
    };
    let (code, record) = run(&[]);
    assert_eq!(code, Some(1), "a failing test: {record:#}");
    assert_eq!(record["outcome"]["kind"], "test_failed");
    assert_eq!(
        record["command"],
        serde_json::json!(["sh", "-c", "python3 -m pytest -q tests/test_add.py"])
    );
    let patch = dir.path().join("fix.json");
    std::fs::write(
        &patch,
        r#"[{"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}]"#,
    )
    .expect("write patch");
    let (code, record) = run(&["--patch", &patch.display().to_string()]);
    assert_eq!(code, Some(0), "the patched tree passes: {record:#}");
    assert_eq!(record["outcome"]["kind"], "passed");

    let bad = proven()
        .args([
            "sandbox",
            "run",
            "--lang",
            "python",
            "--add-file",
            "no-equals-sign",
            "--cmd",
            "true",
        ])
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("--add-file \"no-equals-sign\": expected FILE=DEST"),
        "{bad:?}"
    );
}

/// `proven` under another file name (a release asset `proven-x86_64-linux`, a copy beside a
/// benchmark) still carries the forwarder its preparations reach the registries through:
/// a project with a registry dependency is prepared and its test runs (before, the copy
/// said "no forwarder is configured" and every preparation failed).
#[test]
fn a_renamed_proven_binary_still_prepares_dependencies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let renamed = dir.path().join("proven-x86_64-linux");
    std::fs::copy(env!("CARGO_BIN_EXE_proven"), &renamed).expect("copy proven");
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"timeouts","version":"1.0.0","private":true,"dependencies":{"ms":"2.1.3"}}
"#,
    )
    .write(
        "test/ms.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst ms = require('ms');\ntest('two seconds', () => assert.strictEqual(ms('2s'), 2000));\n",
    );
    repo.commit("a project with a registry dependency");
    let out = std::process::Command::new(&renamed)
        .args(["sandbox", "run", "--repo"])
        .arg(repo.path())
        .args(["--rev", "HEAD", "--lang", "node", "--"])
        .args(["node", "--test", "test/ms.test.js"])
        .output()
        .expect("run the renamed proven");
    let record: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("a run record: {e}: {out:?}"));
    assert_eq!(record["outcome"]["kind"], "passed", "{record:#}");
}

/// `proven sandbox run --after-setup` runs the command after what the tree's documented
/// suite runs before its runner, as a review runs a selected test: here the `pretest`
/// that writes the fixture the test reads (bower's Gruntfile makes git repositories so);
/// without the flag the fixture is not there.
#[test]
fn proven_sandbox_run_after_setup_runs_the_suites_setup_first() {
    let proven = || std::process::Command::new(env!("CARGO_BIN_EXE_proven"));
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"fixtures","version":"1.0.0","private":true,"scripts":{"pretest":"node make-fixture.js","test":"node --test test/"}}
"#,
    )
    .write(
        "make-fixture.js",
        "require('fs').mkdirSync('test/assets', {recursive: true});\nrequire('fs').writeFileSync('test/assets/a.txt', 'made');\n",
    )
    .write(
        "test/fixture.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst fs = require('node:fs');\ntest('reads the fixture', () => assert.strictEqual(fs.readFileSync('test/assets/a.txt', 'utf8'), 'made'));\n",
    );
    repo.commit("a test that reads what pretest makes");
    let run = |extra: &[&str]| {
        let out = proven()
            .args(["sandbox", "run", "--repo"])
            .arg(repo.path())
            .args(["--rev", "HEAD", "--lang", "node"])
            .args(extra)
            .args(["--", "node", "--test", "test/fixture.test.js"])
            .output()
            .expect("run proven sandbox run");
        let record: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("a run record: {e}: {out:?}"));
        record
    };
    let record = run(&[]);
    assert_eq!(record["outcome"]["kind"], "test_failed", "{record:#}");
    let record = run(&["--after-setup"]);
    assert_eq!(record["outcome"]["kind"], "passed", "{record:#}");
}
