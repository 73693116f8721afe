//! Reachability of dependency findings. Owns the question "does this code reach what the
//! advisory names?": reading the vulnerable symbols out of advisories (`symbols`: OSV
//! `ecosystem_specific.imports`, RustSec `affected.functions`), and answering it over source
//! files with a real parser of each language (tree-sitter grammars for Go, Rust and Python,
//! `lang`), one `Verdict` per affected package: reachable with the sites, not reached with
//! what was searched, or unknown with why.
//!
//! The verdict is evidence shown beside the advisory rows, never a proof level by itself.
//! Pure: no IO; the caller reads the files.

mod lang;
mod reach;
pub mod symbols;
mod verdict;

pub use reach::{SourceFile, assess, is_source_of};
pub use symbols::{Symbol, Vulnerable, VulnerableImport};
pub use verdict::{Basis, Searched, Site, SiteKind, UnknownWhy, Verdict};
