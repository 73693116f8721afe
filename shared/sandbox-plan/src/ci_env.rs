//! The variables a project's CI sets for its tests: a GitHub workflow's top-level `env:`
//! and its test job's. A suite can depend on them as on its command: luxon's tests expect
//! the time zone its workflow sets (`TZ: America/New_York`), and 38 of them fail in UTC.
//! Every run of the suite, and every test selected within it, gets them, beneath what the
//! suite's own command sets (tox's `setenv`) and never over a variable Proven sets.
//!
//! Left out: a value the workflow computes (`${{ … }}`), and the variables that change
//! how the sandbox itself works rather than what the tests see (below).

use crate::ci_install::not_the_suite;
use crate::ci_steps::{self, Job};

/// Variables never taken from a CI: the machine's own (paths, the user), those of the CI
/// system, of Proven, of the package managers and builds the preparation made (a
/// `RUSTFLAGS = -D warnings` fails a build on a newer compiler's lint; `GOFLAGS=-mod=mod`
/// reaches for the network), colour and terminal settings (the runner's output is read),
/// the display (no X server), the locale (the images hold `C.UTF-8` alone, and a missing
/// locale is an error of its own), the seeds Proven varies, and pytest's `PYTEST_ADDOPTS`,
/// where Proven says its own options (a CI's `-n auto` or `--cov` would run what the
/// suite's translation leaves out).
fn kept(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "HOME",
        "USER",
        "SHELL",
        "PWD",
        "TMPDIR",
        "TMP",
        "TEMP",
        "HOSTNAME",
        "CI",
        "TERM",
        "DISPLAY",
        "LANG",
        "LANGUAGE",
        "PYTHONHASHSEED",
        "PYTHONPATH",
        "PYTEST_ADDOPTS",
        "NODE_PATH",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "RUSTC_WRAPPER",
    ];
    const PREFIX: &[&str] = &[
        "LD_",
        "LC_",
        "PROVEN_",
        "GITHUB_",
        "RUNNER_",
        "ACTIONS_",
        "CARGO_",
        "GO",
        "NPM_",
        "YARN_",
        "PNPM_",
        "PIP_",
        "UV_",
        "POETRY_",
        "PDM_",
        "HATCH_",
        "TOX",
        "NOX",
        "RUSTUP_",
        "VIRTUAL_ENV",
        "CONDA",
    ];
    let upper = name.to_ascii_uppercase();
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid
        && !EXACT.contains(&upper.as_str())
        && !PREFIX.iter().any(|p| upper.starts_with(p))
        && !upper.contains("COLOR")
        && !upper.contains("COLOUR")
}

/// The variables the CI's test job sets, and where it says so (`FILE job NAME env`): the
/// first job on Linux, in the workflows by name, that runs tests (not a lint, docs or type
/// job); none where that job and its workflow set none that is kept.
pub fn ci_env(read: &dyn Fn(&str) -> Option<String>) -> Option<(Vec<(String, String)>, String)> {
    for (path, text) in crate::suite::workflows(read)? {
        let Some(job) = ci_steps::jobs(&text)
            .into_iter()
            .find(|j| ci_steps::on_linux(j) && !not_the_suite(&j.name) && runs_tests(j))
        else {
            continue;
        };
        let mut vars = ci_steps::workflow_env(&text);
        for (name, value) in &job.env {
            vars.retain(|(have, _)| have != name);
            vars.push((name.clone(), value.clone()));
        }
        vars.retain(|(name, value)| kept(name) && !value.contains("${{"));
        return (!vars.is_empty()).then(|| (vars, format!("{path} job {} env", job.name)));
    }
    None
}

/// Whether a job runs a test suite: a command of it names one.
fn runs_tests(job: &Job) -> bool {
    const WORDS: &[&str] = &["test", "tox", "nox", "jest", "mocha", "vitest"];
    job.commands
        .iter()
        .any(|c| WORDS.iter().any(|w| c.contains(w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::reader;

    /// luxon's workflow: the test job sets the time zone and the locale; the lint job of
    /// another workflow sets its own, read by no suite.
    #[test]
    fn the_test_jobs_variables_are_the_suites() {
        let test = "name: Test\non:\n  push:\nenv:\n  FROM_TOP: \"1\"\n  RUSTFLAGS: -D warnings\njobs:\n  build-and-test:\n    runs-on: ubuntu-latest\n    env:\n      LANG: en_US.utf8\n      LIMIT_JEST: yes # a comment\n      TZ: America/New_York\n      TOKEN: ${{ secrets.TOKEN }}\n      FORCE_COLOR: 1\n      TOXENV: py\n      RUSTUP_MAX_RETRIES: 10\n      PYTEST_ADDOPTS: -n auto\n    strategy:\n      matrix:\n        node-version: [20, 22]\n    steps:\n      - uses: actions/checkout@v3\n      - run: npm ci\n      - run: npm run test\n        env:\n          STEP_ONLY: x\n";
        let lint = "jobs:\n  lint:\n    runs-on: ubuntu-latest\n    env:\n      LINT: 1\n    steps:\n      - run: npm run lint\n";
        let read = reader(&[
            (".github/workflows/a-lint.yml", lint),
            (".github/workflows/test.yml", test),
        ]);
        let (vars, source) = ci_env(&read).expect("the test job's variables");
        assert_eq!(source, ".github/workflows/test.yml job build-and-test env");
        assert_eq!(
            vars,
            [
                ("FROM_TOP".to_string(), "1".to_string()),
                ("LIMIT_JEST".to_string(), "yes".to_string()),
                ("TZ".to_string(), "America/New_York".to_string()),
            ]
        );
        assert_eq!(ci_env(&reader(&[(".github/workflows/l.yml", lint)])), None);
    }
}
