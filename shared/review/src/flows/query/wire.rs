//! What the query flow stores and hands on: the Investigator's result for one risk (the
//! Skeptic of query evidence reads it, and the Judge).

use proven_report::Finding;
use serde::{Deserialize, Serialize};

use crate::core::query::QueryEvidence;
use crate::core::step_name::StepName;

pub const INVESTIGATOR: &str = StepName::Investigator.as_str();
pub const SKEPTIC_QUERY: &str = StepName::SkepticQuery.as_str();

/// The Investigator's result for one risk.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct InvestigatorResult {
    pub queries: Vec<QueryEvidence>,
    /// Queries refused before running, and why.
    pub refused: Vec<String>,
    /// Findings the rows prove (advisory or exploited).
    pub findings: Vec<Finding>,
    /// Why nothing was proved, when nothing was.
    pub reason: String,
}
