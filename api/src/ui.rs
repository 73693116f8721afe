//! `/ui`: pages for a person, server-rendered with the report's template engine (minijinja,
//! HTML auto-escaping on every value), no JavaScript: the tenant's reviews with their
//! status and counts by proof level, a review's findings with their evidence and its trace,
//! batches with their progress, and findings and model cost over the last days as inline
//! SVG.
//!
//! Invariants:
//! - A page is the tenant's only: the login form takes an API token, checked as the API
//!   checks one, and opens a session in the store; the cookie holds the session's opaque
//!   random id (never the token), HttpOnly, Secure, SameSite=Strict, scoped to `/ui`, for
//!   [`SESSION_SECS`]. Every page checks the session again (expired, logged out, or its
//!   token revoked: back to the login page) and spends its token's rate. Logout deletes
//!   the session, so a copied cookie is dead once its owner logs out.
//! - Strict, not Lax: every page is reached from another `/ui` page or typed in, so no
//!   cross-site navigation needs the cookie, and a form posted from elsewhere (logout
//!   included) never carries it. Secure: browsers keep it over plain HTTP only for
//!   loopback addresses, so the pages are served over HTTPS (a proxy in front) anywhere else.
//! - Every value a page shows is escaped (a finding titled `<script>` is text); the pages
//!   are served with a Content-Security-Policy that allows no script at all.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use axum::Form;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use minijinja::{Environment, context};
use proven_store::{Tenant, TokenCheck};
use serde::{Deserialize, Serialize};

use crate::ApiState;

const COOKIE: &str = "pvn_session";
/// How long a `/ui` session lives (12 hours): a working day, then log in again.
pub const SESSION_SECS: i64 = 12 * 60 * 60;
/// Reviews a list shows (and the charts count).
const MAX_LISTED: i64 = 100;
/// Days the charts span.
const DAYS: usize = 14;

