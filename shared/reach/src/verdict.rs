//! What reachability says about one dependency finding.

use serde::{Deserialize, Serialize};

/// One verdict per dependency finding. Evidence shown beside the advisory rows, never a
/// proof level by itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The code calls, references or (for an import-based verdict) imports what the
    /// advisory names.
    Reachable { basis: Basis, sites: Vec<Site> },
    /// Every file of the language parsed and none reaches what the advisory names.
    NotReached { basis: Basis, searched: Searched },
    /// The question cannot be answered from what was given.
    Unknown { why: UnknownWhy },
}

impl Verdict {
    /// The stored name of the verdict (`reachable`, `not_reached`, `unknown`).
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Reachable { .. } => "reachable",
            Verdict::NotReached { .. } => "not_reached",
            Verdict::Unknown { .. } => "unknown",
        }
    }
}

/// What the verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The advisory's vulnerable symbols (Go `imports[].symbols`, RustSec `functions`,
    /// dotted Python paths).
    Symbols,
    /// Only the affected packages or modules: an import reaches (Python without symbols,
    /// a Go import path whose symbol list is empty, which the Go database uses for "every
    /// symbol of the package").
    Imports,
}

/// How a site reaches the vulnerable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SiteKind {
    /// A call whose callee resolves, through the file's imports, to a vulnerable symbol.
    Call,
    /// The vulnerable symbol named without a call (a function value, a `use` of it).
    Reference,
    /// A method of the vulnerable name called on a receiver whose type the parser cannot
    /// resolve, in a file that imports the affected package.
    MethodByName,
    /// An import of the affected package or module (import-based verdicts only).
    Import,
}

/// One place in the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    pub path: String,
    /// 1-based.
    pub line: usize,
    /// The source line, trimmed.
    pub text: String,
    pub kind: SiteKind,
    /// The advisory's spelling of the symbol or module reached.
    pub symbol: String,
}

/// What a `not reached` verdict searched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Searched {
    /// The files of the language that were parsed.
    pub files: Vec<String>,
    /// The affected packages or modules looked for in imports.
    pub modules: Vec<String>,
    /// The vulnerable symbols looked for, as the advisory spells them.
    pub symbols: Vec<String>,
    /// Imports of the affected package found without a use of any vulnerable symbol.
    pub imports: Vec<Site>,
}

/// Why no verdict could be given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum UnknownWhy {
    /// The advisory names no vulnerable symbol, and an import alone does not decide for
    /// this ecosystem.
    NoSymbols,
    /// The ecosystem has no parser here.
    UnsupportedEcosystem { ecosystem: String },
    /// No file of the language was among the files searched.
    NoSourceFiles,
    /// Nothing was found, but these files did not parse cleanly, so a site may be hidden.
    ParseErrors { files: Vec<String> },
    /// Nothing was found, but these files import an affected package under a name the
    /// parser cannot tell (a Go package whose declared name is not its path's), so a site
    /// may be hidden.
    ImportNameUnresolved { files: Vec<String> },
}
