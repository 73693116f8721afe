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

use proven_review::core::deps;
use proven_review::core::trace::Trace;

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

/// The review id an edge's source names (`review ID at COMMIT`).
fn review_of(source: &str) -> Option<&str> {
    source.strip_prefix("review ")?.split(' ').next()
}

/// (OSV ecosystem, name, version) of a package entity `package:ECOSYSTEM:NAME@VERSION`.
fn package_of(entity: &str) -> Option<(&str, &str, &str)> {
    let rest = entity.strip_prefix("package:")?;
    let (eco, name_version) = rest.split_once(':')?;
    let (name, version) = name_version.rsplit_once('@')?;
    Some((eco, name, version))
}

/// Change sets one selector may cover at most (hourly syncs of six weeks).
pub const MAX_CHANGE_SETS: usize = 1000;

/// The repositories of `tenant` whose current dependencies an advisory of `advisories`
/// affects. The work grows with the tenant's dependencies, never with the advisories: every
/// open edge of the World Model is evaluated once against the store, as the dependency
/// evidence would evaluate the file (one query per ecosystem), and a finding counts when
/// its advisory is one of `advisories`.
async fn affected_by(
    store: &Store,
    tenant: &str,
    advisories: &std::collections::BTreeSet<String>,
) -> Result<Vec<Target>, StoreError> {
    use proven_domain::{Dependency, DependencyKind, Origin};
    use proven_lockfile::{DependencyFile, Format};
    if advisories.is_empty() {
        return Ok(Vec::new());
    }
    let edges = store.world_open_dependencies(tenant).await?;
    // One file a (repository, file) holding every package the edges name there.
    let mut files: BTreeMap<(String, String), (Vec<Dependency>, String)> = BTreeMap::new();
    for e in &edges {
        let Some((eco, name, version)) = package_of(&e.package) else {
            continue;
        };
        let Some(ecosystem) = Ecosystem::from_osv(eco) else {
            continue;
        };
        let file = e.context.split('#').next().unwrap_or_default().to_string();
        let entry = files
            .entry((e.repository.clone(), file))
            .or_insert_with(|| (Vec::new(), e.source.clone()));
        entry.0.push(Dependency {
            ecosystem,
            name: name.to_string(),
            version: version.to_string(),
            kind: DependencyKind::Direct,
            origin: Origin::Registry,
            dev: false,
            line: None,
        });
    }
    let keys: Vec<(String, String)> = files.keys().cloned().collect();
    let pairs: Vec<deps::FilePair> = files
        .iter()
        .map(|((repository, file), (dependencies, _))| deps::FilePair {
            // The repository travels in the path, so each finding says whose it is.
            path: format!("{repository}\u{0}{file}"),
            base: None,
            head: Some(DependencyFile {
                path: file.clone(),
                format: Format::RequirementsTxt,
                dependencies: dependencies.clone(),
                notes: Vec::new(),
            }),
        })
        .collect();
    let options = deps::DepsOptions {
        informational: proven_config::Informational::Report,
        dev_dependencies: true,
        limits: proven_lockfile::Limits::default(),
    };
    let mut scratch = Trace::new(String::new());
    let found = deps::evaluate(store, &pairs, &options, &mut scratch).await?;
    let mut by_repository: BTreeMap<String, Target> = BTreeMap::new();
    for f in found.findings {
        let Some(advisory) = f.advisory.as_ref().map(|a| a.id.clone()) else {
            continue;
        };
        if !advisories.contains(&advisory) {
            continue;
        }
        let Some((repository, file)) = f.location.path.split_once('\u{0}') else {
            continue;
        };
        let Some(source) = keys
            .iter()
            .position(|(r, p)| r == repository && p == file)
            .and_then(|i| files.get(&keys[i]))
            .map(|(_, source)| source.clone())
        else {
            continue;
        };
        let Some(seen_by) = review_of(&source) else {
            continue;
        };
        let Some(latest) = latest_review(store, tenant, seen_by).await? else {
            continue;
        };
        let target = by_repository
            .entry(latest.repository.clone())
            .or_insert(latest);
        let package = f
            .package
            .as_ref()
            .map(|p| format!("{}@{}", p.name, p.new_version))
            .unwrap_or_default();
        let why = format!("{advisory}: {package} ({file})");
        if !target.because.contains(&why) {
            target.because.push(why);
        }
    }
    Ok(by_repository.into_values().collect())
}

/// The repositories of `tenant` that change set `id` newly affects (its new and modified
/// advisories), each with its latest reviewed change.
pub async fn affected(store: &Store, tenant: &str, id: &str) -> Result<Vec<Target>, StoreError> {
    let set = store.change_set(id).await?;
    let advisories = set.new.into_iter().chain(set.modified).collect();
    affected_by(store, tenant, &advisories).await
}

/// What a batch of re-reviews is of: one change set, or every change set recorded at or
/// after an instant (RFC 3339).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    ChangeSet(String),
    ChangedSince(String),
}

/// The repositories of `tenant` that the selected change sets newly affect (each once, with
/// every advisory that does).
pub async fn selected(
    store: &Store,
    tenant: &str,
    selector: &Selector,
) -> Result<Vec<Target>, StoreError> {
    let sets = match selector {
        Selector::ChangeSet(id) => vec![id.clone()],
        Selector::ChangedSince(since) => store.change_sets_since(since).await?,
    };
    if sets.len() > MAX_CHANGE_SETS {
        return Err(StoreError::InvalidInput(format!(
            "the selector covers {} change sets, more than {MAX_CHANGE_SETS}: name a later instant or one change set",
            sets.len()
        )));
    }
    let mut advisories = std::collections::BTreeSet::new();
    for id in sets {
        let set = store.change_set(&id).await?;
        advisories.extend(set.new.into_iter().chain(set.modified));
    }
    affected_by(store, tenant, &advisories).await
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

/// Submits `tenant`'s re-reviews of the selected change sets as one batch at batch priority (within
/// the tenant's cap of unfinished reviews; a change set that newly affects nothing is a batch
/// of no reviews). The batch's id and what it re-reviews.
pub async fn submit(
    store: &Store,
    tenant: &str,
    selector: &Selector,
    max_unfinished: i64,
) -> Result<(String, Vec<Target>), StoreError> {
    let targets = selected(store, tenant, selector).await?;
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
        let _ = record;
        assert_eq!(
            package_of("package:crates.io:serde@1.0.1"),
            Some(("crates.io", "serde", "1.0.1"))
        );
        assert_eq!(
            package_of("package:npm:@babel/core@7.0.0"),
            Some(("npm", "@babel/core", "7.0.0"))
        );
        assert_eq!(package_of("repository:x"), None);
        assert_eq!(review_of("review 0193-ab at 1234abcd"), Some("0193-ab"));
        assert_eq!(review_of("an import"), None);
    }
}
