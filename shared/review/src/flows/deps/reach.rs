//! Reachability of one dependency file's findings: for each finding, whether the head
//! tree's code (the files of the package's language under the dependency file's folder)
//! calls, references or imports what the advisory names, by [`proven_reach::assess`] over
//! the sources read from git. Evidence beside the rows, never a level of proof.
//!
//! The vulnerable symbols come from the finding's own advisory rows (OSV `affected[]`
//! entries as the store keeps them: Go's `ecosystem_specific.imports`, RustSec's
//! `ecosystem_specific.affects.functions`). A search that could not read every source file
//! never says "not reached": a site may be in what was not read.

use std::collections::HashMap;

use proven_change::{BlobRead, Change, Repo};
use proven_domain::Ecosystem;
use proven_reach::{SourceFile, Verdict, Vulnerable};
use proven_report::{Finding, MAX_REACH_SITES, ReachSite, ReachVerdict, Reachability};
use serde_json::json;

use crate::core::trace::Trace;

/// Files listed in the head tree before the search gives up on a whole answer.
const MAX_LISTED: usize = 200_000;
/// Source files read for one ecosystem; more makes the verdict `unknown`, never
/// `not reached`.
const MAX_SOURCES: usize = 20_000;
/// A source file larger than this is not read (and the verdict cannot be `not reached`).
const MAX_SOURCE_BYTES: u64 = 2 << 20;
/// All the sources read for one ecosystem, together.
const MAX_TOTAL_BYTES: u64 = 256 << 20;

/// Folders whose code is not the project's own: vendored or installed dependencies (the
/// vulnerable package's own sources call its own functions), build output, environments.
const NOT_THE_PROJECTS: &[&str] = &[
    "vendor",
    "third_party",
    "node_modules",
    "target",
    ".git",
    "site-packages",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pypackages__",
];

/// The sources of one ecosystem under one folder, as read.
struct Sources {
    files: Vec<SourceFile>,
    /// Why some were not read (a whole search could not be made).
    cut: Option<String>,
}

/// Gives each dependency finding of `findings` its reachability. Blocking (git2).
pub(super) fn assess_all(
    repo: &Repo,
    (base, head): (&str, &str),
    findings: &mut [Finding],
    trace: &mut Trace,
) {
    if !findings.iter().any(|f| f.package.is_some()) {
        return;
    }
    let listing = repo.list_files(head, MAX_LISTED);
    let change = changed_hunks(repo, base, head);
    let mut read: HashMap<(Ecosystem, String), Sources> = HashMap::new();
    for finding in findings.iter_mut() {
        let Some(vulnerable) = vulnerable_of(finding) else {
            continue;
        };
        let folder = folder_of(&finding.location.path);
        let sources = read
            .entry((vulnerable.ecosystem, folder.clone()))
            .or_insert_with(|| match &listing {
                Ok((paths, listing_cut)) => {
                    let mut s = sources(repo, head, paths, vulnerable.ecosystem, &folder);
                    if *listing_cut && s.cut.is_none() {
                        s.cut = Some(format!("the tree holds more than {MAX_LISTED} files"));
                    }
                    s
                }
                Err(e) => Sources {
                    files: Vec::new(),
                    cut: Some(format!("the head tree could not be listed: {e}")),
                },
            });
        let verdict = proven_reach::assess(&vulnerable, &sources.files);
        let reachability = to_report(verdict, sources, &change);
        trace.push(
            "reachability",
            json!({"finding": finding.id, "verdict": reachability.verdict.as_str(),
                   "sites": reachability.sites_total, "files": reachability.files_searched,
                   "why": reachability.why}),
        );
        finding.reachability = Some(reachability);
    }
}

/// What the finding's advisory names as vulnerable, from its first row of a package of a
/// known ecosystem.
fn vulnerable_of(finding: &Finding) -> Option<Vulnerable> {
    finding.package.as_ref()?;
    finding
        .evidence
        .iter()
        .filter_map(|e| e.row.as_ref())
        .find_map(|row| proven_reach::symbols::from_osv_affected_json(&row.to_string()).ok()?)
}

/// The folder of a dependency file (`""` at the root): its project's sources are below it.
/// A `requirements/*.txt` file pins the project of the folder above `requirements/`.
fn folder_of(path: &str) -> String {
    let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
    let dir = match dir.strip_suffix("requirements") {
        Some(above) if path.ends_with(".txt") && (above.is_empty() || above.ends_with('/')) => {
            above.trim_end_matches('/')
        }
        _ => dir,
    };
    if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    }
}

fn is_projects(path: &str) -> bool {
    !path
        .split('/')
        .rev()
        .skip(1)
        .any(|dir| NOT_THE_PROJECTS.contains(&dir))
}

