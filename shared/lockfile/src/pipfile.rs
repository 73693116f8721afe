//! Pipfile.lock (JSON): `default` and `develop` sections, `"version": "==1.2.3"`.
//!
//! A package only in `develop` is development-only. Git (`git` + `ref`), path (`path`) and
//! file/URL (`file`) entries are not registry packages. Direct means listed in the Pipfile
//! beside the lock (`[packages]`, `[dev-packages]`); without it the lock does not tell.
//!
//! [`manifest`] is the one reader of a Pipfile: the lock's direct marks and the sandbox's
//! preparation both take it from there.

use std::collections::HashMap;

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::Deps;
use crate::error::ReadError;
use crate::pins::{Elsewhere, Pin, Pins};
use crate::text::{
    JsonLines, LineIndex, Seg, Shape, TomlShape, TomlValue, parse_json, parse_toml, toml_str,
    toml_table,
};

pub(crate) fn read(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let path = ctx.path;
    let value = parse_json(path, text, ctx.limits)?;
    let sh = Shape { path };
    sh.root_object(&value)?;
    let lines = JsonLines::scan(text, |p| {
        p.len() == 2 && matches!(p.first(), Some(Seg::Key(k)) if k == "default" || k == "develop")
    });
    let pipfile = sibling_pipfile(ctx);
    // A package in both sections ships: `Deps` keeps dev only when every copy is dev.
    let mut deps = Deps::default();
    let mut skipped = Vec::new();
    for (section, dev) in [("default", false), ("develop", true)] {
        let section_line = lines.get(&[Seg::Key(section.into())]);
        let Some(entries) = sh.object(&value, section, section_line)? else {
            continue;
        };
        for (name, entry) in entries {
            let line = lines.get(&[Seg::Key(section.into()), Seg::Key(name.clone())]);
            if !entry.is_object() {
                return Err(ReadError::shape(
                    path,
                    line,
                    &format!("{section}.{name}"),
                    "an object",
                ));
            }
            let version = sh.string(entry, "version", line)?.map(|v| {
                v.trim_start_matches("===")
                    .trim_start_matches("==")
                    .trim()
                    .to_string()
            });
            let (origin, version) = if let Some(url) = sh.string(entry, "git", line)? {
                let git_ref = sh.string(entry, "ref", line)?;
                (Origin::Git { url }, version.or(git_ref))
            } else if let Some(url) = sh.string(entry, "file", line)? {
                (Origin::Git { url }, version)
            } else if sh.string(entry, "path", line)?.is_some() {
                (Origin::Path, version)
            } else {
                (Origin::Registry, version)
            };
            let Some(version) = version.filter(|v| !v.is_empty() && v != "*") else {
                skipped.push(name.clone());
                continue;
            };
            let kind = match &pipfile {
                Some(listed) if listed.contains_key(&Ecosystem::PyPI.normalize_name(name)) => {
                    DependencyKind::Direct
                }
                Some(_) => DependencyKind::Transitive,
                None => DependencyKind::Unknown,
            };
            deps.push(Dependency {
                ecosystem: Ecosystem::PyPI,
                name: name.clone(),
                version,
                kind,
                origin,
                dev,
                line,
            });
        }
    }
    if !skipped.is_empty() {
        ctx.note(format!(
            "entries without a version were skipped: {}",
            skipped.join(", ")
        ));
    }
    Ok(deps.into_vec())
}

/// The Pipfile beside the lock: normalised names it lists → listed only in dev-packages.
fn sibling_pipfile(ctx: &mut Ctx<'_>) -> Option<HashMap<String, bool>> {
    let (path, text) = ctx.sibling("Pipfile")?;
    match manifest(&path, &text) {
        Ok(pipfile) => {
            let mut out: HashMap<String, bool> = HashMap::new();
            for p in pipfile.packages {
                let e = out
                    .entry(Ecosystem::PyPI.normalize_name(&p.name))
                    .or_insert(true);
                *e = *e && p.dev;
            }
            Some(out)
        }
        Err(e) => {
            ctx.note(format!("{e} (so direct marks are not applied)"));
            None
        }
    }
}

