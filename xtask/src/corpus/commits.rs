//! The tool bench's Go and Rust cases (`cargo xtask bench tool --commits`): the corpora hold
//! no Go or Rust project, so `go vet` and clippy (which build the whole module or crate) are
//! timed on real commits of popular repositories, fixed here before any run ([`PROJECTS`]:
//! chosen for popularity; the Go modules need no other module, as no Go module proxy is
//! reachable here; the Rust crates' dependencies come from crates.io).
//!
//! A case is one commit of the project's history: the newest commit (as of the fetched
//! head, in `git rev-list --no-merges` order) that changes a non-test source file of the
//! project's language ([`changes_source`]); its base is its parent's tree, its change the
//! commit's version of every file it touches. There is no bug: the scripted Prover answers
//! with a test that passes on both sides (a Go test in the changed file's package, a Rust
//! integration test), so the review runs its sandbox steps as it would on any change, and
//! nothing comes out `reproduced`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::case::{self, CaseRepo, CaseSpec, Edit};
use super::{Case, Control, ProverTest};

/// The projects: (name, repository, language).
pub const PROJECTS: &[(&str, &str, Lang)] = &[
    ("uuid", "https://github.com/google/uuid", Lang::Go),
    ("mux", "https://github.com/gorilla/mux", Lang::Go),
    ("pflag", "https://github.com/spf13/pflag", Lang::Go),
    ("log", "https://github.com/rust-lang/log", Lang::Rust),
    ("anyhow", "https://github.com/dtolnay/anyhow", Lang::Rust),
    (
        "byteorder",
        "https://github.com/BurntSushi/byteorder",
        Lang::Rust,
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Go,
    Rust,
}

impl Lang {
    /// The sandbox's language name.
    pub fn sandbox(self) -> &'static str {
        match self {
            Lang::Go => "go",
            Lang::Rust => "rust",
        }
    }
}

/// Whether `path` is a non-test source file of `lang`: Go, a `.go` file that is not a
/// `_test.go` nor under `testdata/`; Rust, an `.rs` file outside `tests/`, `benches/` and
/// `examples/` directories.
pub fn is_source(lang: Lang, path: &str) -> bool {
    let dirs: Vec<&str> = path.split('/').collect();
    let (dirs, file) = dirs.split_at(dirs.len() - 1);
    let under = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
    match lang {
        Lang::Go => {
            file[0].ends_with(".go") && !file[0].ends_with("_test.go") && !under(&["testdata"])
        }
        Lang::Rust => file[0].ends_with(".rs") && !under(&["tests", "benches", "examples"]),
    }
}

/// Whether a commit touching `paths` changes a non-test source file of `lang`.
pub fn changes_source(lang: Lang, paths: &[String]) -> bool {
    paths.iter().any(|p| is_source(lang, p))
}

/// The newest of `commits` (newest first, each with the paths it touches) that changes a
/// non-test source file of `lang`.
pub fn newest(lang: Lang, commits: &[(String, Vec<String>)]) -> Option<&str> {
    commits
        .iter()
        .find(|(_, paths)| changes_source(lang, paths))
        .map(|(c, _)| c.as_str())
}

/// One case: a project's commit.
pub struct CommitCase {
    name: &'static str,
    github_url: &'static str,
    lang: Lang,
    /// The upstream git directory and the chosen commit with its parent (None: not
    /// fetched, or no commit of the rule: the reason).
    chosen: Result<(PathBuf, String, String), String>,
}

