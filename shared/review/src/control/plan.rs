//! The plan step: the configuration resolved with the repository's own file, the plan line,
//! and the finding pipelines it starts.

use proven_config::Informational;
use proven_pipeline::{Lease, NewStep, Outcome, StepError};

use crate::core::outcome::FailureKind;
use crate::core::outcome::Next;
use crate::core::outcome::{outcome, to_json};
use crate::core::rows::result_of;
use crate::core::step::StepContext;
use crate::core::step_name::INTAKE;
use crate::core::step_name::Name;
use crate::core::step_name::StepName;
use crate::core::trace::Trace;
use crate::core::wire::{Bounds, DepsSettings, HmemBounds, IntakeResult, PlanResult, StepUnit};
use crate::flows::plan::scout;

pub async fn run(cx: &StepContext, lease: &Lease) -> Result<Outcome, StepError> {
    let rows = cx.rows(&lease.id.review_id).await?;
    let intake: IntakeResult = result_of(&rows, INTAKE)?;
    let config = crate::control::intake::read::settings(&cx.layers, intake.config.as_ref())
        .map_err(|e| FailureKind::Configuration.error(e))?;
    let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
    let agents_on = cx.agents.is_some() && config.agents;
    let second_reviewer = cx.agents.as_ref().is_some_and(|a| a.has_second_reviewer());
    let planned = scout::plan(
        &intake.facts,
        scout::PlanOptions {
            dependencies: config.dependencies,
            agents: agents_on,
            agents_off: config.agents_off,
            fix_attempts: if agents_on { config.fix_attempts } else { 0 },
            autofix: agents_on && config.autofix,
            second_reviewer: agents_on && second_reviewer,
            scout_intent: config.scout_intent,
            fixes: config.fixes,
            analyzers: proven_sandbox::analyzer::Analyzer::ALL
                .map(|a| config.tool_analyzers.iter().any(|n| n == a.name())),
        },
        &config.scout,
        &mut trace,
    );
    // A fix is proved in the sandbox: a plan without it proposes none. With the autofix
    // attempt on, no per-finding fix is made (ADR-0050: it is the one attempt).
    let proves_fixes = planned.models && planned.tools.sandbox && config.fixes;
    let autofix = proves_fixes && config.autofix;
    let fix_attempts = if proves_fixes && !autofix {
        config.fix_attempts
    } else {
        0
    };
    let run_deps = planned.dependency_evidence;
    let result = PlanResult {
        plan: planned.plan,
        deps: run_deps.then(|| DepsSettings {
            informational_ignore: config.informational == Informational::Ignore,
            dev_dependencies: config.dev_dependencies,
            max_file_bytes: config.max_lockfile_bytes,
        }),
        fix_attempts,
        autofix,
        autofix_timeout_secs: Some(config.autofix_timeout_secs),
        suite_timeout_secs: Some(config.suite_timeout_secs),
        autofix_generator: config.autofix_generator.clone(),
        agents: planned.skeptic,
        tools: crate::core::wire::PlanTools {
            sandbox: planned.tools.sandbox,
            queries: planned.tools.queries,
        },
        markovian: Bounds {
            on: config.markovian.on,
            threshold_tokens: config.markovian.threshold_tokens,
            unit: StepUnit::parse(&config.markovian.step_unit).unwrap_or_default(),
            carry_tokens: config.markovian.carry_tokens,
        },
        hmem: HmemBounds {
            max_bytes: config.hmem_max_state_bytes,
            query_tokens: config.hmem_query_tokens,
        },
        ignore: config.ignore.iter().map(Into::into).collect(),
    };
    // Each branch is a finding pipeline: it hands its slot in the fan-in to its own
    // children, so the judge waits for every branch however they interleave.
    let mut next = Vec::new();
    if run_deps {
        next.push(NewStep {
            ..Next::then(StepName::DepsCollect)
        });
    }
    if planned.models {
        next.push(NewStep {
            ..Next::then(StepName::Planner)
        });
        if result.autofix {
            next.push(NewStep {
                ..Next::then(StepName::Autofix)
            });
        }
        if planned.second_reviewer {
            next.push(NewStep {
                ..Next::then(StepName::SecondReviewer)
            });
        }
    }
    next.extend(tool_steps(&planned.analyzers)?);
    if next.is_empty() {
        next.push(Next::first(StepName::Judge));
    }
    Ok(outcome(trace, to_json(&result)?, next, false))
}

/// The tool evidence: one pipeline per analyzer, keyed by its name, with the change's
/// files of its language.
fn tool_steps(
    analyzers: &[(proven_sandbox::analyzer::Analyzer, Vec<String>)],
) -> Result<Vec<NewStep>, StepError> {
    analyzers
        .iter()
        .map(|(analyzer, paths)| {
            let job = crate::flows::tool::wire::ToolJob {
                analyzer: *analyzer,
                paths: paths.clone(),
            };
            Ok(NewStep {
                key: analyzer.name().to_string(),
                input: Some(to_json(&job)?),
                ..Next::then(StepName::Tool)
            })
        })
        .collect()
}
