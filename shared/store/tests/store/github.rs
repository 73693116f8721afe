//! GitHub deliveries and publications: a delivery seen before (by id, or by its body under
//! another id) creates nothing; a newer head supersedes the pull request's pending review and
//! its publication; a publication is claimed for its check run at once, for its post only
//! once the review has ended, and a rate limit gives it back without spending an attempt.

use proven_store::testing::{Backend, TestStore};
use proven_store::{
    Delivery, InstallationChange, NewPipelineReview, NewPublication, PublicationState,
    ReviewRequest, ReviewStatus,
};

both_backends!(
    deliveries_create_once_and_new_heads_supersede_pending_publications,
    tenants_take_turns_at_publishing,
);

fn review(head: &str) -> NewPipelineReview {
    let request = ReviewRequest {
        repository: "https://github.com/acme/app.git".into(),
        base: "a".repeat(40),
        head: head.into(),
        pull_request: Some("github:acme/app#7".into()),
        ..ReviewRequest::default()
    };
    NewPipelineReview::of_request("", &request, 0, None).expect("request")
}

fn publication(head: &str) -> NewPublication {
    NewPublication {
        installation_id: 42,
        repository: "acme/app".into(),
        pull_number: 7,
        head_sha: head.into(),
    }
}

async fn deliveries_create_once_and_new_heads_supersede_pending_publications(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    let d1 = Delivery {
        id: "d-1",
        body_sha256: "sha-1",
        event: "pull_request",
    };
    let first = review(&"b".repeat(40));
    let created = store
        .github_review_delivery(
            &d1,
            (42, "acme"),
            &first,
            &publication(&"b".repeat(40)),
            100,
        )
        .await
        .expect("deliver");
    assert_eq!(created, Some(vec![]));
    // The same id, or the same body under another id: nothing.
    for again in [d1, Delivery { id: "d-1b", ..d1 }] {
        let other = review(&"b".repeat(40));
        let none = store
            .github_review_delivery(
                &again,
                (42, "acme"),
                &other,
                &publication(&"b".repeat(40)),
                100,
            )
            .await
            .expect("deliver");
        assert_eq!(none, None, "{again:?}");
    }
    // The installation's tenant is its account's, and the same for its other deliveries.
    let tenant = store
        .review_tenant(&first.id)
        .await
        .expect("tenant")
        .expect("set");
    let change = InstallationChange {
        installation_id: 42,
        account: "acme",
        repositories_added: &["acme/app".to_string(), "acme/lib".to_string()],
        ..InstallationChange::default()
    };
    let d2 = Delivery {
        id: "d-2",
        body_sha256: "sha-2",
        event: "installation",
    };
    assert_eq!(
        store
            .github_installation(&d2, &change)
            .await
            .expect("install"),
        Some(tenant.clone())
    );
    assert_eq!(
        store
            .github_installation(&d2, &change)
            .await
            .expect("again"),
        None
    );
    assert_eq!(
        store.github_repositories(42).await.expect("repos"),
        ["acme/app", "acme/lib"]
    );

    // Claimed at once for its check run; once started, not again while the review runs.
    let claimed = store
        .claim_publication(60)
        .await
        .expect("claim")
        .expect("one");
    assert_eq!(claimed.review_id, first.id);
    store
        .publication_posted(&first.id, Some(901), None)
        .await
        .expect("posted");
    store
        .publication_later(&first.id, 0, "waiting", false)
        .await
        .expect("later");
    assert_eq!(
        store.claim_publication(60).await.expect("claim"),
        None,
        "the review is still queued"
    );

    // A newer head supersedes the pending review.
    let second = review(&"c".repeat(40));
    let d3 = Delivery {
        id: "d-3",
        body_sha256: "sha-3",
        event: "pull_request",
    };
    let superseded = store
        .github_review_delivery(
            &d3,
            (42, "acme"),
            &second,
            &publication(&"c".repeat(40)),
            100,
        )
        .await
        .expect("deliver")
        .expect("new");
    assert_eq!(superseded, vec![first.id.clone()]);
    let old = store
        .publication(&first.id)
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(
        old.state,
        PublicationState::Cancelling,
        "its started check run is to be cancelled"
    );
    assert_eq!(
        store.review(&first.id).await.expect("review").status,
        ReviewStatus::Superseded
    );
    let next = store
        .claim_publication(60)
        .await
        .expect("claim")
        .expect("one");
    let other = store
        .claim_publication(60)
        .await
        .expect("claim")
        .expect("two");
    let mut ids = [next.review_id.clone(), other.review_id.clone()];
    ids.sort();
    let mut want = [first.id.clone(), second.id.clone()];
    want.sort();
    assert_eq!(ids, want);
    // A rate limit: given back for its time, no attempt spent.
    store
        .publication_later(&second.id, 3600, "rate limit", false)
        .await
        .expect("later");
    let waiting = store
        .publication(&second.id)
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(
        (waiting.attempts, waiting.state),
        (0, PublicationState::Pending)
    );
    assert_eq!(
        store.claim_publication(60).await.expect("claim"),
        None,
        "not before its time"
    );
    // Failed calls spend attempts, up to the last.
    for _ in 0..proven_store::MAX_PUBLISH_ATTEMPTS {
        store
            .publication_later(&second.id, 0, "502", true)
            .await
            .expect("later");
    }
    let failed = store
        .publication(&second.id)
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(failed.state, PublicationState::Failed);
    t.cleanup().await;
}

async fn tenants_take_turns_at_publishing(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    let mut n = 0;
    let mut deliver = |installation: i64, account: &'static str, pull: i64| {
        n += 1;
        let id = format!("d-{n}");
        let sha = format!("sha-{n}");
        let head = format!("{n:0>40}");
        async move {
            let mut r = review(&head);
            r.pr_key = Some(format!("github:{account}/app#{pull}"));
            let p = NewPublication {
                installation_id: installation,
                repository: format!("{account}/app"),
                pull_number: pull,
                head_sha: head.clone(),
            };
            let d = Delivery {
                id: &id,
                body_sha256: &sha,
                event: "pull_request",
            };
            store
                .github_review_delivery(&d, (installation, account), &r, &p, 100)
                .await
                .expect("deliver")
                .expect("new");
            r.id
        }
    };
    // One organisation opens three pull requests, then another opens one.
    let mut busy = Vec::new();
    for pull in 1..=3 {
        busy.push(deliver(42, "acme", pull).await);
    }
    let quiet = deliver(77, "globex", 1).await;
    let first = store
        .claim_publication(60)
        .await
        .expect("claim")
        .expect("one");
    let second = store
        .claim_publication(60)
        .await
        .expect("claim")
        .expect("two");
    assert_eq!(first.review_id, busy[0]);
    assert_eq!(
        second.review_id, quiet,
        "the other tenant's turn comes second, not fourth"
    );
    let third = store
        .claim_publication(60)
        .await
        .expect("claim")
        .expect("three");
    assert_eq!(third.review_id, busy[1]);
    t.cleanup().await;
}
