//! The whole `proven ask`: the generator's claims, Proven's citation check, the refuter,
//! and the coverage auditor with its second round (the invariants are the crate's).

use std::collections::BTreeSet;

use proven_pipeline::StepError;

use proven_review::core::model::Agents;
use proven_review::core::trace::Trace;

use crate::answer::{Answer, ClaimStatus, NotSeenRow};
use crate::claims::{generate, settle_citations};
use crate::files::{self, Checkout};
use crate::{coverage, refuter};

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
