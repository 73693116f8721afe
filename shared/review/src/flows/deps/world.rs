//! What `deps.file` teaches the World Model (`proven_store::world_graph` names the entities
//! and edges): the repository contains the dependency file; the repository depends on, and
//! the file declares, each registry package of the head's file at its version; each finding
//! is the file's, about its package and advisory, and the package is affected by the
//! advisory; a finding H-MEM remembers a refutation of is refuted by that memory record.
//!
//! Every edge starts at the head commit's time. A version the chain held before is closed at
//! that time, and so is what the file no longer holds: a package, a finding, or, when the
//! change deletes the file, the file itself with everything it declared. A review of a
//! commit older than what the World Model holds of the repository writes nothing (the trace
//! says so).

use std::collections::BTreeMap;

use proven_pipeline::{Lease, StepError};
use proven_report::Finding;
use proven_store::world_graph::{
    ABOUT, AFFECTED_BY, CONTAINS, DECLARES, DEPENDS_ON, HAS_FINDING, REFUTED_BY, advisory_id,
    file_id, finding_id, memory_id, package_id, repository_id,
};
use proven_store::{Related, Store, StoreError, WorldEdge, WorldEntity};
use serde_json::json;

use crate::core::deps::FilePair;
use crate::core::outcome::retryable;
use crate::core::step::StepContext;
use crate::core::trace::Trace;

/// Where one `deps.file` step writes: its tenant, repository, file and head commit's time.
pub(super) struct World {
    tenant: String,
    repository: String,
    path: String,
    at: i64,
    source: String,
}

/// Writes what the head holds of the dependency file at `path` (`pair`: read; `deleted`:
/// the change deletes it). Returns where the step's findings go, or None when nothing is
/// written (no commit time, an unreadable head, or an older commit than the World Model
/// holds).
pub(super) async fn files(
    cx: &StepContext,
    lease: &Lease,
    (commit, committed_at): &(String, Option<i64>),
    (path, pair, deleted): (&str, Option<&FilePair>, bool),
    trace: &mut Trace,
) -> Result<Option<World>, StepError> {
    let Some(at) = committed_at else {
        return Ok(None);
    };
    if pair.is_none() && !deleted {
        return Ok(None);
    }
    let scope = cx.memory_scope(&lease.id.review_id).await?;
    let world = World {
        tenant: scope.tenant,
        repository: scope.repository,
        path: path.to_string(),
        at: at.saturating_mul(1_000_000),
        source: format!("review {} at {commit}", lease.id.review_id),
    };
    let latest = cx
        .store
        .world_latest(&world.tenant, &world.repository)
        .await
        .map_err(retryable)?;
    if let Some(latest) = latest.filter(|l| *l > world.at) {
        trace.push(
            "world_model",
            json!({"file": path, "written": false,
                   "reason": format!("the World Model holds this repository at {latest}, later than this head's commit ({}): a review of an older commit writes nothing", world.at)}),
        );
        return Ok(None);
    }
    match pair.and_then(|p| p.head.as_ref()) {
        Some(head) => {
            if !world.present(&cx.store, head, trace).await? {
                return Ok(None);
            }
            Ok(Some(world))
        }
        None => {
            world.deleted(&cx.store, trace).await?;
            Ok(None)
        }
    }
}

impl World {
    fn entity(&self, id: &str, kind: &str, name: &str) -> WorldEntity {
        WorldEntity {
            tenant: self.tenant.clone(),
            id: id.to_string(),
            kind: kind.into(),
            name: name.to_string(),
            attrs: "{}".into(),
            source: self.source.clone(),
        }
    }

    fn edge(&self, from: &str, kind: &str, context: &str, to: &str) -> WorldEdge {
        WorldEdge {
            tenant: self.tenant.clone(),
            from: from.to_string(),
            kind: kind.into(),
            context: context.to_string(),
            to: to.to_string(),
            valid_from: self.at,
            valid_to: None,
            source: self.source.clone(),
        }
    }

    fn file(&self) -> String {
        file_id(&self.repository, &self.path)
    }

