//! Markovian's cases: the runner's eight (engines/markovian/conformance/runner.ts), and two it
//! misses: a run ends at `maxChunks`, and a state larger than the carryover budget is not
//! carried (the budget the Planner's bounded steps hold their state to).

use serde_json::{Value, json};

use super::{Scorecard, ensure};
use crate::serve;

fn call(op: &str, args: Value) -> Result<Value, String> {
    serve::markovian(&json!(op), &args)
}

/// A run driven to its end as the bridge drives it: each prompt to `generate` (its answer,
/// or the generator's failure), each answer back.
fn run(
    config: Value,
    reflect: bool,
    mut generate: impl FnMut(usize, &str) -> Result<String, String>,
) -> Result<(Value, Vec<String>), String> {
    let config = call("check", json!({"chunkConfig": config}))?;
    let mut run = call(
        "start",
        json!({"goal": "conformance", "chunkConfig": config, "reflect": reflect}),
    )?;
    let mut prompts = Vec::new();
    while let Some(prompt) = run["nextPrompt"].as_str().map(str::to_string) {
        prompts.push(prompt.clone());
        if prompts.len() > 64 {
            return Err("the run never ended".into());
        }
        run = match generate(prompts.len(), &prompt) {
            Ok(text) => call("answer", json!({"run": run, "text": text}))?,
            Err(e) => call("failed", json!({"run": run, "error": e}))?,
        };
    }
    Ok((run, prompts))
}

/// Answers `total` steps: each a body long enough to count, a state after a checkpoint, and
/// the last the completion marker.
fn steps(total: usize) -> impl FnMut(usize, &str) -> Result<String, String> {
    move |n, _| {
        let body = format!("Step {n} of the work, written out at some length. ").repeat(10);
        Ok(if n >= total {
            format!("{body}\n[TASK_COMPLETE]")
        } else {
            format!(
                "{body}\n[STATE_CHECKPOINT]\nCOMPLETED: steps 1-{n}\nREMAINING: {}\nDECISIONS: none\nCONTEXT: cases",
                total - n
            )
        })
    }
}

fn small() -> Value {
    json!({"chunkSize": 4000, "carryoverTokens": 640})
}

pub fn markovian() -> Scorecard {
    let mut card = Scorecard::new("markovian");
    accounting_cases(&mut card);
    run_cases(&mut card);
    card
}

/// The efficiency model, the snapshot and the labels.
fn accounting_cases(card: &mut Scorecard) {
    card.record(
        "eff-001",
        "the efficiency model's worked example: N=20 -> 86%",
        || {
            let t = call("modelTotals", json!({"n": 20}))?;
            ensure(
                t["naiveTotal"] == 246_000 && t["markovianTotal"] == 34_000,
                || format!("{t}"),
            )?;
            let e = t["efficiency"].as_f64().unwrap_or(0.0) * 100.0;
            ensure((e - 86.18).abs() < 0.5, || format!("efficiency {e}%"))
        },
    );
    card.record(
        "snap-001",
        "a run record carries its chunkConfig snapshot",
        || {
            let (r, _) = run(small(), false, steps(3))?;
            ensure(r["chunkConfig"]["carryoverTokens"] == 640, || {
                format!("{}", r["chunkConfig"])
            })
        },
    );
    card.record(
        "snap-002",
        "efficiency is computed against the run's own snapshot",
        || {
            let chunks = json!([{"tokens": 1000}, {"tokens": 1000}, {"tokens": 1000}, {"tokens": 1000}]);
            let at = |carry: u64| {
                call(
                    "runEfficiency",
                    json!({"chunks": chunks, "config": {"chunkSize": 8000, "carryoverTokens": carry}}),
                )
            };
            let (a, b) = (at(512)?, at(2048)?);
            ensure(a["standardCost"] == 10_000 && a["markovianCost"] == 6_048, || {
                format!("{a}")
            })?;
            ensure(a["tokensSaved"] != b["tokensSaved"], || {
                "two snapshots, one saving".into()
            })
        },
    );
    card.record(
        "lab-001",
        "token numbers are labelled estimated or measured",
        || {
            let (r, _) = run(small(), false, steps(2))?;
            ensure(
                r["tokenLabel"] == "estimated" || r["tokenLabel"] == "measured",
                || format!("tokenLabel {}", r["tokenLabel"]),
            )
        },
    );
}

/// Runs: overlap, reflection, markers, bounds, the cap and the carryover budget.
fn run_cases(card: &mut Scorecard) {
    card.record(
        "ovl-001",
        "overlap: an [OVERLAP] block, or overlapTokens refused",
        || {
            let config = json!({"chunkSize": 4000, "carryoverTokens": 640, "overlapTokens": 64});
            match run(config, false, steps(3)) {
                Err(e) => ensure(e.contains("overlap"), || {
                    format!("refused without naming it: {e}")
                }),
                Ok((_, prompts)) => {
                    ensure(prompts[1..].iter().any(|p| p.contains("[OVERLAP]")), || {
                        "overlapTokens accepted and ignored".into()
                    })
                }
            }
        },
    );
    card.record(
        "ref-001",
        "a reflection that fails does not fail the run",
        || {
            let (r, _) = run(small(), true, |n, _| match n {
                2 => Err("the provider failed in reflection".into()),
                _ => Ok("done in one chunk [TASK_COMPLETE]".into()),
            })?;
            ensure(r["status"] == "completed", || {
                format!("status {}", r["status"])
            })
        },
    );
    card.record(
        "mrk-001",
        "markers leave the display and drive completion",
        || {
            let (r, _) = run(small(), false, steps(3))?;
            let output = r["output"].as_str().unwrap_or_default();
            ensure(r["status"] == "completed", || {
                format!("status {}", r["status"])
            })?;
            ensure(
                !output.contains("STATE_CHECKPOINT") && !output.contains("TASK_COMPLETE"),
                || "a marker in the output".into(),
            )?;
            ensure(r["chunks"].as_array().map(Vec::len) == Some(3), || {
                "not three chunks".into()
            })
        },
    );
    card.record(
        "cfg-001",
        "a config out of bounds is refused, never clamped",
        || {
            let refused = call(
                "check",
                json!({"chunkConfig": {"chunkSize": 128, "carryoverTokens": 640}}),
            );
            ensure(refused.is_err(), || "chunkSize 128 accepted".into())
        },
    );
    card.record(
        "cap-001",
        "a run without a final marker ends at maxChunks",
        || {
            let config = json!({"chunkSize": 4000, "carryoverTokens": 640, "maxChunks": 2});
            let (r, _) = run(config, false, |n, _| {
                Ok(format!(
                    "step {n} [STATE_CHECKPOINT] COMPLETED: step {n} and more to come"
                ))
            })?;
            ensure(
                r["status"] == "max-chunks" && r["chunks"].as_array().map(Vec::len) == Some(2),
                || format!("status {} after {} chunks", r["status"], r["chunks"]),
            )
        },
    );
    card.record(
        "carry-001",
        "a state past the carryover budget is not carried; the tail within it is",
        || {
            let config = json!({"chunkSize": 4000, "carryoverTokens": 128});
            let state = "COMPLETED: a long account of the work. ".repeat(20);
            let (r, _) = run(config, false, |n, _| {
                Ok(match n {
                    1 => format!("first part of the work [STATE_CHECKPOINT] {state}"),
                    _ => "done [TASK_COMPLETE]".into(),
                })
            })?;
            let carried = r["chunks"][1]["carryover"].as_str().unwrap_or_default();
            ensure(carried == "first part of the work", || {
                format!("carried {} characters past a budget of 512", carried.len())
            })
        },
    );
}
