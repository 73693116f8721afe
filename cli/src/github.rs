//! `proven github action`: Proven inside a GitHub Actions workflow run on a pull request.
//! It reads what the runner gives every step (`GITHUB_EVENT_PATH`, `GITHUB_REPOSITORY`,
//! `GITHUB_API_URL`, `GITHUB_WORKSPACE`, `GITHUB_REF`, and the workflow's `GITHUB_TOKEN`),
//! reviews the pull request's base and head in this process (the embedded default), and
//! posts the review, the check run and SARIF through the same code the GitHub App's
//! publications use (`proven_github::Publisher`). The job fails only as `--fail-on` says.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use proven_config::{Config, Layers};
use proven_github::{CheckOptions, Client, GitHubError, Publisher, Target, check_updates};
use proven_report::{FailedService, Format, Report, ReportKind, Status};
use proven_store::Store;
use secrecy::SecretString;

use crate::exit::{self, Exit};
use crate::{OutputArgs, ReviewArgs};

#[derive(Subcommand)]
pub(crate) enum GithubCommand {
    /// In a GitHub Actions workflow on a pull request: review its base and head, post the
    /// review (proved fixes as suggestions), the check run and SARIF with the workflow's
    /// token, and fail the job only as `--fail-on` says.
    Action(ActionArgs),
}

#[derive(Args)]
pub(crate) struct ActionArgs {
    /// When the job fails: `findings` (a finding, or an incomplete review: the review's own
    /// exit code), `incomplete` (only a review that did not run whole), `never`.
    #[arg(long, env = "INPUT_FAIL_ON", default_value = "findings", value_parser = ["findings", "incomplete", "never"])]
    fail_on: String,
    /// Upload the review's SARIF to code scanning (skipped, and said, where the repository
    /// does not allow it).
    #[arg(long, env = "INPUT_SARIF", default_value = "true", value_parser = ["true", "false"])]
    sarif: String,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn required(name: &str, why: &str) -> Result<String, Exit> {
    var(name).ok_or_else(|| Exit::usage(format!("{name} is not set: {why}")))
}

/// The pull request of the workflow's event: its number, base and head commits.
fn pull_request(event_path: &str) -> Result<(u64, String, String), Exit> {
    let text = std::fs::read_to_string(event_path)
        .map_err(|e| Exit::input(format!("GITHUB_EVENT_PATH {event_path}: {e}")))?;
    let event: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Exit::input(format!("GITHUB_EVENT_PATH {event_path}: not JSON ({e})")))?;
    let pr = &event["pull_request"];
    let sha = |side: &str| {
        pr[side]["sha"]
            .as_str()
            .filter(|s| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_string)
    };
    match (pr["number"].as_u64(), sha("base"), sha("head")) {
        (Some(n), Some(base), Some(head)) => Ok((n, base, head)),
        _ => Err(Exit::usage(format!(
            "the workflow's event ({event_path}) holds no pull request with a number and base \
             and head commits: the Action runs on `pull_request` events"
        ))),
    }
}

/// All the Action waits for GitHub's rate limits, at most: past it the step fails, naming
/// the limit, rather than holding the runner for hours.
const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(15 * 60);

/// A call again after a rate limit (as long as GitHub asks, at most five minutes a wait
/// and [`MAX_RATE_LIMIT_WAIT`] in all) or a transient failure (three times); anything
/// else is the answer.
async fn patiently<T, F, Fut>(what: &str, call: F) -> Result<T, GitHubError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, GitHubError>>,
{
    let mut failures = 0;
    let mut waited = Duration::ZERO;
    loop {
        match call().await {
            Err(GitHubError::RateLimited {
                retry_after,
                what: w,
            }) if waited < MAX_RATE_LIMIT_WAIT => {
                let wait = retry_after
                    .min(Duration::from_secs(300))
                    .min(MAX_RATE_LIMIT_WAIT - waited);
                eprintln!(
                    "proven: {what}: GitHub's rate limit ({w}); waiting {} s",
                    wait.as_secs()
                );
                tokio::time::sleep(wait).await;
                waited += wait;
            }
            Err(GitHubError::Transient { .. }) if failures < 3 => {
                failures += 1;
                tokio::time::sleep(Duration::from_secs(1 << failures)).await;
            }
            other => return other,
        }
    }
}

