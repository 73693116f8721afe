//! The results the review's control steps store and pass each other (their JSON is what a
//! stored review holds: field names are its format).

use proven_config::Informational;
use proven_report::{
    DependencyFileSummary, FailedService, Finding, InputError, LeftOutEntry, NotSeen, Plan,
    RevisionRef,
};
use serde::{Deserialize, Serialize};

use crate::steps::{deps, intake};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct IntakeResult {
    pub(super) repository_dir: String,
    pub(super) base: RevisionRef,
    pub(super) head: RevisionRef,
    pub(super) facts: Vec<intake::FileFacts>,
    /// Every path the change touches, old and new, hex-encoded (paths are bytes).
    pub(super) changed_paths: Vec<String>,
    pub(super) left_out: Vec<LeftOutEntry>,
    pub(super) truncated: bool,
    pub(super) config: Option<(String, String)>,
    /// Changed files intake could not read (over the blob limit): the review is incomplete.
    #[serde(default)]
    pub(super) input_errors: Vec<InputError>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct DepsSettings {
    pub(super) informational_ignore: bool,
    pub(super) dev_dependencies: bool,
    pub(super) max_file_bytes: u64,
}

impl DepsSettings {
    pub(super) fn options(&self) -> deps::DepsOptions {
        deps::DepsOptions {
            informational: if self.informational_ignore {
                Informational::Ignore
            } else {
                Informational::Report
            },
            dev_dependencies: self.dev_dependencies,
            limits: proven_lockfile::Limits {
                max_bytes: self.max_file_bytes,
                ..Default::default()
            },
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct PlanResult {
    pub(super) plan: Plan,
    pub(super) deps: Option<DepsSettings>,
    /// Tries the Fixer gets per proved defect, fixed for the whole review at the plan (so
    /// every worker, whatever families it serves, reads the same value).
    #[serde(default)]
    pub(super) fix_attempts: u32,
    /// Autofix runs for this review.
    #[serde(default)]
    pub(super) autofix: bool,
    /// The model agents run for this review (the dependency findings face the Skeptic).
    #[serde(default)]
    pub(super) agents: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct CollectResult {
    pub(super) sources: Vec<String>,
    pub(super) input_errors: Vec<InputError>,
    pub(super) not_seen: Vec<NotSeen>,
    pub(super) failed_services: Vec<FailedService>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct FileResult {
    pub(super) findings: Vec<Finding>,
    pub(super) input_errors: Vec<InputError>,
    pub(super) not_seen: Vec<NotSeen>,
    pub(super) files: Vec<DependencyFileSummary>,
    /// Findings H-MEM holds an evidenced refutation of: (finding id, memory record id).
    #[serde(default)]
    pub(super) remembered: Vec<(String, String)>,
}

/// The H-MEM fingerprint of a dependency finding: the lock file, the package at its
/// version, and the advisory.
pub(super) fn deps_fingerprint(f: &Finding) -> String {
    let package = f.package.as_ref().map(|p| {
        format!(
            "{}:{}@{}",
            p.ecosystem,
            p.name.to_lowercase(),
            p.new_version
        )
    });
    crate::wire::fingerprint(
        "deps",
        &f.location.path,
        package.as_deref(),
        f.advisory_id(),
    )
}
