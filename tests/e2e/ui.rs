//! `/ui` over HTTP: the login by token, the tenant's reviews with counts by proof level and
//! the charts, a review's findings with their evidence and trace, batches with progress;
//! every value escaped, no page of another tenant, no script allowed.

use std::time::Duration;

use proven_change::testing::TestRepo;
use serde_json::json;

use crate::common::text;
use crate::service::{Service, proven, wait_done};

const HOSTILE: &str = "<script>alert(1)</script>";

fn lock(name: &str) -> String {
    format!(
        "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"{name}\"]\n\n\
         [[package]]\nname = \"{name}\"\nversion = \"1.0.0\"\n\
         source = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
    )
}

/// `token=…` as a form body (every byte but letters and digits percent-encoded).
fn form_token(token: &str) -> String {
    let encoded: String = token
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("token={encoded}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_show_the_tenants_reviews_escaped_and_nothing_of_another_tenant() {
    let service = Service::start(1).await;
    // An advisory for a package whose name is markup.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("hostile.json");
    std::fs::write(
        &file,
        json!({"schema_version": "1.6.0", "id": "RUSTSEC-2099-0009", "modified": "2026-11-30T00:00:00Z",
               "published": "2026-11-30T00:00:00Z", "summary": HOSTILE,
               "affected": [{"package": {"ecosystem": "crates.io", "name": HOSTILE},
                             "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "2.0.0"}]}]}]})
        .to_string(),
    )
    .expect("write");
    let out = proven(&service.store.url, &service.prefix, service.data_dir.path())
        .args(["db", "import"])
        .arg(&file)
        .output()
        .expect("import");
    assert!(out.status.success(), "{:?}", text(&out));
    let repo = TestRepo::new();
    repo.write(
        "Cargo.lock",
        "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n",
    );
    let base = repo.commit("base");
    repo.write("Cargo.lock", lock(HOSTILE));
    repo.commit("change");
    let (alice, bob) = (service.tenant("alice"), service.tenant("bob"));
    let api = crate::service::http();
    let url = service.base_url.clone();
    let created: serde_json::Value = api
        .post(format!("{url}/v1/batches"))
        .bearer_auth(&alice)
        .json(&json!({"reviews": [{"repository": repo.path().display().to_string(), "base": base, "head": "HEAD"}]}))
        .send()
        .await
        .expect("post")
        .json()
        .await
        .expect("json");
    let id = created["reviews"][0].as_str().expect("review").to_string();
    let done = wait_done(&api, &url, &alice, &id, Duration::from_secs(60)).await;
    assert_eq!(
        done["result"]["findings"].as_array().map(Vec::len),
        Some(1),
        "{done:#}"
    );

    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    // No cookie: the login page.
    let r = client.get(format!("{url}/ui")).send().await.expect("get");
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/ui/login");
    let r = client
        .post(format!("{url}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form_token("pvn_wrong"))
        .send()
        .await
        .expect("login");
    assert_eq!(r.status(), 401);
    let login = |token: String| {
        let client = client.clone();
        let url = url.clone();
        async move {
            let r = client
                .post(format!("{url}/ui/login"))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form_token(&token))
                .send()
                .await
                .expect("login");
            assert_eq!(r.status(), 303);
            let cookie = r.headers()["set-cookie"]
                .to_str()
                .expect("cookie")
                .to_string();
            assert!(
                cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
                "{cookie}"
            );
            cookie.split(';').next().expect("pair").to_string()
        }
    };
    let cookie = login(alice.clone()).await;
    let get = |path: String, cookie: String| {
        let client = client.clone();
        let url = url.clone();
        async move {
            client
                .get(format!("{url}{path}"))
                .header("cookie", cookie)
                .send()
                .await
                .expect("get")
        }
    };
    let r = get("/ui".into(), cookie.clone()).await;
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-security-policy"]
            .to_str()
            .is_ok_and(|c| c.contains("default-src 'none'") && !c.contains("script-src")),
        "no script is allowed"
    );
    let list = r.text().await.expect("html");
    assert!(list.contains(&format!("/ui/reviews/{id}")), "{list}");
    assert!(list.contains("<svg class=\"chart\""), "the charts: {list}");
    assert!(list.contains("class=\"advisory\""), "{list}");
    let page = get(format!("/ui/reviews/{id}"), cookie.clone())
        .await
        .text()
        .await
        .expect("html");
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;")
            || page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
    assert!(!page.contains(HOSTILE), "markup is shown as text: {page}");
    assert!(page.contains("id=\"trace\""), "{page}");
    let batches = get("/ui/batches".into(), cookie.clone())
        .await
        .text()
        .await
        .expect("html");
    assert!(
        batches.contains(created["id"].as_str().expect("batch")),
        "{batches}"
    );
    assert!(
        batches.contains("<span class=\"ended\">1</span>/1"),
        "{batches}"
    );
    // Another tenant sees none of it.
    let theirs = login(bob).await;
    let r = get(format!("/ui/reviews/{id}"), theirs.clone()).await;
    assert_eq!(r.status(), 404);
    let list = get("/ui".into(), theirs).await.text().await.expect("html");
    assert!(!list.contains(&id), "{list}");
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ui_session_is_an_opaque_secure_cookie_that_logout_and_revocation_end() {
    let service = Service::start_api_with(&[]).await;
    let url = service.base_url.clone();
    let token = service.tenant("alice");
    proven_models::install_crypto();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let login = || async {
        let r = client
            .post(format!("{url}/ui/login"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_token(&token))
            .send()
            .await
            .expect("login");
        assert_eq!(r.status(), 303);
        r.headers()["set-cookie"]
            .to_str()
            .expect("cookie")
            .to_string()
    };
    let set = login().await;
    let attributes: Vec<&str> = set.split(';').map(str::trim).collect();
    for wanted in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/ui"] {
        assert!(attributes.contains(&wanted), "{wanted} in {set}");
    }
    let pair = attributes[0].to_string();
    let session = pair
        .strip_prefix("pvn_session=")
        .expect("the session cookie");
    assert!(
        session.len() >= 64 && !session.contains(&token) && !token.contains(session),
        "an opaque id, not the token: {set}"
    );
    let page = |cookie: String| {
        let client = client.clone();
        let url = url.clone();
        async move {
            client
                .get(format!("{url}/ui"))
                .header("cookie", cookie)
                .send()
                .await
                .expect("get")
                .status()
        }
    };
    assert_eq!(page(pair.clone()).await, 200, "the session opens the pages");
    // The token itself in the cookie is no session.
    assert_eq!(page(format!("pvn_session={token}")).await, 303);
    // Two sessions; logging out of one ends it (a copy of its cookie too), not the other.
    let other = login().await.split(';').next().expect("pair").to_string();
    let out = client
        .post(format!("{url}/ui/logout"))
        .header("cookie", pair.clone())
        .send()
        .await
        .expect("logout");
    assert_eq!(out.status(), 303);
    assert!(
        out.headers()["set-cookie"]
            .to_str()
            .is_ok_and(|c| c.contains("Max-Age=0")),
        "the cookie is cleared"
    );
    assert_eq!(page(pair).await, 303, "a logged-out session is dead");
    assert_eq!(page(other.clone()).await, 200);
    // Revoking the token ends its sessions.
    let revoked = proven(&service.store.url, &service.prefix, service.data_dir.path())
        .args(["tenant", "revoke", "alice"])
        .output()
        .expect("revoke");
    assert!(revoked.status.success(), "{:?}", text(&revoked));
    assert_eq!(page(other).await, 303);
    service.stop().await;
}

/// A WebDriver session of ChromeDriver driving headless Chromium (the W3C protocol over
/// HTTP: no client crate is needed for the few calls a test makes).
struct Browser {
    driver: std::process::Child,
    url: String,
    session: String,
    http: reqwest::Client,
}

impl Browser {
    async fn start() -> Browser {
        for (bin, package) in [
            ("/usr/bin/chromium", "chromium"),
            ("/usr/bin/chromedriver", "chromium-driver"),
        ] {
            assert!(
                std::path::Path::new(bin).exists(),
                "{bin} is missing: install the Debian package '{package}' (scripts/test does)"
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let driver = std::process::Command::new("/usr/bin/chromedriver")
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let started = std::time::Instant::now();
        let session = loop {
            let r = http
                .post(format!("{url}/session"))
                .json(&json!({"capabilities": {"alwaysMatch": {"browserName": "chrome",
                    "goog:chromeOptions": {"binary": "/usr/bin/chromium",
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                 "--window-size=1280,1000"]}}}}))
                .send()
                .await;
            if let Ok(r) = r
                && let Ok(v) = r.json::<serde_json::Value>().await
                && let Some(id) = v["value"]["sessionId"].as_str()
            {
                break id.to_string();
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "no WebDriver session"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        Browser {
            driver,
            url,
            session,
            http,
        }
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: serde_json::Value,
    ) -> serde_json::Value {
        let url = format!("{}/session/{}{path}", self.url, self.session);
        let r = self
            .http
            .request(method, url)
            .json(&body)
            .send()
            .await
            .expect("webdriver");
        let v: serde_json::Value = r.json().await.expect("webdriver json");
        assert!(v["value"]["error"].is_null(), "{path}: {v:#}");
        v["value"].clone()
    }

    async fn go(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", json!({"url": url}))
            .await;
    }

    /// The elements a CSS selector finds now.
    async fn all(&self, css: &str) -> Vec<String> {
        self.call(
            reqwest::Method::POST,
            "/elements",
            json!({"using": "css selector", "value": css}),
        )
        .await
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_object()?.values().next()?.as_str().map(str::to_string))
        .collect()
    }

    /// The elements `css` finds once there are any (a page after a click or a navigation may
    /// still be loading): at most 20 s.
    async fn wait_for(&self, css: &str) -> Vec<String> {
        let started = std::time::Instant::now();
        loop {
            let found = self.all(css).await;
            if !found.is_empty() || started.elapsed() > Duration::from_secs(20) {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn text(&self, element: &str) -> String {
        self.call(
            reqwest::Method::GET,
            &format!("/element/{element}/text"),
            json!({}),
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    /// Saves the page as PNG under target/ui-screenshots (the test's artefacts).
    async fn screenshot(&self, name: &str) -> std::path::PathBuf {
        use base64::Engine as _;
        let png = self
            .call(reqwest::Method::GET, "/screenshot", json!({}))
            .await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap_or_default())
            .expect("base64 PNG");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ui-screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, &bytes).expect("write screenshot");
        assert!(bytes.starts_with(b"\x89PNG"), "{name}: not a PNG");
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Must-show 3: the reviews list, a review with a reproduced finding, a batch's progress and
/// a chart render in headless Chromium; a finding title holding `<script>` is text (no script
/// element exists); each page is saved as a screenshot under target/ui-screenshots.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_render_in_headless_chromium_with_markup_shown_as_text() {
    use crate::agents::{CONCEDE, GENERATOR, GUARD, SKEPTIC, buggy_change};
    use proven_models::scripted::{Reply, ScriptedServer};
    let server = ScriptedServer::start().await;
    server.on(
        Some(GENERATOR),
        "You are the Planner",
        vec![Reply::Json(json!({"risks": [{"title": HOSTILE, "claim": "add(2, 3) returns -1 on the change instead of 5",
                                            "path": "calc.py", "symbol": "add", "evidence": "test"}]}))],
    );
    crate::agents::script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        CONCEDE(),
    );
    let url = server.base_url.clone();
    let env = [
        ("PROVEN_AGENTS", "on"),
        ("PROVEN_GENERATOR_BASE_URL", url.as_str()),
        ("PROVEN_SKEPTIC_BASE_URL", url.as_str()),
        ("PROVEN_GUARDRAIL_BASE_URL", url.as_str()),
        ("PROVEN_GENERATOR_MODEL", GENERATOR),
        ("PROVEN_SKEPTIC_MODEL", SKEPTIC),
        ("PROVEN_GUARDRAIL_MODEL", GUARD),
        ("PROVEN_FIX_ATTEMPTS", "0"),
    ];
    let mut service = Service::start_with(0, "redis://127.0.0.1:6379", &env).await;
    service.start_worker_serving(&["--steps", "evidence,control,model,sandbox"], &env);
    let token = service.tenant("browser");
    let api = crate::service::http();
    let base = service.base_url.clone();
    let (repo, rev) = buggy_change();
    let created: serde_json::Value = api
        .post(format!("{base}/v1/batches"))
        .bearer_auth(&token)
        .json(&json!({"reviews": [{"repository": repo.path().display().to_string(), "base": rev, "head": "HEAD"}]}))
        .send()
        .await
        .expect("post")
        .json()
        .await
        .expect("json");
    let id = created["reviews"][0].as_str().expect("review").to_string();
    let done = wait_done(&api, &base, &token, &id, Duration::from_secs(240)).await;
    assert_eq!(
        done["result"]["findings"][0]["proof_level"], "reproduced",
        "{done:#}"
    );

    let browser = Browser::start().await;
    browser.go(&format!("{base}/ui/login")).await;
    let field = browser.wait_for("#token").await;
    browser
        .call(
            reqwest::Method::POST,
            &format!("/element/{}/value", field[0]),
            json!({"text": token}),
        )
        .await;
    let button = browser.all("#login").await;
    browser
        .call(
            reqwest::Method::POST,
            &format!("/element/{}/click", button[0]),
            json!({}),
        )
        .await;
    // The reviews list, with its charts.
    let rows = browser.wait_for("#reviews tr.review").await;
    assert_eq!(rows.len(), 1, "one review listed");
    assert!(
        !browser.all("svg.chart rect.reproduced").await.is_empty(),
        "the chart drew its bars"
    );
    assert!(
        !browser.all("svg.chart line.axis").await.is_empty()
            && !browser.all("svg.chart text.x-label").await.is_empty()
            && !browser.all("svg.chart text.y-label").await.is_empty(),
        "the charts have axes and labels"
    );
    let period = browser.all("#period-reviews").await;
    assert_eq!(browser.text(&period[0]).await, "1", "the period's reviews");
    browser.screenshot("reviews").await;
    // The review: its finding's title is the markup, as text; no script exists on the page.
    browser.go(&format!("{base}/ui/reviews/{id}")).await;
    let titles = browser.wait_for(".finding .title").await;
    assert_eq!(titles.len(), 1);
    assert_eq!(browser.text(&titles[0]).await, HOSTILE, "shown as text");
    assert!(browser.all("script").await.is_empty(), "no script element");
    let levels = browser.all(".finding .level").await;
    assert_eq!(browser.text(&levels[0]).await, "reproduced");
    assert!(
        !browser.all(".finding table.runs tr").await.is_empty(),
        "its runs"
    );
    let images = browser.all(".finding table.runs .image").await;
    assert!(
        !images.is_empty() && !browser.text(&images[0]).await.is_empty(),
        "each run names its image"
    );
    assert!(
        browser.all("#no-finding").await.is_empty() && browser.all("#outcome").await.is_empty(),
        "a complete review with a finding"
    );
    browser.screenshot("review").await;
    // The batch's progress.
    browser.go(&format!("{base}/ui/batches")).await;
    let ended = browser.wait_for("#batches .ended").await;
    assert_eq!(browser.text(&ended[0]).await, "1");
    let shot = browser.screenshot("batches").await;
    assert!(
        std::fs::metadata(&shot).is_ok_and(|m| m.len() > 1000),
        "{shot:?}"
    );
    drop(browser);
    service.stop().await;
}

/// Logs in with `token` and answers the session cookie's `name=value`.
async fn ui_login(client: &reqwest::Client, url: &str, token: &str) -> String {
    let r = client
        .post(format!("{url}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form_token(token))
        .send()
        .await
        .expect("login");
    assert_eq!(r.status(), 303);
    let cookie = r.headers()["set-cookie"].to_str().expect("cookie");
    cookie.split(';').next().expect("pair").to_string()
}

/// A run as the report holds it.
fn run(side: &str, outcome: &str, exit: i64) -> serde_json::Value {
    json!({"run_id": format!("run-{side}"), "side": side, "commit": "0123456789abcdef0123",
        "image": "proven-sandbox-python:local", "command": ["pytest", "-q", "tests/test_proven_parse.py"],
        "exit_code": exit, "outcome": outcome, "duration_ms": 812, "output_tail": format!("1 {outcome} in 0.4s"),
        "output_sha256": "ab".repeat(32),
        "environment": ["requests: resolved to 2.32.3 (not pinned in requirements.txt)"]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_page_shows_the_reports_evidence_a_failure_its_cause_and_the_charts_every_review()
 {
    let service = Service::start(0).await;
    let token = service.tenant("carol");
    let store = &service.store.store;
    let tenant = store
        .tenant_for_token(&token)
        .await
        .expect("store")
        .expect("tenant");
    let submit = |n: usize| proven_store::NewPipelineReview {
        id: uuid::Uuid::now_v7().to_string(),
        tenant_id: Some(tenant.id.clone()),
        repository: format!("https://example.test/repo{n}.git"),
        base_rev: "a".into(),
        head_rev: "b".into(),
        priority: 2,
        batch_id: None,
        pr_key: None,
        request: json!({"repository": "https://example.test/repo.git", "base": "a", "head": "b"})
            .to_string(),
        deadline_us: None,
        trace_id: None,
    };
    let empty = |status: &str| {
        json!({"schema_version": 1, "kind": "review", "status": status, "target": "https://example.test/repo.git",
            "proof_counts": {"reproduced": 0, "exploited": 0, "advisory": 0, "tool": 0}, "findings": [],
            "unproven": [], "failed_services": [], "not_seen": [], "left_out": [], "input_errors": [],
            "dependency_files": []})
    };
    // 150 reviews: more than the list shows (100); the charts count every one.
    let mut ids = Vec::new();
    for n in 0..150 {
        let r = submit(n);
        store.submit_review(&r).await.expect("submit");
        ids.push(r.id);
    }
    // The first: a reproduced defect and an advisory finding, as the report holds them.
    let mut rich = empty("complete");
    rich["proof_counts"] = json!({"reproduced": 1, "exploited": 0, "advisory": 1, "tool": 0});
    rich["findings"] = json!([
        {"id": "f1", "proof_level": "reproduced", "kind": "defect", "title": "parse() drops the last field",
         "location": {"path": "app/parse.py", "line": 12}, "claim": "parse of two fields returns one since the change",
         "patch": {"edits": [{"path": "app/parse.py", "old_text": "[:-1]", "new_text": ""}],
                   "explanation": "keep every field", "attempt": 1, "runs": [run("change", "passed", 0)]},
         "evidence": [{"kind": "test_run", "run": run("base", "passed", 0)},
                      {"kind": "test_run", "run": run("change", "test_failed", 1)}]},
        {"id": "f2", "proof_level": "advisory", "kind": "vulnerability", "title": "requests 2.0.0 is vulnerable",
         "package": {"ecosystem": "PyPI", "name": "requests", "old_version": null, "new_version": "2.0.0",
                     "dependency": "direct", "dev": false},
         "location": {"path": "requirements.txt", "line": 3},
         "advisory": {"id": "GHSA-aaaa-bbbb-cccc", "aliases": ["CVE-2099-1234"], "summary": "Session leaks the proxy password",
                      "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N", "base_score": 7.5}]},
         "exploited": {"cve": "CVE-2099-1234", "date_added": "2099-01-02"},
         "epss": {"cve": "CVE-2099-1234", "probability": 0.91234, "percentile": 0.99876},
         "fix": {"version": "2.31.0", "note": "the smallest version outside every affected range",
                 "proposed": {"version": "2.31.0", "edits": [{"path": "requirements.txt", "old_text": "requests==2.0.0",
                              "new_text": "requests==2.31.0"}], "proved": true, "reason": "no advisory matches requests 2.31.0"}},
         "evidence": [{"kind": "advisory_row", "advisory_id": "GHSA-aaaa-bbbb-cccc", "affected_index": 0,
                       "matched": "range 0 (ECOSYSTEM)", "row": {"package": {"ecosystem": "PyPI", "name": "requests"}}}]}]);
    let report: proven_report::Report = serde_json::from_value(rich.clone()).expect("a report");
    store
        .finish_review(
            &ids[0],
            proven_store::ReviewStatus::Complete,
            &serde_json::to_string(&report).expect("json"),
        )
        .await
        .expect("finish");
    // The second: failed, its cause in the report's failed services.
    let mut failed = empty("failed");
    failed["failed_services"] = json!([{"service": "judge",
        "message": "dead-lettered: the judge crashed its worker every time"}]);
    store
        .finish_review(
            &ids[1],
            proven_store::ReviewStatus::Failed,
            &failed.to_string(),
        )
        .await
        .expect("finish");
    // The rest: one advisory finding each.
    let mut one = empty("complete");
    one["proof_counts"]["advisory"] = 1.into();
    for id in &ids[2..] {
        store
            .finish_review(id, proven_store::ReviewStatus::Complete, &one.to_string())
            .await
            .expect("finish");
    }

    // Installs the TLS provider the clients share.
    let _ = crate::service::http();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let url = service.base_url.clone();
    let cookie = ui_login(&client, &url, &token).await;
    let get = |path: String| {
        let (client, url, cookie) = (client.clone(), url.clone(), cookie.clone());
        async move {
            let r = client
                .get(format!("{url}{path}"))
                .header("cookie", cookie)
                .send()
                .await
                .expect("get");
            assert_eq!(r.status(), 200, "{path}");
            r.text().await.expect("html")
        }
    };
    let list = get("/ui".into()).await;
    assert!(
        list.contains("<span id=\"period-reviews\">150</span> reviews in the last 14 days"),
        "every review of the period is counted: {list}"
    );
    assert_eq!(
        list.matches("<tr class=\"review\">").count(),
        100,
        "the table lists the newest 100"
    );
    // The reviews chart's top is 150 and the findings chart's 149 (advisory) + 1.
    assert!(
        list.contains("<title>") && list.contains(": 150</title>"),
        "{list}"
    );
    assert!(list.contains("advisory: 149</title>"), "{list}");
    assert!(list.contains(">day (UTC)</text>") && list.contains("class=\"axis\""));

    let page = get(format!("/ui/reviews/{}", ids[0])).await;
    for shown in [
        "parse() drops the last field",
        "parse of two fields returns one since the change",
        "class=\"level reproduced\"",
        "keep every field",
        "pytest -q tests&#x2f;test_proven_parse.py",
        "proven-sandbox-python:local",
        "test_failed (exit 1, 812 ms)",
        "requests: resolved to 2.32.3 (not pinned in requirements.txt)",
        "Session leaks the proxy password",
        "CVSS_V3 <b>7.5</b>",
        "CVE-2099-1234: probability 0.91234, percentile 0.99876",
        "CVE-2099-1234 is in CISA KEV",
        "<code>2.31.0</code>",
        "requests==2.31.0",
        "<b class=\"proved\">proved</b>",
        "Matched row: GHSA-aaaa-bbbb-cccc affected[0], matched by range 0 (ECOSYSTEM)",
    ] {
        assert!(page.contains(shown), "the page lacks {shown:?}:\n{page}");
    }
    let page = get(format!("/ui/reviews/{}", ids[1])).await;
    assert!(!page.contains("No finding."), "{page}");
    assert!(
        page.contains("This review failed")
            && page.contains(
                "The judge service failed: dead-lettered: the judge crashed its worker every time"
            ),
        "the failure and its cause in words: {page}"
    );
    service.stop().await;
}
