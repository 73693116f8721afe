//! The Planner's bounded steps as the seeds write them (the Markovian engine): the seeds'
//! four named tests and the open-claims stop, against a scripted model server (the real
//! client over HTTP), in both step units.
//!
//! The change: three files (in hunk mode the last has two hunks); the threshold is lowered
//! so it runs in steps. A risk the Planner names at a file outside the change is refused by
//! name, which keeps the reviews to the Planner (no sandbox), while the trace still shows
//! the step at which the risk was named.

use proven_change::testing::TestRepo;
use proven_models::scripted::{Reply, ScriptedServer};
use proven_store::testing::Backend;
use serde_json::{Value, json};

use crate::agents::{GENERATOR, agents, review_with};
use crate::common::{Env, json as parse, text};

fn lines(prefix: &str, value: usize) -> String {
    (0..40)
        .map(|i| format!("{prefix}_{i:03} = {value}\n"))
        .collect()
}

/// A change of big_a.py, big_b.py and big_c.py (big_c.py changed at its start and its end:
/// two hunks).
fn change() -> (TestRepo, String) {
    let repo = TestRepo::new();
    let c = |v: usize| {
        format!(
            "{}{}{}",
            lines("C_HEAD", v),
            "# middle\n".repeat(30),
            lines("C_TAIL", v)
        )
    };
    repo.write("big_a.py", lines("A", 1))
        .write("big_b.py", lines("B", 1))
        .write("big_c.py", c(1));
    let base = repo.commit("base");
    repo.write("big_a.py", lines("A", 2))
        .write("big_b.py", lines("B", 2))
        .write("big_c.py", c(2));
    repo.commit("change every constant");
    (repo, base)
}

struct Run {
    doc: Value,
    exit: Option<i32>,
    prompts: Vec<String>,
    trace: String,
}

async fn review(env: &Env, unit: &str, carry_tokens: &str, answers: Vec<Value>) -> Run {
    let (repo, base) = change();
    let server = ScriptedServer::start().await;
    crate::agents::guard_says_safe(&server);
    server.on(
        Some(GENERATOR),
        "You are the Planner",
        answers.into_iter().map(Reply::Json).collect(),
    );
    let out = review_with(
        agents(env, &server)
            .env("PROVEN_MARKOVIAN_THRESHOLD", "300")
            .env("PROVEN_MARKOVIAN_STEP_UNIT", unit)
            .env("PROVEN_MARKOVIAN_CARRY_TOKENS", carry_tokens),
        &repo,
        &base,
        "json",
    );
    let doc = parse(&out);
    let prompts = server
        .received()
        .iter()
        .filter(|r| r.model == GENERATOR && r.text().contains("You are the Planner"))
        .map(|r| r.text())
        .collect();
    let trace = text(&env.run(&["trace", doc["review_id"].as_str().expect("id")])).0;
    Run {
        exit: out.status.code(),
        doc,
        prompts,
        trace,
    }
}

fn state(established: &[String], awaiting: &[(&str, &str)], risks: Value) -> Value {
    json!({
        "risks": risks,
        "established": established,
        "suspected": [],
        "awaiting": awaiting.iter().map(|(c, e)| json!({"claim": c, "evidence": e})).collect::<Vec<_>>(),
    })
}

fn risk(claim: &str) -> Value {
    json!([{"title": "the claim met its evidence", "claim": claim, "path": "elsewhere.py", "evidence": "test"}])
}

/// Steps of a unit: file mode reads three parts, hunk mode four.
fn steps(unit: &str) -> usize {
    if unit == "hunk" { 4 } else { 3 }
}

fn failed(run: &Run) -> String {
    run.doc["failed_services"].to_string()
}

