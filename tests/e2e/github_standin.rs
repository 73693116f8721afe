//! A stand-in for api.github.com on 127.0.0.1: the product under test is pointed at it as
//! its GitHub API base URL. It records every request, checks each against the shapes GitHub
//! documents, and answers as GitHub does from in-memory state (reviews, check runs, SARIF).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State as Shared};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::sync::{oneshot, watch};

const API_VERSION: &str = "2022-11-28";
const STATUSES: &[&str] = &[
    "queued",
    "in_progress",
    "completed",
    "waiting",
    "requested",
    "pending",
];
const CONCLUSIONS: &[&str] = &[
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "stale",
    "timed_out",
];
const RATE_LIMITED: &str = "You have exceeded a secondary rate limit and have been temporarily \
    blocked from content creation. Please retry your request again later.";

/// What the stand-in accepts: the app, its installations and their tokens.
#[derive(Debug, Clone, Default)]
pub struct StandInConfig {
    pub app_id: u64,
    /// The app's RSA public key, PKCS#1 `RSAPublicKey` DER (what ring's RSA_PKCS1_2048_8192_SHA256 verifies with).
    pub app_public_key: Vec<u8>,
    /// installation id -> the access token the stand-in issues for it.
    pub installations: HashMap<u64, String>,
    /// A token accepted as-is (a GitHub Actions workflow's GITHUB_TOKEN), if any.
    pub workflow_token: Option<String>,
    /// A workflow token that may only read (what a pull request from a fork gets): every
    /// write answers 403 "Resource not accessible by integration".
    pub read_only_token: Option<String>,
    /// Lifetime of issued installation tokens, seconds (GitHub: 3600).
    pub token_ttl_secs: i64,
}

/// The running stand-in; it serves on a task of the runtime that started it.
pub struct GitHubStandIn {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub url: String,
    shared: Arc<Mutex<State>>,
}

/// One request as the stand-in received it, with the status it answered.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: String,
    /// Lowercased header names.
    pub headers: BTreeMap<String, String>,
    /// `Null` when the body is empty or not JSON.
    pub body: Value,
    pub status: u16,
}

/// A withheld response (see [`GitHubStandIn::hold_review_posts`] and
/// [`GitHubStandIn::hold_check_run_creates`]).
pub struct Hold {
    posted: watch::Receiver<bool>,
    release: oneshot::Sender<()>,
}

struct Held {
    posted: watch::Sender<bool>,
    release: oneshot::Receiver<()>,
}

struct Review {
    id: u64,
    /// A person's login, for a review a person wrote (None: the app's own).
    by: Option<String>,
    body: String,
    commit_id: String,
    event: String,
    comments: Vec<Value>,
    submitted_at: String,
}

#[derive(Default)]
struct State {
    config: StandInConfig,
    url: String,
    requests: Vec<Recorded>,
    violations: Vec<String>,
    /// Issued token -> (installation id, expiry as a Unix time).
    tokens: HashMap<String, (u64, i64)>,
    issued: usize,
    uninstalled: HashSet<u64>,
    reviews: HashMap<(String, u64), Vec<Review>>,
    next_id: u64,
    check_runs: Vec<Value>,
    sarifs: Vec<Value>,
    diffs: HashMap<(String, u64), HashSet<(String, u64)>>,
    rate_limited: (usize, u64),
    failing: (usize, u16),
    holds: Vec<(HoldOn, Held)>,
}

/// Which request a [`Hold`] withholds the answer of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum HoldOn {
    ReviewPost,
    CheckRunCreate,
}

/// What a handler answers.
struct Reply {
    status: u16,
    body: Value,
    headers: Vec<(&'static str, String)>,
}

impl Reply {
    fn new(status: u16, body: Value) -> Reply {
        Reply {
            status,
            body,
            headers: Vec::new(),
        }
    }

    fn message(status: u16, message: &str) -> Reply {
        Reply::new(status, json!({ "message": message }))
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, self.body.to_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in self.headers {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(name, value);
            }
        }
        response
    }
}

/// The request being handled, and the state it may change.
struct Cx<'a> {
    st: &'a mut State,
    method: &'a str,
    path: &'a str,
    query: &'a str,
    headers: &'a HeaderMap,
    body: &'a Value,
}

impl Cx<'_> {
    fn violation(&mut self, what: &str) {
        let line = format!("{} {}: {what}", self.method, self.path);
        self.st.violations.push(line);
    }

    /// A shape problem: recorded as a violation, answered 422 "Validation Failed".
    fn invalid(&mut self, what: String) -> Reply {
        self.violation(&what);
        Reply::new(
            422,
            json!({"message": "Validation Failed", "errors": [what], "status": "422"}),
        )
    }
}

