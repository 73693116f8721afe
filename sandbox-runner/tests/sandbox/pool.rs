//! The warm pool: a run takes a container started before it, with the hardening and limits
//! of a cold one, exactly once; the pool refills in the background; an empty pool means a
//! cold start; base, change and patched trees never share a container; a drained pool
//! leaves nothing behind. (The containment cases run against pooled containers in
//! `containment.rs`; a dead runner's pooled container is swept in `crash.rs`.)

use std::time::{Duration, Instant};

use proven_change::testing::TestRepo;
use proven_sandbox::{Edit, Language, Outcome, Proof, RunRecord, RunRequest, Sandbox};

use crate::support::{self, assert_container_gone, assert_no_container_left, pytest};

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

async fn pooled_sandbox(size: usize) -> Sandbox {
    support::sandbox(&[Language::Python], |config| config.pool_size = size).await
}

/// Waits (up to 60 s) until the pool has `n` warm containers.
async fn until_warm(sandbox: &Sandbox, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while sandbox.warm() < n {
        assert!(
            Instant::now() < deadline,
            "the pool never refilled to {n} (has {})",
            sandbox.warm()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The containers of this sandbox's runner, with their ids.
async fn containers(sandbox: &Sandbox) -> Vec<(String, String)> {
    let filters = std::collections::HashMap::from([(
        "label".to_string(),
        vec![format!(
            "{}={}",
            proven_sandbox::container::LABEL_RUNNER,
            sandbox.runner_label()
        )],
    )]);
    sandbox
        .docker()
        .list_containers(Some(bollard::query_parameters::ListContainersOptions {
            all: true,
            filters: Some(filters),
            ..Default::default()
        }))
        .await
        .expect("list containers")
        .into_iter()
        .map(|c| {
            (
                c.id.unwrap_or_default(),
                c.names
                    .and_then(|n| n.into_iter().next())
                    .unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_container_is_hardened_as_a_cold_one() {
    let sandbox = pooled_sandbox(1).await;
    assert_eq!(sandbox.prewarm(Language::Python).await.expect("prewarm"), 1);
    let warm = containers(&sandbox).await;
    assert_eq!(warm.len(), 1, "{warm:?}");
    let inspected = sandbox
        .docker()
        .inspect_container(&warm[0].0, None)
        .await
        .expect("inspect the warm container");
    let host = inspected.host_config.expect("host config");
    let limits = sandbox.config().limits;
    assert_eq!(host.network_mode.as_deref(), Some("none"));
    assert_eq!(host.readonly_rootfs, Some(true));
    assert_eq!(host.cap_drop, Some(vec!["ALL".to_string()]));
    assert_eq!(
        host.security_opt,
        Some(vec!["no-new-privileges".to_string()])
    );
    assert_eq!(host.pids_limit, Some(limits.pids));
    assert_eq!(host.memory, Some(limits.memory_bytes));
    assert_eq!(host.memory_swap, Some(limits.memory_bytes));
    assert_eq!(host.nano_cpus, Some((limits.cpus * 1e9) as i64));
    let config = inspected.config.expect("config");
    assert_eq!(config.user.as_deref(), Some("10001:10001"));
    assert_eq!(config.network_disabled, Some(true));
    // Idle: no tree yet, and nothing of the runner's environment.
    let env = config.env.unwrap_or_default();
    assert!(
        env.iter().all(|v| !v.starts_with("PROVEN_")),
        "the runner's settings stay out: {env:?}"
    );
    assert_no_container_left(&sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_run_takes_its_own_container_once_and_the_pool_refills() {
    let sandbox = pooled_sandbox(1).await;
    let repo = TestRepo::new();
    repo.write("README.md", "a tree\n");
    let commit = repo.commit("tree");
    let request = |script: &str| {
        RunRequest::new(repo.path(), &commit, Language::Python, sh(script)).as_command()
    };

    // An empty pool: the first run starts cold, and the pool fills behind it.
    let cold = sandbox
        .run(&request("echo cold"))
        .await
        .expect("a cold run");
    assert!(!cold.pooled, "nothing was warm yet");
    assert_eq!(cold.outcome, Outcome::Passed);
    until_warm(&sandbox, 1).await;
    let before = containers(&sandbox).await;
    assert_eq!(before.len(), 1);

    // A warm run leaves a file in /tmp, in /work and next to the tree.
    let first = sandbox
        .run(&request(
            "cat README.md; echo left > /tmp/left; echo left > /work/left",
        ))
        .await
        .expect("a warm run");
    assert!(first.pooled, "{first:#?}");
    assert_eq!(first.outcome, Outcome::Passed);
    assert!(support::output(&first).starts_with("a tree\n"));
    assert_container_gone(&sandbox, &first).await;
    assert!(
        !containers(&sandbox)
            .await
            .iter()
            .any(|(id, _)| *id == before[0].0),
        "the container it took is gone"
    );

    // The pool refilled in the background; the next run takes the new container and
    // sees nothing of the first.
    until_warm(&sandbox, 1).await;
    let after = containers(&sandbox).await;
    assert_eq!(after.len(), 1);
    assert_ne!(after[0].0, before[0].0, "a fresh container");
    let second = sandbox
        .run(&request(
            "ls /tmp/left /work/left 2>&1 | sed 's/^/seen: /'; test ! -e /tmp/left && test ! -e /work/left && echo clean",
        ))
        .await
        .expect("a second warm run");
    assert!(second.pooled);
    let out = support::output(&second);
    assert!(out.trim_end().ends_with("clean"), "{out}");
    assert_no_container_left(&sandbox).await;
}

const TEST_CLAMP: &str = "from calc import clamp\n\ndef test_clamp_keeps_a_value_inside_the_range():\n    assert clamp(5, 0, 10) == 5\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn base_change_and_patched_trees_never_share_a_container() {
    let sandbox = pooled_sandbox(2).await;
    assert_eq!(sandbox.prewarm(Language::Python).await.expect("prewarm"), 2);
    let project = support::python_project();
    let base = RunRequest::new(
        project.repo.path(),
        &project.base,
        Language::Python,
        pytest("tests/test_clamp.py"),
    )
    .with_file("tests/test_clamp.py", TEST_CLAMP);
    let change = base.at_revision(&project.change);
    let reproduction = sandbox.reproduce(&base, &change).await.expect("runs");
    assert_eq!(reproduction.proof, Proof::Reproduced, "{reproduction:#?}");
    let records: Vec<&RunRecord> = reproduction
        .base
        .iter()
        .chain(&reproduction.change)
        .collect();
    assert!(
        records.iter().filter(|r| r.pooled).count() >= 2,
        "the pool served runs: {:?}",
        records.iter().map(|r| r.pooled).collect::<Vec<_>>()
    );
    let mut names: Vec<&str> = records.iter().map(|r| r.container.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 4, "four runs, four containers");
    for record in &records {
        assert_container_gone(&sandbox, record).await;
    }
    let patched = change.clone().with_patch(vec![Edit {
        path: "calc.py".into(),
        old_text: "min(lo, max(x, hi))".into(),
        new_text: "max(lo, min(x, hi))".into(),
    }]);
    until_warm(&sandbox, 1).await;
    let record = sandbox.run(&patched).await.expect("the patched run");
    assert!(record.pooled);
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    assert!(!names.contains(&record.container.as_str()));
    assert_no_container_left(&sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_another_image_does_not_take_a_warm_container() {
    let sandbox = support::sandbox(&[Language::Python, Language::Node], |config| {
        config.pool_size = 1
    })
    .await;
    assert_eq!(sandbox.prewarm(Language::Python).await.expect("prewarm"), 1);
    let repo = TestRepo::new();
    repo.write("README.md", "a tree\n");
    let commit = repo.commit("tree");
    let record = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                &commit,
                Language::Node,
                sh("node -e 'console.log(process.version)'"),
            )
            .as_command(),
        )
        .await
        .expect("a node run");
    assert!(!record.pooled, "the warm container is Python's");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    assert_no_container_left(&sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_longer_than_a_warm_containers_deadline_starts_cold() {
    let sandbox = pooled_sandbox(1).await;
    assert_eq!(sandbox.prewarm(Language::Python).await.expect("prewarm"), 1);
    let repo = TestRepo::new();
    repo.write("README.md", "a tree\n");
    let commit = repo.commit("tree");
    // A warm container's sweep deadline covers the longest timeout it was made for; a run
    // allowed longer gets a container of its own, whose deadline covers it.
    let long = sandbox.config().max_run_timeout() + Duration::from_secs(60);
    let record = sandbox
        .run(
            &RunRequest::new(repo.path(), &commit, Language::Python, sh("true"))
                .with_timeout(long)
                .as_command(),
        )
        .await
        .expect("a long run");
    assert!(!record.pooled);
    assert_eq!(sandbox.warm(), 1, "the warm container is still there");
    assert_no_container_left(&sandbox).await;
}
