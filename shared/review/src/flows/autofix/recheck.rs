//! The advisory evidence run again on the patched copy (no model): each dependency file
//! the patch touches or a kept advisory finding names, read with the patch applied and
//! matched against the store as the dependency evidence would; each query finding's file
//! searched for what it now names, each version queried again. A finding closes only when
//! its advisory no longer matches; any advisory the patched files match that the head's do
//! not is a new one, and keeps the attempt open.

use std::collections::{BTreeMap, BTreeSet};

use proven_domain::Ecosystem;
use proven_lockfile::{DependencyFile, Format, Tree};
use proven_pipeline::StepError;
use proven_report::{Finding, PatchEdit};
use proven_store::StepRow;

use super::gather::{Affected, Proved};
use crate::core::deps::{self, DepsOptions, FilePair};
use crate::core::git_tree::GitTree;
use crate::core::pin::{Pin, evaluate_pin, has_token};
use crate::core::rows::step_result;
use crate::core::step_name::StepName;
use crate::core::trace::Trace;
use crate::core::wire::{PlanResult, ReviewView};

/// What the re-run showed: each finding still open and why, each closed (by title) and
/// how.
#[derive(Debug, Default)]
pub(super) struct Rechecked {
    pub open: Vec<String>,
    pub closed: Vec<(String, String)>,
}

/// The head tree with the patched files' texts over it.
struct Patched<'a> {
    tree: &'a dyn Tree,
    files: &'a BTreeMap<String, String>,
}

impl Tree for Patched<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, std::io::Error> {
        match self.files.get(path) {
            Some(text) => Ok(Some(text.as_bytes().to_vec())),
            None => self.tree.read(path),
        }
    }
}

/// Each edited file's text at the head with the patch applied (the patch rules have
/// checked each old text is in its file exactly once).
fn apply(head: &dyn Tree, edits: &[PatchEdit]) -> BTreeMap<String, String> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for e in edits {
        if !files.contains_key(&e.path) {
            let text = head
                .read(&e.path)
                .ok()
                .flatten()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            files.insert(e.path.clone(), text);
        }
        if let Some(text) = files.get_mut(&e.path) {
            *text = text.replacen(e.old_text.as_str(), e.new_text.as_str(), 1);
        }
    }
    files
}

/// Each dependency file to read again: read at the base, at the head and patched.
struct Reread {
    head: Vec<FilePair>,
    patched: Vec<FilePair>,
    /// A patched file that no longer reads, and why.
    unreadable: Vec<(String, String)>,
    /// Query findings' files, patched (absent: the patch leaves the file as it is).
    texts: BTreeMap<String, String>,
}

fn reread(
    view: &ReviewView<'_>,
    edits: &[PatchEdit],
    paths: &[String],
    options: &DepsOptions,
) -> impl FnOnce(&proven_change::Repo) -> Result<Reread, String> + Send + 'static {
    let (base, head) = (view.base.to_string(), view.head.to_string());
    let (edits, paths, limits) = (edits.to_vec(), paths.to_vec(), options.limits.clone());
    move |repo| {
        let [(_, base_tree), (_, head_tree)] = GitTree::sides(repo, &base, &head);
        let files = apply(&head_tree, &edits);
        let patched_tree = Patched {
            tree: &head_tree,
            files: &files,
        };
        let read = |tree: &dyn Tree, path: &str| -> Option<DependencyFile> {
            matches!(tree.read(path), Ok(Some(_)))
                .then(|| proven_lockfile::read(tree, path, &limits).ok())
                .flatten()
        };
        let mut out = Reread {
            head: Vec::new(),
            patched: Vec::new(),
            unreadable: Vec::new(),
            texts: files.clone(),
        };
        for path in &paths {
            let base = read(&base_tree, path);
            out.head.push(FilePair {
                path: path.clone(),
                base: base.clone(),
                head: read(&head_tree, path),
            });
            match proven_lockfile::read(&patched_tree, path, &limits) {
                Ok(file) => out.patched.push(FilePair {
                    path: path.clone(),
                    base,
                    head: Some(file),
                }),
                Err(e) => out.unreadable.push((path.clone(), e.to_string())),
            }
        }
        Ok(out)
    }
}

