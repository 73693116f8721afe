//! What the attempt fixes: every finding the Judge will keep whose evidence is a test, a
//! query or an advisory (the Judge's own rules decide which: the registry hands autofix
//! [`crate::control::judge::kept`], which applies them), with what its evidence needs to be
//! run again; and what keeps the attempt from "fixed" before any prompt (a
//! dependency file whose evidence did not finish: its findings are not known).

use proven_report::Finding;
use proven_store::StepRow;
use serde::{Deserialize, Serialize};

use crate::core::rows::StepState;
use crate::core::step_name::StepName;
use crate::core::wire::ProveJob;

/// A package a row of advisories proves affected, where the change names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Affected {
    /// The file that names it (a lock file or manifest; for a query, a Dockerfile, a
    /// script).
    pub path: String,
    pub ecosystem: String,
    pub package: String,
    pub version: String,
    pub advisory: String,
    #[serde(default)]
    pub summary: String,
    /// The smallest version that leaves the advisory, when the rows show one.
    #[serde(default)]
    pub fixed: Option<String>,
    /// Proven's own proposed dependency fix (its edit or its command), when it made one.
    #[serde(default)]
    pub proposed: Option<String>,
}

/// One kept finding the attempt must close, and the evidence that proved it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "evidence", rename_all = "lowercase")]
pub enum Proved {
    /// Its test passed on the base and failed on the change.
    Test { title: String, job: ProveJob },
    /// A dependency file's advisory rows.
    Advisory { title: String, affected: Affected },
    /// A query's advisory rows, anchored to a line the change adds.
    Query { title: String, affected: Affected },
}

impl Proved {
    pub fn title(&self) -> &str {
        match self {
            Proved::Test { title, .. }
            | Proved::Advisory { title, .. }
            | Proved::Query { title, .. } => title,
        }
    }

    /// The file the finding is about.
    pub fn path(&self) -> &str {
        match self {
            Proved::Test { job, .. } => &job.risk.path,
            Proved::Advisory { affected, .. } | Proved::Query { affected, .. } => &affected.path,
        }
    }
}

/// What a kept finding with advisory rows names of its package (None for a finding
/// without a package or an advisory).
pub fn affected(finding: &Finding) -> Option<Affected> {
    let package = finding.package.as_ref()?;
    let advisory = finding.advisory.as_ref()?;
    let fix = finding.fix.as_ref();
    let proposed = fix
        .and_then(|f| f.proposed.as_ref())
        .map(|p| match &p.command {
            Some(c) => format!("run `{c}`"),
            None => format!(
                "raise it to {} in {} ({})",
                p.version,
                finding.location.path,
                if p.proved {
                    "proved by the dependency evidence"
                } else {
                    "not proved"
                }
            ),
        });
    Some(Affected {
        path: finding.location.path.clone(),
        ecosystem: package.ecosystem.clone(),
        package: package.name.clone(),
        version: package.new_version.clone(),
        advisory: advisory.id.clone(),
        summary: advisory.summary.clone().unwrap_or_default(),
        fixed: fix.and_then(|f| f.version.clone()),
        proposed,
    })
}

/// Dependency files whose evidence did not finish: their findings are not known, so the
/// attempt cannot say they are fixed.
pub fn unknown(rows: &[StepRow]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.id.step == StepName::DepsFile.as_str())
        .filter(|r| matches!(StepState::of(r), StepState::Failed | StepState::Dead))
        .map(|r| {
            format!(
                "{}: its dependency evidence did not finish, so its findings are not known",
                r.id.key
            )
        })
        .collect()
}

/// The manifests beside a lock file that declare what it locks (a fix of the lock file
/// may raise the declared range too).
pub fn manifests_beside(path: &str) -> Vec<String> {
    let (dir, name) = match path.rsplit_once('/') {
        Some((d, n)) => (format!("{d}/"), n),
        None => (String::new(), path),
    };
    let beside: &[&str] = match name {
        "package-lock.json" | "npm-shrinkwrap.json" | "yarn.lock" | "pnpm-lock.yaml" => {
            &["package.json"]
        }
        "Cargo.lock" => &["Cargo.toml"],
        "poetry.lock" | "uv.lock" | "pdm.lock" => &["pyproject.toml"],
        "Pipfile.lock" => &["Pipfile"],
        "composer.lock" => &["composer.json"],
        "go.sum" => &["go.mod"],
        "go.mod" => &["go.sum"],
        "Gemfile.lock" => &["Gemfile"],
        _ => &[],
    };
    beside.iter().map(|m| format!("{dir}{m}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_file_has_its_manifest_beside_it() {
        assert_eq!(
            manifests_beside("web/package-lock.json"),
            ["web/package.json"]
        );
        assert_eq!(manifests_beside("Cargo.lock"), ["Cargo.toml"]);
        assert_eq!(manifests_beside("go.mod"), ["go.sum"]);
        assert!(manifests_beside("requirements.txt").is_empty());
    }

    #[test]
    fn a_dependency_file_whose_evidence_failed_is_unknown() {
        let row = |step: &str, key: &str, state: &str| {
            crate::core::rows::test_row(step, key, state, None)
        };
        let rows = vec![
            row(StepName::DepsFile.as_str(), "requirements.txt", "failed"),
            row(StepName::DepsFile.as_str(), "Cargo.lock", "dead"),
            row(StepName::DepsFile.as_str(), "go.mod", "done"),
            row(StepName::Prover.as_str(), "r0", "failed"),
        ];
        assert_eq!(
            unknown(&rows),
            [
                "requirements.txt: its dependency evidence did not finish, so its findings are not known",
                "Cargo.lock: its dependency evidence did not finish, so its findings are not known"
            ]
        );
    }
}
