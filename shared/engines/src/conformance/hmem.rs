//! H-MEM's cases: the runner's thirteen (engines/hmem/conformance/runner.ts), with ranking
//! inputs added in the order that only the ranking can put right (the runner's `ro-001` adds
//! the fresh record first, so a ranking without the penalty still passes it).

use serde_json::{Value, json};

use super::{Scorecard, ensure};
use crate::hmem::Hmem;
use crate::serve;

const DAY_MS: i64 = 86_400_000;

fn call(h: &mut Hmem, op: &str, args: Value) -> Result<Value, String> {
    serve::hmem(h, &json!(op), &args)
}

fn add(h: &mut Hmem, record: Value, now: i64) -> Result<Value, String> {
    call(h, "add", json!({"record": record, "now": now}))
}

fn id(record: &Value) -> String {
    record["id"].as_str().unwrap_or_default().to_string()
}

/// The confidence of `id` after `kind` feedback on a record of `confidence`.
fn after(confidence: f64, kind: &str) -> Result<Value, String> {
    let mut h = Hmem::default();
    let r = add(
        &mut h,
        json!({"content": "a fact", "source": "cases", "confidence": confidence}),
        0,
    )?;
    call(&mut h, "feedback", json!({"id": id(&r), "kind": kind}))
}

fn near(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 1e-9)
}

/// The ids a query returns, in order.
fn ranked(h: &mut Hmem, query: &str) -> Result<Vec<String>, String> {
    let found = call(
        h,
        "query",
        json!({"query": query, "threshold": 0.0, "topN": 10}),
    )?;
    Ok(found["memories"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| id(&m["memory"]))
        .collect())
}

fn feedback_cases(card: &mut Scorecard) {
    card.record("rv-001", "a record with no source is refused", || {
        ensure(
            add(&mut Hmem::default(), json!({"content": "x"}), 0).is_err(),
            || "accepted".into(),
        )
    });
    card.record("rv-002", "a record with a source is accepted", || {
        add(
            &mut Hmem::default(),
            json!({"content": "x", "source": "s"}),
            0,
        )
        .map(|_| ())
    });
    card.record("fd-001", "helpful adds exactly 0.05 and one access", || {
        let r = after(0.5, "helpful")?;
        ensure(
            near(&r["confidence"], 0.55) && r["accessCount"] == 1,
            || format!("{r}"),
        )
    });
    card.record("fd-002", "not_helpful subtracts exactly 0.03", || {
        let r = after(0.5, "not_helpful")?;
        ensure(near(&r["confidence"], 0.47), || format!("{r}"))
    });
    card.record(
        "fd-003",
        "wrong subtracts exactly 0.20 and adds the review tag",
        || {
            let r = after(0.5, "wrong")?;
            ensure(
                near(&r["confidence"], 0.30) && r["tags"] == json!(["review"]),
                || format!("{r}"),
            )
        },
    );
    card.record("fd-004", "confidence clamps at 0", || {
        let r = after(0.1, "wrong")?;
        ensure(near(&r["confidence"], 0.0), || format!("{r}"))
    });
    card.record("fd-005", "confidence clamps at 1", || {
        let r = after(0.98, "helpful")?;
        ensure(near(&r["confidence"], 1.0), || format!("{r}"))
    });
}

fn ranking_cases(card: &mut Scorecard) {
    card.record(
        "ro-001",
        "a superseded record ranks below a fresh one of the same relevance, added first",
        || {
            let mut h = Hmem::default();
            let old = add(
                &mut h,
                json!({"content": "deploys run on fridays", "source": "s"}),
                0,
            )?;
            let new = add(
                &mut h,
                json!({"content": "deploys run on mondays", "source": "s"}),
                0,
            )?;
            call(&mut h, "supersede", json!({"id": id(&old), "by": id(&new)}))?;
            let order = ranked(&mut h, "when do deploys run")?;
            ensure(order == [id(&new), id(&old)], || format!("{order:?}"))
        },
    );
    card.record("ro-002", "confidence multiplies the whole score", || {
        let mut h = Hmem::default();
        let low = add(
            &mut h,
            json!({"content": "the cache is warm", "source": "s", "confidence": 0.4}),
            0,
        )?;
        let high = add(
            &mut h,
            json!({"content": "the cache is warm", "source": "s", "confidence": 0.9}),
            0,
        )?;
        let order = ranked(&mut h, "is the cache warm")?;
        ensure(order == [id(&high), id(&low)], || format!("{order:?}"))
    });
}

