//! A Go package from before modules (no go.mod), laid out as its CI laid it out: under
//! `$GOPATH/src/<its import path>`, in GOPATH mode (`GO111MODULE=off`). Its packages import
//! one another by that path (`github.com/user/repo/sub`), which GOPATH mode resolves only
//! from there; run from the tree's own directory every such import "cannot find package".
//!
//! The import path is read from the tree, never guessed: an import comment (`package sub //
//! import "github.com/user/repo/sub"`, which the go tool itself enforces), else Travis'
//! `go_import_path` (where the project's CI laid it out), else the imports of the tree's own
//! packages (an import whose tail is a directory of the tree that holds Go files), else an
//! external test package's import of the package it tests, else the repository's origin
//! (`https://github.com/user/repo.git`, `git@github.com:user/repo`).

use std::collections::BTreeMap;
use std::path::Path;

/// Go files read at most (a large tree's first files say the path as well as all would).
const MAX_FILES: usize = 2000;
/// Bytes read of each Go file (the package clause and the imports come first).
const MAX_HEAD_BYTES: usize = 16 * 1024;

/// The import path of a tree's root, and what said it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportPath {
    pub path: String,
    pub from: String,
}

/// The Go files of a tree: (directory relative to the root, `""` for the root; the file's
/// first bytes). vendor/, testdata/ and hidden directories are not the project's packages.
fn go_files(src: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![(src.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if out.len() >= MAX_FILES {
                return out;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let child = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if kind.is_dir() {
                if !name.starts_with(['.', '_']) && name != "vendor" && name != "testdata" {
                    stack.push((entry.path(), child));
                }
            } else if kind.is_file() && name.ends_with(".go") {
                let mut text = std::fs::read(entry.path()).unwrap_or_default();
                text.truncate(MAX_HEAD_BYTES);
                out.push((rel.clone(), String::from_utf8_lossy(&text).into_owned()));
            }
        }
    }
    out
}

/// `package x // import "path"`: the path the go tool requires of this directory.
fn import_comment(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("package ")?;
        let (_, comment) = rest.split_once("//").or_else(|| rest.split_once("/*"))?;
        let quoted = comment.trim().strip_prefix("import")?.trim();
        let path = quoted.strip_prefix('"')?.split('"').next()?;
        (!path.is_empty()).then(|| path.to_string())
    })
}

/// `go_import_path: github.com/user/repo` at the top level of a .travis.yml.
fn travis_import_path(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix("go_import_path:")?;
        let value = value.split(" #").next()?.trim().trim_matches(['"', '\'']);
        valid_path(value).then(|| value.to_string())
    })
}

/// The name of a file's package clause (`package errors_test` → `errors_test`).
fn package_name(text: &str) -> Option<&str> {
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("package ")?;
        rest.split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .filter(|n| !n.is_empty())
    })
}

/// The quoted paths of a file's import declarations.
fn imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let t = line.trim();
        if in_block {
            if t.starts_with(')') {
                in_block = false;
                continue;
            }
        } else if let Some(rest) = t.strip_prefix("import") {
            let rest = rest.trim();
            if rest.starts_with('(') {
                in_block = true;
                continue;
            }
        } else {
            if t.starts_with("func ") || t.starts_with("type ") || t.starts_with("var ") {
                break;
            }
            continue;
        }
        // `alias "path"`, `_ "path"`, `"path"`.
        if let Some(at) = t.find('"')
            && let Some(path) = t[at + 1..].split('"').next()
        {
            out.push(path.to_string());
        }
    }
    out
}

