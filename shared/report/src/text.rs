//! Plain text for people, with colour when the caller says the terminal takes it.

use std::fmt::Write;

use anstyle::{AnsiColor, Style};

use crate::{Finding, Level, Report, ReportKind};

struct Paint {
    on: bool,
}

impl Paint {
    fn paint(&self, style: Style, text: &str) -> String {
        if self.on {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }
    fn bold(&self, text: &str) -> String {
        self.paint(Style::new().bold(), text)
    }
    fn dim(&self, text: &str) -> String {
        self.paint(Style::new().dimmed(), text)
    }
    fn level(&self, level: Level) -> String {
        let style = match level {
            Level::Reproduced => AnsiColor::Red.on_default().bold(),
            Level::Exploited => AnsiColor::Red.on_default(),
            Level::Advisory => AnsiColor::Yellow.on_default(),
            Level::Tool => AnsiColor::Cyan.on_default(),
        };
        self.paint(style, &format!("[{}]", level.as_str()))
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

pub fn render_text(report: &Report, color: bool) -> String {
    let p = Paint { on: color };
    let mut out = String::new();
    write_header(&mut out, &p, report);
    write_findings(&mut out, &p, report);
    write_set_aside(&mut out, &p, report);
    write_reviewers(&mut out, &p, report);
    write_autofix(&mut out, &p, report);
    write_coverage(&mut out, &p, report);
    write_gaps(&mut out, &p, report);
    out
}

/// The title line, the trees compared and the plan.
fn write_header(out: &mut String, p: &Paint, report: &Report) {
    let what = match report.kind {
        ReportKind::Review => "review",
        ReportKind::Scan => "scan",
    };
    let id = report
        .review_id
        .as_deref()
        .map(|i| format!(" {i}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{}{} of {}: {}",
        p.bold(&format!("Proven {what}")),
        id,
        report.target,
        p.bold(report.status.as_str())
    );
    if let (Some(b), Some(h)) = (&report.base, &report.head) {
        let how = match (b.diff.as_deref(), &b.tip) {
            (Some("two-dot"), _) => ", two-dot: the base as named".to_string(),
            (Some(_), Some(tip)) => {
                format!(", the merge base; {} itself is at {}", b.rev, short(tip))
            }
            (Some(_), None) => ", the merge base".to_string(),
            (None, _) => String::new(),
        };
        let _ = writeln!(
            out,
            "  base {} ({}{how}) -> head {} ({})",
            b.rev,
            short(&b.commit),
            h.rev,
            short(&h.commit)
        );
    }
    if let Some(plan) = &report.plan {
        let _ = writeln!(
            out,
            "  plan: {} change, {} band; runs: {}",
            plan.change_kind,
            plan.band,
            if plan.runs.is_empty() {
                "nothing".to_string()
            } else {
                plan.runs.join(", ")
            }
        );
        for l in &plan.left_out {
            let _ = writeln!(out, "  {}", p.dim(&format!("not in plan: {l}")));
        }
    }
}

/// The findings by proof level, each in full.
fn write_findings(out: &mut String, p: &Paint, report: &Report) {
    let c = &report.proof_counts;
    let _ = writeln!(
        out,
        "\n{} reproduced {} · exploited {} · advisory {} · tool {}",
        p.bold("Findings by proof level:"),
        c.reproduced,
        c.exploited,
        c.advisory,
        c.tool
    );
    if report.findings.is_empty() {
        let _ = writeln!(out, "No finding.");
    }
    for f in &report.findings {
        out.push('\n');
        write_finding(out, p, f);
        let replay = crate::replay_command(report.review_id.as_deref(), &f.id);
        let _ = writeln!(out, "  replay:    {}", p.dim(&replay));
    }
}

/// What was ignored, not raised again or left unproven.
fn write_set_aside(out: &mut String, p: &Paint, report: &Report) {
    if !report.ignored.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            p.bold("Ignored by the repository's ignore list (not counted, never failing):")
        );
        for i in &report.ignored {
            let until = i
                .expires
                .as_deref()
                .map(|d| format!(", until {d}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  - {} ({}:{}): ignored by {}{until}: {}",
                i.finding.title,
                i.finding.location.path,
                i.finding.location.line.unwrap_or(1),
                i.entry,
                i.reason
            );
        }
    }
    for n in &report.ignore_notes {
        let _ = writeln!(out, "ignore entry {} {}: {}", n.entry, n.status, n.detail);
    }
    if !report.suppressed.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            p.bold("Not raised again (an evidenced refutation in memory):")
        );
        for m in &report.suppressed {
            let _ = writeln!(
                out,
                "  - {} ({}): refuted by review {} on {}, evidence: {} (record {})",
                m.claim, m.path, m.refuted_by, m.on, m.evidence, m.record
            );
        }
    }
    if !report.unproven.is_empty() {
        let _ = writeln!(out, "\n{}", p.bold("Unproven (not findings):"));
        for u in &report.unproven {
            let _ = writeln!(out, "  - {}: {}", u.claim, u.reason);
        }
    }
}

/// The two reviewers side by side.
fn write_reviewers(out: &mut String, p: &Paint, report: &Report) {
    if !report.reviewers.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            p.bold("The reviewers, side by side (never merged; evidence decides):")
        );
        for r in &report.reviewers {
            let _ = writeln!(
                out,
                "  - {} ({}): {}; first reviewer {}, second reviewer {}{}",
                r.title,
                r.path,
                r.outcome,
                r.first.verdict,
                r.second.verdict,
                r.second
                    .reason
                    .as_deref()
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default()
            );
        }
    }
}

