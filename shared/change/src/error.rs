#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    #[error("{path} is not a git repository: {message}")]
    NotARepository { path: String, message: String },
    #[error("revision {rev:?} not found in {repo}: {message}")]
    RevisionNotFound {
        repo: String,
        rev: String,
        message: String,
    },
    #[error("the tree of commit {commit} holds more than {limit} files")]
    TreeTooLarge { commit: String, limit: usize },
    #[error("reading git objects of {repo}: {message}")]
    Git { repo: String, message: String },
}
