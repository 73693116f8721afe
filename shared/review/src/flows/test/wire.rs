//! What the test flow stores and hands on: a reproduction's verdict and the runs it rests
//! on, and what Proven's runs showed of a Skeptic's refutation.

use proven_report::RunRef;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reproduced {
    pub reproduced: bool,
    #[serde(flatten)]
    pub shown: RunsShowed,
    /// The dependencies the runs' environments could not prepare, as the runs show them
    /// (`not prepared: WHAT (WHERE): WHY`), each once: the Judge names them in what the
    /// review could not see without reading the runs' words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_prepared: Vec<String>,
}

/// The runs a reproduction or a refutation rests on, and what they showed in words (flattened
/// into each record: `reason` and `runs` stand beside its verdict in the stored JSON).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunsShowed {
    pub reason: String,
    pub runs: Vec<RunRef>,
}

/// The refutations a Skeptic may pick for a test finding; each is checked by Proven's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum RefutationKind {
    Flaky,
    WrongCause,
    Intended,
}

impl RefutationKind {
    /// The refutation a model's words name, however it spells it (`Wrong cause`, `wrong-cause`).
    pub(crate) fn parse(text: &str) -> Option<RefutationKind> {
        text.trim()
            .to_ascii_lowercase()
            .replace([' ', '-'], "_")
            .parse()
            .ok()
    }
}

/// What Proven's own runs showed of a refutation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Refutation {
    /// The runs bear the refutation out.
    pub evidenced: bool,
    #[serde(flatten)]
    pub shown: RunsShowed,
    /// The refutation checked (absent in records of older versions, which are no evidence).
    pub kind: Option<RefutationKind>,
}

impl Refutation {
    /// What Proven's runs showed of a refutation (the step that checked it sets its kind).
    pub fn shown(evidenced: bool, reason: String, runs: Vec<RunRef>) -> Refutation {
        Refutation {
            evidenced,
            shown: RunsShowed { reason, runs },
            kind: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproductions_and_refutations_store_their_reason_and_runs_beside_the_verdict() {
        // The stored format of earlier versions (reason and runs at the top) still reads, and
        // is what is written.
        let stored = r#"{"reproduced":true,"reason":"fails on the change","runs":[]}"#;
        let read: Reproduced = serde_json::from_str(stored).expect("as built");
        assert!(read.reproduced);
        assert_eq!(read.shown.reason, "fails on the change");
        assert_eq!(serde_json::to_string(&read).expect("as built"), stored);
        let stored = r#"{"evidenced":false,"reason":"passes four times","runs":[],"kind":"flaky"}"#;
        let read: Refutation = serde_json::from_str(stored).expect("as built");
        assert_eq!(read.kind, Some(RefutationKind::Flaky));
        assert_eq!(read.shown.reason, "passes four times");
        assert_eq!(serde_json::to_string(&read).expect("as built"), stored);
    }
}
