//! The sandbox's settings: where Docker is, which image runs each language, the limits of
//! every run, and where trees and prepared dependencies live on the runner's disk.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{Language, SandboxError};

/// Settings of one [`crate::Sandbox`]. `Default` gives the values documented on each field.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The Docker endpoint: a Unix socket path (`/var/run/docker.sock`, the default, or
    /// `unix:///…`) or `tcp://host:port` / `http://host:port`. Trees are bind-mounted, so
    /// the daemon must see `work_dir` and `cache_dir` at the same paths: run the runner on
    /// the Docker host (or share those directories with it).
    pub docker_host: String,
    /// The image of each language (default: the local images, `proven-sandbox-LANG:local`).
    pub images: BTreeMap<Language, String>,
    /// Images of other Python versions, `(X.Y, image)`: a tree whose declared Python the
    /// default image does not satisfy runs on the newest of these that does.
    pub python_images: Vec<(String, String)>,
    /// Images of Node majors, `(NN, image)` (`node22=...` in the images setting): a tree
    /// whose package.json `engines.node` the default image does not satisfy runs on the
    /// newest of these whose major it allows.
    pub node_images: Vec<(String, String)>,
    /// Images of other Rust and Go toolchains, `(X.Y, image)` (`rust1.96=...`, `go1.27=...`):
    /// a tree pinning one, or needing a newer one than the default image has, runs on the one
    /// [`proven_sandbox_plan::toolchain::choose`] picks.
    pub toolchain_images: BTreeMap<Language, Vec<(String, String)>>,
    pub limits: Limits,
    /// Memory of a run of a package's whole suite ([`crate::RunRequest::whole_suite`]), in
    /// place of `limits.memory_bytes` when larger (default 4 GiB: a popular project's suite
    /// outgrows what one test needs, as its CI's runner gives it several GiB).
    pub suite_memory_bytes: i64,
    /// CPUs of a run of a package's whole suite, in place of `limits.cpus` when more, and
    /// at most the host's (default 2: a CI runner has several, and a project's suite is
    /// sized for them, pytest-xdist's `-n 2` or a runner's workers).
    pub suite_cpus: f64,
    /// Within a whole Python suite, the time one test may take before it is stopped as an
    /// error of that test and the suite goes on (default 120 s; prepare.py's hook).
    pub suite_test_timeout: Duration,
    /// Timeout of a run whose request names none (default 120 s).
    pub default_timeout: Duration,
    pub output: OutputLimits,
    /// Where trees are materialised, one fresh directory per run (default
    /// `$TMPDIR/proven-sandbox/work`).
    pub work_dir: PathBuf,
    /// Where prepared layers are cached, per tenant and repository (default
    /// `$TMPDIR/proven-sandbox/cache`; the settings put it under the data directory).
    pub cache_dir: PathBuf,
    /// Size cap of the cache: past it, the least recently used layers no run holds go
    /// (default 20 GiB).
    pub cache_max_bytes: u64,
    /// How long one dependency preparation may take (default 15 minutes).
    pub prepare_timeout: Duration,
    /// The limits of a preparation container (default 2 GiB memory, 1024 pids, 2 GiB of
    /// scratch and of /tmp, the runs' CPUs).
    pub prepare_limits: Limits,
    /// A preparation that writes more than this is killed (default 8 GiB).
    pub prepare_max_bytes: u64,
    /// Bytes a preparation may move through the egress proxy (default 4 GiB).
    pub prepare_max_egress_bytes: u64,
    /// The registries a preparation may reach through the egress proxy (default: PyPI,
    /// npm, crates.io, the Go module proxy and checksum database).
    pub registries: crate::deps::proxy::AllowList,
    /// The operator's Python package index (default: pip's own, PyPI).
    pub pip_index_url: Option<String>,
    /// The operator's npm registry (default: npm's own).
    pub npm_registry: Option<String>,
    /// GOPROXY of a preparation (default https://proxy.golang.org).
    pub goproxy: String,
    /// GOSUMDB of a preparation (default sum.golang.org).
    pub gosumdb: String,
    /// The program run inside a preparation container to reach the egress proxy: this
    /// crate's forwarder (`proven sandbox forward` / `proven-sandbox forward`). Without
    /// one, a preparation fails by name.
    pub forwarder: Option<Forwarder>,
    /// Runs at once in this process; the rest wait for a slot (default 4).
    pub max_concurrent_runs: usize,
    /// Warm containers kept ready per key (image and prepared dependencies); 0: no pool,
    /// every run starts its container cold (default 1).
    pub pool_size: usize,
    /// Keys the pool keeps containers for (the least recently used go first; default 8).
    pub pool_keys: usize,
    /// The languages whose images a long-running runner warms when it starts (default all).
    pub pool_languages: Vec<Language>,
    /// A materialised tree larger than this is refused (default 1 GiB).
    pub max_tree_bytes: u64,
    /// Scratch space by language, in place of `limits.scratch_bytes` (default: Rust 4 GiB,
    /// since its tests compile into `/work/target` and a suite that compiles other crates
    /// outgrows 512 MiB; see [`SandboxConfig::limits_for`]).
    pub scratch_by_language: Vec<(Language, i64)>,
    /// The uid and gid the code under test runs as (default 10001, the images' `sandbox`).
    pub user: (u32, u32),
}

