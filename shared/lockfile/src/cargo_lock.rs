//! Cargo.lock (v1 with `[metadata]` checksums, v2, v3, v4) and Cargo.toml.
//!
//! Cargo.lock lists every package of the build. Packages without `source` are the workspace's
//! own crates (and path dependencies): their dependency lists name the direct dependencies, so
//! direct vs transitive comes from the lock itself, workspaces included. Cargo.toml (beside the
//! lock, and the members it lists by explicit path) adds which of those are dev-dependencies;
//! a package is development-only when only dev-dependency edges of the workspace reach it.

use std::collections::{BTreeSet, HashMap};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::{Deps, dev_only};
use crate::error::{ReadError, ReadErrorKind};
use crate::text::{LineIndex, TomlDoc, TomlShape, TomlValue, parse_toml, toml_str, toml_table};
use crate::tree::{child, dir_of, join};

const CRATES_IO_INDEX: &str = "registry+https://github.com/rust-lang/crates.io-index";
const CRATES_IO_SPARSE: &str = "sparse+https://index.crates.io/";

struct LockPackage {
    name: String,
    version: String,
    source: Option<String>,
    deps: Vec<String>,
    line: Option<u32>,
}

pub(crate) fn read_lock(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let index = LineIndex::new(text);
    let doc = parse_toml(ctx.path, text, &index)?;
    let sh = TomlShape {
        path: ctx.path,
        index: &index,
    };
    let packages = lock_packages(&sh, &doc)?;
    let edges = resolve_edges(&packages);
    let roots: Vec<usize> = (0..packages.len())
        .filter(|&i| packages.get(i).is_some_and(|p| p.source.is_none()))
        .collect();
    let manifests = workspace_manifests(ctx);
    let (dev, direct) = dev_and_direct(&packages, &edges, &roots, &manifests);
    let mut other_registries: BTreeSet<String> = BTreeSet::new();
    let mut deps = Deps::default();
    for (i, p) in packages.into_iter().enumerate() {
        let origin = origin(p.source.as_deref(), &mut other_registries);
        let kind = if roots.is_empty() {
            DependencyKind::Unknown
        } else if roots.contains(&i) || direct.get(i).copied().unwrap_or(false) {
            DependencyKind::Direct
        } else {
            DependencyKind::Transitive
        };
        deps.push(Dependency {
            ecosystem: Ecosystem::CratesIo,
            name: p.name,
            version: p.version,
            kind,
            origin,
            dev: dev.get(i).copied().unwrap_or(false),
            line: p.line,
        });
    }
    for r in other_registries {
        ctx.note(format!(
            "packages from registry `{r}` are not from crates.io: an advisory for a crates.io \
             package of the same name may not apply to them"
        ));
    }
    Ok(deps.into_vec())
}

fn lock_packages(sh: &TomlShape<'_>, doc: &TomlDoc<'_>) -> Result<Vec<LockPackage>, ReadError> {
    let mut packages = Vec::new();
    // Very old v1 lock files hold the root crate in `[root]` rather than in `[[package]]`.
    if let Some(root) = sh.table(doc, "root")? {
        packages.push(lock_package(sh, root, "root")?);
    }
    if let Some(list) = sh.array(doc, "package")? {
        for (i, item) in list.iter().enumerate() {
            let where_ = format!("package[{i}]");
            let table = toml_table(item.get_ref()).ok_or_else(|| {
                ReadError::shape(sh.path, Some(sh.line_of(item)), &where_, "a table")
            })?;
            packages.push(lock_package(sh, table, &where_)?);
        }
    }
    Ok(packages)
}

/// Each package's dependency references ("name", "name version" or, in v1,
/// "name version (source)") resolved to packages.
fn resolve_edges(packages: &[LockPackage]) -> Vec<Vec<usize>> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, p) in packages.iter().enumerate() {
        by_name.entry(p.name.as_str()).or_default().push(i);
    }
    let resolve = |reference: &str| -> Option<usize> {
        let mut parts = reference.split_whitespace();
        let name = parts.next()?;
        let version = parts.next();
        let source = parts
            .next()
            .map(|s| s.trim_start_matches('(').trim_end_matches(')'));
        let candidates = by_name.get(name)?;
        candidates.iter().copied().find(|&i| {
            packages.get(i).is_some_and(|p| {
                version.is_none_or(|v| p.version == v)
                    && source.is_none_or(|s| p.source.as_deref() == Some(s))
            })
        })
    };
    packages
        .iter()
        .map(|p| p.deps.iter().filter_map(|d| resolve(d)).collect())
        .collect()
}

