//! The Investigator's queries: the closed list of templates a model may pick, each value
//! checked before any SQL; the store's own parameterised queries run for them; the anchor
//! (a line the change adds naming the package and the version) a query finding needs; and
//! the check of the Skeptic's query refutation.

use proven_domain::Ecosystem;
use proven_report::Finding;
use proven_store::{EpssRow, KevRow, Store, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;

use crate::core::pin;
use crate::core::trace::Trace;
use anchors::Anchors;

pub mod anchors;
pub mod skeptic;

/// The closed list of queries a model may ask for, with their values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "template", content = "values", rename_all = "snake_case")]
pub enum Query {
    /// The advisories naming a package, evaluated against the version the change brings in
    /// (and the base's version, when the change replaced one).
    AdvisoriesByPackage(PackageQuery),
    /// One advisory record by its id.
    AdvisoryById { id: String },
    /// The CISA KEV entry of a CVE.
    KevByCve { cve: String },
    /// The FIRST EPSS score of a CVE.
    EpssByCve { cve: String },
}

/// A package version a query asks about (and the version the change replaced, if any).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageQuery {
    /// An OSV ecosystem name.
    pub ecosystem: String,
    pub name: String,
    pub version: String,
    pub base_version: Option<String>,
}

impl PackageQuery {
    /// The ecosystem it names (npm when it names none: [`Query::check`] refuses that before
    /// any query runs).
    fn eco(&self) -> Ecosystem {
        Ecosystem::from_osv(&self.ecosystem).unwrap_or(Ecosystem::Npm)
    }
}

pub(crate) const TEMPLATES: &str = "advisories_by_package {ecosystem, name, version, base_version or null}, \
     advisory_by_id {id}, kev_by_cve {cve}, epss_by_cve {cve}";

fn plain(what: &str, value: &str, max: usize) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("{what} is empty"));
    }
    if value.len() > max {
        return Err(format!("{what} is longer than {max} bytes"));
    }
    if value.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!(
            "{what} {value:?} holds whitespace or control characters"
        ));
    }
    Ok(())
}

fn cve(value: &str) -> Result<(), String> {
    let mut parts = value.splitn(3, '-');
    let ok = parts.next() == Some("CVE")
        && parts
            .next()
            .is_some_and(|y| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit()))
        && parts
            .next()
            .is_some_and(|n| (4..=12).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()));
    if ok {
        Ok(())
    } else {
        Err(format!("{value:?} is not a CVE id (CVE-YYYY-NNNN)"))
    }
}

