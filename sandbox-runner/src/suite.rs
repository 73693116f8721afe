//! The test command a project documents (tox, nox, a Makefile's `test` target, `setup.py
//! test`, an npm `test` script), translated to the runner it wraps, run in the sandbox:
//! never the wrapper itself, which would create environments and fetch packages with the
//! network. What the wrapper would install was prepared already ([`crate::deps`]).

use crate::Language;
use crate::language::TestRun;

/// A project's suite, and where its command came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentedSuite {
    pub run: TestRun,
    /// `tox.ini [testenv] commands`, `package.json scripts.test`, ... or `the default`.
    pub source: String,
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

fn words(line: &str) -> Vec<String> {
    // Shell-like splitting of one command line: quotes group, nothing is expanded.
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
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

/// The pytest arguments a wrapped command passes, minus what needs plugins or placeholders.
fn pytest_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if a.contains("{posargs") || a.contains("{env") || a.contains("$") {
            continue;
        }
        let name = a.split('=').next().unwrap_or_default();
        if DROPPED_WITH_VALUE.contains(&name) || a.starts_with("--cov") {
            skip = !a.contains('=') && name != "--cov";
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

/// One wrapped command line as the sandbox runs it, when it runs a Python test runner: pytest,
/// unittest, nose, or the project's own runner module (`python -m tornado.test.runtests`,
/// when `read` finds that module in the tree), without the interpreter's options.
fn python_command(line: &str, read: &dyn Fn(&str) -> Option<String>) -> Option<Vec<String>> {
    let mut w = words(posargs_default(line).trim().trim_start_matches('-').trim());
    let base = ["python3", "-m", "pytest", "-p", "no:cacheprovider"].map(String::from);
    let python = |s: &str| {
        s == "python" || s == "python3" || s.starts_with("python3.") || s == "{envpython}"
    };
    // The interpreter's own options (-bb, -Werror, -O, -X dev, -u) are the project's
    // policy for its own machines, not its tests: left out.
    if w.first().is_some_and(|f| python(f)) {
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
    }
    let rest = |n: usize| w.get(n..).unwrap_or_default().to_vec();
    let first = w.first()?.as_str();
    let (runner, args) = match first {
        "pytest" | "py.test" => ("pytest", rest(1)),
        "coverage" if w.get(1).is_some_and(|s| s == "run") => {
            // coverage run [-m] pytest ARGS / coverage run -m unittest ARGS
            let at = w
                .iter()
                .position(|s| s == "pytest" || s == "unittest" || s == "py.test")?;
            (
                if w[at] == "unittest" {
                    "unittest"
                } else {
                    "pytest"
                },
                rest(at + 1),
            )
        }
        p if python(p) => match (w.get(1).map(String::as_str), w.get(2).map(String::as_str)) {
            (Some("-m"), Some("pytest" | "py.test")) => ("pytest", rest(3)),
            (Some("-m"), Some("unittest")) => ("unittest", rest(3)),
            (Some("setup.py"), Some("test")) => ("pytest", Vec::new()),
            (Some("-m"), Some(module)) if own_module(module, read) => {
                let mut command = vec!["python3".to_string(), "-m".into(), module.to_string()];
                command.extend(
                    rest(3)
                        .into_iter()
                        .filter(|a| !a.contains('{') && !a.contains('$')),
                );
                return Some(command);
            }
            _ => return None,
        },
        "nosetests" => ("nose", rest(1)),
        _ => return None,
    };
    Some(match runner {
        "pytest" => base.into_iter().chain(pytest_args(&args)).collect(),
        "unittest" => ["python3", "-m", "unittest"]
            .map(String::from)
            .into_iter()
            .chain(args.into_iter().filter(|a| !a.contains('{')))
            .collect(),
        _ => ["python3", "-m", "nose"]
            .map(String::from)
            .into_iter()
            .chain(args.into_iter().filter(|a| !a.contains('{')))
            .collect(),
    })
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
        let Some(close) = after.find('}') else {
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
        joined_commands(&lines)
            .iter()
            .find_map(|l| python_command(l, read))
            .map(|command| DocumentedSuite {
                run: TestRun {
                    command,
                    env: default_env(Language::Python),
                },
                source: source.to_string(),
            })
    };
    if let Some(tox) = crate::tox::Tox::find(read)
        && let Some(s) = found(
            tox.values("testenv", "commands"),
            &format!("{} [testenv] commands", tox.source),
        )
    {
        return s;
    }
    if let Some(text) = read("noxfile.py") {
        let lines: Vec<String> = text
            .match_indices("session.run(")
            .filter_map(|(at, _)| {
                let body = &text[at + "session.run(".len()..];
                let end = body.find(')')?;
                let args: Vec<String> = body[..end]
                    .split(',')
                    .map(|a| a.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
                    .filter(|a| !a.is_empty() && !a.starts_with('*') && !a.contains('='))
                    .collect();
                Some(args.join(" "))
            })
            .collect();
        if let Some(s) = found(lines, "noxfile.py session.run") {
            return s;
        }
    }
    if let Some(text) = read("Makefile")
        && let Some(s) = found(make_target(&text, "test"), "Makefile test")
    {
        return s;
    }
    DocumentedSuite {
        run: Language::Python.suite_run(),
        source: "the default".into(),
    }
}

/// The recipe lines of a Makefile target.
fn make_target(text: &str, target: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut inside = false;
    for raw in text.lines() {
        if raw.starts_with('\t') {
            if inside {
                lines.push(raw.trim().trim_start_matches('@').to_string());
            }
            continue;
        }
        inside = raw.split_once(':').is_some_and(|(names, rest)| {
            !rest.starts_with('=') && names.split_whitespace().any(|n| n == target)
        });
    }
    lines
}

fn default_env(language: Language) -> Vec<(String, String)> {
    language.suite_run().env
}

/// The npm `test` script, run by the shell inside the sandbox (node_modules/.bin is on the
/// path there); npm's placeholder script is no suite. A `pretest` script runs first, as
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
    let test = script("test").filter(|s| !s.contains("no test specified"));
    match test {
        Some(test) => {
            let (command, source) = match script("pretest") {
                Some(pretest) => (
                    // Each in a shell of its own, as npm runs them; the tests only after a
                    // pretest that succeeded.
                    format!("( {pretest} ) && ( {test} )"),
                    "package.json scripts.pretest, scripts.test",
                ),
                None => (test, "package.json scripts.test"),
            };
            DocumentedSuite {
                run: TestRun {
                    command: vec!["sh".into(), "-c".into(), command],
                    env: default_env(Language::Node),
                },
                source: source.into(),
            }
        }
        None => DocumentedSuite {
            run: Language::Node.suite_run(),
            source: "the default".into(),
        },
    }
}

/// The whole suite of a tree, as its project documents it where a wrapper would run it.
pub fn documented_suite(
    language: Language,
    read: &dyn Fn(&str) -> Option<String>,
) -> DocumentedSuite {
    match language {
        Language::Python => python(read),
        Language::Node => node(read),
        Language::Rust | Language::Go => DocumentedSuite {
            run: language.suite_run(),
            source: "the default".into(),
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
            files.iter().find(|(n, _)| n == p).map(|(_, t)| t.clone())
        })
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
                "-p",
                "no:cacheprovider",
                "--verbose",
                "--doctest-modules",
                "./httpie",
                "./tests"
            ],
            "tox's default for the positional arguments"
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
            "pyproject.toml [tool.tox] legacy_tox_ini [testenv] commands"
        );
        assert_eq!(
            s.run.command,
            [
                "python3",
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-k",
                "not perf"
            ]
        );
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
        assert_eq!(s.source, "tox.ini [testenv] commands");
        assert_eq!(
            s.run.command,
            ["python3", "-m", "pytest", "-p", "no:cacheprovider", "tests"],
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
            [
                "python3",
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "tests",
                "-k",
                "not slow"
            ]
        );
        let s = suite(
            Language::Python,
            &[(
                "tox.ini",
                "[testenv]\ncommands = coverage run -m pytest tests\n",
            )],
        );
        assert_eq!(&s.run.command[5..], ["tests"]);
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
        assert_eq!(s.source, "noxfile.py session.run");
        assert_eq!(&s.run.command[5..], ["tests/unit"]);
        let s = suite(
            Language::Python,
            &[(
                "Makefile",
                "lint:\n\tflake8\n\ntest: lint\n\t@python setup.py test\n",
            )],
        );
        assert_eq!(s.source, "Makefile test");
        assert_eq!(
            s.run.command,
            ["python3", "-m", "pytest", "-p", "no:cacheprovider"]
        );
        let s = suite(
            Language::Python,
            &[("Makefile", "test:\n\tnosetests -v tests\n")],
        );
        assert_eq!(s.run.command, ["python3", "-m", "nose", "-v", "tests"]);
        assert_eq!(suite(Language::Python, &[]).source, "the default");
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
        let s = suite(
            Language::Node,
            &[(
                "package.json",
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            )],
        );
        assert_eq!(s.source, "the default");
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
