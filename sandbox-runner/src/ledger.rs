//! Recording a job's run once. Delivery is at-least-once (a runner SIGKILLed mid-run gets
//! its job redelivered): the ledger makes the effect exactly-once — the first record of a
//! job wins, and a redelivered job that finds a record returns it instead of running.
//!
//! The pipeline implements [`RunLedger`] on its store (an insert that does nothing on a
//! conflicting job id); [`FileLedger`] is the same contract on a directory, for the
//! command line and tests.

use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{RunKey, RunRecord};

/// What `record_once` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    /// This record is now the job's record.
    First(RunRecord),
    /// The job already had a record (returned); the new one was dropped.
    Already(RunRecord),
}

impl Recorded {
    pub fn record(&self) -> &RunRecord {
        match self {
            Recorded::First(r) | Recorded::Already(r) => r,
        }
    }
    pub fn into_record(self) -> RunRecord {
        match self {
            Recorded::First(r) | Recorded::Already(r) => r,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The ledger cannot be reached or written: retry later.
    #[error("the run ledger is unavailable: {0}")]
    Unavailable(String),
    /// A stored record cannot be read back: an operator must look.
    #[error("the stored record of job {job} is unreadable: {message}")]
    Corrupt { job: String, message: String },
}

/// Where jobs' records are kept, once each.
pub trait RunLedger: Send + Sync {
    /// The job's record, if it has one.
    fn get(
        &self,
        job: &RunKey,
    ) -> impl Future<Output = Result<Option<RunRecord>, LedgerError>> + Send;
    /// Stores `record` as the job's record unless it has one; atomic against concurrent
    /// callers.
    fn record_once(
        &self,
        job: &RunKey,
        record: &RunRecord,
    ) -> impl Future<Output = Result<Recorded, LedgerError>> + Send;
}

/// One JSON file per job in a directory; the first writer wins by a hard link, which
/// fails when the name exists (atomic on every local filesystem).
#[derive(Debug, Clone)]
pub struct FileLedger {
    dir: PathBuf,
}

impl FileLedger {
    pub fn new(dir: impl Into<PathBuf>) -> FileLedger {
        FileLedger { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, job: &RunKey) -> PathBuf {
        self.dir.join(format!("{}.json", job.as_str()))
    }

    fn read(&self, job: &RunKey) -> Result<Option<RunRecord>, LedgerError> {
        let path = self.path(job);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(LedgerError::Unavailable(format!(
                    "read {}: {e}",
                    path.display()
                )));
            }
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| LedgerError::Corrupt {
                job: job.as_str().to_string(),
                message: e.to_string(),
            })
    }

    fn write_once(&self, job: &RunKey, record: &RunRecord) -> Result<Recorded, LedgerError> {
        let unavailable = |what: &str, e: std::io::Error| {
            LedgerError::Unavailable(format!("{what} in {}: {e}", self.dir.display()))
        };
        std::fs::create_dir_all(&self.dir).map_err(|e| unavailable("create the ledger", e))?;
        let json = serde_json::to_vec_pretty(record).map_err(|e| LedgerError::Corrupt {
            job: job.as_str().to_string(),
            message: e.to_string(),
        })?;
        let mut temp = tempfile::NamedTempFile::new_in(&self.dir)
            .map_err(|e| unavailable("create a temporary record", e))?;
        temp.write_all(&json)
            .and_then(|_| temp.as_file().sync_all())
            .map_err(|e| unavailable("write a record", e))?;
        match std::fs::hard_link(temp.path(), self.path(job)) {
            Ok(()) => Ok(Recorded::First(record.clone())),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match self.read(job)? {
                Some(existing) => Ok(Recorded::Already(existing)),
                None => Err(unavailable("read back a record", e)),
            },
            Err(e) => Err(unavailable("link a record", e)),
        }
    }
}

impl RunLedger for FileLedger {
    async fn get(&self, job: &RunKey) -> Result<Option<RunRecord>, LedgerError> {
        let ledger = self.clone();
        let job = job.clone();
        tokio::task::spawn_blocking(move || ledger.read(&job))
            .await
            .map_err(|e| LedgerError::Unavailable(e.to_string()))?
    }

    async fn record_once(&self, job: &RunKey, record: &RunRecord) -> Result<Recorded, LedgerError> {
        let ledger = self.clone();
        let job = job.clone();
        let record = record.clone();
        tokio::task::spawn_blocking(move || ledger.write_once(&job, &record))
            .await
            .map_err(|e| LedgerError::Unavailable(e.to_string()))?
    }
}
