//! Dependencies, prepared before the no-network run and cached by the lock file's hash.
//!
//! Preparation runs the host's package manager (with network) on a directory holding only
//! the tree's lock files and manifests — never the code under review — with install
//! scripts off and without building anything from source:
//! - Python: `pip install --only-binary=:all: --target` (wheels only: nothing is built)
//!   from the root `requirements*.txt`; mounted at /deps/python, on PYTHONPATH.
//! - Rust: `cargo vendor --locked` from `Cargo.lock` (manifests copied, every `.rs` file
//!   an empty stub so targets resolve); mounted at /deps/vendor, with a cargo config that
//!   replaces crates.io by it and turns the network off.
//! - Node: `npm ci --ignore-scripts` from `package-lock.json`; mounted at
//!   /deps/node_modules, linked into the tree by `proven-entry`.
//! - Go: `go mod download` from `go.mod` and `go.sum` (downloading a module runs none of
//!   its code); the module cache is mounted at /deps/gomodcache (GOMODCACHE), and the run
//!   has GOPROXY=off. A module without `go.sum` has no dependencies to prepare.
//!
//! A cache entry is a directory `LANG-KEY` under `cache_dir/deps`, made complete in a
//! staging directory and renamed into place, so a reader never sees half of one and two
//! runners preparing the same key both end with the same entry.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use sha2::{Digest, Sha256};
use tokio::process::Command;

use crate::record::DependencyRecord;
use crate::{Language, RequestError, SandboxConfig, SandboxError};

/// Where a prepared entry is mounted in the container.
pub const MOUNT: &str = "/deps";
const COMPLETE: &str = ".complete";
/// Prefix of the directories a preparation works in before its result is renamed.
pub(crate) const STAGING_PREFIX: &str = ".staging-";

/// A ready cache entry for one run.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub dir: PathBuf,
    /// Variables the run needs to find the dependencies.
    pub env: Vec<String>,
    pub record: DependencyRecord,
}

/// The lock files of a tree that determine its dependencies, with their contents: at
/// the tree's root only (a repository's own layout beyond that is not guessed).
pub(crate) fn lock_files(
    language: Language,
    src: &Path,
) -> Result<Vec<(String, Vec<u8>)>, SandboxError> {
    let mut names: Vec<String> = match language {
        Language::Python => {
            let mut names = Vec::new();
            let entries = fs::read_dir(src).map_err(SandboxError::io("list", src))?;
            for entry in entries {
                let entry = entry.map_err(SandboxError::io("list", src))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with("requirements") && name.ends_with(".txt") {
                    names.push(name);
                }
            }
            names
        }
        Language::Rust => vec!["Cargo.lock".into()],
        Language::Node => vec!["package-lock.json".into()],
        // go.mod names the requirements and go.sum pins them; without go.sum nothing
        // outside the standard library can build, so there is nothing to prepare.
        Language::Go if src.join("go.sum").is_file() => vec!["go.mod".into(), "go.sum".into()],
        Language::Go => Vec::new(),
    };
    names.sort();
    let mut files = Vec::new();
    for name in names {
        let path = src.join(&name);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => {
                let bytes = fs::read(&path).map_err(SandboxError::io("read", &path))?;
                files.push((name, bytes));
            }
            _ => {}
        }
    }
    Ok(files)
}

/// The cache key: the language, the image (its toolchain decides what fits), and every
/// lock file's name and contents.
pub(crate) fn cache_key(language: Language, image: &str, locks: &[(String, Vec<u8>)]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"proven-sandbox dependencies v1\0");
    for part in [language.as_str().as_bytes(), image.as_bytes()] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    for (name, bytes) in locks {
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    hex::encode(&hasher.finalize()[..16])
}

