//! Advisory tables: the importer (idempotent, newest record wins) and the match query.

use std::collections::HashMap;

use proven_domain::Ecosystem;
use proven_osv::{EpssScores, KevCatalog, Record};
use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::sql::{list, now, trusted, values_rows};
use crate::{Dialect, Store, StoreError};

#[path = "advisory_import.rs"]
mod import;

/// Records are written in batches of this many; each batch costs one lookup and a few
/// multi-row inserts, well under both backends' bound-parameter limits.
const BATCH: usize = 400;

/// What an import run did, for the summary line and the `imports` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ImportCounts {
    pub records_read: u64,
    pub inserted: u64,
    pub updated: u64,
    pub unchanged: u64,
    /// Records older than the stored one: the stored (newer) record is kept.
    pub older_kept: u64,
    pub withdrawn: u64,
    pub invalid: u64,
    pub kev_entries: u64,
    /// KEV entries whose CVE the catalogue did not hold before.
    pub kev_new: u64,
    pub epss_scores: u64,
    pub skipped_files: u64,
    /// RustSec advisories whose vulnerable functions were read (from RustSec's own
    /// database; kept beside the records, see `advisory_functions`).
    pub functions: u64,
}

/// One import run. Feed it records, KEV catalogues and EPSS scores; call [`finish`].
///
/// [`finish`]: AdvisoryImport::finish
pub struct AdvisoryImport<'s> {
    store: &'s Store,
    id: String,
    /// The change set this run's changes belong to (its own id unless a sync groups runs).
    change_set: String,
    source: String,
    started_at: String,
    counts: ImportCounts,
    pending: Vec<Pending>,
    /// The first few problems, kept for the summary.
    pub problems: Vec<String>,
}

struct Pending {
    id: String,
    modified: Option<String>,
    modified_us: Option<i64>,
    published: Option<String>,
    withdrawn: Option<String>,
    summary: Option<String>,
    aliases: String,
    severity: String,
    digest: String,
    origin: String,
    raw: String,
    affected: Vec<PendingAffected>,
}

struct PendingAffected {
    ecosystem: String,
    name: String,
    normalized_name: String,
    json: String,
}

