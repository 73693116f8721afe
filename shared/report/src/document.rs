//! The result document. These types are the published JSON format (version
//! [`SCHEMA_VERSION`]); field names and meanings change only with a version bump.

use crate::reachability::Reachability;
use proven_domain::{ProofCounts, ProofLevel};
use serde::{Deserialize, Serialize};

pub const SCHEMA_VERSION: u32 = 1;

/// A review (of a change) or a scan (of one lock file, no change).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub kind: ReportKind,
    /// Review id (for `proven trace`); absent for a scan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_id: Option<String>,
    pub status: Status,
    /// Repository path or URL (review), or the lock file (scan).
    pub target: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<RevisionRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<RevisionRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    /// Findings counted by proof level; every level is a key, 0 where none.
    pub proof_counts: LevelCounts,
    pub findings: Vec<Finding>,
    /// Claims that neither side proved: shown, never counted as findings.
    pub unproven: Vec<Unproven>,
    /// Services that failed; when non-empty the status is `incomplete`.
    pub failed_services: Vec<FailedService>,
    /// What this review could not see, and why.
    pub not_seen: Vec<NotSeen>,
    /// Tracked entries left out of the trees (symlinks, submodules).
    pub left_out: Vec<LeftOutEntry>,
    /// Inputs that could not be read (a malformed lock file, ...): named, never fatal.
    pub input_errors: Vec<InputError>,
    /// Dependency files read on each side, with how many packages each declared.
    pub dependency_files: Vec<DependencyFileSummary>,
    /// With a second reviewer: each risk either reviewer named, with both verdicts side by
    /// side. Never merged: evidence alone decides which findings exist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviewers: Vec<ReviewerVerdicts>,
    /// At the deep band: the coverage auditor's surfaces and what became of each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// With `autofix: on`: one patch for every proved finding, and whether it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autofix: Option<Autofix>,
    /// Findings an entry of the repository's `ignore` list accepts: shown apart with the
    /// entry's reason, never counted, never failing a check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<Ignored>,
    /// Entries of the `ignore` list that ignore nothing: expired, or matching no finding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_notes: Vec<IgnoreNote>,
    /// Claims not raised again because H-MEM holds an evidenced refutation of each: what
    /// refuted it, when, and on what evidence (never only in the trace).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suppressed: Vec<Suppressed>,
}

/// A claim H-MEM silenced, with the refutation it rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suppressed {
    pub claim: String,
    pub path: String,
    /// The H-MEM record.
    pub record: String,
    /// The review whose runs or rows refuted it.
    pub refuted_by: String,
    /// When it was refuted.
    pub on: String,
    /// What showed the refutation, in words.
    pub evidence: String,
}

/// A finding the repository accepted, and the entry that accepts it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ignored {
    pub finding: Finding,
    /// The entry's id as written (the advisory's id or an alias).
    pub entry: String,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
}

/// An `ignore` entry that ignores nothing, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoreNote {
    pub entry: String,
    /// `expired` (it ignores nothing from its expiry on; the findings it matched are
    /// findings again) or `unmatched` (no finding of this review is its advisory).
    pub status: String,
    pub detail: String,
}

/// Autofix: every proved fix applied at once to a scratch copy of the change, each
/// finding's own test run again on it, then the package's tests. Nothing is committed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Autofix {
    /// `fixed automatically, waiting for a person`, `rejected`, or `nothing to fix`.
    pub verdict: String,
    /// The whole-change patch.
    pub edits: Vec<PatchEdit>,
    /// The findings it closed (titles): each one's evidence, run again on the patched copy,
    /// no longer shows it.
    pub fixes: Vec<String>,
    /// Each finding left open, and the run or rows that left it open (and what else kept
    /// the attempt from "fixed": a suite it broke, a run that did not happen).
    pub open: Vec<String>,
    /// The runs on the change with the whole patch.
    pub runs: Vec<RunRef>,
    /// The package tests that failed in one run of a suite with the patch and passed in a
    /// second run with it and on the base: flaky, not the patch's doing, and named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<String>,
    /// Each suite of the attempt that ran past `autofix_timeout` and gave way to the test
    /// files of the base that import what the patch edits: the suite's name, and which
    /// files alone ran in its place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub narrowed: Vec<String>,
    /// The whole patch as a unified diff against the head (what a review comment publishes
    /// as suggested changes); empty in reports of older versions.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub diff: String,
}

