//! Evidence that cannot be faked: a reproduced finding is a fact about runs, and only
//! Proven's own runs or rows can move it. `proven review` with every model behind a scripted
//! server, tests run for real in the Docker sandbox.

use std::time::Duration;

use proven_change::testing::TestRepo;
use proven_models::scripted::{Reply, ScriptedServer};
use proven_store::testing::Backend;
use serde_json::json;

use crate::agents::{GENERATOR, GUARD, IMPORT, SKEPTIC, buggy_change, review, script};
use crate::common::{Env, json as parse, text};

const CLAIM: &str = "add(2, 3) returns -1 on the change instead of 5";

/// The H-MEM record a refutation of the buggy change's risk would be stored under, if any.
async fn remembered(env: &Env, repo: &TestRepo) -> Option<proven_store::MemoryRecord> {
    let store = match env.backend {
        Backend::Sqlite => proven_store::Store::open_sqlite(&env.data_dir.path().join("proven.db"))
            .await
            .expect("open the review's store"),
        Backend::Postgres => proven_store::Store::open_url(&env.store.url)
            .await
            .expect("open the review's store"),
    };
    let fingerprint = proven_review::core::wire::fingerprint("test", "calc.py", Some("add"), CLAIM);
    let identity = proven_review::pipeline::memory_identity(&repo.path().display().to_string());
    store
        .memory_lookup("", &identity, &fingerprint)
        .await
        .expect("memory lookup")
}

/// Every step the review ran belongs to an entry of its plan line: the plan names what
/// runs, and nothing runs outside it.
pub(crate) async fn assert_plan_holds(env: &Env, doc: &serde_json::Value) {
    let store = match env.backend {
        Backend::Sqlite => proven_store::Store::open_sqlite(&env.data_dir.path().join("proven.db"))
            .await
            .expect("open the review's store"),
        Backend::Postgres => proven_store::Store::open_url(&env.store.url)
            .await
            .expect("open the review's store"),
    };
    let review_id = doc["review_id"].as_str().expect("review id");
    let runs: Vec<&str> = doc["plan"]["runs"]
        .as_array()
        .expect("plan runs")
        .iter()
        .filter_map(|r| r.as_str())
        .collect();
    let steps = store.steps_of(review_id).await.expect("steps");
    assert!(!steps.is_empty());
    for step in steps {
        let entry = proven_review::flows::plan::scout::plan_entry(&step.id.step)
            .unwrap_or_else(|| panic!("step {} has no plan entry", step.id.step));
        assert!(
            runs.contains(&entry),
            "step {} ran, but the plan line does not list {entry:?}: {runs:?}",
            step.id.step
        );
    }
}

fn provers_asked(server: &ScriptedServer) -> usize {
    server
        .received()
        .iter()
        .filter(|r| r.model == GENERATOR && r.text().contains("You are the Prover"))
        .count()
}

/// A vacuous test of the Skeptic's own, an argument, a concession that names nothing it
/// was shown: none of them moves a reproduced finding. It stays, nothing goes to H-MEM, and
/// the next review of the same change raises it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skeptic_without_evidence_never_drops_a_reproduced_finding_nor_silences_it() {
    let server = ScriptedServer::start().await;
    let vacuous = json!({"verdict": "refuted", "reason": "my own test passes on the change",
        "test": {"path": "tests/test_skeptic.py", "code": "def test_nothing():\n    pass\n"}});
    let argument = json!({"verdict": "refuted", "reason": "the author clearly meant to subtract"});
    let named_nothing =
        json!({"verdict": "conceded", "reason": "seems right", "artifact": "I checked the code"});
    server.on(
        Some(SKEPTIC),
        "You are the Skeptic",
        vec![
            Reply::Json(vacuous),
            Reply::Json(argument),
            Reply::Json(named_nothing),
        ],
    );
    // After the Skeptic's replies above: earlier rules win.
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        json!({}),
    );
    let env = Env::new(Backend::Sqlite).await;
    let (repo, base) = buggy_change();
    for (i, verdict) in [
        "refuted_without_evidence",
        "refuted_without_evidence",
        "unresolved",
    ]
    .into_iter()
    .enumerate()
    {
        let out = review(&env, &server, &repo, &base, "json");
        let doc = parse(&out);
        assert_eq!(out.status.code(), Some(1), "review {i}: {doc:#}");
        assert_eq!(doc["status"], "complete", "{doc:#}");
        let findings = doc["findings"].as_array().expect("findings");
        assert_eq!(findings.len(), 1, "review {i} keeps the finding: {doc:#}");
        assert_eq!(findings[0]["proof_level"], "reproduced");
        assert_eq!(findings[0]["skeptic"]["verdict"], verdict, "review {i}");
        assert_plan_holds(&env, &doc).await;
        assert_eq!(
            provers_asked(&server),
            i + 1,
            "each review proves the risk again: nothing remembered silences it"
        );
        assert!(
            remembered(&env, &repo).await.is_none(),
            "review {i}: a refutation without evidence is never written to H-MEM"
        );
        let trace = text(&env.run(&["trace", doc["review_id"].as_str().expect("id")])).0;
        assert!(
            !trace.lines().any(|l| l.contains("\"kind\":\"memory\"")),
            "{trace}"
        );
        assert!(
            !trace
                .lines()
                .any(|l| l.contains("\"step\":\"sandbox.refute\"")),
            "no check runs for a refutation outside the closed list"
        );
    }
    env.cleanup().await;
}