/// The repository path of an origin URL: `github.com/user/repo`.
fn from_origin(url: &str) -> Option<String> {
    let url = url.trim().trim_end_matches('/');
    let url = url.strip_suffix(".git").unwrap_or(url);
    let rest = if let Some((_, rest)) = url.split_once("://") {
        // scheme://[user@]host[:port]/path
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let (host, path) = rest.split_once('/')?;
        format!("{}/{path}", host.split(':').next()?)
    } else {
        // scp-like: [user@]host:path
        let rest = url.rsplit_once('@').map_or(url, |(_, r)| r);
        let (host, path) = rest.split_once(':')?;
        format!("{host}/{}", path.trim_start_matches('/'))
    };
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    let valid = parts.len() >= 2
        && parts[0].contains('.')
        && parts.iter().all(|p| {
            p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.~".contains(c))
                && *p != ".."
        });
    valid.then(|| parts.join("/"))
}

/// The import path of a tree's root, if the tree or its origin says it.
pub fn import_path(src: &Path, origin: Option<&str>) -> Option<ImportPath> {
    let files = go_files(src);
    // An import comment: the directory's path minus the directory.
    for (dir, text) in &files {
        if let Some(path) = import_comment(text)
            && let Some(root) = root_of(&path, dir)
        {
            return Some(ImportPath {
                path: root.to_string(),
                from: format!(
                    "the import comment of {}",
                    if dir.is_empty() {
                        "the root package"
                    } else {
                        dir
                    }
                ),
            });
        }
    }
    // Travis' `go_import_path`: where the project's CI laid the tree out.
    if let Some(path) = std::fs::read_to_string(src.join(".travis.yml"))
        .ok()
        .and_then(|text| travis_import_path(&text))
    {
        return Some(ImportPath {
            path,
            from: ".travis.yml go_import_path".into(),
        });
    }
    // Imports of the tree's own packages: `x/y/sub` where `sub` is a directory here.
    let dirs: std::collections::BTreeSet<&str> = files
        .iter()
        .map(|(d, _)| d.as_str())
        .filter(|d| !d.is_empty())
        .collect();
    let mut votes: BTreeMap<String, usize> = BTreeMap::new();
    for (_, text) in &files {
        for path in imports(text) {
            for dir in &dirs {
                if let Some(root) = root_of(&path, dir) {
                    *votes.entry(root.to_string()).or_default() += 1;
                }
            }
        }
    }
    if let Some((path, _)) = votes.into_iter().max_by_key(|(p, n)| (*n, p.len())) {
        return Some(ImportPath {
            path,
            from: "the imports of its own packages".into(),
        });
    }
    // An external test package (`package errors_test`) imports the package it tests by its
    // path, whose last element is that package's directory: pkg/errors, one package at the
    // root, says its path only so.
    let mut votes: BTreeMap<String, usize> = BTreeMap::new();
    for (dir, text) in &files {
        let Some(tested) = package_name(text).and_then(|p| p.strip_suffix("_test")) else {
            continue;
        };
        for path in imports(text) {
            if path.rsplit('/').next() != Some(tested) {
                continue;
            }
            if let Some(root) = root_of(&path, dir) {
                *votes.entry(root.to_string()).or_default() += 1;
            }
        }
    }
    if let Some((path, _)) = votes.into_iter().max_by_key(|(p, n)| (*n, p.len())) {
        return Some(ImportPath {
            path,
            from: "the imports of its external test packages".into(),
        });
    }
    let path = origin.and_then(from_origin)?;
    Some(ImportPath {
        path,
        from: "the repository's origin".into(),
    })
}

/// The tree's root path when the package in directory `dir` (`""` for the root) has import
/// path `path`: `path` minus `/dir`, if GOPATH can hold it.
fn root_of<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    let root = if dir.is_empty() {
        Some(path)
    } else {
        path.strip_suffix(dir).and_then(|p| p.strip_suffix('/'))
    };
    root.filter(|r| valid_path(r))
}

/// A path GOPATH can hold: a host with a dot, then path elements, nothing relative.
fn valid_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    parts.len() >= 2
        && parts[0].contains('.')
        && parts.iter().all(|p| {
            !p.is_empty()
                && *p != "."
                && *p != ".."
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.~".contains(c))
        })
}

