//! Pipfile.lock (JSON): `default` and `develop` sections, `"version": "==1.2.3"`.
//!
//! A package only in `develop` is development-only. Git (`git` + `ref`), path (`path`) and
//! file/URL (`file`) entries are not registry packages. Direct means listed in the Pipfile
//! beside the lock (`[packages]`, `[dev-packages]`); without it the lock does not tell.

use std::collections::HashMap;

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::Deps;
use crate::error::ReadError;
use crate::pins::{Elsewhere, Pin, Pins};
use crate::text::{JsonLines, LineIndex, Seg, Shape, TomlShape, parse_json, parse_toml};

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
    let index = LineIndex::new(&text);
    let parsed = parse_toml(&path, &text, &index).and_then(|doc| {
        let sh = TomlShape {
            path: &path,
            index: &index,
        };
        let mut out: HashMap<String, bool> = HashMap::new();
        for (section, dev) in [("packages", false), ("dev-packages", true)] {
            if let Some(t) = sh.table(&doc, section)? {
                for (name, _) in t.iter() {
                    let e = out
                        .entry(Ecosystem::PyPI.normalize_name(name.get_ref()))
                        .or_insert(true);
                    *e = *e && dev;
                }
            }
        }
        Ok(out)
    });
    match parsed {
        Ok(m) => Some(m),
        Err(e) => {
            ctx.note(format!("{e} (so direct marks are not applied)"));
            None
        }
    }
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

    #[test]
    fn wrong_shape() {
        let tree = MemTree::with("Pipfile.lock", r#"{"default": []}"#);
        let err = read(&tree, "Pipfile.lock", &Limits::default()).unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::Shape);
        assert!(err.message.contains("`default`"));
    }
}
