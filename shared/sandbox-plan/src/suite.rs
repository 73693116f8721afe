//! The test command a project documents (tox, nox, a Makefile's `test` target, `setup.py
//! test`, an npm `test` script), translated to the runner it wraps, run in the sandbox:
//! never the wrapper itself, which would create environments and fetch packages with the
//! network. What the wrapper would install was prepared already ([`crate::deps`]).

use std::fmt::Write as _;

use crate::Language;
use crate::ci_steps;
use crate::grunt;
use crate::language::{Selection, TestRun};

/// A project's suite, and where its command came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentedSuite {
    pub run: TestRun,
    /// `tox.ini [testenv] commands`, `package.json scripts.test`, ... or `the default`.
    pub source: String,
    /// Python: how one test is selected within this suite (its runner, its options, its
    /// variables); none where the language's own command selects it.
    pub selector: Option<Selector>,
    /// What the suite runs before its runner starts (a build the tests load, the fixtures a
    /// Gruntfile's `exec:assets` makes), run before a selected test too.
    pub setup: Option<Setup>,
    /// The variables its CI's test job sets ([`crate::ci_env`]), in `run.env` too: a test
    /// selected within the suite runs with them.
    pub ci_env: Vec<(String, String)>,
    /// Variables a CI sets that the suite's wrapper does not hand on to its tests (tox
    /// passes only its `pass_env` and its own few): none of its runs has them, as none of
    /// its CI's had (a test that reads `CI` runs as it did there).
    pub withheld: Vec<String>,
}

/// The steps a suite runs before its test runner, and where they come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// A shell command.
    pub command: String,
    /// `package.json scripts.pretest`, `Gruntfile.js test: exec:assets`, ...
    pub source: String,
}

/// A word quoted for `sh -c`.
pub(crate) fn sh_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

impl DocumentedSuite {
    /// The run of the selected tests within this suite, as its runner names them (pytest
    /// `path::Class::test`, unittest `module.Class.test`, nose `path:Class.test`), with the
    /// suite's own options and variables (tox's `setenv`); the language's command where
    /// the suite says nothing of selection.
    pub fn select(&self, language: Language, selection: &Selection, seed: u64) -> TestRun {
        let mut run = language.test_run(selection, seed);
        // A Rust test builds with the suite's features and profile: it compiles as the
        // suite's tests do, on the dependencies the preparation compiled for them.
        if language == Language::Rust
            && let Some(suite) = self
                .run
                .command
                .strip_prefix(&Language::Rust.suite_run().command[..])
        {
            let before_binary: Vec<String> =
                suite.iter().take_while(|w| *w != "--").cloned().collect();
            let at = Language::Rust
                .suite_run()
                .command
                .len()
                .min(run.command.len());
            run.command
                .splice(at..at, crate::cargo_ci::build_options(&before_binary));
        }
        self.add_env(&mut run);
        let Some(selector) = &self.selector else {
            return self.after_setup(run);
        };
        let path = selection.path.trim_start_matches("./");
        let mut command = selector.prefix.clone();
        let module = path.strip_suffix(".py").unwrap_or(path).replace('/', ".");
        let names: Vec<String> = if selection.names.is_empty() {
            vec![match selector.runner {
                PythonRunner::Unittest => module.clone(),
                _ => path.to_string(),
            }]
        } else {
            selection
                .names
                .iter()
                .map(|n| match selector.runner {
                    PythonRunner::Pytest => format!("{path}::{n}"),
                    PythonRunner::Unittest => format!("{module}.{}", n.replace("::", ".")),
                    PythonRunner::Nose => format!("{path}:{}", n.replace("::", ".")),
                })
                .collect()
        };
        command.extend(names);
        run.command = command;
        for (k, v) in &self.run.env {
            if !run.env.iter().any(|(have, _)| have == k) {
                run.env.push((k.clone(), v.clone()));
            }
        }
        self.after_setup(run)
    }

    /// Rust: the run of whole workspace members (`packages`, by name) within this suite,
    /// with its features and the test binary's options; none for another language or no
    /// package.
    pub fn select_packages(&self, language: Language, packages: &[String]) -> Option<TestRun> {
        if language != Language::Rust || packages.is_empty() {
            return None;
        }
        let default = Language::Rust.suite_run();
        let options = self
            .run
            .command
            .strip_prefix(&default.command[..])
            .unwrap_or_default();
        let before: Vec<String> = options.iter().take_while(|w| *w != "--").cloned().collect();
        let binary: Vec<String> = options.iter().skip_while(|w| *w != "--").cloned().collect();
        let mut command = default.command.clone();
        command.extend(crate::cargo_ci::build_options(&before));
        for p in packages {
            command.extend(["-p".to_string(), p.clone()]);
        }
        command.extend(binary);
        Some(self.after_setup(TestRun {
            command,
            env: self.run.env.clone(),
        }))
    }

    /// The run of whole test files within this suite, each named as its runner names a
    /// file (pytest and nose a path, unittest a module), with the suite's own options and
    /// variables; none where the suite says nothing of selection or no file is given.
    pub fn select_files(&self, language: Language, paths: &[String]) -> Option<TestRun> {
        let first = Selection {
            path: paths.first()?.clone(),
            names: Vec::new(),
            package: None,
        };
        let mut run = language.test_run(&first, 0);
        self.add_env(&mut run);
        if let Some(selector) = &self.selector {
            // A file the suite's own options leave out (`--ignore=tests/test_api.py`) is not
            // one of its tests.
            let kept: Vec<String> = paths
                .iter()
                .filter(|p| !selector.ignores(p))
                .cloned()
                .collect();
            if kept.len() < paths.len() {
                return self.select_files(language, &kept);
            }
        }
        let Some(selector) = &self.selector else {
            // Go runs a test file's package whole: each package of the files, once.
            if language == Language::Go {
                for path in &paths[1..] {
                    let one = Selection {
                        path: path.clone(),
                        names: Vec::new(),
                        package: None,
                    };
                    let dir = language.test_run(&one, 0).command.pop()?;
                    if !run.command.contains(&dir) {
                        run.command.push(dir);
                    }
                }
                return Some(self.after_setup(run));
            }
            // The sandbox's own Python convention (pytest over paths) where the project
            // documents no suite: each file after the first.
            if language != Language::Python || run.command.last() != Some(&first.path) {
                return None;
            }
            run.command.extend(paths[1..].iter().cloned());
            return Some(self.after_setup(run));
        };
        let mut command = selector.prefix.clone();
        for path in paths {
            let path = path.trim_start_matches("./");
            command.push(match selector.runner {
                PythonRunner::Unittest => {
                    path.strip_suffix(".py").unwrap_or(path).replace('/', ".")
                }
                _ => path.to_string(),
            });
        }
        run.command = command;
        for (k, v) in &self.run.env {
            if !run.env.iter().any(|(have, _)| have == k) {
                run.env.push((k.clone(), v.clone()));
            }
        }
        Some(self.after_setup(run))
    }

    /// The variables of the suite's CI that `run` does not set already.
    fn add_env(&self, run: &mut TestRun) {
        for (k, v) in &self.ci_env {
            if !run.env.iter().any(|(have, _)| have == k) {
                run.env.push((k.clone(), v.clone()));
            }
        }
        run.env.retain(|(k, _)| !self.withheld.contains(k));
    }

