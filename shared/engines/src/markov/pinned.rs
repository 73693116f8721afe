//! The carryover of a structured state with pinned claims: Proven's rule for the Planner's
//! bounded steps (ADR-0048), on the engine's token estimate and budget. The spec's cascade
//! carries a text and, past the budget, cuts it to its tail; a review's carried state is what
//! is established, what is suspected, and the claims that await evidence from a part not
//! read yet, and a claim cut or shortened could never meet its evidence. So:
//!
//! - what is established is cut first, oldest first, then what is suspected; an item of
//!   either is at most [`MAX_ITEM_BYTES`];
//! - a claim that awaits evidence is never cut and never shortened: when the budget cannot
//!   hold every one whole, the run stops before anything is cut ([`BoundedError::CarryFull`]);
//! - a claim still awaiting evidence after the last step stops the run by name
//!   ([`BoundedError::OpenClaims`], whose message never holds a claim's text).

use serde::{Deserialize, Serialize};

use super::{tokens, within_budget};

/// An established or suspected item is cut to this; an awaiting claim never is.
pub const MAX_ITEM_BYTES: usize = 400;

/// A claim that awaits evidence from a part not read yet.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Awaiting {
    pub claim: String,
    /// What would settle it (a file, a symbol, a part of the change).
    #[serde(default)]
    pub evidence: String,
}

/// What a step carries to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Carry {
    #[serde(default)]
    pub established: Vec<String>,
    #[serde(default)]
    pub suspected: Vec<String>,
    #[serde(default)]
    pub awaiting: Vec<Awaiting>,
}

/// Why a bounded run stopped (the seeds' CarryFullError and OpenClaimsError).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoundedError {
    #[error(
        "CarryFull: the bounded review is incomplete: after step {step} of {steps} the carried state cannot hold every open claim whole ({fit} of {open} fit within {carry_tokens} estimated tokens); run the whole review (PROVEN_MARKOVIAN=off) or raise PROVEN_MARKOVIAN_CARRY_TOKENS"
    )]
    CarryFull {
        step: usize,
        steps: usize,
        fit: usize,
        open: usize,
        carry_tokens: usize,
    },
    #[error(
        "OpenClaims: the bounded review is incomplete: {open} claim(s) still await evidence after the last of {steps} steps; run the whole review (PROVEN_MARKOVIAN=off)"
    )]
    OpenClaims { steps: usize, open: usize },
}

fn cut_item(text: &str) -> String {
    if text.len() <= MAX_ITEM_BYTES {
        return text.to_string();
    }
    let mut at = MAX_ITEM_BYTES;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text[..at].to_string()
}

fn text_of(carry: &Carry) -> String {
    serde_json::to_string(carry).unwrap_or_default()
}

/// A carried state's size in the engine's estimated tokens (of its JSON).
pub fn carry_tokens(carry: &Carry) -> usize {
    tokens(&text_of(carry)) as usize
}

fn fits(carry: &Carry, bound: usize) -> bool {
    within_budget(&text_of(carry), bound as u64)
}

/// The next carried state from a step's answer, within `bound` estimated tokens: items cut
/// to [`MAX_ITEM_BYTES`], then what is established dropped oldest first, then what is
/// suspected; the awaiting claims are kept whole, or the run stops before any cut.
/// Returns the state and how many items were dropped.
pub fn bound_carry(
    answer: Carry,
    bound: usize,
    (step, steps): (usize, usize),
) -> Result<(Carry, usize), BoundedError> {
    let awaiting_only = Carry {
        awaiting: answer.awaiting.clone(),
        ..Carry::default()
    };
    if !fits(&awaiting_only, bound) {
        // How many of the open claims would fit whole, in order.
        let mut fit = 0;
        for i in 1..=answer.awaiting.len() {
            let some = Carry {
                awaiting: answer.awaiting[..i].to_vec(),
                ..Carry::default()
            };
            if !fits(&some, bound) {
                break;
            }
            fit = i;
        }
        return Err(BoundedError::CarryFull {
            step,
            steps,
            fit,
            open: answer.awaiting.len(),
            carry_tokens: bound,
        });
    }
    let mut carry = Carry {
        established: answer.established.iter().map(|s| cut_item(s)).collect(),
        suspected: answer.suspected.iter().map(|s| cut_item(s)).collect(),
        awaiting: answer.awaiting,
    };
    let mut dropped = 0;
    while !fits(&carry, bound) && !carry.established.is_empty() {
        carry.established.remove(0);
        dropped += 1;
    }
    while !fits(&carry, bound) && !carry.suspected.is_empty() {
        carry.suspected.remove(0);
        dropped += 1;
    }
    Ok((carry, dropped))
}

/// The end of a run of `steps` fixed steps: a claim still awaiting evidence after the last
/// one stops it by name, never a silent success.
pub fn end(carry: &Carry, steps: usize) -> Result<(), BoundedError> {
    if carry.awaiting.is_empty() {
        Ok(())
    } else {
        Err(BoundedError::OpenClaims {
            steps,
            open: carry.awaiting.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_with_a_claim_still_open_after_its_last_step_ends_by_name() {
        let open = Carry {
            awaiting: vec![Awaiting {
                claim: "c".into(),
                evidence: "e".into(),
            }],
            ..Carry::default()
        };
        assert_eq!(
            end(&open, 3),
            Err(BoundedError::OpenClaims { steps: 3, open: 1 })
        );
        assert_eq!(end(&Carry::default(), 3), Ok(()));
    }

    #[test]
    fn the_bound_is_the_engines_budget_of_estimated_tokens() {
        let answer = Carry {
            suspected: vec!["s".repeat(390)],
            ..Carry::default()
        };
        let (kept, dropped) = bound_carry(answer.clone(), 200, (1, 1)).expect("fits");
        assert_eq!((kept.suspected.len(), dropped), (1, 0));
        let (cut, dropped) = bound_carry(answer, 90, (1, 1)).expect("fits");
        assert_eq!((cut.suspected.len(), dropped), (0, 1));
        assert!(carry_tokens(&cut) <= 90);
    }
}