    /// The open edges of `from` by `kind`, context to target.
    async fn open(
        &self,
        store: &Store,
        from: &str,
        kind: &str,
    ) -> Result<BTreeMap<String, String>, StepError> {
        Ok(store
            .world_edges_of(&self.tenant, from, kind, None)
            .await
            .map_err(retryable)?
            .into_iter()
            .map(|e| (e.context, e.to))
            .collect())
    }

    /// The repository, the file and its packages; false (said in the trace) when an edge
    /// of a later commit is in the way.
    async fn present(
        &self,
        store: &Store,
        head: &proven_lockfile::DependencyFile,
        trace: &mut Trace,
    ) -> Result<bool, StepError> {
        let (repository, file) = (repository_id(&self.repository), self.file());
        for e in [
            self.entity(&repository, "repository", &self.repository),
            self.entity(&file, "file", &self.path),
        ] {
            store.world_upsert_entity(&e).await.map_err(retryable)?;
        }
        let mut edges = vec![self.edge(&repository, CONTAINS, &self.path, &file)];
        let (by_repository, by_file) = (
            self.open(store, &repository, DEPENDS_ON).await?,
            self.open(store, &file, DECLARES).await?,
        );
        let (mut seen, mut declared) = (Vec::new(), Vec::new());
        for (package, ecosystem_name, name) in dependency_edges(head) {
            let context = format!("{}#{ecosystem_name}", self.path);
            if by_repository.get(&context) != Some(&package)
                || by_file.get(&ecosystem_name) != Some(&package)
            {
                store
                    .world_upsert_entity(&self.entity(&package, "package", &name))
                    .await
                    .map_err(retryable)?;
                edges.push(self.edge(&repository, DEPENDS_ON, &context, &package));
                edges.push(self.edge(&file, DECLARES, &ecosystem_name, &package));
            }
            seen.push(context);
            declared.push(ecosystem_name);
        }
        let mut written = 0;
        for edge in &edges {
            match relate(store, edge).await? {
                Some(Related::Written { .. }) => written += 1,
                Some(Related::Unchanged { .. }) => {}
                None => {
                    trace.push(
                        "world_model",
                        json!({"file": self.path, "written": false, "reason": format!("edge {} of {}: the World Model holds a later commit of this repository", edge.kind, edge.from)}),
                    );
                    return Ok(false);
                }
            }
        }
        let mut closed = 0;
        for (from, kind, prefix, keep) in [
            (&repository, DEPENDS_ON, format!("{}#", self.path), &seen),
            (&file, DECLARES, String::new(), &declared),
        ] {
            closed += store
                .world_close_absent((&self.tenant, from, kind), &prefix, keep, self.at)
                .await
                .map_err(retryable)?;
        }
        trace.push(
            "world_model",
            json!({"file": self.path, "packages": seen.len(), "written": written, "closed": closed}),
        );
        Ok(true)
    }

    /// The change deletes the file: the repository no longer contains it, and what it
    /// declared, what the repository depended on through it and its findings are closed.
    async fn deleted(&self, store: &Store, trace: &mut Trace) -> Result<(), StepError> {
        let (repository, file) = (repository_id(&self.repository), self.file());
        let mut closed = u64::from(
            store
                .world_close((&self.tenant, &repository, CONTAINS), &self.path, self.at)
                .await
                .map_err(retryable)?,
        );
        for (from, kind, prefix) in [
            (&repository, DEPENDS_ON, format!("{}#", self.path)),
            (&file, DECLARES, String::new()),
            (&file, HAS_FINDING, String::new()),
        ] {
            closed += store
                .world_close_absent((&self.tenant, from, kind), &prefix, &[], self.at)
                .await
                .map_err(retryable)?;
        }
        trace.push(
            "world_model",
            json!({"file": self.path, "deleted": true, "closed": closed}),
        );
        Ok(())
    }

    /// The file's findings (a finding it no longer has is closed), each about its file,
    /// package and advisory, the package affected by the advisory.
    pub(super) async fn findings(
        &self,
        cx: &StepContext,
        findings: &[Finding],
        trace: &mut Trace,
    ) -> Result<(), StepError> {
        let file = self.file();
        let mut kept = Vec::new();
        for f in findings {
            let finding = self.finding(&cx.store, f).await?;
            relate(&cx.store, &self.edge(&file, HAS_FINDING, &f.id, &finding)).await?;
            kept.push(f.id.clone());
        }
        let closed = cx
            .store
            .world_close_absent((&self.tenant, &file, HAS_FINDING), "", &kept, self.at)
            .await
            .map_err(retryable)?;
        trace.push(
            "world_model",
            json!({"file": self.path, "findings": kept.len(), "closed": closed}),
        );
        Ok(())
    }

