//! Which dependency file a path names, decided from the file name alone.

use proven_domain::Ecosystem;

/// A dependency file format this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    CargoLock,
    CargoToml,
    /// `package-lock.json` and `npm-shrinkwrap.json` (the same format).
    PackageLockJson,
    PackageJson,
    YarnLock,
    PnpmLock,
    /// `requirements*.txt`, `*-requirements.txt`, `*_requirements.txt`, `requirements/*.txt`.
    RequirementsTxt,
    PoetryLock,
    UvLock,
    PipfileLock,
    PyprojectToml,
    GoMod,
    GoSum,
    ComposerLock,
    ComposerJson,
    /// `Gemfile.lock` and `gems.locked`.
    GemfileLock,
    /// `Gemfile` and `gems.rb`.
    Gemfile,
    /// `gradle/libs.versions.toml` (any `*.versions.toml`).
    GradleVersionCatalog,
    /// `build.gradle.kts`; also Groovy `build.gradle`, whose literal coordinates read the same.
    GradleKts,
    PomXml,
}

impl Format {
    /// Every format, in declaration order.
    pub const ALL: [Format; 20] = [
        Format::CargoLock,
        Format::CargoToml,
        Format::PackageLockJson,
        Format::PackageJson,
        Format::YarnLock,
        Format::PnpmLock,
        Format::RequirementsTxt,
        Format::PoetryLock,
        Format::UvLock,
        Format::PipfileLock,
        Format::PyprojectToml,
        Format::GoMod,
        Format::GoSum,
        Format::ComposerLock,
        Format::ComposerJson,
        Format::GemfileLock,
        Format::Gemfile,
        Format::GradleVersionCatalog,
        Format::GradleKts,
        Format::PomXml,
    ];

    /// The format of a path (relative, `/`-separated), from its file name (and, for
    /// `requirements/*.txt`, its folder). `None` for anything else.
    pub fn detect(path: &str) -> Option<Format> {
        let mut parts = path.rsplit('/');
        let file = parts.next()?;
        let parent = parts.next().unwrap_or("");
        let format = match file {
            "Cargo.lock" => Format::CargoLock,
            "Cargo.toml" => Format::CargoToml,
            "package-lock.json" | "npm-shrinkwrap.json" => Format::PackageLockJson,
            "package.json" => Format::PackageJson,
            "yarn.lock" => Format::YarnLock,
            "pnpm-lock.yaml" | "pnpm-lock.yml" => Format::PnpmLock,
            "poetry.lock" => Format::PoetryLock,
            "uv.lock" => Format::UvLock,
            "Pipfile.lock" => Format::PipfileLock,
            "pyproject.toml" => Format::PyprojectToml,
            "go.mod" => Format::GoMod,
            "go.sum" => Format::GoSum,
            "composer.lock" => Format::ComposerLock,
            "composer.json" => Format::ComposerJson,
            "Gemfile.lock" | "gems.locked" => Format::GemfileLock,
            "Gemfile" | "gems.rb" => Format::Gemfile,
            "build.gradle.kts" | "build.gradle" => Format::GradleKts,
            "pom.xml" => Format::PomXml,
            _ if file.ends_with(".versions.toml") && file.len() > ".versions.toml".len() => {
                Format::GradleVersionCatalog
            }
            _ if is_requirements_name(file, parent) => Format::RequirementsTxt,
            _ => return None,
        };
        Some(format)
    }

    pub fn ecosystem(self) -> Ecosystem {
        match self {
            Format::CargoLock | Format::CargoToml => Ecosystem::CratesIo,
            Format::PackageLockJson | Format::PackageJson | Format::YarnLock | Format::PnpmLock => {
                Ecosystem::Npm
            }
            Format::RequirementsTxt
            | Format::PoetryLock
            | Format::UvLock
            | Format::PipfileLock
            | Format::PyprojectToml => Ecosystem::PyPI,
            Format::GoMod | Format::GoSum => Ecosystem::Go,
            Format::ComposerLock | Format::ComposerJson => Ecosystem::Packagist,
            Format::GemfileLock | Format::Gemfile => Ecosystem::RubyGems,
            Format::GradleVersionCatalog | Format::GradleKts | Format::PomXml => Ecosystem::Maven,
        }
    }

