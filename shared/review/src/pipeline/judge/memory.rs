//! The Judge's writes to H-MEM: a finding Proven's own runs or rows refuted is remembered
//! (within the repository's cap), traced as dropped, and named as unproven.

use proven_pipeline::StepError;
use proven_report::Unproven;
use sha2::{Digest, Sha256};

use super::{Judging, PLAN};
use crate::outcome::retryable;
use crate::rows::result_of;
use crate::wire::{HmemBounds, PlanResult, Risk};

/// How a refutation the Skeptic's own query showed is said.
pub(super) const BY_QUERY: &str = "refuted by the Skeptic's own query";

/// A refuted finding for [`Judging::drop_refuted`].
pub(super) struct Refuted<'a> {
    /// The pipeline (for a dependency finding: `KEY#FINDING`).
    pub(super) key: &'a str,
    pub(super) risk: &'a Risk,
    /// H-MEM's kind, fingerprint and refutation record.
    pub(super) memory: (&'a str, &'a str, serde_json::Value),
    pub(super) provenance: serde_json::Value,
    /// The dependency finding refuted, when it is one.
    pub(super) finding: Option<&'a str>,
    /// What showed it, said first.
    pub(super) shown_by: &'a str,
    pub(super) why: &'a str,
    pub(super) runs: Vec<proven_report::RunRef>,
}

impl Judging<'_> {
    /// A refutation Proven's own runs or rows showed: remembered in H-MEM, traced as
    /// dropped, and named as unproven with why (and the memory record).
    pub(super) async fn drop_refuted(&mut self, r: Refuted<'_>) -> Result<(), StepError> {
        let (kind, fingerprint, memory) = r.memory;
        metrics::counter!(proven_pipeline::metrics_names::REFUTATIONS_TOTAL, "evidence" => kind.to_string())
            .increment(1);
        let id = self
            .remember(r.key, r.risk, (kind, fingerprint), memory, r.provenance)
            .await?;
        let mut line = serde_json::json!({"key": r.key, "verdict": "dropped", "title": r.risk.title,
                                          "reason": r.why, "memory_record": id});
        if let Some(finding) = r.finding {
            line["finding"] = finding.into();
        }
        self.trace.push("verdict", line);
        self.report.unproven.push(Unproven {
            claim: r.risk.claim.clone(),
            reason: format!("{} ({}); remembered as {id}", r.shown_by, r.why),
            runs: r.runs,
        });
        Ok(())
    }

    /// Writes a dropped finding to H-MEM, so the same finding does not come back. The
    /// record's id is derived from the review and pipeline, so a replayed judge writes it once.
    async fn remember(
        &mut self,
        key: &str,
        risk: &Risk,
        (kind, fingerprint): (&str, &str),
        refutation: serde_json::Value,
        mut provenance: serde_json::Value,
    ) -> Result<String, StepError> {
        let id =
            hex::encode(&Sha256::digest(format!("{}\n{key}", self.review_id).as_bytes())[..16]);
        provenance["review_id"] = self.review_id.into();
        provenance["pipeline"] = key.into();
        let record = proven_store::MemoryRecord {
            id: id.clone(),
            tenant: self.scope.tenant.clone(),
            repository: self.scope.repository.clone(),
            fingerprint: fingerprint.to_string(),
            kind: kind.into(),
            path: risk.path.clone(),
            symbol: risk.symbol.clone(),
            claim: risk.claim.clone(),
            refutation: refutation.to_string(),
            provenance: provenance.to_string(),
            confidence: 1.0,
            created_at: String::new(),
        };
        let bounds = result_of::<PlanResult>(self.rows, PLAN)
            .map_or_else(|_| HmemBounds::default(), |p| p.hmem);
        match self.cx.store.memory_write(&record, bounds.max_bytes).await {
            Ok(()) => Ok(id),
            Err(e @ proven_store::StoreError::MemoryFull { .. }) => {
                // The refutation still holds (its runs or rows showed it); only the memory
                // of it is lost, and the review says so by name.
                let message = format!("the refutation was not remembered: {e}");
                self.trace.push(
                    "memory",
                    serde_json::json!({"key": key, "written": false, "reason": message}),
                );
                self.report
                    .failed_services
                    .push(proven_report::FailedService {
                        service: "hmem".into(),
                        message: message.clone(),
                    });
                Ok(format!("none ({message})"))
            }
            Err(e) => Err(retryable(e)),
        }
    }
}