/// (path, normalised package, advisory) of a finding.
fn key(f: &Finding) -> Option<(String, String, String)> {
    let p = f.package.as_ref()?;
    let eco = Ecosystem::from_osv(&p.ecosystem)?;
    Some((
        f.location.path.clone(),
        eco.normalize_name(&p.name),
        f.advisory.as_ref()?.id.clone(),
    ))
}

fn affected_key(a: &Affected) -> Option<(String, String, String)> {
    let eco = Ecosystem::from_osv(&a.ecosystem)?;
    Some((
        a.path.clone(),
        eco.normalize_name(&a.package),
        a.advisory.clone(),
    ))
}

/// The advisory evidence of every advisory and query finding, run again on the patched
/// copy.
pub(super) async fn advisories(
    view: &ReviewView<'_>,
    rows: &[StepRow],
    edits: &[PatchEdit],
    proved: &[Proved],
) -> Result<Rechecked, StepError> {
    let options: DepsOptions = step_result::<PlanResult>(rows, StepName::Plan.as_str(), "")
        .and_then(|p| p.deps)
        .map(DepsOptions::from)
        .unwrap_or(DepsOptions {
            informational: proven_config::Informational::Report,
            dev_dependencies: true,
            limits: proven_lockfile::Limits::default(),
        });
    let mut paths: BTreeSet<String> = edits
        .iter()
        .map(|e| e.path.clone())
        .filter(|p| Format::detect(p).is_some())
        .collect();
    for p in proved {
        if let Proved::Advisory { affected, .. } = p {
            paths.insert(affected.path.clone());
        }
    }
    let paths: Vec<String> = paths.into_iter().collect();
    let again = view
        .with_repo("sandbox.autofix", reread(view, edits, &paths, &options))
        .await?;
    let mut scratch = Trace::new(String::new());
    let before = deps::evaluate(view.store, &again.head, &options, &mut scratch)
        .await
        .map_err(crate::core::outcome::retryable)?;
    let after = deps::evaluate(view.store, &again.patched, &options, &mut scratch)
        .await
        .map_err(crate::core::outcome::retryable)?;
    let had: BTreeSet<_> = before.findings.iter().filter_map(key).collect();
    let has: BTreeMap<_, &Finding> = after
        .findings
        .iter()
        .filter_map(|f| key(f).map(|k| (k, f)))
        .collect();
    let mut out = Rechecked::default();
    for (path, why) in &again.unreadable {
        out.open
            .push(format!("{path}: the patched file does not read ({why})"));
    }
    for p in proved {
        let Proved::Advisory { title, affected } = p else {
            continue;
        };
        let unread = again.unreadable.iter().any(|(u, _)| u == &affected.path);
        match affected_key(affected).and_then(|k| has.get(&k)) {
            _ if unread => out.open.push(format!(
                "{title}: {} does not read with the patch, so {} is not shown fixed",
                affected.path, affected.advisory
            )),
            Some(f) => out.open.push(format!(
                "{title}: the advisory rows still match {} {} in {} with the patch ({})",
                affected.package,
                f.package.as_ref().map_or("", |p| p.new_version.as_str()),
                affected.path,
                affected.advisory
            )),
            None => out.closed.push((
                title.clone(),
                format!(
                    "{} read again with the patch: {} no longer matches {}",
                    affected.path, affected.advisory, affected.package
                ),
            )),
        }
    }
    for (k, f) in &has {
        if !had.contains(k) {
            let p = f.package.as_ref();
            out.open.push(format!(
                "the patch brings in {} {} in {}, which {} affects",
                p.map_or("", |p| p.name.as_str()),
                p.map_or("", |p| p.new_version.as_str()),
                k.0,
                k.2
            ));
        }
    }
    for p in proved {
        if let Proved::Query { title, affected } = p {
            query(view, title, affected, &again.texts, &mut out).await?;
        }
    }
    Ok(out)
}

