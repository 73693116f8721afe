//! Tool evidence, end to end (issue 34, must-show 1): a real repository whose change adds a
//! Python unused import and an undefined name, a Go `Printf` with a wrong verb and a
//! clippy-flagged pattern is reviewed with the real Docker sandbox; each is one `tool`
//! finding with both runs (the same analyzer, at one version, on the base and on the
//! change). The same diagnostics already on the base give none.

use std::sync::Arc;
use std::time::Duration;

use proven_change::testing::TestRepo;
use proven_config::Layers;
use proven_report::{Format, Level, Report, render};
use proven_review::embedded::{Services, review};
use proven_sandbox::{Forwarder, Sandbox, SandboxConfig};
use proven_store::ReviewRequest;
use proven_store::testing::{Backend, TestStore};

mod eslint;
mod skeptic;

const CARGO_TOML: &str = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const GO_MOD: &str = "module example.com/app\n\ngo 1.22\n";

const PY_CLEAN: &str = "import sys\n\n\ndef args():\n    return sys.argv\n";
const PY_FLAGGED: &str = "import os\nimport sys\n\n\ndef args():\n    return sys.argv\n\n\ndef home():\n    return undefined_home\n";
const GO_CLEAN: &str = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tname := \"x\"\n\tfmt.Printf(\"%s\\n\", name)\n}\n";
const GO_FLAGGED: &str = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tname := \"x\"\n\tfmt.Printf(\"%s\\n\", name)\n\tfmt.Printf(\"%d\\n\", name)\n}\n";
const RS_CLEAN: &str = "pub fn answer() -> u32 {\n    42\n}\n";
const RS_FLAGGED: &str =
    "pub fn answer() -> u32 {\n    42\n}\n\npub fn other() -> u32 {\n    return 7;\n}\n";

/// The `proven-sandbox` binary beside this test's (it carries the preparation's
/// forwarder), built when missing.
fn forwarder() -> Forwarder {
    let exe = std::env::current_exe().expect("the test binary");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target/debug");
    let path = dir.join("proven-sandbox");
    if !path.is_file() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "-p", "proven-sandbox", "--bin", "proven-sandbox"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building proven-sandbox failed");
    }
    Forwarder {
        path,
        args: vec!["forward".into()],
    }
}

/// The sandbox: Docker must answer (these tests never pass without one).
async fn sandbox() -> Arc<Sandbox> {
    let config = SandboxConfig {
        default_timeout: Duration::from_secs(300),
        forwarder: Some(forwarder()),
        pool_size: 0,
        ..SandboxConfig::default()
    };
    match Sandbox::connect(config).await {
        Ok(s) => Arc::new(s),
        Err(e) => panic!("the tool evidence test needs a Docker engine: {e}"),
    }
}

/// A repository whose base holds `base` and whose change writes `head` (path, text).
fn repository(base: &[(&str, &str)], head: &[(&str, &str)]) -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("Cargo.toml", CARGO_TOML).write("go.mod", GO_MOD);
    for (path, text) in base {
        repo.write(path, text);
    }
    let base = repo.commit("base");
    for (path, text) in head {
        repo.write(path, text);
    }
    let head = repo.commit("change");
    (repo, base, head)
}

