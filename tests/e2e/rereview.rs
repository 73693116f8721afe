//! Re-review on advisory change over HTTP: reviews teach the World Model what each
//! repository depends on; a sync whose change set adds an advisory selects exactly the
//! repositories whose current version it affects, re-reviewed in a batch at batch priority
//! and compared with their earlier review; a sync that changes nothing re-reviews nothing.

use std::time::Duration;

use proven_change::testing::TestRepo;
use serde_json::json;

use crate::common::text;
use crate::service::{Service, http, proven, wait_done};

/// A Cargo.lock holding `name` at `version` (a registry package).
fn lock(name: &str, version: &str) -> String {
    format!(
        "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"{name}\"]\n\n\
         [[package]]\nname = \"{name}\"\nversion = \"{version}\"\n\
         source = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
    )
}

/// A repository whose reviewed change brings in `name` at `version`.
fn repository(name: &str, version: &str) -> (TestRepo, String) {
    let repo = TestRepo::new();
    repo.write(
        "Cargo.lock",
        "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n",
    );
    let base = repo.commit("base");
    repo.write("Cargo.lock", lock(name, version));
    repo.commit("change: a dependency");
    (repo, base)
}

/// Writes an OSV record of `id` for crates.io's `name` before `fixed`, as of `modified`,
/// into `dir` (what `proven db sync DIR` reads).
fn write_advisory(dir: &std::path::Path, (id, name, fixed): (&str, &str, &str), modified: &str) {
    std::fs::write(
        dir.join(format!("{id}.json")),
        json!({"schema_version": "1.6.0", "id": id, "modified": modified,
               "published": "2026-11-30T00:00:00Z", "summary": format!("{name} mishandles input"),
               "affected": [{"package": {"ecosystem": "crates.io", "name": name},
                             "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": fixed}]}]}]})
        .to_string(),
    )
    .expect("write");
}

