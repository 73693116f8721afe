//! Dependency evidence against its peers, on the Cargo lock files of the data kit with the
//! same advisories, measured in the same run:
//!
//! - `proven warm`: the check itself in a process that has its store open (match query,
//!   version evaluation, KEV/EPSS lookups) — the number the 20 ms target is about;
//! - `proven scan`: `proven deps scan FILE` as a fresh process (start-up, store open, read,
//!   check, render);
//! - `cargo-audit`: `cargo audit --db DIR --no-fetch --file FILE` as a fresh process, on the
//!   RustSec database those OSV rows were exported from;
//! - `osv-scanner`: `osv-scanner scan source --offline --lockfile FILE` as a fresh process,
//!   on an offline database built from the same OSV rows (`{dir}/osv-scanner/crates.io/all.zip`,
//!   and the `osv-scalibr/` layout of newer releases).
//!
//! For each peer it also compares the findings — the set of (package, version, advisory) —
//! and prints any difference. Peers are found at `$CARGO_AUDIT` / `$OSV_SCANNER` or on PATH
//! (`cargo install cargo-audit --version 0.22.2 --locked`; osv-scanner is a Go program:
//! `go install github.com/google/osv-scanner/v2/cmd/osv-scanner@latest` where the Go module
//! proxy answers); a missing peer is said and the rest measured.
//! Run: `cargo bench -p proven-cli --bench deps` (medians of `PROVEN_BENCH_RUNS`, default 20).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use proven_config::Informational;
use proven_lockfile::{FsTree, Limits, Tree};
use proven_review::Trace;
use proven_review::core::deps::{DepsOptions, FilePair, evaluate};

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

/// The median time of `runs` runs of a process, and its last output.
fn time_process(runs: usize, mut make: impl FnMut() -> Command) -> Option<(Duration, Vec<u8>)> {
    let mut times = Vec::with_capacity(runs);
    let mut last = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let out = make().output().ok()?;
        times.push(start.elapsed());
        // Each tool exits 1 when it finds vulnerabilities; anything else is a failure.
        if !matches!(out.status.code(), Some(0 | 1)) {
            eprintln!("  command failed: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        last = out.stdout;
    }
    Some((median(times), last))
}

/// A program at `$VAR`, else on PATH.
fn program(var: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.exists())
}

/// One finding, as every tool can say it: package, version, advisory.
type Finding = (String, String, String);

