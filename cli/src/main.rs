//! `proven`: the command line. Glue only: parse arguments, load the one `Config`, open the
//! store, call the libraries, render, and turn outcomes into the documented exit codes.

mod ask;
mod batch;
mod conformance;
mod db;
mod exit;
mod github;
mod livecheck;
mod replay;
mod reviews;
mod sandbox;
mod world;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use proven_config::{ColorChoice, Config, Layers};
use proven_report::{Format, Report, Status};
use proven_review::{ReviewError, Trace};
use proven_store::ReviewRequest;
use proven_store::Store;

use crate::exit::Exit;

#[derive(Parser)]
#[command(
    name = "proven",
    version,
    about = "A code reviewer that reports only what it can prove.",
    after_help = exit::HELP
)]
struct Cli {
    /// Colour in text output (overrides PROVEN_COLOR).
    #[arg(long, global = true, value_parser = ["auto", "always", "never"])]
    color: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Review a change: the commits between BASE and HEAD of a git repository.
    #[command(after_help = exit::HELP)]
    Review(ReviewArgs),
    /// Ask a question about a repository: an answer of cited claims, each citation checked
    /// against the file, attacked by the refuter and the coverage auditor.
    Ask(ask::AskArgs),
    /// Dependency commands.
    #[command(subcommand)]
    Deps(DepsCommand),
    /// Advisory database commands.
    #[command(subcommand)]
    Db(DbCommand),
    /// List the reviews `proven review` kept in this store (id, status, date, base..head,
    /// repository), newest first.
    Reviews(reviews::ReviewsArgs),
    /// What the World Model holds of a repository: its files, their packages, the
    /// advisories affecting those and the findings, each edge with its validity interval.
    World(world::WorldArgs),
    /// Print a stored review's trace as JSON Lines.
    Trace {
        /// The review id printed by `proven review`.
        review_id: String,
    },
    /// Render a stored review's result again, in any format (exit code as the review's).
    Show {
        /// The review id printed by `proven review`.
        review_id: String,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Run a finding's evidence again from its record (a stored review, or a JSON report as
    /// a file): each run's commit, image, test and command in the sandbox, each advisory
    /// finding against the store's rows now; say per run whether it holds (exit 9 if not).
    Replay(replay::ReplayArgs),
    /// Configuration commands.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Run the HTTP API (listens on PROVEN_LISTEN; needs PROVEN_DATABASE_URL, PROVEN_REDIS_URL).
    Serve,
    /// Run a worker serving the given queue families.
    Worker {
        /// Comma-separated queue families: evidence, control, model, sandbox.
        #[arg(long, default_value = "evidence,control,model", value_delimiter = ',')]
        steps: Vec<String>,
    },
    /// Check each configured service (store, queue, Docker, models) and name what is missing.
    Livecheck,
    /// Tenant commands.
    #[command(subcommand)]
    Tenant(TenantCommand),
    /// Batch commands: re-review what an advisory change set newly affects; a batch's
    /// progress and comparison; a tenant's batches.
    #[command(subcommand)]
    Batch(batch::BatchCommand),
    /// Proven on GitHub: `action` reviews the pull request of the workflow it runs in and
    /// posts the review, the check run and SARIF with the workflow's token.
    #[command(subcommand)]
    Github(github::GithubCommand),
    /// Version-comparison vectors.
    #[command(subcommand)]
    Vectors(VectorsCommand),
    /// Sandbox commands: run one command on one tree in a container; build the images.
    #[command(subcommand)]
    Sandbox(sandbox::SandboxCommand),
    /// Serve an engine to Meterless's conformance runners: one JSON request a line on
    /// standard input, one JSON answer a line (scripts/conformance drives it).
    ConformanceServe {
        /// The engine: world-model.
        #[arg(long)]
        engine: String,
        /// The directory that holds the engine's state between calls.
        #[arg(long)]
        state: PathBuf,
    },
}

#[derive(Subcommand)]
enum VectorsCommand {
    /// Evaluate every row of vectors files (the ../shared/data/vectors format) with Proven's
    /// version rules; print agreement per ecosystem and kind, then each disagreeing row.
    /// Exit 0 only when every row agrees or is a known decision.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print a machine-readable summary.
        #[arg(long)]
        json: bool,
        /// Known decisions (JSON Lines); default: the list built into Proven.
        #[arg(long, value_name = "FILE")]
        known: Option<PathBuf>,
    },
}

