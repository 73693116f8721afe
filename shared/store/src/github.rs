//! Proven as a GitHub App: webhook deliveries kept so a redelivery (or the same signed body
//! under another delivery id) creates nothing, installations and their tenants, and
//! publications: the durable job that posts a review on its pull request, claimed under a
//! lease, recording what it posted as it goes.

use sqlx::Row;

use crate::pipeline::{Tx, insert_review, lock_tenant, within_cap};
use crate::sql::{epoch, now};
use crate::{NewPipelineReview, Store, StoreError};

/// Failed calls (5xx, network) of one publication at most; a rate limit spends none.
pub const MAX_PUBLISH_ATTEMPTS: i64 = 5;

/// A webhook delivery as it arrived.
#[derive(Debug, Clone, Copy)]
pub struct Delivery<'a> {
    /// `X-GitHub-Delivery`.
    pub id: &'a str,
    /// Hex SHA-256 of the raw body.
    pub body_sha256: &'a str,
    /// `X-GitHub-Event` (with the action, where one is read).
    pub event: &'a str,
}

/// Where a review is to be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPublication {
    pub installation_id: i64,
    pub repository: String,
    pub pull_number: i64,
    pub head_sha: String,
    /// When GitHub last updated the pull request, as the delivery said (seconds since the
    /// epoch); a re-run carries its publication's.
    pub head_at: Option<i64>,
}

/// A GitHub account (an organisation or a user): its numeric id is forever, its login is
/// not (renamed, and then free for another account to take).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GitHubAccount<'a> {
    pub id: i64,
    pub login: &'a str,
}

/// What a review delivery created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewDelivery {
    /// A review and its publication, superseding these (the pull request's older heads).
    Accepted { superseded: Vec<String> },
    /// The delivery (or its body) was seen before: nothing.
    Duplicate,
    /// The pull request has a newer head than this delivery's (it arrived out of order, or
    /// is a re-run of an older head): recorded, nothing created.
    Stale { newer_head: String },
}

/// Where a publication stands (stored by name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicationState {
    Pending,
    /// Superseded after its check run started: the check run is to be cancelled.
    Cancelling,
    Done,
    Failed,
    Superseded,
}

impl PublicationState {
    pub const ALL: [PublicationState; 5] = [
        PublicationState::Pending,
        PublicationState::Cancelling,
        PublicationState::Done,
        PublicationState::Failed,
        PublicationState::Superseded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PublicationState::Pending => "pending",
            PublicationState::Cancelling => "cancelling",
            PublicationState::Done => "done",
            PublicationState::Failed => "failed",
            PublicationState::Superseded => "superseded",
        }
    }

    fn parse(s: &str) -> Result<PublicationState, StoreError> {
        PublicationState::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| StoreError::Corrupt(format!("publication state {s:?}")))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicationRow {
    pub review_id: String,
    pub tenant_id: String,
    pub installation_id: i64,
    pub repository: String,
    pub pull_number: i64,
    pub head_sha: String,
    pub state: PublicationState,
    pub attempts: i64,
    pub check_run_id: Option<i64>,
    pub comment_id: Option<i64>,
    pub sarif: Option<String>,
    pub error: Option<String>,
    /// The claim's fence: every write of the publication names it.
    pub lease_token: Option<String>,
    /// How often it was claimed (past one, a check run may exist unrecorded).
    pub claims: i64,
    /// The check run's updates GitHub took (the conclusion, then one per 50 annotations).
    pub check_updates: i64,
    pub head_at: Option<i64>,
}

const COLUMNS: &str = "review_id, tenant_id, installation_id, repository, pull_number, head_sha, \
                       state, attempts, check_run_id, comment_id, sarif, error, lease_token, \
                       claims, check_updates, head_at";

fn row(r: &sqlx::any::AnyRow) -> Result<PublicationRow, StoreError> {
    Ok(PublicationRow {
        review_id: r.try_get("review_id")?,
        tenant_id: r.try_get("tenant_id")?,
        installation_id: r.try_get("installation_id")?,
        repository: r.try_get("repository")?,
        pull_number: r.try_get("pull_number")?,
        head_sha: r.try_get("head_sha")?,
        state: PublicationState::parse(&r.try_get::<String, _>("state")?)?,
        attempts: r.try_get("attempts")?,
        check_run_id: r.try_get("check_run_id")?,
        comment_id: r.try_get("comment_id")?,
        sarif: r.try_get("sarif")?,
        error: r.try_get("error")?,
        lease_token: r.try_get("lease_token")?,
        claims: r.try_get("claims")?,
        check_updates: r.try_get("check_updates")?,
        head_at: r.try_get("head_at")?,
    })
}

