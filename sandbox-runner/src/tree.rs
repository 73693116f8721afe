//! Materialising a run's tree: the files of one commit, read from git objects (never the
//! author's working copy) into a fresh directory, then the patch's edits and the added
//! test files applied to that copy only.

use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use git2::{ObjectType, Oid, Repository};
use sha2::{Digest, Sha256};

use proven_sandbox_plan::language::is_test_path;
pub use proven_sandbox_plan::tree::{AddFile, Edit, FileDigest, TreeRecord, patch_digest};

use crate::{RequestError, SandboxError};

/// A tree on disk: `dir/src` holds the files; the directory is deleted on drop.
pub(crate) struct Materialised {
    dir: tempfile::TempDir,
    pub record: TreeRecord,
}

impl Materialised {
    pub fn src(&self) -> PathBuf {
        self.dir.path().join("src")
    }
}

pub(crate) struct TreeSpec<'a> {
    pub repository: &'a Path,
    pub revision: &'a str,
    pub patch: &'a [Edit],
    pub add_files: &'a [AddFile],
    pub max_bytes: u64,
    /// The size of the run's scratch space (`/work`, a tmpfs the tree is copied into): a
    /// tree that cannot fit there is refused before any run.
    pub scratch_bytes: u64,
}

/// What a file costs on a tmpfs: whole pages.
fn pages(bytes: u64) -> u64 {
    bytes.div_ceil(4096) * 4096
}

/// Writes the tree of `spec` into a fresh directory under `work_dir`, named after its
/// runner (`owner_tag`) so a sweep can remove it if the runner dies. Blocking (git2 and
/// file IO): call it from a blocking thread.
pub(crate) fn materialise(
    work_dir: &Path,
    owner_tag: &str,
    spec: &TreeSpec<'_>,
) -> Result<Materialised, SandboxError> {
    // Checked before anything is written: a wrong request costs no disk.
    check_request(spec)?;

    fs::create_dir_all(work_dir).map_err(SandboxError::io("create", work_dir))?;
    let dir = tempfile::Builder::new()
        .prefix(&format!("run-{owner_tag}-"))
        .tempdir_in(work_dir)
        .map_err(SandboxError::io("create a run directory in", work_dir))?;
    // The container's user is not the runner's: everything it reads must be world-readable.
    set_mode(dir.path(), 0o755)?;
    let src = dir.path().join("src");
    make_dir(&src)?;

    let repo = Repository::open(spec.repository).map_err(|e| RequestError::NotARepository {
        path: spec.repository.display().to_string(),
        message: e.message().to_string(),
    })?;
    let commit = repo
        .revparse_single(spec.revision)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| RequestError::RevisionNotFound {
            revision: spec.revision.to_string(),
            message: e.message().to_string(),
        })?;
    let odb = repo.odb().map_err(git_error)?;
    let mut writer = TreeWriter {
        repo: &repo,
        odb: &odb,
        left_out: Vec::new(),
        missing: Vec::new(),
        bytes: 0,
        scratch: 0,
        max_bytes: spec.max_bytes,
        scratch_limit: spec.scratch_bytes,
    };
    let tree = commit.tree().map_err(git_error)?;
    writer.write_tree(tree.id(), &src, "")?;
    let added: u64 = spec
        .add_files
        .iter()
        .map(|f| pages(f.contents.len() as u64))
        .sum();
    if writer.scratch + added > spec.scratch_bytes {
        return Err(RequestError::TreeOverScratch {
            scratch_bytes: spec.scratch_bytes,
        }
        .into());
    }
    let left_out = writer.left_out;
    let missing = writer.missing;

    for edit in spec.patch {
        apply_edit(&src, edit)?;
    }
    let added_files = write_added_files(&src, spec.add_files)?;
    // A CI's tree is a git checkout; the run's is too, unless its repository would crowd
    // the scratch space (the tree over half of it).
    let checkout = if 2 * (writer.scratch + added) <= spec.scratch_bytes {
        Some(checkout(&src, &commit)?.to_string())
    } else {
        None
    };

    Ok(Materialised {
        dir,
        record: TreeRecord {
            repository: spec.repository.display().to_string(),
            revision: spec.revision.to_string(),
            commit: commit.id().to_string(),
            patch_sha256: (!spec.patch.is_empty()).then(|| patch_digest(spec.patch)),
            added_files,
            left_out,
            missing,
            checkout,
        },
    })
}

