//! Tidy checks, kept as ordinary tests (the way rust-analyzer keeps `xtask/src/tidy.rs`):
//! they read the crate graph and this crate's sources and fail when a boundary is crossed.

mod graph;

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

/// The review crate's layers, by folder (a file's layer is its first path component, and
/// for a flow its second): `core/` below everything, one folder per evidence flow under
/// `flows/`, `control/` above the flows, the registry on top. Only the registry's modules
/// are named; every other file is placed by its folder, and a file in no layer's folder
/// fails [`every_file_sits_in_a_layer`].
const REGISTRY_MODULES: &[&str] = &["pipeline", "embedded", "scan"];

/// A file's layer, by its folder.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Layer {
    /// `core/`: what every flow shares.
    Core,
    /// `flows/NAME/`: one evidence flow's steps, wire and rule.
    Flow(String),
    /// `control/`: intake, plan, the judge step's assembly, memory.
    Control,
    /// The registry and the runners over it.
    Registry,
    /// `lib.rs`: the crate's modules and re-exports.
    Root,
    /// In no layer's folder.
    Unplaced,
}

fn layer(file: &str) -> Layer {
    let mut parts = file.split('/');
    let top = parts.next().unwrap_or(file).trim_end_matches(".rs");
    match top {
        "lib" => Layer::Root,
        "core" => Layer::Core,
        "control" => Layer::Control,
        "flows" => match parts.next() {
            // `flows/mod.rs` only declares the flows.
            Some("mod.rs") | None => Layer::Root,
            Some(flow) => Layer::Flow(flow.trim_end_matches(".rs").into()),
        },
        t if REGISTRY_MODULES.contains(&t) => Layer::Registry,
        _ => Layer::Unplaced,
    }
}

/// Why `from` may not import `to`, if it may not.
fn crossing(from: &str, to: &str) -> Option<&'static str> {
    let (a, b) = (layer(from), layer(to));
    match (&a, &b) {
        (Layer::Unplaced, _) | (_, Layer::Unplaced) => Some("a file outside every layer"),
        (Layer::Core, Layer::Core) => None,
        (Layer::Core, _) => Some("core imports a layer above it"),
        (Layer::Flow(f), Layer::Flow(g)) if f != g => Some("a flow imports another flow"),
        (Layer::Flow(_), Layer::Registry) => Some("a flow imports the registry"),
        (Layer::Flow(_), Layer::Control) => Some("a flow imports control"),
        (Layer::Flow(_), Layer::Root) => Some("a flow imports a module outside core"),
        (Layer::Control, Layer::Registry | Layer::Root) => {
            Some("control imports the registry or the crate root")
        }
        _ => None,
    }
}

/// The crate's sources, without its test code.
fn production(sources: &[(String, String)]) -> Vec<(String, String)> {
    let tests = graph::test_files(sources);
    sources
        .iter()
        .filter(|(f, _)| !tests.contains(f))
        .cloned()
        .collect()
}

/// Each import that crosses a layer, as `from -> to (why)`.
fn crossings(graph: &graph::Graph) -> Vec<String> {
    let mut out = Vec::new();
    for (from, named) in graph {
        for to in named {
            if let Some(why) = crossing(from, to) {
                out.push(format!("{from} -> {to} ({why})"));
            }
        }
    }
    out
}

#[test]
fn the_review_crate_has_no_import_cycle() {
    let graph = graph::graph(&sources());
    let cycles = graph::cycles(&graph);
    assert!(
        cycles.is_empty(),
        "shared/review imports in a circle (file by file, `super::` included): {:#?}",
        cycles.iter().map(|c| c.join(" -> ")).collect::<Vec<_>>()
    );
    // The check sees the imports: the registry does name the steps.
    assert!(
        graph["pipeline/registry.rs"]
            .iter()
            .any(|f| f.starts_with("flows/test/"))
    );
}

/// The files of `sources` in no layer's folder.
fn unplaced(sources: &[(String, String)]) -> Vec<String> {
    sources
        .iter()
        .map(|(f, _)| f.clone())
        .filter(|f| layer(f) == Layer::Unplaced)
        .collect()
}

#[test]
fn every_file_sits_in_a_layer() {
    let outside = unplaced(&sources());
    assert!(
        outside.is_empty(),
        "put each file in core/, flows/NAME/, control/ or the registry: {outside:#?}"
    );
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    let graph = graph::graph(&production(&sources()));
    let crossed = crossings(&graph);
    assert!(
        crossed.is_empty(),
        "a flow names the next step by StepName and imports core only; core imports \
         nothing above it; control never imports the registry: {crossed:#?}"
    );
    // The check sees the flows: the dependency evidence's steps name core's step shape.
    assert!(graph["flows/deps/evidence.rs"].contains("core/step.rs"));
    assert_eq!(layer("flows/deps/evidence.rs"), Layer::Flow("deps".into()));
}

