//! Read access to one tree of files: a git revision materialised by the caller, or a folder.
//!
//! Readers never touch the filesystem directly: siblings (a manifest beside its lock file),
//! includes (`-r other.txt`) and parents (a pom's parent) all go through the same [`Tree`],
//! so a review reads the base and the head revision with the same code, and a path taken from
//! the (untrusted) change can never leave the tree.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Read access to one tree of files. Paths are relative and `/`-separated.
pub trait Tree {
    /// The file's bytes; `Ok(None)` when there is no such file.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, io::Error>;

    /// The file's size in bytes, if the tree can tell without reading it; `Ok(None)` when there
    /// is no such file. Readers call this first so an oversized file is refused before it is
    /// read. The default reads the file; trees that can do better (a directory, a git object
    /// database) override it.
    fn size(&self, path: &str) -> Result<Option<u64>, io::Error> {
        Ok(self.read(path)?.map(|b| b.len() as u64))
    }
}

/// A [`Tree`] over a folder on disk. Refuses absolute paths, `..` components and symlinks that
/// lead outside the folder.
#[derive(Debug, Clone)]
pub struct FsTree {
    root: PathBuf,
}

impl FsTree {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FsTree { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The on-disk path for a tree path, or `Ok(None)` when it does not exist. Errors name the
    /// refused path.
    fn resolve(&self, path: &str) -> Result<Option<PathBuf>, io::Error> {
        check_relative(path)?;
        let joined = self.root.join(path);
        let real = match joined.canonicalize() {
            Ok(real) => real,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        // Canonical paths resolve symlinks: a link inside the tree pointing outside it is
        // refused here rather than followed.
        let root = self.root.canonicalize()?;
        if !real.starts_with(&root) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{path}: leads outside the tree (symlink)"),
            ));
        }
        if !real.is_file() {
            return Ok(None);
        }
        Ok(Some(real))
    }
}

impl Tree for FsTree {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, io::Error> {
        match self.resolve(path)? {
            Some(real) => match std::fs::read(real) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            },
            None => Ok(None),
        }
    }

    fn size(&self, path: &str) -> Result<Option<u64>, io::Error> {
        match self.resolve(path)? {
            Some(real) => Ok(Some(std::fs::metadata(real)?.len())),
            None => Ok(None),
        }
    }
}

/// Refuses paths that are empty, absolute, or that climb with `..`.
fn check_relative(path: &str) -> Result<(), io::Error> {
    let refuse = |why: &str| {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{path:?}: {why}"),
        ))
    };
    if path.is_empty() {
        return refuse("empty path");
    }
    if path.contains('\0') {
        return refuse("NUL in path");
    }
    if path.starts_with('/') || path.contains('\\') {
        return refuse("not a relative '/'-separated path");
    }
    for c in Path::new(path).components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return refuse("`..` is not allowed"),
            Component::RootDir | Component::Prefix(_) => return refuse("absolute path"),
        }
    }
    Ok(())
}

/// The folder part of a tree path: `a/b/c.txt` → `a/b`, `c.txt` → ``.
pub(crate) fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// The file name part of a tree path.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// Joins a relative reference onto a folder, folding `.` and `..`. `None` when the result
/// would climb above the tree's root or the reference is absolute.
pub(crate) fn join(dir: &str, rel: &str) -> Option<String> {
    if rel.starts_with('/') || rel.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

/// A folder and each of its ancestors up to the root (``), nearest first.
pub(crate) fn ancestors(dir: &str) -> Vec<&str> {
    let mut out = vec![dir];
    let mut d = dir;
    while !d.is_empty() {
        d = dir_of(d);
        out.push(d);
    }
    out
}

/// `dir/name`, or `name` at the root.
pub(crate) fn child(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_helpers() {
        assert_eq!(dir_of("a/b/c.txt"), "a/b");
        assert_eq!(dir_of("c.txt"), "");
        assert_eq!(file_name("a/b/c.txt"), "c.txt");
        assert_eq!(join("a/b", "../c.txt").as_deref(), Some("a/c.txt"));
        assert_eq!(join("a", "./x/y.txt").as_deref(), Some("a/x/y.txt"));
        assert_eq!(join("", "../x"), None);
        assert_eq!(join("a", "/etc/passwd"), None);
        assert_eq!(ancestors("a/b"), vec!["a/b", "a", ""]);
        assert_eq!(ancestors(""), vec![""]);
        assert_eq!(child("", "x"), "x");
        assert_eq!(child("a", "x"), "a/x");
    }

    #[test]
    fn fs_tree_refuses_escapes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ok.txt"), b"hi").unwrap();
        let tree = FsTree::new(dir.path());
        assert_eq!(tree.read("ok.txt").unwrap(), Some(b"hi".to_vec()));
        assert_eq!(tree.size("ok.txt").unwrap(), Some(2));
        assert_eq!(tree.read("missing.txt").unwrap(), None);
        assert!(tree.read("../etc/passwd").is_err());
        assert!(tree.read("/etc/passwd").is_err());
        assert!(tree.read("").is_err());
        // A directory is not a file.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert_eq!(tree.read("sub").unwrap(), None);
    }

    #[cfg(unix)]
    #[test]
    fn fs_tree_refuses_symlinks_leading_out() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), b"s").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        let tree = FsTree::new(dir.path());
        let err = tree.read("link").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
    }
}
