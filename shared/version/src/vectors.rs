//! Checking this crate against version vectors: JSON Lines files of cases taken from the
//! ecosystems' own test suites and from real advisories, each scored by the ecosystem's
//! reference implementation (the format of `shared/data/vectors`).
//!
//! Every row is evaluated with the rules its `src`/`reference_impl` names, and compared
//! with its `expect`. A row can hold more than one check (an npm advisory range is checked
//! with node-semver's default options and with `includePrerelease`; a converted Composer
//! range is checked as a Composer constraint and as the OSV events Proven evaluates), so
//! results are counted per check kind: the row's `kind`, or `kind:variant`.
//!
//! Rows that differ on purpose are listed, with the reason, in a known-decisions file
//! (`known-differences.jsonl` beside this crate); a row is identified there by a
//! fingerprint of its text and the check kind, so the decision follows the row wherever it
//! appears and lapses as soon as the row changes. Kinds that are not about versions
//! (`osv_lint`, `ghsa_to_osv`, `osv_query` answered by the live OSV database) and
//! ecosystems outside Proven's set are counted as "not understood", with the reason.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use proven_domain::Ecosystem;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{compare, distro, is_affected};
use crate::{go, npm, packagist, pypi, rubygems};

/// A vectors file or the known-decisions file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum VectorsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: not a JSON object: {reason}")]
    Row {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{path}:{line}: invalid known-difference entry: {reason}")]
    Known {
        path: PathBuf,
        line: usize,
        reason: String,
    },
}

/// One row that differs on purpose, with the reason.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KnownDecision {
    /// [`fingerprint`] of the row's text.
    pub fingerprint: String,
    /// The check kind (`cmp`, `range:osv_events`, ...).
    pub kind: String,
    pub reason: String,
    /// Where the row was seen, for people reading the file.
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub line: usize,
    #[serde(default)]
    pub ecosystem: String,
    #[serde(default)]
    pub input: String,
    #[serde(default)]
    pub expected: String,
    #[serde(default)]
    pub proven: String,
}

/// The checked-in list of rows that differ on purpose.
#[derive(Debug, Clone, Default)]
pub struct KnownDecisions {
    entries: HashMap<(String, String), KnownDecision>,
}

impl KnownDecisions {
    /// No decisions: every difference fails.
    pub fn none() -> KnownDecisions {
        KnownDecisions::default()
    }

    /// Reads a JSON Lines file of [`KnownDecision`]s. Blank lines are skipped; every
    /// entry needs a fingerprint, a kind and a non-empty reason.
    pub fn load(path: &Path) -> Result<KnownDecisions, VectorsError> {
        let text = std::fs::read_to_string(path).map_err(|source| VectorsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        KnownDecisions::parse(&text, path)
    }

    /// The list checked in beside this crate (`known-differences.jsonl`), built into the
    /// binary so `proven vectors check` works from anywhere.
    pub fn builtin() -> Result<KnownDecisions, VectorsError> {
        KnownDecisions::parse(
            include_str!("../known-differences.jsonl"),
            Path::new("known-differences.jsonl"),
        )
    }

    /// Reads JSON Lines text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &Path) -> Result<KnownDecisions, VectorsError> {
        let mut entries = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |reason: String| VectorsError::Known {
                path: origin.to_path_buf(),
                line: i + 1,
                reason,
            };
            let d: KnownDecision = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
            if d.reason.trim().is_empty() {
                return Err(bad("the reason is empty".into()));
            }
            entries.insert((d.fingerprint.clone(), d.kind.clone()), d);
        }
        Ok(KnownDecisions { entries })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn get(&self, fingerprint: &str, kind: &str) -> Option<&KnownDecision> {
        self.entries
            .get(&(fingerprint.to_string(), kind.to_string()))
    }
}

