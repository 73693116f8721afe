//! A run's tree as data: the patch's edits, the files added, and the record a reader needs
//! to rebuild the tree (materialising it from git objects is the runner's).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One edit of a patch: in `path`, the text `old_text` (present exactly once) becomes
/// `new_text`. A patch is data, never a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    pub path: String,
    pub old_text: String,
    pub new_text: String,
}

/// A file added to the tree before the run (the Prover's test).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddFile {
    /// Where, relative to the tree's root.
    pub path: String,
    pub contents: Vec<u8>,
}

/// What a reader needs to rebuild the tree of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeRecord {
    pub repository: String,
    /// The revision as requested.
    pub revision: String,
    /// The commit it resolved to.
    pub commit: String,
    /// SHA-256 of the patch's edits (see [`patch_digest`]), when there was a patch.
    pub patch_sha256: Option<String>,
    pub added_files: Vec<FileDigest>,
    /// Tree entries not materialised: submodules, and symlinks whose target leaves the tree.
    pub left_out: Vec<String>,
    /// Files and directories whose objects are not in the object store (a partial clone,
    /// a mirror without its largest files): left out by name and the run goes on, since
    /// its tests may never read them (a test that does fails on its own, and this names why).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The commit of the `.git` the run's tree was given, as a CI's checkout has one (a
    /// build's `git grep`, a test's `git ls-files`): the tree as the run has it, patch and
    /// added files included, in one commit. None where none was made (a tree over half its
    /// scratch space, which the repository's copy would crowd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkout: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

/// SHA-256 over the edits in order (path, old text, new text, each length-prefixed), so
/// a reader can check that a record's patch is the one they hold.
pub fn patch_digest(patch: &[Edit]) -> String {
    let mut hasher = Sha256::new();
    for edit in patch {
        for part in [&edit.path, &edit.old_text, &edit.new_text] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
    }
    hex::encode(hasher.finalize())
}
