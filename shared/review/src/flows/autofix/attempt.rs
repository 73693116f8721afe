//! An autofix attempt as the sandbox is handed it, and the verdicts an attempt ends with.

use proven_report::PatchEdit;
use serde::{Deserialize, Serialize};

use super::gather::Proved;

pub const FIXED: &str = "fixed automatically, waiting for a person";
pub const REJECTED: &str = "rejected";
pub const NOTHING: &str = "nothing to fix";
/// The attempt's verdict while its runs are under way.
pub const SENT: &str = "sent to the sandbox";

/// What `sandbox.autofix` is handed: the patch and the findings it must close.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attempt {
    pub edits: Vec<PatchEdit>,
    pub explanation: String,
    pub proved: Vec<Proved>,
    pub diff: String,
}
