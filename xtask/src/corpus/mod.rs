//! `cargo xtask corpus bugsinpy|bugsjs`: Proven measured on real bugs (issues 16 and 30).
//!
//! Cases: the selection is fixed here, before any run, never chosen by outcome: for each
//! project of the corpus's list ([`bugsinpy::PROJECTS`], [`bugsjs::PROJECTS`]; or those
//! named with `--project`), its first `--limit` bugs by number (BugsInPy 8, BugsJS 5), run
//! in rounds (every project's first bug, then every second one, ...), so a run stopped
//! early has measured every project alike. Each case is a git repository this harness
//! makes ([`case::build_case`]): base = the fixed version's tree, change = one commit
//! bringing back the buggy version of the non-test files the fix touches.
//!
//! For each case, driven as a user would, through the `proven` binary:
//! 1. fidelity: `proven sandbox run` of the bug's own tests (selected by name) on the base
//!    and on the change: they must pass, then fail;
//! 2. only where fidelity holds: one `proven review` of the change, every model behind the
//!    scripted OpenAI-compatible server of proven-models (started in this process): the
//!    Planner names two risks; the Prover answers the first with the bug's own tests (a
//!    new test file beside them that runs them) and the second with another test of the
//!    same file (the control); the Skeptic concedes; the Fixer answers with the fix's
//!    edits. Reproduced: the first finding is `reproduced`; fix proved: it carries a proved
//!    patch (its test and the package's suite pass); a false proof: the control comes out
//!    `reproduced` although, run alone by the sandbox, it passes on both sides.
//!
//! Every miss gets a cause read from the run records (the sandbox's outcome, what could not
//! be prepared, a Python version the images lack) or the review's own words, and each
//! cause is of the world (the network, Python 2, a GPU or a browser, a release the registry
//! no longer serves) or Proven's ([`causes`]).

mod bugsinpy;
mod bugsjs;
mod case;
pub mod causes;
mod commits;
mod toolbench;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use proven_models::scripted::{Reply, ScriptedServer};
use serde_json::{Value, json};

use case::{CaseRepo, Edit};

const GENERATOR: &str = "corpus/generator";
const SKEPTIC: &str = "corpus/skeptic";
const GUARD: &str = "corpus/guard";
const BUG_CLAIM: &str = "corpus-bug-claim";
const CONTROL_CLAIM: &str = "corpus-control-claim";
/// Seconds a sandbox run of the bug's tests may take.
const RUN_TIMEOUT: u64 = 300;

/// One case of a corpus, as the harness runs it.
pub trait Case: Send + Sync {
    /// `black-1`, `Express-3`.
    fn id(&self) -> String;
    fn project(&self) -> &str;
    /// What the dataset says of the toolchain (BugsInPy's bug.info python_version,
    /// BugsJS's Node version).
    fn toolchain(&self) -> String;
    /// The sandbox's language (`proven sandbox run --lang`).
    fn language(&self) -> &'static str;
    /// A cause of the world the dataset's own data shows, read before any run (a bug whose
    /// Python is 2.x needs Python 2).
    fn world(&self) -> Option<String>;
    /// Builds the case repository under `dir` from the upstream under `repos`.
    fn build(&self, repos: &Path, dir: &Path) -> Result<CaseRepo, String>;
    /// Whether the case's upstream repository (with its revision) is under `repos`: a case
    /// whose upstream could not be fetched is named apart, never counted as a miss.
    fn available(&self, repos: &Path) -> Result<(), String>;
    /// The command that runs the bug's own tests (fidelity).
    fn bug_command(&self, case: &CaseRepo) -> Result<Vec<String>, String>;
    /// The Prover's test of the bug.
    fn bug_test(&self, case: &CaseRepo) -> Result<ProverTest, String>;
    /// Another test of the bug's test file, as the Prover's control test, and the command
    /// that runs it alone in the case's tree.
    fn control(&self, case: &CaseRepo) -> Result<Option<Control>, String>;
    /// The fix as the Fixer's edits.
    fn fix(&self, case: &CaseRepo) -> Vec<Edit>;
    /// The bug in words, for the claim ("BugsInPy black-1 (its test x fails on the change)").
    fn describe(&self) -> String;
    /// Whether an earlier session studied this case (ran it, read its misses and changed
    /// Proven for them): its figures are no longer a measure of unseen projects. The lists
    /// ([`bugsinpy::STUDIED`], [`bugsjs::STUDIED`]) are written in the code, from the
    /// cases the docs' earlier tables show, before any run that reports the split.
    fn studied(&self) -> bool;
    /// Whether the case is a bug (fidelity: its tests pass on the base and fail on the
    /// change); the tool bench's Go and Rust commits are not ([`commits`]).
    fn has_bug(&self) -> bool {
        true
    }
    /// Why the tool evidence's analyzer of the case's language would find nothing to run in
    /// its tree, read before any run (BugsJS: no ESLint configuration, or eslint not among
    /// the dev dependencies); Ok: it would run.
    fn tool_ready(&self, _repos: &Path) -> Result<(), String> {
        Ok(())
    }
}

/// A test as the scripted Prover answers it.
pub struct ProverTest {
    pub path: String,
    pub code: String,
    /// The tests of the file that show the claim.
    pub tests: Vec<String>,
}

/// A control: a test of the bug's file that is not the bug's.
pub struct Control {
    /// Its name in the file.
    pub name: String,
    pub test: ProverTest,
    /// The command that runs it alone in the case's tree.
    pub command: Vec<String>,
}

/// Which corpus a run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Corpus {
    BugsInPy,
    BugsJs,
    /// The tool bench's Go and Rust commits ([`commits`]): no dataset, no bug.
    Commits,
}

impl Corpus {
    fn title(self) -> &'static str {
        match self {
            Corpus::BugsInPy => "BugsInPy",
            Corpus::BugsJs => "BugsJS",
            Corpus::Commits => "Go and Rust commits",
        }
    }
}

struct Options {
    corpus: Corpus,
    /// The dataset: BugsInPy's checkout or git directory (--bugsinpy), BugsJS's
    /// bug-dataset (--bugsjs).
    dataset: PathBuf,
    repos: PathBuf,
    projects: Vec<String>,
    limit: Option<usize>,
    /// BugsInPy: the bugs from this number on (`--from`).
    from: u32,
    out: Option<PathBuf>,
    work: PathBuf,
    proven: Option<PathBuf>,
    /// Cases run at once.
    jobs: usize,
    /// Keep the cases a previous run finished (FILE.jsonl beside --out).
    resume: bool,
    /// Run nothing: print the table of the results file (with --resume).
    report_only: bool,
    /// Measure fidelity only; a later --resume run reviews the cases where it held.
    fidelity_only: bool,
    /// Review only the cases the results file says held fidelity and were not reviewed.
    review_only: bool,
    /// Run only the cases never studied (the held-out measure).
    measured_only: bool,
    /// The tool evidence's bench ([`toolbench`]) instead of the corpus's measure.
    tool_bench: bool,
    /// The tool bench's pairs of reviews per case.
    rounds: usize,
    /// Only these cases (`--case ID`, repeated), of the selection.
    only: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let corpus = match args.first().map(String::as_str) {
        Some("bugsinpy") => Corpus::BugsInPy,
        Some("bugsjs") => Corpus::BugsJs,
        Some("commits") => Corpus::Commits,
        _ => return Err(format!("which corpus? {}", usage())),
    };
    let mut o = Options {
        corpus,
        dataset: PathBuf::new(),
        repos: PathBuf::new(),
        projects: Vec::new(),
        limit: None,
        from: 1,
        out: None,
        work: std::env::temp_dir().join(format!("proven-corpus-{}", args[0])),
        proven: None,
        jobs: 1,
        resume: false,
        report_only: false,
        fidelity_only: false,
        review_only: false,
        measured_only: false,
        tool_bench: false,
        rounds: 1,
        only: Vec::new(),
    };
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--bugsinpy" if corpus == Corpus::BugsInPy => o.dataset = value(a)?.into(),
            "--bugsjs" if corpus == Corpus::BugsJs => o.dataset = value(a)?.into(),
            "--repos" => o.repos = value(a)?.into(),
            "--project" => o.projects.push(value(a)?),
            "--limit" => {
                let v = value(a)?;
                o.limit = Some(
                    v.parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| format!("--limit {v:?}: expected a positive number"))?,
                );
            }
            "--from" if corpus == Corpus::BugsInPy => {
                let v = value(a)?;
                o.from = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--from {v:?}: expected a positive bug number"))?;
            }
            "--out" => o.out = Some(value(a)?.into()),
            "--work" => o.work = value(a)?.into(),
            "--proven" => o.proven = Some(value(a)?.into()),
            "--resume" => o.resume = true,
            "--fidelity-only" => o.fidelity_only = true,
            "--measured-only" => o.measured_only = true,
            "--tool-bench" => o.tool_bench = true,
            "--case" => o.only.push(value(a)?),
            "--rounds" => {
                let v = value(a)?;
                o.rounds = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--rounds {v:?}: expected a positive number"))?;
            }
            // The second held-out selection, fixed in code before it ran.
            "--second-held-out" if corpus == Corpus::BugsInPy => {
                (o.from, o.limit) = (
                    bugsinpy::SECOND_HELD_OUT.0,
                    Some(bugsinpy::SECOND_HELD_OUT.1),
                );
                o.measured_only = true;
            }
            // The third, fixed in code before it ran.
            "--third-held-out" if corpus == Corpus::BugsInPy => {
                (o.from, o.limit) = (bugsinpy::THIRD_HELD_OUT.0, Some(bugsinpy::THIRD_HELD_OUT.1));
                o.measured_only = true;
            }
            // The fourth, fixed in code before it ran.
            "--fourth-held-out" if corpus == Corpus::BugsInPy => {
                (o.from, o.limit) = (
                    bugsinpy::FOURTH_HELD_OUT.0,
                    Some(bugsinpy::FOURTH_HELD_OUT.1),
                );
                o.measured_only = true;
            }
            // The fifth, fixed in code before it ran.
            "--fifth-held-out" if corpus == Corpus::BugsInPy => {
                (o.from, o.limit) = (bugsinpy::FIFTH_HELD_OUT.0, Some(bugsinpy::FIFTH_HELD_OUT.1));
                o.measured_only = true;
            }
            // The sixth, fixed in code before it ran.
            "--sixth-held-out" if corpus == Corpus::BugsInPy => {
                (o.from, o.limit) = (bugsinpy::SIXTH_HELD_OUT.0, Some(bugsinpy::SIXTH_HELD_OUT.1));
                o.measured_only = true;
            }
            // The seventh, fixed in code before it ran.
            "--seventh-held-out" if corpus == Corpus::BugsInPy => {
                (o.from, o.limit) = (
                    bugsinpy::SEVENTH_HELD_OUT.0,
                    Some(bugsinpy::SEVENTH_HELD_OUT.1),
                );
                o.measured_only = true;
            }
            "--review-only" => {
                o.resume = true;
                o.review_only = true;
            }
            "--report-only" => {
                o.resume = true;
                o.report_only = true;
            }
            "--jobs" => {
                let v = value(a)?;
                o.jobs = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--jobs {v:?}: expected a positive number"))?;
            }
            other => return Err(format!("unknown argument {other:?}; {}", usage())),
        }
    }
    if corpus == Corpus::Commits {
        if o.repos.as_os_str().is_empty() || !o.tool_bench {
            return Err(format!(
                "the Go and Rust commits are the tool bench's only: cargo xtask bench tool \
                 --commits --repos DIR; {}",
                usage()
            ));
        }
        return Ok(o);
    }
    if o.dataset.as_os_str().is_empty() || o.repos.as_os_str().is_empty() {
        let flag = match corpus {
            Corpus::BugsInPy => "--bugsinpy",
            Corpus::BugsJs | Corpus::Commits => "--bugsjs",
        };
        return Err(format!("{flag} and --repos are required; {}", usage()));
    }
    Ok(o)
}

