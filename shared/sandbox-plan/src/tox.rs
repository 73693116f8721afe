//! A project's tox configuration, wherever tox reads it from: tox.ini, `[tool.tox]
//! legacy_tox_ini` in pyproject.toml (tqdm keeps its whole tox.ini there), setup.cfg's
//! `[tox:tox]`, and tox 4's TOML form (tox.toml, `[tool.tox]` tables). Read as text,
//! never run: the dependency preparation takes its test deps from it, the documented suite
//! its commands.
//!
//! Values are lines; `{[section]key}` references (`deps = {[core]deps}`) are substituted
//! as tox substitutes them. tox itself is Python, and no crate reads its format, so the ini
//! subset it uses is read here.

use std::collections::BTreeMap;

/// References followed at most this deep (a reference cycle ends here).
const MAX_SUBSTITUTION_DEPTH: usize = 8;

/// tox 4's names of its substitutions and the tox 3 names it takes for them alike: what
/// reads a value here knows the tox 3 names (`{toxinidir}` is the tree), and a tox 4
/// project's `{tox_root}/tests` was passed on as it stood, a path that is nowhere (boltons).
const TOX4_NAMES: &[(&str, &str)] = &[
    ("{tox_root}", "{toxinidir}"),
    ("{work_dir}", "{toxworkdir}"),
    ("{env_name}", "{envname}"),
    ("{env_dir}", "{envdir}"),
    ("{env_tmp_dir}", "{envtmpdir}"),
    ("{env_log_dir}", "{envlogdir}"),
    ("{env_bin_dir}", "{envbindir}"),
    ("{env_python}", "{envpython}"),
    ("{env_site_packages_dir}", "{envsitepackagesdir}"),
];

/// The variables tox 4 passes to every environment on Linux whatever its `pass_env` says
/// (`tox_env/api.py`, `python/api.py` and `virtual_env/api.py`, `_default_pass_env`); tox
/// 3's were fewer, and none of either is a CI's.
const TOX_PASSES: &[&str] = &[
    "https_proxy",
    "http_proxy",
    "no_proxy",
    "LANG",
    "LANGUAGE",
    "CURL_CA_BUNDLE",
    "SSL_CERT_FILE",
    "CC",
    "CFLAGS",
    "CCSHARED",
    "CXX",
    "CPPFLAGS",
    "LD_LIBRARY_PATH",
    "LDFLAGS",
    "HOME",
    "FORCE_COLOR",
    "NO_COLOR",
    "NETRC",
    "PYTHON_GIL",
    "TMPDIR",
    "NIX_LD",
    "NIX_LD_LIBRARY_PATH",
    "SSH_AGENT_PID",
    "SSH_AUTH_SOCK",
    "PKG_CONFIG",
    "PKG_CONFIG_PATH",
    "PKG_CONFIG_SYSROOT_DIR",
    "REQUESTS_CA_BUNDLE",
    "PATH",
];

/// The prefixes of the variables tox 4 passes to a virtualenv's environment.
const TOX_PASSES_PREFIX: &[&str] = &["PIP_", "VIRTUALENV_"];

/// The sections of a tox configuration: section → key → lines (continuation lines kept as
/// lines, comments dropped).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Tox {
    /// Where it was read from (`tox.ini`, `pyproject.toml [tool.tox] legacy_tox_ini`, ...).
    pub source: String,
    sections: BTreeMap<String, Vec<(String, Vec<String>)>>,
}

impl Tox {
    /// The first configuration tox would read in a tree (`read` returns a file's text).
    pub(crate) fn find(read: &dyn Fn(&str) -> Option<String>) -> Option<Tox> {
        if let Some(text) = read("tox.ini") {
            return Some(Tox::ini(&text, "tox.ini", ""));
        }
        if let Some(text) = read("tox.toml")
            && let Ok(doc) = text.parse::<toml::Table>()
        {
            return Some(Tox::native(&doc, "tox.toml"));
        }
        if let Some(text) = read("pyproject.toml")
            && let Ok(doc) = text.parse::<toml::Table>()
            && let Some(tool_tox) = doc
                .get("tool")
                .and_then(|t| t.get("tox"))
                .and_then(|t| t.as_table())
        {
            if let Some(legacy) = tool_tox.get("legacy_tox_ini").and_then(|v| v.as_str()) {
                return Some(Tox::ini(
                    legacy,
                    "pyproject.toml [tool.tox] legacy_tox_ini",
                    "",
                ));
            }
            return Some(Tox::native(tool_tox, "pyproject.toml [tool.tox]"));
        }
        if let Some(text) = read("setup.cfg")
            && text.lines().any(|l| l.trim() == "[tox:tox]")
        {
            return Some(Tox::ini(&text, "setup.cfg", "tox:"));
        }
        None
    }

