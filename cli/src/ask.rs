//! `proven ask QUESTION --repo PATH [--rev REV]`: a question about a repository answered
//! with cited claims, attacked by the refuter and the coverage auditor
//! (`proven_ask`).

use std::io::Write;
use std::path::PathBuf;

use proven_ask::{self as ask, Checkout, ClaimStatus};
use proven_config::Config;
use proven_review::Trace;

use crate::exit::{self, Exit};

#[derive(clap::Args)]
pub struct AskArgs {
    /// The question, in words.
    pub question: String,
    /// The git repository the question is about.
    #[arg(long)]
    pub repo: PathBuf,
    /// The revision the claims cite (a branch, tag, SHA or expression).
    #[arg(long, default_value = "HEAD")]
    pub rev: String,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json"])]
    pub format: String,
    /// Write the output to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs the ask: exit 0 with every surface covered and every claim settled by an
/// artifact; 3 when something stays open ("what this run could not see") or a service
/// failed; 4 for a question or repository that cannot be read.
pub async fn run(config: &Config, args: AskArgs) -> Result<u8, Exit> {
    if args.question.trim().is_empty() {
        return Err(Exit::usage("ask: the question is empty".into()));
    }
    if !config.agents {
        return Err(Exit::config_message(
            "ask needs the model agents: set PROVEN_GENERATOR_API_KEY or PROVEN_GENERATOR_BASE_URL \
             (agents = auto), or agents = on"
                .into(),
        ));
    }
    let agents = proven_review::model::Agents::from_config(config).map_err(Exit::config_message)?;
    let (dir, rev) = (args.repo.clone(), args.rev.clone());
    let checkout = tokio::task::spawn_blocking(move || Checkout::open(&dir, &rev))
        .await
        .map_err(|e| Exit::internal(e.to_string()))?
        .map_err(|e| Exit::input(format!("ask: {}: {e}", args.repo.display())))?;
    let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
    let answer = ask::ask(&agents, &checkout, (&args.question, &args.rev), &mut trace)
        .await
        .map_err(|e| Exit {
            code: exit::INCOMPLETE,
            message: format!("ask: {e}"),
        })?;
    let text = match args.format.as_str() {
        "json" => ask::render::json(&answer),
        "markdown" => ask::render::markdown(&answer),
        _ => ask::render::text(&answer),
    };
    match &args.output {
        Some(path) => std::fs::write(path, &text)
            .map_err(|e| Exit::input(format!("write {}: {e}", path.display())))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|_| out.flush())
                .map_err(|e| Exit::input(format!("write output: {e}")))?;
        }
    }
    let open = !answer.could_not_see.is_empty()
        || !answer.failed_services.is_empty()
        || answer
            .claims
            .iter()
            .any(|c| c.status == ClaimStatus::Unresolved);
    Ok(if open { exit::INCOMPLETE } else { 0 })
}
