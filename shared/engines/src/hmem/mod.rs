//! H-MEM's record model as Meterless's specification writes it (engines/hmem: the memory
//! record, feedback deltas, retrieval ranking, the sleep cycle's guardrails, conflict
//! resolution, the trust ledger and dreaming), as a pure engine over a serialisable state:
//! the machine its conformance runner drives (`proven conformance-serve --engine hmem`).
//!
//! Reviews run it too: Proven's memory of evidenced refutations is kept by the store (its
//! `memory` table, written by the Judge, matched by fingerprint first: DESIGN section 8), and
//! the refutations like a claim that a review retrieves are scored, ranked and bounded by
//! [`retrieval`] under Proven's configuration ([`Retrieval::refutations`]). A refutation
//! record is never archived, and a score never hides or revives one (only a fingerprint does).
//!
//! There is no embedding model here: the ranking's semantic term is the cosine of the two
//! texts' word counts, which keeps every rule the runner checks (order is embedding-free).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub mod retrieval;
pub use retrieval::{Retrieval, Scoring, Superseded, rank};

const DAY_MS: i64 = 86_400_000;

/// What kind of memory a record is (the spec's types; one this engine does not name reads
/// as `other`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryType {
    #[default]
    Fact,
    Preference,
    Personal,
    Correction,
    Insight,
    #[serde(other)]
    Other,
}

/// The feedback a record gets, each with its exact confidence delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Feedback {
    Helpful,
    NotHelpful,
    Wrong,
}

