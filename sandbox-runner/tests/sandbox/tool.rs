//! The tool evidence's analyzers in their images: pyflakes (pinned in the Python image),
//! `go vet` (the Go toolchain's) and clippy (the Rust toolchain's) run as plain commands,
//! offline and hardened like tests, and their output reads back as the analyzer's version
//! and its diagnostics.

use proven_change::testing::TestRepo;
use proven_sandbox::RunRequest;
use proven_sandbox::analyzer::{Analysis, Analyzer};

use crate::support;

/// `analyzer` on a one-commit repository of `files`, read back.
async fn analyse(analyzer: Analyzer, files: &[(&str, &str)], paths: &[&str]) -> Analysis {
    let language = analyzer.language();
    let sandbox = support::sandbox(&[language], |_| {}).await;
    let repo = TestRepo::new();
    for (path, text) in files {
        repo.write(path, text);
    }
    let commit = repo.commit("base");
    let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
    let command = analyzer.command(&paths).expect("a command");
    let record = sandbox
        .run(&RunRequest::new(repo.path(), &commit, language, command).as_command())
        .await
        .expect("runs");
    support::assert_container_gone(&sandbox, &record).await;
    let analysis = analyzer.read(&support::output(&record));
    assert_eq!(
        analysis.unfinished(analyzer),
        None,
        "{}",
        support::output(&record)
    );
    analysis
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyflakes_in_the_python_image_names_its_version_and_reads_both_diagnostics() {
    let code = "import os\n\n\ndef f():\n    return undefined_thing\n";
    let a = analyse(
        Analyzer::Pyflakes,
        &[("app/util.py", code)],
        &["app/util.py"],
    )
    .await;
    let version = a.version.as_deref().unwrap_or_default();
    assert!(version.starts_with("pyflakes 3.2.0"), "{version}");
    let found: Vec<(u32, &str)> = a
        .diagnostics
        .iter()
        .map(|d| (d.line, d.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (1, "'os' imported but unused"),
            (5, "undefined name 'undefined_thing'")
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_vet_in_the_go_image_reads_a_printf_with_a_wrong_verb() {
    let main = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tname := \"x\"\n\tfmt.Printf(\"%d\\n\", name)\n}\n";
    let a = analyse(
        Analyzer::GoVet,
        &[
            ("go.mod", "module example.com/app\n\ngo 1.22\n"),
            ("main.go", main),
        ],
        &["main.go"],
    )
    .await;
    assert!(
        a.version
            .as_deref()
            .unwrap_or_default()
            .starts_with("go version go1.")
    );
    assert_eq!(a.diagnostics.len(), 1, "{a:?}");
    let d = &a.diagnostics[0];
    assert_eq!((d.path.as_str(), d.line), ("main.go", 7));
    assert!(d.message.contains("Printf format %d"), "{d:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clippy_in_the_rust_image_reads_its_lint_by_code() {
    let lib = "pub fn answer() -> u32 {\n    return 42;\n}\n";
    let a = analyse(
        Analyzer::Clippy,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("src/lib.rs", lib),
        ],
        &["src/lib.rs"],
    )
    .await;
    assert!(
        a.version
            .as_deref()
            .unwrap_or_default()
            .starts_with("clippy 0.")
    );
    let d = a
        .diagnostics
        .iter()
        .find(|d| d.code == "clippy::needless_return")
        .unwrap_or_else(|| panic!("{a:?}"));
    assert_eq!((d.path.as_str(), d.line), ("src/lib.rs", 2));
}
