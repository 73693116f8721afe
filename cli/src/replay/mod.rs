//! `proven replay REVIEW|REPORT.json [FINDING]`: a finding's evidence, run again from its
//! record. A defect's runs are rebuilt from the recorded commit, image, test and command
//! ([`runs`]); an advisory finding is evaluated again against the store's rows
//! ([`advisory`]). Exit 0 when everything holds, [`crate::exit::NOT_HELD`] otherwise.

mod advisory;
mod runs;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use proven_config::Config;
use proven_report::{Finding, Report};
use proven_store::Store;
use serde::Serialize;

use crate::exit::{self, Exit};

#[derive(Args)]
pub struct ReplayArgs {
    /// A stored review's id, or a JSON report (`--format json`) as a file.
    pub review: String,
    /// Only this finding (its id, as every format shows it under the finding).
    pub finding: Option<String>,
    /// The git repository the runs' commits are read from (default: the review's).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// Print the verdicts as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One finding, replayed.
#[derive(Debug, Serialize)]
struct FindingReplay {
    id: String,
    title: String,
    runs: Vec<runs::RunReplay>,
    #[serde(skip_serializing_if = "Option::is_none")]
    advisory: Option<advisory::AdvisoryReplay>,
    /// Why nothing was replayed (no run, no advisory), when so.
    #[serde(skip_serializing_if = "Option::is_none")]
    nothing: Option<String>,
}

impl FindingReplay {
    fn holds(&self) -> bool {
        self.runs.iter().all(|r| r.holds) && self.advisory.as_ref().is_none_or(|a| a.holds)
    }
}

/// The report and the repository its runs came from.
async fn load(store: &Store, args: &ReplayArgs) -> Result<(Report, PathBuf), Exit> {
    let file = Path::new(&args.review);
    let (text, repository) = if file.is_file() {
        let text = std::fs::read_to_string(file)
            .map_err(|e| Exit::input(format!("read {}: {e}", file.display())))?;
        (text, None)
    } else {
        let review = store
            .review(&args.review)
            .await
            .map_err(crate::store_exit)?;
        let Some(result) = review.result else {
            return Err(Exit::input(format!(
                "review {} has no result yet (status {})",
                args.review,
                review.status.as_str()
            )));
        };
        (result, Some(review.repository))
    };
    let report: Report = serde_json::from_str(&text)
        .map_err(|e| Exit::input(format!("{}: not a Proven JSON report: {e}", args.review)))?;
    let repo = args
        .repo
        .clone()
        .or(repository.map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(&report.target));
    Ok((report, repo))
}

pub async fn run(store: &Store, config: &Config, args: ReplayArgs) -> Result<u8, Exit> {
    let (report, repo) = load(store, &args).await?;
    let findings: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| args.finding.as_ref().is_none_or(|id| &f.id == id))
        .collect();
    if let (Some(id), true) = (&args.finding, findings.is_empty()) {
        return Err(Exit::input(format!("no finding {id} in {}", args.review)));
    }
    let needs_sandbox = findings
        .iter()
        .any(|f| f.evidence.iter().any(|e| e.run.is_some()));
    let sandbox = if needs_sandbox {
        let settings = proven_sandbox::SandboxConfig::from_settings(&config.sandbox)
            .map_err(|e| Exit::config_message(e.to_string()))?;
        Some(
            // No warm pool: each run starts its container cold, as a one-off run does.
            proven_sandbox::Sandbox::connect(proven_sandbox::SandboxConfig {
                pool_size: 0,
                ..settings
            })
            .await
            .map_err(|e| Exit::internal(format!("the sandbox: {e}")))?,
        )
    } else {
        None
    };
    let mut replays = Vec::new();
    for f in findings {
        replays.push(replay_finding(store, sandbox.as_ref(), &repo, f).await?);
    }
    let holds = replays.iter().all(FindingReplay::holds);
    print(&args, &replays, holds)?;
    Ok(if holds { 0 } else { exit::NOT_HELD })
}

async fn replay_finding(
    store: &Store,
    sandbox: Option<&proven_sandbox::Sandbox>,
    repo: &Path,
    f: &Finding,
) -> Result<FindingReplay, Exit> {
    let advisory = advisory::replay(store, f)
        .await
        .map_err(|e| Exit::store(e.to_string()))?;
    let test = f.evidence.iter().find_map(|e| e.test.as_ref());
    let mut replayed = Vec::new();
    if let (Some(sandbox), Some(test)) = (sandbox, test) {
        for run in f.evidence.iter().filter_map(|e| e.run.as_ref()) {
            replayed.push(runs::replay(sandbox, repo, test, run).await);
        }
    }
    let nothing = (replayed.is_empty() && advisory.is_none()).then(|| {
        "no evidence run with its test, and no advisory: nothing to run again".to_string()
    });
    Ok(FindingReplay {
        id: f.id.clone(),
        title: f.title.clone(),
        runs: replayed,
        advisory,
        nothing,
    })
}

fn print(args: &ReplayArgs, replays: &[FindingReplay], holds: bool) -> Result<(), Exit> {
    let mut out = std::io::stdout().lock();
    let write = |e: std::io::Error| Exit::input(format!("write output: {e}"));
    if args.json {
        let doc = serde_json::json!({"review": args.review, "holds": holds, "findings": replays});
        return writeln!(out, "{doc:#}").map_err(write);
    }
    for f in replays {
        writeln!(out, "{} — {}", f.id, f.title).map_err(write)?;
        for r in &f.runs {
            let short = &r.commit[..12.min(r.commit.len())];
            let verdict = if r.holds { "holds" } else { "does not hold" };
            writeln!(
                out,
                "  run {} ({} {short}): {verdict}: {}",
                r.run_id, r.side, r.why
            )
            .map_err(write)?;
        }
        if let Some(a) = &f.advisory {
            let verdict = if a.holds { "holds" } else { "does not hold" };
            writeln!(out, "  advisory {}: {verdict}: {}", a.advisory, a.why).map_err(write)?;
            if let Some((was, now)) = &a.changed {
                let said = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
                writeln!(
                    out,
                    "  the store changed since the report: {} modified {} then, {} now",
                    a.advisory,
                    said(was),
                    said(now)
                )
                .map_err(write)?;
            }
        }
        if let Some(n) = &f.nothing {
            writeln!(out, "  {n}").map_err(write)?;
        }
    }
    let last = if holds {
        "Every replayed finding holds."
    } else {
        "Some evidence no longer holds."
    };
    writeln!(out, "{last}").map_err(write)
}
