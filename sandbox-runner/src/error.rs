//! Errors of the sandbox. A failing test is never an error: it is a [`crate::RunRecord`]
//! with its outcome. An error means no record could be made, and its variant says what
//! the caller can do about it.

use std::path::PathBuf;

use crate::Language;

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
        source: crate::written::WrittenFileError,
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

/// A request that cannot run as given: permanent, do not retry. Each names what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("{path} is not a git repository: {message}")]
    NotARepository { path: String, message: String },
    #[error("revision {revision:?} not found: {message}")]
    RevisionNotFound { revision: String, message: String },
    #[error("reading git objects: {message}")]
    Git { message: String },
    /// An edit or added file names a path that is absolute, climbs out with `..`, or
    /// enters `.git`.
    #[error("path {path:?} is outside the tree")]
    PathOutsideTree { path: String },
    /// A patch may not change a test file: the test is the evidence.
    #[error("the patch edits {path}, a test file: a patch may not change the tests")]
    PatchTouchesTestFile { path: String },
    #[error("the patch edits {path}, which is not a file of the tree")]
    PatchFileMissing { path: String },
    /// Empty old text would match everywhere: an edit must say what it replaces.
    #[error("an edit of {path} has no old text")]
    EmptyOldText { path: String },
    #[error("the patch's old text is not in {path}")]
    OldTextNotFound { path: String },
    #[error("the patch's old text is in {path} {count} times: it must be there exactly once")]
    OldTextNotUnique { path: String, count: usize },
    #[error("the tree is larger than the limit of {limit_bytes} bytes")]
    TreeTooLarge { limit_bytes: u64 },
    /// The tree would not fit the run's scratch space (the tmpfs it is copied into): a run
    /// would fail writing it, which is no test result.
    #[error(
        "the tree does not fit the run's scratch space of {scratch_bytes} bytes (setting limits.scratch_bytes, PROVEN_SANDBOX_SCRATCH_BYTES)"
    )]
    TreeOverScratch { scratch_bytes: u64 },
    #[error("the command is empty")]
    EmptyCommand,
    #[error("environment variable name {name:?} is not of A-Z a-z 0-9 _")]
    InvalidEnv { name: String },
    #[error("run key {key:?} must be 1-100 characters of A-Z a-z 0-9 . _ -")]
    InvalidKey { key: String },
    /// A dependency file asks for something preparation never does (build the code under
    /// review, fetch from a path or a VCS URL).
    #[error("{file}, line {line}: {reason}")]
    UnsupportedDependency {
        file: String,
        line: usize,
        reason: String,
    },
}
