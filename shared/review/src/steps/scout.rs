//! Scout: classify the change from its files and write the plan line before anything else
//! runs. No model: the rules are plain code a reader can check against the trace.
//!
//! Rules (after the seed design's "five rules", reduced to what this build runs):
//! - one file with a security signal makes the whole change `security` (deep band);
//! - `docs` only when every file is verified prose: a prose suffix, no executable bit, no
//!   shebang on either side (a name proves nothing);
//! - a change that is not wholly one kind is ambiguous and says so;
//! - the plan line is written before any evidence step runs.

use crate::step_name::Name;
use proven_lockfile::Format;
use proven_report::Plan;
use serde_json::json;

use super::intake::FileFacts;
use crate::Trace;
use crate::step_name::StepName;

const PROSE_SUFFIXES: &[&str] = &[".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc"];
const CONFIG_SUFFIXES: &[&str] = &[
    ".yml",
    ".yaml",
    ".toml",
    ".json",
    ".ini",
    ".cfg",
    ".conf",
    ".properties",
    ".env",
    ".xml",
];
/// Path fragments that mark security-sensitive code.
const SECURITY_SIGNALS: &[&str] = &[
    "auth",
    "crypto",
    "security",
    "secret",
    "password",
    "passwd",
    "token",
    "permission",
    "acl",
    "sandbox",
    "tls",
    "ssl",
    "jwt",
    "oauth",
    "login",
    "session",
    "cert",
    ".github/workflows/",
];

/// What kind of change a file, or the whole change, is (the plan's `change_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum ChangeKind {
    Security,
    Dependency,
    Refactor,
    Docs,
    Config,
    Feature,
    /// No file changed.
    Empty,
}

impl ChangeKind {
    /// Verified prose only, or nothing: no model runs for it.
    pub const fn runs_no_model(self) -> bool {
        matches!(self, ChangeKind::Docs | ChangeKind::Empty)
    }
}

/// How deep the review goes: the deep band adds the coverage auditor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum Band {
    Deep,
    Light,
}

/// One file, the kind of change it is, and the rule that said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    pub path: String,
    pub kind: ChangeKind,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    pub kind: ChangeKind,
    pub band: Band,
    pub ambiguous: bool,
    /// Each file and the rule it matched.
    pub signals: Vec<Signal>,
}

fn lower(p: &str) -> String {
    p.to_ascii_lowercase()
}

fn file_kind(f: &FileFacts) -> (ChangeKind, String) {
    let path = lower(&f.path);
    if let Some(sig) = SECURITY_SIGNALS.iter().find(|s| path.contains(*s)) {
        return (ChangeKind::Security, format!("path contains {sig:?}"));
    }
    let is_dep = |p: &str| Format::detect(p).is_some();
    if is_dep(&f.path) || f.old_path.as_deref().is_some_and(is_dep) {
        return (
            ChangeKind::Dependency,
            "dependency manifest or lock file".into(),
        );
    }
    if f.pure_rename {
        return (ChangeKind::Refactor, "renamed without changes".into());
    }
    let prose_name = |p: &str| PROSE_SUFFIXES.iter().any(|s| lower(p).ends_with(s));
    if prose_name(&f.path) && f.old_path.as_deref().is_none_or(prose_name) {
        return match (f.executable, f.shebang, f.binary) {
            (false, Some(false), false) => (ChangeKind::Docs, "verified prose".into()),
            (true, _, _) => (
                ChangeKind::Feature,
                "prose suffix but executable: not prose".into(),
            ),
            (_, Some(true), _) => (
                ChangeKind::Feature,
                "prose suffix but starts with #!: not prose".into(),
            ),
            (_, None, _) => (
                ChangeKind::Feature,
                "prose suffix but could not be read to verify".into(),
            ),
            (_, _, true) => (ChangeKind::Feature, "prose suffix but binary".into()),
        };
    }
    if CONFIG_SUFFIXES.iter().any(|s| path.ends_with(s)) || path.ends_with("dockerfile") {
        return (ChangeKind::Config, "configuration file".into());
    }
    (ChangeKind::Feature, "source or other file".into())
}

