//! The versions a CI file's matrix names under given keys (Travis' `python:` or `node_js:`,
//! a GitHub workflow's `python-version:` or `node-version:`, AppVeyor's `nodejs_version:`),
//! read as text: an unquoted `3.10` is the version its author wrote, not YAML's float 3.1,
//! and a file YAML would refuse still says what it tests. Each language's reader
//! ([`crate::python`], [`crate::node_version`]) decides which items name a version.

use std::path::Path;

/// Workflow files read at most (a repository with more generates them).
const MAX_WORKFLOWS: usize = 50;

/// The tree's GitHub workflow files (`.github/workflows/NAME.yml`), sorted, at most
/// [`MAX_WORKFLOWS`].
pub fn workflows(src: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(src.join(".github/workflows"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
        .collect();
    names.sort();
    names.truncate(MAX_WORKFLOWS);
    names
        .into_iter()
        .map(|n| format!(".github/workflows/{n}"))
        .collect()
}

/// The items a CI file names under one of `keys`, unquoted, in order, each once: `key: 3.8`,
/// `key: [3.7, "3.8"]`, or a block list (`key:` then `- 3.8` lines), also inside list items
/// (`- node_js: 8`). Every item a job allowed to fail names (Travis' `allow_failures`) is
/// left out: the project tried it ahead of its support ("aiohttp currently has a bug
/// affecting 3.8"), it never said it ran there.
pub fn items(text: &str, keys: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut allowed_to_fail: Vec<String> = Vec::new();
    let mut add = |item: &str, failing: bool| {
        let item = item.trim().trim_matches(['"', '\'']).trim();
        let list = if failing {
            &mut allowed_to_fail
        } else {
            &mut found
        };
        if !item.is_empty() && !list.iter().any(|i| i == item) {
            list.push(item.to_string());
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    // The indentation of the `allow_failures:` block being read, if one is.
    let mut failures: Option<usize> = None;
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.split(" #").next().unwrap_or_default();
        let indent = line.len() - line.trim_start().len();
        if line.trim().is_empty() {
            continue;
        }
        if failures.is_some_and(|at| indent <= at) {
            failures = None;
        }
        if line.trim_start().trim_end() == "allow_failures:" {
            failures = Some(indent);
            continue;
        }
        let failing = failures.is_some();
        let mut add = |item: &str| add(item, failing);
        let body = line.trim_start();
        let (indent, body) = match body.strip_prefix("- ") {
            Some(item) => (
                indent + 2 + (item.len() - item.trim_start().len()),
                item.trim_start(),
            ),
            None => (indent, body),
        };
        let Some((key, value)) = body.split_once(':') else {
            continue;
        };
        if !keys.contains(&key.trim()) {
            continue;
        }
        let value = value.trim();
        if !value.is_empty() {
            for item in value
                .trim_start_matches('[')
                .trim_end_matches(']')
                .split(',')
            {
                add(item);
            }
            continue;
        }
        for next in &lines[i + 1..] {
            let next = next.split(" #").next().unwrap_or_default();
            if next.trim().is_empty() {
                continue;
            }
            let next_indent = next.len() - next.trim_start().len();
            match next.trim_start().strip_prefix('-') {
                Some(item) if next_indent >= indent => add(item),
                _ => break,
            }
        }
    }
    found.retain(|v| !allowed_to_fail.contains(v));
    found
}

#[cfg(test)]
mod tests {
    use super::items;

    #[test]
    fn scalars_flow_and_block_lists_are_read_and_what_may_fail_is_left_out() {
        let travis = "language: node_js\nnode_js:\n  - '0.10'\n  - \"4\"\n  - 6 # the newest\nmatrix:\n  include:\n    - node_js: 8\n  allow_failures:\n    - node_js: '0.10'\n";
        assert_eq!(items(travis, &["node_js"]), ["4", "6", "8"]);
        let workflow = "jobs:\n  test:\n    strategy:\n      matrix:\n        node-version: [18.x, '20.x', 22]\n";
        assert_eq!(items(workflow, &["node-version"]), ["18.x", "20.x", "22"]);
        assert!(items("node_js: [unclosed", &["python"]).is_empty());
    }
}
