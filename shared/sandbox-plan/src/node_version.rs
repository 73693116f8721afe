//! Which Node a tree runs on, when the operator configures images of several majors
//! (`node8=IMAGE`, `node22=IMAGE` beside the default): a pure function of what the project
//! says of its Node and of the base's date, as [`crate::interpreter`] is for Python.
//!
//! - A version the project pins (`.nvmrc`, `.node-version`: `8.9.0`, `v16`, `lts/carbon`):
//!   the image of that major, else the oldest image newer than it.
//! - The versions its CI tests (Travis' `node_js`, a workflow's `node-version`, AppVeyor's
//!   `nodejs_version`): the newest of them the sandbox has an image of; when it has none
//!   (a 2014 project tested on 0.10), the oldest image newer than the newest tested.
//! - Otherwise the newest image `engines.node` allows that was released before the base's
//!   date (a 2016 project with `"node": ">=4"` never ran on Node 22).
//! - Nothing declared and no date (a young base): None, the default image.

use std::path::Path;

use crate::record::InterpreterChoice;

/// The largest declaration file read here.
const MAX_FILE: u64 = 64 * 1024;

/// A Node version as numbers: `[8]`, `[8, 9, 0]`, `[0, 10]` (before 4, the minor was the
/// release line).
pub type Version = Vec<u32>;

/// What a tree says of its Node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeWants {
    /// The version a version file pins, with the file.
    pub pin: Option<(Version, String)>,
    /// The versions the CI tests, with where each was read.
    pub tested: Vec<(Version, String)>,
    /// package.json `engines.node`.
    pub engines: Option<String>,
}

/// LTS code names, as `.nvmrc`'s `lts/NAME` and CI files use them.
const LTS: &[(&str, u32)] = &[
    ("argon", 4),
    ("boron", 6),
    ("carbon", 8),
    ("dubnium", 10),
    ("erbium", 12),
    ("fermium", 14),
    ("gallium", 16),
    ("hydrogen", 18),
    ("iron", 20),
    ("jod", 22),
    ("krypton", 24),
];

/// The day each release line's first release came out (nodejs.org/dist/index.json): Node
/// is of a project's era when it was released before the project's base.
const RELEASED: &[(&[u32], &str)] = &[
    (&[0, 10], "2013-03-11"),
    (&[0, 12], "2015-02-06"),
    (&[4], "2015-09-08"),
    (&[5], "2015-10-29"),
    (&[6], "2016-04-26"),
    (&[7], "2016-10-25"),
    (&[8], "2017-05-30"),
    (&[9], "2017-10-31"),
    (&[10], "2018-04-24"),
    (&[11], "2018-10-23"),
    (&[12], "2019-04-23"),
    (&[13], "2019-10-22"),
    (&[14], "2020-04-21"),
    (&[15], "2020-10-20"),
    (&[16], "2021-04-20"),
    (&[17], "2021-10-19"),
    (&[18], "2022-04-19"),
    (&[19], "2022-10-18"),
    (&[20], "2023-04-18"),
    (&[21], "2023-10-17"),
    (&[22], "2024-04-24"),
    (&[23], "2024-10-16"),
    (&[24], "2025-05-06"),
    (&[25], "2025-10-15"),
];

/// The first release day of `v`'s line: the table's, else Node's schedule (even majors in
/// April, odd ones in October, two a year since 4 in 2015).
fn released(v: &[u32]) -> String {
    let line = line_of(v);
    if let Some((_, day)) = RELEASED.iter().find(|(l, _)| *l == line.as_slice()) {
        return (*day).to_string();
    }
    let major = line[0].max(4);
    let month = if major.is_multiple_of(2) { "04" } else { "10" };
    format!("{}-{month}-30", 2015 + (major - 4) / 2)
}

/// The release line a version belongs to: its major, or `0.MINOR` before 4.
fn line_of(v: &[u32]) -> Version {
    match v {
        [0, minor, ..] => vec![0, *minor],
        [major, ..] => vec![*major],
        [] => vec![0],
    }
}

fn show(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(".")
}