/// FNV-1a (64 bit) of the row's text, trimmed: stable across runs and platforms.
pub fn fingerprint(row_text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in row_text.trim().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Counts for one (file, ecosystem, check kind).
#[derive(Debug, Clone, Default, Serialize)]
pub struct GroupStats {
    pub rows: usize,
    pub agree: usize,
    /// Differ, listed as a known decision.
    pub known: usize,
    /// Differ, not listed: these fail the check.
    pub disagree: usize,
    pub not_understood: usize,
    /// Why rows of this group were not understood (the first reason seen).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_understood_reason: Option<String>,
}

impl GroupStats {
    /// Agreement among understood rows (known decisions count as differences here).
    pub fn agreement(&self) -> Option<f64> {
        let understood = self.agree + self.known + self.disagree;
        #[allow(clippy::cast_precision_loss)]
        (understood > 0).then(|| self.agree as f64 / understood as f64)
    }
}

/// One row that differs.
#[derive(Debug, Clone, Serialize)]
pub struct RowDifference {
    pub file: String,
    pub line: usize,
    pub fingerprint: String,
    pub kind: String,
    pub ecosystem: String,
    pub src: String,
    pub input: String,
    pub expected: String,
    pub proven: String,
    /// The known decision's reason, for differences listed as decisions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The result of checking vector files.
#[derive(Debug, Clone, Default)]
pub struct VectorsReport {
    /// Keyed by (file name, ecosystem, check kind).
    pub groups: BTreeMap<(String, String, String), GroupStats>,
    /// Differences not listed as known decisions: these make the check fail.
    pub disagreements: Vec<RowDifference>,
    /// Differences listed as known decisions.
    pub known_differences: Vec<RowDifference>,
    /// Known decisions (fingerprint, kind) whose row was checked and now agrees: the list
    /// should drop them.
    pub stale_decisions: Vec<(String, String)>,
}

impl VectorsReport {
    /// True only when every understood row agrees or is a known decision.
    pub fn all_agree(&self) -> bool {
        self.disagreements.is_empty()
    }

    pub fn rows_checked(&self) -> usize {
        self.groups.values().map(|g| g.rows).sum()
    }

    /// Totals per (ecosystem, check kind) over all files.
    pub fn by_ecosystem_and_kind(&self) -> BTreeMap<(String, String), GroupStats> {
        let mut out: BTreeMap<(String, String), GroupStats> = BTreeMap::new();
        for ((_, eco, kind), g) in &self.groups {
            let t = out.entry((eco.clone(), kind.clone())).or_default();
            t.rows += g.rows;
            t.agree += g.agree;
            t.known += g.known;
            t.disagree += g.disagree;
            t.not_understood += g.not_understood;
            if t.not_understood_reason.is_none() {
                t.not_understood_reason.clone_from(&g.not_understood_reason);
            }
        }
        out
    }

    /// A machine-readable summary.
    pub fn to_json(&self) -> Value {
        let groups: Vec<Value> = self
            .groups
            .iter()
            .map(|((file, eco, kind), g)| {
                json!({
                    "file": file, "ecosystem": eco, "kind": kind,
                    "rows": g.rows, "agree": g.agree, "known": g.known, "disagree": g.disagree,
                    "not_understood": g.not_understood, "not_understood_reason": g.not_understood_reason,
                    "agreement": g.agreement(),
                })
            })
            .collect();
        json!({
            "all_agree": self.all_agree(),
            "rows": self.rows_checked(),
            "groups": groups,
            "disagreements": self.disagreements,
            "known_differences": self.known_differences.len(),
            "stale_decisions": self.stale_decisions.iter().map(|(f, k)| json!({"fingerprint": f, "kind": k})).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for VectorsReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<40} {:<12} {:<28} {:>7} {:>7} {:>6} {:>6} {:>7}  agreement",
            "file", "ecosystem", "kind", "rows", "agree", "known", "differ", "not-und"
        )?;
        for ((file, eco, kind), g) in &self.groups {
            let pct = g
                .agreement()
                .map_or_else(|| "-".to_string(), |a| format!("{:.3}%", a * 100.0));
            writeln!(
                f,
                "{file:<40} {eco:<12} {kind:<28} {:>7} {:>7} {:>6} {:>6} {:>7}  {pct}",
                g.rows, g.agree, g.known, g.disagree, g.not_understood
            )?;
        }
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        for g in self.groups.values() {
            if let Some(r) = &g.not_understood_reason {
                *reasons.entry(r).or_default() += g.not_understood;
            }
        }
        if !reasons.is_empty() {
            writeln!(f, "\nnot understood:")?;
            for (r, n) in reasons {
                writeln!(f, "  {n:>6}  {r}")?;
            }
        }
        writeln!(
            f,
            "\n{} rows checked, {} known decisions applied, {} unexplained differences",
            self.rows_checked(),
            self.known_differences.len(),
            self.disagreements.len()
        )?;
        for d in &self.disagreements {
            writeln!(
                f,
                "DIFFERS {}:{} [{} {}] {} expected {} got {} (src {}, fingerprint {})",
                d.file,
                d.line,
                d.ecosystem,
                d.kind,
                d.input,
                d.expected,
                d.proven,
                d.src,
                d.fingerprint
            )?;
        }
        for (fp, kind) in &self.stale_decisions {
            writeln!(f, "STALE known decision {fp} [{kind}]: the row now agrees")?;
        }
        Ok(())
    }
}

/// Checks every row of every file. Fails only when a file cannot be read or a line is
/// not a JSON object; disagreements are in the report.
pub fn check_files(
    paths: &[PathBuf],
    known: &KnownDecisions,
) -> Result<VectorsReport, VectorsError> {
    let mut report = VectorsReport::default();
    for path in paths {
        let text = std::fs::read_to_string(path).map_err(|source| VectorsError::Read {
            path: path.clone(),
            source,
        })?;
        let file = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let row: Value = serde_json::from_str(line).map_err(|e| VectorsError::Row {
                path: path.clone(),
                line: i + 1,
                reason: e.to_string(),
            })?;
            if !row.is_object() {
                return Err(VectorsError::Row {
                    path: path.clone(),
                    line: i + 1,
                    reason: "not an object".into(),
                });
            }
            let fp = fingerprint(line);
            let ecosystem = text_field(&row, "ecosystem").unwrap_or("-").to_string();
            for check in evaluate(&row) {
                let g = report
                    .groups
                    .entry((file.clone(), ecosystem.clone(), check.kind.clone()))
                    .or_default();
                g.rows += 1;
                let decision = known.get(&fp, &check.kind);
                match check.outcome {
                    Outcome::Agree => {
                        g.agree += 1;
                        if decision.is_some() {
                            report
                                .stale_decisions
                                .push((fp.clone(), check.kind.clone()));
                        }
                    }
                    Outcome::NotUnderstood(reason) => {
                        g.not_understood += 1;
                        g.not_understood_reason.get_or_insert(reason);
                    }
                    Outcome::Differ { expected, got } => {
                        let diff = RowDifference {
                            file: file.clone(),
                            line: i + 1,
                            fingerprint: fp.clone(),
                            kind: check.kind.clone(),
                            ecosystem: ecosystem.clone(),
                            src: text_field(&row, "src").unwrap_or("").to_string(),
                            input: describe_input(&row),
                            expected,
                            proven: got,
                            reason: decision.map(|d| d.reason.clone()),
                        };
                        if decision.is_some() {
                            g.known += 1;
                            report.known_differences.push(diff);
                        } else {
                            g.disagree += 1;
                            report.disagreements.push(diff);
                        }
                    }
                }
            }
        }
    }
    Ok(report)
}

// ---------------------------------------------------------------------------------------
// Row evaluation.

enum Outcome {
    Agree,
    Differ { expected: String, got: String },
    NotUnderstood(String),
}

struct Check {
    kind: String,
    outcome: Outcome,
}

fn text_field<'a>(row: &'a Value, key: &str) -> Option<&'a str> {
    row.get(key).and_then(Value::as_str)
}

