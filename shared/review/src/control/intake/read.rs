//! What intake reads of the repository: resolve base and head, read what changed, and read `proven.yaml` from the base.

use std::path::PathBuf;

use proven_change::{BlobRead, Change, Limits, Repo, Revision};
use serde_json::json;

use crate::core::error::ReviewError;
use crate::core::trace::Trace;
use crate::core::wire::FileFacts;

/// Largest `proven.yaml` read.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// Largest file whose first bytes are read to tell prose from a script.
const MAX_FACT_BYTES: u64 = 4 * 1024 * 1024;

pub struct IntakeInput {
    pub repository: PathBuf,
    pub base: String,
    pub head: String,
    /// Compare the head with the merge base of `base` and `head` (the default) or with
    /// `base` as named.
    pub diff: proven_store::DiffMode,
    /// The process's settings; `proven.yaml` from the base is layered under them and may
    /// lower the intake limits, never raise them.
    pub layers: proven_config::Layers,
}

pub struct IntakeOutcome {
    /// The commit the change is read from: the merge base of the named base and the head
    /// (its `spec` still the name asked for), or the named base itself (two-dot).
    pub base: Revision,
    /// The commit the base's name resolved to, when the review compares from elsewhere
    /// (its merge base with the head).
    pub tip: Option<Revision>,
    pub diff: proven_store::DiffMode,
    pub head: Revision,
    pub change: Change,
    pub facts: Vec<FileFacts>,
    /// `proven.yaml` from the base revision, with a name for messages.
    pub config: Option<(String, String)>,
    /// The limits the change was read under (the operator's, or lower from `proven.yaml`).
    pub limits: Limits,
}

/// Runs intake. Blocking (git2): call from a blocking thread.
pub fn run(input: &IntakeInput) -> Result<IntakeOutcome, ReviewError> {
    let repo = Repo::open(&input.repository).map_err(|e| ReviewError::Input(e.to_string()))?;
    let base = repo
        .resolve(&input.base)
        .map_err(|e| ReviewError::Input(e.to_string()))?;
    let head = repo
        .resolve(&input.head)
        .map_err(|e| ReviewError::Input(e.to_string()))?;
    // The settings come from the base as named (the base branch's own `proven.yaml` today,
    // never from a fork point the change's author picked).
    let config = read_config(&repo, &base)?;
    // A wrong `proven.yaml` stops the review before any other work.
    let settings = settings(&input.layers, config.as_ref()).map_err(ReviewError::Config)?;
    let limits = Limits {
        max_blob_bytes: settings.max_blob_bytes,
        max_tree_files: settings.max_tree_files,
        ..Limits::default()
    };
    let (base, tip) = compared_base(&repo, base, &head, input.diff)?;
    let change = repo.diff(&base, &head, limits).map_err(|e| match e {
        proven_change::ChangeError::TreeTooLarge { .. } => ReviewError::Input(format!(
            "{e} (the limit is intake.max_tree_files: PROVEN_MAX_TREE_FILES, which proven.yaml may lower)"
        )),
        other => ReviewError::Input(other.to_string()),
    })?;

    let facts = change
        .files
        .iter()
        .map(|f| file_facts(&repo, &base, &head, f))
        .collect();
    Ok(IntakeOutcome {
        base,
        tip,
        diff: input.diff,
        head,
        change,
        facts,
        config,
        limits,
    })
}

/// The commit the change is read from, and the named base's own commit when that differs.
/// From the merge base, a base branch that moved on after the head's branch left it
/// contributes nothing: only what the head's side did is the change. No merge base (unrelated
/// histories, or a shallow clone cut above it) stops the review by name; it is never guessed.
fn compared_base(
    repo: &Repo,
    base: Revision,
    head: &Revision,
    diff: proven_store::DiffMode,
) -> Result<(Revision, Option<Revision>), ReviewError> {
    if diff == proven_store::DiffMode::TwoDot {
        return Ok((base, None));
    }
    match repo
        .merge_base(&base, head)
        .map_err(|e| ReviewError::Input(e.to_string()))?
    {
        Some(merge_base) if merge_base.commit == base.commit => Ok((base, None)),
        Some(merge_base) => Ok((merge_base, Some(base))),
        None => {
            let why = if repo.is_shallow() {
                "the repository is a shallow clone whose history stops before their common \
                 commit: fetch more history (`git fetch --unshallow`, or actions/checkout's \
                 `fetch-depth: 0`)"
            } else {
                "their histories share no commit"
            };
            Err(ReviewError::Input(format!(
                "no merge base of the base {} ({}) and the head {} ({}): {why}; to compare the \
                 two commits as they are, ask for the two-dot diff (`--diff two-dot`, or \
                 \"diff\": \"two-dot\" in the request)",
                base.spec,
                short(&base.commit),
                head.spec,
                short(&head.commit)
            )))
        }
    }
}

fn short(commit: &str) -> &str {
    &commit[..12.min(commit.len())]
}

