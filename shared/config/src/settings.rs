//! The table of settings: every key, its environment variable, default, allowed values and
//! meaning. The reference in `docs/configuration.md` is generated from it.

use std::fmt::Write;

/// `suite_timeout`'s default, in seconds: the package's suite when it proves a fix (and
/// `cargo xtask suites`, which runs suites as that step does).
pub const SUITE_TIMEOUT_DEFAULT: &str = "900";

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
    /// A positive integer, or empty (not set).
    PositiveIntegerOrEmpty,
    /// 0 or more.
    NonNegativeInteger,
    /// A comma-separated list, each entry one of these (or empty).
    ListOf(&'static [&'static str]),
    /// A `postgres://`, `postgresql://` or `sqlite:` URL, or empty.
    DatabaseUrl,
    Path,
    /// A directory path, or empty (the default place).
    PathOrEmpty,
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
    /// Comma-separated `host` or `host:port` entries (a host alone allows its scheme's
    /// default port only), or empty.
    HostList,
    /// Comma-separated registries a preparation may reach: `host`, `host:port`, `*.domain`,
    /// or `name[:port]=address:port`.
    RegistryList,
    /// Comma-separated `LANGUAGE=image`, `pythonX.Y=image`, `nodeNN=image`, `rustX.Y=image` or `goX.Y=image`.
    ImageList,
    /// A word without whitespace or control characters (e.g. `sum.golang.org`, `off`).
    Token,
    /// Comma-separated absolute directories, or empty.
    PathList,
    /// Comma-separated addresses or CIDR blocks (`10.0.0.0/8`, `::1/128`), or empty.
    NetList,
    /// Comma-separated `host[:port]=user:secret` entries, or empty; never shown in messages.
    CredentialList,
    /// A file path, or empty.
    FileOrEmpty,
    /// A plan's five fields: `class=…, agents=…, tools=…, sources=…, doubled=…`.
    PlanFields,
    /// Comma-separated `GLOB=CLASS` (or `manifests=CLASS`) entries, or empty.
    PathRules,
    /// Comma-separated file suffixes (`.md`), none of a source, script, build or template.
    ProseSuffixes,
    /// A list of accepted advisories (`id`, `reason`, optional `package`, `path`,
    /// `expires`): a YAML list in `proven.yaml`, the same as JSON in the environment.
    IgnoreList,
}

/// One entry of [`Allowed::HostList`]: a host name or address, and a port when one is named.
pub fn parse_host_entry(entry: &str) -> Result<(String, Option<u16>), String> {
    let entry = entry.trim();
    // An address alone (an IPv6 one has colons of its own).
    if let Ok(ip) = entry.parse::<std::net::IpAddr>() {
        return Ok((ip.to_string(), None));
    }
    let (host, port) = if let Some(rest) = entry.strip_prefix('[') {
        // [v6] or [v6]:port
        let (addr, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("{entry:?}: an IPv6 address needs its closing ]"))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| format!("{entry:?}: expected [address]:port"))?,
            ),
        };
        addr.parse::<std::net::Ipv6Addr>()
            .map_err(|_| format!("{entry:?}: {addr:?} is not an IPv6 address"))?;
        (addr.to_ascii_lowercase(), port)
    } else {
        match entry.rsplit_once(':') {
            Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
            None => (entry.to_ascii_lowercase(), None),
        }
    };
    let valid_name = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if !valid_name && host.parse::<std::net::IpAddr>().is_err() {
        return Err(format!("{entry:?}: {host:?} is not a host name or address"));
    }
    let port = match port {
        None => None,
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("{entry:?}: {p:?} is not a port"))?,
        ),
    };
    Ok((host, port))
}

/// One entry of [`Allowed::CredentialList`]: `(host, port, user, secret)`. Errors never
/// repeat the entry (it holds a secret).
pub fn parse_credential_entry(
    entry: &str,
) -> Result<(String, Option<u16>, String, String), String> {
    let (target, login) = entry
        .trim()
        .split_once('=')
        .ok_or("an entry is not host[:port]=user:secret")?;
    let (host, port) = parse_host_entry(target)
        .map_err(|_| "an entry's host is not host or host:port".to_string())?;
    let (user, secret) = login.split_once(':').ok_or(format!(
        "the entry for {host} is not host[:port]=user:secret"
    ))?;
    if user.is_empty() || secret.is_empty() || login.chars().any(|c| c.is_control()) {
        return Err(format!(
            "the entry for {host} needs a user and a secret, without control characters"
        ));
    }
    Ok((host, port, user.to_string(), secret.to_string()))
}