/// The seeds' TestAnOverflowingCarryStopsTheReviewByName: the carry cannot hold the open
/// claim: the review stops at that step, by name, incomplete; nothing after it is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflowing_carry_stops_the_review_by_name() {
    let env = Env::new(Backend::Sqlite).await;
    for unit in ["file", "hunk"] {
        let claim = "big_a.py's constants must match big_c.py's tail".repeat(3);
        let run = review(
            &env,
            unit,
            "20",
            vec![state(&[], &[(&claim, "big_c.py")], json!([]))],
        )
        .await;
        assert_eq!(run.exit, Some(3), "incomplete: {:#}", run.doc);
        assert_eq!(
            run.prompts.len(),
            1,
            "{unit}: nothing after the stop is read"
        );
        let failed = failed(&run);
        assert!(
            failed.contains(&format!(
                "CarryFull: the bounded review is incomplete: after step 1 of {}",
                steps(unit)
            )) && failed.contains("(0 of 1 fit within 20 estimated tokens)"),
            "{failed}"
        );
        assert!(
            run.trace.contains("\"kind\":\"bounded_steps\"") && run.trace.contains("CarryFull")
        );
    }
    env.cleanup().await;
}

/// The seeds' TestTheEarliestOpenClaimReachesItsEvidenceWhenTheBoundHoldsThem: with room,
/// the same claim is carried to the step that reads its evidence and becomes a risk there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_earliest_open_claim_reaches_its_evidence_when_the_bound_holds_them() {
    let env = Env::new(Backend::Sqlite).await;
    for unit in ["file", "hunk"] {
        let claim = "big_a.py's constants must match big_c.py's tail";
        let n = steps(unit);
        let mut answers: Vec<Value> = (1..n)
            .map(|_| {
                state(
                    &["A constants changed".into()],
                    &[(claim, "big_c.py")],
                    json!([]),
                )
            })
            .collect();
        answers.push(state(&[], &[], risk(claim)));
        let run = review(&env, unit, "800", answers).await;
        assert_eq!(run.exit, Some(0), "{unit}: {:#}", run.doc);
        assert_eq!(run.prompts.len(), n, "one prompt a step");
        for (i, p) in run.prompts.iter().enumerate().skip(1) {
            assert!(
                p.contains(claim),
                "{unit}: step {} carries the claim",
                i + 1
            );
            assert!(p.contains(&format!("<change part=\"{}\" of=\"{n}\">", i + 1)));
        }
        assert!(
            run.trace
                .lines()
                .any(|l| l.contains("\"kind\":\"risk_refused\"")
                    && l.contains("the claim met its evidence")),
            "the claim became a risk at its evidence: {}",
            run.trace
        );
        let parts: Vec<&str> = run
            .trace
            .lines()
            .filter(|l| l.contains("\"kind\":\"planner_part\""))
            .collect();
        assert_eq!(parts.len(), n);
        assert!(
            parts[0].contains(&format!("\"unit\":\"{unit}\""))
                && parts[0].contains("\"prompt_tokens\"")
        );
        assert!(run.trace.contains("\"ran\":true"));
    }
    env.cleanup().await;
}

/// The seeds' TestALongOpenClaimIsCarriedWholeToItsEvidence: a claim over the 400-byte
/// item limit, its evidence in the last part, reaches it whole; what is established beside
/// it is cut to the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_open_claim_is_carried_whole_to_its_evidence() {
    let env = Env::new(Backend::Sqlite).await;
    let claim = format!(
        "{} (settled by the last part)",
        "a long claim about the constants ".repeat(30)
    );
    assert!(claim.len() > 400);
    let established = format!("E{}", "e".repeat(1000));
    let run = review(
        &env,
        "file",
        "800",
        vec![
            state(
                std::slice::from_ref(&established),
                &[(&claim, "big_c.py")],
                json!([]),
            ),
            state(
                std::slice::from_ref(&established),
                &[(&claim, "big_c.py")],
                json!([]),
            ),
            state(&[], &[], risk(&claim)),
        ],
    )
    .await;
    assert_eq!(run.exit, Some(0), "{:#}", run.doc);
    for p in &run.prompts[1..] {
        assert!(p.contains(&claim), "the whole claim is carried");
        assert!(
            !p.contains(&established),
            "an established item is cut to its limit"
        );
        assert!(p.contains(&established[..300]));
    }
    env.cleanup().await;
}

