//! The Markovian engine's generic loop, as Meterless's specification writes it (engines/
//! markovian, AGENTS.md sections 2, 3, 4.3–4.5, 6, 7 and 14): a chunk configuration with its
//! bounds, the marker protocol, the carryover cascade, the overlap window, the efficiency
//! model and the reflection pass. It is the engine its conformance runner drives (`proven
//! conformance-serve --engine markovian`), a step at a time, with no IO: the caller calls the
//! generator and hands each answer back.
//!
//! Reviews run it too: the Planner's bounded steps (`proven_review::core::bounded`) count tokens
//! with [`tokens`], hold their carried state to its budget with [`within_budget`] (the rule
//! the carryover cascade uses), and carry and end their steps by [`pinned`]: the carryover
//! of a structured state whose claims awaiting evidence are pinned (Proven's rule, ADR-0048,
//! where the spec's cascade would cut a text to its tail).

pub mod pinned;

use serde::{Deserialize, Serialize};

/// Template overhead and output budget a chunk must leave room for (the spec's engine
/// constants).
pub const FRAMING_TOKENS: u64 = 400;
pub const OUTPUT_BUDGET: u64 = 1200;
/// The shortest state after a marker that is taken as the carryover (the cascade's first
/// rule).
pub const MIN_STATE_CHARS: usize = 24;
const STATE_MARKERS: [&str; 4] = [
    "[STATE_CHECKPOINT]",
    "@@@STATE@@@",
    "[STATE]",
    "---STATE---",
];
const FINAL_MARKERS: [&str; 4] = ["[TASK_COMPLETE]", "@@@FINAL@@@", "[FINAL]", "---FINAL---"];

/// Estimated tokens: characters / 4, rounded up.
pub fn tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Whether `text` fits a carryover budget of `budget_tokens` estimated tokens: the bound the
/// cascade holds a carried state to, and the bounded review its carried state.
pub fn within_budget(text: &str, budget_tokens: u64) -> bool {
    #[cfg(any(test, feature = "mutation"))]
    if crate::mutation::on(crate::mutation::Rule::MarkovCarryBudget) {
        return true;
    }
    tokens(text) <= budget_tokens
}

/// A field left out takes the spec's default value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ChunkConfig {
    pub chunk_size: u64,
    pub max_chunks: u64,
    pub carryover_tokens: u64,
    pub overlap_tokens: u64,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig {
            chunk_size: 8000,
            max_chunks: 24,
            carryover_tokens: 800,
            overlap_tokens: 0,
        }
    }
}

impl ChunkConfig {
    /// Checks every bound (a value outside one is refused by name, never clamped) and that a
    /// chunk holds the framing, the carryover and the output budget.
    pub fn check(self) -> Result<ChunkConfig, String> {
        let bound = |name: &str, v: u64, min: u64, max: u64, step: u64| {
            if v < min || v > max || !v.is_multiple_of(step) {
                Err(format!(
                    "{name} = {v} is out of bounds: {min} to {max}{}",
                    if step > 1 {
                        format!(", in steps of {step}")
                    } else {
                        String::new()
                    }
                ))
            } else {
                Ok(())
            }
        };
        bound("chunkSize", self.chunk_size, 1000, 128_000, 1000)?;
        bound("maxChunks", self.max_chunks, 1, 32, 1)?;
        bound("carryoverTokens", self.carryover_tokens, 128, 32_768, 128)?;
        bound("overlapTokens", self.overlap_tokens, 0, 4096, 1)?;
        let need = FRAMING_TOKENS + self.carryover_tokens + OUTPUT_BUDGET;
        if self.chunk_size < need {
            return Err(format!(
                "chunkSize = {} cannot hold the framing ({FRAMING_TOKENS}), the carryover ({}) and the \
                 output budget ({OUTPUT_BUDGET}): it needs at least {need}",
                self.chunk_size, self.carryover_tokens
            ));
        }
        Ok(self)
    }
}

