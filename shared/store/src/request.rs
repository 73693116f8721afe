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
    /// How the change is read from `base` (default: from its merge base with `head`, as
    /// GitHub's "Files changed" shows a pull request).
    #[serde(default, skip_serializing_if = "DiffMode::is_default")]
    pub diff: DiffMode,
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

/// Which commit a review compares its head with.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::EnumString,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum DiffMode {
    /// From the merge base of `base` and `head` (`git diff base...head`): what the head's
    /// branch changed since it left `base`. Changes `base` made after that point are never
    /// the change's. A base that is an ancestor of the head is its own merge base.
    #[default]
    MergeBase,
    /// From `base` itself (`git diff base head`), whatever the two histories did.
    TwoDot,
}

impl DiffMode {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    fn is_default(&self) -> bool {
        *self == DiffMode::MergeBase
    }
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
        assert_eq!(
            back.diff,
            DiffMode::MergeBase,
            "a request stored before the field compares from the merge base"
        );
    }

    #[test]
    fn the_diff_mode_is_stored_by_its_name() {
        let request = ReviewRequest {
            diff: DiffMode::TwoDot,
            ..ReviewRequest::default()
        };
        let json = serde_json::to_value(&request).expect("serialises");
        assert_eq!(json["diff"], "two-dot");
        assert_eq!(
            "merge-base".parse::<DiffMode>().ok(),
            Some(DiffMode::MergeBase)
        );
        assert_eq!(DiffMode::TwoDot.as_str(), "two-dot");
        assert!("three-dot".parse::<DiffMode>().is_err());
    }
}