/// Makes sure the dependencies of the tree at `src` are prepared; `None` when the tree
/// has no lock file (nothing to prepare).
pub(crate) async fn prepare(
    config: &SandboxConfig,
    owner_tag: &str,
    language: Language,
    src: &Path,
) -> Result<Option<Prepared>, SandboxError> {
    let locks = lock_files(language, src)?;
    if locks.is_empty() {
        return Ok(None);
    }
    let key = cache_key(language, &config.image(language), &locks);
    let root = config.cache_dir.join("deps");
    let dir = root.join(format!("{}-{key}", language.as_str()));
    let env = match language {
        Language::Python => vec![format!("PYTHONPATH={MOUNT}/python")],
        Language::Go => vec![format!("GOMODCACHE={MOUNT}/gomodcache")],
        Language::Rust | Language::Node => Vec::new(),
    };
    let record = |prepared_now| DependencyRecord {
        lock_files: locks.iter().map(|(n, _)| n.clone()).collect(),
        key: key.clone(),
        prepared_now,
    };
    if dir.join(COMPLETE).exists() {
        metrics::counter!(crate::metrics::DEPENDENCIES_TOTAL, "result" => "hit").increment(1);
        return Ok(Some(Prepared {
            dir,
            env,
            record: record(false),
        }));
    }

    // Named after the runner, so a sweep removes it if the runner dies mid-preparation.
    let staging = root.join(format!(
        "{STAGING_PREFIX}{owner_tag}-{}",
        uuid::Uuid::now_v7().simple()
    ));
    let result = prepare_into(config, language, src, &locks, &staging).await;
    let outcome = match result {
        Ok(()) => publish(&staging.join("out"), &dir),
        Err(e) => Err(e),
    };
    let _ = fs::remove_dir_all(&staging);
    match outcome {
        Ok(()) => {
            metrics::counter!(crate::metrics::DEPENDENCIES_TOTAL, "result" => "prepared")
                .increment(1);
            Ok(Some(Prepared {
                dir,
                env,
                record: record(true),
            }))
        }
        Err(e) => {
            metrics::counter!(crate::metrics::DEPENDENCIES_TOTAL, "result" => "failed")
                .increment(1);
            Err(e)
        }
    }
}

/// Renames a complete staging output into place; losing the race to another runner is
/// fine (the winner's entry has the same key, so the same contents).
fn publish(out: &Path, dir: &Path) -> Result<(), SandboxError> {
    make_readable(out)?;
    fs::write(out.join(COMPLETE), b"").map_err(SandboxError::io("write", out.join(COMPLETE)))?;
    match fs::rename(out, dir) {
        Ok(()) => Ok(()),
        Err(_) if dir.join(COMPLETE).exists() => Ok(()),
        Err(e) => Err(SandboxError::Io {
            action: "move a prepared dependency directory to",
            path: dir.to_path_buf(),
            source: e,
        }),
    }
}

