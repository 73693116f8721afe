//! An answer as text, Markdown and JSON. Every claim shows what became of it and who
//! settled it; conceded is never shown as validated; what this run could not see is its
//! own section, never dropped.

use std::fmt::Write;

use crate::answer::{Answer, ClaimStatus};

fn status(s: ClaimStatus) -> &'static str {
    match s {
        ClaimStatus::Conceded => "conceded (not validated)",
        ClaimStatus::Refuted => "refuted",
        ClaimStatus::Unresolved => "unresolved",
    }
}

fn places(c: &super::ClaimRecord) -> String {
    c.citations
        .iter()
        .map(|x| x.place())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The coverage section: its heading with the auditor's verdict and one row a surface, or
/// `none` when the auditor was not asked.
fn coverage(
    answer: &Answer,
    heading: impl Fn(&str) -> String,
    row: impl Fn(&super::SurfaceRecord) -> String,
    none: &str,
) -> String {
    let Some(cov) = &answer.coverage else {
        return format!("{none}\n");
    };
    let mut out = heading(&cov.verdict) + "\n";
    for s in &cov.surfaces {
        out.push_str(&row(s));
        out.push('\n');
    }
    out
}

pub fn json(answer: &Answer) -> String {
    serde_json::to_string_pretty(answer).unwrap_or_default() + "\n"
}

pub fn text(answer: &Answer) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Question: {}", answer.question);
    let _ = writeln!(
        out,
        "Repository: {} at {} ({})",
        answer.repository, answer.rev, answer.commit
    );
    if let Some(d) = &answer.degraded {
        let _ = writeln!(out, "Degraded: {d}");
    }
    let _ = writeln!(out, "\nClaims ({} rounds):", answer.rounds);
    for c in &answer.claims {
        let _ = writeln!(
            out,
            "  - [{}] {} [{}]",
            status(c.status),
            c.claim,
            places(c)
        );
        let _ = writeln!(out, "      {} (by {}, round {})", c.reason, c.by, c.round);
    }
    out.push_str(&coverage(
        answer,
        |verdict| format!("\nCoverage (the auditor, shown the question and the manifests, never the answer): {verdict}"),
        |s| format!("  - {}: {} ({}); probe: {}", s.surface, s.status, s.detail, s.probe),
        "\nCoverage: not asked",
    ));
    if !answer.could_not_see.is_empty() {
        let _ = writeln!(out, "\nWhat this run could not see:");
        for n in &answer.could_not_see {
            let _ = writeln!(out, "  - {} (needs: {})", n.what, n.needs);
        }
    }
    if !answer.failed_services.is_empty() {
        let _ = writeln!(out, "\nFailed services:");
        for f in &answer.failed_services {
            let _ = writeln!(out, "  - {}: {}", f.what, f.needs);
        }
    }
    out
}

/// Markdown table cells: pipes and angle brackets escaped, lines joined.
fn md(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\n', " ")
}

pub fn markdown(answer: &Answer) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Proven answer: {}\n", md(&answer.question));
    let _ = writeln!(
        out,
        "Repository `{}` at `{}` (`{}`).\n",
        answer.repository, answer.rev, answer.commit
    );
    if let Some(d) = &answer.degraded {
        let _ = writeln!(out, "> **Degraded:** {}\n", md(d));
    }
    let _ = writeln!(
        out,
        "### Claims\n\n| claim | cites | status | by | why |\n|---|---|---|---|---|"
    );
    for c in &answer.claims {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} (round {}) | {} |",
            md(&c.claim),
            places(c),
            status(c.status),
            c.by,
            c.round,
            md(&c.reason)
        );
    }
    out.push_str(&coverage(
        answer,
        |verdict| format!("\n### Coverage: {verdict} (the auditor, shown the question and the manifests, never the answer)\n\n| surface | status | detail | probe |\n|---|---|---|---|"),
        |s| format!("| `{}` | {} | {} | {} |", s.surface, s.status, md(&s.detail), md(&s.probe)),
        "\n### Coverage: not asked",
    ));
    if !answer.could_not_see.is_empty() {
        let _ = writeln!(out, "\n### What this run could not see\n");
        for n in &answer.could_not_see {
            let _ = writeln!(out, "- {} (needs: {})", md(&n.what), md(&n.needs));
        }
    }
    if !answer.failed_services.is_empty() {
        let _ = writeln!(out, "\n### Failed services\n");
        for f in &answer.failed_services {
            let _ = writeln!(out, "- {}: {}", f.what, md(&f.needs));
        }
    }
    out
}
