//! The coverage auditor's result: each surface it named and what became of it (a stored
//! audit's JSON: field names are its format).

use serde::{Deserialize, Serialize};

use crate::core::step_name::Name;
use crate::core::wire::Risk;

/// The auditor step's result: its verdict, each surface's status after round one, and the
/// round-two pipelines it started.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AuditResult {
    pub verdict: String,
    pub surfaces: Vec<SurfaceRow>,
    /// Probes sent to the Prover, by pipeline key.
    pub probing: Vec<(String, Risk)>,
    /// Probes sent to the Investigator, by pipeline key.
    pub investigating: Vec<(String, Risk)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SurfaceRow {
    pub surface: String,
    pub probe: Option<String>,
    /// Examined, probing, remembered, unresolved or refused (the judge turns `probing` into
    /// finding, probed or unresolved); a stored name this code does not know reads as
    /// unresolved.
    #[serde(deserialize_with = "surface_status")]
    pub status: SurfaceStatus,
    /// The round-two pipeline of a probed surface.
    pub key: Option<String>,
    pub detail: String,
}

fn surface_status<'de, D: serde::Deserializer<'de>>(d: D) -> Result<SurfaceStatus, D::Error> {
    let name = String::deserialize(d)?;
    Ok(SurfaceStatus::parse(&name).unwrap_or(SurfaceStatus::Unresolved))
}

/// What became of a surface the coverage auditor named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum SurfaceStatus {
    /// Round one examined it.
    Examined,
    /// Round two probes it (its pipeline's key is on the row).
    Probing,
    /// H-MEM holds an evidenced refutation of its probe.
    Remembered,
    Unresolved,
    /// Not a surface Proven can look at (or past the limit).
    Refused,
    /// Round two's probe proved a finding.
    Finding,
    /// Round two's probe ran and proved nothing.
    Probed,
}
