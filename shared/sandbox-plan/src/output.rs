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
    /// Where (bytes from the start) the last `MOCHA_MARK` begins, and the end of the
    /// previous chunk for one split across two: mocha's epilogue is looked for only after
    /// it, so a long output is not read again after every chunk.
    mocha_mark: Option<u64>,
    mark_carry: Vec<u8>,
}

/// The word of mocha's count line (`  12 passing (2s)`), coloured or not.
const MOCHA_MARK: &[u8] = b" passing";

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
            mocha_mark: None,
            mark_carry: Vec::new(),
        }
    }

    /// Whether the output ends with a test runner's last words, and whether they say a test
    /// failed: unittest's and nose's `Ran N tests in Xs` then `OK` or `FAILED (...)`,
    /// pytest's `N passed, M failed in Xs` line; mocha's epilogue (`N passing (Ts)`, then
    /// `N pending`, `N failing` and the failures listed up to the last). A runner prints
    /// nothing after them; a process still running after them is a thread, a child or a
    /// handle (mocha 4 and later waits on an open server without `--exit`) the tests left.
    pub fn final_summary(&self) -> Option<bool> {
        match self.language {
            Language::Python => self.python_summary(),
            Language::Node => {
                // From a little before the mark (the count and its indentation).
                let since = self.total - self.mocha_mark?;
                (since <= MOCHA_LAST as u64)
                    .then(|| mocha_epilogue(&self.last(since as usize + 64)))
                    .flatten()
            }
            Language::Rust | Language::Go => None,
        }
    }

    /// The output's last `n` bytes, as text (it is asked after every chunk): the head's end
    /// joins the tail's while nothing was left out between them.
    fn last(&self, n: usize) -> String {
        let whole = self.total == (self.head.len() + self.tail.len()) as u64;
        let from_tail = &self.tail[self.tail.len().saturating_sub(n)..];
        let from_head = if whole {
            &self.head[self.head.len().saturating_sub(n - from_tail.len())..]
        } else {
            &[]
        };
        String::from_utf8_lossy(&[from_head, from_tail].concat()).into_owned()
    }

    fn python_summary(&self) -> Option<bool> {
        let end = self.last(600);
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
        if self.language == Language::Node {
            let mut window = std::mem::take(&mut self.mark_carry);
            let before = self.total - window.len() as u64;
            window.extend_from_slice(bytes);
            if let Some(at) = memchr::memmem::rfind(&window, MOCHA_MARK) {
                self.mocha_mark = Some(before + at as u64);
            }
            let keep = window.len().saturating_sub(MOCHA_MARK.len() - 1);
            window.drain(..keep);
            self.mark_carry = window;
        }
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

/// How far back mocha's epilogue is looked for: its failures are listed after its counts,
/// each with its stack.
const MOCHA_LAST: usize = 32 * 1024;

/// Whether `end` (an output's last bytes) ends with mocha's epilogue, and whether it says a
/// test failed: its last `N passing (T)` line, then only `N pending` and `N failing`, and
/// with failures their list through the last one's heading (`  N) title`), whose stack
/// ends the output. Any other line after the counts (a coverage table, another run) is no
/// epilogue.
fn mocha_epilogue(end: &str) -> Option<bool> {
    let end = crate::tally::strip_ansi(end);
    let lines: Vec<&str> = end.lines().collect();
    let counted = |line: &str, word: &str| -> Option<u64> {
        let (n, rest) = line.trim().split_once(' ')?;
        let n = n.parse::<u64>().ok()?;
        (rest == word).then_some(n)
    };
    let passing_at = lines.iter().rposition(|l| {
        let Some((n, time)) = l.trim().split_once(" passing (") else {
            return false;
        };
        let time = time.strip_suffix(')').unwrap_or("");
        let digits = time.trim_end_matches(char::is_alphabetic);
        n.parse::<u64>().is_ok()
            && !digits.is_empty()
            && digits.chars().all(|c| c.is_ascii_digit())
            && matches!(&time[digits.len()..], "ms" | "s" | "m" | "h")
    })?;
    let mut rest = lines[passing_at + 1..]
        .iter()
        .skip_while(|l| l.trim().is_empty())
        .peekable();
    if rest.peek().is_some_and(|l| counted(l, "pending").is_some()) {
        rest.next();
    }
    let failing = rest.peek().and_then(|l| counted(l, "failing"));
    if failing.is_some() {
        rest.next();
    }
    let rest: Vec<&&str> = rest.collect();
    match failing {
        None | Some(0) => rest.iter().all(|l| l.trim().is_empty()).then_some(false),
        Some(n) => {
            let first = rest.iter().find(|l| !l.trim().is_empty())?;
            let heading = |k: u64, l: &str| {
                l.trim_start()
                    .strip_prefix(&format!("{k})"))
                    .is_some_and(|t| t.starts_with(' '))
            };
            (heading(1, first) && rest.iter().any(|l| heading(n, l))).then_some(true)
        }
    }
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

    /// websockets/ws' family: mocha 4 and later, run without `--exit`, waits on a server a
    /// failed test left open after printing its epilogue. The epilogue is read as its last
    /// words, with or without failures (listed through the last one), coloured or not, in
    /// one chunk or byte by byte; counts followed by anything else, or a failure list cut
    /// before its last heading, are not.
    #[test]
    fn mochas_epilogue_is_read_as_its_summary() {
        let summary = |text: &str, chunk: usize| {
            let mut capture = Capture::new(64, 64 * 1024, &[], Language::Node);
            for part in text.as_bytes().chunks(chunk) {
                capture.push(part);
            }
            capture.final_summary()
        };
        let ws = "  WebSocketServer\n    ✔ accepts a connection\n    1) rejects too many headers\n\n\n  411 passing (9s)\n  2 pending\n  1 failing\n\n  1) WebSocketServer\n       rejects too many headers:\n\n      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n431 !== 400\n\n      + expected - actual\n\n      -431\n      +400\n      \n      at ClientRequest.<anonymous> (test/websocket-server.test.js:1023:18)\n      at node:internal/process/task_queues:95:5\n\n\n\n";
        let passed = "  parser\n    ✔ reads a frame\n\n\n  \u{1b}[92m \u{1b}[0m\u{1b}[32m 12 passing\u{1b}[0m\u{1b}[90m (150ms)\u{1b}[0m\n\n";
        for chunk in [1, 7, 4096] {
            assert_eq!(summary(ws, chunk), Some(true), "chunks of {chunk}");
            assert_eq!(summary(passed, chunk), Some(false), "chunks of {chunk}");
        }
        assert_eq!(
            summary("\n  0 passing (2ms)\n  3 pending\n\n", 4096),
            Some(false)
        );
        for not_yet in [
            // A later step prints after the counts.
            "  3 passing (1s)\n\n----------|---------|\nFile      | % Stmts |\n",
            // The failures are listed up to the first of two.
            "  3 passing (1s)\n  2 failing\n\n  1) a\n       b:\n     Error: x\n",
            // Words like the counts in a test's own output.
            "  still 3 passing (soon) for now\n",
            "  3 passing (1s)\n  1 failing\n\n  now the docs build\n",
        ] {
            assert_eq!(summary(not_yet, 4096), None, "{not_yet}");
        }
        // The epilogue only where the output is the Node runner's.
        let mut python = Capture::new(64, 4096, &[], Language::Python);
        python.push(b"  3 passing (1s)\n\n");
        assert_eq!(python.final_summary(), None);
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
