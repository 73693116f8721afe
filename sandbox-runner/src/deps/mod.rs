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
//! - Node: with the package manager the project's CI uses (package.json `packageManager`,
//!   else its lock file: npm, pnpm, yarn 1, yarn berry), itself installed from the
//!   registry at that version; the lock file's pins first (`npm ci`, `--frozen-lockfile`,
//!   `--immutable`), scripts off, devDependencies included; a package the registry does not
//!   serve is dropped by name; pnpm that cannot be installed: npm, with `catalog:` and
//!   `workspace:` ranges translated. `/deps/node_modules`, linked into each run's tree, and
//!   each workspace package's `/deps/PKG/node_modules`, linked at its place by the run.
//! - Rust: `cargo generate-lockfile` when the project has no Cargo.lock, then `cargo
//!   vendor` (dev-dependencies included): `/deps/vendor` and its source replacement; then
//!   the tests built once into `/deps/target`, the project's own packages cleaned out, so
//!   each run copies the compiled dependencies (when they fit its scratch space).
//! - Go: `go mod download` into `/deps/gomodcache` (test-only modules included).
//!
//! Refused by name before anything runs: index options and direct URLs in requirement
//! files, git, URL and outside-the-tree path dependencies of cargo and npm. (A Cargo.lock's
//! git packages are named as not prepared, and stood in for by a package that does not
//! compile: the rest is prepared, and only the members needing them fail.)
//!
//! A cache entry is a directory `TENANT/LANG-KEY` under `cache_dir/deps` (per tenant: one
//! organisation's preparation is never another's), made complete in a staging directory
//! and renamed into place, so a reader never sees half of one.

pub mod forward;
pub mod layer;
pub mod proxy;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use proven_sandbox_plan::deps::{INSPECT_SETUP_SCRIPT, Plan, Report, plan, project_key, record_of};
pub use proven_sandbox_plan::deps::{MOUNT, node_engines};
use proven_sandbox_plan::skeleton;
use proven_sandbox_plan::written::{self, WrittenFileError};

use crate::container::{self, ContainerSpec, Mount};
use crate::record::DependencyRecord;
use crate::{Language, SandboxConfig, SandboxError};

/// The marker a layer is complete by (written last, before the rename).
const COMPLETE: &str = ".complete";
/// Prefix of the directories a preparation works in before its result is renamed.
pub(crate) const STAGING_PREFIX: &str = ".staging-";

/// Where a prepared entry is mounted: in the preparation (read-write) and in every test
/// run (read-only), at the same path, so what it recorded of its own paths holds.
const PROJECT_MOUNT: &str = "/proj";
/// Where a run finds the project layer: in its tree, copied there by the runner.
const PROJECT_IN_TREE: &str = ".proven-project";
/// Where a project layer keeps what the project's build wrote inside its packages, at its
/// path in the tree (prepare.py's `BUILT_IN_TREE`).
const BUILT_IN_TREE: &str = "built-in-tree";
/// Where an incomplete project layer keeps what the build wrote before the preparation's
/// time ran out (prepare.py's `RESUME_DIR`), and where the next preparation of the same
/// tree finds it (`RESUME_FROM`).
const RESUME_DIR: &str = "resume";
/// Preparations in a row of one tree's project layer whose build the time cut short, each
/// going on from the last, before its run takes the layer as it is.
const PROJECT_PREPARATIONS: u32 = 3;
const RESUME_MOUNT: &str = "/resume";
/// The forwarder's port inside the preparation container.
const PROXY_PORT: u16 = 3128;
/// How often a preparation's output size is measured.
const SIZE_POLL: Duration = Duration::from_secs(2);
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
    Ok(Report::from_json(&bytes))
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
            Ok(plan(
                &config.plan_settings(),
                language,
                &src,
                before.as_deref(),
            )?)
        })
        .await?
    };
    let Some(mut plan) = planned else {
        return Ok(None);
    };
    if plan.inspect_setup_py {
        inspect_setup_py(site, src, &mut plan).await?;
    }
    let key = plan.key(language, image, &key_sources(config, &plan));
    let deps_root = config.cache_dir.join("deps");
    let root = scope_dir(&deps_root, scope);
    let mut dir = root.join(format!("{}-{key}", language.as_str()));
    let env = plan.run_env.clone();
    // Runs of one process that need the same layer at once (a review's test runs and its
    // analyzers' runs) prepare it once: the others wait, then find it cached.
    let preparing = one_at_a_time(&dir).await;
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
            let made = prepare_layer(site, src, &plan, &root, &dir).await;
            let outcome = if made.is_ok() { "prepared" } else { "failed" };
            metrics::counter!(crate::metrics::DEPENDENCIES_TOTAL, "result" => outcome).increment(1);
            let (report, egress, held, made_at) = made?;
            dir = made_at;
            (
                record_of(&plan, &key, report, true, Some(&egress.refused)),
                held,
            )
        }
    };
    drop(preparing);
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

