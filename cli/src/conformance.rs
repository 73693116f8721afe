//! `proven conformance-serve`: Meterless's conformance runners (TypeScript, run unmodified)
//! drive Proven's own engines through a small bridge (`scripts/conformance/*.ts`). Each
//! request is one JSON line on standard input (`{"op": …, "args": {…}}`), answered by one
//! JSON line (`{"ok": …}` or `{"error": "…"}`); an engine's state lives in the `--state`
//! directory between calls, so the bridge can start one process per call and wait for it
//! (the runners call some methods synchronously).
//!
//! The Markovian, H-MEM and Scout Intent engines are `proven_engines`' (their JSON operations
//! are `proven_engines::serve`; the Markovian run travels with each call). Reviews run the
//! same engines (the Planner's bounded steps, the memory of refutations, Scout), and
//! `proven_engines::conformance` holds cases that follow these runners and run with the
//! project's tests.
//!
//! The World Model is the store's (`proven_store::world`, SQLite here): its stable ids and
//! merge bands, entities with provenance, edge chains under the bitemporal rule, the audit,
//! and the canonical snapshot. Its `ingest` maps an observation onto those writes: the
//! observation an entity keyed by its source and id, each entity it names a name-keyed
//! entity, and one `mentions` edge from the observation to each.

use std::io::BufRead;
use std::path::Path;

use proven_store::world_ids::{entity_id_from_name, merge_band, normalize_name};
use proven_store::{Related, Store, WorldEdge, WorldEntity};
use serde_json::{Value, json};

use crate::exit::Exit;

/// Reads requests until standard input ends; an engine this build does not have is refused
/// by name.
pub async fn serve(engine: &str, state: &Path) -> Result<u8, Exit> {
    let store = match engine {
        "world-model" => {
            std::fs::create_dir_all(state)
                .map_err(|e| Exit::input(format!("--state {}: {e}", state.display())))?;
            Some(
                Store::open_sqlite(&state.join("world.db"))
                    .await
                    .map_err(|e| Exit::store(e.to_string()))?,
            )
        }
        "markovian" | "hmem" | "scout-intent" => None,
        other => {
            return Err(Exit::usage(format!(
                "--engine {other:?}: this build serves world-model, markovian, hmem and scout-intent"
            )));
        }
    };
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| Exit::input(format!("standard input: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Value>(&line) {
            Ok(request) => {
                let (op, args) = (&request["op"], &request["args"]);
                let answer = match (&store, engine) {
                    (Some(store), _) => world(store, op, args).await,
                    (None, "hmem") => hmem(state, op, args),
                    (None, "scout-intent") => scout_intent(op, args),
                    (None, _) => proven_engines::serve::markovian(op, args),
                };
                match answer {
                    Ok(ok) => json!({"ok": ok}),
                    Err(e) => json!({"error": e}),
                }
            }
            Err(e) => json!({"error": format!("a request is not JSON: {e}")}),
        };
        println!("{reply}");
    }
    if let Some(store) = store {
        store.close().await;
    }
    Ok(0)
}

/// Scout Intent's Sense stage (`proven_engines::serve::scout_intent`) over the registry file
/// the request names.
fn scout_intent(op: &Value, args: &Value) -> Result<Value, String> {
    use proven_engines::intent::Registry;
    let path = text(args, "intentRegistry")?;
    let registry: Registry =
        serde_json::from_slice(&std::fs::read(path).map_err(|e| format!("{path}: {e}"))?)
            .map_err(|e| format!("{path}: {e}"))?;
    let registry = registry.check().map_err(|e| format!("{path}: {e}"))?;
    proven_engines::serve::scout_intent(&registry, op, args)
}

/// H-MEM's record model (`proven_engines::serve::hmem`), its state read from and written back
/// to `hmem.json` in the state directory around each call.
fn hmem(state: &Path, op: &Value, args: &Value) -> Result<Value, String> {
    use proven_engines::hmem::Hmem;
    let file = state.join("hmem.json");
    let mut h: Hmem = match std::fs::read(&file) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", file.display()))?
        }
        Err(_) => Hmem::default(),
    };
    let answer = proven_engines::serve::hmem(&mut h, op, args)?;
    std::fs::write(&file, serde_json::to_vec(&h).map_err(|e| e.to_string())?)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(answer)
}

fn text<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    args[key]
        .as_str()
        .ok_or_else(|| format!("{key} is missing or not text"))
}

/// Microseconds since the epoch of an RFC 3339 time.
fn micros(at: &str) -> Result<i64, String> {
    let t = time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
        .map_err(|e| format!("{at:?} is not an RFC 3339 time: {e}"))?;
    i64::try_from(t.unix_timestamp_nanos() / 1000).map_err(|_| format!("{at:?} is out of range"))
}

/// The write's provenance as the store keeps it (its JSON); a write without one is refused.
fn provenance(args: &Value) -> Result<String, String> {
    match &args["source"] {
        Value::Null => Err("a write without provenance (no source) is refused".into()),
        source => Ok(source.to_string()),
    }
}