impl Query {
    /// Checks every value before any SQL runs; the error names what was wrong.
    pub fn check(&self) -> Result<(), String> {
        match self {
            Query::AdvisoriesByPackage(p) => {
                if Ecosystem::from_osv(&p.ecosystem).is_none() {
                    return Err(format!(
                        "ecosystem {:?} is not one of {}",
                        p.ecosystem,
                        Ecosystem::ALL
                            .iter()
                            .map(|e| e.osv_name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                plain("name", &p.name, 214)?;
                plain("version", &p.version, 128)?;
                if let Some(b) = &p.base_version {
                    plain("base_version", b, 128)?;
                }
                Ok(())
            }
            Query::AdvisoryById { id } => {
                plain("id", id, 100)?;
                if id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
                {
                    Ok(())
                } else {
                    Err(format!(
                        "advisory id {id:?} holds characters no advisory id has"
                    ))
                }
            }
            Query::KevByCve { cve: c } | Query::EpssByCve { cve: c } => cve(c),
        }
    }
}

/// One query as run: what was asked, the rows it returned, and what they mean.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueryEvidence {
    pub query: Query,
    pub rows: Vec<Value>,
    pub note: String,
}

/// What the Skeptic's query showed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueryRefutation {
    pub evidenced: bool,
    pub reason: String,
    pub query: Option<QueryEvidence>,
}

/// Runs one checked query with the store's parameterised SQL.
pub(crate) async fn run_query(
    store: &Store,
    query: &Query,
    anchors: &Anchors,
    path: &str,
    trace: &mut Trace,
) -> Result<(QueryEvidence, Vec<Finding>), StoreError> {
    let mut findings = Vec::new();
    let (rows, note) = match query {
        Query::AdvisoriesByPackage(asked) => {
            package_rows(store, asked, anchors, path, trace, &mut findings).await?
        }
        Query::AdvisoryById { id } => advisory_rows(store, id).await?,
        Query::KevByCve { cve } => about_a_cve(
            store.kev_for(std::slice::from_ref(cve)).await?,
            kev_row,
            "a KEV entry says a CVE is exploited, not that the change brings it in",
        ),
        Query::EpssByCve { cve } => about_a_cve(
            store.epss_for(std::slice::from_ref(cve)).await?,
            epss_row,
            "an EPSS score is a likelihood of exploitation, not a finding",
        ),
    };
    trace.push(
        "query",
        json!({"query": query, "rows": rows.len(), "note": note, "findings": findings.len()}),
    );
    Ok((
        QueryEvidence {
            query: query.clone(),
            rows,
            note,
        },
        findings,
    ))
}

/// The advisory rows naming a package, and what they prove: findings only for a version a
/// line the change adds names, evaluated by the dependency evidence's own rules.
async fn package_rows(
    store: &Store,
    asked: &PackageQuery,
    anchors: &Anchors,
    path: &str,
    trace: &mut Trace,
    findings: &mut Vec<Finding>,
) -> Result<(Vec<Value>, String), StoreError> {
    let (eco, name, version) = (asked.eco(), asked.name.as_str(), asked.version.as_str());
    let norm = eco.normalize_name(name);
    let found = store
        .affected_rows(eco, std::slice::from_ref(&norm))
        .await?;
    let rows: Vec<Value> = found
        .iter()
        .map(|r| {
            json!({"advisory_id": r.advisory_id, "affected_index": r.idx, "name": r.name,
                   "affected": serde_json::from_str::<Value>(&r.affected_json).unwrap_or(Value::Null)})
        })
        .collect();
    let Some(line) = Anchors::find(&anchors.added, name, version) else {
        let note = format!(
            "no line the change adds to {path} names {name} {version}: rows about a version \
             the change does not bring in prove nothing about it"
        );
        return Ok((rows, note));
    };
    findings.extend(anchored_findings(store, asked, line, anchors, path, trace).await?);
    let note = if findings.is_empty() {
        format!(
            "line {line} of {path} brings in {name} {version}; no advisory row affects it \
             (or the base's version was affected too)"
        )
    } else {
        format!("line {line} of {path} brings in {name} {version}, inside an affected range")
    };
    Ok((rows, note))
}

/// The findings of the version line `line` of `path` adds, against the version a removed
/// line named (if any), by [`deps::evaluate`].
async fn anchored_findings(
    store: &Store,
    asked: &PackageQuery,
    line: u32,
    anchors: &Anchors,
    path: &str,
    trace: &mut Trace,
) -> Result<Vec<Finding>, StoreError> {
    let base = asked
        .base_version
        .as_deref()
        .and_then(|b| Anchors::find(&anchors.removed, &asked.name, b).map(|l| (b, l)));
    let pin = pin::Pin {
        path,
        ecosystem: asked.eco(),
        name: &asked.name,
        base,
        head: (&asked.version, line),
    };
    pin::evaluate_pin(store, pin, trace).await
}

/// The rows of an advisory record: they describe the advisory, never the change.
async fn advisory_rows(store: &Store, id: &str) -> Result<(Vec<Value>, String), StoreError> {
    let rows: Vec<Value> = store
        .advisory(id)
        .await?
        .into_iter()
        .map(|a| {
            let record: Value = serde_json::from_str(&a.record).unwrap_or(Value::Null);
            json!({"id": a.id, "modified": a.modified, "withdrawn": a.withdrawn,
                   "summary": record["summary"], "aliases": record["aliases"],
                   "affected": record["affected"].as_array().map(|list| list.iter()
                       .map(|x| x["package"].clone()).collect::<Vec<_>>())})
        })
        .collect();
    Ok((
        rows,
        "an advisory record describes the advisory, not the change".into(),
    ))
}

/// The rows about one CVE (its KEV entry, its EPSS score): they describe the CVE, never
/// the change.
fn about_a_cve<T>(
    found: HashMap<String, T>,
    row: fn(T) -> Value,
    note: &str,
) -> (Vec<Value>, String) {
    (found.into_values().map(row).collect(), note.into())
}

fn kev_row(k: KevRow) -> Value {
    json!({"cve": k.cve, "vendor": k.vendor, "product": k.product,
           "name": k.name, "date_added": k.date_added, "ransomware": k.ransomware})
}

fn epss_row(e: EpssRow) -> Value {
    json!({"cve": e.cve, "probability": e.probability, "percentile": e.percentile,
           "score_date": e.score_date})
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

pub(crate) fn read_query(value: Value) -> Result<Query, String> {
    let query: Query = serde_json::from_value(value.clone()).map_err(|e| {
        format!(
            "query {} is not one of the templates ({TEMPLATES}): {e}",
            clip(&value.to_string(), 200)
        )
    })?;
    query.check()?;
    Ok(query)
}

/// Whether the Skeptic's own query shows the claim false.
pub(crate) async fn judge_refutation(
    store: &Store,
    query: &Query,
    findings: &[Finding],
    path: &str,
    anchors: &Anchors,
    trace: &mut Trace,
) -> Result<QueryRefutation, StoreError> {
    let (evidence, still) = run_query(store, query, anchors, path, trace).await?;
    let (evidenced, reason) = match query {
        Query::AdvisoriesByPackage(PackageQuery {
            ecosystem,
            name,
            version,
            ..
        }) => {
            let eco = Ecosystem::from_osv(ecosystem);
            let about = findings.iter().any(|f| {
                f.package.as_ref().is_some_and(|p| {
                    Some(p.ecosystem.as_str()) == eco.map(|e| e.osv_name())
                        && eco.is_some_and(|e| e.normalize_name(&p.name) == e.normalize_name(name))
                        && p.new_version == *version
                })
            });
            if !about {
                (
                    false,
                    "the query is not about the package and version of the finding".to_string(),
                )
            } else {
                let gone: Vec<&str> = findings
                    .iter()
                    .filter(|f| !still.iter().any(|s| s.advisory_id() == f.advisory_id()))
                    .map(|f| f.advisory_id())
                    .collect();
                if gone.len() == findings.len() {
                    (
                        true,
                        "the rows no longer show the version inside an affected range".to_string(),
                    )
                } else {
                    (
                        false,
                        "the rows still show the version inside an affected range".to_string(),
                    )
                }
            }
        }
        Query::AdvisoryById { id } => {
            let of_finding = findings.iter().any(|f| f.advisory_id() == id);
            let withdrawn_or_gone = evidence.rows.is_empty()
                || evidence.rows.iter().all(|r| r["withdrawn"].is_string());
            match (of_finding, withdrawn_or_gone) {
                (false, _) => (false, format!("{id} is not the finding's advisory")),
                (true, true) => (true, format!("{id} is withdrawn or no longer stored")),
                (true, false) => (false, format!("{id} is stored and not withdrawn")),
            }
        }
        Query::KevByCve { .. } | Query::EpssByCve { .. } => (
            false,
            "KEV and EPSS rows cannot show that an advisory does not apply".to_string(),
        ),
    };
    Ok(QueryRefutation {
        evidenced,
        reason,
        query: Some(evidence),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package_query(ecosystem: &str, name: &str, version: &str) -> Query {
        Query::AdvisoriesByPackage(PackageQuery {
            ecosystem: ecosystem.into(),
            name: name.into(),
            version: version.into(),
            base_version: None,
        })
    }

    #[test]
    fn values_are_checked_before_any_sql() {
        let ok = package_query("PyPI", "django", "3.2.0");
        assert!(ok.check().is_ok());
        let bad = package_query("CPAN", "x", "1");
        assert!(bad.check().expect_err("CPAN").contains("CPAN"));
        let injection = Query::AdvisoryById {
            id: "GHSA-1'; DROP TABLE advisories;--".into(),
        };
        assert!(injection.check().is_err());
        assert!(
            Query::KevByCve {
                cve: "CVE-2021-44228".into()
            }
            .check()
            .is_ok()
        );
        assert!(
            Query::EpssByCve {
                cve: "CVE-21-1".into()
            }
            .check()
            .is_err()
        );
        let unknown = read_query(json!({"template": "raw_sql", "values": {"sql": "SELECT 1"}}));
        assert!(
            unknown
                .expect_err("raw_sql")
                .contains("not one of the templates")
        );
    }

    async fn import(store: &Store, modified: &str, withdrawn: bool) {
        let raw = format!(
            r#"{{"id":"TEST-REQ","modified":"{modified}",{}"summary":"requests leaks",
                "affected":[{{"package":{{"ecosystem":"PyPI","name":"requests"}},
                "ranges":[{{"type":"ECOSYSTEM","events":[{{"introduced":"0"}},{{"fixed":"2.20.0"}}]}}]}}]}}"#,
            if withdrawn {
                r#""withdrawn":"2024-06-01T00:00:00Z","#
            } else {
                ""
            }
        );
        let record: proven_osv::Record = serde_json::from_str(&raw).expect("test advisory");
        let mut run = store.begin_import("test");
        run.add_record("test", &record, &raw).await.expect("import");
        run.finish().await.expect("finish");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_skeptic_query_counts_only_when_its_rows_show_the_claim_false() {
        use proven_store::testing::{Backend, TestStore};
        for backend in [Backend::Sqlite, Backend::Postgres] {
            let test = TestStore::new(backend).await;
            let store = &test.store;
            import(store, "2024-01-01T00:00:00Z", false).await;
            let anchors = Anchors::of("", "RUN pip install requests==2.19.0\n");
            let mut trace = Trace::new("t");
            let package = package_query("PyPI", "requests", "2.19.0");
            let (_, findings) = run_query(store, &package, &anchors, "Dockerfile", &mut trace)
                .await
                .expect("query");
            assert_eq!(findings.len(), 1, "{backend:?}");
            assert_eq!(findings[0].location.line, Some(1));

            let by_id = Query::AdvisoryById {
                id: "TEST-REQ".into(),
            };
            let kev = Query::KevByCve {
                cve: "CVE-2018-18074".into(),
            };
            let other = package_query("PyPI", "requests", "2.25.0");
            for q in [&package, &by_id, &kev, &other] {
                let r = judge_refutation(store, q, &findings, "Dockerfile", &anchors, &mut trace)
                    .await
                    .expect("refutation");
                assert!(!r.evidenced, "{q:?}: {}", r.reason);
            }
            // The advisory is withdrawn upstream: now the Skeptic's rows show the claim false.
            import(store, "2024-07-01T00:00:00Z", true).await;
            for q in [&package, &by_id] {
                let r = judge_refutation(store, q, &findings, "Dockerfile", &anchors, &mut trace)
                    .await
                    .expect("refutation");
                assert!(r.evidenced, "{backend:?} {q:?}: {}", r.reason);
            }
            test.cleanup().await;
        }
    }
}
