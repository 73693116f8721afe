//! package-lock.json (v1, v2, v3), npm-shrinkwrap.json (the same format) and package.json.
//!
//! v2 and v3 key packages by install path (`node_modules/a/node_modules/b`); the name is the
//! last path segment unless the entry's `name` says otherwise (an alias installs `real` under
//! `node_modules/alias`). v1 nests `dependencies` objects instead. A package is direct when it
//! sits at the top of `node_modules` (of the root or of a workspace folder) and the owner's
//! package.json section lists it; v2/v3 carry the root's lists in `packages[""]`, v1 needs the
//! package.json beside the lock.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};
use serde_json::Value;

use crate::Ctx;
use crate::collect::Deps;
use crate::error::ReadError;
use crate::text::{JsonLines, Seg, Shape, json_bool, parse_json};

const SECTIONS: [&str; 4] = [
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
];

/// The dependency lists of a package.json (or of a `packages` entry, which has the same keys).
#[derive(Debug, Default, Clone)]
pub(crate) struct Manifest {
    /// name → requirement, from dependencies, optionalDependencies and peerDependencies.
    pub(crate) prod: BTreeMap<String, String>,
    /// name → requirement, from devDependencies.
    pub(crate) dev: BTreeMap<String, String>,
}

impl Manifest {
    pub(crate) fn from_value(sh: &Shape<'_>, v: &Value) -> Result<Manifest, ReadError> {
        let mut m = Manifest::default();
        for section in SECTIONS {
            if let Some(obj) = sh.object(v, section, None)? {
                for (name, req) in obj {
                    let req = req.as_str().unwrap_or("").to_string();
                    if section == "devDependencies" {
                        m.dev.insert(name.clone(), req);
                    } else {
                        m.prod.insert(name.clone(), req);
                    }
                }
            }
        }
        Ok(m)
    }

    pub(crate) fn lists(&self, name: &str) -> bool {
        self.prod.contains_key(name) || self.dev.contains_key(name)
    }

    /// Listed only under devDependencies.
    pub(crate) fn dev_only(&self, name: &str) -> bool {
        self.dev.contains_key(name) && !self.prod.contains_key(name)
    }
}

/// The package.json beside a lock file, when it is there and reads; a note otherwise.
pub(crate) fn sibling_manifest(ctx: &mut Ctx<'_>) -> Option<Manifest> {
    let (path, text) = ctx.sibling("package.json")?;
    let parsed = parse_json(&path, &text, ctx.limits)
        .and_then(|v| Manifest::from_value(&Shape { path: &path }, &v));
    match parsed {
        Ok(m) => Some(m),
        Err(e) => {
            ctx.note(format!("{e} (so direct and dev marks are not applied)"));
            None
        }
    }
}

/// Where a package comes from, from its `version` and `resolved` fields.
pub(crate) fn origin(version: Option<&str>, resolved: Option<&str>) -> Origin {
    let r = resolved.unwrap_or("");
    let v = version.unwrap_or("");
    let is_git = |s: &str| {
        s.starts_with("git+")
            || s.starts_with("git:")
            || s.starts_with("github:")
            || s.starts_with("gitlab:")
            || s.starts_with("bitbucket:")
            || s.contains("codeload.github.com/")
    };
    if is_git(r) || is_git(v) {
        let url = if is_git(r) { r } else { v };
        return Origin::Git {
            url: url.to_string(),
        };
    }
    if r.starts_with("file:") || v.starts_with("file:") || r.starts_with("link:") {
        return Origin::Path;
    }
    // A version (or yarn range) that is a URL names a tarball, not a registry release.
    if v.starts_with("https://") || v.starts_with("http://") {
        return Origin::Git { url: v.to_string() };
    }
    Origin::Registry
}

/// The version to report for a git package: its `version` if it is one, else the commit after
/// `#` in the URL.
fn git_version(version: Option<&str>, url: &str) -> Option<String> {
    match version {
        Some(v) if !v.contains(':') && !v.is_empty() => Some(v.to_string()),
        _ => url
            .rsplit_once('#')
            .map(|(_, commit)| commit.to_string())
            .filter(|c| !c.is_empty()),
    }
}

