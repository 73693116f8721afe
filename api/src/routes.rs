//! The handlers. Each one: authenticate, read or write the store, answer a DTO.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use proven_review::pipeline::ReviewRequest;
use proven_store::{NewPipelineReview, ReviewSummary as StoredSummary};
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
        if value.len() > 4096 || value.contains('\0') {
            return Err(ApiError::InvalidRequest(format!(
                "{name} is not a usable value"
            )));
        }
    }
    Ok(())
}

/// The operator's `repository` policy, before anything is stored.
async fn check_repository(state: &ApiState, repository: &str) -> Result<(), ApiError> {
    state
        .repositories
        .check(repository)
        .await
        .map(|_| ())
        .map_err(ApiError::Repository)
}

async fn submit(
    state: &ApiState,
    tenant_id: &str,
    request: ReviewRequest,
    priority: i64,
    batch_id: Option<String>,
) -> Result<(String, Vec<String>), ApiError> {
    let id = uuid::Uuid::now_v7().to_string();
    let superseded = state
        .store
        .submit_review(&NewPipelineReview {
            id: id.clone(),
            tenant_id: Some(tenant_id.to_string()),
            repository: request.repository.clone(),
            base_rev: request.base.clone(),
            head_rev: request.head.clone(),
            priority,
            batch_id,
            pr_key: request.pull_request.clone(),
            request: serde_json::to_string(&request)
                .map_err(|e| ApiError::InvalidRequest(e.to_string()))?,
            deadline_us: request
                .deadline_secs
                .map(|s| proven_store::now_us() + (s as i64).saturating_mul(1_000_000)),
            trace_id: request.trace_id.clone(),
        })
        .await?;
    metrics::counter!(proven_pipeline::metrics_names::REVIEWS_TOTAL, "status" => "submitted")
        .increment(1);
    Ok((id, superseded))
}

pub async fn create_review(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    body: Result<Json<CreateReview>, axum::extract::rejection::JsonRejection>,
) -> Result<(StatusCode, Json<ReviewAccepted>), ApiError> {
    let Json(body) = body.map_err(|e| ApiError::InvalidRequest(e.body_text()))?;
    check_request(&body.base, &body.head)?;
    check_repository(&state, &body.repository).await?;
    let priority = priority_value(body.priority.as_deref()).map_err(ApiError::InvalidRequest)?;
    let trace_id = uuid::Uuid::now_v7().simple().to_string();
    let request = ReviewRequest {
        repository: body.repository,
        base: body.base,
        head: body.head,
        pull_request: body.pull_request,
        deadline_secs: body.deadline_secs,
        trace_id: Some(trace_id.clone()),
    };
    let (id, superseded) = submit(&state, &tenant.id, request, priority, None).await?;
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
    Query(q): Query<ListQuery>,
) -> Result<Json<ReviewList>, ApiError> {
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let before = match q.before.as_deref() {
        Some(b) => Some(
            b.parse::<i64>()
                .map_err(|_| ApiError::InvalidRequest(format!("before {b:?} is not a cursor")))?,
        ),
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
    Path(id): Path<String>,
) -> Result<Json<ReviewView>, ApiError> {
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
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
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

pub async fn create_batch(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    body: Result<Json<CreateBatch>, axum::extract::rejection::JsonRejection>,
) -> Result<(StatusCode, Json<BatchAccepted>), ApiError> {
    let Json(body) = body.map_err(|e| ApiError::InvalidRequest(e.body_text()))?;
    if body.reviews.is_empty() || body.reviews.len() > 10_000 {
        return Err(ApiError::InvalidRequest(
            "a batch holds 1 to 10000 reviews".into(),
        ));
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
    state
        .store
        .create_batch(&batch_id, &tenant.id, body.reviews.len() as i64)
        .await?;
    let mut ids = Vec::with_capacity(body.reviews.len());
    for item in body.reviews {
        let request = ReviewRequest {
            repository: item.repository,
            base: item.base,
            head: item.head,
            trace_id: Some(uuid::Uuid::now_v7().simple().to_string()),
            ..Default::default()
        };
        let (id, _) = submit(&state, &tenant.id, request, 2, Some(batch_id.clone())).await?;
        ids.push(id);
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(BatchAccepted {
            id: batch_id,
            reviews: ids,
        }),
    ))
}

pub async fn get_batch(
    State(state): AppState,
    AuthTenant(tenant): AuthTenant,
    Path(id): Path<String>,
) -> Result<Json<BatchView>, ApiError> {
    let (total, counts) = state.store.batch(&id, &tenant.id).await?;
    let statuses: BTreeMap<String, i64> = counts.into_iter().collect();
    let open: i64 = ["queued", "running"]
        .iter()
        .map(|s| statuses.get(*s).copied().unwrap_or(0))
        .sum();
    Ok(Json(BatchView {
        id,
        total,
        done: open == 0,
        statuses,
    }))
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
