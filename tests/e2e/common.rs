//! Running the binary against a store of either backend.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use proven_store::testing::{Backend, TestStore};

pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// A store the binary talks to: SQLite under a temporary data directory, or a fresh
/// Postgres database passed through `PROVEN_DATABASE_URL`.
pub struct Env {
    pub store: TestStore,
    pub data_dir: tempfile::TempDir,
    pub backend: Backend,
}

impl Env {
    pub async fn new(backend: Backend) -> Env {
        Env {
            store: TestStore::new(backend).await,
            data_dir: tempfile::tempdir().expect("tempdir"),
            backend,
        }
    }

    pub fn proven(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_proven"));
        // Nothing from the caller's environment decides the outcome.
        for (k, _) in std::env::vars() {
            if k.starts_with("PROVEN_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("NO_COLOR", "1");
        // The tests share one cache of prepared layers (a user's lives in the data
        // directory, which is each test's own).
        cmd.env(
            "PROVEN_SANDBOX_CACHE_DIR",
            std::env::temp_dir().join("proven-sandbox/cache"),
        );
        match self.backend {
            Backend::Sqlite => {
                // The binary opens its own file under the data directory.
                cmd.env("PROVEN_DATA_DIR", self.data_dir.path());
            }
            Backend::Postgres => {
                cmd.env("PROVEN_DATABASE_URL", &self.store.url);
            }
        }
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.proven().args(args).output().expect("run proven")
    }

    /// `proven review` of the repository at `repo` against `base`, with `more` arguments
    /// (`--format json`).
    pub fn review(&self, repo: &std::path::Path, base: &str, more: &[&str]) -> Output {
        let repo = repo.display().to_string();
        let mut args = vec!["review", "--repo", &repo, "--base", base];
        args.extend_from_slice(more);
        self.run(&args)
    }

    pub async fn cleanup(self) {
        self.store.cleanup().await;
    }
}

pub fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", text(out)))
}

/// The advisory files the acceptance tests need (EPSS is imported by its own test: it is
/// 360,000 rows).
pub fn advisory_files() -> Vec<String> {
    [
        "advisories/osv-crates-rustsec.jsonl",
        "advisories/osv-packagist-friendsofphp.jsonl",
        "advisories/osv-pypi-pypa.jsonl",
        "advisories/osv-rubygems-rubysec.jsonl",
        "advisories/osv-npm-nodejs-securitywg.jsonl",
        "advisories/kev.json",
    ]
    .iter()
    .map(|r| data(r).display().to_string())
    .collect()
}

pub fn import(env: &Env, files: &[String]) {
    let mut args = vec!["db", "import"];
    args.extend(files.iter().map(String::as_str));
    let out = env.run(&args);
    assert!(out.status.success(), "import failed: {:?}", text(&out));
}

/// A static file server on loopback (Python's http.server): a stand-in package index a
/// preparation reaches through the egress proxy, when a test allows it.
pub struct FileServer {
    child: std::process::Child,
    pub port: u16,
}

impl FileServer {
    pub fn start(dir: &Path) -> FileServer {
        use std::io::BufRead;
        let mut child = Command::new("python3")
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
            .expect("python3 serves the test's index");
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
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
