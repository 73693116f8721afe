//! Scout's plan: the five rules choose a kind's plan or override it, the plan names what
//! runs and what it leaves out, and the plan line says so before anything else runs.

use proven_config::{Doubled, PlanAgents, PlanSpec, PlanTools, ReviewClass, ScoutSettings};
use proven_report::Plan;
use serde_json::json;

use super::classify::{Band, ChangeKind, Classification, classify, is_manifest};
use proven_sandbox::analyzer::Analyzer;

use crate::core::step_name::Name;
use crate::core::step_name::StepName;
use crate::core::trace::Trace;
use crate::core::wire::FileFacts;

/// What the review's configuration lets run, beside the change itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanOptions {
    pub dependencies: bool,
    pub agents: bool,
    /// The operator chose the dependency-only plan (`agents: off`); else agents that do not
    /// run for want of a model make the review partial.
    pub agents_off: bool,
    /// Fixer tries per proved defect (0: no Fixer).
    pub fix_attempts: u32,
    pub autofix: bool,
    /// A second reviewer is connected.
    pub second_reviewer: bool,
    /// Scout Intent chooses the plan (`scout_intent`); off: every review runs in full.
    pub scout_intent: bool,
    /// Proposed fixes are on (`fixes`).
    pub fixes: bool,
    /// The tool evidence's analyzers the settings name (`tool_analyzers`), by
    /// [`Analyzer::ALL`]'s order.
    pub analyzers: [bool; Analyzer::ALL.len()],
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
        StepName::Autofix | StepName::AutofixProof => "autofix",
        StepName::Auditor => "coverage auditor",
        StepName::SecondReviewer => "second reviewer",
        StepName::Tool => "tool evidence",
        StepName::SkepticTool => "skeptic (tool findings)",
        StepName::SandboxRun => return None,
    })
}

/// The plan a change runs, and which rule chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub spec: PlanSpec,
    pub decided_by: String,
}

const NOTHING: PlanSpec = PlanSpec {
    class: ReviewClass::Docs,
    agents: PlanAgents::None,
    tools: PlanTools {
        queries: false,
        sandbox: false,
    },
    sources: false,
    doubled: Doubled::No,
};

/// The five rules over a classified change: the kind's plan, unless the ambiguity, the
/// guard, security or the floor says the review runs a class in full.
pub fn choose(c: &Classification, scout_intent: bool, scout: &ScoutSettings) -> Choice {
    let security = c.kind == ChangeKind::Security;
    let floor = c.floor.as_ref().map(|f| f.class);
    // The class the configured rules choose: the floor, at least standard (security for a
    // security change).
    let rules_class = floor.unwrap_or(ReviewClass::Docs).max(if security {
        ReviewClass::Security
    } else {
        ReviewClass::Standard
    });
    let full = |class, why: String| Choice {
        spec: PlanSpec::full(class),
        decided_by: why,
    };
    if !scout_intent {
        return full(
            rules_class,
            "no plan chosen (scout_intent is off): the review runs in full".into(),
        );
    }
    if c.kind == ChangeKind::Empty {
        return Choice {
            spec: NOTHING,
            decided_by: "no file changed".into(),
        };
    }
    if c.ambiguous && !security {
        return full(
            rules_class,
            format!(
                "ambiguity: the change is not wholly one kind; class {} runs in full",
                rules_class.as_str()
            ),
        );
    }
    let kind = c.kind.as_str();
    let spec = scout.plan(kind);
    if spec.lightens() && !matches!(c.kind, ChangeKind::Docs | ChangeKind::Dependency) {
        return full(
            ReviewClass::Security,
            format!(
                "guard: plan_{kind} leaves parts out, but only a change verified as prose or as manifests may \
                 be lightened; class security runs in full, doubled"
            ),
        );
    }
    if security && spec.class < ReviewClass::Security {
        return full(
            ReviewClass::Security,
            format!("security is never outvoted: plan_{kind} is below class security"),
        );
    }
    if let Some(f) = c.floor.as_ref().filter(|f| f.class > spec.class) {
        return full(
            f.class,
            format!(
                "floor: path rule {} on {} sets class {}, above plan_{kind}'s {}; class {} runs in full",
                f.rule,
                f.path,
                f.class.as_str(),
                spec.class.as_str(),
                f.class.as_str()
            ),
        );
    }
    Choice {
        spec,
        decided_by: format!("plan_{kind}"),
    }
}

/// Whether a connected second reviewer doubles a review of this plan (security always).
fn doubles(spec: &PlanSpec, scout: &ScoutSettings) -> bool {
    spec.class == ReviewClass::Security
        || match spec.doubled {
            Doubled::Yes => true,
            Doubled::No => false,
            Doubled::Class => scout.second_reviewer_classes.contains(&spec.class),
        }
}

/// What a plan runs, stage by stage, and what it leaves out, each with why.
struct Stages {
    runs: Vec<String>,
    left_out: Vec<String>,
}

