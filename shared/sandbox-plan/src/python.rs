//! Python: what a project's tests need, read from the files that declare it — requirement
//! files (with their `-r` and `-c` includes), pyproject.toml (`[project]`, optional
//! dependencies and dependency groups named for tests or development, flit's own metadata,
//! poetry, uv, pdm, and hatch with its environments' features), setup.cfg, tox.ini,
//! noxfile.py, Pipfile and the lock files that pin them (Pipfile.lock, poetry.lock,
//! uv.lock). Nothing here runs any of them: setup.py is evaluated only inside the
//! preparation container, which has network but no secrets.
//!
//! Requirement files, pyproject.toml, Pipfile and the lock files are read by
//! `proven_lockfile` (one reader per format, shared with the dependency scan); this module
//! decides what of it a test environment installs and what it refuses.
//!
//! Every requirement line that could build or fetch from somewhere other than the
//! operator's registries is refused by name (index options, `--trusted-host`,
//! `--find-links`, `--no-binary`, editable installs of anything but the project itself,
//! direct URLs, VCS and local paths), and the preparation goes on without it: a dev tool
//! that cannot be had never blocks the tests.

use std::collections::BTreeSet;
use std::path::{Component, Path};

use proven_lockfile::pins::{Pins, Wanted};
use proven_lockfile::pipfile::Wants;
use proven_lockfile::pyproject::{self, GroupItem, PoetryWants};
use proven_lockfile::requirements::{self, LineKind};
use serde::{Deserialize, Serialize};

/// Files larger than this are not dependency declarations (and are not read).
const MAX_FILE: u64 = 1 << 20;
/// `-r` includes followed at most this deep.
const MAX_INCLUDE_DEPTH: usize = 5;
/// Requirements kept at most (a declaration longer than this is cut, by name).
const MAX_REQUIREMENTS: usize = 2000;

/// One requirement, and where it was declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirement {
    /// A PEP 508 requirement (`name[extras] spec ; marker`), options stripped.
    pub spec: String,
    /// The file (and line, for line-based files) it came from.
    pub source: String,
}

/// A declaration preparation does not follow, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    pub what: String,
    pub source: String,
    pub reason: String,
}

/// A Python project's test environment as its files declare it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonPlan {
    pub requirements: Vec<Requirement>,
    /// `-c` constraints files' lines.
    pub constraints: Vec<Requirement>,
    pub refused: Vec<Refused>,
    /// The project itself is a package (setup.py, setup.cfg or a pyproject build).
    pub project: bool,
    /// setup.py exists: evaluated in the preparation container for its requirements.
    pub setup_py: bool,
    /// Extras of the project to install (test-like names it declares, or a `.[x]` line).
    pub extras: Vec<String>,
    /// What the project says of the Python it needs: (specifier, where).
    pub python_requires: Vec<(String, String)>,
    /// A lock file pinned the versions (None: resolved now, not pinned by the project).
    pub pinned_by: Option<String>,
    /// The files read (their contents decide the preparation: the cache key).
    pub inputs: Vec<String>,
    /// The extras and dependency groups the tests run with: test-named ones, and those the
    /// project's CI asks for in every test job ([`crate::ci_install`]). Read here only: what
    /// they bring is in `requirements` and `extras`.
    #[serde(skip)]
    pub wanted: Wanted,
    /// Extras the project declares under names not of tests (`all`, `d`, `yaml`): their
    /// requirements, taken only when something installs that extra (a CI's `.[all]`, tox's
    /// `extras =`, `flit install`, which installs every extra).
    #[serde(skip)]
    other_extras: Vec<(String, Vec<Requirement>)>,
}

pub use crate::ci_install::ALL_EXTRAS;

fn read(src: &Path, rel: &str) -> Option<String> {
    let path = src.join(rel);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return None;
    }
    String::from_utf8(std::fs::read(&path).ok()?).ok()
}

/// A path relative to the tree, resolved lexically; None when it leaves the tree.
fn inside(base_dir: &Path, target: &str) -> Option<String> {
    let joined = base_dir.join(target);
    let mut parts: Vec<String> = Vec::new();
    for c in joined.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// What one requirement-file line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Nothing,
    Requirement(String),
    /// `-r FILE`
    Include(String),
    /// `-c FILE`
    Constraints(String),
    /// `.`, `-e .`, `.[test]`: the project itself (with extras).
    Project(Vec<String>),
    Refused(String),
}

/// The extras of `.[a,b]`, if the text names the project's own directory.
fn project_extras(text: &str) -> Option<Vec<String>> {
    let t = text.trim().trim_start_matches("./");
    let (path, extras) = match t.find('[') {
        Some(at) => (&t[..at], t[at + 1..].trim_end_matches(']')),
        None => (t, ""),
    };
    if path != "." && !path.is_empty() {
        return None;
    }
    if path.is_empty() && !t.starts_with('.') && !t.starts_with('[') {
        return None;
    }
    Some(
        extras
            .split(',')
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty())
            .collect(),
    )
}

/// What one line (of a requirements file, or a requirement declared elsewhere) asks for,
/// as [`proven_lockfile::requirements`] reads it.
fn classify_line(line: &str) -> Line {
    classify(requirements::classify(line))
}

/// Which of a requirement line's kinds preparation follows, and why it refuses the others.
fn classify(kind: LineKind) -> Line {
    let spec = match kind {
        LineKind::Blank => return Line::Nothing,
        LineKind::Include(value) => return Line::Include(value),
        LineKind::Constraint(value) => return Line::Constraints(value),
        LineKind::Editable(value) => {
            return match project_extras(&value) {
                Some(extras) => Line::Project(extras),
                None => Line::Refused(
                    "an editable install of anything but the project itself builds code from elsewhere"
                        .into(),
                ),
            };
        }
        LineKind::Option { name, .. } => return option(&name),
        LineKind::Requirement { spec, .. } => spec,
    };
    if let Some(extras) = project_extras(&spec) {
        return Line::Project(extras);
    }
    if spec.contains("://")
        || spec.contains(" @ ")
        || spec.contains("@ ")
        || spec.starts_with("git+")
    {
        return Line::Refused("a direct URL or VCS requirement fetches from elsewhere".into());
    }
    if spec.starts_with('.')
        || spec.starts_with('/')
        || spec.starts_with('~')
        || spec.contains('\\')
    {
        return Line::Refused("a local path builds code outside the registry".into());
    }
    if spec.ends_with(".whl") || spec.ends_with(".tar.gz") || spec.ends_with(".zip") {
        return Line::Refused("an archive file is not a registry requirement".into());
    }
    let name_ok = spec
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    if !name_ok {
        return Line::Refused("not a requirement".into());
    }
    Line::Requirement(spec)
}

/// An option line of a requirements file: followed when harmless, refused by name otherwise.
fn option(name: &str) -> Line {
    match name {
        "-i" | "--index-url" | "--extra-index-url" => Line::Refused(
            "an index named by the project: packages come only from the operator's registries"
                .into(),
        ),
        "--trusted-host" => Line::Refused("--trusted-host turns certificate checks off".into()),
        "-f" | "--find-links" => {
            Line::Refused("--find-links fetches from places the operator did not allow".into())
        }
        "--no-binary" => Line::Refused(
            "--no-binary builds from source chosen by the project; wheels and sdists come from the registry"
                .into(),
        ),
        "--no-index" | "--pre" | "--prefer-binary" | "--only-binary" | "--use-feature"
        | "--require-hashes" => Line::Nothing,
        other => Line::Refused(format!("the pip option {other} is not followed")),
    }
}

/// Collects a project's declarations; `src` is the tree's root.
pub fn read_plan(src: &Path) -> PythonPlan {
    let mut plan = PythonPlan::default();
    let mut seen_files = BTreeSet::new();
    let mut specs = BTreeSet::new();
    // What CI installs decides which extras and groups a lock file's pins are taken from.
    let ci = ci_reads(src);
    for (_, installs) in &ci {
        plan.wanted.extend(installs.wanted.clone());
    }
    plan.wanted.extend(runner_groups(src));
    // Lock files first: what they pin is what runs.
    lock_files(src, &mut plan, &mut specs);
    for file in requirement_files(src) {
        requirement_file(src, &file, 0, &mut plan, &mut seen_files, &mut specs);
    }
    if let Some(text) = read(src, "pyproject.toml") {
        plan.inputs.push("pyproject.toml".into());
        pyproject(src, &text, &mut plan, &mut seen_files, &mut specs);
    }
    if let Some(text) = read(src, "setup.cfg") {
        plan.inputs.push("setup.cfg".into());
        for file in setup_cfg(&text, &mut plan, &mut specs) {
            requirement_file_named(
                src,
                &file,
                "setup.cfg",
                &mut plan,
                &mut seen_files,
                &mut specs,
            );
        }
    }
    if let Some(text) = read(src, "setup.py") {
        plan.inputs.push("setup.py".into());
        plan.setup_py = true;
        plan.project = true;
        if let Some(spec) = setup_py_python_requires(&text) {
            plan.python_requires.push((spec, "setup.py".into()));
        }
    }
    if let Some(tox) = crate::tox::Tox::find(&|name| read(src, name)) {
        if !plan
            .inputs
            .iter()
            .any(|i| tox.source.starts_with(i.as_str()))
        {
            plan.inputs.push(
                tox.source
                    .split(' ')
                    .next()
                    .unwrap_or("tox.ini")
                    .to_string(),
            );
        }
        tox_config(src, &tox, &mut plan, &mut seen_files, &mut specs);
    }
    if let Some(text) = read(src, "noxfile.py") {
        plan.inputs.push("noxfile.py".into());
        noxfile(src, &text, &mut plan, &mut seen_files, &mut specs);
    }
    if plan.pinned_by.is_none()
        && let Some(text) = read(src, "Pipfile")
    {
        plan.inputs.push("Pipfile".into());
        pipfile(&text, &mut plan, &mut specs);
    }
    // What the project's CI installs in every job beside its declarations (a backend its
    // tests import, the extras it tests with): after the declarations, which win a repeat.
    for (file, installs) in ci {
        ci_installs(src, &file, installs, &mut plan, &mut seen_files, &mut specs);
    }
    if plan.project {
        // An extra CI names is installed with the project even where no manifest read here
        // declares it (setup.py's extras_require is read by pip itself).
        let extras = plan.wanted.extras.iter().cloned().collect::<Vec<_>>();
        plan.extras.extend(extras);
    }
    declared_pythons(src, &mut plan);
    named_extras(&mut plan, &mut specs);
    plan.extras.sort();
    plan.extras.dedup();
    if plan.requirements.len() > MAX_REQUIREMENTS {
        let cut = plan.requirements.len() - MAX_REQUIREMENTS;
        plan.requirements.truncate(MAX_REQUIREMENTS);
        plan.refused.push(Refused {
            what: format!("{cut} more requirements"),
            source: "the project's declarations".into(),
            reason: format!("more than {MAX_REQUIREMENTS} requirements"),
        });
    }
    plan
}

/// Keeps an extra declared under a name not of tests: its requirements wait until
/// something installs that extra ([`named_extras`]).
fn other_extra(plan: &mut PythonPlan, name: &str, specs: Vec<String>, source: &str) {
    let list = specs
        .into_iter()
        .map(|spec| Requirement {
            spec,
            source: source.to_string(),
        })
        .collect();
    plan.other_extras.push((name.to_string(), list));
}

/// The requirements of the extras something installs (a CI's `pip install -e .[all]`,
/// tox's `extras = yaml`, `flit install`, which installs every extra: [`ALL_EXTRAS`])
/// that no test-like name brought already: what the project's CI had, the tests have.
fn named_extras(plan: &mut PythonPlan, specs: &mut BTreeSet<String>) {
    let all = plan.extras.iter().any(|e| e == ALL_EXTRAS);
    let wanted: Vec<Requirement> = std::mem::take(&mut plan.other_extras)
        .into_iter()
        .filter(|(name, _)| all || plan.extras.iter().any(|e| e.eq_ignore_ascii_case(name)))
        .flat_map(|(_, list)| list)
        .collect();
    for r in wanted {
        push(plan, specs, &r.spec, r.source);
    }
}

