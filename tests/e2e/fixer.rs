//! The Fixer's proof against the package's other tests (DESIGN: "then the package's other
//! tests on change+patch"): the Prover's file is never part of that suite, so a project whose
//! suite lints every test file judges the patch and not the Prover's style; and a package
//! with no other test says so instead of claiming its tests passed.

use proven_change::testing::TestRepo;
use proven_models::scripted::ScriptedServer;
use proven_store::testing::Backend;
use serde_json::json;

use crate::agents::{agents, review_with, sides};
use crate::common::{Env, json as parse, text};

/// A Node package whose `npm test` lints every file of test/ (each must say "use strict",
/// as jshint's and ESLint's `strict` rule ask) before it runs them, and whose change turns
/// `add` into a subtraction. Its own test of `sub` follows the rule.
fn linted_node_package() -> (TestRepo, String) {
    let repo = TestRepo::new();
    let calc = |op: &str| {
        format!(
            "'use strict';\nexports.add = (a, b) => a {op} b;\nexports.sub = (a, b) => a - b;\n"
        )
    };
    repo.write(
        "package.json",
        r#"{"name": "calc", "version": "1.0.0", "private": true,
  "scripts": {"test": "node scripts/lint.js && node --test test/"}}
"#,
    )
    .write(
        "scripts/lint.js",
        "'use strict';\nconst fs = require('fs');\nconst path = require('path');\nlet bad = 0;\nfor (const f of fs.readdirSync('test')) {\n  const text = fs.readFileSync(path.join('test', f), 'utf8');\n  if (!text.startsWith(\"'use strict';\")) {\n    console.error('test/' + f + ': line 1: Missing \"use strict\" statement.');\n    bad += 1;\n  }\n}\nprocess.exit(bad ? 1 : 0);\n",
    )
    .write(
        "test/sub.test.js",
        "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { sub } = require('../calc');\n\ntest('sub subtracts', () => {\n  assert.strictEqual(sub(5, 3), 2);\n});\n",
    )
    .write("calc.js", calc("+"));
    let base = repo.commit("base");
    repo.write("calc.js", calc("-"));
    repo.commit("change: add subtracts");
    (repo, base)
}

fn script(server: &ScriptedServer) {
    // The Prover's style is not the project's: no "use strict".
    crate::agents::script_add_bug(
        server,
        "calc.js",
        json!({"test_path": "test/proven_add.test.js",
            "test_code": "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc');\n\ntest('add adds', () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n"}),
        json!({"edits": [{"path": "calc.js",
            "old_text": "exports.add = (a, b) => a - b;", "new_text": "exports.add = (a, b) => a + b;"}],
            "explanation": "add adds again"}),
    );
}

/// BugsJS's family (ESLint's `node Makefile.js test`, bower's `grunt test`): the project's
/// suite lints every test file, and the Prover's file is not in its style. The patch is
/// proved by the package's other tests, which run without it and pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_is_proved_by_the_packages_other_tests_where_its_suite_lints_every_test_file() {
    let (repo, base) = linted_node_package();
    let server = ScriptedServer::start().await;
    script(&server);
    let env = Env::new(Backend::Sqlite).await;
    let out = review_with(&mut agents(&env, &server), &repo, &base, "json");
    let doc = parse(&out);
    let f = &doc["findings"][0];
    assert_eq!(f["proof_level"], "reproduced", "{doc:#}");
    let patch = f["patch"]
        .as_object()
        .unwrap_or_else(|| panic!("the fix is proved: {f:#}"));
    assert_eq!(
        sides(&patch["runs"]),
        [
            ("change+patch", "passed"),
            ("change+patch", "passed"),
            ("change+patch", "passed")
        ],
        "{f:#}"
    );
    let suite = &patch["runs"][2];
    assert_eq!(
        suite["tests"]["passed"], 1,
        "the package's own test, without the Prover's: {suite:#}"
    );
    assert!(patch.get("no_other_tests").is_none(), "{f:#}");
    env.cleanup().await;
}

