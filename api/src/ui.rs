//! `/ui`: pages for a person, server-rendered with the report's template engine (minijinja,
//! HTML auto-escaping on every value), no JavaScript: the tenant's reviews with their
//! status and counts by proof level, a review's findings with their evidence and its trace,
//! batches with their progress, and reviews, findings and model cost over the last days as
//! inline SVG with labelled axes.
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
//! - A review's page reads its stored report document (what the JSON report holds), never
//!   recomputes it: every field of a finding the HTML report shows is on the page. A failed,
//!   incomplete or partial review says so with its causes from the report (failed services,
//!   unreadable inputs, a partial plan's reason, what was not seen), never "No finding.".
//! - The charts count every review of their period, summed by the store in one aggregate
//!   ([`proven_store::Store::daily_totals`]), not only the reviews the list shows.
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
<style>body{font-family:sans-serif;margin:2rem;max-width:70rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left}nav a{margin-right:1rem}.reproduced{fill:#b00}.exploited{fill:#e60}.advisory{fill:#36c}.tool{fill:#777}.cost{fill:#393}.reviews{fill:#557}
.level{font:600 .85em monospace;padding:1px 6px;border-radius:4px;color:#fff}span.reproduced,.key.reproduced{background:#b00}span.exploited,.key.exploited{background:#e60}span.advisory,.key.advisory{background:#36c}span.tool,.key.tool{background:#777}
.key{display:inline-block;width:.8em;height:.8em;margin-left:.8em}.finding{border-top:1px solid #ddd;margin:1.5rem 0}.facts th{width:9rem;background:#f6f8fa}
pre{background:#f6f8fa;padding:.5rem;overflow-x:auto;max-height:20rem}#outcome{padding:.5rem 1rem;border-radius:4px}#outcome.failed{background:#fde8e8;border:1px solid #b00}#outcome.partial,#outcome.pending{background:#fff8e1;border:1px solid #e6a700}
.runs{font-size:.9em;margin:.5rem 0}.runs pre{white-space:pre-wrap;overflow-wrap:anywhere}.runs ul{margin:0;padding-left:1rem}</style></head>
<body><nav>{% if tenant %}<a href="/ui">Reviews</a><a href="/ui/batches">Batches</a><span>tenant {{ tenant }}</span> <form method="post" action="/ui/logout" style="display:inline"><button>Log out</button></form>{% endif %}</nav>
{% block body %}{% endblock %}</body></html>"#;

const LOGIN: &str = r#"{% extends "layout.html" %}{% block title %}Proven: log in{% endblock %}{% block body %}<h1>Proven</h1>
{% if error %}<p id="error">{{ error }}</p>{% endif %}
<form method="post" action="/ui/login"><label>API token <input id="token" name="token" type="password" autocomplete="off"></label> <button id="login">Log in</button></form>{% endblock %}"#;

const REVIEWS: &str = r#"{% extends "layout.html" %}{% block title %}Proven: reviews{% endblock %}{% block body %}<h1>Reviews</h1>
<p id="period"><span id="period-reviews">{{ period_reviews }}</span> reviews in the last {{ days }} days (since {{ since }}, UTC); the table lists the newest {{ listed_max }}.</p>
<h2>Reviews by day</h2>{{ reviews_chart }}
<h2>Findings by proof level, by day</h2>{{ findings_chart }}<p class="legend"><span class="key reproduced"></span> reproduced <span class="key exploited"></span> exploited <span class="key advisory"></span> advisory <span class="key tool"></span> tool</p>
<h2>Model cost by day (USD)</h2>{{ cost_chart }}
<table id="reviews"><tr><th>Review</th><th>Status</th><th>Repository</th><th>Change</th><th>Reproduced</th><th>Exploited</th><th>Advisory</th><th>Tool</th><th>Created</th></tr>
{% for r in reviews %}<tr class="review"><td><a href="/ui/reviews/{{ r.id }}">{{ r.id }}</a></td><td class="status">{{ r.status }}</td><td>{{ r.repository }}</td><td>{{ r.base }}..{{ r.head }}</td><td>{{ r.counts.reproduced }}</td><td>{{ r.counts.exploited }}</td><td>{{ r.counts.advisory }}</td><td>{{ r.counts.tool }}</td><td>{{ r.created_at }}</td></tr>
{% else %}<tr><td colspan="9">No review yet.</td></tr>{% endfor %}</table>{% endblock %}"#;

const REVIEW: &str = r#"{% extends "layout.html" %}{% block title %}Proven: review {{ id }}{% endblock %}{% block body %}{% from "runs.html" import run_table %}<h1>Review {{ id }}</h1>
<p>Status <span id="status" class="state-{{ status }}">{{ status }}</span>: <code>{{ repository }}</code> {{ base }}..{{ head }}{% if r.base and r.head %} (<code>{{ r.base.commit[:12] }}</code>{% if r.base.diff == "two-dot" %}, two-dot: the base as named{% elif r.base.diff and r.base.tip %}, the merge base; <code>{{ r.base.rev }}</code> itself is at <code>{{ r.base.tip[:12] }}</code>{% elif r.base.diff %}, the merge base{% endif %} → <code>{{ r.head.commit[:12] }}</code>){% endif %}</p>
{% if status == "queued" or status == "running" %}<p id="outcome" class="pending">This review has not finished yet.</p>
{% elif failed %}<div id="outcome" class="failed"><p><strong>This review {% if status == "failed" or r.status == "failed" %}failed{% else %}is incomplete{% endif %}{% if r.findings %}: the findings below may not be all of them{% else %}: it shows no finding because it could not look, not because there is none{% endif %}.</strong></p>
{% if causes %}<ul class="causes">{% for c in causes %}<li>{{ c }}</li>{% endfor %}</ul>{% else %}<p class="causes">Its cause was not recorded in the report; the trace below has what the review did.</p>{% endif %}</div>
{% elif r.status == "partial" %}<div id="outcome" class="partial"><p><strong>This review is partial{% if r.findings %}{% else %}: it shows no finding for what it could not examine{% endif %}.</strong></p><ul class="causes">{% for c in causes %}<li>{{ c }}</li>{% endfor %}</ul></div>{% endif %}
{% if r.plan %}<p id="plan"><strong>Plan:</strong> {{ r.plan.change_kind }} change, {{ r.plan.band }} band; runs {{ r.plan.runs | join(", ") if r.plan.runs else "nothing" }}.{% if r.plan.left_out %} Not in plan: {{ r.plan.left_out | join("; ") }}.{% endif %}</p>{% endif %}
{% if r.proof_counts %}<p><strong>Findings by proof level:</strong> reproduced {{ r.proof_counts.reproduced }} · exploited {{ r.proof_counts.exploited }} · advisory {{ r.proof_counts.advisory }} · tool {{ r.proof_counts.tool }}</p>{% endif %}
<h2>Findings</h2>{% for f in r.findings %}<section class="finding" id="finding-{{ loop.index }}">
<h3><span class="level {{ f.proof_level }}">{{ f.proof_level }}</span> <span class="title">{{ f.title }}</span></h3>
<table class="facts">
<tr><th>Proof level</th><td class="proof-level">{{ f.proof_level }} ({{ f.kind }})</td></tr>
<tr><th>Where</th><td><code>{{ f.location.path }}</code>{% if f.location.line %} line {{ f.location.line }}{% endif %}</td></tr>
{% if f.claim %}<tr><th>Claim</th><td class="claim">{{ f.claim }}</td></tr>{% endif %}
{% if f.package %}<tr><th>Package</th><td class="package">{{ f.package.ecosystem }} <code>{{ f.package.name }}</code> {% if f.package.old_version %}{{ f.package.old_version }} → {% endif %}{{ f.package.new_version }} ({{ f.package.dependency }}{% if f.package.dev %}, dev{% endif %})</td></tr>{% endif %}
{% if f.advisory %}<tr><th>Advisory</th><td class="advisory-ref">{{ f.advisory.id }}{% if f.advisory.aliases %} ({{ f.advisory.aliases | join(", ") }}){% endif %}{% if f.advisory.published %}, published {{ f.advisory.published }}{% endif %}</td></tr>
{% if f.advisory.summary %}<tr><th>Summary</th><td class="summary">{{ f.advisory.summary }}</td></tr>{% endif %}
<tr><th>Severity</th><td class="severity">{% for s in f.advisory.severity %}{{ s.type }} {% if s.base_score is not none %}<b>{{ s.base_score }}</b> {% endif %}<code>{{ s.score }}</code>{% if not loop.last %}; {% endif %}{% else %}none given by the advisory{% endfor %}</td></tr>{% endif %}
{% if f.advisory or f.epss or f.exploited %}<tr><th>EPSS</th><td class="epss">{% if f.epss %}{{ f.epss.cve }}: probability {{ "%.5f" | format(f.epss.probability) }}, percentile {{ "%.5f" | format(f.epss.percentile) }}{% if f.epss.score_date %} ({{ f.epss.score_date }}){% endif %}{% else %}no EPSS score{% endif %}</td></tr>
<tr><th>KEV</th><td class="kev">{% if f.exploited %}{{ f.exploited.cve }} is in CISA KEV{% if f.exploited.date_added %} (added {{ f.exploited.date_added }}){% endif %}{% if f.exploited.known_ransomware_campaign_use %}, ransomware use: {{ f.exploited.known_ransomware_campaign_use }}{% endif %}{% else %}not in CISA KEV{% endif %}</td></tr>{% endif %}
{% if f.fix %}<tr><th>Fixed version</th><td class="fix">{% if f.fix.version %}<code>{{ f.fix.version }}</code> ({{ f.fix.note }}){% else %}{{ f.fix.note }}{% endif %}</td></tr>{% endif %}
{% if f.fix and f.fix.proposed %}<tr><th>Proposed fix</th><td class="proposed-fix">to {{ f.fix.proposed.version }}: {% if f.fix.proposed.command %}run <code>{{ f.fix.proposed.command }}</code>{% endif %}{% for e in f.fix.proposed.edits %}<p><code>{{ e.path }}</code></p><pre class="diff">- {{ e.old_text }}
+ {{ e.new_text }}</pre>{% endfor %} <b class="proved">{% if f.fix.proposed.proved %}proved{% else %}not proved{% endif %}</b>: {{ f.fix.proposed.reason }}</td></tr>{% endif %}
{% if f.patch %}<tr><th>Proposed fix</th><td class="proposed-fix"><b class="proved">proved</b> (try {{ f.patch.attempt }}): with it the test passes, {% if f.patch.no_other_tests %}and the package has no other test that runs here (its suite ran none, with the patch nor on the base){% elif f.patch.failing_on_base_too %}and the package's tests fail only where they fail on the base too ({{ f.patch.failing_on_base_too | length }}: {{ f.patch.failing_on_base_too[:5] | join(", ") }}{% if f.patch.failing_on_base_too | length > 5 %}, …{% endif %}){% else %}and so do the package's tests{% endif %}: {{ f.patch.explanation }}{% for e in f.patch.edits %}<p><code>{{ e.path }}</code></p><pre class="diff">- {{ e.old_text }}
+ {{ e.new_text }}</pre>{% endfor %}</td></tr>{% endif %}
{% if f.fix_not_proved %}<tr><th>Proposed fix</th><td class="proposed-fix"><b class="proved">not proved</b> ({{ f.fix_not_proved.attempts }} {% if f.fix_not_proved.attempts == 1 %}try{% else %}tries{% endif %}): {{ f.fix_not_proved.reason }}</td></tr>{% endif %}
{% if f.skeptic %}<tr><th>Skeptic</th><td class="skeptic">{{ f.skeptic.verdict }}{% if f.skeptic.refutation %} ({{ f.skeptic.refutation }}){% endif %}{% if f.skeptic.artifact %} (opened {{ f.skeptic.artifact }}){% endif %}: {{ f.skeptic.reason }}{% if f.skeptic.needs %}; needs: {{ f.skeptic.needs }}{% endif %}</td></tr>{% endif %}
{% if f.reachability %}<tr><th>Reachability</th><td class="reachability">{{ f.reachability | reach }}{% for s in f.reachability.sites %}<p><code>{{ s.path }}</code> line {{ s.line }}{% if s.in_change %} (in the change){% endif %}: <code>{{ s.text }}</code></p>{% endfor %}</td></tr>{% endif %}
<tr><th>Replay</th><td class="replay"><code>{{ f.id | replay(r.review_id) }}</code></td></tr>
</table>
{% for e in f.evidence %}{% if e.test %}<p>Test <code>{{ e.test.path }}</code>:</p><pre class="test">{{ e.test.code }}</pre>{% endif %}
{% if e.row %}<details class="row" open><summary>Matched row: {{ e.advisory_id }} affected[{{ e.affected_index }}], matched by {{ e.matched }}</summary><pre>{{ e.row | tojson }}</pre></details>{% endif %}
{% if e.tool %}<p class="tool">run <code>{{ e.run.run_id }}</code>: {{ e.tool.analyzer }} ({{ e.tool.version }}) {% if e.tool.diagnostic %}reports <code>{{ e.tool.diagnostic }}</code>{% else %}does not report it{% endif %} [{{ e.tool.code }}]</p>{% endif %}{% endfor %}
{% set runs = f.evidence | selectattr("run") | map(attribute="run") | list %}{% if runs %}{{ run_table(runs) }}{% endif %}
{% if f.patch and f.patch.runs %}<p>Runs with the proposed fix:</p>{{ run_table(f.patch.runs) }}{% endif %}
{% if f.fix_not_proved and f.fix_not_proved.runs %}<p>Runs of the last try:</p>{{ run_table(f.fix_not_proved.runs) }}{% endif %}
</section>{% else %}{% if not failed and r.status != "partial" and status != "queued" and status != "running" %}<p id="no-finding">No finding.</p>{% endif %}{% endfor %}
{% if r.unproven %}<h2>Unproven (not findings)</h2><ul id="unproven">{% for u in r.unproven %}<li>{{ u.claim }}: {{ u.reason }}{% if u.runs %}{{ run_table(u.runs) }}{% endif %}</li>{% endfor %}</ul>{% endif %}
{% if r.ignored %}<h2>Ignored by the repository's ignore list (not counted, never failing)</h2><ul>{% for i in r.ignored %}<li>{{ i.finding.title }} (<code>{{ i.finding.location.path }}</code>): ignored by <code>{{ i.entry }}</code>{% if i.expires %} until {{ i.expires }}{% endif %}: {{ i.reason }}</li>{% endfor %}</ul>{% endif %}
{% if r.ignore_notes %}<h2>Ignore entries that ignore nothing</h2><ul>{% for n in r.ignore_notes %}<li><code>{{ n.entry }}</code> {{ n.status }}: {{ n.detail }}</li>{% endfor %}</ul>{% endif %}
{% if r.suppressed %}<h2>Not raised again (an evidenced refutation in memory)</h2><ul>{% for m in r.suppressed %}<li>{{ m.claim }} (<code>{{ m.path }}</code>): refuted by review <code>{{ m.refuted_by }}</code> on {{ m.on }}, evidence: {{ m.evidence }} (record <code>{{ m.record }}</code>)</li>{% endfor %}</ul>{% endif %}
{% if r.reviewers %}<h2>The reviewers, side by side (never merged; evidence decides)</h2><table><tr><th>Risk</th><th>File</th><th>Evidence</th><th>First reviewer</th><th>Second reviewer</th></tr>{% for v in r.reviewers %}<tr><td>{{ v.title }}</td><td><code>{{ v.path }}</code></td><td>{{ v.outcome }}</td><td>{{ v.first.verdict }}</td><td>{{ v.second.verdict }}{% if v.second.reason %}: {{ v.second.reason }}{% endif %}</td></tr>{% endfor %}</table>{% endif %}
{% if r.autofix %}<h2>Autofix: {{ r.autofix.verdict }}</h2><ul>{% for x in r.autofix.fixes %}<li>closed: {{ x }}</li>{% endfor %}{% for o in r.autofix.open %}<li>open: {{ o }}</li>{% endfor %}</ul>{% if r.autofix.runs %}{{ run_table(r.autofix.runs) }}{% endif %}{% endif %}
{% if r.coverage %}<h2>Coverage: {{ r.coverage.verdict }}</h2><table><tr><th>Surface</th><th>Status</th><th>Detail</th><th>Probe</th></tr>{% for c in r.coverage.surfaces %}<tr><td><code>{{ c.surface }}</code></td><td>{{ c.status }}</td><td>{{ c.detail }}</td><td>{% if c.probe %}{{ c.probe }}{% endif %}</td></tr>{% endfor %}</table>{% endif %}
{% if r.failed_services %}<h2>Failed services</h2><ul id="failed-services">{% for x in r.failed_services %}<li><strong>{{ x.service }}</strong>: {{ x.message }}</li>{% endfor %}</ul>{% endif %}
{% if r.input_errors %}<h2>Inputs that could not be read</h2><ul>{% for e in r.input_errors %}<li><code>{{ e.path }}</code>{% if e.line %} line {{ e.line }}{% endif %}: {{ e.message }}</li>{% endfor %}</ul>{% endif %}
{% if r.not_seen %}<h2>What this review could not see</h2><ul id="not-seen">{% for n in r.not_seen %}<li>{{ n.what }}: {{ n.reason }}</li>{% endfor %}</ul>{% endif %}
{% if r.left_out %}<h2>Left out of the trees</h2><ul>{% for l in r.left_out %}<li><code>{{ l.path }}</code> ({{ l.reason }})</li>{% endfor %}</ul>{% endif %}
<h2>Trace</h2><table id="trace"><tr><th>At</th><th>Kind</th><th>Event</th></tr>{% for t in trace %}<tr><td>{{ t.at }}</td><td>{{ t.kind }}</td><td><code>{{ t.event }}</code></td></tr>{% endfor %}</table>{% endblock %}"#;

/// A table of sandbox runs (imported by the review page): enough to run each again.
const RUNS: &str = r#"{% macro run_table(runs) %}<table class="runs"><tr><th>Side</th><th>Command</th><th>Image</th><th>Outcome</th><th>Tests</th><th>Environment</th><th>Output (tail)</th></tr>{% for x in runs %}<tr class="run"><td>{{ x.side }}{% if x.commit %} <code>{{ x.commit[:12] }}</code>{% endif %}</td><td><code class="command">{{ x.command | join(" ") }}</code></td><td><code class="image">{{ x.image }}</code></td><td class="outcome">{{ x.outcome }} (exit {{ x.exit_code if x.exit_code is not none else "none" }}, {{ x.duration_ms }} ms)</td><td>{% if x.tests %}{{ x.tests.passed }} passed, {{ x.tests.failed }} failed, {{ x.tests.skipped }} skipped{% endif %}</td><td>{% if x.environment %}<ul class="environment">{% for l in x.environment %}<li>{{ l }}</li>{% endfor %}</ul>{% endif %}</td><td>{% if x.output_tail %}<pre class="tail">{{ x.output_tail[-2000:] }}</pre>{% endif %}{% if x.output_sha256 %}<small>sha256 <code>{{ x.output_sha256[:16] }}</code></small>{% endif %}</td></tr>{% endfor %}</table>{% endmacro %}"#;

const BATCHES: &str = r#"{% extends "layout.html" %}{% block title %}Proven: batches{% endblock %}{% block body %}<h1>Batches</h1>
<table id="batches"><tr><th>Batch</th><th>Created</th><th>Reviews</th><th>Progress</th><th>By status</th></tr>
{% for b in batches %}<tr class="batch"><td>{{ b.id }}</td><td>{{ b.created_at }}</td><td>{{ b.total }}</td><td><progress max="{{ b.total }}" value="{{ b.ended }}"></progress> <span class="ended">{{ b.ended }}</span>/{{ b.total }}</td><td>{% for s, n in b.statuses|items %}{{ s }} {{ n }} {% endfor %}</td></tr>
{% else %}<tr><td colspan="5">No batch yet.</td></tr>{% endfor %}</table>{% endblock %}"#;

/// Every template by name: `.html` names turn HTML auto-escaping on for every value.
const TEMPLATES: &[(&str, &str)] = &[
    ("layout.html", LAYOUT),
    ("login.html", LOGIN),
    ("reviews.html", REVIEWS),
    ("review.html", REVIEW),
    ("runs.html", RUNS),
    ("batches.html", BATCHES),
];

fn templates() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        for &(name, text) in TEMPLATES {
            if let Err(e) = env.add_template(name, text) {
                tracing::error!(template = name, error = %e, "ui template");
            }
        }
        // The report's own words for a finding's reachability and replay command.
        env.add_filter("replay", |id: String, review: Option<String>| {
            proven_report::replay_command(review.as_deref(), &id)
        });
        env.add_filter("reach", |value: minijinja::Value| {
            serde_json::to_value(&value)
                .and_then(serde_json::from_value::<proven_report::Reachability>)
                .map(|r| r.summary())
                .map_err(|e| {
                    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string())
                })
        });
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
            crate::auth::check_rate(state, &token_id).map_err(IntoResponse::into_response)?;
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

/// Width (px) a date label (`MM-DD` at 10px) takes, with room either side.
const LABEL_PX: f64 = 36.0;

/// How a chart's values read on its axis.
#[derive(Clone, Copy)]
enum Unit {
    Count,
    Usd,
}

impl Unit {
    fn show(self, v: f64) -> String {
        match self {
            Unit::Count => format!("{}", v.round() as i64),
            Unit::Usd => format!("${v:.2}"),
        }
    }
}

/// Every how many days a date label is drawn so that labels `per_day` apart never overlap.
fn label_step(per_day: f64) -> usize {
    (LABEL_PX / per_day.max(1.0)).ceil().max(1.0) as usize
}

/// Bars of the last [`DAYS`] days: each day one bar per series, heights to scale, with a
/// y axis (0, half and the top, in `unit`, titled `y_title`) and an x axis of dates, thinned
/// so that no two labels overlap (the newest day always labelled). Every value drawn is a
/// number Proven computed (nothing of a review's text reaches the SVG).
fn chart(days: &[String], series: &[(&str, Vec<f64>)], unit: Unit, y_title: &str) -> String {
    let top = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0_f64, f64::max);
    // A top the axis can name: an even count (at least 2, so the middle line is a whole
    // count too, drawn where that count is), or a cent above the most.
    let top = match unit {
        Unit::Count => {
            let top = top.ceil().max(2.0);
            top + top % 2.0
        }
        Unit::Usd => (top * 100.0).ceil().max(1.0) / 100.0,
    };
    let (w, h, gap) = (10.0, 120.0, 14.0);
    let (left, head, foot) = (52.0, 18.0, 36.0);
    let per_day = w * series.len() as f64 + gap;
    let width = left + per_day * days.len() as f64 + gap;
    let base = head + h;
    let mut svg = format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{}" role="img" font-family="sans-serif" font-size="10">"#,
        head + h + foot
    );
    svg.push_str(&format!(
        r##"<text class="axis-title" x="0" y="10">{y_title}</text><line class="axis" x1="{left}" y1="{head}" x2="{left}" y2="{base}" stroke="#333"/><line class="axis" x1="{left}" y1="{base}" x2="{width}" y2="{base}" stroke="#333"/>"##
    ));
    for frac in [0.0, 0.5, 1.0] {
        let y = base - frac * h;
        svg.push_str(&format!(
            r##"<line x1="{:.1}" y1="{y:.1}" x2="{width}" y2="{y:.1}" stroke="#ddd"/><text class="y-label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            left - 3.0,
            left - 5.0,
            y + 3.0,
            unit.show(top * frac)
        ));
    }
    let step = label_step(per_day);
    for (d, day) in days.iter().enumerate() {
        for (s, (class, values)) in series.iter().enumerate() {
            let v = values.get(d).copied().unwrap_or(0.0);
            let bar = (v / top * h).max(if v > 0.0 { 1.0 } else { 0.0 });
            let x = left + gap + d as f64 * per_day + s as f64 * w;
            svg.push_str(&format!(
                r#"<rect class="{class}" x="{x:.1}" y="{:.1}" width="{:.1}" height="{bar:.1}"><title>{day} {class}: {}</title></rect>"#,
                base - bar,
                w - 2.0,
                unit.show(v)
            ));
        }
        if (days.len() - 1 - d).is_multiple_of(step) {
            let label: String = day.chars().skip(5).collect();
            let centre = left + gap + d as f64 * per_day + (per_day - gap) / 2.0;
            svg.push_str(&format!(
                r#"<text class="x-label" x="{centre:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
                base + 13.0
            ));
        }
    }
    svg.push_str(&format!(
        r#"<text class="axis-title" x="{:.1}" y="{:.1}" text-anchor="middle">day (UTC)</text></svg>"#,
        left + (width - left) / 2.0,
        base + 30.0
    ));
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
    // The charts: every review of the period, summed by the store (not only those listed).
    let totals = match state.store.daily_totals(&tenant.id, &days[0]).await {
        Ok(t) => t,
        Err(e) => return crate::error::ApiError::from(e).into_response(),
    };
    let by_day: BTreeMap<&str, &proven_store::DayTotals> =
        totals.iter().map(|t| (t.day.as_str(), t)).collect();
    let of = |f: &dyn Fn(&proven_store::DayTotals) -> f64| -> Vec<f64> {
        days.iter()
            .map(|d| by_day.get(d.as_str()).map(|t| f(t)).unwrap_or(0.0))
            .collect()
    };
    let period_reviews: i64 = totals.iter().map(|t| t.reviews).sum();
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
        rows.push(context! {
            id => r.id, status => r.status, repository => r.repository, base => r.base_rev,
            head => r.head_rev, created_at => r.created_at, counts => counts(&result),
        });
    }
    let reviews_chart = chart(
        &days,
        &[("reviews", of(&|t| t.reviews as f64))],
        Unit::Count,
        "reviews",
    );
    let findings_chart = chart(
        &days,
        &[
            ("reproduced", of(&|t| t.reproduced as f64)),
            ("exploited", of(&|t| t.exploited as f64)),
            ("advisory", of(&|t| t.advisory as f64)),
            ("tool", of(&|t| t.tool as f64)),
        ],
        Unit::Count,
        "findings",
    );
    let cost_chart = chart(&days, &[("cost", of(&|t| t.cost_usd))], Unit::Usd, "USD");
    page(
        StatusCode::OK,
        "reviews.html",
        context! {
            tenant => tenant.name, reviews => rows, days => DAYS, period_reviews => period_reviews,
            since => days[0].clone(), listed_max => MAX_LISTED,
            // Built by Proven from numbers only (see `chart`): marked safe to embed.
            reviews_chart => minijinja::Value::from_safe_string(reviews_chart),
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
    let (failed, causes) = outcome(&summary.status, &result);
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
            base => summary.base_rev, head => summary.head_rev,
            // The report document as the JSON report holds it: every field the page shows
            // is read from it, nothing recomputed.
            r => report_value(&result), failed => failed, causes => causes,
            trace => trace,
        },
    )
}

