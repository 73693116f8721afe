//! Chaos: 200 reviews while workers are SIGKILLed and restarted every few seconds (fixed
//! seed), with a poison job that crashes its worker each time it runs, and Redis flushed
//! (FLUSHALL) mid-run. Every review must end; each one's findings must be exactly the
//! embedded default's for the same change (nothing lost, nothing twice); the poison step
//! must be dead-lettered after 3 attempts.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proven_store::testing::Backend;

use crate::common::{Env, data, json};
use crate::service::{Proc, Service, repo_with_change};

/// xorshift64*: a fixed seed gives the same kill schedule every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn own_redis() -> (Proc, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server is needed for the chaos test (Debian package redis-server)");
    let url = format!("redis://127.0.0.1:{port}");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "redis-server did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (Proc(child), url)
}

fn ids(doc: &serde_json::Value) -> Vec<String> {
    let mut v: Vec<String> = doc["findings"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter_map(|x| x["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviews_survive_killed_workers_a_poison_job_and_a_flushed_redis() {
    const REVIEWS: usize = 200;
    let (_redis, redis_url) = own_redis();
    let marker = "poison-marker";
    let env = [
        ("PROVEN_TEST_FAULT_MARKER", marker),
        ("PROVEN_TEST_FAULT_STEP", "deps.collect"),
        ("PROVEN_REQUEUE_SECONDS", "5"),
    ];
    let mut service = Service::start_with(2, &redis_url, &env).await;
    let token = service.tenant("chaos");
    let client = crate::service::http();

    // Ten distinct changes; the embedded default says what each must find.
    let versions = [
        "1.5.4", "1.0.0", "0.1.80", "1.10.0", "1.5.0", "0.2.0", "1.3.0", "1.4.0", "0.1.41", "1.1.0",
    ];
    let repos: Vec<_> = versions.iter().map(|v| repo_with_change(v)).collect();
    let embedded = Env::new(Backend::Sqlite).await;
    crate::common::import(
        &embedded,
        &[
            data("advisories/osv-crates-rustsec.jsonl")
                .display()
                .to_string(),
            data("advisories/osv-npm-nodejs-securitywg.jsonl")
                .display()
                .to_string(),
            data("advisories/kev.json").display().to_string(),
        ],
    );
    let expected: Vec<Vec<String>> = repos
        .iter()
        .map(|(repo, base)| {
            ids(&json(&embedded.run(&[
                "review",
                "--repo",
                &repo.path().display().to_string(),
                "--base",
                base,
                "--format",
                "json",
            ])))
        })
        .collect();
    assert!(
        expected.iter().filter(|e| !e.is_empty()).count() >= 5,
        "the changes have findings: {expected:?}"
    );

    // The poison review: its deps.collect step aborts whichever worker runs it.
    let poison_dir = tempfile::Builder::new()
        .prefix(marker)
        .tempdir()
        .expect("tempdir");
    let (poison_repo, poison_base) = repo_with_change("1.5.4");
    let poison_path = poison_dir.path().join("repo");
    std::fs::rename(poison_repo.path(), &poison_path).unwrap_or_else(|_| {
        let status = Command::new("cp")
            .arg("-a")
            .arg(poison_repo.path())
            .arg(&poison_path)
            .status()
            .expect("cp");
        assert!(status.success());
    });

    let submit = |repository: String, base: String| {
        let client = client.clone();
        let url = format!("{}/v1/reviews", service.base_url);
        let token = token.clone();
        async move {
            let r = client
                .post(url)
                .bearer_auth(token)
                .json(&serde_json::json!({"repository": repository, "base": base, "head": "HEAD"}))
                .send()
                .await
                .expect("POST");
            assert_eq!(r.status(), 202);
            r.json::<serde_json::Value>().await.expect("json")["id"]
                .as_str()
                .expect("id")
                .to_string()
        }
    };
    let poison_id = submit(poison_path.display().to_string(), poison_base.clone()).await;
    let mut submitted: Vec<(String, usize)> = Vec::with_capacity(REVIEWS);
    for i in 0..REVIEWS {
        let (repo, base) = &repos[i % repos.len()];
        submitted.push((
            submit(repo.path().display().to_string(), base.clone()).await,
            i % repos.len(),
        ));
    }

    // Kill a worker every few seconds and start a fresh one; flush Redis once, mid-run.
    let mut rng = Rng(0x5EED_CAFE_F00D_0001);
    let started = Instant::now();
    let deadline = Duration::from_secs(420);
    let mut kills = 0;
    let mut flushed = false;
    let mut last_kill = Instant::now();
    loop {
        let mut open = 0;
        let mut listed = 0;
        let mut before: Option<String> = None;
        loop {
            let url = match &before {
                Some(b) => format!("{}/v1/reviews?limit=500&before={b}", service.base_url),
                None => format!("{}/v1/reviews?limit=500", service.base_url),
            };
            let page: serde_json::Value = client
                .get(url)
                .bearer_auth(&token)
                .send()
                .await
                .expect("list")
                .json()
                .await
                .expect("json");
            for r in page["reviews"].as_array().expect("reviews") {
                listed += 1;
                if matches!(r["status"].as_str(), Some("queued" | "running")) {
                    open += 1;
                }
            }
            match page["next"].as_str() {
                Some(n) => before = Some(n.to_string()),
                None => break,
            }
        }
        assert_eq!(listed, REVIEWS + 1);
        if open == 0 {
            break;
        }
        if started.elapsed() > deadline {
            let states = std::process::Command::new("psql")
                .arg(&service.store.url)
                .args(["-At", "-c", "SELECT step, state, attempts, COUNT(*) FROM steps GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            panic!(
                "{open} reviews still open after {deadline:?} ({kills} kills); steps:\n{states}"
            );
        }
        if last_kill.elapsed() > Duration::from_millis(3000 + rng.next() % 3000) {
            let victim = (rng.next() % service.workers.len() as u64) as usize;
            let mut old = service.workers.remove(victim);
            let _ = old.0.kill(); // SIGKILL
            let _ = old.0.wait();
            service.start_worker(&env);
            kills += 1;
            last_kill = Instant::now();
        }
        if !flushed && started.elapsed() > Duration::from_secs(8) {
            let client = redis::Client::open(redis_url.as_str()).expect("redis");
            let mut conn = client
                .get_multiplexed_async_connection()
                .await
                .expect("connect");
            let _: () = redis::cmd("FLUSHALL")
                .query_async(&mut conn)
                .await
                .expect("FLUSHALL");
            flushed = true;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(kills >= 3, "workers were killed during the run ({kills})");
    assert!(flushed, "Redis was flushed during the run");

    // Every review ended; each has exactly the embedded default's findings.
    let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
    for (id, repo) in &submitted {
        let view: serde_json::Value = client
            .get(format!("{}/v1/reviews/{id}", service.base_url))
            .bearer_auth(&token)
            .send()
            .await
            .expect("GET")
            .json()
            .await
            .expect("json");
        *by_status
            .entry(view["status"].as_str().unwrap_or_default().to_string())
            .or_default() += 1;
        if view["status"] != "complete" {
            let log = std::fs::read_to_string(service.data_dir.path().join("workers.log"))
                .unwrap_or_default();
            let mine: Vec<&str> = log.lines().filter(|l| l.contains(id.as_str())).collect();
            panic!(
                "review {id} of change {repo} ended {}: {:#}\n{}",
                view["status"],
                view["result"]["failed_services"],
                mine.join("\n")
            );
        }
        assert_eq!(
            ids(&view["result"]),
            expected[*repo],
            "review {id} of change {repo}"
        );
    }
    eprintln!(
        "chaos: {REVIEWS} reviews {by_status:?}, {kills} workers killed, Redis flushed, in {:?}",
        started.elapsed()
    );

    // The poison step was dead-lettered after 3 attempts, and its review says so.
    let poison: serde_json::Value = client
        .get(format!("{}/v1/reviews/{poison_id}", service.base_url))
        .bearer_auth(&token)
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("json");
    let collect = poison["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["step"] == "deps.collect")
        .expect("deps.collect");
    assert_eq!(collect["state"], "dead", "{poison:#}");
    assert_eq!(collect["attempts"], 3);
    assert_ne!(poison["status"], "complete");
    let failed = poison["result"]["failed_services"].to_string();
    assert!(failed.contains("dead-lettered"), "{failed}");

    embedded.cleanup().await;
    service.stop().await;
}
