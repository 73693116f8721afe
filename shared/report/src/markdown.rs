//! Markdown (PR comments, files). Rendered from a template so the layout reads as what it
//! produces; the document is the only input.

use minijinja::Environment;

use crate::Report;

const TEMPLATE: &str = r#"## Proven {{ kind }}{% if review_id %} {{ review_id | code }}{% endif %}: {{ status }}

{% if base and head %}Base {{ base.rev | code }} ({{ base.commit[:12] | code }}{% if base.diff == "two-dot" %}, two-dot: the base as named{% elif base.diff and base.tip %}, the merge base; {{ base.rev | code }} itself is at {{ base.tip[:12] | code }}{% elif base.diff %}, the merge base{% endif %}) → head {{ head.rev | code }} ({{ head.commit[:12] | code }}) of {{ target | code }}.
{% else %}Target: {{ target | code }}.
{% endif %}
{% if plan %}**Plan:** {{ plan.change_kind }} change, {{ plan.band }} band; runs {{ plan.runs | join(", ") if plan.runs else "nothing" }}.
{% for l in plan.left_out %}- not in plan: {{ l | md }}
{% endfor %}{% endif %}
**Findings by proof level:** reproduced {{ proof_counts.reproduced }} · exploited {{ proof_counts.exploited }} · advisory {{ proof_counts.advisory }} · tool {{ proof_counts.tool }}
{% if not findings %}
No finding.
{% endif %}
{% for f in findings %}
{% if f.package %}
### {{ f.proof_level | code }} {{ f.package.name | md }} {{ f.package.new_version | md }} — {{ f.advisory.id | md }}{% if f.kind != "vulnerability" %} ({{ f.kind }}){% endif %}

{% if f.advisory.summary %}{{ f.advisory.summary | md }}

{% endif %}| | |
|---|---|
| Proof | {{ f.proof_level | cell }} |
| Package | {{ f.package.ecosystem }} {{ f.package.name | cell }} {% if f.package.old_version %}{{ f.package.old_version | md }} → {% endif %}{{ f.package.new_version | md }} ({{ f.package.dependency | dependency }}{% if f.package.dev %}, dev{% endif %}) |
| Where | {{ f.location.path | cell }}{% if f.location.line %} line {{ f.location.line }}{% endif %} |
| Advisory | {{ f.advisory.id | md }}{% if f.advisory.aliases %} ({{ f.advisory.aliases | join(", ") | md }}){% endif %} |
{% for s in f.advisory.severity %}| Severity | {{ s.type | md }}{% if s.base_score is not none %} {{ "%.1f" | format(s.base_score) }}{% endif %} {{ s.score | cell }} |
{% endfor %}{% if f.exploited %}| Exploited | {{ f.exploited.cve | md }} is in CISA KEV{% if f.exploited.date_added %} since {{ f.exploited.date_added | md }}{% endif %} |
{% endif %}{% if f.epss %}| EPSS | {{ f.epss.cve | md }}: probability {{ "%.5f" | format(f.epss.probability) }}, percentile {{ "%.5f" | format(f.epss.percentile) }} |
{% endif %}| Fix | {% if f.fix.version %}{{ f.fix.version | cell }} ({{ f.fix.note | md }}){% else %}{{ f.fix.note | md }}{% endif %} |
{% if f.fix.proposed %}| Fix to {{ f.fix.proposed.version | md }} | {% if f.fix.proposed.command %}run {{ f.fix.proposed.command | cell }}{% else %}{% for e in f.fix.proposed.edits %}{{ e.path | cell }}: {{ e.old_text | cell }} → {{ e.new_text | cell }}{% endfor %}{% endif %} ({% if f.fix.proposed.proved %}proved{% else %}not proved{% endif %}: {{ f.fix.proposed.reason | md }}) |
{% endif %}{% if f.reachability %}| Reachability | {{ f.reachability | reach | cell }} |
{% for s in f.reachability.sites %}| Reaches | {{ s.path | cell }} line {{ s.line }}{% if s.in_change %} (in the change){% endif %}: {{ s.text | cell }} |
{% endfor %}{% endif %}| Replay | {{ f.id | replay(review_id) | cell }} |

<details><summary>Evidence</summary>

