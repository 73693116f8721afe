//! yarn.lock, classic (v1, yarn's own line format) and berry (v2+, YAML with `__metadata`).
//!
//! Each entry is keyed by every descriptor (`name@range`) that resolved to it. A package is
//! direct when one of its descriptors is `name@range` for a name and range of the package.json
//! beside the lock (berry: a workspace entry's dependencies); development-only when only
//! devDependencies reach it through the entries' `dependencies`.

use std::collections::{BTreeMap, HashMap, HashSet};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::{Deps, dev_only, reach};
use crate::error::{ReadError, ReadErrorKind};
use crate::npm::{self, Manifest};
use crate::text::{Shape, parse_yaml, to_u32, yaml_line_key};

pub(crate) fn read(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let berry = text
        .lines()
        .any(|l| l.starts_with("__metadata:") || l.starts_with("\"__metadata\":"));
    if berry {
        read_berry(ctx, text)
    } else {
        read_classic(ctx, text)
    }
}

/// One lock entry, in either dialect, ready for the graph walk.
struct Entry {
    descriptors: Vec<String>,
    name: String,
    version: Option<String>,
    origin: Origin,
    /// (name, range) pairs of the entry's dependencies and optionalDependencies.
    deps: Vec<(String, String)>,
    line: Option<u32>,
    /// Berry workspace entries: the project's own packages, roots of the graph.
    workspace: bool,
    /// Berry patch entries of a package that is also listed unpatched.
    skip: bool,
}

/// `name@range` → (name, range); the name may be scoped (`@scope/name`).
fn split_descriptor(d: &str) -> Option<(&str, &str)> {
    let at = d.get(1..)?.find('@')? + 1;
    Some((d.get(..at)?, d.get(at + 1..)?))
}

/// A range `npm:real@^1` (an alias) names another package.
fn aliased_name(name: &str, range: &str) -> String {
    match range.strip_prefix("npm:").and_then(split_descriptor) {
        Some((real, _)) => real.to_string(),
        None => name.to_string(),
    }
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    match s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => s.to_string(),
    }
}

/// Splits `"a@^1", a@^1.1` on commas outside quotes.
fn split_keys(header: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in header.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => {
                out.push(unquote(&cur));
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(unquote(&cur));
    }
    out
}

fn read_classic(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let path = ctx.path;
    let mut entries: Vec<Entry> = Vec::new();
    let mut resolved: Option<String> = None;
    let mut in_deps = false;
    let syntax = |line: usize, msg: &str| {
        ReadError::new(
            path,
            Some(to_u32(line)),
            ReadErrorKind::Syntax,
            msg.to_string(),
        )
    };
    let finish = |entries: &mut Vec<Entry>, resolved: &mut Option<String>| {
        if let Some(e) = entries.last_mut() {
            let range = e
                .descriptors
                .first()
                .and_then(|d| split_descriptor(d))
                .map(|(_, r)| r.to_string())
                .unwrap_or_default();
            e.origin = npm::origin(Some(&range), resolved.as_deref());
            if let Origin::Git { url } = &e.origin
                && e.version.is_none()
            {
                e.version = url.rsplit_once('#').map(|(_, c)| c.to_string());
            }
        }
        *resolved = None;
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        match indent {
            0 => {
                finish(&mut entries, &mut resolved);
                let header = body
                    .strip_suffix(':')
                    .ok_or_else(|| syntax(n, "an entry header should end with `:`"))?;
                let descriptors = split_keys(header);
                let (name, range) = descriptors
                    .first()
                    .and_then(|d| split_descriptor(d))
                    .ok_or_else(|| syntax(n, "an entry header should be `name@range`"))?;
                entries.push(Entry {
                    name: aliased_name(name, range),
                    descriptors,
                    version: None,
                    origin: Origin::Registry,
                    deps: Vec::new(),
                    line: Some(to_u32(n)),
                    workspace: false,
                    skip: false,
                });
                in_deps = false;
            }
            2 => {
                let entry = entries
                    .last_mut()
                    .ok_or_else(|| syntax(n, "a field outside any entry"))?;
                if let Some(section) = body.strip_suffix(':') {
                    in_deps = matches!(section, "dependencies" | "optionalDependencies");
                    continue;
                }
                in_deps = false;
                let (key, value) = body.split_once(' ').unwrap_or((body, ""));
                match unquote(key).as_str() {
                    "version" => entry.version = Some(unquote(value)),
                    "resolved" => resolved = Some(unquote(value)),
                    _ => {}
                }
            }
            _ if in_deps => {
                let entry = entries
                    .last_mut()
                    .ok_or_else(|| syntax(n, "a dependency outside any entry"))?;
                let (key, value) = split_dep_line(body);
                entry.deps.push((unquote(key), unquote(value)));
            }
            _ => {}
        }
    }
    finish(&mut entries, &mut resolved);
    let manifest = npm::sibling_manifest(ctx);
    Ok(resolve(ctx, entries, manifest.as_ref(), |name, range| {
        vec![format!("{name}@{range}")]
    }))
}

