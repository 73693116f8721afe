use std::time::{Duration, Instant};

use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};

/// Where one role's model is reached.
#[derive(Clone)]
pub struct Endpoint {
    /// Base URL of an OpenAI-compatible API, e.g. `https://integrate.api.nvidia.com/v1`.
    pub base_url: String,
    pub api_key: Option<SecretString>,
    pub model: String,
    pub timeout: Duration,
    /// Retries after a server error or a timeout (not after a rate limit).
    pub max_retries: u32,
    /// US dollars per million prompt and completion tokens (0 when unknown).
    pub prompt_cost_per_mtok: f64,
    pub completion_cost_per_mtok: f64,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("model", &self.model)
            .finish()
    }
}

impl Endpoint {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Endpoint {
        Endpoint {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            timeout: Duration::from_secs(120),
            max_retries: 2,
            prompt_cost_per_mtok: 0.0,
            completion_cost_per_mtok: 0.0,
        }
    }
}

/// One chat call: a system message and one user message.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// generator, skeptic, guardrail, second (a bounded metrics label).
    pub role: &'static str,
    pub system: String,
    pub user: String,
    pub max_tokens: Option<u32>,
    /// Ask for a JSON object (`response_format`).
    pub json: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// What one call cost and how it went: a trace line, never the prompt itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub role: String,
    pub requested_model: String,
    /// The model that answered, as the server says.
    pub model: Option<String>,
    pub usage: Usage,
    pub latency_ms: u64,
    pub cost_usd: f64,
    /// HTTP attempts this call made (retries included).
    pub attempts: u32,
    /// ok, rate_limited, unavailable, timeout, bad_answer.
    pub outcome: String,
    pub prompt_sha256: String,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum ModelError {
    /// The service said "too many requests": reschedule after `retry_after`, without
    /// spending an attempt.
    #[error("{role} model is rate limited; retry after {retry_after:?}")]
    RateLimited {
        role: String,
        retry_after: Duration,
        record: Box<CallRecord>,
    },
    /// Server errors, refused requests or an unreachable service, after retries.
    #[error("{role} model is unavailable: {message}")]
    Unavailable {
        role: String,
        message: String,
        record: Box<CallRecord>,
    },
    #[error("{role} model timed out after {after:?}")]
    Timeout {
        role: String,
        after: Duration,
        record: Box<CallRecord>,
    },
    /// The answer is not the requested JSON, even after being asked again with the error.
    #[error("{role} model's answer is not the requested JSON: {message}")]
    BadAnswer {
        role: String,
        message: String,
        records: Vec<CallRecord>,
    },
}

impl ModelError {
    /// Every call record the failure made (for the trace).
    pub fn records(&self) -> Vec<CallRecord> {
        match self {
            ModelError::RateLimited { record, .. }
            | ModelError::Unavailable { record, .. }
            | ModelError::Timeout { record, .. } => vec![(**record).clone()],
            ModelError::BadAnswer { records, .. } => records.clone(),
        }
    }
}

#[derive(Clone)]
pub struct ModelClient {
    http: reqwest::Client,
    endpoint: Endpoint,
    cassette: Option<std::sync::Arc<crate::Cassette>>,
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    model: Option<String>,
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
}

/// `Retry-After` as seconds (the HTTP-date form is rare from APIs; it falls back to 10 s).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    value
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::from_secs_f64(s.min(3600.0)))
}

/// The JSON object in an answer, tolerating a Markdown code fence around it.
fn json_text(answer: &str) -> &str {
    let t = answer.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .unwrap_or(t);
    t.strip_suffix("```").unwrap_or(t).trim()
}

