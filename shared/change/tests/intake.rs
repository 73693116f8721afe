//! Intake against real repositories built by the test.

use proven_change::testing::TestRepo;
use proven_change::{BlobRead, ChangeError, FileStatus, LeftOutReason, Limits, Mode, Repo};

fn find<'a>(change: &'a proven_change::Change, path: &str) -> &'a proven_change::ChangedFile {
    change
        .files
        .iter()
        .find(|f| f.path().as_bytes() == path.as_bytes())
        .unwrap_or_else(|| {
            panic!(
                "{path} not in {:?}",
                change.files.iter().map(|f| f.path()).collect::<Vec<_>>()
            )
        })
}

#[test]
fn revisions_resolve_by_branch_tag_sha_and_expression() {
    let t = TestRepo::new();
    t.write("a.txt", "one\n");
    let first = t.commit("first");
    t.tag("v1").branch("base-branch");
    t.write("a.txt", "two\n");
    let second = t.commit("second");
    let repo = Repo::open(t.path()).expect("open");
    assert_eq!(repo.resolve("v1").expect("tag").commit, first);
    assert_eq!(repo.resolve("base-branch").expect("branch").commit, first);
    assert_eq!(repo.resolve("HEAD~1").expect("expression").commit, first);
    assert_eq!(
        repo.resolve(&second[..10]).expect("short sha").commit,
        second
    );
    assert_eq!(repo.resolve("HEAD").expect("head").summary, "second");
    let err = repo.resolve("no-such-branch").expect_err("missing");
    assert!(matches!(&err, ChangeError::RevisionNotFound { rev, .. } if rev == "no-such-branch"));
    assert!(err.to_string().contains("no-such-branch"));
}

#[test]
fn not_a_repository_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = Repo::open(dir.path()).err().expect("not a repo");
    assert!(err.to_string().contains("is not a git repository"));
}

#[cfg(unix)]
#[test]
fn changed_files_carry_status_modes_renames_and_binary_flags() {
    let t = TestRepo::new();
    t.write("keep.txt", "same\n")
        .write("edit.txt", "a\nb\nc\n")
        .write("gone.txt", "bye\n")
        .write(
            "moved/old_name.rs",
            "fn main() {\n    println!(\"a fairly long line so rename similarity holds\");\n}\n",
        )
        .write("script.sh", "echo hi\n")
        .symlink("link", "/etc/passwd");
    let base = t.commit("base");
    t.write("edit.txt", "a\nB\nc\nd\n")
        .remove("gone.txt")
        .rename("moved/old_name.rs", "moved/new_name.rs")
        .set_executable("script.sh", true)
        .write("blob.bin", [0u8, 159, 146, 150, 0, 1, 2])
        .symlink("link", "/etc/shadow")
        .write("new.txt", "hello\n");
    let head = t.commit("head");
    let repo = Repo::open(t.path()).expect("open");
    let (b, h) = (
        repo.resolve(&base).expect("base"),
        repo.resolve(&head).expect("head"),
    );
    let change = repo.diff(&b, &h, Limits::default()).expect("diff");

    let edit = find(&change, "edit.txt");
    assert_eq!(
        (edit.status, edit.additions, edit.deletions),
        (FileStatus::Modified, 2, 1)
    );
    assert!(!edit.hunks.is_empty());
    assert_eq!(find(&change, "gone.txt").status, FileStatus::Deleted);
    assert_eq!(find(&change, "new.txt").status, FileStatus::Added);
    let moved = find(&change, "moved/new_name.rs");
    assert_eq!(moved.status, FileStatus::Renamed);
    assert_eq!(
        moved.old_path.as_ref().map(|p| p.display()),
        Some("moved/old_name.rs".to_string())
    );
    let script = find(&change, "script.sh");
    assert_eq!(
        (script.old_mode, script.new_mode),
        (Mode::File, Mode::Executable)
    );
    assert!(find(&change, "blob.bin").binary);
    assert!(!find(&change, "new.txt").binary);
    // The symlink is never a changed file: it is left out, by name.
    assert!(change.files.iter().all(|f| f.path().as_bytes() != b"link"));
    assert_eq!(change.left_out.len(), 1);
    assert_eq!(change.left_out[0].path.display(), "link");
    assert_eq!(change.left_out[0].reason, LeftOutReason::Symlink);
    assert!(!change.truncated);
}

