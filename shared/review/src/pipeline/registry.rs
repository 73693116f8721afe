//! The registry: every step the review runs, by name, and its `run`. The only place a step
//! is wired in: adding a step is its own module (a `pub async fn run(cx, lease)`) and one
//! line of `builtin` (or, for a process that brings its own, one
//! [`super::ReviewSteps::with_step`]). Every step has the one shape of [`crate::core::step`]; a step
//! names the step after it by its typed name, never by importing it.

use std::collections::HashMap;

use crate::control::sandbox_job;
use crate::control::{intake, judge, plan};
use crate::core::step::Handler;
use crate::core::step_name::StepName;
use crate::flows;
use crate::flows::autofix;
use crate::flows::deps::{self, evidence};
use crate::flows::{audit, fix, query, test};
use crate::run;

/// Every built-in step: one line each. The model agents' steps (and the sandbox steps they
/// start) keep their trace when they fail; the control steps do not.
pub(super) fn builtin() -> HashMap<StepName, Handler> {
    let (control, agent) = (Handler::control, Handler::agent);
    [
        (StepName::Intake, control(run!(intake::run))),
        (StepName::Plan, control(run!(plan::run))),
        (StepName::DepsCollect, control(run!(evidence::collect))),
        (StepName::DepsFile, control(run!(evidence::file))),
        (StepName::Planner, agent(run!(flows::plan::planner::run))),
        (
            StepName::SecondReviewer,
            agent(run!(flows::plan::second::run)),
        ),
        (StepName::Prover, agent(run!(test::prover::run))),
        (StepName::Reproduce, agent(run!(test::reproduce::run))),
        (StepName::Skeptic, agent(run!(test::skeptic::run))),
        (StepName::Refute, agent(run!(test::skeptic::run_refute))),
        (
            StepName::Investigator,
            agent(run!(query::investigator::run)),
        ),
        (StepName::SkepticQuery, agent(run!(query::skeptic::run))),
        (StepName::SkepticDeps, agent(run!(deps::skeptic::run))),
        (StepName::Auditor, agent(run!(audit::run))),
        (StepName::Fixer, agent(run!(fix::run))),
        (StepName::SandboxFix, agent(run!(fix::run_sandbox_fix))),
        (
            StepName::Autofix,
            agent(|s, lease| Box::pin(autofix::run(s, lease, judge::kept))),
        ),
        (StepName::AutofixProof, agent(run!(autofix::run_proof))),
        (StepName::SandboxRun, control(run!(sandbox_job::run_step))),
        (StepName::Tool, agent(run!(flows::tool::run::run))),
        (
            StepName::SkepticTool,
            agent(run!(flows::tool::skeptic::run)),
        ),
        (StepName::Judge, control(run!(judge::run))),
    ]
    .into_iter()
    .collect()
}

#[cfg(test)]
mod tests;