/// What a Pipfile declares: the packages of `[packages]` and `[dev-packages]`, and the
/// Python of `[requires]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pipfile {
    /// `[requires] python_version` (`"3.9"`).
    pub python_version: Option<String>,
    /// `[packages]` first, then `[dev-packages]`, each in the order the TOML table keeps.
    pub packages: Vec<Package>,
}

/// One package a Pipfile names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    /// Listed in `[dev-packages]`.
    pub dev: bool,
    pub wants: Wants,
    /// The line its key is on.
    pub line: Option<u32>,
}

/// Where a Pipfile package comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wants {
    /// The registry, with the version specifier as written (`>=6`); empty for any (`*`).
    Registry(String),
    /// A git repository, a path or a file/URL (`{git = ...}`, `{path = ...}`, `{file = ...}`).
    Elsewhere,
    /// A value that is neither a version nor a table.
    Unreadable,
}

/// Reads a Pipfile; a file that is not TOML, or whose package sections are not tables, is an
/// error naming the line.
pub fn manifest(path: &str, text: &str) -> Result<Pipfile, ReadError> {
    let index = LineIndex::new(text);
    let doc = parse_toml(path, text, &index)?;
    let sh = TomlShape {
        path,
        index: &index,
    };
    let mut out = Pipfile {
        python_version: doc
            .get("requires")
            .and_then(|r| toml_table(r.get_ref()))
            .and_then(|r| r.get("python_version"))
            .and_then(|v| toml_str(v.get_ref()))
            .map(str::to_string),
        packages: Vec::new(),
    };
    for (section, dev) in [("packages", false), ("dev-packages", true)] {
        let Some(table) = sh.table(&doc, section)? else {
            continue;
        };
        for (name, value) in table.iter() {
            let wants = match value.get_ref() {
                TomlValue::String(v) if v.as_ref() == "*" => Wants::Registry(String::new()),
                TomlValue::String(v) => Wants::Registry(v.to_string()),
                TomlValue::Table(t)
                    if ["git", "path", "file"].iter().any(|k| t.contains_key(*k)) =>
                {
                    Wants::Elsewhere
                }
                TomlValue::Table(t) => match t.get("version").and_then(|v| toml_str(v.get_ref())) {
                    Some("*") | None => Wants::Registry(String::new()),
                    Some(v) => Wants::Registry(v.to_string()),
                },
                _ => Wants::Unreadable,
            };
            out.packages.push(Package {
                name: name.get_ref().to_string(),
                dev,
                wants,
                line: Some(sh.line_of(name)),
            });
        }
    }
    Ok(out)
}

