//! What the fix flow stores: what each try came to (the result of both its steps).

use proven_report::{PatchEdit, RunRef};
use serde::{Deserialize, Serialize};

/// What a try came to (the result of both steps).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FixResult {
    pub proved: bool,
    pub attempt: u32,
    pub reason: String,
    #[serde(default)]
    pub edits: Vec<PatchEdit>,
    #[serde(default)]
    pub explanation: String,
    /// The runs on the change with the patch (and the package's tests on the base when
    /// they did not pass with it).
    #[serde(default)]
    pub runs: Vec<RunRef>,
    /// The package's tests failing with the patch that fail on the base too (by name).
    #[serde(default)]
    pub failing_on_base_too: Vec<String>,
    /// The package's suite ran no test, with the patch nor on the base: the proof rests on
    /// the finding's own test.
    #[serde(default)]
    pub no_other_tests: bool,
    /// The package's tests that failed in one run of its suite with the patch and passed in
    /// the next and on the base (flaky, not the patch's doing).
    #[serde(default)]
    pub flaky_with_patch: Vec<String>,
    /// The test files that ran in place of the package's whole suite, which outlasted
    /// `suite_timeout` (empty: the whole suite ran).
    #[serde(default)]
    pub suite_narrowed_to: Vec<String>,
}
