//! A repository's graph in the World Model: what can be reached from the repository at an
//! instant, the latest instant it holds, and closing one chain.

use proven_store::WorldEdge;
use proven_store::testing::{Backend, TestStore};
use proven_store::world_graph::{
    ABOUT, AFFECTED_BY, CONTAINS, DECLARES, HAS_FINDING, REFUTED_BY, advisory_id, file_id,
    finding_id, memory_id, package_id, repository_id,
};

proven_store::both_backends!(
    the_graph_reaches_files_packages_and_advisories_at_each_instant,
    closing_a_chain_ends_it_at_that_time_and_moves_the_latest_instant,
    a_findings_refutation_is_kept_read_back_and_replaced_at_each_instant,
);

const DAY: i64 = 86_400_000_000;

fn edge(from: &str, kind: &str, context: &str, to: &str, at: i64) -> WorldEdge {
    WorldEdge {
        tenant: "t".into(),
        from: from.into(),
        kind: kind.into(),
        context: context.into(),
        to: to.into(),
        valid_from: at,
        valid_to: None,
        source: "test".into(),
    }
}

fn kinds(edges: &[WorldEdge]) -> Vec<(&str, &str)> {
    edges
        .iter()
        .map(|e| (e.kind.as_str(), e.to.as_str()))
        .collect()
}

/// A repository containing a lock file that declares a package an advisory affects; another
/// repository's file is not part of its graph.
async fn the_graph_reaches_files_packages_and_advisories_at_each_instant(backend: Backend) {
    let t = TestStore::new(backend).await;
    let s = &t.store;
    let (repo, file) = (repository_id("acme/app"), file_id("acme/app", "Cargo.lock"));
    let (old, new) = (
        package_id("crates.io", "foo", "1.0.0"),
        package_id("crates.io", "foo", "1.3.0"),
    );
    let advisory = advisory_id("TEST-FOO");
    for e in [
        edge(&repo, CONTAINS, "Cargo.lock", &file, DAY),
        edge(&file, DECLARES, "crates.io:foo", &old, DAY),
        edge(&old, AFFECTED_BY, "TEST-FOO", &advisory, DAY),
        edge(&file, DECLARES, "crates.io:foo", &new, 3 * DAY),
        edge(
            &repository_id("other/app"),
            CONTAINS,
            "Cargo.lock",
            &file_id("other/app", "Cargo.lock"),
            DAY,
        ),
    ] {
        s.world_relate(&e).await.expect("relate");
    }
    let then = s
        .world_graph("t", "acme/app", Some(2 * DAY))
        .await
        .expect("graph then");
    assert_eq!(
        kinds(&then),
        [
            (CONTAINS, file.as_str()),
            (DECLARES, old.as_str()),
            (AFFECTED_BY, advisory.as_str())
        ]
    );
    let now = s
        .world_graph("t", "acme/app", None)
        .await
        .expect("graph now");
    assert_eq!(
        kinds(&now),
        [(CONTAINS, file.as_str()), (DECLARES, new.as_str())]
    );
    assert!(
        s.world_graph("t", "acme/app", Some(DAY / 2))
            .await
            .expect("graph before")
            .is_empty()
    );
    assert_eq!(
        s.world_latest("t", "acme/app").await.expect("latest"),
        Some(3 * DAY)
    );
    assert_eq!(s.world_latest("t", "none/app").await.expect("latest"), None);
    t.cleanup().await;
}

async fn closing_a_chain_ends_it_at_that_time_and_moves_the_latest_instant(backend: Backend) {
    let t = TestStore::new(backend).await;
    let s = &t.store;
    let (repo, file) = (repository_id("acme/app"), file_id("acme/app", "go.mod"));
    s.world_relate(&edge(&repo, CONTAINS, "go.mod", &file, DAY))
        .await
        .expect("relate");
    let chain = ("t", repo.as_str(), CONTAINS);
    assert!(
        !s.world_close(chain, "go.mod", DAY).await.expect("close"),
        "an edge is not closed at its own start"
    );
    assert!(
        s.world_close(chain, "go.mod", 2 * DAY)
            .await
            .expect("close")
    );
    assert!(
        !s.world_close(chain, "go.mod", 3 * DAY)
            .await
            .expect("close"),
        "nothing open is left"
    );
    assert_eq!(
        s.world_latest("t", "acme/app").await.expect("latest"),
        Some(2 * DAY)
    );
    let edges = s
        .world_edges_from("t", &repo, Some(DAY))
        .await
        .expect("edges");
    assert_eq!(edges[0].valid_to, Some(2 * DAY));
    assert!(
        s.world_graph("t", "acme/app", None)
            .await
            .expect("graph")
            .is_empty()
    );
    s.world_check().await.expect("the rules hold");
    t.cleanup().await;
}

/// A finding H-MEM remembers a refutation of is **refuted_by** its memory record: the edge is
/// read back from the finding and reached in the repository's graph; a later record of the
/// same finding replaces the first from its own instant, and the earlier instant still
/// sees the first.
async fn a_findings_refutation_is_kept_read_back_and_replaced_at_each_instant(backend: Backend) {
    let t = TestStore::new(backend).await;
    let s = &t.store;
    let (repo, file) = (repository_id("acme/app"), file_id("acme/app", "Cargo.lock"));
    let finding = finding_id("acme/app", "F1");
    let (first, second) = (memory_id("M1"), memory_id("M2"));
    for e in [
        edge(&repo, CONTAINS, "Cargo.lock", &file, DAY),
        edge(&file, HAS_FINDING, "F1", &finding, DAY),
        edge(&finding, ABOUT, "file", &file, DAY),
        edge(&finding, REFUTED_BY, "memory", &first, DAY),
        edge(&finding, REFUTED_BY, "memory", &second, 3 * DAY),
    ] {
        s.world_relate(&e).await.expect("relate");
    }
    let refutations = |at: Option<i64>| async move {
        s.world_edges_from("t", &finding_id("acme/app", "F1"), at)
            .await
            .expect("edges")
            .into_iter()
            .filter(|e| e.kind == REFUTED_BY)
            .map(|e| (e.context, e.to, e.valid_from, e.valid_to))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        refutations(Some(2 * DAY)).await,
        [("memory".to_string(), first.clone(), DAY, Some(3 * DAY))]
    );
    assert_eq!(
        refutations(None).await,
        [("memory".to_string(), second.clone(), 3 * DAY, None)]
    );
    let graph = |at: Option<i64>| async move {
        let edges = s.world_graph("t", "acme/app", at).await.expect("graph");
        edges
            .into_iter()
            .map(|e| (e.from, e.kind, e.to))
            .collect::<Vec<_>>()
    };
    let then = graph(Some(2 * DAY)).await;
    assert!(
        then.contains(&(finding.clone(), REFUTED_BY.to_string(), first.clone())),
        "{then:?}"
    );
    let now = graph(None).await;
    assert!(
        now.contains(&(finding.clone(), REFUTED_BY.to_string(), second.clone())),
        "{now:?}"
    );
    assert!(
        !now.iter().any(|(_, _, to)| *to == first),
        "the first record no longer refutes it now: {now:?}"
    );
    s.world_check().await.expect("the rules hold");
    t.cleanup().await;
}
