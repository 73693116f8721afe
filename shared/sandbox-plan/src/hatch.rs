//! Hatch's test command: what `hatch test` runs when a project names its own (yt-dlp's
//! `[tool.hatch.envs.hatch-test.scripts] run`), read for the documented suite.

/// What `hatch test` runs when the project replaces its command: the `run` script of the
/// `hatch-test` environment (pyproject.toml's `[tool.hatch.envs.hatch-test.scripts]`, or
/// hatch.toml's `[envs.hatch-test.scripts]`), with hatch's context fields as a run with no
/// arguments fills them (`{args}`: nothing; `{env:NAME:DEFAULT}`: DEFAULT).
pub fn test_run(read: &dyn Fn(&str) -> Option<String>) -> Option<(Vec<String>, &'static str)> {
    let sources = [
        (
            "pyproject.toml",
            &["tool", "hatch", "envs"][..],
            "pyproject.toml [tool.hatch.envs.hatch-test.scripts] run",
        ),
        (
            "hatch.toml",
            &["envs"][..],
            "hatch.toml [envs.hatch-test.scripts] run",
        ),
    ];
    sources.into_iter().find_map(|(file, path, source)| {
        let doc = read(file)?.parse::<toml::Table>().ok()?;
        let mut table = &doc;
        for key in path {
            table = table.get(*key)?.as_table()?;
        }
        let lines = script_lines(table.get("hatch-test")?.get("scripts")?.get("run")?)?;
        Some((lines.iter().map(|l| fields(l)).collect(), source))
    })
}

/// The lines a `hatch run` of one of the project's scripts runs (mkdocs' CI: `hatch run
/// +py=3.12 test:with-coverage`, whose `with-coverage = "test"` names the environment's
/// `test` script, `python -m unittest discover …`), with where they come from: the script
/// of the environment the command names (`ENV:SCRIPT`, `hatch -e ENV run SCRIPT`, else
/// `default`), from pyproject.toml's `[tool.hatch.envs.ENV.scripts]` or hatch.toml's
/// `[envs.ENV.scripts]`, else the `default` environment's, which every other inherits; a
/// line that names another script of it runs that script, as hatch does. The command's
/// own arguments are left out, as hatch's context fields are. None for any other command.
pub fn run_script(
    line: &str,
    read: &dyn Fn(&str) -> Option<String>,
) -> Option<(Vec<String>, String)> {
    let words: Vec<&str> = line
        .split_whitespace()
        .map(|w| w.trim_matches(['"', '\'']))
        .collect();
    let mut i = words.iter().position(|w| *w == "hatch")?;
    let mut env: Option<&str> = None;
    i += 1;
    while let Some(w) = words.get(i) {
        match *w {
            "run" => break,
            "-e" | "--env" => {
                env = words.get(i + 1).copied();
                i += 2;
            }
            o if o.starts_with("--env=") => {
                env = o.strip_prefix("--env=");
                i += 1;
            }
            o if o.starts_with('-') => i += 1,
            _ => return None,
        }
    }
    i += 1;
    // `+py=3.12`, `-py=3.8`, `+type=default`: the matrix's variables, not the script.
    while words
        .get(i)
        .is_some_and(|w| w.starts_with('+') || w.starts_with('-'))
    {
        i += 1;
    }
    let target = *words.get(i)?;
    let (env, script) = match target.split_once(':') {
        Some((env, script)) => (env, script),
        None => (env.unwrap_or("default"), target),
    };
    let sources = [
        ("pyproject.toml", &["tool", "hatch", "envs"][..]),
        ("hatch.toml", &["envs"][..]),
    ];
    sources.into_iter().find_map(|(file, path)| {
        let doc = read(file)?.parse::<toml::Table>().ok()?;
        let mut envs = &doc;
        for key in path {
            envs = envs.get(*key)?.as_table()?;
        }
        let scripts = |name: &str| envs.get(name)?.get("scripts")?.as_table().cloned();
        let (own, default) = (scripts(env), scripts("default"));
        let find = |name: &str| -> Option<Vec<String>> {
            script_lines(
                own.as_ref()
                    .and_then(|t| t.get(name))
                    .or_else(|| default.as_ref().and_then(|t| t.get(name)))?,
            )
        };
        let mut lines = find(script)?;
        // A line that names another script runs it (a few levels: no loop).
        for _ in 0..4 {
            let mut expanded = false;
            lines = lines
                .into_iter()
                .flat_map(|l| match find(l.trim()) {
                    Some(inner) if !l.trim().contains(' ') => {
                        expanded = true;
                        inner
                    }
                    _ => vec![l],
                })
                .collect();
            if !expanded {
                break;
            }
        }
        let prefix = path.join(".");
        Some((
            lines.iter().map(|l| fields(l)).collect(),
            format!("{file} [{prefix}.{env}.scripts] {script}"),
        ))
    })
}

