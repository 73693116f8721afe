//! The record of one run — everything a reader needs to run it again and compare — and
//! the rule that turns how a run ended into its outcome.

use serde::{Deserialize, Serialize};

use crate::Language;
use crate::tally::TestCounts;
use crate::tree::TreeRecord;

/// One run, as evidence. Serialised as JSON by `proven sandbox run` and by the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run key: the job id when the run belongs to a job, else a fresh id.
    pub run_id: String,
    /// The container's name (`proven-sbx-<run_id>`).
    pub container: String,
    /// The run took a warm container from the pool (started before the run, with the same
    /// limits and hardening, used by this run alone and removed after it).
    #[serde(default)]
    pub pooled: bool,
    pub language: Language,
    /// The image as configured (a name).
    pub image: String,
    /// The interpreter or toolchain the run had and the declaration that chose it: the
    /// Python chosen among the configured images of several versions, or else the image's
    /// own toolchain with what the project declares of it (the runner's `toolchain`). None only
    /// in records written before every run named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpreter: Option<InterpreterChoice>,
    /// How the run was set up beyond its image's defaults, and why (a Go package from
    /// before modules runs in GOPATH mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
    /// The versions of the test tools the run had, read from its prepared environment: the
    /// interpreter it was made with first (`Python 3.8.18`), then the runners and their
    /// plugins (`pytest 4.6.11`, `pytest-cov 2.8.1`; `mocha 6.2.3`). Empty when nothing was
    /// prepared (the image's own tools ran).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_tools: Vec<String>,
    /// The image the container actually ran (`sha256:…`).
    pub image_id: String,
    pub tree: TreeRecord,
    /// Dependencies mounted read-only at /deps, when the tree has a lock file.
    pub dependencies: Option<DependencyRecord>,
    /// The command as run in /work (after `proven-entry`).
    pub command: Vec<String>,
    pub limits: AppliedLimits,
    /// When the container was started (RFC 3339, UTC).
    pub started_at: String,
    /// From the start request to the container's exit.
    pub duration_ms: u64,
    /// The container's exit code; `None` when Docker reported none.
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    /// Why the runner killed the container, if it did; the kernel's OOM killer counts.
    pub killed: Option<KillReason>,
    /// The run tried to start more processes than the pids limit allows.
    pub pids_limit_reached: bool,
    /// What the test runner reported (read from its summary); `None` when it printed none
    /// this sandbox reads, or the run was a plain command.
    #[serde(default)]
    pub tests: Option<TestCounts>,
    /// The tests the runner named as failing or erroring, in its own words (pytest node ids,
    /// `PKG.TestName` for go, libtest paths, TAP points). Complete only when there are as
    /// many as `tests`' failed and errored counts ([`RunRecord::failing_named`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<String>,
    /// A test run (the default), or a plain command whose exit code alone decides.
    #[serde(default)]
    pub kind: RunKind,
    pub output: OutputRecord,
    pub outcome: Outcome,
}

impl RunRecord {
    /// The tests the runner named as failing or erroring, when the names are complete: at
    /// least as many as its counts of failed and errored tests, and not cut at
    /// [`crate::tally::MAX_NAMED`]. None when they are not known (no counts, a runner that
    /// names none, or fewer names than failures).
    pub fn failing_named(&self) -> Option<&[String]> {
        let counts = self.tests?;
        let named = self.failing.len() as u64;
        (named >= counts.failed + counts.errors && self.failing.len() < crate::tally::MAX_NAMED)
            .then_some(self.failing.as_slice())
    }
}

/// The interpreter a run was given, and why (`image` is the one it names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterpreterChoice {
    /// `X.Y`
    pub version: String,
    pub image: String,
    /// The declaration that chose it, in words (`the newest Python the project names that
    /// the sandbox has: 3.8 (tox.ini envlist, setup.py classifiers); setup.py >=3.5 allows it`).
    pub because: String,
}

