//! Proven's settings.
//!
//! Owns the one table of settings ([`SETTINGS`]) and the only code that reads them: the
//! binary passes the process environment and its flags in, and gets a validated [`Config`]
//! back. Layers, lowest first: defaults < `proven.yaml` (read from the base revision, so a
//! change never chooses its own review) < `PROVEN_*` environment < command-line flags.
//!
//! Invariants:
//! - A wrong value stops Proven before any work with [`ConfigError`] (exit code 7), naming
//!   the key, where it came from, and the values allowed.
//! - `docs/configuration.md` is generated from [`SETTINGS`] ([`reference_markdown`]); a
//!   test fails when it is stale.

mod entries;
mod ignore;
mod scout;
mod settings;

pub use ignore::{IgnoreEntry, parse_ignore};

pub use scout::{
    BUILT_SUFFIXES, Doubled, MANIFESTS, PLAN_KINDS, PathRule, PlanAgents, PlanSpec, PlanTools,
    ReviewClass, ScoutSettings, parse_path_rules, parse_prose_suffixes,
};

pub use settings::{
    Allowed, SETTINGS, SUITE_TIMEOUT_DEFAULT, Setting, list_entries, parse_credential_entry,
    parse_host_entry, parse_net, reference_markdown,
};

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Environment prefixes that belong to the test suite and the benchmarks, not to Proven.
pub const RESERVED_PREFIXES: &[&str] = &["PROVEN_TEST_", "PROVEN_BENCH_"];

/// Exit code for a configuration error.
pub const EXIT_CONFIG: i32 = 7;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct ConfigError {
    /// Where the bad value came from: `PROVEN_COLOR`, `proven.yaml key dependencies.dev`, ...
    pub source_name: String,
    pub key: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Informational {
    /// Report RustSec's unmaintained/unsound/notice advisories as findings of their own kind.
    Report,
    Ignore,
}

/// The validated settings of one process (and, once `proven.yaml` is read, one review).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub data_dir: PathBuf,
    /// Set: use this store; unset: the embedded SQLite file under `data_dir`.
    pub database_url: Option<String>,
    /// Connections one process keeps to Postgres at most.
    pub database_connections: u32,
    pub color: ColorChoice,
    pub log: String,
    pub dependencies: bool,
    pub max_lockfile_bytes: u64,
    pub informational: Informational,
    pub dev_dependencies: bool,
    pub redis_url: String,
    pub queue_prefix: String,
    pub listen: std::net::SocketAddr,
    pub metrics_listen: Option<std::net::SocketAddr>,
    pub worker_concurrency: usize,
    pub max_running_reviews: i64,
    /// A tenant's cap on unfinished reviews.
    pub max_queued_reviews: i64,
    /// A tenant's cap on unanswered questions.
    pub max_queued_questions: i64,
    /// Reviews one batch request may hold.
    pub max_batch_reviews: usize,
    /// The largest `deadline_secs` a request may ask for.
    pub max_deadline_seconds: u64,
    /// `proven serve`'s limits on connections and requests.
    pub http: HttpSettings,
    pub sandbox: SandboxSettings,
    pub lease: std::time::Duration,
    pub requeue_after: std::time::Duration,
    /// The model agents run (an endpoint is configured, or `agents = on`).
    pub agents: bool,
    /// The operator chose the dependency-only plan (`agents = off`): a review without the
    /// agents is then complete. Without that choice, agents left out because no model is
    /// configured make a review that needed them `partial`.
    pub agents_off: bool,
    /// Tries the Fixer gets per proved defect (0: no Fixer; `fixes: off` makes it 0).
    pub fix_attempts: u32,
    /// Proposed fixes are on (`fixes`).
    pub fixes: bool,
    /// Scout Intent chooses a plan (`scout_intent`); off: every review in full.
    pub scout_intent: bool,
    /// The tool evidence's analyzers that run, by name (`tool_analyzers`: pyflakes, go-vet,
    /// clippy, eslint), each for the change's files of its language.
    pub tool_analyzers: Vec<String>,
    /// Scout Intent's plans, path rules, prose suffixes and doubled classes.
    pub scout: ScoutSettings,
    /// Advisories the repository accepts (`ignore`).
    pub ignore: Vec<IgnoreEntry>,
    /// A directory the trace is also written to as JSON Lines (`log_dir`).
    pub log_dir: Option<PathBuf>,
    /// The most a repository's H-MEM may hold (`PROVEN_HMEM_MAX_STATE_BYTES`).
    pub hmem_max_state_bytes: u64,
    /// Leading words of a claim that count in a similarity query (`PROVEN_HMEM_QUERY_TOKENS`).
    pub hmem_query_tokens: usize,
    /// The Planner's bounded steps (`PROVEN_MARKOVIAN*`).
    pub markovian: MarkovianSettings,
    /// One whole-change patch of every proved fix, proved as a whole.
    pub autofix: bool,
    /// Seconds each run of the autofix attempt may take (`autofix_timeout`).
    pub autofix_timeout_secs: u64,
    /// Seconds the package's suite may take when it proves a fix (`suite_timeout`).
    pub suite_timeout_secs: u64,
    /// The model that writes the autofix attempt's one patch (`autofix_generator`; None:
    /// the generator's own model), served at the generator's endpoint.
    pub autofix_generator: Option<String>,
    pub guardrail: bool,
    pub generator: ModelSettings,
    pub skeptic: ModelSettings,
    pub guardrail_model: ModelSettings,
    /// The second reviewer, when its base URL and model are set.
    pub second_reviewer: Option<ModelSettings>,
    pub model_timeout: std::time::Duration,
    /// Longest run of one step before it is stopped and fails by name.
    pub step_deadline: std::time::Duration,
    /// What a review's `repository` may name, and how clones and fetches are made.
    pub repository: RepositorySettings,
    /// Bounds on what intake reads (a repository's `proven.yaml` may lower them).
    pub max_blob_bytes: u64,
    pub max_tree_files: usize,
    /// Proven as a GitHub App (`github.*`).
    pub github: GitHubSettings,
}

/// The `github.*` settings, validated.
#[derive(Clone, PartialEq, Eq)]
pub struct GitHubSettings {
    /// None: not a GitHub App.
    pub app_id: Option<u64>,
    pub private_key: Option<PathBuf>,
    /// A secret (never printed; see the `Debug` impl).
    pub webhook_secret: String,
    pub api_url: String,
    pub check_name: String,
    pub findings_conclusion: String,
    pub advisory_conclusion: String,
    /// With advisory findings whose code does not reach what the advisory names.
    pub not_reached_conclusion: String,
    pub sarif: bool,
    pub publish_lease_secs: i64,
}

impl std::fmt::Debug for GitHubSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHubSettings")
            .field("app_id", &self.app_id)
            .field("private_key", &self.private_key)
            .field("webhook_secret", &"***")
            .field("api_url", &self.api_url)
            .field("check_name", &self.check_name)
            .finish_non_exhaustive()
    }
}

/// The bounded-steps settings (`PROVEN_MARKOVIAN*`), validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkovianSettings {
    pub on: bool,
    pub threshold_tokens: usize,
    /// `file` or `hunk`.
    pub step_unit: String,
    pub carry_tokens: usize,
}

/// The `repository.*` settings, validated.
#[derive(Clone, PartialEq, Eq)]
pub struct RepositorySettings {
    /// `(host, port)`: a host alone allows its scheme's default port.
    pub hosts: Vec<(String, Option<u16>)>,
    pub roots: Vec<PathBuf>,
    pub private_nets: Vec<ipnet::IpNet>,
    pub credentials: Vec<RepoCredential>,
    pub ca_file: Option<PathBuf>,
    pub ssh_key: Option<PathBuf>,
    pub ssh_known_hosts: Option<PathBuf>,
    pub connect_timeout: std::time::Duration,
    pub read_timeout: std::time::Duration,
    pub fetch_timeout: std::time::Duration,
    pub max_fetch_bytes: u64,
}

