//! Reading BugsInPy (soarsmu/BugsInPy) and building one case from it: a small git
//! repository whose base is the fixed commit's tree and whose change reverts the fix (the
//! buggy commit's version of every non-test file the fix touches; the test files stay the
//! fixed version, so the bug's own test exists on both sides).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A checkout or a bare git directory of BugsInPy.
pub struct Dataset {
    path: PathBuf,
    /// Some(rev) when `path` is a git directory read with `git show`.
    git: bool,
}

impl Dataset {
    pub fn open(path: &Path) -> Result<Dataset, String> {
        if path.join("projects").is_dir() {
            return Ok(Dataset {
                path: path.to_path_buf(),
                git: false,
            });
        }
        let out = git(path, &["cat-file", "-e", "HEAD:projects"]);
        if out.is_ok() {
            return Ok(Dataset {
                path: path.to_path_buf(),
                git: true,
            });
        }
        Err(format!(
            "{}: neither a BugsInPy checkout (no projects/) nor its git directory",
            path.display()
        ))
    }

    /// The dataset's commit (git) or "working copy".
    pub fn revision(&self) -> String {
        let dir = if self.git {
            self.path.clone()
        } else {
            self.path.join(".git")
        };
        git(&dir, &["rev-parse", "HEAD"])
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown (not a git checkout)".into())
    }

    pub fn read(&self, rel: &str) -> Option<String> {
        if self.git {
            git(&self.path, &["show", &format!("HEAD:{rel}")]).ok()
        } else {
            std::fs::read_to_string(self.path.join(rel)).ok()
        }
    }

    fn list(&self, rel: &str) -> Vec<String> {
        if self.git {
            git(
                &self.path,
                &["ls-tree", "--name-only", &format!("HEAD:{rel}")],
            )
            .map(|s| s.lines().map(str::to_string).collect())
            .unwrap_or_default()
        } else {
            std::fs::read_dir(self.path.join(rel))
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default()
        }
    }

    pub fn projects(&self) -> Vec<String> {
        let mut p = self.list("projects");
        p.sort();
        p
    }

    /// The project's bug numbers, ascending.
    pub fn bugs(&self, project: &str) -> Vec<u32> {
        let mut n: Vec<u32> = self
            .list(&format!("projects/{project}/bugs"))
            .iter()
            .filter_map(|s| s.parse().ok())
            .collect();
        n.sort_unstable();
        n
    }

    pub fn bug(&self, project: &str, number: u32) -> Result<Bug, String> {
        let dir = format!("projects/{project}/bugs/{number}");
        let info = self
            .read(&format!("{dir}/bug.info"))
            .ok_or_else(|| format!("{dir}/bug.info is missing"))?;
        let info = key_values(&info);
        let project_info = key_values(
            &self
                .read(&format!("projects/{project}/project.info"))
                .unwrap_or_default(),
        );
        let field = |k: &str| {
            info.get(k)
                .cloned()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{dir}/bug.info has no {k}"))
        };
        let run_test = self
            .read(&format!("{dir}/run_test.sh"))
            .ok_or_else(|| format!("{dir}/run_test.sh is missing"))?;
        let patch = self
            .read(&format!("{dir}/bug_patch.txt"))
            .ok_or_else(|| format!("{dir}/bug_patch.txt is missing"))?;
        let selections = selections(&run_test);
        if selections.is_empty() {
            return Err(format!(
                "{dir}/run_test.sh selects no test this harness reads"
            ));
        }
        Ok(Bug {
            project: project.to_string(),
            number,
            github_url: project_info.get("github_url").cloned().unwrap_or_default(),
            python_version: info.get("python_version").cloned().unwrap_or_default(),
            buggy: field("buggy_commit_id")?,
            fixed: field("fixed_commit_id")?,
            test_files: field("test_file")?
                .split(';')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            selections,
            patch,
        })
    }
}

