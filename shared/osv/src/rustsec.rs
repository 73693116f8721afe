//! RustSec's own advisory database (`crates/<crate>/RUSTSEC-*.md`, a directory or its
//! `.tar.gz`): what it keeps that its OSV export, as the data kit ships it, does not — the
//! vulnerable functions of each advisory (`[affected.functions]` in the TOML front matter).

use std::io::Read;
use std::path::Path;

/// The vulnerable functions one RustSec advisory names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustsecFunctions {
    /// `RUSTSEC-YYYY-NNNN`.
    pub id: String,
    /// The crate, as `advisory.package` names it.
    pub package: String,
    /// Paths from the crate's root (`smallvec::SmallVec::insert_many`), in the file's order.
    pub functions: Vec<String>,
}

/// Whether `path` names a RustSec advisory file (`RUSTSEC-*.md` in a `crates/<crate>/`
/// folder).
pub fn is_rustsec_advisory(path: &str) -> bool {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or_default();
    let _crate_dir = parts.next();
    file.starts_with("RUSTSEC-") && file.ends_with(".md") && parts.next() == Some("crates")
}

/// Reads one advisory file's front matter. `Ok(None)` for an advisory that names no
/// function (informational advisories, whole-crate issues).
pub fn read_rustsec_advisory(text: &str) -> Result<Option<RustsecFunctions>, String> {
    let body = text
        .trim_start()
        .strip_prefix("```toml")
        .ok_or("no ```toml front matter")?;
    let end = body
        .find("\n```")
        .ok_or("unterminated ```toml front matter")?;
    let front: toml::Table =
        toml::from_str(&body[..end]).map_err(|e| format!("front matter is not TOML: {e}"))?;
    let advisory = front.get("advisory").ok_or("no [advisory] table")?;
    let field = |name: &str| {
        advisory
            .get(name)
            .and_then(toml::Value::as_str)
            .map(str::to_string)
            .ok_or(format!("no advisory.{name}"))
    };
    let (id, package) = (field("id")?, field("package")?);
    let functions: Vec<String> = front
        .get("affected")
        .and_then(|a| a.get("functions"))
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|t| t.keys().cloned())
        .collect();
    Ok((!functions.is_empty()).then_some(RustsecFunctions {
        id,
        package,
        functions,
    }))
}

/// Walks a `.tar.gz` of the database and hands each advisory file's text to `visit` with
/// its origin (`archive!entry`).
pub(crate) fn read_tarball(
    path: &Path,
    visit: &mut dyn FnMut(String, Result<String, String>),
) -> std::io::Result<()> {
    let file = std::fs::File::open(path)?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for entry in archive.entries()? {
        let mut entry = entry?;
        let name = entry.path()?.to_string_lossy().into_owned();
        if !entry.header().entry_type().is_file() || !is_rustsec_advisory(&name) {
            continue;
        }
        let mut text = String::new();
        let read = entry
            .read_to_string(&mut text)
            .map(|_| text)
            .map_err(|e| e.to_string());
        visit(format!("{}!{name}", path.display()), read);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALLVEC: &str = "```toml\n[advisory]\nid = \"RUSTSEC-2021-0003\"\npackage = \"smallvec\"\ndate = \"2021-01-08\"\n\n[versions]\npatched = [\">= 1.6.1\"]\n\n[affected]\nfunctions = { \"smallvec::SmallVec::insert_many\" = [\">= 1.0.0, < 1.6.1\"] }\n```\n\n# Buffer overflow\n";

    #[test]
    fn the_functions_of_an_advisory_are_read_in_either_spelling() {
        let read = read_rustsec_advisory(SMALLVEC).expect("reads");
        assert_eq!(
            read,
            Some(RustsecFunctions {
                id: "RUSTSEC-2021-0003".into(),
                package: "smallvec".into(),
                functions: vec!["smallvec::SmallVec::insert_many".into()],
            })
        );
        let table = "```toml\n[advisory]\nid = \"RUSTSEC-1\"\npackage = \"a\"\n\n[affected.functions]\n\"a::f\" = [\"< 1\"]\n\"a::g\" = [\"< 1\"]\n```\n";
        let read = read_rustsec_advisory(table)
            .expect("reads")
            .expect("functions");
        assert_eq!(read.functions, vec!["a::f", "a::g"]);
        let none = "```toml\n[advisory]\nid = \"RUSTSEC-2\"\npackage = \"a\"\ninformational = \"unmaintained\"\n```\n";
        assert_eq!(read_rustsec_advisory(none), Ok(None));
        assert!(read_rustsec_advisory("# no front matter").is_err());
    }

    #[test]
    fn only_advisory_files_under_crates_are_advisories() {
        assert!(is_rustsec_advisory(
            "advisory-db/crates/smallvec/RUSTSEC-2021-0003.md"
        ));
        assert!(is_rustsec_advisory("crates/a/RUSTSEC-2021-0003.md"));
        assert!(!is_rustsec_advisory("advisory-db/README.md"));
        assert!(!is_rustsec_advisory("rust/std/CVE-2021-1.md"));
    }
}