/// A package whose only test is the Prover's: its suite runs none, with the patch and on the
/// base alike. The patch rests on the finding's own test, and every format says so rather
/// than "so do the package's tests".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_in_a_package_with_no_other_test_says_so_in_every_format() {
    let (repo, base) = crate::agents::buggy_change();
    let (env, doc) = review_add_bug(&repo, &base).await;
    let f = &doc["findings"][0];
    let patch = &f["patch"];
    assert_eq!(patch["no_other_tests"], true, "{f:#}");
    let sides = sides(&patch["runs"]);
    assert_eq!(sides.len(), 4, "the suite on the base too: {sides:?}");
    assert_eq!(sides[3].0, "base");
    let id = doc["review_id"].as_str().expect("id");
    for format in ["text", "markdown", "html", "github"] {
        let shown = text(&env.run(&["show", id, "--format", format]))
            .0
            .replace("&#x27;", "'");
        assert!(
            shown.contains("the package has no other test that runs here"),
            "{format}: {shown}"
        );
        assert!(
            !shown.contains("so do the package's tests"),
            "{format}: {shown}"
        );
    }
    env.cleanup().await;
}

/// A package's suite has a budget of its own (`suite_timeout`: a suite is many tests, a
/// popular project's takes minutes on one CPU), which proven.yaml may lower: a suite killed
/// at it leaves the fix not proved, naming the setting (a suite that did not finish proves
/// nothing), when no test file imports what the patch edits to run in its place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_past_suite_timeout_leaves_the_fix_not_proved_by_name() {
    let repo = TestRepo::new();
    repo.write("proven.yaml", "suite_timeout: 2\n")
        .write("calc.py", "def add(a, b):\n    return a + b\n")
        .write(
            "tests/test_slow.py",
            "import time\n\ndef test_slow():\n    time.sleep(8)\n",
        );
    let base = repo.commit("base");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.commit("change");
    let (env, doc) = review_add_bug(&repo, &base).await;
    let f = &doc["findings"][0];
    assert_eq!(f["proof_level"], "reproduced", "{doc:#}");
    assert!(f.get("patch").is_none(), "{f:#}");
    let why = f["fix_not_proved"]["reason"].as_str().unwrap_or_default();
    assert!(
        why.contains("the package's tests ran past suite_timeout (2 s) and were killed"),
        "{f:#}"
    );
    // The Fixer's second try repeats the first's edits: the same runs on the same tree,
    // not run again (the suite would cost its whole budget twice).
    assert_eq!(f["fix_not_proved"]["attempts"], 2, "{f:#}");
    assert!(
        why.starts_with("the same edits as try 1, not run again: "),
        "{f:#}"
    );
    let trace = text(&env.run(&["trace", doc["review_id"].as_str().expect("id")])).0;
    let verdicts = trace
        .lines()
        .filter(|l| l.contains("\"fix_verdict\""))
        .count();
    assert_eq!(verdicts, 1, "one try ran in the sandbox: {trace}");
    assert!(trace.contains("\"fix_repeated\""), "{trace}");
    env.cleanup().await;
}

/// A package's suite has memory of its own (`sandbox.suite_memory_bytes`): a suite whose
/// tests hold more than one test run may (here 300 MiB against 192 MiB) proves the fix,
/// as its CI's runner, with several GiB, ran it; at one test's memory it was killed and
/// no fix was ever proved on such a project.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_that_needs_more_than_one_tests_memory_proves_the_fix() {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
        .write(
            "tests/test_big.py",
            "def test_holds_300_mib():\n    b = bytearray(300 << 20)\n    b[::4096] = b'x' * len(b[::4096])\n    assert len(b) == 300 << 20\n",
        );
    let base = repo.commit("base");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.commit("change");
    let server = ScriptedServer::start().await;
    crate::agents::script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        crate::agents::CONCEDE(),
    );
    let env = Env::new(Backend::Sqlite).await;
    let mut cmd = agents(&env, &server);
    cmd.env("PROVEN_SANDBOX_MEMORY_BYTES", (192u64 << 20).to_string())
        .env(
            "PROVEN_SANDBOX_SUITE_MEMORY_BYTES",
            (768u64 << 20).to_string(),
        );
    let doc = parse(&review_with(&mut cmd, &repo, &base, "json"));
    let f = &doc["findings"][0];
    assert_eq!(f["proof_level"], "reproduced", "{doc:#}");
    assert!(
        f.get("patch").is_some(),
        "the suite ran with the suite's memory and passed: {f:#}"
    );
    env.cleanup().await;
}