/// Resource limits of every run's container.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Memory, including the tmpfs scratch the run writes (default 1 GiB; no swap).
    pub memory_bytes: i64,
    /// Processes and threads (default 4096).
    pub pids: i64,
    /// CPUs (default 1.0).
    pub cpus: f64,
    /// Size of `/work`, the writable copy of the tree (default 512 MiB).
    pub scratch_bytes: i64,
    /// Size of `/tmp` (default 512 MiB: a Go run copies its compiled standard library there).
    pub tmp_bytes: i64,
}

/// How much output a run keeps and how much it may produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputLimits {
    /// Bytes kept from the start of the output (default 64 KiB).
    pub head_bytes: usize,
    /// Bytes kept from the end of the output (default 64 KiB).
    pub tail_bytes: usize,
    /// A run that prints more than this is killed (default 64 MiB); every byte read is
    /// still in the digest.
    pub kill_after_bytes: u64,
    /// A run whose output has ended with its test runner's summary (Python's runners',
    /// mocha's epilogue), and whose process has not ended this long after (a thread, a
    /// child or a server its tests left running), is stopped, and the summary is its
    /// outcome (default 60 s): luigi's suite ran 1,313 tests in 181 s and then waited on
    /// its children until the timeout killed it; ws' mocha waited on a failed test's server.
    #[serde(default = "quiet_after_summary_default")]
    pub quiet_after_summary_ms: u64,
}

fn quiet_after_summary_default() -> u64 {
    60_000
}

/// A binary that runs the forwarder: its path on the runner (bound read-only into the
/// preparation container) and the arguments that select the forwarder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarder {
    pub path: PathBuf,
    pub args: Vec<String>,
}

/// The arguments that select the forwarder in this process's own executable, as its
/// `main` registered them ([`Forwarder::register`]).
static OWN_FORWARDER_ARGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

impl Forwarder {
    /// Says that this process's executable carries the forwarder, selected by `args`
    /// (`proven`: `sandbox forward`; `proven-sandbox`: `forward`): whatever the file is
    /// named (a release asset `proven-x86_64-linux`, a copy beside a benchmark), its
    /// preparations reach the registries through it. The first call counts.
    pub fn register(args: &[&str]) {
        let _ = OWN_FORWARDER_ARGS.set(args.iter().map(|a| a.to_string()).collect());
    }