/// What a run is for: it decides what "passed" means.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// A test runner: it passes only when at least one test ran and every test that ran
    /// passed, as the runner's own summary says.
    #[default]
    Tests,
    /// Any command: exit 0 is a pass. Never evidence about a test.
    Command,
}

/// The dependency cache entry a run used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependencyRecord {
    /// The files that declared the dependencies (the cache key was computed from them).
    pub lock_files: Vec<String>,
    /// SHA-256 of those files (and the language, image and registries): the cache key.
    pub key: String,
    /// Whether this run prepared the entry (false: it was already cached).
    pub prepared_now: bool,
    /// The versions were resolved by the preparation, not pinned by the project (no lock
    /// file, or one that had to be resolved again).
    #[serde(default)]
    pub resolved: bool,
    /// What could not be prepared (refused, or not to be had), and why.
    #[serde(default)]
    pub not_prepared: Vec<NotPrepared>,
    /// What else a reader should know (a language version the project asks for, hosts
    /// refused on the way out).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Packages installed.
    #[serde(default)]
    pub installed: usize,
    /// Python: the key of the project layer (the project itself, installed for this tree
    /// alone over the cached environment), when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_layer: Option<String>,
    /// Node: the package manager that installed (npm, pnpm, yarn, yarn-berry), its version
    /// and the declaration that chose it (package.json `packageManager`, the lock file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_manager: Option<PackageManager>,
}

/// The package manager a Node preparation installed with, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageManager {
    /// `npm`, `pnpm`, `yarn` (1), `yarn_berry`.
    pub name: String,
    /// Its version (`9.15.0`); None when it did not say.
    #[serde(default)]
    pub version: Option<String>,
    /// The declaration that chose it, in words (`package.json packageManager
    /// "pnpm@9.15.0"`, `yarn.lock (a yarn 1 lock file)`).
    pub because: String,
}

/// A dependency the preparation did not install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotPrepared {
    /// The requirement or package, as declared.
    pub what: String,
    /// The file (and line) that declared it.
    pub source: String,
    pub reason: String,
}

/// The limits the container ran under.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AppliedLimits {
    pub memory_bytes: i64,
    pub pids: i64,
    pub cpus: f64,
    pub scratch_bytes: i64,
    pub timeout_ms: u64,
    pub output_kill_after_bytes: u64,
}

/// The output of a run (stdout and stderr interleaved as they arrived), capped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputRecord {
    /// The first bytes (lossy UTF-8).
    pub head: String,
    /// The last bytes after the head (lossy UTF-8); head then tail is the whole output
    /// when `truncated` is false.
    pub tail: String,
    /// Every byte read.
    pub bytes: u64,
    /// SHA-256 of every byte read.
    pub sha256: String,
    pub truncated: bool,
}

/// Why the runner (or the kernel) killed a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KillReason {
    Timeout,
    OutOfMemory,
    OutputLimit,
}

impl KillReason {
    pub fn as_str(self) -> &'static str {
        match self {
            KillReason::Timeout => "timeout",
            KillReason::OutOfMemory => "out_of_memory",
            KillReason::OutputLimit => "output_limit",
        }
    }
}

/// What a run shows. Only `TestFailed` can be evidence that the code under test is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    /// The test ran to its end and failed (an assertion, an exception in the code).
    TestFailed,
    /// The run says nothing about the code: killed, out of a limit, could not build or
    /// collect, or an exit the test runner's conventions do not explain.
    EnvironmentError {
        reason: String,
    },
}

impl Outcome {
    /// The bounded label value of the runs metric.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::TestFailed => "test_failed",
            Outcome::EnvironmentError { .. } => "environment_error",
        }
    }
}

/// How a container ended, as the runner saw it.
#[derive(Debug, Clone)]
pub struct Ending {
    pub exit_code: Option<i64>,
    pub killed: Option<KillReason>,
    pub pids_limit_reached: bool,
    /// The language's markers (see [`markers`]) seen anywhere in the output.
    pub markers: Vec<&'static str>,
    /// The runner's counts, when it printed a summary.
    pub tests: Option<TestCounts>,
    pub kind: RunKind,
    /// The output stream broke (or was never read to its end).
    pub stream_broken: bool,
}

