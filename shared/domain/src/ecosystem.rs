use std::fmt;
use std::str::FromStr;

/// A package ecosystem whose versions Proven compares with the ecosystem's own rules.
///
/// The set is closed on purpose: a dependency from an ecosystem outside it is reported as
/// "not examined" rather than compared with the wrong rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ecosystem {
    CratesIo,
    Npm,
    PyPI,
    Go,
    Maven,
    Packagist,
    RubyGems,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ecosystem {0:?} (known: crates.io, npm, PyPI, Go, Maven, Packagist, RubyGems)")]
pub struct UnknownEcosystem(pub String);

impl Ecosystem {
    pub const ALL: [Ecosystem; 7] = [
        Ecosystem::CratesIo,
        Ecosystem::Npm,
        Ecosystem::PyPI,
        Ecosystem::Go,
        Ecosystem::Maven,
        Ecosystem::Packagist,
        Ecosystem::RubyGems,
    ];

    /// The name OSV uses in `affected[].package.ecosystem`.
    pub fn osv_name(self) -> &'static str {
        match self {
            Ecosystem::CratesIo => "crates.io",
            Ecosystem::Npm => "npm",
            Ecosystem::PyPI => "PyPI",
            Ecosystem::Go => "Go",
            Ecosystem::Maven => "Maven",
            Ecosystem::Packagist => "Packagist",
            Ecosystem::RubyGems => "RubyGems",
        }
    }

    /// The package-URL type (purl spec), used for stable rule ids and SARIF locations.
    pub fn purl_type(self) -> &'static str {
        match self {
            Ecosystem::CratesIo => "cargo",
            Ecosystem::Npm => "npm",
            Ecosystem::PyPI => "pypi",
            Ecosystem::Go => "golang",
            Ecosystem::Maven => "maven",
            Ecosystem::Packagist => "composer",
            Ecosystem::RubyGems => "gem",
        }
    }

    /// Reads an OSV ecosystem string. OSV allows a `:suffix` (e.g. `Maven:https://repo`);
    /// the suffix names a registry, not different version rules, so it is ignored here.
    pub fn from_osv(name: &str) -> Option<Ecosystem> {
        let base = name.split(':').next().unwrap_or(name);
        Ecosystem::ALL.into_iter().find(|e| e.osv_name() == base)
    }

    /// The key under which advisories and dependencies of this ecosystem are matched.
    ///
    /// Each registry decides which spellings name the same package: PyPI folds case and
    /// runs of `-`, `_`, `.` (PEP 503); Packagist and crates.io names are case-insensitive
    /// (crates.io also treats `-` and `_` alike); npm, Go module paths, Maven coordinates
    /// and RubyGems names are matched exactly.
    pub fn normalize_name(self, name: &str) -> String {
        let name = name.trim();
        match self {
            Ecosystem::PyPI => {
                let mut out = String::with_capacity(name.len());
                let mut in_sep = false;
                for c in name.chars() {
                    if matches!(c, '-' | '_' | '.') {
                        if !in_sep {
                            out.push('-');
                        }
                        in_sep = true;
                    } else {
                        out.extend(c.to_lowercase());
                        in_sep = false;
                    }
                }
                out
            }
            Ecosystem::CratesIo => name.to_ascii_lowercase().replace('_', "-"),
            Ecosystem::Packagist => name.to_ascii_lowercase(),
            Ecosystem::Npm | Ecosystem::Go | Ecosystem::Maven | Ecosystem::RubyGems => {
                name.to_string()
            }
        }
    }
}

impl fmt::Display for Ecosystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.osv_name())
    }
}

impl FromStr for Ecosystem {
    type Err = UnknownEcosystem;

    /// Accepts the OSV name, case-insensitively, and the purl type.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ecosystem::ALL
            .into_iter()
            .find(|e| e.osv_name().eq_ignore_ascii_case(s) || e.purl_type() == s)
            .or_else(|| match s.to_ascii_lowercase().as_str() {
                "crates" | "cargo" | "rust" => Some(Ecosystem::CratesIo),
                "pip" | "python" => Some(Ecosystem::PyPI),
                "gem" | "rubygems" | "ruby" => Some(Ecosystem::RubyGems),
                "composer" | "php" => Some(Ecosystem::Packagist),
                "golang" => Some(Ecosystem::Go),
                _ => None,
            })
            .ok_or_else(|| UnknownEcosystem(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pypi_names_fold_case_and_separator_runs() {
        assert_eq!(
            Ecosystem::PyPI.normalize_name("Django_REST.framework"),
            "django-rest-framework"
        );
        assert_eq!(Ecosystem::PyPI.normalize_name("a-_.b"), "a-b");
    }

    #[test]
    fn crates_names_fold_case_and_underscore() {
        assert_eq!(
            Ecosystem::CratesIo.normalize_name("Serde_JSON"),
            "serde-json"
        );
    }

    #[test]
    fn exact_ecosystems_keep_the_name() {
        assert_eq!(
            Ecosystem::RubyGems.normalize_name("Arabic-Prawn"),
            "Arabic-Prawn"
        );
        assert_eq!(
            Ecosystem::Go.normalize_name("github.com/BurntSushi/toml"),
            "github.com/BurntSushi/toml"
        );
    }

    #[test]
    fn osv_names_round_trip_and_suffixes_are_ignored() {
        for e in Ecosystem::ALL {
            assert_eq!(Ecosystem::from_osv(e.osv_name()), Some(e));
            assert_eq!(e.osv_name().parse::<Ecosystem>(), Ok(e));
        }
        assert_eq!(
            Ecosystem::from_osv("Maven:https://repo.example"),
            Some(Ecosystem::Maven)
        );
        assert_eq!(Ecosystem::from_osv("Debian:10"), None);
        assert!("cobol".parse::<Ecosystem>().is_err());
    }
}