/// A Node version as a project writes it: `8`, `v8.9.0`, `0.10`, `16.x`, `lts/carbon`
/// (an LTS code name); None for `node`, `stable`, `lts/*`, `iojs` or a range.
pub fn version(text: &str) -> Option<Version> {
    let text = text.trim().trim_matches(['"', '\'']).trim();
    let lower = text.to_ascii_lowercase();
    let name = lower.strip_prefix("lts/").unwrap_or(&lower);
    if let Some((_, major)) = LTS.iter().find(|(n, _)| *n == name) {
        return Some(vec![*major]);
    }
    let text = text.strip_prefix('v').unwrap_or(text);
    let parts: Vec<&str> = text
        .split('.')
        .take_while(|p| !p.eq_ignore_ascii_case("x") && *p != "*")
        .collect();
    let v: Option<Version> = parts.iter().map(|p| p.parse().ok()).collect();
    v.filter(|v| !v.is_empty() && (v[0] != 0 || v.len() >= 2))
}

fn read(src: &Path, rel: &str) -> Option<String> {
    let path = src.join(rel);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}

/// What a Node tree says of its Node: its version file, its CI's matrix, its engines.
pub fn node_wants(src: &Path) -> NodeWants {
    let mut wants = NodeWants {
        engines: crate::deps::node_engines(src),
        ..NodeWants::default()
    };
    for file in [".nvmrc", ".node-version"] {
        let Some(text) = read(src, file) else {
            continue;
        };
        let first = text.lines().next().unwrap_or_default().trim().to_string();
        if let Some(v) = version(&first) {
            wants.pin = Some((v, format!("{file} {first}")));
            break;
        }
    }
    let mut ci: Vec<(String, &[&str])> = vec![
        (".travis.yml".into(), &["node_js"]),
        ("appveyor.yml".into(), &["nodejs_version"]),
        (".appveyor.yml".into(), &["nodejs_version"]),
    ];
    const WORKFLOW: &[&str] = &["node-version", "node_version", "node-versions", "node"];
    ci.extend(
        crate::ci_matrix::workflows(src)
            .into_iter()
            .map(|f| (f, WORKFLOW)),
    );
    for (file, keys) in ci {
        let Some(text) = read(src, &file) else {
            continue;
        };
        for item in crate::ci_matrix::items(&text, keys) {
            if let Some(v) = version(&item)
                && !wants.tested.iter().any(|(t, _)| line_of(t) == line_of(&v))
            {
                wants.tested.push((v, format!("{file} {}", keys[0])));
            }
        }
    }
    wants
}

/// `engines.node` allows some release of `line` (None: no engines, anything goes).
fn allows(engines: Option<&str>, line: &[u32]) -> bool {
    let Some(range) = engines else {
        return true;
    };
    let probes = match line {
        [0, minor] => vec![format!("0.{minor}.0"), format!("0.{minor}.999")],
        [major, ..] => vec![format!("{major}.0.0"), format!("{major}.999.999")],
        [] => return false,
    };
    probes
        .iter()
        .any(|p| proven_version::satisfies(proven_version::Ecosystem::Npm, range, p) == Ok(true))
}

