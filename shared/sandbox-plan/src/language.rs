//! The languages the sandbox runs tests for, and the test-runner conventions each brings.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A language with a sandbox image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// pytest.
    Python,
    /// cargo test.
    Rust,
    /// node --test (or jest through `npx jest`).
    Node,
    /// go test.
    Go,
}

impl Language {
    pub const ALL: [Language; 4] = [
        Language::Python,
        Language::Rust,
        Language::Node,
        Language::Go,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
            Language::Node => "node",
            Language::Go => "go",
        }
    }

    /// The name of the locally built image (scripts/sandbox-images).
    pub fn local_image(self) -> String {
        format!("proven-sandbox-{}:local", self.as_str())
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A language name that is not one of [`Language::ALL`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown language {0:?}: expected python, rust, node or go")]
pub struct UnknownLanguage(pub String);

impl FromStr for Language {
    type Err = UnknownLanguage;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "python" | "py" => Ok(Language::Python),
            "rust" | "rs" => Ok(Language::Rust),
            "node" | "javascript" | "js" | "typescript" | "ts" => Ok(Language::Node),
            "go" | "golang" => Ok(Language::Go),
            _ => Err(UnknownLanguage(s.to_string())),
        }
    }
}

/// Which tests of one test file a run selects: by the file, and by name within it when
/// names are given. The command selects them, so an unrelated test that the change breaks
/// proves nothing about this claim.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// The test file, relative to the tree's root.
    pub path: String,
    /// Test names inside the file (pytest: `test_x` or `TestClass::test_x`; go:
    /// `TestX`; cargo: the test function's path; node: the test's name). Empty: every
    /// test of the file (Go: Proven lists the file's own test functions).
    #[serde(default)]
    pub names: Vec<String>,
    /// Rust: the workspace member (package name) whose integration test this is.
    #[serde(default)]
    pub package: Option<String>,
}

/// A test command and the variables it runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRun {
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl Language {
    /// The command Proven runs for selected tests (the model never chooses a command), with
    /// `seed` fixing what the runner randomises: hash seeds (Python), test order (go
    /// `-shuffle`, from seed 1 on); every run also gets `PROVEN_TEST_SEED`. Proofs run with
    /// seed 0; reruns that look for flakiness use other seeds. Every run is a CI's run
    /// ([`ci_env`]).
    pub fn test_run(self, selection: &Selection, seed: u64) -> TestRun {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut env = run_env();
        env.push(("PROVEN_TEST_SEED".to_string(), seed.to_string()));
        let command = match self {
            Language::Python => {
                env.push(("PYTHONHASHSEED".into(), seed.to_string()));
                let mut c = words(&["python3", "-m", "pytest", "-q"]);
                if selection.names.is_empty() {
                    c.push(selection.path.clone());
                } else {
                    c.extend(
                        selection
                            .names
                            .iter()
                            .map(|n| format!("{}::{n}", selection.path)),
                    );
                }
                c
            }
            Language::Rust => {
                let stem = std::path::Path::new(&selection.path)
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("proven")
                    .to_string();
                let mut c = words(&["cargo", "test", "--offline"]);
                if let Some(package) = &selection.package {
                    c.extend(["-p".to_string(), package.clone()]);
                }
                c.extend(["--test".to_string(), stem]);
                if !selection.names.is_empty() {
                    c.push("--".into());
                    c.extend(selection.names.iter().cloned());
                    c.push("--exact".into());
                }
                c
            }
            Language::Node => {
                let mut c = words(&["node", "--test", "--test-reporter=tap"]);
                for name in &selection.names {
                    c.push(format!("--test-name-pattern=^{}$", regex_escape(name)));
                }
                c.push(selection.path.clone());
                c
            }
            // The package of the test's directory (a Go test lives beside the code it
            // tests), and only the named tests of the file.
            Language::Go => {
                let dir = std::path::Path::new(&selection.path)
                    .parent()
                    .and_then(|d| d.to_str())
                    .filter(|d| !d.is_empty())
                    .map_or_else(|| ".".to_string(), |d| format!("./{d}"));
                let mut c = words(&["go", "test", "-count=1", "-v"]);
                if seed != 0 {
                    c.push(format!("-shuffle={seed}"));
                }
                if !selection.names.is_empty() {
                    let names: Vec<String> =
                        selection.names.iter().map(|n| regex_escape(n)).collect();
                    c.push(format!("-run=^({})$", names.join("|")));
                }
                c.push(dir);
                c
            }
        };
        TestRun { command, env }
    }

    /// The command that runs the whole test suite of a tree (the Fixer's "the package's
    /// other tests pass").
    pub fn suite_run(self) -> TestRun {
        let words: &[&str] = match self {
            Language::Python => &["python3", "-m", "pytest", "-q"],
            Language::Rust => &["cargo", "test", "--offline"],
            Language::Node => &["node", "--test", "--test-reporter=tap"],
            Language::Go => &["go", "test", "-count=1", "-v", "./..."],
        };
        let mut env = run_env();
        env.push(("PROVEN_TEST_SEED".to_string(), "0".to_string()));
        if self == Language::Python {
            env.push(("PYTHONHASHSEED".into(), "0".into()));
            // pytest names the failing and erroring tests in its short summary (the default
            // only since pytest 6): a suite's failures are compared by name with the base's.
            env.push(("PYTEST_ADDOPTS".into(), "-rfE".into()));
        }
        TestRun {
            command: words.iter().map(|w| w.to_string()).collect(),
            env,
        }
    }
}

