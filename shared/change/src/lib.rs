//! Intake: a change under review, read from git objects.
//!
//! Owns revision resolution (branches, tags, SHAs, `HEAD~1`), the list of changed files
//! with their modes, renames and binary flags, and reading either side's files. Never reads
//! the author's working copy: both sides come from commits, so what is reviewed is exactly
//! what was committed.
//!
//! Invariants:
//! - A tracked symlink (mode 120000) or submodule (160000) is never read as a file: it is
//!   left out of the changed files and listed in [`Change::left_out`] with the reason.
//! - A changed blob is sized from its object header before anything loads it: one over
//!   [`Limits::max_blob_bytes`] is left out ([`LeftOutReason::TooLarge`]), and a tree over
//!   [`Limits::max_tree_files`] entries is refused, so a hostile repository cannot exhaust
//!   memory.
//! - Paths are bytes; a path that is not UTF-8 is carried as bytes and shown lossily.
//! - git2 calls block: async callers run them on a blocking thread.

mod change;
mod error;
mod path;
mod repo;

pub use change::{Change, ChangedFile, FileStatus, Hunk, LeftOut, LeftOutReason, Limits, Mode};
pub use error::ChangeError;
pub use path::RepoPath;
pub use repo::{BlobRead, Repo, Revision};
#[cfg(any(test, feature = "testing"))]
pub mod testing;
