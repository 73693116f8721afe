//! How many tests a run's test runner says passed, failed and were skipped, read from the
//! runner's own summary lines as the output streams by (the whole output, not only the
//! kept head and tail, so a cap cannot hide a summary).
//!
//! A run "passes" only when at least one test ran and every test that ran passed; a run
//! that skipped everything, collected nothing or ran zero tests is not a pass (DESIGN.md
//! section 3, step 6). Each runner says how many ran, in its own words:
//! - pytest: the last summary line (`1 failed, 2 passed, 1 skipped in 0.12s`,
//!   `no tests ran in 0.01s`); unittest: `Ran N tests` and `OK (skipped=1)` /
//!   `FAILED (failures=1, errors=1)`, an error whose traceback starts in the test method
//!   (an exception out of its body) counted as failed, as pytest counts it;
//! - libtest (cargo test): every `test result:` line, summed over the test binaries;
//! - go test -v: the top-level `--- PASS:`, `--- FAIL:`, `--- SKIP:` lines;
//! - node --test: the closing `# pass N`, `# fail N`, `# skipped N`, `# todo N` (TAP), or
//!   `ℹ pass N`, … (its spec reporter);
//!   jest `Tests: …`, mocha `N passing`/`N failing`/`N pending`, vitest `Tests  … (N)`,
//!   ava's closing lines (`32 tests passed`, `1 test failed`, `2 tests skipped`, …) with
//!   its `✔ title` lines for the passes it leaves out of them when a test failed, and
//!   QUnit's command-line `PASS: N  FAIL: M  TOTAL: T` (qunit-extras), summed; and, where
//!   none of these printed, a hand-written runner's `[Label:] N tests run …; all passed`
//!   (or `; F failures`), its `Total:` lines standing for those before them.
//!
//! No parser in the ecosystem reads all of these from one stream (pytest's JUnit XML, go's
//! test2json and TAP parsers each read one runner's own format, and need the runner to
//! write it), so this small one is written here.

use serde::{Deserialize, Serialize};

use crate::Language;

/// What the runner reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCounts {
    pub passed: u64,
    pub failed: u64,
    /// Skipped, ignored, expected failures, todo: tests that did not run to a verdict.
    pub skipped: u64,
    /// Errors outside a test's own body (pytest's setup, teardown and collection errors;
    /// unittest's errors in setUp, fixtures and imports). An exception a test's own body
    /// raised (the code under test raising) is a failed test, as pytest counts it: unittest
    /// reports it as an ERROR, and this reads it as failed (`Tally`).
    pub errors: u64,
}

impl TestCounts {
    /// Tests that ran to a verdict (passed, failed, or errored).
    pub fn ran(&self) -> u64 {
        self.passed + self.failed + self.errors
    }

    fn add(&mut self, other: TestCounts) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
        self.errors += other.errors;
    }
}

impl std::fmt::Display for TestCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )?;
        if self.errors > 0 {
            write!(f, ", {} errors", self.errors)?;
        }
        Ok(())
    }
}

/// Lines longer than this are not summary lines: only their start is kept.
const MAX_LINE: usize = 4096;

/// Reads a run's output as it arrives and keeps the runner's counts.
pub(crate) struct Tally {
    language: Language,
    line: Vec<u8>,
    /// pytest's last summary line.
    pytest: Option<TestCounts>,
    /// The summaries of the pytest sessions before the current one.
    pytest_before: Option<TestCounts>,
    /// Whether the line before was unittest's rule (`=` × 70), which opens each failure.
    after_rule: bool,
    /// unittest: `Ran N tests`, then its result line.
    unittest_ran: Option<u64>,
    unittest: Option<TestCounts>,
    /// unittest: the method an `ERROR: test_x (...)` names, until its traceback's first
    /// frame says where the exception came from.
    unittest_error: Option<String>,
    /// unittest: errors raised out of the test method's own body (its traceback's first
    /// frame is the test method): failed tests, not errors of the set-up.
    unittest_body_errors: u64,
    /// libtest: the sum of every `test result:` line.
    libtest: Option<TestCounts>,
    /// go test -v: top-level test lines; `go_seen` once go test printed anything of its own.
    go: TestCounts,
    /// go test -v: the lines of the package whose result line has not come yet.
    go_package: TestCounts,
    go_seen: bool,
    /// The last value of each TAP summary line (`# pass`, `# fail`, ...).
    tap: Option<TestCounts>,
    jest: Option<TestCounts>,
    mocha: Option<TestCounts>,
    /// ava's closing lines, and its `✔ title` lines (passes; its closing lines say how many
    /// passed only when none failed).
    ava: Option<TestCounts>,
    ava_ticks: u64,
    /// ava 6's `✘ [fail]: TITLE MESSAGE` lines: the title and the message share the line,
    /// and the details after `─` repeat the title alone (`ava_titles`); each is named at
    /// the end by the longest of those that begins it.
    ava_failed: Vec<String>,
    ava_titles: Vec<String>,
    /// QUnit's command-line summaries (qunit-extras: `PASS: 6831  FAIL: 0  TOTAL: 6831`,
    /// lodash's), summed over the suites that printed one.
    qunit: Option<TestCounts>,
    /// mocha's list of failures after its `N failing` line: the number the next one has
    /// (`  3) suite`), 0 outside the list; and the title read so far of one whose title
    /// spans lines (its suites, then the test, the last ending with `:`).
    mocha_next: u64,
    mocha_title: Option<Vec<String>>,
    /// TAP without a summary (node-tap's own `tap` reporter): the top-level test points.
    tap_points: Option<TestCounts>,
    /// uvu's closing lines (`Total: 686`, then `Passed: 686`, `Skipped: 0`), summed over
    /// its runs; and the total of a `Total:` line whose `Passed:` line is the next.
    uvu: Option<TestCounts>,
    uvu_total: Option<u64>,
    /// A hand-written runner's count lines ([`own_runner_count`]): the sum of its `Total:`
    /// lines, and of the lines since the last of them (each `Total:` stands for the lines
    /// before it).
    own_totals: Option<TestCounts>,
    own_parts: Option<TestCounts>,
    /// @hapi/lab's closing lines (`1818 tests complete`, `2 of 40 tests failed (3
    /// skipped)`, each counted only with its `Test duration:` line after it;
    /// `There were 2 test script error(s).`), summed over its runs; the counts of a line
    /// whose next line has not come; and whether its `Failed tests:` list is being read
    /// (`  12) suite test:`, numbered by the tests' ids).
    lab: Option<TestCounts>,
    lab_pending: Option<TestCounts>,
    lab_failed_list: bool,
    /// jest: the test file of its last `FAIL path` line, whose failures follow as
    /// `● suite › test`; and whether its "Summary of all failing tests" began, which
    /// repeats the failures already named.
    jest_file: Option<String>,
    jest_repeats: bool,
    /// The tests the runner named as failing or erroring, in its own words, one a line.
    failing: Vec<String>,
    /// go test: the failing top-level tests of the package whose result line has not come
    /// yet (`FAIL\tPKG` names them as `PKG.Test`; `ok PKG` drops them).
    go_failing: Vec<String>,
}

/// Failing tests named at most: past it the names are incomplete (fewer than the counts),
/// which a reader of the record must treat as "not known".
pub const MAX_NAMED: usize = 2000;
/// A name longer than this is cut (and so no longer matches another run's).
const MAX_NAME: usize = 512;

impl Tally {
    pub fn new(language: Language) -> Tally {
        Tally {
            language,
            line: Vec::new(),
            pytest: None,
            pytest_before: None,
            after_rule: false,
            unittest_ran: None,
            unittest: None,
            unittest_error: None,
            unittest_body_errors: 0,
            libtest: None,
            go: TestCounts::default(),
            go_package: TestCounts::default(),
            go_seen: false,
            tap: None,
            jest: None,
            mocha: None,
            ava: None,
            ava_ticks: 0,
            ava_failed: Vec::new(),
            ava_titles: Vec::new(),
            qunit: None,
            mocha_next: 0,
            mocha_title: None,
            tap_points: None,
            uvu: None,
            uvu_total: None,
            own_totals: None,
            own_parts: None,
            lab: None,
            lab_pending: None,
            lab_failed_list: false,
            jest_file: None,
            jest_repeats: false,
            failing: Vec::new(),
            go_failing: Vec::new(),
        }
    }

    fn named_failing(&mut self, name: &str) {
        let name = name.trim();
        if name.is_empty() || self.failing.len() >= MAX_NAMED {
            return;
        }
        let mut cut = name.len().min(MAX_NAME);
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        // Every line a name: a name is not unique (unittest names a test by its docstring's
        // first line, a copied test module repeats them), and the names are complete only
        // when there are as many as the failures counted.
        self.failing.push(name[..cut].to_string());
    }

    pub fn push(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(at) = memchr::memchr(b'\n', rest) {
            self.take(&rest[..at]);
            let line = std::mem::take(&mut self.line);
            self.line_done(&line);
            rest = &rest[at + 1..];
        }
        self.take(rest);
    }