    /// An ini text; `prefix` is stripped from section names (setup.cfg's `[tox:tox]`).
    pub(crate) fn ini(text: &str, source: &str, prefix: &str) -> Tox {
        let mut sections: BTreeMap<String, Vec<(String, Vec<String>)>> = BTreeMap::new();
        let mut section: Option<String> = None;
        for raw in text.lines() {
            // An inline comment (` # ...`) is no part of a value.
            let line = raw.split(" #").next().unwrap_or_default();
            let t = line.trim();
            if t.is_empty() || t.starts_with(['#', ';']) {
                continue;
            }
            if t.starts_with('[') && t.ends_with(']') {
                let name = t[1..t.len() - 1].trim();
                section = Some(name.strip_prefix(prefix).unwrap_or(name).to_string());
                continue;
            }
            let Some(name) = &section else { continue };
            let keys = sections.entry(name.clone()).or_default();
            if line.starts_with([' ', '\t'])
                && let Some((_, lines)) = keys.last_mut()
            {
                lines.push(t.to_string());
                continue;
            }
            if let Some((k, v)) = t.split_once('=') {
                let v = v.trim();
                let lines = if v.is_empty() {
                    Vec::new()
                } else {
                    vec![v.to_string()]
                };
                keys.push((k.trim().to_string(), lines));
            }
        }
        Tox {
            source: source.into(),
            sections,
        }
    }

