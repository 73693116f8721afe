//! Tidy checks, kept as ordinary tests (the way rust-analyzer keeps `xtask/src/tidy.rs`):
//! they read the crate graph and this crate's sources and fail when a boundary is crossed.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Crates that talk to Docker, git or a model: the API process never links them
/// (ARCHITECTURE.md: "api never talks to Docker").
const NOT_IN_THE_API: &[&str] = &[
    "bollard",
    "git2",
    "proven-models",
    "proven-review",
    "proven-sandbox",
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("shared/review sits two levels below the workspace root")
        .to_path_buf()
}

/// The platform this test runs on (the graph is read for it: other platforms' packages
/// may not be downloaded here).
fn host() -> String {
    let output = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_string()
}

fn metadata() -> Value {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline", "--locked"])
        .args(["--filter-platform", &host()])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

/// Every package `root` links (normal and build dependencies, followed all the way down) and
/// its own dev-dependencies: what `cargo tree -p ROOT` lists.
fn linked_by(metadata: &Value, root: &str) -> BTreeSet<String> {
    let names: HashMap<&str, &str> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap_or(""),
                p["name"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let nodes: HashMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .expect("resolve nodes")
        .iter()
        .map(|n| (n["id"].as_str().unwrap_or(""), n))
        .collect();
    let root_id = names
        .iter()
        .find(|(_, name)| **name == root)
        .map(|(id, _)| *id)
        .unwrap_or_else(|| panic!("{root} is not a workspace package"));
    let mut seen = BTreeSet::new();
    let mut todo = vec![(root_id, true)];
    while let Some((id, is_root)) = todo.pop() {
        for dep in nodes[id]["deps"].as_array().into_iter().flatten() {
            let kinds = dep["dep_kinds"].as_array().into_iter().flatten();
            let follow = kinds.into_iter().any(|k| match k["kind"].as_str() {
                None | Some("build") => true,
                Some("dev") => is_root,
                Some(_) => false,
            });
            let dep_id = dep["pkg"].as_str().unwrap_or("");
            if follow && seen.insert(names[dep_id].to_string()) {
                todo.push((dep_id, false));
            }
        }
    }
    seen
}

#[test]
fn the_api_links_neither_docker_nor_git_nor_the_model_client() {
    let linked = linked_by(&metadata(), "proven-api");
    let crossed: Vec<&&str> = NOT_IN_THE_API
        .iter()
        .filter(|name| linked.contains(**name))
        .collect();
    assert!(
        crossed.is_empty(),
        "proven-api depends on {crossed:?}: move what it needs below proven-review \
         (ReviewRequest lives in proven-store)"
    );
    // The check itself sees the graph: the worker does link them.
    let worker = linked_by(&metadata(), "proven-worker");
    assert!(worker.contains("bollard") && worker.contains("proven-review"));
}