/// The command run from `$GOPATH/src/<path>`, a link to the run's tree (the working
/// directory): the go tool reads the import path of `.` from there.
pub fn wrap(command: &[String], path: &ImportPath) -> Vec<String> {
    let script = "d=\"${GOPATH:-/tmp/go}/src/$0\" && mkdir -p \"$(dirname \"$d\")\" && ln -sfn \"$PWD\" \"$d\" && cd \"$d\" && exec \"$@\"";
    let mut out = vec![
        "sh".to_string(),
        "-c".to_string(),
        script.to_string(),
        path.path.clone(),
    ];
    out.extend(command.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::tree;

    #[test]
    fn the_import_comment_says_the_path() {
        let t = tree(&[
            ("a.go", "package a\n"),
            (
                "sub/sub.go",
                "package sub // import \"gopkg.in/someone/a.v2/sub\"\n",
            ),
        ]);
        let found = import_path(t.path(), Some("https://github.com/other/fork")).expect("path");
        assert_eq!(found.path, "gopkg.in/someone/a.v2");
        assert_eq!(found.from, "the import comment of sub");
    }

    #[test]
    fn imports_of_its_own_packages_say_the_path() {
        let t = tree(&[
            (
                "main.go",
                "package a\n\nimport (\n\t\"fmt\"\n\tx \"github.com/u/r/internal/x\"\n)\n",
            ),
            (
                "internal/x/x.go",
                "package x\n\nimport \"github.com/u/r/util\"\n",
            ),
            ("util/u.go", "package util\n"),
            ("vendor/github.com/v/w/w.go", "package w\n"),
        ]);
        let found = import_path(t.path(), None).expect("path");
        assert_eq!(found.path, "github.com/u/r");
        assert_eq!(found.from, "the imports of its own packages");
    }

    /// pkg/errors: one package at the root, no import comment, no package of its own to
    /// import; its external tests import it by its path. Run from /work, GOPATH mode found
    /// no `github.com/pkg/errors` ("cannot find package"), and the tests did not build.
    #[test]
    fn the_external_tests_import_of_the_package_says_the_path() {
        let t = tree(&[
            ("errors.go", "package errors\n\nimport \"fmt\"\n"),
            (
                "example_test.go",
                "package errors_test\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/pkg/errors\"\n)\n",
            ),
        ]);
        let found = import_path(t.path(), None).expect("path");
        assert_eq!(found.path, "github.com/pkg/errors");
        assert_eq!(found.from, "the imports of its external test packages");
        // Its CI's own layout says it first (pkg/errors' .travis.yml).
        std::fs::write(
            t.path().join(".travis.yml"),
            "language: go\ngo_import_path: \"github.com/pkg/errors\"  # where Travis puts it\ngo:\n  - 1.14\n",
        )
        .expect("write");
        let found = import_path(t.path(), None).expect("path");
        assert_eq!(found.path, "github.com/pkg/errors");
        assert_eq!(found.from, ".travis.yml go_import_path");
        // A path GOPATH cannot hold says nothing.
        let t = tree(&[
            ("a.go", "package yaml\n"),
            ("a_test.go", "package yaml_test\n\nimport \"yaml\"\n"),
        ]);
        assert_eq!(import_path(t.path(), None), None);
    }

    #[test]
    fn else_the_origin_says_it_and_nothing_relative_is_taken() {
        let t = tree(&[("a.go", "package a\n")]);
        for (url, want) in [
            ("https://github.com/u/r.git", Some("github.com/u/r")),
            ("git@github.com:u/r.git", Some("github.com/u/r")),
            (
                "ssh://git@gitlab.com:22/g/sub/r",
                Some("gitlab.com/g/sub/r"),
            ),
            ("/srv/mirrors/r", None),
            ("https://github.com/../../etc", None),
        ] {
            assert_eq!(
                import_path(t.path(), Some(url)).map(|p| p.path),
                want.map(String::from),
                "{url}"
            );
        }
        assert_eq!(import_path(t.path(), None), None);
    }
}