/// The order Python iterates a set of strings in, under a hash seed (the image's Python is
/// the host's: the same order).
fn set_order(seed: u64, words: &[&str]) -> Vec<String> {
    let literal = words
        .iter()
        .map(|w| format!("{w:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let out = std::process::Command::new("python3")
        .args(["-c", &format!("print('\\n'.join({{{literal}}}))")])
        .env("PYTHONHASHSEED", seed.to_string())
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect()
}

/// `flaky` is checked by Proven's reruns with other seeds: rejected for a deterministic
/// test (kept, "refuted without evidence"); accepted for a test whose outcome depends on
/// the hash seed, which is then dropped and remembered, so the next review does not raise
/// it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flaky_refutation_is_checked_by_reruns_with_other_seeds() {
    let flaky = json!({"verdict": "refuted", "refutation": "flaky",
                       "reason": "this kind of test is flaky"});
    // 1. A deterministic test: the reruns agree, the refutation is rejected.
    let server = ScriptedServer::start().await;
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        flaky.clone(),
    );
    let env = Env::new(Backend::Sqlite).await;
    let (repo, base) = buggy_change();
    let doc = parse(&review(&env, &server, &repo, &base, "json"));
    let f = &doc["findings"][0];
    assert_eq!(f["proof_level"], "reproduced", "{doc:#}");
    assert_eq!(
        f["skeptic"]["verdict"], "refuted_without_evidence",
        "{doc:#}"
    );
    assert_eq!(f["skeptic"]["refutation"], "flaky");
    assert!(
        f["skeptic"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("not flaky")),
        "{f:#}"
    );
    assert!(remembered(&env, &repo).await.is_none());
    env.cleanup().await;

    // 2. A test that holds only under hash seed 0 (the proof's seed): the reruns with seeds
    //    1-3 disagree on the base, the refutation stands, and H-MEM remembers it.
    let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"];
    let at_zero = set_order(0, &words);
    assert!(
        (1..=3).any(|seed| set_order(seed, &words) != at_zero),
        "some rerun seed orders the set differently"
    );
    let literal = words
        .iter()
        .map(|w| format!("{w:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let seed_bound = format!(
        "def test_add():\n    assert list({{{literal}}}) == {at_zero:?}\n    assert add(2, 3) == 5\n"
    );
    let server = ScriptedServer::start().await;
    script(&server, &seed_bound, flaky.clone());
    let env = Env::new(Backend::Sqlite).await;
    let doc = parse(&review(&env, &server, &repo, &base, "json"));
    assert_eq!(doc["findings"].as_array().map(Vec::len), Some(0), "{doc:#}");
    let unproven = doc["unproven"].to_string();
    assert!(
        unproven.contains("the test is flaky") && unproven.contains("not the claim, is remembered"),
        "the first review drops the flaky test's finding and says why: {unproven}"
    );
    assert_plan_holds(&env, &doc).await;
    // The test is remembered, not the claim.
    assert!(
        remembered(&env, &repo).await.is_none(),
        "a flaky test never silences its claim"
    );
    let record = remembered_test(&env, &repo, &doc)
        .await
        .expect("the flaky test is remembered");
    assert_eq!(
        record.kind,
        proven_review::core::wire::FLAKY_TEST,
        "{record:?}"
    );
    assert!(record.refutation.contains("runs"), "{record:?}");

    // 2b. The same claim again, the Prover writing the same flaky test and a Skeptic that
    //     concedes this time: the claim is raised again (not silenced), and that test, which
    //     reproduces under the proof's seed, is still never evidence again.
    let server = ScriptedServer::start().await;
    script(&server, &seed_bound, crate::agents::CONCEDE());
    let again = parse(&review(&env, &server, &repo, &base, "json"));
    assert_eq!(
        provers_asked(&server),
        1,
        "the claim is raised and a test written again"
    );
    assert_eq!(
        again["findings"].as_array().map(Vec::len),
        Some(0),
        "{again:#}"
    );
    assert!(
        again["unproven"]
            .to_string()
            .contains("never evidence again"),
        "{:#}",
        again["unproven"]
    );

    // 2c. A deterministic test for the same claim: the bug is reproduced, as on a later
    //     commit that reintroduces it.
    let server = ScriptedServer::start().await;
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        crate::agents::CONCEDE(),
    );
    let fixed = parse(&review(&env, &server, &repo, &base, "json"));
    assert_eq!(
        fixed["findings"][0]["proof_level"], "reproduced",
        "a deterministic test of the same claim proves it: {fixed:#}"
    );
    env.cleanup().await;
}

