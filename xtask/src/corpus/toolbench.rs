//! `cargo xtask bench tool` (`cargo xtask corpus bugsinpy --tool-bench`): what the tool
//! evidence (issue 34's analyzers) adds to a review's wall time on real projects.
//!
//! Each selected case is built and its fidelity run first (untimed: it checks the case and
//! warms what a machine keeps between runs, the images and the page cache); then the same
//! `proven review` as the corpus's runs `--rounds` times with the default `tool_analyzers`
//! and as often with `PROVEN_TOOL_ANALYZERS=""`, interleaved (with, without, ...), the side
//! that goes first alternating by case and by round, so a machine that slows down or a
//! cache that warms weighs on both sides alike. Every review is cold as a corpus review is
//! (its own data directory, so its own preparation cache). The ratio of a case is its mean
//! wall time with ÷ without; the bench's figure is the median ratio (target ≤ 1.20).
//!
//! Besides BugsInPy's Python (pyflakes), it times BugsJS's cases (ESLint, the project's
//! own: without `--case`, each project's first case whose tree has an ESLint configuration
//! and eslint among its dev dependencies, [`first_ready`]) and Go and Rust commits of fixed
//! popular repositories (`--commits`: go vet and clippy, which build the module or crate;
//! [`super::commits`]), which have no bug: no fidelity, and nothing to reproduce. Each
//! review's trace (`proven trace`, read after the timed process) says whether the case's
//! analyzer ran on both sides and finished, at what version ([`TraceTools`]).
//!
//! The first review with the analyzers is also the replay check of issue 34's second
//! must-show: `proven replay` of its reproduced finding must hold; then the report with one
//! run's recorded commit replaced by the other side's commit, and separately with one run's
//! image digest replaced, must each say that run (by its id) no longer holds, and why.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use proven_models::scripted::ScriptedServer;
use serde_json::Value;

use super::case::CaseRepo;
use super::{Case, Cases, Options};

/// The median ratio the bench holds the tool evidence to (issue 34: at most 20% more).
pub const TARGET: f64 = 1.20;

/// One timed review.
#[derive(Debug, Clone)]
pub struct Timed {
    pub with_tools: bool,
    pub seconds: f64,
    /// The bug's finding came out `reproduced`.
    pub reproduced: bool,
    /// What the plan says of the tool evidence (`tool evidence (pyflakes)`, or why not).
    pub tools: String,
    /// What the review's trace says of the analyzers' runs.
    pub trace: TraceTools,
}

/// A replay of the report, as it was or tampered.
#[derive(Debug, Clone, Default)]
pub struct ReplayCheck {
    /// `holds`, or the runs that do not with why (`change 01AB: outcome differs: …`).
    pub untouched: String,
    pub commit: String,
    pub digest: String,
    /// Every check came out as it must (holds; each tampered run named as not holding).
    pub ok: bool,
}

/// One case of the bench.
#[derive(Debug, Clone, Default)]
pub struct CaseTimes {
    pub id: String,
    /// The analyzer of the case's language (the sub-table it goes in).
    pub analyzer: &'static str,
    pub reviews: Vec<Timed>,
    pub replay: Option<ReplayCheck>,
    /// Why the case was not measured.
    pub skipped: Option<String>,
}

