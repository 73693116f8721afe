//! The review as a GitHub pull-request review: the JSON body of `POST /repos/{owner}/{repo}/
//! pulls/{number}/reviews`. Its `body` is the Markdown rendering; each line of a proved fix
//! becomes a review comment with a `suggestion` block, which GitHub shows as a change the
//! author can apply with one click. Posting it is `proven-github`'s; nothing here reaches
//! the network.

use serde_json::{Value, json};

use crate::{Report, Status};

/// GitHub refuses a review body longer than 65,536 characters; this leaves room to spare.
pub const MAX_BODY: usize = 65_000;

/// A suggestion block whose fence no line of the suggestion can close.
fn suggestion(replacement: &str) -> String {
    let longest = replacement
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}suggestion\n{replacement}\n{fence}")
}

/// The marker that finds the review of one head commit again (an HTML comment: GitHub
/// does not show it). Publishing the same head again updates that review in place.
pub fn review_marker(head_sha: &str) -> String {
    format!("<!-- proven-review head={head_sha} -->")
}

/// What did not run, in one line, for an incomplete or failed review (None: complete).
pub fn what_did_not_run(report: &Report) -> Option<String> {
    match report.status {
        Status::Complete => return None,
        Status::Partial => {
            let why = report.plan.as_ref().and_then(|p| p.partial.as_deref());
            return Some(md(why.unwrap_or("the model agents (none is configured)")));
        }
        Status::Incomplete | Status::Failed => {}
    }
    let mut parts: Vec<String> = report
        .failed_services
        .iter()
        .map(|s| format!("{} ({})", md(&s.service), md(&first_line(&s.message))))
        .collect();
    if parts.is_empty() {
        parts.extend(
            report
                .input_errors
                .iter()
                .map(|e| format!("{} could not be read", md(&e.path))),
        );
    }
    if parts.is_empty() {
        parts.extend(report.not_seen.iter().map(|n| md(&n.what)));
    }
    if parts.is_empty() {
        parts.push("not every step of the plan finished".into());
    }
    Some(parts.join("; "))
}

fn first_line(s: &str) -> String {
    crate::cut_at_word(s.lines().next().unwrap_or_default(), 200)
}

/// The change's or a model's text, escaped so it cannot open Markdown or HTML structure.
fn md(s: &str) -> String {
    crate::markdown::md_escape(s.to_string())
}

/// The body cut to at most `limit` bytes (a note saying so included), on a character
/// boundary.
pub fn cut_body(mut body: String, limit: usize) -> String {
    const NOTE: &str =
        "\n\n(cut to GitHub's limit; the whole review is in the JSON and SARIF outputs)\n";
    if body.len() > limit {
        let mut at = limit.saturating_sub(NOTE.len());
        while !body.is_char_boundary(at) {
            at -= 1;
        }
        body.truncate(at);
        body.push_str(NOTE);
    }
    body
}

/// The review as GitHub's `POST .../pulls/{n}/reviews` takes it: `body`, `event` and
/// `comments`, and with `head_sha` its `commit_id` and the marker. An incomplete review's
/// first line says what did not run (it never looks clean); findings come first with
/// their proof level; fixes not proved and unproven claims fold away.
pub fn github_review(report: &Report, head_sha: Option<&str>) -> Value {
    let mut body = String::new();
    if let Some(missing) = what_did_not_run(report) {
        let what = match report.status {
            Status::Failed => "Proven could not review this change. Did not run",
            Status::Partial => {
                "Partial review: the code was not reviewed, findings may be missing. Why"
            }
            _ => "Incomplete review: findings may be missing. Did not run",
        };
        body.push_str(&format!("**{what}: {missing}.**\n\n"));
    }
    body.push_str(&crate::markdown::markdown(report, true));
    let not_proved: Vec<&crate::Finding> = report
        .findings
        .iter()
        .filter(|f| f.fix_not_proved.is_some())
        .collect();
    if !not_proved.is_empty() {
        body.push_str(&format!(
            "\n<details><summary>Fix not proved: {}</summary>\n\n",
            not_proved.len()
        ));
        for f in not_proved {
            if let Some(n) = &f.fix_not_proved {
                body.push_str(&format!(
                    "- {}: fix not proved ({} {}): {}\n",
                    md(&f.title),
                    n.attempts,
                    if n.attempts == 1 { "try" } else { "tries" },
                    md(&first_line(&n.reason))
                ));
            }
        }
        body.push_str("\n</details>\n");
    }
    let marker = head_sha.map(|h| format!("\n{}\n", review_marker(h)));
    let mut body = cut_body(body, MAX_BODY - marker.as_ref().map_or(0, String::len));
    let mut review = json!({
        "event": "COMMENT",
        "comments": comments(report),
    });
    if let (Some(head), Some(marker)) = (head_sha, marker) {
        body.push_str(&marker);
        review["commit_id"] = head.into();
    }
    review["body"] = body.into();
    review
}

