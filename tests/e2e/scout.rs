//! Scout Intent's rules on reviews of repositories the tests build, with every model behind
//! a scripted server: a script named `*.md` is not prose, a manifest the path rules call
//! security runs the Prover (and rules that leave it lower let the dependency plan cut the
//! Planner), and a `plan_<kind>` or `prose_suffixes` value that is wrong stops Proven with
//! exit 7 naming what was wrong.

use proven_change::testing::TestRepo;
use proven_models::scripted::{Reply, ScriptedServer};
use proven_store::testing::Backend;
use serde_json::json;

use crate::agents::{GENERATOR, auditor_says_covered, guard_says_safe, review};
use crate::common::{Env, json as parse, text};

fn asked(server: &ScriptedServer, agent: &str) -> usize {
    server
        .received()
        .iter()
        .filter(|r| r.model == GENERATOR && r.text().contains(agent))
        .count()
}

/// The plan line of review `id`.
fn plan_line(env: &Env, id: &str) -> serde_json::Value {
    text(&env.run(&["trace", id]))
        .0
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .find(|l| l["kind"] == "plan")
        .expect("a plan line")["event"]
        .clone()
}

/// The Planner names one risk on `path`, to be settled by a test that passes on both sides
/// (nothing is proved: the calls are what is counted).
fn script_planner(server: &ScriptedServer, path: &str) {
    guard_says_safe(server);
    auditor_says_covered(server);
    server.on(
        Some(GENERATOR),
        "You are the Planner",
        vec![Reply::Json(
            json!({"risks": [{"title": "the file changed", "claim": "the change breaks it",
                                            "path": path, "evidence": "test"}]}),
        )],
    );
    server.on(
        Some(GENERATOR),
        "You are the Prover",
        vec![Reply::Json(
            json!({"test_path": "tests/test_ok.py", "test_code": "def test_ok():\n    assert True\n"}),
        )],
    );
}

/// A script named `docs/setup.md` (a shebang on one side) is not prose: the agents review
/// it, where a plain `*.md` beside it alone runs no model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_named_md_is_not_prose_and_is_reviewed() {
    let env = Env::new(Backend::Sqlite).await;
    for (head, planner, kind) in [
        ("# Setup\n\nRun it.\n", 0, "docs"),
        ("#!/bin/sh\nrm -rf \"$HOME\"\n", 1, "feature"),
    ] {
        let repo = TestRepo::new();
        repo.write("docs/setup.md", "# Setup\n");
        let base = repo.commit("base");
        repo.write("docs/setup.md", head);
        repo.commit("change");
        let server = ScriptedServer::start().await;
        script_planner(&server, "docs/setup.md");
        let doc = parse(&review(&env, &server, &repo, &base, "json"));
        assert_eq!(asked(&server, "You are the Planner"), planner, "{doc:#}");
        assert_eq!(doc["plan"]["change_kind"], kind, "{doc:#}");
        let line = plan_line(&env, doc["review_id"].as_str().expect("id"));
        if planner == 1 {
            let why = line["signals"][0]["signal"].as_str().expect("a signal");
            assert!(why.contains("starts with #!"), "{line:#}");
        } else {
            assert_eq!(line["class"], "docs", "{line:#}");
        }
    }
    env.cleanup().await;
}

