//! The Planner over a change too large for one prompt, in bounded steps (DESIGN section 3,
//! step 4; after the Markovian engine of the Meterless project): each step reads one part
//! of the change and the carried state, never the whole history.
//!
//! ```text
//! part 1 + carry₀ ─► answer₁ ─► carry₁ ─► part 2 + carry₁ ─► … ─► part n + carryₙ₋₁ ─► risks
//! ```
//!
//! Invariants:
//! - A part is whole files of the diff, or one file's lines when it alone is too large; a
//!   part is never more than [`PART_BYTES`], and the changed-file list and the dependency
//!   evidence beside it are bounded too, so every prompt is.
//! - The carry is the risks named so far and the questions the Planner left open for later
//!   parts. A named risk is never cut from it (a claim awaiting evidence is never dropped);
//!   a carry larger than [`MAX_CARRY_BYTES`] stops the step by name instead.
//! - A question still open after the last part stops the step by name: never a silent
//!   success. Parts beyond [`MAX_PARTS`] are not read, and the review says so.
//! - Every prompt carries the change as quoted data, exactly as the one-prompt Planner does.

use crate::step_name::Name;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::Trace;
use crate::model::{Agents, Role};
use crate::wire::Risk;
use proven_pipeline::StepError;

/// The most of the diff one prompt holds.
pub const PART_BYTES: usize = 48 * 1024;
/// Parts read at most (the rest of a huge change is named as not seen).
pub const MAX_PARTS: usize = 24;
/// The carried state's limit.
pub const MAX_CARRY_BYTES: usize = 16 * 1024;

/// The diff cut into parts; `cut` when it had more than [`MAX_PARTS`] parts' worth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    pub parts: Vec<String>,
    pub cut: bool,
}

/// Cuts a unified diff into parts of at most `part_bytes`: whole files together while they
/// fit; a file larger than a part alone is cut at line ends (a line longer than a part is
/// cut at a character boundary). At most `max_parts`.
pub fn split(diff: &str, part_bytes: usize, max_parts: usize) -> Parts {
    let mut files: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, _) in diff.match_indices("diff --git ") {
        if (i == 0 || diff.as_bytes()[i - 1] == b'\n') && i > start {
            files.push(&diff[start..i]);
            start = i;
        }
    }
    if start < diff.len() {
        files.push(&diff[start..]);
    }
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    let push = |piece: &str, current: &mut String, parts: &mut Vec<String>| {
        if !current.is_empty() && current.len() + piece.len() > part_bytes {
            parts.push(std::mem::take(current));
        }
        current.push_str(piece);
    };
    for file in files {
        if file.len() <= part_bytes {
            push(file, &mut current, &mut parts);
            continue;
        }
        // A file too large for a part starts its own parts.
        if !current.is_empty() {
            parts.push(std::mem::take(&mut current));
        }
        for line in file.split_inclusive('\n') {
            let mut rest = line;
            while rest.len() > part_bytes {
                let mut at = part_bytes;
                while !rest.is_char_boundary(at) {
                    at -= 1;
                }
                push(&rest[..at], &mut current, &mut parts);
                rest = &rest[at..];
            }
            push(rest, &mut current, &mut parts);
        }
    }
    if !current.is_empty() {
        parts.push(current);
    }
    let cut = parts.len() > max_parts;
    parts.truncate(max_parts);
    Parts { parts, cut }
}

/// What the Planner carries from one part to the next.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Carry {
    pub risks: Vec<Risk>,
    pub open: Vec<String>,
}

/// A Planner's answer to one part: the risks it names in that part, and the questions a
/// later part must settle (they replace the previous ones).
#[derive(Debug, Serialize, Deserialize)]
pub struct PartAnswer {
    pub risks: Vec<Risk>,
    #[serde(default)]
    pub open: Vec<String>,
}