async fn prepare_into(
    config: &SandboxConfig,
    language: Language,
    src: &Path,
    locks: &[(String, Vec<u8>)],
    staging: &Path,
) -> Result<(), SandboxError> {
    let input = staging.join("input");
    let out = staging.join("out");
    for dir in [&input, &out] {
        fs::create_dir_all(dir).map_err(SandboxError::io("create", dir))?;
    }
    let lock_file = locks
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let failed = |message: String| SandboxError::Dependencies {
        language,
        lock_file: lock_file.clone(),
        message,
    };
    for (name, bytes) in locks {
        fs::write(input.join(name), bytes).map_err(SandboxError::io("write", input.join(name)))?;
    }
    match language {
        Language::Python => {
            let mut command = Command::new(&config.tools.python);
            command.args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
                "--no-compile",
                "--root-user-action=ignore",
                "--only-binary=:all:",
                "--target",
            ]);
            command.arg(out.join("python"));
            for (name, bytes) in locks {
                check_requirements(name, bytes)?;
                command.arg("-r").arg(input.join(name));
            }
            run_tool(command, &input, config, &failed).await?;
            // The run's root filesystem is read-only: compiled ahead, or compiled every run.
            let mut compile = Command::new(&config.tools.python);
            compile
                .args(["-m", "compileall", "-q", "-s"])
                .arg(&out)
                .args(["-p", MOUNT])
                .arg(out.join("python"));
            run_tool(compile, &input, config, &failed).await?;
        }
        Language::Rust => {
            stub_cargo_tree(src, &input)?;
            let mut command = Command::new(&config.tools.cargo);
            command
                // Not --quiet: that also drops the source-replacement config from stdout.
                .args(["vendor", "--locked", "--manifest-path"])
                .arg(input.join("Cargo.toml"))
                .arg(out.join("vendor"))
                .env_remove("CARGO_TARGET_DIR");
            let stdout = run_tool(command, &input, config, &failed).await?;
            let vendored = out.join("vendor");
            let config_toml = String::from_utf8_lossy(&stdout)
                .replace(&vendored.display().to_string(), &format!("{MOUNT}/vendor"));
            if !config_toml.contains("[source.crates-io]") {
                return Err(failed(format!(
                    "cargo vendor printed no source replacement: {config_toml:?}"
                )));
            }
            let config_toml = format!("{config_toml}\n[net]\noffline = true\n");
            let path = out.join("cargo-config.toml");
            fs::write(&path, config_toml).map_err(SandboxError::io("write", &path))?;
            fs::create_dir_all(&vendored).map_err(SandboxError::io("create", &vendored))?;
        }
        Language::Node => {
            let manifest = src.join("package.json");
            let bytes = fs::read(&manifest)
                .map_err(|_| failed("package-lock.json without package.json".into()))?;
            fs::write(input.join("package.json"), bytes)
                .map_err(SandboxError::io("write", input.join("package.json")))?;
            let mut command = Command::new(&config.tools.npm);
            command
                .args([
                    "ci",
                    "--ignore-scripts",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--cache",
                ])
                .arg(config.cache_dir.join("npm-cache"));
            run_tool(command, &input, config, &failed).await?;
            let modules = input.join("node_modules");
            let target = out.join("node_modules");
            if modules.exists() {
                fs::rename(&modules, &target).map_err(SandboxError::io("move", &modules))?;
            } else {
                fs::create_dir_all(&target).map_err(SandboxError::io("create", &target))?;
            }
        }
        Language::Go => {
            let cache = out.join("gomodcache");
            let mut command = Command::new(&config.tools.go);
            command
                .args(["mod", "download", "-x"])
                .env("GOMODCACHE", &cache)
                // Writable module directories, so a failed preparation's staging directory
                // can be removed (Go makes its cache read-only; the run mounts it read-only).
                .env("GOFLAGS", "-mod=mod -modcacherw")
                .env("GOTOOLCHAIN", "local")
                .env("GOPATH", staging.join("gopath"))
                .env("GOCACHE", staging.join("gocache"))
                .envs(config.tools.go_env.iter().map(|(k, v)| (k, v)));
            run_tool(command, &input, config, &failed).await?;
            fs::create_dir_all(&cache).map_err(SandboxError::io("create", &cache))?;
        }
    }
    Ok(())
}

/// Runs a preparation tool in `cwd`; its stdout on success, its stderr's end in the error.
async fn run_tool(
    mut command: Command,
    cwd: &Path,
    config: &SandboxConfig,
    failed: &impl Fn(String) -> SandboxError,
) -> Result<Vec<u8>, SandboxError> {
    command
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let shown = format!("{:?}", command.as_std().get_program());
    let child = command
        .spawn()
        .map_err(|e| failed(format!("cannot start {shown}: {e} (is it installed?)")))?;
    let output = tokio::time::timeout(config.prepare_timeout, child.wait_with_output())
        .await
        .map_err(|_| {
            failed(format!(
                "{shown} did not finish within {:?}",
                config.prepare_timeout
            ))
        })?
        .map_err(|e| failed(format!("{shown}: {e}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: String = stderr
            .lines()
            .rev()
            .take(12)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(failed(format!("{shown} exited {}: {tail}", output.status)));
    }
    Ok(output.stdout)
}

/// Refuses requirement lines that would make pip build or read something other than a
/// wheel from an index: editable installs, local paths, URLs, nested files.
fn check_requirements(name: &str, bytes: &[u8]) -> Result<(), SandboxError> {
    let text = String::from_utf8_lossy(bytes);
    for (i, raw) in text.lines().enumerate() {
        let line = match raw.find(" #") {
            Some(at) => &raw[..at],
            None if raw.trim_start().starts_with('#') => "",
            None => raw,
        }
        .trim();
        if line.is_empty() || line == "\\" {
            continue;
        }
        let refuse = |reason: &str| {
            Err(RequestError::UnsupportedDependency {
                file: name.to_string(),
                line: i + 1,
                reason: reason.to_string(),
            }
            .into())
        };
        let option = line.split([' ', '=']).next().unwrap_or_default();
        match option {
            "-e" | "--editable" => {
                return refuse("an editable install builds the code under review");
            }
            "-r" | "--requirement" | "-c" | "--constraint" => {
                return refuse("nested requirement files are not prepared");
            }
            "-f" | "--find-links" => return refuse("local or linked wheels are not prepared"),
            _ => {}
        }
        if line.starts_with('-') {
            // Index and hash options (--index-url, --hash, ...) choose where wheels come from.
            continue;
        }
        if line.starts_with('.') || line.starts_with('/') || line.starts_with('~') {
            return refuse("a local path would build the code under review");
        }
        if line.contains("://") || line.contains(" @ ") || line.starts_with("git+") {
            return refuse("direct URL and VCS requirements are not prepared");
        }
    }
    Ok(())
}

/// Copies the cargo manifests and lock file of `src` into `input`, and makes every `.rs`
/// file there an empty stub: enough for cargo to resolve the workspace, nothing to build.
fn stub_cargo_tree(src: &Path, input: &Path) -> Result<(), SandboxError> {
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = src.join(&rel);
        let entries = fs::read_dir(&dir).map_err(SandboxError::io("list", &dir))?;
        for entry in entries {
            let entry = entry.map_err(SandboxError::io("list", &dir))?;
            let name = entry.file_name();
            let rel_path = rel.join(&name);
            let kind = entry
                .file_type()
                .map_err(SandboxError::io("inspect", entry.path()))?;
            if kind.is_dir() {
                if name != "target" && name != ".git" {
                    stack.push(rel_path);
                }
                continue;
            }
            if !kind.is_file() {
                continue;
            }
            let target = input.join(&rel_path);
            let name = name.to_string_lossy();
            let contents =
                if name == "Cargo.toml" || (rel.as_os_str().is_empty() && name == "Cargo.lock") {
                    fs::read(entry.path()).map_err(SandboxError::io("read", entry.path()))?
                } else if name.ends_with(".rs") {
                    Vec::new()
                } else {
                    continue;
                };
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(SandboxError::io("create", parent))?;
            }
            fs::write(&target, contents).map_err(SandboxError::io("write", &target))?;
        }
    }
    Ok(())
}

