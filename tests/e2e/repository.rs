//! What intake reads from a repository, end to end: a multi-gigabyte blob is left out by
//! name with the worker's peak memory measured, and a repository's `proven.yaml` lowers the
//! intake limits but never raises them.

use std::time::Duration;

use proven_change::testing::TestRepo;
use proven_store::testing::Backend;

use crate::common::{Env, json, text};
use crate::service::{Service, repo_with_change, wait_done};

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

/// 300 MB: the most a worker may hold at its peak while refusing a hostile repository.
const PEAK_LIMIT: u64 = 300 << 20;

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
