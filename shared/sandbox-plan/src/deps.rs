//! What a tree's dependencies need prepared, read from its declaration files alone
//! (never its code): the preparation's command, files and environment for each language,
//! what is refused by name before anything runs, the cache key, and the record a
//! preparation's own report makes.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::record::{DependencyRecord, NotPrepared, PackageManager};
use crate::registries::AllowList;
use crate::tree::TreeRecord;
use crate::{Language, RequestError, cargo_git, node_pm, python};

pub use crate::mount::MOUNT;

/// The version of the preparation itself: a change to what it does makes new entries.
const VERSION: &str = "proven-sandbox dependencies v5";
const PYTHON_SCRIPT: &str = include_str!("scripts/prepare.py");
/// What the inspection container runs to read what setup.py declares.
pub const INSPECT_SETUP_SCRIPT: &str = include_str!("scripts/inspect-setup.py");
/// The marker before what the inspection container printed of setup.py.
const SETUP_MARKER: &str = "@@proven-setup@@";
const NODE_SCRIPT: &str = include_str!("scripts/prepare-node.js");
/// The dated view of an npm registry whose publish times are a mirror's (started by
/// prepare-node.js when `--before` finds no release that old).
const NPM_DATED_SCRIPT: &str = include_str!("scripts/npm-dated.py");
/// Manifests a Node or Rust preparation copies at most.
const MAX_MANIFESTS: usize = 500;

/// Where a preparation may fetch from and how long a call may take, as the operator
/// configured them.
#[derive(Debug, Clone, Copy)]
pub struct PlanSettings<'a> {
    pub registries: &'a AllowList,
    pub pip_index_url: Option<&'a str>,
    pub npm_registry: Option<&'a str>,
    pub goproxy: &'a str,
    pub gosumdb: &'a str,
    pub prepare_timeout: Duration,
}

/// What a preparation container runs, and what decided it.
#[derive(Debug, Default)]
pub struct Plan {
    /// The files whose contents decide the preparation (the cache key), with contents.
    pub inputs: Vec<(String, Vec<u8>)>,
    /// The command inside the container (after the forwarder).
    pub command: Vec<String>,
    /// Its environment (on top of the image's and the proxy's).
    pub env: Vec<String>,
    /// Files written to /prep (the plan, a script).
    pub files: Vec<(String, Vec<u8>)>,
    /// Refused before anything ran.
    pub refused: Vec<NotPrepared>,
    /// The project asks for a language version the image does not have.
    pub notes: Vec<String>,
    /// The variables a test run needs to find what was prepared.
    pub run_env: Vec<String>,
    /// Python: what the project says of the Python it needs (specifier, where).
    pub python_requires: Vec<(String, String)>,
    /// Node: package.json `engines.node`, the Node the project says it needs.
    pub node_engines: Option<String>,
    /// Python: unpinned requirements resolved as of this instant (part of the cache key).
    pub resolve_before: Option<String>,
    /// Python: setup.py declares requirements, read in an inspection container first.
    pub inspect_setup_py: bool,
    /// Python: the project itself is a package, installed per tree into a project layer.
    pub project: bool,
    /// Rust: the preparation builds from a skeleton of the manifests (with stub targets),
    /// never the tree. (Python's sees its declaration files alone, always.)
    pub skeleton: bool,
}

impl Plan {
    /// The key of the layer this plan makes ([`cache_key`]): its input files, and the files
    /// it writes to /prep, which say what the tree decided beyond those files (plan.json's
    /// package manager, read from a CI workflow no input holds): a layer is never served to
    /// a tree whose preparation would differ.
    pub fn key(&self, language: Language, image: &str, sources: &[String]) -> String {
        let written = self
            .files
            .iter()
            .map(|(name, bytes)| (format!("/prep/{name}"), bytes.clone()));
        // The command and its variables too: what the tree decided that goes into them
        // (the features a Rust CI tests with) makes another layer.
        let command = (
            "/prep/.command".to_string(),
            self.command
                .iter()
                .chain(&self.env)
                .flat_map(|w| [w.as_bytes(), b"\0"])
                .flatten()
                .copied()
                .collect::<Vec<u8>>(),
        );
        let keyed: Vec<(String, Vec<u8>)> = self
            .inputs
            .iter()
            .cloned()
            .chain(written)
            .chain(std::iter::once(command))
            .collect();
        cache_key(language, image, sources, &keyed)
    }

    /// Python: the plan of a tree's project layer, made over the environment `self`
    /// prepared: the project alone, with the files the run adds removed before the build.
    /// `scm_version`: what a build reading its version from git gets (the tree has no git
    /// metadata; `0.0.0` without it).
    pub fn project_plan(&self, tree: &TreeRecord, scm_version: Option<&str>) -> Plan {
        let mut plan = Plan {
            inputs: self.inputs.clone(),
            ..Plan::default()
        };
        let mut json: serde_json::Value = self
            .files
            .iter()
            .find(|(n, _)| n == "plan.json")
            .and_then(|(_, b)| serde_json::from_slice(b).ok())
            .unwrap_or_else(|| serde_json::json!({}));
        json["stage"] = "project".into();
        if let Some(version) = scm_version {
            json["scm_version"] = version.into();
        }
        json["requirements"] = serde_json::json!([]);
        json["remove"] = tree
            .added_files
            .iter()
            .map(|f| f.path.clone())
            .collect::<Vec<_>>()
            .into();
        plan.files = vec![
            ("plan.json".into(), plan_json(&json)),
            ("prepare.py".into(), PYTHON_SCRIPT.as_bytes().to_vec()),
        ];
        plan.command = self.command.clone();
        plan.env = self.env.clone();
        plan
    }

    /// Python: what the inspection container printed of setup.py (`output`) joins the plan:
    /// as an input (part of the key) and in the preparation's plan file.
    pub fn add_setup_inspection(&mut self, output: &str) {
        let (declared, report) = read_inspection(output);
        let bytes = serde_json::to_vec(&declared).unwrap_or_default();
        self.inputs.push(("setup.py (as evaluated)".into(), bytes));
        if let Some((_, json)) = self.files.iter_mut().find(|(n, _)| n == "plan.json")
            && let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(json)
        {
            value["setup_declared"] = declared;
            value["setup_report"] = report;
            *json = plan_json(&value);
        }
    }
}

/// What the inspection printed after its marker, and what the record says of it.
fn read_inspection(output: &str) -> (serde_json::Value, serde_json::Value) {
    let tail = |text: &str| {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(6)..].join("\n")
    };
    let Some(at) = output.rfind(SETUP_MARKER) else {
        return (
            serde_json::json!({}),
            serde_json::json!({"evaluated": false, "error": tail(output)}),
        );
    };
    let line = output[at + SETUP_MARKER.len()..]
        .lines()
        .next()
        .unwrap_or("");
    match serde_json::from_str::<serde_json::Value>(line.trim()) {
        Ok(found) if found.is_object() => {
            let report = serde_json::json!({
                "evaluated": true,
                "name": found["name"],
                "python_requires": found["python_requires"],
                "read_with": found["read_with"],
            });
            (found, report)
        }
        Ok(_) | Err(_) => (
            serde_json::json!({}),
            serde_json::json!({"evaluated": false, "error": "its output did not read"}),
        ),
    }
}

/// What a preparation script wrote of itself (`/deps/report.json`).
#[derive(Debug, Default, Deserialize)]
pub struct Report {
    /// The interpreter's version (Python).
    #[serde(default)]
    python: Option<String>,
    /// Node's version (`v20.20.2`).
    #[serde(default)]
    node: Option<String>,
    /// Node: the package manager that installed, its version and what chose it.
    #[serde(default)]
    package_manager: Option<PackageManager>,
    #[serde(default)]
    resolved: bool,
    #[serde(default)]
    not_prepared: Vec<NotPrepared>,
    #[serde(default)]
    refused: Vec<NotPrepared>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    installed: Vec<String>,
    /// Why the preparation stopped short (its time ran out): what it did not reach is
    /// named in `not_prepared`, and the environment is never cached.
    #[serde(default)]
    incomplete: Option<String>,
}

/// The note a record carries when its preparation stopped short.
fn incomplete_note(why: &str) -> String {
    format!(
        "{why}: the environment holds what was installed in time, is used for this run only, and is prepared again by the next"
    )
}

impl Report {
    /// Why the preparation stopped short of what was asked (its time ran out), if it did:
    /// such an environment serves its run and is never cached.
    pub fn incomplete(&self) -> Option<&str> {
        self.incomplete.as_deref()
    }

    /// What the preparation noted of itself.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Adds what a project layer's preparation reported to the record of its environment.
    pub fn add_to(self, record: &mut DependencyRecord) {
        let stopped = self.incomplete.as_deref().map(incomplete_note);
        for note in self.notes.into_iter().chain(stopped) {
            if !record.notes.contains(&note) {
                record.notes.push(note);
            }
        }
        let mut not_prepared = std::mem::take(&mut record.not_prepared);
        not_prepared.extend(self.not_prepared);
        record.not_prepared = one_entry_per_requirement(not_prepared);
    }

    /// The report from what the preparation wrote; bytes that are not the report's JSON
    /// make an empty report that says so in a note.
    pub fn from_json(bytes: &[u8]) -> Report {
        serde_json::from_slice(bytes).unwrap_or_else(|e| Report {
            notes: vec![format!("report.json is not a preparation report: {e}")],
            ..Report::default()
        })
    }
}

fn read_small(src: &Path, rel: &str) -> Option<Vec<u8>> {
    let path = src.join(rel);
    let meta = fs::symlink_metadata(&path).ok()?;
    (meta.is_file() && meta.len() <= 4 << 20)
        .then(|| fs::read(&path).ok())
        .flatten()
}

/// Files named `name` in the tree (not under node_modules, target, .git, vendor), up to a
/// bound, relative.
fn find_named(src: &Path, names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = fs::read_dir(src.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = rel.join(&name);
            if kind.is_dir() {
                if !matches!(
                    name.as_str(),
                    "node_modules" | "target" | ".git" | "vendor" | "testdata" | "fixtures"
                ) && !name.starts_with('.')
                {
                    stack.push(path);
                }
            } else if kind.is_file() && names.contains(&name.as_str()) {
                out.push(path.to_string_lossy().into_owned());
                if out.len() >= MAX_MANIFESTS {
                    return out;
                }
            }
        }
    }
    out.sort();
    out
}

/// A tree's files as text, where `DIR/` lists the folder's file names (the CI's
/// workflows), as [`crate::suite::documented_suite`] reads a revision.
fn listed_reader(src: &Path) -> impl Fn(&str) -> Option<String> + '_ {
    move |f: &str| match f.strip_suffix('/') {
        Some(dir) => fs::read_dir(src.join(dir)).ok().map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("\n")
        }),
        None => read_small(src, f).map(|b| String::from_utf8_lossy(&b).into_owned()),
    }
}

fn plan_json(value: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec_pretty(value).unwrap_or_default()
}

/// The preparation a tree needs, or None when it declares nothing to prepare.
pub fn plan(
    config: &PlanSettings<'_>,
    language: Language,
    src: &Path,
    resolve_before: Option<&str>,
) -> Result<Option<Plan>, RequestError> {
    match language {
        Language::Python => Ok(plan_python(config, src, resolve_before)),
        Language::Node => plan_node(config, src, resolve_before),
        Language::Rust => plan_rust(src, resolve_before),
        Language::Go => Ok(plan_go(config, src)),
    }
}

