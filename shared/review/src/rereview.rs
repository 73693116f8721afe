//! Re-review when advisories change: the repositories whose current dependencies an
//! advisory change set newly affects, found through the World Model, each with its latest
//! reviewed change to review again (at batch priority, by the caller).
//!
//! Invariants:
//! - Only the World Model's open `depends_on` edges count (what each repository's latest
//!   reviewed head depends on now), and only a version the advisory's own rows affect,
//!   compared with the ecosystem's rules as the dependency evidence compares it: a package
//!   named by an advisory at a version outside its ranges re-reviews nothing.
//! - A tenant only ever sees its own repositories (the World Model is per tenant).
//! - A change set that added or modified nothing re-reviews nothing.

use std::collections::BTreeMap;

use proven_domain::Ecosystem;
use proven_store::{Store, StoreError};
use serde::{Deserialize, Serialize};

use crate::Trace;
use crate::steps::pin::{Pin, evaluate_pin};

/// A repository to review again, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The repository as its latest review named it.
    pub repository: String,
    pub base: String,
    pub head: String,
    /// The latest review of it (what the re-review is compared with).
    pub previous: String,
    /// The advisories of the change set that affect a version it depends on now, each as
    /// `ADVISORY: PACKAGE@VERSION (FILE)`.
    pub because: Vec<String>,
}

/// The packages an advisory record names: (OSV ecosystem, name).
fn packages(record: &str) -> Vec<(String, String)> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(record) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = v["affected"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| {
            Some((
                a["package"]["ecosystem"].as_str()?.to_string(),
                a["package"]["name"].as_str()?.to_string(),
            ))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The review id an edge's source names (`review ID at COMMIT`).
fn review_of(source: &str) -> Option<&str> {
    source.strip_prefix("review ")?.split(' ').next()
}

/// The repositories of `tenant` that change set `id` newly affects, each with its latest
/// reviewed change.
pub async fn affected(store: &Store, tenant: &str, id: &str) -> Result<Vec<Target>, StoreError> {
    let set = store.change_set(id).await?;
    let mut by_repository: BTreeMap<String, Target> = BTreeMap::new();
    let mut scratch = Trace::new(String::new());
    for advisory in set.new.iter().chain(&set.modified) {
        let Some(stored) = store.advisory(advisory).await? else {
            continue;
        };
        if stored.withdrawn.is_some() {
            continue;
        }
        for (osv, name) in packages(&stored.record) {
            let Some(eco) = Ecosystem::from_osv(&osv) else {
                continue;
            };
            let normalized = eco.normalize_name(&name);
            for d in store
                .world_dependents(tenant, eco.osv_name(), &normalized)
                .await?
            {
                let Some((_, version)) = d.package.rsplit_once('@') else {
                    continue;
                };
                let file = d.context.split('#').next().unwrap_or_default();
                let pin = Pin {
                    path: file,
                    ecosystem: eco,
                    name: &name,
                    base: None,
                    head: (version, 1),
                };
                let hit = evaluate_pin(store, pin, &mut scratch)
                    .await?
                    .iter()
                    .any(|f| f.advisory.as_ref().is_some_and(|a| &a.id == advisory));
                let Some(seen_by) = review_of(&d.source).filter(|_| hit) else {
                    continue;
                };
                let Some(latest) = latest_review(store, tenant, seen_by).await? else {
                    continue;
                };
                let target = by_repository
                    .entry(latest.repository.clone())
                    .or_insert(latest);
                let why = format!("{advisory}: {name}@{version} ({file})");
                if !target.because.contains(&why) {
                    target.because.push(why);
                }
            }
        }
    }
    Ok(by_repository.into_values().collect())
}

/// The tenant's latest review of the repository the review `seen_by` reviewed.
async fn latest_review(
    store: &Store,
    tenant: &str,
    seen_by: &str,
) -> Result<Option<Target>, StoreError> {
    let Some(seen) = store.review_summary(tenant, seen_by).await? else {
        return Ok(None);
    };
    let latest = store
        .list_reviews(tenant, None, None, None, 500)
        .await?
        .into_iter()
        .find(|r| r.repository == seen.repository)
        .unwrap_or(seen);
    Ok(Some(Target {
        repository: latest.repository,
        base: latest.base_rev,
        head: latest.head_rev,
        previous: latest.id,
        because: Vec::new(),
    }))
}

/// Submits `tenant`'s re-reviews of change set `id` as one batch at batch priority (within
/// the tenant's cap of unfinished reviews; a change set that newly affects nothing is a batch
/// of no reviews). The batch's id and what it re-reviews.
pub async fn submit(
    store: &Store,
    tenant: &str,
    id: &str,
    max_unfinished: i64,
) -> Result<(String, Vec<Target>), StoreError> {
    let targets = affected(store, tenant, id).await?;
    let batch = uuid::Uuid::now_v7().to_string();
    let reviews = targets
        .iter()
        .map(|t| {
            let request = proven_store::ReviewRequest {
                repository: t.repository.clone(),
                base: t.base.clone(),
                head: t.head.clone(),
                trace_id: Some(uuid::Uuid::now_v7().simple().to_string()),
                rereview_of: Some(t.previous.clone()),
                ..Default::default()
            };
            proven_store::NewPipelineReview::of_request(
                tenant,
                &request,
                proven_store::BATCH_PRIORITY,
                Some(batch.clone()),
            )
            .map_err(|e| StoreError::InvalidInput(format!("re-review request: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    store
        .submit_batch(&batch, tenant, &reviews, max_unfinished)
        .await?;
    Ok((batch, targets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advisory_names_its_packages_and_an_edge_its_review() {
        let record = r#"{"id": "X", "affected": [
            {"package": {"ecosystem": "npm", "name": "ms"}},
            {"package": {"ecosystem": "npm", "name": "ms"}},
            {"package": {"ecosystem": "PyPI", "name": "Flask"}}]}"#;
        assert_eq!(
            packages(record),
            [
                ("PyPI".to_string(), "Flask".to_string()),
                ("npm".to_string(), "ms".to_string())
            ]
        );
        assert!(packages("not json").is_empty());
        assert_eq!(review_of("review 0193-ab at 1234abcd"), Some("0193-ab"));
        assert_eq!(review_of("an import"), None);
    }
}
