//! The proof rule: a finding is `reproduced` only when its test passes on the base and
//! fails on the change, every run completed, each side run at least twice and agreeing.

use serde::{Deserialize, Serialize};

use crate::{Outcome, RunRecord};

/// Runs each side needs: a test that passes once and fails once on the same tree is flaky,
/// and only a second run can show it.
pub const RUNS_PER_SIDE: usize = 2;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "proof", rename_all = "snake_case")]
pub enum Proof {
    /// Every base run passed and every change run failed its test.
    Reproduced,
    NotProved {
        why: NotProved,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Base,
    Change,
}

/// Why the runs prove nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NotProved {
    /// Fewer than [`RUNS_PER_SIDE`] runs on a side.
    TooFewRuns {
        side: Side,
        runs: usize,
    },
    /// A run did not complete (killed, a limit, could not build or collect).
    Incomplete {
        side: Side,
        reason: String,
    },
    /// The runs of one side disagree.
    Flaky {
        side: Side,
    },
    PassesOnBoth,
    FailsOnBoth,
    /// The test fails on the base and passes on the change: the change fixed something.
    FailsOnBaseOnly,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Base => "base",
            Side::Change => "change",
        })
    }
}

impl std::fmt::Display for NotProved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotProved::TooFewRuns { side, runs } => write!(
                f,
                "only {runs} run(s) on the {side}; a proof needs {RUNS_PER_SIDE} on each side"
            ),
            NotProved::Incomplete { side, reason } => {
                write!(f, "a run on the {side} did not complete: {reason}")
            }
            NotProved::Flaky { side } => write!(f, "the runs on the {side} disagree (flaky)"),
            NotProved::PassesOnBoth => f.write_str("the test passes on the base and on the change"),
            NotProved::FailsOnBoth => {
                f.write_str("the test fails on the base too (it fails on both sides)")
            }
            NotProved::FailsOnBaseOnly => {
                f.write_str("the test fails on the base and passes on the change")
            }
        }
    }
}

/// Judges a finding's runs: `base` are the runs of its test on the base tree, `change` on
/// the change tree.
pub fn prove(base: &[RunRecord], change: &[RunRecord]) -> Proof {
    let base: Vec<&Outcome> = base.iter().map(|r| &r.outcome).collect();
    let change: Vec<&Outcome> = change.iter().map(|r| &r.outcome).collect();
    prove_outcomes(&base, &change)
}

pub(crate) fn prove_outcomes(base: &[&Outcome], change: &[&Outcome]) -> Proof {
    let not = |why| Proof::NotProved { why };
    let sides = [(Side::Base, base), (Side::Change, change)];
    // An incomplete run ends the judgement first: the runs that did not happen (a
    // runner may stop a side early after one) could not have made it a proof.
    for (side, runs) in sides {
        if let Some(Outcome::EnvironmentError { reason }) = runs
            .iter()
            .find(|o| matches!(o, Outcome::EnvironmentError { .. }))
        {
            return not(NotProved::Incomplete {
                side,
                reason: reason.clone(),
            });
        }
    }
    for (side, runs) in sides {
        if runs.len() < RUNS_PER_SIDE {
            return not(NotProved::TooFewRuns {
                side,
                runs: runs.len(),
            });
        }
    }
    for (side, runs) in sides {
        if runs.iter().any(|o| *o != runs[0]) {
            return not(NotProved::Flaky { side });
        }
    }
    match (base[0], change[0]) {
        (Outcome::Passed, Outcome::TestFailed) => Proof::Reproduced,
        (Outcome::Passed, _) => not(NotProved::PassesOnBoth),
        (_, Outcome::TestFailed) => not(NotProved::FailsOnBoth),
        _ => not(NotProved::FailsOnBaseOnly),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Outcome = Outcome::Passed;
    const F: Outcome = Outcome::TestFailed;

    fn env() -> Outcome {
        Outcome::EnvironmentError {
            reason: "killed at the timeout".into(),
        }
    }

    #[test]
    fn reproduced_only_when_base_passes_and_change_fails_every_time() {
        assert_eq!(prove_outcomes(&[&P, &P], &[&F, &F]), Proof::Reproduced);
        assert_eq!(
            prove_outcomes(&[&P, &P, &P], &[&F, &F, &F]),
            Proof::Reproduced
        );
    }

    #[test]
    fn every_other_combination_proves_nothing() {
        let e = env();
        let cases: Vec<(Vec<&Outcome>, Vec<&Outcome>, NotProved)> = vec![
            (vec![&P, &P], vec![&P, &P], NotProved::PassesOnBoth),
            (vec![&F, &F], vec![&F, &F], NotProved::FailsOnBoth),
            (vec![&F, &F], vec![&P, &P], NotProved::FailsOnBaseOnly),
            (
                vec![&P, &F],
                vec![&F, &F],
                NotProved::Flaky { side: Side::Base },
            ),
            (
                vec![&P, &P],
                vec![&F, &P],
                NotProved::Flaky { side: Side::Change },
            ),
            (
                vec![&P],
                vec![&F, &F],
                NotProved::TooFewRuns {
                    side: Side::Base,
                    runs: 1,
                },
            ),
            (
                vec![&P, &P],
                vec![&F, &e],
                NotProved::Incomplete {
                    side: Side::Change,
                    reason: "killed at the timeout".into(),
                },
            ),
            (
                vec![&e, &e],
                vec![&F, &F],
                NotProved::Incomplete {
                    side: Side::Base,
                    reason: "killed at the timeout".into(),
                },
            ),
        ];
        for (base, change, why) in cases {
            assert_eq!(
                prove_outcomes(&base, &change),
                Proof::NotProved { why: why.clone() },
                "{base:?} / {change:?}"
            );
        }
    }
}
