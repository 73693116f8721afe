//! The seeds' setting names, each doing what the seeds say, on reviews of repositories the
//! tests build: `fixes: off`, `fix_attempts` and `scout_intent: off` in the base's
//! proven.yaml, `PROVEN_LOG_DIR`; a misspelt key stops Proven (exit 7) naming the nearest
//! known one; log lines carry no colour in a pipe.

use proven_change::testing::TestRepo;
use proven_models::scripted::ScriptedServer;
use proven_store::testing::Backend;

use crate::agents::{GENERATOR, buggy_change, review, script};
use crate::common::{Env, json as parse, text};

const ADD_TEST: &str = "def test_add():\n    assert add(2, 3) == 5\n";

fn concede() -> serde_json::Value {
    serde_json::json!({"verdict": "conceded", "reason": "the change run fails with assert -1 == 5",
                       "artifact": "tests/test_add.py: the change run fails"})
}

fn fixer_calls(server: &ScriptedServer) -> usize {
    server
        .received()
        .iter()
        .filter(|r| r.model == GENERATOR && r.text().contains("You are the Fixer"))
        .count()
}

/// `fixes: off` in the base's proven.yaml: the bug is still proved, no fix is asked for,
/// and the plan says why; `fix_attempts: 1` there gives one try.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixes_off_and_fix_attempts_in_proven_yaml_decide_the_fixer() {
    let env = Env::new(Backend::Sqlite).await;
    for (yaml, calls, left_out) in [
        ("fixes: off\n", 0, Some("fixer: switched off (fixes = off)")),
        ("fix_attempts: 1\n", 1, None),
    ] {
        let repo = TestRepo::new();
        repo.write("proven.yaml", yaml)
            .write("calc.py", "def add(a, b):\n    return a + b\n");
        let base = repo.commit("base");
        repo.write("calc.py", "def add(a, b):\n    return a - b\n");
        repo.commit("change");
        let server = ScriptedServer::start().await;
        server.on(
            Some(GENERATOR),
            "You are the Fixer",
            vec![proven_models::scripted::Reply::Json(serde_json::json!(
                {"edits": [{"path": "calc.py", "old_text": "return a - b", "new_text": "return a * b"}],
                 "explanation": "wrong on purpose"}
            ))],
        );
        script(&server, ADD_TEST, concede());
        let out = review(&env, &server, &repo, &base, "json");
        let doc = parse(&out);
        assert_eq!(doc["findings"][0]["proof_level"], "reproduced", "{doc:#}");
        assert_eq!(fixer_calls(&server), calls, "{yaml}");
        if let Some(why) = left_out {
            assert!(
                doc["plan"]["left_out"]
                    .as_array()
                    .is_some_and(|l| l.iter().any(|x| x == why)),
                "{doc:#}"
            );
            assert!(doc["findings"][0].get("fix_not_proved").is_none());
        } else {
            assert_eq!(doc["findings"][0]["fix_not_proved"]["attempts"], 1);
        }
    }
    env.cleanup().await;
}

/// `scout_intent: off`: a change of verified prose, which Scout plans with no model, runs
/// in full (the Planner reads it), and the plan line says no plan was chosen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scout_intent_off_runs_every_review_in_full() {
    let env = Env::new(Backend::Sqlite).await;
    for (yaml, planner_calls) in [("", 0), ("scout_intent: off\n", 1)] {
        let repo = TestRepo::new();
        repo.write("proven.yaml", yaml)
            .write("README.md", "# calc\n");
        let base = repo.commit("base");
        repo.write("README.md", "# calc\n\nAdds numbers.\n");
        repo.commit("docs");
        let server = ScriptedServer::start().await;
        script(&server, ADD_TEST, concede());
        let out = review(&env, &server, &repo, &base, "json");
        let doc = parse(&out);
        let planner = server
            .received()
            .iter()
            .filter(|r| r.text().contains("You are the Planner"))
            .count();
        assert_eq!(planner, planner_calls, "{yaml:?}: {doc:#}");
        let trace = text(&env.run(&["trace", doc["review_id"].as_str().expect("id")])).0;
        let plan_line = trace
            .lines()
            .find(|l| l.contains("\"kind\":\"plan\""))
            .expect("a plan line");
        let said = if yaml.is_empty() {
            "chosen by Scout Intent"
        } else {
            "no plan chosen (scout_intent is off): the review runs in full"
        };
        assert!(plan_line.contains(said), "{plan_line}");
    }
    env.cleanup().await;
}

/// `PROVEN_LOG_DIR`: the review's trace is also written there as JSON Lines, line for line
/// what `proven trace` prints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_is_also_written_to_the_log_directory() {
    let env = Env::new(Backend::Sqlite).await;
    let logs = tempfile::tempdir().expect("log dir");
    let server = ScriptedServer::start().await;
    script(&server, ADD_TEST, concede());
    let (repo, base) = buggy_change();
    let out = crate::agents::review_with(
        crate::agents::agents(&env, &server).env("PROVEN_LOG_DIR", logs.path()),
        &repo,
        &base,
        "json",
    );
    let doc = parse(&out);
    let id = doc["review_id"].as_str().expect("id");
    let stored: Vec<serde_json::Value> = text(&env.run(&["trace", id]))
        .0
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let written: Vec<serde_json::Value> = std::fs::read_to_string(logs.path().join("trace.jsonl"))
        .expect("trace.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(stored.len() > 10, "{}", stored.len());
    let key = |e: &serde_json::Value| (e["kind"].to_string(), e["event"].to_string());
    let mut a: Vec<_> = stored.iter().map(key).collect();
    let mut b: Vec<_> = written
        .iter()
        .filter(|e| e["review_id"] == id)
        .map(key)
        .collect();
    a.sort();
    b.sort();
    assert_eq!(a, b, "every stored line, and only those");
    env.cleanup().await;
}

/// A misspelt key in proven.yaml or the environment stops Proven before any work (exit 7),
/// naming the nearest known key; and log lines in a pipe carry no colour codes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misspelt_setting_names_the_nearest_known_and_logs_in_a_pipe_are_plain() {
    let env = Env::new(Backend::Sqlite).await;
    let repo = TestRepo::new();
    repo.write("proven.yaml", "fix_attempt: 1\n")
        .write("a.py", "x = 1\n");
    let base = repo.commit("base");
    repo.write("a.py", "x = 2\n");
    repo.commit("change");
    let out = env.review(repo.path(), &base, &[]);
    assert_eq!(out.status.code(), Some(7), "{:?}", text(&out));
    assert!(
        text(&out).1.contains("the nearest known is fix_attempts"),
        "{:?}",
        text(&out)
    );
    let out = env
        .proven()
        .env("PROVEN_FIX_ATTEMPT", "1")
        .args(["db", "stats"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(7));
    assert!(
        text(&out)
            .1
            .contains("the nearest known is PROVEN_FIX_ATTEMPTS")
    );
    // Trace logging (the database driver's statements) into a pipe, with no NO_COLOR to say
    // so: plain text.
    let out = env
        .proven()
        .env_remove("NO_COLOR")
        .env("PROVEN_LOG", "trace")
        .args(["db", "stats"])
        .output()
        .expect("run");
    let (_, stderr) = text(&out);
    assert!(
        stderr.contains("TRACE") || stderr.contains("DEBUG") || stderr.contains("INFO"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "colour codes in a pipe: {stderr:?}"
    );
    env.cleanup().await;
}