    /// This process's own executable when it carries the forwarder: registered by its
    /// `main`, else known by its name (`proven`, `proven-sandbox`).
    pub fn current() -> Option<Forwarder> {
        let path = std::env::current_exe().ok()?;
        if let Some(args) = OWN_FORWARDER_ARGS.get() {
            return Some(Forwarder {
                path,
                args: args.clone(),
            });
        }
        let args = match path.file_name()?.to_str()? {
            "proven" => vec!["sandbox".to_string(), "forward".to_string()],
            "proven-sandbox" => vec!["forward".to_string()],
            _ => return None,
        };
        Some(Forwarder { path, args })
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 1 << 30,
            // A suite that drives a browser (Chromium's processes and their threads, beside
            // vitest's workers) takes several hundred, and a concurrency test starts a
            // thousand threads at once beside the others (once_cell's `get_or_init_stress`);
            // a CI runner's bound is tens of thousands. 4096 still ends a fork bomb.
            pids: 4096,
            cpus: 1.0,
            scratch_bytes: 512 << 20,
            tmp_bytes: 512 << 20,
        }
    }
}

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits {
            head_bytes: 64 << 10,
            tail_bytes: 64 << 10,
            kill_after_bytes: 64 << 20,
            quiet_after_summary_ms: quiet_after_summary_default(),
        }
    }
}

impl Default for SandboxConfig {
    fn default() -> Self {
        let root = std::env::temp_dir().join("proven-sandbox");
        SandboxConfig {
            docker_host: "/var/run/docker.sock".into(),
            images: Language::ALL
                .iter()
                .map(|l| (*l, l.local_image()))
                .collect(),
            python_images: Vec::new(),
            node_images: Vec::new(),
            toolchain_images: BTreeMap::new(),
            limits: Limits::default(),
            suite_memory_bytes: 4 << 30,
            suite_cpus: 2.0,
            suite_test_timeout: Duration::from_secs(120),
            default_timeout: Duration::from_secs(120),
            output: OutputLimits::default(),
            work_dir: root.join("work"),
            cache_dir: root.join("cache"),
            cache_max_bytes: 20 << 30,
            prepare_timeout: Duration::from_secs(900),
            prepare_limits: Limits {
                memory_bytes: 2 << 30,
                pids: 1024,
                cpus: 2.0,
                scratch_bytes: 2 << 30,
                tmp_bytes: 2 << 30,
            },
            prepare_max_bytes: 8 << 30,
            prepare_max_egress_bytes: 4 << 30,
            registries: crate::deps::proxy::AllowList::defaults(),
            pip_index_url: None,
            npm_registry: None,
            goproxy: "https://proxy.golang.org".into(),
            gosumdb: "sum.golang.org".into(),
            forwarder: Forwarder::current(),
            max_concurrent_runs: 4,
            pool_size: 1,
            pool_keys: 8,
            pool_languages: Language::ALL.to_vec(),
            max_tree_bytes: 1 << 30,
            scratch_by_language: vec![(Language::Rust, 4 << 30)],
            user: (10001, 10001),
        }
    }
}

impl SandboxConfig {
    /// The limits of a run of `language`: its own scratch space where one is set, bounded
    /// like any other, with the memory limit grown by what it adds over the default scratch
    /// (a tmpfs's pages are the container's memory: a full scratch space must end in ENOSPC,
    /// an environment failure that names itself, not in an out-of-memory kill).
    pub fn limits_for(&self, language: Language) -> Limits {
        let mut limits = self.limits;
        if let Some((_, scratch)) = self
            .scratch_by_language
            .iter()
            .find(|(l, _)| *l == language)
        {
            let grown = scratch.saturating_sub(limits.scratch_bytes).max(0);
            limits.memory_bytes = limits.memory_bytes.saturating_add(grown);
            limits.scratch_bytes = *scratch;
        }
        limits
    }

    /// The limits of a run of `language` ([`SandboxConfig::limits_for`]); a run of a
    /// package's whole suite gets `suite_memory_bytes` of memory where that is more, on top
    /// of what the language's scratch space adds.
    pub fn limits_of_run(&self, language: Language, whole_suite: bool) -> Limits {
        let mut limits = self.limits_for(language);
        if whole_suite {
            let grown = limits.memory_bytes.saturating_sub(self.limits.memory_bytes);
            limits.memory_bytes = limits
                .memory_bytes
                .max(self.suite_memory_bytes.saturating_add(grown));
            // Docker refuses more CPUs than the host has.
            let host = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
            limits.cpus = limits.cpus.max(self.suite_cpus.min(host));
        }
        limits
    }

