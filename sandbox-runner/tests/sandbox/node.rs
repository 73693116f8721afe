//! Must-show 2 (Node): `node --test` with an npm dependency installed (scripts off) before
//! the no-network run reproduces a bug; a test file that cannot load proves nothing.

use proven_change::testing::TestRepo;
use proven_sandbox::{Language, NotProved, Outcome, Proof, RunRequest};

use crate::support::{self, assert_container_gone};

const PACKAGE: &str = r#"{"name":"timeouts","version":"1.0.0","private":true,"dependencies":{"ms":"2.1.3"}}
"#;
const LOCK: &str = r#"{
  "name": "timeouts",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "timeouts",
      "version": "1.0.0",
      "dependencies": {
        "ms": "2.1.3"
      }
    },
    "node_modules/ms": {
      "version": "2.1.3",
      "resolved": "https://registry.npmjs.org/ms/-/ms-2.1.3.tgz",
      "integrity": "sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA==",
      "license": "MIT"
    }
  }
}
"#;
const LIB_OK: &str = "const ms = require('ms');\nexports.seconds = (text) => ms(text) / 1000;\n";
const LIB_BUG: &str = "const ms = require('ms');\nexports.seconds = (text) => ms(text) / 100;\n";
const TEST: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { seconds } = require('../lib.js');\n\ntest('two seconds', () => {\n  assert.strictEqual(seconds('2s'), 2);\n});\n";

fn project() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("package.json", PACKAGE)
        .write("package-lock.json", LOCK)
        .write("lib.js", LIB_OK);
    let base = repo.commit("base");
    repo.write("lib.js", LIB_BUG);
    let change = repo.commit("change: wrong unit");
    (repo, base, change)
}

/// A sandbox offered the local images of these Node majors (`proven-sandbox-nodeNN:local`),
/// each built first where it is missing.
async fn node_sandbox(majors: &[&str]) -> proven_sandbox::Sandbox {
    let sandbox = support::sandbox(&[Language::Node], |config| {
        config.node_images = majors
            .iter()
            .map(|m| (m.to_string(), format!("proven-sandbox-node{m}:local")))
            .collect();
    })
    .await;
    for m in majors {
        let image = format!("proven-sandbox-node{m}:local");
        if sandbox.docker().inspect_image(&image).await.is_err() {
            proven_sandbox::images::build_local_named(&[&format!("node{m}")])
                .await
                .expect("the Node image builds");
        }
    }
    sandbox
}

/// The prepared dependencies of a run that passed; the run's output and them in the
/// message when it did not.
fn passed_with_deps(record: &proven_sandbox::RunRecord) -> &proven_sandbox::DependencyRecord {
    let deps = record.dependencies.as_ref().expect("prepared node_modules");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}\n{deps:#?}",
        support::output(record)
    );
    deps
}

/// The run of TEST (`seconds` of lib.js, through `ms`) added to `repo` at `commit`.
fn seconds_test(repo: &TestRepo, commit: &str) -> RunRequest {
    RunRequest::new(
        repo.path(),
        commit,
        Language::Node,
        node_test("test/seconds.test.js"),
    )
    .with_file("test/seconds.test.js", TEST)
}

fn node_test(file: &str) -> Vec<String> {
    vec![
        "node".into(),
        "--test".into(),
        "--test-reporter=tap".into(),
        file.into(),
    ]
}

/// The run of `test`, added to `repo` at `commit` as `path`, by `node --test`.
async fn run_test_file(
    sandbox: &proven_sandbox::Sandbox,
    repo: &TestRepo,
    commit: &str,
    path: &str,
    test: &str,
) -> proven_sandbox::RunRecord {
    sandbox
        .run(
            &RunRequest::new(repo.path(), commit, Language::Node, node_test(path))
                .with_file(path, test),
        )
        .await
        .expect("run")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_test_with_an_npm_dependency_reproduces_a_bug() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let (repo, base, change) = project();
    let base = RunRequest::new(
        repo.path(),
        base,
        Language::Node,
        node_test("test/seconds.test.js"),
    )
    .with_file("test/seconds.test.js", TEST);
    let reproduction = sandbox
        .reproduce(&base, &base.at_revision(change))
        .await
        .expect("runs");
    assert_eq!(
        reproduction.proof,
        Proof::Reproduced,
        "base: {}\nchange: {}",
        support::output(&reproduction.base[0]),
        support::output(&reproduction.change[0]),
    );
    let deps = reproduction.base[0]
        .dependencies
        .as_ref()
        .expect("prepared node_modules");
    assert_eq!(deps.lock_files, ["package-lock.json", "package.json"]);
    // One preparation, keyed by the lock file: every other run reads it from the cache.
    let all: Vec<_> = reproduction
        .base
        .iter()
        .chain(&reproduction.change)
        .map(|r| r.dependencies.as_ref().expect("prepared"))
        .collect();
    assert!(all.iter().all(|d| d.key == deps.key), "one cache entry");
    assert!(all.iter().filter(|d| d.prepared_now).count() <= 1);
    for record in reproduction.base.iter().chain(&reproduction.change) {
        assert_container_gone(&sandbox, record).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_file_that_cannot_load_proves_nothing() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let (repo, base, change) = project();
    // Fails (exit 1) on both sides, but as a load failure, not as a test's assertion.
    let broken = "const { seconds } = require('../lib.js');\nthis is not javascript\n";
    let base = RunRequest::new(
        repo.path(),
        base,
        Language::Node,
        node_test("test/broken.test.js"),
    )
    .with_file("test/broken.test.js", broken);
    let reproduction = sandbox
        .reproduce(&base, &base.at_revision(change))
        .await
        .expect("runs");
    let run = &reproduction.base[0];
    assert_eq!(run.exit_code, Some(1));
    assert!(
        matches!(run.outcome, Outcome::EnvironmentError { .. }),
        "{:?}\n{}",
        run.outcome,
        support::output(run)
    );
    assert!(matches!(
        reproduction.proof,
        Proof::NotProved {
            why: NotProved::Incomplete { .. }
        }
    ));
}

/// Issue 16: a project whose tests load what its `pretest` script builds (yargs compiles
/// TypeScript there) runs its documented suite as `npm test` would: the pretest first,
/// then the test script; without the pretest the test file cannot load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_suite_runs_the_pretest_build_first() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"built","version":"1.0.0","private":true,"scripts":{"pretest":"node build.js","test":"node --test test/","posttest":"exit 7"}}
"#,
    )
    .write(
        "build.js",
        "require('fs').mkdirSync('build', {recursive: true});\nrequire('fs').writeFileSync('build/lib.js', 'exports.answer = () => 42;\\n');\n",
    )
    .write(
        "test/answer.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst { answer } = require('../build/lib.js');\n\ntest('answers', () => {\n  assert.strictEqual(answer(), 42);\n});\n",
    );
    let head = repo.commit("a built library");
    let record = documented_suite_passes_one_test(&sandbox, &repo, &head).await;
    assert_container_gone(&sandbox, &record).await;
}

/// isaacs/node-lru-cache's family: tap 18 and later, configured with a plugin no manifest
/// lists (`.taprc`: `plugin: ["@tapjs/clock"]`), installs it from the registry and builds
/// its Test class into its own package when it starts; a run has neither the network nor a
/// writable layer, and tap stopped before any test. The preparation installs the plugin
/// release tap would (the one whose `@tapjs/core` peer is the project's) and builds the
/// class, so the test that uses `t.clock` runs and passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tap_plugin_the_project_configures_is_installed_and_built_before_the_run() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"clocked","version":"1.0.0","private":true,"scripts":{"test":"tap"},"devDependencies":{"tap":"21.8.0"}}
"#,
    )
    .write(".taprc", "# vim: set filetype=yaml :\nplugin:\n  - \"@tapjs/clock\"\n")
    .write(
        "lib.js",
        "exports.later = (fn, ms) => setTimeout(fn, ms);\n",
    )
    .write(
        "test/later.test.js",
        "const t = require('tap');\nconst { later } = require('../lib.js');\n\nt.test('fires on time', (t) => {\n  t.clock.enter();\n  let fired = false;\n  later(() => { fired = true; }, 1000);\n  t.clock.advance(999);\n  t.notOk(fired);\n  t.clock.advance(1);\n  t.ok(fired);\n  t.clock.exit();\n  t.end();\n});\n",
    );
    let head = repo.commit("a tap suite with the clock plugin");
    let record = documented_suite_run(&sandbox, &repo, &head).await;
    let deps = passed_with_deps(&record);
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("tap's Test class built")),
        "{deps:#?}"
    );
    assert!(deps.not_prepared.is_empty(), "{deps:#?}");
    assert_container_gone(&sandbox, &record).await;
}

/// mozilla/nunjucks' family: module-alias (before 2.2) finds the project's package.json
/// as the folder above the node_modules that holds it, by its own real path. The run's
/// node_modules linked it to the read-only layer, so it read `/deps/package.json`, which is
/// no project, and the build stopped ("Unable to read /deps/package.json"). Such a package
/// is a copy in the run's node_modules, and finds the tree's `_moduleAliases`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_package_that_finds_the_project_by_its_own_place_finds_the_tree() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"aliased","version":"1.0.0","private":true,"scripts":{"test":"node --test"},"dependencies":{"module-alias":"2.1.0"},"_moduleAliases":{"@lib":"lib"}}
"#,
    )
    .write("lib/answer.js", "exports.answer = () => 42;\n")
    .write(
        "test/answer.test.js",
        "require('module-alias/register');\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { answer } = require('@lib/answer');\n\ntest('answers through the alias', () => {\n  assert.strictEqual(answer(), 42);\n});\n",
    );
    let head = repo.commit("a project that requires through module-alias");
    documented_suite_passes_one_test(&sandbox, &repo, &head).await;
}

/// A CI runner sets no `NODE_ENV`, and tools choose by it: babel's `.babelrc` `env`
/// (`BABEL_ENV || NODE_ENV || "development"`), webpack's mode. validator.js keeps the preset
/// that compiles its build script's `import`s under `env.development`; with the images'
/// `NODE_ENV=test` no preset applied, and its build stopped at `import pkg from
/// './package.json'` before any test ran. Here the build reads its settings the way babel
/// does, and the test needs the development ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suite_runs_without_a_node_env_as_on_a_ci_runner() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"envbuilt","version":"1.0.0","private":true,"scripts":{"pretest":"node build.js","test":"node --test test/"}}
"#,
    )
    .write(
        "settings.json",
        r#"{"env": {"development": {"answer": 42}, "es": {"answer": 0}}}
"#,
    )
    .write(
        "build.js",
        "const fs = require('fs');
const name = process.env.BABEL_ENV || process.env.NODE_ENV || 'development';
const chosen = JSON.parse(fs.readFileSync('settings.json', 'utf8')).env[name] || {};
fs.mkdirSync('build', {recursive: true});
fs.writeFileSync('build/lib.js', `exports.answer = () => ${JSON.stringify(chosen.answer)}; exports.env = ${JSON.stringify(name)};\n`);
",
    )
    .write(
        "test/answer.test.js",
        "const test = require('node:test');
const assert = require('node:assert');
const lib = require('../build/lib.js');

test('built with the development settings', () => {
  assert.strictEqual(lib.env, 'development');
  assert.strictEqual(lib.answer(), 42);
});
",
    );
    let head = repo.commit("a build that reads its settings by NODE_ENV");
    documented_suite_passes_one_test(&sandbox, &repo, &head).await;
}

