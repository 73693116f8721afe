//! What an advisory names as vulnerable: the affected packages' import paths and, where the
//! advisory lists them, the vulnerable symbols. Read from OSV JSON (`affected[]
//! .ecosystem_specific.imports`, as the Go vulnerability database publishes it, and
//! `affects.functions` in RustSec's OSV export) and from RustSec's own advisory files
//! (TOML front matter, `[affected.functions]`).

use proven_domain::Ecosystem;
use serde_json::Value;

/// The vulnerable part of one affected package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vulnerable {
    pub ecosystem: Ecosystem,
    /// The package as the advisory names it (a Go module, a crate, a PyPI distribution).
    pub package: String,
    /// What the code imports to reach it. Empty when the advisory says nothing usable.
    pub imports: Vec<VulnerableImport>,
}

/// One importable unit: a Go package path, a Rust crate (its identifier), a Python module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VulnerableImport {
    pub path: String,
    /// Empty: the advisory names no symbol of this import.
    pub symbols: Vec<Symbol>,
}

/// A vulnerable symbol, relative to its import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// As the advisory spells it (`Context.Render`, `lz4_flex::block::decompress`).
    pub name: String,
    /// The path below the import: `["Context", "Render"]`, `["block", "decompress"]`.
    pub segments: Vec<String>,
}

impl Symbol {
    pub fn new(name: &str, segments: Vec<String>) -> Symbol {
        Symbol {
            name: name.to_string(),
            segments,
        }
    }

    /// The last segment: the function or method name.
    pub fn last(&self) -> &str {
        self.segments.last().map(String::as_str).unwrap_or("")
    }

    /// Whether the symbol is a method of a type (`Type.Method`, `Type::method`): a call on
    /// a value of that type is found by the method's name only.
    pub fn is_method(&self) -> bool {
        self.segments.len() >= 2
            && self.segments[self.segments.len() - 2]
                .chars()
                .next()
                .is_some_and(char::is_uppercase)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SymbolsError {
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("no ```toml front matter in the RustSec advisory")]
    NoFrontMatter,
    #[error("the RustSec front matter is not valid TOML: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("the RustSec front matter has no advisory.package")]
    NoPackage,
}

/// Reads one OSV record's affected packages and their vulnerable imports and symbols.
/// Ecosystems other than Go, crates.io and PyPI are returned with no imports.
pub fn from_osv_json(json: &str) -> Result<Vec<Vulnerable>, SymbolsError> {
    let record: Value = serde_json::from_str(json)?;
    let affected = record.get("affected").and_then(Value::as_array);
    Ok(affected
        .into_iter()
        .flatten()
        .filter_map(osv_affected)
        .collect())
}

/// Reads one `affected[]` entry as the store keeps it (`affected_packages.affected`,
/// `AffectedRow::affected_json`). `None` for an entry without a package of a known
/// ecosystem.
pub fn from_osv_affected_json(affected: &str) -> Result<Option<Vulnerable>, SymbolsError> {
    let affected: Value = serde_json::from_str(affected)?;
    Ok(osv_affected(&affected))
}

fn osv_affected(affected: &Value) -> Option<Vulnerable> {
    let package = affected.get("package")?;
    let ecosystem = Ecosystem::from_osv(package.get("ecosystem")?.as_str()?)?;
    let name = package.get("name")?.as_str()?.to_string();
    let specific = affected.get("ecosystem_specific");
    let imports = match ecosystem {
        Ecosystem::Go => osv_imports(specific, '.'),
        Ecosystem::CratesIo => {
            let functions = specific
                .and_then(|s| s.get("affects"))
                .and_then(|a| a.get("functions"))
                .and_then(Value::as_array);
            let functions: Vec<&str> = functions
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            rust_imports(&name, &functions)
        }
        Ecosystem::PyPI => {
            let listed = osv_imports(specific, '.');
            if listed.is_empty() {
                python_modules(&name)
            } else {
                listed
            }
        }
        _ => Vec::new(),
    };
    Some(Vulnerable {
        ecosystem,
        package: name,
        imports,
    })
}

/// `ecosystem_specific.imports[]`: `{path, symbols[]}`, symbols relative to the path.
fn osv_imports(specific: Option<&Value>, separator: char) -> Vec<VulnerableImport> {
    let imports = specific
        .and_then(|s| s.get("imports"))
        .and_then(Value::as_array);
    imports
        .into_iter()
        .flatten()
        .filter_map(|import| {
            let path = import.get("path")?.as_str()?.to_string();
            let symbols = import.get("symbols").and_then(Value::as_array);
            let symbols = symbols
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|s| Symbol::new(s, s.split(separator).map(str::to_string).collect()))
                .collect();
            Some(VulnerableImport { path, symbols })
        })
        .collect()
}

