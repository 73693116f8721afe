//! Building the local images (`proven sandbox images`): the binary carries
//! scripts/sandbox-images and deploy/sandbox/proven-entry, so it builds the same images
//! from anywhere, not only from a checkout.

use std::process::Stdio;

use crate::{Language, SandboxError};

const SCRIPT: &str = include_str!("../../scripts/sandbox-images");
const ENTRY: &str = include_str!("../../deploy/sandbox/proven-entry");

/// Builds (or confirms current) the local image of each language, all when empty.
/// Progress goes to standard error. Needs Docker, and this host's toolchains.
pub async fn build_local(languages: &[Language]) -> Result<(), SandboxError> {
    let names: Vec<&str> = languages.iter().map(|l| l.as_str()).collect();
    build_local_named(&names).await
}

/// Builds (or confirms current) local images by the script's names: a language, or a
/// version's image (`python3.8`, `node22`).
pub async fn build_local_named(names: &[&str]) -> Result<(), SandboxError> {
    let dir = tempfile::tempdir().map_err(SandboxError::io("create", std::env::temp_dir()))?;
    let script = dir.path().join("sandbox-images");
    let entry = dir.path().join("proven-entry");
    std::fs::write(&script, SCRIPT).map_err(SandboxError::io("write", &script))?;
    std::fs::write(&entry, ENTRY).map_err(SandboxError::io("write", &entry))?;
    let status = tokio::process::Command::new("bash")
        .arg(&script)
        .args(names)
        .env("PROVEN_SANDBOX_ENTRY", &entry)
        .stdin(Stdio::null())
        .status()
        .await
        .map_err(SandboxError::io("run bash with", &script))?;
    if status.success() {
        Ok(())
    } else {
        Err(SandboxError::ImageBuild {
            message: format!("scripts/sandbox-images {status}; its messages are above"),
        })
    }
}
