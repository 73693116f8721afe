//! What a Fixer's answer may be: edits of the change's own files, never of a test or of a
//! file that decides how tests run, each old text in its file exactly once. Refused by
//! name otherwise.

use super::FixerAnswer;
use crate::wire::ProveJob;

/// Edits one answer may hold.
const MAX_EDITS: usize = 20;

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
pub(super) fn refusal(answer: &FixerAnswer, job: &ProveJob, changed: &[String]) -> Option<String> {
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
    if answer.edits.len() > MAX_EDITS {
        return Some(format!("the patch has more than {MAX_EDITS} edits"));
    }
    for e in &answer.edits {
        if e.path == job.test.path || proven_sandbox::language::is_test_path(&e.path) {
            return Some(format!(
                "the patch edits the test file {:?}: a fix that changes the proof proves nothing",
                e.path
            ));
        }
        if is_runner_file(&e.path) {
            return Some(format!(
                "the patch edits {:?}, which decides how tests run: a fix may not change that",
                e.path
            ));
        }
        if !changed.iter().any(|c| c == &e.path) {
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

/// Why a patch is refused once its files are read: each old text must be in its file
/// exactly once (`files`: each edited file's text at the change).
pub(super) fn text_refusal(
    answer: &FixerAnswer,
    files: &[(String, Option<String>)],
) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use proven_report::PatchEdit;
    use serde_json::json;

    use super::*;

    fn job() -> ProveJob {
        crate::wire::test_job()
    }

    fn answer(edits: &[(&str, &str)], command: bool) -> FixerAnswer {
        let mut extra = serde_json::Map::new();
        if command {
            extra.insert("run".into(), json!("rm -rf /"));
        }
        FixerAnswer {
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
        let refused = |a: &FixerAnswer| {
            refusal(a, &job(), &changed)
                .or_else(|| text_refusal(a, &files))
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
}