/// A test run has no network: a test that installs from the registry (pino's smoke test
/// packs the project and runs `npm install` of the tarball) fails at once, naming
/// `getaddrinfo`, where npm's own retries held it, package after package, until the
/// suite's timeout killed the whole run and every other test's result with it. The suite
/// finishes, and the test that needed the network fails by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_installs_from_the_registry_fails_at_once_without_a_network() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"installs","version":"1.0.0","private":true,"scripts":{"test":"node --test test/"}}
"#,
    )
    .write(
        "test/install.test.js",
        "const test = require('node:test');
const assert = require('node:assert');
const { execSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

test('npm gives up on the registry at once', () => {
  assert.strictEqual(execSync('npm config get fetch-retries').toString().trim(), '0');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smoke-'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{\"name\":\"smoke\",\"version\":\"1.0.0\"}');
  let failed = '';
  try {
    execSync('npm install --no-audit --no-fund left-pad@1.3.0', { cwd: dir, stdio: 'pipe' });
  } catch (e) {
    failed = String(e.stderr);
  }
  assert.match(failed, /EAI_AGAIN|ENOTFOUND|ENETUNREACH/);
});

test('the rest of the suite', () => {
  assert.strictEqual(1 + 1, 2);
});
",
    );
    let head = repo.commit("a test that installs from the registry");
    let record = documented_suite_run(&sandbox, &repo, &head).await;
    assert!(!record.timed_out, "{}", support::output(&record));
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    assert_eq!(record.tests.map(|t| t.passed), Some(2));
}

/// A stand-in for jest's CLI whose tests left a handle open, as jest in band behaves: its
/// summary, its exit code set on `exit` (as jest-cli's `readResultsAndExit` does), the
/// handle, and one second later its warning that it did not exit.
const LEAKING_JEST: &str = r#"#!/usr/bin/env node
const failed = process.argv.includes('--fail');
console.log(failed ? 'FAIL test/a.test.js' : 'PASS test/a.test.js');
console.log('Test Suites: 1 ' + (failed ? 'failed' : 'passed') + ', 1 total');
console.log(failed ? 'Tests:       1 failed, 1 passed, 2 total' : 'Tests:       2 passed, 2 total');
console.log('Ran all test suites.');
process.on('exit', () => { if (failed) process.exitCode = 1; });
setInterval(() => {}, 1000);
setTimeout(() => {
  console.warn('Jest did not exit one second after the test run has completed.',
    "\n\n'This usually means that there are asynchronous operations that weren't stopped in your tests.");
}, 1000).unref();
"#;

/// jest runs in band on the sandbox's CPUs (one worker), where the project's CI runs
/// workers: a handle a test left open then kept jest's process alive until the run's
/// timeout (winston's tail-file test), where on CI jest force-exits the worker. Once jest
/// says its run is over, the run ends with jest's own code: passed, or failed with its
/// failing test; the next command of the suite runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jest_that_says_its_run_is_over_exits_with_its_code_though_a_test_left_a_handle_open() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    for (args, outcome, counts) in [
        ("", Outcome::Passed, (4, 0)),
        (" --fail", Outcome::TestFailed, (3, 1)),
    ] {
        let repo = TestRepo::new();
        repo.write("tools/jest", LEAKING_JEST);
        let head = repo.commit("a test runner whose tests left a handle open");
        // The suite's two commands, as Proven chains a suite's steps.
        let script = format!(
            "failed=0; node tools/jest{args} || failed=1; node tools/jest || failed=1; exit $failed"
        );
        let request = RunRequest::new(
            repo.path(),
            &head,
            Language::Node,
            vec!["sh".into(), "-c".into(), script],
        )
        .with_timeout(std::time::Duration::from_secs(60));
        let record = sandbox.run(&request).await.expect("runs");
        let output = support::output(&record);
        assert!(!record.timed_out, "{args}: held to the timeout: {output}");
        assert!(output.contains("proven: jest's run is over"), "{output}");
        assert_eq!(record.outcome, outcome, "{args}: {output}");
        assert_eq!(
            record.tests.map(|t| (t.passed, t.failed)),
            Some(counts),
            "{args}: the next command ran: {output}"
        );
    }
}

/// What the sandbox loads into every Node process is no part of the project's coverage: a
/// suite that checks its coverage (nanoid's `node --test --experimental-test-coverage` at a
/// 100 % threshold) measures the project's files alone, as on its CI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandboxs_own_node_code_is_no_part_of_the_projects_coverage() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write("index.js", "exports.twice = (n) => n * 2;\n").write(
        "test/twice.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\ntest('twice', () => {\n  assert.strictEqual(require('../index.js').twice(2), 4);\n});\n",
    );
    let head = repo.commit("a project whose suite reports its coverage");
    let request = RunRequest::new(
        repo.path(),
        &head,
        Language::Node,
        ["node", "--test", "--experimental-test-coverage", "test/"]
            .map(String::from)
            .to_vec(),
    );
    let record = sandbox.run(&request).await.expect("runs");
    let output = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{output}");
    assert!(output.contains("index.js"), "a coverage report: {output}");
    assert!(!output.contains("jest-exit"), "{output}");
}

/// A step of the suite that needs the network, after tests that all pass (pino's smoke
/// test installs the packed project from the registry), fails the run without a failing
/// test: the record says the run needed the network, which a test run does not have, where
/// it said only npm's last line (`A complete log of this run can be found in …`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_step_that_needs_the_network_is_named_for_it() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"smoke","version":"1.0.0","private":true,"scripts":{"test":"node --test test/ && node smoke.js"}}
"#,
    )
    .write(
        "smoke.js",
        "const { execSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smoke-'));
fs.writeFileSync(path.join(dir, 'package.json'), '{\"name\":\"smoke-install\",\"version\":\"1.0.0\"}');
execSync('npm install --no-audit --no-fund left-pad@1.3.0', { cwd: dir, stdio: 'inherit' });
",
    )
    .write(
        "test/add.test.js",
        "const test = require('node:test');
const assert = require('node:assert');
test('adds', () => assert.strictEqual(1 + 1, 2));
",
    );
    let head = repo.commit("a smoke step that installs from the registry");
    let record = documented_suite_run(&sandbox, &repo, &head).await;
    assert!(!record.timed_out, "{}", support::output(&record));
    assert_eq!(record.tests.map(|t| (t.passed, t.failed)), Some((1, 0)));
    let Outcome::EnvironmentError { reason } = &record.outcome else {
        panic!("{:?}: {}", record.outcome, support::output(&record));
    };
    assert!(
        reason.contains("but the runner reported no failing test")
            && reason.contains("the run needed the network"),
        "{reason}"
    );
}

/// A test the Prover writes runs after what the suite runs before its runner, as the
/// project's own tests do (bower's Gruntfile makes the git repositories its tests fetch
/// from in `exec:assets`; here `pretest` builds what the test loads): without that setup
/// the test cannot load on the base, and nothing is proved. A setup that fails does not
/// stop a test that needs none of it, and the run's stderr says it failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selected_test_runs_after_the_suites_setup() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    let package = |pretest: &str| {
        format!(
            r#"{{"name":"built","version":"1.0.0","private":true,"scripts":{{"pretest":"{pretest}","test":"node --test test/"}}}}
"#
        )
    };
    repo.write("package.json", package("node build.js")).write(
        "build.js",
        "require('fs').mkdirSync('build', {recursive: true});
require('fs').writeFileSync('build/lib.js', 'exports.answer = () => 42;\\n');\n",
    );
    let built = repo.commit("a built library");
    repo.write("package.json", package("node build.js && exit 3"));
    let failing = repo.commit("a setup that fails after building");
    let run = |commit: &str, pretest: &str, path: &str, test: &str| {
        let text = package(pretest);
        let suite = proven_sandbox::suite::documented_suite(Language::Node, &|p: &str| {
            (p == "package.json").then(|| text.clone())
        });
        let selected = suite.select(
            Language::Node,
            &proven_sandbox::Selection {
                path: path.into(),
                names: Vec::new(),
                package: None,
            },
            0,
        );
        let mut request = RunRequest::new(repo.path(), commit, Language::Node, selected.command)
            .with_file(path, test);
        for (k, v) in selected.env {
            request = request.with_env(k, v);
        }
        request
    };
    let loads = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { answer } = require('../build/lib.js');\n\ntest('answers', () => {\n  assert.strictEqual(answer(), 42);\n});\n";
    let record = sandbox
        .run(&run(&built, "node build.js", "test/prover.test.js", loads))
        .await
        .expect("runs");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    assert_eq!(record.tests.map(|t| t.passed), Some(1));

    let plain = "const test = require('node:test');\nconst assert = require('node:assert');\n\ntest('adds', () => {\n  assert.strictEqual(1 + 1, 2);\n});\n";
    let record = sandbox
        .run(&run(
            &failing,
            "node build.js && exit 3",
            "test/plain.test.js",
            plain,
        ))
        .await
        .expect("runs");
    let output = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{output}");
    assert!(
        output.contains(
            "proven: the suite's setup before its tests failed (package.json scripts.pretest)"
        ),
        "{output}"
    );
}

/// vite's family: the project's CI builds (`npm run build`) before `npm test`, whose tests
/// load what the build wrote; `npm test` alone never builds, so the suite at head failed to
/// load them. The documented suite runs the build its CI runs before the tests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_suite_runs_the_build_its_ci_runs_before_the_tests() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"built","version":"1.0.0","private":true,"scripts":{"build":"node build.js","test":"node --test test/"}}
"#,
    )
    .write(
        ".github/workflows/ci.yml",
        "name: CI\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: npm ci\n      - name: Build\n        run: npm run build\n      - run: npm test\n",
    )
    .write(
        "build.js",
        "require('fs').mkdirSync('dist', {recursive: true});\nrequire('fs').writeFileSync('dist/lib.js', 'exports.answer = () => 42;\\n');\n",
    )
    .write(
        "test/answer.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst { answer } = require('../dist/lib.js');\n\ntest('answers', () => {\n  assert.strictEqual(answer(), 42);\n});\n",
    );
    let head = repo.commit("a library its CI builds before testing");
    documented_suite_passes_one_test(&sandbox, &repo, &head).await;
}

/// A project's CI runs `prepare` in a git checkout, with `CI` set: a hooks installer there
/// (axios' `husky install && npx husky set …`) writes into `.git`, and the tests may read
/// `CI` (vue's time limits are wider on CI). The run's copy of the tree has no `.git`: it is
/// made an empty repository before `prepare`, and every run has `CI=true`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_suite_prepares_in_a_git_repository_and_runs_as_on_ci() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"hooked","version":"1.0.0","private":true,"scripts":{"prepare":"git config core.hooksPath .hooks && mkdir -p .hooks","test":"node --test test/"}}
"#,
    )
    .write(
        "test/ci.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst fs = require('node:fs');\n\n\
         test('prepared as on CI', () => {\n  assert.strictEqual(process.env.CI, 'true');\n  assert.ok(fs.existsSync('.hooks'));\n});\n",
    );
    let head = repo.commit("a project whose prepare installs hooks");
    documented_suite_passes_one_test(&sandbox, &repo, &head).await;
}

/// The tree's documented suite (`proven_sandbox::suite::documented_suite`), run with its
/// variables at `head`: it passes, one test.
async fn documented_suite_passes_one_test(
    sandbox: &proven_sandbox::Sandbox,
    repo: &TestRepo,
    head: &str,
) -> proven_sandbox::RunRecord {
    let record = documented_suite_run(sandbox, repo, head).await;
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    assert_eq!(record.tests.map(|t| t.passed), Some(1));
    record
}

/// The run of the suite the tree at `head` documents, as a review runs it.
async fn documented_suite_run(
    sandbox: &proven_sandbox::Sandbox,
    repo: &TestRepo,
    head: &str,
) -> proven_sandbox::RunRecord {
    // A file's text, or a folder's file names (`DIR/`), as a review reads the tree.
    let files = |path: &str| match path.strip_suffix('/') {
        Some(dir) => std::fs::read_dir(repo.path().join(dir))
            .ok()
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        None => std::fs::read_to_string(repo.path().join(path)).ok(),
    };
    let suite = proven_sandbox::suite::documented_suite(Language::Node, &files);
    let mut request = RunRequest::new(repo.path(), head, Language::Node, suite.run.command);
    for (k, v) in suite.run.env {
        request = request.with_env(k, v);
    }
    sandbox.run(&request).await.expect("runs")
}

