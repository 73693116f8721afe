//! `proven deps scan` against what a peer reported on the same lock files and advisory
//! data (../shared/data/lockfiles/EXPECTED.jsonl): the same advisory ids for each package,
//! with Cargo's informational kinds reported as their own kinds.

use std::collections::{BTreeMap, BTreeSet};

use proven_store::testing::Backend;

use crate::common::{Env, advisory_files, data, import, json, text};

/// (package, version, advisory id, kind) — kind only where the peer reports one.
type Row = (String, String, String, Option<String>);

fn expected() -> BTreeMap<String, BTreeSet<Row>> {
    let text = std::fs::read_to_string(data("lockfiles/EXPECTED.jsonl")).expect("EXPECTED.jsonl");
    let mut out: BTreeMap<String, BTreeSet<Row>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("EXPECTED row");
        let s = |k: &str| v[k].as_str().map(str::to_string);
        out.entry(s("lockfile").expect("lockfile"))
            .or_default()
            .insert((
                s("package").expect("package"),
                s("version").expect("version"),
                s("id").expect("id"),
                s("kind"),
            ));
    }
    out
}

async fn scan_matches_the_peer(backend: Backend) {
    let env = Env::new(backend).await;
    import(&env, &advisory_files());
    let expected = expected();
    assert!(
        expected.len() >= 6,
        "EXPECTED.jsonl lists the lock files: {:?}",
        expected.keys()
    );
    let mut report = Vec::new();
    for (lockfile, want) in &expected {
        let path = data(&format!("lockfiles/{lockfile}"));
        let out = env.run(&[
            "deps",
            "scan",
            &path.display().to_string(),
            "--format",
            "json",
        ]);
        let doc = json(&out);
        assert_eq!(doc["status"], "complete", "{lockfile}: {:?}", text(&out));
        let code = out.status.code();
        assert_eq!(
            code,
            Some(
                if doc["findings"].as_array().is_some_and(|f| f.is_empty()) {
                    0
                } else {
                    1
                }
            )
        );
        let with_kind = want.iter().any(|r| r.3.is_some());
        let got: BTreeSet<Row> = doc["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| {
                (
                    f["package"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    f["package"]["new_version"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    f["advisory"]["id"].as_str().unwrap_or_default().to_string(),
                    with_kind.then(|| f["kind"].as_str().unwrap_or_default().to_string()),
                )
            })
            .collect();
        let missing: Vec<_> = want.difference(&got).collect();
        let extra: Vec<_> = got.difference(want).collect();
        report.push(format!(
            "{lockfile}: expected {}, got {}, missing {missing:?}, extra {extra:?}",
            want.len(),
            got.len()
        ));
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{}",
            report.join("\n")
        );
    }
    eprintln!("{}", report.join("\n"));
    env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_matches_the_peer_on_sqlite() {
    scan_matches_the_peer(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_matches_the_peer_on_postgres() {
    scan_matches_the_peer(Backend::Postgres).await;
}
