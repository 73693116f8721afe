//! Dependencies: a project's own test environment, prepared before the no-network run and
//! cached by the files that declare it (DESIGN.md section 6).
//!
//! Preparation reads files the change controls, and some of them are code (setup.py,
//! build backends). So it never runs on the runner: it runs in a **preparation container**
//! from the language's image, with no secrets, no host configuration and no network
//! interface at all; the only way out is the runner's egress proxy ([`proxy`]), reached
//! through a mounted Unix socket by a forwarder inside the container ([`forward`]), which
//! lets through the operator's registries only (`PROVEN_SANDBOX_REGISTRIES`). Its output
//! goes to a staging directory mounted at `/deps` — the same path the test runs mount it
//! at, read-only — whose size is watched (a preparation that writes past its cap is
//! killed).
//!
//! What each language prepares (the test run then has no network):
//! - Python ([`python`]): a virtual environment at `/deps/venv` over the image's Python,
//!   holding the project's declared dependencies, its test extras and groups, test and dev
//!   requirement files, tox/nox deps, Pipfile dev-packages (pinned by a lock file when it
//!   has one), what setup.py declares (evaluated in the container), and the project itself
//!   as an editable install pointing at `/work`. A requirement that cannot be had is named,
//!   and the rest installed. Its `bin/pytest` (first on PATH) runs the environment's own
//!   interpreter even where the project does not install pytest: the image's `pytest`
//!   would run outside the environment.
//! - Node: `npm ci --ignore-scripts` (a lock file resolved in the container when the
//!   project has none), devDependencies included; a package the registry does not serve is
//!   dropped by name. `/deps/node_modules`, linked into each run's tree.
//! - Rust: `cargo generate-lockfile` when the project has no Cargo.lock, then `cargo
//!   vendor` (dev-dependencies included): `/deps/vendor` and its source replacement; then
//!   the tests built once into `/deps/target`, the project's own packages cleaned out, so
//!   each run copies the compiled dependencies (when they fit its scratch space).
//! - Go: `go mod download` into `/deps/gomodcache` (test-only modules included).
//!
//! Refused by name before anything runs: index options and direct URLs in requirement
//! files, git, URL and outside-the-tree path dependencies of cargo and npm.
//!
//! A cache entry is a directory `TENANT/LANG-KEY` under `cache_dir/deps` (per tenant: one
//! organisation's preparation is never another's), made complete in a staging directory
//! and renamed into place, so a reader never sees half of one.

mod ci_install;
pub mod forward;
pub mod layer;
pub mod proxy;
pub(crate) mod python;
mod skeleton;
pub(crate) mod uv_lock;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::container::{self, ContainerSpec, Mount};
use crate::record::{DependencyRecord, NotPrepared};
use crate::written::{self, WrittenFileError};
use crate::{Language, RequestError, SandboxConfig, SandboxError};

/// Where a prepared entry is mounted: in the preparation (read-write) and in every test
/// run (read-only), at the same path, so what it recorded of its own paths holds.
pub const MOUNT: &str = "/deps";
const COMPLETE: &str = ".complete";
/// Prefix of the directories a preparation works in before its result is renamed.
pub(crate) const STAGING_PREFIX: &str = ".staging-";
/// The version of the preparation itself: a change to what it does makes new entries.
const VERSION: &str = "proven-sandbox dependencies v4";
const PYTHON_SCRIPT: &str = include_str!("scripts/prepare.py");
const INSPECT_SETUP_SCRIPT: &str = include_str!("scripts/inspect-setup.py");
/// Where the project layer is made (its preparation's output, writable there).
const PROJECT_MOUNT: &str = "/proj";
/// Where a run finds the project layer: in its tree, copied there by the runner.
const PROJECT_IN_TREE: &str = ".proven-project";
/// The marker before what the inspection container printed of setup.py.
const SETUP_MARKER: &str = "@@proven-setup@@";
const NODE_SCRIPT: &str = include_str!("scripts/prepare-node.js");
/// The forwarder's port inside the preparation container.
const PROXY_PORT: u16 = 3128;
/// How often a preparation's output size is measured.
const SIZE_POLL: Duration = Duration::from_secs(2);
/// Manifests a Node or Rust preparation copies at most.
const MAX_MANIFESTS: usize = 500;
/// The largest `report.json` the runner reads (a long list of installed packages fits).
const REPORT_MAX_BYTES: u64 = 4 << 20;

/// A ready cache entry for one run.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub dir: PathBuf,
    /// Variables the run needs to find the dependencies.
    pub env: Vec<String>,
    pub record: DependencyRecord,
    /// The run's hold on the layer it mounts (eviction leaves it alone meanwhile).
    pub _held: layer::InUse,
}

/// Who prepared layers are for: one tenant's one repository. A layer is never shared
/// across them, whatever its key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub tenant: &'a str,
    pub repository: &'a str,
}