#[derive(Args, Clone)]
pub(crate) struct OutputArgs {
    /// Output format.
    #[arg(long, default_value = "text", value_parser = ["text", "json", "markdown", "html", "sarif", "github"])]
    pub(crate) format: String,
    /// Write the output to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

#[derive(Args)]
pub(crate) struct ReviewArgs {
    /// The git repository.
    #[arg(long, default_value = ".")]
    pub(crate) repo: PathBuf,
    /// The base revision (branch, tag, SHA or expression such as HEAD~1).
    #[arg(long)]
    pub(crate) base: String,
    /// The head revision.
    #[arg(long, default_value = "HEAD")]
    pub(crate) head: String,
    /// Which commit the head is compared with: `merge-base` (default) reads the change from
    /// the merge base of BASE and HEAD, as GitHub's "Files changed" shows a pull request
    /// (what BASE did after the head's branch left it is not the change's; the report names
    /// the commit used); `two-dot` compares with BASE as named.
    #[arg(long, default_value = "merge-base", value_parser = ["merge-base", "two-dot"])]
    pub(crate) diff: String,
    /// Sample mode: answer every model call and sandbox run from this cassette, with no
    /// network and no Docker (written by `--record`).
    #[arg(long, value_name = "CASSETTE", conflicts_with = "record")]
    pub(crate) sample: Option<PathBuf>,
    /// Record every model answer and sandbox run of this review to a cassette.
    #[arg(long, value_name = "CASSETTE")]
    pub(crate) record: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Subcommand)]
enum DepsCommand {
    /// Check one lock file or manifest (no change): every affected package is a finding.
    Scan {
        file: PathBuf,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Subcommand)]
enum DbCommand {
    /// Import advisories: OSV JSON, JSON Lines, directories or zip exports; CISA KEV JSON;
    /// FIRST EPSS CSV; RustSec's advisory database (`.tar.gz` or directory) for the
    /// vulnerable functions reachability reads. Idempotent: a record is replaced only by a
    /// newer one.
    Import {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Read advisory sources as one change set and print what changed (new, modified and
    /// withdrawn advisories, CVEs new in KEV). A source is a directory or file as `import`
    /// reads them (OSV `ECOSYSTEM/all.zip` exports, JSON/JSONL directories, KEV JSON, EPSS
    /// CSV, RustSec's advisory database), or an http(s):// URL of one such file where the
    /// network allows. Run it from
    /// cron or a Kubernetes CronJob for a schedule.
    Sync {
        #[arg(required = true, value_name = "SOURCE")]
        sources: Vec<String>,
        /// Print the change set as JSON (its id and the ids of what changed, by kind).
        #[arg(long)]
        json: bool,
        /// Then re-review, at batch priority, every repository the change set newly affects
        /// (one batch per tenant; `proven batch show` follows it).
        #[arg(long)]
        rereview: bool,
    },
    /// How many advisories, KEV entries and EPSS scores are stored.
    Stats,
}

#[derive(Subcommand)]
enum TenantCommand {
    /// Create a tenant and print its API token (shown once; only its hash is stored).
    Create {
        name: String,
        /// Reviews of this tenant running at once.
        #[arg(long, default_value_t = 4)]
        max_running: i64,
    },
    /// List tenants and their tokens: id, creation and revocation (never a token).
    List,
    /// Revoke a tenant's tokens: every live one, or only --token ID. A revoked token gets 401.
    Revoke {
        /// The tenant's name (or id).
        tenant: String,
        /// Revoke only this token (an id from `proven tenant list`).
        #[arg(long, value_name = "TOKEN_ID")]
        token: Option<String>,
    },
    /// Issue a new token and print it (shown once); every older token of the tenant is
    /// revoked in the same transaction (no overlap: deploy the new token first where a
    /// client must not see a 401).
    Rotate {
        /// The tenant's name (or id).
        tenant: String,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print the settings reference (docs/configuration.md).
    Reference,
}

fn main() -> ExitCode {
    // This binary carries the forwarder under any file name.
    proven_sandbox::Forwarder::register(&["sandbox", "forward"]);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { exit::USAGE } else { 0 });
        }
    };
    let outcome = run(cli);
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(exit) => {
            eprintln!("proven: {}", exit.message);
            ExitCode::from(exit.code)
        }
    }
}

