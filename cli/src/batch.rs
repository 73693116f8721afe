//! `proven batch create|show|list` and `proven db sync --rereview`: re-review on advisory
//! change for an operator, straight on the service's store (the workers take the batches
//! up as any other). A schedule is the operator's cron or CronJob running
//! `proven db sync SOURCES --rereview`.

use proven_store::{Store, Tenant};

use crate::exit::{Exit, INPUT};

#[derive(clap::Subcommand)]
pub enum BatchCommand {
    /// Re-review, at batch priority, every repository an advisory change set newly affects:
    /// one batch per tenant (all tenants, or --tenant's).
    Create {
        /// The change set's id, as `proven db sync` printed it.
        #[arg(
            long,
            value_name = "ID",
            required_unless_present = "since",
            conflicts_with = "since"
        )]
        change_set: Option<String>,
        /// Or every change set recorded at or after this instant (RFC 3339).
        #[arg(long, value_name = "INSTANT")]
        since: Option<String>,
        /// Only this tenant (its name or id).
        #[arg(long)]
        tenant: Option<String>,
    },
    /// A batch's progress, and each finished re-review against the review before.
    Show {
        id: String,
        /// The batch's tenant (its name or id).
        #[arg(long)]
        tenant: String,
    },
    /// A tenant's batches, newest first.
    List {
        /// The tenant (its name or id).
        #[arg(long)]
        tenant: String,
    },
}

fn store_exit(e: proven_store::StoreError) -> Exit {
    Exit::store(e.to_string())
}

async fn tenants(store: &Store, only: Option<&str>) -> Result<Vec<Tenant>, Exit> {
    let all: Vec<Tenant> = store
        .list_tenants()
        .await
        .map_err(store_exit)?
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let Some(only) = only else {
        return Ok(all);
    };
    let found: Vec<Tenant> = all
        .into_iter()
        .filter(|t| t.name == only || t.id == only)
        .collect();
    if found.is_empty() {
        return Err(Exit {
            code: INPUT,
            message: format!("no tenant {only:?} (proven tenant list)"),
        });
    }
    Ok(found)
}

/// Submits each tenant's batch of re-reviews of the selected change sets, printing one line each
/// (and returning them as JSON for `db sync --json`).
pub async fn rereview(
    store: &Store,
    selector: &proven_worker::rereview::Selector,
    tenant: Option<&str>,
    max_queued: i64,
) -> Result<Vec<serde_json::Value>, Exit> {
    let mut out = Vec::new();
    for t in tenants(store, tenant).await? {
        let (batch, targets) = proven_worker::rereview::submit(store, &t.id, selector, max_queued)
            .await
            .map_err(store_exit)?;
        eprintln!(
            "proven: tenant {}: batch {batch} re-reviews {} repositories",
            t.name,
            targets.len()
        );
        out.push(serde_json::json!({
            "tenant": t.name, "batch": batch,
            "repositories": targets.iter().map(|x| serde_json::json!({
                "repository": x.repository, "base": x.base, "head": x.head,
                "previous": x.previous, "because": x.because})).collect::<Vec<_>>(),
        }));
    }
    Ok(out)
}

pub async fn run(store: &Store, max_queued: i64, command: BatchCommand) -> Result<u8, Exit> {
    match command {
        BatchCommand::Create {
            change_set,
            since,
            tenant,
        } => {
            use proven_worker::rereview::Selector;
            let selector = match (change_set, since) {
                (Some(id), _) => Selector::ChangeSet(id),
                (None, Some(t)) => Selector::ChangedSince(t),
                (None, None) => {
                    return Err(Exit::usage("batch create: --change-set or --since".into()));
                }
            };
            let made = rereview(store, &selector, tenant.as_deref(), max_queued).await?;
            println!(
                "{}",
                serde_json::to_string_pretty(&made).unwrap_or_default()
            );
        }
        BatchCommand::Show { id, tenant } => {
            let t = tenants(store, Some(&tenant)).await?.remove(0);
            let (total, counts) = store.batch(&id, &t.id).await.map_err(|e| match e {
                proven_store::StoreError::NotFound(what) => Exit {
                    code: INPUT,
                    message: format!("{what} not found for tenant {}", t.name),
                },
                other => store_exit(other),
            })?;
            let open: i64 = counts
                .iter()
                .filter(|(s, _)| s == "queued" || s == "running")
                .map(|(_, n)| n)
                .sum();
            let statuses: serde_json::Map<String, serde_json::Value> = counts
                .into_iter()
                .map(|(s, n)| (s, serde_json::json!(n)))
                .collect();
            let rereviews: Vec<serde_json::Value> = store
                .batch_rereviews(&t.id, &id)
                .await
                .map_err(store_exit)?
                .into_iter()
                .map(|r| {
                    serde_json::json!({"review": r.review, "repository": r.repository,
                        "previous": r.previous, "status": r.status,
                        "new": r.new, "still": r.still, "gone": r.gone})
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "id": id, "total": total, "done": open == 0,
                    "statuses": statuses, "rereviews": rereviews}))
                .unwrap_or_default()
            );
        }
        BatchCommand::List { tenant } => {
            let t = tenants(store, Some(&tenant)).await?.remove(0);
            for b in store.batches(&t.id, 100).await.map_err(store_exit)? {
                println!("{}\t{}\t{} reviews", b.id, b.created_at, b.total);
            }
        }
    }
    Ok(0)
}