impl CaseTimes {
    fn mean(&self, with_tools: bool, skip: usize) -> Option<f64> {
        let xs: Vec<f64> = self
            .reviews
            .iter()
            .skip(skip)
            .filter(|t| t.with_tools == with_tools)
            .map(|t| t.seconds)
            .collect();
        (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
    }

    /// Mean wall time with the analyzers ÷ without.
    pub fn ratio(&self) -> Option<f64> {
        Some(self.mean(true, 0)? / self.mean(false, 0)?)
    }

    /// [`Self::ratio`] without the case's first review: the first review of a case after
    /// its fidelity runs is slower whichever side it is (measured on 4 December: 99.5 s
    /// with, then 47–56 s either way), so each case's first review is also left out.
    pub fn ratio_after_first(&self) -> Option<f64> {
        Some(self.mean(true, 1)? / self.mean(false, 1)?)
    }
}

/// The order of a case's reviews: `rounds` pairs, the side going first alternating by case
/// and by round (true: with the analyzers).
pub fn order(case_index: usize, rounds: usize) -> Vec<bool> {
    (0..rounds)
        .flat_map(|round| {
            let with_first = (case_index + round).is_multiple_of(2);
            [with_first, !with_first]
        })
        .collect()
}

/// The median of the ratios (None when there is none).
pub fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

/// Runs the bench over `cases` and returns its table.
pub fn run(
    runtime: &tokio::runtime::Runtime,
    proven: &Path,
    o: &Options,
    cases: &[Box<dyn Case>],
    args: &[String],
) -> Result<String, String> {
    let started = super::chrono_now();
    let load_before = load_average();
    let mut results = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let times = one_case(runtime, proven, o, c.as_ref(), i);
        eprintln!("tool bench: {}", row(&times));
        results.push(times);
        if let Some(out) = &o.out {
            let so_far = table(&results, &started, &load_before, args);
            let _ = std::fs::write(out, so_far);
        }
    }
    Ok(table(&results, &started, &load_before, args))
}

fn one_case(
    runtime: &tokio::runtime::Runtime,
    proven: &Path,
    o: &Options,
    c: &dyn Case,
    index: usize,
) -> CaseTimes {
    let mut times = CaseTimes {
        id: c.id(),
        analyzer: analyzer_of(c.language()),
        ..CaseTimes::default()
    };
    let case = match c.build(&o.repos, &o.work.join(c.id())) {
        Ok(case) => case,
        Err(e) => {
            times.skipped = Some(format!("not built: {e}"));
            return times;
        }
    };
    // A Go or Rust commit has no bug: nothing to check first.
    if c.has_bug()
        && let Err(e) = fidelity(proven, c, &case)
    {
        times.skipped = Some(e);
        return times;
    }
    for with_tools in order(index, o.rounds) {
        match timed_review(runtime, proven, c, &case, with_tools) {
            Ok((t, doc)) => {
                eprintln!(
                    "tool bench: {} {} {:.1}s reproduced={} ({}) [{}]",
                    c.id(),
                    if with_tools { "with" } else { "without" },
                    t.seconds,
                    t.reproduced,
                    t.tools,
                    t.trace.words()
                );
                if with_tools && times.replay.is_none() {
                    times.replay = bug_finding(c, &doc)
                        .map(|f| replay_checks(proven, &case, &review_file(&case, true), &f));
                }
                times.reviews.push(t);
            }
            Err(e) => {
                times.skipped = Some(format!("review: {e}"));
                return times;
            }
        }
    }
    times
}

/// The case's fidelity, as the corpus checks it (base passes, change fails): untimed.
fn fidelity(proven: &Path, c: &dyn Case, case: &CaseRepo) -> Result<(), String> {
    let command = c.bug_command(case)?;
    let lang = c.language();
    let base = super::sandbox_run(proven, lang, &case.dir, &case.base, &command)?;
    if base.code != Some(0) {
        return Err(format!("fidelity: base {}", super::cause(&base).1));
    }
    let change = super::sandbox_run(proven, lang, &case.dir, &case.change, &command)?;
    if change.code != Some(1) {
        return Err(format!("fidelity: change {}", super::cause(&change).1));
    }
    Ok(())
}

fn review_file(case: &CaseRepo, with_tools: bool) -> PathBuf {
    super::beside(
        &case.dir,
        if with_tools {
            "review-tools.json"
        } else {
            "review-no-tools.json"
        },
    )
}

