//! The `cargo test` a Rust project's CI runs: its features and targets. Many crates' tests
//! only compile with the features their CI enables (a crate whose CI always tests with
//! `--all-features` rarely gates its tests; syn's suite stops at a `compile_error!`
//! without it, though its suite is nightly's, which the sandbox does not have), so the
//! suite, every selected test and the preparation that compiles the dependencies for them
//! build as that CI does.
//!
//! The GitHub workflows are read as [`crate::ci_steps`] reads them (text, job by job); the
//! first `cargo test` (or `cargo nextest run`, translated) of a job on Linux and a stable
//! toolchain that tests the whole suite is taken, and only what widens or configures that
//! suite: features, the workspace, the test binary's options. A job of one configuration
//! (an MSRV, a feature check, loom, a target, nightly alone), a command that narrows the
//! suite (`--lib`, `--test`, `--no-default-features`, after a `cd`, a `-p` of other
//! packages than plain `cargo test` tests) or whose options the workflow chooses
//! (`${{ matrix.features }}`) is not the suite: the default stands. A matrix value its
//! `include:` gives the entry of the sandbox's toolchain (`rust: stable`, hyper's
//! `features: --features full`) is that entry's, and read as written there. A `-p` naming just the
//! packages plain `cargo test` tests (time's `cargo test -p time --all-features`, its
//! workspace's `default-members`) is the suite, its other options taken.

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

/// Options of cargo that take a value and are kept with it: features, and the members a
/// workspace run leaves out.
const KEPT_WITH_VALUE: &[&str] = &["--features", "-F", "--exclude"];

/// Options that are kept alone: what widens the suite or configures its features.
const KEPT: &[&str] = &[
    "--all-features",
    "--workspace",
    "--all",
    "--tests",
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
    "--cargo-profile",
];

/// Options left out alone (the network is never there; output and profile only).
const DROPPED: &[&str] = &[
    "--locked",
    "--frozen",
    "--offline",
    "--verbose",
    "-v",
    "-vv",
    "--quiet",
    "-q",
    "--release",
    "-r",
];

/// Words in a job's name that say it tests one configuration, not the suite.
const ONE_CONFIGURATION: &[&str] = &[
    "msrv",
    "minimal",
    "miri",
    "loom",
    "careful",
    "sanitizer",
    "san",
    "cross",
    "wasm",
    "no-std",
    "no_std",
    "nostd",
    "feature",
    "powerset",
    "hack",
    "semver",
    "fuzz",
    "cov",
    "nightly",
    "beta",
    "32",
];

/// The `cargo test` of the project's CI, read from its GitHub workflows (`read` as
/// [`crate::suite::documented_suite`] takes it); None where no test job runs one the sandbox
/// can (only on another toolchain's target, only under values the workflow chooses, only
/// the documentation's tests).
pub fn ci_test(read: &dyn Fn(&str) -> Option<String>) -> Option<CargoTest> {
    let workflows = crate::suite::workflows(read)?;
    for (path, text) in &workflows {
        for job in ci_steps::jobs(text) {
            let name = job.name.to_ascii_lowercase();
            if !ci_steps::on_linux(&job)
                || crate::ci_install::not_the_suite(&job.name)
                || on_nightly_only(&job)
                || ONE_CONFIGURATION.iter().any(|w| name.contains(w))
            {
                continue;
            }
            // The commands before the job leaves the root (`cd test_suite && cargo test`),
            // a script of the tree it runs read in its place.
            let mut defined = ci_steps::workflow_env(text);
            defined.extend(job.env.iter().cloned());
            let entry = stable_entry(text, &job);
            let commands: Vec<String> = job
                .commands
                .iter()
                .map(|c| with_matrix(c, &entry))
                .collect();
            let Some((options, binary)) = commands_through_scripts(&commands, read)
                .iter()
                .take_while(|c| !c.starts_with("cd ") && !c.contains("working-directory"))
                .find_map(|c| {
                    let (options, binary, packages) = with_packages(&unset_dropped(c, &defined))?;
                    (packages.is_empty() || default_members(read).is_some_and(|d| d == packages))
                        .then_some((options, binary))
                })
            else {
                continue;
            };
            let of_entry = job
                .commands
                .iter()
                .zip(&commands)
                .any(|(written, read)| written != read);
            return Some(CargoTest {
                options,
                binary,
                source: match (of_entry, entry.first()) {
                    (true, Some((key, value))) => {
                        format!("{path} job {} (its matrix entry {key}: {value})", job.name)
                    }
                    _ => format!("{path} job {}", job.name),
                },
            });
        }
    }
    None
}

