//! Whether the code reaches what a dependency finding's advisory names: one verdict per
//! dependency finding, shown beside the advisory rows in every format. Evidence, never a
//! proof level by itself (a `not_reached` finding keeps its level; a setting may keep it
//! from failing the check).

use serde::{Deserialize, Serialize};

/// At most this many sites (or unused imports) are kept on a finding; `sites_total` says
/// how many there were.
pub const MAX_REACH_SITES: usize = 20;

/// The verdict's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReachVerdict {
    /// The code calls, references or (on an import basis) imports what the advisory names.
    Reachable,
    /// Every file of the language searched, none reaches it.
    NotReached,
    /// No answer from what could be searched (`why` says what was missing).
    Unknown,
}

impl ReachVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ReachVerdict::Reachable => "reachable",
            ReachVerdict::NotReached => "not_reached",
            ReachVerdict::Unknown => "unknown",
        }
    }

    /// The words a reader sees.
    pub fn words(self) -> &'static str {
        match self {
            ReachVerdict::Reachable => "reachable",
            ReachVerdict::NotReached => "not reached",
            ReachVerdict::Unknown => "unknown",
        }
    }
}

/// One place in the head tree's source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReachSite {
    pub path: String,
    /// 1-based.
    pub line: usize,
    /// The source line, trimmed.
    pub text: String,
    /// `call`, `reference`, `method_by_name` or `import`.
    pub kind: String,
    /// The advisory's spelling of the symbol or module reached.
    pub symbol: String,
    /// Whether the change adds or modifies this line.
    #[serde(default)]
    pub in_change: bool,
}

/// The reachability of one dependency finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reachability {
    pub verdict: ReachVerdict,
    /// `symbols` (the advisory's vulnerable functions) or `imports` (its packages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<String>,
    /// Where the code reaches it (reachable), at most [`MAX_REACH_SITES`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sites: Vec<ReachSite>,
    #[serde(default)]
    pub sites_total: usize,
    /// What was searched for: the advisory's symbols and the affected modules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<String>,
    /// How many source files of the language were parsed.
    #[serde(default)]
    pub files_searched: usize,
    /// Imports of the affected package with no use of a vulnerable symbol (not reached).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unused_imports: Vec<ReachSite>,
    /// Why there is no answer (unknown), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Reachability {
    /// One line for a table cell or a text report: the verdict and what it rests on.
    pub fn summary(&self) -> String {
        let basis = match self.basis.as_deref() {
            Some("imports") => " (by imports: the advisory names no function)",
            _ => "",
        };
        match self.verdict {
            ReachVerdict::Reachable => {
                let first = self
                    .sites
                    .first()
                    .map(|s| {
                        format!(
                            ": {}:{} ({} of {})",
                            s.path,
                            s.line,
                            s.kind.replace('_', " "),
                            s.symbol
                        )
                    })
                    .unwrap_or_default();
                let more = match self.sites_total {
                    0 | 1 => String::new(),
                    n => format!(" and {} more", n - 1),
                };
                format!("reachable{basis}{first}{more}")
            }
            ReachVerdict::NotReached => {
                let what = if self.symbols.is_empty() {
                    self.modules.join(", ")
                } else {
                    self.symbols.join(", ")
                };
                let imports = match self.unused_imports.len() {
                    0 => String::new(),
                    n => format!(
                        "; imported without a use in {n} place{}",
                        if n == 1 { "" } else { "s" }
                    ),
                };
                format!(
                    "not reached{basis}: {} source file{} searched for {what}{imports}",
                    self.files_searched,
                    if self.files_searched == 1 { "" } else { "s" }
                )
            }
            ReachVerdict::Unknown => format!(
                "unknown: {}",
                self.why
                    .as_deref()
                    .unwrap_or("no answer from what could be searched")
            ),
        }
    }
}

/// The templates' `reach` filter: a finding's reachability as its one-line summary.
pub(crate) fn summary_filter(value: minijinja::Value) -> Result<String, minijinja::Error> {
    serde_json::to_value(&value)
        .and_then(serde_json::from_value::<Reachability>)
        .map(|r| r.summary())
        .map_err(|e| {
            minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                format!("reachability: {e}"),
            )
        })
}