/// A module of the package's suite that pytest cannot collect in the sandbox (it needs
/// the network or a library at import, as httpie's and ansible's did) stops pytest 3's whole
/// session before any test, on the base as with the patch: no fix on such a project was ever
/// proved. The suite goes on past it; the module is an error by name on both sides, held to
/// the base's, and the package's other tests prove the fix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_the_suite_cannot_collect_on_either_side_leaves_the_rest_to_prove_the_fix() {
    let repo = TestRepo::new();
    repo.write(
        "calc.py",
        "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return -(b - a)\n",
    )
    .write(
        "tests/test_online.py",
        "import a_library_the_sandbox_has_not\n\ndef test_online():\n    pass\n",
    )
    .write(
        "tests/test_sub.py",
        "from calc import sub\n\ndef test_sub():\n    assert sub(5, 3) == 2\n",
    );
    let base = repo.commit("base");
    repo.write(
        "calc.py",
        "def add(a, b):\n    return a - b\n\ndef sub(a, b):\n    return -(b - a)\n",
    );
    repo.commit("change");
    let (env, doc) = review_add_bug(&repo, &base).await;
    let f = &doc["findings"][0];
    assert_eq!(f["proof_level"], "reproduced", "{doc:#}");
    assert!(
        f.get("patch").is_some(),
        "the suite ran past the module it cannot collect: {f:#}"
    );
    let shown = serde_json::to_string(&f["patch"]).expect("json");
    assert!(
        shown.contains("tests/test_online.py"),
        "the pre-existing error is named: {shown}"
    );
    env.cleanup().await;
}

/// `proven review` (JSON) of a change that makes calc.py's `add` subtract, every agent
/// scripted: the Prover's test of `add`, a conceding Skeptic, the Fixer's repair.
async fn review_add_bug(repo: &TestRepo, base: &str) -> (Env, serde_json::Value) {
    let server = ScriptedServer::start().await;
    crate::agents::script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        crate::agents::CONCEDE(),
    );
    let env = Env::new(Backend::Sqlite).await;
    let doc = parse(&crate::agents::review(&env, &server, repo, base, "json"));
    (env, doc)
}

/// Every format of the review says that of the package's tests only `file` ran.
fn every_format_names_the_nearest_tests(env: &Env, doc: &serde_json::Value, file: &str) {
    let id = doc["review_id"].as_str().expect("id");
    let words = proven_report::narrowed_words(&[file.to_string()]);
    for format in ["text", "markdown", "html", "github"] {
        let shown = text(&env.run(&["show", id, "--format", format]))
            .0
            .replace("&#x27;", "'")
            .replace("&#x2f;", "/")
            .replace("\\\\_", "_")
            .replace("\\_", "_");
        assert!(shown.contains(&words), "{format}: {shown}");
    }
}

/// The finding is reproduced and its patch proved by the base's tests nearest it (`file`),
/// run in place of a whole suite killed at `suite_timeout`: the proving test twice, the
/// whole suite killed, then the nearest tests.
fn proved_by_the_nearest_tests(doc: &serde_json::Value, file: &str) {
    let f = &doc["findings"][0];
    assert_eq!(f["proof_level"], "reproduced", "{doc:#}");
    let patch = f["patch"]
        .as_object()
        .unwrap_or_else(|| panic!("the tests nearest the patch prove the fix: {f:#}"));
    assert_eq!(patch["suite_narrowed_to"], json!([file]), "{f:#}");
    let outcomes: Vec<&str> = sides(&patch["runs"]).iter().map(|(_, o)| *o).collect();
    assert_eq!(outcomes.len(), 4, "{f:#}");
    assert_eq!(
        [outcomes[0], outcomes[1], outcomes[3]],
        ["passed", "passed", "passed"],
        "the proving test twice, the whole suite killed, then the nearest tests: {f:#}"
    );
    assert_ne!(outcomes[2], "passed", "{f:#}");
}