impl ModelClient {
    pub fn new(endpoint: Endpoint) -> Result<ModelClient, String> {
        crate::install_crypto();
        let http = reqwest::Client::builder()
            .timeout(endpoint.timeout)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("HTTP client for {}: {e}", endpoint.base_url))?;
        Ok(ModelClient {
            http,
            endpoint,
            cassette: None,
        })
    }

    /// Records every answer to `cassette`, or answers from it with no network (sample mode).
    pub fn with_cassette(mut self, cassette: std::sync::Arc<crate::Cassette>) -> ModelClient {
        self.cassette = Some(cassette);
        self
    }

    /// The same endpoint, key and cassette, asking for another model (the autofix
    /// attempt's `autofix_generator`).
    pub fn with_model(&self, model: &str) -> ModelClient {
        let mut other = self.clone();
        other.endpoint.model = model.to_string();
        other
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn record(
        &self,
        req: &ChatRequest,
        started: Instant,
        attempts: u32,
        outcome: &str,
    ) -> CallRecord {
        CallRecord {
            role: req.role.to_string(),
            requested_model: self.endpoint.model.clone(),
            model: None,
            usage: Usage::default(),
            latency_ms: started.elapsed().as_millis() as u64,
            cost_usd: 0.0,
            attempts,
            outcome: outcome.to_string(),
            prompt_sha256: hex::encode(Sha256::digest(
                format!("{}\n{}", req.system, req.user).as_bytes(),
            )),
        }
    }

    /// One chat call with retries (server errors, timeouts); a rate limit returns at once.
    pub async fn chat(&self, req: &ChatRequest) -> Result<(String, CallRecord), ModelError> {
        self.chat_messages(req, &[]).await
    }

    async fn chat_messages(
        &self,
        req: &ChatRequest,
        extra: &[(&str, String)],
    ) -> Result<(String, CallRecord), ModelError> {
        let Some(cassette) = &self.cassette else {
            return self.chat_http(req, extra).await;
        };
        let mut digest = Sha256::new();
        for part in [req.system.as_str(), req.user.as_str()]
            .into_iter()
            .chain(extra.iter().map(|(_, c)| c.as_str()))
        {
            digest.update(part.as_bytes());
            digest.update([0]);
        }
        let key = hex::encode(digest.finalize());
        match cassette.mode() {
            crate::CassetteMode::Replay => {
                let started = Instant::now();
                let mut record = self.record(req, started, 0, "replayed");
                match cassette
                    .get("model", req.role, &key)
                    .and_then(|v| v.as_str().map(str::to_string))
                {
                    Some(answer) => {
                        record.model = Some(format!("{} (sample)", self.endpoint.model));
                        Ok((answer, record))
                    }
                    None => {
                        record.outcome = "unavailable".into();
                        Err(ModelError::Unavailable {
                            role: req.role.to_string(),
                            message: format!(
                                "sample mode: the cassette has no answer for this {} prompt ({key})",
                                req.role
                            ),
                            record: Box::new(record),
                        })
                    }
                }
            }
            crate::CassetteMode::Record => {
                let (answer, record) = self.chat_http(req, extra).await?;
                if let Err(e) = cassette.put(
                    "model",
                    req.role,
                    &key,
                    &serde_json::Value::String(answer.clone()),
                ) {
                    tracing::warn!(error = %e, "could not record an answer");
                }
                Ok((answer, record))
            }
        }
    }

    /// The chat completion request: the system and user messages, any further turns, no
    /// sampling temperature, and the token cap and JSON mode when asked.
    fn chat_body(&self, req: &ChatRequest, extra: &[(&str, String)]) -> serde_json::Value {
        let mut messages = vec![
            json!({"role": "system", "content": req.system}),
            json!({"role": "user", "content": req.user}),
        ];
        for (role, content) in extra {
            messages.push(json!({"role": role, "content": content}));
        }
        let mut body =
            json!({"model": self.endpoint.model, "messages": messages, "temperature": 0});
        if let Some(max) = req.max_tokens {
            body["max_tokens"] = json!(max);
        }
        if req.json {
            body["response_format"] = json!({"type": "json_object"});
        }
        body
    }

    /// A successful response read as the answer's text, its usage and cost recorded.
    async fn answer(
        &self,
        req: &ChatRequest,
        started: Instant,
        attempt: u32,
        response: reqwest::Response,
    ) -> Result<(String, CallRecord), ModelError> {
        let role = req.role.to_string();
        let parsed: Result<Completion, _> = response.json().await;
        let mut record = self.record(req, started, attempt, "ok");
        let completion = match parsed {
            Ok(c) => c,
            Err(e) => {
                record.outcome = "bad_answer".into();
                self.count(&record);
                return Err(ModelError::BadAnswer {
                    role,
                    message: format!("not a chat completion: {e}"),
                    records: vec![record],
                });
            }
        };
        record.model = completion.model.clone();
        record.usage = completion.usage.unwrap_or_default();
        record.cost_usd = (record.usage.prompt_tokens as f64 * self.endpoint.prompt_cost_per_mtok
            + record.usage.completion_tokens as f64 * self.endpoint.completion_cost_per_mtok)
            / 1_000_000.0;
        self.count(&record);
        let Some(text) = completion
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
        else {
            record.outcome = "bad_answer".into();
            return Err(ModelError::BadAnswer {
                role,
                message: "the answer has no content".into(),
                records: vec![record],
            });
        };
        Ok((text, record))
    }

    async fn chat_http(
        &self,
        req: &ChatRequest,
        extra: &[(&str, String)],
    ) -> Result<(String, CallRecord), ModelError> {
        let started = Instant::now();
        let url = format!(
            "{}/chat/completions",
            self.endpoint.base_url.trim_end_matches('/')
        );
        let body = self.chat_body(req, extra);
        let role = req.role.to_string();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut request = self.http.post(&url).json(&body);
            if let Some(key) = &self.endpoint.api_key {
                request = request.bearer_auth(key.expose_secret());
            }
            let outcome = request.send().await;
            let backoff = Duration::from_millis(250 * 2u64.pow(attempt.min(4)));
            let response = match outcome {
                Ok(r) => r,
                Err(e) => {
                    let timed_out = e.is_timeout();
                    if attempt <= self.endpoint.max_retries {
                        tokio::time::sleep(backoff).await;
                        continue;
                    }
                    let record = Box::new(self.record(
                        req,
                        started,
                        attempt,
                        if timed_out { "timeout" } else { "unavailable" },
                    ));
                    self.count(&record);
                    return Err(if timed_out {
                        ModelError::Timeout {
                            role,
                            after: self.endpoint.timeout,
                            record,
                        }
                    } else {
                        // The error text may hold the URL, never the key.
                        ModelError::Unavailable {
                            role,
                            message: e.without_url().to_string(),
                            record,
                        }
                    });
                }
            };
            let status = response.status();
            if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
                let wait = retry_after(response.headers()).unwrap_or(Duration::from_secs(10));
                let record = Box::new(self.record(req, started, attempt, "rate_limited"));
                self.count(&record);
                return Err(ModelError::RateLimited {
                    role,
                    retry_after: wait,
                    record,
                });
            }
            if status.is_server_error() {
                if attempt <= self.endpoint.max_retries {
                    let wait = retry_after(response.headers())
                        .unwrap_or(backoff)
                        .min(Duration::from_secs(30));
                    tokio::time::sleep(wait).await;
                    continue;
                }
                let record = Box::new(self.record(req, started, attempt, "unavailable"));
                self.count(&record);
                return Err(ModelError::Unavailable {
                    role,
                    message: format!("HTTP {status} after {attempt} attempts"),
                    record,
                });
            }
            if !status.is_success() {
                let text = response.text().await.unwrap_or_default();
                let record = Box::new(self.record(req, started, attempt, "unavailable"));
                self.count(&record);
                let snippet: String = text.chars().take(300).collect();
                return Err(ModelError::Unavailable {
                    role,
                    message: format!("HTTP {status}: {snippet}"),
                    record,
                });
            }
            return self.answer(req, started, attempt, response).await;
        }
    }

    /// A call whose answer must be a JSON value of type `T`. An answer that does not parse
    /// is asked again once, with the parse error; a second failure is a named error.
    pub async fn chat_json<T: DeserializeOwned>(
        &self,
        req: &ChatRequest,
    ) -> Result<(T, Vec<CallRecord>), ModelError> {
        let (first, record) = self.chat(req).await?;
        let mut records = vec![record];
        let error = match serde_json::from_str::<T>(json_text(&first)) {
            Ok(value) => return Ok((value, records)),
            Err(e) => e.to_string(),
        };
        let retry = [
            ("assistant", first.chars().take(4000).collect::<String>()),
            (
                "user",
                format!(
                    "That answer is not the requested JSON ({error}). Answer again with only the JSON object."
                ),
            ),
        ];
        let (second, record) = match self.chat_messages(req, &retry).await {
            Ok(x) => x,
            Err(e) => {
                let mut all = records;
                all.extend(e.records());
                return Err(match e {
                    ModelError::BadAnswer { role, message, .. } => ModelError::BadAnswer {
                        role,
                        message,
                        records: all,
                    },
                    other => other,
                });
            }
        };
        records.push(record);
        serde_json::from_str::<T>(json_text(&second))
            .map(|v| (v, records.clone()))
            .map_err(|e| {
                if let Some(last) = records.last_mut() {
                    last.outcome = "bad_answer".into();
                }
                ModelError::BadAnswer {
                    role: req.role.to_string(),
                    message: e.to_string(),
                    records,
                }
            })
    }

    fn count(&self, record: &CallRecord) {
        // The model id is the operator's configuration (or a repository's
        // `autofix_generator`, checked as a model id): a bounded label.
        let (role, model) = (record.role.clone(), self.endpoint.model.clone());
        let tenant = crate::tenant_label();
        metrics::counter!("proven_model_calls_total", "role" => role.clone(), "model" => model.clone(), "tenant" => tenant.clone(), "outcome" => record.outcome.clone()).increment(1);
        metrics::counter!("proven_model_tokens_total", "role" => role.clone(), "model" => model.clone(), "tenant" => tenant.clone(), "kind" => "prompt")
            .increment(record.usage.prompt_tokens);
        metrics::counter!("proven_model_tokens_total", "role" => role.clone(), "model" => model.clone(), "tenant" => tenant.clone(), "kind" => "completion")
            .increment(record.usage.completion_tokens);
        metrics::histogram!("proven_model_call_duration_seconds", "role" => role.clone(), "model" => model.clone())
            .record(record.latency_ms as f64 / 1000.0);
        // A histogram, so its `_sum` is the money spent (counters only count integers).
        metrics::histogram!("proven_model_call_cost_usd", "role" => role, "model" => model)
            .record(record.cost_usd);
    }
}