/// Makes a prepared tree readable by the container's user (another uid than the runner's).
fn make_readable(root: &Path) -> Result<(), SandboxError> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = fs::symlink_metadata(&path).map_err(SandboxError::io("inspect", &path))?;
        if meta.file_type().is_symlink() {
            continue;
        }
        let mode = meta.permissions().mode();
        let wanted = if meta.is_dir() || mode & 0o100 != 0 {
            mode | 0o555
        } else {
            mode | 0o444
        };
        if wanted != mode {
            fs::set_permissions(&path, fs::Permissions::from_mode(wanted))
                .map_err(SandboxError::io("set permissions of", &path))?;
        }
        if meta.is_dir() {
            for entry in fs::read_dir(&path).map_err(SandboxError::io("list", &path))? {
                stack.push(entry.map_err(SandboxError::io("list", &path))?.path());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_that_would_build_or_fetch_from_elsewhere_are_refused() {
        let ok = b"# pinned\nsix==1.16.0\nattrs>=23 ; python_version >= '3.8'  # comment\n--index-url https://pypi.org/simple\nrequests==2.31.0 \\\n    --hash=sha256:abc\n";
        assert!(check_requirements("requirements.txt", ok).is_ok());
        for (bad, line) in [
            (b"six\n-e .\n".as_slice(), 2),
            (b"./local\n", 1),
            (b"pkg @ https://example.com/pkg.whl\n", 1),
            (b"git+https://example.com/repo.git\n", 1),
            (b"-r other.txt\n", 1),
            (b"--find-links /wheels\n", 1),
        ] {
            match check_requirements("requirements.txt", bad) {
                Err(SandboxError::Request(RequestError::UnsupportedDependency {
                    line: l, ..
                })) => {
                    assert_eq!(l, line, "{}", String::from_utf8_lossy(bad))
                }
                other => panic!("{} gave {other:?}", String::from_utf8_lossy(bad)),
            }
        }
    }

    #[test]
    fn the_cache_key_follows_the_lock_files_and_the_image() {
        let locks = vec![("Cargo.lock".to_string(), b"a".to_vec())];
        let other = vec![("Cargo.lock".to_string(), b"b".to_vec())];
        let key = cache_key(Language::Rust, "img", &locks);
        assert_eq!(key, cache_key(Language::Rust, "img", &locks));
        assert_ne!(key, cache_key(Language::Rust, "img", &other));
        assert_ne!(key, cache_key(Language::Rust, "img2", &locks));
        assert_ne!(key, cache_key(Language::Node, "img", &locks));
    }
}
