//! The proof rule: a finding is `reproduced` only when its test passes on the base and
//! fails on the change, every run completed, each side run at least twice and agreeing.

use serde::{Deserialize, Serialize};

use crate::record::RunKind;
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
    /// The runs did not all have one environment (image or interpreter): a test that passes
    /// on one Node or Python and fails on another shows the toolchain, not the change.
    DifferentEnvironments {
        side: Side,
        /// The first base run's image and interpreter, in words.
        first: String,
        /// The run's that differs.
        other: String,
    },
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
            NotProved::DifferentEnvironments { side, first, other } => write!(
                f,
                "the runs had different environments: the base ran on {first}, a run on the {side} on {other}"
            ),
        }
    }
}

/// Judges a finding's runs: `base` are the runs of its test on the base tree, `change` on
/// the change tree.
pub fn prove(base: &[RunRecord], change: &[RunRecord]) -> Proof {
    let base_outcomes: Vec<Outcome> = base.iter().map(evidence_outcome).collect();
    let change_outcomes: Vec<Outcome> = change.iter().map(evidence_outcome).collect();
    let proof = prove_outcomes(
        &base_outcomes.iter().collect::<Vec<_>>(),
        &change_outcomes.iter().collect::<Vec<_>>(),
    );
    // Outcomes that would prove hold only when every run had one environment: the sides
    // may choose their toolchain apart (a tree's own version files, a retry on a newer
    // Node), and then the difference is the toolchain's as much as the change's.
    if proof != Proof::Reproduced {
        return proof;
    }
    match different_environment(base, change) {
        Some(why) => Proof::NotProved { why },
        None => proof,
    }
}

/// The run's environment in words: the image it ran (by id) and its interpreter.
fn environment(r: &RunRecord) -> String {
    match &r.interpreter {
        Some(i) => format!("{} ({}, {} {})", r.image_id, r.image, r.language, i.version),
        None => format!("{} ({})", r.image_id, r.image),
    }
}

/// The first run whose image or interpreter differs from the first base run's.
fn different_environment(base: &[RunRecord], change: &[RunRecord]) -> Option<NotProved> {
    let first = base.first()?;
    let key = |r: &RunRecord| {
        (
            r.image_id.clone(),
            r.interpreter.as_ref().map(|i| i.version.clone()),
        )
    };
    let sides = [(Side::Base, base), (Side::Change, change)];
    sides.into_iter().find_map(|(side, runs)| {
        let other = runs.iter().find(|r| key(r) != key(first))?;
        Some(NotProved::DifferentEnvironments {
            side,
            first: environment(first),
            other: environment(other),
        })
    })
}