/// The flaky test the first review's Prover wrote, as H-MEM remembers it (by its file's
/// path and text, read back from the review's trace).
async fn remembered_test(
    env: &Env,
    repo: &TestRepo,
    doc: &serde_json::Value,
) -> Option<proven_store::MemoryRecord> {
    let store = proven_store::Store::open_sqlite(&env.data_dir.path().join("proven.db"))
        .await
        .expect("open the review's store");
    let review_id = doc["review_id"].as_str().expect("id");
    let steps = store.steps_of(review_id).await.expect("steps");
    let job: proven_review::core::wire::ProveJob = steps
        .iter()
        .filter(|s| s.id.step == "prover")
        .find_map(|s| {
            s.result
                .as_deref()
                .and_then(|r| serde_json::from_str(r).ok())
        })
        .expect("the Prover's job");
    let identity = proven_review::pipeline::memory_identity(&repo.path().display().to_string());
    store
        .memory_lookup(
            "",
            &identity,
            &proven_review::core::wire::test_fingerprint(&job.test),
        )
        .await
        .expect("memory lookup")
}

/// `wrong_cause` and `intended` each turn a finding into unproven with the run that showed
/// it; a `wrong_cause` that names the real cause is rejected by the same run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_cause_and_intended_are_settled_by_proven_runs() {
    // The change breaks add (calc.py) and also edits helpers.py; the claim blames helpers.py.
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
        .write("helpers.py", "GREETING = 'hello'\n");
    let base = repo.commit("base");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n")
        .write("helpers.py", "GREETING = 'hi'\n");
    repo.commit("change");
    let planner = |path: &str| {
        json!({"risks": [{"title": "add subtracts", "claim": CLAIM, "path": path,
                          "symbol": "add", "evidence": "test"}]})
    };
    let wrong_cause = |file: &str| {
        json!({"verdict": "refuted", "refutation": "wrong_cause", "file": file,
               "reason": "the failure comes from elsewhere"})
    };
    for (blamed, skeptic_file, expected) in [
        ("helpers.py", "helpers.py", "unproven"),
        ("calc.py", "calc.py", "kept"),
    ] {
        let server = ScriptedServer::start().await;
        server.on(
            Some(GENERATOR),
            "You are the Planner",
            vec![Reply::Json(planner(blamed))],
        );
        script(
            &server,
            "def test_add():\n    assert add(2, 3) == 5\n",
            wrong_cause(skeptic_file),
        );
        let env = Env::new(Backend::Sqlite).await;
        let doc = parse(&review(&env, &server, &repo, &base, "json"));
        match expected {
            "unproven" => {
                assert_eq!(doc["findings"].as_array().map(Vec::len), Some(0), "{doc:#}");
                let u = doc["unproven"]
                    .as_array()
                    .and_then(|u| u.iter().find(|u| u["claim"] == CLAIM))
                    .expect("the claim is unproven");
                let reason = u["reason"].as_str().unwrap_or_default();
                assert!(
                    reason.contains("wrong cause") && reason.contains("helpers.py restored"),
                    "{reason}"
                );
                let runs = u["runs"].as_array().expect("the runs that showed it");
                assert_eq!(runs.len(), 2);
                for r in runs {
                    assert_eq!(r["outcome"], "test_failed", "{r:#}");
                    assert!(
                        reason.contains(r["run_id"].as_str().expect("run id")),
                        "{reason}"
                    );
                }
            }
            _ => {
                let f = &doc["findings"][0];
                assert_eq!(f["proof_level"], "reproduced", "{doc:#}");
                assert_eq!(f["skeptic"]["verdict"], "refuted_without_evidence");
                assert!(
                    f["skeptic"]["reason"]
                        .as_str()
                        .is_some_and(|r| r.contains("calc.py is the cause")),
                    "{f:#}"
                );
            }
        }
        assert!(
            remembered(&env, &repo).await.is_none(),
            "unproven is not remembered"
        );
        env.cleanup().await;
    }

    // `intended`: the change's own edited test asserts the new behaviour.
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
        .write(
            "tests/test_calc.py",
            format!("{IMPORT}def test_add_sums():\n    assert add(2, 3) == 5\n"),
        );
    let base = repo.commit("base");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n")
        .write(
            "tests/test_calc.py",
            format!("{IMPORT}def test_add_is_a_difference():\n    assert add(2, 3) == -1\n"),
        );
    repo.commit("change: add is a difference now, on purpose");
    let server = ScriptedServer::start().await;
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        json!({"verdict": "refuted", "refutation": "intended",
               "reason": "the change's own test asserts the difference"}),
    );
    let env = Env::new(Backend::Sqlite).await;
    let doc = parse(&review(&env, &server, &repo, &base, "json"));
    assert_eq!(doc["findings"].as_array().map(Vec::len), Some(0), "{doc:#}");
    let u = doc["unproven"]
        .as_array()
        .and_then(|u| u.iter().find(|u| u["claim"] == CLAIM))
        .expect("the claim is unproven");
    let reason = u["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("intended, shown by tests/test_calc.py"),
        "{reason}"
    );
    let outcomes: Vec<&str> = u["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["outcome"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(outcomes, ["test_failed", "passed"], "{u:#}");
    env.cleanup().await;
}

/// An OSV record of a made-up PyPI package, affected below 2.0.0; `withdrawn` when given.
fn advisory(withdrawn: Option<&str>) -> String {
    let mut record = json!({
        "schema_version": "1.6.0",
        "id": "PYSEC-9999-1",
        "modified": if withdrawn.is_some() { "2026-12-01T00:00:00Z" } else { "2026-11-01T00:00:00Z" },
        "published": "2026-11-01T00:00:00Z",
        "summary": "proven-demo-widget mishandles input",
        "affected": [{
            "package": {"ecosystem": "PyPI", "name": "proven-demo-widget"},
            "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.0.0"}]}]
        }]
    });
    if let Some(at) = withdrawn {
        record["withdrawn"] = at.into();
    }
    record.to_string()
}

