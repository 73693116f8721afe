//! The Judge: plain code over a review's rows, no model. Every rule here is a pure function
//! of the rows (and what earlier rules said), so each is unit-tested over hand-built rows;
//! the `judge` step (in [`crate::pipeline`]) reads the rows, applies these rules in order,
//! writes to H-MEM what a rule dropped (its only IO) and seals the report.
//!
//! - [`risk::judge_risk`]: a test-evidence pipeline kept, dropped, unproven or inconclusive.
//! - [`query::judge_query`]: a query-evidence pipeline, likewise.
//! - [`deps::judge_deps`]: a dependency file's findings, kept unless a query Proven ran
//!   refuted them.
//! - [`reviewers::side_by_side`]: both reviewers' verdicts, never merged.
//! - [`fix::proved_fix`]: a fix only when the sandbox proved it; [`fix::tries`] otherwise.
//! - [`coverage::coverage`]: the coverage auditor's surfaces, with round two's outcomes.
//! - [`ignore::apply`]: the repository's accepted advisories moved apart, with reasons.
//! - [`branches`]: what the rows of steps that failed or never ended say (open branches),
//!   and a package reported twice.

pub mod branches;
pub mod coverage;
pub mod deps;
pub mod ignore;
pub mod query;
pub mod reviewers;
pub mod risk;

/// What became of one risk (shown beside the second reviewer's verdict, and read by the
/// coverage section for the auditor's probes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum RiskOutcome {
    Finding,
    Dropped,
    Unproven,
    Inconclusive,
    /// H-MEM held its refutation: not raised again.
    Remembered,
}

/// A risk for unit tests, with its evidence kind.
#[cfg(test)]
pub(crate) fn test_risk(evidence: &str) -> crate::wire::Risk {
    crate::wire::Risk {
        title: "t".into(),
        claim: "c".into(),
        path: "calc.py".into(),
        symbol: None,
        evidence: evidence.into(),
    }
}
