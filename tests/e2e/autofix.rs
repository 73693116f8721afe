//! The one whole-change autofix attempt (ADR-0050) end to end: one prompt to the generator
//! holding every kept finding, one patch, each finding's evidence run again on a scratch
//! copy (tests in the Docker sandbox, advisory rows for the patched lock files), then the
//! suites of each language the patch touches.

use proven_change::testing::TestRepo;
use proven_models::scripted::{Reply, ScriptedServer};
use proven_store::testing::Backend;
use serde_json::json;

use crate::agents::{
    ADD_FIX, CONCEDE, GENERATOR, SKEPTIC, agents, auditor_says_covered, buggy_change, review_with,
    script, sides, suite_fails_on_the_base,
};
use crate::common::{Env, json as parse};

/// What the autofix generator is asked by.
const ASKED: &str = "You are the autofix generator";

/// A review with autofix on, in JSON.
fn autofix_review(
    env: &Env,
    server: &ScriptedServer,
    repo: &TestRepo,
    base: &str,
) -> std::process::Output {
    review_with(
        agents(env, server).env("PROVEN_AUTOFIX", "on"),
        repo,
        base,
        "json",
    )
}

/// The prompts the autofix generator received.
fn asked(server: &ScriptedServer) -> Vec<String> {
    server
        .received()
        .iter()
        .filter(|r| r.text().contains(ASKED))
        .map(|r| r.text())
        .collect()
}

/// The one attempt over a reproduced bug: a patch whose test passes (and the suite with it)
/// is "fixed automatically"; one whose test still fails is rejected naming the run. No
/// per-finding Fixer is asked while the attempt is on; nothing is committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_one_attempt_is_fixed_only_when_the_findings_test_passes_on_the_patch() {
    let env = Env::new(Backend::Sqlite).await;
    let (repo, base) = buggy_change();
    let wrong = json!({"edits": [{"path": "calc.py", "old_text": "return a - b", "new_text": "return a * b"}],
                       "explanation": "multiply"});
    for (answer, verdict) in [
        (ADD_FIX(), "fixed automatically, waiting for a person"),
        (wrong, "rejected"),
    ] {
        let server = ScriptedServer::start().await;
        server.on(Some(GENERATOR), ASKED, vec![Reply::Json(answer)]);
        script(
            &server,
            "def test_add():\n    assert add(2, 3) == 5\n",
            CONCEDE(),
        );
        let out = autofix_review(&env, &server, &repo, &base);
        let doc = parse(&out);
        assert_eq!(out.status.code(), Some(1), "{doc:#}");
        assert_eq!(asked(&server).len(), 1, "one prompt: {doc:#}");
        assert!(
            !server
                .received()
                .iter()
                .any(|r| r.text().contains("You are the Fixer")),
            "no per-finding fix while the attempt is on"
        );
        assert!(doc["findings"][0].get("patch").is_none(), "{doc:#}");
        let autofix = &doc["autofix"];
        assert_eq!(autofix["verdict"], verdict, "{doc:#}");
        let runs = sides(&autofix["runs"]);
        if verdict == "rejected" {
            assert!(autofix["fixes"].as_array().is_some_and(Vec::is_empty));
            let open = autofix["open"].to_string();
            assert!(
                open.contains("add subtracts: its test does not pass with the patch (run "),
                "{autofix:#}"
            );
            assert!(
                autofix["diff"].as_str().is_some_and(|d| !d.is_empty()),
                "a rejected patch is kept for the record: {autofix:#}"
            );
        } else {
            assert_eq!(autofix["fixes"], json!(["add subtracts"]));
            assert_eq!(autofix["edits"][0]["new_text"], "return a + b");
            let diff = autofix["diff"].as_str().expect("a diff");
            assert!(
                diff.starts_with("--- a/calc.py\n+++ b/calc.py\n@@")
                    && diff.contains("\n-    return a - b\n+    return a + b\n"),
                "{diff}"
            );
            // The finding's own test, then the python tests without the Prover's file:
            // calc.py has no other test, so that suite runs none, and runs on the base too
            // (it runs none there either: nothing the patch broke).
            assert_eq!(runs[0], ("change+autofix", "passed"), "{autofix:#}");
            assert_eq!(
                runs.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
                ["change+autofix", "change+autofix", "base"],
                "{autofix:#}"
            );
            assert!(
                std::fs::read_to_string(repo.path().join("calc.py"))
                    .is_ok_and(|t| t.contains("return a - b")),
                "nothing is committed"
            );
        }
    }
    env.cleanup().await;
}