/// Reads a RustSec advisory file (`crates/<name>/RUSTSEC-*.md`): the TOML front matter in
/// its ```` ```toml ```` block, `advisory.package` and `affected.functions` (either
/// spelling: the `[affected.functions]` table or `functions = {...}` under `[affected]`).
pub fn from_rustsec_markdown(text: &str) -> Result<Vulnerable, SymbolsError> {
    let body = text
        .trim_start()
        .strip_prefix("```toml")
        .ok_or(SymbolsError::NoFrontMatter)?;
    let end = body.find("\n```").ok_or(SymbolsError::NoFrontMatter)?;
    let front: toml::Table = toml::from_str(&body[..end])?;
    let package = front
        .get("advisory")
        .and_then(|a| a.get("package"))
        .and_then(toml::Value::as_str)
        .ok_or(SymbolsError::NoPackage)?;
    let functions = front
        .get("affected")
        .and_then(|a| a.get("functions"))
        .and_then(toml::Value::as_table);
    let functions: Vec<&str> = functions
        .into_iter()
        .flat_map(|t| t.keys())
        .map(String::as_str)
        .collect();
    Ok(Vulnerable {
        ecosystem: Ecosystem::CratesIo,
        package: package.to_string(),
        imports: rust_imports(package, &functions),
    })
}

/// RustSec function paths start with the crate's identifier; they are grouped by it. With
/// none, the crate itself is the import, with no symbols.
fn rust_imports(package: &str, functions: &[&str]) -> Vec<VulnerableImport> {
    let mut imports: Vec<VulnerableImport> = Vec::new();
    for function in functions {
        let mut segments = function.split("::").map(str::to_string);
        let Some(root) = segments.next() else {
            continue;
        };
        let symbol = Symbol::new(function, segments.collect());
        match imports.iter_mut().find(|i| i.path == root) {
            Some(import) => import.symbols.push(symbol),
            None => imports.push(VulnerableImport {
                path: root,
                symbols: vec![symbol],
            }),
        }
    }
    if imports.is_empty() {
        imports.push(VulnerableImport {
            path: package.replace('-', "_"),
            symbols: Vec::new(),
        });
    }
    imports
}

/// Distributions whose import name is not their own name, folded (PEP 503 and `_`).
const PYTHON_IMPORT_NAMES: &[(&str, &str)] = &[
    ("beautifulsoup4", "bs4"),
    ("opencv_python", "cv2"),
    ("pillow", "PIL"),
    ("protobuf", "google.protobuf"),
    ("pycryptodome", "Crypto"),
    ("pyjwt", "jwt"),
    ("python_dateutil", "dateutil"),
    ("pyyaml", "yaml"),
    ("scikit_learn", "sklearn"),
];

/// The modules a PyPI distribution is imported as: a known different import name, else the
/// name folded to an identifier (`Flask-Cors` → `flask_cors`). No symbols.
pub fn python_modules(distribution: &str) -> Vec<VulnerableImport> {
    let folded = distribution.to_lowercase().replace(['-', '.'], "_");
    let module = PYTHON_IMPORT_NAMES
        .iter()
        .find(|(name, _)| *name == folded)
        .map(|(_, module)| module.to_string())
        .unwrap_or(folded);
    vec![VulnerableImport {
        path: module,
        symbols: Vec::new(),
    }]
}

#[cfg(test)]
#[path = "symbols_tests.rs"]
mod tests;