#[cfg(unix)]
#[test]
fn blobs_are_read_from_commits_never_through_symlinks() {
    let t = TestRepo::new();
    t.write("dir/Cargo.lock", "version = 3\n")
        .symlink("escape", "/etc")
        .symlink("lock-link", "dir/Cargo.lock");
    let c = t.commit("c");
    t.write(
        "dir/Cargo.lock",
        "changed in the working copy, not committed\n",
    );
    let repo = Repo::open(t.path()).expect("open");
    assert_eq!(
        repo.read_blob(&c, b"dir/Cargo.lock", 1 << 20)
            .expect("read"),
        BlobRead::Content(b"version = 3\n".to_vec())
    );
    assert_eq!(
        repo.read_blob(&c, b"lock-link", 1 << 20).expect("read"),
        BlobRead::LeftOut(LeftOutReason::Symlink)
    );
    assert_eq!(
        repo.read_blob(&c, b"escape/passwd", 1 << 20).expect("read"),
        BlobRead::Missing
    );
    assert_eq!(
        repo.read_blob(&c, b"nope", 1 << 20).expect("read"),
        BlobRead::Missing
    );
    assert_eq!(
        repo.read_blob(&c, b"dir/Cargo.lock", 4).expect("read"),
        BlobRead::TooLarge { size: 12 }
    );
}

#[cfg(unix)]
#[test]
fn non_utf8_paths_are_carried_as_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    let base = t.commit("base");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    t.write(name, "latin-1 name\n");
    let head = t.commit("head");
    let repo = Repo::open(t.path()).expect("open");
    let change = repo
        .diff(
            &repo.resolve(&base).expect("base"),
            &repo.resolve(&head).expect("head"),
            Limits::default(),
        )
        .expect("diff");
    assert_eq!(change.files.len(), 1);
    let path = change.files[0].path();
    assert_eq!(path.as_bytes(), b"caf\xe9.txt");
    assert_eq!(path.as_str(), None);
    assert_eq!(path.display(), "caf\u{fffd}.txt");
    assert_eq!(
        repo.read_blob(&head, path.as_bytes(), 1024).expect("read"),
        BlobRead::Content(b"latin-1 name\n".to_vec())
    );
}

#[test]
fn a_huge_change_is_truncated_and_says_so() {
    let t = TestRepo::new();
    t.write("seed", "x");
    let base = t.commit("base");
    for i in 0..30 {
        t.write(format!("f{i}.txt"), format!("{i}\n"));
    }
    let head = t.commit("head");
    let repo = Repo::open(t.path()).expect("open");
    let change = repo
        .diff(
            &repo.resolve(&base).expect("base"),
            &repo.resolve(&head).expect("head"),
            Limits {
                max_files: 10,
                ..Limits::default()
            },
        )
        .expect("diff");
    assert_eq!(change.files.len(), 10);
    assert!(change.truncated);
}

