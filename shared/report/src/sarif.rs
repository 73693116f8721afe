//! SARIF 2.1.0, shaped for GitHub code scanning: one rule per advisory, one result per
//! finding located in its lock file, a stable partial fingerprint per finding, and
//! `security-severity` from the CVSS base score so code scanning ranks it.

use std::collections::{BTreeMap, HashMap};

use serde_sarif::sarif::{
    ArtifactLocation, Invocation, Location, Message, MultiformatMessageString, Notification,
    PhysicalLocation, PropertyBag, Region, ReportingDescriptor, Result as SarifResult, ResultLevel,
    Run, Sarif, Suppression, Tool, ToolComponent,
};

use crate::{Finding, FindingKind, Report, Status};

const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Where a reader can read the advisory itself.
pub fn advisory_url(id: &str) -> Option<String> {
    if id.starts_with("RUSTSEC-") {
        Some(format!("https://rustsec.org/advisories/{id}.html"))
    } else if id.starts_with("GHSA-") {
        Some(format!("https://github.com/advisories/{id}"))
    } else if id.starts_with("x_") {
        None // converted locally: no public page under this id
    } else {
        Some(format!("https://osv.dev/vulnerability/{id}"))
    }
}

/// The rule a finding reports under: its advisory, or Proven's rule for defects.
fn rule_id(f: &Finding) -> String {
    match &f.advisory {
        Some(a) => a.id.clone(),
        None => "proven/defect".to_string(),
    }
}

fn summary(f: &Finding) -> String {
    match &f.advisory {
        Some(a) => a.summary.clone().unwrap_or_else(|| format!("{} advisory", a.id)),
        None => "A defect the change introduces, shown by a test that fails on the change and passes on the base".into(),
    }
}

fn fix_text(f: &Finding) -> String {
    match &f.fix {
        Some(fix) => fix.version.clone().unwrap_or_else(|| fix.note.clone()),
        None => "none proposed".into(),
    }
}

fn rule(f: &Finding) -> ReportingDescriptor {
    let summary = summary(f);
    let score = f
        .advisory
        .iter()
        .flat_map(|a| a.severity.iter())
        .filter_map(|s| s.base_score)
        .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))));
    let mut props = BTreeMap::new();
    if let Some(score) = score {
        props.insert(
            "security-severity".to_string(),
            serde_json::Value::String(format!("{score:.1}")),
        );
    }
    props.insert("precision".to_string(), "very-high".into());
    let mut tags = vec!["proven".to_string()];
    match &f.package {
        Some(p) => {
            tags.extend([
                "security".to_string(),
                "dependency".to_string(),
                p.ecosystem.clone(),
            ]);
        }
        None => tags.push("correctness".to_string()),
    }
    if !matches!(f.kind, FindingKind::Vulnerability | FindingKind::Defect) {
        tags.push(f.kind.as_str().to_string());
    }
    let help = match &f.package {
        Some(p) => format!(
            "{} affects {} {}. Proof level: {}. Fix: {}.",
            f.advisory_id(),
            p.name,
            p.new_version,
            f.proof_level.as_str(),
            fix_text(f)
        ),
        None => format!(
            "Proof level: {}. The finding's evidence lists the runs that prove it.",
            f.proof_level.as_str()
        ),
    };
    let id = rule_id(f);
    let builder = ReportingDescriptor::builder()
        .id(id.clone())
        .name(id.replace(['-', '/', '.'], "_"))
        .short_description(
            MultiformatMessageString::builder()
                .text(summary.clone())
                .build(),
        )
        .full_description(MultiformatMessageString::builder().text(summary).build())
        .help(MultiformatMessageString::builder().text(help).build())
        .properties(
            PropertyBag::builder()
                .tags(tags)
                .additional_properties(props)
                .build(),
        );
    match f.advisory.as_ref().and_then(|a| advisory_url(&a.id)) {
        Some(url) => builder.help_uri(url).build(),
        None => builder.build(),
    }
}

/// A result's message: the package, advisory and fix, or the defect's title and claim.
fn result_text(f: &Finding) -> String {
    match (&f.package, &f.advisory) {
        (Some(p), Some(a)) => {
            format!(
                "[{}] {} {} ({}) is affected by {}{}. {}",
                f.proof_level.as_str(),
                p.name,
                p.new_version,
                p.ecosystem,
                a.id,
                a.summary
                    .as_deref()
                    .map(|s| format!(": {s}"))
                    .unwrap_or_default(),
                match f.fix.as_ref().and_then(|x| x.version.as_ref()) {
                    Some(v) => format!("Fixed in {v}."),
                    None => format!("{}.", fix_text(f)),
                },
            ) + &f
                .reachability
                .as_ref()
                .map(|r| format!(" Reachability: {}.", r.summary()))
                .unwrap_or_default()
        }
        _ => format!(
            "[{}] {}{}",
            f.proof_level.as_str(),
            f.title,
            f.claim
                .as_deref()
                .map(|c| format!(": {c}"))
                .unwrap_or_default()
        ),
    }
}

