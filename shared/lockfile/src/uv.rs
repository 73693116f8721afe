//! uv.lock.
//!
//! Each package has a `source`: `registry` (an index: matched later), `git`, `url`,
//! `path`/`directory`, or `editable`/`virtual` (the workspace's own members). Members are the
//! roots: what their `dependencies` and `optional-dependencies` name is a direct production
//! dependency, what their `dev-dependencies` groups name a direct development one; the graph of
//! `dependencies` decides the rest. Without members, pyproject.toml beside the lock is used.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::{Deps, dev_only, reach};
use crate::error::{ReadError, ReadErrorKind};
use crate::pins::{Elsewhere, Pin, Pins, Wanted, normalise_name};
use crate::poetry::sibling_pyproject;
use crate::text::{
    LineIndex, Spanned, TomlDoc, TomlShape, TomlValue, parse_toml, toml_str, toml_table,
};

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
            pkgs.push(package(&sh, item, i, &mut other_indexes)?);
        }
    }
    for url in other_indexes {
        ctx.note(format!(
            "packages from index `{url}` are not from PyPI: an advisory for a PyPI package of the \
             same name may not apply to them"
        ));
    }
    let (edges, mut roots) = graph(&pkgs);
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
                Some(true) => roots.dev.push(i),
                Some(false) => roots.prod.push(i),
                None => {}
            }
        }
    }
    let know = has_members || pyproject.is_some();
    Ok(dependencies(ctx, pkgs, &edges, &roots, know))
}

/// The `i`th `[[package]]` table.
fn package(
    sh: &TomlShape<'_>,
    item: &Spanned<TomlValue<'_>>,
    i: usize,
    other_indexes: &mut BTreeSet<String>,
) -> Result<Pkg, ReadError> {
    let where_ = format!("package[{i}]");
    let t = toml_table(item.get_ref())
        .ok_or_else(|| ReadError::shape(sh.path, Some(sh.line_of(item)), &where_, "a table"))?;
    let name = sh.string(t, "name")?.ok_or_else(|| {
        ReadError::new(
            sh.path,
            Some(sh.line_of(item)),
            ReadErrorKind::Shape,
            format!("`{where_}` has no `name`"),
        )
    })?;
    let (origin, member) = match sh.table(t, "source")? {
        None => (Origin::Registry, false),
        Some(source) => source_origin(sh, source, other_indexes)?,
    };
    let mut prod = refs(sh, t, "dependencies", &where_)?;
    let mut dev = Vec::new();
    for key in ["optional-dependencies", "dev-dependencies"] {
        if let Some(groups) = sh.table(t, key)? {
            for (group, v) in groups.iter() {
                if let TomlValue::Array(a) = v.get_ref() {
                    let list = array_refs(sh, a, &format!("{where_}.{key}.{}", group.get_ref()))?;
                    if key == "dev-dependencies" {
                        dev.extend(list);
                    } else {
                        prod.extend(list);
                    }
                }
            }
        }
    }
    Ok(Pkg {
        name: name.to_string(),
        version: sh.string(t, "version")?.map(str::to_string),
        origin,
        member,
        line: sh.key_line(t, "name"),
        prod,
        dev,
    })
}

/// The direct dependencies, by package.
struct Roots {
    prod: Vec<usize>,
    dev: Vec<usize>,
}

/// The graph of `dependencies` and the members' direct dependencies. References resolve by
/// name, and by version where the lock gives one (a package resolved at several versions for
/// different markers).
fn graph(pkgs: &[Pkg]) -> (Vec<Vec<usize>>, Roots) {
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
    let mut roots = Roots {
        prod: Vec::new(),
        dev: Vec::new(),
    };
    for (i, p) in pkgs.iter().enumerate() {
        let targets: Vec<usize> = p.prod.iter().flat_map(&resolve).collect();
        if p.member {
            roots.prod.extend(targets.iter().copied());
            roots.dev.extend(p.dev.iter().flat_map(&resolve));
        }
        if let Some(e) = edges.get_mut(i) {
            e.extend(targets);
        }
    }
    (edges, roots)
}

