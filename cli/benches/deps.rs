//! Dependency evidence against cargo-audit, on the Cargo lock files of the data kit with the
//! same RustSec data, measured in the same run:
//!
//! - `proven warm`: the check itself in a process that has its store open (match query,
//!   version evaluation, KEV/EPSS lookups) — the number the 20 ms target is about;
//! - `proven scan`: `proven deps scan FILE` as a fresh process (start-up, store open, read,
//!   check, render);
//! - `cargo-audit`: `cargo audit --db DIR --no-fetch --file FILE` as a fresh process.
//!
//! cargo-audit is found at `$CARGO_AUDIT` or on PATH (`cargo install cargo-audit --version
//! 0.22.2 --locked`); without it the bench says so and measures Proven alone.
//! Run: `cargo bench -p proven-cli --bench deps` (medians of `PROVEN_BENCH_RUNS`, default 20).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use proven_config::Informational;
use proven_lockfile::{FsTree, Limits, Tree};
use proven_review::Trace;
use proven_review::steps::deps::{DepsOptions, FilePair, evaluate};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn time_process(runs: usize, mut make: impl FnMut() -> Command) -> Option<Duration> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let out = make().output().ok()?;
        times.push(start.elapsed());
        // cargo-audit exits 1 when it finds vulnerabilities; anything else is a failure.
        if !matches!(out.status.code(), Some(0 | 1)) {
            eprintln!("  command failed: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
    }
    Some(median(times))
}

fn cargo_audit() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CARGO_AUDIT") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("cargo-audit"))
        .find(|p| p.exists())
}

/// cargo-audit reads the native RustSec format from a git checkout.
fn rustsec_db(dir: &Path) -> PathBuf {
    let db = dir.join("advisory-db");
    std::fs::create_dir_all(&db).expect("db dir");
    let ok = Command::new("tar")
        .args([
            "-xzf",
            &data("advisories/rustsec-advisory-db.tar.gz")
                .display()
                .to_string(),
            "-C",
        ])
        .arg(&db)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "extract rustsec-advisory-db.tar.gz");
    // The archive holds crates/ at some depth; cargo-audit wants the folder that has it.
    let root = walk_for_crates(&db).unwrap_or(db);
    for args in [
        vec!["init", "-q"],
        vec!["add", "-A"],
        vec![
            "-c",
            "user.email=b@b",
            "-c",
            "user.name=bench",
            "commit",
            "-qm",
            "db",
        ],
    ] {
        let _ = Command::new("git").args(&args).current_dir(&root).status();
    }
    root
}

fn walk_for_crates(dir: &Path) -> Option<PathBuf> {
    if dir.join("crates").is_dir() {
        return Some(dir.to_path_buf());
    }
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        if e.path().is_dir()
            && let Some(found) = walk_for_crates(&e.path())
        {
            return Some(found);
        }
    }
    None
}

fn main() {
    let runs: usize = std::env::var("PROVEN_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().expect("tempdir");
    let proven = env!("CARGO_BIN_EXE_proven");
    let data_dir = dir.path().join("data");
    let rustsec = data("advisories/osv-crates-rustsec.jsonl");
    let status = Command::new(proven)
        .env("PROVEN_DATA_DIR", &data_dir)
        .args(["db", "import"])
        .arg(&rustsec)
        .arg(data("advisories/kev.json"))
        .output()
        .expect("import");
    assert!(
        status.status.success(),
        "import: {}",
        String::from_utf8_lossy(&status.stderr)
    );

    let mut locks: Vec<PathBuf> = std::fs::read_dir(data("lockfiles/cargo"))
        .expect("lockfiles/cargo")
        .flatten()
        .map(|e| e.path().join("Cargo.lock"))
        .filter(|p| p.exists())
        .collect();
    locks.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));

    let audit = cargo_audit();
    let db = audit.as_ref().map(|_| rustsec_db(dir.path()));
    if audit.is_none() {
        eprintln!(
            "cargo-audit not found (set CARGO_AUDIT or put it on PATH): measuring Proven alone"
        );
    }

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let store = rt
        .block_on(proven_store::Store::open_sqlite(
            &data_dir.join("proven.db"),
        ))
        .expect("open the store the import wrote");
    let options = DepsOptions {
        informational: Informational::Report,
        dev_dependencies: true,
        limits: Limits::default(),
    };

    println!(
        "{:<58} {:>8} {:>12} {:>12} {:>13} {:>11} {:>11}",
        "lock file",
        "packages",
        "proven warm",
        "proven scan",
        "cargo-audit",
        "audit/warm",
        "audit/scan"
    );
    for lock in &locks {
        let tree = FsTree::new(lock.parent().expect("dir"));
        let file = proven_lockfile::read(&tree as &dyn Tree, "Cargo.lock", &Limits::default())
            .expect("read lock file");
        let packages = file.dependencies.len();
        let pairs = vec![FilePair {
            path: "Cargo.lock".into(),
            base: None,
            head: Some(file),
        }];
        // Warm: the store is open and its pages cached; one untimed run first.
        let mut times = Vec::with_capacity(runs);
        let mut findings = 0;
        for i in 0..=runs {
            let mut trace = Trace::new("bench");
            let start = Instant::now();
            let out = rt
                .block_on(evaluate(&store, &pairs, &options, &mut trace))
                .expect("evaluate");
            if i > 0 {
                times.push(start.elapsed());
            }
            findings = out.findings.len();
        }
        let warm = median(times);
        let scan = time_process(runs, || {
            let mut c = Command::new(proven);
            c.env("PROVEN_DATA_DIR", &data_dir)
                .args(["deps", "scan", "--format", "json"])
                .arg(lock);
            c
        })
        .expect("proven deps scan");
        let audit_time = match (&audit, &db) {
            (Some(bin), Some(db)) => time_process(runs, || {
                let mut c = Command::new(bin);
                c.args(["audit", "--db"])
                    .arg(db)
                    .args(["--no-fetch", "--json", "--file"])
                    .arg(lock);
                c
            }),
            _ => None,
        };
        let name = lock
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let fmt = |d: Option<Duration>| {
            d.map(|d| format!("{:.2} ms", ms(d)))
                .unwrap_or_else(|| "-".into())
        };
        let ratio = |a: Option<Duration>, b: Duration| {
            a.map(|a| format!("{:.1}x", ms(a) / ms(b)))
                .unwrap_or_else(|| "-".into())
        };
        println!(
            "{:<58} {:>8} {:>12} {:>12} {:>13} {:>11} {:>11}   ({findings} findings)",
            name,
            packages,
            fmt(Some(warm)),
            fmt(Some(scan)),
            fmt(audit_time),
            ratio(audit_time, warm),
            ratio(audit_time, scan)
        );
    }
    println!(
        "medians of {runs} runs; warm = in-process check with the store open (target: under 20 ms)"
    );
}