pub(crate) fn read_lock(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let value = parse_json(ctx.path, text, ctx.limits)?;
    let path = ctx.path;
    let sh = Shape { path };
    sh.root_object(&value)?;
    let lines = JsonLines::scan(text, |p| {
        let packages = p.len() == 2 && p.first() == Some(&Seg::Key("packages".into()));
        let v1 = p.len() >= 2
            && p.len() % 2 == 0
            && p.iter()
                .step_by(2)
                .all(|s| *s == Seg::Key("dependencies".into()));
        packages || v1
    });
    let top_line = |key: &str| lines.get(&[Seg::Key(key.to_string())]);
    if let Some(packages) = sh.object(&value, "packages", top_line("packages"))? {
        return read_packages(ctx, packages, &lines);
    }
    if let Some(deps) = sh.object(&value, "dependencies", top_line("dependencies"))? {
        return read_v1(ctx, deps, &lines);
    }
    ctx.note("no `packages` or `dependencies`: the lock file lists no packages");
    Ok(Vec::new())
}

fn read_packages(
    ctx: &mut Ctx<'_>,
    packages: &serde_json::Map<String, Value>,
    lines: &JsonLines,
) -> Result<Vec<Dependency>, ReadError> {
    let path = ctx.path;
    let sh = Shape { path };
    let line_of = |key: &str| lines.get(&[Seg::Key("packages".into()), Seg::Key(key.into())]);
    // The root's and each workspace folder's dependency lists, by folder ("" for the root).
    let mut owners: HashMap<String, Manifest> = HashMap::new();
    for (key, entry) in packages {
        if !key.contains("node_modules/") && entry.is_object() && !json_bool(entry, "link") {
            owners.insert(key.clone(), Manifest::from_value(&sh, entry)?);
        }
    }
    let has_root = owners.contains_key("");
    let mut skipped_no_version = Vec::new();
    let mut deps = Deps::default();
    for (key, entry) in packages {
        if key.is_empty() {
            continue;
        }
        let where_ = format!("packages.\"{key}\"");
        if !entry.is_object() {
            return Err(ReadError::shape(path, line_of(key), &where_, "an object"));
        }
        // A link points at a workspace folder, which has its own entry.
        if json_bool(entry, "link") {
            continue;
        }
        let line = line_of(key);
        let version = sh.string(entry, "version", line)?;
        let resolved = sh.string(entry, "resolved", line)?;
        let own_name = sh.string(entry, "name", line)?;
        let Some(idx) = key.rfind("node_modules/") else {
            // A workspace folder: the project's own package.
            let name = own_name.unwrap_or_else(|| crate::tree::file_name(key).to_string());
            if let Some(version) = version {
                deps.push(Dependency {
                    ecosystem: Ecosystem::Npm,
                    name,
                    version,
                    kind: DependencyKind::Direct,
                    origin: Origin::Path,
                    dev: false,
                    line,
                });
            }
            continue;
        };
        let prefix = key.get(..idx).unwrap_or("");
        let installed_as = key.get(idx + "node_modules/".len()..).unwrap_or("");
        let name = own_name.unwrap_or_else(|| installed_as.to_string());
        let origin = origin(version.as_deref(), resolved.as_deref());
        let version = match &origin {
            Origin::Git { url } => git_version(version.as_deref(), url),
            _ => version,
        };
        let Some(version) = version else {
            skipped_no_version.push(name);
            continue;
        };
        // Top of node_modules of the root ("") or of a workspace folder ("packages/a/").
        let owner = prefix.strip_suffix('/').unwrap_or(prefix);
        let kind = match owners.get(owner) {
            Some(m) if m.lists(installed_as) => DependencyKind::Direct,
            // A hoisted package may be a workspace's direct dependency.
            _ if owner.is_empty() && owners.values().any(|m| m.lists(installed_as)) => {
                DependencyKind::Direct
            }
            _ if has_root => DependencyKind::Transitive,
            _ => DependencyKind::Unknown,
        };
        deps.push(Dependency {
            ecosystem: Ecosystem::Npm,
            name,
            version,
            kind,
            origin,
            // `devOptional` packages are optional in production: they may ship, so they count.
            dev: json_bool(entry, "dev"),
            line,
        });
    }
    if !skipped_no_version.is_empty() {
        ctx.note(format!(
            "entries without a version were skipped: {}",
            skipped_no_version.join(", ")
        ));
    }
    Ok(deps.into_vec())
}

