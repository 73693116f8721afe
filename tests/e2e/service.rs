//! The service end to end: `proven serve` and two `proven worker` processes started by the
//! test, on a fresh Postgres database and a Redis key prefix of their own.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use proven_change::testing::TestRepo;
use proven_store::testing::{Backend, TestStore};

use crate::common::{Env, data, json, text};

/// An HTTP client for the tests (rustls with the ring provider, as Proven installs it).
pub fn http() -> reqwest::Client {
    proven_models::install_crypto();
    reqwest::Client::new()
}

/// A child process killed when dropped (a failing test leaves nothing running).
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub struct Service {
    pub redis_url: String,
    pub store: TestStore,
    pub prefix: String,
    pub api: Proc,
    pub base_url: String,
    pub workers: Vec<Proc>,
    pub data_dir: tempfile::TempDir,
    /// Settings every process of this service (API and workers) runs with.
    pub env: Vec<(String, String)>,
}

pub fn proven(store_url: &str, prefix: &str, data_dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_proven"));
    for (k, _) in std::env::vars() {
        if k.starts_with("PROVEN_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("PROVEN_DATABASE_URL", store_url)
        .env("PROVEN_QUEUE_PREFIX", prefix)
        .env("PROVEN_DATA_DIR", data_dir)
        .env("PROVEN_LEASE_SECONDS", "6")
        // The tests' repositories are temporary directories (the data directory, though
        // under the same root, stays refused).
        .env("PROVEN_REPO_ROOTS", std::env::temp_dir())
        .env("NO_COLOR", "1");
    cmd
}

impl Service {
    pub async fn start(workers: usize) -> Service {
        Service::start_with(workers, "redis://127.0.0.1:6379", &[]).await
    }

    /// `worker_env` is given to every worker this service starts.
    pub async fn start_with(
        workers: usize,
        redis_url: &str,
        worker_env: &[(&str, &str)],
    ) -> Service {
        Service::start_full(workers, redis_url, &[], worker_env, &[]).await
    }

    /// The API alone (no worker), with `api_env` for `proven serve`.
    pub async fn start_api_with(api_env: &[(&str, &str)]) -> Service {
        Service::start_full(0, "redis://127.0.0.1:6379", &[], &[], api_env).await
    }

    /// `env` is given to every process of the service (the API and each worker);
    /// `worker_env` to the workers only.
    pub async fn start_configured(
        workers: usize,
        redis_url: &str,
        env: &[(&str, &str)],
        worker_env: &[(&str, &str)],
    ) -> Service {
        Service::start_full(workers, redis_url, env, worker_env, &[]).await
    }

    async fn start_full(
        workers: usize,
        redis_url: &str,
        env: &[(&str, &str)],
        worker_env: &[(&str, &str)],
        api_env: &[(&str, &str)],
    ) -> Service {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let store = TestStore::new(Backend::Postgres).await;
        let prefix = format!("proven-test-{}", uuid::Uuid::now_v7().simple());
        let data_dir = tempfile::tempdir().expect("tempdir");
        let out = proven(&store.url, &prefix, data_dir.path())
            .args(["db", "import"])
            .arg(data("advisories/osv-crates-rustsec.jsonl"))
            .arg(data("advisories/osv-npm-nodejs-securitywg.jsonl"))
            .arg(data("advisories/kev.json"))
            .output()
            .expect("import");
        assert!(out.status.success(), "{:?}", text(&out));
        let mut serve = proven(&store.url, &prefix, data_dir.path());
        serve
            .env("PROVEN_LISTEN", "127.0.0.1:0")
            .env("PROVEN_REDIS_URL", redis_url)
            // The tests poll a review's state as fast as they like: a rate limit of their
            // own is set by the test of rate limits.
            .env("PROVEN_HTTP_RATE_PER_SECOND", "10000")
            .env("PROVEN_HTTP_RATE_BURST", "10000")
            .envs(env.iter().map(|(k, v)| (k, v)));
        for (k, v) in api_env {
            serve.env(k, v);
        }
        let mut api = serve
            .arg("serve")
            .stderr(Stdio::piped())
            .spawn()
            .expect("start proven serve");
        let stderr = api.stderr.take().expect("stderr is piped");
        let mut lines = BufReader::new(stderr).lines();
        let base_url = loop {
            let line = lines
                .next()
                .expect("serve printed its address")
                .expect("read stderr");
            if let Some(url) = line.strip_prefix("proven: listening on ") {
                break url.trim().to_string();
            }
        };
        // The rest of the API's log, for tests that read it.
        let mut log = std::fs::File::create(data_dir.path().join("serve.log")).expect("serve log");
        std::thread::spawn(move || {
            use std::io::Write;
            for line in lines.map_while(Result::ok) {
                let _ = writeln!(log, "{line}");
            }
        });
        let mut service = Service {
            redis_url: redis_url.to_string(),
            store,
            prefix,
            api: Proc(api),
            base_url,
            workers: Vec::new(),
            data_dir,
            env,
        };
        for _ in 0..workers {
            service.start_worker(worker_env);
        }
        service
    }

    pub fn start_worker(&mut self, env: &[(&str, &str)]) {
        self.start_worker_serving(&[], env);
    }

    /// A worker with extra arguments (e.g. `--steps sandbox`).
    pub fn start_worker_serving(&mut self, args: &[&str], env: &[(&str, &str)]) {
        let mut cmd = proven(&self.store.url, &self.prefix, self.data_dir.path());
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data_dir.path().join("workers.log"))
            .expect("worker log");
        cmd.env("PROVEN_REDIS_URL", &self.redis_url)
            .env("PROVEN_LOG", "proven_pipeline=info,warn")
            // No warm pool unless a test asks (and stops its worker gracefully): a worker
            // SIGKILLed at the end of a test would leave its warm containers to a sweep
            // no later process runs.
            .env("PROVEN_SANDBOX_POOL_SIZE", "0")
            .arg("worker")
            .args(args)
            .stdout(Stdio::null())
            .stderr(log);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        self.workers
            .push(Proc(cmd.spawn().expect("start proven worker")));
    }

    pub fn tenant(&self, name: &str) -> String {
        let out = proven(&self.store.url, &self.prefix, self.data_dir.path())
            .args(["tenant", "create", name])
            .output()
            .expect("tenant create");
        assert!(out.status.success(), "{:?}", text(&out));
        text(&out).0.trim().to_string()
    }

    pub async fn stop(self) {
        let Service {
            store,
            prefix,
            api,
            workers,
            redis_url,
            ..
        } = self;
        drop(workers);
        drop(api);
        store.cleanup().await;
        delete_keys(&redis_url, &prefix).await;
    }
}

/// Deletes a test's Redis keys (those under its queue prefix).
pub async fn delete_keys(redis_url: &str, prefix: &str) {
    if let Ok(client) = redis::Client::open(redis_url)
        && let Ok(mut conn) = client.get_multiplexed_async_connection().await
    {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{prefix}:*"))
            .query_async(&mut conn)
            .await
            .unwrap_or_default();
        if !keys.is_empty() {
            let _: Result<(), _> = redis::cmd("DEL").arg(keys).query_async(&mut conn).await;
        }
    }
}

pub async fn wait_done(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    id: &str,
    deadline: Duration,
) -> serde_json::Value {
    let started = Instant::now();
    loop {
        let response = client
            .get(format!("{base}/v1/reviews/{id}"))
            .bearer_auth(token)
            .send()
            .await
            .expect("GET review");
        // A busy shared Postgres can make the API answer 503 for a moment: ask again.
        let unavailable = response.status() == reqwest::StatusCode::SERVICE_UNAVAILABLE;
        let view: serde_json::Value = response.json().await.expect("review JSON");
        let status = view["status"].as_str().unwrap_or_default().to_string();
        if !unavailable && !matches!(status.as_str(), "queued" | "running") {
            return view;
        }
        assert!(
            started.elapsed() < deadline,
            "review {id} still {status} after {deadline:?}: {view:#}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub fn lock(regex: &str) -> String {
    format!(
        "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"regex\"]\n\n\
         [[package]]\nname = \"regex\"\nversion = \"{regex}\"\n\
         source = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
    )
}

/// A repository whose change lowers regex to `version` (several advisories may match).
pub fn repo_with_change(version: &str) -> (TestRepo, String) {
    let repo = TestRepo::new();
    repo.write("Cargo.lock", lock("1.10.0"));
    let base = repo.commit("base");
    repo.write("Cargo.lock", lock(version)).write("web/package.json", r#"{"name":"w","dependencies":{"lodash":"^4"}}"#)
        .write("web/package-lock.json", r#"{"name":"w","lockfileVersion":3,"packages":{"":{"name":"w","dependencies":{"lodash":"^4"}},"node_modules/lodash":{"version":"4.17.4"}}}"#);
    repo.commit("change");
    (repo, base)
}

fn finding_ids(doc: &serde_json::Value) -> Vec<String> {
    let mut ids: Vec<String> = doc["findings"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter_map(|x| x["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviews_over_http_match_the_embedded_default() {
    let service = Service::start(2).await;
    let token = service.tenant("acme");
    let client = crate::service::http();
    let versions = ["1.5.4", "1.0.0", "0.1.80", "1.10.0"];
    let mut repos = Vec::new();
    let mut ids = Vec::new();
    let mut traces = Vec::new();
    for v in versions {
        let (repo, base) = repo_with_change(v);
        let response = client
            .post(format!("{}/v1/reviews", service.base_url))
            .bearer_auth(&token)
            .json(&serde_json::json!({"repository": repo.path().display().to_string(), "base": base, "head": "HEAD"}))
            .send()
            .await
            .expect("POST");
        assert_eq!(response.status(), 202);
        let accepted: serde_json::Value = response.json().await.expect("json");
        ids.push(accepted["id"].as_str().expect("id").to_string());
        traces.push(accepted["trace_id"].as_str().expect("trace id").to_string());
        repos.push((repo, base));
    }
    // The embedded default on the same changes, with the same advisories in SQLite.
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
    for ((id, (repo, base)), version) in ids.iter().zip(&repos).zip(versions) {
        let view = wait_done(
            &client,
            &service.base_url,
            &token,
            id,
            Duration::from_secs(90),
        )
        .await;
        assert_eq!(view["status"], "complete", "{view:#}");
        let out = embedded.run(&[
            "review",
            "--repo",
            &repo.path().display().to_string(),
            "--base",
            base,
            "--format",
            "json",
        ]);
        let local = json(&out);
        let served = &view["result"];
        assert_eq!(
            finding_ids(served),
            finding_ids(&local),
            "service and embedded agree on {}",
            repo.path().display()
        );
        assert_eq!(served["proof_counts"], local["proof_counts"]);
        // The pipeline ran as separate steps, one finding pipeline per dependency file.
        let steps: Vec<(String, String)> = view["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .map(|s| {
                (
                    s["step"].as_str().unwrap_or_default().to_string(),
                    s["state"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        for step in ["intake", "plan", "deps.collect", "judge"] {
            assert!(
                steps.iter().any(|(s, state)| s == step && state == "done"),
                "{step} in {steps:?}"
            );
        }
        // Cargo.lock changes unless the version is the base's; web/package-lock.json is new.
        let files = if version == "1.10.0" { 1 } else { 2 };
        assert_eq!(
            steps.iter().filter(|(s, _)| s == "deps.file").count(),
            files,
            "{steps:?}"
        );
        let trace = client
            .get(format!("{}/v1/reviews/{id}/trace", service.base_url))
            .bearer_auth(&token)
            .send()
            .await
            .expect("trace")
            .text()
            .await
            .expect("body");
        assert!(
            trace.lines().any(|l| l.contains("\"kind\":\"plan\"")),
            "{trace}"
        );
    }
    assert!(
        !finding_ids(
            &wait_done(
                &client,
                &service.base_url,
                &token,
                &ids[0],
                Duration::from_secs(5)
            )
            .await["result"]
        )
        .is_empty()
    );
    // The trace context travelled with every job: the workers' spans name each review's trace id.
    let log =
        std::fs::read_to_string(service.data_dir.path().join("workers.log")).unwrap_or_default();
    for trace in &traces {
        assert!(
            log.contains(&format!("trace_id={trace}")),
            "{trace} not in worker spans"
        );
    }
    embedded.cleanup().await;
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_required_and_tenants_see_only_their_own() {
    let service = Service::start(1).await;
    let alice = service.tenant("alice");
    let bob = service.tenant("bob");
    let client = crate::service::http();
    let base = &service.base_url;
    let missing =
        std::env::temp_dir().join(format!("proven-no-such-repo-{}", uuid::Uuid::now_v7()));
    let body =
        serde_json::json!({"repository": missing.display().to_string(), "base": "a", "head": "b"});

    let r = client
        .post(format!("{base}/v1/reviews"))
        .json(&body)
        .send()
        .await
        .expect("no token");
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.json::<serde_json::Value>().await.expect("json")["error"]["code"],
        "missing_token"
    );
    let r = client
        .post(format!("{base}/v1/reviews"))
        .bearer_auth("pvn_wrong")
        .json(&body)
        .send()
        .await
        .expect("bad token");
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.json::<serde_json::Value>().await.expect("json")["error"]["code"],
        "invalid_token"
    );

    let r = client
        .post(format!("{base}/v1/reviews"))
        .bearer_auth(&alice)
        .json(&body)
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 202);
    let id = r.json::<serde_json::Value>().await.expect("json")["id"]
        .as_str()
        .expect("id")
        .to_string();
    for path in [
        format!("/v1/reviews/{id}"),
        format!("/v1/reviews/{id}/trace"),
    ] {
        let r = client
            .get(format!("{base}{path}"))
            .bearer_auth(&bob)
            .send()
            .await
            .expect("get");
        assert_eq!(
            r.status(),
            404,
            "another tenant's review is not found: {path}"
        );
        assert_eq!(
            r.json::<serde_json::Value>().await.expect("json")["error"]["code"],
            "not_found"
        );
        let r = client
            .get(format!("{base}{path}"))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 401);
    }
    let list: serde_json::Value = client
        .get(format!("{base}/v1/reviews"))
        .bearer_auth(&bob)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(list["reviews"].as_array().map(Vec::len), Some(0));
    let list: serde_json::Value = client
        .get(format!("{base}/v1/reviews"))
        .bearer_auth(&alice)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(list["reviews"][0]["id"], id.as_str());
    // A review of a repository that does not exist ends failed, by name, never clean.
    let view = wait_done(&client, base, &alice, &id, Duration::from_secs(60)).await;
    assert_eq!(view["status"], "failed");
    assert_eq!(view["result"]["failed_services"][0]["service"], "intake");
    let r = client
        .post(format!("{base}/v1/reviews"))
        .bearer_auth(&alice)
        .json(&serde_json::json!({"repository": "x"}))
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 422);
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_openapi_document_matches_the_routes_and_the_responses() {
    let mut service = Service::start(0).await;
    // The worker exports its own metrics.
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let worker_metrics = format!("127.0.0.1:{metrics_port}");
    service.start_worker(&[("PROVEN_METRICS_LISTEN", worker_metrics.as_str())]);
    let token = service.tenant("docs");
    let client = crate::service::http();
    let base = &service.base_url;
    let doc: serde_json::Value = client
        .get(format!("{base}/v1/openapi.json"))
        .send()
        .await
        .expect("openapi")
        .json()
        .await
        .expect("json");
    let checked_in: serde_json::Value =
        serde_json::from_str(proven_api::OPENAPI).expect("checked-in document");
    assert_eq!(doc, checked_in);
    let mut documented: Vec<(String, String)> = doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .flat_map(|(p, ops)| {
            ops.as_object()
                .into_iter()
                .flat_map(|o| o.keys())
                .map(move |m| (m.clone(), p.clone()))
        })
        .collect();
    documented.sort();
    let mut routed: Vec<(String, String)> = proven_api::ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    routed.sort();
    assert_eq!(documented, routed);
    // Real responses validate against the documented schemas.
    let schema_for = |name: &str| {
        let mut s = serde_json::json!({"$ref": format!("#/components/schemas/{name}")});
        s["components"] = doc["components"].clone();
        jsonschema::validator_for(&s).expect("schema compiles")
    };
    let (repo, base_rev) = repo_with_change("1.5.4");
    let accepted: serde_json::Value = client
        .post(format!("{base}/v1/reviews"))
        .bearer_auth(&token)
        .json(&serde_json::json!({"repository": repo.path().display().to_string(), "base": base_rev, "head": "HEAD"}))
        .send()
        .await
        .expect("post")
        .json()
        .await
        .expect("json");
    assert!(schema_for("ReviewAccepted").is_valid(&accepted));
    let id = accepted["id"].as_str().expect("id");
    let view = wait_done(&client, base, &token, id, Duration::from_secs(90)).await;
    let errors: Vec<String> = schema_for("ReviewView")
        .iter_errors(&view)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let list: serde_json::Value = client
        .get(format!("{base}/v1/reviews?limit=1"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert!(schema_for("ReviewList").is_valid(&list));
    let batch: serde_json::Value = client
        .post(format!("{base}/v1/batches"))
        .bearer_auth(&token)
        .json(&serde_json::json!({"reviews": [{"repository": repo.path().display().to_string(), "base": base_rev, "head": "HEAD"}]}))
        .send()
        .await
        .expect("batch")
        .json()
        .await
        .expect("json");
    assert!(schema_for("BatchAccepted").is_valid(&batch));
    let batch_id = batch["id"].as_str().expect("batch id");
    let started = Instant::now();
    loop {
        let view: serde_json::Value = client
            .get(format!("{base}/v1/batches/{batch_id}"))
            .bearer_auth(&token)
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        assert!(schema_for("BatchView").is_valid(&view));
        if view["done"] == true {
            assert_eq!(view["statuses"]["complete"], 1);
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(90));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A newer interactive review, so the batch's review is no longer the tenant's newest.
    let later: serde_json::Value = client
        .post(format!("{base}/v1/reviews"))
        .bearer_auth(&token)
        .json(&serde_json::json!({"repository": repo.path().display().to_string(), "base": base_rev, "head": "HEAD"}))
        .send()
        .await
        .expect("post")
        .json()
        .await
        .expect("json");
    let later = later["id"].as_str().expect("id");
    wait_done(&client, base, &token, later, Duration::from_secs(90)).await;
    let batch_review = batch["reviews"][0].as_str().expect("the batch's review");
    let view = wait_done(&client, base, &token, batch_review, Duration::from_secs(90)).await;
    assert_eq!(view["priority"], "batch", "{view:#}");
    assert_eq!(view["batch_id"], batch_id, "{view:#}");
    // Filters and pages: by batch, by status, and the cursor to the next page.
    let page = |query: String| {
        let client = client.clone();
        let token = token.clone();
        async move {
            let list: serde_json::Value = client
                .get(format!("{base}/v1/reviews?{query}"))
                .bearer_auth(&token)
                .send()
                .await
                .expect("list")
                .json()
                .await
                .expect("json");
            list
        }
    };
    let ids = |list: &serde_json::Value| -> Vec<String> {
        list["reviews"]
            .as_array()
            .expect("reviews")
            .iter()
            .filter_map(|r| r["id"].as_str().map(String::from))
            .collect()
    };
    let by_batch = page(format!("batch={batch_id}")).await;
    assert_eq!(ids(&by_batch), [batch_review]);
    let first = page("limit=2&status=complete".into()).await;
    assert_eq!(ids(&first), [later, batch_review], "newest first");
    let next = first["next"].as_str().expect("a next page");
    let second = page(format!("limit=2&status=complete&before={next}")).await;
    assert_eq!(ids(&second), [id], "the oldest, on the last page");
    assert!(second["next"].is_null(), "{second:#}");
    assert!(ids(&page("status=failed".into()).await).is_empty());
    let error: serde_json::Value = client
        .get(format!("{base}/v1/reviews/nope"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert!(schema_for("Error").is_valid(&error));
    let ready = client
        .get(format!("{base}/readyz"))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status(), 200);
    // The API counts what it accepted and reports the queues' depth at its reconciler's
    // next pass (every 2 s).
    let started = Instant::now();
    let metrics = loop {
        let metrics = client
            .get(format!("{base}/metrics"))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text");
        if metrics.contains("proven_pipeline_queue_depth")
            || started.elapsed() > Duration::from_secs(30)
        {
            break metrics;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Submitted reviews are counted by priority too: three in all.
    let submitted: f64 = metrics
        .lines()
        .filter(|l| l.starts_with("proven_reviews_total{status=\"submitted\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert_eq!(submitted, 3.0, "{metrics}");
    assert!(
        metrics.contains("proven_pipeline_queue_depth{queue=\""),
        "{metrics}"
    );
    // The worker ran the steps: counted by step and outcome, timed, attempts recorded.
    let worker = client
        .get(format!("http://{worker_metrics}/metrics"))
        .send()
        .await
        .expect("worker metrics")
        .text()
        .await
        .expect("text");
    // Admission and pushes run in every reconciler (the API's and the workers'): whichever
    // did them counted them.
    let both = format!("{metrics}{worker}");
    for name in [
        "proven_reviews_admitted_total",
        "proven_pipeline_jobs_pushed_total",
    ] {
        assert!(both.contains(name), "{name} in {both}");
    }
    for needle in [
        "proven_pipeline_steps_total{step=\"intake\",outcome=\"ok\"}",
        "proven_pipeline_steps_total{step=\"judge\",outcome=\"ok\"}",
        "proven_pipeline_step_duration_seconds_count{step=\"deps.file\",outcome=\"ok\"}",
        "proven_pipeline_step_attempts",
    ] {
        assert!(worker.contains(needle), "{needle} in {worker}");
    }
    // Finished jobs are vacuumed from Redis: no job data is left once every review is done.
    let redis = redis::Client::open(service.redis_url.as_str()).expect("redis url");
    let mut conn = redis
        .get_multiplexed_async_connection()
        .await
        .expect("redis connection");
    let started = Instant::now();
    loop {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}:*:data", service.prefix))
            .query_async(&mut conn)
            .await
            .expect("KEYS");
        let mut left = 0;
        for key in &keys {
            let n: i64 = redis::cmd("HLEN")
                .arg(key)
                .query_async(&mut conn)
                .await
                .expect("HLEN");
            left += n;
        }
        if left == 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{left} finished jobs still in Redis ({keys:?})"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_names_what_is_down_and_a_worker_refuses_an_unknown_family() {
    proven_models::install_crypto();
    // Nothing listens on port 1: the queue is down, the store is up.
    let service = Service::start_with(0, "redis://127.0.0.1:1", &[]).await;
    let client = reqwest::Client::new();
    let health = client
        .get(format!("{}/healthz", service.base_url))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status(), 200, "alive even when a dependency is down");
    let ready = client
        .get(format!("{}/readyz", service.base_url))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status(), 503);
    let body = ready.text().await.expect("body");
    assert!(
        body.contains("queue: Redis does not answer") && !body.contains("store:"),
        "{body}"
    );
    // Redis only delivers: a review is still accepted, and waits in the store.
    let token = service.tenant("patient");
    let (repo, base_rev) = repo_with_change("1.5.4");
    let accepted = client
        .post(format!("{}/v1/reviews", service.base_url))
        .bearer_auth(&token)
        .json(&serde_json::json!({"repository": repo.path().display().to_string(), "base": base_rev, "head": "HEAD"}))
        .send()
        .await
        .expect("post");
    assert_eq!(accepted.status(), 202);
    let id = accepted.json::<serde_json::Value>().await.expect("json")["id"]
        .as_str()
        .expect("id")
        .to_string();
    let review = service.store.store.review(&id).await.expect("stored");
    assert!(
        matches!(review.status.as_str(), "queued" | "running"),
        "{:?}",
        review.status
    );

    let out = proven(&service.store.url, &service.prefix, service.data_dir.path())
        .env("PROVEN_REDIS_URL", "redis://127.0.0.1:6379")
        .args(["worker", "--steps", "evidence,nope"])
        .output()
        .expect("run proven worker");
    assert!(!out.status.success(), "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("unknown queue family \"nope\" (known: evidence, control, model, sandbox)"),
        "{:?}",
        text(&out)
    );
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_past_its_deadline_is_judged_with_the_missing_parts_inconclusive() {
    proven_models::install_crypto();
    let mut service = Service::start(0).await;
    // Only the control family is served: the intake never runs, the judge does.
    service.start_worker_serving(&["--steps", "control"], &[]);
    let token = service.tenant("hurried");
    let (repo, base_rev) = repo_with_change("1.5.4");
    let client = reqwest::Client::new();
    let accepted: serde_json::Value = client
        .post(format!("{}/v1/reviews", service.base_url))
        .bearer_auth(&token)
        .json(
            &serde_json::json!({"repository": repo.path().display().to_string(),
                                  "base": base_rev, "head": "HEAD", "deadline_secs": 2}),
        )
        .send()
        .await
        .expect("post")
        .json()
        .await
        .expect("json");
    let id = accepted["id"].as_str().expect("id");
    let view = wait_done(
        &client,
        &service.base_url,
        &token,
        id,
        Duration::from_secs(90),
    )
    .await;
    assert_eq!(view["status"], "incomplete", "{view:#}");
    let result = &view["result"];
    assert!(
        result["not_seen"]
            .as_array()
            .is_some_and(|n| n.iter().any(|n| n["what"] == "intake"
                && n["reason"] == "inconclusive: not finished before the review's deadline")),
        "{result:#}"
    );
    assert!(
        result["failed_services"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["service"] == "intake"
                && f["message"] == "did not finish before the deadline")),
        "{result:#}"
    );
    assert_eq!(result["findings"].as_array().map(Vec::len), Some(0));
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_head_of_a_pull_request_supersedes_the_pending_review_over_http() {
    proven_models::install_crypto();
    // No worker: the first review waits, admitted, with its intake queued.
    let service = Service::start(0).await;
    let token = service.tenant("pr");
    let (repo, base_rev) = repo_with_change("1.5.4");
    let client = reqwest::Client::new();
    let post = |head: &str| {
        let body = serde_json::json!({"repository": repo.path().display().to_string(),
                                      "base": base_rev, "head": head, "pull_request": "acme/app#7"});
        client
            .post(format!("{}/v1/reviews", service.base_url))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    let first: serde_json::Value = post("HEAD~0")
        .await
        .expect("post")
        .json()
        .await
        .expect("json");
    let first_id = first["id"].as_str().expect("id").to_string();
    assert_eq!(first["superseded"], serde_json::json!([]));
    let second: serde_json::Value = post("HEAD")
        .await
        .expect("post")
        .json()
        .await
        .expect("json");
    assert_eq!(
        second["superseded"],
        serde_json::json!([first_id]),
        "{second:#}"
    );
    let view: serde_json::Value = client
        .get(format!("{}/v1/reviews/{first_id}", service.base_url))
        .bearer_auth(&token)
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(view["status"], "superseded", "{view:#}");
    // Its pending steps were cancelled before any started.
    let steps = service
        .store
        .store
        .steps_of(&first_id)
        .await
        .expect("steps");
    assert!(steps.iter().all(|s| s.state == "cancelled"), "{steps:?}");
    // Another pull request is another review: nothing superseded.
    let other: serde_json::Value = client
        .post(format!("{}/v1/reviews", service.base_url))
        .bearer_auth(&token)
        .json(
            &serde_json::json!({"repository": repo.path().display().to_string(),
                                  "base": base_rev, "head": "HEAD", "pull_request": "acme/app#8"}),
        )
        .send()
        .await
        .expect("post")
        .json()
        .await
        .expect("json");
    assert_eq!(other["superseded"], serde_json::json!([]));
    service.stop().await;
}

#[test]
fn serve_refuses_a_redis_url_that_does_not_parse_by_name() {
    let data_dir = tempfile::tempdir().expect("tempdir");
    let out = proven("", "proven-test-bad-url", data_dir.path())
        .env_remove("PROVEN_DATABASE_URL")
        .env("PROVEN_LISTEN", "127.0.0.1:0")
        .env("PROVEN_REDIS_URL", "redis://127.0.0.1:notaport")
        .arg("serve")
        .output()
        .expect("run proven serve");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert!(
        stderr.contains("PROVEN_REDIS_URL") && stderr.contains("does not parse"),
        "{stderr}"
    );
}
