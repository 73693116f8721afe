//! Reachability of dependency findings, per ecosystem with a parser (Go, Rust, Python): a
//! change that brings in a vulnerable version and calls the vulnerable function, one that
//! imports the package without calling it, and one that does neither. Each review is a
//! real git repository and a real store; every output format says the verdict.

use proven_change::testing::TestRepo;
use proven_report::{Format, ReachVerdict, Report, render};
use proven_store::Store;
use proven_store::testing::{Backend, TestStore};

mod kit;

/// Advisories whose affected entries name vulnerable symbols as the Go vulnerability
/// database (`imports[].symbols`) and RustSec's OSV export (`affects.functions`) publish
/// them; `TEST-PY` names `yaml.load` the same way; `TEST-NOFN` names no function, nor does
/// `TEST-PY-NOFN` (as PyPA's records never do).
const RECORDS: [&str; 5] = [
    r#"{"id":"TEST-GO","modified":"2024-01-01T00:00:00Z","summary":"parse overflows",
        "affected":[{"package":{"ecosystem":"Go","name":"example.com/vuln"},
        "ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.2.0"}]}],
        "ecosystem_specific":{"imports":[{"path":"example.com/vuln/parse","symbols":["Parse","Decoder.Decode"]}]}}]}"#,
    r#"{"id":"TEST-RS","modified":"2024-01-01T00:00:00Z","summary":"foo::parse overflows",
        "affected":[{"package":{"ecosystem":"crates.io","name":"foo"},
        "ranges":[{"type":"SEMVER","events":[{"introduced":"0.0.0-0"},{"fixed":"1.2.0"}]}],
        "ecosystem_specific":{"affects":{"functions":["foo::parse"]}}}]}"#,
    r#"{"id":"TEST-PY","modified":"2024-01-01T00:00:00Z","summary":"yaml.load runs code",
        "affected":[{"package":{"ecosystem":"PyPI","name":"PyYAML"},
        "ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"5.4"}]}],
        "ecosystem_specific":{"imports":[{"path":"yaml","symbols":["load"]}]}}]}"#,
    r#"{"id":"TEST-NOFN","modified":"2024-01-01T00:00:00Z","summary":"bar is unsound",
        "affected":[{"package":{"ecosystem":"crates.io","name":"bar"},
        "ranges":[{"type":"SEMVER","events":[{"introduced":"0.0.0-0"},{"fixed":"1.2.0"}]}]}]}"#,
    r#"{"id":"TEST-PY-NOFN","modified":"2024-01-01T00:00:00Z","summary":"requests leaks a header",
        "affected":[{"package":{"ecosystem":"PyPI","name":"requests"},
        "ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"2.31.0"}]}]}]}"#,
];

async fn seeded() -> TestStore {
    let t = TestStore::new(Backend::Sqlite).await;
    let mut run = t.store.begin_import("test");
    for raw in RECORDS {
        let record: proven_osv::Record = serde_json::from_str(raw).expect("test advisory");
        run.add_record("test", &record, raw).await.expect("import");
    }
    run.finish().await.expect("finish");
    t
}

/// One ecosystem's repository: its dependency file at a safe version and at a vulnerable
/// one, and the source file a case writes.
struct Ecosystem {
    lock: &'static str,
    safe: String,
    vulnerable: String,
    source: &'static str,
}

fn go() -> Ecosystem {
    let gomod =
        |v: &str| format!("module example.com/app\n\ngo 1.22\n\nrequire example.com/vuln {v}\n");
    Ecosystem {
        lock: "go.mod",
        safe: gomod("v1.2.0"),
        vulnerable: gomod("v1.1.0"),
        source: "cmd/app/main.go",
    }
}

fn rust(package: &str) -> Ecosystem {
    let lock = |v: &str| {
        format!(
            "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"{package}\"]\n\n[[package]]\nname = \"{package}\"\nversion = \"{v}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        )
    };
    Ecosystem {
        lock: "Cargo.lock",
        safe: lock("1.2.0"),
        vulnerable: lock("1.1.0"),
        source: "src/main.rs",
    }
}

fn python() -> Ecosystem {
    Ecosystem {
        lock: "requirements.txt",
        safe: "PyYAML==5.4\n".into(),
        vulnerable: "PyYAML==5.3\n".into(),
        source: "app/config.py",
    }
}

/// Reviews the change that raises the package into the vulnerable range and writes
/// `code`; the base holds the safe version and a source file that uses nothing.
async fn review(store: &Store, eco: &Ecosystem, code: &str) -> Report {
    let repo = TestRepo::new();
    repo.write(eco.lock, &eco.safe);
    repo.write(eco.source, "\n");
    let base = repo.commit("base");
    repo.write(eco.lock, &eco.vulnerable);
    repo.write(eco.source, code);
    let head = repo.commit("bring in the vulnerable version");
    let report = super::run(store, &repo, &base, &head).await;
    assert_eq!(report.findings.len(), 1, "{report:#?}");
    report
}

/// The one finding's reachability.
fn reach(report: &Report) -> &proven_report::Reachability {
    report.findings[0]
        .reachability
        .as_ref()
        .expect("a dependency finding has a verdict")
}

/// What the two answered verdicts are called in the output formats; a render of one must not
/// call the finding by the other's name. (`unknown` is said of other things too: SARIF's
/// `dependency` property says a requirements file's pin is of unknown directness.)
const VERDICT_WORDS: [&str; 2] = ["reachable", "not reached"];

/// The finding's verdict, checked to be said in every output format: the terminal text, the
/// markdown body, HTML, SARIF, the GitHub pull-request review, JSON, and the GitHub check
/// run's annotation (with the conclusion a not-reached advisory gets).
fn verdict(report: &Report, words: &str) -> ReachVerdict {
    let finding = &report.findings[0];
    let reach = finding
        .reachability
        .as_ref()
        .expect("a dependency finding has a verdict");
    for format in [
        Format::Text,
        Format::Markdown,
        Format::Html,
        Format::Sarif,
        Format::Github,
    ] {
        let out = render(report, format, false);
        assert!(
            out.contains(words),
            "{format:?} does not say {words:?}:\n{out}"
        );
        for other in VERDICT_WORDS.iter().filter(|w| **w != words) {
            assert!(
                !out.contains(other),
                "{format:?} says {other:?} of a finding that is {words:?}:\n{out}"
            );
        }
    }
    let json: serde_json::Value =
        serde_json::from_str(&render(report, Format::Json, false)).expect("json");
    assert_eq!(
        json["findings"][0]["reachability"]["verdict"],
        reach.verdict.as_str()
    );
    // The check run: its annotation on the lock file's line says the verdict, and an
    // advisory none of whose vulnerable code is reached concludes as `not_reached` says.
    let options = proven_github::CheckOptions {
        not_reached: "neutral".into(),
        ..proven_github::CheckOptions::default()
    };
    let updates = proven_github::check_updates(report, &options);
    let annotation = &updates[0]["output"]["annotations"][0];
    assert_eq!(annotation["path"], finding.location.path.as_str());
    let message = annotation["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("Reachability: {words}")),
        "the check run's annotation does not say {words:?}: {message}"
    );
    let conclusion = if reach.verdict == ReachVerdict::NotReached {
        "neutral"
    } else {
        "failure"
    };
    assert_eq!(updates[0]["conclusion"], conclusion, "{updates:?}");
    reach.verdict
}

const GO_CALLS: &str =
    "package main\n\nimport \"example.com/vuln/parse\"\n\nfunc main() {\n\tparse.Parse(\"x\")\n}\n";
const GO_IMPORTS: &str =
    "package main\n\nimport \"example.com/vuln/parse\"\n\nfunc main() {\n\tparse.Version()\n}\n";
const GO_NEITHER: &str = "package main\n\nfunc main() {}\n";

#[tokio::test]
async fn go_a_call_of_the_vulnerable_symbol_is_reachable_an_import_alone_or_nothing_is_not() {
    let t = seeded().await;
    let report = review(&t.store, &go(), GO_CALLS).await;
    assert_eq!(verdict(&report, "reachable"), ReachVerdict::Reachable);
    let site = &reach(&report).sites[0];
    assert_eq!((site.path.as_str(), site.line), ("cmd/app/main.go", 6));
    assert!(site.in_change, "{site:?}");
    assert!(render(&report, Format::Markdown, false).contains("parse.Parse(\"x\")"));

    let report = review(&t.store, &go(), GO_IMPORTS).await;
    assert_eq!(verdict(&report, "not reached"), ReachVerdict::NotReached);
    let found = reach(&report);
    assert_eq!(found.unused_imports.len(), 1, "{found:?}");
    assert_eq!(found.files_searched, 1);

    let report = review(&t.store, &go(), GO_NEITHER).await;
    assert_eq!(verdict(&report, "not reached"), ReachVerdict::NotReached);
    assert!(reach(&report).unused_imports.is_empty());
}

#[tokio::test]
async fn rust_a_call_of_the_vulnerable_function_is_reachable_a_use_of_another_or_nothing_is_not() {
    let t = seeded().await;
    let calls = "fn main() {\n    let _ = foo::parse(\"x\");\n}\n";
    let report = review(&t.store, &rust("foo"), calls).await;
    assert_eq!(verdict(&report, "reachable"), ReachVerdict::Reachable);
    let site = &reach(&report).sites[0];
    assert_eq!((site.path.as_str(), site.line), ("src/main.rs", 2));

    let imports = "use foo::other;\n\nfn main() {\n    other();\n}\n";
    let report = review(&t.store, &rust("foo"), imports).await;
    assert_eq!(verdict(&report, "not reached"), ReachVerdict::NotReached);

    let report = review(&t.store, &rust("foo"), "fn main() {}\n").await;
    assert_eq!(verdict(&report, "not reached"), ReachVerdict::NotReached);

    // An advisory that names no function cannot say: unknown, with why.
    let report = review(&t.store, &rust("bar"), calls).await;
    assert_eq!(verdict(&report, "unknown"), ReachVerdict::Unknown);
    let why = reach(&report).why.clone();
    assert!(why.is_some_and(|w| w.contains("names no vulnerable function")));
}

#[tokio::test]
async fn python_a_call_of_the_vulnerable_function_is_reachable_an_import_alone_or_nothing_is_not() {
    let t = seeded().await;
    let calls = "import yaml\n\n\ndef read(s):\n    return yaml.load(s)\n";
    let report = review(&t.store, &python(), calls).await;
    assert_eq!(verdict(&report, "reachable"), ReachVerdict::Reachable);
    let site = &reach(&report).sites[0];
    assert_eq!((site.path.as_str(), site.line), ("app/config.py", 5));

    let imports = "import yaml\n\n\ndef read(s):\n    return yaml.safe_load(s)\n";
    let report = review(&t.store, &python(), imports).await;
    assert_eq!(verdict(&report, "not reached"), ReachVerdict::NotReached);

    let report = review(&t.store, &python(), "def read(s):\n    return s\n").await;
    assert_eq!(verdict(&report, "not reached"), ReachVerdict::NotReached);
}

/// A Python advisory that names no function (every PyPA record): an import of the package
/// reaches, by import, and every format says so; code that neither imports nor calls it does
/// not. The call and the bare import answer the same: by import there is nothing to tell apart.
#[tokio::test]
async fn python_without_functions_an_import_reaches_by_import_and_nothing_does_not() {
    let t = seeded().await;
    let eco = Ecosystem {
        safe: "requests==2.31.0\n".into(),
        vulnerable: "requests==2.30.0\n".into(),
        ..python()
    };
    let calls = "import requests\n\n\ndef fetch(u):\n    return requests.get(u)\n";
    let imports = "from requests import Session  # noqa\n\n\ndef fetch(u):\n    return u\n";
    for (code, line) in [(calls, 1), (imports, 1)] {
        let report = review(&t.store, &eco, code).await;
        assert_eq!(verdict(&report, "reachable"), ReachVerdict::Reachable);
        let found = reach(&report);
        assert_eq!(found.basis.as_deref(), Some("imports"), "{found:?}");
        assert_eq!(
            (found.sites[0].path.as_str(), found.sites[0].line),
            ("app/config.py", line)
        );
        for format in [Format::Text, Format::Markdown] {
            let out = render(&report, format, false);
            assert!(out.contains("by imports"), "{format:?}:\n{out}");
        }
    }
    let report = review(&t.store, &eco, "def fetch(u):\n    return u\n").await;
    assert_eq!(verdict(&report, "not reached"), ReachVerdict::NotReached);
}

/// Pins in `requirements/*.txt` are the project's of the folder above `requirements/`: its
/// sources are searched (they are not under `requirements/`, which holds no code).
#[tokio::test]
async fn pins_in_a_requirements_folder_are_reached_from_the_project_above_it() {
    let t = seeded().await;
    let eco = Ecosystem {
        lock: "requirements/main.txt",
        ..python()
    };
    let calls = "import yaml\n\n\ndef read(s):\n    return yaml.load(s)\n";
    let report = review(&t.store, &eco, calls).await;
    assert_eq!(verdict(&report, "reachable"), ReachVerdict::Reachable);
    let site = &reach(&report).sites[0];
    assert_eq!((site.path.as_str(), site.line), ("app/config.py", 5));

    let report = review(&t.store, &eco, "def read(s):\n    return s\n").await;
    assert_eq!(verdict(&report, "not reached"), ReachVerdict::NotReached);
}

/// Vendored copies of the dependency call their own functions; they are not the project's
/// code, so they never make a finding reachable.
#[tokio::test]
async fn a_vendored_copy_of_the_package_is_not_the_projects_code() {
    let t = seeded().await;
    let repo = TestRepo::new();
    let eco = go();
    repo.write(eco.lock, &eco.safe);
    let base = repo.commit("base");
    repo.write(eco.lock, &eco.vulnerable);
    repo.write(eco.source, GO_NEITHER);
    repo.write("vendor/example.com/other/use.go", GO_CALLS);
    let head = repo.commit("bring in the vulnerable version, vendored");
    let report = super::run(&t.store, &repo, &base, &head).await;
    assert_eq!(verdict(&report, "not reached"), ReachVerdict::NotReached);
}