// Markers looked for in the whole output (see `classify`).
const CARGO_TEST_FAILED: &str = "test result: FAILED";
const CARGO_COULD_NOT_COMPILE: &str = "could not compile";
const PYTEST_ERROR_COLLECTING: &str = "ERROR collecting";
const PYTEST_ERROR_AT_SETUP: &str = "ERROR at setup of ";
const PYTEST_ERROR_AT_TEARDOWN: &str = "ERROR at teardown of ";
const NODE_SYNTAX_ERROR: &str = "SyntaxError";
const NODE_MODULE_NOT_FOUND: &str = "ERR_MODULE_NOT_FOUND";
const NODE_CANNOT_FIND_MODULE: &str = "Cannot find module";
const JEST_SUITE_FAILED_TO_RUN: &str = "Test suite failed to run";
/// mocha's summary (`  3 passing (10ms)`): mocha loads every test file before it runs any,
/// so with its summary printed no file failed to load.
const MOCHA_SUMMARY: &str = " passing (";
const GO_TEST_FAILED: &str = "--- FAIL:";
const GO_BUILD_FAILED: &str = "[build failed]";
const GO_SETUP_FAILED: &str = "[setup failed]";
const GO_NO_TEST_FILES: &str = "[no test files]";
// Every language: the disk (a tmpfs) was full, or the entry script could not set the run up.
const ENOSPC: &str = "No space left on device";
const ENOSPC_NODE: &str = "ENOSPC";
const ENOSPC_PYTHON: &str = "[Errno 28]";
// The project needs a newer toolchain than the image has.
const GO_NEEDS_NEWER: &str = "requires go >=";
const GO_NOTE_NEEDS: &str = "note: module requires Go";
const RUST_NEEDS_NEWER: &str = "cannot be built because it requires rustc";
/// Printed by proven-entry when it cannot copy the tree or the dependencies' settings.
pub const ENTRY_FAILED: &str = "proven-entry: cannot set the run up";
// Every language: a host was looked up or a connection tried, and a test run has no network
// (getaddrinfo's words in Node, glibc's in Python and Rust, Go's resolver's).
const NET_EAI_AGAIN: &str = "EAI_AGAIN";
const NET_ENOTFOUND: &str = "getaddrinfo ENOTFOUND";
const NET_NAME_RESOLUTION: &str = "Temporary failure in name resolution";
const NET_NO_SUCH_HOST: &str = ": no such host";
const NET_UNREACHABLE: &str = "etwork is unreachable";
const NETWORK: [&str; 5] = [
    NET_EAI_AGAIN,
    NET_ENOTFOUND,
    NET_NAME_RESOLUTION,
    NET_NO_SUCH_HOST,
    NET_UNREACHABLE,
];

/// A language's markers, then every language's [`NETWORK`] markers.
macro_rules! with_network {
    ($($marker:expr),* $(,)?) => {
        &[
            $($marker,)*
            NET_EAI_AGAIN,
            NET_ENOTFOUND,
            NET_NAME_RESOLUTION,
            NET_NO_SUCH_HOST,
            NET_UNREACHABLE,
        ]
    };
}

/// The strings a language's classification looks for in the output.
pub fn markers(language: Language) -> &'static [&'static str] {
    match language {
        Language::Python => with_network![
            PYTEST_ERROR_COLLECTING,
            PYTEST_ERROR_AT_SETUP,
            PYTEST_ERROR_AT_TEARDOWN,
            ENOSPC,
            ENOSPC_PYTHON,
            ENTRY_FAILED,
        ],
        Language::Rust => with_network![
            CARGO_TEST_FAILED,
            CARGO_COULD_NOT_COMPILE,
            RUST_NEEDS_NEWER,
            ENOSPC,
            ENTRY_FAILED,
        ],
        Language::Node => with_network![
            NODE_SYNTAX_ERROR,
            NODE_MODULE_NOT_FOUND,
            NODE_CANNOT_FIND_MODULE,
            JEST_SUITE_FAILED_TO_RUN,
            MOCHA_SUMMARY,
            ENOSPC,
            ENOSPC_NODE,
            ENTRY_FAILED,
        ],
        Language::Go => with_network![
            GO_TEST_FAILED,
            GO_BUILD_FAILED,
            GO_SETUP_FAILED,
            GO_NO_TEST_FILES,
            GO_NEEDS_NEWER,
            GO_NOTE_NEEDS,
            ENOSPC,
            ENTRY_FAILED,
        ],
    }
}