/// Records the delivery in `tx`; false when it (or its body) was seen before.
async fn insert_delivery(
    tx: &mut Tx<'_>,
    d: &Delivery<'_>,
    outcome: &str,
) -> Result<bool, StoreError> {
    let inserted = sqlx::query(
        "INSERT INTO github_deliveries (delivery_id, body_sha256, event, outcome, received_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
    )
    .bind(d.id)
    .bind(d.body_sha256)
    .bind(d.event)
    .bind(outcome)
    .bind(now())
    .execute(&mut **tx)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// The installation's tenant, created with the installation when missing. An installation
/// keeps the tenant it has; a new installation of an account takes the tenant of its
/// account's earlier one, else the tenant named `github:ACCOUNT_ID` (made here, or made
/// beforehand by the operator). Never a login: a login renamed and taken by another account
/// would hand it this one's reviews.
async fn ensure_installation(
    tx: &mut Tx<'_>,
    installation_id: i64,
    account: Option<GitHubAccount<'_>>,
) -> Result<String, StoreError> {
    let Some(account) = account else {
        // A re-run: the installation published the review, so it is known.
        return sqlx::query_scalar(
            "SELECT tenant_id FROM github_installations WHERE installation_id = $1",
        )
        .bind(installation_id)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("GitHub installation {installation_id}")));
    };
    let known: Option<String> = sqlx::query_scalar(
        "SELECT tenant_id FROM github_installations WHERE installation_id = $1 \
         OR account_id = $2 ORDER BY CASE WHEN installation_id = $1 THEN 0 ELSE 1 END, \
         updated_at DESC LIMIT 1",
    )
    .bind(installation_id)
    .bind(account.id)
    .fetch_optional(&mut **tx)
    .await?;
    let tenant = match known {
        Some(tenant) => tenant,
        None => {
            let name = format!("github:{}", account.id);
            sqlx::query(
                "INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO NOTHING",
            )
            .bind(uuid::Uuid::now_v7().to_string())
            .bind(&name)
            .bind(now())
            .execute(&mut **tx)
            .await?;
            sqlx::query_scalar("SELECT id FROM tenants WHERE name = $1")
                .bind(&name)
                .fetch_one(&mut **tx)
                .await?
        }
    };
    sqlx::query(
        "INSERT INTO github_installations (installation_id, account, account_id, tenant_id, \
         updated_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (installation_id) DO UPDATE SET \
         account = $2, account_id = $3, removed_at = NULL, updated_at = $5",
    )
    .bind(installation_id)
    .bind(account.login)
    .bind(account.id)
    .bind(&tenant)
    .bind(now())
    .execute(&mut **tx)
    .await?;
    Ok(tenant)
}

/// What an installation delivery changed.
#[derive(Debug, Clone)]
pub struct InstallationChange<'a> {
    pub installation_id: i64,
    pub account: GitHubAccount<'a>,
    /// The app was uninstalled (or suspended).
    pub removed: bool,
    pub repositories_added: &'a [String],
    pub repositories_removed: &'a [String],
}