/// Credentials for one https host.
#[derive(Clone, PartialEq, Eq)]
pub struct RepoCredential {
    pub host: String,
    pub port: Option<u16>,
    pub user: String,
    /// A secret: never printed (see the `Debug` impl).
    pub secret: String,
}

impl std::fmt::Debug for RepoCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RepoCredential")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("secret", &"***")
            .finish()
    }
}

impl std::fmt::Debug for RepositorySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RepositorySettings")
            .field("hosts", &self.hosts)
            .field("roots", &self.roots)
            .field("private_nets", &self.private_nets)
            .field("credentials", &self.credentials)
            .field("ca_file", &self.ca_file)
            .field("ssh_key", &self.ssh_key)
            .field("ssh_known_hosts", &self.ssh_known_hosts)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("fetch_timeout", &self.fetch_timeout)
            .field("max_fetch_bytes", &self.max_fetch_bytes)
            .finish()
    }
}

/// The sandbox's settings (mapped into the sandbox's own configuration by whoever
/// connects it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    pub docker_host: String,
    /// `(language, pythonX.Y, nodeNN, rustX.Y or goX.Y, image)`.
    pub images: Vec<(String, String)>,
    pub registries: Vec<String>,
    pub pip_index_url: Option<String>,
    pub npm_registry: Option<String>,
    pub goproxy: String,
    pub gosumdb: String,
    pub scratch_bytes: u64,
    /// Scratch space of a Rust run (its tests compile into it).
    pub rust_scratch_bytes: u64,
    pub memory_bytes: u64,
    /// Memory of a run of a package's whole suite (`sandbox.suite_memory_bytes`).
    pub suite_memory_bytes: u64,
    /// CPUs of a run of a package's whole suite (`sandbox.suite_cpus`).
    pub suite_cpus: u64,
    /// One test's time within a whole suite (`sandbox.suite_test_timeout_seconds`).
    pub suite_test_timeout_seconds: u64,
    pub concurrency: usize,
    /// Warm containers kept ready per key (0: none).
    pub pool_size: usize,
    /// Languages whose images a worker warms at start.
    pub pool_languages: Vec<String>,
    pub prepare_timeout: std::time::Duration,
    pub prepare_max_bytes: u64,
    /// Where prepared layers are cached (`sandbox.cache_dir`, else under the data
    /// directory).
    pub cache_dir: std::path::PathBuf,
    pub cache_max_bytes: u64,
}

/// What `proven serve` allows one connection, request and token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSettings {
    pub header_timeout: std::time::Duration,
    pub body_timeout: std::time::Duration,
    pub max_body_bytes: usize,
    pub max_connections: usize,
    /// Connections one client address may hold at once.
    pub max_connections_per_address: usize,
    /// Webhook body bytes held at once before their signatures are checked.
    pub unverified_body_bytes: usize,
    pub rate_per_second: std::num::NonZeroU32,
    pub rate_burst: std::num::NonZeroU32,
}

/// One role's model endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct ModelSettings {
    pub base_url: String,
    pub model: String,
    /// Empty when none.
    pub api_key: String,
}

impl std::fmt::Debug for ModelSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSettings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &if self.api_key.is_empty() { "" } else { "***" })
            .finish()
    }
}

/// The family of a model id (`nvidia/nemotron-3.5-…` → `nemotron`), for the rule that
/// the Skeptic is never of the generator's family.
pub fn model_family(model: &str) -> String {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .trim()
        .to_ascii_lowercase();
    let end = name
        .find(|c: char| c.is_ascii_digit() || matches!(c, '-' | '_' | '.' | ':'))
        .unwrap_or(name.len());
    if end == 0 {
        name
    } else {
        name[..end].to_string()
    }
}

impl Config {
    /// The embedded store's file.
    pub fn sqlite_path(&self) -> PathBuf {
        self.data_dir.join("proven.db")
    }
}

/// Raw values by setting key, each with where it came from.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    values: BTreeMap<&'static str, (String, String)>,
    /// What a layer asked for and did not get (a repository raising a limit), each naming
    /// its key: said to whoever runs the review, never silently dropped.
    warnings: Vec<String>,
}

