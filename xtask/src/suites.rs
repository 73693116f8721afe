//! `cargo xtask suites --repos DIR [--study] [--only NAME…] [--out FILE] [--records DIR]`: each real
//! repository's own test suite at its head, run in the sandbox exactly as a review's
//! "package suite" step runs it (the command the project documents, translated by
//! `proven_sandbox::suite::documented_suite`; its dependencies prepared by the sandbox;
//! the review's test timeout), and a table of what happened (issue 16, must-show 3).
//!
//! The repositories are never committed: `DIR` holds one git directory per repository,
//! `DIR/OWNER+NAME/repo` (as the fetch tool leaves them) or `DIR/OWNER+NAME`. Each run
//! takes the tree of the repository's `HEAD` from its git objects, as Proven takes a tree.
//!
//! The list is fixed here, before any run: ten repositories per language, chosen for
//! popularity, never for ease (the first five per language are issue 16's, the five most
//! popular of the repositories fetched then; the second five, issue 30's, are among the
//! most-starred well-known projects of the language on GitHub, whatever their suites
//! need); a repository is never dropped because it fails. The harness does not pin
//! commits: each run takes the fetched repository's `HEAD`, and the table names the commit.
//! Every failure is reported by cause, and each cause as the world's or Proven's (the
//! corpus's rules, [`crate::corpus::causes::world_cause`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::corpus::causes::cell;
use std::time::{Duration, Instant};

use proven_sandbox::{
    Forwarder, Language, Outcome, RunRecord, RunRequest, Sandbox, SandboxConfig,
    suite::documented_suite,
};

/// The repositories and their language: per language, issue 16's five (the first five of
/// the fetched list), then issue 30's five (among the most-starred projects of the
/// language).
pub const REPOSITORIES: &[(&str, Language)] = &[
    ("pallets/click", Language::Python),
    ("pallets/flask", Language::Python),
    ("python-attrs/attrs", Language::Python),
    ("psf/requests", Language::Python),
    ("tqdm/tqdm", Language::Python),
    ("huggingface/transformers", Language::Python),
    ("django/django", Language::Python),
    ("yt-dlp/yt-dlp", Language::Python),
    ("fastapi/fastapi", Language::Python),
    ("home-assistant/core", Language::Python),
    ("expressjs/express", Language::Node),
    ("tj/commander.js", Language::Node),
    ("npm/node-semver", Language::Node),
    ("yargs/yargs", Language::Node),
    ("debug-js/debug", Language::Node),
    ("facebook/react", Language::Node),
    ("vuejs/core", Language::Node),
    ("vercel/next.js", Language::Node),
    ("axios/axios", Language::Node),
    ("mrdoob/three.js", Language::Node),
    ("dtolnay/anyhow", Language::Rust),
    ("dtolnay/thiserror", Language::Rust),
    ("rust-lang/log", Language::Rust),
    ("serde-rs/json", Language::Rust),
    ("rust-itertools/itertools", Language::Rust),
    ("denoland/deno", Language::Rust),
    ("tauri-apps/tauri", Language::Rust),
    ("alacritty/alacritty", Language::Rust),
    ("BurntSushi/ripgrep", Language::Rust),
    ("sharkdp/bat", Language::Rust),
    ("spf13/cobra", Language::Go),
    ("sirupsen/logrus", Language::Go),
    ("stretchr/testify", Language::Go),
    ("google/uuid", Language::Go),
    ("gin-gonic/gin", Language::Go),
    ("kubernetes/kubernetes", Language::Go),
    ("ollama/ollama", Language::Go),
    ("fatedier/frp", Language::Go),
    ("gohugoio/hugo", Language::Go),
    ("junegunn/fzf", Language::Go),
];

