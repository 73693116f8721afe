//! The types more than one flow (or core itself) reads of what the review's steps store and
//! pass each other (their JSON is what a stored review holds: field names are its format),
//! and the H-MEM fingerprint. What one flow alone stores and hands on is in its own
//! `wire.rs` (`flows/NAME/wire.rs`).

use proven_pipeline::StepError;
use proven_report::TestRef;
use proven_store::Store;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

mod control;
mod fix;
mod risk;

pub use fix::{FixInput, first_try};
pub use risk::{EvidenceKind, ProveJob, Risk, fingerprint};

pub use control::{
    Bounds, DepsSettings, FileFacts, FileResult, HmemBounds, IgnoreRule, IntakeResult, PlanResult,
    PlanTools, StepUnit, Unread,
};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkepticResult {
    pub verdict: SkepticVerdict,
    pub reason: String,
    pub artifact: Option<String>,
    pub test: Option<TestRef>,
    /// The refutation it picked (flaky, wrong_cause, intended; query for query findings).
    pub refutation: Option<String>,
    /// Unresolved: what would settle it.
    pub needs: Option<String>,
}

/// What every Skeptic answers, in the closed shape it is asked for: its verdict, why, and
/// the artifact it opened (each Skeptic's answer adds its own fields beside these).
#[derive(Debug, Serialize, Deserialize)]
pub struct SkepticSays {
    pub verdict: String,
    #[serde(default)]
    pub reason: String,
    pub artifact: Option<String>,
}

/// What a Skeptic's answer stands for once Proven has read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum SkepticVerdict {
    /// A refutation Proven checks (from the closed list, or a query it runs).
    Refuted,
    /// A refutation no run or row bears out: the finding stays.
    RefutedWithoutEvidence,
    /// A concession naming what it was shown.
    Conceded,
    Unresolved,
}

/// The Planner's result: what it named, and what became of each risk.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PlannerResult {
    /// Risks sent to the Prover, by pipeline key.
    pub proving: Vec<(String, Risk)>,
    /// Risks sent to the Investigator (evidence by query), by pipeline key.
    #[serde(default)]
    pub investigating: Vec<(String, Risk)>,
    /// Risks not raised: H-MEM holds their refutation (record id).
    pub remembered: Vec<(Risk, String)>,
    /// Risks that are not findings and why (no test can settle them here, refused shapes).
    pub unproven: Vec<(String, String)>,
    /// The change was longer than the Planner reads (beyond its bounded steps).
    pub truncated: bool,
    /// Dependency steps the Planner stopped waiting for (it planned without their findings).
    #[serde(default)]
    pub planned_without: Vec<String>,
}

/// H-MEM's kind for a test Proven's reruns showed flaky: the test is remembered, never the
/// claim it was written for.
pub const FLAKY_TEST: &str = "flaky_test";

/// The fingerprint of one test (its file's path and exact text): what a `flaky` refutation
/// marks, so that test is never evidence again while another test of the same claim still is.
pub fn test_fingerprint(test: &proven_report::TestRef) -> String {
    hex::encode(Sha256::digest(
        format!("{FLAKY_TEST}\n{}\n{}", test.path, test.code).as_bytes(),
    ))
}

/// A record whose refutation is `flaky`: it tells of the test that was rerun, not of the claim.
pub fn refutes_a_test(memory: &proven_store::MemoryRecord) -> bool {
    memory.kind == FLAKY_TEST
        || serde_json::from_str::<serde_json::Value>(&memory.refutation)
            .is_ok_and(|r| r["refutation"] == "flaky")
}

/// What the agents need from the review: where the repository is and which commits.
#[derive(Clone, Copy)]
pub struct ReviewView<'a> {
    pub store: &'a Store,
    /// The repository's normalised identity (H-MEM's scope with the tenant).
    pub repository: &'a str,
    /// The review's tenant ('' for none: the embedded default).
    pub tenant: &'a str,
    pub repository_dir: &'a str,
    pub base: &'a str,
    pub head: &'a str,
    pub changed: &'a [String],
    /// The review's instant for resolving what a project does not pin (see
    /// `IntakeResult::resolve_before`): every sandbox run of the review carries it.
    pub resolve_before: Option<i64>,
}