/// Held while a layer `dir` is looked up and, when missing, made: in one process, one run
/// at a time makes a given layer, and the runs that wait find it made (a miss costs one
/// preparation, however many runs ask for it at once). Other processes sharing the cache
/// directory are not waited for (a layer is published whole, so two makers only cost
/// time).
pub(crate) async fn one_at_a_time(dir: &Path) -> tokio::sync::OwnedMutexGuard<()> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Locks = Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>;
    static LOCKS: OnceLock<Locks> = OnceLock::new();
    let lock = {
        let mut locks = LOCKS
            .get_or_init(Locks::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // Locks nobody holds or waits for are let go (the map stays as small as the runs
        // in flight).
        locks.retain(|_, l| Arc::strong_count(l) > 1);
        locks.entry(dir.to_path_buf()).or_default().clone()
    };
    lock.lock_owned().await
}

/// Where packages come from, part of a layer's key: the registries, the indexes, the Go
/// proxy, and the instant unpinned requirements resolve as of.
fn key_sources(config: &SandboxConfig, plan: &Plan) -> Vec<String> {
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
    sources
}

/// Makes the layer `dir` of a plan the cache lacks, from the tree's declarations alone (a
/// skeleton of them, for Rust and Python), and holds it for the run.
async fn prepare_layer(
    site: &Site<'_>,
    src: &Path,
    plan: &Plan,
    root: &Path,
    dir: &Path,
) -> Result<Made, SandboxError> {
    let language = site.language;
    let skeleton = if plan.skeleton || language == Language::Python {
        let dir = tempfile::Builder::new()
            .prefix(".skeleton-")
            .tempdir_in({
                fs::create_dir_all(root).map_err(SandboxError::io("create", root))?;
                root
            })
            .map_err(SandboxError::io("create", root))?;
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
    let made = make_layer(site, &built_from, plan, &stage, root, dir).await;
    drop(skeleton);
    made
}

/// Where a preparation's output is mounted, and what else it sees.
struct Stage {
    out_target: &'static str,
    mounts: Vec<Mount>,
}

/// A layer made for one run: what the preparation reported, what the proxy saw, the hold
/// on it, and where it was published.
type Made = (Report, proxy::EgressLog, layer::InUse, PathBuf);

/// Where a preparation that stopped short (its time ran out) publishes its layer: beside
/// the key's own name, so that no later lookup finds it (the next run prepares again) and
/// eviction still reclaims it.
fn uncached(dir: &Path) -> PathBuf {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    dir.with_file_name(format!(
        "{name}-incomplete-{}",
        uuid::Uuid::now_v7().simple()
    ))
}

/// Prepares a layer into a staging directory and publishes it as `dir` (sealed, frozen),
/// held for the caller's run; a preparation that stopped short is published under a name
/// no lookup finds ([`uncached`]).
async fn make_layer(
    site: &Site<'_>,
    src: &Path,
    plan: &Plan,
    stage: &Stage,
    root: &Path,
    dir: &Path,
) -> Result<Made, SandboxError> {
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
                let dir = match report.incomplete() {
                    Some(_) => uncached(&dir),
                    None => dir,
                };
                publish(&out, &dir)?;
                let held = lookup(&dir)?.ok_or_else(|| SandboxError::Io {
                    action: "find the layer just published at",
                    path: dir.clone(),
                    source: std::io::Error::from(std::io::ErrorKind::NotFound),
                })?;
                Ok((report, egress, held, dir))
            })
            .await
        }
        Err(e) => Err(e),
    };
    let _ = tokio::task::spawn_blocking({
        let staging = staging.clone();
        move || layer::remove_tree(&staging)
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
    plan.add_setup_inspection(&output);
    Ok(())
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
    let scm_version = {
        let (repository, commit) = (tree.repository.clone(), tree.commit.clone());
        blocking("read the tags of", Path::new(&tree.repository), move || {
            Ok(crate::tree::version_from_tags(
                Path::new(&repository),
                &commit,
            ))
        })
        .await?
    };
    let key = project_key(deps_key, tree, scm_version.as_deref());
    let mut dir = root.join(format!("python-project-{key}"));
    let preparing = one_at_a_time(&dir).await;
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
            let plan = deps_plan.project_plan(tree, scm_version.as_deref());
            let mut preparations = 0;
            loop {
                preparations += 1;
                let mut mounts = vec![Mount::read_only(deps_dir, MOUNT)];
                // An earlier preparation of this very tree whose time ran out mid-build: its
                // build goes on from there (the layer is sealed, and keyed by the tree).
                let resume = {
                    let dir = dir.clone();
                    blocking(
                        "find an incomplete project layer",
                        &dir.clone(),
                        move || resumable(&dir),
                    )
                    .await?
                };
                if let Some((_, from)) = &resume {
                    mounts.push(Mount::read_only(&from.join(RESUME_DIR), RESUME_MOUNT));
                }
                let stage = Stage {
                    out_target: PROJECT_MOUNT,
                    mounts,
                };
                let made = make_layer(site, src, &plan, &stage, root, &dir).await;
                drop(resume);
                let (report, _, held, made_at) = made?;
                // A build the time cut short (spaCy's Cython modules on a busy machine) goes
                // on at once in another preparation, up to `PROJECT_PREPARATIONS`: a run on a
                // project half built is no fact about its code (spacy-10's base: `No module
                // named 'spacy.symbols'`), and its CI would have waited for the build.
                if made_at != dir
                    && made_at.join(RESUME_DIR).is_dir()
                    && preparations < PROJECT_PREPARATIONS
                {
                    drop(held);
                    continue;
                }
                if preparations > 1 {
                    record.notes.push(format!(
                        "the project's build outlasted a preparation's time: it went on in {preparations} preparations in a row"
                    ));
                }
                dir = made_at;
                break (report, held);
            }
        }
    };
    drop(preparing);
    // Into the run's tree: the layer stays immutable, the run's copy is its own.
    let (from, tree_root) = (dir.clone(), src.to_path_buf());
    let left_out = blocking(
        "copy the project layer into",
        &src.join(PROJECT_IN_TREE),
        move || {
            copy_tree(&from, &tree_root.join(PROJECT_IN_TREE))?;
            overlay_built(&from.join(BUILT_IN_TREE), &tree_root)
        },
    )
    .await?;
    if !left_out.is_empty() {
        record.notes.push(format!(
            "what the project's build wrote at {} was left out: the tree has no directory there (a link or a file)",
            left_out.join(", ")
        ));
    }
    drop(held);
    report.add_to(record);
    record.project_layer = Some(key);
    Ok(())
}

