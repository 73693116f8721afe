//! yarn.lock, classic (v1, yarn's own line format) and berry (v2+, YAML with `__metadata`).
//!
//! Each entry is keyed by every descriptor (`name@range`) that resolved to it. A package is
//! direct when one of its descriptors is `name@range` for a name and range of the package.json
//! beside the lock (berry: a workspace entry's dependencies); development-only when only
//! devDependencies reach it through the entries' `dependencies`.

use std::collections::{BTreeMap, HashMap, HashSet};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};
use serde_json::Value;

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
    let key_lines = top_key_lines(text);
    let mut berry = Berry::default();
    for (key, entry) in root {
        if key == "__metadata" {
            continue;
        }
        berry.add(&sh, key, entry, key_lines.get(key).copied())?;
    }
    berry.settle_patches(ctx);
    if !berry.exec_or_unknown.is_empty() {
        ctx.note(format!(
            "entries built by a script were skipped: {}",
            berry.exec_or_unknown.join(", ")
        ));
    }
    let manifest = npm::sibling_manifest(ctx);
    Ok(resolve(
        ctx,
        berry.entries,
        manifest.as_ref(),
        |name, range| {
            // Berry writes the default protocol into descriptors: `a@^1` is keyed `a@npm:^1`.
            let has_protocol = range.split_once(':').is_some_and(|(p, _)| {
                !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric())
            });
            if has_protocol {
                vec![format!("{name}@{range}")]
            } else {
                vec![format!("{name}@npm:{range}"), format!("{name}@{range}")]
            }
        },
    ))
}

/// Lines of top-level keys, by their unquoted text.
fn top_key_lines(text: &str) -> HashMap<String, u32> {
    let mut key_lines: HashMap<String, u32> = HashMap::new();
    for (i, l) in text.lines().enumerate() {
        if !l.starts_with([' ', '#', '\t'])
            && let Some(key) = yaml_line_key(l)
        {
            key_lines.insert(key, to_u32(i + 1));
        }
    }
    key_lines
}

/// A berry lock's entries as read, with what their resolutions' protocols say.
#[derive(Default)]
struct Berry {
    entries: Vec<Entry>,
    npm_resolutions: HashSet<String>,
    /// Patched entries by index, with their `patch:` reference.
    patches: Vec<(usize, String)>,
    exec_or_unknown: Vec<String>,
}

impl Berry {
    fn add(
        &mut self,
        sh: &Shape<'_>,
        key: &str,
        entry: &Value,
        line: Option<u32>,
    ) -> Result<(), ReadError> {
        if !entry.is_object() {
            return Err(ReadError::shape(sh.path, line, key, "a mapping"));
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
                sh.path,
                line,
                &format!("{key}.resolution"),
                "`name@protocol:reference`",
            ));
        };
        let mut e = Entry {
            descriptors: key.split(", ").map(str::to_string).collect(),
            name: name.to_string(),
            version,
            origin: Origin::Registry,
            deps,
            line,
            workspace: false,
            skip: false,
        };
        if let Some(v) = reference.strip_prefix("npm:") {
            e.version = Some(v.to_string());
            self.npm_resolutions.insert(resolution.clone());
        } else if reference.starts_with("workspace:") {
            e.workspace = true;
            e.origin = Origin::Path;
        } else if reference.starts_with("patch:") {
            self.patches
                .push((self.entries.len(), reference.to_string()));
        } else if ["link:", "portal:", "file:"]
            .iter()
            .any(|p| reference.starts_with(p))
        {
            e.origin = Origin::Path;
        } else if reference.starts_with("exec:") {
            self.exec_or_unknown.push(key.to_string());
            e.skip = true;
        } else {
            // git (`https://github.com/x/y.git#commit=...`, `git+ssh:`, `github:`) or a tarball URL.
            e.origin = Origin::Git {
                url: reference.to_string(),
            };
        }
        self.entries.push(e);
        Ok(())
    }

    /// A patched package is also listed unpatched; report it once. A patch of a package not
    /// listed otherwise is reported as that package.
    fn settle_patches(&mut self, ctx: &mut Ctx<'_>) {
        for (i, reference) in &self.patches {
            let inner = reference
                .strip_prefix("patch:")
                .and_then(|r| r.split('#').next())
                .map(percent_decode)
                .unwrap_or_default();
            if let Some(e) = self.entries.get_mut(*i) {
                if self.npm_resolutions.contains(&inner) {
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
    }
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
mod tests;
