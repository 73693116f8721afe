//! Proven as a GitHub App, end to end: signed webhook deliveries to `proven serve`, the
//! repository cloned over https from a local git server with the installation's token the
//! App minted, the review run by workers (agents behind the scripted model server, tests in
//! the Docker sandbox), and the result published to a stand-in for api.github.com that
//! checks every request against GitHub's documented shapes. Also the Action, run as a
//! workflow step would run it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use proven_change::testing::TestRepo;
use proven_models::scripted::ScriptedServer;
use proven_source::testing::GitHttpsServer;
use serde_json::{Value, json};

use crate::agents::{CONCEDE, GENERATOR, GUARD, SKEPTIC, buggy_change, script};
use crate::common::text;
use crate::github_standin::{GitHubStandIn, StandInConfig, app_key};
use crate::repository::pairs;
use crate::service::{Service, http, repo_with_change, wait_done};

const APP_ID: u64 = 31337;
const INSTALLATION: u64 = 42;
/// An installation the app was removed from.
const GONE: u64 = 43;
const TOKEN: &str = "ghs_Pr0venInstallati0nT0kenNeverStored";
const SECRET: &str = "whsec-proven-e2e";
const REPO: &str = "acme/app";
/// The organisation's numeric account id: its tenant is `github:ACME_ID`.
const ACME_ID: u64 = 9_919_000;

/// The App's world: GitHub's stand-in, the https git server that holds `acme/app` (it
/// takes only the installation's token), and the app's key.
struct Hub {
    standin: GitHubStandIn,
    git: GitHttpsServer,
    key: PathBuf,
    _dir: tempfile::TempDir,
}

impl Hub {
    async fn start(repo: &Path) -> Hub {
        let dir = tempfile::tempdir().expect("tempdir");
        let (key, public) = app_key(dir.path());
        let standin = GitHubStandIn::start(StandInConfig {
            app_id: APP_ID,
            app_public_key: public,
            installations: HashMap::from([(INSTALLATION, TOKEN.into()), (GONE, "ghs_gone".into())]),
            workflow_token: Some("ghs_workflow".into()),
            read_only_token: Some("ghs_fork".into()),
            token_ttl_secs: 3600,
        })
        .await;
        standin.uninstall(GONE);
        let git = GitHttpsServer::start(&["localhost"], Some(("x-access-token", TOKEN)));
        git.publish("app", repo);
        Hub {
            standin,
            git,
            key,
            _dir: dir,
        }
    }

    fn clone_url(&self) -> String {
        format!("https://localhost:{}/app.git", self.git.port)
    }