/// Every file at most 600 lines, every function at most 100 (issue 9: none is longer).
const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 100;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every source file of the crate, by its path under `src/`.
fn sources() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![src()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).expect("src reads") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let name = path
                    .strip_prefix(src())
                    .expect("under src")
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((name, std::fs::read_to_string(&path).expect("source reads")));
            }
        }
    }
    out.sort();
    out
}

/// Each function's length in lines (from `fn` to its closing brace, as rustfmt lays it out).
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let Some(at) = trimmed.find("fn ") else {
            continue;
        };
        let head = &trimmed[..at];
        let is_fn = head
            .split_whitespace()
            .all(|w| matches!(w, "pub" | "pub(crate)" | "pub(super)" | "async" | "const"));
        if !is_fn {
            continue;
        }
        let name: String = trimmed[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{}}}", " ".repeat(indent));
        let mut end = None;
        for (j, l) in lines.iter().enumerate().skip(i) {
            if l.trim_end().ends_with(';') && !lines[i..j].iter().any(|p| p.ends_with('{')) {
                break; // a declaration without a body
            }
            if (j == i && l.trim_end().ends_with('}')) || *l == close {
                end = Some(j);
                break;
            }
        }
        if let Some(end) = end {
            out.push((name, end - i + 1));
        }
    }
    out
}

#[test]
fn no_file_or_function_grows_past_its_limit() {
    let mut over = Vec::new();
    for (file, text) in sources() {
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            over.push(format!("{file}: {lines} lines (at most {MAX_FILE_LINES})"));
        }
        for (name, length) in functions(&text) {
            if length > MAX_FN_LINES {
                over.push(format!(
                    "{file}: fn {name} is {length} lines (at most {MAX_FN_LINES})"
                ));
            }
        }
    }
    assert!(over.is_empty(), "too long: {over:#?}");
    // The measure sees functions: each is measured from `fn` to its closing brace.
    let text =
        "fn short() {\n    one();\n}\n\npub async fn long(\n    a: u8,\n) {\n    two(a);\n}\n";
    assert_eq!(
        functions(text),
        [("short".to_string(), 3), ("long".to_string(), 5)]
    );
}

/// Shapes of code that branch on a stored or shown string where a typed value exists
/// (STYLE.md: "code never branches on display text or an id's prefix"): a verdict, a
/// status, a state, a kind, a band or a reason compared with a literal, an id's prefix.
const DISPLAY_TEXT_BRANCHES: &[&str] = &[
    ".verdict == \"",
    ".verdict != \"",
    ".status == \"",
    ".status != \"",
    ".state == \"",
    ".state != \"",
    ".reason == \"",
    ".reason != \"",
    ".band == \"",
    "kind == \"",
    "kind != \"",
    "id.starts_with(\"",
    "== \"dependency evidence\"",
    "starts_with(\"configuration",
    "starts_with(\"dependency",
];

/// The calls and comparisons that branch on a literal.
const LITERAL_TESTS: &[&str] = &[
    ".starts_with(\"",
    ".ends_with(\"",
    ".contains(\"",
    ".strip_prefix(\"",
    ".strip_suffix(\"",
    "== \"",
    "!= \"",
];

/// Whether a literal is prose a reader is shown (two words, or a label ending in `: `),
/// not a token of a format (`.rs`, `--hash`, `://`).
fn is_prose(literal: &str) -> bool {
    let words = literal
        .split(' ')
        .filter(|w| w.chars().any(|c| c.is_alphabetic()))
        .count();
    words >= 2 || (literal.ends_with(": ") && literal.chars().any(|c| c.is_alphabetic()))
}

/// Each branch on display text in one file's code (its test code left out), as
/// `file:line: code`.
fn display_text_branches(file: &str, text: &str) -> Vec<String> {
    let code = graph::code_only(text, true);
    // Tests may compare what they read with what they expect.
    let code = code.split("#[cfg(test)]").next().unwrap_or_default();
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let shaped = DISPLAY_TEXT_BRANCHES.iter().any(|s| line.contains(s));
        let prose = LITERAL_TESTS.iter().any(|test| {
            line.match_indices(test).any(|(at, _)| {
                let literal = &line[at + test.len()..];
                literal
                    .find('"')
                    .is_some_and(|end| is_prose(&literal[..end]))
            })
        });
        if shaped || prose {
            found.push(format!("{file}:{}: {}", n + 1, line.trim()));
        }
    }
    found
}

#[test]
fn no_control_flow_on_display_text() {
    let found: Vec<String> = production(&sources())
        .iter()
        .flat_map(|(file, text)| display_text_branches(file, text))
        .collect();
    assert!(
        found.is_empty(),
        "branch on a typed value (StepName, StepState, SkepticVerdict, EvidenceKind, \
         SurfaceStatus, FailureKind, ChangeKind, Band), not on its text: {found:#?}"
    );
}

#[cfg(test)]
mod tests;