/// pnpm's lock file for a project whose one development dependency is left-pad `^1.1.0`.
const PNPM_LEFT_PAD_LOCK: &str = "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n  .:\n    devDependencies:\n      left-pad:\n        specifier: ^1.1.0\n        version: 1.3.0\n\npackages:\n\n  left-pad@1.3.0:\n    resolution: {integrity: sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQGinBN9yTQT3bFlCBy/aVx2HrNcqQGsdot8ghrjyrvMCoEA==}\n\nsnapshots:\n\n  left-pad@1.3.0: {}\n";

/// A pnpm project on Node 22 whose test script runs another script with `pnpm run`, its
/// lock file and a pnpm 10+ workspace file (no `packages:`), with `files` besides, run as
/// its documented suite: passed, one test, prepared by the pnpm whose manager is returned.
async fn pnpm_project_run(
    manager_field: &str,
    files: &[(&str, &str)],
) -> proven_sandbox::record::PackageManager {
    let sandbox = node_sandbox(&["22"]).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        format!(
            r#"{{"name":"pn","version":"1.0.0","private":true,{manager_field}"engines":{{"node":">=22"}},"scripts":{{"unit":"node --test","test":"pnpm run unit"}},"devDependencies":{{"left-pad":"^1.1.0"}}}}
"#
        ),
    )
    .write("pnpm-workspace.yaml", "allowBuilds:\n  husky: true\n")
    .write("pnpm-lock.yaml", PNPM_LEFT_PAD_LOCK)
    .write(
        "test/pad.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\ntest('pads', () => {\n  assert.strictEqual(require('left-pad')('a', 2), ' a');\n});\n",
    );
    for (path, text) in files {
        repo.write(path, text);
    }
    let commit = repo.commit("a pnpm project");
    let record = documented_suite_run(&sandbox, &repo, &commit).await;
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}\n{record:?}");
    assert_eq!(record.tests.map(|t| t.passed), Some(1), "{out}");
    assert_container_gone(&sandbox, &record).await;
    let deps = record.dependencies.expect("prepared node_modules");
    deps.package_manager.expect("the manager is named")
}

/// pnpm 11 checks node_modules against the lock file before `pnpm run` and installs when it
/// finds them out of step (`verify-deps-before-run` is `install` by default since pnpm 11).
/// A test run has no network: that install failed at once here, and waited out the suite's
/// time on handlebars.js (`pnpm run build` in its test script). The preparation installed
/// from the lock file, as a CI's install step does just before its tests; the run installs
/// nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pnpm_11_script_runs_on_what_the_preparation_installed() {
    let manager = pnpm_project_run(r#""packageManager":"pnpm@11.6.0","#, &[]).await;
    assert_eq!(manager.version.as_deref(), Some("11.6.0"), "{manager:?}");
}

/// A pnpm project that declares no `packageManager` is prepared with the pnpm its CI sets
/// up (ai/nanoid: `pnpm/setup` with `version: 11`) where that major writes its lock file's
/// format: pnpm 9, the lock file's first major, refuses a workspace file without
/// `packages`, npm then prepared it, and its test script found no `pnpm`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pnpm_project_is_prepared_with_the_pnpm_its_ci_sets_up() {
    let workflow = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - name: Install Node.js & pnpm\n        uses: pnpm/setup@v1\n        with:\n          version: 11\n          runtime: node@22\n      - run: pnpm ci\n      - run: pnpm test\n";
    let manager = pnpm_project_run("", &[(".github/workflows/test.yml", workflow)]).await;
    assert_eq!(manager.name, "pnpm", "{manager:?}");
    assert!(
        manager
            .version
            .as_deref()
            .is_some_and(|v| v.starts_with("11.")),
        "{manager:?}"
    );
    assert_eq!(
        manager.because,
        "pnpm-lock.yaml (lockfileVersion 9.0) and .github/workflows/test.yml pnpm/setup version 11",
    );
}

/// A project whose `engines.node` the default image's Node does not satisfy (tj/commander.js
/// asks for >= 22.12) runs on a configured image of a Node major it allows, and the record
/// names no mismatch there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_asking_for_a_newer_node_runs_on_that_node() {
    let sandbox = node_sandbox(&["22"]).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "needs-22", "version": "1.0.0", "engines": {"node": ">=22.12.0"}}"#,
    );
    let commit = repo.commit("needs Node 22");
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\ntest('runs on Node 22', () => {\n  assert.strictEqual(process.versions.node.split('.')[0], '22');\n});\n";
    let record = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                commit,
                Language::Node,
                node_test("test/version.test.js"),
            )
            .with_file("test/version.test.js", test),
        )
        .await
        .expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    if let Some(deps) = &record.dependencies {
        assert!(
            !deps.notes.iter().any(|n| n.contains("engines")),
            "{:?}",
            deps.notes
        );
    }
}

/// One development dependency the registry does not serve (E404) is named in the record
/// while the rest is installed and the tests run: a missing dev tool never blocks them. On
/// today's npm and on the npm of Node 8's era, whose words differ (`'name@^1.0.0' is not in
/// the npm registry`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dev_dependency_the_registry_does_not_serve_is_named_and_the_rest_installed() {
    let today = support::sandbox(&[Language::Node], |_| {}).await;
    absent_dev_dependency(&today, None).await;
    absent_dev_dependency(&node_sandbox(&["8"]).await, Some("8")).await;
}

async fn absent_dev_dependency(sandbox: &proven_sandbox::Sandbox, nvmrc: Option<&str>) {
    const ABSENT: &str = "proven-sandbox-test-no-such-package-5d1e0c7a";
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        format!(
            r#"{{"name":"timeouts","version":"1.0.0","private":true,"dependencies":{{"ms":"2.1.3"}},"devDependencies":{{"{ABSENT}":"^1.0.0"}}}}
"#
        ),
    )
    .write("lib.js", LIB_OK);
    if let Some(major) = nvmrc {
        repo.write(".nvmrc", format!("{major}\n"));
    }
    let commit = repo.commit("a dev dependency nobody serves");
    let record = sandbox
        .run(&seconds_test(&repo, &commit))
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{nvmrc:?}: {out}");
    if let Some(major) = nvmrc {
        let chosen = record.interpreter.as_ref().map(|i| i.version.as_str());
        assert_eq!(chosen, Some(major), "{:?}", record.interpreter);
    }
    let deps = record.dependencies.as_ref().expect("prepared node_modules");
    assert_eq!(
        deps.not_prepared
            .iter()
            .map(|n| n.what.as_str())
            .collect::<Vec<_>>(),
        [ABSENT],
        "{deps:?}"
    );
    assert!(deps.not_prepared[0].reason.contains("E404"), "{deps:?}");
    assert_eq!(deps.installed, 1, "ms is installed: {deps:?}");
    let mut notes = deps.notes.clone();
    notes.dedup();
    assert_eq!(notes, deps.notes, "each note once");
    assert_container_gone(sandbox, &record).await;
}

/// Shields' family (BugsJS Shields-2): a dev tool whose locked tree holds a package from git
/// (`danger` requiring `vm2` from `github:patriksimek/vm2#7e82f90`). `npm ci` fetches it, the
/// sandbox cannot, and the whole install failed; the tool is dropped, named with the package
/// and its source, and the rest installed. Both lock formats: version 1's nested
/// `requires`, version 3's `packages`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependency_whose_locked_tree_holds_a_git_package_is_named_and_the_rest_installed() {
    const V1: &str = r#"{
  "name": "timeouts", "version": "1.0.0", "lockfileVersion": 1, "requires": true,
  "dependencies": {
    "ms": {"version": "2.1.3", "resolved": "https://registry.npmjs.org/ms/-/ms-2.1.3.tgz",
           "integrity": "sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA=="},
    "reviewbot": {"version": "1.0.0", "resolved": "https://registry.npmjs.org/reviewbot/-/reviewbot-1.0.0.tgz",
                  "dev": true, "requires": {"sandboxer": "github:someone/sandboxer#7e82f90ac705fc44fad044147cb0df09b4c79a57"},
                  "dependencies": {"sandboxer": {"version": "github:someone/sandboxer#7e82f90ac705fc44fad044147cb0df09b4c79a57", "dev": true}}}
  }
}
"#;
    const V3: &str = r#"{
  "name": "timeouts", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
  "packages": {
    "": {"name": "timeouts", "version": "1.0.0", "dependencies": {"ms": "2.1.3"}, "devDependencies": {"reviewbot": "1.0.0"}},
    "node_modules/ms": {"version": "2.1.3", "resolved": "https://registry.npmjs.org/ms/-/ms-2.1.3.tgz",
      "integrity": "sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA=="},
    "node_modules/reviewbot": {"version": "1.0.0", "resolved": "https://registry.npmjs.org/reviewbot/-/reviewbot-1.0.0.tgz",
      "dev": true, "dependencies": {"sandboxer": "github:someone/sandboxer#7e82f90ac705fc44fad044147cb0df09b4c79a57"}},
    "node_modules/sandboxer": {"version": "3.5.2", "resolved": "git+ssh://git@github.com/someone/sandboxer.git#7e82f90ac705fc44fad044147cb0df09b4c79a57", "dev": true}
  }
}
"#;
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    for lock in [V1, V3] {
        let repo = TestRepo::new();
        repo.write(
            "package.json",
            r#"{"name":"timeouts","version":"1.0.0","private":true,"dependencies":{"ms":"2.1.3"},"devDependencies":{"reviewbot":"1.0.0"}}
"#,
        )
        .write("package-lock.json", lock)
        .write("lib.js", LIB_OK);
        let commit = repo.commit("a dev tool whose locked tree holds a git package");
        let record = sandbox
            .run(&seconds_test(&repo, &commit))
            .await
            .expect("run");
        assert_eq!(
            record.outcome,
            Outcome::Passed,
            "{}",
            support::output(&record)
        );
        let deps = record.dependencies.as_ref().expect("prepared node_modules");
        // Version 3 names the git package too (the plan refuses a lock entry resolved from
        // git); both name the tool that needs it, and why.
        let tool = deps
            .not_prepared
            .iter()
            .find(|n| n.what == "reviewbot")
            .unwrap_or_else(|| panic!("the tool is named: {deps:?}"));
        assert!(
            tool.reason
                .starts_with("its dependency sandboxer comes from ")
                && tool.reason.contains("someone/sandboxer")
                && tool
                    .reason
                    .ends_with("(package-lock.json), which the sandbox cannot fetch"),
            "{deps:?}"
        );
        assert_eq!(deps.installed, 1, "ms is installed: {deps:?}");
    }
}

/// A project of npm 6's era whose peer ranges conflict (react-dom 16 beside react 17):
/// npm 6 installed it with a warning, npm 7 and newer refuse it (ERESOLVE) and the whole
/// preparation failed. Peers are resolved as npm 6 did, and the record says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicting_peer_ranges_of_npm_6s_era_are_resolved_as_npm_6_did() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"timeouts","version":"1.0.0","private":true,"dependencies":{"ms":"2.1.3","react":"17.0.2","react-dom":"16.14.0"}}
"#,
    )
    .write("lib.js", LIB_OK);
    let commit = repo.commit("peer ranges that conflict");
    let record = sandbox
        .run(&seconds_test(&repo, &commit))
        .await
        .expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    let deps = record.dependencies.as_ref().expect("prepared node_modules");
    assert!(
        deps.notes.iter().any(|n| n
            .starts_with("peer dependencies resolved as npm 6 and older did (--legacy-peer-deps)")
            && n.contains("react")),
        "{deps:?}"
    );
}

