//! The `cargo test` a Rust project's CI runs: its features and targets. Many crates' tests
//! only compile with the features their CI enables (syn's suite stops at a
//! `compile_error!` without `--all-features`; a crate whose CI always tests with
//! `--all-features` rarely gates its tests), so the suite, every selected test and the
//! preparation that compiles the dependencies for them build as that CI does.
//!
//! The GitHub workflows are read as [`crate::ci_steps`] reads them (text, job by job); the
//! first `cargo test` (or `cargo nextest run`, translated) of a job on Linux named for the
//! tests is taken: a job on a stable toolchain before one set up on nightly only (the
//! sandbox has the stable toolchain of its image), and a command whose options the workflow
//! chooses (`${{ matrix.features }}`) only without them.

use crate::ci_steps::{self, Job};

/// The options taken from a CI's `cargo test` (everything but the test binary's own options
/// and what only selects output, a target or the network), and where they were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoTest {
    /// The options after `cargo test`, in order, without `--offline` (every run adds it).
    pub options: Vec<String>,
    /// The test binary's own options (after `--`: `--test-threads=1`, `--include-ignored`).
    pub binary: Vec<String>,
    /// `.github/workflows/ci.yml job test`.
    pub source: String,
}

/// Options of cargo that take a value and are kept with it.
const KEPT_WITH_VALUE: &[&str] = &[
    "--features",
    "-F",
    "--package",
    "-p",
    "--exclude",
    "--test",
    "--bin",
    "--example",
    "--manifest-path",
];

/// Options that are kept alone.
const KEPT: &[&str] = &[
    "--all-features",
    "--no-default-features",
    "--workspace",
    "--all",
    "--release",
    "--lib",
    "--bins",
    "--tests",
    "--examples",
    "--all-targets",
    "--no-fail-fast",
];

/// Options left out with their value: output, parallelism, profiles and targets a run does
/// not choose.
const DROPPED_WITH_VALUE: &[&str] = &[
    "--color",
    "--jobs",
    "-j",
    "--message-format",
    "--profile",
    "--target-dir",
    "--config",
    "--cargo-profile",
];

/// Options left out alone (the network is never there; output only).
const DROPPED: &[&str] = &[
    "--locked",
    "--frozen",
    "--offline",
    "--verbose",
    "-v",
    "-vv",
    "--quiet",
    "-q",
    "--no-run",
];

/// The `cargo test` of the project's CI, read from its GitHub workflows (`read` as
/// [`crate::suite::documented_suite`] takes it); None where no test job runs one the sandbox
/// can (only on another toolchain's target, only under values the workflow chooses, only
/// the documentation's tests).
pub fn ci_test(read: &dyn Fn(&str) -> Option<String>) -> Option<CargoTest> {
    let workflows = crate::suite::workflows(read)?;
    let mut nightly = None;
    for (path, text) in &workflows {
        for job in ci_steps::jobs(text) {
            if !ci_steps::on_linux(&job) || crate::ci_install::not_the_suite(&job.name) {
                continue;
            }
            let Some((options, binary)) = job.commands.iter().find_map(|c| translated(c)) else {
                continue;
            };
            let found = CargoTest {
                options,
                binary,
                source: format!("{path} job {}", job.name),
            };
            if on_nightly_only(&job) {
                nightly.get_or_insert(found);
            } else {
                return Some(found);
            }
        }
    }
    // A project that tests on nightly alone (syn's suite): its options still say what its
    // tests need to compile.
    nightly
}

/// Whether every Rust toolchain a job names is a nightly one (it names at least one).
fn on_nightly_only(job: &Job) -> bool {
    !job.toolchains.is_empty() && job.toolchains.iter().all(|t| t.starts_with("nightly"))
}

/// One CI command as a `cargo test` of the sandbox: its options and the test binary's, or
/// None where it is no `cargo test` (or `cargo nextest run`) the sandbox can run as written.
fn translated(command: &str) -> Option<(Vec<String>, Vec<String>)> {
    let words = crate::suite::words(command);
    // Variables set for the command (`RUSTFLAGS=… cargo test`) are the CI's, not the
    // suite's.
    let mut words = words
        .iter()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .map(String::as_str)
        .peekable();
    if words.next()? != "cargo" {
        return None;
    }
    // `cargo +stable test`; another toolchain is not the image's.
    if let Some(toolchain) = words.next_if(|w| w.starts_with('+'))
        && toolchain != "+stable"
    {
        return None;
    }
    match (words.next()?, words.peek().copied()) {
        ("test" | "t", _) => {}
        ("nextest", Some("run")) => {
            words.next();
        }
        _ => return None,
    }
    let mut options = Vec::new();
    let mut binary = Vec::new();
    while let Some(w) = words.next() {
        if w == "--" {
            binary.extend(words.by_ref().map(str::to_string));
            break;
        }
        // A value the workflow chooses per job, or a shell's: not one command.
        if w.contains('$') {
            return None;
        }
        let (flag, inline) = match w.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => (flag, Some(value)),
            _ => (w, None),
        };
        if flag == "--doc" || flag == "-Z" || flag.starts_with("-Z") || flag == "--target" {
            // The documentation's tests alone, an unstable option, another target: not
            // the suite the sandbox runs.
            return None;
        }
        if KEPT.contains(&flag) {
            options.push(w.to_string());
        } else if KEPT_WITH_VALUE.contains(&flag) {
            let value = match inline {
                Some(v) => v.to_string(),
                None => words.next()?.to_string(),
            };
            if value.contains('$') {
                return None;
            }
            options.push(flag.to_string());
            options.push(value);
        } else if DROPPED_WITH_VALUE.contains(&flag) {
            if inline.is_none() {
                words.next();
            }
        } else if DROPPED.contains(&flag) || !flag.starts_with('-') {
            // A positional word is a test name filter of that job: not the whole suite.
            if !flag.starts_with('-') {
                return None;
            }
        } else {
            // An option this reader does not know: the command is not taken as written.
            return None;
        }
    }
    if binary.iter().any(|w| w.contains('$')) {
        return None;
    }
    Some((options, binary))
}