impl GitHubStandIn {
    /// Binds 127.0.0.1:0 and serves on a tokio task; returns once the listener is bound.
    /// The task runs on the caller's runtime: a test that waits for the product with a
    /// blocking call (`Command::output`) needs `#[tokio::test(flavor = "multi_thread")]`.
    pub async fn start(config: StandInConfig) -> GitHubStandIn {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind stand-in");
        let url = format!(
            "http://{}",
            listener.local_addr().expect("stand-in address")
        );
        let (next_id, failing) = (80_000_000, (0, 500));
        let state = State {
            config,
            url: url.clone(),
            next_id,
            failing,
            ..State::default()
        };
        let shared = Arc::new(Mutex::new(state));
        let app = axum::Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::max(64 << 20))
            .with_state(shared.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        GitHubStandIn { url, shared }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.shared)
    }

    /// Every request in arrival order, with the status answered.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state().requests.clone()
    }

    /// Every shape problem seen, each naming method, path and what was wrong.
    pub fn violations(&self) -> Vec<String> {
        self.state().violations.clone()
    }

    /// How many installation tokens were issued.
    pub fn tokens_issued(&self) -> usize {
        self.state().issued
    }

    /// The reviews stored on a pull request (`repo` is "owner/name"), in creation order.
    pub fn reviews(&self, repo: &str, pull: u64) -> Vec<Value> {
        let st = self.state();
        let reviews = st.reviews.get(&(repo.to_string(), pull)).map(Vec::as_slice);
        let reviews = reviews.unwrap_or_default().iter().map(|r| {
            let state = review_state(&r.event);
            json!({"id": r.id, "body": r.body, "commit_id": r.commit_id, "event": r.event,
                   "state": state, "comments": r.comments})
        });
        reviews.collect()
    }

    /// Every check run with its current fields and all annotations ever sent to it.
    pub fn check_runs(&self) -> Vec<Value> {
        self.state().check_runs.clone()
    }

    /// Each SARIF upload: {repo, commit_sha, ref, sarif: the decoded SARIF JSON}.
    pub fn sarifs(&self) -> Vec<Value> {
        self.state().sarifs.clone()
    }

    /// A review a person (`login`) wrote on the pull request, with `body`.
    pub fn add_review_by(&self, repo: &str, pull: u64, login: &str, body: &str) {
        let mut st = self.state();
        st.next_id += 1;
        let review = Review {
            id: st.next_id,
            by: Some(login.to_string()),
            body: body.to_string(),
            commit_id: "0".repeat(40),
            event: "COMMENT".into(),
            comments: Vec::new(),
            submitted_at: rfc3339(now()),
        };
        st.reviews
            .entry((repo.to_string(), pull))
            .or_default()
            .push(review);
    }

    /// The (path, line) pairs on the RIGHT side that are part of the pull request's diff.
    pub fn set_diff(&self, repo: &str, pull: u64, lines: &[(&str, u64)]) {
        let lines = lines
            .iter()
            .map(|(path, line)| (path.to_string(), *line))
            .collect();
        self.state().diffs.insert((repo.to_string(), pull), lines);
    }

    /// The next `n` authenticated non-token requests answer GitHub's secondary rate limit.
    pub fn rate_limit_next(&self, n: usize, retry_after_secs: u64) {
        self.state().rate_limited = (n, retry_after_secs);
    }

    /// From now on the installation gets no tokens (404) and its tokens are refused (401).
    pub fn uninstall(&self, installation_id: u64) {
        self.state().uninstalled.insert(installation_id);
    }

    /// The next review POST that is stored gets its response withheld until the [`Hold`]
    /// is released or dropped.
    pub fn hold_review_posts(&self) -> Hold {
        self.hold(HoldOn::ReviewPost)
    }

    /// The next check run created gets its response withheld (the run exists on GitHub;
    /// its creator does not know its id yet).
    pub fn hold_check_run_creates(&self) -> Hold {
        self.hold(HoldOn::CheckRunCreate)
    }

    fn hold(&self, on: HoldOn) -> Hold {
        let (posted_tx, posted) = watch::channel(false);
        let (release, release_rx) = oneshot::channel();
        let held = Held {
            posted: posted_tx,
            release: release_rx,
        };
        self.state().holds.push((on, held));
        Hold { posted, release }
    }

    /// The next `n` authenticated non-token requests answer `status` {"message":"Server Error"}.
    pub fn fail_next(&self, n: usize, status: u16) {
        self.state().failing = (n, status);
    }
}

impl Hold {
    /// Resolves once the held POST has been applied (its review stored).
    pub async fn posted(&self) {
        let mut posted = self.posted.clone();
        let _ = posted.wait_for(|posted| *posted).await;
    }

    /// Lets the response go.
    pub fn release(self) {
        let _ = self.release.send(());
    }
}

/// Generates an RSA 2048 app key with `openssl` into `dir`: the private key PEM as GitHub
/// gives it (PKCS#1 "BEGIN RSA PRIVATE KEY"), and the public key as PKCS#1 DER.
pub fn app_key(dir: &Path) -> (PathBuf, Vec<u8>) {
    let (key, any, public) = (
        dir.join("app-key.pem"),
        dir.join("app-key.any.pem"),
        dir.join("app-key.der"),
    );
    let path = |p: &PathBuf| p.to_str().expect("a UTF-8 key path").to_string();
    let (k, a, p) = (path(&key), path(&any), path(&public));
    if !openssl(&["genrsa", "-traditional", "-out", &k, "2048"]) {
        assert!(
            openssl(&["genrsa", "-out", &a, "2048"]),
            "openssl genrsa failed"
        );
        if !openssl(&["rsa", "-in", &a, "-traditional", "-out", &k]) {
            std::fs::copy(&any, &key).expect("copy the app key");
        }
    }
    let pem = std::fs::read_to_string(&key).expect("read the app key");
    assert!(
        pem.starts_with("-----BEGIN RSA PRIVATE KEY-----"),
        "openssl wrote no PKCS#1 key"
    );
    let der = [
        "rsa",
        "-in",
        &k,
        "-RSAPublicKey_out",
        "-outform",
        "DER",
        "-out",
        &p,
    ];
    assert!(openssl(&der), "openssl rsa -RSAPublicKey_out failed");
    (
        key,
        std::fs::read(&public).expect("read the app public key"),
    )
}

fn openssl(args: &[&str]) -> bool {
    let status = Command::new("openssl")
        .args(args)
        .stderr(Stdio::null())
        .status();
    status.is_ok_and(|s| s.success())
}

fn lock(shared: &Mutex<State>) -> MutexGuard<'_, State> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn now() -> i64 {
    OffsetDateTime::now_utc().unix_timestamp()
}

fn rfc3339(t: i64) -> String {
    let t = OffsetDateTime::from_unix_timestamp(t).ok();
    t.and_then(|t| t.format(&Rfc3339).ok()).unwrap_or_default()
}

fn is_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> &'h str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