/// One `proven review` of the case, timed from the process's start to its end.
fn timed_review(
    runtime: &tokio::runtime::Runtime,
    proven: &Path,
    c: &dyn Case,
    case: &CaseRepo,
    with_tools: bool,
) -> Result<(Timed, Value), String> {
    let bug_test = c.bug_test(case)?;
    let control = c.control(case)?;
    let path = super::risk_path(c.language(), case);
    let server = runtime.block_on(ScriptedServer::start());
    super::script_models(&server, c, case, &bug_test, control.as_ref(), &path);
    // With: the setting's default (a caller's PROVEN_TOOL_ANALYZERS is not used); without:
    // none.
    let env: &[(&str, Option<&str>)] = if with_tools {
        &[("PROVEN_TOOL_ANALYZERS", None)]
    } else {
        &[("PROVEN_TOOL_ANALYZERS", Some(""))]
    };
    let report = review_file(case, with_tools);
    let data_dir = super::tempfile_dir(&case.dir)?;
    let t = Instant::now();
    let doc = super::review_in(proven, case, &server, env, &report, &data_dir);
    let seconds = t.elapsed().as_secs_f64();
    // The trace, read after the timed process, from its data directory.
    let trace = match &doc {
        Ok(d) => super::review_trace(proven, &data_dir, d["review_id"].as_str().unwrap_or("?")),
        Err(_) => Err("no review".into()),
    };
    let _ = std::fs::remove_dir_all(&data_dir);
    let doc = doc?;
    let trace = match trace {
        Ok(text) => {
            let _ = std::fs::write(report.with_extension("trace.jsonl"), &text);
            TraceTools::read(&text)
        }
        Err(e) => TraceTools {
            error: Some(e),
            ..TraceTools::default()
        },
    };
    let reproduced = bug_finding(c, &doc).is_some();
    Ok((
        Timed {
            with_tools,
            seconds,
            reproduced,
            tools: tool_words(&doc),
            trace,
        },
        doc,
    ))
}

/// The analyzer of a sandbox language (the bench's sub-tables).
pub fn analyzer_of(language: &str) -> &'static str {
    match language {
        "python" => "pyflakes",
        "node" => "ESLint",
        "go" => "go vet",
        "rust" => "clippy",
        _ => "?",
    }
}

/// Each project's first case (in the selection's order) whose analyzer would run in its
/// tree ([`Case::tool_ready`]); the others, each with why it was left out.
pub fn first_ready(cases: Cases, repos: &Path) -> (Cases, Vec<(String, String)>) {
    let ready: Vec<(String, Result<(), String>)> = cases
        .iter()
        .map(|c| (c.project().to_string(), c.tool_ready(repos)))
        .collect();
    let keep = first_per_project(&ready);
    let mut kept = Vec::new();
    let mut left = Vec::new();
    for (i, c) in cases.into_iter().enumerate() {
        if keep.contains(&i) {
            kept.push(c);
        } else {
            let why = match &ready[i].1 {
                Err(e) => e.clone(),
                Ok(()) => format!("not {}'s first case where the analyzer runs", c.project()),
            };
            left.push((c.id(), why));
        }
    }
    (kept, left)
}

/// The indexes of each project's first ready item.
pub fn first_per_project(items: &[(String, Result<(), String>)]) -> Vec<usize> {
    let mut seen: Vec<&str> = Vec::new();
    let mut keep = Vec::new();
    for (i, (project, ready)) in items.iter().enumerate() {
        if ready.is_ok() && !seen.contains(&project.as_str()) {
            seen.push(project);
            keep.push(i);
        }
    }
    keep
}

/// One analyzer run as the review's trace records it (`tool_run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRun {
    /// `go-vet`, `clippy`, `eslint`, `pyflakes`.
    pub analyzer: String,
    pub side: String,
    pub version: Option<String>,
    pub diagnostics: u64,
    /// Why the run shows nothing (a build that failed, ESLint not installed, …).
    pub unfinished: Option<String>,
}

/// What a review's trace says of the tool evidence: the plan line's analyzers, each
/// analyzer run, and the analyzers that did not run, with why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceTools {
    pub planned: Vec<String>,
    pub runs: Vec<ToolRun>,
    pub not_run: Vec<(String, String)>,
    /// The trace could not be read.
    pub error: Option<String>,
}

