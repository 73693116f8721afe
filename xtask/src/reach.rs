//! `cargo xtask reach --repos DIR [--govulndb PATH] [--advisories DIR] [--proven BIN]
//! [--out FILE] [--order Go,Rust,Python]`: reachability of dependency findings over real repositories' lock files
//! (issue 34): how many findings each verdict got, per ecosystem.
//!
//! The repositories are fixed here ([`REPOS`]), chosen for popularity before any run, never
//! by outcome: five Go, five Rust and ten Python projects with a lock file (the last five
//! Python ones added, before the run that first reviewed them, for their pinned requirements
//! or lock files old enough to have any). `--repos` holds their git directories as
//! `owner+name/repo` (bare mirrors are fine). Each is reviewed twice: at its head, and as it
//! stood on [`DATED`] (the rule is [`dated_commit`]), a date fixed before any run for one
//! reason: a lock file five years old pins packages that advisories have since named, which a
//! head that keeps its pins fresh does not. Through the `proven` binary as a user would: the
//! advisories are imported once (the data kit's OSV exports, RustSec's advisory database, and
//! the Go vulnerability database's `data/osv` when `--govulndb` names its checkout or git
//! directory), then one `proven review` of "empty tree → that commit" (every pinned package is
//! brought in), and each finding of the repository's lock file counted by its reachability
//! verdict; `unknown` by the review's reason (its words up to the first `:`, the files named
//! after it dropped). Each review's JSON report is kept under `--work`'s `reports/`.
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
    ("Python", "pypi/warehouse", "requirements/main.txt"),
    ("Python", "netbox-community/netbox", "requirements.txt"),
    ("Python", "freqtrade/freqtrade", "requirements.txt"),
    ("Python", "healthchecks/healthchecks", "requirements.txt"),
    (
        "Python",
        "readthedocs/readthedocs.org",
        "requirements/pip.txt",
    ),
];

/// The earlier date each repository is also reviewed as of: (as written, Unix seconds UTC).
/// Fixed before any run, never moved by outcome.
pub const DATED: (&str, i64) = ("2022-01-01", 1_640_995_200);

/// The empty tree's id (the same in every git repository).
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

struct Options {
    repos: PathBuf,
    advisories: PathBuf,
    govulndb: Option<PathBuf>,
    proven: Option<PathBuf>,
    out: Option<PathBuf>,
    work: PathBuf,
    /// The ecosystems in the order their repositories are reviewed.
    order: Vec<String>,
}

/// One repository's counts: verdict (or `unknown: why`) → findings.
type Counts = BTreeMap<String, usize>;

/// One reviewed (or not) state of one repository.
struct Row {
    eco: &'static str,
    repo: &'static str,
    lock: &'static str,
    /// `head`, or the dated review's date.
    when: &'static str,
    /// The commit's short id and committer date, when there is one.
    commit: String,
    /// The counts, or why there are none (no lock file then, no review).
    counts: Result<Counts, String>,
    /// Files of the commit absent from the git directory, left out of the reviewed tree.
    left_out: Vec<String>,
}

pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    let o = options(args, root)?;
    let proven = match &o.proven {
        Some(p) => p.clone(),
        None => crate::corpus::build_proven(root)?,
    };
    let load_before = load_average();
    std::fs::create_dir_all(&o.work).map_err(|e| format!("{}: {e}", o.work.display()))?;
    let data = o.work.join("data");
    let _ = std::fs::remove_dir_all(&data);
    let reports = o.work.join("reports");
    std::fs::create_dir_all(&reports).map_err(|e| format!("{}: {e}", reports.display()))?;
    let sources = advisory_sources(&o)?;
    let mut import = Command::new(&proven);
    import.env("PROVEN_DATA_DIR", &data).args(["db", "import"]);
    import.args(&sources);
    check(import, "proven db import")?;
    let command = format!("cargo xtask reach {}", args.join(" "));
    let xtask_commit = {
        let mut git = Command::new("git");
        git.arg("-C")
            .arg(root)
            .args(["rev-parse", "--short", "HEAD"]);
        check(git, "git rev-parse").unwrap_or_else(|_| "?".into())
    };
    // Every row of the table from the start: one not yet reviewed says so, and the document
    // is written again after each review, so a run stopped early still leaves its rows.
    let mut rows: Vec<Row> = REPOS
        .iter()
        .flat_map(|&(eco, repo, lock)| {
            ["head", DATED.0].map(|when| Row {
                eco,
                repo,
                lock,
                when,
                commit: String::new(),
                counts: Err("the run stopped before this row was reviewed".into()),
                left_out: Vec::new(),
            })
        })
        .collect();
    for i in review_order(&o.order)? {
        let (_, repo, lock) = REPOS[i];
        let git = o.repos.join(repo.replace('/', "+")).join("repo");
        let head = check(git_at(&git, &["rev-parse", "HEAD"]), "git rev-parse HEAD");
        let dated = commits(&git).and_then(|log| match dated_commit(&log, DATED.1) {
            Some(c) => Ok(c.to_string()),
            None => Err(format!("no commit before {}", DATED.0)),
        });
        for (j, commit) in [head, dated].into_iter().enumerate() {
            let row = &mut rows[2 * i + j];
            let (commit, reviewed) = match commit {
                Ok(c) => {
                    let label = commit_label(&git, &c);
                    let stem = format!("{}-{}", repo.replace('/', "+"), row.when);
                    let reviewed = if has_file(&git, &c, lock) {
                        review_repo(&proven, &data, &o.work, &git, &c, lock, &reports, &stem)
                    } else {
                        Err(format!("no {lock} in the repository at this commit"))
                    };
                    (label, reviewed)
                }
                Err(e) => (String::new(), Err(e)),
            };
            eprintln!("{repo} ({}, {commit}): {reviewed:?}", row.when);
            row.commit = commit;
            match reviewed {
                Ok((counts, left_out)) => {
                    row.counts = Ok(counts);
                    row.left_out = left_out;
                }
                Err(e) => row.counts = Err(e),
            }
            if let Some(out) = &o.out {
                let header = Header {
                    command: command.clone(),
                    sources: source_names(&sources),
                    proven: proven.display().to_string(),
                    xtask_commit: xtask_commit.clone(),
                    load: format!(
                        "{load_before} at the start, {} when this was written",
                        load_average()
                    ),
                };
                let doc = document(&rows, &header);
                std::fs::write(out, &doc).map_err(|e| format!("{}: {e}", out.display()))?;
            }
        }
    }
    if o.out.is_none() {
        let header = Header {
            command,
            sources: source_names(&sources),
            proven: proven.display().to_string(),
            xtask_commit,
            load: format!("{load_before} at the start, {} at the end", load_average()),
        };
        print!("{}", document(&rows, &header));
    }
    Ok(())
}

fn source_names(sources: &[PathBuf]) -> Vec<String> {
    sources
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
        .collect()
}

/// The indices of [`REPOS`] in the order they are reviewed: by `order`'s ecosystems (each of
/// [`REPOS`]' ecosystems named once), in [`REPOS`]' order within one. The order changes no
/// row, only which ones a run stopped early has.
fn review_order(order: &[String]) -> Result<Vec<usize>, String> {
    let mut known: Vec<&str> = REPOS.iter().map(|r| r.0).collect();
    known.dedup();
    let mut sorted = order.iter().map(String::as_str).collect::<Vec<_>>();
    sorted.sort_unstable();
    let mut wanted = known.clone();
    wanted.sort_unstable();
    if sorted != wanted {
        return Err(format!(
            "cargo xtask reach: --order must name each of {} once, comma-separated; got {:?}",
            known.join(", "),
            order.join(",")
        ));
    }
    Ok(order
        .iter()
        .flat_map(|eco| (0..REPOS.len()).filter(move |&i| REPOS[i].0 == eco))
        .collect())
}

/// What the document says about its run.
struct Header {
    command: String,
    sources: Vec<String>,
    proven: String,
    xtask_commit: String,
    load: String,
}

/// `git --git-dir GIT ARGS…`.
fn git_at(git: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir").arg(git).args(args);
    cmd
}

