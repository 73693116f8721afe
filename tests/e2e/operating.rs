//! Operating Proven from the command line (issue 33): the database driver's slow-statement
//! warning stays off the terminal, a failed `--output` write keeps the review's id, `proven
//! reviews` lists local reviews, `livecheck` prints its table with the store down, a raised
//! limit in `proven.yaml` is warned about by key, YAML lists and the seeds' setting names are
//! accepted, each error is printed once, and the test script's database sweep leaves other
//! runs' databases alone.

use std::process::Command;
use std::time::{Duration, Instant};

use proven_change::testing::TestRepo;
use proven_store::testing::{Backend, postgres_admin_url};

use crate::common::{Env, data, text};

/// A repository whose change adds a lock file with an old package, and its base.
fn small_change(proven_yaml: Option<&str>) -> (TestRepo, String) {
    let repo = TestRepo::new();
    repo.write("README.md", "demo\n");
    if let Some(yaml) = proven_yaml {
        repo.write("proven.yaml", yaml);
    }
    let base = repo.commit("base");
    repo.write("Cargo.lock", crate::service::lock("1.5.4"));
    repo.commit("change");
    (repo, base)
}

fn psql(url: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .args(["-q", "-At", url, "-c", sql])
        .output()
        .expect("psql (apt-get install postgresql-client)");
    assert!(out.status.success(), "{sql}: {:?}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// An INSERT that waits on a lock for longer than sqlx's slow-statement threshold (1 s) is
/// logged at debug: `proven db import` never prints the statement (8,000 parameters of it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn db_import_never_prints_the_drivers_slow_statement_warning() {
    let env = Env::new(Backend::Postgres).await;
    let url = env.store.url.clone();
    // Another session holds the KEV table for 3 s: the import's INSERT waits that long.
    let mut holder = Command::new("psql")
        .args([
            "-q",
            &url,
            "-c",
            "BEGIN",
            "-c",
            "LOCK TABLE kev IN SHARE MODE",
            "-c",
        ])
        .arg("SELECT pg_sleep(3)")
        .args(["-c", "COMMIT"])
        .spawn()
        .expect("psql");
    let started = Instant::now();
    while psql(
        &url,
        "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
         WHERE c.relname = 'kev' AND l.mode = 'ShareLock' AND l.granted",
    ) != "1"
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the lock was never taken"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let kev = data("advisories/kev.json").display().to_string();
    let began = Instant::now();
    let out = env.run(&["db", "import", &kev]);
    let waited = began.elapsed();
    let _ = holder.wait();
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        waited > Duration::from_secs(1),
        "the insert waited: {waited:?}"
    );
    assert!(
        !stderr.contains("slow statement") && !stderr.contains("INSERT INTO"),
        "the driver's warning reached the terminal: {stderr}"
    );
    env.cleanup().await;
}

/// `--output` to a path that cannot be written: the review is kept and its id is printed
/// before the write, with how to have the output again; `proven reviews` lists it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_output_write_keeps_the_review_id_and_proven_reviews_lists_it() {
    let env = Env::new(Backend::Sqlite).await;
    let (repo, base) = small_change(None);
    let out = env.review(
        repo.path(),
        &base,
        &[
            "--output",
            "/nonexistent/proven/report.json",
            "--format",
            "json",
        ],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("proven: review "))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no review id in {stderr}"))
        .to_string();
    assert!(
        stderr.contains("/nonexistent/proven/report.json"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("proven show {id}")), "{stderr}");
    // The review is there to render again.
    let shown = env.run(&["show", &id, "--format", "json"]);
    assert!(text(&shown).0.contains(&id), "{:?}", text(&shown));
    // And listed, newest first, with its status and revisions.
    let second = env.review(repo.path(), &base, &["--format", "json"]);
    let second_id = crate::common::json(&second)["review_id"]
        .as_str()
        .expect("id")
        .to_string();
    let listed = env.run(&["reviews"]);
    let (stdout, stderr) = text(&listed);
    assert!(listed.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("ID"), "{stdout}");
    assert!(lines[1].starts_with(&second_id), "newest first: {stdout}");
    assert!(lines[2].starts_with(&id), "{stdout}");
    assert!(
        lines[2].contains(&format!("{}..HEAD", &base[..12])),
        "{stdout}"
    );
    let json = env.run(&["reviews", "--json", "--limit", "1"]);
    let first: serde_json::Value =
        serde_json::from_str(text(&json).0.lines().next().expect("a line")).expect("JSON");
    assert_eq!(first["id"], second_id.as_str());
    assert!(first["status"].is_string());
    env.cleanup().await;
}

/// With Postgres unreachable, `livecheck` still prints its table: the store's row names the
/// failure, the other services are checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn livecheck_prints_its_table_with_the_store_down() {
    let env = Env::new(Backend::Sqlite).await;
    let out = env
        .proven()
        .env(
            "PROVEN_DATABASE_URL",
            "postgres://proven:secret@127.0.0.1:1/proven",
        )
        .env("PROVEN_REDIS_URL", "redis://127.0.0.1:6379")
        .arg("livecheck")
        .output()
        .expect("livecheck");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}{stderr}");
    let store = stdout
        .lines()
        .find(|l| l.contains(" store "))
        .unwrap_or_else(|| panic!("no store row: {stdout}"));
    assert!(store.starts_with("MISSING"), "{store}");
    assert!(
        store.contains("127.0.0.1:1"),
        "the failure is named: {store}"
    );
    assert!(!stdout.contains("secret"), "never a password: {stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("ok") && l.contains("queue")),
        "{stdout}"
    );
    env.cleanup().await;
}

