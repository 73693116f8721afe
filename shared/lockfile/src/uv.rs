//! uv.lock.
//!
//! Each package has a `source`: `registry` (an index: matched later), `git`, `url`,
//! `path`/`directory`, or `editable`/`virtual` (the workspace's own members). Members are the
//! roots: what their `dependencies` and `optional-dependencies` name is a direct production
//! dependency, what their `dev-dependencies` groups name a direct development one; the graph of
//! `dependencies` decides the rest. Without members, pyproject.toml beside the lock is used.

use std::collections::{BTreeSet, HashMap};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::{Deps, dev_only, reach};
use crate::error::{ReadError, ReadErrorKind};
use crate::poetry::sibling_pyproject;
use crate::text::{LineIndex, TomlDoc, TomlShape, TomlValue, parse_toml, toml_str, toml_table};

const PYPI_SIMPLE: &str = "https://pypi.org/simple";

struct Pkg {
    name: String,
    version: Option<String>,
    origin: Origin,
    member: bool,
    line: Option<u32>,
    /// (name, version) references: production and development.
    prod: Vec<(String, Option<String>)>,
    dev: Vec<(String, Option<String>)>,
}

pub(crate) fn read(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let index = LineIndex::new(text);
    let doc = parse_toml(ctx.path, text, &index)?;
    let sh = TomlShape {
        path: ctx.path,
        index: &index,
    };
    let mut pkgs = Vec::new();
    let mut other_indexes = BTreeSet::new();
    if let Some(list) = sh.array(&doc, "package")? {
        for (i, item) in list.iter().enumerate() {
            let where_ = format!("package[{i}]");
            let t = toml_table(item.get_ref()).ok_or_else(|| {
                ReadError::shape(ctx.path, Some(sh.line_of(item)), &where_, "a table")
            })?;
            let name = sh.string(t, "name")?.ok_or_else(|| {
                ReadError::new(
                    ctx.path,
                    Some(sh.line_of(item)),
                    ReadErrorKind::Shape,
                    format!("`{where_}` has no `name`"),
                )
            })?;
            let (origin, member) = match sh.table(t, "source")? {
                None => (Origin::Registry, false),
                Some(source) => source_origin(&sh, source, &mut other_indexes)?,
            };
            let mut prod = refs(&sh, t, "dependencies", &where_)?;
            let mut dev = Vec::new();
            for key in ["optional-dependencies", "dev-dependencies"] {
                if let Some(groups) = sh.table(t, key)? {
                    for (group, v) in groups.iter() {
                        if let TomlValue::Array(a) = v.get_ref() {
                            let list =
                                array_refs(&sh, a, &format!("{where_}.{key}.{}", group.get_ref()))?;
                            if key == "dev-dependencies" {
                                dev.extend(list);
                            } else {
                                prod.extend(list);
                            }
                        }
                    }
                }
            }
            pkgs.push(Pkg {
                name: name.to_string(),
                version: sh.string(t, "version")?.map(str::to_string),
                origin,
                member,
                line: sh.key_line(t, "name"),
                prod,
                dev,
            });
        }
    }
    for url in other_indexes {
        ctx.note(format!(
            "packages from index `{url}` are not from PyPI: an advisory for a PyPI package of the \
             same name may not apply to them"
        ));
    }

    // Resolve references by name, and by version where the lock gives one (a package resolved
    // at several versions for different markers).
    let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, p) in pkgs.iter().enumerate() {
        by_name
            .entry(Ecosystem::PyPI.normalize_name(&p.name))
            .or_default()
            .push(i);
    }
    let resolve = |(name, version): &(String, Option<String>)| -> Vec<usize> {
        let Some(candidates) = by_name.get(&Ecosystem::PyPI.normalize_name(name)) else {
            return Vec::new();
        };
        candidates
            .iter()
            .copied()
            .filter(|&i| match version {
                Some(v) => pkgs
                    .get(i)
                    .is_some_and(|p| p.version.as_deref() == Some(v.as_str())),
                None => true,
            })
            .collect()
    };
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); pkgs.len()];
    let mut prod_roots = Vec::new();
    let mut dev_roots = Vec::new();
    for (i, p) in pkgs.iter().enumerate() {
        let targets: Vec<usize> = p.prod.iter().flat_map(&resolve).collect();
        if p.member {
            prod_roots.extend(targets.iter().copied());
            dev_roots.extend(p.dev.iter().flat_map(&resolve));
        }
        if let Some(e) = edges.get_mut(i) {
            e.extend(targets);
        }
    }
    let has_members = pkgs.iter().any(|p| p.member);
    // Without members in the lock, the pyproject.toml beside it says what is direct.
    let pyproject = if has_members {
        None
    } else {
        sibling_pyproject(ctx).map(|m| m.direct())
    };
    if let Some(direct) = &pyproject {
        for (i, p) in pkgs.iter().enumerate() {
            match direct.get(&Ecosystem::PyPI.normalize_name(&p.name)) {
                Some(true) => dev_roots.push(i),
                Some(false) => prod_roots.push(i),
                None => {}
            }
        }
    }
    let dev = dev_only(&edges, &prod_roots, &dev_roots);
    let reached = reach(&edges, prod_roots.iter().chain(dev_roots.iter()).copied());
    let know = has_members || pyproject.is_some();

    let mut deps = Deps::default();
    let mut no_version = Vec::new();
    for (i, p) in pkgs.into_iter().enumerate() {
        let Some(version) = p.version else {
            // A member with a dynamic version is the project itself: nothing to report.
            if !p.member {
                no_version.push(p.name);
            }
            continue;
        };
        let kind = if p.member || prod_roots.contains(&i) || dev_roots.contains(&i) {
            DependencyKind::Direct
        } else if !know {
            DependencyKind::Unknown
        } else if reached.get(i).copied().unwrap_or(false) {
            DependencyKind::Transitive
        } else {
            DependencyKind::Unknown
        };
        deps.push(Dependency {
            ecosystem: Ecosystem::PyPI,
            name: p.name,
            version,
            kind: if know || p.member {
                kind
            } else {
                DependencyKind::Unknown
            },
            origin: p.origin,
            dev: dev.get(i).copied().unwrap_or(false),
            line: p.line,
        });
    }
    if !no_version.is_empty() {
        ctx.note(format!(
            "packages without a version were skipped: {}",
            no_version.join(", ")
        ));
    }
    Ok(deps.into_vec())
}