    /// Refuses settings Docker would refuse mid-run, or that would make every run fail.
    pub fn validate(&self) -> Result<(), SandboxError> {
        let invalid = |setting, message: &str| {
            Err(SandboxError::InvalidConfig {
                setting,
                message: message.to_string(),
            })
        };
        let limits = &self.limits;
        // Docker refuses a memory limit under 6 MiB.
        if limits.memory_bytes < 6 << 20 {
            return invalid("limits.memory_bytes", "at least 6 MiB");
        }
        if self.suite_memory_bytes < 6 << 20 {
            return invalid("suite_memory_bytes", "at least 6 MiB");
        }
        if !(self.suite_cpus > 0.0 && self.suite_cpus.is_finite()) {
            return invalid("suite_cpus", "a positive number");
        }
        if limits.pids < 8 {
            return invalid(
                "limits.pids",
                "at least 8 (the entry script and init need some)",
            );
        }
        if !(limits.cpus > 0.0 && limits.cpus.is_finite()) {
            return invalid("limits.cpus", "a positive number");
        }
        if limits.scratch_bytes < 1 << 20 || limits.tmp_bytes < 1 << 20 {
            return invalid("limits.scratch_bytes/tmp_bytes", "at least 1 MiB each");
        }
        if self.scratch_by_language.iter().any(|(_, s)| *s < 1 << 20) {
            return invalid("scratch_by_language", "at least 1 MiB each");
        }
        if self.default_timeout.is_zero() {
            return invalid("default_timeout", "more than zero");
        }
        if self.output.kill_after_bytes == 0 {
            return invalid("output.kill_after_bytes", "more than zero");
        }
        if self.max_concurrent_runs == 0 {
            return invalid("max_concurrent_runs", "at least 1");
        }
        Ok(())
    }