fn describe_input(row: &Value) -> String {
    let mut parts = Vec::new();
    for key in [
        "a",
        "op",
        "b",
        "range",
        "requirements",
        "patched",
        "unaffected",
        "version",
        "input",
        "ranges",
        "options",
    ] {
        if let Some(v) = row.get(key)
            && !v.is_null()
        {
            let shown = match v {
                Value::String(s) => format!("{s:?}"),
                other => other.to_string(),
            };
            parts.push(format!("{key}={shown}"));
        }
    }
    parts.join(" ")
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn same<T: PartialEq + fmt::Debug>(expected: &Value, want: T, got: T) -> Outcome {
    if want == got {
        Outcome::Agree
    } else {
        Outcome::Differ {
            expected: show(expected),
            got: format!("{got:?}"),
        }
    }
}

/// Compares a boolean answer (or an error) with the row's `expect`.
fn boolean(row: &Value, key: &str, got: Result<bool, String>) -> Outcome {
    let Some(expected) = row.get(key) else {
        return Outcome::NotUnderstood(format!("the row has no `{key}`"));
    };
    let Some(want) = expected.as_bool() else {
        return Outcome::NotUnderstood(format!("`{key}` is not a boolean"));
    };
    match got {
        Ok(g) => same(expected, want, g),
        Err(e) => Outcome::Differ {
            expected: show(expected),
            got: format!("error: {e}"),
        },
    }
}

fn string_result(row: &Value, got: Result<String, String>) -> Outcome {
    let expected = row.get("expect").cloned().unwrap_or(Value::Null);
    match (expected.as_str(), got) {
        (Some(want), Ok(g)) => same(&expected, want.to_string(), g),
        (None, Err(_)) if expected.is_null() => Outcome::Agree,
        (_, Ok(g)) => Outcome::Differ {
            expected: show(&expected),
            got: format!("{g:?}"),
        },
        (_, Err(e)) => Outcome::Differ {
            expected: show(&expected),
            got: format!("error: {e}"),
        },
    }
}

fn ordering_expectation(expect: &str) -> Option<fn(std::cmp::Ordering) -> bool> {
    use std::cmp::Ordering::{Equal, Greater, Less};
    Some(match expect {
        "<" => |o| o == Less,
        ">" => |o| o == Greater,
        "=" | "==" => |o| o == Equal,
        "!=" => |o| o != Equal,
        ">=" => |o| o != Less,
        "<=" => |o| o != Greater,
        _ => return None,
    })
}

fn ordering_outcome(row: &Value, got: Result<std::cmp::Ordering, String>) -> Outcome {
    let expected = row.get("expect").cloned().unwrap_or(Value::Null);
    let Some(test) = expected.as_str().and_then(ordering_expectation) else {
        return Outcome::NotUnderstood("`expect` is not one of < > = != >= <=".into());
    };
    match got {
        Ok(o) if test(o) => Outcome::Agree,
        Ok(o) => Outcome::Differ {
            expected: show(&expected),
            got: match o {
                std::cmp::Ordering::Less => "\"<\"".into(),
                std::cmp::Ordering::Equal => "\"=\"".into(),
                std::cmp::Ordering::Greater => "\">\"".into(),
            },
        },
        Err(e) => Outcome::Differ {
            expected: show(&expected),
            got: format!("error: {e}"),
        },
    }
}

fn op_outcome(row: &Value, op: &str, o: Result<std::cmp::Ordering, String>) -> Outcome {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let holds = |o: std::cmp::Ordering| match op {
        "lt" | "<" => Some(o == Less),
        "le" | "<=" => Some(o != Greater),
        "gt" | ">" => Some(o == Greater),
        "ge" | ">=" => Some(o != Less),
        "eq" | "==" | "=" => Some(o == Equal),
        "ne" | "!=" | "<>" => Some(o != Equal),
        _ => None,
    };
    match o {
        Ok(o) => match holds(o) {
            Some(b) => boolean(row, "expect", Ok(b)),
            None => Outcome::NotUnderstood(format!("unknown operator {op:?}")),
        },
        Err(e) => boolean(row, "expect", Err(e)),
    }
}

const NOT_ABOUT_VERSIONS: &str = "not about versions";
const OUTSIDE: &str = "ecosystem outside Proven's set (crates.io, npm, PyPI, Go, Maven, Packagist, RubyGems, \
                       plus Debian and Alpine ordering)";

fn single(kind: &str, outcome: Outcome) -> Vec<Check> {
    vec![Check {
        kind: kind.to_string(),
        outcome,
    }]
}

fn evaluate(row: &Value) -> Vec<Check> {
    let kind = text_field(row, "kind").unwrap_or("(none)");
    let eco_text = text_field(row, "ecosystem").unwrap_or("");
    match kind {
        "osv_query" => {
            return single(kind, Outcome::NotUnderstood(
                "answered by the live OSV database at an unknown date; not reproducible from the row".into(),
            ));
        }
        "osv_lint" => {
            return single(
                kind,
                Outcome::NotUnderstood(format!("{NOT_ABOUT_VERSIONS}: OSV schema linting")),
            );
        }
        "ghsa_to_osv" => {
            return single(
                kind,
                Outcome::NotUnderstood(format!("{NOT_ABOUT_VERSIONS}: GitHub advisory conversion")),
            );
        }
        _ => {}
    }
    match eco_text {
        "Debian" | "Alpine" => return single(kind, distro_row(row, kind, eco_text)),
        _ => {}
    }
    let Some(eco) = Ecosystem::from_osv(eco_text) else {
        return single(kind, Outcome::NotUnderstood(OUTSIDE.into()));
    };
    let mut checks = match eco {
        Ecosystem::CratesIo => crates_row(row, kind),
        Ecosystem::Npm => npm_row(row, kind),
        Ecosystem::PyPI => pypi_row(row, kind),
        Ecosystem::Go => single(kind, go_row(row, kind)),
        Ecosystem::Maven => maven_row(row, kind),
        Ecosystem::Packagist => packagist_row(row, kind),
        Ecosystem::RubyGems => single(kind, rubygems_row(row, kind)),
    };
    if matches!(kind, "cmp" | "cmp_op")
        && let Some(check) = versions_list_check(eco, row)
    {
        checks.push(check);
    }
    checks
}

/// For a pair the reference calls equal (and Proven too), an advisory whose `versions`
/// list names one must be found to name the other: this checks the screening
/// `is_affected` does before parsing long lists.
fn versions_list_check(eco: Ecosystem, row: &Value) -> Option<Check> {
    let equal_expected = text_field(row, "expect") == Some("=")
        || (matches!(text_field(row, "op"), Some("eq" | "==" | "="))
            && row.get("expect").and_then(Value::as_bool) == Some(true));
    if !equal_expected {
        return None;
    }
    let (a, b) = ab(row)?;
    if compare(eco, a, b).ok()? != std::cmp::Ordering::Equal {
        return None;
    }
    let entry: proven_osv::Affected = serde_json::from_value(json!({ "versions": [a] })).ok()?;
    let found = is_affected(eco, &entry, b)
        .map(|r| r.by_versions_list)
        .map_err(|e| e.to_string());
    let outcome = match found {
        Ok(true) => Outcome::Agree,
        Ok(false) => Outcome::Differ {
            expected: "listed".into(),
            got: "not found in the versions list".into(),
        },
        Err(e) => Outcome::Differ {
            expected: "listed".into(),
            got: format!("error: {e}"),
        },
    };
    Some(Check {
        kind: "cmp:versions_list".into(),
        outcome,
    })
}

fn unknown_kind(kind: &str) -> Outcome {
    Outcome::NotUnderstood(format!("no evaluator for kind {kind:?} in this ecosystem"))
}

fn ab(row: &Value) -> Option<(&str, &str)> {
    Some((text_field(row, "a")?, text_field(row, "b")?))
}

fn version_cmp(eco: Ecosystem, row: &Value) -> Outcome {
    match ab(row) {
        Some((a, b)) => ordering_outcome(row, compare(eco, a, b).map_err(|e| e.to_string())),
        None => Outcome::NotUnderstood("the row has no `a`/`b`".into()),
    }
}

fn distro_row(row: &Value, kind: &str, eco: &str) -> Outcome {
    if kind != "cmp" {
        return unknown_kind(kind);
    }
    let Some((a, b)) = ab(row) else {
        return Outcome::NotUnderstood("the row has no `a`/`b`".into());
    };
    let got = if eco == "Debian" {
        distro::compare_debian(a, b)
    } else {
        Ok(distro::compare_alpine(a, b))
    };
    ordering_outcome(row, got)
}

fn crates_row(row: &Value, kind: &str) -> Vec<Check> {
    let outcome = match kind {
        "cmp" => version_cmp(Ecosystem::CratesIo, row),
        "rustsec_affected" => {
            // cargo-audit's rule: affected unless a `patched` or `unaffected` requirement
            // matches, with the semver crate's `VersionReq::matches`.
            let reqs = |key: &str| -> Result<Vec<semver::VersionReq>, String> {
                row.get(key)
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(|r| {
                                semver::VersionReq::parse(r).map_err(|e| format!("{r:?}: {e}"))
                            })
                            .collect()
                    })
                    .unwrap_or_else(|| Ok(Vec::new()))
            };
            let got = (|| {
                let v = semver::Version::parse(text_field(row, "version").unwrap_or(""))
                    .map_err(|e| e.to_string())?;
                let covered = reqs("patched")?
                    .iter()
                    .chain(reqs("unaffected")?.iter())
                    .any(|r| r.matches(&v));
                Ok(!covered)
            })();
            boolean(row, "expect", got)
        }
        _ => unknown_kind(kind),
    };
    single(kind, outcome)
}