/// `name "range"` or `"@scope/name" "range"`.
fn split_dep_line(body: &str) -> (&str, &str) {
    if let Some(rest) = body.strip_prefix('"')
        && let Some(end) = rest.find('"')
    {
        let key = body.get(..end + 2).unwrap_or(body);
        let value = body.get(end + 2..).unwrap_or("");
        return (key, value);
    }
    body.split_once(' ').unwrap_or((body, ""))
}

fn read_berry(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let path = ctx.path;
    let value = parse_yaml(path, text, ctx.limits)?;
    let sh = Shape { path };
    let root = sh.root_object(&value)?;
    // Lines of top-level keys, by their unquoted text.
    let mut key_lines: HashMap<String, u32> = HashMap::new();
    for (i, l) in text.lines().enumerate() {
        if !l.starts_with([' ', '#', '\t'])
            && let Some(key) = yaml_line_key(l)
        {
            key_lines.insert(key, to_u32(i + 1));
        }
    }
    let mut entries = Vec::new();
    let mut npm_resolutions: HashSet<String> = HashSet::new();
    let mut patches: Vec<(usize, String)> = Vec::new();
    let mut exec_or_unknown = Vec::new();
    for (key, entry) in root {
        if key == "__metadata" {
            continue;
        }
        let line = key_lines.get(key).copied();
        if !entry.is_object() {
            return Err(ReadError::shape(path, line, key, "a mapping"));
        }
        let resolution = sh.string(entry, "resolution", line)?.unwrap_or_default();
        let version = sh.string(entry, "version", line)?;
        let mut deps = Vec::new();
        for section in ["dependencies", "optionalDependencies"] {
            if let Some(obj) = sh.object(entry, section, line)? {
                for (n, r) in obj {
                    deps.push((
                        n.clone(),
                        r.as_str().map(str::to_string).unwrap_or_default(),
                    ));
                }
            }
        }
        let Some((name, reference)) = split_descriptor(&resolution) else {
            return Err(ReadError::shape(
                path,
                line,
                &format!("{key}.resolution"),
                "`name@protocol:reference`",
            ));
        };
        let mut e = Entry {
            descriptors: key.split(", ").map(str::to_string).collect(),
            name: name.to_string(),
            version: version.clone(),
            origin: Origin::Registry,
            deps,
            line,
            workspace: false,
            skip: false,
        };
        if let Some(v) = reference.strip_prefix("npm:") {
            e.version = Some(v.to_string());
            npm_resolutions.insert(resolution.clone());
        } else if reference.starts_with("workspace:") {
            e.workspace = true;
            e.origin = Origin::Path;
        } else if reference.starts_with("patch:") {
            patches.push((entries.len(), reference.to_string()));
        } else if ["link:", "portal:", "file:"]
            .iter()
            .any(|p| reference.starts_with(p))
        {
            e.origin = Origin::Path;
        } else if reference.starts_with("exec:") {
            exec_or_unknown.push(key.clone());
            e.skip = true;
        } else {
            // git (`https://github.com/x/y.git#commit=...`, `git+ssh:`, `github:`) or a tarball URL.
            e.origin = Origin::Git {
                url: reference.to_string(),
            };
        }
        entries.push(e);
    }
    // A patched package is also listed unpatched; report it once. A patch of a package not
    // listed otherwise is reported as that package.
    for (i, reference) in patches {
        let inner = reference
            .strip_prefix("patch:")
            .and_then(|r| r.split('#').next())
            .map(percent_decode)
            .unwrap_or_default();
        if let Some(e) = entries.get_mut(i) {
            if npm_resolutions.contains(&inner) {
                e.skip = true;
            } else {
                ctx.notes.push(format!(
                    "{} {} is patched (`{}`)",
                    e.name,
                    e.version.as_deref().unwrap_or("?"),
                    inner
                ));
            }
        }
    }
    if !exec_or_unknown.is_empty() {
        ctx.note(format!(
            "entries built by a script were skipped: {}",
            exec_or_unknown.join(", ")
        ));
    }
    let manifest = npm::sibling_manifest(ctx);
    Ok(resolve(ctx, entries, manifest.as_ref(), |name, range| {
        // Berry writes the default protocol into descriptors: `a@^1` is keyed `a@npm:^1`.
        let has_protocol = range
            .split_once(':')
            .is_some_and(|(p, _)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric()));
        if has_protocol {
            vec![format!("{name}@{range}")]
        } else {
            vec![format!("{name}@npm:{range}"), format!("{name}@{range}")]
        }
    }))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(v) = u8::from_str_radix(hex, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Turns entries into dependencies: direct from the manifest (and berry workspaces), dev from
/// the graph. `descriptor` spells a (name, range) pair the way the dialect keys its entries.
fn resolve(
    ctx: &mut Ctx<'_>,
    entries: Vec<Entry>,
    manifest: Option<&Manifest>,
    descriptor: impl Fn(&str, &str) -> Vec<String>,
) -> Vec<Dependency> {
    let mut by_descriptor: HashMap<&str, usize> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        for d in &e.descriptors {
            by_descriptor.insert(d.as_str(), i);
        }
    }
    let lookup = |name: &str, range: &str| -> Option<usize> {
        descriptor(name, range)
            .iter()
            .find_map(|d| by_descriptor.get(d.as_str()).copied())
    };
    let edges: Vec<Vec<usize>> = entries
        .iter()
        .map(|e| e.deps.iter().filter_map(|(n, r)| lookup(n, r)).collect())
        .collect();
    let mut prod_roots = Vec::new();
    let mut dev_roots = Vec::new();
    let mut direct: HashSet<usize> = HashSet::new();
    if let Some(m) = manifest {
        let as_map = |m: &BTreeMap<String, String>| -> Vec<usize> {
            m.iter().filter_map(|(n, r)| lookup(n, r)).collect()
        };
        prod_roots.extend(as_map(&m.prod));
        dev_roots.extend(as_map(&m.dev));
    }
    for e in entries.iter().filter(|e| e.workspace) {
        // A workspace's dependencies are direct. Which are dev is known only for the root
        // workspace (`workspace:.`), from the package.json beside the lock.
        let is_root = e.descriptors.iter().any(|d| d.ends_with("@workspace:."));
        for (n, r) in &e.deps {
            if let Some(t) = lookup(n, r) {
                direct.insert(t);
                if is_root && manifest.is_some_and(|m| m.dev_only(n)) {
                    dev_roots.push(t);
                } else {
                    prod_roots.push(t);
                }
            }
        }
    }
    direct.extend(prod_roots.iter().copied());
    direct.extend(dev_roots.iter().copied());
    let dev = dev_only(&edges, &prod_roots, &dev_roots);
    let reached = reach(&edges, direct.iter().copied());
    let know_direct = manifest.is_some() || entries.iter().any(|e| e.workspace);

    let mut deps = Deps::default();
    let mut no_version = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        if e.skip || e.workspace {
            continue;
        }
        let Some(version) = e.version.filter(|v| !v.is_empty()) else {
            no_version.push(e.name);
            continue;
        };
        let kind = if !know_direct {
            DependencyKind::Unknown
        } else if direct.contains(&i) {
            DependencyKind::Direct
        } else if reached.get(i).copied().unwrap_or(false) {
            DependencyKind::Transitive
        } else {
            DependencyKind::Unknown
        };
        deps.push(Dependency {
            ecosystem: Ecosystem::Npm,
            name: e.name,
            version,
            kind,
            origin: e.origin,
            dev: dev.get(i).copied().unwrap_or(false),
            line: e.line,
        });
    }
    if !no_version.is_empty() {
        ctx.note(format!(
            "entries without a version were skipped: {}",
            no_version.join(", ")
        ));
    }
    deps.into_vec()
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

    const CLASSIC: &str = r#"# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.
