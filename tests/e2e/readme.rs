//! The README's "As a service" commands, followed word for word: its first `sh` block is
//! read from README.md when the test runs and given to bash as it stands; the test only
//! sets the environment the block names (Postgres, Redis, the API's address, the models,
//! the change to review) and any setting of docs/configuration.md, as a user would. The
//! block starts the API, a worker of each family and a sandbox worker, reviews a change
//! whose bug a test reproduces, and prints the review: its finding must be reproduced. A
//! README that stops working fails here.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use proven_models::scripted::ScriptedServer;
use proven_store::testing::{Backend, TestStore};

use crate::agents::{CONCEDE, GENERATOR, GUARD, SKEPTIC, buggy_change, script};

/// The first ```sh block under the README's `### As a service` heading.
fn service_block(readme: &str) -> String {
    let section = readme
        .split_once("\n### As a service\n")
        .map(|(_, rest)| rest)
        .expect("README.md has a section '### As a service'");
    let section = section.split("\n### ").next().unwrap_or(section);
    let block = section
        .split_once("\n```sh\n")
        .map(|(_, rest)| rest)
        .expect("the section has a ```sh block");
    block
        .split_once("\n```")
        .map(|(code, _)| code.to_string())
        .expect("the block ends")
}

/// The block's process group: its background `proven serve` and workers outlive the
/// shell, so the group is stopped as a whole (SIGTERM, then SIGKILL), failing test or not.
struct Group(Child);

impl Group {
    fn signal(&self, signal: &str) {
        let _ = Command::new("kill")
            .args([signal, "--", &format!("-{}", self.0.id())])
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.signal("-TERM");
        let started = Instant::now();
        // The group is gone when no process of it is left to signal.
        while started.elapsed() < Duration::from_secs(20)
            && Command::new("kill")
                .args(["-0", "--", &format!("-{}", self.0.id())])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        {
            std::thread::sleep(Duration::from_millis(100));
        }
        self.signal("-KILL");
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readmes_service_commands_start_the_service_and_reproduce_a_bug() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let block = service_block(&readme);
    for started in [
        "proven serve &",
        "proven worker --steps evidence,control &",
        "proven worker --steps model &",
        "proven worker --steps sandbox &",
    ] {
        assert!(
            block.lines().any(|l| l.trim_start().starts_with(started)),
            "the README's service block starts {started:?}:\n{block}"
        );
    }

    let server = ScriptedServer::start().await;
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        CONCEDE(),
    );
    let store = TestStore::new(Backend::Postgres).await;
    let data_dir = tempfile::tempdir().expect("tempdir");
    let (repo, base) = buggy_change();
    let out_path = data_dir.path().join("stdout");
    let err_path = data_dir.path().join("stderr");
    let prefix = format!("proven-test-{}", uuid::Uuid::now_v7().simple());
    // `proven` as a user has it: on the PATH.
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_proven"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("the binary's directory").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut bash = Command::new("bash");
    for (k, _) in std::env::vars() {
        if k.starts_with("PROVEN_") {
            bash.env_remove(k);
        }
    }
    bash.args(["-euo", "pipefail", "-c", &block])
        .current_dir(&root)
        .env("PATH", path)
        // What the block says to set.
        .env("PROVEN_DATABASE_URL", &store.url)
        .env("PROVEN_REDIS_URL", "redis://127.0.0.1:6379")
        .env("PROVEN_LISTEN", format!("127.0.0.1:{}", free_port()))
        .env("REPOSITORY", repo.path())
        .env("BASE", &base)
        .env("HEAD", "HEAD")
        // The models, as "The agents" names them (the scripted server answers every role).
        .env("PROVEN_GENERATOR_BASE_URL", &server.base_url)
        .env("PROVEN_SKEPTIC_BASE_URL", &server.base_url)
        .env("PROVEN_GUARDRAIL_BASE_URL", &server.base_url)
        .env("PROVEN_GENERATOR_MODEL", GENERATOR)
        .env("PROVEN_SKEPTIC_MODEL", SKEPTIC)
        .env("PROVEN_GUARDRAIL_MODEL", GUARD)
        // Settings of docs/configuration.md: this test's own Redis keys and data
        // directory, its repository's root, no fix attempt (not what this test is about),
        // no warm container to outlive it.
        .env("PROVEN_QUEUE_PREFIX", &prefix)
        .env("PROVEN_DATA_DIR", data_dir.path())
        .env("PROVEN_REPO_ROOTS", std::env::temp_dir())
        .env("PROVEN_FIX_ATTEMPTS", "0")
        .env("PROVEN_SANDBOX_POOL_SIZE", "0")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"));
    std::os::unix::process::CommandExt::process_group(&mut bash, 0);
    let mut group = Group(bash.spawn().expect("run bash"));
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let deadline = Duration::from_secs(600);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = group.0.try_wait().expect("wait for bash") {
            break status;
        }
        assert!(
            started.elapsed() < deadline,
            "the README's block still running after {deadline:?}:\n{}\n{}",
            read(&out_path),
            read(&err_path)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let (stdout, stderr) = (read(&out_path), read(&err_path));
    assert!(status.success(), "{status}:\n{stdout}\n{stderr}");
    // The block's last command prints the review (the processes it started may log too).
    let review: serde_json::Value = stdout
        .lines()
        .rev()
        .find_map(|l| {
            serde_json::from_str(l)
                .ok()
                .filter(|v: &serde_json::Value| v["id"].is_string())
        })
        .unwrap_or_else(|| panic!("no review printed:\n{stdout}\n{stderr}"));
    assert_eq!(review["status"], "complete", "{review:#}\n{stderr}");
    let findings = review["result"]["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{review:#}");
    assert_eq!(findings[0]["proof_level"], "reproduced", "{review:#}");
    assert_eq!(findings[0]["location"]["path"], "calc.py", "{review:#}");
    drop(group);
    store.cleanup().await;
    crate::service::delete_keys("redis://127.0.0.1:6379", &prefix).await;
}