impl ReviewView<'_> {
    /// Runs `f` on the review's repository on the blocking pool (git2 blocks); an error
    /// opening it or in `f` fails the step permanently, named by `step`.
    pub async fn with_repo<T: Send + 'static>(
        &self,
        step: &str,
        f: impl FnOnce(&proven_change::Repo) -> Result<T, String> + Send + 'static,
    ) -> Result<T, StepError> {
        let dir = self.repository_dir.to_string();
        crate::core::outcome::blocking(move || {
            let repo =
                proven_change::Repo::open(std::path::Path::new(&dir)).map_err(|e| e.to_string())?;
            f(&repo)
        })
        .await?
        .map_err(|e| StepError::Permanent(format!("{step}: {e}")))
    }

    /// Each file's text at the change (None: not there, or not text; at most 4 MiB each).
    pub async fn texts_at_head(
        &self,
        step: &str,
        paths: Vec<String>,
    ) -> Result<Vec<(String, Option<String>)>, StepError> {
        let head = self.head.to_string();
        self.with_repo(step, move |repo| {
            paths
                .into_iter()
                .map(|p| {
                    let text = match repo
                        .read_blob(&head, p.as_bytes(), 4 << 20)
                        .map_err(|e| e.to_string())?
                    {
                        proven_change::BlobRead::Content(b) => String::from_utf8(b).ok(),
                        _ => None,
                    };
                    Ok((p, text))
                })
                .collect()
        })
        .await
    }

    /// The H-MEM record that holds an evidenced refutation of `risk` in this review's
    /// scope (its id), if any: such a risk is not raised again.
    /// The refutations of claims like this risk's (its first `query_tokens` words), best
    /// first: shown, never applied.
    pub async fn similar(
        &self,
        risk: &Risk,
        query_tokens: usize,
    ) -> Result<Vec<(String, f64)>, StepError> {
        self.store
            .memory_similar((self.tenant, self.repository), &risk.claim, query_tokens, 3)
            .await
            .map_err(crate::core::outcome::retryable)
    }

    /// The record of an evidenced refutation of this very claim, when H-MEM holds one. A
    /// record that says a *test* was flaky (written against the claim by earlier versions)
    /// never silences the claim: the test was at fault, not the claim.
    pub async fn remembered(&self, risk: &Risk) -> Result<Option<String>, StepError> {
        Ok(self
            .store
            .memory_lookup(self.tenant, self.repository, &risk.fingerprint())
            .await
            .map_err(crate::core::outcome::retryable)?
            .filter(|memory| !refutes_a_test(memory))
            .map(|memory| memory.id))
    }
}

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
pub(crate) fn test_risk(evidence: &str) -> crate::core::wire::Risk {
    crate::core::wire::Risk {
        title: "t".into(),
        claim: "c".into(),
        path: "calc.py".into(),
        symbol: None,
        evidence: evidence.into(),
    }
}

/// A proving job for unit tests: a Python test of calc.py.
#[cfg(test)]
pub(crate) fn test_job() -> ProveJob {
    ProveJob {
        risk: Risk {
            title: "t".into(),
            claim: "c".into(),
            path: "calc.py".into(),
            symbol: None,
            evidence: "test".into(),
        },
        language: proven_sandbox::Language::Python,
        test: TestRef {
            path: "tests/test_add.py".into(),
            code: String::new(),
        },
        command: Vec::new(),
        selection: None,
        env: Vec::new(),
    }
}

/// Whether `artifact` names one of `shown` exactly (as a whole word: `a.py` is not named by
/// `data.py`). "Seems right", "the base run" or "I checked" name nothing.
pub(crate) fn names_a_shown_artifact(artifact: &str, shown: &[String]) -> bool {
    let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || "_-./".contains(c)));
    shown.iter().any(|name| {
        artifact.match_indices(name.as_str()).any(|(at, _)| {
            boundary(artifact[..at].chars().next_back())
                && boundary(artifact[at + name.len()..].chars().next())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_ignore_wording_noise_but_not_the_place() {
        let a = fingerprint(
            "test",
            "calc.py",
            None,
            "add() now SUBTRACTS its arguments!",
        );
        let b = fingerprint("test", "calc.py", None, "add now subtracts its arguments");
        assert_eq!(a, b);
        assert_ne!(
            a,
            fingerprint("test", "other.py", None, "add now subtracts its arguments")
        );
        // Another claim about the same function is another finding.
        assert_ne!(
            fingerprint("test", "calc.py", Some("add"), "add overflows"),
            fingerprint("test", "calc.py", Some("add"), "add subtracts")
        );
        assert_eq!(
            fingerprint("test", "calc.py", Some("add"), "add subtracts!"),
            fingerprint("test", "calc.py", Some(" add "), "Add subtracts")
        );
    }
}