pub fn usage() -> String {
    "cargo xtask corpus bugsinpy --bugsinpy PATH | bugsjs --bugsjs PATH, then --repos DIR \
     [--project NAME…] [--from N] [--limit N] [--out FILE] [--work DIR] [--proven BINARY] [--jobs N] \
     [--resume] [--report-only] [--fidelity-only] [--review-only] [--measured-only] \
     [--second-held-out (BugsInPy: --from 11 --limit 4 --measured-only)] \
     [--third-held-out (BugsInPy: --from 15 --limit 3 --measured-only)] \
     [--fourth-held-out (BugsInPy: --from 18 --limit 4 --measured-only)] \
     [--fifth-held-out (BugsInPy: --from 22 --limit 4 --measured-only)] \
     [--sixth-held-out (BugsInPy: --from 26 --limit 4 --measured-only)] \
     [--seventh-held-out (BugsInPy: --from 30 --limit 4 --measured-only)] [--case ID…] \
     [--tool-bench [--rounds N] (each case reviewed with and without the tool evidence, \
     timed; `cargo xtask bench tool` runs it)] | commits --tool-bench --repos DIR [--case \
     PROJECT…] [--rounds N] (the tool bench's Go and Rust commits)"
        .into()
}

/// What became of one case.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
struct CaseResult {
    id: String,
    project: String,
    /// What the dataset says of the toolchain (bug.info's python, BugsJS's Node).
    #[serde(alias = "python")]
    toolchain: String,
    fidelity: bool,
    reproduced: Option<bool>,
    fix_proved: Option<bool>,
    /// None: no control ran (no other test in the file, or no review).
    false_proof: Option<bool>,
    /// `proven replay` of the reproduced finding from the review's JSON report: every run
    /// holds again (None: nothing reproduced, or a result from before replays were run).
    #[serde(default)]
    replay: Option<bool>,
    /// Why fidelity, reproduction or the fix missed (with the stage).
    causes: Vec<String>,
    /// The environment-failure cause class, when a sandbox run proved nothing.
    env_cause: Option<String>,
    /// A cause of the world the dataset's data shows (read before the run).
    world: Option<String>,
    /// An earlier session had studied this case ([`Case::studied`]) when it was measured:
    /// a case studied after its measure keeps that measure as a held-out one.
    studied: bool,
    seconds: f64,
}

/// The cases in rounds: each project's first case, then each one's second, ...: a run
/// stopped early has measured every project alike.
fn in_rounds<T>(per_project: Vec<Vec<T>>) -> Vec<T> {
    let mut rounds: Vec<(usize, usize, T)> = Vec::new();
    for (pi, cases) in per_project.into_iter().enumerate() {
        for (round, c) in cases.into_iter().enumerate() {
            rounds.push((round, pi, c));
        }
    }
    rounds.sort_by_key(|(round, pi, _)| (*round, *pi));
    rounds.into_iter().map(|(_, _, c)| c).collect()
}

type Cases = Vec<Box<dyn Case>>;

/// The corpus's cases as the options select them, the dataset's revision and the rule that
/// selected them.
fn select_cases(o: &Options) -> Result<(Cases, String, String), String> {
    Ok(match o.corpus {
        Corpus::BugsInPy => {
            let data = bugsinpy::Dataset::open(&o.dataset)?;
            let limit = o.limit.unwrap_or(bugsinpy::LIMIT);
            let bugs = bugsinpy::selection(&data, &o.projects, o.from, limit)?;
            selected(o, bugs, limit, bugsinpy::PROJECTS.len(), data.revision())
        }
        Corpus::BugsJs => {
            let data = bugsjs::Dataset::open(&o.dataset)?;
            let limit = o.limit.unwrap_or(bugsjs::LIMIT);
            let bugs = bugsjs::selection(&data, &o.projects, limit)?;
            selected(o, bugs, limit, bugsjs::PROJECTS.len(), data.revision())
        }
        Corpus::Commits => (
            commits::selection(&o.repos)
                .into_iter()
                .map(|c| Box::new(c) as Box<dyn Case>)
                .collect(),
            "each project's head as fetched".into(),
            "each project's newest commit that changes a non-test source file".into(),
        ),
    })
}

/// A corpus's selected bugs as cases, with the dataset's revision and the selection's rule
/// (`projects` is how many the corpus has, when the options name none).
fn selected<C: Case + 'static>(
    o: &Options,
    bugs: Vec<C>,
    limit: usize,
    projects: usize,
    revision: String,
) -> (Cases, String, String) {
    let rule = format!(
        "the first {limit} bugs by number{} of each of {} projects",
        if o.from > 1 {
            format!(" from bug {}", o.from)
        } else {
            String::new()
        },
        if o.projects.is_empty() {
            projects
        } else {
            o.projects.len()
        }
    );
    (
        bugs.into_iter()
            .map(|b| Box::new(b) as Box<dyn Case>)
            .collect(),
        revision,
        rule,
    )
}