/// A manifest the path rules call security (the default rules) runs the Planner and the
/// Prover in class security; where the base's proven.yaml leaves manifests out of the rules,
/// the dependency plan runs neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_the_rules_call_security_runs_the_prover() {
    let env = Env::new(Backend::Sqlite).await;
    for (yaml, prover, class) in [("", 1, "security"), ("path_rules: \"\"\n", 0, "dependency")] {
        let repo = TestRepo::new();
        repo.write("proven.yaml", yaml)
            .write("requirements.txt", "requests==2.31.0\n");
        let base = repo.commit("base");
        repo.write("requirements.txt", "requests==2.32.3\n");
        repo.commit("bump");
        let server = ScriptedServer::start().await;
        script_planner(&server, "requirements.txt");
        let doc = parse(&review(&env, &server, &repo, &base, "json"));
        assert_eq!(
            asked(&server, "You are the Planner"),
            prover,
            "{yaml:?}: {doc:#}"
        );
        // The Prover took the Planner's risk (and said why no test could run for a lock
        // file): only the Prover writes that.
        let proved_by_prover = doc["unproven"]
            .to_string()
            .contains("no sandbox image runs tests for");
        assert_eq!(proved_by_prover, prover == 1, "{yaml:?}: {doc:#}");
        assert_eq!(doc["plan"]["class"], class, "{doc:#}");
        assert_eq!(doc["plan"]["change_kind"], "dependency");
        let line = plan_line(&env, doc["review_id"].as_str().expect("id"));
        let decided = line["decided_by"].as_str().expect("decided_by");
        if prover == 1 {
            assert!(
                decided.starts_with("floor: path rule manifests=security on requirements.txt"),
                "{line:#}"
            );
            assert_eq!(line["band"], "deep");
        } else {
            assert_eq!(decided, "plan_dependency", "{line:#}");
        }
    }
    env.cleanup().await;
}

/// A `plan_docs` with a wrong field, in the base's proven.yaml or the environment, and a
/// `prose_suffixes` naming a script's suffix stop Proven before any work (exit 7), naming
/// the key, the field and the values allowed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_plan_field_or_prose_suffix_stops_proven_naming_it() {
    let env = Env::new(Backend::Sqlite).await;
    for (yaml, said) in [
        (
            "plan_docs: \"class=docs, agents=few, tools=none, sources=none, doubled=class\"\n",
            "field agents is \"few\"; allowed: none, skeptic, all",
        ),
        (
            "plan_docs: \"class=docs, agents=none, tools=none, sources=none\"\n",
            "field doubled is missing",
        ),
        (
            "prose_suffixes: \".md, .sh\"\n",
            "\".sh\" is a source, script, build or template suffix",
        ),
    ] {
        let repo = TestRepo::new();
        repo.write("proven.yaml", yaml).write("README.md", "# a\n");
        let base = repo.commit("base");
        repo.write("README.md", "# b\n");
        repo.commit("change");
        let out = env.review(repo.path(), &base, &[]);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(7), "{yaml}: {stderr}");
        let key = yaml.split(':').next().expect("a key");
        assert!(
            stderr.contains(key) && stderr.contains(said),
            "{yaml}: {stderr}"
        );
    }
    let out = env
        .proven()
        .env("PROVEN_PLAN_DOCS", "class=prose, agents=none")
        .args(["db", "stats"])
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert!(
        stderr.contains("PROVEN_PLAN_DOCS")
            && stderr.contains(
                "field class is \"prose\"; allowed: docs, dependency, standard, security"
            ),
        "{stderr}"
    );
    env.cleanup().await;
}

/// The model calls of one review, by agent (the generator's and the Skeptic model's
/// prompts; the guardrail's are not counted).
fn calls(server: &ScriptedServer) -> std::collections::BTreeMap<&'static str, usize> {
    let mut by = std::collections::BTreeMap::new();
    for r in server.received() {
        let text = r.text();
        let agent = [
            ("You are the Planner", "planner"),
            ("You are the Prover", "prover"),
            ("You are the coverage auditor", "auditor"),
            // The dependency findings' Skeptic (its prompt opens as every Skeptic's does).
            ("The finding says a package version", "skeptic (dependency)"),
            ("You are the Skeptic", "skeptic"),
            ("You are the Fixer", "fixer"),
        ]
        .into_iter()
        .find(|(marker, _)| text.contains(marker))
        .map(|(_, agent)| agent);
        if let Some(agent) = agent {
            *by.entry(agent).or_insert(0) += 1;
        }
    }
    by
}