fn lifecycle_cases(card: &mut Scorecard) {
    card.record(
        "sg-001",
        "an old plain record archives; a dream-derived one of the same age does not",
        || {
            let mut h = Hmem::default();
            let plain = add(&mut h, json!({"content": "plain", "source": "s"}), 0)?;
            let derived = add(
                &mut h,
                json!({"content": "derived", "source": "dreaming", "derivedFrom": ["x"]}),
                0,
            )?;
            let p = call(&mut h, "sleepPreview", json!({"now": 40 * DAY_MS}))?;
            let archive = &p["toArchive"];
            ensure(
                archive == &json!([id(&plain)]) && !archive.to_string().contains(&id(&derived)),
                || format!("{p}"),
            )
        },
    );
    card.record(
        "cg-001",
        "auto-resolve supersedes the loser and deletes nothing",
        || {
            let mut h = Hmem::default();
            let a = add(
                &mut h,
                json!({"content": "always enable uploads", "source": "s", "confidence": 0.9}),
                0,
            )?;
            let b = add(
                &mut h,
                json!({"content": "never enable uploads", "source": "s", "confidence": 0.5}),
                0,
            )?;
            let conflicts = call(&mut h, "conflictsScan", json!({}))?;
            ensure(conflicts == json!([{"a": id(&a), "b": id(&b)}]), || {
                format!("{conflicts}")
            })?;
            let said = call(
                &mut h,
                "autoResolve",
                json!({"conflict": {"a": id(&a), "b": id(&b)}}),
            )?;
            let all = call(&mut h, "all", json!({}))?;
            ensure(
                said == "resolved"
                    && all.as_array().map(Vec::len) == Some(2)
                    && all[1]["supersededBy"] == json!(id(&a)),
                || format!("{said} {all}"),
            )
        },
    );
    card.record(
        "la-001",
        "create then feedback reconstructs from the ledger",
        || {
            let mut h = Hmem::default();
            let r = add(
                &mut h,
                json!({"content": "x", "source": "s", "confidence": 0.5}),
                0,
            )?;
            call(&mut h, "feedback", json!({"id": id(&r), "kind": "helpful"}))?;
            let history = call(&mut h, "history", json!({"id": id(&r)}))?;
            ensure(
                history[0]["action"] == "create"
                    && history[1]["action"] == "feedback"
                    && near(&history[1]["previousState"]["confidence"], 0.5)
                    && near(&history[1]["newState"]["confidence"], 0.55),
                || format!("{history}"),
            )
        },
    );
    card.record(
        "db-001",
        "a dream proposal is written only when approved",
        || {
            let mut h = Hmem::default();
            for p in ["tabs over spaces", "short functions"] {
                add(
                    &mut h,
                    json!({"content": p, "source": "s", "type": "preference"}),
                    0,
                )?;
            }
            let proposals = call(&mut h, "dream", json!({}))?;
            let before = call(&mut h, "all", json!({}))?;
            let pid = proposals[0]["id"].as_str().unwrap_or_default().to_string();
            let made = call(&mut h, "approve", json!({"id": pid}))?;
            ensure(
                before.as_array().map(Vec::len) == Some(2)
                    && made["layer"] == "long_term"
                    && made["derivedFrom"].as_array().map(Vec::len) == Some(2),
                || format!("{before} {made}"),
            )
        },
    );
}

pub fn hmem() -> Scorecard {
    let mut card = Scorecard::new("hmem");
    feedback_cases(&mut card);
    ranking_cases(&mut card);
    lifecycle_cases(&mut card);
    card
}
