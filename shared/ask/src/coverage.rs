//! The coverage auditor (the question and the manifests, never the answer; incomplete by
//! default) and round two: each surface it names that is a path of the checkout probed
//! with its own question, covered only by a conceded claim citing a line under it; the rest
//! written into "what this run could not see", naming what would settle it.

use proven_pipeline::StepError;

use super::answer::{
    AUDITOR, Answer, AuditorAnswer, ClaimRecord, ClaimStatus, CoverageRecord, MAX_SURFACES,
    NotSeenRow, SurfaceRecord,
};
use super::claims::{generate, settle_citations, short};
use super::files::{self, Checkout};
use super::refuter;
use proven_review::core::model::{Agents, Role, quoted};
use proven_review::core::trace::Trace;

/// The coverage auditor: the question and the manifests only.
pub(super) async fn audit(
    agents: &Agents,
    checkout: &Checkout,
    question: &str,
    manifests: &[String],
    answer: &mut Answer,
    trace: &mut Trace,
) -> Option<CoverageRecord> {
    let user = format!(
        "<question>{}</question>\n<listing>{}</listing>\n<manifests>{}</manifests>",
        quoted(question),
        quoted(&checkout.files),
        quoted(&files::manifest_texts(checkout, manifests))
    );
    let said: AuditorAnswer = match agents.ask(Role::Auditor, AUDITOR, &user, trace).await {
        Ok(a) => a,
        Err(e) => {
            answer.failed_services.push(NotSeenRow {
                what: "coverage auditor".into(),
                needs: e.to_string(),
            });
            answer.could_not_see.push(NotSeenRow {
                what: "coverage: the auditor's service failed".into(),
                needs: "the coverage auditor's answer".into(),
            });
            return None;
        }
    };
    let verdict =
        if said.verdict.trim().eq_ignore_ascii_case("covered") && said.uncovered.is_empty() {
            "covered"
        } else {
            "incomplete"
        };
    Some(CoverageRecord {
        verdict: verdict.into(),
        surfaces: said
            .uncovered
            .into_iter()
            .take(MAX_SURFACES)
            .map(|u| SurfaceRecord {
                surface: u.surface,
                probe: u.probe,
                status: "could not see".into(),
                detail: "round two did not reach it".into(),
            })
            .collect(),
    })
}

/// Round two: each surface that is a path of the checkout probed with its own question,
/// the claims checked and refuted as in round one; covered only by a conceded claim citing
/// a line under it. The rest go to "what this run could not see".
pub(super) async fn round_two(
    agents: &Agents,
    checkout: &Checkout,
    coverage: &mut CoverageRecord,
    answer: &mut Answer,
    trace: &mut Trace,
) -> Result<(), StepError> {
    let mut claims = Vec::new();
    for s in &coverage.surfaces {
        if checkout.holds(&s.surface) && !s.probe.trim().is_empty() {
            let said = generate(agents, checkout, &s.probe, Some(&s.surface), trace).await?;
            claims.extend(settle_citations(checkout, &said, 2, Some(&s.surface)));
        }
    }
    if !claims.is_empty() {
        answer.rounds = 2;
        refuter::refute(agents, checkout, &mut claims, answer, trace).await;
    }
    for s in &mut coverage.surfaces {
        let mine: Vec<&ClaimRecord> = claims
            .iter()
            .filter(|c| c.surface.as_deref() == Some(s.surface.as_str()))
            .collect();
        if let Some(c) = mine.iter().find(|c| c.status == ClaimStatus::Conceded) {
            s.status = "covered".into();
            s.detail = format!(
                "round two: {:?}, conceded naming {}",
                c.claim,
                c.artifact.as_deref().unwrap_or_default()
            );
            continue;
        }
        let (detail, needs) = if !checkout.holds(&s.surface) {
            (
                format!(
                    "not a path of the repository at {}, so its probe cannot run from this checkout",
                    short(&checkout.commit)
                ),
                s.probe.clone(),
            )
        } else if mine.is_empty() {
            ("round two's probe gave no claim".into(), s.probe.clone())
        } else {
            (
                format!(
                    "round two's claims did not hold: {}",
                    mine.iter()
                        .map(|c| c.reason.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                s.probe.clone(),
            )
        };
        s.detail = detail.clone();
        answer.could_not_see.push(NotSeenRow {
            what: format!("{}: {detail}", s.surface),
            needs,
        });
    }
    answer.claims.extend(claims);
    Ok(())
}