const LAYOUT: &str = r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{% block title %}Proven{% endblock %}</title>
<style>body{font-family:sans-serif;margin:2rem;max-width:70rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left}nav a{margin-right:1rem}.reproduced{fill:#b00}.exploited{fill:#e60}.advisory{fill:#36c}.tool{fill:#777}.cost{fill:#393}</style></head>
<body><nav>{% if tenant %}<a href="/ui">Reviews</a><a href="/ui/batches">Batches</a><span>tenant {{ tenant }}</span> <form method="post" action="/ui/logout" style="display:inline"><button>Log out</button></form>{% endif %}</nav>
{% block body %}{% endblock %}</body></html>"#;

const LOGIN: &str = r#"{% extends "layout.html" %}{% block title %}Proven: log in{% endblock %}{% block body %}<h1>Proven</h1>
{% if error %}<p id="error">{{ error }}</p>{% endif %}
<form method="post" action="/ui/login"><label>API token <input id="token" name="token" type="password" autocomplete="off"></label> <button id="login">Log in</button></form>{% endblock %}"#;

const REVIEWS: &str = r#"{% extends "layout.html" %}{% block title %}Proven: reviews{% endblock %}{% block body %}<h1>Reviews</h1>
<h2>Findings by proof level, by day</h2>{{ findings_chart }}
<h2>Model cost by day (USD)</h2>{{ cost_chart }}
<table id="reviews"><tr><th>Review</th><th>Status</th><th>Repository</th><th>Change</th><th>Reproduced</th><th>Exploited</th><th>Advisory</th><th>Tool</th><th>Created</th></tr>
{% for r in reviews %}<tr class="review"><td><a href="/ui/reviews/{{ r.id }}">{{ r.id }}</a></td><td class="status">{{ r.status }}</td><td>{{ r.repository }}</td><td>{{ r.base }}..{{ r.head }}</td><td>{{ r.counts.reproduced }}</td><td>{{ r.counts.exploited }}</td><td>{{ r.counts.advisory }}</td><td>{{ r.counts.tool }}</td><td>{{ r.created_at }}</td></tr>
{% else %}<tr><td colspan="9">No review yet.</td></tr>{% endfor %}</table>{% endblock %}"#;

const REVIEW: &str = r#"{% extends "layout.html" %}{% block title %}Proven: review {{ id }}{% endblock %}{% block body %}<h1>Review {{ id }}</h1>
<p>Status <span id="status">{{ status }}</span>: {{ repository }} {{ base }}..{{ head }}</p>
<h2>Findings</h2>{% for f in findings %}<section class="finding"><h3 class="title">{{ f.title }}</h3>
<p>Proof level <b class="level">{{ f.proof_level }}</b>, {{ f.kind }}, at <code>{{ f.path }}</code>{% if f.line %}:{{ f.line }}{% endif %}</p>
{% if f.claim %}<p>{{ f.claim }}</p>{% endif %}
{% if f.runs %}<table class="runs"><tr><th>Side</th><th>Command</th><th>Outcome</th><th>Exit</th></tr>{% for r in f.runs %}<tr><td>{{ r.side }}</td><td><code>{{ r.command }}</code></td><td>{{ r.outcome }}</td><td>{{ r.exit_code }}</td></tr>{% endfor %}</table>{% endif %}
{% if f.advisory %}<p>Advisory {{ f.advisory }}</p>{% endif %}</section>{% else %}<p>No finding.</p>{% endfor %}
{% if unproven %}<h2>Unproven (not findings)</h2><ul>{% for u in unproven %}<li>{{ u }}</li>{% endfor %}</ul>{% endif %}
<h2>Trace</h2><table id="trace"><tr><th>At</th><th>Kind</th><th>Event</th></tr>{% for t in trace %}<tr><td>{{ t.at }}</td><td>{{ t.kind }}</td><td><code>{{ t.event }}</code></td></tr>{% endfor %}</table>{% endblock %}"#;

const BATCHES: &str = r#"{% extends "layout.html" %}{% block title %}Proven: batches{% endblock %}{% block body %}<h1>Batches</h1>
<table id="batches"><tr><th>Batch</th><th>Created</th><th>Reviews</th><th>Progress</th><th>By status</th></tr>
{% for b in batches %}<tr class="batch"><td>{{ b.id }}</td><td>{{ b.created_at }}</td><td>{{ b.total }}</td><td><progress max="{{ b.total }}" value="{{ b.ended }}"></progress> <span class="ended">{{ b.ended }}</span>/{{ b.total }}</td><td>{% for s, n in b.statuses|items %}{{ s }} {{ n }} {% endfor %}</td></tr>
{% else %}<tr><td colspan="5">No batch yet.</td></tr>{% endfor %}</table>{% endblock %}"#;

fn templates() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        // `.html` names turn HTML auto-escaping on for every value.
        for (name, text) in [
            ("layout.html", LAYOUT),
            ("login.html", LOGIN),
            ("reviews.html", REVIEWS),
            ("review.html", REVIEW),
            ("batches.html", BATCHES),
        ] {
            if let Err(e) = env.add_template(name, text) {
                tracing::error!(template = name, error = %e, "ui template");
            }
        }
        env
    })
}

/// A page, with the headers every page carries.
fn page(status: StatusCode, name: &str, ctx: minijinja::Value) -> Response {
    let html = templates()
        .get_template(name)
        .and_then(|t| t.render(ctx))
        .unwrap_or_else(|e| {
            tracing::error!(template = name, error = %e, "ui render");
            "<!doctype html><p>This page could not be shown.</p>".into()
        });
    let mut r = (status, html).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn to_login() -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, "/ui/login")]).into_response()
}

fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| {
            c.trim()
                .strip_prefix(&format!("{COOKIE}="))
                .map(str::to_string)
        })
        .filter(|t| !t.is_empty())
}

/// The tenant of the page's session, its token's rate spent; else the login page.
async fn tenant(state: &ApiState, headers: &HeaderMap) -> Result<Tenant, Response> {
    let Some(session) = cookie_token(headers) else {
        return Err(to_login());
    };
    match state.store.check_session(&session).await {
        Ok(TokenCheck::Valid { tenant, token_id }) => {
            crate::limits::check_rate(state, &token_id).map_err(IntoResponse::into_response)?;
            Ok(tenant)
        }
        Ok(_) => Err(to_login()),
        Err(e) => Err(crate::error::ApiError::from(e).into_response()),
    }
}