    fn take(&mut self, part: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.line.len());
        self.line.extend_from_slice(&part[..part.len().min(room)]);
    }

    /// The counts, when the runner printed a summary this reads, and the tests it named as
    /// failing or erroring (pytest's `FAILED`/`ERROR` lines, unittest's `FAIL:`/`ERROR:`,
    /// libtest's `test NAME ... FAILED`, go's top-level `--- FAIL:` by package, TAP's
    /// top-level `not ok`, mocha's list after `N failing` as `suite … test`, jest's
    /// `● suite › test` as `file › suite › test`, vitest's `FAIL  file > suite > test`,
    /// ava's `✘ [fail]:` lines by the titles its details repeat).
    /// The names are complete only when there
    /// are as many as the counts' failed and errored tests.
    pub fn finish(mut self) -> (Option<TestCounts>, Vec<String>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line);
        }
        self.go_package_ended(None);
        self.ava_named();
        let counts = self.counts();
        (counts, self.failing)
    }

    fn counts(&self) -> Option<TestCounts> {
        match self.language {
            Language::Python => match (self.pytest_before, self.pytest) {
                (Some(mut before), last) => {
                    before.add(last.unwrap_or_default());
                    Some(before)
                }
                (None, last) => last,
            }
            .or(self.unittest),
            Language::Rust => self.libtest,
            Language::Go => self.go_seen.then_some(self.go),
            Language::Node => self
                .tap
                .or(self.jest)
                .or(self.mocha)
                .or(self.ava.map(|mut ava| {
                    if ava.passed == 0 {
                        ava.passed = self.ava_ticks;
                    }
                    ava
                }))
                .or(self.qunit)
                .or(self.lab)
                .or(self.uvu)
                .or(self.tap_points)
                .or(match (self.own_totals, self.own_parts) {
                    (Some(mut totals), parts) => {
                        totals.add(parts.unwrap_or_default());
                        Some(totals)
                    }
                    (None, parts) => parts,
                }),
        }
    }

    fn line_done(&mut self, raw: &[u8]) {
        let lossy = String::from_utf8_lossy(raw);
        let text = strip_ansi(&lossy);
        let line = text.trim_end_matches('\r');
        match self.language {
            Language::Python => self.python(line),
            Language::Rust => {
                if let Some(counts) = libtest_summary(line) {
                    self.libtest.get_or_insert_default().add(counts);
                } else if let Some(name) = line
                    .strip_prefix("test ")
                    .and_then(|r| r.strip_suffix(" ... FAILED"))
                {
                    self.named_failing(name);
                }
            }
            Language::Go => self.go(line),
            Language::Node => self.node(without_pnpm_prefix(line)),
        }
    }

    fn python(&mut self, line: &str) {
        let rule = line.len() >= 20 && line.trim_end().bytes().all(|b| b == b'=');
        let after_rule = std::mem::replace(&mut self.after_rule, rule);
        // A session's last summary is its counts (a test may print something summary-like
        // first); each session's add to those before it: a suite may run pytest more than
        // once (two commands of a tox env, two CI test scripts), each session opening with
        // its header.
        if line.contains("test session starts")
            && let Some(counts) = self.pytest.take()
        {
            self.pytest_before.get_or_insert_default().add(counts);
            return;
        }
        if let Some(counts) = pytest_summary(line) {
            self.pytest = Some(counts);
            return;
        }
        // pytest's short summary (`FAILED tests/t.py::test_a - reason`, `ERROR tests/t.py`;
        // before pytest 3.6 `FAIL tests/t.py::test_a`) and unittest's (`FAIL: test_a
        // (pkg.TestX.test_a)`, `ERROR: …`). (unittest's own result line, `FAILED
        // (failures=1)`, is no test's name.)
        // Only a line that names a test so: the project's own log lines (luigi's `ERROR:
        // [pid 5280] Worker X failed FailingTask(param=a)` on stderr) name none, and read
        // as names they made every run's failures new ones.
        if let Some(rest) = line
            .strip_prefix("FAILED ")
            .or_else(|| line.strip_prefix("FAIL "))
            .or_else(|| line.strip_prefix("ERROR "))
            .filter(|r| pytest_node(r))
        {
            let name = rest.split_once(" - ").map_or(rest, |(n, _)| n);
            self.named_failing(name);
            return;
        }
        // unittest's (nose's, Django's) header, after its rule, names the test however the
        // runner does (nose by a docstring's first line); elsewhere only in unittest's shape.
        let header = |r: &&str| after_rule || unittest_header(r);
        if let Some(rest) = line.strip_prefix("ERROR: ").filter(header) {
            self.unittest_error = unittest_error_method(rest);
            self.named_failing(rest);
            return;
        }
        if let Some(rest) = line.strip_prefix("FAIL: ").filter(header) {
            self.named_failing(rest);
            return;
        }
        let trimmed = line.trim();
        // The first frame of an ERROR's traceback: the test method itself (an exception out
        // of its body, the code under test raising), or setUp and what it called.
        if let Some(method) = &self.unittest_error
            && let Some(function) = traceback_frame_function(trimmed)
        {
            if function == method {
                self.unittest_body_errors += 1;
            }
            self.unittest_error = None;
            return;
        }
        if let Some(n) = trimmed
            .strip_prefix("Ran ")
            .and_then(|r| r.split_once(' '))
            .filter(|(_, rest)| rest.starts_with("test"))
            .and_then(|(n, _)| n.parse::<u64>().ok())
        {
            self.unittest_ran = Some(n);
            return;
        }
        if let Some(ran) = self.unittest_ran
            && let Some(mut counts) = unittest_result(trimmed, ran)
        {
            let body = self.unittest_body_errors.min(counts.errors);
            counts.errors -= body;
            counts.failed += body;
            self.unittest.get_or_insert_default().add(counts);
            self.unittest_body_errors = 0;
            self.unittest_ran = None;
        }
    }

    fn go(&mut self, line: &str) {
        // Only top-level tests: a subtest's line is indented, and a top-level test is a
        // function, so its name is an identifier. A line at the margin that names a subtest
        // (`Suite/case`) or a name with spaces comes from a test that runs tests of its own
        // and checks their result (testify's suite tests print their inner suites' expected
        // failures this way): not a test of the package's. Such inner tests can have plain
        // names too (`--- FAIL: TestSuiteRecoverPanicInBeforeTest`), so a package's lines
        // count only when its result line comes: `FAIL\tPKG` takes them as they are, `ok
        // PKG` says no test of the package failed, so its FAIL lines were another test's
        // output.
        if let Some(rest) = line.strip_prefix("--- ") {
            self.go_seen = true;
            // `NAME (0.00s)`: the name is what comes before the duration.
            let top_level = |r: &str| {
                let name = r.rsplit_once(" (").map_or(r, |(n, _)| n);
                !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            };
            if rest.strip_prefix("PASS: ").is_some_and(top_level) {
                self.go_package.passed += 1;
            } else if let Some(failed) = rest.strip_prefix("FAIL: ").filter(|r| top_level(r)) {
                self.go_package.failed += 1;
                let name = failed.rsplit_once(" (").map_or(failed, |(n, _)| n);
                self.go_failing.push(name.to_string());
            } else if rest.strip_prefix("SKIP: ").is_some_and(top_level) {
                self.go_package.skipped += 1;
            }
            return;
        }
        if let Some(package) = line
            .strip_prefix("FAIL\t")
            .and_then(|r| r.split('\t').next())
        {
            self.go_package_ended(Some(package));
        } else if line.starts_with("ok  ") || line.starts_with("ok \t") {
            let mut package = std::mem::take(&mut self.go_package);
            package.failed = 0;
            self.go.add(package);
            self.go_failing.clear();
        }
        if line.starts_with("ok  ")
            || line.starts_with("FAIL\t")
            || line == "PASS"
            || line == "FAIL"
            || line.starts_with("=== RUN")
        {
            self.go_seen = true;
        }
    }

    /// A package's lines, taken as they are (its result line said FAIL, or none came).
    fn go_package_ended(&mut self, package: Option<&str>) {
        let counts = std::mem::take(&mut self.go_package);
        self.go.add(counts);
        for name in std::mem::take(&mut self.go_failing) {
            match package {
                Some(p) => self.named_failing(&format!("{p}.{name}")),
                None => self.named_failing(&name),
            }
        }
    }

    fn node(&mut self, line: &str) {
        if self.mocha_next > 0 && self.mocha_failure(line) {
            return;
        }
        if self.lab_line(line) {
            return;
        }
        // A top-level TAP test point (`ok 3 - test/x.js # time=12ms`, `not ok 4 - y`,
        // `ok 5 - z # SKIP`): read when the producer prints no `# pass` summary (node-tap,
        // whose points are the test files it ran).
        let point = line
            .strip_prefix("ok ")
            .map(|r| (true, r))
            .or_else(|| line.strip_prefix("not ok ").map(|r| (false, r)));
        if let Some((ok, rest)) = point
            && rest.starts_with(|c: char| c.is_ascii_digit())
        {
            let directive = rest
                .split_once(" # ")
                .map(|(_, d)| d.trim_start().to_ascii_lowercase())
                .unwrap_or_default();
            let skipped = directive.starts_with("skip") || directive.starts_with("todo");
            let points = self.tap_points.get_or_insert_default();
            if skipped {
                points.skipped += 1;
            } else if ok {
                points.passed += 1;
            } else {
                points.failed += 1;
                let point = rest.split_once(" # ").map_or(rest, |(p, _)| p);
                let name = point.split_once(" - ").map_or(point, |(_, n)| n);
                self.named_failing(name);
            }
            return;
        }
        let trimmed = line.trim();
        if self.uvu_summary(trimmed) {
            return;
        }
        if let Some((total, counts)) = own_runner_count(trimmed) {
            if total {
                self.own_parts = None;
                self.own_totals.get_or_insert_default().add(counts);
            } else {
                self.own_parts.get_or_insert_default().add(counts);
            }
            return;
        }
        if self.jest_or_vitest_failure(trimmed) {
            return;
        }
        // The TAP reporter's closing lines, or the spec reporter's (`ℹ pass 1`: node's
        // default from Node 23 on, and a project's `--test-reporter=spec`).
        if let Some(rest) = trimmed
            .strip_prefix("# ")
            .or_else(|| trimmed.strip_prefix("ℹ "))
            && let Some((word, n)) = rest.split_once(' ')
            && let Ok(n) = n.trim().parse::<u64>()
        {
            let tap = self.tap.get_or_insert_default();
            match word {
                "pass" => tap.passed += n,
                "fail" => tap.failed += n,
                "cancelled" => tap.errors += n,
                "skipped" | "todo" => tap.skipped += n,
                _ => {}
            }
            return;
        }
        if let Some(rest) = trimmed.strip_prefix("Tests:") {
            self.jest.get_or_insert_default().add(jest_summary(rest));
            return;
        }
        if let Some(rest) = trimmed.strip_prefix("Tests ") {
            self.jest.get_or_insert_default().add(vitest_summary(rest));
            return;
        }
        if let Some(title) = trimmed.strip_prefix("✔ ") {
            if !title.starts_with("[expected fail]") {
                self.ava_ticks += 1;
            }
            return;
        }
        if let Some(failed) = trimmed.strip_prefix("✘ [fail]: ") {
            self.ava_failed.push(failed.to_string());
            return;
        }
        if self.ava_title(trimmed) {
            return;
        }
        if self.ava_summary(trimmed) {
            return;
        }
        if let Some(counts) = qunit_summary(trimmed) {
            let qunit = self.qunit.get_or_insert_default();
            qunit.passed += counts.passed;
            qunit.failed += counts.failed;
            return;
        }
        // mocha: `  3 passing (10ms)`, `  1 failing`, `  2 pending`
        let mut words = trimmed.split_whitespace();
        if let (Some(n), Some(word)) = (words.next(), words.next())
            && let Ok(n) = n.parse::<u64>()
        {
            let slot = match word {
                "passing" => 0,
                "failing" => 1,
                "pending" => 2,
                _ => return,
            };
            let mocha = self.mocha.get_or_insert_default();
            match slot {
                0 => mocha.passed += n,
                1 => mocha.failed += n,
                _ => mocha.skipped += n,
            }
            if slot == 1 {
                // The list of failures follows, numbered from 1.
                self.mocha_next = 1;
                self.mocha_title = None;
            }
        }
    }

    /// One of @hapi/lab's console reporter's lines (see `Tally::lab`), whether it was.
    fn lab_line(&mut self, line: &str) -> bool {
        if let Some(counts) = self.lab_pending.take()
            && line.starts_with("Test duration: ")
        {
            self.lab.get_or_insert_default().add(counts);
            return true;
        }
        let trimmed = line.trim();
        if trimmed == "Failed tests:" {
            self.lab_failed_list = true;
            return true;
        }
        if self.lab_failed_list
            && let Some(entry) = line.strip_prefix("  ")
            && let Some((id, title)) = entry.split_once(") ")
            && !id.is_empty()
            && id.bytes().all(|b| b.is_ascii_digit())
            && let Some(title) = title.strip_suffix(':')
        {
            self.named_failing(title);
            return true;
        }
        if let Some(n) = trimmed
            .strip_prefix("There were ")
            .and_then(|r| r.strip_suffix(" test script error(s)."))
            .and_then(|n| n.parse::<u64>().ok())
        {
            self.lab.get_or_insert_default().errors += n;
            return true;
        }
        let (main, skipped) = match trimmed.split_once(" (") {
            Some((main, rest)) => match rest
                .strip_suffix(" skipped)")
                .and_then(|n| n.parse::<u64>().ok())
            {
                Some(n) => (main, n),
                None => return false,
            },
            None => (trimmed, 0),
        };
        let counts = if let Some(n) = main.strip_suffix(" tests complete") {
            n.parse::<u64>().ok().map(|passed| TestCounts {
                passed,
                skipped,
                ..TestCounts::default()
            })
        } else if let Some((failed, total)) = main
            .strip_suffix(" tests failed")
            .and_then(|r| r.split_once(" of "))
        {
            match (failed.parse::<u64>(), total.parse::<u64>()) {
                (Ok(failed), Ok(total)) if failed <= total => Some(TestCounts {
                    passed: total - failed,
                    failed,
                    skipped,
                    errors: 0,
                }),
                _ => None,
            }
        } else {
            None
        };
        match counts {
            Some(counts) => {
                self.lab_failed_list = false;
                self.lab_pending = Some(counts);
                true
            }
            None => false,
        }
    }

    /// One of uvu's closing lines (`Total:     686`, `Passed:    685`, `Skipped:   1`: its
    /// total leaves the skipped out, and what did not pass failed), whether it was. A
    /// `Total:` counts only with `Passed:` on the line after it (a coverage or size
    /// report's `Total:` is no test's).
    fn uvu_summary(&mut self, trimmed: &str) -> bool {
        let value = |label: &str| {
            trimmed
                .strip_prefix(label)
                .and_then(|n| n.trim().parse::<u64>().ok())
        };
        let total = self.uvu_total.take();
        if let Some(n) = value("Total:") {
            self.uvu_total = Some(n);
            return true;
        }
        if let (Some(total), Some(passed)) = (total, value("Passed:")) {
            let uvu = self.uvu.get_or_insert_default();
            uvu.passed += passed;
            uvu.failed += total.saturating_sub(passed);
            return true;
        }
        if let (Some(uvu), Some(skipped)) = (self.uvu.as_mut(), value("Skipped:")) {
            uvu.skipped += skipped;
            return true;
        }
        false
    }

    /// A line of ava's details that may be the title alone of a `✘ [fail]:` line (`a ›
    /// three` of `✘ [fail]: a › three Expected values to be strictly equal`): kept.
    fn ava_title(&mut self, trimmed: &str) -> bool {
        let begins = |f: &String| {
            f == trimmed || f.strip_prefix(trimmed).is_some_and(|r| r.starts_with(' '))
        };
        if trimmed.is_empty() || !self.ava_failed.iter().any(begins) {
            return false;
        }
        self.ava_titles.push(trimmed.to_string());
        true
    }

    /// Each of ava's `✘ [fail]:` lines named by the longest title of its details that
    /// begins it (titles may begin one another: `prefix` and `prefix option`).
    fn ava_named(&mut self) {
        for failed in std::mem::take(&mut self.ava_failed) {
            let title = self
                .ava_titles
                .iter()
                .filter(|t| {
                    failed == **t
                        || failed
                            .strip_prefix(t.as_str())
                            .is_some_and(|r| r.starts_with(' '))
                })
                .max_by_key(|t| t.len())
                .cloned();
            if let Some(title) = title {
                self.named_failing(&title);
            }
        }
    }

    /// One of ava's closing lines (ava 3 to 6: `32 tests passed`, `1 test failed`, `2 tests
    /// skipped`, `1 test todo`, `1 known failure`, `1 hook failed`, `1 uncaught exception`,
    /// `1 unhandled rejection`, `1 test remained pending after a timeout`), whether it was.
    fn ava_summary(&mut self, trimmed: &str) -> bool {
        let Some((n, what)) = trimmed.split_once(' ') else {
            return false;
        };
        let Ok(n) = n.parse::<u64>() else {
            return false;
        };
        let slot = match what {
            "test passed" | "tests passed" => 0,
            "test failed" | "tests failed" => 1,
            "test skipped" | "tests skipped" | "test todo" | "tests todo" | "known failure"
            | "known failures" => 2,
            "hook failed"
            | "hooks failed"
            | "uncaught exception"
            | "uncaught exceptions"
            | "unhandled rejection"
            | "unhandled rejections"
            | "test remained pending after a timeout"
            | "tests remained pending after a timeout" => 3,
            _ => return false,
        };
        let ava = self.ava.get_or_insert_default();
        match slot {
            0 => ava.passed = n,
            1 => ava.failed = n,
            2 => ava.skipped += n,
            _ => ava.errors += n,
        }
        true
    }

    /// A line naming a failure in jest's or vitest's default reporter, whether it was one.
    /// - vitest lists every failure after its `Failed Tests N` rule as
    ///   ` FAIL  file > suite > test` (a project's name first in a workspace: `|unit| file`),
    ///   and a file that did not load as ` FAIL  file [ file ]`.
    /// - jest heads each failing file with `FAIL path`, then a `● suite › test` block a
    ///   failure (`● Test suite failed to run`: the file did not load, named by its path);
    ///   with many files it repeats them all after "Summary of all failing tests".
    fn jest_or_vitest_failure(&mut self, trimmed: &str) -> bool {
        if trimmed == "Summary of all failing tests" {
            self.jest_repeats = true;
            return true;
        }
        if let Some(rest) = trimmed.strip_prefix("FAIL ") {
            let rest = rest.trim();
            // A workspace project's name comes first: `|unit| file` (vitest 1–2), or a
            // coloured badge, ` unit  file` once its colours are gone (vitest 3).
            let unprefixed = match rest.strip_prefix('|').and_then(|r| r.split_once("| ")) {
                Some((_project, name)) => name,
                None => match rest.split_once("  ") {
                    Some((label, name)) if !label.contains(['/', '.', ' ']) => name.trim_start(),
                    _ => rest,
                },
            };
            if unprefixed.contains(" > ") {
                self.named_failing(unprefixed);
            } else if let Some((file, _)) = unprefixed.split_once(" [ ") {
                self.named_failing(file);
            } else if !rest.is_empty() && !rest.contains(' ') {
                self.jest_file = Some(rest.to_string());
            } else {
                return false;
            }
            return true;
        }
        let Some(title) = trimmed.strip_prefix("● ") else {
            return false;
        };
        let Some(file) = self.jest_file.clone() else {
            return false;
        };
        // jest's other blocks with the same mark: console output and warnings.
        if title == "Console" || title.contains("Warning") {
            return false;
        }
        if !self.jest_repeats {
            if title == "Test suite failed to run" {
                self.named_failing(&file);
            } else {
                self.named_failing(&format!("{file} › {title}"));
            }
        }
        true
    }

    /// A line of mocha's list of failures (every reporter prints it after `N failing`):
    /// `  1) suite` then `       nested suite` … `         test title:`, or `  2) title:`
    /// on one line; the test named as mocha's full title does (the parts joined by spaces).
    /// Only the number expected next opens one, at mocha's two-space indent: an error's
    /// message or stack in between is never read as a name. Whether the line was its.
    fn mocha_failure(&mut self, line: &str) -> bool {
        let trimmed = line.trim();
        if let Some(parts) = &mut self.mocha_title {
            let last = trimmed.strip_suffix(':');
            if !trimmed.is_empty() {
                parts.push(last.unwrap_or(trimmed).to_string());
            }
            if last.is_some() || trimmed.is_empty() || parts.len() >= 32 {
                let name = parts.join(" ");
                self.mocha_title = None;
                self.named_failing(&name);
            }
            return true;
        }
        let number = format!("{}) ", self.mocha_next);
        let Some(rest) = line
            .strip_prefix("  ")
            .filter(|r| !r.starts_with(' '))
            .and_then(|r| r.strip_prefix(number.as_str()))
        else {
            return false;
        };
        self.mocha_next += 1;
        match rest.trim_end().strip_suffix(':') {
            Some(title) => self.named_failing(title),
            None => self.mocha_title = Some(vec![rest.trim().to_string()]),
        }
        true
    }
}

