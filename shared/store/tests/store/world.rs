//! The World Model in the store: an edge chain holds at most one valid edge at any instant
//! (a new open edge closes the chain's open edge: Meterless's `bitemp-001`), a write that
//! would overlap is refused as EdgeOverlap naming both edges, an edge that ends before it
//! starts as EdgeInterval; a store that already breaks either is refused when it opens;
//! concurrent writers cannot create an overlap.

use proven_store::testing::{Backend, TestStore};
use proven_store::{Dialect, Related, Store, StoreError, WorldEdge, WorldEntity};

proven_store::both_backends!(
    a_new_open_edge_closes_the_chains_open_edge_and_points_in_time_see_each,
    overlapping_or_inverted_edges_are_refused_by_name_on_write,
    a_store_that_already_breaks_the_rules_is_refused_when_it_opens,
    concurrent_writers_never_leave_two_valid_edges_in_a_chain,
    the_repositories_depending_on_a_package_now_are_answered,
    every_mutation_is_audited_in_order_and_a_rewrite_changes_nothing,
);

const DAY: i64 = 86_400_000_000;

fn plays_for(team: &str, from: i64, to: Option<i64>) -> WorldEdge {
    WorldEdge {
        tenant: "t".into(),
        from: "player:g:p1".into(),
        kind: "plays-for".into(),
        context: "league".into(),
        to: format!("team:g:{team}"),
        valid_from: from,
        valid_to: to,
        source: "test".into(),
    }
}

fn targets(edges: &[WorldEdge]) -> Vec<&str> {
    edges.iter().map(|e| e.to.as_str()).collect()
}

async fn a_new_open_edge_closes_the_chains_open_edge_and_points_in_time_see_each(backend: Backend) {
    let t = TestStore::new(backend).await;
    let s = &t.store;
    for team in ["a", "b"] {
        s.world_upsert_entity(&WorldEntity {
            tenant: "t".into(),
            id: format!("team:g:{team}"),
            kind: "team".into(),
            name: team.into(),
            attrs: "{}".into(),
            source: "test".into(),
        })
        .await
        .expect("entity");
    }
    let a = plays_for("a", 100 * DAY, None);
    let b = plays_for("b", 200 * DAY, None);
    assert_eq!(
        s.world_relate(&a).await.expect("a"),
        Related::Written {
            id: a.id(),
            closed: None
        }
    );
    assert_eq!(
        s.world_relate(&b).await.expect("b"),
        Related::Written {
            id: b.id(),
            closed: Some(a.id())
        },
        "the newer open edge closes the older at its start"
    );
    let edges = |at| s.world_edges_of("t", "player:g:p1", "plays-for", at);
    assert_eq!(targets(&edges(None).await.expect("now")), ["team:g:b"]);
    assert_eq!(
        targets(&edges(Some(150 * DAY)).await.expect("then")),
        ["team:g:a"]
    );
    assert_eq!(
        targets(&edges(Some(200 * DAY)).await.expect("at b's start")),
        ["team:g:b"],
        "an interval is [from, to): at the new edge's start only it is valid"
    );
    assert!(edges(Some(50 * DAY)).await.expect("before").is_empty());
    // The same write again (a replayed review), and the same fact seen later: nothing changes.
    assert_eq!(
        s.world_relate(&b).await.expect("again"),
        Related::Unchanged { id: b.id() }
    );
    assert_eq!(
        s.world_relate(&plays_for("b", 300 * DAY, None))
            .await
            .expect("later"),
        Related::Unchanged { id: b.id() }
    );
    // Another tenant's chain is its own.
    let other = WorldEdge {
        tenant: "u".into(),
        ..plays_for("a", 250 * DAY, None)
    };
    assert!(matches!(
        s.world_relate(&other).await.expect("other tenant"),
        Related::Written { closed: None, .. }
    ));
    assert_eq!(targets(&edges(None).await.expect("now")), ["team:g:b"]);
    s.world_check().await.expect("the store holds the rules");
    t.cleanup().await;
}