/// HEAD's first-parent chain, newest first, one `<commit> <committer time>` a line.
fn commits(git: &Path) -> Result<String, String> {
    check(
        git_at(git, &["log", "--first-parent", "--format=%H %ct", "HEAD"]),
        "git log --first-parent",
    )
}

/// The dated review's commit: the repository as it stood at `cutoff` (Unix seconds), i.e.
/// the newest commit of HEAD's first-parent chain (`log`: `<commit> <committer time>` lines,
/// newest first, as [`commits`] gives them) committed before `cutoff`. The chain, not every
/// commit: a merged branch's commits were not the repository's state until their merge. A
/// line that does not read as `<commit> <seconds>` is skipped; `None` when no commit is older.
fn dated_commit(log: &str, cutoff: i64) -> Option<&str> {
    log.lines().find_map(|line| {
        let (commit, time) = line.trim().split_once(' ')?;
        let time: i64 = time.trim().parse().ok()?;
        (time < cutoff && !commit.is_empty()).then_some(commit)
    })
}

fn has_file(git: &Path, commit: &str, path: &str) -> bool {
    git_at(git, &["cat-file", "-e", &format!("{commit}:{path}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `abc1234 (2021-12-30)`: the commit's short id and committer date.
fn commit_label(git: &Path, commit: &str) -> String {
    check(
        git_at(git, &["log", "-1", "--format=%h (%cs)", commit]),
        "git log -1",
    )
    .unwrap_or_else(|_| commit.chars().take(10).collect())
}

/// The 1-minute load average (Linux), or `?`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn options(args: &[String], root: &Path) -> Result<Options, String> {
    let mut o = Options {
        repos: PathBuf::new(),
        advisories: root.join("../shared/data/advisories"),
        govulndb: None,
        proven: None,
        out: None,
        work: std::env::temp_dir().join("proven-xtask-reach"),
        order: vec!["Go".into(), "Rust".into(), "Python".into()],
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
            "--order" => {
                o.order = value(a)?.split(',').map(|e| e.trim().to_string()).collect();
            }
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

/// Reviews "empty tree → `commit`" of a shared clone of `git`, keeps the JSON report as
/// `reports/<stem>.json`, and counts the lock file's findings by verdict. A commit some of
/// whose files the git directory lacks (a mirror that omits large files) is reviewed without
/// them when none is a source file a verdict reads or the lock file; they are returned.
#[allow(clippy::too_many_arguments)]
fn review_repo(
    proven: &Path,
    data: &Path,
    work: &Path,
    git: &Path,
    commit: &str,
    lock: &str,
    reports: &Path,
    stem: &str,
) -> Result<(Counts, Vec<String>), String> {
    let clone = work.join("clone");
    let _ = std::fs::remove_dir_all(&clone);
    let mut cmd = Command::new("git");
    cmd.args(["clone", "-q", "--shared", "--no-checkout"])
        .arg(git)
        .arg(&clone);
    check(cmd, "git clone")?;
    let commit_tree = |tree: &str, message: &str| {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&clone).args([
            "-c",
            "user.name=proven-xtask",
            "-c",
            "user.email=xtask@proven.invalid",
            "commit-tree",
            tree,
            "-m",
            message,
        ]);
        check(cmd, "git commit-tree")
    };
    let empty = commit_tree(EMPTY_TREE, "empty")?;
    let missing = missing_files(&clone, commit)?;
    if let Some(read) = missing.iter().find(|p| *p == lock || is_verdict_source(p)) {
        return Err(format!(
            "the git directory lacks {read}, a file the verdicts read"
        ));
    }
    let head = if missing.is_empty() {
        commit.to_string()
    } else {
        let index = work.join("index-without-missing");
        let _ = std::fs::remove_file(&index);
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&clone).env("GIT_INDEX_FILE", &index);
        cmd.args(["read-tree", commit]);
        check(cmd, "git read-tree")?;
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&clone).env("GIT_INDEX_FILE", &index);
        cmd.args(["update-index", "--force-remove", "--"])
            .args(&missing);
        check(cmd, "git update-index")?;
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&clone).env("GIT_INDEX_FILE", &index);
        cmd.arg("write-tree");
        let tree = check(cmd, "git write-tree")?;
        commit_tree(
            &tree,
            &format!("{commit} without the files the mirror lacks"),
        )?
    };
    let commit = head.as_str();
    let out = Command::new(proven)
        .env("NO_COLOR", "1")
        .env("PROVEN_DATA_DIR", data)
        // What does not feed a dependency finding's verdict is off: the models, the
        // analyzers (each a sandbox run over the whole tree), the Fixer.
        .env("PROVEN_AGENTS", "off")
        .env("PROVEN_TOOL_ANALYZERS", "")
        .env("PROVEN_FIXES", "off")
        .arg("review")
        .arg("--repo")
        .arg(&clone)
        .args(["--base", &empty, "--head", commit, "--diff", "two-dot"])
        .args(["--format", "json"])
        .output()
        .map_err(|e| format!("proven review: {e}"))?;
    let report = reports.join(format!("{stem}.json"));
    std::fs::write(&report, &out.stdout).map_err(|e| format!("{}: {e}", report.display()))?;
    let doc: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "proven review printed no report ({e}): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    Ok((count(&doc, lock), missing))
}

/// The files of `commit` whose blobs `repo` lacks.
fn missing_files(repo: &Path, commit: &str) -> Result<Vec<String>, String> {
    let mut ls = Command::new("git");
    ls.arg("-C").arg(repo).args(["ls-tree", "-r", commit]);
    let listing = check(ls, "git ls-tree")?;
    // `<mode> blob <id>\t<path>`; submodules (`commit`) have no object here.
    let blobs: Vec<(&str, &str)> = listing
        .lines()
        .filter_map(|l| {
            let (meta, path) = l.split_once('\t')?;
            let mut m = meta.split(' ');
            let (_, kind, id) = (m.next()?, m.next()?, m.next()?);
            (kind == "blob").then_some((id, path))
        })
        .collect();
    let ids: String = blobs.iter().map(|(id, _)| format!("{id}\n")).collect();
    let mut child = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["cat-file", "--batch-check=%(objectname)"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("git cat-file: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("git cat-file: no stdin")?;
    let writer = std::thread::spawn(move || {
        use std::io::Write as _;
        stdin.write_all(ids.as_bytes())
    });
    let out = child
        .wait_with_output()
        .map_err(|e| format!("git cat-file: {e}"))?;
    let _ = writer.join();
    let text = String::from_utf8_lossy(&out.stdout);
    let absent: std::collections::HashSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_suffix(" missing"))
        .collect();
    Ok(blobs
        .iter()
        .filter(|(id, _)| absent.contains(id))
        .map(|(_, path)| path.to_string())
        .collect())
}

/// A source file of a language whose verdicts read it (Go, Rust, Python).
fn is_verdict_source(path: &str) -> bool {
    [".go", ".rs", ".py", ".pyi"]
        .iter()
        .any(|suffix| path.ends_with(suffix))
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

fn document(rows: &[Row], h: &Header) -> String {
    let mut columns: Vec<&String> = rows
        .iter()
        .filter_map(|r| r.counts.as_ref().ok())
        .flat_map(|c| c.keys())
        .collect();
    columns.sort();
    columns.dedup();
    let mut doc = String::from("# Reachability of dependency findings on real lock files\n\n");
    let _ = writeln!(
        doc,
        "Generated by `{}` on {} ({}; load average {}), xtask at commit {}, with `{}` \
         reviewing each repository as the change from an empty tree to a commit (every \
         pinned package brought in): its head, and its state on {} (the newest commit of \
         HEAD's first-parent chain committed before {} 00:00 UTC; fixed before any run). \
         What does not feed a dependency finding's verdict is off in each review \
         (`PROVEN_AGENTS=off PROVEN_TOOL_ANALYZERS= PROVEN_FIXES=off`). A row without \
         counts says why. Advisories: {}.\n",
        h.command,
        crate::corpus::chrono_now(),
        machine(),
        h.load,
        h.xtask_commit,
        h.proven,
        DATED.0,
        DATED.0,
        h.sources.join(", ")
    );
    let head: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    let _ = writeln!(
        doc,
        "| Ecosystem | Repository | Lock file | Reviewed | Commit | Findings | {} |",
        head.join(" | ")
    );
    let _ = writeln!(
        doc,
        "|---|---|---|---|---|---:|{}",
        "---:|".repeat(columns.len())
    );
    let cells = |counts: &Counts| -> String {
        columns
            .iter()
            .map(|c| counts.get(*c).copied().unwrap_or(0).to_string())
            .collect::<Vec<_>>()
            .join(" | ")
    };
    // (ecosystem, when) → totals; `all` sums the ecosystems.
    let mut totals: BTreeMap<(&str, &str), (usize, Counts)> = BTreeMap::new();
    for r in rows {
        match &r.counts {
            Ok(counts) => {
                let n: usize = counts.values().sum();
                let _ = writeln!(
                    doc,
                    "| {} | {} | {} | {} | {} | {n} | {} |",
                    r.eco,
                    r.repo,
                    r.lock,
                    r.when,
                    r.commit,
                    cells(counts)
                );
                for key in [(r.eco, r.when), ("all", r.when)] {
                    let total = totals.entry(key).or_default();
                    total.0 += 1;
                    for (k, v) in counts {
                        *total.1.entry(k.clone()).or_default() += v;
                    }
                }
            }
            Err(why) => {
                let _ = writeln!(
                    doc,
                    "| {} | {} | {} | {} | {} | not reviewed: {} |{}",
                    r.eco,
                    r.repo,
                    r.lock,
                    r.when,
                    r.commit,
                    why.lines().next().unwrap_or_default().replace('|', "\\|"),
                    " |".repeat(columns.len())
                );
            }
        }
    }
    let _ = writeln!(
        doc,
        "\nTotals per ecosystem and per verdict (reviewed rows only):\n"
    );
    let _ = writeln!(
        doc,
        "| Ecosystem | Reviewed | Rows reviewed | Findings | {} |",
        head.join(" | ")
    );
    let _ = writeln!(doc, "|---|---|---:|---:|{}", "---:|".repeat(columns.len()));
    let ecosystems: Vec<&str> = {
        let mut e: Vec<&str> = rows.iter().map(|r| r.eco).collect();
        e.dedup();
        e.push("all");
        e
    };
    for eco in ecosystems {
        for when in ["head", DATED.0] {
            let (reviewed, counts) = totals.get(&(eco, when)).cloned().unwrap_or_default();
            let n: usize = counts.values().sum();
            let _ = writeln!(
                doc,
                "| **{eco}** | {when} | {reviewed} | {n} | {} |",
                cells(&counts)
            );
        }
    }
    let partial: Vec<&Row> = rows.iter().filter(|r| !r.left_out.is_empty()).collect();
    if !partial.is_empty() {
        doc.push_str(
            "\nReviewed without files the git directory lacks (the mirror omits large \
             files; none is a source file a verdict reads, nor the lock file):\n\n",
        );
        for r in partial {
            let _ = writeln!(
                doc,
                "- {} ({}, {}): {}",
                r.repo,
                r.when,
                r.commit,
                r.left_out.join(", ")
            );
        }
    }
    let failed: Vec<&Row> = rows.iter().filter(|r| r.counts.is_err()).collect();
    if !failed.is_empty() {
        doc.push_str("\nNot reviewed:\n\n");
        for r in failed {
            if let Err(why) = &r.counts {
                let at = if r.commit.is_empty() {
                    r.when.to_string()
                } else {
                    format!("{}, {}", r.when, r.commit)
                };
                let _ = writeln!(doc, "- {} ({at}): {why}", r.repo);
            }
        }
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
    use std::path::Path;
    use std::process::Command;

    use super::{
        Counts, DATED, Header, REPOS, Row, commits, count, dated_commit, document, has_file,
        is_verdict_source, missing_files, review_order,
    };

    /// The table has a row per repository and date, totals per ecosystem and date, and every
    /// row without counts under "Not reviewed" with its reason.
    #[test]
    fn the_document_totals_each_ecosystem_and_lists_what_was_not_reviewed() {
        let counts = |pairs: &[(&str, usize)]| -> Counts {
            pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };
        let row = |eco, repo, when, commit: &str, c: Result<Counts, String>| Row {
            eco,
            repo,
            lock: "requirements.txt",
            when,
            commit: commit.into(),
            counts: c,
            left_out: Vec::new(),
        };
        let mut rows = vec![
            row(
                "Python",
                "a/a",
                "head",
                "1111111 (2026-01-01)",
                Ok(Counts::new()),
            ),
            row(
                "Python",
                "a/a",
                DATED.0,
                "2222222 (2021-12-30)",
                Ok(counts(&[("reachable", 2), ("not reached", 1)])),
            ),
            row(
                "Python",
                "b/b",
                "head",
                "3333333 (2026-01-01)",
                Ok(counts(&[("reachable", 1)])),
            ),
            row(
                "Python",
                "b/b",
                DATED.0,
                "4444444 (2021-12-01)",
                Err("no requirements.txt in the repository at this commit".into()),
            ),
            row(
                "Go",
                "c/c",
                "head",
                "",
                Err("the run stopped before this row was reviewed".into()),
            ),
        ];
        rows[1].left_out = vec!["big.json".into()];
        let header = Header {
            command: "cargo xtask reach".into(),
            sources: vec!["osv-pypi-pypa.jsonl".into()],
            proven: "proven".into(),
            xtask_commit: "abc".into(),
            load: "1.0".into(),
        };
        let doc = document(&rows, &header);
        assert!(
            doc.contains("| Python | a/a | requirements.txt | 2022-01-01 | 2222222 (2021-12-30) | 3 | 1 | 2 |"),
            "{doc}"
        );
        assert!(
            doc.contains("| **Python** | head | 2 | 1 | 0 | 1 |"),
            "{doc}"
        );
        assert!(
            doc.contains("| **Python** | 2022-01-01 | 1 | 3 | 1 | 2 |"),
            "{doc}"
        );
        assert!(
            doc.contains("| **all** | 2022-01-01 | 1 | 3 | 1 | 2 |"),
            "{doc}"
        );
        assert!(doc.contains("| **Go** | head | 0 | 0 | 0 | 0 |"), "{doc}");
        assert!(
            doc.contains("- a/a (2022-01-01, 2222222 (2021-12-30)): big.json"),
            "{doc}"
        );
        assert!(
            doc.contains("- b/b (2022-01-01, 4444444 (2021-12-01)): no requirements.txt in the repository at this commit"),
            "{doc}"
        );
        assert!(
            doc.contains("- c/c (head): the run stopped before this row was reviewed"),
            "{doc}"
        );
    }

    /// A git directory that lacks a blob (as a mirror without large files does): that file is
    /// named, the others are not; a source file a verdict reads is told apart.
    #[test]
    fn the_files_whose_blobs_the_git_directory_lacks_are_named() {
        let dir = std::env::temp_dir().join(format!("xtask-reach-missing-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).expect("a temporary directory");
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
                .args(args)
                .output()
                .expect("git runs");
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        git(&["init", "-q"]);
        std::fs::write(dir.join("app.py"), "import yaml\n").expect("a file written");
        std::fs::write(dir.join("data/big.json"), "{\"big\": true}\n").expect("a file written");
        git(&["add", "."]);
        git(&["commit", "-qm", "c"]);
        let head = git(&["rev-parse", "HEAD"]);
        assert_eq!(missing_files(&dir, &head), Ok(Vec::new()));
        let blob = git(&["rev-parse", "HEAD:data/big.json"]);
        let object = dir.join(".git/objects").join(&blob[..2]).join(&blob[2..]);
        std::fs::remove_file(object).expect("the loose object removed");
        assert_eq!(
            missing_files(&dir, &head),
            Ok(vec!["data/big.json".to_string()])
        );
        assert!(is_verdict_source("app.py") && is_verdict_source("src/main.rs"));
        assert!(is_verdict_source("cmd/main.go") && !is_verdict_source("data/big.json"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_order_names_each_ecosystem_once_and_keeps_every_repository() {
        let order: Vec<String> = ["Python", "Rust", "Go"].map(String::from).to_vec();
        let indices = review_order(&order).expect("a full order");
        assert_eq!(indices.len(), REPOS.len());
        assert_eq!(REPOS[indices[0]].0, "Python");
        assert_eq!(REPOS[indices[REPOS.len() - 1]].0, "Go");
        let mut sorted = indices.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..REPOS.len()).collect::<Vec<_>>());
        for bad in [
            vec!["Python", "Rust"],
            vec!["Python", "Rust", "Go", "Go"],
            vec!["python", "Rust", "Go"],
        ] {
            let bad: Vec<String> = bad.into_iter().map(String::from).collect();
            let err = review_order(&bad).expect_err("not every ecosystem once");
            assert!(
                err.contains("--order must name each of Go, Rust, Python once"),
                "{err}"
            );
        }
    }

    #[test]
    fn the_dated_commit_is_the_newest_of_the_chain_committed_before_the_cutoff() {
        let cutoff = DATED.1;
        let log = format!(
            "c4 {}\nc3 {cutoff}\nnot a line\nc2 {}\nc1 {}\n",
            cutoff + 86_400,
            cutoff - 1,
            cutoff - 86_400
        );
        // At the cutoff is not before it; a line that does not read is skipped.
        assert_eq!(dated_commit(&log, cutoff), Some("c2"));
        // A chain whose committer times are not monotone (a rebase): the first older one
        // in chain order, not the oldest.
        let log = format!("c3 {}\nc2 {}\nc1 {}\n", cutoff + 1, cutoff - 10, cutoff - 5);
        assert_eq!(dated_commit(&log, cutoff), Some("c2"));
        assert_eq!(dated_commit(&format!("c1 {}\n", cutoff + 1), cutoff), None);
        assert_eq!(dated_commit("", cutoff), None);
    }

    /// A real repository: a branch's commit made before the cutoff but merged after it was
    /// not the repository's state on that date; a lock file added after the date is not in
    /// the dated commit.
    #[test]
    fn the_dated_commit_follows_the_first_parent_chain_of_a_real_repository() {
        let dir = std::env::temp_dir().join(format!("xtask-reach-dated-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let git = |args: &[&str], date: &str| {
            let out = Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
                .args(args)
                .env("GIT_AUTHOR_DATE", date)
                .env("GIT_COMMITTER_DATE", date)
                .output()
                .expect("git runs");
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        let write = |name: &str| std::fs::write(dir.join(name), name).expect("a file written");
        git(&["init", "-q", "-b", "main"], "2021-01-01T00:00:00Z");
        write("a");
        git(&["add", "a"], "2021-01-01T00:00:00Z");
        git(&["commit", "-qm", "a"], "2021-06-01T00:00:00Z");
        write("requirements.txt");
        git(&["add", "requirements.txt"], "2021-01-01T00:00:00Z");
        git(&["commit", "-qm", "pins"], "2021-12-20T00:00:00Z");
        let on_main = git(&["rev-parse", "HEAD"], "2021-01-01T00:00:00Z");
        git(&["checkout", "-qb", "topic"], "2021-01-01T00:00:00Z");
        write("b");
        git(&["add", "b"], "2021-01-01T00:00:00Z");
        git(&["commit", "-qm", "b"], "2021-12-31T12:00:00Z");
        git(&["checkout", "-q", "main"], "2021-01-01T00:00:00Z");
        git(
            &["merge", "-q", "--no-ff", "-m", "merge", "topic"],
            "2022-01-05T00:00:00Z",
        );
        write("poetry.lock");
        git(&["add", "poetry.lock"], "2021-01-01T00:00:00Z");
        git(&["commit", "-qm", "lock"], "2022-02-01T00:00:00Z");

        let gitdir = dir.join(".git");
        let log = commits(&gitdir).expect("git log");
        assert_eq!(dated_commit(&log, DATED.1), Some(on_main.as_str()));
        assert!(has_file(&gitdir, &on_main, "requirements.txt"));
        assert!(!has_file(&gitdir, &on_main, "poetry.lock"));
        assert!(!has_file(
            Path::new("/nonexistent"),
            &on_main,
            "requirements.txt"
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

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
