//! Real git repositories for tests, built through a working directory so modes, symlinks
//! and odd file names are recorded exactly as git records them from disk.

use std::path::{Path, PathBuf};

use git2::{IndexAddOption, Repository, Signature};

pub struct TestRepo {
    dir: tempfile::TempDir,
    repo: Repository,
    /// Blobs staged without a working-directory file (see [`TestRepo::stage_zero_blob`]).
    staged: std::cell::RefCell<Vec<(String, git2::Oid)>>,
}

impl TestRepo {
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().expect("temporary directory");
        TestRepo::init_in(dir)
    }

    /// A repository in `dir` (e.g. a directory under a root the service allows).
    pub fn init_in(dir: tempfile::TempDir) -> TestRepo {
        let repo = Repository::init(dir.path()).expect("git init");
        TestRepo {
            dir,
            repo,
            staged: Default::default(),
        }
    }

    /// Stages a blob of `size` zero bytes at `rel` for every following commit, with no file
    /// in the working directory: it is streamed into the object database, so neither memory
    /// nor disk holds it whole (zeros compress about a thousandfold).
    pub fn stage_zero_blob(&self, rel: &str, size: u64) -> git2::Oid {
        use std::io::Write;
        let odb = self.repo.odb().expect("odb");
        let length = usize::try_from(size).expect("size fits in memory addresses");
        let mut writer = odb
            .writer(length, git2::ObjectType::Blob)
            .expect("odb writer");
        let chunk = vec![0u8; 1 << 20];
        let mut left = size;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            writer.write_all(&chunk[..n]).expect("write blob");
            left -= n as u64;
        }
        let oid = writer.finalize().expect("finalise blob");
        self.staged.borrow_mut().push((rel.to_string(), oid));
        oid
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    fn abs(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes a file (creating directories).
    pub fn write(&self, rel: impl AsRef<Path>, content: impl AsRef<[u8]>) -> &Self {
        let p = self.abs(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create directories");
        }
        std::fs::write(&p, content).expect("write file");
        self
    }

    pub fn remove(&self, rel: impl AsRef<Path>) -> &Self {
        std::fs::remove_file(self.abs(rel)).expect("remove file");
        self
    }

    pub fn rename(&self, from: impl AsRef<Path>, to: impl AsRef<Path>) -> &Self {
        let to = self.abs(to);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).expect("create directories");
        }
        std::fs::rename(self.abs(from), to).expect("rename file");
        self
    }

    #[cfg(unix)]
    pub fn symlink(&self, rel: impl AsRef<Path>, target: impl AsRef<Path>) -> &Self {
        let p = self.abs(rel);
        let _ = std::fs::remove_file(&p);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create the link's directory");
        }
        std::os::unix::fs::symlink(target, p).expect("create symlink");
        self
    }

    #[cfg(unix)]
    pub fn set_executable(&self, rel: impl AsRef<Path>, executable: bool) -> &Self {
        use std::os::unix::fs::PermissionsExt;
        let p = self.abs(rel);
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
        self
    }

    /// Stages everything (additions, changes, removals) and commits; returns the SHA.
    /// Commits everything, dated at the start of today (UTC): a fixed time within a day, and
    /// a young base for the review (a review of an old base resolves unpinned requirements
    /// as of then; [`TestRepo::commit_at`] makes one).
    pub fn commit(&self, message: &str) -> String {
        let today = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        self.commit_at(message, today - today % 86_400)
    }

    /// Commits everything with author and committer time `seconds` (since the epoch).
    pub fn commit_at(&self, message: &str, seconds: i64) -> String {
        let mut index = self.repo.index().expect("index");
        index
            .add_all(["*"], IndexAddOption::DEFAULT, None)
            .expect("git add");
        index.update_all(["*"], None).expect("git add -u");
        for (path, id) in self.staged.borrow().iter() {
            index
                .add(&git2::IndexEntry {
                    ctime: git2::IndexTime::new(0, 0),
                    mtime: git2::IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: 0o100644,
                    uid: 0,
                    gid: 0,
                    file_size: 0,
                    id: *id,
                    flags: (path.len() & 0xfff) as u16,
                    flags_extended: 0,
                    path: path.as_bytes().to_vec(),
                })
                .expect("stage blob");
        }
        index.write().expect("write index");
        let tree_id = index.write_tree().expect("write tree");
        let tree = self.repo.find_tree(tree_id).expect("tree");
        let sig = Signature::new(
            "Proven Test",
            "test@proven.invalid",
            &git2::Time::new(seconds, 0),
        )
        .expect("signature");
        let parents: Vec<git2::Commit<'_>> = match self.repo.head() {
            Ok(head) => vec![head.peel_to_commit().expect("head commit")],
            Err(_) => Vec::new(),
        };
        let parent_refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        self.repo
            .commit(Some("HEAD"), &sig, &sig, message, &tree, &parent_refs)
            .expect("commit")
            .to_string()
    }

    pub fn tag(&self, name: &str) -> &Self {
        let head = self
            .repo
            .head()
            .and_then(|h| h.peel(git2::ObjectType::Commit))
            .expect("head");
        self.repo.tag_lightweight(name, &head, false).expect("tag");
        self
    }

    /// Makes `name` (an existing branch) the checked-out branch, its tree the working copy:
    /// the next [`TestRepo::commit`] goes on it.
    pub fn checkout(&self, name: &str) -> &Self {
        let refname = format!("refs/heads/{name}");
        let commit = self
            .repo
            .find_reference(&refname)
            .and_then(|r| r.peel_to_commit())
            .expect("branch");
        // Remove what the branch does not hold, then write what it does.
        let mut opts = git2::build::CheckoutBuilder::new();
        opts.force().remove_untracked(true);
        self.repo
            .checkout_tree(commit.as_object(), Some(&mut opts))
            .expect("checkout");
        self.repo.set_head(&refname).expect("set head");
        self
    }

    pub fn branch(&self, name: &str) -> &Self {
        let head = self
            .repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .expect("head");
        self.repo.branch(name, &head, true).expect("branch");
        self
    }
}

impl Default for TestRepo {
    fn default() -> Self {
        TestRepo::new()
    }
}
