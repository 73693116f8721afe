//! `deps.file`'s dependency fixes: each package the file's findings name, raised to the
//! version that leaves all of them, proved by evaluating the patched file again
//! (`crate::core::depfix` holds the edits and commands).

use std::collections::BTreeMap;

use proven_domain::Dependency;
use proven_lockfile::{DependencyFile, Tree};
use proven_pipeline::StepError;
use proven_report::{DependencyFix, Finding, PatchEdit};
use serde_json::json;

use crate::core::git_tree::Side;
use crate::core::outcome::retryable;
use crate::core::step::StepContext;
use crate::core::trace::Trace;
use crate::core::wire::IntakeResult;
use crate::core::{depfix, deps};

/// A package to raise, and what the patched file gave.
struct Target {
    dep: Dependency,
    fixed: String,
    /// The patched file as read, with its edit or command; or why none could be made.
    made: Result<(DependencyFile, Vec<PatchEdit>, Option<String>), String>,
}

/// The packages the findings name, each with the highest fixed version of its findings.
fn wanted(head: &DependencyFile, findings: &[Finding]) -> Vec<(Dependency, String)> {
    let mut by: BTreeMap<(String, String), (Dependency, Vec<String>)> = BTreeMap::new();
    for f in findings {
        let (Some(p), Some(v)) = (&f.package, f.fix.as_ref().and_then(|x| x.version.clone()))
        else {
            continue;
        };
        let Some(dep) = depfix::declaration(head, &p.name, &p.new_version) else {
            continue;
        };
        by.entry((dep.name.clone(), dep.version.clone()))
            .or_insert_with(|| (dep.clone(), Vec::new()))
            .1
            .push(v);
    }
    by.into_values()
        .filter_map(|(dep, versions)| depfix::highest(dep.ecosystem, &versions).map(|v| (dep, v)))
        .collect()
}

/// Makes each target's patched file on the head tree (blocking: git2).
fn make(
    tree: &dyn Tree,
    path: &str,
    wanted: Vec<(Dependency, String)>,
    options: &deps::DepsOptions,
) -> Vec<Target> {
    let text = match tree.read(path) {
        Ok(Some(bytes)) => String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string()),
        Ok(None) => Err("the file is not in the head tree".into()),
        Err(e) => Err(e.to_string()),
    };
    wanted
        .into_iter()
        .map(|(dep, fixed)| {
            let made = text.clone().and_then(|text| {
                let (patched, line) =
                    depfix::with_version(&text, &dep, &fixed).ok_or_else(|| {
                        format!(
                            "the declaration of {} {} was not found in {path}",
                            dep.name, dep.version
                        )
                    })?;
                let edited = patched
                    .split_inclusive('\n')
                    .nth(line as usize - 1)
                    .unwrap_or("");
                let format =
                    proven_lockfile::Format::detect(path).ok_or("not a dependency file")?;
                let command = depfix::command(format, &dep, &fixed, edited)?;
                let edits = if command.is_none() {
                    depfix::edit(path, &text, &patched, line)
                        .into_iter()
                        .collect()
                } else {
                    Vec::new()
                };
                let overlay = depfix::Overlay {
                    tree,
                    path,
                    text: &patched,
                };
                let file = proven_lockfile::read(&overlay, path, &options.limits)
                    .map_err(|e| format!("the patched file does not read: {e}"))?;
                Ok((file, edits, command))
            });
            Target { dep, fixed, made }
        })
        .collect()
}

/// Proposes and proves the fixes of `findings` (of the file `pair`), setting each finding's
/// `fix.proposed`.
pub(super) async fn propose(
    cx: &StepContext,
    intake: IntakeResult,
    pair: &deps::FilePair,
    findings: &mut [Finding],
    options: &deps::DepsOptions,
    trace: &mut Trace,
) -> Result<(), StepError> {
    let Some(head) = &pair.head else {
        return Ok(());
    };
    let wanted = wanted(head, findings);
    if wanted.is_empty() {
        return Ok(());
    }
    let (path, opts) = (pair.path.clone(), options.clone());
    let (targets, _) = super::trees::on_trees(intake, "deps.file", move |sides, _| {
        let head = sides.iter().find(|(s, _)| *s == Side::Head).map(|(_, t)| t);
        head.map(|t| make(t, &path, wanted, &opts))
            .unwrap_or_default()
    })
    .await?;
    for t in targets {
        let fix = match t.made {
            Err(why) => DependencyFix {
                version: t.fixed.clone(),
                edits: Vec::new(),
                command: None,
                proved: false,
                reason: format!("no fix could be made: {why}"),
            },
            Ok((file, edits, command)) => {
                let patched = deps::FilePair {
                    path: pair.path.clone(),
                    base: pair.base.clone(),
                    head: Some(file),
                };
                let mut scratch = Trace::new(String::new());
                let again = deps::evaluate(&cx.store, &[patched], options, &mut scratch)
                    .await
                    .map_err(retryable)?;
                let norm = |n: &str| t.dep.ecosystem.normalize_name(n);
                let still: Vec<String> = again
                    .findings
                    .iter()
                    .filter(|f| {
                        f.package
                            .as_ref()
                            .is_some_and(|p| norm(&p.name) == norm(&t.dep.name))
                    })
                    .filter_map(|f| f.advisory.as_ref().map(|a| a.id.clone()))
                    .collect();
                let proved = still.is_empty();
                DependencyFix {
                    version: t.fixed.clone(),
                    edits,
                    command,
                    proved,
                    reason: if proved {
                        format!(
                            "the dependency evidence run again on {} with {} at {}: no advisory matches it",
                            pair.path, t.dep.name, t.fixed
                        )
                    } else {
                        format!(
                            "at {} {} still matches {}",
                            t.dep.name,
                            t.fixed,
                            still.join(", ")
                        )
                    },
                }
            }
        };
        trace.push(
            "dependency_fix",
            json!({"path": pair.path, "package": t.dep.name, "from": t.dep.version, "to": fix.version,
                   "edits": fix.edits.len(), "command": fix.command, "proved": fix.proved, "reason": fix.reason}),
        );
        for f in findings.iter_mut() {
            let names_it = f
                .package
                .as_ref()
                .is_some_and(|p| p.name == t.dep.name && p.new_version == t.dep.version);
            if let (true, Some(r)) = (names_it, f.fix.as_mut()) {
                r.proposed = Some(fix.clone());
            }
        }
    }
    Ok(())
}