/// The attempt holds its patch to what it breaks: the suite fails with it only where it
/// fails on the base, so the patch is "fixed automatically", the base's suite among its runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_attempt_is_held_to_what_the_patch_breaks_when_the_suite_fails_on_the_base() {
    let (repo, base) = suite_fails_on_the_base();
    let env = Env::new(Backend::Sqlite).await;
    let server = ScriptedServer::start().await;
    server.on(
        Some(GENERATOR),
        ASKED,
        vec![Reply::Json(json!({"edits": [{"path": "calc.py", "old_text": "return a * b", "new_text": "return a + b"}],
                                "explanation": "add adds, not multiplies"}))],
    );
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        CONCEDE(),
    );
    let doc = parse(&autofix_review(&env, &server, &repo, &base));
    let autofix = &doc["autofix"];
    assert_eq!(
        autofix["verdict"], "fixed automatically, waiting for a person",
        "{doc:#}"
    );
    let runs: Vec<&str> = sides(&autofix["runs"]).iter().map(|(s, _)| *s).collect();
    assert_eq!(
        runs,
        ["change+autofix", "change+autofix", "base"],
        "{autofix:#}"
    );
    // A patch that breaks a test the base passes: the suite runs once more with it (a
    // project's flaky test does not reject an attempt), fails it again, the base's suite
    // runs once more (a timing that fails most runs may fail on the unpatched tree too) and
    // passes it, and the attempt is rejected naming that test and the base's second run.
    let server = ScriptedServer::start().await;
    server.on(
        Some(GENERATOR),
        ASKED,
        vec![Reply::Json(json!({"edits": [{"path": "calc.py", "old_text": "return a * b", "new_text": "return a + b"},
                                          {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}],
                                "explanation": "both add"}))],
    );
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        CONCEDE(),
    );
    let doc = parse(&autofix_review(&env, &server, &repo, &base));
    let autofix = &doc["autofix"];
    assert_eq!(autofix["verdict"], "rejected", "{doc:#}");
    let runs: Vec<&str> = sides(&autofix["runs"]).iter().map(|(s, _)| *s).collect();
    assert_eq!(
        runs,
        [
            "change+autofix",
            "change+autofix",
            "base",
            "change+autofix",
            "base"
        ],
        "{autofix:#}"
    );
    assert!(
        autofix["open"]
            .to_string()
            .contains("again, and the base's run")
            && autofix["open"].to_string().contains(
                "1 test(s) fail with the patch that pass on the base: tests/test_sub.py::test_sub"
            ),
        "{autofix:#}"
    );
    assert!(autofix.get("flaky").is_none(), "{autofix:#}");
    env.cleanup().await;
}

