use std::path::Path;

use git2::{Delta, DiffFindOptions, DiffOptions, ObjectType, Oid, Repository};

use crate::{
    Change, ChangeError, ChangedFile, FileStatus, Hunk, LeftOut, LeftOutReason, Limits, Mode,
    RepoPath,
};

/// An open repository. Not `Sync`: keep it on one (blocking) thread.
pub struct Repo {
    repo: Repository,
    name: String,
}

/// A revision as the user wrote it and the commit it resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    pub spec: String,
    pub commit: String,
    pub summary: String,
    /// The commit's committer time (seconds since the epoch).
    pub committed_at: i64,
}

/// What reading one path of one commit gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobRead {
    Content(Vec<u8>),
    Missing,
    /// A symlink or submodule: never read as a file (see the crate's invariants).
    LeftOut(LeftOutReason),
    /// Larger than the caller's limit; the size says by how much.
    TooLarge {
        size: u64,
    },
}

impl Repo {
    pub fn open(path: &Path) -> Result<Repo, ChangeError> {
        let repo = Repository::open(path).map_err(|e| ChangeError::NotARepository {
            path: path.display().to_string(),
            message: e.message().to_string(),
        })?;
        Ok(Repo {
            repo,
            name: path.display().to_string(),
        })
    }

    fn git_err(&self) -> impl Fn(git2::Error) -> ChangeError + '_ {
        |e| ChangeError::Git {
            repo: self.name.clone(),
            message: e.message().to_string(),
        }
    }

    /// Resolves a branch, tag, SHA or expression such as `HEAD~1` to a commit.
    pub fn resolve(&self, spec: &str) -> Result<Revision, ChangeError> {
        let not_found = |message: String| ChangeError::RevisionNotFound {
            repo: self.name.clone(),
            rev: spec.to_string(),
            message,
        };
        if spec.trim().is_empty() {
            return Err(not_found("empty revision".into()));
        }
        let object = self
            .repo
            .revparse_single(spec)
            .map_err(|e| not_found(e.message().to_string()))?;
        let commit = object
            .peel_to_commit()
            .map_err(|e| not_found(format!("does not name a commit: {}", e.message())))?;
        Ok(Revision {
            spec: spec.to_string(),
            commit: commit.id().to_string(),
            summary: String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default())
                .into_owned(),
            committed_at: commit.time().seconds(),
        })
    }

    /// The merge base of `base` and `head`: the commit GitHub's "Files changed" compares
    /// from (`git diff base...head`). `Ok(None)` when the histories share no commit, or when
    /// a shallow clone cut the common history off (see [`Repo::is_shallow`]).
    pub fn merge_base(
        &self,
        base: &Revision,
        head: &Revision,
    ) -> Result<Option<Revision>, ChangeError> {
        let err = self.git_err();
        let a = Oid::from_str(&base.commit).map_err(&err)?;
        let b = Oid::from_str(&head.commit).map_err(&err)?;
        let oid = match self.repo.merge_base(a, b) {
            Ok(oid) => oid,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(err(e)),
        };
        let commit = self.repo.find_commit(oid).map_err(&err)?;
        Ok(Some(Revision {
            spec: base.spec.clone(),
            commit: oid.to_string(),
            summary: String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default())
                .into_owned(),
            committed_at: commit.time().seconds(),
        }))
    }

    /// A shallow clone: its history stops at grafted commits, so a merge base older than
    /// the cut is not there to be found.
    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow()
    }

    /// The tree of the commit named by its hex id.
    fn commit_tree(&self, commit: &str) -> Result<git2::Tree<'_>, ChangeError> {
        let err = self.git_err();
        let oid = Oid::from_str(commit).map_err(&err)?;
        self.repo
            .find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(&err)
    }

    /// What differs between two commits. A commit whose tree holds more than
    /// [`Limits::max_tree_files`] entries is refused before anything walks it; a changed blob
    /// over [`Limits::max_blob_bytes`] (by its object header) is left out, never loaded.
    pub fn diff(
        &self,
        base: &Revision,
        head: &Revision,
        limits: Limits,
    ) -> Result<Change, ChangeError> {
        let err = self.git_err();
        let base_tree = self.commit_tree(&base.commit)?;
        let head_tree = self.commit_tree(&head.commit)?;
        self.check_tree_size(&base_tree, &base.commit, limits.max_tree_files)?;
        self.check_tree_size(&head_tree, &head.commit, limits.max_tree_files)?;
        let mut opts = DiffOptions::new();
        opts.include_typechange(true)
            .ignore_submodules(false)
            .context_lines(0)
            // libgit2 marks a larger blob binary without loading it (a second guard; the
            // sizes below leave such files out first).
            .max_size(i64::try_from(limits.max_blob_bytes).unwrap_or(i64::MAX));
        let mut diff = self
            .repo
            .diff_tree_to_tree(Some(&base_tree), Some(&head_tree), Some(&mut opts))
            .map_err(&err)?;
        let oversized = self.oversized_blobs(&diff, limits.max_blob_bytes)?;
        // Rename detection loads the blobs it compares: with an oversized blob in the change
        // it compares object ids only (exact renames are still found).
        let mut find = DiffFindOptions::new();
        find.renames(true)
            .copies(false)
            .exact_match_only(!oversized.is_empty());
        diff.find_similar(Some(&mut find)).map_err(&err)?;

        let mut files: Vec<ChangedFile> = Vec::new();
        let mut left_out: Vec<LeftOut> = Vec::new();
        let mut truncated = false;
        for (i, delta) in diff.deltas().enumerate() {
            let old_mode = match delta.status() {
                Delta::Added => Mode::Absent,
                _ => Mode::from_git(delta.old_file().mode()),
            };
            let new_mode = match delta.status() {
                Delta::Deleted => Mode::Absent,
                _ => Mode::from_git(delta.new_file().mode()),
            };
            let old_path = delta.old_file().path_bytes().map(RepoPath::from_bytes);
            let new_path = delta.new_file().path_bytes().map(RepoPath::from_bytes);
            let reason = left_out_reason(&delta, old_mode, new_mode, &oversized);
            if let Some(reason) = reason {
                let path = new_path
                    .or(old_path)
                    .unwrap_or_else(|| RepoPath::from_bytes(b""));
                left_out.push(LeftOut { path, reason });
                continue;
            }
            if files.len() >= limits.max_files {
                truncated = true;
                continue;
            }
            let status = file_status(delta.status());
            let mut file = ChangedFile {
                status,
                old_path: if status == FileStatus::Added {
                    None
                } else {
                    old_path
                },
                new_path: if status == FileStatus::Deleted {
                    None
                } else {
                    new_path
                },
                old_mode,
                new_mode,
                binary: delta.flags().is_binary(),
                hunks: Vec::new(),
                additions: 0,
                deletions: 0,
            };
            self.read_patch(&diff, i, &mut file, limits.max_hunks_per_file)?;
            files.push(file);
        }

        Ok(Change {
            base: base.clone(),
            head: head.clone(),
            files,
            left_out,
            truncated,
        })
    }

    /// The changed blobs over `max_blob_bytes`, by their object headers (sizes read before
    /// anything loads a blob).
    fn oversized_blobs(
        &self,
        diff: &git2::Diff<'_>,
        max_blob_bytes: u64,
    ) -> Result<std::collections::HashMap<Oid, u64>, ChangeError> {
        let err = self.git_err();
        let odb = self.repo.odb().map_err(&err)?;
        let mut oversized: std::collections::HashMap<Oid, u64> = Default::default();
        for delta in diff.deltas() {
            for file in [delta.old_file(), delta.new_file()] {
                let blob = matches!(
                    file.mode(),
                    git2::FileMode::Blob | git2::FileMode::BlobExecutable
                );
                if !blob || file.id().is_zero() || oversized.contains_key(&file.id()) {
                    continue;
                }
                let (size, _) = odb.read_header(file.id()).map_err(&err)?;
                if size as u64 > max_blob_bytes {
                    oversized.insert(file.id(), size as u64);
                }
            }
        }
        Ok(oversized)
    }

    /// The `i`th delta's patch: its line counts and first `max_hunks` hunks, or binary.
    fn read_patch(
        &self,
        diff: &git2::Diff<'_>,
        i: usize,
        file: &mut ChangedFile,
        max_hunks: usize,
    ) -> Result<(), ChangeError> {
        let err = self.git_err();
        // The patch loads both blobs; binary detection is only final after that.
        match git2::Patch::from_diff(diff, i).map_err(&err)? {
            Some(patch) if !patch.delta().flags().is_binary() => {
                let (_, additions, deletions) = patch.line_stats().map_err(&err)?;
                file.additions = additions;
                file.deletions = deletions;
                for h in 0..patch.num_hunks().min(max_hunks) {
                    let (hunk, _) = patch.hunk(h).map_err(&err)?;
                    file.hunks.push(Hunk {
                        old_start: hunk.old_start(),
                        old_lines: hunk.old_lines(),
                        new_start: hunk.new_start(),
                        new_lines: hunk.new_lines(),
                    });
                }
            }
            _ => file.binary = true,
        }
        Ok(())
    }

    /// Reads `path` as it is in `commit`, refusing symlinks, submodules and blobs larger
    /// than `max_bytes` (decided from the object header, before reading the content).
    pub fn read_blob(
        &self,
        commit: &str,
        path: &[u8],
        max_bytes: u64,
    ) -> Result<BlobRead, ChangeError> {
        let tree = self.commit_tree(commit)?;
        let Ok(path_str) = std::str::from_utf8(path) else {
            // git2's tree lookup takes a `Path`; on Unix any bytes are a valid path.
            return self.read_entry(
                &tree,
                std::path::Path::new(std::ffi::OsStr::from_bytes_compat(path)),
                max_bytes,
            );
        };
        self.read_entry(&tree, Path::new(path_str), max_bytes)
    }

    /// The size of `path` in `commit` without reading it; `None` when it is missing or is
    /// not a regular file (symlinks and submodules are never read).
    pub fn blob_size(&self, commit: &str, path: &[u8]) -> Result<Option<u64>, ChangeError> {
        Ok(match self.read_blob(commit, path, 0)? {
            BlobRead::TooLarge { size } => Some(size),
            BlobRead::Content(bytes) => Some(bytes.len() as u64),
            BlobRead::Missing | BlobRead::LeftOut(_) => None,
        })
    }

    /// Refuses a tree holding more than `limit` entries (files, symlinks, submodules),
    /// counting only up to the limit.
    fn check_tree_size(
        &self,
        tree: &git2::Tree<'_>,
        commit: &str,
        limit: usize,
    ) -> Result<(), ChangeError> {
        let mut count = 0usize;
        let mut over = false;
        tree.walk(git2::TreeWalkMode::PreOrder, |_, entry| {
            if entry.kind() == Some(ObjectType::Tree) {
                return git2::TreeWalkResult::Ok;
            }
            count += 1;
            if count > limit {
                over = true;
                return git2::TreeWalkResult::Abort;
            }
            git2::TreeWalkResult::Ok
        })
        .or_else(|e| if over { Ok(()) } else { Err(self.git_err()(e)) })?;
        if over {
            return Err(ChangeError::TreeTooLarge {
                commit: commit.to_string(),
                limit,
            });
        }
        Ok(())
    }

    fn read_entry(
        &self,
        tree: &git2::Tree<'_>,
        path: &Path,
        max_bytes: u64,
    ) -> Result<BlobRead, ChangeError> {
        let err = self.git_err();
        let entry = match tree.get_path(path) {
            Ok(e) => e,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(BlobRead::Missing),
            Err(e) => return Err(err(e)),
        };
        match Mode::from_raw(entry.filemode()) {
            Mode::Symlink => return Ok(BlobRead::LeftOut(LeftOutReason::Symlink)),
            Mode::Submodule => return Ok(BlobRead::LeftOut(LeftOutReason::Submodule)),
            _ => {}
        }
        if entry.kind() != Some(ObjectType::Blob) {
            return Ok(BlobRead::Missing);
        }
        let odb = self.repo.odb().map_err(&err)?;
        let (size, _) = odb.read_header(entry.id()).map_err(&err)?;
        if size as u64 > max_bytes {
            return Ok(BlobRead::TooLarge { size: size as u64 });
        }
        let blob = self.repo.find_blob(entry.id()).map_err(&err)?;
        Ok(BlobRead::Content(blob.content().to_vec()))
    }
}

