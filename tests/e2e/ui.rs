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

    /// Logs in with `token` on the service at `base` (the login form, typed and clicked).
    async fn login(&self, base: &str, token: &str) {
        self.go(&format!("{base}/ui/login")).await;
        let field = self.wait_for("#token").await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{}/value", field[0]),
            json!({"text": token}),
        )
        .await;
        let button = self.all("#login").await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{}/click", button[0]),
            json!({}),
        )
        .await;
    }

    /// The page's text as a reader sees it (what is rendered visible).
    async fn page_text(&self) -> String {
        let body = self.wait_for("body").await;
        self.text(&body[0]).await
    }

    /// A command of the Chrome DevTools protocol, through ChromeDriver.
    async fn cdp(&self, cmd: &str, params: serde_json::Value) -> serde_json::Value {
        self.call(
            reqwest::Method::POST,
            "/goog/cdp/execute",
            json!({"cmd": cmd, "params": params}),
        )
        .await
    }

    /// Saves the whole page (not only the window) as PNG under target/ui-screenshots, the
    /// test's artefacts; with `PROVEN_UI_SCREENSHOTS=DIR` set, also as DIR/NAME.png when
    /// `publish` (the pictures of docs/ui.md: `PROVEN_UI_SCREENSHOTS=docs/ui cargo nextest run
    /// -p proven-cli -E 'test(the_review_pages_in_chromium)'`).
    async fn screenshot_as(&self, name: &str, publish: bool) -> std::path::PathBuf {
        use base64::Engine as _;
        let metrics = self.cdp("Page.getLayoutMetrics", json!({})).await;
        let size = &metrics["cssContentSize"];
        let (width, height) = (
            size["width"].as_f64().unwrap_or(1280.0),
            size["height"].as_f64().unwrap_or(1000.0),
        );
        let png = self
            .cdp(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true,
                       "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}}),
            )
            .await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png["data"].as_str().unwrap_or_default())
            .expect("base64 PNG");
        assert!(bytes.starts_with(b"\x89PNG"), "{name}: not a PNG");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ui-screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, &bytes).expect("write screenshot");
        if publish && let Some(docs) = std::env::var_os("PROVEN_UI_SCREENSHOTS") {
            // Relative to the repository's root, as the command above is run there.
            let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(docs);
            std::fs::create_dir_all(&docs).expect("screenshot dir");
            std::fs::write(docs.join(format!("{name}.png")), &bytes).expect("write screenshot");
        }
        path
    }

    async fn screenshot(&self, name: &str) -> std::path::PathBuf {
        self.screenshot_as(name, false).await
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

/// A run of its own (`n` makes its id, commit, timing, output and hash unlike any other's).
fn run_n(n: u32, side: &str, command: &[&str], outcome: &str, exit: i64) -> serde_json::Value {
    json!({"run_id": format!("run-{n}-{side}"), "side": side,
        "commit": format!("{n:x}{}", if side == "base" { "4f1c2a9e7b3d5c8a1e2f" } else { "c0ffee1234567890abcd" }),
        "image": "proven-sandbox-python:local", "command": command, "exit_code": exit, "outcome": outcome,
        "duration_ms": 700 + n * 37, "output_tail": format!("=== run {n} on the {side}: 1 {outcome} in 0.{n}s ==="),
        "output_sha256": format!("{n:02x}{}", "5e".repeat(31)), "tests": {"passed": 1 - exit, "failed": exit, "skipped": 0, "errors": 0},
        "environment": [format!("requests: resolved to 2.32.{n} (not pinned in requirements.txt)")]})
}

/// A report (through `proven_report::Report`, so a valid one) with a finding of every proof
/// level and every part a report can hold: the review page must show all the HTML report
/// shows of it.
fn every_level_report(id: &str) -> serde_json::Value {
    let pytest = [
        "pytest",
        "-q",
        "tests/test_proven_parse.py::test_parse_keeps_every_field",
    ];
    let doc = json!({
        "schema_version": 1, "kind": "review", "review_id": id, "status": "complete",
        "target": "https://example.test/shop.git",
        "base": {"rev": "main", "commit": "4f1c2a9e7b3d5c8a1e2f", "diff": "merge-base", "tip": "9a8b7c6d5e4f3a2b1c0d"},
        "head": {"rev": "feature/csv", "commit": "c0ffee1234567890abcd"},
        "plan": {"change_kind": "code", "class": "security", "band": "deep",
                 "runs": ["planner", "prover", "skeptic", "investigator", "coverage auditor"],
                 "left_out": ["the second reviewer (none configured)"]},
        "proof_counts": {"reproduced": 2, "exploited": 1, "advisory": 1, "tool": 1},
        "findings": [
            {"id": "f1", "proof_level": "reproduced", "kind": "defect", "title": "parse() drops the last field",
             "location": {"path": "app/parse.py", "line": 12},
             "claim": "parse('a,b') returns ['a'] since the change: the slice [:-1] drops the last field",
             "skeptic": {"verdict": "conceded", "reason": "the test fails on the change only", "artifact": "run-1-change"},
             "patch": {"edits": [{"path": "app/parse.py", "old_text": "return fields[:-1]", "new_text": "return fields"}],
                       "explanation": "keep every field the line holds", "attempt": 1,
                       "failing_on_base_too": ["tests/test_legacy.py::test_old_dialect"],
                       "runs": [run_n(3, "change", &pytest, "passed", 0)]},
             "evidence": [
                {"kind": "test_run", "run": run_n(1, "base", &pytest, "passed", 0),
                 "test": {"path": "tests/test_proven_parse.py",
                          "code": "from app.parse import parse\n\ndef test_parse_keeps_every_field():\n    assert parse('a,b') == ['a', 'b']\n"}},
                {"kind": "test_run", "run": run_n(1, "change", &pytest, "test_failed", 1)}]},
            {"id": "f2", "proof_level": "reproduced", "kind": "defect", "title": "total() counts a refund twice",
             "location": {"path": "app/cart.py", "line": 40},
             "claim": "total([10, -3]) is 4 on the change instead of 7",
             "skeptic": {"verdict": "refuted without evidence", "refutation": "intended",
                         "reason": "the change's own tests expect this", "needs": "a test of the change that passes on it"},
             "fix_not_proved": {"attempts": 2, "reason": "tests/test_cart.py::test_discount fails with the fix",
                                "runs": [run_n(5, "change", &["pytest", "-q", "tests/test_cart.py"], "test_failed", 1)]},
             "evidence": [{"kind": "test_run", "run": run_n(4, "base", &["pytest", "-q", "tests/test_proven_cart.py"], "passed", 0)},
                          {"kind": "test_run", "run": run_n(4, "change", &["pytest", "-q", "tests/test_proven_cart.py"], "test_failed", 1)}]},
            {"id": "f3", "proof_level": "exploited", "kind": "vulnerability", "title": "lodash 4.17.20 is exploited in the wild",
             "package": {"ecosystem": "npm", "name": "lodash", "old_version": "4.17.19", "new_version": "4.17.20",
                         "dependency": "transitive", "dev": false},
             "location": {"path": "web/package-lock.json", "line": 812},
             "advisory": {"id": "GHSA-35jh-r3h4-6jhm", "aliases": ["CVE-2021-23337"], "summary": "Command injection in lodash's template",
                          "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:U/C:H/I:H/A:H", "base_score": 7.2}],
                          "published": "2021-02-15T11:51:53Z", "modified": "2024-02-19T09:12:00Z"},
             "exploited": {"cve": "CVE-2021-23337", "date_added": "2025-06-10", "known_ransomware_campaign_use": "Unknown"},
             "epss": {"cve": "CVE-2021-23337", "probability": 0.02914, "percentile": 0.85943, "score_date": "2026-12-01"},
             "fix": {"version": "4.17.21", "note": "the smallest version outside every affected range",
                     "proposed": {"version": "4.17.21", "edits": [], "command": "npm install lodash@4.17.21",
                                  "proved": false, "reason": "npm could not resolve 4.17.21 offline"}},
             "evidence": [{"kind": "advisory_row", "advisory_id": "GHSA-35jh-r3h4-6jhm", "affected_index": 0,
                           "matched": "range 0 (SEMVER)",
                           "row": {"package": {"ecosystem": "npm", "name": "lodash"},
                                   "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "4.17.21"}]}]}}]},
            {"id": "f4", "proof_level": "advisory", "kind": "vulnerability", "title": "requests 2.0.0 is vulnerable",
             "package": {"ecosystem": "PyPI", "name": "requests", "old_version": null, "new_version": "2.0.0",
                         "dependency": "direct", "dev": false},
             "location": {"path": "requirements.txt", "line": 3},
             "advisory": {"id": "GHSA-aaaa-bbbb-cccc", "aliases": ["CVE-2099-1234"], "summary": "Session leaks the proxy password",
                          "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N", "base_score": 7.5}]},
             "epss": {"cve": "CVE-2099-1234", "probability": 0.91234, "percentile": 0.99876},
             "fix": {"version": "2.31.0", "note": "the smallest version outside every affected range",
                     "proposed": {"version": "2.31.0", "edits": [{"path": "requirements.txt", "old_text": "requests==2.0.0",
                                  "new_text": "requests==2.31.0"}], "proved": true, "reason": "no advisory matches requests 2.31.0"}},
             "evidence": [{"kind": "advisory_row", "advisory_id": "GHSA-aaaa-bbbb-cccc", "affected_index": 1,
                           "matched": "range 0 (ECOSYSTEM)",
                           "row": {"package": {"ecosystem": "PyPI", "name": "requests"},
                                   "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.31.0"}]}]}}]},
            {"id": "f5", "proof_level": "tool", "kind": "unmaintained", "title": "ansi_term 0.12.1 is unmaintained",
             "package": {"ecosystem": "crates.io", "name": "ansi_term", "old_version": null, "new_version": "0.12.1",
                         "dependency": "direct", "dev": true},
             "location": {"path": "tools/Cargo.lock"},
             "advisory": {"id": "RUSTSEC-2021-0139", "aliases": [], "summary": "ansi_term is Unmaintained", "severity": []},
             "fix": {"version": null, "note": "no fixed version: move to another crate (nu-ansi-term)"},
             "evidence": [{"kind": "advisory_row", "advisory_id": "RUSTSEC-2021-0139", "affected_index": 0,
                           "matched": "every version", "row": {"package": {"ecosystem": "crates.io", "name": "ansi_term"}}}]}],
        "unproven": [{"claim": "format_price() rounds half down on the change", "reason": "the test passed on the change",
                      "runs": [run_n(6, "change", &["pytest", "-q", "tests/test_proven_price.py"], "passed", 0)]}],
        "ignored": [{"finding": {"id": "f9", "proof_level": "advisory", "kind": "vulnerability", "title": "urllib3 1.26.4 is vulnerable",
                                 "location": {"path": "requirements-dev.txt", "line": 9}, "evidence": []},
                     "entry": "GHSA-q2q7-5pp4-w6pg", "reason": "only the test server uses it", "expires": "2027-03-01"}],
        "ignore_notes": [{"entry": "RUSTSEC-2020-0071", "status": "expired", "detail": "expired on 2026-10-01: it ignores nothing now"}],
        "suppressed": [{"claim": "checkout() double-charges a retried payment", "path": "app/pay.py", "record": "mem-7f3a9c",
                        "refuted_by": "0193a1b2-review", "on": "2026-11-28", "evidence": "the retry test passes on the change"}],
        "reviewers": [{"title": "parse() drops the last field", "path": "app/parse.py", "outcome": "reproduced",
                       "first": {"verdict": "raised"}, "second": {"verdict": "refuted", "reason": "lines 10-14 keep every field"}}],
        "coverage": {"verdict": "covered", "surfaces": [{"surface": "app/pay.py: the retry path", "status": "probed",
                     "detail": "the Prover's test of checkout()", "probe": "retry a declined payment once"}]},
        "autofix": {"verdict": "rejected", "edits": [{"path": "app/parse.py", "old_text": "return fields[:-1]", "new_text": "return fields"}],
                    "fixes": ["parse() drops the last field"], "open": ["total() counts a refund twice: run-5-change still fails"],
                    "runs": [run_n(7, "change", &["pytest", "-q"], "test_failed", 1)]},
        "failed_services": [], "input_errors": [],
        "not_seen": [{"what": "vendor/legacy.tar.gz", "reason": "an archive: its files are not read"}],
        "left_out": [{"path": "assets/logo.png", "reason": "binary"}],
        "dependency_files": []
    });
    let report: proven_report::Report = serde_json::from_value(doc).expect("a report");
    serde_json::to_value(&report).expect("json")
}