    /// The findings H-MEM remembers a refutation of (`remembered`: finding and memory
    /// record), each refuted by its record.
    pub(super) async fn refuted(
        &self,
        cx: &StepContext,
        findings: &[Finding],
        remembered: &[(String, String)],
    ) -> Result<(), StepError> {
        for f in findings {
            let Some((_, record)) = remembered.iter().find(|(id, _)| *id == f.id) else {
                continue;
            };
            let finding = self.finding(&cx.store, f).await?;
            let memory = memory_id(record);
            cx.store
                .world_upsert_entity(&self.entity(&memory, "memory_record", record))
                .await
                .map_err(retryable)?;
            relate(
                &cx.store,
                &self.edge(&finding, REFUTED_BY, "memory", &memory),
            )
            .await?;
        }
        Ok(())
    }

    /// The finding's entity with what it is about; its id.
    async fn finding(&self, store: &Store, f: &Finding) -> Result<String, StepError> {
        let finding = finding_id(&self.repository, &f.id);
        store
            .world_upsert_entity(&self.entity(&finding, "finding", &f.title))
            .await
            .map_err(retryable)?;
        let mut about = vec![("file", self.file())];
        let package = f.package.as_ref().map(|p| {
            let name = proven_domain::Ecosystem::from_osv(&p.ecosystem)
                .map_or_else(|| p.name.clone(), |e| e.normalize_name(&p.name));
            package_id(&p.ecosystem, &name, &p.new_version)
        });
        if let Some(package) = &package {
            about.push(("package", package.clone()));
        }
        if let Some(a) = &f.advisory {
            let advisory = advisory_id(&a.id);
            store
                .world_upsert_entity(&self.entity(&advisory, "advisory", &a.id))
                .await
                .map_err(retryable)?;
            if let Some(package) = &package {
                relate(store, &self.edge(package, AFFECTED_BY, &a.id, &advisory)).await?;
            }
            about.push(("advisory", advisory));
        }
        for (context, to) in about {
            relate(store, &self.edge(&finding, ABOUT, context, &to)).await?;
        }
        Ok(finding)
    }
}

/// Writes an edge; None when a later commit's edge of its chain is in the way (a package's
/// advisory seen first by a review of another repository's later commit holds already).
async fn relate(store: &Store, edge: &WorldEdge) -> Result<Option<Related>, StepError> {
    match store.world_relate(edge).await {
        Ok(r) => Ok(Some(r)),
        Err(StoreError::EdgeOverlap { .. }) => Ok(None),
        Err(e) => Err(retryable(e)),
    }
}

/// The file's registry packages as (package entity, context within the file, name): the
/// context is the package (`crates.io:serde`), and a second version of one package in the
/// same file gets a chain of its own (`…#2`), in version order.
fn dependency_edges(file: &proven_lockfile::DependencyFile) -> Vec<(String, String, String)> {
    let mut by_name: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    // Packages of a registry only: a path or git dependency (the project's own crate
    // included) is no package version an advisory names.
    for d in file
        .dependencies
        .iter()
        .filter(|d| d.origin == proven_domain::Origin::Registry)
    {
        let name = d.ecosystem.normalize_name(&d.name);
        let versions = by_name
            .entry((d.ecosystem.osv_name().to_string(), name))
            .or_default();
        if !versions.contains(&d.version) {
            versions.push(d.version.clone());
        }
    }
    let mut out = Vec::new();
    for ((ecosystem, name), mut versions) in by_name {
        versions.sort();
        for (i, version) in versions.iter().enumerate() {
            let slot = if i == 0 {
                String::new()
            } else {
                format!("#{}", i + 1)
            };
            out.push((
                package_id(&ecosystem, &name, version),
                format!("{ecosystem}:{name}{slot}"),
                name.clone(),
            ));
        }
    }
    out
}
