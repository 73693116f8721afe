//! The pipeline's invariants in the store: fenced commits, attempts, fan-in, supersede.

use proven_store::testing::{Backend, TestStore};
use proven_store::{Claim, Committed, NewPipelineReview, NewStep, Outcome, Retry, StepId, Store};

both_backends!(
    a_worker_whose_lease_was_taken_over_cannot_commit,
    a_step_that_ends_its_review_is_fenced_and_never_ends_a_superseded_one,
    a_step_that_crashes_its_worker_three_times_is_dead_lettered,
    fan_out_then_fan_in_enqueues_the_judge_once,
    a_newer_head_of_the_same_pull_request_cancels_pending_steps,
    the_reconciler_re_enqueues_what_the_queue_lost,
    a_job_whose_push_failed_is_pushed_again_at_the_next_pass,
    judge_runs_exactly_once_under_concurrent_completion,
    a_review_past_its_deadline_is_judged_with_what_it_has,
    a_started_review_is_never_taken_by_admission,
    a_rate_limit_spends_no_attempt_and_a_wait_no_deferral,
    a_tenant_over_its_cap_on_unfinished_reviews_is_refused_and_nothing_is_recorded,
    revoked_and_rotated_tokens_stop_authenticating_and_listings_never_show_a_token,
);

const MAX_ATTEMPTS: i64 = 3;

async fn admitted(store: &Store, id: &str, pr: Option<&str>) -> Vec<String> {
    let superseded = store
        .submit_review(&NewPipelineReview {
            id: id.into(),
            tenant_id: None,
            repository: "/repo".into(),
            base_rev: "a".into(),
            head_rev: "b".into(),
            priority: 0,
            batch_id: None,
            pr_key: pr.map(str::to_string),
            request: "{}".into(),
            deadline_us: None,
            trace_id: None,
        })
        .await
        .expect("submit");
    assert!(
        store
            .admit_review(id, &NewStep::new("intake", "evidence"))
            .await
            .expect("admit")
    );
    superseded
}

fn id(review: &str, step: &str, key: &str) -> StepId {
    StepId {
        review_id: review.into(),
        step: step.into(),
        key: key.into(),
    }
}

async fn run(store: &Store, step: &StepId, owner: &str) -> proven_store::Lease {
    match store
        .claim(step, owner, 60_000_000, MAX_ATTEMPTS)
        .await
        .expect("claim")
    {
        Claim::Run(lease) => lease,
        other => panic!("expected to run {step:?}, got {other:?}"),
    }
}

async fn a_worker_whose_lease_was_taken_over_cannot_commit(backend: Backend) {
    let t = TestStore::new(backend).await;
    admitted(&t.store, "r1", None).await;
    let step = id("r1", "intake", "");
    // The first worker's lease expires at once (it is presumed dead)...
    let zombie = match t
        .store
        .claim(&step, "w1", 0, MAX_ATTEMPTS)
        .await
        .expect("claim")
    {
        Claim::Run(l) => l,
        other => panic!("{other:?}"),
    };
    // ...and a live lease is refused to anyone else.
    let live = run(&t.store, &step, "w2").await;
    assert_eq!(
        t.store
            .claim(&step, "w3", 60_000_000, MAX_ATTEMPTS)
            .await
            .expect("claim"),
        Claim::Busy
    );
    assert!(live.generation > zombie.generation);
    let late = Outcome {
        result: "\"late\"".into(),
        next: vec![NewStep::new("plan", "control")],
        ..Default::default()
    };
    assert_eq!(
        t.store.commit(&zombie, &late).await.expect("commit"),
        Committed::Conflict
    );
    assert!(!t.store.renew(&zombie, 1_000_000).await.expect("renew"));
    let fresh = Outcome {
        result: "\"fresh\"".into(),
        next: vec![NewStep::new("plan", "control")],
        ..Default::default()
    };
    assert!(matches!(
        t.store.commit(&live, &fresh).await.expect("commit"),
        Committed::Done { jobs: 1, .. }
    ));
    let steps = t.store.steps_of("r1").await.expect("steps");
    let intake = steps
        .iter()
        .find(|s| s.id.step == "intake")
        .expect("intake");
    assert_eq!(
        intake.result.as_deref(),
        Some("\"fresh\""),
        "the late result never lands"
    );
    assert_eq!(steps.len(), 2);
    // A redelivered job for a finished step does nothing.
    assert_eq!(
        t.store
            .claim(&step, "w4", 60_000_000, MAX_ATTEMPTS)
            .await
            .expect("claim"),
        Claim::Finished
    );
    t.cleanup().await;
}