pub fn classify(files: &[FileFacts]) -> Classification {
    let mut signals = Vec::with_capacity(files.len());
    let mut kinds: Vec<ChangeKind> = Vec::new();
    for f in files {
        let (kind, why) = file_kind(f);
        signals.push(Signal {
            path: f.path.clone(),
            kind,
            why,
        });
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    let (kind, ambiguous) = if kinds.contains(&ChangeKind::Security) {
        (ChangeKind::Security, false)
    } else if kinds.is_empty() {
        (ChangeKind::Empty, false)
    } else if kinds.len() == 1 {
        (kinds[0], false)
    } else {
        // Not wholly one kind: never planned as a confident lighter class.
        (ChangeKind::Feature, true)
    };
    Classification {
        kind,
        band: if kind == ChangeKind::Security {
            Band::Deep
        } else {
            Band::Light
        },
        ambiguous,
        signals,
    }
}

/// What the review's configuration lets run, beside the change itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanOptions {
    pub dependencies: bool,
    pub agents: bool,
    /// Fixer tries per proved defect (0: no Fixer).
    pub fix_attempts: u32,
    pub autofix: bool,
    pub second_reviewer: bool,
    /// Scout Intent chooses the plan (`scout_intent`); off: every review runs in full.
    pub scout_intent: bool,
    /// Proposed fixes are on (`fixes`).
    pub fixes: bool,
}

/// The plan entry a step belongs to: every step that runs is one of the plan's entries
/// (the trace's plan line names exactly what may run, and nothing runs outside it).
pub fn plan_entry(step: &str) -> Option<&'static str> {
    Some(match StepName::parse(step)? {
        StepName::Intake | StepName::Plan | StepName::Judge => "intake",
        StepName::DepsCollect | StepName::DepsFile => "dependency evidence",
        StepName::SkepticDeps => "skeptic (dependency findings)",
        StepName::Planner => "planner",
        StepName::Prover | StepName::Reproduce => "prover (tests in the sandbox)",
        StepName::Investigator => "investigator (advisory queries)",
        StepName::Skeptic | StepName::Refute | StepName::SkepticQuery => "skeptic",
        StepName::Fixer | StepName::SandboxFix => "fixer",
        StepName::Autofix => "autofix",
        StepName::Auditor => "coverage auditor",
        StepName::SecondReviewer => "second reviewer",
        StepName::SandboxRun => return None,
    })
}

/// Builds the plan and writes its one trace line: each entry of `runs` is a stage that
/// runs (or may run, as the change's risks need it); `left_out` names every stage that
/// will not, and why.
pub fn plan(files: &[FileFacts], options: PlanOptions, trace: &mut Trace) -> Planned {
    let c = classify(files);
    let touches_dependencies = c.signals.iter().any(|s| s.kind == ChangeKind::Dependency);
    let mut runs = vec!["intake".to_string()];
    let mut left_out = Vec::new();
    // With scout_intent off no plan lightens the review: verified prose runs the agents too.
    let no_model = options.scout_intent && c.kind.runs_no_model();
    let agents = options.agents && !no_model;
    let dependency_evidence = options.dependencies && touches_dependencies;
    if dependency_evidence {
        runs.push("dependency evidence".to_string());
        if options.agents {
            runs.push("skeptic (dependency findings)".to_string());
        }
    } else if !options.dependencies {
        left_out.push("dependency evidence: switched off (dependencies.enabled = off)".to_string());
    } else {
        left_out.push("dependency evidence: no dependency file changed".to_string());
    }
    if no_model {
        if options.agents {
            left_out.push(format!(
                "model agents: a {} change (verified prose only runs no model)",
                c.kind.as_str()
            ));
        }
    } else if agents {
        runs.push("planner".to_string());
        runs.push("prover (tests in the sandbox)".to_string());
        runs.push("investigator (advisory queries)".to_string());
        runs.push("skeptic".to_string());
        if options.fix_attempts > 0 {
            runs.push("fixer".to_string());
        } else if !options.fixes {
            left_out.push("fixer: switched off (fixes = off)".to_string());
        } else {
            left_out.push("fixer: switched off (fix_attempts = 0)".to_string());
        }
        if options.autofix && options.fix_attempts > 0 {
            runs.push("autofix".to_string());
        }
        if c.band == Band::Deep {
            runs.push("coverage auditor".to_string());
        }
        if options.second_reviewer {
            runs.push("second reviewer".to_string());
        }
    } else {
        left_out.push(
            "model agents (planner, prover, skeptic): not configured (set PROVEN_GENERATOR_API_KEY or \
             PROVEN_GENERATOR_BASE_URL); only dependency evidence can prove findings"
                .to_string(),
        );
    }
    let plan = Plan {
        change_kind: c.kind.as_str().to_string(),
        band: c.band.as_str().to_string(),
        runs,
        left_out,
    };
    trace.push(
        "plan",
        json!({
            "plan": if options.scout_intent { "chosen by Scout Intent" } else { "no plan chosen (scout_intent is off): the review runs in full" },
            "change_kind": plan.change_kind,
            "band": plan.band,
            "ambiguous": c.ambiguous,
            "signals": c.signals.iter().map(|s| json!({"path": s.path, "signal": format!("{}: {}", s.kind.as_str(), s.why)})).collect::<Vec<_>>(),
            "runs": plan.runs,
            "left_out": plan.left_out,
        }),
    );
    Planned {
        plan,
        kind: c.kind,
        dependency_evidence,
        models: agents,
    }
}