fn run(cli: Cli) -> Result<u8, Exit> {
    if let Command::Config(ConfigCommand::Reference) = &cli.command {
        print!("{}", proven_config::reference_markdown());
        return Ok(0);
    }
    if let Command::Vectors(VectorsCommand::Check { files, json, known }) = &cli.command {
        return vectors_check(files, *json, known.as_deref());
    }
    let mut layers = Layers::from_env(std::env::vars()).map_err(Exit::config)?;
    if let Some(color) = &cli.color {
        layers = layers.with_flag("color", color.clone(), "--color");
    }
    let config = layers.resolve().map_err(Exit::config)?;
    // A review run in this process reports its own failure (the exit message, the report):
    // the executor's WARN for the same failed step would print it a second time. A worker's
    // log keeps it (there nobody else reports it).
    let in_process = matches!(
        cli.command,
        Command::Review(_) | Command::Github(_) | Command::Deps(_)
    );
    init_logging(&config, in_process);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Exit::internal(format!("start the async runtime: {e}")))?;
    // The sandbox needs Docker, not the store.
    let cli = match cli.command {
        Command::Sandbox(command) => return runtime.block_on(sandbox::run(command, &config)),
        Command::ConformanceServe { engine, state } => {
            return runtime.block_on(conformance::serve(&engine, &state));
        }
        // The ask reads the repository and asks models; it keeps nothing in the store.
        Command::Ask(args) => return runtime.block_on(ask::run(&config, args)),
        command => Cli { command, ..cli },
    };
    // The livecheck reports a store it cannot open as one row of its table.
    if let Command::Livecheck = cli.command {
        return runtime
            .block_on(async { livecheck::run(open_store(&config).await, &config).await });
    }
    runtime.block_on(async move {
        let store = open_store(&config).await?;
        let code = match cli.command {
            Command::Review(args) => review(&store, &layers, &config, args).await,
            Command::Github(github::GithubCommand::Action(args)) => {
                github::action(&store, &layers, &config, args).await
            }
            Command::Deps(DepsCommand::Scan { file, output }) => {
                scan(&store, &config, file, output).await
            }
            Command::Db(DbCommand::Import { paths }) => db::import(&store, &paths).await,
            Command::Db(DbCommand::Sync {
                sources,
                json,
                rereview,
            }) => {
                let max_queued = rereview.then_some(config.max_queued_reviews);
                db::sync(&store, &config.data_dir, &sources, (json, max_queued)).await
            }
            Command::Db(DbCommand::Stats) => db::stats(&store).await,
            Command::Reviews(args) => reviews::run(&store, args).await,
            Command::World(args) => world::run(&store, args).await,
            Command::Trace { review_id } => trace(&store, &review_id).await,
            Command::Show { review_id, output } => show(&store, &config, &review_id, &output).await,
            Command::Replay(args) => replay::run(&store, &config, args).await,
            Command::Serve => serve(&store, &config).await,
            // Answered above, before the store is opened.
            Command::Livecheck => Ok(0),
            Command::Worker { steps } => worker(&store, &layers, &config, steps).await,
            Command::Tenant(command) => tenant(&store, command).await,
            Command::Batch(command) => batch::run(&store, config.max_queued_reviews, command).await,
            Command::Config(_) | Command::Vectors(_) => Ok(0),
            Command::Sandbox(_) | Command::ConformanceServe { .. } | Command::Ask(_) => Ok(0),
        };
        store.close().await;
        code
    })
}

