//! The Skeptic on tool findings, with every model behind the scripted server: a refutation
//! (`false_positive`) holds only where the finding's line carries the analyzer's own
//! suppression (`# noqa`); elsewhere the finding stays, the Skeptic's word shown as refuted
//! without evidence.

use std::sync::Arc;

use proven_config::Layers;
use proven_models::scripted::{Reply, ScriptedServer};
use proven_report::Level;
use proven_review::embedded::{Services, review};
use proven_review::flows::tool::judge::finding_id;
use proven_review::flows::tool::wire::{Seen, ToolResult};
use proven_sandbox::analyzer::{Analyzer, Diagnostic};
use proven_store::ReviewRequest;
use proven_store::testing::{Backend, TestStore};
use serde_json::json;

const GENERATOR: &str = "meta/llama-test";
const SKEPTIC: &str = "nvidia/nemotron-test";

/// The id Proven gives pyflakes' unused-import finding on `line`.
fn unused(name: &str, line: &str) -> String {
    let seen = Seen {
        diagnostic: Diagnostic {
            path: "app/util.py".into(),
            line: 1,
            column: Some(1),
            code: "pyflakes".into(),
            message: format!("'{name}' imported but unused"),
        },
        text: line.into(),
        previous: String::new(),
    };
    finding_id(&ToolResult::not_run(Analyzer::Pyflakes, ""), &seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_false_positive_holds_only_where_the_line_carries_the_analyzers_suppression() {
    let server = ScriptedServer::start().await;
    server.on(
        Some(GENERATOR),
        "You are the Planner",
        vec![Reply::Json(json!({"risks": []}))],
    );
    let (noqa, plain) = (
        unused("os", "import os  # noqa"),
        unused("json", "import json"),
    );
    server.on(
        Some(SKEPTIC),
        "You are the Skeptic",
        vec![Reply::Json(json!({"verdicts": [
            {"finding": noqa, "verdict": "refuted", "refutation": "false_positive",
             "reason": "the import is for its side effect", "artifact": null},
            {"finding": plain, "verdict": "refuted", "refutation": "false_positive",
             "reason": "nobody minds an unused import", "artifact": null}]}))],
    );
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "app/util.py",
        "import sys\n\n\ndef args():\n    return sys.argv\n",
    );
    let base = repo.commit("base");
    repo.write(
        "app/util.py",
        "import os  # noqa\nimport json\nimport sys\n\n\ndef args():\n    return sys.argv\n",
    );
    let head = repo.commit("change");
    let t = TestStore::new(Backend::Sqlite).await;
    let env = [
        ("PROVEN_AGENTS", "on"),
        ("PROVEN_GUARDRAIL", "off"),
        ("PROVEN_GENERATOR_BASE_URL", server.base_url.as_str()),
        ("PROVEN_SKEPTIC_BASE_URL", server.base_url.as_str()),
        ("PROVEN_GENERATOR_MODEL", GENERATOR),
        ("PROVEN_SKEPTIC_MODEL", SKEPTIC),
    ];
    let layers =
        Layers::from_env(env.map(|(k, v)| (k.to_string(), v.to_string()))).expect("layers");
    let config = layers.resolve().expect("settings");
    let agents = proven_review::model::Agents::from_config(&config).expect("agents");
    let report = review(
        &t.store,
        &layers,
        ReviewRequest {
            repository: repo.path().display().to_string(),
            base,
            head,
            ..Default::default()
        },
        proven_source::Sources::cli(&config),
        Services {
            agents: Some(Arc::new(agents)),
            sandbox: Some(super::sandbox().await),
        },
    )
    .await
    .expect("review runs");
    let plan = report.plan.as_ref().expect("a plan");
    assert!(
        plan.runs.iter().any(|r| r == "skeptic (tool findings)"),
        "{plan:?}"
    );
    let tool: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.proof_level == Level::Tool)
        .collect();
    // `import json` stays: no suppression on its line, the Skeptic's word is shown.
    assert_eq!(tool.len(), 1, "{tool:#?}\n{:#?}", report.unproven);
    assert!(tool[0].title.contains("'json' imported but unused"));
    let skeptic = tool[0].skeptic.as_ref().expect("the Skeptic's word");
    assert_eq!(skeptic.verdict, "refuted_without_evidence");
    assert_eq!(skeptic.refutation.as_deref(), Some("false_positive"));
    // `import os  # noqa`: refuted, shown by Proven, with both runs.
    let refuted = report
        .unproven
        .iter()
        .find(|u| u.claim.contains("'os' imported but unused"))
        .unwrap_or_else(|| panic!("{:#?}", report.unproven));
    assert!(refuted.reason.contains("# noqa"), "{refuted:?}");
    assert_eq!(refuted.runs.len(), 2);
}
