//! `proven ask` end to end: a question about a repository the test builds, every model
//! behind the scripted server, every citation checked by Proven against the file.

use proven_change::testing::TestRepo;
use proven_models::scripted::{Reply, ScriptedServer};
use proven_store::testing::Backend;
use serde_json::json;

use crate::agents::{GENERATOR, SKEPTIC, agents, guard_says_safe};
use crate::common::{Env, json as parse, text};

const QUESTION: &str = "What is the request timeout?";
const PROBE: &str = "Where does the server use TIMEOUT?";

fn repository() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "src/config.py",
        "TIMEOUT = 30\n\n\ndef load():\n    return {\"timeout\": TIMEOUT}\n",
    )
    .write(
        "src/server.py",
        "from config import TIMEOUT\n\n\ndef serve(sock):\n    sock.settimeout(TIMEOUT)\n",
    )
    .write("requirements.txt", "flask==3.0.0\n");
    repo.commit("a server");
    repo
}

fn ask(env: &Env, server: &ScriptedServer, repo: &TestRepo, format: &str) -> std::process::Output {
    agents(env, server)
        .args([
            "ask",
            QUESTION,
            "--repo",
            &repo.path().display().to_string(),
            "--format",
            format,
        ])
        .output()
        .expect("run proven ask")
}

fn cite(path: &str, line: u32, quote: &str) -> serde_json::Value {
    json!({"path": path, "line_start": line, "line_end": line, "quote": quote})
}

/// The generator answers prompts holding `contains` with `claims`.
fn answers(server: &ScriptedServer, contains: &str, claims: serde_json::Value) {
    server.on(
        Some(GENERATOR),
        contains,
        vec![Reply::Json(json!({ "claims": claims }))],
    );
}

/// The refuter, shown a prompt holding `contains`, concedes claim 0 naming `artifact`.
fn refuter_concedes(server: &ScriptedServer, contains: &str, (artifact, showed): (&str, &str)) {
    server.on(
        Some(SKEPTIC),
        contains,
        vec![Reply::Json(json!({"verdicts": [
            {"claim": 0, "verdict": "conceded", "artifact": artifact, "showed": showed, "reason": ""}
        ]}))],
    );
}

fn auditor_answers(server: &ScriptedServer, answer: serde_json::Value) {
    server.on(
        Some(SKEPTIC),
        "You are the coverage auditor of Proven's answers",
        vec![Reply::Json(answer)],
    );
}

