//! The Planner over a change too large for one prompt, in bounded steps: the Markovian
//! engine of the Meterless project as the seeds write it (DESIGN section 3, step 4;
//! seeds/architecture.txt, "Bounded steps"). Each step reads one part of the change (a
//! file, or a hunk) and the carried state, never the rest of the change. The engine is
//! `proven_engines::markov`, the one its conformance runner drives: its token estimate, and
//! its pinned carryover ([`proven_engines::markov::pinned`]: the carried state, its bound
//! within the engine's budget rule, and the two stops by name). This module cuts the change
//! into parts, asks the model and traces each step.
//!
//! ```text
//! part 1 + carry₀ ─► answer₁ ─► carry₁ ─► part 2 + carry₁ ─► … ─► part n + carryₙ₋₁ ─► risks
//! ```
//!
//! Invariants:
//! - Bounded steps run only when switched on (`PROVEN_MARKOVIAN`, on by default) and the
//!   whole Planner prompt is above `PROVEN_MARKOVIAN_THRESHOLD` estimated tokens (characters
//!   / 4); otherwise the review is exactly the one-prompt review. The trace says per Planner
//!   run whether bounded steps ran and why not, and each step's part, prompt size and
//!   carried size.
//! - The carried state is what is established, what is suspected, and the claims that await
//!   evidence from a part not read yet. It is bounded by `PROVEN_MARKOVIAN_CARRY_TOKENS`:
//!   what is established is cut first, oldest first, then what is suspected; an item of
//!   either is at most [`MAX_ITEM_BYTES`]. A claim that awaits evidence is never cut and
//!   never shortened: it is carried whole. When the bound cannot hold every awaiting claim
//!   whole, the review stops before anything is cut ([`BoundedError::CarryFull`]).
//! - A claim still awaiting evidence after the last step stops the review by name
//!   ([`BoundedError::OpenClaims`], whose message never holds a claim's text): never a
//!   silent success. Parts beyond [`MAX_PARTS`] are not read, and the review says so.
//! - Every prompt carries the change as quoted data, exactly as the one-prompt Planner does.

use serde::{Deserialize, Serialize};
use serde_json::json;

/// The carried state, its bound and the stops by name are the Markovian engine's (Proven's
/// pinned carryover, [`proven_engines::markov::pinned`]).
pub use proven_engines::markov::pinned::{
    Awaiting, BoundedError, Carry, MAX_ITEM_BYTES, bound_carry, carry_tokens,
};

use crate::core::model::{Agents, Role};
use crate::core::step_name::Name;
use crate::core::trace::Trace;
use crate::core::wire::{Bounds, Risk, StepUnit};
use proven_pipeline::StepError;

/// The most of the diff one part holds: a file (or hunk) larger than this is cut at line
/// ends, so every prompt stays bounded whatever the unit.
pub const PART_BYTES: usize = 48 * 1024;
/// Parts read at most (the rest of a huge change is named as not seen).
pub const MAX_PARTS: usize = 48;
/// Estimated tokens of a text: characters / 4 (the Markovian engine's estimate).
pub fn tokens(text: &str) -> usize {
    proven_engines::markov::tokens(text) as usize
}

/// The diff cut into parts; `cut` when it had more than [`MAX_PARTS`] parts' worth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    /// Each part: what it is (a file, or a file's hunk) and its text.
    pub parts: Vec<(String, String)>,
    pub cut: bool,
}

/// The diff's files, each with its path (`diff --git a/X b/Y`: Y).
fn files(diff: &str) -> Vec<(String, &str)> {
    let mut starts: Vec<usize> = diff
        .match_indices("diff --git ")
        .filter(|(i, _)| *i == 0 || diff.as_bytes()[i - 1] == b'\n')
        .map(|(i, _)| i)
        .collect();
    if starts.first() != Some(&0) && !diff.is_empty() {
        starts.insert(0, 0);
    }
    starts
        .iter()
        .enumerate()
        .map(|(n, &start)| {
            let end = starts.get(n + 1).copied().unwrap_or(diff.len());
            let text = &diff[start..end];
            let path = text
                .lines()
                .next()
                .and_then(|l| l.rsplit_once(" b/"))
                .map_or_else(|| "the change".to_string(), |(_, p)| p.to_string());
            (path, text)
        })
        .collect()
}