/// `edits` applied to the files' texts (`(path, text at the head)`), as one unified diff
/// (`a/PATH`, `b/PATH` headers, three lines of context). An edit whose old text is not in
/// its file exactly once is left out (the patch rules refuse such a patch before this).
pub fn unified_diff(files: &[(String, String)], edits: &[PatchEdit]) -> String {
    let mut out = String::new();
    for (path, before) in files {
        let mut after = before.clone();
        for e in edits.iter().filter(|e| &e.path == path) {
            if after.matches(e.old_text.as_str()).count() == 1 {
                after = after.replacen(e.old_text.as_str(), e.new_text.as_str(), 1);
            }
        }
        if after != *before {
            let diff = similar::TextDiff::from_lines(before.as_str(), after.as_str());
            out.push_str(
                &diff
                    .unified_diff()
                    .context_radius(3)
                    .header(&format!("a/{path}"), &format!("b/{path}"))
                    .to_string(),
            );
        }
    }
    out
}

/// The coverage auditor's verdict (deep band): it is shown the change's purpose and the
/// repository's manifests, never what the reviewers found; it names the surfaces a review
/// of the change must examine, each with one probe that would settle it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// `incomplete` (it named surfaces), `covered` (it failed to name one: conceded, not
    /// validated) or `no answer` (its service failed).
    pub verdict: String,
    pub surfaces: Vec<CoverageSurface>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageSurface {
    /// A file or directory of the repository.
    pub surface: String,
    /// The probe the auditor named to settle it (its claim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<String>,
    /// `examined` (round one already looked at it), `finding` (round two's probe proved a
    /// finding), `probed` (round two's probe ran and proved nothing), `remembered` (H-MEM
    /// holds a refutation of that probe), `unresolved` (also in "what this review could not
    /// see") or `refused` (not a surface of this repository).
    pub status: String,
    pub detail: String,
}

/// One risk and what each reviewer said of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewerVerdicts {
    pub title: String,
    pub path: String,
    /// What the evidence made of it: `finding`, `unproven`, `dropped`, `remembered`, or
    /// `not examined` (only the second reviewer named it; it is not evidence).
    pub outcome: String,
    pub first: ReviewerVerdict,
    pub second: ReviewerVerdict,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewerVerdict {
    /// `reported`, `not reported`, `refuted` (its own Skeptic refuted it, citing lines Proven
    /// checked), or `no answer` (the reviewer's service failed).
    pub verdict: String,
    /// The reviewer's own words for the risk, when it named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportKind {
    Review,
    Scan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every part of the plan ran.
    Complete,
    /// A service failed or an input could not be read: the result may miss findings.
    Incomplete,
    /// Everything the plan ran ran, but the plan could not be the one the change needed:
    /// the model agents were not configured, so only dependency files were examined (the
    /// plan says why). Never clean: a neutral check, its own exit code.
    Partial,
    /// The review could not run.
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Complete => "complete",
            Status::Incomplete => "incomplete",
            Status::Partial => "partial",
            Status::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionRef {
    /// As the user wrote it (branch, tag, SHA, expression).
    pub rev: String,
    /// The commit compared: for the base, the merge base of `rev` and the head unless
    /// `diff` is `two-dot`.
    pub commit: String,
    /// For the base: how `commit` was chosen, `merge-base` (what GitHub's "Files changed"
    /// compares from) or `two-dot` (`rev` itself). Absent for the head and in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// For the base: the commit `rev` itself names, when it is not the merge base (the base
    /// branch moved on after the head's branch left it; what it did since is not the change's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tip: Option<String>,
}

impl RevisionRef {
    /// A revision named as asked, with no word on how it was compared (a head).
    pub fn new(rev: impl Into<String>, commit: impl Into<String>) -> RevisionRef {
        RevisionRef {
            rev: rev.into(),
            commit: commit.into(),
            diff: None,
            tip: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The kind of change: dependency, refactor, feature, security, docs, config.
    pub change_kind: String,
    /// The review class the plan runs in: docs, dependency, standard, security (empty in
    /// reports of older versions).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub class: String,
    /// light or deep.
    pub band: String,
    /// Evidence sources and agents that run.
    pub runs: Vec<String>,
    /// Parts of a full review this plan leaves out, each with the reason.
    pub left_out: Vec<String>,
    /// Why the review can only be `partial`: its plan wanted the model agents and none was
    /// configured (the operator did not choose the dependency-only plan with `agents: off`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
}

/// Counts by level, serialised as `{"reproduced": n, "exploited": n, "advisory": n, "tool": n}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LevelCounts {
    pub reproduced: u32,
    pub exploited: u32,
    pub advisory: u32,
    pub tool: u32,
}

impl From<ProofCounts> for LevelCounts {
    fn from(c: ProofCounts) -> Self {
        LevelCounts {
            reproduced: c.get(ProofLevel::Reproduced),
            exploited: c.get(ProofLevel::Exploited),
            advisory: c.get(ProofLevel::Advisory),
            tool: c.get(ProofLevel::Tool),
        }
    }
}

impl LevelCounts {
    pub fn of(findings: &[Finding]) -> LevelCounts {
        ProofCounts::from_levels(findings.iter().map(|f| f.proof_level.level())).into()
    }
}

/// A proof level as it appears in documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Reproduced,
    Exploited,
    Advisory,
    Tool,
}

impl Level {
    pub fn level(self) -> ProofLevel {
        match self {
            Level::Reproduced => ProofLevel::Reproduced,
            Level::Exploited => ProofLevel::Exploited,
            Level::Advisory => ProofLevel::Advisory,
            Level::Tool => ProofLevel::Tool,
        }
    }

    pub fn as_str(self) -> &'static str {
        self.level().as_str()
    }
}