/// Every project's case, each commit chosen by the rule in the repositories under `repos`.
pub fn selection(repos: &Path) -> Vec<CommitCase> {
    PROJECTS
        .iter()
        .map(|&(name, github_url, lang)| CommitCase {
            name,
            github_url,
            lang,
            chosen: choose(repos, github_url, lang),
        })
        .collect()
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The project's git directory under `repos`, as the fetch tool leaves it
/// (`OWNER+NAME/repo`, `OWNER+NAME/repo/.git` or `OWNER+NAME`).
fn git_dir(repos: &Path, github_url: &str) -> Result<PathBuf, String> {
    let name = github_url
        .trim_start_matches("https://github.com/")
        .replace('/', "+");
    let d = repos.join(&name);
    [d.join("repo").join(".git"), d.join("repo"), d.clone()]
        .into_iter()
        .find(|c| c.is_dir() && git(c, &["rev-parse", "--verify", "-q", "HEAD"]).is_ok())
        .ok_or_else(|| {
            format!(
                "{} holds no git directory (fetch {github_url})",
                d.display()
            )
        })
}

/// The project's git directory under `repos` and its commit of the rule with its parent.
fn choose(repos: &Path, github_url: &str, lang: Lang) -> Result<(PathBuf, String, String), String> {
    let dir = git_dir(repos, github_url)?;
    // Newest first; read in batches so a project whose commit is recent costs little.
    let all = git(&dir, &["rev-list", "--no-merges", "HEAD"])?;
    let all: Vec<&str> = all.lines().collect();
    for batch in all.chunks(50) {
        let commits: Vec<(String, Vec<String>)> = batch
            .iter()
            .map(|c| {
                let paths = git(
                    &dir,
                    &["diff-tree", "--no-commit-id", "-r", "--name-only", c],
                )
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect();
                (c.to_string(), paths)
            })
            .collect();
        if let Some(c) = newest(lang, &commits) {
            let parent = git(&dir, &["rev-parse", &format!("{c}^")])?
                .trim()
                .to_string();
            return Ok((dir, c.to_string(), parent));
        }
    }
    Err(format!(
        "{github_url}: no commit changes a non-test source file"
    ))
}

impl CommitCase {
    fn short(&self) -> String {
        match &self.chosen {
            Ok((_, c, _)) => c.chars().take(12).collect(),
            Err(_) => "?".into(),
        }
    }

    /// The changed source file the Prover's test goes beside (Go: its package's directory).
    fn first_source(&self, case: &CaseRepo) -> Option<String> {
        case.reverted
            .iter()
            .map(|(p, _, _)| p)
            .find(|p| is_source(self.lang, p))
            .cloned()
    }
}

/// The package clause of a Go file (`package uuid`), skipping comments before it.
pub fn go_package(source: &str) -> Option<String> {
    source
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("package "))
        .map(|p| p.split_whitespace().next().unwrap_or_default().to_string())
        .filter(|p| !p.is_empty())
}

