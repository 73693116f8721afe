//! A review published on its pull request: one PR review per reviewed head commit (found
//! again by its marker and updated in place, never posted twice), a check run per head
//! (in progress when the review starts, then its conclusion with one annotation per
//! finding, 50 per request as GitHub takes them), and the SARIF in code scanning when the
//! installation allows it. Each part is its own call, so the caller can record what is
//! done between them (a publish that dies halfway resumes, it does not repeat).

use std::io::Write;

use base64::Engine;
use proven_report::{
    Level, ReachVerdict, Report, Status, github_review, review_marker, what_did_not_run,
};
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::client::{Client, GitHubError};

/// Annotations GitHub takes in one create or update of a check run.
pub const ANNOTATIONS_PER_REQUEST: usize = 50;

/// Where a review is published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `owner/name`.
    pub repo: String,
    pub pull: u64,
    pub head_sha: String,
    /// The ref SARIF is filed under (`refs/pull/N/head`, or the workflow's `GITHUB_REF`).
    pub git_ref: String,
}

/// How a review concludes its check run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOptions {
    pub name: String,
    /// With findings (`failure` by default).
    pub findings: String,
    /// With advisory findings only (dependency advisories, nothing reproduced).
    pub advisory_only: String,
    /// With advisory findings only, none of whose vulnerable code the head reaches.
    pub not_reached: String,
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions {
            name: "Proven".into(),
            findings: "failure".into(),
            advisory_only: "failure".into(),
            not_reached: "failure".into(),
        }
    }
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The check run's conclusion: `action_required` when the review is incomplete (it never
/// passes for one that did not run whole), `success` with no finding, else the options'.
pub fn conclusion<'a>(report: &Report, options: &'a CheckOptions) -> &'a str {
    match report.status {
        Status::Complete => {}
        // Its plan ran whole but lacked the agents: not a failure, never a pass.
        Status::Partial if report.findings.is_empty() => return "neutral",
        Status::Partial => {}
        Status::Incomplete | Status::Failed => return "action_required",
    }
    // An advisory finding whose vulnerable code the head does not reach weighs only as
    // much as `not_reached` says (an exploited one keeps its weight).
    let not_reached = |f: &&proven_report::Finding| {
        matches!(f.proof_level, Level::Advisory)
            && f.reachability
                .as_ref()
                .is_some_and(|r| r.verdict == ReachVerdict::NotReached)
    };
    let weighed: Vec<_> = report.findings.iter().filter(|f| !not_reached(f)).collect();
    if report.findings.is_empty() {
        "success"
    } else if weighed.is_empty() {
        &options.not_reached
    } else if weighed
        .iter()
        .all(|f| matches!(f.proof_level, Level::Advisory))
    {
        &options.advisory_only
    } else {
        &options.findings
    }
}

/// GitHub's limits on a check run's texts are in characters; a cut ends at a word.
fn clip(s: &str, max: usize) -> String {
    proven_report::cut_at_word(s, max)
}

/// One annotation per finding, on its line.
pub fn annotations(report: &Report) -> Vec<Value> {
    report
        .findings
        .iter()
        .map(|f| {
            let line = f.location.line.unwrap_or(1).max(1);
            let level = match f.proof_level {
                Level::Reproduced | Level::Exploited => "failure",
                Level::Advisory | Level::Tool => "warning",
            };
            let mut detail = f
                .claim
                .clone()
                .or_else(|| f.advisory.as_ref().and_then(|a| a.summary.clone()))
                .unwrap_or_else(|| f.title.clone());
            if let Some(r) = &f.reachability {
                detail.push_str(&format!("\nReachability: {}", r.summary()));
            }
            json!({
                "path": f.location.path,
                "start_line": line,
                "end_line": line,
                "annotation_level": level,
                "title": clip(&format!("{}: {}", f.proof_level.as_str(), f.title), 255),
                "message": clip(&detail, 60_000),
            })
        })
        .collect()
}

fn summary(report: &Report) -> (String, String) {
    let c = &report.proof_counts;
    let counts = format!(
        "reproduced {} · exploited {} · advisory {} · tool {}",
        c.reproduced, c.exploited, c.advisory, c.tool
    );
    match what_did_not_run(report) {
        Some(missing) if report.status == Status::Partial => (
            "Partial: the code was not reviewed".into(),
            format!("Why: {missing}.\n\nFindings by proof level: {counts}"),
        ),
        Some(missing) => (
            "Incomplete: findings may be missing".into(),
            format!("Did not run: {missing}.\n\nFindings by proof level: {counts}"),
        ),
        None if report.findings.is_empty() => (
            "No finding".into(),
            format!("Findings by proof level: {counts}"),
        ),
        None => (
            format!("{} findings with proof", report.findings.len()),
            format!("Findings by proof level: {counts}"),
        ),
    }
}

