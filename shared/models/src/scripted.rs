//! A scripted OpenAI-compatible chat server for tests: the real client talks real HTTP to
//! it, and each rule says what to answer a model whose prompt contains some text.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Answer this JSON value as the message content.
    Json(Value),
    /// Answer this text as the message content (e.g. not JSON).
    Text(String),
    /// Answer with this HTTP status and no completion.
    Status(u16),
    /// 429 with `Retry-After: secs`.
    RateLimited(u64),
    /// 503 with `Retry-After: secs`.
    Unavailable(u64),
    /// Wait this long, then answer 500 (for client timeouts).
    Hang(Duration),
    /// Wait this long, then answer this JSON value (for what happens meanwhile).
    JsonAfter(Duration, Value),
}

struct Rule {
    model: Option<String>,
    contains: String,
    /// Consumed in order; the last one repeats.
    replies: VecDeque<Reply>,
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Received {
    pub model: String,
    pub messages: Vec<(String, String)>,
    pub authorization: Option<String>,
}

impl Received {
    /// Every message's content, joined.
    pub fn text(&self) -> String {
        self.messages
            .iter()
            .map(|(_, c)| c.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[derive(Default)]
struct Script {
    rules: Vec<Rule>,
    received: Vec<Received>,
}

#[derive(Clone)]
pub struct ScriptedServer {
    pub base_url: String,
    script: Arc<Mutex<Script>>,
}

impl ScriptedServer {
    /// Starts on a free port of 127.0.0.1; runs until the test's runtime ends.
    pub async fn start() -> ScriptedServer {
        let script = Arc::new(Mutex::new(Script::default()));
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(complete))
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind scripted server");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        ScriptedServer {
            base_url: format!("http://{addr}/v1"),
            script,
        }
    }

    /// When a request for `model` (any model if None) holds `contains` in any message,
    /// answer with `replies` in order (the last repeats). Earlier rules win.
    pub fn on(&self, model: Option<&str>, contains: &str, replies: Vec<Reply>) -> &Self {
        if let Ok(mut s) = self.script.lock() {
            s.rules.push(Rule {
                model: model.map(str::to_string),
                contains: contains.to_string(),
                replies: replies.into(),
            });
        }
        self
    }

    pub fn received(&self) -> Vec<Received> {
        self.script
            .lock()
            .map(|s| s.received.clone())
            .unwrap_or_default()
    }
}

async fn complete(
    State(script): State<Arc<Mutex<Script>>>,
    headers: axum::http::HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let model = body["model"].as_str().unwrap_or_default().to_string();
    let messages: Vec<(String, String)> = body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|x| {
                    (
                        x["role"].as_str().unwrap_or_default().to_string(),
                        x["content"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let received = Received {
        model: model.clone(),
        messages,
        authorization: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
    };
    let text = received.text();
    let reply = {
        let Ok(mut s) = script.lock() else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        s.received.push(received);
        let rule = s
            .rules
            .iter_mut()
            .find(|r| r.model.as_deref().is_none_or(|m| m == model) && text.contains(&r.contains));
        match rule {
            Some(rule) if rule.replies.len() > 1 => rule.replies.pop_front(),
            Some(rule) => rule.replies.front().cloned(),
            None => None,
        }
    };
    let content = match reply {
        None => {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("no script for model {model}"),
            )
                .into_response();
        }
        Some(Reply::Status(code)) => {
            return StatusCode::from_u16(code)
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
                .into_response();
        }
        Some(Reply::RateLimited(secs)) => {
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [("retry-after", secs.to_string())],
                "slow down",
            )
                .into_response();
        }
        Some(Reply::Unavailable(secs)) => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [("retry-after", secs.to_string())],
                "busy",
            )
                .into_response();
        }
        Some(Reply::Hang(d)) => {
            tokio::time::sleep(d).await;
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
        Some(Reply::JsonAfter(d, v)) => {
            tokio::time::sleep(d).await;
            v.to_string()
        }
        Some(Reply::Json(v)) => v.to_string(),
        Some(Reply::Text(t)) => t,
    };
    let prompt_tokens = (text.len() / 4) as u64;
    let completion_tokens = (content.len() / 4) as u64;
    Json(json!({
        "id": "scripted", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }))
    .into_response()
}