/// The findings of `proven deps scan --format json`.
fn proven_findings(json: &[u8]) -> BTreeSet<Finding> {
    let report: serde_json::Value = serde_json::from_slice(json).expect("proven's JSON report");
    report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            (
                f["package"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                f["package"]["new_version"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                f["advisory"]["id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The findings of `cargo audit --json`: vulnerabilities and the informational warnings
/// (unsound, unmaintained, notice; `yanked` needs the crates.io index, which `--no-fetch`
/// does not read).
fn audit_findings(json: &[u8]) -> BTreeSet<Finding> {
    let report: serde_json::Value = serde_json::from_slice(json).expect("cargo-audit's JSON");
    let entry = |v: &serde_json::Value| -> Option<Finding> {
        Some((
            v["package"]["name"].as_str()?.to_string(),
            v["package"]["version"].as_str()?.to_string(),
            v["advisory"]["id"].as_str()?.to_string(),
        ))
    };
    let vulnerabilities = report["vulnerabilities"]["list"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(entry);
    let warnings = report["warnings"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(kind, _)| kind.as_str() != "yanked")
        .flat_map(|(_, list)| list.as_array().into_iter().flatten())
        .filter_map(entry);
    vulnerabilities.chain(warnings).collect()
}

/// The findings of `osv-scanner --format json`.
fn osv_scanner_findings(json: &[u8]) -> BTreeSet<Finding> {
    let report: serde_json::Value = serde_json::from_slice(json).expect("osv-scanner's JSON");
    let mut found = BTreeSet::new();
    for result in report["results"].as_array().into_iter().flatten() {
        for package in result["packages"].as_array().into_iter().flatten() {
            let name = package["package"]["name"].as_str().unwrap_or_default();
            let version = package["package"]["version"].as_str().unwrap_or_default();
            for vulnerability in package["vulnerabilities"].as_array().into_iter().flatten() {
                if let Some(id) = vulnerability["id"].as_str() {
                    found.insert((name.to_string(), version.to_string(), id.to_string()));
                }
            }
        }
    }
    found
}

/// Says whether two sets of findings agree, and how they differ when they do not.
fn compare(peer: &str, ours: &BTreeSet<Finding>, theirs: &BTreeSet<Finding>) -> String {
    if ours == theirs {
        return format!("same findings as {peer} ({})", ours.len());
    }
    let only = |a: &BTreeSet<Finding>, b: &BTreeSet<Finding>| -> Vec<String> {
        a.difference(b)
            .map(|(n, v, id)| format!("{n} {v} {id}"))
            .collect()
    };
    format!(
        "DIFFERENT from {peer}: only Proven {:?}; only {peer} {:?}",
        only(ours, theirs),
        only(theirs, ours)
    )
}

/// osv-scanner's offline database from the same OSV rows: one JSON file per advisory in
/// `{dir}/osv-scanner/crates.io/all.zip` (and the `osv-scalibr/` layout newer releases read).
fn osv_scanner_db(dir: &Path, jsonl: &Path) -> PathBuf {
    use std::io::{BufRead, Write};
    let root = dir.join("osv-db");
    let text = std::fs::File::open(jsonl).expect("open the OSV rows");
    let mut advisories = Vec::new();
    for line in std::io::BufReader::new(text).lines() {
        let line = line.expect("read the OSV rows");
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line).expect("an OSV row");
        let id = v["id"].as_str().expect("an OSV id").to_string();
        advisories.push((id, line));
    }
    for layout in ["osv-scanner", "osv-scalibr"] {
        let eco = root.join(layout).join("crates.io");
        std::fs::create_dir_all(&eco).expect("db dir");
        let file = std::fs::File::create(eco.join("all.zip")).expect("all.zip");
        let mut zip = zip::ZipWriter::new(file);
        for (id, json) in &advisories {
            zip.start_file(
                format!("{id}.json"),
                zip::write::SimpleFileOptions::default(),
            )
            .expect("zip entry");
            zip.write_all(json.as_bytes()).expect("zip write");
        }
        zip.finish().expect("finish all.zip");
    }
    root
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

    let audit = program("CARGO_AUDIT", "cargo-audit");
    let db = audit.as_ref().map(|_| rustsec_db(dir.path()));
    if audit.is_none() {
        eprintln!("cargo-audit not found (set CARGO_AUDIT or put it on PATH): not measured");
    }
    let osv_scanner = program("OSV_SCANNER", "osv-scanner");
    let osv_db = osv_scanner
        .as_ref()
        .map(|_| osv_scanner_db(dir.path(), &rustsec));
    if osv_scanner.is_none() {
        eprintln!(
            "osv-scanner not found (set OSV_SCANNER or put it on PATH; it installs with the go \
             command where the Go module proxy answers): not measured"
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
        "{:<52} {:>8} {:>11} {:>11} {:>11} {:>11} {:>10} {:>10}",
        "lock file",
        "packages",
        "proven warm",
        "proven scan",
        "cargo-audit",
        "osv-scanner",
        "scan/audit",
        "scan/osv"
    );
    let mut agreement = Vec::new();
    let mut largest = None;
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
        for i in 0..=runs {
            let mut trace = Trace::new("bench");
            let start = Instant::now();
            rt.block_on(evaluate(&store, &pairs, &options, &mut trace))
                .expect("evaluate");
            if i > 0 {
                times.push(start.elapsed());
            }
        }
        let warm = median(times);
        let (scan, scan_out) = time_process(runs, || {
            let mut c = Command::new(proven);
            c.env("PROVEN_DATA_DIR", &data_dir)
                .args(["deps", "scan", "--format", "json"])
                .arg(lock);
            c
        })
        .expect("proven deps scan");
        let ours = proven_findings(&scan_out);
        let audit_run = match (&audit, &db) {
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
        let osv_run = match (&osv_scanner, &osv_db) {
            (Some(bin), Some(db)) => time_process(runs, || {
                let mut c = Command::new(bin);
                c.env("OSV_SCANNER_LOCAL_DB_CACHE_DIRECTORY", db)
                    .args([
                        "scan",
                        "source",
                        "--offline",
                        "--format",
                        "json",
                        "--lockfile",
                    ])
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
        if let Some((_, out)) = &audit_run {
            agreement.push(format!(
                "{name}: {}",
                compare("cargo-audit", &ours, &audit_findings(out))
            ));
        }
        if let Some((_, out)) = &osv_run {
            agreement.push(format!(
                "{name}: {}",
                compare("osv-scanner", &ours, &osv_scanner_findings(out))
            ));
        }
        let fmt = |d: Option<Duration>| {
            d.map(|d| format!("{:.2} ms", ms(d)))
                .unwrap_or_else(|| "-".into())
        };
        let ratio = |a: Duration, b: Option<Duration>| {
            b.map(|b| format!("{:.2}x", ms(a) / ms(b)))
                .unwrap_or_else(|| "-".into())
        };
        let audit_time = audit_run.as_ref().map(|r| r.0);
        let osv_time = osv_run.as_ref().map(|r| r.0);
        println!(
            "{:<52} {:>8} {:>11} {:>11} {:>11} {:>11} {:>10} {:>10}   ({} findings)",
            name,
            packages,
            fmt(Some(warm)),
            fmt(Some(scan)),
            fmt(audit_time),
            fmt(osv_time),
            ratio(scan, audit_time),
            ratio(scan, osv_time),
            ours.len()
        );
        largest = Some((name, packages, scan, audit_time, osv_time));
    }
    println!(
        "medians of {runs} runs; warm = in-process check with the store open (target: under 20 ms); \
         scan/peer below 1 means proven deps scan is faster"
    );
    if let Some((name, packages, scan, audit_time, osv_time)) = largest {
        let say = |peer: &str, t: Option<Duration>| match t {
            Some(t) => format!("{:.2}x of {peer}", ms(scan) / ms(t)),
            None => format!("{peer} not measured"),
        };
        println!(
            "largest lock file ({name}, {packages} packages): proven deps scan takes {}, {}",
            say("cargo-audit", audit_time),
            say("osv-scanner", osv_time)
        );
    }
    for line in agreement {
        println!("{line}");
    }
}
