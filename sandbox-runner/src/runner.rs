//! The sandbox: one connection to Docker, a number of run slots, and the run itself —
//! tree, dependencies, container, record — plus the job-level wrappers (record once,
//! reproduce a finding) and the sweep.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bollard::{API_DEFAULT_VERSION, Docker};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tracing::Instrument;

use crate::container::{self, ContainerSpec};
use crate::proof::{RUNS_PER_SIDE, prove};
use crate::record::{AppliedLimits, Ending, RunKind, classify};
use crate::sweep::RunnerIdentity;
use crate::tree::{self, TreeSpec};
use crate::{
    AddFile, Edit, Language, Outcome, Proof, Recorded, RequestError, RunKey, RunLedger, RunRecord,
    SandboxConfig, SandboxError,
};

/// Seconds bollard waits for a response's headers (streams then run as long as needed).
const DOCKER_REQUEST_TIMEOUT_SECS: u64 = 120;

/// One command on one tree.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// `None`: a fresh key.
    pub key: Option<RunKey>,
    /// The git repository the tree comes from (its objects, never its working copy).
    pub repository: PathBuf,
    /// The base or the change: a commit, branch, tag or expression.
    pub revision: String,
    /// Edits applied to this run's copy (change plus patch); empty for none.
    pub patch: Vec<Edit>,
    pub language: Language,
    /// Files added to the tree (the test under proof).
    pub add_files: Vec<AddFile>,
    /// The command, run in the tree's copy; its exit code is the run's.
    pub command: Vec<String>,
    /// `None`: the configured default.
    pub timeout: Option<Duration>,
    /// A test run (the default: it passes only when tests ran and passed) or a plain
    /// command.
    pub kind: RunKind,
    /// Extra environment variables for the run (a seed); names are checked.
    pub env: Vec<(String, String)>,
    /// The tenant the run is for: prepared dependencies are cached per tenant (`None`: the
    /// embedded default's own).
    pub tenant: Option<String>,
    /// Resolve requirements no lock file pins as of this instant (UTC,
    /// `YYYY-MM-DDTHH:MM:SSZ`): the releases that existed then, not today's. A review sets
    /// one instant for all its runs (from its base), so both sides share one environment.
    pub resolve_before: Option<String>,
    /// The repository's identity (`owner/name`, normalised) for the cache of prepared
    /// layers, which is per tenant and repository (`None`: the repository's path).
    pub scope: Option<String>,
    /// A run of the package's whole suite: it gets the suite's memory
    /// ([`SandboxConfig::suite_memory_bytes`]), not one test's.
    pub whole_suite: bool,
}

/// How many newer Node images a run tries after the chosen one could not parse a dependency
/// resolved now (4 → 6 → 8 → 10 at most).
const MAX_NEWER_NODES: usize = 3;

impl RunRequest {
    pub fn new(
        repository: impl Into<PathBuf>,
        revision: impl Into<String>,
        language: Language,
        command: impl IntoIterator<Item = impl Into<String>>,
    ) -> RunRequest {
        RunRequest {
            key: None,
            repository: repository.into(),
            revision: revision.into(),
            patch: Vec::new(),
            language,
            add_files: Vec::new(),
            command: command.into_iter().map(Into::into).collect(),
            timeout: None,
            kind: RunKind::Tests,
            env: Vec::new(),
            tenant: None,
            resolve_before: None,
            scope: None,
            whole_suite: false,
        }
    }

    /// A run of the package's whole suite (see [`RunRequest::whole_suite`]).
    pub fn as_whole_suite(mut self) -> Self {
        self.whole_suite = true;
        self
    }

    /// The run is for `tenant` (its dependencies come from that tenant's cache).
    /// Prepared layers of this run are the repository's (`owner/name`) own.
    pub fn for_repository(mut self, repository: impl Into<String>) -> Self {
        self.scope = Some(repository.into());
        self
    }

    pub fn for_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// A plain command: exit 0 passes, and no outcome is ever a test failure.
    pub fn as_command(mut self) -> Self {
        self.kind = RunKind::Command;
        self
    }

    /// Sets an environment variable of the run (on top of the image's and the
    /// dependencies').
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    pub fn with_file(mut self, path: impl Into<String>, contents: impl Into<Vec<u8>>) -> Self {
        self.add_files.push(AddFile {
            path: path.into(),
            contents: contents.into(),
        });
        self
    }

    pub fn with_patch(mut self, patch: Vec<Edit>) -> Self {
        self.patch = patch;
        self
    }

