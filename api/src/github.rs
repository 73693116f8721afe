//! `POST /v1/github/webhook`: Proven as a GitHub App. The signature is checked in constant
//! time as the body streams in (a missing or malformed one before a byte is read), within
//! a server-wide budget of unverified bytes, and nothing of the body is used before it
//! holds; each delivery is kept by its id and by its
//! body's hash, so a redelivery (or the same signed body replayed under a new id) creates
//! nothing. A pull request's new head becomes a review of the installation's tenant (its
//! organisation), superseding the pending review of the old head, with a publication that
//! posts the result back; nothing here talks to GitHub.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use proven_github::webhook::{self, Event, PullRequest};
use proven_store::{
    Delivery, GitHubAccount, GitHubPull, InstallationChange, NewPublication, ReviewDelivery,
    ReviewRequest,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::ApiState;
use crate::error::ApiError;

/// What the webhook needs: the app's webhook secret.
pub struct GitHubHook {
    secret: Vec<u8>,
}

impl GitHubHook {
    pub fn new(secret: &str) -> GitHubHook {
        GitHubHook {
            secret: secret.as_bytes().to_vec(),
        }
    }
}

type AppState = State<Arc<ApiState>>;

fn counted(event: &str, outcome: &str) {
    metrics::counter!(
        proven_pipeline::metrics_names::WEBHOOK_DELIVERIES_TOTAL,
        "event" => event.to_string(),
        "outcome" => outcome.to_string()
    )
    .increment(1);
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The event label: a bounded set (anything else is `other`).
fn event_label(event: &str) -> &'static str {
    match event {
        "pull_request" => "pull_request",
        "installation" => "installation",
        "installation_repositories" => "installation_repositories",
        "check_run" => "check_run",
        "ping" => "ping",
        _ => "other",
    }
}

fn answer(outcome: &str, extra: Value) -> (StatusCode, Json<Value>) {
    let mut body = json!({ "outcome": outcome });
    if let (Some(b), Value::Object(more)) = (body.as_object_mut(), extra) {
        b.extend(more);
    }
    let status = if outcome == "accepted" {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    (status, Json(body))
}

pub async fn webhook(
    State(state): AppState,
    request: axum::extract::Request,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let Some(hook) = state.github.clone() else {
        return Err(ApiError::NotFound(
            "the GitHub webhook (PROVEN_GITHUB_APP_ID is not set)".into(),
        ));
    };
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let event = header(&headers, "x-github-event")
        .unwrap_or_default()
        .to_string();
    let label = event_label(&event);
    // The signature header is checked before a byte of the body is read, and the body
    // against it as it streams, within the budget for unverified bodies.
    let refused = |e: webhook::SignatureError| {
        counted(label, e.outcome());
        ApiError::Signature(e.outcome(), e.to_string())
    };
    let mut verifier =
        webhook::Verifier::new(&hook.secret, header(&headers, "x-hub-signature-256"))
            .map_err(refused)?;
    let (body, room) =
        crate::limits::read_unverified(&state, &headers, body, |chunk| verifier.update(chunk))
            .await?;
    verifier.finish().map_err(refused)?;
    drop(room);
    let delivery_id = header(&headers, "x-github-delivery")
        .filter(|d| !d.is_empty() && d.len() <= 100 && d.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| {
            counted(label, "invalid");
            ApiError::InvalidPayload("X-GitHub-Delivery is missing or not an id".into())
        })?
        .to_string();
    let parsed = webhook::parse(&event, &body).map_err(|e| {
        counted(label, "invalid");
        ApiError::InvalidPayload(e.to_string())
    })?;
    let sha = hex::encode(Sha256::digest(&body));
    let delivery = Delivery {
        id: &delivery_id,
        body_sha256: &sha,
        event: &event,
    };
    let result = handle(&state, &delivery, parsed).await;
    match &result {
        Ok((_, Json(b))) => counted(label, b["outcome"].as_str().unwrap_or("accepted")),
        Err(ApiError::QueueFull { .. }) => counted(label, "queue_full"),
        Err(ApiError::Repository(_)) => counted(label, "refused"),
        Err(_) => counted(label, "error"),
    }
    result
}

async fn handle(
    state: &ApiState,
    delivery: &Delivery<'_>,
    event: Event,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    match event {
        Event::Review(pr) => review(state, delivery, &pr, None).await,
        Event::Installation {
            installation_id,
            account,
            account_id,
            action,
            added,
            removed,
        } => {
            let change = InstallationChange {
                installation_id: id(installation_id)?,
                account: GitHubAccount {
                    id: id(account_id)?,
                    login: &account,
                },
                removed: matches!(action.as_str(), "deleted" | "suspend"),
                repositories_added: &added,
                repositories_removed: &removed,
            };
            Ok(
                match state.store.github_installation(delivery, &change).await? {
                    Some(_) => answer("accepted", json!({})),
                    None => answer("duplicate", json!({})),
                },
            )
        }
        Event::Rerequested {
            installation_id,
            check_run_id,
            ..
        } => match state
            .store
            .github_check_run_publication(id(installation_id)?, id(check_run_id)?)
            .await?
        {
            // Only a check run Proven started, of this installation, is reviewed again.
            Some((publication, request)) => {
                let request: ReviewRequest = serde_json::from_str(&request)
                    .map_err(|e| ApiError::Unavailable(format!("a stored request: {e}")))?;
                rerun(state, delivery, &publication, request).await
            }
            None => ignored(state, delivery).await,
        },
        Event::PullRequestIgnored { .. } | Event::Ping | Event::Other(_) => {
            ignored(state, delivery).await
        }
    }
}

fn id(n: u64) -> Result<i64, ApiError> {
    i64::try_from(n).map_err(|_| ApiError::InvalidPayload(format!("id {n} is out of range")))
}

async fn ignored(
    state: &ApiState,
    delivery: &Delivery<'_>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    Ok(if state.store.record_delivery(delivery, "ignored").await? {
        answer("ignored", json!({}))
    } else {
        answer("duplicate", json!({}))
    })
}