/// A failed review's report: what failed, an input it could not read, what it could not see.
fn failed_report(id: &str) -> serde_json::Value {
    let doc = json!({"schema_version": 1, "kind": "review", "review_id": id, "status": "failed",
        "target": "https://example.test/shop.git",
        "base": {"rev": "main", "commit": "4f1c2a9e7b3d5c8a1e2f", "diff": "two-dot"},
        "head": {"rev": "feature/tax", "commit": "b16b00b5deadbeef0001"},
        "proof_counts": {"reproduced": 0, "exploited": 0, "advisory": 0, "tool": 0}, "findings": [],
        "unproven": [], "not_seen": [{"what": "the sandbox runs", "reason": "no sandbox worker took the steps"}], "left_out": [],
        "failed_services": [{"service": "judge", "message": "dead-lettered: the judge crashed its worker every time"}],
        "input_errors": [{"path": "poetry.lock", "line": 7, "side": "head", "message": "expected a table, found a string"}],
        "dependency_files": []});
    let report: proven_report::Report = serde_json::from_value(doc).expect("a report");
    serde_json::to_value(&report).expect("json")
}

/// Text as a reader sees it: tags dropped, entities decoded, whitespace runs one space.
fn html_text(html: &str) -> String {
    let body = html.split_once("<body>").map_or(html, |(_, b)| b);
    let mut text = String::new();
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&#x2f;", "/")
        .replace("&#x2F;", "/")
        .replace("&amp;", "&");
    collapse(&text)
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every value of `report` that the HTML report (`proven_report::render_html`) shows, as it
/// shows it. Derived from the HTML report's own rendering: each string and number of the
/// document is changed in turn, and one whose change changes the rendered text is shown;
/// it is asked of the page as the HTML report's text holds it (whole, or the longest prefix
/// of it the text holds, for a commit or a hash it shortens). A value the report shows only
/// through a choice of words (a boolean, `merge-base`) or an enum the document cannot hold
/// another value of is left to the other assertions. So a field the HTML report starts to
/// show is asked of the page too.
fn shown_by_the_html_report(report: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    let render = |doc: &Value| -> Option<String> {
        let parsed: proven_report::Report = serde_json::from_value(doc.clone()).ok()?;
        Some(html_text(&proven_report::render_html(&parsed)))
    };
    let text = render(report).expect("a report");
    fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::String(_) | Value::Number(_) => out.push(at),
            Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    leaves(v, format!("{at}/{i}"), out);
                }
            }
            Value::Object(o) => {
                for (k, v) in o {
                    leaves(
                        v,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
            _ => {}
        }
    }
    let mut pointers = Vec::new();
    leaves(report, String::new(), &mut pointers);
    let mut shown = Vec::new();
    for pointer in pointers {
        let value = report.pointer(&pointer).cloned().unwrap_or_default();
        let (original, changed) = match &value {
            Value::String(s) => (collapse(s), Value::from(format!("Ω{s}"))),
            Value::Number(n) if n.is_f64() => (
                n.to_string(),
                Value::from(n.as_f64().unwrap_or_default() + 0.5),
            ),
            Value::Number(n) => (
                n.to_string(),
                Value::from(n.as_u64().unwrap_or_default() + 7),
            ),
            _ => continue,
        };
        let mut doc = report.clone();
        if let Some(slot) = doc.pointer_mut(&pointer) {
            *slot = changed;
        }
        match render(&doc) {
            Some(t) if t != text => {}
            _ => continue,
        }
        if text.contains(&original) {
            shown.push(original);
            continue;
        }
        let ends: Vec<usize> = original.char_indices().map(|(i, _)| i).skip(8).collect();
        if let Some(prefix) = ends
            .into_iter()
            .rev()
            .map(|end| original[..end].to_string())
            .find(|prefix| text.contains(prefix))
        {
            shown.push(prefix);
        }
    }
    shown.sort();
    shown.dedup();
    shown
}