/// Which packages are development-only and which the workspace's crates name directly.
/// Edges from a workspace crate to its dev-dependencies are cut and their targets become
/// development roots; every other edge is a production edge.
fn dev_and_direct(
    packages: &[LockPackage],
    edges: &[Vec<usize>],
    roots: &[usize],
    manifests: &HashMap<String, Manifest>,
) -> (Vec<bool>, Vec<bool>) {
    let mut prod_edges: Vec<Vec<usize>> = vec![Vec::new(); packages.len()];
    let mut dev_roots = Vec::new();
    let mut direct = vec![false; packages.len()];
    for (from, targets) in edges.iter().enumerate() {
        let is_root = roots.contains(&from);
        let manifest = packages
            .get(from)
            .filter(|_| is_root)
            .and_then(|p| manifests.get(&p.name));
        for &to in targets {
            let to_name = packages.get(to).map(|p| p.name.as_str()).unwrap_or("");
            if is_root && let Some(flag) = direct.get_mut(to) {
                *flag = true;
            }
            if manifest.is_some_and(|m| m.is_dev_only(to_name)) {
                dev_roots.push(to);
            } else if let Some(list) = prod_edges.get_mut(from) {
                list.push(to);
            }
        }
    }
    (dev_only(&prod_edges, roots, &dev_roots), direct)
}

/// A lock package's origin by its `source`; a registry other than crates.io is remembered.
fn origin(source: Option<&str>, other_registries: &mut BTreeSet<String>) -> Origin {
    match source {
        None => Origin::Path,
        Some(s) if s.starts_with("git+") => Origin::Git {
            url: s.trim_start_matches("git+").to_string(),
        },
        Some(s) if s.starts_with("path+") => Origin::Path,
        Some(s) => {
            if s != CRATES_IO_INDEX && s != CRATES_IO_SPARSE {
                other_registries.insert(s.to_string());
            }
            Origin::Registry
        }
    }
}

fn lock_package(
    sh: &TomlShape<'_>,
    table: &TomlDoc<'_>,
    where_: &str,
) -> Result<LockPackage, ReadError> {
    let missing = |key: &str| {
        ReadError::new(
            sh.path,
            None,
            ReadErrorKind::Shape,
            format!("`{where_}` has no `{key}`"),
        )
    };
    let line = sh.key_line(table, "name");
    let name = sh.string(table, "name")?.ok_or_else(|| missing("name"))?;
    let version = sh
        .string(table, "version")?
        .ok_or_else(|| missing("version"))?;
    let source = sh.string(table, "source")?.map(str::to_string);
    let mut deps = Vec::new();
    if let Some(list) = sh.array(table, "dependencies")? {
        for d in list {
            let s = toml_str(d.get_ref()).ok_or_else(|| {
                ReadError::shape(
                    sh.path,
                    Some(sh.line_of(d)),
                    &format!("{where_}.dependencies"),
                    "an array of strings",
                )
            })?;
            deps.push(s.to_string());
        }
    }
    Ok(LockPackage {
        name: name.to_string(),
        version: version.to_string(),
        source,
        deps,
        line,
    })
}

/// Which section of a manifest lists a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Normal,
    Build,
    Dev,
    /// `[workspace.dependencies]`: a catalog members draw from.
    Workspace,
}

struct ManifestEntry {
    /// The crate's real name (`package = "..."` when the key renames it).
    name: String,
    requirement: Option<String>,
    section: Section,
    line: Option<u32>,
    registry: bool,
}

#[derive(Default)]
struct Manifest {
    package: Option<String>,
    members: Vec<String>,
    entries: Vec<ManifestEntry>,
}

impl Manifest {
    /// Listed only as a dev-dependency (a crate both in `[dependencies]` of one target and in
    /// `[dev-dependencies]` ships).
    fn is_dev_only(&self, name: &str) -> bool {
        let mut dev = false;
        for e in self.entries.iter().filter(|e| e.name == name) {
            match e.section {
                Section::Dev => dev = true,
                _ => return false,
            }
        }
        dev
    }
}

fn parse_manifest(path: &str, text: &str) -> Result<Manifest, ReadError> {
    let index = LineIndex::new(text);
    let doc = parse_toml(path, text, &index)?;
    let sh = TomlShape {
        path,
        index: &index,
    };
    let mut m = Manifest::default();
    if let Some(package) = sh.table(&doc, "package")? {
        m.package = sh.string(package, "name")?.map(str::to_string);
    }
    collect_sections(&sh, &doc, "", &mut m.entries)?;
    if let Some(targets) = sh.table(&doc, "target")? {
        for (cfg, value) in targets.iter() {
            if let Some(t) = toml_table(value.get_ref()) {
                let prefix = format!("target.{}.", cfg.get_ref());
                collect_sections(&sh, t, &prefix, &mut m.entries)?;
            }
        }
    }
    if let Some(ws) = sh.table(&doc, "workspace")? {
        if let Some(wdeps) = sh.table(ws, "dependencies")? {
            collect_table(
                &sh,
                wdeps,
                "workspace.dependencies",
                Section::Workspace,
                &mut m.entries,
            )?;
        }
        if let Some(members) = sh.array(ws, "members")? {
            m.members = members
                .iter()
                .filter_map(|v| toml_str(v.get_ref()).map(str::to_string))
                .collect();
        }
    }
    Ok(m)
}