pub(crate) fn store_exit(e: proven_store::StoreError) -> Exit {
    match e {
        proven_store::StoreError::InvalidInput(m) => Exit::input(m),
        proven_store::StoreError::NotFound(what) => Exit::input(format!("{what} not found")),
        other => Exit::store(other.to_string()),
    }
}

async fn tenant(store: &Store, command: TenantCommand) -> Result<u8, Exit> {
    match command {
        TenantCommand::Create { name, max_running } => {
            let (tenant, token) = store
                .create_tenant(&name, max_running)
                .await
                .map_err(store_exit)?;
            eprintln!("proven: created tenant {} ({})", tenant.name, tenant.id);
            println!("{token}");
        }
        TenantCommand::List => {
            let mut out = std::io::stdout().lock();
            for (tenant, tokens) in store.list_tenants().await.map_err(store_exit)? {
                let _ = writeln!(
                    out,
                    "{}\t{}\tmax_running={}",
                    tenant.name, tenant.id, tenant.max_running_reviews
                );
                for t in tokens {
                    let state = match &t.revoked_at {
                        Some(at) => format!("revoked {at}"),
                        None => "live".into(),
                    };
                    let _ = writeln!(out, "  {}\tcreated {}\t{state}", t.id, t.created_at);
                }
            }
        }
        TenantCommand::Revoke { tenant, token } => {
            let revoked = store
                .revoke_tokens(&tenant, token.as_deref())
                .await
                .map_err(store_exit)?;
            if revoked.is_empty() {
                eprintln!("proven: tenant {tenant} had no live token");
            }
            for id in revoked {
                eprintln!("proven: revoked {id} of tenant {tenant}");
            }
        }
        TenantCommand::Rotate { tenant } => {
            let (token, info, revoked) = store.rotate_token(&tenant).await.map_err(store_exit)?;
            eprintln!(
                "proven: new token {} for tenant {tenant}; revoked {}",
                info.id,
                if revoked.is_empty() {
                    "none".to_string()
                } else {
                    revoked.join(", ")
                }
            );
            println!("{token}");
        }
    }
    Ok(0)
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

/// The Prometheus recorder. Histograms are exported with buckets (not as per-process
/// summaries), so dashboards can aggregate them across replicas with `histogram_quantile`.
fn metrics_recorder() -> Option<metrics_exporter_prometheus::PrometheusHandle> {
    use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
    const SECONDS: &[f64] = &[
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
        600.0,
    ];
    const USD: &[f64] = &[0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0];
    const ATTEMPTS: &[f64] = &[1.0, 2.0, 3.0, 4.0, 5.0];
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)
        .and_then(|b| b.set_buckets_for_metric(Matcher::Suffix("_usd".into()), USD))
        .and_then(|b| b.set_buckets_for_metric(Matcher::Suffix("_attempts".into()), ATTEMPTS))
        .ok()?
        .install_recorder()
        .ok()?;
    proven_pipeline::metrics_names::register_zeros();
    Some(handle)
}

/// The API server's limits, from the configuration.
fn api_limits(config: &Config) -> proven_api::ApiLimits {
    proven_api::ApiLimits {
        max_queued_reviews: config.max_queued_reviews,
        max_batch_reviews: config.max_batch_reviews,
        max_deadline_secs: config.max_deadline_seconds,
        max_body_bytes: config.http.max_body_bytes,
        body_timeout: config.http.body_timeout,
        header_timeout: config.http.header_timeout,
        max_connections: config.http.max_connections,
        max_connections_per_address: config.http.max_connections_per_address,
        max_queued_questions: config.max_queued_questions,
        unverified_body_bytes: config.http.unverified_body_bytes,
        rate_per_second: config.http.rate_per_second,
        rate_burst: config.http.rate_burst,
    }
}

