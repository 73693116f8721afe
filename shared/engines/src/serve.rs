//! The JSON operations each engine answers, as `proven conformance-serve` speaks them to
//! the conformance bridges (`scripts/conformance/*.ts`): one operation and its arguments in,
//! one JSON answer (or an error's text) out. No IO: the caller keeps H-MEM's state and reads
//! Scout Intent's registry. [`crate::conformance`]'s cases drive the same functions.

use serde_json::{Value, json};

use crate::hmem::{Feedback, Hmem, NewRecord};
use crate::intent::{Registry, decide};
use crate::markov::{ChunkConfig, Run, model_totals, run_efficiency};

fn js<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

pub fn text<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    args[key]
        .as_str()
        .ok_or_else(|| format!("{key} is missing or not text"))
}

/// Scout Intent's Sense stage over `registry`: `decide` answers in the shape the eval
/// harness reads (an execution contract, the candidates, the risk, the tool plan and any
/// clarification).
pub fn scout_intent(registry: &Registry, op: &Value, args: &Value) -> Result<Value, String> {
    if op.as_str() != Some("decide") {
        return Err(format!("no operation {op} in the scout-intent engine"));
    }
    let d = decide(registry, text(args, "prompt")?);
    Ok(json!({
        "executionContract": d.primary.as_ref().map(|p| json!({
            "intent": {"primary": {"id": p, "confidence": d.confidence}, "secondary": d.secondary},
            "band": d.band,
        })),
        "candidates": d.candidates,
        "risk": {"level": d.risk, "evidence": d.injection},
        "toolPlan": d.tool_plan.iter().map(|c| json!({"capability": c})).collect::<Vec<_>>(),
        "clarification": d.clarification.map(|why| json!({"trigger": why})),
    }))
}

/// H-MEM's record model over the state `h` (the caller reads and writes it around a call).
pub fn hmem(h: &mut Hmem, op: &Value, args: &Value) -> Result<Value, String> {
    let now = args["now"].as_i64().unwrap_or(0);
    Ok(match op.as_str().ok_or("op is missing")? {
        "add" => {
            let r: NewRecord = serde_json::from_value(args["record"].clone())
                .map_err(|e| format!("record: {e}"))?;
            js(&h.add(r, now)?)
        }
        "feedback" => {
            let kind: Feedback = text(args, "kind")?
                .parse()
                .map_err(|_| "kind: helpful, not_helpful or wrong".to_string())?;
            js(&h.feedback(text(args, "id")?, kind, now)?)
        }
        "get" => js(&h.get(text(args, "id")?).cloned()),
        "all" => js(&h.records),
        "supersede" => {
            h.supersede(text(args, "id")?, text(args, "by")?, now)?;
            Value::Null
        }
        "query" => {
            let found = h.query(
                text(args, "query")?,
                args["threshold"].as_f64().unwrap_or(0.35),
                args["topN"].as_u64().unwrap_or(5) as usize,
                now,
            );
            json!({"memories": found.iter().map(|(r, s)| json!({"memory": r, "score": s})).collect::<Vec<_>>()})
        }
        "sleepPreview" => {
            let (archive, promote) = h.sleep_preview(now);
            json!({"toArchive": archive, "toPromote": promote})
        }
        "sleepExecute" => {
            let list = |k: &str| -> Vec<String> {
                args["preview"][k]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            };
            let (backup, log) = h.sleep_execute(&list("toArchive"), &list("toPromote"), now);
            json!({"backupId": backup, "actionLog": log})
        }
        "conflictsScan" => json!(
            h.conflicts()
                .iter()
                .map(|(a, b)| json!({"a": a, "b": b}))
                .collect::<Vec<_>>()
        ),
        "autoResolve" => json!(h.auto_resolve(
            text(&args["conflict"], "a")?,
            text(&args["conflict"], "b")?,
            now
        )?),
        "history" => {
            let id = text(args, "id")?;
            js(&h
                .ledger
                .iter()
                .filter(|l| l.memory_id == id)
                .collect::<Vec<_>>())
        }
        "dream" => js(&h.dream()),
        "approve" => js(&h.approve(text(args, "id")?, now)?),
        other => return Err(format!("no operation {other:?} in the hmem engine")),
    })
}

/// The Markovian engine: a run goes out with each answer and comes back with the next
/// prompt; nothing is kept between calls.
pub fn markovian(op: &Value, args: &Value) -> Result<Value, String> {
    let config = |v: &Value| -> Result<ChunkConfig, String> {
        serde_json::from_value(if v.is_null() { json!({}) } else { v.clone() })
            .map_err(|e| format!("chunkConfig: {e}"))
    };
    let run = |v: &Value| -> Result<Run, String> {
        serde_json::from_value(v.clone()).map_err(|e| format!("run: {e}"))
    };
    let to_json = |r: &Run| serde_json::to_value(r).map_err(|e| e.to_string());
    match op.as_str().ok_or("op is missing")? {
        "check" => {
            serde_json::to_value(config(&args["chunkConfig"])?.check()?).map_err(|e| e.to_string())
        }
        "start" => to_json(&Run::start(
            args["goal"].as_str().unwrap_or_default(),
            config(&args["chunkConfig"])?,
            args["reflect"].as_bool().unwrap_or(true),
        )?),
        "answer" => {
            let mut r = run(&args["run"])?;
            r.answer(text(args, "text")?);
            to_json(&r)
        }
        "failed" => {
            let mut r = run(&args["run"])?;
            r.failed(args["error"].as_str().unwrap_or("the generator failed"));
            to_json(&r)
        }
        "modelTotals" => {
            let (naive, markovian, efficiency) =
                model_totals(args["n"].as_u64().ok_or("n is not a whole number")?);
            Ok(json!({"naiveTotal": naive, "markovianTotal": markovian, "efficiency": efficiency}))
        }
        "runEfficiency" => {
            let tokens: Vec<u64> = args["chunks"]
                .as_array()
                .ok_or("chunks is not a list")?
                .iter()
                .map(|c| c["tokens"].as_u64().unwrap_or(0))
                .collect();
            serde_json::to_value(run_efficiency(
                &tokens,
                config(&args["config"])?.carryover_tokens,
            ))
            .map_err(|e| e.to_string())
        }
        other => Err(format!("no operation {other:?} in the markovian engine")),
    }
}