/// Reads the head's sources of `ecosystem`'s language under `folder`, within the bounds.
fn sources(
    repo: &Repo,
    head: &str,
    paths: &[String],
    ecosystem: Ecosystem,
    folder: &str,
) -> Sources {
    let mut out = Sources {
        files: Vec::new(),
        cut: None,
    };
    let mut total = 0u64;
    let wanted = paths.iter().filter(|p| {
        p.starts_with(folder) && proven_reach::is_source_of(ecosystem, p) && is_projects(p)
    });
    for path in wanted {
        if out.files.len() == MAX_SOURCES {
            out.cut = Some(format!("more than {MAX_SOURCES} source files"));
            break;
        }
        match repo.read_blob(head, path.as_bytes(), MAX_SOURCE_BYTES) {
            Ok(BlobRead::Content(bytes)) => {
                total += bytes.len() as u64;
                if total > MAX_TOTAL_BYTES {
                    out.cut = Some(format!(
                        "more than {} MiB of sources",
                        MAX_TOTAL_BYTES >> 20
                    ));
                    break;
                }
                let text = String::from_utf8_lossy(&bytes).into_owned();
                out.files.push(SourceFile::new(path.clone(), text));
            }
            Ok(BlobRead::TooLarge { size }) => {
                out.cut = Some(format!(
                    "{path} ({size} bytes) is over {MAX_SOURCE_BYTES} bytes: not read"
                ));
            }
            Ok(BlobRead::Missing | BlobRead::LeftOut(_)) => {}
            Err(e) => out.cut = Some(format!("{path} could not be read: {e}")),
        }
    }
    out
}

/// The head-side line ranges the change touches, by path.
type Touched = HashMap<String, Vec<(u32, u32)>>;

fn changed_hunks(repo: &Repo, base: &str, head: &str) -> Touched {
    let change: Option<Change> = (|| {
        let base = repo.resolve(base).ok()?;
        let head = repo.resolve(head).ok()?;
        repo.diff(&base, &head, proven_change::Limits::default())
            .ok()
    })();
    let mut touched = Touched::new();
    for file in change.iter().flat_map(|c| &c.files) {
        let Some(path) = file.new_path.as_ref().and_then(|p| p.as_str()) else {
            continue;
        };
        let ranges = file
            .hunks
            .iter()
            .map(|h| (h.new_start, h.new_start + h.new_lines))
            .collect();
        touched.insert(path.to_string(), ranges);
    }
    touched
}

fn site(s: proven_reach::Site, touched: &Touched) -> ReachSite {
    let line = u32::try_from(s.line).unwrap_or(u32::MAX);
    let in_change = touched
        .get(&s.path)
        .is_some_and(|ranges| ranges.iter().any(|(from, to)| (*from..*to).contains(&line)));
    ReachSite {
        kind: serde_json::to_value(s.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        path: s.path,
        line: s.line,
        text: s.text,
        symbol: s.symbol,
        in_change,
    }
}

fn basis_name(basis: proven_reach::Basis) -> String {
    match basis {
        proven_reach::Basis::Symbols => "symbols".into(),
        proven_reach::Basis::Imports => "imports".into(),
    }
}

/// The verdict as a finding carries it; a `not reached` from a cut search is `unknown`.
fn to_report(verdict: Verdict, sources: &Sources, touched: &Touched) -> Reachability {
    let mut out = Reachability {
        verdict: ReachVerdict::Unknown,
        basis: None,
        sites: Vec::new(),
        sites_total: 0,
        symbols: Vec::new(),
        modules: Vec::new(),
        files_searched: sources.files.len(),
        unused_imports: Vec::new(),
        why: None,
    };
    match verdict {
        Verdict::Reachable { basis, sites } => {
            out.verdict = ReachVerdict::Reachable;
            out.basis = Some(basis_name(basis));
            out.sites_total = sites.len();
            let mut sites: Vec<ReachSite> = sites.into_iter().map(|s| site(s, touched)).collect();
            // The change's own sites first.
            sites.sort_by_key(|s| !s.in_change);
            sites.truncate(MAX_REACH_SITES);
            out.sites = sites;
        }
        Verdict::NotReached { basis, searched } => {
            out.basis = Some(basis_name(basis));
            out.symbols = searched.symbols;
            out.modules = searched.modules;
            out.files_searched = searched.files.len();
            match &sources.cut {
                Some(cut) => {
                    out.why = Some(format!(
                        "nothing found, but not every source was read: {cut}"
                    ))
                }
                None => {
                    out.verdict = ReachVerdict::NotReached;
                    out.unused_imports = searched
                        .imports
                        .into_iter()
                        .take(MAX_REACH_SITES)
                        .map(|s| site(s, touched))
                        .collect();
                }
            }
        }
        Verdict::Unknown { why } => out.why = Some(unknown_words(why, sources)),
    }
    out
}

fn unknown_words(why: proven_reach::UnknownWhy, sources: &Sources) -> String {
    use proven_reach::UnknownWhy as W;
    let some = |files: &[String]| {
        let shown: Vec<&str> = files.iter().take(3).map(String::as_str).collect();
        let more = files.len().saturating_sub(3);
        if more == 0 {
            shown.join(", ")
        } else {
            format!("{} and {more} more", shown.join(", "))
        }
    };
    match why {
        W::NoSymbols => "the advisory names no vulnerable function, and an import alone does not decide for this ecosystem".into(),
        W::UnsupportedEcosystem { ecosystem } => format!("no parser for {ecosystem} code here"),
        W::NoSourceFiles => match &sources.cut {
            Some(cut) => format!("no source file of the language was read: {cut}"),
            None => "no source file of the language under the dependency file's folder".into(),
        },
        W::ParseErrors { files } => format!("nothing found, but these files did not parse cleanly: {}", some(&files)),
        W::ImportNameUnresolved { files } => format!(
            "nothing found, but these files import the package under a name the parser cannot tell: {}",
            some(&files)
        ),
    }
}
