//! H-MEM: the memory of what reviews refuted.

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

/// The words of a text that count in a similarity query: lower-case runs of letters and
/// digits.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl Store {
    /// The tenant's repository's current records whose claims share words with `query`'s
    /// first `query_tokens` words, scored by the share of those words a claim holds (best
    /// first, at most `limit`). Only ever shown: a score never silences a finding, nor
    /// revives one a fingerprint silenced (the fingerprint alone decides, see
    /// [`Store::memory_lookup`]).
    pub async fn memory_similar(
        &self,
        (tenant, repository): (&str, &str),
        query: &str,
        query_tokens: usize,
        limit: usize,
    ) -> Result<Vec<(String, f64)>, StoreError> {
        let mut asked: Vec<String> = words(query);
        asked.truncate(query_tokens);
        asked.sort();
        asked.dedup();
        if asked.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT id, claim FROM memory WHERE tenant_id = $1 AND repository = $2 \
             AND superseded_by IS NULL ORDER BY created_at DESC LIMIT 5000",
        )
        .bind(tenant)
        .bind(repository)
        .fetch_all(&self.pool)
        .await?;
        let mut scored: Vec<(String, f64)> = Vec::new();
        for r in &rows {
            let (id, claim): (String, String) = (r.try_get("id")?, r.try_get("claim")?);
            let held = words(&claim);
            let shared = asked.iter().filter(|w| held.contains(w)).count();
            if shared > 0 {
                scored.push((id, shared as f64 / asked.len() as f64));
            }
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        scored.truncate(limit);
        Ok(scored)
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
