//! What planning a run refuses: a request that cannot run as given, and a file that could
//! not be read or written.

use std::path::PathBuf;

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

/// The runner's own disk failed while a plan read or wrote a file: retryable once fixed.
#[derive(Debug, thiserror::Error)]
#[error("{action} {}: {source}", path.display())]
pub struct FileError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl FileError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| FileError {
            action,
            path,
            source,
        }
    }
}
