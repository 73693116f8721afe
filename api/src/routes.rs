//! The handlers. Each one: authenticate, read or write the store, answer a DTO.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use proven_store::{NewPipelineReview, ReviewRequest, ReviewSummary as StoredSummary};
use serde::Deserialize;

use crate::ApiState;
use crate::auth::AuthTenant;
use crate::dto::*;
use crate::error::ApiError;

type AppState = State<Arc<ApiState>>;

/// One root span per request.
pub async fn http_span(request: Request, next: Next) -> Response {
    let span = tracing::info_span!("http_request", method = %request.method(), path = %request.uri().path());
    let _guard = span.enter();
    let response = next.run(request).await;
    tracing::debug!(status = response.status().as_u16(), "answered");
    response
}

fn summary(r: StoredSummary) -> ReviewSummary {
    ReviewSummary {
        id: r.id,
        status: r.status,
        created_at: r.created_at,
        finished_at: r.finished_at,
        repository: r.repository,
        base: r.base_rev,
        head: r.head_rev,
        priority: priority_name(r.priority).into(),
        batch_id: r.batch_id,
    }
}

/// `base` and `head`; the repository is the policy's to judge ([`check_repository`]).
fn check_request(base: &str, head: &str) -> Result<(), ApiError> {
    for (name, value) in [("base", base), ("head", head)] {
        if value.trim().is_empty() {
            return Err(ApiError::InvalidRequest(format!("{name} is empty")));
        }
        // Characters, as the document's maxLength counts them (not bytes).
        if value.chars().count() > 4096 {
            return Err(ApiError::InvalidRequest(format!(
                "{name} is longer than 4096 characters"
            )));
        }
        if value.contains('\0') {
            return Err(ApiError::InvalidRequest(format!(
                "{name} contains a NUL character"
            )));
        }
    }
    Ok(())
}

/// The operator's `repository` policy, before anything is stored.
pub(crate) async fn check_repository(state: &ApiState, repository: &str) -> Result<(), ApiError> {
    state
        .repositories
        .check(repository)
        .await
        .map(|_| ())
        .map_err(ApiError::Repository)
}

/// The stored form of a request of `tenant_id`.
pub(crate) fn pipeline_review(
    tenant_id: &str,
    request: &ReviewRequest,
    priority: i64,
    batch_id: Option<String>,
) -> Result<NewPipelineReview, ApiError> {
    NewPipelineReview::of_request(tenant_id, request, priority, batch_id)
        .map_err(|e| ApiError::InvalidRequest(e.to_string()))
}

pub(crate) fn submitted(count: usize, priority: i64) {
    use proven_pipeline::metrics_names as m;
    metrics::counter!(m::REVIEWS_TOTAL, "status" => "submitted", "priority" => m::priority_label(priority))
        .increment(count as u64);
}

/// The id in a path. No stored id holds a NUL (Postgres text cannot), so one that does is
/// not found, and never reaches the store (whose driver would fail on it).
fn path_id(id: Result<Path<String>, PathRejection>, what: &str) -> Result<String, ApiError> {
    let Path(id) = id.map_err(|e| rejected("path", e.body_text()))?;
    if id.contains('\0') {
        return Err(ApiError::NotFound(format!(
            "{what} {}",
            id.escape_default()
        )));
    }
    Ok(id)
}

/// Text that reaches the store: Postgres cannot hold a NUL character, so it is refused by
/// name here rather than failing there.
fn no_nul(name: &str, value: Option<&str>) -> Result<(), ApiError> {
    if value.is_some_and(|v| v.contains('\0')) {
        return Err(ApiError::InvalidRequest(format!(
            "{name} contains a NUL character"
        )));
    }
    Ok(())
}

/// The statuses a review can have (the `status` filter of the list).
const STATUSES: &[&str] = &[
    "queued",
    "running",
    "complete",
    "incomplete",
    "partial",
    "failed",
    "superseded",
];

/// A malformed body, query or path is a 422 naming what was wrong, like every other bad
/// request (axum's own rejections answer 400/415 in plain text).
fn rejected(what: &str, e: impl std::fmt::Display) -> ApiError {
    ApiError::InvalidRequest(format!("{what}: {e}"))
}

