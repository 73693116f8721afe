//! Sample mode: a cassette of recorded answers. `--record` writes every model answer (and,
//! through the agents, every sandbox run) to a JSON Lines file; `--sample` replays it
//! with no network. Entries are keyed by kind, role and a digest of the request, so a
//! replay answers exactly what was asked when it was recorded, and anything else is a
//! named miss rather than a guess.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CassetteMode {
    Record,
    Replay,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    kind: String,
    role: String,
    key: String,
    value: Value,
}

#[derive(Debug)]
pub struct Cassette {
    path: PathBuf,
    mode: CassetteMode,
    entries: Mutex<HashMap<(String, String, String), Value>>,
}

#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    #[error("cassette {path}: {message}")]
    Io { path: String, message: String },
    #[error("cassette {path} line {line}: {message}")]
    Entry {
        path: String,
        line: usize,
        message: String,
    },
}

impl Cassette {
    /// Opens a cassette to replay (it must exist) or to record (it is created, or appended to).
    pub fn open(path: &Path, mode: CassetteMode) -> Result<Cassette, CassetteError> {
        let io = |e: std::io::Error| CassetteError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let mut entries = HashMap::new();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && mode == CassetteMode::Record => {
                String::new()
            }
            Err(e) => return Err(io(e)),
        };
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let e: Entry = serde_json::from_str(line).map_err(|e| CassetteError::Entry {
                path: path.display().to_string(),
                line: i + 1,
                message: e.to_string(),
            })?;
            entries.insert((e.kind, e.role, e.key), e.value);
        }
        Ok(Cassette {
            path: path.to_path_buf(),
            mode,
            entries: Mutex::new(entries),
        })
    }

    pub fn mode(&self) -> CassetteMode {
        self.mode
    }

    pub fn get(&self, kind: &str, role: &str, key: &str) -> Option<Value> {
        self.entries
            .lock()
            .ok()?
            .get(&(kind.to_string(), role.to_string(), key.to_string()))
            .cloned()
    }

    /// Records an entry (record mode only; a no-op when replaying).
    pub fn put(
        &self,
        kind: &str,
        role: &str,
        key: &str,
        value: &Value,
    ) -> Result<(), CassetteError> {
        if self.mode != CassetteMode::Record {
            return Ok(());
        }
        let io = |e: std::io::Error| CassetteError::Io {
            path: self.path.display().to_string(),
            message: e.to_string(),
        };
        let mut entries = self.entries.lock().map_err(|_| CassetteError::Io {
            path: self.path.display().to_string(),
            message: "poisoned".into(),
        })?;
        let line = serde_json::to_string(&Entry {
            kind: kind.into(),
            role: role.into(),
            key: key.into(),
            value: value.clone(),
        })
        .map_err(|e| CassetteError::Io {
            path: self.path.display().to_string(),
            message: e.to_string(),
        })?;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(io)?;
        writeln!(file, "{line}").map_err(io)?;
        entries.insert((kind.into(), role.into(), key.into()), value.clone());
        Ok(())
    }
}