/// The packages with a version as dependencies; `know` says whether anything told what is
/// direct (members or a pyproject.toml).
fn dependencies(
    ctx: &mut Ctx<'_>,
    pkgs: Vec<Pkg>,
    edges: &[Vec<usize>],
    roots: &Roots,
    know: bool,
) -> Vec<Dependency> {
    let dev = dev_only(edges, &roots.prod, &roots.dev);
    let reached = reach(edges, roots.prod.iter().chain(roots.dev.iter()).copied());
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
        let kind = if p.member || roots.prod.contains(&i) || roots.dev.contains(&i) {
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
    deps.into_vec()
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

// The tests' view of a uv.lock: what a preparation installs for them.
//
// uv.lock: the packages a project's tests need, pinned, for whichever Python runs them.
//
// A uv.lock holds every package of every dependency group (docs, lint, typing, ...) and of
// every resolution fork (`sphinx 8.1.3` for Python < 3.11 beside `sphinx 9.1.0` for 3.12+).
// Taken all together they do not install together. So only what is reachable from the
// project's own packages (the `editable`/`virtual` sources) through their dependencies,
// their test extras and their test or dev groups is taken, each pinned, and each carrying
// the environment markers that say when it applies: the fork's `resolution-markers`, and
// the markers of the edges that lead to it. pip evaluates them for the image's Python, so
// one file serves every Python. No crate reads uv's lock format (uv's own crates are not
// published as libraries), so it is read here with `toml`.
//
// The markers kept are a superset of when a package is needed (an edge's marker is taken
// without its parent's): a package may be installed where it is not needed, never left out
// where it is.

/// One `[[package]]` of the lock.
struct LockedPackage<'a> {
    name: &'a str,
    version: Option<&'a str>,
    table: &'a toml::Table,
}

/// An edge: `{ name = "x", version = "1", marker = "...", extra = ["y"] }`.
struct LockedEdge<'a> {
    name: String,
    version: Option<&'a str>,
    marker: Option<&'a str>,
    extras: Vec<&'a str>,
}

fn edges(list: Option<&toml::Value>) -> Vec<LockedEdge<'_>> {
    list.and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let t = e.as_table()?;
            Some(LockedEdge {
                name: normalise_name(t.get("name")?.as_str()?),
                version: t.get("version").and_then(|v| v.as_str()),
                marker: t.get("marker").and_then(|v| v.as_str()),
                extras: t
                    .get("extra")
                    .and_then(|v| v.as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str())
                    .collect(),
            })
        })
        .collect()
}

/// The edges of a package: its dependencies, and those of the extras asked for; for the
/// project's own packages also its test extras and its test and dev groups.
fn out_edges<'a>(
    package: &LockedPackage<'a>,
    extras: &BTreeSet<&str>,
    root: Option<&Wanted>,
) -> Vec<LockedEdge<'a>> {
    let mut out = edges(package.table.get("dependencies"));
    if let Some(optional) = package
        .table
        .get("optional-dependencies")
        .and_then(|o| o.as_table())
    {
        for (extra, list) in optional {
            if extras.contains(extra.as_str()) || root.is_some_and(|w| w.extra(extra)) {
                out.extend(edges(Some(list)));
            }
        }
    }
    if let Some(wanted) = root
        && let Some(groups) = package
            .table
            .get("dev-dependencies")
            .and_then(|g| g.as_table())
    {
        for (group, list) in groups {
            if wanted.group(group) {
                out.extend(edges(Some(list)));
            }
        }
    }
    out
}

/// `a or b` of markers, each parenthesised; None when any is unconditional.
fn any_of(markers: &[Option<String>]) -> Option<String> {
    if markers.is_empty() || markers.iter().any(Option::is_none) {
        return None;
    }
    let mut each: Vec<&str> = markers.iter().flatten().map(String::as_str).collect();
    each.sort_unstable();
    each.dedup();
    Some(if each.len() == 1 {
        each[0].to_string()
    } else {
        each.iter()
            .map(|m| format!("({m})"))
            .collect::<Vec<_>>()
            .join(" or ")
    })
}