fn plan_python(
    config: &PlanSettings<'_>,
    src: &Path,
    resolve_before: Option<&str>,
) -> Option<Plan> {
    let declared = python::read_plan(src);
    if declared.requirements.is_empty() && !declared.project && !declared.setup_py {
        return None;
    }
    let mut plan = Plan {
        refused: declared
            .refused
            .iter()
            .map(|r| NotPrepared {
                what: r.what.clone(),
                source: r.source.clone(),
                reason: r.reason.clone(),
            })
            .collect(),
        ..Plan::default()
    };
    for f in &declared.inputs {
        if let Some(bytes) = read_small(src, f) {
            plan.inputs.push((f.clone(), bytes));
        }
    }
    // Requirements no lock file pins: resolved as of the review's instant when it gives one
    // (part of the cache key then), else now. A lock file's pins are its own, but what it
    // leaves to the installer is of its date too: the setuptools its sdists are built with
    // (today's has lost what a setup.py of 2019 imports: `Feature`, the old `packaging`).
    if let (Some(lock), Some(at)) = (&declared.pinned_by, resolve_before) {
        plan.notes.push(format!(
            "{lock} pins the versions; the tools its sdists are built with, and what it does not pin, are as of {at}"
        ));
    }
    if declared.pinned_by.is_none() && !declared.requirements.is_empty() {
        plan.notes.push(match resolve_before {
            Some(at) => format!(
                "no lock file pins the Python requirements: versions resolved as of {at}, not pinned by the project"
            ),
            None => "no lock file pins the Python requirements: versions resolved now, not pinned by the project"
                .into(),
        });
    }
    plan.resolve_before = resolve_before.map(str::to_string);
    // No code of the tree runs in this preparation (its layer is shared by every tree with
    // the same declarations): setup.py is read in an inspection container before it, the
    // project itself installed per tree after it.
    plan.inspect_setup_py = declared.setup_py;
    plan.project = declared.project;
    let json = serde_json::json!({
        "requirements": declared.requirements,
        "constraints": declared.constraints,
        "extras": declared.extras,
        "test_names": ["test", "tests", "testing", "dev", "develop", "development", "devel", "check", "ci"],
        "index_url": config.pip_index_url,
        "resolve_before": resolve_before,
        "call_timeout": config.prepare_timeout.as_secs(),
    });
    plan.files.push(("plan.json".into(), plan_json(&json)));
    plan.files
        .push(("prepare.py".into(), PYTHON_SCRIPT.as_bytes().to_vec()));
    plan.command = vec![
        "python3".into(),
        "/prep/prepare.py".into(),
        "/prep/plan.json".into(),
    ];
    plan.env.push("PIP_NO_CACHE_DIR=0".into());
    plan.env.push("PIP_CACHE_DIR=/tmp/pip-cache".into());
    plan.run_env = vec![format!("VIRTUAL_ENV={MOUNT}/venv")];
    // The Python the image runs is decided by the image; a project that says it needs
    // another is named in the record (checked against the version the preparation ran).
    plan.python_requires = declared.python_requires.clone();
    Some(plan)
}

/// Whether a package.json dependency value fetches from outside the registry.
fn npm_outside_registry(value: &str) -> Option<&'static str> {
    let v = value.trim();
    // pnpm's and yarn's own protocols: a package of the workspace, a catalog's range.
    if v.starts_with("workspace:") || v.starts_with("catalog:") {
        return None;
    }
    if v.starts_with("git")
        || v.contains("://")
        || v.starts_with("github:")
        || v.starts_with("gitlab:")
        || v.starts_with("bitbucket:")
    {
        return Some("a git or URL dependency fetches from elsewhere");
    }
    if v.starts_with("file:") || v.starts_with("link:") || v.starts_with('.') || v.starts_with('/')
    {
        return Some("a file or link dependency builds code outside the registry");
    }
    // `user/repo` is GitHub shorthand.
    if v.contains('/') && !v.starts_with("npm:") && !v.starts_with('@') {
        return Some("a GitHub shorthand fetches from elsewhere");
    }
    None
}

fn plan_node(
    config: &PlanSettings<'_>,
    src: &Path,
    resolve_before: Option<&str>,
) -> Result<Option<Plan>, RequestError> {
    let Some(manifest) = read_small(src, "package.json") else {
        return Ok(None);
    };
    let package: serde_json::Value =
        serde_json::from_slice(&manifest).map_err(|e| RequestError::UnsupportedDependency {
            file: "package.json".into(),
            line: e.line(),
            reason: format!("does not parse as JSON: {e}"),
        })?;
    let mut plan = Plan {
        node_engines: package["engines"]["node"]
            .as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        ..Plan::default()
    };
    for field in ["dependencies", "devDependencies", "optionalDependencies"] {
        for (name, value) in package[field].as_object().into_iter().flatten() {
            if let Some(reason) = value.as_str().and_then(npm_outside_registry) {
                plan.refused.push(NotPrepared {
                    what: name.clone(),
                    source: format!("package.json {field}"),
                    reason: reason.into(),
                });
            }
        }
    }
    let text = |f: &str| read_small(src, f).map(|b| String::from_utf8_lossy(&b).into_owned());
    let listed = listed_reader(src);
    let choice = node_pm::choose(&listed);
    let files = node_files(config, src, &choice, &mut plan);
    // pnpm's workspace (its packages, its `catalog:` ranges) decides the install too.
    let workspace = text("pnpm-workspace.yaml").and_then(|t| node_pm::workspace(&t));
    let refused: Vec<serde_json::Value> = plan
        .refused
        .iter()
        .map(|r| serde_json::json!({"what": r.what, "source": r.source, "reason": r.reason}))
        .collect();
    // A manager whose version the project does not declare (`pnpm@9`): its newest release
    // as of the review's instant, when it gives one; and npm with no lock file of its own
    // resolves the project's ranges as of that instant, the releases its code was written
    // against (part of the cache key then).
    let unpinned_npm = choice.install.is_none()
        && !["package-lock.json", "npm-shrinkwrap.json"]
            .iter()
            .any(|f| src.join(f).is_file());
    let before = resolve_before.filter(|_| {
        unpinned_npm
            || choice
                .install
                .as_deref()
                .and_then(|i| i.rsplit_once('@'))
                .is_some_and(|(_, v)| !v.contains('.'))
    });
    plan.resolve_before = before.map(str::to_string);
    if let (true, Some(at)) = (unpinned_npm, before) {
        // The script says the same (one note in the record), and when the registry has no
        // release that old, that it resolved now instead.
        let now = "no package-lock.json: versions resolved now, not pinned by the project";
        for note in plan.notes.iter_mut().filter(|n| *n == now) {
            *note = format!(
                "no package-lock.json: versions resolved as of {at}, not pinned by the project"
            );
        }
    }
    // tap 18's plugins: built into tap's Test class here, where the layer is writable, and
    // those no manifest lists installed, as tap does from the registry when it starts.
    let tap_plugins = crate::test_installs::tap_plugins(text(".taprc").as_deref(), &package);
    let mut test_installs = crate::test_installs::node_test_installs(&package);
    for plugin in crate::test_installs::tap_plugin_installs(&tap_plugins, &package) {
        if !test_installs.iter().any(|i| i.name == plugin.name) {
            test_installs.push(plugin);
        }
    }
    let json = serde_json::json!({
        "files": files,
        "refused": refused,
        "call_timeout": config.prepare_timeout.as_secs(),
        "manager": choice,
        "catalogs": workspace.map(|w| w.catalogs).unwrap_or_default(),
        "before": before,
        // What the project's scripts install at test time (no network then): installed here.
        "test_installs": test_installs,
        "tap_plugins": tap_plugins,
    });
    plan.files.push(("plan.json".into(), plan_json(&json)));
    plan.files
        .push(("prepare-node.js".into(), NODE_SCRIPT.as_bytes().to_vec()));
    plan.files
        .push(("npm-dated.py".into(), NPM_DATED_SCRIPT.as_bytes().to_vec()));
    // Where the preparation linked the image's Chromium as Playwright's builds.
    plan.run_env
        .push(format!("PLAYWRIGHT_BROWSERS_PATH={MOUNT}/ms-playwright"));
    // The manager kept in the layer runs the project's scripts as it is: it never switches
    // to another version of itself (pnpm's `packageManager` check), which needs the network.
    plan.run_env
        .push("npm_config_manage_package_manager_versions=false".into());
    plan.command = vec![
        "node".into(),
        "/prep/prepare-node.js".into(),
        "/prep/plan.json".into(),
    ];
    if let Some(registry) = config.npm_registry {
        plan.env.push(format!("npm_config_registry={registry}"));
    }
    Ok(Some(plan))
}

/// The files a Node preparation copies (every package.json, the chosen manager's lock file,
/// pnpm-workspace.yaml), added to the plan's inputs; an npm lock file's packages from off
/// the registries refused; a note when no lock file of the manager pins the versions.
/// The tree's folders a manifest's `file:` and `link:` dependencies name (not tarballs,
/// nothing outside the tree), relative to the tree.
fn local_folders(src: &Path, manifest: &str) -> Vec<String> {
    let Some(package) = read_small(src, manifest)
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return Vec::new();
    };
    let dir = Path::new(manifest).parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for field in ["dependencies", "devDependencies", "optionalDependencies"] {
        for spec in package[field]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(_, v)| v.as_str())
        {
            let Some(path) = spec
                .strip_prefix("file:")
                .or_else(|| spec.strip_prefix("link:"))
            else {
                continue;
            };
            if [".tgz", ".tar.gz", ".tar"]
                .iter()
                .any(|x| path.ends_with(x))
            {
                continue;
            }
            // Normalised by hand: the folder need not exist for the join to be read.
            let mut parts: Vec<&str> = dir.iter().filter_map(|c| c.to_str()).collect();
            let mut inside = true;
            for c in Path::new(path).components() {
                match c {
                    std::path::Component::Normal(n) => parts.push(n.to_str().unwrap_or("")),
                    std::path::Component::ParentDir => inside &= parts.pop().is_some(),
                    std::path::Component::CurDir => {}
                    _ => inside = false,
                }
            }
            if inside && !parts.is_empty() && !parts.iter().any(|p| p.is_empty()) {
                out.push(parts.join("/"));
            }
        }
    }
    out
}

fn node_files(
    config: &PlanSettings<'_>,
    src: &Path,
    choice: &node_pm::Choice,
    plan: &mut Plan,
) -> Vec<String> {
    let mut files = find_named(src, &["package.json"]);
    // A manifest of the tree that is no JSON object is a fixture (resolve's
    // `test/resolver/malformed_package_json`), which no install reads: the preparation
    // stopped at it. The root's own stays, and its preparation names it.
    files.retain(|f| {
        f == "package.json"
            || read_small(src, f)
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some_and(|v| v.is_object())
    });
    if choice.manager == node_pm::Manager::Npm {
        for lock in ["package-lock.json", "npm-shrinkwrap.json"] {
            if let Some(bytes) = read_small(src, lock) {
                // A `resolved` URL off the registry allow-list is refused by name.
                plan.refused
                    .extend(resolved_elsewhere(lock, &bytes, config.registries));
                files.push(lock.into());
            }
        }
    } else if src.join(choice.manager.lock_file()).is_file() {
        files.push(choice.manager.lock_file().into());
        // pnpm's lock file names every workspace package (its `importers`), those kept in a
        // folder the search passes over too (vite's `packages/**/__tests__/**` fixtures):
        // without their manifests pnpm stops (ERR_PNPM_LINKED_PKG_DIR_NOT_FOUND).
        if choice.manager == node_pm::Manager::Pnpm
            && let Some(lock) = read_small(src, "pnpm-lock.yaml")
        {
            files.extend(
                node_pm::pnpm_importers(&String::from_utf8_lossy(&lock))
                    .into_iter()
                    .map(|dir| format!("{dir}/package.json"))
                    .filter(|f| read_small(src, f).is_some())
                    .take(MAX_MANIFESTS),
            );
        }
    }
    // The folders of the tree that `file:` and `link:` dependencies name, wherever they are
    // (a fixture folder the search passes over, with no lock file to name it): without
    // their manifests the install stops (pnpm: ERR_PNPM_LINKED_PKG_DIR_NOT_FOUND).
    let mut at = 0;
    while at < files.len() && files.len() < MAX_MANIFESTS {
        let manifest = files[at].clone();
        at += 1;
        if !manifest.ends_with("package.json") {
            continue;
        }
        for folder in local_folders(src, &manifest) {
            let named = format!("{folder}/package.json");
            if !files.contains(&named) && read_small(src, &named).is_some() {
                files.push(named);
            }
        }
    }
    // pnpm's workspace (its packages, its `catalog:` ranges) decides the install too.
    if src.join("pnpm-workspace.yaml").is_file() {
        files.push("pnpm-workspace.yaml".into());
    }
    // And the patches it applies to dependencies (pnpm's `patchedDependencies`, yarn's
    // `patch:`): the install fails without them.
    let package = read_small(src, "package.json")
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .unwrap_or_default();
    let workspace = read_small(src, "pnpm-workspace.yaml")
        .and_then(|b| node_pm::workspace(&String::from_utf8_lossy(&b)));
    files.extend(
        node_pm::patch_files(&package, workspace.as_ref())
            .into_iter()
            .filter(|f| read_small(src, f).is_some()),
    );
    files.sort();
    files.dedup();
    for f in &files {
        if let Some(bytes) = read_small(src, f) {
            plan.inputs.push((f.clone(), bytes));
        }
    }
    let lock = match choice.manager {
        node_pm::Manager::Npm => ["package-lock.json", "npm-shrinkwrap.json"]
            .into_iter()
            .find(|f| files.iter().any(|x| x == f)),
        other => Some(other.lock_file()).filter(|f| files.iter().any(|x| x == f)),
    };
    if lock.is_none() {
        let other = ["yarn.lock", "pnpm-lock.yaml", "package-lock.json"]
            .into_iter()
            .find(|f| src.join(f).is_file());
        plan.notes.push(match other {
            Some(f) => format!(
                "{f} is not read by {}: versions resolved now from package.json, not pinned by the project",
                choice.manager.as_str()
            ),
            None => format!(
                "no {}: versions resolved now, not pinned by the project",
                choice.manager.lock_file()
            ),
        });
    }
    files
}