{% for e in f.evidence %}- {{ e.advisory_id | md }} affected[{{ e.affected_index }}], matched by {{ e.matched | md }}:
  ```json
  {{ e.row | tojson }}
  ```
{% endfor %}
</details>
{% else %}
### {{ f.proof_level | code }} {{ f.title | md }}

{% if f.claim %}{{ f.claim | md }}

{% endif %}| | |
|---|---|
| Proof | {% if f.proof_level == "tool" %}{{ f.proof_level | cell }}: the analyzer reports it on a line the change adds and not on the base, at the same version{% else %}{{ f.proof_level | cell }}: the test fails on the change and passes on the base{% endif %} |
| Where | {{ f.location.path | cell }}{% if f.location.line %} line {{ f.location.line }}{% endif %} |
{% if f.skeptic %}| Skeptic | {{ f.skeptic.verdict }}{% if f.skeptic.refutation %} ({{ f.skeptic.refutation | md }}){% endif %}{% if f.skeptic.artifact %} (opened {{ f.skeptic.artifact | md }}){% endif %}: {{ f.skeptic.reason | md }}{% if f.skeptic.needs %}; needs: {{ f.skeptic.needs | md }}{% endif %} |
{% endif %}| Replay | {{ f.id | replay(review_id) | cell }} |
{% if f.fix_not_proved %}| Fix | fix not proved ({{ f.fix_not_proved.attempts }} {% if f.fix_not_proved.attempts == 1 %}try{% else %}tries{% endif %}): {{ f.fix_not_proved.reason | md }} |
{% endif %}{% if f.patch %}
**Proposed fix** (proved, try {{ f.patch.attempt }}: with it the test passes, {% if f.patch.no_other_tests %}and the package has no other test that runs here (its suite ran none, with the patch nor on the base){% elif f.patch.failing_on_base_too %}and the package's tests fail only where they fail on the base too ({{ f.patch.failing_on_base_too | length }}: {{ f.patch.failing_on_base_too[:5] | join(", ") | md }}{% if f.patch.failing_on_base_too | length > 5 %}, …{% endif %}){% else %}and so do the package's tests{% endif %}{% if f.patch.flaky_with_patch %}; {{ f.patch.flaky_with_patch | length }} ({{ f.patch.flaky_with_patch[:5] | join(", ") | md }}{% if f.patch.flaky_with_patch | length > 5 %}, …{% endif %}) failed in one run of the package's tests and passed in another of the same tree (with the patch, or on the base): flaky, not the patch's doing{% endif %}{% if f.patch.suite_narrowed_to %}; of the package's tests only the test files that import what the patch edits ran, its whole suite having run past suite_timeout: {{ f.patch.suite_narrowed_to | length }} ({{ f.patch.suite_narrowed_to[:5] | join(", ") | md }}{% if f.patch.suite_narrowed_to | length > 5 %}, …{% endif %}){% endif %}): {{ f.patch.explanation | md }}

{% for e in f.patch.edits %}{{ e.path | code }}:

```diff
{% for l in e.old_text | lines %}- {{ l | fenced }}
{% endfor %}{% for l in e.new_text | lines %}+ {{ l | fenced }}
{% endfor %}```
{% endfor %}{% endif %}
<details><summary>Evidence: {% if f.proof_level == "tool" %}the analyzer's runs{% else %}the test and its runs{% endif %}</summary>

{% for e in f.evidence %}{% if e.test %}{{ e.test.path | code }}:

```
{{ e.test.code | fenced }}
```
{% endif %}{% if e.run %}- {{ e.run.side }} {{ e.run.commit[:12] | code }}: {{ e.run.command | join(" ") | code }} → {{ e.run.outcome }} (exit {{ e.run.exit_code }}, {{ e.run.duration_ms }} ms, output sha256 {{ e.run.output_sha256[:16] | code }})
{% if e.tool %}  - run {{ e.run.run_id | code }}: {{ e.tool.analyzer }} ({{ e.tool.version | md }}) {% if e.tool.diagnostic %}reports {{ e.tool.diagnostic | code }}{% else %}does not report it{% endif %} [{{ e.tool.code | code }}]
{% endif %}{% endif %}{% endfor %}
</details>
{% endif %}
{% endfor %}
{% if ignored %}
### Ignored by the repository's ignore list (not counted, never failing)
{% for i in ignored %}- {{ i.finding.title | md }} ({{ i.finding.location.path | code }}): ignored by {{ i.entry | code }}{% if i.expires %} until {{ i.expires | md }}{% endif %}: {{ i.reason | md }}
{% endfor %}{% endif %}
{% if ignore_notes %}
### Ignore entries that ignore nothing
{% for n in ignore_notes %}- {{ n.entry | code }} {{ n.status }}: {{ n.detail | md }}
{% endfor %}{% endif %}
{% if suppressed %}
### Not raised again (an evidenced refutation in memory)
{% for m in suppressed %}- {{ m.claim | md }} ({{ m.path | code }}): refuted by review {{ m.refuted_by | code }} on {{ m.on | md }}, evidence: {{ m.evidence | md }} (record {{ m.record | code }})
{% endfor %}{% endif %}
{% if unproven %}{% if collapse %}
<details><summary>Unproven (not findings): {{ unproven | length }}</summary>

{% for u in unproven %}- {{ u.claim | md }}: {{ u.reason | md }}
{% endfor %}
</details>
{% else %}
### Unproven (not findings)
{% for u in unproven %}- {{ u.claim | md }}: {{ u.reason | md }}
{% endfor %}{% endif %}{% endif %}
{% if reviewers %}
### The reviewers, side by side (never merged; evidence decides)
| risk | file | evidence | first reviewer | second reviewer |
|---|---|---|---|---|
{% for r in reviewers %}| {{ r.title | md }} | {{ r.path | cell }} | {{ r.outcome }} | {{ r.first.verdict }} | {{ r.second.verdict }}{% if r.second.reason %}: {{ r.second.reason | md }}{% endif %} |
{% endfor %}{% endif %}
{% if autofix %}
### Autofix: {{ autofix.verdict }}
One patch for every kept finding ({{ autofix.edits | length }} edits), each finding's evidence run again on a scratch copy of the change; nothing is committed.
{% for f in autofix.fixes %}- closed: {{ f | md }}
{% endfor %}{% for o in autofix.open %}- open: {{ o | md }}
{% endfor %}{% for n in autofix.narrowed %}- only: {{ n | md }}
{% endfor %}{% for r in autofix.runs %}- run: {{ r.command | join(" ") | code }} → {{ r.outcome }}
{% endfor %}{% if autofix.diff %}
{% if autofix.verdict == "rejected" %}The rejected patch, kept for the record (not a fix){% else %}The patch, as suggested changes{% endif %} (an indented block: no line of it can close a fence):

{{ autofix.diff | indent(4, true) }}
{% endif %}{% endif %}
{% if coverage %}
### Coverage: {{ coverage.verdict }} (the auditor, shown the manifests, never the findings)
| surface | status | detail | probe |
|---|---|---|---|
{% for s in coverage.surfaces %}| {{ s.surface | cell }} | {{ s.status }} | {{ s.detail | md }} | {% if s.probe %}{{ s.probe | md }}{% endif %} |
{% endfor %}{% endif %}
{% if failed_services %}
### Failed services: this review is incomplete
{% for s in failed_services %}- **{{ s.service | md }}**: {{ s.message | md }}
{% endfor %}{% endif %}
{% if input_errors %}
### Inputs that could not be read
{% for e in input_errors %}- {{ e.path | code }}{% if e.line %} line {{ e.line }}{% endif %}{% if e.side %} ({{ e.side }}){% endif %}: {{ e.message | md }}
{% endfor %}{% endif %}
{% if not_seen %}
### What this review could not see
{% for n in not_seen %}- {{ n.what | md }}: {{ n.reason | md }}
{% endfor %}{% endif %}
{% if left_out %}
### Left out of the trees
{% for l in left_out %}- {{ l.path | code }} ({{ l.reason | md }})
{% endfor %}{% endif %}"#;

/// Escapes text from advisories and changes so it cannot open Markdown or HTML structure
/// (a summary is third-party data; a PR comment must show it, not execute it).
pub(crate) fn md_escape(value: String) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            // `@name` would notify a user or a team: a word joiner after the `@` shows the
            // same text and mentions nobody.
            '@' => out.push_str("@\u{2060}"),
            _ => out.push(c),
        }
    }
    unlink(&out)
}

