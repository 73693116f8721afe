//! `sandbox.reproduce`: the Prover's test run on the base and on the change, twice each; a
//! risk is reproduced only when it passes on the base and fails on the change.

use proven_pipeline::{Lease, NewStep, Outcome, StepError};
use proven_report::RunRef;
use proven_sandbox::{Proof, RunKey};
use serde_json::json;

use crate::core::outcome::{Next, outcome, read_input, to_json};
use crate::core::rows::result_of;
use crate::core::step::ReviewStep;
use crate::core::step_name::StepName;
use crate::core::test_runs::{
    RecordedRuns, no_sandbox, recorded, requests, run_ref, runs_key, sandbox_error,
};
use crate::core::trace::Trace;
use crate::core::wire::{PlanResult, ProveJob, first_try};
use crate::flows::test::wire::{Reproduced, RunsShowed};

/// `sandbox.reproduce`: the registry's entry. Reproduced, the Fixer tries beside the
/// Skeptic (a fix is shown only for a finding the Judge keeps).
pub async fn run(s: &ReviewStep<'_>, lease: &Lease) -> Result<Outcome, StepError> {
    let mut out = reproduce(s, lease).await?;
    let reproduced = out.next.iter().any(|n| n.step == StepName::Skeptic);
    let attempts =
        result_of::<PlanResult>(s.rows, StepName::Plan.as_str()).map_or(0, |p| p.fix_attempts);
    if reproduced {
        let job: ProveJob = read_input(lease, "job")?;
        out.next.extend(first_try(&lease.id.key, &job, attempts));
    }
    Ok(out)
}

/// The Prover's test on both sides, twice each: reproduced, the Skeptic follows.
async fn reproduce(s: &ReviewStep<'_>, lease: &Lease) -> Result<Outcome, StepError> {
    let (sandbox, cassette, view) = (s.sandbox(), s.cassette(), s.view);
    let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
    let job: ProveJob = read_input(lease, "job")?;
    let (base, change) = requests(&view, &job, &job.test)?;
    let cassette_key = runs_key(&[
        view.base,
        view.head,
        &job.test.path,
        &job.test.code,
        &job.command.join(" "),
    ]);
    let done: RecordedRuns = recorded(cassette, ("reproduce", &cassette_key), async {
        let sandbox = sandbox.ok_or_else(no_sandbox)?;
        let key = RunKey::new(crate::core::test_runs::job_key(lease))
            .map_err(|e| StepError::Permanent(e.to_string()))?;
        let done = sandbox
            .reproduce(&base.with_key(key), &change)
            .await
            .map_err(sandbox_error)?;
        Ok(RecordedRuns {
            base: done.base,
            change: done.change,
        })
    })
    .await?;
    let done = proven_sandbox::Reproduction {
        proof: proven_sandbox::prove(&done.base, &done.change),
        base: done.base,
        change: done.change,
    };
    let mut runs: Vec<RunRef> = done.base.iter().map(|r| run_ref("base", r)).collect();
    runs.extend(done.change.iter().map(|r| run_ref("change", r)));
    for r in &runs {
        trace.push("sandbox_run", serde_json::to_value(r).unwrap_or_default());
    }
    let (reproduced, reason) = match &done.proof {
        Proof::Reproduced => (
            true,
            "the test passes on the base and fails on the change, twice each".to_string(),
        ),
        Proof::NotProved { why } => (false, why.to_string()),
    };
    trace.push(
        "proof",
        json!({"key": lease.id.key, "reproduced": reproduced, "reason": reason}),
    );
    let result = Reproduced {
        reproduced,
        shown: RunsShowed { reason, runs },
        not_prepared: crate::core::test_runs::not_prepared(done.base.iter().chain(&done.change)),
    };
    let next = if reproduced {
        vec![NewStep {
            key: lease.id.key.clone(),
            input: lease.input.clone(),
            ..Next::then(StepName::Skeptic)
        }]
    } else {
        Vec::new()
    };
    Ok(outcome(trace, to_json(&result)?, next, true))
}