/// The one lock file that pins the versions, in order of precedence.
fn lock_files(src: &Path, plan: &mut PythonPlan, specs: &mut BTreeSet<String>) {
    if let Some(text) = read(src, "Pipfile.lock") {
        plan.inputs.push("Pipfile.lock".into());
        plan.pinned_by = Some("Pipfile.lock".into());
        take_pins(proven_lockfile::pins::pipfile_lock(&text), plan, specs);
    } else if let Some(text) = read(src, "poetry.lock") {
        plan.inputs.push("poetry.lock".into());
        plan.pinned_by = Some("poetry.lock".into());
        take_pins(
            proven_lockfile::pins::poetry_lock(&text, "poetry.lock"),
            plan,
            specs,
        );
    } else if let Some(text) = read(src, "uv.lock") {
        plan.inputs.push("uv.lock".into());
        plan.pinned_by = Some("uv.lock".into());
        if let Some(pins) = proven_lockfile::pins::uv_lock(&text, &plan.wanted) {
            take_pins(pins, plan, specs);
        } else {
            plan.pinned_by = None;
            plan.refused.push(Refused {
                what: "uv.lock".into(),
                source: "uv.lock".into(),
                reason: "does not parse as TOML: versions resolved now, not pinned".into(),
            });
        }
    }
}

/// Requirement files at the root and under requirements/, in order.
fn requirement_files(src: &Path) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(src) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let lower = name.to_ascii_lowercase();
            if (lower.contains("requirement") || lower.starts_with("reqs"))
                && (lower.ends_with(".txt") || lower.ends_with(".pip"))
            {
                files.push(name);
            }
        }
    }
    for dir in ["requirements", "reqs", "requirements.d"] {
        if let Ok(entries) = std::fs::read_dir(src.join(dir)) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.ends_with(".txt") {
                    files.push(format!("{dir}/{name}"));
                }
            }
        }
    }
    files.extend(nested_test_requirements(src));
    files.sort();
    files.dedup();
    files
}

/// Directories at most this deep are searched for nested test requirement files.
const NESTED_DEPTH: usize = 6;
/// At most this many nested test requirement files are read.
const MAX_NESTED: usize = 12;
/// Directories never searched: what is not the project's own test set-up.
const NOT_SEARCHED: &[&str] = &[
    ".git",
    ".tox",
    ".venv",
    "venv",
    "node_modules",
    "docs",
    "doc",
    "integration",
    "site-packages",
];

/// The test requirement files a project keeps below its root in a `requirements` folder of
/// its test tooling (ansible's `test/lib/ansible_test/_data/requirements/units.txt`, which
/// names pytest-mock: its tests' `mocker` fixture): a file of such a folder whose name
/// says units or tests. Read in a bounded walk that follows no link.
fn nested_test_requirements(src: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs: Vec<(std::path::PathBuf, String, usize)> =
        vec![(src.to_path_buf(), String::new(), 0)];
    while let Some((dir, rel, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(kind) = e.file_type() else { continue };
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if kind.is_dir() && depth < NESTED_DEPTH && !NOT_SEARCHED.contains(&name.as_str()) {
                dirs.push((e.path(), path, depth + 1));
            } else if kind.is_file()
                && depth >= 2
                && rel.rsplit('/').next() == Some("requirements")
                && name.ends_with(".txt")
            {
                let stem = name.trim_end_matches(".txt").to_ascii_lowercase();
                if ["unit", "test"].iter().any(|w| stem.contains(w)) && found.len() < MAX_NESTED {
                    found.push(path);
                }
            }
        }
    }
    found
}

/// The versions a project says it supports, by name, any one of which will do: Trove
/// classifiers, CI matrices, `.python-version` and `runtime.txt`.
fn declared_pythons(src: &Path, plan: &mut PythonPlan) {
    // Trove classifiers (`Programming Language :: Python :: 3.8`) and CI matrices: the
    // versions a project says it supports, by name, any one of which will do. Read beside
    // python_requires too: an open `>=3.5` says less than the versions a 2019 project names.
    for name in ["setup.py", "setup.cfg", "pyproject.toml"] {
        if let Some(text) = read(src, name) {
            for version in classifier_pythons(&text) {
                plan.python_requires
                    .push((format!("=={version}.*"), format!("{name} classifiers")));
            }
        }
    }
    for (file, key) in ci_files(src) {
        if let Some(text) = read(src, &file) {
            for version in ci_pythons(&text, key) {
                plan.python_requires
                    .push((format!("=={version}.*"), format!("{file} {}", key[0])));
            }
        }
    }
    for name in [".python-version", "runtime.txt"] {
        if let Some(text) = read(src, name) {
            plan.inputs.push(name.into());
            let v = text.lines().next().unwrap_or_default().trim();
            let v = v.trim_start_matches("python-").trim_start_matches("python");
            if v.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                let minor: Vec<&str> = v.split('.').take(2).collect();
                plan.python_requires
                    .push((format!("=={}.*", minor.join(".")), name.into()));
            }
        }
    }
}

/// What a lock file pins joins the plan: each pin a requirement, each package from
/// elsewhere refused by name.
fn take_pins(pins: Pins, plan: &mut PythonPlan, specs: &mut BTreeSet<String>) {
    if pins.project {
        plan.project = true;
    }
    for pin in pins.pinned {
        push(plan, specs, &pin.spec, pin.source);
    }
    for e in pins.elsewhere {
        plan.refused.push(Refused {
            what: e.what,
            source: e.source,
            reason: e.reason,
        });
    }
}

fn push(plan: &mut PythonPlan, specs: &mut BTreeSet<String>, spec: &str, source: String) {
    let spec = spec.trim();
    if spec.is_empty() {
        return;
    }
    match classify_line(spec) {
        Line::Requirement(s) => {
            if specs.insert(s.to_ascii_lowercase()) {
                plan.requirements.push(Requirement { spec: s, source });
            }
        }
        Line::Project(extras) => {
            plan.project = true;
            plan.extras.extend(extras);
        }
        Line::Refused(reason) => plan.refused.push(Refused {
            what: spec.to_string(),
            source,
            reason,
        }),
        Line::Include(_) | Line::Constraints(_) | Line::Nothing => {}
    }
}

fn requirement_file(
    src: &Path,
    rel: &str,
    depth: usize,
    plan: &mut PythonPlan,
    seen: &mut BTreeSet<String>,
    specs: &mut BTreeSet<String>,
) {
    if depth > MAX_INCLUDE_DEPTH || !seen.insert(rel.to_string()) {
        return;
    }
    let Some(text) = read(src, rel) else {
        plan.refused.push(Refused {
            what: rel.to_string(),
            source: "a -r include".into(),
            reason: "not a readable file of the tree".into(),
        });
        return;
    };
    plan.inputs.push(rel.to_string());
    let dir = Path::new(rel).parent().unwrap_or(Path::new(""));
    let major = python_major_of_file(src, rel);
    for l in requirements::lines(&text) {
        let source = format!("{rel}:{}", l.number);
        match classify(l.kind) {
            Line::Nothing => {}
            Line::Requirement(spec) => {
                let spec = match major {
                    Some(marker) => with_marker(&spec, marker),
                    None => spec,
                };
                if specs.insert(spec.to_ascii_lowercase()) {
                    plan.requirements.push(Requirement { spec, source });
                }
            }
            Line::Project(extras) => {
                plan.project = true;
                plan.extras.extend(extras);
            }
            Line::Refused(reason) => plan.refused.push(Refused {
                what: l.content,
                source,
                reason,
            }),
            Line::Include(target) => match inside(dir, &target) {
                Some(path) => requirement_file(src, &path, depth + 1, plan, seen, specs),
                None => plan.refused.push(Refused {
                    what: l.content,
                    source,
                    reason: "an include outside the tree".into(),
                }),
            },
            Line::Constraints(target) => match inside(dir, &target) {
                Some(path) => constraints_file(src, &path, plan, seen),
                None => plan.refused.push(Refused {
                    what: l.content,
                    source,
                    reason: "an include outside the tree".into(),
                }),
            },
        }
    }
}

/// The Python major a requirement file is for, as a marker, where the project keeps one
/// file per major (scrapy of 2017: `requirements.txt` for Python 2 beside
/// `requirements-py3.txt`, and the same under `tests/`): the plain file is the other
/// major's when a `-py3` (or `-py2`) sibling exists. Without it a Python 3 environment got
/// the Python 2 file's pins too (mitmproxy 0.10.1) and none of them installed.
fn python_major_of_file(src: &Path, rel: &str) -> Option<&'static str> {
    const PY2: &str = "python_version < \"3\"";
    const PY3: &str = "python_version >= \"3\"";
    let (stem, ext) = rel.rsplit_once('.')?;
    for (sep, major) in [("-py3", PY3), ("_py3", PY3), ("-py2", PY2), ("_py2", PY2)] {
        if stem.to_ascii_lowercase().ends_with(sep) {
            return Some(major);
        }
    }
    let sibling = |sep: &str| src.join(format!("{stem}{sep}.{ext}")).is_file();
    if sibling("-py3") || sibling("_py3") {
        Some(PY2)
    } else if sibling("-py2") || sibling("_py2") {
        Some(PY3)
    } else {
        None
    }
}

/// `spec` for the environments `marker` says only, beside a marker of its own.
fn with_marker(spec: &str, marker: &str) -> String {
    match spec.split_once(';') {
        Some((req, own)) => format!("{} ; ({}) and {marker}", req.trim(), own.trim()),
        None => format!("{} ; {marker}", spec.trim()),
    }
}

/// A `-c` constraints file's requirements (read once).
fn constraints_file(src: &Path, path: &str, plan: &mut PythonPlan, seen: &mut BTreeSet<String>) {
    if let Some(text) = read(src, path)
        && seen.insert(path.to_string())
    {
        plan.inputs.push(path.to_string());
        for l in requirements::lines(&text) {
            if let Line::Requirement(spec) = classify(l.kind) {
                plan.constraints.push(Requirement {
                    spec,
                    source: format!("{path}:{}", l.number),
                });
            }
        }
    }
}

/// Every CI file's installs, by file.
fn ci_reads(src: &Path) -> Vec<(String, crate::ci_install::CiInstalls)> {
    let other_ci = ["appveyor.yml", ".appveyor.yml", "azure-pipelines.yml"].map(String::from);
    let just = crate::just::FILES.iter().map(|f| f.to_string());
    ci_files(src)
        .into_iter()
        .map(|(f, _)| f)
        .chain(other_ci)
        .chain(just)
        .filter_map(|file| {
            let text = read(src, &file)?;
            let installs = crate::ci_install::read(&file, &text);
            Some((file, installs))
        })
        .collect()
}

/// Reads `file`'s CI installs ([`crate::ci_install`]) by a requirements file's rules: a
/// `-r` names a file of the tree, anything else is a line of its own.
fn ci_installs(
    src: &Path,
    file: &str,
    installs: crate::ci_install::CiInstalls,
    plan: &mut PythonPlan,
    seen: &mut BTreeSet<String>,
    specs: &mut BTreeSet<String>,
) {
    let lines = installs.lines;
    if lines.is_empty() && installs.wanted == Wanted::default() {
        return;
    }
    if !plan.inputs.iter().any(|i| i == file) {
        plan.inputs.push(file.to_string());
    }
    let source = format!("{file} install");
    for line in lines {
        match classify_line(&line) {
            Line::Include(target) => match inside(Path::new(""), &target) {
                Some(path) => requirement_file(src, &path, 1, plan, seen, specs),
                None => plan.refused.push(Refused {
                    what: line.clone(),
                    source: source.clone(),
                    reason: "an include outside the tree".into(),
                }),
            },
            // A CI's constraints file pins its own jobs' resolution; the date does here.
            Line::Constraints(_) => {}
            _ => push(plan, specs, &line, source.clone()),
        }
    }
}

/// Each requirement of a list joins the plan, from `source`.
fn push_all(
    plan: &mut PythonPlan,
    specs: &mut BTreeSet<String>,
    list: &[pyproject::Spec],
    source: &str,
) {
    for spec in list {
        push(plan, specs, &spec.text, source.to_string());
    }
}

