//! Reviews run the engines their conformance runners drive (`proven_engines`), so a broken
//! engine rule moves both: for each engine, one rule is broken (`proven_engines::mutation`,
//! a test-only knob) and both the engine's conformance cases (`proven_engines::conformance`,
//! through the JSON operations `proven conformance-serve` answers) and the review code that
//! runs it (the Planner's bounded steps, the memory of refutations the Planner retrieves,
//! Scout's plan line) are seen to fail; mended, both pass.

use proven_config::ScoutSettings;
use proven_engines::conformance;
use proven_engines::mutation::{Rule, breaking};
use proven_review::Trace;
use proven_review::core::bounded::{Awaiting, BoundedError, Carry, bound_carry, carry_tokens};
use proven_review::core::wire::FileFacts;
use proven_review::flows::plan::scout::{PlanOptions, plan};
use proven_store::MemoryRecord;
use proven_store::testing::{Backend, TestStore};

/// What the bounded review does with a carry over its bound: (the bounded state's size, or
/// the stop by name).
fn bounded_review() -> (Result<usize, BoundedError>, Result<usize, BoundedError>) {
    let answer = Carry {
        established: (0..6)
            .map(|i| format!("e{i} {}", "z".repeat(300)))
            .collect(),
        suspected: vec!["s0".into()],
        awaiting: Vec::new(),
    };
    let open = Carry {
        awaiting: vec![Awaiting {
            claim: "b".repeat(3000),
            evidence: "y".into(),
        }],
        ..Carry::default()
    };
    (
        bound_carry(answer, 200, (1, 3)).map(|(c, _)| carry_tokens(&c)),
        bound_carry(open, 200, (2, 3)).map(|(c, _)| carry_tokens(&c)),
    )
}

#[test]
fn breaking_the_markovian_carry_budget_fails_its_conformance_and_the_bounded_review() {
    assert_eq!(conformance::markovian().failed(), Vec::<&str>::new());
    let (bounded, stopped) = bounded_review();
    assert!(bounded.is_ok_and(|t| t <= 200));
    assert!(matches!(stopped, Err(BoundedError::CarryFull { .. })));
    let _broken = breaking(Rule::MarkovCarryBudget);
    assert_eq!(conformance::markovian().failed(), ["carry-001"]);
    let (bounded, stopped) = bounded_review();
    assert!(
        bounded.is_ok_and(|t| t > 200),
        "the review's carried state passes its bound"
    );
    assert!(
        stopped.is_ok(),
        "an open claim the bound cannot hold no longer stops the review"
    );
}

fn record(id: &str, claim: &str) -> MemoryRecord {
    MemoryRecord {
        id: id.into(),
        tenant: "t".into(),
        repository: "github.com/acme/widgets".into(),
        fingerprint: format!("fp-{id}"),
        kind: "test".into(),
        path: "calc.py".into(),
        symbol: None,
        claim: claim.into(),
        refutation: "{}".into(),
        provenance: "{}".into(),
        confidence: 1.0,
        created_at: String::new(),
    }
}

/// The refutations like a claim, as the Planner retrieves them (three at most, the claim's
/// leading eight words), from a memory whose best match was written first.
async fn retrieved(t: &TestStore) -> Vec<String> {
    t.store
        .memory_similar(
            ("t", "github.com/acme/widgets"),
            "parse drops the last field of a row",
            8,
            3,
        )
        .await
        .expect("similar")
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

async fn hmem_ranking_moves_both(backend: Backend) {
    let t = TestStore::new(backend).await;
    for (id, claim) in [
        ("best", "parse drops the last field of every row"),
        ("some", "parse drops the header"),
        ("less", "a field"),
        ("least", "empty row"),
    ] {
        t.store
            .memory_write(&record(id, claim), u64::MAX)
            .await
            .expect("write");
    }
    assert_eq!(conformance::hmem().failed(), Vec::<&str>::new());
    assert_eq!(retrieved(&t).await, ["best", "some", "less"]);
    {
        let _broken = breaking(Rule::HmemBestFirst);
        assert_eq!(conformance::hmem().failed(), ["ro-001", "ro-002"]);
        assert_ne!(
            retrieved(&t).await,
            ["best", "some", "less"],
            "the review's retrieval no longer ranks best first"
        );
    }
    t.cleanup().await;
}

#[tokio::test]
async fn breaking_the_hmem_ranking_fails_its_conformance_and_the_reviews_retrieval_sqlite() {
    hmem_ranking_moves_both(Backend::Sqlite).await;
}

#[tokio::test]
async fn breaking_the_hmem_ranking_fails_its_conformance_and_the_reviews_retrieval_postgres() {
    hmem_ranking_moves_both(Backend::Postgres).await;
}

fn file(path: &str) -> FileFacts {
    FileFacts {
        path: path.into(),
        old_path: None,
        executable: false,
        shebang: Some(false),
        pure_rename: false,
        binary: false,
    }
}

/// The confidence band on the plan line Scout writes for a change half prose, half code.
fn plan_line_band() -> serde_json::Value {
    let options = PlanOptions {
        dependencies: true,
        agents: true,
        agents_off: false,
        fix_attempts: 2,
        autofix: false,
        second_reviewer: false,
        scout_intent: true,
        fixes: true,
        analyzers: [false; 4],
    };
    let mut trace = Trace::new("t".to_string());
    plan(
        &[file("docs/guide.md"), file("src/main.rs")],
        options,
        &ScoutSettings::default(),
        &mut trace,
    );
    let (kind, line) = &trace.lines()[0];
    assert_eq!(kind, "plan");
    line["confidence_band"].clone()
}

#[test]
fn breaking_the_intent_bands_fails_its_conformance_and_scouts_plan_line() {
    assert_eq!(conformance::scout_intent().failed(), Vec::<&str>::new());
    assert_eq!(plan_line_band(), "low");
    let _broken = breaking(Rule::IntentBands);
    assert_eq!(conformance::scout_intent().failed(), ["band-001"]);
    assert_eq!(
        plan_line_band(),
        "medium",
        "Scout's plan line moved with the engine"
    );
}