fn npm_options(row: &Value) -> npm::Options {
    let truthy = |v: Option<&Value>| match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
        _ => false,
    };
    let o = row.get("options");
    npm::Options {
        loose: truthy(o.and_then(|o| o.get("loose"))),
        include_prerelease: truthy(o.and_then(|o| o.get("includePrerelease"))),
    }
}

/// node-semver's `valid`: whether the version parses, and to which parts where the row
/// says.
fn npm_valid(row: &Value, version: &str, loose: bool) -> Outcome {
    if row
        .get("input_type")
        .and_then(Value::as_str)
        .is_some_and(|t| t != "string")
    {
        Outcome::NotUnderstood(
            "the input is a JavaScript object, not a string; a string API cannot receive it".into(),
        )
    } else {
        let parsed = npm::NpmVersion::parse(version, loose);
        match (row.get("parsed"), &parsed) {
            (Some(p), Ok(v)) if p.is_object() => {
                let got = json!({
                    "major": v.major, "minor": v.minor, "patch": v.patch,
                    "prerelease": v.prerelease.iter().map(|i| match i {
                        npm::Ident::Num(n) => json!(n), npm::Ident::Str(s) => json!(s) }).collect::<Vec<_>>(),
                    "build": v.build,
                });
                if &got == p {
                    boolean(row, "expect", Ok(true))
                } else {
                    Outcome::Differ {
                        expected: p.to_string(),
                        got: got.to_string(),
                    }
                }
            }
            _ => boolean(row, "expect", Ok(parsed.is_ok())),
        }
    }
}