/// Repositories studied to find families of failure (`--study`): popular projects outside
/// [`REPOSITORIES`], run to learn from, never counted in the measure. A family found here
/// is fixed with a small repository of its own in a test, never by tuning to these.
pub const STUDY: &[(&str, Language)] = &[
    ("pallets/jinja", Language::Python),
    ("encode/httpx", Language::Python),
    ("Textualize/rich", Language::Python),
    ("marshmallow-code/marshmallow", Language::Python),
    ("pypa/packaging", Language::Python),
    ("koajs/koa", Language::Node),
    ("chalk/chalk", Language::Node),
    ("vitejs/vite", Language::Node),
    ("sveltejs/svelte", Language::Node),
    ("rust-lang/regex", Language::Rust),
    ("tokio-rs/bytes", Language::Rust),
    ("chronotope/chrono", Language::Rust),
    ("pallets/werkzeug", Language::Python),
    ("tiangolo/typer", Language::Python),
    ("sindresorhus/got", Language::Node),
    ("clap-rs/clap", Language::Rust),
    // Added 2026-12-06, never run before.
    ("pytest-dev/pytest", Language::Python),
    ("aio-libs/aiohttp", Language::Python),
    ("moment/moment", Language::Node),
    ("sindresorhus/execa", Language::Node),
    ("lodash/lodash", Language::Node),
    ("serde-rs/serde", Language::Rust),
    ("rayon-rs/rayon", Language::Rust),
    ("gorilla/mux", Language::Go),
    // Added 2026-12-06 (seventh session), never run before: a suite its CI names (poetry's
    // `poetry run pytest`), C extensions built in the preparation (psutil, Pillow).
    ("python-poetry/poetry", Language::Python),
    ("giampaolo/psutil", Language::Python),
    ("python-pillow/Pillow", Language::Python),
    // Added 2026-12-06 (eighth session), never run before, chosen for popularity.
    ("pydantic/pydantic", Language::Python),
    ("networkx/networkx", Language::Python),
    ("sqlalchemy/sqlalchemy", Language::Python),
    ("mochajs/mocha", Language::Node),
    ("date-fns/date-fns", Language::Node),
    ("immerjs/immer", Language::Node),
    ("hyperium/http", Language::Rust),
    ("go-chi/chi", Language::Go),
    // Added 2026-12-06 (tenth session), never run before, chosen for popularity.
    ("encode/starlette", Language::Python),
    ("more-itertools/more-itertools", Language::Python),
    ("pytest-dev/pluggy", Language::Python),
    ("python-jsonschema/jsonschema", Language::Python),
    ("iamkun/dayjs", Language::Node),
    ("validatorjs/validator.js", Language::Node),
    ("uuidjs/uuid", Language::Node),
    ("spf13/pflag", Language::Go),
    // Added 2026-12-06 (twelfth session), never run before, chosen for popularity.
    ("Delgan/loguru", Language::Python),
    ("arrow-py/arrow", Language::Python),
    ("markedjs/marked", Language::Node),
    ("pinojs/pino", Language::Node),
    ("rust-random/rand", Language::Rust),
    ("BurntSushi/walkdir", Language::Rust),
    ("urfave/cli", Language::Go),
    ("labstack/echo", Language::Go),
    // Added 2026-12-06 (twelfth session, a second eight), never run before.
    ("pallets/markupsafe", Language::Python),
    ("jd/tenacity", Language::Python),
    ("fastify/fastify", Language::Node),
    ("winstonjs/winston", Language::Node),
    ("dtolnay/semver", Language::Rust),
    ("BurntSushi/memchr", Language::Rust),
    ("google/go-cmp", Language::Go),
    ("gorilla/websocket", Language::Go),
    // Added 2026-12-07 (thirteenth session), never run before, chosen for popularity.
    ("mahmoud/boltons", Language::Python),
    ("benoitc/gunicorn", Language::Python),
    ("node-fetch/node-fetch", Language::Node),
    ("isaacs/node-glob", Language::Node),
    ("BurntSushi/aho-corasick", Language::Rust),
    ("bitflags/bitflags", Language::Rust),
    ("pkg/errors", Language::Go),
    ("julienschmidt/httprouter", Language::Go),
    // Added 2026-12-07 (fourteenth session), never run before, chosen for popularity.
    ("tornadoweb/tornado", Language::Python),
    ("joke2k/faker", Language::Python),
    ("handlebars-lang/handlebars.js", Language::Node),
    ("ai/nanoid", Language::Node),
    ("uuid-rs/uuid", Language::Rust),
    ("Amanieu/parking_lot", Language::Rust),
    ("BurntSushi/toml", Language::Go),
    ("dustin/go-humanize", Language::Go),
    // Added 2026-12-07 (fourteenth session, second batch), never run before.
    ("Pylons/waitress", Language::Python),
    ("getsentry/responses", Language::Python),
    ("expressjs/body-parser", Language::Node),
    ("sindresorhus/ky", Language::Node),
    ("rust-lang/hashbrown", Language::Rust),
    ("seanmonstar/httparse", Language::Rust),
    ("mitchellh/mapstructure", Language::Go),
    ("patrickmn/go-cache", Language::Go),
    // Added 2026-12-07 (fifteenth session), never run before, chosen for popularity.
    ("paramiko/paramiko", Language::Python),
    ("PyCQA/flake8", Language::Python),
    ("yaml/pyyaml", Language::Python),
    ("theskumar/python-dotenv", Language::Python),
    ("jprichardson/node-fs-extra", Language::Node),
    ("ljharb/qs", Language::Node),
    ("mde/ejs", Language::Node),
    ("micromatch/micromatch", Language::Node),
    ("dtolnay/syn", Language::Rust),
    ("Stebalien/tempfile", Language::Rust),
    ("indexmap-rs/indexmap", Language::Rust),
    ("servo/rust-url", Language::Rust),
    ("go-yaml/yaml", Language::Go),
    ("hashicorp/golang-lru", Language::Go),
    ("fsnotify/fsnotify", Language::Go),
    ("google/btree", Language::Go),
    // Added 2026-12-07 (fifteenth session, second batch), never run before.
    ("pallets/itsdangerous", Language::Python),
    ("agronholm/anyio", Language::Python),
    ("pyparsing/pyparsing", Language::Python),
    ("hynek/structlog", Language::Python),
    ("expressjs/cors", Language::Node),
    ("ladjs/supertest", Language::Node),
    ("auth0/node-jsonwebtoken", Language::Node),
    ("janl/mustache.js", Language::Node),
    ("rust-num/num-traits", Language::Rust),
    ("BurntSushi/byteorder", Language::Rust),
    ("dtolnay/quote", Language::Rust),
    ("tokio-rs/slab", Language::Rust),
    ("golang/groupcache", Language::Go),
    ("kelseyhightower/envconfig", Language::Go),
    ("rs/xid", Language::Go),
    ("gorilla/schema", Language::Go),
    // Added 2026-12-07 (sixteenth session), never run before, chosen for popularity.
    ("encode/uvicorn", Language::Python),
    ("jpadilla/pyjwt", Language::Python),
    ("dateutil/dateutil", Language::Python),
    ("urllib3/urllib3", Language::Python),
    ("caolan/async", Language::Node),
    ("moment/luxon", Language::Node),
    ("helmetjs/helmet", Language::Node),
    ("ramda/ramda", Language::Node),
    ("matklad/once_cell", Language::Rust),
    ("servo/rust-smallvec", Language::Rust),
    ("rust-cli/env_logger", Language::Rust),
    ("crossbeam-rs/crossbeam", Language::Rust),
    ("spf13/afero", Language::Go),
    ("golang-jwt/jwt", Language::Go),
    ("tidwall/gjson", Language::Go),
    ("robfig/cron", Language::Go),
    // Added 2026-12-07 (sixteenth session, second batch), never run before.
    ("pygments/pygments", Language::Python),
    ("Python-Markdown/markdown", Language::Python),
    ("tox-dev/filelock", Language::Python),
    ("sqlalchemy/alembic", Language::Python),
    ("postcss/postcss", Language::Node),
    ("markdown-it/markdown-it", Language::Node),
    ("isaacs/minimatch", Language::Node),
    ("cheeriojs/cheerio", Language::Node),
    ("dtolnay/proc-macro2", Language::Rust),
    ("console-rs/indicatif", Language::Rust),
    ("toml-rs/toml", Language::Rust),
    ("bincode-org/bincode", Language::Rust),
    ("cespare/xxhash", Language::Go),
    ("fatih/color", Language::Go),
    ("gorilla/handlers", Language::Go),
    ("hashicorp/go-multierror", Language::Go),
    // Added 2026-12-07 (sixteenth session, third batch), never run before.
    ("python-hyper/h11", Language::Python),
    ("pallets/blinker", Language::Python),
    ("jshttp/cookie", Language::Node),
    ("expressjs/morgan", Language::Node),
    ("rust-lang/glob", Language::Rust),
    ("Lokathor/bytemuck", Language::Rust),
    ("google/go-querystring", Language::Go),
    ("gobwas/glob", Language::Go),
    // Added 2026-12-07 (sixteenth session, fourth batch), never run before.
    ("python-attrs/cattrs", Language::Python),
    ("hukkin/tomli", Language::Python),
    ("expressjs/serve-static", Language::Node),
    ("sindresorhus/camelcase", Language::Node),
    ("rayon-rs/either", Language::Rust),
    ("dtolnay/itoa", Language::Rust),
    ("spf13/cast", Language::Go),
    ("mitchellh/go-homedir", Language::Go),
    // Added 2026-12-07 (seventeenth session), never run before, chosen for popularity.
    ("python-trio/trio", Language::Python),
    ("tartley/colorama", Language::Python),
    ("kjd/idna", Language::Python),
    ("pytest-dev/pytest-mock", Language::Python),
    ("nodeca/js-yaml", Language::Node),
    ("minimistjs/minimist", Language::Node),
    ("expressjs/multer", Language::Node),
    ("sindresorhus/ora", Language::Node),
    ("rust-bakery/nom", Language::Rust),
    ("time-rs/time", Language::Rust),
    ("dtolnay/paste", Language::Rust),
    ("bluss/arrayvec", Language::Rust),
    ("uber-go/zap", Language::Go),
    ("spf13/viper", Language::Go),
    ("go-playground/validator", Language::Go),
    ("rs/zerolog", Language::Go),
    // Added 2026-12-07 (seventeenth session, second batch), never run before.
    ("encode/django-rest-framework", Language::Python),
    ("Pylons/pyramid", Language::Python),
    ("chaijs/chai", Language::Node),
    ("jashkenas/underscore", Language::Node),
    ("mitsuhiko/similar", Language::Rust),
    ("dtolnay/ryu", Language::Rust),
    ("json-iterator/go", Language::Go),
    ("mattn/go-runewidth", Language::Go),
    // Added 2026-12-07 (seventeenth session, third batch), never run before.
    ("PyGithub/PyGithub", Language::Python),
    ("python-pendulum/pendulum", Language::Python),
    ("isaacs/rimraf", Language::Node),
    ("browserify/resolve", Language::Node),
    ("BurntSushi/rust-csv", Language::Rust),
    ("mitsuhiko/insta", Language::Rust),
    ("go-sql-driver/mysql", Language::Go),
    ("gorilla/sessions", Language::Go),
    // Added 2026-12-07 (eighteenth session), never run before, chosen for popularity.
    ("psf/black", Language::Python),
    ("mkdocs/mkdocs", Language::Python),
    ("acornjs/acorn", Language::Node),
    ("nodemailer/nodemailer", Language::Node),
    ("tafia/quick-xml", Language::Rust),
    ("rust-lang/futures-rs", Language::Rust),
    ("shopspring/decimal", Language::Go),
    ("pelletier/go-toml", Language::Go),
    // Added 2026-12-07 (eighteenth session, second batch), never run before.
    ("python-websockets/websockets", Language::Python),
    ("msgpack/msgpack-python", Language::Python),
    ("websockets/ws", Language::Node),
    ("isaacs/node-lru-cache", Language::Node),
    ("rust-lang/cc-rs", Language::Rust),
    ("tokio-rs/mio", Language::Rust),
    ("Masterminds/semver", Language::Go),
    ("cenkalti/backoff", Language::Go),
    // Added 2026-12-07 (nineteenth session), never run before.
    ("python-babel/babel", Language::Python),
    ("aio-libs/yarl", Language::Python),
    ("hapijs/joi", Language::Node),
    ("yargs/yargs-parser", Language::Node),
    ("petgraph/petgraph", Language::Rust),
    ("pest-parser/pest", Language::Rust),
    ("yuin/goldmark", Language::Go),
    ("jmoiron/sqlx", Language::Go),
    // Added 2026-12-07 (nineteenth session, second batch), never run before.
    ("pytest-dev/pytest-xdist", Language::Python),
    ("aio-libs/multidict", Language::Python),
    ("petkaantonov/bluebird", Language::Node),
    ("mozilla/nunjucks", Language::Node),
    ("rust-num/num-bigint", Language::Rust),
    ("dtolnay/serde-yaml", Language::Rust),
    ("olekukonko/tablewriter", Language::Go),
    ("jessevdk/go-flags", Language::Go),
    // Added 2026-12-07 (nineteenth session, third batch), never run before.
    ("python-hyper/hyperframe", Language::Python),
    ("Kludex/python-multipart", Language::Python),
    ("sindresorhus/p-queue", Language::Node),
    ("jshttp/mime-types", Language::Node),
    ("rust-lang/libm", Language::Rust),
    ("rust-num/num-rational", Language::Rust),
    ("kr/pretty", Language::Go),
    ("pmezard/go-difflib", Language::Go),
    // Added 2026-12-07 (nineteenth session, fourth batch), never run before.
    ("benjaminp/six", Language::Python),
    ("simplejson/simplejson", Language::Python),
    ("kriskowal/q", Language::Node),
    ("jshttp/http-errors", Language::Node),
    ("unicode-rs/unicode-width", Language::Rust),
    ("tkaitchuck/aHash", Language::Rust),
    ("davecgh/go-spew", Language::Go),
    ("stretchr/objx", Language::Go),
    // Added 2026-12-07 (twentieth session, first batch), never run before.
    ("pexpect/pexpect", Language::Python),
    ("jazzband/tablib", Language::Python),
    ("node-formidable/formidable", Language::Node),
    ("expressjs/session", Language::Node),
    ("rust-lang/flate2-rs", Language::Rust),
    ("dtolnay/async-trait", Language::Rust),
    ("hashicorp/hcl", Language::Go),
    ("sergi/go-diff", Language::Go),
    // Added 2026-12-08 (twentieth session, second batch), never run before.
    ("scrapy/scrapy", Language::Python),
    ("pallets/quart", Language::Python),
    ("ladjs/superagent", Language::Node),
    ("sindresorhus/globby", Language::Node),
    ("hyperium/hyper", Language::Rust),
    ("XAMPPRocky/tokei", Language::Rust),
    ("urfave/negroni", Language::Go),
    ("google/go-github", Language::Go),
];

