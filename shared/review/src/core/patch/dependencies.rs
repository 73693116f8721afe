//! A patch of a dependency file (DESIGN.md section 3, step 9): it may only raise the
//! version of a package a kept finding names. Adding a package, adding a source (an index,
//! a git, path or URL dependency, a registry, a replacement), removing a package, lowering
//! a version or changing the version of a package no kept finding names is refused by
//! name.
//!
//! Both sides of the file are read: by the lock-file readers (`proven_lockfile`: every
//! exact version, with its origin) and, for the manifests whose ranges those readers do
//! not list (requirements files, package.json, Cargo.toml, pyproject.toml, go.mod), by
//! what each declares by name ([`declared`]). The sets are compared by normalised name;
//! versions by the ecosystem's own order (`proven_version`).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use proven_lockfile::{Ecosystem, Format, Limits, MemTree, Origin};

/// What a dependency file declares: each package by normalised name, with how the file
/// spells it, its version specs and where it comes from besides the registry; and what
/// adds sources without naming a package (index options, source tables, replacements).
#[derive(Debug, Default)]
pub(crate) struct Declared {
    packages: BTreeMap<String, Package>,
    /// Source declarations not tied to one package (`--index-url URL`, `[patch.crates-io]`,
    /// `replace a => b`), as written.
    sources: BTreeSet<String>,
    /// `scheme://host` of every address the file names.
    hosts: BTreeSet<String>,
}

#[derive(Debug, Default)]
struct Package {
    name: String,
    specs: Vec<String>,
    sources: BTreeSet<String>,
}

impl Declared {
    fn add(&mut self, eco: Ecosystem, name: &str, spec: &str, source: Option<String>) {
        let entry = self
            .packages
            .entry(eco.normalize_name(name))
            .or_insert_with(|| Package {
                name: name.trim().to_string(),
                ..Package::default()
            });
        let spec = spec.trim().to_string();
        if !entry.specs.contains(&spec) {
            entry.specs.push(spec);
        }
        entry.sources.extend(source);
    }

    /// A source the reader saw for a package the manifest's own reading names.
    fn add_source(&mut self, eco: Ecosystem, name: &str, source: String) {
        if let Some(p) = self.packages.get_mut(&eco.normalize_name(name)) {
            p.sources.insert(source);
        }
    }
}

/// Why a patch that turns `before` into `after` in the dependency file `path` is refused,
/// by name; None when it only raises versions of packages in `named` (the packages the
/// kept findings name) or the file is no dependency file.
pub fn change_refusal(path: &str, before: &str, after: &str, named: &[String]) -> Option<String> {
    let format = Format::detect(path)?;
    let eco = format.ecosystem();
    let old = match declared(format, path, before) {
        Ok(d) => d,
        Err(e) => return Some(format!("{path} cannot be read before the patch: {e}")),
    };
    let new = match declared(format, path, after) {
        Ok(d) => d,
        Err(e) => return Some(format!("{path} cannot be read after the patch: {e}")),
    };
    if let Some(s) = new.sources.difference(&old.sources).next() {
        return Some(format!(
            "{path} adds the source {s:?}: a fix may not add a source"
        ));
    }
    let named: BTreeSet<String> = named.iter().map(|n| eco.normalize_name(n)).collect();
    for (key, p) in &new.packages {
        let Some(was) = old.packages.get(key) else {
            return Some(match p.sources.first() {
                Some(source) => format!(
                    "{path} adds {} from {source}: a fix may not add a package or a source",
                    p.name
                ),
                None if named.contains(key) => format!(
                    "{path} adds {}: a fix may only raise the version of a package already there",
                    p.name
                ),
                None => format!("{path} adds {}, a package no finding names", p.name),
            });
        };
        if let Some(source) = p.sources.difference(&was.sources).next() {
            return Some(format!(
                "{path} takes {} from {source}: a fix may not add a source",
                p.name
            ));
        }
        if let Some(why) = version_change(eco, path, was, p, named.contains(key)) {
            return Some(why);
        }
    }
    if let Some(p) = old
        .packages
        .iter()
        .find_map(|(k, p)| (!new.packages.contains_key(k)).then_some(p))
    {
        return Some(format!(
            "{path} removes {}: a fix may only raise a version",
            p.name
        ));
    }
    new.hosts
        .difference(&old.hosts)
        .next()
        .map(|s| format!("{path} adds the source {s:?}: a fix may not add a source"))
}