/// A range none of whose releases the registry dates before the base (`ms@^2` before 2015:
/// ms 2.0.0 is of 2017; a mirror that stamps what it copied with its own day has none either)
/// made npm 11 stop with ENOVERSIONS, which the date's fallback did not know (npm 6-10 say
/// ETARGET): the whole preparation failed (BugsJS Karma-1's `babel`). Then it was resolved
/// now, whole. The dated view now serves such a line its first release (npm's own `--before`
/// left out), and the record names it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_with_no_release_before_the_date_gets_its_lines_first_release_and_says_so() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"timeouts","version":"1.0.0","private":true,"dependencies":{"ms":"^2.0.0"}}
"#,
    )
    .write("lib.js", LIB_OK);
    let commit = repo.commit("a range whose releases are all after the date");
    let mut request = seconds_test(&repo, &commit);
    request.resolve_before = Some("2015-06-01T00:00:00Z".into());
    let record = sandbox.run(&request).await.expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    let deps = record.dependencies.as_ref().expect("prepared node_modules");
    assert!(
        deps.notes.iter().any(|n| n.starts_with(
            "ranges with no release out by 2015-06-01T00:00:00Z resolved to the first release of their line after it"
        ) && n.contains("ms@2.0.0")),
        "{deps:?}"
    );
}

/// A registry that stamps every release with the day it copied it (this workplace's
/// mirror dates all of `ms` to 2024-25) has no release before a 2016 base: npm's
/// `--before` found none, and the preparation resolved today's `ms` 0.7.3 (of 2017) for a
/// project of 2016. The releases keep their own dates in their tarballs' file times: the
/// dated view reads them, and `ms@^0.7.0` as of 2016-01-01 is 0.7.1 (packed 2015-04-20;
/// 0.7.2 came on 2016-10-25), as npm gives it against a registry with true times. The
/// record says how the versions were dated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_are_resolved_as_of_the_date_by_the_releases_own_file_times() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    the_ms_of_2016(&sandbox, None).await;
}

/// The same on Node 4, whose npm 5 did not stop at the mirror's dates but resolved today's
/// releases without a word (BugsJS Hexo-2, of 2015: hexo-renderer-marked's heading anchors
/// of later years): the mirror's copy days are seen in the project's own direct
/// dependencies (none of their releases dated before the base), and the dated view is used
/// from the start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_node_4_versions_are_resolved_as_of_the_date_by_the_releases_own_file_times() {
    let sandbox = node_sandbox(&["4"]).await;
    the_ms_of_2016(&sandbox, Some("4")).await;
}

/// Bower-1's family: npm 5 uses no publish time, so where the registry keeps the real
/// times of some packages (archy's of 2012) and a mirror's copy days for the rest, the
/// view was not started and npm 5 resolved today's releases (bower's tmp ~0.0.23 came as
/// 0.0.33). With npm 5 and older the view dates every package whenever there is a date.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_node_4_versions_are_dated_where_the_registry_keeps_some_real_times() {
    let sandbox = node_sandbox(&["4"]).await;
    the_ms_of_2016_beside(&sandbox, Some("4"), r#""archy":"^1.0.0","#).await;
}

/// Eslint-5's family on today's npm: a range whose line had no release by the date
/// (eslint-release `^0.10.0` in a tree of 2016; here debug `^2.0.0` in one of 2014, its
/// 2.0.0 out in September). The dated view serves that line its first release, but npm's
/// own `--before` refused it (ETARGET), and the whole tree was resolved now instead
/// (debug 2.6.9). Through the view the date is the view's alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_begun_after_the_date_gets_its_lines_first_release_and_the_rest_stays_dated() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        format!(
            r#"{{"name":"of-2014","version":"1.0.0","private":true,"description":"{}","dependencies":{{"ms":"^0.6.0","debug":"^2.0.0"}}}}
"#,
            support::unique()
        ),
    );
    let commit = repo.commit("a project of 2014 with a range of a later line");
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\n\ntest('the releases of the date, and the first of a later line', () => {\n  assert.strictEqual(require('ms/package.json').version, '0.6.2');\n  assert.strictEqual(require('debug/package.json').version, '2.0.0');\n});\n";
    let mut request = RunRequest::new(repo.path(), &commit, Language::Node, node_test("t.test.js"))
        .with_file("t.test.js", test);
    request.resolve_before = Some("2014-01-01T00:00:00Z".into());
    let record = sandbox.run(&request).await.expect("run");
    let deps = passed_with_deps(&record);
    assert!(
        deps.notes
            .iter()
            .any(|n| n.starts_with("ranges with no release out by") && n.contains("debug@2.0.0")),
        "{:?}",
        deps.notes
    );
    assert_container_gone(&sandbox, &record).await;
}

async fn the_ms_of_2016(sandbox: &proven_sandbox::Sandbox, nvmrc: Option<&str>) {
    the_ms_of_2016_beside(sandbox, nvmrc, "").await;
}

/// `before`: dependencies listed before `ms` (`"name":"range",`).
async fn the_ms_of_2016_beside(
    sandbox: &proven_sandbox::Sandbox,
    nvmrc: Option<&str>,
    before: &str,
) {
    let repo = TestRepo::new();
    // The marker makes the preparation this test run's own (never a cached layer).
    repo.write(
        "package.json",
        format!(
            r#"{{"name":"timeouts","version":"1.0.0","private":true,"description":"{}","dependencies":{{{before}"ms":"^0.7.0"}}}}
"#,
            support::unique()
        ),
    );
    if let Some(major) = nvmrc {
        repo.write(".nvmrc", format!("{major}\n"));
    }
    let commit = repo.commit("a project of 2015");
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\n\ntest('the ms of the date', () => {\n  assert.strictEqual(require('ms/package.json').version, '0.7.1');\n});\n";
    let mut request = RunRequest::new(repo.path(), &commit, Language::Node, node_test("t.test.js"))
        .with_file("t.test.js", test);
    request.resolve_before = Some("2016-01-01T00:00:00Z".into());
    let record = sandbox.run(&request).await.expect("run");
    let deps = passed_with_deps(&record);
    // Against a registry whose times are the releases' own, npm's --before does it alone.
    if let Some(note) = deps
        .notes
        .iter()
        .find(|n| n.starts_with("the registry's publish times do not reach back"))
    {
        assert!(
            note.contains("read from their tarballs") && note.contains("counts as after it"),
            "{note}"
        );
    }
}

/// BugsJS Karma-1's family: a registry package of the tree (engine.io-client 1.5.4, under
/// socket.io-client) requires `xmlhttprequest` from a GitHub tarball. With no lock file
/// npm must fetch it to resolve the tree, the sandbox cannot, and the whole preparation
/// failed. The tree now resolves with the registry's release of that name standing in for
/// it, and the record names it, its source and what required it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_packages_dependency_from_off_the_registry_is_its_registry_release() {
    the_client_of_2015(None, "").await;
}

/// The same where the tree resolves as of a date, and a range of it has no release before
/// that date (Karma-1's): resolved now, the off-registry dependency still stands in (the
/// fallback left the view and met the GitHub tarball again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_off_registry_dependency_stands_in_when_the_tree_resolves_now() {
    the_client_of_2015(Some("2015-06-01T00:00:00Z"), r#","ms":"^2.0.0""#).await;
}

async fn the_client_of_2015(before: Option<&str>, more: &str) {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        format!(
            r#"{{"name":"client","version":"1.0.0","private":true,"description":"{}","dependencies":{{"engine.io-client":"1.5.4"{more}}}}}
"#,
            support::unique()
        ),
    );
    let commit = repo.commit("a client of 2015");
    // The registry's xmlhttprequest stands in for the fork (its exports differ: the fork's
    // module is the constructor), so the test reads what was prepared, not the client's code.
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\n\ntest('the tree is prepared, the stand-in too', () => {\n  assert.strictEqual(require('engine.io-client/package.json').version, '1.5.4');\n  assert.strictEqual(typeof require('xmlhttprequest').XMLHttpRequest, 'function');\n});\n";
    let mut request = RunRequest::new(repo.path(), &commit, Language::Node, node_test("t.test.js"))
        .with_file("t.test.js", test);
    request.resolve_before = before.map(str::to_string);
    let record = sandbox.run(&request).await.expect("run");
    let deps = passed_with_deps(&record);
    assert!(
        deps.notes.iter().any(|n| n.contains(
            "xmlhttprequest (https://github.com/rase-/node-XMLHttpRequest/archive/a6b6f2.tar.gz, required by engine.io-client)"
        )),
        "{deps:#?}"
    );
}

/// pnpm's lock file, as `pnpm@9.15.0 install --lockfile-only` wrote it for the workspace
/// below (left-pad pinned at 1.1.3, below what the catalog's `^1.1.0` allows today).
const PNPM_LOCK: &str = r#"lockfileVersion: '9.0'

settings:
  autoInstallPeers: true
  excludeLinksFromLockfile: false

catalogs:
  default:
    left-pad:
      specifier: ^1.1.0
      version: 1.1.3

importers:

  .:
    devDependencies:
      left-pad:
        specifier: 'catalog:'
        version: 1.1.3

  packages/app:
    dependencies:
      '@pn/util':
        specifier: workspace:*
        version: link:../util
      left-pad:
        specifier: 'catalog:'
        version: 1.1.3

  packages/util: {}

packages:

  left-pad@1.1.3:
    resolution: {integrity: sha512-m3z9QHpSXmd2H8Z5jnSXbGONPty4dFQfH1QpGgivzrEzICgsi50j9S+aGc77EaLoHpbw0BzP5+k1pp2UajTRuw==}

snapshots:

  left-pad@1.1.3: {}
"#;

/// A test that loads left-pad and asserts the version the lock file pins (1.1.3), with a
/// workspace package when `util` is given; it writes beside the packages, as vite does
/// (`node_modules/.vite-temp`), which a read-only node_modules refuses.
fn pinned_test(util: bool) -> String {
    let (load, padded) = if util {
        (
            "const { twice } = require('@pn/util');\n",
            "leftPad(twice('a'), 4)",
        )
    } else {
        ("", "leftPad('aa', 4)")
    };
    format!(
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst leftPad = require('left-pad');\n{load}\ntest('the pinned left-pad', () => {{\n  require('fs').mkdirSync('node_modules/.vite-temp', {{ recursive: true }});\n  assert.strictEqual(require('left-pad/package.json').version, '1.1.3');\n  assert.strictEqual({padded}, '  aa');\n}});\n"
    )
}

/// Issue 30 (family P2, vuejs/core): a pnpm workspace, its manager declared in package.json
/// (`packageManager`), a member depending on another by `workspace:*` and on a registry
/// package by `catalog:` (pnpm-workspace.yaml's range), is prepared with pnpm at that
/// version from its pnpm-lock.yaml's pins (npm stops at `EUNSUPPORTEDPROTOCOL "catalog:"`,
/// on the root's `catalog:` range as on vue's),
/// and the record names the manager, its version and the declaration that chose it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pnpm_workspace_with_catalog_ranges_is_prepared_with_pnpm_from_its_lock_file() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"pn-root","version":"1.0.0","private":true,"packageManager":"pnpm@9.15.0","devDependencies":{"left-pad":"catalog:"}}
"#,
    )
    .write(
        "pnpm-workspace.yaml",
        "packages:\n  - 'packages/*'\ncatalog:\n  left-pad: ^1.1.0\n",
    )
    .write("pnpm-lock.yaml", PNPM_LOCK)
    .write(
        "packages/util/package.json",
        r#"{"name":"@pn/util","version":"1.0.0","main":"index.js"}
"#,
    )
    .write(
        "packages/util/index.js",
        "exports.twice = (s) => s + s;\n",
    )
    .write(
        "packages/app/package.json",
        r#"{"name":"@pn/app","version":"1.0.0","private":true,"dependencies":{"@pn/util":"workspace:*","left-pad":"catalog:"}}
"#,
    );
    let commit = repo.commit("a pnpm workspace");
    let record = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                commit,
                Language::Node,
                node_test("packages/app/test/pad.test.js"),
            )
            .with_file("packages/app/test/pad.test.js", pinned_test(true)),
        )
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}\n{record:?}");
    assert_eq!(record.tests.map(|t| t.passed), Some(1), "{out}");
    let deps = record.dependencies.as_ref().expect("prepared node_modules");
    let manager = deps.package_manager.as_ref().expect("the manager is named");
    assert_eq!(manager.name, "pnpm", "{deps:?}");
    assert_eq!(manager.version.as_deref(), Some("9.15.0"), "{deps:?}");
    assert_eq!(
        manager.because, "package.json packageManager \"pnpm@9.15.0\"",
        "{deps:?}"
    );
    assert!(!deps.resolved, "the lock file's pins: {deps:?}");
    assert!(deps.not_prepared.is_empty(), "{deps:?}");
    assert!(
        record.setup.iter().any(|s| s.ends_with(": packages/app")),
        "{:?}",
        record.setup
    );
    assert_container_gone(&sandbox, &record).await;
}

