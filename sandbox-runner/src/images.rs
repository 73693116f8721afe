//! Building the local images (`proven sandbox images`): the binary carries
//! scripts/sandbox-images and the files it reads (the entry, the era-redis builder,
//! node-test.js, jest-exit.js), so it builds the same images from anywhere, not only from a checkout.

use std::process::Stdio;

use crate::{Language, SandboxError};

/// The script and the files it reads beside it, at their places in a checkout: written
/// out so, the script finds them as it does there, and the images' fingerprints are a
/// checkout's.
const FILES: &[(&str, &str)] = &[
    (
        "scripts/sandbox-images",
        include_str!("../../scripts/sandbox-images"),
    ),
    (
        "deploy/sandbox/proven-entry",
        include_str!("../../deploy/sandbox/proven-entry"),
    ),
    (
        "deploy/sandbox/jest-exit.js",
        include_str!("../../deploy/sandbox/jest-exit.js"),
    ),
    (
        "deploy/sandbox/era-redis",
        include_str!("../../deploy/sandbox/era-redis"),
    ),
    (
        "shared/sandbox-plan/src/scripts/node-test.js",
        include_str!("../../shared/sandbox-plan/src/scripts/node-test.js"),
    ),
];

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
    for (path, text) in FILES {
        let at = dir.path().join(path);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).map_err(SandboxError::io("create", parent))?;
        }
        std::fs::write(&at, text).map_err(SandboxError::io("write", &at))?;
        // The script runs the era-redis builder as a program.
        if path.ends_with("era-redis") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o755))
                .map_err(SandboxError::io("chmod", &at))?;
        }
    }
    let script = dir.path().join(FILES[0].0);
    let status = tokio::process::Command::new("bash")
        .arg(&script)
        .args(names)
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
