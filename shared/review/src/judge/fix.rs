//! The rule for a risk's fix: a fix is shown only when the sandbox proved it; the tries that
//! did not prove one are said, with why.

use proven_store::StepRow;

use crate::rows::StepState;
use crate::step_name::StepName;
use crate::wire::FixResult;

/// The proved fix of the risk `risk_key`, if one of its tries proved one.
pub fn proved_fix(rows: &[StepRow], risk_key: &str) -> Option<FixResult> {
    let prefix = format!("{risk_key}-fix");
    rows.iter()
        .filter(|r| {
            r.id.step == StepName::SandboxFix
                && StepState::of(r) == StepState::Done
                && r.id.key.starts_with(&prefix)
        })
        .filter_map(|r| r.result.as_deref())
        .filter_map(|t| serde_json::from_str::<FixResult>(t).ok())
        .find(|f| f.proved)
}

/// What the tries of a risk's fix came to, for the trace when none was proved.
pub fn tries(rows: &[StepRow], risk_key: &str) -> Vec<FixResult> {
    let prefix = format!("{risk_key}-fix");
    let mut out: Vec<FixResult> = rows
        .iter()
        .filter(|r| {
            (r.id.step == StepName::SandboxFix || r.id.step == StepName::Fixer)
                && StepState::of(r) == StepState::Done
                && r.id.key.starts_with(&prefix)
        })
        .filter_map(|r| r.result.as_deref())
        .filter_map(|t| serde_json::from_str::<FixResult>(t).ok())
        .filter(|f| f.reason != "sent to the sandbox")
        .collect();
    out.sort_by_key(|f| f.attempt);
    out
}