impl Case for CommitCase {
    fn id(&self) -> String {
        format!("{}@{}", self.name, self.short())
    }
    fn project(&self) -> &str {
        self.name
    }
    fn toolchain(&self) -> String {
        match self.lang {
            Lang::Go => "Go (the sandbox's)".into(),
            Lang::Rust => "Rust (the sandbox's)".into(),
        }
    }
    fn language(&self) -> &'static str {
        self.lang.sandbox()
    }
    fn world(&self) -> Option<String> {
        None
    }
    fn build(&self, _repos: &Path, dir: &Path) -> Result<CaseRepo, String> {
        let (upstream, commit, parent) = self.chosen.clone()?;
        let files: Vec<String> = git(
            &upstream,
            &["diff-tree", "--no-commit-id", "-r", "--name-only", &commit],
        )?
        .lines()
        .map(str::to_string)
        .collect();
        let spec = CaseSpec {
            id: self.id(),
            fixed: parent,
            buggy: commit.clone(),
            dated: commit,
            files,
        };
        case::build_case(&upstream, &spec, dir)
    }
    fn available(&self, _repos: &Path) -> Result<(), String> {
        self.chosen.as_ref().map(|_| ()).map_err(Clone::clone)
    }
    fn has_bug(&self) -> bool {
        false
    }
    fn bug_command(&self, _case: &CaseRepo) -> Result<Vec<String>, String> {
        Err(format!("{}: a commit case has no bug to run", self.id()))
    }
    fn bug_test(&self, case: &CaseRepo) -> Result<ProverTest, String> {
        let source = self
            .first_source(case)
            .ok_or_else(|| format!("{}: the commit changes no source file", self.id()))?;
        Ok(match self.lang {
            Lang::Go => {
                let dir = source.rsplit_once('/').map_or("", |(d, _)| d);
                let text = case
                    .reverted
                    .iter()
                    .find(|(p, _, _)| *p == source)
                    .map(|(_, change, _)| change.as_str())
                    .unwrap_or_default();
                let package = go_package(text)
                    .ok_or_else(|| format!("{}: {source} has no package clause", self.id()))?;
                let name = "proven_commit_test.go";
                ProverTest {
                    path: if dir.is_empty() {
                        name.into()
                    } else {
                        format!("{dir}/{name}")
                    },
                    code: format!(
                        "package {package}\n\nimport \"testing\"\n\nfunc TestProvenCommitBuilds(t *testing.T) {{}}\n"
                    ),
                    tests: vec!["TestProvenCommitBuilds".into()],
                }
            }
            Lang::Rust => ProverTest {
                path: "tests/proven_commit.rs".into(),
                code: "#[test]\nfn proven_commit_builds() {}\n".into(),
                tests: vec!["proven_commit_builds".into()],
            },
        })
    }
    fn control(&self, _case: &CaseRepo) -> Result<Option<Control>, String> {
        Ok(None)
    }
    fn fix(&self, _case: &CaseRepo) -> Vec<Edit> {
        Vec::new()
    }
    fn describe(&self) -> String {
        format!(
            "commit {} of {}",
            self.short(),
            self.github_url.trim_start_matches("https://github.com/")
        )
    }
    fn studied(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(ps: &[&str]) -> Vec<String> {
        ps.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn a_go_source_file_is_a_go_file_that_is_no_test_nor_test_data() {
        assert!(is_source(Lang::Go, "uuid.go"));
        assert!(is_source(Lang::Go, "internal/x/y.go"));
        assert!(!is_source(Lang::Go, "uuid_test.go"));
        assert!(!is_source(Lang::Go, "testdata/gen.go"));
        assert!(!is_source(Lang::Go, "README.md"));
        assert!(!is_source(Lang::Go, "go.mod"));
    }

    #[test]
    fn a_rust_source_file_is_an_rs_file_outside_tests_benches_and_examples() {
        assert!(is_source(Lang::Rust, "src/lib.rs"));
        assert!(is_source(Lang::Rust, "build.rs"));
        assert!(!is_source(Lang::Rust, "tests/macros.rs"));
        assert!(!is_source(Lang::Rust, "benches/bench.rs"));
        assert!(!is_source(Lang::Rust, "examples/demo.rs"));
        assert!(!is_source(Lang::Rust, "Cargo.toml"));
        assert!(!is_source(Lang::Rust, "src/lib.go"));
    }

    #[test]
    fn the_case_is_the_newest_commit_that_changes_a_source_file_of_its_language() {
        let commits = vec![
            ("c4".to_string(), paths(&["README.md", "uuid_test.go"])),
            ("c3".to_string(), paths(&["src/lib.rs"])),
            (
                "c2".to_string(),
                paths(&["version6.go", "version6_test.go"]),
            ),
            ("c1".to_string(), paths(&["uuid.go"])),
        ];
        assert_eq!(newest(Lang::Go, &commits), Some("c2"));
        assert_eq!(newest(Lang::Rust, &commits), Some("c3"));
        assert_eq!(newest(Lang::Go, &commits[..2]), None);
    }

    #[test]
    fn the_go_test_takes_the_package_clause_of_the_changed_file() {
        let src = "// Copyright 2016 Google Inc.\n\n// Package uuid does x.\npackage uuid // import \"x\"\n\nfunc A() {}\n";
        assert_eq!(go_package(src).as_deref(), Some("uuid"));
        assert_eq!(go_package("// no clause\n"), None);
    }
}
