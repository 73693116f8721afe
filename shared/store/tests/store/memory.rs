//! H-MEM in the store: a record is found only by its own tenant, in its own repository;
//! a newer record supersedes an older one of the same tenant (kept, never deleted).

use proven_store::MemoryRecord;
use proven_store::testing::{Backend, TestStore};

both_backends!(memory_is_per_tenant_and_repository);

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
        .memory_write(&record("a1", "tenant-a", repo))
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
        .memory_write(&record("b1", "tenant-b", repo))
        .await
        .expect("write");
    t.store
        .memory_write(&record("a2", "tenant-a", repo))
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