/// A `tracing` filter ([`Allowed::LogFilter`]): comma-separated levels, each alone or
/// after `target=`.
fn check_log_filter(raw: &str) -> Result<(), String> {
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

/// One entry of [`Allowed::RegistryList`]: `host`, `host:port`, `*.domain`, or
/// `name[:port]=address:port`.
fn check_registry_entry(e: &str) -> Result<(), String> {
    let (name, to) = match e.split_once('=') {
        Some((n, t)) => (n, Some(t)),
        None => (e, None),
    };
    let host_ok = |h: &str| {
        !h.is_empty()
            && h.chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-:*[]".contains(c))
    };
    if !host_ok(name) || to.is_some_and(|t| !host_ok(t) || !t.contains(':')) {
        Err(format!(
            "{e:?} is not host, host:port, *.domain or name=address:port"
        ))
    } else {
        Ok(())
    }
}

/// One entry of [`Allowed::ImageList`]: `LANGUAGE=image`, `pythonX.Y=image`,
/// `nodeNN=image`, `rustX.Y[.Z]=image` or `goX.Y[.Z]=image`.
fn check_image_entry(e: &str) -> Result<(), String> {
    let Some((lang, image)) = e.split_once('=') else {
        return Err(format!("{e:?} is not LANGUAGE=image"));
    };
    let numbers = |v: &str, parts: std::ops::RangeInclusive<usize>| {
        parts.contains(&v.split('.').count()) && v.split('.').all(|p| p.parse::<u32>().is_ok())
    };
    let versioned = |prefix: &str, parts| {
        lang.strip_prefix(prefix)
            .is_some_and(|v| !v.is_empty() && numbers(v, parts))
    };
    let lang_ok = matches!(lang, "python" | "rust" | "node" | "go")
        || versioned("python", 2..=2)
        || versioned("node", 1..=1)
        || versioned("rust", 2..=3)
        || versioned("go", 2..=3);
    if !lang_ok {
        Err(format!(
            "{lang:?} is not python, rust, node, go, pythonX.Y, nodeNN, rustX.Y or goX.Y"
        ))
    } else if image.is_empty() || image.contains(char::is_whitespace) {
        Err(format!("{image:?} is not an image name"))
    } else {
        Ok(())
    }
}

/// Ok when `raw` starts with one of `schemes`; otherwise "expected {expected}".
fn url_of(raw: &str, schemes: &[&str], expected: &str) -> Result<(), String> {
    if schemes.iter().any(|s| raw.starts_with(s)) {
        Ok(())
    } else {
        Err(format!("expected {expected}"))
    }
}

/// Ok when `raw` is not empty and every byte is an ASCII letter, a digit or one of
/// `extra`; otherwise "expected {expected}".
fn word_of(raw: &str, extra: &[u8], expected: &str) -> Result<(), String> {
    if !raw.is_empty()
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || extra.contains(&b))
    {
        Ok(())
    } else {
        Err(format!("expected {expected}"))
    }
}

pub use crate::entries::list_entries;

impl Allowed {
    pub fn check(&self, raw: &str) -> Result<(), String> {
        match self {
            Allowed::OneOf(values) if values.contains(&raw) => Ok(()),
            Allowed::OneOf(values) => Err(format!("expected one of {}", values.join(", "))),
            Allowed::PositiveInteger => match raw.parse::<u64>() {
                Ok(n) if n > 0 => Ok(()),
                _ => Err("expected a positive integer".into()),
            },
            Allowed::PositiveIntegerOrEmpty if raw.is_empty() => Ok(()),
            Allowed::PositiveIntegerOrEmpty => Allowed::PositiveInteger.check(raw),
            Allowed::NonNegativeInteger => match raw.parse::<u64>() {
                Ok(_) => Ok(()),
                _ => Err("expected 0 or a positive integer".into()),
            },
            Allowed::ListOf(values) => list_entries(raw).try_for_each(|e| {
                if values.contains(&e) {
                    Ok(())
                } else {
                    Err(format!("{e:?} is not one of {}", values.join(", ")))
                }
            }),
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
            Allowed::PathOrEmpty => Ok(()),
            Allowed::RedisUrl => url_of(
                raw,
                &["redis://", "rediss://"],
                "a redis:// or rediss:// URL",
            ),
            Allowed::Name => word_of(raw, b"-_:", "letters, digits, -, _ or :"),
            Allowed::SocketAddr => match raw.parse::<std::net::SocketAddr>() {
                Ok(_) => Ok(()),
                Err(_) => Err("expected host:port, e.g. 127.0.0.1:8080".into()),
            },
            Allowed::SocketAddrOrEmpty => match raw.parse::<std::net::SocketAddr>() {
                Ok(_) => Ok(()),
                Err(_) if raw.is_empty() => Ok(()),
                Err(_) => Err("expected host:port, e.g. 127.0.0.1:9464, or empty".into()),
            },
            Allowed::HttpUrl => url_of(raw, &["http://", "https://"], "an http:// or https:// URL"),
            Allowed::Secret => Ok(()),
            Allowed::Limit => Allowed::PositiveInteger.check(raw),
            Allowed::HostList => {
                list_entries(raw).try_for_each(|e| parse_host_entry(e).map(|_| ()))
            }
            Allowed::RegistryList => list_entries(raw).try_for_each(check_registry_entry),
            Allowed::ImageList => list_entries(raw).try_for_each(check_image_entry),
            Allowed::Token => {
                if !raw.is_empty() && !raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
                    Ok(())
                } else {
                    Err("expected a word without spaces".into())
                }
            }
            Allowed::PathList => list_entries(raw).try_for_each(|e| {
                if std::path::Path::new(e).is_absolute() {
                    Ok(())
                } else {
                    Err(format!("{e:?} is not an absolute directory"))
                }
            }),
            Allowed::NetList => list_entries(raw).try_for_each(|e| {
                parse_net(e)
                    .map(|_| ())
                    .ok_or_else(|| format!("{e:?} is not an address or CIDR block"))
            }),
            Allowed::CredentialList => {
                list_entries(raw).try_for_each(|e| parse_credential_entry(e).map(|_| ()))
            }
            Allowed::FileOrEmpty => Ok(()),
            Allowed::PlanFields => crate::scout::PlanSpec::parse(raw).map(|_| ()),
            Allowed::PathRules => crate::scout::parse_path_rules(raw).map(|_| ()),
            Allowed::ProseSuffixes => crate::scout::parse_prose_suffixes(raw).map(|_| ()),
            Allowed::IgnoreList => crate::ignore::parse_ignore(raw).map(|_| ()),
            Allowed::HttpUrlOrEmpty | Allowed::ModelIdOrEmpty if raw.is_empty() => Ok(()),
            Allowed::HttpUrlOrEmpty => Allowed::HttpUrl.check(raw),
            Allowed::ModelIdOrEmpty => Allowed::ModelId.check(raw),
            Allowed::ModelId => {
                word_of(raw, b"-_:./", "a model id (letters, digits, -, _, :, ., /)")
            }
            Allowed::LogFilter => check_log_filter(raw),
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Allowed::OneOf(values) => values.join(", "),
            Allowed::PositiveInteger => "a positive integer".into(),
            Allowed::PositiveIntegerOrEmpty => "a positive integer, or empty".into(),
            Allowed::NonNegativeInteger => "0 or a positive integer".into(),
            Allowed::ListOf(values) => format!("a comma-separated list of {}", values.join(", ")),
            Allowed::DatabaseUrl => "postgres://…, postgresql://… or sqlite:… URL".into(),
            Allowed::Path => "a directory".into(),
            Allowed::PathOrEmpty => "a directory, or empty".into(),
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
            Allowed::HostList => "comma-separated host or host:port, or empty".into(),
            Allowed::RegistryList => {
                "comma-separated host, host:port, *.domain or name=address:port".into()
            }
            Allowed::ImageList => {
                "comma-separated python|rust|node|go|pythonX.Y|nodeNN|rustX.Y|goX.Y=image, or empty".into()
            }
            Allowed::Token => "a word without spaces".into(),
            Allowed::PathList => "comma-separated absolute directories, or empty".into(),
            Allowed::NetList => "comma-separated addresses or CIDR blocks, or empty".into(),
            Allowed::CredentialList => {
                "comma-separated host[:port]=user:secret (secrets), or empty".into()
            }
            Allowed::FileOrEmpty => "a file, or empty".into(),
            Allowed::PlanFields => "class=docs|dependency|standard|security, agents=none|skeptic|all, \
                                    tools=none|queries|sandbox|all, sources=none|all, doubled=yes|no|class"
                .into(),
            Allowed::PathRules => {
                "comma-separated GLOB=CLASS or manifests=CLASS (CLASS: docs, dependency, standard, security), or empty"
                    .into()
            }
            Allowed::ProseSuffixes => {
                "comma-separated suffixes such as .md (no source, script, build or template suffix)".into()
            }
            Allowed::IgnoreList => "a list of entries, each with id (an advisory id or alias) and reason, \
                                    and optionally package, path and expires (YYYY-MM-DD)"
                .into(),
            Allowed::ModelId => "a model id".into(),
            Allowed::LogFilter => {
                "a tracing filter (off, error, warn, info, debug, trace; per target with =)".into()
            }
        }
    }
}

