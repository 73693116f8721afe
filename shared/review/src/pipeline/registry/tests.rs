//! The registry's own tests: a step that exists only here is registered in one line and
//! runs through the real dispatch, an agent's shape included.

use proven_config::Layers;
use proven_pipeline::{Lease, NewStep, Outcome, StepError, Steps};
use proven_report::RevisionRef;
use proven_store::testing::{Backend, TestStore};
use proven_store::{StepId, Store};

use super::*;
use crate::core::outcome::{Next, outcome, to_json};
use crate::core::rows::{claimed, start_test_review, step_result};
use crate::core::step::ReviewStep;
use crate::core::trace::Trace;
use crate::core::wire::IntakeResult;
use crate::pipeline::ReviewSteps;

const ECHO: &str = "test.echo";
const AFTER: &str = "test.after";
const BROKEN: &str = "test.broken";

/// A step that exists only in this test, with an agent step's shape: it is handed its
/// review (the intake's repository and changed files, as every agent step is) and hands
/// over to its successor by name.
async fn echo(s: &ReviewStep<'_>, lease: &Lease) -> Result<Outcome, StepError> {
    let view = s.view;
    let mut trace = Trace::new("echo");
    trace.push("echo", serde_json::json!({"key": lease.id.key}));
    let seen = format!("{} {} {:?}", view.repository_dir, view.head, view.changed);
    let next = vec![NewStep::new(AFTER, "model")];
    Ok(outcome(trace, to_json(&seen)?, next, false))
}

/// Its successor: reads what `echo` recorded and closes the pipeline.
async fn after(s: &ReviewStep<'_>, _: &Lease) -> Result<Outcome, StepError> {
    let echoed: String = step_result(s.rows, ECHO, "k1").unwrap_or_default();
    let next = vec![Next::then(StepName::Judge)];
    Ok(outcome(
        Trace::new("after"),
        to_json(&format!("after {echoed}"))?,
        next,
        true,
    ))
}

/// A model call that fails: an agent step's trace is kept all the same.
async fn broken(_: &ReviewStep<'_>, _: &Lease) -> Result<Outcome, StepError> {
    crate::core::trace::Trace::new("broken").push("model_call", serde_json::json!({"tokens": 7}));
    Err(StepError::Permanent("the model answered nothing".into()))
}

fn review_steps(store: &Store) -> ReviewSteps {
    let layers = Layers::default();
    let sources = proven_source::Sources::cli(&layers.resolve().expect("settings"));
    ReviewSteps::new(store.clone(), layers, sources)
}

/// A review whose intake is done (hand-built), handing over to `first`.
async fn review_after_intake(store: &Store, first: &str) {
    let start = NewStep::new(StepName::Intake.as_str(), "evidence");
    start_test_review(store, &start).await;
    let intake = IntakeResult {
        repository_dir: "/repo".into(),
        base: RevisionRef::new("a", "a1"),
        head: RevisionRef::new("b", "b1"),
        facts: vec![crate::core::wire::FileFacts {
            path: "calc.py".into(),
            old_path: None,
            executable: false,
            shebang: Some(false),
            pure_rename: false,
            binary: false,
        }],
        changed_paths: Vec::new(),
        left_out: Vec::new(),
        truncated: false,
        config: None,
        input_errors: Vec::new(),
        resolve_before: None,
        head_committed_at: None,
    };
    let done = Outcome {
        result: to_json(&intake).expect("intake"),
        next: vec![NewStep {
            key: "k1".into(),
            ..NewStep::new(first, "model")
        }],
        ..Default::default()
    };
    let lease = claimed(store, StepName::Intake.as_str(), "").await;
    store.commit(&lease, &done).await.expect("intake commits");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_registered_in_one_line_runs_by_its_name_and_its_successor_after_it() {
    let test = TestStore::new(Backend::Sqlite).await;
    let store = &test.store;
    review_after_intake(store, ECHO).await;
    let unregistered = review_steps(store);
    let unclaimed = Lease {
        id: StepId {
            review_id: "r".into(),
            step: ECHO.into(),
            key: "k1".into(),
        },
        queue: "model".into(),
        generation: 1,
        attempt: 1,
        owner: "test".into(),
        input: None,
        pipeline: false,
    };
    let unknown = unregistered.run(&unclaimed).await;
    assert!(
        matches!(&unknown, Err(StepError::Permanent(m)) if m.contains("unknown step")),
        "not registered yet: {unknown:?}"
    );
    // The one line each: the step's own module (the fns above) does the rest.
    let steps = review_steps(store)
        .with_step(ECHO, Handler::agent(run!(echo)))
        .with_step(AFTER, Handler::agent(run!(after)));
    let lease = claimed(store, ECHO, "k1").await;
    let out = steps.run(&lease).await.expect("echo runs");
    store.commit(&lease, &out).await.expect("echo commits");
    // Its successor was created by name, runs by the same dispatch, and reads its output.
    let lease = claimed(store, AFTER, "").await;
    let out = steps.run(&lease).await.expect("after runs");
    store.commit(&lease, &out).await.expect("after commits");
    let rows = store.steps_of("r").await.expect("rows");
    let recorded: Option<String> = step_result(&rows, AFTER, "");
    assert_eq!(
        recorded.as_deref(),
        Some("after /repo b1 [\"calc.py\"]"),
        "the step saw its review, and its output was recorded for its successor"
    );
    assert!(
        rows.iter().any(|r| r.id.step == StepName::Judge),
        "the successor handed over to the judge by name"
    );
    test.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_step_that_fails_keeps_its_trace_with_the_error() {
    let test = TestStore::new(Backend::Sqlite).await;
    let store = &test.store;
    review_after_intake(store, BROKEN).await;
    let steps = review_steps(store).with_step(BROKEN, Handler::agent(run!(broken)));
    let lease = claimed(store, BROKEN, "k1").await;
    let failed = steps.run(&lease).await;
    assert!(matches!(failed, Err(StepError::Permanent(_))), "{failed:?}");
    let trace = store.trace("r").await.expect("trace");
    let kinds: Vec<&str> = trace.iter().map(|e| e.kind.as_str()).collect();
    assert!(kinds.contains(&"model_call"), "{kinds:?}");
    assert!(kinds.contains(&"step_failed"), "{kinds:?}");
    test.cleanup().await;
}

#[test]
fn every_step_name_is_registered_once() {
    let registry = builtin();
    assert_eq!(registry.len(), StepName::ALL.len());
    for step in StepName::ALL {
        assert!(registry.contains_key(&step), "{step} is not registered");
    }
}
