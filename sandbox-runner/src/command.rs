//! The `sandbox` commands, shared by `proven sandbox …` and the `proven-sandbox` binary
//! so both go through one code path (the library's `Sandbox::run`).
//!
//! Exit codes follow the `proven` table: `run` exits 0 when the test passed, 1 when it
//! failed, 3 when the run says nothing (an environment error: killed, a limit, could not
//! build or collect); 4 for a wrong input (repository, revision, patch, file); 6 when
//! Docker or the runner's disk failed; 7 for a setting out of range.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::{
    Edit, FileLedger, Language, Outcome, RunKey, RunRequest, Sandbox, SandboxConfig, SandboxError,
};

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Run one command on one tree, as a review's sandbox job does, and print the run's
    /// record as JSON. Exit 0: passed (tests ran and passed); 1: a test failed; 3: the run
    /// proves nothing (no test ran, killed, a limit, could not build or collect).
    Run(Box<RunArgs>),
    /// Build the local sandbox images (where no image registry is reachable) from this
    /// host's Debian packages and toolchains; a no-op when they are current.
    Images {
        /// Languages to build (default: all).
        #[arg(value_parser = ["python", "rust", "node", "go"])]
        languages: Vec<String>,
    },
    /// Remove sandbox containers whose runner is gone or whose deadline passed; print how
    /// many.
    Sweep {
        #[command(flatten)]
        docker: DockerArgs,
    },
    /// Inside a preparation container: forward 127.0.0.1:PORT to the runner's egress
    /// proxy through SOCKET while COMMAND runs; exit with its code.
    #[command(hide = true)]
    Forward {
        #[arg(long)]
        socket: PathBuf,
        #[arg(long, default_value_t = 3128)]
        port: u16,
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct DockerArgs {
    /// The Docker endpoint: a Unix socket path or tcp://HOST:PORT (default: the configured
    /// one, /var/run/docker.sock unless PROVEN_SANDBOX_DOCKER_HOST says otherwise).
    #[arg(long, value_name = "ENDPOINT")]
    pub docker_host: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The git repository (its commits are read; its working copy never is).
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// The revision whose tree runs (commit, branch, tag, HEAD~1, ...).
    #[arg(long, default_value = "HEAD")]
    pub rev: String,
    /// python, rust, node or go.
    #[arg(long)]
    pub lang: Language,
    /// Add the local FILE to the tree at DEST (repeatable).
    #[arg(long = "add-file", value_name = "FILE=DEST")]
    pub add_files: Vec<String>,
    /// Apply a patch to the tree first: a JSON file of edits
    /// `[{"path": …, "old_text": …, "new_text": …}]`.
    #[arg(long, value_name = "FILE")]
    pub patch: Option<PathBuf>,
    /// The command, run by `sh -c` in the tree's copy.
    #[arg(long, conflicts_with = "argv", required_unless_present = "argv")]
    pub cmd: Option<String>,
    /// Or the command's words after `--` (no shell).
    #[arg(last = true)]
    pub argv: Vec<String>,
    /// A plain command rather than a test run: exit 0 passes without a test runner's
    /// summary, and no outcome is ever a test failure. Without it, a run passes only when
    /// the test runner says at least one test ran and every test that ran passed.
    #[arg(long)]
    pub plain: bool,
    /// Run the command after what the tree's documented suite runs before its runner (a
    /// Node suite's build, `pretest`, a Gruntfile's fixtures), as a review runs a selected
    /// test.
    #[arg(long)]
    pub after_setup: bool,
    /// Run in a warm container: start one first (as the pool of a long-running runner
    /// would have), take it for the run, and remove it after. Without it a one-off run
    /// starts its container cold and keeps no pool.
    #[arg(long)]
    pub warm: bool,
    /// Kill the run after this many seconds (default 120).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Resolve the Python requirements no lock file pins as of this date (`YYYY-MM-DD` or
    /// RFC 3339), `rev` for the revision's commit time: the releases that existed then.
    #[arg(long, value_name = "DATE|rev")]
    pub resolve_before: Option<String>,
    /// The job this run belongs to: names its container, so a sweep after a crash finds
    /// it; with --ledger, its record is kept once across redeliveries.
    #[arg(long, value_name = "ID")]
    pub job_id: Option<String>,
    /// Directory of job records (one JSON file per job id).
    #[arg(long, value_name = "DIR", requires = "job_id")]
    pub ledger: Option<PathBuf>,
    #[command(flatten)]
    pub docker: DockerArgs,
}

/// A command that could not finish: the exit code and what to tell the user.
#[derive(Debug)]
pub struct CommandFailure {
    pub code: u8,
    pub message: String,
}

const FINDINGS: u8 = 1;
const INCOMPLETE: u8 = 3;
const INPUT: u8 = 4;
const INTERNAL: u8 = 6;
const CONFIG: u8 = 7;

impl From<SandboxError> for CommandFailure {
    fn from(e: SandboxError) -> Self {
        let code = match &e {
            SandboxError::Request(_) => INPUT,
            SandboxError::InvalidConfig { .. } => CONFIG,
            _ => INTERNAL,
        };
        CommandFailure {
            code,
            message: e.to_string(),
        }
    }
}

fn input(message: String) -> CommandFailure {
    CommandFailure {
        code: INPUT,
        message,
    }
}

/// Runs a `sandbox` command; what it prints goes to `out`.
pub async fn execute(
    command: SandboxCommand,
    config: SandboxConfig,
    out: &mut (dyn Write + Send),
) -> Result<u8, CommandFailure> {
    match command {
        SandboxCommand::Run(args) => run(*args, config, out).await,
        SandboxCommand::Images { languages } => {
            let languages = languages
                .iter()
                .map(|l| l.parse::<Language>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| input(e.to_string()))?;
            crate::images::build_local(&languages).await?;
            Ok(0)
        }
        SandboxCommand::Forward {
            socket,
            port,
            command,
        } => match crate::deps::forward::forward(socket, port, command).await {
            Ok(code) => Ok(u8::try_from(code).unwrap_or(1)),
            Err(e) => Err(CommandFailure {
                code: INTERNAL,
                message: format!("forward: {e}"),
            }),
        },
        SandboxCommand::Sweep { docker } => {
            let sandbox = Sandbox::connect(SandboxConfig {
                docker_host: docker.docker_host.unwrap_or(config.docker_host.clone()),
                ..config
            })
            .await?;
            let removed = sandbox.sweep().await?;
            writeln!(out, "{removed}").map_err(|e| input(format!("write output: {e}")))?;
            Ok(0)
        }
    }
}

/// The suite `rev`'s tree documents (`--after-setup`), read from the repository's objects.
fn documented_suite_at(
    repo: &std::path::Path,
    rev: &str,
    lang: Language,
) -> Result<proven_sandbox_plan::suite::DocumentedSuite, CommandFailure> {
    let repository = git2::Repository::open(repo)
        .map_err(|e| input(format!("--after-setup: open {}: {e}", repo.display())))?;
    let tree = repository
        .revparse_single(rev)
        .and_then(|o| o.peel_to_tree())
        .map_err(|e| input(format!("--after-setup: {rev:?} is no tree: {e}")))?;
    let read = |path: &str| -> Option<String> {
        if let Some(dir) = path.strip_suffix('/') {
            let entry = tree.get_path(std::path::Path::new(dir)).ok()?;
            let folder = repository.find_tree(entry.id()).ok()?;
            let names: Vec<String> = folder
                .iter()
                .filter_map(|e| e.name().ok().map(str::to_string))
                .collect();
            return Some(names.join("\n"));
        }
        let entry = tree.get_path(std::path::Path::new(path)).ok()?;
        let blob = repository.find_blob(entry.id()).ok()?;
        String::from_utf8(blob.content().to_vec()).ok()
    };
    Ok(proven_sandbox_plan::suite::documented_suite(lang, &read))
}

/// `--resolve-before`: `rev` (the revision's commit time), `YYYY-MM-DD` (its end, UTC), or
/// an RFC 3339 instant.
fn resolution_date(
    repo: &std::path::Path,
    rev: &str,
    date: &str,
) -> Result<time::OffsetDateTime, CommandFailure> {
    use time::format_description::well_known::Rfc3339;
    if date == "rev" {
        let repo = git2::Repository::open(repo).map_err(|e| {
            input(format!(
                "--resolve-before rev: open {}: {e}",
                repo.display()
            ))
        })?;
        let commit = repo
            .revparse_single(rev)
            .and_then(|o| o.peel_to_commit())
            .map_err(|e| {
                input(format!(
                    "--resolve-before rev: {rev:?} is not a commit: {e}"
                ))
            })?;
        return time::OffsetDateTime::from_unix_timestamp(commit.time().seconds())
            .map_err(|e| input(format!("--resolve-before rev: the commit's time: {e}")));
    }
    if let Ok(at) = time::OffsetDateTime::parse(date, &Rfc3339) {
        return Ok(at);
    }
    let day = time::Date::parse(
        date,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .map_err(|_| {
        input(format!(
            "--resolve-before {date:?}: expected rev, YYYY-MM-DD or an RFC 3339 instant"
        ))
    })?;
    Ok(day
        .with_hms(23, 59, 59)
        .expect("a valid time of day")
        .assume_utc())
}

async fn run(
    args: RunArgs,
    config: SandboxConfig,
    out: &mut (dyn Write + Send),
) -> Result<u8, CommandFailure> {
    let command = match &args.cmd {
        Some(cmd) => vec!["sh".to_string(), "-c".to_string(), cmd.clone()],
        None => args.argv.clone(),
    };
    let (command, mut env) = if args.after_setup {
        let suite = documented_suite_at(&args.repo, &args.rev, args.lang)?;
        let run = suite.after_setup(proven_sandbox_plan::language::TestRun {
            command,
            env: Vec::new(),
        });
        (run.command, run.env)
    } else {
        (command, Vec::new())
    };
    let mut request = RunRequest::new(&args.repo, &args.rev, args.lang, command);
    for (k, v) in env.drain(..) {
        request = request.with_env(k, v);
    }
    if let Some(date) = &args.resolve_before {
        request = request.resolved_as_of(resolution_date(&args.repo, &args.rev, date)?);
    }
    for spec in &args.add_files {
        let Some((file, dest)) = spec.rsplit_once('=') else {
            return Err(input(format!("--add-file {spec:?}: expected FILE=DEST")));
        };
        let contents =
            std::fs::read(file).map_err(|e| input(format!("--add-file: read {file}: {e}")))?;
        request = request.with_file(dest, contents);
    }
    if let Some(path) = &args.patch {
        let text = std::fs::read(path)
            .map_err(|e| input(format!("--patch: read {}: {e}", path.display())))?;
        let edits: Vec<Edit> = serde_json::from_slice(&text).map_err(|e| {
            input(format!(
                "--patch {}: expected [{{\"path\", \"old_text\", \"new_text\"}}]: {e}",
                path.display()
            ))
        })?;
        request = request.with_patch(edits);
    }
    if let Some(seconds) = args.timeout {
        request = request.with_timeout(Duration::from_secs(seconds));
    }
    if args.plain {
        request = request.as_command();
    }
    let sandbox = Sandbox::connect(SandboxConfig {
        docker_host: args
            .docker
            .docker_host
            .clone()
            .unwrap_or(config.docker_host.clone()),
        pool_size: usize::from(args.warm),
        ..config
    })
    .await?;
    if args.warm {
        sandbox.prewarm(args.lang).await?;
    }
    let record = run_one(&sandbox, &args, &request).await;
    sandbox.drain_pool().await;
    let record = record?;
    let json = serde_json::to_string_pretty(&record).map_err(|e| CommandFailure {
        code: INTERNAL,
        message: format!("serialise the record: {e}"),
    })?;
    writeln!(out, "{json}").map_err(|e| input(format!("write output: {e}")))?;
    Ok(match record.outcome {
        Outcome::Passed => 0,
        Outcome::TestFailed => FINDINGS,
        Outcome::EnvironmentError { .. } => INCOMPLETE,
    })
}

async fn run_one(
    sandbox: &Sandbox,
    args: &RunArgs,
    request: &RunRequest,
) -> Result<crate::RunRecord, CommandFailure> {
    Ok(match &args.job_id {
        Some(job) => {
            let job = RunKey::new(job.clone()).map_err(|e| input(e.to_string()))?;
            match &args.ledger {
                Some(dir) => sandbox
                    .run_job(&job, request, &FileLedger::new(dir))
                    .await?
                    .into_record(),
                None => sandbox.run(&request.clone().with_key(job)).await?,
            }
        }
        None => sandbox.run(request).await?,
    })
}