pub async fn login_page() -> Response {
    page(StatusCode::OK, "login.html", context! {})
}

#[derive(Deserialize)]
pub struct LoginForm {
    token: String,
}

pub async fn login(State(state): State<Arc<ApiState>>, Form(form): Form<LoginForm>) -> Response {
    let token = form.token.trim().to_string();
    let opened = match token.is_empty() || token.contains(['\0']) {
        true => Ok(None),
        false => state.store.open_session(&token, SESSION_SECS).await,
    };
    let session = match opened {
        Ok(Some(session)) => session,
        Ok(None) => {
            return page(
                StatusCode::UNAUTHORIZED,
                "login.html",
                context! { error => "That token is not a live API token." },
            );
        }
        Err(e) => return crate::error::ApiError::from(e).into_response(),
    };
    let cookie = format!(
        "{COOKIE}={session}; Path=/ui; HttpOnly; Secure; SameSite=Strict; Max-Age={SESSION_SECS}"
    );
    (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, "/ui".to_string()),
            (header::SET_COOKIE, cookie),
        ],
    )
        .into_response()
}

/// Ends the session in the store (a copy of the cookie is dead too) and clears the cookie.
pub async fn logout(State(state): State<Arc<ApiState>>, headers: HeaderMap) -> Response {
    if let Some(session) = cookie_token(&headers)
        && let Err(e) = state.store.close_session(&session).await
    {
        return crate::error::ApiError::from(e).into_response();
    }
    let cookie = format!("{COOKIE}=; Path=/ui; HttpOnly; Secure; SameSite=Strict; Max-Age=0");
    (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, "/ui/login".to_string()),
            (header::SET_COOKIE, cookie),
        ],
    )
        .into_response()
}

#[derive(Serialize, Default, Clone, Copy)]
struct Counts {
    reproduced: u64,
    exploited: u64,
    advisory: u64,
    tool: u64,
}

fn counts(result: &serde_json::Value) -> Counts {
    let c = &result["proof_counts"];
    let n = |k: &str| c[k].as_u64().unwrap_or(0);
    Counts {
        reproduced: n("reproduced"),
        exploited: n("exploited"),
        advisory: n("advisory"),
        tool: n("tool"),
    }
}

/// Bars of the last [`DAYS`] days: each day one bar per series, heights to scale, every
/// value a number Proven computed (nothing of a review's text reaches the SVG).
fn chart(days: &[String], series: &[(&str, Vec<f64>)]) -> String {
    let max = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0_f64, f64::max)
        .max(1e-9);
    let (w, h, gap) = (10.0, 120.0, 14.0);
    let per_day = w * series.len() as f64 + gap;
    let mut svg = format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img">"#,
        per_day * days.len() as f64 + gap,
        h + 30.0
    );
    for (d, day) in days.iter().enumerate() {
        for (s, (class, values)) in series.iter().enumerate() {
            let v = values.get(d).copied().unwrap_or(0.0);
            let bar = (v / max * h).max(if v > 0.0 { 1.0 } else { 0.0 });
            let x = gap + d as f64 * per_day + s as f64 * w;
            svg.push_str(&format!(
                r#"<rect class="{class}" x="{x:.1}" y="{:.1}" width="{:.1}" height="{bar:.1}"><title>{class} {v}</title></rect>"#,
                h - bar,
                w - 2.0
            ));
        }
        let label: String = day.chars().skip(5).collect();
        svg.push_str(&format!(
            r#"<text x="{:.1}" y="{:.1}" font-size="10">{label}</text>"#,
            gap + d as f64 * per_day,
            h + 15.0
        ));
    }
    svg.push_str("</svg>");
    svg
}

