//! A review as submitted: the wire type the API accepts, `proven review` builds and the
//! review's first step reads. It lives here (below the review crate) so the API can store a
//! request without depending on the review's steps, Docker or the model client.

use serde::{Deserialize, Serialize};

/// A review as submitted (to the API or by `proven review`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewRequest {
    /// An https:// or ssh:// URL on the operator's host allow-list (mirrored per tenant under
    /// the data directory), or a local path the policy allows (`proven_source::RepoPolicy`).
    pub repository: String,
    pub base: String,
    pub head: String,
    /// The pull request this review belongs to (a newer head supersedes older reviews).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<String>,
    /// Seconds after admission when the review is judged with what it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_secs: Option<u64>,
    /// The trace id of the request that submitted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// A re-review on advisory change: the earlier review of the same change it is compared
    /// with (its findings new, still there or gone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rereview_of: Option<String>,
    /// A pull request of a GitHub App installation: its clone uses the installation's
    /// token (minted at intake, never stored) and its result is published there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<GitHubPull>,
}

/// Where on GitHub a review came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitHubPull {
    pub installation_id: u64,
    /// `owner/name`.
    pub repository: String,
    pub pull_number: u64,
    pub head_sha: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_fields_are_left_out_and_read_back_as_none() {
        let request = ReviewRequest {
            repository: "/repo".into(),
            base: "main".into(),
            head: "feature".into(),
            ..ReviewRequest::default()
        };
        let json = serde_json::to_string(&request).expect("serialises");
        assert_eq!(
            json,
            r#"{"repository":"/repo","base":"main","head":"feature"}"#
        );
        let back: ReviewRequest = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, request);
    }
}