    /// `run` after the suite's setup, as the suite runs its runner after it: the setup's
    /// output goes to a file, and where it fails the run goes on and says so on stderr with
    /// the setup's last lines (a test that needs nothing of it still runs; one that does
    /// fails as it would have without it, and the record shows why).
    pub fn after_setup(&self, run: TestRun) -> TestRun {
        let Some(setup) = &self.setup else {
            return run;
        };
        let test = run
            .command
            .iter()
            .map(|w| sh_quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        let log = "\"${TMPDIR:-/tmp}/proven-setup.log\"";
        let note = sh_quote(&format!(
            "proven: the suite's setup before its tests failed ({}); its last lines:",
            setup.source
        ));
        TestRun {
            command: vec![
                "sh".into(),
                "-c".into(),
                format!(
                    "( {} ) >{log} 2>&1 </dev/null || {{ echo {note} >&2; tail -n 20 {log} >&2; }}; exec {test}",
                    setup.command
                ),
            ],
            env: run.env,
        }
    }
}

/// Options of a wrapped pytest that need what the sandbox does not run (plugins for
/// coverage, parallelism, reports written elsewhere): dropped, with their values.
const DROPPED_WITH_VALUE: &[&str] = &[
    "-n",
    "--numprocesses",
    "--dist",
    "--junitxml",
    "--cov",
    "--cov-report",
    "--cov-config",
    "--basetemp",
];

pub(crate) fn words(line: &str) -> Vec<String> {
    // Shell-like splitting of one command line: quotes group, nothing is expanded. A command
    // substitution (`` `…` ``, `$(…)`) is left out whole: what it prints depends on the
    // machine it runs on (psutil's Makefile adds `-o cache_dir=…` on Windows, `-p
    // no:instafail` on CI), and split into words it became pytest arguments.
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if quote != Some('\'') && c == '`' {
            for d in chars.by_ref() {
                if d == '`' {
                    break;
                }
            }
            continue;
        }
        if quote != Some('\'') && c == '$' && chars.peek() == Some(&'(') {
            let mut depth = 0;
            for d in chars.by_ref() {
                match d {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

/// pytest-cov's options that take no value (its others take one; `--cov`'s is optional).
const COV_FLAGS: &[&str] = &["--cov-append", "--cov-branch", "--cov-reset"];

/// The pytest arguments a wrapped command passes, minus what needs plugins or placeholders.
fn pytest_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for (i, a) in args.iter().enumerate() {
        if skip {
            skip = false;
            continue;
        }
        if a.contains("$") || tox_substitution_left(a) {
            continue;
        }
        let name = a.split('=').next().unwrap_or_default();
        if DROPPED_WITH_VALUE.contains(&name) || a.starts_with("--cov") {
            // `--cov`'s value is optional (argparse's `nargs='?'`): the next word is its
            // value unless it is an option, as pytest reads it. pexpect's CI runs `pytest
            // --cov pexpect --cov-config .coveragerc`, whose `pexpect` is what to measure,
            // not a folder to collect (which held no tests).
            skip = !a.contains('=')
                && !COV_FLAGS.contains(&name)
                && (name != "--cov" || args.get(i + 1).is_some_and(|n| !n.starts_with('-')));
            continue;
        }
        out.push(a.replace("{toxinidir}/", "").replace("{toxinidir}", "."));
    }
    out
}

/// tox's command lines as commands: a line ending in `\\` goes on with the next, a comment
/// line inside (or between) them is left out, and so is a line for some environments only
/// (`opt: -O`, `py3*: -bb`): the sandbox is none of them.
fn joined_commands(lines: &[String]) -> Vec<String> {
    let factor = |l: &str| {
        l.split_once(": ").is_some_and(|(f, _)| {
            !f.is_empty()
                && f.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.,!*{}".contains(c))
        })
    };
    let mut out = Vec::new();
    let mut current = String::new();
    for raw in lines {
        let line = raw.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (part, goes_on) = match line.strip_suffix('\\') {
            Some(p) => (p.trim_end(), true),
            None => (line, false),
        };
        if !factor(part) {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(part);
        }
        if !goes_on && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The runner a Python suite's command drives, which says how one test is named to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PythonRunner {
    /// pytest, or a script of the project that hands its arguments to `pytest.main`:
    /// `path::Class::test`.
    Pytest,
    /// unittest, or the project's own runner script or module: `module.Class.test`.
    Unittest,
    /// nose: `path:Class.test`.
    Nose,
}

/// How one test is selected within a documented suite: the suite's command without what
/// selects its own tests (paths, `-k`, `-m`), then the test named as its runner names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    pub prefix: Vec<String>,
    pub runner: PythonRunner,
}

impl Selector {
    /// Whether the runner's options leave `path` out of the suite: pytest's `--ignore`
    /// (`--ignore=PATH` or `--ignore PATH`), a file or a folder above it.
    pub fn ignores(&self, path: &str) -> bool {
        let path = path.trim_start_matches("./");
        let mut words = self.prefix.iter();
        while let Some(w) = words.next() {
            let ignored = match w.strip_prefix("--ignore=") {
                Some(p) => Some(p),
                None if w == "--ignore" => words.next().map(String::as_str),
                None => None,
            };
            if let Some(p) = ignored {
                let p = p.trim_start_matches("./").trim_end_matches('/');
                if path == p || path.starts_with(&format!("{p}/")) {
                    return true;
                }
            }
        }
        false
    }
}

/// pytest's options that take their value as the next word.
const PYTEST_VALUED: &[&str] = &[
    "-k",
    "-m",
    "-p",
    "-o",
    "-W",
    "-c",
    "-r",
    "--rootdir",
    "--ignore",
    "--ignore-glob",
    "--deselect",
    "--tb",
    "--durations",
    "--durations-min",
    "--timeout",
    "--maxfail",
    "--confcutdir",
    "--log-level",
    "--import-mode",
    "--override-ini",
    "--pyargs",
];

/// The options of a pytest command line, without its positional paths and its own
/// selection (`-k`, `-m`): what a run of one test of the suite keeps.
fn pytest_options(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if !a.starts_with('-') {
            continue;
        }
        let name = a.split('=').next().unwrap_or_default();
        let takes_next = PYTEST_VALUED.contains(&a.as_str()) && name != "--pyargs";
        let value = takes_next.then(|| args.get(i).cloned()).flatten();
        if takes_next {
            i += 1;
        }
        if matches!(
            name,
            "-k" | "-m" | "--deselect" | "--lf" | "--last-failed" | "--pyargs"
        ) || a.starts_with("-k")
            || (a.starts_with("-m") && a.len() > 2 && !a.starts_with("--"))
        {
            continue;
        }
        out.push(a.clone());
        out.extend(value);
    }
    out
}

/// coverage's `run` options that take their value as the next word.
const COVERAGE_VALUED: &[&str] = &[
    "--source",
    "--rcfile",
    "--omit",
    "--include",
    "--concurrency",
    "--context",
    "--data-file",
];

/// tox's substitutions as tox makes them on a CI runner with nothing set: `{toxinidir}`
/// (tox 4's `{tox_root}`) the tree (the working directory), `{envpython}`/`{envbindir}/x`
/// (`{env_python}`, `{env_bin_dir}/x`) the environment's own, `{env:X:D}` its default,
/// `{posargs:D}` its default, `{tty:ON:OFF}` its OFF value (a CI runner's output is no
/// terminal; none without one).
fn substituted(line: &str) -> String {
    let mut line = posargs_default(line).replace("{/}", "/");
    for root in ["{toxinidir}", "{tox_root}"] {
        line = line.replace(&format!("{root}/"), "").replace(root, ".");
    }
    for bin in ["{envbindir}/", "{env_bin_dir}/"] {
        line = line.replace(bin, "");
    }
    for python in ["{envpython}", "{env_python}"] {
        line = line.replace(python, "python");
    }
    for (open, keep) in [("{env:", Keep::Default), ("{tty:", Keep::Off)] {
        let mut from = 0;
        while let Some(at) = line[from..].find(open).map(|a| from + a) {
            let Some(close) = line[at..].find('}').map(|c| at + c) else {
                break;
            };
            let inner = &line[at + open.len()..close];
            let value = match keep {
                Keep::Default => inner.split_once(':').map_or("", |(_, d)| d),
                Keep::Off => inner.split_once(':').map_or("", |(_, off)| off),
            }
            .to_string();
            line.replace_range(at..=close, &value);
            from = at + value.len();
        }
    }
    line
}

/// Which part of a `{kind:A:B}` substitution stands for it in [`substituted`].
#[derive(Clone, Copy)]
enum Keep {
    /// `{env:NAME:DEFAULT}`: the default (nothing sets NAME).
    Default,
    /// `{tty:ON:OFF}`: the value for output that is no terminal.
    Off,
}

/// tox's own substitutions (tox 3's names and tox 4's), besides `{[section]key}`.
const TOX_SUBSTITUTIONS: &[&str] = &[
    "posargs",
    "env",
    "tty",
    "toxinidir",
    "tox_root",
    "toxworkdir",
    "work_dir",
    "temp_dir",
    "envdir",
    "env_dir",
    "envname",
    "env_name",
    "envbindir",
    "env_bin_dir",
    "envpython",
    "env_python",
    "envsitepackagesdir",
    "env_site_packages_dir",
    "envtmpdir",
    "env_tmp_dir",
    "envlogdir",
    "env_log_dir",
    "homedir",
    "basepython",
    "base_python",
    "distdir",
    "distshare",
    "package_root",
];

/// Whether `word` still holds one of tox's substitutions (`{envsitepackagesdir}`,
/// `{env_tmp_dir}/x`), which nothing here stands for: such an argument is left out.
fn tox_substitution_left(word: &str) -> bool {
    let mut rest = word;
    while let Some(at) = rest.find('{') {
        let after = &rest[at + 1..];
        let end = after.find(['}', ':']).unwrap_or(after.len());
        if end < after.len() && TOX_SUBSTITUTIONS.contains(&&after[..end]) {
            return true;
        }
        rest = after;
    }
    false
}

/// What a script of the tree hands its arguments to: pytest, nose, else unittest (a
/// project's own runner: `unittest.main`, a `TextTestRunner`, Django's labels).
///
/// None when it hands its runner no arguments of the command line (a script that runs a
/// fixed list): no single test can be selected within it.
fn script_runner(text: &str) -> Option<PythonRunner> {
    let forwards = [
        "argv",
        "parse_args",
        "parse_command_line",
        "testing.main(",
        "pytest.main()",
        "nose.main()",
        "nose.run()",
        "unittest.main(",
    ]
    .iter()
    .any(|f| text.contains(f));
    if !forwards {
        return None;
    }
    Some(if text.contains("pytest") {
        PythonRunner::Pytest
    } else if text.contains("nose") {
        PythonRunner::Nose
    } else {
        PythonRunner::Unittest
    })
}

/// A script of the tree that runs tests (`runtests.py`, `test/runtests.py`,
/// `tests/run.py`): its path says test, it is no `setup.py`, and the tree holds it.
fn own_test_script(path: &str, read: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let path = path.trim_start_matches("./");
    let valid = path.ends_with(".py")
        && !path.split('/').any(|p| p == "..")
        && path != "setup.py"
        && path.to_ascii_lowercase().contains("test");
    if !valid {
        return None;
    }
    read(path)
}

/// The suite's command and how one of its tests is selected, for a command that runs the
/// project's own script or module with `args`.
fn own_runner(
    head: Vec<String>,
    args: Vec<String>,
    runner: Option<PythonRunner>,
) -> (Vec<String>, Option<Selector>) {
    let Some(runner) = runner else {
        let args = args
            .into_iter()
            .filter(|a| !a.contains('{') && !a.contains('$'));
        return (head.into_iter().chain(args).collect(), None);
    };
    let args: Vec<String> = args
        .into_iter()
        .filter(|a| !a.contains('{') && !a.contains('$'))
        .collect();
    let kept = match runner {
        PythonRunner::Pytest => pytest_args(&args),
        _ => args.clone(),
    };
    let command: Vec<String> = head.iter().cloned().chain(kept.iter().cloned()).collect();
    let options = match runner {
        PythonRunner::Pytest => pytest_options(&kept),
        // A unittest-style runner's arguments are test names, its options flags.
        _ => kept
            .iter()
            .filter(|a| a.starts_with('-') && !a.contains('='))
            .cloned()
            .collect(),
    };
    let prefix = head.into_iter().chain(options).collect();
    (command, Some(Selector { prefix, runner }))
}

/// A Python interpreter's name.
fn is_interpreter(s: &str) -> bool {
    s == "python" || s == "python3" || s.starts_with("python3.") || s == "pypy3"
}

/// The words of a command line from the runner on: a wrapper that runs the rest in the
/// project's environment, variables set for the command and the interpreter's own
/// options left out.
fn runner_words(line: &str) -> Vec<String> {
    let mut w = words(substituted(line).trim().trim_start_matches('-').trim());
    // A wrapper that runs the rest in the project's environment (`poetry run pytest`),
    // and variables set for the command (`PYTHONPATH=. pytest`): the rest.
    while let Some(first) = w.first() {
        if matches!(
            first.as_str(),
            "poetry" | "pipenv" | "hatch" | "pdm" | "uv" | "rye"
        ) && w.get(1).is_some_and(|s| s == "run")
        {
            // `uv run --all-extras --group test pytest`: uv's own options end at the command.
            let options = if first == "uv" {
                let rest: Vec<&str> = w[2..].iter().map(String::as_str).collect();
                crate::ci_install::run_options_end(&rest)
            } else {
                0
            };
            w.drain(..2 + options);
        } else if first.contains('=') && !first.starts_with('-') {
            w.remove(0);
        } else {
            break;
        }
    }
    // The interpreter's own options (-bb, -Werror, -O, -X dev, -u) are the project's
    // policy for its own machines, not its tests: left out.
    if w.first().is_some_and(|f| is_interpreter(f)) {
        let mut i = 1;
        while let Some(a) = w.get(i) {
            match a.as_str() {
                "-m" => break,
                "-W" | "-X" => i += 2,
                o if o.starts_with('-') && o.len() > 1 => i += 1,
                _ => break,
            }
        }
        w.drain(1..i.min(w.len()));
        // `python -m coverage run ...` is `coverage run ...`.
        if w.get(1).is_some_and(|s| s == "-m") && w.get(2).is_some_and(|s| s == "coverage") {
            w.drain(..2);
        }
    }
    w
}

/// One wrapped command line as the sandbox runs it, when it runs a Python test runner:
/// pytest, unittest, nose (`coverage run` around any of them), `setup.py test` (the runner
/// its setup.py or setup.cfg names), or the project's own runner (`python -m
/// tornado.test.runtests`, `coverage run test/runtests.py`, when `read` finds it in the
/// tree), without the interpreter's options, with tox's substitutions made.
fn python_command(
    line: &str,
    read: &dyn Fn(&str) -> Option<String>,
) -> Option<(Vec<String>, Option<Selector>)> {
    let w = runner_words(line);
    let rest = |n: usize| w.get(n..).unwrap_or_default().to_vec();
    let first = w.first()?.as_str();
    let (runner, args) = match first {
        "pytest" | "py.test" => (PythonRunner::Pytest, rest(1)),
        "coverage" if w.get(1).is_some_and(|s| s == "run") => {
            // coverage run [OPTIONS] (-m MODULE | SCRIPT) ARGS
            let mut i = 2;
            while let Some(a) = w.get(i) {
                if a == "-m" || !a.starts_with('-') {
                    break;
                }
                i += if COVERAGE_VALUED.contains(&a.as_str()) {
                    2
                } else {
                    1
                };
            }
            let target = w.get(i)?;
            if target == "-m" {
                match w.get(i + 1).map(String::as_str)? {
                    "pytest" | "py.test" => (PythonRunner::Pytest, rest(i + 2)),
                    "unittest" => (PythonRunner::Unittest, rest(i + 2)),
                    "nose" => (PythonRunner::Nose, rest(i + 2)),
                    module if own_module(module, read) => {
                        let head = ["python3", "-m", module].map(String::from).to_vec();
                        let runner = script_runner(&module_text(module, read).unwrap_or_default());
                        return Some(own_runner(head, rest(i + 2), runner));
                    }
                    _ => return None,
                }
            } else if target.ends_with("pytest") || target.ends_with("py.test") {
                // `coverage run $(which pytest)`-like: the pytest script itself.
                (PythonRunner::Pytest, rest(i + 1))
            } else if target.ends_with("nosetests") {
                (PythonRunner::Nose, rest(i + 1))
            } else {
                return script_command(target, rest(i + 1), read);
            }
        }
        p if is_interpreter(p) => {
            match (w.get(1).map(String::as_str), w.get(2).map(String::as_str)) {
                (Some("-m"), Some("pytest" | "py.test")) => (PythonRunner::Pytest, rest(3)),
                (Some("-m"), Some("unittest")) => (PythonRunner::Unittest, rest(3)),
                (Some("-m"), Some("nose")) => (PythonRunner::Nose, rest(3)),
                (Some("setup.py"), Some("test" | "pytest" | "nosetests")) => {
                    let (command, selector) = setup_py_test(w[2].as_str(), read);
                    return Some((command, Some(selector)));
                }
                (Some("-m"), Some(module)) if own_module(module, read) => {
                    let head = ["python3", "-m", module].map(String::from).to_vec();
                    let runner = script_runner(&module_text(module, read).unwrap_or_default());
                    return Some(own_runner(head, rest(3), runner));
                }
                (Some(script), _) if !script.starts_with('-') => {
                    return script_command(script, rest(2), read);
                }
                _ => return None,
            }
        }
        "nosetests" => (PythonRunner::Nose, rest(1)),
        // Twisted's runner: dotted names, as unittest's.
        "trial" => {
            let head = ["python3", "-m", "twisted.trial"]
                .map(String::from)
                .to_vec();
            return Some(own_runner(head, rest(1), Some(PythonRunner::Unittest)));
        }
        _ => return None,
    };
    let (command, selector) = runner_command(runner, args);
    Some((command, Some(selector)))
}

/// A script of the tree run with `args`: the project's own test runner script, or Django's
/// `manage.py test` (its arguments are test labels, `app.tests.Class.test`).
fn script_command(
    script: &str,
    args: Vec<String>,
    read: &dyn Fn(&str) -> Option<String>,
) -> Option<(Vec<String>, Option<Selector>)> {
    let script = script.trim_start_matches("./").to_string();
    if script == "manage.py" && args.first().is_some_and(|a| a == "test") {
        read("manage.py")?;
        let head = ["python3", "manage.py", "test"].map(String::from).to_vec();
        return Some(own_runner(
            head,
            args[1..].to_vec(),
            Some(PythonRunner::Unittest),
        ));
    }
    let text = own_test_script(&script, read)?;
    let head = vec!["python3".to_string(), script];
    Some(own_runner(head, args, script_runner(&text)))
}

/// A standard runner's command and selector for its arguments.
fn runner_command(runner: PythonRunner, args: Vec<String>) -> (Vec<String>, Selector) {
    let base = ["python3", "-m", "pytest"].map(String::from);
    match runner {
        PythonRunner::Pytest => {
            let args = pytest_args(&args);
            let prefix = base.iter().cloned().chain(pytest_options(&args)).collect();
            (
                base.into_iter().chain(args).collect(),
                Selector { prefix, runner },
            )
        }
        PythonRunner::Unittest => {
            let head = ["python3", "-m", "unittest"].map(String::from).to_vec();
            let args: Vec<String> = args.into_iter().filter(|a| !a.contains('{')).collect();
            // `discover` and its options select the suite's tests: one test is named instead.
            let prefix = head
                .iter()
                .cloned()
                .chain(
                    args.iter()
                        .take_while(|a| a.as_str() != "discover")
                        .filter(|a| a.starts_with('-') && a.len() == 2 && *a != "-k")
                        .cloned(),
                )
                .collect();
            (
                head.into_iter().chain(args).collect(),
                Selector { prefix, runner },
            )
        }
        PythonRunner::Nose => {
            let head = ["python3", "-m", "nose"].map(String::from).to_vec();
            let args: Vec<String> = args.into_iter().filter(|a| !a.contains('{')).collect();
            let prefix = head
                .iter()
                .cloned()
                .chain(
                    args.iter()
                        .filter(|a| {
                            a.starts_with('-')
                                && !a.contains('=')
                                && !matches!(a.as_str(), "-a" | "-A" | "--attr" | "-m" | "-w")
                        })
                        .cloned(),
                )
                .collect();
            (
                head.into_iter().chain(args).collect(),
                Selector { prefix, runner },
            )
        }
    }
}

/// `python setup.py test`: the runner its setup.py or setup.cfg names (pytest-runner's
/// `[aliases] test = pytest`, a `PyTest` command, nose's collector, else setuptools'
/// `test_suite`, run by unittest), pytest when it names none.
fn setup_py_test(command: &str, read: &dyn Fn(&str) -> Option<String>) -> (Vec<String>, Selector) {
    let setup = read("setup.py").unwrap_or_default();
    let cfg = read("setup.cfg").unwrap_or_default();
    let alias = cfg
        .lines()
        .skip_while(|l| l.trim() != "[aliases]")
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "test").then(|| v.trim().to_string())
        });
    let nose = command == "nosetests"
        || alias.as_deref().is_some_and(|a| a.contains("nose"))
        || setup.contains("nose.collector");
    if nose {
        return runner_command(PythonRunner::Nose, Vec::new());
    }
    let pytest = command == "pytest"
        || alias.as_deref().is_some_and(|a| a.contains("pytest"))
        || setup.contains("pytest");
    let suite = test_suite(&setup).or_else(|| {
        cfg.lines()
            .find_map(|l| l.split_once('=').filter(|(k, _)| k.trim() == "test_suite"))
            .map(|(_, v)| v.trim().to_string())
    });
    match suite {
        Some(suite) if !pytest => {
            let dir = suite.replace('.', "/");
            let args = if read(&format!("{dir}/__init__.py")).is_some() {
                ["discover", "-s", &dir, "-t", "."]
                    .map(String::from)
                    .to_vec()
            } else {
                vec![suite]
            };
            runner_command(PythonRunner::Unittest, args)
        }
        _ => runner_command(PythonRunner::Pytest, Vec::new()),
    }
}

