//! pnpm-lock.yaml: lockfileVersion 5.x (`/name/1.2.3_peer@1` keys), 6.x
//! (`/name@1.2.3(peer@1)`) and 9.x (`packages` keyed `name@1.2.3`, with the graph in
//! `snapshots`).
//!
//! Peer suffixes name the same package version installed against other peers: they are
//! stripped and the copies merged. Direct dependencies come from `importers` (or, in single
//! project v5/v6 files, the top-level `dependencies`/`devDependencies`). v5/v6 mark
//! development-only packages with `dev: true`; v9 does not, so the graph from the importers'
//! dependencies and devDependencies decides.

use std::collections::HashMap;

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};
use serde_json::{Map, Value};

use crate::Ctx;
use crate::collect::{Deps, dev_only, reach};
use crate::error::ReadError;
use crate::text::{Shape, parse_yaml, to_u32, yaml_line_key};

type Id = (String, String);

pub(crate) fn read(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let path = ctx.path;
    let value = parse_yaml(path, text, ctx.limits)?;
    let sh = Shape { path };
    sh.root_object(&value)?;
    let major = lockfile_major(&sh, &value)?;
    let mut graph = Graph::default();
    let lines = section_key_lines(text, "packages:");
    graph.read_packages(&sh, sh.object(&value, "packages", None)?, &lines, major)?;
    graph.read_snapshots(&sh, sh.object(&value, "snapshots", None)?, major)?;
    let edges = graph.edges();
    let roots = graph.roots(&sh, &value, major)?;
    if !graph.skipped.is_empty() {
        ctx.note(format!(
            "entries whose name and version could not be told were skipped: {}",
            graph.skipped.join(", ")
        ));
    }
    Ok(graph.dependencies(&edges, &roots))
}

/// The lock file's major version; a file that does not say is v9 if it has `snapshots`.
fn lockfile_major(sh: &Shape<'_>, value: &Value) -> Result<u32, ReadError> {
    let version_text = sh
        .string(value, "lockfileVersion", None)?
        .unwrap_or_default();
    Ok(version_text
        .trim_matches(['\'', '"'])
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(if value.get("snapshots").is_some() {
            9
        } else {
            6
        }))
}

struct Node {
    origin: Origin,
    line: Option<u32>,
    dev_field: Option<bool>,
}

/// The packages as nodes, one per (name, version) in file order, and the references between
/// them as read (resolved to nodes by [`Graph::edges`]).
#[derive(Default)]
struct Graph {
    ids: Vec<Id>,
    index: HashMap<Id, usize>,
    nodes: Vec<Node>,
    raw_edges: Vec<(usize, Id)>,
    /// Package keys as written (without a leading `/`): a reference may be a whole key, e.g.
    /// a git dependency `github.com/x/y/0123abc` whose name and version are fields of the entry.
    by_key: HashMap<String, Id>,
    skipped: Vec<String>,
}

/// The importers' direct dependencies, by node.
struct Roots {
    prod: Vec<usize>,
    dev: Vec<usize>,
    /// Whether any project lists its dependencies at all.
    any_listed: bool,
}

impl Graph {
    fn read_packages(
        &mut self,
        sh: &Shape<'_>,
        packages: Option<&Map<String, Value>>,
        lines: &HashMap<String, u32>,
        major: u32,
    ) -> Result<(), ReadError> {
        for (key, entry) in packages.into_iter().flatten() {
            let line = lines.get(key.as_str()).copied();
            if !entry.is_object() {
                return Err(ReadError::shape(
                    sh.path,
                    line,
                    &format!("packages.{key}"),
                    "a mapping",
                ));
            }
            let origin = origin_of(key, entry);
            let parsed = parse_key(key, major);
            let name = sh
                .string(entry, "name", line)?
                .or_else(|| parsed.as_ref().map(|p| p.0.clone()));
            let version = sh
                .string(entry, "version", line)?
                .or_else(|| parsed.as_ref().map(|p| p.1.clone()))
                .or_else(|| match &origin {
                    Origin::Git { url } => url.rsplit(['/', '#']).next().map(str::to_string),
                    _ => None,
                });
            let (Some(name), Some(version)) = (name, version) else {
                self.skipped.push(key.clone());
                continue;
            };
            let n = self.node(key, (name, version), origin, line);
            if let (Some(node), Some(dev)) = (
                self.nodes.get_mut(n),
                entry.get("dev").and_then(Value::as_bool),
            ) {
                // A version installed as dev in one peer variant and not in another ships.
                node.dev_field = Some(node.dev_field.unwrap_or(true) && dev);
            }
            collect_edges(sh, entry, line, major, n, &mut self.raw_edges)?;
        }
        Ok(())
    }

