use crate::Ecosystem;

/// One package at one version, as a lock file or manifest declares it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dependency {
    pub ecosystem: Ecosystem,
    /// The name as the file spells it (matching uses [`Ecosystem::normalize_name`]).
    pub name: String,
    /// The exact version as the file spells it.
    pub version: String,
    pub kind: DependencyKind,
    pub origin: Origin,
    /// Development-only (dev-dependencies, devDependencies, `packages-dev`, dev groups),
    /// where the format says so.
    pub dev: bool,
    /// 1-based line of the declaration in its file, where the format has lines and the
    /// reader can tell. Used for locations in reports.
    pub line: Option<u32>,
}

/// Whether the project asks for the package itself or gets it through another package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DependencyKind {
    Direct,
    Transitive,
    /// The format does not tell (e.g. a lock file read without its manifest).
    Unknown,
}

/// Where the package comes from. Only registry packages are matched against advisories:
/// a git or path dependency with a registry package's name is not that package.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    Registry,
    Git { url: String },
    Path,
}

impl DependencyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DependencyKind::Direct => "direct",
            DependencyKind::Transitive => "transitive",
            DependencyKind::Unknown => "unknown",
        }
    }
}

impl Dependency {
    /// A registry dependency of unknown kind: the common case readers start from.
    pub fn registry(
        ecosystem: Ecosystem,
        name: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        Dependency {
            ecosystem,
            name: name.into(),
            version: version.into(),
            kind: DependencyKind::Unknown,
            origin: Origin::Registry,
            dev: false,
            line: None,
        }
    }

    pub fn normalized_name(&self) -> String {
        self.ecosystem.normalize_name(&self.name)
    }
}
