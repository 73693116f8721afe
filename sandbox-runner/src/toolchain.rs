//! The toolchain every run had, and the declaration that chose it (issue 30, must-show 5):
//! for Python the interpreter among the configured images ([`proven_sandbox_plan::interpreter`]); for Node
//! the major `engines.node` allows ([`crate::config::SandboxConfig::image_for`]); for Rust
//! and Go the image's own toolchain, with what the project declares of it (`rust-toolchain`,
//! `rust-version`, go.mod's `go` and `toolchain` lines), so a record shows when a project
//! asked for another one.
//!
//! The versions are the image's own words (`rustc --version`), asked once per image id in a
//! container of their own (no network, an empty directory in place of the tree) and remembered for the
//! process.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use bollard::Docker;

use crate::Language;
use crate::container::{self, ContainerSpec};
use crate::record::InterpreterChoice;

/// The largest declaration file read here.
const MAX_FILE: u64 = 64 * 1024;

/// What prints a language's toolchain, a line each.
fn version_command(language: Language) -> &'static str {
    match language {
        Language::Python => "python3 --version 2>&1; python3 -m pytest --version 2>&1 | head -n 1",
        Language::Node => "echo node $(node --version); echo npm $(npm --version)",
        Language::Rust => "rustc --version; cargo --version",
        Language::Go => "go version",
    }
}