/// The timeout of a review's suite run: the `suite_timeout` setting's default.
fn suite_timeout() -> Duration {
    Duration::from_secs(proven_config::SUITE_TIMEOUT_DEFAULT.parse().unwrap_or(900))
}

struct Options {
    repos: PathBuf,
    only: Vec<String>,
    out: Option<PathBuf>,
    records: Option<PathBuf>,
    /// Run [`STUDY`] instead of the measured list.
    study: bool,
}

impl Options {
    fn list(&self) -> &'static [(&'static str, Language)] {
        if self.study { STUDY } else { REPOSITORIES }
    }
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        repos: PathBuf::new(),
        only: Vec::new(),
        out: None,
        records: None,
        study: false,
    };
    let mut repos = None;
    let mut it = args.iter();
    let mut in_only = false;
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("suites: {name} needs a value"))
        };
        match arg.as_str() {
            "--repos" => repos = Some(PathBuf::from(value("--repos")?)),
            "--out" => options.out = Some(PathBuf::from(value("--out")?)),
            "--records" => options.records = Some(PathBuf::from(value("--records")?)),
            "--study" => options.study = true,
            "--only" => {
                options.only.push(value("--only")?);
                in_only = true;
                continue;
            }
            a if in_only && !a.starts_with("--") => {
                options.only.push(a.to_string());
                continue;
            }
            a => return Err(format!("suites: unexpected argument {a:?}; {}", USAGE)),
        }
        in_only = false;
    }
    options.repos = repos.ok_or_else(|| format!("suites: --repos DIR is required; {USAGE}"))?;
    for name in &options.only {
        if !options
            .list()
            .iter()
            .any(|(r, _)| matches_name(r, name.as_str()))
        {
            let known: Vec<&str> = options.list().iter().map(|r| r.0).collect();
            return Err(format!(
                "suites: --only {name:?} names none of the repositories: {}",
                known.join(", ")
            ));
        }
    }
    Ok(options)
}

