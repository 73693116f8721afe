//! Publications: a GitHub pull request's review posted back, as a durable job of its own
//! in the store. A worker claims one under a lease and does what is left of it, recording
//! each part as soon as GitHub has it: the head's check run (in progress as the review
//! starts), then, once the review has ended, the PR review (found again by its marker and
//! updated in place, so a worker killed after posting and before recording leaves one
//! review, not two), the check run's conclusion and annotations, and SARIF. A rate limit
//! puts it back for the time GitHub names without spending an attempt; a 5xx spends one;
//! an app removed from the repository (404/403) ends it by name.

use proven_github::{CheckOptions, GitHubError, Publisher, Target};
use proven_report::{FailedService, Report, ReportKind, Status};
use proven_store::{PublicationRow, PublicationState, ReviewStatus, StoreError};

use crate::step::StepContext;

/// What a publication's turn ended in.
enum Turn {
    /// Posted, with what became of the SARIF.
    Done(&'static str),
    /// The check run is started; the review has not ended yet.
    Waiting,
    /// Superseded by a newer head: its check run cancelled.
    Superseded,
}

/// Publishes finished GitHub reviews for one worker.
#[derive(Clone)]
pub struct Publications {
    pub(super) cx: StepContext,
    pub(super) options: CheckOptions,
    pub(super) sarif: bool,
    /// How long a claim holds before another worker may take the publication over.
    pub(super) lease_secs: i64,
}

fn counted(outcome: &'static str) {
    metrics::counter!(
        proven_pipeline::metrics_names::PUBLICATIONS_TOTAL,
        "outcome" => outcome
    )
    .increment(1);
}

impl Publications {
    /// Claims one publication with work to do and does it; false when none has any.
    pub async fn publish_one(&self) -> Result<bool, StoreError> {
        let store = &self.cx.store;
        let Some(p) = store.claim_publication(self.lease_secs).await? else {
            return Ok(false);
        };
        match self.turn(&p).await {
            Ok(Turn::Done(sarif)) => {
                tracing::info!(review = %p.review_id, repo = %p.repository, pull = p.pull_number, "published");
                counted("published");
                store
                    .publication_end(&p.review_id, PublicationState::Done, None, Some(sarif))
                    .await?;
            }
            Ok(Turn::Waiting) => {
                store
                    .publication_later(&p.review_id, 0, "waiting for the review", false)
                    .await?;
            }
            Ok(Turn::Superseded) => {
                counted("superseded");
                store
                    .publication_end(&p.review_id, PublicationState::Superseded, None, None)
                    .await?;
            }
            Err(GitHubError::RateLimited { retry_after, .. }) => {
                counted("rate_limited");
                let secs = i64::try_from(retry_after.as_secs()).unwrap_or(3600);
                let why = format!("GitHub's rate limit: retrying in {secs} s");
                tracing::info!(review = %p.review_id, secs, "publication rate-limited");
                store
                    .publication_later(&p.review_id, secs, &why, false)
                    .await?;
            }
            // GitHub refusing the content (422) answers the same the next time: ended by name too.
            Err(
                e @ (GitHubError::Gone { .. }
                | GitHubError::Rejected { .. }
                | GitHubError::Credentials(_)),
            ) => {
                counted("gone");
                tracing::warn!(review = %p.review_id, error = %e, "publication ended");
                store
                    .publication_end(
                        &p.review_id,
                        PublicationState::Failed,
                        Some(&e.to_string()),
                        None,
                    )
                    .await?;
            }
            Err(e) => {
                counted("retried");
                tracing::warn!(review = %p.review_id, error = %e, "publication failed; retrying");
                let secs = 2_i64.pow(u32::try_from(p.attempts.clamp(0, 8)).unwrap_or(8));
                store
                    .publication_later(&p.review_id, secs, &e.to_string(), true)
                    .await?;
            }
        }
        Ok(true)
    }

    async fn turn(&self, p: &PublicationRow) -> Result<Turn, GitHubError> {
        let github = self.cx.github.as_ref().ok_or_else(|| {
            GitHubError::Credentials(
                "this worker is not the GitHub App (PROVEN_GITHUB_APP_ID, PROVEN_GITHUB_PRIVATE_KEY)"
                    .into(),
            )
        })?;
        let installation = u64::try_from(p.installation_id).unwrap_or_default();
        let token = match github.token(installation, &p.repository).await {
            Err(GitHubError::Transient { what, message }) if message.contains(" 401 ") => {
                github.app.forget(installation);
                return Err(GitHubError::Transient { what, message });
            }
            other => other?,
        };
        let publisher = Publisher {
            client: &github.client,
            token: &token,
        };
        let pull = u64::try_from(p.pull_number).unwrap_or_default();
        let target = Target {
            repo: p.repository.clone(),
            pull,
            head_sha: p.head_sha.clone(),
            git_ref: format!("refs/pull/{pull}/head"),
        };
        let store_error = |e: StoreError| GitHubError::Transient {
            what: "the store".into(),
            message: e.to_string(),
        };
        if p.state == PublicationState::Cancelling {
            if let Some(id) = p.check_run_id.and_then(|i| u64::try_from(i).ok()) {
                let why = p.error.clone().unwrap_or_else(|| "superseded".into());
                publisher.cancel_check(&target, id, &why).await?;
            }
            return Ok(Turn::Superseded);
        }
        let check = match p.check_run_id.and_then(|i| u64::try_from(i).ok()) {
            Some(id) => id,
            None => {
                let id = publisher
                    .start_check(&target, &self.options, &p.review_id)
                    .await?;
                self.cx
                    .store
                    .publication_posted(&p.review_id, i64::try_from(id).ok(), None)
                    .await
                    .map_err(store_error)?;
                id
            }
        };
        let review = self
            .cx
            .store
            .review(&p.review_id)
            .await
            .map_err(store_error)?;
        match review.status {
            ReviewStatus::Queued | ReviewStatus::Running => return Ok(Turn::Waiting),
            ReviewStatus::Superseded => {
                publisher
                    .cancel_check(
                        &target,
                        check,
                        "a newer head of the pull request superseded this review",
                    )
                    .await?;
                return Ok(Turn::Superseded);
            }
            _ => {}
        }
        let report = report_of(&review);
        let comment = publisher.post_review(&target, &report).await?;
        self.cx
            .store
            .publication_posted(&p.review_id, None, i64::try_from(comment).ok())
            .await
            .map_err(store_error)?;
        publisher
            .finish_check(&target, check, &report, &self.options)
            .await?;
        if !self.sarif {
            return Ok(Turn::Done("off"));
        }
        Ok(Turn::Done(
            if publisher.upload_sarif(&target, &report).await? {
                "uploaded"
            } else {
                "not allowed"
            },
        ))
    }
}

/// The review's sealed report; one that holds none (or none that reads) is published as a
/// review that could not run, never as a clean one.
fn report_of(review: &proven_store::ReviewRow) -> Report {
    if let Some(report) = review
        .result
        .as_deref()
        .and_then(|r| serde_json::from_str::<Report>(r).ok())
    {
        return report;
    }
    let mut report = Report::new(ReportKind::Review, review.repository.clone());
    report.review_id = Some(review.id.clone());
    report.status = Status::Failed;
    report.failed_services.push(FailedService {
        service: "review".into(),
        message: format!("the review ended {} with no result", review.status.as_str()),
    });
    report
}
