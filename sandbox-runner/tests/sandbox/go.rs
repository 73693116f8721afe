//! Must-show 2 (Go): `go test` in the Go image, offline (GOPROXY=off), reproduces a bug the
//! change introduces; a test that does not build proves nothing.

use proven_change::testing::TestRepo;
use proven_sandbox::{Language, NotProved, Outcome, Proof, RunRequest};

use crate::support::{self, assert_container_gone};

const GO_MOD: &str = "module example.com/durations\n\ngo 1.19\n";
const LIB_OK: &str = "package durations\n\n// Seconds converts milliseconds to whole seconds.\nfunc Seconds(ms int) int {\n\treturn ms / 1000\n}\n";
const LIB_BUG: &str = "package durations\n\n// Seconds converts milliseconds to whole seconds.\nfunc Seconds(ms int) int {\n\treturn ms / 100\n}\n";
const TEST: &str = "package durations\n\nimport \"testing\"\n\nfunc TestSeconds(t *testing.T) {\n\tif got := Seconds(2000); got != 2 {\n\t\tt.Fatalf(\"Seconds(2000) = %d, want 2\", got)\n\t}\n}\n";

fn project() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("go.mod", GO_MOD).write("durations.go", LIB_OK);
    let base = repo.commit("base");
    repo.write("durations.go", LIB_BUG);
    let change = repo.commit("change: wrong unit");
    (repo, base, change)
}