const USAGE: &str =
    "usage: cargo xtask suites --repos DIR [--study] [--only NAME…] [--out FILE] [--records DIR]";

/// `owner/name`, `owner+name` or `name`.
fn matches_name(repository: &str, name: &str) -> bool {
    let short = repository.rsplit('/').next().unwrap_or(repository);
    name == repository || name == repository.replace('/', "+") || name == short
}

/// The git directory of a repository under `dir`.
fn git_dir(dir: &Path, repository: &str) -> Option<PathBuf> {
    let base = dir.join(repository.replace('/', "+"));
    [base.join("repo"), base]
        .into_iter()
        .find(|p| git2::Repository::open(p).is_ok())
}

/// One repository's row.
struct Row {
    repository: String,
    language: Language,
    commit: String,
    /// `passed`, `test failed`, `environment failure`.
    outcome: &'static str,
    ran: Option<(u64, u64, u64, u64)>,
    not_prepared: Vec<String>,
    /// Files of the tree whose objects the repository's snapshot lacks.
    missing: Vec<String>,
    cause: String,
    suite: String,
    seconds: f64,
}

/// The first `max` characters of `text`, with an ellipsis when it was longer.
fn short(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// "failing: " and the first four tests the run named as failing (the run record's names,
/// read by the sandbox's own reader of each runner's output, the whole of it), each once.
fn failing_cause(names: &[String]) -> String {
    let mut unique: Vec<&str> = Vec::new();
    for name in names {
        if !unique.contains(&name.as_str()) {
            unique.push(name);
        }
    }
    let shown = &unique[..unique.len().min(4)];
    let mut cause = format!("failing: {}", shown.join(", "));
    let more = unique.len() - shown.len();
    if more > 0 {
        let _ = write!(cause, " and {more} more");
    }
    cause
}

/// The last lines of a run's output that look like the reason it stopped.
fn error_hint(output: &str) -> Option<String> {
    output
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| {
            let lower = l.to_ascii_lowercase();
            (lower.contains("error") || lower.contains("not found") || lower.contains("requires"))
                && l.len() > 8
        })
        .map(|l| l.chars().take(200).collect())
}

/// What a lookup of a host prints where there is no network (Node's getaddrinfo, glibc's
/// for Python and Rust, Go's resolver).
const LOOKUP_FAILURES: &[&str] = &[
    "getaddrinfo EAI_AGAIN",
    "getaddrinfo ENOTFOUND",
    "Temporary failure in name resolution",
    ": no such host",
];

/// The words a row gets when its failing tests failed on network lookups: the corpus's rules
/// count them the world's.
const NETWORK_WORDS: &str = "getaddrinfo EAI_AGAIN: the tests need the network";

