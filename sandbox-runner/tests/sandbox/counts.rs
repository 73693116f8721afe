//! A pass is a pass only when tests ran: a Prover test skipped on the base, or a test file
//! that collects nothing, is never `reproduced`, in each language; and the command selects
//! the Prover's tests by name, so a test the change breaks elsewhere in the package proves
//! nothing about this claim.

use proven_change::testing::TestRepo;
use proven_sandbox::{Language, NotProved, Outcome, Proof, RunRequest, Selection, Side};

use crate::support::{self, PYTHON_CLAMP_BUG, PYTHON_CLAMP_OK};

/// The Prover's test on both sides, with the command Proven builds for it.
async fn reproduce(
    language: Language,
    repo: &TestRepo,
    (base, change): (&str, &str),
    test: (&str, &str),
    names: &[&str],
) -> proven_sandbox::Reproduction {
    let sandbox = support::sandbox(&[language], |_| {}).await;
    let selection = Selection {
        path: test.0.into(),
        names: names.iter().map(|n| n.to_string()).collect(),
        package: None,
    };
    let run = language.test_run(&selection, 0);
    let mut request =
        RunRequest::new(repo.path(), base, language, run.command).with_file(test.0, test.1);
    for (k, v) in run.env {
        request = request.with_env(k, v);
    }
    let change = request.at_revision(change);
    sandbox.reproduce(&request, &change).await.expect("runs")
}

/// The change's run alone: it fails (so without the rule that a pass needs a test that ran,
/// the pair would have been a proof).
async fn assert_fails_on_the_change(
    language: Language,
    repo: &TestRepo,
    change: &str,
    test: (&str, &str),
    names: &[&str],
) {
    let sandbox = support::sandbox(&[language], |_| {}).await;
    let selection = Selection {
        path: test.0.into(),
        names: names.iter().map(|n| n.to_string()).collect(),
        package: None,
    };
    let run = language.test_run(&selection, 0);
    let mut request =
        RunRequest::new(repo.path(), change, language, run.command).with_file(test.0, test.1);
    for (k, v) in run.env {
        request = request.with_env(k, v);
    }
    let record = sandbox.run(&request).await.expect("run");
    assert_eq!(
        record.outcome,
        Outcome::TestFailed,
        "{}",
        support::output(&record)
    );
}