/// Why a package's versions may not change so: a package no finding names, a version
/// lowered, a spec changed beyond its version.
fn version_change(
    eco: Ecosystem,
    path: &str,
    was: &Package,
    now: &Package,
    named: bool,
) -> Option<String> {
    let mut old: Vec<&String> = was
        .specs
        .iter()
        .filter(|s| !now.specs.contains(s))
        .collect();
    let mut new: Vec<&String> = now
        .specs
        .iter()
        .filter(|s| !was.specs.contains(s))
        .collect();
    if old.is_empty() && new.is_empty() {
        return None;
    }
    let name = &now.name;
    if !named {
        return Some(format!(
            "{path} changes the version of {name}, a package no finding names"
        ));
    }
    if old.len() != new.len() {
        return Some(format!(
            "{path} changes how many versions of {name} it holds: a fix may only raise one"
        ));
    }
    old.sort_by(|a, b| by_version(eco, a, b));
    new.sort_by(|a, b| by_version(eco, a, b));
    for (a, b) in old.into_iter().zip(new) {
        let (va, vb) = (version_of(a), version_of(b));
        if a.replacen(va, "", 1) != b.replacen(vb, "", 1) {
            return Some(format!(
                "{path} changes {name} from {a:?} to {b:?}, beyond its version"
            ));
        }
        if by_version(eco, va, vb) != Ordering::Less {
            return Some(format!(
                "{path} lowers {name} from {va} to {vb}: a fix may only raise a version"
            ));
        }
    }
    None
}

/// The version a spec names: its first word after the operators (`^1.2.3` → `1.2.3`,
/// `>=2.0,<3` → `2.0`, `v1.4.0` → `v1.4.0`).
fn version_of(spec: &str) -> &str {
    let start = spec.trim_start_matches(|c: char| "^~=<>! ".contains(c));
    let end = start
        .find(|c: char| c == ',' || c == ';' || c == '|' || c.is_whitespace())
        .unwrap_or(start.len());
    &start[..end]
}

/// The ecosystem's order, or else the numbers in the versions compared in turn.
fn by_version(eco: Ecosystem, a: &str, b: &str) -> Ordering {
    let (va, vb) = (version_of(a), version_of(b));
    proven_version::compare(eco, va, vb).unwrap_or_else(|_| {
        let numbers = |v: &str| -> Vec<u64> {
            v.split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse().ok())
                .collect()
        };
        numbers(va).cmp(&numbers(vb))
    })
}

/// What the file declares, read by the lock-file reader and, for a manifest, by name.
pub(crate) fn declared(format: Format, path: &str, text: &str) -> Result<Declared, String> {
    let eco = format.ecosystem();
    let mut out = Declared::default();
    let file = proven_lockfile::read(&MemTree::with(path, text), path, &Limits::default())
        .map_err(|e| e.to_string())?;
    // A manifest is read by name (its ranges too, which the reader does not list); the
    // reader's exact versions are the rest's.
    let by_name = match format {
        Format::RequirementsTxt => requirements(&mut out, text),
        Format::PackageJson => package_json(&mut out, text)?,
        Format::CargoToml => cargo_toml(&mut out, text)?,
        Format::PyprojectToml => pyproject(&mut out, text)?,
        Format::GoMod => {
            go_mod(&mut out, text);
            false
        }
        _ => false,
    };
    for d in &file.dependencies {
        let source = match &d.origin {
            Origin::Registry => None,
            Origin::Git { url } => Some(format!("git {url}")),
            Origin::Path => Some("a path".to_string()),
        };
        match (by_name, source) {
            (true, Some(source)) => out.add_source(eco, &d.name, source),
            (true, None) => {}
            (false, source) => out.add(eco, &d.name, &d.version, source),
        }
    }
    // Any address the file names is a place packages come from.
    out.hosts = hosts(text);
    Ok(out)
}