async fn handle(
    Shared(shared): Shared<Arc<Mutex<State>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let (path, query) = (uri.path(), uri.query().unwrap_or(""));
    let (reply, held) = {
        let mut st = lock(&shared);
        let mut cx = Cx {
            st: &mut st,
            method: method.as_str(),
            path,
            query,
            headers: &headers,
            body: &body,
        };
        check_headers(&mut cx);
        let reply = route(&mut cx);
        let on = match (method == Method::POST, reply.status) {
            (true, 200) if path.ends_with("/reviews") => Some(HoldOn::ReviewPost),
            (true, 201) if path.ends_with("/check-runs") => Some(HoldOn::CheckRunCreate),
            _ => None,
        };
        let held = on
            .and_then(|on| st.holds.iter().position(|(h, _)| *h == on))
            .map(|i| st.holds.remove(i).1);
        let headers = headers.iter().map(|(name, value)| {
            (
                name.as_str().to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        });
        st.requests.push(Recorded {
            method: method.to_string(),
            path: path.to_string(),
            query: query.to_string(),
            headers: headers.collect(),
            body: body.clone(),
            status: reply.status,
        });
        (reply, held)
    };
    if let Some(held) = held {
        let _ = held.posted.send(true);
        let _ = held.release.await;
    }
    reply.into_response()
}

fn check_headers(cx: &mut Cx) {
    if header(cx.headers, "user-agent").trim().is_empty() {
        cx.violation("no user-agent header");
    }
    let accept = header(cx.headers, "accept");
    if !accept.contains("application/vnd.github+json") {
        cx.violation(&format!(
            "accept is {accept:?}, not application/vnd.github+json"
        ));
    }
    let version = header(cx.headers, "x-github-api-version");
    if version != API_VERSION {
        cx.violation(&format!(
            "x-github-api-version is {version:?}, not {API_VERSION}"
        ));
    }
}

type Handler = fn(&mut Cx, &[&str]) -> Reply;

fn endpoint(method: &str, segments: &[&str]) -> Option<Handler> {
    let handler: Handler = match (method, segments) {
        ("POST", ["app", "installations", _, "access_tokens"]) => access_token,
        ("GET", ["installation", "repositories"]) => installation_repositories,
        ("GET", ["repos", _, _, "pulls", _, "reviews"]) => list_reviews,
        ("POST", ["repos", _, _, "pulls", _, "reviews"]) => create_review,
        ("PUT", ["repos", _, _, "pulls", _, "reviews", _]) => update_review,
        ("POST", ["repos", _, _, "check-runs"]) => create_check_run,
        ("GET", ["repos", _, _, "commits", _, "check-runs"]) => list_check_runs,
        ("PATCH", ["repos", _, _, "check-runs", _]) => update_check_run,
        ("POST", ["repos", _, _, "code-scanning", "sarifs"]) => upload_sarif,
        ("GET", ["repos", _, _, "code-scanning", "sarifs", _]) => sarif_status,
        _ => return None,
    };
    Some(handler)
}

fn installation_repositories(_: &mut Cx, _: &[&str]) -> Reply {
    Reply::new(200, json!({"total_count": 0, "repositories": []}))
}

fn route(cx: &mut Cx) -> Reply {
    let path = cx.path;
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let Some(handler) = endpoint(cx.method, &segments) else {
        cx.violation("no such GitHub endpoint");
        return Reply::message(404, "Not Found");
    };
    if segments[0] != "app" {
        if let Some(denied) = authenticate(cx) {
            return denied;
        }
        if let Some(knob) = knobs(cx.st) {
            return knob;
        }
    }
    handler(cx, &segments)
}

/// `None` when the request carries a current installation token or the workflow token.
/// Expired and uninstalled tokens are refused without a violation; others are violations.
fn authenticate(cx: &mut Cx) -> Option<Reply> {
    let denied = Some(Reply::message(401, "Bad credentials"));
    let auth = header(cx.headers, "authorization");
    let token = auth
        .strip_prefix("token ")
        .or_else(|| auth.strip_prefix("Bearer "));
    let Some(token) = token.map(str::trim).filter(|t| !t.is_empty()) else {
        cx.violation("no `authorization: token …` header");
        return denied;
    };
    if cx.st.config.workflow_token.as_deref() == Some(token) {
        return None;
    }
    if cx.st.config.read_only_token.as_deref() == Some(token) {
        return (cx.method != "GET")
            .then(|| Reply::message(403, "Resource not accessible by integration"));
    }
    match cx.st.tokens.get(token) {
        None => {
            cx.violation("a token the stand-in never issued");
            denied
        }
        Some((id, expires)) if cx.st.uninstalled.contains(id) || *expires <= now() => denied,
        Some(_) => None,
    }
}

fn knobs(st: &mut State) -> Option<Reply> {
    if st.rate_limited.0 > 0 {
        st.rate_limited.0 -= 1;
        let mut reply = Reply::new(
            403,
            json!({"message": RATE_LIMITED,
            "documentation_url": "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"}),
        );
        reply
            .headers
            .push(("retry-after", st.rate_limited.1.to_string()));
        return Some(reply);
    }
    if st.failing.0 > 0 {
        st.failing.0 -= 1;
        return Some(Reply::message(st.failing.1, "Server Error"));
    }
    None
}

fn access_token(cx: &mut Cx, segments: &[&str]) -> Reply {
    let auth = header(cx.headers, "authorization");
    let jwt = auth.strip_prefix("Bearer ").unwrap_or("").trim();
    if let Err(why) = verify_jwt(&cx.st.config, jwt, now()) {
        cx.violation(&format!("bad JWT: {why}"));
        return Reply::message(401, "A JSON web token could not be decoded");
    }
    let id = segments[2]
        .parse::<u64>()
        .ok()
        .filter(|id| !cx.st.uninstalled.contains(id));
    let Some((id, token)) = id.and_then(|id| Some((id, cx.st.config.installations.get(&id)?)))
    else {
        return Reply::message(404, "Not Found");
    };
    let token = token.clone();
    if !matches!(cx.body, Value::Null | Value::Object(_)) {
        return cx.invalid("the body is not a JSON object".into());
    }
    let expires = now() + cx.st.config.token_ttl_secs;
    cx.st.tokens.insert(token.clone(), (id, expires));
    cx.st.issued += 1;
    let permissions = json!({"checks": "write", "pull_requests": "write", "contents": "read",
                             "security_events": "write", "metadata": "read"});
    Reply::new(
        201,
        json!({"token": token, "expires_at": rfc3339(expires),
                           "permissions": permissions, "repository_selection": "all"}),
    )
}

fn verify_jwt(config: &StandInConfig, jwt: &str, now: i64) -> Result<(), String> {
    let parts: Vec<&str> = jwt.split('.').collect();
    let [h, c, s] = parts.as_slice() else {
        return Err("not three dot-separated parts".into());
    };
    let decode = |part: &str, what: &str| -> Result<Vec<u8>, String> {
        URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|e| format!("{what} is not unpadded base64url: {e}"))
    };
    let json = |part: &str, what: &str| -> Result<Value, String> {
        serde_json::from_slice(&decode(part, what)?).map_err(|e| format!("{what} is not JSON: {e}"))
    };
    let (head, claims) = (json(h, "header")?, json(c, "payload")?);
    if head["alg"] != "RS256" || head.get("typ").is_some_and(|typ| typ != "JWT") {
        return Err(format!("header {head} is not alg RS256, typ JWT"));
    }
    let iss_ok = match &claims["iss"] {
        Value::Number(n) => n.as_u64() == Some(config.app_id),
        Value::String(s) => *s == config.app_id.to_string(),
        _ => false,
    };
    let (Some(iat), Some(exp)) = (claims["iat"].as_i64(), claims["exp"].as_i64()) else {
        return Err("iat and exp are not integers".into());
    };
    if !iss_ok || exp - iat > 600 || exp + 60 <= now || iat > now + 60 {
        return Err(format!(
            "claims {claims} (app {}, now {now})",
            config.app_id
        ));
    }
    let key = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        &config.app_public_key,
    );
    let signed = format!("{h}.{c}");
    key.verify(signed.as_bytes(), &decode(s, "signature")?)
        .map_err(|_| "the signature does not verify with the app's public key".to_string())
}

fn opt_str<'v>(o: &'v Map<String, Value>, key: &str) -> Result<Option<&'v str>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(format!("`{key}` is not a string")),
    }
}

fn req_str<'v>(o: &'v Map<String, Value>, key: &str) -> Result<&'v str, String> {
    opt_str(o, key)?.ok_or_else(|| format!("`{key}` is missing"))
}

