//! `cargo xtask reach --repos DIR [--govulndb PATH] [--advisories DIR] [--proven BIN]
//! [--out FILE]`: reachability of dependency findings over real repositories' lock files
//! (issue 34): how many findings each verdict got, per ecosystem.
//!
//! The repositories are fixed here ([`REPOS`]), chosen for popularity before any run, never
//! by outcome: five Go, five Rust and five Python projects with a lock file. `--repos` holds
//! their git directories as `owner+name/repo` (bare mirrors are fine). For each, at its
//! head, through the `proven` binary as a user would: the advisories are imported once (the
//! data kit's OSV exports, RustSec's advisory database, and the Go vulnerability database's
//! `data/osv` when `--govulndb` names its checkout or git directory), then one `proven review`
//! of "empty tree → head" (every pinned package is brought in), and each finding of the
//! repository's lock file counted by its reachability verdict; `unknown` by the review's
//! reason (its words up to the first `:`, the files named after it dropped).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// (ecosystem, repository, its lock file). Go's is `go.mod`: its `require` lines pin every
/// module the build uses.
pub const REPOS: &[(&str, &str, &str)] = &[
    ("Go", "cli/cli", "go.mod"),
    ("Go", "gin-gonic/gin", "go.mod"),
    ("Go", "spf13/cobra", "go.mod"),
    ("Go", "junegunn/fzf", "go.mod"),
    ("Go", "caddyserver/caddy", "go.mod"),
    ("Rust", "BurntSushi/ripgrep", "Cargo.lock"),
    ("Rust", "sharkdp/bat", "Cargo.lock"),
    ("Rust", "sharkdp/fd", "Cargo.lock"),
    ("Rust", "alacritty/alacritty", "Cargo.lock"),
    ("Rust", "starship/starship", "Cargo.lock"),
    ("Python", "python-poetry/poetry", "poetry.lock"),
    ("Python", "pallets/flask", "uv.lock"),
    ("Python", "fastapi/fastapi", "uv.lock"),
    ("Python", "encode/httpx", "requirements.txt"),
    ("Python", "psf/requests", "requirements-dev.txt"),
];

/// The empty tree's id (the same in every git repository).
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

struct Options {
    repos: PathBuf,
    advisories: PathBuf,
    govulndb: Option<PathBuf>,
    proven: Option<PathBuf>,
    out: Option<PathBuf>,
    work: PathBuf,
}

/// One repository's counts: verdict (or `unknown: why`) → findings.
type Counts = BTreeMap<String, usize>;

pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    let o = options(args, root)?;
    let proven = match &o.proven {
        Some(p) => p.clone(),
        None => crate::corpus::build_proven(root)?,
    };
    std::fs::create_dir_all(&o.work).map_err(|e| format!("{}: {e}", o.work.display()))?;
    let data = o.work.join("data");
    let _ = std::fs::remove_dir_all(&data);
    let sources = advisory_sources(&o)?;
    let mut import = Command::new(&proven);
    import.env("PROVEN_DATA_DIR", &data).args(["db", "import"]);
    import.args(&sources);
    check(import, "proven db import")?;
    let (mut rows, mut failed) = (Vec::new(), Vec::new());
    for (eco, repo, lock) in REPOS {
        let git = o.repos.join(repo.replace('/', "+")).join("repo");
        match review_repo(&proven, &data, &o.work, &git, lock) {
            Ok(counts) => {
                eprintln!("{repo}: {counts:?}");
                rows.push((*eco, *repo, *lock, counts));
            }
            // Listed under the table, never dropped silently.
            Err(e) => failed.push(format!("{repo}: {e}")),
        }
    }
    let command = format!("cargo xtask reach {}", args.join(" "));
    let mut doc = document(&rows, &sources, &command);
    if !failed.is_empty() {
        doc.push_str("\nNot reviewed:\n\n");
        for f in &failed {
            let _ = writeln!(doc, "- {f}");
        }
    }
    match &o.out {
        Some(out) => std::fs::write(out, &doc).map_err(|e| format!("{}: {e}", out.display())),
        None => {
            print!("{doc}");
            Ok(())
        }
    }
}

fn options(args: &[String], root: &Path) -> Result<Options, String> {
    let mut o = Options {
        repos: PathBuf::new(),
        advisories: root.join("../shared/data/advisories"),
        govulndb: None,
        proven: None,
        out: None,
        work: std::env::temp_dir().join("proven-xtask-reach"),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--repos" => o.repos = value(a)?.into(),
            "--advisories" => o.advisories = value(a)?.into(),
            "--govulndb" => o.govulndb = Some(value(a)?.into()),
            "--proven" => o.proven = Some(value(a)?.into()),
            "--out" => o.out = Some(value(a)?.into()),
            "--work" => o.work = value(a)?.into(),
            other => return Err(format!("cargo xtask reach: unknown argument {other:?}")),
        }
    }
    if o.repos.as_os_str().is_empty() {
        return Err("cargo xtask reach: --repos DIR is required".into());
    }
    Ok(o)
}