/// The options of a `cargo test` line that decide what is compiled: features and profile
/// (a selected test's run builds as the suite's, so the preparation's compiled dependencies
/// serve it and the test compiles at all).
pub fn build_options(options: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = options.iter();
    while let Some(w) = words.next() {
        match w.as_str() {
            "--all-features" | "--no-default-features" | "--release" => out.push(w.clone()),
            "--features" | "-F" => {
                if let Some(v) = words.next() {
                    out.extend([w.clone(), v.clone()]);
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_with(files: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        move |p: &str| {
            if let Some(dir) = p.strip_suffix('/') {
                let names: Vec<&str> = files
                    .iter()
                    .filter_map(|(n, _)| n.strip_prefix(&format!("{dir}/")))
                    .collect();
                return (!names.is_empty()).then(|| names.join("\n"));
            }
            files.iter().find(|(n, _)| n == p).map(|(_, t)| t.clone())
        }
    }

    const SYN: &str = "jobs:\n  test:\n    name: Tests\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v7\n      - uses: dtolnay/rust-toolchain@nightly\n        with:\n          components: llvm-tools, rustc-dev\n      - run: cargo test --all-features --release --tests\n  build:\n    runs-on: ${{matrix.os || 'ubuntu'}}-latest\n    steps:\n      - uses: dtolnay/rust-toolchain@master\n        with:\n          toolchain: ${{matrix.rust}}\n      - run: cargo check ${{env.manifest_path}} --features full\n  doc:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test --all-features --doc\n";

    #[test]
    fn a_crate_tested_on_nightly_alone_runs_its_ci_options() {
        let read = read_with(&[(".github/workflows/ci.yml", SYN)]);
        let found = ci_test(&read).expect("its CI's cargo test");
        assert_eq!(found.options, ["--all-features", "--release", "--tests"]);
        assert!(found.binary.is_empty());
        assert_eq!(found.source, ".github/workflows/ci.yml job test");
        assert_eq!(
            build_options(&found.options),
            ["--all-features", "--release"]
        );
    }

    #[test]
    fn a_stable_job_is_taken_before_a_nightly_one() {
        let workflow = "jobs:\n  nightly:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: dtolnay/rust-toolchain@nightly\n      - run: cargo test --features unstable\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: dtolnay/rust-toolchain@stable\n      - run: |\n          cargo build\n          RUST_BACKTRACE=1 cargo test --locked --verbose --workspace --features serde,std -- --test-threads=1\n";
        let read = read_with(&[(".github/workflows/ci.yml", workflow)]);
        let found = ci_test(&read).expect("its CI's cargo test");
        assert_eq!(
            found.options,
            ["--workspace", "--features", "serde,std"],
            "the network and output options left out"
        );
        assert_eq!(found.binary, ["--test-threads=1"]);
        assert_eq!(found.source, ".github/workflows/ci.yml job test");
    }

    #[test]
    fn what_the_sandbox_cannot_run_as_written_is_not_taken() {
        for command in [
            "cargo test --features ${{ matrix.features }}",
            "cargo test --target wasm32-unknown-unknown",
            "cargo +nightly test --all-features",
            "cargo test -Zbuild-std",
            "cargo test --doc",
            "cargo test parser::",
            "cargo test --some-new-option",
            "cargo build --all-features",
        ] {
            assert_eq!(translated(command), None, "{command}");
        }
        assert_eq!(
            translated("cargo nextest run --all-features --profile ci --no-fail-fast"),
            Some((
                vec!["--all-features".to_string(), "--no-fail-fast".to_string()],
                vec![]
            ))
        );
        assert_eq!(
            translated("cargo +stable t -F=a --color=always"),
            Some((vec!["-F".to_string(), "a".to_string()], vec![]))
        );
        // A job on Windows, a linters' job and a project with no workflow: nothing.
        let workflow = "jobs:\n  win:\n    runs-on: windows-latest\n    steps:\n      - run: cargo test --all-features\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test --features x\n";
        assert_eq!(
            ci_test(&read_with(&[(".github/workflows/ci.yml", workflow)])),
            None
        );
        assert_eq!(ci_test(&read_with(&[("Cargo.toml", "")])), None);
    }
}