/// Text in which GitHub's autolinks (`http://`, `https://`, `www.`, and any other
/// `scheme://`) make no link: a word joiner after the scheme's colon and after `www`
/// shows the same characters and links nowhere. Markdown link syntax is escaped apart.
pub(crate) fn unlink(text: &str) -> String {
    let mut out = text.replace("://", ":\u{2060}//");
    for www in ["www.", "WWW.", "Www."] {
        out = out.replace(www, &format!("{}\u{2060}.", &www[..3]));
    }
    out
}

/// Text as one inline code span that nothing inside can close: the fence is one backtick
/// longer than the longest run of backticks in it (CommonMark's rule), line breaks become
/// spaces (a blank line would end the span's paragraph), and a value that starts or ends
/// with a backtick is padded so the fence stays whole. A path or a command is the change's
/// text: in a pull-request comment it must show, never open markup.
pub fn code_span(value: &str) -> String {
    let one_line = value.replace(['\n', '\r'], " ");
    let longest = one_line
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if one_line.is_empty() || one_line.starts_with('`') || one_line.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{one_line}{pad}{fence}")
}

fn code(value: minijinja::Value) -> String {
    code_span(&value.to_string())
}

/// A code span inside a table cell: GitHub splits a row at every `|` before it reads code
/// spans, so each pipe is escaped (the one escape GitHub honours inside a span in a table).
fn cell(value: minijinja::Value) -> String {
    code_span(&value.to_string()).replace('|', "\\|")
}

