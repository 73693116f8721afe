//! One module per language: each parses a file with its tree-sitter grammar and returns the
//! sites that reach the vulnerable imports and symbols, and the imports of them it saw.

pub(crate) mod go;
pub(crate) mod python;
pub(crate) mod rust;

use proven_domain::Ecosystem;
use tree_sitter::{Node, Parser, Tree};

use crate::symbols::VulnerableImport;
use crate::verdict::{Site, SiteKind};

/// A language whose sources can be searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Language {
    Go,
    Rust,
    Python,
}

impl Language {
    pub(crate) fn for_ecosystem(ecosystem: Ecosystem) -> Option<Language> {
        match ecosystem {
            Ecosystem::Go => Some(Language::Go),
            Ecosystem::CratesIo => Some(Language::Rust),
            Ecosystem::PyPI => Some(Language::Python),
            _ => None,
        }
    }

    pub(crate) fn owns(self, path: &str) -> bool {
        let extension = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        match self {
            Language::Go => extension == "go",
            Language::Rust => extension == "rs",
            Language::Python => matches!(extension, "py" | "pyi"),
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
        }
    }

    /// A parser for the language. `None` only if the linked grammar's ABI is one the
    /// tree-sitter library refuses, which the tests would show.
    pub(crate) fn parser(self) -> Option<Parser> {
        let mut parser = Parser::new();
        parser.set_language(&self.grammar()).ok()?;
        Some(parser)
    }

    pub(crate) fn find(self, file: &FileText<'_>, imports: &[VulnerableImport]) -> Found {
        match self {
            Language::Go => go::find(file, imports),
            Language::Rust => rust::find(file, imports),
            Language::Python => python::find(file, imports),
        }
    }
}

/// A parsed file.
pub(crate) struct FileText<'a> {
    pub(crate) path: &'a str,
    pub(crate) text: &'a str,
    pub(crate) tree: Tree,
}

impl FileText<'_> {
    pub(crate) fn text_of(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.text.as_bytes()).unwrap_or("")
    }

    pub(crate) fn site(&self, node: Node<'_>, kind: SiteKind, symbol: &str) -> Site {
        let row = node.start_position().row;
        let line = self.text.lines().nth(row).unwrap_or("").trim();
        Site {
            path: self.path.to_string(),
            line: row + 1,
            text: line.chars().take(200).collect(),
            kind,
            symbol: symbol.to_string(),
        }
    }
}

/// What one file holds.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Sites that reach a vulnerable symbol (or, for an import with no symbols, the import).
    pub(crate) reaching: Vec<Site>,
    /// Imports of the affected packages.
    pub(crate) imports: Vec<Site>,
    /// Affected imports whose local name could not be told (Go): nothing found through
    /// them proves nothing.
    pub(crate) unresolved: Vec<String>,
}

/// Calls `visit` on every node under `root`, `root` included, in document order.
pub(crate) fn each_node<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>)) {
    let mut cursor = root.walk();
    loop {
        visit(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// Whether `node` is the callee of a call expression (`call_expression` in Go and Rust,
/// `call` in Python), looking through Rust's turbofish (`f::<T>(…)`).
pub(crate) fn is_callee(node: Node<'_>) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    if parent.kind() == "generic_function" {
        return is_callee(parent);
    }
    matches!(parent.kind(), "call_expression" | "call")
        && parent
            .child_by_field_name("function")
            .is_some_and(|f| f.id() == node.id())
}

pub(crate) fn call_or_reference(node: Node<'_>) -> SiteKind {
    if is_callee(node) {
        SiteKind::Call
    } else {
        SiteKind::Reference
    }
}