/// Removes terminal colour and cursor sequences (`ESC [ … letter`).
/// QUnit's command-line summary line (qunit-extras, as lodash's `node test/test` prints it):
/// `PASS: 6831  FAIL: 0  TOTAL: 6831`.
fn qunit_summary(line: &str) -> Option<TestCounts> {
    let rest = line.strip_prefix("PASS:")?;
    let (passed, rest) = rest.split_once("FAIL:")?;
    let (failed, total) = rest.split_once("TOTAL:")?;
    let (passed, failed, total) = (
        passed.trim().parse::<u64>().ok()?,
        failed.trim().parse::<u64>().ok()?,
        total.trim().parse::<u64>().ok()?,
    );
    (passed + failed == total).then_some(TestCounts {
        passed,
        failed,
        ..TestCounts::default()
    })
}

/// A hand-written test runner's count line (acorn's `test/run.js`: `Normal parser: 3532
/// tests run in 247ms; all passed.`, `Total: 13541 tests run in 553ms; 3 failures.`): N
/// tests run (ran, executed, completed), after nothing or a label ending in a colon, then
/// `all passed` or how many failed; whether its label is `Total:`. Read only where no
/// runner this knows printed its own summary.
fn own_runner_count(line: &str) -> Option<(bool, TestCounts)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.windows(3).position(|w| {
        w[0].parse::<u64>().is_ok()
            && matches!(w[1], "test" | "tests")
            && matches!(
                w[2].trim_end_matches([',', ';', '.', ':']),
                "run" | "ran" | "executed" | "completed"
            )
    })?;
    let label = words[..at].join(" ");
    if !(label.is_empty() || label.ends_with(':')) {
        return None;
    }
    let n: u64 = words[at].parse().ok()?;
    let rest = words[at + 3..].join(" ").to_ascii_lowercase();
    let failed = if rest.contains("all passed") || rest.contains("all pass") {
        0
    } else {
        let rest: Vec<&str> = rest.split_whitespace().collect();
        rest.windows(2).find_map(|w| {
            let word = w[1].trim_end_matches([',', ';', '.', ':', ')']);
            matches!(word, "failure" | "failures" | "failed")
                .then(|| w[0].trim_start_matches('(').parse::<u64>().ok())
                .flatten()
        })?
    };
    (failed <= n).then(|| {
        (
            label.eq_ignore_ascii_case("total:"),
            TestCounts {
                passed: n - failed,
                failed,
                ..TestCounts::default()
            },
        )
    })
}