/// An OSV record of a made-up PyPI package, affected below 2.0.0.
fn widget_advisory() -> String {
    json!({
        "schema_version": "1.6.0", "id": "PYSEC-9999-7", "modified": "2026-11-01T00:00:00Z",
        "published": "2026-11-01T00:00:00Z", "summary": "proven-scout-widget mishandles input",
        "affected": [{"package": {"ecosystem": "PyPI", "name": "proven-scout-widget"},
                      "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.0.0"}]}]}]
    })
    .to_string()
}

/// A scenario's change: its files at the base, then at the head.
type Scenario = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [(&'static str, &'static str)],
);

const SCENARIOS: &[Scenario] = &[
    (
        "docs",
        "",
        &[("README.md", "# calc\n")],
        &[("README.md", "# calc\n\nAdds numbers.\n")],
    ),
    (
        "dependency (default rules: manifests are security)",
        "",
        &[("requirements.txt", "six==1.16.0\n")],
        &[(
            "requirements.txt",
            "six==1.16.0\nproven-scout-widget==1.0.0\n",
        )],
    ),
    (
        "dependency (no path rules)",
        "path_rules: \"\"\n",
        &[("requirements.txt", "six==1.16.0\n")],
        &[(
            "requirements.txt",
            "six==1.16.0\nproven-scout-widget==1.0.0\n",
        )],
    ),
    (
        "feature",
        "",
        &[("calc.py", "X = 1\n")],
        &[("calc.py", "X = 2\n")],
    ),
];

/// The seeds' Scout measurement (ADR-0049 point 5): one review per scenario with the plan
/// and without it (`scout_intent: off`), the generator scripted, so the call counts are
/// exact. A plan that loses a finding fails; the table is printed as docs/benchmarks.md
/// quotes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_measurement_loses_no_finding() {
    let env = Env::new(Backend::Sqlite).await;
    let files = tempfile::tempdir().expect("tempdir");
    let advisory = files.path().join("widget.json");
    std::fs::write(&advisory, widget_advisory()).expect("write");
    crate::common::import(&env, &[advisory.display().to_string()]);
    let mut table = String::from(
        "| scenario | plan | class | model calls | findings | lost |\n|---|---|---|---|---|---|\n",
    );
    for (name, yaml, base_files, head_files) in SCENARIOS {
        let mut found: Vec<String> = Vec::new();
        for plan in ["with", "without"] {
            let repo = TestRepo::new();
            let mut config = yaml.to_string();
            if plan == "without" {
                config.push_str("scout_intent: off\n");
            }
            repo.write("proven.yaml", &config);
            for (path, text) in *base_files {
                repo.write(path, text);
            }
            let base = repo.commit("base");
            for (path, text) in *head_files {
                repo.write(path, text);
            }
            repo.commit("change");
            let server = ScriptedServer::start().await;
            guard_says_safe(&server);
            // The Planner names one risk at a file outside the change (refused by name: no
            // sandbox run); the auditor finds nothing uncovered; the Skeptic of a dependency
            // finding answers without a query (its words refute nothing).
            server.on(
                Some(GENERATOR),
                "You are the Planner",
                vec![Reply::Json(
                    json!({"risks": [{"title": "elsewhere", "claim": "a file not changed",
                                                    "path": "elsewhere.py", "evidence": "test"}]}),
                )],
            );
            server.on(
                Some(crate::agents::SKEPTIC),
                "You are the coverage auditor",
                vec![Reply::Json(json!({"verdict": "complete", "uncovered": []}))],
            );
            server.on(
                Some(crate::agents::SKEPTIC),
                "The finding says a package version",
                vec![Reply::Json(
                    json!({"verdict": "conceded", "reason": "the rows show it",
                                        "artifact": "PYSEC-9999-7"}),
                )],
            );
            let doc = parse(&review(&env, &server, &repo, &base, "json"));
            let titles: Vec<String> = doc["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .map(|f| f["title"].to_string())
                .collect();
            let by = calls(&server);
            // What the full review found that the plan's review did not.
            let lost = titles.iter().filter(|t| !found.contains(t)).count();
            let calls_text = by
                .iter()
                .map(|(a, n)| format!("{a} {n}"))
                .collect::<Vec<_>>()
                .join(", ");
            table.push_str(&format!(
                "| {name} | {plan} | {} | {} ({}) | {} | {} |\n",
                doc["plan"]["class"].as_str().unwrap_or(""),
                by.values().sum::<usize>(),
                if calls_text.is_empty() {
                    "none".into()
                } else {
                    calls_text
                },
                titles.len(),
                if plan == "without" {
                    lost.to_string()
                } else {
                    "-".into()
                }
            ));
            if plan == "with" {
                found = titles;
            } else {
                // The review without the plan finds at least what the plan found, and the
                // plan loses nothing the full review found.
                let missed: Vec<&String> = titles.iter().filter(|t| !found.contains(t)).collect();
                assert!(
                    missed.is_empty(),
                    "{name}: the plan lost {missed:?}\n{table}"
                );
            }
        }
    }
    println!("{table}");
    // The exact counts the plans imply.
    let rows: Vec<&str> = table.lines().skip(2).collect();
    let calls_of = |i: usize| rows[i].split(" | ").nth(3).unwrap_or("").to_string();
    assert!(
        calls_of(0).starts_with("0 (none)"),
        "docs with the plan: {table}"
    );
    assert!(
        calls_of(1).starts_with("1 (planner 1)"),
        "docs in full: {table}"
    );
    assert_eq!(
        calls_of(2),
        calls_of(3),
        "the floor runs in full either way: {table}"
    );
    assert!(calls_of(2).contains("auditor 1"), "{table}");
    assert!(
        calls_of(4).starts_with("1 (skeptic (dependency) 1)"),
        "the dependency plan cuts the Planner: {table}"
    );
    assert!(calls_of(5).contains("planner 1"), "{table}");
    env.cleanup().await;
}