/// `OsStr::from_bytes` lives in a Unix-only trait; this keeps the call site portable.
trait FromBytesCompat {
    fn from_bytes_compat(bytes: &[u8]) -> &std::ffi::OsStr;
}

impl FromBytesCompat for std::ffi::OsStr {
    #[cfg(unix)]
    fn from_bytes_compat(bytes: &[u8]) -> &std::ffi::OsStr {
        std::os::unix::ffi::OsStrExt::from_bytes(bytes)
    }
    #[cfg(not(unix))]
    fn from_bytes_compat(_bytes: &[u8]) -> &std::ffi::OsStr {
        std::ffi::OsStr::new("\u{fffd}")
    }
}

impl Repo {
    /// The change as a unified diff (what a model reads), cut at `max_bytes` with a marker
    /// saying so. Binary files appear as one line naming them.
    pub fn patch_text(
        &self,
        base: &str,
        head: &str,
        max_bytes: usize,
    ) -> Result<(String, bool), ChangeError> {
        let err = self.git_err();
        let tree = |c: &str| -> Result<git2::Tree<'_>, ChangeError> {
            let oid = Oid::from_str(c).map_err(&err)?;
            self.repo
                .find_commit(oid)
                .and_then(|c| c.tree())
                .map_err(&err)
        };
        let (b, h) = (tree(base)?, tree(head)?);
        let mut opts = DiffOptions::new();
        // A blob larger than the whole text would be cut anyway: libgit2 shows it as binary
        // without loading it.
        opts.context_lines(3)
            .max_size(i64::try_from(max_bytes).unwrap_or(i64::MAX));
        let mut diff = self
            .repo
            .diff_tree_to_tree(Some(&b), Some(&h), Some(&mut opts))
            .map_err(&err)?;
        diff.find_similar(Some(DiffFindOptions::new().renames(true)))
            .map_err(&err)?;
        let mut out = String::new();
        let mut cut = false;
        diff.print(git2::DiffFormat::Patch, |delta, _, line| {
            // Symlinks and submodules are not part of the reviewed trees.
            if matches!(
                delta.new_file().mode(),
                git2::FileMode::Link | git2::FileMode::Commit
            ) || matches!(
                delta.old_file().mode(),
                git2::FileMode::Link | git2::FileMode::Commit
            ) {
                return true;
            }
            let prefix = match line.origin() {
                '+' | '-' | ' ' => line.origin().to_string(),
                _ => String::new(),
            };
            let text = format!("{prefix}{}", String::from_utf8_lossy(line.content()));
            if out.len() + text.len() > max_bytes {
                cut = true;
                return false;
            }
            out.push_str(&text);
            true
        })
        .or_else(|e| if cut { Ok(()) } else { Err(err(e)) })?;
        Ok((out, cut))
    }
}

