//! A run's output, capped: the first and last bytes kept, every byte counted and hashed,
//! and a few marker strings looked for in all of it (not only in the kept parts), so the
//! outcome does not depend on where the cap fell.

use sha2::{Digest, Sha256};

use crate::Language;
use crate::record::OutputRecord;
use crate::tally::{Tally, TestCounts};

pub struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: Vec<u8>,
    tail_cap: usize,
    total: u64,
    hasher: Sha256,
    needles: &'static [&'static str],
    found: Vec<bool>,
    /// The end of the previous chunk, so a marker split across two chunks is found.
    carry: Vec<u8>,
    /// The test runner's counts, read from every line.
    tally: Tally,
}

/// What the whole output showed, beyond the bytes kept.
pub struct Seen {
    pub markers: Vec<&'static str>,
    pub tests: Option<TestCounts>,
    /// The tests the runner named as failing or erroring (see `Tally::finish`).
    pub failing: Vec<String>,
}

impl Capture {
    pub fn new(
        head_cap: usize,
        tail_cap: usize,
        needles: &'static [&'static str],
        language: Language,
    ) -> Capture {
        Capture {
            head: Vec::new(),
            head_cap,
            tail: Vec::new(),
            tail_cap,
            total: 0,
            hasher: Sha256::new(),
            needles,
            found: vec![false; needles.len()],
            carry: Vec::new(),
            tally: Tally::new(language),
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        self.hasher.update(bytes);
        self.scan(bytes);
        self.tally.push(bytes);
        let room = self.head_cap.saturating_sub(self.head.len());
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.is_empty() || self.tail_cap == 0 {
            return;
        }
        self.tail.extend_from_slice(bytes);
        // Trimmed in batches: amortised O(1) a byte however small the chunks.
        if self.tail.len() > self.tail_cap * 2 {
            let cut = self.tail.len() - self.tail_cap;
            self.tail.drain(..cut);
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        if self.needles.is_empty() {
            return;
        }
        let longest = self.needles.iter().map(|n| n.len()).max().unwrap_or(0);
        let mut window = std::mem::take(&mut self.carry);
        window.extend_from_slice(bytes);
        for (i, needle) in self.needles.iter().enumerate() {
            if !self.found[i] && contains(&window, needle.as_bytes()) {
                self.found[i] = true;
            }
        }
        let keep = longest.saturating_sub(1).min(window.len());
        self.carry = window.split_off(window.len() - keep);
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether `needle` (one of those given to `new`) appeared anywhere in the output.
    #[cfg(test)]
    pub fn saw(&self, needle: &str) -> bool {
        self.needles
            .iter()
            .position(|n| *n == needle)
            .is_some_and(|i| self.found[i])
    }

    pub fn finish(mut self) -> (OutputRecord, Seen) {
        if self.tail.len() > self.tail_cap {
            let cut = self.tail.len() - self.tail_cap;
            self.tail.drain(..cut);
        }
        let kept = (self.head.len() + self.tail.len()) as u64;
        let (tests, failing) = self.tally.finish();
        let markers = self
            .needles
            .iter()
            .zip(&self.found)
            .filter(|(_, found)| **found)
            .map(|(n, _)| *n)
            .collect();
        (
            OutputRecord {
                head: String::from_utf8_lossy(&self.head).into_owned(),
                tail: String::from_utf8_lossy(&self.tail).into_owned(),
                bytes: self.total,
                sha256: hex::encode(self.hasher.finalize()),
                truncated: self.total > kept,
            },
            Seen {
                markers,
                tests,
                failing,
            },
        )
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && memchr::memmem::find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_and_hashes_everything() {
        let mut capture = Capture::new(4, 3, &[], Language::Python);
        for chunk in [b"ab".as_slice(), b"cdef", b"ghij", b"k"] {
            capture.push(chunk);
        }
        let (record, _) = capture.finish();
        assert_eq!(record.head, "abcd");
        assert_eq!(record.tail, "ijk");
        assert_eq!(record.bytes, 11);
        assert!(record.truncated);
        assert_eq!(
            record.sha256,
            hex::encode(Sha256::digest(b"abcdefghijk")),
            "the digest covers the bytes that were not kept"
        );
    }

    #[test]
    fn short_output_is_kept_whole_between_head_and_tail() {
        let mut capture = Capture::new(4, 8, &[], Language::Python);
        capture.push(b"abcdefg");
        let (record, _) = capture.finish();
        assert_eq!(format!("{}{}", record.head, record.tail), "abcdefg");
        assert!(!record.truncated);
    }

    #[test]
    fn finds_a_marker_split_across_chunks_and_outside_the_kept_parts() {
        let mut capture = Capture::new(2, 2, &["test result: FAILED", "absent"], Language::Rust);
        capture.push(b"xx.....test res");
        capture.push(b"ult: FAI");
        capture.push(b"LED......yy");
        assert!(capture.saw("test result: FAILED"));
        assert!(!capture.saw("absent"));
        let (_, seen) = capture.finish();
        assert_eq!(seen.markers, vec!["test result: FAILED"]);
    }
}