/// The efficiency model's totals for `n` steps at the spec's constants (F=400, G=200, S=300,
/// O=1200, C=800): (naive, Markovian, efficiency).
pub fn model_totals(n: u64) -> (u64, u64, f64) {
    let (f, g, s, o, c) = (400, 200, 300, 1200, 800);
    let naive = n * (f + g + s) + o * n * n.saturating_sub(1) / 2;
    let markovian = n * (f + g + c + s);
    let efficiency = if naive == 0 {
        0.0
    } else {
        (naive as f64 - markovian as f64) / naive as f64
    };
    (naive, markovian, efficiency)
}

/// A run's efficiency against its own configuration's carryover (never the current one).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Efficiency {
    pub standard_cost: u64,
    pub markovian_cost: u64,
    pub tokens_saved: u64,
    pub efficiency_percent: f64,
}

pub fn run_efficiency(chunk_tokens: &[u64], carryover_tokens: u64) -> Efficiency {
    let mut history = 0;
    let mut standard = 0;
    for t in chunk_tokens {
        standard += history + t;
        history += t;
    }
    let markovian = chunk_tokens.len() as u64 * carryover_tokens + history;
    let saved = standard.saturating_sub(markovian);
    Efficiency {
        standard_cost: standard,
        markovian_cost: markovian,
        tokens_saved: saved,
        efficiency_percent: if standard == 0 {
            0.0
        } else {
            saved as f64 / standard as f64 * 100.0
        },
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    pub id: u64,
    pub tokens: u64,
    pub carryover: String,
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Running,
    Reflecting,
    Completed,
    MaxChunks,
    Errored,
}

/// A run between two generator calls: what to ask next (None: the run has ended).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub goal: String,
    pub chunk_config: ChunkConfig,
    pub reflect: bool,
    pub chunks: Vec<Chunk>,
    pub carryover: String,
    pub status: Status,
    /// The prompt the caller sends the generator next.
    pub next_prompt: Option<String>,
    #[serde(flatten)]
    pub made: Made,
}

/// What a run has made so far (flattened into the run's record).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Made {
    /// The chunks' display content, markers removed (and the reflection's, appended).
    pub output: String,
    /// Every number's source: chars / 4 here, never a provider's count.
    pub token_label: String,
    /// Against the run's own configuration, once it has ended.
    pub efficiency: Option<Efficiency>,
    /// Why the generator failed, when the run errored.
    pub error: Option<String>,
}

fn find_marker(text: &str, markers: &[&str]) -> Option<(usize, usize)> {
    markers
        .iter()
        .filter_map(|m| text.find(m).map(|at| (at, m.len())))
        .min_by_key(|(at, _)| *at)
}

/// The display content (every marker and the state after a state marker removed), the state
/// text, and whether the chunk is final.
pub fn read_chunk(text: &str) -> (String, Option<String>, bool) {
    let done = find_marker(text, &FINAL_MARKERS).is_some();
    let (display, state) = match find_marker(text, &STATE_MARKERS) {
        Some((at, len)) => (&text[..at], Some(text[at + len..].trim().to_string())),
        None => (text, None),
    };
    let mut display = display.to_string();
    for m in FINAL_MARKERS.iter().chain(&STATE_MARKERS) {
        display = display.replace(m, "");
    }
    (display.trim().to_string(), state, done)
}

/// The carryover cascade without a compressor: the state after the marker when it is long
/// enough and within budget; else the chunk's tail, cut at a word to the budget.
pub fn carryover(state: Option<&str>, display: &str, budget_tokens: u64) -> String {
    let budget_chars = (budget_tokens * 4) as usize;
    if let Some(s) = state
        && s.chars().count() >= MIN_STATE_CHARS
        && within_budget(s, budget_tokens)
    {
        return s.to_string();
    }
    let words: Vec<&str> = display.split_whitespace().collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut used = 0;
    for w in words.iter().rev() {
        if used + w.chars().count() + 1 > budget_chars {
            break;
        }
        used += w.chars().count() + 1;
        kept.push(w);
    }
    kept.reverse();
    kept.join(" ")
}

