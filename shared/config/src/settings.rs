//! The table of settings: every key, its environment variable, default, allowed values and
//! meaning. The reference in `docs/configuration.md` is generated from it.

use std::fmt::Write;

pub struct Setting {
    /// Key in `proven.yaml` (dotted for nesting) and in [`crate::Layers`].
    pub key: &'static str,
    pub env: &'static str,
    /// Default; `None` means computed (see [`Setting::default_value`]).
    pub default: Option<&'static str>,
    pub allowed: Allowed,
    /// Whether a repository's `proven.yaml` may set it (process settings such as the
    /// database are the operator's, never the repository's).
    pub repository: bool,
    pub doc: &'static str,
}

pub enum Allowed {
    OneOf(&'static [&'static str]),
    PositiveInteger,
    /// A `postgres://`, `postgresql://` or `sqlite:` URL, or empty.
    DatabaseUrl,
    Path,
    /// A `tracing` filter such as `warn` or `proven=debug`.
    LogFilter,
    /// A `redis://` or `rediss://` URL.
    RedisUrl,
    /// Letters, digits, `-`, `_`, `:`.
    Name,
    /// host:port.
    SocketAddr,
    SocketAddrOrEmpty,
    /// A model id: letters, digits, `-`, `_`, `:`, `.`, `/`.
    ModelId,
    /// An `http://` or `https://` URL.
    HttpUrl,
    /// An `http://` or `https://` URL, or empty (not connected).
    HttpUrlOrEmpty,
    /// A model id, or empty.
    ModelIdOrEmpty,
    /// Any text; never shown in messages.
    Secret,
    /// A positive integer that a repository's `proven.yaml` may lower, never raise: the
    /// operator's value (environment or default) is the ceiling.
    Limit,
}

impl Allowed {
    pub fn check(&self, raw: &str) -> Result<(), String> {
        match self {
            Allowed::OneOf(values) if values.contains(&raw) => Ok(()),
            Allowed::OneOf(values) => Err(format!("expected one of {}", values.join(", "))),
            Allowed::PositiveInteger => match raw.parse::<u64>() {
                Ok(n) if n > 0 => Ok(()),
                _ => Err("expected a positive integer".into()),
            },
            Allowed::DatabaseUrl => {
                if raw.is_empty()
                    || ["postgres://", "postgresql://", "sqlite:"]
                        .iter()
                        .any(|p| raw.starts_with(p))
                {
                    Ok(())
                } else {
                    Err("expected a postgres://, postgresql:// or sqlite: URL".into())
                }
            }
            Allowed::Path => {
                if raw.is_empty() {
                    Err("expected a directory path".into())
                } else {
                    Ok(())
                }
            }
            Allowed::RedisUrl => {
                if raw.starts_with("redis://") || raw.starts_with("rediss://") {
                    Ok(())
                } else {
                    Err("expected a redis:// or rediss:// URL".into())
                }
            }
            Allowed::Name => {
                if !raw.is_empty()
                    && raw
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_:".contains(&b))
                {
                    Ok(())
                } else {
                    Err("expected letters, digits, -, _ or :".into())
                }
            }
            Allowed::SocketAddr => match raw.parse::<std::net::SocketAddr>() {
                Ok(_) => Ok(()),
                Err(_) => Err("expected host:port, e.g. 127.0.0.1:8080".into()),
            },
            Allowed::SocketAddrOrEmpty => match raw.parse::<std::net::SocketAddr>() {
                Ok(_) => Ok(()),
                Err(_) if raw.is_empty() => Ok(()),
                Err(_) => Err("expected host:port, e.g. 127.0.0.1:9464, or empty".into()),
            },
            Allowed::HttpUrl => {
                if raw.starts_with("http://") || raw.starts_with("https://") {
                    Ok(())
                } else {
                    Err("expected an http:// or https:// URL".into())
                }
            }
            Allowed::Secret => Ok(()),
            Allowed::Limit => Allowed::PositiveInteger.check(raw),
            Allowed::HttpUrlOrEmpty | Allowed::ModelIdOrEmpty if raw.is_empty() => Ok(()),
            Allowed::HttpUrlOrEmpty => Allowed::HttpUrl.check(raw),
            Allowed::ModelIdOrEmpty => Allowed::ModelId.check(raw),
            Allowed::ModelId => {
                if !raw.is_empty()
                    && raw
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_:./".contains(&b))
                {
                    Ok(())
                } else {
                    Err("expected a model id (letters, digits, -, _, :, ., /)".into())
                }
            }
            Allowed::LogFilter => {
                let ok = raw.split(',').all(|part| {
                    let level = part.rsplit('=').next().unwrap_or(part);
                    matches!(level, "off" | "error" | "warn" | "info" | "debug" | "trace")
                });
                if ok {
                    Ok(())
                } else {
                    Err("expected a filter like warn or proven=debug,info".into())
                }
            }
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Allowed::OneOf(values) => values.join(", "),
            Allowed::PositiveInteger => "a positive integer".into(),
            Allowed::DatabaseUrl => "postgres://…, postgresql://… or sqlite:… URL".into(),
            Allowed::Path => "a directory".into(),
            Allowed::RedisUrl => "redis://… or rediss://… URL".into(),
            Allowed::Name => "letters, digits, -, _, :".into(),
            Allowed::SocketAddr => "host:port".into(),
            Allowed::SocketAddrOrEmpty => "host:port, or empty".into(),
            Allowed::HttpUrl => "http://… or https://… URL".into(),
            Allowed::HttpUrlOrEmpty => "http://… or https://… URL, or empty".into(),
            Allowed::ModelIdOrEmpty => "a model id, or empty".into(),
            Allowed::Secret => "a secret".into(),
            Allowed::Limit => {
                "a positive integer (`proven.yaml` may lower it, never raise it)".into()
            }
            Allowed::ModelId => "a model id".into(),
            Allowed::LogFilter => {
                "a tracing filter (off, error, warn, info, debug, trace; per target with =)".into()
            }
        }
    }
}

