//! What a review's `repository` may name and how it is reached, end to end: the policy's
//! refusals over HTTP (422 naming the field and the setting) and again at intake, an https
//! clone from a local TLS git server with the test's own CA and credentials that never
//! leak, tarpits and the step deadline, the byte cap, and a multi-gigabyte blob, with the
//! worker's peak memory measured.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::Engine;
use proven_change::testing::TestRepo;
use proven_source::testing::{GitHttpsServer, Tarpit, TarpitServer};
use proven_store::testing::Backend;

use crate::common::{Env, json, text};
use crate::service::{Service, repo_with_change, wait_done};

/// Settings that let the service reach a server on loopback named `localhost:PORT`.
fn loopback(port: u16) -> Vec<(String, String)> {
    vec![
        ("PROVEN_REPO_HOSTS".into(), format!("localhost:{port}")),
        (
            "PROVEN_REPO_PRIVATE_NETS".into(),
            "127.0.0.0/8,::1/128".into(),
        ),
    ]
}

pub(crate) fn pairs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

async fn post(service: &Service, token: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
    let r = crate::service::http()
        .post(format!("{}/v1/reviews", service.base_url))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("POST /v1/reviews");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or_default())
}

async fn submit(service: &Service, token: &str, repository: &str, base: &str) -> String {
    let (status, body) = post(
        service,
        token,
        serde_json::json!({"repository": repository, "base": base, "head": "HEAD"}),
    )
    .await;
    assert_eq!(status, 202, "{repository}: {body}");
    body["id"].as_str().expect("id").to_string()
}

/// The peak resident memory of a running process (`VmHWM`), in bytes.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    kb * 1024
}

