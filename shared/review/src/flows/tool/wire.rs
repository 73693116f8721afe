//! What the tool evidence stores and hands on: the job of one analyzer, and its two runs
//! read back (version, diagnostics with their lines' text), with the lines the change adds.

use std::collections::BTreeMap;

use proven_report::RunRef;
use proven_sandbox::analyzer::{Analyzer, Diagnostic};
use serde::{Deserialize, Serialize};

use crate::core::wire::{SkepticResult, SkepticSays};

/// The input of a `sandbox.tool` step: one analyzer, and the files of its language the
/// change adds or modifies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolJob {
    pub analyzer: Analyzer,
    pub paths: Vec<String>,
}

/// One diagnostic and the text of its line on its side (trimmed; empty when the file could
/// not be read there), and for ESLint the line before's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    #[serde(flatten)]
    pub diagnostic: Diagnostic,
    pub text: String,
    /// The text of the line before (trimmed), for suppressions written there (ESLint's
    /// `eslint-disable-next-line`); empty for other analyzers.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub previous: String,
}

/// One side's run read back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSide {
    pub run: Option<RunRef>,
    /// The analyzer's `--version` answer in that run's container.
    pub version: Option<String>,
    pub diagnostics: Vec<Seen>,
    /// Why this run shows nothing (it did not finish, its output was cut, the tree did not
    /// build), if it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfinished: Option<String>,
    /// What the run analysed, when less than the analyzer's whole unit (clippy without the
    /// benches of a tree whose benches need a nightly feature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// The `sandbox.tool` step's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    pub analyzer: Analyzer,
    pub base: ToolSide,
    pub change: ToolSide,
    /// The lines the change adds (1-based, on the change), per file the change's run reports
    /// on.
    pub added: BTreeMap<String, Vec<u32>>,
    /// Why the analyzer did not run at all (no sandbox, nothing to analyse), if it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
}

impl ToolResult {
    pub fn not_run(analyzer: Analyzer, why: impl Into<String>) -> ToolResult {
        ToolResult {
            analyzer,
            base: ToolSide::default(),
            change: ToolSide::default(),
            added: BTreeMap::new(),
            not_run: Some(why.into()),
        }
    }
}

/// The refutations a Skeptic of tool findings may pick (anything else it names is `other`,
/// never evidence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolRefutation {
    Intended,
    FalsePositive,
    #[serde(other)]
    Other,
}

impl ToolRefutation {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolRefutation::Intended => "intended",
            ToolRefutation::FalsePositive => "false_positive",
            ToolRefutation::Other => "other",
        }
    }
}

/// The Skeptic's word on one tool finding (by its id), in its closed shape.
#[derive(Debug, Serialize, Deserialize)]
pub struct ToolSays {
    pub finding: String,
    #[serde(flatten)]
    pub said: SkepticSays,
    #[serde(default)]
    pub refutation: Option<ToolRefutation>,
}

/// The Skeptic's answer on an analyzer's findings.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SkepticToolAnswer {
    #[serde(default)]
    pub verdicts: Vec<ToolSays>,
}

/// The `skeptic.tool` step's result: each finding's id and the Skeptic's word as Proven
/// settled it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SkepticToolResult {
    pub verdicts: Vec<(String, SkepticResult)>,
}
