//! The World Model: the entities reviews have seen and the typed edges between them, with
//! validity intervals (DESIGN section 8; Meterless's World Model, `bitemp-001`).
//!
//! Invariants:
//! - An edge is valid over `[valid_from, valid_to)` (microseconds since the epoch); an edge
//!   whose end is not after its start is refused as [`StoreError::EdgeInterval`].
//! - An edge chain (tenant, from, kind, context) holds at most one valid edge at any
//!   instant. A new open edge closes the chain's open edge at its own start (a newer fact
//!   supersedes the older one); any other write that would overlap is refused as
//!   [`StoreError::EdgeOverlap`], naming both edges. On Postgres an exclusion constraint
//!   holds the rule whatever writers do concurrently; on SQLite writers take the database's
//!   one write lock, and the check runs inside it.
//! - Opening a store whose edges already break either rule is refused, by name
//!   ([`Store::world_check`], run by every open).
//! - Writing the same edge again (a replayed step) changes nothing.

use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::{Dialect, Store, StoreError};

/// An entity a review has seen: `kind:…` ids (`repository:github.com/acme/app`,
/// `package:crates.io:serde@1.0.1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorldEntity {
    pub tenant: String,
    pub id: String,
    pub kind: String,
    pub name: String,
    /// JSON.
    pub attrs: String,
    /// Provenance: what wrote it (a review id).
    pub source: String,
}

/// A typed edge with its validity interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorldEdge {
    pub tenant: String,
    pub from: String,
    pub kind: String,
    /// What the edge is about within its source (a lock file and a package name): the
    /// chain is (tenant, from, kind, context).
    pub context: String,
    pub to: String,
    pub valid_from: i64,
    pub valid_to: Option<i64>,
    /// Provenance: what wrote it (a review id and a commit).
    pub source: String,
}

impl WorldEdge {
    /// The edge's id: its chain, its target and its start (so a replayed write is the same
    /// edge, and two edges of a chain never share one).
    pub fn id(&self) -> String {
        let key = format!(
            "{}\0{}\0{}\0{}\0{}\0{}",
            self.tenant, self.from, self.kind, self.context, self.to, self.valid_from
        );
        format!(
            "edge:{}",
            hex::encode(&Sha256::digest(key.as_bytes())[..12])
        )
    }

    fn overlaps(&self, other: &StoredEdge) -> bool {
        let end = |t: Option<i64>| t.unwrap_or(i64::MAX);
        self.valid_from < end(other.valid_to) && other.valid_from < end(self.valid_to)
    }
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Related {
    /// Written; `closed` is the chain's open edge it closed at its start, if any.
    Written { id: String, closed: Option<String> },
    /// The chain already holds this fact (the same edge, or its open edge already points at
    /// the same target since no later than this start): nothing changed.
    Unchanged { id: String },
}

#[derive(Debug, Clone, sqlx::FromRow)]
struct StoredEdge {
    id: String,
    #[sqlx(rename = "to_id")]
    to: String,
    valid_from: i64,
    valid_to: Option<i64>,
}

/// An open `depends_on` edge: a repository's dependency as last seen.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Dependent {
    pub repository: String,
    /// The lock file (and package) the dependency was read from.
    pub context: String,
    /// The package entity's id.
    pub package: String,
    pub since: i64,
    pub source: String,
}

const EDGE_COLUMNS: &str = "id, to_id, valid_from, valid_to";

/// One mutation of the World Model, as its audit holds it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct WorldAudit {
    /// Strictly increasing in the order of the writes.
    pub seq: i64,
    pub at_us: i64,
    /// `entity.create`, `entity.update`, `edge.create`, `edge.close`.
    pub action: String,
    /// The entity's or the edge's id.
    pub subject: String,
    pub source: String,
}