#[test]
fn the_head_listing_and_the_change_subjects() {
    let t = TestRepo::new();
    t.write("src/lib.rs", "pub fn a() {}\n");
    t.write("README.md", "hi\n");
    let base = t.commit("base");
    t.write("src/auth/token.rs", "pub fn t() {}\n");
    t.symlink("link", "README.md");
    t.commit("add tokens");
    t.write("deploy/prod.yaml", "replicas: 2\n");
    let head = t.commit("deploy them");
    let repo = Repo::open(t.path()).expect("open");
    let (files, cut) = repo.list_files(&head, 100).expect("listing");
    assert!(!cut);
    let mut sorted = files.clone();
    sorted.sort();
    // Regular files only: the symlink is not listed.
    assert_eq!(
        sorted,
        [
            "README.md",
            "deploy/prod.yaml",
            "src/auth/token.rs",
            "src/lib.rs"
        ]
    );
    // One folder's own files (not its subfolders'), for the CI workflows a suite reads.
    assert_eq!(repo.list_dir(&head, "src/").expect("folder"), ["lib.rs"]);
    assert_eq!(
        repo.list_dir(&head, "deploy").expect("folder"),
        ["prod.yaml"]
    );
    assert!(
        repo.list_dir(&head, ".github/workflows/")
            .expect("no folder")
            .is_empty()
    );
    assert!(
        repo.list_dir(&head, "README.md")
            .expect("a file")
            .is_empty()
    );
    let (two, cut) = repo.list_files(&head, 2).expect("listing");
    assert_eq!((two.len(), cut), (2, true));
    assert_eq!(
        repo.commit_subjects(&base, &head, 10).expect("subjects"),
        ["deploy them", "add tokens"]
    );
    assert_eq!(
        repo.commit_subjects(&base, &head, 1).expect("subjects"),
        ["deploy them"]
    );
}

#[test]
fn a_blob_over_the_limit_is_left_out_with_its_size() {
    let t = TestRepo::new();
    t.write("small.txt", "a\n")
        .write("gone.txt", "x".repeat(5_000));
    let base = t.commit("base");
    t.write("small.txt", "b\n")
        .remove("gone.txt")
        .write("big.txt", "x".repeat(5_000).replace('x', "y"));
    t.stage_zero_blob("zeros.bin", 3_000);
    let head = t.commit("head");
    let repo = Repo::open(t.path()).expect("open");
    let (b, h) = (
        repo.resolve(&base).expect("base"),
        repo.resolve(&head).expect("head"),
    );
    let limits = Limits {
        max_blob_bytes: 1_000,
        ..Limits::default()
    };
    let change = repo.diff(&b, &h, limits).expect("diff");
    let files: Vec<String> = change.files.iter().map(|f| f.path().display()).collect();
    assert_eq!(files, vec!["small.txt"], "only the small file is read");
    let mut left: Vec<(String, LeftOutReason)> = change
        .left_out
        .iter()
        .map(|l| (l.path.display(), l.reason))
        .collect();
    left.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        left,
        vec![
            (
                "big.txt".into(),
                LeftOutReason::TooLarge {
                    size: 5_000,
                    head: true
                }
            ),
            (
                "gone.txt".into(),
                LeftOutReason::TooLarge {
                    size: 5_000,
                    head: false
                }
            ),
            (
                "zeros.bin".into(),
                LeftOutReason::TooLarge {
                    size: 3_000,
                    head: true
                }
            ),
        ]
    );
    // Under the default limit the same change reads every file.
    let change = repo.diff(&b, &h, Limits::default()).expect("diff");
    assert!(change.left_out.is_empty());
    assert_eq!(change.files.len(), 4);
}

#[test]
fn a_tree_over_the_file_count_limit_is_refused_by_name() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    let base = t.commit("base");
    for i in 0..6 {
        t.write(format!("dir/f{i}.txt"), "x\n");
    }
    let head = t.commit("head");
    let repo = Repo::open(t.path()).expect("open");
    let (b, h) = (
        repo.resolve(&base).expect("base"),
        repo.resolve(&head).expect("head"),
    );
    let limits = Limits {
        max_tree_files: 5,
        ..Limits::default()
    };
    let err = repo.diff(&b, &h, limits).expect_err("too many files");
    assert!(
        matches!(&err, ChangeError::TreeTooLarge { commit, limit: 5 } if *commit == head),
        "{err}"
    );
    assert!(err.to_string().contains("more than 5 files"), "{err}");
    let limits = Limits {
        max_tree_files: 7,
        ..Limits::default()
    };
    assert_eq!(
        repo.diff(&b, &h, limits).expect("at the limit").files.len(),
        6
    );
}

