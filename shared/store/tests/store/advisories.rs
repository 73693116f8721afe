//! Advisory import and matching.

use proven_domain::Ecosystem;
use proven_osv::{EpssScore, EpssScores, KevCatalog, Record};
use proven_store::testing::{Backend, TestStore};
use proven_store::{NewReview, ReviewStatus, StoreError};

proven_store::both_backends!(
    import_is_idempotent_and_newest_record_wins,
    withdrawn_advisories_are_stored_but_never_matched,
    one_query_matches_many_names_by_normalised_name,
    kev_and_epss_are_looked_up_by_cve,
    reviews_and_traces_round_trip,
    each_import_records_what_it_changed_as_a_change_set,
);

fn record(id: &str, modified: &str, eco: &str, name: &str, fixed: &str) -> (Record, String) {
    let raw = format!(
        r#"{{"id":"{id}","modified":"{modified}","aliases":["CVE-2099-{}"],"summary":"s {id} {fixed}",
        "affected":[{{"package":{{"ecosystem":"{eco}","name":"{name}"}},
        "ranges":[{{"type":"ECOSYSTEM","events":[{{"introduced":"0"}},{{"fixed":"{fixed}"}}]}}]}}]}}"#,
        id.len()
    );
    (serde_json::from_str(&raw).expect("test record"), raw)
}

async fn import(
    store: &proven_store::Store,
    records: &[(Record, String)],
) -> proven_store::ImportCounts {
    let mut run = store.begin_import("test");
    for (r, raw) in records {
        run.add_record("test", r, raw).await.expect("add record");
    }
    run.finish().await.expect("finish import")
}

async fn import_is_idempotent_and_newest_record_wins(backend: Backend) {
    let t = TestStore::new(backend).await;
    let v1 = record("A-1", "2020-01-01T00:00:00Z", "PyPI", "Django", "1.0");
    let v2 = record("A-1", "2021-01-01T00:00:00Z", "PyPI", "Django", "2.0");
    let first = import(&t.store, std::slice::from_ref(&v1)).await;
    assert_eq!((first.inserted, first.updated), (1, 0));
    let again = import(&t.store, std::slice::from_ref(&v1)).await;
    assert_eq!((again.inserted, again.updated, again.unchanged), (0, 0, 1));
    let newer = import(&t.store, std::slice::from_ref(&v2)).await;
    assert_eq!(newer.updated, 1);
    let older = import(&t.store, &[v1]).await;
    assert_eq!(
        older.older_kept, 1,
        "an older record never overwrites a newer one"
    );
    let rows = t
        .store
        .affected_rows(Ecosystem::PyPI, &["django".into()])
        .await
        .expect("match");
    assert_eq!(
        rows.len(),
        1,
        "a replaced record leaves no stale affected rows"
    );
    assert!(rows[0].affected_json.contains("2.0"));
    assert_eq!(rows[0].summary.as_deref(), Some("s A-1 2.0"));
    t.cleanup().await;
}

async fn withdrawn_advisories_are_stored_but_never_matched(backend: Backend) {
    let t = TestStore::new(backend).await;
    let raw = r#"{"id":"W-1","modified":"2020-01-01T00:00:00Z","withdrawn":"2020-02-01T00:00:00Z",
        "affected":[{"package":{"ecosystem":"npm","name":"left-pad"},"versions":["1.0.0"]}]}"#;
    let rec: Record = serde_json::from_str(raw).expect("record");
    let counts = import(&t.store, &[(rec, raw.to_string())]).await;
    assert_eq!(counts.withdrawn, 1);
    assert!(t.store.advisory("W-1").await.expect("lookup").is_some());
    let rows = t
        .store
        .affected_rows(Ecosystem::Npm, &["left-pad".into()])
        .await
        .expect("match");
    assert!(rows.is_empty());
    t.cleanup().await;
}