const ON_OFF: &[&str] = &["on", "off"];

pub static SETTINGS: &[Setting] = &[
    Setting {
        key: "data_dir",
        env: "PROVEN_DATA_DIR",
        default: None,
        allowed: Allowed::Path,
        repository: false,
        doc: "Where the embedded store (SQLite, `proven.db`) lives. Default: the user's data directory \
              (`~/.local/share/proven` on Linux).",
    },
    Setting {
        key: "database_url",
        env: "PROVEN_DATABASE_URL",
        default: Some(""),
        allowed: Allowed::DatabaseUrl,
        repository: false,
        doc: "Use this store instead of the embedded SQLite file: Postgres for a shared service.",
    },
    Setting {
        key: "color",
        env: "PROVEN_COLOR",
        default: Some("auto"),
        allowed: Allowed::OneOf(&["auto", "always", "never"]),
        repository: false,
        doc: "Colour in text output. `auto` colours only a terminal (and honours NO_COLOR).",
    },
    Setting {
        key: "log",
        env: "PROVEN_LOG",
        default: Some("warn"),
        allowed: Allowed::LogFilter,
        repository: false,
        doc: "What Proven logs to standard error.",
    },
    Setting {
        key: "redis_url",
        env: "PROVEN_REDIS_URL",
        default: Some("redis://127.0.0.1:6379"),
        allowed: Allowed::RedisUrl,
        repository: false,
        doc: "The Redis that delivers jobs to workers (service mode: `proven serve`, `proven worker`).",
    },
    Setting {
        key: "queue_prefix",
        env: "PROVEN_QUEUE_PREFIX",
        default: Some("proven"),
        allowed: Allowed::Name,
        repository: false,
        doc: "Prefix of every Redis key Proven writes, so several deployments can share one Redis.",
    },
    Setting {
        key: "listen",
        env: "PROVEN_LISTEN",
        default: Some("127.0.0.1:8080"),
        allowed: Allowed::SocketAddr,
        repository: false,
        doc: "Where `proven serve` listens (HTTP API, /healthz, /readyz, /metrics).",
    },
    Setting {
        key: "metrics_listen",
        env: "PROVEN_METRICS_LISTEN",
        default: Some(""),
        allowed: Allowed::SocketAddrOrEmpty,
        repository: false,
        doc: "Where `proven worker` serves Prometheus /metrics; empty: not served.",
    },
    Setting {
        key: "worker_concurrency",
        env: "PROVEN_WORKER_CONCURRENCY",
        default: Some("8"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Steps a worker runs at once per queue family.",
    },
    Setting {
        key: "max_running_reviews",
        env: "PROVEN_MAX_RUNNING_REVIEWS",
        default: Some("64"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Reviews admitted at once across all tenants; the rest wait in the store, so the queues stay short.",
    },
    Setting {
        key: "lease_seconds",
        env: "PROVEN_LEASE_SECONDS",
        default: Some("20"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "How long a claimed step holds without renewal; a dead worker's steps are re-run after it \
              (plus the reconcile tick).",
    },
    Setting {
        key: "requeue_seconds",
        env: "PROVEN_REQUEUE_SECONDS",
        default: Some("20"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "A queued step whose job was pushed this long ago and never started is pushed again (the queue \
              may have lost it: a Redis restart or flush, or a worker killed after fetching it).",
    },
    Setting {
        key: "intake.max_blob_bytes",
        env: "PROVEN_MAX_BLOB_BYTES",
        default: Some("67108864"),
        allowed: Allowed::Limit,
        repository: true,
        doc: "Largest changed file intake reads (its size is read from the object header first); a \
              larger one is left out by name and the review says it did not see it.",
    },
    Setting {
        key: "intake.max_tree_files",
        env: "PROVEN_MAX_TREE_FILES",
        default: Some("300000"),
        allowed: Allowed::Limit,
        repository: true,
        doc: "Most files a reviewed commit's tree may hold; a larger tree fails the intake by name.",
    },
    Setting {
        key: "models.generator.base_url",
        env: "PROVEN_GENERATOR_BASE_URL",
        default: Some("https://integrate.api.nvidia.com/v1"),
        allowed: Allowed::HttpUrl,
        repository: false,
        doc: "OpenAI-compatible API of the Planner, the Prover and the Fixer.",
    },
    Setting {
        key: "models.generator.model",
        env: "PROVEN_GENERATOR_MODEL",
        default: Some("meta/llama-3.3-70b-instruct"),
        allowed: Allowed::ModelId,
        repository: false,
        doc: "Model id of the Planner, the Prover and the Fixer.",
    },
    Setting {
        key: "models.generator.api_key",
        env: "PROVEN_GENERATOR_API_KEY",
        default: Some(""),
        allowed: Allowed::Secret,
        repository: false,
        doc: "API key of the Planner, the Prover and the Fixer (a secret: never printed).",
    },
    Setting {
        key: "models.skeptic.base_url",
        env: "PROVEN_SKEPTIC_BASE_URL",
        default: Some("https://integrate.api.nvidia.com/v1"),
        allowed: Allowed::HttpUrl,
        repository: false,
        doc: "OpenAI-compatible API of the Skeptic (a different model family from the generator: Proven refuses the same family).",
    },
    Setting {
        key: "models.skeptic.model",
        env: "PROVEN_SKEPTIC_MODEL",
        default: Some("nvidia/nemotron-3.5-super-vl-120b-a12b"),
        allowed: Allowed::ModelId,
        repository: false,
        doc: "Model id of the Skeptic (a different model family from the generator: Proven refuses the same family).",
    },
    Setting {
        key: "models.skeptic.api_key",
        env: "PROVEN_SKEPTIC_API_KEY",
        default: Some(""),
        allowed: Allowed::Secret,
        repository: false,
        doc: "API key of the Skeptic (a different model family from the generator: Proven refuses the same family) (a secret: never printed).",
    },
    Setting {
        key: "models.guardrail.base_url",
        env: "PROVEN_GUARDRAIL_BASE_URL",
        default: Some("https://integrate.api.nvidia.com/v1"),
        allowed: Allowed::HttpUrl,
        repository: false,
        doc: "OpenAI-compatible API of the content-safety guardrail that checks every prompt and answer.",
    },
    Setting {
        key: "models.guardrail.model",
        env: "PROVEN_GUARDRAIL_MODEL",
        default: Some("nvidia/llama-3.1-nemoguard-8b-content-safety"),
        allowed: Allowed::ModelId,
        repository: false,
        doc: "Model id of the content-safety guardrail that checks every prompt and answer.",
    },
    Setting {
        key: "models.guardrail.api_key",
        env: "PROVEN_GUARDRAIL_API_KEY",
        default: Some(""),
        allowed: Allowed::Secret,
        repository: false,
        doc: "API key of the content-safety guardrail that checks every prompt and answer (a secret: never printed).",
    },
    Setting {
        key: "models.second_reviewer.base_url",
        env: "PROVEN_SECOND_REVIEWER_BASE_URL",
        default: Some(""),
        allowed: Allowed::HttpUrlOrEmpty,
        repository: false,
        doc: "OpenAI-compatible API of the second reviewer, which doubles the Planner independently; its verdicts \
              are shown beside the first reviewer's, never merged. Empty: one reviewer.",
    },
    Setting {
        key: "models.second_reviewer.model",
        env: "PROVEN_SECOND_REVIEWER_MODEL",
        default: Some(""),
        allowed: Allowed::ModelIdOrEmpty,
        repository: false,
        doc: "Model id of the second reviewer (required when its base URL is set).",
    },
    Setting {
        key: "models.second_reviewer.api_key",
        env: "PROVEN_SECOND_REVIEWER_API_KEY",
        default: Some(""),
        allowed: Allowed::Secret,
        repository: false,
        doc: "API key of the second reviewer (a secret: never printed).",
    },
    Setting {
        key: "agents",
        env: "PROVEN_AGENTS",
        default: Some("auto"),
        allowed: Allowed::OneOf(&["auto", "on", "off"]),
        repository: true,
        doc: "The model agents (Planner, Prover, Skeptic). auto: on when the generator has an API key or a \
              base URL other than the default.",
    },
    Setting {
        key: "autofix",
        env: "PROVEN_AUTOFIX",
        default: Some("off"),
        allowed: Allowed::OneOf(&["off", "on"]),
        repository: true,
        doc: "on: every proved fix applied at once to a scratch copy of the change, each finding's own test \
              and the package's tests run on it; the verdict is \"fixed automatically, waiting for a person\" \
              or \"rejected\". Nothing is ever committed.",
    },
    Setting {
        key: "fix_attempts",
        env: "PROVEN_FIX_ATTEMPTS",
        default: Some("2"),
        allowed: Allowed::OneOf(&["0", "1", "2", "3", "4", "5"]),
        repository: false,
        doc: "Tries the Fixer gets for each defect a test proved; a fix is shown only when the same test and \
              the package's tests pass with it. 0: no Fixer.",
    },
    Setting {
        key: "guardrail",
        env: "PROVEN_GUARDRAIL",
        default: Some("on"),
        allowed: Allowed::OneOf(&["on", "off"]),
        repository: false,
        doc: "Check every prompt and answer with the content-safety guardrail model.",
    },
    Setting {
        key: "models.timeout_seconds",
        env: "PROVEN_MODEL_TIMEOUT_SECONDS",
        default: Some("120"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Timeout of one model call.",
    },
    Setting {
        key: "dependencies.enabled",
        env: "PROVEN_DEPENDENCIES",
        default: Some("on"),
        allowed: Allowed::OneOf(ON_OFF),
        repository: true,
        doc: "Dependency evidence: match the packages a change brings in against the advisory tables.",
    },
    Setting {
        key: "dependencies.max_file_bytes",
        env: "PROVEN_MAX_LOCKFILE_BYTES",
        default: Some("67108864"),
        allowed: Allowed::Limit,
        repository: true,
        doc: "Largest lock file or manifest read; a larger one is named in the input errors.",
    },
    Setting {
        key: "dependencies.informational",
        env: "PROVEN_INFORMATIONAL",
        default: Some("report"),
        allowed: Allowed::OneOf(&["report", "ignore"]),
        repository: true,
        doc: "RustSec's informational advisories (unmaintained, unsound, notice): reported as findings of \
              their own kind, or ignored.",
    },
    Setting {
        key: "dependencies.dev",
        env: "PROVEN_DEV_DEPENDENCIES",
        default: Some("report"),
        allowed: Allowed::OneOf(&["report", "ignore"]),
        repository: true,
        doc: "Development-only dependencies (devDependencies, dev groups, test scope): reported or ignored.",
    },
];

pub(crate) fn setting(key: &str) -> &'static Setting {
    // Keys passed here are the constants of `Layers::resolve`; a miss is a programming
    // error caught by the defaults test.
    SETTINGS
        .iter()
        .find(|s| s.key == key)
        .unwrap_or(&SETTINGS[0])
}

impl Setting {
    pub fn default_value(&self) -> String {
        match self.default {
            Some(d) => d.to_string(),
            None => default_data_dir(),
        }
    }

    fn default_doc(&self) -> String {
        match self.default {
            Some("") => "(unset)".into(),
            Some(d) => format!("`{d}`"),
            None => "user data directory + `/proven`".into(),
        }
    }
}

fn default_data_dir() -> String {
    directories::BaseDirs::new()
        .map(|d| d.data_dir().join("proven"))
        .unwrap_or_else(|| std::path::PathBuf::from(".proven"))
        .display()
        .to_string()
}

/// The settings reference, as committed in `docs/configuration.md`.
pub fn reference_markdown() -> String {
    let mut s = String::from(
        "# Configuration reference\n\n\
         Generated from `shared/config/src/settings.rs` by `proven config reference`; a test fails when \
         this file is stale.\n\n\
         Layers, lowest first: defaults < `proven.yaml` (read from the **base** revision: a change never \
         chooses its own review) < `PROVEN_*` environment < command-line flags. A wrong value stops Proven \
         before any work with exit code 7, naming the key and the values allowed. Unknown `PROVEN_*` \
         variables and unknown `proven.yaml` keys are errors too.\n\n\
         | Key (`proven.yaml`) | Environment | Default | Allowed | Meaning |\n|---|---|---|---|---|\n",
    );
    for st in SETTINGS {
        let key = if st.repository {
            format!("`{}`", st.key)
        } else {
            format!("— ({})", st.key)
        };
        let _ = writeln!(
            s,
            "| {key} | `{}` | {} | {} | {} |",
            st.env,
            st.default_doc(),
            st.allowed.describe(),
            st.doc.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    s.push_str("\nKeys shown as — are process settings: only the environment or flags set them.\n");
    s.push_str(
        "Variables starting with `PROVEN_TEST_` or `PROVEN_BENCH_` belong to the test suite and the \
         benchmarks; they are not settings.\n",
    );
    s
}