impl TraceTools {
    /// From `proven trace`'s JSON lines (`{"kind": …, "event": {…}}`).
    pub fn read(text: &str) -> TraceTools {
        let mut t = TraceTools::default();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let e = &v["event"];
            let s = |key: &str| e[key].as_str().map(str::to_string);
            match v["kind"].as_str() {
                Some("plan") => {
                    t.planned = e["analyzers"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|a| a.as_str().map(str::to_string))
                        .collect();
                }
                Some("tool_run") => t.runs.push(ToolRun {
                    analyzer: s("analyzer").unwrap_or_default(),
                    side: s("side").unwrap_or_default(),
                    version: s("version"),
                    diagnostics: e["diagnostics"].as_u64().unwrap_or(0),
                    unfinished: s("unfinished"),
                }),
                Some("tool_not_run") => t.not_run.push((
                    s("analyzer").unwrap_or_default(),
                    s("why").unwrap_or_default(),
                )),
                _ => {}
            }
        }
        t
    }

    /// Whether `analyzer` (its setting name, `go-vet`) ran to its end on the base and on
    /// the change.
    pub fn ran_both(&self, analyzer: &str) -> bool {
        ["base", "change"].iter().all(|side| {
            self.runs.iter().any(|r| {
                r.analyzer == analyzer
                    && r.side == *side
                    && r.version.is_some()
                    && r.unfinished.is_none()
            })
        })
    }

    /// In words: `plan: go vet; go-vet base (go version go1.23.4) 0 diagnostics, …`.
    pub fn words(&self) -> String {
        if let Some(e) = &self.error {
            return format!("trace not read: {e}");
        }
        let mut parts = vec![if self.planned.is_empty() {
            "plan: no analyzer".to_string()
        } else {
            format!("plan: {}", self.planned.join(", "))
        }];
        for r in &self.runs {
            parts.push(format!(
                "{} {} ({}) {} diagnostics{}",
                r.analyzer,
                r.side,
                r.version.as_deref().unwrap_or("no version"),
                r.diagnostics,
                r.unfinished
                    .as_ref()
                    .map(|u| format!(", unfinished: {u}"))
                    .unwrap_or_default()
            ));
        }
        for (a, why) in &self.not_run {
            parts.push(format!("{a} not run: {why}"));
        }
        parts.join("; ")
    }
}

/// The bug's finding when it came out `reproduced`.
fn bug_finding(c: &dyn Case, doc: &Value) -> Option<Value> {
    let title = format!("{} regresses", c.id());
    doc["findings"]
        .as_array()?
        .iter()
        .find(|f| f["title"] == title.as_str() && f["proof_level"] == "reproduced")
        .cloned()
}