/// The check run's completion, then its remaining annotations: one update per 50.
pub fn check_updates(report: &Report, options: &CheckOptions) -> Vec<Value> {
    let (title, summary) = summary(report);
    updates(
        &title,
        &summary,
        conclusion(report, options),
        &annotations(report),
    )
}

/// The completion with the first [`ANNOTATIONS_PER_REQUEST`] annotations, then one update
/// per further chunk (GitHub adds each update's annotations to the run's).
fn updates(title: &str, summary: &str, conclusion: &str, all: &[Value]) -> Vec<Value> {
    let mut chunks: Vec<&[Value]> = all.chunks(ANNOTATIONS_PER_REQUEST).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let output =
                json!({"title": title, "summary": clip(summary, 60_000), "annotations": chunk});
            if i == 0 {
                json!({
                    "status": "completed",
                    "conclusion": conclusion,
                    "completed_at": now(),
                    "output": output,
                })
            } else {
                json!({"output": output})
            }
        })
        .collect()
}

/// What became of a review's SARIF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SarifUpload {
    Uploaded,
    /// The repository does not allow it (code scanning off, or no permission); ends nothing.
    NotAllowed,
    /// Not uploaded: the review did not run whole, and code scanning would take it for a
    /// clean analysis.
    Withheld,
}

impl SarifUpload {
    pub fn as_str(self) -> &'static str {
        match self {
            SarifUpload::Uploaded => "uploaded",
            SarifUpload::NotAllowed => "not allowed",
            SarifUpload::Withheld => "withheld (the review did not run whole)",
        }
    }
}

/// The calls, with one installation's (or a workflow's) token.
pub struct Publisher<'a> {
    pub client: &'a Client,
    pub token: &'a SecretString,
}