    /// The settings of every process: the git host allowed, no credential but the App's.
    fn env(&self, lease: &str) -> Vec<(String, String)> {
        [
            ("PROVEN_REPO_HOSTS", format!("localhost:{}", self.git.port)),
            ("PROVEN_REPO_PRIVATE_NETS", "127.0.0.0/8,::1/128".into()),
            (
                "PROVEN_REPO_CA_FILE",
                self.git.ca_file().display().to_string(),
            ),
            ("PROVEN_GITHUB_APP_ID", APP_ID.to_string()),
            ("PROVEN_GITHUB_PRIVATE_KEY", self.key.display().to_string()),
            ("PROVEN_GITHUB_WEBHOOK_SECRET", SECRET.into()),
            ("PROVEN_GITHUB_API_URL", self.standin.url.clone()),
            ("PROVEN_GITHUB_PUBLISH_LEASE_SECONDS", lease.into()),
            ("PROVEN_LOG", "debug".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// Waits until the head's check run is completed; the run.
    async fn concluded(&self, head: &str, within: Duration) -> Value {
        let started = Instant::now();
        loop {
            if let Some(run) = self
                .standin
                .check_runs()
                .into_iter()
                .find(|r| r["head_sha"] == head && r["status"] == "completed")
            {
                return run;
            }
            assert!(
                started.elapsed() < within,
                "no completed check run for {head} after {within:?}: {:#?}",
                self.standin.requests()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {:?}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// When GitHub last updated the pull request, for each event made: later for each event
/// made later, as on GitHub.
static UPDATED_AT: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(1_796_000_000);

fn pull_request_event(
    action: &str,
    installation: u64,
    number: u64,
    revisions: (&str, &str),
    clone_url: &str,
) -> Value {
    let at = UPDATED_AT.fetch_add(60, std::sync::atomic::Ordering::SeqCst);
    pull_request_event_at(action, installation, number, revisions, clone_url, at)
}

fn pull_request_event_at(
    action: &str,
    installation: u64,
    number: u64,
    (base, head): (&str, &str),
    clone_url: &str,
    updated_at: i64,
) -> Value {
    let updated_at = time::OffsetDateTime::from_unix_timestamp(updated_at)
        .expect("a time")
        .format(&time::format_description::well_known::Rfc3339)
        .expect("RFC 3339");
    json!({
        "action": action,
        "number": number,
        "installation": {"id": installation, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI="},
        "repository": {"id": 1296269, "full_name": REPO, "name": "app", "private": true,
                       "clone_url": clone_url,
                       "owner": {"login": "acme", "id": ACME_ID, "type": "Organization"}},
        "pull_request": {"number": number, "state": "open", "draft": false,
                         "updated_at": updated_at,
                         "base": {"ref": "main", "sha": base}, "head": {"ref": "feature", "sha": head}},
        "sender": {"login": "octocat"}
    })
}

/// Posts a delivery; `signature` None: signed with the app's secret.
async fn deliver(
    service: &Service,
    event: &str,
    delivery: &str,
    body: &Value,
    signature: Option<&str>,
) -> (u16, Value) {
    let bytes = serde_json::to_vec(body).expect("payload");
    let signed = proven_github::webhook::sign(SECRET.as_bytes(), &bytes);
    let mut request = http()
        .post(format!("{}/v1/github/webhook", service.base_url))
        .header("content-type", "application/json")
        .header("x-github-event", event)
        .header("x-github-delivery", delivery)
        .header("user-agent", "GitHub-Hookshot/044aadd");
    match signature {
        Some("") => {}
        Some(s) => request = request.header("x-hub-signature-256", s),
        None => request = request.header("x-hub-signature-256", signed),
    }
    let response = request.body(bytes).send().await.expect("POST webhook");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn reviews_of(service: &Service, token: &str) -> Vec<Value> {
    let list: Value = http()
        .get(format!("{}/v1/reviews", service.base_url))
        .bearer_auth(token)
        .send()
        .await
        .expect("GET reviews")
        .json()
        .await
        .expect("JSON");
    list["reviews"].as_array().cloned().unwrap_or_default()
}

fn agent_env(server: &ScriptedServer) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = ["GENERATOR", "SKEPTIC", "GUARDRAIL"]
        .iter()
        .map(|r| (format!("PROVEN_{r}_BASE_URL"), server.base_url.clone()))
        .collect();
    for (k, v) in [
        ("PROVEN_AGENTS", "on"),
        ("PROVEN_GENERATOR_MODEL", GENERATOR),
        ("PROVEN_SKEPTIC_MODEL", SKEPTIC),
        ("PROVEN_GUARDRAIL_MODEL", GUARD),
    ] {
        env.push((k.into(), v.into()));
    }
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_pull_request_is_reviewed_and_published_once_per_head() {
    let server = ScriptedServer::start().await;
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        CONCEDE(),
    );
    let (repo, base) = buggy_change();
    let head1 = git(repo.path(), &["rev-parse", "HEAD"]);
    // Two more heads of the same pull request, each keeping the bug.
    let mut heads = vec![head1.clone()];
    for n in 2..=3 {
        let calc = std::fs::read_to_string(repo.path().join("calc.py")).expect("calc.py");
        repo.write("calc.py", format!("{calc}# push {n}\n"));
        repo.commit(&format!("push {n}"));
        let head = git(repo.path(), &["rev-parse", "HEAD"]);
        git(repo.path(), &["branch", &format!("push-{n}"), &head]);
        heads.push(head);
    }
    git(repo.path(), &["branch", "push-1", &head1]);
    let hub = Hub::start(repo.path()).await;
    hub.standin.set_diff(
        REPO,
        7,
        &[
            ("calc.py", 1),
            ("calc.py", 2),
            ("calc.py", 3),
            ("calc.py", 4),
            ("calc.py", 5),
        ],
    );
    let mut env = hub.env("120");
    env.extend(agent_env(&server));
    env.push(("PROVEN_FIX_ATTEMPTS".into(), "1".into()));
    let mut service =
        Service::start_configured(0, "redis://127.0.0.1:6379", &pairs(&env), &[]).await;
    service.start_worker_serving(&["--steps", "evidence,control,model,sandbox"], &[]);
    // The installation's organisation is the tenant (made here first, to read its reviews).
    let token = service.tenant(&format!("github:{ACME_ID}"));
    let url = hub.clone_url();

    // Refused before anything is read: unsigned, wrongly signed.
    let opened = pull_request_event("opened", INSTALLATION, 7, (&base, &head1), &url);
    for (signature, code) in [(Some(""), "unsigned"), (Some("sha256=00"), "bad_signature")] {
        let (status, body) = deliver(&service, "pull_request", "d-bad", &opened, signature).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (401, Some(code)),
            "{body}"
        );
    }
    let tampered = format!("sha256={}", "ab".repeat(32));
    let (status, _) = deliver(&service, "pull_request", "d-bad", &opened, Some(&tampered)).await;
    assert_eq!(status, 401);
    assert!(
        reviews_of(&service, &token).await.is_empty(),
        "a refused delivery creates nothing"
    );

    // Signed: one review runs.
    let (status, accepted) = deliver(&service, "pull_request", "d-opened", &opened, None).await;
    assert_eq!(status, 202, "{accepted}");
    let review = accepted["review"].as_str().expect("review id").to_string();
    let view = wait_done(
        &http(),
        &service.base_url,
        &token,
        &review,
        Duration::from_secs(300),
    )
    .await;
    assert_eq!(view["status"], "complete", "{view:#}");
    let run = hub.concluded(&head1, Duration::from_secs(120)).await;
    assert_eq!(
        run["conclusion"], "failure",
        "a reproduced finding fails the check: {run:#}"
    );
    assert_eq!(run["name"], "Proven");
    let annotations = run["annotations"].as_array().expect("annotations");
    assert!(
        annotations
            .iter()
            .any(|a| a["path"] == "calc.py" && a["annotation_level"] == "failure"),
        "{annotations:#?}"
    );
    let posted = hub.standin.reviews(REPO, 7);
    assert_eq!(posted.len(), 1, "one PR review: {posted:#?}");
    assert_eq!(posted[0]["commit_id"], head1.as_str());
    let body = posted[0]["body"].as_str().unwrap_or_default();
    assert!(body.starts_with("## Proven review"), "{body}");
    assert!(
        body.contains(&format!("<!-- proven-review head={head1} -->")),
        "{body}"
    );
    let comments = posted[0]["comments"].as_array().expect("comments");
    assert_eq!(comments.len(), 1, "{comments:#?}");
    assert_eq!(
        (comments[0]["path"].as_str(), comments[0]["line"].as_u64()),
        (Some("calc.py"), Some(3))
    );
    assert!(
        comments[0]["body"]
            .as_str()
            .is_some_and(|b| b.contains("```suggestion\n    return a + b\n```")),
        "the proved fix as a suggestion on its line: {comments:#?}"
    );
    // SARIF is the publication's last call, after the check run's conclusion.
    let started = Instant::now();
    while hub.standin.sarifs().is_empty() && started.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let sarif = hub.standin.sarifs();
    assert_eq!(sarif.len(), 1, "{sarif:#?}");
    assert_eq!(sarif[0]["commit_sha"], head1.as_str());
    assert_eq!(sarif[0]["ref"], "refs/pull/7/head");

    // Redelivered, or the same body replayed under another delivery id: nothing new.
    for id in ["d-opened", "d-replayed"] {
        let (status, again) = deliver(&service, "pull_request", id, &opened, None).await;
        assert_eq!(
            (status, again["outcome"].as_str()),
            (200, Some("duplicate")),
            "{again}"
        );
    }
    assert_eq!(reviews_of(&service, &token).await.len(), 1);

    // "Re-run" on the head's check run: reviewed again, and its one review updated in place.
    let rerun = json!({
        "action": "rerequested",
        "installation": {"id": INSTALLATION},
        "repository": {"full_name": REPO, "owner": {"login": "acme"}},
        "check_run": {"id": run["id"], "head_sha": head1, "pull_requests": [{"number": 7}]}
    });
    let (status, again) = deliver(&service, "check_run", "d-rerun", &rerun, None).await;
    assert_eq!(status, 202, "{again}");
    let again = again["review"].as_str().expect("review").to_string();
    wait_done(
        &http(),
        &service.base_url,
        &token,
        &again,
        Duration::from_secs(300),
    )
    .await;
    let started = Instant::now();
    while hub
        .standin
        .check_runs()
        .iter()
        .filter(|r| r["head_sha"] == head1.as_str() && r["status"] == "completed")
        .count()
        < 2
    {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the re-run's check run"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        hub.standin.reviews(REPO, 7).len(),
        1,
        "the same head's review, updated"
    );

    // Two pushes: the second supersedes the first's pending review; only it is posted. The
    // diff GitHub now has does not hold the fixed line: the suggestion moves into the body.
    hub.standin.set_diff(REPO, 7, &[("calc.py", 5)]);
    let push2 = pull_request_event("synchronize", INSTALLATION, 7, (&base, &heads[1]), &url);
    let push3 = pull_request_event("synchronize", INSTALLATION, 7, (&base, &heads[2]), &url);
    let (_, second) = deliver(&service, "pull_request", "d-push-2", &push2, None).await;
    let (status, third) = deliver(&service, "pull_request", "d-push-3", &push3, None).await;
    assert_eq!(status, 202, "{third}");
    assert_eq!(third["superseded"], json!([second["review"]]), "{third}");
    let last = third["review"].as_str().expect("review").to_string();
    // Older than the newest head: the first head's delivery arriving late (out of order),
    // and a "Re-run" of the first head's check run. Neither supersedes the newest head.
    let late = pull_request_event_at("synchronize", INSTALLATION, 7, (&base, &head1), &url, 1);
    let mut old_rerun = rerun.clone();
    old_rerun["sender"] = json!({"login": "octocat"});
    for (event, id, body) in [
        ("pull_request", "d-late", &late),
        ("check_run", "d-rerun-old", &old_rerun),
    ] {
        let (status, answer) = deliver(&service, event, id, body, None).await;
        assert_eq!(
            (
                status,
                answer["outcome"].as_str(),
                answer["newer_head"].as_str()
            ),
            (200, Some("stale"), Some(heads[2].as_str())),
            "{id}: {answer}"
        );
    }
    wait_done(
        &http(),
        &service.base_url,
        &token,
        &last,
        Duration::from_secs(300),
    )
    .await;
    hub.concluded(&heads[2], Duration::from_secs(120)).await;
    let posted = hub.standin.reviews(REPO, 7);
    let commits: Vec<&str> = posted
        .iter()
        .filter_map(|r| r["commit_id"].as_str())
        .collect();
    assert_eq!(
        commits,
        [head1.as_str(), heads[2].as_str()],
        "nothing for the superseded head"
    );
    let placed = &posted[1];
    assert_eq!(
        placed["comments"],
        json!([]),
        "GitHub refused the line (422): {placed:#}"
    );
    assert!(
        placed["body"].as_str().is_some_and(|b| b
            .contains("Proposed fixes GitHub could not place on the diff")
            && b.contains("```suggestion\n    return a + b\n```")),
        "{placed:#}"
    );
    // The superseded head's check run, if it was started, is cancelled, never left running.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for run in hub
        .standin
        .check_runs()
        .iter()
        .filter(|r| r["head_sha"] == heads[1].as_str())
    {
        assert_eq!(run["conclusion"], "cancelled", "{run:#}");
    }

    // One installation token served every clone and publication of the test (cached), and
    // it was asked for this repository alone.
    assert_eq!(hub.standin.tokens_issued(), 1);
    let asked: Vec<Value> = hub
        .standin
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/access_tokens"))
        .map(|r| r.body)
        .collect();
    assert_eq!(asked, [json!({"repositories": ["app"]})]);
    // The token went to git and GitHub only: not to the store, a trace or a log.
    assert!(hub.git.requests().iter().any(|l| l.ends_with(" ok")));
    let trace = http()
        .get(format!("{}/v1/reviews/{review}/trace", service.base_url))
        .bearer_auth(&token)
        .send()
        .await
        .expect("trace")
        .text()
        .await
        .expect("body");
    assert!(trace.contains(&url) && !trace.contains(TOKEN), "{trace}");
    for log in ["serve.log", "workers.log"] {
        let text = std::fs::read_to_string(service.data_dir.path().join(log)).unwrap_or_default();
        assert!(!text.contains(TOKEN), "{log} holds the token");
    }
    let violations = hub.standin.violations();
    assert!(violations.is_empty(), "{violations:#?}");
    service.stop().await;
}

/// A lock file the change breaks: the review is incomplete (an input could not be read).
fn unreadable_change() -> (TestRepo, String) {
    let (repo, base) = repo_with_change("1.5.4");
    repo.write("web/package-lock.json", "{ this is not json");
    repo.commit("break the lock file");
    (repo, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_killed_after_posting_resumes_waits_out_rate_limits_and_ends_when_uninstalled() {
    let (repo, base) = unreadable_change();
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    let hub = Hub::start(repo.path()).await;
    let env = hub.env("3");
    let mut service =
        Service::start_configured(0, "redis://127.0.0.1:6379", &pairs(&env), &[]).await;
    service.start_worker(&[]);
    let token = service.tenant(&format!("github:{ACME_ID}"));
    let store = proven_store::Store::open_url(&service.store.url)
        .await
        .expect("store");

    // GitHub answers the first call with its secondary rate limit. Then the check run's
    // creation is held: the worker is killed after GitHub made the run and before the store
    // recorded it. Then the review's post, the same way.
    hub.standin.rate_limit_next(1, 2);
    let check_hold = hub.standin.hold_check_run_creates();
    let hold = hub.standin.hold_review_posts();
    let event = pull_request_event("opened", INSTALLATION, 8, (&base, &head), &hub.clone_url());
    let (status, accepted) = deliver(&service, "pull_request", "d-8", &event, None).await;
    assert_eq!(status, 202, "{accepted}");
    let review = accepted["review"].as_str().expect("review").to_string();
    tokio::time::timeout(Duration::from_secs(180), check_hold.posted())
        .await
        .expect("the check run was created");
    service.workers.clear(); // SIGKILL
    check_hold.release();
    let publication = store
        .publication(&review)
        .await
        .expect("read")
        .expect("publication");
    assert_eq!(
        publication.check_run_id, None,
        "killed before recording the check run"
    );
    service.start_worker(&[]);
    tokio::time::timeout(Duration::from_secs(180), hold.posted())
        .await
        .expect("the review was posted");
    service.workers.clear(); // SIGKILL
    hold.release();
    let publication = store
        .publication(&review)
        .await
        .expect("read")
        .expect("publication");
    assert_eq!(
        publication.comment_id, None,
        "killed before recording the post"
    );
    assert_eq!(publication.attempts, 0, "a rate limit spends no attempt");
    assert!(publication.check_run_id.is_some(), "{publication:?}");
    service.start_worker(&[]);

    let run = hub.concluded(&head, Duration::from_secs(60)).await;
    assert_eq!(
        run["conclusion"], "action_required",
        "an incomplete review: {run:#}"
    );
    let runs: Vec<Value> = hub
        .standin
        .check_runs()
        .into_iter()
        .filter(|r| r["head_sha"] == head.as_str())
        .collect();
    assert_eq!(
        runs.len(),
        1,
        "the unrecorded check run was found by its external id, not made twice: {runs:#?}"
    );
    let posted = hub.standin.reviews(REPO, 8);
    assert_eq!(
        posted.len(),
        1,
        "found by its marker and updated, not posted twice: {posted:#?}"
    );
    let first = posted[0]["body"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        first.starts_with("**Incomplete review") && first.contains("web/package-lock.json"),
        "its first line says what did not run: {first}"
    );
    let requests = hub.standin.requests();
    let limited = requests.iter().filter(|r| r.status == 403).count();
    assert_eq!(limited, 1, "{requests:#?}");
    assert!(
        requests.iter().any(
            |r| r.method == "PUT" && r.path.ends_with(&format!("/reviews/{}", posted[0]["id"]))
        ),
        "the restarted worker updated the review in place"
    );
    // Done once its last call (SARIF, after the check run's conclusion) has answered.
    let started = Instant::now();
    let done = loop {
        let p = store
            .publication(&review)
            .await
            .expect("read")
            .expect("publication");
        if p.state != proven_store::PublicationState::Pending
            || started.elapsed() > Duration::from_secs(30)
        {
            break p;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        (done.state.as_str(), done.attempts),
        ("done", 0),
        "{done:?}"
    );
    let view = wait_done(
        &http(),
        &service.base_url,
        &token,
        &review,
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(view["status"], "incomplete");

    // GitHub refusing the review (422, the same answer every time) ends the publication by
    // name, and its check run is concluded, never left in progress.
    let created = hub.standin.hold_check_run_creates();
    let event = pull_request_event("opened", INSTALLATION, 10, (&base, &head), &hub.clone_url());
    let (_, accepted) = deliver(&service, "pull_request", "d-10", &event, None).await;
    let refused = accepted["review"].as_str().expect("review").to_string();
    tokio::time::timeout(Duration::from_secs(60), created.posted())
        .await
        .expect("the check run was created");
    hub.standin.fail_next(1, 422);
    created.release();
    let started = Instant::now();
    let ended = loop {
        let p = store
            .publication(&refused)
            .await
            .expect("read")
            .expect("publication");
        if p.state != proven_store::PublicationState::Pending {
            break p;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{p:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        ended.state,
        proven_store::PublicationState::Failed,
        "{ended:?}"
    );
    assert!(
        ended.error.as_deref().is_some_and(|e| e.contains("422")),
        "{ended:?}"
    );
    let check = ended.check_run_id.expect("its check run was recorded");
    let run = hub
        .standin
        .check_runs()
        .into_iter()
        .find(|r| r["id"].as_i64() == Some(check))
        .expect("the check run");
    assert_eq!(
        (run["status"].as_str(), run["conclusion"].as_str()),
        (Some("completed"), Some("action_required")),
        "{run:#}"
    );
    assert_eq!(
        run["output"]["title"],
        "Proven could not publish this review"
    );

    // The app removed from an installation: its review cannot clone, and its publication
    // ends by name, without retrying.
    let event = pull_request_event("opened", GONE, 9, (&base, &head), &hub.clone_url());
    let (_, accepted) = deliver(&service, "pull_request", "d-9", &event, None).await;
    let gone = accepted["review"].as_str().expect("review").to_string();
    let started = Instant::now();
    let ended = loop {
        let p = store
            .publication(&gone)
            .await
            .expect("read")
            .expect("publication");
        if p.state != proven_store::PublicationState::Pending {
            break p;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{p:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        ended.state,
        proven_store::PublicationState::Failed,
        "{ended:?}"
    );
    let why = ended.error.unwrap_or_default();
    assert!(why.contains("404") && why.contains("removed"), "{why}");
    let token_calls = hub
        .standin
        .requests()
        .iter()
        .filter(|r| r.path == format!("/app/installations/{GONE}/access_tokens"))
        .count();
    assert!(
        token_calls <= 2,
        "a 404 is not retried: {token_calls} calls"
    );
    let violations = hub.standin.violations();
    assert!(violations.is_empty(), "{violations:#?}");
    service.stop().await;
}

/// The review step of `action.yml`, run as the runner runs a composite step: its `run`
/// through bash with its `env` (inputs at their defaults) and the runner's variables.
fn run_action_step(workdir: &Path, runner_env: &[(&str, String)]) -> std::process::Output {
    let action: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../action.yml"))
            .expect("action.yml"),
    )
    .expect("action.yml is YAML");
    let step = action["runs"]["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "review"))
        .expect("the review step")
        .clone();
    let inputs = &action["inputs"];
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c")
        .arg(step["run"].as_str().expect("run"))
        .current_dir(workdir);
    for (k, _) in std::env::vars() {
        if k.starts_with("PROVEN_") {
            cmd.env_remove(k);
        }
    }
    for (name, value) in step["env"].as_object().expect("env") {
        let value = value.as_str().unwrap_or_default();
        let resolved = match value.trim() {
            "${{ inputs.token }}" => "ghs_workflow".to_string(),
            v => match v
                .strip_prefix("${{ inputs.")
                .and_then(|v| v.strip_suffix(" }}"))
            {
                Some(input) => inputs[input]["default"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                None => v.to_string(),
            },
        };
        cmd.env(name, resolved);
    }
    cmd.env("PROVEN", env!("CARGO_BIN_EXE_proven"));
    for (k, v) in runner_env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the step")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_action_posts_the_same_review_and_check_as_the_app() {
    let (repo, base) = repo_with_change("1.5.4");
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    let hub = Hub::start(repo.path()).await;
    hub.standin.set_diff(REPO, 11, &[("Cargo.lock", 1)]);
    let env = crate::common::Env::new(proven_store::testing::Backend::Sqlite).await;
    crate::common::import(&env, &crate::common::advisory_files());
    let runner = tempfile::tempdir().expect("runner dir");
    let event = runner.path().join("event.json");
    std::fs::write(
        &event,
        pull_request_event(
            "opened",
            INSTALLATION,
            11,
            (&base, &head),
            "https://github.com/acme/app.git",
        )
        .to_string(),
    )
    .expect("event");
    let outputs = runner.path().join("output");
    let summary = runner.path().join("summary.md");
    let data_dir = env.data_dir.path().display().to_string();
    let runner_env = [
        ("GITHUB_ACTIONS", "true".to_string()),
        ("GITHUB_EVENT_NAME", "pull_request".into()),
        ("GITHUB_EVENT_PATH", event.display().to_string()),
        ("GITHUB_REPOSITORY", REPO.into()),
        ("GITHUB_API_URL", hub.standin.url.clone()),
        ("GITHUB_WORKSPACE", repo.path().display().to_string()),
        ("GITHUB_REF", "refs/pull/11/merge".into()),
        ("GITHUB_SHA", head.clone()),
        ("GITHUB_RUN_ID", "4242".into()),
        ("GITHUB_OUTPUT", outputs.display().to_string()),
        ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
        ("PROVEN_DATA_DIR", data_dir),
    ];
    // The pull request's author plants Proven's marker in a review of their own: it is not
    // taken for Proven's (which would leave Proven's unposted, or updating theirs).
    let planted = format!("LGTM <!-- proven-review head={head} -->");
    hub.standin.add_review_by(REPO, 11, "mallory", &planted);
    for round in 0..2 {
        let out = run_action_step(repo.path(), &runner_env);
        assert_eq!(
            out.status.code(),
            Some(1),
            "findings fail the job (fail-on: findings): {:?}",
            text(&out)
        );
        let posted = hub.standin.reviews(REPO, 11);
        assert_eq!(
            posted.len(),
            2,
            "round {round}: the planted one and Proven's, updated in place: {posted:#?}"
        );
        assert_eq!(
            posted[0]["body"],
            planted.as_str(),
            "the person's review is untouched"
        );
    }
    let run = hub.concluded(&head, Duration::from_secs(5)).await;
    assert_eq!(run["conclusion"], "failure");
    let posted = hub.standin.reviews(REPO, 11);
    let body = posted[1]["body"].as_str().unwrap_or_default();
    assert!(body.contains("RUSTSEC") || body.contains("GHSA"), "{body}");
    // Filed under the head's ref: the commit reviewed is the head, not GITHUB_REF's merge.
    assert_eq!(hub.standin.sarifs()[0]["ref"], "refs/pull/11/head");
    assert_eq!(hub.standin.sarifs()[0]["commit_sha"], head.as_str());
    let outputs = std::fs::read_to_string(&outputs).expect("GITHUB_OUTPUT");
    assert!(
        outputs.contains("status=complete") && outputs.contains("findings="),
        "{outputs}"
    );
    assert!(std::fs::read_to_string(&summary).is_ok_and(|s| s.starts_with("## Proven review")));
    // Every call carried the workflow's token, never an App's JWT.
    let requests = hub.standin.requests();
    assert!(
        requests.iter().all(|r| r
            .headers
            .get("authorization")
            .is_some_and(|a| a.ends_with("ghs_workflow"))),
        "{requests:#?}"
    );
    assert_eq!(hub.standin.tokens_issued(), 0);

    // A pull request from a fork: the workflow's token may only read. The review still
    // runs and fails the job as configured; publishing is skipped with a warning.
    let (reviews, runs) = (
        hub.standin.reviews(REPO, 11).len(),
        hub.standin.check_runs().len(),
    );
    std::fs::remove_file(&summary).expect("summary");
    let mut fork_env = runner_env.to_vec();
    fork_env.push(("GITHUB_TOKEN", "ghs_fork".into()));
    let out = run_action_step(repo.path(), &fork_env);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("::warning title=Proven could not publish::starting the check run"),
        "{stdout}"
    );
    assert_eq!(hub.standin.reviews(REPO, 11).len(), reviews);
    assert_eq!(hub.standin.check_runs().len(), runs);
    assert!(std::fs::read_to_string(&summary).is_ok_and(|s| s.starts_with("## Proven review")));
    let violations = hub.standin.violations();
    assert!(violations.is_empty(), "{violations:#?}");
}

/// The pull request of the issue's scenario (`crate::pull_request::pyyaml_branches`):
/// GitHub sends `pull_request.base.sha` as `main`'s tip, which moved on after `feature`
/// left it. The App and the Action review it from the merge base: no finding, the body
/// names the merge base, and SARIF goes up as a whole analysis.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_and_the_action_review_a_pull_request_from_its_merge_base() {
    let b = crate::pull_request::pyyaml_branches();
    let hub = Hub::start(b.repo.path()).await;
    hub.standin.set_diff(REPO, 21, &[("app.py", 5)]);
    let mut env = hub.env("120");
    // The dependency-only plan chosen by the operator: the review is complete, and clean
    // only because nothing the change did is in an advisory's range.
    env.push(("PROVEN_AGENTS".into(), "off".into()));
    let mut service =
        Service::start_configured(0, "redis://127.0.0.1:6379", &pairs(&env), &[]).await;
    let out = crate::service::proven(&service.store.url, &service.prefix, service.data_dir.path())
        .args(["db", "import"])
        .arg(crate::common::data("advisories/osv-pypi-pypa.jsonl"))
        .output()
        .expect("import");
    assert!(out.status.success(), "{:?}", text(&out));
    service.start_worker_serving(&["--steps", "evidence,control,model,sandbox"], &[]);
    let token = service.tenant(&format!("github:{ACME_ID}"));
    let opened = pull_request_event(
        "opened",
        INSTALLATION,
        21,
        (&b.main, &b.feature),
        &hub.clone_url(),
    );
    let (status, accepted) = deliver(&service, "pull_request", "d-merge-base", &opened, None).await;
    assert_eq!(status, 202, "{accepted}");
    let review = accepted["review"].as_str().expect("review id").to_string();
    let view = wait_done(
        &http(),
        &service.base_url,
        &token,
        &review,
        Duration::from_secs(120),
    )
    .await;
    assert_eq!(view["status"], "complete", "{view:#}");
    let run = hub.concluded(&b.feature, Duration::from_secs(60)).await;
    assert_eq!(run["conclusion"], "success", "{run:#}");
    let posted = hub.standin.reviews(REPO, 21);
    assert_eq!(posted.len(), 1, "{posted:#?}");
    let body = posted[0]["body"].as_str().unwrap_or_default();
    assert!(
        body.contains(&format!("`{}`", &b.fork_point[..12])) && body.contains("the merge base"),
        "the body names the merge base: {body}"
    );
    assert!(!body.contains("pyyaml"), "{body}");
    service.stop().await;

    // The Action, on the runner's checkout of the same pull request.
    let env = crate::common::Env::new(proven_store::testing::Backend::Sqlite).await;
    crate::common::import(
        &env,
        &[crate::common::data("advisories/osv-pypi-pypa.jsonl")
            .display()
            .to_string()],
    );
    let runner = tempfile::tempdir().expect("runner dir");
    let event = runner.path().join("event.json");
    std::fs::write(
        &event,
        pull_request_event(
            "synchronize",
            INSTALLATION,
            21,
            (&b.main, &b.feature),
            "https://github.com/acme/app.git",
        )
        .to_string(),
    )
    .expect("event");
    let outputs = runner.path().join("output");
    let runner_env = [
        ("GITHUB_ACTIONS", "true".to_string()),
        ("GITHUB_EVENT_NAME", "pull_request".into()),
        ("GITHUB_EVENT_PATH", event.display().to_string()),
        ("GITHUB_REPOSITORY", REPO.into()),
        ("GITHUB_API_URL", hub.standin.url.clone()),
        ("GITHUB_WORKSPACE", b.repo.path().display().to_string()),
        ("GITHUB_REF", "refs/pull/21/merge".into()),
        ("GITHUB_SHA", b.feature.clone()),
        ("GITHUB_RUN_ID", "4343".into()),
        ("GITHUB_OUTPUT", outputs.display().to_string()),
        ("PROVEN_DATA_DIR", env.data_dir.path().display().to_string()),
        ("PROVEN_AGENTS", "off".into()),
    ];
    let out = run_action_step(b.repo.path(), &runner_env);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(
            "base {} ({}, the merge base; main itself",
            &b.main,
            &b.fork_point[..12]
        )) || stdout.contains(&format!("({}, the merge base", &b.fork_point[..12])),
        "{stdout}"
    );
    let outputs = std::fs::read_to_string(&outputs).expect("GITHUB_OUTPUT");
    assert!(
        outputs.contains("status=complete") && outputs.contains("findings=0"),
        "{outputs}"
    );
    let posted = hub.standin.reviews(REPO, 21);
    let last = posted.last().expect("the Action posted");
    assert!(
        !last["body"].as_str().unwrap_or_default().contains("pyyaml"),
        "{last:#}"
    );
    let violations = hub.standin.violations();
    assert!(violations.is_empty(), "{violations:#?}");
    env.cleanup().await;
}

/// A runner's checkout is shallow (actions/checkout fetches one commit by default): the
/// Action fetches the base and head and deepens the history until their merge base is
/// there, then reviews from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_action_deepens_a_shallow_checkout_to_the_merge_base() {
    let b = crate::pull_request::pyyaml_branches();
    let hub = Hub::start(b.repo.path()).await;
    let env = crate::common::Env::new(proven_store::testing::Backend::Sqlite).await;
    crate::common::import(
        &env,
        &[crate::common::data("advisories/osv-pypi-pypa.jsonl")
            .display()
            .to_string()],
    );
    let runner = tempfile::tempdir().expect("runner dir");
    let checkout = runner.path().join("checkout");
    let out = std::process::Command::new("git")
        .args(["clone", "--quiet", "--depth", "1", "--branch", "feature"])
        .arg(format!("file://{}", b.repo.path().display()))
        .arg(&checkout)
        .output()
        .expect("git clone");
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(
        git(&checkout, &["rev-parse", "--is-shallow-repository"]),
        "true"
    );
    let event = runner.path().join("event.json");
    std::fs::write(
        &event,
        pull_request_event(
            "opened",
            INSTALLATION,
            23,
            (&b.main, &b.feature),
            "https://github.com/acme/app.git",
        )
        .to_string(),
    )
    .expect("event");
    let runner_env = [
        ("GITHUB_EVENT_PATH", event.display().to_string()),
        ("GITHUB_REPOSITORY", REPO.into()),
        ("GITHUB_API_URL", hub.standin.url.clone()),
        ("GITHUB_WORKSPACE", checkout.display().to_string()),
        ("GITHUB_RUN_ID", "4545".into()),
        ("PROVEN_DATA_DIR", env.data_dir.path().display().to_string()),
        ("PROVEN_AGENTS", "off".into()),
        ("INPUT_SARIF", "false".into()),
    ];
    let out = run_action_step(&checkout, &runner_env);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "the checkout lacked history for the merge base: fetched the base and head commits"
        ),
        "{stderr}"
    );
    assert!(
        stdout.contains(&format!(
            "({}, the merge base; main itself",
            &b.fork_point[..12]
        )) || stdout.contains(&format!("({}, the merge base", &b.fork_point[..12])),
        "{stdout}"
    );
    env.cleanup().await;
}