/// The packages of an npm lock file whose `resolved` URL is not on the registry
/// allow-list, by name.
fn resolved_elsewhere(lock: &str, bytes: &[u8], registries: &AllowList) -> Vec<NotPrepared> {
    let mut refused = Vec::new();
    let Ok(lock_json) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return refused;
    };
    for (key, entry) in lock_json["packages"].as_object().into_iter().flatten() {
        if let Some(url) = entry["resolved"].as_str() {
            let host = url
                .split("://")
                .nth(1)
                .and_then(|r| r.split('/').next())
                .unwrap_or_default();
            let (h, port) = match host.rsplit_once(':') {
                Some((h, p)) => (h, p.parse().unwrap_or(443)),
                None => (host, if url.starts_with("http://") { 80 } else { 443 }),
            };
            if !url.starts_with("http") || !registries.allows(h, port) {
                let name = key.rsplit("node_modules/").next().unwrap_or(key);
                refused.push(NotPrepared {
                    what: name.to_string(),
                    source: lock.into(),
                    reason: format!("resolved from {url}, not one of the operator's registries"),
                });
            }
        }
    }
    refused
}

/// Node: the workspace packages a prepared layer (`dir`) holds a node_modules of, by their
/// folder in the tree (`packages/app`), the root's left out (proven-entry links it). Read
/// without following a link, to a bounded depth and count; a folder whose name is not
/// plain (only letters, digits, `._@+-`) is left out.
pub fn node_workspace_modules(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![(PathBuf::new(), 0usize)];
    while let Some((rel, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) || name.starts_with('.') {
                continue;
            }
            let plain = name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '@' | '+' | '-'));
            if name == "node_modules" {
                if depth > 0 {
                    found.push(rel.to_string_lossy().into_owned());
                }
            } else if plain && depth < 12 && found.len() < MAX_MANIFESTS {
                stack.push((rel.join(&name), depth + 1));
            }
        }
    }
    found.sort();
    found
}

/// A tree's folder that a `file:` dependency names and pnpm installs as a copy: the run
/// copies it into its own node_modules (`prepare-node.js` `fileFoldersToTree`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCopy {
    /// The copy's folder under `node_modules/.proven-file/`.
    pub key: String,
    /// The tree's folder.
    pub folder: String,
    /// The package's name.
    pub name: String,
    /// pnpm's store folder of its copy (`node_modules/.pnpm/X/node_modules`), in the layer.
    pub store: String,
}

/// The copies the preparation listed (`.proven-file-copies`); a line with a character the
/// run's shell could not carry quoted is left out (its link then dangles, as pnpm's copy
/// of only a manifest failed).
pub fn node_file_copies(dir: &Path) -> Vec<FileCopy> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "@._+/-_".contains(c))
    };
    fs::read_to_string(dir.join(".proven-file-copies"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut f = line.split('\t');
            let copy = FileCopy {
                key: f.next()?.to_string(),
                folder: f.next()?.to_string(),
                name: f.next()?.to_string(),
                store: f.next()?.to_string(),
            };
            [&copy.key, &copy.folder, &copy.name, &copy.store]
                .iter()
                .all(|s| plain(s) && !s.contains(".."))
                .then_some(copy)
        })
        .collect()
}

/// Packages that find the project's root by their own place, the folder above the
/// node_modules that holds them (module-alias reads `__dirname/../../package.json` for its
/// `_moduleAliases`; app-root-path cuts its own path at `node_modules`; rfr requires from
/// there): Node resolves a link to its real path, the read-only layer's, whose folder
/// above is no project (mozilla/nunjucks: "Unable to read /deps/package.json"). A copy in
/// the run's node_modules finds the tree, as on a CI.
const NODE_ROOT_FINDERS: &[&str] = &["module-alias", "app-root-path", "rfr"];

/// A run's command with writable node_modules folders first: the root's (proven-entry
/// links it whole to the read-only layer) and each workspace package's (`modules`, from
/// [`node_workspace_modules`]) become folders of links to the prepared packages, so each
/// package finds its own dependencies (pnpm's) and tools may write beside them (vite's
/// `node_modules/.vite-temp`, babel's `.cache`). A node_modules the tree has of its own
/// is left alone.
///
/// A test tool's own package ([`crate::tools::NODE_TOOLS`]) is a copy the run may write
/// into, as a CI's node_modules is: vitest's typecheck writes its `tsbuildinfo` beside its
/// own files (cheerio), and the read-only layer refused it. Node resolves a package to its
/// real path, so a link would lead the tool back to the layer; node_modules/.bin becomes a
/// folder of npm's relative links, which then lead to the copy. Only a package the layer
/// holds as a folder at the root is copied (pnpm's are links into its store, whose
/// neighbours a copy would lose); when the copy fails (the scratch space is full) the link
/// stays. Each run copies afresh, so nothing one run writes there reaches another.
/// So is a package that finds the project by its own place ([`NODE_ROOT_FINDERS`]).
pub fn with_node_links(modules: &[String], copies: &[FileCopy], command: &[String]) -> Vec<String> {
    let mut script = String::from(
        "m() { d=\"/deps/$1node_modules\"; t=\"$1node_modules\"\n\
         [ -d \"$d\" ] || return 0\n\
         [ -z \"$1\" ] || [ -d \"$1\" ] || return 0\n\
         if [ -L \"$t\" ] && [ \"$(readlink \"$t\")\" = \"$d\" ]; then rm -f \"$t\"; fi\n\
         if [ -e \"$t\" ] || [ -L \"$t\" ]; then return 0; fi\n\
         mkdir \"$t\" && find \"$d\" -mindepth 1 -maxdepth 1 -exec ln -s -t \"$t\" {} + || true\n\
         }\n\
         m ''\n",
    );
    script.push_str(
        "w() { d=\"/deps/node_modules/$1\"; t=\"node_modules/$1\"\n\
         [ -d \"$d\" ] && [ ! -L \"$d\" ] || return 0\n\
         case $1 in @*/*) s=\"node_modules/${1%%/*}\"\n\
         if [ -L \"$s\" ] && [ \"$(readlink \"$s\")\" = \"/deps/$s\" ]; then\n\
         rm -f \"$s\" && mkdir \"$s\" && find \"/deps/$s\" -mindepth 1 -maxdepth 1 -exec ln -s -t \"$s\" {} + || return 0; fi ;; esac\n\
         [ -L \"$t\" ] && [ \"$(readlink \"$t\")\" = \"$d\" ] || return 0\n\
         rm -f \"$t\" && if cp -a \"$d\" \"$t\" 2>/dev/null; then b=1; else rm -rf \"$t\"; ln -s \"$d\" \"$t\"; fi\n\
         }\n\
         b=\n",
    );
    for tool in crate::tools::NODE_TOOLS.iter().chain(NODE_ROOT_FINDERS) {
        script.push_str(&format!("w '{tool}'\n"));
    }
    script.push_str(
        "if [ -n \"$b\" ] && [ -L node_modules/.bin ] && [ \"$(readlink node_modules/.bin)\" = /deps/node_modules/.bin ]; then\n\
         rm -f node_modules/.bin && cp -a /deps/node_modules/.bin node_modules/.bin 2>/dev/null || { rm -rf node_modules/.bin; ln -s /deps/node_modules/.bin node_modules/.bin; }\n\
         fi\n",
    );
    for m in modules {
        script.push_str(&format!("m '{m}/'\n"));
    }
    if !copies.is_empty() {
        // The copy of a tree's folder pnpm's `file:` makes, in the run's node_modules, beside
        // links to what pnpm's store has next to its own copy (the package's dependencies).
        script.push_str(
            "c() { k=\"node_modules/.proven-file/$1/node_modules\"\n\
             [ -d node_modules ] && [ ! -L node_modules ] && [ -d \"$2\" ] || return 0\n\
             mkdir -p \"$k\" || return 0\n\
             find \"/deps/$4\" -mindepth 1 -maxdepth 1 ! -name \"${3%%/*}\" -exec ln -s -t \"$k\" {} + 2>/dev/null\n\
             case $3 in @*/*) mkdir -p \"$k/${3%%/*}\"\n\
             find \"/deps/$4/${3%%/*}\" -mindepth 1 -maxdepth 1 ! -name \"${3#*/}\" -exec ln -s -t \"$k/${3%%/*}\" {} + 2>/dev/null ;; esac\n\
             mkdir -p \"$k/$3\" && (cd \"$2\" && tar --exclude=./node_modules -cf - .) | tar -C \"$k/$3\" -xf - || true\n\
             }\n",
        );
        for c in copies {
            script.push_str(&format!(
                "c '{}' '{}' '{}' '{}'\n",
                c.key, c.folder, c.name, c.store
            ));
        }
    }
    script.push_str("exec \"$@\"\n");
    let mut out = vec!["sh".to_string(), "-c".into(), script, "sh".into()];
    out.extend(command.iter().cloned());
    out
}