/// A case studied after its held-out measure keeps that measure in a resumed table: the
/// cases the results file holds unstudied.
fn measured_before(o: &Options) -> Vec<String> {
    match (&o.out, o.resume) {
        (Some(out), true) => std::fs::read_to_string(out.with_extension("jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<CaseResult>(l).ok())
            .filter(|r| !r.studied)
            .map(|r| r.id)
            .collect(),
        _ => Vec::new(),
    }
}

/// The results a previous run left in the results file (`--resume`), by case; without
/// `--resume` the file is removed.
fn earlier_results(
    o: &Options,
    results_file: Option<&Path>,
    cases: &[Box<dyn Case>],
) -> Result<Vec<(usize, CaseResult)>, String> {
    let mut earlier: Vec<(usize, CaseResult)> = Vec::new();
    if o.resume
        && let Some(file) = results_file
    {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let r: CaseResult = serde_json::from_str(line)
                .map_err(|e| format!("{}: a line does not read: {e}", file.display()))?;
            if let Some(i) = cases.iter().position(|c| c.id() == r.id) {
                earlier.retain(|(j, _)| *j != i);
                earlier.push((i, r));
            }
        }
    } else if let Some(file) = results_file {
        let _ = std::fs::remove_file(file);
    }
    Ok(earlier)
}

/// The cases not to run: all with --report-only; with --review-only all but those a
/// fidelity-only run left to review; else those finished before.
fn skipped(o: &Options, cases: usize, earlier: &[(usize, CaseResult)]) -> Vec<usize> {
    if o.report_only {
        (0..cases).collect()
    } else if o.review_only {
        // Only the reviews a fidelity-only run left (it may still be running beside).
        (0..cases)
            .filter(|i| {
                !earlier
                    .iter()
                    .any(|(j, r)| j == i && r.fidelity && r.reproduced.is_none())
            })
            .collect()
    } else {
        earlier
            .iter()
            .filter(|(_, r)| o.fidelity_only || !(r.fidelity && r.reproduced.is_none()))
            .map(|(i, _)| *i)
            .collect()
    }
}

/// The table of the cases' results, with the cases no run finished and those whose
/// upstream is not here named below it, never counted.
fn final_table(
    table: &Table<'_>,
    cases: &[Box<dyn Case>],
    unavailable: &[Box<dyn Case>],
    mut results: Vec<CaseResult>,
) -> String {
    // Cases of the list that no run finished are named, never counted.
    let not_run: Vec<String> = cases
        .iter()
        .map(|c| c.id())
        .filter(|id| !results.iter().any(|r| &r.id == id))
        .collect();
    results.retain(|r| cases.iter().any(|c| c.id() == r.id));
    let mut text = report(
        table.title,
        &results,
        table.revision,
        table.started,
        table.args,
    );
    if !not_run.is_empty() {
        let _ = writeln!(
            text,
            "\nNot run (the run was stopped before them; not counted above): {}.",
            not_run.join(", ")
        );
    }
    if !unavailable.is_empty() {
        let _ = writeln!(
            text,
            "\nNot run (their upstream repository is not under --repos: the fetch tool did not bring it; not counted above): {}.",
            ids(unavailable)
        );
    }
    text
}

/// The runtime the cases' reviews run on (one worker thread: each case's review is a
/// process of its own).
fn case_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}

/// Whether `--case NAME` names the case: its id, or for a Go or Rust commit (whose id holds
/// the commit chosen at the run) its project.
fn names(c: &dyn Case, name: &str) -> bool {
    c.id() == name || (!c.has_bug() && c.project() == name)
}

/// The cases' ids, comma-separated.
fn ids(cases: &[Box<dyn Case>]) -> String {
    cases.iter().map(|c| c.id()).collect::<Vec<_>>().join(", ")
}

/// What heads a table of results.
struct Table<'a> {
    title: &'a str,
    revision: &'a str,
    started: &'a str,
    args: &'a [String],
}

/// A finished case: one JSON line appended to the results file, and the table so far
/// written, so a long run can be read while it goes on.
fn record_case(
    done: &mut Vec<(usize, CaseResult)>,
    i: usize,
    r: CaseResult,
    results_file: Option<&Path>,
    out: Option<&Path>,
    table: &Table<'_>,
) {
    if let Some(file) = results_file
        && let Ok(line) = serde_json::to_string(&r)
    {
        use std::io::Write as _;
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .and_then(|mut f| writeln!(f, "{line}"));
    }
    done.push((i, r));
    done.sort_by_key(|(i, _)| *i);
    // The table so far, so a long run can be read while it goes on.
    if let Some(out) = out {
        let so_far: Vec<CaseResult> = done.iter().map(|(_, r)| r.clone()).collect();
        let _ = std::fs::write(
            out,
            report(
                table.title,
                &so_far,
                table.revision,
                table.started,
                table.args,
            ),
        );
    }
}

pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    let o = parse(args)?;
    let (cases, revision, rule) = select_cases(&o)?;
    // A case studied after its held-out measure keeps that measure in a resumed table.
    let measured_before = measured_before(&o);
    let cases: Vec<Box<dyn Case>> = cases
        .into_iter()
        .filter(|c| !(o.measured_only && c.studied() && !measured_before.contains(&c.id())))
        .filter(|c| o.only.is_empty() || o.only.iter().any(|id| names(c.as_ref(), id)))
        .collect();
    if let Some(missing) = o
        .only
        .iter()
        .find(|id| !cases.iter().any(|c| names(c.as_ref(), id)))
    {
        if o.corpus == Corpus::Commits {
            let names: Vec<&str> = commits::PROJECTS.iter().map(|p| p.0).collect();
            return Err(format!(
                "--case {missing}: no such project (the Go and Rust commits' projects: {})",
                names.join(", ")
            ));
        }
        return Err(format!(
            "--case {missing}: not in the selection (name its project with --project and \
             its number with --from/--limit, or leave them out)"
        ));
    }
    // Cases whose upstream is not here (pandas' and matplotlib's are larger than the fetch
    // tool brings) are named, never run or counted. --report-only runs nothing: every
    // result the results file holds is counted, whatever is under --repos now.
    let (cases, unavailable): (Cases, Cases) = cases
        .into_iter()
        .partition(|c| o.report_only || c.available(&o.repos).is_ok());
    if !unavailable.is_empty() {
        eprintln!(
            "corpus: {} cases whose upstream is not under {} are not run: {}",
            unavailable.len(),
            o.repos.display(),
            ids(&unavailable)
        );
    }
    // The tool bench on BugsJS without --case: each project's first case where ESLint runs.
    let cases = if o.tool_bench && o.corpus == Corpus::BugsJs && o.only.is_empty() {
        let (ready, not) = toolbench::first_ready(cases, &o.repos);
        for (id, why) in &not {
            eprintln!("tool bench: {id} left out: {why}");
        }
        ready
    } else {
        cases
    };
    let proven = match &o.proven {
        Some(p) => p.clone(),
        // Nothing runs: no binary is needed.
        None if o.report_only => PathBuf::from("proven"),
        None => build_proven(root)?,
    };
    if !o.report_only {
        if std::env::var_os("PROVEN_SANDBOX_CACHE_DIR").is_none() {
            let _ = SANDBOX_CACHE.set(o.work.join("sandbox-cache"));
        }
        match o.corpus {
            Corpus::BugsJs => era_images(
                root,
                &bugsjs::NODE_ERAS
                    .iter()
                    .map(|m| format!("node{m}"))
                    .collect::<Vec<_>>(),
            )?,
            Corpus::BugsInPy => era_images(
                root,
                &PYTHON_ERAS
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>(),
            )?,
            Corpus::Commits => {}
        }
    }
    let mut projects: Vec<&str> = cases.iter().map(|c| c.project()).collect();
    projects.sort_unstable();
    projects.dedup();
    let title = o.corpus.title();
    let started = chrono_now();
    let table = Table {
        title,
        revision: &revision,
        started: &started,
        args,
    };
    eprintln!(
        "corpus: {title}: {} cases of {} projects ({rule})",
        cases.len(),
        projects.len(),
    );
    let runtime = case_runtime()?;
    if o.tool_bench {
        let text = toolbench::run(&runtime, &proven, &o, &cases, args)?;
        print!("{text}");
        if let Some(out) = &o.out {
            std::fs::write(out, &text).map_err(|e| format!("write {}: {e}", out.display()))?;
        }
        return Ok(());
    }
    // Each finished case is one JSON line of FILE.jsonl beside --out; --resume keeps the
    // cases a previous run finished there and runs the others.
    let results_file = o.out.as_ref().map(|p| p.with_extension("jsonl"));
    let mut earlier = earlier_results(&o, results_file.as_deref(), &cases)?;
    // The dataset's word on the world (Python 2, a server the dataset starts) is read from
    // the dataset each time, not kept from the run that recorded the case.
    for (i, r) in &mut earlier {
        r.world = cases[*i].world();
    }
    // --report-only: no case runs; the table is the results file's.
    let skip = skipped(&o, cases.len(), &earlier);
    let pending: std::collections::BTreeMap<usize, CaseResult> = earlier
        .iter()
        .filter(|(i, _)| !skip.contains(i))
        .cloned()
        .collect();
    earlier.retain(|(i, _)| skip.contains(i));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<(usize, CaseResult)>> = std::sync::Mutex::new(earlier);
    std::thread::scope(|scope| {
        for _ in 0..o.jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(case) = cases.get(i) else { break };
                    if skip.contains(&i) {
                        continue;
                    }
                    let r = one_case(
                        &runtime,
                        &proven,
                        &o,
                        case.as_ref(),
                        pending.get(&i).cloned(),
                    );
                    if let Ok(mut done) = done.lock() {
                        let (file, out) = (results_file.as_deref(), o.out.as_deref());
                        record_case(&mut done, i, r, file, out, &table);
                    }
                }
            });
        }
    });
    let results: Vec<CaseResult> = done
        .into_inner()
        .map_err(|_| "a case thread panicked".to_string())?
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    let text = final_table(&table, &cases, &unavailable, results);
    print!("{text}");
    if let Some(out) = &o.out {
        std::fs::write(out, &text).map_err(|e| format!("write {}: {e}", out.display()))?;
    }
    Ok(())
}