impl Feedback {
    pub const fn delta(self) -> f64 {
        match self {
            Feedback::Helpful => 0.05,
            Feedback::NotHelpful => -0.03,
            Feedback::Wrong => -0.20,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub id: String,
    pub content: String,
    pub source: String,
    pub confidence: f64,
    pub layer: String,
    #[serde(rename = "type")]
    pub kind: MemoryType,
    pub tags: Vec<String>,
    pub access_count: u64,
    pub created_at: i64,
    pub last_accessed: i64,
    pub superseded_by: Option<String>,
    pub derived_from: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    pub seq: u64,
    pub memory_id: String,
    pub action: String,
    pub at: i64,
    pub previous_state: Option<serde_json::Value>,
    pub new_state: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub content: String,
    pub derived_from: Vec<String>,
}

/// A memory as the caller adds it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NewRecord {
    pub content: String,
    pub source: String,
    pub confidence: Option<f64>,
    pub layer: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<MemoryType>,
    pub tags: Vec<String>,
    pub derived_from: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Hmem {
    pub records: Vec<Record>,
    pub archived: Vec<Record>,
    pub ledger: Vec<LedgerEntry>,
    pub proposals: Vec<Proposal>,
    pub backups: Vec<String>,
    pub next_id: u64,
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn cosine(a: &[String], b: &[String]) -> f64 {
    let count = |ws: &[String]| {
        let mut m: BTreeMap<String, f64> = BTreeMap::new();
        for w in ws {
            *m.entry(w.clone()).or_default() += 1.0;
        }
        m
    };
    let (x, y) = (count(a), count(b));
    let dot: f64 = x.iter().map(|(w, n)| n * y.get(w).unwrap_or(&0.0)).sum();
    let norm = |m: &BTreeMap<String, f64>| m.values().map(|v| v * v).sum::<f64>().sqrt();
    if dot == 0.0 {
        0.0
    } else {
        dot / (norm(&x) * norm(&y))
    }
}

/// |a ∩ b| / |a ∪ b| (0 for two empty sets).
pub(crate) fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

fn layer_weight(layer: &str) -> f64 {
    match layer {
        "long_term" => 1.0,
        "working" => 0.8,
        _ => 0.6,
    }
}

const OPPOSED: [(&str, &str); 3] = [
    ("always", "never"),
    ("enable", "disable"),
    ("before", "after"),
];

impl Hmem {
    fn ledger(&mut self, id: &str, action: &str, at: i64, prev: Option<f64>, new: Option<f64>) {
        let state = |c: Option<f64>| c.map(|c| serde_json::json!({"confidence": c}));
        self.ledger.push(LedgerEntry {
            seq: self.ledger.len() as u64 + 1,
            memory_id: id.to_string(),
            action: action.to_string(),
            at,
            previous_state: state(prev),
            new_state: state(new),
        });
    }

    /// Adds a record; one without a source is refused by construction.
    pub fn add(&mut self, r: NewRecord, now: i64) -> Result<Record, String> {
        if r.source.trim().is_empty() {
            return Err("a memory without a source is refused".into());
        }
        if r.content.trim().is_empty() {
            return Err("a memory without content is refused".into());
        }
        self.next_id += 1;
        let record = Record {
            id: format!("mem_{:06}", self.next_id),
            content: r.content,
            source: r.source,
            confidence: r.confidence.unwrap_or(0.7).clamp(0.0, 1.0),
            layer: r.layer.unwrap_or_else(|| "short_term".into()),
            kind: r.kind.unwrap_or_default(),
            tags: r.tags,
            access_count: 0,
            created_at: now,
            last_accessed: now,
            superseded_by: None,
            derived_from: r.derived_from,
        };
        self.ledger(&record.id, "create", now, None, Some(record.confidence));
        self.records.push(record.clone());
        Ok(record)
    }

    pub fn get(&self, id: &str) -> Option<&Record> {
        self.records.iter().find(|r| r.id == id)
    }

    fn get_mut(&mut self, id: &str) -> Result<&mut Record, String> {
        self.records
            .iter_mut()
            .find(|r| r.id == id)
            .ok_or_else(|| format!("no memory {id}"))
    }

    /// Feedback moves confidence by the spec's exact deltas, clamped to [0, 1]: helpful
    /// +0.05 (and one more access), not_helpful −0.03, wrong −0.20 (and the review tag).
    pub fn feedback(&mut self, id: &str, kind: Feedback, now: i64) -> Result<Record, String> {
        let delta = kind.delta();
        let r = self.get_mut(id)?;
        let before = r.confidence;
        r.confidence = (before + delta).clamp(0.0, 1.0);
        if kind == Feedback::Helpful {
            r.access_count += 1;
            r.last_accessed = now;
        }
        if kind == Feedback::Wrong && !r.tags.iter().any(|t| t == "review") {
            r.tags.push("review".into());
        }
        let (after, out) = (r.confidence, r.clone());
        self.ledger(id, "feedback", now, Some(before), Some(after));
        Ok(out)
    }

    /// Marks `id` superseded by `by` (kept, ranked down, never deleted).
    pub fn supersede(&mut self, id: &str, by: &str, now: i64) -> Result<(), String> {
        self.get_mut(id)?.superseded_by = Some(by.to_string());
        self.ledger(id, "supersede", now, None, None);
        Ok(())
    }

    /// The eight-signal blend, clamped, times confidence (tag, domain and entity terms are 0:
    /// these records carry none).
    pub fn score(&self, r: &Record, query: &str, now: i64) -> f64 {
        let q = words(query);
        let m = words(&r.content);
        let top: BTreeSet<String> = q.iter().take(8).cloned().collect();
        let keyword = jaccard(&top, &m.iter().cloned().collect());
        let age = (now - r.last_accessed).max(0) as f64 / (14.0 * DAY_MS as f64);
        let raw = 0.35 * cosine(&q, &m)
            + 0.20 * keyword
            + 0.05 * layer_weight(&r.layer)
            + 0.05 * (-age).exp()
            - if r.superseded_by.is_some() { 0.20 } else { 0.0 };
        raw.clamp(0.0, 1.0) * r.confidence
    }

    /// Records scoring at least `threshold`, best first, at most `top_n` (the spec's
    /// retrieval).
    pub fn query(&self, query: &str, threshold: f64, top_n: usize, now: i64) -> Vec<(Record, f64)> {
        self.query_with(query, &Retrieval::spec(threshold, top_n), now)
    }

    /// Whether the sleep cycle may archive `r`: 30 days old or more, accessed at most twice,
    /// nothing references it, and no guardrail protects it (derived or synthesized records,
    /// records that supersede others, records in a conflict, high confidence).
    fn archivable(&self, r: &Record, now: i64) -> bool {
        let referenced = self
            .records
            .iter()
            .any(|o| o.derived_from.contains(&r.id) || o.superseded_by.as_deref() == Some(&r.id));
        let derived = !r.derived_from.is_empty() || r.source == "dreaming";
        let conflicted = r.tags.iter().any(|t| t == "review");
        now - r.created_at >= 30 * DAY_MS
            && r.access_count <= 2
            && !referenced
            && !derived
            && !conflicted
            && r.confidence < 0.95
    }

    /// What a sleep cycle would do, changing nothing: (to archive, to promote).
    pub fn sleep_preview(&self, now: i64) -> (Vec<String>, Vec<String>) {
        let archive: Vec<String> = self
            .records
            .iter()
            .filter(|r| self.archivable(r, now))
            .map(|r| r.id.clone())
            .collect();
        let promote = self
            .records
            .iter()
            .filter(|r| r.layer != "long_term" && !archive.contains(&r.id))
            .filter(|r| now - r.last_accessed >= 7 * DAY_MS)
            .map(|r| r.id.clone())
            .collect();
        (archive, promote)
    }

    /// Runs a previewed cycle after a backup of the whole state: archives what is still
    /// archivable (a guardrail is checked again), promotes the rest; returns the backup id
    /// and the action log.
    pub fn sleep_execute(
        &mut self,
        archive: &[String],
        promote: &[String],
        now: i64,
    ) -> (String, Vec<String>) {
        let backup = format!("backup_{}_{}", now, self.backups.len() + 1);
        self.backups.push(backup.clone());
        let mut log = Vec::new();
        for id in archive {
            let still = self.get(id).is_some_and(|r| self.archivable(r, now));
            if let (true, Some(at)) = (still, self.records.iter().position(|r| r.id == *id)) {
                let r = self.records.remove(at);
                self.ledger(id, "archive", now, Some(r.confidence), None);
                self.archived.push(r);
                log.push(format!("archived {id}"));
            }
        }
        for id in promote {
            if let Ok(r) = self.get_mut(id) {
                r.layer = "long_term".into();
                log.push(format!("promoted {id}"));
            }
        }
        (backup, log)
    }

    /// Pairs that say opposite things (always/never, enable/disable, before/after) about
    /// otherwise similar content.
    pub fn conflicts(&self) -> Vec<(String, String)> {
        let mut found = Vec::new();
        for (i, a) in self.records.iter().enumerate() {
            for b in &self.records[i + 1..] {
                let (wa, wb): (BTreeSet<String>, BTreeSet<String>) = (
                    words(&a.content).into_iter().collect(),
                    words(&b.content).into_iter().collect(),
                );
                let opposed = OPPOSED.iter().any(|(x, y)| {
                    (wa.contains(*x) && wb.contains(*y)) || (wa.contains(*y) && wb.contains(*x))
                });
                let strip = |s: &BTreeSet<String>| -> BTreeSet<String> {
                    s.iter()
                        .filter(|w| !OPPOSED.iter().any(|(x, y)| w == x || w == y))
                        .cloned()
                        .collect()
                };
                if opposed && jaccard(&strip(&wa), &strip(&wb)) >= 0.5 {
                    found.push((a.id.clone(), b.id.clone()));
                }
            }
        }
        found
    }

    /// Resolves a conflict when the winner's confidence is at least 0.70 (the loser is marked
    /// superseded, nothing is deleted); otherwise it is queued for a person.
    pub fn auto_resolve(&mut self, a: &str, b: &str, now: i64) -> Result<&'static str, String> {
        let (ca, cb) = (
            self.get(a).ok_or("no such memory")?.confidence,
            self.get(b).ok_or("no such memory")?.confidence,
        );
        let (winner, loser, decision) = if ca >= cb { (a, b, ca) } else { (b, a, cb) };
        if decision < 0.70 || ca == cb {
            return Ok("queued");
        }
        self.supersede(loser, winner, now)?;
        Ok("resolved")
    }

    /// Proposals from clusters of two or more preferences; nothing is written until one is
    /// approved.
    pub fn dream(&mut self) -> Vec<Proposal> {
        let prefs: Vec<&Record> = self
            .records
            .iter()
            .filter(|r| r.kind == MemoryType::Preference)
            .collect();
        if prefs.len() < 2 {
            return Vec::new();
        }
        let proposal = Proposal {
            id: format!("prop_{}", self.proposals.len() + 1),
            kind: "invariant".into(),
            content: format!(
                "stable preferences: {}",
                prefs
                    .iter()
                    .map(|r| r.content.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            derived_from: prefs.iter().map(|r| r.id.clone()).collect(),
        };
        self.proposals.push(proposal.clone());
        vec![proposal]
    }

    /// An approved proposal becomes a long-term preference with its lineage.
    pub fn approve(&mut self, id: &str, now: i64) -> Result<Record, String> {
        let at = self
            .proposals
            .iter()
            .position(|p| p.id == id)
            .ok_or_else(|| format!("no proposal {id}"))?;
        let p = self.proposals.remove(at);
        self.add(
            NewRecord {
                content: p.content,
                source: "dreaming".into(),
                layer: Some("long_term".into()),
                kind: Some(MemoryType::Preference),
                derived_from: p.derived_from,
                ..NewRecord::default()
            },
            now,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(h: &mut Hmem, content: &str, confidence: f64) -> Record {
        h.add(
            NewRecord {
                content: content.into(),
                source: "test".into(),
                confidence: Some(confidence),
                ..NewRecord::default()
            },
            0,
        )
        .expect("added")
    }

    #[test]
    fn feedback_moves_confidence_by_the_exact_deltas_and_the_ledger_says_so() {
        let mut h = Hmem::default();
        assert!(
            h.add(
                NewRecord {
                    content: "x".into(),
                    ..NewRecord::default()
                },
                0
            )
            .is_err()
        );
        let r = add(&mut h, "x", 0.7);
        assert!(
            (h.feedback(&r.id, Feedback::Wrong, 1)
                .expect("fb")
                .confidence
                - 0.5)
                .abs()
                < 1e-9
        );
        assert!(h.get(&r.id).is_some_and(|r| r.tags == ["review"]));
        let actions: Vec<&str> = h.ledger.iter().map(|l| l.action.as_str()).collect();
        assert_eq!(actions, ["create", "feedback"]);
        assert!("nice".parse::<Feedback>().is_err());
    }

    #[test]
    fn a_superseded_record_ranks_below_and_the_sleep_cycle_keeps_what_is_referenced() {
        let mut h = Hmem::default();
        // The superseded record comes first, so only the penalty puts it below (a tie
        // would keep the order of ids, which the conformance runner's case leaves to it).
        let old = add(&mut h, "we deploy on fridays", 0.9);
        let fresh = add(&mut h, "we deploy on mondays", 0.9);
        h.supersede(&old.id, &fresh.id, 0).expect("supersede");
        let order: Vec<String> = h
            .query("when do we deploy", 0.0, 10, 0)
            .into_iter()
            .map(|(r, _)| r.id)
            .collect();
        assert_eq!(order, [fresh.id.clone(), old.id.clone()]);
        // The superseding record is referenced: never archived; the superseded one may be.
        let (archive, _) = h.sleep_preview(40 * DAY_MS);
        assert_eq!(archive, std::slice::from_ref(&old.id));
        let (backup, log) = h.sleep_execute(&archive, &[], 40 * DAY_MS);
        assert!(!backup.is_empty() && log == [format!("archived {}", old.id)]);
        assert!(h.get(&fresh.id).is_some() && h.get(&old.id).is_none());
    }

    #[test]
    fn a_conflict_resolves_only_with_a_confident_winner() {
        let mut h = Hmem::default();
        let a = add(&mut h, "always enable uploads", 0.6);
        let b = add(&mut h, "never enable uploads", 0.5);
        assert_eq!(h.conflicts(), [(a.id.clone(), b.id.clone())]);
        assert_eq!(h.auto_resolve(&a.id, &b.id, 0), Ok("queued"));
        for _ in 0..3 {
            h.feedback(&a.id, Feedback::Helpful, 0).expect("fb");
        }
        assert_eq!(h.auto_resolve(&a.id, &b.id, 0), Ok("resolved"));
        assert_eq!(
            h.get(&b.id).and_then(|r| r.superseded_by.clone()),
            Some(a.id)
        );
    }
}