/// Must-show 5: a claim with a wrong line citation is refuted by Proven's check, a correct
/// one conceded naming the artifact (recorded conceded, not validated), one auditor probe
/// covered in round two, another carried into "what this run could not see". The refuter
/// never sees the question, the auditor never the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_is_checked_by_proven_and_attacked_by_both_adversaries() {
    let env = Env::new(Backend::Sqlite).await;
    let repo = repository();
    let server = ScriptedServer::start().await;
    guard_says_safe(&server);
    // Round two: the probe of src/server.py, answered citing it.
    server.on(
        Some(GENERATOR),
        PROBE,
        vec![Reply::Json(json!({"claims": [
            {"claim": "serve sets the socket timeout to TIMEOUT", "citations": [cite("src/server.py", 5, "sock.settimeout(TIMEOUT)")]}
        ]}))],
    );
    answers(
        &server,
        "You answer questions about a repository",
        json!([
                {"claim": "the timeout is 30 seconds", "citations": [cite("src/config.py", 1, "TIMEOUT = 30")]},
                {"claim": "load reads settings.toml", "citations": [cite("src/config.py", 9, "open('settings.toml')")]}
        ]),
    );
    // The refuter: round two's claim, then round one's (each rule by the claim it is shown).
    refuter_concedes(
        &server,
        "serve sets the socket timeout",
        ("src/server.py:5", "settimeout(TIMEOUT)"),
    );
    refuter_concedes(
        &server,
        "You are the refuter",
        ("src/config.py:1", "TIMEOUT = 30"),
    );
    auditor_answers(
        &server,
        json!({"verdict": "incomplete", "uncovered": [
            {"surface": "src/server.py", "probe": PROBE},
            {"surface": "the deploy pipeline's configuration", "probe": "list the deploy manifests and grep them for TIMEOUT"}
        ]}),
    );
    let out = ask(&env, &server, &repo, "json");
    let doc = parse(&out);
    assert_eq!(
        out.status.code(),
        Some(3),
        "something stays unseen: {doc:#}"
    );
    let claims = doc["claims"].as_array().expect("claims");
    assert_eq!(claims.len(), 3, "{doc:#}");
    assert_eq!(claims[0]["status"], "conceded");
    assert_eq!(claims[0]["artifact"], "src/config.py:1");
    assert_eq!(
        claims[0]["reason"],
        "conceded (not validated): TIMEOUT = 30"
    );
    assert_eq!(claims[1]["status"], "refuted");
    assert_eq!(claims[1]["by"], "proven");
    assert!(
        claims[1]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("src/config.py:9: the file has 5 lines, so these lines do not exist"),
        "{doc:#}"
    );
    assert_eq!(
        (claims[2]["round"].clone(), claims[2]["status"].clone()),
        (json!(2), json!("conceded"))
    );
    let surfaces = doc["coverage"]["surfaces"].as_array().expect("surfaces");
    assert_eq!(doc["coverage"]["verdict"], "incomplete");
    assert_eq!(surfaces[0]["status"], "covered", "{doc:#}");
    assert!(
        surfaces[0]["detail"]
            .to_string()
            .contains("src/server.py:5")
    );
    assert_eq!(surfaces[1]["status"], "could not see");
    let unseen = doc["could_not_see"].to_string();
    assert!(
        unseen.contains("the deploy pipeline's configuration: not a path of the repository")
            && unseen.contains("grep them for TIMEOUT"),
        "{doc:#}"
    );
    assert_eq!(doc["rounds"], 2);
    assert!(doc["degraded"].is_null());
    let received = server.received();
    let to = |what: &str| -> Vec<String> {
        received
            .iter()
            .filter(|r| r.text().contains(what))
            .map(|r| r.text())
            .collect()
    };
    assert!(
        to("You are the refuter")
            .iter()
            .all(|t| !t.contains(QUESTION)),
        "the refuter is given the claims and citations only"
    );
    assert!(
        to("You are the coverage auditor")
            .iter()
            .all(|t| !t.contains("the timeout is 30 seconds")),
        "the auditor is never given the answer"
    );
    assert!(
        to("You are the refuter")
            .iter()
            .all(|t| !t.contains("settings.toml")),
        "a claim Proven's check refuted is not put to the refuter"
    );
    // Text and Markdown say the same.
    let (shown, _) = text(&ask(&env, &server, &repo, "text"));
    assert!(
        shown.contains("[conceded (not validated)] the timeout is 30 seconds [src/config.py:1]"),
        "{shown}"
    );
    assert!(shown.contains("What this run could not see:"), "{shown}");
    let (md, _) = text(&ask(&env, &server, &repo, "markdown"));
    assert!(
        md.contains(
            "| load reads settings.toml | `src/config.py:9` | refuted | proven (round 1) |"
        ),
        "{md}"
    );
    env.cleanup().await;
}

/// A quote of a fragment (`load(`) shows nothing: Proven's check refutes the claim. A
/// concession naming other lines of the cited file (line 999 for a citation of line 1) names
/// nothing the refuter was shown: the claim is refuted by default, never conceded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fragment_quote_and_a_concession_naming_other_lines_count_for_nothing() {
    let env = Env::new(Backend::Sqlite).await;
    let repo = repository();
    let server = ScriptedServer::start().await;
    guard_says_safe(&server);
    answers(
        &server,
        "You answer questions about a repository",
        json!([
                {"claim": "the timeout is 30 seconds", "citations": [cite("src/config.py", 1, "TIMEOUT = 30")]},
                {"claim": "load returns the settings", "citations": [cite("src/config.py", 4, "load(")]}
        ]),
    );
    refuter_concedes(
        &server,
        "You are the refuter",
        ("src/config.py:999", "TIMEOUT = 30"),
    );
    auditor_answers(&server, json!({"verdict": "covered", "uncovered": []}));
    let doc = parse(&ask(&env, &server, &repo, "json"));
    let claims = doc["claims"].as_array().expect("claims");
    assert_eq!(claims.len(), 2, "{doc:#}");
    assert_eq!(claims[0]["status"], "refuted", "{doc:#}");
    assert!(
        claims[0]["reason"].as_str().is_some_and(|r| r
            .contains("conceded without naming an artifact it was given")
            && r.contains("src/config.py:999")),
        "{doc:#}"
    );
    assert!(claims[0]["artifact"].is_null(), "{doc:#}");
    assert_eq!(claims[1]["status"], "refuted", "{doc:#}");
    assert_eq!(claims[1]["by"], "proven");
    assert!(
        claims[1]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("neither whole lines of the range nor 12 characters")),
        "{doc:#}"
    );
    env.cleanup().await;
}

