//! What a model's patch may be (the Fixer's and the autofix attempt's): edits of the
//! change's own files, never of a test or of a file that decides how tests run, each old
//! text in its file exactly once, and nothing but edits. Refused by name otherwise. The one
//! exception: a dependency file a kept finding names may have its versions (and what
//! follows them: hashes, addresses) edited, and nothing else. Every dependency file an
//! edit touches (requirements files included, which decide no test run but what is
//! installed) is read on both sides and may only raise the version of a package a kept
//! finding names ([`dependencies`]).

pub mod dependencies;

use proven_lockfile::Format;
use proven_report::PatchEdit;
use serde::{Deserialize, Serialize};

/// A model's answer that is a patch.
#[derive(Debug, Serialize, Deserialize)]
pub struct PatchAnswer {
    pub edits: Vec<PatchEdit>,
    #[serde(default)]
    pub explanation: String,
    /// Anything else the answer carries (a command, a script): never honoured, and the
    /// reason the patch is refused by name.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// What a patch may touch.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The change's files: nothing else is edited.
    pub changed: &'a [String],
    /// The proofs' own test files.
    pub tests: &'a [String],
    /// Dependency files a kept finding names: their versions may be raised.
    pub dependency_files: &'a [String],
    pub max_edits: usize,
}

/// Edits one Fixer answer may hold.
pub const MAX_EDITS: usize = 20;

/// Files that decide how tests run or what a package is: a patch that edits one could make
/// a test "pass" by not running it, so it is refused like a test file (names separated by
/// white space).
const RUNNER_FILES: &str = "pytest.ini setup.cfg tox.ini pyproject.toml setup.py sitecustomize.py \
    usercustomize.py package.json package-lock.json .npmrc jest.config.js Cargo.toml \
    Cargo.lock build.rs go.mod go.sum Makefile";

fn is_runner_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    RUNNER_FILES.split_whitespace().any(|r| r == name)
        || name.ends_with(".pth")
        || path.starts_with(".cargo/")
        || path.contains("/.cargo/")
        || path.starts_with(".github/")
}

/// Occurrences of `needle` in `text`, overlapping ones included ("aba" is twice in "ababa").
fn occurrences(text: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    let mut count = 0;
    let mut from = 0;
    while let Some(at) = text[from..].find(needle) {
        count += 1;
        let start = from + at;
        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
        if from >= text.len() {
            break;
        }
    }
    count
}

/// Why a patch is refused, by name, before any file is read: its shape and its paths.
pub fn refusal(answer: &PatchAnswer, scope: Scope<'_>) -> Option<String> {
    if !answer.extra.is_empty() {
        let keys: Vec<&str> = answer.extra.keys().map(String::as_str).collect();
        return Some(format!(
            "the answer carries {}: a fix is edits only, never a command",
            keys.join(", ")
        ));
    }
    if answer.edits.is_empty() {
        return Some("the patch has no edits".into());
    }
    if answer.edits.len() > scope.max_edits {
        return Some(format!("the patch has more than {} edits", scope.max_edits));
    }
    for e in &answer.edits {
        if scope.tests.iter().any(|t| t == &e.path)
            || proven_sandbox::language::is_test_path(&e.path)
        {
            return Some(format!(
                "the patch edits the test file {:?}: a fix that changes the proof proves nothing",
                e.path
            ));
        }
        if is_runner_file(&e.path) {
            if !scope.dependency_files.iter().any(|d| d == &e.path) {
                return Some(format!(
                    "the patch edits {:?}, which decides how tests run: a fix may not change that",
                    e.path
                ));
            }
            // A dependency file's versions are judged once its texts are read.
            if Format::detect(&e.path).is_none()
                && let Err(why) = versions_only(&e.old_text, &e.new_text)
            {
                return Some(format!(
                    "the patch edits {:?} beyond its versions ({why}): only a version a finding \
                     names may change there",
                    e.path
                ));
            }
        }
        if !scope.changed.iter().any(|c| c == &e.path) {
            return Some(format!(
                "the patch edits {:?}, which is not a file of the change",
                e.path
            ));
        }
        if e.old_text.is_empty() {
            return Some(format!("an edit of {:?} has no old text", e.path));
        }
    }
    None
}

/// A character of a version, a hash or an address (a run of them is one token).
fn in_token(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._+-/=~^@".contains(c)
}

