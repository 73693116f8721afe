//! The API's wire types (version 1), documented in `openapi.json`.

use serde::{Deserialize, Serialize};

/// `POST /v1/reviews`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CreateReview {
    /// An https:// or ssh:// URL on the operator's allow-list (`PROVEN_REPO_HOSTS`), or a
    /// path under `PROVEN_REPO_ROOTS`.
    pub repository: String,
    pub base: String,
    pub head: String,
    /// interactive (default), rerun or batch.
    #[serde(default)]
    pub priority: Option<String>,
    /// Identifies the pull request: a newer head supersedes older reviews of it.
    #[serde(default)]
    pub pull_request: Option<String>,
    /// Seconds after submission when the review is judged with what it has.
    #[serde(default)]
    pub deadline_secs: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ReviewAccepted {
    pub id: String,
    pub status: String,
    /// Carried by every job of the review: the workers' spans name it.
    pub trace_id: String,
    /// Reviews this one superseded (same pull request).
    pub superseded: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ReviewSummary {
    pub id: String,
    pub status: String,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub repository: String,
    pub base: String,
    pub head: String,
    pub priority: String,
    pub batch_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ReviewList {
    pub reviews: Vec<ReviewSummary>,
    /// Pass as `before` for the next page; absent on the last page.
    pub next: Option<String>,
}

/// `GET /v1/reviews/{id}`: the summary, and the result document once judged.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ReviewView {
    #[serde(flatten)]
    pub summary: ReviewSummary,
    /// Steps by state, while it runs.
    pub steps: Vec<StepView>,
    /// The result document (docs/report-json.md) when the review is finished.
    pub result: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct StepView {
    pub step: String,
    pub key: String,
    pub state: String,
    pub attempts: i64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBatch {
    pub reviews: Vec<BatchItem>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BatchItem {
    pub repository: String,
    pub base: String,
    pub head: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct BatchAccepted {
    pub id: String,
    pub reviews: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct BatchView {
    pub id: String,
    pub total: i64,
    /// Reviews by status.
    pub statuses: std::collections::BTreeMap<String, i64>,
    pub done: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ErrorDetail {
    /// Stable machine-readable code: missing_token, invalid_token, not_found, invalid_request,
    /// repository_refused, unavailable.
    pub code: String,
    pub message: String,
    /// The request field the error is about (`repository_refused`: `repository`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The setting that decides it (e.g. `PROVEN_REPO_HOSTS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
}

impl ErrorBody {
    pub fn new(code: &str, message: String) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: code.into(),
                message,
                field: None,
                setting: None,
            },
        }
    }
}

pub fn priority_name(p: i64) -> &'static str {
    match p {
        0 => "interactive",
        1 => "rerun",
        _ => "batch",
    }
}

pub fn priority_value(name: Option<&str>) -> Result<i64, String> {
    match name.unwrap_or("interactive") {
        "interactive" => Ok(0),
        "rerun" => Ok(1),
        "batch" => Ok(2),
        other => Err(format!(
            "priority {other:?} is not one of interactive, rerun, batch"
        )),
    }
}
