//! The rule for a risk's fix: a fix is shown only when the sandbox proved it; the tries that
//! did not prove one are said, with why.

use proven_store::StepRow;

use crate::core::rows::StepState;
use crate::core::step_name::StepName;
use crate::core::wire::FixInput;
use crate::flows::fix::wire::FixResult;

/// The proved fix of the risk `risk_key`, if one of its tries proved one.
pub fn proved_fix(rows: &[StepRow], risk_key: &str) -> Option<FixResult> {
    rows.iter()
        .filter(|r| {
            r.id.step == StepName::SandboxFix
                && StepState::of(r) == StepState::Done
                && FixInput::is_try_of(&r.id.key, risk_key)
        })
        .filter_map(|r| r.result.as_deref())
        .filter_map(|t| serde_json::from_str::<FixResult>(t).ok())
        .find(|f| f.proved)
}

/// What the tries of a risk's fix came to, for the trace when none was proved.
pub fn tries(rows: &[StepRow], risk_key: &str) -> Vec<FixResult> {
    // A Fixer try the sandbox took over is said by its `sandbox.fix` row (created with the
    // Fixer's result, in the same commit); the Fixer's own row says only a refused try.
    let handed_over = |key: &str| {
        rows.iter()
            .any(|r| r.id.step == StepName::SandboxFix && r.id.key == key)
    };
    let mut out: Vec<FixResult> = rows
        .iter()
        .filter(|r| {
            (r.id.step == StepName::SandboxFix
                || (r.id.step == StepName::Fixer && !handed_over(&r.id.key)))
                && StepState::of(r) == StepState::Done
                && FixInput::is_try_of(&r.id.key, risk_key)
        })
        .filter_map(|r| r.result.as_deref())
        .filter_map(|t| serde_json::from_str::<FixResult>(t).ok())
        .collect();
    out.sort_by_key(|f| f.attempt);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::core::rows::test_row;

    fn fix(
        step: &str,
        key: &str,
        state: &str,
        proved: bool,
        attempt: u32,
        reason: &str,
    ) -> StepRow {
        let result = json!({"proved": proved, "attempt": attempt, "reason": reason});
        test_row(step, key, state, Some(result.to_string()))
    }

    /// One review's fix rows: r0's first try refused by the Fixer, its second handed to the
    /// sandbox and not proved, its third said proved by the Fixer alone (a model's word)
    /// while its sandbox run has not ended, and one that failed; r1 proved at its first try.
    fn rows() -> Vec<StepRow> {
        [
            ("fixer", "r0-fix1", "done", false, 1, "refused: a test"),
            ("fixer", "r0-fix2", "done", false, 2, "sent to the sandbox"),
            ("sandbox.fix", "r0-fix2", "done", false, 2, "still fails"),
            ("fixer", "r0-fix3", "done", true, 3, "a model's word"),
            ("sandbox.fix", "r0-fix3", "running", true, 3, "not ended"),
            ("fixer", "r0-fix4", "failed", false, 4, "not done"),
            ("sandbox.fix", "r1-fix1", "done", true, 1, "proved"),
        ]
        .map(|(step, key, state, proved, attempt, reason)| {
            fix(step, key, state, proved, attempt, reason)
        })
        .to_vec()
    }

    #[test]
    fn a_fix_is_shown_only_when_the_sandbox_proved_it_for_that_risk() {
        let rows = rows();
        assert!(
            proved_fix(&rows, "r0").is_none(),
            "no proving run of r0's fix ended"
        );
        assert_eq!(proved_fix(&rows, "r1").map(|f| f.attempt), Some(1));
        let mut proved = rows.to_vec();
        proved.push(fix("sandbox.fix", "r0-fix5", "done", true, 5, "proved"));
        assert_eq!(proved_fix(&proved, "r0").map(|f| f.attempt), Some(5));
    }

    #[test]
    fn the_tries_are_said_in_order_without_the_hand_over_to_the_sandbox() {
        let said: Vec<(u32, String)> = tries(&rows(), "r0")
            .into_iter()
            .map(|t| (t.attempt, t.reason))
            .collect();
        assert_eq!(
            said,
            [
                (1, "refused: a test".to_string()),
                (2, "still fails".to_string())
            ],
            "the handed-over tries by their sandbox rows, ended ones only, r0's only"
        );
    }
}