/// The newest incomplete layer of the project layer `dir` (published beside it by
/// [`uncached`]) that kept what its build wrote before its time ran out, held while the
/// next preparation reads it.
fn resumable(dir: &Path) -> Result<Option<(layer::InUse, PathBuf)>, SandboxError> {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Ok(None);
    };
    let prefix = format!("{}-incomplete-", name.to_string_lossy());
    let mut found: Vec<PathBuf> = fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .filter(|p| p.join(RESUME_DIR).is_dir())
        .collect();
    // Named by a UUIDv7: the newest sorts last.
    found.sort();
    while let Some(path) = found.pop() {
        if let Some(held) = lookup(&path)? {
            return Ok(Some((held, path)));
        }
    }
    Ok(None)
}

/// Puts what the project's own build wrote inside its packages (an extension compiled in
/// place, `pkg/_ext.cpython-38-x86_64-linux-gnu.so`; a generated `pkg/_version.py`) at its
/// place in the run's tree, where the package is imported from, as the build left it in
/// its own copy. Regular files only, and never through a link of the tree: a file whose
/// directory in the tree is not a real directory is left out (returned by path), a link
/// or file at the file's own place is replaced.
fn overlay_built(from: &Path, tree: &Path) -> Result<Vec<String>, SandboxError> {
    let mut left_out = Vec::new();
    if !fs::symlink_metadata(from).is_ok_and(|m| m.is_dir()) {
        return Ok(left_out);
    }
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in fs::read_dir(from.join(&rel)).map_err(SandboxError::io("list", from))? {
            let entry = entry.map_err(SandboxError::io("list", from))?;
            let (path, rel) = (entry.path(), rel.join(entry.file_name()));
            let target = tree.join(&rel);
            let kind = entry
                .file_type()
                .map_err(SandboxError::io("inspect", &path))?;
            let there = fs::symlink_metadata(&target).ok();
            if kind.is_dir() {
                match there {
                    Some(meta) if meta.is_dir() => stack.push(rel),
                    Some(_) => left_out.push(rel.to_string_lossy().into_owned()),
                    None => {
                        fs::create_dir(&target).map_err(SandboxError::io("create", &target))?;
                        stack.push(rel);
                    }
                }
            } else if kind.is_file() {
                match there {
                    Some(meta) if meta.is_dir() => {
                        left_out.push(rel.to_string_lossy().into_owned());
                        continue;
                    }
                    Some(_) => {
                        fs::remove_file(&target).map_err(SandboxError::io("remove", &target))?
                    }
                    None => {}
                }
                fs::copy(&path, &target).map_err(SandboxError::io("write", &target))?;
            }
        }
    }
    Ok(left_out)
}