/// The API process's reconciler, once Redis answers (connecting again with a growing pause
/// meanwhile, said once), until `stop` says stop. A stop never waits for a connection
/// attempt to give up.
async fn reconcile(
    store: Store,
    redis_config: proven_pipeline::redis::RedisConfig,
    recon_config: proven_pipeline::reconciler::ReconcilerConfig,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let mut delay = std::time::Duration::from_millis(500);
    let mut failed = false;
    let queue = loop {
        let attempt = tokio::select! {
            attempt = proven_pipeline::redis::RedisQueue::connect(&redis_config) => attempt,
            _ = stopped(stop.clone()) => return,
        };
        match attempt {
            Ok(queue) => break queue,
            Err(e) => {
                if !failed {
                    eprintln!(
                        "proven: queue redis is unavailable: {e}; serving anyway (reviews wait in the store) and retrying"
                    );
                    failed = true;
                }
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = stopped(stop.clone()) => return,
                }
                delay = (delay * 2).min(std::time::Duration::from_secs(5));
            }
        }
    };
    if failed {
        eprintln!("proven: queue redis answers");
    }
    let queue: std::sync::Arc<dyn proven_pipeline::Queue> = std::sync::Arc::new(queue);
    proven_pipeline::reconciler::run(
        store,
        queue,
        recon_config,
        proven_pipeline::reconciler::Wake::default(),
        stopped(stop),
    )
    .await;
}

async fn serve(store: &Store, config: &Config) -> Result<u8, Exit> {
    let metrics = metrics_recorder();
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| Exit::input(format!("listen on {}: {e}", config.listen)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Exit::internal(e.to_string()))?;
    eprintln!("proven: listening on http://{addr}");
    // The API process also runs the reconciler: admitted reviews leave at once, and the
    // service keeps pushing even while workers restart. Redis only delivers: while it is
    // down the API still serves (readyz says so) and reviews wait in the store's outbox.
    // A URL that cannot parse would fail forever: refuse it now, by name.
    redis::Client::open(config.redis_url.as_str()).map_err(|e| {
        Exit::config(proven_config::ConfigError {
            source_name: "PROVEN_REDIS_URL".into(),
            key: "redis_url".into(),
            // Never the URL itself: one that does not parse may still hold a password.
            message: format!("the address does not parse: {e}"),
        })
    })?;
    let redis_config = proven_pipeline::redis::RedisConfig::new(
        config.redis_url.clone(),
        config.queue_prefix.clone(),
    );
    let recon_config = proven_pipeline::reconciler::ReconcilerConfig {
        stale_after: config.requeue_after,
        admission: proven_pipeline::admission::AdmissionConfig {
            max_running: config.max_running_reviews,
            ..Default::default()
        },
        ..Default::default()
    };
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let recon = tokio::spawn(reconcile(
        store.clone(),
        redis_config,
        recon_config,
        stop_rx,
    ));
    let state = proven_api::ApiState::new(
        store.clone(),
        std::sync::Arc::new(proven_source::RepoPolicy::service(config)),
        Some(config.redis_url.clone()),
        metrics,
        api_limits(config),
    )
    .with_rereviews(std::sync::Arc::new(Rereviewer(store.clone())));
    let state = match config.github.app_id {
        Some(_) if config.github.webhook_secret.is_empty() => {
            return Err(Exit::config_message(
                "PROVEN_GITHUB_APP_ID is set but PROVEN_GITHUB_WEBHOOK_SECRET is not: the webhook \
                 cannot check a delivery without it"
                    .into(),
            ));
        }
        Some(_) => state.with_github(proven_api::github::GitHubHook::new(
            &config.github.webhook_secret,
        )),
        None => state,
    };
    let served = proven_api::serve(state, listener, shutdown_signal()).await;
    let _ = stop_tx.send(true);
    let _ = recon.await;
    served.map_err(|e| Exit::internal(format!("serve: {e}")))?;
    Ok(0)
}