impl Layers {
    /// Starts from the environment (only `PROVEN_*` variables are looked at; an unknown one
    /// is an error, since a misspelt setting silently ignored is a setting not applied).
    pub fn from_env(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Layers, ConfigError> {
        let mut layers = Layers::default();
        for (name, value) in vars {
            if !name.starts_with("PROVEN_") || RESERVED_PREFIXES.iter().any(|p| name.starts_with(p))
            {
                continue;
            }
            // A secret may come from a file (`PROVEN_GENERATOR_API_KEY_FILE=/run/secrets/…`,
            // as Compose and Kubernetes mount secrets): its content, less the final newline.
            let from_file = name.strip_suffix("_FILE").and_then(|base| {
                SETTINGS
                    .iter()
                    .find(|s| s.env == base && s.allowed.is_secret())
            });
            let value = match from_file {
                Some(setting) => std::fs::read_to_string(&value)
                    .map(|text| text.trim_end_matches(['\n', '\r']).to_string())
                    .map_err(|e| ConfigError {
                        source_name: name.clone(),
                        key: setting.key.to_string(),
                        message: format!("cannot read the secret's file {value:?}: {e}"),
                    })?,
                None => value,
            };
            let canonical = match from_file {
                Some(setting) => setting.env,
                None => settings::ALIASES
                    .iter()
                    .find(|(alias, _)| *alias == name)
                    .map_or(name.as_str(), |(_, env)| env),
            };
            let Some(setting) = SETTINGS.iter().find(|s| s.env == canonical) else {
                let nearest = nearest(&name, SETTINGS.iter().map(|s| s.env));
                return Err(ConfigError {
                    source_name: name.clone(),
                    key: name,
                    message: format!(
                        "unknown setting; the nearest known is {nearest} (every setting: `proven config reference`)"
                    ),
                });
            };
            if let Some((earlier, from)) = layers.values.get(setting.key)
                && *earlier != value
            {
                return Err(ConfigError {
                    source_name: name.clone(),
                    key: setting.key.to_string(),
                    message: format!(
                        "{name} and {from} name the same setting with different values: set one"
                    ),
                });
            }
            layers.values.insert(setting.key, (value, name));
        }
        Ok(layers)
    }

    /// Adds `proven.yaml` under the environment: a key already set by the environment keeps
    /// the environment's value. Only settings marked as repository settings may appear.
    pub fn with_yaml(mut self, text: &str, origin: &str) -> Result<Layers, ConfigError> {
        let err = |key: &str, message: String| ConfigError {
            source_name: format!("{origin} key {key}"),
            key: key.to_string(),
            message,
        };
        let value: serde_json::Value = if text.trim().is_empty() {
            serde_json::Value::Null
        } else {
            serde_saphyr::from_str(text).map_err(|e| ConfigError {
                source_name: origin.to_string(),
                key: String::new(),
                message: format!("not valid YAML: {e}"),
            })?
        };
        let mut flat = Vec::new();
        match value {
            serde_json::Value::Null => {}
            serde_json::Value::Object(map) => {
                flatten("", &map, &mut flat).map_err(|(key, message)| err(&key, message))?
            }
            _ => {
                return Err(ConfigError {
                    source_name: origin.to_string(),
                    key: String::new(),
                    message: "must be a mapping of settings".into(),
                });
            }
        }
        for (key, raw) in flat {
            if let Some(operator) = SETTINGS.iter().find(|s| s.key == key && !s.repository) {
                return Err(err(
                    &key,
                    format!(
                        "is the operator's setting ({}), not a repository's: {origin} may not set it",
                        operator.env
                    ),
                ));
            }
            let Some(setting) = SETTINGS.iter().find(|s| s.key == key && s.repository) else {
                let known: Vec<&str> = SETTINGS
                    .iter()
                    .filter(|s| s.repository)
                    .map(|s| s.key)
                    .collect();
                let nearest = nearest(&key, known.iter().copied());
                return Err(err(
                    &key,
                    format!(
                        "unknown key; the nearest known is {nearest} (allowed in {origin}: {})",
                        known.join(", ")
                    ),
                ));
            };
            let from_yaml = (raw, format!("{origin} key {key}"));
            if matches!(setting.allowed, Allowed::Limit) {
                // A limit: the repository may lower the operator's value, never raise it. A
                // value that does not parse is kept, so resolving names the key.
                let ceiling = self
                    .values
                    .get(setting.key)
                    .map_or_else(|| setting.default_value(), |(v, _)| v.clone());
                let lower = match (from_yaml.0.parse::<u64>(), ceiling.parse::<u64>()) {
                    (Ok(asked), Ok(ceiling)) => asked < ceiling,
                    (Err(_), _) => true,
                    (Ok(_), Err(_)) => false,
                };
                if lower {
                    self.values.insert(setting.key, from_yaml);
                } else if from_yaml.0 != ceiling {
                    let warning = format!(
                        "{origin} key {key}: {} would raise the limit {ceiling} ({}); a repository \
                         may only lower a limit, so {ceiling} applies",
                        from_yaml.0, setting.env
                    );
                    // Said where the review runs (the terminal, the worker's log): the
                    // repository's author asked for something they did not get.
                    tracing::warn!("{warning}");
                    self.warnings.push(warning);
                }
                continue;
            }
            self.values.entry(setting.key).or_insert(from_yaml);
        }
        Ok(self)
    }

    /// What the layers asked for and did not get, each naming its key (a repository's
    /// `proven.yaml` raising a limit): for the caller to say, as a warning.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Sets a value from a command-line flag (highest layer).
    pub fn with_flag(mut self, key: &'static str, value: impl Into<String>, flag: &str) -> Layers {
        self.values.insert(key, (value.into(), flag.to_string()));
        self
    }

    /// The raw value of `key` (its layer's, or the default) once its `Allowed` rule accepts
    /// it; the error names where the value came from (never a secret's value).
    fn checked(&self, key: &'static str) -> Result<String, ConfigError> {
        let setting = settings::setting(key);
        let (raw, origin) = match self.values.get(key) {
            Some((v, o)) => (v.clone(), o.clone()),
            None => (setting.default_value(), "default".to_string()),
        };
        setting.allowed.check(&raw).map_err(|message| ConfigError {
            source_name: if origin == "default" {
                key.to_string()
            } else {
                origin.clone()
            },
            key: key.to_string(),
            message: if setting.allowed.is_secret() {
                format!("the value (hidden: it holds secrets) is not allowed: {message}")
            } else {
                format!("{raw:?} is not allowed: {message}")
            },
        })?;
        Ok(raw)
    }

    /// Validates every setting into a [`Config`]. Settings are checked in a fixed order;
    /// the first one refused is the error.
    pub fn resolve(&self) -> Result<Config, ConfigError> {
        let get = |key: &'static str| self.checked(key);
        let data_dir = get("data_dir")?;
        let database_url = get("database_url")?;
        let database_connections = get("database_connections")?;
        let color = get("color")?;
        let log = get("log")?;
        let dependencies = self.dependency_settings()?;
        let redis_url = get("redis_url")?;
        let queue_prefix = get("queue_prefix")?;
        let listen = get("listen")?;
        let metrics_listen = get("metrics_listen")?;
        let admission = self.admission_limits()?;
        let http = self.http_settings()?;
        let lease = get("lease_seconds")?;
        let requeue = get("requeue_seconds")?;
        let generator = self.generator()?;
        let skeptic = self.model("skeptic")?;
        let guardrail_model = self.model("guardrail")?;
        let second_reviewer = self.second_reviewer()?;
        let agents = get("agents")?;
        let guardrail = get("guardrail")?;
        let fix_attempts = get("fix_attempts")?;
        let fixes = get("fixes")?;
        let scout_intent = get("scout_intent")?;
        let tool_analyzers = settings::list_entries(&get("tool_analyzers")?)
            .map(String::from)
            .collect();
        let ignore = ignore::parse_ignore(&get("ignore")?).unwrap_or_default();
        let scout = self.scout_settings()?;
        let log_dir = get("log_dir")?;
        let hmem_max_state_bytes = get("hmem_max_state_bytes")?.parse().unwrap_or(64 << 20);
        let hmem_query_tokens = get("hmem_query_tokens")?.parse().unwrap_or(8);
        let markovian = self.markovian_settings()?;
        let autofix = get("autofix")?;
        let autofix_timeout_secs = get("autofix_timeout")?.parse().unwrap_or(300);
        let suite_timeout_secs = get("suite_timeout")?.parse().unwrap_or(900);
        let autofix_generator = get("autofix_generator")?;
        let model_timeout = get("models.timeout_seconds")?;
        let step_deadline = get("step_deadline_seconds")?;
        let max_blob_bytes = get("intake.max_blob_bytes")?;
        let max_tree_files = get("intake.max_tree_files")?;
        let repository = self.repository_settings()?;
        let github = self.github_settings()?;
        let sandbox = self.sandbox_settings(&data_dir)?;
        let agents_on = self.agents_on(&agents, &generator, &skeptic)?;
        // Each value was checked by its `Allowed` rule above; the fallbacks are unreachable.
        Ok(Config {
            data_dir: PathBuf::from(data_dir),
            database_url: Some(database_url).filter(|u| !u.is_empty()),
            database_connections: database_connections.parse().unwrap_or(u32::MAX),
            color: color_choice(&color),
            log,
            dependencies: dependencies.enabled,
            max_lockfile_bytes: dependencies.max_lockfile_bytes,
            informational: dependencies.informational,
            dev_dependencies: dependencies.dev,
            redis_url,
            queue_prefix,
            listen: socket_addr(&listen),
            metrics_listen: (!metrics_listen.is_empty()).then(|| socket_addr(&metrics_listen)),
            worker_concurrency: admission.worker_concurrency,
            max_running_reviews: admission.max_running_reviews,
            max_queued_reviews: admission.max_queued_reviews,
            max_queued_questions: admission.max_queued_questions,
            max_batch_reviews: admission.max_batch_reviews,
            max_deadline_seconds: admission.max_deadline_seconds,
            http,
            sandbox,
            lease: std::time::Duration::from_secs(lease.parse().unwrap_or(20)),
            requeue_after: std::time::Duration::from_secs(requeue.parse().unwrap_or(20)),
            agents: agents_on,
            agents_off: agents == "off",
            fix_attempts: if fixes == "off" {
                0
            } else {
                fix_attempts.parse().unwrap_or(2)
            },
            fixes: fixes != "off",
            scout_intent: scout_intent != "off",
            tool_analyzers,
            scout,
            ignore,
            log_dir: (!log_dir.is_empty()).then(|| PathBuf::from(log_dir)),
            hmem_max_state_bytes,
            hmem_query_tokens,
            markovian,
            autofix: autofix == "on",
            autofix_timeout_secs,
            suite_timeout_secs,
            autofix_generator: (!autofix_generator.is_empty()).then_some(autofix_generator),
            guardrail: guardrail == "on",
            generator,
            skeptic,
            guardrail_model,
            second_reviewer,
            model_timeout: std::time::Duration::from_secs(model_timeout.parse().unwrap_or(120)),
            step_deadline: std::time::Duration::from_secs(step_deadline.parse().unwrap_or(3600)),
            repository,
            max_blob_bytes: max_blob_bytes.parse().unwrap_or(64 << 20),
            max_tree_files: max_tree_files.parse().unwrap_or(300_000),
            github,
        })
    }

    /// The `dependencies.*` settings.
    fn dependency_settings(&self) -> Result<DependencySettings, ConfigError> {
        let enabled = self.checked("dependencies.enabled")?;
        let max_bytes = self.checked("dependencies.max_file_bytes")?;
        let informational = self.checked("dependencies.informational")?;
        let dev = self.checked("dependencies.dev")?;
        Ok(DependencySettings {
            enabled: matches!(enabled.as_str(), "on" | "true" | "yes" | "1"),
            // Checked by its `Allowed` rule; the fallback is unreachable.
            max_lockfile_bytes: max_bytes.parse().unwrap_or(u64::MAX),
            informational: if informational == "ignore" {
                Informational::Ignore
            } else {
                Informational::Report
            },
            dev: dev == "report",
        })
    }

    /// The worker's concurrency and the admission caps. Each value was checked by its
    /// `Allowed` rule; the fallbacks are unreachable (a count past the type's range saturates).
    fn admission_limits(&self) -> Result<AdmissionLimits, ConfigError> {
        let get = |key: &'static str| self.checked(key);
        let concurrency = get("worker_concurrency")?;
        let max_running = get("max_running_reviews")?;
        let max_queued = get("max_queued_reviews")?;
        let max_batch = get("max_batch_reviews")?;
        let max_deadline = get("max_deadline_seconds")?;
        let max_questions = get("max_queued_questions")?;
        let count = |s: &str| s.parse::<u64>().unwrap_or(1).max(1);
        Ok(AdmissionLimits {
            worker_concurrency: concurrency.parse().unwrap_or(8),
            max_running_reviews: max_running.parse().unwrap_or(64),
            max_queued_reviews: i64::try_from(count(&max_queued)).unwrap_or(i64::MAX),
            max_queued_questions: i64::try_from(count(&max_questions)).unwrap_or(i64::MAX),
            max_batch_reviews: usize::try_from(count(&max_batch)).unwrap_or(usize::MAX),
            max_deadline_seconds: count(&max_deadline),
        })
    }

    /// The Markovian thinking settings (the fallbacks are unreachable: each was checked).
    fn markovian_settings(&self) -> Result<MarkovianSettings, ConfigError> {
        Ok(MarkovianSettings {
            on: self.checked("markovian")? == "on",
            threshold_tokens: self.checked("markovian_threshold")?.parse().unwrap_or(8000),
            step_unit: self.checked("markovian_step_unit")?,
            carry_tokens: self
                .checked("markovian_carry_tokens")?
                .parse()
                .unwrap_or(800),
        })
    }

    /// The `http.*` limits of the API server. Each value was checked by its `Allowed` rule;
    /// the fallbacks are unreachable (a count past the type's range saturates).
    fn http_settings(&self) -> Result<HttpSettings, ConfigError> {
        let count = |key: &'static str| -> Result<u64, ConfigError> {
            Ok(self.checked(key)?.parse::<u64>().unwrap_or(1).max(1))
        };
        let size = |key: &'static str| -> Result<usize, ConfigError> {
            Ok(usize::try_from(count(key)?).unwrap_or(usize::MAX))
        };
        let secs = |key: &'static str| -> Result<std::time::Duration, ConfigError> {
            Ok(std::time::Duration::from_secs(count(key)?))
        };
        let nonzero = |key: &'static str| -> Result<std::num::NonZeroU32, ConfigError> {
            Ok(
                std::num::NonZeroU32::new(u32::try_from(count(key)?).unwrap_or(u32::MAX))
                    .unwrap_or(std::num::NonZeroU32::MIN),
            )
        };
        Ok(HttpSettings {
            header_timeout: secs("http.header_timeout_seconds")?,
            body_timeout: secs("http.body_timeout_seconds")?,
            max_body_bytes: size("http.max_body_bytes")?,
            max_connections: size("http.max_connections")?,
            max_connections_per_address: size("http.max_connections_per_address")?,
            unverified_body_bytes: size("http.unverified_body_bytes")?,
            rate_per_second: nonzero("http.rate_per_second")?,
            rate_burst: nonzero("http.rate_burst")?,
        })
    }

    /// The model endpoint of `role` (`models.ROLE.*`).
    fn model(&self, role: &'static str) -> Result<ModelSettings, ConfigError> {
        let key = |k: &str| -> &'static str {
            SETTINGS
                .iter()
                .find(|s| s.key == format!("models.{role}.{k}"))
                .map_or("", |s| s.key)
        };
        Ok(ModelSettings {
            base_url: self.checked(key("base_url"))?,
            model: self.checked(key("model"))?,
            api_key: self.checked(key("api_key"))?,
        })
    }

    /// The generator's endpoint: in `nvidia` mode NVIDIA's hosted API, which a base URL set
    /// to anything else contradicts.
    fn generator(&self) -> Result<ModelSettings, ConfigError> {
        let mut generator = self.model("generator")?;
        if self.checked("models.generator.mode")? == "nvidia" {
            match self.values.get("models.generator.base_url") {
                Some((url, from)) if url.trim_end_matches('/') != settings::NVIDIA_API => {
                    return Err(ConfigError {
                        source_name: from.clone(),
                        key: "models.generator.base_url".into(),
                        message: format!(
                            "is {url:?} while PROVEN_GENERATOR_MODE=nvidia asks for NVIDIA's hosted API ({}): set one",
                            settings::NVIDIA_API
                        ),
                    });
                }
                _ => generator.base_url = settings::NVIDIA_API.to_string(),
            }
        }
        Ok(generator)
    }

    /// The second reviewer, when its base URL and model are both set (all three empty: none;
    /// one without the other is refused, naming the one missing).
    fn second_reviewer(&self) -> Result<Option<ModelSettings>, ConfigError> {
        let second = self.model("second_reviewer")?;
        match (second.base_url.is_empty(), second.model.is_empty()) {
            (true, true) if second.api_key.is_empty() => Ok(None),
            (false, false) => Ok(Some(second)),
            (base_missing, _) => {
                let (missing, set) = if base_missing {
                    ("models.second_reviewer.base_url", "its model or key")
                } else {
                    ("models.second_reviewer.model", "its base URL")
                };
                Err(ConfigError {
                    source_name: settings::setting(missing).env.to_string(),
                    key: missing.into(),
                    message: format!(
                        "is empty while {set} is set; allowed: {} (or leave all three empty for one reviewer)",
                        settings::setting(missing).allowed.describe()
                    ),
                })
            }
        }
    }

    /// Whether the model agents run (`agents`: on, off, or auto: on once an endpoint is
    /// configured). With them on, a Skeptic of the generator's model family is refused: it
    /// shares the generator's blind spots.
    fn agents_on(
        &self,
        agents: &str,
        generator: &ModelSettings,
        skeptic: &ModelSettings,
    ) -> Result<bool, ConfigError> {
        let default_url = settings::setting("models.generator.base_url").default_value();
        let agents_on = match agents {
            "on" => true,
            "off" => false,
            _ => !generator.api_key.is_empty() || generator.base_url != default_url,
        };
        if agents_on && model_family(&generator.model) == model_family(&skeptic.model) {
            let source = self.values.get("models.skeptic.model").map_or_else(
                || "PROVEN_SKEPTIC_MODEL".to_string(),
                |(_, origin)| origin.clone(),
            );
            return Err(ConfigError {
                source_name: source,
                key: "models.skeptic.model".into(),
                message: format!(
                    "{:?} is of the generator's model family ({:?}, from {:?}); allowed: a model of any other family",
                    skeptic.model,
                    model_family(&generator.model),
                    generator.model
                ),
            });
        }
        Ok(agents_on)
    }

    /// Scout's plans per change class, its path rules, prose suffixes and the classes a
    /// second reviewer sees. Each value was checked by its `Allowed` rule, so the parses
    /// cannot fail.
    fn scout_settings(&self) -> Result<ScoutSettings, ConfigError> {
        let mut plans = Vec::new();
        for (kind, key) in PLAN_KINDS.into_iter().zip(scout::PLAN_KEYS) {
            let raw = self.checked(key)?;
            plans.push((
                kind,
                PlanSpec::parse(&raw).unwrap_or(PlanSpec::full(ReviewClass::Security)),
            ));
        }
        Ok(ScoutSettings {
            plans,
            path_rules: scout::parse_path_rules(&self.checked("path_rules")?).unwrap_or_default(),
            prose_suffixes: scout::parse_prose_suffixes(&self.checked("prose_suffixes")?)
                .unwrap_or_default(),
            second_reviewer_classes: settings::list_entries(
                &self.checked("second_reviewer_classes")?,
            )
            .filter_map(ReviewClass::parse)
            .collect(),
            tool_analyzer_classes: settings::list_entries(&self.checked("tool_analyzer_classes")?)
                .filter_map(ReviewClass::parse)
                .collect(),
        })
    }

    /// The GitHub App's settings (`github.*`).
    fn github_settings(&self) -> Result<GitHubSettings, ConfigError> {
        let text = |k: &'static str| self.checked(k);
        Ok(GitHubSettings {
            app_id: text("github.app_id")?.parse().ok(),
            private_key: Some(text("github.private_key")?)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            webhook_secret: text("github.webhook_secret")?,
            api_url: text("github.api_url")?,
            check_name: text("github.check_name")?,
            findings_conclusion: text("github.findings_conclusion")?,
            advisory_conclusion: text("github.advisory_conclusion")?,
            not_reached_conclusion: text("github.not_reached_conclusion")?,
            sarif: text("github.sarif")? == "on",
            publish_lease_secs: text("github.publish_lease_seconds")?.parse().unwrap_or(120),
        })
    }

    /// The sandbox's settings (`sandbox.*`); its cache lives under `data_dir` unless set.
    fn sandbox_settings(&self, data_dir: &str) -> Result<SandboxSettings, ConfigError> {
        let text = |k: &'static str| self.checked(k);
        let number = |k: &'static str| -> Result<u64, ConfigError> {
            Ok(text(k)?.parse::<u64>().unwrap_or(u64::MAX))
        };
        Ok(SandboxSettings {
            docker_host: text("sandbox.docker_host")?,
            images: settings::list_entries(&text("sandbox.images")?)
                .filter_map(|e| e.split_once('='))
                .map(|(l, i)| (l.to_string(), i.to_string()))
                .collect(),
            registries: settings::list_entries(&text("sandbox.registries")?)
                .map(str::to_string)
                .collect(),
            pip_index_url: Some(text("sandbox.pip_index_url")?).filter(|u| !u.is_empty()),
            npm_registry: Some(text("sandbox.npm_registry")?).filter(|u| !u.is_empty()),
            goproxy: text("sandbox.goproxy")?,
            gosumdb: text("sandbox.gosumdb")?,
            scratch_bytes: number("sandbox.scratch_bytes")?,
            rust_scratch_bytes: number("sandbox.rust_scratch_bytes")?,
            memory_bytes: number("sandbox.memory_bytes")?,
            suite_memory_bytes: number("sandbox.suite_memory_bytes")?,
            suite_cpus: number("sandbox.suite_cpus")?,
            suite_test_timeout_seconds: number("sandbox.suite_test_timeout_seconds")?,
            concurrency: usize::try_from(number("sandbox.concurrency")?).unwrap_or(usize::MAX),
            pool_size: usize::try_from(number("sandbox.pool_size")?).unwrap_or(usize::MAX),
            pool_languages: settings::list_entries(&text("sandbox.pool_languages")?)
                .map(str::to_string)
                .collect(),
            prepare_timeout: std::time::Duration::from_secs(number(
                "sandbox.prepare_timeout_seconds",
            )?),
            prepare_max_bytes: number("sandbox.prepare_max_bytes")?,
            cache_dir: match text("sandbox.cache_dir")? {
                dir if dir.is_empty() => PathBuf::from(data_dir).join("sandbox-cache"),
                dir => PathBuf::from(dir),
            },
            cache_max_bytes: number("sandbox.cache_max_bytes")?,
        })
    }

    /// The `repository.*` settings; each raw value was checked by its `Allowed` rule, so
    /// the parses below cannot fail (their fallbacks are unreachable).
    fn repository_settings(&self) -> Result<RepositorySettings, ConfigError> {
        let get = |key: &'static str| self.checked(key);
        let seconds = |key: &'static str| -> Result<std::time::Duration, ConfigError> {
            Ok(std::time::Duration::from_secs(
                get(key)?.parse().unwrap_or(60),
            ))
        };
        let file = |key: &'static str| -> Result<Option<PathBuf>, ConfigError> {
            Ok(Some(get(key)?).filter(|v| !v.is_empty()).map(PathBuf::from))
        };
        let hosts = get("repository.hosts")?;
        let roots = get("repository.roots")?;
        let nets = get("repository.private_nets")?;
        let credentials = get("repository.credentials")?;
        Ok(RepositorySettings {
            hosts: list_entries(&hosts)
                .filter_map(|e| parse_host_entry(e).ok())
                .collect(),
            roots: list_entries(&roots).map(PathBuf::from).collect(),
            private_nets: list_entries(&nets).filter_map(parse_net).collect(),
            credentials: list_entries(&credentials)
                .filter_map(|e| parse_credential_entry(e).ok())
                .map(|(host, port, user, secret)| RepoCredential {
                    host,
                    port,
                    user,
                    secret,
                })
                .collect(),
            ca_file: file("repository.ca_file")?,
            ssh_key: file("repository.ssh_key")?,
            ssh_known_hosts: file("repository.ssh_known_hosts")?,
            connect_timeout: seconds("repository.connect_timeout_seconds")?,
            read_timeout: seconds("repository.read_timeout_seconds")?,
            fetch_timeout: seconds("repository.fetch_timeout_seconds")?,
            max_fetch_bytes: get("repository.max_fetch_bytes")?
                .parse()
                .unwrap_or(u64::MAX),
        })
    }
}