/// pyproject.toml, as [`proven_lockfile::pyproject::manifest`] reads it.
fn pyproject(
    src: &Path,
    text: &str,
    plan: &mut PythonPlan,
    seen: &mut BTreeSet<String>,
    specs: &mut BTreeSet<String>,
) {
    let Ok(doc) = pyproject::manifest("pyproject.toml", text) else {
        plan.refused.push(Refused {
            what: "pyproject.toml".into(),
            source: "pyproject.toml".into(),
            reason: "does not parse as TOML".into(),
        });
        return;
    };
    pep621_project(doc.project.as_ref(), plan, specs);
    if doc.build_system {
        plan.project = true;
    }
    dependency_groups(&doc.dependency_groups, plan, specs);
    poetry_tool(doc.poetry.as_ref(), plan, specs);
    dev_dependency_tools(&doc, plan, specs);
    hatch_envs(&doc, plan, specs);
    flit_metadata(doc.flit.as_ref(), plan, specs);
    setuptools_dynamic(src, doc.setuptools_dynamic.as_ref(), plan, seen, specs);
}

/// PEP 621 `[project]`: its Python, its dependencies and its test-named extras.
fn pep621_project(
    project: Option<&pyproject::Project>,
    plan: &mut PythonPlan,
    specs: &mut BTreeSet<String>,
) {
    let Some(project) = project else {
        return;
    };
    plan.project = true;
    if let Some(rp) = &project.requires_python {
        plan.python_requires
            .push((rp.clone(), "pyproject.toml".into()));
    }
    push_all(
        plan,
        specs,
        &project.dependencies,
        "pyproject.toml [project] dependencies",
    );
    declared_extras(
        plan,
        specs,
        &project.optional,
        "pyproject.toml optional-dependencies",
    );
}

/// A manifest's extras: those the tests run with ([`Wanted::extra`]) are prepared now, the
/// others wait until something installs them ([`other_extra`]).
fn declared_extras(
    plan: &mut PythonPlan,
    specs: &mut BTreeSet<String>,
    extras: &[pyproject::Named<pyproject::Spec>],
    section: &str,
) {
    for extra in extras {
        let source = format!("{section}.{}", extra.name);
        if !plan.wanted.extra(&extra.name) {
            let items = extra.items.iter().map(|s| s.text.clone()).collect();
            other_extra(plan, &extra.name, items, &source);
            continue;
        }
        plan.extras.push(extra.name.clone());
        push_all(plan, specs, &extra.items, &source);
    }
}

/// PEP 735 dependency groups named for tests (with the groups they include).
fn dependency_groups(
    groups: &[pyproject::Named<GroupItem>],
    plan: &mut PythonPlan,
    specs: &mut BTreeSet<String>,
) {
    let mut wanted: Vec<String> = groups
        .iter()
        .map(|g| g.name.clone())
        .filter(|k| plan.wanted.group(k))
        .collect();
    let mut done = BTreeSet::new();
    while let Some(name) = wanted.pop() {
        if !done.insert(name.clone()) {
            continue;
        }
        let items = groups
            .iter()
            .filter(|g| g.name == name)
            .flat_map(|g| &g.items);
        for item in items {
            match item {
                GroupItem::Spec(spec) => push(
                    plan,
                    specs,
                    &spec.text,
                    format!("pyproject.toml dependency-groups.{name}"),
                ),
                GroupItem::Include(group) => wanted.push(group.clone()),
            }
        }
    }
}

/// `[tool.poetry]`: its Python, dependencies, dev-dependencies and test-like groups.
fn poetry_tool(
    poetry: Option<&pyproject::Poetry>,
    plan: &mut PythonPlan,
    specs: &mut BTreeSet<String>,
) {
    let Some(poetry) = poetry else {
        return;
    };
    plan.project = true;
    let wanted = plan.wanted.clone();
    let tables = poetry.tables.iter().filter(|t| match &t.group {
        Some(name) => wanted.group(name) || name == "lint" || name == "typing",
        None => true,
    });
    for table in tables {
        for dependency in &table.dependencies {
            let name = &dependency.name;
            if name == "python" {
                if let PoetryWants::Version(v) = &dependency.wants
                    && let Some(v) = poetry_spec(v)
                {
                    plan.python_requires
                        .push((v, "pyproject.toml tool.poetry".into()));
                }
                continue;
            }
            let source = format!("pyproject.toml tool.poetry.{}", table.label);
            match poetry_requirement(name, &dependency.wants) {
                Ok(spec) => push(plan, specs, &spec, source),
                Err(reason) => plan.refused.push(Refused {
                    what: name.clone(),
                    source,
                    reason,
                }),
            }
        }
    }
}

/// The dev-dependencies of uv, rye and pdm.
fn dev_dependency_tools(
    doc: &pyproject::Pyproject,
    plan: &mut PythonPlan,
    specs: &mut BTreeSet<String>,
) {
    for (tool_name, list) in [("uv", &doc.uv_dev), ("rye", &doc.rye_dev)] {
        let source = format!("pyproject.toml tool.{tool_name}.dev-dependencies");
        push_all(plan, specs, list, &source);
    }
    for group in &doc.pdm_dev {
        let source = format!("pyproject.toml tool.pdm.dev-dependencies.{}", group.name);
        push_all(plan, specs, &group.items, &source);
    }
}

/// hatch's default and test-named environments, with the features they install.
fn hatch_envs(doc: &pyproject::Pyproject, plan: &mut PythonPlan, specs: &mut BTreeSet<String>) {
    let optional = doc.project.as_ref().map(|p| &p.optional);
    for env in &doc.hatch_envs {
        let name = &env.name;
        if name != "default" && !proven_lockfile::pins::is_test_name(name) {
            continue;
        }
        let source = format!("pyproject.toml tool.hatch.envs.{name}");
        push_all(plan, specs, &env.dependencies, &source);
        push_all(plan, specs, &env.extra_dependencies, &source);
        // `features`: extras of the project the environment installs, whatever their
        // names (`features = ["all"]` in a test environment is what it tests).
        for feature in &env.features {
            plan.extras.push(feature.clone());
            let source = format!("pyproject.toml tool.hatch.envs.{name} features.{feature}");
            for extra in optional
                .into_iter()
                .flatten()
                .filter(|e| e.name == *feature)
            {
                push_all(plan, specs, &extra.items, &source);
            }
        }
    }
}

/// flit's metadata before PEP 621 (`[tool.flit.metadata]`, still built by flit_core 3):
/// `requires`, `requires-extra` (its `test` and `dev` extras), the older `dev-requires` and
/// `requires-python`.
fn flit_metadata(
    meta: Option<&pyproject::Flit>,
    plan: &mut PythonPlan,
    specs: &mut BTreeSet<String>,
) {
    let Some(meta) = meta else {
        return;
    };
    plan.project = true;
    if let Some(rp) = &meta.requires_python {
        plan.python_requires
            .push((rp.clone(), "pyproject.toml tool.flit.metadata".into()));
    }
    for (key, list) in [
        ("requires", &meta.requires),
        ("dev-requires", &meta.dev_requires),
    ] {
        let source = format!("pyproject.toml tool.flit.metadata {key}");
        push_all(plan, specs, list, &source);
    }
    declared_extras(
        plan,
        specs,
        &meta.requires_extra,
        "pyproject.toml tool.flit.metadata requires-extra",
    );
}

/// setuptools reading its requirements from files (`[tool.setuptools.dynamic]`
/// `dependencies = {file = [...]}`, and test-named `optional-dependencies`).
fn setuptools_dynamic(
    src: &Path,
    dynamic: Option<&pyproject::Dynamic>,
    plan: &mut PythonPlan,
    seen: &mut BTreeSet<String>,
    specs: &mut BTreeSet<String>,
) {
    let Some(dynamic) = dynamic else {
        return;
    };
    let mut files = dynamic.dependencies.clone();
    for extra in dynamic
        .optional
        .iter()
        .filter(|e| plan.wanted.extra(&e.name))
    {
        plan.extras.push(extra.name.clone());
        files.extend(extra.items.iter().cloned());
    }
    for file in files {
        requirement_file_named(
            src,
            &file,
            "pyproject.toml tool.setuptools.dynamic",
            plan,
            seen,
            specs,
        );
    }
}

/// A requirement file a declaration names (`file:` in setup.cfg, setuptools' dynamic
/// metadata), read when it is inside the tree.
fn requirement_file_named(
    src: &Path,
    file: &str,
    source: &str,
    plan: &mut PythonPlan,
    seen: &mut BTreeSet<String>,
    specs: &mut BTreeSet<String>,
) {
    match inside(Path::new(""), file.trim()) {
        Some(path) => requirement_file(src, &path, 0, plan, seen, specs),
        None => plan.refused.push(Refused {
            what: file.to_string(),
            source: source.to_string(),
            reason: "a requirement file outside the tree".into(),
        }),
    }
}

/// A poetry constraint as a PEP 440 specifier: `^1.2` → `>=1.2,<2.0`, `~1.2` →
/// `>=1.2,<1.3`, `*` → no constraint, `1.2` → `==1.2`, others as written. No crate
/// translates poetry's constraint language (poetry-core is Python), so it is done here.
fn poetry_spec(constraint: &str) -> Option<String> {
    let parts: Vec<String> = constraint
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            if p == "*" {
                return Some(String::new());
            }
            if let Some(v) = p.strip_prefix('^') {
                let nums: Vec<u64> = v.split('.').map_while(|n| n.parse().ok()).collect();
                let first = nums
                    .iter()
                    .position(|n| *n != 0)
                    .unwrap_or(nums.len().saturating_sub(1));
                let mut upper: Vec<u64> = nums[..=first.min(nums.len().saturating_sub(1))].to_vec();
                if let Some(last) = upper.last_mut() {
                    *last += 1;
                }
                let upper: Vec<String> = upper.iter().map(u64::to_string).collect();
                return Some(format!(">={v},<{}", upper.join(".")));
            }
            if let Some(v) = p.strip_prefix('~').filter(|v| !v.starts_with('=')) {
                let nums: Vec<u64> = v.split('.').map_while(|n| n.parse().ok()).collect();
                let upper = match nums.len() {
                    0 => return None,
                    1 => format!("{}", nums[0] + 1),
                    _ => format!("{}.{}", nums[0], nums[1] + 1),
                };
                return Some(format!(">={v},<{upper}"));
            }
            if p.starts_with(|c: char| c.is_ascii_digit()) {
                return Some(format!("=={p}"));
            }
            Some(p.to_string())
        })
        .collect();
    let joined: Vec<String> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    Some(joined.join(","))
}

fn poetry_requirement(name: &str, wants: &PoetryWants) -> Result<String, String> {
    let (version, extras) = match wants {
        PoetryWants::Version(v) => (v.clone(), Vec::new()),
        PoetryWants::GitOrUrl => {
            return Err("a git or URL dependency fetches from elsewhere".into());
        }
        PoetryWants::Path => {
            return Err("a path dependency builds code outside the registry".into());
        }
        PoetryWants::Table { version, extras } => (
            version.clone().unwrap_or_else(|| "*".to_string()),
            extras.clone(),
        ),
        // A list of constraints for several Pythons: the first one.
        PoetryWants::Several(list) => match list.first() {
            Some(first) => return poetry_requirement(name, first),
            None => return Err("an empty constraint list".into()),
        },
        PoetryWants::Unreadable => return Err("not a poetry constraint".into()),
    };
    let spec =
        poetry_spec(&version).ok_or_else(|| format!("constraint {version:?} does not read"))?;
    let extras = if extras.is_empty() {
        String::new()
    } else {
        format!("[{}]", extras.join(","))
    };
    Ok(format!("{name}{extras}{spec}"))
}