/// One bug of the dataset.
#[derive(Debug, Clone)]
pub struct Bug {
    pub project: String,
    pub number: u32,
    pub github_url: String,
    pub python_version: String,
    pub buggy: String,
    pub fixed: String,
    /// bug.info's test_file: the test modules and the data files they read.
    pub test_files: Vec<String>,
    /// The tests run_test.sh runs: (file, pytest name within the file).
    pub selections: Vec<(String, String)>,
    /// bug_patch.txt: the fix, buggy → fixed.
    pub patch: String,
}

impl Bug {
    pub fn id(&self) -> String {
        format!("{}-{}", self.project, self.number)
    }

    /// The file holding the bug's tests (the first selection's) and their names in it.
    pub fn test_file(&self) -> (&str, Vec<String>) {
        let file = self.selections[0].0.as_str();
        let names = self
            .selections
            .iter()
            .filter(|(f, _)| f == file)
            .map(|(_, n)| n.clone())
            .collect();
        (file, names)
    }
}

fn key_values(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        .collect()
}

/// The tests a run_test.sh runs, as (file, pytest node name within it): `pytest
/// path::Class::test`, `tox path::name` (tox passes it to pytest), `python -m unittest
/// pkg.module.Class.test` (a module path: pkg/module.py).
pub fn selections(script: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in script.split([';', '\n']) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| {
            matches!(*w, "pytest" | "py.test" | "tox" | "unittest")
                || w.ends_with("/pytest")
                || w.ends_with("/tox")
        }) else {
            continue;
        };
        let unittest = words[at] == "unittest";
        for w in &words[at + 1..] {
            if w.starts_with('-') {
                continue;
            }
            if unittest {
                if let Some(sel) = unittest_selection(w) {
                    out.push(sel);
                }
            } else if let Some((file, name)) = w.split_once("::") {
                out.push((file.to_string(), name.to_string()));
            }
        }
    }
    out
}

/// `tornado.test.web_test.StaticFileTest.test_x` → (tornado/test/web_test.py,
/// StaticFileTest::test_x): the module is the dotted prefix up to the first part that
/// starts with a capital letter (a class) or with `test_` after a `*_test`/`test_*` module.
fn unittest_selection(word: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = word.split('.').collect();
    let class_at = parts
        .iter()
        .position(|p| p.starts_with(|c: char| c.is_ascii_uppercase()))?;
    if class_at == 0 {
        return None;
    }
    let file = format!("{}.py", parts[..class_at].join("/"));
    Some((file, parts[class_at..].join("::")))
}

/// The files a unified diff touches, as (path before, path after).
pub fn patch_files(patch: &str) -> Vec<String> {
    let mut files = Vec::new();
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("diff --git a/")
            && let Some((a, b)) = rest.split_once(" b/")
        {
            for p in [a, b] {
                if !files.iter().any(|f| f == p) {
                    files.push(p.to_string());
                }
            }
        }
    }
    files
}

/// Whether a path is a test file or test data (under a test directory, or named like a
/// test module): the change never reverts those.
pub fn is_test_path(path: &str, test_files: &[String]) -> bool {
    if test_files.iter().any(|t| t == path) {
        return true;
    }
    let parts: Vec<&str> = path.split('/').collect();
    let (dirs, name) = parts.split_at(parts.len().saturating_sub(1));
    let name = name.first().copied().unwrap_or_default();
    dirs.iter()
        .any(|d| matches!(*d, "test" | "tests" | "testing"))
        || name == "conftest.py"
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name.ends_with("_test.py")
}

/// One edit as the Fixer answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub path: String,
    pub old_text: String,
    pub new_text: String,
}

/// The fix as Fixer edits on the change's files: one edit per hunk of bug_patch.txt
/// (context and removed lines become context and added lines), checked by applying them to
/// the change's text; a file whose hunks do not give exactly the fixed text (or whose old
/// text is not unique) gets one edit of its whole text.
pub fn fix_edits(
    patch: &str,
    files: &[(String, String, String)], // (path, change text, base text)
) -> Vec<Edit> {
    let hunks = hunks(patch);
    let mut edits = Vec::new();
    for (path, change, base) in files {
        let mine: Vec<&(String, String)> = hunks
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, h)| h)
            .collect();
        let mut text = change.clone();
        let mut ok = !mine.is_empty();
        for (old, new) in &mine {
            if old.is_empty() || text.matches(old.as_str()).count() != 1 {
                ok = false;
                break;
            }
            text = text.replacen(old.as_str(), new, 1);
        }
        if ok && &text == base {
            edits.extend(mine.iter().map(|(old, new)| Edit {
                path: path.clone(),
                old_text: old.clone(),
                new_text: new.clone(),
            }));
        } else {
            edits.push(Edit {
                path: path.clone(),
                old_text: change.clone(),
                new_text: base.clone(),
            });
        }
    }
    edits
}