/// A publishing call the workflow's token may not be allowed (a pull request from a fork
/// gets a read-only token): refused (403/404), it is skipped with a warning on the job and
/// the review goes on; any other failure fails the step.
fn allowed<T>(what: &str, result: Result<T, GitHubError>) -> Result<Option<T>, Exit> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(e @ GitHubError::Gone { .. }) => {
            println!(
                "::warning title=Proven could not publish::{what}: {e} (a pull request from a fork gets a read-only token; the review is in the job summary)"
            );
            Ok(None)
        }
        Err(e) => Err(github_exit(e)),
    }
}

fn github_exit(e: GitHubError) -> Exit {
    Exit::internal(format!("GitHub: {e}"))
}

pub(crate) async fn action(
    store: &Store,
    layers: &Layers,
    config: &Config,
    args: ActionArgs,
) -> Result<u8, Exit> {
    let event_path = required("GITHUB_EVENT_PATH", "the Action runs as a workflow step")?;
    let (number, base, head) = pull_request(&event_path)?;
    let repo = required("GITHUB_REPOSITORY", "the Action runs as a workflow step")?;
    let token = SecretString::from(required(
        "GITHUB_TOKEN",
        "give the step `env: GITHUB_TOKEN: ${{ github.token }}` (with `pull-requests: write`, \
         `checks: write` and, for SARIF, `security-events: write`)",
    )?);
    let api = var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into());
    let client = Client::new(&api).map_err(github_exit)?;
    let publisher = Publisher {
        client: &client,
        token: &token,
    };
    let target = Target {
        repo,
        pull: number,
        head_sha: head.clone(),
        // The review is of the head commit, so its SARIF is filed under the head's ref
        // (`GITHUB_REF` is the merge ref, whose commit is not the one reviewed).
        git_ref: format!("refs/pull/{number}/head"),
    };
    let options = CheckOptions {
        name: config.github.check_name.clone(),
        findings: config.github.findings_conclusion.clone(),
        advisory_only: config.github.advisory_conclusion.clone(),
        not_reached: config.github.not_reached_conclusion.clone(),
    };
    let external = format!("action-{}", var("GITHUB_RUN_ID").unwrap_or_default());
    let check = allowed(
        "starting the check run",
        patiently("starting the check run", || {
            publisher.start_check(&target, &options, &external)
        })
        .await,
    )?;
    let workspace = PathBuf::from(var("GITHUB_WORKSPACE").unwrap_or_else(|| ".".into()));
    let history = tokio::task::spawn_blocking({
        let (workspace, base, head) = (workspace.clone(), base.clone(), head.clone());
        move || enough_history(&workspace, &base, &head)
    })
    .await
    .map_err(|e| Exit::internal(format!("fetching history: {e}")))?;
    eprintln!("proven: {history}");
    let review = pull_request_review(workspace, base, head);
    let (report, failure) = match crate::run_review(store, layers, config, review).await {
        Ok(report) => (report, None),
        Err(e) => (failed_report(&target.repo, &e.message), Some(e)),
    };
    let comment = allowed(
        "posting the review",
        patiently("posting the review", || {
            publisher.post_review(&target, &report)
        })
        .await,
    )?;
    if let Some(check) = check {
        conclude_check(&publisher, &target, &options, check, &report).await?;
    }
    let sarif = if args.sarif == "true" {
        upload_sarif(&publisher, &target, &report).await?
    } else {
        "off"
    };
    let said = |what: &str, id: Option<u64>| match id {
        Some(id) => format!("{what} {id}"),
        None => format!("no {what} (not allowed)"),
    };
    eprintln!(
        "proven: {} and {} on {}#{number}; SARIF {sarif}",
        said("review", comment),
        said("check run", check),
        target.repo
    );
    step_files(&report, comment);
    print!("{}", proven_report::render(&report, Format::Text, false));
    if let Some(e) = failure {
        return Err(e);
    }
    let code = crate::result_code(&report);
    Ok(match args.fail_on.as_str() {
        "never" => 0,
        "incomplete" if code == exit::FINDINGS => 0,
        _ => code,
    })
}