/// A result's properties: its proof level and kind, and whatever evidence it carries.
fn result_properties(f: &Finding) -> BTreeMap<String, serde_json::Value> {
    let mut props = BTreeMap::new();
    props.insert("proof_level".to_string(), f.proof_level.as_str().into());
    props.insert("kind".to_string(), f.kind.as_str().into());
    if let Some(p) = &f.package {
        props.insert(
            "package".to_string(),
            serde_json::to_value(p).unwrap_or_default(),
        );
    }
    if let Some(fix) = &f.fix {
        props.insert(
            "fix".to_string(),
            serde_json::to_value(fix).unwrap_or_default(),
        );
    }
    if let Some(patch) = &f.patch {
        props.insert(
            "patch".to_string(),
            serde_json::to_value(patch).unwrap_or_default(),
        );
    }
    if let Some(n) = &f.fix_not_proved {
        props.insert(
            "fix_not_proved".to_string(),
            serde_json::to_value(n).unwrap_or_default(),
        );
    }
    if let Some(k) = &f.exploited {
        props.insert(
            "exploited".to_string(),
            serde_json::to_value(k).unwrap_or_default(),
        );
    }
    if let Some(r) = &f.reachability {
        props.insert(
            "reachability".to_string(),
            serde_json::to_value(r).unwrap_or_default(),
        );
    }
    if let Some(e) = &f.epss {
        props.insert(
            "epss".to_string(),
            serde_json::to_value(e).unwrap_or_default(),
        );
    }
    // A tool finding: the analyzer, its version and code, and the diagnostic on the change.
    let mut tools = f.evidence.iter().filter_map(|e| e.tool.as_ref());
    if let Some(t) = tools
        .clone()
        .find(|t| t.diagnostic.is_some())
        .or_else(|| tools.next_back())
    {
        props.insert(
            "tool".to_string(),
            serde_json::to_value(t).unwrap_or_default(),
        );
    }
    let runs: Vec<&crate::RunRef> = f.evidence.iter().filter_map(|e| e.run.as_ref()).collect();
    if !runs.is_empty() {
        props.insert(
            "runs".to_string(),
            serde_json::to_value(runs).unwrap_or_default(),
        );
    }
    props
}

/// `review_id`: the report's, for the replay command in the properties.
fn result(f: &Finding, rule_index: usize, review_id: Option<&str>) -> SarifResult {
    let level = match f.kind {
        FindingKind::Vulnerability | FindingKind::Defect => ResultLevel::Error,
        _ => ResultLevel::Warning,
    };
    let text = result_text(f);
    let location = source_location(&f.location.path, f.location.line.unwrap_or(1), None);
    let mut fingerprints = BTreeMap::new();
    fingerprints.insert("provenFinding/v1".to_string(), f.id.clone());
    let mut props = result_properties(f);
    props.insert(
        "replay".to_string(),
        crate::replay_command(review_id, &f.id).into(),
    );
    let builder = SarifResult::builder()
        .rule_id(rule_id(f))
        .rule_index(rule_index as i64)
        .level(level)
        .message(Message::builder().text(text).build())
        .locations(vec![location])
        .partial_fingerprints(fingerprints)
        .properties(PropertyBag::builder().additional_properties(props).build());
    let related = reach_locations(f);
    if related.is_empty() {
        builder.build()
    } else {
        builder.related_locations(related).build()
    }
}

/// Where the code reaches what the advisory names, as related locations.
fn reach_locations(f: &Finding) -> Vec<Location> {
    f.reachability
        .iter()
        .flat_map(|r| &r.sites)
        .enumerate()
        .map(|(i, site)| {
            let text = format!("reaches {} ({})", site.symbol, site.kind.replace('_', " "));
            source_location(
                &site.path,
                u32::try_from(site.line).unwrap_or(u32::MAX),
                Some((i as i64, text)),
            )
        })
        .collect()
}

/// A file and line of the repository (`%SRCROOT%`), with an id and a message for a related
/// location.
fn source_location(path: &str, line: u32, related: Option<(i64, String)>) -> Location {
    let physical = PhysicalLocation::builder()
        .artifact_location(
            ArtifactLocation::builder()
                .uri(path.to_string())
                .uri_base_id("%SRCROOT%")
                .build(),
        )
        .region(Region::builder().start_line(i64::from(line.max(1))).build())
        .build();
    match related {
        Some((id, text)) => Location::builder()
            .physical_location(physical)
            .id(id)
            .message(Message::builder().text(text).build())
            .build(),
        None => Location::builder().physical_location(physical).build(),
    }
}