/// Issue 30 (family P2): a yarn 1 project (yarn.lock, no packageManager) is prepared with
/// yarn from its lock file's pins, left-pad 1.1.3 where package.json's `^1.1.0` would get
/// 1.3.0 today; yarn.lock's registry.yarnpkg.com URLs are fetched from the npm registry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yarn_project_is_prepared_with_yarn_from_its_lock_files_pins() {
    const YARN_LOCK: &str = "# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n\n\nleft-pad@^1.1.0:\n  version \"1.1.3\"\n  resolved \"https://registry.yarnpkg.com/left-pad/-/left-pad-1.1.3.tgz#612f61c033f3a9e08e939f1caebeea41b6f3199a\"\n  integrity sha512-m3z9QHpSXmd2H8Z5jnSXbGONPty4dFQfH1QpGgivzrEzICgsi50j9S+aGc77EaLoHpbw0BzP5+k1pp2UajTRuw==\n";
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"yc","version":"1.0.0","private":true,"dependencies":{"left-pad":"^1.1.0"}}
"#,
    )
    .write("yarn.lock", YARN_LOCK);
    let commit = repo.commit("a yarn 1 project");
    let record = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                commit,
                Language::Node,
                node_test("test/pad.test.js"),
            )
            .with_file("test/pad.test.js", pinned_test(false)),
        )
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}\n{record:?}");
    let deps = record.dependencies.as_ref().expect("prepared node_modules");
    let manager = deps.package_manager.as_ref().expect("the manager is named");
    assert_eq!(manager.name, "yarn", "{deps:?}");
    assert!(
        manager
            .version
            .as_deref()
            .is_some_and(|v| v.starts_with("1.")),
        "{deps:?}"
    );
    assert_eq!(
        manager.because, "yarn.lock (a yarn 1 lock file)",
        "{deps:?}"
    );
    assert!(!deps.resolved, "the lock file's pins: {deps:?}");
    assert_eq!(deps.lock_files, ["package.json", "yarn.lock"]);
    assert_container_gone(&sandbox, &record).await;
}

/// A pnpm workspace (as in the test above, without its lock file) whose files ask for
/// `manager`, with a development dependency `absent` in the root when given.
fn pnpm_workspace(manager: &str, absent: Option<&str>) -> (TestRepo, String) {
    let dev = absent
        .map(|a| format!(r#","devDependencies":{{"{a}":"^1.0.0"}}"#))
        .unwrap_or_default();
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        format!(
            r#"{{"name":"pn-root","version":"1.0.0","private":true,"packageManager":"{manager}"{dev}}}
"#
        ),
    )
    .write(
        "pnpm-workspace.yaml",
        "packages:\n  - 'packages/*'\ncatalog:\n  left-pad: ~1.1.0\n",
    )
    .write(
        "packages/util/package.json",
        r#"{"name":"@pn/util","version":"1.0.0","main":"index.js"}
"#,
    )
    .write("packages/util/index.js", "exports.twice = (s) => s + s;\n")
    .write(
        "packages/app/package.json",
        r#"{"name":"@pn/app","version":"1.0.0","private":true,"dependencies":{"@pn/util":"workspace:*","left-pad":"catalog:"}}
"#,
    );
    let commit = repo.commit("a pnpm workspace");
    (repo, commit)
}

/// Where pnpm itself cannot be installed (the registry has no such version), npm prepares
/// the workspace after its `catalog:` ranges are translated (`~1.1.0`: left-pad 1.1.3) and
/// its `workspace:` ranges made npm workspaces, instead of stopping; the record says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pnpm_workspace_whose_pnpm_cannot_be_installed_is_prepared_by_npm_translated() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let (repo, commit) = pnpm_workspace("pnpm@99.0.0", None);
    let record = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                commit,
                Language::Node,
                node_test("packages/app/test/pad.test.js"),
            )
            .with_file("packages/app/test/pad.test.js", pinned_test(true)),
        )
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}\n{record:?}");
    let deps = record.dependencies.as_ref().expect("prepared node_modules");
    let manager = deps.package_manager.as_ref().expect("the manager is named");
    assert_eq!(manager.name, "npm", "{deps:?}");
    assert!(
        manager
            .because
            .contains("pnpm@99.0.0 could not be installed"),
        "{deps:?}"
    );
    assert!(deps.resolved, "{deps:?}");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("catalog: and workspace: ranges translated")),
        "{deps:?}"
    );
    assert_container_gone(&sandbox, &record).await;
}

/// Partial preparation with pnpm: a development dependency the registry does not serve is
/// named in the record, the rest installed (the workspace, the catalog's package).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pnpm_names_a_dependency_the_registry_does_not_serve_and_installs_the_rest() {
    const ABSENT: &str = "@proven-sandbox-test/no-such-package-5d1e0c7a";
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let (repo, commit) = pnpm_workspace("pnpm@9.15.0", Some(ABSENT));
    let record = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                commit,
                Language::Node,
                node_test("packages/app/test/pad.test.js"),
            )
            .with_file("packages/app/test/pad.test.js", pinned_test(true)),
        )
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}\n{record:?}");
    let deps = record.dependencies.as_ref().expect("prepared node_modules");
    assert_eq!(
        deps.package_manager.as_ref().map(|m| m.name.as_str()),
        Some("pnpm"),
        "{deps:?}"
    );
    assert_eq!(
        deps.not_prepared
            .iter()
            .map(|n| (n.what.as_str(), n.source.as_str()))
            .collect::<Vec<_>>(),
        [(ABSENT, "package.json")],
        "{deps:?}"
    );
    assert!(deps.not_prepared[0].reason.contains("E404"), "{deps:?}");
    assert_container_gone(&sandbox, &record).await;
}

/// A yarn berry project (`packageManager: yarn@4.5.0`, a berry yarn.lock pinning left-pad
/// 1.1.3 below `^1.1.0`'s newest) is prepared with that yarn, node_modules linker (Plug'n'Play
/// would leave no node_modules), from the lock file's pins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yarn_berry_project_is_prepared_with_its_yarn_from_its_lock_files_pins() {
    const BERRY_LOCK: &str = "# This file is generated by running \"yarn install\" inside your project.\n# Manual changes might be lost - proceed with caution!\n\n__metadata:\n  version: 8\n  cacheKey: 10c0\n\n\"left-pad@npm:^1.1.0\":\n  version: 1.1.3\n  resolution: \"left-pad@npm:1.1.3\"\n  checksum: 10c0/e0d6444c4ef94ee18e1f518b3e82f9b415cbfc12f1d16509cf09a8c67e508a9d0a1acdbfca1576cd758deaef22c2090f35c57dde98fd74fa7a7c11c51099691d\n  languageName: node\n  linkType: hard\n\n\"yb@workspace:.\":\n  version: 0.0.0-use.local\n  resolution: \"yb@workspace:.\"\n  dependencies:\n    left-pad: \"npm:^1.1.0\"\n  languageName: unknown\n  linkType: soft\n";
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"yb","version":"1.0.0","private":true,"packageManager":"yarn@4.5.0","dependencies":{"left-pad":"^1.1.0"}}
"#,
    )
    .write("yarn.lock", BERRY_LOCK);
    let commit = repo.commit("a yarn 4 project");
    let record = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                commit,
                Language::Node,
                node_test("test/pad.test.js"),
            )
            .with_file("test/pad.test.js", pinned_test(false)),
        )
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}\n{record:?}");
    let deps = record.dependencies.as_ref().expect("prepared node_modules");
    let manager = deps.package_manager.as_ref().expect("the manager is named");
    assert_eq!(
        (manager.name.as_str(), manager.version.as_deref()),
        ("yarn", Some("4.5.0")),
        "{deps:?}"
    );
    assert!(!deps.resolved, "the lock file's pins: {deps:?}");
    assert_container_gone(&sandbox, &record).await;
}

/// A declared pnpm that does not run on the image's Node (pnpm 11 needs Node 22.13; vue
/// declares it) is replaced by the major the lock file's format belongs to (none here:
/// pnpm 9), named in the record, rather than by npm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_pnpm_that_does_not_run_on_the_images_node_gives_way_to_its_lock_files_major() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let (repo, commit) = pnpm_workspace("pnpm@11.19.0", None);
    let record = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                commit,
                Language::Node,
                node_test("packages/app/test/pad.test.js"),
            )
            .with_file("packages/app/test/pad.test.js", pinned_test(true)),
        )
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}\n{record:?}");
    let deps = record.dependencies.as_ref().expect("prepared node_modules");
    let manager = deps.package_manager.as_ref().expect("the manager is named");
    assert_eq!(manager.name, "pnpm", "{deps:?}");
    assert!(
        manager
            .version
            .as_deref()
            .is_some_and(|v| v.starts_with("9.")),
        "{deps:?}"
    );
    assert!(
        manager
            .because
            .contains("pnpm@11.19.0 does not run on Node v20"),
        "{deps:?}"
    );
    assert_container_gone(&sandbox, &record).await;
}

/// Must-show 5 of issue 30, for Node: a project of 2017 (Travis tests Node 6 and 8, engines
/// `>=6`, no lock file, mocha 3) runs on the newest Node its CI tested that the sandbox has,
/// prepared by that Node's own npm, and the record names the choice and the declaration —
/// not on the newest image, where the tests of its era break (BugsJS' bower on Node 22:
/// `ReferenceError: primordials is not defined`). A release resolved now that does not run
/// on that Node (its engines exclude it) gives way to the newest its dependents allow that
/// does (bower's request 2.36 and today's tough-cookie: `SyntaxError: Unexpected token =`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_of_2017_runs_on_the_node_its_ci_tested_with_that_nodes_npm() {
    const NODE8: &str = "proven-sandbox-node8:local";
    let sandbox = node_sandbox(&["8", "22"]).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "of-2017", "version": "1.0.0", "engines": {"node": ">=6"}, "scripts": {"test": "mocha"}, "dependencies": {"request": "~2.36.0"}, "devDependencies": {"mocha": "^3.5.0"}}"#,
    )
    .write(".travis.yml", "language: node_js\nnode_js:\n  - '6'\n  - '8'\n")
    .write(
        "test/version.js",
        "var assert = require('assert');\ndescribe('the Node of its era', function () {\n  it('is the one its CI tested', function () {\n    assert.strictEqual(process.versions.node.split('.')[0], '8');\n  });\n  it('has releases that run on it', function () {\n    assert.strictEqual(require('tough-cookie/package.json').version.split('.')[0], '4');\n    require('tough-cookie');\n  });\n});\n",
    );
    let commit = repo.commit("a project of 2017");
    // Proven's own test file sits in test/ beside the project's (the Fixer's whole-suite
    // run): mocha loads it too, and `node:test` must resolve on Node 8 for it to load.
    let proven = "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\ntest('never run by mocha', () => {\n  assert.ok(true);\n});\n";
    let mut request = RunRequest::new(
        repo.path(),
        commit,
        Language::Node,
        vec!["npm".to_string(), "test".to_string()],
    )
    .with_file("test/proven.test.js", proven);
    request.resolve_before = Some("2017-09-01T00:00:00Z".into());
    let record = sandbox.run(&request).await.expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    let choice = record.interpreter.as_ref().expect("the Node chosen");
    assert_eq!(
        (choice.version.as_str(), choice.image.as_str()),
        ("8", NODE8)
    );
    assert!(
        choice.because.contains(".travis.yml node_js"),
        "{}",
        choice.because
    );
    let deps = record.dependencies.as_ref().expect("prepared");
    let npm = deps.package_manager.as_ref().expect("the manager named");
    assert!(
        npm.version.as_deref().is_some_and(|v| v.starts_with("6.")),
        "Node 8's npm is npm 6: {npm:?}"
    );
    assert!(deps.installed > 0, "{deps:?}");
    // request 2.36's open `"tough-cookie": ">=0.12.0"` resolves today to a release that
    // needs Node 16; the newest the range allows that runs on Node 8 takes its place.
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("tough-cookie 4.1.4") && n.contains("engines >=16")),
        "{:?}",
        deps.notes
    );
}

