//! What a project's own CI installs beside its declarations: the `pip install` commands of
//! its Travis `install` steps, its GitHub workflows' test jobs, AppVeyor's `install` and
//! Azure Pipelines' steps. Many projects of the last ten years declare their test
//! dependencies nowhere else (Keras installed its TensorFlow backend in `.travis.yml` only),
//! so a sandbox that reads only the declarations prepares an environment their tests cannot
//! import in.
//!
//! Only what every CI job installs is taken: a command inside an `if`'s condition or `then`
//! branch, after `&&` behind a test (`[[ $X == 2.7 ]] && pip install …`), after `||`, in a
//! matrix entry of its own or a workflow step with an `if:`, depends on the job; the `else`
//! branch is what runs when no special case holds, so it is taken. Each command yields
//! requirement-file lines (`numpy`, `tensorflow==1.13.1`, `-e .[tests]`, `-r file`), read by
//! the same rules as a requirements file's lines.
//!
//! The shell is read as words, not run: no crate parses the subset of POSIX shell that CI
//! files hold into commands with their `if` nesting (shell-words and shlex split one command
//! line only), and what is needed here is that nesting.

use proven_lockfile::pins::{Wanted, normalise_name};
use serde_json::Value;

/// What `.[*]` stands for: every extra the project declares (`flit install`,
/// `poetry install --all-extras`).
pub const ALL_EXTRAS: &str = "*";

/// Tools CI installs to build, upload or report, never imported by the tests.
const NOT_FOR_TESTS: &[&str] = &[
    "pip",
    "setuptools",
    "wheel",
    "virtualenv",
    "tox",
    "twine",
    "codecov",
    "coveralls",
    "python-coveralls",
    "pre-commit",
    "flit",
    "poetry",
];

/// pip's options that take the next word as their value.
const OPTION_VALUES: &[&str] = &[
    "--progress-bar",
    "--only-binary",
    "--no-binary",
    "--prefix",
    "-t",
    "--target",
    "--root",
    "--src",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--cache-dir",
    "--log",
    "--timeout",
    "--retries",
    "--proxy",
    "--upgrade-strategy",
    "--trusted-host",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    // pip 25.1's dependency group of pyproject.toml (`--group tests`): no requirement
    // named `tests`; the project's test groups are read from pyproject.toml itself.
    "--group",
];

/// The YAML of a CI file allowed to grow this large is read; a larger one is not a CI file
/// a project writes by hand.
const MAX_BYTES: usize = 512 * 1024;

/// What a CI file installs in every job: requirement lines, and the project's extras and
/// dependency groups its installers name (`uv sync --extra all --group tests`, `uv run
/// --all-extras`, `poetry install --with docs -E all`, `pip install --group tests`).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct CiInstalls {
    /// Requirement-file lines, in order, without repeats.
    pub lines: Vec<String>,
    pub wanted: Wanted,
}

/// What `file`'s CI installs in every job.
pub(crate) fn read(file: &str, text: &str) -> CiInstalls {
    let mut out = CiInstalls::default();
    for script in scripts(file, text) {
        for words in unconditional_commands(&script) {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            out.take(&words);
        }
    }
    out
}

/// What a tox environment's commands install before its tests run (`commands_pre`, then
/// `commands`): black's `pip install -e .[d]` ahead of its pytest, whose `tests/
/// test_blackd.py` imports the extra's aiohttp. Read up to the first command that runs
/// tests; what a later line installs is for a later run (black's `.[jupyter]`, whose
/// absence its first run's `no_jupyter` tests check).
pub(crate) fn tox_installs(lines: &[String]) -> CiInstalls {
    let mut out = CiInstalls::default();
    for line in lines {
        let line = line
            .replace("{envpython}", "python")
            .replace("{envbindir}/", "");
        let mut tests = false;
        for words in unconditional_commands(&line) {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            tests |= !out.take(&words)
                && words
                    .iter()
                    .any(|w| w.contains("test") || w.contains("trial"));
        }
        if tests {
            break;
        }
    }
    out
}