/// The versions already asked, by image id.
fn asked() -> &'static Mutex<HashMap<String, Vec<String>>> {
    static ASKED: OnceLock<Mutex<HashMap<String, Vec<String>>>> = OnceLock::new();
    ASKED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The toolchain lines of `image` (`rustc 1.95.0 (59807616e 2026-04-14)`, `go1.26.1
/// linux/amd64`): empty when the image could not say (the run goes on; the record names
/// the image and the declarations all the same).
pub(crate) async fn versions(site: &crate::deps::Site<'_>) -> Vec<String> {
    let Ok(inspected) = site.docker.inspect_image(site.image).await else {
        return Vec::new();
    };
    let id = inspected.id.unwrap_or_else(|| site.image.to_string());
    if let Some(known) = asked().lock().ok().and_then(|m| m.get(&id).cloned()) {
        return known;
    }
    let lines = ask(site.docker, site).await;
    if !lines.is_empty()
        && let Ok(mut m) = asked().lock()
    {
        m.insert(id, lines.clone());
    }
    lines
}

/// Asks in an empty directory, never the tree: what is remembered per image serves every
/// tree, so no tree's file (a `pytest.py`, a `conftest.py`, a `.npmrc`) may shape the answer.
async fn ask(docker: &Docker, site: &crate::deps::Site<'_>) -> Vec<String> {
    let Ok(empty) = tempfile::tempdir() else {
        return Vec::new();
    };
    let src = empty.path();
    let key = format!("toolchain-{}", uuid::Uuid::now_v7().simple());
    let spec = ContainerSpec {
        name: container::container_name(&key),
        key,
        runner: site.runner.label(),
        language: site.language,
        image: site.image.to_string(),
        command: vec![
            "sh".into(),
            "-c".into(),
            version_command(site.language).into(),
        ],
        env: Vec::new(),
        src,
        mounts: Vec::new(),
        limits: site.config.prepare_limits,
        user: site.config.user,
        timeout: Duration::from_secs(60),
        output: site.config.output,
    };
    match container::execute(docker, spec).await {
        Ok(execution) if execution.exit_code == Some(0) => {
            format!("{}{}", execution.output.head, execution.output.tail)
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .take(4)
                .map(str::to_string)
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The version a toolchain line names (`rustc 1.95.0 (…)` → `1.95.0`, `go version
/// go1.26.1 linux/amd64` → `1.26.1`, `node v20.20.2` → `20.20.2`).
pub(crate) fn version_of(line: &str) -> Option<String> {
    line.split_whitespace()
        .map(|w| w.trim_start_matches("go").trim_start_matches('v'))
        .find(|w| {
            w.split('.').count() >= 2
                && w.split('.')
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        })
        .map(str::to_string)
}

/// The record's choice for a run no other rule chose for: the image's toolchain, and what
/// the project declares of it, in words.
pub(crate) fn choice(
    language: Language,
    src: &Path,
    image: &str,
    versions: &[String],
    several: bool,
) -> InterpreterChoice {
    let version = versions
        .first()
        .and_then(|l| version_of(l))
        .unwrap_or_else(|| "unknown".into());
    InterpreterChoice {
        version,
        image: image.to_string(),
        because: because(language, src, several),
    }
}

fn read(src: &Path, rel: &str) -> Option<String> {
    let path = src.join(rel);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}

/// What the tree declares of its toolchain, and what the sandbox did with it (`several`:
/// images of several versions of the language are configured).
fn because(language: Language, src: &Path, several: bool) -> String {
    let declared = match language {
        Language::Rust => declared(proven_sandbox_plan::toolchain::rust_wants(src)),
        Language::Go => go_declared(src),
        Language::Node => read(src, "package.json")
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|p| p["engines"]["node"].as_str().map(str::to_string))
            .map(|range| vec![format!("engines.node {range:?} (package.json)")])
            .unwrap_or_default(),
        Language::Python => proven_sandbox_plan::python::read_plan(src)
            .python_requires
            .into_iter()
            .map(|(spec, source)| format!("{spec} ({source})"))
            .collect(),
    };
    match (declared.is_empty(), several) {
        (true, _) => "the project declares no version: the default image".into(),
        (false, false) => format!(
            "the project declares {}; the sandbox has one image of the language, used",
            declared.join(", ")
        ),
        (false, true) => format!(
            "the project declares {}; the newest configured image it allows, else the default",
            declared.join(", ")
        ),
    }
}

/// What a Rust or Go tree declares of its toolchain, in words ([`proven_sandbox_plan::toolchain`]
/// reads it, and chooses among toolchain images by it).
fn declared(wants: Vec<proven_sandbox_plan::toolchain::Wants>) -> Vec<String> {
    wants.iter().map(|w| w.source().to_string()).collect()
}

fn go_declared(src: &Path) -> Vec<String> {
    if read(src, "go.mod").is_none() {
        return vec!["no go.mod (a package from before modules)".into()];
    }
    declared(proven_sandbox_plan::toolchain::go_wants(src))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_read_from_each_toolchains_words() {
        assert_eq!(
            version_of("rustc 1.95.0 (59807616e 2026-04-14)").as_deref(),
            Some("1.95.0")
        );
        assert_eq!(
            version_of("go version go1.26.1 linux/amd64").as_deref(),
            Some("1.26.1")
        );
        assert_eq!(version_of("node v20.20.2").as_deref(), Some("20.20.2"));
        assert_eq!(version_of("Python 3.11.7").as_deref(), Some("3.11.7"));
        assert_eq!(version_of("no version here"), None);
    }

    #[test]
    fn the_declarations_are_named_in_the_record() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rust = because(Language::Rust, dir.path(), false);
        assert_eq!(rust, "the project declares no version: the default image");
        std::fs::write(
            dir.path().join("rust-toolchain.toml"),
            "[toolchain]\nchannel = \"1.70.0\"\n",
        )
        .expect("write");
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\nrust-version = \"1.65\"\n",
        )
        .expect("write");
        let rust = because(Language::Rust, dir.path(), false);
        assert!(
            rust.contains("channel 1.70.0 (rust-toolchain.toml)")
                && rust.contains("rust-version 1.65 (Cargo.toml)"),
            "{rust}"
        );
        assert!(because(Language::Go, dir.path(), false).contains("no go.mod"));
        std::fs::write(
            dir.path().join("go.mod"),
            "module example.com/a\n\ngo 1.21\n\ntoolchain go1.22.3\n",
        )
        .expect("write");
        let go = because(Language::Go, dir.path(), false);
        assert!(
            go.contains("go 1.21 (go.mod)") && go.contains("toolchain go1.22.3 (go.mod)"),
            "{go}"
        );
        std::fs::write(
            dir.path().join("package.json"),
            "{\"engines\": {\"node\": \">=0.10\"}}",
        )
        .expect("write");
        assert!(because(Language::Node, dir.path(), true).contains("engines.node \">=0.10\""));
    }
}