/// The cause of a run whose tests failed: the failing tests' names, and, where the output
/// has at least as many lines saying a host lookup failed as there are failing tests, that
/// they needed the network (node-fetch's tests of `https://github.com/` and httpbin.org), as
/// far as that count shows.
fn test_failed_cause(failing: &[String], failed: u64, output: &str) -> String {
    let mut cause = failing_cause(failing);
    let lookups = output
        .lines()
        .filter(|l| LOOKUP_FAILURES.iter().any(|w| l.contains(w)))
        .count() as u64;
    if failed > 0 && lookups >= failed {
        let _ = write!(
            cause,
            " — {lookups} failed network lookups for {failed} failing tests ({NETWORK_WORDS})"
        );
    }
    cause
}

fn row_of(
    repository: &str,
    language: Language,
    suite: &str,
    record: &RunRecord,
    seconds: f64,
) -> Row {
    let output = format!("{}\n{}", record.output.head, record.output.tail);
    let (outcome, cause) = match &record.outcome {
        Outcome::Passed => ("passed", String::new()),
        Outcome::TestFailed => (
            "test failed",
            test_failed_cause(
                &record.failing,
                record.tests.map_or(0, |t| t.failed + t.errors),
                &output,
            ),
        ),
        Outcome::EnvironmentError { reason } => {
            let mut cause = reason.clone();
            if let Some(hint) = error_hint(&output) {
                let _ = write!(cause, " — {hint}");
            }
            ("environment failure", cause)
        }
    };
    let deps = record.dependencies.as_ref();
    let mut not_prepared: Vec<String> = deps
        .map(|d| {
            d.not_prepared
                .iter()
                .map(|n| format!("{} ({})", n.what, short(&n.reason, 100)))
                .collect()
        })
        .unwrap_or_default();
    if deps.is_some_and(|d| d.resolved) {
        not_prepared.push("(versions resolved: no lock file)".into());
    }
    if !record.tree.missing.is_empty() {
        not_prepared.push(format!(
            "{} (the repository's snapshot lacks their objects)",
            short(&record.tree.missing.join(", "), 200)
        ));
    }
    Row {
        repository: repository.to_string(),
        language,
        commit: record.tree.commit.chars().take(12).collect(),
        outcome,
        ran: record
            .tests
            .map(|t| (t.ran(), t.passed, t.failed + t.errors, t.skipped)),
        not_prepared,
        missing: record.tree.missing.clone(),
        cause,
        suite: suite.to_string(),
        seconds,
    }
}

fn failure_row(repository: &str, language: Language, commit: &str, cause: String) -> Row {
    Row {
        repository: repository.to_string(),
        language,
        commit: commit.chars().take(12).collect(),
        outcome: "environment failure",
        ran: None,
        not_prepared: Vec::new(),
        missing: Vec::new(),
        cause,
        suite: String::new(),
        seconds: 0.0,
    }
}

/// The `proven-sandbox` binary (the forwarder a preparation container runs to reach the
/// egress proxy), built first.
fn forwarder() -> Result<Forwarder, String> {
    crate::cargo(&["build", "-p", "proven-sandbox", "--bin", "proven-sandbox"])?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::root().join("target"));
    let path = target.join("debug").join("proven-sandbox");
    if !path.is_file() {
        return Err(format!("suites: no {} after the build", path.display()));
    }
    Ok(Forwarder {
        path,
        args: vec!["forward".into()],
    })
}

/// The images of other toolchains the table's projects declare (the default images hold
/// one Python and one Node each), built (a no-op when current) and offered to every run
/// when PROVEN_SANDBOX_IMAGES names none, so that one command measures on a fresh machine.
const OTHER_TOOLCHAINS: &[&str] = &[
    "python3.9",
    "python3.10",
    "python3.11",
    "python3.12",
    "python3.13",
    "node18",
    "node22",
    // The Node LTS since 2025-10: a project of 2026 whose CI says `lts/*` runs on it.
    "node24",
];