/// Makes `src` a git repository whose one commit is the tree as written (a CI's checkout
/// of it: `git grep`, `git ls-files` and `git describe --always` answer as there; vue's
/// build finds its enums with `git grep`), authored as `base` was, so the same tree gives
/// the same commit. Its objects are written as one pack (loose, each would take a page of
/// the scratch space), through an in-memory object store. Every file is in it, those the
/// project's ignore rules name too: they are in the tree. The commit's id.
fn checkout(src: &Path, base: &git2::Commit<'_>) -> Result<Oid, SandboxError> {
    let repo = Repository::init(src).map_err(git_error)?;
    let odb = repo.odb().map_err(git_error)?;
    let mempack = odb.add_new_mempack_backend(1000).map_err(git_error)?;
    let mut index = repo.index().map_err(git_error)?;
    index
        .add_all(["*"], git2::IndexAddOption::FORCE, None)
        .map_err(git_error)?;
    index.write().map_err(git_error)?;
    let tree = index.write_tree().map_err(git_error)?;
    let tree = repo.find_tree(tree).map_err(git_error)?;
    let author = base.author();
    let signature = git2::Signature::new(
        author.name().unwrap_or("proven"),
        author.email().unwrap_or("proven@localhost"),
        &author.when(),
    )
    .map_err(git_error)?;
    let id = repo
        .commit(
            Some("HEAD"),
            &signature,
            &signature,
            base.message().unwrap_or("the tree under review"),
            &tree,
            &[],
        )
        .map_err(git_error)?;
    let mut pack = git2::Buf::new();
    mempack.dump(&repo, &mut pack).map_err(git_error)?;
    let dir = src.join(".git/objects/pack");
    let mut indexer = git2::Indexer::new(Some(&odb), &dir, 0o644, false).map_err(git_error)?;
    indexer
        .write_all(&pack)
        .map_err(SandboxError::io("write the checkout's pack in", &dir))?;
    indexer.commit().map_err(git_error)?;
    mempack.reset().map_err(git_error)?;
    Ok(id)
}

/// The version a build that reads it from git (setuptools_scm, hatch-vcs, pbr) would give
/// the commit: its nearest tag as a PEP 440 version (`v8.3.5`), with the commits since
/// as a post-release (`8.3.5.post12`). The tree a run gets is a copy without git metadata,
/// where such a build finds no version (pytest's own tree became pytest 0.0.0, and its
/// `minversion` refused it). None when no tag reaches the commit, or none reads as a
/// version.
pub(crate) fn version_from_tags(repository: &Path, commit: &str) -> Option<String> {
    let repo = Repository::open(repository).ok()?;
    let commit = repo.find_commit(Oid::from_str(commit).ok()?).ok()?;
    let mut options = git2::DescribeOptions::new();
    options.describe_tags();
    let described = commit.as_object().describe(&options).ok()?;
    version_of_description(&described.format(None).ok()?)
}