fn intake_failure(view: &serde_json::Value) -> String {
    let failed = &view["result"]["failed_services"];
    assert_eq!(failed[0]["service"], "intake", "{view:#}");
    failed[0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_hostile_values_get_422_naming_the_field_and_the_setting() {
    // An allow-listed name that resolves to loopback, and no private network allowed.
    let service = Service::start_configured(
        0,
        "redis://127.0.0.1:6379",
        &[("PROVEN_REPO_HOSTS", "localhost:4443,github.com")],
        &[],
    )
    .await;
    let token = service.tenant("mallory");
    let other_tenants_mirror = service
        .data_dir
        .path()
        .join("repos/t-0123456789abcdef/0123456789abcdef01234567");
    std::fs::create_dir_all(&other_tenants_mirror).expect("a mirror");
    let secret = "hunter2-in-the-url";
    let cases = [
        (
            "git://127.0.0.1:6379/x\r\nFLUSHALL\r\nCONFIG SET requirepass x\r\n".to_string(),
            "PROVEN_REPO_HOSTS",
            "control character",
        ),
        (
            "git://127.0.0.1:6379/x".into(),
            "PROVEN_REPO_HOSTS",
            "git:// is refused",
        ),
        (
            "http://localhost:4443/x.git".into(),
            "PROVEN_REPO_HOSTS",
            "plain http://",
        ),
        (
            format!("https://x-access-token:{secret}@github.com/a/b.git"),
            "PROVEN_REPO_CREDENTIALS",
            "carries credentials",
        ),
        (
            "https://localhost:4443/x.git".into(),
            "PROVEN_REPO_PRIVATE_NETS",
            "loopback address",
        ),
        (
            "https://127.0.0.1:4443/x.git".into(),
            "PROVEN_REPO_HOSTS",
            "not on the allow-list",
        ),
        (
            "https://[::1]:6379/x.git".into(),
            "PROVEN_REPO_HOSTS",
            "not on the allow-list",
        ),
        (
            "ext::sh -c touch% /tmp/proven-pwned".into(),
            "PROVEN_REPO_HOSTS",
            "remote-helper",
        ),
        (
            other_tenants_mirror.display().to_string(),
            "PROVEN_DATA_DIR",
            "data directory",
        ),
        ("/etc".into(), "PROVEN_REPO_ROOTS", "PROVEN_REPO_ROOTS"),
        (
            "file:///etc/passwd".into(),
            "PROVEN_REPO_ROOTS",
            "PROVEN_REPO_ROOTS",
        ),
    ];
    for (repository, setting, says) in &cases {
        let (status, body) = post(
            &service,
            &token,
            serde_json::json!({"repository": repository, "base": "main", "head": "HEAD"}),
        )
        .await;
        assert_eq!(status, 422, "{repository:?}: {body}");
        let error = &body["error"];
        assert_eq!(error["code"], "repository_refused", "{repository:?}");
        assert_eq!(error["field"], "repository", "{repository:?}");
        assert_eq!(error["setting"], *setting, "{repository:?}: {body}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{repository:?}: {message}");
        assert!(
            !message.contains(secret),
            "the secret is repeated: {message}"
        );
    }
    // A batch is refused whole when one of its repositories is.
    let r = crate::service::http()
        .post(format!("{}/v1/batches", service.base_url))
        .bearer_auth(&token)
        .json(&serde_json::json!({"reviews": [
            {"repository": std::env::temp_dir().display().to_string(), "base": "a", "head": "b"},
            {"repository": "git://127.0.0.1:6379/x", "base": "a", "head": "b"},
        ]}))
        .send()
        .await
        .expect("batch");
    assert_eq!(r.status(), 422);
    let body: serde_json::Value = r.json().await.expect("json");
    assert_eq!(body["error"]["setting"], "PROVEN_REPO_HOSTS");
    // Nothing was stored.
    let list: serde_json::Value = crate::service::http()
        .get(format!("{}/v1/reviews", service.base_url))
        .bearer_auth(&token)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(list["reviews"].as_array().map(Vec::len), Some(0), "{list}");
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_refused_at_submission_is_refused_again_at_intake() {
    // A request already in the store (stored before the policy, or by another path): the
    // worker's intake checks it again and never connects anywhere.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("addr").port();
    let mut service = Service::start(0).await;
    let token = service.tenant("acme");
    let tenant = service
        .store
        .store
        .tenant_for_token(&token)
        .await
        .expect("store")
        .expect("tenant");
    let repository = format!("git://127.0.0.1:{port}/x\r\nFLUSHALL\r\n");
    let request = serde_json::json!({"repository": repository, "base": "a", "head": "b"});
    let id = uuid::Uuid::now_v7().to_string();
    service
        .store
        .store
        .submit_review(&proven_store::NewPipelineReview {
            id: id.clone(),
            tenant_id: Some(tenant.id),
            repository: repository.clone(),
            base_rev: "a".into(),
            head_rev: "b".into(),
            priority: 0,
            batch_id: None,
            pr_key: None,
            request: request.to_string(),
            deadline_us: None,
            trace_id: None,
        })
        .await
        .expect("stored");
    service.start_worker(&[]);
    let client = crate::service::http();
    let view = wait_done(
        &client,
        &service.base_url,
        &token,
        &id,
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(view["status"], "failed", "{view:#}");
    let message = intake_failure(&view);
    assert!(
        message.contains("control character") && message.contains("PROVEN_REPO_HOSTS"),
        "{message}"
    );
    assert!(
        listener.accept().is_err(),
        "the intake connected to the address in the request"
    );
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_https_clone_is_reviewed_and_no_credential_reaches_the_store_a_trace_or_a_log() {
    let secret = "ghp_Pr0venT3stS3cretThatMustNeverLeak";
    let server = GitHttpsServer::start(&["localhost"], Some(("x-access-token", secret)));
    let (repo, base) = repo_with_change("1.5.4");
    server.publish("app", repo.path());
    let url = format!("https://localhost:{}/app.git", server.port);
    let mut env = loopback(server.port);
    env.push((
        "PROVEN_REPO_CA_FILE".into(),
        server.ca_file().display().to_string(),
    ));
    env.push((
        "PROVEN_REPO_CREDENTIALS".into(),
        format!("localhost:{}=x-access-token:{secret}", server.port),
    ));
    // Everything logged, so the grep below has something to look through.
    env.push(("PROVEN_LOG".into(), "debug".into()));
    let service = Service::start_configured(1, "redis://127.0.0.1:6379", &pairs(&env), &[]).await;
    let alice = service.tenant("alice");
    let bob = service.tenant("bob");
    let client = crate::service::http();

    // The credential in the URL is refused, and not repeated.
    let with_secret = format!(
        "https://x-access-token:{secret}@localhost:{}/app.git",
        server.port
    );
    let (status, body) = post(
        &service,
        &alice,
        serde_json::json!({"repository": with_secret, "base": base, "head": "HEAD"}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["setting"], "PROVEN_REPO_CREDENTIALS");

    // Supplied the allowed way, the clone works and the review runs end to end.
    let mut ids = Vec::new();
    for token in [&alice, &bob] {
        let id = submit(&service, token, &url, &base).await;
        let view = wait_done(
            &client,
            &service.base_url,
            token,
            &id,
            Duration::from_secs(120),
        )
        .await;
        assert_eq!(view["status"], "complete", "{view:#}");
        assert!(
            view["result"]["findings"]
                .as_array()
                .is_some_and(|f| !f.is_empty()),
            "the cloned change is reviewed: {view:#}"
        );
        ids.push((token.clone(), id));
    }
    assert!(server.requests().iter().any(|l| l.ends_with(" ok")));
    let trace = client
        .get(format!(
            "{}/v1/reviews/{}/trace",
            service.base_url, ids[0].1
        ))
        .bearer_auth(&alice)
        .send()
        .await
        .expect("trace")
        .text()
        .await
        .expect("body");
    let line = trace
        .lines()
        .find(|l| l.contains("\"kind\":\"repository\""))
        .expect("the intake traces where it fetched from");
    assert!(line.contains(&url), "{line}");
    assert!(
        line.contains(&format!("127.0.0.1:{}", server.port)),
        "{line}"
    );

    // Each tenant has its own mirror of the URL.
    let tenants: Vec<_> = std::fs::read_dir(service.data_dir.path().join("repos"))
        .expect("mirrors")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(tenants.len(), 2, "{tenants:?}");
    for dir in &tenants {
        let mirrors = std::fs::read_dir(dir)
            .expect("tenant mirrors")
            .flatten()
            .filter(|e| e.path().is_dir())
            .count();
        assert_eq!(mirrors, 1, "{}", dir.display());
    }

    // `proven review` clones the same URL with the same settings.
    let cli = Env::new(Backend::Sqlite).await;
    crate::common::import(
        &cli,
        &[crate::common::data("advisories/osv-crates-rustsec.jsonl")
            .display()
            .to_string()],
    );
    let out = cli
        .proven()
        .envs(pairs(&env))
        .args([
            "review", "--repo", &url, "--base", &base, "--format", "json",
        ])
        .output()
        .expect("proven review");
    assert_eq!(out.status.code(), Some(1), "findings: {:?}", text(&out));
    assert!(
        !json(&out)["findings"]
            .as_array()
            .expect("findings")
            .is_empty()
    );

    // No credential anywhere: every table, every trace line, every log line, every file.
    let header =
        base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{secret}"));
    let needles = [secret.to_string(), header];
    let dump = Command::new("pg_dump")
        .args(["--data-only", &service.store.url])
        .output()
        .expect("pg_dump (install postgresql-client)");
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let mut places: Vec<(String, Vec<u8>)> = vec![
        ("every table (pg_dump)".into(), dump.stdout),
        ("the trace".into(), trace.clone().into_bytes()),
        (
            "proven review's output".into(),
            [out.stdout, out.stderr].concat(),
        ),
    ];
    for (_, id) in &ids[1..] {
        let t = client
            .get(format!("{}/v1/reviews/{id}/trace", service.base_url))
            .bearer_auth(&bob)
            .send()
            .await
            .expect("trace")
            .text()
            .await
            .expect("body");
        places.push(("the second trace".into(), t.into_bytes()));
    }
    for root in [service.data_dir.path(), cli.data_dir.path()] {
        for file in files_under(root) {
            places.push((
                file.display().to_string(),
                std::fs::read(&file).unwrap_or_default(),
            ));
        }
    }
    let logs: Vec<&str> = places
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|n| n.ends_with(".log"))
        .collect();
    assert!(
        logs.iter().any(|n| n.ends_with("workers.log"))
            && logs.iter().any(|n| n.ends_with("serve.log")),
        "the logs are among the places searched: {logs:?}"
    );
    for (place, bytes) in &places {
        for needle in &needles {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "the credential reached {place}"
            );
        }
    }
    cli.cleanup().await;
    service.stop().await;
}

fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A local repository the service may review: a change with a finding.
fn good_review() -> (TestRepo, String) {
    repo_with_change("1.5.4")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_tarpit_fails_the_intake_by_its_read_timeout_and_frees_the_slot() {
    let tarpit = TarpitServer::start(Tarpit::Stall);
    let mut env = loopback(tarpit.port);
    env.push(("PROVEN_REPO_READ_TIMEOUT_SECONDS".into(), "2".into()));
    // One evidence slot: while the tarpit holds it, nothing else runs there.
    env.push(("PROVEN_WORKER_CONCURRENCY".into(), "1".into()));
    let service = Service::start_configured(1, "redis://127.0.0.1:6379", &pairs(&env), &[]).await;
    let token = service.tenant("acme");
    let client = crate::service::http();
    let stuck = submit(
        &service,
        &token,
        &format!("https://localhost:{}/x.git", tarpit.port),
        "main",
    )
    .await;
    let (repo, base) = good_review();
    let next = submit(&service, &token, &repo.path().display().to_string(), &base).await;
    let view = wait_done(
        &client,
        &service.base_url,
        &token,
        &stuck,
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(view["status"], "failed", "{view:#}");
    let message = intake_failure(&view);
    assert!(
        message.contains("sent nothing for 2 s")
            && message.contains("PROVEN_REPO_READ_TIMEOUT_SECONDS"),
        "{message}"
    );
    assert!(tarpit.accepted() >= 1, "the intake reached the tarpit");
    let view = wait_done(
        &client,
        &service.base_url,
        &token,
        &next,
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(
        view["status"], "complete",
        "the slot is free again: {view:#}"
    );
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_intake_past_the_step_deadline_fails_by_name_and_releases_its_lease() {
    // A server that never stops trickling beats the read timeout; the step deadline ends it.
    let tarpit = TarpitServer::start(Tarpit::Trickle);
    let mut env = loopback(tarpit.port);
    env.push(("PROVEN_REPO_READ_TIMEOUT_SECONDS".into(), "60".into()));
    env.push(("PROVEN_REPO_FETCH_TIMEOUT_SECONDS".into(), "600".into()));
    env.push(("PROVEN_STEP_DEADLINE_SECONDS".into(), "5".into()));
    env.push(("PROVEN_WORKER_CONCURRENCY".into(), "1".into()));
    let service = Service::start_configured(1, "redis://127.0.0.1:6379", &pairs(&env), &[]).await;
    let token = service.tenant("acme");
    let client = crate::service::http();
    let stuck = submit(
        &service,
        &token,
        &format!("https://localhost:{}/x.git", tarpit.port),
        "main",
    )
    .await;
    let (repo, base) = good_review();
    let next = submit(&service, &token, &repo.path().display().to_string(), &base).await;
    let view = wait_done(
        &client,
        &service.base_url,
        &token,
        &stuck,
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(view["status"], "failed", "{view:#}");
    let message = intake_failure(&view);
    assert!(
        message.contains("step intake passed its deadline of 5 s")
            && message.contains("PROVEN_STEP_DEADLINE_SECONDS"),
        "{message}"
    );
    let steps = service.store.store.steps_of(&stuck).await.expect("steps");
    let intake = steps
        .iter()
        .find(|s| s.id.step == "intake")
        .expect("intake");
    assert_eq!(intake.state, "failed", "the lease is released: {intake:?}");
    let view = wait_done(
        &client,
        &service.base_url,
        &token,
        &next,
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(
        view["status"], "complete",
        "the slot is free again: {view:#}"
    );
    service.stop().await;
}

/// 300 MB: the most a worker may hold at its peak while refusing a hostile repository.
const PEAK_LIMIT: u64 = 300 << 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_pack_over_the_byte_cap_fails_by_name_with_peak_memory_under_300_mb() {
    let server = GitHttpsServer::start(&["localhost"], None);
    let repo = TestRepo::new();
    repo.write("README", "noise\n");
    let base = repo.commit("base");
    // 4 MiB that do not compress.
    let mut noise = Vec::with_capacity(4 << 20);
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    while noise.len() < 4 << 20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        noise.extend_from_slice(&state.to_le_bytes());
    }
    repo.write("noise.bin", &noise);
    repo.commit("noise");
    server.publish("big", repo.path());
    let mut env = loopback(server.port);
    env.push((
        "PROVEN_REPO_CA_FILE".into(),
        server.ca_file().display().to_string(),
    ));
    env.push(("PROVEN_REPO_MAX_FETCH_BYTES".into(), "1048576".into()));
    let service = Service::start_configured(1, "redis://127.0.0.1:6379", &pairs(&env), &[]).await;
    let token = service.tenant("acme");
    let client = crate::service::http();
    let id = submit(
        &service,
        &token,
        &format!("https://localhost:{}/big.git", server.port),
        &base,
    )
    .await;
    let view = wait_done(
        &client,
        &service.base_url,
        &token,
        &id,
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(view["status"], "failed", "{view:#}");
    let message = intake_failure(&view);
    assert!(
        message.contains("passed 1048576 bytes") && message.contains("PROVEN_REPO_MAX_FETCH_BYTES"),
        "{message}"
    );
    let peak = peak_memory(service.workers[0].0.id());
    eprintln!(
        "worker peak memory (VmHWM) after a pack over the cap: {} MiB",
        peak >> 20
    );
    assert!(peak < PEAK_LIMIT, "the worker peaked at {peak} bytes");
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_multi_gigabyte_blob_is_left_out_by_name_with_peak_memory_under_300_mb() {
    let (repo, base) = repo_with_change("1.5.4");
    // 3 GiB of zeros: streamed into the object database (a few MiB on disk, compressed).
    let size: u64 = 3 << 30;
    repo.stage_zero_blob("assets/huge.bin", size);
    repo.commit("a huge asset");
    let service = Service::start(1).await;
    let token = service.tenant("acme");
    let client = crate::service::http();
    let id = submit(&service, &token, &repo.path().display().to_string(), &base).await;
    let view = wait_done(
        &client,
        &service.base_url,
        &token,
        &id,
        Duration::from_secs(120),
    )
    .await;
    let result = &view["result"];
    assert_eq!(view["status"], "incomplete", "an unread file: {view:#}");
    assert!(
        result["left_out"]
            .as_array()
            .expect("left out")
            .iter()
            .any(|l| l["path"] == "assets/huge.bin" && l["reason"] == "too_large"),
        "{result:#}"
    );
    let error = result["input_errors"]
        .as_array()
        .expect("input errors")
        .iter()
        .find(|e| e["path"] == "assets/huge.bin")
        .expect("the huge file is named");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("{size} bytes")) && message.contains("PROVEN_MAX_BLOB_BYTES"),
        "{message}"
    );
    assert!(
        !result["findings"].as_array().expect("findings").is_empty(),
        "the rest of the change is still reviewed"
    );
    let peak = peak_memory(service.workers[0].0.id());
    eprintln!(
        "worker peak memory (VmHWM) after a {size}-byte blob: {} MiB",
        peak >> 20
    );
    assert!(peak < PEAK_LIMIT, "the worker peaked at {peak} bytes");
    service.stop().await;
}

#[tokio::test]
async fn repository_proven_yaml_lowers_the_intake_limits_but_never_raises_them() {
    let env = Env::new(Backend::Sqlite).await;
    let repo = TestRepo::new();
    repo.write(
        "proven.yaml",
        "intake:\n  max_tree_files: 4\n  max_blob_bytes: 999999999\n",
    )
    .write("a.txt", "a\n");
    let base = repo.commit("base");
    for i in 0..4 {
        repo.write(format!("src/f{i}.txt"), "x\n");
    }
    repo.commit("more files");
    let out = env
        .proven()
        .args([
            "review",
            "--repo",
            &repo.path().display().to_string(),
            "--base",
            &base,
        ])
        .output()
        .expect("review");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("holds more than 4 files") && stderr.contains("intake.max_tree_files"),
        "{stderr}"
    );
    // The blob limit the repository asks to raise stays the operator's.
    let repo = TestRepo::new();
    repo.write("proven.yaml", "intake:\n  max_blob_bytes: 999999999\n")
        .write("a.txt", "a\n");
    let base = repo.commit("base");
    repo.write("big.txt", "y".repeat(2_000));
    repo.commit("big");
    let out = env
        .proven()
        .env("PROVEN_MAX_BLOB_BYTES", "1000")
        .args([
            "review",
            "--repo",
            &repo.path().display().to_string(),
            "--base",
            &base,
            "--format",
            "json",
        ])
        .output()
        .expect("review");
    let doc = json(&out);
    assert!(
        doc["left_out"]
            .as_array()
            .expect("left out")
            .iter()
            .any(|l| l["path"] == "big.txt" && l["reason"] == "too_large"),
        "{doc:#}"
    );
    env.cleanup().await;
}