/// The environment the settings are read from: the caller's, with the images of
/// [`OTHER_TOOLCHAINS`] offered unless it names its own.
fn settings_env() -> Result<Vec<(String, String)>, String> {
    let mut vars: Vec<(String, String)> = std::env::vars().collect();
    if vars.iter().any(|(k, _)| k == "PROVEN_SANDBOX_IMAGES") {
        return Ok(vars);
    }
    eprintln!(
        "xtask: suites: building the images {} (scripts/sandbox-images)",
        OTHER_TOOLCHAINS.join(" ")
    );
    let status = std::process::Command::new(crate::root().join("scripts/sandbox-images"))
        .args(OTHER_TOOLCHAINS)
        .status()
        .map_err(|e| format!("suites: cannot run scripts/sandbox-images: {e}"))?;
    if !status.success() {
        return Err("suites: scripts/sandbox-images failed".into());
    }
    let images: Vec<String> = OTHER_TOOLCHAINS
        .iter()
        .map(|n| format!("{n}=proven-sandbox-{n}:local"))
        .collect();
    vars.push(("PROVEN_SANDBOX_IMAGES".into(), images.join(",")));
    Ok(vars)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    let forwarder = forwarder()?;
    let settings = proven_config::Layers::from_env(settings_env()?)
        .and_then(|l| l.resolve())
        .map_err(|e| format!("suites: settings: {e}"))?;
    let config = SandboxConfig::from_settings(&settings.sandbox).map_err(|e| e.to_string())?;
    let config = SandboxConfig {
        forwarder: Some(forwarder),
        // One at a time, cold, as a one-off `proven sandbox run` does.
        pool_size: 0,
        max_concurrent_runs: 1,
        ..config
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("suites: start the async runtime: {e}"))?;
    let started = time::OffsetDateTime::now_utc();
    let load_before = load_average();
    let rows = runtime.block_on(run_all(&options, config))?;
    let load_after = load_average();
    let mut text = String::new();
    let date = started
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let _ = writeln!(
        text,
        "Suites at head, {date}: `cargo xtask suites {}`\n",
        args.join(" ")
    );
    let _ = writeln!(
        text,
        "Machine: {} cores; load average (1 min) {load_before} at the start, {load_after} at the end.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    text.push_str(&table(&rows));
    print!("{text}");
    if let Some(out) = &options.out {
        std::fs::write(out, &text).map_err(|e| format!("write {}: {e}", out.display()))?;
        eprintln!("xtask: wrote {}", out.display());
    }
    Ok(())
}

async fn run_all(options: &Options, config: SandboxConfig) -> Result<Vec<Row>, String> {
    let sandbox = Sandbox::connect(config).await.map_err(|e| e.to_string())?;
    if let Some(dir) = &options.records {
        std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    }
    let mut rows = Vec::new();
    for (repository, language) in options.list() {
        let (repository, language) = (*repository, *language);
        if !options.only.is_empty() && !options.only.iter().any(|n| matches_name(repository, n)) {
            continue;
        }
        eprintln!("xtask: suites: {repository} ({language})");
        let Some(dir) = git_dir(&options.repos, repository) else {
            rows.push(failure_row(
                repository,
                language,
                "",
                format!(
                    "no git repository at {}",
                    options.repos.join(repository.replace('/', "+")).display()
                ),
            ));
            continue;
        };
        let (commit, committed_at, suite) = match head_suite(&dir, language) {
            Ok(found) => found,
            Err(e) => {
                rows.push(failure_row(repository, language, "", e));
                continue;
            }
        };
        let command = suite.run.command.join(" ");
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let request = suite_request(&dir, &commit, committed_at, now, language, &suite);
        let clock = Instant::now();
        let result = sandbox.run(&request).await;
        let seconds = clock.elapsed().as_secs_f64();
        let shown = format!("`{command}` ({})", suite.source);
        let row = match result {
            Ok(record) => {
                if let Some(dir) = &options.records {
                    let path = dir.join(format!("{}.json", repository.replace('/', "+")));
                    let json = serde_json::to_string_pretty(&record).unwrap_or_default();
                    std::fs::write(&path, json)
                        .map_err(|e| format!("write {}: {e}", path.display()))?;
                }
                row_of(repository, language, &shown, &record, seconds)
            }
            Err(e) => {
                let mut row = failure_row(repository, language, &commit, e.to_string());
                row.suite = shown;
                row.seconds = seconds;
                row
            }
        };
        eprintln!(
            "xtask: suites: {repository}: {} ({:.0} s) {}",
            row.outcome, row.seconds, row.cause
        );
        rows.push(row);
    }
    Ok(rows)
}

/// The run of `suite` at `commit`, as a review's package suite step runs it: with the
/// suite's own budget, and what the project does not pin resolved as of the commit's time
/// when it is older than a review's threshold (a snapshot's head two years old met today's
/// click, whose new deprecation typer's `filterwarnings = error` made 211 collection
/// errors), today's releases for a young one.
fn suite_request(
    dir: &Path,
    commit: &str,
    committed_at: i64,
    now: i64,
    language: Language,
    suite: &proven_sandbox::suite::DocumentedSuite,
) -> RunRequest {
    let mut request = RunRequest::new(dir, commit, language, suite.run.command.clone())
        .with_timeout(suite_timeout())
        .as_whole_suite();
    for (k, v) in &suite.run.env {
        request = request.with_env(k.clone(), v.clone());
    }
    match proven_review::core::review::resolve_before(committed_at, now)
        .and_then(|at| time::OffsetDateTime::from_unix_timestamp(at).ok())
    {
        Some(at) => request.resolved_as_of(at),
        None => request,
    }
}

/// The 1-minute load average (Linux), or `?`: a busy machine slows every run toward its
/// timeout, so the table says how busy it was.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// HEAD's commit, its commit time (Unix seconds), and the suite the project documents at
/// it.
fn head_suite(
    dir: &Path,
    language: Language,
) -> Result<(String, i64, proven_sandbox::suite::DocumentedSuite), String> {
    let repo = git2::Repository::open(dir).map_err(|e| format!("open {}: {e}", dir.display()))?;
    let commit = repo
        .revparse_single("HEAD")
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| format!("{}: HEAD: {e}", dir.display()))?;
    let tree = commit.tree().map_err(|e| e.to_string())?;
    let read = |path: &str| -> Option<String> {
        if let Some(dir) = path.strip_suffix('/') {
            let folder = repo
                .find_tree(tree.get_path(Path::new(dir)).ok()?.id())
                .ok()?;
            let names: Vec<String> = folder
                .iter()
                .filter(|e| e.kind() == Some(git2::ObjectType::Blob))
                .filter_map(|e| e.name().ok().map(str::to_string))
                .collect();
            return Some(names.join("\n"));
        }
        let entry = tree.get_path(Path::new(path)).ok()?;
        let blob = repo.find_blob(entry.id()).ok()?;
        String::from_utf8(blob.content().to_vec()).ok()
    };
    let suite = documented_suite(language, &read);
    Ok((commit.id().to_string(), commit.time().seconds(), suite))
}

fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    out.push_str("| repository | language | commit | outcome | tests ran / passed / failed (skipped) | could not be prepared | cause | whose cause | suite | seconds |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        let counts = r.ran.map_or_else(
            || "—".to_string(),
            |(ran, passed, failed, skipped)| format!("{ran} / {passed} / {failed} ({skipped})"),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} |",
            r.repository,
            r.language,
            if r.commit.is_empty() {
                "—"
            } else {
                &r.commit
            },
            r.outcome,
            counts,
            cell(&if r.not_prepared.is_empty() {
                "—".to_string()
            } else {
                r.not_prepared.join("; ")
            }),
            cell(if r.cause.is_empty() { "—" } else { &r.cause }),
            whose(r).unwrap_or_else(|| "—".into()),
            cell(&r.suite),
            r.seconds
        );
    }
    out.push('\n');
    out.push_str(
        "| language | repositories | passed | test failed | environment failure | pass ratio |\n",
    );
    out.push_str("|---|---|---|---|---|---|\n");
    let mut by_language: BTreeMap<&str, (usize, usize, usize, usize)> = BTreeMap::new();
    for r in rows {
        let e = by_language.entry(r.language.as_str()).or_default();
        e.0 += 1;
        match r.outcome {
            "passed" => e.1 += 1,
            "test failed" => e.2 += 1,
            _ => e.3 += 1,
        }
    }
    let mut total = (0, 0, 0, 0);
    for language in Language::ALL {
        if let Some(&(n, p, t, e)) = by_language.get(language.as_str()) {
            let _ = writeln!(
                out,
                "| {language} | {n} | {p} | {t} | {e} | {} |",
                ratio(p, n)
            );
            total = (total.0 + n, total.1 + p, total.2 + t, total.3 + e);
        }
    }
    let _ = writeln!(
        out,
        "| **total** | {} | {} | {} | {} | **{}** |",
        total.0,
        total.1,
        total.2,
        total.3,
        ratio(total.1, total.0)
    );
    let failed: Vec<String> = rows.iter().filter_map(whose).collect();
    let proven = failed.iter().filter(|w| *w == "Proven").count();
    let _ = writeln!(
        out,
        "\nFailures by whose cause: the world's {} of {} repositories; Proven's causes: {}.",
        failed.len() - proven,
        rows.len(),
        ratio(proven, rows.len())
    );
    out
}

/// Whose cause a failure is: `the world: …` when the run's words show one of the world's
/// causes (the corpus's rules), else `Proven`; None for a pass.
fn whose(r: &Row) -> Option<String> {
    if r.outcome == "passed" {
        return None;
    }
    // Tests that failed where the tree lacks files (the fetch tool's snapshots leave out
    // files of 4 MiB and up: alacritty's reference grids) read what the snapshot never had.
    if r.outcome == "test failed" && !r.missing.is_empty() {
        return Some("the world: the repository's snapshot lacks files the tree holds".into());
    }
    if let Some(w) = from_off_the_registries(r) {
        return Some(format!("the world: {w}"));
    }
    let words = format!("{} {}", r.cause, r.not_prepared.join("; "));
    Some(match crate::corpus::causes::world_cause(None, &words) {
        Some(w) => format!("the world: {w}"),
        None => "Proven".into(),
    })
}

/// A failure that is the network's: a registry the sandbox may reach did not answer from
/// this machine (the forwarder's `HOST:PORT (unreachable)`: proxy.golang.org here), or the
/// package the run misses by name (`Cannot find package 'NAME'`) is one the preparation
/// named as not prepared because it, or a dependency of it, comes from a host that is no
/// registry (a GitHub tarball: marked's `@markedjs/testutils` needs `marked-repo` from
/// one).
fn from_off_the_registries(r: &Row) -> Option<String> {
    let cause = r.cause.to_lowercase();
    if cause.contains("refused on the way out") && cause.contains(" (unreachable)") {
        return Some("needs the network (a registry this machine cannot reach)".into());
    }
    r.not_prepared.iter().find_map(|entry| {
        let (name, reason) = entry.split_once(" (")?;
        let elsewhere = ["comes from http", "resolved from http", "comes from git", "not one of the operator's registries", "cannot fetch"]
            .iter()
            .any(|w| reason.contains(w));
        let missed = ["cannot find package '", "cannot find module '", "no module named '"]
            .iter()
            .any(|w| cause.contains(&format!("{w}{}", name.to_lowercase())));
        (elsewhere && missed).then(|| {
            format!("needs a dependency from a host that is no registry ({name}), which this machine cannot reach")
        })
    })
}