/// A record's outcome as evidence, checked again against its counts: a record that says
/// "passed" without a test that ran and passed, or "test failed" without a test the runner
/// reported failing (a hand-edited cassette, a plain command), is no evidence either way.
pub fn evidence_outcome(record: &RunRecord) -> Outcome {
    let env = |reason: &str| Outcome::EnvironmentError {
        reason: reason.to_string(),
    };
    if record.kind == RunKind::Command {
        return env("a plain command is not a test run");
    }
    match (&record.outcome, record.tests) {
        (Outcome::Passed, Some(t)) if t.passed > 0 && t.failed + t.errors == 0 => Outcome::Passed,
        (Outcome::Passed, _) => env("no test ran and passed"),
        (Outcome::TestFailed, Some(t)) if t.failed > 0 => Outcome::TestFailed,
        (Outcome::TestFailed, _) => env("the runner reported no failing test"),
        (other, _) => other.clone(),
    }
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

    fn record(outcome: Outcome, tests: Option<crate::TestCounts>, kind: RunKind) -> RunRecord {
        RunRecord {
            run_id: "r".into(),
            container: "c".into(),
            pooled: false,
            language: crate::Language::Python,
            image: "i".into(),
            interpreter: None,
            setup: Vec::new(),
            test_tools: Vec::new(),
            image_id: "sha256:0".into(),
            tree: crate::tree::TreeRecord {
                repository: "/r".into(),
                revision: "HEAD".into(),
                commit: "0".repeat(40),
                patch_sha256: None,
                added_files: Vec::new(),
                left_out: Vec::new(),
                missing: Vec::new(),
                checkout: None,
            },
            dependencies: None,
            command: vec!["pytest".into()],
            limits: crate::record::AppliedLimits {
                memory_bytes: 1,
                pids: 1,
                cpus: 1.0,
                scratch_bytes: 1,
                timeout_ms: 1,
                output_kill_after_bytes: 1,
            },
            started_at: String::new(),
            duration_ms: 1,
            exit_code: Some(0),
            timed_out: false,
            killed: None,
            pids_limit_reached: false,
            tests,
            failing: Vec::new(),
            kind,
            output: crate::record::OutputRecord {
                head: String::new(),
                tail: String::new(),
                bytes: 0,
                sha256: String::new(),
                truncated: false,
            },
            outcome,
        }
    }

    #[test]
    fn no_runs_are_never_evidence() {
        // A replay whose cassette holds empty run lists: nothing ran, nothing is proved.
        assert!(matches!(
            prove(&[], &[]),
            Proof::NotProved {
                why: NotProved::TooFewRuns { .. }
            }
        ));
    }

    #[test]
    fn records_that_claim_more_than_their_counts_prove_nothing() {
        let t = |passed, failed, skipped| {
            Some(crate::TestCounts {
                passed,
                failed,
                skipped,
                errors: 0,
            })
        };
        let good_base = record(P, t(1, 0, 0), RunKind::Tests);
        let good_change = record(F, t(0, 1, 0), RunKind::Tests);
        assert_eq!(
            prove(
                &[good_base.clone(), good_base.clone()],
                &[good_change.clone(), good_change.clone()]
            ),
            Proof::Reproduced
        );
        for bad_base in [
            record(P, None, RunKind::Tests),
            record(P, t(0, 0, 1), RunKind::Tests),
            record(P, t(1, 0, 0), RunKind::Command),
        ] {
            let proof = prove(
                &[bad_base.clone(), bad_base],
                &[good_change.clone(), good_change.clone()],
            );
            assert!(
                matches!(
                    proof,
                    Proof::NotProved {
                        why: NotProved::Incomplete {
                            side: Side::Base,
                            ..
                        }
                    }
                ),
                "{proof:?}"
            );
        }
        let no_failure = record(F, t(1, 0, 0), RunKind::Tests);
        assert!(matches!(
            prove(
                &[good_base.clone(), good_base],
                &[no_failure.clone(), no_failure]
            ),
            Proof::NotProved {
                why: NotProved::Incomplete {
                    side: Side::Change,
                    ..
                }
            }
        ));
    }

    /// Issue 30's forged-evidence family: the sides choose their toolchain apart (a
    /// change's .nvmrc, a retry on a newer Node), and a test that passes on one Node and
    /// fails on another would read as the change's doing.
    #[test]
    fn runs_on_different_images_or_interpreters_prove_nothing() {
        let t = |passed, failed| {
            Some(crate::TestCounts {
                passed,
                failed,
                skipped: 0,
                errors: 0,
            })
        };
        let on = |r: RunRecord, image_id: &str, version: Option<&str>| RunRecord {
            image_id: image_id.into(),
            interpreter: version.map(|v| crate::record::InterpreterChoice {
                version: v.into(),
                image: "i".into(),
                because: "the project's .nvmrc".into(),
            }),
            ..r
        };
        let base = record(P, t(1, 0), RunKind::Tests);
        let change = record(F, t(0, 1), RunKind::Tests);
        let (b8, c8) = (
            on(base.clone(), "sha256:8", Some("8")),
            on(change.clone(), "sha256:8", Some("8")),
        );
        assert_eq!(
            prove(&[b8.clone(), b8.clone()], &[c8.clone(), c8.clone()]),
            Proof::Reproduced
        );
        let c10 = on(change.clone(), "sha256:10", Some("10"));
        let proof = prove(&[b8.clone(), b8.clone()], &[c8.clone(), c10]);
        let Proof::NotProved {
            why: why @ NotProved::DifferentEnvironments { side, .. },
        } = &proof
        else {
            panic!("{proof:?}");
        };
        assert_eq!(*side, Side::Change);
        let words = why.to_string();
        assert!(
            words.contains("sha256:8") && words.contains("sha256:10"),
            "{words}"
        );
        // One image, two interpreters (a multi-version image) is two environments too.
        let other_python = on(change, "sha256:8", Some("3.7"));
        assert!(matches!(
            prove(
                &[b8.clone(), b8.clone()],
                &[other_python.clone(), other_python]
            ),
            Proof::NotProved {
                why: NotProved::DifferentEnvironments { .. }
            }
        ));
        // A base that itself ran on two images is no proof either.
        let b_other = on(base, "sha256:x", Some("8"));
        assert!(matches!(
            prove(&[b8, b_other], &[c8.clone(), c8]),
            Proof::NotProved {
                why: NotProved::DifferentEnvironments {
                    side: Side::Base,
                    ..
                }
            }
        ));
    }
}