/// Pipfile.lock for a project's tests: every package of both sections, at its version.
pub fn lock_pins(text: &str) -> Pins {
    let mut pins = Pins::default();
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return pins;
    };
    for section in ["default", "develop"] {
        if let Some(packages) = doc[section].as_object() {
            for (name, entry) in packages {
                let source = format!("Pipfile.lock {section}");
                if entry.get("git").is_some()
                    || entry.get("path").is_some()
                    || entry.get("file").is_some()
                {
                    pins.elsewhere.push(Elsewhere {
                        what: name.clone(),
                        source,
                        reason: "a git, path or file dependency fetches from elsewhere".into(),
                    });
                    continue;
                }
                let spec = match entry["version"].as_str() {
                    Some(v) => format!("{name}{v}"),
                    None => name.clone(),
                };
                pins.pinned.push(Pin { spec, source });
            }
        }
    }
    pins
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, MemTree, ReadErrorKind, read};

    const LOCK: &str = r#"{
    "_meta": {"hash": {"sha256": "x"}, "pipfile-spec": 6, "sources": []},
    "default": {
        "requests": {"hashes": ["sha256:a"], "index": "pypi", "version": "==2.31.0"},
        "idna": {"version": "==3.4", "markers": "python_version >= '3.5'"},
        "mylib": {"editable": true, "path": "."},
        "gitpkg": {"git": "https://github.com/x/gitpkg.git", "ref": "abc123"}
    },
    "develop": {
        "pytest": {"version": "==8.0.0"},
        "idna": {"version": "==3.4"}
    }
}"#;

    #[test]
    fn sections_sources_and_pipfile() {
        let mut tree = MemTree::with("Pipfile.lock", LOCK);
        tree.insert(
            "Pipfile",
            "[packages]\nrequests = \"*\"\n[dev-packages]\npytest = \"*\"\n",
        );
        let file = read(&tree, "Pipfile.lock", &Limits::default()).unwrap();
        let d = &file.dependencies;
        let names: Vec<_> = d
            .iter()
            .map(|x| (x.name.as_str(), x.version.as_str(), x.dev, x.kind, x.line))
            .collect();
        assert_eq!(
            names,
            vec![
                ("requests", "2.31.0", false, DependencyKind::Direct, Some(4)),
                ("idna", "3.4", false, DependencyKind::Transitive, Some(5)),
                (
                    "gitpkg",
                    "abc123",
                    false,
                    DependencyKind::Transitive,
                    Some(7)
                ),
                ("pytest", "8.0.0", true, DependencyKind::Direct, Some(10)),
            ]
        );
        assert!(matches!(d[2].origin, Origin::Git { .. }));
        assert!(file.notes.iter().any(|n| n.contains("mylib")));
    }

    /// The Pipfile as both its readers take it: the lock's direct marks (names and
    /// sections) and the sandbox's preparation (specifiers, sources elsewhere, the Python).
    #[test]
    fn a_pipfile_is_read_once_for_every_user() {
        let text = "[[source]]\nurl = \"https://pypi.org/simple\"\n[packages]\nrequests = \"*\"\nDjango = \">=4,<5\"\nhttpx = {version = \"==0.27\", extras = [\"http2\"]}\nanyver = {extras = [\"x\"]}\nmine = {path = \".\", editable = true}\ngitpkg = {git = \"https://x/g.git\", ref = \"v1\"}\nodd = 3\n[dev-packages]\npytest = \">=6\"\nrequests = \"*\"\n[requires]\npython_version = \"3.9\"\n";
        let pipfile = manifest("Pipfile", text).unwrap();
        assert_eq!(pipfile.python_version.as_deref(), Some("3.9"));
        let mut got: Vec<(&str, bool, &Wants, Option<u32>)> = pipfile
            .packages
            .iter()
            .map(|p| (p.name.as_str(), p.dev, &p.wants, p.line))
            .collect();
        got.sort_by_key(|g| (g.1, g.3));
        let any = Wants::Registry(String::new());
        let spec = |s: &str| Wants::Registry(s.into());
        assert_eq!(
            got,
            [
                ("requests", false, &any, Some(4)),
                ("Django", false, &spec(">=4,<5"), Some(5)),
                ("httpx", false, &spec("==0.27"), Some(6)),
                ("anyver", false, &any, Some(7)),
                ("mine", false, &Wants::Elsewhere, Some(8)),
                ("gitpkg", false, &Wants::Elsewhere, Some(9)),
                ("odd", false, &Wants::Unreadable, Some(10)),
                ("pytest", true, &spec(">=6"), Some(12)),
                ("requests", true, &any, Some(13)),
            ]
        );
        let err = manifest("Pipfile", "[packages\n").unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::Syntax);
        let err = manifest("Pipfile", "packages = 3\n").unwrap_err();
        assert_eq!((err.kind, err.line), (ReadErrorKind::Shape, Some(1)));
    }

    #[test]
    fn wrong_shape() {
        let tree = MemTree::with("Pipfile.lock", r#"{"default": []}"#);
        let err = read(&tree, "Pipfile.lock", &Limits::default()).unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::Shape);
        assert!(err.message.contains("`default`"));
    }
}