impl From<ProofLevel> for Level {
    fn from(l: ProofLevel) -> Self {
        match l {
            ProofLevel::Reproduced => Level::Reproduced,
            ProofLevel::Exploited => Level::Exploited,
            ProofLevel::Advisory => Level::Advisory,
            ProofLevel::Tool => Level::Tool,
        }
    }
}

/// What kind of problem a finding is. Informational advisory kinds (RustSec's unmaintained,
/// unsound, notice) are their own kinds, never vulnerabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A defect the change introduces, shown by a test that fails on it and passes on the base.
    Defect,
    Vulnerability,
    Unmaintained,
    Unsound,
    Notice,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Defect => "defect",
            FindingKind::Vulnerability => "vulnerability",
            FindingKind::Unmaintained => "unmaintained",
            FindingKind::Unsound => "unsound",
            FindingKind::Notice => "notice",
        }
    }

    /// From RustSec's `informational` value; anything unknown stays a notice.
    pub fn from_informational(value: Option<&str>) -> FindingKind {
        match value {
            None => FindingKind::Vulnerability,
            Some("unmaintained") => FindingKind::Unmaintained,
            Some("unsound") => FindingKind::Unsound,
            Some(_) => FindingKind::Notice,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable fingerprint: the same problem in the same place has the same id.
    pub id: String,
    /// Proof level first: the strongest evidence this finding has.
    pub proof_level: Level,
    pub kind: FindingKind,
    pub title: String,
    /// The dependency a dependency finding is about (absent for a defect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<PackageChange>,
    pub location: Location,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory: Option<AdvisoryRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exploited: Option<KevRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epss: Option<EpssRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<FixRef>,
    /// What a defect finding claims (the Planner's claim, proved by the test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
    /// What the Skeptic said, when it did not defeat the finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skeptic: Option<SkepticRef>,
    /// A fix the Fixer proposed and the sandbox proved (defects only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<PatchRef>,
    /// A fix that was tried and not proved: never shown as a patch, always said, with why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_not_proved: Option<FixNotProved>,
    /// Whether the code reaches what the advisory names (dependency findings only):
    /// evidence beside the rows, never a proof level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reachability: Option<Reachability>,
    /// The rows or runs that prove it.
    pub evidence: Vec<Evidence>,
}

/// A proposed fix, shown only when proved: with it applied to the change, the finding's own
/// test passes and so do the package's tests. Never committed anywhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchRef {
    pub edits: Vec<PatchEdit>,
    /// The Fixer's words for what the edits do.
    pub explanation: String,
    /// The try that gave it (1-based).
    pub attempt: u32,
    /// The runs on the change with the patch: the proving test, then the package's tests
    /// (and the package's tests on the base, when they did not pass with the patch).
    pub runs: Vec<RunRef>,
    /// The package's tests that fail with the patch and on the base too, by name: the
    /// patch was held to what it breaks, and broke nothing (empty: the package's tests
    /// passed with the patch).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_on_base_too: Vec<String>,
    /// The package's suite ran no test, with the patch nor on the base (its only test is
    /// the finding's): the proof rests on the finding's own test, and says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_other_tests: bool,
    /// The package's tests that failed in one run of its suite with the patch and passed in
    /// a second run with it and on the base: flaky, not the patch's doing, and named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky_with_patch: Vec<String>,
    /// The test files that ran in place of the package's whole suite, which ran past
    /// `suite_timeout`: those that import what the patch edits (empty: the whole suite ran).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suite_narrowed_to: Vec<String>,
}