/// Asks `role`'s model for the risks of a change given in parts, carrying the state from
/// part to part. `system` is the one-prompt Planner's instructions; `context` goes with
/// every part after the change (e.g. the dependency evidence).
pub async fn plan(
    agents: &Agents,
    role: Role,
    system: &str,
    changed: &[String],
    parts: &Parts,
    context: &str,
    trace: &mut Trace,
) -> Result<Vec<Risk>, StepError> {
    let n = parts.parts.len();
    let system = format!(
        "{system}\nThis change is long, so you read it in {n} parts, one at a time. With each part you get \
         your carried state between <carry> and </carry> (one JSON string): the risks you named so far and \
         the questions you left open. Answer {{\"risks\": [the risks this part shows, not the ones carried], \
         \"open\": [questions a later part must settle]}}; your open list replaces the carried one. Nothing \
         may stay open after the last part."
    );
    let mut carry = Carry::default();
    for (i, part) in parts.parts.iter().enumerate() {
        let user = format!(
            "Changed files: {}\n<carry>{}</carry>\n<change part=\"{}\" of=\"{n}\">{}</change>{context}",
            crate::model::changed_list(changed),
            crate::model::quoted(&carry),
            i + 1,
            serde_json::to_string(part).unwrap_or_default(),
        );
        let answer: PartAnswer = agents.ask(role, &system, &user, trace).await?;
        trace.push(
            "planner_part",
            json!({"role": role.as_str(), "part": i + 1, "of": n, "bytes": part.len(),
                   "risks": answer.risks.len(), "open": answer.open}),
        );
        carry.risks.extend(answer.risks);
        carry.open = answer.open;
        let size = serde_json::to_string(&carry).map_or(usize::MAX, |s| s.len());
        if size > MAX_CARRY_BYTES {
            return Err(StepError::Permanent(format!(
                "{role}: the carried state overflowed after part {} of {n} ({size} bytes, the limit is {} KiB); \
                 no risk is dropped to fit",
                i + 1,
                MAX_CARRY_BYTES / 1024
            )));
        }
    }
    if !carry.open.is_empty() {
        return Err(StepError::Permanent(format!(
            "{role}: questions still open after the last part of the change: {}",
            carry.open.join("; ")
        )));
    }
    Ok(carry.risks)
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
    fn files_stay_whole_while_they_fit_and_a_large_one_is_cut_at_line_ends() {
        let (a, b, c) = (file("a", 10, 10), file("b", 10, 10), file("c", 100, 30));
        let diff = format!("{a}{b}{c}");
        let parts = split(&diff, 1024, 10);
        assert!(!parts.cut);
        assert_eq!(parts.parts.concat(), diff, "nothing lost, nothing repeated");
        assert_eq!(
            parts.parts[0],
            format!("{a}{b}"),
            "small files share a part"
        );
        assert!(parts.parts.iter().all(|p| p.len() <= 1024));
        assert!(parts.parts[1].starts_with("diff --git a/c"));
        assert!(
            parts.parts[1..].iter().all(|p| p.ends_with('\n')),
            "cut at line ends"
        );
    }

    #[test]
    fn a_huge_change_is_cut_at_the_part_limit_and_says_so() {
        let diff: String = (0..20).map(|i| file(&format!("f{i}"), 40, 30)).collect();
        let parts = split(&diff, 1024, 3);
        assert_eq!(parts.parts.len(), 3);
        assert!(parts.cut);
        let small = split(&file("x", 3, 3), PART_BYTES, MAX_PARTS);
        assert_eq!((small.parts.len(), small.cut), (1, false));
        assert_eq!(split("", PART_BYTES, MAX_PARTS).parts.len(), 0);
    }

    #[test]
    fn a_line_longer_than_a_part_is_cut_at_a_character_boundary() {
        let line = format!("+{}\n", "é".repeat(800));
        let diff = format!("diff --git a/x b/x\n{line}");
        let parts = split(&diff, 100, 100);
        assert_eq!(parts.parts.concat(), diff);
        assert!(parts.parts.iter().all(|p| p.len() <= 100));
    }
}
