//! H-MEM: the memory of what reviews refuted.

use sqlx::Row;

use crate::sql::now;
use crate::{Store, StoreError};

#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRecord {
    pub id: String,
    /// The tenant whose review proved the refutation ('' for reviews of no tenant: the
    /// embedded default). A lookup sees only its own tenant's records.
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
    /// The current (not superseded) record for a fingerprint in a tenant's repository.
    pub async fn memory_lookup(
        &self,
        tenant: &str,
        repository: &str,
        fingerprint: &str,
    ) -> Result<Option<MemoryRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT id, repository, fingerprint, kind, path, symbol, claim, refutation, provenance, confidence, created_at, tenant_id \
             FROM memory WHERE tenant_id = $1 AND repository = $2 AND fingerprint = $3 AND superseded_by IS NULL \
             ORDER BY created_at DESC LIMIT 1",
        )
        .bind(tenant)
        .bind(repository)
        .bind(fingerprint)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(MemoryRecord {
                id: r.try_get(0)?,
                tenant: r.try_get(11)?,
                repository: r.try_get(1)?,
                fingerprint: r.try_get(2)?,
                kind: r.try_get(3)?,
                path: r.try_get(4)?,
                symbol: r.try_get(5)?,
                claim: r.try_get(6)?,
                refutation: r.try_get(7)?,
                provenance: r.try_get(8)?,
                confidence: r.try_get(9)?,
                created_at: r.try_get(10)?,
            })
        })
        .transpose()
    }

    /// Appends a record; the previous current record of the fingerprint is superseded (kept).
    /// Writing the same record id twice (a replayed judge) changes nothing.
    pub async fn memory_write(&self, record: &MemoryRecord) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
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