impl Store {
    /// Records a delivery that asks for nothing to run; false when it was seen before.
    pub async fn record_delivery(
        &self,
        d: &Delivery<'_>,
        outcome: &str,
    ) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        let new = insert_delivery(&mut tx, d, outcome).await?;
        tx.commit().await?;
        Ok(new)
    }

    /// An `installation` / `installation_repositories` delivery: the installation, its
    /// tenant and its repositories, with the delivery, in one transaction. None: seen before.
    pub async fn github_installation(
        &self,
        d: &Delivery<'_>,
        change: &InstallationChange<'_>,
    ) -> Result<Option<String>, StoreError> {
        let mut tx = self.write_tx().await?;
        if !insert_delivery(&mut tx, d, "accepted").await? {
            return Ok(None);
        }
        let tenant =
            ensure_installation(&mut tx, change.installation_id, Some(change.account)).await?;
        if change.removed {
            sqlx::query(
                "UPDATE github_installations SET removed_at = $1 WHERE installation_id = $2",
            )
            .bind(now())
            .bind(change.installation_id)
            .execute(&mut *tx)
            .await?;
        }
        for name in change.repositories_added {
            sqlx::query(
                "INSERT INTO github_repositories (installation_id, full_name, added_at) \
                 VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            )
            .bind(change.installation_id)
            .bind(name)
            .bind(now())
            .execute(&mut *tx)
            .await?;
        }
        for name in change.repositories_removed {
            sqlx::query(
                "DELETE FROM github_repositories WHERE installation_id = $1 AND full_name = $2",
            )
            .bind(change.installation_id)
            .bind(name)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(Some(tenant))
    }

    /// The repositories recorded for an installation, by name.
    pub async fn github_repositories(
        &self,
        installation_id: i64,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT full_name FROM github_repositories WHERE installation_id = $1 ORDER BY full_name",
        )
        .bind(installation_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// A delivery that asks for a review: the delivery, the installation's tenant, the
    /// review (within the tenant's cap; it supersedes the pull request's unfinished older
    /// reviews, whose publications end or cancel their check run) and its publication, in
    /// one transaction. A delivery older than the pull request's newest head (its `head_at`
    /// earlier than a publication's of another head) is recorded as stale and creates
    /// nothing: it cannot supersede what is newer.
    pub async fn github_review_delivery(
        &self,
        d: &Delivery<'_>,
        (installation_id, account): (i64, Option<GitHubAccount<'_>>),
        review: &NewPipelineReview,
        publication: &NewPublication,
        max_unfinished: i64,
    ) -> Result<ReviewDelivery, StoreError> {
        let mut tx = self.write_tx().await?;
        if !insert_delivery(&mut tx, d, "accepted").await? {
            return Ok(ReviewDelivery::Duplicate);
        }
        let tenant = ensure_installation(&mut tx, installation_id, account).await?;
        let mut review = review.clone();
        review.tenant_id = Some(tenant.clone());
        lock_tenant(&mut tx, self.dialect, &tenant).await?;
        if let Some(at) = publication.head_at {
            let newer: Option<String> = sqlx::query_scalar(
                "SELECT head_sha FROM github_publications WHERE repository = $1 \
                 AND pull_number = $2 AND head_sha <> $3 AND head_at > $4 \
                 ORDER BY head_at DESC LIMIT 1",
            )
            .bind(&publication.repository)
            .bind(publication.pull_number)
            .bind(&publication.head_sha)
            .bind(at)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(newer_head) = newer {
                sqlx::query(
                    "UPDATE github_deliveries SET outcome = 'stale' WHERE delivery_id = $1",
                )
                .bind(d.id)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                return Ok(ReviewDelivery::Stale { newer_head });
            }
        }
        let superseded = insert_review(&mut tx, &review, None).await?;
        within_cap(&mut tx, &tenant, 1, max_unfinished).await?;
        sqlx::query(
            "INSERT INTO github_publications (review_id, tenant_id, installation_id, repository, \
             pull_number, head_sha, head_at, state, not_before, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 0, $8, $8)",
        )
        .bind(&review.id)
        .bind(&tenant)
        .bind(publication.installation_id)
        .bind(&publication.repository)
        .bind(publication.pull_number)
        .bind(&publication.head_sha)
        .bind(publication.head_at)
        .bind(now())
        .execute(&mut *tx)
        .await?;
        for old in &superseded {
            sqlx::query(
                "UPDATE github_publications SET state = CASE WHEN check_run_id IS NULL \
                 THEN 'superseded' ELSE 'cancelling' END, error = $1, updated_at = $2 \
                 WHERE review_id = $3 AND state = 'pending'",
            )
            .bind(format!(
                "superseded by {} at {}",
                review.id, publication.head_sha
            ))
            .bind(now())
            .bind(old)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(ReviewDelivery::Accepted { superseded })
    }

    /// The publication whose check run this is (of this installation: no other may have it
    /// reviewed again), with its review's request (JSON): what the check run's "Re-run"
    /// reviews again.
    pub async fn github_check_run_publication(
        &self,
        installation_id: i64,
        check_run_id: i64,
    ) -> Result<Option<(PublicationRow, String)>, StoreError> {
        let sql = format!(
            "SELECT {}, r.request FROM github_publications p JOIN reviews r ON r.id = p.review_id \
             WHERE p.installation_id = $1 AND p.check_run_id = $2 LIMIT 1",
            COLUMNS
                .split(", ")
                .map(|c| format!("p.{}", c.trim()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let found = sqlx::query(crate::sql::trusted(sql))
            .bind(installation_id)
            .bind(check_run_id)
            .fetch_optional(&self.pool)
            .await?;
        match found {
            Some(r) => Ok(Some((row(&r)?, r.try_get("request")?))),
            None => Ok(None),
        }
    }

    pub async fn publication(&self, review_id: &str) -> Result<Option<PublicationRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM github_publications WHERE review_id = $1");
        sqlx::query(crate::sql::trusted(sql))
            .bind(review_id)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(row)
            .transpose()
    }

    /// Claims a publication with work to do for `lease_secs`: a check run to start, a
    /// finished review to post, or a superseded one's check run to cancel. Tenants take
    /// turns (each one's oldest first, then the next tenant's), so one organisation's many
    /// pull requests never hold another's back. None: nothing to do now (or another worker
    /// took the one chosen: the update re-checks the lease).
    pub async fn claim_publication(
        &self,
        lease_secs: i64,
    ) -> Result<Option<PublicationRow>, StoreError> {
        let now_s = epoch();
        // Turns are counted over every unfinished publication of the tenant, the ones in
        // hand included, so a tenant whose first is being worked on waits for the others.
        let pick = "SELECT w.review_id FROM (SELECT p.review_id, p.created_at, ROW_NUMBER() OVER \
             (PARTITION BY p.tenant_id ORDER BY p.created_at, p.review_id) AS turn, \
             CASE WHEN p.not_before <= $1 AND (p.lease_until IS NULL OR p.lease_until < $1) \
                  AND (p.state = 'cancelling' OR p.check_run_id IS NULL \
                       OR r.status NOT IN ('queued', 'running')) THEN 1 ELSE 0 END AS ready \
             FROM github_publications p JOIN reviews r ON r.id = p.review_id \
             WHERE p.state IN ('pending', 'cancelling')) w \
             WHERE w.ready = 1 ORDER BY w.turn, w.created_at, w.review_id LIMIT 1";
        let Some(id) = self.next_in_turn(pick, now_s).await? else {
            return Ok(None);
        };
        let claim = format!(
            "UPDATE github_publications SET lease_until = $2, lease_token = $3, \
             claims = claims + 1, updated_at = $4 \
             WHERE review_id = $5 AND state IN ('pending', 'cancelling') \
             AND (lease_until IS NULL OR lease_until < $1) RETURNING {COLUMNS}"
        );
        sqlx::query(crate::sql::trusted(claim))
            .bind(now_s)
            .bind(now_s + lease_secs)
            .bind(uuid::Uuid::now_v7().to_string())
            .bind(now())
            .bind(&id)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(row)
            .transpose()
    }

    /// Runs one fenced write of a claimed publication: refused ([`StoreError::LeaseLost`])
    /// when the claim's token is no longer the publication's (its lease ran out and another
    /// worker claimed it, or it ended).
    async fn fenced<'q>(
        &self,
        held: &PublicationRow,
        query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
    ) -> Result<(), StoreError> {
        let done = query.execute(&self.pool).await?;
        if done.rows_affected() == 0 {
            return Err(lease_lost(held));
        }
        Ok(())
    }

    /// Renews the claim for `lease_secs` more (between GitHub calls, so a slow publish is
    /// not taken over while it works); [`StoreError::LeaseLost`] when it was taken over.
    pub async fn publication_hold(
        &self,
        held: &PublicationRow,
        lease_secs: i64,
    ) -> Result<(), StoreError> {
        let q = sqlx::query(
            "UPDATE github_publications SET lease_until = $1 WHERE review_id = $2 \
             AND lease_token = $3 AND state IN ('pending', 'cancelling')",
        )
        .bind(epoch() + lease_secs)
        .bind(&held.review_id)
        .bind(&held.lease_token);
        self.fenced(held, q).await
    }

    /// Records what was posted (the check run's id, the PR review's id) at once, before the
    /// next call: a publish that dies after this resumes from it. A check run started for
    /// a publication superseded meanwhile is to be cancelled.
    pub async fn publication_posted(
        &self,
        held: &PublicationRow,
        check_run_id: Option<i64>,
        comment_id: Option<i64>,
    ) -> Result<(), StoreError> {
        let q = sqlx::query(
            "UPDATE github_publications SET check_run_id = COALESCE($1, check_run_id), \
             comment_id = COALESCE($2, comment_id), state = CASE WHEN state = 'superseded' \
             AND COALESCE($1, check_run_id) IS NOT NULL THEN 'cancelling' ELSE state END, \
             updated_at = $3 WHERE review_id = $4 AND lease_token = $5",
        )
        .bind(check_run_id)
        .bind(comment_id)
        .bind(now())
        .bind(&held.review_id)
        .bind(&held.lease_token);
        self.fenced(held, q).await
    }

    /// Records that GitHub took the check run's first `updates` updates (the conclusion,
    /// then each further 50 annotations): a resumed publish sends only the rest.
    pub async fn publication_checked(
        &self,
        held: &PublicationRow,
        updates: i64,
    ) -> Result<(), StoreError> {
        let q = sqlx::query(
            "UPDATE github_publications SET check_updates = $1, updated_at = $2 \
             WHERE review_id = $3 AND lease_token = $4",
        )
        .bind(updates)
        .bind(now())
        .bind(&held.review_id)
        .bind(&held.lease_token);
        self.fenced(held, q).await
    }

    /// Gives the publication back to be claimed after `secs`: a rate limit (no attempt
    /// spent) or a failed call (`spend`: one attempt; past [`MAX_PUBLISH_ATTEMPTS`] it
    /// fails with `why`). The state it is left in.
    pub async fn publication_later(
        &self,
        held: &PublicationRow,
        secs: i64,
        why: &str,
        spend: bool,
    ) -> Result<PublicationState, StoreError> {
        let state: String = sqlx::query_scalar(
            "UPDATE github_publications SET attempts = attempts + $1, not_before = $2, \
             lease_until = NULL, lease_token = NULL, error = $3, updated_at = $4, \
             state = CASE WHEN attempts + $1 >= $5 THEN 'failed' ELSE state END \
             WHERE review_id = $6 AND lease_token = $7 RETURNING state",
        )
        .bind(i64::from(spend))
        .bind(epoch() + secs.max(0))
        .bind(why)
        .bind(now())
        .bind(MAX_PUBLISH_ATTEMPTS)
        .bind(&held.review_id)
        .bind(&held.lease_token)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| lease_lost(held))?;
        PublicationState::parse(&state)
    }

    /// Holds every unfinished publication of an installation until `secs` from now: GitHub's
    /// rate limit is the installation's, so none of its publications is claimed only to be
    /// limited again. Spends no attempt; how many were held.
    pub async fn installation_later(
        &self,
        installation_id: i64,
        secs: i64,
    ) -> Result<u64, StoreError> {
        let until = epoch() + secs.max(0);
        let done = sqlx::query(
            "UPDATE github_publications SET not_before = $1 WHERE installation_id = $2 \
             AND state IN ('pending', 'cancelling') AND not_before < $1",
        )
        .bind(until)
        .bind(installation_id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    /// Ends the publication: `done` (with the SARIF outcome), `failed` (why), or
    /// `superseded` (its check run cancelled).
    pub async fn publication_end(
        &self,
        held: &PublicationRow,
        state: PublicationState,
        error: Option<&str>,
        sarif: Option<&str>,
    ) -> Result<(), StoreError> {
        let q = sqlx::query(
            "UPDATE github_publications SET state = $1, error = COALESCE($2, error), sarif = $3, \
             lease_until = NULL, lease_token = NULL, updated_at = $4 \
             WHERE review_id = $5 AND lease_token = $6",
        )
        .bind(state.as_str())
        .bind(error)
        .bind(sarif)
        .bind(now())
        .bind(&held.review_id)
        .bind(&held.lease_token);
        self.fenced(held, q).await
    }
}

fn lease_lost(held: &PublicationRow) -> StoreError {
    StoreError::LeaseLost(format!("publication of review {}", held.review_id))
}