fn opt_pos(o: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    let value = match o.get(key) {
        None | Some(Value::Null) => Some(None),
        Some(v) => v.as_u64().filter(|n| *n > 0).map(Some),
    };
    value.ok_or_else(|| format!("`{key}` is not a positive integer"))
}

fn one_of(o: &Map<String, Value>, key: &str, allowed: &[&str]) -> Result<Option<String>, String> {
    match opt_str(o, key)? {
        Some(v) if !allowed.contains(&v) => Err(format!("`{key}` {v:?} is not one of {allowed:?}")),
        v => Ok(v.map(str::to_string)),
    }
}

fn object(v: &Value) -> Result<&Map<String, Value>, String> {
    v.as_object().ok_or_else(|| "not a JSON object".to_string())
}

fn pull_of(cx: &mut Cx, segments: &[&str]) -> Result<(String, u64), Reply> {
    let repo = format!("{}/{}", segments[1], segments[2]);
    match segments[4].parse::<u64>() {
        Ok(pull) => Ok((repo, pull)),
        Err(_) => {
            cx.violation("the pull request number is not a number");
            Err(Reply::message(404, "Not Found"))
        }
    }
}

fn review_state(event: &str) -> &'static str {
    match event {
        "APPROVE" => "APPROVED",
        "REQUEST_CHANGES" => "CHANGES_REQUESTED",
        _ => "COMMENTED",
    }
}

fn review_json(url: &str, repo: &str, pull: u64, r: &Review) -> Value {
    let user = match &r.by {
        Some(login) => json!({"login": login, "id": 2, "type": "User"}),
        None => json!({"login": "proven[bot]", "id": 1, "type": "Bot"}),
    };
    json!({"id": r.id, "node_id": format!("PRR_kwStandIn{}", r.id),
           "user": user,
           "body": r.body, "state": review_state(&r.event), "commit_id": r.commit_id,
           "html_url": format!("https://github.com/{repo}/pull/{pull}#pullrequestreview-{}", r.id),
           "pull_request_url": format!("{url}/repos/{repo}/pulls/{pull}"),
           "submitted_at": r.submitted_at})
}

fn list_reviews(cx: &mut Cx, segments: &[&str]) -> Reply {
    let (repo, pull) = match pull_of(cx, segments) {
        Ok(pr) => pr,
        Err(reply) => return reply,
    };
    let params = cx.query.split('&').filter_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        Some((k, v.parse::<usize>().ok().filter(|n| *n > 0)?))
    });
    let params: HashMap<&str, usize> = params.collect();
    let per_page = params.get("per_page").copied().unwrap_or(30).min(100);
    let page = params.get("page").copied().unwrap_or(1);
    let all = cx
        .st
        .reviews
        .get(&(repo.clone(), pull))
        .map(Vec::as_slice)
        .unwrap_or_default();
    let skip = (page - 1).saturating_mul(per_page);
    let items = all.iter().skip(skip).take(per_page);
    let items = items
        .map(|r| review_json(&cx.st.url, &repo, pull, r))
        .collect();
    let mut reply = Reply::new(200, Value::Array(items));
    if skip.saturating_add(per_page) < all.len() {
        let next = format!(
            "<{}{}?page={}&per_page={per_page}>; rel=\"next\"",
            cx.st.url,
            cx.path,
            page + 1
        );
        reply.headers.push(("link", next));
    }
    reply
}

/// A review's body checked: (commit_id, body, event, comments).
fn parse_review(body: &Value) -> Result<(String, String, String, Vec<Value>), String> {
    let o = object(body)?;
    let commit = opt_str(o, "commit_id")?.filter(|c| is_sha(c));
    let commit = commit.ok_or("`commit_id` is not a 40-hex commit SHA")?;
    let text = opt_str(o, "body")?.unwrap_or("");
    let event = one_of(o, "event", &["APPROVE", "REQUEST_CHANGES", "COMMENT"])?;
    let event = event.ok_or("`event` is missing (a pending review)")?;
    let comments = match o.get("comments") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(comments)) => comments.clone(),
        Some(_) => return Err("`comments` is not an array".into()),
    };
    for (i, comment) in comments.iter().enumerate() {
        check_comment(comment).map_err(|e| format!("comments[{i}]: {e}"))?;
    }
    if event != "APPROVE" && text.is_empty() && comments.is_empty() {
        return Err(format!("a {event} review needs a body"));
    }
    Ok((commit.to_string(), text.to_string(), event, comments))
}

fn check_comment(comment: &Value) -> Result<(), String> {
    let c = object(comment)?;
    req_str(c, "path")?;
    req_str(c, "body")?;
    let line = opt_pos(c, "line")?.ok_or("`line` is missing")?;
    one_of(c, "side", &["LEFT", "RIGHT"])?;
    one_of(c, "start_side", &["LEFT", "RIGHT"])?;
    match opt_pos(c, "start_line")? {
        Some(start) if start >= line => {
            Err(format!("`start_line` {start} is not below `line` {line}"))
        }
        _ => Ok(()),
    }
}

/// Whether a (checked) comment's lines are on the RIGHT side of the diff.
fn resolves(comment: &Value, diff: Option<&HashSet<(String, u64)>>) -> bool {
    let path = comment["path"].as_str().unwrap_or("");
    let right = |side: &Value| side.is_null() || side == "RIGHT";
    let hit = |line: u64| diff.is_some_and(|d| d.contains(&(path.to_string(), line)));
    let start_ok = match comment["start_line"].as_u64() {
        None => true,
        Some(start) => right(&comment["start_side"]) && hit(start),
    };
    right(&comment["side"]) && comment["line"].as_u64().is_some_and(hit) && start_ok
}

fn create_review(cx: &mut Cx, segments: &[&str]) -> Reply {
    let (repo, pull) = match pull_of(cx, segments) {
        Ok(pr) => pr,
        Err(reply) => return reply,
    };
    let (commit_id, body, event, comments) = match parse_review(cx.body) {
        Ok(review) => review,
        Err(why) => return cx.invalid(why),
    };
    let diff = cx.st.diffs.get(&(repo.clone(), pull));
    if !comments.iter().all(|c| resolves(c, diff)) {
        return Reply::new(
            422,
            json!({"message": "Unprocessable Entity",
            "errors": ["Line could not be resolved"],
            "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
            "status": "422"}),
        );
    }
    cx.st.next_id += 1;
    let submitted_at = rfc3339(now());
    let review = Review {
        id: cx.st.next_id,
        by: None,
        body,
        commit_id,
        event,
        comments,
        submitted_at,
    };
    let answer = review_json(&cx.st.url, &repo, pull, &review);
    cx.st.reviews.entry((repo, pull)).or_default().push(review);
    Reply::new(200, answer)
}

