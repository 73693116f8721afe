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

/// The review crate's modules: a step module holds one step (or one agent's steps); the
/// registry wires them. Data and services sit below both.
const STEP_MODULES: &[&str] = &[
    "agents",
    "auditor",
    "autofix",
    "fixer",
    "investigator",
    "skeptic",
    "sandbox_job",
];
const REGISTRY_MODULES: &[&str] = &["pipeline", "embedded", "scan"];
const DATA_AND_SERVICES: &[&str] = &[
    // What every step shares: the steps' names, the settings a review fixes for all steps.
    "core",
    // The one shape of a step (its context and handler) that the registry maps names to.
    "step",
    "wire",
    "error",
    "trace",
    "rows",
    "outcome",
    "model",
    "test_runs",
    "suite",
    "git_tree",
    "bounded",
    // A model's citation of a file and Proven's check of it (the second reviewer's
    // Skeptic and `proven ask`).
    "citation",
    // What a model's patch may be (the Fixer's and the autofix attempt's).
    "patch",
    // The control steps' logic (intake, scout, the dependency evidence, the writer): what
    // the registry's handlers run, and the Investigator evaluates versions with.
    "steps",
];

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

/// The top-level module a file belongs to (`pipeline/judge.rs` → `pipeline`).
fn module_of(file: &str) -> String {
    let first = file.split('/').next().unwrap_or(file);
    first.trim_end_matches(".rs").to_string()
}

/// The modules each module names (`crate::x`), comments left out.
fn imports() -> HashMap<String, BTreeSet<String>> {
    let mut graph: HashMap<String, BTreeSet<String>> = HashMap::new();
    for (file, text) in sources() {
        let module = module_of(&file);
        if module == "lib" {
            continue;
        }
        let named = graph.entry(module.clone()).or_default();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    named.insert(name);
                }
            }
        }
    }
    graph
}

#[test]
fn the_review_crate_has_no_import_cycle() {
    let graph = imports();
    // Depth-first, with the path so far: a module met again on its own path closes a cycle.
    fn visit(
        graph: &HashMap<String, BTreeSet<String>>,
        module: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut cycle = path[at..].to_vec();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        if !done.insert(module.to_string()) {
            return None;
        }
        path.push(module.to_string());
        for next in graph.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(graph, next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    let mut modules: Vec<&String> = graph.keys().collect();
    modules.sort();
    for module in modules {
        let mut path = Vec::new();
        if let Some(cycle) = visit(&graph, module, &mut path, &mut done) {
            panic!("shared/review imports in a circle: {}", cycle.join(" -> "));
        }
    }
    // The check sees the imports: the registry does name the steps.
    assert!(graph["pipeline"].contains("agents"));
}

#[test]
fn a_step_module_imports_no_other_step_and_not_the_registry() {
    let graph = imports();
    let mut crossed = Vec::new();
    for step in STEP_MODULES {
        for named in graph.get(*step).into_iter().flatten() {
            if named != step
                && (STEP_MODULES.contains(&named.as_str())
                    || REGISTRY_MODULES.contains(&named.as_str()))
            {
                crossed.push(format!("{step} -> {named}"));
            }
        }
    }
    for below in DATA_AND_SERVICES {
        for named in graph.get(*below).into_iter().flatten() {
            if !DATA_AND_SERVICES.contains(&named.as_str()) {
                crossed.push(format!("{below} (data or service) -> {named}"));
            }
        }
    }
    assert!(
        crossed.is_empty(),
        "a step names the next step by StepName and reaches others through the data and \
         service modules only: {crossed:?}"
    );
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

#[test]
fn no_control_flow_on_display_text() {
    let mut found = Vec::new();
    for (file, text) in sources() {
        // Tests may compare what they read with what they expect.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for shape in DISPLAY_TEXT_BRANCHES {
                if line.contains(shape) {
                    found.push(format!("{file}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "branch on a typed value (StepName, StepState, SkepticVerdict, EvidenceKind, \
         SurfaceStatus, FailureKind, ChangeKind, Band), not on its text: {found:#?}"
    );
    // The check sees code: a comparison of a verdict with a literal is one of its shapes.
    assert!(
        DISPLAY_TEXT_BRANCHES
            .iter()
            .any(|s| "if s.verdict == \"refuted\"".contains(s))
    );
}