    /// Requirements no lock file pins are resolved as of `at` (see
    /// [`RunRequest::resolve_before`]).
    pub fn resolved_as_of(mut self, at: time::OffsetDateTime) -> Self {
        let at = at.to_offset(time::UtcOffset::UTC);
        self.resolve_before = Some(format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            at.year(),
            u8::from(at.month()),
            at.day(),
            at.hour(),
            at.minute(),
            at.second()
        ));
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    pub fn with_key(mut self, key: RunKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The same run on another revision (base and change of one finding).
    pub fn at_revision(&self, revision: impl Into<String>) -> Self {
        RunRequest {
            revision: revision.into(),
            ..self.clone()
        }
    }
}

/// The runs of one finding's test on both sides and what they prove.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reproduction {
    pub base: Vec<RunRecord>,
    pub change: Vec<RunRecord>,
    pub proof: Proof,
}

/// A connection to Docker and the run slots of this runner.
pub struct Sandbox {
    docker: Docker,
    config: SandboxConfig,
    runner: RunnerIdentity,
    slots: Arc<Semaphore>,
    busy: Arc<AtomicUsize>,
    /// Warm containers (none when `pool_size` is 0).
    pool: Option<Arc<crate::pool::Pool>>,
}

impl Sandbox {
    /// Connects to Docker and agrees on the API version (bollard's default, 1.53, is newer
    /// than Debian's Docker 20.10 accepts).
    pub async fn connect(config: SandboxConfig) -> Result<Sandbox, SandboxError> {
        config.validate()?;
        let endpoint = config.docker_host.clone();
        let unavailable = |message: String| SandboxError::DockerUnavailable {
            endpoint: endpoint.clone(),
            message,
        };
        let docker = if endpoint.starts_with("tcp://") || endpoint.starts_with("http://") {
            Docker::connect_with_http(&endpoint, DOCKER_REQUEST_TIMEOUT_SECS, API_DEFAULT_VERSION)
        } else {
            let path = endpoint.trim_start_matches("unix://");
            if !std::path::Path::new(path).exists() {
                return Err(unavailable("no such socket".into()));
            }
            Docker::connect_with_unix(path, DOCKER_REQUEST_TIMEOUT_SECS, API_DEFAULT_VERSION)
        }
        .map_err(|e| unavailable(e.to_string()))?;
        let docker = docker
            .negotiate_version()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        let slots = config.max_concurrent_runs;
        metrics::gauge!(crate::metrics::SLOTS).set(slots as f64);
        // The cache as this runner finds it: measured (and brought under its cap) now, so
        // its size is exported from the start, not after the first preparation.
        {
            let (root, cap) = (config.cache_dir.join("deps"), config.cache_max_bytes);
            let _ =
                tokio::task::spawn_blocking(move || crate::deps::layer::evict(&root, cap)).await;
        }
        let runner = RunnerIdentity::current();
        let pool = (config.pool_size > 0).then(|| {
            crate::pool::Pool::new(docker.clone(), config.clone(), runner.label(), runner.tag())
        });
        Ok(Sandbox {
            docker,
            runner,
            slots: Arc::new(Semaphore::new(slots)),
            busy: Arc::new(AtomicUsize::new(0)),
            config,
            pool,
        })
    }

    /// Warm containers ready now (0 without a pool).
    pub fn warm(&self) -> usize {
        self.pool.as_ref().map_or(0, |p| p.ready())
    }

    /// Fills the pool for `language`'s default image and a tree without prepared
    /// dependencies (a runner starting, so its first runs are warm), and waits until the
    /// containers are up; returns how many are ready for that key.
    pub async fn prewarm(&self, language: Language) -> Result<usize, SandboxError> {
        let Some(pool) = &self.pool else {
            return Ok(0);
        };
        let key = crate::pool::PoolKey {
            image: self.config.image(language),
            language,
            deps: None,
            env: Vec::new(),
        };
        for old in pool.touch(&key) {
            pool.discard(old).await;
        }
        pool.fill(&key).await
    }

    /// Removes the warm pool's idle containers (a runner stopping; the sweep covers a
    /// runner that cannot).
    pub async fn drain_pool(&self) {
        if let Some(pool) = &self.pool {
            pool.drain().await;
        }
    }

    /// The runner label this sandbox's containers carry (`proven.sandbox.runner`).
    pub fn runner_label(&self) -> String {
        self.runner.label()
    }

    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// The Docker client (for callers that inspect what the sandbox left, such as tests).
    pub fn docker(&self) -> &Docker {
        &self.docker
    }