/// The seeds' TestALongOpenClaimThatCannotBeHeldWholeStopsTheReviewBeforeAnyCut: a claim
/// the bound cannot hold whole stops the review at the step that raised it, never cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_open_claim_that_cannot_be_held_whole_stops_the_review_before_any_cut() {
    let env = Env::new(Backend::Sqlite).await;
    let claim = "x".repeat(5000);
    let run = review(
        &env,
        "file",
        "800",
        vec![
            state(&["A constants changed".into()], &[], json!([])),
            state(
                &["A constants changed".into()],
                &[(&claim, "big_c.py")],
                json!([]),
            ),
        ],
    )
    .await;
    assert_eq!(run.exit, Some(3), "{:#}", run.doc);
    assert_eq!(run.prompts.len(), 2, "stopped at the step that raised it");
    let failed = failed(&run);
    assert!(
        failed.contains("after step 2 of 3") && failed.contains("0 of 1 fit"),
        "{failed}"
    );
    assert!(!failed.contains("xxxx"), "no claim text in the stop");
    env.cleanup().await;
}

/// The seeds' TestAClaimStillOpenAfterTheLastStepStopsTheReviewByName, in both units: no
/// part is left to supply its evidence, so the review stops by name (no claim text),
/// never a silent success.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_still_open_after_the_last_step_stops_the_review_by_name() {
    let env = Env::new(Backend::Sqlite).await;
    for unit in ["file", "hunk"] {
        let n = steps(unit);
        let claim = "a-claim-that-never-meets-its-evidence";
        let answers = (0..n)
            .map(|_| {
                state(
                    &[],
                    &[(claim, "a file the change does not hold")],
                    json!([]),
                )
            })
            .collect();
        let run = review(&env, unit, "800", answers).await;
        assert_eq!(run.exit, Some(3), "{unit}: {:#}", run.doc);
        let failed = failed(&run);
        assert!(
            failed.contains(&format!(
                "OpenClaims: the bounded review is incomplete: 1 claim(s) still await evidence after the last of {n} steps"
            )),
            "{failed}"
        );
        assert!(!failed.contains(claim), "never the claim's text");
    }
    env.cleanup().await;
}

/// At or below the threshold, or switched off, the review is the one-prompt review, and the
/// trace says why bounded steps did not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn below_the_threshold_or_switched_off_one_prompt_reads_the_change() {
    let env = Env::new(Backend::Sqlite).await;
    for (var, value, why) in [
        (
            "PROVEN_MARKOVIAN_THRESHOLD",
            "100000",
            "at or below the threshold of 100000",
        ),
        (
            "PROVEN_MARKOVIAN",
            "off",
            "switched off (PROVEN_MARKOVIAN=off)",
        ),
    ] {
        let (repo, base) = change();
        let server = ScriptedServer::start().await;
        crate::agents::guard_says_safe(&server);
        server.on(
            Some(GENERATOR),
            "You are the Planner",
            vec![Reply::Json(json!({"risks": []}))],
        );
        let out = review_with(agents(&env, &server).env(var, value), &repo, &base, "json");
        let doc = parse(&out);
        assert_eq!(out.status.code(), Some(0), "{doc:#}");
        let prompts: Vec<String> = server
            .received()
            .iter()
            .filter(|r| r.text().contains("You are the Planner"))
            .map(|r| r.text())
            .collect();
        assert_eq!(prompts.len(), 1);
        assert!(!prompts[0].contains("<carry>"), "the one-prompt Planner");
        let trace = text(&env.run(&["trace", doc["review_id"].as_str().expect("id")])).0;
        assert!(
            trace
                .lines()
                .any(|l| l.contains("\"kind\":\"bounded_steps\"")
                    && l.contains("\"ran\":false")
                    && l.contains(why)),
            "{trace}"
        );
    }
    env.cleanup().await;
}

