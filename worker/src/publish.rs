//! Publications: a GitHub pull request's review posted back, as a durable job of its own
//! in the store. A worker claims one under a lease and does what is left of it, recording
//! each part as soon as GitHub has it: the head's check run (in progress as the review
//! starts), then, once the review has ended, the PR review (found again by its marker and
//! updated in place, so a worker killed after posting and before recording leaves one
//! review, not two), the check run's conclusion and annotations, and SARIF. A rate limit
//! puts it back for the time GitHub names without spending an attempt (and holds the
//! installation's other publications as long: the limit is the installation's); a 5xx
//! spends one; an app removed from the repository (404/403) ends it by name. The claim is
//! fenced (each write names the claim's token) and renewed before each call: a worker
//! whose lease ran out records nothing over the worker that took the publication over.

use proven_github::{CheckOptions, GitHubError, Publisher, Target, check_updates};
use proven_report::{FailedService, Report, ReportKind, Status};
use proven_store::{PublicationRow, PublicationState, ReviewStatus, StoreError};

use std::sync::Arc;

use proven_github::AppClient;
use proven_store::Store;

/// What a publication's turn ended in.
enum Turn {
    /// Posted, with what became of the SARIF.
    Done(&'static str),
    /// The check run is started; the review has not ended yet.
    Waiting,
    /// Superseded by a newer head: its check run cancelled.
    Superseded,
}

/// Why a turn stopped short.
enum Stop {
    GitHub(GitHubError),
    Store(StoreError),
}

impl From<GitHubError> for Stop {
    fn from(e: GitHubError) -> Stop {
        Stop::GitHub(e)
    }
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Stop {
        Stop::Store(e)
    }
}

/// Publishes finished GitHub reviews for one worker.
#[derive(Clone)]
pub struct Publications {
    store: Store,
    /// The GitHub App, when this worker is one.
    github: Option<Arc<AppClient>>,
    options: CheckOptions,
    sarif: bool,
    /// How long a claim holds before another worker may take the publication over; it is
    /// renewed before each call to GitHub.
    lease_secs: i64,
}

impl Publications {
    /// Publishes with the store and App of `steps`: the check run named and concluded as
    /// the operator set, SARIF when `sarif`, each claim held `lease_secs`.
    pub fn new(
        steps: &proven_review::pipeline::ReviewSteps,
        options: CheckOptions,
        sarif: bool,
        lease_secs: i64,
    ) -> Publications {
        let cx = steps.context();
        Publications {
            store: cx.store.clone(),
            github: cx.github.clone(),
            options,
            sarif,
            lease_secs,
        }
    }
}

fn counted(outcome: &'static str) {
    metrics::counter!(
        proven_pipeline::metrics_names::PUBLICATIONS_TOTAL,
        "outcome" => outcome
    )
    .increment(1);
}

fn target(p: &PublicationRow) -> Target {
    let pull = u64::try_from(p.pull_number).unwrap_or_default();
    Target {
        repo: p.repository.clone(),
        pull,
        head_sha: p.head_sha.clone(),
        git_ref: format!("refs/pull/{pull}/head"),
    }
}

impl Publications {
    /// Claims one publication with work to do and does it; false when none has any. A
    /// claim whose lease another worker took over stops at its next write, recording
    /// nothing (the other worker goes on from what the store holds).
    pub async fn publish_one(&self) -> Result<bool, StoreError> {
        let Some(p) = self.store.claim_publication(self.lease_secs).await? else {
            return Ok(false);
        };
        let turn = self.turn(&p).await;
        match self.settle(&p, turn).await {
            Err(StoreError::LeaseLost(what)) => {
                counted("lease_lost");
                tracing::warn!(review = %p.review_id, %what, "publication taken over; stopped");
                Ok(true)
            }
            other => other.map(|()| true),
        }
    }

    async fn settle(&self, p: &PublicationRow, turn: Result<Turn, Stop>) -> Result<(), StoreError> {
        let store = &self.store;
        let e = match turn {
            Ok(Turn::Done(sarif)) => {
                tracing::info!(review = %p.review_id, repo = %p.repository, pull = p.pull_number, "published");
                counted("published");
                return store
                    .publication_end(p, PublicationState::Done, None, Some(sarif))
                    .await;
            }
            Ok(Turn::Waiting) => {
                return store
                    .publication_later(p, 0, "waiting for the review", false)
                    .await
                    .map(drop);
            }
            Ok(Turn::Superseded) => {
                counted("superseded");
                return store
                    .publication_end(p, PublicationState::Superseded, None, None)
                    .await;
            }
            Err(Stop::Store(e @ StoreError::LeaseLost(_))) => return Err(e),
            // The store failing halfway: another attempt, from what it recorded.
            Err(Stop::Store(e)) => GitHubError::Transient {
                what: "the store".into(),
                message: e.to_string(),
            },
            Err(Stop::GitHub(e)) => e,
        };
        match e {
            GitHubError::RateLimited { retry_after, .. } => {
                counted("rate_limited");
                let secs = i64::try_from(retry_after.as_secs()).unwrap_or(3600);
                let why = format!("GitHub's rate limit: retrying in {secs} s");
                tracing::info!(review = %p.review_id, secs, "publication rate-limited");
                // The limit is the installation's: its other publications wait it out too.
                store.installation_later(p.installation_id, secs).await?;
                store
                    .publication_later(p, secs, &why, false)
                    .await
                    .map(drop)
            }
            // The app cannot reach the repository any more: nothing more can be said there.
            e @ (GitHubError::Gone { .. } | GitHubError::Credentials(_)) => {
                counted("gone");
                tracing::warn!(review = %p.review_id, error = %e, "publication ended");
                store
                    .publication_end(p, PublicationState::Failed, Some(&e.to_string()), None)
                    .await
            }
            // GitHub refusing the content (422) answers the same the next time: ended by
            // name, its check run concluded rather than left in progress.
            e @ GitHubError::Rejected { .. } => {
                counted("gone");
                tracing::warn!(review = %p.review_id, error = %e, "publication ended");
                let why = e.to_string();
                self.abandon(p, &why).await;
                store
                    .publication_end(p, PublicationState::Failed, Some(&why), None)
                    .await
            }
            e => {
                counted("retried");
                tracing::warn!(review = %p.review_id, error = %e, "publication failed; retrying");
                if e.is_unauthorized()
                    && let Some(github) = self.github.as_ref()
                {
                    github
                        .app
                        .forget(u64::try_from(p.installation_id).unwrap_or_default());
                }
                let secs = 2_i64.pow(u32::try_from(p.attempts.clamp(0, 8)).unwrap_or(8));
                let why = e.to_string();
                let state = store.publication_later(p, secs, &why, true).await?;
                if state == PublicationState::Failed {
                    self.abandon(p, &why).await;
                }
                Ok(())
            }
        }
    }

