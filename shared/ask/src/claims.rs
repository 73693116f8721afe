//! The generator's claims and Proven's check of their citations: a claim whose citation
//! does not hold is refuted by the check, before any model sees it.

use proven_pipeline::StepError;
use serde_json::json;

use super::answer::{ClaimRecord, ClaimStatus, GENERATOR, GeneratorAnswer, MAX_CLAIMS, SaidClaim};
use super::files::{self, Checkout, under};
use proven_review::core::model::{Agents, Role, quoted};
use proven_review::core::trace::Trace;

/// A claim as Proven's check leaves it: the first citation that does not hold refutes it.
fn checked(c: &Checkout, said: &SaidClaim) -> Result<(), String> {
    if said.citations.is_empty() {
        return Err("it cites no lines".into());
    }
    for cite in &said.citations {
        let text = files::text(c, &cite.path);
        cite.check(text.as_deref())?;
    }
    Ok(())
}

/// The generator's claims: to the question (round one) or to one surface's probe.
pub(super) async fn generate(
    agents: &Agents,
    checkout: &Checkout,
    question: &str,
    surface: Option<&str>,
    trace: &mut Trace,
) -> Result<Vec<SaidClaim>, StepError> {
    // The files are read off the async workers (git2 blocks).
    let (c, q, sf) = (
        checkout.clone(),
        question.to_string(),
        surface.map(str::to_string),
    );
    let shown =
        proven_review::core::outcome::blocking(move || files::relevant(&c, &q, sf.as_deref()))
            .await?;
    let listing = if checkout.cut {
        format!(
            "{} (the first {} files)",
            quoted(&checkout.files),
            checkout.files.len()
        )
    } else {
        quoted(&checkout.files)
    };
    let user = format!(
        "<question>{}</question>\n<listing>{listing}</listing>\n<files>{}</files>",
        quoted(question),
        quoted(&shown)
    );
    let said: GeneratorAnswer = agents.ask(Role::Generator, GENERATOR, &user, trace).await?;
    let mut claims = said.claims;
    claims.truncate(MAX_CLAIMS);
    trace.push(
        "ask_claims",
        json!({"surface": surface, "claims": claims.len()}),
    );
    Ok(claims)
}

/// Each claim as Proven's citation check leaves it (a failed check refutes it; the rest
/// wait for the refuter, unresolved by default).
pub(super) fn settle_citations(
    checkout: &Checkout,
    said: &[SaidClaim],
    round: u32,
    surface: Option<&str>,
) -> Vec<ClaimRecord> {
    said.iter()
        .map(|s| {
            let check = checked(checkout, s).and_then(|()| match surface {
                Some(sf) if !s.citations.iter().any(|c| under(&c.path, sf)) => Err(format!(
                    "it answers the probe of {sf} without citing a line under it"
                )),
                _ => Ok(()),
            });
            let (status, by, reason) = match check {
                Err(why) => (
                    ClaimStatus::Refuted,
                    "proven",
                    format!("Proven's check of its citation: {why}"),
                ),
                Ok(()) => (
                    ClaimStatus::Unresolved,
                    "refuter",
                    "the refuter was not asked".to_string(),
                ),
            };
            ClaimRecord {
                round,
                claim: s.claim.clone(),
                citations: s.citations.clone(),
                status,
                by: by.into(),
                reason,
                artifact: None,
                surface: surface.map(str::to_string),
            }
        })
        .collect()
}

pub(super) fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}