fn npm_row(row: &Value, kind: &str) -> Vec<Check> {
    let o = npm_options(row);
    let version = text_field(row, "version").unwrap_or("");
    let range = text_field(row, "range").unwrap_or("");
    let outcome = match kind {
        "cmp" => match ab(row) {
            // node-semver's own fixtures carry options; other sources mean Proven's reading.
            Some((a, b)) if row.get("options").is_some() => ordering_outcome(
                row,
                npm::NpmVersion::parse(a, o.loose)
                    .and_then(|x| npm::NpmVersion::parse(b, o.loose).map(|y| x.cmp(&y))),
            ),
            Some(_) => version_cmp(Ecosystem::Npm, row),
            None => Outcome::NotUnderstood("the row has no `a`/`b`".into()),
        },
        "valid" => npm_valid(row, version, o.loose),
        "range" => {
            let mut checks = vec![Check {
                kind: kind.into(),
                outcome: boolean(row, "expect", Ok(npm::satisfies(version, range, o))),
            }];
            if row.get("expect_include_prerelease").is_some() {
                let inc = npm::Options {
                    include_prerelease: true,
                    ..o
                };
                checks.push(Check {
                    kind: "range:include_prerelease".into(),
                    outcome: boolean(
                        row,
                        "expect_include_prerelease",
                        Ok(npm::satisfies(version, range, inc)),
                    ),
                });
            }
            return checks;
        }
        // node-semver's `validRange`: the canonical text, `*` when it is empty.
        "range_parse" => string_result(
            row,
            npm::Range::parse(range, o).map(|r| {
                let t = r.to_string();
                if t.is_empty() { "*".to_string() } else { t }
            }),
        ),
        "gtr" | "ltr" => {
            let got = npm::NpmVersion::parse(version, o.loose).and_then(|v| {
                npm::Range::parse(range, o).and_then(|r| r.outside(&v, kind == "gtr"))
            });
            boolean(row, "expect", got)
        }
        "range_intersects" => match ab(row) {
            Some((a, b)) => boolean(
                row,
                "expect",
                npm::Range::parse(a, o)
                    .and_then(|x| npm::Range::parse(b, o).and_then(|y| x.intersects(&y, o))),
            ),
            None => Outcome::NotUnderstood("the row has no `a`/`b`".into()),
        },
        "comparator_intersects" => match ab(row) {
            Some((a, b)) => boolean(
                row,
                "expect",
                npm::Comparator::parse(a, o)
                    .and_then(|x| npm::Comparator::parse(b, o).and_then(|y| x.intersects(&y, o))),
            ),
            None => Outcome::NotUnderstood("the row has no `a`/`b`".into()),
        },
        _ => unknown_kind(kind),
    };
    single(kind, outcome)
}

fn opt_bool(row: &Value, key: &str) -> Option<bool> {
    row.get("options")
        .and_then(|o| o.get(key))
        .and_then(Value::as_bool)
}

fn string_list(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn list_outcome(row: &Value, key: &str, got: Result<Vec<String>, String>) -> Outcome {
    let expected = row.get(key).cloned().unwrap_or(Value::Null);
    let want: Vec<String> = string_list(Some(&expected))
        .into_iter()
        .map(str::to_string)
        .collect();
    match got {
        Ok(g) => same(&expected, want, g),
        Err(e) => Outcome::Differ {
            expected: show(&expected),
            got: format!("error: {e}"),
        },
    }
}

/// A packaging test value: a string, or a `Version` object recorded as
/// `{"__type__": "Version", "__repr__": "<Version('1.1')>"}`. packaging compares a
/// `Version` object through `str(version)`, its normalised text, which the repr holds.
fn py_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) if m.get("__type__").and_then(Value::as_str) == Some("Version") => m
            .get("__repr__")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("<Version('"))
            .and_then(|r| r.strip_suffix("')>"))
            .map(str::to_string),
        _ => None,
    }
}

fn py_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(py_text).collect())
        .unwrap_or_default()
}

