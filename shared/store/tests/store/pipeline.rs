//! The pipeline's invariants in the store: fenced commits, attempts, fan-in, supersede.

use proven_store::testing::{Backend, TestStore, pipeline_review};
use proven_store::{Claim, Committed, NewPipelineReview, NewStep, Outcome, Retry, StepId, Store};

proven_store::both_backends!(
    a_worker_whose_lease_was_taken_over_cannot_commit,
    a_step_that_ends_its_review_is_fenced_and_never_ends_a_superseded_one,
    steps_that_commit_together_share_a_transaction_each_fenced_on_its_own,
    a_step_whose_write_fails_fails_alone_among_those_committing_with_it,
    claims_that_arrive_together_get_each_the_answer_it_would_get_alone,
    leaves_that_commit_together_are_each_fenced_and_end_only_their_own_review,
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
    the_gauges_and_step_lookups_read_each_value_into_its_own_place,
);

const MAX_ATTEMPTS: i64 = 3;

async fn admitted(store: &Store, id: &str, pr: Option<&str>) -> Vec<String> {
    let superseded = store
        .submit_review(&NewPipelineReview {
            pr_key: pr.map(str::to_string),
            ..pipeline_review(id)
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
            deadline_us: Some(proven_store::now_us() - 1),
            ..pipeline_review("late")
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
        .start_review(&pipeline_review("mine"), &first)
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

/// The reads behind the gauges (depth per queue and state, the oldest queued step, running
/// reviews per tenant against its limit) and the lookups of a step and a review: each value
/// lands in its own place, on both backends.
async fn the_gauges_and_step_lookups_read_each_value_into_its_own_place(backend: Backend) {
    let t = TestStore::new(backend).await;
    let s = &t.store;
    let (tenant, _) = s.create_tenant("acme", 3).await.expect("tenant");
    s.submit_review(&tenant_review("mine", &tenant.id, None))
        .await
        .expect("submit");
    assert!(
        s.admit_review("mine", &NewStep::new("intake", "evidence"))
            .await
            .expect("admit")
    );
    admitted(s, "local", None).await;
    run(s, &id("local", "intake", ""), "w1").await;

    let mut depth = s.pipeline_depth().await.expect("depth");
    depth.sort();
    assert_eq!(
        depth,
        vec![
            ("evidence".to_string(), "queued".to_string(), 1),
            ("evidence".to_string(), "running".to_string(), 1),
        ]
    );
    let oldest = s.queue_oldest().await.expect("oldest");
    assert_eq!(oldest.len(), 1, "{oldest:?}");
    assert_eq!(oldest[0].0, "evidence");
    assert!(oldest[0].1 > 0, "a time in µs: {oldest:?}");
    assert_eq!(
        s.running_by_tenant().await.expect("running"),
        vec![(tenant.id.clone(), 1, 3)],
        "(tenant, running, limit)"
    );
    assert!(
        s.tried_before(&id("local", "intake", ""))
            .await
            .expect("tried")
    );
    assert!(
        !s.tried_before(&id("mine", "intake", ""))
            .await
            .expect("tried")
    );
    assert_eq!(
        s.review_request("mine").await.expect("request").as_deref(),
        Some("{}")
    );
    t.cleanup().await;
}

fn tenant_review(id: &str, tenant: &str, pr: Option<&str>) -> NewPipelineReview {
    NewPipelineReview {
        tenant_id: Some(tenant.into()),
        pr_key: pr.map(str::to_string),
        ..pipeline_review(id)
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

/// Claims the intake of `n` admitted reviews named `PREFIX0`..: their leases.
async fn claimed(store: &Store, prefix: &str, n: usize) -> Vec<proven_store::Lease> {
    let mut leases = Vec::new();
    for i in 0..n {
        let r = format!("{prefix}{i}");
        admitted(store, &r, None).await;
        leases.push(run(store, &id(&r, "intake", ""), "w1").await);
    }
    leases
}

/// Commits that arrive together (a worker's slots ending at once) share a transaction on
/// Postgres, and each is still its own commit: its result, next steps, outbox rows and trace
/// land; a review it ends ends; a lease taken over among them is refused alone.
async fn steps_that_commit_together_share_a_transaction_each_fenced_on_its_own(backend: Backend) {
    let t = TestStore::new(backend).await;
    let mut leases = claimed(&t.store, "g", 15).await;
    // g15's first worker is presumed dead (its lease expired at once) and another took the
    // step over: the first one's commit is a zombie's.
    admitted(&t.store, "g15", None).await;
    let step15 = id("g15", "intake", "");
    let zombie = match t
        .store
        .claim(&step15, "w0", 0, MAX_ATTEMPTS)
        .await
        .expect("claim")
    {
        Claim::Run(l) => l,
        other => panic!("{other:?}"),
    };
    let taken = run(&t.store, &step15, "w2").await;
    assert!(taken.generation > zombie.generation);
    leases.push(zombie);
    let outcome = |i: usize| -> Outcome {
        if i.is_multiple_of(2) {
            // Ends its review in one statement (a leaf).
            Outcome {
                result: format!("\"leaf {i}\""),
                finish: Some((proven_store::ReviewStatus::Complete, format!("\"end {i}\""))),
                ..Default::default()
            }
        } else {
            // Starts a step and writes its trace.
            Outcome {
                result: format!("\"step {i}\""),
                next: vec![NewStep::new("plan", "control")],
                trace: vec![("note".into(), serde_json::json!({ "i": i }))],
                run_id: format!("run-{i}"),
                ..Default::default()
            }
        }
    };
    let before = t.store.commit_batches();
    let commits = leases.iter().enumerate().map(|(i, lease)| {
        let store = t.store.clone();
        let lease = lease.clone();
        let outcome = outcome(i);
        async move { store.commit(&lease, &outcome).await }
    });
    let results = futures_util::future::join_all(commits).await;
    for (i, r) in results.iter().enumerate() {
        let r = r.as_ref().expect("commit");
        if i == 15 {
            assert_eq!(*r, Committed::Conflict, "the zombie's commit is refused");
        } else if i.is_multiple_of(2) {
            assert_eq!(
                *r,
                Committed::Done {
                    judge_enqueued: false,
                    jobs: 0
                },
                "g{i}"
            );
        } else {
            assert_eq!(
                *r,
                Committed::Done {
                    judge_enqueued: false,
                    jobs: 1
                },
                "g{i}"
            );
        }
    }
    if backend == Backend::Postgres {
        let batches = t.store.commit_batches() - before;
        assert!(
            (1..16).contains(&batches),
            "16 commits arriving together ran in {batches} batches"
        );
    }
    for i in 0..15_usize {
        let r = format!("g{i}");
        let review = t.store.review(&r).await.expect("review");
        let steps = t.store.steps_of(&r).await.expect("steps");
        let intake = steps
            .iter()
            .find(|s| s.id.step == "intake")
            .expect("intake");
        assert_eq!(intake.state, "done", "{r}");
        if i.is_multiple_of(2) {
            assert_eq!(
                intake.result.as_deref(),
                Some(format!("\"leaf {i}\"").as_str())
            );
            assert_eq!(review.status, proven_store::ReviewStatus::Complete, "{r}");
            assert_eq!(
                review.result.as_deref(),
                Some(format!("\"end {i}\"").as_str())
            );
        } else {
            assert_eq!(
                intake.result.as_deref(),
                Some(format!("\"step {i}\"").as_str())
            );
            assert_eq!(review.status, proven_store::ReviewStatus::Running, "{r}");
            assert!(
                steps
                    .iter()
                    .any(|s| s.id.step == "plan" && s.state == "queued"),
                "{r}"
            );
            let trace = t.store.trace(&r).await.expect("trace");
            assert_eq!(trace.len(), 1, "{r}: its trace line");
        }
    }
    // The zombie wrote nothing; the new holder still commits.
    let g15 = t.store.steps_of("g15").await.expect("steps");
    assert_eq!(
        g15.iter()
            .find(|s| s.id.step == "intake")
            .expect("intake")
            .state,
        "running"
    );
    assert!(t.store.trace("g15").await.expect("trace").is_empty());
    assert!(matches!(
        t.store.commit(&taken, &outcome(1)).await.expect("commit"),
        Committed::Done { jobs: 1, .. }
    ));
    // One outbox row per started step: 7 from the batch, 1 from g15's holder.
    let drained = t.store.drain_outbox(100).await.expect("drain");
    assert_eq!(drained.iter().filter(|j| j.step == "plan").count(), 8);
    t.cleanup().await;
}

/// A step whose write the database refuses (a NUL in its result, which Postgres text cannot
/// hold) among steps committing with it: the others commit, it alone gets the error, and
/// nothing of it is written.
async fn a_step_whose_write_fails_fails_alone_among_those_committing_with_it(backend: Backend) {
    let t = TestStore::new(backend).await;
    let leases = claimed(&t.store, "f", 8).await;
    let bad = 3;
    let commits = leases.iter().enumerate().map(|(i, lease)| {
        let store = t.store.clone();
        let lease = lease.clone();
        let outcome = Outcome {
            result: if i == bad {
                "\"nul \u{0} here\"".into()
            } else {
                format!("\"ok {i}\"")
            },
            next: vec![NewStep::new("plan", "control")],
            trace: vec![("note".into(), serde_json::json!({ "i": i }))],
            run_id: format!("run-{i}"),
            ..Default::default()
        };
        async move { store.commit(&lease, &outcome).await }
    });
    let results = futures_util::future::join_all(commits).await;
    for (i, r) in results.iter().enumerate() {
        let steps = t.store.steps_of(&format!("f{i}")).await.expect("steps");
        let intake = steps
            .iter()
            .find(|s| s.id.step == "intake")
            .expect("intake");
        if i == bad && backend == Backend::Postgres {
            let e = r.as_ref().expect_err("Postgres refuses a NUL in text");
            assert!(e.to_string().contains("0x00"), "the database's reason: {e}");
            assert_eq!(intake.state, "running", "nothing of it was written");
            assert!(!steps.iter().any(|s| s.id.step == "plan"));
            assert!(
                t.store
                    .trace(&format!("f{i}"))
                    .await
                    .expect("trace")
                    .is_empty()
            );
        } else {
            assert!(
                matches!(r, Ok(Committed::Done { jobs: 1, .. })),
                "f{i}: {r:?}"
            );
            assert_eq!(intake.state, "done", "f{i}");
            assert!(steps.iter().any(|s| s.id.step == "plan"), "f{i}");
        }
    }
    t.cleanup().await;
}

/// Claims that arrive together (a worker pops one job per free slot) are made in one
/// statement on Postgres, and each gets the answer it would get alone: due steps run with a
/// fresh lease, a step asked for twice runs once (the second ask finds it busy), a held
/// lease is busy, a finished step finished, a step tried before and delivered by a shared
/// queue is isolated, a missing step missing, a superseded review's step cancelled.
async fn claims_that_arrive_together_get_each_the_answer_it_would_get_alone(backend: Backend) {
    let t = TestStore::new(backend).await;
    for i in 0..6 {
        admitted(&t.store, &format!("c{i}"), None).await;
    }
    // c1: held by another worker; c2: finished; c3: tried before (its lease expired).
    let held = run(&t.store, &id("c1", "intake", ""), "other").await;
    let done = run(&t.store, &id("c2", "intake", ""), "other").await;
    assert!(matches!(
        t.store
            .commit(
                &done,
                &Outcome {
                    result: "1".into(),
                    ..Default::default()
                }
            )
            .await,
        Ok(Committed::Done { .. })
    ));
    match t
        .store
        .claim(&id("c3", "intake", ""), "other", 0, MAX_ATTEMPTS)
        .await
    {
        Ok(Claim::Run(_)) => {}
        other => panic!("{other:?}"),
    }
    // p-old: its review superseded by a newer head.
    admitted(&t.store, "p-old", Some("acme/app#1")).await;
    admitted(&t.store, "p-new", Some("acme/app#1")).await;
    let asks = [
        (id("c0", "intake", ""), true),
        (id("c0", "intake", ""), true),
        (id("c1", "intake", ""), true),
        (id("c2", "intake", ""), true),
        (id("c3", "intake", ""), true),
        (id("c4", "intake", ""), true),
        (id("c5", "intake", ""), false),
        (id("nope", "intake", ""), true),
        (id("p-old", "intake", ""), true),
    ];
    let before = t.store.claim_batches();
    let claims = asks.iter().map(|(step, shared)| {
        let store = t.store.clone();
        let step = step.clone();
        let shared = *shared;
        async move {
            store
                .claim_from(&step, "w1", 60_000_000, MAX_ATTEMPTS, shared)
                .await
        }
    });
    let got: Vec<Claim> = futures_util::future::join_all(claims)
        .await
        .into_iter()
        .map(|c| c.expect("claim"))
        .collect();
    if backend == Backend::Postgres {
        let batches = t.store.claim_batches() - before;
        assert!(
            (1..9).contains(&batches),
            "9 claims ran in {batches} batches"
        );
    }
    let ran: Vec<_> = got[..2]
        .iter()
        .filter(|c| matches!(c, Claim::Run(_)))
        .collect();
    assert_eq!(
        ran.len(),
        1,
        "a step asked for twice runs once: {:?}",
        &got[..2]
    );
    assert!(got[..2].contains(&Claim::Busy), "{:?}", &got[..2]);
    assert_eq!(got[2], Claim::Busy, "held by another worker");
    assert_eq!(got[3], Claim::Finished);
    assert_eq!(got[4], Claim::Isolated, "tried before, from a shared queue");
    let Claim::Run(c4) = &got[5] else {
        panic!("c4 is due: {:?}", got[5])
    };
    let Claim::Run(c5) = &got[6] else {
        panic!("c5 is due: {:?}", got[6])
    };
    assert_eq!(got[7], Claim::Missing);
    assert_eq!(got[8], Claim::Cancelled, "its review was superseded");
    // The leases are fresh and fence as any lease does.
    for lease in [c4, c5] {
        assert_eq!(lease.owner, "w1");
        assert_eq!(lease.attempt, 1);
        assert_eq!(lease.queue, "evidence");
        assert!(matches!(
            t.store
                .commit(
                    lease,
                    &Outcome {
                        result: "2".into(),
                        ..Default::default()
                    }
                )
                .await,
            Ok(Committed::Done { .. })
        ));
    }
    let Claim::Run(c0) = ran[0] else {
        unreachable!()
    };
    assert!(c0.generation > 0);
    // The holder of c1 was not disturbed.
    assert!(t.store.renew(&held, 1_000_000).await.expect("renew"));
    t.cleanup().await;
}

/// Steps that start nothing and write no trace (leaves), committing together: one statement
/// on Postgres, and still each fenced on its own (a zombie's refused), each review a leaf
/// ends ended with that leaf's result, a superseded review left superseded, and two leaves
/// of one review both written.
async fn leaves_that_commit_together_are_each_fenced_and_end_only_their_own_review(
    backend: Backend,
) {
    let t = TestStore::new(backend).await;
    let mut leases = claimed(&t.store, "l", 6).await;
    // l6: a zombie's lease (taken over).
    admitted(&t.store, "l6", None).await;
    let step6 = id("l6", "intake", "");
    let zombie = match t
        .store
        .claim(&step6, "w0", 0, MAX_ATTEMPTS)
        .await
        .expect("claim")
    {
        Claim::Run(l) => l,
        other => panic!("{other:?}"),
    };
    let taken = run(&t.store, &step6, "w2").await;
    leases.push(zombie);
    // l0 gets a second step running beside its intake: two leaves of one review.
    let first = leases[0].clone();
    assert!(matches!(
        t.store
            .commit(
                &first,
                &Outcome {
                    result: "0".into(),
                    next: vec![
                        NewStep::new("plan", "control"),
                        NewStep {
                            key: "b".into(),
                            ..NewStep::new("plan", "control")
                        }
                    ],
                    ..Default::default()
                }
            )
            .await,
        Ok(Committed::Done { jobs: 2, .. })
    ));
    leases[0] = run(&t.store, &id("l0", "plan", ""), "w1").await;
    let second = run(&t.store, &id("l0", "plan", "b"), "w1").await;
    // p-old: superseded while its step ran.
    admitted(&t.store, "p-old", Some("acme/app#2")).await;
    leases.push(run(&t.store, &id("p-old", "intake", ""), "w1").await);
    admitted(&t.store, "p-new", Some("acme/app#2")).await;
    let ends = |what: &str| Outcome {
        result: format!("\"{what}\""),
        finish: Some((
            proven_store::ReviewStatus::Complete,
            format!("\"end {what}\""),
        )),
        ..Default::default()
    };
    // Round one: leaves of different reviews (the first two of a burst take the two turns
    // alone; the rest, zombie and superseded review last, go in one statement).
    let mut round_one: Vec<(proven_store::Lease, Outcome)> = leases[1..]
        .iter()
        .map(|l| (l.clone(), ends(&l.id.review_id)))
        .collect();
    // Round two: two leaves of l0 (one only writes its result, the other ends the review)
    // after two others of their own reviews.
    let mut round_two = Vec::new();
    for r in ["l7", "l8"] {
        admitted(&t.store, r, None).await;
        round_two.push((run(&t.store, &id(r, "intake", ""), "w1").await, ends(r)));
    }
    round_two.push((
        leases[0].clone(),
        Outcome {
            result: "\"plan\"".into(),
            ..Default::default()
        },
    ));
    round_two.push((second, ends("l0")));
    let done = Committed::Done {
        judge_enqueued: false,
        jobs: 0,
    };
    for round in [&mut round_one, &mut round_two] {
        let before = t.store.commit_batches();
        let commits = round.iter().map(|(lease, outcome)| {
            let store = t.store.clone();
            async move { store.commit(lease, outcome).await }
        });
        let results = futures_util::future::join_all(commits).await;
        if backend == Backend::Postgres && round.len() > 4 {
            let batches = t.store.commit_batches() - before;
            // Two alone, then the rest of the burst (already waiting) together.
            assert!(
                batches < round.len() as u64,
                "{} leaves ran in {batches} batches",
                round.len()
            );
        }
        for ((lease, _), r) in round.iter().zip(&results) {
            let r = r.as_ref().expect("commit");
            if lease.id.review_id == "l6" {
                assert_eq!(*r, Committed::Conflict, "the zombie is refused");
            } else {
                assert_eq!(*r, done, "{:?}", lease.id);
            }
        }
    }
    for i in [1, 2, 3, 4, 5, 7, 8] {
        let r = t.store.review(&format!("l{i}")).await.expect("review");
        assert_eq!(r.status, proven_store::ReviewStatus::Complete);
        assert_eq!(r.result.as_deref(), Some(format!("\"end l{i}\"").as_str()));
    }
    let l0 = t.store.review("l0").await.expect("l0");
    assert_eq!(l0.result.as_deref(), Some("\"end l0\""));
    let steps = t.store.steps_of("l0").await.expect("steps");
    assert!(
        steps
            .iter()
            .filter(|s| s.id.step == "plan")
            .all(|s| s.state == "done"),
        "both leaves of l0 written"
    );
    assert_eq!(
        t.store.review("l6").await.expect("l6").status,
        proven_store::ReviewStatus::Running
    );
    assert!(matches!(
        t.store.commit(&taken, &ends("l6")).await,
        Ok(Committed::Done { .. })
    ));
    let old = t.store.review("p-old").await.expect("p-old");
    assert_eq!(old.status, proven_store::ReviewStatus::Superseded);
    assert_eq!(old.result, None);
    t.cleanup().await;
}

/// A Postgres store keeps at most the connections it was opened with
/// (`PROVEN_DATABASE_CONNECTIONS`), however many callers it has at once: 32 concurrent claims
/// and reads through a store of 2 never have more than 2 backends on its database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_store_keeps_at_most_its_connections() {
    let t = TestStore::new(Backend::Postgres).await;
    t.store.close().await;
    let store = Store::open_url_with(&t.url, 2).await.expect("open");
    let db = t.url.rsplit('/').next().expect("db").to_string();
    let mut admin = <sqlx::AnyConnection as sqlx::Connection>::connect(
        &proven_store::testing::postgres_admin_url(),
    )
    .await
    .expect("admin");
    for i in 0..32 {
        admitted(&store, &format!("r{i}"), None).await;
    }
    let work = (0..32).map(|i| {
        let store = store.clone();
        async move {
            let step = id(&format!("r{i}"), "intake", "");
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