fn update_review(cx: &mut Cx, segments: &[&str]) -> Reply {
    let (repo, pull) = match pull_of(cx, segments) {
        Ok(pr) => pr,
        Err(reply) => return reply,
    };
    let Some(Value::String(body)) = cx.body.get("body") else {
        return cx.invalid("`body` (a string) is required".into());
    };
    let st = &mut *cx.st;
    let id = segments[6].parse::<u64>().ok();
    let reviews = st.reviews.get_mut(&(repo.clone(), pull));
    let Some(review) = reviews.and_then(|rs| rs.iter_mut().find(|r| Some(r.id) == id)) else {
        return Reply::message(404, "Not Found");
    };
    if review.by.is_some() {
        // GitHub: only a review's author may edit it.
        return Reply::message(403, "Resource not accessible by integration");
    }
    review.body = body.clone();
    Reply::new(200, review_json(&st.url, &repo, pull, review))
}

/// A check run's fields checked; answers the annotations it carries.
fn run_fields(o: &Map<String, Value>, creating: bool) -> Result<Vec<Value>, String> {
    if creating {
        req_str(o, "name")?;
        let sha = req_str(o, "head_sha")?;
        if !is_sha(sha) {
            return Err(format!("`head_sha` {sha:?} is not a 40-hex commit SHA"));
        }
    }
    let status = one_of(o, "status", STATUSES)?;
    let conclusion = one_of(o, "conclusion", CONCLUSIONS)?;
    if status.as_deref() == Some("completed") && conclusion.is_none() {
        return Err("`conclusion` is required when `status` is completed".into());
    }
    for key in ["name", "external_id", "details_url"] {
        opt_str(o, key)?;
    }
    for key in ["started_at", "completed_at"] {
        if let Some(t) = opt_str(o, key)?
            && OffsetDateTime::parse(t, &Rfc3339).is_err()
        {
            return Err(format!("`{key}` {t:?} is not an ISO 8601 timestamp"));
        }
    }
    let Some(output) = o.get("output").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let output = object(output).map_err(|e| format!("`output`: {e}"))?;
    req_str(output, "title")?;
    for (key, required) in [("summary", true), ("text", false)] {
        let text = if required {
            Some(req_str(output, key)?)
        } else {
            opt_str(output, key)?
        };
        if text.is_some_and(|t| t.chars().count() > 65535) {
            return Err(format!("`output.{key}` is longer than 65535 characters"));
        }
    }
    let annotations = match output.get("annotations") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(annotations)) => annotations.clone(),
        Some(_) => return Err("`output.annotations` is not an array".into()),
    };
    if annotations.len() > 50 {
        return Err(format!(
            "{} annotations in one request; at most 50",
            annotations.len()
        ));
    }
    for (i, annotation) in annotations.iter().enumerate() {
        check_annotation(annotation).map_err(|e| format!("output.annotations[{i}]: {e}"))?;
    }
    Ok(annotations)
}

fn check_annotation(annotation: &Value) -> Result<(), String> {
    let a = object(annotation)?;
    req_str(a, "path")?;
    one_of(a, "annotation_level", &["notice", "warning", "failure"])?
        .ok_or("`annotation_level` is missing")?;
    if req_str(a, "message")?.len() > 64 * 1024 {
        return Err("`message` is longer than 64 KiB".into());
    }
    opt_str(a, "title")?;
    opt_str(a, "raw_details")?;
    let start = opt_pos(a, "start_line")?.ok_or("`start_line` is missing")?;
    let end = opt_pos(a, "end_line")?.ok_or("`end_line` is missing")?;
    let columns = [opt_pos(a, "start_column")?, opt_pos(a, "end_column")?];
    if end < start || (start != end && columns.iter().any(Option::is_some)) {
        return Err(format!(
            "lines {start}..{end} (columns need start_line == end_line)"
        ));
    }
    Ok(())
}

fn apply_run(run: &mut Map<String, Value>, o: &Map<String, Value>, annotations: Vec<Value>) {
    let keys = [
        "name",
        "head_sha",
        "status",
        "conclusion",
        "external_id",
        "details_url",
    ];
    for key in keys.into_iter().chain(["started_at", "completed_at"]) {
        if let Some(v) = o.get(key).filter(|v| !v.is_null()) {
            run.insert(key.to_string(), v.clone());
        }
    }
    if o.get("conclusion").is_some_and(|c| !c.is_null()) {
        run.insert("status".into(), json!("completed"));
    }
    let completed = run.get("status").is_some_and(|s| s == "completed");
    if completed && run.get("completed_at").is_none_or(Value::is_null) {
        run.insert("completed_at".into(), json!(rfc3339(now())));
    }
    if let Some(Value::Object(output)) = o.get("output") {
        let stored = run.entry("output").or_insert_with(|| json!({}));
        for key in ["title", "summary", "text"] {
            if let (Some(v), Some(stored)) = (output.get(key), stored.as_object_mut()) {
                stored.insert(key.to_string(), v.clone());
            }
        }
    }
    if let Some(Value::Array(all)) = run.get_mut("annotations") {
        all.extend(annotations);
    }
}

fn check_run_json(url: &str, run: &Value) -> Value {
    let (id, repo) = (&run["id"], run["repo"].as_str().unwrap_or(""));
    let count = run["annotations"].as_array().map_or(0, Vec::len);
    json!({"id": id, "head_sha": run["head_sha"], "name": run["name"], "status": run["status"],
           "conclusion": run["conclusion"], "external_id": run["external_id"],
           "details_url": run["details_url"], "started_at": run["started_at"],
           "completed_at": run["completed_at"],
           "output": {"title": run["output"]["title"], "summary": run["output"]["summary"],
                      "text": run["output"]["text"], "annotations_count": count},
           "url": format!("{url}/repos/{repo}/check-runs/{id}"),
           "html_url": format!("https://github.com/{repo}/runs/{id}")})
}

/// `GET /repos/{owner}/{repo}/commits/{ref}/check-runs`: `check_name`, `filter`
/// (`latest` by default: the newest run of each name; `all`), `per_page` (at most 100),
/// `page`.
fn list_check_runs(cx: &mut Cx, segments: &[&str]) -> Reply {
    let repo = format!("{}/{}", segments[1], segments[2]);
    let sha = segments[4].to_string();
    let params: HashMap<String, String> = reqwest::Url::parse(&format!("http://q/?{}", cx.query))
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default();
    for (k, v) in &params {
        let fine = match k.as_str() {
            "check_name" | "app_id" | "status" => true,
            "filter" => v == "latest" || v == "all",
            "per_page" => v.parse::<usize>().is_ok_and(|n| (1..=100).contains(&n)),
            "page" => v.parse::<usize>().is_ok_and(|n| n > 0),
            _ => false,
        };
        if !fine {
            return cx.invalid(format!("query parameter {k}={v:?}"));
        }
    }
    let per_page: usize = params
        .get("per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let page: usize = params.get("page").and_then(|v| v.parse().ok()).unwrap_or(1);
    let mut runs: Vec<&Value> = cx
        .st
        .check_runs
        .iter()
        .filter(|r| r["repo"] == *repo && r["head_sha"] == *sha)
        .filter(|r| params.get("check_name").is_none_or(|n| r["name"] == **n))
        .collect();
    if params.get("filter").is_none_or(|f| f == "latest") {
        let mut seen = HashSet::new();
        runs.reverse();
        runs.retain(|r| seen.insert(r["name"].to_string()));
        runs.reverse();
    }
    let total = runs.len();
    let items: Vec<Value> = runs
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|r| check_run_json(&cx.st.url, r))
        .collect();
    Reply::new(200, json!({"total_count": total, "check_runs": items}))
}