/// An address (a block of one) or a CIDR block.
pub fn parse_net(entry: &str) -> Option<ipnet::IpNet> {
    entry.parse::<ipnet::IpNet>().ok().or_else(|| {
        entry
            .parse::<std::net::IpAddr>()
            .ok()
            .map(ipnet::IpNet::from)
    })
}

impl Allowed {
    /// Values of these settings are secrets: a message never repeats them.
    pub fn is_secret(&self) -> bool {
        matches!(self, Allowed::Secret | Allowed::CredentialList)
    }
}

const ON_OFF: &[&str] = &["on", "off"];

/// Other names a setting is read under from the environment (the design documents' own):
/// (alias, the setting's `env`). Setting both to different values is refused.
pub static ALIASES: &[(&str, &str)] = &[(
    "PROVEN_SECOND_REVIEWER_KEY",
    "PROVEN_SECOND_REVIEWER_API_KEY",
)];

/// NVIDIA's hosted OpenAI-compatible API (`PROVEN_GENERATOR_MODE=nvidia`).
pub const NVIDIA_API: &str = "https://integrate.api.nvidia.com/v1";

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
        key: "database_connections",
        env: "PROVEN_DATABASE_CONNECTIONS",
        default: Some("4"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Connections one process keeps to Postgres at most (the embedded SQLite store keeps 4). \
              A worker's steps claim and commit in groups, so a few connections serve all its slots; \
              more backends than the database has cores mostly contend (docs/benchmarks.md: 4 a \
              worker moved 1.2-1.5x the steps of 16 on two cores). Keep the fleet's total near a \
              few times the database's cores.",
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
        key: "max_queued_reviews",
        env: "PROVEN_MAX_QUEUED_REVIEWS",
        default: Some("1000"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Unfinished (queued or running) reviews one tenant may have; a review or batch that would pass \
              it is refused with HTTP 429 (code queue_full) and nothing of it is recorded.",
    },
    Setting {
        key: "max_queued_questions",
        env: "PROVEN_MAX_QUEUED_QUESTIONS",
        default: Some("100"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Unanswered (queued or running) questions one tenant may have; one more is refused with HTTP \
              429 (code queue_full) and not recorded. Workers claim questions with tenants taking turns.",
    },
    Setting {
        key: "max_batch_reviews",
        env: "PROVEN_MAX_BATCH_REVIEWS",
        default: Some("500"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Reviews one `POST /v1/batches` may hold; a larger batch is refused with HTTP 422 (code \
              batch_too_large: retrying the same request can never succeed, so it is not a 429).",
    },
    Setting {
        key: "max_deadline_seconds",
        env: "PROVEN_MAX_DEADLINE_SECONDS",
        default: Some("86400"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Largest `deadline_secs` a review request may ask for; more is refused with HTTP 422 naming the \
              field and this maximum.",
    },
    Setting {
        key: "http.header_timeout_seconds",
        env: "PROVEN_HTTP_HEADER_TIMEOUT_SECONDS",
        default: Some("10"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "`proven serve` closes a connection whose request headers have not all arrived this long after \
              it started waiting for them (a new connection, or an idle kept-alive one).",
    },
    Setting {
        key: "http.body_timeout_seconds",
        env: "PROVEN_HTTP_BODY_TIMEOUT_SECONDS",
        default: Some("30"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Time to receive a whole request body; a slower one is answered 408 (code body_timeout).",
    },
    Setting {
        key: "http.max_body_bytes",
        env: "PROVEN_HTTP_MAX_BODY_BYTES",
        default: Some("2097152"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Largest request body; a larger one is answered 413 (code body_too_large) without being read.",
    },
    Setting {
        key: "http.max_connections",
        env: "PROVEN_HTTP_MAX_CONNECTIONS",
        default: Some("1024"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Connections `proven serve` holds open at once; further ones wait in the listen backlog.",
    },
    Setting {
        key: "http.max_connections_per_address",
        env: "PROVEN_HTTP_MAX_CONNECTIONS_PER_ADDRESS",
        default: Some("64"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Connections one client address (an IPv6 client: its /64) may hold open at once; a further one is closed as soon as it \
              is accepted, so one client holding half-sent requests never takes the connections others \
              need. Behind a reverse proxy every client has the proxy's address: raise it to \
              `http.max_connections` there.",
    },
    Setting {
        key: "http.unverified_body_bytes",
        env: "PROVEN_HTTP_UNVERIFIED_BODY_BYTES",
        default: Some("16777216"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Bytes of GitHub webhook bodies `proven serve` holds at once, across all connections, before \
              their signature is checked (each body is checked as it streams in, under \
              `http.max_body_bytes`); a delivery waits for room within `http.body_timeout_seconds`. Bounds \
              what unauthenticated senders can make the server hold.",
    },
    Setting {
        key: "http.rate_per_second",
        env: "PROVEN_HTTP_RATE_PER_SECOND",
        default: Some("20"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Requests per second one API token may make on average; more are answered 429 (code \
              rate_limited) with Retry-After.",
    },
    Setting {
        key: "http.rate_burst",
        env: "PROVEN_HTTP_RATE_BURST",
        default: Some("100"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Requests one API token may make at once above its per-second rate before it is limited.",
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
        key: "step_deadline_seconds",
        env: "PROVEN_STEP_DEADLINE_SECONDS",
        default: Some("3600"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Longest run of one step: past it the step is stopped, its lease released (its slot is free \
              again) and it fails by name.",
    },
    Setting {
        key: "repository.hosts",
        env: "PROVEN_REPO_HOSTS",
        default: Some("github.com,gitlab.com,bitbucket.org,codeberg.org"),
        allowed: Allowed::HostList,
        repository: false,
        doc: "Hosts a review's `repository` may name as an https:// or ssh:// URL. A host alone allows \
              its scheme's default port (443, 22); `host:port` allows that port. A host that resolves to \
              a loopback, link-local, private or otherwise non-public address is refused unless \
              `PROVEN_REPO_PRIVATE_NETS` allows the address.",
    },
    Setting {
        key: "repository.roots",
        env: "PROVEN_REPO_ROOTS",
        default: Some(""),
        allowed: Allowed::PathList,
        repository: false,
        doc: "Directories under which the service (API and workers) reviews a local path or `file://` \
              URL; empty: none. `proven review` reviews local repositories anywhere. A path under \
              `PROVEN_DATA_DIR` is always refused.",
    },
    Setting {
        key: "repository.private_nets",
        env: "PROVEN_REPO_PRIVATE_NETS",
        default: Some(""),
        allowed: Allowed::NetList,
        repository: false,
        doc: "Non-public addresses (loopback, link-local, private, ...) that allow-listed hosts may \
              resolve to: the escape for internal git servers. Empty: only public addresses.",
    },
    Setting {
        key: "repository.credentials",
        env: "PROVEN_REPO_CREDENTIALS",
        default: Some(""),
        allowed: Allowed::CredentialList,
        repository: false,
        doc: "Credentials for https clones, per host: `host[:port]=user:secret` (e.g. \
              `github.com=x-access-token:TOKEN`). Sent to git in its environment's configuration for \
              that host only; never in a URL, the store or a log (a secret: never printed).",
    },
    Setting {
        key: "repository.ca_file",
        env: "PROVEN_REPO_CA_FILE",
        default: Some(""),
        allowed: Allowed::FileOrEmpty,
        repository: false,
        doc: "PEM bundle of the certificate authorities that verify https hosts reached through \
              `PROVEN_REPO_PRIVATE_NETS` (internal servers); public hosts are verified against the \
              system's store.",
    },
    Setting {
        key: "repository.ssh_key",
        env: "PROVEN_REPO_SSH_KEY",
        default: Some(""),
        allowed: Allowed::FileOrEmpty,
        repository: false,
        doc: "Private key for ssh:// clones; empty: none.",
    },
    Setting {
        key: "repository.ssh_known_hosts",
        env: "PROVEN_REPO_SSH_KNOWN_HOSTS",
        default: Some(""),
        allowed: Allowed::FileOrEmpty,
        repository: false,
        doc: "known_hosts file that ssh:// hosts are checked against (strictly); empty: no ssh host is \
              trusted.",
    },
    Setting {
        key: "repository.connect_timeout_seconds",
        env: "PROVEN_REPO_CONNECT_TIMEOUT_SECONDS",
        default: Some("10"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Longest wait for a git server to accept a connection.",
    },
    Setting {
        key: "repository.read_timeout_seconds",
        env: "PROVEN_REPO_READ_TIMEOUT_SECONDS",
        default: Some("60"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Longest silence from a git server during a clone or fetch.",
    },
    Setting {
        key: "repository.fetch_timeout_seconds",
        env: "PROVEN_REPO_FETCH_TIMEOUT_SECONDS",
        default: Some("600"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Longest whole clone or fetch (a server that trickles bytes stops here).",
    },
    Setting {
        key: "repository.max_fetch_bytes",
        env: "PROVEN_REPO_MAX_FETCH_BYTES",
        default: Some("2147483648"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Most bytes one clone or fetch may receive; a larger pack fails by name.",
    },
    Setting {
        key: "github.app_id",
        env: "PROVEN_GITHUB_APP_ID",
        default: Some(""),
        allowed: Allowed::PositiveIntegerOrEmpty,
        repository: false,
        doc: "The GitHub App's id; empty: Proven is not a GitHub App (the webhook answers 404).",
    },
    Setting {
        key: "github.private_key",
        env: "PROVEN_GITHUB_PRIVATE_KEY",
        default: Some(""),
        allowed: Allowed::FileOrEmpty,
        repository: false,
        doc: "The GitHub App's private key (the PEM file GitHub hands out): it signs the JWT that \
              buys each installation's access token.",
    },
    Setting {
        key: "github.webhook_secret",
        env: "PROVEN_GITHUB_WEBHOOK_SECRET",
        default: Some(""),
        allowed: Allowed::Secret,
        repository: false,
        doc: "The GitHub App's webhook secret: every delivery's `X-Hub-Signature-256` is checked \
              against it before anything is read.",
    },
    Setting {
        key: "github.api_url",
        env: "PROVEN_GITHUB_API_URL",
        default: Some("https://api.github.com"),
        allowed: Allowed::HttpUrl,
        repository: false,
        doc: "GitHub's REST API (an Enterprise server's is `https://HOST/api/v3`).",
    },
    Setting {
        key: "github.check_name",
        env: "PROVEN_GITHUB_CHECK_NAME",
        default: Some("Proven"),
        allowed: Allowed::Name,
        repository: false,
        doc: "The name of the check run each reviewed head gets.",
    },
    Setting {
        key: "github.findings_conclusion",
        env: "PROVEN_GITHUB_FINDINGS_CONCLUSION",
        default: Some("failure"),
        allowed: Allowed::OneOf(&["failure", "neutral", "action_required"]),
        repository: false,
        doc: "The check run's conclusion when the review has findings (an incomplete review is \
              always `action_required`; none is `success`).",
    },
    Setting {
        key: "github.advisory_conclusion",
        env: "PROVEN_GITHUB_ADVISORY_CONCLUSION",
        default: Some("failure"),
        allowed: Allowed::OneOf(&["failure", "neutral", "action_required"]),
        repository: false,
        doc: "The check run's conclusion when every finding is an advisory (nothing reproduced \
              or exploited), e.g. `neutral`.",
    },
    Setting {
        key: "github.not_reached_conclusion",
        env: "PROVEN_GITHUB_NOT_REACHED_CONCLUSION",
        default: Some("failure"),
        allowed: Allowed::OneOf(&["failure", "neutral", "action_required"]),
        repository: false,
        doc: "The check run's conclusion when every finding is an advisory whose vulnerable code \
              the head does not reach (reachability `not reached`); `neutral` keeps such findings \
              from failing the check. They are still shown, with what was searched. The verdict \
              reads the head's own code, which the change controls: a call made by reflection \
              or a computed import is not seen, so keep `failure` where changes are untrusted.",
    },
    Setting {
        key: "github.sarif",
        env: "PROVEN_GITHUB_SARIF",
        default: Some("on"),
        allowed: Allowed::OneOf(&["on", "off"]),
        repository: false,
        doc: "Upload each published review's SARIF to code scanning (skipped, and said, where the \
              repository does not allow it).",
    },
    Setting {
        key: "github.publish_lease_seconds",
        env: "PROVEN_GITHUB_PUBLISH_LEASE_SECONDS",
        default: Some("120"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "How long a worker holds a publication it claimed; one whose worker died is taken \
              over after it (and resumes: what was posted is found again, never posted twice).",
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
        doc: "API key of the second reviewer (a secret: never printed). Also read as \
              PROVEN_SECOND_REVIEWER_KEY, the name the design documents use.",
    },
    Setting {
        key: "models.generator.mode",
        env: "PROVEN_GENERATOR_MODE",
        default: Some(""),
        allowed: Allowed::OneOf(&["", "nvidia"]),
        repository: false,
        doc: "Where the generator is reached, as the design documents name it: `nvidia` is NVIDIA's \
              hosted API (https://integrate.api.nvidia.com/v1; a different PROVEN_GENERATOR_BASE_URL \
              beside it is refused by name); empty: PROVEN_GENERATOR_BASE_URL alone decides.",
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
        doc: "on: after every finding is final, one prompt to the generator (`autofix_generator`) holding \
              every kept finding a test, a query or an advisory proved; its one patch is applied to a scratch \
              copy of the change and each finding's own evidence run again on it (tests in the sandbox, \
              advisory rows for the patched files), then the tests of each language the patch touches; the \
              verdict is \"fixed automatically, waiting for a person\" or \"rejected\", naming each open \
              finding. No second attempt, and no per-finding fixes while it is on. Nothing is ever committed.",
    },
    Setting {
        key: "autofix_timeout",
        env: "PROVEN_AUTOFIX_TIMEOUT",
        default: Some("300"),
        allowed: Allowed::Limit,
        repository: true,
        doc: "Seconds each run of the autofix attempt may take (each fixed finding's own test, the package's \
              suite); a run past it is killed, did not happen, and the attempt is rejected naming it. A Python \
              suite killed at it, after every finding's own test passed with the patch, gives way to the test \
              files that import what the patch edits (at most 40, run with the same budget, named in the \
              attempt's `narrowed`), as the Fixer's suite does past suite_timeout. proven.yaml may lower it, \
              never raise it.",
    },
    Setting {
        key: "suite_timeout",
        env: "PROVEN_SUITE_TIMEOUT",
        default: Some(SUITE_TIMEOUT_DEFAULT),
        allowed: Allowed::Limit,
        repository: true,
        doc: "Seconds the package's whole suite may take when it proves a fix (with the patch, and on the \
              base when it failed with it): a suite is many tests, not one, and a popular project's takes \
              minutes on the sandbox's one CPU. A suite past it is killed; a Python suite then gives way to \
              the test files that import what the patch edits (at most 40, run with the same budget, named \
              in the fix); with none, the fix is not proved, by name. proven.yaml may lower it, never raise it.",
    },
    Setting {
        key: "autofix_generator",
        env: "PROVEN_AUTOFIX_GENERATOR",
        default: Some(""),
        allowed: Allowed::ModelIdOrEmpty,
        repository: true,
        doc: "The model that writes the autofix attempt's one patch, served at the generator's endpoint \
              with its key; empty: the generator's own model. No model judges the patch: only Proven's runs \
              and rows do.",
    },
    Setting {
        key: "fixes",
        env: "PROVEN_FIXES",
        default: Some("on"),
        allowed: Allowed::OneOf(&["on", "off"]),
        repository: true,
        doc: "off: no fix is proposed (the Fixer does not run; autofix neither).",
    },
    Setting {
        key: "scout_intent",
        env: "PROVEN_SCOUT_INTENT",
        default: Some("on"),
        allowed: Allowed::OneOf(&["on", "off"]),
        repository: true,
        doc: "Scout Intent plans each review from its changed files (verified prose runs no model, a \
              dependency-only change only what it needs). off: no plan is chosen and every review runs in \
              full; the plan line says \"no plan chosen\".",
    },
    Setting {
        key: "plan_docs",
        env: "PROVEN_PLAN_DOCS",
        default: Some("class=docs, agents=none, tools=none, sources=none, doubled=class"),
        allowed: Allowed::PlanFields,
        repository: true,
        doc: "Scout Intent's plan for a docs change (verified prose only (every file a prose suffix, no executable bit, no shebang, on both sides)): all five fields. A plan that leaves anything \
              out is kept only for a change verified as docs or dependency; the path rules' floor and an \
              ambiguous change run their class in full.",
    },
    Setting {
        key: "plan_dependency",
        env: "PROVEN_PLAN_DEPENDENCY",
        default: Some(
            "class=dependency, agents=skeptic, tools=queries, sources=all, doubled=class",
        ),
        allowed: Allowed::PlanFields,
        repository: true,
        doc: "Scout Intent's plan for a dependency change (every file a dependency manifest or lock file): all five fields. A plan that leaves anything \
              out is kept only for a change verified as docs or dependency; the path rules' floor and an \
              ambiguous change run their class in full.",
    },
    Setting {
        key: "plan_refactor",
        env: "PROVEN_PLAN_REFACTOR",
        default: Some("class=standard, agents=all, tools=all, sources=all, doubled=class"),
        allowed: Allowed::PlanFields,
        repository: true,
        doc: "Scout Intent's plan for a refactor change (renames without changes): all five fields. A plan that leaves anything \
              out is kept only for a change verified as docs or dependency; the path rules' floor and an \
              ambiguous change run their class in full.",
    },
    Setting {
        key: "plan_feature",
        env: "PROVEN_PLAN_FEATURE",
        default: Some("class=standard, agents=all, tools=all, sources=all, doubled=class"),
        allowed: Allowed::PlanFields,
        repository: true,
        doc: "Scout Intent's plan for a feature change (source and other files): all five fields. A plan that leaves anything \
              out is kept only for a change verified as docs or dependency; the path rules' floor and an \
              ambiguous change run their class in full.",
    },
    Setting {
        key: "plan_config",
        env: "PROVEN_PLAN_CONFIG",
        default: Some("class=standard, agents=all, tools=all, sources=all, doubled=class"),
        allowed: Allowed::PlanFields,
        repository: true,
        doc: "Scout Intent's plan for a config change (configuration files): all five fields. A plan that leaves anything \
              out is kept only for a change verified as docs or dependency; the path rules' floor and an \
              ambiguous change run their class in full.",
    },
    Setting {
        key: "plan_security",
        env: "PROVEN_PLAN_SECURITY",
        default: Some("class=security, agents=all, tools=all, sources=all, doubled=yes"),
        allowed: Allowed::PlanFields,
        repository: true,
        doc: "Scout Intent's plan for a security change (one file with a security signal (never outvoted)): all five fields. A plan that leaves anything \
              out is kept only for a change verified as docs or dependency; the path rules' floor and an \
              ambiguous change run their class in full.",
    },
    Setting {
        key: "path_rules",
        env: "PROVEN_PATH_RULES",
        default: Some("manifests=security"),
        allowed: Allowed::PathRules,
        repository: true,
        doc: "The floor class of a change: the highest class a rule gives one of its paths (a glob over \
              repository paths, `*` within a directory, `**` across; `manifests` is every dependency manifest \
              and lock file). A plan never runs below it: a lower plan runs the floor's class in full. A \
              security rule is a Scout signal too. No comma inside a glob.",
    },
    Setting {
        key: "prose_suffixes",
        env: "PROVEN_PROSE_SUFFIXES",
        default: Some(".md, .markdown, .rst, .txt, .adoc, .asciidoc"),
        allowed: Allowed::ProseSuffixes,
        repository: true,
        doc: "The suffixes a file may have to be verified prose (with no executable bit and no shebang on \
              either side); a source, script, build or template suffix is refused by name, and a build \
              file's name (CMakeLists.txt, Makefile) or a pip requirements or constraints file is never prose.",
    },
    Setting {
        key: "ignore",
        env: "PROVEN_IGNORE",
        default: Some(""),
        allowed: Allowed::IgnoreList,
        repository: true,
        doc: "Advisories the repository accepts: a list of entries, each with `id` (the advisory's id or an \
              alias), `reason`, and optionally `package`, `path` and `expires` (YYYY-MM-DD). A finding an \
              entry matches is shown apart as ignored, with the reason, and never fails a check; an expired \
              entry ignores nothing and is named, and so is an entry that matches nothing. In the \
              environment, the same list as JSON.",
    },
    Setting {
        key: "tool_analyzers",
        env: "PROVEN_TOOL_ANALYZERS",
        default: Some("pyflakes, go-vet, clippy, eslint"),
        allowed: Allowed::ListOf(&["pyflakes", "go-vet", "clippy", "eslint"]),
        repository: true,
        doc: "The analyzers of the tool evidence, each run in the sandbox on the base and on the change \
              when the change adds or modifies a file of its language: pyflakes (Python), go-vet (Go), \
              clippy (Rust), eslint (Node: JavaScript and TypeScript files, the project's own eslint, \
              a dev dependency its preparation installs, with its own configuration; a tree without \
              either is named as not seen). A diagnostic on a line the change adds that the same analyzer at the same \
              version does not report on the base is a `tool` finding. Empty: none.",
    },
    Setting {
        key: "tool_analyzer_classes",
        env: "PROVEN_TOOL_ANALYZER_CLASSES",
        default: Some("standard, security"),
        allowed: Allowed::ListOf(&["docs", "dependency", "standard", "security"]),
        repository: true,
        doc: "The review classes (Scout's) whose reviews run the tool evidence's analyzers (`tool_analyzers`, \
              each for its language): by default a standard and a security review; a docs or a dependency \
              review only where its plan keeps the sandbox and this names its class. The plan line names \
              the analyzers that run and, for each left out, this setting.",
    },
    Setting {
        key: "second_reviewer_classes",
        env: "PROVEN_SECOND_REVIEWER_CLASSES",
        default: Some("docs, dependency, standard, security"),
        allowed: Allowed::ListOf(&["docs", "dependency", "standard", "security"]),
        repository: true,
        doc: "The classes a connected second reviewer doubles when a plan says doubled=class; security is \
              always doubled.",
    },
    Setting {
        key: "markovian",
        env: "PROVEN_MARKOVIAN",
        default: Some("on"),
        allowed: Allowed::OneOf(&["on", "off"]),
        repository: false,
        doc: "Bounded steps (the Markovian engine): a change whose whole Planner prompt is above \
              PROVEN_MARKOVIAN_THRESHOLD is read one part a step, with the carried state. off: one prompt \
              (past one part, the rest of the change is named as not seen).",
    },
    Setting {
        key: "markovian_threshold",
        env: "PROVEN_MARKOVIAN_THRESHOLD",
        default: Some("8000"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Estimated tokens (characters / 4) of the whole Planner prompt above which bounded steps run.",
    },
    Setting {
        key: "markovian_step_unit",
        env: "PROVEN_MARKOVIAN_STEP_UNIT",
        default: Some("file"),
        allowed: Allowed::OneOf(&["file", "hunk"]),
        repository: false,
        doc: "What one bounded step reads: a file of the change, or a hunk (with its file's header).",
    },
    Setting {
        key: "markovian_carry_tokens",
        env: "PROVEN_MARKOVIAN_CARRY_TOKENS",
        default: Some("800"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Estimated tokens the carried state may hold: what is established is cut first (oldest \
              first), then what is suspected; a claim awaiting evidence is never cut, and when they cannot \
              all be held whole the review stops by name (CarryFull).",
    },
    Setting {
        key: "hmem_max_state_bytes",
        env: "PROVEN_HMEM_MAX_STATE_BYTES",
        default: Some("67108864"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "The most a repository's H-MEM (its memory of evidenced refutations, superseded records \
              included: none is deleted) may hold; a refutation that would pass it is not remembered and \
              the review names the failed service `hmem` (the finding is still dropped: its runs refuted it).",
    },
    Setting {
        key: "hmem_query_tokens",
        env: "PROVEN_HMEM_QUERY_TOKENS",
        default: Some("8"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Leading words of a claim that count when H-MEM looks for similar refutations. Similar \
              records are only shown in the trace: a finding is silenced by a refutation's fingerprint \
              alone, never by a score.",
    },
    Setting {
        key: "log_dir",
        env: "PROVEN_LOG_DIR",
        default: Some(""),
        allowed: Allowed::FileOrEmpty,
        repository: false,
        doc: "A directory the review trace is also written to, as JSON Lines (`trace.jsonl`, one line per \
              event, appended as each step commits); empty: the store only (`proven trace ID`).",
    },
    Setting {
        key: "fix_attempts",
        env: "PROVEN_FIX_ATTEMPTS",
        default: Some("2"),
        allowed: Allowed::OneOf(&["0", "1", "2", "3", "4", "5"]),
        repository: true,
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
    Setting {
        key: "sandbox.docker_host",
        env: "PROVEN_SANDBOX_DOCKER_HOST",
        default: Some("/var/run/docker.sock"),
        allowed: Allowed::Path,
        repository: false,
        doc: "The Docker endpoint the sandbox runs containers on: a Unix socket path or tcp://host:port \
              (the daemon must see the runner's work and cache directories at the same paths).",
    },
    Setting {
        key: "sandbox.images",
        env: "PROVEN_SANDBOX_IMAGES",
        default: Some(""),
        allowed: Allowed::ImageList,
        repository: false,
        doc: "Images of the sandbox, replacing the local ones (`proven-sandbox-LANG:local`): \
              `python=IMAGE,rust=IMAGE,...`; `pythonX.Y=IMAGE` adds an image of that Python, chosen for \
              a project whose declared Python (requires-python, python_requires, tox envlist, classifiers, \
              .python-version) the default image's does not satisfy; `nodeNN=IMAGE` adds an image of that \
              Node major, chosen for a project whose package.json `engines.node` allows it (the newest such); \
              `rustX.Y=IMAGE` and `goX.Y=IMAGE` add images of those toolchains, chosen for a project that pins \
              one (rust-toolchain's channel, go.mod's `toolchain`: that version, else the nearest newer) or \
              needs a newer one than the default has (Cargo.toml's `rust-version`, go.mod's `go`: the newest that meets it).",
    },
    Setting {
        key: "sandbox.registries",
        env: "PROVEN_SANDBOX_REGISTRIES",
        default: Some(
            "pypi.org,files.pythonhosted.org,registry.npmjs.org,index.crates.io,static.crates.io,crates.io,proxy.golang.org,sum.golang.org",
        ),
        allowed: Allowed::RegistryList,
        repository: false,
        doc: "The only hosts a dependency preparation can reach (through Proven's egress proxy; the \
              preparation container has no network of its own): `host` (ports 443 and 80), \
              `host:port`, `*.domain`, or `name[:port]=address:port` for a registry at a fixed address.",
    },
    Setting {
        key: "sandbox.pip_index_url",
        env: "PROVEN_SANDBOX_PIP_INDEX_URL",
        default: Some(""),
        allowed: Allowed::HttpUrlOrEmpty,
        repository: false,
        doc: "The Python package index preparations install from (the operator's mirror); empty: PyPI. \
              A project's own index options are refused.",
    },
    Setting {
        key: "sandbox.npm_registry",
        env: "PROVEN_SANDBOX_NPM_REGISTRY",
        default: Some(""),
        allowed: Allowed::HttpUrlOrEmpty,
        repository: false,
        doc: "The npm registry preparations install from; empty: registry.npmjs.org.",
    },
    Setting {
        key: "sandbox.goproxy",
        env: "PROVEN_SANDBOX_GOPROXY",
        default: Some("https://proxy.golang.org"),
        allowed: Allowed::HttpUrl,
        repository: false,
        doc: "The Go module proxy preparations download from (direct VCS fetches are never made).",
    },
    Setting {
        key: "sandbox.gosumdb",
        env: "PROVEN_SANDBOX_GOSUMDB",
        default: Some("sum.golang.org"),
        allowed: Allowed::Token,
        repository: false,
        doc: "The Go checksum database preparations verify modules against (`off`: none).",
    },
    Setting {
        key: "sandbox.scratch_bytes",
        env: "PROVEN_SANDBOX_SCRATCH_BYTES",
        default: Some("536870912"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Size of a run's writable copy of the tree (a tmpfs); a tree larger than this is refused \
              before any run.",
    },
    Setting {
        key: "sandbox.rust_scratch_bytes",
        env: "PROVEN_SANDBOX_RUST_SCRATCH_BYTES",
        default: Some("4294967296"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Size of a Rust run's scratch space, in place of `sandbox.scratch_bytes`: its tests \
              compile into it, and a suite that compiles other crates (trybuild, compile tests) \
              outgrows the default. Its memory limit grows by as much over \
              `sandbox.scratch_bytes`, since the scratch space is memory.",
    },
    Setting {
        key: "sandbox.memory_bytes",
        env: "PROVEN_SANDBOX_MEMORY_BYTES",
        default: Some("1073741824"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Memory of one test run's container (its scratch space included).",
    },
    Setting {
        key: "sandbox.suite_memory_bytes",
        env: "PROVEN_SANDBOX_SUITE_MEMORY_BYTES",
        default: Some("4294967296"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Memory of a run of a package's whole suite (when a fix is proved), in place of \
              `sandbox.memory_bytes` when larger: a suite is many tests in one process or in \
              workers, and a popular project's outgrows what one test needs, as its CI's \
              runner gives it several GiB. A run past it is killed and named so.",
    },
    Setting {
        key: "sandbox.suite_test_timeout_seconds",
        env: "PROVEN_SANDBOX_SUITE_TEST_TIMEOUT_SECONDS",
        default: Some("120"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Within a run of a package's whole Python suite (when a fix is proved), the time \
              one test may take before it is stopped as an error of that test and the rest of \
              the suite goes on (unittest's, nose's and pytest's tests, in a prepared \
              environment): one test that never ends otherwise takes the whole \
              `suite_timeout`, and a suite that did not finish proves nothing.",
    },
    Setting {
        key: "sandbox.suite_cpus",
        env: "PROVEN_SANDBOX_SUITE_CPUS",
        default: Some("2"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "CPUs of a run of a package's whole suite (when a fix is proved), in place of one test \
              run's one CPU when more, and at most the host's: a CI runner has several, and a \
              project's suite is sized for them (pytest-xdist's `-n 2`, jest's and mocha's \
              workers).",
    },
    Setting {
        key: "sandbox.concurrency",
        env: "PROVEN_SANDBOX_CONCURRENCY",
        default: Some("4"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Containers one runner process runs at once.",
    },
    Setting {
        key: "sandbox.pool_size",
        env: "PROVEN_SANDBOX_POOL_SIZE",
        default: Some("1"),
        allowed: Allowed::NonNegativeInteger,
        repository: false,
        doc: "Warm containers kept started for each image and set of prepared dependencies a runner \
              has used lately (up to 8 such keys): a run takes one exactly once (an exec into it) and \
              it is removed after; the same hardening and limits as a cold run. 0: every run starts \
              its container cold.",
    },
    Setting {
        key: "sandbox.pool_languages",
        env: "PROVEN_SANDBOX_POOL_LANGUAGES",
        default: Some("python,rust,node,go"),
        allowed: Allowed::ListOf(&["python", "rust", "node", "go"]),
        repository: false,
        doc: "The languages whose images a worker warms when it starts (the pool of each image and prepared dependencies used later fills after its first run); empty: none ahead of use.",
    },
    Setting {
        key: "sandbox.prepare_timeout_seconds",
        env: "PROVEN_SANDBOX_PREPARE_TIMEOUT_SECONDS",
        default: Some("900"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Longest run of one dependency preparation. A Python preparation bounds each install by its share of what is left, names what the time did not reach, and keeps the rest for its run (such an environment is never cached).",
    },
    Setting {
        key: "sandbox.prepare_max_bytes",
        env: "PROVEN_SANDBOX_PREPARE_MAX_BYTES",
        default: Some("8589934592"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "A dependency preparation that writes more than this is killed, by name.",
    },
    Setting {
        key: "sandbox.cache_dir",
        env: "PROVEN_SANDBOX_CACHE_DIR",
        default: Some(""),
        allowed: Allowed::PathOrEmpty,
        repository: false,
        doc: "Where prepared dependency layers are kept (per tenant and repository, sealed by digest); unset: `sandbox-cache` in the data directory. Processes that share it share its layers.",
    },
    Setting {
        key: "sandbox.cache_max_bytes",
        env: "PROVEN_SANDBOX_CACHE_MAX_BYTES",
        default: Some("21474836480"),
        allowed: Allowed::PositiveInteger,
        repository: false,
        doc: "Size cap of the prepared-layer cache: past it, the least recently used layers no run holds are removed.",
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
         variables and unknown `proven.yaml` keys are errors too; a `proven.yaml` that sets an operator's \
         setting (shown as — below) is refused naming it, and one that would raise a limit is warned \
         about by key (the operator's limit applies). A list setting may be a YAML list in `proven.yaml` \
         (`prose_suffixes: [\".md\", \".txt\"]`) or comma-separated text.\n\n\
         A secret (an API key, the webhook secret, repository credentials) may instead be read from a \
         file: `NAME_FILE=/run/secrets/…` (its content less the final newline), as Compose and \
         Kubernetes mount secrets. The design documents' names are read too: \
         `PROVEN_SECOND_REVIEWER_KEY` for `PROVEN_SECOND_REVIEWER_API_KEY` (both set differently: \
         refused).\n\n\
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