/// Text shown inside a ``` fence: a run of three backticks in it would close the fence and
/// let the rest be read as Markdown, so each such run is broken with a zero-width space.
fn fenced(value: String) -> String {
    value.replace("```", "`\u{200b}``")
}

/// `{{ f.id | replay(review_id) }}`: the finding's `proven replay` command.
pub(crate) fn replay_filter(finding_id: String, review_id: Option<String>) -> String {
    crate::replay_command(review_id.as_deref(), &finding_id)
}

pub fn render_markdown(report: &Report) -> String {
    markdown(report, false)
}

/// The Markdown with unproven claims in a collapsed section (a pull-request comment, where
/// findings come first and what is not a finding folds away).
pub(crate) fn markdown(report: &Report, collapse: bool) -> String {
    let mut env = Environment::new();
    env.add_filter("md", md_escape);
    env.add_filter("fenced", fenced);
    env.add_filter("code", code);
    env.add_filter("cell", cell);
    env.add_filter("dependency", |kind: String| crate::dependency_words(&kind));
    env.add_filter("reach", crate::reachability::summary_filter);
    env.add_filter("replay", replay_filter);
    env.set_trim_blocks(false);
    let rendered = env
        .add_template("review.md", TEMPLATE)
        .and_then(|_| env.get_template("review.md"))
        .and_then(|t| {
            let mut ctx = serde_json::to_value(report).unwrap_or_default();
            if let Some(obj) = ctx.as_object_mut() {
                obj.insert("collapse".into(), collapse.into());
                obj.insert(
                    "kind".into(),
                    match report.kind {
                        crate::ReportKind::Review => "review".into(),
                        crate::ReportKind::Scan => "scan".into(),
                    },
                );
            }
            t.render(ctx)
        });
    match rendered {
        Ok(s) => collapse_blank_lines(&s),
        // The template is a constant: a failure here is a bug, shown rather than hidden.
        Err(e) => format!("Proven could not render Markdown: {e}\n"),
    }
}

fn collapse_blank_lines(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blank = 0;
    for line in s.lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim_start().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advisory_text_cannot_open_markup() {
        assert_eq!(
            md_escape("<script>x</script> *a*".into()),
            "\\<script\\>x\\</script\\> \\*a\\*"
        );
    }

    #[test]
    fn fenced_text_cannot_close_its_fence() {
        let shown = fenced("x\n```\n# heading".into());
        assert!(!shown.contains("```"), "{shown}");
        assert!(shown.contains("# heading"));
    }
}
