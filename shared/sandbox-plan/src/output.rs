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
    language: Language,
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
            language,
        }
    }

    /// Whether the output ends with a Python test runner's last words, and whether they say
    /// a test failed: unittest's and nose's `Ran N tests in Xs` then `OK` or `FAILED (...)`,
    /// pytest's `N passed, M failed in Xs` line. A runner prints nothing after them; a
    /// process still running after them is a thread or a child the tests left behind.
    pub fn final_summary(&self) -> Option<bool> {
        if self.language != Language::Python {
            return None;
        }
        // The last bytes only (it is asked after every chunk): the head's end joins the
        // tail's while nothing was left out between them.
        const LAST: usize = 600;
        let whole = self.total == (self.head.len() + self.tail.len()) as u64;
        let from_tail = &self.tail[self.tail.len().saturating_sub(LAST)..];
        let from_head = if whole {
            &self.head[self.head.len().saturating_sub(LAST - from_tail.len())..]
        } else {
            &[]
        };
        let end = String::from_utf8_lossy(&[from_head, from_tail].concat()).into_owned();
        let mut lines = end.lines().map(str::trim).filter(|l| !l.is_empty()).rev();
        let last = lines.next()?;
        let last = last.trim_matches('=').trim();
        if last == "OK" || last.starts_with("OK (") || last.starts_with("FAILED (") {
            let ran = lines.next()?;
            let words: Vec<&str> = ran.split_whitespace().collect();
            let is_ran = matches!(words.as_slice(), ["Ran", n, "test" | "tests", "in", t]
                if n.parse::<u64>().is_ok() && t.ends_with('s'));
            return is_ran.then(|| last.starts_with("FAILED"));
        }
        // pytest: "3 failed, 10 passed, 1 warning in 5.01s" (between `=` rules unless -q).
        let (counts, time) = last.rsplit_once(" in ")?;
        let time = time.split_whitespace().next()?;
        let timed = time.trim_end_matches('s').parse::<f64>().is_ok() && time.ends_with('s');
        let counted = !counts.is_empty()
            && counts.split(", ").all(|part| {
                let mut w = part.split_whitespace();
                w.next().is_some_and(|n| n.parse::<u64>().is_ok())
                    && w.next().is_some()
                    && w.next().is_none()
            });
        (timed && counted).then(|| counts.contains(" failed") || counts.contains(" error"))
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

    /// A Python runner's last words end the output (unittest's and nose's, pytest's with or
    /// without its rules), and say whether a test failed; output that goes on after them,
    /// or that only looks like them, is no summary.
    #[test]
    fn a_python_runners_last_words_are_read_as_its_summary() {
        let summary = |text: &str, language: Language| {
            let mut capture = Capture::new(16, 4096, &[], language);
            capture.push(text.as_bytes());
            capture.final_summary()
        };
        let py = Language::Python;
        let luigi = "test_save_state ... ok\n----------------------------------------------------------------------\nRan 1313 tests in 181.169s\n\nFAILED (SKIP=27, errors=13, failures=7)\n";
        assert_eq!(summary(luigi, py), Some(true));
        assert_eq!(
            summary("..\nRan 2 tests in 0.001s\n\nOK\n", py),
            Some(false)
        );
        assert_eq!(
            summary("Ran 1 test in 0.1s\nOK (skipped=1)\n\n", py),
            Some(false)
        );
        assert_eq!(
            summary(
                "..F\n======= 1 failed, 2 passed, 1 warning in 5.01s =======\n",
                py
            ),
            Some(true)
        );
        assert_eq!(summary("...\n3 passed in 0.02s\n", py), Some(false));
        assert_eq!(summary("E\n1 error in 0.50s\n", py), Some(true));
        for not_yet in [
            "Ran 2 tests in 0.001s\n\nOK\nnow the docs build\n",
            "OK\n",
            "waiting in 5s\n",
            "3 passed in 0.02s\n",
        ] {
            let language = if not_yet.starts_with('3') {
                Language::Node
            } else {
                py
            };
            assert_eq!(summary(not_yet, language), None, "{not_yet}");
        }
    }

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
