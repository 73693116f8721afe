//! Cargo packages from git (P3 of docs/suites-at-head.md). The preparation reaches the
//! registries only, so a package a Cargo.lock takes from a git repository cannot be had;
//! refusing the whole preparation for it left every test of the workspace unrun (tauri,
//! alacritty: one git crate deep in one member's dependencies). Instead, as a Python VCS
//! requirement is dropped and named: each git package is named as not prepared, and a
//! **stand-in** takes its place, a package of the same name and version (with the features
//! the tree's manifests ask of it) whose library is a `compile_error!` naming it. Cargo's
//! `[patch]` for the git URL (in the preparation's and the runs' cargo configuration) points
//! at the stand-in, so the workspace resolves, everything else is vendored and compiled, the
//! members that do not need the git package run their tests, and those that do fail to
//! compile, saying why.
//!
//! What goes into the script (names, versions, URLs, features) is checked against the
//! characters each may hold: a lock file whose git package does not fit is refused, as
//! before.

use std::collections::{BTreeMap, BTreeSet};

use crate::mount::MOUNT;

/// A package a Cargo.lock takes from git.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitCrate {
    pub name: String,
    pub version: String,
    /// The repository's URL as the dependency names it (the lock's source, without `git+`,
    /// the query and the commit).
    pub url: String,
    /// Its `source = ` line in Cargo.lock (1-based).
    pub line: usize,
}

/// The git packages of a Cargo.lock, in order; `Err(line)` names the first one no stand-in
/// can be made for (a name, version or URL outside the characters the script carries).
pub fn locked(lock: &str) -> Result<Vec<GitCrate>, usize> {
    let mut out = Vec::new();
    let (mut name, mut version) = (None::<String>, None::<String>);
    for (i, line) in lock.lines().enumerate() {
        let line = line.trim();
        if line == "[[package]]" {
            (name, version) = (None, None);
        } else if let Some(v) = value(line, "name") {
            name = Some(v);
        } else if let Some(v) = value(line, "version") {
            version = Some(v);
        } else if let Some(source) = value(line, "source")
            && let Some(rest) = source.strip_prefix("git+")
        {
            let url = rest.split(['?', '#']).next().unwrap_or("").to_string();
            match (&name, &version) {
                (Some(n), Some(v)) if is_name(n) && is_version(v) && is_url(&url) => {
                    out.push(GitCrate {
                        name: n.clone(),
                        version: v.clone(),
                        url,
                        line: i + 1,
                    })
                }
                _ => return Err(i + 1),
            }
        }
    }
    Ok(out)
}

/// `key = "value"` of a lock file's line.
fn value(line: &str, key: &str) -> Option<String> {
    let rest = line
        .strip_prefix(key)?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    Some(rest.strip_prefix('"')?.strip_suffix('"')?.to_string())
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn is_version(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'))
}

fn is_url(s: &str) -> bool {
    (s.starts_with("https://") || s.starts_with("http://") || s.starts_with("ssh://"))
        && s.len() <= 300
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | '.' | '_' | '~' | '%' | '-' | '@')
        })
}

fn is_feature(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '.'))
}

/// Adds the features one manifest asks of the git packages (`git`, by name): a dependency
/// on one by name (its own `git`, or `workspace = true` naming the workspace's) with its
/// `features`, and `[features]` entries `dep/feature` or `dep?/feature`.
pub fn asked_features(
    doc: &toml::Table,
    git: &BTreeSet<String>,
    into: &mut BTreeMap<String, BTreeSet<String>>,
) {
    let mut keys: BTreeMap<String, String> = BTreeMap::new();
    for table in dependency_tables(doc) {
        for (key, spec) in table {
            let name = spec
                .get("package")
                .and_then(|p| p.as_str())
                .unwrap_or(key)
                .to_string();
            if !git.contains(&name) {
                continue;
            }
            let asked = into.entry(name.clone()).or_default();
            for f in spec
                .get("features")
                .and_then(|f| f.as_array())
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str())
            {
                asked.insert(f.to_string());
            }
            keys.insert(key.clone(), name);
        }
    }
    for values in doc
        .get("features")
        .and_then(|f| f.as_table())
        .into_iter()
        .flat_map(|t| t.values())
        .filter_map(|v| v.as_array())
    {
        for entry in values.iter().filter_map(|v| v.as_str()) {
            if let Some((dep, feature)) = entry.split_once('/')
                && let Some(name) = keys.get(dep.trim_end_matches('?'))
            {
                into.entry(name.clone())
                    .or_default()
                    .insert(feature.to_string());
            }
        }
    }
}