/// The hunks of a unified diff as (path, (old text, new text)).
fn hunks(patch: &str) -> Vec<(String, (String, String))> {
    let mut out: Vec<(String, (String, String))> = Vec::new();
    let mut path = String::new();
    let mut current: Option<(String, String)> = None;
    let mut last_sign = ' ';
    let flush = |cur: &mut Option<(String, String)>, out: &mut Vec<_>, path: &str| {
        if let Some(h) = cur.take() {
            out.push((path.to_string(), h));
        }
    };
    for line in patch.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            flush(&mut current, &mut out, &path);
            path.clear();
            continue;
        }
        if let Some(p) = line.strip_prefix("+++ ") {
            let p = p.trim_end();
            path = p.strip_prefix("b/").unwrap_or(p).to_string();
            continue;
        }
        if line.starts_with("--- ") && current.is_none() {
            continue;
        }
        if line.starts_with("@@") {
            flush(&mut current, &mut out, &path);
            current = Some((String::new(), String::new()));
            continue;
        }
        let Some((old, new)) = current.as_mut() else {
            continue;
        };
        if line.starts_with('\\') {
            // "\ No newline at end of file": the previous line has no newline.
            let strip = |s: &mut String| {
                if s.ends_with('\n') {
                    s.pop();
                }
            };
            match last_sign {
                '-' => strip(old),
                '+' => strip(new),
                _ => {
                    strip(old);
                    strip(new);
                }
            }
            continue;
        }
        let (sign, rest) = line.split_at(line.len().min(1));
        let rest = if line.is_empty() { "\n" } else { rest };
        match sign {
            " " | "\n" => {
                let r = if sign == "\n" { "\n" } else { rest };
                old.push_str(r);
                new.push_str(r);
                last_sign = ' ';
            }
            "-" => {
                old.push_str(rest);
                last_sign = '-';
            }
            "+" => {
                new.push_str(rest);
                last_sign = '+';
            }
            _ => {}
        }
    }
    flush(&mut current, &mut out, &path);
    out
}

/// A case repository on disk: base and change commits.
pub struct CaseRepo {
    pub dir: PathBuf,
    pub base: String,
    pub change: String,
    /// The non-test files the change reverts: (path, change text, base text).
    pub reverted: Vec<(String, String, String)>,
}

/// The upstream git directory holding the bug's fixed commit, under `repos`: first
/// `OWNER+NAME/repo` from the project's GitHub address, then any `*/repo` (or `*`) that
/// has the commit (a renamed repository: jakubroztocil/httpie is httpie/cli).
pub fn upstream(repos: &Path, bug: &Bug) -> Result<PathBuf, String> {
    let mut candidates = Vec::new();
    let url = bug.github_url.trim_end_matches('/');
    let mut parts = url.rsplit('/');
    if let (Some(name), Some(owner)) = (parts.next(), parts.next()) {
        candidates.push(repos.join(format!("{owner}+{name}")).join("repo"));
    }
    if let Ok(entries) = std::fs::read_dir(repos) {
        let mut all: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        all.sort();
        for p in all {
            candidates.push(p.join("repo"));
            candidates.push(p);
        }
    }
    for c in candidates {
        if c.is_dir()
            && git(
                &c,
                &["cat-file", "-e", &format!("{}^{{commit}}", bug.fixed)],
            )
            .is_ok()
        {
            return Ok(c);
        }
    }
    Err(format!(
        "no git directory under {} has {}'s fixed commit {} (fetch {})",
        repos.display(),
        bug.id(),
        bug.fixed,
        bug.github_url
    ))
}