/// `TAG` or `TAG-N-gHASH` (git describe's words) as a PEP 440 version: the tag from its
/// first digit (`v1.2`, `release-1.2`), `.postN` after it when N commits follow.
fn version_of_description(described: &str) -> Option<String> {
    let parts: Vec<&str> = described.rsplitn(3, '-').collect();
    let (tag, since) = match parts.as_slice() {
        [hash, n, tag] if hash.starts_with('g') && n.parse::<u64>().is_ok() => {
            (*tag, n.parse::<u64>().ok())
        }
        _ => (described, None),
    };
    let tag = &tag[tag.find(|c: char| c.is_ascii_digit())?..];
    proven_version::pypi::PyVersion::parse(tag).ok()?;
    let version = match since {
        Some(n) if n > 0 => format!("{tag}.post{n}"),
        _ => tag.to_string(),
    };
    proven_version::pypi::PyVersion::parse(&version)
        .ok()
        .map(|_| version)
        .or_else(|| Some(tag.to_string()))
}

/// Refuses a request whose patch touches a test file, has an empty old text, or whose
/// paths leave the tree.
fn check_request(spec: &TreeSpec<'_>) -> Result<(), SandboxError> {
    for edit in spec.patch {
        let rel = safe_relative(&edit.path)?;
        if is_test_path(&edit.path) {
            return Err(RequestError::PatchTouchesTestFile {
                path: edit.path.clone(),
            }
            .into());
        }
        if edit.old_text.is_empty() {
            return Err(RequestError::EmptyOldText {
                path: rel.display().to_string(),
            }
            .into());
        }
    }
    for file in spec.add_files {
        safe_relative(&file.path)?;
    }
    Ok(())
}

/// Writes the request's added files into `src`, each with its digest for the run's record.
fn write_added_files(src: &Path, add_files: &[AddFile]) -> Result<Vec<FileDigest>, SandboxError> {
    let mut added_files = Vec::new();
    for file in add_files {
        let rel = safe_relative(&file.path)?;
        let path = src.join(&rel);
        if let Some(parent) = path.parent() {
            make_dirs(src, parent)?;
        }
        write_file(&path, &file.contents, 0o644)?;
        added_files.push(FileDigest {
            path: file.path.clone(),
            bytes: file.contents.len() as u64,
            sha256: hex::encode(Sha256::digest(&file.contents)),
        });
    }
    Ok(added_files)
}

/// The repository's `origin` URL, when it has one: what says a Go tree's import path
/// when the tree itself does not ([`proven_sandbox_plan::gopath::import_path`]).
pub(crate) fn origin(repository: &Path) -> Option<String> {
    let repo = git2::Repository::open(repository).ok()?;
    let remote = repo.find_remote("origin").ok()?;
    remote.url().ok().map(str::to_string)
}

struct TreeWriter<'r> {
    repo: &'r Repository,
    odb: &'r git2::Odb<'r>,
    left_out: Vec<String>,
    /// Entries whose object is absent from the store.
    missing: Vec<String>,
    bytes: u64,
    /// What the files take on a tmpfs (whole pages).
    scratch: u64,
    max_bytes: u64,
    scratch_limit: u64,
}