async fn a_step_that_crashes_its_worker_three_times_is_dead_lettered(backend: Backend) {
    let t = TestStore::new(backend).await;
    admitted(&t.store, "r1", None).await;
    let step = id("r1", "intake", "");
    for attempt in 1..=3 {
        match t
            .store
            .claim(&step, "crashy", 0, MAX_ATTEMPTS)
            .await
            .expect("claim")
        {
            Claim::Run(l) => assert_eq!(l.attempt, attempt),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        t.store
            .claim(&step, "w", 60_000_000, MAX_ATTEMPTS)
            .await
            .expect("claim"),
        Claim::DeadLettered { attempts: 3 }
    );
    let steps = t.store.steps_of("r1").await.expect("steps");
    let dead = steps
        .iter()
        .find(|s| s.id.step == "intake")
        .expect("intake");
    assert_eq!((dead.state.as_str(), dead.attempts), ("dead", 3));
    assert!(
        steps.iter().any(|s| s.id.step == "judge"),
        "a dead review-level step sends the review to the judge"
    );
    assert_eq!(
        t.store
            .claim(&step, "w", 60_000_000, MAX_ATTEMPTS)
            .await
            .expect("claim"),
        Claim::Finished
    );
    t.cleanup().await;
}

async fn fan_out_then_fan_in_enqueues_the_judge_once(backend: Backend) {
    let t = TestStore::new(backend).await;
    admitted(&t.store, "r1", None).await;
    let lease = run(&t.store, &id("r1", "intake", ""), "w").await;
    let next: Vec<NewStep> = (0..3)
        .map(|i| NewStep {
            key: format!("p{i}"),
            pipeline: true,
            ..NewStep::new("check", "evidence")
        })
        .collect();
    t.store
        .commit(
            &lease,
            &Outcome {
                result: "{}".into(),
                next,
                ..Default::default()
            },
        )
        .await
        .expect("fan out");
    assert_eq!(
        t.store.drain_outbox(100).await.expect("drain").len(),
        4,
        "intake's own job and three pipelines"
    );
    let mut judged = 0;
    for i in 0..3 {
        let l = run(&t.store, &id("r1", "check", &format!("p{i}")), "w").await;
        let outcome = Outcome {
            result: "{}".into(),
            closes_pipeline: true,
            ..Default::default()
        };
        if let Committed::Done {
            judge_enqueued: true,
            ..
        } = t.store.commit(&l, &outcome).await.expect("commit")
        {
            judged += 1;
            assert_eq!(i, 2, "only the last pipeline enqueues the judge");
        }
    }
    assert_eq!(judged, 1);
    let jobs = t.store.drain_outbox(100).await.expect("drain");
    assert_eq!(jobs.iter().filter(|j| j.step == "judge").count(), 1);
    t.cleanup().await;
}

async fn a_newer_head_of_the_same_pull_request_cancels_pending_steps(backend: Backend) {
    let t = TestStore::new(backend).await;
    admitted(&t.store, "old", Some("acme/app#7")).await;
    let superseded = admitted(&t.store, "new", Some("acme/app#7")).await;
    assert_eq!(superseded, vec!["old".to_string()]);
    assert_eq!(
        t.store
            .claim(&id("old", "intake", ""), "w", 60_000_000, MAX_ATTEMPTS)
            .await
            .expect("claim"),
        Claim::Cancelled
    );
    assert!(matches!(
        t.store
            .claim(&id("new", "intake", ""), "w", 60_000_000, MAX_ATTEMPTS)
            .await
            .expect("claim"),
        Claim::Run(_)
    ));
    assert_eq!(
        t.store.review("old").await.expect("old").status,
        proven_store::ReviewStatus::Superseded
    );
    let jobs = t.store.drain_outbox(100).await.expect("drain");
    assert!(
        jobs.iter().all(|j| j.review_id == "new"),
        "the superseded review's jobs are gone: {jobs:?}"
    );
    t.cleanup().await;
}

async fn the_reconciler_re_enqueues_what_the_queue_lost(backend: Backend) {
    let t = TestStore::new(backend).await;
    admitted(&t.store, "r1", None).await;
    // The job was taken off the outbox (marked pushed as it was), then the queue lost it
    // (e.g. FLUSHALL).
    let jobs = t.store.drain_outbox(100).await.expect("drain");
    assert_eq!(jobs.len(), 1);
    assert_eq!(
        t.store
            .requeue_lost(60_000_000)
            .await
            .expect("recent push is trusted"),
        0
    );
    assert_eq!(t.store.requeue_lost(0).await.expect("stale push"), 1);
    assert_eq!(
        t.store
            .requeue_lost(0)
            .await
            .expect("already in the outbox"),
        0
    );
    assert_eq!(t.store.drain_outbox(100).await.expect("drain").len(), 1);
    // A running step whose lease expired (its worker died) is re-enqueued too.
    let _dead_worker = t
        .store
        .claim(&id("r1", "intake", ""), "w", 0, MAX_ATTEMPTS)
        .await
        .expect("claim");
    assert_eq!(
        t.store
            .requeue_lost(60_000_000)
            .await
            .expect("expired lease"),
        1
    );
    t.cleanup().await;
}

async fn judge_runs_exactly_once_under_concurrent_completion(backend: Backend) {
    use proptest::prelude::*;
    let t = TestStore::new(backend).await;
    let store = t.store.clone();
    let handle = tokio::runtime::Handle::current();
    let cases = std::sync::atomic::AtomicUsize::new(0);
    let config = ProptestConfig {
        cases: 24,
        ..ProptestConfig::default()
    };
    // Each case: N pipelines, committed by N concurrent tasks with random delays, some
    // commits replayed (a redelivered job), some by a zombie whose lease was taken over.
    proptest!(config, |(delays in proptest::collection::vec((0u64..4, any::<bool>(), any::<bool>()), 1..12))| {
        let case = cases.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let review = format!("r{case}");
        let store = store.clone();
        let judges = std::thread::scope(|s| {
            s.spawn(|| handle.block_on(async {
                admitted(&store, &review, None).await;
                let lease = run(&store, &id(&review, "intake", ""), "w").await;
                let next: Vec<NewStep> = (0..delays.len())
                    .map(|i| NewStep { key: format!("p{i}"), pipeline: true, ..NewStep::new("check", "evidence") })
                    .collect();
                store.commit(&lease, &Outcome { result: "{}".into(), next, ..Default::default() }).await.expect("fan out");
                let mut tasks = Vec::new();
                for (i, (delay, replay, zombie)) in delays.iter().copied().enumerate() {
                    let store = store.clone();
                    let step = id(&review, "check", &format!("p{i}"));
                    tasks.push(tokio::spawn(async move {
                        tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
                        let outcome = Outcome { result: "{}".into(), closes_pipeline: true, ..Default::default() };
                        if zombie {
                            let z = match store.claim(&step, "zombie", 0, MAX_ATTEMPTS).await.expect("claim") {
                                Claim::Run(l) => l,
                                other => panic!("{other:?}"),
                            };
                            let l = run(&store, &step, "live").await;
                            assert_eq!(store.commit(&z, &outcome).await.expect("zombie commit"), Committed::Conflict);
                            store.commit(&l, &outcome).await.expect("commit");
                        } else {
                            let l = run(&store, &step, "live").await;
                            store.commit(&l, &outcome).await.expect("commit");
                            if replay {
                                assert_eq!(store.commit(&l, &outcome).await.expect("replay"), Committed::Conflict);
                            }
                        }
                    }));
                }
                for task in tasks {
                    task.await.expect("task");
                }
                let steps = store.steps_of(&review).await.expect("steps");
                steps.iter().filter(|s| s.id.step == "judge").count()
            })).join().expect("thread")
        });
        prop_assert_eq!(judges, 1);
    });
    assert!(cases.load(std::sync::atomic::Ordering::SeqCst) >= 24);
    t.cleanup().await;
}

async fn a_review_past_its_deadline_is_judged_with_what_it_has(backend: Backend) {
    let t = TestStore::new(backend).await;
    t.store
        .submit_review(&NewPipelineReview {
            id: "late".into(),
            tenant_id: None,
            repository: "/repo".into(),
            base_rev: "a".into(),
            head_rev: "b".into(),
            priority: 0,
            batch_id: None,
            pr_key: None,
            request: "{}".into(),
            deadline_us: Some(proven_store::now_us() - 1),
            trace_id: None,
        })
        .await
        .expect("submit");
    assert!(
        t.store
            .admit_review("late", &NewStep::new("intake", "evidence"))
            .await
            .expect("admit")
    );
    let lease = run(&t.store, &id("late", "intake", ""), "w").await;
    let next = vec![NewStep {
        key: "slow".into(),
        pipeline: true,
        ..NewStep::new("check", "evidence")
    }];
    t.store
        .commit(
            &lease,
            &Outcome {
                result: "{}".into(),
                next,
                ..Default::default()
            },
        )
        .await
        .expect("fan out");
    // The pipeline never finishes; the deadline sends the review to the judge anyway, once.
    assert_eq!(t.store.judge_overdue().await.expect("overdue"), 1);
    assert_eq!(t.store.judge_overdue().await.expect("overdue again"), 0);
    let steps = t.store.steps_of("late").await.expect("steps");
    assert!(steps.iter().any(|s| s.id.step == "judge"));
    assert!(
        steps
            .iter()
            .any(|s| s.id.step == "check" && s.state == "queued"),
        "the judge will name it inconclusive"
    );
    // When the slow pipeline ends after all, no second judge appears.
    let l = run(&t.store, &id("late", "check", "slow"), "w").await;
    let done = Outcome {
        result: "{}".into(),
        closes_pipeline: true,
        ..Default::default()
    };
    assert_eq!(
        t.store.commit(&l, &done).await.expect("commit"),
        Committed::Done {
            judge_enqueued: false,
            jobs: 0
        }
    );
    t.cleanup().await;
}

async fn a_started_review_is_never_taken_by_admission(backend: Backend) {
    let t = TestStore::new(backend).await;
    let first = NewStep {
        key: "t1".into(),
        ..NewStep::new("sandbox.run", "sandbox")
    };
    t.store
        .start_review(
            &NewPipelineReview {
                id: "mine".into(),
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
            },
            &first,
        )
        .await
        .expect("start");
    // Running at once: an admission loop on the same store neither sees nor admits it.
    assert!(
        t.store
            .pending_reviews(10)
            .await
            .expect("pending")
            .is_empty()
    );
    assert!(
        !t.store
            .admit_review("mine", &NewStep::new("intake", "evidence"))
            .await
            .expect("admit")
    );
    assert_eq!(t.store.running_reviews().await.expect("running"), 1);
    let steps = t.store.steps_of("mine").await.expect("steps");
    assert_eq!(
        steps
            .iter()
            .map(|s| (s.id.step.as_str(), s.id.key.as_str(), s.state.as_str()))
            .collect::<Vec<_>>(),
        [("sandbox.run", "t1", "queued")]
    );
    // Its first job is in the outbox, ready to be pushed like an admitted review's.
    let jobs = t.store.drain_outbox(10).await.expect("outbox");
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0].queue, "sandbox");
    t.cleanup().await;
}