fn pypi_row(row: &Value, kind: &str) -> Vec<Check> {
    let version_text = row.get("version").and_then(py_text).unwrap_or_default();
    let version = version_text.as_str();
    let range = text_field(row, "range").unwrap_or("");
    let api = text_field(row, "api");
    let test = text_field(row, "test").unwrap_or("");
    let parsed = || pypi::PyVersion::parse(version);
    let outcome = match kind {
        "cmp" => version_cmp(Ecosystem::PyPI, row),
        "cmp_op" => match ab(row) {
            Some((a, b)) => op_outcome(
                row,
                text_field(row, "op").unwrap_or(""),
                compare(Ecosystem::PyPI, a, b).map_err(|e| e.to_string()),
            ),
            None => Outcome::NotUnderstood("the row has no `a`/`b`".into()),
        },
        "valid" => boolean(row, "expect", Ok(parsed().is_ok())),
        "normalize" => string_result(row, parsed().map(|v| v.to_string())),
        "is_prerelease" => boolean(row, "expect", parsed().map(|v| v.is_prerelease())),
        "is_devrelease" => boolean(row, "expect", parsed().map(|v| v.is_devrelease())),
        "is_postrelease" => boolean(row, "expect", parsed().map(|v| v.is_postrelease())),
        "range_valid" => {
            let ok = if api == Some("TestSpecifier") {
                pypi::Specifier::parse(range, None).is_ok()
            } else {
                pypi::SpecifierSet::parse(range, None).is_ok()
            };
            boolean(row, "expect", Ok(ok))
        }
        "satisfiable" => boolean(
            row,
            "expect",
            pypi::SpecifierSet::parse(range, None).map(|s| !s.is_unsatisfiable()),
        ),
        "is_subset" | "is_superset" | "is_disjoint" => match ab(row) {
            Some((a, b)) => {
                let got = pypi::SpecifierSet::parse(a, None).and_then(|x| {
                    pypi::SpecifierSet::parse(b, None).and_then(|y| {
                        match kind {
                            "is_subset" => x.is_subset(&y),
                            "is_superset" => x.is_superset(&y),
                            _ => x.is_disjoint(&y),
                        }
                        .ok_or_else(|| "set relations do not support ===".to_string())
                    })
                });
                boolean(row, "expect", got)
            }
            None => Outcome::NotUnderstood("the row has no `a`/`b`".into()),
        },
        "range" => boolean(row, "expect", pypi_contains(api, test, row, range, version)),
        "filter" => {
            let owned = py_list(row.get("input"));
            let input: Vec<&str> = owned.iter().map(String::as_str).collect();
            let pre = opt_bool(row, "prereleases");
            let got = if api == Some("TestSpecifier") {
                let spec_pre = if test == "test_specifier_filter_arbitrary_equality_normalization" {
                    Some(true)
                } else {
                    opt_bool(row, "specifier_prereleases")
                };
                pypi::Specifier::parse(range, spec_pre).map(|s| s.filter(&input, pre))
            } else {
                pypi::SpecifierSet::parse(range, opt_bool(row, "specifier_prereleases"))
                    .map(|s| s.filter(&input, pre))
            };
            let expected = row.get("expect").cloned().unwrap_or(Value::Null);
            match got {
                Ok(g) => same(
                    &expected,
                    py_list(Some(&expected)),
                    g.into_iter().map(str::to_string).collect(),
                ),
                Err(e) => Outcome::Differ {
                    expected: show(&expected),
                    got: format!("error: {e}"),
                },
            }
        }
        "osv_affected" => return osv_affected_row(Ecosystem::PyPI, row),
        _ => unknown_kind(kind),
    };
    single(kind, outcome)
}

/// The `contains` call each packaging test makes (see tests/test_specifiers.py).
fn pypi_contains(
    api: Option<&str>,
    test: &str,
    row: &Value,
    range: &str,
    version: &str,
) -> Result<bool, String> {
    match (api, test) {
        (
            Some("TestSpecifier"),
            "test_specifiers" | "test_arbitrary_equality_normalization" | "test_invalid_version",
        ) => Ok(pypi::Specifier::parse(range, Some(true))?.contains(version, None)),
        (Some("TestSpecifier"), "test_specifiers_prereleases") => Ok(pypi::Specifier::parse(
            range,
            opt_bool(row, "spec_prereleases"),
        )?
        .contains(version, opt_bool(row, "contains_prereleases"))),
        (Some("TestSpecifier"), _) | (None, _) => {
            Ok(pypi::Specifier::parse(range, None)?.contains(version, None))
        }
        (_, "test_empty_specifier" | "test_contains_arbitrary_equality_normalization") => {
            Ok(pypi::SpecifierSet::parse(range, Some(true))?.contains(version, None, None))
        }
        (_, "test_specifier_contains_installed_prereleases") => {
            Ok(
                pypi::SpecifierSet::parse(range, opt_bool(row, "spec_prereleases"))?.contains(
                    version,
                    opt_bool(row, "contains_prereleases"),
                    opt_bool(row, "installed"),
                ),
            )
        }
        (_, "test_contains_post_release_boundary_intersection") => {
            Ok(pypi::SpecifierSet::parse(range, None)?.contains(version, Some(true), None))
        }
        _ => Ok(pypi::SpecifierSet::parse(range, None)?.contains(
            version,
            opt_bool(row, "prereleases"),
            None,
        )),
    }
}

fn go_row(row: &Value, kind: &str) -> Outcome {
    let version = text_field(row, "version").unwrap_or("");
    let from_x_mod = text_field(row, "src").is_some_and(|s| s.starts_with("golang/mod"));
    match kind {
        // golang.org/x/mod's own cases go through its exact API (invalid versions are
        // ordered below valid ones there); other sources through Proven's `Version`.
        "cmp" if from_x_mod => match ab(row) {
            Some((a, b)) => ordering_outcome(row, Ok(go::compare_lenient(a, b))),
            None => Outcome::NotUnderstood("the row has no `a`/`b`".into()),
        },
        "cmp" => version_cmp(Ecosystem::Go, row),
        "valid" => boolean(
            row,
            "expect",
            Ok(go::GoVersion::parse_canonical(version).is_ok()),
        ),
        "canonical" => string_result(
            row,
            Ok(go::GoVersion::parse_canonical(version)
                .map(|v| v.canonical())
                .unwrap_or_default()),
        ),
        _ => unknown_kind(kind),
    }
}

fn maven_row(row: &Value, kind: &str) -> Vec<Check> {
    match kind {
        "cmp" => single(kind, version_cmp(Ecosystem::Maven, row)),
        "osv_affected" => osv_affected_row(Ecosystem::Maven, row),
        _ => single(kind, unknown_kind(kind)),
    }
}