    /// Runs one command on one tree and returns its record. A failing or killed test is
    /// a record, not an error; an error means no record could be made.
    pub async fn run(&self, request: &RunRequest) -> Result<RunRecord, SandboxError> {
        if request.command.is_empty() {
            return Err(RequestError::EmptyCommand.into());
        }
        for (name, _) in &request.env {
            let valid = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if !valid {
                return Err(RequestError::InvalidEnv { name: name.clone() }.into());
            }
        }
        let key = request.key.clone().unwrap_or_else(RunKey::random);
        let span = tracing::info_span!(
            "sandbox_run",
            key = key.as_str(),
            language = request.language.as_str()
        );
        async {
            let _slot = self.slot().await?;
            let started = Instant::now();
            let result = self.run_in_slot(&key, request).await;
            let language = request.language.as_str();
            metrics::histogram!(crate::metrics::RUN_TOTAL_SECONDS, "language" => language)
                .record(started.elapsed().as_secs_f64());
            match &result {
                Ok(record) => {
                    metrics::counter!(crate::metrics::RUNS_TOTAL, "language" => language, "outcome" => record.outcome.label())
                        .increment(1);
                    tracing::info!(outcome = record.outcome.label(), exit_code = ?record.exit_code, duration_ms = record.duration_ms, "sandbox run finished");
                }
                Err(e) => {
                    metrics::counter!(crate::metrics::RUNS_TOTAL, "language" => language, "outcome" => "runner_error")
                        .increment(1);
                    // Logged where it is handled (the caller); here only for tracing.
                    tracing::debug!(error = %e, "sandbox run failed");
                }
            }
            result
        }
        .instrument(span)
        .await
    }

    /// The request's tree, written from git objects into a fresh directory (off the async
    /// workers: git2 and file writes block).
    async fn materialise(&self, request: &RunRequest) -> Result<tree::Materialised, SandboxError> {
        let config = &self.config;
        let work_dir = config.work_dir.clone();
        let (repository, revision) = (request.repository.clone(), request.revision.clone());
        let (patch, add_files) = (request.patch.clone(), request.add_files.clone());
        let max_bytes = config.max_tree_bytes;
        let limits = config.limits_for(request.language);
        let scratch_bytes = limits.scratch_bytes.max(0) as u64;
        let owner_tag = self.runner.tag();
        tokio::task::spawn_blocking(move || {
            tree::materialise(
                &work_dir,
                &owner_tag,
                &TreeSpec {
                    repository: &repository,
                    revision: &revision,
                    patch: &patch,
                    add_files: &add_files,
                    max_bytes,
                    scratch_bytes,
                },
            )
        })
        .await
        .map_err(|e| SandboxError::Io {
            action: "materialise the tree in",
            path: config.work_dir.clone(),
            source: std::io::Error::other(e),
        })?
    }

    /// Runs the command: in a warm container of the pool when one is ready for it (the tree
    /// moves in, the command runs as its one exec, the container goes), else in a container
    /// of its own; whether it was a warm one.
    async fn launch(
        &self,
        launch: Launch<'_>,
    ) -> Result<(container::Execution, bool), SandboxError> {
        let config = &self.config;
        let pool_key = crate::pool::PoolKey {
            image: launch.image.to_string(),
            language: launch.language,
            deps: launch.deps_dir.map(Path::to_path_buf),
            env: launch.deps_env.clone(),
        };
        let warm = match &self.pool {
            // A warm container has one test's limits: a run given more (a whole suite's
            // memory) starts its own.
            Some(pool)
                if launch.timeout <= config.max_run_timeout()
                    && launch.limits == config.limits_for(launch.language) =>
            {
                pool.take(&pool_key, launch.name).await
            }
            _ => None,
        };
        let pooled = warm.is_some();
        if self.pool.is_some() {
            metrics::counter!(crate::metrics::POOL_TAKES_TOTAL, "result" => if pooled { "warm" } else { "cold" })
            .increment(1);
        }
        let execution = match warm {
            // A warm container: the tree moves in, the command runs as its one exec,
            // and the container goes.
            Some(warm) => {
                let (from, into) = (launch.src.to_path_buf(), warm.dir.path().to_path_buf());
                let moved =
                    tokio::task::spawn_blocking(move || crate::pool::move_tree(&from, &into))
                        .await
                        .map_err(|e| SandboxError::Io {
                            action: "move the tree into",
                            path: warm.dir.path().to_path_buf(),
                            source: std::io::Error::other(e),
                        });
                let execution = match moved {
                    Ok(Ok(())) => {
                        container::exec_run(
                            &self.docker,
                            container::Started {
                                name: &warm.name,
                                id: &warm.id,
                                language: warm.language,
                            },
                            &launch.command,
                            &launch.run_env,
                            config.user,
                            launch.timeout,
                            config.output,
                        )
                        .await
                    }
                    Ok(Err(e)) | Err(e) => Err(e),
                };
                if let Some(pool) = &self.pool {
                    pool.retire(warm, pool_key.clone());
                }
                execution?
            }
            None => {
                let spec = ContainerSpec {
                    name: launch.name.to_string(),
                    key: launch.key.as_str().to_string(),
                    runner: self.runner.label(),
                    language: launch.language,
                    image: launch.image.to_string(),
                    command: launch.command,
                    env: launch.deps_env.into_iter().chain(launch.run_env).collect(),
                    src: launch.src,
                    mounts: launch
                        .deps_dir
                        .map(|d| container::Mount::read_only(d, crate::deps::MOUNT))
                        .into_iter()
                        .collect(),
                    limits: launch.limits,
                    user: config.user,
                    timeout: launch.timeout,
                    output: config.output,
                };
                let execution = container::execute(&self.docker, spec).await;
                // The next run of this key (the other side, the second run) finds one warm.
                if let Some(pool) = &self.pool {
                    pool.refill(pool_key.clone());
                }
                execution?
            }
        };
        Ok((execution, pooled))
    }