/// Fails naming every value the HTML report shows of `report` that `page` (a page's text)
/// does not.
fn assert_shows_what_the_html_report_shows(page: &str, report: &serde_json::Value) {
    let page = collapse(page);
    let shown = shown_by_the_html_report(report);
    assert!(shown.len() >= 8, "the HTML report shows {shown:?}");
    let missing: Vec<&String> = shown
        .iter()
        .filter(|v| !page.contains(v.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "the page lacks what the HTML report shows: {missing:#?}\n{page}"
    );
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
        // The first two are the reports below: their repository and revisions.
        repository: match n {
            0 | 1 => "https://example.test/shop.git".into(),
            _ => format!("https://example.test/repo{n}.git"),
        },
        base_rev: "main".into(),
        head_rev: ["feature/csv", "feature/tax"]
            .get(n)
            .unwrap_or(&"b")
            .to_string(),
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
    // The first: a finding of every proof level and every part a report holds.
    let rich = every_level_report(&ids[0]);
    store
        .finish_review(
            &ids[0],
            proven_store::ReviewStatus::Complete,
            &rich.to_string(),
        )
        .await
        .expect("finish");
    // The second: failed, its causes in the report.
    let failed = failed_report(&ids[1]);
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
    assert_shows_what_the_html_report_shows(&html_text(&page), &rich);
    let page = get(format!("/ui/reviews/{}", ids[1])).await;
    assert!(!page.contains("No finding."), "{page}");
    assert!(
        page.contains("This review failed")
            && page.contains(
                "The judge service failed: dead-lettered: the judge crashed its worker every time"
            ),
        "the failure and its cause in words: {page}"
    );
    assert_shows_what_the_html_report_shows(&html_text(&page), &failed);
    service.stop().await;
}

/// Must-show 3 in headless Chromium: the reviews list over two weeks (charts with axes), a
/// review with a finding of every proof level, and a failed review. Each review page shows,
/// as a reader sees it, every value the HTML report shows of the same review (derived from
/// the HTML report's rendering: a field added to it and not to the page fails here); the
/// failed review says so with its causes. `PROVEN_UI_SCREENSHOTS=DIR` saves the three pages
/// as DIR/{reviews,review-every-level,review-failed}.png (docs/ui holds them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_pages_in_chromium_show_every_field_of_the_html_report() {
    let service = Service::start(0).await;
    let token = service.tenant("acme");
    let store = &service.store.store;
    let tenant = store
        .tenant_for_token(&token)
        .await
        .expect("store")
        .expect("tenant");
    let db = sqlx::PgPool::connect(&service.store.url)
        .await
        .expect("connect");
    let today = time::OffsetDateTime::now_utc().date();
    let submit = |repository: &str, base: &str, head: &str| proven_store::NewPipelineReview {
        id: uuid::Uuid::now_v7().to_string(),
        tenant_id: Some(tenant.id.clone()),
        repository: repository.into(),
        base_rev: base.into(),
        head_rev: head.into(),
        priority: 2,
        batch_id: None,
        pr_key: None,
        request: json!({"repository": repository, "base": base, "head": head}).to_string(),
        deadline_us: None,
        trace_id: None,
    };
    // Two weeks of reviews: a few a day, findings of each level, model cost.
    let repos = ["shop", "billing", "web", "infra"];
    let mut expected = 0;
    for n in 0..26_u32 {
        let r = submit(
            &format!("https://example.test/{}.git", repos[n as usize % 4]),
            "main",
            &format!("feature/{n}"),
        );
        store.submit_review(&r).await.expect("submit");
        let mut doc = failed_report(&r.id);
        doc["status"] = "complete".into();
        doc["failed_services"] = json!([]);
        doc["input_errors"] = json!([]);
        doc["proof_counts"] = json!({"reproduced": n % 3 / 2, "exploited": u32::from(n % 7 == 0),
                                     "advisory": n % 4, "tool": n % 5 / 3});
        store
            .finish_review(
                &r.id,
                proven_store::ReviewStatus::Complete,
                &doc.to_string(),
            )
            .await
            .expect("finish");
        store
            .append_trace(
                &r.id,
                "run-1",
                &[(
                    "model_call".into(),
                    json!({"cost_usd": 0.05 + f64::from(n % 6) * 0.07}),
                )],
            )
            .await
            .expect("trace");
        let day = today - time::Duration::days(i64::from(13 - n * 13 / 25));
        sqlx::query("UPDATE reviews SET created_at = $1 || substr(created_at, 11) WHERE id = $2")
            .bind(day.to_string())
            .bind(&r.id)
            .execute(&db)
            .await
            .expect("backdate");
        expected += 1;
    }
    db.close().await;
    // Today: one still queued, a failed one, and the review with every proof level.
    store
        .submit_review(&submit(
            "https://example.test/web.git",
            "main",
            "feature/late",
        ))
        .await
        .expect("submit");
    let failed_id = {
        let r = submit("https://example.test/shop.git", "main", "feature/tax");
        store.submit_review(&r).await.expect("submit");
        r.id
    };
    let failed = failed_report(&failed_id);
    store
        .finish_review(
            &failed_id,
            proven_store::ReviewStatus::Failed,
            &failed.to_string(),
        )
        .await
        .expect("finish");
    let rich_id = {
        let r = submit("https://example.test/shop.git", "main", "feature/csv");
        store.submit_review(&r).await.expect("submit");
        r.id
    };
    let rich = every_level_report(&rich_id);
    store
        .finish_review(
            &rich_id,
            proven_store::ReviewStatus::Complete,
            &rich.to_string(),
        )
        .await
        .expect("finish");
    expected += 3;

    let base = service.base_url.clone();
    // Installs the TLS provider the clients share.
    let _ = crate::service::http();
    let browser = Browser::start().await;
    browser.login(&base, &token).await;
    let rows = browser.wait_for("#reviews tr.review").await;
    assert_eq!(rows.len(), expected, "every review listed");
    let period = browser.all("#period-reviews").await;
    assert_eq!(browser.text(&period[0]).await, expected.to_string());
    for level in ["reproduced", "exploited", "advisory", "tool"] {
        assert!(
            !browser
                .all(&format!("svg.chart rect.{level}"))
                .await
                .is_empty(),
            "the findings chart draws {level}"
        );
    }
    assert!(
        !browser.all("svg.chart rect.cost").await.is_empty()
            && browser.all("svg.chart line.axis").await.len() >= 6
            && !browser.all("svg.chart text.x-label").await.is_empty(),
        "three charts with axes and labels"
    );
    browser.screenshot_as("reviews", true).await;

    browser.go(&format!("{base}/ui/reviews/{rich_id}")).await;
    let levels = browser.wait_for(".finding .level").await;
    let mut seen = Vec::new();
    for l in &levels {
        seen.push(browser.text(l).await);
    }
    for level in ["reproduced", "exploited", "advisory", "tool"] {
        assert!(seen.iter().any(|s| s == level), "{level} in {seen:?}");
    }
    assert!(
        browser.all("#outcome").await.is_empty() && browser.all("#no-finding").await.is_empty()
    );
    assert_shows_what_the_html_report_shows(&browser.page_text().await, &rich);
    browser.screenshot_as("review-every-level", true).await;

    browser.go(&format!("{base}/ui/reviews/{failed_id}")).await;
    let outcome = browser.wait_for("#outcome.failed").await;
    let said = browser.text(&outcome[0]).await;
    assert!(
        said.contains("This review failed")
            && said.contains(
                "The judge service failed: dead-lettered: the judge crashed its worker every time"
            )
            && said.contains("Could not read poetry.lock: expected a table, found a string"),
        "{said}"
    );
    assert!(browser.all("#no-finding").await.is_empty());
    assert_shows_what_the_html_report_shows(&browser.page_text().await, &failed);
    browser.screenshot_as("review-failed", true).await;
    drop(browser);
    service.stop().await;
}