/// The review's settings: the process's layers with the base's `proven.yaml` (named by
/// `config`'s origin) under them, resolved.
pub fn settings(
    layers: &proven_config::Layers,
    config: Option<&(String, String)>,
) -> Result<proven_config::Config, proven_config::ConfigError> {
    match config {
        Some((origin, text)) => layers
            .clone()
            .with_yaml(text, origin)
            .and_then(|l| l.resolve()),
        None => layers.resolve(),
    }
}

/// `proven.yaml` from the base revision with a name for messages (None: there is none); a
/// link, an oversized file or one that is not text stops the review by name.
fn read_config(repo: &Repo, base: &Revision) -> Result<Option<(String, String)>, ReviewError> {
    match repo.read_blob(&base.commit, b"proven.yaml", MAX_CONFIG_BYTES) {
        Ok(BlobRead::Content(bytes)) => {
            let origin = format!(
                "proven.yaml (base {})",
                &base.commit[..12.min(base.commit.len())]
            );
            let text = String::from_utf8(bytes).map_err(|_| {
                ReviewError::Config(proven_config::ConfigError {
                    source_name: origin.clone(),
                    key: String::new(),
                    message: "is not UTF-8 text".into(),
                })
            })?;
            Ok(Some((origin, text)))
        }
        Ok(BlobRead::Missing) => Ok(None),
        Ok(BlobRead::LeftOut(reason)) => Err(ReviewError::Config(proven_config::ConfigError {
            source_name: "proven.yaml".into(),
            key: String::new(),
            message: format!(
                "is a {} in the base revision; it is never followed",
                reason.as_str()
            ),
        })),
        Ok(BlobRead::TooLarge { size }) => Err(ReviewError::Config(proven_config::ConfigError {
            source_name: "proven.yaml".into(),
            key: String::new(),
            message: format!("is {size} bytes; the limit is {MAX_CONFIG_BYTES}"),
        })),
        Err(e) => Err(ReviewError::Input(e.to_string())),
    }
}

/// What the later steps need to know about one changed file.
fn file_facts(
    repo: &Repo,
    base: &Revision,
    head: &Revision,
    f: &proven_change::ChangedFile,
) -> FileFacts {
    let starts_with_shebang =
        |commit: &str, path: Option<&proven_change::RepoPath>| -> Option<bool> {
            let Some(path) = path else { return Some(false) };
            match repo.read_blob(commit, path.as_bytes(), MAX_FACT_BYTES) {
                Ok(BlobRead::Content(bytes)) => Some(bytes.starts_with(b"#!")),
                Ok(BlobRead::Missing) => Some(false),
                _ => None,
            }
        };
    let shebang = match (
        starts_with_shebang(&base.commit, f.old_path.as_ref()),
        starts_with_shebang(&head.commit, f.new_path.as_ref()),
    ) {
        (Some(a), Some(b)) => Some(a || b),
        _ => None,
    };
    FileFacts {
        path: f.path().display(),
        old_path: f
            .old_path
            .as_ref()
            .filter(|_| f.new_path.is_some())
            .map(|p| p.display()),
        executable: matches!(f.old_mode, proven_change::Mode::Executable)
            || matches!(f.new_mode, proven_change::Mode::Executable),
        shebang,
        pure_rename: f.status == proven_change::FileStatus::Renamed
            && f.additions == 0
            && f.deletions == 0,
        binary: f.binary,
    }
}

/// Why a changed file left out for its size was not read, naming it and the limit.
pub fn too_large_message(path: &str, size: u64, limits: &Limits) -> String {
    format!(
        "{path}: {size} bytes, over the {}-byte limit on a changed file (intake.max_blob_bytes: \
         PROVEN_MAX_BLOB_BYTES, which proven.yaml may lower): sized from its object header, never read",
        limits.max_blob_bytes
    )
}

/// The intake's trace lines: the revisions, each changed file, each entry left out.
pub fn trace(outcome: &IntakeOutcome, trace: &mut Trace) {
    trace.push(
        "intake",
        json!({
            "base": {"rev": outcome.base.spec, "commit": outcome.base.commit,
                     "diff": outcome.diff.as_str(),
                     "tip": outcome.tip.as_ref().map(|t| &t.commit)},
            "head": {"rev": outcome.head.spec, "commit": outcome.head.commit},
            "files": outcome.change.files.len(),
            "truncated": outcome.change.truncated,
            "config": outcome.config.as_ref().map(|(origin, _)| origin),
        }),
    );
    for f in &outcome.change.files {
        trace.push(
            "file",
            json!({
                "path": f.path().display(),
                "old_path": f.old_path.as_ref().map(|p| p.display()),
                "status": f.status.as_str(),
                "old_mode": f.old_mode.octal(),
                "new_mode": f.new_mode.octal(),
                "binary": f.binary,
                "utf8_path": f.path().as_str().is_some(),
                "additions": f.additions,
                "deletions": f.deletions,
            }),
        );
    }
    for l in &outcome.change.left_out {
        let why = match l.reason {
            proven_change::LeftOutReason::TooLarge { size, .. } => {
                too_large_message(&l.path.display(), size, &outcome.limits)
            }
            _ => "never read as a file: it is not part of the reviewed trees".to_string(),
        };
        trace.push(
            "left_out",
            json!({"path": l.path.display(), "reason": l.reason.as_str(), "why": why}),
        );
    }
}
