//! The versions of the test tools a run had (`pytest 4.6.11`, `mocha 6.2.3`), read from its
//! prepared environment: for Python the preparation's `report.json` (the interpreter it was
//! made with, and every package the environment sees: the project's own and the image's),
//! for Node the packages of `node_modules`. Read on the host only through
//! [`crate::written::read_written`]: a container wrote them.

use std::path::Path;

use crate::Language;

/// The largest file read here (a report listing many packages fits).
const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// Python distributions that run or extend the running of tests: runners and their
/// plugins (every `pytest-*` too).
const PYTHON_TOOLS: &[&str] = &["pytest", "nose", "nose2", "unittest2", "testtools", "green"];

/// npm packages that run tests.
pub(crate) const NODE_TOOLS: &[&str] = &[
    "mocha",
    "jest",
    "ava",
    "tap",
    "tape",
    "vitest",
    "jasmine",
    "karma",
    "qunit",
    "@hapi/lab",
    "lab",
    "uvu",
    "nodeunit",
    "vows",
    "ts-jest",
    "babel-jest",
    "nyc",
    "c8",
];

/// The test tools of a prepared environment, in words, the interpreter first.
pub fn prepared(language: Language, dir: &Path) -> Vec<String> {
    match language {
        Language::Python => python(dir),
        Language::Node => node(dir),
        Language::Rust | Language::Go => Vec::new(),
    }
}

fn python(dir: &Path) -> Vec<String> {
    let Some(report) = crate::written::read_written(&dir.join("report.json"), MAX_BYTES)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(python) = report["python"].as_str() {
        out.push(format!("Python {python}"));
    }
    let mut tools: Vec<String> = report["installed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str())
        .filter_map(|p| p.split_once("=="))
        .filter(|(name, _)| {
            let name = name.to_ascii_lowercase().replace('_', "-");
            PYTHON_TOOLS.contains(&name.as_str()) || name.starts_with("pytest-")
        })
        .map(|(name, version)| format!("{name} {version}"))
        .collect();
    tools.sort_by_key(|t| (!t.starts_with("pytest "), t.to_ascii_lowercase()));
    out.extend(tools);
    out
}

/// The folder of package `name` in the layer's node_modules: itself, or where its link
/// points within node_modules (pnpm links `mocha` to `.pnpm/mocha@10.8.2/node_modules/mocha`);
/// None for a link out of node_modules (absolute, or through `..`).
fn node_package(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    let modules = dir.join("node_modules");
    let at = modules.join(name);
    let meta = std::fs::symlink_metadata(&at).ok()?;
    if !meta.file_type().is_symlink() {
        return Some(at);
    }
    let target = std::fs::read_link(&at).ok()?;
    // A scoped package's link starts from node_modules/@scope.
    let base = if name.contains('/') {
        at.parent()?
    } else {
        &modules
    };
    let mut inside = base.strip_prefix(&modules).ok()?.components().count();
    for c in target.components() {
        match c {
            std::path::Component::Normal(_) => inside += 1,
            std::path::Component::ParentDir if inside > 0 => inside -= 1,
            _ => return None,
        }
    }
    Some(base.join(target))
}

fn node(dir: &Path) -> Vec<String> {
    NODE_TOOLS
        .iter()
        .filter_map(|name| {
            let manifest = node_package(dir, name)?.join("package.json");
            let bytes = crate::written::read_written(&manifest, MAX_BYTES).ok()?;
            let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
            Some(format!("{name} {}", value["version"].as_str()?))
        })
        .collect()
}

/// `options` added to what the run's `PYTEST_ADDOPTS` (`NAME=value` entries) already says.
fn add_pytest_options(run_env: &mut Vec<String>, options: &str) {
    match run_env
        .iter_mut()
        .find(|e| e.starts_with("PYTEST_ADDOPTS="))
    {
        Some(e) => {
            e.push(' ');
            e.push_str(options);
        }
        None => run_env.push(format!("PYTEST_ADDOPTS={options}")),
    }
}

/// pytest's option for a run of a whole suite, said in the run's `PYTEST_ADDOPTS`.
const PAST_COLLECTION_ERRORS: &str = "--continue-on-collection-errors";

/// A run of a package's whole Python suite goes on past a module pytest cannot collect
/// (one that needs the network at import, an optional library the sandbox has not): from
/// pytest 3.0 one such module stops the whole session before any test, and the suite then
/// says nothing of the patch. pytest names each such module an error (`ERROR path`), held
/// to the base's by name like any failure. Before 3.0 pytest always went on, and knows no
/// such option; a run with no prepared pytest has the image's. Appends the option to the
/// run's `PYTEST_ADDOPTS` (`NAME=value` entries) and returns the line the record's setup
/// says, or None where pytest has it not.
pub fn past_collection_errors(test_tools: &[String], run_env: &mut Vec<String>) -> Option<String> {
    let pytest = test_tools
        .iter()
        .find_map(|t| t.strip_prefix("pytest "))
        .map(|v| v.trim());
    if let Some(version) = pytest {
        let major: u32 = version
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|m| m.parse().ok())?;
        if major < 3 {
            return None;
        }
    }
    add_pytest_options(run_env, PAST_COLLECTION_ERRORS);
    Some(format!(
        "the whole suite goes on past a module pytest cannot collect ({PAST_COLLECTION_ERRORS}), each such module an error by name"
    ))
}