async fn run(repo: &TestRepo, base: &str, head: &str) -> Report {
    let t = TestStore::new(Backend::Sqlite).await;
    let layers =
        Layers::from_env([("PROVEN_AGENTS".to_string(), "off".to_string())]).expect("layers");
    let request = ReviewRequest {
        repository: repo.path().display().to_string(),
        base: base.into(),
        head: head.into(),
        ..Default::default()
    };
    review(
        &t.store,
        &layers,
        request,
        proven_source::Sources::cli(&layers.resolve().expect("settings")),
        Services {
            agents: None,
            sandbox: Some(sandbox().await),
        },
    )
    .await
    .expect("review runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_new_diagnostic_is_one_tool_finding_with_both_runs_and_the_base_own_give_none() {
    let (repo, base, head) = repository(
        &[
            ("app/util.py", PY_CLEAN),
            ("main.go", GO_CLEAN),
            ("src/lib.rs", RS_CLEAN),
        ],
        &[
            ("app/util.py", PY_FLAGGED),
            ("main.go", GO_FLAGGED),
            ("src/lib.rs", RS_FLAGGED),
        ],
    );
    let report = run(&repo, &base, &head).await;
    let plan = report.plan.as_ref().expect("a plan");
    assert!(plan.runs.iter().any(|r| r == "tool evidence"), "{plan:?}");
    let tool: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.proof_level == Level::Tool)
        .collect();
    let mut found: Vec<(String, u32, String)> = tool
        .iter()
        .map(|f| {
            (
                f.location.path.clone(),
                f.location.line.unwrap_or(0),
                f.title.clone(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(found.len(), 4, "{found:#?}\n{:#?}", report.not_seen);
    assert_eq!(found[0].0, "app/util.py");
    assert_eq!(found[0].1, 1);
    assert!(found[0].2.contains("'os' imported but unused"), "{found:?}");
    assert_eq!((found[1].0.as_str(), found[1].1), ("app/util.py", 10));
    assert!(found[1].2.contains("undefined name 'undefined_home'"));
    assert_eq!((found[2].0.as_str(), found[2].1), ("main.go", 8));
    assert!(found[2].2.contains("Printf format %d"), "{found:?}");
    assert_eq!((found[3].0.as_str(), found[3].1), ("src/lib.rs", 6));
    for f in &tool {
        // Both runs: the base's does not report it, the change's does, at one version.
        assert_eq!(f.evidence.len(), 2, "{f:#?}");
        let runs: Vec<_> = f.evidence.iter().filter_map(|e| e.run.as_ref()).collect();
        assert_eq!(runs.len(), 2);
        assert_eq!(
            (runs[0].side.as_str(), runs[1].side.as_str()),
            ("base", "change")
        );
        assert_ne!(runs[0].run_id, runs[1].run_id);
        assert_eq!(runs[0].commit, base);
        let tools: Vec<_> = f.evidence.iter().filter_map(|e| e.tool.as_ref()).collect();
        assert!(tools[0].diagnostic.is_none() && tools[1].diagnostic.is_some());
        assert_eq!(tools[0].version, tools[1].version);
        assert!(!tools[0].version.is_empty());
    }
    let clippy = tool
        .iter()
        .find(|f| f.location.path == "src/lib.rs")
        .expect("clippy's finding");
    let t = clippy.evidence[1].tool.as_ref().expect("a tool run");
    assert_eq!(t.code, "clippy::needless_return");
    assert!(t.version.starts_with("clippy "), "{t:?}");
    // Every format shows it.
    for format in [
        Format::Text,
        Format::Markdown,
        Format::Html,
        Format::Sarif,
        Format::Json,
    ] {
        let out = render(&report, format, false);
        assert!(out.contains("needless_return"), "{format:?}:\n{out}");
    }

    // The same diagnostics already on the base: the change adds a clean line beside them.
    let (repo, base, head) = repository(
        &[
            ("app/util.py", PY_FLAGGED),
            ("main.go", GO_FLAGGED),
            ("src/lib.rs", RS_FLAGGED),
        ],
        &[
            ("app/util.py", &format!("{PY_FLAGGED}\n\nVERSION = 2\n")),
            ("main.go", &format!("{GO_FLAGGED}\n// Version two.\n")),
            (
                "src/lib.rs",
                &format!("{RS_FLAGGED}\n/// Two.\npub const TWO: u32 = 2;\n"),
            ),
        ],
    );
    let report = run(&repo, &base, &head).await;
    let tool: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.proof_level == Level::Tool)
        .collect();
    assert!(tool.is_empty(), "{tool:#?}");
    // And not for want of runs: every analyzer ran on both sides.
    assert!(
        !report
            .not_seen
            .iter()
            .any(|n| n.what.starts_with("tool evidence")),
        "{:#?}",
        report.not_seen
    );
}