pub async fn create_review(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    body: Result<Json<CreateReview>, JsonRejection>,
) -> Result<(StatusCode, Json<ReviewAccepted>), ApiError> {
    let Json(body) = body.map_err(|e| rejected("request body", e.body_text()))?;
    check_request(&body.base, &body.head)?;
    check_repository(&state, &body.repository).await?;
    let priority = priority_value(body.priority.as_deref()).map_err(ApiError::InvalidRequest)?;
    no_nul("pull_request", body.pull_request.as_deref())?;
    if let Some(secs) = body.deadline_secs
        && secs > state.limits.max_deadline_secs
    {
        return Err(ApiError::InvalidRequest(format!(
            "deadline_secs {secs} is over the maximum of {} (PROVEN_MAX_DEADLINE_SECONDS)",
            state.limits.max_deadline_secs
        )));
    }
    let trace_id = uuid::Uuid::now_v7().simple().to_string();
    let request = ReviewRequest {
        repository: body.repository,
        base: body.base,
        head: body.head,
        diff: body.diff.unwrap_or_default(),
        pull_request: body.pull_request,
        deadline_secs: body.deadline_secs,
        trace_id: Some(trace_id.clone()),
        rereview_of: None,
        github: None,
    };
    let review = pipeline_review(&tenant.id, &request, priority, None)?;
    let superseded = state
        .store
        .submit_review_within(&review, state.limits.max_queued_reviews)
        .await?;
    submitted(1, priority);
    let id = review.id;
    Ok((
        StatusCode::ACCEPTED,
        Json(ReviewAccepted {
            id,
            status: "queued".into(),
            trace_id,
            superseded,
        }),
    ))
}

/// The most characters a question may hold.
const MAX_QUESTION_CHARS: usize = 4096;

pub async fn create_question(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    body: Result<Json<CreateQuestion>, JsonRejection>,
) -> Result<(StatusCode, Json<QuestionAccepted>), ApiError> {
    let Json(body) = body.map_err(|e| rejected("request body", e.body_text()))?;
    let rev = body.rev.clone().unwrap_or_else(|| "HEAD".into());
    if rev.trim().is_empty() || rev.chars().count() > 4096 {
        return Err(ApiError::InvalidRequest(
            "rev is empty or longer than 4096 characters".into(),
        ));
    }
    no_nul("rev", Some(&rev))?;
    if body.question.trim().is_empty() {
        return Err(ApiError::InvalidRequest("question is empty".into()));
    }
    if body.question.chars().count() > MAX_QUESTION_CHARS {
        return Err(ApiError::InvalidRequest(format!(
            "question is longer than {MAX_QUESTION_CHARS} characters"
        )));
    }
    no_nul("question", Some(&body.question))?;
    check_repository(&state, &body.repository).await?;
    let id = state
        .store
        .submit_question(
            &tenant.id,
            (&body.repository, &rev, &body.question),
            Some(state.limits.max_queued_questions),
        )
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(QuestionAccepted {
            id,
            status: "queued".into(),
        }),
    ))
}

pub async fn get_question(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<QuestionView>, ApiError> {
    let id = path_id(id, "question")?;
    let q = state
        .store
        .question(&tenant.id, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("question {id}")))?;
    Ok(Json(QuestionView {
        id: q.id,
        repository: q.repository,
        rev: q.rev,
        question: q.question,
        status: q.status,
        attempts: q.attempts,
        created_at: q.created_at,
        updated_at: q.updated_at,
        answer: q
            .answer
            .as_deref()
            .and_then(|a| serde_json::from_str(a).ok()),
        error: q.error,
    }))
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    status: Option<String>,
    batch: Option<String>,
    before: Option<String>,
    limit: Option<i64>,
}

pub async fn list_reviews(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<ReviewList>, ApiError> {
    let Query(q) = q.map_err(|e| rejected("query", e.body_text()))?;
    if let Some(status) = q.status.as_deref()
        && !STATUSES.contains(&status)
    {
        return Err(ApiError::InvalidRequest(format!(
            "status {status:?} is not one of {}",
            STATUSES.join(", ")
        )));
    }
    no_nul("batch", q.batch.as_deref())?;
    let limit = q.limit.unwrap_or(50);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::InvalidRequest(format!(
            "limit {limit} is not between 1 and 500"
        )));
    }
    let before = match q.before.as_deref() {
        // A cursor is a time in microseconds: digits only. One past any time there can be
        // (more than i64 holds) means "before everything ends", not an error.
        Some(b) if !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()) => {
            Some(b.parse::<i64>().unwrap_or(i64::MAX))
        }
        Some(b) => {
            return Err(ApiError::InvalidRequest(format!(
                "before {b:?} is not a cursor (the digits of a `next`)"
            )));
        }
        None => None,
    };
    let rows = state
        .store
        .list_reviews(
            &tenant.id,
            q.status.as_deref(),
            q.batch.as_deref(),
            before,
            limit + 1,
        )
        .await?;
    let more = rows.len() as i64 > limit;
    let next = if more {
        rows.get(limit as usize - 1)
            .map(|r| r.created_us.to_string())
    } else {
        None
    };
    let reviews = rows.into_iter().take(limit as usize).map(summary).collect();
    Ok(Json(ReviewList { reviews, next }))
}