impl Stages {
    fn run(&mut self, stage: &str) {
        self.runs.push(stage.to_string());
    }

    fn leave(&mut self, part: String) {
        self.left_out.push(part);
    }
}

/// The plan's part when no agent runs for want of them: the operator's dependency-only
/// choice (`agents = off`), or agents not configured, which makes a review partial when its
/// plan wanted them and the change holds a file only they examine (a change of dependency
/// files alone is read whole by the dependency evidence). Returns why it is partial.
fn no_agents(
    st: &mut Stages,
    o: &PlanOptions,
    spec: &PlanSpec,
    wanted: PlanAgents,
    files: &[FileFacts],
) -> Option<String> {
    if o.agents_off {
        st.leave(
            "model agents (planner, prover, skeptic): switched off (agents = off): the \
             dependency-only plan, as the operator chose"
                .into(),
        );
        return None;
    }
    st.leave(
        "model agents (planner, prover, skeptic): not configured (set PROVEN_GENERATOR_API_KEY \
         or PROVEN_GENERATOR_BASE_URL, or choose the dependency-only plan with agents = off); \
         only dependency evidence can prove findings"
            .into(),
    );
    let unexamined = files.iter().any(|f| !is_manifest(&f.path));
    (wanted != PlanAgents::None && unexamined).then(|| {
        format!(
            "the {} plan runs the model agents and none is configured: only dependency files \
             were examined, not the code the change touches",
            spec.class.as_str()
        )
    })
}

/// The model agents' stages of a plan that runs every agent.
fn agent_stages(st: &mut Stages, o: &PlanOptions, spec: &PlanSpec, why: &str, second: bool) {
    st.run("planner");
    if spec.tools.sandbox {
        st.run("prover (tests in the sandbox)");
    } else {
        st.leave(format!(
            "prover (tests in the sandbox): the plan leaves out the sandbox ({why})"
        ));
    }
    if spec.tools.queries {
        st.run("investigator (advisory queries)");
    } else {
        st.leave(format!(
            "investigator (advisory queries): the plan leaves out the queries ({why})"
        ));
    }
    st.run("skeptic");
    if !spec.tools.sandbox {
        st.leave(format!(
            "fixer: a fix is proved in the sandbox, which the plan leaves out ({why})"
        ));
    } else if !o.fixes {
        st.leave("fixer: switched off (fixes = off)".into());
    } else if o.autofix {
        st.leave(
            "fixer: the autofix attempt makes the one fix of the whole change (autofix = on)"
                .into(),
        );
        st.run("autofix");
    } else if o.fix_attempts > 0 {
        st.run("fixer");
    } else {
        st.leave("fixer: switched off (fix_attempts = 0)".into());
    }
    if spec.class == ReviewClass::Security {
        st.run("coverage auditor");
    }
    if second {
        st.run("second reviewer");
    } else if o.second_reviewer {
        st.leave(format!(
            "second reviewer: the plan does not double class {} (doubled and second_reviewer_classes)",
            spec.class.as_str()
        ));
    }
}

/// Builds the plan and writes its trace lines: the plan line, then one line for each part
/// it leaves out. Each entry of `runs` is a stage that runs (or may run, as the change's
/// risks need it); `left_out` names every stage that will not, and why.
pub fn plan(
    files: &[FileFacts],
    o: PlanOptions,
    scout: &ScoutSettings,
    trace: &mut Trace,
) -> Planned {
    let c = classify(files, scout);
    let Choice { spec, decided_by } = choose(&c, o.scout_intent, scout);
    let why = decided_by.as_str();
    let band = if spec.class == ReviewClass::Security {
        Band::Deep
    } else {
        Band::Light
    };
    let touches_dependencies = files
        .iter()
        .any(|f| is_manifest(&f.path) || f.old_path.as_deref().is_some_and(is_manifest));
    let mut st = Stages {
        runs: vec!["intake".to_string()],
        left_out: Vec::new(),
    };
    let dependency_evidence = o.dependencies && touches_dependencies && spec.sources;
    if dependency_evidence {
        st.run("dependency evidence");
    } else if !o.dependencies {
        st.leave("dependency evidence: switched off (dependencies.enabled = off)".into());
    } else if !touches_dependencies {
        st.leave("dependency evidence: no dependency file changed".into());
    } else {
        st.leave(format!(
            "dependency evidence: the plan leaves out the sources ({why})"
        ));
    }
    let second = o.second_reviewer && doubles(&spec, scout);
    let mut partial = None;
    let (skeptic, models) = match (o.agents, spec.agents) {
        (false, wanted) => {
            partial = no_agents(&mut st, &o, &spec, wanted, files);
            (false, false)
        }
        (true, PlanAgents::None) => {
            st.leave(format!(
                "model agents: the plan runs none, for a {} change ({why})",
                c.kind.as_str()
            ));
            (false, false)
        }
        (true, PlanAgents::Skeptic) => {
            st.leave(format!(
                "planner, prover, investigator: the plan runs only the skeptic ({why})"
            ));
            (true, false)
        }
        (true, PlanAgents::All) => {
            agent_stages(&mut st, &o, &spec, why, second);
            (true, true)
        }
    };
    if dependency_evidence && skeptic {
        st.runs
            .insert(2, "skeptic (dependency findings)".to_string());
    }
    let analyzers = tool_stage(
        &mut st,
        files,
        (&o, scout.tool_analyzer_classes.contains(&spec.class)),
        &spec,
        why,
    );
    if !analyzers.is_empty() && skeptic {
        st.run("skeptic (tool findings)");
    }
    let plan = Plan {
        change_kind: c.kind.as_str().to_string(),
        class: spec.class.as_str().to_string(),
        band: band.as_str().to_string(),
        runs: st.runs,
        left_out: st.left_out,
        partial,
    };
    write_plan_line(trace, &c, &spec, why, o.scout_intent, &plan, &analyzers);
    Planned {
        plan,
        kind: c.kind,
        dependency_evidence,
        skeptic,
        models,
        second_reviewer: models && second,
        tools: spec.tools,
        analyzers,
    }
}