async fn one_query_matches_many_names_by_normalised_name(backend: Backend) {
    let t = TestStore::new(backend).await;
    let mut records = Vec::new();
    for i in 0..1200 {
        records.push(record(
            &format!("M-{i}"),
            "2020-01-01T00:00:00Z",
            "crates.io",
            &format!("crate_{i}"),
            "1.0.0",
        ));
    }
    records.push(record(
        "G-1",
        "2020-01-01T00:00:00Z",
        "Go",
        "github.com/x/y",
        "1.0.0",
    ));
    import(&t.store, &records).await;
    // crates.io folds `_` into `-`: the lock file's spelling need not match the advisory's.
    let names: Vec<String> = (0..1000)
        .map(|i| format!("crate-{i}"))
        .chain(["absent".to_string()])
        .collect();
    let rows = t
        .store
        .affected_rows(Ecosystem::CratesIo, &names)
        .await
        .expect("match");
    assert_eq!(rows.len(), 1000);
    assert!(rows.iter().all(|r| r.ecosystem == "crates.io"));
    assert_eq!(rows[0].aliases, vec!["CVE-2099-3".to_string()]);
    let go = t
        .store
        .affected_rows(Ecosystem::Go, &["github.com/x/y".into()])
        .await
        .expect("match");
    assert_eq!(go.len(), 1);
    assert!(
        t.store
            .affected_rows(Ecosystem::Go, &[])
            .await
            .expect("empty")
            .is_empty()
    );
    t.cleanup().await;
}

async fn kev_and_epss_are_looked_up_by_cve(backend: Backend) {
    let t = TestStore::new(backend).await;
    let catalog: KevCatalog = serde_json::from_str(
        r#"{"catalogVersion":"1","vulnerabilities":[{"cveID":"CVE-1-1","vendorProject":"V","product":"P",
        "vulnerabilityName":"N","dateAdded":"2020-01-01","knownRansomwareCampaignUse":"Known"}]}"#,
    )
    .expect("kev");
    let mut run = t.store.begin_import("test");
    run.add_kev(&catalog).await.expect("kev import");
    run.add_kev(&catalog)
        .await
        .expect("kev import twice is an upsert");
    let scores = EpssScores {
        model_version: None,
        score_date: Some("2026-01-02".into()),
        scores: vec![EpssScore {
            cve: "CVE-1-1".into(),
            probability: 0.25,
            percentile: 0.75,
        }],
    };
    run.add_epss(&scores).await.expect("epss import");
    let older = EpssScores {
        score_date: Some("2026-01-01".into()),
        scores: vec![EpssScore {
            cve: "CVE-1-1".into(),
            probability: 0.5,
            percentile: 0.5,
        }],
        ..Default::default()
    };
    run.add_epss(&older).await.expect("older epss import");
    run.finish().await.expect("finish");
    let kev = t
        .store
        .kev_for(&["CVE-1-1".into(), "CVE-9-9".into()])
        .await
        .expect("kev");
    assert_eq!(kev.len(), 1);
    assert_eq!(kev["CVE-1-1"].ransomware.as_deref(), Some("Known"));
    let epss = t.store.epss_for(&["CVE-1-1".into()]).await.expect("epss");
    assert_eq!(
        epss["CVE-1-1"].probability, 0.25,
        "an older score file does not overwrite a newer one"
    );
    assert_eq!(t.store.advisory_counts().await.expect("counts"), (0, 1, 1));
    t.cleanup().await;
}

async fn reviews_and_traces_round_trip(backend: Backend) {
    let t = TestStore::new(backend).await;
    let review = NewReview {
        id: "r1".into(),
        repository: "/repo".into(),
        base_rev: "main".into(),
        head_rev: "HEAD".into(),
    };
    t.store.create_review(&review).await.expect("create");
    t.store
        .set_review_commits("r1", "aaa", "bbb")
        .await
        .expect("commits");
    let events = vec![
        (
            "plan".to_string(),
            serde_json::json!({"class": "dependency"}),
        ),
        ("package".to_string(), serde_json::json!({"name": "x"})),
    ];
    t.store
        .append_trace("r1", "run-1", &events)
        .await
        .expect("trace");
    t.store
        .append_trace(
            "r1",
            "run-1",
            &[("finding".into(), serde_json::json!({"id": 1}))],
        )
        .await
        .expect("trace");
    t.store
        .finish_review("r1", ReviewStatus::Complete, "{}")
        .await
        .expect("finish");
    let row = t.store.review("r1").await.expect("review");
    assert_eq!(row.status, ReviewStatus::Complete);
    assert_eq!(row.head_commit.as_deref(), Some("bbb"));
    let trace = t.store.trace("r1").await.expect("trace");
    let kinds: Vec<_> = trace.iter().map(|t| t.kind.as_str()).collect();
    assert_eq!(kinds, vec!["plan", "package", "finding"]);
    assert!(trace.windows(2).all(|w| w[0].seq < w[1].seq));
    assert!(matches!(
        t.store.trace("nope").await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        t.store
            .finish_review("nope", ReviewStatus::Complete, "{}")
            .await,
        Err(StoreError::NotFound(_))
    ));
    t.cleanup().await;
}