fn read_v1(
    ctx: &mut Ctx<'_>,
    top: &serde_json::Map<String, Value>,
    lines: &JsonLines,
) -> Result<Vec<Dependency>, ReadError> {
    let path = ctx.path;
    let sh = Shape { path };
    let manifest = sibling_manifest(ctx);
    let mut deps = Deps::default();
    // Iterative walk over nested `dependencies`; each frame holds its JSON path.
    let mut stack: Vec<(&serde_json::Map<String, Value>, Vec<Seg>)> =
        vec![(top, vec![Seg::Key("dependencies".into())])];
    let mut skipped = BTreeSet::new();
    while let Some((obj, at)) = stack.pop() {
        let level0 = at.len() == 1;
        for (key, entry) in obj {
            let mut here = at.clone();
            here.push(Seg::Key(key.clone()));
            let line = lines.get(&here);
            let where_ = render_path(&here);
            if !entry.is_object() {
                return Err(ReadError::shape(path, line, &where_, "an object"));
            }
            let version = sh.string(entry, "version", line)?;
            let resolved = sh.string(entry, "resolved", line)?;
            let mut name = key.clone();
            let mut version = version;
            // An alias: `"alias": { "version": "npm:real@1.2.3" }`.
            if let Some(spec) = version.as_deref().and_then(|v| v.strip_prefix("npm:"))
                && let Some(at_sign) = spec.get(1..).and_then(|s| s.rfind('@')).map(|i| i + 1)
            {
                name = spec.get(..at_sign).unwrap_or("").to_string();
                version = spec.get(at_sign + 1..).map(str::to_string);
            }
            let origin = origin(version.as_deref(), resolved.as_deref());
            let version = match &origin {
                Origin::Git { url } => git_version(None, url),
                _ => version,
            };
            match version {
                Some(version) => {
                    let kind = match (&manifest, level0) {
                        (_, false) => DependencyKind::Transitive,
                        (Some(m), true) if m.lists(key) => DependencyKind::Direct,
                        (Some(_), true) => DependencyKind::Transitive,
                        (None, true) => DependencyKind::Unknown,
                    };
                    deps.push(Dependency {
                        ecosystem: Ecosystem::Npm,
                        name,
                        version,
                        kind,
                        origin,
                        dev: json_bool(entry, "dev"),
                        line,
                    });
                }
                None => {
                    skipped.insert(name);
                }
            }
            if let Some(nested) = sh.object(entry, "dependencies", line)? {
                let mut next = here;
                next.push(Seg::Key("dependencies".into()));
                stack.push((nested, next));
            }
        }
    }
    if !skipped.is_empty() {
        let names: Vec<String> = skipped.into_iter().collect();
        ctx.note(format!(
            "entries without a version were skipped: {}",
            names.join(", ")
        ));
    }
    Ok(deps.into_vec())
}