/// Appends a mutation to the audit, inside the writing transaction.
async fn audit(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    tenant: &str,
    action: &str,
    subject: &str,
    source: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO world_audit (tenant_id, at_us, action, subject, source) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(tenant)
    .bind(crate::now_us())
    .bind(action)
    .bind(subject)
    .bind(source)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

impl Store {
    /// The tenant's audit, in order.
    pub async fn world_audit(&self, tenant: &str) -> Result<Vec<WorldAudit>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT seq, at_us, action, subject, source FROM world_audit WHERE tenant_id = $1 ORDER BY seq",
        )
        .bind(tenant)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The tenant's whole World Model in one canonical text: entities and edges, each in id
    /// order (two stores holding the same facts print the same text; an audit is not part of
    /// it).
    pub async fn world_snapshot(&self, tenant: &str) -> Result<String, StoreError> {
        let entities: Vec<serde_json::Value> = sqlx::query(
            "SELECT id, kind, name, attrs FROM world_entities WHERE tenant_id = $1 ORDER BY id",
        )
        .bind(tenant)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| -> Result<serde_json::Value, sqlx::Error> {
            let attrs: String = r.try_get("attrs")?;
            Ok(serde_json::json!({"id": r.try_get::<String, _>("id")?, "kind": r.try_get::<String, _>("kind")?,
                "name": r.try_get::<String, _>("name")?,
                "attrs": serde_json::from_str::<serde_json::Value>(&attrs).unwrap_or(serde_json::Value::String(attrs))}))
        })
        .collect::<Result<_, _>>()?;
        let edges: Vec<serde_json::Value> = sqlx::query(
            "SELECT id, from_id, kind, context, to_id, valid_from, valid_to FROM world_edges \
             WHERE tenant_id = $1 ORDER BY id",
        )
        .bind(tenant)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| -> Result<serde_json::Value, sqlx::Error> {
            Ok(serde_json::json!({"id": r.try_get::<String, _>("id")?, "from": r.try_get::<String, _>("from_id")?,
                "kind": r.try_get::<String, _>("kind")?, "context": r.try_get::<String, _>("context")?,
                "to": r.try_get::<String, _>("to_id")?, "valid_from": r.try_get::<i64, _>("valid_from")?,
                "valid_to": r.try_get::<Option<i64>, _>("valid_to")?}))
        })
        .collect::<Result<_, _>>()?;
        Ok(serde_json::json!({"entities": entities, "edges": edges}).to_string())
    }

    /// Records an entity (the first writer's provenance is kept; attributes are updated);
    /// true when it changed the World Model (a new entity, or new attributes), which the
    /// audit then holds.
    pub async fn world_upsert_entity(&self, e: &WorldEntity) -> Result<bool, StoreError> {
        if e.source.is_empty() {
            return Err(StoreError::InvalidInput(format!(
                "entity {}: a write without provenance",
                e.id
            )));
        }
        let mut tx = self.write_tx().await?;
        let before: Option<String> =
            sqlx::query_scalar("SELECT attrs FROM world_entities WHERE tenant_id = $1 AND id = $2")
                .bind(e.tenant.as_str())
                .bind(e.id.as_str())
                .fetch_optional(&mut *tx)
                .await?;
        let action = match before.as_deref() {
            Some(attrs) if attrs == e.attrs => return Ok(false),
            Some(_) => "entity.update",
            None => "entity.create",
        };
        sqlx::query(
            "INSERT INTO world_entities (tenant_id, id, kind, name, attrs, source, first_seen) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (tenant_id, id) DO UPDATE SET attrs = excluded.attrs",
        )
        .bind(e.tenant.as_str())
        .bind(e.id.as_str())
        .bind(e.kind.as_str())
        .bind(e.name.as_str())
        .bind(e.attrs.as_str())
        .bind(e.source.as_str())
        .bind(crate::now_us())
        .execute(&mut *tx)
        .await?;
        audit(&mut tx, &e.tenant, action, &e.id, &e.source).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Writes an edge under the chain rule (see the module's invariants). A write that two
    /// concurrent writers race for is tried again, so the later one closes the earlier.
    pub async fn world_relate(&self, edge: &WorldEdge) -> Result<Related, StoreError> {
        if edge.source.is_empty() {
            return Err(StoreError::InvalidInput(format!(
                "edge {}: a write without provenance",
                edge.id()
            )));
        }
        if let Some(to) = edge.valid_to
            && to <= edge.valid_from
        {
            return Err(StoreError::EdgeInterval {
                edge: edge.id(),
                detail: format!("its end {to} is not after its start {}", edge.valid_from),
            });
        }
        let mut tries = 0;
        loop {
            match self.relate_once(edge).await {
                Err(StoreError::Unavailable { message, .. })
                    if message.contains("world_edge_overlap") =>
                {
                    // Another writer's edge of the chain got in first (Postgres's exclusion
                    // constraint said so): read the chain again, with that edge in it.
                    tries += 1;
                    if tries > 3 {
                        return Err(StoreError::EdgeOverlap {
                            edge: edge.id(),
                            existing: "a concurrent writer's edge of the same chain".into(),
                        });
                    }
                }
                other => return other,
            }
        }
    }

    async fn relate_once(&self, edge: &WorldEdge) -> Result<Related, StoreError> {
        let id = edge.id();
        let mut tx = self.write_tx().await?;
        // The chain, locked against concurrent writers on Postgres.
        let lock = match self.dialect {
            Dialect::Postgres => " FOR UPDATE",
            Dialect::Sqlite => "",
        };
        let chain: Vec<StoredEdge> = sqlx::query_as(crate::sql::trusted(format!(
            "SELECT {EDGE_COLUMNS} FROM world_edges \
             WHERE tenant_id = $1 AND from_id = $2 AND kind = $3 AND context = $4 \
             ORDER BY valid_from{lock}"
        )))
        .bind(edge.tenant.as_str())
        .bind(edge.from.as_str())
        .bind(edge.kind.as_str())
        .bind(edge.context.as_str())
        .fetch_all(&mut *tx)
        .await?;
        if chain.iter().any(|e| e.id == id) {
            return Ok(Related::Unchanged { id });
        }
        let mut closed = None;
        if edge.valid_to.is_none()
            && let Some(open) = chain.iter().find(|e| e.valid_to.is_none())
        {
            if open.to == edge.to && open.valid_from <= edge.valid_from {
                // The fact already holds since then.
                return Ok(Related::Unchanged {
                    id: open.id.clone(),
                });
            }
            if open.valid_from < edge.valid_from {
                sqlx::query(
                    "UPDATE world_edges SET valid_to = $1 WHERE tenant_id = $2 AND id = $3",
                )
                .bind(edge.valid_from)
                .bind(edge.tenant.as_str())
                .bind(open.id.as_str())
                .execute(&mut *tx)
                .await?;
                closed = Some(open.id.clone());
            }
        }
        // The chain as it stands with that edge closed: nothing in it may overlap the new one.
        let effective = chain.iter().map(|e| match &closed {
            Some(c) if *c == e.id => StoredEdge {
                valid_to: Some(edge.valid_from),
                ..e.clone()
            },
            _ => e.clone(),
        });
        if let Some(existing) = effective.into_iter().find(|e| edge.overlaps(e)) {
            return Err(StoreError::EdgeOverlap {
                edge: id,
                existing: existing.id,
            });
        }
        sqlx::query(
            "INSERT INTO world_edges (tenant_id, id, from_id, kind, context, to_id, valid_from, \
             valid_to, source) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(edge.tenant.as_str())
        .bind(id.as_str())
        .bind(edge.from.as_str())
        .bind(edge.kind.as_str())
        .bind(edge.context.as_str())
        .bind(edge.to.as_str())
        .bind(edge.valid_from)
        .bind(edge.valid_to)
        .bind(edge.source.as_str())
        .execute(&mut *tx)
        .await?;
        if let Some(c) = &closed {
            audit(&mut tx, &edge.tenant, "edge.close", c, &edge.source).await?;
        }
        audit(&mut tx, &edge.tenant, "edge.create", &id, &edge.source).await?;
        tx.commit().await?;
        Ok(Related::Written { id, closed })
    }

    /// Closes the open edges of `from`'s `kind` chains whose context starts with `prefix`
    /// and that `keep` does not name, at `at` (a later review no longer sees them: a package
    /// removed from a lock file). Returns how many were closed.
    pub async fn world_close_absent(
        &self,
        (tenant, from, kind): (&str, &str, &str),
        prefix: &str,
        keep: &[String],
        at: i64,
    ) -> Result<u64, StoreError> {
        let open: Vec<(String, String, i64)> = sqlx::query(
            "SELECT id, context, valid_from FROM world_edges WHERE tenant_id = $1 AND from_id = $2 \
             AND kind = $3 AND valid_to IS NULL",
        )
        .bind(tenant)
        .bind(from)
        .bind(kind)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|r| {
            Ok((
                r.try_get("id")?,
                r.try_get("context")?,
                r.try_get("valid_from")?,
            ))
        })
        .collect::<Result<_, sqlx::Error>>()?;
        let mut closed = 0;
        for (id, context, since) in open {
            if !context.starts_with(prefix) || keep.contains(&context) || since >= at {
                continue;
            }
            closed += sqlx::query(
                "UPDATE world_edges SET valid_to = $1 WHERE tenant_id = $2 AND id = $3 \
                 AND valid_to IS NULL",
            )
            .bind(at)
            .bind(tenant)
            .bind(id.as_str())
            .execute(&self.pool)
            .await?
            .rows_affected();
        }
        Ok(closed)
    }

    /// The edges of `from` by `kind` valid at `at` (None: now, the open ones).
    pub async fn world_edges_of(
        &self,
        tenant: &str,
        from: &str,
        kind: &str,
        at: Option<i64>,
    ) -> Result<Vec<WorldEdge>, StoreError> {
        let rows = match at {
            None => sqlx::query(
                "SELECT from_id, kind, context, to_id, valid_from, valid_to, source FROM world_edges \
                 WHERE tenant_id = $1 AND from_id = $2 AND kind = $3 AND valid_to IS NULL \
                 ORDER BY context",
            )
            .bind(tenant)
            .bind(from)
            .bind(kind)
            .fetch_all(&self.pool)
            .await?,
            Some(at) => sqlx::query(
                "SELECT from_id, kind, context, to_id, valid_from, valid_to, source FROM world_edges \
                 WHERE tenant_id = $1 AND from_id = $2 AND kind = $3 AND valid_from <= $4 \
                 AND (valid_to IS NULL OR valid_to > $4) ORDER BY context",
            )
            .bind(tenant)
            .bind(from)
            .bind(kind)
            .bind(at)
            .fetch_all(&self.pool)
            .await?,
        };
        rows.iter()
            .map(|r| crate::world_graph::edge_of(tenant, r))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// Every open `depends_on` edge of the tenant (what each repository depends on now).
    pub async fn world_open_dependencies(
        &self,
        tenant: &str,
    ) -> Result<Vec<Dependent>, StoreError> {
        self.open_dependents(tenant, "package:").await
    }

    /// The repositories that depend now (an open `depends_on` edge) on a version of
    /// `ecosystem`'s package `name`: the package entities are `package:ECOSYSTEM:NAME@VERSION`.
    pub async fn world_dependents(
        &self,
        tenant: &str,
        ecosystem: &str,
        name: &str,
    ) -> Result<Vec<Dependent>, StoreError> {
        self.open_dependents(tenant, &format!("package:{ecosystem}:{name}@"))
            .await
    }

    /// The open `depends_on` edges of the tenant to a package entity whose id starts with
    /// `prefix`.
    async fn open_dependents(
        &self,
        tenant: &str,
        prefix: &str,
    ) -> Result<Vec<Dependent>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT from_id AS repository, context, to_id AS package, valid_from AS since, source \
             FROM world_edges WHERE tenant_id = $1 AND kind = 'depends_on' AND valid_to IS NULL \
             AND substr(to_id, 1, CAST($2 AS INTEGER)) = $3 ORDER BY from_id, context",
        )
        .bind(tenant)
        .bind(prefix.len() as i64)
        .bind(prefix)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Refuses a store whose edges break the World Model's rules: an edge whose end is not
    /// after its start ([`StoreError::EdgeInterval`], looked for first), then two edges of
    /// one chain valid at the same instant ([`StoreError::EdgeOverlap`], naming both).
    pub async fn world_check(&self) -> Result<(), StoreError> {
        if let Some(r) = sqlx::query(
            "SELECT id, valid_from, valid_to FROM world_edges \
             WHERE valid_to IS NOT NULL AND valid_to <= valid_from LIMIT 1",
        )
        .fetch_optional(&self.pool)
        .await?
        {
            let (id, from, to): (String, i64, i64) = (
                r.try_get("id")?,
                r.try_get("valid_from")?,
                r.try_get("valid_to")?,
            );
            return Err(StoreError::EdgeInterval {
                edge: id,
                detail: format!("its end {to} is not after its start {from}"),
            });
        }
        if let Some(r) = sqlx::query(
            "SELECT a.id AS edge, b.id AS existing FROM world_edges a JOIN world_edges b \
             ON a.tenant_id = b.tenant_id AND a.from_id = b.from_id AND a.kind = b.kind \
             AND a.context = b.context AND a.id < b.id \
             AND a.valid_from < COALESCE(b.valid_to, 9223372036854775807) \
             AND b.valid_from < COALESCE(a.valid_to, 9223372036854775807) LIMIT 1",
        )
        .fetch_optional(&self.pool)
        .await?
        {
            return Err(StoreError::EdgeOverlap {
                edge: r.try_get("edge")?,
                existing: r.try_get("existing")?,
            });
        }
        Ok(())
    }
}