    /// Where a run's dependencies are prepared and its toolchain asked: for its tenant and
    /// repository, on `image`.
    fn site<'a>(
        &'a self,
        request: &'a RunRequest,
        image: &'a str,
        repository: &'a str,
    ) -> crate::deps::Site<'a> {
        crate::deps::Site {
            docker: &self.docker,
            config: &self.config,
            runner: &self.runner,
            scope: crate::deps::Scope {
                tenant: request.tenant.as_deref().unwrap_or(""),
                repository: request.scope.as_deref().unwrap_or(repository),
            },
            language: request.language,
            image,
        }
    }

    /// The interpreter or toolchain a run names and what chose it (the Python chosen among
    /// several images, else the image's own toolchain with what the project declares of
    /// it), and its test tools (the toolchain's versions when nothing prepared named any).
    async fn named_toolchain(
        &self,
        site: &crate::deps::Site<'_>,
        src: &Path,
        interpreter: Option<crate::InterpreterChoice>,
        test_tools: Vec<String>,
    ) -> (Option<crate::InterpreterChoice>, Vec<String>) {
        let config = &self.config;
        let toolchain = crate::toolchain::versions(site).await;
        let several = match site.language {
            Language::Python => !config.python_images.is_empty(),
            Language::Node => !config.node_images.is_empty(),
            Language::Rust | Language::Go => config.toolchain_images.contains_key(&site.language),
        };
        let interpreter = interpreter.or_else(|| {
            Some(crate::toolchain::choice(
                site.language,
                src,
                site.image,
                &toolchain,
                several,
            ))
        });
        let test_tools = if test_tools.is_empty() {
            toolchain
        } else {
            test_tools
        };
        (interpreter, test_tools)
    }

    /// The image a tree runs in and the interpreter it chose, read from the tree on a
    /// blocking thread (the language's default image if that thread fails).
    async fn image_for(
        &self,
        language: Language,
        src: &Path,
        before: Option<&str>,
    ) -> (String, Option<crate::record::InterpreterChoice>) {
        let config = &self.config;
        let (owned, src) = (config.clone(), src.to_path_buf());
        let before = before.map(str::to_string);
        tokio::task::spawn_blocking(move || owned.image_for(language, &src, before.as_deref()))
            .await
            .unwrap_or_else(|_| (config.image(language), None))
    }

    async fn run_in_slot(
        &self,
        key: &RunKey,
        request: &RunRequest,
    ) -> Result<RunRecord, SandboxError> {
        let materialised = self.materialise(request).await?;
        let src = materialised.src();
        let result = async {
            let (mut image, mut interpreter) = self
                .image_for(request.language, &src, request.resolve_before.as_deref())
                .await;
            let mut newer = 0;
            loop {
                let record = self
                    .run_on(key, request, &materialised, &src, (image, interpreter))
                    .await?;
                // A dependency resolved now that the era's Node cannot parse: the next
                // newer Node the project allows, at most MAX_NEWER_NODES times.
                let next = (newer < MAX_NEWER_NODES)
                    .then(|| self.newer_node(request, &src, &record))
                    .flatten();
                let Some((next_image, choice)) = next else {
                    return Ok::<_, SandboxError>(record);
                };
                (image, interpreter, newer) = (next_image, Some(choice), newer + 1);
            }
        }
        .await;
        // Deleting a tree is blocking file IO too.
        let _ = tokio::task::spawn_blocking(move || drop(materialised)).await;
        result
    }

    /// The Node image to run on instead when `record` could not load a dependency its
    /// Node cannot parse (a release of today written for a newer Node than the project's
    /// era), with the choice saying so; None otherwise.
    fn newer_node(
        &self,
        request: &RunRequest,
        src: &Path,
        record: &RunRecord,
    ) -> Option<(String, crate::InterpreterChoice)> {
        use proven_sandbox_plan::node_version::{next_newer, node_wants, unparsed_dependency};
        let current = record.interpreter.as_ref()?;
        if request.language != Language::Node
            || !matches!(record.outcome, crate::Outcome::EnvironmentError { .. })
            || !self
                .config
                .node_images
                .iter()
                .any(|(_, i)| *i == record.image)
        {
            return None;
        }
        let output = format!("{}\n{}", record.output.head, record.output.tail);
        let why = unparsed_dependency(&output)?;
        let (version, image) =
            next_newer(&node_wants(src), &self.config.node_images, &current.version)?;
        let because = format!(
            "{}; Node {} could not parse {why}, a release resolved now: Node {version}, the next newer the project allows",
            current.because, current.version
        );
        Some((
            image.clone(),
            crate::InterpreterChoice {
                version,
                image,
                because,
            },
        ))
    }

    /// One run of `request` on `image`: its preparation, its container, its record.
    async fn run_on(
        &self,
        key: &RunKey,
        request: &RunRequest,
        materialised: &crate::tree::Materialised,
        src: &Path,
        (image, interpreter): (String, Option<crate::record::InterpreterChoice>),
    ) -> Result<RunRecord, SandboxError> {
        let config = &self.config;
        let limits = config.limits_of_run(request.language, request.whole_suite);
        let repository = request.repository.to_string_lossy();
        let site = self.site(request, &image, &repository);
        let prepared = crate::deps::prepare(
            &site,
            src,
            &materialised.record,
            request.resolve_before.as_deref(),
        )
        .await?;
        let test_tools = test_tools(prepared.as_ref(), request.language).await;
        // Every record names its toolchain and what chose it (issue 30, must-show 5).
        let (interpreter, test_tools) = self
            .named_toolchain(&site, src, interpreter, test_tools)
            .await;
        let timeout = request.timeout.unwrap_or(config.default_timeout);
        let deps_env = prepared.as_ref().map(|p| p.env.clone()).unwrap_or_default();
        let mut run_env: Vec<String> = request
            .env
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut setup = Vec::new();
        if request.whole_suite
            && request.language == Language::Python
            && let Some(line) =
                proven_sandbox_plan::tools::past_collection_errors(&test_tools, &mut run_env)
        {
            setup.push(line);
        }
        if request.language == Language::Python
            && let Some(line) = proven_sandbox_plan::tools::plain_report(&test_tools, &mut run_env)
        {
            setup.push(line);
        }
        if request.whole_suite && request.language == Language::Python && prepared.is_some() {
            // prepare.py's hook in the environment reads it (`test_time_limit_hook`).
            let seconds = self.config.suite_test_timeout.as_secs().max(1);
            run_env.push(format!("PROVEN_TEST_TIMEOUT={seconds}"));
            setup.push(format!(
                "each test of the whole suite is stopped after {seconds} s (sandbox.suite_test_timeout_seconds), an error by name, and the rest goes on"
            ));
        }
        let mut command = request.command.clone();
        if request.language == Language::Go {
            before_modules(request, src, &mut run_env, &mut setup, &mut command).await;
            vet_of_era(request, src, &mut run_env, &mut setup).await;
        }
        ci_services(
            src,
            request.resolve_before.as_deref(),
            &mut run_env,
            &mut setup,
        )
        .await;
        if request.language == Language::Node
            && let Some(p) = &prepared
        {
            workspace_modules(&p.dir, &mut setup, &mut command).await;
        }
        let name = container::container_name(key.as_str());
        let (execution, pooled) = self
            .launch(Launch {
                key,
                name: &name,
                language: request.language,
                image: &image,
                command,
                run_env,
                deps_env,
                src,
                deps_dir: prepared.as_ref().map(|p| p.dir.as_path()),
                limits,
                timeout,
            })
            .await?;
        metrics::histogram!(crate::metrics::RUN_DURATION_SECONDS, "language" => request.language.as_str())
            .record(execution.duration.as_secs_f64());
        let outcome = outcome_of(request, &execution);
        if execution.stopped_after_summary {
            setup.push(format!(
                "the test runner printed its summary and its process had not ended {} s later (a thread or a child process its tests left running): stopped, its summary is the run's outcome",
                config.output.quiet_after_summary_ms / 1000
            ));
        }
        Ok(RunRecord {
            run_id: key.as_str().to_string(),
            container: name,
            pooled,
            language: request.language,
            image,
            interpreter,
            setup,
            test_tools,
            image_id: execution.image_id,
            tree: materialised.record.clone(),
            dependencies: prepared.map(|p| p.record),
            command: request.command.clone(),
            limits: applied_limits(&limits, timeout, config.output.kill_after_bytes),
            started_at: execution.started_at,
            duration_ms: execution.duration.as_millis() as u64,
            exit_code: execution.exit_code,
            timed_out: execution.timed_out,
            killed: execution.killed,
            pids_limit_reached: execution.pids_limit_reached,
            tests: execution.tests,
            failing: execution.failing,
            kind: request.kind,
            output: execution.output,
            outcome,
        })
    }

    /// Runs a job's request once across redeliveries: a job that already has a record
    /// returns it without running (and without a container: a leftover of the attempt
    /// that recorded it is removed); otherwise the run's container is named after the
    /// job, so an orphan of a crashed attempt is removed before this attempt starts, and
    /// the record is stored unless another attempt stored one first.
    pub async fn run_job(
        &self,
        job: &RunKey,
        request: &RunRequest,
        ledger: &impl RunLedger,
    ) -> Result<Recorded, SandboxError> {
        if let Some(existing) = ledger.get(job).await? {
            self.remove_run(job).await?;
            return Ok(Recorded::Already(existing));
        }
        let request = request.clone().with_key(job.clone());
        let record = self.run(&request).await?;
        Ok(ledger.record_once(job, &record).await?)
    }

    /// Runs the finding's test on the base and on the change, alternating, each side
    /// [`RUNS_PER_SIDE`] times, and judges them. Stops early when a run is an environment
    /// error (nothing further could make it a proof). With a key on `base`, the runs'
    /// keys are derived from it (`KEY-base-1`, `KEY-change-1`, ...).
    pub async fn reproduce(
        &self,
        base: &RunRequest,
        change: &RunRequest,
    ) -> Result<Reproduction, SandboxError> {
        let mut base_runs = Vec::new();
        let mut change_runs = Vec::new();
        'runs: for round in 1..=RUNS_PER_SIDE {
            for (side, request, runs) in [
                ("base", base, &mut base_runs),
                ("change", change, &mut change_runs),
            ] {
                let mut request = request.clone();
                if let Some(key) = &base.key {
                    request.key = Some(key.derive(&format!("{side}-{round}"))?);
                }
                let record = self.run(&request).await?;
                let incomplete = matches!(record.outcome, Outcome::EnvironmentError { .. });
                runs.push(record);
                if incomplete {
                    break 'runs;
                }
            }
        }
        let proof = prove(&base_runs, &change_runs);
        Ok(Reproduction {
            base: base_runs,
            change: change_runs,
            proof,
        })
    }

    /// Removes every leftover sandbox container (of a dead runner, or past its deadline)
    /// and returns how many; also removes the run directories and half-prepared
    /// dependency directories dead runners on this machine left. Safe beside live
    /// runners: what they own is kept.
    pub async fn sweep(&self) -> Result<usize, SandboxError> {
        let removed = crate::sweep::sweep(&self.docker, &self.runner).await?;
        let me = self.runner.clone();
        let work_dir = self.config.work_dir.clone();
        let deps_dir = self.config.cache_dir.join("deps");
        let _ = tokio::task::spawn_blocking(move || {
            // Staging directories live in each tenant's part of the cache.
            let tenants: Vec<std::path::PathBuf> = std::fs::read_dir(&deps_dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            crate::sweep::sweep_dirs(&me, &work_dir, "run-")
                + crate::sweep::sweep_dirs(&me, &work_dir, crate::pool::DIR_PREFIX)
                + tenants
                    .iter()
                    .map(|t| crate::sweep::sweep_dirs(&me, t, crate::deps::STAGING_PREFIX))
                    .sum::<usize>()
        })
        .await;
        Ok(removed)
    }

    /// Removes the container of one run key, if there is one (a job's orphan).
    pub async fn remove_run(&self, key: &RunKey) -> Result<bool, SandboxError> {
        let removed =
            container::remove(&self.docker, &container::container_name(key.as_str())).await?;
        if removed {
            metrics::counter!(crate::metrics::SWEPT_TOTAL).increment(1);
        }
        Ok(removed)
    }

    async fn slot(&self) -> Result<SlotGuard, SandboxError> {
        let permit = self.slots.clone().acquire_owned().await.map_err(|_| {
            SandboxError::DockerUnavailable {
                endpoint: self.config.docker_host.clone(),
                message: "the sandbox is shutting down".into(),
            }
        })?;
        let busy = self.busy.fetch_add(1, Ordering::SeqCst) + 1;
        metrics::gauge!(crate::metrics::SLOTS_BUSY).set(busy as f64);
        Ok(SlotGuard {
            _permit: permit,
            busy: self.busy.clone(),
        })
    }
}

