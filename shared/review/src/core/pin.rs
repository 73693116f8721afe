//! A package pinned on a line of a file the dependency readers do not know (a Dockerfile,
//! a script): the advisories the store holds for it, as the dependency evidence would
//! judge them (the Investigator's query findings, and the autofix attempt's re-run of
//! them on a patched file).

use proven_config::Informational;
use proven_domain::{Dependency, Ecosystem, Origin};
use proven_lockfile::{DependencyFile, Format};
use proven_report::Finding;
use proven_store::{Store, StoreError};

use super::deps::{DepsOptions, FilePair, evaluate};
use crate::core::trace::Trace;

/// One package at one version, named on a line of a file that is not a dependency file
/// the readers know (a Dockerfile, a script): what the store's advisories make of it, as
/// the dependency evidence would (`base`: the version and line it replaced, if any).
pub struct Pin<'a> {
    pub path: &'a str,
    pub ecosystem: Ecosystem,
    pub name: &'a str,
    pub base: Option<(&'a str, u32)>,
    pub head: (&'a str, u32),
}

/// The findings of one [`Pin`] (their ids start `query:`: rows a query read prove them).
pub async fn evaluate_pin(
    store: &Store,
    pin: Pin<'_>,
    trace: &mut Trace,
) -> Result<Vec<Finding>, StoreError> {
    use proven_domain::DependencyKind;
    let dep = |version: &str, line: u32| Dependency {
        ecosystem: pin.ecosystem,
        name: pin.name.to_string(),
        version: version.to_string(),
        kind: DependencyKind::Direct,
        origin: Origin::Registry,
        dev: false,
        line: Some(line),
    };
    // `format` is not read by `evaluate`; the file is the one the change touched.
    let file = |deps: Vec<Dependency>| DependencyFile {
        path: pin.path.to_string(),
        format: Format::RequirementsTxt,
        dependencies: deps,
        notes: Vec::new(),
    };
    let pair = FilePair {
        path: pin.path.to_string(),
        base: pin.base.map(|(b, l)| file(vec![dep(b, l)])),
        head: Some(file(vec![dep(pin.head.0, pin.head.1)])),
    };
    let options = DepsOptions {
        informational: Informational::Report,
        dev_dependencies: true,
        limits: proven_lockfile::Limits::default(),
    };
    let out = evaluate(store, &[pair], &options, trace).await?;
    Ok(out
        .findings
        .into_iter()
        .map(|mut f| {
            f.id = f.id.replacen("dependency:", "query:", 1);
            f
        })
        .collect())
}

/// `needle` occurs in `line` as a whole token: not inside a longer name or version.
pub fn has_token(line: &str, needle: &str) -> bool {
    let line = line.to_ascii_lowercase();
    let needle = needle.to_ascii_lowercase();
    let inside = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-';
    line.match_indices(&needle).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + needle.len()..].chars().next();
        // A trailing '.' ends a sentence, not a version.
        let after_inside = after.is_some_and(|c| {
            let sentence_end = c == '.' && !line[i + needle.len() + 1..].starts_with(inside);
            inside(c) && !sentence_end
        });
        !before.is_some_and(inside) && !after_inside
    })
}
