//! Issue 31, must-show 1: a pull request cannot poison the prepared layer a later review
//! reuses. The attack: change a comment in the declarations (a new cache key) and put a
//! payload in a file the preparation used to run (what setup.py execs; a `build.rs`), so
//! that the layer made for that key makes every test pass. A later commit with the same
//! declarations, a clean tree and a real bug reuses that key's layer: it must still
//! reproduce the bug.

use proven_change::testing::TestRepo;
use proven_sandbox::{Language, Outcome, RunRecord, RunRequest};

use crate::support::{self, pytest};

const ADD_OK: &str = "def add(a, b):\n    return a + b\n";
const ADD_BUG: &str = "def add(a, b):\n    return a - b\n";
const TEST_ADD: &str = "from poisoned import add\n\ndef test_add():\n    assert add(2, 2) == 4\n";
const VERSION: &str = "__version__ = '1.0'\n";
/// Run by setup.py: a `.pth` in the environment that makes every Python exit 0 saying
/// "1 passed" (pytest included), wherever it can write one.
const PAYLOAD: &str = "__version__ = '1.0'\nimport glob, os\nfor d in glob.glob('/deps/venv/lib/python*/site-packages') + glob.glob('/proj/lib/python*/site-packages'):\n    try:\n        with open(os.path.join(d, 'aa_planted.pth'), 'w') as f:\n            f.write(\"import os; os.write(1, b'1 passed\\\\n'); os._exit(0)\\n\")\n    except OSError:\n        pass\n";

fn setup_py(marker: &str, comment: &str) -> String {
    format!(
        "# {marker} {comment}\nfrom setuptools import setup\nabout = {{}}\nexec(open('poisoned/_version.py').read(), about)\nsetup(name='poisoned', version=about['__version__'], packages=['poisoned'])\n"
    )
}

fn output(record: &RunRecord) -> String {
    support::output(record)
}

/// The attack's run made a new layer; the later run reused it (the same key, not prepared
/// again) and still failed its test, printing `failure`.
fn assert_the_bug_is_reproduced_in_the_attacks_layer(
    attacked: &RunRecord,
    reviewed: &RunRecord,
    failure: &str,
) {
    let first = attacked.dependencies.as_ref().expect("prepared");
    assert!(first.prepared_now, "the attack's key is new");
    let reused = reviewed.dependencies.as_ref().expect("prepared");
    assert_eq!(
        reused.key, first.key,
        "the later review reuses the attack's layer"
    );
    assert!(!reused.prepared_now);
    assert_eq!(
        reviewed.outcome,
        Outcome::TestFailed,
        "the bug is reproduced, whatever the attack left: {}",
        output(reviewed)
    );
    assert!(output(reviewed).contains(failure), "{}", output(reviewed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_cannot_poison_the_python_environment_of_a_later_review() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = TestRepo::new();
    let marker = support::unique();
    repo.write("setup.py", setup_py(&marker, ""))
        .write("poisoned/__init__.py", ADD_OK)
        .write("poisoned/_version.py", VERSION);
    let base = repo.commit("base");
    // The pull request: a comment in setup.py (a new key), a payload setup.py execs.
    repo.write("setup.py", setup_py(&marker, "reformatted"))
        .write("poisoned/_version.py", PAYLOAD);
    let attack = repo.commit("attack");
    // Later, force-pushed clean: the same declarations, and a real bug.
    repo.write("poisoned/_version.py", VERSION)
        .write("poisoned/__init__.py", ADD_BUG);
    let later = repo.commit("a real bug");
    let request = |revision: &str| {
        RunRequest::new(
            repo.path(),
            revision,
            Language::Python,
            pytest("test_add.py"),
        )
        .with_file("test_add.py", TEST_ADD)
        .for_tenant("acme")
        .for_repository("acme/poisoned")
    };
    let on_base = sandbox.run(&request(&base)).await.expect("run");
    assert_eq!(on_base.outcome, Outcome::Passed, "{}", output(&on_base));
    let attacked = sandbox.run(&request(&attack)).await.expect("run");
    let reviewed = sandbox.run(&request(&later)).await.expect("run");
    assert_the_bug_is_reproduced_in_the_attacks_layer(&attacked, &reviewed, "assert 0 == 4");
    let (first, reused) = (
        attacked.dependencies.as_ref().expect("prepared"),
        reviewed.dependencies.as_ref().expect("prepared"),
    );
    // The project layer is per tree: the attack's own never reaches another tree.
    assert_ne!(reused.project_layer, first.project_layer);
    assert!(reused.project_layer.is_some());
}

const MANIFEST: &str =
    "[package]\nname = \"forged\"\nversion = \"0.1.0\"\nedition = \"2021\"\nbuild = \"build.rs\"\n";
const LOCK: &str = "version = 4\n\n[[package]]\nname = \"forged\"\nversion = \"0.1.0\"\n";
const LIB_OK: &str = "pub fn double(n: u32) -> u32 {\n    n * 2\n}\n";
const LIB_BUG: &str = "pub fn double(n: u32) -> u32 {\n    n + 2\n}\n";
const BUILD_OK: &str = "fn main() {}\n";
/// A build script that makes cargo run every test binary through a script of its own,
/// which prints a passing summary: in the layer's cargo configuration, if it can write it.
const BUILD_PAYLOAD: &str = r##"use std::io::Write;
use std::os::unix::fs::PermissionsExt;
fn main() {
    let fake = "#!/bin/sh\necho 'running 1 test'\necho 'test double_doubles ... ok'\necho\necho 'test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out'\nexit 0\n";
    if std::fs::write("/deps/fake-test.sh", fake).is_ok() {
        let _ = std::fs::set_permissions("/deps/fake-test.sh", std::fs::Permissions::from_mode(0o755));
    }
    if let Ok(mut config) = std::fs::OpenOptions::new().append(true).open("/deps/cargo-config.toml") {
        let _ = writeln!(config, "\n[target.'cfg(unix)']\nrunner = \"/deps/fake-test.sh\"");
    }
}
"##;
const TEST_DOUBLE: &str =
    "#[test]\nfn double_doubles() {\n    assert_eq!(forged::double(5), 10);\n}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_build_script_cannot_poison_the_rust_layer_of_a_later_review() {
    let sandbox = support::sandbox(&[Language::Rust], |_| {}).await;
    let repo = TestRepo::new();
    let marker = support::unique();
    let manifest = |comment: &str| format!("# {marker} {comment}\n{MANIFEST}");
    repo.write("Cargo.toml", manifest(""))
        .write("Cargo.lock", LOCK)
        .write("build.rs", BUILD_OK)
        .write("src/lib.rs", LIB_OK);
    repo.commit("base");
    repo.write("Cargo.toml", manifest("reformatted"))
        .write("build.rs", BUILD_PAYLOAD);
    let attack = repo.commit("attack");
    repo.write("build.rs", BUILD_OK)
        .write("src/lib.rs", LIB_BUG);
    let later = repo.commit("a real bug");
    let command = ["cargo", "test", "--offline", "--test", "proof"];
    let request = |revision: &str| {
        RunRequest::new(repo.path(), revision, Language::Rust, command)
            .with_file("tests/proof.rs", TEST_DOUBLE)
            .for_tenant("acme")
            .for_repository("acme/forged")
    };
    let attacked = sandbox.run(&request(&attack)).await.expect("run");
    let reviewed = sandbox.run(&request(&later)).await.expect("run");
    assert_the_bug_is_reproduced_in_the_attacks_layer(&attacked, &reviewed, "left: 7");
}