/// ` ; MARKERS` saying when a package applies: its fork's `resolution-markers` and the
/// markers of the edges that reached it (`via`); empty when it always does.
fn marker_of(package: &LockedPackage<'_>, via: &[Option<String>]) -> String {
    let fork: Vec<Option<String>> = package
        .table
        .get("resolution-markers")
        .and_then(|m| m.as_array())
        .into_iter()
        .flatten()
        .filter_map(|m| m.as_str().map(|m| Some(m.to_string())))
        .collect();
    let mut markers: Vec<String> = [any_of(&fork), any_of(via)].into_iter().flatten().collect();
    markers.dedup();
    match markers.as_slice() {
        [] => String::new(),
        [one] => format!(" ; {one}"),
        [a, b] => format!(" ; ({a}) and ({b})"),
        _ => unreachable!("two marker sets at most"),
    }
}

/// What a project's tests need from a uv.lock, pinned: the project's dependencies, and those
/// of the extras and groups `wanted` names; None when it does not parse as TOML (nothing is
/// taken then).
pub fn test_pins(text: &str, wanted: &Wanted) -> Option<Pins> {
    let mut pins = Pins::default();
    let Ok(doc) = text.parse::<toml::Table>() else {
        return None;
    };
    let packages: Vec<LockedPackage> = doc
        .get("package")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let table = p.as_table()?;
            Some(LockedPackage {
                name: table.get("name")?.as_str()?,
                version: table.get("version").and_then(|v| v.as_str()),
                table,
            })
        })
        .collect();
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in packages.iter().enumerate() {
        by_name.entry(normalise_name(p.name)).or_default().push(i);
    }
    fn source<'a>(p: &LockedPackage<'a>) -> Option<&'a toml::Table> {
        p.table.get("source").and_then(|s| s.as_table())
    }
    let is_root = |p: &LockedPackage| {
        source(p).is_some_and(|s| s.contains_key("editable") || s.contains_key("virtual"))
    };
    // Walk from the roots: for each package reached, the markers of the edges that reach it
    // (None: unconditionally) and the extras asked of it.
    let mut reached: BTreeMap<usize, Vec<Option<String>>> = BTreeMap::new();
    let mut extras_of: BTreeMap<usize, BTreeSet<&str>> = BTreeMap::new();
    let mut queue: Vec<(usize, Vec<&str>)> = Vec::new();
    for (i, p) in packages.iter().enumerate() {
        if is_root(p) {
            pins.project = true;
            queue.push((i, Vec::new()));
        }
    }
    let mut expanded: BTreeSet<(usize, BTreeSet<&str>)> = BTreeSet::new();
    while let Some((i, new_extras)) = queue.pop() {
        let extras = extras_of.entry(i).or_default();
        extras.extend(new_extras);
        let extras = extras.clone();
        if !expanded.insert((i, extras.clone())) {
            continue;
        }
        let package = &packages[i];
        for edge in out_edges(package, &extras, is_root(package).then_some(wanted)) {
            let Some(targets) = by_name.get(&edge.name) else {
                continue;
            };
            for &t in targets {
                if edge.version.is_some() && packages[t].version != edge.version {
                    continue;
                }
                if is_root(&packages[t]) {
                    continue;
                }
                reached
                    .entry(t)
                    .or_default()
                    .push(edge.marker.map(str::to_string));
                queue.push((t, edge.extras.clone()));
            }
        }
    }
    for (i, via) in reached {
        let package = &packages[i];
        let Some(version) = package.version else {
            continue;
        };
        if let Some(s) = source(package)
            && (s.contains_key("git")
                || s.contains_key("path")
                || s.contains_key("directory")
                || s.contains_key("url"))
        {
            pins.elsewhere.push(Elsewhere {
                what: package.name.to_string(),
                source: "uv.lock".into(),
                reason: "a git, path or URL package fetches from elsewhere".into(),
            });
            continue;
        }
        let marker = marker_of(package, &via);
        pins.pinned.push(Pin {
            spec: format!("{}=={version}{marker}", package.name),
            source: "uv.lock".into(),
        });
    }
    Some(pins)
}

#[cfg(test)]
mod test_pins_tests;

#[cfg(test)]
mod tests;
