//! H-MEM in the store: a record is found only by its own tenant, in its own repository;
//! a newer record supersedes an older one of the same tenant (kept, never deleted).

use proven_store::MemoryRecord;
use proven_store::testing::{Backend, TestStore};

proven_store::both_backends!(
    memory_is_per_tenant_and_repository,
    a_repositorys_memory_holds_at_most_its_cap,
    similar_claims_are_found_by_their_leading_words_only,
);

fn record(id: &str, tenant: &str, repository: &str) -> MemoryRecord {
    MemoryRecord {
        id: id.into(),
        tenant: tenant.into(),
        repository: repository.into(),
        fingerprint: "fp".into(),
        kind: "test".into(),
        path: "calc.py".into(),
        symbol: None,
        claim: "clamp is wrong".into(),
        refutation: "{}".into(),
        provenance: "{}".into(),
        confidence: 1.0,
        created_at: String::new(),
    }
}

async fn memory_is_per_tenant_and_repository(backend: Backend) {
    let t = TestStore::new(backend).await;
    let repo = "github.com/acme/widgets";
    t.store
        .memory_write(&record("a1", "tenant-a", repo), u64::MAX)
        .await
        .expect("write");
    let found = t
        .store
        .memory_lookup("tenant-a", repo, "fp")
        .await
        .expect("lookup")
        .expect("tenant A finds its record");
    assert_eq!(
        (found.id.as_str(), found.tenant.as_str()),
        ("a1", "tenant-a")
    );
    for (tenant, repository) in [
        ("tenant-b", repo),
        ("", repo),
        ("tenant-a", "github.com/acme/other"),
    ] {
        assert!(
            t.store
                .memory_lookup(tenant, repository, "fp")
                .await
                .expect("lookup")
                .is_none(),
            "{tenant:?} in {repository} must not see tenant A's record"
        );
    }
    // Tenant B's own record of the same fingerprint supersedes nothing of tenant A's.
    t.store
        .memory_write(&record("b1", "tenant-b", repo), u64::MAX)
        .await
        .expect("write");
    t.store
        .memory_write(&record("a2", "tenant-a", repo), u64::MAX)
        .await
        .expect("write");
    let a = t
        .store
        .memory_lookup("tenant-a", repo, "fp")
        .await
        .expect("lookup");
    let b = t
        .store
        .memory_lookup("tenant-b", repo, "fp")
        .await
        .expect("lookup");
    assert_eq!(
        a.map(|r| r.id),
        Some("a2".to_string()),
        "the newer record of A is current"
    );
    assert_eq!(
        b.map(|r| r.id),
        Some("b1".to_string()),
        "B's record was not superseded by A's"
    );
    t.cleanup().await;
}

/// PROVEN_HMEM_MAX_STATE_BYTES: a record that would take a repository's memory (superseded
/// records included) past its cap is refused by name, with the size and the cap; another
/// repository's memory is its own.
async fn a_repositorys_memory_holds_at_most_its_cap(backend: Backend) {
    let t = TestStore::new(backend).await;
    let repo = "github.com/acme/widgets";
    let one = record("a1", "t", repo);
    let size = (one.claim.len()
        + one.refutation.len()
        + one.provenance.len()
        + one.path.len()
        + one.fingerprint.len()) as u64;
    t.store.memory_write(&one, 2 * size).await.expect("fits");
    t.store
        .memory_write(&record("a2", "t", repo), 2 * size)
        .await
        .expect("fits exactly");
    match t
        .store
        .memory_write(&record("a3", "t", repo), 2 * size)
        .await
    {
        Err(proven_store::StoreError::MemoryFull {
            repository,
            bytes,
            cap,
        }) => {
            assert_eq!(
                (repository.as_str(), bytes, cap),
                (repo, 3 * size, 2 * size)
            );
        }
        other => panic!("over the cap: {other:?}"),
    }
    t.store
        .memory_write(&record("b1", "t", "github.com/acme/other"), 2 * size)
        .await
        .expect("another repository's own memory");
    // The same record again (a replayed judge) is not counted twice.
    t.store
        .memory_write(&record("a2", "t", repo), 2 * size)
        .await
        .expect("a replay");
    t.cleanup().await;
}

/// PROVEN_HMEM_QUERY_TOKENS: only a query's leading words count, and a similar record is
/// only ever found, never the answer of the lookup that silences a finding.
async fn similar_claims_are_found_by_their_leading_words_only(backend: Backend) {
    let t = TestStore::new(backend).await;
    let repo = "github.com/acme/widgets";
    let mut r = record("a1", "t", repo);
    r.claim = "clamp returns the upper bound when the value is negative".into();
    r.fingerprint = "fp-clamp".into();
    t.store.memory_write(&r, u64::MAX).await.expect("write");
    let asked = "parse drops a last field of every row when clamp returns";
    let found = |tokens| {
        let store = t.store.clone();
        async move {
            store
                .memory_similar(("t", repo), asked, tokens, 3)
                .await
                .expect("similar")
        }
    };
    assert!(
        found(8).await.is_empty(),
        "'when', 'clamp' and 'returns' are past the query's 8th word"
    );
    let wide = found(16).await;
    assert_eq!(wide.len(), 1);
    assert_eq!(wide[0].0, "a1");
    assert!(wide[0].1 > 0.0 && wide[0].1 < 1.0, "{wide:?}");
    assert!(
        found(16).await.iter().all(|(id, _)| id != "x"),
        "only the tenant's own records"
    );
    assert!(
        t.store
            .memory_lookup("t", repo, "fp-other")
            .await
            .expect("lookup")
            .is_none(),
        "a similar record is never what a fingerprint finds"
    );
    t.cleanup().await;
}