/// The text as alternating runs: tokens and what separates them.
fn runs(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut kind = None;
    for (i, c) in text.char_indices() {
        let k = in_token(c);
        if kind.is_some_and(|was| was != k) {
            out.push(&text[start..i]);
            start = i;
        }
        kind = Some(k);
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Whether `new` differs from `old` only in tokens that hold a digit on both sides (a
/// version, a checksum, an address naming a version): the keys, the names, the quoting
/// and every script stay as they were.
pub fn versions_only(old: &str, new: &str) -> Result<(), String> {
    let (a, b) = (runs(old), runs(new));
    if a.len() != b.len() {
        return Err("it adds or removes words".into());
    }
    for (x, y) in a.iter().zip(&b) {
        if x == y {
            continue;
        }
        let token = |t: &str| t.chars().all(in_token) && t.chars().any(|c| c.is_ascii_digit());
        if !(token(x) && token(y)) {
            return Err(format!("{x:?} becomes {y:?}"));
        }
    }
    Ok(())
}

/// Why a patch is refused once its files are read: each old text must be in its file
/// exactly once (`files`: each edited file's text at the change), and a dependency file
/// may only have the version of a package in `named` (the packages the kept findings
/// name) raised.
pub fn text_refusal(
    answer: &PatchAnswer,
    files: &[(String, Option<String>)],
    named: &[String],
) -> Option<String> {
    occurrence_refusal(answer, files).or_else(|| dependency_refusal(answer, files, named))
}

/// Each dependency file the patch edits, patched, against the rule of [`dependencies`];
/// then each of its edits must change versions only (what the readers cannot see: a
/// comment, a script).
fn dependency_refusal(
    answer: &PatchAnswer,
    files: &[(String, Option<String>)],
    named: &[String],
) -> Option<String> {
    for (path, text) in files {
        let Some(before) = text.as_deref() else {
            continue;
        };
        let edits: Vec<&PatchEdit> = answer.edits.iter().filter(|e| &e.path == path).collect();
        if edits.is_empty() || Format::detect(path).is_none() {
            continue;
        }
        let after = edits.iter().fold(before.to_string(), |t, e| {
            t.replacen(&e.old_text, &e.new_text, 1)
        });
        if let Some(why) = dependencies::change_refusal(path, before, &after, named) {
            return Some(why);
        }
        for e in edits {
            if let Err(why) = versions_only(&e.old_text, &e.new_text) {
                return Some(format!(
                    "the patch edits {path:?} beyond its versions ({why}): only a version a \
                     finding names may change there"
                ));
            }
        }
    }
    None
}

fn occurrence_refusal(answer: &PatchAnswer, files: &[(String, Option<String>)]) -> Option<String> {
    for e in &answer.edits {
        let text = files
            .iter()
            .find(|(p, _)| p == &e.path)
            .and_then(|(_, t)| t.as_deref());
        let count = text.map_or(0, |t| occurrences(t, &e.old_text));
        if count != 1 {
            return Some(format!(
                "the old text of an edit of {:?} is in the file {count} times, not exactly once",
                e.path
            ));
        }
    }
    None
}

/// Each edit with where it lands in the file at the change (what a pull-request suggestion
/// shows; `files`: each edited file's text at the change). Line spans are Proven's to
/// compute, never a model's to claim.
pub fn located(edits: Vec<PatchEdit>, files: &[(String, Option<String>)]) -> Vec<PatchEdit> {
    edits
        .into_iter()
        .map(|mut e| {
            e.lines = files
                .iter()
                .find(|(p, _)| p == &e.path)
                .and_then(|(_, t)| t.as_deref())
                .and_then(|t| proven_report::LineSpan::of(t, &e.old_text, &e.new_text));
            e
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proven_report::PatchEdit;
    use serde_json::json;

    use super::*;

    fn answer(edits: &[(&str, &str)], command: bool) -> PatchAnswer {
        let mut extra = serde_json::Map::new();
        if command {
            extra.insert("run".into(), json!("rm -rf /"));
        }
        PatchAnswer {
            edits: edits
                .iter()
                .map(|(p, old)| PatchEdit {
                    path: p.to_string(),
                    old_text: old.to_string(),
                    new_text: "x".into(),
                    lines: None,
                })
                .collect(),
            explanation: String::new(),
            extra,
        }
    }

    #[test]
    fn patches_are_refused_by_name() {
        let changed: Vec<String> = ["calc.py", "tests/test_add.py", "pytest.ini", "lib/util.py"]
            .map(String::from)
            .to_vec();
        let files = vec![
            (
                "calc.py".to_string(),
                Some("a - b\nb - a\na - b\nababa\n".to_string()),
            ),
            ("tests/test_add.py".to_string(), Some("x".to_string())),
        ];
        let tests = ["tests/test_add.py".to_string()];
        let scope = Scope {
            changed: &changed,
            tests: &tests,
            dependency_files: &[],
            max_edits: MAX_EDITS,
        };
        let refused = |a: &PatchAnswer| {
            refusal(a, scope)
                .or_else(|| text_refusal(a, &files, &[]))
                .unwrap_or_default()
        };
        let cases = [
            (
                answer(&[("calc.py", "b - a")], true),
                "carries run: a fix is edits only",
            ),
            (answer(&[], false), "no edits"),
            (
                answer(&[("tests/test_add.py", "x")], false),
                "edits the test file",
            ),
            (
                answer(&[("pytest.ini", "x")], false),
                "decides how tests run",
            ),
            (answer(&[("setup.py", "x")], false), "decides how tests run"),
            (
                answer(&[("lib/other.py", "x")], false),
                "not a file of the change",
            ),
            (
                answer(&[("./calc.py", "b - a")], false),
                "not a file of the change",
            ),
            (
                answer(&[("calc.py", "a - b")], false),
                "2 times, not exactly once",
            ),
            (
                answer(&[("calc.py", "aba")], false),
                "2 times, not exactly once",
            ),
            (answer(&[("calc.py", "a * b")], false), "0 times"),
            (answer(&[("calc.py", "")], false), "no old text"),
        ];
        for (a, why) in cases {
            let r = refused(&a);
            assert!(r.contains(why), "{why}: {r:?}");
        }
        assert_eq!(refused(&answer(&[("calc.py", "b - a")], false)), "");
    }

    #[test]
    fn a_dependency_file_a_finding_names_may_change_its_versions_only() {
        let changed: Vec<String> = ["package.json", "package-lock.json"]
            .map(String::from)
            .to_vec();
        let deps = ["package-lock.json".to_string()];
        let scope = Scope {
            changed: &changed,
            tests: &[],
            dependency_files: &deps,
            max_edits: MAX_EDITS,
        };
        let edit = |path: &str, old: &str, new: &str| PatchAnswer {
            edits: vec![PatchEdit {
                path: path.into(),
                old_text: old.into(),
                new_text: new.into(),
                lines: None,
            }],
            explanation: String::new(),
            extra: serde_json::Map::new(),
        };
        let lock_old = "\"node_modules/ms\": {\n  \"version\": \"2.1.2\",\n  \"resolved\": \"https://registry.npmjs.org/ms/-/ms-2.1.2.tgz\",\n  \"integrity\": \"sha512-sGkPx+VjMtmA6MX27oA4FBFELFCZZ4S4XqeGOXCv68tT+jb3vk/RyaKWP0PTKyWtmLSM0b+adUTEvbs1PEaH2w==\"\n}";
        let lock_new = "\"node_modules/ms\": {\n  \"version\": \"2.1.3\",\n  \"resolved\": \"https://registry.npmjs.org/ms/-/ms-2.1.3.tgz\",\n  \"integrity\": \"sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA==\"\n}";
        let lock = format!(
            "{{\n\"lockfileVersion\": 3,\n\"scripts\": {{\"test\": \"jest\"}},\n\"packages\": {{\n\"\": {{\"name\": \"app\"}},\n{lock_old}\n}}\n}}\n"
        );
        let files = vec![
            ("package-lock.json".to_string(), Some(lock)),
            ("package.json".to_string(), Some("{}".to_string())),
        ];
        let named = ["ms".to_string()];
        let why = |a: PatchAnswer| {
            refusal(&a, scope)
                .or_else(|| text_refusal(&a, &files, &named))
                .unwrap_or_default()
        };
        assert_eq!(why(edit("package-lock.json", lock_old, lock_new)), "");
        assert!(
            why(edit(
                "package-lock.json",
                "\"test\": \"jest\"",
                "\"test\": \"true\""
            ))
            .contains("beyond its versions"),
            "a word without a digit is not a version"
        );
        assert!(
            why(edit(
                "package-lock.json",
                "\"version\": \"2.1.2\"",
                "\"version\": \"2.1.3\", \"x\": 1"
            ))
            .contains("adds or removes words")
        );
        assert!(
            why(edit(
                "package.json",
                "\"ms\": \"2.1.2\"",
                "\"ms\": \"2.1.3\""
            ))
            .contains("decides how tests run"),
            "only the files a kept finding names"
        );
    }
}
