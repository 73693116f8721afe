//! One client for any OpenAI-compatible chat API (NVIDIA's API, a gateway, vLLM, Ollama).
//!
//! Owns: endpoints per role ([`Endpoint`]), the HTTP client ([`ModelClient`]) with timeouts
//! and retries that honour `Retry-After`, strict JSON answers ([`ModelClient::chat_json`]:
//! an answer that does not parse is asked again once with the parse error, then it is a
//! named [`ModelError::BadAnswer`]), and the record of every call ([`CallRecord`]: model,
//! tokens, latency, cost) for the trace and the metrics. Model families
//! (`proven_config::model_family`) let configuration refuse a Skeptic of the generator's family.
//!
//! Invariants:
//! - A rate-limited call is never retried here past its `Retry-After`: it comes back as
//!   [`ModelError::RateLimited`] so the step is rescheduled without spending an attempt.
//! - Nothing in an answer is executed; answers are data parsed against a schema.
//! - API keys are secrets: never logged, never in errors or traces.

mod cassette;
mod client;
#[cfg(feature = "testing")]
pub mod scripted;

pub use cassette::{Cassette, CassetteError, CassetteMode};
pub use client::{CallRecord, ChatRequest, Endpoint, ModelClient, ModelError, Usage};

tokio::task_local! {
    /// The tenant whose review makes the calls of the task (set by the step that runs them).
    static TENANT: String;
}

/// Runs `f` with its model calls counted by `tenant` (the tenant's id, or `""` for the
/// embedded default; the operator creates tenants, so the label is bounded).
pub async fn with_tenant<F: std::future::Future>(tenant: String, f: F) -> F::Output {
    TENANT.scope(tenant, f).await
}

/// The tenant label of the current task's model calls (`none` outside any review).
pub(crate) fn tenant_label() -> String {
    TENANT
        .try_with(|t| {
            if t.is_empty() {
                "none".to_string()
            } else {
                t.clone()
            }
        })
        .unwrap_or_else(|_| "none".to_string())
}

/// Installs the TLS crypto provider (ring) once per process. reqwest with rustls panics
/// when building a client without one; ring avoids aws-lc's slow C build.
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