/// A connected second reviewer doubles the classes `second_reviewer_classes` names, and a
/// security-class change always, even when the base's proven.yaml names no such class.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_reviewer_doubles_its_classes_and_always_security() {
    const SECOND: &str = "mistralai/second-scout-test";
    let env = Env::new(Backend::Sqlite).await;
    for (path, doubled) in [("calc.py", false), ("src/auth_tokens.py", true)] {
        let repo = TestRepo::new();
        repo.write("proven.yaml", "second_reviewer_classes: docs\n")
            .write(path, "X = 1\n");
        let base = repo.commit("base");
        repo.write(path, "X = 2\n");
        repo.commit("change");
        let server = ScriptedServer::start().await;
        script_planner(&server, "elsewhere.py");
        server.on(
            Some(SECOND),
            "You are the Planner",
            vec![Reply::Json(json!({"risks": []}))],
        );
        let mut cmd = crate::agents::agents(&env, &server);
        cmd.env("PROVEN_SECOND_REVIEWER_BASE_URL", &server.base_url)
            .env("PROVEN_SECOND_REVIEWER_MODEL", SECOND);
        let doc = parse(&crate::agents::review_with(&mut cmd, &repo, &base, "json"));
        let asked_second = server
            .received()
            .iter()
            .filter(|r| r.model == SECOND)
            .count();
        assert_eq!(asked_second > 0, doubled, "{path}: {doc:#}");
        let runs = doc["plan"]["runs"].to_string();
        assert_eq!(runs.contains("second reviewer"), doubled, "{path}: {runs}");
        if !doubled {
            assert!(
                doc["plan"]["left_out"]
                    .to_string()
                    .contains("second reviewer: the plan does not double class standard"),
                "{doc:#}"
            );
        }
    }
    env.cleanup().await;
}