/// An entity's id: `TYPE:SYSTEM:ID` for an externally keyed one, else name-keyed.
fn entity_id(args: &Value) -> Result<(String, String), String> {
    let kind = text(args, "type")?;
    if let (Some(system), Some(id)) = (
        args["externalKey"]["system"].as_str(),
        args["externalKey"]["id"].as_str(),
    ) {
        return Ok((format!("{kind}:{system}:{id}"), id.to_string()));
    }
    let name = text(args, "name")?;
    Ok((entity_id_from_name(kind, name), name.to_string()))
}

async fn upsert(store: &Store, tenant: &str, args: &Value) -> Result<(String, bool), String> {
    let source = provenance(args)?;
    let (id, name) = entity_id(args)?;
    let attrs = if args["attrs"].is_null() {
        json!({})
    } else {
        args["attrs"].clone()
    };
    let changed = store
        .world_upsert_entity(&WorldEntity {
            tenant: tenant.to_string(),
            id: id.clone(),
            kind: text(args, "type")?.to_string(),
            name,
            attrs: attrs.to_string(),
            source,
        })
        .await
        .map_err(|e| e.to_string())?;
    Ok((id, changed))
}

async fn relate(store: &Store, tenant: &str, args: &Value) -> Result<Related, String> {
    let source = provenance(args)?;
    let from = match args["validFrom"].as_str().or(args["source"]["at"].as_str()) {
        Some(at) => micros(at)?,
        None => return Err("an edge needs validFrom (or a source time)".into()),
    };
    let to = args["validTo"].as_str().map(micros).transpose()?;
    store
        .world_relate(&WorldEdge {
            tenant: tenant.to_string(),
            from: text(args, "from")?.to_string(),
            kind: text(args, "type")?.to_string(),
            context: args["context"].as_str().unwrap_or_default().to_string(),
            to: text(args, "to")?.to_string(),
            valid_from: from,
            valid_to: to,
            source,
        })
        .await
        .map_err(|e| e.to_string())
}

/// Each observation as an entity of its source, each entity it names as a name-keyed one,
/// and an edge from the observation to each: true when anything changed.
async fn ingest(store: &Store, tenant: &str, args: &Value) -> Result<bool, String> {
    let mut changed = false;
    for o in args["observations"].as_array().into_iter().flatten() {
        let source = &o["source"];
        let observation = json!({
            "type": "observation",
            "externalKey": {"system": source["kind"], "id": o["externalId"]},
            "attrs": {"title": o["title"], "at": o["at"]},
            "source": source,
        });
        let (id, wrote) = upsert(store, tenant, &observation).await?;
        changed |= wrote;
        for e in o["entities"].as_array().into_iter().flatten() {
            let entity = json!({"type": e["type"], "name": e["name"], "source": source});
            let (to, wrote) = upsert(store, tenant, &entity).await?;
            changed |= wrote;
            let edge = json!({"from": id, "type": "mentions", "to": to, "context": to,
                              "validFrom": o["at"], "source": source});
            changed |= matches!(relate(store, tenant, &edge).await?, Related::Written { .. });
        }
    }
    Ok(changed)
}

async fn world(store: &Store, op: &Value, args: &Value) -> Result<Value, String> {
    let tenant = args["namespace"].as_str().unwrap_or("conformance");
    let op = op.as_str().ok_or("op is missing")?;
    Ok(match op {
        "normalizeName" => json!(normalize_name(text(args, "name")?)),
        "entityIdFromName" => json!(entity_id_from_name(
            text(args, "type")?,
            text(args, "name")?
        )),
        "decide" => json!(merge_band(
            args["similarity"]
                .as_f64()
                .ok_or("similarity is not a number")?
        )),
        "upsertEntity" => json!({"id": upsert(store, tenant, args).await?.0}),
        "relate" => match relate(store, tenant, args).await? {
            Related::Written { id, closed } => json!({"id": id, "closed": closed}),
            Related::Unchanged { id } => json!({"id": id, "unchanged": true}),
        },
        "neighborsOf" => {
            let at = args["at"].as_str().map(micros).transpose()?;
            let edges = store
                .world_edges_of(tenant, text(args, "id")?, text(args, "via")?, at)
                .await
                .map_err(|e| e.to_string())?;
            json!(
                edges
                    .iter()
                    .map(|e| json!({"id": e.to}))
                    .collect::<Vec<_>>()
            )
        }
        "ingest" => json!({"changed": ingest(store, tenant, args).await?}),
        "stateShapeCanonical" => json!(
            store
                .world_snapshot(tenant)
                .await
                .map_err(|e| e.to_string())?
        ),
        "audit" => json!(
            store
                .world_audit(tenant)
                .await
                .map_err(|e| e.to_string())?
                .iter()
                .map(|a| json!({"seq": a.seq, "action": a.action, "subject": a.subject}))
                .collect::<Vec<_>>()
        ),
        other => return Err(format!("no operation {other:?} in the world-model engine")),
    })
}
