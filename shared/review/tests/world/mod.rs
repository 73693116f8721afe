//! What reviews keep in the World Model beyond package edges: a change adding a lock file
//! with a vulnerable package gives repository → file → package → advisory edges and the
//! file's finding; a later review deleting the lock file closes what it declared; a review
//! of an older commit writes nothing. A finding H-MEM holds an evidenced refutation of is not
//! raised again, and the World Model keeps it **refuted_by** that memory record.

use proven_config::Layers;
use proven_models::scripted::{Reply, ScriptedServer};
use proven_review::embedded::Services;
use proven_review::flows::deps::wire::deps_fingerprint;
use proven_review::model::Agents;
use proven_store::MemoryRecord;
use proven_store::testing::Backend;
use proven_store::world_graph::{
    ABOUT, AFFECTED_BY, CONTAINS, DECLARES, HAS_FINDING, REFUTED_BY, advisory_id, file_id,
    memory_id, package_id, repository_id,
};
use serde_json::json;

use super::{cargo_lock, run, run_with, seeded};

proven_store::both_backends!(
    a_lock_file_is_kept_from_repository_to_advisory_and_closed_when_deleted,
    a_remembered_refutation_is_kept_as_the_findings_refuted_by_edge,
);

/// A review with the model agents on, every model the scripted server: the guardrail finds
/// every prompt safe, the coverage auditor every surface covered, the Planner no risk.
async fn run_with_agents(
    store: &proven_store::Store,
    repo: &proven_change::testing::TestRepo,
    base: &str,
    head: &str,
) -> proven_report::Report {
    let server = ScriptedServer::start().await;
    server.on(
        Some("guard"),
        "",
        vec![Reply::Json(json!({"User Safety": "safe"}))],
    );
    server.on(
        Some("skeptic"),
        "You are the coverage auditor",
        vec![Reply::Json(json!({"verdict": "covered", "uncovered": []}))],
    );
    server.on(
        Some("generator"),
        "You are the Planner",
        vec![Reply::Json(json!({"risks": []}))],
    );
    let mut vars = vec![("PROVEN_AGENTS".to_string(), "on".to_string())];
    for (role, model) in [
        ("GENERATOR", "generator"),
        ("SKEPTIC", "skeptic"),
        ("GUARDRAIL", "guard"),
    ] {
        vars.push((format!("PROVEN_{role}_BASE_URL"), server.base_url.clone()));
        vars.push((format!("PROVEN_{role}_MODEL"), model.to_string()));
    }
    let layers = Layers::from_env(vars).expect("layers");
    let agents = Agents::from_config(&layers.resolve().expect("settings")).expect("agents");
    let services = Services {
        agents: Some(std::sync::Arc::new(agents)),
        sandbox: None,
    };
    run_with(store, repo, (base, head), &layers, services).await
}

/// The repository's name in the World Model (its entity's id without `repository:`).
async fn world_name(store: &proven_store::Store) -> String {
    store
        .world_open_dependencies("")
        .await
        .expect("dependencies")[0]
        .repository
        .strip_prefix("repository:")
        .expect("a repository entity")
        .to_string()
}

/// The first review finds foo 1.0.0 (TEST-FOO); H-MEM then holds an evidenced refutation of
/// that finding; a review with the agents on does not raise it again, and the World Model
/// says the finding is refuted by that record, from the head's commit time.
async fn a_remembered_refutation_is_kept_as_the_findings_refuted_by_edge(backend: Backend) {
    let (t, repo) = seeded(backend).await;
    let t0 = 1_700_000_000;
    repo.write("README.md", "app\n");
    let base = repo.commit_at("base", t0);
    repo.write("Cargo.lock", cargo_lock(&[("foo", "1.0.0")]));
    let head = repo.commit_at("add the lock file", t0 + 60);
    let report = run(&t.store, &repo, &base, &head).await;
    let finding = report
        .findings
        .iter()
        .find(|f| f.advisory.as_ref().is_some_and(|a| a.id == "TEST-FOO"))
        .expect("the finding of foo 1.0.0")
        .clone();
    let identity = proven_review::pipeline::memory_identity(&repo.path().display().to_string());
    t.store
        .memory_write(
            &MemoryRecord {
                id: "M-FOO".into(),
                tenant: String::new(),
                repository: identity,
                fingerprint: deps_fingerprint(&finding),
                kind: "deps".into(),
                path: "Cargo.lock".into(),
                symbol: None,
                claim: finding.title.clone(),
                refutation: "the advisory's query showed it does not apply".into(),
                provenance: "{}".into(),
                confidence: 1.0,
                created_at: String::new(),
            },
            u64::MAX,
        )
        .await
        .expect("remember");
    let again = run_with_agents(&t.store, &repo, &base, &head).await;
    assert!(
        !again.findings.iter().any(|f| f.id == finding.id),
        "a remembered refutation is not raised again: {:?}",
        again.findings
    );
    let name = world_name(&t.store).await;
    let entity = format!("finding:{name}:{}", finding.id);
    let refuted: Vec<(String, String, i64)> = t
        .store
        .world_edges_from("", &entity, None)
        .await
        .expect("the finding's edges")
        .into_iter()
        .filter(|e| e.kind == REFUTED_BY)
        .map(|e| (e.context, e.to, e.valid_from))
        .collect();
    assert_eq!(
        refuted,
        [(
            "memory".to_string(),
            memory_id("M-FOO"),
            (t0 + 60) * 1_000_000
        )]
    );
    t.store.world_check().await.expect("the rules hold");
    t.cleanup().await;
}

