//! Dependency fixes (DESIGN step 3): for a package the dependency findings of one file name,
//! that file with the package at the smallest version that leaves every affected range of
//! those findings' advisories, proved by running the dependency evidence again on the
//! patched file (the advisories no longer match, and no other advisory of the package does).
//!
//! No test proves such a fix, so it is a suggestion, never a proved defect fix. Where the
//! format ties a version to checksums, integrity hashes or a resolver (Cargo.lock,
//! package-lock.json, poetry.lock, go.mod with go.sum, composer.lock, …) an edit of one line
//! would not install, so the fix names the command the user runs; the proof still reads the
//! file with that line edited, which is what the command leaves behind for this package.
//! Only a pin nothing else ties (a requirements line without `--hash`, a literal version in
//! pom.xml or a Gradle file) is proposed as an edit.

use proven_domain::{Dependency, DependencyKind, Ecosystem};
use proven_lockfile::{DependencyFile, Format, Tree};
use proven_report::{LineSpan, PatchEdit};

/// How far below a declaration's line its version may stand (a Cargo.lock block, a
/// package-lock.json object, a composer.lock package).
const BLOCK_LINES: usize = 16;

/// Whether `text[at..]` starts a whole version token `version` (not a prefix of a longer one).
fn token_at(line: &str, at: usize, version: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || ".-+_".contains(c);
    line[..at].chars().next_back().is_none_or(|c| !part(c))
        && line[at + version.len()..]
            .chars()
            .next()
            .is_none_or(|c| !part(c))
}

/// The version as the file spells it (Go's `v` prefix kept).
pub fn spelled(version: &str, fixed: &str) -> String {
    if version.starts_with('v') && !fixed.starts_with('v') {
        format!("v{fixed}")
    } else {
        fixed.to_string()
    }
}

/// The file's text with the declaration of `dep` (at its line, or the first line naming it)
/// raised to `fixed`: the patched text and the 1-based line edited.
pub fn with_version(text: &str, dep: &Dependency, fixed: &str) -> Option<(String, u32)> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let name = dep.name.to_ascii_lowercase();
    let starts: Vec<usize> = match dep.line {
        Some(l) if l >= 1 => vec![l as usize - 1],
        _ => (0..lines.len())
            .filter(|i| lines[*i].to_ascii_lowercase().contains(&name))
            .collect(),
    };
    let fixed = spelled(&dep.version, fixed);
    for start in starts {
        for i in start..lines.len().min(start + BLOCK_LINES) {
            let line = lines[i];
            let Some(at) = line
                .match_indices(dep.version.as_str())
                .map(|(at, _)| at)
                .find(|at| token_at(line, *at, &dep.version))
            else {
                continue;
            };
            let mut out = String::with_capacity(text.len() + fixed.len());
            for (j, l) in lines.iter().enumerate() {
                if j == i {
                    out.push_str(&l[..at]);
                    out.push_str(&fixed);
                    out.push_str(&l[at + dep.version.len()..]);
                } else {
                    out.push_str(l);
                }
            }
            return Some((out, i as u32 + 1));
        }
    }
    None
}

/// The command that raises `name` to `fixed` where an edit of one line would not install
/// (None: the edit is the whole fix).
pub fn command(
    format: Format,
    dep: &Dependency,
    fixed: &str,
    edited_line: &str,
) -> Result<Option<String>, String> {
    // The name and the versions come from the change's own files: a command a reader may
    // paste carries only characters no shell reads as syntax.
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-/@:+~".contains(c))
    };
    for (what, value) in [
        ("name", dep.name.as_str()),
        ("version", dep.version.as_str()),
        ("fixed version", fixed),
    ] {
        if !plain(value) {
            return Err(format!(
                "the package's {what} {value:?} holds characters a suggested command may not carry"
            ));
        }
    }
    Ok(command_text(format, dep, fixed, edited_line))
}