/// The outcome of a run from how it ended, by the conventions of the language's test
/// runner. Conservative: when in doubt a failure is an environment error, because a false
/// `TestFailed` on the change would be a false proof.
pub fn classify(language: Language, ending: &Ending) -> Outcome {
    let env = |reason: String| Outcome::EnvironmentError { reason };
    if let Some(outcome) = ended_before_the_tests(language, ending) {
        return outcome;
    }
    let saw = |marker: &str| ending.markers.contains(&marker);
    let Some(code) = ending.exit_code else {
        return env("Docker reported no exit code".into());
    };
    if ending.kind == RunKind::Command {
        return if code == 0 {
            Outcome::Passed
        } else {
            // A plain command is never a test: its failure is no test failure.
            env(format!("the command exited {code}"))
        };
    }
    let tests = ending.tests;
    if code == 0 {
        return match tests {
            None => env("the test runner printed no summary: nothing shows that a test ran".into()),
            Some(t) if t.failed + t.errors > 0 => {
                env(format!("exit 0, but the runner reported failures ({t})"))
            }
            Some(t) if t.passed == 0 => env(format!("no test ran ({t})")),
            Some(_) => Outcome::Passed,
        };
    }
    // A failure counts only when the runner itself reported a failing test.
    let reported_failure = |outcome: Outcome| match (outcome, tests) {
        (Outcome::TestFailed, Some(t)) if t.failed > 0 => Outcome::TestFailed,
        (Outcome::TestFailed, Some(t)) => env(format!(
            "exit {code}, but the runner reported no failing test ({t})"
        )),
        (Outcome::TestFailed, None) => env(format!(
            "exit {code} without the test runner's summary: nothing shows that a test failed"
        )),
        (other, _) => other,
    };
    let outcome = reported_failure(by_exit_code(language, code, tests, &saw));
    match (outcome, NETWORK.iter().find(|m| saw(m))) {
        // An exit no failing test explains, in a run that looked a host up or dialled one: a
        // step of the suite that needs the network (pino's smoke test installs the packed
        // project from the registry), which no test run has. Said, so the record names why;
        // a failure with a cause of its own (a collection error, a file that did not load or
        // build) keeps it alone.
        (Outcome::EnvironmentError { reason }, Some(&marker))
            if reason.starts_with(&format!("exit {code}")) =>
        {
            let shown = match marker {
                NET_UNREACHABLE => "network is unreachable",
                NET_NO_SUCH_HOST => "no such host",
                m => m,
            };
            env(format!(
                "{reason}; the run needed the network, which a test run in the sandbox does not have ({shown})"
            ))
        }
        (outcome, _) => outcome,
    }
}