/// The run's one invocation: `executionSuccessful` only for a review that ran whole (SARIF
/// 2.1.0 §3.20.14), with what did not run as error notifications, so that no reader (code
/// scanning included) takes an incomplete or partial review's few results for a clean
/// analysis.
fn invocation(report: &Report) -> Invocation {
    let complete = report.status == Status::Complete;
    let builder = Invocation::builder().execution_successful(complete);
    match crate::what_did_not_run(report) {
        Some(missing) if !complete => {
            let text = format!("The review is {}: {missing}", report.status.as_str());
            builder
                .tool_execution_notifications(vec![
                    Notification::builder()
                        .message(Message::builder().text(text).build())
                        .level(serde_json::json!("error"))
                        .build(),
                ])
                .build()
        }
        _ => builder.build(),
    }
}

/// Whether code scanning may take this SARIF as a whole analysis of the head. Only a
/// complete review's: an upload with fewer results than a whole review would find closes
/// earlier alerts, so an incomplete, partial or failed review is never uploaded.
pub fn sarif_is_complete(report: &Report) -> bool {
    report.status == Status::Complete
}

/// The run's properties: the review's status and counts, and what SARIF has no place for
/// (not results: SARIF results are findings), each only when there is any.
fn run_properties(report: &Report) -> BTreeMap<String, serde_json::Value> {
    let mut props = BTreeMap::new();
    props.insert("status".to_string(), report.status.as_str().into());
    props.insert(
        "proof_counts".to_string(),
        serde_json::to_value(report.proof_counts).unwrap_or_default(),
    );
    if let Some(id) = &report.review_id {
        props.insert("review_id".to_string(), id.clone().into());
    }
    let mut put = |key: &str, present: bool, value: serde_json::Result<serde_json::Value>| {
        if present {
            props.insert(key.to_string(), value.unwrap_or_default());
        }
    };
    put(
        "failed_services",
        !report.failed_services.is_empty(),
        serde_json::to_value(&report.failed_services),
    );
    put(
        "input_errors",
        !report.input_errors.is_empty(),
        serde_json::to_value(&report.input_errors),
    );
    // The claims neither side proved and what the review could not see.
    put(
        "unproven",
        !report.unproven.is_empty(),
        serde_json::to_value(&report.unproven),
    );
    put(
        "suppressed",
        !report.suppressed.is_empty(),
        serde_json::to_value(&report.suppressed),
    );
    put(
        "ignore_notes",
        !report.ignore_notes.is_empty(),
        serde_json::to_value(&report.ignore_notes),
    );
    put(
        "not_seen",
        !report.not_seen.is_empty(),
        serde_json::to_value(&report.not_seen),
    );
    put(
        "reviewers",
        !report.reviewers.is_empty(),
        serde_json::to_value(&report.reviewers),
    );
    put(
        "autofix",
        report.autofix.is_some(),
        serde_json::to_value(&report.autofix),
    );
    put(
        "coverage",
        report.coverage.is_some(),
        serde_json::to_value(&report.coverage),
    );
    props
}

pub fn render_sarif(report: &Report) -> String {
    let mut rules: Vec<ReportingDescriptor> = Vec::new();
    let mut rule_index: HashMap<String, usize> = HashMap::new();
    let mut results = Vec::with_capacity(report.findings.len());
    for f in &report.findings {
        let idx = *rule_index.entry(rule_id(f)).or_insert_with(|| {
            rules.push(rule(f));
            rules.len() - 1
        });
        results.push(result(f, idx, report.review_id.as_deref()));
    }
    // An ignored finding is a result suppressed by the repository (SARIF §3.27.23): code
    // scanning shows it dismissed, with the entry's reason, never as an open alert.
    for i in &report.ignored {
        let f = &i.finding;
        let idx = *rule_index.entry(rule_id(f)).or_insert_with(|| {
            rules.push(rule(f));
            rules.len() - 1
        });
        let mut r = result(f, idx, report.review_id.as_deref());
        let until = i
            .expires
            .as_deref()
            .map(|d| format!(" (until {d})"))
            .unwrap_or_default();
        r.suppressions = Some(vec![
            Suppression::builder()
                .kind(serde_json::json!("external"))
                .status(serde_json::json!("accepted"))
                .justification(format!(
                    "proven.yaml ignore entry {}{until}: {}",
                    i.entry, i.reason
                ))
                .build(),
        ]);
        results.push(r);
    }
    let run_props = run_properties(report);
    let driver = ToolComponent::builder()
        .name("Proven")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .invocations(vec![invocation(report)])
        .results(results)
        .properties(
            PropertyBag::builder()
                .additional_properties(run_props)
                .build(),
        )
        .build();
    let sarif = Sarif::builder()
        .schema(SARIF_SCHEMA)
        .version(serde_json::json!("2.1.0"))
        .runs(vec![run])
        .build();
    let mut s =
        serde_json::to_string_pretty(&sarif).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
