//! Readers for lock files and manifests: which packages a project uses, at which versions.
//!
//! This crate owns the step from "a file in a tree" to "these packages at these exact
//! versions" (design, section 3, step 3): detecting a dependency file's format from its path,
//! reading it (and the siblings that say which packages are direct or development-only),
//! and telling, for a changed file, which files hold the authoritative versions. It does not
//! compare versions or query advisories: the version and OSV crates do that with what this
//! crate returns.
//!
//! For a project's tests it also says what a Python lock file pins, with the markers that
//! say when each package applies ([`pins`]): the sandbox's dependency preparation installs
//! that, and reads no lock file of its own.
//! It reads Python manifests for it too, one typed reader per format shared with the scan:
//! [`requirements::lines`], [`pyproject::manifest`], [`pipfile::manifest`].
//!
//! Input is untrusted (design, section 5): every reader refuses oversized, binary, non-UTF-8,
//! malformed, wrongly shaped and too deeply nested files with a [`ReadError`] that names the
//! file and, where the format has lines, the line. No reader panics on any input.

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod collect;
mod error;
mod format;
mod text;
mod tree;

mod cargo_lock;
mod composer;
mod gemfile;
mod gomod;
mod gradle;
mod npm;
pub mod pins;
pub mod pipfile;
mod pnpm;
mod poetry;
mod pom;
pub mod pyproject;
pub mod requirements;
mod uv;
mod yarn;

use std::collections::BTreeMap;
use std::io;

pub use error::{ReadError, ReadErrorKind};
pub use format::Format;
pub use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};
pub use tree::{FsTree, Tree};

/// Bounds on what a reader accepts. The defaults fit the largest real lock files with room to
/// spare; a file beyond them is refused by name rather than read slowly or not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest file read, in bytes (default 64 MiB). Checked from the tree's size before the
    /// file is read.
    pub max_bytes: u64,
    /// Deepest nesting of JSON and YAML containers (default 100; real lock files nest under
    /// 20). YAML is held to at most 32 whatever this says, and TOML has its own fixed guard (80
    /// levels) in the toml crate: at these depths every reader needs well under 1 MiB of stack,
    /// even in a debug build.
    pub max_depth: usize,
    /// Most files one read may pull in besides the file itself: requirement includes and
    /// constraints, a pom's parents (default 64).
    pub max_included_files: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 64 * 1024 * 1024,
            max_depth: 100,
            max_included_files: 64,
        }
    }
}

/// What one dependency file declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyFile {
    pub path: String,
    pub format: Format,
    /// In file order; one entry per (name, version, origin).
    pub dependencies: Vec<Dependency>,
    /// Things a person should know that are not dependencies: unpinned requirements,
    /// unresolved properties, platform suffixes dropped, siblings that could not be read.
    /// Each starts with `line N:` where it concerns one line.
    pub notes: Vec<String>,
}

/// A [`Tree`] held in memory: for callers that have the bytes already, and for tests.
#[derive(Debug, Clone, Default)]
pub struct MemTree {
    files: BTreeMap<String, Vec<u8>>,
}

impl MemTree {
    pub fn new() -> Self {
        MemTree::default()
    }

    pub fn insert(&mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> &mut Self {
        self.files.insert(path.into(), bytes.into());
        self
    }

    /// A tree holding one file.
    pub fn with(path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        let mut t = MemTree::new();
        t.insert(path, bytes);
        t
    }
}

impl Tree for MemTree {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, io::Error> {
        Ok(self.files.get(path).cloned())
    }

    fn size(&self, path: &str) -> Result<Option<u64>, io::Error> {
        Ok(self.files.get(path).map(|b| b.len() as u64))
    }
}

/// What a reader works with: the tree (for siblings and includes), its own path, the limits,
/// and the notes it gathers.
pub(crate) struct Ctx<'a> {
    pub(crate) tree: &'a dyn Tree,
    pub(crate) path: &'a str,
    pub(crate) limits: &'a Limits,
    pub(crate) notes: Vec<String>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// A file in the same folder, as text, when the tree has it. A sibling that cannot be read
    /// does not fail the read: it only tells which packages are direct or development-only, so
    /// the reader goes on without it and says so in a note.
    pub(crate) fn sibling(&mut self, name: &str) -> Option<(String, String)> {
        let path = tree::child(tree::dir_of(self.path), name);
        self.optional(&path)
    }

    /// Any file of the tree, as text, with the same leniency as [`Ctx::sibling`].
    pub(crate) fn optional(&mut self, path: &str) -> Option<(String, String)> {
        match text::load(self.tree, path, self.limits) {
            Ok(Some(text)) => Some((path.to_string(), text)),
            Ok(None) => None,
            Err(e) => {
                self.note(format!(
                    "{e} (so direct and development-only marks from it are not applied)"
                ));
                None
            }
        }
    }
}

