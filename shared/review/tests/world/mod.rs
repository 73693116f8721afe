//! What reviews keep in the World Model beyond package edges: a change adding a lock file
//! with a vulnerable package gives repository → file → package → advisory edges and the
//! file's finding; a later review deleting the lock file closes what it declared; a review
//! of an older commit writes nothing.

use proven_store::testing::Backend;
use proven_store::world_graph::{
    ABOUT, AFFECTED_BY, CONTAINS, DECLARES, HAS_FINDING, advisory_id, file_id, package_id,
    repository_id,
};

use super::{cargo_lock, run, seeded};

proven_store::both_backends!(
    a_lock_file_is_kept_from_repository_to_advisory_and_closed_when_deleted,
);

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
    let name = t
        .store
        .world_open_dependencies("")
        .await
        .expect("dependencies")[0]
        .repository
        .strip_prefix("repository:")
        .expect("a repository entity")
        .to_string();
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