async fn a_rate_limit_spends_no_attempt_and_a_wait_no_deferral(backend: Backend) {
    let t = TestStore::new(backend).await;
    admitted(&t.store, "r", None).await;
    let step = id("r", "intake", "");
    let state = || async {
        let steps = t.store.steps_of("r").await.expect("steps");
        let attempts = steps[0].attempts;
        (attempts, t.store.deferrals(&step).await.expect("deferrals"))
    };
    for (spends, expect) in [
        (Retry::Deferral, (0, 1)),
        (Retry::Wait, (0, 1)),
        (Retry::Attempt, (1, 1)),
    ] {
        let lease = run(&t.store, &step, "w").await;
        assert!(
            t.store
                .retry_later(&lease, 0, spends, "later")
                .await
                .expect("retry")
        );
        assert_eq!(state().await, expect, "{spends:?}");
    }
    // Ten 429s in a row would have dead-lettered a step that spent attempts on them.
    for _ in 0..10 {
        let lease = run(&t.store, &step, "w").await;
        assert_eq!(lease.attempt, 2, "a rate limit is not an attempt");
        t.store
            .retry_later(&lease, 0, Retry::Deferral, "429")
            .await
            .expect("retry");
    }
    assert_eq!(state().await, (1, 11));
    t.cleanup().await;
}