fn withdrawn_record(id: &str, modified: &str) -> (Record, String) {
    let raw = format!(
        r#"{{"id":"{id}","modified":"{modified}","withdrawn":"{modified}",
        "affected":[{{"package":{{"ecosystem":"PyPI","name":"flask"}},
        "ranges":[{{"type":"ECOSYSTEM","events":[{{"introduced":"0"}},{{"fixed":"9"}}]}}]}}]}}"#
    );
    (serde_json::from_str(&raw).expect("test record"), raw)
}

async fn each_import_records_what_it_changed_as_a_change_set(backend: Backend) {
    let t = TestStore::new(backend).await;
    let kev = |cves: &[&str]| -> KevCatalog {
        let rows: Vec<String> = cves
            .iter()
            .map(|c| format!(r#"{{"cveID":"{c}","dateAdded":"2026-01-01"}}"#))
            .collect();
        serde_json::from_str(&format!(
            r#"{{"catalogVersion":"1","vulnerabilities":[{}]}}"#,
            rows.join(",")
        ))
        .expect("kev")
    };
    // A first sync of two sources is one change set: everything in it is new.
    let first = "cs-1";
    let mut run = t.store.begin_import_in("osv", first);
    for (r, raw) in [
        record("A-1", "2020-01-01T00:00:00Z", "PyPI", "django", "1.0"),
        record("A-2", "2020-01-01T00:00:00Z", "PyPI", "flask", "1.0"),
    ] {
        run.add_record("osv", &r, &raw).await.expect("add");
    }
    run.finish().await.expect("finish");
    let mut run = t.store.begin_import_in("kev", first);
    run.add_kev(&kev(&["CVE-1-1"])).await.expect("kev");
    assert_eq!(run.counts().kev_new, 1);
    run.finish().await.expect("finish");
    let set = t.store.change_set(first).await.expect("change set");
    assert_eq!(set.new, ["A-1", "A-2"]);
    assert_eq!(set.kev, ["CVE-1-1"]);
    assert!(set.modified.is_empty() && set.withdrawn.is_empty());
    assert!(!set.at.is_empty());

    // The same data again changes nothing: an empty change set.
    let mut run = t.store.begin_import_in("osv", "cs-2");
    let (r, raw) = record("A-1", "2020-01-01T00:00:00Z", "PyPI", "django", "1.0");
    run.add_record("osv", &r, &raw).await.expect("add");
    run.add_kev(&kev(&["CVE-1-1"])).await.expect("kev");
    assert_eq!(run.counts().kev_new, 0);
    run.finish().await.expect("finish");
    assert!(t.store.change_set("cs-2").await.expect("empty").is_empty());

    // A newer record is modified, a newly withdrawn one withdrawn, an older one nothing,
    // a new KEV entry kev; each import without a named set is a set of its own.
    let mut run = t.store.begin_import("osv");
    let (r, raw) = record("A-1", "2021-01-01T00:00:00Z", "PyPI", "django", "2.0");
    run.add_record("osv", &r, &raw).await.expect("add");
    let (r, raw) = withdrawn_record("A-2", "2021-01-01T00:00:00Z");
    run.add_record("osv", &r, &raw).await.expect("add");
    let (r, raw) = record("A-3", "2019-01-01T00:00:00Z", "PyPI", "rsa", "1.0");
    run.add_record("osv", &r, &raw).await.expect("add");
    run.add_kev(&kev(&["CVE-1-1", "CVE-2-2"]))
        .await
        .expect("kev");
    run.finish().await.expect("finish");
    let since = t.store.change_sets_since(&set.at).await.expect("since");
    assert_eq!(
        since.len(),
        2,
        "cs-1 and the last import; cs-2 changed nothing: {since:?}"
    );
    assert_eq!(since[0], first);
    let last = t.store.change_set(&since[1]).await.expect("last");
    assert_eq!(last.modified, ["A-1"]);
    assert_eq!(last.withdrawn, ["A-2"]);
    assert_eq!(last.new, ["A-3"]);
    assert_eq!(last.kev, ["CVE-2-2"]);
    t.cleanup().await;
}
