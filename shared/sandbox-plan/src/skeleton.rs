//! The tree a cached preparation sees: the declaration files, with no code of the project
//! in it (Python and Rust; Node's preparation copies its manifests alone already, Go's runs
//! no code of the tree).
//!
//! The preparation compiles the dependencies once (`cargo test --no-run`) so that runs do
//! not. Built from the real tree, it would also run the project's own build scripts and
//! procedural macros, code a pull request controls, in the container whose output later
//! reviews reuse: a `build.rs` could write into `/deps/target` or `/deps/vendor` and forge
//! what every later run of the same manifests sees. So the preparation gets a skeleton
//! instead: every `Cargo.toml` and the `Cargo.lock` as they are (the cache key), and for
//! each package stub targets at the paths cargo looks for (an empty library, `fn main()
//! {}` for binaries and build scripts). Dependencies resolve and compile exactly as for the
//! real tree (the same manifests, features and lock file); the project's packages compile
//! as stubs and are cleaned out afterwards.
//!
//! Why not cargo-chef: it is a command-line tool first (its library drags in its own
//! manifest model and globbing for a job of a hundred lines here), and the skeleton must be
//! made on the runner from the manifests already read for the key.

use std::fs;
use std::path::Path;

use crate::FileError;

const MAIN: &str = "fn main() {}\n";

/// Writes the skeleton of `src` into `dest`: `manifests` (relative path, contents: every
/// Cargo.toml and the Cargo.lock the key covers) and, with `stubs`, the stub targets of
/// each Cargo package. Without stubs (Python), the declaration files alone: the
/// preparation reads its plan, never the tree, and a requirement cannot name a file of the
/// tree it would build (an archive's name, a directory) that is not one of them.
pub fn write(
    src: &Path,
    manifests: &[(String, Vec<u8>)],
    dest: &Path,
    stubs_too: bool,
) -> Result<(), FileError> {
    fs::create_dir_all(dest).map_err(FileError::io("create", dest))?;
    for (rel, bytes) in manifests {
        let relative = Path::new(rel);
        if relative.is_absolute()
            || relative
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
            || rel.contains(' ')
        {
            // A pseudo-input (what setup.py printed) or no path of the tree.
            continue;
        }
        let path = dest.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(FileError::io("create", parent))?;
        }
        fs::write(&path, bytes).map_err(FileError::io("write", &path))?;
        if !stubs_too || !rel.ends_with("Cargo.toml") {
            continue;
        }
        let Ok(doc) = String::from_utf8_lossy(bytes).parse::<toml::Table>() else {
            continue;
        };
        let dir = Path::new(rel).parent().unwrap_or(Path::new(""));
        for (stub, contents) in stubs(&doc, &src.join(dir)) {
            let path = dest.join(dir).join(&stub);
            if !path.starts_with(dest) || stub.is_absolute() {
                continue;
            }
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(FileError::io("create", parent))?;
            }
            if !path.exists() {
                fs::write(&path, contents).map_err(FileError::io("write", &path))?;
            }
        }
    }
    Ok(())
}

