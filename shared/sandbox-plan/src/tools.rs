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
const NODE_TOOLS: &[&str] = &[
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

#[cfg(test)]
mod tests {
    use super::*;

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
