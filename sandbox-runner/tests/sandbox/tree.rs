//! The tree of a run comes from git objects, and a patch changes only that run's copy,
//! refusing by name what a patch may not do.

use proven_change::testing::TestRepo;
use proven_sandbox::{Edit, Language, Outcome, RequestError, RunRequest, SandboxError};

use crate::support::{self, assert_container_gone};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tree_comes_from_the_commit_not_the_working_copy() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = TestRepo::new();
    repo.write("calc.py", "COMMITTED = True\n")
        .write("bin/tool", "#!/bin/sh\necho tool ran\n")
        .set_executable("bin/tool", true)
        .symlink("link", "/etc/passwd")
        .write("certs/expired/ca", "the CA\n")
        .symlink("certs/valid/ca", "../expired/ca")
        .symlink("certs/valid/escape", "../../../etc/passwd");
    let commit = repo.commit("tree");
    // Uncommitted edits and files in the author's working copy must not reach the run.
    repo.write("calc.py", "COMMITTED = False\n")
        .write("secret.txt", "working copy only\n");
    let record = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                &commit,
                Language::Python,
                [
                    "sh",
                    "-c",
                    "cat calc.py; ls -a; ./bin/tool; cat certs/valid/ca; test -L certs/valid/ca && echo is-a-link",
                ],
            )
            .as_command(),
        )
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}");
    assert!(out.contains("COMMITTED = True"), "{out}");
    assert!(!out.contains("secret.txt"), "{out}");
    assert!(
        out.contains("tool ran"),
        "the executable bit is kept: {out}"
    );
    assert!(
        out.contains("the CA\nis-a-link"),
        "a symlink whose target stays inside the tree is one: {out}"
    );
    assert_eq!(
        record.tree.left_out,
        vec!["certs/valid/escape".to_string(), "link".to_string()],
        "symlinks out of the tree are left out"
    );
    assert_eq!(record.tree.commit, commit);
    assert_container_gone(&sandbox, &record).await;

    // The patch and the added file change this run's copy only, never the repository.
    let patched = sandbox
        .run(
            &RunRequest::new(repo.path(), &commit, Language::Python, ["cat", "calc.py"])
                .as_command()
                .with_patch(vec![Edit {
                    path: "calc.py".into(),
                    old_text: "True".into(),
                    new_text: "'patched'".into(),
                }]),
        )
        .await
        .expect("run");
    assert!(support::output(&patched).contains("COMMITTED = 'patched'"));
    let on_disk = std::fs::read_to_string(repo.path().join("calc.py")).expect("read");
    assert_eq!(on_disk, "COMMITTED = False\n");
}

/// vue's family: its build finds the files that export enums with `git grep`, and found
/// none in a tree with no `.git` (EISDIR on the empty name; every e2e test failed). A CI's
/// tree is a git checkout: the run's is one too, of one commit that holds the tree as the
/// run has it (the patch and the added test file included, a file the project's ignore
/// rules name too), so `git status` is clean, and the same tree gives the same commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runs_tree_is_a_git_checkout_of_the_tree_as_run() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = TestRepo::new();
    repo.write("src/flags.ts", "export enum Flags { A = 1 }\n")
        .write("src/other.ts", "export const x = 1\n")
        .write("generated/kept.txt", "committed before it was ignored\n");
    repo.commit("generated");
    repo.write(".gitignore", "generated/\n");
    let commit = repo.commit("enums");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        [
            "sh",
            "-c",
            "git grep -l 'export enum' && git ls-files | sort && echo status: && git status --porcelain && echo end && git log --format=%s",
        ],
    )
    .as_command()
    .with_patch(vec![Edit {
        path: "src/other.ts".into(),
        old_text: "const x = 1".into(),
        new_text: "enum Other { B }".into(),
    }])
    .with_file("tests/added.test.ts", "export const t = 1\n");
    let record = sandbox.run(&request).await.expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}");
    assert!(
        out.starts_with("src/flags.ts\nsrc/other.ts\n.gitignore\ngenerated/kept.txt\nsrc/flags.ts\nsrc/other.ts\ntests/added.test.ts\nstatus:\nend\nenums\n"),
        "{out}"
    );
    let again = sandbox.run(&request).await.expect("run");
    assert!(record.tree.checkout.is_some());
    assert_eq!(
        again.tree.checkout, record.tree.checkout,
        "the same tree, the same commit"
    );
    assert_container_gone(&sandbox, &record).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_is_refused_by_name() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = TestRepo::new();
    repo.write("calc.py", "x = 1\nx = 1\ny = 2\n")
        .write("tests/test_calc.py", "def test(): pass\n");
    let commit = repo.commit("tree");
    let request = RunRequest::new(repo.path(), &commit, Language::Python, ["true"]).as_command();
    let edit = |path: &str, old: &str| Edit {
        path: path.into(),
        old_text: old.into(),
        new_text: "z = 3".into(),
    };
    let cases: Vec<(RunRequest, RequestError)> = vec![
        (
            request
                .clone()
                .with_patch(vec![edit("../outside.py", "y = 2")]),
            RequestError::PathOutsideTree {
                path: "../outside.py".into(),
            },
        ),
        (
            request
                .clone()
                .with_patch(vec![edit("/etc/passwd", "root")]),
            RequestError::PathOutsideTree {
                path: "/etc/passwd".into(),
            },
        ),
        (
            request
                .clone()
                .with_patch(vec![edit("tests/test_calc.py", "pass")]),
            RequestError::PatchTouchesTestFile {
                path: "tests/test_calc.py".into(),
            },
        ),
        (
            request.clone().with_patch(vec![edit("calc.py", "w = 0")]),
            RequestError::OldTextNotFound {
                path: "calc.py".into(),
            },
        ),
        (
            request.clone().with_patch(vec![edit("calc.py", "x = 1")]),
            RequestError::OldTextNotUnique {
                path: "calc.py".into(),
                count: 2,
            },
        ),
        (
            request.clone().with_patch(vec![edit("missing.py", "x")]),
            RequestError::PatchFileMissing {
                path: "missing.py".into(),
            },
        ),
        (
            request.clone().with_file("../escape.py", "x"),
            RequestError::PathOutsideTree {
                path: "../escape.py".into(),
            },
        ),
        (
            RunRequest::new(repo.path(), "no-such-branch", Language::Python, ["true"]),
            RequestError::RevisionNotFound {
                revision: "no-such-branch".into(),
                message: String::new(),
            },
        ),
    ];
    for (request, expected) in cases {
        match sandbox.run(&request).await {
            Err(SandboxError::Request(RequestError::RevisionNotFound { revision, .. })) => {
                assert!(matches!(expected, RequestError::RevisionNotFound { .. }));
                assert_eq!(revision, "no-such-branch");
            }
            Err(SandboxError::Request(actual)) => assert_eq!(actual, expected),
            other => panic!("expected {expected:?}, got {other:?}"),
        }
    }
    // A patch that applies cleanly runs.
    let ok = request.with_patch(vec![edit("calc.py", "y = 2")]);
    assert_eq!(
        sandbox.run(&ok).await.expect("run").outcome,
        Outcome::Passed
    );
}

