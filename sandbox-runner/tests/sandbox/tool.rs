//! The tool evidence's analyzers in their images: pyflakes (pinned in the Python image),
//! `go vet` (the Go toolchain's), clippy (the Rust toolchain's) and the project's own ESLint
//! (a dev dependency its Node preparation installs) run as plain commands,
//! offline and hardened like tests, and their output reads back as the analyzer's version
//! and its diagnostics.

use proven_change::testing::TestRepo;
use proven_sandbox::analyzer::{Analysis, Analyzer};
use proven_sandbox::{Language, RunRequest};

use crate::support;

/// `analyzer` on a one-commit repository of `files`, read back.
async fn analyse(analyzer: Analyzer, files: &[(&str, &str)], paths: &[&str]) -> Analysis {
    let (analysis, output) = analyse_as_it_ends(analyzer, files, paths).await;
    assert_eq!(analysis.unfinished(analyzer), None, "{output}");
    analysis
}

/// `analyzer` on a one-commit repository of `files`, read back however its run ended.
async fn analyse_as_it_ends(
    analyzer: Analyzer,
    files: &[(&str, &str)],
    paths: &[&str],
) -> (Analysis, String) {
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
    let output = support::output(&record);
    (analyzer.read(&output), output)
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

/// A crate whose benches use `#![feature(test)]` (stable Rust refuses it, E0554): clippy
/// analyses every other target, as the crate's stable CI builds it, and says so; before, the
/// whole run failed and the tree was never analysed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clippy_analyses_a_tree_whose_benches_need_nightly_without_its_benches() {
    let lib = "pub fn answer() -> u32 {\n    return 42;\n}\n";
    let bench = "#![feature(test)]\nextern crate test;\n\n#[bench]\nfn answer(b: &mut test::Bencher) {\n    b.iter(app::answer);\n}\n";
    let a = analyse(
        Analyzer::Clippy,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("src/lib.rs", lib),
            ("benches/bench.rs", bench),
        ],
        &["src/lib.rs"],
    )
    .await;
    let scope = a.scope.as_deref().unwrap_or_default();
    assert!(scope.starts_with("every target but the benches"), "{a:?}");
    assert!(scope.contains("E0554"), "{scope}");
    let d = a
        .diagnostics
        .iter()
        .find(|d| d.code == "clippy::needless_return")
        .unwrap_or_else(|| panic!("{a:?}"));
    assert_eq!((d.path.as_str(), d.line), ("src/lib.rs", 2));
    assert!(
        !a.diagnostics.iter().any(|d| d.path.starts_with("benches/")),
        "{a:?}"
    );
}

const ESLINT_PACKAGE: &str = r#"{"name":"lint-me","version":"1.0.0","private":true,"devDependencies":{"eslint":"9.39.1","@eslint/js":"9.39.1"}}
"#;
const ESLINT_CONFIG: &str = "const js = require('@eslint/js');\n\nmodule.exports = [\n  js.configs.recommended,\n  { languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },\n];\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_projects_own_eslint_with_its_configuration_reads_its_rules_on_the_given_file() {
    let lib = "const unused = 1;\n\nfunction total(items) {\n  return items.length + missing;\n}\n\nmodule.exports = total;\n";
    let a = analyse(
        Analyzer::Eslint,
        &[
            ("package.json", ESLINT_PACKAGE),
            ("eslint.config.js", ESLINT_CONFIG),
            ("lib/total.js", lib),
            // Not given: not read.
            ("lib/other.js", "const alsoUnused = 2;\n"),
        ],
        &["lib/total.js", "lib/gone.js"],
    )
    .await;
    assert_eq!(a.version.as_deref(), Some("ESLint v9.39.1"), "{a:?}");
    let found: Vec<(&str, u32, &str)> = a
        .diagnostics
        .iter()
        .map(|d| (d.path.as_str(), d.line, d.code.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("lib/total.js", 1, "no-unused-vars"),
            ("lib/total.js", 4, "no-undef")
        ]
    );
    assert_eq!(a.diagnostics[1].message, "'missing' is not defined.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_without_an_eslint_configuration_or_eslint_shows_why_and_nothing_else() {
    let lib = "const unused = 1;\n";
    let (a, _) = analyse_as_it_ends(Analyzer::Eslint, &[("lib/a.js", lib)], &["lib/a.js"]).await;
    assert!(a.diagnostics.is_empty(), "{a:?}");
    let why = a.unfinished(Analyzer::Eslint).unwrap_or_default();
    assert!(why.contains("no ESLint configuration"), "{why}");
    let (a, _) = analyse_as_it_ends(
        Analyzer::Eslint,
        &[("eslint.config.js", ESLINT_CONFIG), ("lib/a.js", lib)],
        &["lib/a.js"],
    )
    .await;
    assert!(a.diagnostics.is_empty(), "{a:?}");
    let why = a.unfinished(Analyzer::Eslint).unwrap_or_default();
    assert!(why.contains("no eslint installed"), "{why}");
}

/// `go vet` analyses only the tree: the image's build cache holds vet's facts of the
/// standard library, so no run compiles or vets a standard package again (cold, every run
/// vetted the hundreds of standard packages a module imports).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_vet_analyses_only_the_tree_and_reads_the_standard_librarys_facts_from_the_image() {
    let sandbox = support::sandbox(&[Language::Go], |_| {}).await;
    let repo = TestRepo::new();
    repo.write("go.mod", "module example.com/app\n\ngo 1.22\n").write(
        "main.go",
        "package main\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"net/http\"\n)\n\nfunc main() {\n\tb, _ := json.Marshal(http.StatusOK)\n\tfmt.Println(string(b))\n}\n",
    );
    let commit = repo.commit("base");
    let vet: Vec<String> = ["sh", "-c", "go vet -x ./... 2>&1"]
        .into_iter()
        .map(String::from)
        .collect();
    let record = sandbox
        .run(&RunRequest::new(repo.path(), &commit, Language::Go, vet).as_command())
        .await
        .expect("runs");
    let out = support::output(&record);
    assert_eq!(record.exit_code, Some(0), "{out}");
    let vetted: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("/vet ") && l.contains("vet.cfg"))
        .collect();
    assert_eq!(vetted.len(), 1, "only the tree's package is vetted: {out}");
    assert!(
        !out.lines().any(|l| l.starts_with("cd /opt/go/src")),
        "no standard package is compiled or vetted: {out}"
    );
    support::assert_container_gone(&sandbox, &record).await;
}