impl TreeWriter<'_> {
    fn write_tree(&mut self, id: Oid, dir: &Path, prefix: &str) -> Result<(), SandboxError> {
        let tree = self.repo.find_tree(id).map_err(git_error)?;
        self.write_entries(&tree, dir, prefix)
    }

    fn write_entries(
        &mut self,
        tree: &git2::Tree<'_>,
        dir: &Path,
        prefix: &str,
    ) -> Result<(), SandboxError> {
        for entry in tree.iter() {
            let name = entry.name_bytes();
            let shown = format!("{prefix}{}", String::from_utf8_lossy(name));
            // git refuses these names, but a crafted object store need not: never follow one.
            if name.is_empty()
                || name == b"."
                || name == b".."
                || name == b".git"
                || name.contains(&b'/')
                || name.contains(&0)
            {
                self.left_out.push(shown);
                continue;
            }
            let path = dir.join(std::ffi::OsStr::from_bytes(name));
            match (entry.kind(), entry.filemode()) {
                (Some(ObjectType::Tree), _) => {
                    let Some(subtree) = self.present(self.repo.find_tree(entry.id()), &shown)?
                    else {
                        continue;
                    };
                    make_dir(&path)?;
                    self.write_entries(&subtree, &path, &format!("{shown}/"))?;
                }
                (Some(ObjectType::Blob), mode) if mode == 0o100644 || mode == 0o100755 => {
                    // The size from the object's header, before its content is loaded: a
                    // huge blob is refused without being read into memory.
                    let Some((size, _)) = self.present(self.odb.read_header(entry.id()), &shown)?
                    else {
                        continue;
                    };
                    self.bytes += size as u64;
                    self.scratch += pages(size as u64);
                    if self.bytes > self.max_bytes {
                        return Err(RequestError::TreeTooLarge {
                            limit_bytes: self.max_bytes,
                        }
                        .into());
                    }
                    if self.scratch > self.scratch_limit {
                        return Err(RequestError::TreeOverScratch {
                            scratch_bytes: self.scratch_limit,
                        }
                        .into());
                    }
                    let Some(blob) = self.present(self.repo.find_blob(entry.id()), &shown)? else {
                        continue;
                    };
                    let mode = if mode == 0o100755 { 0o755 } else { 0o644 };
                    write_file(&path, blob.content(), mode)?;
                }
                (Some(ObjectType::Blob), 0o120000) => {
                    let Some(blob) = self.present(self.repo.find_blob(entry.id()), &shown)? else {
                        continue;
                    };
                    match link_inside(prefix, blob.content()) {
                        Some(target) => std::os::unix::fs::symlink(&target, &path)
                            .map_err(SandboxError::io("link", &path))?,
                        None => self.left_out.push(shown),
                    }
                }
                // A submodule (a commit): its tree, where the repository holds the
                // submodule's own (a checkout with `submodules: true`, in .git/modules), as
                // on the CI's runner; else left out, as in intake.
                (Some(ObjectType::Commit), _) => {
                    if !self.write_submodule(entry.id(), &path, &shown)? {
                        self.left_out.push(shown);
                    }
                }
                _ => self.left_out.push(shown),
            }
        }
        Ok(())
    }

    /// Writes the tree of submodule `shown`'s commit `id` at `path`, from the submodule's
    /// own repository; false where there is none or it lacks that commit. Its files count
    /// toward the same limits, and its own missing objects and left-out entries are named.
    fn write_submodule(&mut self, id: Oid, path: &Path, shown: &str) -> Result<bool, SandboxError> {
        let Some(sub) = self
            .repo
            .find_submodule(shown)
            .ok()
            .and_then(|s| s.open().ok())
        else {
            return Ok(false);
        };
        let Ok(tree) = sub.find_commit(id).and_then(|c| c.tree()) else {
            return Ok(false);
        };
        let odb = sub.odb().map_err(git_error)?;
        let mut inner = TreeWriter {
            repo: &sub,
            odb: &odb,
            left_out: std::mem::take(&mut self.left_out),
            missing: std::mem::take(&mut self.missing),
            bytes: self.bytes,
            scratch: self.scratch,
            max_bytes: self.max_bytes,
            scratch_limit: self.scratch_limit,
        };
        make_dir(path)?;
        let written = inner.write_entries(&tree, path, &format!("{shown}/"));
        self.left_out = inner.left_out;
        self.missing = inner.missing;
        self.bytes = inner.bytes;
        self.scratch = inner.scratch;
        written.map(|()| true)
    }
}

impl TreeWriter<'_> {
    /// The object read, or `None` (its entry named in `missing`) when the store does not
    /// hold it; any other failure to read the store is the run's error.
    fn present<T>(
        &mut self,
        read: Result<T, git2::Error>,
        shown: &str,
    ) -> Result<Option<T>, SandboxError> {
        match read {
            Ok(object) => Ok(Some(object)),
            Err(e) if e.code() == git2::ErrorCode::NotFound => {
                self.missing.push(shown.to_string());
                Ok(None)
            }
            Err(e) => Err(git_error(e)),
        }
    }
}