/// A line a script printed when pnpm runs several together (`pnpm run /^test:/`, `pnpm -r
/// test`), without pnpm's prefix: the folder (`.` for the root, else a path), the script,
/// a colon (`. test:coverage: ℹ pass 79`, nanoid's). Any other line as it is.
fn without_pnpm_prefix(line: &str) -> &str {
    let Some((dir, rest)) = line.split_once(' ') else {
        return line;
    };
    if !(dir == "." || dir.contains('/')) || dir.contains(':') {
        return line;
    }
    let (script, after) = rest.split_once(' ').unwrap_or((rest, ""));
    let Some(name) = script.strip_suffix(':') else {
        return line;
    };
    let named = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ':' | '-' | '_' | '.' | '/' | '@'));
    if named { after } else { line }
}

pub(crate) fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// pytest's closing line: `= 1 failed, 2 passed, 1 skipped, 3 warnings in 0.12s =`, with
/// or without the `=` rule; `no tests ran in 0.01s`; before pytest 5.1, `in 0.12 seconds`.
fn pytest_summary(line: &str) -> Option<TestCounts> {
    let inner = line.trim().trim_matches('=').trim();
    let (items, time) = inner.rsplit_once(" in ")?;
    // `in 0.12s` (pytest 5.1 and later), `in 0.12 seconds` (before).
    let mut words = time.split_whitespace();
    let first = words.next()?;
    let seconds = match first.strip_suffix('s') {
        Some(seconds) => seconds,
        None if words.next() == Some("seconds") => first,
        None => return None,
    };
    if seconds.parse::<f64>().is_err() {
        return None;
    }
    let mut counts = TestCounts::default();
    if items.trim() == "no tests ran" {
        return Some(counts);
    }
    for item in items.split(", ") {
        let (n, word) = item.trim().split_once(' ')?;
        let n: u64 = n.parse().ok()?;
        // Subtests (pytest 9's own, and the pytest-subtests plugin): `12 subtests passed`
        // beside the tests that hold them (counted already). One that failed or erred is
        // counted, so a failure is never hidden; the rest add nothing.
        if let Some(word) = word.strip_prefix("subtests ") {
            match word {
                "failed" => counts.failed += n,
                "error" | "errors" => counts.errors += n,
                "passed" | "skipped" | "xfailed" | "xpassed" | "xfail" | "xpass" => {}
                _ => return None,
            }
            continue;
        }
        match word {
            "passed" | "xpassed" => counts.passed += n,
            "failed" => counts.failed += n,
            "skipped" | "xfailed" => counts.skipped += n,
            "error" | "errors" => counts.errors += n,
            "deselected" | "warning" | "warnings" | "pytest-warnings" | "rerun" | "reruns" => {}
            _ => return None,
        }
    }
    Some(counts)
}