/// What the report says of the tool evidence: the plan's words for it (the analyzers that
/// ran, or why none did), what it could not see, and its findings.
pub fn tool_words(doc: &Value) -> String {
    let mentions = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|x| match x {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .filter(|s| s.contains("tool evidence") || s.contains("tool_analyzers"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut words = mentions(&doc["plan"]["runs"]);
    words.extend(mentions(&doc["plan"]["left_out"]));
    words.extend(
        mentions(&doc["not_seen"])
            .into_iter()
            .map(|w| format!("not seen: {w}")),
    );
    if words.is_empty() {
        words.push("the plan names no tool evidence".into());
    }
    words.push(format!(
        "{} tool finding(s)",
        doc["proof_counts"]["tool"].as_u64().unwrap_or(0)
    ));
    words.join("; ")
}

/// `proven replay` of the report as it is, then with one run's commit and, separately, one
/// run's image digest tampered with.
fn replay_checks(proven: &Path, case: &CaseRepo, report: &Path, finding: &Value) -> ReplayCheck {
    let id = finding["id"].as_str().unwrap_or_default().to_string();
    let (untouched, holds) = match replay(proven, case, report, &id) {
        Ok(doc) => (verdict_words(&doc), doc["holds"].as_bool() == Some(true)),
        Err(e) => (e, false),
    };
    let mut check = ReplayCheck {
        untouched,
        ok: holds,
        ..ReplayCheck::default()
    };
    for what in [Tamper::Commit, Tamper::Digest] {
        let (words, named) = tampered(proven, case, report, &id, what);
        check.ok &= named;
        match what {
            Tamper::Commit => check.commit = words,
            Tamper::Digest => check.digest = words,
        }
    }
    check
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tamper {
    /// The change run's commit replaced by the base run's.
    Commit,
    /// The change run's image digest replaced by one no image has.
    Digest,
}

/// The report with the change run of `finding` tampered with; Some(run id) of that run.
pub fn tamper(report: &mut Value, finding: &str, what: Tamper) -> Option<String> {
    let evidence = report["findings"]
        .as_array_mut()?
        .iter_mut()
        .find(|f| f["id"] == finding)?["evidence"]
        .as_array_mut()?;
    let base_commit =
        evidence.iter().find(|e| e["run"]["side"] == "base")?["run"]["commit"].clone();
    let run = evidence
        .iter_mut()
        .map(|e| &mut e["run"])
        .find(|r| r["side"] == "change")?;
    match what {
        Tamper::Commit => run["commit"] = base_commit,
        Tamper::Digest => run["image_id"] = Value::String(format!("sha256:{}", "0".repeat(64))),
    }
    run["run_id"].as_str().map(str::to_string)
}

/// A tampered replay: its words, and whether it named the tampered run, alone, as not
/// holding, with the reason the tamper must give.
fn tampered(
    proven: &Path,
    case: &CaseRepo,
    report: &Path,
    finding: &str,
    what: Tamper,
) -> (String, bool) {
    let mut doc: Value = match std::fs::read(report)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
    {
        Some(d) => d,
        None => return (format!("{} does not read", report.display()), false),
    };
    let Some(run_id) = tamper(&mut doc, finding, what) else {
        return ("the finding has no base and change runs".into(), false);
    };
    let file = report.with_extension(match what {
        Tamper::Commit => "commit-tampered.json",
        Tamper::Digest => "digest-tampered.json",
    });
    if let Err(e) = std::fs::write(&file, doc.to_string()) {
        return (format!("write {}: {e}", file.display()), false);
    }
    match replay(proven, case, &file, finding) {
        Ok(out) => {
            let named = names_only(&out, &run_id, what);
            (verdict_words(&out), named)
        }
        Err(e) => (e, false),
    }
}

/// Whether a replay's verdicts say that `run_id`, and no other run, does not hold, for the
/// reason `what` must give.
pub fn names_only(out: &Value, run_id: &str, what: Tamper) -> bool {
    let runs: Vec<&Value> = out["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["runs"].as_array().into_iter().flatten())
        .collect();
    let reason = match what {
        Tamper::Commit => "outcome differs",
        Tamper::Digest => "image digest differs",
    };
    out["holds"] == false
        && runs.iter().any(|r| {
            r["run_id"] == run_id
                && r["holds"] == false
                && r["why"].as_str().is_some_and(|w| w.contains(reason))
        })
        && runs
            .iter()
            .all(|r| r["run_id"] == run_id || r["holds"] == true)
}

/// `proven replay REPORT FINDING --repo CASE --json`.
fn replay(proven: &Path, case: &CaseRepo, report: &Path, finding: &str) -> Result<Value, String> {
    let out = super::proven_cmd(proven)
        .arg("replay")
        .arg(report)
        .arg(finding)
        .arg("--repo")
        .arg(&case.dir)
        .arg("--json")
        .output()
        .map_err(|e| format!("run proven replay: {e}"))?;
    serde_json::from_slice(&out.stdout).map_err(|_| {
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("no output")
            .to_string()
    })
}

/// `holds`, or each run that does not: `change RUN: why`.
fn verdict_words(out: &Value) -> String {
    if out["holds"] == true {
        let n = out["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| f["runs"].as_array().map_or(0, Vec::len))
            .sum::<usize>();
        return format!("holds ({n} runs)");
    }
    out["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["runs"].as_array().into_iter().flatten())
        .filter(|r| r["holds"] == false)
        .map(|r| {
            format!(
                "{} run {} does not hold: {}",
                r["side"].as_str().unwrap_or("?"),
                r["run_id"].as_str().unwrap_or("?"),
                r["why"].as_str().unwrap_or("?")
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}

fn secs(xs: &[&Timed]) -> String {
    xs.iter()
        .map(|t| format!("{:.1}", t.seconds))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The analyzer's setting name (`go-vet`) from its words (`go vet`).
fn setting_name(words: &str) -> String {
    words.to_lowercase().replace(' ', "-")
}

/// Whether the case's analyzer ran on both sides in every review with the analyzers, and
/// in none without: `with 2/2 ran on both sides (go version go1.23.4); without 0 runs`.
pub fn ran_words(c: &CaseTimes) -> String {
    let name = setting_name(c.analyzer);
    let with: Vec<&Timed> = c.reviews.iter().filter(|t| t.with_tools).collect();
    let both = with.iter().filter(|t| t.trace.ran_both(&name)).count();
    let without_runs: usize = c
        .reviews
        .iter()
        .filter(|t| !t.with_tools)
        .map(|t| t.trace.runs.len())
        .sum();
    let mut versions: Vec<String> = with
        .iter()
        .flat_map(|t| t.trace.runs.iter())
        .filter(|r| r.analyzer == name)
        .filter_map(|r| r.version.clone())
        .collect();
    versions.sort();
    versions.dedup();
    let mut words = format!(
        "with: {both}/{} ran on both sides{}; without: {without_runs} analyzer runs",
        with.len(),
        if versions.is_empty() {
            String::new()
        } else {
            format!(" ({})", versions.join(", "))
        }
    );
    // Why not, where a review with the analyzers did not run it on both sides.
    if let Some(t) = with.iter().find(|t| !t.trace.ran_both(&name)) {
        let _ = write!(words, "; first such review: {}", t.trace.words());
    }
    words
}

fn row(c: &CaseTimes) -> String {
    if let Some(why) = &c.skipped {
        return format!("| {} | - | - | - | - | - | - | not measured: {why} |", c.id);
    }
    let with: Vec<&Timed> = c.reviews.iter().filter(|t| t.with_tools).collect();
    let without: Vec<&Timed> = c.reviews.iter().filter(|t| !t.with_tools).collect();
    let reproduced = c.reviews.iter().all(|t| t.reproduced);
    let tools = with.first().map_or(String::new(), |t| t.tools.clone());
    let ratio = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.3}"));
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} |",
        c.id,
        secs(&with),
        secs(&without),
        ratio(c.ratio()),
        ratio(c.ratio_after_first()),
        if reproduced { "yes" } else { "no" },
        super::causes::cell(&ran_words(c)),
        super::causes::cell(&tools)
    )
}

fn table(results: &[CaseTimes], started: &str, load_before: &str, args: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "tool evidence bench: started {started}; command: `cargo xtask corpus {}`; {} cores; load average (1, 5, 15 min) {load_before} before, {} after",
        args.join(" "),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average()
    );
    // One sub-table per analyzer, in the order the cases came.
    let mut analyzers: Vec<&str> = results.iter().map(|c| c.analyzer).collect();
    analyzers.dedup();
    let mut seen = Vec::new();
    for analyzer in analyzers {
        if seen.contains(&analyzer) {
            continue;
        }
        seen.push(analyzer);
        let cases: Vec<&CaseTimes> = results.iter().filter(|c| c.analyzer == analyzer).collect();
        let _ = writeln!(s, "\n{analyzer}:\n");
        let _ = writeln!(
            s,
            "| case | with the analyzers (s, in order) | without (s, in order) | ratio | ratio, first review left out | reproduced (every review) | the analyzer ran (each review's trace) | tool evidence (first review with) |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
        for c in &cases {
            let _ = writeln!(s, "{}", row(c));
        }
        let _ = writeln!(s);
        for (what, ratio) in [
            (
                "every review",
                CaseTimes::ratio as fn(&CaseTimes) -> Option<f64>,
            ),
            (
                "each case's first review left out",
                CaseTimes::ratio_after_first,
            ),
        ] {
            let ratios: Vec<f64> = cases.iter().copied().filter_map(ratio).collect();
            match median(ratios.clone()) {
                Some(m) => {
                    let _ = writeln!(
                        s,
                        "{analyzer}: median ratio ({what}) {m:.3} over {} cases (target ≤ {TARGET:.2}: {})",
                        ratios.len(),
                        if m <= TARGET { "met" } else { "not met" }
                    );
                }
                None => {
                    let _ = writeln!(s, "{analyzer}: median ratio ({what}): no case was measured");
                }
            }
        }
    }
    if results.iter().any(|c| c.replay.is_some()) {
        let _ = writeln!(
            s,
            "\n| case | `proven replay` | commit tampered | image digest tampered | as it must |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|");
    }
    for c in results {
        if let Some(r) = &c.replay {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                c.id,
                super::causes::cell(&r.untouched),
                super::causes::cell(&r.commit),
                super::causes::cell(&r.digest),
                if r.ok { "yes" } else { "no" }
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_case_alternates_which_side_goes_first_by_case_and_round() {
        assert_eq!(order(0, 2), vec![true, false, false, true]);
        assert_eq!(order(1, 2), vec![false, true, true, false]);
        assert_eq!(order(1, 1), vec![false, true]);
    }

    #[test]
    fn a_cases_ratio_is_its_mean_with_over_its_mean_without_and_may_leave_its_first_out() {
        let t = |with_tools: bool, seconds: f64| Timed {
            with_tools,
            seconds,
            reproduced: true,
            tools: String::new(),
            trace: TraceTools::default(),
        };
        let c = CaseTimes {
            reviews: vec![
                t(true, 100.0),
                t(false, 50.0),
                t(false, 40.0),
                t(true, 60.0),
            ],
            ..CaseTimes::default()
        };
        assert_eq!(c.ratio(), Some(80.0 / 45.0));
        assert_eq!(c.ratio_after_first(), Some(60.0 / 45.0));
        let one = CaseTimes {
            reviews: vec![t(true, 100.0), t(false, 50.0)],
            ..CaseTimes::default()
        };
        assert_eq!(one.ratio_after_first(), None);
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![1.3, 1.0, 1.1]), Some(1.1));
        assert_eq!(median(vec![1.4, 1.0, 1.1, 1.2]), Some(1.15));
        assert_eq!(median(Vec::new()), None);
    }

    fn report() -> Value {
        json!({"findings": [{"id": "F1", "evidence": [
            {"run": {"run_id": "R-base", "side": "base", "commit": "aaa", "image_id": "sha256:1"}},
            {"run": {"run_id": "R-change", "side": "change", "commit": "bbb", "image_id": "sha256:1"}}
        ]}]})
    }

    #[test]
    fn tampering_with_the_commit_gives_the_change_run_the_base_runs_commit() {
        let mut r = report();
        assert_eq!(
            tamper(&mut r, "F1", Tamper::Commit).as_deref(),
            Some("R-change")
        );
        assert_eq!(r["findings"][0]["evidence"][1]["run"]["commit"], "aaa");
        assert_eq!(
            r["findings"][0]["evidence"][1]["run"]["image_id"],
            "sha256:1"
        );
        let mut r = report();
        tamper(&mut r, "F1", Tamper::Digest);
        assert_eq!(r["findings"][0]["evidence"][1]["run"]["commit"], "bbb");
        assert_ne!(
            r["findings"][0]["evidence"][1]["run"]["image_id"],
            "sha256:1"
        );
        assert_eq!(tamper(&mut report(), "F2", Tamper::Digest), None);
    }

    #[test]
    fn a_tampered_replay_must_name_that_run_alone_with_the_reason() {
        let out = |base_holds: bool, why: &str| {
            json!({"holds": false, "findings": [{"runs": [
                {"run_id": "R-base", "holds": base_holds, "why": "passed, exit 0"},
                {"run_id": "R-change", "holds": false, "why": why}]}]})
        };
        let digest = "image digest differs: the run had sha256:1 (x), the record says sha256:0";
        assert!(names_only(&out(true, digest), "R-change", Tamper::Digest));
        assert!(!names_only(&out(true, digest), "R-change", Tamper::Commit));
        assert!(!names_only(&out(false, digest), "R-change", Tamper::Digest));
        assert!(!names_only(&out(true, digest), "R-base", Tamper::Digest));
        let holds = json!({"holds": true, "findings": []});
        assert!(!names_only(&holds, "R-change", Tamper::Commit));
    }

    #[test]
    fn each_project_keeps_its_first_case_where_the_analyzer_runs() {
        let item = |p: &str, ok: bool| {
            (
                p.to_string(),
                if ok { Ok(()) } else { Err("no".to_string()) },
            )
        };
        let items = vec![
            item("Hexo", true),
            item("Karma", false),
            item("Hexo", true),
            item("Karma", true),
            item("Eslint", false),
        ];
        assert_eq!(first_per_project(&items), vec![0, 3]);
    }

    const TRACE: &str = r#"{"review_id":"R","seq":3,"kind":"plan","event":{"runs":["tool evidence"],"analyzers":["go vet"],"left_out":[]}}
{"review_id":"R","seq":9,"kind":"tool_run","event":{"analyzer":"go-vet","side":"base","version":"go version go1.23.4 linux/amd64","diagnostics":0,"unfinished":null}}
{"review_id":"R","seq":10,"kind":"tool_run","event":{"analyzer":"go-vet","side":"change","version":"go version go1.23.4 linux/amd64","diagnostics":2,"unfinished":null}}
{"review_id":"R","seq":11,"kind":"sandbox_run","event":{"run_id":"x"}}"#;

    #[test]
    fn the_trace_says_which_analyzer_ran_on_which_side_at_what_version() {
        let t = TraceTools::read(TRACE);
        assert_eq!(t.planned, vec!["go vet"]);
        assert_eq!(t.runs.len(), 2);
        assert_eq!(t.runs[1].diagnostics, 2);
        assert!(t.ran_both("go-vet"));
        assert!(!t.ran_both("clippy"));
        assert!(
            t.words()
                .contains("go-vet change (go version go1.23.4 linux/amd64) 2 diagnostics")
        );
        // A run that did not finish (a tree that does not build) is no run of the analyzer.
        let broken = TRACE.replace(
            r#""diagnostics":0,"unfinished":null"#,
            r#""diagnostics":0,"unfinished":"the build failed""#,
        );
        assert!(!TraceTools::read(&broken).ran_both("go-vet"));
        let eslint =
            r#"{"kind":"tool_not_run","event":{"analyzer":"eslint","why":"no eslint installed"}}"#;
        let t = TraceTools::read(eslint);
        assert!(!t.ran_both("eslint"));
        assert!(t.words().contains("eslint not run: no eslint installed"));
    }

    #[test]
    fn a_case_says_its_analyzer_ran_on_both_sides_with_it_and_never_without() {
        let t = |with_tools: bool, trace: &str| Timed {
            with_tools,
            seconds: 1.0,
            reproduced: false,
            tools: String::new(),
            trace: TraceTools::read(trace),
        };
        let c = CaseTimes {
            analyzer: "go vet",
            reviews: vec![t(true, TRACE), t(false, ""), t(false, ""), t(true, TRACE)],
            ..CaseTimes::default()
        };
        assert_eq!(
            ran_words(&c),
            "with: 2/2 ran on both sides (go version go1.23.4 linux/amd64); without: 0 analyzer runs"
        );
        let c = CaseTimes {
            analyzer: "go vet",
            reviews: vec![t(true, TRACE), t(false, ""), t(true, "")],
            ..CaseTimes::default()
        };
        assert!(ran_words(&c).starts_with("with: 1/2 ran on both sides"));
        assert!(ran_words(&c).contains("first such review: plan: no analyzer"));
    }
}
