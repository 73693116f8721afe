//! `proven world REPOSITORY`: what the World Model holds of a repository, from the reviews
//! this store kept (`proven_store::world_graph`): its files, the packages they declare, the
//! advisories affecting those, the findings and their refutations, each edge with its
//! validity interval.

use std::io::Write;

use proven_store::{Store, WorldEdge};

use crate::exit::Exit;

#[derive(clap::Args)]
pub struct WorldArgs {
    /// The repository as a review names it (a local path or a URL).
    repository: String,
    /// The instant to read the World Model at, in seconds since the epoch (default: now,
    /// the open edges).
    #[arg(long)]
    at: Option<i64>,
    /// The tenant whose World Model to read (default: reviews of no tenant).
    #[arg(long, default_value = "")]
    tenant: String,
    /// One JSON object an edge (from, kind, context, to, valid_from, valid_to, source;
    /// times in microseconds).
    #[arg(long)]
    json: bool,
}

pub async fn run(store: &Store, args: WorldArgs) -> Result<u8, Exit> {
    let repository = proven_review::core::step::memory_identity(&args.repository);
    let edges = store
        .world_graph(
            &args.tenant,
            &repository,
            args.at.map(|s| s.saturating_mul(1_000_000)),
        )
        .await
        .map_err(|e| Exit::store(e.to_string()))?;
    let text: String = edges
        .iter()
        .map(|e| if args.json { json(e) } else { line(e) } + "\n")
        .collect();
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Exit::input(format!("write output: {e}")))?;
    if edges.is_empty() && !args.json {
        eprintln!("proven: the World Model holds nothing of {repository} at that instant");
    }
    Ok(0)
}

fn json(e: &WorldEdge) -> String {
    serde_json::json!({"from": e.from, "kind": e.kind, "context": e.context, "to": e.to,
                       "valid_from": e.valid_from, "valid_to": e.valid_to, "source": e.source})
    .to_string()
}

fn line(e: &WorldEdge) -> String {
    let until = e
        .valid_to
        .map_or_else(|| "now".to_string(), |t| (t / 1_000_000).to_string());
    format!(
        "{} {} {} [{}] {}..{}",
        e.from,
        e.kind,
        e.to,
        e.context,
        e.valid_from / 1_000_000,
        until
    )
}
