//! What the dependency flow stores and hands on: the sources `deps.collect` found, and the
//! H-MEM fingerprint of a dependency finding (the judge step writes it, the flow reads it).

use proven_report::Finding;
use serde::{Deserialize, Serialize};

use crate::core::wire::Unread;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CollectResult {
    pub sources: Vec<String>,
    #[serde(flatten)]
    pub unread: Unread,
}

/// The H-MEM fingerprint of a dependency finding: the lock file, the package at its
/// version, and the advisory.
pub fn deps_fingerprint(f: &Finding) -> String {
    let package = f.package.as_ref().map(|p| {
        format!(
            "{}:{}@{}",
            p.ecosystem,
            p.name.to_lowercase(),
            p.new_version
        )
    });
    crate::core::wire::fingerprint(
        "deps",
        &f.location.path,
        package.as_deref(),
        f.advisory_id(),
    )
}
