//! `proven ask QUESTION --repo PATH [--rev REV]` (DESIGN section 9; the seeds' "deep mode:
//! two adversaries"): a question about a repository answered with cited claims, attacked
//! by two adversaries with asymmetric inputs and opposite defaults.
//!
//! ```text
//! generator (claims citing lines) ─ Proven's citation check ─ refuter (claims + cited lines only)
//!                                  coverage auditor (question + manifests only) ─ round two probes
//! ```
//!
//! Invariants:
//! - Every citation is checked by Proven against the file at the revision: lines that do
//!   not exist, or do not say what the claim quotes, refute the claim (a fact, not a view).
//! - The refuter is shown the claims and the lines they cite, never the question or the
//!   answer's reasoning; its default is refuted, and it concedes only by naming a cited
//!   artifact it opened and what that showed. A concession is recorded as conceded, never
//!   as validated.
//! - The coverage auditor is shown the question and the manifests, never the answer; its
//!   default is incomplete. Each surface it names is covered in round two (a conceded claim
//!   citing the surface) or written into "what this run could not see", naming what is
//!   needed. Two rounds at most.
//! - When the two adversaries cannot be given different inputs (every claim cites only the
//!   manifests the auditor would read), one reviewer runs and the answer says the design
//!   degraded: the coverage question is visibly unasked.

use std::collections::BTreeSet;

use proven_pipeline::StepError;

use proven_review::core::model::Agents;
use proven_review::core::trace::Trace;

mod answer;
mod claims;
mod coverage;
mod files;
mod questions;
mod refuter;
pub mod render;

pub use questions::QuestionRunner;

pub use answer::{Answer, ClaimRecord, ClaimStatus, CoverageRecord, NotSeenRow, SurfaceRecord};
use claims::{generate, settle_citations};
pub use files::Checkout;

/// Asks the question and attacks the answer: the whole `proven ask`.
pub async fn ask(
    agents: &Agents,
    checkout: &Checkout,
    (question, rev): (&str, &str),
    trace: &mut Trace,
) -> Result<Answer, StepError> {
    let mut answer = Answer {
        kind: "answer".into(),
        question: question.to_string(),
        repository: checkout.dir.clone(),
        rev: rev.to_string(),
        commit: checkout.commit.clone(),
        claims: Vec::new(),
        coverage: None,
        could_not_see: Vec::new(),
        degraded: None,
        failed_services: Vec::new(),
        rounds: 1,
    };
    let said = generate(agents, checkout, question, None, trace).await?;
    let mut round_one = settle_citations(checkout, &said, 1, None);
    let manifests = files::manifests(checkout);
    let cited: BTreeSet<&str> = round_one
        .iter()
        .filter(|r| r.status != ClaimStatus::Refuted)
        .flat_map(|r| r.citations.iter().map(|c| c.path.as_str()))
        .collect();
    if !cited.is_empty() && cited.iter().all(|p| manifests.contains(&p.to_string())) {
        answer.degraded = Some(format!(
            "the two-verdict design degraded to a single reviewer: every claim cites only the manifests \
             the coverage auditor would be given ({}), so the two adversaries cannot be given different \
             inputs; the coverage question is unasked",
            cited.iter().copied().collect::<Vec<_>>().join(", ")
        ));
    }
    refuter::refute(agents, checkout, &mut round_one, &mut answer, trace).await;
    answer.claims = round_one;
    if answer.degraded.is_none() {
        let coverage =
            coverage::audit(agents, checkout, question, &manifests, &mut answer, trace).await;
        if let Some(mut coverage) = coverage {
            coverage::round_two(agents, checkout, &mut coverage, &mut answer, trace).await?;
            answer.coverage = Some(coverage);
        }
    } else {
        answer.could_not_see.push(NotSeenRow {
            what: "coverage: the auditor was not asked (the design degraded)".into(),
            needs:
                "claims that cite more than the manifests, so the adversaries see different things"
                    .into(),
        });
    }
    for c in &answer.claims {
        if c.status == ClaimStatus::Unresolved {
            answer.could_not_see.push(NotSeenRow {
                what: format!("claim (round {}): {}", c.round, c.claim),
                needs: c.reason.clone(),
            });
        }
    }
    Ok(answer)
}
