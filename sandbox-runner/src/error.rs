//! Errors of the sandbox. A failing test is never an error: it is a [`crate::RunRecord`]
//! with its outcome. An error means no record could be made, and its variant says what
//! the caller can do about it.

use std::path::PathBuf;

use crate::{Language, RequestError};

/// What stopped a run (or a sweep) from producing its result.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A setting is out of range: fix the configuration.
    #[error("sandbox setting {setting}: {message}")]
    InvalidConfig {
        setting: &'static str,
        message: String,
    },
    /// Docker does not answer: install or start it, then retry.
    #[error(
        "Docker is not available at {endpoint}: {message}. Install Docker (Debian: apt-get install docker.io) and start dockerd; scripts/docker.sh does both"
    )]
    DockerUnavailable { endpoint: String, message: String },
    /// The language's image is not on the Docker host: build it, then retry.
    #[error(
        "the {language} sandbox image {image} is missing: build it with `proven sandbox images` (or scripts/sandbox-images)"
    )]
    ImageMissing { language: Language, image: String },
    /// Building the local images failed (the build printed why): fix that, then retry.
    #[error("building the local sandbox images failed: {message}")]
    ImageBuild { message: String },
    /// The request is wrong and will be wrong on every retry.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// Preparing dependencies failed (often the registry is unreachable): retryable.
    #[error("preparing {language} dependencies from {lock_file} failed: {message}")]
    Dependencies {
        language: Language,
        lock_file: String,
        message: String,
    },
    /// Docker failed mid-run (a daemon restart, a full disk): retryable; the run's
    /// container, if any was left, is removed by the next sweep.
    #[error("Docker failed to {action} {container}: {message}")]
    Docker {
        action: &'static str,
        container: String,
        message: String,
    },
    /// The runner's own disk (work or cache directory) failed: retryable once fixed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file a container wrote is refused (a link, not a regular file, over its cap): the
    /// same preparation makes it again, so only the runner's own disk failing is retried.
    #[error("the {language} preparation's output is refused: {source}")]
    Written {
        language: Language,
        #[source]
        source: proven_sandbox_plan::written::WrittenFileError,
    },
    /// A prepared layer no longer matches the digest it was sealed with (altered on the
    /// runner's disk): it was removed, so running again prepares it anew.
    #[error("the prepared layer {} was altered on disk: {message}", layer.display())]
    CacheAltered { layer: PathBuf, message: String },
    /// The run finished but its record could not be stored once.
    #[error(transparent)]
    Ledger(#[from] crate::LedgerError),
}

impl SandboxError {
    /// Whether running the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            SandboxError::Request(_) | SandboxError::InvalidConfig { .. } => false,
            SandboxError::Written { source, .. } => source.is_retryable(),
            _ => true,
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| SandboxError::Io {
            action,
            path,
            source,
        }
    }
}

impl From<proven_sandbox_plan::FileError> for SandboxError {
    fn from(e: proven_sandbox_plan::FileError) -> Self {
        SandboxError::Io {
            action: e.action,
            path: e.path,
            source: e.source,
        }
    }
}