/// The autofix's verdict, fixes and runs.
fn write_autofix(out: &mut String, p: &Paint, report: &Report) {
    if let Some(a) = &report.autofix {
        let _ = writeln!(
            out,
            "\n{} {} ({} edits; nothing is committed)",
            p.bold("Autofix:"),
            a.verdict,
            a.edits.len()
        );
        for f in &a.fixes {
            let _ = writeln!(out, "  closed: {f}");
        }
        for o in &a.open {
            let _ = writeln!(out, "  open:   {o}");
        }
        for n in &a.narrowed {
            let _ = writeln!(out, "  only:   {n}");
        }
        for r in &a.runs {
            let _ = writeln!(
                out,
                "  run:    {} {} → {}",
                r.side,
                r.command.join(" "),
                r.outcome
            );
        }
    }
}

/// The coverage auditor's verdict by surface.
fn write_coverage(out: &mut String, p: &Paint, report: &Report) {
    if let Some(c) = &report.coverage {
        let _ = writeln!(
            out,
            "\n{} {}",
            p.bold("Coverage (the auditor, shown the manifests, never the findings):"),
            c.verdict
        );
        for s in &c.surfaces {
            let _ = writeln!(
                out,
                "  - {}: {}: {}{}",
                s.surface,
                s.status,
                s.detail,
                s.probe
                    .as_deref()
                    .map(|w| format!(" (probe: {w})"))
                    .unwrap_or_default()
            );
        }
    }
}

/// What made the review incomplete: failed services, unreadable inputs, what was not seen or left out.
fn write_gaps(out: &mut String, p: &Paint, report: &Report) {
    if !report.failed_services.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            p.bold("Failed services (this review is incomplete):")
        );
        for s in &report.failed_services {
            let _ = writeln!(out, "  - {}: {}", s.service, s.message);
        }
    }
    if !report.input_errors.is_empty() {
        let _ = writeln!(out, "\n{}", p.bold("Inputs that could not be read:"));
        for e in &report.input_errors {
            let side = e
                .side
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            let line = e.line.map(|l| format!(" line {l}")).unwrap_or_default();
            let _ = writeln!(out, "  - {}{line}{side}: {}", e.path, e.message);
        }
    }
    if !report.not_seen.is_empty() {
        let _ = writeln!(out, "\n{}", p.bold("What this review could not see:"));
        for n in &report.not_seen {
            let _ = writeln!(out, "  - {}: {}", n.what, n.reason);
        }
    }
    if !report.left_out.is_empty() {
        let _ = writeln!(out, "\n{}", p.bold("Left out of the trees:"));
        for l in &report.left_out {
            let _ = writeln!(out, "  - {} ({})", l.path, l.reason);
        }
    }
}

