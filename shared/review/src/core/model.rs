//! Model access with the guardrail: the agents' model clients (the generator, the Skeptic's
//! other family, the optional second reviewer and the guardrail), and one guarded call that
//! every agent makes. Every prompt and every answer passes the guardrail (when on); its
//! verdicts and each call's usage are trace lines; a blocked prompt or answer stops the step
//! by name.

use crate::core::step_name::Name;
use std::sync::Arc;
use std::time::Duration;

use proven_config::Config;
use proven_models::{CallRecord, Cassette, ChatRequest, Endpoint, ModelClient, ModelError};
use proven_pipeline::StepError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::core::trace::Trace;

/// Who a model call speaks for: which client answers it, and the name the settings
/// (`models.second_reviewer`), the cassettes and the trace's `model_call` lines give it.
/// (The second reviewer's *step* is [`crate::core::step_name::StepName::SecondReviewer`], stored
/// as `second-reviewer`; its model role is `second_reviewer`, as configured and recorded.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Role {
    Generator,
    Skeptic,
    /// The coverage auditor: the Skeptic's twin adversary, on the other model family.
    Auditor,
    SecondReviewer,
    Guardrail,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The model clients of the agents.
pub struct Agents {
    generator: ModelClient,
    skeptic: ModelClient,
    guardrail: Option<ModelClient>,
    /// The second reviewer, when configured.
    second: Option<ModelClient>,
    /// Sample mode: model answers and sandbox runs recorded or replayed.
    cassette: Option<Arc<Cassette>>,
}

fn endpoint(m: &proven_config::ModelSettings, timeout: Duration) -> Endpoint {
    let mut e = Endpoint::new(m.base_url.clone(), m.model.clone());
    if !m.api_key.is_empty() {
        e.api_key = Some(m.api_key.clone().into());
    }
    e.timeout = timeout;
    e
}

impl Agents {
    pub fn from_config(config: &Config) -> Result<Agents, String> {
        Ok(Agents {
            generator: ModelClient::new(endpoint(&config.generator, config.model_timeout))?,
            skeptic: ModelClient::new(endpoint(&config.skeptic, config.model_timeout))?,
            guardrail: if config.guardrail {
                Some(ModelClient::new(endpoint(
                    &config.guardrail_model,
                    config.model_timeout,
                ))?)
            } else {
                None
            },
            second: config
                .second_reviewer
                .as_ref()
                .map(|m| ModelClient::new(endpoint(m, config.model_timeout)))
                .transpose()?,
            cassette: None,
        })
    }

    /// A second reviewer doubles the Planner.
    pub fn has_second_reviewer(&self) -> bool {
        self.second.is_some()
    }

    /// Records every answer and run to `cassette`, or replays them (sample mode).
    pub fn with_cassette(mut self, cassette: Arc<Cassette>) -> Agents {
        self.generator = self.generator.with_cassette(cassette.clone());
        self.skeptic = self.skeptic.with_cassette(cassette.clone());
        self.guardrail = self.guardrail.map(|g| g.with_cassette(cassette.clone()));
        self.second = self.second.map(|g| g.with_cassette(cassette.clone()));
        self.cassette = Some(cassette);
        self
    }

    pub fn cassette(&self) -> Option<&Arc<Cassette>> {
        self.cassette.as_ref()
    }
}

#[derive(Debug, Deserialize)]
struct GuardVerdict {
    #[serde(rename = "User Safety", alias = "user_safety", default)]
    user_safety: Option<String>,
    #[serde(rename = "Response Safety", alias = "response_safety", default)]
    response_safety: Option<String>,
}

fn model_error(role: Role, e: ModelError) -> StepError {
    match e {
        ModelError::RateLimited { retry_after, .. } => StepError::RateLimited {
            message: format!("{role} model is rate limited"),
            after: retry_after,
        },
        other => StepError::Permanent(format!("{role} model: {other}")),
    }
}

/// The guardrail's verdict on a role's prompt or answer, counted.
fn guard_verdict(role: Role, verdict: &'static str) {
    metrics::counter!(proven_pipeline::metrics_names::GUARDRAIL_VERDICTS_TOTAL,
        "role" => role.as_str(), "verdict" => verdict)
    .increment(1);
}

fn record_calls(trace: &mut Trace, records: &[CallRecord]) {
    for r in records {
        trace.push("model_call", serde_json::to_value(r).unwrap_or_default());
    }
}

impl Agents {
    /// One guarded call: the guardrail checks the prompt, the model answers in `T`'s shape,
    /// the guardrail checks the answer. Every call and verdict is a trace line.
    pub async fn ask<T: DeserializeOwned + Serialize>(
        &self,
        role: Role,
        system: &str,
        user: &str,
        trace: &mut Trace,
    ) -> Result<T, StepError> {
        self.ask_model(role, None, system, user, trace).await
    }

