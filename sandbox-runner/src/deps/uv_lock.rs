//! uv.lock: the packages a project's tests need, pinned, for whichever Python runs them.
//!
//! A uv.lock holds every package of every dependency group (docs, lint, typing, ...) and of
//! every resolution fork (`sphinx 8.1.3` for Python < 3.11 beside `sphinx 9.1.0` for 3.12+).
//! Taken all together they do not install together. So only what is reachable from the
//! project's own packages (the `editable`/`virtual` sources) through their dependencies,
//! their test extras and their test or dev groups is taken, each pinned, and each carrying
//! the environment markers that say when it applies: the fork's `resolution-markers`, and
//! the markers of the edges that lead to it. pip evaluates them for the image's Python, so
//! one file serves every Python. No crate reads uv's lock format (uv's own crates are not
//! published as libraries), so it is read here with `toml`.
//!
//! The markers kept are a superset of when a package is needed (an edge's marker is taken
//! without its parent's): a package may be installed where it is not needed, never left out
//! where it is.

use std::collections::{BTreeMap, BTreeSet};

use super::python::{PythonPlan, Refused, is_test_name, push};

/// One `[[package]]` of the lock.
struct Package<'a> {
    name: &'a str,
    version: Option<&'a str>,
    table: &'a toml::Table,
}

/// An edge: `{ name = "x", version = "1", marker = "...", extra = ["y"] }`.
struct Edge<'a> {
    name: String,
    version: Option<&'a str>,
    marker: Option<&'a str>,
    extras: Vec<&'a str>,
}

