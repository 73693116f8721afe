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
        let run = table.get("hatch-test")?.get("scripts")?.get("run")?;
        let lines: Vec<String> = match run {
            toml::Value::String(line) => vec![line.clone()],
            toml::Value::Array(items) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
            _ => return None,
        };
        Some((lines.iter().map(|l| fields(l)).collect(), source))
    })
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