/// Whether a pytest short-summary line's rest names a test or a file (`tests/t.py::test_a`
/// and its reason, `tests/t.py`, `pkg/mod.py::pkg.mod.func` for a doctest): its first word
/// is a node id.
fn pytest_node(rest: &str) -> bool {
    // A captured log record (`ERROR    hypercorn.error:logging.py:115 Error in ASGI
    // Framework`, pytest's `live log`/`Captured log` lines) is its level padded to eight,
    // then `logger:file.py:line`: no node, though it names a `.py` file.
    if rest.starts_with(char::is_whitespace) {
        return false;
    }
    let first = rest.split_whitespace().next().unwrap_or("");
    let file = first.find(".py").map(|at| &first[at + ".py".len()..]);
    !first.starts_with('(')
        && (first.contains("::")
            || file.is_some_and(|after| after.is_empty() || after.starts_with('[')))
}

/// Whether a unittest (or nose, or Django) failure header's rest names a test in unittest's
/// shape: `test_a (pkg.TestX)`, `test_a (pkg.TestX.test_a) (i=1)` for a subtest,
/// `setUpClass (pkg.TestX)`, nose's `Doctest: pkg.func` and `Failure: ImportError (No module
/// named x)`.
fn unittest_header(rest: &str) -> bool {
    if rest.starts_with("Doctest: ") || rest.starts_with("Failure: ") {
        return true;
    }
    let Some((method, after)) = rest.split_once(" (") else {
        return false;
    };
    let path = after.split_once(')').map_or("", |(p, _)| p);
    !method.is_empty()
        && !method.contains(char::is_whitespace)
        && !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

/// The test method an unittest `ERROR:` header names (`test_x (pkg.TestX.test_x)`, before
/// Python 3.11 `test_x (pkg.TestX)`, with a subTest's `(i=1)` after it); None for a class
/// or module fixture (`setUpClass (pkg.TestX)`) and for a module that did not import
/// (`test_x (unittest.loader._FailedTest...)`): those are no test's own failure.
fn unittest_error_method(header: &str) -> Option<String> {
    let (method, rest) = header.split_once(" (")?;
    let fixture = matches!(
        method,
        "setUpClass" | "tearDownClass" | "setUpModule" | "tearDownModule"
    );
    let identifier = !method.is_empty() && method.chars().all(|c| c.is_alphanumeric() || c == '_');
    (identifier && !fixture && !rest.starts_with("unittest.loader.")).then(|| method.to_string())
}

/// The function of a traceback frame line (`File "/work/t.py", line 8, in test_x`).
fn traceback_frame_function(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("File \"")?;
    let (_, function) = rest.rsplit_once(", in ")?;
    Some(function.trim())
}

/// unittest's result line after `Ran N tests`: `OK`, `OK (skipped=1)`, `FAILED (failures=1,
/// errors=2, skipped=1, expected failures=1, unexpected successes=1)`; nose's names its
/// error classes in capitals (`OK (SKIP=2)`, `FAILED (SKIP=1, DEPRECATED=1, errors=1)`).
fn unittest_result(line: &str, ran: u64) -> Option<TestCounts> {
    let details = if line == "OK" || line == "FAILED" {
        ""
    } else {
        let (head, rest) = line.split_once(" (")?;
        if head != "OK" && head != "FAILED" {
            return None;
        }
        rest.strip_suffix(')')?
    };
    let mut counts = TestCounts::default();
    let mut not_passed = 0;
    for item in details.split(", ").filter(|s| !s.is_empty()) {
        let (key, n) = item.split_once('=')?;
        let n: u64 = n.parse().ok()?;
        match key {
            "failures" | "unexpected successes" => counts.failed += n,
            "errors" => counts.errors += n,
            "skipped" | "expected failures" | "SKIP" | "DEPRECATED" => counts.skipped += n,
            _ => return None,
        }
        not_passed += n;
    }
    counts.passed = ran.saturating_sub(not_passed);
    Some(counts)
}

/// libtest's `test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 2 filtered out;
/// finished in 0.00s`.
fn libtest_summary(line: &str) -> Option<TestCounts> {
    let rest = line.trim().strip_prefix("test result: ")?;
    let (_, items) = rest.split_once(". ")?;
    let mut counts = TestCounts::default();
    for item in items.split(';') {
        let mut words = item.split_whitespace();
        let (Some(n), Some(word)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        match word {
            "passed" => counts.passed += n,
            "failed" => counts.failed += n,
            "ignored" => counts.skipped += n,
            _ => {}
        }
    }
    Some(counts)
}

/// jest: `Tests:       1 failed, 1 skipped, 2 passed, 4 total` (after `Tests:`).
fn jest_summary(rest: &str) -> TestCounts {
    let mut counts = TestCounts::default();
    for part in rest.split(',') {
        let mut words = part.split_whitespace();
        let (Some(n), Some(word)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        match word {
            "passed" => counts.passed += n,
            "failed" => counts.failed += n,
            "skipped" | "todo" | "pending" => counts.skipped += n,
            _ => {}
        }
    }
    counts
}

/// vitest: `Tests  1 failed | 2 passed | 1 skipped (4)` (after `Tests `).
fn vitest_summary(rest: &str) -> TestCounts {
    let mut counts = TestCounts::default();
    let body = rest.split('(').next().unwrap_or_default();
    for part in body.split('|') {
        let mut words = part.split_whitespace();
        let (Some(n), Some(word)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        match word {
            "passed" => counts.passed += n,
            "failed" => counts.failed += n,
            "skipped" | "todo" => counts.skipped += n,
            _ => {}
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(language: Language, output: &str) -> Option<TestCounts> {
        finish(language, output).0
    }

    fn finish(language: Language, output: &str) -> (Option<TestCounts>, Vec<String>) {
        let mut t = Tally::new(language);
        // In awkward chunks: a summary split across reads is still read.
        for chunk in output.as_bytes().chunks(7) {
            t.push(chunk);
        }
        t.finish()
    }

    fn failing(language: Language, output: &str) -> Vec<String> {
        finish(language, output).1
    }

    #[test]
    fn the_failing_tests_are_named_as_each_runner_names_them() {
        use Language::{Go, Node, Python, Rust};
        let pytest = "tests/t.py::test_a FAILED\n=== short test summary info ===\n\
            FAILED tests/t.py::test_a - assert 1 == 2\nFAILED tests/t.py::test_b[x-1]\n\
            ERROR tests/u.py - ImportError: nope\n= 2 failed, 3 passed, 1 error in 0.1s =\n";
        assert_eq!(
            failing(Python, pytest),
            [
                "tests/t.py::test_a",
                "tests/t.py::test_b[x-1]",
                "tests/u.py"
            ]
        );
        // pytest 3 (a project resolved as of 2019): `FAIL`, with its parameters' ids.
        let pytest3 = "=== short test summary info ===\nFAIL tests/t.py::test_c[hg: abort: 404]\n\
            === 1 failed, 257 passed, 1 warnings in 3.39 seconds ===\n";
        assert_eq!(
            failing(Python, pytest3),
            ["tests/t.py::test_c[hg: abort: 404]"]
        );
        let unittest = "FAIL: test_a (pkg.test_x.TestX.test_a)\n----\nERROR: test_b (pkg.test_x.TestX)\n\
            Ran 3 tests in 0.01s\nFAILED (failures=1, errors=1)\n";
        assert_eq!(
            failing(Python, unittest),
            [
                "test_a (pkg.test_x.TestX.test_a)",
                "test_b (pkg.test_x.TestX)"
            ]
        );
        // luigi's tests log to stderr: its log lines name no test (they held pids, and
        // every run's looked new); nor do the log records pytest captures (urllib3's test
        // servers log their errors).
        let logged = "ERROR: [pid 5280] Worker X failed    FailingTask(param=a)\n\
            ERROR: Task FailTask() failed (see log)\nFAIL: 3 of 4 tasks\n\
            ERROR [pid 7] Worker 1 failed\nFAILED to connect to the scheduler\n\
            FAIL: test_a (pkg.test_x.TestX) (i=1)\nERROR: setUpClass (pkg.test_x.TestY)\n\
            ERROR: Failure: ImportError (No module named x)\n\
            ERROR    hypercorn.error:logging.py:115 Error in ASGI Framework\n\
            ERROR    dummyserver.app:app.py:1145 Exception on request GET /certificate\n\
            ERROR pkg.server:server.py:12 refused\n\
            ===== 1 failed, 1 error in 0.2s =====\n";
        assert_eq!(
            failing(Python, logged),
            [
                "test_a (pkg.test_x.TestX) (i=1)",
                "setUpClass (pkg.test_x.TestY)",
                "Failure: ImportError (No module named x)"
            ]
        );
        let libtest = "test a::ok ... ok\ntest a::bad ... FAILED\n\
            test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert_eq!(failing(Rust, libtest), ["a::bad"]);
        let go = "--- FAIL: TestA (0.00s)\n    --- FAIL: TestA/sub (0.00s)\nFAIL\n\
            FAIL\texample.com/m/a\t0.01s\n--- FAIL: TestA (0.00s)\nFAIL\texample.com/m/b\t0.01s\n";
        assert_eq!(
            failing(Go, go),
            ["example.com/m/a.TestA", "example.com/m/b.TestA"],
            "top-level tests only, by package"
        );
        let tap = "ok 1 - a.js\nnot ok 2 - b.js # time=1ms\nok 3 - c.js # SKIP\n";
        assert_eq!(failing(Node, tap), ["b.js"]);
        // jest 29 and vitest 2, as they print a failing test, a nested one, a top-level one
        // and a file that does not load (captured from real runs, messages shortened).
        let jest = "FAIL j/a.test.js\n  \u{25cf} Sum \u{203a} adds 1 + 2\n\n    expect(received).toBe(expected)\n\n\
            \x20 \u{25cf} Sum \u{203a} nested \u{203a} deep fails\n\n    boom\n\n  \u{25cf} top level fails\n\n\
            FAIL j/b.test.js\n  \u{25cf} Test suite failed to run\n\n    Cannot find module './nonexistent'\n\n\
            Summary of all failing tests\nFAIL j/a.test.js\n  \u{25cf} Sum \u{203a} adds 1 + 2\n\n\
            Test Suites: 2 failed, 2 total\nTests:       3 failed, 1 passed, 4 total\n";
        assert_eq!(
            failing(Node, jest),
            [
                "j/a.test.js \u{203a} Sum \u{203a} adds 1 + 2",
                "j/a.test.js \u{203a} Sum \u{203a} nested \u{203a} deep fails",
                "j/a.test.js \u{203a} top level fails",
                "j/b.test.js"
            ],
            "each failure once, the repeated summary read as a repeat"
        );
        let vitest = " RUN  v2.1.9 /tmp/v\n\n \u{276f} a.test.js (4 tests | 3 failed) 9ms\n   \u{d7} Sum > adds 1 + 2 7ms\n\
            \x20    \u{2192} expected 3 to be 4\n\n\u{23af}\u{23af} Failed Suites 1 \u{23af}\u{23af}\n\n\
            \x20FAIL  b.test.js [ b.test.js ]\nError: Failed to load url ./nonexistent.js\n\n\
            \u{23af}\u{23af} Failed Tests 3 \u{23af}\u{23af}\n\n FAIL  a.test.js > Sum > adds 1 + 2\n\
            AssertionError: expected 3 to be 4\n\n FAIL  |unit| a.test.js > Sum > nested > deep fails\nError: boom\n\n\
            \x20FAIL  a.test.js > top level fails\n\
            \x1b[41m\x1b[1m FAIL \x1b[22m\x1b[49m \x1b[30m\x1b[45m e2e \x1b[49m\x1b[39m e2e/x.spec.ts\x1b[2m > \x1b[22mopens\n\n Test Files  2 failed (2)\n      Tests  3 failed | 1 passed (4)\n";
        assert_eq!(
            failing(Node, vitest),
            [
                "b.test.js",
                "a.test.js > Sum > adds 1 + 2",
                "a.test.js > Sum > nested > deep fails",
                "a.test.js > top level fails",
                "e2e/x.spec.ts > opens"
            ]
        );
        assert_eq!(tally(Node, vitest), c(1, 3, 0, 0));
        // A name as often as the runner says it: unittest names tests by their docstrings,
        // which two tests can share.
        let docstrings = "======================================================================\nFAIL: Test stripping of ANSI escape codes\n----\n======================================================================\nFAIL: Test stripping of ANSI escape codes\nRan 2 tests in 0.1s\nFAILED (failures=2)\n";
        assert_eq!(failing(Python, docstrings).len(), 2);
    }

    fn c(passed: u64, failed: u64, skipped: u64, errors: u64) -> Option<TestCounts> {
        Some(TestCounts {
            passed,
            failed,
            skipped,
            errors,
        })
    }

    #[test]
    fn pytest_summaries_in_every_shape() {
        use Language::Python;
        assert_eq!(
            tally(Python, ".F.s\n1 failed, 2 passed, 1 skipped in 0.12s\n"),
            c(2, 1, 1, 0)
        );
        assert_eq!(
            tally(
                Python,
                "==== 1 passed, 3 warnings, 2 deselected in 65.10s (0:01:05) ====\n"
            ),
            c(1, 0, 0, 0)
        );
        assert_eq!(tally(Python, "s\n1 skipped in 0.01s\n"), c(0, 0, 1, 0));
        // pytest before 5.1 (a 2017 project resolved as of its time runs pytest 3)
        assert_eq!(
            tally(
                Python,
                "=== 1 failed, 4 passed, 2 pytest-warnings in 0.31 seconds ===\n"
            ),
            c(4, 1, 0, 0)
        );
        assert_eq!(tally(Python, "\nno tests ran in 0.01s\n"), c(0, 0, 0, 0));
        assert_eq!(
            tally(Python, "1 xfailed, 1 xpassed, 1 error in 0.2s"),
            c(1, 0, 1, 1)
        );
        // Coloured output, and a test that prints something summary-like earlier: the last
        // summary wins.
        assert_eq!(
            tally(
                Python,
                "3 passed in 1.0s\n\u{1b}[31m\u{1b}[1m1 failed\u{1b}[0m, \u{1b}[32m1 passed\u{1b}[0m\u{1b}[31m in 0.05s\u{1b}[0m\n"
            ),
            c(1, 1, 0, 0)
        );
        assert_eq!(tally(Python, "all good\n"), None, "no runner summary");
        assert_eq!(tally(Python, "it ran 3 things in 2s\n"), None);
        // Subtests (pytest 9, pytest-subtests; jd/tenacity's 172 tests were "no summary"):
        // the tests that hold them are counted; a subtest that failed is counted too.
        assert_eq!(
            tally(Python, "172 passed, 12 subtests passed in 2.94s\n"),
            c(172, 0, 0, 0)
        );
        assert_eq!(
            tally(
                Python,
                "== 1 failed, 3 passed, 2 subtests failed, 5 subtests passed in 0.4s ==\n"
            ),
            c(3, 3, 0, 0)
        );
    }

    #[test]
    fn unittest_summaries() {
        use Language::Python;
        assert_eq!(
            tally(
                Python,
                "...\n-------\nRan 4 tests in 0.001s\n\nOK (skipped=1)\n"
            ),
            c(3, 0, 1, 0)
        );
        assert_eq!(
            tally(
                Python,
                "Ran 5 tests in 0.002s\n\nFAILED (failures=1, errors=1, expected failures=1)\n"
            ),
            c(2, 1, 1, 1)
        );
        assert_eq!(
            tally(Python, "Ran 0 tests in 0.000s\n\nOK\n"),
            c(0, 0, 0, 0)
        );
        // nose (tqdm's suite of 2019): its error classes in capitals.
        assert_eq!(
            tally(
                Python,
                "Test pandas ... SKIP\nRan 36 tests in 0.180s\n\nOK (SKIP=2)\n"
            ),
            c(34, 0, 2, 0)
        );
        assert_eq!(
            tally(
                Python,
                "Ran 9 tests in 0.1s\n\nFAILED (SKIP=1, DEPRECATED=1, errors=1, failures=2)\n"
            ),
            c(4, 2, 2, 1)
        );
    }

    /// unittest reports an exception out of a test's body (the code under test raising) as
    /// an ERROR: it is that test failing, as pytest counts it. An error in setUp, a class
    /// or module fixture, or a module that did not import is not a test's failure.
    #[test]
    fn an_exception_a_unittest_test_raised_is_a_failed_test() {
        use Language::Python;
        let block = |header: &str, frame: &str| {
            format!(
                "======================================================================\nERROR: {header}\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/work/tests/test_x.py\", line 8, in {frame}\n    parse('x')\n  File \"/work/app.py\", line 2, in parse\n    raise ValueError('boom')\nValueError: boom\n\n"
            )
        };
        let out = |blocks: &[String], result: &str| {
            format!(
                "{}----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\n{result}\n",
                blocks.concat()
            )
        };
        // Python 3.11's header, and the one before it.
        for header in [
            "test_y (tests.test_x.TestX.test_y)",
            "test_y (tests.test_x.TestX)",
        ] {
            let (counts, failing) = finish(
                Python,
                &out(&[block(header, "test_y")], "FAILED (errors=1)"),
            );
            assert_eq!(counts, c(2, 1, 0, 0), "{header}");
            assert_eq!(failing, [header]);
        }
        // setUp raised: the test did not run to a verdict.
        assert_eq!(
            tally(
                Python,
                &out(
                    &[block("test_y (tests.test_x.TestX.test_y)", "setUp")],
                    "FAILED (errors=1)"
                )
            ),
            c(2, 0, 0, 1)
        );
        // A class fixture, and a module that did not import (whose frame names no test).
        assert_eq!(
            tally(
                Python,
                &out(
                    &[
                        block("setUpClass (tests.test_x.TestX)", "setUpClass"),
                        block("test_x (unittest.loader._FailedTest.test_x)", "test_x"),
                    ],
                    "FAILED (errors=2)"
                )
            ),
            c(1, 0, 0, 2)
        );
        // With a failure beside it.
        assert_eq!(
            tally(
                Python,
                &out(
                    &[block("test_y (tests.test_x.TestX.test_y)", "test_y")],
                    "FAILED (failures=1, errors=1)"
                )
            ),
            c(1, 2, 0, 0)
        );
    }

    #[test]
    fn libtest_results_are_summed_over_binaries() {
        let out = "running 2 tests\ntest a ... ok\ntest b ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 3 filtered out; finished in 0.00s\n\nrunning 1 test\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n";
        assert_eq!(tally(Language::Rust, out), c(2, 1, 1, 0));
        assert_eq!(
            tally(
                Language::Rust,
                "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 5 filtered out"
            ),
            c(0, 0, 0, 0)
        );
        assert_eq!(tally(Language::Rust, "error: could not compile\n"), None);
    }

    #[test]
    fn go_counts_top_level_tests_only() {
        let out = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n=== RUN   TestB/sub\n    --- FAIL: TestB/sub (0.00s)\n--- FAIL: TestB (0.00s)\n=== RUN   TestC\n    x_test.go:9: skipped\n--- SKIP: TestC (0.00s)\nFAIL\nFAIL\texample.com/m\t0.003s\n";
        assert_eq!(tally(Language::Go, out), c(1, 1, 1, 0));
        // A test that runs a suite of its own and expects its failures (testify's suite
        // tests): the inner suite's lines at the margin are not the package's tests.
        let nested = "=== RUN   TestSuiteWithStats\n=== RUN   TestSuiteWithStats/inner/TestPanic\n--- FAIL: TestSuiteWithStats/inner (0.00s)\n    --- FAIL: TestSuiteWithStats/inner/TestPanic (0.00s)\n--- PASS: TestSuiteWithStats (0.00s)\n--- FAIL: signature validation (0.00s)\n--- PASS: TestOther (0.00s)\nPASS\nok  \texample.com/suite\t0.01s\n";
        assert_eq!(tally(Language::Go, nested), c(2, 0, 0, 0));
        // Its inner tests can have plain names: the package's `ok` says none of them is one
        // of its tests that failed (testify's TestSuiteRecoverPanicInBeforeTest).
        let plain = "=== RUN   TestSuiteRecoverPanic\n--- FAIL: TestSuiteRecoverPanicInBeforeTest (0.00s)\n--- PASS: TestSuiteRecoverPanic (0.00s)\nPASS\nok  \texample.com/suite\t0.01s\n--- FAIL: TestReal (0.00s)\nFAIL\nFAIL\texample.com/other\t0.01s\n";
        assert_eq!(tally(Language::Go, plain), c(1, 1, 0, 0));
        assert_eq!(failing(Language::Go, plain), ["example.com/other.TestReal"]);
        assert_eq!(
            tally(
                Language::Go,
                "testing: warning: no tests to run\nPASS\nok  \texample.com/m\t0.002s [no tests to run]\n"
            ),
            c(0, 0, 0, 0)
        );
        assert_eq!(
            tally(Language::Go, "# example.com/m\n./a.go:3: syntax error\n"),
            None
        );
    }

    /// mocha 10.8.2's own output (src/testdata, from a run of four failures: a top-level
    /// test, a test in a suite, one in a nested suite, a suite's `before all` hook), by
    /// the spec reporter plain and coloured, and by the dot reporter.
    #[test]
    fn mochas_failures_are_named_by_their_full_titles() {
        let names = [
            "top level fails",
            "supports fetch with nodejs should handle 404",
            "supports fetch with nodejs nested throws an error",
            "other \"before all\" hook for \"never\"",
        ];
        for output in [
            include_str!("testdata/mocha-spec.txt"),
            include_str!("testdata/mocha-spec-colour.txt"),
            include_str!("testdata/mocha-dot.txt"),
        ] {
            let (counts, failing) = finish(Language::Node, output);
            assert_eq!(counts, c(1, 4, 1, 0));
            assert_eq!(failing, names);
        }
        // The progress lines before the summary (`  2) should handle 404`) name nothing,
        // and a number out of order (a message's `  1) …`) is no failure of the list.
        let out = "  1) a\n\n  0 passing\n  1 failing\n\n  1) suite\n       test:\n     Error: x\n  1) not a test:\n";
        assert_eq!(failing(Language::Node, out), ["suite test"]);
    }

    #[test]
    fn node_tap_jest_mocha_and_vitest() {
        use Language::Node;
        let tap = "TAP version 13\nok 1 - a\nok 2 - b # SKIP\nnot ok 3 - c\n1..3\n# tests 3\n# suites 0\n# pass 1\n# fail 1\n# cancelled 0\n# skipped 1\n# todo 0\n# duration_ms 12.5\n";
        assert_eq!(tally(Node, tap), c(1, 1, 1, 0));
        // node-tap's own reporter: no summary lines, one top-level point per test file
        // (the subtests' points are indented).
        let node_tap = "TAP version 13\n# Subtest: test/a.js\n    ok 1 - parses\n    not ok 2 - nested failure the file reports itself\n    1..2\nnot ok 1 - test/a.js # time=20ms\nok 2 - test/b.js # time=12.5ms\nok 3 - test/c.js # SKIP no browser\n\n1..3\n# time=80ms\n";
        assert_eq!(tally(Node, node_tap), c(1, 1, 1, 0));
        assert_eq!(
            tally(
                Node,
                "Test Suites: 1 failed, 1 total\nTests:       1 failed, 1 skipped, 2 passed, 4 total\n"
            ),
            c(2, 1, 1, 0)
        );
        assert_eq!(
            tally(Node, "\n  3 passing (10ms)\n  2 pending\n  1 failing\n"),
            c(3, 1, 2, 0)
        );
        assert_eq!(
            tally(
                Node,
                " Test Files  1 failed (1)\n      Tests  1 failed | 2 passed | 1 skipped (4)\n"
            ),
            c(2, 1, 1, 0)
        );
        assert_eq!(tally(Node, "SyntaxError: Unexpected token\n"), None);
        // node --test's spec reporter (Node 22's, `--test-reporter=spec`).
        let spec = "✔ a (0.5ms)\n✖ b (1.1ms)\n﹣ c (0.1ms) # SKIP\n✔ d (0.09ms) # TODO\nℹ tests 4\nℹ suites 0\nℹ pass 1\nℹ fail 1\nℹ cancelled 0\nℹ skipped 1\nℹ todo 1\nℹ duration_ms 123.3\n\n✖ failing tests:\n\ntest at t.test.js:4:1\n✖ b (1.1ms)\n";
        assert_eq!(tally(Node, spec), c(1, 1, 2, 0));
    }

    /// ava prints no TAP and no mocha lines: chalk's `c8 ava` passed 32 tests and the run
    /// said "the test runner printed no summary". Its closing lines are read (ava 3.15 and
    /// 6.1, from their reporters), and where a test failed, which leaves the passes out of
    /// them, its `✔` lines are counted.
    #[test]
    fn avas_closing_lines_are_its_counts() {
        use Language::Node;
        let passed = "\n  ✔ chalk › style string\n  ✔ level › propagate (173ms)\n  ─\n\n  32 tests passed\n  2 tests skipped\n  1 test todo\n";
        assert_eq!(tally(Node, passed), c(32, 0, 3, 0));
        // ava 6: a failure leaves the passes out of the closing lines.
        let failed = "  ✔ a › one\n  ✔ a › two\n  ✘ [fail]: a › three Expected values to be strictly equal\n  ✔ [expected fail] a › four\n  ─\n\n  a › three\n\n  a.js:5\n\n  ─\n\n  1 test failed\n  1 known failure\n  1 uncaught exception\n";
        assert_eq!(tally(Node, failed), c(2, 1, 1, 1));
        // Its failing test is named by its title alone, which its details repeat.
        assert_eq!(failing(Node, failed), ["a › three"]);
        // sindresorhus/ky: two failures whose titles share their start.
        let ky = "  ✘ [fail]: browser › firefox - prefix option Rejected promise returned by test\n  ✘ [fail]: browser › firefox - prefix Rejected promise returned by test\n  ─\n\n  browser › firefox - prefix\n\n  Rejected promise returned by test.\n\n  browser › firefox - prefix option\n\n  Rejected promise returned by test.\n\n  ─\n\n  2 tests failed\n";
        assert_eq!(
            failing(Node, ky),
            [
                "browser › firefox - prefix option",
                "browser › firefox - prefix"
            ]
        );
        // ava 3's cross.
        let ava3 = "  ✔ b › one\n  ✖ b › two failed\n  ─\n\n  1 test failed\n";
        assert_eq!(tally(Node, ava3), c(1, 1, 0, 0));
    }

    /// pnpm running several scripts together prefixes each line with the folder and the
    /// script (nanoid's `pnpm run /^test:/`): node's spec summary is read through it.
    #[test]
    fn a_scripts_lines_are_read_through_pnpms_prefix() {
        use Language::Node;
        let nanoid = ". test:coverage$ bnt --coverage 100\n. test:lint: Found 0 warnings and 0 errors.\n. test:coverage:   ✔ prints unique ID (89.8ms)\n. test:coverage: ℹ tests 79\n. test:coverage: ℹ pass 78\n. test:coverage: ℹ fail 1\n. test:coverage: ℹ skipped 0\n. test:coverage:\n. test:size: Done\n";
        assert_eq!(tally(Node, nanoid), c(78, 1, 0, 0));
        // A workspace package's, by its folder.
        let member = "packages/a test: # pass 3\npackages/a test: # fail 0\n";
        assert_eq!(tally(Node, member), c(3, 0, 0, 0));
        // Not a prefix: a word that is no folder, or no script before the colon.
        assert_eq!(tally(Node, "ok test: # pass 3\n"), None);
    }

    /// lodash's `npm test` runs QUnit twice through qunit-extras, which prints neither TAP
    /// nor mocha lines: 7158 tests passed and the run said "the test runner printed no
    /// summary". Its summary lines are read, summed over the suites.
    #[test]
    fn qunits_summary_lines_are_its_counts() {
        use Language::Node;
        let lodash = "Running lodash tests.\nPlease wait..\n----------------------------------------\n    PASS: 6831  FAIL: 0  TOTAL: 6831\n    Finished in 20963 milliseconds.\n----------------------------------------\n\n> lodash@4.18.1 test:fp\nRunning lodash/fp tests.\n----------------------------------------\n    PASS: 325  FAIL: 2  TOTAL: 327\n";
        assert_eq!(tally(Node, lodash), c(7156, 2, 0, 0));
        // Not a summary: counts that do not add up, or words after them.
        assert_eq!(tally(Node, "PASS: 3  FAIL: 1  TOTAL: 9\n"), None);
    }

    /// hapijs/joi's `lab -t 100 -a @hapi/code -L -Y` passed 1818 tests and the record said
    /// the runner printed no summary. @hapi/lab's closing lines are its counts (those left
    /// out of its total as skipped), its `Failed tests:` list its failures by title, its
    /// test script errors errors; a count line without `Test duration:` after it is none.
    #[test]
    fn hapi_labs_closing_lines_are_its_counts() {
        use Language::Node;
        let counts = |passed, failed, skipped, errors| {
            Some(TestCounts {
                passed,
                failed,
                skipped,
                errors,
            })
        };
        let joi = "\n  ..................\n\n1818 tests complete\nTest duration: 7720 ms\nAssertions count: 48073 (verbosity: 26.44)\nLeaks: No issues\nCoverage: 100.00%\n";
        assert_eq!(tally(Node, joi), counts(1818, 0, 0, 0));
        let failed = "  ..x.-\n\nFailed tests:\n\n  3) any.validate() rejects a bad value:\n\n      actual expected\n\n      12\n\n      Expected 1 to equal specified value: 2\n\n      at /work/test/any.js:12:7\n\n  41) string.min() counts characters:\n\n      boom\n\n\n2 of 40 tests failed (3 skipped)\nTest duration: 12 ms\nThere were 1 test script error(s).\n";
        let (got, names) = finish(Node, failed);
        assert_eq!(got, counts(38, 2, 3, 1));
        assert_eq!(
            names,
            [
                "any.validate() rejects a bad value",
                "string.min() counts characters"
            ]
        );
        for prose in [
            "3 tests complete\nand then some\n",
            "2 of 1 tests failed\nTest duration: 3 ms\n",
            "5 tests complete (soon)\nTest duration: 3 ms\n",
        ] {
            assert_eq!(tally(Node, prose), None, "{prose}");
        }
    }

    /// acorn's `npm test` runs its own `test/run.js`, which prints a count line per parser
    /// mode and a total: 13541 tests passed and the record said the runner printed no
    /// summary. The totals are its counts (summed where the suite ran it twice, its
    /// `prepare` script being `npm run test`), the lines before a total its parts.
    #[test]
    fn a_hand_written_runners_count_lines_are_its_counts() {
        use Language::Node;
        let acorn = "Stats\n  Normal parser: 3532 tests run in 247ms; all passed.\n  Loose parser: 3509 tests run in 175ms; all passed.\n  Total: 7041 tests run in 422ms; all passed.\n";
        assert_eq!(tally(Node, acorn), c(7041, 0, 0, 0));
        let twice = format!(
            "{acorn}{}",
            acorn
                .replace(
                    "3509 tests run in 175ms; all passed",
                    "3509 tests run in 175ms; 2 failures"
                )
                .replace(
                    "7041 tests run in 422ms; all passed",
                    "7041 tests run in 422ms; 2 failures"
                )
        );
        assert_eq!(tally(Node, &twice), c(14080, 2, 0, 0));
        // No total: the lines add up.
        assert_eq!(
            tally(
                Node,
                "unit: 10 tests ran, 1 failed\nlint: 4 tests ran; all passed\n"
            ),
            c(13, 1, 0, 0)
        );
        // Not a count line: prose around the words, no verdict, more failures than tests.
        for line in [
            "we have 3 tests run nightly; all passed.\n",
            "Total: 5 tests run in 2ms\n",
            "Total: 2 tests run; 3 failures\n",
        ] {
            assert_eq!(tally(Node, line), None, "{line}");
        }
        // A runner this knows wins over such a line.
        assert_eq!(
            tally(Node, "Total: 9 tests run; all passed.\n  3 passing (1s)\n"),
            c(3, 0, 0, 0)
        );
    }

    /// postcss's unit tests run under uvu (through c8, behind pnpm's prefix): 686 passed,
    /// and the record said the runner printed no summary. uvu's closing lines are read,
    /// summed over its runs; a `Total:` without `Passed:` after it is no test's.
    #[test]
    fn uvus_closing_lines_are_its_counts() {
        use Language::Node;
        let postcss = ". test:coverage: warning.test.ts\n. test:coverage: \u{2022} \u{2022}   (22 / 22)\n. test:coverage: \n. test:coverage:   Total:     686\n. test:coverage:   Passed:    686\n. test:coverage:   Skipped:   0\n. test:coverage:   Duration:  450.51ms\n";
        assert_eq!(tally(Node, postcss), c(686, 0, 0, 0));
        let two = "  Total:     10\n  Passed:    9\n  Skipped:   2\n  Duration:  1ms\n\n  Total:     5\n  Passed:    5\n  Skipped:   0\n";
        assert_eq!(tally(Node, two), c(14, 1, 2, 0));
        assert_eq!(
            tally(Node, "Total: 12 kB\nTotal:    40\nSize: 3 kB\n"),
            None
        );
    }

    /// vue's suite is the two test scripts its CI runs, each a vitest run with its own
    /// summary; a tox env may run pytest twice. Each run's summary adds to the ones
    /// before it, as the runs' tests do (the last one alone was read: vue's e2e counts
    /// would have stood for its 3675 unit tests too).
    #[test]
    fn the_summaries_of_several_runs_in_one_suite_add_up() {
        use Language::{Node, Python};
        let vitest = " Test Files  200 passed (200)\n      Tests  3674 passed | 1 failed | 6 skipped (3681)\n\n> node scripts/build.js vue\n Test Files  10 passed (10)\n      Tests  105 passed (105)\n";
        assert_eq!(tally(Node, vitest), c(3779, 1, 6, 0));
        let jest = "Tests:       2 passed, 2 total\nTests:       1 failed, 3 passed, 4 total\n";
        assert_eq!(tally(Node, jest), c(5, 1, 0, 0));
        let mocha = "  3 passing (10ms)\n  1 pending\n\n  4 passing (5ms)\n  1 failing\n";
        assert_eq!(tally(Node, mocha), c(7, 1, 1, 0));
        let tap = "# pass 2\n# fail 0\n# skipped 1\n# pass 3\n# fail 1\n";
        assert_eq!(tally(Node, tap), c(5, 1, 1, 0));
        let pytest = "===== test session starts =====\n===== 10 passed, 1 skipped in 1.2s =====\n===== test session starts =====\n===== 1 failed, 4 passed in 0.5s =====\n";
        assert_eq!(tally(Python, pytest), c(14, 1, 1, 0));
        let unittest = "Ran 3 tests in 0.1s\n\nOK\nRan 2 tests in 0.1s\n\nFAILED (failures=1)\n";
        assert_eq!(tally(Python, unittest), c(4, 1, 0, 0));
    }

    #[test]
    fn an_endless_line_costs_bounded_memory() {
        let mut t = Tally::new(Language::Python);
        for _ in 0..1000 {
            t.push(&[b'x'; 1000]);
        }
        assert!(t.line.len() <= MAX_LINE);
        t.push(b"\n1 passed in 0.1s\n");
        assert_eq!(t.finish().0, c(1, 0, 0, 0));
    }
}