/// The change-set selector of `POST /v1/batches`: the World Model's dependents whose
/// versions the change set's advisories affect (`proven_worker::rereview`).
struct Rereviewer(Store);

impl proven_api::Rereviews for Rereviewer {
    fn affected<'a>(
        &'a self,
        tenant: &'a str,
        selector: proven_api::RereviewSelector<'a>,
    ) -> proven_pipeline::BoxFuture<
        'a,
        Result<Vec<proven_api::RereviewTarget>, proven_store::StoreError>,
    > {
        use proven_worker::rereview::Selector;
        let selector = match selector {
            proven_api::RereviewSelector::ChangeSet(id) => Selector::ChangeSet(id.to_string()),
            proven_api::RereviewSelector::ChangedSince(t) => Selector::ChangedSince(t.to_string()),
        };
        Box::pin(async move {
            Ok(
                proven_worker::rereview::selected(&self.0, tenant, &selector)
                    .await?
                    .into_iter()
                    .map(|t| proven_api::RereviewTarget {
                        repository: t.repository,
                        base: t.base,
                        head: t.head,
                        previous: t.previous,
                    })
                    .collect(),
            )
        })
    }
}

async fn worker(
    store: &Store,
    layers: &Layers,
    config: &Config,
    steps: Vec<String>,
) -> Result<u8, Exit> {
    // Fault injection for the chaos tests only (see proven_worker::Fault).
    let fault = std::env::var("PROVEN_TEST_FAULT_MARKER")
        .ok()
        .map(|marker| proven_worker::Fault {
            marker,
            step: std::env::var("PROVEN_TEST_FAULT_STEP").unwrap_or_else(|_| "deps.collect".into()),
        });
    let options = proven_worker::WorkerOptions {
        queues: steps,
        layers: layers.clone(),
        fault,
        metrics: metrics_recorder(),
    };
    proven_worker::run(store.clone(), config, options, shutdown_signal())
        .await
        .map_err(|e| Exit::input(e.to_string()))?;
    Ok(0)
}

fn init_logging(config: &Config, in_process: bool) {
    let mut directives = config.log.clone();
    if in_process && !directives.contains("proven_pipeline::") {
        directives.push_str(",proven_pipeline::executor=error");
    }
    let filter = tracing_subscriber::EnvFilter::try_new(&directives)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Colour codes only on a terminal, and as PROVEN_COLOR and NO_COLOR say (a WARN line in
    // a pipe or a log file is plain text).
    let ansi = match config.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none()
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .try_init();
}

async fn open_store(config: &Config) -> Result<Store, Exit> {
    let opened = match &config.database_url {
        Some(url) => Store::open_url_with(url, config.database_connections).await,
        None => Store::open_sqlite(&config.sqlite_path()).await,
    };
    // The trace is also written to PROVEN_LOG_DIR, as JSON Lines.
    let opened = match (opened, &config.log_dir) {
        (Ok(store), Some(dir)) => store.with_trace_log(dir),
        (other, _) => other,
    };
    opened.map_err(|e| Exit::store(e.to_string()))
}

fn use_color(config: &Config, output: &OutputArgs) -> bool {
    match config.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            output.output.is_none()
                && std::env::var_os("NO_COLOR").is_none()
                && std::io::stdout().is_terminal()
        }
    }
}

fn emit(report: &Report, config: &Config, output: &OutputArgs) -> Result<(), Exit> {
    let format = Format::parse(&output.format).ok_or_else(|| {
        Exit::usage(format!(
            "--format {:?}: expected one of {}",
            output.format,
            Format::NAMES
        ))
    })?;
    let text = proven_report::render(report, format, use_color(config, output));
    match &output.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| {
                // The review is kept whatever happens to its rendering: say how to have it
                // again, so a wrong path never costs the review.
                let again = report
                    .review_id
                    .as_deref()
                    .map(|id| format!(" (review {id} is kept: `proven show {id} --output PATH` writes it again)"))
                    .unwrap_or_default();
                Exit::input(format!("write {}: {e}{again}", path.display()))
            })
            .map(|_| {
                eprintln!(
                    "proven: wrote {} ({} findings, {})",
                    path.display(),
                    report.findings.len(),
                    report.status.as_str()
                )
            }),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|_| out.flush())
                .map_err(|e| Exit::input(format!("write output: {e}")))
        }
    }
}

