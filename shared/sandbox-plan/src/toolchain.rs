//! Which Rust or Go toolchain a tree runs on, when the operator configures images of several
//! versions (`rust1.96=IMAGE`, `go1.27=IMAGE` beside the language's default image): a pure
//! function of what the project declares of its toolchain and the configured images, as
//! [`crate::interpreter`] is for Python.
//!
//! - An exact toolchain the project pins (`rust-toolchain(.toml)`'s channel `1.80.0`, go.mod's
//!   `toolchain go1.22.3`): the image of that version, else the oldest image newer than it
//!   (the nearest that still builds it).
//! - A least version it needs (Cargo.toml's `rust-version`, go.mod's `go` line): the newest
//!   image that meets every such bound.
//! - Nothing declared, a channel name (`stable`, `nightly`), or no image meets it: None, and
//!   the language's default image runs it (the record names what was declared).

use std::path::Path;

use crate::record::InterpreterChoice;

/// The largest declaration file read here.
const MAX_FILE: u64 = 64 * 1024;

/// A version as numbers (`1.80.0` → [1, 80, 0]).
pub type Version = Vec<u32>;

/// What a tree says of its toolchain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wants {
    /// This toolchain exactly (a pinned channel, go.mod's `toolchain`).
    Exact(Version, String),
    /// At least this version (`rust-version`, go.mod's `go`).
    AtLeast(Version, String),
    /// A declaration that names no version (`channel nightly (rust-toolchain)`).
    Named(String),
}

impl Wants {
    /// The declaration in words, with where it was read.
    pub fn source(&self) -> &str {
        match self {
            Wants::Exact(_, s) | Wants::AtLeast(_, s) | Wants::Named(s) => s,
        }
    }
}

/// `1.80`, `1.80.0`, `go1.22.3` as numbers; None for a channel name or anything else.
pub fn version(text: &str) -> Option<Version> {
    let text = text.trim().trim_start_matches("go");
    let parts: Option<Version> = text.split('.').map(|p| p.parse().ok()).collect();
    parts.filter(|p| p.len() >= 2)
}

fn show(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(".")
}

fn read(src: &Path, rel: &str) -> Option<String> {
    let path = src.join(rel);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}

/// What a Rust tree declares: its toolchain file's channel, its manifest's `rust-version`.
pub fn rust_wants(src: &Path) -> Vec<Wants> {
    let mut out = Vec::new();
    for file in ["rust-toolchain.toml", "rust-toolchain"] {
        let Some(text) = read(src, file) else {
            continue;
        };
        // The legacy file is a channel name, or TOML of the same shape as the new one.
        let channel = text
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| {
                t.get("toolchain")?
                    .get("channel")?
                    .as_str()
                    .map(str::to_string)
            })
            .unwrap_or_else(|| text.lines().next().unwrap_or_default().trim().to_string());
        let said = format!("channel {channel} ({file})");
        match version(&channel) {
            Some(v) => out.push(Wants::Exact(v, said)),
            None if !channel.is_empty() => out.push(Wants::Named(said)),
            None => {}
        }
        break;
    }
    if let Some(manifest) = read(src, "Cargo.toml").and_then(|t| t.parse::<toml::Table>().ok()) {
        let declared = manifest
            .get("package")
            .and_then(|p| p.get("rust-version"))
            .or_else(|| {
                manifest
                    .get("workspace")?
                    .get("package")?
                    .get("rust-version")
            })
            .and_then(|v| v.as_str());
        if let Some(text) = declared {
            let said = format!("rust-version {text} (Cargo.toml)");
            out.push(match version(text) {
                Some(v) => Wants::AtLeast(v, said),
                None => Wants::Named(said),
            });
        }
    }
    out
}

/// What a Go tree declares: go.mod's `go` and `toolchain` lines.
pub fn go_wants(src: &Path) -> Vec<Wants> {
    let Some(text) = read(src, "go.mod") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let (key, value) = l.trim().split_once(char::is_whitespace)?;
            let value = value.trim();
            let v = version(value)?;
            match key {
                "go" => Some(Wants::AtLeast(v, format!("go {value} (go.mod)"))),
                "toolchain" => Some(Wants::Exact(v, format!("toolchain {value} (go.mod)"))),
                _ => None,
            }
        })
        .collect()
}