/// The image a tree runs on among `images` (the major, as `nodeNN=` names it, and the
/// image), and why; `before` is the base's date (`2016-05-01…`, None for a young base).
/// None: the default image.
pub fn choose_node(
    wants: &NodeWants,
    images: &[(String, String)],
    before: Option<&str>,
) -> Option<InterpreterChoice> {
    let mut images: Vec<(Version, &String)> = images
        .iter()
        .filter_map(|(v, image)| Some((line_of(&version(v)?), image)))
        .collect();
    images.sort();
    let engines = wants.engines.as_deref();
    // An engines range no image meets says nothing the sandbox can follow.
    let engines = engines.filter(|_| images.iter().any(|(v, _)| allows(engines, v)));
    let allowed = |v: &Version| allows(engines, v);
    let pick = |v: &Version, image: &String, because: String| InterpreterChoice {
        version: show(v),
        image: image.clone(),
        because,
    };
    if let Some((pinned, source)) = &wants.pin {
        let line = line_of(pinned);
        if let Some((v, image)) = images.iter().find(|(v, _)| *v == line) {
            return Some(pick(
                v,
                image,
                format!("Node {} as the project pins it ({source})", show(v)),
            ));
        }
        if let Some((v, image)) = images.iter().find(|(v, _)| *v > line) {
            return Some(pick(
                v,
                image,
                format!(
                    "the project pins Node {} ({source}), which the sandbox has no image of: the nearest newer image",
                    show(pinned)
                ),
            ));
        }
    }
    if !wants.tested.is_empty() {
        let said = wants
            .tested
            .iter()
            .map(|(v, s)| format!("{} ({s})", show(v)))
            .collect::<Vec<_>>()
            .join(", ");
        let lines: Vec<Version> = wants.tested.iter().map(|(v, _)| line_of(v)).collect();
        let newest_tested = lines.iter().max().cloned().unwrap_or_default();
        if let Some((v, image)) = images
            .iter()
            .rev()
            .find(|(v, _)| lines.contains(v) && allowed(v))
        {
            return Some(pick(
                v,
                image,
                format!(
                    "Node {}, the newest the project's CI tests that the sandbox has: {said}",
                    show(v)
                ),
            ));
        }
        if let Some((v, image)) = images
            .iter()
            .find(|(v, _)| *v > newest_tested && allowed(v))
        {
            return Some(pick(
                v,
                image,
                format!(
                    "the project's CI tests Node {said}, which the sandbox has no image of: the nearest newer image, Node {}",
                    show(v)
                ),
            ));
        }
    }
    let day = before.map(|b| b.get(..10).unwrap_or(b).to_string());
    if engines.is_none() && day.is_none() {
        return None;
    }
    let of_era = |v: &Version| day.as_ref().is_none_or(|d| released(v) <= *d);
    let range = engines
        .map(|r| format!(" that package.json engines {r} allows"))
        .unwrap_or_default();
    if let Some((v, image)) = images.iter().rev().find(|(v, _)| allowed(v) && of_era(v)) {
        let era = day
            .as_ref()
            .map(|d| format!(", released before the base's date {d}"))
            .unwrap_or_default();
        return Some(pick(
            v,
            image,
            format!("the newest Node the sandbox has{range}{era}: {}", show(v)),
        ));
    }
    let d = day?;
    images.iter().find(|(v, _)| allowed(v)).map(|(v, image)| {
        pick(v, image, format!(
            "the base's date {d} precedes every Node the sandbox has{range}: the oldest, Node {}",
            show(v)
        ))
    })
}

/// The dependency a run's output shows this Node could not parse: node prints the file
/// (`/deps/node_modules/tough-cookie/dist/index.cjs:70`, or without the line), the code, a
/// caret, then the `SyntaxError`. A release resolved now may be written for a newer Node than the
/// project's era (`options = {}`, `...args`, `async`); the project's own files
/// (under /work) are never a reason. Returns the package and the error.
pub fn unparsed_dependency(output: &str) -> Option<String> {
    let lines: Vec<&str> = output.lines().collect();
    lines.iter().enumerate().find_map(|(i, line)| {
        // `FILE:LINE` as node's crash prints it, or `FILE` alone (Proven's node:test for an
        // old Node, which catches the error).
        let line = line.trim();
        let file = match line.rsplit_once(':') {
            Some((file, number)) if number.parse::<u32>().is_ok() => file,
            _ => line,
        };
        let (_, inner) = file.rsplit_once("/node_modules/")?;
        if !file.starts_with("/deps/") {
            return None;
        }
        let error = lines[i + 1..]
            .iter()
            .take(6)
            .find(|l| l.trim_start().starts_with("SyntaxError"))?;
        let mut parts = inner.split('/');
        let first = parts.next()?;
        let package = match first.starts_with('@') {
            true => format!("{first}/{}", parts.next()?),
            false => first.to_string(),
        };
        Some(format!("{package} ({})", error.trim()))
    })
}

/// The image after `current` (a major, as [`choose_node`] names it) among `images` that
/// the tree's engines allow: where a dependency resolved now needs a newer Node than the
/// era's, the next newer one the project allows.
pub fn next_newer(
    wants: &NodeWants,
    images: &[(String, String)],
    current: &str,
) -> Option<(String, String)> {
    let current = line_of(&version(current)?);
    let mut images: Vec<(Version, &String)> = images
        .iter()
        .filter_map(|(v, image)| Some((line_of(&version(v)?), image)))
        .collect();
    images.sort();
    let engines = wants.engines.as_deref();
    let engines = engines.filter(|_| images.iter().any(|(v, _)| allows(engines, v)));
    images
        .into_iter()
        .find(|(v, _)| *v > current && allows(engines, v))
        .map(|(v, image)| (show(&v), image.clone()))
}

#[cfg(test)]
mod tests;
