/// What a caller of the store can do about a failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached or refused the work; retrying later may succeed.
    #[error("{what} is unavailable: {message}")]
    Unavailable { what: String, message: String },
    /// The caller passed something the store cannot accept.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("{0} not found")]
    NotFound(String),
    /// A tenant's cap on unfinished (queued or running) reviews would be passed; retrying
    /// once some of its reviews finish may succeed. Nothing was recorded.
    #[error(
        "the tenant has {unfinished} unfinished reviews; {requested} more would pass its cap of {limit}"
    )]
    QueueFull {
        unfinished: i64,
        requested: i64,
        limit: i64,
    },
    /// A tenant's cap on unanswered (queued or running) questions would be passed;
    /// retrying once some are answered may succeed. Nothing was recorded.
    #[error(
        "the tenant has {unfinished} unanswered questions; one more would pass its cap of {limit}"
    )]
    QuestionsFull { unfinished: i64, limit: i64 },
    /// A repository's H-MEM would pass its cap (`PROVEN_HMEM_MAX_STATE_BYTES`): the record
    /// was not written. A memory that outgrows its cap needs another design, not a larger
    /// number.
    #[error(
        "H-MEM of {repository} would hold {bytes} bytes, over its cap of {cap} (PROVEN_HMEM_MAX_STATE_BYTES)"
    )]
    MemoryFull {
        repository: String,
        bytes: u64,
        cap: u64,
    },
    /// A World Model edge would make two edges of one chain valid at the same instant
    /// (or a stored store already has two such edges): both are named.
    #[error(
        "EdgeOverlap: edge {edge} overlaps edge {existing} of the same chain (from, type, context)"
    )]
    EdgeOverlap { edge: String, existing: String },
    /// A World Model edge whose end is not after its start (or cannot be read).
    #[error("EdgeInterval: edge {edge}: {detail}")]
    EdgeInterval { edge: String, detail: String },
    /// A lease ran out and another worker took the job over: the old holder's write was
    /// refused and nothing changed (it stops; the new holder goes on).
    #[error("the lease on {0} was lost: another worker holds it now")]
    LeaseLost(String),
    /// Stored data that does not read back (a bug or a foreign writer); names the row.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::RowNotFound => StoreError::NotFound("row".into()),
            other => StoreError::Unavailable {
                what: "database".into(),
                message: other.to_string(),
            },
        }
    }
}