    /// A short human name, used in notes and traces.
    pub fn name(self) -> &'static str {
        match self {
            Format::CargoLock => "Cargo.lock",
            Format::CargoToml => "Cargo.toml",
            Format::PackageLockJson => "package-lock.json",
            Format::PackageJson => "package.json",
            Format::YarnLock => "yarn.lock",
            Format::PnpmLock => "pnpm-lock.yaml",
            Format::RequirementsTxt => "requirements.txt",
            Format::PoetryLock => "poetry.lock",
            Format::UvLock => "uv.lock",
            Format::PipfileLock => "Pipfile.lock",
            Format::PyprojectToml => "pyproject.toml",
            Format::GoMod => "go.mod",
            Format::GoSum => "go.sum",
            Format::ComposerLock => "composer.lock",
            Format::ComposerJson => "composer.json",
            Format::GemfileLock => "Gemfile.lock",
            Format::Gemfile => "Gemfile",
            Format::GradleVersionCatalog => "Gradle version catalog",
            Format::GradleKts => "build.gradle.kts",
            Format::PomXml => "pom.xml",
        }
    }

    /// Whether the file itself names the exact versions that get installed: lock files,
    /// requirements pins, go.mod (minimal version selection makes its versions the build's),
    /// pom.xml and Gradle files (declared versions). Manifests that hold ranges do not; nor does
    /// go.sum, which lists every version the module graph ever touched.
    pub fn carries_exact_versions(self) -> bool {
        match self {
            Format::CargoLock
            | Format::PackageLockJson
            | Format::YarnLock
            | Format::PnpmLock
            | Format::RequirementsTxt
            | Format::PoetryLock
            | Format::UvLock
            | Format::PipfileLock
            | Format::GoMod
            | Format::ComposerLock
            | Format::GemfileLock
            | Format::GradleVersionCatalog
            | Format::GradleKts
            | Format::PomXml => true,
            Format::CargoToml
            | Format::PackageJson
            | Format::PyprojectToml
            | Format::GoSum
            | Format::ComposerJson
            | Format::Gemfile => false,
        }
    }

    /// Lock files: written by a resolver, authoritative for the versions of their ecosystem.
    pub fn is_lock(self) -> bool {
        matches!(
            self,
            Format::CargoLock
                | Format::PackageLockJson
                | Format::YarnLock
                | Format::PnpmLock
                | Format::PoetryLock
                | Format::UvLock
                | Format::PipfileLock
                | Format::ComposerLock
                | Format::GemfileLock
        )
    }
}

/// pip's requirement files have no fixed name; these are the spellings projects use.
fn is_requirements_name(file: &str, parent: &str) -> bool {
    let Some(stem) = file.strip_suffix(".txt") else {
        return false;
    };
    stem.starts_with("requirements")
        || stem.ends_with("-requirements")
        || stem.ends_with("_requirements")
        || stem.ends_with(".requirements")
        || parent == "requirements"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_file_name() {
        assert_eq!(Format::detect("Cargo.lock"), Some(Format::CargoLock));
        assert_eq!(
            Format::detect("a/b/npm-shrinkwrap.json"),
            Some(Format::PackageLockJson)
        );
        assert_eq!(
            Format::detect("requirements-dev.txt"),
            Some(Format::RequirementsTxt)
        );
        assert_eq!(
            Format::detect("ci/test-requirements.txt"),
            Some(Format::RequirementsTxt)
        );
        assert_eq!(
            Format::detect("requirements/base.txt"),
            Some(Format::RequirementsTxt)
        );
        assert_eq!(Format::detect("notes.txt"), None);
        assert_eq!(
            Format::detect("gradle/libs.versions.toml"),
            Some(Format::GradleVersionCatalog)
        );
        assert_eq!(
            Format::detect("app/build.gradle.kts"),
            Some(Format::GradleKts)
        );
        assert_eq!(Format::detect("x/pom.xml"), Some(Format::PomXml));
        assert_eq!(Format::detect("Cargo.lock.bak"), None);
        assert_eq!(Format::detect(""), None);
    }

    #[test]
    fn every_format_has_a_name_and_an_ecosystem() {
        for f in Format::ALL {
            assert!(!f.name().is_empty());
            let _ = f.ecosystem();
            // Every lock file carries exact versions.
            assert!(!f.is_lock() || f.carries_exact_versions(), "{f:?}");
        }
        assert!(!Format::PackageJson.carries_exact_versions());
        assert!(Format::GoMod.carries_exact_versions());
        assert!(!Format::GoSum.carries_exact_versions());
    }
}
