use crate::{RepoPath, Revision};

/// The change under review: two commits and what differs between them.
#[derive(Debug, Clone)]
pub struct Change {
    pub base: Revision,
    pub head: Revision,
    /// Regular files (and executables) that differ, renames detected.
    pub files: Vec<ChangedFile>,
    /// Entries that are not reviewed as files, with the reason (symlinks, submodules).
    pub left_out: Vec<LeftOut>,
    /// True when the change had more files than [`Limits::max_files`]; the rest are not
    /// listed and the review must say it did not see them.
    pub truncated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    Added,
    Deleted,
    Modified,
    Renamed,
    Copied,
    /// The entry changed type (e.g. a file became a symlink).
    TypeChanged,
}

impl FileStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Added => "added",
            FileStatus::Deleted => "deleted",
            FileStatus::Modified => "modified",
            FileStatus::Renamed => "renamed",
            FileStatus::Copied => "copied",
            FileStatus::TypeChanged => "type_changed",
        }
    }
}

/// A tree entry's mode, as git records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Absent,
    File,
    Executable,
    Symlink,
    Submodule,
    Other(i32),
}

impl Mode {
    pub fn from_git(mode: git2::FileMode) -> Mode {
        match mode {
            git2::FileMode::Unreadable => Mode::Absent,
            git2::FileMode::Blob => Mode::File,
            git2::FileMode::BlobExecutable => Mode::Executable,
            git2::FileMode::Link => Mode::Symlink,
            git2::FileMode::Commit => Mode::Submodule,
            other => Mode::Other(i32::from(other)),
        }
    }

    /// From a raw tree-entry mode.
    pub fn from_raw(mode: i32) -> Mode {
        match mode {
            0 => Mode::Absent,
            0o100644 | 0o100664 => Mode::File,
            0o100755 => Mode::Executable,
            0o120000 => Mode::Symlink,
            0o160000 => Mode::Submodule,
            other => Mode::Other(other),
        }
    }

    /// The octal mode as git prints it, e.g. `100644`.
    pub fn octal(self) -> String {
        match self {
            Mode::Absent => "000000".into(),
            Mode::File => "100644".into(),
            Mode::Executable => "100755".into(),
            Mode::Symlink => "120000".into(),
            Mode::Submodule => "160000".into(),
            Mode::Other(m) => format!("{m:o}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ChangedFile {
    pub status: FileStatus,
    /// Path on the base side (None when added).
    pub old_path: Option<RepoPath>,
    /// Path on the head side (None when deleted).
    pub new_path: Option<RepoPath>,
    pub old_mode: Mode,
    pub new_mode: Mode,
    /// git's binary detection (NUL bytes in the first 8000 bytes, or attributes).
    pub binary: bool,
    pub hunks: Vec<Hunk>,
    pub additions: usize,
    pub deletions: usize,
}

impl ChangedFile {
    /// The path a reader knows the file by: the new one, or the old one when deleted.
    pub fn path(&self) -> &RepoPath {
        self.new_path
            .as_ref()
            .or(self.old_path.as_ref())
            .unwrap_or_else(|| unreachable_path())
    }
}

// A delta always has at least one side; this keeps `path()` total without a panic path.
fn unreachable_path() -> &'static RepoPath {
    static EMPTY: std::sync::OnceLock<RepoPath> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| RepoPath::from_bytes(b""))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    pub path: RepoPath,
    pub reason: LeftOutReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftOutReason {
    /// A tracked symlink: its target may point outside the tree, so it is never followed.
    Symlink,
    /// A submodule: its content is another repository's commit.
    Submodule,
    /// A blob larger than [`Limits::max_blob_bytes`] (its size read from the object header):
    /// never loaded. `head`: the head side's blob is over (else only the base side's).
    TooLarge { size: u64, head: bool },
}

impl LeftOutReason {
    pub fn as_str(self) -> &'static str {
        match self {
            LeftOutReason::Symlink => "symlink",
            LeftOutReason::Submodule => "submodule",
            LeftOutReason::TooLarge { .. } => "too_large",
        }
    }
}

/// Bounds on what intake reads, so a huge change cannot exhaust memory.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Changed files listed; the rest are counted as truncated.
    pub max_files: usize,
    pub max_hunks_per_file: usize,
    /// A changed blob larger than this (by its object header) is left out, never loaded.
    pub max_blob_bytes: u64,
    /// A commit whose tree holds more entries than this is refused ([`crate::ChangeError::TreeTooLarge`]).
    pub max_tree_files: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_files: 50_000,
            max_hunks_per_file: 2_000,
            max_blob_bytes: 64 << 20,
            max_tree_files: 300_000,
        }
    }
}