/// One suggested edit and every finding it fixes: findings that share an edit (three
/// advisories of one pinned package, say) are listed under one suggestion, never posted as
/// identical suggestions on one line.
struct Suggested<'a> {
    path: &'a str,
    start: u32,
    end: u32,
    replacement: &'a str,
    /// What the edit is (`**Proposed fix**`, `**Dependency fix**`) and why it holds: the
    /// first finding's words stand for all (an identical edit proved for each).
    lead: &'static str,
    why: String,
    titles: Vec<String>,
}

fn comments(report: &Report) -> Vec<Value> {
    let mut all: Vec<Suggested<'_>> = Vec::new();
    fn add<'a>(all: &mut Vec<Suggested<'a>>, s: Suggested<'a>) {
        match all.iter_mut().find(|o| {
            (o.path, o.start, o.end, o.replacement) == (s.path, s.start, s.end, s.replacement)
        }) {
            Some(o) => {
                for t in s.titles {
                    if !o.titles.contains(&t) {
                        o.titles.push(t);
                    }
                }
            }
            None => all.push(s),
        }
    }
    for f in &report.findings {
        let Some(patch) = &f.patch else { continue };
        for e in &patch.edits {
            let Some(span) = &e.lines else { continue };
            add(
                &mut all,
                Suggested {
                    path: &e.path,
                    start: span.start,
                    end: span.end,
                    replacement: &span.replacement,
                    lead: "**Proposed fix**",
                    why: format!(
                        "proved — with it the finding's own test passes, {}",
                        md(&patch.suite_words())
                    ),
                    titles: vec![format!("{} (`{}`)", md(&f.title), f.proof_level.as_str())],
                },
            );
        }
    }
    // A dependency fix the evidence proved, where one edit is the whole fix: a suggestion.
    for f in &report.findings {
        let Some(p) = f.fix.as_ref().and_then(|x| x.proposed.as_ref()) else {
            continue;
        };
        if !p.proved || p.command.is_some() {
            continue;
        }
        for e in &p.edits {
            let Some(span) = &e.lines else { continue };
            add(
                &mut all,
                Suggested {
                    path: &e.path,
                    start: span.start,
                    end: span.end,
                    replacement: &span.replacement,
                    lead: "**Dependency fix**",
                    why: format!("raises it to {}; {}", md(&p.version), md(&p.reason)),
                    titles: vec![md(&f.title)],
                },
            );
        }
    }
    all.into_iter()
        .map(|s| {
            let what = match s.titles.as_slice() {
                [one] => one.clone(),
                many => format!(
                    "{} findings ({})",
                    many.len(),
                    many.join("; ")
                ),
            };
            let mut comment = json!({
                "path": s.path,
                "line": s.end,
                "side": "RIGHT",
                "body": format!("{} for {what}: {}.\n\n{}", s.lead, s.why, suggestion(s.replacement)),
            });
            if s.start < s.end {
                comment["start_line"] = s.start.into();
                comment["start_side"] = "RIGHT".into();
            }
            comment
        })
        .collect()
}

pub fn render_github(report: &Report) -> String {
    let mut out = serde_json::to_string_pretty(&github_review(report, None)).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suggestion_fence_is_longer_than_any_backtick_run_inside() {
        assert_eq!(suggestion("x"), "```suggestion\nx\n```");
        let s = suggestion("a ```` b");
        assert!(s.starts_with("`````suggestion"), "{s}");
    }
}