impl Run {
    /// A run of `goal` under `config` (checked), with the first chunk's prompt.
    pub fn start(goal: &str, config: ChunkConfig, reflect: bool) -> Result<Run, String> {
        let config = config.check()?;
        let mut run = Run {
            goal: goal.to_string(),
            chunk_config: config,
            reflect,
            chunks: Vec::new(),
            carryover: String::new(),
            status: Status::Running,
            next_prompt: None,
            made: Made {
                token_label: "estimated".into(),
                ..Made::default()
            },
        };
        run.next_prompt = Some(run.prompt());
        Ok(run)
    }

    fn prompt(&self) -> String {
        let rules = "End a chunk that is not the last with [STATE_CHECKPOINT] and the state to carry \
                     (COMPLETED / REMAINING / DECISIONS / CONTEXT); end the last with [TASK_COMPLETE]. \
                     One marker a chunk.";
        match self.chunks.last() {
            None => format!("Goal: {}\nAnalyse, plan and start.\n{rules}", self.goal),
            Some(last) => {
                let goal: String = self.goal.chars().take(200).collect();
                let mut p = format!(
                    "Goal (continued): {goal}\n[CARRYOVER]\n{}\n[/CARRYOVER]\n",
                    self.carryover
                );
                if self.chunk_config.overlap_tokens > 0 {
                    let n = (self.chunk_config.overlap_tokens * 4) as usize;
                    let chars: Vec<char> = last.content.chars().collect();
                    let tail: String = chars[chars.len().saturating_sub(n)..].iter().collect();
                    p.push_str(&format!("[OVERLAP]\n{tail}\n[/OVERLAP]\n"));
                }
                p.push_str(&format!("Continue from the carried state only.\n{rules}"));
                p
            }
        }
    }

    fn finish(&mut self, status: Status) {
        self.status = status;
        self.next_prompt = None;
        let tokens: Vec<u64> = self.chunks.iter().map(|c| c.tokens).collect();
        self.made.efficiency = Some(run_efficiency(&tokens, self.chunk_config.carryover_tokens));
    }

    /// Takes the generator's answer to `next_prompt`.
    pub fn answer(&mut self, text: &str) {
        if self.status == Status::Reflecting {
            self.made.output.push_str("\n\n");
            self.made.output.push_str(read_chunk(text).0.as_str());
            return self.finish(Status::Completed);
        }
        let (display, state, done) = read_chunk(text);
        let carried = self.carryover.clone();
        self.carryover = carryover(
            state.as_deref(),
            &display,
            self.chunk_config.carryover_tokens,
        );
        self.chunks.push(Chunk {
            id: self.chunks.len() as u64 + 1,
            tokens: tokens(&display),
            carryover: carried,
            content: display.clone(),
        });
        if !self.made.output.is_empty() {
            self.made.output.push_str("\n\n");
        }
        self.made.output.push_str(&display);
        if done {
            if self.reflect {
                self.status = Status::Reflecting;
                self.next_prompt = Some(format!(
                    "Reflect on the finished work for: {}\nFinal state: {}\nWork:\n{}",
                    self.goal,
                    self.carryover,
                    self.made.output.chars().take(16_000).collect::<String>()
                ));
            } else {
                self.finish(Status::Completed);
            }
        } else if self.chunks.len() as u64 >= self.chunk_config.max_chunks {
            self.finish(Status::MaxChunks);
        } else {
            self.next_prompt = Some(self.prompt());
        }
    }