/// An advisory range and a version. The row records whether the advisory's `versions`
/// list names the version (`in_versions`) but not the list itself, so a one-element list
/// stands in for it; `in_ranges` checks the range evaluation on its own.
fn osv_affected_row(eco: Ecosystem, row: &Value) -> Vec<Check> {
    let version = text_field(row, "version").unwrap_or("");
    let in_versions = row
        .get("in_versions")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let ranges = row.get("ranges").cloned().unwrap_or(Value::Null);
    let build = |versions: Vec<&str>| -> Result<proven_osv::Affected, String> {
        serde_json::from_value(json!({ "ranges": ranges, "versions": versions }))
            .map_err(|e| e.to_string())
    };
    let listed = if in_versions { vec![version] } else { vec![] };
    let whole = build(listed).and_then(|a| {
        is_affected(eco, &a, version)
            .map(|r| r.affected)
            .map_err(|e| e.to_string())
    });
    let mut checks = vec![Check {
        kind: "osv_affected".into(),
        outcome: boolean(row, "expect", whole),
    }];
    if row.get("in_ranges").is_some() {
        let ranges_only = build(vec![]).and_then(|a| {
            is_affected(eco, &a, version)
                .map(|r| r.by_range.is_some())
                .map_err(|e| e.to_string())
        });
        checks.push(Check {
            kind: "osv_affected:in_ranges".into(),
            outcome: boolean(row, "in_ranges", ranges_only),
        });
    }
    checks
}

fn packagist_op(op: &str) -> Option<packagist::Op> {
    packagist::Op::parse(match op {
        "lt" => "<",
        "le" => "<=",
        "gt" => ">",
        "ge" => ">=",
        "eq" => "==",
        "ne" => "!=",
        other => other,
    })
}

/// `Semver::sort`/`rsort`: normalise, then order with `Comparator::lessThan`.
fn composer_sort(input: &[&str], descending: bool) -> Result<Vec<String>, String> {
    let mut items: Vec<(String, &str)> = Vec::new();
    for v in input {
        let n = packagist::normalize(v)?;
        let n = match n.as_str() {
            "dev-master" | "dev-default" | "dev-trunk" => "9999999-dev".to_string(),
            _ => n,
        };
        items.push((n, v));
    }
    crate::insertion_sort_by(&mut items, |l, r| {
        if l.0 == r.0 {
            std::cmp::Ordering::Equal
        } else if packagist::comparator(&l.0, packagist::Op::Lt, &r.0) != descending {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Greater
        }
    });
    Ok(items.into_iter().map(|(_, v)| v.to_string()).collect())
}

/// Composer's parsed constraint text, against `[min max]` (or the bare text) the row expects.
fn packagist_range_parse(row: &Value, range: &str) -> Outcome {
    let got = packagist::parse_constraints(range).map(|c| c.to_string());
    match row.get("expect") {
        Some(Value::Object(m)) => {
            let max = m.get("max").and_then(Value::as_str).unwrap_or("");
            let want = match m.get("min").and_then(Value::as_str) {
                Some(min) => format!("[{min} {max}]"),
                None => max.to_string(),
            };
            match got {
                Ok(g) => same(&Value::String(want.clone()), want, g),
                Err(e) => Outcome::Differ {
                    expected: want,
                    got: format!("error: {e}"),
                },
            }
        }
        _ => string_result(row, got),
    }
}

/// Whether two single constraints (`op version`) intersect.
fn packagist_constraint_intersects(row: &Value) -> Outcome {
    let parse = |s: &str| -> Result<packagist::Constraint, String> {
        let (op, v) = s
            .split_once(' ')
            .ok_or_else(|| format!("{s:?} is not `op version`"))?;
        Ok(packagist::Constraint::new(
            packagist::Op::parse(op).ok_or_else(|| format!("unknown operator {op:?}"))?,
            v,
        ))
    };
    match ab(row) {
        Some((a, b)) => boolean(
            row,
            "expect",
            parse(a).and_then(|x| parse(b).map(|y| x.match_specific(&y, false))),
        ),
        None => Outcome::NotUnderstood("the row has no `a`/`b`".into()),
    }
}

fn packagist_row(row: &Value, kind: &str) -> Vec<Check> {
    let version = text_field(row, "version").unwrap_or("");
    let range = text_field(row, "range").unwrap_or("");
    let outcome = match kind {
        "cmp" => version_cmp(Ecosystem::Packagist, row),
        "cmp_op" => match (ab(row), text_field(row, "op").and_then(packagist_op)) {
            (Some((a, b)), Some(op)) => boolean(row, "expect", Ok(packagist::comparator(a, op, b))),
            _ => Outcome::NotUnderstood("the row has no `a`/`op`/`b` Composer knows".into()),
        },
        "valid" => boolean(row, "expect", Ok(packagist::normalize(version).is_ok())),
        "normalize" => string_result(row, packagist::normalize(version)),
        "normalize_branch" => string_result(row, Ok(packagist::normalize_branch(version))),
        "stability" => string_result(row, Ok(packagist::parse_stability(version).to_string())),
        "range_valid" => boolean(
            row,
            "expect",
            Ok(packagist::parse_constraints(range).is_ok()),
        ),
        "range_parse" => packagist_range_parse(row, range),
        "constraint_intersects" => packagist_constraint_intersects(row),
        "filter" => {
            let input = string_list(row.get("input"));
            let got = (|| {
                let c = packagist::parse_constraints(range)?;
                let mut out = Vec::new();
                for v in &input {
                    if c.matches_version(&packagist::normalize(v)?) {
                        out.push((*v).to_string());
                    }
                }
                Ok(out)
            })();
            list_outcome(row, "expect", got)
        }
        "sort" => {
            let input = string_list(row.get("input"));
            let asc = list_outcome(row, "expect", composer_sort(&input, false));
            let desc = list_outcome(row, "expect_desc", composer_sort(&input, true));
            match (asc, desc) {
                (Outcome::Agree, other) | (other, _) => other,
            }
        }
        "range" => {
            let mut checks = vec![Check {
                kind: kind.into(),
                outcome: boolean(row, "expect", packagist::satisfies(version, range)),
            }];
            if let Some(events) = row.get("osv_events") {
                let got = serde_json::from_value::<proven_osv::Affected>(
                    json!({ "ranges": [{ "type": "ECOSYSTEM", "events": events }] }),
                )
                .map_err(|e| e.to_string())
                .and_then(|a| {
                    is_affected(Ecosystem::Packagist, &a, version)
                        .map(|r| r.affected)
                        .map_err(|e| e.to_string())
                });
                checks.push(Check {
                    kind: "range:osv_events".into(),
                    outcome: boolean(row, "expect", got),
                });
            }
            return checks;
        }
        _ => unknown_kind(kind),
    };
    single(kind, outcome)
}