/// What a proved patch says of the package's suite when that suite ran no test on either
/// side.
pub const NO_OTHER_TESTS: &str = "and the package has no other test that runs here (its suite ran none, with the patch nor on the base)";

impl PatchRef {
    /// What the package's tests did with the patch, in words every rendering shares.
    pub fn suite_words(&self) -> String {
        if self.no_other_tests {
            return NO_OTHER_TESTS.into();
        }
        let words = suite_words_with_flaky(&self.failing_on_base_too, &self.flaky_with_patch);
        if self.suite_narrowed_to.is_empty() {
            return words;
        }
        format!("{words}; {}", narrowed_words(&self.suite_narrowed_to))
    }
}

/// What a proved patch says when only the test files that import what it edits ran, the
/// package's whole suite having outlasted `suite_timeout`.
pub fn narrowed_words(files: &[String]) -> String {
    format!(
        "of the package's tests only the test files that import what the patch edits ran, its whole suite having run past suite_timeout: {}",
        first_five(files)
    )
}

/// [`suite_words`], and the tests that failed in one run of the suite and passed in another
/// of the same tree (with the patch: its first run and its second; on the base: its two
/// runs), named as flaky.
pub fn suite_words_with_flaky(failing_on_base_too: &[String], flaky: &[String]) -> String {
    let words = suite_words(failing_on_base_too);
    if flaky.is_empty() {
        return words;
    }
    format!(
        "{words}; {} failed in one run of the package's tests and passed in another of the same tree (with the patch, or on the base): flaky, not the patch's doing",
        first_five(flaky)
    )
}

/// Up to five names, "…" when there are more, after how many there are.
fn first_five(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
    format!(
        "{} ({})",
        names.len(),
        shown.join(", ")
            + if names.len() > shown.len() {
                ", …"
            } else {
                ""
            }
    )
}

/// What the package's tests did with a proved patch: they passed, or they failed only where
/// they fail on the base too (those tests named).
pub fn suite_words(failing_on_base_too: &[String]) -> String {
    if failing_on_base_too.is_empty() {
        return "and so do the package's tests".into();
    }
    let n = failing_on_base_too.len();
    let shown: Vec<&str> = failing_on_base_too
        .iter()
        .take(5)
        .map(String::as_str)
        .collect();
    format!(
        "and the package's tests fail only where they fail on the base too ({n}: {}{})",
        shown.join(", "),
        if n > shown.len() { ", …" } else { "" }
    )
}

/// A fix the Fixer tried that the sandbox did not prove (or that was refused before any
/// run): the reason names the run that failed, or the rule the patch broke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixNotProved {
    /// Tries made (each told only what failed before).
    pub attempts: u32,
    /// Why the last try was not proved.
    pub reason: String,
    /// The runs of the last try, when it ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunRef>,
}

/// One edit of a proposed fix: `old_text`, found exactly once in `path`, becomes `new_text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchEdit {
    pub path: String,
    pub old_text: String,
    pub new_text: String,
    /// The whole lines of the file at the change the edit touches, and what they become
    /// (computed by Proven from the file, never taken from a model): what a pull-request
    /// suggestion replaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<LineSpan>,
}

/// Lines `start..=end` (1-based) of a file, and their text after an edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineSpan {
    pub start: u32,
    pub end: u32,
    pub replacement: String,
}

impl LineSpan {
    /// The lines the first `old_text` in `text` spans (the caller has checked it is the
    /// only one), and their text with it replaced by `new_text`. None when it is not there.
    pub fn of(text: &str, old_text: &str, new_text: &str) -> Option<LineSpan> {
        if old_text.is_empty() {
            return None;
        }
        let at = text.find(old_text)?;
        let end = at + old_text.len();
        // An old text ending with a newline ends on the line before the next one.
        let last = if old_text.ends_with('\n') {
            end - 1
        } else {
            end
        };
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[last..].find('\n').map_or(text.len(), |i| last + i);
        let start = text[..at].matches('\n').count() + 1;
        let lines_spanned = text[at..last].matches('\n').count();
        let mut replacement = format!(
            "{}{}{}",
            &text[line_start..at],
            new_text,
            &text[end.min(line_end)..line_end]
        );
        if old_text.ends_with('\n') && replacement.ends_with('\n') {
            replacement.pop();
        }
        Some(LineSpan {
            start: u32::try_from(start).ok()?,
            end: u32::try_from(start + lines_spanned).ok()?,
            replacement,
        })
    }
}