fn command_text(
    format: Format,
    dep: &Dependency,
    fixed: &str,
    edited_line: &str,
) -> Option<String> {
    let name = &dep.name;
    let direct = dep.kind == DependencyKind::Direct;
    let fixed_spelled = spelled(&dep.version, fixed);
    Some(match format {
        Format::RequirementsTxt if !edited_line.contains("--hash") => return None,
        Format::PomXml | Format::GradleVersionCatalog | Format::GradleKts => return None,
        Format::RequirementsTxt => {
            format!("pip-compile --generate-hashes --upgrade-package '{name}=={fixed}'")
        }
        Format::CargoLock | Format::CargoToml => {
            format!("cargo update -p {name}@{} --precise {fixed}", dep.version)
        }
        Format::PackageLockJson | Format::PackageJson if direct => {
            format!("npm install {name}@{fixed}")
        }
        Format::PackageLockJson | Format::PackageJson => format!(
            "add \"overrides\": {{\"{name}\": \"{fixed}\"}} to package.json, then npm install"
        ),
        Format::YarnLock => format!("yarn up {name}@{fixed}"),
        Format::PnpmLock => format!("pnpm update {name}@{fixed}"),
        Format::PoetryLock | Format::PyprojectToml if direct => {
            format!("poetry add '{name}>={fixed}'")
        }
        Format::PoetryLock | Format::PyprojectToml => {
            format!("poetry update {name} (its dependents must allow {fixed})")
        }
        Format::UvLock => format!("uv lock --upgrade-package '{name}=={fixed}'"),
        Format::PipfileLock => format!("pipenv install '{name}>={fixed}'"),
        Format::GoMod | Format::GoSum => format!("go get {name}@{fixed_spelled} && go mod tidy"),
        Format::ComposerLock | Format::ComposerJson if direct => {
            format!("composer require {name}:^{fixed}")
        }
        Format::ComposerLock | Format::ComposerJson => {
            format!(
                "composer update {name} --with-dependencies (its dependents must allow {fixed})"
            )
        }
        Format::GemfileLock | Format::Gemfile => format!("bundle update {name} --conservative"),
    })
}

/// The one edit of `path` that changes line `line` of `text` into the patched text's.
pub fn edit(path: &str, text: &str, patched: &str, line: u32) -> Option<PatchEdit> {
    let at = line as usize - 1;
    let old = text.split_inclusive('\n').nth(at)?;
    let new = patched.split_inclusive('\n').nth(at)?;
    let strip = |s: &str| s.trim_end_matches(['\n', '\r']).to_string();
    Some(PatchEdit {
        path: path.to_string(),
        old_text: strip(old),
        new_text: strip(new),
        lines: Some(LineSpan {
            start: line,
            end: line,
            replacement: strip(new),
        }),
    })
}

/// A tree with one file's text replaced (siblings read from the tree beneath).
pub struct Overlay<'a> {
    pub tree: &'a dyn Tree,
    pub path: &'a str,
    pub text: &'a str,
}

impl Tree for Overlay<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, std::io::Error> {
        if path == self.path {
            Ok(Some(self.text.as_bytes().to_vec()))
        } else {
            self.tree.read(path)
        }
    }
}

/// The smallest version that leaves every affected range of the advisory's rows, never
/// below the base's own: where the change lowered the package, the base's version itself
/// when it leaves every range, else the smallest fix above it.
pub fn fix_ref(
    dep: &Dependency,
    base_versions: &[&Dependency],
    all: &[&proven_osv::Affected],
) -> proven_report::FixRef {
    use proven_report::FixRef;
    use proven_version::Fix;
    let lowered = lowered_from(dep, base_versions);
    if let Some((text, base)) = &lowered
        && all
            .iter()
            .all(|a| proven_version::is_affected_version(a, base).is_ok_and(|x| !x.affected))
    {
        let note = format!(
            "the base's own version: the change lowered it from {text}, which is outside every affected range of these rows"
        );
        return FixRef {
            note,
            version: Some(text.to_string()),
            proposed: None,
        };
    }
    let floor = lowered.as_ref().map_or(dep.version.as_str(), |(t, _)| t);
    match proven_version::smallest_fix(dep.ecosystem, all, floor) {
        Ok(Fix::Version(v)) => FixRef {
            note: match &lowered {
                Some((text, _)) => format!(
                    "smallest version above the base's own {text} (the change lowered it; \
                     {text} is itself affected) outside every affected range of these rows"
                ),
                None => "smallest version at or above this one outside every affected range \
                         of these rows"
                    .into(),
            },
            version: Some(v),
            proposed: None,
        },
        Ok(Fix::NoFixPublished) => FixRef {
            version: None,
            note: "no fix published".into(),
            proposed: None,
        },
        Err(e) => FixRef {
            version: None,
            note: format!("fix version could not be computed: {e}"),
            proposed: None,
        },
    }
}