/// The documented exit code of a finished review or scan.
pub(crate) fn result_code(report: &Report) -> u8 {
    match report.status {
        Status::Incomplete | Status::Failed => exit::INCOMPLETE,
        Status::Complete | Status::Partial if !report.findings.is_empty() => exit::FINDINGS,
        Status::Partial => exit::PARTIAL,
        Status::Complete => 0,
    }
}

async fn review(
    store: &Store,
    layers: &Layers,
    config: &Config,
    args: ReviewArgs,
) -> Result<u8, Exit> {
    let output = args.output.clone();
    let report = run_review(store, layers, config, args).await?;
    // The review's id before anything is written: a failed write never loses it.
    if let (Some(id), Some(_)) = (&report.review_id, &output.output) {
        eprintln!("proven: review {id}");
    }
    emit(&report, config, &output)?;
    Ok(result_code(&report))
}

/// The review of `args`, run in this process (the embedded default), as its report.
pub(crate) async fn run_review(
    store: &Store,
    layers: &Layers,
    config: &Config,
    args: ReviewArgs,
) -> Result<Report, Exit> {
    // A local repository is recorded by its absolute path, so the review reads the same
    // repository whichever process runs its steps.
    let repository = std::fs::canonicalize(&args.repo)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| args.repo.display().to_string());
    let request = ReviewRequest {
        repository,
        base: args.base.clone(),
        head: args.head.clone(),
        diff: args
            .diff
            .parse()
            .map_err(|_| Exit::usage(format!("--diff {}: merge-base or two-dot", args.diff)))?,
        ..Default::default()
    };
    let cassette = match (&args.sample, &args.record) {
        (Some(path), _) => Some((path, proven_models::CassetteMode::Replay)),
        (None, Some(path)) => Some((path, proven_models::CassetteMode::Record)),
        (None, None) => None,
    };
    let cassette = match cassette {
        Some((path, mode)) => Some(std::sync::Arc::new(
            proven_models::Cassette::open(path, mode).map_err(|e| Exit::input(e.to_string()))?,
        )),
        None => None,
    };
    // Sample mode runs the agents whatever the endpoints say: the cassette answers.
    let sampled;
    let (layers, config) = if args.sample.is_some() {
        let l = layers.clone().with_flag("agents", "on", "--sample");
        sampled = l.resolve().map_err(Exit::config)?;
        (l, &sampled)
    } else {
        (layers.clone(), config)
    };
    let layers = &layers;
    let services = embedded_services(config, cassette).await;
    let sandbox = services.sandbox.clone();
    let report = proven_review::embedded::review(
        store,
        layers,
        request,
        proven_source::Sources::cli(config),
        services,
    )
    .await;
    // A one-off review keeps no warm containers past its end.
    if let Some(sandbox) = sandbox {
        sandbox.drain_pool().await;
    }
    let report = report.map_err(Exit::from_review)?;
    // A review that could not start at all is an error of its input or settings.
    if report.status == Status::Failed
        && let Some(failure) = report.failed_services.first()
    {
        match failure.service.as_str() {
            "configuration" => {
                return Err(Exit {
                    code: exit::CONFIG,
                    message: failure.message.clone(),
                });
            }
            "intake" => return Err(Exit::input(failure.message.clone())),
            _ => {}
        }
    }
    Ok(report)
}