/// `scheme://host` of every address in the text.
fn hosts(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let scheme_start = rest[..at]
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || "+.-".contains(c)))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let after = &rest[at + 3..];
        let end = after
            .find(|c: char| c == '/' || c == '"' || c == '\'' || c.is_whitespace())
            .unwrap_or(after.len());
        out.insert(format!("{}://{}", &rest[scheme_start..at], &after[..end]));
        rest = &after[end..];
    }
    out
}

/// A PEP 508 requirement: its name, its spec, and a direct reference (`name @ URL`).
fn pep508(line: &str) -> Option<(&str, &str, Option<String>)> {
    let line = line.split(';').next().unwrap_or("").trim();
    let end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
        .unwrap_or(line.len());
    let name = &line[..end];
    if name.is_empty() {
        return None;
    }
    let mut spec = line[end..].trim_start();
    // `git+https://…`, `./pkg`, `file:…`: an address, not a name.
    if spec.starts_with(['+', ':', '/']) {
        return None;
    }
    if spec.starts_with('[') {
        spec = spec.find(']').map_or("", |i| spec[i + 1..].trim_start());
    }
    let source = spec
        .strip_prefix('@')
        .map(|url| format!("the address {}", url.trim()));
    Some((name, spec, source))
}

fn requirements(out: &mut Declared, text: &str) -> bool {
    for raw in text.lines() {
        let line = match raw.find(" #") {
            Some(i) => &raw[..i],
            None if raw.trim_start().starts_with('#') => "",
            None => raw,
        };
        let line = line.trim().trim_end_matches('\\').trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('-') {
            // Hashes follow a version (pip-compile's continuation lines); every other
            // option (an index, find-links, an include, an editable) is a source.
            if !line.starts_with("--hash") {
                out.sources.insert(line.to_string());
            }
            continue;
        }
        // A requirement's own options (`--hash=…`) are not part of its spec.
        let requirement = line.split(" --").next().unwrap_or(line);
        match pep508(requirement) {
            Some((name, spec, source)) => out.add(Ecosystem::PyPI, name, spec, source),
            None => {
                out.sources.insert(line.to_string());
            }
        }
    }
    true
}

/// The sections of package.json that name packages.
const NPM_SECTIONS: [&str; 6] = [
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
    "overrides",
    "resolutions",
];

fn package_json(out: &mut Declared, text: &str) -> Result<bool, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    for section in NPM_SECTIONS {
        let Some(map) = value.get(section).and_then(|v| v.as_object()) else {
            continue;
        };
        for (name, spec) in map {
            let spec = match spec.as_str() {
                Some(s) => s.to_string(),
                None => spec.to_string(),
            };
            // A registry range has no scheme, alias or `user/repo`.
            let source = (spec.contains(':') || spec.contains('/'))
                .then(|| format!("{spec:?} (not the registry)"));
            out.add(Ecosystem::Npm, name, &spec, source);
        }
    }
    for key in ["publishConfig", "workspaces"] {
        if let Some(v) = value.get(key) {
            out.sources.insert(format!("{key}: {v}"));
        }
    }
    Ok(true)
}

/// Keys of a Cargo dependency table that take it from elsewhere than crates.io.
const CARGO_SOURCE_KEYS: [&str; 6] = [
    "git",
    "path",
    "registry",
    "registry-index",
    "url",
    "package",
];

fn cargo_table(out: &mut Declared, table: &toml::Table) {
    for (name, spec) in table {
        match spec {
            toml::Value::Table(t) => {
                let version = t.get("version").and_then(|v| v.as_str()).unwrap_or("");
                let source = CARGO_SOURCE_KEYS
                    .iter()
                    .find_map(|k| t.get(*k).map(|v| format!("{k} = {v}")));
                out.add(Ecosystem::CratesIo, name, version, source);
            }
            other => out.add(
                Ecosystem::CratesIo,
                name,
                other.as_str().unwrap_or(""),
                None,
            ),
        }
    }
}