/// What ends a run before its tests say anything, whatever its exit code: a kill, a
/// limit, a run that could not be set up or write, a broken output stream, a toolchain
/// older than the project needs. None when the run got as far as its tests.
fn ended_before_the_tests(language: Language, ending: &Ending) -> Option<Outcome> {
    let env = |reason: String| Outcome::EnvironmentError { reason };
    if let Some(killed) = ending.killed {
        return Some(env(match killed {
            KillReason::Timeout => "killed at the timeout".into(),
            KillReason::OutOfMemory => "killed at the memory limit".into(),
            KillReason::OutputLimit => "killed at the output limit".into(),
        }));
    }
    if ending.pids_limit_reached {
        return Some(env("reached the pids limit".into()));
    }
    let saw = |marker: &str| ending.markers.contains(&marker);
    // Whatever the exit code: a run that could not write (a full scratch space), that the
    // entry script could not set up, or whose output was not read to its end says nothing
    // about the code.
    if saw(ENTRY_FAILED) {
        return Some(env("the run could not be set up (the tree or the dependencies did not fit the scratch space)".into()));
    }
    if saw(ENOSPC) || saw(ENOSPC_PYTHON) || (language == Language::Node && saw(ENOSPC_NODE)) {
        return Some(env("the scratch space is full (ENOSPC)".into()));
    }
    if ending.stream_broken {
        return Some(env(
            "the output stream broke: the runner's whole output was not read".into(),
        ));
    }
    if saw(RUST_NEEDS_NEWER) {
        return Some(env(
            "the project needs a newer Rust than the sandbox's image has (rust-version)".into(),
        ));
    }
    if ending.exit_code != Some(0) && (saw(GO_NEEDS_NEWER) || saw(GO_NOTE_NEEDS)) {
        return Some(env(
            "the module needs a newer Go than the sandbox's image has (its go directive)".into(),
        ));
    }
    None
}