/// Grunt's family (BugsJS Bower, Karma of 2014–2016): grunt before 1.0 has no command of its
/// own; the project's CI installed grunt-cli globally (`npm install -g grunt-cli`), and its
/// `npm test` is `grunt test`. Without a `grunt` on the run's PATH the suite stopped at
/// `grunt: not found`; the preparation now puts one there that calls the project's grunt
/// as grunt-cli does, and says so in the record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grunt_project_of_before_grunt_1_runs_grunt_as_its_ci_did() {
    let sandbox = node_sandbox(&["8"]).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        format!(
            r#"{{"name": "gruntish", "version": "1.0.0", "description": "{}", "engines": {{"node": "8"}}, "scripts": {{"test": "grunt test"}}, "devDependencies": {{"grunt": "0.4.5", "mocha": "^3.5.0"}}}}"#,
            support::unique()
        ),
    )
    .write(
        "Gruntfile.js",
        "module.exports = function (grunt) {\n  grunt.registerTask('test', 'mocha, as a task of its own', function () {\n    var done = this.async();\n    require('child_process').spawn('node_modules/.bin/mocha', [], { stdio: 'inherit' }).on('exit', function (code) { done(code === 0); });\n  });\n};\n",
    )
    .write(
        "test/grunt.js",
        "var assert = require('assert');\ndescribe('grunt of 2014', function () {\n  it('ran this suite', function () {\n    assert.strictEqual(require('grunt/package.json').version, '0.4.5');\n  });\n});\n",
    );
    let commit = repo.commit("a project of grunt 0.4");
    let mut request = RunRequest::new(
        repo.path(),
        commit,
        Language::Node,
        vec!["npm".to_string(), "test".to_string()],
    );
    request.resolve_before = Some("2017-09-01T00:00:00Z".into());
    let record = sandbox.run(&request).await.expect("run");
    let deps = passed_with_deps(&record);
    assert_eq!(record.tests.map(|t| t.passed), Some(1));
    assert!(
        deps.notes
            .iter()
            .any(|n| n
                .starts_with("grunt 0.4.5 has no command of its own (its CI installed grunt-cli)")),
        "{:?}",
        deps.notes
    );
    assert_container_gone(&sandbox, &record).await;
}

/// Proven's own tests are node:test files, run with `node --test`, which Node has only from
/// 18: on the image of an older Node (a project of 2016 runs on the Node of its era) the same
/// command runs them, selects by `--test-name-pattern`, prints node's TAP summary and names
/// the failing test — without it, `node: bad option: --test` and nothing is proved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_test_file_runs_on_a_node_before_18() {
    let sandbox = node_sandbox(&["8"]).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "of-2016", "version": "1.0.0", "engines": {"node": ">=4"}}"#,
    )
    .write(".travis.yml", "language: node_js\nnode_js:\n  - '8'\n")
    .write(
        "lib.js",
        "exports.seconds = (text) => parseInt(text, 10);\n",
    );
    let commit = repo.commit("a project of 2016");
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { seconds } = require('../lib.js');\n\ntest('two seconds', () => {\n  assert.strictEqual(seconds('2s'), 2);\n});\ntest('on its era', () => {\n  assert.strictEqual(process.versions.node.split('.')[0], '8');\n});\ntest('another', () => {\n  assert.fail('never selected');\n});\n";
    let mut command = node_test("test/seconds.test.js");
    command.insert(3, "--test-name-pattern=^two seconds$".into());
    command.insert(3, "--test-name-pattern=^on its era$".into());
    let record = sandbox
        .run(
            &RunRequest::new(repo.path(), commit.clone(), Language::Node, command.clone())
                .with_file("test/seconds.test.js", test),
        )
        .await
        .expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    assert_eq!(record.tests.map(|t| (t.passed, t.failed)), Some((2, 0)));
    let failing = test.replace("seconds('2s'), 2", "seconds('2s'), 3");
    let record = sandbox
        .run(
            &RunRequest::new(repo.path(), commit, Language::Node, command)
                .with_file("test/seconds.test.js", failing),
        )
        .await
        .expect("run");
    assert_eq!(
        record.outcome,
        Outcome::TestFailed,
        "{}",
        support::output(&record)
    );
    assert_eq!(record.failing, ["two seconds"]);
}

/// A project of 2015 (Travis tests Node 4, no lock file) whose dependency resolves now to a
/// release written for a newer Node (psl 1.15's `...`, no engines to say so) cannot load on
/// Node 4: the run goes on to the next newer Node the project allows, and the record says
/// which dependency the era's Node could not parse. Without it: `SyntaxError: Unexpected
/// token ...` from /deps/node_modules/psl, and nothing is proved on that project.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependency_resolved_now_that_the_eras_node_cannot_parse_runs_on_a_newer_node() {
    const NODE8: &str = "proven-sandbox-node8:local";
    let sandbox = node_sandbox(&["4", "8"]).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "of-2015", "version": "1.0.0", "dependencies": {"psl": "^1.1.0"}}"#,
    )
    .write(".travis.yml", "language: node_js\nnode_js:\n  - '4'\n");
    let commit = repo.commit("a project of 2015");
    let test = "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst psl = require('psl');\ntest('the registrable domain', () => {\n  assert.strictEqual(psl.get('www.example.com'), 'example.com');\n});\n";
    let record = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                commit,
                Language::Node,
                node_test("test/psl.test.js"),
            )
            .with_file("test/psl.test.js", test),
        )
        .await
        .expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    assert_eq!(record.image, NODE8);
    let choice = record.interpreter.as_ref().expect("the Node chosen");
    assert_eq!(choice.version, "8");
    assert!(
        choice
            .because
            .contains("Node 4 could not parse psl (SyntaxError"),
        "{}",
        choice.because
    );
}

/// An npm project whose tests keep package.json fixtures (axios: three named
/// `ts-entrypoint-test`) is prepared as one package: nested manifests become npm workspaces
/// only where a pnpm `workspace:` range asks for one. Without it: `npm error must not have
/// multiple workspaces with the same name`, and nothing runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_npm_projects_fixture_manifests_are_no_workspaces() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    let fixture = r#"{"name": "entrypoint-test", "version": "1.0.0", "private": true}"#;
    repo.write("package.json", PACKAGE)
        .write("lib.js", LIB_OK)
        .write("test/module/cjs/package.json", fixture)
        .write("test/module/esm/package.json", fixture);
    let commit = repo.commit("fixtures of one name");
    let record = sandbox
        .run(&seconds_test(&repo, &commit))
        .await
        .expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
}

/// A project whose CI starts Redis beside its tests (node_redis, ioredis, bull: Travis'
/// `services: redis-server`) finds it on the loopback, as there; the record says it was
/// started and why, and a service the sandbox has not (MongoDB) is named as not started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_the_projects_ci_starts_runs_beside_its_tests() {
    const PING: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst net = require('net');\n\ntest('redis answers', async () => {\n  const reply = await new Promise((resolve, reject) => {\n    const socket = net.connect(6379, '127.0.0.1', () => socket.write('PING\\r\\n'));\n    socket.on('data', (d) => { resolve(String(d)); socket.end(); });\n    socket.on('error', reject);\n  });\n  assert.strictEqual(reply, '+PONG\\r\\n');\n});\n";
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        "{\"name\": \"cache\", \"version\": \"1.0.0\", \"private\": true}\n",
    )
    .write(
        ".travis.yml",
        "language: node_js\nnode_js:\n  - 20\nservices:\n  - redis-server\n  - mongodb\n",
    );
    let commit = repo.commit("a project whose CI starts redis");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Node,
        node_test("test/ping.test.js"),
    )
    .with_file("test/ping.test.js", PING);
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    assert!(
        run.setup.iter().any(|l| l
            == "redis started on 127.0.0.1:6379 before the tests: the project's CI starts it (.travis.yml services)"),
        "{:?}",
        run.setup
    );
    assert!(
        run.setup
            .iter()
            .any(|l| l.starts_with("mongodb not started")),
        "{:?}",
        run.setup
    );
}

/// BugsJS Hexo-2's record: the npm of Node 4 installs chokidar's optional `fsevents` (a
/// macOS-only addon, `"os": ["darwin"]`) on Linux too, and its install script then failed
/// ("CoreFoundation/CoreFoundation.h: No such file") and was named as not prepared. npm
/// would never run it on Linux: a package for another platform is passed over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_install_script_of_a_package_for_another_platform_is_not_run() {
    let sandbox = node_sandbox(&["4"]).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"watcher","version":"1.0.0","private":true,"dependencies":{"chokidar":"1.7.0"}}
"#,
    )
    .write(".nvmrc", "4\n");
    let commit = repo.commit("a watcher with a macOS-only optional dependency");
    let test = "const test = require('node:test');\nconst assert = require('assert');\n\ntest('chokidar loads', () => {\n  assert.strictEqual(typeof require('chokidar').watch, 'function');\n});\n";
    let record = run_test_file(&sandbox, &repo, &commit, "t.test.js", test).await;
    let deps = passed_with_deps(&record);
    assert!(
        !deps.not_prepared.iter().any(|n| n.what == "fsevents"),
        "{deps:#?}"
    );
}

/// BugsJS Node-redis-4's family: the project's `pretest` installs a package from the
/// registry at test time (`optional-dev-dependency hiredis`; here `npm install --no-save`),
/// which the run cannot (no network), so every test that loads it failed on the base. The
/// preparation installs it beside the declared dependencies, and the record says so; one
/// the registry does not serve is named, and the other still installed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_package_the_scripts_install_at_test_time_is_prepared() {
    const TEST: &str = "const test = require('node:test');\nconst assert = require('node:assert');\n\ntest('the package installed at test time loads', () => {\n  assert.strictEqual(require('is-number')(7), true);\n});\n";
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"client","version":"1.0.0","private":true,"scripts":{"pretest":"npm install --no-save is-number@7.0.0 proven-no-such-package-4a1f","test":"node --test"},"dependencies":{"ms":"2.1.3"}}
"#,
    );
    let commit = repo.commit("tests that install a package at test time");
    let run = run_test_file(&sandbox, &repo, &commit, "test/load.test.js", TEST).await;
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    let deps = run.dependencies.as_ref().expect("prepared node_modules");
    assert!(
        deps.notes.iter().any(|n| n
            == "installed for the tests, which install it at test time with no network here: is-number@7.0.0 (package.json scripts.pretest: npm install --no-save is-number@7.0.0 proven-no-such-package-4a1f)"),
        "{deps:?}"
    );
    assert!(
        deps.not_prepared
            .iter()
            .any(|n| n.what == "proven-no-such-package-4a1f" && n.reason.contains("E404")),
        "{deps:?}"
    );
}

