//! Dependency evidence: the packages a change brings in, matched against the advisory
//! tables with each ecosystem's own version rules. No model.
//!
//! A package is *brought in* when the head side of a dependency file declares a version
//! that the base side of the same file does not (added, raised or lowered). For each such
//! package and each advisory naming it, the step proves or clears it:
//! - head version inside an affected range (or the `versions` list) and no base version of
//!   that package in that file inside the same advisory → a finding, with those rows;
//! - already affected on the base → a trace line (the change did not bring it in);
//! - outside every range → a trace line, never a finding;
//! - not comparable under the ecosystem's rules → "could not see", never a finding.

use crate::core::step_name::Name;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use proven_config::Informational;
use proven_domain::{Dependency, Ecosystem, Origin, ProofLevel};
use proven_lockfile::{DependencyFile, Format, Tree};
use proven_report::{
    AdvisoryRef, DependencyFileSummary, EpssRef, Evidence, Finding, FindingKind, FixRef,
    InputError, KevRef, Level, Location, NotSeen, PackageChange, SeverityRef, cvss_base_score,
};
use proven_store::{AffectedRow, Store, StoreError};
use serde_json::json;

use crate::core::git_tree::{GitTree, Side};
use crate::core::trace::Trace;

#[derive(Debug, Clone)]
pub struct DepsOptions {
    pub informational: Informational,
    pub dev_dependencies: bool,
    pub limits: proven_lockfile::Limits,
}

/// One dependency file, read on both sides of the change (either may be absent).
#[derive(Debug, Clone)]
pub struct FilePair {
    pub path: String,
    pub base: Option<DependencyFile>,
    pub head: Option<DependencyFile>,
}

#[derive(Debug, Default)]
pub struct DepsOutcome {
    pub findings: Vec<Finding>,
    pub not_seen: Vec<NotSeen>,
}