    /// Concludes the check run of a publication that ends without its review (one call,
    /// best effort: GitHub may be what failed), so it is never left in progress.
    async fn abandon(&self, p: &PublicationRow, why: &str) {
        let Ok(Some(now)) = self.store.publication(&p.review_id).await else {
            return;
        };
        let (Some(check), Some(github)) = (
            now.check_run_id.and_then(|i| u64::try_from(i).ok()),
            self.github.as_ref(),
        ) else {
            return;
        };
        let installation = u64::try_from(p.installation_id).unwrap_or_default();
        let Ok(token) = github.token(installation, &p.repository).await else {
            return;
        };
        let publisher = Publisher {
            client: &github.client,
            token: &token,
        };
        let why = format!("The review could not be published: {why}");
        if let Err(e) = publisher.abandon_check(&target(p), check, &why).await {
            tracing::warn!(review = %p.review_id, error = %e, "the check run could not be concluded");
        }
    }

    /// Renews the claim before a call to GitHub; a claim taken over stops here.
    async fn hold(&self, p: &PublicationRow) -> Result<(), Stop> {
        Ok(self.store.publication_hold(p, self.lease_secs).await?)
    }

    /// The head's check run: the one recorded, else one GitHub holds for this review (made
    /// by a turn that died before recording it), else a new one; recorded at once.
    async fn check_run(
        &self,
        p: &PublicationRow,
        publisher: &Publisher<'_>,
        target: &Target,
    ) -> Result<u64, Stop> {
        if let Some(id) = p.check_run_id.and_then(|i| u64::try_from(i).ok()) {
            return Ok(id);
        }
        self.hold(p).await?;
        // Claimed before: GitHub may hold a check run the store never recorded (the worker
        // died between the two), found by its external id.
        let found = if p.claims > 1 {
            publisher
                .find_check(target, &self.options, &p.review_id)
                .await?
        } else {
            None
        };
        let id = match found {
            Some(id) => id,
            None => {
                publisher
                    .start_check(target, &self.options, &p.review_id)
                    .await?
            }
        };
        self.store
            .publication_posted(p, i64::try_from(id).ok(), None)
            .await?;
        Ok(id)
    }

    async fn turn(&self, p: &PublicationRow) -> Result<Turn, Stop> {
        let github = self.github.as_ref().ok_or_else(|| {
            GitHubError::Credentials(
                "this worker is not the GitHub App (PROVEN_GITHUB_APP_ID, PROVEN_GITHUB_PRIVATE_KEY)"
                    .into(),
            )
        })?;
        let installation = u64::try_from(p.installation_id).unwrap_or_default();
        let token = github.token(installation, &p.repository).await?;
        let publisher = Publisher {
            client: &github.client,
            token: &token,
        };
        let target = target(p);
        let store = &self.store;
        if p.state == PublicationState::Cancelling {
            if let Some(id) = p.check_run_id.and_then(|i| u64::try_from(i).ok()) {
                let why = p.error.clone().unwrap_or_else(|| "superseded".into());
                self.hold(p).await?;
                publisher.cancel_check(&target, id, &why).await?;
            }
            return Ok(Turn::Superseded);
        }
        let check = self.check_run(p, &publisher, &target).await?;
        let review = store.review(&p.review_id).await?;
        match review.status {
            ReviewStatus::Queued | ReviewStatus::Running => return Ok(Turn::Waiting),
            ReviewStatus::Superseded => {
                self.hold(p).await?;
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
        // Posted already (by a turn that died later): the review is not sent again.
        if p.comment_id.is_none() {
            self.hold(p).await?;
            let comment = publisher.post_review(&target, &report).await?;
            store
                .publication_posted(p, None, i64::try_from(comment).ok())
                .await?;
        }
        // The conclusion, then the annotations 50 at a time; each recorded as GitHub takes
        // it, so a resumed turn sends only the rest (annotations sent twice show twice).
        let done = usize::try_from(p.check_updates).unwrap_or_default();
        for (i, update) in check_updates(&report, &self.options)
            .iter()
            .enumerate()
            .skip(done)
        {
            self.hold(p).await?;
            publisher.update_check(&target, check, update).await?;
            store
                .publication_checked(p, i64::try_from(i + 1).unwrap_or(i64::MAX))
                .await?;
        }
        if !self.sarif {
            return Ok(Turn::Done("off"));
        }
        self.hold(p).await?;
        Ok(Turn::Done(
            publisher.upload_sarif(&target, &report).await?.as_str(),
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