/// A whole suite that outlasts `suite_timeout` (keras's, sqlalchemy's on one CPU: no fix
/// there was ever proved): the test files that import what the patch edits run in its
/// place, within the suite's command, and prove the fix; every format says only they ran.
/// They are the base's: a test file the pull request adds is not one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_past_suite_timeout_gives_way_to_the_tests_that_import_what_the_patch_edits() {
    // A test the pull request plants beside its change is never one the fix is held to.
    let (repo, base) = crate::agents::slow_suite_change("suite_timeout: 20\n");
    let (env, doc) = review_add_bug(&repo, &base).await;
    proved_by_the_nearest_tests(&doc, "tests/test_arith.py");
    every_format_names_the_nearest_tests(&env, &doc, "tests/test_arith.py");
    env.cleanup().await;
}

/// Go's part of the family above: a module whose whole `go test ./...` outlasts
/// `suite_timeout` (one package's test sleeps past it) holds the patch to the tests of the
/// package it edits, run by package as `go test` runs them; every format says only they
/// ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_go_suite_past_suite_timeout_gives_way_to_the_tests_of_the_package_the_patch_edits() {
    let calc = |op: &str| {
        format!(
            "package calc\n\nfunc Add(a, b int) int {{\n\treturn a {op} b\n}}\n\nfunc Sub(a, b int) int {{\n\treturn a - b\n}}\n"
        )
    };
    let repo = TestRepo::new();
    repo.write("proven.yaml", "suite_timeout: 20\n")
        .write("go.mod", "module example.com/calc\n\ngo 1.21\n")
        .write("calc.go", calc("+"))
        .write(
            "calc_sub_test.go",
            "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(5, 3) != 2 {\n\t\tt.Fatal(Sub(5, 3))\n\t}\n}\n",
        )
        .write(
            "slow/slow_test.go",
            "package slow\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestSlow(t *testing.T) {\n\ttime.Sleep(90 * time.Second)\n}\n",
        );
    let base = repo.commit("base");
    repo.write("calc.go", calc("-"));
    repo.commit("change: add subtracts");
    let server = ScriptedServer::start().await;
    crate::agents::script_add_bug(
        &server,
        "calc.go",
        json!({"test_path": "calc_add_proven_test.go",
            "test_code": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(Add(2, 3))\n\t}\n}\n",
            "tests": ["TestAdd"]}),
        json!({"edits": [{"path": "calc.go", "old_text": "return a - b\n}\n\nfunc Sub", "new_text": "return a + b\n}\n\nfunc Sub"}],
            "explanation": "add adds again"}),
    );
    let env = Env::new(Backend::Sqlite).await;
    let doc = parse(&review_with(
        &mut agents(&env, &server),
        &repo,
        &base,
        "json",
    ));
    proved_by_the_nearest_tests(&doc, "calc_sub_test.go");
    every_format_names_the_nearest_tests(&env, &doc, "calc_sub_test.go");
    env.cleanup().await;
}