/// GET `url` with `token`, as JSON.
async fn get_json(client: &reqwest::Client, url: String, token: &str) -> serde_json::Value {
    client
        .get(url)
        .bearer_auth(token)
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_set_re_reviews_exactly_the_repositories_it_newly_affects() {
    let service = Service::start(1).await;
    let alice = service.tenant("alice");
    let client = http();
    let base_url = service.base_url.clone();
    let repos = [
        repository("proven-rr-alpha", "1.0.0"),
        repository("proven-rr-beta", "1.0.0"),
        // The same package as the first, at a version the advisory does not affect.
        repository("proven-rr-alpha", "2.0.0"),
    ];
    for (repo, base) in &repos {
        let r = client
            .post(format!("{base_url}/v1/reviews"))
            .bearer_auth(&alice)
            .json(&json!({"repository": repo.path().display().to_string(), "base": base, "head": "HEAD"}))
            .send()
            .await
            .expect("post");
        assert_eq!(r.status(), 202);
        let id = r.json::<serde_json::Value>().await.expect("json")["id"]
            .as_str()
            .expect("id")
            .to_string();
        let done = wait_done(&client, &base_url, &alice, &id, Duration::from_secs(60)).await;
        assert_eq!(done["result"]["findings"], json!([]), "{done:#}");
    }
    // An advisory for proven-rr-alpha before 2.0.0, synced as a change set.
    let osv = tempfile::tempdir().expect("tempdir");
    write_advisory(
        osv.path(),
        ("RUSTSEC-2099-0001", "proven-rr-alpha", "2.0.0"),
        "2026-11-30T00:00:00Z",
    );
    let sync = || {
        let out = proven(&service.store.url, &service.prefix, service.data_dir.path())
            .args(["db", "sync", "--json"])
            .arg(osv.path())
            .output()
            .expect("db sync");
        assert!(out.status.success(), "{:?}", text(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("sync JSON")
    };
    let first = sync();
    assert_eq!(first["new"], json!(["RUSTSEC-2099-0001"]), "{first:#}");
    let batch = |set: String| {
        client
            .post(format!("{base_url}/v1/batches"))
            .bearer_auth(&alice)
            .json(&json!({"change_set": set}))
            .send()
    };
    let r = batch(first["id"].as_str().expect("id").to_string())
        .await
        .expect("post batch");
    assert_eq!(r.status(), 202);
    let accepted: serde_json::Value = r.json().await.expect("json");
    let reviews = accepted["reviews"].as_array().expect("reviews");
    assert_eq!(
        reviews.len(),
        1,
        "exactly the affected repository: {accepted:#}"
    );
    let review = reviews[0].as_str().expect("id");
    let done = wait_done(&client, &base_url, &alice, review, Duration::from_secs(60)).await;
    assert_eq!(
        done["repository"],
        repos[0].0.path().display().to_string(),
        "{done:#}"
    );
    assert_eq!(done["priority"], "batch", "{done:#}");
    let view = get_json(
        &client,
        format!(
            "{base_url}/v1/batches/{}",
            accepted["id"].as_str().expect("batch id")
        ),
        &alice,
    )
    .await;
    assert_eq!(view["done"], true, "{view:#}");
    let rr = &view["rereviews"][0];
    assert_eq!(
        rr["new"].as_array().map(Vec::len),
        Some(1),
        "one new finding: {view:#}"
    );
    assert!(
        rr["new"][0]
            .as_str()
            .is_some_and(|f| f.contains("RUSTSEC-2099-0001")),
        "{view:#}"
    );
    assert_eq!(
        (rr["still"].clone(), rr["gone"].clone()),
        (json!([]), json!([]))
    );
    // The selector by time: every change set since then (the service's first import is one
    // too) newly affects the same one repository.
    let since: serde_json::Value = client
        .post(format!("{base_url}/v1/batches"))
        .bearer_auth(&alice)
        .json(&json!({"advisories_changed_since": "2000-01-01T00:00:00Z"}))
        .send()
        .await
        .expect("post")
        .json()
        .await
        .expect("json");
    assert_eq!(
        since["reviews"].as_array().map(Vec::len),
        Some(1),
        "{since:#}"
    );
    let r = client
        .post(format!("{base_url}/v1/batches"))
        .bearer_auth(&alice)
        .json(&json!({"advisories_changed_since": "yesterday"}))
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 422, "not an instant");
    // The same sources again: an empty change set re-reviews nothing.
    let again = sync();
    assert_eq!(again["new"], json!([]), "{again:#}");
    let r = batch(again["id"].as_str().expect("id").to_string())
        .await
        .expect("post batch");
    assert_eq!(r.status(), 202);
    let nothing: serde_json::Value = r.json().await.expect("json");
    assert_eq!(nothing["reviews"], json!([]), "{nothing:#}");
    let view = get_json(
        &client,
        format!(
            "{base_url}/v1/batches/{}",
            nothing["id"].as_str().expect("id")
        ),
        &alice,
    )
    .await;
    assert_eq!(
        (view["total"].clone(), view["done"].clone()),
        (json!(0), json!(true))
    );

    // The operator's one command (a cron's): a newer record of the advisory is a modified
    // change set, and `db sync --rereview` submits its batch for each tenant at once.
    write_advisory(
        osv.path(),
        ("RUSTSEC-2099-0001", "proven-rr-alpha", "2.0.0"),
        "2026-12-01T00:00:00Z",
    );
    let cli = |args: &[&str]| {
        let out = proven(&service.store.url, &service.prefix, service.data_dir.path())
            .args(args)
            .output()
            .expect("proven");
        assert!(out.status.success(), "{args:?}: {:?}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dir = osv.path().display().to_string();
    let synced: serde_json::Value =
        serde_json::from_str(&cli(&["db", "sync", "--json", "--rereview", &dir])).expect("json");
    assert_eq!(
        synced["modified"],
        json!(["RUSTSEC-2099-0001"]),
        "{synced:#}"
    );
    let mine: Vec<&serde_json::Value> = synced["rereviews"]
        .as_array()
        .expect("rereviews")
        .iter()
        .filter(|b| b["tenant"] == "alice")
        .collect();
    assert_eq!(mine.len(), 1, "{synced:#}");
    let repositories = mine[0]["repositories"].as_array().expect("repositories");
    assert_eq!(repositories.len(), 1, "{synced:#}");
    assert_eq!(
        repositories[0]["repository"],
        repos[0].0.path().display().to_string()
    );
    let batch_id = mine[0]["batch"].as_str().expect("batch").to_string();
    let listed = cli(&["batch", "list", "--tenant", "alice"]);
    assert!(listed.contains(&batch_id), "{listed}");
    let shown: serde_json::Value =
        serde_json::from_str(&cli(&["batch", "show", &batch_id, "--tenant", "alice"]))
            .expect("json");
    assert_eq!(shown["total"], 1, "{shown:#}");
    service.stop().await;
}

/// A re-review batch never holds up a person: with the tenant's reviews admitted one at a
/// time, an interactive review submitted while the batch runs is done before the batch is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_review_submitted_during_a_re_review_batch_finishes_first() {
    let service = Service::start(1).await;
    let out = proven(&service.store.url, &service.prefix, service.data_dir.path())
        .args(["tenant", "create", "carol", "--max-running", "1"])
        .output()
        .expect("tenant create");
    assert!(out.status.success(), "{:?}", text(&out));
    let carol = text(&out).0.trim().to_string();
    let client = http();
    let base_url = service.base_url.clone();
    let submit = |repo: &TestRepo, base: &str| {
        client
            .post(format!("{base_url}/v1/reviews"))
            .bearer_auth(&carol)
            .json(&json!({"repository": repo.path().display().to_string(), "base": base, "head": "HEAD"}))
            .send()
    };
    let id_of = |v: serde_json::Value| v["id"].as_str().expect("id").to_string();
    let repos: Vec<(TestRepo, String)> = ["1.0.0", "1.1.0", "1.2.0"]
        .iter()
        .map(|v| repository("proven-rr-gamma", v))
        .collect();
    for (repo, base) in &repos {
        let id = id_of(
            submit(repo, base)
                .await
                .expect("post")
                .json()
                .await
                .expect("json"),
        );
        wait_done(&client, &base_url, &carol, &id, Duration::from_secs(60)).await;
    }
    let osv = tempfile::tempdir().expect("tempdir");
    write_advisory(
        osv.path(),
        ("RUSTSEC-2099-0002", "proven-rr-gamma", "9.0.0"),
        "2026-11-30T00:00:00Z",
    );
    let out = proven(&service.store.url, &service.prefix, service.data_dir.path())
        .args(["db", "sync", "--json"])
        .arg(osv.path())
        .output()
        .expect("db sync");
    assert!(out.status.success(), "{:?}", text(&out));
    let set: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let accepted: serde_json::Value = client
        .post(format!("{base_url}/v1/batches"))
        .bearer_auth(&carol)
        .json(&json!({"change_set": set["id"]}))
        .send()
        .await
        .expect("post batch")
        .json()
        .await
        .expect("json");
    let batch: Vec<String> = accepted["reviews"]
        .as_array()
        .expect("reviews")
        .iter()
        .filter_map(|r| r.as_str().map(str::to_string))
        .collect();
    assert_eq!(batch.len(), 3, "{accepted:#}");
    let (person, person_base) = repository("proven-rr-delta", "1.0.0");
    let interactive = id_of(
        submit(&person, &person_base)
            .await
            .expect("post")
            .json()
            .await
            .expect("json"),
    );
    // The order in which they end.
    let mut ended: Vec<String> = Vec::new();
    let all: Vec<String> = batch.iter().cloned().chain([interactive.clone()]).collect();
    let started = std::time::Instant::now();
    while ended.len() < all.len() {
        let waiting: Vec<String> = all
            .iter()
            .filter(|id| !ended.contains(id))
            .cloned()
            .collect();
        for id in &waiting {
            let v: serde_json::Value = client
                .get(format!("{base_url}/v1/reviews/{id}"))
                .bearer_auth(&carol)
                .send()
                .await
                .expect("get")
                .json()
                .await
                .unwrap_or_default();
            if matches!(
                v["status"].as_str(),
                Some("complete" | "incomplete" | "failed")
            ) {
                ended.push(id.clone());
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "ended so far: {ended:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let at = ended
        .iter()
        .position(|id| id == &interactive)
        .expect("ended");
    assert!(
        at < ended.len() - 1,
        "the interactive review ended before the batch did: {ended:?} (interactive {interactive})"
    );
    service.stop().await;
}