fn tenant_review(id: &str, tenant: &str, pr: Option<&str>) -> NewPipelineReview {
    NewPipelineReview {
        id: id.into(),
        tenant_id: Some(tenant.into()),
        repository: "/repo".into(),
        base_rev: "a".into(),
        head_rev: "b".into(),
        priority: 0,
        batch_id: None,
        pr_key: pr.map(str::to_string),
        request: "{}".into(),
        deadline_us: None,
        trace_id: None,
    }
}

async fn a_tenant_over_its_cap_on_unfinished_reviews_is_refused_and_nothing_is_recorded(
    backend: Backend,
) {
    let t = TestStore::new(backend).await;
    let (acme, _) = t.store.create_tenant("acme", 4).await.expect("tenant");
    let (other, _) = t.store.create_tenant("other", 4).await.expect("tenant");
    for id in ["r1", "r2"] {
        t.store
            .submit_review_within(&tenant_review(id, &acme.id, None), 3)
            .await
            .expect("under the cap");
    }
    t.store
        .submit_review_within(&tenant_review("pr1", &acme.id, Some("acme/app#1")), 3)
        .await
        .expect("the third fills the cap");
    // Admitted (running) reviews are unfinished too.
    assert!(
        t.store
            .admit_review("r1", &NewStep::new("intake", "evidence"))
            .await
            .expect("admit")
    );
    let refused = t
        .store
        .submit_review_within(&tenant_review("r4", &acme.id, None), 3)
        .await
        .expect_err("over the cap");
    assert!(
        matches!(
            refused,
            proven_store::StoreError::QueueFull {
                unfinished: 3,
                requested: 1,
                limit: 3
            }
        ),
        "{refused:?}"
    );
    assert!(
        t.store.review("r4").await.is_err(),
        "a refused review is not recorded"
    );
    // A batch that does not fit is refused whole: no review of it and no batch.
    let batch: Vec<NewPipelineReview> = ["b1", "b2"]
        .iter()
        .map(|id| tenant_review(id, &acme.id, None))
        .collect();
    let refused = t
        .store
        .submit_batch("batch", &acme.id, &batch, 4)
        .await
        .expect_err("two more pass a cap of 4");
    assert!(
        matches!(
            refused,
            proven_store::StoreError::QueueFull { requested: 2, .. }
        ),
        "{refused:?}"
    );
    assert!(t.store.review("b1").await.is_err());
    assert!(t.store.batch("batch", &acme.id).await.is_err());
    // A new head of a pull request takes its old review's place: still within the cap.
    let superseded = t
        .store
        .submit_review_within(&tenant_review("pr1-v2", &acme.id, Some("acme/app#1")), 3)
        .await
        .expect("a superseding review replaces one");
    assert_eq!(superseded, ["pr1"]);
    // The cap is per tenant: another tenant is not affected.
    t.store
        .submit_review_within(&tenant_review("o1", &other.id, None), 3)
        .await
        .expect("another tenant's queue is its own");
    t.cleanup().await;
}