/// pytest plugins that replace pytest's own report with theirs (pydantic's pytest-pretty:
/// `Results (198.31s):` and a table of cut names instead of `31 failed, 12363 passed` and
/// the short summary): the run's counts and failing tests are read from pytest's own, so
/// they are blocked by name (`-p no:NAME`, their entry points').
const REPORT_PLUGINS: &[(&str, &str)] = &[("pytest-pretty", "pretty"), ("pytest-sugar", "sugar")];

/// A Python run whose environment has a plugin of [`REPORT_PLUGINS`] reports as pytest
/// does: each blocked in the run's `PYTEST_ADDOPTS` (`NAME=value` entries). The line the
/// record's setup says, or None where there is none.
pub fn plain_report(test_tools: &[String], run_env: &mut Vec<String>) -> Option<String> {
    let found: Vec<&(&str, &str)> = REPORT_PLUGINS
        .iter()
        .filter(|(dist, _)| {
            test_tools.iter().any(|t| {
                t.split_once(' ')
                    .is_some_and(|(name, _)| name.eq_ignore_ascii_case(dist))
            })
        })
        .collect();
    if found.is_empty() {
        return None;
    }
    let options: Vec<String> = found.iter().map(|(_, ep)| format!("-p no:{ep}")).collect();
    let options = options.join(" ");
    add_pytest_options(run_env, &options);
    Some(format!(
        "pytest reports as itself ({options}): {} would replace its summary, where the run's counts and failing tests are read",
        found
            .iter()
            .map(|(d, _)| *d)
            .collect::<Vec<_>>()
            .join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pytest 3.0 and later stop a whole suite at one module they cannot collect; the
    /// run goes on past it, the option added to what `PYTEST_ADDOPTS` already says. Before
    /// 3.0 pytest went on by itself and knows no such option.
    #[test]
    fn a_whole_suite_goes_on_past_a_module_pytest_cannot_collect() {
        let tools = |v: &str| vec!["Python 3.7.3".to_string(), format!("pytest {v}")];
        let mut env = vec!["CI=true".to_string(), "PYTEST_ADDOPTS=-rfE".to_string()];
        assert!(past_collection_errors(&tools("4.6.11"), &mut env).is_some());
        assert_eq!(
            env,
            [
                "CI=true",
                "PYTEST_ADDOPTS=-rfE --continue-on-collection-errors"
            ]
        );
        let mut env = vec!["CI=true".to_string()];
        assert!(
            past_collection_errors(&[], &mut env).is_some(),
            "the image's pytest"
        );
        assert_eq!(
            env,
            ["CI=true", "PYTEST_ADDOPTS=--continue-on-collection-errors"]
        );
        for old in ["2.9.2", "2.5.1"] {
            let mut env = vec!["PYTEST_ADDOPTS=-rfE".to_string()];
            assert_eq!(past_collection_errors(&tools(old), &mut env), None, "{old}");
            assert_eq!(env, ["PYTEST_ADDOPTS=-rfE"], "{old}");
        }
    }

    /// pydantic's suite: pytest-pretty printed `Results (198.31s):` and a table in place of
    /// pytest's summary, and the run said the runner printed none.
    #[test]
    fn a_plugin_that_replaces_pytests_report_is_blocked() {
        let tools = |plugin: &str| {
            vec![
                "Python 3.13.0".to_string(),
                "pytest 9.1.1".to_string(),
                plugin.to_string(),
            ]
        };
        let mut env = vec!["PYTEST_ADDOPTS=-rfE".to_string()];
        let line = plain_report(&tools("pytest-pretty 1.3.0"), &mut env).expect("blocked");
        assert_eq!(env, ["PYTEST_ADDOPTS=-rfE -p no:pretty"]);
        assert!(line.contains("pytest-pretty"), "{line}");
        let mut env = Vec::new();
        assert!(plain_report(&tools("pytest-sugar 0.9.7"), &mut env).is_some());
        assert_eq!(env, ["PYTEST_ADDOPTS=-p no:sugar"]);
        let mut env = Vec::new();
        assert_eq!(plain_report(&tools("pytest-cov 4.1.0"), &mut env), None);
        assert!(env.is_empty());
    }

    #[test]
    fn a_python_environments_runner_and_plugins_are_named() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(
            dir.path().join("report.json"),
            r#"{"python": "3.8.18", "installed": ["attrs==19.1.0", "pytest-cov==2.8.1", "nose==1.3.7", "pytest==4.6.11", "six==1.12.0"]}"#,
        )
        .expect("write");
        assert_eq!(
            prepared(Language::Python, dir.path()),
            [
                "Python 3.8.18",
                "pytest 4.6.11",
                "nose 1.3.7",
                "pytest-cov 2.8.1"
            ]
        );
        assert!(prepared(Language::Go, dir.path()).is_empty());
    }

    #[test]
    fn a_node_environments_runner_is_named_and_a_planted_link_is_not_followed() {
        let dir = tempfile::tempdir().expect("dir");
        let mocha = dir.path().join("node_modules/mocha");
        std::fs::create_dir_all(&mocha).expect("dirs");
        std::fs::write(
            mocha.join("package.json"),
            r#"{"name": "mocha", "version": "6.2.3"}"#,
        )
        .expect("write");
        let jest = dir.path().join("node_modules/jest");
        // pnpm: a link into node_modules/.pnpm is read; one out of node_modules is not.
        let pnpm = dir
            .path()
            .join("node_modules/.pnpm/vitest@2.1.8/node_modules/vitest");
        std::fs::create_dir_all(&pnpm).expect("mkdir");
        std::fs::write(pnpm.join("package.json"), r#"{"version": "2.1.8"}"#).expect("write");
        std::os::unix::fs::symlink(
            ".pnpm/vitest@2.1.8/node_modules/vitest",
            dir.path().join("node_modules/vitest"),
        )
        .expect("link");
        let out = dir.path().join("elsewhere-pkg");
        std::fs::create_dir_all(&out).expect("mkdir");
        std::fs::write(out.join("package.json"), r#"{"version": "6.0.0"}"#).expect("write");
        std::os::unix::fs::symlink("../elsewhere-pkg", dir.path().join("node_modules/ava"))
            .expect("link");
        std::fs::create_dir_all(&jest).expect("dirs");
        let elsewhere = dir.path().join("elsewhere.json");
        std::fs::write(&elsewhere, r#"{"version": "9.9.9"}"#).expect("write");
        std::os::unix::fs::symlink(&elsewhere, jest.join("package.json")).expect("link");
        assert_eq!(
            prepared(Language::Node, dir.path()),
            ["mocha 6.2.3", "vitest 2.1.8"]
        );
    }
}
