use proven_config::ConfigError;
use proven_store::StoreError;

/// Why a review could not run at all (as opposed to a review that ran and found things, or
/// ran incompletely: those are results). Each maps to one exit code.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The repository, a revision or an input file does not exist or cannot be read.
    #[error("{0}")]
    Input(String),
    /// `proven.yaml` in the base revision holds a wrong value.
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    /// The store could not be reached or refused the work.
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

impl ReviewError {
    /// The process exit code documented in the README.
    pub fn exit_code(&self) -> i32 {
        match self {
            ReviewError::Input(_) => 4,
            ReviewError::Config(_) => proven_config::EXIT_CONFIG,
            ReviewError::Store(_) => 5,
        }
    }
}
