//! Retrieval: how a query scores records, which it leaves out, and the ranking (at least the
//! threshold, best first, at most top-n). The spec's blend is what its conformance runner
//! checks; Proven's memory of refutations (`proven_store`'s `memory_similar`, which reviews
//! call) retrieves with the same ranking under its own configuration: the share of the
//! query's leading words a refutation's claim holds, superseded records left out.

use super::{Hmem, Record, words};

/// How a record is scored against a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scoring {
    /// The spec's eight-signal blend times confidence ([`Hmem::score`]).
    Blend,
    /// The share of the query's first `n` distinct words that the record's content holds,
    /// not weighted by confidence: Proven's refutations are settled by evidence, so each
    /// holds with the same confidence (1).
    LeadingWords(usize),
}

/// What retrieval does with a superseded record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Superseded {
    /// The spec's: kept, its score lowered by 0.20.
    RankedDown,
    /// Proven's refutations: only the current record of a fingerprint is ever shown.
    LeftOut,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Retrieval {
    pub scoring: Scoring,
    pub superseded: Superseded,
    /// The least score a record is returned with.
    pub threshold: f64,
    pub top_n: usize,
}

impl Retrieval {
    /// The spec's retrieval (what its conformance runner checks).
    pub fn spec(threshold: f64, top_n: usize) -> Retrieval {
        Retrieval {
            scoring: Scoring::Blend,
            superseded: Superseded::RankedDown,
            threshold,
            top_n,
        }
    }

    /// Proven's memory of refutations: a record sharing at least one of the query's first
    /// `query_words` words, superseded ones left out, at most `top_n`.
    pub fn refutations(query_words: usize, top_n: usize) -> Retrieval {
        Retrieval {
            scoring: Scoring::LeadingWords(query_words),
            superseded: Superseded::LeftOut,
            threshold: f64::MIN_POSITIVE,
            top_n,
        }
    }
}

/// The first `n` words of `query` that count (lower-case runs of letters and digits), each
/// once.
pub fn leading_words(query: &str, n: usize) -> Vec<String> {
    let mut asked = words(query);
    asked.truncate(n);
    asked.sort();
    asked.dedup();
    asked
}

/// The share of `asked` that `content` holds (0 when nothing is asked).
pub fn leading_share(asked: &[String], content: &str) -> f64 {
    if asked.is_empty() {
        return 0.0;
    }
    let held = words(content);
    asked.iter().filter(|w| held.contains(w)).count() as f64 / asked.len() as f64
}

/// Records scoring at least `threshold`, best first (a tie in the order of ids), at most
/// `top_n`.
pub fn rank(mut scored: Vec<(Record, f64)>, threshold: f64, top_n: usize) -> Vec<(Record, f64)> {
    scored.retain(|(_, s)| *s >= threshold);
    #[cfg(any(test, feature = "mutation"))]
    let keep_order = crate::mutation::on(crate::mutation::Rule::HmemBestFirst);
    #[cfg(not(any(test, feature = "mutation")))]
    let keep_order = false;
    if !keep_order {
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
    }
    scored.truncate(top_n);
    scored
}

impl Hmem {
    /// The records `retrieval` returns for `query`, ranked.
    pub fn query_with(&self, query: &str, retrieval: &Retrieval, now: i64) -> Vec<(Record, f64)> {
        let asked = match retrieval.scoring {
            Scoring::LeadingWords(n) => leading_words(query, n),
            Scoring::Blend => Vec::new(),
        };
        let scored = self
            .records
            .iter()
            .filter(|r| retrieval.superseded == Superseded::RankedDown || r.superseded_by.is_none())
            .map(|r| {
                let score = match retrieval.scoring {
                    Scoring::Blend => self.score(r, query, now),
                    Scoring::LeadingWords(_) => leading_share(&asked, &r.content),
                };
                (r.clone(), score)
            })
            .collect();
        rank(scored, retrieval.threshold, retrieval.top_n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::NewRecord;
    use super::*;

    #[test]
    fn refutations_are_found_by_the_querys_leading_words_and_a_superseded_one_never() {
        let mut h = Hmem::default();
        let add = |h: &mut Hmem, content: &str| {
            h.add(
                NewRecord {
                    content: content.into(),
                    source: "judge".into(),
                    ..NewRecord::default()
                },
                0,
            )
            .expect("added")
        };
        let half = add(&mut h, "clamp returns the upper bound");
        let whole = add(&mut h, "parse drops the last field");
        let gone = add(&mut h, "parse drops every field");
        h.supersede(&gone.id, &whole.id, 0).expect("supersede");
        let asked = "parse drops clamp";
        let found: Vec<(String, f64)> = h
            .query_with(asked, &Retrieval::refutations(8, 3), 0)
            .into_iter()
            .map(|(r, s)| (r.id, s))
            .collect();
        assert_eq!(
            found,
            [(whole.id.clone(), 2.0 / 3.0), (half.id.clone(), 1.0 / 3.0)]
        );
        assert!(
            h.query_with(asked, &Retrieval::refutations(2, 3), 0)
                .iter()
                .all(|(r, _)| r.id != half.id),
            "'clamp' is past the query's second word"
        );
        assert_eq!(
            h.query_with(asked, &Retrieval::refutations(8, 1), 0).len(),
            1
        );
    }
}
