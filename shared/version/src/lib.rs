//! Version ordering and OSV range evaluation with each ecosystem's own rules.
//!
//! Whether a dependency is affected by an advisory comes down to comparing versions, and
//! every ecosystem compares them differently. This crate gives one entry point per
//! question and, under it, one module per ecosystem that follows that ecosystem's
//! reference implementation (see each module for which one and why):
//!
//! | ecosystem | reference | here |
//! |---|---|---|
//! | crates.io | the `semver` crate (Cargo, cargo-audit) | [`semver`] itself |
//! | npm | node-semver | [`npm`] (port) |
//! | PyPI | pypa/packaging | [`pypi`] (port) |
//! | Go | golang.org/x/mod/semver | [`go`] (port) |
//! | Maven | `ComparableVersion`, `VersionRange` | [`maven`] (port) |
//! | Packagist | composer/semver, PHP `version_compare` | [`packagist`] (port) |
//! | RubyGems | `Gem::Version`, `Gem::Requirement` | [`rubygems`] (port) |
//! | Debian, Alpine | dpkg, apk (ordering only) | [`distro`] |
//!
//! Every module is checked row by row against the ecosystems' own test suites and real
//! advisories by [`vectors`]; where Proven decides differently on purpose, the row is
//! listed with its reason in `known-differences.jsonl`, and `docs/versions.md` explains
//! the pre-release decisions per ecosystem.

pub mod distro;
pub mod go;
pub mod maven;
pub mod npm;
mod osv;
pub mod packagist;
pub mod pypi;
pub mod rubygems;
pub mod vectors;

use std::cmp::Ordering;
use std::fmt;

pub use osv::{Affectedness, Fix, is_affected, is_affected_version, smallest_fix};
pub use proven_domain::Ecosystem;

/// Why a version, requirement or advisory event could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// The version is not one the ecosystem's rules accept.
    #[error("invalid {ecosystem} version {version:?}: {reason}")]
    Invalid {
        ecosystem: Ecosystem,
        version: String,
        reason: String,
    },
    /// A requirement (range, constraint, specifier) the ecosystem's rules reject.
    #[error("invalid {ecosystem} requirement {requirement:?}: {reason}")]
    InvalidRequirement {
        ecosystem: Ecosystem,
        requirement: String,
        reason: String,
    },
    /// An advisory's range event carries a version the ecosystem's rules reject, so the
    /// range cannot be evaluated (the advisory, not the dependency, is at fault).
    #[error(
        "advisory has an invalid {ecosystem} version {version:?} in a `{event}` event: {reason}"
    )]
    InvalidEvent {
        ecosystem: Ecosystem,
        event: &'static str,
        version: String,
        reason: String,
    },
}

impl VersionError {
    fn invalid(ecosystem: Ecosystem, version: &str, reason: impl Into<String>) -> VersionError {
        VersionError::Invalid {
            ecosystem,
            version: version.to_string(),
            reason: reason.into(),
        }
    }
}

#[derive(Debug, Clone)]
enum Parsed {
    CratesIo(semver::Version),
    Npm(npm::NpmVersion),
    PyPI(pypi::PyVersion),
    Go(go::GoVersion),
    Maven(maven::MavenVersion),
    Packagist(packagist::ComposerVersion),
    RubyGems(rubygems::GemVersion),
}

/// A version parsed with its ecosystem's rules.
///
/// Equality and order are the ecosystem's: `1.0` equals `1.0.0` on PyPI, Maven, Packagist
/// and RubyGems, build metadata never counts on crates.io, npm and Go. Versions of
/// different ecosystems order by ecosystem first (never equal), so sorting a mixed list
/// never panics.
#[derive(Debug, Clone)]
pub struct Version {
    text: Box<str>,
    parsed: Parsed,
}

impl Version {
    /// Parses `s` with the rules of `eco`. Leading and trailing whitespace is ignored;
    /// an empty version is an error in every ecosystem.
    ///
    /// npm falls back to node-semver's loose reading (`=1.2.3`, `1.2.3beta`) when the
    /// strict one fails; Go accepts OSV's `v`-less spelling and the toolchain's `go1.21`.
    pub fn parse(eco: Ecosystem, s: &str) -> Result<Version, VersionError> {
        let mut v = Version::parse_untexted(eco, s)?;
        v.text = s.trim().into();
        Ok(v)
    }

