//! A risk the Planner named, the job of the pipeline that proves it, and the H-MEM
//! fingerprint a finding is remembered by.

use proven_pipeline::{NewStep, StepError};
use proven_report::TestRef;
use proven_sandbox::{Language, Selection};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::core::outcome::{Next, to_json};
use crate::core::step_name::{Name, StepName};

/// A risk the Planner named (the wire shape between the agents).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Risk {
    pub title: String,
    pub claim: String,
    pub path: String,
    pub symbol: Option<String>,
    /// test or query ([`EvidenceKind`]; kept as the model wrote it, so an answer naming
    /// another kind is refused by name rather than unread).
    pub evidence: String,
}

/// How a risk's claim is settled: a test Proven runs, or the advisory rows a query reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum EvidenceKind {
    Test,
    Query,
}

impl Risk {
    /// The kind of evidence it names (None: neither, refused by name).
    pub fn evidence_kind(&self) -> Option<EvidenceKind> {
        EvidenceKind::parse(&self.evidence)
    }

    /// Its H-MEM fingerprint.
    pub fn fingerprint(&self) -> String {
        fingerprint(
            &self.evidence,
            &self.path,
            self.symbol.as_deref(),
            &self.claim,
        )
    }

    /// Its H-MEM fingerprint as a finding of `kind` (the judge's, whatever the risk named).
    pub fn fingerprint_as(&self, kind: EvidenceKind) -> String {
        fingerprint(
            kind.as_str(),
            &self.path,
            self.symbol.as_deref(),
            &self.claim,
        )
    }

    /// The first step of its finding pipeline under `key`: the Investigator for a query,
    /// the Prover for a test.
    pub fn first_step(&self, key: String) -> Result<NewStep, StepError> {
        let step = match self.evidence_kind() {
            Some(EvidenceKind::Query) => StepName::Investigator,
            _ => StepName::Prover,
        };
        Ok(NewStep {
            key,
            input: Some(to_json(self)?),
            ..Next::then(step)
        })
    }
}

/// What a risk pipeline's steps carry forward.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProveJob {
    pub risk: Risk,
    /// The language of its test (stored by its lowercase name).
    pub language: Language,
    pub test: TestRef,
    /// The command Proven built for the selection (never a model's).
    pub command: Vec<String>,
    /// Which tests of the file the command selects.
    pub selection: Option<Selection>,
    /// The variables the command runs with (seeds).
    #[serde(default)]
    pub env: Vec<(String, String)>,
}

/// H-MEM fingerprint: kind, path, the symbol when one is named, and the normalised claim.
pub fn fingerprint(kind: &str, path: &str, symbol: Option<&str>, claim: &str) -> String {
    // The claim is always part of it: a refuted claim about a function must never silence a
    // different claim about the same function. Wording noise (case, punctuation) is not.
    let symbol = symbol.map(str::trim).unwrap_or_default();
    let claim = claim
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    hex::encode(Sha256::digest(
        format!("{kind}\n{path}\n{symbol}\n{claim}").as_bytes(),
    ))
}