/// The Skeptic's answer to a finding it could not defeat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkepticRef {
    /// conceded (naming the artifact it opened), unresolved, or refuted_without_evidence.
    pub verdict: String,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    /// The refutation it picked from the closed list (flaky, wrong_cause, intended, query),
    /// which Proven's own runs or rows did not bear out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refutation: Option<String>,
    /// Unresolved: what would settle it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs: Option<String>,
}

/// One sandbox run, as evidence: enough for a reader to run it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRef {
    /// The run's id (its key): what a reader, or a Skeptic conceding, names it by.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_id: String,
    /// base or change.
    pub side: String,
    pub commit: String,
    pub image: String,
    /// The image the container actually ran (`sha256:…`), which `proven replay` requires
    /// again; empty in reports written before runs carried it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub image_id: String,
    pub command: Vec<String>,
    pub exit_code: Option<i64>,
    /// passed, test_failed, environment_error.
    pub outcome: String,
    pub duration_ms: u64,
    pub output_tail: String,
    pub output_sha256: String,
    /// What the test runner reported: tests passed, failed, skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<RunTests>,
    /// The test environment's dependencies that could not be prepared for this run (what,
    /// where it was declared, why), and what else a reader should know of the preparation
    /// (versions resolved rather than pinned, a Python the project asks for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<String>,
}

/// A run's test counts, as its runner reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunTests {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    #[serde(default)]
    pub errors: u64,
}

impl Finding {
    pub fn package_name(&self) -> &str {
        self.package.as_ref().map_or("", |p| p.name.as_str())
    }

