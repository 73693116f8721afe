//! GitHub deliveries and publications: a delivery seen before (by id, or by its body under
//! another id) creates nothing; a newer head supersedes the pull request's pending review and
//! its publication; a publication is claimed for its check run at once, for its post only
//! once the review has ended, and a rate limit gives it back without spending an attempt.

use proven_store::testing::{Backend, TestStore};
use proven_store::{
    Delivery, GitHubAccount, InstallationChange, NewPipelineReview, NewPublication,
    PublicationState, ReviewDelivery, ReviewRequest, ReviewStatus, StoreError,
};

proven_store::both_backends!(
    deliveries_create_once_and_new_heads_supersede_pending_publications,
    tenants_take_turns_at_publishing,
    a_lease_taken_over_refuses_every_write_of_its_old_holder,
    an_older_head_never_supersedes_a_newer_one,
    the_tenant_is_the_accounts_id_never_its_login,
    a_rate_limit_holds_the_whole_installation,
);

const ACME: Option<GitHubAccount<'static>> = Some(GitHubAccount {
    id: 9,
    login: "acme",
});

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
        head_at: None,
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
        .github_review_delivery(&d1, (42, ACME), &first, &publication(&"b".repeat(40)), 100)
        .await
        .expect("deliver");
    assert_eq!(created, ReviewDelivery::Accepted { superseded: vec![] });
    // The same id, or the same body under another id: nothing.
    for again in [d1, Delivery { id: "d-1b", ..d1 }] {
        let other = review(&"b".repeat(40));
        let none = store
            .github_review_delivery(
                &again,
                (42, ACME),
                &other,
                &publication(&"b".repeat(40)),
                100,
            )
            .await
            .expect("deliver");
        assert_eq!(none, ReviewDelivery::Duplicate, "{again:?}");
    }
    // The installation's tenant is its account's, and the same for its other deliveries.
    let tenant = store
        .review_tenant(&first.id)
        .await
        .expect("tenant")
        .expect("set");
    let change = InstallationChange {
        installation_id: 42,
        account: GitHubAccount {
            id: 9,
            login: "acme",
        },
        removed: false,
        repositories_added: &["acme/app".to_string(), "acme/lib".to_string()],
        repositories_removed: &[],
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
        .publication_posted(&claimed, Some(901), None)
        .await
        .expect("posted");
    store
        .publication_later(&claimed, 0, "waiting", false)
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
        .github_review_delivery(&d3, (42, ACME), &second, &publication(&"c".repeat(40)), 100)
        .await
        .expect("deliver");
    assert_eq!(
        superseded,
        ReviewDelivery::Accepted {
            superseded: vec![first.id.clone()]
        }
    );
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
    let held = if next.review_id == second.id {
        next
    } else {
        other
    };
    // A rate limit: given back, no attempt spent.
    store
        .publication_later(&held, 0, "rate limit", false)
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
    assert!(
        matches!(
            store.publication_later(&held, 0, "again", false).await,
            Err(StoreError::LeaseLost(_))
        ),
        "given back, the claim is over: its holder cannot write again"
    );
    // Failed calls spend attempts, up to the last (each its own claim).
    let mut states = Vec::new();
    for _ in 0..proven_store::MAX_PUBLISH_ATTEMPTS {
        let claim = store
            .claim_publication(60)
            .await
            .expect("claim")
            .expect("the failed one again");
        assert_eq!(claim.review_id, second.id);
        states.push(
            store
                .publication_later(&claim, 0, "502", true)
                .await
                .expect("later"),
        );
    }
    assert_eq!(states.last(), Some(&PublicationState::Failed), "{states:?}");
    assert!(
        states[..states.len() - 1]
            .iter()
            .all(|s| *s == PublicationState::Pending),
        "{states:?}"
    );
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
                head_at: None,
            };
            let who = Some(GitHubAccount {
                id: installation,
                login: account,
            });
            let d = Delivery {
                id: &id,
                body_sha256: &sha,
                event: "pull_request",
            };
            store
                .github_review_delivery(&d, (installation, who), &r, &p, 100)
                .await
                .expect("deliver");
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