/// Copies a layer (files, directories, links as links) into a run's tree, leaving out the
/// runner's own marker, the preparation's report and what goes into the tree itself
/// ([`overlay_built`]).
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
            if rel.as_os_str().is_empty()
                && (name == COMPLETE
                    || name == "report.json"
                    || name == BUILT_IN_TREE
                    || name == RESUME_DIR)
            {
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

/// The directories of one preparation: its output, what it reads (/prep, with the plan's
/// files and the mount points of the forwarder and the socket) and the proxy's socket.
struct StagingDirs {
    out: PathBuf,
    prep: PathBuf,
    /// Removed with the preparation.
    sock_dir: tempfile::TempDir,
    sock: PathBuf,
    /// The user the preparation runs as.
    user: (u32, u32),
}

fn staging_dirs(
    config: &SandboxConfig,
    staging: &Path,
    plan: &Plan,
) -> Result<StagingDirs, SandboxError> {
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
    Ok(StagingDirs {
        out,
        prep,
        sock_dir,
        sock,
        user,
    })
}

/// The preparation's environment and command: its traffic through the forwarder to the
/// runner's egress proxy, then the plan's command.
fn through_the_proxy(forwarder: &crate::Forwarder, plan: &Plan) -> (Vec<String>, Vec<String>) {
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
    (env, command)
}

/// Watches the size of a preparation's output: past `cap` bytes its container is removed
/// and the task ends true; sending on the returned channel ends it false.
fn watch_size(
    docker: &bollard::Docker,
    name: &str,
    out: &Path,
    cap: u64,
) -> (
    tokio::sync::watch::Sender<bool>,
    tokio::task::JoinHandle<bool>,
) {
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let watched = out.to_path_buf();
    let killer = docker.clone();
    let kill_name = name.to_string();
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
    (stop, watch)
}

/// Why a preparation that ran failed (killed, or a non-zero exit), with the last lines it
/// printed and what the proxy refused; None when it succeeded.
fn failure(execution: &container::Execution, log: &proxy::EgressLog) -> Option<String> {
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
        return Some(format!(
            "the preparation was killed ({}){refused}: {tail}",
            killed.as_str()
        ));
    }
    if execution.exit_code != Some(0) {
        return Some(format!(
            "the preparation exited {:?}{refused}: {tail}",
            execution.exit_code
        ));
    }
    None
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
    let StagingDirs {
        out,
        prep,
        sock_dir: _sock_dir,
        sock,
        user,
    } = staging_dirs(config, staging, plan)?;
    let egress = proxy::EgressProxy::start(
        &sock,
        config.registries.clone(),
        config.prepare_max_egress_bytes,
    )
    .await
    .map_err(SandboxError::io("start the egress proxy in", &sock))?;
    let (env, command) = through_the_proxy(forwarder, plan);
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
    let (stop, watch) = watch_size(docker, &name, &out, config.prepare_max_bytes);
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
    if let Some(message) = failure(&execution, &log) {
        return Err(failed(message));
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
    use super::*;

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
            read_report(Language::Node, out.path())
                .expect("none")
                .notes(),
            Vec::<String>::new(),
            "no report: an empty one"
        );
        fs::write(
            out.path().join("report.json"),
            r#"{"notes": ["from the report"], "installed": ["a"]}"#,
        )
        .expect("write");
        let report = read_report(Language::Node, out.path()).expect("report");
        assert_eq!(report.notes(), ["from the report".to_string()]);
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
    fn modules_built_inside_packages_go_to_their_place_in_the_tree_never_through_a_link() {
        let built = tempfile::tempdir().expect("tempdir");
        for rel in ["pkg/_libs/fast.so", "linked/_ext.so", "pkg/_version.py"] {
            let path = built.path().join(rel);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(&path, rel).expect("write");
        }
        let tree = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(tree.path().join("pkg")).expect("mkdir");
        fs::write(tree.path().join("pkg/__init__.py"), "").expect("write");
        // The tree links a package's name out of itself, and a file's own place to a host file.
        let outside = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink(outside.path(), tree.path().join("linked")).expect("link");
        let secret = outside.path().join("secret");
        fs::write(&secret, "host").expect("write");
        std::os::unix::fs::symlink(&secret, tree.path().join("pkg/_version.py")).expect("link");
        let left_out = overlay_built(built.path(), tree.path()).expect("overlay");
        assert_eq!(left_out, vec!["linked".to_string()]);
        assert_eq!(
            fs::read_to_string(tree.path().join("pkg/_libs/fast.so")).expect("read"),
            "pkg/_libs/fast.so"
        );
        assert_eq!(fs::read_dir(outside.path()).expect("list").count(), 1);
        assert_eq!(fs::read_to_string(&secret).expect("read"), "host");
        let version = tree.path().join("pkg/_version.py");
        assert!(fs::symlink_metadata(&version).expect("meta").is_file());
        assert_eq!(
            fs::read_to_string(version).expect("read"),
            "pkg/_version.py"
        );
        // A layer with nothing built inside packages changes nothing.
        assert!(
            overlay_built(&built.path().join("none"), tree.path())
                .expect("overlay")
                .is_empty()
        );
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
}