async fn overlapping_or_inverted_edges_are_refused_by_name_on_write(backend: Backend) {
    let t = TestStore::new(backend).await;
    let s = &t.store;
    let closed = plays_for("a", 100 * DAY, Some(200 * DAY));
    s.world_relate(&closed).await.expect("a closed edge");
    let across = plays_for("b", 150 * DAY, Some(250 * DAY));
    match s.world_relate(&across).await {
        Err(StoreError::EdgeOverlap { edge, existing }) => {
            assert_eq!((edge, existing), (across.id(), closed.id()), "both named");
        }
        other => panic!("an overlapping closed edge: {other:?}"),
    }
    let open = plays_for("c", 300 * DAY, None);
    s.world_relate(&open).await.expect("an open edge after it");
    // An open edge older than the chain's open edge would be valid with it: refused.
    let older = plays_for("d", 250 * DAY, None);
    match s.world_relate(&older).await {
        Err(StoreError::EdgeOverlap { edge, existing }) => {
            assert_eq!((edge, existing), (older.id(), open.id()));
        }
        other => panic!("an older open edge: {other:?}"),
    }
    // In the gap it fits.
    s.world_relate(&plays_for("e", 200 * DAY, Some(300 * DAY)))
        .await
        .expect("the gap between the two");
    for inverted in [
        plays_for("f", 400 * DAY, Some(400 * DAY)),
        plays_for("f", 400 * DAY, Some(399 * DAY)),
    ] {
        match s.world_relate(&inverted).await {
            Err(StoreError::EdgeInterval { edge, detail }) => {
                assert_eq!(edge, inverted.id());
                assert!(detail.contains("is not after its start"), "{detail}");
            }
            other => panic!("an edge that does not end after it starts: {other:?}"),
        }
    }
    let no_source = WorldEdge {
        source: String::new(),
        ..plays_for("g", 500 * DAY, None)
    };
    assert!(matches!(
        s.world_relate(&no_source).await,
        Err(StoreError::InvalidInput(_))
    ));
    s.world_check().await.expect("nothing refused was written");
    t.cleanup().await;
}

/// Writes rows past the store's own checks (as a foreign writer or an older version
/// could), with the rules the database itself holds switched off.
async fn write_raw(t: &TestStore, rows: &[(&str, i64, Option<i64>)]) {
    let pool = sqlx::AnyPool::connect(&t.url)
        .await
        .expect("raw connection");
    if t.store.dialect() == Dialect::Postgres {
        for constraint in ["world_edge_interval", "world_edge_overlap"] {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "ALTER TABLE world_edges DROP CONSTRAINT {constraint}"
            )))
            .execute(&pool)
            .await
            .expect("drop constraint");
        }
    }
    let mut conn = pool.acquire().await.expect("connection");
    if t.store.dialect() == Dialect::Sqlite {
        sqlx::query("PRAGMA ignore_check_constraints = ON")
            .execute(&mut *conn)
            .await
            .expect("pragma");
    }
    for (id, from, to) in rows {
        sqlx::query(
            "INSERT INTO world_edges (tenant_id, id, from_id, kind, context, to_id, valid_from, \
             valid_to, source) VALUES ('t', $1, 'player:g:p1', 'plays-for', 'league', 'team:g:x', $2, $3, 'raw')",
        )
        .bind(*id)
        .bind(*from)
        .bind(*to)
        .execute(&mut *conn)
        .await
        .expect("raw insert");
    }
    drop(conn);
    pool.close().await;
}

async fn a_store_that_already_breaks_the_rules_is_refused_when_it_opens(backend: Backend) {
    sqlx::any::install_default_drivers();
    // Two overlapping edges of one chain.
    let t = TestStore::new(backend).await;
    write_raw(
        &t,
        &[
            ("edge:one", 100 * DAY, Some(200 * DAY)),
            ("edge:two", 150 * DAY, None),
        ],
    )
    .await;
    match Store::open_url(&t.url).await {
        Err(StoreError::EdgeOverlap { edge, existing }) => {
            assert_eq!((edge.as_str(), existing.as_str()), ("edge:one", "edge:two"))
        }
        other => panic!(
            "a store with overlapping edges opened: {:?}",
            other.map(|_| ())
        ),
    }
    t.cleanup().await;
    // An edge that ends before it starts is found first, before any overlap.
    let t = TestStore::new(backend).await;
    write_raw(
        &t,
        &[
            ("edge:one", 100 * DAY, Some(200 * DAY)),
            ("edge:two", 150 * DAY, None),
            ("edge:bad", 300 * DAY, Some(100 * DAY)),
        ],
    )
    .await;
    match Store::open_url(&t.url).await {
        Err(StoreError::EdgeInterval { edge, .. }) => assert_eq!(edge, "edge:bad"),
        other => panic!(
            "a store with an inverted edge opened: {:?}",
            other.map(|_| ())
        ),
    }
    t.cleanup().await;
}

