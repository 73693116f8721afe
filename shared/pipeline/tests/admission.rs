//! Fair admission against both stores: every body runs once on a temporary SQLite file and
//! once on a fresh Postgres database.

use proven_pipeline::admission::{AdmissionConfig, admit};
use proven_store::testing::{Backend, TestStore};
use proven_store::{NewPipelineReview, Store};

proven_store::both_backends!(
    two_thousand_queued_reviews_of_one_tenant_never_hide_another_tenants_review,
    with_one_free_slot_left_the_other_tenant_still_gets_its_turn,
);

fn review(id: &str, tenant: &str, priority: i64) -> NewPipelineReview {
    NewPipelineReview {
        tenant_id: Some(tenant.into()),
        priority,
        ..proven_store::testing::pipeline_review(id)
    }
}

/// Tenant A (limit 4) queues 2,000 interactive reviews; then tenant B (limit 1) queues a
/// batch review and, after it, an interactive one. Returns (A's id, B's id).
async fn a_flood_and_a_pull_request(store: &Store) -> (String, String) {
    let (a, _) = store.create_tenant("a", 4).await.expect("tenant a");
    let (b, _) = store.create_tenant("b", 1).await.expect("tenant b");
    let flood: Vec<NewPipelineReview> = (0..2000)
        .map(|i| review(&format!("a{i:04}"), &a.id, 0))
        .collect();
    store
        .submit_batch("flood", &a.id, &flood, i64::MAX)
        .await
        .expect("2,000 reviews of tenant a");
    store
        .submit_review(&review("b-batch", &b.id, 2))
        .await
        .expect("b's batch review");
    store
        .submit_review(&review("b-pr", &b.id, 0))
        .await
        .expect("b's interactive review");
    (a.id, b.id)
}

/// With one global window of the oldest 500 reviews (what admission read before), B's
/// review was never even looked at while A's queue lasted.
async fn two_thousand_queued_reviews_of_one_tenant_never_hide_another_tenants_review(
    backend: Backend,
) {
    let t = TestStore::new(backend).await;
    a_flood_and_a_pull_request(&t.store).await;
    let config = AdmissionConfig {
        max_running: 64,
        ..AdmissionConfig::default()
    };
    let admitted = admit(&t.store, &config).await.expect("admit");
    // Interactive first, tenants in turn (the least busy, then the oldest review), each
    // within its own limit: B's interactive review goes second, its batch review waits
    // behind it (B's limit is 1), and A stops at its limit of 4.
    assert_eq!(admitted, ["a0000", "b-pr", "a0001", "a0002", "a0003"]);
    assert_eq!(
        t.store
            .review("b-batch")
            .await
            .expect("b-batch")
            .status
            .as_str(),
        "queued"
    );
    // Both tenants are at their limits: nothing more is admitted, however many wait.
    assert!(admit(&t.store, &config).await.expect("admit").is_empty());
    t.cleanup().await;
}

async fn with_one_free_slot_left_the_other_tenant_still_gets_its_turn(backend: Backend) {
    let t = TestStore::new(backend).await;
    a_flood_and_a_pull_request(&t.store).await;
    let config = AdmissionConfig {
        max_running: 2,
        ..AdmissionConfig::default()
    };
    assert_eq!(
        admit(&t.store, &config).await.expect("admit"),
        ["a0000", "b-pr"]
    );
    t.cleanup().await;
}