/// The base's proven.yaml: a limit it would raise is warned about by key (and not applied),
/// a YAML list is read as the list it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raised_limit_in_proven_yaml_is_warned_by_key_and_a_yaml_list_is_read() {
    let env = Env::new(Backend::Sqlite).await;
    let (repo, base) = small_change(Some(
        "intake:\n  max_tree_files: 900000\nprose_suffixes: [\".md\", \".txt\"]\n",
    ));
    let out = env.review(repo.path(), &base, &["--format", "json"]);
    let (stdout, stderr) = text(&out);
    assert_ne!(out.status.code(), Some(7), "{stderr}");
    assert!(stdout.contains("review_id"), "{stdout}{stderr}");
    let warning = stderr
        .lines()
        .find(|l| l.contains("intake.max_tree_files"))
        .unwrap_or_else(|| panic!("no warning naming the key: {stderr}"));
    assert!(
        warning.contains("900000") && warning.contains("PROVEN_MAX_TREE_FILES"),
        "{warning}"
    );
    env.cleanup().await;
}

/// The seeds' names (shared/seeds/architecture.txt) are settings, not exit 7; and an error
/// is printed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seeds_setting_names_are_accepted_and_an_error_is_printed_once() {
    let env = Env::new(Backend::Sqlite).await;
    let out = env
        .proven()
        .env("PROVEN_GENERATOR_MODE", "nvidia")
        .env("PROVEN_SECOND_REVIEWER_KEY", "sk-second")
        .env(
            "PROVEN_SECOND_REVIEWER_BASE_URL",
            "https://second.example/v1",
        )
        .env("PROVEN_SECOND_REVIEWER_MODEL", "org/model")
        .args(["db", "stats"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{:?}", text(&out));
    // A review whose base does not exist fails its intake: said once, not by the executor's
    // log line and again by the exit message.
    let (repo, _) = small_change(None);
    let out = env.review(repo.path(), "no-such-rev", &[]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert_eq!(
        stderr.lines().filter(|l| l.contains("no-such-rev")).count(),
        1,
        "printed once: {stderr}"
    );
    for args in [
        vec!["show", "no-such-review"],
        vec!["trace", "no-such-review"],
    ] {
        let out = env.run(&args);
        let (_, stderr) = text(&out);
        assert!(!out.status.success());
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: printed once: {stderr}");
    }
    let out = env
        .proven()
        .env("PROVEN_GENERATOR_MODE", "nightly")
        .args(["db", "stats"])
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(
        stderr.matches("PROVEN_GENERATOR_MODE").count(),
        1,
        "{stderr}"
    );
    env.cleanup().await;
}

/// `scripts/test`'s sweep drops a stale database nobody uses, never a fresh one of another
/// run (one a running suite just made, or one a session holds).
#[test]
fn the_test_scripts_sweep_leaves_other_runs_databases_alone() {
    let admin = postgres_admin_url();
    // A UUIDv7's first 48 bits are its creation time: one from 2020 is stale.
    let stale = format!(
        "proven_t_0170000000007000800000000000{:04x}",
        std::process::id() % 0xffff
    );
    let fresh = format!("proven_t_{}", uuid::Uuid::now_v7().simple());
    let held = format!(
        "proven_t_0170000000017000800000000000{:04x}",
        std::process::id() % 0xffff
    );
    for db in [&stale, &fresh, &held] {
        psql(&admin, &format!("DROP DATABASE IF EXISTS \"{db}\""));
        psql(&admin, &format!("CREATE DATABASE \"{db}\""));
    }
    let held_url = admin
        .rsplit_once('/')
        .map(|(h, _)| format!("{h}/{held}"))
        .expect("url");
    let mut holder = Command::new("psql")
        .args(["-q", &held_url, "-c", "SELECT pg_sleep(5)"])
        .spawn()
        .expect("psql");
    let started = Instant::now();
    while psql(
        &admin,
        &format!("SELECT count(*) FROM pg_stat_activity WHERE datname = '{held}'"),
    ) == "0"
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the session never connected"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("bash")
        .current_dir(&root)
        .args(["-c", ". scripts/services.sh; sweep_test_databases"])
        .env("PROVEN_TEST_POSTGRES_URL", &admin)
        .output()
        .expect("bash");
    assert!(out.status.success(), "{:?}", text(&out));
    let _ = holder.kill();
    let _ = holder.wait();
    let exists = |db: &str| {
        psql(
            &admin,
            &format!("SELECT count(*) FROM pg_database WHERE datname = '{db}'"),
        ) == "1"
    };
    let (stale_left, fresh_left, held_left) = (exists(&stale), exists(&fresh), exists(&held));
    for db in [&stale, &fresh, &held] {
        let _ = Command::new("psql")
            .args([
                "-q",
                &admin,
                "-c",
                &format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"),
            ])
            .output();
    }
    assert!(!stale_left, "a stale, unused test database is swept");
    assert!(fresh_left, "another run's fresh database is left alone");
    assert!(held_left, "a database in use is never dropped");
}
