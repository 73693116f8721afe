//! Prepared layers as immutable, content-addressed artifacts on the runner's disk.
//!
//! A layer is a directory `SCOPE/NAME` under `cache_dir/deps` (its scope: one tenant and
//! one repository). Beside it, files only the runner writes (no container ever mounts
//! them):
//! - `NAME.digest`: the SHA-256 of the layer's contents (every path, kind, mode, link
//!   target and file content, in order) and its size on disk, written when the layer is
//!   published. Every use checks the layer against it: a layer altered on disk fails the
//!   run loudly by name ([`SandboxError::CacheAltered`]) and is removed, so the next run
//!   prepares it anew. A whole hash per use would cost seconds on a compiled Rust target,
//!   so a process remembers the files' status (inode, size, change time — which no write
//!   can set back) of a layer it hashed, and hashes again only when one of them moved.
//! - `NAME.used`: its modification time is the layer's last use (least recently used
//!   layers go first when the cache is over its size cap).
//! - `NAME.lock`: held shared by every run that uses the layer; eviction takes it
//!   exclusively without waiting, so a layer a run has mounted is never removed under it.
//!
//! Why not a crate: content-addressed stores on crates.io (cacache and the like) hold
//! blobs, not directory trees Docker bind-mounts in place, and none evicts under a lock a
//! running container holds.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

use crate::SandboxError;

/// Counter, label `result`: hit, miss.
pub const CACHE_LOOKUPS_TOTAL: &str = "proven_sandbox_cache_lookups_total";
/// Counter: layers removed to keep the cache under its cap.
pub const CACHE_EVICTIONS_TOTAL: &str = "proven_sandbox_cache_evictions_total";
/// Counter: layers found altered on disk (and removed).
pub const CACHE_ALTERED_TOTAL: &str = "proven_sandbox_cache_altered_total";
/// Gauge: bytes the cache's layers take on disk.
pub const CACHE_BYTES: &str = "proven_sandbox_cache_bytes";

const DIGEST_SUFFIX: &str = ".digest";
const USED_SUFFIX: &str = ".used";
const LOCK_SUFFIX: &str = ".lock";

/// What a layer's `.digest` file says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sealed {
    sha256: String,
    bytes: u64,
}

fn side(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    dir.with_file_name(name)
}

/// A layer's contents, hashed: every entry under `dir` in path order, with its kind, its
/// permission bits, a link's target and a file's bytes. Also the bytes it takes on disk.
fn hash_tree(dir: &Path) -> std::io::Result<Sealed> {
    let mut hasher = Sha256::new();
    let mut bytes = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    for (rel, meta) in walk(dir)? {
        bytes += meta.blocks() * 512;
        let kind = if meta.file_type().is_symlink() {
            b'l'
        } else if meta.is_dir() {
            b'd'
        } else if meta.is_file() {
            b'f'
        } else {
            b'o'
        };
        hasher.update([kind]);
        hasher.update((rel.len() as u64).to_le_bytes());
        hasher.update(rel.as_bytes());
        hasher.update((meta.permissions().mode() & 0o7777).to_le_bytes());
        match kind {
            b'l' => {
                let target = fs::read_link(dir.join(&rel))?;
                let target = target.as_os_str().as_encoded_bytes();
                hasher.update((target.len() as u64).to_le_bytes());
                hasher.update(target);
            }
            b'f' => {
                hasher.update(meta.len().to_le_bytes());
                let mut file = File::open(dir.join(&rel))?;
                loop {
                    let n = file.read(&mut buf)?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buf[..n]);
                }
            }
            _ => {}
        }
    }
    Ok(Sealed {
        sha256: hex::encode(hasher.finalize()),
        bytes,
    })
}