fn create_check_run(cx: &mut Cx, segments: &[&str]) -> Reply {
    let body = cx.body;
    let fields = object(body).and_then(|o| Ok((o, run_fields(o, true)?)));
    let (o, annotations) = match fields {
        Ok(fields) => fields,
        Err(why) => return cx.invalid(why),
    };
    cx.st.next_id += 1;
    let mut run = Map::new();
    run.insert("id".into(), json!(cx.st.next_id));
    run.insert(
        "repo".into(),
        json!(format!("{}/{}", segments[1], segments[2])),
    );
    run.insert("status".into(), json!("queued"));
    run.insert("started_at".into(), json!(rfc3339(now())));
    run.insert("annotations".into(), json!([]));
    run.insert(
        "output".into(),
        json!({"title": null, "summary": null, "text": null}),
    );
    for key in ["conclusion", "completed_at", "external_id", "details_url"] {
        run.insert(key.into(), Value::Null);
    }
    apply_run(&mut run, o, annotations);
    let run = Value::Object(run);
    let answer = check_run_json(&cx.st.url, &run);
    cx.st.check_runs.push(run);
    Reply::new(201, answer)
}

fn update_check_run(cx: &mut Cx, segments: &[&str]) -> Reply {
    let repo = format!("{}/{}", segments[1], segments[2]);
    let id = segments[4].parse::<u64>().ok();
    let found = cx
        .st
        .check_runs
        .iter()
        .position(|r| r["repo"] == *repo && r["id"].as_u64() == id);
    let Some(index) = found else {
        return Reply::message(404, "Not Found");
    };
    let body = cx.body;
    let (o, annotations) = match object(body).and_then(|o| Ok((o, run_fields(o, false)?))) {
        Ok(fields) => fields,
        Err(why) => return cx.invalid(why),
    };
    if let Some(run) = cx.st.check_runs[index].as_object_mut() {
        apply_run(run, o, annotations);
    }
    let answer = check_run_json(&cx.st.url, &cx.st.check_runs[index]);
    Reply::new(200, answer)
}

fn decode_sarif(text: &str) -> Result<Value, String> {
    let gz = STANDARD
        .decode(text)
        .map_err(|e| format!("`sarif` is not base64: {e}"))?;
    let mut raw = Vec::new();
    let mut gunzip = flate2::read::GzDecoder::new(gz.as_slice()).take(512 << 20);
    gunzip
        .read_to_end(&mut raw)
        .map_err(|e| format!("`sarif` is not gzip: {e}"))?;
    let sarif: Value = serde_json::from_slice(&raw).map_err(|e| format!("not JSON: {e}"))?;
    if sarif["version"] != "2.1.0" || !sarif["runs"].is_array() {
        return Err("the SARIF is not version 2.1.0 with a `runs` array".into());
    }
    Ok(sarif)
}

fn upload_sarif(cx: &mut Cx, segments: &[&str]) -> Reply {
    let repo = format!("{}/{}", segments[1], segments[2]);
    let body = cx.body;
    let checked = object(body).and_then(|o| {
        let commit = req_str(o, "commit_sha")?;
        let git_ref = req_str(o, "ref")?;
        if !is_sha(commit) || !git_ref.starts_with("refs/") {
            return Err(format!(
                "commit_sha {commit:?} / ref {git_ref:?}: 40 hex / refs/…"
            ));
        }
        opt_str(o, "tool_name")?;
        opt_str(o, "checkout_uri")?;
        Ok((commit, git_ref, req_str(o, "sarif")?))
    });
    let (commit, git_ref, sarif) = match checked {
        Ok(checked) => checked,
        Err(why) => return cx.invalid(why),
    };
    let sarif = match decode_sarif(sarif) {
        Ok(sarif) => sarif,
        Err(why) => {
            cx.violation(&why);
            return Reply::message(400, &why);
        }
    };
    let id = uuid::Uuid::new_v4().to_string();
    cx.st.sarifs.push(
        json!({"id": id, "repo": repo, "commit_sha": commit, "ref": git_ref,
                             "tool_name": body["tool_name"], "sarif": sarif}),
    );
    let url = format!("{}/repos/{repo}/code-scanning/sarifs/{id}", cx.st.url);
    Reply::new(202, json!({"id": id, "url": url}))
}