/// `autofix_timeout` in the base's proven.yaml bounds each run of the attempt: the
/// finding's test, which reproduced in time, run past the bound on the patch is killed, and
/// the attempt is rejected naming it (a run that did not happen proves nothing).
/// `autofix_generator` there names the model the one prompt goes to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_past_autofix_timeout_reject_the_attempt_by_name() {
    let env = Env::new(Backend::Sqlite).await;
    let repo = TestRepo::new();
    repo.write(
        "proven.yaml",
        "autofix_timeout: 1\nautofix_generator: qwen/autofix-test\n",
    )
    .write("calc.py", "def add(a, b):\n    return a + b\n");
    let base = repo.commit("base");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.commit("change");
    let server = ScriptedServer::start().await;
    server.on(
        Some("qwen/autofix-test"),
        ASKED,
        vec![Reply::Json(ADD_FIX())],
    );
    script(
        &server,
        "import time\n\ndef test_add():\n    time.sleep(3)\n    assert add(2, 3) == 5\n",
        CONCEDE(),
    );
    let doc = parse(&autofix_review(&env, &server, &repo, &base));
    assert_eq!(doc["findings"][0]["proof_level"], "reproduced", "{doc:#}");
    let models: Vec<String> = server
        .received()
        .iter()
        .filter(|r| r.text().contains(ASKED))
        .map(|r| r.model.clone())
        .collect();
    assert_eq!(models, ["qwen/autofix-test"], "autofix_generator");
    let autofix = &doc["autofix"];
    assert_eq!(autofix["verdict"], "rejected", "{doc:#}");
    assert!(
        autofix["open"]
            .to_string()
            .contains("ran past autofix_timeout (1 s) and was killed"),
        "{autofix:#}"
    );
    env.cleanup().await;
}

/// A whole suite that outlasts `autofix_timeout` (keras's on one CPU) no longer rejects
/// every attempt by its size: once the finding's own test passes with the patch, the base's
/// test files that import what the patch edits run in its place, within the suite's
/// command, and the attempt holds; the killed suite stays on the record and every format
/// says which files alone ran. A test file the pull request plants is not one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_past_autofix_timeout_gives_way_to_the_tests_that_import_what_the_patch_edits() {
    let env = Env::new(Backend::Sqlite).await;
    let (repo, base) = crate::agents::slow_suite_change("suite_timeout: 20\nautofix_timeout: 20\n");
    let server = ScriptedServer::start().await;
    server.on(Some(GENERATOR), ASKED, vec![Reply::Json(ADD_FIX())]);
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        CONCEDE(),
    );
    let doc = parse(&autofix_review(&env, &server, &repo, &base));
    assert_eq!(doc["findings"][0]["proof_level"], "reproduced", "{doc:#}");
    let autofix = &doc["autofix"];
    assert_eq!(
        autofix["verdict"], "fixed automatically, waiting for a person",
        "{autofix:#}"
    );
    let narrowed = autofix["narrowed"].as_array().expect("narrowed suites");
    assert_eq!(narrowed.len(), 1, "{autofix:#}");
    let words = narrowed[0].as_str().unwrap_or_default();
    assert!(
        words.starts_with(
            "the python tests: the package's whole suite ran past autofix_timeout (20 s)"
        ) && words.ends_with(": tests/test_arith.py"),
        "{words}"
    );
    let runs = sides(&autofix["runs"]);
    assert_eq!(runs.len(), 3, "{autofix:#}");
    assert_eq!(runs[0], ("change+autofix", "passed"), "{autofix:#}");
    assert_eq!(runs[1].0, "change+autofix", "{autofix:#}");
    assert_ne!(runs[1].1, "passed", "the whole suite, killed: {autofix:#}");
    assert_eq!(runs[2], ("change+autofix", "passed"), "{autofix:#}");
    let id = doc["review_id"].as_str().expect("id");
    for format in ["text", "markdown", "html"] {
        let shown = crate::common::text(&env.run(&["show", id, "--format", format]))
            .0
            .replace("&#x27;", "'")
            .replace("&#x2f;", "/")
            .replace("\\\\_", "_")
            .replace("\\_", "_");
        assert!(
            shown.contains("only the 1 test file(s) that import what the patch edits ran"),
            "{format}: {shown}"
        );
    }
    env.cleanup().await;
}

const PACKAGE_BASE: &str = "{\"name\":\"timeouts\",\"version\":\"1.0.0\",\"private\":true}\n";

fn package(ms: &str) -> String {
    format!(
        "{{\"name\":\"timeouts\",\"version\":\"1.0.0\",\"private\":true,\"dependencies\":{{\"ms\":\"{ms}\"}}}}\n"
    )
}