impl CiInstalls {
    /// Takes what one command installs; whether it installs anything.
    fn take(&mut self, words: &[&str]) -> bool {
        if let Some(args) = pip_install_args(words) {
            for line in requirement_lines(args) {
                if !self.lines.contains(&line) {
                    self.lines.push(line);
                }
            }
            self.wanted.extend(pip_groups(args));
        } else if let Some(line) = flit_install(words) {
            if !self.lines.contains(&line) {
                self.lines.push(line);
            }
        } else if let Some(wanted) = project_installer(words) {
            self.wanted.extend(wanted);
        } else {
            return false;
        }
        true
    }
}

/// The requirement lines `file`'s CI installs in every job, in order, without repeats.
#[cfg(test)]
fn lines(file: &str, text: &str) -> Vec<String> {
    read(file, text).lines
}

/// The commands `file`'s CI runs in its test phase, each as one command line, in order:
/// Travis' `script`, the `run` steps of a workflow's test jobs, AppVeyor's `test_script`,
/// Azure Pipelines' steps; only what every job runs (the `else` of an `if`, as for the
/// installs), without the variables set for each command. A Python project with no tox or
/// nox runs its suite as this says (keras' `py.test tests/ --ignore=tests/integration_tests
/// …` in the `else` of its Travis test modes), never pytest over the whole tree.
pub(crate) fn test_commands(file: &str, text: &str) -> Vec<String> {
    phase_scripts(file, text, Phase::Test)
        .iter()
        .flat_map(|script| unconditional_commands(script))
        .filter(|words| !words.is_empty() && !is_test(words))
        .map(|words| {
            words
                .iter()
                .map(|w| quoted(w))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// A word as one word of a command line again (suite's splitting: quotes group).
fn quoted(word: &str) -> String {
    if word.is_empty() {
        "''".into()
    } else if !word.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        word.to_string()
    } else if word.contains('\'') {
        format!("\"{word}\"")
    } else {
        format!("'{word}'")
    }
}

/// Which of a CI file's phases is read: what it installs, or what it runs to test.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Install,
    Test,
}

/// The shell scripts of `file`'s jobs that every test job runs.
fn scripts(file: &str, text: &str) -> Vec<String> {
    phase_scripts(file, text, Phase::Install)
}

/// The shell scripts of `file`'s jobs that every test job runs in `phase`.
fn phase_scripts(file: &str, text: &str, phase: Phase) -> Vec<String> {
    if text.len() > MAX_BYTES {
        return Vec::new();
    }
    // A Justfile's `test` recipe installs as it runs (`uv run --all-extras --group test
    // pytest`): its lines, for both phases.
    if crate::just::FILES.contains(&file) {
        return crate::just::recipe(text, "test")
            .map(|lines| vec![lines.join("\n")])
            .unwrap_or_default();
    }
    let options = crate::yaml_options(64);
    let Ok(doc) = serde_saphyr::from_str_with_options::<Value>(text, options) else {
        return Vec::new();
    };
    let name = file.rsplit('/').next().unwrap_or(file);
    let keys: &[&str] = match phase {
        Phase::Install => &["before_install", "install"],
        Phase::Test => &["before_script", "script"],
    };
    if file.starts_with(".github/workflows/") {
        workflow_scripts(&doc, phase)
    } else if name == ".travis.yml" {
        keys.iter().flat_map(|k| strings(doc.get(k))).collect()
    } else if name == "appveyor.yml" || name == ".appveyor.yml" {
        appveyor_scripts(
            &doc,
            match phase {
                Phase::Install => "install",
                Phase::Test => "test_script",
            },
        )
    } else if name.starts_with("azure-pipelines") {
        azure_scripts(&doc)
    } else {
        Vec::new()
    }
}

/// A step's or a key's commands: a string, or a list of strings.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// The `run` steps, without an `if:`, of the jobs that run tests (a job of linters or docs
/// installs what no test imports). Their test commands: those of the jobs named for
/// neither docs, linters, types nor benchmarks (a `docs` job's `pytest docs/` is not the
/// suite).
fn workflow_scripts(doc: &Value, phase: Phase) -> Vec<String> {
    let mut out = Vec::new();
    let Some(jobs) = doc.get("jobs").and_then(Value::as_object) else {
        return out;
    };
    // The test commands of a job with an `if:` too, after those of every job without one:
    // a project's test job often runs only when its sources changed (poetry's `if:
    // inputs.run-pytest`), and is still its suite. What it installs is not taken.
    let conditional = |job: &Value| job.get("if").is_some();
    let mut ordered: Vec<(&String, &Value)> =
        jobs.iter().filter(|(_, job)| !conditional(job)).collect();
    if phase == Phase::Test {
        ordered.extend(jobs.iter().filter(|(_, job)| conditional(job)));
    }
    for (id, job) in ordered {
        let name = job.get("name").and_then(Value::as_str).unwrap_or(id);
        if phase == Phase::Test && not_the_suite(name) {
            continue;
        }
        let runs: Vec<String> = job
            .get("steps")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|step| step.get("if").is_none())
            .filter_map(|step| step.get("run").and_then(Value::as_str).map(str::to_string))
            .collect();
        if runs.iter().any(|r| runs_tests(r)) {
            out.extend(runs);
        }
    }
    out
}