    /// The sandbox's configuration from the process's settings (`PROVEN_SANDBOX_*`).
    pub fn from_settings(
        s: &proven_config::SandboxSettings,
    ) -> Result<SandboxConfig, SandboxError> {
        let mut config = SandboxConfig {
            docker_host: s.docker_host.clone(),
            pip_index_url: s.pip_index_url.clone(),
            npm_registry: s.npm_registry.clone(),
            goproxy: s.goproxy.clone(),
            gosumdb: s.gosumdb.clone(),
            max_concurrent_runs: s.concurrency,
            pool_size: s.pool_size,
            pool_languages: s
                .pool_languages
                .iter()
                .map(|l| {
                    l.parse::<Language>()
                        .map_err(|e| SandboxError::InvalidConfig {
                            setting: "pool_languages (PROVEN_SANDBOX_POOL_LANGUAGES)",
                            message: e.to_string(),
                        })
                })
                .collect::<Result<_, _>>()?,
            prepare_timeout: s.prepare_timeout,
            prepare_max_bytes: s.prepare_max_bytes,
            cache_dir: s.cache_dir.clone(),
            cache_max_bytes: s.cache_max_bytes,
            ..SandboxConfig::default()
        };
        config.limits.scratch_bytes = i64::try_from(s.scratch_bytes).unwrap_or(i64::MAX);
        config.scratch_by_language = vec![(
            Language::Rust,
            i64::try_from(s.rust_scratch_bytes).unwrap_or(i64::MAX),
        )];
        config.limits.memory_bytes = i64::try_from(s.memory_bytes).unwrap_or(i64::MAX);
        config.suite_memory_bytes = i64::try_from(s.suite_memory_bytes).unwrap_or(i64::MAX);
        config.suite_cpus = s.suite_cpus as f64;
        config.suite_test_timeout = Duration::from_secs(s.suite_test_timeout_seconds);
        config.registries =
            crate::deps::proxy::AllowList::parse(&s.registries).map_err(|message| {
                SandboxError::InvalidConfig {
                    setting: "registries (PROVEN_SANDBOX_REGISTRIES)",
                    message,
                }
            })?;
        for (key, image) in &s.images {
            let node_major = key
                .strip_prefix("node")
                .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()));
            if let Some(major) = node_major {
                config.node_images.push((major.to_string(), image.clone()));
                continue;
            }
            let toolchain = [("rust", Language::Rust), ("go", Language::Go)]
                .into_iter()
                .find_map(|(prefix, language)| {
                    let v = key.strip_prefix(prefix)?;
                    proven_sandbox_plan::toolchain::version(v).map(|_| (language, v))
                });
            if let Some((language, version)) = toolchain {
                config
                    .toolchain_images
                    .entry(language)
                    .or_default()
                    .push((version.to_string(), image.clone()));
                continue;
            }
            match key.strip_prefix("python").filter(|v| !v.is_empty()) {
                Some(version) => config
                    .python_images
                    .push((version.to_string(), image.clone())),
                None => {
                    let language: Language =
                        key.parse().map_err(|_| SandboxError::InvalidConfig {
                            setting: "images (PROVEN_SANDBOX_IMAGES)",
                            message: format!("{key:?} is not a language"),
                        })?;
                    config.images.insert(language, image.clone());
                }
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// The image a tree runs on, and for Python why: when images of several Python versions
    /// are configured, the one [`proven_sandbox_plan::interpreter::choose_python`] picks from the tree's
    /// declarations (the newest Python the project names or allows that an image has);
    /// otherwise, or when it picks none, the language's image; never a Python released on
    /// or after the base's day (`before`). Node: its version files, CI matrix and engines,
    /// and the base's date.
    pub(crate) fn image_for(
        &self,
        language: Language,
        src: &std::path::Path,
        before: Option<&str>,
    ) -> (String, Option<crate::record::InterpreterChoice>) {
        if language == Language::Node {
            return self.node_image_for(src, before);
        }
        if let Some(images) = self.toolchain_images.get(&language) {
            use proven_sandbox_plan::toolchain::{choose, go_wants, rust_wants};
            let (name, wants) = match language {
                Language::Rust => ("Rust", rust_wants(src)),
                _ => ("Go", go_wants(src)),
            };
            return match choose(name, &wants, images) {
                Some(choice) => (choice.image.clone(), Some(choice)),
                None => (self.image(language), None),
            };
        }
        if language != Language::Python || self.python_images.is_empty() {
            return (self.image(language), None);
        }
        let declared = proven_sandbox_plan::python::read_plan(src).python_requires;
        match proven_sandbox_plan::interpreter::choose_python_as_of(
            &declared,
            &self.python_images,
            before,
        ) {
            Some(choice) => (choice.image.clone(), Some(choice)),
            None => (self.image(language), None),
        }
    }

    /// The image a Node tree runs on and why: among the configured Node images, the one
    /// [`proven_sandbox_plan::node_version::choose_node`] picks from the tree's version
    /// files, CI matrix and engines and the base's date; else the default.
    fn node_image_for(
        &self,
        src: &std::path::Path,
        before: Option<&str>,
    ) -> (String, Option<crate::record::InterpreterChoice>) {
        use proven_sandbox_plan::node_version::{choose_node, node_wants};
        if self.node_images.is_empty() {
            return (self.image(Language::Node), None);
        }
        match choose_node(&node_wants(src), &self.node_images, before) {
            Some(choice) => (choice.image.clone(), Some(choice)),
            None => (self.image(Language::Node), None),
        }
    }

    /// What a dependency plan needs of this configuration: where a preparation may fetch
    /// from, and how long a call may take.
    pub fn plan_settings(&self) -> proven_sandbox_plan::deps::PlanSettings<'_> {
        proven_sandbox_plan::deps::PlanSettings {
            registries: &self.registries,
            pip_index_url: self.pip_index_url.as_deref(),
            npm_registry: self.npm_registry.as_deref(),
            goproxy: &self.goproxy,
            gosumdb: &self.gosumdb,
            prepare_timeout: self.prepare_timeout,
        }
    }

    /// The longest run a warm container waits for: a run asking for more starts cold.
    pub fn max_run_timeout(&self) -> Duration {
        self.default_timeout.max(Duration::from_secs(600))
    }