/// What a preparation container runs, and what decided it.
#[derive(Debug, Default)]
pub(crate) struct Plan {
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

/// What a preparation script wrote of itself (`/deps/report.json`).
#[derive(Debug, Default, Deserialize)]
struct Report {
    /// The interpreter's version (Python).
    #[serde(default)]
    python: Option<String>,
    /// Node's version (`v20.20.2`).
    #[serde(default)]
    node: Option<String>,
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

fn plan_json(value: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec_pretty(value).unwrap_or_default()
}

/// The preparation a tree needs, or None when it declares nothing to prepare.
pub(crate) fn plan(
    config: &SandboxConfig,
    language: Language,
    src: &Path,
    resolve_before: Option<&str>,
) -> Result<Option<Plan>, SandboxError> {
    match language {
        Language::Python => Ok(plan_python(config, src, resolve_before)),
        Language::Node => plan_node(config, src),
        Language::Rust => plan_rust(src),
        Language::Go => Ok(plan_go(config, src)),
    }
}

fn plan_python(config: &SandboxConfig, src: &Path, resolve_before: Option<&str>) -> Option<Plan> {
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
    // (part of the cache key then), else now.
    let resolve_before = resolve_before.filter(|_| declared.pinned_by.is_none());
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

fn plan_node(config: &SandboxConfig, src: &Path) -> Result<Option<Plan>, SandboxError> {
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
    let mut files = find_named(src, &["package.json"]);
    for lock in ["package-lock.json", "npm-shrinkwrap.json"] {
        if let Some(bytes) = read_small(src, lock) {
            // A `resolved` URL off the registry allow-list is refused by name.
            if let Ok(lock_json) = serde_json::from_slice::<serde_json::Value>(&bytes) {
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
                        if !url.starts_with("http") || !config.registries.allows(h, port) {
                            let name = key.rsplit("node_modules/").next().unwrap_or(key);
                            plan.refused.push(NotPrepared {
                                what: name.to_string(),
                                source: lock.into(),
                                reason: format!(
                                    "resolved from {url}, not one of the operator's registries"
                                ),
                            });
                        }
                    }
                }
            }
            files.push(lock.into());
        }
    }
    files.sort();
    files.dedup();
    for f in &files {
        if let Some(bytes) = read_small(src, f) {
            plan.inputs.push((f.clone(), bytes));
        }
    }
    if !files
        .iter()
        .any(|f| f == "package-lock.json" || f == "npm-shrinkwrap.json")
    {
        let other = ["yarn.lock", "pnpm-lock.yaml"]
            .into_iter()
            .find(|f| src.join(f).is_file());
        plan.notes.push(match other {
            Some(f) => format!("{f} is not read by npm: versions resolved now from package.json, not pinned by the project"),
            None => "no package-lock.json: versions resolved now, not pinned by the project".into(),
        });
    }
    let refused: Vec<serde_json::Value> = plan
        .refused
        .iter()
        .map(|r| serde_json::json!({"what": r.what, "source": r.source, "reason": r.reason}))
        .collect();
    let json = serde_json::json!({
        "files": files,
        "refused": refused,
        "call_timeout": config.prepare_timeout.as_secs(),
    });
    plan.files.push(("plan.json".into(), plan_json(&json)));
    plan.files
        .push(("prepare-node.js".into(), NODE_SCRIPT.as_bytes().to_vec()));
    plan.command = vec![
        "node".into(),
        "/prep/prepare-node.js".into(),
        "/prep/plan.json".into(),
    ];
    if let Some(registry) = &config.npm_registry {
        plan.env.push(format!("npm_config_registry={registry}"));
    }
    Ok(Some(plan))
}

/// package.json's `engines.node`, the Node a tree says it needs (None when it says none).
pub(crate) fn node_engines(src: &Path) -> Option<String> {
    let manifest = read_small(src, "package.json")?;
    let package: serde_json::Value = serde_json::from_slice(&manifest).ok()?;
    package["engines"]["node"]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn plan_rust(src: &Path) -> Result<Option<Plan>, SandboxError> {
    if !src.join("Cargo.toml").is_file() {
        return Ok(None);
    }
    let manifests = find_named(src, &["Cargo.toml"]);
    let mut plan = Plan::default();
    let mut members = Vec::new();
    for m in &manifests {
        let Some(bytes) = read_small(src, m) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Ok(doc) = text.parse::<toml::Table>() {
            let dir = Path::new(m).parent().unwrap_or(Path::new(""));
            check_cargo_dependencies(&doc, m, dir)?;
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
    match read_small(src, "Cargo.lock") {
        Some(lock) => {
            if let Some(line) = String::from_utf8_lossy(&lock)
                .lines()
                .position(|l| l.trim_start().starts_with("source = \"git+"))
            {
                return Err(RequestError::UnsupportedDependency {
                    file: "Cargo.lock".into(),
                    line: line + 1,
                    reason: "a git dependency fetches from elsewhere: it cannot be prepared".into(),
                }
                .into());
            }
            plan.inputs.push(("Cargo.lock".into(), lock));
        }
        None => plan.notes.push(
            "no Cargo.lock: versions resolved now (cargo generate-lockfile), not pinned by the project"
                .into(),
        ),
    }
    plan.skeleton = true;
    plan.command = vec!["sh".into(), "-c".into(), rust_script(&members)];
    plan.env = vec![
        "CARGO_NET_OFFLINE=false".into(),
        "CARGO_HOME=/tmp/cargo-home".into(),
        "CARGO_REGISTRIES_CRATES_IO_PROTOCOL=sparse".into(),
    ];
    plan.env
        .extend(RUST_BUILD_ENV.iter().map(|v| v.to_string()));
    // The runs build as the preparation did, so what it compiled is fresh for them.
    plan.run_env = RUST_BUILD_ENV.iter().map(|v| v.to_string()).collect();
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
/// is minutes on one CPU). The project's own packages are cleaned out of it: a run always
/// compiles the tree it is given, never one the preparation saw. A build that fails (the
/// tree does not compile) keeps what it compiled and is a note, not a failure.
fn rust_script(members: &[String]) -> String {
    let clean: String = members.iter().map(|m| format!(" -p {m}")).collect();
    format!(
        "set -e\n\
         if [ -f Cargo.lock ]; then resolved=false; \
         else cargo generate-lockfile 2>&1; resolved=true; fi\n\
         cargo vendor --locked {MOUNT}/vendor > {MOUNT}/cargo-config.toml\n\
         printf '\\n[net]\\noffline = true\\n' >> {MOUNT}/cargo-config.toml\n\
         mkdir -p \"$CARGO_HOME\" && cp {MOUNT}/cargo-config.toml \"$CARGO_HOME/config.toml\"\n\
         if CARGO_TARGET_DIR={MOUNT}/target cargo test --no-run --offline > {MOUNT}/build.log 2>&1; then \
           note='the tests were built in the preparation: runs reuse its compiled dependencies'; \
         else note='the tests did not build in the preparation (build.log): runs compile what it could not'; fi\n\
         {clean_line}\
         printf '{{\"resolved\": %s, \"notes\": [\"%s\"]}}' \"$resolved\" \"$note\" > {MOUNT}/report.json\n",
        clean_line = if clean.is_empty() {
            String::new()
        } else {
            format!(
                "CARGO_TARGET_DIR={MOUNT}/target cargo clean --offline{clean} > /dev/null 2>&1 || true\n"
            )
        },
    )
}

/// Refuses cargo dependencies from git, or from a path outside the tree, by name.
fn check_cargo_dependencies(
    doc: &toml::Table,
    manifest: &str,
    dir: &Path,
) -> Result<(), SandboxError> {
    let mut tables: Vec<&toml::Table> = Vec::new();
    for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(t) = doc.get(key).and_then(|t| t.as_table()) {
            tables.push(t);
        }
    }
    if let Some(ws) = doc
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(|d| d.as_table())
    {
        tables.push(ws);
    }
    for targets in doc.get("target").and_then(|t| t.as_table()).into_iter() {
        for (_, target) in targets {
            for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
                if let Some(t) = target.get(key).and_then(|t| t.as_table()) {
                    tables.push(t);
                }
            }
        }
    }
    for table in tables {
        for (name, spec) in table {
            let refuse = |reason: &str| -> SandboxError {
                RequestError::UnsupportedDependency {
                    file: manifest.to_string(),
                    line: 0,
                    reason: format!("dependency {name}: {reason}"),
                }
                .into()
            };
            if spec.get("git").is_some() {
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

fn plan_go(config: &SandboxConfig, src: &Path) -> Option<Plan> {
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
pub(crate) fn cache_key(
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

/// The directory of one tenant's and one repository's layers (a digest: neither is a
/// path).
fn scope_dir(root: &Path, scope: Scope<'_>) -> PathBuf {
    let digest = hex::encode(
        &Sha256::digest(
            format!("tenant\0{}\0repository\0{}", scope.tenant, scope.repository).as_bytes(),
        )[..12],
    );
    root.join(format!("s-{digest}"))
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

fn record_of(
    plan: &Plan,
    key: &str,
    report: Report,
    prepared_now: bool,
    egress: Option<&proxy::EgressLog>,
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
    for note in report.notes {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    if let Some(log) = egress
        && !log.refused.is_empty()
    {
        notes.push(format!(
            "refused on the way out (not an allowed registry): {}",
            log.refused.iter().cloned().collect::<Vec<_>>().join(", ")
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
    }
}

/// The report a preparation wrote of itself in `dir` (its output directory, written by the
/// container): never through a link, a regular file within [`REPORT_MAX_BYTES`], or the
/// preparation is refused by name. None written is an empty report; one that is not the
/// report's JSON says so in a note.
fn read_report(language: Language, dir: &Path) -> Result<Report, SandboxError> {
    let bytes = match written::read_written(&dir.join("report.json"), REPORT_MAX_BYTES) {
        Ok(bytes) => bytes,
        Err(WrittenFileError::Missing { .. }) => return Ok(Report::default()),
        Err(source) => return Err(SandboxError::Written { language, source }),
    };
    Ok(serde_json::from_slice(&bytes).unwrap_or_else(|e| Report {
        notes: vec![format!("report.json is not a preparation report: {e}")],
        ..Report::default()
    }))
}

/// A layer ready in `dir`, checked against its seal and held for the run; None when there
/// is none (or one not yet sealed: prepared again, the publish settles which stays).
fn lookup(dir: &Path) -> Result<Option<layer::InUse>, SandboxError> {
    if !written::is_regular_file(&dir.join(COMPLETE)) || !layer::is_sealed(dir) {
        return Ok(None);
    }
    let held = layer::hold(dir)?;
    if !dir.exists() {
        // Evicted between the look and the hold.
        return Ok(None);
    }
    layer::verify(dir)?;
    Ok(Some(held))
}

/// The record of a layer found in the cache.
fn cached(
    plan: &Plan,
    language: Language,
    key: &str,
    dir: &Path,
) -> Result<Option<(DependencyRecord, layer::InUse)>, SandboxError> {
    let Some(held) = lookup(dir)? else {
        return Ok(None);
    };
    let report = read_report(language, dir)?;
    Ok(Some((record_of(plan, key, report, false, None), held)))
}

async fn blocking<T: Send + 'static>(
    what: &'static str,
    path: &Path,
    f: impl FnOnce() -> Result<T, SandboxError> + Send + 'static,
) -> Result<T, SandboxError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| SandboxError::Io {
            action: what,
            path: path.to_path_buf(),
            source: std::io::Error::other(e),
        })?
}

/// What a preparation needs beside its plan: where it happens and for whom.
pub(crate) struct Site<'a> {
    pub docker: &'a bollard::Docker,
    pub config: &'a SandboxConfig,
    pub runner: &'a crate::sweep::RunnerIdentity,
    pub scope: Scope<'a>,
    pub language: Language,
    pub image: &'a str,
}

/// Makes sure the tree at `src` has its dependencies prepared; `None` when it declares
/// nothing to prepare. The cached layer is made from the declarations alone; a Python
/// project's own package goes into a project layer made for `tree` alone, copied into
/// `src` for the run.
pub(crate) async fn prepare(
    site: &Site<'_>,
    src: &Path,
    tree: &crate::tree::TreeRecord,
    resolve_before: Option<&str>,
) -> Result<Option<Prepared>, SandboxError> {
    let Site {
        config,
        scope,
        language,
        image,
        ..
    } = *site;
    let planned = {
        let (src, config) = (src.to_path_buf(), config.clone());
        let before = resolve_before.map(str::to_string);
        blocking("read the dependency files of", &src.clone(), move || {
            plan(&config, language, &src, before.as_deref())
        })
        .await?
    };
    let Some(mut plan) = planned else {
        return Ok(None);
    };
    if plan.inspect_setup_py {
        inspect_setup_py(site, src, &mut plan).await?;
    }
    // Where packages come from is part of the key too.
    let mut sources = config.registries.names();
    sources.extend(
        [&config.pip_index_url, &config.npm_registry]
            .into_iter()
            .flatten()
            .cloned(),
    );
    sources.push(config.goproxy.clone());
    if let Some(at) = &plan.resolve_before {
        sources.push(format!("resolved as of {at}"));
    }
    let key = cache_key(language, image, &sources, &plan.inputs);
    let deps_root = config.cache_dir.join("deps");
    let root = scope_dir(&deps_root, scope);
    let dir = root.join(format!("{}-{key}", language.as_str()));
    let env = plan.run_env.clone();
    let found = {
        let (plan_dir, key) = (dir.clone(), key.clone());
        let planned = Plan {
            inputs: plan.inputs.clone(),
            notes: plan.notes.clone(),
            refused: plan.refused.clone(),
            python_requires: plan.python_requires.clone(),
            node_engines: plan.node_engines.clone(),
            ..Plan::default()
        };
        blocking("read the prepared layer", &dir, move || {
            cached(&planned, language, &key, &plan_dir)
        })
        .await?
    };
    let (mut record, held) = match found {
        Some(hit) => {
            metrics::counter!(layer::CACHE_LOOKUPS_TOTAL, "result" => "hit").increment(1);
            metrics::counter!(crate::metrics::DEPENDENCIES_TOTAL, "result" => "hit").increment(1);
            hit
        }
        None => {
            metrics::counter!(layer::CACHE_LOOKUPS_TOTAL, "result" => "miss").increment(1);
            let skeleton = if plan.skeleton || language == Language::Python {
                let dir = tempfile::Builder::new()
                    .prefix(".skeleton-")
                    .tempdir_in({
                        fs::create_dir_all(&root).map_err(SandboxError::io("create", &root))?;
                        &root
                    })
                    .map_err(SandboxError::io("create", &root))?;
                let skeleton_src = dir.path().join("src");
                skeleton::write(src, &plan.inputs, &skeleton_src, plan.skeleton)?;
                Some(dir)
            } else {
                None
            };
            let built_from = skeleton
                .as_ref()
                .map(|d| d.path().join("src"))
                .unwrap_or_else(|| src.to_path_buf());
            let stage = Stage {
                out_target: MOUNT,
                mounts: Vec::new(),
            };
            let made = make_layer(site, &built_from, &plan, &stage, &root, &dir).await;
            drop(skeleton);
            match made {
                Ok((report, egress, held)) => {
                    metrics::counter!(crate::metrics::DEPENDENCIES_TOTAL, "result" => "prepared")
                        .increment(1);
                    (record_of(&plan, &key, report, true, Some(&egress)), held)
                }
                Err(e) => {
                    metrics::counter!(crate::metrics::DEPENDENCIES_TOTAL, "result" => "failed")
                        .increment(1);
                    return Err(e);
                }
            }
        }
    };
    if plan.project {
        project_layer(site, src, tree, &plan, &key, &root, &dir, &mut record).await?;
    }
    // Every use may have grown the cache (a new layer): back under its cap.
    {
        let (root, cap) = (deps_root.clone(), config.cache_max_bytes);
        blocking("evict prepared layers from", &deps_root, move || {
            layer::evict(&root, cap);
            Ok(())
        })
        .await?;
    }
    Ok(Some(Prepared {
        dir,
        env,
        record,
        _held: held,
    }))
}

/// Where a preparation's output is mounted, and what else it sees.
struct Stage {
    out_target: &'static str,
    mounts: Vec<Mount>,
}

/// Prepares a layer into a staging directory and publishes it as `dir` (sealed, frozen),
/// held for the caller's run.
async fn make_layer(
    site: &Site<'_>,
    src: &Path,
    plan: &Plan,
    stage: &Stage,
    root: &Path,
    dir: &Path,
) -> Result<(Report, proxy::EgressLog, layer::InUse), SandboxError> {
    fs::create_dir_all(root).map_err(SandboxError::io("create", root))?;
    // Named after the runner, so a sweep removes it if the runner dies mid-preparation.
    let staging = root.join(format!(
        "{STAGING_PREFIX}{}-{}",
        site.runner.tag(),
        uuid::Uuid::now_v7().simple()
    ));
    let result = prepare_into(site, src, plan, stage, &staging).await;
    let language = site.language;
    let outcome = match result {
        Ok(egress) => {
            let (out, dir) = (staging.join("out"), dir.to_path_buf());
            blocking("publish the prepared layer", &dir.clone(), move || {
                let report = read_report(language, &out)?;
                publish(&out, &dir)?;
                let held = lookup(&dir)?.ok_or_else(|| SandboxError::Io {
                    action: "find the layer just published at",
                    path: dir.clone(),
                    source: std::io::Error::from(std::io::ErrorKind::NotFound),
                })?;
                Ok((report, egress, held))
            })
            .await
        }
        Err(e) => Err(e),
    };
    let _ = tokio::task::spawn_blocking({
        let staging = staging.clone();
        move || remove_tree(&staging)
    })
    .await;
    outcome
}

/// Reads what setup.py declares in an inspection container of its own: the tree's code
/// runs there with no network and nothing a later run reads; what it printed is data, and
/// part of the cached layer's key.
async fn inspect_setup_py(
    site: &Site<'_>,
    src: &Path,
    plan: &mut Plan,
) -> Result<(), SandboxError> {
    let key = format!("inspect-{}", uuid::Uuid::now_v7().simple());
    let spec = ContainerSpec {
        name: container::container_name(&key),
        key: key.clone(),
        runner: site.runner.label(),
        language: site.language,
        image: site.image.to_string(),
        command: vec!["python3".into(), "-c".into(), INSPECT_SETUP_SCRIPT.into()],
        env: Vec::new(),
        src,
        mounts: Vec::new(),
        limits: site.config.prepare_limits,
        user: site.config.user,
        timeout: site.config.prepare_timeout.min(Duration::from_secs(300)),
        output: site.config.output,
    };
    let execution = container::execute(site.docker, spec).await?;
    let output = format!("{}{}", execution.output.head, execution.output.tail);
    let (declared, report) = read_inspection(&output);
    let bytes = serde_json::to_vec(&declared).unwrap_or_default();
    plan.inputs.push(("setup.py (as evaluated)".into(), bytes));
    if let Some((_, json)) = plan.files.iter_mut().find(|(n, _)| n == "plan.json")
        && let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(json)
    {
        value["setup_declared"] = declared;
        value["setup_report"] = report;
        *json = plan_json(&value);
    }
    Ok(())
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
            });
            (found, report)
        }
        Ok(_) | Err(_) => (
            serde_json::json!({}),
            serde_json::json!({"evaluated": false, "error": "its output did not read"}),
        ),
    }
}

/// The project layer of one tree: key, the environment's key and the tree's identity (its
/// commit, its patch, the files the run adds — removed before the build, so the layer is
/// the commit's and the patch's alone).
fn project_key(deps_key: &str, tree: &crate::tree::TreeRecord) -> String {
    let mut hasher = Sha256::new();
    for part in [
        "project layer v1",
        deps_key,
        &tree.commit,
        tree.patch_sha256.as_deref().unwrap_or(""),
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

/// Python: the project itself, as an editable install made for this tree over the cached
/// environment (mounted read-only), copied into the run's tree as `.proven-project`
/// (the environment's hook makes it a site directory). Its notes join the record.
#[allow(clippy::too_many_arguments)]
async fn project_layer(
    site: &Site<'_>,
    src: &Path,
    tree: &crate::tree::TreeRecord,
    deps_plan: &Plan,
    deps_key: &str,
    root: &Path,
    deps_dir: &Path,
    record: &mut DependencyRecord,
) -> Result<(), SandboxError> {
    let key = project_key(deps_key, tree);
    let dir = root.join(format!("python-project-{key}"));
    let found = {
        let dir = dir.clone();
        blocking("read the project layer", &dir.clone(), move || lookup(&dir)).await?
    };
    let (report, held) = match found {
        Some(held) => {
            let language = site.language;
            let report = {
                let dir = dir.clone();
                blocking("read the project layer", &dir.clone(), move || {
                    read_report(language, &dir)
                })
                .await?
            };
            (report, held)
        }
        None => {
            let mut plan = Plan {
                inputs: deps_plan.inputs.clone(),
                ..Plan::default()
            };
            let mut json: serde_json::Value = deps_plan
                .files
                .iter()
                .find(|(n, _)| n == "plan.json")
                .and_then(|(_, b)| serde_json::from_slice(b).ok())
                .unwrap_or_else(|| serde_json::json!({}));
            json["stage"] = "project".into();
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
            plan.command = deps_plan.command.clone();
            plan.env = deps_plan.env.clone();
            let stage = Stage {
                out_target: PROJECT_MOUNT,
                mounts: vec![Mount::read_only(deps_dir, MOUNT)],
            };
            let (report, _, held) = make_layer(site, src, &plan, &stage, root, &dir).await?;
            (report, held)
        }
    };
    // Into the run's tree: the layer stays immutable, the run's copy is its own.
    let (from, into) = (dir.clone(), src.join(PROJECT_IN_TREE));
    blocking("copy the project layer into", &into.clone(), move || {
        copy_tree(&from, &into)
    })
    .await?;
    drop(held);
    for note in report.notes {
        if !record.notes.contains(&note) {
            record.notes.push(note);
        }
    }
    let mut not_prepared = std::mem::take(&mut record.not_prepared);
    not_prepared.extend(report.not_prepared);
    record.not_prepared = one_entry_per_requirement(not_prepared);
    record.project_layer = Some(key);
    Ok(())
}

/// Copies a layer (files, directories, links as links) into a run's tree, leaving out the
/// runner's own marker and the preparation's report.
fn copy_tree(from: &Path, into: &Path) -> Result<(), SandboxError> {
    // Whatever the tree itself holds at that name (a directory of its own, a link) goes
    // first: the run sees the layer made for it, nothing merged into it or through a link.
    match fs::symlink_metadata(into) {
        Ok(meta) if meta.is_dir() => {
            fs::remove_dir_all(into).map_err(SandboxError::io("remove", into))?
        }
        Ok(_) => fs::remove_file(into).map_err(SandboxError::io("remove", into))?,
        Err(_) => {}
    }
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = into.join(&rel);
        fs::create_dir_all(&dir).map_err(SandboxError::io("create", &dir))?;
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755))
            .map_err(SandboxError::io("set permissions of", &dir))?;
        for entry in fs::read_dir(from.join(&rel)).map_err(SandboxError::io("list", from))? {
            let entry = entry.map_err(SandboxError::io("list", from))?;
            let name = entry.file_name();
            if rel.as_os_str().is_empty() && (name == COMPLETE || name == "report.json") {
                continue;
            }
            let (path, target) = (entry.path(), into.join(&rel).join(&name));
            let kind = entry
                .file_type()
                .map_err(SandboxError::io("inspect", &path))?;
            if kind.is_dir() {
                stack.push(rel.join(&name));
            } else if kind.is_symlink() {
                let link = fs::read_link(&path).map_err(SandboxError::io("read", &path))?;
                std::os::unix::fs::symlink(link, &target)
                    .map_err(SandboxError::io("write", &target))?;
            } else if kind.is_file() {
                fs::copy(&path, &target).map_err(SandboxError::io("write", &target))?;
            }
        }
    }
    Ok(())
}

/// Removes a directory the container's user may have made unwritable to its owner.
fn remove_tree(path: &Path) {
    if fs::remove_dir_all(path).is_ok() {
        return;
    }
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        if let Ok(meta) = fs::symlink_metadata(&p)
            && meta.is_dir()
        {
            let _ = fs::set_permissions(&p, fs::Permissions::from_mode(0o755));
            for entry in fs::read_dir(&p).into_iter().flatten().flatten() {
                stack.push(entry.path());
            }
        }
    }
    let _ = fs::remove_dir_all(path);
}

/// Bytes a directory takes on disk (allocated blocks: a sparse file counts what it uses).
fn disk_bytes(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = fs::symlink_metadata(&p) else {
            continue;
        };
        total += meta.blocks() * 512;
        if meta.is_dir() {
            for entry in fs::read_dir(&p).into_iter().flatten().flatten() {
                stack.push(entry.path());
            }
        }
    }
    total
}

async fn prepare_into(
    site: &Site<'_>,
    src: &Path,
    plan: &Plan,
    stage: &Stage,
    staging: &Path,
) -> Result<proxy::EgressLog, SandboxError> {
    let Site {
        docker,
        config,
        runner,
        language,
        image,
        ..
    } = *site;
    let lock_file = plan
        .inputs
        .iter()
        .map(|(n, _)| n.as_str())
        .take(8)
        .collect::<Vec<_>>()
        .join(", ");
    let failed = |message: String| SandboxError::Dependencies {
        language,
        lock_file: lock_file.clone(),
        message,
    };
    let Some(forwarder) = &config.forwarder else {
        return Err(failed(
            "no forwarder is configured (SandboxConfig.forwarder): a preparation container has no other way to the registries".into(),
        ));
    };
    let out = staging.join("out");
    let prep = staging.join("prep");
    // A Unix socket's path must be short (108 bytes): its directory is a fresh one in the
    // system's temporary directory, removed with the preparation.
    let sock_dir = tempfile::Builder::new()
        .prefix("proven-px-")
        .tempdir()
        .map_err(SandboxError::io("create", std::env::temp_dir()))?;
    let sock = sock_dir.path().to_path_buf();
    fs::create_dir_all(staging).map_err(SandboxError::io("create", staging))?;
    fs::set_permissions(staging, fs::Permissions::from_mode(0o755))
        .map_err(SandboxError::io("set permissions of", staging))?;
    // The preparation writes files the runner must later move and remove: it runs as the
    // runner's own user, unless that is root (then as the sandbox's user, which root can
    // clean up after).
    let user = {
        use std::os::unix::fs::MetadataExt;
        let meta = fs::metadata(staging).map_err(SandboxError::io("inspect", staging))?;
        if meta.uid() == 0 {
            config.user
        } else {
            (meta.uid(), meta.gid())
        }
    };
    // The output and the socket's directory belong to the preparation's user alone
    // (0700): no other local user reads what it writes or reaches its proxy.
    for (dir, mode, owned) in [
        (&out, 0o700, true),
        (&prep, 0o755, false),
        (&sock, 0o700, true),
    ] {
        fs::create_dir_all(dir).map_err(SandboxError::io("create", dir))?;
        if owned {
            own(dir, user)?;
        }
        fs::set_permissions(dir, fs::Permissions::from_mode(mode))
            .map_err(SandboxError::io("set permissions of", dir))?;
    }
    // The mount points of the socket's directory and the forwarder, inside /prep (which is
    // read-only in the container: they must exist before it is mounted).
    for dir in [prep.join("sock"), prep.join("bin")] {
        fs::create_dir_all(&dir).map_err(SandboxError::io("create", &dir))?;
    }
    fs::write(prep.join("bin/forward"), b"")
        .map_err(SandboxError::io("write", prep.join("bin/forward")))?;
    for (name, bytes) in &plan.files {
        let path = prep.join(name);
        fs::write(&path, bytes).map_err(SandboxError::io("write", &path))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644))
            .map_err(SandboxError::io("set permissions of", &path))?;
    }
    let egress = proxy::EgressProxy::start(
        &sock,
        config.registries.clone(),
        config.prepare_max_egress_bytes,
    )
    .await
    .map_err(SandboxError::io("start the egress proxy in", &sock))?;
    let proxy_url = format!("http://127.0.0.1:{PROXY_PORT}");
    let mut env: Vec<String> = ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"]
        .iter()
        .map(|k| format!("{k}={proxy_url}"))
        .collect();
    env.push(format!("npm_config_proxy={proxy_url}"));
    env.push(format!("npm_config_https_proxy={proxy_url}"));
    env.push("NO_PROXY=".into());
    env.extend(plan.env.iter().cloned());
    let mut command = vec!["/prep/bin/forward".to_string()];
    command.extend(forwarder.args.iter().cloned());
    command.extend([
        "--socket".into(),
        "/prep/sock/proxy.sock".into(),
        "--port".into(),
        PROXY_PORT.to_string(),
        "--".into(),
    ]);
    command.extend(plan.command.iter().cloned());
    let key = format!("prep-{}", uuid::Uuid::now_v7().simple());
    let name = container::container_name(&key);
    let spec = ContainerSpec {
        name: name.clone(),
        key: key.clone(),
        runner: runner.label(),
        language,
        image: image.to_string(),
        command,
        env,
        src,
        mounts: vec![
            Mount {
                host: out.clone(),
                target: stage.out_target.into(),
                writable: true,
            },
            Mount::read_only(&prep, "/prep"),
            Mount {
                host: sock.clone(),
                target: "/prep/sock".into(),
                writable: true,
            },
            Mount::read_only(&forwarder.path, "/prep/bin/forward"),
        ]
        .into_iter()
        .chain(stage.mounts.iter().cloned())
        .collect(),
        limits: config.prepare_limits,
        user,
        timeout: config.prepare_timeout,
        output: config.output,
    };
    // The output's size is watched: past the cap, the container is killed.
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let watched = out.clone();
    let cap = config.prepare_max_bytes;
    let killer = docker.clone();
    let kill_name = name.clone();
    let watch = tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(SIZE_POLL) => {}
                _ = stopped.changed() => return false,
            }
            let dir = watched.clone();
            let used = tokio::task::spawn_blocking(move || disk_bytes(&dir))
                .await
                .unwrap_or(0);
            if used > cap {
                let _ = container::remove(&killer, &kill_name).await;
                return true;
            }
        }
    });
    let execution = container::execute(docker, spec).await;
    let _ = stop.send(true);
    let over_cap = watch.await.unwrap_or(false);
    let log = egress.stop();
    if over_cap {
        return Err(failed(format!(
            "the preparation wrote more than {} bytes (PROVEN_SANDBOX_PREPARE_MAX_BYTES)",
            config.prepare_max_bytes
        )));
    }
    let execution = execution?;
    let output = format!("{}{}", execution.output.head, execution.output.tail);
    let tail: String = output
        .lines()
        .rev()
        .take(15)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    let refused = if log.refused.is_empty() {
        String::new()
    } else {
        format!(
            " (refused on the way out: {})",
            log.refused.iter().cloned().collect::<Vec<_>>().join(", ")
        )
    };
    if let Some(killed) = execution.killed {
        return Err(failed(format!(
            "the preparation was killed ({}){refused}: {tail}",
            killed.as_str()
        )));
    }
    if execution.exit_code != Some(0) {
        return Err(failed(format!(
            "the preparation exited {:?}{refused}: {tail}",
            execution.exit_code
        )));
    }
    Ok(log)
}