    /// tox 4's TOML form: `env_list`, `env_run_base`, `env.NAME`, as the ini sections they
    /// mean (`[tox] envlist`, `[testenv]`, `[testenv:NAME]`).
    fn native(doc: &toml::Table, source: &str) -> Tox {
        fn lines(value: Option<&toml::Value>) -> Vec<String> {
            let Some(items) = value.and_then(|v| v.as_array()) else {
                return value
                    .and_then(|v| v.as_str())
                    .map(|s| vec![s.to_string()])
                    .unwrap_or_default();
            };
            items
                .iter()
                .filter_map(|item| match item {
                    toml::Value::String(s) => Some(s.clone()),
                    // a command: its arguments, quoted where they hold a space.
                    toml::Value::Array(args) => Some(
                        args.iter()
                            .filter_map(|a| a.as_str())
                            .map(|a| {
                                if a.contains(char::is_whitespace) {
                                    format!("\"{a}\"")
                                } else {
                                    a.to_string()
                                }
                            })
                            .collect::<Vec<_>>()
                            .join(" "),
                    ),
                    _ => None,
                })
                .collect()
        }
        fn env(table: &toml::Table) -> Vec<(String, Vec<String>)> {
            let mut keys: Vec<(String, Vec<String>)> = [
                "deps",
                "commands",
                "extras",
                "dependency_groups",
                "change_dir",
            ]
            .into_iter()
            .map(|k| (k.to_string(), lines(table.get(k))))
            .filter(|(_, l)| !l.is_empty())
            .collect();
            // tox 4's `set_env` is a table (`set_env = { CALC_CONFIG = "x" }`); the ini
            // form's lines are `NAME=value`.
            if let Some(vars) = table.get("set_env").and_then(|v| v.as_table()) {
                let set: Vec<String> = vars
                    .iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| format!("{k}={v}")))
                    .collect();
                if !set.is_empty() {
                    keys.push(("set_env".to_string(), set));
                }
            }
            keys
        }
        let mut sections = BTreeMap::new();
        let envs: Vec<String> = lines(doc.get("env_list"))
            .into_iter()
            // `3.13` names a Python as `py313` does.
            .map(|e| {
                if e.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                    format!("py{}", e.replace('.', ""))
                } else {
                    e
                }
            })
            .collect();
        sections.insert(
            "tox".to_string(),
            vec![("envlist".to_string(), vec![envs.join(", ")])],
        );
        if let Some(base) = doc.get("env_run_base").and_then(|b| b.as_table()) {
            sections.insert("testenv".to_string(), env(base));
        }
        for (name, table) in doc
            .get("env")
            .and_then(|e| e.as_table())
            .into_iter()
            .flatten()
        {
            if let Some(table) = table.as_table() {
                sections.insert(format!("testenv:{name}"), env(table));
            }
        }
        Tox {
            source: source.into(),
            sections,
        }
    }

    /// Whether tox hands the caller's variable `name` on to the commands of `[testenv]`:
    /// one of the variables tox always passes ([`TOX_PASSES`]), or one a `passenv` /
    /// `pass_env` pattern of it names (`CI`, `GITHUB_*`, `*`). tox passes nothing else: a
    /// CI's `CI=true` and its workflow's variables do not reach a suite it runs unless
    /// named (pytest-mock's tests expect pytest's short diff, which pytest widens on a CI).
    pub(crate) fn passes(&self, name: &str) -> bool {
        if TOX_PASSES.contains(&name) || TOX_PASSES_PREFIX.iter().any(|p| name.starts_with(p)) {
            return true;
        }
        let mut patterns = self.values("testenv", "passenv");
        patterns.extend(self.values("testenv", "pass_env"));
        patterns
            .iter()
            .flat_map(|l| l.split([',', ' ', '\t']))
            .map(|p| p.trim().trim_matches(['"', '\'']))
            .filter(|p| !p.is_empty())
            .any(|p| {
                globset::Glob::new(p)
                    .map(|g| g.compile_matcher().is_match(name))
                    .unwrap_or(false)
            })
    }

    /// The section names, in order.
    pub(crate) fn section_names(&self) -> impl Iterator<Item = &str> {
        self.sections.keys().map(String::as_str)
    }

    /// A key's lines with `{[section]key}` references substituted (a line that is only a
    /// reference becomes the referenced lines), tox 4's names of its own substitutions as
    /// tox 3 names them ([`TOX4_NAMES`]).
    pub(crate) fn values(&self, section: &str, key: &str) -> Vec<String> {
        let mut lines = self.lookup(section, key, 0);
        for line in &mut lines {
            for (tox4, tox3) in TOX4_NAMES {
                if line.contains(tox4) {
                    *line = line.replace(tox4, tox3);
                }
            }
        }
        lines
    }

    fn lookup(&self, section: &str, key: &str, depth: usize) -> Vec<String> {
        let Some((_, lines)) = self
            .sections
            .get(section)
            .and_then(|keys| keys.iter().find(|(k, _)| k == key))
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for line in lines {
            out.extend(self.substitute(line, depth));
        }
        out
    }

    fn substitute(&self, line: &str, depth: usize) -> Vec<String> {
        let Some(at) = line.find("{[") else {
            return vec![line.to_string()];
        };
        let Some(close) = line[at..].find('}').map(|c| at + c) else {
            return vec![line.to_string()];
        };
        let reference = &line[at + 2..close];
        let Some((section, key)) = reference.split_once(']') else {
            return vec![line.to_string()];
        };
        let replaced = if depth < MAX_SUBSTITUTION_DEPTH {
            self.lookup(section.trim(), key.trim(), depth + 1)
        } else {
            Vec::new()
        };
        let (before, after) = (&line[..at], &line[close + 1..]);
        if before.trim().is_empty() && after.trim().is_empty() {
            return replaced;
        }
        // Inside a line: the referenced lines joined by spaces, then the rest substituted.
        let joined = format!("{before}{}{after}", replaced.join(" "));
        self.substitute(&joined, depth + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tox 4's TOML form: `set_env` is a table, read as the ini form's `NAME=value` lines,
    /// for the base environment and a named one alike.
    #[test]
    fn tox4_toml_set_env_is_read_as_lines() {
        let doc: toml::Table = "env_list = [\"3.12\"]\n[env_run_base]\ncommands = [[\"pytest\", \"tests\"]]\nset_env = { CALC_CONFIG = \"tests/calc.cfg\", MODE = \"1\" }\n[env.lint]\nset_env = { LINT = \"yes\" }\n"
            .parse()
            .expect("toml");
        let tox = Tox::native(&doc, "tox.toml");
        assert_eq!(
            tox.values("testenv", "set_env"),
            ["CALC_CONFIG=tests/calc.cfg", "MODE=1"]
        );
        assert_eq!(tox.values("testenv:lint", "set_env"), ["LINT=yes"]);
        assert_eq!(tox.values("testenv", "commands"), ["pytest tests"]);
    }

    /// tqdm's pyproject.toml keeps its tox configuration as `legacy_tox_ini`, its test deps
    /// in `[core] deps`, substituted into `[testenv] deps`.
    const TQDM_LIKE: &str = r#"
[tool.tox]
legacy_tox_ini = """
[tox]
envlist = py{37,38,39,310,311,312}{,-tf}{,-keras}, pypy3, setup.py, perf

[core]
deps =
    pytest
    pytest-cov
    pytest-timeout
    pytest-asyncio>=0.24
    nbval
commands =
    pytest --cov=tqdm --cov-report=xml --cov-report=term -k "not perf" -o addopts= -v --tb=short -rxs -W=error --durations=0 --durations-min=0.1 {posargs}

[testenv]
passenv = TOXENV,CI,GITHUB_*,CODECOV_*,COVERALLS_*,HOME
deps =
    {[core]deps}
    cython
    dask[delayed]
commands = {[core]commands}
"""
"#;

    #[test]
    fn tox_in_pyproject_is_read_and_references_are_substituted() {
        let read = |name: &str| (name == "pyproject.toml").then(|| TQDM_LIKE.to_string());
        let tox = Tox::find(&read).expect("found");
        assert_eq!(tox.source, "pyproject.toml [tool.tox] legacy_tox_ini");
        assert_eq!(
            tox.values("testenv", "deps"),
            [
                "pytest",
                "pytest-cov",
                "pytest-timeout",
                "pytest-asyncio>=0.24",
                "nbval",
                "cython",
                "dask[delayed]"
            ]
        );
        let commands = tox.values("testenv", "commands");
        assert_eq!(commands.len(), 1);
        assert!(commands[0].starts_with("pytest --cov=tqdm"), "{commands:?}");
        assert!(commands[0].contains("-k \"not perf\""));
    }

    #[test]
    fn a_reference_inside_a_line_and_a_cycle_end() {
        let tox = Tox::ini(
            "[a]\nx = one two\n[testenv]\ncommands = pytest {[a]x} -q\nloop = {[testenv]loop}\n",
            "tox.ini",
            "",
        );
        assert_eq!(tox.values("testenv", "commands"), ["pytest one two -q"]);
        assert!(tox.values("testenv", "loop").is_empty());
    }

    #[test]
    fn setup_cfg_and_the_toml_form_are_read() {
        let cfg = "[metadata]\nname = x\n[tox:tox]\nenvlist = py38\n[testenv]\ndeps = mock\n";
        let read = |name: &str| (name == "setup.cfg").then(|| cfg.to_string());
        let tox = Tox::find(&read).expect("found");
        assert_eq!(tox.values("tox", "envlist"), ["py38"]);
        assert_eq!(tox.values("testenv", "deps"), ["mock"]);

        let toml = "env_list = [\"3.12\", \"lint\"]\n[env_run_base]\ndeps = [\"pytest>=8\", \"-r requirements-test.txt\"]\ncommands = [[\"pytest\", \"-k\", \"not slow\", \"{posargs}\"]]\n[env.lint]\ndeps = [\"ruff\"]\n";
        let read = |name: &str| (name == "tox.toml").then(|| toml.to_string());
        let tox = Tox::find(&read).expect("found");
        assert_eq!(tox.values("tox", "envlist"), ["py312, lint"]);
        assert_eq!(
            tox.values("testenv", "deps"),
            ["pytest>=8", "-r requirements-test.txt"]
        );
        assert_eq!(
            tox.values("testenv", "commands"),
            ["pytest -k \"not slow\" {posargs}"]
        );
        assert_eq!(tox.values("testenv:lint", "deps"), ["ruff"]);
    }
}