/// The image a tree runs on among `images` (version, image) of `language` (`Rust`, `Go`:
/// the word the record says), and why; None: the default image.
pub fn choose(
    language: &str,
    wants: &[Wants],
    images: &[(String, String)],
) -> Option<InterpreterChoice> {
    let mut images: Vec<(Version, &String)> = images
        .iter()
        .filter_map(|(v, image)| Some((version(v)?, image)))
        .collect();
    images.sort();
    let least: Vec<(&Version, &String)> = wants
        .iter()
        .filter_map(|w| match w {
            Wants::AtLeast(v, s) => Some((v, s)),
            Wants::Exact(..) | Wants::Named(_) => None,
        })
        .collect();
    let meets = |v: &Version| least.iter().all(|(l, _)| newer_or_same(v, l));
    let said = |v: &Version| -> Vec<String> {
        least
            .iter()
            .filter(|(l, _)| newer_or_same(v, l))
            .map(|(_, s)| (*s).clone())
            .collect()
    };
    let exact = wants.iter().find_map(|w| match w {
        Wants::Exact(v, s) => Some((v, s)),
        Wants::AtLeast(..) | Wants::Named(_) => None,
    });
    if let Some((pinned, source)) = exact {
        let found = images
            .iter()
            .find(|(v, _)| same_release(v, pinned) && meets(v))
            .or_else(|| images.iter().find(|(v, _)| v > pinned && meets(v)));
        return found.map(|(v, image)| InterpreterChoice {
            version: show(v),
            image: (*image).clone(),
            because: if same_release(v, pinned) {
                format!("{language} {} as the project pins it ({source})", show(v))
            } else {
                format!(
                    "the project pins {language} {} ({source}), which the sandbox has no image of: the nearest newer image",
                    show(pinned)
                )
            },
        });
    }
    if least.is_empty() {
        return None;
    }
    images
        .iter()
        .rev()
        .find(|(v, _)| meets(v))
        .map(|(v, image)| InterpreterChoice {
            version: show(v),
            image: (*image).clone(),
            because: format!(
                "the newest {language} the sandbox has that the project allows: {} ({})",
                show(v),
                said(v).join(", ")
            ),
        })
}

/// `v` is `least` or newer, comparing the parts both name (`1.96` meets `1.96.0`).
fn newer_or_same(v: &[u32], least: &[u32]) -> bool {
    let n = v.len().min(least.len());
    v[..n] >= least[..n]
}

/// Both name the same release as far as the shorter says (`1.80` and `1.80.0`).
fn same_release(a: &[u32], b: &[u32]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn images() -> Vec<(String, String)> {
        ["1.80", "1.95", "1.96"]
            .iter()
            .map(|v| (v.to_string(), format!("rust{v}")))
            .collect()
    }

    use crate::testing::tree;

    #[test]
    fn a_rust_version_newer_than_the_default_takes_the_newest_image_that_meets_it() {
        // ripgrep's family: `rust-version = "1.96"`, the default image has 1.95.
        let dir = tree(&[(
            "Cargo.toml",
            "[package]\nname = \"rg\"\nversion = \"15.2.0\"\nrust-version = \"1.96\"\n",
        )]);
        let wants = rust_wants(dir.path());
        let chosen = choose("Rust", &wants, &images()).expect("an image meets it");
        assert_eq!(chosen.image, "rust1.96");
        assert_eq!(
            chosen.because,
            "the newest Rust the sandbox has that the project allows: 1.96 (rust-version 1.96 (Cargo.toml))"
        );
        let too_new = [Wants::AtLeast(vec![1, 97], "rust-version 1.97".into())];
        assert_eq!(choose("Rust", &too_new, &images()), None);
    }

    #[test]
    fn a_pinned_toolchain_takes_its_own_image_else_the_nearest_newer() {
        let dir = tree(&[("rust-toolchain.toml", "[toolchain]\nchannel = \"1.80.0\"\n")]);
        let chosen = choose("Rust", &rust_wants(dir.path()), &images()).expect("pinned");
        assert_eq!(chosen.image, "rust1.80");
        assert_eq!(chosen.version, "1.80");
        let dir = tree(&[("rust-toolchain", "1.85\n")]);
        let chosen = choose("Rust", &rust_wants(dir.path()), &images()).expect("nearest");
        assert_eq!(chosen.image, "rust1.95");
        assert!(chosen.because.contains("no image of"), "{}", chosen.because);
        let dir = tree(&[("rust-toolchain", "nightly\n")]);
        let wants = rust_wants(dir.path());
        assert_eq!(
            wants,
            [Wants::Named("channel nightly (rust-toolchain)".into())]
        );
        assert_eq!(choose("Rust", &wants, &images()), None);
    }

    #[test]
    fn go_mods_go_line_is_a_least_version_and_its_toolchain_line_a_pin() {
        let go_images: Vec<(String, String)> = ["1.22", "1.26", "1.27"]
            .iter()
            .map(|v| (v.to_string(), format!("go{v}")))
            .collect();
        // hugo's family: `go 1.27.0`.
        let dir = tree(&[("go.mod", "module example.com/m\n\ngo 1.27.0\n")]);
        let chosen = choose("Go", &go_wants(dir.path()), &go_images).expect("meets");
        assert_eq!(chosen.image, "go1.27");
        let dir = tree(&[(
            "go.mod",
            "module example.com/m\n\ngo 1.21\n\ntoolchain go1.22.3\n",
        )]);
        let chosen = choose("Go", &go_wants(dir.path()), &go_images).expect("pinned");
        assert_eq!(chosen.image, "go1.22");
        assert_eq!(
            chosen.because,
            "Go 1.22 as the project pins it (toolchain go1.22.3 (go.mod))"
        );
        assert_eq!(choose("Go", &[], &go_images), None);
    }
}