/// Reads setup.cfg's requirements; returns the files its `file:` values name
/// (`install_requires = file: requirements/base.txt`), which the caller reads.
fn setup_cfg(text: &str, plan: &mut PythonPlan, specs: &mut BTreeSet<String>) -> Vec<String> {
    plan.project = true;
    let mut files = Vec::new();
    let mut section = String::new();
    let mut key = String::new();
    for raw in text.lines() {
        let line = raw.split(" #").next().unwrap_or_default();
        if line.trim_start().starts_with(['#', ';']) || line.trim().is_empty() {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        let t = line.trim();
        if t.starts_with('[') && t.ends_with(']') {
            section = t[1..t.len() - 1].trim().to_string();
            key.clear();
            continue;
        }
        let value = if indented && !key.is_empty() {
            t.to_string()
        } else if let Some((k, v)) = t.split_once(['=', ':']) {
            key = k.trim().to_string();
            v.trim().to_string()
        } else {
            continue;
        };
        if value.is_empty() {
            continue;
        }
        match (section.as_str(), key.as_str()) {
            ("options", "python_requires") => {
                plan.python_requires.push((value, "setup.cfg".into()));
            }
            ("options", "install_requires") | ("options", "tests_require")
                if value.starts_with("file:") =>
            {
                files.extend(
                    value["file:".len()..]
                        .split(',')
                        .map(|f| f.trim().to_string()),
                );
            }
            ("options", "install_requires") | ("options", "tests_require") => {
                push(plan, specs, &value, format!("setup.cfg [options] {key}"));
            }
            ("options.extras_require", extra) if plan.wanted.extra(extra) => {
                plan.extras.push(extra.to_string());
                if let Some(named) = value.strip_prefix("file:") {
                    files.extend(named.split(',').map(|f| f.trim().to_string()));
                } else {
                    push(
                        plan,
                        specs,
                        &value,
                        format!("setup.cfg extras_require.{extra}"),
                    );
                }
            }
            ("options.extras_require", extra) if !value.starts_with("file:") => {
                other_extra(
                    plan,
                    extra,
                    vec![value.clone()],
                    &format!("setup.cfg extras_require.{extra}"),
                );
            }
            _ => {}
        }
    }
    files.retain(|f| !f.is_empty());
    files
}

/// `python_requires=">=3.6"` in a setup.py, read as text (setup.py itself runs only in the
/// preparation container).
fn setup_py_python_requires(text: &str) -> Option<String> {
    let at = text.find("python_requires")?;
    let rest = &text[at + "python_requires".len()..];
    let rest = rest.trim_start().strip_prefix('=')?.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &rest[1..];
    let end = body.find(quote)?;
    Some(body[..end].to_string())
}

/// A tox envlist entry's Python (`py37`, `py3.8`, `3.12-tf`), as `(major, minor)`.
fn tox_env_python(env: &str) -> Option<(String, String)> {
    let v = env.strip_prefix("py").unwrap_or(env);
    let v = v.split(['-', '{']).next().unwrap_or_default();
    if let Some((major, minor)) = v.split_once('.') {
        return (major.len() == 1
            && major.chars().all(|c| c.is_ascii_digit())
            && !minor.is_empty()
            && minor.chars().all(|c| c.is_ascii_digit()))
        .then(|| (major.to_string(), minor.to_string()));
    }
    if v.len() >= 2 && v.chars().all(|c| c.is_ascii_digit()) {
        let (major, minor) = v.split_at(1);
        return Some((major.to_string(), minor.to_string()));
    }
    None
}

/// The marker of the Python a tox environment's first factor names (`py27`, `py3.8`, `py3`,
/// `py2`, `pypy3`); none for another factor.
fn tox_env_marker(factor: &str) -> Option<String> {
    if let Some(pypy) = factor.strip_prefix("pypy") {
        let major = pypy.chars().next().filter(char::is_ascii_digit);
        return Some(match major {
            Some(m) => format!(
                "platform_python_implementation == \"PyPy\" and python_version >= \"{m}\" and python_version < \"{}\"",
                m.to_digit(10).unwrap_or(0) + 1
            ),
            None => "platform_python_implementation == \"PyPy\"".into(),
        });
    }
    match factor {
        "py2" => return Some("python_version < \"3\"".into()),
        "py3" => return Some("python_version >= \"3\"".into()),
        _ => {}
    }
    if !factor.starts_with("py") {
        return None;
    }
    let (major, minor) = tox_env_python(factor)?;
    Some(format!("python_version == \"{major}.{minor}\""))
}

/// tox's configuration, wherever it is kept ([`crate::tox::Tox::find`]): the Pythons of
/// its envlist, and the deps and extras of its test environments.
fn tox_config(
    src: &Path,
    tox: &crate::tox::Tox,
    plan: &mut PythonPlan,
    seen: &mut BTreeSet<String>,
    specs: &mut BTreeSet<String>,
) {
    for value in tox.values("tox", "envlist") {
        for env in tox_envs(&value) {
            if let Some((major, minor)) = tox_env_python(&env) {
                let entry = (
                    format!("=={major}.{minor}.*"),
                    "tox.ini envlist".to_string(),
                );
                if !plan.python_requires.contains(&entry) {
                    plan.python_requires.push(entry);
                }
            }
        }
    }
    for section in tox_testenvs(tox) {
        // The Pythons its environments are written for, beside those its envlist names:
        // scrapy of 2016 lists only `py27`, and runs `TOXENV=py33` on Travis from a
        // `[testenv:py33]` whose `basepython = python3.3`.
        let named = section
            .strip_prefix("testenv:")
            .and_then(|name| tox_env_python(name.split('-').next().unwrap_or_default()));
        let based = tox
            .values(&section, "basepython")
            .into_iter()
            .filter_map(|b| tox_env_python(b.trim().strip_prefix("python")?));
        for (major, minor) in named.into_iter().chain(based) {
            let entry = (
                format!("=={major}.{minor}.*"),
                "tox.ini testenv".to_string(),
            );
            if !plan.python_requires.contains(&entry) {
                plan.python_requires.push(entry);
            }
        }
        // An environment named for a Python (`[testenv:py27-pinned]`, `[testenv:py3]`,
        // `[testenv:pypy3]`) installs its deps on that Python only: scrapy of 2019 pins
        // lxml 3.5 and cryptography 2.0 for Python 2.7 there, whose C builds fail on 3.8
        // and took the whole preparation's time, at every run.
        let for_python = section
            .strip_prefix("testenv:")
            .and_then(|name| tox_env_marker(name.split('-').next().unwrap_or_default()));
        for line in tox.values(&section, "deps") {
            let line = line.replace("{toxinidir}/", "").replace("{toxinidir}", ".");
            let line = match &for_python {
                // What a Python 2 environment includes is no Python 3's; an include cannot
                // carry the marker.
                Some(marker) if line.trim_start().starts_with('-') => {
                    if marker.contains("< \"3\"") || marker.contains("== \"2.") {
                        continue;
                    }
                    line
                }
                Some(marker)
                    if !line.contains(": ")
                        && line
                            .trim_start()
                            .starts_with(|c: char| c.is_ascii_alphanumeric()) =>
                {
                    with_marker(&line, marker)
                }
                _ => line,
            };
            // A factor-conditional line (`py37: mock`) applies to that factor only: a
            // Python factor becomes the marker that says so; another factor (`tf:
            // tensorflow`) is not the default environment's, and is not taken.
            let line = match line.split_once(": ") {
                Some((factor, rest))
                    if !factor.contains(' ') && !factor.contains('=') && !factor.contains('<') =>
                {
                    let Some((major, minor)) = tox_env_python(factor) else {
                        continue;
                    };
                    if rest.contains(';') {
                        rest.to_string()
                    } else {
                        format!("{rest} ; python_version == \"{major}.{minor}\"")
                    }
                }
                _ => line,
            };
            let source = format!("{} [{section}] deps", tox.source);
            match classify_line(&line) {
                Line::Include(target) => match inside(Path::new(""), &target) {
                    Some(path) => requirement_file(src, &path, 1, plan, seen, specs),
                    None => plan.refused.push(Refused {
                        what: line.clone(),
                        source,
                        reason: "an include outside the tree".into(),
                    }),
                },
                _ => push(plan, specs, &line, source),
            }
        }
        // What its commands install before its tests (black's `pip install -e .[d]`).
        let mut commands = tox.values(&section, "commands_pre");
        commands.extend(tox.values(&section, "commands"));
        let installs = crate::ci_install::tox_installs(&commands);
        let file = tox
            .source
            .split(' ')
            .next()
            .unwrap_or("tox.ini")
            .to_string();
        ci_installs(src, &file, installs, plan, seen, specs);
        for line in tox.values(&section, "extras") {
            plan.project = true;
            let Some(line) = tox_default_line(&line) else {
                continue;
            };
            plan.extras.extend(
                line.split([',', ' '])
                    .map(str::trim)
                    .filter(|e| !e.is_empty())
                    .map(String::from),
            );
        }
    }
}

/// A tox line as the default environment reads it: a factor-conditional one
/// (`django52: django52`, django-rest-framework's groups, one per Django of its matrix) is
/// another environment's, unless its factor names a Python (`py38: mock`) or is negated
/// (`!djangomain: x`); None when it is not the default's.
fn tox_default_line(line: &str) -> Option<&str> {
    let Some((factor, rest)) = line.split_once(':') else {
        return Some(line);
    };
    let factor = factor.trim();
    let is_factor = !rest.starts_with("//")
        && !factor.is_empty()
        && factor
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,!".contains(c));
    if !is_factor {
        return Some(line);
    }
    let holds = factor
        .split(',')
        .any(|f| f.starts_with('!') || f.split('-').all(|part| tox_env_python(part).is_some()));
    holds.then_some(rest)
}

/// The sections of tox's test environments.
fn tox_testenvs(tox: &crate::tox::Tox) -> Vec<String> {
    tox.section_names()
        .filter(|s| {
            *s == "testenv"
                || s.starts_with("testenv:py")
                || *s == "testenv:test"
                || *s == "testenv:tests"
        })
        .map(String::from)
        .collect()
}

/// The dependency groups a project's test runner installs: tox's `dependency_groups` (tox
/// 4.22) and nox's `nox.project.dependency_groups(PYPROJECT, "test")`, read before the
/// manifests so that a group of any name is prepared.
fn runner_groups(src: &Path) -> Wanted {
    let mut wanted = Wanted::default();
    let mut group = |name: &str| {
        let name = name.trim();
        if !name.is_empty() && !name.contains(['{', '$']) {
            wanted
                .groups
                .insert(proven_lockfile::pins::normalise_name(name));
        }
    };
    if let Some(tox) = crate::tox::Tox::find(&|name| read(src, name)) {
        for section in tox_testenvs(&tox) {
            for line in tox.values(&section, "dependency_groups") {
                if let Some(line) = tox_default_line(&line) {
                    line.split([',', ' ']).for_each(&mut group);
                }
            }
        }
    }
    if let Some(text) = read(src, "noxfile.py") {
        for (at, _) in text.match_indices("dependency_groups(") {
            let args = call_args(&text[at + "dependency_groups(".len()..]);
            // The first argument is the pyproject's path or its parsed table.
            for name in args.iter().skip(1).filter_map(|a| string_literal(a)) {
                group(name);
            }
        }
    }
    wanted
}

/// A call's arguments, as written, from just after its `(`: split on the commas outside
/// brackets and strings, up to the `)` that closes it.
pub(crate) fn call_args(body: &str) -> Vec<&str> {
    let mut args = Vec::new();
    let (mut depth, mut quote, mut start) = (0usize, None::<char>, 0usize);
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') if depth > 0 => depth -= 1,
            (None, ')') => {
                args.push(body[start..i].trim());
                break;
            }
            (None, ',') if depth == 0 => {
                args.push(body[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    args.retain(|a| !a.is_empty());
    args
}

/// The text of a Python string literal written whole (`"pytest>=7"`, `'-e.'`); None for
/// any other expression (a name, a starred list, a call), which is never a requirement.
pub(crate) fn string_literal(arg: &str) -> Option<&str> {
    let arg = arg.trim();
    ['"', '\''].into_iter().find_map(|q| {
        let inner = arg.strip_prefix(q)?.strip_suffix(q)?;
        (!inner.contains(q)).then_some(inner)
    })
}

fn noxfile(
    src: &Path,
    text: &str,
    plan: &mut PythonPlan,
    seen: &mut BTreeSet<String>,
    specs: &mut BTreeSet<String>,
) {
    // `session.install("pytest", "mock")`, `session.install("-r", "requirements-test.txt")`,
    // `session.install(".[test]")`: string literals only, read, never run.
    for (at, _) in text.match_indices("session.install(") {
        let body = &text[at + "session.install(".len()..];
        let args: Vec<String> = call_args(body)
            .into_iter()
            .filter_map(string_literal)
            .map(str::to_string)
            .collect();
        let mut args = args.into_iter().peekable();
        while let Some(arg) = args.next() {
            if arg == "-r" || arg == "--requirement" {
                if let Some(file) = args.next()
                    && let Some(path) = inside(Path::new(""), &file)
                {
                    requirement_file(src, &path, 1, plan, seen, specs);
                }
                continue;
            }
            if arg == "-e" {
                continue;
            }
            push(plan, specs, &arg, "noxfile.py session.install".into());
        }
    }
}

/// A Pipfile's packages and Python, as [`proven_lockfile::pipfile::manifest`] reads it.
fn pipfile(text: &str, plan: &mut PythonPlan, specs: &mut BTreeSet<String>) {
    let Ok(pipfile) = proven_lockfile::pipfile::manifest("Pipfile", text) else {
        return;
    };
    if let Some(v) = pipfile.python_version {
        plan.python_requires
            .push((format!("=={v}.*"), "Pipfile".into()));
    }
    for package in pipfile.packages {
        let section = if package.dev {
            "dev-packages"
        } else {
            "packages"
        };
        let source = format!("Pipfile [{section}]");
        match package.wants {
            Wants::Registry(version) => {
                push(plan, specs, &format!("{}{version}", package.name), source);
            }
            Wants::Elsewhere => plan.refused.push(Refused {
                what: package.name,
                source,
                reason: "a git, path or file dependency fetches from elsewhere".into(),
            }),
            Wants::Unreadable => {}
        }
    }
}

/// The environments of a tox envlist: comma- or space-separated (and over lines), with
/// `{a,b}` factor groups expanded (`py{27,36}-django{22,30}` is four environments).
fn tox_envs(value: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut item = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '{' => {
                depth += 1;
                item.push(c);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                item.push(c);
            }
            ',' | ' ' | '\t' if depth == 0 => items.push(std::mem::take(&mut item)),
            c => item.push(c),
        }
    }
    items.push(item);
    let mut out = Vec::new();
    for item in items.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
        let mut expanded = vec![String::new()];
        let mut rest = item;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else {
                break;
            };
            let (head, alternatives) = (&rest[..open], &rest[open + 1..close]);
            expanded = expanded
                .iter()
                .flat_map(|e| {
                    alternatives
                        .split(',')
                        .map(move |a| format!("{e}{head}{}", a.trim()))
                })
                .collect();
            rest = &rest[close + 1..];
        }
        out.extend(expanded.into_iter().map(|e| format!("{e}{rest}")));
    }
    out
}