async fn a_lock_file_is_kept_from_repository_to_advisory_and_closed_when_deleted(backend: Backend) {
    let (t, repo) = seeded(backend).await;
    let (day, t0) = (86_400, 1_700_000_000);
    repo.write("README.md", "app\n");
    let base = repo.commit_at("base", t0);
    repo.write(
        "Cargo.lock",
        cargo_lock(&[("foo", "1.0.0"), ("other", "1.0.0")]),
    );
    let added = repo.commit_at("add the lock file", t0 + day);
    let report = run(&t.store, &repo, &base, &added).await;
    let finding = report
        .findings
        .iter()
        .find(|f| f.advisory.as_ref().is_some_and(|a| a.id == "TEST-FOO"))
        .expect("the finding of foo 1.0.0");
    let name = world_name(&t.store).await;
    let (file, vulnerable) = (
        file_id(&name, "Cargo.lock"),
        package_id("crates.io", "foo", "1.0.0"),
    );
    let finding_entity = format!("finding:{name}:{}", finding.id);
    let graph = |at: Option<i64>| {
        let (store, name) = (t.store.clone(), name.clone());
        async move {
            let mut edges: Vec<(String, String, String)> = store
                .world_graph("", &name, at.map(|s| s * 1_000_000))
                .await
                .expect("graph")
                .into_iter()
                .map(|e| (e.from, e.kind, e.to))
                .collect();
            edges.sort();
            edges
        }
    };
    let holds = |edges: &[(String, String, String)], from: &str, kind: &str, to: &str| {
        edges
            .iter()
            .any(|(f, k, t)| f == from && k == kind && t == to)
    };
    let now = graph(None).await;
    let repository = repository_id(&name);
    let advisory = advisory_id("TEST-FOO");
    for (from, kind, to) in [
        (&repository, CONTAINS, &file),
        (&file, DECLARES, &vulnerable),
        (&file, DECLARES, &package_id("crates.io", "other", "1.0.0")),
        (&vulnerable, AFFECTED_BY, &advisory),
        (&file, HAS_FINDING, &finding_entity),
        (&finding_entity, ABOUT, &vulnerable),
        (&finding_entity, ABOUT, &advisory),
        (&finding_entity, ABOUT, &file),
    ] {
        assert!(holds(&now, from, kind, to), "{from} {kind} {to}: {now:?}");
    }
    // The lock file is deleted: the repository no longer contains it, and nothing it
    // declared is open; the World Model still says what held after the first review.
    repo.remove("Cargo.lock");
    let deleted = repo.commit_at("delete the lock file", t0 + 2 * day);
    run(&t.store, &repo, &added, &deleted).await;
    assert!(graph(None).await.is_empty(), "{:?}", graph(None).await);
    assert!(
        t.store
            .world_open_dependencies("")
            .await
            .expect("dependencies")
            .is_empty(),
        "the deleted lock file's depends_on edges are closed"
    );
    assert_eq!(graph(Some(t0 + day + 60)).await, now);
    let ended: Vec<Option<i64>> = t
        .store
        .world_edges_from("", &file, Some((t0 + day + 60) * 1_000_000))
        .await
        .expect("file edges")
        .into_iter()
        .map(|e| e.valid_to)
        .collect();
    assert!(ended.len() >= 3, "{ended:?}");
    assert!(ended.iter().all(|e| *e == Some((t0 + 2 * day) * 1_000_000)));
    // A review of an older commit (the lock file with another package) writes nothing.
    let before = t.store.world_snapshot("").await.expect("snapshot");
    repo.write("Cargo.lock", cargo_lock(&[("bar", "0.4.0")]));
    let older = repo.commit_at("an older branch", t0 + day / 2);
    let report = run(&t.store, &repo, &base, &older).await;
    assert!(!report.findings.is_empty(), "bar 0.4.0 is found");
    assert_eq!(t.store.world_snapshot("").await.expect("snapshot"), before);
    t.store.world_check().await.expect("the rules hold");
    t.cleanup().await;
}