/// Every dependency table of a manifest: the package's, the workspace's and each target's.
pub fn dependency_tables(doc: &toml::Table) -> Vec<&toml::Table> {
    const KINDS: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<&toml::Table> = KINDS
        .iter()
        .filter_map(|k| doc.get(*k).and_then(|t| t.as_table()))
        .collect();
    if let Some(ws) = doc
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(|d| d.as_table())
    {
        tables.push(ws);
    }
    for (_, target) in doc
        .get("target")
        .and_then(|t| t.as_table())
        .into_iter()
        .flatten()
    {
        tables.extend(
            KINDS
                .iter()
                .filter_map(|k| target.get(*k).and_then(|t| t.as_table())),
        );
    }
    tables
}

/// The shell lines that write each stand-in under `/deps/git-crates` and its `[patch]`
/// into `$CARGO_HOME/config.toml` (before `cargo vendor`) and `/deps/git-patch.toml` (which
/// the runs' configuration ends with).
pub fn stand_ins_script(
    crates: &[GitCrate],
    features: &BTreeMap<String, BTreeSet<String>>,
) -> String {
    let mut script = String::new();
    let mut patches: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (i, c) in crates.iter().enumerate() {
        let dir = format!("{MOUNT}/git-crates/{i}-{}", c.name);
        let mut manifest = format!(
            "'[package]' 'name = \"{}\"' 'version = \"{}\"' 'edition = \"2015\"' '' '[features]'",
            c.name, c.version
        );
        for f in features
            .get(&c.name)
            .into_iter()
            .flatten()
            .filter(|f| is_feature(f))
        {
            manifest.push_str(&format!(" '\"{f}\" = []'"));
        }
        script.push_str(&format!(
            "mkdir -p {dir}/src\n\
             printf '%s\\n' {manifest} > {dir}/Cargo.toml\n\
             printf '%s\\n' 'compile_error!(\"{name} {version} comes from git ({url}): it could not be prepared (the preparation reaches the registries only)\");' > {dir}/src/lib.rs\n",
            name = c.name,
            version = c.version,
            url = c.url,
        ));
        patches
            .entry(&c.url)
            .or_default()
            .push(format!("{} = {{ path = \"{dir}\" }}", c.name));
    }
    for (url, lines) in patches {
        script.push_str(&format!(
            "printf '%s\\n' '' '[patch.\"{url}\"]' {} >> {MOUNT}/git-patch.toml\n",
            lines
                .iter()
                .map(|l| format!("'{l}'"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    script.push_str(&format!(
        "mkdir -p \"$CARGO_HOME\" && cp {MOUNT}/git-patch.toml \"$CARGO_HOME/config.toml\"\n"
    ));
    script
}

/// The crates-io index's URL, the other name of `[patch.crates-io]`.
const CRATES_IO_INDEX: &str = "https://github.com/rust-lang/crates.io-index";

/// A workspace's `[patch.crates-io]` entries that take a registry package from git
/// (alacritty's `x11-clipboard = { git = … }`, tauri's `schemars_derive`) and that the
/// lock file takes from git (`git`, by name): the manifest without them, and their names.
/// The patch only overrides a package the registry has, so the registry's release stands
/// in for it: the preparation resolves the manifest without the entry (cargo moves the
/// lock's git pin to the registry's newest matching release, every other pin kept) and the
/// runs' configuration patches the name to the vendored release
/// ([`registry_stand_ins_script`]); cargo's configuration takes precedence over a
/// manifest's patch of the same name, so the git repository is never asked for. None when
/// the manifest has no such entry.
pub fn without_registry_git_patches(
    doc: &toml::Table,
    git: &BTreeSet<String>,
) -> Option<(toml::Table, Vec<String>)> {
    let mut out = doc.clone();
    let mut names = Vec::new();
    let patch = out.get_mut("patch")?.as_table_mut()?;
    for (registry, table) in patch.iter_mut() {
        if registry != "crates-io" && registry.trim_end_matches('/') != CRATES_IO_INDEX {
            continue;
        }
        let Some(table) = table.as_table_mut() else {
            continue;
        };
        table.retain(|key, spec| {
            let name = spec
                .get("package")
                .and_then(|p| p.as_str())
                .unwrap_or(key)
                .to_string();
            let from_git = spec.get("git").is_some() && git.contains(&name) && is_name(&name);
            if from_git {
                names.push(name);
            }
            !from_git
        });
    }
    (!names.is_empty()).then_some((out, names))
}

/// The shell lines, run after `cargo vendor`, that patch each name of `names` (packages a
/// workspace's `[patch.crates-io]` took from git) to the registry's release vendored in
/// its place, in the preparation's and the runs' configuration
/// (`/deps/cargo-config.toml`).
pub fn registry_stand_ins_script(names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    let mut script = format!("printf '\\n[patch.crates-io]\\n' >> {MOUNT}/cargo-config.toml\n");
    for name in names {
        script.push_str(&format!(
            "d={MOUNT}/vendor/{name}; [ -d \"$d\" ] || d=$(ls -d {MOUNT}/vendor/{name}-[0-9]* 2>/dev/null | tail -n 1)\n\
             [ -z \"$d\" ] || printf '%s = {{ path = \"%s\" }}\\n' '{name}' \"$d\" >> {MOUNT}/cargo-config.toml\n"
        ));
    }
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = "version = 4\n\n[[package]]\nname = \"clip\"\nversion = \"0.3.1\"\nsource = \"git+https://github.com/o/clip.git?rev=abc#0123\"\n\n[[package]]\nname = \"itoa\"\nversion = \"1.0.19\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n";

    #[test]
    fn a_locks_git_packages_are_named_with_their_repository() {
        let found = locked(LOCK).expect("git packages");
        assert_eq!(
            found,
            [GitCrate {
                name: "clip".into(),
                version: "0.3.1".into(),
                url: "https://github.com/o/clip.git".into(),
                line: 6,
            }]
        );
        // A URL the script cannot carry is refused at its line.
        let odd = LOCK.replace("https://github.com/o/clip.git", "https://x/a'b");
        assert_eq!(locked(&odd), Err(6));
    }

    #[test]
    fn the_features_a_tree_asks_of_a_git_dependency_are_the_stand_ins() {
        let doc: toml::Table = "[dependencies]\nc = { package = \"clip\", git = \"https://x/clip\", features = [\"x11\"] }\nitoa = { version = \"1\", features = [\"no\"] }\n[dev-dependencies]\nclip = { workspace = true, features = [\"dev\"] }\n[features]\nwayland = [\"c?/wayland\", \"itoa/std\"]\n"
            .parse()
            .expect("toml");
        let mut asked = BTreeMap::new();
        asked_features(&doc, &BTreeSet::from(["clip".to_string()]), &mut asked);
        let want: BTreeSet<String> = ["dev", "wayland", "x11"].map(String::from).into();
        assert_eq!(asked, BTreeMap::from([("clip".to_string(), want)]));
    }

    #[test]
    fn a_workspaces_git_patch_of_a_registry_package_is_left_to_the_registry() {
        let doc: toml::Table = "[workspace]\nmembers = [\"a\"]\n[patch.crates-io]\nclip = { git = \"https://x/clip.git\", rev = \"abc\" }\nown = { path = \"own\" }\n[patch.\"https://x/other\"]\nother = { git = \"https://x/fork\" }\n"
            .parse()
            .expect("toml");
        let git = BTreeSet::from(["clip".to_string(), "other".to_string()]);
        let (stripped, names) = without_registry_git_patches(&doc, &git).expect("a git patch");
        assert_eq!(names, ["clip"]);
        let patch = stripped["patch"].as_table().expect("patch");
        let crates_io = patch["crates-io"].as_table().expect("crates-io");
        assert!(!crates_io.contains_key("clip"), "{stripped}");
        assert!(crates_io.contains_key("own"), "{stripped}");
        assert!(
            patch["https://x/other"].get("other").is_some(),
            "{stripped}"
        );
        // A lock that does not take it from git, or no patch at all: nothing to do.
        assert!(without_registry_git_patches(&doc, &BTreeSet::new()).is_none());
        let script = registry_stand_ins_script(&names);
        assert!(script.contains("[patch.crates-io]"), "{script}");
        assert!(script.contains("/deps/vendor/clip"), "{script}");
    }
}
