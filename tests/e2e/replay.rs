//! `proven replay` end to end: a reproduced finding's runs, run again in the Docker sandbox
//! from their records; a tampered record names the run that no longer holds, and why.

use proven_models::scripted::ScriptedServer;
use proven_store::testing::Backend;

use crate::agents::{CONCEDE, buggy_change, review, script};
use crate::common::{Env, json as parse, text};

/// Each replayed run's id, whether it holds, and why.
fn verdicts(doc: &serde_json::Value) -> Vec<(String, bool, String)> {
    doc["findings"][0]["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            (
                r["run_id"].as_str().unwrap_or_default().to_string(),
                r["holds"].as_bool().unwrap_or_default(),
                r["why"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reproduced_finding_replays_as_holding_and_a_tampered_record_names_its_run() {
    let server = ScriptedServer::start().await;
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        CONCEDE(),
    );
    let env = Env::new(Backend::Sqlite).await;
    let (repo, base) = buggy_change();
    let out = review(&env, &server, &repo, &base, "json");
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    let doc = parse(&out);
    let review_id = doc["review_id"].as_str().expect("review id").to_string();
    let finding = doc["findings"][0]["id"]
        .as_str()
        .expect("finding")
        .to_string();
    let (plain, _) = text(&review(&env, &server, &repo, &base, "text"));
    assert!(plain.contains("replay:    proven replay "), "{plain}");

    // From the store: every run of the finding, run again, holds.
    let out = env.run(&["replay", &review_id, &finding, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let runs = verdicts(&parse(&out));
    assert_eq!(runs.len(), 4, "two runs a side: {runs:?}");
    assert!(runs.iter().all(|(_, holds, _)| *holds), "{runs:?}");
    assert!(
        runs.iter().any(|(_, _, why)| why == "passed, exit 0")
            && runs.iter().any(|(_, _, why)| why == "test_failed, exit 1"),
        "{runs:?}"
    );
    let (said, _) = text(&env.run(&["replay", &review_id]));
    assert!(said.contains(": holds: passed, exit 0"), "{said}");

    // The same report as a file, one run's commit and another's image digest tampered.
    let mut tampered = doc.clone();
    let evidence = tampered["findings"][0]["evidence"]
        .as_array_mut()
        .expect("evidence");
    let change = evidence
        .iter()
        .position(|e| e["run"]["side"] == "change")
        .expect("a change run");
    let base_run = evidence
        .iter()
        .position(|e| e["run"]["side"] == "base")
        .expect("a base run");
    assert!(
        evidence[base_run]["run"]["image_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("sha256:")),
        "the record holds the image's digest: {:#}",
        evidence[base_run]["run"]
    );
    evidence[change]["run"]["commit"] = "0".repeat(40).into();
    evidence[base_run]["run"]["image_id"] = format!("sha256:{}", "f".repeat(64)).into();
    let tampered_run = |i: usize| {
        evidence[i]["run"]["run_id"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let (change_id, base_id) = (tampered_run(change), tampered_run(base_run));
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("report.json");
    std::fs::write(&file, tampered.to_string()).expect("write the report");
    let out = env.run(&[
        "replay",
        &file.display().to_string(),
        &finding,
        "--repo",
        &repo.path().display().to_string(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(9), "{:?}", text(&out));
    let runs = verdicts(&parse(&out));
    let of = |id: &str| {
        runs.iter()
            .find(|(r, _, _)| r == id)
            .cloned()
            .expect("the run")
    };
    let (_, holds, why) = of(&change_id);
    assert!(
        !holds && why.contains(&format!("commit {} is not in", "0".repeat(40))),
        "{why}"
    );
    let (_, holds, why) = of(&base_id);
    assert!(!holds && why.contains("image digest differs"), "{why}");
    assert_eq!(
        runs.iter().filter(|(_, holds, _)| *holds).count(),
        2,
        "the untouched runs still hold: {runs:?}"
    );
    env.cleanup().await;
}