/// The tool evidence's stage: each analyzer the settings name whose language the change
/// touches, for a review of a class `tool_analyzer_classes` names (`for_class`), when the
/// plan keeps the sandbox; what it leaves out, with why.
fn tool_stage(
    st: &mut Stages,
    files: &[FileFacts],
    (o, for_class): (&PlanOptions, bool),
    spec: &PlanSpec,
    why: &str,
) -> Vec<(Analyzer, Vec<String>)> {
    let mut chosen = Vec::new();
    for (analyzer, on) in Analyzer::ALL.into_iter().zip(o.analyzers) {
        let paths: Vec<String> = files
            .iter()
            .filter(|f| !f.binary && analyzer.reads(&f.path))
            .map(|f| f.path.clone())
            .collect();
        if paths.is_empty() {
            continue;
        }
        if !on {
            st.leave(format!(
                "tool evidence ({}): switched off (tool_analyzers)",
                analyzer.words()
            ));
        } else if !for_class {
            st.leave(format!(
                "tool evidence ({}): not for a {} review (tool_analyzer_classes)",
                analyzer.words(),
                spec.class.as_str()
            ));
        } else if !spec.tools.sandbox {
            st.leave(format!(
                "tool evidence ({}): the plan leaves out the sandbox ({why})",
                analyzer.words()
            ));
        } else {
            chosen.push((analyzer, paths));
        }
    }
    if !chosen.is_empty() {
        st.run("tool evidence");
    }
    chosen
}

fn write_plan_line(
    trace: &mut Trace,
    c: &Classification,
    spec: &PlanSpec,
    decided_by: &str,
    scout_intent: bool,
    plan: &Plan,
    analyzers: &[(Analyzer, Vec<String>)],
) {
    let mut signals: Vec<serde_json::Value> = c
        .signals
        .iter()
        .map(|s| json!({"path": s.path, "signal": format!("{}: {}", s.kind.as_str(), s.why)}))
        .collect();
    if let Some(f) = &c.floor {
        signals.push(json!({"path": f.path, "signal": format!("floor: path rule {}", f.rule)}));
    }
    trace.push(
        "plan",
        json!({
            "plan": if scout_intent {
                format!("chosen by Scout Intent: {}", spec.text())
            } else {
                decided_by.to_string()
            },
            "decided_by": decided_by,
            "change_kind": plan.change_kind,
            "class": plan.class,
            "confidence": (c.confidence * 1000.0).round() / 1000.0,
            "confidence_band": c.confidence_band(),
            "band": plan.band,
            "ambiguous": c.ambiguous,
            "signals": signals,
            "runs": plan.runs,
            "analyzers": analyzers.iter().map(|(a, _)| a.words()).collect::<Vec<_>>(),
            "left_out": plan.left_out,
        }),
    );
    for part in &plan.left_out {
        trace.push("plan_left_out", json!({"part": part}));
    }
}

/// The plan, and what the plan step starts from it.
#[derive(Debug, Clone)]
pub struct Planned {
    pub plan: Plan,
    pub kind: ChangeKind,
    /// The dependency evidence runs (it is on, a dependency file changed, the plan keeps it).
    pub dependency_evidence: bool,
    /// The Skeptic of the dependency findings runs.
    pub skeptic: bool,
    /// The Planner and the agents after it run.
    pub models: bool,
    /// The second reviewer doubles the review.
    pub second_reviewer: bool,
    /// The tools the agents may use.
    pub tools: PlanTools,
    /// The tool evidence's analyzers that run, each with the change's files of its
    /// language.
    pub analyzers: Vec<(Analyzer, Vec<String>)>,
}