/// The `X.Y` versions of `Programming Language :: Python :: X.Y` classifiers in a file.
fn classifier_pythons(text: &str) -> Vec<String> {
    let mut versions = Vec::new();
    for (at, _) in text.match_indices("Programming Language :: Python :: ") {
        let rest = &text[at + "Programming Language :: Python :: ".len()..];
        let v: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let parts: Vec<&str> = v.split('.').collect();
        if parts.len() == 2 && parts.iter().all(|p| !p.is_empty()) && !versions.contains(&v) {
            versions.push(v);
        }
    }
    versions
}

/// The CI files that name Pythons, with the keys that hold them: Travis's `python`, a
/// GitHub workflow's `python-version` (as setup-python takes it) or its matrix's `python`,
/// Azure Pipelines' `python.version` (its matrix's variable, as `UsePythonVersion` takes
/// it) and AppVeyor's `PYTHON_VERSION` or `PYTHON` (the folder of the runner's Python,
/// `C:\\Python37-x64`).
fn ci_files(src: &Path) -> Vec<(String, &'static [&'static str])> {
    const TRAVIS: &[&str] = &["python"];
    const WORKFLOW: &[&str] = &[
        "python-version",
        "python-versions",
        "python_version",
        "python",
    ];
    const AZURE: &[&str] = &["python.version", "versionSpec", "python_version"];
    const APPVEYOR: &[&str] = &["PYTHON_VERSION", "PYTHON"];
    let mut files = vec![(".travis.yml".to_string(), TRAVIS)];
    files.extend(
        crate::ci_matrix::workflows(src)
            .into_iter()
            .map(|n| (n, WORKFLOW)),
    );
    files.push(("azure-pipelines.yml".to_string(), AZURE));
    for appveyor in ["appveyor.yml", ".appveyor.yml"] {
        files.push((appveyor.to_string(), APPVEYOR));
    }
    files
}

/// The `X.Y` Pythons a CI file names under one of `keys` (read by
/// [`crate::ci_matrix::items`]): PyPy, `3.x` and expressions (`${{ matrix.python }}`) name
/// no version and are skipped. So is a Python under development (`3.8-dev`,
/// `3.12.0-beta.4`, `nightly`): the project tried it ahead of its support (black's `3.8-dev`
/// of 2019), it never said it ran there. A patch wildcard (`3.6.x`) names its minor; a
/// Windows runner's folder (`C:\\Python36-x64`, `C:/Python27`) names the version in it.
fn ci_pythons(text: &str, keys: &[&str]) -> Vec<String> {
    let mut versions: Vec<String> = Vec::new();
    for item in crate::ci_matrix::items(text, keys) {
        let item = windows_python(&item).unwrap_or(item);
        let item = item.strip_suffix(".x").unwrap_or(&item);
        let v: String = item
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let rest = &item[v.len()..];
        let parts: Vec<&str> = v.split('.').collect();
        if parts.len() >= 2 && parts[..2].iter().all(|p| !p.is_empty()) && rest.is_empty() {
            let minor = format!("{}.{}", parts[0], parts[1]);
            if !versions.contains(&minor) {
                versions.push(minor);
            }
        }
    }
    versions
}

/// `X.Y` of a Windows runner's Python folder (`C:\\Python36-x64`, `C:/Python310`): the
/// digits after `Python`, the first the major.
fn windows_python(item: &str) -> Option<String> {
    let (_, after) = item.rsplit_once("Python")?;
    let digits: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
    let rest = &after[digits.len()..];
    if digits.len() < 2 || !(rest.is_empty() || rest.starts_with('-')) {
        return None;
    }
    Some(format!("{}.{}", &digits[..1], &digits[1..]))
}

/// Whether a declaration naming Pythons is a CI's: the Pythons the project's CI ran, as
/// opposed to those it says it supports (classifiers, tox envlist).
pub(crate) fn is_ci(source: &str) -> bool {
    [
        ".travis.yml",
        ".github/workflows/",
        "azure-pipelines.yml",
        "appveyor.yml",
        ".appveyor.yml",
    ]
    .iter()
    .any(|f| source.starts_with(f))
}

/// Declarations that name the Pythons a project runs on, any one of which will do (tox
/// envlists, classifiers, CI matrices, `.python-version`, `runtime.txt`), as opposed to
/// the bounds every Python must meet (`python_requires`, `requires-python`).
pub(crate) fn names_pythons(source: &str) -> bool {
    source == "tox.ini envlist"
        || source == "tox.ini testenv"
        || source.ends_with(" classifiers")
        || is_ci(source)
        || source == ".python-version"
        || source == "runtime.txt"
}

