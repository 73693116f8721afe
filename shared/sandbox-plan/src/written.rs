//! Files a container wrote, read by the host (DESIGN.md section 6: "the host never follows
//! a link or reads an unbounded file the sandbox wrote").
//!
//! A preparation container writes its output directory (`/deps`), and what it writes is
//! the change's to shape: `report.json` can be a symlink to a host file (whose content
//! would then land in run records) or to `/dev/zero` (read forever), a FIFO (an open that
//! never returns), a directory. So every host read of such a file goes through
//! [`read_written`]: opened with `O_NOFOLLOW` (a symlink is refused by the kernel, never
//! resolved) and `O_NONBLOCK` (a FIFO cannot hold the open), the *opened* file's metadata
//! checked for a regular file (no window between a check of the path and the read), and
//! read through a cap, so memory is bounded by the cap whatever the file claims.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Why a file a container wrote was not read. Each names the file and what was wrong.
#[derive(Debug, thiserror::Error)]
pub enum WrittenFileError {
    /// It is a symbolic link: its target is never opened.
    #[error("{name} is a symlink: never followed")]
    Symlink { name: String },
    /// It is a directory, a FIFO, a socket or a device.
    #[error("{name} is not a regular file")]
    NotRegular { name: String },
    /// It holds more than the reader accepts.
    #[error("{name} is over {cap} bytes")]
    TooLarge { name: String, cap: u64 },
    /// It is not there.
    #[error("{name} is missing")]
    Missing { name: String },
    /// The runner's own disk failed reading it.
    #[error("read {name}: {source}")]
    Io {
        name: String,
        #[source]
        source: std::io::Error,
    },
}

impl WrittenFileError {
    /// Whether reading again may succeed: only the runner's own disk failing. A link, a
    /// file of the wrong kind or size is what the container made, and stays so.
    pub fn is_retryable(&self) -> bool {
        matches!(self, WrittenFileError::Io { .. })
    }
}

/// The file at `path`, which a container wrote, as bytes: a regular file of at most `cap`
/// bytes, never through a symlink.
pub fn read_written(path: &Path, cap: u64) -> Result<Vec<u8>, WrittenFileError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let file = open_no_follow(path, &name)?;
    let meta = file.metadata().map_err(|source| WrittenFileError::Io {
        name: name.clone(),
        source,
    })?;
    if !meta.file_type().is_file() {
        return Err(WrittenFileError::NotRegular { name });
    }
    // The cap bounds the read whatever the metadata said (a file can grow after the check).
    let mut bytes = Vec::with_capacity(meta.len().min(cap) as usize);
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| WrittenFileError::Io {
            name: name.clone(),
            source,
        })?;
    if bytes.len() as u64 > cap {
        return Err(WrittenFileError::TooLarge { name, cap });
    }
    Ok(bytes)
}

/// Whether `path` is a regular file itself (not a link to one): how a marker a container
/// could have planted is checked.
pub fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

fn open_no_follow(path: &Path, name: &str) -> Result<File, WrittenFileError> {
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => Ok(file),
        // O_NOFOLLOW on a symlink fails with ELOOP.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Err(WrittenFileError::Symlink {
            name: name.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(WrittenFileError::Missing {
            name: name.to_string(),
        }),
        // A socket cannot be opened (ENXIO): it is not a regular file either.
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Err(WrittenFileError::NotRegular {
            name: name.to_string(),
        }),
        Err(source) => Err(WrittenFileError::Io {
            name: name.to_string(),
            source,
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    const CAP: u64 = 1 << 20;

    #[test]
    fn a_report_linked_to_a_host_file_is_refused_and_its_content_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("host-secret");
        std::fs::write(&secret, "SECRET-MARKER-31 host credentials").unwrap();
        let report = dir.path().join("report.json");
        symlink(&secret, &report).unwrap();
        let err = read_written(&report, CAP).unwrap_err();
        assert!(matches!(err, WrittenFileError::Symlink { .. }), "{err:?}");
        let text = err.to_string();
        assert_eq!(text, "report.json is a symlink: never followed");
        assert!(!text.contains("SECRET-MARKER-31"));
        assert!(!err.is_retryable());
    }

    #[test]
    fn a_report_linked_to_dev_zero_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.json");
        symlink("/dev/zero", &report).unwrap();
        let err = read_written(&report, CAP).unwrap_err();
        assert_eq!(err.to_string(), "report.json is a symlink: never followed");
    }

    #[test]
    fn a_device_reached_without_a_link_is_not_a_regular_file() {
        // What O_NOFOLLOW leaves to the metadata check: the opened file's own kind.
        let err = read_written(Path::new("/dev/zero"), CAP).unwrap_err();
        assert_eq!(err.to_string(), "zero is not a regular file");
    }

    #[test]
    fn a_fifo_or_a_directory_is_not_a_regular_file_and_never_blocks_the_open() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("report.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = read_written(&fifo, CAP).unwrap_err();
        assert_eq!(err.to_string(), "report.json is not a regular file");
        let sub = dir.path().join("notes");
        std::fs::create_dir(&sub).unwrap();
        let err = read_written(&sub, CAP).unwrap_err();
        assert_eq!(err.to_string(), "notes is not a regular file");
    }

    #[test]
    fn a_file_over_the_cap_is_refused_and_one_within_it_read() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report.json");
        std::fs::write(&report, vec![b'x'; 101]).unwrap();
        let err = read_written(&report, 100).unwrap_err();
        assert_eq!(err.to_string(), "report.json is over 100 bytes");
        assert_eq!(read_written(&report, 101).unwrap().len(), 101);
        let missing = read_written(&dir.path().join("absent.json"), CAP).unwrap_err();
        assert_eq!(missing.to_string(), "absent.json is missing");
    }

    #[test]
    fn only_a_regular_file_itself_is_a_marker() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let link = dir.path().join(".complete");
        symlink(&file, &link).unwrap();
        assert!(is_regular_file(&file));
        assert!(!is_regular_file(&link));
        assert!(!is_regular_file(dir.path()));
    }
}
