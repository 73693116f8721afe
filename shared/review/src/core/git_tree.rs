//! A commit of the repository under review, seen as a [`proven_lockfile::Tree`].

use crate::core::step_name::Name;
use std::io;

use proven_change::{BlobRead, Repo};

pub struct GitTree<'a> {
    pub repo: &'a Repo,
    pub commit: &'a str,
}

/// A side of the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum Side {
    Base,
    Head,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Side {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'a> GitTree<'a> {
    /// The base and the head commit of a change, each by its side.
    pub fn sides(repo: &'a Repo, base: &'a str, head: &'a str) -> [(Side, GitTree<'a>); 2] {
        [
            (Side::Base, GitTree { repo, commit: base }),
            (Side::Head, GitTree { repo, commit: head }),
        ]
    }
}

/// A file's text at `commit` (invalid UTF-8 replaced), or empty where there is no file
/// Proven reads (missing, a link, a submodule, over `max` bytes).
pub fn text_at(repo: &Repo, commit: &str, path: &str, max: u64) -> Result<String, String> {
    match repo
        .read_blob(commit, path.as_bytes(), max)
        .map_err(|e| e.to_string())?
    {
        BlobRead::Content(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
        _ => Ok(String::new()),
    }
}

fn io_err(e: proven_change::ChangeError) -> io::Error {
    io::Error::other(e.to_string())
}

impl proven_lockfile::Tree for GitTree<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, io::Error> {
        match self
            .repo
            .read_blob(self.commit, path.as_bytes(), u64::MAX)
            .map_err(io_err)?
        {
            BlobRead::Content(bytes) => Ok(Some(bytes)),
            // Symlinks and submodules are never read (intake lists them as left out).
            BlobRead::Missing | BlobRead::LeftOut(_) => Ok(None),
            BlobRead::TooLarge { size } => Err(io::Error::other(format!("blob of {size} bytes"))),
        }
    }

    fn size(&self, path: &str) -> Result<Option<u64>, io::Error> {
        self.repo
            .blob_size(self.commit, path.as_bytes())
            .map_err(io_err)
    }
}
