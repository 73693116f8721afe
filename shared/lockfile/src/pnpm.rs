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
    let lines = section_key_lines(text, "packages:");
    let version_text = sh
        .string(&value, "lockfileVersion", None)?
        .unwrap_or_default();
    let major: u32 = version_text
        .trim_matches(['\'', '"'])
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(if value.get("snapshots").is_some() {
            9
        } else {
            6
        });

    let packages = sh.object(&value, "packages", None)?;
    let snapshots = sh.object(&value, "snapshots", None)?;

    // Nodes: one per (name, version), in file order.
    let mut ids: Vec<Id> = Vec::new();
    let mut index: HashMap<Id, usize> = HashMap::new();
    struct Node {
        origin: Origin,
        line: Option<u32>,
        dev_field: Option<bool>,
    }
    let mut nodes: Vec<Node> = Vec::new();
    let mut raw_edges: Vec<(usize, Id)> = Vec::new();
    // Package keys as written (without a leading `/`): a reference may be a whole key, e.g. a
    // git dependency `github.com/x/y/0123abc` whose name and version are fields of the entry.
    let mut by_key: HashMap<String, Id> = HashMap::new();
    let mut skipped = Vec::new();
    let empty = Map::new();
    for (key, entry) in packages.unwrap_or(&empty) {
        let line = lines.get(key.as_str()).copied();
        if !entry.is_object() {
            return Err(ReadError::shape(
                path,
                line,
                &format!("packages.{key}"),
                "a mapping",
            ));
        }
        let own_name = sh.string(entry, "name", line)?;
        let own_version = sh.string(entry, "version", line)?;
        let origin = origin_of(key, entry);
        let parsed = parse_key(key, major);
        let name = own_name.or_else(|| parsed.as_ref().map(|p| p.0.clone()));
        let version = own_version
            .or_else(|| parsed.as_ref().map(|p| p.1.clone()))
            .or_else(|| match &origin {
                Origin::Git { url } => url.rsplit(['/', '#']).next().map(str::to_string),
                _ => None,
            });
        let (Some(name), Some(version)) = (name, version) else {
            skipped.push(key.clone());
            continue;
        };
        let id = (name, version);
        by_key.insert(key.trim_start_matches('/').to_string(), id.clone());
        let n = *index.entry(id.clone()).or_insert_with(|| {
            ids.push(id.clone());
            nodes.push(Node {
                origin: origin.clone(),
                line,
                dev_field: None,
            });
            nodes.len() - 1
        });
        if let (Some(node), Some(dev)) =
            (nodes.get_mut(n), entry.get("dev").and_then(Value::as_bool))
        {
            // A version installed as dev in one peer variant and not in another ships.
            node.dev_field = Some(node.dev_field.unwrap_or(true) && dev);
        }
        collect_edges(&sh, entry, line, major, n, &mut raw_edges)?;
    }
    // v9: the graph lives in `snapshots`, keyed like packages but with peer suffixes.
    for (key, entry) in snapshots.unwrap_or(&empty) {
        if !entry.is_object() {
            return Err(ReadError::shape(
                path,
                None,
                &format!("snapshots.{key}"),
                "a mapping",
            ));
        }
        if let Some(id) = parse_key(key, major)
            && let Some(&n) = index.get(&id)
        {
            collect_edges(&sh, entry, None, major, n, &mut raw_edges)?;
        }
    }
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
    let find = |id: &Id| -> Option<usize> {
        // `id.1` holds the raw reference when `resolve_ref` could not parse it.
        index.get(id).copied().or_else(|| {
            by_key
                .get(id.1.as_str())
                .and_then(|k| index.get(k).copied())
        })
    };
    for (from, to) in raw_edges {
        if let (Some(t), Some(list)) = (find(&to), edges.get_mut(from)) {
            list.push(t);
        }
    }

    // Importers (workspace projects) or, in older single-project files, the top level.
    let mut projects: Vec<&Value> = Vec::new();
    if let Some(importers) = sh.object(&value, "importers", None)? {
        projects.extend(importers.values());
    } else {
        projects.push(&value);
    }
    let mut prod_roots = Vec::new();
    let mut dev_roots = Vec::new();
    let mut any_listed = false;
    for project in projects {
        for (section, dev) in [
            ("dependencies", false),
            ("optionalDependencies", false),
            ("devDependencies", true),
        ] {
            let Some(list) = sh.object(project, section, None)? else {
                continue;
            };
            any_listed = true;
            for (name, spec) in list {
                // v6/v9: `{specifier, version}`; v5: the version itself.
                let reference = match spec {
                    Value::Object(_) => sh.string(spec, "version", None)?.unwrap_or_default(),
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let raw = reference.trim().trim_start_matches('/');
                let n = by_key
                    .get(raw)
                    .and_then(|id| index.get(id).copied())
                    .or_else(|| resolve_ref(name, &reference, major).and_then(|id| find(&id)));
                if let Some(n) = n {
                    if dev {
                        dev_roots.push(n)
                    } else {
                        prod_roots.push(n)
                    }
                }
            }
        }
    }
    let graph_dev = dev_only(&edges, &prod_roots, &dev_roots);
    let mut direct = vec![false; ids.len()];
    for &r in prod_roots.iter().chain(dev_roots.iter()) {
        if let Some(d) = direct.get_mut(r) {
            *d = true;
        }
    }
    let reached = reach(&edges, prod_roots.iter().chain(dev_roots.iter()).copied());
    let has_dev_fields = nodes.iter().any(|n| n.dev_field.is_some());

    let mut deps = Deps::default();
    for (i, ((name, version), node)) in ids.into_iter().zip(nodes).enumerate() {
        let kind = if !any_listed {
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
    if !skipped.is_empty() {
        ctx.note(format!(
            "entries whose name and version could not be told were skipped: {}",
            skipped.join(", ")
        ));
    }
    Ok(deps.into_vec())
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
mod tests {
    use super::*;
    use crate::{Limits, MemTree, ReadErrorKind, read};

    fn get<'a>(deps: &'a [Dependency], name: &str, version: &str) -> &'a Dependency {
        deps.iter()
            .find(|d| d.name == name && d.version == version)
            .unwrap_or_else(|| panic!("{name} {version} not found in {deps:#?}"))
    }

    #[test]
    fn keys_per_version() {
        assert_eq!(
            parse_key("/@babel/core/7.1.0_react@17.0.0", 5),
            Some(("@babel/core".into(), "7.1.0".into()))
        );
        assert_eq!(
            parse_key("/lodash/4.17.21", 5),
            Some(("lodash".into(), "4.17.21".into()))
        );
        assert_eq!(
            parse_key("/@a/b@1.0.0(react@18.0.0)(x@1.0.0)", 6),
            Some(("@a/b".into(), "1.0.0".into()))
        );
        assert_eq!(
            parse_key("lodash@4.17.21", 9),
            Some(("lodash".into(), "4.17.21".into()))
        );
        assert_eq!(
            resolve_ref("str", "/string-width/4.2.3", 5),
            Some(("string-width".into(), "4.2.3".into()))
        );
        assert_eq!(
            resolve_ref("str", "string-width@4.2.3", 9),
            Some(("string-width".into(), "4.2.3".into()))
        );
        assert_eq!(
            resolve_ref("a", "1.0.0(react@18.0.0)", 9),
            Some(("a".into(), "1.0.0".into()))
        );
        assert_eq!(resolve_ref("a", "link:../a", 9), None);
    }

    const V5: &str = r#"lockfileVersion: 5.4

specifiers:
  lodash: ^4.17.0
  jest: ^29.0.0

dependencies:
  lodash: 4.17.21
  repo: github.com/x/repo/0123abc

devDependencies:
  jest: 29.7.0_@types+node@20.0.0

packages:

  /lodash/4.17.21:
    resolution: {integrity: sha512-abc}
    dev: false

  /jest/29.7.0_@types+node@20.0.0:
    resolution: {integrity: sha512-def}
    dependencies:
      '@jest/core': 29.7.0
    dev: true

  /@jest/core/29.7.0:
    resolution: {integrity: sha512-ghi}
    dev: true

  github.com/x/repo/0123abc:
    resolution: {tarball: https://codeload.github.com/x/repo/tar.gz/0123abc}
    name: repo
    version: 1.0.0
    dev: false
"#;

    #[test]
    fn v5_keys_dev_and_lines() {
        let tree = MemTree::with("pnpm-lock.yaml", V5);
        let file = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 4);
        let l = get(d, "lodash", "4.17.21");
        assert_eq!(
            (l.kind, l.dev, l.line),
            (DependencyKind::Direct, false, Some(16))
        );
        let j = get(d, "jest", "29.7.0");
        assert_eq!((j.kind, j.dev), (DependencyKind::Direct, true));
        let c = get(d, "@jest/core", "29.7.0");
        assert_eq!((c.kind, c.dev), (DependencyKind::Transitive, true));
        let repo = get(d, "repo", "1.0.0");
        assert!(matches!(repo.origin, Origin::Git { .. }));
        assert_eq!(repo.kind, DependencyKind::Direct);
    }

    const V6: &str = r#"lockfileVersion: '6.0'

importers:
  .:
    dependencies:
      react-dom:
        specifier: ^18.0.0
        version: 18.2.0(react@18.2.0)
      react:
        specifier: ^18.0.0
        version: 18.2.0

packages:

  /react-dom@18.2.0(react@18.2.0):
    resolution: {integrity: sha512-a}
    peerDependencies:
      react: ^18.2.0
    dependencies:
      loose-envify: 1.4.0
      react: 18.2.0
    dev: false

  /react@18.2.0:
    resolution: {integrity: sha512-b}
    dependencies:
      loose-envify: 1.4.0
    dev: false

  /loose-envify@1.4.0:
    resolution: {integrity: sha512-c}
    dev: false
"#;

    #[test]
    fn v6_peers_and_importers() {
        let tree = MemTree::with("pnpm-lock.yaml", V6);
        let file = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 3);
        assert_eq!(get(d, "react-dom", "18.2.0").kind, DependencyKind::Direct);
        assert_eq!(get(d, "react-dom", "18.2.0").line, Some(15));
        assert_eq!(
            get(d, "loose-envify", "1.4.0").kind,
            DependencyKind::Transitive
        );
    }

    const V9: &str = r#"lockfileVersion: '9.0'

settings:
  autoInstallPeers: true

importers:

  .:
    dependencies:
      str:
        specifier: npm:string-width@^4
        version: string-width@4.2.3
    devDependencies:
      typescript:
        specifier: ^5.0.0
        version: 5.4.5
      vitest:
        specifier: ^1.0.0
        version: 1.6.0(@types/node@20.0.0)

  packages/a:
    dependencies:
      local:
        specifier: link:../local
        version: link:../local

packages:

  string-width@4.2.3:
    resolution: {integrity: sha512-a}
    engines: {node: '>=8'}

  typescript@5.4.5:
    resolution: {integrity: sha512-b}

  vitest@1.6.0:
    resolution: {integrity: sha512-c}

  tinypool@0.8.4:
    resolution: {integrity: sha512-d}

  '@types/node@20.0.0':
    resolution: {integrity: sha512-e}

snapshots:

  string-width@4.2.3: {}

  typescript@5.4.5: {}

  vitest@1.6.0(@types/node@20.0.0):
    dependencies:
      tinypool: 0.8.4
      '@types/node': 20.0.0

  tinypool@0.8.4: {}

  '@types/node@20.0.0': {}
"#;

    #[test]
    fn v9_snapshots_graph_dev_and_aliases() {
        let tree = MemTree::with("pnpm-lock.yaml", V9);
        let file = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 5);
        let s = get(d, "string-width", "4.2.3");
        assert_eq!(
            (s.kind, s.dev, s.line),
            (DependencyKind::Direct, false, Some(29))
        );
        let t = get(d, "tinypool", "0.8.4");
        assert_eq!((t.kind, t.dev), (DependencyKind::Transitive, true));
        assert_eq!(get(d, "@types/node", "20.0.0").line, Some(42));
    }

    #[test]
    fn yaml_bomb_is_refused_by_budget() {
        let mut bomb = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let mut prev = 'a';
        for c in 'b'..='j' {
            bomb.push_str(&format!("{c}: &{c} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
            prev = c;
        }
        let tree = MemTree::with("pnpm-lock.yaml", bomb);
        let err = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap_err();
        assert!(
            matches!(err.kind, ReadErrorKind::Budget | ReadErrorKind::TooDeep),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("pnpm-lock.yaml"), "{err}");
    }

    #[test]
    fn deep_yaml_is_refused() {
        let deep = format!("a: {}{}\n", "[".repeat(5000), "]".repeat(5000));
        let tree = MemTree::with("pnpm-lock.yaml", deep);
        let err = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap_err();
        assert!(
            matches!(
                err.kind,
                ReadErrorKind::TooDeep | ReadErrorKind::Budget | ReadErrorKind::Syntax
            ),
            "{err:?}"
        );
    }

    #[test]
    fn wrong_shape_names_the_key() {
        let tree = MemTree::with("pnpm-lock.yaml", "lockfileVersion: '9.0'\npackages: nope\n");
        let err = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::Shape);
        assert!(err.message.contains("`packages`"), "{err}");
    }
}