async fn concurrent_writers_never_leave_two_valid_edges_in_a_chain(backend: Backend) {
    let t = TestStore::new(backend).await;
    for round in 0..5i64 {
        let context = format!("round-{round}");
        let writes = (0..8i64).map(|i| {
            let store = t.store.clone();
            let edge = WorldEdge {
                context: context.clone(),
                // Two writers per start: one of them must lose to the other.
                ..plays_for(&format!("w{i}"), (100 + i / 2) * DAY, None)
            };
            tokio::spawn(async move { store.world_relate(&edge).await })
        });
        let mut written = 0;
        for w in writes {
            match w.await.expect("task") {
                Ok(Related::Written { .. }) => written += 1,
                Ok(Related::Unchanged { .. }) => {}
                Err(StoreError::EdgeOverlap { .. }) => {}
                Err(e) => panic!("a writer failed otherwise: {e}"),
            }
        }
        assert!(written >= 1, "someone wrote");
        let open: Vec<_> = t
            .store
            .world_edges_of("t", "player:g:p1", "plays-for", None)
            .await
            .expect("open edges")
            .into_iter()
            .filter(|e| e.context == context)
            .collect();
        assert_eq!(open.len(), 1, "one open edge in the chain: {open:?}");
    }
    t.store
        .world_check()
        .await
        .expect("no two edges of a chain are valid at once");
    t.cleanup().await;
}

async fn the_repositories_depending_on_a_package_now_are_answered(backend: Backend) {
    let t = TestStore::new(backend).await;
    let s = &t.store;
    let depends = |repo: &str, version: &str, from: i64| WorldEdge {
        tenant: "t".into(),
        from: format!("repository:{repo}"),
        kind: "depends_on".into(),
        context: "Cargo.lock#crates.io:time".into(),
        to: format!("package:crates.io:time@{version}"),
        valid_from: from,
        valid_to: None,
        source: "review r".into(),
    };
    s.world_relate(&depends("a", "0.1.0", DAY))
        .await
        .expect("a");
    s.world_relate(&depends("b", "0.1.0", DAY))
        .await
        .expect("b");
    // A later review of b sees another version: b's old edge closes.
    s.world_relate(&depends("b", "0.3.0", 2 * DAY))
        .await
        .expect("b later");
    let now = s
        .world_dependents("t", "crates.io", "time")
        .await
        .expect("dependents");
    let seen: Vec<(&str, &str)> = now
        .iter()
        .map(|d| (d.repository.as_str(), d.package.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("repository:a", "package:crates.io:time@0.1.0"),
            ("repository:b", "package:crates.io:time@0.3.0")
        ]
    );
    // A package of a longer name is not this one, and another tenant sees nothing.
    assert!(
        s.world_dependents("t", "crates.io", "tim")
            .await
            .expect("prefix")
            .is_empty()
    );
    assert!(
        s.world_dependents("u", "crates.io", "time")
            .await
            .expect("other tenant")
            .is_empty()
    );
    // A lock file a later review no longer holds the package in: closed.
    let closed = s
        .world_close_absent(
            ("t", "repository:a", "depends_on"),
            "Cargo.lock#",
            &[],
            3 * DAY,
        )
        .await
        .expect("close");
    assert_eq!(closed, 1);
    let now = s
        .world_dependents("t", "crates.io", "time")
        .await
        .expect("dependents");
    assert_eq!(now.len(), 1, "{now:?}");
    t.cleanup().await;
}

/// Every mutation (an entity created or changed, an edge written, an edge it closed) is in
/// the audit, in order; writing the same facts again changes nothing, and the snapshot is
/// the same text.
async fn every_mutation_is_audited_in_order_and_a_rewrite_changes_nothing(backend: Backend) {
    let t = TestStore::new(backend).await;
    let s = &t.store;
    let team = |attrs: &str| WorldEntity {
        tenant: "t".into(),
        id: "team:g:a".into(),
        kind: "team".into(),
        name: "a".into(),
        attrs: attrs.into(),
        source: "test".into(),
    };
    assert!(s.world_upsert_entity(&team("{}")).await.expect("create"));
    s.world_relate(&plays_for("a", DAY, None)).await.expect("a");
    let before = s.world_snapshot("t").await.expect("snapshot");
    assert!(!s.world_upsert_entity(&team("{}")).await.expect("again"));
    assert_eq!(
        s.world_relate(&plays_for("a", DAY, None))
            .await
            .expect("again"),
        Related::Unchanged {
            id: plays_for("a", DAY, None).id()
        }
    );
    assert_eq!(s.world_snapshot("t").await.expect("snapshot"), before);
    assert!(
        s.world_upsert_entity(&team("{\"city\":\"x\"}"))
            .await
            .expect("update")
    );
    s.world_relate(&plays_for("b", 2 * DAY, None))
        .await
        .expect("b");
    assert_ne!(s.world_snapshot("t").await.expect("snapshot"), before);
    let audit = s.world_audit("t").await.expect("audit");
    let actions: Vec<&str> = audit.iter().map(|a| a.action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "entity.create",
            "edge.create",
            "entity.update",
            "edge.close",
            "edge.create"
        ]
    );
    assert!(audit.windows(2).all(|w| w[0].seq < w[1].seq));
    assert!(
        s.world_audit("another tenant")
            .await
            .expect("audit")
            .is_empty()
    );
    t.cleanup().await;
}