/// Another tenant's review is "not found": ids reveal nothing.
async fn owned(state: &ApiState, tenant_id: &str, review_id: &str) -> Result<(), ApiError> {
    match state.store.review_tenant(review_id).await {
        Ok(Some(owner)) if owner == tenant_id => Ok(()),
        Ok(_) | Err(proven_store::StoreError::NotFound(_)) => {
            Err(ApiError::NotFound(format!("review {review_id}")))
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn get_review(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<ReviewView>, ApiError> {
    let id = path_id(id, "review")?;
    let summary = state
        .store
        .review_summary(&tenant.id, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("review {id}")))?;
    let row = state.store.review(&id).await?;
    let steps = state
        .store
        .steps_of(&id)
        .await?
        .into_iter()
        .map(|s| StepView {
            step: s.id.step,
            key: s.id.key,
            state: s.state,
            attempts: s.attempts,
        })
        .collect();
    let result = row
        .result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok());
    Ok(Json(ReviewView {
        summary: ReviewSummary {
            id: row.id,
            status: row.status.as_str().into(),
            created_at: row.created_at,
            finished_at: row.finished_at,
            repository: row.repository,
            base: row.base_rev,
            head: row.head_rev,
            priority: priority_name(summary.priority).into(),
            batch_id: summary.batch_id,
        },
        steps,
        result,
    }))
}

pub async fn get_trace(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    id: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let id = path_id(id, "review")?;
    owned(&state, &tenant.id, &id).await?;
    let rows = state.store.trace(&id).await?;
    let mut body = String::new();
    for row in rows {
        let line = serde_json::json!({
            "review_id": row.review_id, "seq": row.seq, "at": row.at, "run_id": row.run_id,
            "kind": row.kind, "event": row.event,
        });
        body.push_str(&line.to_string());
        body.push('\n');
    }
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], body).into_response())
}

/// What a batch request asks to review: its list of reviews, or the re-reviews its
/// selector (`change_set` or `advisories_changed_since`) picks, each with the review it
/// re-reviews. Exactly one of the two is allowed.
async fn batch_items(
    state: &ApiState,
    tenant_id: &str,
    body: CreateBatch,
) -> Result<(Vec<BatchItem>, Vec<Option<String>>), ApiError> {
    let selector = match (&body.change_set, &body.advisories_changed_since) {
        (Some(_), Some(_)) => {
            return Err(ApiError::InvalidRequest(
                "change_set and advisories_changed_since: one selector at a time".into(),
            ));
        }
        (Some(set), None) => Some(("change_set", set.clone())),
        (None, Some(since)) => Some(("advisories_changed_since", since.clone())),
        (None, None) => None,
    };
    match (body.reviews, selector) {
        (Some(_), Some(_)) => Err(ApiError::InvalidRequest(
            "reviews and a selector: a batch is a list of reviews or a selector, not both".into(),
        )),
        (None, None) => Err(ApiError::InvalidRequest(
            "a batch needs reviews (a list) or a selector (change_set, advisories_changed_since)"
                .into(),
        )),
        (Some(list), None) => {
            if list.is_empty() {
                return Err(ApiError::InvalidRequest(
                    "reviews is empty: a batch holds at least one review".into(),
                ));
            }
            let previous = vec![None; list.len()];
            Ok((list, previous))
        }
        (None, Some((field, value))) => selected_rereviews(state, tenant_id, field, &value).await,
    }
}

/// The re-reviews a batch's selector `field` = `value` picks, each with the review it
/// re-reviews. Selected changes that newly affect nothing are a batch of no reviews: kept,
/// and done at once.
async fn selected_rereviews(
    state: &ApiState,
    tenant_id: &str,
    field: &'static str,
    value: &str,
) -> Result<(Vec<BatchItem>, Vec<Option<String>>), ApiError> {
    if value.trim().is_empty() || value.chars().count() > 4096 {
        return Err(ApiError::InvalidRequest(format!(
            "{field} is empty or longer than 4096 characters"
        )));
    }
    no_nul(field, Some(value))?;
    let chosen = if field == "change_set" {
        crate::RereviewSelector::ChangeSet(value)
    } else {
        time::OffsetDateTime::parse(value.trim(), &time::format_description::well_known::Rfc3339)
            .map_err(|e| {
            ApiError::InvalidRequest(format!(
                "advisories_changed_since {value:?} is not an RFC 3339 instant: {e}"
            ))
        })?;
        crate::RereviewSelector::ChangedSince(value.trim())
    };
    let rereviews = state.rereviews.as_ref().ok_or_else(|| {
        ApiError::InvalidRequest(format!("{field}: this server re-reviews nothing"))
    })?;
    let (mut reviews, mut previous) = (Vec::new(), Vec::new());
    for t in rereviews.affected(tenant_id, chosen).await? {
        reviews.push(BatchItem {
            repository: t.repository,
            base: t.base,
            head: t.head,
        });
        previous.push(Some(t.previous));
    }
    Ok((reviews, previous))
}