/// Builds the case under `dir` (replacing what is there).
pub fn build_case(upstream: &Path, bug: &Bug, dir: &Path) -> Result<CaseRepo, String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("remove {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    // The fixed commit's tree, written out by git archive.
    let archive = Command::new("git")
        .arg("--git-dir")
        .arg(upstream)
        .args(["archive", "--format=tar", &bug.fixed])
        .output()
        .map_err(|e| format!("git archive: {e}"))?;
    if !archive.status.success() {
        return Err(format!(
            "git archive {}: {}",
            bug.fixed,
            String::from_utf8_lossy(&archive.stderr)
        ));
    }
    let mut tar = Command::new("tar")
        .args(["-x", "-C"])
        .arg(dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("tar: {e}"))?;
    if let Some(mut stdin) = tar.stdin.take() {
        use std::io::Write;
        stdin
            .write_all(&archive.stdout)
            .map_err(|e| format!("tar: {e}"))?;
    }
    let status = tar.wait().map_err(|e| format!("tar: {e}"))?;
    if !status.success() {
        return Err(format!("tar -x of {} failed", bug.fixed));
    }
    // Both commits carry the fixed commit's time, as a change made right after it would: a
    // review of the case resolves what the project does not pin as of then.
    let fixed_at = Command::new("git")
        .arg("--git-dir")
        .arg(upstream)
        .args(["show", "-s", "--format=%cI", &bug.fixed])
        .output()
        .map_err(|e| format!("git show {}: {e}", bug.fixed))?;
    let fixed_at = String::from_utf8_lossy(&fixed_at.stdout).trim().to_string();
    if fixed_at.is_empty() {
        return Err(format!(
            "{}: the fixed commit's time could not be read",
            bug.id()
        ));
    }
    let work = |args: &[&str]| -> Result<String, String> {
        let out = Command::new("git")
            .env("GIT_AUTHOR_DATE", &fixed_at)
            .env("GIT_COMMITTER_DATE", &fixed_at)
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=proven-corpus",
                "-c",
                "user.email=corpus@proven.invalid",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "core.autocrlf=false",
            ])
            .args(args)
            .output()
            .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    work(&["init", "-q", "-b", "main"])?;
    work(&["add", "-A", "-f"])?;
    work(&[
        "commit",
        "-q",
        "--no-verify",
        "-m",
        &format!("base: {} at the fixed commit {}", bug.id(), bug.fixed),
    ])?;
    let base = work(&["rev-parse", "HEAD"])?.trim().to_string();
    let mut reverted = Vec::new();
    for path in patch_files(&bug.patch) {
        if is_test_path(&path, &bug.test_files) {
            continue;
        }
        let fixed = show(upstream, &bug.fixed, &path);
        let buggy = show(upstream, &bug.buggy, &path);
        let target = dir.join(&path);
        match &buggy {
            Some(text) => {
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("create {}: {e}", parent.display()))?;
                }
                std::fs::write(&target, text)
                    .map_err(|e| format!("write {}: {e}", target.display()))?;
            }
            None => {
                let _ = std::fs::remove_file(&target);
            }
        }
        if fixed != buggy {
            reverted.push((path, buggy.unwrap_or_default(), fixed.unwrap_or_default()));
        }
    }
    if reverted.is_empty() {
        return Err(format!(
            "{}: the fix touches no file outside the tests",
            bug.id()
        ));
    }
    work(&["add", "-A", "-f"])?;
    work(&[
        "commit",
        "-q",
        "--no-verify",
        "-m",
        &format!(
            "change: {} reverts its fix (the buggy commit {}'s files)",
            bug.id(),
            bug.buggy
        ),
    ])?;
    let change = work(&["rev-parse", "HEAD"])?.trim().to_string();
    Ok(CaseRepo {
        dir: dir.to_path_buf(),
        base,
        change,
        reverted,
    })
}

fn show(git_dir: &Path, rev: &str, path: &str) -> Option<String> {
    git(git_dir, &["show", &format!("{rev}:{path}")]).ok()
}

