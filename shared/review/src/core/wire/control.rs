//! The results the review's control steps (intake, plan, the dependency evidence) store and pass each other (their JSON is what a
//! stored review holds: field names are its format).

use proven_config::Informational;
use proven_report::{
    DependencyFileSummary, FailedService, Finding, InputError, LeftOutEntry, NotSeen, Plan,
    RevisionRef,
};
use serde::{Deserialize, Serialize};

use crate::core::deps;

/// What the later steps need to know about one changed file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FileFacts {
    pub path: String,
    pub old_path: Option<String>,
    pub executable: bool,
    /// Starts with `#!` on either side (None: could not be read to tell).
    pub shebang: Option<bool>,
    /// A pure move: renamed with no line changed.
    pub pure_rename: bool,
    pub binary: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntakeResult {
    pub repository_dir: String,
    pub base: RevisionRef,
    pub head: RevisionRef,
    pub facts: Vec<FileFacts>,
    /// Every path the change touches, old and new, hex-encoded (paths are bytes).
    pub changed_paths: Vec<String>,
    pub left_out: Vec<LeftOutEntry>,
    pub truncated: bool,
    pub config: Option<(String, String)>,
    /// Changed files intake could not read (over the blob limit): the review is incomplete.
    #[serde(default)]
    pub input_errors: Vec<InputError>,
    /// The review's one instant for resolving what a project does not pin (seconds since
    /// the epoch): the base's commit time when the base is older than
    /// [`crate::core::review::RESOLVE_AS_OF_BASE_AFTER_DAYS`] days, else none (today's releases).
    /// Every run of the review, on either side, is prepared as of it, so both sides share one
    /// environment.
    pub resolve_before: Option<i64>,
    /// The head commit's time (seconds since the epoch): from when the World Model holds
    /// what the review read at the head.
    pub head_committed_at: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanResult {
    pub plan: Plan,
    pub deps: Option<DepsSettings>,
    /// Tries the Fixer gets per proved defect, fixed for the whole review at the plan (so
    /// every worker, whatever families it serves, reads the same value).
    #[serde(default)]
    pub fix_attempts: u32,
    /// Autofix runs for this review.
    #[serde(default)]
    pub autofix: bool,
    /// Seconds each of the autofix attempt's runs may take (absent in plans of older
    /// versions: the sandbox's own test timeout).
    #[serde(default)]
    pub autofix_timeout_secs: Option<u64>,
    /// Seconds the package's suite may take when it proves a fix (absent in plans of older
    /// versions: the sandbox's own test timeout).
    #[serde(default)]
    pub suite_timeout_secs: Option<u64>,
    /// The model that writes the autofix attempt's patch (None: the generator's).
    #[serde(default)]
    pub autofix_generator: Option<String>,
    /// The model agents run for this review (the dependency findings face the Skeptic).
    #[serde(default)]
    pub agents: bool,
    /// The tools the plan lets the agents use (absent in plans of older versions: both).
    #[serde(default)]
    pub tools: PlanTools,
    /// The Planner's bounded steps (absent in plans of older versions: the defaults).
    #[serde(default)]
    pub markovian: Bounds,
    /// H-MEM's bounds for this review.
    #[serde(default)]
    pub hmem: HmemBounds,
    /// The repository's accepted advisories (`ignore`), fixed for the review at its plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<IgnoreRule>,
}

/// The dependency evidence's settings, fixed for a review at its plan (a stored plan's
/// `deps`; `crate::core::deps::DepsOptions` is what the step reads of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepsSettings {
    pub informational_ignore: bool,
    pub dev_dependencies: bool,
    pub max_file_bytes: u64,
}

impl From<DepsSettings> for deps::DepsOptions {
    fn from(settings: DepsSettings) -> deps::DepsOptions {
        deps::DepsOptions {
            informational: if settings.informational_ignore {
                Informational::Ignore
            } else {
                Informational::Report
            },
            dev_dependencies: settings.dev_dependencies,
            limits: proven_lockfile::Limits {
                max_bytes: settings.max_file_bytes,
                ..Default::default()
            },
        }
    }
}

/// The tools a plan lets the agents use: the Prover's tests in the sandbox, the
/// Investigator's advisory queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanTools {
    pub sandbox: bool,
    pub queries: bool,
}

impl Default for PlanTools {
    fn default() -> Self {
        PlanTools {
            sandbox: true,
            queries: true,
        }
    }
}

/// H-MEM's bounds (`PROVEN_HMEM_*`), fixed for a review at its plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HmemBounds {
    /// The most a repository's memory may hold.
    pub max_bytes: u64,
    /// Leading words of a claim that count when similar refutations are looked for.
    pub query_tokens: usize,
}

impl Default for HmemBounds {
    fn default() -> Self {
        HmemBounds {
            max_bytes: 64 << 20,
            query_tokens: 8,
        }
    }
}

/// What a dependency step could not read (the review is then incomplete), could not see, or
/// could not reach (a failed service), for the review to say.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Unread {
    pub input_errors: Vec<InputError>,
    pub not_seen: Vec<NotSeen>,
    pub failed_services: Vec<FailedService>,
}

impl Unread {
    /// Said in the review.
    pub fn into_report(self, report: &mut proven_report::Report) {
        report.input_errors.extend(self.input_errors);
        report.not_seen.extend(self.not_seen);
        report.failed_services.extend(self.failed_services);
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FileResult {
    pub findings: Vec<Finding>,
    #[serde(flatten)]
    pub unread: Unread,
    pub files: Vec<DependencyFileSummary>,
    /// Findings H-MEM holds an evidenced refutation of: (finding id, memory record id).
    #[serde(default)]
    pub remembered: Vec<(String, String)>,
}

/// How a change is cut into bounded steps (`PROVEN_MARKOVIAN_STEP_UNIT`; see
/// `crate::core::bounded`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum StepUnit {
    /// One part a file.
    #[default]
    File,
    /// One part a hunk (with its file's header).
    Hunk,
}

/// The bounded-steps engine's settings (`PROVEN_MARKOVIAN*`), fixed for a review at its
/// plan (see `crate::core::bounded`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounds {
    pub on: bool,
    /// Estimated tokens of the whole Planner prompt above which it runs in steps.
    pub threshold_tokens: usize,
    pub unit: StepUnit,
    /// Estimated tokens the carried state may hold.
    pub carry_tokens: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            on: true,
            threshold_tokens: 8000,
            unit: StepUnit::File,
            carry_tokens: 800,
        }
    }
}

/// One entry, as the plan fixed it for the review (`proven_config::IgnoreEntry`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoreRule {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
}

impl From<&proven_config::IgnoreEntry> for IgnoreRule {
    fn from(e: &proven_config::IgnoreEntry) -> IgnoreRule {
        IgnoreRule {
            id: e.id.clone(),
            package: e.package.clone(),
            path: e.path.clone(),
            reason: e.reason.clone(),
            expires: e.expires.clone(),
        }
    }
}