fn normalise(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

fn edges(list: Option<&toml::Value>) -> Vec<Edge<'_>> {
    list.and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let t = e.as_table()?;
            Some(Edge {
                name: normalise(t.get("name")?.as_str()?),
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
fn out_edges<'a>(package: &Package<'a>, extras: &BTreeSet<&str>, root: bool) -> Vec<Edge<'a>> {
    let mut out = edges(package.table.get("dependencies"));
    if let Some(optional) = package
        .table
        .get("optional-dependencies")
        .and_then(|o| o.as_table())
    {
        for (extra, list) in optional {
            if extras.contains(extra.as_str()) || (root && is_test_name(extra)) {
                out.extend(edges(Some(list)));
            }
        }
    }
    if root
        && let Some(groups) = package
            .table
            .get("dev-dependencies")
            .and_then(|g| g.as_table())
    {
        for (group, list) in groups {
            if is_test_name(group) {
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

/// Reads a uv.lock into the plan; false when it does not parse (nothing is taken then).
pub(crate) fn read(text: &str, plan: &mut PythonPlan, specs: &mut BTreeSet<String>) -> bool {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return false;
    };
    let packages: Vec<Package> = doc
        .get("package")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let table = p.as_table()?;
            Some(Package {
                name: table.get("name")?.as_str()?,
                version: table.get("version").and_then(|v| v.as_str()),
                table,
            })
        })
        .collect();
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in packages.iter().enumerate() {
        by_name.entry(normalise(p.name)).or_default().push(i);
    }
    fn source<'a>(p: &Package<'a>) -> Option<&'a toml::Table> {
        p.table.get("source").and_then(|s| s.as_table())
    }
    let is_root = |p: &Package| {
        source(p).is_some_and(|s| s.contains_key("editable") || s.contains_key("virtual"))
    };
    // Walk from the roots: for each package reached, the markers of the edges that reach it
    // (None: unconditionally) and the extras asked of it.
    let mut reached: BTreeMap<usize, Vec<Option<String>>> = BTreeMap::new();
    let mut extras_of: BTreeMap<usize, BTreeSet<&str>> = BTreeMap::new();
    let mut queue: Vec<(usize, Vec<&str>)> = Vec::new();
    for (i, p) in packages.iter().enumerate() {
        if is_root(p) {
            plan.project = true;
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
        for edge in out_edges(package, &extras, is_root(package)) {
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
            plan.refused.push(Refused {
                what: package.name.to_string(),
                source: "uv.lock".into(),
                reason: "a git, path or URL package fetches from elsewhere".into(),
            });
            continue;
        }
        let fork: Vec<Option<String>> = package
            .table
            .get("resolution-markers")
            .and_then(|m| m.as_array())
            .into_iter()
            .flatten()
            .filter_map(|m| m.as_str().map(|m| Some(m.to_string())))
            .collect();
        let mut markers: Vec<String> = [any_of(&fork), any_of(&via)]
            .into_iter()
            .flatten()
            .collect();
        markers.dedup();
        let marker = match markers.as_slice() {
            [] => String::new(),
            [one] => format!(" ; {one}"),
            [a, b] => format!(" ; ({a}) and ({b})"),
            _ => unreachable!("two marker sets at most"),
        };
        push(
            plan,
            specs,
            &format!("{}=={version}{marker}", package.name),
            "uv.lock".into(),
        );
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(text: &str) -> Vec<String> {
        let mut plan = PythonPlan::default();
        assert!(read(text, &mut plan, &mut BTreeSet::new()));
        assert!(plan.project);
        plan.requirements.into_iter().map(|r| r.spec).collect()
    }

    /// The shape of python-attrs/attrs' uv.lock: a docs group with one pin per Python, a
    /// lint group, a test group reaching pytest and pytest-xdist[psutil].
    const ATTRS_LIKE: &str = r#"
version = 1
requires-python = ">=3.10"

[[package]]
name = "attrs"
source = { editable = "." }

[package.dev-dependencies]
docs = [
    { name = "sphinx", version = "8.1.3", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version < '3.11'" },
    { name = "sphinx", version = "9.1.0", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version >= '3.12'" },
]
lint = [{ name = "ruff" }]
tests = [
    { name = "cloudpickle", marker = "platform_python_implementation == 'CPython'" },
    { name = "pytest" },
    { name = "pytest-xdist", extra = ["psutil"] },
]

[[package]]
name = "cloudpickle"
version = "3.1.2"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "exceptiongroup"
version = "1.3.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "pytest"
version = "9.0.1"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "exceptiongroup", marker = "python_full_version < '3.11'" },
    { name = "pluggy" },
    { name = "tomli", version = "2.0.1", marker = "python_full_version < '3.11'" },
]

[[package]]
name = "pluggy"
version = "1.6.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "tomli"
version = "2.0.1"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version < '3.11'"]

[[package]]
name = "tomli"
version = "2.3.0"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version >= '3.11'"]

[[package]]
name = "pytest-xdist"
version = "3.8.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [{ name = "execnet" }]

[package.optional-dependencies]
psutil = [{ name = "psutil" }]
setproctitle = [{ name = "setproctitle" }]

[[package]]
name = "execnet"
version = "2.1.1"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "psutil"
version = "7.0.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "setproctitle"
version = "1.3.6"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "ruff"
version = "0.16.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "sphinx"
version = "8.1.3"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version < '3.11'"]

[[package]]
name = "sphinx"
version = "9.1.0"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version >= '3.12'"]
"#;

    #[test]
    fn only_what_the_tests_reach_is_taken_with_the_markers_that_say_when() {
        let got = specs(ATTRS_LIKE);
        assert_eq!(
            got,
            [
                "cloudpickle==3.1.2 ; platform_python_implementation == 'CPython'",
                "exceptiongroup==1.3.0 ; python_full_version < '3.11'",
                "pytest==9.0.1",
                "pluggy==1.6.0",
                // the edge names one version of the fork: only that one is reached.
                "tomli==2.0.1 ; python_full_version < '3.11'",
                "pytest-xdist==3.8.0",
                "execnet==2.1.1",
                // the extra the test group asks of pytest-xdist; not its other extras.
                "psutil==7.0.0",
            ]
        );
        // docs and lint groups are not the tests': neither sphinx pin, nor ruff.
        assert!(
            !got.iter()
                .any(|s| s.starts_with("sphinx") || s.starts_with("ruff"))
        );
    }

    #[test]
    fn a_fork_reached_by_name_keeps_every_pin_each_for_its_python() {
        let got = specs(
            r#"
[[package]]
name = "mine"
source = { virtual = "." }
dependencies = [{ name = "tomli" }]

[[package]]
name = "tomli"
version = "2.0.1"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version < '3.11'", "python_full_version == '3.11.*'"]

[[package]]
name = "tomli"
version = "2.3.0"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version >= '3.12'"]
"#,
        );
        assert_eq!(
            got,
            [
                "tomli==2.0.1 ; (python_full_version < '3.11') or (python_full_version == '3.11.*')",
                "tomli==2.3.0 ; python_full_version >= '3.12'",
            ]
        );
    }

    #[test]
    fn a_package_from_elsewhere_is_refused_by_name() {
        let mut plan = PythonPlan::default();
        read(
            r#"
[[package]]
name = "mine"
source = { editable = "." }
dependencies = [{ name = "theirs" }]

[[package]]
name = "theirs"
version = "1.0"
source = { git = "https://example.com/theirs?rev=1#abc" }
"#,
            &mut plan,
            &mut BTreeSet::new(),
        );
        assert!(plan.requirements.is_empty());
        assert_eq!(plan.refused[0].what, "theirs");
    }
}