    /// [`Version::parse`] without keeping the text (`as_str` is empty): for range bounds,
    /// which are compared and never shown, on the matching hot path.
    pub(crate) fn parse_untexted(eco: Ecosystem, s: &str) -> Result<Version, VersionError> {
        let t = s.trim();
        if t.is_empty() {
            return Err(VersionError::invalid(eco, s, "it is empty"));
        }
        let bad = |reason: String| VersionError::invalid(eco, s, reason);
        let parsed = match eco {
            Ecosystem::CratesIo => {
                Parsed::CratesIo(semver::Version::parse(t).map_err(|e| bad(e.to_string()))?)
            }
            Ecosystem::Npm => Parsed::Npm(
                npm::NpmVersion::parse(t, false)
                    .or_else(|e| npm::NpmVersion::parse(t, true).map_err(|_| bad(e)))?,
            ),
            Ecosystem::PyPI => Parsed::PyPI(pypi::PyVersion::parse(t).map_err(bad)?),
            Ecosystem::Go => Parsed::Go(go::GoVersion::parse(t).map_err(bad)?),
            Ecosystem::Maven => Parsed::Maven(maven::MavenVersion::parse(t).map_err(bad)?),
            Ecosystem::Packagist => {
                Parsed::Packagist(packagist::ComposerVersion::parse(t).map_err(bad)?)
            }
            Ecosystem::RubyGems => Parsed::RubyGems(rubygems::GemVersion::parse(t).map_err(bad)?),
        };
        Ok(Version {
            text: Box::default(),
            parsed,
        })
    }

    /// A Packagist version whose Composer normalisation is already known (a range bound
    /// `normalize` produced): saves normalising twice on the matching hot path.
    pub(crate) fn packagist_normalized(normalized: String) -> Version {
        let parsed = Parsed::Packagist(packagist::ComposerVersion::from_normalized(normalized));
        Version {
            text: Box::default(),
            parsed,
        }
    }

    pub fn ecosystem(&self) -> Ecosystem {
        match self.parsed {
            Parsed::CratesIo(_) => Ecosystem::CratesIo,
            Parsed::Npm(_) => Ecosystem::Npm,
            Parsed::PyPI(_) => Ecosystem::PyPI,
            Parsed::Go(_) => Ecosystem::Go,
            Parsed::Maven(_) => Ecosystem::Maven,
            Parsed::Packagist(_) => Ecosystem::Packagist,
            Parsed::RubyGems(_) => Ecosystem::RubyGems,
        }
    }