/// A hatch script's command lines: one string, or a list of them.
fn script_lines(value: &toml::Value) -> Option<Vec<String>> {
    match value {
        toml::Value::String(line) => Some(vec![line.clone()]),
        toml::Value::Array(items) => Some(
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
        ),
        _ => None,
    }
}

/// A hatch command line's context fields as a run with no arguments fills them.
fn fields(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[at..]);
            return out;
        };
        let field = &after[..close];
        if let Some(env) = field.strip_prefix("env:") {
            out.push_str(env.split_once(':').map_or("", |(_, default)| default));
        } else if field != "args" && !field.starts_with("args:") {
            out.push_str(&rest[at..at + close + 2]);
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use crate::language::Language;
    use crate::suite::{DocumentedSuite, documented_suite};

    fn suite(files: &[(&str, &str)]) -> DocumentedSuite {
        documented_suite(Language::Python, &|p| {
            files
                .iter()
                .find(|(n, _)| *n == p)
                .map(|(_, t)| t.to_string())
        })
    }

    /// mkdocs: its CI runs `hatch run +py=… test:with-coverage`, a script that names the
    /// environment's `test` script, `python -m unittest discover -s mkdocs -p "*tests.py"`;
    /// pytest over the tree collects none of its `*tests.py` files.
    #[test]
    fn a_hatch_script_a_ci_runs_is_the_suite_through_the_scripts_it_names() {
        let pyproject = "[tool.hatch.envs.default.scripts]\nshared = \"pytest -x tests\"\n[tool.hatch.envs.test]\nfeatures = [\"i18n\"]\n[tool.hatch.envs.test.scripts]\ntest = 'python -m unittest discover -s mkdocs -p \"*tests.py\"'\nwith-coverage = \"test\"\n";
        let workflow = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: python -m pip install --upgrade hatch\n      - run: |\n          hatch run +py=${{ matrix.py || matrix.python-version }} test:with-coverage\n";
        let files = [
            ("pyproject.toml", pyproject),
            (".github/workflows/ci.yml", workflow),
            ("mkdocs/__init__.py", ""),
            ("mkdocs/tests/base_tests.py", "import unittest\n"),
        ];
        let s = documented_suite(Language::Python, &crate::testing::reader(&files));
        assert_eq!(
            s.run.command,
            [
                "python3",
                "-m",
                "unittest",
                "discover",
                "-s",
                "mkdocs",
                "-p",
                "*tests.py"
            ],
            "{}",
            s.source
        );
        assert!(
            s.source
                .contains("pyproject.toml [tool.hatch.envs.test.scripts] with-coverage"),
            "{}",
            s.source
        );
        // Another environment inherits the default's scripts; `hatch -e ENV run`.
        let read = |p: &str| (p == "pyproject.toml").then(|| pyproject.to_string());
        let (lines, _) = super::run_script("hatch -e lint run shared", &read).expect("inherited");
        assert_eq!(lines, ["pytest -x tests"]);
        assert_eq!(super::run_script("hatch run test:missing", &read), None);
        assert_eq!(super::run_script("hatch build", &read), None);
    }

    #[test]
    fn hatchs_test_script_is_the_documented_suite() {
        // yt-dlp: `hatch test` runs devscripts/run_tests.py (pytest -m "not download"); its
        // Makefile's `$(PYTHON) -m pytest` is no command the sandbox can read.
        let pyproject = "[tool.hatch.envs.hatch-test.scripts]\nrun = \"python -m devscripts.run_tests{env:HATCH_TEST_ARGS:} {args}\"\n";
        let runner = "import argparse, subprocess\nargs = argparse.ArgumentParser().parse_args()\nsubprocess.call(['pytest', '-m', 'not download'])\n";
        let files = [
            ("pyproject.toml", pyproject),
            ("devscripts/run_tests.py", runner),
            ("Makefile", "test:\n\t$(PYTHON) -m pytest -Werror\n"),
        ];
        let s = suite(&files);
        assert_eq!(
            s.source,
            "pyproject.toml [tool.hatch.envs.hatch-test.scripts] run"
        );
        assert_eq!(s.run.command, ["python3", "-m", "devscripts.run_tests"]);
        let s = suite(&[(
            "hatch.toml",
            "[envs.hatch-test.scripts]\nrun = [\"pytest{env:HATCH_TEST_ARGS: -x} tests {args}\"]\n",
        )]);
        assert_eq!(s.source, "hatch.toml [envs.hatch-test.scripts] run");
        assert_eq!(&s.run.command[3..], ["-x", "tests"]);
    }
}