/// A review of the pull request's head, and its publication; a re-run keeps the earlier
/// request's repository and revisions.
async fn review(
    state: &ApiState,
    delivery: &Delivery<'_>,
    pr: &PullRequest,
    again: Option<ReviewRequest>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    crate::routes::check_repository(state, &pr.clone_url).await?;
    // A re-run's installation is known (it published the review): its tenant stays.
    let account = match again {
        Some(_) => None,
        None => Some(GitHubAccount {
            id: id(pr.owner_id)?,
            login: &pr.owner,
        }),
    };
    let trace_id = uuid::Uuid::now_v7().simple().to_string();
    let request = ReviewRequest {
        repository: pr.clone_url.clone(),
        base: pr.base_sha.clone(),
        head: pr.head_sha.clone(),
        pull_request: Some(format!("github:{}#{}", pr.repository, pr.number)),
        trace_id: Some(trace_id.clone()),
        github: Some(GitHubPull {
            installation_id: pr.installation_id,
            repository: pr.repository.clone(),
            pull_number: pr.number,
            head_sha: pr.head_sha.clone(),
        }),
        ..again.unwrap_or_default()
    };
    // The tenant is set by the store, in the transaction that finds the installation's.
    let review = crate::routes::pipeline_review("", &request, 0, None)?;
    let publication = NewPublication {
        installation_id: id(pr.installation_id)?,
        repository: pr.repository.clone(),
        pull_number: id(pr.number)?,
        head_sha: pr.head_sha.clone(),
        head_at: pr.updated_at,
    };

    let recorded = state
        .store
        .github_review_delivery(
            delivery,
            (id(pr.installation_id)?, account),
            &review,
            &publication,
            state.limits.max_queued_reviews,
        )
        .await?;
    Ok(match recorded {
        ReviewDelivery::Accepted { superseded } => {
            crate::routes::submitted(1, 0);
            answer(
                "accepted",
                json!({"review": review.id, "trace_id": trace_id, "superseded": superseded}),
            )
        }
        ReviewDelivery::Duplicate => answer("duplicate", json!({})),
        // Out of order, or a re-run of an older head: the newer head's review stands.
        ReviewDelivery::Stale { newer_head } => answer("stale", json!({"newer_head": newer_head})),
    })
}

async fn rerun(
    state: &ApiState,
    delivery: &Delivery<'_>,
    publication: &proven_store::PublicationRow,
    request: ReviewRequest,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let Some(github) = request.github.clone() else {
        return ignored(state, delivery).await;
    };
    let pr = PullRequest {
        installation_id: github.installation_id,
        repository: github.repository.clone(),
        owner: String::new(),
        owner_id: 0,
        clone_url: request.repository.clone(),
        number: github.pull_number,
        base_sha: request.base.clone(),
        head_sha: publication.head_sha.clone(),
        draft: false,
        updated_at: publication.head_at,
    };
    review(state, delivery, &pr, Some(request)).await
}
