//! Replaying an advisory finding: its package's version against the store's rows of its
//! advisory now, and whether the advisory changed since the report.

use proven_report::Finding;
use proven_store::{Store, StoreError};
use proven_version::Ecosystem;
use serde::Serialize;

/// What the store says of an advisory finding today.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdvisoryReplay {
    pub advisory: String,
    pub holds: bool,
    /// Why, in words: the rows that still affect the version, or what changed.
    pub why: String,
    /// The advisory's `modified` in the report, and in the store now, when they differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed: Option<(Option<String>, Option<String>)>,
}

/// `None` when `finding` is not an advisory finding (no package or no advisory).
pub async fn replay(
    store: &Store,
    finding: &Finding,
) -> Result<Option<AdvisoryReplay>, StoreError> {
    let (Some(pkg), Some(adv)) = (&finding.package, &finding.advisory) else {
        return Ok(None);
    };
    let verdict = |holds: bool, why: String, changed| {
        Ok(Some(AdvisoryReplay {
            advisory: adv.id.clone(),
            holds,
            why,
            changed,
        }))
    };
    let Some(eco) = Ecosystem::from_osv(&pkg.ecosystem) else {
        return verdict(
            false,
            format!("unknown ecosystem {:?}", pkg.ecosystem),
            None,
        );
    };
    let rows: Vec<_> = store
        .affected_rows(eco, &[eco.normalize_name(&pkg.name)])
        .await?
        .into_iter()
        .filter(|r| r.advisory_id == adv.id)
        .collect();
    let stored = store.advisory(&adv.id).await?;
    let now_modified = stored.as_ref().and_then(|s| s.modified.clone());
    let changed = (now_modified != adv.modified).then(|| (adv.modified.clone(), now_modified));
    if let Some(at) = stored.as_ref().and_then(|s| s.withdrawn.clone()) {
        return verdict(false, format!("{} is withdrawn (at {at})", adv.id), changed);
    }
    if rows.is_empty() {
        return verdict(
            false,
            format!("the store holds no row of {} for {}", adv.id, pkg.name),
            changed,
        );
    }
    let affected_by = |version: &str| -> Vec<i64> {
        rows.iter()
            .filter(|r| {
                serde_json::from_str::<proven_osv::Affected>(&r.affected_json).is_ok_and(|a| {
                    proven_version::is_affected(eco, &a, version).is_ok_and(|x| x.affected)
                })
            })
            .map(|r| r.idx)
            .collect()
    };
    let hits = affected_by(&pkg.new_version);
    if hits.is_empty() {
        return verdict(
            false,
            format!(
                "{} {} is no longer affected: outside every row of {} in the store",
                pkg.name, pkg.new_version, adv.id
            ),
            changed,
        );
    }
    let base_too = pkg
        .old_version
        .iter()
        .flat_map(|v| v.split(", "))
        .find(|v| !affected_by(v).is_empty());
    if let Some(old) = base_too {
        return verdict(
            false,
            format!(
                "the base's {} {old} is affected too: the change no longer brings it in",
                pkg.name
            ),
            changed,
        );
    }
    let idx: Vec<String> = hits.iter().map(|i| format!("affected[{i}]")).collect();
    verdict(
        true,
        format!(
            "{} {} is affected by {} {}",
            pkg.name,
            pkg.new_version,
            adv.id,
            idx.join(", ")
        ),
        changed,
    )
}

#[cfg(test)]
mod tests {
    use proven_report::{AdvisoryRef, Finding, FindingKind, Level, Location, PackageChange};
    use proven_store::testing::{Backend, TestStore};

    async fn import(store: &proven_store::Store, modified: &str, fixed: &str) {
        let raw = format!(
            r#"{{"id":"TEST-REQ","modified":"{modified}","summary":"requests leaks",
                "affected":[{{"package":{{"ecosystem":"PyPI","name":"requests"}},
                "ranges":[{{"type":"ECOSYSTEM","events":[{{"introduced":"0"}},{{"fixed":"{fixed}"}}]}}]}}]}}"#
        );
        let record: proven_osv::Record = serde_json::from_str(&raw).expect("test advisory");
        let mut run = store.begin_import("test");
        run.add_record("test", &record, &raw).await.expect("import");
        run.finish().await.expect("finish");
    }

    fn finding() -> Finding {
        Finding {
            id: "dependency:requirements.txt:PyPI:requests:TEST-REQ".into(),
            proof_level: Level::Advisory,
            kind: FindingKind::Vulnerability,
            title: "requests 2.19.0 is affected by TEST-REQ".into(),
            package: Some(PackageChange {
                ecosystem: "PyPI".into(),
                name: "requests".into(),
                old_version: None,
                new_version: "2.19.0".into(),
                dependency: "direct".into(),
                dev: false,
            }),
            location: Location {
                path: "requirements.txt".into(),
                line: Some(1),
            },
            advisory: Some(AdvisoryRef {
                id: "TEST-REQ".into(),
                aliases: Vec::new(),
                summary: None,
                severity: Vec::new(),
                published: None,
                modified: Some("2024-01-01T00:00:00Z".into()),
            }),
            exploited: None,
            epss: None,
            fix: None,
            claim: None,
            skeptic: None,
            patch: None,
            fix_not_proved: None,
            reachability: None,
            evidence: Vec::new(),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_advisory_finding_replays_against_the_stores_rows_now() {
        let test = TestStore::new(Backend::Sqlite).await;
        let store = &test.store;
        import(store, "2024-01-01T00:00:00Z", "2.20.0").await;
        let same = super::replay(store, &finding())
            .await
            .expect("replay")
            .expect("advisory");
        assert!(same.holds, "{same:?}");
        assert_eq!(same.changed, None, "the store's advisory is the report's");

        // The advisory is corrected: the range now ends before the version.
        import(store, "2024-06-01T00:00:00Z", "2.19.0").await;
        let now = super::replay(store, &finding())
            .await
            .expect("replay")
            .expect("advisory");
        assert!(!now.holds, "{now:?}");
        assert!(now.why.contains("no longer affected"), "{now:?}");
        assert_eq!(
            now.changed,
            Some((
                Some("2024-01-01T00:00:00Z".into()),
                Some("2024-06-01T00:00:00Z".into())
            ))
        );
        test.cleanup().await;
    }
}