/// package.json's `engines.node`, the Node a tree says it needs (None when it says none).
pub fn node_engines(src: &Path) -> Option<String> {
    let manifest = read_small(src, "package.json")?;
    let package: serde_json::Value = serde_json::from_slice(&manifest).ok()?;
    package["engines"]["node"]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// `resolve_before`: a tree without Cargo.lock is resolved as of that instant (the base's
/// commit time), as its CI resolved it then: a release of a dependency made since may break
/// the tests (rust-url's head of 2026-07 fails ten UTS 46 tests on an ICU data crate of
/// 2026-11, a Unicode version later than its test data).
fn plan_rust(src: &Path, resolve_before: Option<&str>) -> Result<Option<Plan>, RequestError> {
    if !src.join("Cargo.toml").is_file() {
        return Ok(None);
    }
    let manifests = find_named(src, &["Cargo.toml"]);
    let mut plan = Plan::default();
    let lock = read_small(src, "Cargo.lock");
    // Git packages of the lock file: named, and stood in for (cargo_git).
    let git = match &lock {
        Some(lock) => cargo_git::locked(&String::from_utf8_lossy(lock)).map_err(|line| {
            RequestError::UnsupportedDependency {
                file: "Cargo.lock".into(),
                line,
                reason: "a git dependency fetches from elsewhere: it cannot be prepared".into(),
            }
        })?,
        None => Vec::new(),
    };
    let git_names: BTreeSet<String> = git.iter().map(|c| c.name.clone()).collect();
    let excluded = read_small(src, "Cargo.toml")
        .and_then(|b| String::from_utf8_lossy(&b).parse::<toml::Table>().ok())
        .map(|root| workspace_excludes(&root))
        .unwrap_or_default();
    let mut members = Vec::new();
    let mut features = std::collections::BTreeMap::new();
    // Git packages a `[patch.crates-io]` of the tree takes from git: the registry's
    // release stands in for them (cargo_git::without_registry_git_patches).
    let mut from_registry: Vec<String> = Vec::new();
    for m in &manifests {
        let Some(mut bytes) = read_small(src, m) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Ok(doc) = text.parse::<toml::Table>() {
            if let Some((stripped, names)) =
                cargo_git::without_registry_git_patches(&doc, &git_names)
                && let Ok(text) = toml::to_string(&stripped)
            {
                bytes = text.into_bytes();
                from_registry.extend(names);
            }
            let dir = Path::new(m).parent().unwrap_or(Path::new(""));
            // A crate of the tree that is a workspace of its own (cargo-fuzz's `fuzz/`, with
            // `[workspace] members = ["."]`) or that the root's workspace excludes is no part
            // of what the root's cargo builds: its dependencies are not the tests'.
            if m != "Cargo.toml" && (doc.contains_key("workspace") || excluded_by(&excluded, dir)) {
                plan.inputs.push((m.clone(), bytes));
                continue;
            }
            check_cargo_dependencies(&doc, m, dir, lock.is_some())?;
            cargo_git::asked_features(&doc, &git_names, &mut features);
            // The project's own packages, by the names cargo accepts (they go into a shell
            // line): the preparation cleans their artifacts out.
            if let Some(name) = doc
                .get("package")
                .and_then(|p| p.get("name"))
                .and_then(|n| n.as_str())
                && !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                members.push(name.to_string());
            }
        }
        plan.inputs.push((m.clone(), bytes));
    }
    // The instant a tree without a lock file is resolved as of: a time cargo reads, never
    // shell (it goes into the script).
    let dated = resolve_before.filter(|at| {
        lock.is_none()
            && !at.is_empty()
            && at
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | 'T' | 'Z'))
    });
    match lock {
        Some(lock) => plan.inputs.push(("Cargo.lock".into(), lock)),
        // The script's report says which resolution was made (as of the instant, or now
        // where cargo found nothing that old).
        None if dated.is_some() => {}
        None => plan.notes.push(
            "no Cargo.lock: versions resolved now (cargo generate-lockfile), not pinned by the project"
                .into(),
        ),
    }
    plan.resolve_before = dated.map(str::to_string);
    let (git, registry): (Vec<_>, Vec<_>) = git
        .into_iter()
        .partition(|c| !from_registry.contains(&c.name));
    for c in &registry {
        plan.refused.push(NotPrepared {
            what: format!("{} {}", c.name, c.version),
            source: format!("Cargo.lock, line {}", c.line),
            reason: format!(
                "from git ({}), by the workspace's [patch.crates-io]: the preparation reaches \
                 the registries only; the registry's release of {} takes its place",
                c.url, c.name
            ),
        });
    }
    for c in &git {
        plan.refused.push(NotPrepared {
            what: format!("{} {}", c.name, c.version),
            source: format!("Cargo.lock, line {}", c.line),
            reason: format!(
                "from git ({}): the preparation reaches the registries only; a stand-in that \
                 does not compile takes its place, so only what needs it fails",
                c.url
            ),
        });
    }
    let stand_ins = if git.is_empty() {
        String::new()
    } else {
        cargo_git::stand_ins_script(&git, &features)
    };
    // The tests are built as the CI's `cargo test` builds them (its features, its profile).
    let ci = crate::cargo_ci::ci_test(&listed_reader(src));
    let build: Vec<String> = ci.as_ref().map(|c| c.options.clone()).unwrap_or_default();
    if let Some(ci) = &ci
        && !build.is_empty()
    {
        plan.notes.push(format!(
            "the tests were built with the options of {}'s cargo test: {}",
            ci.source,
            build.join(" ")
        ));
    }
    plan.skeleton = true;
    from_registry.sort();
    from_registry.dedup();
    plan.command = vec![
        "sh".into(),
        "-c".into(),
        rust_script(
            &members,
            &stand_ins,
            &cargo_git::registry_stand_ins_script(&from_registry),
            dated,
            &build,
        ),
    ];
    plan.env = vec![
        "CARGO_NET_OFFLINE=false".into(),
        "CARGO_HOME=/tmp/cargo-home".into(),
        "CARGO_REGISTRIES_CRATES_IO_PROTOCOL=sparse".into(),
    ];
    plan.env
        .extend(RUST_BUILD_ENV.iter().map(|v| v.to_string()));
    // The runs build as the preparation did, so what it compiled is fresh for them.
    plan.run_env = RUST_BUILD_ENV.iter().map(|v| v.to_string()).collect();
    // The lints the images' rustc denies that the Rust of the tree's date did not: allowed
    // by default in the preparation and the runs alike (one build), said in the record.
    if let Some((flags, era)) = resolve_before.and_then(crate::language::rust_lints_of_era) {
        plan.notes.push(format!(
            "built with the lints of Rust 1.{era}, the stable of the tree's date: {} (a later rustc denies them by default; the crates' own lint attributes still hold)",
            flags.trim_start_matches("RUSTFLAGS=")
        ));
        plan.env.push(flags.clone());
        plan.run_env.push(flags);
    }
    Ok(Some(plan))
}

/// How the preparation and every run build Rust: the same settings, or the compiled
/// dependencies would not be fresh for the runs. Line tables only (a panic still names its
/// line) and no incremental state: the compiled dependencies take a fraction of the space,
/// in the cache and in each run's scratch.
const RUST_BUILD_ENV: &[&str] = &[
    "CARGO_PROFILE_DEV_DEBUG=line-tables-only",
    "CARGO_PROFILE_TEST_DEBUG=line-tables-only",
    "CARGO_INCREMENTAL=0",
];

/// The Rust preparation: a lock file (generated when the project has none), the vendored
/// sources, then the project's tests built once (`cargo test --no-run`, offline, from the
/// vendored sources) into `/deps/target`, so that each run copies the compiled
/// dependencies instead of compiling them again (a proof is four runs or more; syn alone
/// is minutes on one CPU). clippy's own build of the dependencies (a check build: their
/// metadata, which a test build's libraries do not serve) is made there too, as the tool
/// evidence's `cargo clippy --all-targets` runs it, so that an analyzer run checks only the
/// tree: without it each clippy run checked every dependency again, cold, and a Rust review
/// with the tool evidence took 1.4 times as long. The project's own packages are cleaned
/// out of it: a run always compiles the tree it is given, never one the preparation saw. A
/// build that fails (the tree does not compile) keeps what it compiled and is a note, not a
/// failure.
///
/// With git packages (`stand_ins`, the lines of [`cargo_git::stand_ins_script`]), their
/// stand-ins are written and patched in first, and the lock file is vendored without
/// `--locked`: cargo moves the git packages to their stand-ins and keeps every other pin.
///
/// With packages a `[patch.crates-io]` took from git (`from_registry`, the lines of
/// [`cargo_git::registry_stand_ins_script`]), the lock file is vendored without `--locked`
/// too, and the vendored releases are patched in after.
///
/// Without Cargo.lock, `resolve_before` resolves it as of that instant (cargo's
/// `--publish-time`, unstable in cargo 1.93 and later: it reads the registry index's
/// `pubtime`, which crates.io gives every release; `RUSTC_BOOTSTRAP` lets that one command
/// take it, never the build); where nothing that old satisfies the manifests, as of now,
/// said in the notes.
fn rust_script(
    members: &[String],
    stand_ins: &str,
    from_registry: &str,
    resolve_before: Option<&str>,
    build: &[String],
) -> String {
    let build: String = build
        .iter()
        .map(|w| format!(" {}", crate::suite::sh_quote(w)))
        .collect();
    let resolve = match resolve_before {
        Some(at) => format!(
            "if RUSTC_BOOTSTRAP=1 cargo generate-lockfile -Zunstable-options --publish-time '{at}' 2>&1; then \
               lock_note='no Cargo.lock: versions resolved as of {at} (cargo generate-lockfile --publish-time), not pinned by the project'; \
             else cargo generate-lockfile 2>&1; \
               lock_note='no Cargo.lock: nothing published by {at} satisfies the manifests, so versions resolved now (cargo generate-lockfile), not pinned by the project'; fi; "
        ),
        None => "cargo generate-lockfile 2>&1; ".into(),
    };
    let (locked, patch) = if stand_ins.is_empty() && from_registry.is_empty() {
        (" --locked", String::new())
    } else {
        (
            "",
            if stand_ins.is_empty() {
                String::new()
            } else {
                format!("cat {MOUNT}/git-patch.toml >> {MOUNT}/cargo-config.toml\n")
            } + from_registry,
        )
    };
    format!(
        "set -e\n\
         lock_note=''\n\
         if [ -f Cargo.lock ]; then resolved=false; \
         else {resolve}resolved=true; fi\n\
         {stand_ins}\
         cargo vendor{locked} {MOUNT}/vendor > {MOUNT}/cargo-config.toml\n\
         {patch}\
         printf '\\n[net]\\noffline = true\\n' >> {MOUNT}/cargo-config.toml\n\
         mkdir -p \"$CARGO_HOME\" && cp {MOUNT}/cargo-config.toml \"$CARGO_HOME/config.toml\"\n\
         if CARGO_TARGET_DIR={MOUNT}/target cargo test --no-run --offline{build} > {MOUNT}/build.log 2>&1; then \
           note='the tests were built in the preparation: runs reuse its compiled dependencies'; \
         else note='the tests did not build in the preparation (build.log): runs compile what it could not'; fi\n\
         if cargo clippy --version > /dev/null 2>&1 && CARGO_TARGET_DIR={MOUNT}/target \
           cargo clippy --all-targets --offline > {MOUNT}/clippy.log 2>&1; then \
           note=\"$note; clippy's checks of the dependencies were made in the preparation\"; fi\n\
         {clean}\
         if [ -n \"$lock_note\" ]; then note=\"$lock_note\\\", \\\"$note\"; fi\n\
         printf '{{\"resolved\": %s, \"notes\": [\"%s\"]}}' \"$resolved\" \"$note\" > {MOUNT}/report.json\n",
        clean = clean_members(members),
    )
}

/// The shell lines that take the project's own packages (`members`: every package of the
/// tree, by name) out of `/deps/target`: whatever was compiled from the skeleton's stubs
/// (libraries, binaries, tests, benches, examples, procedural macros, build scripts and
/// their output) must never be reused by a run. A run's tree is materialised before the
/// preparation, so its files are older than the stub's outputs and cargo's mtime check
/// would find those fresh: serde_json compiled with the stub build script's (empty)
/// output, without the `cfg` its real one prints.
///
/// `cargo clean -p A -p B` cleans nothing when one name is no package of the workspace (a
/// package of the tree outside it: serde_json's fuzz/, log's test_max_level_features/), so
/// the names are cleaned one by one when all at once fails. Then, whatever is left, every
/// fingerprint and build-script directory of those names (`NAME-HASH`, the hash without a
/// hyphen) is removed: a unit without its fingerprint is compiled, and a build script run,
/// again.
fn clean_members(members: &[String]) -> String {
    if members.is_empty() {
        return String::new();
    }
    let names = members.join(" ");
    let all: String = members.iter().map(|m| format!(" -p {m}")).collect();
    format!(
        "export CARGO_TARGET_DIR={MOUNT}/target\n\
         if ! cargo clean --offline{all} > /dev/null 2>&1; then \
           for p in {names}; do cargo clean --offline -p \"$p\" > /dev/null 2>&1 || true; done; fi\n\
         for d in {MOUNT}/target/*/.fingerprint/* {MOUNT}/target/*/build/* \
           {MOUNT}/target/*/*/.fingerprint/* {MOUNT}/target/*/*/build/*; do \
           base=${{d##*/}}; \
           for p in {names}; do case \"$base\" in \"$p\"-*) case \"${{base#\"$p\"-}}\" in \
             *-*) ;; *) rm -rf \"$d\" ;; esac ;; esac; done; \
         done\n"
    )
}

/// The folders the root manifest's `[workspace] exclude` names, relative to the tree.
fn workspace_excludes(root: &toml::Table) -> Vec<PathBuf> {
    root.get("workspace")
        .and_then(|w| w.get("exclude"))
        .and_then(|e| e.as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str())
        .map(|e| Path::new(e.trim_start_matches("./")).to_path_buf())
        .collect()
}

/// Whether `dir` (a crate's folder in the tree) is one of `excluded` or inside one.
fn excluded_by(excluded: &[PathBuf], dir: &Path) -> bool {
    excluded.iter().any(|e| dir.starts_with(e))
}