impl Publisher<'_> {
    /// The head's check run, in progress.
    pub async fn start_check(
        &self,
        target: &Target,
        options: &CheckOptions,
        external_id: &str,
    ) -> Result<u64, GitHubError> {
        let run = json!({
            "name": options.name,
            "head_sha": target.head_sha,
            "status": "in_progress",
            "external_id": external_id,
            "started_at": now(),
            "output": {"title": "Reviewing", "summary": "Proven is reviewing this head commit."},
        });
        self.client
            .create_check_run(self.token, &target.repo, &run)
            .await
    }

    /// The head's check run with this external id, if one was created already (by a
    /// publish that died before the store recorded it).
    pub async fn find_check(
        &self,
        target: &Target,
        options: &CheckOptions,
        external_id: &str,
    ) -> Result<Option<u64>, GitHubError> {
        let runs = self
            .client
            .check_runs_named(self.token, &target.repo, &target.head_sha, &options.name)
            .await?;
        Ok(runs
            .into_iter()
            .find(|(_, ext)| ext.as_deref() == Some(external_id))
            .map(|(id, _)| id))
    }

    /// One update of a check run (one of [`check_updates`]).
    pub async fn update_check(
        &self,
        target: &Target,
        id: u64,
        update: &Value,
    ) -> Result<(), GitHubError> {
        self.client
            .update_check_run(self.token, &target.repo, id, update)
            .await
    }

    /// Concludes a check run whose review could not be published (it never stays in
    /// progress, and never looks clean).
    pub async fn abandon_check(
        &self,
        target: &Target,
        id: u64,
        why: &str,
    ) -> Result<(), GitHubError> {
        let title = "Proven could not publish this review";
        self.conclude(target, id, "action_required", title, why)
            .await
    }

    /// Ends a check run that will not get a review (a newer head superseded it).
    pub async fn cancel_check(
        &self,
        target: &Target,
        id: u64,
        why: &str,
    ) -> Result<(), GitHubError> {
        self.conclude(target, id, "cancelled", "Superseded", why)
            .await
    }

    /// Completes a check run with `conclusion` and a summary saying why.
    async fn conclude(
        &self,
        target: &Target,
        id: u64,
        conclusion: &str,
        title: &str,
        why: &str,
    ) -> Result<(), GitHubError> {
        let run = json!({
            "status": "completed",
            "conclusion": conclusion,
            "completed_at": now(),
            "output": {"title": title, "summary": clip(why, 60_000)},
        });
        self.client
            .update_check_run(self.token, &target.repo, id, &run)
            .await
    }

    /// The head's review: updated in place when one with its marker is there already,
    /// else posted. A suggestion GitHub cannot place on the diff (422) moves into the body.
    pub async fn post_review(&self, target: &Target, report: &Report) -> Result<u64, GitHubError> {
        let review = github_review(report, Some(&target.head_sha));
        let body = review["body"].as_str().unwrap_or_default().to_string();
        let marker = review_marker(&target.head_sha);
        let existing = self
            .client
            .reviews(self.token, &target.repo, target.pull)
            .await?;
        // Only a review an app wrote is Proven's own (a person may paste the marker into
        // theirs); one GitHub will not let this token update is left alone and a new one
        // posted, so no one can silence the review by planting a marker.
        if let Some(found) = existing
            .iter()
            .find(|r| r.by_bot && r.body.contains(&marker))
        {
            match self
                .client
                .update_review(self.token, &target.repo, target.pull, found.id, &body)
                .await
            {
                Ok(()) => return Ok(found.id),
                Err(GitHubError::Gone { .. } | GitHubError::Rejected { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        match self
            .client
            .create_review(self.token, &target.repo, target.pull, &review)
            .await
        {
            Err(GitHubError::Rejected { status: 422, .. })
                if review["comments"].as_array().is_some_and(|c| !c.is_empty()) =>
            {
                let mut flat = review.clone();
                flat["comments"] = json!([]);
                flat["body"] = inline_suggestions(&body, &review["comments"], &marker).into();
                self.client
                    .create_review(self.token, &target.repo, target.pull, &flat)
                    .await
            }
            other => other,
        }
    }

    /// The check run's conclusion and every annotation.
    pub async fn finish_check(
        &self,
        target: &Target,
        id: u64,
        report: &Report,
        options: &CheckOptions,
    ) -> Result<(), GitHubError> {
        for update in check_updates(report, options) {
            self.client
                .update_check_run(self.token, &target.repo, id, &update)
                .await?;
        }
        Ok(())
    }

    /// The review's SARIF into code scanning, only for a review that ran whole: code
    /// scanning takes an upload for the head's whole analysis and closes the alerts it no
    /// longer holds, so an incomplete, partial or failed review is withheld (its check run
    /// and body say why) and earlier alerts stay open.
    pub async fn upload_sarif(
        &self,
        target: &Target,
        report: &Report,
    ) -> Result<SarifUpload, GitHubError> {
        if !proven_report::sarif_is_complete(report) {
            return Ok(SarifUpload::Withheld);
        }
        let sarif = proven_report::render_sarif(report);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let bytes = gz
            .write_all(sarif.as_bytes())
            .and_then(|_| gz.finish())
            .map_err(|e| GitHubError::Transient {
                what: "compressing the SARIF".into(),
                message: e.to_string(),
            })?;
        let upload = json!({
            "commit_sha": target.head_sha,
            "ref": target.git_ref,
            "sarif": base64::engine::general_purpose::STANDARD.encode(bytes),
            "tool_name": "Proven",
        });
        match self
            .client
            .upload_sarif(self.token, &target.repo, &upload)
            .await
        {
            Ok(()) => Ok(SarifUpload::Uploaded),
            Err(GitHubError::Gone { .. }) => Ok(SarifUpload::NotAllowed),
            Err(e) => Err(e),
        }
    }
}

/// The body with each suggestion GitHub could not place written into it instead, cut to
/// GitHub's limit with the marker kept whole (it is how the review is found again).
fn inline_suggestions(body: &str, comments: &Value, marker: &str) -> String {
    let mut out = body.replace(marker, "");
    out = out.trim_end().to_string();
    out.push_str("\n\n### Proposed fixes GitHub could not place on the diff\n");
    for c in comments.as_array().into_iter().flatten() {
        out.push_str(&format!(
            "\n{} line {}:\n\n{}\n",
            proven_report::code_span(c["path"].as_str().unwrap_or_default()),
            c["line"],
            c["body"].as_str().unwrap_or_default()
        ));
    }
    let marker = format!("\n{marker}\n");
    let mut out = proven_report::cut_body(out, proven_report::MAX_BODY - marker.len());
    out.push_str(&marker);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_go_fifty_a_request_and_only_the_first_concludes() {
        let all: Vec<Value> = (0..120)
            .map(|i| json!({"path": "a.rs", "start_line": i}))
            .collect();
        let sent = updates("t", "s", "failure", &all);
        let sizes: Vec<usize> = sent
            .iter()
            .map(|u| u["output"]["annotations"].as_array().map_or(0, Vec::len))
            .collect();
        assert_eq!(sizes, [50, 50, 20]);
        assert_eq!(sent[0]["conclusion"], "failure");
        assert!(sent[1..].iter().all(|u| u.get("conclusion").is_none()));
        let flat: Vec<&Value> = sent
            .iter()
            .flat_map(|u| u["output"]["annotations"].as_array().into_iter().flatten())
            .collect();
        assert_eq!(flat.len(), 120, "none lost, none repeated");
        assert_eq!(
            updates("t", "s", "success", &[]).len(),
            1,
            "no finding: one update"
        );
    }

    #[test]
    fn an_incomplete_review_never_concludes_clean() {
        let mut report = Report::new(proven_report::ReportKind::Review, "r");
        let options = CheckOptions::default();
        report.status = Status::Complete;
        assert_eq!(conclusion(&report, &options), "success");
        report.status = Status::Incomplete;
        assert_eq!(conclusion(&report, &options), "action_required");
        report.status = Status::Failed;
        assert_eq!(conclusion(&report, &options), "action_required");
    }

    /// No model for a change that touches code: the check is neutral with why, and its
    /// title says the code was not reviewed; SARIF is withheld, so code scanning keeps its
    /// earlier alerts open.
    #[test]
    fn a_partial_review_concludes_neutral_says_why_and_withholds_sarif() {
        let mut report = Report::new(proven_report::ReportKind::Review, "r");
        report.plan = Some(proven_report::Plan {
            change_kind: "feature".into(),
            class: "standard".into(),
            band: "light".into(),
            runs: vec!["intake".into()],
            left_out: Vec::new(),
            partial: Some("the standard plan runs the model agents and none is configured".into()),
        });
        report.seal();
        assert_eq!(report.status, Status::Partial);
        let updates = check_updates(&report, &CheckOptions::default());
        assert_eq!(updates[0]["conclusion"], "neutral");
        assert_eq!(
            updates[0]["output"]["title"],
            "Partial: the code was not reviewed"
        );
        assert!(
            updates[0]["output"]["summary"]
                .as_str()
                .is_some_and(|s| s.contains("none is configured")),
            "{}",
            updates[0]
        );
        assert!(!proven_report::sarif_is_complete(&report));
        let body = proven_report::github_review(&report, None)["body"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(body.starts_with("**Partial review"), "{body}");
        report.status = Status::Incomplete;
        assert!(!proven_report::sarif_is_complete(&report));
        report.status = Status::Complete;
        assert!(proven_report::sarif_is_complete(&report));
    }

    fn dependency(level: &str, verdict: Option<&str>) -> proven_report::Finding {
        let mut f = json!({"id": format!("dep:{level}:{verdict:?}"), "proof_level": level,
            "kind": "vulnerability", "title": "foo 1.1.0 is affected by TEST-1",
            "location": {"path": "Cargo.lock"}, "evidence": []});
        if let Some(v) = verdict {
            f["reachability"] = json!({"verdict": v, "files_searched": 3, "sites_total": 0});
        }
        serde_json::from_value(f).expect("finding")
    }

    /// Advisory findings whose vulnerable code the head does not reach conclude as the
    /// `not_reached` setting says; one reachable, unknown or exploited finding keeps the
    /// check's usual conclusion.
    #[test]
    fn not_reached_advisories_conclude_as_their_setting_says() {
        let options = CheckOptions {
            not_reached: "neutral".into(),
            ..CheckOptions::default()
        };
        let mut report = Report::new(proven_report::ReportKind::Review, "r");
        report.status = Status::Complete;
        report.findings = vec![dependency("advisory", Some("not_reached"))];
        assert_eq!(conclusion(&report, &options), "neutral");
        assert_eq!(conclusion(&report, &CheckOptions::default()), "failure");
        for other in [
            dependency("advisory", Some("reachable")),
            dependency("advisory", Some("unknown")),
            dependency("advisory", None),
            dependency("exploited", Some("not_reached")),
        ] {
            report.findings = vec![dependency("advisory", Some("not_reached")), other];
            assert_eq!(
                conclusion(&report, &options),
                "failure",
                "{:?}",
                report.findings[1].id
            );
        }
        // Every annotation says the verdict.
        report.findings = vec![dependency("advisory", Some("not_reached"))];
        let message = annotations(&report)[0]["message"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(message.contains("Reachability: not reached"), "{message}");
    }
}