/// setup.py's `test_suite='tests'` (a dotted name).
fn test_suite(setup: &str) -> Option<String> {
    let at = setup.find("test_suite")?;
    let rest = setup[at + "test_suite".len()..]
        .trim_start()
        .strip_prefix('=')?;
    let rest = rest.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let name = rest[1..].split(quote).next()?;
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.'))
    .then(|| name.to_string())
}

/// The text of a module of the tree.
fn module_text(module: &str, read: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let path = module.replace('.', "/");
    read(&format!("{path}.py")).or_else(|| read(&format!("{path}/__main__.py")))
}

/// tox's `setenv` as the suite's variables: `{toxinidir}` is the tree (`/work`), a line for
/// some environments only (`cdh: HADOOP_DISTRO=cdh`) is left out, and so is a value that
/// needs what tox would make (`{envtmpdir}`), a variable the sandbox sets itself, and one
/// that would point the run elsewhere (a path of the host's).
fn tox_setenv(lines: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim();
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid
            || matches!(
                name,
                "PATH" | "HOME" | "PYTHONHASHSEED" | "PROVEN_TEST_SEED" | "VIRTUAL_ENV"
            )
        {
            continue;
        }
        let value = substituted(&value.trim().replace("{toxinidir}", "/work"))
            .replace("{toxworkdir}", "/tmp/tox");
        if value.contains('{') || value.contains('$') {
            continue;
        }
        out.push((name.to_string(), value));
    }
    out
}

/// The suite a Python project documents: tox's commands, nox's `session.run`, a Makefile's
/// `test` target, `setup.py test`; pytest over the tree when it documents none.
/// tox's `{posargs:DEFAULT}` as tox runs it with no arguments: DEFAULT (`{posargs}`: nothing).
fn posargs_default(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("{posargs") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "{posargs".len()..];
        // The default may hold substitutions of its own (dateutil's `{posargs:
        // "{toxinidir}/tests" …}`): the brace that closes `{posargs` is the one that
        // balances it.
        let mut depth = 1usize;
        let Some(close) = after.char_indices().find_map(|(i, c)| {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        }) else {
            out.push_str(&rest[at..]);
            return out;
        };
        if let Some(default) = after[..close].strip_prefix(':') {
            out.push_str(default);
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A module of the tree itself (`a.b.c`: `a/b/c.py` or `a/b/c/__main__.py`), not an
/// installed tool.
fn own_module(module: &str, read: &dyn Fn(&str) -> Option<String>) -> bool {
    let valid = !module.is_empty()
        && module
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    let path = module.replace('.', "/");
    valid
        && (read(&format!("{path}.py")).is_some() || read(&format!("{path}/__main__.py")).is_some())
}

fn python(read: &dyn Fn(&str) -> Option<String>) -> DocumentedSuite {
    let found = |lines: Vec<String>, source: &str| {
        // A `hatch run` of the project's own script is that script's lines.
        let mut through = Vec::new();
        let lines: Vec<String> = joined_commands(&lines)
            .into_iter()
            .flat_map(|l| match crate::hatch::run_script(&l, read) {
                Some((script, from)) => {
                    through.push(from);
                    script
                }
                None => vec![l],
            })
            .collect();
        let source = match through.is_empty() {
            true => source.to_string(),
            false => format!("{source} through {}", through.join(", ")),
        };
        joined_commands(&lines)
            .iter()
            .find_map(|l| python_command(l, read))
            .map(|(command, selector)| DocumentedSuite {
                ci_env: Vec::new(),
                withheld: Vec::new(),
                run: TestRun {
                    command,
                    env: default_env(Language::Python),
                },
                source: source.clone(),
                selector,
                setup: None,
            })
    };
    if let Some(tox) = crate::tox::Tox::find(read)
        && let Some(mut s) = found(
            tox.values("testenv", "commands"),
            &format!("{} [testenv] commands", tox.source),
        )
    {
        // The variables tox sets for the commands (a configuration file the tests read).
        let mut setenv = tox.values("testenv", "setenv");
        setenv.extend(tox.values("testenv", "set_env"));
        let setenv = joined_commands(&setenv);
        for (k, v) in tox_setenv(&setenv) {
            s.run.env.retain(|(have, _)| *have != k);
            s.run.env.push((k, v));
        }
        if !setenv.is_empty() {
            s.source.push_str(", setenv");
        }
        // What every CI sets and tox does not pass on (the workflow's own variables are
        // weighed in `documented_suite`).
        if !tox.passes("CI") && !tox_setenv(&setenv).iter().any(|(k, _)| k == "CI") {
            s.run.env.retain(|(k, _)| k != "CI");
            s.withheld.push("CI".into());
            s.source.push_str("; CI not passed on by tox");
        }
        return s;
    }
    if let Some(text) = read("noxfile.py") {
        for (name, lines) in crate::nox::sessions(&text) {
            if let Some(s) = found(lines, &format!("noxfile.py session {name}")) {
                return s;
            }
        }
    }
    if let Some((lines, source)) = crate::hatch::test_run(read)
        && let Some(s) = found(lines, source)
    {
        return s;
    }
    if let Some(text) = read("Makefile")
        && let Some(s) = found(make_target(&text, "test"), "Makefile test")
    {
        return s;
    }
    for file in crate::just::FILES {
        if let Some(text) = read(file)
            && let Some(lines) = crate::just::recipe(&text, "test")
            && let Some(s) = found(lines, &format!("{file} test"))
        {
            return s;
        }
    }
    // What its CI runs to test: the newest CI system first (a workflow beside a Travis file
    // left from before the move).
    for file in python_ci_files(read) {
        if let Some(text) = read(&file)
            && let Some(s) = found(
                crate::ci_install::test_commands(&file, &text),
                &format!("{file} test steps"),
            )
        {
            return s;
        }
    }
    DocumentedSuite {
        ci_env: Vec::new(),
        withheld: Vec::new(),
        run: Language::Python.suite_run(),
        source: "the default".into(),
        selector: None,
        setup: None,
    }
}

/// The CI files whose test steps may name a Python suite: the GitHub workflows (by name),
/// then Travis', Azure Pipelines' and AppVeyor's.
fn python_ci_files(read: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut files: Vec<String> = read(".github/workflows/")
        .map(|listing| {
            let mut names: Vec<String> = listing
                .lines()
                .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
                .map(|n| format!(".github/workflows/{n}"))
                .collect();
            names.sort_unstable();
            names.truncate(50);
            names
        })
        .unwrap_or_default();
    files.extend(
        [
            ".travis.yml",
            "azure-pipelines.yml",
            "appveyor.yml",
            ".appveyor.yml",
        ]
        .map(String::from),
    );
    files
}

/// The recipe lines of a Makefile target, its variables expanded ([`make_expand`]).
fn make_target(text: &str, target: &str) -> Vec<String> {
    let vars = make_variables(text);
    let mut lines = Vec::new();
    let mut inside = false;
    for raw in text.lines() {
        if raw.starts_with('\t') {
            if inside {
                let line = raw.trim().trim_start_matches(['@', '-']);
                lines.push(make_expand(line, &vars, 0));
            }
            continue;
        }
        inside = raw.split_once(':').is_some_and(|(names, rest)| {
            !rest.starts_with('=') && names.split_whitespace().any(|n| n == target)
        });
    }
    lines
}

/// A Makefile's simple variable definitions (`NAME = v`, `NAME ?= v`, `NAME := v`, `NAME
/// ::= v`), the first of each name (a later `?=` does not override; conditionals are not
/// read).
fn make_variables(text: &str) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = Vec::new();
    for raw in text.lines() {
        if raw.starts_with('\t') {
            continue;
        }
        let line = raw.strip_prefix("export ").unwrap_or(raw).trim();
        let Some(at) = line.find('=') else {
            continue;
        };
        let name = line[..at].trim_end_matches([':', '?', '+']).trim();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if valid && !vars.iter().any(|(n, _)| n == name) {
            vars.push((name.to_string(), line[at + 1..].trim().to_string()));
        }
    }
    vars
}