/// The review of the checkout's pull request, as GitHub's "Files changed" shows it: from
/// the merge base of its base and head.
fn pull_request_review(workspace: PathBuf, base: String, head: String) -> ReviewArgs {
    ReviewArgs {
        repo: workspace,
        base,
        head,
        diff: "merge-base".into(),
        sample: None,
        record: None,
        output: OutputArgs {
            format: "text".into(),
            output: None,
        },
    }
}

/// The report of a review that failed: still said on the pull request, never left
/// looking clean.
fn failed_report(repo: &str, message: &str) -> Report {
    let mut report = Report::new(ReportKind::Review, repo.to_string());
    report.status = Status::Failed;
    report.failed_services.push(FailedService {
        service: "review".into(),
        message: message.to_string(),
    });
    report
}

/// Concludes the check run: the conclusion, then the annotations 50 at a time, each update
/// once (a retry of one never sends the others again; annotations sent twice show twice).
async fn conclude_check(
    publisher: &Publisher<'_>,
    target: &Target,
    options: &CheckOptions,
    check: u64,
    report: &Report,
) -> Result<(), Exit> {
    for update in check_updates(report, options) {
        patiently("concluding the check run", || {
            publisher.update_check(target, check, &update)
        })
        .await
        .map_err(github_exit)?;
    }
    Ok(())
}

/// Uploads the report as SARIF; what came of it, for the log.
async fn upload_sarif(
    publisher: &Publisher<'_>,
    target: &Target,
    report: &Report,
) -> Result<&'static str, Exit> {
    match patiently("uploading SARIF", || publisher.upload_sarif(target, report)).await {
        Ok(proven_github::SarifUpload::NotAllowed) => {
            Ok("not allowed by the repository (code scanning off, or no security-events: write)")
        }
        Ok(done) => Ok(done.as_str()),
        Err(e) => Err(github_exit(e)),
    }
}

/// Makes sure the checkout holds the pull request's base and head commits and their merge
/// base: a runner's checkout is often shallow (actions/checkout fetches one commit by
/// default). Fetches the two commits from `origin`, then deepens the history step by step,
/// then unshallows; says what it did. When nothing helps, the review itself stops by name
/// (no merge base), never guesses.
fn enough_history(workspace: &std::path::Path, base: &str, head: &str) -> String {
    let git = |args: &[&str]| -> bool {
        std::process::Command::new("git")
            .arg("-C")
            .arg(workspace)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let has = |sha: &str| git(&["cat-file", "-e", &format!("{sha}^{{commit}}")]);
    let found = || has(base) && has(head) && git(&["merge-base", base, head]);
    if found() {
        return "the checkout holds the base, the head and their merge base".into();
    }
    let mut did = Vec::new();
    if !(has(base) && has(head)) {
        git(&["fetch", "--no-tags", "--quiet", "origin", base, head]);
        did.push("fetched the base and head commits");
    }
    for depth in ["50", "200", "1000"] {
        if found() {
            break;
        }
        git(&[
            "fetch",
            "--no-tags",
            "--quiet",
            &format!("--deepen={depth}"),
            "origin",
            base,
            head,
        ]);
        did.push("deepened the history");
    }
    // A full clone refuses --unshallow: that refusal changes nothing.
    if !found() && git(&["fetch", "--no-tags", "--quiet", "--unshallow", "origin"]) {
        did.push("unshallowed it");
    }
    did.dedup();
    if found() {
        format!(
            "the checkout lacked history for the merge base: {}",
            did.join(", ")
        )
    } else {
        format!(
            "no merge base of {base} and {head} in the checkout after trying ({}): the review \
             will say so",
            did.join(", ")
        )
    }
}

/// The step's outputs (`GITHUB_OUTPUT`) and its job summary (`GITHUB_STEP_SUMMARY`).
fn step_files(report: &Report, comment: Option<u64>) {
    let append = |var_name: &str, text: &str| {
        if let Some(path) = var(var_name) {
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(text.as_bytes()));
            if let Err(e) = written {
                eprintln!("proven: {var_name} {path}: {e}");
            }
        }
    };
    append(
        "GITHUB_OUTPUT",
        &format!(
            "status={}\nfindings={}\nreview-comment={}\n",
            report.status.as_str(),
            report.findings.len(),
            comment.map(|c| c.to_string()).unwrap_or_default()
        ),
    );
    append(
        "GITHUB_STEP_SUMMARY",
        &proven_report::render_markdown(report),
    );
}