/// Rust's part of the family: a workspace whose whole `cargo test` outlasts
/// `suite_timeout` (one member's test sleeps past it) holds the patch to the tests of the
/// member it edits, run by package (`cargo test -p`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_suite_past_suite_timeout_gives_way_to_the_tests_of_the_member_the_patch_edits() {
    let lib = |op: &str| {
        format!(
            "pub fn add(a: i64, b: i64) -> i64 {{\n    a {op} b\n}}\n\npub fn sub(a: i64, b: i64) -> i64 {{\n    a - b\n}}\n"
        )
    };
    let repo = TestRepo::new();
    repo.write("proven.yaml", "suite_timeout: 60\n")
        .write(
            "Cargo.toml",
            "[workspace]\nmembers = [\"calc\", \"slow\"]\nresolver = \"2\"\n",
        )
        .write(
            "calc/Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .write("calc/src/lib.rs", lib("+"))
        .write(
            "calc/tests/sub.rs",
            "#[test]\nfn subs() {\n    assert_eq!(calc::sub(5, 3), 2);\n}\n",
        )
        .write(
            "slow/Cargo.toml",
            "[package]\nname = \"slow\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .write("slow/src/lib.rs", "")
        .write(
            "slow/tests/slow.rs",
            "#[test]\nfn sleeps() {\n    std::thread::sleep(std::time::Duration::from_secs(300));\n}\n",
        );
    let base = repo.commit("base");
    repo.write("calc/src/lib.rs", lib("-"));
    repo.commit("change: add subtracts");
    let server = ScriptedServer::start().await;
    crate::agents::script_add_bug(
        &server,
        "calc/src/lib.rs",
        json!({"test_path": "calc/tests/proven_add.rs",
            "test_code": "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 3), 5);\n}\n",
            "tests": ["adds"]}),
        json!({"edits": [{"path": "calc/src/lib.rs", "old_text": "    a - b\n}\n\npub fn sub", "new_text": "    a + b\n}\n\npub fn sub"}],
            "explanation": "add adds again"}),
    );
    let env = Env::new(Backend::Sqlite).await;
    let doc = parse(&review_with(
        &mut agents(&env, &server),
        &repo,
        &base,
        "json",
    ));
    proved_by_the_nearest_tests(&doc, "calc/tests/sub.rs");
    env.cleanup().await;
}

/// One test of the package's suite that never ends (keras' worker forked beside
/// TensorFlow's threads, a luigi multiprocessing test waiting on its children) took the
/// whole `suite_timeout`, on every try: no fix on such a project was ever proved. Within a
/// whole suite each test has its own time (`sandbox.suite_test_timeout_seconds`): the one
/// that hangs is stopped, an error by name on both sides, held to the base's, and the rest
/// of the suite proves the fix, unittest's cases as pytest's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_never_ends_is_stopped_and_the_rest_of_the_suite_proves_the_fix() {
    let repo = TestRepo::new();
    repo.write("proven.yaml", "suite_timeout: 40\n")
        .write("requirements.txt", "six\n")
        .write("calc.py", "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return -(b - a)\n")
        .write(
            "tests/test_hangs.py",
            "import time\nimport unittest\n\n\ndef test_waits_forever():\n    time.sleep(10 ** 6)\n\n\nclass Waits(unittest.TestCase):\n    def test_forever_too(self):\n        time.sleep(10 ** 6)\n",
        )
        .write(
            "tests/test_sub.py",
            "from calc import sub\n\ndef test_sub():\n    assert sub(5, 3) == 2\n",
        );
    let base = repo.commit("base");
    repo.write(
        "calc.py",
        "def add(a, b):\n    return a - b\n\ndef sub(a, b):\n    return -(b - a)\n",
    );
    repo.commit("change");
    let server = ScriptedServer::start().await;
    crate::agents::script(
        &server,
        "def test_add():\n    assert add(2, 3) == 5\n",
        crate::agents::CONCEDE(),
    );
    let env = Env::new(Backend::Sqlite).await;
    let mut cmd = agents(&env, &server);
    cmd.env("PROVEN_SANDBOX_SUITE_TEST_TIMEOUT_SECONDS", "3");
    let doc = parse(&review_with(&mut cmd, &repo, &base, "json"));
    let f = &doc["findings"][0];
    assert_eq!(f["proof_level"], "reproduced", "{doc:#}");
    let patch = f["patch"]
        .as_object()
        .unwrap_or_else(|| panic!("the rest of the suite proves the fix: {f:#}"));
    let held: Vec<&str> = patch["failing_on_base_too"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        held.len(),
        2,
        "both tests that hang, stopped on both sides: {f:#}"
    );
    assert!(
        held.iter().any(|t| t.contains("test_waits_forever"))
            && held.iter().any(|t| t.contains("test_forever_too")),
        "{f:#}"
    );
    env.cleanup().await;
}