    /// The version as given (trimmed).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the ecosystem calls this a pre-release (`-rc.1`, `a1`, `.beta`, a
    /// Composer stability below `stable`, a Maven qualifier below a release).
    pub fn is_prerelease(&self) -> bool {
        match &self.parsed {
            Parsed::CratesIo(v) => !v.pre.is_empty(),
            Parsed::Npm(v) => v.is_prerelease(),
            Parsed::PyPI(v) => v.is_prerelease(),
            Parsed::Go(v) => v.is_prerelease(),
            Parsed::Maven(v) => v.is_prerelease(),
            Parsed::Packagist(v) => v.stability() != "stable",
            Parsed::RubyGems(v) => v.is_prerelease(),
        }
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Version {}
impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.parsed, &other.parsed) {
            // SemVer precedence: build metadata does not count (the semver crate's own
            // `Ord` would order `1.0.0+a` before `1.0.0+b`).
            (Parsed::CratesIo(a), Parsed::CratesIo(b)) => a.cmp_precedence(b),
            (Parsed::Npm(a), Parsed::Npm(b)) => a.cmp(b),
            (Parsed::PyPI(a), Parsed::PyPI(b)) => a.cmp(b),
            (Parsed::Go(a), Parsed::Go(b)) => a.cmp(b),
            (Parsed::Maven(a), Parsed::Maven(b)) => a.cmp(b),
            (Parsed::Packagist(a), Parsed::Packagist(b)) => a.cmp(b),
            (Parsed::RubyGems(a), Parsed::RubyGems(b)) => a.cmp(b),
            _ => self.ecosystem().cmp(&other.ecosystem()),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Compares two versions of one ecosystem.
pub fn compare(eco: Ecosystem, a: &str, b: &str) -> Result<Ordering, VersionError> {
    Ok(Version::parse(eco, a)?.cmp(&Version::parse(eco, b)?))
}

#[derive(Debug, Clone)]
enum ReqInner {
    Cargo(semver::VersionReq),
    Npm(npm::Range),
    PyPI(pypi::SpecifierSet),
    Go(Vec<(packagist::Op, go::GoVersion)>),
    Maven(maven::MavenRange),
    Packagist(packagist::ConstraintSet),
    RubyGems(rubygems::GemRequirement),
}

/// A version requirement in the ecosystem's own syntax: a Cargo requirement (`^1.2`,
/// `>=1, <2`), an npm range (`^1.2.3 || 2.x`), a PEP 440 specifier set (`>=1.0,!=1.3.*`),
/// a Maven range (`[1.0,2.0)`), a Composer constraint (`^1.2 || ~2.0`), a RubyGems
/// requirement (`~> 1.2`, several separated by commas). Go has no requirement syntax of
/// its own; comparators such as `>=v1.2.0, <v1.4.0` are accepted.
#[derive(Debug, Clone)]
pub struct Requirement {
    text: Box<str>,
    inner: ReqInner,
}

impl Requirement {
    pub fn parse(eco: Ecosystem, s: &str) -> Result<Requirement, VersionError> {
        let bad = |reason: String| VersionError::InvalidRequirement {
            ecosystem: eco,
            requirement: s.to_string(),
            reason,
        };
        let inner = match eco {
            Ecosystem::CratesIo => {
                ReqInner::Cargo(semver::VersionReq::parse(s).map_err(|e| bad(e.to_string()))?)
            }
            Ecosystem::Npm => {
                ReqInner::Npm(npm::Range::parse(s, npm::Options::default()).map_err(bad)?)
            }
            Ecosystem::PyPI => ReqInner::PyPI(pypi::SpecifierSet::parse(s, None).map_err(bad)?),
            Ecosystem::Go => ReqInner::Go(parse_go_requirement(s).map_err(bad)?),
            Ecosystem::Maven => ReqInner::Maven(maven::MavenRange::parse(s).map_err(bad)?),
            Ecosystem::Packagist => {
                ReqInner::Packagist(packagist::parse_constraints(s).map_err(bad)?)
            }
            Ecosystem::RubyGems => {
                ReqInner::RubyGems(rubygems::GemRequirement::parse(&[s]).map_err(bad)?)
            }
        };
        Ok(Requirement {
            text: s.into(),
            inner,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `v` satisfies the requirement, with the ecosystem tool's default
    /// pre-release policy (Cargo and npm only admit a pre-release a comparator names;
    /// Composer applies its stability rules; PyPI admits a pre-release that is in range).
    /// A version of another ecosystem never matches.
    pub fn matches(&self, v: &Version) -> bool {
        match (&self.inner, &v.parsed) {
            (ReqInner::Cargo(r), Parsed::CratesIo(v)) => r.matches(v),
            (ReqInner::Npm(r), Parsed::Npm(v)) => r.test(v),
            (ReqInner::PyPI(r), Parsed::PyPI(v)) => r.contains_version(v),
            (ReqInner::Go(r), Parsed::Go(v)) => r.iter().all(|(op, b)| go_op(v.cmp(b), *op)),
            (ReqInner::Maven(r), Parsed::Maven(v)) => r.contains(v),
            (ReqInner::Packagist(r), Parsed::Packagist(v)) => r.matches_version(v.normalized()),
            (ReqInner::RubyGems(r), Parsed::RubyGems(v)) => r.satisfied_by(v),
            _ => false,
        }
    }
}

fn go_op(o: Ordering, op: packagist::Op) -> bool {
    use packagist::Op;
    match op {
        Op::Eq => o == Ordering::Equal,
        Op::Ne => o != Ordering::Equal,
        Op::Lt => o == Ordering::Less,
        Op::Le => o != Ordering::Greater,
        Op::Gt => o == Ordering::Greater,
        Op::Ge => o != Ordering::Less,
    }
}

fn parse_go_requirement(s: &str) -> Result<Vec<(packagist::Op, go::GoVersion)>, String> {
    let mut out = Vec::new();
    for part in s.split([',', ' ']).map(str::trim).filter(|p| !p.is_empty()) {
        let split = part
            .find(|c: char| !matches!(c, '<' | '>' | '=' | '!'))
            .unwrap_or(part.len());
        let (op_text, v) = part.split_at(split);
        let op = if op_text.is_empty() {
            Some(packagist::Op::Eq)
        } else {
            packagist::Op::parse(op_text)
        }
        .ok_or_else(|| format!("unknown operator {op_text:?}"))?;
        out.push((op, go::GoVersion::parse(v)?));
    }
    if out.is_empty() {
        return Err("it is empty".into());
    }
    Ok(out)
}

/// Whether `version` satisfies `requirement` (see [`Requirement::matches`]).
pub fn satisfies(eco: Ecosystem, requirement: &str, version: &str) -> Result<bool, VersionError> {
    Ok(Requirement::parse(eco, requirement)?.matches(&Version::parse(eco, version)?))
}

/// Sorts small slices without trusting `cmp` to be a total order: an insertion sort
/// cannot panic on an inconsistent comparison (`slice::sort_by` may), and the lists sorted
/// here (the events of one range, the fixes of one advisory) are short.
pub(crate) fn insertion_sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && cmp(&v[j - 1], &v[j]) == Ordering::Greater {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ecosystem_uses_its_own_equality() {
        assert_eq!(
            compare(Ecosystem::PyPI, "1.0", "1.0.0"),
            Ok(Ordering::Equal)
        );
        assert_eq!(
            compare(Ecosystem::CratesIo, "1.0.0+a", "1.0.0+b"),
            Ok(Ordering::Equal)
        );
        assert_eq!(
            compare(Ecosystem::Go, "v1.2.3", "1.2.3"),
            Ok(Ordering::Equal)
        );
        assert_eq!(
            compare(Ecosystem::Maven, "1.0-ga", "1"),
            Ok(Ordering::Equal)
        );
        assert_eq!(
            compare(Ecosystem::Packagist, "v1.0", "1.0.0.0"),
            Ok(Ordering::Equal)
        );
        assert_eq!(
            compare(Ecosystem::RubyGems, "1.0.0", "1"),
            Ok(Ordering::Equal)
        );
        assert_eq!(
            compare(Ecosystem::Npm, "1.2.3-rc.1", "1.2.3"),
            Ok(Ordering::Less)
        );
    }

    #[test]
    fn errors_name_the_version_and_the_ecosystem() {
        let e = Version::parse(Ecosystem::CratesIo, "1.2").expect_err("not semver");
        let msg = e.to_string();
        assert!(
            msg.contains("crates.io") && msg.contains("\"1.2\""),
            "{msg}"
        );
        assert!(Version::parse(Ecosystem::Maven, "  ").is_err());
    }

    #[test]
    fn versions_of_different_ecosystems_order_by_ecosystem() {
        let a = Version::parse(Ecosystem::CratesIo, "9.0.0").expect("valid");
        let b = Version::parse(Ecosystem::Npm, "1.0.0").expect("valid");
        assert_eq!(a.cmp(&b), Ecosystem::CratesIo.cmp(&Ecosystem::Npm));
        assert_ne!(a, b);
    }

    #[test]
    fn requirements_use_native_syntax() {
        assert_eq!(satisfies(Ecosystem::CratesIo, "^1.2", "1.9.0"), Ok(true));
        assert_eq!(
            satisfies(Ecosystem::CratesIo, ">=1.2.0", "1.3.0-alpha"),
            Ok(false)
        );
        assert_eq!(
            satisfies(Ecosystem::Npm, "1.x || >=2.5.0", "2.6.0"),
            Ok(true)
        );
        assert_eq!(
            satisfies(Ecosystem::PyPI, ">=1.0,!=1.3.*", "1.3.2"),
            Ok(false)
        );
        assert_eq!(satisfies(Ecosystem::Maven, "[1.0,2.0)", "1.5"), Ok(true));
        assert_eq!(
            satisfies(Ecosystem::Packagist, "^1.2 || ~2.0", "2.0.5"),
            Ok(true)
        );
        assert_eq!(
            satisfies(Ecosystem::RubyGems, "~> 1.2, >= 1.2.3", "1.2.4"),
            Ok(true)
        );
        assert_eq!(
            satisfies(Ecosystem::Go, ">=v1.2.0, <v1.4.0", "v1.3.9"),
            Ok(true)
        );
        assert!(matches!(
            Requirement::parse(Ecosystem::Maven, "[2.0,1.0]"),
            Err(VersionError::InvalidRequirement { .. })
        ));
    }
}