/// Gives a directory to the preparation's user (when the runner is root: otherwise they
/// are the same user already).
fn own(dir: &Path, (uid, gid): (u32, u32)) -> Result<(), SandboxError> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(dir).map_err(SandboxError::io("inspect", dir))?;
    if meta.uid() == uid {
        return Ok(());
    }
    std::os::unix::fs::chown(dir, Some(uid), Some(gid))
        .map_err(SandboxError::io("give to the preparation's user", dir))
}

/// Publishes a complete staging output as the layer `dir`: frozen (read-only), its marker
/// the runner's own, hashed before it takes its name and sealed right after. Losing the
/// race to another runner is fine (its layer has the same key); a layer left unsealed by
/// a runner that died between the two is replaced.
fn publish(out: &Path, dir: &Path) -> Result<(), SandboxError> {
    // The marker is the runner's own: whatever the preparation left at its name (a link to
    // a host file, which a write would follow) is removed, and the marker made anew.
    let marker = out.join(COMPLETE);
    fs::set_permissions(out, fs::Permissions::from_mode(0o755))
        .map_err(SandboxError::io("set permissions of", out))?;
    match fs::remove_file(&marker) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(SandboxError::io("remove", &marker)(e)),
    }
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&marker)
        .map_err(SandboxError::io("write", &marker))?;
    layer::freeze(out)?;
    let sealed = layer::hash(out).map_err(SandboxError::io("hash the prepared layer", out))?;
    for attempt in 0..2 {
        match fs::rename(out, dir) {
            Ok(()) => return layer::write_seal(dir, &sealed),
            Err(_) if layer::is_sealed(dir) => return Ok(()),
            Err(_) if attempt == 0 && layer::abandoned(dir) => layer::remove_layer(dir),
            Err(e) => {
                return Err(SandboxError::Io {
                    action: "move a prepared layer to",
                    path: dir.to_path_buf(),
                    source: e,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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

    use super::*;

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

    /// A host file a preparation's output links to: its marker must never reach a record.
    fn host_secret(dir: &Path) -> PathBuf {
        let secret = dir.join("host-secret");
        fs::write(&secret, "SECRET-MARKER-31").expect("write");
        secret
    }

    #[test]
    fn a_cache_entry_whose_report_links_to_a_host_file_is_refused_by_name() {
        let host = tempfile::tempdir().expect("tempdir");
        let secret = host_secret(host.path());
        let entry = tempfile::tempdir().expect("tempdir");
        fs::write(entry.path().join(COMPLETE), b"").expect("write");
        for target in [secret.as_path(), Path::new("/dev/zero")] {
            let report = entry.path().join("report.json");
            let _ = fs::remove_file(&report);
            std::os::unix::fs::symlink(target, &report).expect("symlink");
            // Sealed as it is (the link was there when the layer was published).
            layer::seal(entry.path()).expect("seal");
            let err = cached(&Plan::default(), Language::Python, "k", entry.path())
                .expect_err("a linked report is refused");
            let text = err.to_string();
            assert_eq!(
                text,
                "the python preparation's output is refused: report.json is a symlink: never followed"
            );
            assert!(!text.contains("SECRET-MARKER-31"));
            assert!(!err.is_retryable(), "the same entry refuses again");
        }
        // Nothing was read through the link to /dev/zero: this test's process (nextest runs
        // each test in its own) peaked far under 100 MB.
        let status = fs::read_to_string("/proc/self/status").expect("status");
        let peak_kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM");
        assert!(peak_kb < 100 * 1024, "peak memory {peak_kb} kB");
    }

    #[test]
    fn a_report_the_preparation_wrote_is_read_within_its_cap() {
        let out = tempfile::tempdir().expect("tempdir");
        assert_eq!(
            read_report(Language::Node, out.path()).expect("none").notes,
            Vec::<String>::new(),
            "no report: an empty one"
        );
        fs::write(
            out.path().join("report.json"),
            r#"{"notes": ["from the report"], "installed": ["a"]}"#,
        )
        .expect("write");
        let report = read_report(Language::Node, out.path()).expect("report");
        assert_eq!(report.notes, vec!["from the report".to_string()]);
        let big = vec![b' '; REPORT_MAX_BYTES as usize + 1];
        fs::write(out.path().join("report.json"), big).expect("write");
        let err = read_report(Language::Node, out.path()).expect_err("over the cap");
        assert!(
            err.to_string()
                .ends_with("report.json is over 4194304 bytes"),
            "{err}"
        );
        fs::remove_file(out.path().join("report.json")).expect("remove");
        fs::create_dir(out.path().join("report.json")).expect("mkdir");
        let err = read_report(Language::Node, out.path()).expect_err("a directory");
        assert!(
            err.to_string()
                .ends_with("report.json is not a regular file"),
            "{err}"
        );
    }

    #[test]
    fn a_marker_the_preparation_linked_to_a_host_file_is_neither_followed_nor_trusted() {
        let host = tempfile::tempdir().expect("tempdir");
        let secret = host_secret(host.path());
        let staging = tempfile::tempdir().expect("tempdir");
        let out = staging.path().join("out");
        fs::create_dir(&out).expect("mkdir");
        std::os::unix::fs::symlink(&secret, out.join(COMPLETE)).expect("symlink");
        // A linked marker does not make an entry ready.
        assert!(
            cached(&Plan::default(), Language::Go, "k", &out)
                .expect("no entry")
                .is_none()
        );
        let dir = staging.path().join("entry");
        publish(&out, &dir).expect("publish");
        assert_eq!(
            fs::read_to_string(&secret).expect("read"),
            "SECRET-MARKER-31",
            "the host file is untouched"
        );
        assert!(written::is_regular_file(&dir.join(COMPLETE)));
    }

    #[test]
    fn the_project_layer_replaces_what_the_tree_held_at_its_name_never_through_a_link() {
        let layer = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(layer.path().join("lib/site")).expect("mkdir");
        fs::write(layer.path().join("lib/site/proj.pth"), "/work\n").expect("write");
        fs::write(layer.path().join(COMPLETE), "").expect("write");
        let tree = tempfile::tempdir().expect("tempdir");
        let elsewhere = tree.path().join("elsewhere");
        fs::create_dir_all(&elsewhere).expect("mkdir");
        // The tree links the name to another of its directories.
        std::os::unix::fs::symlink(&elsewhere, tree.path().join(PROJECT_IN_TREE)).expect("link");
        copy_tree(layer.path(), &tree.path().join(PROJECT_IN_TREE)).expect("copy");
        let into = tree.path().join(PROJECT_IN_TREE);
        assert!(
            !fs::symlink_metadata(&into)
                .expect("meta")
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs::read_to_string(into.join("lib/site/proj.pth")).expect("read"),
            "/work\n"
        );
        assert!(
            !into.join(COMPLETE).exists(),
            "the runner's marker stays out"
        );
        assert_eq!(
            fs::read_dir(&elsewhere).expect("list").count(),
            0,
            "nothing went through the link"
        );
        // A directory the tree holds there is replaced, not merged into.
        fs::write(into.join("planted.pth"), "import os").expect("write");
        copy_tree(layer.path(), &into).expect("copy");
        assert!(!into.join("planted.pth").exists());
    }

    #[test]
    fn tenants_and_repositories_have_caches_of_their_own() {
        let root = Path::new("/cache/deps");
        let scope = |tenant, repository| scope_dir(root, Scope { tenant, repository });
        assert_ne!(scope("acme", "acme/app"), scope("globex", "acme/app"));
        assert_ne!(scope("acme", "acme/app"), scope("acme", "acme/fork"));
        assert_eq!(scope("acme", "acme/app"), scope("acme", "acme/app"));
        assert_ne!(
            scope("a\0repository\0b", ""),
            scope("a", "b"),
            "parts never run together"
        );
        assert!(
            scope("../../etc", "../x").starts_with(root),
            "a digest, never a path"
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
        ] {
            assert_eq!(npm_outside_registry(v).is_some(), outside, "{v}");
        }
    }

    #[test]
    fn cargo_git_and_outside_path_dependencies_are_refused() {
        let doc: toml::Table =
            "[dependencies]\nserde = \"1\"\ninner = { path = \"crates/inner\" }\n"
                .parse()
                .expect("toml");
        assert!(check_cargo_dependencies(&doc, "Cargo.toml", Path::new("")).is_ok());
        for bad in [
            "[dependencies]\nx = { git = \"https://github.com/x/x\" }\n",
            "[dev-dependencies]\nx = { path = \"../../outside\" }\n",
            "[workspace.dependencies]\nx = { path = \"/abs\" }\n",
            "[dependencies]\nx = { version = \"1\", registry = \"corp\" }\n",
            "[target.'cfg(unix)'.dependencies]\nx = { git = \"https://x\" }\n",
        ] {
            let doc: toml::Table = bad.parse().expect("toml");
            assert!(
                check_cargo_dependencies(&doc, "Cargo.toml", Path::new("")).is_err(),
                "{bad}"
            );
        }
        let member: toml::Table = "[dependencies]\nsib = { path = \"../sib\" }\n"
            .parse()
            .expect("toml");
        assert!(
            check_cargo_dependencies(&member, "crates/a/Cargo.toml", Path::new("crates/a")).is_ok()
        );
    }
}