fn source_origin(
    sh: &TomlShape<'_>,
    source: &TomlDoc<'_>,
    other_indexes: &mut BTreeSet<String>,
) -> Result<(Origin, bool), ReadError> {
    if let Some(url) = sh.string(source, "registry")? {
        if url.trim_end_matches('/') != PYPI_SIMPLE && !url.starts_with('.') {
            other_indexes.insert(url.to_string());
        }
        return Ok((Origin::Registry, false));
    }
    if source.contains_key("editable") || source.contains_key("virtual") {
        return Ok((Origin::Path, true));
    }
    if let Some(url) = sh.string(source, "git")? {
        return Ok((
            Origin::Git {
                url: url.to_string(),
            },
            false,
        ));
    }
    if let Some(url) = sh.string(source, "url")? {
        // A direct URL: not an index. Reported as a remote source so it is never matched.
        return Ok((
            Origin::Git {
                url: url.to_string(),
            },
            false,
        ));
    }
    Ok((Origin::Path, false))
}

fn refs(
    sh: &TomlShape<'_>,
    t: &TomlDoc<'_>,
    key: &str,
    where_: &str,
) -> Result<Vec<(String, Option<String>)>, ReadError> {
    match sh.array(t, key)? {
        Some(a) => array_refs(sh, a, &format!("{where_}.{key}")),
        None => Ok(Vec::new()),
    }
}

fn array_refs(
    sh: &TomlShape<'_>,
    a: &toml::de::DeArray<'_>,
    where_: &str,
) -> Result<Vec<(String, Option<String>)>, ReadError> {
    let mut out = Vec::new();
    for item in a {
        let t = toml_table(item.get_ref()).ok_or_else(|| {
            ReadError::shape(
                sh.path,
                Some(sh.line_of(item)),
                where_,
                "an array of tables",
            )
        })?;
        let Some(name) = t.get("name").and_then(|n| toml_str(n.get_ref())) else {
            continue;
        };
        let version = t
            .get("version")
            .and_then(|v| toml_str(v.get_ref()))
            .map(str::to_string);
        out.push((name.to_string(), version));
    }
    Ok(out)
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

    const LOCK: &str = r#"version = 1
requires-python = ">=3.10"

[[package]]
name = "app"
version = "0.1.0"
source = { editable = "." }
dependencies = [
    { name = "numpy", version = "2.2.6", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version < '3.11'" },
    { name = "requests" },
]

[package.optional-dependencies]
fast = [
    { name = "orjson" },
]

[package.dev-dependencies]
dev = [
    { name = "pytest" },
]

[[package]]
name = "numpy"
version = "2.2.6"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "numpy"
version = "2.4.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "requests"
version = "2.32.3"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "idna" },
]

[[package]]
name = "idna"
version = "3.7"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "orjson"
version = "3.10.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "pytest"
version = "8.2.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "pluggy" },
]

[[package]]
name = "pluggy"
version = "1.5.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "mygit"
version = "0.3.0"
source = { git = "https://github.com/x/mygit?rev=v0.3#abc" }
"#;

    #[test]
    fn members_sources_direct_and_dev() {
        let tree = MemTree::with("uv.lock", LOCK);
        let file = read(&tree, "uv.lock", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 9);
        let app = get(d, "app", "0.1.0");
        assert_eq!(
            (app.origin.clone(), app.kind),
            (Origin::Path, DependencyKind::Direct)
        );
        let np = get(d, "numpy", "2.2.6");
        assert_eq!((np.kind, np.line), (DependencyKind::Direct, Some(24)));
        assert_eq!(get(d, "numpy", "2.4.0").kind, DependencyKind::Unknown);
        assert_eq!(get(d, "requests", "2.32.3").kind, DependencyKind::Direct);
        assert_eq!(get(d, "idna", "3.7").kind, DependencyKind::Transitive);
        assert_eq!(get(d, "orjson", "3.10.0").kind, DependencyKind::Direct);
        let pytest = get(d, "pytest", "8.2.0");
        assert_eq!((pytest.kind, pytest.dev), (DependencyKind::Direct, true));
        let pluggy = get(d, "pluggy", "1.5.0");
        assert_eq!(
            (pluggy.kind, pluggy.dev),
            (DependencyKind::Transitive, true)
        );
        assert!(matches!(
            get(d, "mygit", "0.3.0").origin,
            Origin::Git { .. }
        ));
    }
}