/// The values a job's matrix gives its entry of the sandbox's toolchain, that entry's key
/// first: hyper's `test` job runs `cargo test ${{ matrix.features }}`, its matrix's
/// `include:` giving `features: "--features full"` to `rust: stable`, and its tests need
/// them. The entry is the one whose value of the key the job's toolchain is chosen by
/// (`toolchain: ${{ matrix.rust }}`) is `stable`; none where the job chooses no toolchain
/// by its matrix or no entry is stable's.
fn stable_entry(text: &str, job: &Job) -> Vec<(String, String)> {
    let inputs = job
        .actions
        .iter()
        .flat_map(|a| &a.with)
        .filter(|(k, _)| k == "toolchain")
        .map(|(_, v)| v);
    let Some(key) = job
        .toolchains
        .iter()
        .chain(inputs)
        .find_map(|t| matrix_name(t))
    else {
        return Vec::new();
    };
    let Ok(doc) =
        serde_saphyr::from_str_with_options::<serde_json::Value>(text, crate::yaml_options(32))
    else {
        return Vec::new();
    };
    let include = doc
        .get("jobs")
        .and_then(|j| j.get(&job.name))
        .and_then(|j| j.get("strategy"))
        .and_then(|s| s.get("matrix"))
        .and_then(|m| m.get("include"))
        .and_then(|i| i.as_array());
    let scalar = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let Some(entry) = include
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_object())
        .find(|e| e.get(key).and_then(|v| v.as_str()) == Some("stable"))
    else {
        return Vec::new();
    };
    let mut values = vec![(key.to_string(), "stable".to_string())];
    values.extend(
        entry
            .iter()
            .filter(|(k, _)| k.as_str() != key)
            .filter_map(|(k, v)| Some((k.clone(), scalar(v)?))),
    );
    values
}

/// `rust` of `${{ matrix.rust }}` (spaces inside the braces or not).
fn matrix_name(expression: &str) -> Option<&str> {
    let inner = expression
        .trim()
        .strip_prefix("${{")?
        .strip_suffix("}}")?
        .trim();
    let name = inner.strip_prefix("matrix.")?;
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    .then_some(name)
}