/// The stub targets of one package (`doc` its manifest, `real` its directory in the tree):
/// relative paths with their contents. None for a virtual manifest.
fn stubs(doc: &toml::Table, real: &Path) -> Vec<(std::path::PathBuf, &'static str)> {
    let Some(package) = doc.get("package").and_then(|p| p.as_table()) else {
        return Vec::new();
    };
    let mut out: Vec<(std::path::PathBuf, &'static str)> = Vec::new();
    let safe = |p: &str| {
        !Path::new(p)
            .components()
            .any(|c| c == std::path::Component::ParentDir)
    };
    // The library: where [lib] says, else src/lib.rs when the tree has one.
    let lib = doc
        .get("lib")
        .and_then(|l| l.get("path"))
        .and_then(|p| p.as_str());
    match lib {
        Some(path) if safe(path) => out.push((path.into(), "")),
        Some(_) => {}
        None if real.join("src/lib.rs").is_file() => out.push(("src/lib.rs".into(), "")),
        None => {}
    }
    // A build script: package.build names it, else build.rs when the tree has one.
    match package.get("build") {
        Some(toml::Value::String(path)) if safe(path) => out.push((path.into(), MAIN)),
        Some(toml::Value::Boolean(false)) => {}
        _ if real.join("build.rs").is_file() => out.push(("build.rs".into(), MAIN)),
        _ => {}
    }
    if real.join("src/main.rs").is_file() {
        out.push(("src/main.rs".into(), MAIN));
    }
    // Targets the manifest lists: at their path, else where cargo infers it by name.
    for (kind, dir) in [
        ("bin", "src/bin"),
        ("test", "tests"),
        ("bench", "benches"),
        ("example", "examples"),
    ] {
        for target in doc
            .get(kind)
            .and_then(|t| t.as_array())
            .into_iter()
            .flatten()
        {
            let path = target.get("path").and_then(|p| p.as_str());
            let name = target.get("name").and_then(|n| n.as_str()).unwrap_or("");
            let rel = match path {
                Some(p) if safe(p) => p.to_string(),
                Some(_) => continue,
                None if kind == "bin"
                    && real.join("src/main.rs").is_file()
                    && !name.is_empty()
                    && !real.join(format!("{dir}/{name}.rs")).is_file()
                    && !real.join(format!("{dir}/{name}/main.rs")).is_file() =>
                {
                    "src/main.rs".into()
                }
                None if safe(name) && !name.is_empty() => {
                    if real.join(format!("{dir}/{name}/main.rs")).is_file() {
                        format!("{dir}/{name}/main.rs")
                    } else {
                        format!("{dir}/{name}.rs")
                    }
                }
                None => continue,
            };
            out.push((rel.into(), MAIN));
        }
    }
    if out
        .iter()
        .all(|(p, _)| p.as_os_str() == "build.rs" || p.ends_with("build.rs"))
    {
        // A package whose only target the tree does not show: a library, so it has one.
        out.push(("src/lib.rs".into(), ""));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::tree;

    #[test]
    fn the_skeleton_has_the_manifests_and_stubs_but_none_of_the_projects_code() {
        let manifest = "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[[bin]]\nname = \"tool\"\n\n[[test]]\nname = \"it\"\npath = \"checks/it.rs\"\nharness = false\n";
        let real = tree(&[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"app\", \"macros\"]\n",
            ),
            ("Cargo.lock", "version = 3\n"),
            ("app/Cargo.toml", manifest),
            (
                "app/build.rs",
                "fn main() { std::fs::write(\"/deps/x\", \"planted\").unwrap(); }",
            ),
            ("app/src/lib.rs", "pub fn real() {}"),
            ("app/src/bin/tool.rs", "fn main() { panic!() }"),
            (
                "macros/Cargo.toml",
                "[package]\nname = \"macros\"\nversion = \"0.1.0\"\n[lib]\nproc-macro = true\npath = \"lib/macros.rs\"\n",
            ),
            ("macros/lib/macros.rs", "compile_error!(\"real code\");"),
        ]);
        let manifests: Vec<(String, Vec<u8>)> = [
            "Cargo.toml",
            "app/Cargo.toml",
            "macros/Cargo.toml",
            "Cargo.lock",
        ]
        .iter()
        .map(|f| (f.to_string(), fs::read(real.path().join(f)).expect("read")))
        .collect();
        let dest = tempfile::tempdir().expect("tempdir");
        write(real.path(), &manifests, dest.path(), true).expect("skeleton");
        let read = |rel: &str| fs::read_to_string(dest.path().join(rel)).expect(rel);
        assert_eq!(read("app/Cargo.toml"), manifest);
        assert_eq!(read("Cargo.lock"), "version = 3\n");
        assert_eq!(read("app/build.rs"), MAIN, "the build script is a stub");
        assert_eq!(read("app/src/lib.rs"), "");
        assert_eq!(read("app/src/bin/tool.rs"), MAIN);
        assert_eq!(read("app/checks/it.rs"), MAIN);
        assert_eq!(
            read("macros/lib/macros.rs"),
            "",
            "the proc macro is an empty library"
        );
        let mut all = Vec::new();
        let mut stack = vec![dest.path().to_path_buf()];
        while let Some(p) = stack.pop() {
            for e in fs::read_dir(&p).expect("list").flatten() {
                if e.path().is_dir() {
                    stack.push(e.path());
                } else {
                    all.push(fs::read_to_string(e.path()).expect("read"));
                }
            }
        }
        assert!(
            !all.iter()
                .any(|t| t.contains("planted") || t.contains("real")),
            "no code of the project: {all:?}"
        );
    }

    #[test]
    fn a_target_path_out_of_the_package_is_not_written() {
        let real = tree(&[(
            "Cargo.toml",
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\n[lib]\npath = \"../../escape.rs\"\n",
        )]);
        let manifests = vec![(
            "Cargo.toml".to_string(),
            fs::read(real.path().join("Cargo.toml")).expect("read"),
        )];
        let root = tempfile::tempdir().expect("tempdir");
        let dest = root.path().join("skeleton");
        write(real.path(), &manifests, &dest, true).expect("skeleton");
        assert!(!root.path().join("escape.rs").exists());
        assert!(dest.join("src/lib.rs").is_file(), "a library stub instead");
    }
}
