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
    /// `merge-base` (default: from the merge base of base and head, as GitHub's "Files
    /// changed" shows a pull request) or `two-dot` (from base as named).
    #[serde(default)]
    pub diff: Option<proven_store::DiffMode>,
    /// Seconds after submission when the review is judged with what it has.
    #[serde(default, deserialize_with = "whole_seconds")]
    pub deadline_secs: Option<u64>,
}

/// `POST /v1/questions`: a question about a repository, answered by `proven ask`'s design
/// (cited claims, each citation checked; the refuter; the coverage auditor).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CreateQuestion {
    /// As a review's: on the operator's allow-list, or under `PROVEN_REPO_ROOTS`.
    pub repository: String,
    /// The revision the claims cite (default HEAD).
    #[serde(default)]
    pub rev: Option<String>,
    pub question: String,
}

/// `202` to `POST /v1/questions`.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct QuestionAccepted {
    pub id: String,
    pub status: String,
}

/// `GET /v1/questions/{id}`.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct QuestionView {
    pub id: String,
    pub repository: String,
    pub rev: String,
    pub question: String,
    /// queued, running, done, failed.
    pub status: String,
    pub attempts: i64,
    pub created_at: String,
    pub updated_at: String,
    /// The answer document (`proven ask --format json`), when done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<serde_json::Value>,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A field that may be left out but never be `null` (the document says so): absent is
/// `None` (the default), present is its value, `null` is refused as any wrong type is.
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A whole number of seconds. JSON Schema counts `30.0` as an integer and the document
/// promises an integer, so it is taken; serde's own `u64` would refuse it.
fn whole_seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let Some(n) = Option::<serde_json::Number>::deserialize(d)? else {
        return Ok(None);
    };
    n.as_u64()
        .or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(f))
                .map(|f| f as u64)
        })
        .map(Some)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "deadline_secs {n} is not a whole number of seconds from 0 to 2^64"
            ))
        })
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
    /// An explicit list of reviews.
    #[serde(default, deserialize_with = "present")]
    pub reviews: Option<Vec<BatchItem>>,
    /// Or a selector: re-review every repository of the tenant whose current dependencies
    /// the advisory change set `ID` (printed by `proven db sync`) newly affects.
    #[serde(default, deserialize_with = "present")]
    pub change_set: Option<String>,
    /// Or: every change set recorded at or after this instant (RFC 3339).
    #[serde(default, deserialize_with = "present")]
    pub advisories_changed_since: Option<String>,
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
    /// Each re-review on advisory change once it has ended: its findings compared with the
    /// earlier review of the same change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rereviews: Vec<RereviewView>,
}

/// A re-review's findings against the earlier review's (finding ids).
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct RereviewView {
    pub review: String,
    pub repository: String,
    pub previous: String,
    pub status: String,
    pub new: Vec<String>,
    pub still: Vec<String>,
    pub gone: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ErrorDetail {
    /// Stable machine-readable code: missing_token, invalid_token, revoked_token, not_found,
    /// invalid_request, repository_refused, batch_too_large, queue_full, rate_limited,
    /// body_too_large, body_timeout, unavailable.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn deadline(json: &str) -> Result<Option<u64>, String> {
        serde_json::from_str::<CreateReview>(&format!(
            r#"{{"repository": "r", "base": "a", "head": "b", "deadline_secs": {json}}}"#
        ))
        .map(|r| r.deadline_secs)
        .map_err(|e| e.to_string())
    }

    #[test]
    fn a_deadline_is_any_whole_number_of_seconds_json_schema_calls_an_integer() {
        assert_eq!(deadline("30"), Ok(Some(30)));
        assert_eq!(deadline("30.0"), Ok(Some(30)), "JSON Schema's integer");
        assert_eq!(deadline("null"), Ok(None));
        for bad in ["30.5", "-1", "1e300", "\"30\""] {
            assert!(deadline(bad).is_err(), "{bad} is refused");
        }
        assert!(
            deadline("-1")
                .expect_err("a negative deadline")
                .contains("deadline_secs -1 is not a whole number of seconds")
        );
    }
}