/// The report document for a template: an empty one when the review has none yet (so
/// every field reads as absent, never as an error).
fn report_value(report: &serde_json::Value) -> minijinja::Value {
    match report {
        serde_json::Value::Object(_) => minijinja::Value::from_serialize(report),
        _ => minijinja::Value::from_serialize(serde_json::json!({})),
    }
}

/// Whether a review failed or is incomplete (by the store's status or the report's), and
/// its causes in words, from the report: the failed services, the inputs that could not be
/// read, what the review could not see, and a partial plan's reason.
fn outcome(status: &str, report: &serde_json::Value) -> (bool, Vec<String>) {
    let doc_status = report["status"].as_str().unwrap_or_default();
    let failed = matches!(status, "failed" | "incomplete" | "cancelled")
        || matches!(doc_status, "failed" | "incomplete");
    let items = |key: &str| report[key].as_array().cloned().unwrap_or_default();
    let mut causes = Vec::new();
    for s in items("failed_services") {
        causes.push(format!(
            "The {} service failed: {}",
            s["service"].as_str().unwrap_or("?"),
            s["message"].as_str().unwrap_or_default()
        ));
    }
    for e in items("input_errors") {
        causes.push(format!(
            "Could not read {}: {}",
            e["path"].as_str().unwrap_or("?"),
            e["message"].as_str().unwrap_or_default()
        ));
    }
    if let Some(p) = report["plan"]["partial"].as_str() {
        causes.push(format!("Partial plan: {p}"));
    }
    for n in items("not_seen") {
        causes.push(format!(
            "Not seen: {}: {}",
            n["what"].as_str().unwrap_or("?"),
            n["reason"].as_str().unwrap_or_default()
        ));
    }
    (failed, causes)
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
        for &(name, text) in TEMPLATES {
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
            counts => Counts::default() }], period_reviews => 1, days => DAYS,
            findings_chart => minijinja::Value::from_safe_string(chart(&["2026-12-01".into()], &[("advisory", vec![1.0])], Unit::Count, "findings")),
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
        let mut report = report_with_two_findings();
        report["findings"][0]["title"] = hostile.into();
        report["findings"][1]["evidence"][0]["row"]["package"]["name"] = hostile.into();
        let review = review_page("complete", &report);
        assert!(!review.contains(hostile), "{review}");
        assert!(render("login.html", context! {}).contains("name=\"token\""));
    }

    /// A review's result document, as the pipeline stores it: a reproduced defect with its
    /// proving test, runs and a proved patch, and an advisory finding with EPSS, KEV, a fix
    /// and its matched row. Read through `proven_report::Report`, so it is a valid report.
    fn report_with_two_findings() -> serde_json::Value {
        let run = |side: &str, outcome: &str, exit: i64| {
            serde_json::json!({"run_id": format!("run-{side}"), "side": side, "commit": "0123456789abcdef0123",
                "image": "proven-sandbox-python:local", "command": ["pytest", "-q", "tests/test_proven_parse.py"],
                "exit_code": exit, "outcome": outcome, "duration_ms": 812, "output_tail": format!("1 {outcome} in 0.4s"),
                "output_sha256": "ab".repeat(32), "tests": {"passed": 0, "failed": 1, "skipped": 0, "errors": 0},
                "environment": ["requests: resolved to 2.32.3 (not pinned in requirements.txt)"]})
        };
        let doc = serde_json::json!({
            "schema_version": 1, "kind": "review", "review_id": "r1", "status": "complete",
            "target": "https://example.test/repo.git",
            "proof_counts": {"reproduced": 1, "exploited": 0, "advisory": 1, "tool": 0},
            "findings": [
                {"id": "f1", "proof_level": "reproduced", "kind": "defect", "title": "parse() drops the last field",
                 "location": {"path": "app/parse.py", "line": 12},
                 "claim": "parse('a,b') returns ['a'] since the change",
                 "skeptic": {"verdict": "conceded", "reason": "the test fails on the change only", "artifact": "run-change"},
                 "patch": {"edits": [{"path": "app/parse.py", "old_text": "[:-1]", "new_text": ""}],
                           "explanation": "keep every field", "attempt": 1, "runs": [run("change", "passed", 0)]},
                 "evidence": [
                    {"kind": "test_run", "run": run("base", "passed", 0),
                     "test": {"path": "tests/test_proven_parse.py", "code": "def test_parse(): assert parse('a,b') == ['a','b']"}},
                    {"kind": "test_run", "run": run("change", "test_failed", 1)}]},
                {"id": "f2", "proof_level": "advisory", "kind": "vulnerability", "title": "requests 2.0.0 is vulnerable",
                 "package": {"ecosystem": "PyPI", "name": "requests", "old_version": null, "new_version": "2.0.0",
                             "dependency": "direct", "dev": false},
                 "location": {"path": "requirements.txt", "line": 3},
                 "advisory": {"id": "GHSA-aaaa-bbbb-cccc", "aliases": ["CVE-2099-1234"], "summary": "Session leaks the proxy password",
                              "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N", "base_score": 7.5}]},
                 "exploited": {"cve": "CVE-2099-1234", "date_added": "2099-01-02"},
                 "epss": {"cve": "CVE-2099-1234", "probability": 0.91234, "percentile": 0.99876, "score_date": "2099-01-03"},
                 "fix": {"version": "2.31.0", "note": "the smallest version outside every affected range",
                         "proposed": {"version": "2.31.0", "edits": [{"path": "requirements.txt", "old_text": "requests==2.0.0", "new_text": "requests==2.31.0"}],
                                      "proved": true, "reason": "no advisory matches requests 2.31.0"}},
                 "evidence": [{"kind": "advisory_row", "advisory_id": "GHSA-aaaa-bbbb-cccc", "affected_index": 0,
                               "matched": "range 0 (ECOSYSTEM)",
                               "row": {"package": {"ecosystem": "PyPI", "name": "requests"},
                                       "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.31.0"}]}]}}]}],
            "unproven": [], "failed_services": [], "not_seen": [], "left_out": [], "input_errors": [],
            "dependency_files": []
        });
        let report: proven_report::Report =
            serde_json::from_value(doc).unwrap_or_else(|e| panic!("not a report: {e}"));
        serde_json::to_value(&report).unwrap_or_default()
    }

    fn review_page(status: &str, report: &serde_json::Value) -> String {
        let (failed, causes) = outcome(status, report);
        render(
            "review.html",
            context! { tenant => "t", id => "r1", status => status, repository => "repo", base => "a",
            head => "b", r => report_value(report), failed => failed,
            causes => causes, trace => Vec::<minijinja::Value>::new() },
        )
    }

    #[test]
    fn a_review_page_shows_every_field_of_each_finding_from_the_report() {
        let page = review_page("complete", &report_with_two_findings());
        for shown in [
            // The reproduced finding: its claim, level, proving test, runs, Skeptic, fix.
            "parse() drops the last field",
            "parse(&#x27;a,b&#x27;) returns [&#x27;a&#x27;] since the change",
            "class=\"level reproduced\"",
            "tests&#x2f;test_proven_parse.py",
            "conceded",
            "keep every field",
            "<b class=\"proved\">proved</b> (try 1)",
            // Every run: command, image, outcome, exit, environment lines, output.
            "pytest -q tests&#x2f;test_proven_parse.py",
            "proven-sandbox-python:local",
            "test_failed (exit 1, 812 ms)",
            "passed (exit 0, 812 ms)",
            "requests: resolved to 2.32.3 (not pinned in requirements.txt)",
            "1 test_failed in 0.4s",
            // The advisory finding: summary, severity, EPSS, KEV, fix, proposed fix, row.
            "class=\"level advisory\"",
            "Session leaks the proxy password",
            "CVSS_V3 <b>7.5</b>",
            "CVE-2099-1234: probability 0.91234, percentile 0.99876",
            "CVE-2099-1234 is in CISA KEV (added 2099-01-02)",
            "<code>2.31.0</code> (the smallest version outside every affected range)",
            "requests==2.31.0",
            "no advisory matches requests 2.31.0",
            "Matched row: GHSA-aaaa-bbbb-cccc affected[0], matched by range 0 (ECOSYSTEM)",
            "{\"fixed\":\"2.31.0\"}",
        ] {
            assert!(page.contains(shown), "the page lacks {shown:?}:\n{page}");
        }
        assert_eq!(page.matches("<tr class=\"run\">").count(), 3, "{page}");
        assert!(!page.contains("No finding."), "{page}");
        assert!(!page.contains("id=\"outcome\""), "{page}");
    }

    #[test]
    fn a_failed_or_partial_review_says_so_and_names_its_cause() {
        let mut report = report_with_two_findings();
        report["status"] = "failed".into();
        report["findings"] = serde_json::json!([]);
        report["failed_services"] = serde_json::json!([{"service": "judge",
            "message": "dead-lettered: the judge crashed its worker every time"}]);
        report["not_seen"] = serde_json::json!([{"what": "poetry.lock", "reason": "too large"}]);
        let page = review_page("failed", &report);
        assert!(!page.contains("No finding."), "{page}");
        for shown in [
            "This review failed",
            "could not look, not because there is none",
            "The judge service failed: dead-lettered: the judge crashed its worker every time",
            "Not seen: poetry.lock: too large",
        ] {
            assert!(page.contains(shown), "the page lacks {shown:?}:\n{page}");
        }
        // Failed with nothing in the report (it never got one): said, not "No finding.".
        let page = review_page("failed", &serde_json::Value::Null);
        assert!(
            page.contains("This review failed") && !page.contains("No finding."),
            "{page}"
        );
        // Partial: the plan's reason.
        let mut report = report_with_two_findings();
        report["status"] = "partial".into();
        report["findings"] = serde_json::json!([]);
        report["plan"] = serde_json::json!({"change_kind": "code", "class": "c", "band": "quick",
            "runs": [], "left_out": [], "partial": "no model is configured: only dependency files were examined"});
        let page = review_page("partial", &report);
        assert!(!page.contains("No finding."), "{page}");
        assert!(
            page.contains("This review is partial")
                && page.contains(
                    "Partial plan: no model is configured: only dependency files were examined"
                ),
            "{page}"
        );
        // A complete review without findings says so.
        let mut report = report_with_two_findings();
        report["findings"] = serde_json::json!([]);
        assert!(review_page("complete", &report).contains("No finding."));
    }

    fn attr(tag: &str, name: &str) -> f64 {
        let at = tag.find(&format!(" {name}=\"")).expect("attribute") + name.len() + 3;
        tag[at..tag[at..].find('"').expect("end") + at]
            .parse()
            .expect("number")
    }

    #[test]
    fn charts_have_axes_and_date_labels_that_never_overlap() {
        let days: Vec<String> = (1..=14).map(|d| format!("2026-12-{d:02}")).collect();
        for series in [
            vec![("cost", vec![0.5; 14])],
            vec![
                ("reproduced", vec![1.0; 14]),
                ("exploited", vec![0.0; 14]),
                ("advisory", vec![3.0; 14]),
                ("tool", vec![2.0; 14]),
            ],
        ] {
            let svg = chart(&days, &series, Unit::Count, "findings");
            assert_eq!(svg.matches("class=\"axis\"").count(), 2, "{svg}");
            assert!(svg.contains(">day (UTC)</text>") && svg.contains(">findings</text>"));
            assert_eq!(svg.matches("class=\"y-label\"").count(), 3, "{svg}");
            let xs: Vec<f64> = svg
                .split("<text class=\"x-label\"")
                .skip(1)
                .map(|t| attr(t, "x"))
                .collect();
            assert!(xs.len() >= 2, "{svg}");
            assert!(
                xs.windows(2).all(|p| p[1] - p[0] >= LABEL_PX),
                "labels overlap: {xs:?}"
            );
            // The newest day is always labelled.
            assert!(svg.contains(">12-14</text>"), "{svg}");
        }
        // Each count the axis names is drawn at that count's height: a bar of 2 reaches the
        // line labelled 2 (an odd most, 5, gives 0, 3 and 6, never a "3" at 2.5).
        for most in [1.0, 3.0, 5.0] {
            let svg = chart(
                &days,
                &[("advisory", vec![2.0, most])],
                Unit::Count,
                "findings",
            );
            let labels: Vec<(f64, f64)> = svg
                .split("<text class=\"y-label\"")
                .skip(1)
                .map(|t| {
                    let value = t[t.find('>').expect("text") + 1..t.find("</text>").expect("end")]
                        .parse::<f64>()
                        .expect("a whole count");
                    (value, attr(t, "y") - 3.0)
                })
                .collect();
            let (zero, top) = (labels[0], labels[2]);
            assert!(top.0 >= most && zero.0 == 0.0, "{labels:?}");
            for (value, y) in &labels {
                let expected = zero.1 - (zero.1 - top.1) * value / top.0;
                assert!(
                    (y - expected).abs() < 0.1,
                    "{value} drawn at {y}: {labels:?}"
                );
            }
            let bar = svg.split("<rect ").nth(1).expect("a bar");
            assert!(
                (attr(bar, "height") - (zero.1 - top.1) * 2.0 / top.0).abs() < 0.1,
                "{svg}"
            );
        }
        let svg = chart(&days, &[("cost", vec![0.257; 14])], Unit::Usd, "USD");
        assert!(
            svg.contains(">$0.26</text>") && svg.contains(">$0.00</text>"),
            "{svg}"
        );
    }
}
