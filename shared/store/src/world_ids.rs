//! The World Model's stable ids and merge bands (Meterless's World Model, `docs/stable-ids.md`
//! and its resolution bands): the same name gives the same id on every machine and run; two
//! names merge only above a similarity the bands fix.

use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// NFKD, combining marks and zero-width characters stripped, lower case, runs of white
/// space folded to one space, trimmed. Never abbreviates or drops a word character:
/// "Acme Corp" and "Acme Corporation" stay two names.
pub fn normalize_name(name: &str) -> String {
    let stripped: String = name
        .nfkd()
        .filter(|c| !is_combining_mark(*c) && !matches!(c, '\u{200B}'..='\u{200D}' | '\u{FEFF}'))
        .flat_map(char::to_lowercase)
        .collect();
    stripped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A name-keyed entity's id: `ent_` and the first 16 hex digits of sha-256 of
/// `KIND:normalized name` (the kind is part of the key).
pub fn entity_id_from_name(kind: &str, name: &str) -> String {
    let digest = Sha256::digest(format!("{kind}:{}", normalize_name(name)).as_bytes());
    format!("ent_{}", &hex::encode(digest)[..16])
}

/// 1 − Levenshtein distance / the longer length, over normalized names (in characters).
pub fn name_similarity(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (
        normalize_name(a).chars().collect(),
        normalize_name(b).chars().collect(),
    );
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut row = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            row[j + 1] = (prev[j + 1] + 1)
                .min(row[j] + 1)
                .min(prev[j] + usize::from(ca != cb));
        }
        prev = row;
    }
    1.0 - prev[b.len()] as f64 / longest as f64
}

/// What a similarity decides: at or above 0.85 the names merge; at or above 0.82 an
/// operator reviews the pair; below, it is a new entity (each boundary belongs to the band
/// above it).
pub fn merge_band(similarity: f64) -> &'static str {
    if similarity >= 0.85 {
        "auto-merge"
    } else if similarity >= 0.82 {
        "review"
    } else {
        "new"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalize_without_losing_words_and_ids_follow() {
        assert_eq!(normalize_name("José\u{00A0} García\u{200B}"), "jose garcia");
        assert_eq!(
            entity_id_from_name("person", "José García"),
            entity_id_from_name("person", "jose garcia")
        );
        assert_ne!(
            entity_id_from_name("org", "Acme Corp"),
            entity_id_from_name("org", "Acme Corporation")
        );
        assert_ne!(
            entity_id_from_name("person", "x"),
            entity_id_from_name("org", "x")
        );
        assert!(entity_id_from_name("person", "x").starts_with("ent_"));
        assert_eq!(entity_id_from_name("person", "x").len(), 20);
    }

    #[test]
    fn the_bands_keep_their_boundaries() {
        assert_eq!(
            [0.85, 0.84, 0.82, 0.81].map(merge_band),
            ["auto-merge", "review", "review", "new"]
        );
        assert_eq!(name_similarity("kitten", "sitting"), 1.0 - 3.0 / 7.0);
        assert_eq!(name_similarity("Ab", "ab"), 1.0);
    }
}
