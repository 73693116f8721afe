//! What every corpus shares about a case: a small git repository whose base is the fixed
//! version's tree and whose change is one commit bringing back the buggy version of the
//! non-test files the fix touches (the tests stay the fixed version's, so the bug's own
//! tests exist on both sides), and the fix as the Fixer's edits.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What a case is built from, in the upstream repository.
pub struct CaseSpec {
    /// The case's name (`black-1`, `Express-3`).
    pub id: String,
    /// The revision whose tree is the base (the fixed version, with the bug's tests).
    pub fixed: String,
    /// The revision the change takes `files` from (the buggy version).
    pub buggy: String,
    /// The revision whose commit time both commits carry (the upstream fix's): a review of
    /// the case resolves what the project does not pin as of then.
    pub dated: String,
    /// The non-test files the change brings back to the buggy version.
    pub files: Vec<String>,
}

/// A case repository on disk: base and change commits.
pub struct CaseRepo {
    pub dir: PathBuf,
    pub base: String,
    pub change: String,
    /// The non-test files the change reverts: (path, change text, base text).
    pub reverted: Vec<(String, String, String)>,
}

/// The upstream git directory holding `rev`, under `repos` (as the fetch tool leaves
/// them: `OWNER+NAME/repo`, `OWNER+NAME/repo/.git` or `OWNER+NAME`): first the one named
/// by the project's GitHub address, then, for a commit id only, any that has the commit (a
/// renamed repository: jakubroztocil/httpie is httpie/cli). A name (BugsJS' `Bug-2-full`)
/// is looked up in the project's own repository alone: every BugsJS fork has a `Bug-2`, so
/// another project's would build a case of the wrong code (Node-redis' cases were once
/// built of Bower's, its mirror absent).
pub fn upstream(repos: &Path, github_url: &str, rev: &str, id: &str) -> Result<PathBuf, String> {
    let mut dirs = Vec::new();
    let url = github_url.trim_end_matches('/').trim_end_matches(".git");
    let mut parts = url.rsplit('/');
    if let (Some(name), Some(owner)) = (parts.next(), parts.next()) {
        dirs.push(repos.join(format!("{owner}+{name}")));
    }
    let commit_id = matches!(rev.len(), 40 | 64) && rev.chars().all(|c| c.is_ascii_hexdigit());
    if let Ok(entries) = std::fs::read_dir(repos)
        && commit_id
    {
        let mut all: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        all.sort();
        dirs.extend(all);
    }
    for d in dirs {
        for c in [d.join("repo"), d.join("repo").join(".git"), d.clone()] {
            if c.is_dir() && git(&c, &["cat-file", "-e", &format!("{rev}^{{commit}}")]).is_ok() {
                return Ok(c);
            }
        }
    }
    Err(format!(
        "no git directory under {} has {id}'s revision {rev} (fetch {github_url})",
        repos.display(),
    ))
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

/// A file of a tree whose blob the object store has not (a mirror without its largest
/// files, a partial clone): its mode, object id and path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingBlob {
    pub mode: String,
    pub id: String,
    pub path: String,
}

/// The files of `rev`'s tree whose blobs `git_dir` has not.
fn missing_blobs(git_dir: &Path, rev: &str) -> Result<Vec<MissingBlob>, String> {
    let listing = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["ls-tree", "-r", "-z", rev])
        .output()
        .map_err(|e| format!("git ls-tree: {e}"))?;
    if !listing.status.success() {
        return Err(format!(
            "git ls-tree {rev}: {}",
            String::from_utf8_lossy(&listing.stderr)
        ));
    }
    let entries: Vec<MissingBlob> = listing
        .stdout
        .split(|b| *b == 0)
        .filter_map(|e| {
            let e = std::str::from_utf8(e).ok()?;
            let (meta, path) = e.split_once('\t')?;
            let mut words = meta.split(' ');
            let (mode, kind, id) = (words.next()?, words.next()?, words.next()?);
            (kind == "blob").then(|| MissingBlob {
                mode: mode.to_string(),
                id: id.to_string(),
                path: path.to_string(),
            })
        })
        .collect();
    let mut check = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["cat-file", "--batch-check=%(objectname)"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("git cat-file: {e}"))?;
    let ids: String = entries.iter().map(|e| format!("{}\n", e.id)).collect();
    let mut stdin = check.stdin.take().ok_or("git cat-file: no stdin")?;
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(ids.as_bytes())
    });
    let out = check
        .wait_with_output()
        .map_err(|e| format!("git cat-file: {e}"))?;
    let _ = writer.join();
    // One line per id, in order: the id, or "ID missing".
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .zip(entries)
        .filter(|(line, _)| line.ends_with(" missing"))
        .map(|(_, e)| e)
        .collect())
}