/// The base's own version of a package the change lowered (the highest the base declared,
/// above the head's `dep`): a fix never goes below what the base already had.
pub fn lowered_from<'a>(
    dep: &Dependency,
    base: &[&'a Dependency],
) -> Option<(&'a str, proven_version::Version)> {
    let head = proven_version::Version::parse(dep.ecosystem, &dep.version).ok()?;
    base.iter()
        .filter_map(|d| {
            proven_version::Version::parse(dep.ecosystem, &d.version)
                .ok()
                .map(|v| (d.version.as_str(), v))
        })
        .filter(|(_, v)| *v > head)
        .max_by(|a, b| a.1.cmp(&b.1))
}

/// The largest of `versions` by `eco`'s own order (None when one does not compare).
pub fn highest(eco: Ecosystem, versions: &[String]) -> Option<String> {
    let mut best: Option<&String> = None;
    for v in versions {
        best = match best {
            None => Some(v),
            Some(b) => match proven_version::compare(eco, b, v).ok()? {
                std::cmp::Ordering::Less => Some(v),
                _ => Some(b),
            },
        };
    }
    best.cloned()
}

/// The package's declaration in a read file, by name (as the ecosystem normalises it) and
/// version.
pub fn declaration<'a>(
    file: &'a DependencyFile,
    name: &str,
    version: &str,
) -> Option<&'a Dependency> {
    file.dependencies.iter().find(|d| {
        d.ecosystem.normalize_name(&d.name) == d.ecosystem.normalize_name(name)
            && d.version == version
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proven_domain::Origin;

    fn dep(name: &str, version: &str, line: Option<u32>) -> Dependency {
        Dependency {
            ecosystem: Ecosystem::CratesIo,
            name: name.into(),
            version: version.into(),
            kind: DependencyKind::Transitive,
            origin: Origin::Registry,
            dev: false,
            line,
        }
    }

    #[test]
    fn the_declaration_s_own_version_is_raised_and_nothing_else() {
        let lock = "[[package]]\nname = \"a\"\nversion = \"0.6.9\"\n\n[[package]]\nname = \"smallvec\"\nversion = \"0.6.9\"\nchecksum = \"x0.6.9\"\n";
        let (patched, line) =
            with_version(lock, &dep("smallvec", "0.6.9", Some(5)), "0.6.10").expect("found");
        assert_eq!(line, 7);
        assert!(
            patched.contains("name = \"a\"\nversion = \"0.6.9\""),
            "{patched}"
        );
        assert!(patched.contains("name = \"smallvec\"\nversion = \"0.6.10\""));
        // Not a prefix of a longer version.
        assert!(with_version("x = \"0.6.95\"\n", &dep("x", "0.6.9", Some(1)), "1").is_none());
        // Go's spelling keeps its v.
        let gomod = "require golang.org/x/text v0.3.0\n";
        let (patched, _) =
            with_version(gomod, &dep("golang.org/x/text", "v0.3.0", Some(1)), "0.3.3").expect("go");
        assert_eq!(patched, "require golang.org/x/text v0.3.3\n");
    }

    #[test]
    fn only_a_pin_nothing_ties_is_an_edit() {
        let d = dep("requests", "2.19.0", Some(1));
        assert_eq!(
            command(Format::RequirementsTxt, &d, "2.20.0", "requests==2.19.0"),
            Ok(None)
        );
        assert!(
            command(
                Format::RequirementsTxt,
                &d,
                "2.20.0",
                "requests==2.19.0 --hash=sha256:1"
            )
            .is_ok_and(|c| c.is_some_and(|c| c.contains("--upgrade-package 'requests==2.20.0'")))
        );
        assert_eq!(
            command(
                Format::CargoLock,
                &dep("smallvec", "0.6.9", None),
                "0.6.10",
                ""
            ),
            Ok(Some(
                "cargo update -p smallvec@0.6.9 --precise 0.6.10".to_string()
            ))
        );
        let go = dep("golang.org/x/text", "v0.3.0", None);
        assert_eq!(
            command(Format::GoMod, &go, "0.3.3", ""),
            Ok(Some(
                "go get golang.org/x/text@v0.3.3 && go mod tidy".to_string()
            ))
        );
        // A name or version from the change that a shell would read as syntax gets no command.
        let hostile = dep("smallvec$(curl evil)", "0.6.9", None);
        assert!(
            command(Format::CargoLock, &hostile, "0.6.10", "")
                .is_err_and(|e| e.contains("characters a suggested command may not carry"))
        );
    }
}