fn git(git_dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(args)
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The tests a Python test file declares as pytest node names: top-level `test*`
/// functions and `Class::test*` methods of top-level classes, in file order.
pub fn declared_node_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut class: Option<String> = None;
    for line in source.lines() {
        let trimmed = line.trim_start();
        let indented = line.len() > trimmed.len();
        let ident = |rest: &str| -> String {
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        if !indented {
            if let Some(rest) = trimmed.strip_prefix("class ") {
                class = Some(ident(rest));
                continue;
            }
            if let Some(rest) = trimmed
                .strip_prefix("def ")
                .or_else(|| trimmed.strip_prefix("async def "))
            {
                class = None;
                let name = ident(rest);
                if name.starts_with("test") {
                    names.push(name);
                }
                continue;
            }
            if !trimmed.is_empty() && !trimmed.starts_with(['#', '@', ')']) {
                class = None;
            }
            continue;
        }
        if let Some(c) = &class
            && let Some(rest) = trimmed
                .strip_prefix("def ")
                .or_else(|| trimmed.strip_prefix("async def "))
            && line.len() - trimmed.len() == 4
        {
            let name = ident(rest);
            if name.starts_with("test") {
                names.push(format!("{c}::{name}"));
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_test_scripts_give_pytest_node_names() {
        assert_eq!(
            selections("pytest -q -s tests/test_a.py::test_b\n"),
            [("tests/test_a.py".to_string(), "test_b".to_string())]
        );
        assert_eq!(
            selections(
                "tox tests/test_hooks.py::TestFindHooks::test_find_hook;tox tests/test_hooks.py::TestExternalHooks::test_run_hook"
            ),
            [
                (
                    "tests/test_hooks.py".into(),
                    "TestFindHooks::test_find_hook".into()
                ),
                (
                    "tests/test_hooks.py".into(),
                    "TestExternalHooks::test_run_hook".into()
                )
            ]
        );
        assert_eq!(
            selections("python -m unittest -q tornado.test.web_test.StaticFileTest.test_x;"),
            [(
                "tornado/test/web_test.py".to_string(),
                "StaticFileTest::test_x".to_string()
            )]
        );
        assert_eq!(
            selections(
                "python -m unittest -q tornado.test.httpclient_test.SyncHTTPClientSubprocessTest"
            ),
            [(
                "tornado/test/httpclient_test.py".to_string(),
                "SyncHTTPClientSubprocessTest".to_string()
            )]
        );
    }

    #[test]
    fn hunks_become_edits_that_give_the_fixed_text() {
        let patch = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 3\n c = 4\n";
        let change = "a = 1\nb = 2\nc = 4\n".to_string();
        let base = "a = 1\nb = 3\nc = 4\n".to_string();
        let edits = fix_edits(patch, &[("m.py".into(), change.clone(), base.clone())]);
        assert_eq!(
            edits,
            [Edit {
                path: "m.py".into(),
                old_text: "a = 1\nb = 2\nc = 4\n".into(),
                new_text: "a = 1\nb = 3\nc = 4\n".into()
            }]
        );
        // A patch that does not give the fixed text: the whole file is the edit.
        let other = "a = 1\nb = 9\nc = 4\n".to_string();
        let edits = fix_edits(patch, &[("m.py".into(), change.clone(), other.clone())]);
        assert_eq!(edits[0].old_text, change);
        assert_eq!(edits[0].new_text, other);
    }

    #[test]
    fn declared_tests_are_node_names() {
        let src = "import x\n\ndef test_a():\n    pass\n\nclass TestK(object):\n    def test_m(self):\n        def test_inner():\n            pass\n    def helper(self):\n        pass\n\ndef helper():\n    pass\n";
        assert_eq!(declared_node_names(src), ["test_a", "TestK::test_m"]);
    }

    #[test]
    fn test_files_and_data_are_never_reverted() {
        let listed = vec!["tests/data/x.py".to_string()];
        assert!(is_test_path("tests/data/x.py", &listed));
        assert!(is_test_path("tornado/test/web_test.py", &[]));
        assert!(is_test_path("tqdm/tests/tests_tqdm.py", &[]));
        assert!(!is_test_path("tqdm/_tqdm.py", &[]));
        assert!(!is_test_path("black.py", &listed));
    }
}