#[test]
fn the_merge_base_is_where_the_branch_left_the_base_branch() {
    // main: m1 (pyyaml 5.3) - m2 (pyyaml 5.4); feature branches at m1 and changes app.py.
    let t = TestRepo::new();
    t.write("requirements.txt", "pyyaml==5.3\n")
        .write("app.py", "x = 1\n");
    let m1 = t.commit("m1");
    t.branch("main").branch("feature").checkout("feature");
    t.write("app.py", "x = 2\n");
    let f1 = t.commit("feature: app.py");
    t.checkout("main");
    t.write("requirements.txt", "pyyaml==5.4\n");
    let m2 = t.commit("m2: raise pyyaml");
    let repo = Repo::open(t.path()).expect("open");
    let main = repo.resolve("main").expect("main");
    let feature = repo.resolve("feature").expect("feature");
    assert_eq!(
        (main.commit.as_str(), feature.commit.as_str()),
        (m2.as_str(), f1.as_str())
    );
    let base = repo
        .merge_base(&main, &feature)
        .expect("merge base")
        .expect("there is one");
    assert_eq!(base.commit, m1);
    assert_eq!(
        base.spec, "main",
        "the revision keeps the name it was asked by"
    );
    // From the merge base only the branch's own file changed; from main's tip the base
    // branch's later commit shows up as the change's (reversed).
    let three_dot = repo.diff(&base, &feature, Limits::default()).expect("diff");
    let paths: Vec<_> = three_dot.files.iter().map(|f| f.path().display()).collect();
    assert_eq!(paths, ["app.py"]);
    let two_dot = repo.diff(&main, &feature, Limits::default()).expect("diff");
    assert_eq!(two_dot.files.len(), 2);
    // A base that is already an ancestor of the head is its own merge base.
    let m1_rev = repo.resolve(&m1).expect("m1");
    assert_eq!(
        repo.merge_base(&m1_rev, &feature)
            .expect("mb")
            .expect("some")
            .commit,
        m1
    );
    assert!(!repo.is_shallow());
}

#[test]
fn unrelated_histories_have_no_merge_base() {
    let t = TestRepo::new();
    t.write("a.txt", "one\n");
    t.commit("root one");
    t.branch("one");
    let other = TestRepo::new();
    other.write("b.txt", "two\n");
    let two = other.commit("root two");
    // Bring the unrelated root into the first repository's objects.
    let status = std::process::Command::new("git")
        .arg("-C")
        .arg(t.path())
        .args(["fetch", "--quiet"])
        .arg(other.path())
        .arg(format!("{two}:refs/heads/two"))
        .status()
        .expect("git fetch");
    assert!(status.success());
    let repo = Repo::open(t.path()).expect("open");
    let a = repo.resolve("one").expect("one");
    let b = repo.resolve("two").expect("two");
    assert_eq!(repo.merge_base(&a, &b).expect("no error"), None);
}

#[test]
fn a_shallow_clone_says_it_is_shallow_and_finds_no_merge_base_below_its_cut() {
    let t = TestRepo::new();
    t.write("a.txt", "zero\n");
    t.commit("m0");
    t.branch("main").branch("feature").checkout("feature");
    t.write("b.txt", "feature\n");
    t.commit("f1");
    t.write("b.txt", "feature 2\n");
    t.commit("f2");
    t.checkout("main");
    t.write("a.txt", "one\n");
    t.commit("m1");
    let dir = tempfile::tempdir().expect("tempdir");
    let clone = dir.path().join("clone");
    let status = std::process::Command::new("git")
        .args(["clone", "--quiet", "--depth", "1", "--no-single-branch"])
        .arg(format!("file://{}", t.path().display()))
        .arg(&clone)
        .status()
        .expect("git clone");
    assert!(status.success());
    let repo = Repo::open(&clone).expect("open");
    assert!(repo.is_shallow());
    let main = repo.resolve("origin/main").expect("main");
    let feature = repo.resolve("origin/feature").expect("feature");
    assert_eq!(repo.merge_base(&main, &feature).expect("no error"), None);
}