/// BugsJS Node-redis-3's family: the code under test throws a SyntaxError (`JSON.parse` of
/// undefined: "Unexpected token u") inside a test mocha ran. That is the test's failure,
/// named, not "a test file could not load": mocha printed its summary, so every file loaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_syntax_error_the_code_throws_inside_a_mocha_test_is_that_tests_failure() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "replies", "version": "1.0.0", "scripts": {"test": "mocha"}, "devDependencies": {"mocha": "10.2.0"}}"#,
    )
    .write("lib.js", "exports.parse = (reply) => JSON.parse(reply);\n")
    .write(
        "test/parse.js",
        "const assert = require('assert');\nconst { parse } = require('../lib');\ndescribe('replies', function () {\n  it('parses a missing reply as null', function () {\n    assert.strictEqual(parse(undefined), null);\n  });\n  it('parses a number', function () {\n    assert.strictEqual(parse('1'), 1);\n  });\n});\n",
    );
    let commit = repo.commit("a parser that throws on a missing reply");
    let request = RunRequest::new(
        repo.path(),
        commit,
        Language::Node,
        vec!["npm".to_string(), "test".to_string()],
    );
    let record = sandbox.run(&request).await.expect("run");
    assert_eq!(
        record.outcome,
        Outcome::TestFailed,
        "{}",
        support::output(&record)
    );
    assert!(
        record
            .failing
            .iter()
            .any(|t| t.contains("parses a missing reply as null")),
        "{:?}",
        record.failing
    );
}

/// websockets/ws' family: mocha 4 and later exits only when nothing is left open (unless
/// `--exit`), and a failed test had left its server listening, so the run waited for its
/// timeout after mocha's epilogue and proved nothing. Once the epilogue ends the output and
/// the process is still there a while after, it is stopped and the epilogue is the outcome:
/// the failure, by name, not a timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mocha_run_that_lingers_after_its_epilogue_is_judged_by_it() {
    let sandbox = support::sandbox(&[Language::Node], |c| {
        c.output.quiet_after_summary_ms = 2_000;
    })
    .await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "headers", "version": "1.0.0", "scripts": {"test": "mocha"}, "devDependencies": {"mocha": "10.2.0"}}"#,
    )
    .write("lib.js", "exports.tooMany = (count) => (count > 2000 ? 400 : 200);\n")
    .write(
        "test/server.js",
        "const assert = require('assert');\nconst http = require('http');\nconst { tooMany } = require('../lib');\ndescribe('server', function () {\n  it('answers a small request', function () {\n    assert.strictEqual(tooMany(3), 200);\n  });\n  it('refuses too many headers with 431', function (done) {\n    const server = http.createServer().listen(0, () => {\n      assert.strictEqual(tooMany(2001), 431);\n      server.close(done);\n    });\n  });\n});\n",
    );
    let commit = repo.commit("a failed test leaves its server listening");
    let request = RunRequest::new(
        repo.path(),
        commit,
        Language::Node,
        vec!["npm".to_string(), "test".to_string()],
    )
    .with_timeout(std::time::Duration::from_secs(120));
    let run = sandbox.run(&request).await.expect("run");
    let out = support::output(&run);
    assert_eq!(run.outcome, Outcome::TestFailed, "{out}\n{:?}", run.setup);
    assert!(!run.timed_out && run.killed.is_none(), "{run:#?}");
    assert!(
        run.failing
            .iter()
            .any(|t| t.contains("refuses too many headers with 431")),
        "{:?}",
        run.failing
    );
    assert!(
        run.setup
            .iter()
            .any(|l| l.contains("printed its summary and its process had not ended 2 s later")),
        "{:?}",
        run.setup
    );
    assert!(
        run.duration_ms < 90_000,
        "stopped soon after the epilogue, not at the timeout: {} ms",
        run.duration_ms
    );
}

/// BugsJS Node-redis' family: a client library of 2015 whose test helper spawns
/// `redis-server` itself (its CI names no service) and asserts the replies of the Redis of
/// its day. Against the images' Redis of today its auth tests fail on the base ("ERR AUTH
/// <password> called without any password configured", where Redis 3.0 said "ERR Client
/// sent AUTH, but no password is set"). The run meets the Redis of the base's date, first
/// on PATH, and the record says which and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_the_tests_start_is_the_one_of_the_projects_era() {
    const AUTH: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { spawn, execFileSync } = require('node:child_process');\nconst net = require('node:net');\n\nconst ask = (line) => new Promise((resolve, reject) => {\n  const socket = net.connect(6390, '127.0.0.1', () => socket.write(line));\n  socket.on('data', (d) => { resolve(String(d)); socket.end(); });\n  socket.on('error', reject);\n});\n\ntest('auth without a password set is refused in the words of 2015', async () => {\n  const server = spawn('redis-server', ['--port', '6390', '--bind', '127.0.0.1', '--save', '']);\n  try {\n    let reply;\n    for (let i = 0; i < 100 && !reply; i++) {\n      await new Promise((r) => setTimeout(r, 50));\n      reply = await ask('AUTH secret\\r\\n').catch(() => undefined);\n    }\n    assert.strictEqual(reply, '-ERR Client sent AUTH, but no password is set\\r\\n');\n  } finally {\n    server.kill();\n  }\n});\n";
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        "{\"name\": \"client\", \"version\": \"2.2.4\", \"engines\": {\"node\": \">=18\"}}\n",
    )
    .write("test/auth.test.js", AUTH);
    let commit = repo.commit("a client whose tests start redis-server");
    let base_date = time::macros::datetime!(2015-10-17 20:07:34 UTC);
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Node,
        node_test("test/auth.test.js"),
    )
    .resolved_as_of(base_date);
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    assert!(
        run.setup.iter().any(|l| l
            == "redis-server of the project's era first on PATH: Redis 3.0.5 (/opt/redis/3.0.5), the newest series the sandbox carries that was out on the base's date (2015-10-17); the tests start redis-server (test/auth.test.js)"),
        "{:?}",
        run.setup
    );
}

/// A suite that runs in a headless browser (Karma's ChromeHeadless, puppeteer) finds one,
/// as on a CI's runner: `CHROME_BIN` names it, and it starts inside the container (no
/// sandbox of its own, shared memory in /tmp), runs the page's script and prints the DOM.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_that_runs_in_a_headless_browser_finds_one() {
    let sandbox = node_sandbox(&[]).await;
    let repo = TestRepo::new();
    repo.write(
        "test/browser.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst { execFileSync } = require('node:child_process');\n\ntest('the page runs its script in a headless browser', () => {\n  assert.ok(process.env.CHROME_BIN, 'CHROME_BIN names a browser');\n  assert.strictEqual(process.env.PUPPETEER_EXECUTABLE_PATH, process.env.CHROME_BIN);\n  const page = 'data:text/html,<p id=x></p><script>document.getElementById(\"x\").textContent = \"sum \" + (40 + 2)</script>';\n  const dom = execFileSync(process.env.CHROME_BIN, ['--headless', '--dump-dom', page], { encoding: 'utf8', timeout: 60000 });\n  assert.match(dom, /<p id=\"x\">sum 42<\\/p>/);\n});\n",
    );
    let commit = repo.commit("a test that needs a browser");
    let run = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                &commit,
                Language::Node,
                node_test("test/browser.test.js"),
            )
            .as_command(),
        )
        .await
        .expect("run");
    let out = support::output(&run);
    assert_eq!(run.outcome, Outcome::Passed, "{out}");
    assert_container_gone(&sandbox, &run).await;
}

/// BugsJS Hexo-4's and Node-redis-4's family: a registry package whose install script
/// makes what its code requires (hexo-util 0.5.3's postinstall writes the
/// `highlight_alias.json` its code loads; epoll's binding.gyp is a native addon node-gyp
/// builds, as hiredis' is). The install ran with scripts off, so `require` failed ("Cannot find
/// module '../highlight_alias.json'"). The registry's packages' install scripts now run after
/// the install, with no network, node-gyp building against the image's compilers and
/// headers; one that needs the network (phantomjs-prebuilt downloads its browser) is
/// named, and the rest of the environment stands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependencys_install_script_runs_with_no_network_and_one_that_fails_is_named() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"site","version":"1.0.0","private":true,"dependencies":{"hexo-util":"0.5.3","epoll":"4.0.2"},"devDependencies":{"phantomjs-prebuilt":"2.1.16"}}
"#,
    );
    let commit = repo.commit("dependencies whose install scripts make what they need");
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\nconst util = require('hexo-util');\nconst { Epoll } = require('epoll');\n\ntest('highlights, and loads its addon', () => {\n  assert.match(util.highlight('var a = 1', { lang: 'js' }), /<figure class=\"highlight js\">/);\n  assert.strictEqual(typeof Epoll, 'function');\n});\n";
    let record = run_test_file(&sandbox, &repo, &commit, "t.test.js", test).await;
    let deps = passed_with_deps(&record);
    let ran: Vec<&str> = deps
        .notes
        .iter()
        .find_map(|n| {
            n.strip_prefix("install scripts of the registry's packages run with no network: ")
        })
        .map(|names| names.split(", ").collect())
        .unwrap_or_default();
    assert!(
        ran.contains(&"hexo-util") && ran.contains(&"epoll"),
        "{deps:#?}"
    );
    let named: Vec<(&str, &str)> = deps
        .not_prepared
        .iter()
        .map(|n| (n.what.as_str(), n.source.as_str()))
        .collect();
    assert_eq!(
        named,
        [(
            "phantomjs-prebuilt",
            "its install script (run with no network)"
        )],
        "{deps:#?}"
    );
    assert_container_gone(&sandbox, &record).await;
}

/// Node-redis' own cases: hiredis' native addon on the Nodes of its era, built by the
/// node-gyp their npm bundles. npm 6's (Node 8's) gyp opened files in mode 'rU' (gone in
/// Python 3.11) until the image read it as 'r'; npm 5's node-gyp 3 (Node 4's, Node 6's)
/// runs a gyp written for Python 2 only and refused Python 3 ("gyp ERR! configure error",
/// Node-redis-1) until the image gave it node-gyp 5's gyp.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_native_addon_of_2016_builds_on_the_node_of_its_era() {
    let sandbox = node_sandbox(&["4", "8"]).await;
    for (major, hiredis) in [("4", "0.4.1"), ("8", "0.5.0")] {
        let repo = TestRepo::new();
        repo.write(
            "package.json",
            format!(
                r#"{{"name":"client","version":"1.0.0","private":true,"dependencies":{{"hiredis":"{hiredis}"}}}}
"#
            ),
        )
        .write(".nvmrc", format!("{major}\n"));
        let commit = repo.commit("a client with a native parser");
        let test = "const test = require('node:test');\nconst assert = require('assert');\nconst hiredis = require('hiredis');\n\ntest('parses a reply', () => {\n  const reader = new hiredis.Reader();\n  reader.feed('+OK\\r\\n');\n  assert.strictEqual(reader.get(), 'OK');\n});\n";
        let record = run_test_file(&sandbox, &repo, &commit, "t.test.js", test).await;
        let out = support::output(&record);
        let deps = record.dependencies.as_ref().expect("prepared node_modules");
        assert_eq!(
            record.outcome,
            Outcome::Passed,
            "Node {major}: {out}\n{deps:#?}"
        );
        assert_eq!(
            record.interpreter.as_ref().map(|i| i.version.as_str()),
            Some(major),
            "{:?}",
            record.interpreter
        );
        assert!(deps.not_prepared.is_empty(), "Node {major}: {deps:#?}");
        assert_container_gone(&sandbox, &record).await;
    }
}

/// vite's family: pnpm's `patchedDependencies` (package.json's `pnpm` field here, as pnpm 9
/// reads them; pnpm 10 reads pnpm-workspace.yaml too, as vite has them) name patch files the
/// install applies; with the manifests and lock file alone in the preparation, pnpm
/// stopped at the missing patch and nothing was installed. The patch files are now read
/// with the manifests (and key the layer as they do): the patched dependency is what the
/// tests load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependency_the_install_patches_is_prepared_with_its_patch() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"patched","version":"1.0.0","private":true,"packageManager":"pnpm@9.15.0","devDependencies":{"left-pad":"1.1.3"},"pnpm":{"patchedDependencies":{"left-pad@1.1.3":"patches/left-pad@1.1.3.patch"}}}
"#,
    )
    .write(
        "patches/left-pad@1.1.3.patch",
        "diff --git a/index.js b/index.js\n--- a/index.js\n+++ b/index.js\n@@ -50,3 +50,5 @@\n   // pad `str`!\n   return pad + str;\n }\n+\n+module.exports.patched = true;\n",
    );
    let commit = repo.commit("a dependency patched at install");
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\nconst leftPad = require('left-pad');\n\ntest('the patched release', () => {\n  assert.strictEqual(leftPad('1', 3, '0'), '001');\n  assert.strictEqual(leftPad.patched, true);\n});\n";
    let record = run_test_file(&sandbox, &repo, &commit, "t.test.js", test).await;
    let deps = passed_with_deps(&record);
    assert!(
        deps.lock_files
            .contains(&"patches/left-pad@1.1.3.patch".to_string()),
        "{deps:#?}"
    );
    assert_container_gone(&sandbox, &record).await;
}