struct SlotGuard {
    _permit: tokio::sync::OwnedSemaphorePermit,
    busy: Arc<AtomicUsize>,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let busy = self.busy.fetch_sub(1, Ordering::SeqCst).saturating_sub(1);
        metrics::gauge!(crate::metrics::SLOTS_BUSY).set(busy as f64);
    }
}

/// The run's outcome, from how its container ended and what its output showed.
/// The limits a run's record names: the language's, its timeout and the output cap.
fn applied_limits(
    limits: &crate::config::Limits,
    timeout: Duration,
    output_kill_after_bytes: u64,
) -> AppliedLimits {
    AppliedLimits {
        memory_bytes: limits.memory_bytes,
        pids: limits.pids,
        cpus: limits.cpus,
        scratch_bytes: limits.scratch_bytes,
        timeout_ms: timeout.as_millis() as u64,
        output_kill_after_bytes,
    }
}

fn outcome_of(request: &RunRequest, execution: &container::Execution) -> Outcome {
    classify(
        request.language,
        &Ending {
            exit_code: execution.exit_code,
            killed: execution.killed,
            pids_limit_reached: execution.pids_limit_reached,
            markers: execution.markers.clone(),
            tests: execution.tests,
            kind: request.kind,
            stream_broken: execution.stream_broken,
        },
    )
}

