//! The store against both backends: every test body runs once on a temporary SQLite file
//! and once on a fresh Postgres database.

macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
              async fn $name() { super::$name(proven_store::testing::Backend::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
              async fn $name() { super::$name(proven_store::testing::Backend::Postgres).await })*
        }
    };
}

mod advisories;
mod github;
mod memory;
mod pipeline;
mod questions;
mod world;

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

/// A Postgres store keeps at most the connections it was opened with
/// (`PROVEN_DATABASE_CONNECTIONS`), however many callers it has at once: 32 concurrent claims
/// and reads through a store of 2 never have more than 2 backends on its database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_store_keeps_at_most_its_connections() {
    use proven_store::{NewPipelineReview, NewStep, StepId, Store};
    let t = proven_store::testing::TestStore::new(proven_store::testing::Backend::Postgres).await;
    t.store.close().await;
    let store = Store::open_url_with(&t.url, 2).await.expect("open");
    let db = t.url.rsplit('/').next().expect("db").to_string();
    let mut admin = <sqlx::AnyConnection as sqlx::Connection>::connect(
        &proven_store::testing::postgres_admin_url(),
    )
    .await
    .expect("admin");
    for i in 0..32 {
        let id = format!("r{i}");
        store
            .submit_review(&NewPipelineReview {
                id: id.clone(),
                tenant_id: None,
                repository: "/repo".into(),
                base_rev: "a".into(),
                head_rev: "b".into(),
                priority: 0,
                batch_id: None,
                pr_key: None,
                request: "{}".into(),
                deadline_us: None,
                trace_id: None,
            })
            .await
            .expect("submit");
        store
            .admit_review(&id, &NewStep::new("intake", "evidence"))
            .await
            .expect("admit");
    }
    let work = (0..32).map(|i| {
        let store = store.clone();
        async move {
            let step = StepId {
                review_id: format!("r{i}"),
                step: "intake".into(),
                key: String::new(),
            };
            store.claim(&step, "w", 60_000_000, 3).await.expect("claim");
            store.steps_of(&step.review_id).await.expect("read");
        }
    });
    let watch = async {
        let mut most = 0i64;
        for _ in 0..50 {
            let (n,): (i64,) =
                sqlx::query_as("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = $1")
                    .bind(db.as_str())
                    .fetch_one(&mut admin)
                    .await
                    .expect("count");
            most = most.max(n);
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        most
    };
    let (_, most) = tokio::join!(futures_util::future::join_all(work), watch);
    assert!(most >= 1, "the store's work was seen");
    assert!(most <= 2, "{most} backends for a store of 2 connections");
    store.close().await;
    t.cleanup().await;
}
