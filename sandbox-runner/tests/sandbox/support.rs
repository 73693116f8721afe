//! Shared by the sandbox tests: a connected sandbox (failing loudly when Docker is not
//! there), the images (built when missing), and the repositories the tests build.

use std::time::Duration;

use bollard::query_parameters::{InspectContainerOptions, RemoveContainerOptions};
use proven_change::testing::TestRepo;
use proven_sandbox::{Language, RunRecord, Sandbox, SandboxConfig};

/// A sandbox with the default configuration changed by `tweak`, with `languages`' images
/// present. Panics naming what to install when Docker does not answer: these tests run
/// against a real engine in CI and must never pass without one.
pub async fn sandbox(languages: &[Language], tweak: impl FnOnce(&mut SandboxConfig)) -> Sandbox {
    let mut config = SandboxConfig {
        default_timeout: Duration::from_secs(120),
        // The preparation container's way to the registries: this crate's own binary.
        forwarder: Some(proven_sandbox::Forwarder {
            path: env!("CARGO_BIN_EXE_proven-sandbox").into(),
            args: vec!["forward".into()],
        }),
        // No warm pool unless a test asks for one (and drains it): a refill after a test's
        // last run would outlive the test's process.
        pool_size: 0,
        ..SandboxConfig::default()
    };
    tweak(&mut config);
    let sandbox = match Sandbox::connect(config).await {
        Ok(sandbox) => sandbox,
        Err(e) => panic!(
            "the sandbox tests need a Docker engine: {e}\n(run scripts/docker.sh, or scripts/test which calls it)"
        ),
    };
    for language in languages {
        let image = sandbox.config().image(*language);
        if sandbox.docker().inspect_image(&image).await.is_err() {
            eprintln!("building the missing image {image}");
            if let Err(e) = proven_sandbox::images::build_local(&[*language]).await {
                panic!("the {language} sandbox image could not be built: {e}");
            }
        }
    }
    sandbox
}

/// Asserts that the run's container is gone: removed by the run itself, or, for a warm
/// container, by the pool right after the run (in the background: the record does not wait
/// for the kill), within seconds.
pub async fn assert_container_gone(sandbox: &Sandbox, record: &RunRecord) {
    let deadline = std::time::Instant::now()
        + if record.pooled {
            Duration::from_secs(20)
        } else {
            Duration::ZERO
        };
    loop {
        let exists = container_exists(sandbox, &record.container).await;
        if !exists {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "container {} was left behind",
            record.container
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Drains the sandbox's warm pool and asserts that none of its runner's containers is left
/// (warm, refilling or run).
pub async fn assert_no_container_left(sandbox: &Sandbox) {
    sandbox.drain_pool().await;
    let filters = std::collections::HashMap::from([(
        "label".to_string(),
        vec![format!(
            "{}={}",
            proven_sandbox::container::LABEL_RUNNER,
            sandbox.runner_label()
        )],
    )]);
    let left = sandbox
        .docker()
        .list_containers(Some(bollard::query_parameters::ListContainersOptions {
            all: true,
            filters: Some(filters),
            ..Default::default()
        }))
        .await
        .expect("list containers");
    let names: Vec<String> = left.into_iter().filter_map(|c| c.names).flatten().collect();
    assert!(names.is_empty(), "containers left behind: {names:?}");
}

pub async fn container_exists(sandbox: &Sandbox, name: &str) -> bool {
    sandbox
        .docker()
        .inspect_container(name, None::<InspectContainerOptions>)
        .await
        .is_ok()
}

pub async fn container_running(sandbox: &Sandbox, name: &str) -> bool {
    sandbox
        .docker()
        .inspect_container(name, None::<InspectContainerOptions>)
        .await
        .ok()
        .and_then(|c| c.state)
        .and_then(|s| s.running)
        .unwrap_or(false)
}

/// Removes a container a test created outside the sandbox (a control run).
pub async fn remove_container(sandbox: &Sandbox, name: &str) {
    let _ = sandbox
        .docker()
        .remove_container(
            name,
            Some(RemoveContainerOptions {
                force: true,
                ..Default::default()
            }),
        )
        .await;
}

/// The whole output of a run that was not truncated.
pub fn output(record: &RunRecord) -> String {
    format!("{}{}", record.output.head, record.output.tail)
}

/// A unique suffix for names (containers, job ids).
pub fn unique() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}

/// A Python project whose change breaks `clamp`.
pub struct PythonProject {
    pub repo: TestRepo,
    pub base: String,
    pub change: String,
}

pub const PYTHON_CLAMP_OK: &str = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n";
pub const PYTHON_CLAMP_BUG: &str = "def clamp(x, lo, hi):\n    return min(lo, max(x, hi))\n";

pub fn python_project() -> PythonProject {
    let repo = TestRepo::new();
    repo.write("calc.py", PYTHON_CLAMP_OK)
        .write("README.md", "clamp\n");
    let base = repo.commit("base");
    repo.write("calc.py", PYTHON_CLAMP_BUG);
    let change = repo.commit("change: clamp rewritten");
    PythonProject { repo, base, change }
}

pub fn pytest(file: &str) -> Vec<String> {
    ["python3", "-m", "pytest", "-q", file]
        .into_iter()
        .map(String::from)
        .collect()
}

/// A static file server on loopback (Python's http.server): a stand-in registry a
/// preparation reaches through the egress proxy, when the test allows its port.
pub struct FileServer {
    child: std::process::Child,
    pub port: u16,
}

impl FileServer {
    pub fn start(dir: &std::path::Path) -> FileServer {
        use std::io::BufRead;
        let mut child = std::process::Command::new("python3")
            .args([
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python3 serves the test's registry");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = std::io::BufReader::new(stdout).lines();
        let port = lines
            .next()
            .and_then(|l| l.ok())
            .and_then(|l| {
                l.split(" port ")
                    .nth(1)
                    .and_then(|p| p.split_whitespace().next())
                    .and_then(|p| p.parse().ok())
            })
            .expect("http.server printed its port");
        std::thread::spawn(move || for _ in lines {});
        FileServer { child, port }
    }

    /// An allow-list naming this server `name` (port 80): a name, because some clients
    /// (Go's) never send loopback addresses through a proxy.
    pub fn allow_as(&self, name: &str) -> proven_sandbox::deps::proxy::AllowList {
        proven_sandbox::deps::proxy::AllowList::parse(&[format!("{name}=127.0.0.1:{}", self.port)])
            .expect("allow-list")
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
