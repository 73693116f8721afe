//! The review result, as a document, and its renderings.
//!
//! Owns the result document ([`Report`]): the versioned JSON shape that the CLI prints,
//! the store keeps and the API will serve (documented in `docs/report-json.md`; bump
//! [`SCHEMA_VERSION`] on any incompatible change). Also owns its renderings for people
//! (text, Markdown) and for tools (JSON, SARIF 2.1.0). A rendering reads only the
//! document, never the engine, so every format shows the same facts.
//!
//! Invariants:
//! - Every finding shows its proof level first; the counts by level list every level.
//! - Failed services and what the review could not see are always rendered, never hidden.

mod document;
mod github;
mod html;
mod markdown;
mod reachability;
mod sarif;
mod text;

pub use document::*;
pub use github::{
    MAX_BODY, cut_body, github_review, render_github, review_marker, what_did_not_run,
};
pub use html::render_html;
pub use markdown::{code_span, render_markdown};
pub use reachability::{MAX_REACH_SITES, ReachSite, ReachVerdict, Reachability};
pub use sarif::{render_sarif, sarif_is_complete};
pub use text::render_text;

/// The command that runs a finding's evidence again (`proven replay`): by the review's id,
/// or, for a report with none (a scan), by the report's JSON file. The finding's id is
/// quoted for a POSIX shell when it holds anything but plain characters.
pub fn replay_command(review_id: Option<&str>, finding_id: &str) -> String {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || ":._/-@+=,".contains(c))
    };
    let quote = |s: &str| {
        if plain(s) {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    format!(
        "proven replay {} {}",
        review_id.map_or_else(|| "REPORT.json".to_string(), quote),
        quote(finding_id)
    )
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
    Html,
    Sarif,
    /// A GitHub pull-request review (JSON), with proved fixes as suggestions.
    Github,
}

impl Format {
    pub const NAMES: &'static str = "text, json, markdown, html, sarif, github";

    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "text" => Some(Format::Text),
            "json" => Some(Format::Json),
            "markdown" | "md" => Some(Format::Markdown),
            "html" => Some(Format::Html),
            "sarif" => Some(Format::Sarif),
            "github" => Some(Format::Github),
            _ => None,
        }
    }
}

/// Renders `report` in `format`. `color` only affects text.
pub fn render(report: &Report, format: Format, color: bool) -> String {
    match format {
        Format::Text => render_text(report, color),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(report)
                .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
            s.push('\n');
            s
        }
        Format::Markdown => render_markdown(report),
        Format::Html => render_html(report),
        Format::Sarif => render_sarif(report),
        Format::Github => render_github(report),
    }
}