    pub fn advisory_id(&self) -> &str {
        self.advisory.as_ref().map_or("", |a| a.id.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageChange {
    pub ecosystem: String,
    pub name: String,
    /// The version on the base side, when the package was there.
    pub old_version: Option<String>,
    pub new_version: String,
    /// direct, transitive or unknown.
    pub dependency: String,
    pub dev: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdvisoryRef {
    pub id: String,
    pub aliases: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    pub severity: Vec<SeverityRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeverityRef {
    #[serde(rename = "type")]
    pub kind: String,
    pub score: String,
    /// The base score computed from a CVSS vector, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_score: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KevRef {
    pub cve: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_added: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_ransomware_campaign_use: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpssRef {
    pub cve: String,
    pub probability: f64,
    pub percentile: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_date: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixRef {
    /// The smallest version that leaves every affected range of the evidence rows, or
    /// None when no fix is published.
    pub version: Option<String>,
    pub note: String,
    /// The change that raises the package to `version`, with what re-running the dependency
    /// evidence on it showed (absent: none could be made, or a report of an older version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed: Option<DependencyFix>,
}

/// A dependency fix: the file's package at the fixed version, proved (or not) by running
/// the dependency evidence again on the patched file: the advisory no longer matches and no
/// other advisory of the package does. No test proves it: it is a suggestion, never a
/// proved defect fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependencyFix {
    /// The version the fix raises the package to (every finding of the package in the file
    /// left behind).
    pub version: String,
    /// The exact edit, where the file's format allows one (a pin that no checksum ties).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<PatchEdit>,
    /// The command the user runs where the format ties the version to checksums or to a
    /// resolver (`cargo update -p NAME --precise V`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub proved: bool,
    /// What the re-run showed.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// `advisory_row` (a dependency finding), `test_run` (a defect) or `tool_run` (an
    /// analyzer's run, on the base or on the change, of a `tool` finding).
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory_id: Option<String>,
    /// Index of the row in the advisory's `affected` list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affected_index: Option<i64>,
    /// How the version matched: `range N (ECOSYSTEM)` or `versions list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    /// The affected row itself, as OSV JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<serde_json::Value>,
    /// A sandbox run of the proving test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunRef>,
    /// The proving test itself, on the first run of a defect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<TestRef>,
    /// The analyzer a `tool_run` ran, its version and what it said of the finding's line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolRef>,
}

/// An analyzer's run as a `tool` finding's evidence: the same analyzer at the same version
/// on both sides; on the change it reports the diagnostic, on the base it does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRef {
    /// pyflakes, go vet, clippy, ESLint.
    pub analyzer: String,
    /// The analyzer's own `--version` answer, asked in the run's container.
    pub version: String,
    /// The analyzer's code for the diagnostic (clippy's lint, else the analyzer's name).
    pub code: String,
    /// The diagnostic as this run reported it (`path:line:col: message`); None: this run
    /// (the base's) does not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostic: Option<String>,
}

impl ToolRef {
    /// What the run said of the finding, in words every rendering shares.
    pub fn words(&self) -> String {
        match &self.diagnostic {
            Some(d) => format!(
                "{} ({}) reports {d} [{}]",
                self.analyzer, self.version, self.code
            ),
            None => format!(
                "{} ({}) does not report it [{}]",
                self.analyzer, self.version, self.code
            ),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRef {
    pub path: String,
    pub code: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unproven {
    pub claim: String,
    pub reason: String,
    /// The runs that showed it: a test that ran and did not reproduce the claim, or a
    /// Skeptic's refutation that Proven's runs bore out (the claim names the wrong cause,
    /// or the change's own tests show it intended). None when no test ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunRef>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedService {
    pub service: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotSeen {
    pub what: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOutEntry {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputError {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// base or head (review), or absent (scan).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependencyFileSummary {
    pub path: String,
    pub format: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    pub packages: u32,
}

impl Report {
    /// An empty report of `kind` for `target`, complete until something says otherwise.
    pub fn new(kind: ReportKind, target: impl Into<String>) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            kind,
            review_id: None,
            status: Status::Complete,
            target: target.into(),
            base: None,
            head: None,
            plan: None,
            proof_counts: LevelCounts::default(),
            findings: Vec::new(),
            unproven: Vec::new(),
            failed_services: Vec::new(),
            not_seen: Vec::new(),
            left_out: Vec::new(),
            input_errors: Vec::new(),
            dependency_files: Vec::new(),
            reviewers: Vec::new(),
            coverage: None,
            autofix: None,
            ignored: Vec::new(),
            ignore_notes: Vec::new(),
            suppressed: Vec::new(),
        }
    }

    /// Sorts findings (strongest proof first, then place) and recomputes the counts and
    /// the status from the content, so a document can never claim more than it holds.
    pub fn seal(&mut self) {
        self.findings.sort_by(|a, b| {
            (
                a.proof_level.level(),
                &a.location.path,
                a.package_name(),
                a.advisory_id(),
                &a.title,
            )
                .cmp(&(
                    b.proof_level.level(),
                    &b.location.path,
                    b.package_name(),
                    b.advisory_id(),
                    &b.title,
                ))
        });
        self.proof_counts = LevelCounts::of(&self.findings);
        if self.status != Status::Failed
            && (!self.failed_services.is_empty() || !self.input_errors.is_empty())
        {
            self.status = Status::Incomplete;
        } else if self.status == Status::Complete
            && self.plan.as_ref().is_some_and(|p| p.partial.is_some())
        {
            self.status = Status::Partial;
        }
    }
}

/// `text` cut to at most `max` characters at the end of a word, with an ellipsis when
/// anything was cut (a word longer than `max` is cut where it must be).
pub fn cut_at_word(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let room = max.saturating_sub(1);
    let head: String = text.chars().take(room).collect();
    let next_is_space = text.chars().nth(room).is_some_and(char::is_whitespace);
    let kept = if next_is_space {
        head.as_str()
    } else {
        match head.rfind(char::is_whitespace) {
            Some(at) if at > 0 => &head[..at],
            _ => head.as_str(),
        }
    };
    format!(
        "{}…",
        kept.trim_end_matches(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == ':')
    )
}

/// How a package came into the tree, in words: never "unknown dependency", which reads as
/// if the package were unknown.
pub fn dependency_words(kind: &str) -> &'static str {
    match kind {
        "direct" => "direct dependency",
        "transitive" => "transitive dependency",
        _ => "direct or transitive: not known",
    }
}

/// The CVSS base score of a vector string, when it parses.
pub fn cvss_base_score(vector: &str) -> Option<f64> {
    vector.parse::<cvss::Cvss>().ok().map(|c| c.score())
}

#[cfg(test)]
mod word_tests {
    use super::*;

    #[test]
    fn a_cut_ends_at_a_word_with_an_ellipsis() {
        assert_eq!(cut_at_word("short", 10), "short");
        assert_eq!(cut_at_word("one two three four", 10), "one two…");
        assert_eq!(cut_at_word("one two, three", 9), "one two…");
        assert_eq!(cut_at_word("abcdefghijkl", 5), "abcd…");
        assert_eq!(cut_at_word("été à Paris", 6), "été à…");
        assert_eq!(
            dependency_words("unknown"),
            "direct or transitive: not known"
        );
    }
}