pub async fn reviews(State(state): State<Arc<ApiState>>, headers: HeaderMap) -> Response {
    let tenant = match tenant(&state, &headers).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    let listed = match state
        .store
        .list_reviews(&tenant.id, None, None, None, MAX_LISTED)
        .await
    {
        Ok(l) => l,
        Err(e) => return crate::error::ApiError::from(e).into_response(),
    };
    let today = time::OffsetDateTime::now_utc().date();
    let days: Vec<String> = (0..DAYS)
        .rev()
        .map(|back| (today - time::Duration::days(back as i64)).to_string())
        .collect();
    let mut by_day: BTreeMap<String, (Counts, f64)> = BTreeMap::new();
    let mut rows = Vec::new();
    for r in listed {
        let result: serde_json::Value = state
            .store
            .review(&r.id)
            .await
            .ok()
            .and_then(|row| row.result)
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let c = counts(&result);
        let cost: f64 = state
            .store
            .trace_of_kind(&r.id, "model_call")
            .await
            .map(|lines| {
                lines
                    .iter()
                    .filter_map(|l| l.event["cost_usd"].as_f64())
                    .sum()
            })
            .unwrap_or(0.0);
        let day: String = r.created_at.chars().take(10).collect();
        let e = by_day.entry(day).or_default();
        e.0.reproduced += c.reproduced;
        e.0.exploited += c.exploited;
        e.0.advisory += c.advisory;
        e.0.tool += c.tool;
        e.1 += cost;
        rows.push(context! {
            id => r.id, status => r.status, repository => r.repository, base => r.base_rev,
            head => r.head_rev, created_at => r.created_at, counts => c,
        });
    }
    let of = |f: &dyn Fn(&(Counts, f64)) -> f64| -> Vec<f64> {
        days.iter()
            .map(|d| by_day.get(d).map(f).unwrap_or(0.0))
            .collect()
    };
    let findings_chart = chart(
        &days,
        &[
            ("reproduced", of(&|x| x.0.reproduced as f64)),
            ("exploited", of(&|x| x.0.exploited as f64)),
            ("advisory", of(&|x| x.0.advisory as f64)),
            ("tool", of(&|x| x.0.tool as f64)),
        ],
    );
    let cost_chart = chart(&days, &[("cost", of(&|x| x.1))]);
    page(
        StatusCode::OK,
        "reviews.html",
        context! {
            tenant => tenant.name, reviews => rows,
            // Built by Proven from numbers only (see `chart`): marked safe to embed.
            findings_chart => minijinja::Value::from_safe_string(findings_chart),
            cost_chart => minijinja::Value::from_safe_string(cost_chart),
        },
    )
}

pub async fn review(
    State(state): State<Arc<ApiState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let tenant = match tenant(&state, &headers).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    let not_found = || {
        page(
            StatusCode::NOT_FOUND,
            "login.html",
            context! { tenant => tenant.name.clone(), error => "No such review." },
        )
    };
    let Ok(Some(summary)) = state.store.review_summary(&tenant.id, &id).await else {
        return not_found();
    };
    let result: serde_json::Value = state
        .store
        .review(&id)
        .await
        .ok()
        .and_then(|row| row.result)
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let findings: Vec<minijinja::Value> = result["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            // Each piece of evidence: a sandbox run (a defect's), or an advisory row.
            let runs: Vec<minijinja::Value> = f["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["run"].is_object())
                .map(|e| &e["run"])
                .map(|r| {
                    let command: Vec<&str> = r["command"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|c| c.as_str())
                        .collect();
                    context! { side => r["side"].as_str(), command => command.join(" "),
                    outcome => r["outcome"].as_str(), exit_code => r["exit_code"].as_i64() }
                })
                .collect();
            context! {
                title => f["title"].as_str(), proof_level => f["proof_level"].as_str(),
                kind => f["kind"].as_str(), path => f["location"]["path"].as_str(),
                line => f["location"]["line"].as_u64(), claim => f["claim"].as_str(),
                advisory => f["advisory"]["id"].as_str(), runs => runs,
            }
        })
        .collect();
    let unproven: Vec<String> = result["unproven"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            format!(
                "{}: {}",
                u["claim"].as_str().unwrap_or_default(),
                u["reason"].as_str().unwrap_or_default()
            )
        })
        .collect();
    let trace: Vec<minijinja::Value> = state
        .store
        .trace(&id)
        .await
        .unwrap_or_default()
        .into_iter()
        .take(500)
        .map(|t| {
            let mut event = t.event.to_string();
            if event.len() > 400 {
                event = event.chars().take(400).collect::<String>() + "…";
            }
            context! { at => t.at, kind => t.kind, event => event }
        })
        .collect();
    page(
        StatusCode::OK,
        "review.html",
        context! {
            tenant => tenant.name, id => id, status => summary.status, repository => summary.repository,
            base => summary.base_rev, head => summary.head_rev, findings => findings,
            unproven => unproven, trace => trace,
        },
    )
}