/// Reads one dependency file from the tree, with its siblings where they mark direct vs
/// transitive or development-only: Cargo.toml beside Cargo.lock, package.json beside
/// package-lock.json/yarn.lock/pnpm-lock.yaml, pyproject.toml beside poetry.lock, Pipfile beside
/// Pipfile.lock, composer.json beside composer.lock, Gemfile beside Gemfile.lock (whose own
/// DEPENDENCIES section marks direct gems).
pub fn read(tree: &dyn Tree, path: &str, limits: &Limits) -> Result<DependencyFile, ReadError> {
    let format = Format::detect(path).ok_or_else(|| {
        ReadError::new(
            path,
            None,
            ReadErrorKind::Unsupported,
            "not a dependency file this reader knows (by its name)",
        )
    })?;
    let text = text::load(tree, path, limits)?.ok_or_else(|| {
        ReadError::new(
            path,
            None,
            ReadErrorKind::NotFound,
            "no such file in the tree",
        )
    })?;
    let mut ctx = Ctx {
        tree,
        path,
        limits,
        notes: Vec::new(),
    };
    let dependencies = match format {
        Format::CargoLock => cargo_lock::read_lock(&mut ctx, &text)?,
        Format::CargoToml => cargo_lock::read_manifest(&mut ctx, &text)?,
        Format::PackageLockJson => npm::read_lock(&mut ctx, &text)?,
        Format::PackageJson => npm::read_manifest(&mut ctx, &text)?,
        Format::YarnLock => yarn::read(&mut ctx, &text)?,
        Format::PnpmLock => pnpm::read(&mut ctx, &text)?,
        Format::RequirementsTxt => requirements::read(&mut ctx, &text)?,
        Format::PoetryLock => poetry::read_lock(&mut ctx, &text)?,
        Format::PyprojectToml => poetry::read_pyproject(&mut ctx, &text)?,
        Format::UvLock => uv::read(&mut ctx, &text)?,
        Format::PipfileLock => pipfile::read(&mut ctx, &text)?,
        Format::GoMod => gomod::read_mod(&mut ctx, &text)?,
        Format::GoSum => gomod::read_sum(&mut ctx, &text)?,
        Format::ComposerLock => composer::read_lock(&mut ctx, &text)?,
        Format::ComposerJson => composer::read_manifest(&mut ctx, &text)?,
        Format::GemfileLock => gemfile::read_lock(&mut ctx, &text)?,
        Format::Gemfile => gemfile::read_gemfile(&mut ctx, &text)?,
        Format::GradleVersionCatalog => gradle::read_catalog(&mut ctx, &text)?,
        Format::GradleKts => gradle::read_script(&mut ctx, &text)?,
        Format::PomXml => pom::read(&mut ctx, &text)?,
    };
    Ok(DependencyFile {
        path: path.to_string(),
        format,
        dependencies,
        notes: ctx.notes,
    })
}

/// Given a changed dependency file, the files whose versions are authoritative for it on this
/// tree:
/// - a lock file: itself;
/// - a manifest: the lock file in its folder or the nearest folder above it (a workspace member's
///   `Cargo.toml` or `package.json` is locked at the workspace root);
/// - otherwise the file itself when it carries exact versions (requirements files, go.mod,
///   pom.xml, a Gradle catalog, a build.gradle.kts with literal versions);
/// - otherwise nothing (e.g. package.json with no lock file: the caller notes that ranges
///   without a lock give no exact version).
///
/// go.sum → its go.mod. A build.gradle.kts → also the nearest `gradle/libs.versions.toml` in its
/// folder or the folders above it. Errors are the tree's own.
pub fn version_sources(tree: &dyn Tree, changed_path: &str) -> Result<Vec<String>, io::Error> {
    let Some(format) = Format::detect(changed_path) else {
        return Ok(Vec::new());
    };
    let dir = tree::dir_of(changed_path);
    let exists = |p: &str| -> Result<bool, io::Error> { Ok(tree.size(p)?.is_some()) };
    // The first folder, from `dir` upwards, holding any of `names`: all of those it holds.
    let nearest = |names: &[&str]| -> Result<Vec<String>, io::Error> {
        for d in tree::ancestors(dir) {
            let mut found = Vec::new();
            for name in names {
                let p = tree::child(d, name);
                if exists(&p)? {
                    found.push(p);
                }
            }
            if !found.is_empty() {
                return Ok(found);
            }
        }
        Ok(Vec::new())
    };
    let sibling = |name: &str| -> Result<Vec<String>, io::Error> {
        let p = tree::child(dir, name);
        Ok(if exists(&p)? { vec![p] } else { Vec::new() })
    };
    if format.is_lock() {
        return Ok(vec![changed_path.to_string()]);
    }
    match format {
        Format::CargoToml => nearest(&["Cargo.lock"]),
        Format::PackageJson => nearest(&[
            "package-lock.json",
            "npm-shrinkwrap.json",
            "yarn.lock",
            "pnpm-lock.yaml",
        ]),
        Format::PyprojectToml => nearest(&["poetry.lock", "uv.lock"]),
        Format::ComposerJson => sibling("composer.lock"),
        Format::Gemfile => {
            if tree::file_name(changed_path) == "gems.rb" {
                sibling("gems.locked")
            } else {
                sibling("Gemfile.lock")
            }
        }
        Format::GoSum => sibling("go.mod"),
        Format::GradleKts => {
            let mut out = Vec::new();
            if gradle::script_has_literal_versions(tree, changed_path)? {
                out.push(changed_path.to_string());
            }
            out.extend(nearest(&["gradle/libs.versions.toml"])?);
            Ok(out)
        }
        Format::RequirementsTxt | Format::GoMod | Format::PomXml | Format::GradleVersionCatalog => {
            Ok(vec![changed_path.to_string()])
        }
        // Lock files returned above.
        _ => Ok(vec![changed_path.to_string()]),
    }
}
