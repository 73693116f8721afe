//! The judge step's verdicts: each pipeline (a Planner's risk, an auditor's probe, a query,
//! a dependency file) judged by the pure rule of its evidence (its flow's `judge.rs`), and what
//! the rule said written into the report (kept, dropped and remembered, unproven,
//! inconclusive).

use proven_pipeline::StepError;
use proven_report::{
    Evidence, Finding, FindingKind, Level, Location, NotSeen, SkepticRef, Unproven,
};

use super::assembly::Judging;
use super::memory::{BY_QUERY, Refuted};
use crate::core::review::PLANNER_WAIT;
use crate::core::rows::result_of;
use crate::core::step_name::Name;
use crate::core::wire::RiskOutcome;
use crate::core::wire::{EvidenceKind, FileResult, Risk};
use crate::flows::deps::wire::deps_fingerprint;
use crate::flows::query::judge::{QueryVerdict, judge_query};
use crate::flows::test::judge::{Verdict, judge_risk};

impl Judging<'_> {
    /// The agents' part of the verdict: each risk pipeline kept, dropped (and remembered),
    /// unproven or inconclusive, by evidence only.
    pub(super) async fn agents(&mut self) -> Result<Vec<(Risk, RiskOutcome)>, StepError> {
        let mut first = Vec::new();
        let Ok(planner) =
            result_of::<crate::core::wire::PlannerResult>(self.rows, crate::flows::plan::PLANNER)
        else {
            return Ok(first);
        };
        for (risk, record) in &planner.remembered {
            first.push((risk.clone(), RiskOutcome::Remembered));
            self.suppressed(risk, record).await?;
        }
        if planner.truncated {
            self.report.not_seen.push(NotSeen {
                what: "the end of a large change".into(),
                reason: format!(
                    "the Planner read the first {} parts of {} KiB of the diff",
                    crate::core::bounded::MAX_PARTS,
                    crate::core::bounded::PART_BYTES / 1024
                ),
            });
        }
        if !planner.planned_without.is_empty() {
            self.report.not_seen.push(NotSeen {
                what: format!(
                    "dependency evidence for the Planner ({})",
                    planner.planned_without.join(", ")
                ),
                reason: format!(
                    "still unfinished after the Planner waited {} s; it named risks without those findings",
                    PLANNER_WAIT.as_secs()
                ),
            });
        }
        for (title, reason) in &planner.unproven {
            self.report.unproven.push(Unproven {
                claim: title.clone(),
                reason: reason.clone(),
                runs: Vec::new(),
            });
        }
        for (_, risk, said) in self
            .pipelines(&planner.proving, &planner.investigating)
            .await?
        {
            first.push((risk, said));
        }
        // Round two: the coverage auditor's probes, judged by the same rules as any risk.
        let mut probed = Vec::new();
        if let Some(audit) = crate::core::rows::step_result::<crate::flows::audit::wire::AuditResult>(
            self.rows,
            crate::flows::audit::AUDITOR,
            "",
        ) {
            for (key, _, said) in self.pipelines(&audit.probing, &audit.investigating).await? {
                probed.push((key, said));
            }
        }
        self.report.coverage =
            crate::flows::audit::judge::coverage(self.rows, &probed, &mut self.report.not_seen);
        // What the test environments lacked: named once each, in what the review could not see.
        self.report
            .not_seen
            .extend(super::assembly::environments_not_seen(self.rows));
        self.report.autofix = crate::flows::autofix::verdict(self.rows);
        Ok(first)
    }

    /// Each risk pipeline judged by the rule of its evidence: tests first, then queries.
    async fn pipelines(
        &mut self,
        tests: &[(String, Risk)],
        queries: &[(String, Risk)],
    ) -> Result<Vec<(String, Risk, RiskOutcome)>, StepError> {
        let mut out = Vec::new();
        for (key, risk) in tests {
            let said = self.test_risk(key, risk).await?;
            out.push((key.clone(), risk.clone(), said));
        }
        for (key, risk) in queries {
            let said = self.query(key, risk).await?;
            out.push((key.clone(), risk.clone(), said));
        }
        Ok(out)
    }

    /// A test finding the Judge keeps: its runs as evidence, with its proved fix or why none
    /// is shown.
    fn keep_test_finding(
        &mut self,
        key: &str,
        risk: &Risk,
        fp: &str,
        job: &crate::core::wire::ProveJob,
        runs: Vec<proven_report::RunRef>,
        skeptic: Option<crate::core::wire::SkepticResult>,
    ) {
        let evidence = runs
            .into_iter()
            .enumerate()
            .map(|(i, run)| Evidence {
                kind: "test_run".into(),
                advisory_id: None,
                affected_index: None,
                matched: None,
                row: None,
                run: Some(run),
                test: (i == 0).then(|| job.test.clone()),
                tool: None,
            })
            .collect();
        // Proved by the same test as a finding already kept (round two's probe answered with
        // the first finding's test): one fact, one finding.
        if let Some(same) = self.report.findings.iter().find(|f| {
            f.proof_level == Level::Reproduced
                && f.evidence
                    .first()
                    .and_then(|e| e.test.as_ref())
                    .is_some_and(|t| t.path == job.test.path && t.code == job.test.code)
        }) {
            self.trace.push(
                "duplicate",
                serde_json::json!({"key": key, "title": risk.title, "same_as": same.id,
                                   "reason": "proved by the same test with the same failure as a finding already kept"}),
            );
            return;
        }
        self.trace.push(
            "verdict",
            serde_json::json!({"key": key, "verdict": "kept", "title": risk.title}),
        );
        let (patch, fix_not_proved) = self.fix_of(key);
        self.report.findings.push(Finding {
            id: format!("defect:{}:{}", risk.path, &fp[..16]),
            proof_level: Level::Reproduced,
            kind: FindingKind::Defect,
            title: risk.title.clone(),
            package: None,
            location: Location {
                path: risk.path.clone(),
                line: None,
            },
            advisory: None,
            exploited: None,
            epss: None,
            fix: None,
            claim: Some(risk.claim.clone()),
            skeptic: skeptic.map(skeptic_ref),
            patch,
            fix_not_proved,
            reachability: None,
            evidence,
        });
    }

    /// The proved fix of the finding `key`, or (none proved) what its last try said: a fix
    /// tried and not proved is said, never silenced.
    fn fix_of(
        &mut self,
        key: &str,
    ) -> (
        Option<proven_report::PatchRef>,
        Option<proven_report::FixNotProved>,
    ) {
        let patch =
            crate::flows::fix::judge::proved_fix(self.rows, key).map(|f| proven_report::PatchRef {
                edits: f.edits,
                explanation: f.explanation,
                attempt: f.attempt,
                runs: f.runs,
                failing_on_base_too: f.failing_on_base_too,
                no_other_tests: f.no_other_tests,
                flaky_with_patch: f.flaky_with_patch,
                suite_narrowed_to: f.suite_narrowed_to,
            });
        let mut fix_not_proved = None;
        if patch.is_none() {
            let tries = crate::flows::fix::judge::tries(self.rows, key);
            for t in &tries {
                self.trace.push(
                    "fix_not_shown",
                    serde_json::json!({"key": key, "attempt": t.attempt, "reason": t.reason}),
                );
            }
            // A fix that was tried and not proved is said, with why: never silence.
            fix_not_proved = tries.last().map(|t| proven_report::FixNotProved {
                attempts: tries.len() as u32,
                reason: t.reason.clone(),
                runs: t.runs.clone(),
            });
        }
        (patch, fix_not_proved)
    }

    /// One test-evidence pipeline (a Planner's risk or an auditor's probe) judged: kept,
    /// dropped and remembered, unproven or inconclusive. Returns what became of it.
    async fn test_risk(&mut self, key: &str, risk: &Risk) -> Result<RiskOutcome, StepError> {
        let fp = risk.fingerprint_as(EvidenceKind::Test);
        let verdict = judge_risk(self.rows, key, risk);
        let said = verdict.outcome();
        match verdict {
            Verdict::Keep { job, runs, skeptic } => {
                // A test an earlier review's reruns showed flaky is never evidence again.
                let test_fp = crate::core::wire::test_fingerprint(&job.test);
                if let Some(flaky) = self.remembered_flaky(&test_fp).await? {
                    self.unproven(key, risk.claim.clone(), flaky, runs);
                    return Ok(RiskOutcome::Unproven);
                }
                self.keep_test_finding(key, risk, &fp, &job, runs, skeptic);
            }
            Verdict::Dropped {
                job,
                refutation,
                skeptic,
            } => {
                // The reruns showed the *test* flaky: that test is remembered (never evidence
                // again), the claim is not (another test may still prove it).
                let memory = serde_json::json!({"refutation": "flaky", "reason": refutation.shown.reason,
                                                "skeptic": skeptic.reason, "runs": refutation.shown.runs,
                                                "test": job.test.path});
                let test_fp = crate::core::wire::test_fingerprint(&job.test);
                self.drop_refuted(Refuted {
                    key,
                    risk,
                    memory: (crate::core::wire::FLAKY_TEST, &test_fp, memory),
                    provenance: serde_json::json!({"prover_test": job.test.path}),
                    finding: None,
                    shown_by: "the test is flaky: Proven's reruns showed it; the test, not the claim, is remembered",
                    why: &refutation.shown.reason,
                    runs: refutation.shown.runs,
                })
                .await?;
            }
            Verdict::Unproven {
                claim,
                reason,
                runs,
            } => self.unproven(key, claim, reason, runs),
            Verdict::Inconclusive { claim } => self.inconclusive(claim),
        }
        Ok(said)
    }

    /// A dependency file's findings, judged: each the Skeptic refuted with self.rows of its own
    /// query is dropped and remembered; the others are kept with what the Skeptic said.
    /// Findings H-MEM already held are named as unproven.
    pub(super) async fn deps_findings(
        &mut self,
        key: &str,
        file: &FileResult,
    ) -> Result<Vec<Finding>, StepError> {
        use crate::flows::deps::judge::DepsVerdict;
        for (finding, record) in &file.remembered {
            self.report.unproven.push(Unproven {
                claim: finding.clone(),
                reason: format!(
                    "an earlier review refuted it with evidence (H-MEM record {record}); not raised again"
                ),
                runs: Vec::new(),
            });
        }
        let mut kept = Vec::new();
        for verdict in crate::flows::deps::judge::judge_deps(self.rows, key, file) {
            match verdict {
                DepsVerdict::Dropped {
                    finding: f,
                    refutation,
                    skeptic_reason,
                } => {
                    let risk = Risk {
                        title: f.title.clone(),
                        claim: f.title.clone(),
                        path: f.location.path.clone(),
                        symbol: f.package.as_ref().map(|p| {
                            format!(
                                "{}:{}@{}",
                                p.ecosystem,
                                p.name.to_lowercase(),
                                p.new_version
                            )
                        }),
                        evidence: "deps".into(),
                    };
                    let memory =
                        serde_json::json!({"reason": skeptic_reason, "query": refutation.query});
                    self.drop_refuted(Refuted {
                        key: &format!("{key}#{}", f.id),
                        risk: &risk,
                        memory: ("deps", &deps_fingerprint(&f), memory),
                        provenance: serde_json::json!({"finding": f.id}),
                        finding: Some(&f.id),
                        shown_by: BY_QUERY,
                        why: &refutation.reason,
                        runs: Vec::new(),
                    })
                    .await?;
                }
                DepsVerdict::Keep {
                    finding: mut f,
                    skeptic,
                } => {
                    f.skeptic = skeptic.map(skeptic_ref);
                    kept.push(f);
                }
            }
        }
        Ok(kept)
    }

    /// A pipeline that proved nothing: traced, and named as unproven with why.
    fn unproven(
        &mut self,
        key: &str,
        claim: String,
        reason: String,
        runs: Vec<proven_report::RunRef>,
    ) {
        self.trace.push(
            "verdict",
            serde_json::json!({"key": key, "verdict": "unproven", "reason": reason}),
        );
        self.report.unproven.push(Unproven {
            claim,
            reason,
            runs,
        });
    }

    /// A pipeline still running at the deadline: what the review could not see.
    fn inconclusive(&mut self, claim: String) {
        self.report.not_seen.push(NotSeen {
            what: claim,
            reason: "inconclusive: its pipeline did not finish before the review's deadline".into(),
        });
    }

    /// One query pipeline: its findings kept, dropped (and remembered), or unproven.
    async fn query(&mut self, key: &str, risk: &Risk) -> Result<RiskOutcome, StepError> {
        let fp = risk.fingerprint_as(EvidenceKind::Query);
        Ok(match judge_query(self.rows, key, risk) {
            QueryVerdict::Keep { findings, skeptic } => {
                self.trace.push(
                    "verdict",
                    serde_json::json!({"key": key, "verdict": "kept", "title": risk.title,
                                       "findings": findings.iter().map(|f| &f.id).collect::<Vec<_>>()}),
                );
                for mut f in findings {
                    f.claim = Some(risk.claim.clone());
                    f.skeptic = skeptic.clone().map(skeptic_ref);
                    self.from_queries.insert(f.id.clone());
                    self.report.findings.push(f);
                }
                RiskOutcome::Finding
            }
            QueryVerdict::Dropped {
                refutation,
                skeptic,
            } => {
                let memory =
                    serde_json::json!({"reason": skeptic.reason, "query": refutation.query});
                self.drop_refuted(Refuted {
                    key,
                    risk,
                    memory: ("query", &fp, memory),
                    provenance: serde_json::json!({}),
                    finding: None,
                    shown_by: BY_QUERY,
                    why: &refutation.reason,
                    runs: Vec::new(),
                })
                .await?;
                RiskOutcome::Dropped
            }
            QueryVerdict::Unproven { claim, reason } => {
                self.unproven(key, claim, reason, Vec::new());
                RiskOutcome::Unproven
            }
            QueryVerdict::Inconclusive { claim } => {
                self.inconclusive(claim);
                RiskOutcome::Inconclusive
            }
        })
    }
}

/// The Skeptic's answer as a finding shows it.
fn skeptic_ref(s: crate::core::wire::SkepticResult) -> SkepticRef {
    SkepticRef {
        verdict: s.verdict.as_str().to_string(),
        reason: s.reason,
        artifact: s.artifact,
        refutation: s.refutation,
        needs: s.needs,
    }
}