fn ratio(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "—".into();
    }
    format!(
        "{part}/{whole} = {:.0}%",
        part as f64 * 100.0 / whole as f64
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_has_forty_repositories_ten_per_language_issue_16s_twenty_kept() {
        assert!(REPOSITORIES.len() >= 40);
        for language in Language::ALL {
            let n = REPOSITORIES.iter().filter(|r| r.1 == language).count();
            assert!(n >= 10, "{language}: {n}");
        }
        for kept in [
            "pallets/click",
            "tqdm/tqdm",
            "expressjs/express",
            "debug-js/debug",
            "dtolnay/anyhow",
            "rust-itertools/itertools",
            "spf13/cobra",
            "gin-gonic/gin",
        ] {
            assert!(REPOSITORIES.iter().any(|r| r.0 == kept), "{kept}");
        }
        let mut names: Vec<&str> = REPOSITORIES.iter().map(|r| r.0).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), REPOSITORIES.len(), "a repository listed twice");
        // What is studied is never measured.
        for (studied, _) in STUDY {
            assert!(
                !names.contains(studied),
                "{studied} is studied and measured"
            );
        }
    }

    /// A head older than a review's threshold is prepared as a review of it would be: what
    /// the project does not pin, as of its commit's time (typer's two-year-old head met
    /// today's click and its new deprecation); a young head takes today's releases.
    #[test]
    fn a_head_is_prepared_as_a_review_of_it_is() {
        let suite = documented_suite(Language::Python, &|_: &str| None);
        let day = 86_400;
        let committed_at = 1_728_333_496; // 2024-10-07T20:38:16Z
        let old = suite_request(
            Path::new("/r"),
            "c0ffee",
            committed_at,
            committed_at + 700 * day,
            Language::Python,
            &suite,
        );
        assert_eq!(old.resolve_before.as_deref(), Some("2024-10-07T20:38:16Z"));
        let young = suite_request(
            Path::new("/r"),
            "c0ffee",
            committed_at,
            committed_at + 3 * day,
            Language::Python,
            &suite,
        );
        assert_eq!(young.resolve_before, None);
        assert_eq!(old.timeout, Some(suite_timeout()));
        assert!(
            old.whole_suite,
            "a suite has the suite's memory, as a review's"
        );
    }

    #[test]
    fn names_match_owner_slash_name_plus_and_short() {
        assert!(matches_name("pallets/click", "click"));
        assert!(matches_name("pallets/click", "pallets+click"));
        assert!(matches_name("pallets/click", "pallets/click"));
        assert!(!matches_name("pallets/click", "flask"));
        let args: Vec<String> = [
            "--repos", "/r", "--only", "click", "flask", "log", "--out", "x",
        ]
        .map(String::from)
        .to_vec();
        let o = parse(&args).expect("parses");
        assert_eq!(o.only, ["click", "flask", "log"]);
        assert!(
            parse(&[
                "--repos".into(),
                "/r".into(),
                "--only".into(),
                "nope".into()
            ])
            .is_err()
        );
        assert!(parse(&[]).is_err());
    }

    #[test]
    fn every_failure_is_the_worlds_or_provens() {
        let row = |outcome: &'static str, cause: &str| Row {
            repository: "o/r".into(),
            language: Language::Python,
            commit: String::new(),
            outcome,
            ran: None,
            not_prepared: Vec::new(),
            missing: Vec::new(),
            cause: cause.into(),
            suite: String::new(),
            seconds: 0.0,
        };
        let rows = [
            row("passed", ""),
            row(
                "environment failure",
                "a collection error — socket.gaierror: [Errno -3] Temporary failure in name resolution",
            ),
            row("test failed", "failing: tests/t.py::test_a"),
            Row {
                missing: vec!["ref/grid.json".into()],
                ..row("test failed", "failing: history")
            },
        ];
        assert_eq!(whose(&rows[0]), None);
        assert_eq!(
            whose(&rows[1]).as_deref(),
            Some("the world: needs the network")
        );
        assert_eq!(whose(&rows[2]).as_deref(), Some("Proven"));
        assert_eq!(
            whose(&rows[3]).as_deref(),
            Some("the world: the repository's snapshot lacks files the tree holds")
        );
        let text = table(&rows);
        assert!(
            text.contains("the world's 2 of 4 repositories; Proven's causes: 1/4 = 25%."),
            "{text}"
        );
    }

    /// A registry that did not answer from this machine, and a missing package the
    /// preparation left out because it comes from a host that is no registry, are the
    /// network's; a package left out for another reason, or one the run does not miss, is
    /// not.
    #[test]
    fn what_comes_from_off_the_registries_is_the_worlds() {
        let row = |cause: &str, not_prepared: &[&str]| Row {
            repository: "o/r".into(),
            language: Language::Node,
            commit: String::new(),
            outcome: "environment failure",
            ran: None,
            not_prepared: not_prepared.iter().map(|s| s.to_string()).collect(),
            missing: Vec::new(),
            cause: cause.into(),
            suite: String::new(),
            seconds: 0.0,
        };
        let go = row(
            "preparing go dependencies from go.mod failed: the preparation exited Some(1) (refused on the way out: proxy.golang.org:443 (unreachable)): go: …: Bad Gateway",
            &[],
        );
        assert_eq!(
            whose(&go).as_deref(),
            Some("the world: needs the network (a registry this machine cannot reach)")
        );
        let missed = "a test file could not load (ERR_MODULE_NOT_FOUND) — Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@markedjs/testutils' imported from /work/test/run.js";
        let tarball = "@markedjs/testutils (its dependency marked-repo comes from https://github.com/markedjs/marked/tarball/v18.0.0 (package-lock.json), whi…)";
        assert_eq!(
            whose(&row(missed, &[tarball])).as_deref(),
            Some(
                "the world: needs a dependency from a host that is no registry (@markedjs/testutils), which this machine cannot reach"
            )
        );
        let other = "@markedjs/testutils (its build failed)";
        assert_eq!(whose(&row(missed, &[other])).as_deref(), Some("Proven"));
        // Failing tests that failed on host lookups, as many as they are, need the network;
        // one more failing test than lookups is not shown to.
        let fetch = "  1) should support https request:\n     FetchError: request to https://github.com/ failed, reason: getaddrinfo EAI_AGAIN github.com\n  2) forwards:\n     FetchError: request to https://httpbin.org/get failed, reason: getaddrinfo EAI_AGAIN httpbin.org\n";
        let names = [
            "should support https request".to_string(),
            "forwards".to_string(),
        ];
        let failed = |n: u64| Row {
            outcome: "test failed",
            ..row(&test_failed_cause(&names, n, fetch), &[])
        };
        assert_eq!(
            whose(&failed(2)).as_deref(),
            Some("the world: needs the network")
        );
        assert_eq!(whose(&failed(3)).as_deref(), Some("Proven"));
        let not_missed = "failing: test/a.js › parses";
        assert_eq!(
            whose(&Row {
                outcome: "test failed",
                ..row(not_missed, &[tarball])
            })
            .as_deref(),
            Some("Proven")
        );
    }

    #[test]
    fn cells_are_one_line_without_pipes_or_colours() {
        assert_eq!(cell("\u{1b}[91mERROR\u{1b}[39m a|b\nc"), "ERROR a\\|b c");
        assert_eq!(short("abcdef", 3), "abc…");
        assert_eq!(short("abc", 3), "abc");
    }

    #[test]
    fn a_failure_names_the_first_four_tests_the_run_named_each_once() {
        let names: Vec<String> = ["a", "b", "a", "c", "d", "e", "f"]
            .map(String::from)
            .to_vec();
        assert_eq!(failing_cause(&names), "failing: a, b, c, d and 2 more");
        assert_eq!(failing_cause(&names[..2]), "failing: a, b");
    }
}