impl Repo {
    /// The names of the regular files directly in folder `dir` of `commit` (`.github/workflows`),
    /// in tree order; none when there is no such folder.
    pub fn list_dir(&self, commit: &str, dir: &str) -> Result<Vec<String>, ChangeError> {
        let tree = self.commit_tree(commit)?;
        let Ok(entry) = tree.get_path(Path::new(dir.trim_end_matches('/'))) else {
            return Ok(Vec::new());
        };
        let Some(folder) = self.repo.find_tree(entry.id()).ok() else {
            return Ok(Vec::new());
        };
        Ok(folder
            .iter()
            .filter(|e| {
                e.kind() == Some(ObjectType::Blob)
                    && !matches!(Mode::from_raw(e.filemode()), Mode::Symlink)
            })
            .filter_map(|e| e.name().ok().map(str::to_string))
            .collect())
    }

    /// The regular files of `commit` (symlinks and submodules left out), in tree order, at
    /// most `limit` of them; true when the listing was cut there. Paths that are not UTF-8
    /// are shown lossily: a listing is for reading, never for opening.
    pub fn list_files(
        &self,
        commit: &str,
        limit: usize,
    ) -> Result<(Vec<String>, bool), ChangeError> {
        let err = self.git_err();
        let tree = self.commit_tree(commit)?;
        let mut files = Vec::new();
        let mut cut = false;
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let regular = entry.kind() == Some(ObjectType::Blob)
                && !matches!(Mode::from_raw(entry.filemode()), Mode::Symlink);
            if !regular {
                return git2::TreeWalkResult::Ok;
            }
            if files.len() == limit {
                cut = true;
                return git2::TreeWalkResult::Abort;
            }
            files.push(format!(
                "{dir}{}",
                String::from_utf8_lossy(entry.name_bytes())
            ));
            git2::TreeWalkResult::Ok
        })
        .or_else(|e| if cut { Ok(()) } else { Err(err(e)) })?;
        Ok((files, cut))
    }

    /// The subjects of the commits the change adds (`base..head`), newest first, at most
    /// `limit` of them.
    pub fn commit_subjects(
        &self,
        base: &str,
        head: &str,
        limit: usize,
    ) -> Result<Vec<String>, ChangeError> {
        let err = self.git_err();
        let mut walk = self.repo.revwalk().map_err(&err)?;
        walk.push(Oid::from_str(head).map_err(&err)?)
            .map_err(&err)?;
        walk.hide(Oid::from_str(base).map_err(&err)?)
            .map_err(&err)?;
        let mut subjects = Vec::new();
        for oid in walk.take(limit) {
            let commit = self.repo.find_commit(oid.map_err(&err)?).map_err(&err)?;
            subjects.push(
                String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default()).into_owned(),
            );
        }
        Ok(subjects)
    }
}