/// A symlink's target when it stays inside the tree (`tests/certs/valid/ca ->
/// ../expired/ca`, in psf/requests): relative, its `..` only leading and no more of them
/// than the link's own directory is deep. Then every `..` climbs a real directory (the
/// link's parents are directories this writer made), and each link the rest passes through
/// obeys the same rule, so the target resolves inside the tree however links chain. Any
/// other target (absolute, leaving the tree, `..` after a name, which could climb out of
/// another link's target) is left out, as before.
fn link_inside(prefix: &str, target: &[u8]) -> Option<std::path::PathBuf> {
    if target.is_empty() || target.contains(&0) || target.len() > 4096 {
        return None;
    }
    let path = Path::new(std::ffi::OsStr::from_bytes(target));
    let depth = prefix.matches('/').count();
    let mut climbs = 0usize;
    let mut names = 0usize;
    for c in path.components() {
        match c {
            std::path::Component::ParentDir if names == 0 => climbs += 1,
            std::path::Component::Normal(name) if name.as_bytes() != b".git" => names += 1,
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    (climbs <= depth && names > 0).then(|| path.to_path_buf())
}

fn apply_edit(src: &Path, edit: &Edit) -> Result<(), SandboxError> {
    let rel = safe_relative(&edit.path)?;
    let path = src.join(&rel);
    let missing = || RequestError::PatchFileMissing {
        path: edit.path.clone(),
    };
    // A symlink is never edited through (its target is a file of its own, edited by its path).
    let meta = fs::symlink_metadata(&path).map_err(|_| missing())?;
    if !meta.is_file() {
        return Err(missing().into());
    }
    let bytes = fs::read(&path).map_err(SandboxError::io("read", &path))?;
    let text = String::from_utf8(bytes).map_err(|_| RequestError::OldTextNotFound {
        path: edit.path.clone(),
    })?;
    let count = text.matches(edit.old_text.as_str()).count();
    match count {
        0 => Err(RequestError::OldTextNotFound {
            path: edit.path.clone(),
        }
        .into()),
        1 => {
            let new = text.replacen(edit.old_text.as_str(), &edit.new_text, 1);
            let mode = meta.permissions().mode() & 0o777;
            write_file(&path, new.as_bytes(), mode)
        }
        count => Err(RequestError::OldTextNotUnique {
            path: edit.path.clone(),
            count,
        }
        .into()),
    }
}

/// A path relative to the tree's root that stays inside it: not absolute, no `..`, not
/// into `.git`.
fn safe_relative(path: &str) -> Result<PathBuf, RequestError> {
    let outside = || RequestError::PathOutsideTree {
        path: path.to_string(),
    };
    if path.is_empty() || path.contains('\0') {
        return Err(outside());
    }
    let mut rel = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) if part != ".git" => rel.push(part),
            Component::CurDir => {}
            _ => return Err(outside()),
        }
    }
    if rel.as_os_str().is_empty() {
        return Err(outside());
    }
    Ok(rel)
}

fn git_error(e: git2::Error) -> SandboxError {
    RequestError::Git {
        message: e.message().to_string(),
    }
    .into()
}

fn set_mode(path: &Path, mode: u32) -> Result<(), SandboxError> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(SandboxError::io("set permissions of", path))
}

fn make_dir(path: &Path) -> Result<(), SandboxError> {
    fs::create_dir(path).map_err(SandboxError::io("create", path))?;
    set_mode(path, 0o755)
}

/// Creates the directories from `root` down to `dir`, refusing to pass through anything
/// that is not a directory (an added file never lands through a symlink).
fn make_dirs(root: &Path, dir: &Path) -> Result<(), SandboxError> {
    let Ok(rel) = dir.strip_prefix(root) else {
        return Err(RequestError::PathOutsideTree {
            path: dir.display().to_string(),
        }
        .into());
    };
    let mut current = root.to_path_buf();
    for part in rel.components() {
        current.push(part);
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(RequestError::PathOutsideTree {
                    path: rel.display().to_string(),
                }
                .into());
            }
            Err(_) => make_dir(&current)?,
        }
    }
    Ok(())
}