fn rubygems_row(row: &Value, kind: &str) -> Outcome {
    let version = text_field(row, "version").unwrap_or("");
    let parsed = || rubygems::GemVersion::parse(version);
    match kind {
        "cmp" => version_cmp(Ecosystem::RubyGems, row),
        "eql" => match ab(row) {
            Some((a, b)) => boolean(
                row,
                "expect",
                rubygems::GemVersion::parse(a)
                    .and_then(|x| rubygems::GemVersion::parse(b).map(|y| x.eql(&y))),
            ),
            None => Outcome::NotUnderstood("the row has no `a`/`b`".into()),
        },
        "is_prerelease" => boolean(row, "expect", parsed().map(|v| v.is_prerelease())),
        "release" => string_result(row, parsed().map(|v| v.release().to_string())),
        "bump" => string_result(row, parsed().map(|v| v.bump().to_string())),
        "approximate_recommendation" => {
            string_result(row, parsed().map(|v| v.approximate_recommendation()))
        }
        "range" => {
            let reqs = string_list(row.get("requirements"));
            let reqs = if reqs.is_empty() {
                vec![text_field(row, "range").unwrap_or("")]
            } else {
                reqs
            };
            boolean(
                row,
                "expect",
                rubygems::GemRequirement::parse(&reqs)
                    .and_then(|r| parsed().map(|v| r.satisfied_by(&v))),
            )
        }
        _ => unknown_kind(kind),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(line: &str) -> Vec<(String, bool)> {
        let row: Value = serde_json::from_str(line).expect("json");
        evaluate(&row)
            .into_iter()
            .map(|c| (c.kind, matches!(c.outcome, Outcome::Agree)))
            .collect()
    }

    #[test]
    fn a_wrong_expectation_is_reported_as_a_difference() {
        let ok = eval(r#"{"kind":"cmp","ecosystem":"PyPI","a":"1.0","b":"1.0.0","expect":"="}"#);
        assert_eq!(
            ok,
            vec![
                ("cmp".to_string(), true),
                ("cmp:versions_list".to_string(), true)
            ]
        );
        let bad = eval(r#"{"kind":"cmp","ecosystem":"PyPI","a":"1.0","b":"1.0.0","expect":"<"}"#);
        assert_eq!(bad, vec![("cmp".to_string(), false)]);
    }

    #[test]
    fn rows_with_two_checks_count_both() {
        let r = eval(
            r#"{"kind":"range","ecosystem":"npm","range":"<3.0.0","version":"3.0.0-beta.1","expect":false,"expect_include_prerelease":true}"#,
        );
        assert_eq!(
            r,
            vec![
                ("range".into(), true),
                ("range:include_prerelease".into(), true)
            ]
        );
    }

    #[test]
    fn kinds_not_about_versions_are_not_understood() {
        let row: Value = serde_json::from_str(r#"{"kind":"osv_lint","record":{}}"#).expect("json");
        assert!(matches!(
            evaluate(&row)[0].outcome,
            Outcome::NotUnderstood(_)
        ));
        let row: Value = serde_json::from_str(
            r#"{"kind":"cmp","ecosystem":"NuGet","a":"1","b":"2","expect":"<"}"#,
        )
        .expect("json");
        assert!(matches!(
            evaluate(&row)[0].outcome,
            Outcome::NotUnderstood(_)
        ));
    }

    #[test]
    fn known_decisions_turn_differences_into_known_ones() {
        let dir =
            std::env::temp_dir().join(format!("proven-version-vectors-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let line =
            r#"{"kind":"cmp","ecosystem":"PyPI","a":"1.0","b":"1.0.0","expect":"<","src":"test"}"#;
        let vectors = dir.join("v.jsonl");
        std::fs::write(&vectors, format!("{line}\n")).expect("write");
        let report =
            check_files(std::slice::from_ref(&vectors), &KnownDecisions::none()).expect("check");
        assert!(!report.all_agree());
        assert_eq!(report.disagreements[0].src, "test");
        let known = dir.join("known.jsonl");
        let entry =
            json!({"fingerprint": fingerprint(line), "kind": "cmp", "reason": "test decision"});
        std::fs::write(&known, format!("{entry}\n")).expect("write");
        let decisions = KnownDecisions::load(&known).expect("load");
        let report = check_files(&[vectors], &decisions).expect("check");
        assert!(report.all_agree(), "{report}");
        assert_eq!(report.known_differences.len(), 1);
        assert!(report.to_json()["all_agree"].as_bool().unwrap_or(false));
        std::fs::remove_dir_all(&dir).ok();
    }
}