/// Version-like words of a line: a digit first, then what versions are spelt with.
fn versions_in(line: &str) -> Vec<String> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || "._+-~".contains(c)))
        .map(|w| w.strip_prefix('v').unwrap_or(w))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.'))
        .map(str::to_string)
        .collect()
}

/// A query finding's evidence again: the patched file no longer names the package at the
/// version, and every version it names on a line with the package is queried again.
async fn query(
    view: &ReviewView<'_>,
    title: &str,
    affected: &Affected,
    texts: &BTreeMap<String, String>,
    out: &mut Rechecked,
) -> Result<(), StepError> {
    let Some(text) = texts.get(&affected.path) else {
        out.open.push(format!(
            "{title}: the patch leaves {} as it is, so it still names {} {}",
            affected.path, affected.package, affected.version
        ));
        return Ok(());
    };
    let named: Vec<(u32, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| has_token(l, &affected.package))
        .map(|(i, l)| (i as u32 + 1, l))
        .collect();
    if let Some((line, _)) = named.iter().find(|(_, l)| has_token(l, &affected.version)) {
        out.open.push(format!(
            "{title}: {} still names {} {} (line {line}) with the patch",
            affected.path, affected.package, affected.version
        ));
        return Ok(());
    }
    let Some(eco) = Ecosystem::from_osv(&affected.ecosystem) else {
        out.open.push(format!(
            "{title}: the ecosystem {:?} is not one Proven compares",
            affected.ecosystem
        ));
        return Ok(());
    };
    let mut scratch = Trace::new(String::new());
    for (line, l) in &named {
        for v in versions_in(l) {
            let pin = Pin {
                path: &affected.path,
                ecosystem: eco,
                name: &affected.package,
                base: None,
                head: (&v, *line),
            };
            let found = evaluate_pin(view.store, pin, &mut scratch)
                .await
                .map_err(crate::core::outcome::retryable)?;
            if let Some(f) = found.first() {
                out.open.push(format!(
                    "{title}: {} names {} {v} with the patch (line {line}), which {} affects",
                    affected.path,
                    affected.package,
                    f.advisory.as_ref().map_or("", |a| a.id.as_str())
                ));
                return Ok(());
            }
        }
    }
    out.closed.push((
        title.to_string(),
        format!(
            "{} with the patch no longer names {} {}, and the advisory rows match no version it names",
            affected.path, affected.package, affected.version
        ),
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_the_words_that_start_with_a_digit() {
        assert_eq!(
            versions_in("RUN pip install requests==2.31.0 flask>=v3.0.1 -q"),
            ["2.31.0", "3.0.1"]
        );
        assert!(versions_in("FROM python").is_empty());
    }

    struct Files(BTreeMap<String, String>);
    impl Tree for Files {
        fn read(&self, path: &str) -> Result<Option<Vec<u8>>, std::io::Error> {
            Ok(self.0.get(path).map(|t| t.as_bytes().to_vec()))
        }
    }

    #[test]
    fn edits_apply_in_turn_to_each_file() {
        let head = Files(BTreeMap::from([(
            "a.txt".to_string(),
            "x 1\ny 2\n".to_string(),
        )]));
        let edit = |old: &str, new: &str| PatchEdit {
            path: "a.txt".into(),
            old_text: old.into(),
            new_text: new.into(),
            lines: None,
        };
        let files = apply(&head, &[edit("x 1", "x 3"), edit("y 2", "y 4")]);
        assert_eq!(files["a.txt"], "x 3\ny 4\n");
    }
}