    /// [`Agents::ask`], with `model` (when given) asked at the role's endpoint instead of
    /// its configured model.
    pub(crate) async fn ask_model<T: DeserializeOwned + Serialize>(
        &self,
        role: Role,
        model: Option<&str>,
        system: &str,
        user: &str,
        trace: &mut Trace,
    ) -> Result<T, StepError> {
        let configured = match role {
            // The coverage auditor is the Skeptic's twin adversary: the other model family.
            Role::Skeptic | Role::Auditor => &self.skeptic,
            Role::SecondReviewer => self.second.as_ref().ok_or_else(|| {
                StepError::Permanent("no second reviewer is configured in this process".into())
            })?,
            Role::Generator | Role::Guardrail => &self.generator,
        };
        let other = model.map(|m| configured.with_model(m));
        let client = other.as_ref().unwrap_or(configured);
        self.guard(role, "prompt", user, trace).await?;
        let request = ChatRequest {
            role: role.as_str(),
            system: system.into(),
            user: user.into(),
            max_tokens: Some(4096),
            json: true,
        };
        // Parsed into `T` by the client, so an answer of the wrong shape is asked again
        // once with the error, like one that is not JSON at all.
        let (answer, records) = match client.chat_json::<T>(&request).await {
            Ok(x) => x,
            Err(e) => {
                record_calls(trace, &e.records());
                return Err(model_error(role, e));
            }
        };
        record_calls(trace, &records);
        // The guardrail reads what Proven will use: the parsed answer.
        let used = serde_json::to_string(&answer).unwrap_or_default();
        self.guard(role, "answer", &used, trace).await?;
        Ok(answer)
    }

    async fn guard(
        &self,
        role: Role,
        what: &str,
        text: &str,
        trace: &mut Trace,
    ) -> Result<(), StepError> {
        let Some(guardrail) = &self.guardrail else {
            return Ok(());
        };
        let request = ChatRequest {
            role: Role::Guardrail.as_str(),
            system: "You are a content-safety classifier. Classify the text between <text> and </text>. Answer \
                     only JSON: {\"User Safety\": \"safe\" or \"unsafe\", \"Safety Categories\": \"...\"}."
                .into(),
            user: format!("<text>{}</text>", serde_json::to_string(text).unwrap_or_default()),
            max_tokens: Some(256),
            json: true,
        };
        let (verdict, records) = guardrail
            .chat_json::<GuardVerdict>(&request)
            .await
            .map_err(|e| {
                record_calls(trace, &e.records());
                trace.push(
                    "guardrail",
                    json!({"role": role.as_str(), "checked": what, "verdict": "unavailable"}),
                );
                guard_verdict(role, "unavailable");
                model_error(Role::Guardrail, e)
            })?;
        record_calls(trace, &records);
        // Fails closed: an answer that names no verdict is not a "safe".
        if verdict.user_safety.is_none() && verdict.response_safety.is_none() {
            guard_verdict(role, "none given");
            trace.push(
                "guardrail",
                json!({"role": role.as_str(), "checked": what, "verdict": "none given"}),
            );
            return Err(StepError::Permanent(format!(
                "guardrail gave no verdict on the {role} {what} (neither \"User Safety\" nor \"Response Safety\")"
            )));
        }
        let safe = |v: &Option<String>| v.as_deref().is_none_or(|s| s.eq_ignore_ascii_case("safe"));
        let ok = safe(&verdict.user_safety) && safe(&verdict.response_safety);
        guard_verdict(role, if ok { "safe" } else { "unsafe" });
        trace.push(
            "guardrail",
            json!({"role": role.as_str(), "checked": what, "verdict": if ok { "safe" } else { "unsafe" }}),
        );
        if ok {
            Ok(())
        } else {
            Err(StepError::Permanent(format!(
                "guardrail blocked the {role} {what}"
            )))
        }
    }
}

/// Changed files a Planner's prompt lists at most (the rest are counted).
const MAX_LISTED_FILES: usize = 1000;

/// A value as one JSON string holding its JSON: data in a prompt that can never close the
/// tag around it.
pub fn quoted<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(&serde_json::to_string(value).unwrap_or_default()).unwrap_or_default()
}

/// The changed files as a Planner's prompt lists them: bounded.
pub(crate) fn changed_list(changed: &[String]) -> String {
    let shown = &changed[..changed.len().min(MAX_LISTED_FILES)];
    let more = changed.len() - shown.len();
    let list = serde_json::to_string(shown).unwrap_or_default();
    if more > 0 {
        format!("{list} (and {more} more)")
    } else {
        list
    }
}