fn write_file(path: &Path, contents: &[u8], mode: u32) -> Result<(), SandboxError> {
    if let Ok(meta) = fs::symlink_metadata(path)
        && !meta.is_file()
    {
        return Err(RequestError::PathOutsideTree {
            path: path.display().to_string(),
        }
        .into());
    }
    let mut file = fs::File::create(path).map_err(SandboxError::io("create", path))?;
    file.write_all(contents)
        .map_err(SandboxError::io("write", path))?;
    drop(file);
    set_mode(path, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_of_tags_reads_as_a_version() {
        assert_eq!(version_of_description("v8.3.5").as_deref(), Some("8.3.5"));
        assert_eq!(
            version_of_description("v8.3.5-12-gabc1234").as_deref(),
            Some("8.3.5.post12")
        );
        assert_eq!(
            version_of_description("release-1.2-3-g0123456").as_deref(),
            Some("1.2.post3")
        );
        // A pre-release tag takes the post-release after it; a dev release cannot.
        assert_eq!(
            version_of_description("2.0rc1-2-gdeadbee").as_deref(),
            Some("2.0rc1.post2")
        );
        assert_eq!(
            version_of_description("2.0.dev1-2-gdeadbee").as_deref(),
            Some("2.0.dev1")
        );
        assert_eq!(version_of_description("nightly"), None);
        assert_eq!(version_of_description("latest-3-gdeadbee"), None);
    }

    #[test]
    fn relative_paths_stay_inside_the_tree() {
        assert_eq!(
            safe_relative("./a/b.py").ok(),
            Some(PathBuf::from("a/b.py"))
        );
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/../b",
            ".git/config",
            ".",
        ] {
            assert!(
                matches!(
                    safe_relative(bad),
                    Err(RequestError::PathOutsideTree { .. })
                ),
                "{bad:?} must be refused"
            );
        }
    }

    #[test]
    fn the_patch_digest_depends_on_every_part_and_the_order() {
        let a = Edit {
            path: "a".into(),
            old_text: "x".into(),
            new_text: "y".into(),
        };
        let b = Edit {
            path: "ax".into(),
            old_text: String::new(),
            new_text: "y".into(),
        };
        assert_ne!(
            patch_digest(std::slice::from_ref(&a)),
            patch_digest(std::slice::from_ref(&b))
        );
        assert_ne!(
            patch_digest(&[a.clone(), b.clone()]),
            patch_digest(&[b, a.clone()])
        );
        assert_eq!(patch_digest(std::slice::from_ref(&a)), patch_digest(&[a]));
    }

    #[test]
    fn a_link_is_kept_only_when_its_target_stays_inside_the_tree() {
        let inside = |prefix: &str, target: &str| link_inside(prefix, target.as_bytes());
        // psf/requests: tests/certs/valid/ca -> ../expired/ca
        assert_eq!(
            inside("tests/certs/valid/", "../expired/ca"),
            Some(PathBuf::from("../expired/ca"))
        );
        assert!(inside("", "README.md").is_some());
        assert!(inside("a/", "./b/c").is_some());
        for (prefix, bad) in [
            ("", "/etc/passwd"),
            ("", "../outside"),
            ("a/", "../../outside"),
            // `..` after a name could climb out of another link's target
            ("a/b/", "c/../../.."),
            ("a/", "c/.."),
            ("", ".git/config"),
            ("a/", ".."),
            ("", ""),
        ] {
            assert_eq!(
                inside(prefix, bad),
                None,
                "{prefix}{bad:?} must be left out"
            );
        }
    }
}