/// Every entry under `dir` (links not followed), sorted by relative path.
fn walk(dir: &Path) -> std::io::Result<Vec<(String, fs::Metadata)>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in fs::read_dir(dir.join(&rel))? {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            let meta = fs::symlink_metadata(dir.join(&path))?;
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.push((path.to_string_lossy().into_owned(), meta));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The files' status (inode, size, change time, mode): cheap to read, and any write to a
/// file or its metadata moves its change time.
fn status_of(dir: &Path) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    for (rel, meta) in walk(dir)? {
        hasher.update(rel.as_bytes());
        for n in [
            meta.ino(),
            meta.len(),
            meta.ctime() as u64,
            meta.ctime_nsec() as u64,
            meta.mode() as u64,
        ] {
            hasher.update(n.to_le_bytes());
        }
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Layers this process hashed, by path: their digest and status then.
fn verified() -> &'static Mutex<HashMap<PathBuf, (String, String)>> {
    static VERIFIED: OnceLock<Mutex<HashMap<PathBuf, (String, String)>>> = OnceLock::new();
    VERIFIED.get_or_init(Default::default)
}

fn read_sealed(dir: &Path) -> Option<Sealed> {
    let text = fs::read_to_string(side(dir, DIGEST_SUFFIX)).ok()?;
    let mut parts = text.split_whitespace();
    let sha256 = parts.next()?.to_string();
    let bytes = parts.next()?.parse().ok()?;
    Some(Sealed { sha256, bytes })
}

/// A layer's contents hashed, before it takes its name (see [`write_seal`]).
#[derive(Debug, Clone)]
pub(crate) struct Hashed(Sealed);

pub(crate) fn hash(dir: &Path) -> std::io::Result<Hashed> {
    hash_tree(dir).map(Hashed)
}

/// Seals a layer in place (hashes it now).
/// Removes a directory the container's user may have made unwritable to its owner.
pub(crate) fn remove_tree(path: &Path) {
    if fs::remove_dir_all(path).is_ok() {
        return;
    }
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        if let Ok(meta) = fs::symlink_metadata(&p)
            && meta.is_dir()
        {
            let _ = fs::set_permissions(&p, fs::Permissions::from_mode(0o755));
            for entry in fs::read_dir(&p).into_iter().flatten().flatten() {
                stack.push(entry.path());
            }
        }
    }
    let _ = fs::remove_dir_all(path);
}

#[cfg(test)]
pub(crate) fn seal(dir: &Path) -> Result<u64, SandboxError> {
    let hashed = hash(dir).map_err(SandboxError::io("hash the prepared layer", dir))?;
    let bytes = hashed.0.bytes;
    write_seal(dir, &hashed)?;
    Ok(bytes)
}

/// Seals a layer just published under its name with the digest taken before: writes it
/// beside the layer.
pub(crate) fn write_seal(dir: &Path, hashed: &Hashed) -> Result<(), SandboxError> {
    let sealed = hashed.0.clone();
    let path = side(dir, DIGEST_SUFFIX);
    let tmp = side(dir, ".digest-tmp");
    fs::write(&tmp, format!("{} {}\n", sealed.sha256, sealed.bytes))
        .map_err(SandboxError::io("write", &tmp))?;
    fs::rename(&tmp, &path).map_err(SandboxError::io("write", &path))?;
    if let Ok(status) = status_of(dir) {
        lock(verified()).insert(dir.to_path_buf(), (sealed.sha256, status));
    }
    Ok(())
}