fn render_path(path: &[Seg]) -> String {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => k.clone(),
            Seg::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// package.json alone: requirements are ranges, except an exact `1.2.3` (or `npm:x@1.2.3`).
pub(crate) fn read_manifest(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let value = parse_json(ctx.path, text, ctx.limits)?;
    let sh = Shape { path: ctx.path };
    sh.root_object(&value)?;
    let manifest = Manifest::from_value(&sh, &value)?;
    let lines = JsonLines::scan(text, |p| {
        p.len() == 2 && matches!(p.first(), Some(Seg::Key(k)) if SECTIONS.contains(&k.as_str()))
    });
    let mut deps = Deps::default();
    let mut ranges = 0usize;
    for section in SECTIONS {
        let Some(obj) = value.get(section).and_then(Value::as_object) else {
            continue;
        };
        for (key, req) in obj {
            let req = req.as_str().unwrap_or("").trim();
            let (name, exact) = match req.strip_prefix("npm:") {
                Some(spec) => match spec.get(1..).and_then(|s| s.rfind('@')).map(|i| i + 1) {
                    Some(i) => (
                        spec.get(..i).unwrap_or(key).to_string(),
                        spec.get(i + 1..).unwrap_or(""),
                    ),
                    None => (key.clone(), ""),
                },
                None => (key.clone(), req),
            };
            let exact = exact.strip_prefix('=').unwrap_or(exact).trim();
            let exact = exact.strip_prefix('v').unwrap_or(exact);
            if is_exact_npm_version(exact) {
                deps.push(Dependency {
                    ecosystem: Ecosystem::Npm,
                    name,
                    version: exact.to_string(),
                    kind: DependencyKind::Direct,
                    origin: Origin::Registry,
                    dev: manifest.dev_only(key),
                    line: lines.get(&[Seg::Key(section.into()), Seg::Key(key.clone())]),
                });
            } else {
                ranges += 1;
            }
        }
    }
    if ranges > 0 {
        ctx.note(format!(
            "{ranges} dependencies are ranges (or tags, URLs, paths), not exact versions: only a \
             lock file gives their versions"
        ));
    }
    Ok(deps.into_vec())
}

/// `1.2.3`, `1.2.3-beta.1`, `1.2.3+build`: an exact semver version.
pub(crate) fn is_exact_npm_version(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let rest_ok = v
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+'));
    let parts: Vec<&str> = core.split('.').collect();
    rest_ok
        && parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
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

    const V3: &str = r#"{
  "name": "app",
  "lockfileVersion": 3,
  "packages": {
    "": {
      "name": "app",
      "dependencies": { "express": "^4.0.0", "str": "npm:string-width@^4" },
      "devDependencies": { "jest": "^29.0.0" },
      "workspaces": ["packages/*"]
    },
    "node_modules/express": {
      "version": "4.18.2",
      "resolved": "https://registry.npmjs.org/express/-/express-4.18.2.tgz"
    },
    "node_modules/jest": { "version": "29.7.0", "dev": true },
    "node_modules/str": { "name": "string-width", "version": "4.2.3" },
    "node_modules/express/node_modules/debug": { "version": "2.6.9" },
    "node_modules/debug": { "version": "4.3.4", "devOptional": true },
    "node_modules/ws-a": { "resolved": "packages/a", "link": true },
    "packages/a": { "name": "ws-a", "version": "0.0.1", "dependencies": { "left-pad": "1.3.0" } },
    "packages/a/node_modules/left-pad": { "version": "1.3.0" },
    "node_modules/gitdep": {
      "resolved": "git+ssh://git@github.com/x/gitdep.git#89a5bfbb"
    }
  }
}"#;

    #[test]
    fn v3_names_kinds_dev_aliases_workspaces_lines() {
        let tree = MemTree::with("package-lock.json", V3);
        let file = read(&tree, "package-lock.json", &Limits::default()).unwrap();
        let d = &file.dependencies;
        let express = get(d, "express", "4.18.2");
        assert_eq!(
            (express.kind, express.dev, express.line),
            (DependencyKind::Direct, false, Some(11))
        );
        let jest = get(d, "jest", "29.7.0");
        assert_eq!((jest.kind, jest.dev), (DependencyKind::Direct, true));
        // The alias is reported under the real package's name, and is direct.
        assert_eq!(get(d, "string-width", "4.2.3").kind, DependencyKind::Direct);
        assert_eq!(get(d, "debug", "2.6.9").kind, DependencyKind::Transitive);
        let debug4 = get(d, "debug", "4.3.4");
        assert_eq!(
            (debug4.kind, debug4.dev),
            (DependencyKind::Transitive, false)
        );
        assert_eq!(get(d, "left-pad", "1.3.0").kind, DependencyKind::Direct);
        assert_eq!(get(d, "ws-a", "0.0.1").origin, Origin::Path);
        let git = get(d, "gitdep", "89a5bfbb");
        assert!(matches!(git.origin, Origin::Git { .. }));
        assert_eq!(d.len(), 8);
    }

    const V1: &str = r#"{
  "name": "old",
  "lockfileVersion": 1,
  "requires": true,
  "dependencies": {
    "a": {
      "version": "1.0.0",
      "dependencies": {
        "b": { "version": "2.0.0", "dev": true }
      }
    },
    "b": { "version": "1.0.0" },
    "c": { "version": "npm:real-c@3.1.0" },
    "g": { "version": "git+https://github.com/x/g.git#abc123", "from": "git+https://github.com/x/g.git" }
  }
}"#;

    #[test]
    fn v1_nested_aliases_and_manifest() {
        let mut tree = MemTree::with("package-lock.json", V1);
        let file = read(&tree, "package-lock.json", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(get(d, "a", "1.0.0").kind, DependencyKind::Unknown);
        let nested = get(d, "b", "2.0.0");
        assert_eq!(
            (nested.kind, nested.dev, nested.line),
            (DependencyKind::Transitive, true, Some(9))
        );
        assert_eq!(get(d, "real-c", "3.1.0").line, Some(13));
        assert!(matches!(get(d, "g", "abc123").origin, Origin::Git { .. }));

        tree.insert(
            "package.json",
            r#"{"dependencies": {"a": "^1"}, "devDependencies": {"c": "npm:real-c@^3"}}"#,
        );
        let file = read(&tree, "package-lock.json", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(get(d, "a", "1.0.0").kind, DependencyKind::Direct);
        assert_eq!(get(d, "b", "1.0.0").kind, DependencyKind::Transitive);
        assert_eq!(get(d, "real-c", "3.1.0").kind, DependencyKind::Direct);
    }

    #[test]
    fn wrong_shape_names_the_key() {
        let tree = MemTree::with(
            "package-lock.json",
            r#"{"lockfileVersion": 3, "packages": "x"}"#,
        );
        let err = read(&tree, "package-lock.json", &Limits::default()).unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::Shape);
        assert!(err.message.contains("`packages`"), "{err}");
        let tree = MemTree::with(
            "package-lock.json",
            "{\"packages\": {\n\"node_modules/a\": {\"version\": 3.5, \"resolved\": []}}}",
        );
        let err = read(&tree, "package-lock.json", &Limits::default()).unwrap_err();
        assert_eq!((err.kind, err.line), (ReadErrorKind::Shape, Some(2)));
        assert!(err.message.contains("`resolved`"), "{err}");
    }

    #[test]
    fn truncated_json_is_a_syntax_error() {
        let tree = MemTree::with("package-lock.json", &V3[..V3.len() / 2]);
        let err = read(&tree, "package-lock.json", &Limits::default()).unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::Syntax);
        assert!(
            err.to_string().starts_with("package-lock.json line "),
            "{err}"
        );
        assert!(err.message.contains("truncated"), "{err}");
    }

    #[test]
    fn manifest_alone() {
        let tree = MemTree::with(
            "package.json",
            "{\n\"dependencies\": {\"a\": \"1.2.3\", \"b\": \"^1.0.0\", \"c\": \"npm:real@2.0.0\"},\n\"devDependencies\": {\"d\": \"=4.0.0-rc.1\"}}",
        );
        let file = read(&tree, "package.json", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 3);
        assert_eq!(get(d, "a", "1.2.3").line, Some(2));
        assert_eq!(get(d, "real", "2.0.0").kind, DependencyKind::Direct);
        assert!(get(d, "d", "4.0.0-rc.1").dev);
        assert!(
            file.notes.iter().any(|n| n.starts_with("1 dependencies")),
            "{:?}",
            file.notes
        );
    }
}