/// A job named for something other than the suite: docs, linters, types, benchmarks,
/// packaging.
pub(crate) fn not_the_suite(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "doc",
        "lint",
        "type",
        "typing",
        "mypy",
        "bench",
        "style",
        "format",
        "release",
        "publish",
        "deploy",
        "pre-commit",
        "precommit",
        "coverage-report",
    ]
    .iter()
    .any(|w| name.contains(w))
}

fn runs_tests(script: &str) -> bool {
    [
        "pytest",
        "py.test",
        "nosetests",
        "unittest",
        "tox",
        "runtests",
        "test",
    ]
    .iter()
    .any(|w| script.contains(w))
}

fn appveyor_scripts(doc: &Value, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    for item in doc.get(key).and_then(Value::as_array).into_iter().flatten() {
        match item {
            Value::String(s) => out.push(s.clone()),
            Value::Object(o) => out.extend(
                ["cmd", "ps", "sh"]
                    .iter()
                    .filter_map(|k| o.get(*k).and_then(Value::as_str).map(str::to_string)),
            ),
            _ => {}
        }
    }
    out
}

fn azure_scripts(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![doc];
    // Steps nest under stages and jobs, or sit at the top: every step list is read.
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                if o.get("condition").is_some() {
                    continue;
                }
                for k in ["script", "bash"] {
                    if let Some(s) = o.get(k).and_then(Value::as_str) {
                        out.push(s.to_string());
                    }
                }
                stack.extend(o.values());
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    out
}

/// One `if` being read: whether the words are in its `else` branch.
#[derive(Clone, Copy)]
struct If {
    in_else: bool,
}