async fn revoked_and_rotated_tokens_stop_authenticating_and_listings_never_show_a_token(
    backend: Backend,
) {
    use proven_store::TokenCheck;
    let t = TestStore::new(backend).await;
    let (acme, first) = t.store.create_tenant("acme", 4).await.expect("tenant");
    let (_, bystander) = t.store.create_tenant("bystander", 4).await.expect("tenant");
    let first_id = match t.store.check_token(&first).await.expect("check") {
        TokenCheck::Valid { tenant, token_id } => {
            assert_eq!(tenant.id, acme.id);
            token_id
        }
        other => panic!("a new token authenticates: {other:?}"),
    };
    assert_eq!(
        first_id,
        proven_store::token_id(&proven_store::token_hash(&first))
    );
    // Rotation: a new token, and the old one revoked at once.
    let (second, info, revoked) = t.store.rotate_token("acme").await.expect("rotate");
    assert_eq!(revoked, std::slice::from_ref(&first_id));
    assert_ne!(second, first);
    assert_eq!(
        t.store.check_token(&first).await.expect("check"),
        TokenCheck::Revoked
    );
    assert!(matches!(
        t.store.check_token(&second).await.expect("check"),
        TokenCheck::Valid { .. }
    ));
    assert_eq!(
        t.store
            .check_token("pvn_never_issued")
            .await
            .expect("check"),
        TokenCheck::Unknown
    );
    // Revoking by id: an unknown id is named; the bystander's token keeps working.
    let e = t
        .store
        .revoke_tokens("acme", Some("tok_nope"))
        .await
        .expect_err("unknown token id");
    assert_eq!(
        e.to_string(),
        "live token tok_nope of tenant acme not found"
    );
    assert!(matches!(
        t.store.revoke_tokens("nobody", None).await,
        Err(proven_store::StoreError::NotFound(_))
    ));
    assert_eq!(
        t.store
            .revoke_tokens("acme", Some(&info.id))
            .await
            .expect("revoke"),
        std::slice::from_ref(&info.id)
    );
    assert_eq!(
        t.store.check_token(&second).await.expect("check"),
        TokenCheck::Revoked
    );
    assert!(
        t.store
            .tenant_for_token(&bystander)
            .await
            .expect("check")
            .is_some()
    );
    // The listing: every token by id with its dates, never a token.
    let listing = t.store.list_tenants().await.expect("list");
    assert_eq!(
        listing
            .iter()
            .map(|(t, _)| t.name.as_str())
            .collect::<Vec<_>>(),
        ["acme", "bystander"]
    );
    let tokens = &listing[0].1;
    assert_eq!(
        tokens.iter().map(|k| k.id.as_str()).collect::<Vec<_>>(),
        [first_id.as_str(), info.id.as_str()]
    );
    assert!(tokens.iter().all(|k| k.revoked_at.is_some()));
    assert!(listing[1].1.iter().all(|k| k.revoked_at.is_none()));
    let printed = format!("{listing:?}");
    for token in [&first, &second, &bystander] {
        assert!(!printed.contains(token.as_str()));
    }
    t.cleanup().await;
}