/// npm's own integrity of each version of ms the tests pin.
fn integrity(ms: &str) -> &'static str {
    match ms {
        "2.1.2" => {
            "sha512-sGkPx+VjMtmA6MX27oA4FBFELFCZZ4S4XqeGOXCv68tT+jb3vk/RyaKWP0PTKyWtmLSM0b+adUTEvbs1PEaH2w=="
        }
        _ => {
            "sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA=="
        }
    }
}

fn lock_entry(ms: &str) -> String {
    format!(
        "    \"node_modules/ms\": {{\n      \"version\": \"{ms}\",\n      \"resolved\": \"https://registry.npmjs.org/ms/-/ms-{ms}.tgz\",\n      \"integrity\": \"{}\",\n      \"license\": \"MIT\"\n    }}\n",
        integrity(ms)
    )
}

fn lock(ms: &str) -> String {
    format!(
        "{{\n  \"name\": \"timeouts\",\n  \"version\": \"1.0.0\",\n  \"lockfileVersion\": 3,\n  \"requires\": true,\n  \"packages\": {{\n    \"\": {{\n      \"name\": \"timeouts\",\n      \"version\": \"1.0.0\",\n      \"dependencies\": {{\n        \"ms\": \"{ms}\"\n      }}\n    }},\n{}  }}\n}}\n",
        lock_entry(ms)
    )
}

