//! poetry.lock (lock-version 1.x with `category`, 2.x with `groups`) and pyproject.toml.
//!
//! A package is development-only when its category is `dev` or none of its groups is `main`.
//! Direct means listed in the pyproject.toml beside the lock: Poetry's
//! `[tool.poetry.dependencies]`, `[tool.poetry.dev-dependencies]` and
//! `[tool.poetry.group.*.dependencies]`, PEP 621 `[project]` dependencies and optional
//! dependencies, PEP 735 `[dependency-groups]` and uv's `[tool.uv] dev-dependencies`.
//! Names are compared as PyPI compares them (PEP 503).

use std::collections::HashMap;

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::Deps;
use crate::error::{ReadError, ReadErrorKind};
use crate::pins::{Elsewhere, Pin, Pins};
use crate::pyproject::{GroupItem, PoetryWants, Spec};
use crate::requirements::parse_requirement;
use crate::text::{LineIndex, TomlShape, parse_toml, toml_str, toml_table};

/// One dependency a pyproject.toml declares.
pub(crate) struct Declared {
    pub(crate) name: String,
    /// The exact version when the declaration pins one.
    pub(crate) exact: Option<String>,
    pub(crate) dev: bool,
    pub(crate) line: u32,
}

/// What a pyproject.toml declares, keyed by normalised name → dev-only.
#[derive(Default)]
pub(crate) struct PyManifest {
    pub(crate) declared: Vec<Declared>,
}

impl PyManifest {
    /// normalised name → whether every declaration of it is development-only.
    pub(crate) fn direct(&self) -> HashMap<String, bool> {
        let mut out: HashMap<String, bool> = HashMap::new();
        for d in &self.declared {
            let key = Ecosystem::PyPI.normalize_name(&d.name);
            let e = out.entry(key).or_insert(true);
            *e = *e && d.dev;
        }
        out
    }
}

pub(crate) fn parse_pyproject(path: &str, text: &str) -> Result<PyManifest, ReadError> {
    let p = crate::pyproject::manifest(path, text)?;
    if let Some(e) = p.problems.into_iter().next() {
        return Err(e);
    }
    let mut m = PyManifest::default();
    if let Some(project) = &p.project {
        pep508_list(&project.dependencies, false, &mut m);
        for extra in &project.optional {
            pep508_list(&extra.items, false, &mut m);
        }
    }
    for group in &p.dependency_groups {
        // PEP 735 `{include-group = "x"}` entries name groups, not packages.
        let specs: Vec<Spec> = group
            .items
            .iter()
            .filter_map(|i| match i {
                GroupItem::Spec(s) => Some(s.clone()),
                GroupItem::Include(_) => None,
            })
            .collect();
        pep508_list(&specs, true, &mut m);
    }
    pep508_list(&p.uv_dev, true, &mut m);
    for table in p.poetry.iter().flat_map(|p| &p.tables) {
        let dev = match &table.group {
            Some(group) => group != "main",
            None => table.label == "dev-dependencies",
        };
        for d in &table.dependencies {
            if d.name == "python" {
                continue;
            }
            let constraint = match &d.wants {
                PoetryWants::Version(c) => Some(c.as_str()),
                PoetryWants::Table { version, .. } => version.as_deref(),
                _ => None,
            };
            m.declared.push(Declared {
                name: d.name.clone(),
                exact: constraint.and_then(poetry_exact),
                dev,
                line: d.line,
            });
        }
    }
    Ok(m)
}

fn pep508_list(list: &[Spec], dev: bool, m: &mut PyManifest) {
    for item in list {
        if let Some(req) = parse_requirement(&item.text) {
            m.declared.push(Declared {
                exact: req.version.filter(|_| req.url.is_none()),
                name: req.name,
                dev,
                line: item.line,
            });
        }
    }
}

/// Poetry reads a bare version (`1.2.3`) and `==1.2.3` as exact.
fn poetry_exact(c: &str) -> Option<String> {
    let c = c.trim();
    let v = c.strip_prefix("==").unwrap_or(c).trim();
    let exact = !v.is_empty()
        && v.starts_with(|ch: char| ch.is_ascii_digit())
        && !v.contains(['*', ',', ' ', '<', '>', '^', '~', '|', '!', '=']);
    exact.then(|| v.to_string())
}

/// The pyproject.toml beside a lock file, read leniently (a note when it does not read).
pub(crate) fn sibling_pyproject(ctx: &mut Ctx<'_>) -> Option<PyManifest> {
    let (path, text) = ctx.sibling("pyproject.toml")?;
    match parse_pyproject(&path, &text) {
        Ok(m) => Some(m),
        Err(e) => {
            ctx.note(format!("{e} (so direct marks are not applied)"));
            None
        }
    }
}

