//! Questions as durable jobs: claimed once under a lease, claimed again only when the lease
//! ends, failed by name after their last attempt, read back only by their own tenant.

use proven_store::MAX_QUESTION_ATTEMPTS;
use proven_store::testing::{Backend, TestStore};

proven_store::both_backends!(
    a_question_is_claimed_once_answered_and_seen_only_by_its_tenant,
    a_tenant_over_its_question_cap_is_refused_and_nothing_is_recorded,
    two_tenants_questions_are_claimed_in_turn_not_oldest_first,
);

async fn a_question_is_claimed_once_answered_and_seen_only_by_its_tenant(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    assert_eq!(store.claim_question(60).await.expect("claim"), None);
    let first = store
        .submit_question("acme", ("/srv/repo", "HEAD", "What is the timeout?"), None)
        .await
        .expect("submit");
    let second = store
        .submit_question("acme", ("/srv/repo", "v1", "Who calls load?"), None)
        .await
        .expect("submit");
    let claimed = store
        .claim_question(60)
        .await
        .expect("claim")
        .expect("one waits");
    assert_eq!(
        (
            claimed.id.as_str(),
            claimed.status.as_str(),
            claimed.attempts
        ),
        (first.as_str(), "running", 1)
    );
    // A running question within its lease is not claimed again: the next one is.
    let next = store
        .claim_question(60)
        .await
        .expect("claim")
        .expect("the second");
    assert_eq!(next.id, second);
    assert_eq!(store.claim_question(60).await.expect("claim"), None);
    store
        .finish_question(&first, Ok("{\"kind\":\"answer\"}"))
        .await
        .expect("finish");
    let done = store
        .question("acme", &first)
        .await
        .expect("read")
        .expect("its own");
    assert_eq!(
        (done.status.as_str(), done.answer.as_deref()),
        ("done", Some("{\"kind\":\"answer\"}"))
    );
    assert_eq!(
        store.question("globex", &first).await.expect("read"),
        None,
        "another tenant's"
    );
    // A lease that ended (its worker died) is claimed again, up to the last attempt.
    let lost = store
        .submit_question("acme", ("/srv/repo", "HEAD", "Lost?"), None)
        .await
        .expect("submit");
    for attempt in 1..=MAX_QUESTION_ATTEMPTS {
        let c = store
            .claim_question(-1)
            .await
            .expect("claim")
            .expect("claimed again");
        assert_eq!((c.id.as_str(), c.attempts), (lost.as_str(), attempt));
    }
    assert_eq!(
        store.claim_question(60).await.expect("claim"),
        None,
        "no attempt left"
    );
    let failed = store
        .question("acme", &lost)
        .await
        .expect("read")
        .expect("its own");
    assert_eq!(failed.status, "failed");
    assert!(
        failed
            .error
            .as_deref()
            .is_some_and(|e| e.contains("its worker stopped 3 times"))
    );
    store
        .finish_question(&second, Err("the repository is gone"))
        .await
        .expect("finish");
    let gone = store
        .question("acme", &second)
        .await
        .expect("read")
        .expect("its own");
    assert_eq!(
        (gone.status.as_str(), gone.error.as_deref()),
        ("failed", Some("the repository is gone"))
    );
    t.cleanup().await;
}

async fn a_tenant_over_its_question_cap_is_refused_and_nothing_is_recorded(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    let ask = |tenant: &'static str| {
        store.submit_question(tenant, ("/srv/repo", "HEAD", "Why?"), Some(2))
    };
    let first = ask("acme").await.expect("within the cap");
    ask("acme").await.expect("within the cap");
    match ask("acme").await {
        Err(proven_store::StoreError::QuestionsFull {
            unfinished: 2,
            limit: 2,
        }) => {}
        other => panic!("the third unanswered question passes the cap: {other:?}"),
    }
    // The cap is the tenant's own, and an answered question no longer counts.
    ask("globex").await.expect("another tenant's first");
    store
        .finish_question(&first, Ok("{}"))
        .await
        .expect("finish");
    ask("acme").await.expect("room again once one is answered");
    // The refused one was never recorded: acme holds its two unanswered questions only.
    let mut claimed = Vec::new();
    while let Some(q) = store.claim_question(60).await.expect("claim") {
        claimed.push(q.tenant_id);
    }
    claimed.sort();
    assert_eq!(claimed, ["acme", "acme", "globex"]);
}

async fn two_tenants_questions_are_claimed_in_turn_not_oldest_first(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    // acme asks three questions before globex asks its two.
    let mut asked = Vec::new();
    for (tenant, n) in [("acme", 3), ("globex", 2)] {
        for i in 0..n {
            let q = format!("{tenant} question {i}");
            let id = store
                .submit_question(tenant, ("/srv/repo", "HEAD", &q), None)
                .await
                .expect("submit");
            asked.push((id, tenant));
            // Distinct creation times: the order within a tenant is the order asked.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
    let mut order = Vec::new();
    while let Some(q) = store.claim_question(60).await.expect("claim") {
        order.push(q.question);
    }
    assert_eq!(
        order,
        [
            "acme question 0",
            "globex question 0",
            "acme question 1",
            "globex question 1",
            "acme question 2",
        ],
        "tenants take turns; oldest-first across tenants would give acme's three first"
    );
}
