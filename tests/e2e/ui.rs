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