    /// The image that runs `language`.
    pub fn image(&self, language: Language) -> String {
        self.images
            .get(&language)
            .cloned()
            .unwrap_or_else(|| language.local_image())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rust_or_go_tree_runs_on_the_toolchain_image_its_declarations_choose() {
        let config = SandboxConfig {
            toolchain_images: BTreeMap::from([
                (Language::Rust, vec![("1.96".into(), "rust196".into())]),
                (Language::Go, vec![("1.27".into(), "go127".into())]),
            ]),
            ..SandboxConfig::default()
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let pick = |language| config.image_for(language, dir.path(), None);
        assert_eq!(pick(Language::Rust), (Language::Rust.local_image(), None));
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\nrust-version = \"1.96\"\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("go.mod"), "module m\n\ngo 1.27.0\n").expect("write");
        let (image, choice) = pick(Language::Rust);
        assert_eq!(image, "rust196");
        assert!(
            choice
                .expect("named")
                .because
                .contains("rust-version 1.96 (Cargo.toml)"),
            "the record names the declaration"
        );
        assert_eq!(pick(Language::Go).0, "go127");
        // Python trees never take a toolchain image.
        assert_eq!(pick(Language::Python).0, Language::Python.local_image());
    }

    #[test]
    fn a_python_tree_runs_on_the_newest_image_its_declared_python_allows() {
        let config = SandboxConfig {
            python_images: vec![
                ("3.11".into(), "py311".into()),
                ("3.7".into(), "py37".into()),
                ("3.8".into(), "py38".into()),
            ],
            ..SandboxConfig::default()
        };
        let tree = |files: &[(&str, &str)]| {
            let dir = tempfile::tempdir().expect("tempdir");
            for (p, t) in files {
                std::fs::write(dir.path().join(p), t).expect("write");
            }
            dir
        };
        let pick = |files: &[(&str, &str)]| {
            config
                .image_for(Language::Python, tree(files).path(), None)
                .0
        };
        assert_eq!(
            pick(&[]),
            Language::Python.local_image(),
            "nothing declared: the default"
        );
        assert_eq!(
            pick(&[("setup.cfg", "[options]\npython_requires = >=3.6, <3.8\n")]),
            "py37"
        );
        assert_eq!(
            pick(&[("setup.py", "setup(python_requires='>=3.5')\n")]),
            "py311",
            "the newest that fits"
        );
        // A 2019 project: an open python_requires, classifiers that stop at 3.8. The
        // versions it names win: 3.8, not the newest image its `>=3.5` allows.
        assert_eq!(
            pick(&[(
                "setup.py",
                "setup(python_requires='>=3.5', classifiers=[\n 'Programming Language :: Python :: 3.5',\n 'Programming Language :: Python :: 3.8',\n])\n"
            )]),
            "py38"
        );
        let dir = tree(&[(
            "setup.py",
            "setup(python_requires='>=3.5', classifiers=['Programming Language :: Python :: 3.8'])\n",
        )]);
        let (image, choice) = config.image_for(Language::Python, dir.path(), None);
        let choice = choice.expect("the record names the choice");
        assert_eq!((image.as_str(), choice.version.as_str()), ("py38", "3.8"));
        assert!(
            choice.because.contains("setup.py classifiers"),
            "{}",
            choice.because
        );
        assert_eq!(
            pick(&[("tox.ini", "[tox]\nenvlist = py36, py38\n")]),
            "py38",
            "a tox envlist: any of its Pythons"
        );
        assert_eq!(
            pick(&[("tox.ini", "[tox]\nenvlist = py26, py27, py33, py34\n")]),
            "py37",
            "only Pythons older than every image: the oldest image, the nearest to them"
        );
        assert_eq!(
            pick(&[("tox.ini", "[tox]\nenvlist = py27\n")]),
            Language::Python.local_image(),
            "Python 2 only: no image is near it"
        );
        assert_eq!(
            pick(&[(
                "pyproject.toml",
                "[project]\nrequires-python = \">=3.12\"\n"
            )]),
            Language::Python.local_image(),
            "none fits: the default (the record names the mismatch)"
        );
        assert_eq!(
            config.image_for(Language::Rust, tree(&[]).path(), None).0,
            Language::Rust.local_image()
        );
        // Node: engines.node picks the newest configured major it allows.
        let node = SandboxConfig {
            node_images: vec![
                ("22".into(), "node22".into()),
                ("24".into(), "node24".into()),
            ],
            ..SandboxConfig::default()
        };
        let pick = |package: &str| {
            node.image_for(
                Language::Node,
                tree(&[("package.json", package)]).path(),
                None,
            )
            .0
        };
        assert_eq!(
            pick(r#"{"engines": {"node": ">=22.12.0"}}"#),
            "node24",
            "tj/commander.js asks for Node >= 22.12"
        );
        assert_eq!(pick(r#"{"engines": {"node": "^22.12.0"}}"#), "node22");
        assert_eq!(
            pick(r#"{"engines": {"node": "^18"}}"#),
            Language::Node.local_image(),
            "none fits: the default"
        );
        assert_eq!(
            pick(r#"{"name": "x"}"#),
            Language::Node.local_image(),
            "no engines: the default"
        );
        let settings = proven_config::SandboxSettings {
            docker_host: "/var/run/docker.sock".into(),
            images: vec![
                ("python3.7".into(), "py37".into()),
                ("node".into(), "my-node".into()),
                ("node22".into(), "my-node22".into()),
                ("rust1.96".into(), "my-rust196".into()),
                ("go1.27.1".into(), "my-go127".into()),
            ],
            registries: vec!["pypi.org".into()],
            pip_index_url: None,
            npm_registry: None,
            goproxy: "https://proxy.golang.org".into(),
            gosumdb: "off".into(),
            scratch_bytes: 1 << 28,
            rust_scratch_bytes: 3 << 30,
            memory_bytes: 1 << 30,
            suite_memory_bytes: 3 << 30,
            suite_cpus: 3,
            suite_test_timeout_seconds: 45,
            concurrency: 2,
            prepare_timeout: Duration::from_secs(60),
            prepare_max_bytes: 1 << 30,
            pool_size: 3,
            pool_languages: vec!["go".into()],
            cache_dir: "/data/proven/sandbox-cache".into(),
            cache_max_bytes: 5 << 30,
        };
        let from = SandboxConfig::from_settings(&settings).expect("valid");
        assert_eq!(
            from.cache_dir,
            std::path::Path::new("/data/proven/sandbox-cache"),
            "the cache lives where the settings say (under the data directory by default), never a shared temporary directory"
        );
        assert_eq!(from.cache_max_bytes, 5 << 30);
        assert_eq!(from.pool_size, 3);
        assert_eq!(from.pool_languages, [Language::Go]);
        assert_eq!(
            from.python_images,
            [("3.7".to_string(), "py37".to_string())]
        );
        assert_eq!(from.image(Language::Node), "my-node");
        assert_eq!(
            from.node_images,
            [("22".to_string(), "my-node22".to_string())]
        );
        assert_eq!(
            from.toolchain_images[&Language::Rust],
            [("1.96".to_string(), "my-rust196".to_string())]
        );
        assert_eq!(
            from.toolchain_images[&Language::Go],
            [("1.27.1".to_string(), "my-go127".to_string())]
        );
        assert_eq!(from.image(Language::Rust), Language::Rust.local_image());
        assert_eq!(from.limits.scratch_bytes, 1 << 28);
        assert_eq!(from.limits_for(Language::Rust).scratch_bytes, 3 << 30);
        assert_eq!(from.limits_for(Language::Go).scratch_bytes, 1 << 28);
        assert!(from.registries.allows("pypi.org", 443));
        assert!(!from.registries.allows("registry.npmjs.org", 443));
        assert_eq!(from.suite_memory_bytes, 3 << 30);
        assert_eq!(from.suite_cpus, 3.0);
        assert_eq!(from.suite_test_timeout, Duration::from_secs(45));
    }

    /// A run of a package's whole suite gets the suite's memory (a popular project's suite
    /// outgrows one test's 1 GiB, as its CI's runner gives it several), a Rust one on top of
    /// what its scratch adds; a suite memory smaller than a run's never shrinks it.
    #[test]
    fn a_whole_suite_gets_the_suites_memory_and_cpus() {
        let config = SandboxConfig::default();
        let host = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        for language in [Language::Python, Language::Node, Language::Go] {
            assert_eq!(config.limits_of_run(language, false), config.limits);
            let suite = config.limits_of_run(language, true);
            assert_eq!(suite.memory_bytes, 4 << 30, "{language}");
            assert_eq!(suite.cpus, host.clamp(1.0, 2.0), "{language}");
            assert_eq!(
                (suite.scratch_bytes, suite.pids),
                (config.limits.scratch_bytes, config.limits.pids)
            );
        }
        // Never more CPUs than the host has (Docker refuses them).
        let many = SandboxConfig {
            suite_cpus: 10_000.0,
            ..SandboxConfig::default()
        };
        assert_eq!(
            many.limits_of_run(Language::Python, true).cpus,
            host.max(1.0)
        );
        let rust = config.limits_for(Language::Rust);
        assert_eq!(
            config.limits_of_run(Language::Rust, true).memory_bytes,
            (4 << 30) + rust.memory_bytes - config.limits.memory_bytes
        );
        let small = SandboxConfig {
            suite_memory_bytes: 256 << 20,
            ..SandboxConfig::default()
        };
        assert_eq!(
            small.limits_of_run(Language::Python, true).memory_bytes,
            small.limits.memory_bytes
        );
        let tiny = SandboxConfig {
            suite_memory_bytes: 1 << 20,
            ..SandboxConfig::default()
        };
        assert!(matches!(
            tiny.validate(),
            Err(SandboxError::InvalidConfig {
                setting: "suite_memory_bytes",
                ..
            })
        ));
    }

    #[test]
    fn a_rust_run_gets_scratch_for_its_compile_tests_and_the_memory_it_takes() {
        let config = SandboxConfig::default();
        let rust = config.limits_for(Language::Rust);
        // Rust tests compile into /work/target: a suite that compiles other crates needs GiBs.
        assert_eq!(rust.scratch_bytes, 4 << 30);
        // The scratch is a tmpfs, so memory: it grows by what the scratch adds.
        assert_eq!(
            rust.memory_bytes,
            config.limits.memory_bytes + (4 << 30) - config.limits.scratch_bytes
        );
        assert_eq!(
            (rust.pids, rust.tmp_bytes),
            (config.limits.pids, config.limits.tmp_bytes)
        );
        for language in [Language::Python, Language::Node, Language::Go] {
            assert_eq!(config.limits_for(language), config.limits, "{language}");
        }
        // A language's scratch smaller than the default never shrinks its memory.
        let small = SandboxConfig {
            scratch_by_language: vec![(Language::Go, 1 << 20)],
            ..SandboxConfig::default()
        };
        let go = small.limits_for(Language::Go);
        assert_eq!(
            (go.scratch_bytes, go.memory_bytes),
            (1 << 20, small.limits.memory_bytes)
        );
        let zero = SandboxConfig {
            scratch_by_language: vec![(Language::Rust, 0)],
            ..SandboxConfig::default()
        };
        assert!(matches!(
            zero.validate(),
            Err(SandboxError::InvalidConfig {
                setting: "scratch_by_language",
                ..
            })
        ));
    }

    #[test]
    fn the_defaults_are_valid_and_out_of_range_settings_are_named() {
        assert!(SandboxConfig::default().validate().is_ok());
        let mut config = SandboxConfig::default();
        config.limits.cpus = 0.0;
        match config.validate() {
            Err(SandboxError::InvalidConfig { setting, .. }) => assert_eq!(setting, "limits.cpus"),
            other => panic!("{other:?}"),
        }
        let config = SandboxConfig {
            default_timeout: Duration::ZERO,
            ..SandboxConfig::default()
        };
        assert!(config.validate().is_err());
    }
}