/// Not reproduced, because the base's run is no pass: no test ran there.
fn assert_no_test_ran_on_the_base(reproduction: &proven_sandbox::Reproduction, what: &str) {
    let base = &reproduction.base[0];
    match (&reproduction.proof, &base.outcome) {
        (
            Proof::NotProved {
                why:
                    NotProved::Incomplete {
                        side: Side::Base, ..
                    },
            },
            Outcome::EnvironmentError { reason },
        ) => assert!(
            reason.contains("no test ran") || reason.contains("collected no tests"),
            "{what}: {reason}"
        ),
        other => panic!(
            "{what}: expected no proof, the base running no test; got {other:?}\n{}",
            support::output(base)
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_a_test_skipped_on_the_base_or_collecting_nothing_proves_nothing() {
    let repo = TestRepo::new();
    repo.write("calc.py", PYTHON_CLAMP_OK);
    let base = repo.commit("base");
    repo.write("calc.py", PYTHON_CLAMP_BUG);
    let change = repo.commit("change");
    // Skipped exactly where it would pass: on the base it runs nothing, on the change it fails.
    let skipping = "import pytest\nfrom calc import clamp\n\ndef test_clamp():\n    if clamp(5, 0, 10) == 5:\n        pytest.skip('nothing to see')\n    assert clamp(5, 0, 10) == 5\n";
    let r = reproduce(
        Language::Python,
        &repo,
        (&base, &change),
        ("tests/test_skip.py", skipping),
        &[],
    )
    .await;
    assert_eq!(r.base[0].tests.map(|t| t.skipped), Some(1));
    assert_no_test_ran_on_the_base(&r, "python skip");
    assert_fails_on_the_change(
        Language::Python,
        &repo,
        &change,
        ("tests/test_skip.py", skipping),
        &[],
    )
    .await;
    let nothing = "from calc import clamp\n\ndef helper():\n    assert clamp(5, 0, 10) == 5\n";
    let r = reproduce(
        Language::Python,
        &repo,
        (&base, &change),
        ("tests/test_nothing.py", nothing),
        &[],
    )
    .await;
    assert_no_test_ran_on_the_base(&r, "python nothing collected");
}

const GO_MOD: &str = "module example.com/durations\n\ngo 1.19\n";
const GO_OK: &str = "package durations\n\nfunc Seconds(ms int) int {\n\treturn ms / 1000\n}\n\nfunc Minutes(ms int) int {\n\treturn ms / 60000\n}\n";
const GO_BUG: &str = "package durations\n\nfunc Seconds(ms int) int {\n\treturn ms / 1000\n}\n\nfunc Minutes(ms int) int {\n\treturn ms / 6000\n}\n";

fn go_project() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    // The package's own test of Minutes: the change breaks it.
    let own = "package durations\n\nimport \"testing\"\n\nfunc TestMinutes(t *testing.T) {\n\tif Minutes(120000) != 2 {\n\t\tt.Fatal(\"minutes\")\n\t}\n}\n";
    repo.write("go.mod", GO_MOD)
        .write("durations.go", GO_OK)
        .write("minutes_test.go", own);
    let base = repo.commit("base");
    repo.write("durations.go", GO_BUG);
    let change = repo.commit("change");
    (repo, base, change)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_a_test_skipped_on_the_base_or_collecting_nothing_proves_nothing() {
    let (repo, base, change) = go_project();
    let skipping = "package durations\n\nimport \"testing\"\n\nfunc TestProvenMinutes(t *testing.T) {\n\tif Minutes(60000) == 1 {\n\t\tt.Skip(\"nothing to see\")\n\t}\n\tt.Fatal(\"minutes are wrong\")\n}\n";
    let names = proven_sandbox::language::declared_tests(Language::Go, skipping);
    assert_eq!(names, ["TestProvenMinutes"]);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let r = reproduce(
        Language::Go,
        &repo,
        (&base, &change),
        ("proven_test.go", skipping),
        &names,
    )
    .await;
    assert_eq!(r.base[0].tests.map(|t| t.skipped), Some(1));
    assert_no_test_ran_on_the_base(&r, "go skip");
    assert_fails_on_the_change(
        Language::Go,
        &repo,
        &change,
        ("proven_test.go", skipping),
        &names,
    )
    .await;
    // A file that declares no test: the selection runs nothing.
    let nothing =
        "package durations\n\nfunc helper() int {\n\treturn Minutes(60000)\n}\n\nvar _ = helper\n";
    let r = reproduce(
        Language::Go,
        &repo,
        (&base, &change),
        ("proven_test.go", nothing),
        &["TestProvenNothing"],
    )
    .await;
    assert_no_test_ran_on_the_base(&r, "go nothing to run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_a_package_test_the_change_breaks_proves_nothing_about_another_claim() {
    let (repo, base, change) = go_project();
    // The Prover's claim is about Seconds, which the change leaves alone; the package's own
    // TestMinutes fails on the change, but the command runs only the Prover's test.
    let about_seconds = "package durations\n\nimport \"testing\"\n\nfunc TestProvenSeconds(t *testing.T) {\n\tif Seconds(2000) != 2 {\n\t\tt.Fatal(\"seconds\")\n\t}\n}\n";
    let r = reproduce(
        Language::Go,
        &repo,
        (&base, &change),
        ("proven_test.go", about_seconds),
        &["TestProvenSeconds"],
    )
    .await;
    assert_eq!(
        r.proof,
        Proof::NotProved {
            why: NotProved::PassesOnBoth
        },
        "{}",
        support::output(&r.change[0])
    );
    assert_eq!(
        r.change[0].tests.map(|t| (t.passed, t.failed)),
        Some((1, 0))
    );
    assert!(!support::output(&r.change[0]).contains("TestMinutes"));
}

const CARGO_TOML: &str = "[package]\nname = \"labels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const CARGO_LOCK: &str = "version = 4\n\n[[package]]\nname = \"labels\"\nversion = \"0.1.0\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_a_test_ignored_on_the_base_or_collecting_nothing_proves_nothing() {
    let repo = TestRepo::new();
    repo.write("Cargo.toml", CARGO_TOML)
        .write("Cargo.lock", CARGO_LOCK)
        .write(
            "src/lib.rs",
            "pub fn double(n: u32) -> u32 {\n    n * 2\n}\n",
        );
    let base = repo.commit("base");
    repo.write(
        "src/lib.rs",
        "pub fn double(n: u32) -> u32 {\n    n * 3\n}\n",
    );
    let change = repo.commit("change");
    // Every test ignored: libtest runs none of them (0 passed; 1 ignored).
    let ignored = "#[test]\n#[ignore]\nfn doubles() {\n    assert_eq!(labels::double(2), 4);\n}\n";
    let r = reproduce(
        Language::Rust,
        &repo,
        (&base, &change),
        ("tests/proven.rs", ignored),
        &[],
    )
    .await;
    assert_eq!(
        r.base[0].tests.map(|t| t.skipped),
        Some(1),
        "{}",
        support::output(&r.base[0])
    );
    assert_no_test_ran_on_the_base(&r, "rust ignored");
    let nothing = "fn helper() -> u32 {\n    labels::double(2)\n}\n\n#[allow(dead_code)]\nfn unused() {\n    let _ = helper();\n}\n";
    let r = reproduce(
        Language::Rust,
        &repo,
        (&base, &change),
        ("tests/proven.rs", nothing),
        &[],
    )
    .await;
    assert_no_test_ran_on_the_base(&r, "rust nothing collected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_a_test_skipped_on_the_base_or_collecting_nothing_proves_nothing() {
    let repo = TestRepo::new();
    repo.write("lib.js", "exports.double = (n) => n * 2;\n");
    let base = repo.commit("base");
    repo.write("lib.js", "exports.double = (n) => n * 3;\n");
    let change = repo.commit("change");
    let skipping = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { double } = require('../lib.js');\n\ntest('doubles', { skip: double(2) === 4 }, () => {\n  assert.strictEqual(double(2), 4);\n});\n";
    let r = reproduce(
        Language::Node,
        &repo,
        (&base, &change),
        ("test/proven.test.js", skipping),
        &[],
    )
    .await;
    assert_eq!(r.base[0].tests.map(|t| t.skipped), Some(1));
    assert_no_test_ran_on_the_base(&r, "node skip");
    assert_fails_on_the_change(
        Language::Node,
        &repo,
        &change,
        ("test/proven.test.js", skipping),
        &[],
    )
    .await;
    // A suite with no test in it: node reports 0 tests (a file without any test() call
    // would count as one test of its own, the file, by node's rules).
    let nothing = "const { describe } = require('node:test');\nconst { double } = require('../lib.js');\n\ndescribe('doubling', () => {\n  if (double(2) !== 4) { throw new Error('wrong'); }\n});\n";
    let r = reproduce(
        Language::Node,
        &repo,
        (&base, &change),
        ("test/proven.test.js", nothing),
        &[],
    )
    .await;
    assert_no_test_ran_on_the_base(&r, "node nothing collected");
}

/// A test that fills the scratch space fails with ENOSPC: that is the disk, not the code, so
/// even on the change it is an environment failure, and a pair with it is no proof.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enospc_inside_a_run_is_an_environment_failure_never_a_proof() {
    let sandbox = support::sandbox(&[Language::Python], |config| {
        config.limits.scratch_bytes = 32 << 20;
    })
    .await;
    let repo = TestRepo::new();
    repo.write("calc.py", "FILL = False\n");
    let base = repo.commit("base");
    repo.write("calc.py", "FILL = True\n");
    let change = repo.commit("change");
    // On the change the test writes past the scratch space and fails with ENOSPC.
    let test = "import calc\n\ndef test_fill():\n    if calc.FILL:\n        with open('big', 'wb') as f:\n            for _ in range(64):\n                f.write(b'x' * (1 << 20))\n";
    let run = Language::Python.test_run(
        &Selection {
            path: "tests/test_fill.py".into(),
            ..Selection::default()
        },
        0,
    );
    let base = RunRequest::new(repo.path(), &base, Language::Python, run.command)
        .with_file("tests/test_fill.py", test);
    let r = sandbox
        .reproduce(&base, &base.at_revision(&change))
        .await
        .expect("runs");
    assert_eq!(r.base[0].outcome, Outcome::Passed);
    let change_run = &r.change[0];
    assert_eq!(change_run.exit_code, Some(1), "pytest saw a failing test");
    assert_eq!(change_run.tests.map(|t| t.failed), Some(1));
    match &change_run.outcome {
        Outcome::EnvironmentError { reason } => assert!(reason.contains("ENOSPC"), "{reason}"),
        other => panic!("{other:?}\n{}", support::output(change_run)),
    }
    assert!(matches!(
        r.proof,
        Proof::NotProved {
            why: NotProved::Incomplete {
                side: Side::Change,
                ..
            }
        }
    ));
}

/// A tree larger than the scratch space it is copied into is refused before any run, by
/// name: it would fail copying, which is no test result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_over_the_scratch_space_is_refused_before_any_run() {
    let sandbox = support::sandbox(&[Language::Python], |config| {
        config.limits.scratch_bytes = 4 << 20;
    })
    .await;
    let repo = TestRepo::new();
    repo.write("calc.py", "X = 1\n")
        .write("data.bin", "x".repeat(5 << 20));
    let commit = repo.commit("a large tree");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        ["python3", "-m", "pytest", "-q"],
    );
    match sandbox.run(&request).await {
        Err(proven_sandbox::SandboxError::Request(
            proven_sandbox::RequestError::TreeOverScratch { scratch_bytes },
        )) => assert_eq!(scratch_bytes, 4 << 20),
        other => panic!("expected the tree to be refused: {other:?}"),
    }
    let message = proven_sandbox::RequestError::TreeOverScratch {
        scratch_bytes: 4 << 20,
    }
    .to_string();
    assert!(
        message.contains("PROVEN_SANDBOX_SCRATCH_BYTES"),
        "{message}"
    );
}