    /// The node of `id`, added at its first package key.
    fn node(&mut self, key: &str, id: Id, origin: Origin, line: Option<u32>) -> usize {
        self.by_key
            .insert(key.trim_start_matches('/').to_string(), id.clone());
        *self.index.entry(id.clone()).or_insert_with(|| {
            self.ids.push(id);
            self.nodes.push(Node {
                origin,
                line,
                dev_field: None,
            });
            self.nodes.len() - 1
        })
    }

    /// v9: the graph lives in `snapshots`, keyed like packages but with peer suffixes.
    fn read_snapshots(
        &mut self,
        sh: &Shape<'_>,
        snapshots: Option<&Map<String, Value>>,
        major: u32,
    ) -> Result<(), ReadError> {
        for (key, entry) in snapshots.into_iter().flatten() {
            if !entry.is_object() {
                return Err(ReadError::shape(
                    sh.path,
                    None,
                    &format!("snapshots.{key}"),
                    "a mapping",
                ));
            }
            if let Some(id) = parse_key(key, major)
                && let Some(&n) = self.index.get(&id)
            {
                collect_edges(sh, entry, None, major, n, &mut self.raw_edges)?;
            }
        }
        Ok(())
    }

    fn find(&self, id: &Id) -> Option<usize> {
        // `id.1` holds the raw reference when `resolve_ref` could not parse it.
        self.index.get(id).copied().or_else(|| {
            self.by_key
                .get(id.1.as_str())
                .and_then(|k| self.index.get(k).copied())
        })
    }

