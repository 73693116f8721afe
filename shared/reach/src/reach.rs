//! One verdict for one affected package over a set of source files.

use crate::lang::{FileText, Language};
use crate::symbols::Vulnerable;
use crate::verdict::{Basis, Searched, UnknownWhy, Verdict};

/// A source file to search: a path for the sites, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile {
            path: path.into(),
            text: text.into(),
        }
    }
}

/// Whether `path` is a source file of the language `ecosystem`'s packages are used from
/// (`.go`, `.rs`, `.py`/`.pyi`): what a caller reads for [`assess`]. False for an ecosystem
/// with no parser here.
pub fn is_source_of(ecosystem: proven_domain::Ecosystem, path: &str) -> bool {
    Language::for_ecosystem(ecosystem).is_some_and(|l| l.owns(path))
}

/// Whether `files` (a tree's sources, or the files a change touches) reach what the
/// advisory names for `vulnerable`. Files of other languages are skipped.
pub fn assess(vulnerable: &Vulnerable, files: &[SourceFile]) -> Verdict {
    let Some(language) = Language::for_ecosystem(vulnerable.ecosystem) else {
        let ecosystem = vulnerable.ecosystem.osv_name().to_string();
        return Verdict::Unknown {
            why: UnknownWhy::UnsupportedEcosystem { ecosystem },
        };
    };
    let imports = &vulnerable.imports;
    let with_symbols = imports.iter().filter(|i| !i.symbols.is_empty()).count();
    let basis = if with_symbols > 0 && with_symbols == imports.len() {
        Basis::Symbols
    } else {
        Basis::Imports
    };
    // Only Go (an empty symbol list means every symbol) and Python (no symbol data is
    // published for most advisories) decide by imports; a Rust crate without functions
    // says nothing about which code is vulnerable.
    let imports_decide = matches!(language, Language::Go | Language::Python);
    if imports.is_empty() || (basis == Basis::Imports && !imports_decide) {
        return Verdict::Unknown {
            why: UnknownWhy::NoSymbols,
        };
    }
    let Some(mut parser) = language.parser() else {
        let ecosystem = vulnerable.ecosystem.osv_name().to_string();
        return Verdict::Unknown {
            why: UnknownWhy::UnsupportedEcosystem { ecosystem },
        };
    };
    let mut searched = Searched {
        modules: imports.iter().map(|i| i.path.clone()).collect(),
        symbols: imports
            .iter()
            .flat_map(|i| i.symbols.iter().map(|s| s.name.clone()))
            .collect(),
        ..Searched::default()
    };
    let mut sites = Vec::new();
    let mut broken = Vec::new();
    let mut unresolved = Vec::new();
    for file in files.iter().filter(|f| language.owns(&f.path)) {
        searched.files.push(file.path.clone());
        let Some(tree) = parser.parse(&file.text, None) else {
            broken.push(file.path.clone());
            continue;
        };
        if tree.root_node().has_error() {
            broken.push(file.path.clone());
        }
        let text = FileText {
            path: &file.path,
            text: &file.text,
            tree,
        };
        let found = language.find(&text, imports);
        if !found.unresolved.is_empty() {
            unresolved.push(file.path.clone());
        }
        sites.extend(found.reaching);
        searched.imports.extend(found.imports);
    }
    if !sites.is_empty() {
        Verdict::Reachable { basis, sites }
    } else if searched.files.is_empty() {
        Verdict::Unknown {
            why: UnknownWhy::NoSourceFiles,
        }
    } else if !broken.is_empty() {
        Verdict::Unknown {
            why: UnknownWhy::ParseErrors { files: broken },
        }
    } else if !unresolved.is_empty() {
        Verdict::Unknown {
            why: UnknownWhy::ImportNameUnresolved { files: unresolved },
        }
    } else {
        Verdict::NotReached { basis, searched }
    }
}

#[cfg(test)]
#[path = "reach_tests.rs"]
mod tests;