fn delivery(id: &str) -> Delivery<'_> {
    Delivery {
        id,
        body_sha256: id,
        event: "pull_request",
    }
}

async fn a_lease_taken_over_refuses_every_write_of_its_old_holder(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    let r = review(&"b".repeat(40));
    store
        .github_review_delivery(
            &delivery("d-1"),
            (42, ACME),
            &r,
            &publication(&"b".repeat(40)),
            100,
        )
        .await
        .expect("deliver");
    // A lease that ran out at once: another worker takes the publication over.
    let old = store
        .claim_publication(-1)
        .await
        .expect("claim")
        .expect("one");
    let new = store
        .claim_publication(60)
        .await
        .expect("claim")
        .expect("taken over");
    assert_eq!((old.claims, new.claims), (1, 2), "claims are counted");
    assert_ne!(old.lease_token, new.lease_token);
    let lost = |r: Result<(), StoreError>| matches!(r, Err(StoreError::LeaseLost(_)));
    assert!(lost(store.publication_posted(&old, Some(1), None).await));
    assert!(lost(store.publication_checked(&old, 1).await));
    assert!(lost(store.publication_hold(&old, 60).await));
    assert!(lost(
        store
            .publication_end(&old, PublicationState::Done, None, None)
            .await
    ));
    assert!(lost(
        store
            .publication_later(&old, 0, "late", true)
            .await
            .map(drop)
    ));
    // The new holder's writes land; the old one's changed nothing.
    store.publication_hold(&new, 60).await.expect("hold");
    store
        .publication_posted(&new, Some(2), Some(3))
        .await
        .expect("posted");
    store.publication_checked(&new, 2).await.expect("checked");
    let now = store.publication(&r.id).await.expect("read").expect("kept");
    assert_eq!(
        (
            now.check_run_id,
            now.comment_id,
            now.check_updates,
            now.attempts,
            now.state
        ),
        (Some(2), Some(3), 2, 0, PublicationState::Pending)
    );
    assert_eq!(
        store.claim_publication(60).await.expect("claim"),
        None,
        "held: no third claim"
    );
    store
        .publication_end(&new, PublicationState::Done, None, Some("off"))
        .await
        .expect("end");
    assert!(lost(store.publication_hold(&new, 60).await), "ended");
    t.cleanup().await;
}

async fn an_older_head_never_supersedes_a_newer_one(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    let (old_head, new_head) = ("a".repeat(40), "c".repeat(40));
    let at = |head: &str, at: i64| NewPublication {
        head_at: Some(at),
        ..publication(head)
    };
    let newer = review(&new_head);
    let first = store
        .github_review_delivery(
            &delivery("d-new"),
            (42, ACME),
            &newer,
            &at(&new_head, 2_000),
            100,
        )
        .await
        .expect("deliver");
    assert_eq!(first, ReviewDelivery::Accepted { superseded: vec![] });
    // The older push's delivery arrives late (or is replayed, or its check run re-run).
    let late = review(&old_head);
    let stale = store
        .github_review_delivery(
            &delivery("d-old"),
            (42, ACME),
            &late,
            &at(&old_head, 1_000),
            100,
        )
        .await
        .expect("deliver");
    assert_eq!(
        stale,
        ReviewDelivery::Stale {
            newer_head: new_head.clone()
        }
    );
    assert_eq!(
        store.review(&newer.id).await.expect("review").status,
        ReviewStatus::Queued,
        "the newer head's review stands"
    );
    assert!(
        matches!(store.review(&late.id).await, Err(StoreError::NotFound(_))),
        "nothing created for the stale one"
    );
    // A newer push still supersedes.
    let newest = review(&"d".repeat(40));
    let took = store
        .github_review_delivery(
            &delivery("d-newest"),
            (42, ACME),
            &newest,
            &at(&"d".repeat(40), 3_000),
            100,
        )
        .await
        .expect("deliver");
    assert_eq!(
        took,
        ReviewDelivery::Accepted {
            superseded: vec![newer.id.clone()]
        }
    );
    // A re-run finds its publication by its check run, of its installation only.
    let claim = store
        .claim_publication(60)
        .await
        .expect("claim")
        .expect("one");
    store
        .publication_posted(&claim, Some(901), None)
        .await
        .expect("posted");
    let (found, request) = store
        .github_check_run_publication(42, 901)
        .await
        .expect("lookup")
        .expect("found");
    assert_eq!(found.review_id, claim.review_id);
    assert!(request.contains("\"head\""), "{request}");
    assert_eq!(
        store
            .github_check_run_publication(43, 901)
            .await
            .expect("lookup"),
        None,
        "another installation's check run"
    );
    // A re-run of an installation the store does not know creates nothing.
    let unknown = store
        .github_review_delivery(
            &delivery("d-rerun"),
            (44, None),
            &review(&new_head),
            &publication(&new_head),
            100,
        )
        .await;
    assert!(
        matches!(unknown, Err(StoreError::NotFound(_))),
        "{unknown:?}"
    );
    t.cleanup().await;
}

