//! The client over real HTTP against the scripted server.

use std::time::Duration;

use proven_models::scripted::{Reply, ScriptedServer};
use proven_models::{ChatRequest, Endpoint, ModelClient, ModelError};
use serde::Deserialize;
use serde_json::json;

fn req(user: &str) -> ChatRequest {
    ChatRequest {
        role: "generator",
        system: "You answer JSON.".into(),
        user: user.into(),
        max_tokens: None,
        json: true,
    }
}

fn client(server: &ScriptedServer, model: &str) -> ModelClient {
    client_with_timeout(server, model, Duration::from_secs(10))
}

/// A generous timeout everywhere but where the timeout is what is tested: a loaded CI
/// machine must not turn a slow local answer into a retry and change the counts.
fn client_with_timeout(server: &ScriptedServer, model: &str, timeout: Duration) -> ModelClient {
    let mut e = Endpoint::new(server.base_url.clone(), model);
    e.api_key = Some("sk-test-secret".to_string().into());
    e.timeout = timeout;
    e.prompt_cost_per_mtok = 1.0;
    e.completion_cost_per_mtok = 2.0;
    ModelClient::new(e).expect("client")
}

#[derive(Debug, Deserialize, PartialEq)]
struct Answer {
    risks: Vec<String>,
}

#[tokio::test]
async fn json_answers_parse_and_calls_are_recorded() {
    let s = ScriptedServer::start().await;
    s.on(
        None,
        "plan",
        vec![Reply::Json(json!({"risks": ["overflow"]}))],
    );
    let (answer, records) = client(&s, "meta/llama-3.3")
        .chat_json::<Answer>(&req("plan this"))
        .await
        .expect("answer");
    assert_eq!(
        answer,
        Answer {
            risks: vec!["overflow".into()]
        }
    );
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(
        (r.outcome.as_str(), r.model.as_deref(), r.attempts),
        ("ok", Some("meta/llama-3.3"), 1)
    );
    assert!(r.usage.prompt_tokens > 0 && r.cost_usd > 0.0);
    assert_eq!(
        s.received()[0].authorization.as_deref(),
        Some("Bearer sk-test-secret")
    );
    assert!(
        !format!("{:?}", client(&s, "x").endpoint()).contains("sk-test-secret"),
        "keys never print"
    );
}

#[tokio::test]
async fn an_answer_that_is_not_json_is_asked_again_once_with_the_error_then_named() {
    let s = ScriptedServer::start().await;
    s.on(
        None,
        "not the requested JSON",
        vec![Reply::Json(json!({"risks": []}))],
    );
    s.on(
        None,
        "fix me",
        vec![Reply::Text("Sure! Here are the risks: none".into())],
    );
    let (answer, records) = client(&s, "m")
        .chat_json::<Answer>(&req("fix me"))
        .await
        .expect("second answer parses");
    assert_eq!(answer.risks.len(), 0);
    assert_eq!(records.len(), 2);
    assert!(
        s.received()[1].text().contains("not the requested JSON"),
        "the retry carries the parse error"
    );

    let s = ScriptedServer::start().await;
    s.on(None, "", vec![Reply::Json(json!({"wrong": "shape"}))]);
    let err = client(&s, "m")
        .chat_json::<Answer>(&req("x"))
        .await
        .expect_err("wrong shape twice");
    assert!(
        matches!(&err, ModelError::BadAnswer { records, .. } if records.len() == 2),
        "{err:?}"
    );
    assert!(err.to_string().contains("not the requested JSON"));
}

#[tokio::test]
async fn server_errors_are_retried_then_named_and_timeouts_are_named() {
    let s = ScriptedServer::start().await;
    s.on(
        None,
        "",
        vec![
            Reply::Status(500),
            Reply::Status(502),
            Reply::Json(json!({"risks": ["x"]})),
        ],
    );
    let (answer, records) = client(&s, "m")
        .chat_json::<Answer>(&req("x"))
        .await
        .expect("third try works");
    assert_eq!(answer.risks, vec!["x".to_string()]);
    assert_eq!(records[0].attempts, 3);

    let s = ScriptedServer::start().await;
    s.on(None, "", vec![Reply::Status(500)]);
    let err = client(&s, "m")
        .chat(&req("x"))
        .await
        .expect_err("always 500");
    assert!(
        matches!(&err, ModelError::Unavailable { record, .. } if record.attempts == 3),
        "{err:?}"
    );

    let s = ScriptedServer::start().await;
    s.on(None, "", vec![Reply::Hang(Duration::from_secs(5))]);
    let err = client_with_timeout(&s, "m", Duration::from_millis(800))
        .chat(&req("x"))
        .await
        .expect_err("hangs");
    assert!(matches!(err, ModelError::Timeout { .. }), "{err:?}");
}

#[tokio::test]
async fn a_rate_limit_comes_back_at_once_with_its_retry_after() {
    let s = ScriptedServer::start().await;
    s.on(None, "", vec![Reply::RateLimited(7)]);
    let started = std::time::Instant::now();
    let err = client(&s, "m").chat(&req("x")).await.expect_err("429");
    assert!(
        // A retry in place would wait the 7 s the service asked for.
        started.elapsed() < Duration::from_secs(5),
        "not retried in place"
    );
    assert!(
        matches!(err, ModelError::RateLimited { retry_after, .. } if retry_after == Duration::from_secs(7))
    );
    assert_eq!(s.received().len(), 1);
}

#[tokio::test]
async fn a_server_error_is_retried_after_the_time_it_asks_for() {
    let s = ScriptedServer::start().await;
    s.on(
        None,
        "",
        vec![
            Reply::Unavailable(2),
            Reply::Json(json!({"risks": ["late"]})),
        ],
    );
    let started = std::time::Instant::now();
    let (answer, records) = client(&s, "m")
        .chat_json::<Answer>(&req("x"))
        .await
        .expect("the second try answers");
    assert_eq!(answer.risks, ["late"]);
    assert_eq!(records[0].attempts, 2);
    // The first backoff alone would be 0.5 s: the wait came from Retry-After.
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}
