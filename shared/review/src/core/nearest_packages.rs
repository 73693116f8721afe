//! The package's tests nearest a patch where a language tests by package, not by file:
//! Go's `go test` runs a package whole, cargo a workspace member. The tests of the packages
//! the patch edits, then those of the packages that depend on them; the base's, as for
//! Python ([`super::nearest`]).
//!
//! Written here: no crate maps an edited file to the Go packages or cargo members that test
//! it without building them (`go list -deps`, `cargo metadata` need a toolchain and the
//! dependencies on the host, which a review never runs).

/// The files chosen, in order, and how many there were before the first `max`.
pub(crate) type Chosen = (Vec<String>, usize);

/// Go: the test files of the packages the patch edits (a Go test lives beside the code it
/// tests, and `go test` runs a package whole), then those of the packages whose test files
/// import an edited package by its path under the module go.mod names. At most
/// `max`.
pub(crate) fn go_nearest(
    files: &[String],
    read: &dyn Fn(&str) -> Option<String>,
    edited: &[String],
    max: usize,
) -> Chosen {
    let dir = |p: &str| {
        p.rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_string())
    };
    let mut dirs: Vec<String> = edited
        .iter()
        .filter(|p| p.ends_with(".go"))
        .map(|p| dir(p))
        .collect();
    dirs.sort();
    dirs.dedup();
    let module = read("go.mod").and_then(|text| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix("module "))
            .map(|m| m.trim().trim_matches('"').to_string())
    });
    // `"example.com/m/pkg/calc"` as an import names it; the module's root package by the
    // module path alone.
    let imported: Vec<String> = module
        .iter()
        .flat_map(|m| {
            dirs.iter().map(move |d| match d.as_str() {
                "" => format!("\"{m}\""),
                d => format!("\"{m}/{d}\""),
            })
        })
        .collect();
    let tests = files
        .iter()
        .filter(|f| f.ends_with("_test.go") && !edited.contains(f));
    let (mut own, mut importers) = (Vec::new(), Vec::new());
    for f in tests {
        if dirs.contains(&dir(f)) {
            own.push(f.clone());
        } else if !imported.is_empty()
            && read(f).is_some_and(|text| imported.iter().any(|i| text.contains(i.as_str())))
        {
            importers.push(f.clone());
        }
    }
    own.extend(importers);
    let found = own.len();
    own.truncate(max);
    (own, found)
}

/// The workspace members among `files` (a `Cargo.toml` with `[package]`): each folder
/// (`""` for the root) with its package's name and its manifest.
fn rust_members(
    files: &[String],
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, String, toml::Table)> {
    files
        .iter()
        .filter(|f| *f == "Cargo.toml" || f.ends_with("/Cargo.toml"))
        .filter_map(|f| {
            let manifest: toml::Table = read(f)?.parse().ok()?;
            let name = manifest.get("package")?.get("name")?.as_str()?.to_string();
            let dir = f
                .strip_suffix("Cargo.toml")?
                .trim_end_matches('/')
                .to_string();
            Some((dir, name, manifest))
        })
        .collect()
}

/// The member a file belongs to: the deepest member folder above it.
fn member_of<'a>(path: &str, members: &'a [(String, String, toml::Table)]) -> Option<&'a str> {
    members
        .iter()
        .filter(|(dir, _, _)| dir.is_empty() || path.starts_with(&format!("{dir}/")))
        .max_by_key(|(dir, _, _)| dir.len())
        .map(|(dir, _, _)| dir.as_str())
}

/// Whether a manifest depends on package `name` (its dependencies, dev- or build-).
fn depends_on(manifest: &toml::Table, name: &str) -> bool {
    ["dependencies", "dev-dependencies", "build-dependencies"]
        .iter()
        .filter_map(|t| manifest.get(*t).and_then(|d| d.as_table()))
        .any(|deps| deps.contains_key(name))
}

/// Rust: the test files of the workspace members the patch edits (their `tests/` files and
/// their sources holding `#[test]`s), then those of the members that depend on them. A
/// run selects them by member (`cargo test -p`).
pub(crate) fn rust_nearest(
    files: &[String],
    read: &dyn Fn(&str) -> Option<String>,
    edited: &[String],
    max: usize,
) -> Chosen {
    let members = rust_members(files, read);
    let mut chosen: Vec<&str> = Vec::new();
    for path in edited.iter().filter(|p| p.ends_with(".rs")) {
        if let Some(dir) = member_of(path, &members)
            && !chosen.contains(&dir)
        {
            chosen.push(dir);
        }
    }
    let names: Vec<&str> = members
        .iter()
        .filter(|(dir, _, _)| chosen.contains(&dir.as_str()))
        .map(|(_, name, _)| name.as_str())
        .collect();
    for (dir, _, manifest) in &members {
        if !chosen.contains(&dir.as_str()) && names.iter().any(|n| depends_on(manifest, n)) {
            chosen.push(dir);
        }
    }
    let mut out = Vec::new();
    for dir in &chosen {
        let under = |sub: &str| match *dir {
            "" => sub.to_string(),
            d => format!("{d}/{sub}"),
        };
        let (tests, src) = (under("tests/"), under("src/"));
        for f in files.iter().filter(|f| {
            f.ends_with(".rs") && member_of(f, &members) == Some(*dir) && !edited.contains(f)
        }) {
            let is_test = f.starts_with(&tests)
                || (f.starts_with(&src) && read(f).is_some_and(|t| t.contains("#[test]")));
            if is_test {
                out.push(f.clone());
            }
        }
    }
    let found = out.len();
    out.truncate(max);
    (out, found)
}

