//! The review as a GitHub pull-request review: the JSON body of `POST /repos/{owner}/{repo}/
//! pulls/{number}/reviews`. Its `body` is the Markdown rendering; each line of a proved fix
//! becomes a review comment with a `suggestion` block, which GitHub shows as a change the
//! author can apply with one click. Posting it is the caller's (Publish is not part of this
//! crate); nothing here reaches the network.

use serde_json::{Value, json};

use crate::{Report, render_markdown};

/// GitHub refuses a review body longer than this.
const MAX_BODY: usize = 65_000;

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

pub fn render_github(report: &Report) -> String {
    let mut body = render_markdown(report);
    if body.len() > MAX_BODY {
        let mut at = MAX_BODY;
        while !body.is_char_boundary(at) {
            at -= 1;
        }
        body.truncate(at);
        body.push_str(
            "\n\n(cut to GitHub's limit; the whole review is in the JSON and SARIF outputs)\n",
        );
    }
    let mut comments: Vec<Value> = Vec::new();
    for f in &report.findings {
        let Some(patch) = &f.patch else { continue };
        for e in &patch.edits {
            let Some(span) = &e.lines else { continue };
            let mut comment = json!({
                "path": e.path,
                "line": span.end,
                "side": "RIGHT",
                "body": format!(
                    "**Proposed fix for `{}`** ({}): proved — with it the finding's own test passes, {}.\n\n{}",
                    f.proof_level.as_str(),
                    f.title.replace('`', "'"),
                    patch.suite_words().replace('`', "'"),
                    suggestion(&span.replacement)
                ),
            });
            if span.start < span.end {
                comment["start_line"] = span.start.into();
                comment["start_side"] = "RIGHT".into();
            }
            comments.push(comment);
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
            comments.push(json!({
                "path": e.path,
                "line": span.end,
                "side": "RIGHT",
                "body": format!(
                    "**Dependency fix for `{}`**: raises it to {}; {}.\n\n{}",
                    f.title.replace('`', "'"),
                    p.version,
                    p.reason.replace('`', "'"),
                    suggestion(&span.replacement)
                ),
            }));
        }
    }
    let review = json!({
        "event": "COMMENT",
        "body": body,
        "comments": comments,
    });
    let mut out = serde_json::to_string_pretty(&review).unwrap_or_default();
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