pub async fn batches(State(state): State<Arc<ApiState>>, headers: HeaderMap) -> Response {
    let tenant = match tenant(&state, &headers).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    let listed = match state.store.batches(&tenant.id, MAX_LISTED).await {
        Ok(l) => l,
        Err(e) => return crate::error::ApiError::from(e).into_response(),
    };
    let mut rows = Vec::new();
    for b in listed {
        let (total, counts) = state
            .store
            .batch(&b.id, &tenant.id)
            .await
            .unwrap_or((b.total, Vec::new()));
        let ended: i64 = counts
            .iter()
            .filter(|(s, _)| s != "queued" && s != "running")
            .map(|(_, n)| n)
            .sum();
        let statuses: BTreeMap<String, i64> = counts.into_iter().collect();
        rows.push(context! { id => b.id, created_at => b.created_at, total => total, ended => ended, statuses => statuses });
    }
    page(
        StatusCode::OK,
        "batches.html",
        context! { tenant => tenant.name, batches => rows },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(name: &str, ctx: minijinja::Value) -> String {
        templates()
            .get_template(name)
            .and_then(|t| t.render(ctx))
            .unwrap_or_else(|e| panic!("{name}: {e:#}"))
    }

    #[test]
    fn every_template_compiles() {
        let mut env = Environment::new();
        for (name, text) in [
            ("layout.html", LAYOUT),
            ("login.html", LOGIN),
            ("reviews.html", REVIEWS),
            ("review.html", REVIEW),
            ("batches.html", BATCHES),
        ] {
            if let Err(e) = env.add_template(name, text) {
                panic!("{name}: {e:#}");
            }
        }
    }

    #[test]
    fn every_page_renders_and_escapes_what_it_shows() {
        let hostile = "<script>alert(1)</script>";
        let list = render(
            "reviews.html",
            context! { tenant => hostile, reviews => vec![context! { id => "r1", status => "complete",
            repository => hostile, base => "a", head => "b", created_at => "2026-12-01",
            counts => Counts::default() }],
            findings_chart => minijinja::Value::from_safe_string(chart(&["2026-12-01".into()], &[("advisory", vec![1.0])])),
            cost_chart => minijinja::Value::from_safe_string(String::new()) },
        );
        assert!(
            !list.contains(hostile) && list.contains("&lt;script&gt;"),
            "{list}"
        );
        assert!(list.contains("<svg class=\"chart\""), "{list}");
        let batches = render(
            "batches.html",
            context! { tenant => "t", batches => vec![context! { id => "b1", created_at => "x", total => 2,
            ended => 1, statuses => BTreeMap::from([("complete".to_string(), 1_i64)]) }] },
        );
        assert!(
            batches.contains("<span class=\"ended\">1</span>/2"),
            "{batches}"
        );
        let review = render(
            "review.html",
            context! { tenant => "t", id => "r1", status => "complete", repository => "r", base => "a",
            head => "b", findings => vec![context! { title => hostile, proof_level => "advisory",
            kind => "vulnerability", path => "Cargo.lock", runs => Vec::<minijinja::Value>::new() }],
            unproven => Vec::<String>::new(), trace => Vec::<minijinja::Value>::new() },
        );
        assert!(!review.contains(hostile), "{review}");
        assert!(render("login.html", context! {}).contains("name=\"token\""));
    }
}