/// A layer that took its name but was never sealed, long enough ago that its runner must
/// have died in between (sealing follows the rename at once).
pub(crate) fn abandoned(dir: &Path) -> bool {
    if is_sealed(dir) {
        return false;
    }
    fs::symlink_metadata(dir)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > std::time::Duration::from_secs(600))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether a published layer is sealed (a layer published before seals existed, or whose
/// seal was lost, is not: it is prepared again).
pub(crate) fn is_sealed(dir: &Path) -> bool {
    read_sealed(dir).is_some()
}

/// Checks a layer against its seal before a run uses it. Altered: the layer is removed
/// and the run fails by name, loudly (a log line at error level and a counter).
pub(crate) fn verify(dir: &Path) -> Result<(), SandboxError> {
    let Some(sealed) = read_sealed(dir) else {
        return Err(altered(dir, "its digest file is missing".into()));
    };
    let status = status_of(dir).map_err(SandboxError::io("inspect the prepared layer", dir))?;
    if let Some((sha, seen)) = lock(verified()).get(dir)
        && *sha == sealed.sha256
        && *seen == status
    {
        return Ok(());
    }
    let now = hash_tree(dir).map_err(SandboxError::io("hash the prepared layer", dir))?;
    if now.sha256 != sealed.sha256 {
        return Err(altered(
            dir,
            format!(
                "its contents hash to {}, sealed as {}",
                now.sha256, sealed.sha256
            ),
        ));
    }
    lock(verified()).insert(dir.to_path_buf(), (sealed.sha256, status));
    Ok(())
}

fn altered(dir: &Path, why: String) -> SandboxError {
    metrics::counter!(CACHE_ALTERED_TOTAL).increment(1);
    tracing::error!(layer = %dir.display(), %why, "a prepared layer was altered on disk: removed");
    lock(verified()).remove(dir);
    remove_layer(dir);
    SandboxError::CacheAltered {
        layer: dir.to_path_buf(),
        message: why,
    }
}

/// A run's hold on a layer: while it lives, eviction leaves the layer alone.
#[derive(Debug)]
pub(crate) struct InUse {
    _file: File,
}

/// Marks a layer used now and holds it for the run.
pub(crate) fn hold(dir: &Path) -> Result<InUse, SandboxError> {
    let path = side(dir, LOCK_SUFFIX);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(SandboxError::io("open", &path))?;
    file.lock_shared()
        .map_err(SandboxError::io("lock", &path))?;
    let used = side(dir, USED_SUFFIX);
    let touched = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&used)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
    touched.map_err(SandboxError::io("mark as used", &used))?;
    Ok(InUse { _file: file })
}

/// Removes a layer and what the runner keeps beside it.
pub(crate) fn remove_layer(dir: &Path) {
    // Renamed first: a reader never sees half a layer under its name.
    let doomed = side(dir, &format!(".removing-{}", uuid::Uuid::now_v7().simple()));
    if fs::rename(dir, &doomed).is_ok() {
        remove_tree(&doomed);
    }
    for suffix in [DIGEST_SUFFIX, USED_SUFFIX] {
        let _ = fs::remove_file(side(dir, suffix));
    }
}

/// One layer as eviction sees it.
#[derive(Debug)]
struct Entry {
    dir: PathBuf,
    bytes: u64,
    used: std::time::SystemTime,
}

fn entries(root: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    for scope in fs::read_dir(root).into_iter().flatten().flatten() {
        for item in fs::read_dir(scope.path()).into_iter().flatten().flatten() {
            let dir = item.path();
            let name = item.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name.contains('.') || !dir.is_dir() {
                continue;
            }
            let Some(sealed) = read_sealed(&dir) else {
                continue;
            };
            let used = fs::metadata(side(&dir, USED_SUFFIX))
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            out.push(Entry {
                dir,
                bytes: sealed.bytes,
                used,
            });
        }
    }
    out
}

/// Keeps the cache under `cap` bytes: the least recently used layers go first, never one
/// a run holds. Returns the layers removed.
pub(crate) fn evict(root: &Path, cap: u64) -> Vec<PathBuf> {
    let mut all = entries(root);
    let mut total: u64 = all.iter().map(|e| e.bytes).sum();
    all.sort_by_key(|e| e.used);
    let mut removed = Vec::new();
    for entry in all {
        if total <= cap {
            break;
        }
        let lock_path = side(&entry.dir, LOCK_SUFFIX);
        let Ok(file) = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
        else {
            continue;
        };
        if file.try_lock().is_err() {
            continue;
        }
        remove_layer(&entry.dir);
        drop(file);
        let _ = fs::remove_file(&lock_path);
        total = total.saturating_sub(entry.bytes);
        metrics::counter!(CACHE_EVICTIONS_TOTAL).increment(1);
        tracing::info!(layer = %entry.dir.display(), bytes = entry.bytes, "evicted a prepared layer (least recently used)");
        removed.push(entry.dir);
    }
    metrics::gauge!(CACHE_BYTES).set(total as f64);
    removed
}