/// The commands `script` runs unconditionally, as words, without the keywords and
/// assignments before them.
fn unconditional_commands(script: &str) -> Vec<Vec<String>> {
    let script = &expressions_as_words(script);
    let mut out = Vec::new();
    let mut ifs: Vec<If> = Vec::new();
    // Whether the command being read runs only when the one before it did or failed.
    let mut guarded = false;
    let commands = commands(script);
    for (i, (command, before)) in commands.iter().enumerate() {
        let words: Vec<&str> = command.iter().map(String::as_str).collect();
        // The command before `&&` is its guard.
        let guard = i.checked_sub(1).map(|j| &commands[j].0[..]).unwrap_or(&[]);
        guarded = match before {
            Sep::And => guarded || is_test(guard),
            Sep::Or => true,
            Sep::Start => false,
        };
        let mut words = &words[..];
        // Keywords open and close branches; what follows them is a command.
        loop {
            match words.first().copied() {
                Some("if") => {
                    ifs.push(If { in_else: false });
                    words = &words[1..];
                }
                Some("then" | "elif") => {
                    if let Some(top) = ifs.last_mut() {
                        top.in_else = false;
                    }
                    words = &words[1..];
                }
                Some("else") => {
                    if let Some(top) = ifs.last_mut() {
                        top.in_else = true;
                    }
                    words = &words[1..];
                }
                Some("fi") => {
                    ifs.pop();
                    words = &words[1..];
                }
                Some("do" | "done" | "{" | "}" | "travis_retry" | "sudo" | "time" | "-H") => {
                    words = &words[1..];
                }
                Some(w) if is_assignment(w) => words = &words[1..],
                _ => break,
            }
        }
        let conditional = guarded || ifs.iter().any(|i| !i.in_else);
        if conditional {
            continue;
        }
        out.push(words.iter().map(|w| w.to_string()).collect());
    }
    out
}

/// A workflow's expressions (`${{ env.DEPENDENCY_GROUP }}`, `${{ matrix.deps }}`) each made
/// one word without its spaces: a value the job chooses, read as a variable is (aiohttp's
/// `-r requirements/${{ env.DEPENDENCY_GROUP }}.in` had given requirements named
/// `env.DEPENDENCY_GROUP` and `}}.in`).
fn expressions_as_words(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    let mut rest = script;
    while let Some(at) = rest.find("${{") {
        out.push_str(&rest[..at]);
        let Some(end) = rest[at..].find("}}") else {
            out.push_str(&rest[at..]);
            return out;
        };
        // Its operators too (`${{ matrix.py || matrix.python-version }}`): no `||` or `&&`
        // of the shell's.
        out.push_str("${{");
        out.extend(
            rest[at + 3..at + end]
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')),
        );
        out.push_str("}}");
        rest = &rest[at + end + 2..];
    }
    out.push_str(rest);
    out
}

