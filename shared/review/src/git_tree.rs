//! A commit of the repository under review, seen as a [`proven_lockfile::Tree`].

use std::io;

use proven_change::{BlobRead, Repo};

pub struct GitTree<'a> {
    pub repo: &'a Repo,
    pub commit: &'a str,
}

impl<'a> GitTree<'a> {
    /// The base and the head commit of a change, each named by its side.
    pub fn sides(repo: &'a Repo, base: &'a str, head: &'a str) -> [(&'static str, GitTree<'a>); 2] {
        [
            ("base", GitTree { repo, commit: base }),
            ("head", GitTree { repo, commit: head }),
        ]
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