fn sarif_status(cx: &mut Cx, segments: &[&str]) -> Reply {
    let repo = format!("{}/{}", segments[1], segments[2]);
    let known = cx
        .st
        .sarifs
        .iter()
        .any(|s| s["repo"] == *repo && s["id"] == segments[5]);
    if !known {
        return Reply::message(404, "Not Found");
    }
    Reply::new(
        200,
        json!({"processing_status": "complete", "errors": null,
        "analyses_url": format!("{}/repos/{repo}/code-scanning/analyses", cx.st.url)}),
    )
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::time::Duration;

    use reqwest::{Method, RequestBuilder, StatusCode};

    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
    const APP: u64 = 4242;

    struct Fixture {
        _dir: tempfile::TempDir,
        gh: GitHubStandIn,
        pkcs8: Vec<u8>,
        http: reqwest::Client,
    }

    async fn fixture() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let (pem, public) = app_key(dir.path());
        let pkcs8 = Command::new("openssl")
            .args(["pkcs8", "-topk8", "-nocrypt", "-outform", "DER", "-in"])
            .arg(&pem)
            .output()
            .expect("run openssl pkcs8");
        assert!(pkcs8.status.success(), "openssl pkcs8 failed");
        let gh = GitHubStandIn::start(StandInConfig {
            app_id: APP,
            app_public_key: public,
            installations: HashMap::from([(7, "ghs_seven".to_string())]),
            workflow_token: Some("ghs_workflow".into()),
            read_only_token: Some("ghs_fork".into()),
            token_ttl_secs: 3600,
        })
        .await;
        proven_models::install_crypto();
        let http = reqwest::Client::new();
        Fixture {
            _dir: dir,
            gh,
            pkcs8: pkcs8.stdout,
            http,
        }
    }

    /// An RS256 JWT as a GitHub App signs it, issued at `iat`.
    fn jwt(pkcs8: &[u8], iss: Value, iat: i64) -> String {
        let key = ring::signature::RsaKeyPair::from_pkcs8(pkcs8).expect("PKCS#8 key");
        let head = URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256","typ":"JWT"}"#);
        let claims = json!({"iat": iat, "exp": iat + 600, "iss": iss}).to_string();
        let signed = format!("{head}.{}", URL_SAFE_NO_PAD.encode(claims));
        let mut sig = vec![0; key.public().modulus_len()];
        let rng = ring::rand::SystemRandom::new();
        let pad = &ring::signature::RSA_PKCS1_SHA256;
        key.sign(pad, &rng, signed.as_bytes(), &mut sig)
            .expect("sign the JWT");
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(sig))
    }

    impl Fixture {
        fn call(&self, method: Method, path: &str, auth: &str) -> RequestBuilder {
            let url = format!("{}{path}", self.gh.url);
            self.http
                .request(method, url)
                .header("user-agent", "proven-test")
                .header("accept", "application/vnd.github+json")
                .header("x-github-api-version", "2022-11-28")
                .header("authorization", auth)
        }

        async fn send(&self, request: RequestBuilder) -> (StatusCode, Value) {
            let response = request.send().await.expect("reach the stand-in");
            let status = response.status();
            (status, response.json().await.expect("a JSON answer"))
        }

        async fn token(&self) -> String {
            let auth = format!("Bearer {}", jwt(&self.pkcs8, json!(APP), now() - 60));
            let path = "/app/installations/7/access_tokens";
            let (status, body) = self.send(self.call(Method::POST, path, &auth)).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            let expires = body["expires_at"].as_str().expect("expires_at");
            assert!(expires.len() == 20 && expires.ends_with('Z'), "{expires}");
            format!("token {}", body["token"].as_str().expect("a token"))
        }

        async fn review(&self, auth: &str, line: u64, start: Option<u64>) -> (StatusCode, Value) {
            let comment = json!({"path": "src/a.rs", "body": "fix", "line": line,
                                 "side": "RIGHT", "start_line": start});
            let review = json!({"commit_id": SHA, "body": "Proven", "event": "COMMENT",
                                "comments": [comment]});
            let path = "/repos/o/r/pulls/5/reviews";
            self.send(self.call(Method::POST, path, auth).json(&review))
                .await
        }
    }

    #[tokio::test]
    async fn a_signed_jwt_gets_a_token_that_opens_the_api() {
        let f = fixture().await;
        let token = f.token().await;
        assert_eq!(token, "token ghs_seven");
        assert_eq!(f.gh.tokens_issued(), 1);
        for auth in [token.as_str(), "Bearer ghs_workflow"] {
            let request = f.call(Method::GET, "/installation/repositories", auth);
            assert_eq!(f.send(request).await.0, StatusCode::OK);
        }
        assert_eq!(f.gh.violations(), Vec::<String>::new());
        let first = &f.gh.requests()[0];
        assert_eq!((first.method.as_str(), first.status), ("POST", 201));
        assert_eq!(first.path, "/app/installations/7/access_tokens");
        assert_eq!((first.query.as_str(), &first.body), ("", &Value::Null));
        assert_eq!(first.headers["x-github-api-version"], API_VERSION);
        // No accept header: answered, and recorded as a violation.
        let bare = f
            .http
            .get(format!("{}/installation/repositories", f.gh.url));
        let bare = bare
            .header("user-agent", "t")
            .header("x-github-api-version", API_VERSION);
        assert_eq!(
            f.send(bare.header("authorization", &token)).await.0,
            StatusCode::OK
        );
        assert_eq!(f.gh.violations().len(), 1, "{:?}", f.gh.violations());
    }

    #[tokio::test]
    async fn bad_jwts_are_refused_and_uninstalling_revokes() {
        let f = fixture().await;
        let path = "/app/installations/7/access_tokens";
        let stale = jwt(&f.pkcs8, json!(APP), now() - 1000);
        let other_app = jwt(&f.pkcs8, json!("4243"), now() - 60);
        for bad in ["not.a.jwt".to_string(), stale, other_app] {
            let request = f.call(Method::POST, path, &format!("Bearer {bad}"));
            let (status, body) = f.send(request).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED);
            assert_eq!(body["message"], "A JSON web token could not be decoded");
        }
        assert_eq!(f.gh.violations().len(), 3);
        let as_string = format!("Bearer {}", jwt(&f.pkcs8, json!("4242"), now() - 60));
        assert_eq!(
            f.send(f.call(Method::POST, path, &as_string)).await.0,
            StatusCode::CREATED
        );
        let token = f.token().await;
        f.gh.uninstall(7);
        let (status, _) = f.send(f.call(Method::POST, path, &as_string)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let request = f.call(Method::GET, "/installation/repositories", &token);
        let (status, body) = f.send(request).await;
        assert_eq!(
            (status, &body["message"]),
            (StatusCode::UNAUTHORIZED, &json!("Bad credentials"))
        );
        assert_eq!(f.gh.violations().len(), 3, "{:?}", f.gh.violations());
    }

    #[tokio::test]
    async fn reviews_outside_the_diff_are_refused_and_the_rest_stored() {
        let f = fixture().await;
        let token = f.token().await;
        f.gh.set_diff("o/r", 5, &[("src/a.rs", 10), ("src/a.rs", 11)]);
        let (status, body) = f.review(&token, 12, None).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["errors"], json!(["Line could not be resolved"]));
        assert_eq!(
            f.review(&token, 11, Some(9)).await.0,
            StatusCode::UNPROCESSABLE_ENTITY
        );
        assert!(f.gh.reviews("o/r", 5).is_empty());
        let (status, first) = f.review(&token, 11, Some(10)).await;
        assert_eq!(
            (status, &first["state"]),
            (StatusCode::OK, &json!("COMMENTED"))
        );
        assert_eq!(f.review(&token, 10, None).await.0, StatusCode::OK);
        let path = format!("/repos/o/r/pulls/5/reviews/{}", first["id"]);
        let edit = f
            .call(Method::PUT, &path, &token)
            .json(&json!({"body": "edited"}));
        assert_eq!(f.send(edit).await.1["body"], "edited");
        let list = f.call(Method::GET, "/repos/o/r/pulls/5/reviews?per_page=1", &token);
        let response = list.send().await.expect("list reviews");
        let link = response.headers()["link"]
            .to_str()
            .expect("a link header")
            .to_string();
        assert!(
            link.ends_with("?page=2&per_page=1>; rel=\"next\""),
            "{link}"
        );
        let reviews = f.gh.reviews("o/r", 5);
        assert_eq!(reviews.len(), 2);
        assert_eq!(reviews[0]["body"], "edited");
        assert_eq!(reviews[0]["comments"][0]["start_line"], 10);
        assert_eq!(f.gh.violations(), Vec::<String>::new());
        assert_eq!(
            f.gh.requests().iter().filter(|r| r.status == 422).count(),
            2
        );
    }

    #[tokio::test]
    async fn check_run_annotations_accumulate_fifty_at_a_time() {
        let f = fixture().await;
        let token = f.token().await;
        let create = json!({"name": "Proven", "head_sha": SHA, "status": "in_progress"});
        let request = f
            .call(Method::POST, "/repos/o/r/check-runs", &token)
            .json(&create);
        let (status, run) = f.send(request).await;
        assert_eq!(status, StatusCode::CREATED, "{run}");
        let note = json!({"path": "a.rs", "start_line": 3, "end_line": 3, "start_column": 1,
                          "end_column": 4, "annotation_level": "warning", "message": "m"});
        let patch = |n: usize| {
            let output = json!({"title": "t", "summary": "s", "annotations": vec![&note; n]});
            let path = format!("/repos/o/r/check-runs/{}", run["id"]);
            let body = json!({"conclusion": "neutral", "output": output});
            f.call(Method::PATCH, &path, &token).json(&body)
        };
        assert_eq!(f.send(patch(51)).await.0, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(f.gh.violations().len(), 1);
        for _ in 0..2 {
            let (status, body) = f.send(patch(50)).await;
            assert_eq!(
                (status, &body["status"]),
                (StatusCode::OK, &json!("completed"))
            );
        }
        let runs = f.gh.check_runs();
        assert_eq!(runs[0]["annotations"].as_array().map(Vec::len), Some(100));
        assert_eq!(runs[0]["conclusion"], "neutral");
    }

    #[tokio::test]
    async fn rate_limits_and_failures_pass_after_their_count() {
        let f = fixture().await;
        let token = f.token().await;
        let path = "/installation/repositories";
        f.gh.rate_limit_next(1, 7);
        let response = f
            .call(Method::GET, path, &token)
            .send()
            .await
            .expect("rate limited");
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
        assert_eq!(response.headers()["retry-after"], "7");
        assert_eq!(response.headers()["content-type"], "application/json");
        let body: Value = response.json().await.expect("JSON");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("You have exceeded a secondary rate limit"));
        assert_eq!(
            f.send(f.call(Method::GET, path, &token)).await.0,
            StatusCode::OK
        );
        f.gh.fail_next(1, 502);
        assert_eq!(
            f.send(f.call(Method::GET, path, &token)).await.0,
            StatusCode::BAD_GATEWAY
        );
        assert_eq!(
            f.send(f.call(Method::GET, path, &token)).await.0,
            StatusCode::OK
        );
    }

    #[tokio::test]
    async fn check_runs_are_listed_by_commit_and_name_and_a_fork_token_only_reads() {
        let f = fixture().await;
        let token = f.token().await;
        let create = |name: &str| json!({"name": name, "head_sha": SHA, "status": "in_progress", "external_id": name});
        for name in ["Proven", "Proven", "other"] {
            let request = f
                .call(Method::POST, "/repos/o/r/check-runs", &token)
                .json(&create(name));
            assert_eq!(f.send(request).await.0, StatusCode::CREATED);
        }
        let list = |q: &str, auth: &str| {
            let path = format!("/repos/o/r/commits/{SHA}/check-runs?{q}");
            f.call(Method::GET, &path, auth)
        };
        let (status, all) = f.send(list("check_name=Proven&filter=all", &token)).await;
        assert_eq!(
            (status, &all["total_count"]),
            (StatusCode::OK, &json!(2)),
            "{all}"
        );
        let (_, latest) = f.send(list("check_name=Proven", &token)).await;
        assert_eq!(latest["total_count"], 1, "latest: one per name");
        assert_eq!(latest["check_runs"][0]["external_id"], "Proven");
        let (_, other) = f.send(list("check_name=other&filter=all", &token)).await;
        assert_eq!(other["total_count"], 1);
        assert!(f.gh.violations().is_empty(), "{:?}", f.gh.violations());
        assert_eq!(
            f.send(list("per_page=500", &token)).await.0,
            StatusCode::UNPROCESSABLE_ENTITY
        );
        assert_eq!(f.gh.violations().len(), 1);
        // A fork's token reads, and is refused every write as GitHub refuses it.
        let fork = "Bearer ghs_fork";
        assert_eq!(f.send(list("filter=all", fork)).await.0, StatusCode::OK);
        let write = f
            .call(Method::POST, "/repos/o/r/check-runs", fork)
            .json(&create("Proven"));
        let (status, body) = f.send(write).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(body["message"], "Resource not accessible by integration");
    }

    #[tokio::test]
    async fn a_held_review_is_stored_before_its_answer_goes() {
        let f = Arc::new(fixture().await);
        let token = f.token().await;
        f.gh.set_diff("o/r", 5, &[("src/a.rs", 10)]);
        let hold = f.gh.hold_review_posts();
        let post = tokio::spawn({
            let f = f.clone();
            async move { f.review(&token, 10, None).await }
        });
        tokio::time::timeout(Duration::from_secs(10), hold.posted())
            .await
            .expect("posted");
        assert_eq!(f.gh.reviews("o/r", 5).len(), 1);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!post.is_finished(), "the response went out while held");
        hold.release();
        let (status, _) = post.await.expect("the post task");
        assert_eq!(status, StatusCode::OK);
    }

    #[tokio::test]
    async fn sarif_uploads_are_decoded() {
        let f = fixture().await;
        let token = f.token().await;
        let sarif = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "p"}}}]});
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(sarif.to_string().as_bytes()).expect("gzip");
        let encoded = STANDARD.encode(gz.finish().expect("gzip"));
        let path = "/repos/o/r/code-scanning/sarifs";
        for (sarif, status) in [
            (encoded, StatusCode::ACCEPTED),
            ("e30=".into(), StatusCode::BAD_REQUEST),
        ] {
            let body = json!({"commit_sha": SHA, "ref": "refs/pull/5/head", "sarif": sarif});
            let answer = f.send(f.call(Method::POST, path, &token).json(&body)).await;
            assert_eq!(answer.0, status, "{}", answer.1);
        }
        let uploads = f.gh.sarifs();
        assert_eq!(uploads.len(), 1);
        assert_eq!(
            (&uploads[0]["ref"], &uploads[0]["sarif"]),
            (&json!("refs/pull/5/head"), &sarif)
        );
        assert_eq!(f.gh.violations().len(), 1, "{:?}", f.gh.violations());
    }
}