/// The members `files` belong to, by package name, each once, from the tree's manifests
/// (`read`): the deepest `Cargo.toml` with `[package]` above each file.
pub(crate) fn rust_packages_of(
    files: &[String],
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for file in files {
        let mut dir = file.rsplit_once('/').map_or("", |(d, _)| d);
        let name = loop {
            let manifest = if dir.is_empty() {
                "Cargo.toml".to_string()
            } else {
                format!("{dir}/Cargo.toml")
            };
            let name = read(&manifest)
                .and_then(|t| t.parse::<toml::Table>().ok())
                .and_then(|m| Some(m.get("package")?.get("name")?.as_str()?.to_string()));
            if name.is_some() || dir.is_empty() {
                break name;
            }
            dir = dir.rsplit_once('/').map_or("", |(d, _)| d);
        };
        if let Some(name) = name
            && !out.contains(&name)
        {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go: the edited package's own test files, then those of the packages that import it
    /// under the module's path; a package of a longer path (`calcx`) is not it.
    #[test]
    fn a_go_patch_is_held_to_its_packages_tests_and_their_importers() {
        let files: Vec<String> = [
            "go.mod",
            "calc/calc.go",
            "calc/calc_test.go",
            "calc/more_test.go",
            "calcx/x_test.go",
            "api/api_test.go",
            "slow/slow_test.go",
            "root_test.go",
        ]
        .map(String::from)
        .to_vec();
        let read = |p: &str| -> Option<String> {
            Some(
                match p {
                    "go.mod" => "module example.com/m\n\ngo 1.21\n",
                    "calcx/x_test.go" => "package calcx\n\nimport \"example.com/m/calcx\"\n",
                    "api/api_test.go" => {
                        "package api\n\nimport (\n\t\"testing\"\n\t\"example.com/m/calc\"\n)\n"
                    }
                    "root_test.go" => "package m\n\nimport \"example.com/m\"\n",
                    _ => "package slow\n",
                }
                .to_string(),
            )
        };
        let (nearest, found) = go_nearest(&files, &read, &["calc/calc.go".to_string()], 40);
        assert_eq!(
            nearest,
            ["calc/calc_test.go", "calc/more_test.go", "api/api_test.go"]
        );
        assert_eq!(found, 3);
        // At most `max`, and how many there were.
        let (first, found) = go_nearest(&files, &read, &["calc/calc.go".to_string()], 1);
        assert_eq!((first.len(), found), (1, 3));
        // The module's root package, by the module path alone.
        let (root, _) = go_nearest(&files, &read, &["m.go".to_string()], 40);
        assert_eq!(root, ["root_test.go"]);
    }

    /// Rust: the edited member's tests (its `tests/` and its sources with `#[test]`), then
    /// those of the members that depend on it; a member below another is its own; the
    /// runs name them by package.
    #[test]
    fn a_rust_patch_is_held_to_its_members_tests_and_their_dependents() {
        let files: Vec<String> = [
            "Cargo.toml",
            "src/main.rs",
            "crates/calc/Cargo.toml",
            "crates/calc/src/lib.rs",
            "crates/calc/src/ops.rs",
            "crates/calc/src/plain.rs",
            "crates/calc/tests/add.rs",
            "crates/calc/fuzz/Cargo.toml",
            "crates/calc/fuzz/tests/f.rs",
            "crates/api/Cargo.toml",
            "crates/api/tests/api.rs",
            "crates/slow/Cargo.toml",
            "crates/slow/tests/slow.rs",
        ]
        .map(String::from)
        .to_vec();
        let read = |p: &str| -> Option<String> {
            Some(
                match p {
                    "Cargo.toml" => "[package]\nname = \"app\"\n[workspace]\nmembers = [\"crates/*\"]\n",
                    "crates/calc/Cargo.toml" => "[package]\nname = \"calc\"\n",
                    "crates/calc/fuzz/Cargo.toml" => "[package]\nname = \"calc-fuzz\"\n[dependencies]\ncalc = { path = \"..\" }\n",
                    "crates/api/Cargo.toml" => "[package]\nname = \"api\"\n[dev-dependencies]\ncalc = { path = \"../calc\" }\n",
                    "crates/slow/Cargo.toml" => "[package]\nname = \"slow\"\n",
                    "crates/calc/src/ops.rs" => "pub fn add() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {}\n}\n",
                    _ => "",
                }
                .to_string(),
            )
        };
        let (nearest, _) = rust_nearest(&files, &read, &["crates/calc/src/lib.rs".to_string()], 40);
        assert_eq!(
            nearest,
            [
                "crates/calc/src/ops.rs",
                "crates/calc/tests/add.rs",
                "crates/calc/fuzz/tests/f.rs",
                "crates/api/tests/api.rs"
            ]
        );
        assert_eq!(
            rust_packages_of(&nearest, &read),
            ["calc", "calc-fuzz", "api"]
        );
        // The root package's own files, not its members'.
        let (root, _) = rust_nearest(&files, &read, &["src/main.rs".to_string()], 40);
        assert_eq!(root, Vec::<String>::new());
    }
}