/// `command` with each `${{ matrix.NAME }}` that `values` gives replaced by its value; the
/// rest as written (and then refused as the workflow's choice).
fn with_matrix(command: &str, values: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = command;
    while let Some(start) = rest.find("${{") {
        let Some(len) = rest[start..].find("}}").map(|e| e + 2) else {
            break;
        };
        let expression = &rest[start..start + len];
        out.push_str(&rest[..start]);
        match matrix_name(expression).and_then(|n| values.iter().find(|(k, _)| k == n)) {
            Some((_, value)) => out.push_str(value),
            None => out.push_str(expression),
        }
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    out
}

/// A command without the words that are a variable alone (`$DOCTEST_XCOMPILE`,
/// `${EXTRA}`) which neither the workflow nor the job sets: the shell makes them nothing on
/// the job's plain run (futures-rs' `cargo test --workspace --all-features
/// $DOCTEST_XCOMPILE`, set by a cross-compiling action on other targets' jobs only). A
/// variable the workflow sets is its choice, and stays for [`with_packages`] to refuse.
fn unset_dropped(command: &str, defined: &[(String, String)]) -> String {
    command
        .split_whitespace()
        .filter(|w| {
            let w = w.trim_matches('"');
            let name = w
                .strip_prefix("${")
                .and_then(|n| n.strip_suffix('}'))
                .or_else(|| w.strip_prefix('$'));
            let Some(name) = name else { return true };
            let plain = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            !plain || defined.iter().any(|(k, _)| k == name)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A job's commands, each that runs a shell script of the tree (`run: ci/test.sh`, `bash
/// ./ci/test.sh`) replaced by the script's commands (crossbeam's CI runs its `cargo test
/// --all …` from `ci/test.sh`): its lines joined where they continue, `&&` chains split,
/// comments left out; a `cd` back to the root the script starts with (`cd "$(dirname
/// "$0")"/..`) is no change of directory. One level: a script's own scripts are not read.
fn commands_through_scripts(
    commands: &[String],
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for command in commands {
        let words = crate::suite::words(command);
        let mut words = words.iter().map(String::as_str);
        let first = match words.next() {
            Some("bash" | "sh") => words.next(),
            other => other,
        };
        let path = first.map(|p| p.trim_start_matches("./"));
        let script = path
            .filter(|p| !p.is_empty() && !p.starts_with(['/', '-', '$']) && !p.contains(".."))
            .and_then(|p| read(p).map(|text| (p, text)))
            .filter(|(p, text)| p.ends_with(".sh") || text.starts_with("#!"));
        let Some((path, text)) = script else {
            out.push(command.clone());
            continue;
        };
        let depth = path.matches('/').count();
        let joined = text.replace("\\\n", " ");
        for line in joined.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            for part in line.split("&&").map(str::trim).filter(|p| !p.is_empty()) {
                if back_to_the_root(part, depth) {
                    continue;
                }
                out.push(part.to_string());
            }
        }
    }
    out
}

/// Whether `cd` goes to the root of the tree from a script `depth` directories down: the
/// script's own directory (`"$(dirname "$0")"`, `${BASH_SOURCE[0]}`'s) and one `..` per
/// level.
fn back_to_the_root(command: &str, depth: usize) -> bool {
    let Some(target) = command.strip_prefix("cd ") else {
        return false;
    };
    let target = target.trim().trim_matches('"');
    let own = [
        "$(dirname \"$0\")\"",
        "$(dirname \"${BASH_SOURCE[0]}\")\"",
        "$(dirname $0)",
    ];
    own.iter().any(|dir| {
        target
            .strip_prefix(dir)
            .map(|rest| rest.trim_matches('"'))
            .is_some_and(|rest| {
                let ups = rest
                    .split('/')
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>();
                ups.len() == depth && ups.iter().all(|p| *p == "..")
            })
    })
}

/// Whether every Rust toolchain a job names is a nightly one (it names at least one).
fn on_nightly_only(job: &Job) -> bool {
    !job.toolchains.is_empty() && job.toolchains.iter().all(|t| t.starts_with("nightly"))
}

/// The names of the packages plain `cargo test` at the root tests, sorted: the root's own
/// package, else the workspace's `default-members` (paths, read for their packages' names),
/// else every member; None where a manifest cannot be read or a member is a glob.
fn default_members(read: &dyn Fn(&str) -> Option<String>) -> Option<Vec<String>> {
    let manifest = |dir: &str| -> Option<toml::Table> {
        let path = if dir.is_empty() || dir == "." {
            "Cargo.toml".to_string()
        } else {
            format!("{}/Cargo.toml", dir.trim_end_matches('/'))
        };
        read(&path)?.parse().ok()
    };
    let name = |table: &toml::Table| -> Option<String> {
        Some(table.get("package")?.get("name")?.as_str()?.to_string())
    };
    let root = manifest("")?;
    let workspace = root.get("workspace").and_then(|w| w.as_table());
    let listed = |key: &str| -> Option<Vec<String>> {
        let list = workspace?.get(key)?.as_array()?;
        list.iter()
            .map(|m| m.as_str().map(str::to_string))
            .collect()
    };
    let mut names = match (name(&root), listed("default-members")) {
        (_, Some(paths)) if !paths.is_empty() => paths,
        (Some(own), _) => return Some(vec![own]),
        (None, _) => listed("members")?,
    }
    .iter()
    .map(|path| {
        if path.contains(['*', '?', '[']) || path.contains("..") {
            return None;
        }
        name(&manifest(path)?)
    })
    .collect::<Option<Vec<_>>>()?;
    names.sort();
    Some(names)
}

/// One CI command as a `cargo test` of the sandbox: its options and the test binary's, or
/// None where it is no `cargo test` (or `cargo nextest run`) the sandbox can run as written.
#[cfg(test)]
fn translated(command: &str) -> Option<(Vec<String>, Vec<String>)> {
    match with_packages(command)? {
        (options, binary, packages) if packages.is_empty() => Some((options, binary)),
        _ => None,
    }
}

/// [`translated`], with the packages a `-p`/`--package` names (sorted), left out of the
/// options: the caller decides whether they are the whole suite.
fn with_packages(command: &str) -> Option<(Vec<String>, Vec<String>, Vec<String>)> {
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
    let mut packages = Vec::new();
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
        if flag == "-p" || flag == "--package" {
            let value = match inline {
                Some(v) => v.to_string(),
                None => words.next()?.to_string(),
            };
            if value.contains(['$', '*', '@', ':']) {
                return None;
            }
            packages.push(value);
        } else if KEPT.contains(&flag) {
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
    // `--ignored` runs the ignored tests alone: not the suite.
    if binary.iter().any(|w| w.contains('$') || w == "--ignored") {
        return None;
    }
    packages.sort();
    packages.dedup();
    Some((options, binary, packages))
}

/// The options of a `cargo test` line that decide what is compiled: its features (a
/// selected test's run builds as the suite's, so the preparation's compiled dependencies
/// serve it and the test compiles at all).
pub fn build_options(options: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = options.iter();
    while let Some(w) = words.next() {
        match w.as_str() {
            "--all-features" => out.push(w.clone()),
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

    use crate::testing::reader as read_with;

    const SYN: &str = "jobs:\n  test:\n    name: Tests\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v7\n      - uses: dtolnay/rust-toolchain@nightly\n        with:\n          components: llvm-tools, rustc-dev\n      - run: cargo test --all-features --release --tests\n  build:\n    runs-on: ${{matrix.os || 'ubuntu'}}-latest\n    steps:\n      - uses: dtolnay/rust-toolchain@master\n        with:\n          toolchain: ${{matrix.rust}}\n      - run: cargo check ${{env.manifest_path}} --features full\n  doc:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test --all-features --doc\n";

    #[test]
    fn a_stable_job_that_tests_the_whole_suite_gives_its_features() {
        let workflow = "jobs:\n  msrv:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test --features serde\n  loom:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test --lib --release\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: dtolnay/rust-toolchain@stable\n      - run: |\n          cargo build\n          RUST_BACKTRACE=1 cargo test --locked --verbose --release --workspace --features serde,std -- --test-threads=1\n";
        let read = read_with(&[(".github/workflows/ci.yml", workflow)]);
        let found = ci_test(&read).expect("its CI's cargo test");
        assert_eq!(
            found.options,
            ["--workspace", "--features", "serde,std"],
            "the network, output and profile options left out"
        );
        assert_eq!(found.binary, ["--test-threads=1"]);
        assert_eq!(found.source, ".github/workflows/ci.yml job test");
        assert_eq!(build_options(&found.options), ["--features", "serde,std"]);
    }

    /// crossbeam's: the test job runs a script of the tree, which returns to the root and
    /// runs the workspace's suite (after a line for another target, not the sandbox's); a
    /// script that goes elsewhere first is not the suite.
    #[test]
    fn a_script_the_ci_runs_is_read_for_its_cargo_test() {
        let workflow = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: rustup update stable\n      - name: Test\n        run: ci/test.sh\n";
        let script = "#!/bin/bash\nset -euxo pipefail\ncd \"$(dirname \"$0\")\"/..\n\n# shellcheck disable=SC2086\nif [[ -n \"${RUST_TARGET:-}\" ]]; then\n  cargo test --all --all-features --target \"${RUST_TARGET}\" --exclude benchmarks -- --test-threads=1\n  exit 0\nfi\ncargo test --all --all-features \\\n  --exclude benchmarks -- --test-threads=1\n";
        let read = read_with(&[
            (".github/workflows/ci.yml", workflow),
            ("ci/test.sh", script),
        ]);
        let found = ci_test(&read).expect("the script's cargo test");
        assert_eq!(
            found.options,
            ["--all", "--all-features", "--exclude", "benchmarks"]
        );
        assert_eq!(found.binary, ["--test-threads=1"]);
        let elsewhere = script.replace("\"$(dirname \"$0\")\"/..", "tests");
        let read = read_with(&[
            (".github/workflows/ci.yml", workflow),
            ("ci/test.sh", elsewhere.as_str()),
        ]);
        assert_eq!(ci_test(&read), None);
    }

    /// time's: the test job runs `cargo test -p time --all-features` in a workspace whose
    /// `default-members` is `time`, so the `-p` is plain `cargo test`'s own and the features
    /// are the suite's (without them its tests stop at a `#[rstest]` gated on them); a `-p`
    /// of a member plain `cargo test` leaves out (clap's `-p clap_complete`), or of one of
    /// several default members, is one configuration.
    /// futures-rs: its test job runs `cargo test --workspace --all-features
    /// $DOCTEST_XCOMPILE`, a variable only a cross-compiling action sets on other targets'
    /// jobs; without `--all-features` its `_require_features` test stops the build. A
    /// variable the workflow sets itself is the job's choice: not the suite.
    #[test]
    fn a_variable_nothing_sets_is_nothing_in_the_cis_cargo_test() {
        let workflow = |env: &str| {
            format!(
                "{env}jobs:\n  test:\n    name: cargo test\n    runs-on: ${{{{ matrix.os }}}}\n    steps:\n      - uses: taiki-e/setup-cross-toolchain-action@v1\n        with:\n          target: ${{{{ matrix.target }}}}\n        if: matrix.target != ''\n      - run: cargo test --workspace --all-features $DOCTEST_XCOMPILE\n"
            )
        };
        let unset = workflow("");
        let read = crate::testing::reader(&[(".github/workflows/ci.yml", &unset)]);
        let ci = ci_test(&read).expect("the suite");
        assert_eq!(ci.options, ["--workspace", "--all-features"]);
        let set = workflow("env:\n  DOCTEST_XCOMPILE: --doc\n");
        let read = crate::testing::reader(&[(".github/workflows/ci.yml", &set)]);
        assert_eq!(ci_test(&read), None);
    }

    #[test]
    fn a_package_plain_cargo_test_tests_is_the_suite() {
        let workflow = "jobs:\n  test:\n    name: Test (${{ matrix.os.name }})\n    runs-on: ${{ matrix.os.value }}\n    strategy:\n      matrix:\n        os:\n          - { name: Ubuntu, value: ubuntu-latest }\n    steps:\n      - uses: dtolnay/rust-toolchain@master\n        with:\n          toolchain: stable\n      - name: Test\n        run: cargo test -p time --all-features\n";
        let files = |root: &'static str| {
            [
                (".github/workflows/build.yaml", workflow),
                ("Cargo.toml", root),
                ("time/Cargo.toml", "[package]\nname = \"time\"\n"),
                ("time-core/Cargo.toml", "[package]\nname = \"time-core\"\n"),
                ("macros/Cargo.toml", "[package]\nname = \"time-macros\"\n"),
            ]
        };
        let time = "[workspace]\ndefault-members = [\"time\"]\nmembers = [\"time\", \"time-core\", \"macros\"]\n";
        let found = ci_test(&read_with(&files(time))).expect("the test job's cargo test");
        assert_eq!(found.options, ["--all-features"]);
        assert_eq!(found.source, ".github/workflows/build.yaml job test");
        // A root package is plain cargo test's, unless default-members says otherwise.
        let rooted =
            "[package]\nname = \"time\"\n[workspace]\nmembers = [\"time-core\", \"macros\"]\n";
        assert!(ci_test(&read_with(&files(rooted))).is_some());
        for root in [
            // Every member is tested by plain cargo test: -p time is one of three.
            "[workspace]\nmembers = [\"time\", \"time-core\", \"macros\"]\n",
            "[package]\nname = \"time-all\"\n[workspace]\nmembers = [\"time\"]\n",
            "[workspace]\nmembers = [\"t*\"]\n",
        ] {
            assert_eq!(ci_test(&read_with(&files(root))), None, "{root}");
        }
        let both = workflow.replace("-p time", "-p time -p time-macros");
        let mut two = files(
            "[workspace]\ndefault-members = [\"macros\", \"time\"]\nmembers = [\"time\", \"time-core\", \"macros\"]\n",
        );
        two[0].1 = &both;
        assert_eq!(
            ci_test(&read_with(&two)).expect("both").options,
            ["--all-features"]
        );
    }

    /// What is not the whole suite on the image's stable toolchain leaves the default: a
    /// job on nightly alone (syn's, serde's), a command after a `cd` (serde's
    /// hyper's: `cargo test ${{ matrix.features }}`, the matrix's `include:` giving
    /// `--features full` to the stable entry (its tests need it); the entry of another
    /// toolchain's values are not taken, and a job with no stable entry still refuses them.
    #[test]
    fn a_matrix_value_its_include_gives_the_stable_entry_is_the_suites() {
        let hyper = "jobs:\n  test:\n    name: Test ${{ matrix.rust }} on ${{ matrix.os }}\n    strategy:\n      matrix:\n        rust:\n          - stable\n          - beta\n          - nightly\n        os:\n          - ubuntu-latest\n        include:\n          - rust: stable\n            features: \"--features full\"\n          - rust: nightly\n            features: \"--features full,nightly\"\n            benches: true\n    runs-on: ${{ matrix.os }}\n    steps:\n      - uses: dtolnay/rust-toolchain@master\n        with:\n          toolchain: ${{ matrix.rust }}\n      - name: Test\n        run: cargo test ${{ matrix.features }}\n";
        let test = ci_test(&read_with(&[(".github/workflows/CI.yml", hyper)])).expect("read");
        assert_eq!(test.options, ["--features", "full"]);
        assert_eq!(
            test.source,
            ".github/workflows/CI.yml job test (its matrix entry rust: stable)"
        );
        let no_stable = hyper.replace("- rust: stable\n", "- rust: beta\n");
        assert_eq!(
            ci_test(&read_with(&[(".github/workflows/CI.yml", &no_stable)])),
            None
        );
        assert_eq!(
            with_matrix(
                "a ${{matrix.x}} ${{ env.y }} b",
                &[("x".into(), "1".into())]
            ),
            "a 1 ${{ env.y }} b"
        );
    }

    /// `cd test_suite && cargo test --features unstable`), one that narrows the suite.
    #[test]
    fn what_is_not_the_whole_suite_leaves_the_default() {
        assert_eq!(
            ci_test(&read_with(&[(".github/workflows/ci.yml", SYN)])),
            None
        );
        let serde = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: dtolnay/rust-toolchain@stable\n      - run: cd test_suite && cargo test --features unstable\n";
        assert_eq!(
            ci_test(&read_with(&[(".github/workflows/ci.yml", serde)])),
            None
        );
        for command in [
            "cargo test --features ${{ matrix.features }}",
            "cargo test --target wasm32-unknown-unknown",
            "cargo +nightly test --all-features",
            "cargo test -Zbuild-std",
            "cargo test --doc",
            "cargo test parser::",
            "cargo test --some-new-option",
            "cargo test -p clap_complete -F unstable-dynamic",
            "cargo test --lib",
            "cargo test --test integration",
            "cargo test --no-default-features",
            "cargo test --all-features -- --ignored",
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