pub(crate) fn read_lock(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let index = LineIndex::new(text);
    let doc = parse_toml(ctx.path, text, &index)?;
    let sh = TomlShape {
        path: ctx.path,
        index: &index,
    };
    let direct = sibling_pyproject(ctx).map(|m| m.direct());
    let mut deps = Deps::default();
    let Some(packages) = sh.array(&doc, "package")? else {
        return Ok(Vec::new());
    };
    for (i, item) in packages.iter().enumerate() {
        let where_ = format!("package[{i}]");
        let t = toml_table(item.get_ref()).ok_or_else(|| {
            ReadError::shape(ctx.path, Some(sh.line_of(item)), &where_, "a table")
        })?;
        let missing = |key: &str| {
            ReadError::new(
                ctx.path,
                Some(sh.line_of(item)),
                ReadErrorKind::Shape,
                format!("`{where_}` has no `{key}`"),
            )
        };
        let name = sh.string(t, "name")?.ok_or_else(|| missing("name"))?;
        let version = sh.string(t, "version")?.ok_or_else(|| missing("version"))?;
        let line = sh.key_line(t, "name");
        let dev = match (sh.string(t, "category")?, sh.array(t, "groups")?) {
            (_, Some(groups)) => {
                let names: Vec<&str> = groups
                    .iter()
                    .filter_map(|g| toml_str(g.get_ref()))
                    .collect();
                !names.is_empty() && !names.contains(&"main")
            }
            (Some(category), None) => category == "dev",
            (None, None) => false,
        };
        let origin = match sh.table(t, "source")? {
            Some(source) => {
                let url = sh.string(source, "url")?.unwrap_or("").to_string();
                match sh.string(source, "type")?.unwrap_or("") {
                    "git" => {
                        let commit = sh
                            .string(source, "resolved_reference")?
                            .or(sh.string(source, "reference")?);
                        Origin::Git {
                            url: match commit {
                                Some(c) => format!("{url}#{c}"),
                                None => url,
                            },
                        }
                    }
                    "directory" | "file" => Origin::Path,
                    "url" => Origin::Git { url },
                    // `legacy` is another package index: still a registry.
                    other => {
                        ctx.note(format!(
                            "{name} {version} comes from index `{}` ({other}), not from PyPI",
                            if url.is_empty() { "?" } else { &url }
                        ));
                        Origin::Registry
                    }
                }
            }
            None => Origin::Registry,
        };
        let kind = match &direct {
            Some(d) if d.contains_key(&Ecosystem::PyPI.normalize_name(name)) => {
                DependencyKind::Direct
            }
            Some(_) => DependencyKind::Transitive,
            None => DependencyKind::Unknown,
        };
        deps.push(Dependency {
            ecosystem: Ecosystem::PyPI,
            name: name.to_string(),
            version: version.to_string(),
            kind,
            origin,
            dev,
            line,
        });
    }
    Ok(deps.into_vec())
}

/// pyproject.toml alone: only exact pins (`==1.2.3`; Poetry's bare `1.2.3`) are versions.
pub(crate) fn read_pyproject(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let m = parse_pyproject(ctx.path, text)?;
    let direct = m.direct();
    let mut deps = Deps::default();
    let mut ranges = 0usize;
    for d in &m.declared {
        match &d.exact {
            Some(v) => deps.push(Dependency {
                ecosystem: Ecosystem::PyPI,
                name: d.name.clone(),
                version: v.clone(),
                kind: DependencyKind::Direct,
                origin: Origin::Registry,
                dev: direct
                    .get(&Ecosystem::PyPI.normalize_name(&d.name))
                    .copied()
                    .unwrap_or(d.dev),
                line: Some(d.line),
            }),
            None => ranges += 1,
        }
    }
    if ranges > 0 {
        ctx.note(format!(
            "{ranges} dependencies are ranges, not exact versions: only a lock file gives their \
             versions"
        ));
    }
    Ok(deps.into_vec())
}

/// poetry.lock: every `[[package]]` with a registry source, pinned.
pub fn lock_pins(text: &str, file: &str) -> Pins {
    let mut pins = Pins::default();
    let Ok(doc) = text.parse::<toml::Table>() else {
        return pins;
    };
    for package in doc
        .get("package")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
    {
        let (Some(name), Some(version)) = (
            package.get("name").and_then(|n| n.as_str()),
            package.get("version").and_then(|v| v.as_str()),
        ) else {
            continue;
        };
        let source = package.get("source");
        // uv: the project itself is `source = { editable = "." }` / `{ virtual = "." }`.
        if let Some(s) = source.and_then(|s| s.as_table()) {
            if s.contains_key("editable") || s.contains_key("virtual") {
                pins.project = true;
                continue;
            }
            if s.contains_key("git")
                || s.contains_key("path")
                || s.contains_key("directory")
                || s.contains_key("url")
            {
                pins.elsewhere.push(Elsewhere {
                    what: name.to_string(),
                    source: file.into(),
                    reason: "a git, path or URL package fetches from elsewhere".into(),
                });
                continue;
            }
            // poetry: `[package.source] type = "git" | "directory" | "file" | "url"`
            if let Some(kind) = s.get("type").and_then(|t| t.as_str())
                && kind != "legacy"
            {
                pins.elsewhere.push(Elsewhere {
                    what: name.to_string(),
                    source: file.into(),
                    reason: format!("a {kind} package fetches from elsewhere"),
                });
                continue;
            }
        }
        pins.pinned.push(Pin {
            spec: format!("{name}=={version}"),
            source: file.into(),
        });
    }
    pins
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, MemTree, read};

    fn get<'a>(deps: &'a [Dependency], name: &str, version: &str) -> &'a Dependency {
        deps.iter()
            .find(|d| d.name == name && d.version == version)
            .unwrap_or_else(|| panic!("{name} {version} not found in {deps:#?}"))
    }

    const V1: &str = r#"[[package]]