/// An affected[] entry of a stored advisory, with the advisory fields a finding shows.
#[derive(Debug, Clone)]
pub struct AffectedRow {
    pub advisory_id: String,
    pub idx: i64,
    pub ecosystem: String,
    pub name: String,
    pub normalized_name: String,
    /// The affected[] entry as OSV JSON.
    pub affected_json: String,
    pub aliases: Vec<String>,
    pub summary: Option<String>,
    /// OSV severity objects, JSON array.
    pub severity_json: String,
    pub modified: Option<String>,
    pub published: Option<String>,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct KevRow {
    pub cve: String,
    pub vendor: Option<String>,
    pub product: Option<String>,
    pub name: Option<String>,
    pub date_added: Option<String>,
    pub ransomware: Option<String>,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct EpssRow {
    pub cve: String,
    pub probability: f64,
    pub percentile: f64,
    pub score_date: Option<String>,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StoredAdvisory {
    pub id: String,
    pub modified: Option<String>,
    pub withdrawn: Option<String>,
    pub origin: String,
    pub record: String,
}

fn parse_time_us(s: &str) -> Option<i64> {
    let t = time::OffsetDateTime::parse(s.trim(), &time::format_description::well_known::Rfc3339)
        .ok()?;
    i64::try_from(t.unix_timestamp_nanos() / 1000).ok()
}

impl Store {
    /// An import run that is its own change set.
    pub fn begin_import(&self, source: &str) -> AdvisoryImport<'_> {
        let id = uuid::Uuid::now_v7().to_string();
        self.begin_import_in(source, &id)
    }

    /// An import run whose changes join `change_set` (a sync reads several sources as one).
    pub fn begin_import_in(&self, source: &str, change_set: &str) -> AdvisoryImport<'_> {
        AdvisoryImport {
            store: self,
            id: uuid::Uuid::now_v7().to_string(),
            change_set: change_set.to_string(),
            source: source.to_string(),
            started_at: now(),
            counts: ImportCounts::default(),
            pending: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// The affected[] entries, not withdrawn, of `ecosystem` whose normalised package name
    /// is among `names`. One query, however many names.
    pub async fn affected_rows(
        &self,
        ecosystem: Ecosystem,
        normalized_names: &[String],
    ) -> Result<Vec<AffectedRow>, StoreError> {
        if normalized_names.is_empty() {
            return Ok(Vec::new());
        }
        let names = serde_json::to_string(normalized_names)
            .map_err(|e| StoreError::InvalidInput(e.to_string()))?;
        let names_in = match self.dialect {
            Dialect::Sqlite => "IN (SELECT value FROM json_each($2))",
            Dialect::Postgres => "IN (SELECT jsonb_array_elements_text($2::jsonb))",
        };
        let sql = format!(
            "SELECT ap.advisory_id, ap.idx, ap.ecosystem, ap.name, ap.normalized_name, ap.affected, \
                    a.aliases, a.summary, a.severity, a.modified, a.published, af.functions \
             FROM affected_packages ap JOIN advisories a ON a.id = ap.advisory_id \
             LEFT JOIN advisory_functions af ON af.advisory_id = ap.advisory_id \
                  AND af.ecosystem = ap.ecosystem AND af.normalized_name = ap.normalized_name \
             WHERE ap.ecosystem = $1 AND NOT ap.withdrawn AND ap.normalized_name {names_in} \
             ORDER BY ap.advisory_id, ap.idx"
        );
        let rows = sqlx::query(trusted(sql))
            .bind(ecosystem.osv_name())
            .bind(names)
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter()
            .map(|r| {
                let advisory_id: String = r.try_get("advisory_id")?;
                let aliases: String = r.try_get("aliases")?;
                let aliases = serde_json::from_str(&aliases)
                    .map_err(|e| StoreError::Corrupt(format!("aliases of {advisory_id}: {e}")))?;
                let functions: Option<String> = r.try_get("functions")?;
                let affected_json =
                    import::with_functions(r.try_get("affected")?, functions.as_deref());
                Ok(AffectedRow {
                    advisory_id,
                    idx: r.try_get("idx")?,
                    ecosystem: r.try_get("ecosystem")?,
                    name: r.try_get("name")?,
                    normalized_name: r.try_get("normalized_name")?,
                    affected_json,
                    aliases,
                    summary: r.try_get("summary")?,
                    severity_json: r.try_get("severity")?,
                    modified: r.try_get("modified")?,
                    published: r.try_get("published")?,
                })
            })
            .collect()
    }

    /// KEV rows for the given CVE ids (one query).
    pub async fn kev_for(&self, cves: &[String]) -> Result<HashMap<String, KevRow>, StoreError> {
        self.by_cve(
            "SELECT cve, vendor, product, name, date_added, ransomware FROM kev",
            cves,
        )
        .await
    }

    /// EPSS rows for the given CVE ids (one query).
    pub async fn epss_for(&self, cves: &[String]) -> Result<HashMap<String, EpssRow>, StoreError> {
        self.by_cve(
            "SELECT cve, probability, percentile, score_date FROM epss",
            cves,
        )
        .await
    }

    /// The rows of `select` (a statement with no `WHERE`, whose first column is `cve`) for
    /// the given CVE ids, by CVE id, in one query.
    async fn by_cve<T>(
        &self,
        select: &'static str,
        cves: &[String],
    ) -> Result<HashMap<String, T>, StoreError>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow>,
    {
        if cves.is_empty() {
            return Ok(HashMap::new());
        }
        let sql = format!("{select} WHERE cve IN ({})", list(1, cves.len()));
        let mut q = sqlx::query(trusted(sql));
        for c in cves {
            q = q.bind(c.as_str());
        }
        let mut out = HashMap::new();
        for r in q.fetch_all(&self.pool).await? {
            out.insert(r.try_get("cve")?, T::from_row(&r)?);
        }
        Ok(out)
    }

    pub async fn advisory(&self, id: &str) -> Result<Option<StoredAdvisory>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, modified, withdrawn, origin, record FROM advisories WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// How many advisories, KEV entries and EPSS scores are stored.
    pub async fn advisory_counts(&self) -> Result<(i64, i64, i64), StoreError> {
        let r = sqlx::query(
            "SELECT (SELECT COUNT(*) FROM advisories) AS advisories, (SELECT COUNT(*) FROM kev) AS kev, \
             (SELECT COUNT(*) FROM epss) AS epss",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok((
            r.try_get("advisories")?,
            r.try_get("kev")?,
            r.try_get("epss")?,
        ))
    }
}

impl AdvisoryImport<'_> {
    pub fn counts(&self) -> &ImportCounts {
        &self.counts
    }

    fn problem(&mut self, message: String) {
        if self.problems.len() < 20 {
            self.problems.push(message);
        }
    }

    /// Notes an unreadable record or file (counted and kept for the summary).
    pub fn invalid(&mut self, origin: &str, message: &str) {
        self.counts.invalid += 1;
        self.problem(format!("{origin}: {message}"));
    }

    pub fn skipped_file(&mut self) {
        self.counts.skipped_files += 1;
    }

    /// Adds one OSV record; writes a batch when enough are pending.
    pub async fn add_record(
        &mut self,
        origin: &str,
        record: &Record,
        raw: &str,
    ) -> Result<(), StoreError> {
        self.counts.records_read += 1;
        if record.is_withdrawn() {
            self.counts.withdrawn += 1;
        }
        let mut affected = Vec::with_capacity(record.affected.len());
        for a in &record.affected {
            let Some(pkg) = &a.package else { continue };
            let base = pkg
                .ecosystem
                .split(':')
                .next()
                .unwrap_or(&pkg.ecosystem)
                .to_string();
            let normalized_name = match Ecosystem::from_osv(&base) {
                Some(eco) => eco.normalize_name(&pkg.name),
                None => pkg.name.clone(),
            };
            let json =
                serde_json::to_string(a).map_err(|e| StoreError::InvalidInput(e.to_string()))?;
            affected.push(PendingAffected {
                ecosystem: base,
                name: pkg.name.clone(),
                normalized_name,
                json,
            });
        }
        self.pending.push(Pending {
            id: record.id.clone(),
            modified_us: record.modified.as_deref().and_then(parse_time_us),
            modified: record.modified.clone(),
            published: record.published.clone(),
            withdrawn: record.withdrawn.clone().filter(|w| !w.trim().is_empty()),
            summary: record.summary.clone(),
            aliases: to_json(&record.aliases),
            severity: to_json(&record.severity),
            digest: hex::encode(Sha256::digest(raw.as_bytes())),
            origin: origin.to_string(),
            raw: raw.to_string(),
            affected,
        });
        if self.pending.len() >= BATCH {
            self.flush().await?;
        }
        Ok(())
    }

    /// Stores a KEV catalogue (entries are upserted: the catalogue only grows).
    pub async fn add_kev(&mut self, catalog: &KevCatalog) -> Result<(), StoreError> {
        let version = catalog.catalog_version.clone();
        let mut tx = self.store.write_tx().await?;
        for chunk in catalog.vulnerabilities.chunks(BATCH) {
            // Which of these CVEs the catalogue did not hold before: the change set's `kev`.
            let sql = format!(
                "SELECT cve FROM kev WHERE cve IN ({})",
                list(1, chunk.len())
            );
            let mut q = sqlx::query_scalar(trusted(sql));
            for e in chunk {
                q = q.bind(e.cve_id.trim().to_string());
            }
            let known: std::collections::HashSet<String> =
                q.fetch_all(&mut *tx).await?.into_iter().collect();
            let fresh: Vec<String> = chunk
                .iter()
                .map(|e| e.cve_id.trim().to_string())
                .filter(|c| !known.contains(c))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            self.counts.kev_new += fresh.len() as u64;
            record_changes(
                &mut tx,
                &self.change_set,
                fresh.iter().map(|c| (c.as_str(), "kev")),
            )
            .await?;
            let sql = format!(
                "INSERT INTO kev (cve, vendor, product, name, date_added, ransomware, catalog, entry) VALUES {} \
                 ON CONFLICT (cve) DO UPDATE SET vendor = excluded.vendor, product = excluded.product, \
                 name = excluded.name, date_added = excluded.date_added, ransomware = excluded.ransomware, \
                 catalog = excluded.catalog, entry = excluded.entry",
                values_rows(chunk.len(), 8)
            );
            let mut q = sqlx::query(trusted(sql));
            for e in chunk {
                let mut entry = e.rest.clone();
                entry.insert("cveID".into(), e.cve_id.clone().into());
                q = q
                    .bind(e.cve_id.trim().to_string())
                    .bind(e.vendor_project.clone())
                    .bind(e.product.clone())
                    .bind(e.vulnerability_name.clone())
                    .bind(e.date_added.clone())
                    .bind(e.known_ransomware_campaign_use.clone())
                    .bind(version.clone())
                    .bind(serde_json::to_string(&entry).unwrap_or_default());
            }
            q.execute(&mut *tx).await?;
        }
        tx.commit().await?;
        self.counts.kev_entries += catalog.vulnerabilities.len() as u64;
        Ok(())
    }

    /// Stores EPSS scores; a stored score from a later date is kept.
    pub async fn add_epss(&mut self, scores: &EpssScores) -> Result<(), StoreError> {
        let mut tx = self.store.write_tx().await?;
        for chunk in scores.scores.chunks(2000) {
            let sql = format!(
                "INSERT INTO epss (cve, probability, percentile, score_date) VALUES {} \
                 ON CONFLICT (cve) DO UPDATE SET probability = excluded.probability, \
                 percentile = excluded.percentile, score_date = excluded.score_date \
                 WHERE epss.score_date IS NULL OR excluded.score_date IS NULL \
                    OR excluded.score_date >= epss.score_date",
                values_rows(chunk.len(), 4)
            );
            let mut q = sqlx::query(trusted(sql));
            for s in chunk {
                q = q
                    .bind(s.cve.as_str())
                    .bind(s.probability)
                    .bind(s.percentile)
                    .bind(scores.score_date.clone());
            }
            q.execute(&mut *tx).await?;
        }
        tx.commit().await?;
        self.counts.epss_scores += scores.scores.len() as u64;
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let batch = self.one_per_id();
        let mut tx = self.store.write_tx().await?;
        let stored = stored_versions(&mut tx, &batch).await?;
        let mut write = Vec::new();
        let mut replaced = Vec::new();
        let mut changes: Vec<(String, &'static str)> = Vec::new();
        for p in batch {
            match stored.get(&p.id) {
                None => {
                    self.counts.inserted += 1;
                    let kind = if p.withdrawn.is_some() {
                        "withdrawn"
                    } else {
                        "new"
                    };
                    changes.push((p.id.clone(), kind));
                    write.push(p);
                }
                Some((old_us, old_digest, was_withdrawn))
                    if replaces(p.modified_us, &p.digest, *old_us, old_digest) =>
                {
                    self.counts.updated += 1;
                    let kind = if p.withdrawn.is_some() && !was_withdrawn {
                        "withdrawn"
                    } else {
                        "modified"
                    };
                    changes.push((p.id.clone(), kind));
                    replaced.push(p.id.clone());
                    write.push(p);
                }
                Some((_, old_digest, _)) if *old_digest == p.digest => self.counts.unchanged += 1,
                Some(_) => self.counts.older_kept += 1,
            }
        }
        record_changes(
            &mut tx,
            &self.change_set,
            changes.iter().map(|(id, kind)| (id.as_str(), *kind)),
        )
        .await?;
        for chunk in replaced.chunks(BATCH) {
            delete_where_in(&mut tx, "advisories", "id", chunk).await?;
            // Explicitly too: foreign-key cascades are off on some SQLite connections.
            delete_where_in(&mut tx, "affected_packages", "advisory_id", chunk).await?;
        }
        insert_advisories(&mut tx, &write).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Takes what is pending, one record per id: of the same id twice in one batch, the one
    /// the replacement rule prefers (the other counted as unchanged or older).
    fn one_per_id(&mut self) -> Vec<Pending> {
        let mut batch: Vec<Pending> = Vec::with_capacity(self.pending.len());
        let mut index: HashMap<String, usize> = HashMap::new();
        for p in std::mem::take(&mut self.pending) {
            match index.get(&p.id) {
                None => {
                    index.insert(p.id.clone(), batch.len());
                    batch.push(p);
                }
                Some(&j) => {
                    if replaces(
                        p.modified_us,
                        &p.digest,
                        batch[j].modified_us,
                        &batch[j].digest,
                    ) {
                        batch[j] = p;
                        self.counts.older_kept += 1;
                    } else if p.digest == batch[j].digest {
                        self.counts.unchanged += 1;
                    } else {
                        self.counts.older_kept += 1;
                    }
                }
            }
        }
        batch
    }

    /// Writes what is pending and records the run in `imports`.
    pub async fn finish(mut self) -> Result<ImportCounts, StoreError> {
        self.flush().await?;
        let summary = serde_json::to_string(&self.counts).unwrap_or_default();
        sqlx::query("INSERT INTO imports (id, started_at, finished_at, source, summary, change_set) VALUES ($1, $2, $3, $4, $5, $6)")
            .bind(self.id.as_str())
            .bind(self.started_at.as_str())
            .bind(now())
            .bind(self.source.as_str())
            .bind(summary)
            .bind(self.change_set.as_str())
            .execute(&self.store.pool)
            .await?;
        Ok(self.counts)
    }
}

/// A change's time as fixed-width RFC 3339 (microseconds always written), so that times
/// compare as text in both backends: `now()` drops a zero fraction, and `…:05Z` would sort
/// after `…:05.1Z`.
fn change_time() -> String {
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z"
    );
    time::OffsetDateTime::now_utc()
        .format(&format)
        .unwrap_or_else(|_| now())
}

/// What the store holds of the batch's advisories, by id: `modified` (µs), the content's
/// digest, and whether it is withdrawn.
async fn stored_versions(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    batch: &[Pending],
) -> Result<HashMap<String, (Option<i64>, String, bool)>, StoreError> {
    let sql = format!(
        "SELECT id, modified_us, digest, withdrawn FROM advisories WHERE id IN ({})",
        list(1, batch.len())
    );
    let mut q = sqlx::query(trusted(sql));
    for p in batch {
        q = q.bind(p.id.as_str());
    }
    let mut stored = HashMap::new();
    for r in q.fetch_all(&mut **tx).await? {
        let withdrawn: Option<String> = r.try_get("withdrawn")?;
        stored.insert(
            r.try_get("id")?,
            (
                r.try_get("modified_us")?,
                r.try_get("digest")?,
                withdrawn.is_some(),
            ),
        );
    }
    Ok(stored)
}

/// Deletes the rows of `table` whose `column` is one of `ids` (`table` and `column` are
/// this crate's own names).
async fn delete_where_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    table: &'static str,
    column: &'static str,
    ids: &[String],
) -> Result<(), StoreError> {
    let sql = format!(
        "DELETE FROM {table} WHERE {column} IN ({})",
        list(1, ids.len())
    );
    let mut q = sqlx::query(trusted(sql));
    for id in ids {
        q = q.bind(id.as_str());
    }
    q.execute(&mut **tx).await?;
    Ok(())
}

/// Inserts the advisories and their affected[] rows.
async fn insert_advisories(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    write: &[Pending],
) -> Result<(), StoreError> {
    for chunk in write.chunks(BATCH / 4) {
        let sql = format!(
            "INSERT INTO advisories (id, modified, modified_us, published, withdrawn, summary, aliases, \
             severity, digest, origin, record) VALUES {}",
            values_rows(chunk.len(), 11)
        );
        let mut q = sqlx::query(trusted(sql));
        for p in chunk {
            q = q
                .bind(p.id.as_str())
                .bind(p.modified.as_deref())
                .bind(p.modified_us)
                .bind(p.published.as_deref())
                .bind(p.withdrawn.as_deref())
                .bind(p.summary.as_deref())
                .bind(p.aliases.as_str())
                .bind(p.severity.as_str())
                .bind(p.digest.as_str())
                .bind(p.origin.as_str())
                .bind(p.raw.as_str());
        }
        q.execute(&mut **tx).await?;
    }
    let rows: Vec<(&Pending, usize, &PendingAffected)> = write
        .iter()
        .flat_map(|p| p.affected.iter().enumerate().map(move |(i, a)| (p, i, a)))
        .collect();
    for chunk in rows.chunks(BATCH) {
        let sql = format!(
            "INSERT INTO affected_packages (advisory_id, idx, ecosystem, name, normalized_name, withdrawn, \
             affected) VALUES {}",
            values_rows(chunk.len(), 7)
        );
        let mut q = sqlx::query(trusted(sql));
        for (p, i, a) in chunk {
            q = q
                .bind(p.id.as_str())
                .bind(*i as i64)
                .bind(a.ecosystem.as_str())
                .bind(a.name.as_str())
                .bind(a.normalized_name.as_str())
                .bind(p.withdrawn.is_some())
                .bind(a.json.as_str());
        }
        q.execute(&mut **tx).await?;
    }
    Ok(())
}

/// Writes change rows of a change set (a kind and id seen twice in one set is one row).
async fn record_changes<'a>(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    change_set: &str,
    changes: impl Iterator<Item = (&'a str, &'static str)>,
) -> Result<(), StoreError> {
    let changes: Vec<(&str, &str)> = changes.collect();
    let at = change_time();
    for chunk in changes.chunks(BATCH) {
        let sql = format!(
            "INSERT INTO advisory_changes (change_set, id, kind, at) VALUES {} \
             ON CONFLICT (change_set, kind, id) DO NOTHING",
            values_rows(chunk.len(), 4)
        );
        let mut q = sqlx::query(trusted(sql));
        for (id, kind) in chunk {
            q = q.bind(change_set).bind(*id).bind(*kind).bind(at.as_str());
        }
        q.execute(&mut **tx).await?;
    }
    Ok(())
}

/// The replacement rule: a newer `modified` wins; an equal one wins only with different
/// content (some feeds, e.g. Go's git export, carry placeholder dates); an unparseable or
/// missing date never beats a real one.
fn replaces(new_us: Option<i64>, new_digest: &str, old_us: Option<i64>, old_digest: &str) -> bool {
    match (new_us, old_us) {
        (Some(n), Some(o)) if n != o => n > o,
        (Some(_), None) => true,
        (None, Some(_)) => false,
        _ => new_digest != old_digest,
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "[]".into())
}

#[cfg(test)]
mod tests {
    use super::replaces;

    #[test]
    fn newer_wins_and_older_never_overwrites() {
        assert!(replaces(Some(2), "a", Some(1), "b"));
        assert!(!replaces(Some(1), "a", Some(2), "b"));
        assert!(!replaces(Some(1), "a", Some(1), "a"));
        assert!(replaces(Some(1), "a", Some(1), "b"));
        assert!(!replaces(None, "a", Some(1), "b"));
    }
}

/// What one change set changed: advisory ids by kind, and CVEs newly in KEV.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChangeSet {
    pub id: String,
    /// When its first change was recorded (RFC 3339); empty for a set that changed nothing.
    pub at: String,
    pub new: Vec<String>,
    pub modified: Vec<String>,
    pub withdrawn: Vec<String>,
    pub kev: Vec<String>,
}

impl ChangeSet {
    /// Whether it changed nothing at all.
    pub fn is_empty(&self) -> bool {
        self.new.is_empty()
            && self.modified.is_empty()
            && self.withdrawn.is_empty()
            && self.kev.is_empty()
    }
}

impl Store {
    /// The changes recorded under `id` (a set that changed nothing reads as empty).
    pub async fn change_set(&self, id: &str) -> Result<ChangeSet, StoreError> {
        let rows = sqlx::query(
            "SELECT id, kind, at FROM advisory_changes WHERE change_set = $1 ORDER BY kind, id",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        let mut set = ChangeSet {
            id: id.to_string(),
            ..Default::default()
        };
        for r in rows {
            let changed: String = r.try_get("id")?;
            let kind: String = r.try_get("kind")?;
            let at: String = r.try_get("at")?;
            if set.at.is_empty() || at < set.at {
                set.at = at;
            }
            match kind.as_str() {
                "new" => set.new.push(changed),
                "modified" => set.modified.push(changed),
                "withdrawn" => set.withdrawn.push(changed),
                "kev" => set.kev.push(changed),
                other => {
                    return Err(StoreError::InvalidInput(format!(
                        "advisory_changes: unknown kind {other:?} in change set {id}"
                    )));
                }
            }
        }
        Ok(set)
    }

    /// Ids of the change sets with a change recorded at or after `since` (RFC 3339), oldest
    /// first.
    pub async fn change_sets_since(&self, since: &str) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query(
            "SELECT change_set, MIN(at) AS first FROM advisory_changes WHERE at >= $1 \
             GROUP BY change_set ORDER BY first, change_set",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                r.try_get::<String, _>("change_set")
                    .map_err(StoreError::from)
            })
            .collect()
    }
}

#[cfg(test)]
mod change_time_tests {
    use super::change_time;

    #[test]
    fn change_times_are_fixed_width_so_they_order_as_text() {
        let (a, b) = (change_time(), change_time());
        assert_eq!(a.len(), "2026-12-01T08:11:29.123456Z".len(), "{a}");
        assert_eq!(a.len(), b.len());
        assert!(a <= b, "{a} then {b}");
        assert!(a.contains('.') && a.ends_with('Z'), "{a}");
    }
}
