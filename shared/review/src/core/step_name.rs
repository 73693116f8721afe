//! The review's step names, typed. Each serialises to the name the store keeps in
//! `steps.step` (so stored reviews still read); code names a step by this enum, never by
//! its text.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An enum whose variants are stored, traced and reported by name (derived with strum's
/// `IntoStaticStr` and `EnumString`, spelt as its serde names are): the variant's name, and
/// the variant a stored name stands for (None: none of them).
pub trait Name: Copy + Into<&'static str> + std::str::FromStr {
    fn as_str(self) -> &'static str {
        self.into()
    }

    fn parse(name: &str) -> Option<Self> {
        name.parse().ok()
    }
}

impl<T: Copy + Into<&'static str> + std::str::FromStr> Name for T {}

/// Every step a review can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum StepName {
    #[serde(rename = "intake")]
    Intake,
    #[serde(rename = "plan")]
    Plan,
    #[serde(rename = "deps.collect")]
    DepsCollect,
    #[serde(rename = "deps.file")]
    DepsFile,
    #[serde(rename = "planner")]
    Planner,
    /// The second reviewer's own Planner (its verdicts are shown beside the first's).
    #[serde(rename = "second-reviewer")]
    SecondReviewer,
    #[serde(rename = "prover")]
    Prover,
    #[serde(rename = "sandbox.reproduce")]
    Reproduce,
    #[serde(rename = "skeptic")]
    Skeptic,
    #[serde(rename = "sandbox.refute")]
    Refute,
    #[serde(rename = "investigator")]
    Investigator,
    #[serde(rename = "skeptic.query")]
    SkepticQuery,
    /// The Skeptic of a dependency file's findings.
    #[serde(rename = "skeptic.deps")]
    SkepticDeps,
    #[serde(rename = "auditor")]
    Auditor,
    #[serde(rename = "fixer")]
    Fixer,
    #[serde(rename = "sandbox.fix")]
    SandboxFix,
    /// The one whole-change attempt's model step: one prompt, one patch (ADR-0050).
    #[serde(rename = "autofix")]
    Autofix,
    /// The attempt's proof: every finding's own evidence run again on the patched copy,
    /// then the suites of the languages it touches.
    #[serde(rename = "sandbox.autofix")]
    AutofixProof,
    #[serde(rename = "sandbox.run")]
    SandboxRun,
    /// One analyzer of the tool evidence on the base and on the change.
    #[serde(rename = "sandbox.tool")]
    Tool,
    /// The Skeptic of one analyzer's tool findings.
    #[serde(rename = "skeptic.tool")]
    SkepticTool,
    #[serde(rename = "judge")]
    Judge,
}

impl StepName {
    pub const ALL: [StepName; 22] = [
        StepName::Intake,
        StepName::Plan,
        StepName::DepsCollect,
        StepName::DepsFile,
        StepName::Planner,
        StepName::SecondReviewer,
        StepName::Prover,
        StepName::Reproduce,
        StepName::Skeptic,
        StepName::Refute,
        StepName::Investigator,
        StepName::SkepticQuery,
        StepName::SkepticDeps,
        StepName::Auditor,
        StepName::Fixer,
        StepName::SandboxFix,
        StepName::Autofix,
        StepName::AutofixProof,
        StepName::SandboxRun,
        StepName::Tool,
        StepName::SkepticTool,
        StepName::Judge,
    ];

    /// The queue a step of this name runs on, derived from the name alone: the model
    /// agents on `model`, what runs in the sandbox on `sandbox`, the dependency evidence (and
    /// intake, which reaches the repository) on `evidence`, the plan and the judge on
    /// `control` (the store's own `JUDGE_QUEUE`).
    pub const fn queue(self) -> &'static str {
        match self {
            StepName::Intake | StepName::DepsCollect | StepName::DepsFile => "evidence",
            StepName::Plan | StepName::Judge => "control",
            StepName::Reproduce
            | StepName::Refute
            | StepName::SandboxFix
            | StepName::AutofixProof
            | StepName::SandboxRun
            | StepName::Tool => "sandbox",
            StepName::Planner
            | StepName::SecondReviewer
            | StepName::Prover
            | StepName::Skeptic
            | StepName::Investigator
            | StepName::SkepticQuery
            | StepName::SkepticDeps
            | StepName::SkepticTool
            | StepName::Auditor
            | StepName::Fixer
            | StepName::Autofix => "model",
        }
    }

    /// The name the store keeps.
    pub const fn as_str(self) -> &'static str {
        match self {
            StepName::Intake => "intake",
            StepName::Plan => "plan",
            StepName::DepsCollect => "deps.collect",
            StepName::DepsFile => "deps.file",
            StepName::Planner => "planner",
            StepName::SecondReviewer => "second-reviewer",
            StepName::Prover => "prover",
            StepName::Reproduce => "sandbox.reproduce",
            StepName::Skeptic => "skeptic",
            StepName::Refute => "sandbox.refute",
            StepName::Investigator => "investigator",
            StepName::SkepticQuery => "skeptic.query",
            StepName::SkepticDeps => "skeptic.deps",
            StepName::Auditor => "auditor",
            StepName::Fixer => "fixer",
            StepName::SandboxFix => "sandbox.fix",
            StepName::Autofix => "autofix",
            StepName::AutofixProof => "sandbox.autofix",
            StepName::SandboxRun => "sandbox.run",
            StepName::Tool => "sandbox.tool",
            StepName::SkepticTool => "skeptic.tool",
            StepName::Judge => proven_store::JUDGE_STEP,
        }
    }

    /// The step a stored name names (None: a name this code does not run).
    pub fn parse(name: &str) -> Option<StepName> {
        StepName::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

impl fmt::Display for StepName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored step name compared with a typed one (`row.id.step == StepName::Prover`).
impl PartialEq<StepName> for String {
    fn eq(&self, other: &StepName) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<StepName> for str {
    fn eq(&self, other: &StepName) -> bool {
        self == other.as_str()
    }
}

/// The control steps' names as the store keeps them, for reading their rows.
pub const INTAKE: &str = StepName::Intake.as_str();
pub const PLAN: &str = StepName::Plan.as_str();
pub const DEPS_COLLECT: &str = StepName::DepsCollect.as_str();
pub const DEPS_FILE: &str = StepName::DepsFile.as_str();
pub const JUDGE: &str = StepName::Judge.as_str();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_serialises_to_its_stored_text() {
        for step in StepName::ALL {
            assert_eq!(StepName::parse(step.as_str()), Some(step));
            assert_eq!(
                serde_json::to_value(step).expect("serialises"),
                serde_json::Value::String(step.as_str().into())
            );
        }
        let names: std::collections::BTreeSet<&str> =
            StepName::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            names.len(),
            StepName::ALL.len(),
            "no two steps share a name"
        );
        assert_eq!(StepName::parse("second_reviewer"), None);
        // The judge a dead-lettered review gets from the store runs where every other judge does.
        assert_eq!(StepName::Judge.queue(), proven_store::JUDGE_QUEUE);
        assert_eq!("judge".to_string(), StepName::Judge);
    }
}
