//! The `/ui` charts' totals: one aggregate over every review of the period, by day.

use proven_store::testing::{Backend, TestStore};
use proven_store::{NewPipelineReview, ReviewStatus};

proven_store::both_backends!(daily_totals_sum_every_review_of_the_period_by_day,);

async fn daily_totals_sum_every_review_of_the_period_by_day(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    let (tenant, _) = store.create_tenant("acme", 4).await.expect("tenant");
    let (other, _) = store.create_tenant("other", 4).await.expect("tenant");
    let submit = |tenant_id: &str| NewPipelineReview {
        id: uuid::Uuid::now_v7().to_string(),
        tenant_id: Some(tenant_id.to_string()),
        repository: "https://example.test/r.git".into(),
        base_rev: "a".into(),
        head_rev: "b".into(),
        priority: 2,
        batch_id: None,
        pr_key: None,
        request: "{}".into(),
        deadline_us: None,
        trace_id: None,
    };
    let mut ids = Vec::new();
    for _ in 0..120 {
        let r = submit(&tenant.id);
        store.submit_review(&r).await.expect("submit");
        ids.push(r.id);
    }
    store
        .submit_review(&submit(&other.id))
        .await
        .expect("submit");
    let result = serde_json::json!({"proof_counts": {"reproduced": 1, "exploited": 0, "advisory": 2, "tool": 0}});
    for id in &ids[..110] {
        store
            .finish_review(id, ReviewStatus::Complete, &result.to_string())
            .await
            .expect("finish");
    }
    store
        .append_trace(
            &ids[0],
            "run",
            &[
                ("model_call".into(), serde_json::json!({"cost_usd": 0.25})),
                ("model_call".into(), serde_json::json!({"cost_usd": 0.5})),
                ("other".into(), serde_json::json!({"cost_usd": 9.0})),
            ],
        )
        .await
        .expect("trace");
    let today = time::OffsetDateTime::now_utc().date().to_string();
    let totals = store
        .daily_totals(&tenant.id, "2000-01-01")
        .await
        .expect("totals");
    assert_eq!(totals.len(), 1, "{totals:?}");
    let day = &totals[0];
    assert_eq!(day.day, today);
    // Every review (the 10 unfinished too), not another tenant's.
    assert_eq!(day.reviews, 120);
    assert_eq!((day.reproduced, day.advisory, day.exploited), (110, 220, 0));
    assert!((day.cost_usd - 0.75).abs() < 1e-9, "{}", day.cost_usd);
    // Nothing before the period's first day.
    assert!(
        store
            .daily_totals(&tenant.id, "9999-01-01")
            .await
            .expect("totals")
            .is_empty()
    );
    t.cleanup().await;
}