/// A change of `n` files, each changed at its start and its end (two hunks a file).
fn wide_change(n: usize) -> (TestRepo, String) {
    let repo = TestRepo::new();
    let file = |i: usize, v: usize| {
        format!(
            "{}{}{}",
            lines(&format!("M{i}_HEAD"), v),
            "# unchanged\n".repeat(30),
            lines(&format!("M{i}_TAIL"), v)
        )
    };
    for i in 0..n {
        repo.write(format!("mod_{i:02}.py"), file(i, 1));
    }
    let base = repo.commit("base");
    for i in 0..n {
        repo.write(format!("mod_{i:02}.py"), file(i, 2));
    }
    repo.commit("change every module");
    (repo, base)
}

/// One scenario's Planner calls: (calls, largest call, all calls), each call's prompt plus
/// answer in estimated tokens (characters / 4, the seeds' estimate).
async fn planner_tokens(env: &Env, n: usize, mode: &str) -> (usize, usize, usize) {
    let (repo, base) = wide_change(n);
    let server = ScriptedServer::start().await;
    crate::agents::guard_says_safe(&server);
    let established: Vec<String> = (0..3)
        .map(|i| format!("module constants are plain integers ({i}); nothing reads them at import"))
        .collect();
    let answer = if mode == "whole" {
        json!({"risks": []})
    } else {
        state(&established, &[], json!([]))
    };
    let answer_tokens = proven_review::core::bounded::tokens(&answer.to_string());
    server.on(
        Some(GENERATOR),
        "You are the Planner",
        vec![Reply::Json(answer)],
    );
    let mut cmd = agents(env, &server);
    match mode {
        "whole" => cmd.env("PROVEN_MARKOVIAN_THRESHOLD", "1000000000"),
        unit => cmd
            .env("PROVEN_MARKOVIAN_THRESHOLD", "300")
            .env("PROVEN_MARKOVIAN_STEP_UNIT", unit),
    };
    let out = review_with(&mut cmd, &repo, &base, "json");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{n} files, {mode}: {:?}",
        text(&out)
    );
    let calls: Vec<usize> = server
        .received()
        .iter()
        .filter(|r| r.model == GENERATOR && r.text().contains("You are the Planner"))
        .map(|r| proven_review::core::bounded::tokens(&r.text()) + answer_tokens)
        .collect();
    let largest = calls.iter().copied().max().unwrap_or(0);
    (calls.len(), largest, calls.iter().sum())
}

/// The seeds' token measurement (ADR-0048 point 4): Planner tokens, prompt plus answer, of
/// one review per scenario in one prompt, in file steps and in hunk steps, against a
/// scripted generator: the size of what Proven sends and receives, never a model's
/// findings. It prints the table docs/benchmarks.md quotes, and holds what the table shows:
/// the largest step stays about the same however many files the change has, where the one
/// prompt grows with the change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_measurement_of_bounded_steps() {
    let env = Env::new(Backend::Sqlite).await;
    let mut table = String::from(
        "| files | mode | Planner calls | largest call | all calls |\n|---|---|---|---|---|\n",
    );
    let mut measured = std::collections::HashMap::new();
    for n in [2, 8, 24] {
        for mode in ["whole", "file", "hunk"] {
            let (calls, largest, total) = planner_tokens(&env, n, mode).await;
            table.push_str(&format!(
                "| {n} | {mode} | {calls} | {largest} | {total} |\n"
            ));
            measured.insert((n, mode), (calls, largest, total));
        }
    }
    println!("{table}");
    let m = |n, mode| measured[&(n, mode)];
    // One prompt per review in one piece; a step per file, or per hunk (two a file).
    assert_eq!(
        (m(24, "whole").0, m(24, "file").0, m(24, "hunk").0),
        (1, 24, 48)
    );
    // The one prompt grows with the change; a step does not (only the list of changed
    // files it names grows).
    assert!(m(24, "whole").1 > 8 * m(2, "whole").1 / 2, "{table}");
    for mode in ["file", "hunk"] {
        assert!(m(24, mode).1 * 4 < m(2, mode).1 * 5, "{mode}: {table}");
        assert!(m(24, mode).1 * 5 < m(24, "whole").1, "{mode}: {table}");
    }
    env.cleanup().await;
}
