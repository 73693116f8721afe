//! The Judge's writes to H-MEM: a finding Proven's own runs or rows refuted is remembered
//! (within the repository's cap), traced as dropped, and named as unproven.

use proven_pipeline::StepError;
use proven_report::Unproven;
use sha2::{Digest, Sha256};

use super::assembly::Judging;
use crate::core::outcome::retryable;
use crate::core::rows::result_of;
use crate::core::step_name::PLAN;
use crate::core::wire::{HmemBounds, PlanResult, Risk};

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

    /// A claim the Planner did not raise again, listed with the refutation it rests on.
    pub(super) async fn suppressed(&mut self, risk: &Risk, record: &str) -> Result<(), StepError> {
        let memory = self
            .cx
            .store
            .memory_lookup(
                &self.scope.tenant,
                &self.scope.repository,
                &risk.fingerprint(),
            )
            .await
            .map_err(retryable)?;
        let (refuted_by, on, evidence) = match memory {
            Some(m) => {
                let field = |json: &str, key: &str| {
                    serde_json::from_str::<serde_json::Value>(json)
                        .ok()
                        .and_then(|v| v[key].as_str().map(str::to_string))
                        .unwrap_or_default()
                };
                (
                    field(&m.provenance, "review_id"),
                    m.created_at.clone(),
                    field(&m.refutation, "reason"),
                )
            }
            None => Default::default(),
        };
        self.report.suppressed.push(proven_report::Suppressed {
            claim: risk.claim.clone(),
            path: risk.path.clone(),
            record: record.to_string(),
            refuted_by,
            on,
            evidence,
        });
        Ok(())
    }

    /// Why a test may not be evidence: H-MEM holds that an earlier review's reruns showed
    /// this very test (path and text) flaky.
    pub(super) async fn remembered_flaky(
        &self,
        test_fp: &str,
    ) -> Result<Option<String>, StepError> {
        let record = self
            .cx
            .store
            .memory_lookup(&self.scope.tenant, &self.scope.repository, test_fp)
            .await
            .map_err(retryable)?;
        Ok(record.map(|m| {
            let review = serde_json::from_str::<serde_json::Value>(&m.provenance)
                .ok()
                .and_then(|p| p["review_id"].as_str().map(str::to_string))
                .unwrap_or_default();
            format!(
                "the test is flaky: review {review}'s reruns showed it on {} (H-MEM record {}); \
                 it is never evidence again, and another test may still prove the claim",
                m.created_at, m.id
            )
        }))
    }
}
