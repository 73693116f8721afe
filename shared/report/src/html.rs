//! HTML (a page a browser shows, e.g. the service's report page). Rendered from a template
//! with HTML auto-escaping: advisory text, claims and test code are third-party data and
//! must never become markup.

use minijinja::{AutoEscape, Environment};

use crate::Report;

const TEMPLATE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Proven {{ kind }} {{ review_id or "" }}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#1b1f23}
.level{font-weight:600;padding:1px 6px;border-radius:4px;font-family:monospace}
.reproduced{background:#b60205;color:#fff}.exploited{background:#d93f0b;color:#fff}
.advisory{background:#fbca04}.tool{background:#0e8a16;color:#fff}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
pre{background:#f6f8fa;padding:8px;overflow-x:auto}section{margin:1.5em 0}
</style></head><body>
<h1>Proven {{ kind }}: {{ status }}</h1>
<p>{% if base and head %}Base <code>{{ base.rev }}</code> ({{ base.commit[:12] }}{% if base.diff == "two-dot" %}, two-dot: the base as named{% elif base.diff and base.tip %}, the merge base; <code>{{ base.rev }}</code> itself is at {{ base.tip[:12] }}{% elif base.diff %}, the merge base{% endif %}) → head <code>{{ head.rev }}</code> ({{ head.commit[:12] }}) of {% endif %}<code>{{ target }}</code></p>
{% if plan %}<p><strong>Plan:</strong> {{ plan.change_kind }} change, {{ plan.band }} band; runs {{ plan.runs | join(", ") if plan.runs else "nothing" }}.</p>
{% if plan.left_out %}<ul>{% for l in plan.left_out %}<li>not in plan: {{ l }}</li>{% endfor %}</ul>{% endif %}{% endif %}
<p><strong>Findings by proof level:</strong> reproduced {{ proof_counts.reproduced }} · exploited {{ proof_counts.exploited }} · advisory {{ proof_counts.advisory }} · tool {{ proof_counts.tool }}</p>
{% if not findings %}<p>No finding.</p>{% endif %}
{% for f in findings %}<section>
<h2><span class="level {{ f.proof_level }}">{{ f.proof_level }}</span> {{ f.title }}</h2>
<table>
<tr><th>Where</th><td><code>{{ f.location.path }}</code>{% if f.location.line %} line {{ f.location.line }}{% endif %}</td></tr>
{% if f.claim %}<tr><th>Claim</th><td>{{ f.claim }}</td></tr>{% endif %}
{% if f.package %}<tr><th>Package</th><td>{{ f.package.ecosystem }} <code>{{ f.package.name }}</code> {% if f.package.old_version %}{{ f.package.old_version }} → {% endif %}{{ f.package.new_version }} ({{ f.package.dependency | dependency }})</td></tr>{% endif %}
{% if f.advisory %}<tr><th>Advisory</th><td>{{ f.advisory.id }}{% if f.advisory.aliases %} ({{ f.advisory.aliases | join(", ") }}){% endif %}{% if f.advisory.summary %}: {{ f.advisory.summary }}{% endif %}</td></tr>{% endif %}
{% if f.exploited %}<tr><th>Exploited</th><td>{{ f.exploited.cve }} is in CISA KEV</td></tr>{% endif %}
{% if f.epss %}<tr><th>EPSS</th><td>{{ f.epss.cve }}: {{ "%.5f" | format(f.epss.probability) }} (percentile {{ "%.5f" | format(f.epss.percentile) }})</td></tr>{% endif %}
{% if f.fix %}<tr><th>Fix</th><td>{% if f.fix.version %}<code>{{ f.fix.version }}</code> ({{ f.fix.note }}){% else %}{{ f.fix.note }}{% endif %}</td></tr>{% endif %}
{% if f.reachability %}<tr><th>Reachability</th><td>{{ f.reachability | reach }}{% for s in f.reachability.sites %}<p><code>{{ s.path }}</code> line {{ s.line }}{% if s.in_change %} (in the change){% endif %}: <code>{{ s.text }}</code></p>{% endfor %}</td></tr>{% endif %}
{% if f.fix and f.fix.proposed %}<tr><th>Fix to {{ f.fix.proposed.version }}</th><td>{% if f.fix.proposed.command %}run <code>{{ f.fix.proposed.command }}</code>{% else %}{% for e in f.fix.proposed.edits %}<p><code>{{ e.path }}</code></p><pre class="diff">- {{ e.old_text }}
+ {{ e.new_text }}</pre>{% endfor %}{% endif %} ({% if f.fix.proposed.proved %}proved{% else %}not proved{% endif %}: {{ f.fix.proposed.reason }})</td></tr>{% endif %}
{% if f.skeptic %}<tr><th>Skeptic</th><td>{{ f.skeptic.verdict }}{% if f.skeptic.refutation %} ({{ f.skeptic.refutation }}){% endif %}{% if f.skeptic.artifact %} (opened {{ f.skeptic.artifact }}){% endif %}: {{ f.skeptic.reason }}{% if f.skeptic.needs %}; needs: {{ f.skeptic.needs }}{% endif %}</td></tr>{% endif %}
{% if f.fix_not_proved %}<tr><th>Fix</th><td>fix not proved ({{ f.fix_not_proved.attempts }} {% if f.fix_not_proved.attempts == 1 %}try{% else %}tries{% endif %}): {{ f.fix_not_proved.reason }}</td></tr>{% endif %}
{% if f.patch %}<tr><th>Proposed fix</th><td>proved (try {{ f.patch.attempt }}): with it the test passes, {% if f.patch.no_other_tests %}and the package has no other test that runs here (its suite ran none, with the patch nor on the base){% elif f.patch.failing_on_base_too %}and the package's tests fail only where they fail on the base too ({{ f.patch.failing_on_base_too | length }}: {{ f.patch.failing_on_base_too[:5] | join(", ") }}{% if f.patch.failing_on_base_too | length > 5 %}, …{% endif %}){% else %}and so do the package's tests{% endif %}{% if f.patch.flaky_with_patch %}; {{ f.patch.flaky_with_patch | length }} ({{ f.patch.flaky_with_patch[:5] | join(", ") }}{% if f.patch.flaky_with_patch | length > 5 %}, …{% endif %}) failed in one run of the package's tests and passed in another of the same tree (with the patch, or on the base): flaky, not the patch's doing{% endif %}{% if f.patch.suite_narrowed_to %}; of the package's tests only the test files that import what the patch edits ran, its whole suite having run past suite_timeout: {{ f.patch.suite_narrowed_to | length }} ({{ f.patch.suite_narrowed_to[:5] | join(", ") }}{% if f.patch.suite_narrowed_to | length > 5 %}, …{% endif %}){% endif %}: {{ f.patch.explanation }}{% for e in f.patch.edits %}<p><code>{{ e.path }}</code></p><pre class="diff">- {{ e.old_text }}
+ {{ e.new_text }}</pre>{% endfor %}</td></tr>{% endif %}
<tr><th>Replay</th><td><code>{{ f.id | replay(review_id) }}</code></td></tr>
</table>
{% for e in f.evidence %}{% if e.test %}<p>Test <code>{{ e.test.path }}</code>:</p><pre>{{ e.test.code }}</pre>{% endif %}
{% if e.run %}<p>{{ e.run.side }} <code>{{ e.run.commit[:12] }}</code>: <code>{{ e.run.command | join(" ") }}</code> → {{ e.run.outcome }} (exit {{ e.run.exit_code }}, {{ e.run.duration_ms }} ms, output sha256 <code>{{ e.run.output_sha256[:16] }}</code>)</p>{% endif %}
{% if e.tool %}<p class="tool">run <code>{{ e.run.run_id }}</code>: {{ e.tool.analyzer }} ({{ e.tool.version }}) {% if e.tool.diagnostic %}reports <code>{{ e.tool.diagnostic }}</code>{% else %}does not report it{% endif %} [{{ e.tool.code }}]</p>{% endif %}
{% if e.row %}<details><summary>{{ e.advisory_id }} affected[{{ e.affected_index }}], matched by {{ e.matched }}</summary><pre>{{ e.row | tojson }}</pre></details>{% endif %}{% endfor %}
</section>{% endfor %}
{% if ignored %}<h2>Ignored by the repository's ignore list (not counted, never failing)</h2><ul>{% for i in ignored %}<li>{{ i.finding.title }} (<code>{{ i.finding.location.path }}</code>): ignored by <code>{{ i.entry }}</code>{% if i.expires %} until {{ i.expires }}{% endif %}: {{ i.reason }}</li>{% endfor %}</ul>{% endif %}
{% if ignore_notes %}<h2>Ignore entries that ignore nothing</h2><ul>{% for n in ignore_notes %}<li><code>{{ n.entry }}</code> {{ n.status }}: {{ n.detail }}</li>{% endfor %}</ul>{% endif %}
{% if suppressed %}<h2>Not raised again (an evidenced refutation in memory)</h2><ul>{% for m in suppressed %}<li>{{ m.claim }} (<code>{{ m.path }}</code>): refuted by review <code>{{ m.refuted_by }}</code> on {{ m.on }}, evidence: {{ m.evidence }} (record <code>{{ m.record }}</code>)</li>{% endfor %}</ul>{% endif %}
{% if unproven %}<h2>Unproven (not findings)</h2><ul>{% for u in unproven %}<li>{{ u.claim }}: {{ u.reason }}</li>{% endfor %}</ul>{% endif %}
{% if reviewers %}<h2>The reviewers, side by side (never merged; evidence decides)</h2><table><tr><th>Risk</th><th>File</th><th>Evidence</th><th>First reviewer</th><th>Second reviewer</th></tr>{% for r in reviewers %}<tr><td>{{ r.title }}</td><td><code>{{ r.path }}</code></td><td>{{ r.outcome }}</td><td>{{ r.first.verdict }}</td><td>{{ r.second.verdict }}{% if r.second.reason %}: {{ r.second.reason }}{% endif %}</td></tr>{% endfor %}</table>{% endif %}
{% if autofix %}<h2>Autofix: {{ autofix.verdict }}</h2><p>One patch for every kept finding ({{ autofix.edits | length }} edits), each finding's evidence run again on a scratch copy of the change; nothing is committed.</p><ul>{% for f in autofix.fixes %}<li>closed: {{ f }}</li>{% endfor %}{% for o in autofix.open %}<li>open: {{ o }}</li>{% endfor %}{% for n in autofix.narrowed %}<li>only: {{ n }}</li>{% endfor %}{% for r in autofix.runs %}<li>run: <code>{{ r.command | join(" ") }}</code> → {{ r.outcome }}</li>{% endfor %}</ul>{% endif %}
{% if coverage %}<h2>Coverage: {{ coverage.verdict }} (the auditor, shown the manifests, never the findings)</h2><table><tr><th>Surface</th><th>Status</th><th>Detail</th><th>Probe</th></tr>{% for s in coverage.surfaces %}<tr><td><code>{{ s.surface }}</code></td><td>{{ s.status }}</td><td>{{ s.detail }}</td><td>{% if s.probe %}{{ s.probe }}{% endif %}</td></tr>{% endfor %}</table>{% endif %}
{% if failed_services %}<h2>Failed services: this review is incomplete</h2><ul>{% for s in failed_services %}<li><strong>{{ s.service }}</strong>: {{ s.message }}</li>{% endfor %}</ul>{% endif %}
{% if input_errors %}<h2>Inputs that could not be read</h2><ul>{% for e in input_errors %}<li><code>{{ e.path }}</code>{% if e.line %} line {{ e.line }}{% endif %}: {{ e.message }}</li>{% endfor %}</ul>{% endif %}
{% if not_seen %}<h2>What this review could not see</h2><ul>{% for n in not_seen %}<li>{{ n.what }}: {{ n.reason }}</li>{% endfor %}</ul>{% endif %}
{% if left_out %}<h2>Left out of the trees</h2><ul>{% for l in left_out %}<li><code>{{ l.path }}</code> ({{ l.reason }})</li>{% endfor %}</ul>{% endif %}
</body></html>
"#;

pub fn render_html(report: &Report) -> String {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.add_filter("dependency", |kind: String| crate::dependency_words(&kind));
    env.add_filter("reach", crate::reachability::summary_filter);
    env.add_filter("replay", crate::markdown::replay_filter);
    let rendered = env
        .add_template("review.html", TEMPLATE)
        .and_then(|_| env.get_template("review.html"))
        .and_then(|t| {
            let mut ctx = serde_json::to_value(report).unwrap_or_default();
            if let Some(obj) = ctx.as_object_mut() {
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
    rendered
        .unwrap_or_else(|e| format!("<!doctype html><p>Proven could not render HTML: {e}</p>\n"))
}