/// What every CI service sets (GitHub Actions, Travis, GitLab, CircleCI, Azure): `CI=true`.
/// A project's tests read it to run as they do on its CI, where they are known to pass:
/// wider time limits (vue's perf tests allow 100 ms on CI, 30 ms on a laptop), no watch
/// mode or prompt, jest's `--ci` (a missing snapshot fails instead of being written),
/// tests that only a developer's machine can run skipped. Both sides of a proof run with
/// it alike.
fn ci_env() -> Vec<(String, String)> {
    vec![("CI".to_string(), "true".to_string())]
}

/// Every run's environment: a CI's ([`ci_env`]), and tools that call a registry told the
/// run has no network. A test run never has one (the network is the preparation's), so a
/// test that installs from the registry (pino's smoke test packs the project and runs `npm
/// install` of it) fails at once on `getaddrinfo`, by name, where npm's own retries, per
/// package, held it until the suite's timeout killed every other test's result with it.
fn run_env() -> Vec<(String, String)> {
    let mut env = ci_env();
    env.push(("npm_config_fetch_retries".to_string(), "0".to_string()));
    // pnpm 11 reads its settings from `pnpm_config_*` alone.
    env.push(("pnpm_config_fetch_retries".to_string(), "0".to_string()));
    // pnpm 11 checks node_modules against the lock file before `pnpm run` and installs
    // where it finds them out of step (its default `verify-deps-before-run=install`): in a
    // run, which has no network, that install fails or waits out the suite's time
    // (handlebars.js' `pnpm run build`). The preparation installed from the lock file, as a
    // CI's install step does just before its tests.
    env.push((
        "pnpm_config_verify_deps_before_run".to_string(),
        "false".to_string(),
    ));
    env
}

