//! Real git repositories for tests, built through a working directory so modes, symlinks
//! and odd file names are recorded exactly as git records them from disk.

use std::path::{Path, PathBuf};

use git2::{IndexAddOption, Repository, Signature};

pub struct TestRepo {
    dir: tempfile::TempDir,
    repo: Repository,
}

impl TestRepo {
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().expect("temporary directory");
        let repo = Repository::init(dir.path()).expect("git init");
        TestRepo { dir, repo }
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
    pub fn commit(&self, message: &str) -> String {
        let mut index = self.repo.index().expect("index");
        index
            .add_all(["*"], IndexAddOption::DEFAULT, None)
            .expect("git add");
        index.update_all(["*"], None).expect("git add -u");
        index.write().expect("write index");
        let tree_id = index.write_tree().expect("write tree");
        let tree = self.repo.find_tree(tree_id).expect("tree");
        let sig = Signature::new(
            "Proven Test",
            "test@proven.invalid",
            &git2::Time::new(1_700_000_000, 0),
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