/// A text larger than a part, cut at line ends (a line longer than a part at a character
/// boundary).
fn pieces(text: &str) -> Vec<String> {
    if text.len() <= PART_BYTES {
        return vec![text.to_string()];
    }
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        let mut rest = line;
        while !rest.is_empty() {
            let mut take = rest.len().min(PART_BYTES);
            while !rest.is_char_boundary(take) {
                take -= 1;
            }
            if current.len() + take > PART_BYTES && !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            current.push_str(&rest[..take]);
            rest = &rest[take..];
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Cuts a unified diff into parts by `unit`: a file a part, or a hunk a part (each with its
/// file's header lines). A part larger than [`PART_BYTES`] is cut at line ends. At most
/// `max_parts`.
pub fn split(diff: &str, unit: StepUnit, max_parts: usize) -> Parts {
    let mut parts: Vec<(String, String)> = Vec::new();
    for (path, text) in files(diff) {
        let units: Vec<(String, String)> = match unit {
            StepUnit::File => vec![(path.clone(), text.to_string())],
            StepUnit::Hunk => {
                let at: Vec<usize> = text.match_indices("\n@@ ").map(|(i, _)| i + 1).collect();
                match at.first() {
                    None => vec![(path.clone(), text.to_string())],
                    Some(&first) => {
                        let header = &text[..first];
                        at.iter()
                            .enumerate()
                            .map(|(n, &s)| {
                                let e = at.get(n + 1).copied().unwrap_or(text.len());
                                (
                                    format!("{path} hunk {}", n + 1),
                                    format!("{header}{}", &text[s..e]),
                                )
                            })
                            .collect()
                    }
                }
            }
        };
        for (what, body) in units {
            let cut = pieces(&body);
            let n = cut.len();
            for (i, piece) in cut.into_iter().enumerate() {
                let label = if n == 1 {
                    what.clone()
                } else {
                    format!("{what} (piece {} of {n})", i + 1)
                };
                parts.push((label, piece));
            }
        }
    }
    let cut = parts.len() > max_parts;
    parts.truncate(max_parts);
    Parts { parts, cut }
}

/// The Planner's answer to one part: the risks this part shows (an awaiting claim whose
/// evidence this part holds becomes one), and the state to carry on (it replaces the
/// carried one).
#[derive(Debug, Serialize, Deserialize)]
pub struct PartAnswer {
    pub risks: Vec<Risk>,
    #[serde(flatten)]
    pub state: Carry,
}

/// The system prompt of a bounded Planner.
fn system_of(system: &str, n: usize) -> String {
    format!(
        "{system}\nThis change is long, so you read it in {n} parts, one at a time. With each part you get \
         your carried state between <carry> and </carry> (one JSON string): what is established, what is \
         suspected, and the claims that await evidence from a part you have not read. Answer {{\"risks\": \
         [the risks this part shows: an awaiting claim whose evidence this part holds becomes a risk here], \
         \"established\": [...], \"suspected\": [...], \"awaiting\": [{{\"claim\": ..., \"evidence\": what \
         would settle it}}]}}; the state you answer replaces the carried one. Nothing may await evidence \
         after the last part."
    )
}

/// Asks `role`'s model for the risks of a change given in parts, carrying the state from
/// part to part under `bounds`. `system` is the one-prompt Planner's instructions; `context`
/// goes with every part after the change (e.g. the dependency evidence).
pub async fn plan(
    agents: &Agents,
    role: Role,
    system: &str,
    (changed, parts): (&[String], &Parts),
    context: &str,
    bounds: Bounds,
    trace: &mut Trace,
) -> Result<Vec<Risk>, StepError> {
    let n = parts.parts.len();
    let system = system_of(system, n);
    let mut carry = Carry::default();
    let mut risks = Vec::new();
    for (i, (what, part)) in parts.parts.iter().enumerate() {
        let user = format!(
            "Changed files: {}\n<carry>{}</carry>\n<change part=\"{}\" of=\"{n}\">{}</change>{context}",
            crate::core::model::changed_list(changed),
            crate::core::model::quoted(&carry),
            i + 1,
            serde_json::to_string(part).unwrap_or_default(),
        );
        let prompt_tokens = tokens(&system) + tokens(&user);
        let answer: PartAnswer = agents.ask(role, &system, &user, trace).await?;
        risks.extend(answer.risks);
        match bound_carry(answer.state, bounds.carry_tokens, (i + 1, n)) {
            Ok((next, dropped)) => {
                trace.push(
                    "planner_part",
                    json!({"role": role.as_str(), "part": i + 1, "of": n, "unit": bounds.unit.as_str(),
                           "what": what, "prompt_tokens": prompt_tokens,
                           "carried_tokens": carry_tokens(&next), "dropped": dropped,
                           "awaiting": next.awaiting.len()}),
                );
                carry = next;
            }
            Err(e) => return Err(stop(trace, role, e)),
        }
    }
    match proven_engines::markov::pinned::end(&carry, n) {
        Ok(()) => Ok(risks),
        Err(e) => Err(stop(trace, role, e)),
    }
}

/// A stop by name, said on a bounded-steps line of the trace too.
fn stop(trace: &mut Trace, role: Role, e: BoundedError) -> StepError {
    let said = e.to_string();
    trace.push(
        "bounded_steps",
        json!({"role": role.as_str(), "stopped": said}),
    );
    StepError::Permanent(format!("{role}: {said}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, lines: usize, width: usize) -> String {
        let mut s =
            format!("diff --git a/{name} b/{name}\n--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n");
        for i in 0..lines {
            s.push_str(&format!("+{i:0>width$}\n"));
        }
        s
    }

    #[test]
    fn a_file_a_part_or_a_hunk_a_part_and_nothing_lost() {
        let (a, b) = (file("a", 10, 10), file("b", 10, 10));
        let diff = format!("{a}{b}");
        let parts = split(&diff, StepUnit::File, 10);
        assert_eq!(parts.parts.len(), 2);
        assert_eq!(parts.parts[0], ("a".to_string(), a.clone()));
        let two_hunks =
            "diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1 +1 @@\n-x\n+y\n@@ -9 +9 @@\n-p\n+q\n";
        let hunks = split(two_hunks, StepUnit::Hunk, 10);
        assert_eq!(
            hunks.parts,
            [
                (
                    "c hunk 1".to_string(),
                    "diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1 +1 @@\n-x\n+y\n".to_string()
                ),
                (
                    "c hunk 2".to_string(),
                    "diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -9 +9 @@\n-p\n+q\n".to_string()
                )
            ],
            "each hunk with its file's header"
        );
        // A file larger than a part is cut at line ends, never past the part's size.
        let huge = file("h", 5000, 30);
        let cut = split(&huge, StepUnit::File, 100);
        assert!(cut.parts.len() > 1 && cut.parts.iter().all(|(_, p)| p.len() <= PART_BYTES));
        assert_eq!(
            cut.parts
                .iter()
                .map(|(_, p)| p.as_str())
                .collect::<String>(),
            huge
        );
        let many: String = (0..20).map(|i| file(&format!("f{i}"), 4, 3)).collect();
        let capped = split(&many, StepUnit::File, 3);
        assert_eq!((capped.parts.len(), capped.cut), (3, true));
    }

    #[test]
    fn the_carry_cuts_established_oldest_first_then_suspected_and_never_an_awaiting_claim() {
        let long = "y".repeat(900);
        let answer = Carry {
            established: (0..6)
                .map(|i| format!("e{i} {}", "z".repeat(300)))
                .collect(),
            suspected: vec!["s0".into(), "s1".into()],
            awaiting: vec![Awaiting {
                claim: long.clone(),
                evidence: "big_b.py".into(),
            }],
        };
        let (carry, dropped) = bound_carry(answer, 500, (1, 3)).expect("fits");
        assert_eq!(
            carry.awaiting[0].claim, long,
            "carried whole, past the item limit"
        );
        assert!(carry.established.len() < 6 && dropped >= 1);
        assert!(
            carry
                .established
                .first()
                .is_none_or(|e| !e.starts_with("e0")),
            "the oldest goes first: {:?}",
            carry.established
        );
        assert!(carry_tokens(&carry) <= 500);
        // Established all gone before a suspected item goes.
        let answer = Carry {
            established: vec!["e".repeat(200)],
            suspected: vec!["s".repeat(390), "t".repeat(390)],
            awaiting: Vec::new(),
        };
        let (carry, _) = bound_carry(answer, 150, (1, 2)).expect("fits");
        assert!(carry.established.is_empty());
        assert_eq!(carry.suspected.len(), 1);
        assert!(carry.suspected[0].starts_with('t'));
    }

    #[test]
    fn a_carry_that_cannot_hold_every_awaiting_claim_whole_stops_before_any_cut() {
        let answer = Carry {
            established: vec!["kept".into()],
            suspected: Vec::new(),
            awaiting: vec![
                Awaiting {
                    claim: "a".repeat(100),
                    evidence: "x".into(),
                },
                Awaiting {
                    claim: "b".repeat(3000),
                    evidence: "y".into(),
                },
            ],
        };
        let e = bound_carry(answer, 200, (2, 5)).expect_err("too much awaits");
        assert_eq!(
            e,
            BoundedError::CarryFull {
                step: 2,
                steps: 5,
                fit: 1,
                open: 2,
                carry_tokens: 200
            }
        );
        let said = e.to_string();
        assert!(
            said.contains("PROVEN_MARKOVIAN=off") && said.contains("PROVEN_MARKOVIAN_CARRY_TOKENS")
        );
        assert!(!said.contains("aaaa"), "no claim text");
        let open = BoundedError::OpenClaims { steps: 3, open: 1 }.to_string();
        assert_eq!(
            open,
            "OpenClaims: the bounded review is incomplete: 1 claim(s) still await evidence after the last of 3 steps; run the whole review (PROVEN_MARKOVIAN=off)"
        );
    }

    #[test]
    fn tokens_are_characters_over_four() {
        assert_eq!(tokens(""), 0);
        assert_eq!(tokens("abcd"), 1);
        assert_eq!(tokens("abcde"), 2);
        assert_eq!(tokens("éééé"), 1, "characters, not bytes");
    }
}