    /// The generator failed: during reflection the run still completed; before, it errored.
    pub fn failed(&mut self, why: &str) {
        if self.status == Status::Reflecting {
            self.finish(Status::Completed);
        } else {
            self.made.error = Some(why.to_string());
            self.finish(Status::Errored);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(carry: u64, overlap: u64) -> ChunkConfig {
        ChunkConfig {
            chunk_size: 4000,
            carryover_tokens: carry,
            overlap_tokens: overlap,
            ..ChunkConfig::default()
        }
    }

    #[test]
    fn the_models_numbers_are_the_specs_worked_examples() {
        assert_eq!(model_totals(5).0, 16_500);
        assert_eq!(model_totals(10), (63_000, 17_000, 46_000.0 / 63_000.0));
        let (naive, markovian, e) = model_totals(20);
        assert_eq!((naive, markovian), (246_000, 34_000));
        assert!((e * 100.0 - 86.18).abs() < 0.01);
        let e = run_efficiency(&[1000; 4], 512);
        assert_eq!(
            (e.standard_cost, e.markovian_cost, e.tokens_saved),
            (10_000, 6_048, 3_952)
        );
        assert_ne!(
            run_efficiency(&[1000; 4], 2048).tokens_saved,
            e.tokens_saved
        );
    }

    #[test]
    fn a_config_out_of_bounds_is_refused_never_clamped() {
        let e = ChunkConfig {
            chunk_size: 128,
            ..config(640, 0)
        }
        .check()
        .expect_err("too small");
        assert!(e.starts_with("chunkSize = 128 is out of bounds"), "{e}");
        assert!(config(640, 0).check().is_ok());
        assert!(
            config(100, 0).check().is_err(),
            "below the carryover's minimum"
        );
        assert!(config(640, 5000).check().is_err());
        let tight = ChunkConfig {
            chunk_size: 2000,
            ..config(1024, 0)
        };
        assert!(
            tight
                .check()
                .expect_err("no room")
                .contains("needs at least 2624")
        );
    }

    #[test]
    fn markers_end_chunks_drive_completion_and_never_reach_the_output() {
        let mut run = Run::start("g", config(640, 0), false).expect("start");
        run.answer("step one\n[STATE_CHECKPOINT]\nCOMPLETED: step one\nREMAINING: two");
        assert_eq!(run.carryover, "COMPLETED: step one\nREMAINING: two");
        assert!(
            run.next_prompt
                .as_deref()
                .is_some_and(|p| p.contains("REMAINING: two"))
        );
        run.answer("step two [TASK_COMPLETE]");
        assert_eq!((run.status, run.chunks.len()), (Status::Completed, 2));
        assert_eq!(run.made.output, "step one\n\nstep two");
        assert_eq!(
            run.chunks[1].carryover,
            "COMPLETED: step one\nREMAINING: two"
        );
        // A state too short to carry falls back to the chunk's tail within the budget.
        assert_eq!(carryover(Some("ok"), "a b c", 128), "a b c");
        // Past maxChunks without a final marker the run ends by its cap.
        let mut capped = Run::start(
            "g",
            ChunkConfig {
                max_chunks: 1,
                ..config(640, 0)
            },
            false,
        )
        .expect("start");
        capped.answer("no marker at all");
        assert_eq!(capped.status, Status::MaxChunks);
    }

    #[test]
    fn the_overlap_window_carries_the_last_chunks_tail_and_reflection_failure_completes() {
        let mut run = Run::start("g", config(640, 2), true).expect("start");
        run.answer("alpha beta gamma [STATE_CHECKPOINT] COMPLETED: alpha and beta, gamma next");
        let p = run.next_prompt.clone().expect("a prompt");
        assert!(p.contains("[OVERLAP]\nta gamma\n[/OVERLAP]"), "{p}");
        run.answer("done [TASK_COMPLETE]");
        assert_eq!(run.status, Status::Reflecting);
        run.failed("provider exploded");
        assert_eq!(
            (run.status, run.made.error.as_deref()),
            (Status::Completed, None)
        );
        let mut errored = Run::start("g", config(640, 0), false).expect("start");
        errored.failed("down");
        assert_eq!(errored.status, Status::Errored);
    }
}
