//! A run's key: the job id it belongs to, or a fresh one.

use serde::{Deserialize, Serialize};

use crate::RequestError;

/// The key of a run: a job id, or a fresh id. It names the container
/// (`proven-sbx-<key>`), so a restarted runner finds the container of the job it was
/// running, and it keys the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RunKey(String);

impl RunKey {
    /// A key from a job id: 1-100 characters of `A-Z a-z 0-9 . _ -` (Docker's name rules,
    /// and safe as a file name).
    pub fn new(key: impl Into<String>) -> Result<RunKey, RequestError> {
        let key = key.into();
        let valid = !key.is_empty()
            && key.len() <= 100
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
            && key.starts_with(|c: char| c.is_ascii_alphanumeric());
        if valid {
            Ok(RunKey(key))
        } else {
            Err(RequestError::InvalidKey { key })
        }
    }

    /// A fresh key for a run that belongs to no job.
    pub fn random() -> RunKey {
        RunKey(uuid::Uuid::now_v7().simple().to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A key for one of several runs of a job (`JOB-base-1`).
    pub fn derive(&self, suffix: &str) -> Result<RunKey, RequestError> {
        RunKey::new(format!("{}-{suffix}", self.0))
    }
}

impl TryFrom<String> for RunKey {
    type Error = RequestError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        RunKey::new(value)
    }
}

impl From<RunKey> for String {
    fn from(key: RunKey) -> String {
        key.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_keys_follow_docker_name_rules() {
        assert!(RunKey::new("job-42.attempt_1").is_ok());
        for bad in ["", "-x", "a/b", "a b", "ä", &"x".repeat(101)] {
            assert!(RunKey::new(bad).is_err(), "{bad:?}");
        }
        let key = RunKey::random();
        assert!(RunKey::new(key.as_str()).is_ok());
        assert_eq!(
            RunKey::new("job").and_then(|k| k.derive("base-1")).ok(),
            RunKey::new("job-base-1").ok()
        );
    }
}