/// The known name nearest to a misspelt one (normalised Levenshtein over lower case).
fn nearest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> &'a str {
    let name = name.to_ascii_lowercase();
    known
        .map(|k| {
            (
                strsim::normalized_levenshtein(&name, &k.to_ascii_lowercase()),
                k,
            )
        })
        .fold(
            (f64::MIN, ""),
            |best, c| if c.0 > best.0 { c } else { best },
        )
        .1
}

fn flatten(
    prefix: &str,
    map: &serde_json::Map<String, serde_json::Value>,
    out: &mut Vec<(String, String)>,
) -> Result<(), (String, String)> {
    for (k, v) in map {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            serde_json::Value::Object(inner) => flatten(&key, inner, out)?,
            // A YAML list of plain values is the comma-separated list a list setting reads
            // from the environment (`prose_suffixes: [".md", ".txt"]`); a list of mappings
            // (`ignore`) is kept as JSON for its own reader.
            serde_json::Value::Array(items)
                if items.iter().all(|i| !i.is_object() && !i.is_array()) =>
            {
                let mut entries = Vec::new();
                for item in items {
                    let entry = scalar(item);
                    if entry.contains(',') {
                        return Err((
                            key,
                            format!(
                                "the list entry {entry:?} holds a comma, which separates entries"
                            ),
                        ));
                    }
                    entries.push(entry);
                }
                out.push((key, entries.join(", ")));
            }
            other => out.push((key, scalar(other))),
        }
    }
    Ok(())
}