pub async fn create_batch(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    body: Result<Json<CreateBatch>, JsonRejection>,
) -> Result<(StatusCode, Json<BatchAccepted>), ApiError> {
    let Json(body) = body.map_err(|e| rejected("request body", e.body_text()))?;
    let (reviews, previous) = batch_items(&state, &tenant.id, body).await?;
    let body = CreateBatchList { reviews };
    if body.reviews.len() > state.limits.max_batch_reviews {
        return Err(ApiError::BatchTooLarge {
            count: body.reviews.len(),
            limit: state.limits.max_batch_reviews,
        });
    }
    for item in &body.reviews {
        check_request(&item.base, &item.head)?;
    }
    // Each distinct repository once (a batch often re-reviews the same few).
    let distinct: std::collections::BTreeSet<&str> =
        body.reviews.iter().map(|i| i.repository.as_str()).collect();
    for repository in distinct {
        check_repository(&state, repository).await?;
    }
    let batch_id = uuid::Uuid::now_v7().to_string();
    let reviews = body
        .reviews
        .into_iter()
        .zip(previous)
        .map(|(item, rereview_of)| {
            let request = ReviewRequest {
                repository: item.repository,
                base: item.base,
                head: item.head,
                trace_id: Some(uuid::Uuid::now_v7().simple().to_string()),
                rereview_of,
                ..Default::default()
            };
            pipeline_review(
                &tenant.id,
                &request,
                proven_store::BATCH_PRIORITY,
                Some(batch_id.clone()),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    // The batch and all its reviews in one transaction, within the tenant's cap.
    state
        .store
        .submit_batch(
            &batch_id,
            &tenant.id,
            &reviews,
            state.limits.max_queued_reviews,
        )
        .await?;
    submitted(reviews.len(), reviews.first().map_or(0, |r| r.priority));
    Ok((
        StatusCode::ACCEPTED,
        Json(BatchAccepted {
            id: batch_id,
            reviews: reviews.into_iter().map(|r| r.id).collect(),
        }),
    ))
}

pub async fn get_batch(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<BatchView>, ApiError> {
    let id = path_id(id, "batch")?;
    let (total, counts) = state.store.batch(&id, &tenant.id).await?;
    let statuses: BTreeMap<String, i64> = counts.into_iter().collect();
    let open: i64 = ["queued", "running"]
        .iter()
        .map(|s| statuses.get(*s).copied().unwrap_or(0))
        .sum();
    let rereviews = rereviews_of(&state, &tenant.id, &id).await?;
    Ok(Json(BatchView {
        id,
        total,
        done: open == 0,
        statuses,
        rereviews,
    }))
}

/// A batch's reviews, from a list or a selector.
struct CreateBatchList {
    reviews: Vec<BatchItem>,
}

/// Each ended re-review of the batch against the earlier review of the same change.
async fn rereviews_of(
    state: &ApiState,
    tenant: &str,
    batch: &str,
) -> Result<Vec<RereviewView>, ApiError> {
    Ok(state
        .store
        .batch_rereviews(tenant, batch)
        .await?
        .into_iter()
        .map(|r| RereviewView {
            review: r.review,
            repository: r.repository,
            previous: r.previous,
            status: r.status,
            new: r.new,
            still: r.still,
            gone: r.gone,
        })
        .collect())
}

pub async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], crate::OPENAPI).into_response()
}

pub async fn healthz() -> &'static str {
    "ok\n"
}

/// Ready when the store and the queue both answer.
pub async fn readyz(State(state): AppState) -> Response {
    let mut problems = Vec::new();
    if let Err(e) = state.store.ping().await {
        problems.push(format!("store: {e}"));
    }
    if let Some(url) = &state.redis_url {
        let ok = async {
            let client = redis::Client::open(url.as_str()).ok()?;
            let mut conn = client.get_multiplexed_async_connection().await.ok()?;
            redis::cmd("PING")
                .query_async::<String>(&mut conn)
                .await
                .ok()
        };
        match tokio::time::timeout(std::time::Duration::from_secs(2), ok).await {
            Ok(Some(_)) => {}
            _ => problems.push("queue: Redis does not answer".into()),
        }
    }
    if problems.is_empty() {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Body::from(problems.join("\n") + "\n"),
        )
            .into_response()
    }
}

pub async fn metrics(State(state): AppState) -> Response {
    match &state.metrics {
        Some(handle) => (
            [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
            handle.render(),
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            "metrics are not enabled in this process\n",
        )
            .into_response(),
    }
}
