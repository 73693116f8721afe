//! `proven deps scan`: dependency evidence on one lock file, with no change. Every package
//! in the file is examined; every affected one is a finding.

use std::path::Path;

use proven_config::Config;
use proven_lockfile::{FsTree, Tree};
use proven_report::{
    DependencyFileSummary, FailedService, InputError, NotSeen, Report, ReportKind,
};
use proven_store::Store;

use crate::ReviewError;
use crate::core::deps::{self, DepsOptions, FilePair};
use crate::core::trace::Trace;

/// Scans `file`. Siblings in the same directory (a manifest beside its lock file) are read
/// too, to tell direct from transitive dependencies.
pub async fn scan_file(
    store: &Store,
    config: &Config,
    file: &Path,
    trace: &mut Trace,
) -> Result<Report, ReviewError> {
    let target = file.display().to_string();
    let meta = std::fs::metadata(file).map_err(|e| ReviewError::Input(format!("{target}: {e}")))?;
    if !meta.is_file() {
        return Err(ReviewError::Input(format!("{target}: not a file")));
    }
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| ReviewError::Input(format!("{target}: file name is not UTF-8")))?
        .to_string();
    if proven_lockfile::Format::detect(&name).is_none() {
        return Err(ReviewError::Input(format!(
            "{target}: not a lock file or manifest Proven reads (e.g. Cargo.lock, package-lock.json, yarn.lock, \
             pnpm-lock.yaml, requirements.txt, poetry.lock, uv.lock, Pipfile.lock, go.mod, composer.lock, \
             Gemfile.lock, gradle/libs.versions.toml, build.gradle.kts, pom.xml)"
        )));
    }
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // A version catalogue is read by its path under the project root.
    let (tree, rel) =
        if name == "libs.versions.toml" && dir.file_name().is_some_and(|d| d == "gradle") {
            (
                FsTree::new(dir.parent().unwrap_or(Path::new("."))),
                format!("gradle/{name}"),
            )
        } else {
            (FsTree::new(dir), name)
        };
    let options = DepsOptions {
        informational: config.informational,
        dev_dependencies: config.dev_dependencies,
        limits: proven_lockfile::Limits {
            max_bytes: config.max_lockfile_bytes,
            ..Default::default()
        },
    };
    let mut report = Report::new(ReportKind::Scan, target.clone());
    let (advisories, _, _) = store.advisory_counts().await?;
    if advisories == 0 {
        report.failed_services.push(FailedService {
            service: "advisories".into(),
            message: "the advisory store is empty: run `proven db import PATH` first".into(),
        });
    }
    trace.push("scan", serde_json::json!({"file": target}));
    let head = match proven_lockfile::read(&tree as &dyn Tree, &rel, &options.limits) {
        Ok(f) => f,
        Err(e) => {
            trace.push(
                "input_error",
                serde_json::json!({"path": target, "line": e.line, "message": e.to_string()}),
            );
            report.input_errors.push(InputError {
                path: target.clone(),
                line: e.line,
                side: None,
                message: e.to_string(),
            });
            report.not_seen.push(NotSeen {
                what: target,
                reason: "could not be read, so no package was checked".into(),
            });
            report.seal();
            return Ok(report);
        }
    };
    report.dependency_files.push(DependencyFileSummary {
        path: rel.clone(),
        format: head.format.name().to_string(),
        side: None,
        packages: head.dependencies.len() as u32,
    });
    let pairs = [FilePair {
        path: rel,
        base: None,
        head: Some(head),
    }];
    let outcome = deps::evaluate(store, &pairs, &options, trace).await?;
    report.findings = outcome.findings;
    report.not_seen.extend(outcome.not_seen);
    report.seal();
    Ok(report)
}