/// What a non-zero exit means by the conventions of the language's test runner (before
/// the runner's own summary is checked).
fn by_exit_code(
    language: Language,
    code: i64,
    tests: Option<TestCounts>,
    saw: &dyn Fn(&str) -> bool,
) -> Outcome {
    let env = |reason: String| Outcome::EnvironmentError { reason };
    match language {
        // pytest: 1 = tests failed; 2 = interrupted (collection errors); 3 internal
        // error; 4 usage error; 5 no tests collected.
        Language::Python => match code {
            1 if saw(PYTEST_ERROR_COLLECTING) => env("pytest could not collect the tests".into()),
            1 if saw(PYTEST_ERROR_AT_SETUP) => {
                env("a fixture errored in setup: a test did not run".into())
            }
            // A teardown that errors after its test failed (tqdm's posttest finds the bar the
            // failed test left open) does not undo the failure; one after tests that all
            // passed is no failing test.
            1 if saw(PYTEST_ERROR_AT_TEARDOWN) && tests.is_none_or(|t| t.failed == 0) => {
                env("a fixture errored in teardown and no test failed".into())
            }
            1 => Outcome::TestFailed,
            2 => env("pytest was interrupted: a collection error (exit 2)".into()),
            5 => env("pytest collected no tests (exit 5)".into()),
            code => env(format!(
                "exit {code} is not a test failure by pytest's conventions"
            )),
        },
        // cargo exits 101 both for failing tests and for build errors: only a test
        // result line that says FAILED, with no compile error, is a test failure.
        Language::Rust => {
            if code == 101 && saw(CARGO_TEST_FAILED) && !saw(CARGO_COULD_NOT_COMPILE) {
                Outcome::TestFailed
            } else if saw(CARGO_COULD_NOT_COMPILE) {
                env("the tests did not compile".into())
            } else {
                env(format!("exit {code} without a failing cargo test result"))
            }
        }
        // node --test and jest exit 1 when a test fails, but also when a test file
        // cannot load: those failures are named and refused.
        Language::Node => {
            let load_failure = [
                NODE_SYNTAX_ERROR,
                NODE_MODULE_NOT_FOUND,
                NODE_CANNOT_FIND_MODULE,
                JEST_SUITE_FAILED_TO_RUN,
            ]
            .into_iter()
            // A SyntaxError in a test mocha ran (the code under test's `JSON.parse` of
            // undefined: BugsJS Node-redis-3) is that test's failure: mocha's summary shows
            // every file loaded.
            .filter(|m| !(*m == NODE_SYNTAX_ERROR && saw(MOCHA_SUMMARY)))
            .find(|m| saw(m));
            // mocha exits with the number of failing tests (at most 255).
            let mocha_failures =
                tests.is_some_and(|t| t.failed > 0 && code == t.failed.min(255) as i64);
            match (code, load_failure) {
                (1, None) => Outcome::TestFailed,
                (_, None) if mocha_failures => Outcome::TestFailed,
                (_, Some(marker)) => env(format!("a test file could not load ({marker})")),
                (code, None) => env(format!(
                    "exit {code} is not a test failure by node's conventions"
                )),
            }
        }
        // go test exits 1 both for failing tests and for packages that do not build: only
        // a `--- FAIL:` line from a package that built is a test failure.
        Language::Go => {
            if saw(GO_BUILD_FAILED) || saw(GO_SETUP_FAILED) {
                env("the tests did not build".into())
            } else if code == 1 && saw(GO_TEST_FAILED) {
                Outcome::TestFailed
            } else {
                env(format!("exit {code} without a failing go test"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(passed: u64, failed: u64, skipped: u64) -> Option<TestCounts> {
        Some(TestCounts {
            passed,
            failed,
            skipped,
            errors: 0,
        })
    }

    /// A test run's ending; a failing exit comes with one failed test, a passing one with
    /// one passed test, unless `tests` says otherwise.
    fn ending(code: i64, markers: &[&'static str]) -> Ending {
        Ending {
            exit_code: Some(code),
            killed: None,
            pids_limit_reached: false,
            markers: markers.to_vec(),
            tests: if code == 0 {
                counts(1, 0, 0)
            } else {
                counts(0, 1, 0)
            },
            kind: RunKind::Tests,
            stream_broken: false,
        }
    }

    fn env(outcome: Outcome) -> bool {
        matches!(outcome, Outcome::EnvironmentError { .. })
    }

    /// A suite that fails without a failing test after looking a host up (a smoke step that
    /// installs the packed project from the registry) says that it needed the network, in
    /// every language's words; a failing test stays a failing test, and a pass a pass.
    #[test]
    fn a_failure_without_a_failing_test_that_looked_up_a_host_says_it_needed_the_network() {
        use Language::*;
        let all_passed = |code: i64, markers: &[&'static str]| Ending {
            tests: counts(913, 0, 1),
            ..ending(code, markers)
        };
        for (language, marker, words) in [
            (Node, NET_EAI_AGAIN, "(EAI_AGAIN)"),
            (Node, NET_ENOTFOUND, "(getaddrinfo ENOTFOUND)"),
            (
                Python,
                NET_NAME_RESOLUTION,
                "(Temporary failure in name resolution)",
            ),
            (
                Rust,
                NET_NAME_RESOLUTION,
                "(Temporary failure in name resolution)",
            ),
            (Go, NET_NO_SUCH_HOST, "(no such host)"),
            (Go, NET_UNREACHABLE, "(network is unreachable)"),
        ] {
            assert!(markers(language).contains(&marker), "{language:?} {marker}");
            let Outcome::EnvironmentError { reason } =
                classify(language, &all_passed(1, &[marker]))
            else {
                panic!("{language:?}: not an environment error");
            };
            assert!(
                reason.contains("the run needed the network") && reason.ends_with(words),
                "{language:?}: {reason}"
            );
            // Without the lookup, the reason says nothing of the network.
            let Outcome::EnvironmentError { reason } = classify(language, &all_passed(1, &[]))
            else {
                panic!("{language:?}: not an environment error");
            };
            assert!(!reason.contains("network"), "{reason}");
        }
        assert_eq!(
            classify(Node, &ending(1, &[NET_EAI_AGAIN])),
            Outcome::TestFailed
        );
        assert_eq!(
            classify(Node, &ending(0, &[NET_EAI_AGAIN])),
            Outcome::Passed
        );
    }

    #[test]
    fn only_a_test_runner_failure_is_a_test_failure() {
        use Language::*;
        assert_eq!(classify(Python, &ending(0, &[])), Outcome::Passed);
        assert_eq!(classify(Python, &ending(1, &[])), Outcome::TestFailed);
        assert_eq!(
            classify(Rust, &ending(101, &[CARGO_TEST_FAILED])),
            Outcome::TestFailed
        );
        assert_eq!(classify(Node, &ending(1, &[])), Outcome::TestFailed);
        assert_eq!(
            classify(Go, &ending(1, &[GO_TEST_FAILED])),
            Outcome::TestFailed
        );
        for (language, end) in [
            (Python, ending(2, &[])),
            (Python, ending(5, &[])),
            (Python, ending(1, &[PYTEST_ERROR_COLLECTING])),
            (Python, ending(137, &[])),
            (Rust, ending(101, &[CARGO_COULD_NOT_COMPILE])),
            (
                Rust,
                ending(101, &[CARGO_TEST_FAILED, CARGO_COULD_NOT_COMPILE]),
            ),
            (Rust, ending(101, &[])),
            (Node, ending(1, &[NODE_SYNTAX_ERROR])),
            (Node, ending(1, &[NODE_CANNOT_FIND_MODULE])),
            (Node, ending(134, &[])),
            (Go, ending(1, &[])),
            (Go, ending(1, &[GO_BUILD_FAILED])),
            (Go, ending(1, &[GO_TEST_FAILED, GO_BUILD_FAILED])),
            (Go, ending(1, &[GO_SETUP_FAILED])),
            (Go, ending(2, &[])),
        ] {
            assert!(env(classify(language, &end)), "{language} {end:?}");
        }
    }

    /// A SyntaxError mocha caught in a test it ran is the test's failure; one that stopped a
    /// file from loading (no mocha summary, or another runner) is not.
    #[test]
    fn a_syntax_error_inside_a_test_mocha_ran_is_a_failure() {
        use Language::Node;
        assert_eq!(
            classify(Node, &ending(1, &[NODE_SYNTAX_ERROR, MOCHA_SUMMARY])),
            Outcome::TestFailed
        );
        assert!(env(classify(Node, &ending(1, &[NODE_SYNTAX_ERROR]))));
        assert!(env(classify(
            Node,
            &ending(1, &[NODE_CANNOT_FIND_MODULE, MOCHA_SUMMARY])
        )));
    }

    #[test]
    fn a_setup_error_is_never_a_failure_and_a_teardown_error_does_not_undo_one() {
        use Language::Python;
        // The test never ran: its fixture's setup errored.
        assert!(env(classify(Python, &ending(1, &[PYTEST_ERROR_AT_SETUP]))));
        let setup_and_failure = Ending {
            tests: Some(TestCounts {
                passed: 0,
                failed: 1,
                skipped: 0,
                errors: 1,
            }),
            ..ending(1, &[PYTEST_ERROR_AT_SETUP, PYTEST_ERROR_AT_TEARDOWN])
        };
        assert!(env(classify(Python, &setup_and_failure)));
        // tqdm's posttest errors in teardown because the failed test left a bar open: the
        // test ran and failed.
        let failed_then_teardown = Ending {
            tests: Some(TestCounts {
                passed: 0,
                failed: 1,
                skipped: 0,
                errors: 1,
            }),
            ..ending(1, &[PYTEST_ERROR_AT_TEARDOWN])
        };
        assert_eq!(classify(Python, &failed_then_teardown), Outcome::TestFailed);
        // A teardown error after tests that passed is no failing test.
        let passed_then_teardown = Ending {
            tests: Some(TestCounts {
                passed: 1,
                failed: 0,
                skipped: 0,
                errors: 1,
            }),
            ..ending(1, &[PYTEST_ERROR_AT_TEARDOWN])
        };
        assert!(env(classify(Python, &passed_then_teardown)));
    }

    #[test]
    fn mocha_exits_with_its_count_of_failing_tests() {
        // expressjs/express under load: two tests over mocha's 2 s timeout, exit 2.
        let two = Ending {
            tests: counts(1254, 2, 4),
            ..ending(2, &[])
        };
        assert_eq!(classify(Language::Node, &two), Outcome::TestFailed);
        let many = Ending {
            tests: counts(0, 300, 0),
            ..ending(255, &[])
        };
        assert_eq!(classify(Language::Node, &many), Outcome::TestFailed);
        // Any other exit stays unexplained, and a file that cannot load is never a failure.
        let other = Ending {
            tests: counts(10, 2, 0),
            ..ending(3, &[])
        };
        assert!(env(classify(Language::Node, &other)));
        let unloadable = Ending {
            tests: counts(0, 2, 0),
            ..ending(2, &[NODE_CANNOT_FIND_MODULE])
        };
        assert!(env(classify(Language::Node, &unloadable)));
    }

    #[test]
    fn a_pass_needs_a_test_that_ran_and_a_failure_a_test_that_failed() {
        for language in Language::ALL {
            for (tests, why) in [
                (None, "no summary"),
                (counts(0, 0, 0), "nothing collected"),
                (counts(0, 0, 3), "everything skipped"),
                (counts(2, 1, 0), "exit 0 with a failure"),
            ] {
                let end = Ending {
                    tests,
                    ..ending(0, &[])
                };
                assert!(env(classify(language, &end)), "{language}: {why}");
            }
            assert_eq!(
                classify(
                    language,
                    &Ending {
                        tests: counts(1, 0, 4),
                        ..ending(0, &[])
                    }
                ),
                Outcome::Passed,
                "{language}: one ran and passed, others skipped"
            );
            let failing = match language {
                Language::Rust => ending(101, &[CARGO_TEST_FAILED]),
                Language::Go => ending(1, &[GO_TEST_FAILED]),
                _ => ending(1, &[]),
            };
            for tests in [None, counts(3, 0, 0), counts(0, 0, 1)] {
                let end = Ending {
                    tests,
                    ..failing.clone()
                };
                assert!(
                    env(classify(language, &end)),
                    "{language}: a failing exit without a failed test ({tests:?})"
                );
            }
        }
    }

    #[test]
    fn a_full_disk_a_failed_setup_or_a_broken_stream_is_never_a_test_result() {
        for language in Language::ALL {
            for marker in [ENOSPC, ENTRY_FAILED] {
                for code in [0, 1, 101] {
                    assert!(
                        env(classify(language, &ending(code, &[marker]))),
                        "{language} {marker} exit {code}"
                    );
                }
            }
            let broken = Ending {
                stream_broken: true,
                ..ending(1, &[GO_TEST_FAILED, CARGO_TEST_FAILED])
            };
            assert!(env(classify(language, &broken)), "{language}");
        }
        assert!(env(classify(
            Language::Python,
            &ending(1, &[ENOSPC_PYTHON])
        )));
        assert!(env(classify(Language::Node, &ending(1, &[ENOSPC_NODE]))));
    }

    #[test]
    fn a_toolchain_older_than_the_project_needs_is_named() {
        match classify(
            Language::Rust,
            &ending(101, &[RUST_NEEDS_NEWER, CARGO_TEST_FAILED]),
        ) {
            Outcome::EnvironmentError { reason } => {
                assert!(reason.contains("newer Rust"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        match classify(Language::Go, &ending(1, &[GO_NEEDS_NEWER])) {
            Outcome::EnvironmentError { reason } => {
                assert!(reason.contains("newer Go"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_plain_command_passes_on_exit_0_and_never_fails_a_test() {
        let command = |code| Ending {
            kind: RunKind::Command,
            tests: None,
            ..ending(code, &[])
        };
        assert_eq!(classify(Language::Python, &command(0)), Outcome::Passed);
        assert!(env(classify(Language::Python, &command(1))));
    }

    #[test]
    fn a_killed_run_is_never_a_test_failure() {
        for killed in [
            KillReason::Timeout,
            KillReason::OutOfMemory,
            KillReason::OutputLimit,
        ] {
            let end = Ending {
                killed: Some(killed),
                ..ending(1, &[])
            };
            assert!(env(classify(Language::Python, &end)));
        }
        let end = Ending {
            pids_limit_reached: true,
            ..ending(1, &[])
        };
        assert!(env(classify(Language::Python, &end)));
    }
}