/// The dependency files whose versions are authoritative for what the change touched, on
/// either side; what could not be looked at is named. Blocking (git2).
pub fn sources(
    sides: &[(Side, GitTree<'_>); 2],
    changed_paths: &[Vec<u8>],
    trace: &mut Trace,
) -> (Vec<String>, Vec<InputError>, Vec<NotSeen>) {
    let mut errors = Vec::new();
    let mut not_seen = Vec::new();
    let mut touched: BTreeSet<String> = BTreeSet::new();
    for raw in changed_paths {
        match std::str::from_utf8(raw) {
            Ok(p) if Format::detect(p).is_some() => {
                touched.insert(p.to_string());
            }
            Ok(_) => {}
            Err(_) => {
                let lossy = String::from_utf8_lossy(raw).into_owned();
                if Format::detect(&lossy).is_some() {
                    not_seen.push(NotSeen {
                        what: lossy,
                        reason: "dependency file whose path is not UTF-8: not read".into(),
                    });
                }
            }
        }
    }
    let mut sources: BTreeSet<String> = BTreeSet::new();
    for path in &touched {
        let mut found_any = false;
        for (side, tree) in sides {
            match proven_lockfile::version_sources(tree, path) {
                Ok(found) => {
                    found_any |= !found.is_empty();
                    sources.extend(found);
                }
                Err(e) => errors.push(InputError {
                    path: path.clone(),
                    line: None,
                    side: Some(side.as_str().into()),
                    message: format!("could not look for its lock file: {e}"),
                }),
            }
        }
        if !found_any {
            not_seen.push(NotSeen {
                what: path.clone(),
                reason:
                    "manifest without a lock file: version ranges give no exact version to check"
                        .into(),
            });
            trace.push(
                "dependency_file",
                json!({"path": path, "skipped": "no file with exact versions for it"}),
            );
        }
    }
    (sources.into_iter().collect(), errors, not_seen)
}

/// What reading one dependency file on both sides gave.
#[derive(Debug, Default)]
pub struct ReadPair {
    /// None when the head side has no such file (or could not be read).
    pub pair: Option<FilePair>,
    pub input_errors: Vec<InputError>,
    pub not_seen: Vec<NotSeen>,
    pub files: Vec<DependencyFileSummary>,
    /// The head has no file at the path (the change deletes it): what the World Model
    /// holds from it is closed.
    pub deleted: bool,
}

/// Reads `path` on both sides. Blocking (git2).
pub fn read_pair(
    sides: &[(Side, GitTree<'_>); 2],
    path: &str,
    options: &DepsOptions,
    trace: &mut Trace,
) -> ReadPair {
    let mut out = ReadPair::default();
    let mut pair = FilePair {
        path: path.to_string(),
        base: None,
        head: None,
    };
    for (side, tree) in sides {
        match tree.size(path) {
            Ok(Some(_)) => {}
            Ok(None) => {
                out.deleted |= matches!(side, Side::Head);
                continue;
            }
            Err(_) => continue,
        }
        match proven_lockfile::read(tree, path, &options.limits) {
            Ok(file) => {
                trace.push(
                    "dependency_file",
                    json!({"path": path, "side": side, "format": file.format.name(),
                           "packages": file.dependencies.len(), "notes": file.notes}),
                );
                out.files.push(DependencyFileSummary {
                    path: path.to_string(),
                    format: file.format.name().to_string(),
                    side: Some(side.as_str().into()),
                    packages: file.dependencies.len() as u32,
                });
                match side {
                    Side::Base => pair.base = Some(file),
                    Side::Head => pair.head = Some(file),
                }
            }
            Err(e) => {
                trace.push(
                    "input_error",
                    json!({"path": path, "side": side, "line": e.line, "kind": e.kind.as_str(), "message": e.to_string()}),
                );
                out.input_errors.push(InputError {
                    path: path.to_string(),
                    line: e.line,
                    side: Some(side.as_str().into()),
                    message: e.to_string(),
                });
                out.not_seen.push(NotSeen {
                    what: format!("{path} ({side})"),
                    reason: "could not be read, so its packages were not checked".into(),
                });
            }
        }
    }
    // A file unreadable on one side is still evaluated from what could be read: a missing
    // base makes every head package "brought in", which can only over-report, and the
    // input error keeps the review incomplete.
    if pair.head.is_some() {
        out.pair = Some(pair);
    }
    out
}

struct Candidate<'a> {
    path: &'a str,
    dep: &'a Dependency,
    norm: String,
    base_versions: Vec<&'a Dependency>,
}

struct ParsedRow {
    row: AffectedRow,
    affected: proven_osv::Affected,
}

struct Draft {
    finding: Finding,
    cves: Vec<String>,
}

/// Matches every package brought in against the advisory tables: one query per ecosystem,
/// then one KEV and one EPSS query for all findings.
pub async fn evaluate(
    store: &Store,
    pairs: &[FilePair],
    options: &DepsOptions,
    trace: &mut Trace,
) -> Result<DepsOutcome, StoreError> {
    let mut outcome = DepsOutcome::default();
    let candidates = candidates(pairs, options, trace);
    let rows = advisory_rows(store, &candidates, trace).await?;
    let mut drafts: Vec<Draft> = Vec::new();
    let mut incomparable: HashSet<(String, String)> = HashSet::new();
    for c in &candidates {
        let eco = c.dep.ecosystem;
        let Some(found) = rows.get(&(eco, c.norm.clone())) else {
            trace.push("no_advisory", json!({"path": c.path, "ecosystem": eco.osv_name(), "name": c.dep.name, "version": c.dep.version}));
            continue;
        };
        let mut by_advisory: BTreeMap<&str, Vec<&ParsedRow>> = BTreeMap::new();
        for r in found {
            by_advisory
                .entry(r.row.advisory_id.as_str())
                .or_default()
                .push(r);
        }
        for (advisory, entries) in by_advisory {
            match match_advisory(c, advisory, &entries, options, trace) {
                Matched::Finding(draft) => drafts.push(*draft),
                Matched::Incomparable(reason) => {
                    if incomparable.insert((c.path.to_string(), c.dep.name.clone())) {
                        outcome.not_seen.push(NotSeen {
                            what: format!("{} {} in {}", c.dep.name, c.dep.version, c.path),
                            reason: format!(
                                "version could not be compared with {}'s rules: {reason}",
                                eco.osv_name()
                            ),
                        });
                    }
                }
                Matched::Nothing => {}
            }
        }
    }
    outcome.findings = with_exploitation(store, drafts, trace).await?;
    Ok(outcome)
}

/// The advisory rows naming any candidate, read one query per ecosystem; a row that does
/// not read is a trace line.
async fn advisory_rows(
    store: &Store,
    candidates: &[Candidate<'_>],
    trace: &mut Trace,
) -> Result<HashMap<(Ecosystem, String), Vec<ParsedRow>>, StoreError> {
    let mut names: BTreeMap<Ecosystem, BTreeSet<String>> = BTreeMap::new();
    for c in candidates {
        names
            .entry(c.dep.ecosystem)
            .or_default()
            .insert(c.norm.clone());
    }
    let mut rows: HashMap<(Ecosystem, String), Vec<ParsedRow>> = HashMap::new();
    for (eco, set) in &names {
        let list: Vec<String> = set.iter().cloned().collect();
        for row in store.affected_rows(*eco, &list).await? {
            match serde_json::from_str::<proven_osv::Affected>(&row.affected_json) {
                Ok(affected) => rows
                    .entry((*eco, row.normalized_name.clone()))
                    .or_default()
                    .push(ParsedRow { row, affected }),
                Err(e) => trace.push(
                    "advisory_unreadable",
                    json!({"advisory": row.advisory_id, "index": row.idx, "error": e.to_string()}),
                ),
            }
        }
    }
    Ok(rows)
}

/// What one advisory makes of one candidate.
enum Matched {
    Finding(Box<Draft>),
    /// The version could not be compared under the ecosystem's rules (the reason).
    Incomparable(String),
    /// Skipped, outside every range, or affected on the base too (each a trace line).
    Nothing,
}

/// One candidate against the rows of one advisory: a finding only when the head version is
/// affected and no base version of it is.
fn match_advisory(
    c: &Candidate<'_>,
    advisory: &str,
    entries: &[&ParsedRow],
    options: &DepsOptions,
    trace: &mut Trace,
) -> Matched {
    let eco = c.dep.ecosystem;
    let kind =
        FindingKind::from_informational(entries.iter().find_map(|e| e.affected.informational()));
    if kind != FindingKind::Vulnerability && options.informational == Informational::Ignore {
        trace.push("skipped", json!({"advisory": advisory, "name": c.dep.name, "reason": "informational advisories are ignored (dependencies.informational)"}));
        return Matched::Nothing;
    }
    let mut hits = Vec::new();
    let mut failure = None;
    for e in entries {
        match proven_version::is_affected(eco, &e.affected, &c.dep.version) {
            Ok(a) if a.affected => hits.push((*e, a)),
            Ok(_) => {}
            Err(err) => failure = Some(err.to_string()),
        }
    }
    if hits.is_empty() {
        if let Some(reason) = failure {
            trace.push("incomparable", json!({"advisory": advisory, "path": c.path, "name": c.dep.name, "version": c.dep.version, "reason": reason}));
            return Matched::Incomparable(reason);
        }
        trace.push("no_match", json!({"advisory": advisory, "path": c.path, "ecosystem": eco.osv_name(), "name": c.dep.name, "version": c.dep.version, "reason": "outside every affected range"}));
        return Matched::Nothing;
    }
    let base_hit = c.base_versions.iter().find(|b| {
        entries.iter().any(|e| {
            proven_version::is_affected(eco, &e.affected, &b.version).is_ok_and(|a| a.affected)
        })
    });
    if let Some(b) = base_hit {
        trace.push("already_affected", json!({"advisory": advisory, "path": c.path, "name": c.dep.name, "base_version": b.version, "head_version": c.dep.version, "reason": "the base is affected too: not brought in by this change"}));
        return Matched::Nothing;
    }
    trace.push("match", json!({"advisory": advisory, "path": c.path, "ecosystem": eco.osv_name(), "name": c.dep.name, "version": c.dep.version, "rows": hits.iter().map(|(e, a)| json!({"index": e.row.idx, "matched": describe_match(&e.affected, a)})).collect::<Vec<_>>()}));
    Matched::Finding(Box::new(draft(c, advisory, kind, entries, &hits)))
}

/// The finding one advisory makes of a candidate, with the rows that affect its version.
fn draft(
    c: &Candidate<'_>,
    advisory: &str,
    kind: FindingKind,
    entries: &[&ParsedRow],
    hits: &[(&ParsedRow, proven_version::Affectedness)],
) -> Draft {
    let eco = c.dep.ecosystem;
    let first = &hits[0].0.row;
    let evidence = hits
        .iter()
        .map(|(e, a)| Evidence {
            kind: "advisory_row".into(),
            advisory_id: Some(e.row.advisory_id.clone()),
            affected_index: Some(e.row.idx),
            matched: Some(describe_match(&e.affected, a)),
            row: serde_json::from_str(&e.row.affected_json).ok(),
            run: None,
            test: None,
            tool: None,
        })
        .collect();
    let cves: Vec<String> = std::iter::once(first.advisory_id.as_str())
        .chain(first.aliases.iter().map(String::as_str))
        .filter(|a| a.starts_with("CVE-"))
        .map(str::to_string)
        .collect();
    let old = c
        .base_versions
        .iter()
        .map(|b| b.version.as_str())
        .collect::<Vec<_>>();
    Draft {
        cves,
        finding: Finding {
            id: format!(
                "dependency:{}:{}:{}:{}",
                c.path,
                eco.osv_name(),
                c.norm,
                advisory
            ),
            proof_level: Level::Advisory,
            kind,
            title: format!(
                "{} {} is affected by {}",
                c.dep.name, c.dep.version, advisory
            ),
            package: Some(PackageChange {
                ecosystem: eco.osv_name().to_string(),
                name: c.dep.name.clone(),
                old_version: if old.is_empty() {
                    None
                } else {
                    Some(old.join(", "))
                },
                new_version: c.dep.version.clone(),
                dependency: c.dep.kind.as_str().to_string(),
                dev: c.dep.dev,
            }),
            location: Location {
                path: c.path.to_string(),
                line: c.dep.line,
            },
            advisory: Some(advisory_ref(advisory, first)),
            exploited: None,
            epss: None,
            fix: Some(fix_for(c, entries)),
            claim: None,
            skeptic: None,
            patch: None,
            fix_not_proved: None,
            reachability: None,
            evidence,
        },
    }
}

/// The fix of a candidate's finding from its advisory's rows ([`super::depfix::fix_ref`]).
fn fix_for(c: &Candidate<'_>, entries: &[&ParsedRow]) -> FixRef {
    let all: Vec<&proven_osv::Affected> = entries.iter().map(|e| &e.affected).collect();
    super::depfix::fix_ref(c.dep, &c.base_versions, &all)
}

/// The advisory as a finding names it (from its first affecting row).
fn advisory_ref(advisory: &str, first: &AffectedRow) -> AdvisoryRef {
    let severity: Vec<proven_osv::Severity> =
        serde_json::from_str(&first.severity_json).unwrap_or_default();
    AdvisoryRef {
        id: advisory.to_string(),
        aliases: first.aliases.clone(),
        summary: first.summary.clone(),
        severity: severity
            .into_iter()
            .map(|s| SeverityRef {
                base_score: cvss_base_score(&s.score),
                kind: s.kind,
                score: s.score,
            })
            .collect(),
        published: first.published.clone(),
        modified: first.modified.clone(),
    }
}

/// The findings, each marked "exploited" from KEV and given its EPSS probability: one query
/// each for all findings.
async fn with_exploitation(
    store: &Store,
    drafts: Vec<Draft>,
    trace: &mut Trace,
) -> Result<Vec<Finding>, StoreError> {
    let all_cves: Vec<String> = drafts
        .iter()
        .flat_map(|d| d.cves.iter().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let kev = store.kev_for(&all_cves).await?;
    let epss = store.epss_for(&all_cves).await?;
    let mut findings = Vec::new();
    for mut d in drafts {
        if let Some(k) = d.cves.iter().find_map(|c| kev.get(c)) {
            d.finding.exploited = Some(KevRef {
                cve: k.cve.clone(),
                date_added: k.date_added.clone(),
                known_ransomware_campaign_use: k.ransomware.clone(),
            });
            d.finding.proof_level = ProofLevel::Exploited.into();
        }
        if let Some(e) = d
            .cves
            .iter()
            .filter_map(|c| epss.get(c))
            .max_by(|a, b| a.probability.total_cmp(&b.probability))
        {
            d.finding.epss = Some(EpssRef {
                cve: e.cve.clone(),
                probability: e.probability,
                percentile: e.percentile,
                score_date: e.score_date.clone(),
            });
        }
        trace.push(
            "finding",
            json!({"id": d.finding.id, "proof_level": d.finding.proof_level.as_str(), "kind": d.finding.kind.as_str(),
                   "advisory": d.finding.advisory_id(), "package": d.finding.package_name(),
                   "version": d.finding.package.as_ref().map(|p| &p.new_version),
                   "fix": d.finding.fix.as_ref().and_then(|f| f.version.as_ref())}),
        );
        findings.push(d.finding);
    }
    Ok(findings)
}

fn describe_match(affected: &proven_osv::Affected, a: &proven_version::Affectedness) -> String {
    let range = a.by_range.map(|i| {
        let kind = affected
            .ranges
            .get(i)
            .map(|r| format!("{:?}", r.kind).to_uppercase())
            .unwrap_or_default();
        format!("range {i} ({kind})")
    });
    match (range, a.by_versions_list) {
        (Some(r), true) => format!("{r} and the versions list"),
        (Some(r), false) => r,
        (None, true) => "the versions list".into(),
        (None, false) => "unknown".into(),
    }
}

/// The packages each file's head side brings in, each traced as examined.
fn candidates<'a>(
    pairs: &'a [FilePair],
    options: &DepsOptions,
    trace: &mut Trace,
) -> Vec<Candidate<'a>> {
    let mut out = Vec::new();
    for pair in pairs {
        let Some(head) = &pair.head else { continue };
        let mut base_by_name: HashMap<String, Vec<&Dependency>> = HashMap::new();
        if let Some(base) = &pair.base {
            for d in base
                .dependencies
                .iter()
                .filter(|d| d.origin == Origin::Registry)
            {
                base_by_name.entry(d.normalized_name()).or_default().push(d);
            }
        }
        let mut seen: HashSet<(String, &str)> = HashSet::new();
        for dep in &head.dependencies {
            if dep.origin != Origin::Registry {
                let origin = match &dep.origin {
                    Origin::Git { url } => format!("git {url}"),
                    _ => "a local path".to_string(),
                };
                trace.push("not_matched", json!({"path": pair.path, "name": dep.name, "version": dep.version, "reason": format!("comes from {origin}, not the registry")}));
                continue;
            }
            if dep.dev && !options.dev_dependencies {
                continue;
            }
            let norm = dep.normalized_name();
            if !seen.insert((norm.clone(), dep.version.as_str())) {
                continue;
            }
            let base_versions = base_by_name.get(&norm).cloned().unwrap_or_default();
            if base_versions.iter().any(|b| b.version == dep.version) {
                continue; // unchanged: the change did not bring this version in
            }
            trace.push(
                "package",
                json!({"path": pair.path, "ecosystem": dep.ecosystem.osv_name(), "name": dep.name,
                       "old": base_versions.iter().map(|b| &b.version).collect::<Vec<_>>(),
                       "new": dep.version, "dependency": dep.kind.as_str(), "dev": dep.dev}),
            );
            out.push(Candidate {
                path: &pair.path,
                dep,
                norm,
                base_versions,
            });
        }
    }
    out
}
