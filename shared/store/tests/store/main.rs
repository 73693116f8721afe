//! The store against both backends: every test body runs once on a temporary SQLite file
//! and once on a fresh Postgres database.

mod advisories;
mod daily;
mod github;
mod memory;
mod pipeline;
mod questions;
mod sessions;
mod world;
mod world_graph;

/// A tenant's token is shown once and kept only as its SHA-256: the database file (and its
/// write-ahead log) holds the hash, never the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_token_is_stored_only_as_its_hash() {
    let t = proven_store::testing::TestStore::new(proven_store::testing::Backend::Sqlite).await;
    let (tenant, token) = t
        .store
        .create_tenant("acme", 4)
        .await
        .expect("create tenant");
    let found = t
        .store
        .tenant_for_token(&token)
        .await
        .expect("lookup")
        .expect("the token authenticates");
    assert_eq!(found.id, tenant.id);
    assert!(
        t.store
            .tenant_for_token(&format!("{token}x"))
            .await
            .expect("lookup")
            .is_none()
    );
    let path = t
        .url
        .strip_prefix("sqlite://")
        .and_then(|p| p.split('?').next())
        .expect("a SQLite path");
    let mut bytes = std::fs::read(path).expect("database file");
    bytes.extend(std::fs::read(format!("{path}-wal")).unwrap_or_default());
    let contains = |needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(
        contains(&proven_store::token_hash(&token)),
        "the hash is what is kept"
    );
    assert!(!contains(&token), "the token itself is never written");
    t.cleanup().await;
}
