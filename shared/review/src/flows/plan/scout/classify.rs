//! Scout's classifier: each file's kind and signals, the floor the path rules set, and the
//! change's class with its confidence. The class is Scout Intent's routing
//! (`proven_engines::intent`, the engine its eval harness drives): each kind of change is a
//! candidate scored by the share of the change's files it holds, routed under [`ROUTING`],
//! and the confidence is banded by the engine's canonical bands.

use proven_config::{ReviewClass, ScoutSettings};
use proven_engines::intent::{Candidate, Routing, band, route};
use proven_lockfile::Format;

use crate::core::wire::FileFacts;

const CONFIG_SUFFIXES: &[&str] = &[
    ".yml",
    ".yaml",
    ".toml",
    ".json",
    ".ini",
    ".cfg",
    ".conf",
    ".properties",
    ".env",
    ".xml",
];
/// Path fragments that mark security-sensitive code.
const SECURITY_SIGNALS: &[&str] = &[
    "auth",
    "crypto",
    "security",
    "secret",
    "password",
    "passwd",
    "token",
    "permission",
    "acl",
    "sandbox",
    "tls",
    "ssl",
    "jwt",
    "oauth",
    "login",
    "session",
    "cert",
    ".github/workflows/",
];

/// What kind of change a file, or the whole change, is (the plan's `change_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum ChangeKind {
    Security,
    Dependency,
    Refactor,
    Docs,
    Config,
    Feature,
    /// No file changed.
    Empty,
}

/// How deep the review goes: the deep band (a security-class review) adds the coverage
/// auditor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum Band {
    Deep,
    Light,
}

/// One file, the kind of change it is, and the rule that said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    pub path: String,
    pub kind: ChangeKind,
    pub why: String,
}

/// The class a path rule set for one file of the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Floor {
    pub class: ReviewClass,
    /// The rule, as configured (`manifests=security`).
    pub rule: String,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    pub kind: ChangeKind,
    pub ambiguous: bool,
    /// Each file and the rule it matched.
    pub signals: Vec<Signal>,
    /// The highest class the path rules set for a file of the change, and which.
    pub floor: Option<Floor>,
    /// The share of the change's files of its largest kind (1 when wholly one kind).
    pub confidence: f64,
}

impl Classification {
    /// Scout's confidence band (Scout Intent's canonical bands).
    pub fn confidence_band(&self) -> &'static str {
        band(self.confidence)
    }
}

fn lower(p: &str) -> String {
    p.to_ascii_lowercase()
}

pub(super) fn is_manifest(p: &str) -> bool {
    Format::detect(p).is_some()
}

fn file_kind(f: &FileFacts, scout: &ScoutSettings) -> (ChangeKind, String) {
    let path = lower(&f.path);
    if let Some(sig) = SECURITY_SIGNALS.iter().find(|s| path.contains(*s)) {
        return (ChangeKind::Security, format!("path contains {sig:?}"));
    }
    // Every side's path counts: a file renamed out of a manifest's name is still one. (A
    // security path rule is a signal of the floor: the change's class is security.)
    let paths = std::iter::once(f.path.as_str()).chain(f.old_path.as_deref());
    if paths.clone().any(is_manifest) {
        return (
            ChangeKind::Dependency,
            "dependency manifest or lock file".into(),
        );
    }
    if f.pure_rename {
        return (ChangeKind::Refactor, "renamed without changes".into());
    }
    if paths.clone().all(|p| scout.prose_name(p)) {
        return match (f.executable, f.shebang, f.binary) {
            (false, Some(false), false) => (ChangeKind::Docs, "verified prose".into()),
            (true, _, _) => (
                ChangeKind::Feature,
                "prose suffix but executable: not prose".into(),
            ),
            (_, Some(true), _) => (
                ChangeKind::Feature,
                "prose suffix but starts with #! on a side of the change: not prose".into(),
            ),
            (_, None, _) => (
                ChangeKind::Feature,
                "prose suffix but could not be read to verify: not prose".into(),
            ),
            (_, _, true) => (
                ChangeKind::Feature,
                "prose suffix but binary: not prose".into(),
            ),
        };
    }
    if CONFIG_SUFFIXES.iter().any(|s| path.ends_with(s)) || path.ends_with("dockerfile") {
        return (ChangeKind::Config, "configuration file".into());
    }
    (ChangeKind::Feature, "source or other file".into())
}

/// The highest class the path rules set for any path of the change (old paths included).
fn floor(files: &[FileFacts], scout: &ScoutSettings) -> Option<Floor> {
    files
        .iter()
        .flat_map(|f| std::iter::once(&f.path).chain(f.old_path.as_ref()))
        .filter_map(|p| {
            scout.floor_of(p, is_manifest(p)).map(|r| Floor {
                class: r.class,
                rule: format!("{}={}", r.pattern, r.class.as_str()),
                path: p.clone(),
            })
        })
        .max_by_key(|f| f.class)
}

/// Scout's routing, where it differs from the spec's (`Routing::SPEC`): one security signal
/// makes the whole change security (never outvoted); a change that is not wholly one kind is
/// never planned as a confident lighter class (it routes to feature, which runs its rules'
/// class in full); every kind a file holds counts (no floor); no file changed is `empty`.
pub const ROUTING: Routing<'static> = Routing {
    never_outvoted: Some("security"),
    ambiguous: Some("feature"),
    floor: 0.0,
    fallback: "empty",
};

pub fn classify(files: &[FileFacts], scout: &ScoutSettings) -> Classification {
    let mut signals = Vec::with_capacity(files.len());
    let mut kinds: Vec<(ChangeKind, usize)> = Vec::new();
    for f in files {
        let (kind, why) = file_kind(f, scout);
        signals.push(Signal {
            path: f.path.clone(),
            kind,
            why,
        });
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    let mut candidates: Vec<Candidate> = kinds
        .iter()
        .map(|(k, n)| Candidate {
            intent: <&str>::from(*k).to_string(),
            score: *n as f64 / files.len() as f64,
        })
        .collect();
    let routed = route(&mut candidates, &ROUTING);
    // The routed intent is one of the candidates' stored names or the fallback's.
    let kind = routed.primary.parse().unwrap_or(ChangeKind::Feature);
    let confidence = if files.is_empty() {
        1.0
    } else {
        routed.confidence
    };
    let ambiguous = routed.ambiguous;
    Classification {
        kind,
        ambiguous,
        signals,
        floor: floor(files, scout),
        confidence,
    }
}
