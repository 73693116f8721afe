//! Questions as durable jobs: claimed once under a lease, claimed again only when the lease
//! ends, failed by name after their last attempt, read back only by their own tenant.

use proven_store::MAX_QUESTION_ATTEMPTS;
use proven_store::testing::{Backend, TestStore};

both_backends!(a_question_is_claimed_once_answered_and_seen_only_by_its_tenant,);

async fn a_question_is_claimed_once_answered_and_seen_only_by_its_tenant(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    assert_eq!(store.claim_question(60).await.expect("claim"), None);
    let first = store
        .submit_question("acme", ("/srv/repo", "HEAD", "What is the timeout?"))
        .await
        .expect("submit");
    let second = store
        .submit_question("acme", ("/srv/repo", "v1", "Who calls load?"))
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
        .submit_question("acme", ("/srv/repo", "HEAD", "Lost?"))
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