/// The agents when configured, and Docker when the agents will need it and it answers.
async fn embedded_services(
    config: &Config,
    cassette: Option<std::sync::Arc<proven_models::Cassette>>,
) -> proven_review::embedded::Services {
    let mut services = proven_review::embedded::Services::default();
    if !config.agents {
        return services;
    }
    let replay = cassette
        .as_ref()
        .is_some_and(|c| c.mode() == proven_models::CassetteMode::Replay);
    match proven_review::model::Agents::from_config(config) {
        Ok(agents) => {
            let agents = match cassette {
                Some(c) => agents.with_cassette(c),
                None => agents,
            };
            services.agents = Some(std::sync::Arc::new(agents));
        }
        Err(e) => tracing::warn!(error = %e, "model agents unavailable"),
    }
    if replay {
        return services; // sample mode: the runs come from the cassette
    }
    // The settings were checked when the command started (a wrong one exits 7 there).
    let connected = match proven_sandbox::SandboxConfig::from_settings(&config.sandbox) {
        Ok(sandbox_config) => proven_sandbox::Sandbox::connect(sandbox_config).await,
        Err(e) => Err(e),
    };
    match connected {
        Ok(sandbox) => services.sandbox = Some(std::sync::Arc::new(sandbox)),
        Err(e) => tracing::warn!(error = %e, "no sandbox: tests cannot run"),
    }
    services
}

async fn scan(
    store: &Store,
    config: &Config,
    file: PathBuf,
    output: OutputArgs,
) -> Result<u8, Exit> {
    let mut trace = Trace::new("scan");
    let report = proven_review::scan::scan_file(store, config, &file, &mut trace)
        .await
        .map_err(Exit::from_review)?;
    emit(&report, config, &output)?;
    Ok(result_code(&report))
}

async fn show(
    store: &Store,
    config: &Config,
    review_id: &str,
    output: &OutputArgs,
) -> Result<u8, Exit> {
    let review = store.review(review_id).await.map_err(|e| match e {
        proven_store::StoreError::NotFound(what) => Exit::input(format!("{what} not found")),
        other => Exit::store(other.to_string()),
    })?;
    let Some(result) = review.result else {
        return Err(Exit::input(format!(
            "review {review_id} has no result yet (status {})",
            review.status.as_str()
        )));
    };
    let report: Report = serde_json::from_str(&result).map_err(|e| {
        Exit::internal(format!(
            "review {review_id}: the stored result does not read: {e}"
        ))
    })?;
    emit(&report, config, output)?;
    Ok(result_code(&report))
}

async fn trace(store: &Store, review_id: &str) -> Result<u8, Exit> {
    let rows = store.trace(review_id).await.map_err(|e| match e {
        proven_store::StoreError::NotFound(what) => Exit::input(format!("{what} not found")),
        other => Exit::store(other.to_string()),
    })?;
    let mut out = std::io::stdout().lock();
    for row in rows {
        let mut line = serde_json::Map::new();
        line.insert("review_id".into(), row.review_id.into());
        line.insert("seq".into(), row.seq.into());
        line.insert("at".into(), row.at.into());
        line.insert("run_id".into(), row.run_id.into());
        line.insert("kind".into(), row.kind.into());
        line.insert("event".into(), row.event);
        writeln!(out, "{}", serde_json::Value::Object(line))
            .map_err(|e| Exit::input(format!("write output: {e}")))?;
    }
    Ok(0)
}

fn vectors_check(
    files: &[PathBuf],
    json: bool,
    known: Option<&std::path::Path>,
) -> Result<u8, Exit> {
    use proven_version::vectors::{KnownDecisions, check_files};
    let known = match known {
        Some(path) => KnownDecisions::load(path).map_err(|e| Exit::input(e.to_string()))?,
        None => KnownDecisions::builtin().map_err(|e| Exit::internal(e.to_string()))?,
    };
    let report = check_files(files, &known).map_err(|e| Exit::input(e.to_string()))?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report.to_json()).unwrap_or_default()
        );
    } else {
        print!("{report}");
    }
    Ok(if report.all_agree() {
        0
    } else {
        exit::FINDINGS
    })
}

impl Exit {
    fn from_review(e: ReviewError) -> Exit {
        Exit {
            code: e.exit_code() as u8,
            message: e.to_string(),
        }
    }
}