/// Escapes the characters a Go or JavaScript regular expression treats specially.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The names of the test functions a test file declares, in order, as the language's
/// runner finds them: Go `func TestX(t *testing.T)`, Python `def test_x` (top level) and
/// `class TestX`, Rust `#[test] fn x`. Node tests are named by strings, not read here.
pub fn declared_tests(language: Language, source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut next_is_test = false;
    let python_classes = (language == Language::Python).then(|| PythonClasses::read(source));
    for line in source.lines() {
        match language {
            Language::Go => {
                if let Some(rest) = line.strip_prefix("func Test")
                    && let Some((name, params)) = rest.split_once('(')
                    && params.contains("*testing.T)")
                    && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                    && !name.starts_with(|c: char| c.is_lowercase())
                {
                    names.push(format!("Test{name}"));
                }
            }
            Language::Python => {
                if line.starts_with("def ") || line.starts_with("async def ") {
                    let rest = line.trim_start_matches("async ").trim_start_matches("def ");
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if name.starts_with("test") || name.starts_with("Test") {
                        names.push(name);
                    }
                } else if line.starts_with("class ")
                    && let Some(classes) = &python_classes
                    && let Some(name) = classes.name_at(line)
                    && classes.is_test(name)
                {
                    names.push(name.to_string());
                }
            }
            Language::Rust => {
                let trimmed = line.trim();
                if trimmed.starts_with("#[test]") || trimmed.starts_with("#[tokio::test") {
                    next_is_test = true;
                    continue;
                }
                if next_is_test && let Some(at) = trimmed.find("fn ") {
                    let name: String = trimmed[at + 3..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        names.push(name);
                    }
                    next_is_test = false;
                }
            }
            Language::Node => {}
        }
    }
    names
}

/// A Python test file's top-level classes, their bases and what it imports, to tell which
/// classes are tests: pytest collects a class named `Test…` and every `unittest.TestCase`
/// subclass whatever its name, including one derived from a project's own base class
/// (`class MyBase(unittest.TestCase)` in tests/base.py, `class ParserChecks(MyBase)`).
struct PythonClasses {
    /// (name, bases as written, dotted).
    classes: Vec<(String, Vec<String>)>,
    /// Names bound by imports, and the module each came from (`from .base import MyBase`:
    /// `MyBase` → `.base`; `import tests.base`: `tests` → `tests.base`).
    imported: Vec<(String, String)>,
}