/// Refuses cargo dependencies from a path outside the tree or another registry, by name,
/// and from git when there is no Cargo.lock (`locked`): with one, its git packages are
/// stood in for ([`cargo_git`]).
fn check_cargo_dependencies(
    doc: &toml::Table,
    manifest: &str,
    dir: &Path,
    locked: bool,
) -> Result<(), RequestError> {
    let tables = cargo_git::dependency_tables(doc);
    for table in tables {
        for (name, spec) in table {
            let refuse = |reason: &str| RequestError::UnsupportedDependency {
                file: manifest.to_string(),
                line: 0,
                reason: format!("dependency {name}: {reason}"),
            };
            if spec.get("git").is_some() && !locked {
                return Err(refuse(
                    "a git dependency fetches from elsewhere: it cannot be prepared",
                ));
            }
            if let Some(path) = spec.get("path").and_then(|p| p.as_str()) {
                let mut depth: i64 = dir.components().count() as i64;
                for c in Path::new(path).components() {
                    match c {
                        std::path::Component::ParentDir => depth -= 1,
                        std::path::Component::Normal(_) => depth += 1,
                        std::path::Component::RootDir | std::path::Component::Prefix(_) => {
                            depth = -1;
                            break;
                        }
                        std::path::Component::CurDir => {}
                    }
                    if depth < 0 {
                        break;
                    }
                }
                if depth < 0 {
                    return Err(refuse(
                        "a path dependency outside the tree cannot be prepared",
                    ));
                }
            }
            if let Some(registry) = spec.get("registry").and_then(|r| r.as_str()) {
                return Err(refuse(&format!(
                    "registry {registry:?} is not crates.io: it cannot be prepared"
                )));
            }
        }
    }
    Ok(())
}

fn plan_go(config: &PlanSettings<'_>, src: &Path) -> Option<Plan> {
    let go_mod = read_small(src, "go.mod")?;
    // Vendored modules need nothing; a module without requirements neither.
    if src.join("vendor/modules.txt").is_file() {
        return None;
    }
    let text = String::from_utf8_lossy(&go_mod);
    if !text.lines().any(|l| l.trim_start().starts_with("require")) {
        return None;
    }
    let mut plan = Plan::default();
    plan.inputs.push(("go.mod".into(), go_mod.clone()));
    match read_small(src, "go.sum") {
        Some(sum) => plan.inputs.push(("go.sum".into(), sum)),
        None => plan
            .notes
            .push("no go.sum: module versions resolved now, not pinned by the project".into()),
    }
    plan.command = vec![
        "sh".into(),
        "-c".into(),
        format!("set -e\ngo mod download 2>&1\necho '{{}}' > {MOUNT}/report.json\n"),
    ];
    plan.env = vec![
        format!("GOMODCACHE={MOUNT}/gomodcache"),
        "GOFLAGS=-mod=mod -modcacherw".into(),
        format!("GOPROXY={}", config.goproxy),
        format!("GOSUMDB={}", config.gosumdb),
        "GOPATH=/tmp/go".into(),
        "GOCACHE=/tmp/go-build".into(),
    ];
    plan.run_env = vec![
        format!("GOMODCACHE={MOUNT}/gomodcache"),
        "GOFLAGS=-mod=mod".into(),
        "GOSUMDB=off".into(),
    ];
    Some(plan)
}

/// The cache key: the preparation's version, the language, the image, the registries and
/// every file that decided it.
pub fn cache_key(
    language: Language,
    image: &str,
    registries: &[String],
    inputs: &[(String, Vec<u8>)],
) -> String {
    let mut hasher = Sha256::new();
    let mut part = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    part(VERSION.as_bytes());
    // What the preparation runs is part of what it made.
    part(PYTHON_SCRIPT.as_bytes());
    part(INSPECT_SETUP_SCRIPT.as_bytes());
    part(NODE_SCRIPT.as_bytes());
    part(NPM_DATED_SCRIPT.as_bytes());
    // The Rust script with a stand-in package: a fixed script is never served what the
    // previous one made.
    part(
        rust_script(
            &["package".into()],
            "",
            "",
            Some("2000-01-01T00:00:00Z"),
            &[],
        )
        .as_bytes(),
    );
    part(language.as_str().as_bytes());
    part(image.as_bytes());
    for r in registries {
        part(r.as_bytes());
    }
    for (name, bytes) in inputs {
        part(name.as_bytes());
        part(bytes);
    }
    hex::encode(&hasher.finalize()[..16])
}

/// What could not be prepared, one entry per requirement and reason: a requirement several
/// files (or tox environments) declare is named once, with every place that declares it.
fn one_entry_per_requirement(entries: Vec<NotPrepared>) -> Vec<NotPrepared> {
    let mut merged: Vec<NotPrepared> = Vec::with_capacity(entries.len());
    for entry in entries {
        match merged
            .iter_mut()
            .find(|m| m.what == entry.what && m.reason == entry.reason)
        {
            Some(m) => {
                if !m.source.split("; ").any(|s| s == entry.source) {
                    m.source = format!("{}; {}", m.source, entry.source);
                }
            }
            None => merged.push(entry),
        }
    }
    merged
}

