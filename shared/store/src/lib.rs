//! Proven's store: the truth about advisories, reviews and their traces.
//!
//! Owns every SQL statement of the project (queries live with the store, nowhere else) and
//! the schema migrations. One code path serves both backends through sqlx's `Any` driver:
//! SQLite for the embedded default (one file under the user's data directory) and Postgres
//! for the service. Where the two dialects differ, the statement is chosen by [`Dialect`]
//! next to its twin, so the difference is visible in one place.
//!
//! Invariants:
//! - An advisory row is replaced only by a record whose `modified` is newer, or equal with
//!   different content; an older record never overwrites a newer one.
//! - A change's packages are matched with one query per ecosystem, never one per package.
//! - Withdrawn advisories are stored and never matched.

mod advisory;
mod batch;
mod error;
mod github;
mod group;
mod memory;
mod pipeline;
mod question;
mod request;
mod review;
mod session;
mod sql;
mod tenant;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod trace_log;
mod world;
pub mod world_graph;
pub mod world_ids;

pub use advisory::{
    AdvisoryImport, AffectedRow, ChangeSet, EpssRow, ImportCounts, KevRow, StoredAdvisory,
};
pub use batch::{BatchRow, RereviewRow};
pub use error::StoreError;
pub use github::{
    Delivery, GitHubAccount, InstallationChange, MAX_PUBLISH_ATTEMPTS, NewPublication,
    PublicationRow, PublicationState, ReviewDelivery,
};
pub use memory::MemoryRecord;
pub use pipeline::{
    BATCH_PRIORITY, Claim, Committed, ISOLATED_SUFFIX, JUDGE_QUEUE, JUDGE_STEP, Job, Lease,
    NewPipelineReview, NewStep, Outcome, PendingReview, Retry, StepId, StepRow, isolated_queue,
    now_us,
};
pub use question::{MAX_QUESTION_ATTEMPTS, QuestionRow};
pub use request::{DiffMode, GitHubPull, ReviewRequest};
pub use review::{NewReview, ReviewRow, ReviewStatus, TraceRow};
pub use tenant::{DayTotals, ReviewSummary, Tenant, TokenCheck, TokenInfo, token_hash, token_id};
pub use world::{Dependent, Related, WorldAudit, WorldEdge, WorldEntity};

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions, Executor};

/// The connections one process keeps to Postgres by default (`PROVEN_DATABASE_CONNECTIONS`):
/// a worker's steps claim and commit in groups (`group.rs`), so a few serve all its slots,
/// and on a small database server more backends mostly contend (docs/benchmarks.md).
pub const DEFAULT_CONNECTIONS: u32 = 4;

/// Which SQL dialect the pool speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// Handle to the store. Cheap to clone (the pool is shared).
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    dialect: Dialect,
    /// The trace's copy as JSON Lines (`PROVEN_LOG_DIR`), when set.
    trace_log: Option<trace_log::TraceLog>,
    /// Steps' writes that arrive together share a transaction (Postgres): `group.rs`.
    groups: Arc<pipeline::Groups>,
}

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