/// Why a delta is left out: a symlink or submodule on either side, or a blob too large.
fn left_out_reason(
    delta: &git2::DiffDelta<'_>,
    old_mode: Mode,
    new_mode: Mode,
    oversized: &std::collections::HashMap<Oid, u64>,
) -> Option<LeftOutReason> {
    let special = [old_mode, new_mode].into_iter().find_map(|m| match m {
        Mode::Symlink => Some(LeftOutReason::Symlink),
        Mode::Submodule => Some(LeftOutReason::Submodule),
        _ => None,
    });
    let too_large = match (
        oversized.get(&delta.old_file().id()),
        oversized.get(&delta.new_file().id()),
    ) {
        (_, Some(&size)) => Some(LeftOutReason::TooLarge { size, head: true }),
        (Some(&size), None) => Some(LeftOutReason::TooLarge { size, head: false }),
        (None, None) => None,
    };
    special.or(too_large)
}

fn file_status(delta: Delta) -> FileStatus {
    match delta {
        Delta::Added => FileStatus::Added,
        Delta::Deleted => FileStatus::Deleted,
        Delta::Renamed => FileStatus::Renamed,
        Delta::Copied => FileStatus::Copied,
        Delta::Typechange => FileStatus::TypeChanged,
        _ => FileStatus::Modified,
    }
}