/// Writes the tree of `fixed` into `dir` (git archive piped into tar), but for the files in
/// `missing`, which the object store has not.
fn extract_tree(
    upstream: &Path,
    fixed: &str,
    dir: &Path,
    missing: &[MissingBlob],
) -> Result<(), String> {
    let archive = Command::new("git")
        .arg("--git-dir")
        .arg(upstream)
        .args(["archive", "--format=tar", fixed, "--", "."])
        .args(
            missing
                .iter()
                .map(|m| format!(":(exclude,literal){}", m.path)),
        )
        .output()
        .map_err(|e| format!("git archive: {e}"))?;
    if !archive.status.success() {
        return Err(format!(
            "git archive {}: {}",
            fixed,
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
        return Err(format!("tar -x of {} failed", fixed));
    }
    Ok(())
}

/// Writes each of the fix's files as the buggy commit has it (removing it where that
/// commit has none): the files the fix changed, each with its buggy and fixed text.
fn revert_files(
    upstream: &Path,
    spec: &CaseSpec,
    dir: &Path,
) -> Result<Vec<(String, String, String)>, String> {
    let mut reverted = Vec::new();
    for path in spec.files.iter().cloned() {
        let fixed = show(upstream, &spec.fixed, &path);
        let buggy = show(upstream, &spec.buggy, &path);
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
    Ok(reverted)
}

/// Builds the case under `dir` (replacing what is there).
pub fn build_case(upstream: &Path, spec: &CaseSpec, dir: &Path) -> Result<CaseRepo, String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("remove {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    // The fixed commit's tree, written out by git archive. A file whose blob the mirror
    // has not (the fetch tool leaves out the largest) stays in the case's trees by its id
    // alone, as in a partial clone: a review leaves it out by name and goes on (issue 30,
    // class 11), where the harness once stopped the whole case.
    let missing = missing_blobs(upstream, &spec.fixed)?;
    extract_tree(upstream, &spec.fixed, dir, &missing)?;
    // Both commits carry the fixed commit's time, as a change made right after it would: a
    // review of the case resolves what the project does not pin as of then.
    let fixed_at = Command::new("git")
        .arg("--git-dir")
        .arg(upstream)
        .args(["show", "-s", "--format=%cI", &spec.dated])
        .output()
        .map_err(|e| format!("git show {}: {e}", spec.dated))?;
    let fixed_at = String::from_utf8_lossy(&fixed_at.stdout).trim().to_string();
    if fixed_at.is_empty() {
        return Err(format!(
            "{}: the fixed commit's time could not be read",
            spec.id
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
    // A commit of the index as it is, missing blobs included (`git commit` refuses a tree
    // whose objects are absent; `write-tree --missing-ok` does not).
    let commit = |message: &str| -> Result<String, String> {
        let tree = work(&["write-tree", "--missing-ok"])?.trim().to_string();
        let parent = work(&["rev-parse", "-q", "--verify", "HEAD"]).ok();
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message];
        if let Some(p) = parent.as_deref() {
            args.extend(["-p", p.trim()]);
        }
        let id = work(&args)?.trim().to_string();
        work(&["update-ref", "HEAD", &id])?;
        Ok(id)
    };
    // Every file of the work tree, and each missing one by its id (`add -A` alone would
    // take a file it cannot see for a deletion).
    let add_all = || -> Result<(), String> {
        work(&["add", "-A", "-f"])?;
        for m in &missing {
            work(&[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("{},{},{}", m.mode, m.id, m.path),
            ])?;
        }
        Ok(())
    };
    work(&["init", "-q", "-b", "main"])?;
    add_all()?;
    let base = commit(&format!(
        "base: {} at the fixed version {}",
        spec.id, spec.fixed
    ))?;
    let reverted = revert_files(upstream, spec, dir)?;
    if reverted.is_empty() {
        return Err(format!(
            "{}: the fix touches no file outside the tests",
            spec.id
        ));
    }
    add_all()?;
    let change = commit(&format!(
        "change: {} reverts its fix (the buggy commit {}'s files)",
        spec.id, spec.buggy
    ))?;
    Ok(CaseRepo {
        dir: dir.to_path_buf(),
        base,
        change,
        reverted,
    })
}

pub fn show(git_dir: &Path, rev: &str, path: &str) -> Option<String> {
    git(git_dir, &["show", &format!("{rev}:{path}")]).ok()
}

pub fn git(git_dir: &Path, args: &[&str]) -> Result<String, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `git ARGS` in `at` as a test's own setup (its output, trimmed); it must succeed.
    fn git_at(args: &[&str], at: &Path) -> String {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(at)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A bare repository under `repos/OWNER+NAME` with one commit tagged `tag`.
    fn tagged(repos: &Path, dir: &str, tag: &str) -> String {
        let work = repos.join(format!("{dir}.work"));
        std::fs::create_dir_all(&work).expect("work dir");
        let sh = git_at;
        sh(&["init", "-q"], &work);
        std::fs::write(
            work.join("package.json"),
            format!("{{\"name\": \"{dir}\"}}"),
        )
        .expect("the test's own setup");
        sh(&["add", "."], &work);
        sh(&["commit", "-qm", "c"], &work);
        sh(&["tag", tag], &work);
        let bare = repos.join(dir).join("repo");
        sh(
            &[
                "clone",
                "-q",
                "--bare",
                &work.to_string_lossy(),
                &bare.to_string_lossy(),
            ],
            repos,
        );
        sh(&["rev-parse", "HEAD"], &work)
    }

    #[test]
    fn a_tag_is_looked_up_in_the_projects_own_repository_and_a_commit_in_any() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repos = tmp.path();
        let bower = tagged(repos, "BugsJS+bower", "Bug-1");
        // Node-redis' mirror is absent: Bower's `Bug-1` is not its case.
        let err = upstream(
            repos,
            "https://github.com/BugsJS/node_redis",
            "Bug-1",
            "Node-redis-1",
        )
        .expect_err("Bower's tag is no case of Node-redis");
        assert!(
            err.contains("fetch https://github.com/BugsJS/node_redis"),
            "{err}"
        );
        tagged(repos, "BugsJS+node_redis", "Bug-1");
        let found = upstream(
            repos,
            "https://github.com/BugsJS/node_redis",
            "Bug-1",
            "Node-redis-1",
        )
        .expect("the test's own setup");
        assert!(
            found.starts_with(repos.join("BugsJS+node_redis")),
            "{}",
            found.display()
        );
        // A commit id is the same code in whichever repository holds it (a renamed one).
        let found = upstream(
            repos,
            "https://github.com/jakubroztocil/httpie",
            &bower,
            "x-1",
        )
        .expect("the test's own setup");
        assert!(
            found.starts_with(repos.join("BugsJS+bower")),
            "{}",
            found.display()
        );
    }

    /// A mirror without one of its blobs (the fetch tool leaves out the largest files)
    /// once stopped the whole case at `git archive`. The case is built, that file kept in
    /// both commits by its id alone, as a partial clone has it, for the review to leave out
    /// by name.
    #[test]
    fn a_blob_the_mirror_has_not_stays_in_the_case_by_its_id() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let work = tmp.path().join("w");
        std::fs::create_dir_all(work.join("data")).expect("dir");
        let sh = git_at;
        sh(&["init", "-q"], &work);
        std::fs::write(work.join("m.py"), "def f():\n    return 1\n").expect("write");
        sh(&["add", "."], &work);
        sh(&["commit", "-qm", "buggy"], &work);
        let buggy = sh(&["rev-parse", "HEAD"], &work);
        std::fs::write(work.join("m.py"), "def f():\n    return 2\n").expect("write");
        std::fs::write(work.join("data/big.bin"), "a large file\n").expect("write");
        sh(&["add", "."], &work);
        sh(&["commit", "-qm", "fixed"], &work);
        let fixed = sh(&["rev-parse", "HEAD"], &work);
        let big = sh(&["rev-parse", "HEAD:data/big.bin"], &work);
        let bare = tmp.path().join("bare.git");
        sh(
            &[
                "clone",
                "-q",
                "--bare",
                "--no-local",
                &work.to_string_lossy(),
                &bare.to_string_lossy(),
            ],
            tmp.path(),
        );
        // Loose objects, one of them taken away.
        for pack in std::fs::read_dir(bare.join("objects/pack"))
            .expect("packs")
            .flatten()
        {
            if pack.path().extension().is_some_and(|e| e == "pack") {
                let bytes = std::fs::read(pack.path()).expect("pack");
                for f in std::fs::read_dir(bare.join("objects/pack"))
                    .expect("packs")
                    .flatten()
                {
                    std::fs::remove_file(f.path()).expect("remove");
                }
                let mut unpack = Command::new("git")
                    .arg("--git-dir")
                    .arg(&bare)
                    .args(["unpack-objects", "-q"])
                    .stdin(std::process::Stdio::piped())
                    .spawn()
                    .expect("unpack");
                use std::io::Write;
                unpack
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(&bytes)
                    .expect("write");
                assert!(unpack.wait().expect("unpack").success());
                break;
            }
        }
        std::fs::remove_file(bare.join("objects").join(&big[..2]).join(&big[2..]))
            .expect("remove the blob");
        let spec = CaseSpec {
            id: "x-1".into(),
            fixed: fixed.clone(),
            buggy,
            dated: fixed,
            files: vec!["m.py".into()],
        };
        let case = build_case(&bare, &spec, &tmp.path().join("case")).expect("the case is built");
        for rev in [&case.base, &case.change] {
            let listed = sh(&["ls-tree", "-r", rev], &case.dir);
            assert!(
                listed.contains(&format!("blob {big}\tdata/big.bin")),
                "{listed}"
            );
        }
        assert!(!case.dir.join("data/big.bin").exists());
        assert_eq!(
            sh(&["show", &format!("{}:m.py", case.change)], &case.dir),
            "def f():\n    return 1"
        );
        assert_eq!(case.reverted.len(), 1);
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
}