fn write_finding(out: &mut String, p: &Paint, f: &Finding) {
    let (Some(pkg), Some(adv)) = (&f.package, &f.advisory) else {
        return write_defect(out, p, f);
    };
    let aliases = if adv.aliases.is_empty() {
        String::new()
    } else {
        format!(" ({})", adv.aliases.join(", "))
    };
    let _ = writeln!(
        out,
        "{} {} {} {} — {}{}{}",
        p.level(f.proof_level),
        p.bold(&pkg.name),
        pkg.new_version,
        p.dim(&format!("({})", pkg.ecosystem)),
        adv.id,
        aliases,
        if f.kind == crate::FindingKind::Vulnerability {
            String::new()
        } else {
            format!(" [{}]", f.kind.as_str())
        }
    );
    if let Some(s) = &adv.summary {
        let _ = writeln!(out, "  {s}");
    }
    let line = f.location.line.map(|l| format!(":{l}")).unwrap_or_default();
    let was = match &pkg.old_version {
        Some(v) => format!("; was {v}"),
        None => String::new(),
    };
    let dev = if pkg.dev { ", dev" } else { "" };
    let _ = writeln!(
        out,
        "  where:     {}{line} ({}{dev}{was})",
        f.location.path,
        crate::dependency_words(&pkg.dependency)
    );
    for s in &adv.severity {
        let score = s.base_score.map(|b| format!(" {b:.1}")).unwrap_or_default();
        let _ = writeln!(out, "  severity:  {}{score} {}", s.kind, p.dim(&s.score));
    }
    if let Some(k) = &f.exploited {
        let since = k
            .date_added
            .as_deref()
            .map(|d| format!(" since {d}"))
            .unwrap_or_default();
        let _ = writeln!(out, "  exploited: {} is in CISA KEV{since}", k.cve);
    }
    if let Some(e) = &f.epss {
        let _ = writeln!(
            out,
            "  epss:      {} probability {:.5}, percentile {:.5}",
            e.cve, e.probability, e.percentile
        );
    }
    if let Some(fix) = &f.fix {
        match &fix.version {
            Some(v) => {
                let _ = writeln!(out, "  fix:       {v} ({})", fix.note);
            }
            None => {
                let _ = writeln!(out, "  fix:       {}", fix.note);
            }
        }
        if let Some(p) = &fix.proposed {
            let how = match (&p.command, p.edits.first()) {
                (Some(c), _) => format!("run `{c}`"),
                (None, Some(e)) => format!(
                    "in {} line {}: {} → {}",
                    e.path,
                    e.lines.as_ref().map_or(0, |l| l.start),
                    e.old_text.trim(),
                    e.new_text.trim()
                ),
                (None, None) => "no change could be made".into(),
            };
            let said = if p.proved { "proved" } else { "not proved" };
            let _ = writeln!(out, "  fix to {}: {how} ({said}: {})", p.version, p.reason);
        }
    }
    if let Some(r) = &f.reachability {
        let _ = writeln!(out, "  reach:     {}", r.summary());
        for site in &r.sites {
            let change = if site.in_change {
                " (in the change)"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "             {}:{}{change}: {}",
                site.path,
                site.line,
                p.dim(&site.text)
            );
        }
    }
    for e in &f.evidence {
        if let (Some(id), Some(i), Some(m)) = (&e.advisory_id, e.affected_index, &e.matched) {
            let _ = writeln!(out, "  evidence:  {id} affected[{i}] matched by {m}");
        }
    }
}

/// A defect: the claim, the test, and the runs that prove it.
fn write_defect(out: &mut String, p: &Paint, f: &Finding) {
    let line = f.location.line.map(|l| format!(":{l}")).unwrap_or_default();
    let _ = writeln!(
        out,
        "{} {} {}",
        p.level(f.proof_level),
        p.bold(&f.title),
        p.dim(&format!("({}{line})", f.location.path))
    );
    if let Some(c) = &f.claim {
        let _ = writeln!(out, "  claim:     {c}");
    }
    for e in &f.evidence {
        if let Some(t) = &e.test {
            let _ = writeln!(out, "  test:      {}", t.path);
        }
        if let Some(r) = &e.run {
            let code = r
                .exit_code
                .map_or_else(|| "none".to_string(), |c| c.to_string());
            let tests = r
                .tests
                .map(|t| {
                    format!(
                        ", {} passed {} failed {} skipped",
                        t.passed, t.failed, t.skipped
                    )
                })
                .unwrap_or_default();
            let id = if r.run_id.is_empty() {
                String::new()
            } else {
                format!(" [{}]", r.run_id)
            };
            let _ = writeln!(
                out,
                "  run:       {} {} → {} (exit {code}{tests}, {} ms, output sha256 {}){id}",
                r.side,
                &r.commit[..12.min(r.commit.len())],
                r.outcome,
                r.duration_ms,
                &r.output_sha256[..12.min(r.output_sha256.len())]
            );
        }
        if let Some(t) = &e.tool {
            let _ = writeln!(out, "  tool:      {}", t.words());
        }
    }
    if let Some(s) = &f.skeptic {
        let artifact = s
            .artifact
            .as_deref()
            .map(|a| format!(", opened {a}"))
            .unwrap_or_default();
        let refutation = s
            .refutation
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  skeptic:   {}{refutation}{artifact}: {}",
            s.verdict, s.reason
        );
        if let Some(needs) = &s.needs {
            let _ = writeln!(out, "  needs:     {needs}");
        }
    }
    if let Some(n) = &f.fix_not_proved {
        let _ = writeln!(
            out,
            "  fix not proved ({} {}): {}",
            n.attempts,
            if n.attempts == 1 { "try" } else { "tries" },
            n.reason
        );
    }
    if let Some(patch) = &f.patch {
        let _ = writeln!(
            out,
            "  fix:       proved (try {}): with it the test passes, {}: {}",
            patch.attempt,
            patch.suite_words(),
            patch.explanation
        );
        for e in &patch.edits {
            let _ = writeln!(out, "    {}:", e.path);
            for line in e.old_text.lines() {
                let _ = writeln!(out, "    - {line}");
            }
            for line in e.new_text.lines() {
                let _ = writeln!(out, "    + {line}");
            }
        }
    }
}