/// When every claim cites only the manifests the auditor would read, the adversaries
/// cannot be given different inputs: one reviewer runs and the answer says it degraded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adversaries_that_would_see_the_same_inputs_degrade_to_one_reviewer_visibly() {
    let env = Env::new(Backend::Sqlite).await;
    let repo = repository();
    let server = ScriptedServer::start().await;
    guard_says_safe(&server);
    answers(
        &server,
        "You answer questions about a repository",
        json!([
                {"claim": "the server runs on flask 3.0.0", "citations": [cite("requirements.txt", 1, "flask==3.0.0")]}
        ]),
    );
    refuter_concedes(
        &server,
        "You are the refuter",
        ("requirements.txt:1", "flask==3.0.0"),
    );
    let doc = parse(&ask(&env, &server, &repo, "json"));
    assert!(
        doc["degraded"]
            .as_str()
            .is_some_and(|d| d.contains("degraded to a single reviewer")),
        "{doc:#}"
    );
    assert!(doc["coverage"].is_null());
    assert!(
        !server
            .received()
            .iter()
            .any(|r| r.text().contains("You are the coverage auditor")),
        "the coverage question is visibly unasked, never asked of the same inputs"
    );
    assert!(
        doc["could_not_see"]
            .to_string()
            .contains("the auditor was not asked")
    );
    env.cleanup().await;
}

/// `POST /v1/questions`: a question is a durable job a worker of the model family answers;
/// the answer is read back by its own tenant only. A question or a repository that cannot
/// be asked is refused by name before anything is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_over_http_are_answered_by_a_model_worker_for_their_tenant_only() {
    let server = ScriptedServer::start().await;
    guard_says_safe(&server);
    answers(
        &server,
        "You answer questions about a repository",
        json!([
                {"claim": "the timeout is 30 seconds", "citations": [cite("src/config.py", 1, "TIMEOUT = 30")]}
        ]),
    );
    refuter_concedes(
        &server,
        "You are the refuter",
        ("src/config.py:1", "TIMEOUT = 30"),
    );
    auditor_answers(&server, json!({"verdict": "covered", "uncovered": []}));
    let repo = repository();
    let mut service = crate::service::Service::start(0).await;
    let url = server.base_url.clone();
    service.start_worker_serving(
        &["--steps", "model"],
        &[
            ("PROVEN_AGENTS", "on"),
            ("PROVEN_GENERATOR_BASE_URL", &url),
            ("PROVEN_SKEPTIC_BASE_URL", &url),
            ("PROVEN_GUARDRAIL_BASE_URL", &url),
            ("PROVEN_GENERATOR_MODEL", GENERATOR),
            ("PROVEN_SKEPTIC_MODEL", SKEPTIC),
            ("PROVEN_GUARDRAIL_MODEL", crate::agents::GUARD),
        ],
    );
    let (alice, bob) = (service.tenant("alice"), service.tenant("bob"));
    let client = crate::service::http();
    let base = service.base_url.clone();
    let path = repo.path().display().to_string();
    let post = |body: serde_json::Value| {
        client
            .post(format!("{base}/v1/questions"))
            .bearer_auth(&alice)
            .json(&body)
            .send()
    };
    let r = post(json!({"repository": path, "question": "  "}))
        .await
        .expect("post");
    assert_eq!(r.status(), 422);
    let r = post(json!({"repository": "/etc", "question": QUESTION}))
        .await
        .expect("post");
    assert_eq!(r.status(), 422);
    assert_eq!(
        r.json::<serde_json::Value>().await.expect("json")["error"]["code"],
        "repository_refused"
    );
    let r = post(json!({"repository": path, "question": QUESTION}))
        .await
        .expect("post");
    assert_eq!(r.status(), 202);
    let id = r.json::<serde_json::Value>().await.expect("json")["id"]
        .as_str()
        .expect("id")
        .to_string();
    let get = |token: &str| {
        client
            .get(format!("{base}/v1/questions/{id}"))
            .bearer_auth(token)
            .send()
    };
    let started = std::time::Instant::now();
    let view = loop {
        let v: serde_json::Value = get(&alice).await.expect("get").json().await.expect("json");
        if v["status"] == "done" || v["status"] == "failed" {
            break v;
        }
        assert!(started.elapsed().as_secs() < 60, "never answered: {v:#}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(view["status"], "done", "{view:#}");
    let answer = &view["answer"];
    assert_eq!(answer["claims"][0]["status"], "conceded", "{view:#}");
    assert_eq!(answer["claims"][0]["artifact"], "src/config.py:1");
    assert_eq!(answer["coverage"]["verdict"], "covered");
    assert_eq!(
        answer["repository"],
        path.as_str(),
        "the repository as asked"
    );
    assert_eq!(
        get(&bob).await.expect("get").status(),
        404,
        "another tenant's"
    );
    service.stop().await;
}