/// Draining marks a job pushed (its stale clock starts); a push that failed gives it back,
/// and the reconciler's next pass pushes it again without waiting for the clock.
async fn a_job_whose_push_failed_is_pushed_again_at_the_next_pass(backend: Backend) {
    let t = TestStore::new(backend).await;
    admitted(&t.store, "r1", None).await;
    let jobs = t.store.drain_outbox(100).await.expect("drain");
    assert_eq!(jobs.len(), 1);
    assert_eq!(
        t.store.requeue_lost(60_000_000).await.expect("fresh"),
        0,
        "a job drained a moment ago counts as pushed"
    );
    t.store.unpushed(&jobs).await.expect("given back");
    assert_eq!(
        t.store.requeue_lost(60_000_000).await.expect("given back"),
        1,
        "pushed again at once"
    );
    assert_eq!(t.store.drain_outbox(100).await.expect("drain").len(), 1);
    t.cleanup().await;
}

/// A step that starts nothing and ends its review (one statement on Postgres): a lease
/// taken over cannot commit it, the review ends with its result, and a review superseded
/// while the step ran stays superseded.
async fn a_step_that_ends_its_review_is_fenced_and_never_ends_a_superseded_one(backend: Backend) {
    let t = TestStore::new(backend).await;
    admitted(&t.store, "r1", None).await;
    let step = id("r1", "intake", "");
    let zombie = match t
        .store
        .claim(&step, "w1", 0, MAX_ATTEMPTS)
        .await
        .expect("claim")
    {
        Claim::Run(l) => l,
        other => panic!("{other:?}"),
    };
    let live = run(&t.store, &step, "w2").await;
    let ends = |result: &str| Outcome {
        result: "{}".into(),
        finish: Some((proven_store::ReviewStatus::Complete, result.into())),
        ..Default::default()
    };
    assert_eq!(
        t.store
            .commit(&zombie, &ends("\"late\""))
            .await
            .expect("commit"),
        Committed::Conflict
    );
    assert_eq!(
        t.store.review("r1").await.expect("r1").status,
        proven_store::ReviewStatus::Running,
        "a refused commit ends nothing"
    );
    assert_eq!(
        t.store
            .commit(&live, &ends("\"fresh\""))
            .await
            .expect("commit"),
        Committed::Done {
            judge_enqueued: false,
            jobs: 0
        }
    );
    let r1 = t.store.review("r1").await.expect("r1");
    assert_eq!(r1.status, proven_store::ReviewStatus::Complete);
    assert_eq!(r1.result.as_deref(), Some("\"fresh\""));
    assert_eq!(
        t.store
            .commit(&live, &ends("\"again\""))
            .await
            .expect("replay"),
        Committed::Conflict,
        "committed once"
    );

    admitted(&t.store, "old", Some("acme/app#9")).await;
    let running = run(&t.store, &id("old", "intake", ""), "w1").await;
    admitted(&t.store, "new", Some("acme/app#9")).await;
    assert!(matches!(
        t.store
            .commit(&running, &ends("\"old\""))
            .await
            .expect("commit"),
        Committed::Done { .. }
    ));
    let old = t.store.review("old").await.expect("old");
    assert_eq!(old.status, proven_store::ReviewStatus::Superseded);
    assert_eq!(old.result, None);
    t.cleanup().await;
}
