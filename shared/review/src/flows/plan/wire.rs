//! What the plan flow stores and hands on: the dependency evidence the Planner reads, and
//! the second reviewer's risks with its own Skeptic's verdicts.

use serde::{Deserialize, Serialize};

use crate::core::wire::Risk;

/// The dependency evidence the Planner reads: what the lock files already proved before it
/// ran, and the dependency steps it stopped waiting for.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DependencyEvidence {
    pub findings: Vec<DependencyNote>,
    /// Dependency steps still unfinished when the Planner went on without them.
    pub pending: Vec<String>,
}

/// One dependency finding, in short, as the Planner reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DependencyNote {
    pub proof_level: String,
    pub path: String,
    pub ecosystem: String,
    pub package: String,
    pub old_version: Option<String>,
    pub new_version: String,
    pub advisory: String,
    pub aliases: Vec<String>,
    pub summary: Option<String>,
    /// The smallest fixed version, when one is published.
    pub fixed: Option<String>,
}

impl DependencyNote {
    /// The note of a dependency finding (None for a finding of another kind).
    pub fn of(finding: &proven_report::Finding) -> Option<DependencyNote> {
        let package = finding.package.as_ref()?;
        let advisory = finding.advisory.as_ref()?;
        Some(DependencyNote {
            proof_level: finding.proof_level.as_str().to_string(),
            path: finding.location.path.clone(),
            ecosystem: package.ecosystem.clone(),
            package: package.name.clone(),
            old_version: package.old_version.clone(),
            new_version: package.new_version.clone(),
            advisory: advisory.id.clone(),
            aliases: advisory.aliases.clone(),
            summary: advisory.summary.clone(),
            fixed: finding.fix.as_ref().and_then(|f| f.version.clone()),
        })
    }
}

/// The second reviewer's risks: its own Planner, shown only the change (never the first
/// reviewer's words).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SecondReview {
    pub risks: Vec<Risk>,
    /// Its own Skeptic on each of its risks, as Proven checked it (absent in rows written
    /// before the second reviewer had one).
    #[serde(default)]
    pub skeptic: Vec<SecondVerdict>,
}

/// The second reviewer's Skeptic on one of its own risks (`risk`: its index), as Proven
/// checked it: `refuted` only when the Skeptic refuted it citing lines of the risk's own
/// file that exist at the change and say what it quotes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SecondVerdict {
    pub risk: usize,
    pub refuted: bool,
    /// The Skeptic's own reason.
    pub reason: String,
    /// The lines it cited, when it cited any.
    #[serde(default)]
    pub cited: Option<crate::core::citation::Citation>,
    /// Why a refutation it claimed did not count (Proven's check of its citation).
    #[serde(default)]
    pub not_counted: Option<String>,
}