/// The plan, and what the plan step starts from it.
#[derive(Debug, Clone)]
pub struct Planned {
    pub plan: Plan,
    pub kind: ChangeKind,
    /// The dependency evidence runs (it is on, and a dependency file changed).
    pub dependency_evidence: bool,
    /// The model agents run (they are on, and the plan does not leave them out).
    pub models: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str) -> FileFacts {
        FileFacts {
            path: path.into(),
            old_path: None,
            executable: false,
            shebang: Some(false),
            pure_rename: false,
            binary: false,
        }
    }

    #[test]
    fn one_security_signal_makes_the_whole_change_security() {
        let c = classify(&[f("README.md"), f("src/auth/login.rs"), f("Cargo.lock")]);
        assert_eq!((c.kind, c.band), (ChangeKind::Security, Band::Deep));
    }

    #[test]
    fn only_verified_prose_is_docs() {
        assert_eq!(
            classify(&[f("docs/a.md"), f("CHANGES.txt")]).kind,
            ChangeKind::Docs
        );
        let mut script = f("docs/run.md");
        script.shebang = Some(true);
        assert_eq!(classify(&[script]).kind, ChangeKind::Feature);
        let mut exec = f("notes.txt");
        exec.executable = true;
        assert_eq!(classify(&[exec]).kind, ChangeKind::Feature);
        let mut unread = f("big.md");
        unread.shebang = None;
        assert_eq!(classify(&[unread]).kind, ChangeKind::Feature);
    }

    #[test]
    fn the_plan_lists_exactly_what_the_options_let_run() {
        let mut trace = Trace::new("t".to_string());
        let options = PlanOptions {
            dependencies: true,
            agents: true,
            fix_attempts: 2,
            autofix: false,
            second_reviewer: false,
            scout_intent: true,
            fixes: true,
        };
        let plan = plan(&[f("calc.py"), f("Cargo.lock")], options, &mut trace).plan;
        assert!(plan.runs.contains(&"fixer".to_string()), "{plan:?}");
        assert!(
            plan.runs
                .contains(&"skeptic (dependency findings)".to_string())
        );
        assert!(!plan.runs.contains(&"autofix".to_string()));
        assert!(
            !plan
                .left_out
                .iter()
                .any(|l| l.contains("not part of this build"))
        );
        let off = plan_for(PlanOptions {
            fix_attempts: 0,
            ..options
        });
        assert!(!off.runs.contains(&"fixer".to_string()));
        assert!(
            off.left_out
                .iter()
                .any(|l| l == "fixer: switched off (fix_attempts = 0)")
        );
        let no_fixes = plan_for(PlanOptions {
            fix_attempts: 0,
            fixes: false,
            ..options
        });
        assert!(
            no_fixes
                .left_out
                .iter()
                .any(|l| l == "fixer: switched off (fixes = off)"),
            "{no_fixes:?}"
        );
        // Verified prose runs no model, unless no plan is chosen (scout_intent off).
        let docs = [f("README.md")];
        let mut trace = Trace::new("t".to_string());
        let planned = super::plan(&docs, options, &mut trace);
        assert!(!planned.models && !planned.plan.runs.contains(&"planner".to_string()));
        let mut trace = Trace::new("t".to_string());
        let full = super::plan(
            &docs,
            PlanOptions {
                scout_intent: false,
                ..options
            },
            &mut trace,
        );
        assert!(full.models && full.plan.runs.contains(&"planner".to_string()));
        assert_eq!(
            trace.lines()[0].1["plan"],
            "no plan chosen (scout_intent is off): the review runs in full"
        );
        // Every step the pipeline runs belongs to one plan entry.
        for step in [
            "intake",
            "plan",
            "judge",
            "deps.collect",
            "deps.file",
            "skeptic.deps",
            "planner",
            "prover",
            "sandbox.reproduce",
            "investigator",
            "skeptic",
            "sandbox.refute",
            "skeptic.query",
            "fixer",
            "sandbox.fix",
            "autofix",
            "auditor",
            "second-reviewer",
        ] {
            assert!(plan_entry(step).is_some(), "{step} has no plan entry");
        }
    }

    fn plan_for(options: PlanOptions) -> proven_report::Plan {
        plan(&[f("calc.py")], options, &mut Trace::new("t".to_string())).plan
    }

    #[test]
    fn mixed_changes_are_ambiguous_and_never_light_classes() {
        let c = classify(&[f("docs/a.md"), f("src/main.rs")]);
        assert_eq!((c.kind, c.ambiguous), (ChangeKind::Feature, true));
        let c = classify(&[f("Cargo.lock"), f("Cargo.toml")]);
        assert_eq!((c.kind, c.ambiguous), (ChangeKind::Dependency, false));
    }
}