# yarn lockfile v1


"@babel/code-frame@^7.0.0", "@babel/code-frame@^7.10.4":
  version "7.12.13"
  resolved "https://registry.yarnpkg.com/@babel/code-frame/-/code-frame-7.12.13.tgz#abc"
  dependencies:
    "@babel/highlight" "^7.12.13"

"@babel/highlight@^7.12.13":
  version "7.13.10"
  resolved "https://registry.yarnpkg.com/@babel/highlight/-/highlight-7.13.10.tgz#def"

left-pad@1.3.0, left-pad@^1.0.0:
  version "1.3.0"

str@npm:string-width@^4.2.0:
  version "4.2.3"

mygit@git+https://github.com/x/mygit.git:
  version "0.1.0"
  resolved "git+https://github.com/x/mygit.git#0123abc"
"#;

    #[test]
    fn classic_multi_keys_scopes_aliases_and_git() {
        let mut tree = MemTree::with("yarn.lock", CLASSIC);
        let file = read(&tree, "yarn.lock", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 5);
        let cf = get(d, "@babel/code-frame", "7.12.13");
        assert_eq!((cf.line, cf.kind), (Some(5), DependencyKind::Unknown));
        assert_eq!(get(d, "left-pad", "1.3.0").line, Some(15));
        assert_eq!(get(d, "string-width", "4.2.3").line, Some(18));
        assert!(matches!(
            get(d, "mygit", "0.1.0").origin,
            Origin::Git { .. }
        ));

        tree.insert(
            "package.json",
            r#"{"dependencies": {"left-pad": "^1.0.0"}, "devDependencies": {"@babel/code-frame": "^7.10.4"}}"#,
        );
        let file = read(&tree, "yarn.lock", &Limits::default()).unwrap();
        let d = &file.dependencies;
        let cf = get(d, "@babel/code-frame", "7.12.13");
        assert_eq!((cf.kind, cf.dev), (DependencyKind::Direct, true));
        let hl = get(d, "@babel/highlight", "7.13.10");
        assert_eq!((hl.kind, hl.dev), (DependencyKind::Transitive, true));
        let lp = get(d, "left-pad", "1.3.0");
        assert_eq!((lp.kind, lp.dev), (DependencyKind::Direct, false));
        assert_eq!(
            get(d, "string-width", "4.2.3").kind,
            DependencyKind::Unknown
        );
    }

    const BERRY: &str = r#"# This file is generated by running "yarn install" inside your project.