/// `[[ … ]]`, `[ … ]` or `test …`: a command that only decides.
fn is_test(words: &[String]) -> bool {
    matches!(words.first().map(String::as_str), Some("[[" | "[" | "test"))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sep {
    Start,
    And,
    Or,
}

/// The script's simple commands, as words, each with what joined it to the one before.
fn commands(script: &str) -> Vec<(Vec<String>, Sep)> {
    let mut out: Vec<(Vec<String>, Sep)> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut sep = Sep::Start;
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = script.chars().peekable();
    // Ends the command being read; an empty one (a blank line after `&&`) keeps what joined
    // it, so `a &&` + newline + `b` still guards `b`.
    fn end(
        word: &mut String,
        words: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, Sep)>,
        sep: &mut Sep,
        next: Sep,
    ) {
        flush_word(word, words);
        if words.is_empty() {
            if next != Sep::Start {
                *sep = next;
            }
            return;
        }
        out.push((std::mem::take(words), *sep));
        *sep = next;
    }
    fn flush_word(word: &mut String, words: &mut Vec<String>) {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
    }
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else {
                word.push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '#' if word.is_empty() => {
                // A comment runs to the end of the line.
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
                end(&mut word, &mut words, &mut out, &mut sep, Sep::Start);
            }
            '\\' if chars.peek() == Some(&'\n') => {
                chars.next();
            }
            ' ' | '\t' => flush_word(&mut word, &mut words),
            ';' | '\n' => end(&mut word, &mut words, &mut out, &mut sep, Sep::Start),
            '&' | '|' => {
                let double = chars.peek() == Some(&c);
                if double {
                    chars.next();
                }
                let next = match (c, double) {
                    ('&', true) => Sep::And,
                    ('|', true) => Sep::Or,
                    // A pipe or a background job: the next command runs regardless.
                    _ => Sep::Start,
                };
                end(&mut word, &mut words, &mut out, &mut sep, next);
            }
            _ => word.push(c),
        }
    }
    end(&mut word, &mut words, &mut out, &mut sep, Sep::Start);
    out
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with('-')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The arguments after `pip install` (`pip`, `pip3`, `pip3.8`, `uv pip`, `python -m pip`,
/// `python3.7 -m pip`), if `words` is such a command.
fn pip_install_args<'a>(words: &'a [&'a str]) -> Option<&'a [&'a str]> {
    let is_pip = |w: &str| {
        let name = w.rsplit('/').next().unwrap_or(w);
        name == "pip"
            || name
                .strip_prefix("pip")
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    let is_python = |w: &str| {
        let name = w.rsplit('/').next().unwrap_or(w);
        name.strip_prefix("python")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    let rest = match words {
        [p, rest @ ..] if is_pip(p) => rest,
        ["uv", "pip", rest @ ..] => rest,
        [py, "-m", p, rest @ ..] if is_python(py) && is_pip(p) => rest,
        _ => return None,
    };
    match rest {
        ["install", args @ ..] => Some(args),
        _ => None,
    }
}

/// The dependency groups `pip install --group NAME` (pip 25.1, PEP 735) asks for.
fn pip_groups(args: &[&str]) -> Wanted {
    let mut wanted = Wanted::default();
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        let value = match a.strip_prefix("--group=") {
            Some(v) => Some(v),
            None if a == "--group" => it.next().copied(),
            None => None,
        };
        // `--group path/to/pyproject.toml:name` names another project's group.
        if let Some(v) = value.filter(|v| !v.contains('$') && !v.contains(':')) {
            wanted.groups.insert(normalise_name(v));
        }
    }
    wanted
}

/// The extras and groups a project installer's command asks for: `uv sync`, `uv run`
/// (before the command it runs), `poetry install`, `pdm install`; None for any other
/// command.
fn project_installer(words: &[&str]) -> Option<Wanted> {
    let options: &[&str] = match words {
        ["uv", "sync", rest @ ..] | ["poetry" | "pdm", "install" | "sync", rest @ ..] => rest,
        // `uv run [OPTIONS] COMMAND…`: the options end at the command.
        ["uv", "run", rest @ ..] => {
            let end = run_options_end(rest);
            &rest[..end]
        }
        _ => return None,
    };
    let pdm = words[0] == "pdm";
    let mut wanted = Wanted::default();
    let mut it = options.iter().peekable();
    while let Some(&a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (a, None),
        };
        let mut value = || inline.or_else(|| it.next().copied());
        match flag {
            "--all-extras" => wanted.all_extras = true,
            "--all-groups" => wanted.all_groups = true,
            "--extra" | "--extras" | "-E" => {
                // poetry takes `--extras "a b"` and `-E a,b` as one word.
                for name in value().unwrap_or_default().split([' ', ',']) {
                    insert(&mut wanted.extras, name);
                }
            }
            // uv's `--with PKG` adds a package to the run, no group.
            "--with" | "--only" if words[0] != "poetry" => {
                value();
            }
            "--group" | "--only-group" | "--with" | "--only" | "-G" | "--dev-group" => {
                for name in value().unwrap_or_default().split(',') {
                    if pdm && name == ":all" {
                        wanted.all_groups = true;
                        wanted.all_extras = true;
                    } else if pdm {
                        // pdm's `-G` names an optional-dependencies group or a dev one.
                        insert(&mut wanted.extras, name);
                        insert(&mut wanted.groups, name);
                    } else {
                        insert(&mut wanted.groups, name);
                    }
                }
            }
            _ => {}
        }
    }
    Some(wanted)
}

fn insert(set: &mut std::collections::BTreeSet<String>, name: &str) {
    let name = name.trim();
    if !name.is_empty() && !name.contains('$') && !name.starts_with('-') {
        set.insert(normalise_name(name));
    }
}

/// Where `uv run`'s own options end: the first word that is neither an option nor an
/// option's value.
pub(crate) fn run_options_end(rest: &[&str]) -> usize {
    const TAKES_VALUE: &[&str] = &[
        "--extra",
        "--group",
        "--only-group",
        "--no-group",
        "--with",
        "--python",
        "-p",
        "--package",
        "--directory",
        "--project",
        "--env-file",
        "--index",
        "--index-url",
        "--default-index",
        "--extra-index-url",
    ];
    let mut i = 0;
    while i < rest.len() {
        let w = rest[i];
        if !w.starts_with('-') {
            return i;
        }
        i += if TAKES_VALUE.contains(&w) { 2 } else { 1 };
    }
    rest.len()
}

/// `pip install`'s arguments as requirement-file lines.
/// `flit install`: the project itself with the extras flit installs beside its
/// requirements: every one by default (`--deps all`), `--deps develop` its test, doc and dev
/// extras, `production` and `none` only those `--extras` names (as `.[*]`, `.[a,b]`).
fn flit_install(words: &[&str]) -> Option<String> {
    let name = words.first()?.rsplit('/').next()?;
    let rest = match words {
        [_, "install", rest @ ..] if name == "flit" => rest,
        [py, "-m", "flit", "install", rest @ ..]
            if py.rsplit('/').next()?.starts_with("python") =>
        {
            rest
        }
        _ => return None,
    };
    let mut deps = "all";
    let mut extras: Vec<&str> = Vec::new();
    let mut it = rest.iter();
    while let Some(&a) = it.next() {
        let (option, value) = match a.split_once('=') {
            Some((o, v)) => (o, Some(v)),
            None => (a, None),
        };
        let value = match option {
            "--deps" | "--extras" => value.or_else(|| it.next().copied()),
            _ => continue,
        };
        match (option, value) {
            ("--deps", Some(v)) => deps = v,
            ("--extras", Some(v)) => extras.extend(v.split(',').filter(|e| !e.is_empty())),
            _ => {}
        }
    }
    if deps.contains('$') || extras.iter().any(|e| e.contains('$')) {
        return None;
    }
    match deps {
        "all" => extras = vec![ALL_EXTRAS],
        "develop" => extras.extend(["test", "doc", "dev"]),
        _ => {}
    }
    if extras.contains(&"all") {
        extras = vec![ALL_EXTRAS];
    }
    Some(if extras.is_empty() {
        "-e .".to_string()
    } else {
        format!("-e .[{}]", extras.join(","))
    })
}

fn requirement_lines(args: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        if a.contains('$') || a.contains('`') {
            // A variable names what the job chose: nothing every job installs.
            continue;
        }
        match a {
            "-r" | "--requirement" | "-e" | "--editable" | "-c" | "--constraint" => {
                if let Some(v) = it.next()
                    && !v.contains('$')
                {
                    out.push(format!("{a} {v}"));
                }
            }
            o if OPTION_VALUES.contains(&o) => {
                it.next();
            }
            o if o.starts_with('-') => {
                if let Some(v) = ["-r", "-e", "-c"].iter().find_map(|p| {
                    o.strip_prefix(p)
                        .filter(|v| !v.is_empty() && !v.starts_with('-'))
                }) {
                    out.push(format!("{} {v}", &o[..2]));
                }
            }
            spec => {
                let name: String = spec
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                    .collect();
                let name = name.to_ascii_lowercase().replace('_', "-");
                if !NOT_FOR_TESTS.contains(&name.as_str()) {
                    out.push(spec.to_string());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_else_branch_and_unconditional_installs_are_taken() {
        let travis = r#"
language: python
matrix:
  include:
    - python: 3.6
      env: MODE=TF2
install:
  - if [[ "$TRAVIS_PYTHON_VERSION" == "2.7" ]]; then
      wget https://example.org/miniconda.sh -O miniconda.sh;
    else
      wget https://example.org/miniconda3.sh -O miniconda.sh;
    fi
  - travis_retry pip install --only-binary=numpy,scipy numpy nose "h5py<3" --progress-bar off
  - pip install -e .[tests] --progress-bar off
  - if [[ "$MODE" == "TF2" ]]; then
    pip install tf-nightly-2.0-preview --progress-bar off;
    else
    pip install tensorflow==1.13.1 --progress-bar off;
    fi
  - '[[ "$TRAVIS_PYTHON_VERSION" == "2.7" ]] && pip install mock'
  - pip install --upgrade pip setuptools wheel codecov
  - pip install $EXTRA || true
  - python -m pip install -r requirements/test.txt
script:
  - pip install never-taken
  - pytest
"#;
        assert_eq!(
            lines(".travis.yml", travis),
            [
                "numpy",
                "nose",
                "h5py<3",
                "-e .[tests]",
                "tensorflow==1.13.1",
                "-r requirements/test.txt"
            ]
        );
    }

    #[test]
    fn a_workflow_gives_the_installs_of_its_test_jobs_only() {
        let workflow = r#"
on: [push]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: pip install flake8
      - run: flake8 .
  tests:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v2
      - name: deps
        run: |
          python -m pip install --upgrade pip
          pip install attrs==19.3.0 \
            "hypothesis>=4"
      - if: matrix.os == 'windows-latest'
        run: pip install pywin32
      - run: python -m pytest
"#;
        assert_eq!(
            lines(".github/workflows/ci.yml", workflow),
            ["attrs==19.3.0", "hypothesis>=4"]
        );
    }

    #[test]
    fn appveyor_and_azure_steps_are_read() {
        let appveyor = "install:\n  - cmd: pip install pytest-xdist\n  - \"%PYTHON%\\\\python.exe -m pip install wheel\"\n";
        assert_eq!(lines("appveyor.yml", appveyor), ["pytest-xdist"]);
        let azure = "jobs:\n- job: t\n  steps:\n  - script: pip install lxml\n  - script: pip install pywin32\n    condition: eq(variables.os, 'win')\n";
        assert_eq!(lines("azure-pipelines.yml", azure), ["lxml"]);
    }

    #[test]
    fn the_extras_and_groups_project_installers_ask_for_are_read() {
        // fastapi's test.yml (uv), with a conditional install that every job does not run.
        let workflow = "jobs:\n  test:\n    steps:\n      - run: uv sync --no-dev --group tests --extra all\n      - run: uv pip install \"anyio[trio]\"\n      - run: uv run --extra=standard --with coverage bash scripts/test.sh\n      - if: matrix.pydantic-v1\n        run: uv sync --extra pydantic-v1\n";
        let read = read(".github/workflows/test.yml", workflow);
        assert_eq!(read.lines, ["anyio[trio]"]);
        assert_eq!(
            read.wanted.extras.iter().collect::<Vec<_>>(),
            ["all", "standard"]
        );
        assert_eq!(read.wanted.groups.iter().collect::<Vec<_>>(), ["tests"]);
        assert!(!read.wanted.all_extras);
        // poetry's `--with a,b` and `-E "x y"`, uv's `--all-extras`, pip's `--group`.
        let travis = "install:\n  - poetry install --with Docs,lint -E \"Speed extra\"\n  - uv sync --all-extras\n  - pip install --group=type_check -e .\n";
        let read = super::read(".travis.yml", travis);
        assert_eq!(
            read.wanted.groups.iter().collect::<Vec<_>>(),
            ["docs", "lint", "type-check"]
        );
        assert_eq!(
            read.wanted.extras.iter().collect::<Vec<_>>(),
            ["extra", "speed"]
        );
        assert!(read.wanted.all_extras);
        assert_eq!(read.lines, ["-e ."]);
    }

    #[test]
    fn a_dependency_group_is_no_requirement() {
        // fastapi's test-redistribute.yml.
        let workflow =
            "jobs:\n  t:\n    steps:\n      - run: pip install --group tests --editable .[all]\n";
        assert_eq!(
            lines(".github/workflows/test-redistribute.yml", workflow),
            ["--editable .[all]"]
        );
    }

    /// `flit install` installs the project with every extra it declares unless told
    /// otherwise (fastapi's CI: `flit install --symlink`, its `all` extra holding the
    /// python-multipart its form tests need).
    #[test]
    fn flit_install_names_the_extras_it_installs() {
        let travis = "install:\n  - pip install flit\n  - flit install --symlink\n  - python -m flit install --deps=production --extras yaml,http\n  - flit install --deps develop\n  - flit install --deps none\n";
        assert_eq!(
            lines(".travis.yml", travis),
            ["-e .[*]", "-e .[yaml,http]", "-e .[test,doc,dev]", "-e ."]
        );
    }

    #[test]
    fn the_test_commands_every_job_runs_are_read_as_lines() {
        let travis = "script:\n  - export A=1\n  - if [[ $MODE == lint ]]; then flake8; else PYTHONPATH=. py.test tests -k 'not slow'; fi\n  - '[[ $X == 2 ]] && pytest extra'\n";
        assert_eq!(
            test_commands(".travis.yml", travis),
            ["export A=1", "py.test tests -k 'not slow'"]
        );
        let appveyor =
            "install:\n  - pip install .\ntest_script:\n  - cmd: python -m pytest tests\n";
        assert_eq!(
            test_commands("appveyor.yml", appveyor),
            ["python -m pytest tests"]
        );
        // A workflow's lint and docs jobs are not its suite, whatever they run.
        let workflow = "jobs:\n  lint:\n    steps:\n      - run: pytest --flake8\n  test:\n    name: Tests on ${{ matrix.os }}\n    steps:\n      - run: pytest\n";
        assert_eq!(
            test_commands(".github/workflows/ci.yml", workflow),
            ["pytest"]
        );
        // A test job that runs only when the sources changed is still the suite, after the
        // jobs that always run; a step of its own `if:` is not.
        let conditional = "jobs:\n  a-pytest:\n    if: inputs.run-pytest\n    steps:\n      - run: poetry install\n      - if: runner.os == 'Windows'\n        run: pytest -p windows\n      - run: poetry run pytest --integration -v\n  z-smoke:\n    steps:\n      - run: python -m pytest tests/smoke\n";
        assert_eq!(
            test_commands(".github/workflows/tests.yaml", conditional),
            [
                "python -m pytest tests/smoke",
                "poetry install",
                "poetry run pytest --integration -v"
            ]
        );
        // What a conditional job installs is not taken.
        assert!(
            read(".github/workflows/tests.yaml", conditional)
                .lines
                .is_empty()
        );
    }

    #[test]
    fn a_workflows_expressions_are_values_the_job_chooses() {
        let workflow = "jobs:\n  test:\n    steps:\n      - run: uv pip install -U pip wheel -r requirements/${{ env.DEPENDENCY_GROUP }}.in -c requirements/${{ env.DEPENDENCY_GROUP }}.txt six\n      - run: pytest\n";
        assert_eq!(lines(".github/workflows/ci.yml", workflow), ["six"]);
        assert_eq!(
            expressions_as_words("a ${{ matrix.x }} b ${{ c"),
            "a ${{matrix.x}} b ${{ c"
        );
    }

    #[test]
    fn what_is_not_yaml_gives_nothing() {
        assert!(lines(".travis.yml", "install: [unclosed").is_empty());
        assert!(lines(".travis.yml", "").is_empty());
    }
}