/// A submodule whose repository the checkout holds (`.git/modules`, as a CI's checkout with
/// `submodules: true`) is written into the run's tree at its commit: handlebars.js' suite
/// reads its mustache specs from one. A submodule without its repository stays left out
/// by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submodule_the_checkout_holds_is_in_the_runs_tree() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let specs = TestRepo::new();
    specs.write("specs/one.txt", "from the submodule\n");
    specs.commit("the specs");
    let repo = TestRepo::new();
    repo.write(
        "test_specs.py",
        "def test_specs():\n    assert open('spec/lib/specs/one.txt').read() == 'from the submodule\\n'\n",
    );
    repo.commit("a test of the specs");
    let added = std::process::Command::new("git")
        .current_dir(repo.path())
        .args(["-c", "protocol.file.allow=always", "submodule", "add", "-q"])
        .arg(specs.path())
        .arg("spec/lib")
        .status()
        .expect("git submodule add");
    assert!(added.success());
    // git's own commit: the test repository's index reads the submodule as a folder.
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(repo.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_string()
    };
    git(&["commit", "-q", "-m", "the specs as a submodule"]);
    let commit = git(&["rev-parse", "HEAD"]);
    let record = sandbox
        .run(&RunRequest::new(
            repo.path(),
            &commit,
            Language::Python,
            support::pytest("test_specs.py"),
        ))
        .await
        .expect("runs");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}");
    assert!(
        record.tree.left_out.is_empty(),
        "{:?}",
        record.tree.left_out
    );
    // Without the submodule's repository: left out by name, and the test cannot read it.
    std::fs::remove_dir_all(repo.path().join(".git/modules")).expect("remove");
    let record = sandbox
        .run(&RunRequest::new(
            repo.path(),
            &commit,
            Language::Python,
            support::pytest("test_specs.py"),
        ))
        .await
        .expect("runs");
    assert_eq!(record.tree.left_out, ["spec/lib"]);
    assert_eq!(
        record.outcome,
        Outcome::TestFailed,
        "{}",
        support::output(&record)
    );
    assert_container_gone(&sandbox, &record).await;
}

/// A partial clone, or a mirror without its largest files: objects the tree names are not
/// in the store. The tests never read them, so the run goes on without them, and the record
/// names each one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_missing_from_the_store_are_left_out_by_name_and_the_tests_run() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = TestRepo::new();
    repo.write("calc.py", support::PYTHON_CLAMP_OK)
        .write(
            "test_calc.py",
            "from calc import clamp\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n",
        )
        .write(
            "data/huge.bin",
            "the largest file, absent from the mirror\n",
        )
        .write("data/small.txt", "kept\n")
        .write("docs/index.md", "a directory whose tree object is absent\n");
    let commit = repo.commit("tree");
    let git = git2::Repository::open(repo.path()).expect("open");
    let tree = git
        .revparse_single(&commit)
        .and_then(|o| o.peel_to_tree())
        .expect("tree");
    for path in ["data/huge.bin", "docs"] {
        let id = tree
            .get_path(std::path::Path::new(path))
            .expect("entry")
            .id()
            .to_string();
        let loose = repo
            .path()
            .join(".git/objects")
            .join(&id[..2])
            .join(&id[2..]);
        std::fs::remove_file(&loose).expect("remove the loose object");
    }
    let record = sandbox
        .run(&RunRequest::new(
            repo.path(),
            &commit,
            Language::Python,
            support::pytest("test_calc.py"),
        ))
        .await
        .expect("the run goes on without the missing objects");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}");
    assert_eq!(
        record.tree.missing,
        vec!["data/huge.bin".to_string(), "docs".to_string()]
    );
    assert!(
        record.tree.left_out.is_empty(),
        "{:?}",
        record.tree.left_out
    );
    assert_container_gone(&sandbox, &record).await;
}
