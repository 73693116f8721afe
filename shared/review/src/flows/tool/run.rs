//! `sandbox.tool`: one analyzer run on the base and on the change, as plain commands with a
//! test's preparation and isolation, each read back (its version, its diagnostics with their
//! lines' text), with the lines the change adds to each file the change's run reports on.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use proven_models::CassetteMode;
use proven_pipeline::{Lease, NewStep, Outcome, StepError};
use proven_sandbox::RunRecord;
use proven_sandbox::analyzer::Analyzer;
use serde_json::json;

use super::judge::{added_lines, judge_tool};
use super::wire::{Seen, ToolJob, ToolResult, ToolSide};
use crate::core::git_tree::text_at;
use crate::core::outcome::{Next, outcome, read_input, to_json};
use crate::core::rows::result_of;
use crate::core::step::ReviewStep;
use crate::core::step_name::StepName;
use crate::core::test_runs::{run_in_turn, run_ref, runs_key};
use crate::core::trace::Trace;
use crate::core::wire::PlanResult;

/// How long one analyzer run may take (clippy builds the workspace).
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(600);

/// The largest file whose lines are read back (bytes).
const MAX_FILE_BYTES: u64 = 4 << 20;

/// `sandbox.tool`: the registry's entry. It ends its pipeline, or hands it to the Skeptic.
pub async fn run(s: &ReviewStep<'_>, lease: &Lease) -> Result<Outcome, StepError> {
    let job: ToolJob = read_input(lease, "tool job")?;
    let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
    let result = analyse(s, lease, &job).await?;
    for (side, run) in [("base", &result.base), ("change", &result.change)] {
        if let Some(r) = &run.run {
            trace.push("sandbox_run", serde_json::to_value(r).unwrap_or_default());
        }
        trace.push(
            "tool_run",
            json!({"analyzer": job.analyzer.name(), "side": side, "version": run.version,
                   "diagnostics": run.diagnostics.len(), "unfinished": run.unfinished,
                   "scope": run.scope}),
        );
    }
    if let Some(why) = &result.not_run {
        trace.push(
            "tool_not_run",
            json!({"analyzer": job.analyzer.name(), "why": why}),
        );
    }
    // The Skeptic, when the plan runs it, on an analyzer with findings.
    let skeptic = result_of::<PlanResult>(s.rows, StepName::Plan.as_str()).is_ok_and(|p| p.agents);
    let next = if skeptic && !judge_tool(&result, None).findings.is_empty() {
        vec![NewStep {
            key: lease.id.key.clone(),
            ..Next::then(StepName::SkepticTool)
        }]
    } else {
        Vec::new()
    };
    Ok(outcome(trace, to_json(&result)?, next, true))
}

async fn analyse(
    s: &ReviewStep<'_>,
    lease: &Lease,
    job: &ToolJob,
) -> Result<ToolResult, StepError> {
    let analyzer = job.analyzer;
    let Some(command) = analyzer.command(&job.paths) else {
        return Ok(ToolResult::not_run(
            analyzer,
            "the change adds or modifies no file it reads",
        ));
    };
    let view = s.view;
    let cassette_key = runs_key(&[view.base, view.head, analyzer.name(), &command.join(" ")]);
    let replaying = s.cassette().filter(|c| c.mode() == CassetteMode::Replay);
    if let Some(c) = replaying {
        if c.get("runs", "tool", &cassette_key).is_none() {
            return Ok(ToolResult::not_run(
                analyzer,
                "sample mode: the cassette holds no runs of it",
            ));
        }
    } else if s.sandbox().is_none() {
        return Ok(ToolResult::not_run(
            analyzer,
            "no sandbox (Docker) in this process",
        ));
    }
    let request = |revision: &str| {
        view.run_request(revision, analyzer.language(), command.clone())
            .as_command()
            .with_timeout(TOOL_TIMEOUT)
    };
    let done = run_in_turn(
        s,
        lease,
        ("tool", &cassette_key),
        vec![
            ("base".into(), request(view.base)),
            ("change".into(), request(view.head)),
        ],
        false,
    )
    .await?;
    if let Some(refused) = done.refused {
        return Ok(ToolResult::not_run(analyzer, refused));
    }
    let [base, change] = done.runs.as_slice() else {
        return Ok(ToolResult::not_run(analyzer, "the runs did not both end"));
    };
    let (mut base, mut change) = (
        side(analyzer, "base", base),
        side(analyzer, "change", change),
    );
    let added = lines(s, analyzer, &mut base, &mut change).await?;
    Ok(ToolResult {
        analyzer,
        base,
        change,
        added,
        not_run: None,
    })
}

/// One run read back; its diagnostics' line texts are filled in by [`lines`].
fn side(analyzer: Analyzer, name: &str, record: &RunRecord) -> ToolSide {
    let output = format!("{}{}", record.output.head, record.output.tail);
    let analysis = analyzer.read(&output);
    let unfinished = if record.output.truncated {
        Some(format!(
            "its output was cut at {} bytes",
            record.output.bytes
        ))
    } else if record.timed_out || record.killed.is_some() {
        Some("the run was killed (a limit or the timeout)".into())
    } else {
        analysis.unfinished(analyzer)
    };
    ToolSide {
        run: Some(run_ref(name, record)),
        version: analysis.version,
        diagnostics: analysis
            .diagnostics
            .into_iter()
            .map(|diagnostic| Seen {
                diagnostic,
                text: String::new(),
                previous: String::new(),
            })
            .collect(),
        unfinished,
        scope: analysis.scope,
    }
}

/// Fills in each diagnostic's line text from its side's file (ESLint's: and the line
/// before's, where `eslint-disable-next-line` is written), and returns the lines the change
/// adds to each file the change's run reports on.
async fn lines(
    s: &ReviewStep<'_>,
    analyzer: Analyzer,
    base: &mut ToolSide,
    change: &mut ToolSide,
) -> Result<BTreeMap<String, Vec<u32>>, StepError> {
    let paths: BTreeSet<String> = base
        .diagnostics
        .iter()
        .chain(&change.diagnostics)
        .map(|d| d.diagnostic.path.clone())
        .collect();
    let (base_rev, head_rev) = (s.view.base.to_string(), s.view.head.to_string());
    let texts: BTreeMap<String, (String, String)> = s
        .view
        .with_repo("sandbox.tool", move |repo| {
            paths
                .into_iter()
                .map(|p| {
                    let sides = (
                        text_at(repo, &base_rev, &p, MAX_FILE_BYTES)?,
                        text_at(repo, &head_rev, &p, MAX_FILE_BYTES)?,
                    );
                    Ok((p, sides))
                })
                .collect()
        })
        .await?;
    let line_of = |text: &str, n: u32| {
        text.lines()
            .nth(n.saturating_sub(1) as usize)
            .map(|l| l.trim().to_string())
            .unwrap_or_default()
    };
    let fill = |d: &mut Seen, text: &str| {
        d.text = line_of(text, d.diagnostic.line);
        if analyzer == Analyzer::Eslint && d.diagnostic.line > 1 {
            d.previous = line_of(text, d.diagnostic.line - 1);
        }
    };
    for d in &mut base.diagnostics {
        if let Some((text, _)) = texts.get(&d.diagnostic.path) {
            fill(d, text);
        }
    }
    let mut added = BTreeMap::new();
    for d in &mut change.diagnostics {
        if let Some((before, text)) = texts.get(&d.diagnostic.path) {
            fill(d, text);
            added
                .entry(d.diagnostic.path.clone())
                .or_insert_with(|| added_lines(before, text));
        }
    }
    Ok(added)
}
