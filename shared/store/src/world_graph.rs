//! What reviews keep in the World Model (DESIGN section 8): the ids of the entities a review
//! has seen and the kinds of edge between them, read back as one repository's graph.
//!
//! - `repository:R` **contains** `file:R:PATH` (context: the path);
//! - `repository:R` **depends_on** `package:ECOSYSTEM:NAME@VERSION` (context: the file and
//!   the package) and `file:R:PATH` **declares** the same package (context: the package);
//! - `package:…` **affected_by** `advisory:ID` (context: the advisory's id);
//! - `file:R:PATH` **has_finding** `finding:R:ID` (context: the finding's id), and the
//!   finding is **about** its file, package and advisory (context: `file`, `package`,
//!   `advisory`); a finding H-MEM remembers a refutation of is **refuted_by**
//!   `memory:ID`.
//!
//! Every edge is valid from a commit's time (microseconds); a later review that no longer
//! sees it closes it at its own commit's time. A repository's World Model moves forward
//! only: [`Store::world_latest`] is the latest instant it holds, and a review of an older
//! commit writes nothing.

use std::collections::{BTreeSet, VecDeque};

use sqlx::Row;

use crate::{Store, StoreError, WorldEdge};

pub const CONTAINS: &str = "contains";
pub const DEPENDS_ON: &str = "depends_on";
pub const DECLARES: &str = "declares";
pub const AFFECTED_BY: &str = "affected_by";
pub const HAS_FINDING: &str = "has_finding";
pub const ABOUT: &str = "about";
pub const REFUTED_BY: &str = "refuted_by";

pub fn repository_id(repository: &str) -> String {
    format!("repository:{repository}")
}

pub fn file_id(repository: &str, path: &str) -> String {
    format!("file:{repository}:{path}")
}

pub fn package_id(ecosystem: &str, name: &str, version: &str) -> String {
    format!("package:{ecosystem}:{name}@{version}")
}

pub fn advisory_id(id: &str) -> String {
    format!("advisory:{id}")
}

pub fn finding_id(repository: &str, id: &str) -> String {
    format!("finding:{repository}:{id}")
}

pub fn memory_id(id: &str) -> String {
    format!("memory:{id}")
}

/// One `world_edges` row, read by column name.
pub(crate) fn edge_of(tenant: &str, r: &sqlx::any::AnyRow) -> Result<WorldEdge, sqlx::Error> {
    Ok(WorldEdge {
        tenant: tenant.to_string(),
        from: r.try_get("from_id")?,
        kind: r.try_get("kind")?,
        context: r.try_get("context")?,
        to: r.try_get("to_id")?,
        valid_from: r.try_get("valid_from")?,
        valid_to: r.try_get("valid_to")?,
        source: r.try_get("source")?,
    })
}

impl Store {
    /// The latest instant `repository`'s World Model holds: the latest start or end of an
    /// edge from the repository or from one of its files (None: nothing yet).
    pub async fn world_latest(
        &self,
        tenant: &str,
        repository: &str,
    ) -> Result<Option<i64>, StoreError> {
        let files = file_id(repository, "");
        let row = sqlx::query(
            "SELECT MAX(valid_from) AS started, MAX(valid_to) AS ended FROM world_edges \
             WHERE tenant_id = $1 AND (from_id = $2 OR substr(from_id, 1, CAST($3 AS INTEGER)) = $4)",
        )
        .bind(tenant)
        .bind(repository_id(repository))
        .bind(files.len() as i64)
        .bind(files.as_str())
        .fetch_one(&self.pool)
        .await?;
        let started: Option<i64> = row.try_get("started")?;
        let ended: Option<i64> = row.try_get("ended")?;
        Ok(started.max(ended))
    }

    /// Closes the chain's open edge at `at` (a later review no longer sees it); false when
    /// the chain has no open edge that started before `at`.
    pub async fn world_close(
        &self,
        (tenant, from, kind): (&str, &str, &str),
        context: &str,
        at: i64,
    ) -> Result<bool, StoreError> {
        Ok(sqlx::query(
            "UPDATE world_edges SET valid_to = $1 WHERE tenant_id = $2 AND from_id = $3 \
             AND kind = $4 AND context = $5 AND valid_to IS NULL AND valid_from < $6",
        )
        .bind(at)
        .bind(tenant)
        .bind(from)
        .bind(kind)
        .bind(context)
        .bind(at)
        .execute(&self.pool)
        .await?
        .rows_affected()
            > 0)
    }

    /// Every edge from `from`, of any kind, valid at `at` (None: the open ones).
    pub async fn world_edges_from(
        &self,
        tenant: &str,
        from: &str,
        at: Option<i64>,
    ) -> Result<Vec<WorldEdge>, StoreError> {
        let rows = sqlx::query(
            "SELECT from_id, kind, context, to_id, valid_from, valid_to, source FROM world_edges \
             WHERE tenant_id = $1 AND from_id = $2 \
             AND (($3 = 0 AND valid_to IS NULL) OR ($3 = 1 AND valid_from <= $4 \
                  AND (valid_to IS NULL OR valid_to > $4))) \
             ORDER BY kind, context",
        )
        .bind(tenant)
        .bind(from)
        .bind(i64::from(at.is_some()))
        .bind(at.unwrap_or(0))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| edge_of(tenant, r))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// `repository`'s graph at `at` (None: now): every edge valid then that can be reached
    /// from the repository (its files, their packages and findings, the packages'
    /// advisories, the findings' refutations), in the order reached.
    pub async fn world_graph(
        &self,
        tenant: &str,
        repository: &str,
        at: Option<i64>,
    ) -> Result<Vec<WorldEdge>, StoreError> {
        let start = repository_id(repository);
        let mut seen = BTreeSet::from([start.clone()]);
        let mut queue = VecDeque::from([start]);
        let mut out = Vec::new();
        while let Some(from) = queue.pop_front() {
            for edge in self.world_edges_from(tenant, &from, at).await? {
                if seen.insert(edge.to.clone()) {
                    queue.push_back(edge.to.clone());
                }
                out.push(edge);
            }
        }
        Ok(out)
    }
}
