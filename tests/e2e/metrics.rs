//! The metrics after a service run: the API's and a worker's `/metrics` (every family, the
//! sandbox and the agents in it) hold every name of docs/metrics.md's catalogue, with values
//! that say what the run did.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::agents::{CONCEDE, GENERATOR, GUARD, SKEPTIC, buggy_change, script};
use crate::service::{Service, http, repo_with_change, wait_done};
use proven_models::scripted::ScriptedServer;

/// The catalogue's names (the first cell of each row of docs/metrics.md's table).
fn catalogue() -> Vec<String> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/metrics.md"),
    )
    .expect("docs/metrics.md");
    text.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .filter(|n| n.starts_with("proven_"))
        .map(str::to_string)
        .collect()
}

/// The value of the series `series` (`name{labels}` exactly as exported), if exported.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        l.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// Every series of `name` whose labels hold each of `labels`, summed.
fn sum(text: &str, name: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter(|l| labels.iter().all(|x| l.contains(x)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

async fn scrape(client: &reqwest::Client, url: &str) -> String {
    client
        .get(url)
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_catalogue_name_is_exported_with_values_that_say_what_ran() {
    let server = ScriptedServer::start().await;
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        CONCEDE(),
    );
    let url = server.base_url.clone();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let worker_metrics = format!("127.0.0.1:{port}");
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
    let mut worker_env = env.to_vec();
    worker_env.push(("PROVEN_METRICS_LISTEN", worker_metrics.as_str()));
    service.start_worker_serving(&["--steps", "evidence,control,model,sandbox"], &worker_env);
    let token = service.tenant("metrics");
    let client = http();
    let base = service.base_url.clone();
    // A bug the agents reproduce in the sandbox, and a lock file an advisory affects.
    let (bug, bug_base) = buggy_change();
    let (deps, deps_base) = repo_with_change("1.5.0");
    for (repo, rev) in [(&bug, &bug_base), (&deps, &deps_base)] {
        let created: serde_json::Value = client
            .post(format!("{base}/v1/reviews"))
            .bearer_auth(&token)
            .json(&json!({"repository": repo.path().display().to_string(), "base": rev, "head": "HEAD"}))
            .send()
            .await
            .expect("POST review")
            .json()
            .await
            .expect("JSON");
        let id = created["id"].as_str().expect("id").to_string();
        let view = wait_done(&client, &base, &token, &id, Duration::from_secs(240)).await;
        assert!(
            view["result"]["findings"]
                .as_array()
                .is_some_and(|f| !f.is_empty()),
            "{view:#}"
        );
    }
    // The reconcilers count the queues every 2 s: wait for a count after the reviews.
    let started = Instant::now();
    let (api, worker) = loop {
        let api = scrape(&client, &format!("{base}/metrics")).await;
        let worker = scrape(&client, &format!("http://{worker_metrics}/metrics")).await;
        let all = format!("{api}{worker}");
        if all.contains("proven_pipeline_queue_oldest_seconds")
            && all.contains("proven_pipeline_queue_depth")
            || started.elapsed() > Duration::from_secs(30)
        {
            break (api, worker);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let all = format!("{api}\n{worker}");
    // The prepared-layer cache's size is measured when a preparation ends (the runner does
    // not measure it at start): it is owed once the cache was looked up at all.
    let cache_used = sum(&all, "proven_sandbox_cache_lookups_total", &[]) > 0.0;
    let missing: Vec<String> = catalogue()
        .into_iter()
        .filter(|name| cache_used || name != "proven_sandbox_cache_bytes")
        .filter(|name| {
            !all.lines().any(|l| {
                l.strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with(['{', ' ', '_']))
            })
        })
        .collect();
    assert!(missing.is_empty(), "not exported: {missing:?}\n{all}");
    // Values that say what ran.
    assert!(
        sum(
            &all,
            "proven_findings_total",
            &["proof_level=\"reproduced\"", "kind=\"defect\""]
        ) >= 1.0,
        "{all}"
    );
    assert!(
        sum(&all, "proven_findings_total", &["proof_level=\"advisory\""]) >= 1.0,
        "{all}"
    );
    assert!(
        sum(&all, "proven_reviews_total", &["status=\"submitted\""]) >= 2.0,
        "{all}"
    );
    assert!(
        sum(
            &worker,
            "proven_sandbox_runs_total",
            &["language=\"python\"", "outcome=\"passed\""]
        ) >= 1.0,
        "{worker}"
    );
    assert!(
        sum(
            &worker,
            "proven_sandbox_runs_total",
            &["language=\"python\"", "outcome=\"test_failed\""]
        ) >= 1.0,
        "{worker}"
    );
    assert!(
        sum(
            &worker,
            "proven_model_calls_total",
            &["role=\"generator\"", &format!("model=\"{GENERATOR}\"")]
        ) >= 2.0,
        "{worker}"
    );
    assert!(
        sum(
            &worker,
            "proven_guardrail_verdicts_total",
            &["verdict=\"safe\""]
        ) >= 1.0,
        "{worker}"
    );
    // The calls are counted by the tenant whose review made them.
    assert_eq!(
        sum(&worker, "proven_model_calls_total", &["tenant=\"none\""]),
        0.0,
        "every call was a tenant's: {worker}"
    );
    assert_eq!(
        value(&all, "proven_pipeline_dead_letters_total"),
        Some(0.0),
        "no dead letter"
    );
    assert!(
        sum(
            &worker,
            "proven_review_duration_seconds_count",
            &["priority=\"interactive\""]
        ) >= 2.0,
        "{worker}"
    );
    service.stop().await;
}

/// Every queue-depth series of one process's scrape: (labels, value).
fn depth_series(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("proven_pipeline_queue_depth{"))
        .filter_map(|l| {
            let (labels, value) = l.split_once("} ")?;
            Some((labels.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// The gauge scenario of issue 33: reviews submitted with no worker wait in the evidence
/// queue; once workers drain it, every process (the API and both workers) exports a depth of
/// 0 within a few reconciler ticks, never the last non-zero count; and at every moment the
/// max across processes (what the dashboards and the autoscalers read) is the store's count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_depth_goes_to_zero_when_the_queue_drains_in_every_process() {
    let mut service = Service::start(0).await;
    let token = service.tenant("depth");
    let client = http();
    let base = service.base_url.clone();
    let mut ids = Vec::new();
    let mut repos = Vec::new();
    for version in ["1.5.4", "1.0.0", "0.1.80"] {
        let (repo, rev) = repo_with_change(version);
        let created: serde_json::Value = client
            .post(format!("{base}/v1/reviews"))
            .bearer_auth(&token)
            .json(&json!({"repository": repo.path().display().to_string(), "base": rev, "head": "HEAD"}))
            .send()
            .await
            .expect("POST review")
            .json()
            .await
            .expect("JSON");
        ids.push(created["id"].as_str().expect("id").to_string());
        repos.push(repo);
    }
    // No worker: the API's reconciler admits the three reviews, whose intake steps wait.
    let started = Instant::now();
    loop {
        let api = scrape(&client, &format!("{base}/metrics")).await;
        let queued = value(
            &api,
            "proven_pipeline_queue_depth{queue=\"evidence\",state=\"queued\"}",
        );
        if queued == Some(3.0) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the API never exported 3 queued evidence steps: {queued:?}\n{api}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let truth = service.store.store.pipeline_depth().await.expect("depth");
    assert_eq!(
        truth,
        vec![("evidence".to_string(), "queued".to_string(), 3)],
        "the store's count"
    );

    // Two workers drain the queue.
    let mut listens = Vec::new();
    for _ in 0..2 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let listen = format!("127.0.0.1:{port}");
        service.start_worker(&[("PROVEN_METRICS_LISTEN", listen.as_str())]);
        listens.push(listen);
    }
    for id in &ids {
        wait_done(&client, &base, &token, id, Duration::from_secs(120)).await;
    }
    let truth = service.store.store.pipeline_depth().await.expect("depth");
    assert!(truth.is_empty(), "the store still counts {truth:?}");
    // Within a few reconciler ticks (every 2 s), every process exports every series at 0.
    let urls: Vec<String> = std::iter::once(format!("{base}/metrics"))
        .chain(listens.iter().map(|l| format!("http://{l}/metrics")))
        .collect();
    let started = Instant::now();
    loop {
        let mut stale = Vec::new();
        let mut seen = 0;
        for url in &urls {
            let text = scrape(&client, url).await;
            let series = depth_series(&text);
            seen += usize::from(series.iter().any(|(l, _)| l.contains("queue=\"evidence\"")));
            stale.extend(
                series
                    .into_iter()
                    .filter(|(_, v)| *v != 0.0)
                    .map(|(l, v)| format!("{url} {l} {v}")),
            );
        }
        if stale.is_empty() && seen == urls.len() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the queue is empty in the store, yet after {:?} the processes export: {stale:?} \
             ({seen} of {} export the evidence queue)",
            started.elapsed(),
            urls.len()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    drop(repos);
    service.stop().await;
}