async fn the_tenant_is_the_accounts_id_never_its_login(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    let install = |installation: i64, id: i64, login: &'static str, n: &'static str| {
        let change = InstallationChange {
            installation_id: installation,
            account: GitHubAccount { id, login },
            removed: false,
            repositories_added: &[],
            repositories_removed: &[],
        };
        async move {
            store
                .github_installation(&delivery(n), &change)
                .await
                .expect("install")
                .expect("new")
        }
    };
    let acme = install(42, 9, "acme", "d-1").await;
    // Renamed: the same account, the same tenant.
    assert_eq!(install(42, 9, "acme-corp", "d-2").await, acme);
    // Another account takes the freed login: a tenant of its own.
    let squatter = install(50, 10, "acme", "d-3").await;
    assert_ne!(
        squatter, acme,
        "a login that changed hands never hands over a tenant"
    );
    // The first account installs the app again (a new installation): its tenant.
    assert_eq!(install(51, 9, "acme-corp", "d-4").await, acme);
    let tenants = store.list_tenants().await.expect("tenants");
    let named: Vec<(&str, &str)> = tenants
        .iter()
        .map(|(t, _)| (t.name.as_str(), t.id.as_str()))
        .collect();
    assert_eq!(
        named,
        [
            ("github:10", squatter.as_str()),
            ("github:9", acme.as_str())
        ],
        "named by the accounts' ids"
    );
    t.cleanup().await;
}

async fn a_rate_limit_holds_the_whole_installation(backend: Backend) {
    let t = TestStore::new(backend).await;
    let store = &t.store;
    for (n, (installation, pull)) in [(42, 1), (42, 2), (77, 1)].into_iter().enumerate() {
        let head = format!("{n:0>40}");
        let mut r = review(&head);
        r.pr_key = Some(format!("github:{installation}/app#{pull}"));
        let p = NewPublication {
            installation_id: installation,
            repository: format!("{installation}/app"),
            pull_number: pull,
            head_sha: head.clone(),
            head_at: None,
        };
        let who = Some(GitHubAccount {
            id: installation,
            login: "org",
        });
        let id = format!("d-{n}");
        store
            .github_review_delivery(&delivery(&id), (installation, who), &r, &p, 100)
            .await
            .expect("deliver");
    }
    let limited = store
        .claim_publication(60)
        .await
        .expect("claim")
        .expect("one");
    assert_eq!(limited.installation_id, 42);
    assert_eq!(store.installation_later(42, 3600).await.expect("hold"), 2);
    store
        .publication_later(&limited, 3600, "rate limit", false)
        .await
        .expect("later");
    let next = store
        .claim_publication(60)
        .await
        .expect("claim")
        .expect("another installation's");
    assert_eq!(
        next.installation_id, 77,
        "the limited installation waits, the other goes on"
    );
    assert_eq!(
        store.claim_publication(60).await.expect("claim"),
        None,
        "none of installation 42's before its time"
    );
    t.cleanup().await;
}