name = "flask"
version = "2.0.1"
description = ""
category = "main"
optional = false
python-versions = ">=3.6"

[[package]]
name = "pytest"
version = "7.0.0"
category = "dev"
optional = false
python-versions = ">=3.6"

[[package]]
name = "mylib"
version = "0.1.0"
category = "main"
optional = false
python-versions = "*"
develop = true

[package.source]
type = "directory"
url = "../mylib"

[[package]]
name = "gitpkg"
version = "1.0.0"
category = "main"
optional = false
python-versions = "*"

[package.source]
type = "git"
url = "https://github.com/x/gitpkg.git"
reference = "main"
resolved_reference = "abc123"

[metadata]
lock-version = "1.1"
"#;

    #[test]
    fn v1_categories_sources_and_pyproject() {
        let mut tree = MemTree::with("poetry.lock", V1);
        tree.insert(
            "pyproject.toml",
            "[tool.poetry.dependencies]\npython = \"^3.8\"\nFlask = \"^2.0\"\n[tool.poetry.dev-dependencies]\npytest = \"^7\"\n",
        );
        let file = read(&tree, "poetry.lock", &Limits::default()).unwrap();
        let d = &file.dependencies;
        let flask = get(d, "flask", "2.0.1");
        assert_eq!(
            (flask.kind, flask.dev, flask.line),
            (DependencyKind::Direct, false, Some(2))
        );
        let pytest = get(d, "pytest", "7.0.0");
        assert_eq!(
            (pytest.kind, pytest.dev, pytest.line),
            (DependencyKind::Direct, true, Some(10))
        );
        assert_eq!(get(d, "mylib", "0.1.0").origin, Origin::Path);
        assert_eq!(
            get(d, "gitpkg", "1.0.0").origin,
            Origin::Git {
                url: "https://github.com/x/gitpkg.git#abc123".into()
            }
        );
        assert_eq!(get(d, "gitpkg", "1.0.0").kind, DependencyKind::Transitive);
    }

    #[test]
    fn v2_groups() {
        let lock = "[[package]]\nname = \"a\"\nversion = \"1.0\"\ngroups = [\"main\", \"dev\"]\n\n[[package]]\nname = \"b\"\nversion = \"2.0\"\ngroups = [\"dev\", \"docs\"]\n\n[metadata]\nlock-version = \"2.1\"\n";
        let tree = MemTree::with("poetry.lock", lock);
        let file = read(&tree, "poetry.lock", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert!(!get(d, "a", "1.0").dev);
        assert!(get(d, "b", "2.0").dev);
        assert_eq!(get(d, "b", "2.0").kind, DependencyKind::Unknown);
    }

    #[test]
    fn pyproject_alone_gives_exact_pins() {
        let text = "[project]\nname = \"x\"\ndependencies = [\n  \"requests==2.31.0\",\n  \"flask>=2\",\n]\n[dependency-groups]\ndev = [\"pytest==8.0.0\"]\n[tool.poetry.dependencies]\nJinja2 = \"3.1.4\"\nclick = \"^8\"\n";
        let tree = MemTree::with("pyproject.toml", text);
        let file = read(&tree, "pyproject.toml", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 3);
        assert_eq!(get(d, "requests", "2.31.0").line, Some(4));
        assert!(get(d, "pytest", "8.0.0").dev);
        assert_eq!(get(d, "Jinja2", "3.1.4").line, Some(10));
        assert!(
            file.notes.iter().any(|n| n.starts_with("2 dependencies")),
            "{:?}",
            file.notes
        );
    }

    #[test]
    fn broken_sibling_is_a_note_not_a_failure() {
        let mut tree = MemTree::with("poetry.lock", V1);
        tree.insert("pyproject.toml", "[tool.poetry\n");
        let file = read(&tree, "poetry.lock", &Limits::default()).unwrap();
        assert_eq!(file.dependencies.len(), 4);
        assert!(
            file.notes
                .iter()
                .any(|n| n.starts_with("pyproject.toml line 1:")),
            "{:?}",
            file.notes
        );
    }
}