fn cargo_toml(out: &mut Declared, text: &str) -> Result<bool, String> {
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let sections = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<&toml::Table> = sections
        .iter()
        .filter_map(|s| doc.get(*s).and_then(|v| v.as_table()))
        .collect();
    if let Some(ws) = doc.get("workspace").and_then(|v| v.as_table())
        && let Some(deps) = ws.get("dependencies").and_then(|v| v.as_table())
    {
        tables.push(deps);
    }
    if let Some(target) = doc.get("target").and_then(|v| v.as_table()) {
        for cfg in target.values().filter_map(|v| v.as_table()) {
            tables.extend(
                sections
                    .iter()
                    .filter_map(|s| cfg.get(*s).and_then(|v| v.as_table())),
            );
        }
    }
    for table in tables {
        cargo_table(out, table);
    }
    // Replacements and registries name no package of their own but change where one
    // comes from.
    for key in ["patch", "replace", "source", "registries", "registry"] {
        if let Some(v) = doc.get(key) {
            out.sources.insert(format!("[{key}] {v}"));
        }
    }
    Ok(true)
}

fn pyproject(out: &mut Declared, text: &str) -> Result<bool, String> {
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let at = |path: &[&str]| -> Option<&toml::Value> {
        let mut v = doc.get(path[0])?;
        for key in &path[1..] {
            v = v.get(key)?;
        }
        Some(v)
    };
    let mut lists: Vec<&toml::Value> = Vec::new();
    lists.extend(at(&["project", "dependencies"]));
    lists.extend(at(&["build-system", "requires"]));
    for groups in [
        at(&["project", "optional-dependencies"]),
        at(&["dependency-groups"]),
    ] {
        lists.extend(
            groups
                .and_then(|g| g.as_table())
                .into_iter()
                .flat_map(|t| t.values()),
        );
    }
    for item in lists.iter().filter_map(|l| l.as_array()).flatten() {
        if let Some((name, spec, source)) = item.as_str().and_then(pep508) {
            out.add(Ecosystem::PyPI, name, spec, source);
        }
    }
    let mut poetry: Vec<&toml::Table> = Vec::new();
    for path in [
        &["tool", "poetry", "dependencies"][..],
        &["tool", "poetry", "dev-dependencies"][..],
    ] {
        poetry.extend(at(path).and_then(|v| v.as_table()));
    }
    if let Some(groups) = at(&["tool", "poetry", "group"]).and_then(|v| v.as_table()) {
        poetry.extend(
            groups
                .values()
                .filter_map(|g| g.get("dependencies").and_then(|d| d.as_table())),
        );
    }
    for table in poetry {
        for (name, spec) in table {
            let (version, source) = match spec {
                toml::Value::Table(t) => (
                    t.get("version").and_then(|v| v.as_str()).unwrap_or(""),
                    ["git", "path", "url", "source"]
                        .iter()
                        .find_map(|k| t.get(*k).map(|v| format!("{k} = {v}"))),
                ),
                other => (other.as_str().unwrap_or(""), None),
            };
            out.add(Ecosystem::PyPI, name, version, source);
        }
    }
    for path in [
        &["tool", "poetry", "source"][..],
        &["tool", "uv", "sources"][..],
        &["tool", "uv", "index"][..],
        &["tool", "pdm", "source"][..],
    ] {
        if let Some(v) = at(path) {
            out.sources.insert(format!("[{}] {v}", path.join(".")));
        }
    }
    Ok(true)
}

fn go_mod(out: &mut Declared, text: &str) {
    let mut block: Option<&str> = None;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        if line == ")" {
            block = None;
            continue;
        }
        let (directive, rest) = match block {
            Some(d) => (d, line),
            None => {
                let (d, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
                let rest = rest.trim();
                if rest == "(" {
                    block = Some(d);
                    continue;
                }
                (d, rest)
            }
        };
        if rest.is_empty() {
            continue;
        }
        if directive == "replace" || rest.contains("=>") {
            out.sources.insert(format!("replace {rest}"));
        }
    }
}

#[cfg(test)]
#[path = "dependencies_tests.rs"]
mod tests;