fn collect_sections(
    sh: &TomlShape<'_>,
    table: &TomlDoc<'_>,
    prefix: &str,
    out: &mut Vec<ManifestEntry>,
) -> Result<(), ReadError> {
    for (key, section) in [
        ("dependencies", Section::Normal),
        ("build-dependencies", Section::Build),
        ("build_dependencies", Section::Build),
        ("dev-dependencies", Section::Dev),
        ("dev_dependencies", Section::Dev),
    ] {
        if let Some(t) = sh.table(table, key)? {
            collect_table(sh, t, &format!("{prefix}{key}"), section, out)?;
        }
    }
    Ok(())
}

fn collect_table(
    sh: &TomlShape<'_>,
    table: &TomlDoc<'_>,
    where_: &str,
    section: Section,
    out: &mut Vec<ManifestEntry>,
) -> Result<(), ReadError> {
    for (key, value) in table.iter() {
        let key_name = key.get_ref().to_string();
        let line = Some(sh.line_of(key));
        let entry = match value.get_ref() {
            TomlValue::String(req) => ManifestEntry {
                name: key_name,
                requirement: Some(req.to_string()),
                section,
                line,
                registry: true,
            },
            TomlValue::Table(t) => {
                let name = sh.string(t, "package")?.map_or(key_name, str::to_string);
                ManifestEntry {
                    name,
                    requirement: sh.string(t, "version")?.map(str::to_string),
                    section,
                    line,
                    registry: !t.contains_key("git") && !t.contains_key("path"),
                }
            }
            _ => {
                return Err(ReadError::shape(
                    sh.path,
                    line,
                    &format!("{where_}.{}", key.get_ref()),
                    "a version string or a table",
                ));
            }
        };
        out.push(entry);
    }
    Ok(())
}

/// The manifests of the workspace whose lock file this is, by crate name: the Cargo.toml
/// beside the lock, and each member it lists by an explicit path. Members given by glob
/// (`crates/*`) cannot be listed through a tree; their dev-dependencies then count as normal
/// ones, which errs toward reporting.
fn workspace_manifests(ctx: &mut Ctx<'_>) -> HashMap<String, Manifest> {
    let mut out = HashMap::new();
    let Some((path, text)) = ctx.sibling("Cargo.toml") else {
        return out;
    };
    let root = match parse_manifest(&path, &text) {
        Ok(m) => m,
        Err(e) => {
            ctx.note(format!("{e} (so dev-dependencies are not marked)"));
            return out;
        }
    };
    let dir = dir_of(ctx.path).to_string();
    let mut globbed = Vec::new();
    for member in root.members.iter().take(ctx.limits.max_included_files) {
        if member.contains(['*', '?', '[']) {
            globbed.push(member.clone());
            continue;
        }
        let Some(member_dir) = join(&dir, member) else {
            continue;
        };
        let Some((mpath, mtext)) = ctx.optional(&child(&member_dir, "Cargo.toml")) else {
            continue;
        };
        match parse_manifest(&mpath, &mtext) {
            Ok(m) => {
                if let Some(name) = m.package.clone() {
                    out.insert(name, m);
                }
            }
            Err(e) => ctx.note(format!("{e} (so its dev-dependencies are not marked)")),
        }
    }
    if !globbed.is_empty() {
        ctx.note(format!(
            "workspace members {} are globs and were not read: their dev-dependencies count as \
             normal dependencies",
            globbed.join(", ")
        ));
    }
    if let Some(name) = root.package.clone() {
        out.insert(name, root);
    }
    out
}

/// Cargo.toml alone: version requirements are ranges (`1.2` means `^1.2`), so only `=x.y.z`
/// pins are exact; the rest is summed up in a note.
pub(crate) fn read_manifest(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let m = parse_manifest(ctx.path, text)?;
    let mut deps = Deps::default();
    let mut ranges = 0usize;
    for e in &m.entries {
        let pinned = e
            .requirement
            .as_deref()
            .and_then(|r| r.trim().strip_prefix('='))
            .map(str::trim)
            .filter(|v| is_exact_semver(v));
        match pinned {
            Some(v) if e.registry => deps.push(Dependency {
                ecosystem: Ecosystem::CratesIo,
                name: e.name.clone(),
                version: v.to_string(),
                kind: DependencyKind::Direct,
                origin: Origin::Registry,
                dev: m.is_dev_only(&e.name),
                line: e.line,
            }),
            _ if e.registry && e.requirement.is_some() => ranges += 1,
            _ => {}
        }
    }
    if ranges > 0 {
        ctx.note(format!(
            "{ranges} dependencies are version requirements, not exact versions: Cargo.lock \
             holds the versions"
        ));
    }
    Ok(deps.into_vec())
}

/// `1.2.3`, `1.2.3-rc.1`, `1.2.3+build`: three numeric parts and nothing that makes a range.
fn is_exact_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests;