impl Store {
    /// Opens (creating if needed) the embedded SQLite store at `path` and migrates it.
    pub async fn open_sqlite(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Unavailable {
                what: format!("data directory {}", dir.display()),
                message: e.to_string(),
            })?;
        }
        let url = format!("sqlite://{}?mode=rwc", path.display());
        Store::open_url(&url).await
    }

    /// Opens a store by URL (`postgres://…` or `sqlite://…`) and migrates it, keeping at
    /// most [`DEFAULT_CONNECTIONS`] connections to Postgres.
    pub async fn open_url(url: &str) -> Result<Store, StoreError> {
        Store::open_url_with(url, DEFAULT_CONNECTIONS).await
    }

    /// [`Store::open_url`] keeping at most `connections` connections to Postgres
    /// (`PROVEN_DATABASE_CONNECTIONS`; SQLite always keeps 4).
    pub async fn open_url_with(url: &str, connections: u32) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let dialect = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Dialect::Postgres
        } else if url.starts_with("sqlite:") {
            Dialect::Sqlite
        } else {
            return Err(StoreError::InvalidInput(format!(
                "database URL must start with postgres://, postgresql:// or sqlite:, got {:?}",
                redact_url(url)
            )));
        };
        let options = AnyConnectOptions::from_str(url)
            .map_err(|e| {
                StoreError::InvalidInput(format!("database URL {:?}: {e}", redact_url(url)))
            })?
            // sqlx logs a statement slower than a second at WARN, with its whole text: on a
            // loaded machine `proven db import` printed an 8,000-parameter INSERT on the
            // terminal. A slow statement is not an operator's to act on: debug (the trace and
            // PROVEN_LOG=sqlx=debug still show it), every statement at trace.
            .log_statements(log::LevelFilter::Trace)
            .log_slow_statements(log::LevelFilter::Debug, Duration::from_secs(1));
        let mut pool_options = AnyPoolOptions::new().acquire_timeout(Duration::from_secs(10));
        if dialect == Dialect::Sqlite {
            // One writer at a time is SQLite's rule; WAL lets readers go on meanwhile, and
            // the busy timeout turns brief lock contention into a wait instead of an error.
            pool_options = pool_options.max_connections(4).after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute(
                        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                         PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;",
                    )
                    .await?;
                    Ok(())
                })
            });
        } else {
            // Every statement Proven sends is prepared once per connection and finds its rows
            // by key: a generic plan is as good as a custom one, and planning it anew (the
            // first five runs of each statement on each connection, and every run of one
            // whose custom plan looks cheaper) was about a fifth of the database's CPU per
            // pipeline step (docs/benchmarks.md). A session setting of Proven's own
            // connections, not the server's.
            pool_options = pool_options
                .max_connections(connections.max(1))
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        conn.execute("SET plan_cache_mode = force_generic_plan")
                            .await?;
                        Ok(())
                    })
                });
        }
        let pool =
            pool_options
                .connect_with(options)
                .await
                .map_err(|e| StoreError::Unavailable {
                    what: format!("database {}", redact_url(url)),
                    message: e.to_string(),
                })?;
        let migrator = match dialect {
            Dialect::Sqlite => &SQLITE_MIGRATIONS,
            Dialect::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator
            .run(&pool)
            .await
            .map_err(|e| StoreError::Unavailable {
                what: "schema migration".into(),
                message: e.to_string(),
            })?;
        let store = Store {
            pool,
            dialect,
            trace_log: None,
            groups: Arc::default(),
        };
        // A store whose World Model already breaks its rules is refused by name.
        store.world_check().await?;
        Ok(store)
    }

    /// A transaction that will write. On SQLite it takes the write lock up front
    /// (`BEGIN IMMEDIATE`): a deferred transaction that reads and then writes can fail with
    /// "database is locked" when another writer got in between, and the busy timeout does
    /// not cover that upgrade.
    pub(crate) async fn write_tx(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self.dialect {
            Dialect::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Dialect::Postgres => self.pool.begin().await,
        }
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The id a turn-taking `pick` (publications', questions': one statement whose `$1` is
    /// now in seconds) chooses next; None when nothing waits.
    pub(crate) async fn next_in_turn(
        &self,
        pick: &'static str,
        now_s: i64,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(pick)
            .bind(now_s)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// Writes every trace event also to `DIR/trace.jsonl`, once it is stored
    /// (`PROVEN_LOG_DIR`).
    pub fn with_trace_log(mut self, dir: &Path) -> Result<Store, StoreError> {
        self.trace_log = Some(trace_log::TraceLog::new(dir)?);
        Ok(self)
    }

    pub(crate) fn log_trace(
        &self,
        review_id: &str,
        run_id: &str,
        events: &[(String, serde_json::Value)],
    ) {
        if let Some(log) = &self.trace_log {
            log.write(review_id, run_id, events);
        }
    }

    /// Checks that the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// A URL with its password replaced, for messages.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            match userinfo.find(':') {
                Some(colon) => format!(
                    "{}{}:***{}",
                    &url[..scheme_end + 3],
                    &userinfo[..colon],
                    &url[at..]
                ),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact_url("postgres://u:secret@h/db"),
            "postgres://u:***@h/db"
        );
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact_url("sqlite:///x.db"), "sqlite:///x.db");
    }
}