/// A dependency finding faces the Skeptic too, with the query kind: its query's rows, not
/// its words, decide. The advisory withdrawn while the review runs refutes the finding;
/// the same query against an advisory that stands refutes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_advisory_refutes_an_advisory_finding() {
    // The third case: H-MEM's cap (PROVEN_HMEM_MAX_STATE_BYTES) is too small for the
    // refutation: the finding is still dropped (the rows refuted it), the memory of it is
    // not written, and the review names the failed service.
    for (withdraw, cap) in [(true, None), (false, None), (true, Some("64"))] {
        let env = Env::new(Backend::Sqlite).await;
        let files = tempfile::tempdir().expect("tempdir");
        let standing = files.path().join("standing.json");
        let withdrawn = files.path().join("withdrawn.json");
        std::fs::write(&standing, advisory(None)).expect("write");
        std::fs::write(&withdrawn, advisory(Some("2026-12-01T00:00:00Z"))).expect("write");
        crate::common::import(&env, &[standing.display().to_string()]);
        let repo = TestRepo::new();
        repo.write("requirements.txt", "six==1.16.0\n");
        let base = repo.commit("base");
        repo.write(
            "requirements.txt",
            "six==1.16.0\nproven-demo-widget==1.0.0\n",
        );
        repo.commit("change: a widget");

        let server = ScriptedServer::start().await;
        crate::agents::guard_says_safe(&server);
        // A manifest is security under the default path rules: the review is deep.
        crate::agents::auditor_says_covered(&server);
        server.on(
            Some(GENERATOR),
            "You are the Planner",
            vec![Reply::Json(json!({"risks": []}))],
        );
        server.on(
            Some(SKEPTIC),
            "The finding says a package version",
            vec![Reply::JsonAfter(
                Duration::from_secs(6),
                json!({"verdict": "refuted", "reason": "the advisory was withdrawn",
                       "query": {"template": "advisory_by_id", "values": {"id": "PYSEC-9999-1"}}}),
            )],
        );
        let mut command = crate::agents::agents(&env, &server);
        if let Some(cap) = cap {
            command.env("PROVEN_HMEM_MAX_STATE_BYTES", cap);
        }
        let child = command
            .args([
                "review",
                "--repo",
                &repo.path().display().to_string(),
                "--base",
                &base,
            ])
            .args(["--format", "json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start proven review");
        if withdraw {
            // While the Skeptic thinks, the advisory is withdrawn upstream and synced.
            let started = std::time::Instant::now();
            while !server
                .received()
                .iter()
                .any(|r| r.text().contains("The finding says a package version"))
            {
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "the Skeptic was never asked"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            crate::common::import(&env, &[withdrawn.display().to_string()]);
        }
        let out = child.wait_with_output().expect("review");
        let doc = parse(&out);
        assert_plan_holds(&env, &doc).await;
        if withdraw && cap.is_some() {
            assert_eq!(doc["findings"].as_array().map(Vec::len), Some(0), "{doc:#}");
            let failed = doc["failed_services"].to_string();
            assert!(
                failed.contains("\"hmem\"") && failed.contains("PROVEN_HMEM_MAX_STATE_BYTES"),
                "{failed}"
            );
            assert_eq!(out.status.code(), Some(3), "incomplete, by name: {doc:#}");
        } else if withdraw {
            assert_eq!(out.status.code(), Some(0), "{doc:#}");
            assert_eq!(doc["findings"].as_array().map(Vec::len), Some(0), "{doc:#}");
            let unproven = doc["unproven"].to_string();
            assert!(
                unproven.contains("PYSEC-9999-1 is withdrawn") && unproven.contains("remembered"),
                "{unproven}"
            );
        } else {
            assert_eq!(out.status.code(), Some(1), "{doc:#}");
            let f = &doc["findings"][0];
            assert_eq!(f["advisory"]["id"], "PYSEC-9999-1", "{doc:#}");
            assert_eq!(f["skeptic"]["verdict"], "refuted_without_evidence", "{f:#}");
            assert!(
                f["skeptic"]["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("stored and not withdrawn")),
                "{f:#}"
            );
        }
        env.cleanup().await;
    }
}

/// H-MEM is per tenant: in the service, tenant A's evidenced refutation (Proven's reruns
/// showed the test flaky) is remembered for A only; tenant B's review of the same
/// repository proves the same risk afresh and keeps its finding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_refutation_never_silences_another_tenants_finding() {
    use crate::service::{Service, http, wait_done};
    let server = ScriptedServer::start().await;
    let concede = json!({"verdict": "conceded", "reason": "it fails on the change",
                         "artifact": "tests/test_add.py"});
    server.on(
        Some(SKEPTIC),
        "You are the Skeptic",
        vec![
            Reply::Json(json!({"verdict": "refuted", "refutation": "flaky", "reason": "chance"})),
            Reply::Json(concede),
        ],
    );
    // A test that holds only under the proof's hash seed: Proven's reruns show it flaky.
    let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"];
    let literal = words
        .iter()
        .map(|w| format!("{w:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let seed_bound = format!(
        "def test_add():\n    assert list({{{literal}}}) == {:?}\n    assert add(2, 3) == 5\n",
        set_order(0, &words)
    );
    script(&server, &seed_bound, json!({}));
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
    let mut service = Service::start_with(1, "redis://127.0.0.1:6379", &env).await;
    service.start_worker_serving(&["--steps", "sandbox"], &env);
    let (repo, base) = buggy_change();
    let client = http();
    let mut results = Vec::new();
    for tenant in ["acme", "globex"] {
        let token = service.tenant(tenant);
        let created: serde_json::Value = client
            .post(format!("{}/v1/reviews", service.base_url))
            .bearer_auth(&token)
            .json(&json!({"repository": repo.path().display().to_string(),
                          "base": base, "head": "HEAD"}))
            .send()
            .await
            .expect("POST review")
            .json()
            .await
            .expect("JSON");
        let id = created["id"].as_str().expect("review id").to_string();
        let view = wait_done(
            &client,
            &service.base_url,
            &token,
            &id,
            Duration::from_secs(240),
        )
        .await;
        results.push(view["result"].clone());
    }
    let (a, b) = (&results[0], &results[1]);
    assert_eq!(a["findings"].as_array().map(Vec::len), Some(0), "{a:#}");
    assert!(a["unproven"].to_string().contains("remembered"), "{a:#}");
    let findings = b["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "tenant B's finding stands: {b:#}");
    assert_eq!(findings[0]["proof_level"], "reproduced");
    assert_eq!(findings[0]["skeptic"]["verdict"], "conceded");
    assert_eq!(
        provers_asked(&server),
        2,
        "tenant B's review proved the risk itself: A's memory is not B's"
    );
    service.stop().await;
}