/// The Python versions a plan accepts, as a specifier set (all of them joined), and
/// whether `version` satisfies every one (None when the project says nothing).
pub fn python_fits(
    python_requires: &[(String, String)],
    version: &str,
) -> Option<Result<(), String>> {
    if python_requires.is_empty() {
        return None;
    }
    // tox envlists, classifiers and CI matrices name several Pythons: any of them will do.
    let (tox, strict): (Vec<_>, Vec<_>) = python_requires
        .iter()
        .partition(|(_, source)| names_pythons(source));
    for (spec, source) in &strict {
        let Ok(set) = proven_version::pypi::SpecifierSet::parse(spec, None) else {
            continue;
        };
        if !set.contains(version, Some(true), None) {
            return Some(Err(format!("{source} asks for Python {spec}")));
        }
    }
    if !tox.is_empty()
        && !tox.iter().any(|(spec, _)| {
            proven_version::pypi::SpecifierSet::parse(spec, None)
                .is_ok_and(|s| s.contains(version, Some(true), None))
        })
    {
        let names: Vec<&str> = tox.iter().map(|(s, _)| s.as_str()).collect();
        let from = if tox.iter().any(|(_, s)| s == "tox.ini envlist") {
            "tox.ini envlist tests"
        } else if tox.iter().all(|(_, s)| s.ends_with(" classifiers")) {
            "the classifiers name"
        } else {
            "the project names"
        };
        return Some(Err(format!("{from} Python {}", names.join(" | "))));
    }
    Some(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::tree;

    fn specs(plan: &PythonPlan) -> Vec<&str> {
        plan.requirements.iter().map(|r| r.spec.as_str()).collect()
    }

    #[test]
    fn requirement_lines_that_fetch_or_build_from_elsewhere_are_refused_by_name() {
        for (line, refused) in [
            ("six==1.16.0", false),
            ("attrs>=23 ; python_version >= '3.8'", false),
            ("requests==2.31.0 --hash=sha256:abc", false),
            ("-e .", false),
            (".[test]", false),
            ("--index-url https://evil.example/simple", true),
            ("--extra-index-url https://evil.example/simple", true),
            ("-i https://evil.example/simple", true),
            ("--trusted-host evil.example", true),
            ("--find-links /wheels", true),
            ("--no-binary pkg", true),
            ("-e git+https://example.com/x.git#egg=x", true),
            ("-e ../other", true),
            ("pkg @ https://example.com/pkg.whl", true),
            ("git+https://example.com/repo.git", true),
            ("./local", true),
            ("/abs/path", true),
            ("https://example.com/pkg.tar.gz", true),
        ] {
            let got = classify_line(line);
            assert_eq!(matches!(got, Line::Refused(_)), refused, "{line}: {got:?}");
        }
        assert_eq!(
            classify_line(".[test, dev]"),
            Line::Project(vec!["test".into(), "dev".into()])
        );
    }

    /// The Pythons a tox environment is written for count as the project's words, beside
    /// its envlist's: scrapy of 2016 lists only `py27`, classifies only Python 2, and runs
    /// `TOXENV=py33` from a `[testenv:py33]` with `basepython = python3.3`. It ran on the
    /// newest image (3.11, no `collections.MutableMapping`); it names Python 3.3 now, older
    /// than every image, so the oldest image runs it, the nearest to what it ran on.
    #[test]
    fn the_pythons_of_tox_environments_are_the_projects_words() {
        let t = tree(&[
            (
                "tox.ini",
                "[tox]\nenvlist = py27\n\n[testenv]\ndeps = six\ncommands = py.test tests\n\n[testenv:py33]\nbasepython = python3.3\ndeps = six\n\n[testenv:py35-extra]\ndeps = six\n\n[testenv:docs]\nbasepython = python2.7\n",
            ),
            (
                "setup.py",
                "setup(name='x', classifiers=['Programming Language :: Python :: 2.7'])\n",
            ),
        ]);
        let plan = read_plan(t.path());
        for want in [
            ("==2.7.*", "tox.ini envlist"),
            ("==3.3.*", "tox.ini testenv"),
            ("==3.5.*", "tox.ini testenv"),
        ] {
            let want = (want.0.to_string(), want.1.to_string());
            assert!(
                plan.python_requires.contains(&want),
                "{want:?}: {:?}",
                plan.python_requires
            );
        }
        let images: Vec<(String, String)> = ["3.6", "3.7", "3.8"]
            .iter()
            .map(|v| (v.to_string(), format!("py{v}")))
            .collect();
        let chosen = crate::interpreter::choose_python_as_of(
            &plan.python_requires,
            &images,
            Some("2016-01-18T11:44:04Z"),
        )
        .expect("an image near what it names");
        assert_eq!(chosen.version, "3.6", "{}", chosen.because);
    }

    /// fastapi's family: the tests need an extra with no test name (`all`), which only the
    /// CI's `uv sync --extra all` names; with a uv.lock its pins are taken, without one the
    /// extra's requirements are.
    #[test]
    fn the_extras_and_groups_ci_asks_for_are_prepared() {
        let workflow = ".github/workflows/test.yml";
        let ci = "jobs:\n  test:\n    steps:\n      - run: uv sync --group lint --extra all\n      - run: uv run pytest\n";
        let pyproject = "[project]\nname = \"app\"\ndependencies = [\"core\"]\n[project.optional-dependencies]\nall = [\"uvicorn>=0.30\"]\ndocs = [\"mkdocs\"]\n[dependency-groups]\nlint = [\"ruff\"]\n[build-system]\nrequires = [\"hatchling\"]\n";
        let lock = "version = 1\n[[package]]\nname = \"app\"\nsource = { editable = \".\" }\ndependencies = [{ name = \"core\" }]\n[package.optional-dependencies]\nall = [{ name = \"uvicorn\" }]\n[package.dev-dependencies]\nlint = [{ name = \"ruff\" }]\n[[package]]\nname = \"core\"\nversion = \"1.0\"\n[[package]]\nname = \"uvicorn\"\nversion = \"0.30.0\"\n[[package]]\nname = \"ruff\"\nversion = \"0.5.0\"\n";
        let locked = tree(&[
            (workflow, ci),
            ("pyproject.toml", pyproject),
            ("uv.lock", lock),
        ]);
        let plan = read_plan(locked.path());
        assert_eq!(plan.pinned_by.as_deref(), Some("uv.lock"));
        let got = specs(&plan);
        for pinned in ["core==1.0", "ruff==0.5.0", "uvicorn==0.30.0"] {
            assert!(got.contains(&pinned), "{pinned} not in {got:?}");
        }
        assert!(!got.iter().any(|s| s.starts_with("mkdocs")), "{got:?}");
        assert!(plan.extras.iter().any(|e| e == "all"), "{:?}", plan.extras);
        assert!(
            plan.inputs.iter().any(|i| i == workflow),
            "{:?}",
            plan.inputs
        );
        let open = tree(&[(workflow, ci), ("pyproject.toml", pyproject)]);
        let plan = read_plan(open.path());
        let mut got = specs(&plan);
        got.sort();
        assert_eq!(got, ["core", "ruff", "uvicorn>=0.30"]);
    }

    /// cattrs' family: its CI runs a Justfile recipe whose `uv run --all-extras --group
    /// test pytest` names the extras its tests import (msgspec, PyYAML, pymongo's bson).
    #[test]
    fn the_extras_a_justfiles_test_recipe_runs_with_are_prepared() {
        let justfile = "python := \"\"\n\ntest *args=\"-x tests\":\n    uv run {{ if python != '' { '-p ' + python } else { '' } }} --all-extras --group test pytest {{args}}\n\nlint:\n    uv run --group lint ruff check src\n";
        let pyproject = "[project]\nname = \"p\"\ndependencies = [\"attrs\"]\n[project.optional-dependencies]\nyaml = [\"PyYAML>=6.0\"]\n[dependency-groups]\ntest = [\"pytest>=8\"]\nlint = [\"ruff\"]\n";
        let dir = tree(&[("Justfile", justfile), ("pyproject.toml", pyproject)]);
        let plan = read_plan(dir.path());
        let mut got = specs(&plan);
        got.sort();
        assert_eq!(
            got,
            ["PyYAML>=6.0", "attrs", "pytest>=8"],
            "{:?}",
            plan.inputs
        );
        assert!(
            plan.inputs.iter().any(|i| i == "Justfile"),
            "{:?}",
            plan.inputs
        );
    }

    /// django-rest-framework's tox.ini: a dependency group per Django of its matrix, each
    /// under its factor (`django52: django52`), all four were prepared, did not resolve
    /// together, and were installed one over another (a Django of mixed releases). The
    /// default environment takes the groups without a factor, and a Python factor's.
    #[test]
    fn a_factor_conditional_group_is_another_environments() {
        let pyproject = "[project]\nname = \"p\"\ndependencies = [\"django>=5.2\"]\n[dependency-groups]\ntest = [\"pytest\"]\noptional = [\"coreapi\"]\ndjango52 = [\"django>=5.2,<6.0\"]\ndjango60 = [\"django>=6.0,<6.1\"]\nold = [\"mock\"]\n";
        let tox = "[tox]\nenvlist = {py312,py313}-{django52,django60}\n[testenv]\ncommands = pytest\ndependency_groups =\n       test\n       optional\n       django52: django52\n       django60: django60\n       py313: old\nextras =\n       django60: async\n";
        let dir = tree(&[("pyproject.toml", pyproject), ("tox.ini", tox)]);
        let plan = read_plan(dir.path());
        let got = specs(&plan);
        for wanted in ["pytest", "coreapi", "mock"] {
            assert!(got.contains(&wanted), "{wanted} not in {got:?}");
        }
        assert!(
            !got.iter()
                .any(|s| s.starts_with("django>=5.2,") || s.starts_with("django>=6.0")),
            "{got:?}"
        );
        assert!(plan.extras.is_empty(), "{:?}", plan.extras);
        assert_eq!(tox_default_line("!djangomain: x"), Some(" x"));
        assert_eq!(tox_default_line("py38-django: x"), None);
        assert_eq!(tox_default_line("https://x"), Some("https://x"));
    }

    /// packaging's noxfile: `session.install(*HYPOTHESIS, *nox.project.dependency_groups(
    /// PYPROJECT, "test"))` was read as a requirement named `test`; the groups a runner
    /// installs are prepared whatever their names, and only string literals are requirements.
    #[test]
    fn the_groups_nox_and_tox_install_are_prepared_and_only_literals_are_requirements() {
        let noxfile = "import nox\nPYPROJECT = nox.project.load_toml('pyproject.toml')\n\n@nox.session\ndef tests(session):\n    session.install(\n        *BINARY_ONLY, *nox.project.dependency_groups(PYPROJECT, \"cov\"), \"pytest>=7, <9\"\n    )\n    session.install(\"-e.\", env=ENV)\n";
        let pyproject = "[project]\nname = \"p\"\n[dependency-groups]\ncov = [\"coverage[toml]\"]\nlint = [\"ruff\"]\ndocs = [\"sphinx\"]\n";
        let tox = "[testenv]\ndependency_groups = lint\ncommands = pytest\n";
        let dir = tree(&[
            ("noxfile.py", noxfile),
            ("pyproject.toml", pyproject),
            ("tox.ini", tox),
        ]);
        let plan = read_plan(dir.path());
        let got = specs(&plan);
        for wanted in ["coverage[toml]", "ruff", "pytest>=7, <9"] {
            assert!(got.contains(&wanted), "{wanted} not in {got:?}");
        }
        assert!(!got.iter().any(|s| s.contains("sphinx")), "{got:?}");
        assert!(
            plan.refused.is_empty(),
            "nothing that is no requirement is read as one: {:?}",
            plan.refused
        );
        assert!(plan.project);
    }

    #[test]
    fn includes_are_followed_inside_the_tree_only() {
        let dir = tree(&[
            (
                "requirements.txt",
                "six==1.16.0\n-r requirements/test.txt\n-r ../../etc/x.txt\n",
            ),
            (
                "requirements/test.txt",
                "pytest>=7 \\\n  --hash=sha256:ab\n-c constraints.txt\n--no-binary evil\n",
            ),
            ("requirements/constraints.txt", "attrs<24\n"),
            ("test_requirements.txt", "nose\npython_toolbox\n"),
        ]);
        let plan = read_plan(dir.path());
        assert_eq!(
            specs(&plan),
            ["six==1.16.0", "pytest>=7", "nose", "python_toolbox"]
        );
        assert_eq!(plan.constraints.len(), 1);
        assert_eq!(plan.constraints[0].source, "requirements/constraints.txt:1");
        let refused: Vec<(&str, &str)> = plan
            .refused
            .iter()
            .map(|r| (r.what.as_str(), r.source.as_str()))
            .collect();
        assert_eq!(
            refused,
            [
                ("--no-binary evil", "requirements/test.txt:4"),
                ("-r ../../etc/x.txt", "requirements.txt:3")
            ]
        );
        assert!(plan.pinned_by.is_none());
    }

    #[test]
    fn pyproject_declarations_of_every_tool_are_read() {
        let dir = tree(&[(
            "pyproject.toml",
            r#"
[build-system]
requires = ["setuptools"]
[project]
name = "demo"
requires-python = ">=3.8"
dependencies = ["click>=8"]
[project.optional-dependencies]
test = ["pytest", "pytest-mock"]
docs = ["sphinx"]
[dependency-groups]
dev = ["ruff", {include-group = "typing"}]
typing = ["mypy"]
[tool.poetry.dependencies]
python = "^3.8"
rich = "^13.1"
[tool.poetry.group.test.dependencies]
hypothesis = {version = "~6.8", extras = ["cli"]}
local = {path = "../local"}
[tool.uv]
dev-dependencies = ["coverage"]
[tool.hatch.envs.default]
dependencies = ["pytest-cov"]
"#,
        )]);
        let plan = read_plan(dir.path());
        assert_eq!(
            specs(&plan),
            [
                "click>=8",
                "pytest",
                "pytest-mock",
                "ruff",
                "mypy",
                "rich>=13.1,<14",
                "hypothesis[cli]>=6.8,<6.9",
                "coverage",
                "pytest-cov"
            ]
        );
        assert!(
            !specs(&plan).contains(&"sphinx"),
            "docs extras are not test extras"
        );
        assert_eq!(plan.extras, ["test"]);
        assert!(plan.project);
        assert_eq!(plan.refused[0].what, "local");
        assert_eq!(
            plan.python_requires,
            [
                (">=3.8".to_string(), "pyproject.toml".to_string()),
                (
                    ">=3.8,<4".to_string(),
                    "pyproject.toml tool.poetry".to_string()
                )
            ]
        );
    }

    /// One project of each build backend's family, as each declares what its tests need:
    /// every runtime and test requirement is read, nothing of docs-only extras.
    #[test]
    fn every_build_backends_dependency_declarations_are_read() {
        for (family, pyproject, setup_cfg, want, extras) in [
            (
                // flit before PEP 621 (2019-era projects): [tool.flit.metadata].
                "flit legacy",
                r#"[build-system]
requires = ["flit_core >=2,<4"]
build-backend = "flit_core.buildapi"
[tool.flit.metadata]
module = "demo"
requires-python = ">=3.5"
requires = ["attrs>=19", "six"]
dev-requires = ["tox"]
[tool.flit.metadata.requires-extra]
test = ["pytest>=4", "hypothesis"]
doc = ["sphinx"]
"#,
                "",
                &["attrs>=19", "six", "tox", "pytest>=4", "hypothesis"][..],
                &["test"][..],
            ),
            (
                "flit (PEP 621)",
                r#"[build-system]
requires = ["flit_core >=3.2,<4"]
build-backend = "flit_core.buildapi"
[project]
name = "demo"
dependencies = ["attrs"]
[project.optional-dependencies]
test = ["pytest"]
doc = ["sphinx"]
"#,
                "",
                &["attrs", "pytest"][..],
                &["test"][..],
            ),
            (
                "setuptools setup.cfg",
                "",
                "[options]\ninstall_requires =\n    attrs>=19\n    importlib-metadata; python_version < \"3.8\"\ntests_require = mock\n[options.extras_require]\ntest =\n    pytest\ndocs = sphinx\n",
                &[
                    "attrs>=19",
                    "importlib-metadata; python_version < \"3.8\"",
                    "mock",
                    "pytest",
                ][..],
                &["test"][..],
            ),
            (
                "poetry",
                r#"[tool.poetry.dependencies]
python = "^3.7"
attrs = "^19.3"
[tool.poetry.dev-dependencies]
pytest = "^5.2"
[tool.poetry.group.docs.dependencies]
sphinx = "*"
"#,
                "",
                &["attrs>=19.3,<20", "pytest>=5.2,<6"][..],
                &[][..],
            ),
            (
                "pdm",
                r#"[project]
name = "demo"
dependencies = ["attrs"]
[tool.pdm.dev-dependencies]
test = ["pytest>=7"]
lint = ["flake8"]
"#,
                "",
                &["attrs", "flake8", "pytest>=7"][..],
                &[][..],
            ),
            (
                "hatch",
                r#"[project]
name = "demo"
dependencies = ["attrs"]
[project.optional-dependencies]
all = ["numpy"]
doc = ["sphinx"]
[tool.hatch.envs.default]
dependencies = ["pytest"]
[tool.hatch.envs.test]
extra-dependencies = ["pytest-cov"]
features = ["all"]
[tool.hatch.envs.docs]
dependencies = ["mkdocs"]
"#,
                "",
                &["attrs", "pytest", "pytest-cov", "numpy"][..],
                &["all"][..],
            ),
        ] {
            let mut files = Vec::new();
            if !pyproject.is_empty() {
                files.push(("pyproject.toml", pyproject));
            }
            if !setup_cfg.is_empty() {
                files.push(("setup.cfg", setup_cfg));
            }
            let dir = tree(&files);
            let plan = read_plan(dir.path());
            assert_eq!(specs(&plan), want, "{family}: {plan:?}");
            assert_eq!(plan.extras, extras, "{family}");
            assert!(plan.project, "{family}: the project is a package");
        }
        // flit's own requires-python is the project's word on its Python.
        let dir = tree(&[(
            "pyproject.toml",
            "[tool.flit.metadata]\nmodule = \"demo\"\nrequires-python = \">=3.5\"\n",
        )]);
        assert_eq!(
            read_plan(dir.path()).python_requires,
            [(
                ">=3.5".to_string(),
                "pyproject.toml tool.flit.metadata".to_string()
            )]
        );
    }

    /// A tox environment named for a Python installs its deps on that Python only (scrapy
    /// of 2019 pins lxml 3.5 and cryptography 2.0 in `[testenv:py27-pinned]`, whose C
    /// builds fail on 3.8 and took the whole preparation's time at every run): each of its
    /// deps carries that Python's marker, and what a Python 2 environment includes is not
    /// read.
    #[test]
    fn a_tox_environment_named_for_a_python_installs_its_deps_there_only() {
        let dir = tree(&[
            ("ci/pinned.txt", "futures\n"),
            ("ci/py38.txt", "asyncmock\n"),
            (
                "tox.ini",
                "[tox]\nenvlist = py27,py38\n\n[testenv]\ndeps =\n    pytest\n\n[testenv:py27-pinned]\ndeps =\n    lxml==3.5.0\n    -rci/pinned.txt\n\n[testenv:py3]\ndeps =\n    mock ; sys_platform != \"win32\"\n\n[testenv:pypy3]\ndeps =\n    cffi\n\n[testenv:py38]\ndeps =\n    -rci/py38.txt\n",
            ),
        ]);
        let plan = read_plan(dir.path());
        let mut specs: Vec<&str> = plan.requirements.iter().map(|r| r.spec.as_str()).collect();
        specs.sort();
        assert_eq!(
            specs,
            [
                "asyncmock",
                "cffi ; platform_python_implementation == \"PyPy\" and python_version >= \"3\" and python_version < \"4\"",
                "lxml==3.5.0 ; python_version == \"2.7\"",
                "mock ; (sys_platform != \"win32\") and python_version >= \"3\"",
                "pytest",
            ],
            "{:?}",
            plan.requirements
        );
    }

    /// A project that keeps one requirement file per Python major (scrapy of 2017:
    /// `tests/requirements.txt` for Python 2, `tests/requirements-py3.txt` beside it): each
    /// file's requirements are for its major only, so a Python 3 environment never gets
    /// the Python 2 file's pins. A file with no such sibling is for every Python.
    #[test]
    fn requirement_files_kept_per_python_major_are_for_that_major() {
        let dir = tree(&[
            ("requirements.txt", "Twisted>=13.1.0\n"),
            ("requirements-py3.txt", "Twisted>=15.5.0\n"),
            (
                "tests/requirements.txt",
                "mitmproxy==0.10.1\nmock ; python_version < \"3.3\"\n",
            ),
            ("tests/requirements-py3.txt", "leveldb\n"),
            (
                "tox.ini",
                "[tox]\nenvlist = py27\n\n[testenv]\ndeps =\n    -rrequirements.txt\n    -rtests/requirements.txt\n\n[testenv:py33]\ndeps =\n    -rrequirements-py3.txt\n    -rtests/requirements-py3.txt\n",
            ),
            ("docs_requirements.txt", "sphinx\n"),
            ("dev_requirements_py2.txt", "futures\n"),
        ]);
        let plan = read_plan(dir.path());
        let mut specs: Vec<&str> = plan.requirements.iter().map(|r| r.spec.as_str()).collect();
        specs.sort();
        assert_eq!(
            specs,
            [
                "Twisted>=13.1.0 ; python_version < \"3\"",
                "Twisted>=15.5.0 ; python_version >= \"3\"",
                "futures ; python_version < \"3\"",
                "leveldb ; python_version >= \"3\"",
                "mitmproxy==0.10.1 ; python_version < \"3\"",
                "mock ; (python_version < \"3.3\") and python_version < \"3\"",
                "sphinx",
            ],
            "{:?}",
            plan.requirements
        );
    }

    /// A test requirement file kept deep in the project's test tooling (ansible's
    /// `test/lib/ansible_test/_data/requirements/units.txt`) is read; the folder's other
    /// files (an integration's cloud requirements) and a docs folder's are not.
    #[test]
    fn a_nested_test_requirements_folder_is_read() {
        let dir = tree(&[
            (
                "setup.py",
                "from setuptools import setup\nsetup(name='a')\n",
            ),
            (
                "test/lib/tool/_data/requirements/units.txt",
                "pytest-mock\n",
            ),
            (
                "test/lib/tool/_data/requirements/integration.cloud.aws.txt",
                "boto3\n",
            ),
            ("docs/requirements/test.txt", "sphinx-testing\n"),
        ]);
        let plan = read_plan(dir.path());
        let specs: Vec<&str> = plan.requirements.iter().map(|r| r.spec.as_str()).collect();
        assert_eq!(specs, ["pytest-mock"], "{:?}", plan.requirements);
        assert!(
            plan.inputs
                .iter()
                .any(|i| i == "test/lib/tool/_data/requirements/units.txt"),
            "{:?}",
            plan.inputs
        );
    }

    /// setuptools reads requirements from files its declarations name: setup.cfg's `file:`
    /// and pyproject's `[tool.setuptools.dynamic]`; those files are read wherever they are
    /// in the tree (not only the root's requirement files), and none outside it.
    #[test]
    fn requirement_files_setuptools_declarations_name_are_read() {
        let dir = tree(&[
            (
                "setup.cfg",
                "[options]\ninstall_requires = file: deps/base.in\n[options.extras_require]\ntest = file: deps/test.in, ../outside.txt\ndocs = file: deps/docs.in\n",
            ),
            ("deps/base.in", "attrs\n"),
            ("deps/test.in", "pytest\n"),
            ("deps/docs.in", "sphinx\n"),
        ]);
        let plan = read_plan(dir.path());
        assert_eq!(specs(&plan), ["attrs", "pytest"]);
        assert_eq!(plan.extras, ["test"]);
        assert_eq!(plan.refused.len(), 1, "{:?}", plan.refused);
        assert_eq!(plan.refused[0].what, "../outside.txt");
        let dir = tree(&[
            (
                "pyproject.toml",
                "[project]\nname = \"demo\"\ndynamic = [\"dependencies\", \"optional-dependencies\"]\n[tool.setuptools.dynamic]\ndependencies = {file = \"ci/runtime.txt\"}\noptional-dependencies.tests = {file = [\"ci/tests.txt\"]}\noptional-dependencies.doc = {file = [\"ci/doc.txt\"]}\n",
            ),
            ("ci/runtime.txt", "six\n"),
            ("ci/tests.txt", "hypothesis\n"),
            ("ci/doc.txt", "sphinx\n"),
        ]);
        let plan = read_plan(dir.path());
        assert_eq!(specs(&plan), ["six", "hypothesis"]);
        assert_eq!(plan.extras, ["tests"]);
        assert!(plan.inputs.contains(&"ci/tests.txt".to_string()));
    }

    #[test]
    fn setup_cfg_tox_nox_and_pipfile_are_read() {
        let dir = tree(&[
            (
                "setup.cfg",
                "[metadata]\nname = demo\n[options]\npython_requires = >=3.6\ninstall_requires =\n    psutil\n    six>=1.0\n[options.extras_require]\ntesting =\n    pytest\ndocs =\n    sphinx\n",
            ),
            (
                "setup.py",
                "from setuptools import setup\nsetup(python_requires='>=3.5', tests_require=['mock'])\n",
            ),
            (
                "tox.ini",
                "[tox]\nenvlist = py27, py37-django{22,30}\n[testenv]\ndeps =\n    -r{toxinidir}/dev.txt\n    py37: mock\n    tf: tensorflow\n    nose\ncommands = pytest {posargs}\n",
            ),
            ("dev.txt", "flake8\n"),
            (
                "noxfile.py",
                "import nox\n@nox.session\ndef tests(session):\n    session.install('-r', 'requirements-test.txt')\n    session.install(\"pytest-xdist\", '.')\n",
            ),
            ("requirements-test.txt", "pytest-timeout\n"),
            (
                "Pipfile",
                "[packages]\nrequests = \"*\"\n[dev-packages]\npytest = \">=6\"\nmine = {path = \".\"}\n[requires]\npython_version = \"3.9\"\n",
            ),
        ]);
        let plan = read_plan(dir.path());
        let s = specs(&plan);
        for want in [
            "psutil",
            "six>=1.0",
            "pytest",
            "flake8",
            // a Python factor's line holds for that Python only
            "mock ; python_version == \"3.7\"",
            "nose",
            "pytest-xdist",
            "pytest-timeout",
            "requests",
            "pytest>=6",
        ] {
            assert!(s.contains(&want), "{want}: {s:?}");
        }
        assert!(!s.contains(&"sphinx"));
        // another factor's line (`tf: tensorflow`) is not the default environment's
        assert!(!s.iter().any(|s| s.contains("tensorflow")), "{s:?}");
        assert!(plan.setup_py && plan.project);
        assert_eq!(plan.extras, ["testing"]);
        let sources: Vec<&str> = plan
            .python_requires
            .iter()
            .map(|(_, s)| s.as_str())
            .collect();
        assert_eq!(
            sources,
            [
                "setup.cfg",
                "setup.py",
                "tox.ini envlist",
                "tox.ini envlist",
                "Pipfile"
            ]
        );
        assert_eq!(plan.refused.len(), 1, "{:?}", plan.refused);
        assert_eq!(
            python_fits(&plan.python_requires, "3.9.18"),
            Some(Err("tox.ini envlist tests Python ==2.7.* | ==3.7.*".into()))
        );
    }

    #[test]
    fn tox_kept_in_pyproject_gives_its_test_deps_through_references() {
        // tqdm/tqdm: its tox.ini is pyproject's `legacy_tox_ini`; `[testenv] deps` holds
        // `{[core]deps}`, where pytest-asyncio (which its pytest addopts need) is named.
        let dir = tree(&[(
            "pyproject.toml",
            "[project]\nname = \"tqdm\"\n[tool.tox]\nlegacy_tox_ini = \"\"\"\n[tox]\nenvlist=3.{8,12}{,-tf}, perf\n[core]\ndeps=\n    pytest\n    pytest-asyncio\n    git+https://github.com/casperdcl/nbval\n[testenv]\ndeps=\n    {[core]deps}\n    numpy\n    tf: tensorflow!=2.5.0\n\"\"\"\n",
        )]);
        let plan = read_plan(dir.path());
        let s = specs(&plan);
        assert_eq!(s, ["pytest", "pytest-asyncio", "numpy"], "{plan:?}");
        assert_eq!(
            plan.refused[0].what,
            "git+https://github.com/casperdcl/nbval"
        );
        assert_eq!(
            plan.refused[0].source,
            "pyproject.toml [tool.tox] legacy_tox_ini [testenv] deps"
        );
        let pythons: Vec<&str> = plan
            .python_requires
            .iter()
            .map(|(v, _)| v.as_str())
            .collect();
        assert_eq!(pythons, ["==3.8.*", "==3.12.*"]);
    }

    #[test]
    fn tox_factor_groups_and_classifiers_name_the_pythons_a_project_runs_on() {
        // PySnooper 0.2 (BugsInPy PySnooper 1): no python_requires; its tox envlist names
        // its Pythons in a factor group, over several lines.
        let dir = tree(&[(
            "tox.ini",
            "[tox]\nenvlist =\n    flake8\n    py{27,34,35,36,37,38,py,py3}\n    readme\n[testenv]\ncommands = pytest\n",
        )]);
        let plan = read_plan(dir.path());
        let versions: Vec<&str> = plan
            .python_requires
            .iter()
            .map(|(v, _)| v.as_str())
            .collect();
        assert_eq!(
            versions,
            [
                "==2.7.*", "==3.4.*", "==3.5.*", "==3.6.*", "==3.7.*", "==3.8.*"
            ]
        );
        assert_eq!(python_fits(&plan.python_requires, "3.8.18"), Some(Ok(())));
        assert!(python_fits(&plan.python_requires, "3.11.7").is_some_and(|r| r.is_err()));
        assert_eq!(
            tox_envs("py{27,36}-django{22,30}, lint"),
            [
                "py27-django22",
                "py27-django30",
                "py36-django22",
                "py36-django30",
                "lint"
            ]
        );
        // Only classifiers: any of the versions they list.
        let dir = tree(&[(
            "setup.py",
            "setup(name='x', classifiers=[\n 'Programming Language :: Python :: 2.7',\n 'Programming Language :: Python :: 3',\n 'Programming Language :: Python :: 3.6',\n 'Programming Language :: Python :: 3.7',\n])\n",
        )]);
        let plan = read_plan(dir.path());
        assert_eq!(
            plan.python_requires,
            [
                ("==2.7.*".to_string(), "setup.py classifiers".to_string()),
                ("==3.6.*".to_string(), "setup.py classifiers".to_string()),
                ("==3.7.*".to_string(), "setup.py classifiers".to_string())
            ]
        );
        assert_eq!(python_fits(&plan.python_requires, "3.7.16"), Some(Ok(())));
        assert_eq!(
            python_fits(&plan.python_requires, "3.11.7"),
            Some(Err(
                "the classifiers name Python ==2.7.* | ==3.6.* | ==3.7.*".into()
            ))
        );
        // Classifiers are read beside python_requires: the versions a project names say
        // more than an open lower bound (crate::interpreter chooses among them).
        let dir = tree(&[(
            "setup.py",
            "setup(python_requires='>=3.6', classifiers=['Programming Language :: Python :: 3.6'])\n",
        )]);
        assert_eq!(
            read_plan(dir.path()).python_requires,
            [
                (">=3.6".to_string(), "setup.py".to_string()),
                ("==3.6.*".to_string(), "setup.py classifiers".to_string())
            ]
        );
    }

    #[test]
    fn ci_matrices_name_the_pythons_a_project_runs_on() {
        let dir = tree(&[
            (
                ".travis.yml",
                "language: python\npython:\n  - \"2.7\"\n  - 3.6\n  - \"3.9-dev\"\n  - pypy3\nmatrix:\n  include:\n    - python: 3.8\n      dist: xenial\n    - python: 3.7\n    - python: \"nightly\"\n  allow_failures:\n    - python: 3.7\n\ninstall: pip install .\n",
            ),
            (
                ".github/workflows/tests.yml",
                "jobs:\n  test:\n    strategy:\n      matrix:\n        python-version: [3.9, \"3.10\", 'pypy-3.9', 3.x]\n        os: [ubuntu-latest]\n    steps:\n      - uses: actions/setup-python@v4\n        with:\n          python-version: ${{ matrix.python-version }}\n",
            ),
            (
                ".github/workflows/lint.yaml",
                "jobs:\n  lint:\n    strategy:\n      matrix:\n        python:\n          - '3.11'  # the newest\n        include:\n          - python: \"3.12\"\n    steps:\n      - run: python -m flake8\n",
            ),
        ]);
        let plan = read_plan(dir.path());
        let named: Vec<(&str, &str)> = plan
            .python_requires
            .iter()
            .map(|(v, s)| (v.as_str(), s.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                ("==2.7.*", ".travis.yml python"),
                ("==3.6.*", ".travis.yml python"),
                ("==3.8.*", ".travis.yml python"),
                ("==3.11.*", ".github/workflows/lint.yaml python-version"),
                ("==3.12.*", ".github/workflows/lint.yaml python-version"),
                ("==3.9.*", ".github/workflows/tests.yml python-version"),
                ("==3.10.*", ".github/workflows/tests.yml python-version"),
            ]
        );
        assert!(named.iter().all(|(_, s)| names_pythons(s)));
    }

    /// Azure Pipelines' matrix variable and AppVeyor's environment matrix (a version with a
    /// patch wildcard, or the Windows runner's Python folder) name the Pythons a CI ran;
    /// expressions and Miniconda folders name none.
    #[test]
    fn azure_and_appveyor_matrices_name_the_pythons_their_ci_ran() {
        let dir = tree(&[
            (
                "azure-pipelines.yml",
                "jobs:\n- job: 'Test'\n  strategy:\n    matrix:\n      # Python27Linux:\n      #   python.version: '2.7'\n      Python35Linux:\n        imageName: 'ubuntu-16.04'\n        python.version: '3.5'\n      Python37Mac:\n        python.version: '3.7'\n  steps:\n  - task: UsePythonVersion@0\n    inputs:\n      versionSpec: '$(python.version)'\n",
            ),
            (
                "appveyor.yml",
                "environment:\n  matrix:\n    - PYTHON: \"C:\\\\Python36-x64\"\n      PYTHON_VERSION: \"3.6.x\"\n    - PYTHON: \"C:/Python27\"\n    - PYTHON: \"C:\\\\Python310\"\n    - PYTHON: \"C:\\\\Miniconda36-x64\"\n",
            ),
        ]);
        let plan = read_plan(dir.path());
        let named: Vec<(&str, &str)> = plan
            .python_requires
            .iter()
            .map(|(v, s)| (v.as_str(), s.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                ("==3.5.*", "azure-pipelines.yml python.version"),
                ("==3.7.*", "azure-pipelines.yml python.version"),
                ("==3.6.*", "appveyor.yml PYTHON_VERSION"),
                ("==2.7.*", "appveyor.yml PYTHON_VERSION"),
                ("==3.10.*", "appveyor.yml PYTHON_VERSION"),
            ]
        );
        assert!(named.iter().all(|(_, s)| names_pythons(s) && is_ci(s)));
        assert!(!is_ci("setup.py classifiers") && !is_ci("tox.ini envlist"));
    }

    #[test]
    fn a_lock_file_pins_the_versions() {
        let dir = tree(&[
            (
                "poetry.lock",
                "[[package]]\nname = \"six\"\nversion = \"1.16.0\"\n\n[[package]]\nname = \"mine\"\nversion = \"0.1\"\n[package.source]\ntype = \"git\"\nurl = \"https://x\"\n",
            ),
            (
                "pyproject.toml",
                "[tool.poetry.dependencies]\npython = \">=3.7\"\nsix = \"*\"\n",
            ),
        ]);
        let plan = read_plan(dir.path());
        assert_eq!(plan.pinned_by.as_deref(), Some("poetry.lock"));
        assert_eq!(specs(&plan)[0], "six==1.16.0");
        assert_eq!(plan.refused[0].what, "mine");
    }

    /// An extra named for no test (`all`, `d`) is prepared when something installs it: a
    /// CI's `flit install` (every extra), its `pip install -e .[d]`, tox's `extras =`; an
    /// extra nothing installs (docs) is not.
    #[test]
    fn the_extras_a_projects_ci_or_tox_installs_are_prepared_whatever_their_names() {
        let flit = "[tool.flit.metadata]\nmodule = \"demo\"\nrequires = [\"starlette\"]\n[tool.flit.metadata.requires-extra]\ntest = [\"pytest\"]\nall = [\"python-multipart\"]\ndoc = [\"mkdocs\"]\n";
        let dir = tree(&[
            ("pyproject.toml", flit),
            (".travis.yml", "install:\n  - flit install --symlink\n"),
        ]);
        let plan = read_plan(dir.path());
        assert_eq!(
            specs(&plan),
            ["starlette", "pytest", "python-multipart", "mkdocs"],
            "flit install: every extra"
        );
        let dir = tree(&[("pyproject.toml", flit)]);
        assert_eq!(specs(&read_plan(dir.path())), ["starlette", "pytest"]);
        let pep621 = "[project]\nname = \"demo\"\ndependencies = []\n[project.optional-dependencies]\nd = [\"aiohttp\"]\ndocs = [\"sphinx\"]\n";
        let dir = tree(&[
            ("pyproject.toml", pep621),
            (".travis.yml", "install:\n  - pip install -e '.[d]'\n"),
        ]);
        assert_eq!(specs(&read_plan(dir.path())), ["aiohttp"]);
        let dir = tree(&[
            (
                "setup.cfg",
                "[metadata]\nname = demo\n[options.extras_require]\nyaml =\n    pyyaml\ndocs = sphinx\n",
            ),
            (
                "tox.ini",
                "[tox]\nenvlist = py38\n[testenv]\nextras = yaml\ncommands = pytest\n",
            ),
        ]);
        assert_eq!(specs(&read_plan(dir.path())), ["pyyaml"]);
    }

    /// black's tox: its commands install the project with an extra before its first
    /// pytest (`pip install -e .[d]`, whose aiohttp `tests/test_blackd.py` imports) and
    /// another before a second run (`.[jupyter]`, whose absence the first run's tests
    /// check): the first is prepared, the second is not.
    #[test]
    fn what_a_tox_command_installs_before_the_tests_is_prepared() {
        let pep621 = "[project]\nname = \"demo\"\ndependencies = [\"click\"]\n[project.optional-dependencies]\nd = [\"aiohttp\"]\njupyter = [\"ipython\"]\n";
        let tox = "[tox]\nenvlist = py313\n[testenv]\nskip_install = True\ncommands_pre = {envpython} -m pip install 'attrs==23.1.0'\ncommands =\n    pip install -e .[d]\n    coverage erase\n    pytest tests --run-optional no_jupyter \\\n        --numprocesses auto\n    pip install -e .[jupyter]\n    pytest tests -m jupyter\n";
        let dir = tree(&[("pyproject.toml", pep621), ("tox.ini", tox)]);
        let plan = read_plan(dir.path());
        assert_eq!(specs(&plan), ["click", "attrs==23.1.0", "aiohttp"]);
        let dir = tree(&[
            ("pyproject.toml", pep621),
            ("tox.ini", "[testenv]\ncommands = pytest tests\n"),
        ]);
        assert_eq!(specs(&read_plan(dir.path())), ["click"]);
    }

    #[test]
    fn poetry_constraints_become_pep_440() {
        assert_eq!(poetry_spec("^1.2.3").as_deref(), Some(">=1.2.3,<2"));
        assert_eq!(poetry_spec("^0.2.3").as_deref(), Some(">=0.2.3,<0.3"));
        assert_eq!(poetry_spec("^0.0.3").as_deref(), Some(">=0.0.3,<0.0.4"));
        assert_eq!(poetry_spec("~1.2").as_deref(), Some(">=1.2,<1.3"));
        assert_eq!(poetry_spec("1.4").as_deref(), Some("==1.4"));
        assert_eq!(poetry_spec(">=1,<3").as_deref(), Some(">=1,<3"));
        assert_eq!(poetry_spec("*").as_deref(), Some(""));
    }

    #[test]
    fn the_python_a_project_needs_is_checked() {
        let plan = PythonPlan {
            python_requires: vec![(">=3.8".into(), "pyproject.toml".into())],
            ..PythonPlan::default()
        };
        assert_eq!(python_fits(&plan.python_requires, "3.11.7"), Some(Ok(())));
        assert_eq!(
            python_fits(&plan.python_requires, "3.7.16"),
            Some(Err("pyproject.toml asks for Python >=3.8".into()))
        );
        assert_eq!(python_fits(&[], "3.11.7"), None);
    }
}