/// A change with a bug in Python and a vulnerable npm package brought in beside a Node
/// test that uses it; the advisory (ms before 2.1.3) is in the store.
async fn two_language_change(env: &Env) -> (TestRepo, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let advisory = dir.path().join("ms.json");
    std::fs::write(
        &advisory,
        json!({"schema_version": "1.6.0", "id": "GHSA-prvn-test-ms00", "modified": "2026-11-01T00:00:00Z",
               "published": "2026-11-01T00:00:00Z", "summary": "ms parses some durations wrongly",
               "affected": [{"package": {"ecosystem": "npm", "name": "ms"},
                             "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "2.1.3"}]}]}]})
        .to_string(),
    )
    .expect("write");
    crate::common::import(env, &[advisory.display().to_string()]);
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
        .write("package.json", PACKAGE_BASE)
        .write(
            "test/smoke.test.js",
            "const test = require('node:test');\ntest('loads', () => {});\n",
        );
    let base = repo.commit("base");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n")
        .write("package.json", package("2.1.2"))
        .write("package-lock.json", lock("2.1.2"))
        .write(
            "test/ms.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst ms = require('ms');\n\ntest('two seconds', () => {\n  assert.strictEqual(ms('2s'), 2000);\n});\n",
        );
    repo.commit("change: a timeout library");
    (repo, base)
}

/// The coverage auditor finds the change covered and the Skeptic of the dependency findings
/// concedes, naming the lock file (the manifest makes the change deep, security class).
fn adversaries_concede_the_lock(server: &ScriptedServer) {
    auditor_says_covered(server);
    server.on(
        Some(SKEPTIC),
        "The finding says a package version",
        vec![Reply::Json(
            json!({"verdict": "conceded", "reason": "the rows show it",
                   "artifact": "package-lock.json locks ms 2.1.2"}),
        )],
    );
}

/// The patch: add fixed, and ms raised in the lock file and the manifest (versions,
/// addresses and hashes only); `lock_too: false` leaves the lock file alone.
fn whole_patch(lock_too: bool) -> serde_json::Value {
    let mut edits =
        vec![json!({"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"})];
    if lock_too {
        edits.push(json!({"path": "package-lock.json", "old_text": lock_entry("2.1.2"), "new_text": lock_entry("2.1.3")}));
        edits.push(json!({"path": "package-lock.json", "old_text": "\"ms\": \"2.1.2\"", "new_text": "\"ms\": \"2.1.3\""}));
        edits.push(json!({"path": "package.json", "old_text": "\"ms\":\"2.1.2\"", "new_text": "\"ms\":\"2.1.3\""}));
    }
    json!({"edits": edits, "explanation": "add adds; ms raised past the advisory"})
}

/// Must-show 2: autofix over a change with a reproduced bug and an advisory finding. One
/// prompt holds both; the attempt is accepted only when the test passes, the advisory no
/// longer matches the patched lock file and the suites of both touched languages (Python and
/// Node, its npm dependency installed from the patched lock) pass; it is rejected, naming
/// the advisory, when the patch leaves the lock file alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_prompt_fixes_a_bug_and_an_advisory_or_is_rejected_naming_the_advisory() {
    let env = Env::new(Backend::Sqlite).await;
    let (repo, base) = two_language_change(&env).await;
    for lock_too in [true, false] {
        let server = ScriptedServer::start().await;
        adversaries_concede_the_lock(&server);
        server.on(
            Some(GENERATOR),
            ASKED,
            vec![Reply::Json(whole_patch(lock_too))],
        );
        script(
            &server,
            "def test_add():\n    assert add(2, 3) == 5\n",
            CONCEDE(),
        );
        let doc = parse(&autofix_review(&env, &server, &repo, &base));
        let levels: Vec<&str> = doc["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter_map(|f| f["proof_level"].as_str())
            .collect();
        assert!(
            levels.contains(&"reproduced") && levels.contains(&"advisory"),
            "{doc:#}"
        );
        let prompts = asked(&server);
        assert_eq!(prompts.len(), 1, "one prompt: {doc:#}");
        assert!(
            prompts[0].contains("add subtracts") && prompts[0].contains("GHSA-prvn-test-ms00"),
            "the one prompt holds both findings: {}",
            prompts[0]
        );
        let autofix = &doc["autofix"];
        let commands = autofix["runs"].to_string();
        if lock_too {
            assert_eq!(
                autofix["verdict"], "fixed automatically, waiting for a person",
                "{autofix:#}"
            );
            let fixes = autofix["fixes"].to_string();
            assert!(
                fixes.contains("add subtracts") && fixes.contains("GHSA-prvn-test-ms00"),
                "{autofix:#}"
            );
            assert!(
                commands.contains("pytest") && commands.contains("node"),
                "the suites of both touched languages ran: {autofix:#}"
            );
            assert!(
                sides(&autofix["runs"])
                    .iter()
                    .all(|(_, o)| *o != "test_failed"),
                "{autofix:#}"
            );
        } else {
            assert_eq!(autofix["verdict"], "rejected", "{autofix:#}");
            let open = autofix["open"].to_string();
            assert!(
                open.contains("the advisory rows still match ms 2.1.2 in package-lock.json with the patch (GHSA-prvn-test-ms00)"),
                "{autofix:#}"
            );
            assert_eq!(autofix["fixes"], json!(["add subtracts"]), "{autofix:#}");
        }
    }
    env.cleanup().await;
}

/// The patch may raise a version in a dependency file a finding names, and nothing else
/// there: one that rewrites the lock file's other words is refused by name, never run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_that_edits_a_lock_file_beyond_its_versions_is_refused_by_name() {
    let env = Env::new(Backend::Sqlite).await;
    let (repo, base) = two_language_change(&env).await;
    let server = ScriptedServer::start().await;
    adversaries_concede_the_lock(&server);
    server.on(
        Some(GENERATOR),
        ASKED,
        vec![Reply::Json(json!({"edits": [
            {"path": "package-lock.json", "old_text": "\"requires\": true", "new_text": "\"requires\": false"}
        ], "explanation": "no"}))],
    );
    script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        CONCEDE(),
    );
    let doc = parse(&autofix_review(&env, &server, &repo, &base));
    let autofix = &doc["autofix"];
    assert_eq!(autofix["verdict"], "rejected", "{doc:#}");
    assert!(
        autofix["open"][0].as_str().is_some_and(|o| o.contains(
            "the patch is refused: the patch edits \"package-lock.json\" beyond its versions"
        )),
        "{autofix:#}"
    );
    assert_eq!(
        autofix["runs"].as_array().map(Vec::len),
        Some(0),
        "never run"
    );
    env.cleanup().await;
}