impl PythonClasses {
    fn read(source: &str) -> PythonClasses {
        let lines: Vec<&str> = source.lines().collect();
        let mut classes = Vec::new();
        let mut imported = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if let Some(rest) = line.strip_prefix("class ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                // Bases up to the closing parenthesis, over a few lines when they are split.
                let mut text = rest[name.len()..].to_string();
                for more in lines.iter().skip(i + 1).take(10) {
                    if !text.trim_start().starts_with('(') || text.contains(')') {
                        break;
                    }
                    text.push(' ');
                    text.push_str(more);
                }
                let bases = text
                    .trim_start()
                    .strip_prefix('(')
                    .and_then(|b| b.split(')').next())
                    .map(|b| {
                        b.split(',')
                            .map(str::trim)
                            .filter(|b| !b.is_empty() && !b.contains('='))
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                classes.push((name, bases));
            } else if let Some(rest) = line.strip_prefix("from ") {
                let Some((module, names)) = rest.split_once(" import ") else {
                    continue;
                };
                for item in names.trim_matches(['(', ')', ' ', '\\']).split(',') {
                    let item = item.trim();
                    let bound = item.rsplit_once(" as ").map_or(item, |(_, a)| a).trim();
                    let original = item.split(" as ").next().unwrap_or_default().trim();
                    if !bound.is_empty() {
                        // `from tests import base`: `base` is the module tests.base.
                        imported.push((bound.to_string(), format!("{}.{original}", module.trim())));
                    }
                }
            } else if let Some(rest) = line.strip_prefix("import ") {
                for item in rest.split(',') {
                    let item = item.trim();
                    match item.split_once(" as ") {
                        Some((module, bound)) => {
                            imported.push((bound.trim().to_string(), module.trim().to_string()))
                        }
                        None => {
                            let top = item.split('.').next().unwrap_or_default();
                            imported.push((top.to_string(), item.to_string()));
                        }
                    }
                }
            }
        }
        PythonClasses { classes, imported }
    }

    /// The class a `class …` line declares.
    fn name_at<'a>(&'a self, line: &str) -> Option<&'a str> {
        let rest = line.strip_prefix("class ")?;
        self.classes.iter().map(|(n, _)| n.as_str()).find(|n| {
            rest.starts_with(n)
                && !rest[n.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
    }

    /// A `Test…` class, or a unittest class: one of its bases is a `…TestCase`, a class of
    /// this file that is one, or a class imported from the project's tests (a relative
    /// import, or a module under a test package): that base's own file says whether it is
    /// a TestCase, and a class that is none collects no test, which the run reports as an
    /// environment error, never as a proof.
    fn is_test(&self, name: &str) -> bool {
        name.starts_with("Test") || name.starts_with("test") || self.is_test_case(name, 0)
    }

    fn is_test_case(&self, name: &str, depth: usize) -> bool {
        if depth > 10 {
            return false;
        }
        let Some((_, bases)) = self.classes.iter().find(|(n, _)| n == name) else {
            return false;
        };
        bases.iter().any(|base| {
            let last = base.rsplit('.').next().unwrap_or(base);
            last.ends_with("TestCase")
                || (base != name && self.is_test_case(base, depth + 1))
                || self.imported_from_project_tests(base)
        })
    }

    /// Whether a class of this file derives (here, or through classes of this file) from a
    /// class imported from the project's tests.
    fn inherits_imported_from_project_tests(&self, name: &str, depth: usize) -> bool {
        if depth > 10 {
            return false;
        }
        self.classes
            .iter()
            .find(|(n, _)| n == name)
            .is_some_and(|(_, bases)| {
                bases.iter().any(|base| {
                    self.imported_from_project_tests(base)
                        || (base != name
                            && self.inherits_imported_from_project_tests(base, depth + 1))
                })
            })
    }

    /// Whether `base` (`MyBase`, `base.MyBase`) comes from the project's own tests.
    fn imported_from_project_tests(&self, base: &str) -> bool {
        let head = base.split('.').next().unwrap_or(base);
        self.imported.iter().any(|(bound, module)| {
            bound == head
                && (module.starts_with('.')
                    || module.split('.').any(|part| {
                        let part = part.to_ascii_lowercase();
                        part == "test"
                            || part == "tests"
                            || part == "testing"
                            || part.starts_with("test_")
                            || part.ends_with("_test")
                            || part.ends_with("_tests")
                    }))
        })
    }
}

/// Whether `name` (as a selection names it) is a test `source` declares: pytest's
/// `TestClass::test_method` names its class and a method in it; a node test's name is a
/// string literal in the file.
pub fn declares_test(language: Language, source: &str, name: &str) -> bool {
    if name.is_empty() || name.contains(['\n', '\0']) {
        return false;
    }
    match language {
        Language::Node => ['\'', '"', '`']
            .iter()
            .any(|q| source.contains(&format!("{q}{name}{q}"))),
        Language::Python => {
            // One case of a parametrized test (pytest's id, `test_doc_lists[docs_descriptor1]`,
            // `TestK::test_m[1-2]`) is its function's: keras-9's failing test is named so.
            let name = match name.strip_suffix(']').and_then(|n| n.split_once('[')) {
                Some((function, _)) if !function.is_empty() && !function.ends_with(':') => function,
                _ => name,
            };
            let mut parts = name.split("::");
            let first = parts.next().unwrap_or_default();
            if !declared_tests(language, source).iter().any(|d| d == first) {
                return false;
            }
            // A method the class inherits from a base in another test module (tests/base.py)
            // is not in this file: a test-named method of such a class is taken as named.
            let inherits =
                PythonClasses::read(source).inherits_imported_from_project_tests(first, 0);
            parts.all(|method| {
                source.lines().any(|l| {
                    let t = l.trim_start();
                    (t.starts_with(&format!("def {method}("))
                        || t.starts_with(&format!("async def {method}(")))
                        && l.len() > t.len()
                }) || (inherits
                    && method.starts_with("test")
                    && method.chars().all(|c| c.is_alphanumeric() || c == '_'))
            })
        }
        _ => declared_tests(language, source).iter().any(|d| d == name),
    }
}

/// Whether a Go tree is from before modules: no `go.mod` at its root (a file, never
/// followed through a link). Module mode finds no main module there, so its tests run in
/// GOPATH mode, as the project's CI ran them; a tree with a go.mod (or a link named so)
/// runs in module mode.
pub fn go_before_modules(src: &std::path::Path) -> bool {
    std::fs::symlink_metadata(src.join("go.mod")).is_err()
}

/// The vet checks `go test` ran before Go 1.24 (`cmd/go/internal/test`'s default set): 1.24
/// added the `tests` analyzer, which fails the build of a test package whose example names
/// an identifier it does not have (cenkalti/backoff's `ExampleRetryContext`, a module of
/// `go 1.18`). (1.24's printf check of non-constant formats keys on the file's own Go
/// version, so the `go` directive already keeps it to its era.)
const GO_VET_BEFORE_1_24: &str =
    "atomic,bool,buildtags,directive,errorsas,ifaceassert,nilfunc,printf,stringintconv";

/// `GOFLAGS` for a module whose `go` directive is older than Go 1.24: go test's vet limited
/// to the checks its era's `go test` ran ([`GO_VET_BEFORE_1_24`]), with the directive it
/// was read from; None for a module of 1.24 or later, or a go.mod with no directive.
pub fn go_vet_of_era(go_mod: &str) -> Option<(String, String)> {
    let version = go_mod.lines().find_map(|l| {
        let l = l.split("//").next().unwrap_or_default().trim();
        l.strip_prefix("go ").map(str::trim)
    })?;
    let mut parts = version.split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    ((major, minor) < (1, 24)).then(|| {
        (
            format!("GOFLAGS=-vet={GO_VET_BEFORE_1_24}"),
            format!("go {version}"),
        )
    })
}

/// Lints a newer rustc denies by default that the stable Rust of a tree's date did not
/// (a warning then, or no lint yet), each with the first stable that denies it: the tree's
/// CI built its crates on that Rust, so such a lint on its code is no fault the CI saw.
/// serde-yaml (2024-03) stopped at `dangerous_implicit_autorefs` on the images' Rust.
/// From the release notes and the pull requests that changed the level.
const RUST_LINTS_DENIED_SINCE: &[(&str, u32)] = &[
    // rust-lang/rust#113422, uplifted from clippy as deny-by-default.
    ("invalid_reference_casting", 73),
    // Warn in 1.88 (rust-lang/rust#123239), deny from 1.89 (rust-lang/rust#141661).
    ("dangerous_implicit_autorefs", 89),
    // The never type's lints, deny on every edition from 1.92 (rust-lang/rust#146167,
    // merged in 2025-10); the first was deny in the 2024 edition alone from 1.85.
    ("never_type_fallback_flowing_into_unsafe", 92),
    ("dependency_on_unit_never_type_fallback", 92),
];

/// The minor version of the stable Rust out on `date` (`2024-03-25`, an RFC 3339 instant's
/// day): 1.1 came on 2015-06-25, and a release every six weeks since.
pub fn rust_of_date(date: &str) -> Option<u32> {
    let day = time::Date::parse(
        date.get(..10)?,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .ok()?;
    let first = time::macros::date!(2015 - 06 - 25);
    let days = (day - first).whole_days();
    (days >= 0).then(|| 1 + (days / 42) as u32)
}

/// `RUSTFLAGS` for a tree whose date's stable Rust did not deny what the images' rustc
/// denies by default ([`RUST_LINTS_DENIED_SINCE`]): those lints allowed by default, which
/// the crates' own `#![deny]` attributes still override, with the Rust they were read from;
/// None when the date's Rust denied them all.
pub fn rust_lints_of_era(date: &str) -> Option<(String, u32)> {
    let era = rust_of_date(date)?;
    let allowed: Vec<String> = RUST_LINTS_DENIED_SINCE
        .iter()
        .filter(|(_, since)| era < *since)
        .map(|(lint, _)| format!("-A {lint}"))
        .collect();
    (!allowed.is_empty()).then(|| (format!("RUSTFLAGS={}", allowed.join(" ")), era))
}

/// Whether a repository path names a test file (in any language). A Fixer's patch may not
/// touch one: a patch that edits the proving test proves nothing.
pub fn is_test_path(path: &str) -> bool {
    let mut components = path.split('/').filter(|c| !c.is_empty()).peekable();
    while let Some(component) = components.next() {
        let last = components.peek().is_none();
        let lower = component.to_ascii_lowercase();
        if !last {
            if matches!(
                lower.as_str(),
                "test" | "tests" | "__tests__" | "spec" | "specs" | "testdata" | "testing"
            ) {
                return true;
            }
            continue;
        }
        let stem = lower.split('.').next().unwrap_or_default();
        return lower == "conftest.py"
            || (lower.starts_with("test_") && lower.ends_with(".py"))
            || stem.ends_with("_test")
            || stem.ends_with("_tests")
            || lower.contains(".test.")
            || lower.contains(".spec.");
    }
    false
}

#[cfg(test)]
mod tests {

    /// dtolnay/serde-yaml (2024-03-25, Rust 1.77 then): rustc 1.89 and later deny
    /// `dangerous_implicit_autorefs`, which its libyaml port trips, and its lib did not
    /// compile. A tree of a date before a lint was denied gets it allowed; one after, not.
    #[test]
    fn a_tree_of_an_earlier_rust_is_built_without_the_lints_denied_since() {
        assert_eq!(rust_of_date("2015-06-25"), Some(1));
        assert_eq!(rust_of_date("2024-03-21T00:00:00Z"), Some(77));
        assert_eq!(rust_of_date("2025-08-07"), Some(89));
        assert_eq!(rust_of_date("2025-08-06"), Some(88));
        assert_eq!(rust_of_date("2014-01-01"), None);
        assert_eq!(rust_of_date("yesterday"), None);
        let never =
            "-A never_type_fallback_flowing_into_unsafe -A dependency_on_unit_never_type_fallback";
        assert_eq!(
            rust_lints_of_era("2024-03-25T00:50:04Z"),
            Some((
                format!("RUSTFLAGS=-A dangerous_implicit_autorefs {never}"),
                77
            ))
        );
        assert_eq!(
            rust_lints_of_era("2022-01-20"),
            Some((
                format!(
                    "RUSTFLAGS=-A invalid_reference_casting -A dangerous_implicit_autorefs {never}"
                ),
                58
            ))
        );
        // 1.89 denied the autoref lint already; the never type's came in 1.92.
        assert_eq!(
            rust_lints_of_era("2025-09-01"),
            Some((format!("RUSTFLAGS={never}"), 89))
        );
        assert_eq!(rust_lints_of_era("2026-01-01"), None);
    }

    /// cenkalti/backoff (`go 1.18`, 2024): Go 1.24's go test vets examples (`tests`), and
    /// its `ExampleRetryContext` names no `RetryContext`: the test package did not build.
    /// A module older than 1.24 is vetted by its era's checks; one of 1.24 or later, or a
    /// go.mod with no directive, by the toolchain's own.
    #[test]
    fn a_module_before_go_1_24_is_vetted_by_its_eras_checks() {
        let (flags, from) =
            go_vet_of_era("module github.com/cenkalti/backoff/v4\n\ngo 1.18 // the floor\n")
                .expect("older than 1.24");
        assert_eq!(
            flags,
            "GOFLAGS=-vet=atomic,bool,buildtags,directive,errorsas,ifaceassert,nilfunc,printf,stringintconv"
        );
        assert_eq!(from, "go 1.18");
        assert!(go_vet_of_era("module m\ngo 1.23.4\n").is_some());
        for newer in ["module m\ngo 1.24\n", "module m\ngo 1.26.0\n", "module m\n"] {
            assert_eq!(go_vet_of_era(newer), None, "{newer}");
        }
    }

    use super::*;

    #[test]
    fn a_go_tree_without_go_mod_is_from_before_modules() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("calc.go"), "package calc\n").expect("write");
        assert!(go_before_modules(dir.path()));
        std::fs::write(dir.path().join("go.mod"), "module calc\n").expect("write");
        assert!(!go_before_modules(dir.path()));
    }

    #[test]
    fn test_paths_are_recognised_in_every_language() {
        for path in [
            "tests/test_app.py",
            "pkg/test_util.py",
            "pkg/util_test.py",
            "conftest.py",
            "src/tests/mod.rs",
            "tests/integration.rs",
            "crate/src/parser_test.rs",
            "web/app.test.js",
            "web/app.spec.ts",
            "web/__tests__/app.js",
            "cmd/main_test.go",
            "internal/testdata/input.json",
        ] {
            assert!(is_test_path(path), "{path} is a test path");
        }
        for path in [
            "src/lib.rs",
            "app/contest.py",
            "latest/app.py",
            "src/attestation.rs",
            "web/app.js",
            "main.go",
        ] {
            assert!(!is_test_path(path), "{path} is not a test path");
        }
    }

    #[test]
    fn commands_select_the_tests_by_file_and_name() {
        let sel = |path: &str, names: &[&str], package: Option<&str>| Selection {
            path: path.into(),
            names: names.iter().map(|n| n.to_string()).collect(),
            package: package.map(String::from),
        };
        let py = Language::Python.test_run(
            &sel("tests/test_a.py", &["test_x", "TestK::test_y"], None),
            0,
        );
        assert_eq!(
            &py.command[4..],
            ["tests/test_a.py::test_x", "tests/test_a.py::TestK::test_y"]
        );
        assert!(py.env.contains(&("PYTHONHASHSEED".into(), "0".into())));
        // Every test and suite run is a CI's run, in every language.
        for language in Language::ALL {
            let ci = ("CI".to_string(), "true".to_string());
            assert!(language.suite_run().env.contains(&ci), "{language}");
            let run = language.test_run(&sel("t", &[], None), 0);
            assert!(run.env.contains(&ci), "{language}");
        }
        let go = Language::Go.test_run(&sel("pkg/units/a_test.go", &["TestA", "TestB"], None), 3);
        assert_eq!(
            go.command,
            [
                "go",
                "test",
                "-count=1",
                "-v",
                "-shuffle=3",
                "-run=^(TestA|TestB)$",
                "./pkg/units"
            ]
        );
        let rust =
            Language::Rust.test_run(&sel("crates/core/tests/proven.rs", &[], Some("core")), 0);
        assert_eq!(
            rust.command,
            [
                "cargo",
                "test",
                "--offline",
                "-p",
                "core",
                "--test",
                "proven"
            ]
        );
        let node = Language::Node.test_run(&sel("test/a.test.js", &["adds (1+1)"], None), 0);
        assert_eq!(
            node.command,
            [
                "node",
                "--test",
                "--test-reporter=tap",
                "--test-name-pattern=^adds \\(1\\+1\\)$",
                "test/a.test.js"
            ]
        );
    }

    #[test]
    fn declared_tests_are_read_from_the_file() {
        let go = "package m\n\nfunc TestAdd(t *testing.T) {}\nfunc TestSub(t *testing.T) {\n}\nfunc helper(t *testing.T) {}\nfunc Testlower(t *testing.T) {}\nfunc BenchmarkX(b *testing.B) {}\n";
        assert_eq!(declared_tests(Language::Go, go), ["TestAdd", "TestSub"]);
        let py = "import x\n\ndef test_a():\n    pass\n\nclass TestK:\n    def test_m(self):\n        pass\n\ndef helper():\n    pass\n";
        assert_eq!(declared_tests(Language::Python, py), ["test_a", "TestK"]);
        assert!(declares_test(Language::Python, py, "TestK::test_m"));
        assert!(!declares_test(Language::Python, py, "TestK::test_zz"));
        assert!(!declares_test(Language::Python, py, "helper"));
        // A case of a parametrized test, by pytest's id (keras-9's `test_doc_lists[…]`).
        assert!(declares_test(
            Language::Python,
            py,
            "test_a[docs_descriptor1]"
        ));
        assert!(declares_test(Language::Python, py, "TestK::test_m[1-2]"));
        assert!(!declares_test(Language::Python, py, "helper[1]"));
        assert!(!declares_test(Language::Python, py, "[1]"));
        // unittest classes are tests whatever their name (tornado's, black's).
        let ut = "class StaticFileTest(WebTestCase):\n    def test_range(self):\n        pass\n\nclass Helper(object):\n    def test_no(self):\n        pass\n";
        assert_eq!(declared_tests(Language::Python, ut), ["StaticFileTest"]);
        assert!(declares_test(
            Language::Python,
            ut,
            "StaticFileTest::test_range"
        ));
        assert!(!declares_test(Language::Python, ut, "Helper::test_no"));
        // A unittest class derived from the project's own TestCase base, whatever its name.
        let derived = "import unittest\nfrom tests.base import MyBase\nfrom .helpers import Mixin\nfrom . import base\nimport io\n\nclass Local(unittest.TestCase):\n    pass\n\nclass ParserChecks(MyBase):\n    def test_parse(self):\n        pass\n\nclass ViaLocal(Local):\n    pass\n\nclass Split(\n    Mixin,\n    object,\n):\n    pass\n\nclass ViaModule(base.MyBase):\n    pass\n\nclass Stream(io.StringIO):\n    def test_no(self):\n        pass\n";
        assert_eq!(
            declared_tests(Language::Python, derived),
            ["Local", "ParserChecks", "ViaLocal", "Split", "ViaModule"]
        );
        assert!(declares_test(
            Language::Python,
            derived,
            "ParserChecks::test_parse"
        ));
        // A test the class inherits from tests/base.py.
        assert!(declares_test(
            Language::Python,
            derived,
            "ParserChecks::test_inherited"
        ));
        assert!(!declares_test(
            Language::Python,
            derived,
            "ParserChecks::helper"
        ));
        assert!(!declares_test(
            Language::Python,
            derived,
            "Local::test_inherited"
        ));
        assert!(!declares_test(Language::Python, derived, "Stream"));
        assert!(!declares_test(Language::Python, derived, "Stream::test_no"));
        let rs = "#[test]\nfn adds() {}\n\n#[test]\n#[ignore]\nfn later() {}\nfn helper() {}\n";
        assert_eq!(declared_tests(Language::Rust, rs), ["adds", "later"]);
        assert!(declares_test(
            Language::Node,
            "test('adds', () => {})",
            "adds"
        ));
        assert!(!declares_test(
            Language::Node,
            "test('adds', () => {})",
            "add"
        ));
    }

    #[test]
    fn languages_parse_from_their_names_and_aliases() {
        assert_eq!("Python".parse::<Language>().ok(), Some(Language::Python));
        assert_eq!("rs".parse::<Language>().ok(), Some(Language::Rust));
        assert_eq!("js".parse::<Language>().ok(), Some(Language::Node));
        assert_eq!("golang".parse::<Language>().ok(), Some(Language::Go));
        assert!("cobol".parse::<Language>().is_err());
    }
}