fn go_test() -> Vec<String> {
    ["go", "test", "-count=1", "-v", "./..."]
        .into_iter()
        .map(String::from)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_test_reproduces_a_bug_offline() {
    let sandbox = support::sandbox(&[Language::Go], |_| {}).await;
    let (repo, base, change) = project();
    let base = RunRequest::new(repo.path(), base, Language::Go, go_test())
        .with_file("durations_test.go", TEST);
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
    assert!(support::output(&reproduction.change[0]).contains("Seconds(2000) = 20, want 2"));
    // Standard library only: no go.sum, nothing to prepare.
    assert!(reproduction.base[0].dependencies.is_none());
    // Nothing prepared, and still the record names the toolchain and the go.mod line.
    let record = &reproduction.base[0];
    let choice = record.interpreter.as_ref().expect("the toolchain chosen");
    assert!(choice.because.contains("(go.mod)"), "{choice:?}");
    assert!(
        record
            .test_tools
            .iter()
            .any(|t| t.starts_with("go version go1.")),
        "{:?}",
        record.test_tools
    );
    for record in reproduction.base.iter().chain(&reproduction.change) {
        assert_container_gone(&sandbox, record).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_go_test_that_does_not_build_proves_nothing() {
    let sandbox = support::sandbox(&[Language::Go], |_| {}).await;
    let (repo, base, change) = project();
    // Fails on both sides, but the package never built: not a test's verdict.
    let broken = "package durations\n\nimport \"testing\"\n\nfunc TestSeconds(t *testing.T) {\n\tif Seconds(\"2s\") != 2 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n";
    let base = RunRequest::new(repo.path(), base, Language::Go, go_test())
        .with_file("durations_test.go", broken);
    let reproduction = sandbox
        .reproduce(&base, &base.at_revision(change))
        .await
        .expect("runs");
    // The base already could not build it: the change is not run for nothing.
    let run = &reproduction.base[0];
    assert!(
        run.exit_code.is_some_and(|c| c != 0),
        "{}",
        support::output(run)
    );
    assert!(
        matches!(&run.outcome, Outcome::EnvironmentError { reason } if reason.contains("did not build")),
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

const UNITS_MOD: &str = "module example.com/units\n\ngo 1.19\n";
const UNITS: &str =
    "package units\n\n// Second is a second in milliseconds.\nconst Second = 1000\n";

/// A Go module proxy in a directory, laid out as `go` reads one (served over HTTP by the
/// test, or read as `file://` by the host's go), serving example.com/units v1.0.0: the
/// stand-in for proxy.golang.org, which tests may not reach.
fn module_proxy(dir: &std::path::Path) {
    use std::io::Write;
    let v = dir.join("example.com/units/@v");
    std::fs::create_dir_all(&v).expect("proxy dir");
    std::fs::write(v.join("list"), "v1.0.0\n").expect("list");
    std::fs::write(
        v.join("v1.0.0.info"),
        r#"{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}"#,
    )
    .expect("info");
    std::fs::write(v.join("v1.0.0.mod"), UNITS_MOD).expect("mod");
    let file = std::fs::File::create(v.join("v1.0.0.zip")).expect("zip");
    let mut zip = zip::ZipWriter::new(file);
    for (name, body) in [("go.mod", UNITS_MOD), ("units.go", UNITS)] {
        zip.start_file(
            format!("example.com/units@v1.0.0/{name}"),
            zip::write::SimpleFileOptions::default(),
        )
        .expect("entry");
        zip.write_all(body.as_bytes()).expect("write");
    }
    zip.finish().expect("zip");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_modules_are_downloaded_before_the_offline_run() {
    let proxy = tempfile::tempdir().expect("proxy");
    module_proxy(proxy.path());
    let goproxy = format!("file://{}", proxy.path().display());
    let server = support::FileServer::start(proxy.path());
    let sandbox = support::sandbox(&[Language::Go], |c| {
        // The preparation reaches the module proxy through the egress proxy, allowed.
        c.goproxy = "http://goproxy.test".into();
        c.gosumdb = "off".into();
        c.registries = server.allow_as("goproxy.test");
    })
    .await;
    let repo = TestRepo::new();
    repo.write(
        "go.mod",
        "module example.com/durations\n\ngo 1.19\n\nrequire example.com/units v1.0.0\n",
    )
    .write(
        "durations.go",
        "package durations\n\nimport \"example.com/units\"\n\nfunc Seconds(ms int) int {\n\treturn ms / units.Second\n}\n",
    );
    // go.sum as `go` writes it, from the same proxy.
    let sum = std::process::Command::new("go")
        .args(["mod", "download", "example.com/units"])
        .current_dir(repo.path())
        .env("GOPROXY", &goproxy)
        .env("GOSUMDB", "off")
        .env("GOFLAGS", "-mod=mod")
        .env("GOMODCACHE", proxy.path().join("host-cache"))
        .env("GOPATH", proxy.path().join("gopath"))
        .env("GOCACHE", proxy.path().join("gocache"))
        .env("GOTOOLCHAIN", "local")
        .output()
        .expect("the host's go (scripts/test installs golang-go)");
    assert!(sum.status.success(), "{sum:?}");
    assert!(
        std::fs::read_to_string(repo.path().join("go.sum"))
            .is_ok_and(|s| s.contains("example.com/units v1.0.0 h1:")),
        "go.sum was written"
    );
    let base = repo.commit("base");
    repo.write(
        "durations.go",
        "package durations\n\nimport \"example.com/units\"\n\nfunc Seconds(ms int) int {\n\treturn ms / (units.Second / 10)\n}\n",
    );
    let change = repo.commit("change: wrong unit");
    let base = RunRequest::new(repo.path(), base, Language::Go, go_test())
        .with_file("durations_test.go", TEST);
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
        .expect("prepared modules");
    assert_eq!(deps.lock_files, ["go.mod", "go.sum"]);
    // Prepared once, then read from the cache by every other run.
    let prepared: usize = reproduction
        .base
        .iter()
        .chain(&reproduction.change)
        .filter(|r| r.dependencies.as_ref().is_some_and(|d| d.prepared_now))
        .count();
    assert!(prepared <= 1, "{prepared} preparations");
}

/// A Go package from before modules (no go.mod): module mode finds no main module, so it
/// "did not build"; run in GOPATH mode, as its CI ran it, its passing test passes and its
/// failing test fails by name, and the record says how it was run. Its Go being the
/// toolchain's own, go test's vet would hold a non-constant format string (a check of Go
/// 1.24, years after the package's era) against it and build nothing: vet is off there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_go_package_from_before_modules_runs_in_gopath_mode() {
    let sandbox = support::sandbox(&[Language::Go], |_| {}).await;
    let repo = TestRepo::new();
    repo.write("durations.go", LIB_OK).write(
        "durations_test.go",
        format!("{TEST}\nfunc TestMinutes(t *testing.T) {{\n\tmsg := \"Seconds(60000) is not 6\"\n\tif Seconds(60000) != 6 {{\n\t\tt.Fatalf(msg)\n\t}}\n}}\n"),
    );
    let commit = repo.commit("a package from 2017");
    let record = sandbox
        .run(&RunRequest::new(
            repo.path(),
            &commit,
            Language::Go,
            go_test(),
        ))
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::TestFailed, "{out}");
    let tests = record.tests.expect("go test's counts");
    assert_eq!((tests.passed, tests.failed), (1, 1), "{out}");
    assert!(
        record.failing.iter().any(|f| f.ends_with("TestMinutes")),
        "{:?}",
        record.failing
    );
    assert!(
        record.setup.iter().any(|s| s.contains("GO111MODULE=off")),
        "{:?}",
        record.setup
    );
    assert!(
        record.setup.iter().any(|s| s.contains("GOFLAGS=-vet=off")),
        "{:?}",
        record.setup
    );
    assert_container_gone(&sandbox, &record).await;

    // A module runs in module mode, as before.
    let (module, base, _) = project();
    let record = sandbox
        .run(
            &RunRequest::new(module.path(), base, Language::Go, go_test())
                .with_file("durations_test.go", TEST),
        )
        .await
        .expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    // Its `go 1.19` is older than the vet checks of the sandbox's go test: its era's.
    assert_eq!(record.setup.len(), 1, "{:?}", record.setup);
    assert!(
        record.setup[0].starts_with("go test's vet checks of the module's era"),
        "{:?}",
        record.setup
    );
}

/// cenkalti/backoff, a module of `go 1.18`: its example names an identifier the package
/// does not have, which Go 1.24's go test vets (`tests`) and before it did not, so its test
/// package "did not build" in the sandbox alone. Vetted by its era's checks, its test
/// passes; a module of `go 1.24` is still vetted by the toolchain's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_of_an_earlier_go_is_vetted_by_its_eras_checks() {
    let sandbox = support::sandbox(&[Language::Go], |_| {}).await;
    let example = "package durations\n\nimport \"fmt\"\n\nfunc ExampleRetryContext() {\n\tfmt.Println(Seconds(1000))\n\t// Output: 1\n}\n";
    let run = |go: &'static str| {
        let repo = TestRepo::new();
        repo.write(
            "go.mod",
            format!("module example.com/durations\n\ngo {go}\n"),
        )
        .write("durations.go", LIB_OK)
        .write("durations_test.go", TEST)
        .write("example_test.go", example);
        let commit = repo.commit("an example named for a function it does not have");
        (repo, commit)
    };
    let record = |go: &'static str| {
        let (repo, commit) = run(go);
        let sandbox = &sandbox;
        async move {
            sandbox
                .run(&RunRequest::new(
                    repo.path(),
                    &commit,
                    Language::Go,
                    go_test(),
                ))
                .await
                .expect("run")
        }
    };
    let old = record("1.18").await;
    let out = support::output(&old);
    assert_eq!(old.outcome, Outcome::Passed, "{out}");
    assert!(
        old.setup
            .iter()
            .any(|s| s.contains("the module says `go 1.18`")),
        "{:?}",
        old.setup
    );
    let new = record("1.24").await;
    let out = support::output(&new);
    assert_ne!(new.outcome, Outcome::Passed, "{out}");
    assert!(out.contains("RetryContext"), "{out}");
}

/// A package from before modules whose packages import one another by its own import path
/// (`github.com/someone/durations/units`), as GOPATH mode resolves it only under
/// `$GOPATH/src/<path>`: laid out there (the path read from its own imports), its passing
/// test passes and its failing test fails by name; the record says where and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_go_package_from_before_modules_importing_its_own_packages_builds() {
    let sandbox = support::sandbox(&[Language::Go], |_| {}).await;
    let repo = TestRepo::new();
    repo.write(
        "units/units.go",
        "package units\n\n// PerSecond is how many milliseconds a second holds.\nconst PerSecond = 1000\n",
    )
    .write(
        "durations.go",
        "package durations\n\nimport \"github.com/someone/durations/units\"\n\n// Seconds converts milliseconds to whole seconds.\nfunc Seconds(ms int) int {\n\treturn ms / units.PerSecond\n}\n",
    )
    .write(
        "durations_test.go",
        format!("{TEST}\nfunc TestMinutes(t *testing.T) {{\n\tif Seconds(60000) != 6 {{\n\t\tt.Fatal(\"Seconds(60000) is not 6\")\n\t}}\n}}\n"),
    );
    let commit = repo.commit("a package of 2016 with a subpackage");
    let record = sandbox
        .run(&RunRequest::new(
            repo.path(),
            &commit,
            Language::Go,
            go_test(),
        ))
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::TestFailed, "{out}");
    let tests = record.tests.expect("go test's counts");
    assert_eq!((tests.passed, tests.failed), (1, 1), "{out}");
    assert!(
        record.failing.iter().any(|f| f.ends_with("TestMinutes")),
        "{:?}",
        record.failing
    );
    assert!(
        record.setup.iter().any(|s| s
            .contains("$GOPATH/src/github.com/someone/durations (its import path, from the imports of its own packages)")),
        "{:?}",
        record.setup
    );
    assert_eq!(
        record.command,
        go_test(),
        "the record keeps the command asked for"
    );
    assert_container_gone(&sandbox, &record).await;
}
