//! What autofix must close: every finding the Judge will keep whose evidence is a test, a
//! query or an advisory, by the flows' own rules. Autofix is handed this by the registry
//! (a flow names no other flow).

use proven_store::StepRow;

use crate::core::rows::{done_results, step_result};
use crate::core::step_name::StepName;
use crate::core::wire::{FileResult, PlannerResult};
use crate::flows::audit::wire::AuditResult;
use crate::flows::autofix::gather::{Proved, affected};
use crate::flows::deps::judge::{DepsVerdict, judge_deps};
use crate::flows::query::judge::{QueryVerdict, judge_query};
use crate::flows::test::judge::{Verdict, judge_risk};

/// Every kept finding of every evidence, in the order the review found them: test
/// findings, then query findings, then dependency findings.
pub fn kept(rows: &[StepRow]) -> Vec<Proved> {
    let mut out = Vec::new();
    let planner = step_result::<PlannerResult>(rows, StepName::Planner.as_str(), "");
    let mut risks = Vec::new();
    if let Some(p) = &planner {
        risks.extend(p.proving.iter().cloned());
    }
    if let Some(a) = step_result::<AuditResult>(rows, StepName::Auditor.as_str(), "") {
        risks.extend(a.probing);
    }
    for (key, risk) in &risks {
        if let Verdict::Keep { job, .. } = judge_risk(rows, key, risk) {
            out.push(Proved::Test {
                title: risk.title.clone(),
                job,
            });
        }
    }
    for (key, risk) in planner.iter().flat_map(|p| p.investigating.iter()) {
        if let QueryVerdict::Keep { findings, .. } = judge_query(rows, key, risk) {
            out.extend(findings.iter().filter_map(|f| {
                Some(Proved::Query {
                    title: f.title.clone(),
                    affected: affected(f)?,
                })
            }));
        }
    }
    for (row, file) in done_results::<FileResult>(rows, StepName::DepsFile.as_str()) {
        for verdict in judge_deps(rows, &row.id.key, &file) {
            if let DepsVerdict::Keep { finding, .. } = verdict
                && let Some(a) = affected(&finding)
            {
                out.push(Proved::Advisory {
                    title: finding.title.clone(),
                    affected: a,
                });
            }
        }
    }
    out
}