/// A YAML value as the text a setting reads.
fn scalar(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Bool(b) => if *b { "on" } else { "off" }.into(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The `dependencies.*` settings, validated (fields of [`Config`]).
struct DependencySettings {
    enabled: bool,
    max_lockfile_bytes: u64,
    informational: Informational,
    dev: bool,
}

/// The worker's concurrency and the admission caps, validated (fields of [`Config`]).
struct AdmissionLimits {
    worker_concurrency: usize,
    max_running_reviews: i64,
    max_queued_reviews: i64,
    max_queued_questions: i64,
    max_batch_reviews: usize,
    max_deadline_seconds: u64,
}

/// A listen address (checked by its `Allowed` rule: the fallback is unreachable).
fn socket_addr(s: &str) -> std::net::SocketAddr {
    s.parse()
        .unwrap_or(std::net::SocketAddr::from(([127, 0, 0, 1], 8080)))
}

fn color_choice(color: &str) -> ColorChoice {
    match color {
        "always" => ColorChoice::Always,
        "never" => ColorChoice::Never,
        _ => ColorChoice::Auto,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_resolve() {
        let c = Layers::from_env(env(&[]))
            .expect("env")
            .resolve()
            .expect("defaults are valid");
        assert!(c.dependencies);
        assert_eq!(c.color, ColorChoice::Auto);
        assert_eq!(c.informational, Informational::Report);
        assert!(c.data_dir.ends_with("proven"));
        assert_eq!(c.database_url, None);
        assert_eq!(c.database_connections, 4);
        // The sandbox's cache is the data directory's, never a temporary directory every
        // process on the host shares.
        assert_eq!(c.sandbox.cache_dir, c.data_dir.join("sandbox-cache"));
        assert_eq!(c.sandbox.cache_max_bytes, 20 << 30);
        let moved = Layers::from_env(env(&[("PROVEN_DATA_DIR", "/srv/proven")]))
            .expect("env")
            .resolve()
            .expect("valid");
        assert_eq!(
            moved.sandbox.cache_dir,
            std::path::Path::new("/srv/proven/sandbox-cache")
        );
    }

    #[test]
    fn the_database_connections_are_a_positive_number() {
        let c = Layers::from_env(env(&[("PROVEN_DATABASE_CONNECTIONS", "12")]))
            .expect("env")
            .resolve()
            .expect("valid");
        assert_eq!(c.database_connections, 12);
        let e = Layers::from_env(env(&[("PROVEN_DATABASE_CONNECTIONS", "0")]))
            .expect("env")
            .resolve()
            .expect_err("no connection at all");
        assert_eq!(e.key, "database_connections");
        assert!(
            e.to_string()
                .starts_with("PROVEN_DATABASE_CONNECTIONS: \"0\""),
            "{e}"
        );
    }

    #[test]
    fn a_wrong_value_names_the_key_and_the_values_allowed() {
        let e = Layers::from_env(env(&[("PROVEN_COLOR", "blue")]))
            .expect("env")
            .resolve()
            .expect_err("bad");
        assert_eq!(e.key, "color");
        assert_eq!(
            e.to_string(),
            "PROVEN_COLOR: \"blue\" is not allowed: expected one of auto, always, never"
        );
    }

    #[test]
    fn toolchain_images_are_accepted_and_a_malformed_version_is_refused_by_name() {
        let images = "rust1.96=r196,go1.27.1=g127,python3.8=p38,node22=n22";
        let settings = Layers::from_env(env(&[("PROVEN_SANDBOX_IMAGES", images)]))
            .expect("env")
            .resolve()
            .expect("valid");
        assert_eq!(settings.sandbox.images.len(), 4);
        for bad in ["rust1=r", "go1.x=g", "rustc1.96=r"] {
            let e = Layers::from_env(env(&[("PROVEN_SANDBOX_IMAGES", bad)]))
                .expect("env")
                .resolve()
                .expect_err(bad);
            assert_eq!(e.key, "sandbox.images", "{bad}");
            assert!(e.to_string().contains("rustX.Y or goX.Y"), "{e}");
        }
    }

    #[test]
    fn unknown_settings_are_refused_naming_the_nearest_known() {
        let e = Layers::from_env(env(&[("PROVEN_COLOUR", "never")])).expect_err("typo");
        assert_eq!(
            e.to_string(),
            "PROVEN_COLOUR: unknown setting; the nearest known is PROVEN_COLOR (every setting: `proven config reference`)"
        );
        let e = Layers::default()
            .with_yaml("fix_attempt: 1\n", "proven.yaml")
            .expect_err("typo");
        assert!(
            e.message.starts_with(
                "unknown key; the nearest known is fix_attempts (allowed in proven.yaml: "
            ),
            "{e}"
        );
    }

    /// The seeds' own names: `fixes: off` and `fix_attempts` in proven.yaml, `scout_intent`,
    /// `PROVEN_LOG_DIR`.
    #[test]
    fn the_seeds_setting_names_are_read() {
        let c = Layers::default()
            .with_yaml(
                "fixes: off\nfix_attempts: 3\nscout_intent: off\n",
                "proven.yaml",
            )
            .and_then(|l| l.resolve())
            .expect("valid");
        assert_eq!((c.fixes, c.fix_attempts, c.scout_intent), (false, 0, false));
        let c = Layers::default()
            .with_yaml("fix_attempts: 3\n", "proven.yaml")
            .and_then(|l| l.resolve())
            .expect("valid");
        assert_eq!((c.fixes, c.fix_attempts, c.scout_intent), (true, 3, true));
        let c = Layers::from_env(env(&[("PROVEN_LOG_DIR", "/var/log/proven")]))
            .and_then(|l| l.resolve())
            .expect("valid");
        assert_eq!(
            c.log_dir.as_deref(),
            Some(std::path::Path::new("/var/log/proven"))
        );
        let e = Layers::default()
            .with_yaml("scout_intent: maybe\n", "proven.yaml")
            .and_then(|l| l.resolve())
            .expect_err("a wrong value");
        assert_eq!(e.source_name, "proven.yaml key scout_intent");
        assert!(e.message.contains("on, off"), "{e}");
    }

    #[test]
    fn layers_stack_env_over_yaml_over_default_and_flags_over_all() {
        let yaml = "dependencies:\n  informational: ignore\n  dev: ignore\n";
        let layers = Layers::from_env(env(&[("PROVEN_DEV_DEPENDENCIES", "report")]))
            .and_then(|l| l.with_yaml(yaml, "proven.yaml"))
            .expect("layers");
        let c = layers.clone().resolve().expect("valid");
        assert_eq!(c.informational, Informational::Ignore, "yaml over default");
        assert!(c.dev_dependencies, "environment over yaml");
        let c = layers
            .with_flag("dependencies.enabled", "off", "--no-deps")
            .resolve()
            .expect("valid");
        assert!(!c.dependencies);
    }

    #[test]
    fn yaml_errors_name_the_key() {
        let e = Layers::default()
            .with_yaml("dependencies:\n  informational: maybe\n", "proven.yaml")
            .expect("read");
        let e = e.resolve().expect_err("bad value");
        assert_eq!(e.source_name, "proven.yaml key dependencies.informational");
        assert!(e.message.contains("report, ignore"));
        let e = Layers::default()
            .with_yaml("database_url: postgres://x\n", "proven.yaml")
            .expect_err("not a repo key");
        assert!(e.message.contains("operator's setting"), "{e}");
        let e = Layers::default()
            .with_yaml("[1, 2]", "proven.yaml")
            .expect_err("not a map");
        assert_eq!(e.message, "must be a mapping of settings");
        assert!(Layers::default().with_yaml("a: [", "proven.yaml").is_err());
    }

    #[test]
    fn families_come_from_the_model_name() {
        assert_eq!(
            model_family("nvidia/nemotron-3.5-super-vl-120b-a12b"),
            "nemotron"
        );
        assert_eq!(model_family("meta/llama-3.1-70b-instruct"), "llama");
        assert_eq!(model_family("gpt-4o-mini"), "gpt");
        assert_eq!(model_family("qwen2.5-coder:7b"), "qwen");
    }

    #[test]
    fn a_second_reviewer_needs_its_base_url_and_model() {
        let none = Layers::from_env(env(&[]))
            .expect("env")
            .resolve()
            .expect("ok");
        assert!(none.second_reviewer.is_none(), "one reviewer by default");
        let e = Layers::from_env(env(&[(
            "PROVEN_SECOND_REVIEWER_BASE_URL",
            "http://127.0.0.1:9/v1",
        )]))
        .expect("env")
        .resolve()
        .expect_err("no model");
        assert_eq!(e.key, "models.second_reviewer.model");
        assert_eq!(e.source_name, "PROVEN_SECOND_REVIEWER_MODEL");
        let e = Layers::from_env(env(&[("PROVEN_SECOND_REVIEWER_BASE_URL", "ftp://x")]))
            .expect("env")
            .resolve()
            .expect_err("not http");
        assert_eq!(e.key, "models.second_reviewer.base_url");
        let two = Layers::from_env(env(&[
            ("PROVEN_SECOND_REVIEWER_BASE_URL", "http://127.0.0.1:9/v1"),
            ("PROVEN_SECOND_REVIEWER_MODEL", "mistralai/mistral-large"),
        ]))
        .expect("env")
        .resolve()
        .expect("two reviewers");
        assert_eq!(
            two.second_reviewer.map(|m| m.model).as_deref(),
            Some("mistralai/mistral-large")
        );
    }

    #[test]
    fn a_skeptic_of_the_generators_family_is_refused_naming_the_key() {
        let e = Layers::from_env(env(&[
            ("PROVEN_AGENTS", "on"),
            ("PROVEN_GENERATOR_MODEL", "nvidia/nemotron-nano-9b"),
        ]))
        .expect("env")
        .resolve()
        .expect_err("same family");
        assert_eq!(e.key, "models.skeptic.model");
        assert_eq!(e.source_name, "PROVEN_SKEPTIC_MODEL");
        assert!(e.message.contains("\"nemotron\""), "{e}");
        let ok = Layers::from_env(env(&[
            ("PROVEN_AGENTS", "on"),
            ("PROVEN_GENERATOR_MODEL", "meta/llama-3.3-70b"),
        ]))
        .expect("env")
        .resolve()
        .expect("different families");
        assert!(ok.agents);
    }

    #[test]
    fn agents_are_on_once_an_endpoint_is_configured_and_keys_never_print() {
        let off = Layers::from_env(env(&[]))
            .expect("env")
            .resolve()
            .expect("defaults");
        assert!(
            !off.agents,
            "no key and the default URL: the agents are not configured"
        );
        let on = Layers::from_env(env(&[("PROVEN_GENERATOR_API_KEY", "nvapi-secret")]))
            .expect("env")
            .resolve()
            .expect("key");
        assert!(on.agents);
        assert!(!format!("{:?}", on.generator).contains("nvapi-secret"));
        let local = Layers::from_env(env(&[(
            "PROVEN_GENERATOR_BASE_URL",
            "http://127.0.0.1:8000/v1",
        )]))
        .expect("env")
        .resolve()
        .expect("local");
        assert!(local.agents);
        let e = Layers::from_env(env(&[("PROVEN_SKEPTIC_BASE_URL", "ftp://x")]))
            .expect("env")
            .resolve()
            .expect_err("url");
        assert_eq!(e.source_name, "PROVEN_SKEPTIC_BASE_URL");
    }

    #[test]
    fn a_repository_may_lower_a_limit_but_never_raise_it() {
        let yaml = "intake:\n  max_blob_bytes: 1000\n  max_tree_files: 900000\n";
        let c = Layers::from_env(env(&[]))
            .and_then(|l| l.with_yaml(yaml, "proven.yaml"))
            .and_then(|l| l.resolve())
            .expect("valid");
        assert_eq!(c.max_blob_bytes, 1000, "lowered below the default");
        assert_eq!(c.max_tree_files, 300_000, "never raised above the default");
        let c = Layers::from_env(env(&[("PROVEN_MAX_BLOB_BYTES", "500")]))
            .and_then(|l| l.with_yaml(yaml, "proven.yaml"))
            .and_then(|l| l.resolve())
            .expect("valid");
        assert_eq!(c.max_blob_bytes, 500, "the operator's value is the ceiling");
        let c = Layers::from_env(env(&[("PROVEN_MAX_LOCKFILE_BYTES", "4096")]))
            .and_then(|l| {
                l.with_yaml(
                    "dependencies:\n  max_file_bytes: 99999999999\n",
                    "proven.yaml",
                )
            })
            .and_then(|l| l.resolve())
            .expect("valid");
        assert_eq!(c.max_lockfile_bytes, 4096);
        let e = Layers::from_env(env(&[]))
            .and_then(|l| l.with_yaml("intake:\n  max_tree_files: lots\n", "proven.yaml"))
            .and_then(|l| l.resolve())
            .expect_err("not a number");
        assert_eq!(e.source_name, "proven.yaml key intake.max_tree_files");
        let e = Layers::default()
            .with_yaml("repository:\n  hosts: evil.example\n", "proven.yaml")
            .expect_err("an operator's setting");
        assert!(e.message.contains("operator's setting"), "{e}");
    }

    #[test]
    fn a_raised_limit_is_a_warning_naming_its_key_and_an_operator_limit_is_refused_by_name() {
        let layers = Layers::from_env(env(&[]))
            .and_then(|l| {
                l.with_yaml(
                    "intake:\n  max_blob_bytes: 1000\n  max_tree_files: 900000\n",
                    "proven.yaml",
                )
            })
            .expect("valid");
        assert_eq!(layers.warnings().len(), 1, "{:?}", layers.warnings());
        let warning = &layers.warnings()[0];
        for needle in [
            "intake.max_tree_files",
            "900000",
            "300000",
            "PROVEN_MAX_TREE_FILES",
        ] {
            assert!(warning.contains(needle), "{needle} in {warning}");
        }
        assert_eq!(layers.resolve().expect("valid").max_tree_files, 300_000);
        // An operator's limit the repository may not touch at all: refused, naming it.
        let e = Layers::default()
            .with_yaml("max_running_reviews: 1000\n", "proven.yaml")
            .expect_err("an operator's limit");
        assert_eq!(e.key, "max_running_reviews");
        assert!(
            e.message.contains("operator's setting")
                && e.message.contains("PROVEN_MAX_RUNNING_REVIEWS"),
            "{e}"
        );
    }

    #[test]
    fn the_design_documents_setting_names_are_read() {
        let c = Layers::from_env(env(&[
            ("PROVEN_SECOND_REVIEWER_KEY", "sk-second"),
            (
                "PROVEN_SECOND_REVIEWER_BASE_URL",
                "https://second.example/v1",
            ),
            ("PROVEN_SECOND_REVIEWER_MODEL", "org/model"),
            ("PROVEN_GENERATOR_MODE", "nvidia"),
        ]))
        .and_then(|l| l.resolve())
        .expect("the seeds' names are settings");
        assert_eq!(
            c.second_reviewer.expect("a second reviewer").api_key,
            "sk-second"
        );
        assert_eq!(c.generator.base_url, settings::NVIDIA_API);
        let e = Layers::from_env(env(&[
            ("PROVEN_SECOND_REVIEWER_KEY", "a"),
            ("PROVEN_SECOND_REVIEWER_API_KEY", "b"),
        ]))
        .expect_err("two values for one setting");
        assert!(e.message.contains("PROVEN_SECOND_REVIEWER_API_KEY"), "{e}");
        assert!(
            !e.message.contains("\"a\"") && !e.message.contains("\"b\""),
            "no secret shown: {e}"
        );
        let e = Layers::from_env(env(&[
            ("PROVEN_GENERATOR_MODE", "nvidia"),
            ("PROVEN_GENERATOR_BASE_URL", "https://elsewhere.example/v1"),
        ]))
        .and_then(|l| l.resolve())
        .expect_err("a mode and a different URL");
        assert_eq!(e.source_name, "PROVEN_GENERATOR_BASE_URL");
        let e = Layers::from_env(env(&[("PROVEN_GENERATOR_MODE", "nightly")]))
            .and_then(|l| l.resolve())
            .expect_err("not a mode");
        assert!(e.message.contains("nvidia"), "{e}");
    }

    #[test]
    fn a_secret_is_read_from_the_file_its_file_variable_names() {
        let dir = std::env::temp_dir().join(format!("proven-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("generator-api-key");
        std::fs::write(&file, "sk-from-file\n").expect("write");
        let path = file.display().to_string();
        let c = Layers::from_env(env(&[("PROVEN_GENERATOR_API_KEY_FILE", path.as_str())]))
            .and_then(|l| l.resolve())
            .expect("a key from a file");
        assert_eq!(c.generator.api_key, "sk-from-file");
        let e = Layers::from_env(env(&[(
            "PROVEN_SKEPTIC_API_KEY_FILE",
            "/nonexistent/proven/key",
        )]))
        .expect_err("a missing file");
        assert_eq!(e.source_name, "PROVEN_SKEPTIC_API_KEY_FILE");
        assert!(e.message.contains("/nonexistent/proven/key"), "{e}");
        // Only a secret is read from a file.
        let e =
            Layers::from_env(env(&[("PROVEN_LOG_FILE", path.as_str())])).expect_err("not a secret");
        assert!(e.message.starts_with("unknown setting"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_yaml_list_is_accepted_where_a_list_setting_is() {
        let c = Layers::default()
            .with_yaml("prose_suffixes: [\".md\", \".txt\"]\n", "proven.yaml")
            .and_then(|l| l.resolve())
            .expect("a YAML list of suffixes");
        let c2 = Layers::default()
            .with_yaml("prose_suffixes: .md, .txt\n", "proven.yaml")
            .and_then(|l| l.resolve())
            .expect("the same as text");
        assert_eq!(c.scout, c2.scout);
        let e = Layers::default()
            .with_yaml("prose_suffixes:\n  - .md\n  - .py\n", "proven.yaml")
            .and_then(|l| l.resolve())
            .expect_err("a source suffix");
        assert!(e.message.contains("\".py\""), "the entry is named: {e}");
        let e = Layers::default()
            .with_yaml("prose_suffixes: [\".md,.py\"]\n", "proven.yaml")
            .expect_err("a comma inside an entry");
        assert_eq!(e.key, "prose_suffixes");
    }

    #[test]
    fn repository_settings_parse_and_secrets_never_print() {
        let c = Layers::from_env(env(&[
            (
                "PROVEN_REPO_HOSTS",
                "git.internal:8443, Example.COM,[::1]:9,10.1.2.3",
            ),
            ("PROVEN_REPO_ROOTS", "/srv/git,/tmp"),
            ("PROVEN_REPO_PRIVATE_NETS", "10.0.0.0/8,::1,127.0.0.1"),
            (
                "PROVEN_REPO_CREDENTIALS",
                "git.internal:8443=ci:s3cr3t-token",
            ),
        ]))
        .and_then(|l| l.resolve())
        .expect("valid");
        let r = &c.repository;
        assert_eq!(
            r.hosts,
            vec![
                ("git.internal".to_string(), Some(8443)),
                ("example.com".to_string(), None),
                ("::1".to_string(), Some(9)),
                ("10.1.2.3".to_string(), None),
            ]
        );
        assert_eq!(r.roots.len(), 2);
        assert_eq!(r.private_nets.len(), 3);
        assert_eq!(r.credentials[0].user, "ci");
        assert!(!format!("{c:?}").contains("s3cr3t-token"));
        for (name, value) in [
            ("PROVEN_REPO_HOSTS", "bad host"),
            ("PROVEN_REPO_HOSTS", "example.com:http"),
            ("PROVEN_REPO_ROOTS", "relative/dir"),
            ("PROVEN_REPO_PRIVATE_NETS", "10.0.0.0/99"),
        ] {
            let e = Layers::from_env(env(&[(name, value)]))
                .and_then(|l| l.resolve())
                .expect_err(value);
            assert_eq!(e.source_name, name, "{e}");
        }
        let e = Layers::from_env(env(&[(
            "PROVEN_REPO_CREDENTIALS",
            "git.internal=s3cr3t-token",
        )]))
        .and_then(|l| l.resolve())
        .expect_err("no user");
        assert_eq!(e.key, "repository.credentials");
        assert!(!e.to_string().contains("s3cr3t-token"), "{e}");
    }

    #[test]
    fn byte_limits_must_be_positive_integers() {
        let e = Layers::from_env(env(&[("PROVEN_MAX_LOCKFILE_BYTES", "0")]))
            .expect("env")
            .resolve()
            .expect_err("zero");
        assert!(e.message.contains("positive integer"));
    }

    #[test]
    fn service_limits_have_defaults_take_the_environment_and_refuse_zero_by_name() {
        let c = Layers::from_env(env(&[]))
            .expect("env")
            .resolve()
            .expect("defaults");
        assert_eq!(
            (
                c.max_queued_reviews,
                c.max_batch_reviews,
                c.max_deadline_seconds
            ),
            (1000, 500, 86400)
        );
        assert_eq!(c.http.max_body_bytes, 2 * 1024 * 1024);
        assert_eq!(c.http.header_timeout, std::time::Duration::from_secs(10));
        let c = Layers::from_env(env(&[
            ("PROVEN_HTTP_RATE_PER_SECOND", "5"),
            ("PROVEN_HTTP_RATE_BURST", "99999999999"),
            ("PROVEN_MAX_BATCH_REVIEWS", "3"),
        ]))
        .expect("env")
        .resolve()
        .expect("valid");
        assert_eq!(c.http.rate_per_second.get(), 5);
        assert_eq!(c.http.rate_burst.get(), u32::MAX, "saturates");
        assert_eq!(c.max_batch_reviews, 3);
        let e = Layers::from_env(env(&[("PROVEN_HTTP_MAX_CONNECTIONS", "0")]))
            .expect("env")
            .resolve()
            .expect_err("zero connections");
        assert_eq!(e.key, "http.max_connections");
        assert_eq!(
            e.to_string(),
            "PROVEN_HTTP_MAX_CONNECTIONS: \"0\" is not allowed: expected a positive integer"
        );
    }
}