/// A recipe line with `$(NAME)` and `${NAME}` replaced by the Makefile's definitions, as
/// make runs it with no variable given on its command line. A variable naming the Python
/// interpreter that the Makefile does not define (`$(PYTHON)`, commonly given by the caller
/// or the environment) stands for `python`; other undefined ones, and make's functions
/// (`$(shell …)`), stay as written, so no command is guessed from them.
fn make_expand(line: &str, vars: &[(String, String)], depth: usize) -> String {
    const PYTHONS: &[&str] = &["PYTHON", "PY", "PYTHON3", "PYTHON_BIN", "PYTHON_EXE"];
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let close = match after.chars().next() {
            Some('(') => ')',
            Some('{') => '}',
            _ => {
                out.push('$');
                rest = after;
                continue;
            }
        };
        let Some(end) = after.find(close) else {
            out.push_str(&rest[at..]);
            return out;
        };
        let name = &after[1..end];
        let value = vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .or_else(|| PYTHONS.contains(&name).then_some("python"));
        match value {
            Some(v) if depth < 8 => out.push_str(&make_expand(v, vars, depth + 1)),
            _ => out.push_str(&rest[at..at + 2 + end]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn default_env(language: Language) -> Vec<(String, String)> {
    language.suite_run().env
}

/// The npm `test` script, run by the shell inside the sandbox (node_modules/.bin is on the
/// path there); npm's placeholder script is no suite. The project's `prepare` script runs
/// first, as `npm ci` runs it after installing; a `pretest` script next, as
/// `npm test` runs it (a build the tests load, such as a TypeScript compile); `posttest`
/// runs after the tests have reported (a linter) and decides nothing about them: not run.
fn node(read: &dyn Fn(&str) -> Option<String>) -> DocumentedSuite {
    let package = read("package.json")
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .unwrap_or_default();
    let script = |name: &str| {
        package["scripts"][name]
            .as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let declared = script("test").filter(|s| !s.contains("no test specified"));
    // A CI that never runs `scripts.test` but other test scripts (vue's `test-unit` and
    // `test-e2e`, whose build only `test-e2e` runs; `test` runs both without it): those.
    // No `scripts.test`: the suite its CI ran by the era's conventions (`grunt test`,
    // `make test`), named by where it was found.
    // Each CI script runs whatever the one before it gave, as the CI's jobs run apart; the
    // suite fails where one of them failed. Each without the linters it chains.
    let mut linters = Vec::new();
    let ci = ci_test_scripts(read, &script).map(|(bodies, from)| {
        let bodies: Vec<String> = bodies
            .iter()
            .map(|body| {
                let (body, left_out) = without_linters(body, &script);
                linters.extend(left_out);
                body
            })
            .collect();
        let command = match &bodies[..] {
            [only] => only.clone(),
            _ => {
                let each: Vec<String> = bodies
                    .iter()
                    .map(|b| format!("( {b} ) || failed=1; "))
                    .collect();
                format!("failed=0; {}exit $failed", each.concat())
            }
        };
        (command, from)
    });
    let from_ci = ci.is_some();
    let (test, conventional) = match (ci, declared) {
        (Some((command, from)), _) => (Some(command), Some(from)),
        (None, Some(test)) => (Some(test), None),
        (None, None) => match conventional_node_suite(read) {
            Some((command, from)) => (Some(command), Some(from)),
            None => (None, None),
        },
    };
    match test {
        Some(test) => {
            // A linter chained before or after the tests (`… && npm run lint`, debug's `xo`;
            // `standard && tape …`) decides nothing about them, as `posttest` does not: left
            // out, and the source says so.
            let test = if from_ci {
                test
            } else {
                let (test, left_out) = without_linters(&test, &script);
                linters.extend(left_out);
                test
            };
            // A grunt task that lints first (`registerTask('test', ['jshint', …])`) aborts
            // the run before the tests, as a chained linter would: left out the same way.
            let gruntfile = grunt::GRUNTFILES
                .iter()
                .find_map(|f| read(f).map(|text| (*f, text)));
            let test = match &gruntfile {
                Some((_, text)) => without_lint_tasks(&test, text, &mut linters),
                None => test,
            };
            // `prepare` is what `npm ci` runs after installing, in the project's CI before
            // its tests (koa's builds the `dist/koa.mjs` its ESM test imports); the
            // preparation never runs a package's scripts, so the run does.
            // A step that installs packages at test time (node_redis' `optional-dev-dependency
            // hiredis`) would reach for the network the run has not: the preparation
            // installed them (`test_installs`), and the step is left out, said in the source.
            let mut installs = Vec::new();
            let test = without_test_installs(&test, &package, &mut installs).unwrap_or(test);
            let mut steps: Vec<(&str, String)> = ["prepare", "pretest"]
                .into_iter()
                .filter_map(|name| {
                    let s = script(name)?;
                    let s = without_test_installs(&s, &package, &mut installs)?;
                    // A `pretest` that lints (qs' `npm run --silent readme && npm run
                    // --silent lint`) decides nothing about the tests either: its linters are
                    // left out, the whole step where it only lints.
                    if name != "pretest" {
                        return Some((name, s));
                    }
                    let lints: Vec<&str> = s.split("&&").map(str::trim).collect();
                    if !s.contains(['|', ';', '(', '`', '$'])
                        && lints.iter().all(|step| only_lints(step, &script, 0))
                    {
                        linters.extend(lints.iter().map(|l| l.to_string()));
                        return None;
                    }
                    let (kept, left_out) = without_linters(&s, &script);
                    linters.extend(left_out);
                    Some((name, kept))
                })
                .chain([("test", test)])
                .collect();
            // The build the project's CI runs before its tests (vite: `pnpm run build`, then
            // `pnpm run test-unit`), after `prepare` as the CI's install runs it, unless
            // `prepare` or `pretest` builds already.
            let builds_already = ["prepare", "pretest"]
                .iter()
                .any(|name| script(name).is_some_and(|s| s.contains("build")));
            let ci_build = ci_build(read).filter(|_| !builds_already);
            if let Some((builds, _)) = &ci_build {
                let at = usize::from(steps.first().is_some_and(|(n, _)| *n == "prepare"));
                for (k, build) in builds.iter().enumerate() {
                    steps.insert(at + k, ("", build.clone()));
                }
            }
            let setup = node_setup(&steps, ci_build.as_ref(), gruntfile.as_ref(), &script);
            let mut command = match &steps[..] {
                [(_, only)] => only.clone(),
                // Each in a shell of its own, as npm runs them; each only after the one
                // before it succeeded.
                _ => steps
                    .iter()
                    .map(|(_, s)| format!("( {s} )"))
                    .collect::<Vec<_>>()
                    .join(" && "),
            };
            // The CI runs `prepare` in a git checkout, and a hooks installer there needs one
            // (axios: `husky install && npx husky set .husky/commit-msg …` stopped at "can't
            // create hook, .husky directory doesn't exist"): the run's copy of the tree, which
            // has no `.git`, is made an empty repository first.
            if steps.iter().any(|(name, _)| *name == "prepare") {
                command = format!("{{ [ -e .git ] || git init -q; }} 2>/dev/null; {command}");
            }
            let mut source = format!(
                "package.json {}",
                steps
                    .iter()
                    .filter(|(name, _)| !name.is_empty())
                    .map(|(name, _)| format!("scripts.{name}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if let Some(from) = &conventional {
                source = match source.strip_prefix("package.json scripts.test") {
                    Some(rest) => format!("{from}{rest}"),
                    None => source.replace("scripts.test", from),
                };
            }
            if let Some((builds, from)) = &ci_build {
                source.push_str(&format!(
                    ", after the build its CI runs before the tests: {} ({from})",
                    builds.join(", ")
                ));
            }
            if !linters.is_empty() {
                source.push_str(&format!(
                    " (without the linter it chains with the tests: {})",
                    linters.join(", ")
                ));
            }
            if !installs.is_empty() {
                source.push_str(&format!(
                    " (without its test-time install, prepared beforehand: {})",
                    installs.join(", ")
                ));
            }
            DocumentedSuite {
                ci_env: Vec::new(),
                withheld: Vec::new(),
                run: TestRun {
                    command: vec!["sh".into(), "-c".into(), command],
                    env: default_env(Language::Node),
                },
                source,
                selector: None,
                setup,
            }
        }
        None => DocumentedSuite {
            ci_env: Vec::new(),
            withheld: Vec::new(),
            run: Language::Node.suite_run(),
            source: "the default".into(),
            selector: None,
            setup: None,
        },
    }
}

/// The test scripts of package.json the tree's GitHub workflows run, when none of them is
/// `test` itself: each once, in the order of the workflows (by name) and their jobs, from
/// the jobs on Linux named for the suite (not a `lint-and-test-dts` job; see
/// [`crate::ci_install::not_the_suite`]): their bodies, with where the CI runs them. None
/// where the CI runs `test`, or no test script of the package.
fn ci_test_scripts(
    read: &dyn Fn(&str) -> Option<String>,
    script: &dyn Fn(&str) -> Option<String>,
) -> Option<(Vec<String>, String)> {
    let mut scripts: Vec<(String, String)> = Vec::new();
    let mut jobs: Vec<String> = Vec::new();
    for (path, text) in workflows(read)? {
        for job in ci_steps::jobs(&text) {
            if !ci_steps::on_linux(&job) || crate::ci_install::not_the_suite(&job.name) {
                continue;
            }
            // A script the workflow chooses by an expression (mocha's reusable workflow:
            // `npm run ${{ inputs.npm-script }}`): which ones run is not read here, so the
            // CI's test scripts are not known; `scripts.test` stays.
            if job
                .commands
                .iter()
                .any(|c| c.contains("${{") && ci_steps::script_of(c).is_some())
            {
                return None;
            }
            let mut ran = false;
            for test in ci_steps::test_scripts(&job) {
                if crate::ci_install::not_the_suite(test) {
                    continue;
                }
                if test == "test" {
                    return None;
                }
                let Some(body) = script(test) else { continue };
                ran = true;
                if !scripts.iter().any(|(n, _)| n == test) {
                    scripts.push((test.to_string(), body));
                }
            }
            if ran {
                jobs.push(format!("{path} job {}", job.name));
            }
        }
    }
    if scripts.is_empty() {
        return None;
    }
    let from = format!(
        "package.json {}, the test scripts its CI runs ({})",
        scripts
            .iter()
            .map(|(n, _)| format!("scripts.{n}"))
            .collect::<Vec<_>>()
            .join(", "),
        jobs.join(", ")
    );
    Some((scripts.into_iter().map(|(_, body)| body).collect(), from))
}

/// The suite of a Node project whose package.json has no `scripts.test`, as its CI of
/// 2012–2017 ran it by convention (karma's travis script runs `grunt test`): a Gruntfile's
/// `test` task (an alias, or a task registered in the Gruntfile or in a folder it loads
/// tasks from), else a Makefile's `test` target. The command and where it was found.
fn conventional_node_suite(read: &dyn Fn(&str) -> Option<String>) -> Option<(String, String)> {
    let registers_test = |text: &str| {
        ["registerTask", "registerMultiTask"].iter().any(|call| {
            text.match_indices(call).any(|(at, _)| {
                let rest = text[at + call.len()..].trim_start();
                let rest = rest.strip_prefix('(').unwrap_or(rest).trim_start();
                ["'test'", "\"test\""].iter().any(|q| rest.starts_with(q))
            })
        })
    };
    if let Some((file, text)) = grunt::GRUNTFILES
        .iter()
        .find_map(|f| read(f).map(|text| (*f, text)))
    {
        if registers_test(&text) {
            return Some(("grunt test".into(), format!("{file} task test")));
        }
        // `grunt.loadTasks('tasks')`: the folder's task files.
        for (at, _) in text.match_indices("loadTasks(") {
            let arg = text[at + "loadTasks(".len()..].trim_start();
            let Some(quote) = arg.chars().next().filter(|c| *c == '\'' || *c == '"') else {
                continue;
            };
            let Some(dir) = arg[1..].split(quote).next() else {
                continue;
            };
            let dir = dir.trim_start_matches("./").trim_end_matches('/');
            let listing = read(&format!("{dir}/")).unwrap_or_default();
            for name in listing
                .lines()
                .filter(|n| n.ends_with(".js") || n.ends_with(".coffee"))
            {
                if read(&format!("{dir}/{name}")).is_some_and(|t| registers_test(&t)) {
                    return Some((
                        "grunt test".into(),
                        format!("{file} task test, from {dir}/{name}"),
                    ));
                }
            }
        }
    }
    let makefile = read("Makefile")?;
    makefile
        .lines()
        .any(|l| l.starts_with("test:"))
        .then(|| ("make test".into(), "Makefile target test".into()))
}

/// What a Node suite runs before its runner, for a selected test to run after too: its
/// steps before `test` (`prepare`, the CI's build, `pretest`) that do more than lint, then
/// the tasks a `grunt` test step runs before its test runner's task (bower's `exec:assets`,
/// which makes the git repositories its tests fetch from). None where there are none.
fn node_setup(
    steps: &[(&str, String)],
    ci_build: Option<&(Vec<String>, String)>,
    gruntfile: Option<&(&str, String)>,
    script: &dyn Fn(&str) -> Option<String>,
) -> Option<Setup> {
    let (test, before) = steps.split_last()?;
    let mut commands = Vec::new();
    let mut sources = Vec::new();
    let mut built = false;
    for (name, step) in before {
        if only_lints(step, script, 0) {
            continue;
        }
        if name.is_empty() {
            if !built && let Some((_, from)) = ci_build {
                sources.push(format!("the build its CI runs before the tests ({from})"));
            }
            built = true;
        } else {
            sources.push(format!("package.json scripts.{name}"));
        }
        commands.push(format!("( {step} )"));
    }
    if let Some((file, text)) = gruntfile
        && let Some((command, tasks)) = grunt::setup_tasks(&test.1, text)
    {
        sources.push(format!("{file}: {}", tasks.join(", ")));
        commands.push(format!("( {command} )"));
    }
    if commands.is_empty() {
        return None;
    }
    let mut command = commands.join(" && ");
    if before.iter().any(|(name, _)| *name == "prepare") {
        command = format!("{{ [ -e .git ] || git init -q; }} 2>/dev/null; {command}");
    }
    Some(Setup {
        command,
        source: sources.join(", "),
    })
}

/// `script` without its `&&`-chained steps that only install packages at test time
/// ([`crate::test_installs::is_test_install`]), those added to `left_out`; None when nothing
/// else is left.
fn without_test_installs(
    script: &str,
    package: &serde_json::Value,
    left_out: &mut Vec<String>,
) -> Option<String> {
    let (installs, kept): (Vec<&str>, Vec<&str>) = script
        .split("&&")
        .map(str::trim)
        .partition(|step| crate::test_installs::is_test_install(step, package));
    if installs.is_empty() {
        return Some(script.to_string());
    }
    left_out.extend(installs.iter().map(|s| s.to_string()));
    (!kept.is_empty()).then(|| kept.join(" && "))
}

/// The build commands the first job of the tree's GitHub workflows that builds before it
/// tests runs ([`ci_steps::build_before_tests`]), with where it says so (`FILE job NAME`).
/// `read("DIR/")` lists a folder's files.
fn ci_build(read: &dyn Fn(&str) -> Option<String>) -> Option<(Vec<String>, String)> {
    workflows(read)?.into_iter().find_map(|(path, text)| {
        ci_steps::jobs(&text).into_iter().find_map(|job| {
            ci_steps::build_before_tests(&job).map(|b| (b, format!("{path} job {}", job.name)))
        })
    })
}

/// The tree's GitHub workflows (`.github/workflows/*.yml`, by name, at most 50), each with
/// its text; None where the folder cannot be listed. `read("DIR/")` lists a folder's files.
pub(crate) fn workflows(read: &dyn Fn(&str) -> Option<String>) -> Option<Vec<(String, String)>> {
    let listing = read(".github/workflows/")?;
    let mut names: Vec<&str> = listing
        .lines()
        .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
        .collect();
    names.sort_unstable();
    Some(
        names
            .into_iter()
            .take(50)
            .filter_map(|name| {
                let path = format!(".github/workflows/{name}");
                read(&path).map(|text| (path, text))
            })
            .collect(),
    )
}

/// `test` with each `&&`-chained grunt step run without its lint tasks
/// ([`grunt::without_lint_tasks`]), those tasks added to `linters`.
fn without_lint_tasks(test: &str, gruntfile: &str, linters: &mut Vec<String>) -> String {
    let before = linters.len();
    if test.contains(['|', ';', '(', '`', '$']) {
        return test.to_string();
    }
    let steps: Vec<String> = test
        .split("&&")
        .map(str::trim)
        .map(|step| match grunt::without_lint_tasks(step, gruntfile) {
            Some((kept, lints)) => {
                linters.extend(lints);
                kept
            }
            None => step.to_string(),
        })
        .collect();
    if linters.len() == before {
        return test.to_string();
    }
    steps.join(" && ")
}

/// Linters a test script may chain after its tests: they read the code, never run it.
const LINTERS: &[&str] = &[
    "xo",
    "eslint",
    "standard",
    "semistandard",
    "jshint",
    "jscs",
    "tslint",
    "stylelint",
    "markdownlint",
    "prettier",
];

/// `test` without its steps that only lint (`&&`-chained, before the tests or after them: a
/// linter, or `npm run NAME` / `yarn NAME` / `pnpm NAME` of a script that only lints), and
/// those steps. A script of one step, or whose every step lints, is kept whole.
fn without_linters(test: &str, script: &dyn Fn(&str) -> Option<String>) -> (String, Vec<String>) {
    let steps: Vec<&str> = test.split("&&").map(str::trim).collect();
    if steps.len() < 2 || steps.iter().any(|s| s.contains(['|', ';', '(', '`', '$'])) {
        return (test.to_string(), Vec::new());
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut dropped: Vec<String> = Vec::new();
    for step in &steps {
        if only_lints(step, script, 0) {
            dropped.push(step.to_string());
        } else {
            kept.push(step);
        }
    }
    if dropped.is_empty() || kept.is_empty() {
        return (test.to_string(), Vec::new());
    }
    (kept.join(" && "), dropped)
}

/// One step of a script runs a linter and nothing else (through npm, yarn or pnpm's
/// `run` of a script of the package, to a depth of three).
fn only_lints(step: &str, script: &dyn Fn(&str) -> Option<String>, depth: usize) -> bool {
    let words: Vec<&str> = step.split_whitespace().collect();
    let words = match words.as_slice() {
        ["npx", rest @ ..] => rest,
        rest => rest,
    };
    // A package manager's own options (`npm run --silent lint`, `yarn -s lint`) say nothing
    // of what the script runs.
    let stripped: Vec<&str>;
    let words = match words.first() {
        Some(&("npm" | "yarn" | "pnpm")) => {
            stripped = words
                .iter()
                .copied()
                .filter(|w| !w.starts_with('-'))
                .collect();
            &stripped[..]
        }
        _ => words,
    };
    let named = match words {
        ["npm", "run" | "run-script", name] | ["yarn" | "pnpm", "run", name] => Some(*name),
        ["yarn" | "pnpm", name] if !["install", "test"].contains(name) => Some(*name),
        _ => None,
    };
    if let Some(name) = named {
        return depth < 3
            && script(name).is_some_and(|body| {
                body.split("&&")
                    .map(str::trim)
                    .all(|s| only_lints(s, script, depth + 1))
            });
    }
    match words.first() {
        // prettier lints only when it checks; it rewrites files otherwise.
        Some(&"prettier") => words
            .iter()
            .any(|w| *w == "--check" || *w == "-c" || *w == "--list-different" || *w == "-l"),
        Some(first) => LINTERS.contains(first),
        None => false,
    }
}

/// The whole suite of a tree, as its project documents it where a wrapper would run it.
/// `read(PATH)` gives a file's text; `read("DIR/")` the names of a folder's files, one per
/// line (None where the caller cannot list one: CI workflows are then not read).
pub fn documented_suite(
    language: Language,
    read: &dyn Fn(&str) -> Option<String>,
) -> DocumentedSuite {
    let mut suite = match language {
        Language::Python => python(read),
        Language::Node => node(read),
        Language::Rust => rust(read),
        Language::Go => DocumentedSuite {
            ci_env: Vec::new(),
            withheld: Vec::new(),
            run: language.suite_run(),
            source: "the default".into(),
            selector: None,
            setup: None,
        },
    };
    // The variables its CI's test job sets, beneath those of its own command and Proven's.
    // tox hands its commands only what its `pass_env` names.
    let tox = match language {
        Language::Python => crate::tox::Tox::find(read)
            .filter(|t| suite.source.starts_with(&format!("{} [testenv]", t.source))),
        _ => None,
    };
    if let Some((vars, source)) = crate::ci_env::ci_env(read) {
        let (mut taken, mut left) = (Vec::new(), Vec::new());
        for (name, value) in vars {
            if suite.run.env.iter().any(|(have, _)| *have == name) {
                continue;
            }
            if tox.as_ref().is_some_and(|t| !t.passes(&name)) {
                left.push(name);
                continue;
            }
            taken.push(name.clone());
            suite.ci_env.push((name.clone(), value.clone()));
            suite.run.env.push((name, value));
        }
        if !taken.is_empty() {
            let _ = write!(suite.source, "; {source} ({})", taken.join(", "));
        }
        if !left.is_empty() {
            let _ = write!(
                suite.source,
                "; not passed on by tox: {source} ({})",
                left.join(", ")
            );
        }
    }
    suite
}

/// A Rust project's suite: `cargo test` with the options its CI gives it
/// ([`crate::cargo_ci`]), else the default.
fn rust(read: &dyn Fn(&str) -> Option<String>) -> DocumentedSuite {
    let mut run = Language::Rust.suite_run();
    match crate::cargo_ci::ci_test(read) {
        Some(ci) if !(ci.options.is_empty() && ci.binary.is_empty()) => {
            run.command.extend(ci.options);
            if !ci.binary.is_empty() {
                run.command.push("--".into());
                run.command.extend(ci.binary);
            }
            DocumentedSuite {
                ci_env: Vec::new(),
                withheld: Vec::new(),
                run,
                source: format!("{} cargo test", ci.source),
                selector: None,
                setup: None,
            }
        }
        _ => DocumentedSuite {
            ci_env: Vec::new(),
            withheld: Vec::new(),
            run,
            source: "the default".into(),
            selector: None,
            setup: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(language: Language, files: &[(&str, &str)]) -> DocumentedSuite {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        documented_suite(language, &|p| {
            if p.ends_with('/') {
                let names: Vec<&str> = files
                    .iter()
                    .filter_map(|(n, _)| n.strip_prefix(p))
                    .filter(|rest| !rest.contains('/'))
                    .collect();
                return (!names.is_empty()).then(|| names.join("\n"));
            }
            files.iter().find(|(n, _)| n == p).map(|(_, t)| t.clone())
        })
    }

    fn one(names: &[&str], path: &str) -> Selection {
        Selection {
            path: path.into(),
            names: names.iter().map(|n| n.to_string()).collect(),
            package: None,
        }
    }

    /// A Rust project's suite has its CI's features (a crate whose CI always tests with
    /// `--all-features` rarely gates its tests), and a selected test builds with them.
    #[test]
    fn a_rust_suite_and_its_selected_tests_build_as_its_ci_does() {
        let workflow = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: dtolnay/rust-toolchain@stable\n      - run: cargo test --all-features --release --tests\n";
        let ci = suite(
            Language::Rust,
            &[("Cargo.toml", ""), (".github/workflows/ci.yml", workflow)],
        );
        assert_eq!(
            ci.run.command,
            ["cargo", "test", "--offline", "--all-features", "--tests"]
        );
        assert_eq!(ci.source, ".github/workflows/ci.yml job test cargo test");
        let selected = ci.select(
            Language::Rust,
            &Selection {
                path: "tests/test_expr.rs".into(),
                names: vec!["test_paren".into()],
                package: None,
            },
            0,
        );
        assert_eq!(
            selected.command,
            [
                "cargo",
                "test",
                "--offline",
                "--all-features",
                "--test",
                "test_expr",
                "--",
                "test_paren",
                "--exact"
            ]
        );
        // Without a CI that says otherwise: the default, and the language's own command.
        let plain = suite(Language::Rust, &[("Cargo.toml", "")]);
        assert_eq!(plain.run, Language::Rust.suite_run());
        assert_eq!(plain.source, "the default");
        let one = Selection {
            path: "tests/a.rs".into(),
            names: Vec::new(),
            package: None,
        };
        assert_eq!(
            plain.select(Language::Rust, &one, 0),
            Language::Rust.test_run(&one, 0)
        );
    }

    /// A Node project of before `npm test` was the convention has no `scripts.test`: its CI
    /// ran `grunt test` (karma's travis script) or `make test`. The suite is that, named by
    /// where it was found, never `node --test` over files it cannot load.
    #[test]
    fn a_node_project_with_no_test_script_runs_its_grunt_or_make_test() {
        let package = (
            "package.json",
            r#"{"name": "k", "devDependencies": {"grunt": "0.4.5"}}"#,
        );
        // A multi-task the Gruntfile loads from its tasks folder (karma's).
        let karma = suite(
            Language::Node,
            &[
                package,
                (
                    "gruntfile.js",
                    "module.exports = function (grunt) {\n  grunt.loadTasks('tasks')\n  grunt.registerTask('default', ['build', 'test', 'lint'])\n}\n",
                ),
                (
                    "tasks/init-dev-env.js",
                    "module.exports = function (grunt) { grunt.registerTask('init-dev-env', 'x', function () {}) }\n",
                ),
                (
                    "tasks/test.js",
                    "module.exports = function (grunt) {\n  grunt.registerMultiTask('test', 'Run tests.', function () {})\n}\n",
                ),
            ],
        );
        assert_eq!(karma.run.command, ["sh", "-c", "grunt test"]);
        assert_eq!(karma.source, "gruntfile.js task test, from tasks/test.js");
        // An alias in the Gruntfile itself, its lint task left out as for a script's.
        let aliased = suite(
            Language::Node,
            &[
                package,
                (
                    "Gruntfile.js",
                    "grunt.registerTask('test', ['jshint', 'mochaTest'])\n",
                ),
            ],
        );
        assert_eq!(aliased.run.command, ["sh", "-c", "grunt mochaTest"]);
        assert!(
            aliased.source.contains("Gruntfile.js task test"),
            "{}",
            aliased.source
        );
        // A Makefile's test target.
        let make = suite(
            Language::Node,
            &[
                package,
                (
                    "Makefile",
                    "TESTS = test/*.js\ntest:\n\t./node_modules/.bin/mocha $(TESTS)\n",
                ),
            ],
        );
        assert_eq!(make.run.command, ["sh", "-c", "make test"]);
        assert!(
            make.source.contains("Makefile target test"),
            "{}",
            make.source
        );
        // Neither: the sandbox's convention.
        let none = suite(
            Language::Node,
            &[
                package,
                ("Gruntfile.js", "grunt.registerTask('build', ['uglify'])\n"),
            ],
        );
        assert_eq!(none.source, "the default");
    }

    /// A Makefile recipe whose command substitution prints options for some machines only
    /// (psutil's `` `{ if [ "$$OS" = "Windows_NT" ]; then printf … '-o cache_dir=…'; fi; }` ``):
    /// left out whole, never pytest arguments (pytest had stopped at "Unknown config option:
    /// cache_dir", collecting nothing).
    #[test]
    fn a_command_substitution_in_a_recipe_is_left_out() {
        let makefile = (
            "Makefile",
            "PYTHON = python3\n_PYTEST_EXTRA = `{ if [ \"$$OS\" = \"Windows_NT\" ]; then printf '%s ' '-o cache_dir=/tmp/c'; fi; if [ -n \"$$CI\" ]; then printf '%s ' '-p no:instafail'; fi; }`\n\
             RUN_TEST = $(PYTHON) -m pytest --durations=5 $(_PYTEST_EXTRA) $(shell echo -x)\n\
             test:\n\t$(RUN_TEST) $(ARGS)\n",
        );
        let psutil = suite(Language::Python, &[("setup.py", "setup()"), makefile]);
        assert_eq!(
            psutil.run.command,
            ["python3", "-m", "pytest", "--durations=5"]
        );
        assert_eq!(psutil.source, "Makefile test");
    }

    /// A Python project with neither tox nor nox nor a Makefile's `test` runs its suite as
    /// its CI does (keras of 2019: the `else` of its Travis test modes, integration tests
    /// and docs left out), never pytest over the whole tree.
    #[test]
    fn a_python_suite_is_what_its_ci_runs_to_test() {
        let travis = (
            ".travis.yml",
            "language: python\ninstall:\n  - pip install -e .[tests]\nscript:\n  - python -c \"import keras.backend\"\n  - if [[ \"$TEST_MODE\" == \"INTEGRATION_TESTS\" ]]; then\n      PYTHONPATH=$PWD:$PYTHONPATH py.test tests/integration_tests;\n    elif [[ \"$TEST_MODE\" == \"PEP8_DOC\" ]]; then\n      py.test --pep8 -m pep8 -n0 && py.test tests/docs;\n    else\n      PYTHONPATH=$PWD:$PYTHONPATH py.test tests/ --ignore=tests/integration_tests --ignore=tests/docs --cov-config .coveragerc --cov=keras tests/;\n    fi\n",
        );
        let keras = suite(Language::Python, &[("setup.py", "setup()"), travis]);
        assert_eq!(
            keras.run.command,
            [
                "python3",
                "-m",
                "pytest",
                "tests/",
                "--ignore=tests/integration_tests",
                "--ignore=tests/docs",
                "tests/"
            ]
        );
        assert_eq!(keras.source, ".travis.yml test steps");
        let selector = keras.selector.expect("selects within it");
        assert_eq!(selector.runner, PythonRunner::Pytest);
        // A workflow's test job, not its docs job, and before a Travis file left behind.
        let workflow = (
            ".github/workflows/ci.yml",
            "on: [push]\njobs:\n  docs:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest docs/\n  tests:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: pip install -e .\n      - name: test\n        run: |\n          python -m pytest -x tests/unit\n",
        );
        let both = suite(
            Language::Python,
            &[("setup.py", "setup()"), travis, workflow],
        );
        assert_eq!(
            both.run.command,
            ["python3", "-m", "pytest", "-x", "tests/unit"]
        );
        assert_eq!(both.source, ".github/workflows/ci.yml test steps");
        // tox's commands come first; a CI running only what no runner is read from gives
        // the default.
        let tox = (
            "tox.ini",
            "[tox]\nenvlist = py37\n[testenv]\ncommands = pytest tests/fast\n",
        );
        let with_tox = suite(Language::Python, &[tox, travis]);
        assert_eq!(
            with_tox.run.command,
            ["python3", "-m", "pytest", "tests/fast"]
        );
        let other = (
            ".travis.yml",
            "script:\n  - make docs\n  - ./run-something.sh\n",
        );
        let none = suite(Language::Python, &[("setup.py", "setup()"), other]);
        assert_eq!(none.source, "the default");
    }

    #[test]
    fn coverage_run_of_the_projects_runner_script_is_its_suite_and_selects_within_it() {
        // luigi's tox.ini: coverage around its own test/runtests.py (which hands its
        // arguments to pytest.main), tox's variables the tests read, a line for some
        // environments only.
        let tox = "[testenv]\nset_env = PYTHONPATH = {toxinidir}{/}src\nsetenv =\n  LC_ALL = en_US.utf-8\n  cdh: HADOOP_DISTRO=cdh\n  LUIGI_CONFIG_PATH={toxinidir}/test/testconfig/luigi.cfg\n  TMP_THING={envtmpdir}/x\ncommands =\n  python --version\n  python -m coverage erase\n  python -m coverage run test/runtests.py -m '{env:NOSE_ATTR:}' --durations=10 {posargs:}\n  python -m coverage combine\n";
        let runtests = "import sys\nimport pytest\nif __name__ == '__main__':\n    sys.exit(pytest.main(sys.argv[1:]))\n";
        let s = suite(
            Language::Python,
            &[("tox.ini", tox), ("test/runtests.py", runtests)],
        );
        assert_eq!(
            s.source,
            "tox.ini [testenv] commands, setenv; CI not passed on by tox"
        );
        assert_eq!(
            s.run.command,
            ["python3", "test/runtests.py", "-m", "", "--durations=10"]
        );
        let env = |k: &str| {
            s.run
                .env
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(
            env("LUIGI_CONFIG_PATH").as_deref(),
            Some("/work/test/testconfig/luigi.cfg")
        );
        assert_eq!(env("LC_ALL").as_deref(), Some("en_US.utf-8"));
        assert_eq!(
            env("PYTHONPATH").as_deref(),
            Some("/work/src"),
            "tox 4's set_env"
        );
        assert_eq!(
            env("HADOOP_DISTRO"),
            None,
            "a line for the cdh environments"
        );
        assert_eq!(env("TMP_THING"), None, "what tox would make");
        let run = s.select(
            Language::Python,
            &one(&["FooTest::test_x"], "test/foo_test.py"),
            0,
        );
        assert_eq!(
            run.command,
            [
                "python3",
                "test/runtests.py",
                "--durations=10",
                "test/foo_test.py::FooTest::test_x"
            ]
        );
        assert!(run.env.iter().any(|(k, _)| k == "LUIGI_CONFIG_PATH"));
        assert!(run.env.iter().any(|(k, _)| k == "PYTHONHASHSEED"));
        // A runner script of unittest's kind names a test by its module.
        let s = suite(
            Language::Python,
            &[
                (
                    "tox.ini",
                    "[testenv]\ncommands = coverage run --branch --source pkg runtests.py {posargs}\n",
                ),
                (
                    "runtests.py",
                    "import unittest\nunittest.main(module=None)\n",
                ),
            ],
        );
        assert_eq!(s.run.command, ["python3", "runtests.py"]);
        let run = s.select(
            Language::Python,
            &one(&["ATest::test_y"], "tests/test_a.py"),
            0,
        );
        assert_eq!(
            run.command,
            ["python3", "runtests.py", "tests.test_a.ATest.test_y"]
        );
        // Django's manage.py and Twisted's trial take dotted names too.
        let s = suite(
            Language::Python,
            &[
                (
                    "tox.ini",
                    "[testenv]\ncommands = coverage run manage.py test --noinput {posargs}\n",
                ),
                ("manage.py", "import django\n"),
            ],
        );
        assert_eq!(s.run.command, ["python3", "manage.py", "test", "--noinput"]);
        let run = s.select(Language::Python, &one(&["T::test_z"], "app/tests.py"), 0);
        assert_eq!(
            run.command,
            [
                "python3",
                "manage.py",
                "test",
                "--noinput",
                "app.tests.T.test_z"
            ]
        );
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[testenv]\ncommands = trial --reporter=text {posargs:mypkg}\n",
            )],
        );
        assert_eq!(
            s.run.command,
            ["python3", "-m", "twisted.trial", "--reporter=text", "mypkg"]
        );
        let run = s.select(
            Language::Python,
            &one(&["T::test_z"], "mypkg/test/test_a.py"),
            0,
        );
        assert_eq!(
            run.command,
            [
                "python3",
                "-m",
                "twisted.trial",
                "mypkg.test.test_a.T.test_z"
            ]
        );
        // A script that runs a fixed list is the suite, but selects no single test: the
        // sandbox's own command does.
        let s = suite(
            Language::Python,
            &[
                ("tox.ini", "[testenv]\ncommands = python tests/run_all.py\n"),
                (
                    "tests/run_all.py",
                    "import pytest\npytest.main(['tests', '-x'])\n",
                ),
            ],
        );
        assert_eq!(s.run.command, ["python3", "tests/run_all.py"]);
        let selection = one(&["test_q"], "tests/test_q.py");
        let mut own = Language::Python.test_run(&selection, 0);
        own.env.retain(|(k, _)| k != "CI");
        assert_eq!(
            s.select(Language::Python, &selection, 0),
            own,
            "tox passes no CI"
        );
        // A script the tree does not hold is none of its suite.
        let s = suite(
            Language::Python,
            &[("tox.ini", "[testenv]\ncommands = python runtests.py\n")],
        );
        assert_eq!(s.source, "the default");
        // Nor is a script that runs no tests.
        let s = suite(
            Language::Python,
            &[
                ("tox.ini", "[testenv]\ncommands = python build.py\n"),
                ("build.py", ""),
            ],
        );
        assert_eq!(s.source, "the default");
    }

    #[test]
    fn each_wrapped_runner_selects_one_test_as_it_names_tests() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "python -m coverage run --source=pkg -m pytest tests -k 'not slow' -x",
                &["python3", "-m", "pytest", "tests", "-k", "not slow", "-x"],
                &[
                    "python3",
                    "-m",
                    "pytest",
                    "-x",
                    "tests/test_a.py::A::test_x",
                ],
            ),
            (
                "coverage run -m unittest discover -s tests -v",
                &["python3", "-m", "unittest", "discover", "-s", "tests", "-v"],
                &["python3", "-m", "unittest", "tests.test_a.A.test_x"],
            ),
            (
                "{envbindir}/py.test --tb=short {posargs:tests}",
                &["python3", "-m", "pytest", "--tb=short", "tests"],
                &[
                    "python3",
                    "-m",
                    "pytest",
                    "--tb=short",
                    "tests/test_a.py::A::test_x",
                ],
            ),
            (
                "nosetests -v --with-doctest -a '!slow' {posargs:tests}",
                &[
                    "python3",
                    "-m",
                    "nose",
                    "-v",
                    "--with-doctest",
                    "-a",
                    "!slow",
                    "tests",
                ],
                &[
                    "python3",
                    "-m",
                    "nose",
                    "-v",
                    "--with-doctest",
                    "tests/test_a.py:A.test_x",
                ],
            ),
            (
                "{envpython} -m coverage run -p -m nose tests",
                &["python3", "-m", "nose", "tests"],
                &["python3", "-m", "nose", "tests/test_a.py:A.test_x"],
            ),
            (
                "poetry run pytest tests/",
                &["python3", "-m", "pytest", "tests/"],
                &["python3", "-m", "pytest", "tests/test_a.py::A::test_x"],
            ),
        ];
        for (line, command, selected) in cases {
            let s = suite(
                Language::Python,
                &[("tox.ini", &format!("[testenv]\ncommands = {line}\n"))],
            );
            assert_eq!(s.run.command, *command, "{line}");
            let run = s.select(Language::Python, &one(&["A::test_x"], "tests/test_a.py"), 0);
            assert_eq!(run.command, *selected, "{line}");
        }
    }

    /// Whole test files run within the suite as its runner names a file, with its options
    /// (the run in place of a whole suite that outlasts `suite_timeout`).
    #[test]
    fn whole_files_run_within_the_suite_as_its_runner_names_files() {
        let files = [
            "tests/test_a.py".to_string(),
            "tests/b/test_c.py".to_string(),
        ];
        for (line, selected) in [
            (
                "pytest --tb=short --ignore=tests/docs tests",
                &[
                    "python3",
                    "-m",
                    "pytest",
                    "--tb=short",
                    "--ignore=tests/docs",
                    "tests/test_a.py",
                    "tests/b/test_c.py",
                ][..],
            ),
            (
                "python -m unittest discover -s tests -v",
                &[
                    "python3",
                    "-m",
                    "unittest",
                    "tests.test_a",
                    "tests.b.test_c",
                ][..],
            ),
        ] {
            let s = suite(
                Language::Python,
                &[("tox.ini", &format!("[testenv]\ncommands = {line}\n"))],
            );
            let run = s.select_files(Language::Python, &files).expect("selects");
            assert_eq!(run.command, selected, "{line}");
            assert!(s.select_files(Language::Python, &[]).is_none());
        }
        // A file the suite's options ignore is left out; none left, no run.
        let ignoring = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[testenv]\ncommands = pytest --ignore=tests/b --ignore tests/test_x.py tests\n",
            )],
        );
        let run = ignoring
            .select_files(Language::Python, &files)
            .expect("selects");
        assert_eq!(
            run.command.last().map(String::as_str),
            Some("tests/test_a.py")
        );
        assert!(!run.command.iter().any(|w| w == "tests/b/test_c.py"));
        let only_ignored = [
            "tests/b/test_c.py".to_string(),
            "tests/test_x.py".to_string(),
        ];
        assert!(
            ignoring
                .select_files(Language::Python, &only_ignored)
                .is_none()
        );
        // No suite documented: the sandbox's pytest over the files.
        let default = suite(Language::Python, &[("calc.py", "")]);
        let run = default
            .select_files(Language::Python, &files)
            .expect("selects");
        assert_eq!(run.command[run.command.len() - 2..], files);
        let node = suite(
            Language::Node,
            &[("package.json", r#"{"scripts":{"test":"mocha"}}"#)],
        );
        assert!(node.select_files(Language::Node, &files).is_none());
        // Rust runs members by package, with the suite's features and binary options.
        let ci = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test --all-features -- --test-threads=1\n";
        let rust = suite(
            Language::Rust,
            &[("Cargo.toml", ""), (".github/workflows/ci.yml", ci)],
        );
        assert_eq!(
            rust.select_packages(Language::Rust, &["calc".into(), "api".into()])
                .expect("selects")
                .command,
            [
                "cargo",
                "test",
                "--offline",
                "--all-features",
                "-p",
                "calc",
                "-p",
                "api",
                "--",
                "--test-threads=1"
            ]
        );
        assert!(rust.select_packages(Language::Rust, &[]).is_none());
        assert!(
            rust.select_packages(Language::Go, &["calc".into()])
                .is_none()
        );
        // Go runs the files' packages, each once.
        let go = suite(Language::Go, &[("go.mod", "module m\n")]);
        let go_files = [
            "calc/calc_test.go".to_string(),
            "calc/more_test.go".to_string(),
            "api/api_test.go".to_string(),
            "root_test.go".to_string(),
        ];
        assert_eq!(
            go.select_files(Language::Go, &go_files)
                .expect("selects")
                .command,
            ["go", "test", "-count=1", "-v", "./calc", "./api", "."]
        );
    }

    #[test]
    fn setup_py_test_runs_the_runner_its_setup_names() {
        let tox = ("tox.ini", "[testenv]\ncommands = python setup.py test\n");
        // setuptools' test_suite: unittest over that package.
        let s = suite(
            Language::Python,
            &[
                tox,
                (
                    "setup.py",
                    "from setuptools import setup\nsetup(name='x', test_suite = 'tests')\n",
                ),
                ("tests/__init__.py", ""),
            ],
        );
        assert_eq!(
            s.run.command,
            [
                "python3", "-m", "unittest", "discover", "-s", "tests", "-t", "."
            ]
        );
        let run = s.select(Language::Python, &one(&["T::test_x"], "tests/test_a.py"), 0);
        assert_eq!(
            run.command,
            ["python3", "-m", "unittest", "tests.test_a.T.test_x"]
        );
        // pytest-runner's alias.
        let s = suite(
            Language::Python,
            &[
                tox,
                (
                    "setup.py",
                    "from setuptools import setup\nsetup(name='x', test_suite='tests')\n",
                ),
                ("setup.cfg", "[aliases]\ntest = pytest\n"),
            ],
        );
        assert_eq!(s.run.command, ["python3", "-m", "pytest"]);
        // nose's collector.
        let s = suite(
            Language::Python,
            &[
                tox,
                ("setup.py", "setup(name='x', test_suite='nose.collector')\n"),
            ],
        );
        assert_eq!(s.run.command, ["python3", "-m", "nose"]);
    }

    #[test]
    fn a_tox_command_goes_on_past_a_backslash_and_runs_the_projects_own_runner_module() {
        // tornadoweb/tornado's tox.ini: one command over many lines, comments between them,
        // a line for the `opt` environments only; the runner is a module of the tree.
        let tox = "[testenv]\ncommands =\n         python \\\n         # py3*: -b turns on an extra warning\n         -bb \\\n         \"-Werror\" \\\n         opt: -O \\\n         -m tornado.test.runtests \\\n         # a comment\n         {posargs:}\n";
        let s = suite(
            Language::Python,
            &[("tox.ini", tox), ("tornado/test/runtests.py", "")],
        );
        assert_eq!(s.run.command, ["python3", "-m", "tornado.test.runtests"]);
        // A module the tree does not hold is an installed tool, never run as a suite.
        let s = suite(Language::Python, &[("tox.ini", tox)]);
        assert_eq!(s.source, "the default");
        // httpie's: py.test with its options on the lines after.
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[testenv]\ncommands =\n    # NOTE: the order matters\n    py.test \\\n        --verbose \\\n        --doctest-modules \\\n        {posargs:./httpie ./tests}\n",
            )],
        );
        assert_eq!(
            s.run.command,
            [
                "python3",
                "-m",
                "pytest",
                "--verbose",
                "--doctest-modules",
                "./httpie",
                "./tests"
            ],
            "tox's default for the positional arguments"
        );
        // dateutil's: the default holds substitutions of its own, quoted.
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[testenv]\ncommands = python -m pytest {posargs: \"{toxinidir}/tests\" \"{toxinidir}/docs\" --cov-config=\"{toxinidir}/tox.ini\" --cov=pkg}\n",
            )],
        );
        assert_eq!(
            s.run.command,
            ["python3", "-m", "pytest", "tests", "docs"],
            "a default with substitutions of its own"
        );
    }

    #[test]
    fn an_inline_comment_of_a_tox_command_is_not_an_argument() {
        // youtube-dl's tox.ini
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[testenv]\ndeps =\n   nose\ncommands = nosetests --verbose {posargs:test}  # --with-coverage --cover-html\n",
            )],
        );
        assert_eq!(
            s.run.command,
            ["python3", "-m", "nose", "--verbose", "test"]
        );
    }

    /// tox 4 names its substitutions anew (`{tox_root}`, `{env_python}`,
    /// `{env_site_packages_dir}`) and takes the tox 3 names alike: the suite reads both.
    /// boltons' `{tox_root}/tests` was passed to pytest as it stood, a path that is nowhere
    /// (exit 4, "file or directory not found"), so no test of the project ever ran.
    #[test]
    fn tox_4s_names_of_its_substitutions_are_read_as_tox_3s() {
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[tox]\nenvlist = py312\n\n[testenv]\nchangedir = .tox\ndependency_groups = dev\ncommands = pytest --doctest-modules {env_site_packages_dir}/boltons {tox_root}/tests {posargs}\n",
            )],
        );
        assert_eq!(
            s.run.command,
            ["python3", "-m", "pytest", "--doctest-modules", "tests"]
        );
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[testenv]\nsetenv = DATA={tox_root}/data\ncommands = {env_python} -m pytest {tox_root}/t\n",
            )],
        );
        assert_eq!(s.run.command, ["python3", "-m", "pytest", "t"]);
        assert!(
            s.run
                .env
                .contains(&("DATA".to_string(), "/work/data".to_string())),
            "{:?}",
            s.run.env
        );
    }

    #[test]
    fn tox_commands_kept_in_pyproject_are_the_documented_suite() {
        // tqdm/tqdm keeps tox's configuration in pyproject.toml.
        let s = suite(
            Language::Python,
            &[(
                "pyproject.toml",
                "[tool.tox]\nlegacy_tox_ini = \"\"\"\n[testenv]\ncommands=\n    {envpython} -m pytest --cov=tqdm --cov-report= -k \"not perf\"\n    {[core]commands}\n\"\"\"\n",
            )],
        );
        assert_eq!(
            s.source,
            "pyproject.toml [tool.tox] legacy_tox_ini [testenv] commands; CI not passed on by tox"
        );
        assert_eq!(s.run.command, ["python3", "-m", "pytest", "-k", "not perf"]);
    }

    #[test]
    fn tox_commands_become_the_runner_they_wrap() {
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[tox]\nenvlist = py37\n\n[testenv]\ndeps = pytest\ncommands =\n    flake8 src\n    pytest --cov=pkg --cov-report term -n auto {posargs:tests}\n",
            )],
        );
        assert_eq!(
            s.source,
            "tox.ini [testenv] commands; CI not passed on by tox"
        );
        assert_eq!(
            s.run.command,
            ["python3", "-m", "pytest", "tests"],
            "tox's default positional arguments"
        );
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[testenv]\ncommands = python -m unittest discover -s tests\n",
            )],
        );
        assert_eq!(
            s.run.command,
            ["python3", "-m", "unittest", "discover", "-s", "tests"]
        );
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[testenv]\ncommands = {envpython} -m pytest {toxinidir}/tests -k 'not slow'\n",
            )],
        );
        assert_eq!(
            s.run.command,
            ["python3", "-m", "pytest", "tests", "-k", "not slow"]
        );
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[testenv]\ncommands = coverage run -m pytest tests\n",
            )],
        );
        assert_eq!(&s.run.command[3..], ["tests"]);
    }

    /// urllib3's noxfile: the test session runs a helper whose pytest call spans lines and
    /// holds conditional arguments; a later session runs another project's suite in a
    /// clone (`pytest tests`, a directory this tree does not have).
    #[test]
    fn a_nox_test_session_is_read_through_its_helper() {
        let noxfile = "import nox\n\ndef tests_impl(session, integration=False):\n    session.run(\"python\", \"-c\", \"import sys; print(sys.version)\", silent=True)\n    session.run(\"python\", \"-m\", \"OpenSSL.debug\")\n    session.run(\n        \"python\",\n        \"-m\",\n        \"coverage\",\n        \"run\",\n        \"--parallel-mode\",\n        \"-m\",\n        \"pytest\",\n        *((\"--integration\",) if integration else ()),\n        \"--tb=native\",\n        *(session.posargs or (\"test/\",)),\n    )\n\n@nox.session(python=[\"3.12\"])\ndef test(session):\n    tests_impl(session)\n\n@nox.session()\ndef downstream(session):\n    session.cd(\"/tmp/clone\")\n    session.run(\"pytest\", \"tests\")\n";
        let s = suite(Language::Python, &[("noxfile.py", noxfile)]);
        assert_eq!(s.source, "noxfile.py session test");
        assert_eq!(
            s.run.command,
            ["python3", "-m", "pytest", "--tb=native", "test/"],
            "the test session's pytest through coverage, its default positional arguments"
        );
    }

    /// luxon's: its workflow's test job sets the time zone its tests expect; the suite and
    /// a test selected within it run with it, and a variable the suite's command sets
    /// itself (tox's `setenv`) stays the command's.
    #[test]
    fn the_variables_of_the_cis_test_job_reach_the_suite_and_its_selected_tests() {
        let workflow = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    env:\n      TZ: America/New_York\n      MODE: ci\n    steps:\n      - run: npm test\n";
        let files = [
            (".github/workflows/test.yml", workflow),
            ("package.json", "{\"scripts\": {\"test\": \"jest\"}}"),
        ];
        let s = suite(Language::Node, &files);
        assert!(
            s.run
                .env
                .contains(&("TZ".into(), "America/New_York".into())),
            "{:?}",
            s.run.env
        );
        assert!(
            s.source
                .ends_with("; .github/workflows/test.yml job test env (TZ, MODE)"),
            "{}",
            s.source
        );
        let selection = Selection {
            path: "test/zone.test.js".into(),
            names: Vec::new(),
            package: None,
        };
        let run = s.select(Language::Node, &selection, 0);
        assert!(run.env.contains(&("TZ".into(), "America/New_York".into())));
        let tox = "[testenv]\npassenv = TZ\nsetenv =\n  MODE = tox\ncommands = pytest tests\n";
        let s = suite(
            Language::Python,
            &[(".github/workflows/test.yml", workflow), ("tox.ini", tox)],
        );
        assert!(s.run.env.contains(&("MODE".into(), "tox".into())));
        assert!(!s.run.env.contains(&("MODE".into(), "ci".into())));
        assert!(
            s.run
                .env
                .contains(&("TZ".into(), "America/New_York".into()))
        );
    }

    /// aio-libs/yarl's tox commands: `{tty:--color=yes}` (tox 4: its ON value in a
    /// terminal, its OFF value, here none, elsewhere) was handed to pytest as a path, and
    /// pytest collected nothing. tox 4's names for the tree and the environment's
    /// interpreter stand as tox 3's do; a substitution nothing here stands for is left out.
    #[test]
    fn pytest_covs_options_are_dropped_with_the_values_pytest_gives_them() {
        // pexpect's: `--cov`'s optional value is the word after it, not a folder of tests.
        let ci = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pip install -r requirements-testing.txt\n      - run: |\n          ./tools/display-sighandlers.py\n          pytest --cov pexpect --cov-config .coveragerc\n";
        let s = suite(Language::Python, &[(".github/workflows/ci.yml", ci)]);
        assert_eq!(s.run.command, ["python3", "-m", "pytest"], "{}", s.source);
        let args = |line: &str| pytest_args(&words(line));
        assert_eq!(
            args("--cov -x tests"),
            ["-x", "tests"],
            "no value before an option"
        );
        assert_eq!(args("tests --cov"), ["tests"], "none at the end");
        assert_eq!(
            args("--cov=pkg --cov-branch tests"),
            ["tests"],
            "a flag of pytest-cov"
        );
        assert_eq!(args("--cov-append --cov-reset -q t"), ["-q", "t"]);
        assert_eq!(
            args("--cov-report term-missing --cov-fail-under 90 t"),
            ["t"]
        );
    }

    #[test]
    fn toxs_substitutions_are_made_as_on_a_ci_runner() {
        let tox = "[tox]\nenvlist = python\n[python-cli-options]\nbyte-warnings = -b\nsome-isolation = -E -s\n[testenv]\ncommands =\n  {envpython} \\\n    {[python-cli-options]byte-warnings} \\\n    {[python-cli-options]some-isolation} \\\n    -m pytest \\\n      {tty:--color=yes} \\\n      {posargs:}\n";
        let s = suite(Language::Python, &[("tox.ini", tox)]);
        assert_eq!(s.run.command, ["python3", "-m", "pytest"], "{}", s.source);
        let tox4 = "[testenv]\ncommands = {env_python} -m pytest {tox_root}/tests {tty:--color=yes:--color=no} --basetemp={env_tmp_dir} {envsitepackagesdir}/plug\n";
        let s = suite(Language::Python, &[("tox.ini", tox4)]);
        assert_eq!(
            s.run.command,
            ["python3", "-m", "pytest", "tests", "--color=no"],
            "{}",
            s.source
        );
        assert!(!tox_substitution_left("--format={a} {b}"));
        assert!(!tox_substitution_left("{\"json\": 1}"));
        assert!(tox_substitution_left("{envsitepackagesdir}/x"));
    }

    /// pytest-mock's: its CI runs the suite through tox, which hands its commands only what
    /// its `pass_env` names and a few of its own. `CI=true` never reached the tests (pytest
    /// widens its assertion diffs on a CI, and 6 tests that expect the short one failed
    /// where the sandbox set it), nor did the workflow's variables; a test selected within
    /// the suite runs without them too. A tox that names them passes them.
    #[test]
    fn a_suite_tox_runs_sees_only_what_tox_passes_on() {
        let workflow = "env:\n  TZ: America/New_York\n  APP_MODE: read\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: tox run -e py\n";
        let selection = Selection {
            path: "tests/test_mock.py".into(),
            names: vec!["test_args".into()],
            package: None,
        };
        let names = |env: &[(String, String)]| -> Vec<String> {
            env.iter().map(|(k, _)| k.clone()).collect()
        };
        let tox =
            "[testenv]\ndeps = mock\ncommands =\n  coverage run -m pytest tests --color=yes\n";
        let s = suite(
            Language::Python,
            &[(".github/workflows/test.yml", workflow), ("tox.ini", tox)],
        );
        assert_eq!(s.withheld, ["CI"]);
        for env in [&s.run.env, &s.select(Language::Python, &selection, 0).env] {
            let names = names(env);
            assert!(!names.contains(&"CI".to_string()), "{names:?}");
            assert!(!names.contains(&"TZ".to_string()), "{names:?}");
            assert!(
                names.contains(&"PYTHONHASHSEED".to_string()),
                "Proven's own stay"
            );
        }
        assert!(
            s.source.ends_with(
                "; CI not passed on by tox; not passed on by tox: .github/workflows/test.yml job test env (TZ, APP_MODE)"
            ),
            "{}",
            s.source
        );
        // Named in `passenv` (tox 3's spaces, a pattern) or `pass_env` (tox 4's commas).
        for passes in ["passenv = CI TZ", "pass_env = C*, GITHUB_*\n    TZ"] {
            let tox = format!("[testenv]\n{passes}\ncommands = pytest tests\n");
            let s = suite(
                Language::Python,
                &[(".github/workflows/test.yml", workflow), ("tox.ini", &tox)],
            );
            assert!(s.withheld.is_empty(), "{passes}");
            let env = s.select(Language::Python, &selection, 0).env;
            assert!(env.contains(&("CI".into(), "true".into())), "{passes}");
            assert!(
                env.contains(&("TZ".into(), "America/New_York".into())),
                "{passes}"
            );
        }
        // A suite another wrapper runs keeps the CI's.
        let s = suite(
            Language::Python,
            &[(
                ".github/workflows/test.yml",
                "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest tests\n",
            )],
        );
        assert!(s.withheld.is_empty());
        assert!(s.run.env.contains(&("CI".into(), "true".into())));
    }

    /// cattrs' Justfile: the `test` recipe runs pytest through `uv run` with uv's own
    /// options, over the folder its parameter's default names (not the tree's benchmarks).
    #[test]
    fn a_justfiles_test_recipe_is_the_suite() {
        let justfile = "python := \"\"\n\ntest *args=\"-x --ff -n auto tests\":\n    uv run {{ if python != '' { '-p ' + python } else { '' } }} --all-extras --group test --group lint pytest {{args}}\n";
        let s = suite(Language::Python, &[("Justfile", justfile)]);
        assert_eq!(s.source, "Justfile test");
        assert_eq!(
            s.run.command,
            ["python3", "-m", "pytest", "-x", "--ff", "tests"]
        );
    }

    #[test]
    fn nox_make_and_setup_py_test_too() {
        let s = suite(
            Language::Python,
            &[(
                "noxfile.py",
                "def tests(session):\n    session.install('.')\n    session.run('pytest', 'tests/unit', *session.posargs)\n",
            )],
        );
        assert_eq!(s.source, "noxfile.py session tests");
        assert_eq!(&s.run.command[3..], ["tests/unit"]);
        let s = suite(
            Language::Python,
            &[(
                "Makefile",
                "lint:\n\tflake8\n\ntest: lint\n\t@python setup.py test\n",
            )],
        );
        assert_eq!(s.source, "Makefile test");
        assert_eq!(s.run.command, ["python3", "-m", "pytest"]);
        let s = suite(
            Language::Python,
            &[("Makefile", "test:\n\tnosetests -v tests\n")],
        );
        assert_eq!(s.run.command, ["python3", "-m", "nose", "-v", "tests"]);
        assert_eq!(suite(Language::Python, &[]).source, "the default");
        // yt-dlp's family: the interpreter and the runner named by make variables.
        let s = suite(
            Language::Python,
            &[(
                "Makefile",
                "PYTEST ?= $(PYTHON) -m pytest\nTESTS := test/unit\n\ntest:\n\t-$(PYTEST) -Werror ${TESTS}\n",
            )],
        );
        assert_eq!(s.source, "Makefile test");
        assert_eq!(
            &s.run.command[..3],
            ["python3", "-m", "pytest"],
            "{:?}",
            s.run.command
        );
        assert!(
            s.run
                .command
                .ends_with(&["-Werror".into(), "test/unit".into()]),
            "{:?}",
            s.run.command
        );
        // A variable it cannot know is never guessed: the default suite runs.
        let s = suite(
            Language::Python,
            &[("Makefile", "test:\n\t$(RUNNER) tests\n")],
        );
        assert_eq!(s.source, "the default");
    }

    /// node_redis' `pretest` installs hiredis from the registry at test time: the run has no
    /// network, the preparation installed it, and the step is left out and named.
    #[test]
    fn a_test_time_install_step_is_left_out_of_the_suite() {
        let s = suite(
            Language::Node,
            &[(
                "package.json",
                r#"{"scripts": {"pretest": "optional-dev-dependency hiredis", "test": "npm i --no-save sinon && mocha test/"}, "devDependencies": {"mocha": "*"}}"#,
            )],
        );
        assert_eq!(s.run.command, ["sh", "-c", "mocha test/"]);
        assert_eq!(
            s.source,
            "package.json scripts.test (without its test-time install, prepared beforehand: npm i --no-save sinon, optional-dev-dependency hiredis)"
        );
    }

    /// A selected test runs after what the suite runs before its runner: bower's grunt
    /// `exec:assets` makes the git repositories its tests fetch from; a `pretest` compile
    /// or a `prepare` build makes what the tests load. A lint-only step is no setup.
    #[test]
    fn a_selected_node_test_runs_after_the_suites_setup() {
        let gruntfile =
            "grunt.registerTask('test', ['jshint', 'exec:assets', 'simplemocha:full']);";
        let s = suite(
            Language::Node,
            &[
                ("package.json", r#"{"scripts": {"test": "grunt test"}}"#),
                ("Gruntfile.js", gruntfile),
            ],
        );
        let setup = s.setup.clone().expect("bower's fixtures are a setup");
        assert!(
            setup.command.starts_with("( grunt exec:assets )"),
            "{}",
            setup.command
        );
        assert_eq!(setup.source, "Gruntfile.js: exec:assets");
        let run = s.select(Language::Node, &one(&[], "test/it's.test.js"), 0);
        assert_eq!(run.command[..2], ["sh", "-c"]);
        let setup_command = &setup.command;
        assert_eq!(
            run.command[2],
            "( SETUP ) >\"${TMPDIR:-/tmp}/proven-setup.log\" 2>&1 </dev/null || { echo 'proven: the suite'\\''s setup before its tests failed (Gruntfile.js: exec:assets); its last lines:' >&2; tail -n 20 \"${TMPDIR:-/tmp}/proven-setup.log\" >&2; }; exec node --test --test-reporter=tap 'test/it'\\''s.test.js'"
                .replace("SETUP", setup_command)
        );

        let s = suite(
            Language::Node,
            &[(
                "package.json",
                r#"{"scripts": {"lint": "eslint .", "prepare": "npm run build", "pretest": "npm run lint", "test": "mocha"}}"#,
            )],
        );
        let setup = s.setup.clone().expect("prepare builds");
        assert_eq!(
            setup.command,
            "{ [ -e .git ] || git init -q; } 2>/dev/null; ( npm run build )"
        );
        assert_eq!(setup.source, "package.json scripts.prepare");

        // Nothing before the runner: the selected test runs as the language runs it.
        let s = suite(
            Language::Node,
            &[("package.json", r#"{"scripts": {"test": "mocha test/"}}"#)],
        );
        assert_eq!(s.setup, None);
        assert_eq!(
            s.select(Language::Node, &one(&[], "t.test.js"), 0).command,
            ["node", "--test", "--test-reporter=tap", "t.test.js"]
        );
    }

    /// A `pretest` that lints runs no linter in the suite (qs': `npm run --silent readme &&
    /// npm run --silent lint`, whose `postlint` reached for the network and stopped the
    /// suite before its tests): its linters are left out, through the package manager's own
    /// options, and named; a `pretest` that only lints is left out whole.
    #[test]
    fn a_pretest_runs_without_its_linters() {
        let s = suite(
            Language::Node,
            &[(
                "package.json",
                r#"{"scripts": {"pretest": "npm run --silent readme && npm run --silent lint", "test": "npm run tests-only", "tests-only": "nyc tape 'test/**/*.js'", "readme": "evalmd README.md", "lint": "eslint .", "postlint": "eclint check"}}"#,
            )],
        );
        assert_eq!(
            s.run.command,
            [
                "sh",
                "-c",
                "( npm run --silent readme ) && ( npm run tests-only )"
            ]
        );
        assert!(
            s.source
                .ends_with("(without the linter it chains with the tests: npm run --silent lint)"),
            "{}",
            s.source
        );
        let s = suite(
            Language::Node,
            &[(
                "package.json",
                r#"{"scripts": {"pretest": "yarn -s lint && standard", "test": "tape test/*.js", "lint": "eslint ."}}"#,
            )],
        );
        assert_eq!(s.run.command, ["sh", "-c", "tape test/*.js"]);
        assert_eq!(
            s.source,
            "package.json scripts.test (without the linter it chains with the tests: yarn -s lint, standard)"
        );
    }

    #[test]
    fn the_npm_test_script_runs_in_the_sandbox_shell() {
        let s = suite(
            Language::Node,
            &[("package.json", r#"{"scripts": {"test": "mocha test/"}}"#)],
        );
        assert_eq!(s.run.command, ["sh", "-c", "mocha test/"]);
        let s = suite(
            Language::Node,
            &[(
                "package.json",
                r#"{"scripts": {"pretest": "tsc -p tsconfig.test.json", "test": "mocha build/test", "posttest": "eslint ."}}"#,
            )],
        );
        assert_eq!(
            s.run.command,
            [
                "sh",
                "-c",
                "( tsc -p tsconfig.test.json ) && ( mocha build/test )"
            ],
            "pretest runs first, as npm test runs it; posttest (a linter) does not"
        );
        assert_eq!(s.source, "package.json scripts.pretest, scripts.test");
        // koa: `prepare` builds what an ESM test imports; `npm ci` ran it before the tests.
        let s = suite(
            Language::Node,
            &[(
                "package.json",
                r#"{"scripts": {"build": "gen-esm-wrapper . ./dist/koa.mjs", "prepare": "npm run build", "test": "node --test"}}"#,
            )],
        );
        assert_eq!(
            s.run.command,
            [
                "sh",
                "-c",
                "{ [ -e .git ] || git init -q; } 2>/dev/null; ( npm run build ) && ( node --test )"
            ],
            "prepare runs in a git repository, as in the CI's checkout"
        );
        assert_eq!(s.source, "package.json scripts.prepare, scripts.test");
        // debug: `npm run test:node && npm run test:browser && npm run lint`, lint being
        // `xo`: the linter is left out, and the source names it.
        let s = suite(
            Language::Node,
            &[(
                "package.json",
                r#"{"scripts": {"lint": "xo", "test": "npm run test:node && npm run test:browser && npm run lint", "test:node": "mocha test.js", "test:browser": "karma start --single-run"}}"#,
            )],
        );
        assert_eq!(
            s.run.command,
            ["sh", "-c", "npm run test:node && npm run test:browser"]
        );
        assert_eq!(
            s.source,
            "package.json scripts.test (without the linter it chains with the tests: npm run lint)"
        );
        // A linter named directly, and one behind a script that lints twice; a step that
        // tests, and a prettier that rewrites, stay; so does a lone linter.
        for (test, kept) in [
            (
                "mocha && eslint lib test",
                "mocha && eslint lib test".replace(" && eslint lib test", ""),
            ),
            ("mocha && npm run lint", "mocha".into()),
            (
                "mocha && npm run build && tap",
                "mocha && npm run build && tap".into(),
            ),
            (
                "mocha && prettier --write .",
                "mocha && prettier --write .".into(),
            ),
            ("mocha && prettier --check .", "mocha".into()),
            ("xo && npm run lint", "xo && npm run lint".into()),
            ("standard && tape test/*.js", "tape test/*.js".into()),
        ] {
            let package = format!(
                r#"{{"scripts": {{"lint": "eslint . && prettier -c .", "build": "tsc", "test": "{test}"}}}}"#
            );
            let s = suite(Language::Node, &[("package.json", &package)]);
            assert_eq!(s.run.command[2], kept, "{test}");
        }
        // vite: its CI builds (`pnpm run build`) before its test scripts, whose tests load
        // what the build wrote; `npm test` alone never builds. A job on Windows, and a
        // build after the tests, are not the one; a `prepare` that builds already is kept alone.
        let workflow = "jobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pnpm run lint\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pnpm install\n      - name: Build\n        run: pnpm run build\n      - run: pnpm run test-unit\n";
        let s = suite(
            Language::Node,
            &[
                (
                    "package.json",
                    r#"{"scripts": {"build": "tsc -b", "test": "vitest run"}}"#,
                ),
                (".github/workflows/ci.yml", workflow),
                (
                    ".github/workflows/release.yml",
                    "jobs:\n  publish:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm test\n      - run: npm run build\n",
                ),
            ],
        );
        assert_eq!(
            s.run.command,
            ["sh", "-c", "( pnpm run build ) && ( vitest run )"]
        );
        assert_eq!(
            s.source,
            "package.json scripts.test, after the build its CI runs before the tests: pnpm run build (.github/workflows/ci.yml job test)"
        );
        let s = suite(
            Language::Node,
            &[
                (
                    "package.json",
                    r#"{"scripts": {"build": "tsc -b", "prepare": "npm run build", "test": "vitest run"}}"#,
                ),
                (".github/workflows/ci.yml", workflow),
            ],
        );
        assert_eq!(
            s.run.command[2],
            "{ [ -e .git ] || git init -q; } 2>/dev/null; ( npm run build ) && ( vitest run )"
        );
        // Bower (2014): `grunt test` is `['jshint', 'exec:assets', 'simplemocha:full']`;
        // jshint aborted the run before any test, on the base and with a patch alike.
        let s = suite(
            Language::Node,
            &[
                ("package.json", r#"{"scripts": {"test": "grunt test"}}"#),
                (
                    "Gruntfile.js",
                    "grunt.registerTask('test', ['jshint', 'exec:assets', 'simplemocha:full']);",
                ),
            ],
        );
        assert_eq!(
            s.run.command,
            ["sh", "-c", "grunt exec:assets simplemocha:full"]
        );
        assert_eq!(
            s.source,
            "package.json scripts.test (without the linter it chains with the tests: grunt jshint)"
        );
        let s = suite(
            Language::Node,
            &[(
                "package.json",
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            )],
        );
        assert_eq!(s.source, "the default");
    }

    /// vue's family: its CI runs `test-unit` in one job and `test-e2e` (which builds what
    /// its e2e tests load) in another, never `test`, which runs both sets without the build.
    /// The suite is the test scripts the CI runs, from its Linux jobs named for the suite;
    /// where the CI runs `test`, it stays.
    #[test]
    fn a_node_suite_is_the_test_scripts_its_ci_runs() {
        let package = r#"{"scripts": {"build": "node scripts/build.js", "test": "vitest", "test-unit": "vitest --project unit", "test-e2e": "node scripts/build.js vue && vitest --project e2e", "test-dts": "tsc -p dts"}}"#;
        let workflow = "jobs:\n  unit-test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pnpm install\n      - run: pnpm run test-unit\n  unit-test-windows:\n    runs-on: windows-latest\n    steps:\n      - run: pnpm run test-windows\n  e2e-test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pnpm install\n      - run: pnpm exec playwright install chromium\n      - run: pnpm run test-e2e\n  lint-and-test-dts:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pnpm run lint\n      - run: pnpm run test-dts\n";
        let s = suite(
            Language::Node,
            &[
                ("package.json", package),
                (".github/workflows/test.yml", workflow),
            ],
        );
        assert_eq!(
            s.run.command,
            [
                "sh",
                "-c",
                "failed=0; ( vitest --project unit ) || failed=1; ( node scripts/build.js vue && vitest --project e2e ) || failed=1; exit $failed"
            ]
        );
        assert_eq!(
            s.source,
            "package.json scripts.test-unit, scripts.test-e2e, the test scripts its CI runs (.github/workflows/test.yml job unit-test, .github/workflows/test.yml job e2e-test)"
        );
        // A CI that runs `test` somewhere keeps it.
        let with_test = workflow.replace("pnpm run test-unit", "pnpm test");
        let s = suite(
            Language::Node,
            &[
                ("package.json", package),
                (".github/workflows/test.yml", &with_test),
            ],
        );
        assert_eq!(s.run.command, ["sh", "-c", "vitest"]);
        assert_eq!(s.source, "package.json scripts.test");
        // mocha: a job runs a script the workflow chooses by an expression; the others'
        // scripts are not all the CI runs, and `test` stays.
        let chosen = format!(
            "{workflow}  script:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm run ${{{{ inputs.npm-script }}}}\n"
        );
        let s = suite(
            Language::Node,
            &[
                ("package.json", package),
                (".github/workflows/test.yml", &chosen),
            ],
        );
        assert_eq!(s.run.command, ["sh", "-c", "vitest"]);
    }

    #[test]
    fn command_lines_split_like_a_shell_without_expanding() {
        assert_eq!(
            words("pytest -k 'a and b' \"x y\" z"),
            ["pytest", "-k", "a and b", "x y", "z"]
        );
        assert_eq!(words("a '' b"), ["a", "", "b"]);
    }
}
