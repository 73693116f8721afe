//! H-MEM: the memory of what reviews refuted.

use proven_engines::hmem::{Hmem, Record, Retrieval, retrieval::leading_words};
use sqlx::Row;

use crate::sql::now;
use crate::{Store, StoreError};

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct MemoryRecord {
    pub id: String,
    /// The tenant whose review proved the refutation ('' for reviews of no tenant: the
    /// embedded default). A lookup sees only its own tenant's records.
    #[sqlx(rename = "tenant_id")]
    pub tenant: String,
    /// The repository's normalised identity (`proven_domain::repository_identity`).
    pub repository: String,
    pub fingerprint: String,
    pub kind: String,
    pub path: String,
    pub symbol: Option<String>,
    pub claim: String,
    pub refutation: String,
    pub provenance: String,
    pub confidence: f64,
    pub created_at: String,
}

impl Store {
    /// The tenant's repository's current records whose claims share words with `query`'s
    /// first `query_tokens` words, scored by the share of those words a claim holds (best
    /// first, at most `limit`): H-MEM's retrieval (`proven_engines::hmem`) under
    /// [`Retrieval::refutations`], which scores, leaves superseded records out, ranks and
    /// bounds. Only ever shown: a score never silences a finding, nor revives one a
    /// fingerprint silenced (the fingerprint alone decides, see [`Store::memory_lookup`]).
    pub async fn memory_similar(
        &self,
        (tenant, repository): (&str, &str),
        query: &str,
        query_tokens: usize,
        limit: usize,
    ) -> Result<Vec<(String, f64)>, StoreError> {
        if leading_words(query, query_tokens).is_empty() {
            return Ok(Vec::new());
        }
        // The current records first, so the window holds them all before any superseded one.
        let rows = sqlx::query(
            "SELECT id, claim, confidence, superseded_by FROM memory WHERE tenant_id = $1 AND repository = $2 \
             ORDER BY (superseded_by IS NULL) DESC, created_at DESC LIMIT 5000",
        )
        .bind(tenant)
        .bind(repository)
        .fetch_all(&self.pool)
        .await?;
        let mut memory = Hmem::default();
        for r in &rows {
            memory.records.push(Record {
                id: r.try_get("id")?,
                content: r.try_get("claim")?,
                source: "judge".into(),
                confidence: r.try_get("confidence")?,
                layer: "long_term".into(),
                kind: Default::default(),
                tags: Vec::new(),
                access_count: 0,
                created_at: 0,
                last_accessed: 0,
                superseded_by: r.try_get("superseded_by")?,
                derived_from: Vec::new(),
            });
        }
        Ok(memory
            .query_with(query, &Retrieval::refutations(query_tokens, limit), 0)
            .into_iter()
            .map(|(r, score)| (r.id, score))
            .collect())
    }

    /// The current (not superseded) record for a fingerprint in a tenant's repository.
    pub async fn memory_lookup(
        &self,
        tenant: &str,
        repository: &str,
        fingerprint: &str,
    ) -> Result<Option<MemoryRecord>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, repository, fingerprint, kind, path, symbol, claim, refutation, provenance, confidence, created_at, tenant_id \
             FROM memory WHERE tenant_id = $1 AND repository = $2 AND fingerprint = $3 AND superseded_by IS NULL \
             ORDER BY created_at DESC LIMIT 1",
        )
        .bind(tenant)
        .bind(repository)
        .bind(fingerprint)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Appends a record; the previous current record of the fingerprint is superseded (kept).
    /// Writing the same record id twice (a replayed judge) changes nothing. A repository's
    /// memory (every record of its tenant and repository, superseded ones included: none is
    /// ever deleted) holds at most `max_bytes`: a record that would pass it is refused as
    /// [`StoreError::MemoryFull`], with the size and the cap.
    pub async fn memory_write(
        &self,
        record: &MemoryRecord,
        max_bytes: u64,
    ) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        let held: i64 = sqlx::query_scalar(
            "SELECT COALESCE(SUM(LENGTH(claim) + LENGTH(refutation) + LENGTH(provenance) + LENGTH(path) \
             + LENGTH(fingerprint)), 0) FROM memory WHERE tenant_id = $1 AND repository = $2 AND id <> $3",
        )
        .bind(record.tenant.as_str())
        .bind(record.repository.as_str())
        .bind(record.id.as_str())
        .fetch_one(&mut *tx)
        .await?;
        let adding = (record.claim.len()
            + record.refutation.len()
            + record.provenance.len()
            + record.path.len()
            + record.fingerprint.len()) as u64;
        let held = held.max(0) as u64;
        if held + adding > max_bytes {
            return Err(StoreError::MemoryFull {
                repository: record.repository.clone(),
                bytes: held + adding,
                cap: max_bytes,
            });
        }
        let inserted = sqlx::query(
            "INSERT INTO memory (id, repository, fingerprint, kind, path, symbol, claim, refutation, provenance, \
             confidence, created_at, tenant_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(record.id.as_str())
        .bind(record.repository.as_str())
        .bind(record.fingerprint.as_str())
        .bind(record.kind.as_str())
        .bind(record.path.as_str())
        .bind(record.symbol.as_deref())
        .bind(record.claim.as_str())
        .bind(record.refutation.as_str())
        .bind(record.provenance.as_str())
        .bind(record.confidence)
        .bind(now())
        .bind(record.tenant.as_str())
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 1 {
            sqlx::query(
                "UPDATE memory SET superseded_by = $1 WHERE tenant_id = $4 AND repository = $2 \
                 AND fingerprint = $3 AND id <> $1 AND superseded_by IS NULL",
            )
            .bind(record.id.as_str())
            .bind(record.repository.as_str())
            .bind(record.fingerprint.as_str())
            .bind(record.tenant.as_str())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