    /// Each node's successors: the references that name a node.
    fn edges(&self) -> Vec<Vec<usize>> {
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); self.ids.len()];
        for (from, to) in &self.raw_edges {
            if let (Some(t), Some(list)) = (self.find(to), edges.get_mut(*from)) {
                list.push(t);
            }
        }
        edges
    }

    /// Importers (workspace projects) or, in older single-project files, the top level.
    fn roots(&self, sh: &Shape<'_>, value: &Value, major: u32) -> Result<Roots, ReadError> {
        let mut projects: Vec<&Value> = Vec::new();
        if let Some(importers) = sh.object(value, "importers", None)? {
            projects.extend(importers.values());
        } else {
            projects.push(value);
        }
        let mut roots = Roots {
            prod: Vec::new(),
            dev: Vec::new(),
            any_listed: false,
        };
        for project in projects {
            for (section, dev) in [
                ("dependencies", false),
                ("optionalDependencies", false),
                ("devDependencies", true),
            ] {
                let Some(list) = sh.object(project, section, None)? else {
                    continue;
                };
                roots.any_listed = true;
                for (name, spec) in list {
                    if let Some(n) = self.root(sh, name, spec, major)? {
                        if dev {
                            roots.dev.push(n)
                        } else {
                            roots.prod.push(n)
                        }
                    }
                }
            }
        }
        Ok(roots)
    }

    /// The node an importer's dependency `name: spec` installs.
    fn root(
        &self,
        sh: &Shape<'_>,
        name: &str,
        spec: &Value,
        major: u32,
    ) -> Result<Option<usize>, ReadError> {
        // v6/v9: `{specifier, version}`; v5: the version itself.
        let reference = match spec {
            Value::Object(_) => sh.string(spec, "version", None)?.unwrap_or_default(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let raw = reference.trim().trim_start_matches('/');
        Ok(self
            .by_key
            .get(raw)
            .and_then(|id| self.index.get(id).copied())
            .or_else(|| resolve_ref(name, &reference, major).and_then(|id| self.find(&id))))
    }

    /// The nodes as dependencies: kinds from the roots, development-only from the `dev`
    /// fields where the file has them (v5/v6), else from the graph.
    fn dependencies(self, edges: &[Vec<usize>], roots: &Roots) -> Vec<Dependency> {
        let graph_dev = dev_only(edges, &roots.prod, &roots.dev);
        let all_roots = || roots.prod.iter().chain(roots.dev.iter()).copied();
        let mut direct = vec![false; self.ids.len()];
        for r in all_roots() {
            if let Some(d) = direct.get_mut(r) {
                *d = true;
            }
        }
        let reached = reach(edges, all_roots());
        let has_dev_fields = self.nodes.iter().any(|n| n.dev_field.is_some());
        let mut deps = Deps::default();
        for (i, ((name, version), node)) in self.ids.into_iter().zip(self.nodes).enumerate() {
            let kind = if !roots.any_listed {
                DependencyKind::Unknown
            } else if direct.get(i).copied().unwrap_or(false) {
                DependencyKind::Direct
            } else if reached.get(i).copied().unwrap_or(false) {
                DependencyKind::Transitive
            } else {
                DependencyKind::Unknown
            };
            let dev = if has_dev_fields {
                node.dev_field.unwrap_or(false)
            } else {
                graph_dev.get(i).copied().unwrap_or(false)
            };
            deps.push(Dependency {
                ecosystem: Ecosystem::Npm,
                name,
                version,
                kind,
                origin: node.origin,
                dev,
                line: node.line,
            });
        }
        deps.into_vec()
    }
}

fn collect_edges(
    sh: &Shape<'_>,
    entry: &Value,
    line: Option<u32>,
    major: u32,
    from: usize,
    out: &mut Vec<(usize, Id)>,
) -> Result<(), ReadError> {
    for section in ["dependencies", "optionalDependencies"] {
        if let Some(list) = sh.object(entry, section, line)? {
            for (name, reference) in list {
                let reference = match reference {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                match resolve_ref(name, &reference, major) {
                    Some(id) => out.push((from, id)),
                    // Not a version: keep the raw reference, which may be a package key.
                    None => out.push((
                        from,
                        (
                            name.clone(),
                            reference.trim().trim_start_matches('/').to_string(),
                        ),
                    )),
                }
            }
        }
    }
    Ok(())
}

/// A package key to (name, version), peer suffix stripped.
fn parse_key(key: &str, major: u32) -> Option<Id> {
    let k = key.strip_prefix('/').unwrap_or(key);
    if major < 6 {
        // `name/1.2.3_peer@1+other@2` or `@scope/name/1.2.3`.
        let cut = if k.starts_with('@') {
            k.match_indices('/').nth(1).map(|(i, _)| i)?
        } else {
            k.find('/')?
        };
        let name = k.get(..cut)?;
        let version = k.get(cut + 1..)?.split('_').next()?;
        if name.is_empty() || version.is_empty() || version.contains('/') {
            return None;
        }
        Some((name.to_string(), version.to_string()))
    } else {
        let base = k.split('(').next()?;
        let at = base.get(1..)?.rfind('@')? + 1;
        let name = base.get(..at)?;
        let version = base.get(at + 1..)?;
        if name.is_empty() || version.is_empty() {
            return None;
        }
        Some((name.to_string(), version.to_string()))
    }
}

/// A dependency reference (`1.2.3(peer@1)`, `1.2.3_peer@1`, `/real/1.2.3`, `real@1.2.3`,
/// `link:../x`) to the (name, version) it installs. Local links are not packages.
fn resolve_ref(name: &str, reference: &str, major: u32) -> Option<Id> {
    let r = reference.trim();
    if r.starts_with("link:") || r.starts_with("file:") || r.is_empty() {
        return None;
    }
    let r = r.strip_prefix('/').unwrap_or(r);
    if major < 6 {
        if r.contains('/') {
            return parse_key(r, major);
        }
        return Some((name.to_string(), r.split('_').next()?.to_string()));
    }
    let base = r.split('(').next()?;
    if base.get(1..).is_some_and(|b| b.contains('@')) {
        return parse_key(base, major);
    }
    Some((name.to_string(), base.to_string()))
}

fn origin_of(key: &str, entry: &Value) -> Origin {
    let resolution = entry.get("resolution");
    let field = |k: &str| resolution.and_then(|r| r.get(k)).and_then(Value::as_str);
    match field("type") {
        Some("git") => {
            let repo = field("repo").unwrap_or(key);
            let url = match field("commit") {
                Some(c) => format!("{repo}#{c}"),
                None => repo.to_string(),
            };
            return Origin::Git { url };
        }
        Some("directory") => return Origin::Path,
        _ => {}
    }
    let tarball = field("tarball").unwrap_or("");
    if key.contains("file:") || key.contains("link:") || tarball.starts_with("file:") {
        return Origin::Path;
    }
    let remote_key = key.contains("://") || key.trim_start_matches('/').starts_with("github.com/");
    if remote_key || tarball.contains("codeload.github.com") {
        let url = if tarball.is_empty() { key } else { tarball };
        return Origin::Git {
            url: url.to_string(),
        };
    }
    Origin::Registry
}

/// Lines of the keys directly under a top-level section (two-space indent), unquoted.
fn section_key_lines(text: &str, header: &str) -> HashMap<String, u32> {
    let mut out = HashMap::new();
    let mut inside = false;
    for (i, line) in text.lines().enumerate() {
        if !line.starts_with([' ', '\t', '#']) && !line.trim().is_empty() {
            inside = line.trim_end() == header;
            continue;
        }
        if inside
            && let Some(rest) = line.strip_prefix("  ")
            && !rest.starts_with([' ', '#'])
            && let Some(key) = yaml_line_key(rest)
        {
            out.insert(key, to_u32(i + 1));
        }
    }
    out
}

#[cfg(test)]
mod tests;