/// svelte's family: a suite that launches Playwright's Chromium (vitest's browser mode,
/// @playwright/test) found none, Playwright's builds coming from a CDN no registry serves
/// ("Executable doesn't exist at …/ms-playwright/chromium_headless_shell-1223/…"). The
/// preparation links the image's Chromium at each build the project's playwright-core
/// names, and the run finds them there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn playwrights_chromium_is_the_images_chromium() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"browser","version":"1.0.0","private":true,"devDependencies":{"playwright-core":"1.49.1"}}
"#,
    );
    let commit = repo.commit("a suite that runs in Playwright's Chromium");
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { chromium } = require('playwright-core');\n\ntest('renders a page', async () => {\n  const browser = await chromium.launch();\n  const page = await browser.newPage();\n  await page.setContent('<p id=\"x\">rendered</p>');\n  assert.strictEqual(await page.textContent('#x'), 'rendered');\n  await browser.close();\n});\n";
    let record = run_test_file(&sandbox, &repo, &commit, "t.test.js", test).await;
    let deps = passed_with_deps(&record);
    assert!(
        deps.notes
            .iter()
            .any(|n| n
                .starts_with("Playwright's Chromium builds are the image's Chromium: chromium-")),
        "{deps:#?}"
    );
    assert_container_gone(&sandbox, &record).await;
}

/// vite's workspace: packages kept in fixture folders (`packages/**/__tests__/**`), which the
/// manifest search passes over (an npm project's fixture manifests are no workspaces). pnpm's
/// lock file names them (`importers`), and without their manifests the frozen install
/// stopped (ERR_PNPM_LINKED_PKG_DIR_NOT_FOUND): the lock's workspace packages are read too.
/// This one is nine folders deep, as vite's license fixtures are: its own node_modules is
/// linked at its place in the run (the walk went eight deep).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pnpm_workspace_package_in_a_fixture_folder_is_installed_from_the_lock() {
    const LOCK: &str = "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n  .: {}\n\n  packages/app:\n    dependencies:\n      '@ws/dep-fixture':\n        specifier: workspace:*\n        version: link:src/node/__tests__/plugins/fixtures/license/dep\n\n  packages/app/src/node/__tests__/plugins/fixtures/license/dep:\n    dependencies:\n      left-pad:\n        specifier: 1.1.3\n        version: 1.1.3\n\npackages:\n\n  left-pad@1.1.3:\n    resolution: {integrity: sha512-m3z9QHpSXmd2H8Z5jnSXbGONPty4dFQfH1QpGgivzrEzICgsi50j9S+aGc77EaLoHpbw0BzP5+k1pp2UajTRuw==}\n\nsnapshots:\n\n  left-pad@1.1.3: {}\n";
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"root","version":"1.0.0","private":true,"packageManager":"pnpm@10.34.5"}
"#,
    )
    .write(
        "pnpm-workspace.yaml",
        "packages:\n  - 'packages/*'\n  - 'packages/**/fixtures/**'\n",
    )
    .write("pnpm-lock.yaml", LOCK)
    .write(
        "packages/app/package.json",
        r#"{"name":"@ws/app","version":"1.0.0","private":true,"dependencies":{"@ws/dep-fixture":"workspace:*"}}
"#,
    )
    .write(
        "packages/app/src/node/__tests__/plugins/fixtures/license/dep/package.json",
        r#"{"name":"@ws/dep-fixture","version":"1.0.0","main":"index.js","dependencies":{"left-pad":"1.1.3"}}
"#,
    )
    .write(
        "packages/app/src/node/__tests__/plugins/fixtures/license/dep/index.js",
        "const leftPad = require('left-pad');\nexports.answer = () => leftPad('42', 3, '0');\n",
    );
    let commit = repo.commit("a workspace package in a fixture folder");
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { answer } = require('@ws/dep-fixture');\n\ntest('the fixture package and its own dependency', () => {\n  assert.strictEqual(answer(), '042');\n});\n";
    let record = run_test_file(&sandbox, &repo, &commit, "packages/app/t.test.js", test).await;
    let deps = passed_with_deps(&record);
    assert!(
        deps.lock_files.contains(
            &"packages/app/src/node/__tests__/plugins/fixtures/license/dep/package.json"
                .to_string()
        ),
        "{deps:#?}"
    );
    assert_container_gone(&sandbox, &record).await;
}

/// svelte's next family: its suite drives Chromium beside vitest's workers, and the run
/// ended at the pids limit ("reached the pids limit" after 7753 tests passed): a run's
/// default bound now leaves room for a browser's processes and threads (here, 400 processes
/// at once) while still ending a fork bomb (`containment::a_fork_bomb_ends_at_the_pids_limit`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_with_hundreds_of_processes_at_once_runs_within_the_default_limits() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"many","version":"1.0.0","private":true}
"#,
    );
    let commit = repo.commit("a suite of many processes");
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { spawn } = require('node:child_process');\n\ntest('400 processes at once', async () => {\n  const children = [];\n  for (let i = 0; i < 400; i++) children.push(spawn('sleep', ['3']));\n  const codes = await Promise.all(children.map((c) => new Promise((done) => { c.on('error', () => done('error')); c.on('exit', (code) => done(code)); })));\n  assert.deepStrictEqual(codes.filter((c) => c !== 0), []);\n});\n";
    let record = run_test_file(&sandbox, &repo, &commit, "t.test.js", test).await;
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}");
    assert!(!record.pids_limit_reached, "{record:#?}");
    assert_container_gone(&sandbox, &record).await;
}

/// vite's next family: its scripts call pnpm (`pnpm run build`, `pnpm test-unit && …`),
/// which the run's image has not ("sh: 1: pnpm: not found"); the preparation installed it
/// only for the install. The manager is kept in the layer, on the run's PATH.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_projects_scripts_run_with_the_package_manager_it_declares() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"scripted","version":"1.0.0","private":true,"packageManager":"pnpm@9.15.0","scripts":{"unit":"node --test test/","test":"pnpm run unit"},"devDependencies":{"left-pad":"1.1.3"}}
"#,
    )
    .write(
        "test/pad.test.js",
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst leftPad = require('left-pad');\n\ntest('pads', () => {\n  assert.strictEqual(leftPad('1', 2, '0'), '01');\n});\n",
    );
    let head = repo.commit("a project whose test script calls pnpm");
    let record = documented_suite_passes_one_test(&sandbox, &repo, &head).await;
    let deps = record.dependencies.as_ref().expect("prepared");
    assert!(
        deps.notes
            .contains(&"pnpm 9.15.0 is on the run's PATH for the project's scripts".to_string()),
        "{deps:#?}"
    );
    assert_container_gone(&sandbox, &record).await;
}

/// vite's license and resolve fixtures: a workspace package's `file:` dependency on a folder
/// of the tree, which pnpm installs as a copy of the folder; only its manifest was in the
/// preparation, so the package had none of its files ("failed to resolve import"). Then it
/// was linked to the tree's folder, whose real path is outside node_modules, so a bundler
/// took it for the project's source (vite's export conditions). The run now copies the
/// tree's folder into its own node_modules, beside the dependencies pnpm's store gives the
/// copy, and the record says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_dependency_on_a_folder_of_the_tree_loads_the_trees_files() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name":"root","version":"1.0.0","private":true,"packageManager":"pnpm@10.34.5"}
"#,
    )
    .write("pnpm-workspace.yaml", "packages:\n  - 'packages/*'\n")
    .write(
        "packages/app/package.json",
        r#"{"name":"@ws/app","version":"1.0.0","private":true,"dependencies":{"@ws/local-dep":"file:./__tests__/fixtures/dep"}}
"#,
    )
    .write(
        "packages/app/__tests__/fixtures/dep/package.json",
        r#"{"name":"@ws/local-dep","version":"1.0.0","main":"index.js","dependencies":{"ms":"2.1.3","@ws/nested":"file:../nested"}}
"#,
    )
    .write(
        "packages/app/__tests__/fixtures/dep/index.js",
        "const ms = require('ms');\nexports.answer = () => ms('42ms');\nexports.nested = require('@ws/nested').where;\n",
    )
    .write(
        "packages/app/__tests__/fixtures/nested/package.json",
        r#"{"name":"@ws/nested","version":"1.0.0","main":"index.js"}
"#,
    )
    .write(
        "packages/app/__tests__/fixtures/nested/index.js",
        "exports.where = __filename;\n",
    );
    let commit = repo.commit("a file: dependency on a folder of the tree");
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\nconst fs = require('node:fs');\nconst { answer, nested } = require('@ws/local-dep');\n\ntest('the folder of the tree, as a package', () => {\n  assert.strictEqual(answer(), 42);\n  const real = fs.realpathSync(require.resolve('@ws/local-dep'));\n  assert.match(real, /\\/node_modules\\/@ws\\/local-dep\\/index\\.js$/);\n  assert.match(fs.realpathSync(nested), /\\/node_modules\\/@ws\\/nested\\/index\\.js$/);\n});\n";
    let record = run_test_file(&sandbox, &repo, &commit, "packages/app/t.test.js", test).await;
    passed_with_deps(&record);
    assert!(
        record.setup.iter().any(|l| l
            == "file: folders copied into node_modules/.proven-file, as pnpm copies them: packages/app/__tests__/fixtures/dep (@ws/local-dep), packages/app/__tests__/fixtures/nested (@ws/nested)"),
        "{:?}",
        record.setup
    );
    assert_container_gone(&sandbox, &record).await;
}

/// Issue 30 (cheerio's family): a test tool that writes beside its own files (vitest's
/// typecheck writes its `tsbuildinfo` into its `dist`) runs on a copy of its package the
/// run may write, reached through node_modules/.bin as npm's links lead; the next run
/// starts from the prepared package again, with nothing the first one wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_tool_writes_beside_its_own_files_and_the_next_run_does_not_see_it() {
    let sandbox = support::sandbox(&[Language::Node], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        format!(
            r#"{{"name":"own-tool","version":"1.0.0","private":true,"description":"{}","scripts":{{"test":"uvu test"}},"devDependencies":{{"uvu":"0.5.6"}}}}
"#,
            support::unique()
        ),
    )
    .write(
        "test/own.js",
        "const { test } = require('uvu');\nconst assert = require('uvu/assert');\nconst fs = require('fs');\nconst path = require('path');\n\ntest('the runner writes beside its own files', () => {\n  const runner = fs.realpathSync(process.argv[1]);\n  assert.not.ok(runner.startsWith('/deps/'), `the runner is the layer's: ${runner}`);\n  const mark = path.join(path.dirname(fs.realpathSync(require.resolve('uvu'))), 'run.tmp');\n  assert.not.ok(fs.existsSync(mark), 'what an earlier run wrote is there');\n  fs.writeFileSync(mark, 'written');\n});\n\ntest.run();\n",
    );
    let head = repo.commit("a suite whose runner writes into its own package");
    for run in ["first", "second"] {
        let record = documented_suite_run(&sandbox, &repo, &head).await;
        let out = support::output(&record);
        assert_eq!(record.outcome, Outcome::Passed, "{run} run: {out}");
        assert_eq!(record.tests.map(|t| t.passed), Some(1), "{run} run: {out}");
        assert_container_gone(&sandbox, &record).await;
    }
}