fn one_case(
    runtime: &tokio::runtime::Runtime,
    proven: &Path,
    o: &Options,
    c: &dyn Case,
    earlier: Option<CaseResult>,
) -> CaseResult {
    {
        let t = Instant::now();
        let resumed = earlier.is_some();
        let mut r = earlier.unwrap_or_else(|| CaseResult {
            id: c.id(),
            project: c.project().to_string(),
            toolchain: c.toolchain(),
            world: c.world(),
            studied: c.studied(),
            ..CaseResult::default()
        });
        let before = if resumed { r.seconds } else { 0.0 };
        if let Err(e) = run_case(runtime, proven, o, c, &mut r, resumed) {
            r.causes.push(format!("harness: {e}"));
            r.env_cause.get_or_insert_with(|| "case not built".into());
        }
        r.seconds = before + t.elapsed().as_secs_f64();
        eprintln!(
            "corpus: {} fidelity={} reproduced={:?} fix={:?} false_proof={:?} {:.0}s {}",
            r.id,
            r.fidelity,
            r.reproduced,
            r.fix_proved,
            r.false_proof,
            r.seconds,
            r.causes.join(" | ")
        );
        r
    }
}

pub(crate) fn chrono_now() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

pub(crate) fn build_proven(root: &Path) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .args(["build", "-q", "-p", "proven-cli", "--bin", "proven"])
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if !status.success() {
        return Err("`cargo build -p proven-cli` failed".into());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join("debug").join("proven"))
}

/// The `proven` command with the settings every corpus run shares: no warm pool (one-off
/// runs on a busy machine), the Planner in one prompt (it is scripted: one answer a review,
/// never a bounded step's state), every other setting from the caller's environment (e.g.
/// PROVEN_SANDBOX_IMAGES naming the images of other Pythons).
fn proven_cmd(proven: &Path) -> Command {
    let mut cmd = Command::new(proven);
    cmd.env("NO_COLOR", "1")
        .env("PROVEN_SANDBOX_POOL_LANGUAGES", "")
        .env("PROVEN_MARKOVIAN", "off");
    if let Some(images) = ERA_IMAGES.get() {
        cmd.env("PROVEN_SANDBOX_IMAGES", images);
    }
    if let Some(cache) = SANDBOX_CACHE.get() {
        cmd.env("PROVEN_SANDBOX_CACHE_DIR", cache);
    }
    cmd
}

/// One cache of prepared layers for every run of a corpus run, unless the caller's
/// PROVEN_SANDBOX_CACHE_DIR names one: a case's review gets the layers its fidelity run
/// prepared from the same tree, as a service's later review of a repository gets its
/// earlier one's (the cache is keyed by what was prepared, tenant and repository), instead
/// of preparing again in the review's fresh data directory.
static SANDBOX_CACHE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// The images of the toolchains the corpus's projects were written for, when the caller's
/// PROVEN_SANDBOX_IMAGES names none: built here (`scripts/sandbox-images nodeNN …`, a no-op
/// when current) and offered to every run, so one command measures on a fresh machine.
static ERA_IMAGES: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The Pythons of BugsInPy's projects' era beside the default image's (its bugs date from
/// 2013–2020: a project that names only 3.5–3.8 runs on the newest of them it names).
const PYTHON_ERAS: &[&str] = &["python3.6", "python3.7", "python3.8"];

/// `names`: the images' names as `scripts/sandbox-images` takes them (`node8`, `python3.6`).
fn era_images(root: &Path, names: &[String]) -> Result<(), String> {
    if std::env::var_os("PROVEN_SANDBOX_IMAGES").is_some() {
        return Ok(());
    }
    eprintln!(
        "corpus: building the images {} (scripts/sandbox-images)",
        names.join(" ")
    );
    let status = Command::new(root.join("scripts/sandbox-images"))
        .args(names)
        .status()
        .map_err(|e| format!("cannot run scripts/sandbox-images: {e}"))?;
    if !status.success() {
        return Err(format!("scripts/sandbox-images {} failed", names.join(" ")));
    }
    let images: Vec<String> = names
        .iter()
        .map(|n| format!("{n}=proven-sandbox-{n}:local"))
        .collect();
    let _ = ERA_IMAGES.set(images.join(","));
    Ok(())
}

/// One sandbox run's record, as `proven sandbox run` printed it.
struct Run {
    code: Option<i32>,
    record: Value,
    stderr: String,
}

