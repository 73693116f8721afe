//! No command prints a secret: every command a user or an operator runs (reviews, questions,
//! the advisory database, tenants, the configuration, livecheck, the Action's offline path,
//! and the startup and first minutes of `proven serve` and `proven worker`, at debug log
//! level) runs with every secret setting configured (model keys, the Postgres and Redis
//! passwords in their URLs, repository credentials, the GitHub App's private key and webhook
//! secret, a tenant's API token, the workflow's token), and its whole stdout and stderr are
//! searched for each secret's value.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proven_change::testing::TestRepo;
use proven_store::testing::{Backend, TestStore};

use crate::common::data;
use crate::github_standin::app_key;
use crate::service::Proc;

/// Every secret value configured, by the name it is configured under.
struct Secrets(Vec<(String, String)>);

impl Secrets {
    /// The secrets `output` shows, by name.
    fn shown(&self, output: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(_, v)| output.contains(v.as_str()))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

/// What the stand-in was sent: each request's first bytes.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// A stand-in for every remote service (the models, GitHub's API): it answers every
/// request 403 at once, so nothing waits on the network and nothing is published.
fn refusing_server() -> (u16, Seen) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Seen::default();
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let kept = kept.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                let mut buf = [0u8; 65536];
                let _ = s.set_read_timeout(Some(Duration::from_millis(300)));
                let n = s.read(&mut buf).unwrap_or(0);
                if let Ok(mut k) = kept.lock() {
                    k.push(String::from_utf8_lossy(&buf[..n.min(2048)]).into_owned());
                }
                let body = r#"{"message":"Forbidden"}"#;
                let _ = write!(
                    s,
                    "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (port, seen)
}

/// A Redis of its own that wants a password.
fn redis_with_password(password: &str) -> (Proc, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args([
            "--save",
            "",
            "--appendonly",
            "no",
            "--requirepass",
            password,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server is needed (Debian package redis-server)");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no redis-server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (Proc(child), port)
}

/// Runs `cmd` for at most `limit` (then kills it: a server's startup and first moments);
/// its stdout and stderr together.
fn run_for(mut cmd: Command, limit: Duration) -> String {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run proven");
    let pipe = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = r.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let out = pipe(Box::new(child.stdout.take().expect("stdout")));
    let err = pipe(Box::new(child.stderr.take().expect("stderr")));
    let started = Instant::now();
    while started.elapsed() < limit {
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    format!(
        "{}{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    )
}

fn with_password(url: &str, password: &str) -> String {
    let mut u = url::Url::parse(url).expect("a URL");
    u.set_password(Some(password)).expect("a password");
    u.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_command_prints_a_configured_secret() {
    let store = TestStore::new(Backend::Postgres).await;
    let data_dir = tempfile::tempdir().expect("tempdir");
    let keys = tempfile::tempdir().expect("tempdir");
    let (key_path, _) = app_key(keys.path());
    let pem = std::fs::read_to_string(&key_path).expect("the App's key");
    let (redis_pw, pg_pw) = ("redis-pw-5b1e9c0d77", "pg-pw-0c9a4f31e2");
    let (_redis, redis_port) = redis_with_password(redis_pw);
    let (remote, seen) = refusing_server();
    let remote_url = format!("http://127.0.0.1:{remote}/v1");
    let database_url = with_password(&store.url, pg_pw);
    let redis_url = format!("redis://:{redis_pw}@127.0.0.1:{redis_port}");
    let mut secrets: Vec<(String, String)> = [
        ("PROVEN_GENERATOR_API_KEY", "sk-generator-3f9a1c77d2"),
        ("PROVEN_SKEPTIC_API_KEY", "sk-skeptic-8b2e6d10f4"),
        ("PROVEN_GUARDRAIL_API_KEY", "sk-guardrail-41c7a9e3b0"),
        ("PROVEN_SECOND_REVIEWER_API_KEY", "sk-second-9e0d2b5a61"),
        ("PROVEN_GITHUB_WEBHOOK_SECRET", "whsec-7c1f02e9a4b8"),
        ("PROVEN_REPO_CREDENTIALS", "repo-secret-2d8e4f6a19"),
        ("GITHUB_TOKEN", "ghs_workflowtoken5e7a9c1d3b"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    secrets.push(("Postgres password".into(), pg_pw.into()));
    secrets.push(("Redis password".into(), redis_pw.into()));
    // The private key's body (any line of it would do; these are long and unique).
    for (i, line) in pem.lines().filter(|l| l.len() >= 60).take(3).enumerate() {
        secrets.push((
            format!("PROVEN_GITHUB_PRIVATE_KEY line {i}"),
            line.to_string(),
        ));
    }
    let env: Vec<(String, String)> = [
        ("PROVEN_DATABASE_URL", database_url.clone()),
        ("PROVEN_REDIS_URL", redis_url.clone()),
        ("PROVEN_DATA_DIR", data_dir.path().display().to_string()),
        (
            "PROVEN_QUEUE_PREFIX",
            format!("proven-secrets-{}", uuid::Uuid::now_v7().simple()),
        ),
        ("PROVEN_LISTEN", "127.0.0.1:0".into()),
        ("PROVEN_LOG", "debug".into()),
        ("PROVEN_GENERATOR_BASE_URL", remote_url.clone()),
        ("PROVEN_GENERATOR_MODEL", "meta/llama-test".into()),
        ("PROVEN_SKEPTIC_BASE_URL", remote_url.clone()),
        ("PROVEN_SKEPTIC_MODEL", "nvidia/nemotron-test".into()),
        ("PROVEN_GUARDRAIL_BASE_URL", remote_url.clone()),
        ("PROVEN_GUARDRAIL_MODEL", "nvidia/guard-test".into()),
        ("PROVEN_SECOND_REVIEWER_BASE_URL", remote_url.clone()),
        (
            "PROVEN_SECOND_REVIEWER_MODEL",
            "mistralai/second-test".into(),
        ),
        ("PROVEN_GITHUB_APP_ID", "1".into()),
        ("PROVEN_GITHUB_PRIVATE_KEY", key_path.display().to_string()),
        (
            "PROVEN_GITHUB_API_URL",
            format!("http://127.0.0.1:{remote}"),
        ),
        (
            "PROVEN_REPO_ROOTS",
            std::env::temp_dir().display().to_string(),
        ),
        ("PROVEN_SANDBOX_POOL_SIZE", "0".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .chain(
        secrets
            .iter()
            .filter(|(k, _)| k.starts_with("PROVEN_") && !k.contains("line"))
            .map(|(k, v)| {
                let v = if k == "PROVEN_REPO_CREDENTIALS" {
                    format!("github.com=x-access-token:{v}")
                } else {
                    v.clone()
                };
                (k.clone(), v)
            }),
    )
    .collect();
    let proven = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_proven"));
        for (k, _) in std::env::vars() {
            if k.starts_with("PROVEN_") || k.starts_with("GITHUB_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("NO_COLOR", "1")
            .envs(env.iter().map(|(k, v)| (k, v)));
        cmd.args(args);
        cmd
    };

    // A repository with a change: a vulnerable crate added to the lock file.
    let repo = TestRepo::new();
    repo.write("README.md", "app\n");
    let base = repo.commit("base");
    repo.write(
        "Cargo.lock",
        "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n\n[[package]]\n\
         name = \"smallvec\"\nversion = \"0.6.9\"\n\
         source = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
    );
    repo.write("src/lib.rs", "pub fn timeout() -> u64 { 30 }\n");
    let head = repo.commit("head");
    let repo_path = repo.path().display().to_string();
    let lock = repo.path().join("Cargo.lock").display().to_string();
    let advisories = data("advisories/osv-crates-rustsec.jsonl");
    let kev = data("advisories/kev.json");
    let event = data_dir.path().join("event.json");
    std::fs::write(
        &event,
        serde_json::json!({"action": "opened", "number": 5, "repository": {"full_name": "acme/app"},
            "pull_request": {"number": 5, "base": {"ref": "main", "sha": base},
                             "head": {"ref": "feature", "sha": head}}})
        .to_string(),
    )
    .expect("event");
    let quick = Duration::from_secs(120);
    let mut outputs: Vec<(String, String)> = Vec::new();
    let mut run = |name: &str, cmd: Command, limit: Duration| {
        let text = run_for(cmd, limit);
        outputs.push((name.to_string(), text));
    };
    run("--help", proven(&["--help"]), quick);
    run("config reference", proven(&["config", "reference"]), quick);
    run(
        "db import",
        proven(&[
            "db",
            "import",
            &advisories.display().to_string(),
            &kev.display().to_string(),
        ]),
        quick,
    );
    run("db stats", proven(&["db", "stats"]), quick);
    run(
        "db sync",
        proven(&["db", "sync", "--json", &kev.display().to_string()]),
        quick,
    );
    run("livecheck", proven(&["livecheck"]), quick);
    // The same with every service unreachable: the failures are named, the passwords not.
    let mut unreachable = proven(&["livecheck"]);
    unreachable
        .env(
            "PROVEN_DATABASE_URL",
            format!("postgres://postgres:{pg_pw}@127.0.0.1:1/proven"),
        )
        .env(
            "PROVEN_REDIS_URL",
            format!("redis://:{redis_pw}@127.0.0.1:1"),
        );
    run("livecheck (unreachable)", unreachable, quick);
    let mut wrong = proven(&["livecheck"]);
    wrong.env(
        "PROVEN_REDIS_URL",
        format!("redis://:{redis_pw}-wrong@127.0.0.1:{redis_port}"),
    );
    run("livecheck (wrong Redis password)", wrong, quick);
    let created = run_for(proven(&["tenant", "create", "acme"]), quick);
    let token = created
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("pvn_"))
        .unwrap_or_else(|| panic!("tenant create prints the new token: {created}"))
        .to_string();
    secrets.push(("the tenant's API token".into(), token));
    run("tenant list", proven(&["tenant", "list"]), quick);
    run("deps scan", proven(&["deps", "scan", &lock]), quick);
    for format in ["text", "json", "sarif", "markdown"] {
        run(
            &format!("review --format {format}"),
            proven(&[
                "review", "--repo", &repo_path, "--base", &base, "--format", format,
            ]),
            Duration::from_secs(300),
        );
    }
    run(
        "ask",
        proven(&["ask", "Where is the timeout set?", "--repo", &repo_path]),
        Duration::from_secs(300),
    );
    let mut action = proven(&["github", "action"]);
    action
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REPOSITORY", "acme/app")
        .env("GITHUB_API_URL", format!("http://127.0.0.1:{remote}"))
        .env("GITHUB_WORKSPACE", repo.path())
        .env("GITHUB_SHA", &head)
        .env("GITHUB_RUN_ID", "77")
        .env("GITHUB_TOKEN", "ghs_workflowtoken5e7a9c1d3b")
        .env("GITHUB_OUTPUT", data_dir.path().join("github-output"))
        .env("GITHUB_STEP_SUMMARY", data_dir.path().join("summary.md"));
    run("github action", action, Duration::from_secs(300));
    // The servers: startup and their first moments at debug level.
    run("serve", proven(&["serve"]), Duration::from_secs(8));
    run("worker", proven(&["worker"]), Duration::from_secs(8));
    // Addresses that do not parse still hold their passwords: the refusal names the
    // setting, never the value.
    for (name, key, bad) in [
        (
            "serve (a Redis URL that does not parse)",
            "PROVEN_REDIS_URL",
            format!("redis://:{redis_pw}@127.0.0.1:99999"),
        ),
        (
            "serve (a database URL that does not parse)",
            "PROVEN_DATABASE_URL",
            format!("postgres://postgres:{pg_pw}@127.0.0.1:99999/x"),
        ),
    ] {
        let mut cmd = proven(&["serve"]);
        cmd.env(key, bad);
        run(name, cmd, Duration::from_secs(8));
    }
    for file in ["github-output", "summary.md"] {
        if let Ok(text) = std::fs::read_to_string(data_dir.path().join(file)) {
            outputs.push((format!("github action's {file}"), text));
        }
    }

    let secrets = Secrets(secrets);
    let mut leaks = Vec::new();
    for (name, text) in &outputs {
        let shown = secrets.shown(text);
        let tail: String = text
            .chars()
            .skip(text.chars().count().saturating_sub(300))
            .collect();
        eprintln!(
            "{name}: {} bytes of output, secrets shown: {shown:?}; ends: {tail:?}",
            text.len()
        );
        if !shown.is_empty() {
            leaks.push(format!("`proven {name}` printed {shown:?}:\n{text}"));
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n\n"));
    // The commands ran: the servers logged their start, the review and livecheck spoke.
    let of = |name: &str| {
        outputs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_str())
            .unwrap_or_default()
    };
    assert!(of("serve").contains("listening on"), "{}", of("serve"));
    assert!(!of("worker").is_empty(), "the worker logged nothing");
    assert!(of("livecheck").contains("redis"), "{}", of("livecheck"));
    // The secrets were in use: the models were called with their keys, GitHub with the
    // workflow's token (and the stand-in refused them all).
    let seen = seen.lock().map(|s| s.join("\n")).unwrap_or_default();
    for used in ["sk-generator-3f9a1c77d2", "ghs_workflowtoken5e7a9c1d3b"] {
        assert!(seen.contains(used), "{used} was never sent: {seen}");
    }
    store.cleanup().await;
}