/// The kit's OSV exports, RustSec's database and the Go database's `data/osv` (copied out
/// of its git directory when it is one).
fn advisory_sources(o: &Options) -> Result<Vec<PathBuf>, String> {
    let listing =
        std::fs::read_dir(&o.advisories).map_err(|e| format!("{}: {e}", o.advisories.display()))?;
    let mut sources: Vec<PathBuf> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            (name.starts_with("osv-") && name.ends_with(".jsonl")) || name.ends_with(".tar.gz")
        })
        .collect();
    sources.sort();
    if let Some(go) = &o.govulndb {
        let osv = go.join("data/osv");
        if osv.is_dir() {
            sources.push(osv);
        } else {
            let out = o.work.join("govulndb-osv");
            let _ = std::fs::remove_dir_all(&out);
            std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
            let archive = o.work.join("govulndb-osv.tar");
            let mut git = Command::new("git");
            git.arg("--git-dir").arg(go).args(["archive", "-o"]);
            git.arg(&archive).args(["HEAD", "data/osv"]);
            check(git, "git archive of the Go vulnerability database")?;
            let mut tar = Command::new("tar");
            tar.arg("-xf").arg(&archive).arg("-C").arg(&out);
            check(tar, "tar")?;
            sources.push(out.join("data/osv"));
        }
    }
    Ok(sources)
}

fn check(mut cmd: Command, what: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Reviews "empty tree → head" of a shared clone of `git` and counts the lock file's
/// findings by verdict.
fn review_repo(
    proven: &Path,
    data: &Path,
    work: &Path,
    git: &Path,
    lock: &str,
) -> Result<Counts, String> {
    let clone = work.join("clone");
    let _ = std::fs::remove_dir_all(&clone);
    let mut cmd = Command::new("git");
    cmd.args(["clone", "-q", "--shared", "--no-checkout"])
        .arg(git)
        .arg(&clone);
    check(cmd, "git clone")?;
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(&clone).args([
        "-c",
        "user.name=proven-xtask",
        "-c",
        "user.email=xtask@proven.invalid",
        "commit-tree",
        EMPTY_TREE,
        "-m",
        "empty",
    ]);
    let empty = check(cmd, "git commit-tree")?;
    let out = Command::new(proven)
        .env("NO_COLOR", "1")
        .env("PROVEN_DATA_DIR", data)
        .arg("review")
        .arg("--repo")
        .arg(&clone)
        .args(["--base", &empty, "--head", "HEAD", "--diff", "two-dot"])
        .args(["--format", "json"])
        .output()
        .map_err(|e| format!("proven review: {e}"))?;
    let doc: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "proven review printed no report ({e}): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    Ok(count(&doc, lock))
}

/// The lock file's findings by verdict; `unknown` ones by the review's reason.
fn count(doc: &Value, lock: &str) -> Counts {
    let mut counts = Counts::new();
    let findings = doc["findings"].as_array().into_iter().flatten();
    for f in findings.filter(|f| f["location"]["path"] == lock) {
        let reach = &f["reachability"];
        let key = match reach["verdict"].as_str() {
            Some("unknown") => {
                let why = reach["why"].as_str().unwrap_or("no reason given");
                format!("unknown: {}", why.split(':').next().unwrap_or(why))
            }
            Some(v) => v.replace('_', " "),
            None => "no verdict".into(),
        };
        *counts.entry(key).or_default() += 1;
    }
    counts
}

fn document(rows: &[(&str, &str, &str, Counts)], sources: &[PathBuf], command: &str) -> String {
    let mut columns: Vec<&String> = rows.iter().flat_map(|r| r.3.keys()).collect();
    columns.sort();
    columns.dedup();
    let mut doc = String::from("# Reachability of dependency findings on real lock files\n\n");
    let _ = writeln!(
        doc,
        "Generated by `{command}` on {} ({}), with `proven` reviewing each repository's \
         head as the change from an empty tree (every pinned package brought in). Advisories: {}.\n",
        crate::corpus::chrono_now(),
        machine(),
        sources
            .iter()
            .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let head: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    let _ = writeln!(
        doc,
        "| Ecosystem | Repository | Lock file | Findings | {} |",
        head.join(" | ")
    );
    let _ = writeln!(doc, "|---|---|---|---:|{}", "---:|".repeat(columns.len()));
    let mut totals: BTreeMap<&str, Counts> = BTreeMap::new();
    for (eco, repo, lock, counts) in rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| counts.get(*c).copied().unwrap_or(0).to_string())
            .collect();
        let n: usize = counts.values().sum();
        let _ = writeln!(
            doc,
            "| {eco} | {repo} | {lock} | {n} | {} |",
            cells.join(" | ")
        );
        let total = totals.entry(eco).or_default();
        for (k, v) in counts {
            *total.entry(k.clone()).or_default() += v;
        }
    }
    for (eco, counts) in &totals {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| counts.get(*c).copied().unwrap_or(0).to_string())
            .collect();
        let n: usize = counts.values().sum();
        let _ = writeln!(doc, "| **{eco}** | all | | {n} | {} |", cells.join(" | "));
    }
    doc
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = Command::new("uname")
        .args(["-srm"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!("{kernel}, {cpus} CPUs")
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn only_the_lock_files_findings_are_counted_and_unknown_by_reason() {
        let doc = serde_json::json!({"findings": [
            {"location": {"path": "Cargo.lock"}, "reachability": {"verdict": "reachable"}},
            {"location": {"path": "Cargo.lock"}, "reachability": {"verdict": "not_reached"}},
            {"location": {"path": "Cargo.lock"}, "reachability": {"verdict": "unknown",
              "why": "nothing found, but these files did not parse cleanly: a.rs"}},
            {"location": {"path": "fuzz/Cargo.lock"}, "reachability": {"verdict": "reachable"}},
        ]});
        let counts = count(&doc, "Cargo.lock");
        assert_eq!(counts.get("reachable"), Some(&1));
        assert_eq!(counts.get("not reached"), Some(&1));
        assert_eq!(
            counts.get("unknown: nothing found, but these files did not parse cleanly"),
            Some(&1)
        );
        assert_eq!(counts.values().sum::<usize>(), 3);
    }
}