impl Run {
    fn outcome(&self) -> String {
        match &self.record["outcome"] {
            Value::String(s) => s.clone(),
            Value::Object(m) => m
                .get("kind")
                .or_else(|| m.get("status"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| m.keys().next().cloned())
                .unwrap_or_default(),
            Value::Null => "no record".into(),
            other => other.to_string(),
        }
    }
}

/// The words of a run whose project build the preparation's time cut short, and which
/// the next preparation of the same tree goes on from (prepare.py's `keep_for_resume`).
const BUILD_GOES_ON: &str = "kept for the next preparation of this tree to go on from";

/// Times a run whose build the preparation's time cut short is run again, as a user runs
/// a review again: each goes on from what the one before built.
const BUILD_RUNS: usize = 3;

/// One sandbox run of `command`; again (at most [`BUILD_RUNS`] in all) while the project's
/// build was cut short and kept for the next preparation to go on from.
fn sandbox_run(
    proven: &Path,
    lang: &str,
    repo: &Path,
    rev: &str,
    command: &[String],
) -> Result<Run, String> {
    let mut run = sandbox_run_once(proven, lang, repo, rev, command)?;
    for _ in 1..BUILD_RUNS {
        let goes_on = run.record["dependencies"]["notes"]
            .as_array()
            .is_some_and(|n| {
                n.iter()
                    .any(|n| n.as_str().is_some_and(|n| n.contains(BUILD_GOES_ON)))
            });
        if !goes_on {
            break;
        }
        run = sandbox_run_once(proven, lang, repo, rev, command)?;
    }
    Ok(run)
}

fn sandbox_run_once(
    proven: &Path,
    lang: &str,
    repo: &Path,
    rev: &str,
    command: &[String],
) -> Result<Run, String> {
    let out = proven_cmd(proven)
        .args(["sandbox", "run", "--repo"])
        .arg(repo)
        .args(["--rev", rev, "--lang", lang, "--timeout"])
        .arg(RUN_TIMEOUT.to_string())
        // As a review does: what the project does not pin, resolved as of its base's time
        // (both case commits carry the fixed commit's time).
        .args(["--resolve-before", "rev"])
        // As a review runs a selected test: after what the project's suite runs before its
        // runner (bower's Gruntfile makes the git repositories its tests fetch from).
        .arg("--after-setup")
        .arg("--")
        .args(command)
        .output()
        .map_err(|e| format!("run {}: {e}", proven.display()))?;
    let record = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    Ok(Run {
        code: out.status.code(),
        record,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

fn run_case(
    runtime: &tokio::runtime::Runtime,
    proven: &Path,
    o: &Options,
    c: &dyn Case,
    r: &mut CaseResult,
    resumed: bool,
) -> Result<(), String> {
    let case = c.build(&o.repos, &o.work.join(c.id()))?;
    if resumed {
        // A case whose fidelity a fidelity-only run measured: its review now.
        return review_case(runtime, proven, c, &case, r);
    }
    let command = c.bug_command(&case)?;
    let lang = c.language();
    let base = sandbox_run(proven, lang, &case.dir, &case.base, &command)?;
    if base.code != Some(0) {
        let why = cause(&base);
        r.causes.push(format!("fidelity: base {}", why.1));
        r.env_cause = Some(why.0);
        return Ok(());
    }
    let change = sandbox_run(proven, lang, &case.dir, &case.change, &command)?;
    if change.code != Some(1) {
        let why = cause(&change);
        let mut words = format!("fidelity: change {}", why.1);
        if change.code == Some(0) && lang == "python" {
            let locale = locale_check(proven, &case, &command)?;
            words.push_str(&locale);
            if !locale.contains(causes::NOT_UTF8_ONLY) {
                words.push_str(&accelerator_check(proven, &case, &command)?);
            }
        }
        r.causes.push(words);
        r.env_cause = Some(why.0);
        return Ok(());
    }
    r.fidelity = true;
    if o.fidelity_only {
        return Ok(());
    }
    review_case(runtime, proven, c, &case, r)
}

/// The environment of a locale whose encoding is not UTF-8: POSIX's C, as Windows' code
/// pages and a container with no locale set (BugsInPy's own) have. Python 3.7 and later
/// would otherwise coerce C to UTF-8 (PEP 538) or enter UTF-8 mode (PEP 540).
const NOT_UTF8_LOCALE: &[&str] = &[
    "env",
    "LC_ALL=C",
    "LANG=C",
    "PYTHONUTF8=0",
    "PYTHONCOERCECLOCALE=0",
];

/// The words a locale check adds to a miss whose change passed: a bug in code that reads
/// or writes text in the locale's encoding (`open()` with none given) shows only where that
/// encoding is not UTF-8, and a sandbox runs as a Linux CI runner does, in C.UTF-8. Both
/// sides run again under the C locale; the bug's test failing on the change and passing
/// on the base there is what shows it, measured and never decided by hand
/// ([`causes::world_cause`] reads these words).
fn locale_check(proven: &Path, case: &CaseRepo, command: &[String]) -> Result<String, String> {
    let in_c: Vec<String> = NOT_UTF8_LOCALE
        .iter()
        .map(|w| w.to_string())
        .chain(command.iter().cloned())
        .collect();
    both_sides_again(
        proven,
        case,
        &in_c,
        "under the C locale",
        causes::NOT_UTF8_ONLY,
    )
}

/// Runs the bug's command, changed (`command`), on the change and then the base: `shows`
/// when the change fails and the base passes there, else words saying what `there` gave.
fn both_sides_again(
    proven: &Path,
    case: &CaseRepo,
    command: &[String],
    there: &str,
    shows: &str,
) -> Result<String, String> {
    let change = sandbox_run(proven, "python", &case.dir, &case.change, command)?;
    if change.code != Some(1) {
        return Ok(format!("; {there} the change passed too"));
    }
    let base = sandbox_run(proven, "python", &case.dir, &case.base, command)?;
    Ok(if base.code == Some(0) {
        format!("; {shows}")
    } else {
        format!("; {there} the change failed, and so did the base")
    })
}

/// Optional accelerators a project's CI also runs without, in an environment of its own
/// (sanic's tox `no-ext`: SANIC_NO_UVLOOP, SANIC_NO_UJSON): a test written for the plain
/// path (`if not uvloop_installed():`) does nothing where the accelerator is installed.
const ACCELERATORS: &[&str] = &["uvloop", "ujson", "orjson", "rapidjson", "cchardet"];

/// `command` with the [`ACCELERATORS`] hidden from Python: a `sitecustomize` on the path
/// makes each import of them fail, as where they were never installed.
fn without_accelerators(command: &[String]) -> Vec<String> {
    let hide = format!(
        "import sys\nfor m in {:?}:\n    sys.modules[m] = None\n",
        ACCELERATORS
    );
    let script = format!(
        "mkdir -p /tmp/proven-no-accelerators && printf '%s' '{hide}' > /tmp/proven-no-accelerators/sitecustomize.py && PYTHONPATH=/tmp/proven-no-accelerators${{PYTHONPATH:+:$PYTHONPATH}} exec \"$@\""
    );
    ["sh", "-c", &script, "sh"]
        .iter()
        .map(|w| w.to_string())
        .chain(command.iter().cloned())
        .collect()
}

/// The words an accelerator check adds to a miss whose change passed: both sides run
/// again with the [`ACCELERATORS`] hidden; the bug's test failing on the change and
/// passing on the base there shows a test that runs only without them, measured and never
/// decided by hand ([`causes::world_cause`] reads these words).
fn accelerator_check(proven: &Path, case: &CaseRepo, command: &[String]) -> Result<String, String> {
    both_sides_again(
        proven,
        case,
        &without_accelerators(command),
        "without the optional accelerators",
        causes::WITHOUT_ACCELERATORS_ONLY,
    )
}

/// (cause class, the cause in words) of a run that did not end as expected.
/// What the run's dependency preparation did not prepare, each with its reason cut short.
fn not_prepared(deps: &Value) -> Vec<String> {
    deps["not_prepared"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|n| {
                    format!(
                        "{} ({})",
                        n["what"].as_str().unwrap_or_default(),
                        n["reason"]
                            .as_str()
                            .unwrap_or_default()
                            .chars()
                            .take(200)
                            .collect::<String>()
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The run output's telling error line: pytest's `E   ...Error`, else any error line.
fn error_line(output: &str) -> String {
    output
        .lines()
        .rev()
        .find(|l| l.starts_with("E  ") && l.contains("Error"))
        .or_else(|| {
            output.lines().rev().find(|l| {
                l.starts_with("E ")
                    || l.contains("Error:")
                    || l.contains("ERROR")
                    || l.contains("error:")
            })
        })
        .map(|l| l.trim().chars().take(160).collect::<String>())
        .unwrap_or_default()
}

fn cause(run: &Run) -> (String, String) {
    let rec = &run.record;
    if rec.is_null() {
        // The line that says what failed (`proven: preparing … failed: …`, npm's `code`
        // and message), not the last one (npm's "a complete log … at PATH").
        let said: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| {
                l.starts_with("proven:")
                    || l.contains("ERR! code")
                    || l.contains("error code")
                    || l.contains("ERR! 40")
                    || l.contains("ERR! notarget")
            })
            .take(3)
            .collect();
        let words = if said.is_empty() {
            run.stderr.lines().last().unwrap_or("no output").to_string()
        } else {
            said.join(" / ")
        };
        let words: String = words.chars().take(600).collect();
        return ("sandbox error".into(), format!("no run record: {words}"));
    }
    let outcome = run.outcome();
    let reason = rec["outcome"]["reason"]
        .as_str()
        .or_else(|| {
            rec["outcome"]
                .as_object()
                .and_then(|m| m.values().next())
                .and_then(|v| v["reason"].as_str())
        })
        .unwrap_or_default()
        .to_string();
    let deps = &rec["dependencies"];
    let not_prepared = not_prepared(deps);
    let notes: Vec<String> = deps["notes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let output = format!(
        "{}{}",
        rec["output"]["head"].as_str().unwrap_or_default(),
        rec["output"]["tail"].as_str().unwrap_or_default()
    );
    let error_line = error_line(&output);
    let python_note = notes
        .iter()
        .find(|n| n.to_lowercase().contains("python"))
        .cloned();
    let class = if rec["timed_out"].as_bool() == Some(true) {
        "timeout".to_string()
    } else if output.contains("ModuleNotFoundError") || output.contains("ImportError") {
        if let Some(m) = module_not_found(&output) {
            format!("missing module {m}")
        } else {
            "import error".into()
        }
    } else if output.contains("SyntaxError") && python_note.is_some() {
        "python version".into()
    } else if output.contains("ERROR collecting") || output.contains("errors during collection") {
        "collection error".into()
    } else if outcome == "passed" {
        "test passed on the change".into()
    } else if outcome == "test_failed" {
        "test failed on the base".into()
    } else {
        format!(
            "environment: {}",
            reason.chars().take(60).collect::<String>()
        )
    };
    let mut words = outcome.clone();
    if !reason.is_empty() {
        let _ = write!(words, " ({})", reason.chars().take(120).collect::<String>());
    }
    if !error_line.is_empty() {
        let _ = write!(words, "; {error_line}");
    }
    if !not_prepared.is_empty() {
        let _ = write!(words, "; not prepared: {}", not_prepared.join(", "));
    }
    if let Some(n) = python_note {
        let _ = write!(words, "; {n}");
    }
    // A service the project's CI starts that the sandbox has not (MongoDB), as the
    // record's setup lines name it.
    for line in rec["setup"].as_array().into_iter().flatten() {
        if let Some(l) = line.as_str().filter(|l| l.contains(" not started: ")) {
            let _ = write!(words, "; {l}");
        }
    }
    (class, words)
}

fn module_not_found(output: &str) -> Option<String> {
    let at = output.find("No module named ")?;
    let rest = &output[at + "No module named ".len()..];
    Some(
        rest.trim_start_matches(['\'', '"'])
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            .collect(),
    )
}

/// The scripted models' answers for a case: a safe guard, the Planner's risks (the bug's
/// and the control's), the Fixer's edits, the Prover's tests and a conceding Skeptic.
fn script_models(
    server: &ScriptedServer,
    c: &dyn Case,
    case: &CaseRepo,
    bug_test: &ProverTest,
    control: Option<&Control>,
    path: &str,
) {
    let id = c.id();
    server.on(
        Some(GUARD),
        "",
        vec![Reply::Json(
            json!({"User Safety": "safe", "Response Safety": "safe"}),
        )],
    );
    let mut risks = vec![json!({
        "title": format!("{id} regresses"),
        "claim": format!("{BUG_CLAIM}: the change brings back {}", c.describe()),
        "path": path, "evidence": "test"})];
    if let Some(k) = control {
        risks.push(json!({
            "title": format!("{id} control"),
            "claim": format!("{CONTROL_CLAIM}: the change breaks what {} tests", k.name),
            "path": path, "evidence": "test"}));
    }
    server.on(
        Some(GENERATOR),
        "You are the Planner",
        vec![Reply::Json(json!({ "risks": risks }))],
    );
    let edits: Vec<Value> = c
        .fix(case)
        .into_iter()
        .map(|e| json!({"path": e.path, "old_text": e.old_text, "new_text": e.new_text}))
        .collect();
    server.on(
        Some(GENERATOR),
        "You are the Fixer",
        vec![Reply::Json(
            json!({"edits": edits, "explanation": format!("the fix of {}", c.describe())}),
        )],
    );
    server.on(
        Some(GENERATOR),
        BUG_CLAIM,
        vec![Reply::Json(json!({
            "test_path": bug_test.path,
            "test_code": bug_test.code,
            "tests": bug_test.tests,
        }))],
    );
    if let Some(k) = control {
        server.on(
            Some(GENERATOR),
            CONTROL_CLAIM,
            vec![Reply::Json(json!({
                "test_path": k.test.path,
                "test_code": k.test.code,
                "tests": k.test.tests,
            }))],
        );
    }
    server.on(
        Some(SKEPTIC),
        "You are the Skeptic",
        vec![Reply::Json(json!({"verdict": "conceded",
            "reason": "the change run fails where the base run passes",
            "artifact": "the bug's own test"}))],
    );
}

/// Runs `proven review` of the case against the scripted models; its report is kept beside
/// the case.
fn run_review(proven: &Path, case: &CaseRepo, server: &ScriptedServer) -> Result<Value, String> {
    run_review_as(proven, case, server, &[], &beside(&case.dir, "review.json"))
}

/// [`run_review`] with settings of the environment set (Some) or removed (None), its report
/// kept in `report`.
fn run_review_as(
    proven: &Path,
    case: &CaseRepo,
    server: &ScriptedServer,
    env: &[(&str, Option<&str>)],
    report: &Path,
) -> Result<Value, String> {
    let data_dir = tempfile_dir(&case.dir)?;
    let doc = review_in(proven, case, server, env, report, &data_dir);
    let _ = std::fs::remove_dir_all(&data_dir);
    doc
}

/// [`run_review_as`] with its data directory given (kept: the caller reads the review's
/// trace from it, then removes it).
fn review_in(
    proven: &Path,
    case: &CaseRepo,
    server: &ScriptedServer,
    env: &[(&str, Option<&str>)],
    report: &Path,
    data_dir: &Path,
) -> Result<Value, String> {
    let mut cmd = proven_cmd(proven);
    for (key, value) in env {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    for role in ["GENERATOR", "SKEPTIC", "GUARDRAIL"] {
        cmd.env(format!("PROVEN_{role}_BASE_URL"), &server.base_url);
    }
    let out = cmd
        .env("PROVEN_AGENTS", "on")
        .env("PROVEN_GENERATOR_MODEL", GENERATOR)
        .env("PROVEN_SKEPTIC_MODEL", SKEPTIC)
        .env("PROVEN_GUARDRAIL_MODEL", GUARD)
        .env("PROVEN_DATA_DIR", data_dir)
        .arg("review")
        .arg("--repo")
        .arg(&case.dir)
        .args(["--base", &case.base, "--format", "json"])
        .output()
        .map_err(|e| format!("run proven review: {e}"))?;
    // What it said on stderr stays beside the report, for a review that printed none.
    let _ = std::fs::write(report.with_extension("stderr"), &out.stderr);
    let doc: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "proven review printed no report ({e}; {}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or("nothing on stderr")
        )
    })?;
    let _ = std::fs::write(report, &out.stdout);
    Ok(doc)
}

/// `proven trace REVIEW_ID` of a review kept in `data_dir`: its JSON lines.
fn review_trace(proven: &Path, data_dir: &Path, review_id: &str) -> Result<String, String> {
    let out = proven_cmd(proven)
        .env("PROVEN_DATA_DIR", data_dir)
        .args(["trace", review_id])
        .output()
        .map_err(|e| format!("run proven trace: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "proven trace {review_id}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `proven replay` of a reproduced finding from the report the review left beside the case
/// (issue 34: anyone can run a finding's evidence again): holds when every run holds.
fn replay(proven: &Path, case: &CaseRepo, finding: &Value, r: &mut CaseResult) {
    let report = beside(&case.dir, "review.json");
    let id = finding["id"].as_str().unwrap_or_default();
    let out = proven_cmd(proven)
        .arg("replay")
        .arg(&report)
        .arg(id)
        .arg("--repo")
        .arg(&case.dir)
        .arg("--json")
        .output();
    let doc: Option<Value> = out
        .as_ref()
        .ok()
        .and_then(|o| serde_json::from_slice(&o.stdout).ok());
    let holds = doc.as_ref().and_then(|d| d["holds"].as_bool());
    r.replay = Some(holds == Some(true));
    if holds != Some(true) {
        let why = match (&out, &doc) {
            (Err(e), _) => format!("could not run: {e}"),
            (Ok(o), None) => String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("no report")
                .to_string(),
            (Ok(_), Some(d)) => d["findings"]
                .to_string()
                .chars()
                .take(300)
                .collect::<String>(),
        };
        r.causes.push(format!("replay: does not hold: {why}"));
    }
}

/// Whether the control's finding is a false proof: reproduced while the control, run
/// alone, passes on both sides.
fn judge_control(
    proven: &Path,
    lang: &str,
    case: &CaseRepo,
    k: &Control,
    doc: &Value,
    id: &str,
    r: &mut CaseResult,
) -> Result<(), String> {
    let c = &k.name;
    match control_seen(doc, &format!("{id} control")) {
        ControlSeen::NeverRan { why } => {
            // Not a control: it cannot be a false proof, so it is not counted as one run.
            r.causes.push(format!("control {c} never ran: {why}"));
        }
        ControlSeen::NotReproduced => r.false_proof = Some(false),
        ControlSeen::Reproduced => {
            // Reproduced: a false proof only when the control, run alone, passes on both
            // sides (otherwise it does test what the change broke).
            let base = sandbox_run(proven, lang, &case.dir, &case.base, &k.command)?;
            let change = sandbox_run(proven, lang, &case.dir, &case.change, &k.command)?;
            let both_pass = base.code == Some(0) && change.code == Some(0);
            r.false_proof = Some(both_pass);
            if !both_pass {
                r.causes.push(format!(
                    "control {c} is not unrelated: alone it gives {} on the base, {} on the change",
                    base.outcome(),
                    change.outcome()
                ));
            }
        }
    }
    Ok(())
}

fn review_case(
    runtime: &tokio::runtime::Runtime,
    proven: &Path,
    c: &dyn Case,
    case: &CaseRepo,
    r: &mut CaseResult,
) -> Result<(), String> {
    let id = c.id();
    let bug_test = c.bug_test(case)?;
    let control = c.control(case)?;
    let path = risk_path(c.language(), case);
    let server = runtime.block_on(ScriptedServer::start());
    script_models(&server, c, case, &bug_test, control.as_ref(), &path);
    let doc = run_review(proven, case, &server)?;
    let findings = doc["findings"].as_array().cloned().unwrap_or_default();
    let find = |title: &str| findings.iter().find(|f| f["title"] == title).cloned();
    match find(&format!("{id} regresses")) {
        Some(f) if f["proof_level"] == "reproduced" => {
            r.reproduced = Some(true);
            replay(proven, case, &f, r);
            if f["patch"].is_object() {
                r.fix_proved = Some(true);
            } else {
                r.fix_proved = Some(false);
                // The report keeps the last try's reason; an earlier try's is in the prompt
                // of the try after it ("Your last patch did not hold: …").
                let first_try = server
                    .received()
                    .iter()
                    .map(|q| q.text())
                    .filter(|t| t.contains("You are the Fixer") && t.contains(&id))
                    .find_map(|t| {
                        t.split_once("Your last patch did not hold: ")
                            .map(|(_, why)| why.chars().take(300).collect::<String>())
                    });
                r.causes.push(format!(
                    "fix: {}{}",
                    f["fix_not_proved"]["reason"]
                        .as_str()
                        .unwrap_or("no patch and no reason")
                        .chars()
                        .take(300)
                        .collect::<String>(),
                    first_try
                        .map(|w| format!(" (the first try: {w})"))
                        .unwrap_or_default()
                ));
            }
        }
        Some(f) => {
            r.reproduced = Some(false);
            r.causes.push(format!(
                "reproduce: the finding is {}: {}",
                f["proof_level"],
                evidence_words(&f)
            ));
        }
        None => {
            r.reproduced = Some(false);
            r.causes
                .push(format!("reproduce: no finding ({})", unproven_words(&doc)));
        }
    }
    if let Some(k) = &control {
        judge_control(proven, c.language(), case, k, &doc, &id, r)?;
    }
    Ok(())
}

/// The file the risks are about: the first reverted file of the case's language (Proven
/// chooses the Prover's language by it), else the first reverted file.
fn risk_path(language: &str, case: &CaseRepo) -> String {
    let extensions: &[&str] = match language {
        "python" => &[".py"],
        "node" => &[".js", ".mjs", ".cjs"],
        "go" => &[".go"],
        "rust" => &[".rs"],
        _ => &[],
    };
    case.reverted
        .iter()
        .map(|(p, _, _)| p)
        .find(|p| extensions.iter().any(|e| p.ends_with(e)))
        .or_else(|| case.reverted.first().map(|(p, _, _)| p))
        .cloned()
        .unwrap_or_default()
}

/// What the review made of the control.
#[derive(Debug, PartialEq, Eq)]
enum ControlSeen {
    /// Its test never ran on both sides to a result (the Prover's test refused, the
    /// sandbox failing, or only environment errors): no control at all.
    NeverRan { why: String },
    /// It ran and proved nothing: the control held.
    NotReproduced,
    /// A finding: a false proof unless the control, run alone, fails on a side.
    Reproduced,
}

/// The control of `doc` (the review's JSON report): the finding titled `title`, else the
/// unproven entry of the control's claim, read by the runs it carries. A run happened when
/// the test ran to a result (passed, or a test failed); an environment error ran nothing.
fn control_seen(doc: &Value, title: &str) -> ControlSeen {
    let empty = Vec::new();
    let finding = doc["findings"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .find(|f| f["title"] == title);
    let (runs, why): (Vec<&Value>, String) = match finding {
        Some(f) if f["proof_level"] == "reproduced" => return ControlSeen::Reproduced,
        Some(f) => (
            f["evidence"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .map(|e| &e["run"])
                .collect(),
            format!("its finding is {}", f["proof_level"]),
        ),
        None => match doc["unproven"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .find(|u| {
                u["claim"]
                    .as_str()
                    .is_some_and(|c| c.contains(CONTROL_CLAIM))
            }) {
            Some(u) => (
                u["runs"].as_array().unwrap_or(&empty).iter().collect(),
                u["reason"].as_str().unwrap_or("no reason").to_string(),
            ),
            None => (Vec::new(), "the review names no control".into()),
        },
    };
    let ran = |side: &str| {
        runs.iter().any(|r| {
            r["side"] == side && (r["outcome"] == "passed" || r["outcome"] == "test_failed")
        })
    };
    if ran("base") && ran("change") {
        ControlSeen::NotReproduced
    } else {
        ControlSeen::NeverRan {
            why: why.chars().take(300).collect(),
        }
    }
}

/// `DIR.suffix` beside a case's directory (its name may hold a dot: `Hessian.js-1`).
fn beside(case: &Path, suffix: &str) -> PathBuf {
    let mut name = case.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{suffix}"));
    case.with_file_name(name)
}

fn tempfile_dir(case: &Path) -> Result<PathBuf, String> {
    let dir = beside(case, "data");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    Ok(dir)
}

fn evidence_words(f: &Value) -> String {
    let runs: Vec<String> = f["evidence"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    format!(
                        "{} {}{}",
                        e["run"]["side"].as_str().unwrap_or_default(),
                        e["run"]["outcome"].as_str().unwrap_or_default(),
                        e["run"]["environment"]
                            .as_array()
                            .filter(|a| !a.is_empty())
                            .map(|a| format!(" [{}]", a.len()))
                            .unwrap_or_default()
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    format!("runs: {}", runs.join(", "))
}

fn unproven_words(doc: &Value) -> String {
    let mut words = Vec::new();
    for key in ["not_proven", "unproven", "incomplete", "errors", "status"] {
        if !doc[key].is_null() {
            words.push(format!(
                "{key}: {}",
                doc[key].to_string().chars().take(300).collect::<String>()
            ));
        }
    }
    words.join("; ")
}

fn pct(n: usize, d: usize) -> String {
    if d == 0 {
        "-".into()
    } else {
        format!("{:.0}%", 100.0 * n as f64 / d as f64)
    }
}

/// One row of the summary table: a group of cases' fidelity, reproductions, fixes, false
/// proofs, fidelity misses by cause and seconds per case.
fn summary_row(s: &mut String, name: &str, rs: &[&CaseResult]) {
    let n = rs.len();
    let fid = rs.iter().filter(|r| r.fidelity).count();
    let rep = rs.iter().filter(|r| r.reproduced == Some(true)).count();
    // Faithful cases whose review ran (a stopped run leaves some unreviewed).
    let reviewed = rs.iter().filter(|r| r.reproduced.is_some()).count();
    let fix = rs.iter().filter(|r| r.fix_proved == Some(true)).count();
    let controls = rs.iter().filter(|r| r.false_proof.is_some()).count();
    let fp = rs.iter().filter(|r| r.false_proof == Some(true)).count();
    let replayed = rs.iter().filter(|r| r.replay.is_some()).count();
    let holds = rs.iter().filter(|r| r.replay == Some(true)).count();
    let mut causes: Vec<(String, usize)> = Vec::new();
    for c in rs.iter().filter_map(|r| r.env_cause.clone()) {
        match causes.iter_mut().find(|(k, _)| *k == c) {
            Some((_, n)) => *n += 1,
            None => causes.push((c, 1)),
        }
    }
    let causes = causes
        .iter()
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect::<Vec<_>>()
        .join("; ");
    let secs = rs.iter().map(|r| r.seconds).sum::<f64>() / n.max(1) as f64;
    let _ = writeln!(
        s,
        "| {name} | {n} | {fid}/{n} ({}) | {rep}/{reviewed} ({}) | {fix}/{reviewed} ({}) | {fp} ({controls}) | {holds}/{replayed} | {} | {secs:.0} |",
        pct(fid, n),
        pct(rep, reviewed),
        pct(fix, reviewed),
        if causes.is_empty() {
            "-".into()
        } else {
            causes
        }
    );
}

fn report(
    title: &str,
    results: &[CaseResult],
    revision: &str,
    started: &str,
    args: &[String],
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {title} corpus: Proven on real bugs\n");
    let _ = writeln!(
        s,
        "{title} commit `{revision}`; run started {started}; command: `cargo xtask corpus {}`; machine: {} cores, load average (1 min) {}.\n",
        args.join(" "),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|t| t.split_whitespace().next().map(str::to_string))
            .unwrap_or_else(|| "?".into())
    );
    let _ = writeln!(
        s,
        "| project | cases | fidelity | reproduced (of faithful cases reviewed) | fix proved (of faithful cases reviewed) | false proofs (controls run) | `proven replay` holds (of reproduced replayed) | fidelity misses by cause | s/case |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
    // By project, then bug number.
    let mut sorted: Vec<CaseResult> = results.to_vec();
    sorted.sort_by_key(|r| {
        let number =
            r.id.rsplit('-')
                .next()
                .and_then(|n| n.parse::<u32>().ok())
                .unwrap_or(0);
        (r.project.to_lowercase(), number)
    });
    let results = &sorted[..];
    let mut projects: Vec<&str> = results.iter().map(|r| r.project.as_str()).collect();
    projects.dedup();
    for p in &projects {
        let rs: Vec<&CaseResult> = results.iter().filter(|r| r.project == *p).collect();
        summary_row(&mut s, p, &rs);
    }
    // The held-out measure first: the cases no session studied.
    let measured: Vec<&CaseResult> = results.iter().filter(|r| !r.studied).collect();
    let studied: Vec<&CaseResult> = results.iter().filter(|r| r.studied).collect();
    summary_row(&mut s, "**measured only** (never studied)", &measured);
    summary_row(&mut s, "studied in earlier sessions", &studied);
    let all: Vec<&CaseResult> = results.iter().collect();
    summary_row(&mut s, "**total**", &all);
    s.push_str(&causes::section(results));
    let _ = writeln!(s, "\n## Every case\n");
    let _ = writeln!(
        s,
        "| case | studied | the dataset's toolchain | fidelity | reproduced | fix proved | false proof | replay holds | s | cause of each miss |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
    let yn = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    };
    for r in results {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {} |",
            r.id,
            if r.studied { "yes" } else { "no" },
            r.toolchain,
            if r.fidelity { "yes" } else { "no" },
            yn(r.reproduced),
            yn(r.fix_proved),
            yn(r.false_proof),
            yn(r.replay),
            r.seconds,
            crate::corpus::causes::cell(&r.causes.join("; "))
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(side: &str, outcome: &str) -> Value {
        json!({"side": side, "outcome": outcome})
    }

    /// A run whose project build the preparation's time cut short (its record says the
    /// next preparation goes on from what it built) is run again, as a user runs a review
    /// again, at most three times in all; a run that says nothing of the kind runs once.
    #[test]
    fn a_run_whose_build_goes_on_next_time_is_run_again() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("dir");
        let count = dir.path().join("count");
        let proven = dir.path().join("proven");
        for (left, runs) in [(0, 1), (1, 2), (9, BUILD_RUNS)] {
            // A stand-in `proven`: its first `left` runs' builds go on next time.
            let script = format!(
                "#!/bin/sh\nn=$(($(cat {count} 2>/dev/null || echo 0) + 1))\necho $n > {count}\nif [ $n -le {left} ]; then note='{BUILD_GOES_ON} (2 files)'; else note=built; fi\nprintf '{{\"attempt\": %s, \"dependencies\": {{\"notes\": [\"%s\"]}}}}' $n \"$note\"\n",
                count = count.display()
            );
            std::fs::write(&proven, script).expect("script");
            std::fs::set_permissions(&proven, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
            let _ = std::fs::remove_file(&count);
            let run = sandbox_run(&proven, "python", dir.path(), "HEAD", &["pytest".into()])
                .expect("run");
            assert_eq!(run.record["attempt"], runs, "{left}: {:?}", run.record);
        }
    }

    /// The accelerator check's command runs the bug's command with each accelerator's
    /// import failing, as where it was never installed, and the command's own words kept.
    #[test]
    fn the_accelerator_check_hides_them_from_the_commands_python() {
        let probe = "import sys; print([sys.modules.get(m, 'absent') for m in ('uvloop', 'json')], sys.argv[1])";
        let command: Vec<String> = ["python3", "-c", probe, "it's kept"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        let out = Command::new(&without_accelerators(&command)[0])
            .args(&without_accelerators(&command)[1..])
            .output()
            .expect("sh");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(said.trim(), "[None, 'absent'] it's kept");
    }

    /// A side that left no run record (its preparation failed) is described by what failed,
    /// not by npm's last line (the path of its log).
    #[test]
    fn a_run_without_a_record_says_what_failed() {
        let run = Run {
            code: Some(6),
            record: Value::Null,
            stderr: "proven: preparing node dependencies from package.json failed: the preparation exited Some(3): npm ci failed: npm ERR! code E403\nnpm ERR! 403 Forbidden: xmlhttprequest@https://github.com/x/y/archive/1.tar.gz\nnpm ERR! A complete log of this run can be found in:\nnpm ERR!     /tmp/npm-cache/_logs/debug.log\n".into(),
        };
        let (class, words) = cause(&run);
        assert_eq!(class, "sandbox error");
        assert!(
            words.starts_with("no run record: proven: preparing node dependencies")
                && words.contains("403 Forbidden")
                && !words.contains("_logs"),
            "{words}"
        );
    }

    fn unproven(reason: &str, runs: &[Value]) -> Value {
        json!({"findings": [], "unproven": [{
            "claim": format!("{CONTROL_CLAIM}: the change breaks what test_b tests"),
            "reason": reason, "runs": runs}]})
    }

    #[test]
    fn a_control_counts_as_run_only_when_its_test_ran_on_both_sides() {
        let title = "bug-1 control";
        // The Prover's control test refused: no run, no control.
        assert_eq!(
            control_seen(
                &unproven("the test selects no test its file declares", &[]),
                title
            ),
            ControlSeen::NeverRan {
                why: "the test selects no test its file declares".into()
            }
        );
        // Environment errors ran nothing; one side alone is not a control either.
        for runs in [
            vec![
                run("base", "environment_error: the build failed"),
                run("change", "environment_error: the build failed"),
            ],
            vec![run("base", "passed")],
        ] {
            assert!(matches!(
                control_seen(&unproven("the test does not prove it", &runs), title),
                ControlSeen::NeverRan { .. }
            ));
        }
        assert_eq!(
            control_seen(
                &unproven(
                    "the test does not prove it: passes on both",
                    &[run("base", "passed"), run("change", "passed")]
                ),
                title
            ),
            ControlSeen::NotReproduced
        );
        assert!(matches!(
            control_seen(&json!({"findings": [], "unproven": []}), title),
            ControlSeen::NeverRan { .. }
        ));
        assert_eq!(
            control_seen(
                &json!({"findings": [{"title": title, "proof_level": "reproduced"}]}),
                title
            ),
            ControlSeen::Reproduced
        );
    }

    #[test]
    fn the_report_counts_only_the_controls_that_ran() {
        let case = |id: &str, false_proof: Option<bool>| CaseResult {
            id: id.into(),
            project: "p".into(),
            fidelity: true,
            reproduced: Some(true),
            false_proof,
            ..CaseResult::default()
        };
        let table = report(
            "BugsInPy",
            &[
                case("p-1", Some(false)),
                case("p-2", None),
                case("p-3", None),
            ],
            "r",
            "t",
            &[],
        );
        let total = table
            .lines()
            .find(|l| l.starts_with("| **total**"))
            .expect("a total row");
        assert_eq!(
            total.split('|').nth(6).map(str::trim),
            Some("0 (1)"),
            "{total}"
        );
    }

    #[test]
    fn the_report_says_how_many_reproduced_findings_replay_as_holding() {
        let case = |id: &str, replay: Option<bool>| CaseResult {
            id: id.into(),
            project: "p".into(),
            fidelity: true,
            reproduced: Some(replay.is_some()),
            replay,
            ..CaseResult::default()
        };
        let table = report(
            "BugsInPy",
            &[
                case("p-1", Some(true)),
                case("p-2", Some(false)),
                case("p-3", None),
            ],
            "r",
            "t",
            &[],
        );
        let total = table
            .lines()
            .find(|l| l.starts_with("| **total**"))
            .expect("a total row");
        assert_eq!(
            total.split('|').nth(7).map(str::trim),
            Some("1/2"),
            "{total}"
        );
        let row = table
            .lines()
            .find(|l| l.starts_with("| p-2 "))
            .expect("p-2's row");
        assert_eq!(row.split('|').nth(8).map(str::trim), Some("no"), "{row}");
    }

    #[test]
    fn the_cases_never_studied_are_reported_apart() {
        let case = |id: &str, studied: bool, fidelity: bool| CaseResult {
            id: id.into(),
            project: "p".into(),
            fidelity,
            studied,
            ..CaseResult::default()
        };
        let table = report(
            "BugsInPy",
            &[
                case("p-1", true, true),
                case("p-2", false, false),
                case("p-3", false, true),
            ],
            "r",
            "t",
            &[],
        );
        let fidelity = |head: &str| {
            let row = table
                .lines()
                .find(|l| l.starts_with(head))
                .unwrap_or_else(|| panic!("no row {head}: {table}"));
            row.split('|').nth(3).map(str::trim).map(str::to_string)
        };
        assert_eq!(
            fidelity("| **measured only**").as_deref(),
            Some("1/2 (50%)")
        );
        assert_eq!(fidelity("| studied in").as_deref(), Some("1/1 (100%)"));
        assert_eq!(fidelity("| **total**").as_deref(), Some("2/3 (67%)"));
        // The list is the code's: the dataset's ids, and never every case.
        assert!(bugsinpy::STUDIED.contains(&"black-1"));
        assert!(!bugsinpy::STUDIED.contains(&"ansible-1"));
    }

    #[test]
    fn a_cause_is_one_table_cell_without_colours() {
        let r = CaseResult {
            id: "Express-1".into(),
            project: "Express".into(),
            fidelity: true,
            reproduced: Some(true),
            fix_proved: Some(false),
            causes: vec!["fix: \u{1b}[32m  GET /\u{1b}[0m\n  a|b".into()],
            ..CaseResult::default()
        };
        let table = report("BugsJS", &[r], "r", "t", &[]);
        let row = table
            .lines()
            .find(|l| l.starts_with("| Express-1 |"))
            .expect("the case's row");
        assert!(row.ends_with("| fix:   GET /   a\\|b |"), "{row}");
        assert!(
            table.contains("Proven's causes: 1 of 1 cases (100.0%)."),
            "{table}"
        );
    }

    #[test]
    fn both_corpora_take_the_same_flags() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = parse(&args(&[
            "bugsjs",
            "--bugsjs",
            "/d",
            "--repos",
            "/r",
            "--project",
            "express",
            "--limit",
            "2",
            "--jobs",
            "2",
            "--resume",
            "--out",
            "x.md",
        ]))
        .expect("parses");
        assert_eq!(o.corpus, Corpus::BugsJs);
        assert_eq!(
            (o.projects.as_slice(), o.limit, o.jobs, o.resume),
            (&["express".to_string()][..], Some(2), 2, true)
        );
        let o = parse(&args(&[
            "bugsinpy",
            "--bugsinpy",
            "/d",
            "--repos",
            "/r",
            "--report-only",
        ]))
        .expect("parses");
        assert_eq!(
            (o.corpus, o.limit, o.resume, o.report_only),
            (Corpus::BugsInPy, None, true, true)
        );
        // The held-out selections, each fixed in code before it ran: never-studied bugs.
        for (flag, from, limit) in [
            ("--second-held-out", 11, 4),
            ("--third-held-out", 15, 3),
            ("--fourth-held-out", 18, 4),
            ("--fifth-held-out", 22, 4),
            ("--sixth-held-out", 26, 4),
            ("--seventh-held-out", 30, 4),
        ] {
            let o = parse(&args(&[
                "bugsinpy",
                "--bugsinpy",
                "/d",
                "--repos",
                "/r",
                flag,
            ]))
            .expect("parses");
            assert_eq!(
                (o.from, o.limit, o.measured_only),
                (from, Some(limit), true),
                "{flag}"
            );
        }
        assert!(
            parse(&args(&[
                "bugsjs", "--bugsjs", "/d", "--repos", "/r", "--from", "3"
            ]))
            .is_err()
        );
        // Each corpus its own dataset flag; both need --repos.
        assert!(parse(&args(&["bugsjs", "--bugsinpy", "/d", "--repos", "/r"])).is_err());
        assert!(parse(&args(&["bugsinpy", "--bugsinpy", "/d"])).is_err());
        assert!(parse(&args(&["defects4j"])).is_err());
    }

    #[test]
    fn a_cases_files_sit_beside_it_whatever_its_name() {
        assert_eq!(
            beside(Path::new("/w/Hessian.js-1"), "review.json"),
            Path::new("/w/Hessian.js-1.review.json")
        );
        assert_eq!(
            beside(Path::new("/w/black-1"), "data"),
            Path::new("/w/black-1.data")
        );
    }

    #[test]
    fn the_risks_are_about_a_file_of_the_cases_language() {
        let case = CaseRepo {
            dir: PathBuf::from("/w/Express-1"),
            base: "b".into(),
            change: "c".into(),
            reverted: vec![
                ("History.md".into(), String::new(), String::new()),
                ("lib/router/index.js".into(), String::new(), String::new()),
            ],
        };
        assert_eq!(risk_path("node", &case), "lib/router/index.js");
        assert_eq!(risk_path("python", &case), "History.md");
    }
}