/// The versions of the test tools a prepared environment holds (none when nothing was
/// prepared).
async fn test_tools(prepared: Option<&crate::deps::Prepared>, language: Language) -> Vec<String> {
    let Some(p) = prepared else {
        return Vec::new();
    };
    let dir = p.dir.clone();
    tokio::task::spawn_blocking(move || proven_sandbox_plan::tools::prepared(language, &dir))
        .await
        .unwrap_or_default()
}

/// What a run's container is started with.
struct Launch<'a> {
    key: &'a RunKey,
    name: &'a str,
    language: Language,
    image: &'a str,
    command: Vec<String>,
    run_env: Vec<String>,
    deps_env: Vec<String>,
    src: &'a Path,
    /// The prepared dependencies, mounted read-only.
    deps_dir: Option<&'a Path>,
    limits: crate::Limits,
    timeout: Duration,
}

/// Node: writable node_modules folders of links to the prepared packages, at the root and
/// at each workspace package that has its own (pnpm's), before the command; said in the
/// record's setup.
async fn workspace_modules(dir: &Path, setup: &mut Vec<String>, command: &mut Vec<String>) {
    let dir = dir.to_path_buf();
    let (modules, copies) = tokio::task::spawn_blocking(move || {
        (
            proven_sandbox_plan::deps::node_workspace_modules(&dir),
            proven_sandbox_plan::deps::node_file_copies(&dir),
        )
    })
    .await
    .unwrap_or_default();
    *command = proven_sandbox_plan::deps::with_node_links(&modules, &copies, command);
    setup.push(
        "node_modules: a writable folder of links to the prepared packages (tools write beside them; a test tool's own package is a copy it may write into)"
            .into(),
    );
    if !modules.is_empty() {
        setup.push(format!(
            "the workspace packages' node_modules linked from the preparation: {}",
            modules.join(", ")
        ));
    }
    if !copies.is_empty() {
        setup.push(format!(
            "file: folders copied into node_modules/.proven-file, as pnpm copies them: {}",
            copies
                .iter()
                .map(|c| format!("{} ({})", c.folder, c.name))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

/// The services the project's CI starts beside its tests: those the images carry are
/// started by the entry (`PROVEN_SERVICES`), the others named as not started; the record's
/// setup lines say which. A project of an earlier year that starts Redis (by its CI, or
/// from its own tests) meets the Redis of its era (`PROVEN_REDIS`), said in the setup too.
async fn ci_services(
    src: &Path,
    as_of: Option<&str>,
    run_env: &mut Vec<String>,
    setup: &mut Vec<String>,
) {
    use proven_sandbox_plan::services;
    let (from, as_of) = (src.to_path_buf(), as_of.map(str::to_string));
    let (services, era_redis) = tokio::task::spawn_blocking(move || {
        let found = services::ci_services(&from);
        let era = services::era_redis(&from, &found, as_of.as_deref());
        (found, era)
    })
    .await
    .unwrap_or_default();
    if let Some(redis) = &era_redis {
        run_env.push(redis.env());
        setup.push(redis.words());
    }
    let started: Vec<&services::CiService> =
        services.iter().filter(|s| s.started().is_some()).collect();
    if !started.is_empty() {
        let names: Vec<&str> = started.iter().map(|s| s.name.as_str()).collect();
        run_env.push(format!("PROVEN_SERVICES={}", names.join(" ")));
        run_env.extend(started.iter().flat_map(|s| s.run_env()));
    }
    setup.extend(services.iter().map(|s| s.words()));
}

/// Go: a module whose `go` directive is older than the vet checks the sandbox's `go test`
/// runs is vetted by those of its era (`language::go_vet_of_era`), said in the setup; a
/// vet failure is no test's result. Not where the run sets GOFLAGS (GOPATH mode's vet off).
async fn vet_of_era(
    request: &RunRequest,
    src: &Path,
    run_env: &mut Vec<String>,
    setup: &mut Vec<String>,
) {
    let set = |k: &str| k == "GOFLAGS";
    if request.env.iter().any(|(k, _)| set(k))
        || run_env.iter().any(|e| e.split('=').next().is_some_and(set))
    {
        return;
    }
    let Ok(go_mod) = tokio::fs::read_to_string(src.join("go.mod")).await else {
        return;
    };
    if let Some((flags, from)) = proven_sandbox_plan::language::go_vet_of_era(&go_mod) {
        setup.push(format!(
            "go test's vet checks of the module's era ({flags}): the module says `{from}`, and the sandbox's Go vets tests with checks Go 1.24 added"
        ));
        run_env.push(flags);
    }
}

/// Go: a package from before modules (no go.mod) runs as its CI ran it, in GOPATH mode and
/// from its import path under `$GOPATH/src`; both said in the record's setup.
async fn before_modules(
    request: &RunRequest,
    src: &Path,
    run_env: &mut Vec<String>,
    setup: &mut Vec<String>,
    command: &mut Vec<String>,
) {
    if !proven_sandbox_plan::language::go_before_modules(src)
        || request.env.iter().any(|(k, _)| k == "GO111MODULE")
    {
        return;
    }
    // As the project's CI ran it: module mode finds no main module here.
    run_env.push("GO111MODULE=off".into());
    setup.push(
        "no go.mod: a Go package from before modules, run in GOPATH mode (GO111MODULE=off)".into(),
    );
    // With no go.mod a package's Go is the toolchain's own, so `go test` vets it with checks
    // its era's Go never made (1.24's non-constant format strings: pkg/errors' own tests did
    // not build). A vet failure is no test's result; the tests run as its CI ran them.
    if !request.env.iter().any(|(k, _)| k == "GOFLAGS") {
        run_env.push("GOFLAGS=-vet=off".into());
        setup.push(
            "no go.mod: go test's vet checks off (GOFLAGS=-vet=off), the sandbox's Go being newer than the package's era".into(),
        );
    }
    // Its packages import one another by its import path: run from there.
    let (from, repository) = (src.to_path_buf(), request.repository.clone());
    let found = tokio::task::spawn_blocking(move || {
        let origin = crate::tree::origin(&repository);
        proven_sandbox_plan::gopath::import_path(&from, origin.as_deref())
    })
    .await
    .ok()
    .flatten();
    if let Some(path) = found {
        *command = proven_sandbox_plan::gopath::wrap(command, &path);
        setup.push(format!(
            "laid out at $GOPATH/src/{} (its import path, from {})",
            path.path, path.from
        ));
    }
}