# Manual changes might be lost - proceed with caution!

__metadata:
  version: 6
  cacheKey: 8

"app@workspace:.":
  version: 0.0.0-use.local
  resolution: "app@workspace:."
  dependencies:
    left-pad: ^1.3.0
    str: "npm:string-width@^4"
    resolve: "patch:resolve@^1.20.0#~builtin<compat/resolve>"
  languageName: unknown
  linkType: soft

"left-pad@npm:^1.3.0":
  version: 1.3.0
  resolution: "left-pad@npm:1.3.0"
  checksum: abc
  languageName: node
  linkType: hard

"str@npm:string-width@^4":
  version: 4.2.3
  resolution: "string-width@npm:4.2.3"
  languageName: node
  linkType: hard

"resolve@npm:^1.20.0":
  version: 1.22.1
  resolution: "resolve@npm:1.22.1"
  languageName: node
  linkType: hard

"resolve@patch:resolve@^1.20.0#~builtin<compat/resolve>":
  version: 1.22.1
  resolution: "resolve@patch:resolve@npm%3A1.22.1#~builtin<compat/resolve>::version=1.22.1&hash=07638b"
  languageName: node
  linkType: hard

"only-patched@patch:only-patched@npm%3A2.0.0#./fix.patch::locator=app%40workspace%3A.":
  version: 2.0.0
  resolution: "only-patched@patch:only-patched@npm%3A2.0.0#./fix.patch::version=2.0.0&hash=1"
  languageName: node
  linkType: hard
"#;

    #[test]
    fn berry_resolutions_workspaces_patches_aliases() {
        let tree = MemTree::with("yarn.lock", BERRY);
        let file = read(&tree, "yarn.lock", &Limits::default()).unwrap();
        let d = &file.dependencies;
        let names: Vec<_> = d
            .iter()
            .map(|x| format!("{}@{}", x.name, x.version))
            .collect();
        assert_eq!(
            names,
            vec![
                "left-pad@1.3.0",
                "string-width@4.2.3",
                "resolve@1.22.1",
                "only-patched@2.0.0"
            ]
        );
        let lp = get(d, "left-pad", "1.3.0");
        assert_eq!((lp.kind, lp.line), (DependencyKind::Direct, Some(18)));
        assert_eq!(get(d, "string-width", "4.2.3").kind, DependencyKind::Direct);
        assert!(
            file.notes.iter().any(|n| n.contains("only-patched")),
            "{:?}",
            file.notes
        );
    }

    #[test]
    fn berry_wrong_shape_and_bad_yaml() {
        let tree = MemTree::with("yarn.lock", "__metadata:\n  version: 6\n\"a@npm:1\": 3\n");
        let err = read(&tree, "yarn.lock", &Limits::default()).unwrap_err();
        assert_eq!((err.kind, err.line), (ReadErrorKind::Shape, Some(3)));
        let tree = MemTree::with("yarn.lock", "__metadata:\n  version: 6\n\"a@npm:1\": [\n");
        let err = read(&tree, "yarn.lock", &Limits::default()).unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::Syntax);
        assert!(err.to_string().starts_with("yarn.lock"), "{err}");
    }

    #[test]
    fn classic_garbage_is_a_syntax_error_with_line() {
        let tree = MemTree::with("yarn.lock", "# yarn lockfile v1\n\nnot a header\n");
        let err = read(&tree, "yarn.lock", &Limits::default()).unwrap_err();
        assert_eq!((err.kind, err.line), (ReadErrorKind::Syntax, Some(3)));
    }
}