pub fn record_of(
    plan: &Plan,
    key: &str,
    report: Report,
    prepared_now: bool,
    egress_refused: Option<&BTreeSet<String>>,
) -> DependencyRecord {
    let mut not_prepared = plan.refused.clone();
    not_prepared.extend(report.refused);
    not_prepared.extend(report.not_prepared);
    let not_prepared = one_entry_per_requirement(not_prepared);
    let mut notes = plan.notes.clone();
    if let Some(version) = &report.python
        && let Some(Err(why)) = python::python_fits(&plan.python_requires, version)
    {
        notes.push(format!(
            "{why}; the sandbox's image has Python {version} (images for other versions are a setting)"
        ));
    }
    if let (Some(range), Some(version)) = (&plan.node_engines, &report.node) {
        let version = version.trim_start_matches('v');
        if proven_version::satisfies(proven_version::Ecosystem::Npm, range, version) == Ok(false) {
            notes.push(format!(
                "package.json engines asks for Node {range}; the sandbox's image has Node {version}"
            ));
        }
    }
    // The plan and the preparation may say the same thing (no lock file): once is enough.
    let stopped = report.incomplete.as_deref().map(incomplete_note);
    for note in report.notes.into_iter().chain(stopped) {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    if let Some(refused) = egress_refused
        && !refused.is_empty()
    {
        notes.push(format!(
            "refused on the way out (not an allowed registry): {}",
            refused.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    let resolved = report.resolved || plan.notes.iter().any(|n| n.contains("not pinned"));
    DependencyRecord {
        lock_files: plan.inputs.iter().map(|(n, _)| n.clone()).collect(),
        key: key.to_string(),
        prepared_now,
        resolved,
        not_prepared,
        notes,
        installed: report.installed.len(),
        project_layer: None,
        package_manager: report.package_manager,
    }
}

/// The project layer of one tree: key, the environment's key and the tree's identity (its
/// commit, its patch, the files the run adds — removed before the build, so the layer is
/// the commit's and the patch's alone).
pub fn project_key(deps_key: &str, tree: &TreeRecord, scm_version: Option<&str>) -> String {
    let mut hasher = Sha256::new();
    for part in [
        "project layer v1",
        deps_key,
        &tree.commit,
        tree.patch_sha256.as_deref().unwrap_or(""),
        // The version a build reading it from git is given: the tags, not the tree, say it.
        scm_version.unwrap_or(""),
    ] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    for added in &tree.added_files {
        hasher.update((added.path.len() as u64).to_le_bytes());
        hasher.update(added.path.as_bytes());
    }
    hex::encode(&hasher.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `prepare.py`'s own functions make of `code`'s calls, run by the host's Python
    /// (scripts/test makes sure of one), the script read without its `main()`.
    fn prepare_py(code: &str) -> String {
        let dir = tempfile::tempdir().expect("tempdir");
        let plan = dir.path().join("plan.json");
        std::fs::write(&plan, r#"{"test_names": ["test", "tests", "testing"]}"#).expect("plan");
        let script = PYTHON_SCRIPT
            .strip_suffix("main()\n")
            .expect("prepare.py ends by calling main()");
        let out = std::process::Command::new("python3")
            .arg("-c")
            .arg(format!("{script}\n{code}"))
            .arg(&plan)
            .output()
            .expect("python3 on the host (scripts/test installs it)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Requirements installed one by one with --ignore-installed left two releases of a
    /// distribution one over the other (django-rest-framework's Djangos: a module of the
    /// later one beside the earlier one's files); the one installed last stands, the files
    /// only the others list are removed with their dist-info, a file both list is kept, and
    /// nothing outside the environment is touched.
    #[test]
    fn a_release_installed_over_another_leaves_only_its_own_files() {
        let venv = tempfile::tempdir().expect("venv");
        let outside = tempfile::tempdir().expect("outside");
        let out = outside.path().display().to_string();
        let code = [
            "import os, time".to_string(),
            format!("VENV = {:?}", venv.path().display().to_string()),
            "site = VENV + '/lib/python3.13/site-packages'".into(),
            "def put(rel, text=''):".into(),
            "    p = os.path.join(site, rel); os.makedirs(os.path.dirname(p), exist_ok=True); open(p, 'w').write(text)".into(),
            format!("put('django/options.py'); put('django/admin_filters.py'); put('django/gone.py'); put({out:?} + '/keep.py')"),
            format!(
                "put('Django-6.1.dist-info/RECORD', 'django/options.py,,\\ndjango/admin_filters.py,,\\n\"django/gone.py\",,\\n../../../../{}/keep.py,,\\nDjango-6.1.dist-info/RECORD,,\\n')",
                out.trim_start_matches('/')
            ),
            "put('six-1.0.dist-info/RECORD', 'six.py,,\\n'); put('six.py')".into(),
            "time.sleep(0.05)".into(),
            "put('django-6.0.dist-info/RECORD', 'django/options.py,,\\ndjango-6.0.dist-info/RECORD,,\\n')".into(),
            "superseded_releases_removed()".into(),
            format!("print(sorted(os.listdir(site)), sorted(os.listdir(site + '/django')), os.path.exists({out:?} + '/keep.py'))"),
            "print(REPORT['notes'])".into(),
        ]
        .join("\n");
        assert_eq!(
            prepare_py(&code),
            "['django', 'django-6.0.dist-info', 'six-1.0.dist-info', 'six.py'] ['options.py'] True\n\
             [\"django was installed at several releases, one over another (requirements installed one by one): the one installed last, django-6.0, stands; the others' files were removed\"]"
        );
    }

    /// The dependencies whose build failed are read from every pip's words (its own line,
    /// a legacy install's, the build folder of pip 20 to 21 and of pip 9 to 19); a build the
    /// machine stopped (a full disk, a compiler killed for memory) names none, so that a
    /// flaky machine never chooses the versions of a cached environment.
    #[test]
    fn the_builds_that_failed_are_read_and_a_machines_failure_is_not_one() {
        let call = |out: &str| prepare_py(&format!("print(repr(failed_builds({out:?})))"));
        let pip21 = "ERROR: Command errored out with exit status 1: /deps/venv/bin/python -u -c 'import io; sys.argv[0] = '\"'\"'/tmp/pip-install-_7_pqt56/cryptography_110d12b91bd64db0b26b10713107b31a/setup.py'\n  ERROR: Failed building wheel for Pillow\n    Running setup.py install for Twisted ... error\n";
        assert_eq!(call(pip21), "['cryptography', 'pillow', 'twisted']");
        let pip9 = "Command \"python setup.py egg_info\" failed with error code 1 in /tmp/pip-build-abc123/cryptography/\n";
        assert_eq!(call(pip9), "['cryptography']");
        let full = format!("{pip21}error: could not write: No space left on device\n");
        assert_eq!(call(&full), "[]");
        let killed = "gcc: fatal error: Killed signal terminated program cc1\n  ERROR: Failed building wheel for lxml\n";
        assert_eq!(call(killed), "[]");
    }

    /// A failed build sets aside the wanted requirement it is of, or the one that brought
    /// it in, and keeps the release that failed; a later file of that same sdist is no other
    /// attempt, another version or a wheel this Python installs is.
    #[test]
    fn a_failed_build_sets_aside_its_requirement_and_its_release_is_not_tried_again() {
        let wanted = r#"[("reppy", "tox.ini [testenv:py38-extra-deps] deps"),
            ("leveldb", "tox.ini [testenv:py38-extra-deps] deps"), ("pyopenssl", "setup.py install_requires")]"#;
        let out = "Collecting reppy (from -r /tmp/proven-requirements.txt (line 1))\n  Downloading http://127.0.0.1:9/files/reppy-0.4.14.tar.gz (93 kB)\nCollecting cryptography (from pyopenssl->-r /tmp/proven-requirements.txt (line 3))\n  Using cached cryptography-2.8.tar.gz (504 kB)\n  ERROR: Failed building wheel for reppy\n  ERROR: Failed building wheel for cryptography\n";
        let call = prepare_py(&format!(
            "print(repr(did_not_build({out:?}, {wanted}))); print(repr(sorted(FAILED_RELEASE.items())))\n\
             new = not_the_failed_release('reppy'); tags = wheel_tags() or set()\n\
             print([new(f) for f in ['reppy-0.4.14.tar.gz', 'reppy-0.4.15.tar.gz', 'reppy-0.4.14-cp38-cp38-win32.whl']])\n\
             print(not_the_failed_release('leveldb')('leveldb-0.201.tar.gz'))"
        ));
        assert_eq!(
            call,
            "[('reppy', 'tox.ini [testenv:py38-extra-deps] deps'), ('pyopenssl', 'setup.py install_requires')]\n\
             [('cryptography', '2.8'), ('reppy', '0.4.14')]\n\
             [False, True, False]\n\
             True"
        );
    }

    /// Out of time installing together, the requirement set aside is the one pip was
    /// building, or the one that brought it in where pip names it (23.1 and later); a pip
    /// that names no parent (21, the last of Python 3.6) sets aside the extras not for
    /// tests, and with none of those nothing.
    #[test]
    fn what_a_stuck_install_sets_aside_is_read_from_each_pips_output() {
        let wanted = r#"[("bringsslow", "requirements.txt"), ("slowtoo", "requirements.txt"),
            ("quick01", "requirements.txt"), ("sphinx", "setup.py extras_require.docs"),
            ("pytest", "setup.py extras_require.test")]"#;
        let call = |out: &str| prepare_py(&format!("print(repr(stuck_on({out:?}, {wanted})))"));
        let pip21 = "Collecting bringsslow\n  Downloading http://pypi.test/files/bringsslow-1.0-py3-none-any.whl (1.0 kB)\nCollecting quick01\nCollecting slowdep\n  Downloading http://pypi.test/files/slowdep-1.0.tar.gz (1.1 kB)\nBuilding wheels for collected packages: slowdep\n  Building wheel for slowdep (setup.py): started\n";
        assert_eq!(
            call(pip21),
            "('slowdep', [('sphinx', 'setup.py extras_require.docs')])"
        );
        let pip23 = "Collecting bringsslow (from -r requirements.txt (line 1))\nCollecting slowdep (from bringsslow->-r requirements.txt (line 1))\n  Building wheel for slowdep (pyproject.toml): started\n";
        assert_eq!(
            call(pip23),
            "('slowdep', [('bringsslow', 'requirements.txt')])"
        );
        let own = "Collecting slowtoo\n  Building wheel for slowtoo (setup.py): started\n";
        assert_eq!(call(own), "('slowtoo', [('slowtoo', 'requirements.txt')])");
        // A finished build is not what it was stuck on: the last collected one is.
        let finished = "Collecting quick01\n  Building wheel for slowtoo (setup.py): started\n  Building wheel for slowtoo (setup.py): finished with status 'done'\n";
        assert_eq!(
            call(finished),
            "('quick01', [('quick01', 'requirements.txt')])"
        );
        // pip 21 and no extra to set aside: nothing.
        let only_needed =
            r#"[("bringsslow", "requirements.txt"), ("quick01", "requirements.txt")]"#;
        assert_eq!(
            prepare_py(&format!("print(repr(stuck_on({pip21:?}, {only_needed})))")),
            "None"
        );
    }

    #[test]
    fn a_requirement_declared_twice_is_named_once_with_both_places() {
        let entry = |what: &str, source: &str, reason: &str| NotPrepared {
            what: what.into(),
            source: source.into(),
            reason: reason.into(),
        };
        let vcs = "a direct URL or VCS requirement fetches from elsewhere";
        let merged = one_entry_per_requirement(vec![
            entry(
                "git+https://example.org/nbval",
                "tox.ini [testenv] deps",
                vcs,
            ),
            entry("twine", "requirements-dev.txt", "no wheel"),
            entry(
                "git+https://example.org/nbval",
                "tox.ini [testenv:pypy3] deps",
                vcs,
            ),
            entry(
                "git+https://example.org/nbval",
                "tox.ini [testenv] deps",
                vcs,
            ),
        ]);
        assert_eq!(merged.len(), 2, "{merged:?}");
        assert_eq!(
            merged[0].source,
            "tox.ini [testenv] deps; tox.ini [testenv:pypy3] deps"
        );
        assert_eq!(merged[1].what, "twine");
    }

    #[test]
    fn the_cache_key_follows_the_inputs_the_image_and_the_registries() {
        let inputs = vec![("Cargo.lock".to_string(), b"a".to_vec())];
        let other = vec![("Cargo.lock".to_string(), b"b".to_vec())];
        let regs = vec!["crates.io".to_string()];
        let key = cache_key(Language::Rust, "img", &regs, &inputs);
        assert_eq!(key, cache_key(Language::Rust, "img", &regs, &inputs));
        assert_ne!(key, cache_key(Language::Rust, "img", &regs, &other));
        assert_ne!(key, cache_key(Language::Rust, "img2", &regs, &inputs));
        assert_ne!(key, cache_key(Language::Node, "img", &regs, &inputs));
        assert_ne!(
            key,
            cache_key(Language::Rust, "img", &["evil.example".into()], &inputs)
        );
    }

    #[test]
    fn a_node_the_project_does_not_accept_is_named() {
        let plan = |engines: &str| Plan {
            node_engines: Some(engines.to_string()),
            ..Plan::default()
        };
        let report = || Report {
            node: Some("v20.20.2".into()),
            ..Report::default()
        };
        // tj/commander.js asks for Node 22.12 or newer.
        let record = record_of(&plan(">=22.12.0"), "k", report(), true, None);
        assert!(
            record
                .notes
                .iter()
                .any(|n| n == "package.json engines asks for Node >=22.12.0; the sandbox's image has Node 20.20.2"),
            "{:?}",
            record.notes
        );
        for fits in [">= 18", "^20.19.0 || ^22.12.0 || >=23", ">=6.0"] {
            let record = record_of(&plan(fits), "k", report(), true, None);
            assert!(
                !record.notes.iter().any(|n| n.contains("engines")),
                "{fits}: {:?}",
                record.notes
            );
        }
    }

    /// A Rust tree without Cargo.lock is resolved as of the base's instant, as its CI
    /// resolved it then; a lock file pins it, and an instant that is not one never reaches
    /// the script.
    #[test]
    fn a_rust_tree_without_a_lock_file_is_resolved_as_of_the_base() {
        let plan_of = |files: &[(&str, &str)], before: Option<&str>| {
            let dir = tempfile::tempdir().expect("dir");
            for (name, text) in files {
                fs::write(dir.path().join(name), text).expect("write");
            }
            plan_rust(dir.path(), before)
                .expect("plans")
                .expect("a plan")
        };
        let manifest = (
            "Cargo.toml",
            "[package]\nname = \"labels\"\nversion = \"0.1.0\"\n\n[dependencies]\nitoa = \"1\"\n",
        );
        let script = |plan: &Plan| plan.command.join(" ");
        let dated = plan_of(&[manifest], Some("2022-06-01T00:00:00Z"));
        assert_eq!(
            dated.resolve_before.as_deref(),
            Some("2022-06-01T00:00:00Z")
        );
        assert!(
            script(&dated).contains("--publish-time '2022-06-01T00:00:00Z'"),
            "{}",
            script(&dated)
        );
        // Its notes come from the script, which says which resolution it made.
        assert!(dated.notes.iter().all(|n| !n.contains("resolved now")));
        // Today's, without an instant.
        let now = plan_of(&[manifest], None);
        assert_eq!(now.resolve_before, None);
        assert!(!script(&now).contains("--publish-time"));
        assert!(
            now.notes
                .iter()
                .any(|n| n.contains("versions resolved now"))
        );
        // A lock file pins the versions: no instant, and no layer apart for it.
        let lock = ("Cargo.lock", "version = 3\n");
        let locked = plan_of(&[manifest, lock], Some("2022-06-01T00:00:00Z"));
        assert_eq!(locked.resolve_before, None);
        assert!(!script(&locked).contains("--publish-time"));
        // Anything but an instant is not one.
        let odd = plan_of(&[manifest], Some("2022'; touch /x; '"));
        assert_eq!(odd.resolve_before, None);
        assert!(!script(&odd).contains("touch"));
    }

    fn node_plan(files: &[(&str, &str)], before: Option<&str>) -> (Plan, serde_json::Value) {
        let dir = tempfile::tempdir().expect("dir");
        for (name, text) in files {
            let path = dir.path().join(name);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, text).expect("write");
        }
        let registries = AllowList::defaults();
        let settings = PlanSettings {
            registries: &registries,
            pip_index_url: None,
            npm_registry: None,
            goproxy: "https://proxy.golang.org",
            gosumdb: "sum.golang.org",
            prepare_timeout: Duration::from_secs(60),
        };
        let plan = plan_node(&settings, dir.path(), before)
            .expect("plans")
            .expect("a plan");
        let json = plan
            .files
            .iter()
            .find(|(n, _)| n == "plan.json")
            .and_then(|(_, b)| serde_json::from_slice(b).ok())
            .expect("plan.json");
        (plan, json)
    }

    /// Two trees whose dependency files are the same, but whose CI sets up another pnpm,
    /// are prepared differently, so never from one layer.
    #[test]
    fn a_layers_key_follows_what_the_plan_decided_beyond_its_input_files() {
        let files = |version: &str| {
            [
                ("package.json", r#"{"name": "x"}"#.to_string()),
                ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n".to_string()),
                (
                    ".github/workflows/test.yml",
                    format!(
                        "jobs:\n  t:\n    steps:\n      - uses: pnpm/action-setup@v4\n        with:\n          version: {version}\n"
                    ),
                ),
            ]
        };
        let key = |version: &str| {
            let files = files(version);
            let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
            let (plan, json) = node_plan(&files, None);
            (
                plan.key(Language::Node, "img", &[]),
                json["manager"]["install"].clone(),
                cache_key(Language::Node, "img", &[], &plan.inputs),
            )
        };
        let (ten, ten_install, ten_inputs) = key("10");
        let (eleven, eleven_install, eleven_inputs) = key("11");
        assert_eq!(
            ten_inputs, eleven_inputs,
            "a key of the input files alone is one"
        );
        assert_eq!(
            (ten_install, eleven_install),
            ("pnpm@10".into(), "pnpm@11".into())
        );
        assert_ne!(ten, eleven, "the same input files, another manager");
        assert_eq!(ten, key("10").0, "the same tree, the same layer");
    }

    /// A Rust tree's layer follows the features its CI tests with: they are in the
    /// preparation's command, read from a workflow that is no input of the plan, and a
    /// layer built without them is never served to a tree that asks for them.
    #[test]
    fn a_layers_key_follows_the_command_the_tree_decided() {
        let key = |features: &str| {
            let dir = tempfile::tempdir().expect("dir");
            fs::write(
                dir.path().join("Cargo.toml"),
                "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
            )
            .expect("write");
            fs::create_dir_all(dir.path().join(".github/workflows")).expect("mkdir");
            fs::write(
                dir.path().join(".github/workflows/ci.yml"),
                format!("jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test {features}\n"),
            )
            .expect("write");
            let plan = plan_rust(dir.path(), None).expect("plans").expect("a plan");
            (
                plan.key(Language::Rust, "img", &[]),
                cache_key(Language::Rust, "img", &[], &plan.inputs),
                plan.command.join(" "),
            )
        };
        let (plain, plain_inputs, _) = key("");
        let (full, full_inputs, command) = key("--features full");
        assert!(
            command.contains("cargo test --no-run --offline --features full"),
            "{command}"
        );
        assert_eq!(
            plain_inputs, full_inputs,
            "a key of the input files alone is one"
        );
        assert_ne!(plain, full, "the same input files, another build");
        assert_eq!(
            full,
            key("--features full").0,
            "the same tree, the same layer"
        );
    }

    /// resolve's: a fixture's package.json that is no JSON (`{` alone) stopped the whole
    /// Node preparation; it is left out of the manifests, the others stay.
    #[test]
    fn a_fixture_manifest_that_is_no_json_is_left_out() {
        let (plan, json) = node_plan(
            &[
                (
                    "package.json",
                    r#"{"name": "resolve", "devDependencies": {"tape": "^5"}}"#,
                ),
                ("test/resolver/malformed_package_json/package.json", "{\n"),
                ("test/resolver/baz/package.json", r#"{"main": "quux.js"}"#),
                ("test/resolver/list/package.json", "[]"),
            ],
            None,
        );
        let inputs: Vec<&str> = plan.inputs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(inputs, ["package.json", "test/resolver/baz/package.json"]);
        assert_eq!(
            json["files"],
            serde_json::json!(["package.json", "test/resolver/baz/package.json"])
        );
    }

    #[test]
    fn a_pnpm_workspace_is_planned_with_pnpm_its_lock_file_and_its_catalogs() {
        let (plan, json) = node_plan(
            &[
                (
                    "package.json",
                    r#"{"packageManager": "pnpm@9.15.0", "devDependencies": {"@babel/parser": "catalog:"}}"#,
                ),
                ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n"),
                (
                    "pnpm-workspace.yaml",
                    "packages:\n  - 'packages/*'\ncatalog:\n  '@babel/parser': ^7.28.0\n",
                ),
                (
                    "packages/a/package.json",
                    r#"{"dependencies": {"b": "workspace:*", "c": "workspace:packages/c"}}"#,
                ),
                ("package-lock.json", "{}"),
            ],
            Some("2025-01-01T00:00:00Z"),
        );
        assert!(plan.refused.is_empty(), "{:?}", plan.refused);
        let inputs: Vec<&str> = plan.inputs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            inputs,
            [
                "package.json",
                "packages/a/package.json",
                "pnpm-lock.yaml",
                "pnpm-workspace.yaml"
            ],
            "pnpm's lock file, not npm's"
        );
        assert!(plan.notes.is_empty(), "{:?}", plan.notes);
        assert_eq!(json["manager"]["manager"], "pnpm");
        assert_eq!(json["manager"]["install"], "pnpm@9.15.0");
        assert_eq!(json["catalogs"]["default"]["@babel/parser"], "^7.28.0");
        // The declared version is installed as declared, whatever the date.
        assert_eq!(json["before"], serde_json::Value::Null);
        assert_eq!(plan.resolve_before, None);
    }

    #[test]
    fn npm_without_a_lock_file_resolves_as_of_the_date_and_a_lock_file_keeps_its_pins() {
        let package = r#"{"devDependencies": {"mocha": "^3.0.0"}}"#;
        let (plan, json) = node_plan(&[("package.json", package)], Some("2017-06-01T00:00:00Z"));
        assert_eq!(json["before"], "2017-06-01T00:00:00Z");
        assert_eq!(plan.resolve_before.as_deref(), Some("2017-06-01T00:00:00Z"));
        assert_eq!(
            plan.notes,
            [
                "no package-lock.json: versions resolved as of 2017-06-01T00:00:00Z, not pinned by the project"
            ]
        );
        let lock = r#"{"lockfileVersion": 1, "dependencies": {}}"#;
        let (plan, json) = node_plan(
            &[("package.json", package), ("package-lock.json", lock)],
            Some("2017-06-01T00:00:00Z"),
        );
        assert_eq!(json["before"], serde_json::Value::Null);
        assert_eq!(
            plan.resolve_before, None,
            "the lock file pins: no date in the key"
        );
    }

    #[test]
    fn an_undeclared_managers_version_is_the_newest_of_its_major_as_of_the_date() {
        let classic = "# yarn lockfile v1\n\n\nleft-pad@^1.1.0:\n  version \"1.1.3\"\n";
        let (plan, json) = node_plan(
            &[("package.json", "{}"), ("yarn.lock", classic)],
            Some("2021-06-01T00:00:00Z"),
        );
        assert_eq!(json["manager"]["install"], "yarn@1");
        assert_eq!(json["before"], "2021-06-01T00:00:00Z");
        assert_eq!(plan.resolve_before.as_deref(), Some("2021-06-01T00:00:00Z"));
        assert!(plan.notes.is_empty(), "yarn.lock pins: {:?}", plan.notes);
        // Without a lock file of its manager, the versions are said to be resolved now.
        let (plan, _) = node_plan(
            &[("package.json", r#"{"packageManager": "pnpm@8.15.9"}"#)],
            None,
        );
        assert_eq!(
            plan.notes,
            ["no pnpm-lock.yaml: versions resolved now, not pinned by the project"]
        );
    }

    #[test]
    fn the_workspace_packages_node_modules_are_found_and_linked_before_the_command() {
        let dir = tempfile::tempdir().expect("dir");
        for d in [
            "node_modules/.pnpm/a@1/node_modules/a",
            "packages/app/node_modules/left-pad",
            "packages/app/node_modules/x/node_modules",
            "packages/core/src",
            "tools/gen/node_modules",
            "odd name/node_modules",
        ] {
            fs::create_dir_all(dir.path().join(d)).expect("mkdir");
        }
        let outside = tempfile::tempdir().expect("outside");
        fs::create_dir_all(outside.path().join("node_modules")).expect("mkdir");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).expect("link");
        let found = node_workspace_modules(dir.path());
        assert_eq!(found, ["packages/app", "tools/gen"], "never through a link");
        let command = with_node_links(&found, &[], &["node".into(), "--test".into()]);
        assert_eq!(command[..2], ["sh", "-c"]);
        assert!(
            command[2].contains("\nm ''\n")
                && command[2].ends_with("\nm 'packages/app/'\nm 'tools/gen/'\nexec \"$@\"\n"),
            "{}",
            command[2]
        );
        assert_eq!(command[3..], ["sh", "node", "--test"]);
    }

    /// A `file:` or `link:` folder of the tree is read with the manifests wherever it sits
    /// (a `__tests__` fixture the search passes over); a tarball or a folder outside the
    /// tree is not.
    #[test]
    fn the_folders_of_file_dependencies_are_read_with_the_manifests() {
        let dir = crate::testing::tree(&[
            (
                "packages/app/package.json",
                r#"{"dependencies": {"a": "file:./__tests__/fixtures/a", "b": "link:../b", "c": "file:../../../outside", "d": "file:./d.tgz", "e": "^1"}}"#,
            ),
            ("packages/app/__tests__/fixtures/a/package.json", "{}"),
            ("packages/b/package.json", "{}"),
        ]);
        assert_eq!(
            local_folders(dir.path(), "packages/app/package.json"),
            ["packages/app/__tests__/fixtures/a", "packages/b"]
        );
    }

    /// The copies of `file:` folders the preparation lists reach the run's command quoted;
    /// a line a shell could not carry (a quote, a `..`) is left out.
    #[test]
    fn the_file_folders_to_copy_are_read_and_an_unsafe_line_left_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(
            dir.path().join(".proven-file-copies"),
            "0-packages_app_dep\tpackages/app/dep\t@ws/dep\tnode_modules/.pnpm/@ws+dep@file+packages+app+dep/node_modules\n\
             1-x\tfixtures/x'; rm -rf /\tx\tnode_modules/.pnpm/x/node_modules\n\
             2-up\t../outside\tup\tnode_modules/.pnpm/up/node_modules\n",
        )
        .expect("write");
        let copies = node_file_copies(dir.path());
        assert_eq!(
            copies,
            [FileCopy {
                key: "0-packages_app_dep".into(),
                folder: "packages/app/dep".into(),
                name: "@ws/dep".into(),
                store: "node_modules/.pnpm/@ws+dep@file+packages+app+dep/node_modules".into(),
            }]
        );
        let command = with_node_links(&[], &copies, &["node".into()]);
        assert!(
            command[2].contains("\nc '0-packages_app_dep' 'packages/app/dep' '@ws/dep' 'node_modules/.pnpm/@ws+dep@file+packages+app+dep/node_modules'\nexec"),
            "{}",
            command[2]
        );
    }

    #[test]
    fn npm_dependencies_from_outside_the_registry_are_named() {
        for (v, outside) in [
            ("^1.2.3", false),
            ("npm:other@1", false),
            ("latest", false),
            ("git+https://x/y.git", true),
            ("github:user/repo", true),
            ("user/repo", true),
            ("file:../local", true),
            ("https://x/y.tgz", true),
            ("link:./pkg", true),
            ("workspace:*", false),
            ("workspace:packages/c", false),
            ("catalog:", false),
            ("catalog:vue3", false),
        ] {
            assert_eq!(npm_outside_registry(v).is_some(), outside, "{v}");
        }
    }

    /// pest-parser/pest's `grammars/fuzz/Cargo.toml` (cargo-fuzz's, a workspace of its own)
    /// takes libfuzzer-sys from git, and the tree has no Cargo.lock: the whole preparation
    /// was refused, though the root's `cargo test --all` never builds that crate. A crate
    /// that is its own workspace, or that the root excludes, is left out of the checks; a
    /// member's git dependency is still refused.
    #[test]
    fn a_crate_outside_the_roots_workspace_is_no_part_of_its_preparation() {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
            fs::write(path, text).expect("write");
        };
        let git = "[dependencies.libfuzzer-sys]\ngit = \"https://github.com/rust-fuzz/libfuzzer-sys.git\"\n";
        write(
            "Cargo.toml",
            "[workspace]\nresolver = \"2\"\nmembers = [\"grammars\"]\nexclude = [\"./tools\"]\n",
        );
        write(
            "grammars/Cargo.toml",
            "[package]\nname = \"pest_grammars\"\nversion = \"2.8.0\"\n",
        );
        write(
            "grammars/fuzz/Cargo.toml",
            &format!(
                "[package]\nname = \"pest_grammars-fuzz\"\nversion = \"0.0.0\"\n{git}\n[workspace]\nmembers = [\".\"]\n"
            ),
        );
        write(
            "tools/gen/Cargo.toml",
            &format!("[package]\nname = \"gen\"\nversion = \"0.0.0\"\n{git}"),
        );
        let plan = plan_rust(dir.path(), None)
            .expect("the root's workspace is prepared")
            .expect("a plan");
        assert!(
            plan.inputs
                .iter()
                .any(|(f, _)| f == "grammars/fuzz/Cargo.toml"),
            "still part of the tree's key"
        );
        write(
            "grammars/Cargo.toml",
            &format!("[package]\nname = \"pest_grammars\"\nversion = \"2.8.0\"\n{git}"),
        );
        assert!(matches!(
            plan_rust(dir.path(), None),
            Err(RequestError::UnsupportedDependency { file, .. }) if file == "grammars/Cargo.toml"
        ));
    }

    #[test]
    fn cargo_git_and_outside_path_dependencies_are_refused() {
        let doc: toml::Table =
            "[dependencies]\nserde = \"1\"\ninner = { path = \"crates/inner\" }\n"
                .parse()
                .expect("toml");
        assert!(check_cargo_dependencies(&doc, "Cargo.toml", Path::new(""), false).is_ok());
        for bad in [
            "[dependencies]\nx = { git = \"https://github.com/x/x\" }\n",
            "[dev-dependencies]\nx = { path = \"../../outside\" }\n",
            "[workspace.dependencies]\nx = { path = \"/abs\" }\n",
            "[dependencies]\nx = { version = \"1\", registry = \"corp\" }\n",
            "[target.'cfg(unix)'.dependencies]\nx = { git = \"https://x\" }\n",
        ] {
            let doc: toml::Table = bad.parse().expect("toml");
            assert!(
                check_cargo_dependencies(&doc, "Cargo.toml", Path::new(""), false).is_err(),
                "{bad}"
            );
        }
        let member: toml::Table = "[dependencies]\nsib = { path = \"../sib\" }\n"
            .parse()
            .expect("toml");
        assert!(
            check_cargo_dependencies(&member, "crates/a/Cargo.toml", Path::new("crates/a"), false)
                .is_ok()
        );
        // With a Cargo.lock, a git dependency is stood in for (cargo_git), not refused.
        let git: toml::Table = "[dependencies]\nx = { git = \"https://github.com/x/x\" }\n"
            .parse()
            .expect("toml");
        assert!(check_cargo_dependencies(&git, "Cargo.toml", Path::new(""), true).is_ok());
        assert!(check_cargo_dependencies(&git, "Cargo.toml", Path::new(""), false).is_err());
    }
}

/// The dated view of an npm registry (`scripts/npm-dated.py`), against a registry that
/// stamps every release with its own copy day (2025) while the tarballs keep their files'
/// times: 1.0.0 packed in 2014, 1.1.0 in 2016, 2.0.0 by npm 5 (every file at 1985-10-26),
/// 0.9.1-0.9.4 and 1.0.1-1.0.3 backported in 2020.
/// As of 2015 only 1.0.0 was out; as of 2016-06 1.1.0 too; as of 2018 (npm 5 had come
/// out), 2.0.0 counts as out as well.
#[cfg(test)]
mod npm_dated_tests {
    const HARNESS: &str = r#"
import gzip, io, json, os, subprocess, sys, tarfile, threading, time, urllib.request
from http.server import HTTPServer, SimpleHTTPRequestHandler
root, script, before = sys.argv[1], sys.argv[2], sys.argv[3]
def tgz(mtime):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as t:
        for name in ("package/package.json", "package/index.js"):
            data = b"{}"
            info = tarfile.TarInfo(name); info.size = len(data); info.mtime = mtime
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()
os.makedirs(root + "/pkg/-", exist_ok=True)
mtimes = {"0.9.0": 1370000000, "0.10.0": 0, "0.10.1": 1380000000, "0.9.1": 1600000000, "0.9.2": 1600000100, "0.9.3": 1600000200, "0.9.4": 1600000300, "1.0.0-rc.1": 1390000000, "1.0.0": 1400000000, "1.0.1": 1600000400, "1.0.2": 1600000500, "1.0.3": 1600000600, "1.1.0": 1460000000, "1.1.1": 1610000000, "2.0.0": 499162500, "2.1.0-beta.1": 499162500, "3.0.0": 499162500, "3.0.1": 499162500, "3.1.0": 499162500, "3.2.0": 499162500, "4.0.0": 499162500}
read = set()
dropped = set()
doc = {"name": "pkg", "versions": {}, "time": {}, "dist-tags": {"latest": "4.0.0", "next": "2.1.0-beta.1"}}
class Registry(SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        if self.headers.get("Range"):
            version = self.path.split("pkg-")[-1][:-len(".tgz")]
            # The first read of 1.0.0 is dropped on the way, as a busy proxy does.
            if version == "1.0.0" and version not in dropped:
                dropped.add(version)
                return
            read.add(version)
        return SimpleHTTPRequestHandler.do_GET(self)
    def translate_path(self, path):
        path = path.split("?")[0]
        return root + ("/pkg.json" if path == "/pkg" else path)
upstream = HTTPServer(("127.0.0.1", 0), Registry)
port = upstream.server_address[1]
for v, m in mtimes.items():
    open(root + "/pkg/-/pkg-%s.tgz" % v, "wb").write(tgz(m))
    doc["versions"][v] = {"name": "pkg", "version": v, "dist": {"tarball": "http://127.0.0.1:%d/pkg/-/pkg-%s.tgz" % (port, v)},
                          "dependencies": {"xmlhttprequest": "https://github.com/rase-/node-XMLHttpRequest/archive/a6b6f2.tar.gz", "ms": "^0.7.0"},
                          "optionalDependencies": {"ws": "github:websockets/ws#1.0"}}
    doc["time"][v] = "2025-03-%02dT00:00:00.000Z" % (1 + len(doc["time"]))
open(root + "/pkg.json", "w").write(json.dumps(doc))
threading.Thread(target=upstream.serve_forever, daemon=True).start()
view = subprocess.Popen([sys.executable, script, "http://127.0.0.1:%d/" % port, before, root + "/port", root + "/stats"])
for _ in range(100):
    if os.path.exists(root + "/port"): break
    time.sleep(0.1)
at = open(root + "/port").read()
got = json.loads(urllib.request.urlopen("http://127.0.0.1:%s/pkg" % at).read())
tarball = urllib.request.urlopen("http://127.0.0.1:%s/pkg/-/pkg-1.0.0.tgz" % at).read()
view.kill()
print(json.dumps({"time": got["time"], "tarball_passed": gzip.decompress(tarball) == gzip.decompress(tgz(1400000000)), "stats": json.load(open(root + "/stats")),
                  "dependencies": got["versions"]["0.9.0"]["dependencies"], "optional": got["versions"]["0.9.0"]["optionalDependencies"],
                  "versions": sorted(got["versions"]), "latest": got.get("dist-tags", {}).get("latest"), "next": got.get("dist-tags", {}).get("next"), "read": sorted(read)}))
"#;

    fn times(before: &str) -> serde_json::Value {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/src/scripts/npm-dated.py");
        let out = std::process::Command::new("python3")
            .args(["-c", HARNESS])
            .arg(dir.path())
            .arg(script)
            .arg(before)
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .output()
            .expect("python3 runs (the test needs it on PATH)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("the harness prints JSON")
    }

    fn out_by(t: &serde_json::Value, version: &str, before: &str) -> bool {
        t["time"][version].as_str().expect("a time") <= before
    }

    #[test]
    fn a_registrys_copy_days_give_way_to_the_releases_own_file_times() {
        let t = times("2015-01-01T00:00:00Z");
        let at = "2015-01-01T00:00:00.000Z";
        // 1.0.0's first read was dropped on the way: read again, not counted as after.
        // 0.10.0's files carry no time (packed at 1970, JSONStream 0.8.0's): its line is
        // found begun by its next release, and the search over the lines' first releases
        // goes on past it to 1.0 (taken for after the date, it hid every later line).
        assert!(out_by(&t, "1.0.0", at), "{t}");
        assert_eq!(t["time"]["1.0.0"], "2014-05-13T16:53:20.000Z", "{t}");
        assert!(!out_by(&t, "1.1.0", at), "{t}");
        // Packed by npm 5 (after 2017-05-25): after a date of 2015.
        assert!(!out_by(&t, "2.0.0", at), "{t}");
        assert!(!out_by(&t, "2.1.0-beta.1", at), "{t}");
        // 0.9.1-0.9.4 are backports of 2020, below 1.0.0 in semver order: a search over
        // every version found 0.9.0 the last one out, and a range of 1.x failed the whole
        // tree back to today's releases (minimist 0.2.1 of 2020 below 1.2.0 of 2015).
        assert!(!out_by(&t, "0.9.2", at), "{t}");
        // Only what was out is served, `latest` the newest of it; a line with nothing out
        // by the date (2.x) is served its first release, dated after it (eslint-release
        // `^0.10.0` in a tree of 2016 failed the whole tree back to today's releases).
        assert_eq!(
            t["versions"],
            serde_json::json!([
                "0.10.0",
                "0.10.1",
                "0.9.0",
                "1.0.0",
                "1.0.0-rc.1",
                "2.0.0",
                "3.0.0",
                "4.0.0"
            ]),
            "{t}"
        );
        assert_eq!(t["latest"], "1.0.0", "{t}");
        // A tag whose release came after the date (`next`: 2.1.0-beta.1) is the newest
        // prerelease out by then (resolve's `typescript@next` failed the whole tree).
        assert_eq!(t["next"], "1.0.0-rc.1", "{t}");
        assert_eq!(
            t["stats"]["later"],
            serde_json::json!(["pkg@2.0.0", "pkg@3.0.0", "pkg@4.0.0"]),
            "{t}"
        );
        // The lines begun after the date are found by their first releases, and no release
        // of theirs is read beyond those (a tree of 2016 read some 6,600 tarball heads).
        let read: Vec<&str> = t["read"]
            .as_array()
            .expect("read")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert!(
            !read
                .iter()
                .any(|v| v.starts_with('3') || v.starts_with('4')),
            "{t}"
        );
        // A line of the date that was prereleases only is served them (double-ended-queue's
        // `^2.1.0-0` of 2014), `latest` still the newest release.
        let t = times("2014-03-01T00:00:00Z");
        assert_eq!(
            t["versions"],
            serde_json::json!([
                "0.10.0",
                "0.10.1",
                "0.9.0",
                "1.0.0-rc.1",
                "2.0.0",
                "3.0.0",
                "4.0.0"
            ]),
            "{t}"
        );
        assert_eq!(t["latest"], "0.10.1", "{t}");
        assert_eq!(t["tarball_passed"], true, "{t}");
        assert!(t["stats"]["tarballs"].as_u64() >= Some(2), "{t}");
        let t = times("2016-06-01T00:00:00Z");
        let at = "2016-06-01T00:00:00.000Z";
        // 1.0.1-1.0.3 are backports of 2020 within the major, below 1.1.0 of 2016
        // (readable-stream's 1.0.x below its 1.1.x): each minor line is searched alone.
        assert!(out_by(&t, "1.0.0", at) && out_by(&t, "1.1.0", at), "{t}");
        assert!(!out_by(&t, "1.0.2", at) && !out_by(&t, "1.1.1", at), "{t}");
        assert!(!out_by(&t, "2.0.0", at), "{t}");
        // From npm 5's day on, a tarball it packed says nothing more: counted as out.
        let t = times("2018-01-01T00:00:00Z");
        assert!(out_by(&t, "2.0.0", "2018-01-01T00:00:00.000Z"), "{t}");
    }

    /// A release the registry dates by the date was out by then (a mirror's copy day is
    /// never before the publish day): it is served with the registry's time and its tarball
    /// is not read. A tree of 2026 read a tarball head per release line of each package
    /// whose copy days were 2024's and 2025's, and pino's preparation ran out of its 900 s.
    /// The releases the registry dates after the date are still read.
    #[test]
    fn a_release_the_registry_dates_by_the_date_is_served_without_reading_its_tarball() {
        let t = times("2025-03-10T12:00:00Z");
        let listed = [
            "0.9.0",
            "0.10.0",
            "0.10.1",
            "0.9.1",
            "0.9.2",
            "0.9.3",
            "0.9.4",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
        ];
        let read: Vec<&str> = t["read"]
            .as_array()
            .expect("read")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        for v in listed {
            assert!(!read.contains(&v), "{v} was read: {t}");
            assert!(out_by(&t, v, "2025-03-10T12:00:00.000Z"), "{v}: {t}");
        }
        assert_eq!(t["time"]["0.9.4"], "2025-03-07T00:00:00.000Z", "{t}");
        // 1.0.3, the last of its line (registry: 2025-03-12), is read: its files say 2020,
        // out by the date, and its line with it.
        assert!(read.contains(&"1.0.3"), "{t}");
        assert!(out_by(&t, "1.0.2", "2025-03-10T12:00:00.000Z"), "{t}");
    }

    /// engine.io-client 1.x requires `xmlhttprequest` from a GitHub tarball, which the
    /// sandbox cannot fetch: the view serves it (and a `github:` optional one) as the
    /// registry's release of that name, keeps registry ranges as they are, and keeps what
    /// it changed for the record. With `-` for the date the registry's times are kept.
    #[test]
    fn a_dependency_from_off_the_registry_is_served_as_the_registrys_release() {
        let t = times("-");
        assert_eq!(
            t["dependencies"],
            serde_json::json!({"xmlhttprequest": "*", "ms": "^0.7.0"}),
            "{t}"
        );
        assert_eq!(t["optional"], serde_json::json!({"ws": "*"}), "{t}");
        let replaced = t["stats"]["replaced"].as_array().expect("replaced");
        assert!(
            replaced.iter().any(|r| r
                == "xmlhttprequest (https://github.com/rase-/node-XMLHttpRequest/archive/a6b6f2.tar.gz, required by pkg)"),
            "{t}"
        );
        // The registry's own times, untouched, and no tarball read.
        assert_eq!(t["time"]["0.9.0"], "2025-03-01T00:00:00.000Z", "{t}");
        assert_eq!(t["stats"]["tarballs"], 0, "{t}");
    }
}