/// Makes a layer readable by every run's user and writable by no one but the runner (runs
/// mount it read-only besides; the seal catches whatever the runner's user may change).
pub(crate) fn freeze(root: &Path) -> Result<(), SandboxError> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = fs::symlink_metadata(&path).map_err(SandboxError::io("inspect", &path))?;
        if meta.file_type().is_symlink() {
            continue;
        }
        let mode = meta.permissions().mode();
        let wanted = if meta.is_dir() || mode & 0o100 != 0 {
            (mode | 0o555) & !0o022
        } else {
            (mode | 0o444) & !0o022
        };
        if meta.is_dir() {
            for entry in fs::read_dir(&path).map_err(SandboxError::io("list", &path))? {
                stack.push(entry.map_err(SandboxError::io("list", &path))?.path());
            }
        }
        if wanted != mode {
            fs::set_permissions(&path, fs::Permissions::from_mode(wanted))
                .map_err(SandboxError::io("set permissions of", &path))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(root: &Path, scope: &str, name: &str, bytes: usize) -> PathBuf {
        let dir = root.join(scope).join(name);
        fs::create_dir_all(dir.join("lib")).expect("mkdir");
        fs::write(dir.join("lib/mod.py"), vec![b'x'; bytes]).expect("write");
        std::os::unix::fs::symlink("lib/mod.py", dir.join("link")).expect("symlink");
        freeze(&dir).expect("freeze");
        seal(&dir).expect("seal");
        dir
    }

    #[test]
    fn a_layer_altered_on_disk_fails_loudly_and_is_removed() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = layer(root.path(), "t-1", "python-aaaa", 1000);
        verify(&dir).expect("intact");
        // Someone with the runner's rights writes into it.
        let file = dir.join("lib/mod.py");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).expect("chmod");
        fs::write(&file, b"import os; os._exit(0)").expect("write");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o444)).expect("chmod");
        let err = verify(&dir).expect_err("altered");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "the prepared layer {} was altered on disk: its contents hash to",
                dir.display()
            )),
            "{text}"
        );
        assert!(err.is_retryable(), "the next attempt prepares it anew");
        assert!(!dir.exists(), "the altered layer is gone");
        assert!(!is_sealed(&dir));
    }

    #[test]
    fn a_new_link_or_a_changed_mode_is_an_alteration_too() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = layer(root.path(), "t-1", "python-bbbb", 10);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
        std::os::unix::fs::symlink("/etc/passwd", dir.join("planted")).expect("symlink");
        assert!(verify(&dir).is_err());
        let dir = layer(root.path(), "t-1", "python-cccc", 10);
        fs::set_permissions(dir.join("lib/mod.py"), fs::Permissions::from_mode(0o555))
            .expect("chmod");
        assert!(verify(&dir).is_err(), "made executable");
    }

    #[test]
    fn eviction_holds_the_cap_least_recently_used_first_and_spares_a_held_layer() {
        let root = tempfile::tempdir().expect("tempdir");
        let mut dirs = Vec::new();
        for (i, scope) in ["t-1", "t-2", "t-1", "t-3"].iter().enumerate() {
            let dir = layer(root.path(), scope, &format!("node-{i}"), 40_000);
            let used = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(side(&dir, USED_SUFFIX))
                .expect("used");
            used.set_modified(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64),
            )
            .expect("mtime");
            dirs.push(dir);
        }
        let each = read_sealed(&dirs[0]).expect("sealed").bytes;
        // The oldest is held by a run: it stays, the next oldest goes in its place.
        let held = hold(&dirs[0]).expect("hold");
        // hold() marked it used now: make it the oldest again.
        File::options()
            .write(true)
            .open(side(&dirs[0], USED_SUFFIX))
            .expect("used")
            .set_modified(std::time::UNIX_EPOCH)
            .expect("mtime");
        let removed = evict(root.path(), each * 2);
        assert_eq!(removed, vec![dirs[1].clone(), dirs[2].clone()]);
        assert!(dirs[0].exists() && dirs[3].exists());
        let left: u64 = entries(root.path()).iter().map(|e| e.bytes).sum();
        assert!(left <= each * 2, "{left} over the cap");
        drop(held);
        let removed = evict(root.path(), each);
        assert_eq!(removed, vec![dirs[0].clone()], "released, and the oldest");
    }
}
