//! The tool evidence's rule, pure: a diagnostic of the change's run is a `tool` finding when
//! it sits on a line the change adds and the base's run, of the same analyzer at the same
//! version, reports nothing with the same file, code, message and line text (lines move;
//! their text is what both sides share). Runs that did not both finish, or ran different
//! versions, prove nothing and are named in what the review could not see.

use std::collections::HashSet;

use proven_report::{
    Evidence, Finding, FindingKind, Level, Location, NotSeen, SkepticRef, ToolRef, Unproven,
};
use proven_sandbox::analyzer::Analyzer;
use sha2::{Digest, Sha256};

use super::suppress::suppression;
use super::wire::{Seen, SkepticToolResult, ToolRefutation, ToolResult, ToolSays};
use crate::core::step_name::Name;
use crate::core::wire::{SkepticResult, SkepticVerdict, names_a_shown_artifact};

/// What the rule makes of one analyzer's runs.
#[derive(Debug, Default)]
pub struct ToolVerdict {
    pub findings: Vec<Finding>,
    pub not_seen: Vec<NotSeen>,
    /// Findings the Skeptic refuted with the analyzer's own suppression on their line.
    pub unproven: Vec<Unproven>,
}

/// The lines `head` adds to `base` (1-based, on `head`): inserted or replaced lines of a
/// line diff.
pub fn added_lines(base: &str, head: &str) -> Vec<u32> {
    let diff = similar::TextDiff::from_lines(base, head);
    let mut out = Vec::new();
    for op in diff.ops() {
        if let similar::DiffOp::Insert {
            new_index, new_len, ..
        }
        | similar::DiffOp::Replace {
            new_index, new_len, ..
        } = *op
        {
            out.extend((new_index..new_index + new_len).map(|i| i as u32 + 1));
        }
    }
    out
}

/// A diagnostic's identity across the two sides: file, code, message (line numbers it
/// quotes taken out: `redefinition of unused 'x' from line 3`) and the line's text.
fn key(s: &Seen) -> (String, String, String, String) {
    let d = &s.diagnostic;
    (
        d.path.clone(),
        d.code.clone(),
        without_line_numbers(&d.message),
        s.text.clone(),
    )
}

fn without_line_numbers(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(at) = rest.find("line ") {
        let (before, after) = rest.split_at(at + "line ".len());
        out.push_str(before);
        rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// The change's diagnostics the rule keeps: on an added line, and not on the base.
pub fn new_diagnostics(r: &ToolResult) -> Vec<&Seen> {
    let on_base: HashSet<_> = r.base.diagnostics.iter().map(key).collect();
    let mut seen = HashSet::new();
    r.change
        .diagnostics
        .iter()
        .filter(|s| {
            r.added
                .get(&s.diagnostic.path)
                .is_some_and(|lines| lines.contains(&s.diagnostic.line))
        })
        .filter(|s| !on_base.contains(&key(s)))
        // The same diagnostic twice (two targets of one file) is one finding.
        .filter(|s| seen.insert((key(s), s.diagnostic.line)))
        .collect()
}

/// Why the runs prove nothing, if they do not.
fn unproved(r: &ToolResult) -> Option<String> {
    if let Some(why) = &r.not_run {
        return Some(why.clone());
    }
    for (side, run) in [("base", &r.base), ("change", &r.change)] {
        if let Some(why) = &run.unfinished {
            return Some(format!("the {side}'s run: {why}"));
        }
    }
    // A diagnostic the base's run never looked for is no new diagnostic.
    if r.base.scope != r.change.scope {
        let said = |s: &Option<String>| s.clone().unwrap_or_else(|| "everything".into());
        return Some(format!(
            "the two runs analysed different targets (base: {}; change: {})",
            said(&r.base.scope),
            said(&r.change.scope)
        ));
    }
    match (&r.base.version, &r.change.version) {
        (Some(b), Some(c)) if b == c => None,
        (b, c) => Some(format!(
            "the two runs had different versions (base {}, change {})",
            b.as_deref().unwrap_or("none"),
            c.as_deref().unwrap_or("none")
        )),
    }
}

/// The rule over one `sandbox.tool` result and, when it ran, its Skeptic's settled word: a
/// refutation Proven showed makes the finding unproven; any other word is shown with it.
pub fn judge_tool(r: &ToolResult, skeptic: Option<&SkepticToolResult>) -> ToolVerdict {
    let mut verdict = ToolVerdict::default();
    if let Some(reason) = unproved(r) {
        verdict.not_seen.push(NotSeen {
            what: format!("tool evidence ({})", r.analyzer.words()),
            reason,
        });
        return verdict;
    }
    // Both runs analysed less than the whole unit (clippy without benches that need
    // nightly): what they left out is named, never passed over as clean.
    if let Some(scope) = &r.change.scope {
        verdict.not_seen.push(NotSeen {
            what: format!(
                "tool evidence ({}) beyond what it analysed",
                r.analyzer.words()
            ),
            reason: format!("on both sides it analysed {scope}"),
        });
    }
    for s in new_diagnostics(r) {
        let mut f = finding(r, s);
        let said = skeptic
            .and_then(|k| k.verdicts.iter().find(|(id, _)| *id == f.id))
            .map(|(_, v)| v);
        match said {
            Some(v) if v.verdict == SkepticVerdict::Refuted => verdict.unproven.push(Unproven {
                claim: f.title.clone(),
                reason: format!(
                    "refuted by the Skeptic ({}), shown by Proven: {}",
                    v.refutation.as_deref().unwrap_or_default(),
                    v.reason
                ),
                runs: f.evidence.iter().filter_map(|e| e.run.clone()).collect(),
            }),
            Some(v) => {
                f.skeptic = Some(skeptic_ref(v));
                verdict.findings.push(f);
            }
            None => verdict.findings.push(f),
        }
    }
    verdict
}

/// A kept diagnostic as a finding: proof level `tool`, both runs as evidence.
fn finding(r: &ToolResult, s: &Seen) -> Finding {
    let d = &s.diagnostic;
    let version = r.change.version.clone().unwrap_or_default();
    let diagnostic = match d.column {
        Some(col) => format!("{}:{}:{col}: {}", d.path, d.line, d.message),
        None => format!("{}:{}: {}", d.path, d.line, d.message),
    };
    let evidence = [(&r.base, None), (&r.change, Some(diagnostic))]
        .into_iter()
        .map(|(side, diagnostic)| Evidence {
            kind: "tool_run".into(),
            advisory_id: None,
            affected_index: None,
            matched: None,
            row: None,
            run: side.run.clone(),
            test: None,
            tool: Some(ToolRef {
                analyzer: r.analyzer.words().into(),
                version: version.clone(),
                code: d.code.clone(),
                diagnostic,
            }),
        })
        .collect();
    Finding {
        id: finding_id(r, s),
        proof_level: Level::Tool,
        kind: FindingKind::Defect,
        title: format!("{}: {}", r.analyzer.words(), d.message),
        package: None,
        location: Location {
            path: d.path.clone(),
            line: Some(d.line),
        },
        advisory: None,
        exploited: None,
        epss: None,
        fix: None,
        claim: Some(format!(
            "{} reports it on a line the change adds ({}), and not on the base: {}",
            r.analyzer.words(),
            d.code,
            s.text
        )),
        skeptic: None,
        patch: None,
        fix_not_proved: None,
        reachability: None,
        evidence,
    }
}

/// A finding's id: the analyzer, the file, and the diagnostic's identity across sides.
pub fn finding_id(r: &ToolResult, s: &Seen) -> String {
    let (path, code, message, text) = key(s);
    let id = hex::encode(Sha256::digest(
        format!("{}\n{path}\n{code}\n{message}\n{text}", r.analyzer.name()).as_bytes(),
    ));
    format!("tool:{path}:{}", &id[..16])
}

/// What Proven makes of the Skeptic's word on one finding: a refutation from the closed list
/// holds only when the finding's line carries the analyzer's own suppression of it; a
/// concession must name a run it was shown (`runs`).
pub fn settle(
    analyzer: Analyzer,
    seen: &Seen,
    says: Option<&ToolSays>,
    runs: &[String],
) -> SkepticResult {
    let mut out = SkepticResult {
        verdict: SkepticVerdict::Unresolved,
        reason: "the Skeptic said nothing of it".into(),
        artifact: None,
        test: None,
        refutation: None,
        needs: None,
    };
    let Some(says) = says else {
        return out;
    };
    out.reason = says.said.reason.clone();
    out.artifact = says.said.artifact.clone().filter(|a| !a.trim().is_empty());
    out.refutation = says.refutation.map(|r| r.as_str().to_string());
    out.verdict = match (SkepticVerdict::parse(&says.said.verdict), says.refutation) {
        (
            Some(SkepticVerdict::Refuted),
            Some(ToolRefutation::Intended | ToolRefutation::FalsePositive),
        ) => match suppression(analyzer, seen) {
            Some(mark) => {
                out.reason = format!(
                    "{}; its line carries the analyzer's own suppression: {mark}",
                    out.reason
                );
                SkepticVerdict::Refuted
            }
            None => {
                out.reason = format!(
                    "{} (not shown: its line carries no suppression of it)",
                    out.reason
                );
                SkepticVerdict::RefutedWithoutEvidence
            }
        },
        (Some(SkepticVerdict::Refuted | SkepticVerdict::RefutedWithoutEvidence), _) => {
            SkepticVerdict::RefutedWithoutEvidence
        }
        (Some(SkepticVerdict::Conceded), _)
            if out
                .artifact
                .as_deref()
                .is_some_and(|a| names_a_shown_artifact(a, runs)) =>
        {
            SkepticVerdict::Conceded
        }
        _ => SkepticVerdict::Unresolved,
    };
    out
}

fn skeptic_ref(s: &SkepticResult) -> SkepticRef {
    SkepticRef {
        verdict: <&str>::from(s.verdict).to_string(),
        reason: s.reason.clone(),
        artifact: s.artifact.clone(),
        refutation: s.refutation.clone(),
        needs: s.needs.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proven_sandbox::analyzer::{Analyzer, Diagnostic};

    use super::*;
    use crate::flows::tool::wire::ToolSide;

    fn seen(path: &str, line: u32, message: &str, text: &str) -> Seen {
        Seen {
            diagnostic: Diagnostic {
                path: path.into(),
                line,
                column: Some(1),
                code: "pyflakes".into(),
                message: message.into(),
            },
            text: text.into(),
            previous: String::new(),
        }
    }

    fn side(diagnostics: Vec<Seen>) -> ToolSide {
        ToolSide {
            run: None,
            version: Some("pyflakes 3.2.0".into()),
            diagnostics,
            unfinished: None,
            scope: None,
        }
    }

    fn result(base: Vec<Seen>, change: Vec<Seen>, added: &[u32]) -> ToolResult {
        ToolResult {
            analyzer: Analyzer::Pyflakes,
            base: side(base),
            change: side(change),
            added: BTreeMap::from([("a.py".to_string(), added.to_vec())]),
            not_run: None,
        }
    }

    #[test]
    fn a_diagnostic_on_an_added_line_that_the_base_lacks_is_a_tool_finding_with_both_runs() {
        let r = result(
            Vec::new(),
            vec![seen("a.py", 1, "'os' imported but unused", "import os")],
            &[1],
        );
        let v = judge_tool(&r, None);
        assert_eq!(v.findings.len(), 1, "{v:?}");
        let f = &v.findings[0];
        assert_eq!(f.proof_level, Level::Tool);
        assert_eq!(f.evidence.len(), 2);
        let tools: Vec<_> = f.evidence.iter().filter_map(|e| e.tool.as_ref()).collect();
        assert_eq!(tools[0].diagnostic, None);
        assert_eq!(
            tools[1].diagnostic.as_deref(),
            Some("a.py:1:1: 'os' imported but unused")
        );
        assert_eq!(tools[1].version, "pyflakes 3.2.0");
    }

    #[test]
    fn the_same_diagnostic_on_the_base_gives_none_wherever_its_line_moved() {
        let base = vec![seen("a.py", 3, "undefined name 'x'", "return x")];
        let change = vec![seen("a.py", 9, "undefined name 'x'", "return x")];
        assert!(
            judge_tool(&result(base, change, &[9]), None)
                .findings
                .is_empty()
        );
        // The same message on another line's text is another diagnostic.
        let base = vec![seen("a.py", 3, "undefined name 'x'", "return x")];
        let change = vec![seen("a.py", 9, "undefined name 'x'", "print(x)")];
        assert_eq!(
            judge_tool(&result(base, change, &[9]), None).findings.len(),
            1
        );
        // A line number the message quotes does not make it another.
        let base = vec![seen(
            "a.py",
            3,
            "redefinition of unused 'x' from line 1",
            "x = 2",
        )];
        let change = vec![seen(
            "a.py",
            5,
            "redefinition of unused 'x' from line 2",
            "x = 2",
        )];
        assert!(
            judge_tool(&result(base, change, &[5]), None)
                .findings
                .is_empty()
        );
    }

    #[test]
    fn a_diagnostic_on_a_line_the_change_does_not_add_gives_none() {
        let change = vec![seen("a.py", 2, "'os' imported but unused", "import os")];
        assert!(
            judge_tool(&result(Vec::new(), change, &[1, 3]), None)
                .findings
                .is_empty()
        );
    }

    #[test]
    fn unfinished_runs_or_different_versions_prove_nothing_and_are_named() {
        let change = vec![seen("a.py", 1, "'os' imported but unused", "import os")];
        let mut r = result(Vec::new(), change.clone(), &[1]);
        r.base.unfinished = Some("pyflakes did not finish".into());
        let v = judge_tool(&r, None);
        assert!(v.findings.is_empty());
        assert!(v.not_seen[0].reason.contains("the base's run"), "{v:?}");
        let mut r = result(Vec::new(), change, &[1]);
        r.change.version = Some("pyflakes 3.3.0".into());
        let v = judge_tool(&r, None);
        assert!(v.findings.is_empty());
        assert!(v.not_seen[0].reason.contains("different versions"), "{v:?}");
        // clippy without the benches on one side only: the base never looked where the
        // change's diagnostic is.
        let change = vec![seen("a.py", 1, "'os' imported but unused", "import os")];
        let mut r = result(Vec::new(), change, &[1]);
        r.change.scope = Some("every target but the benches".into());
        let v = judge_tool(&r, None);
        assert!(v.findings.is_empty());
        assert!(
            v.not_seen[0]
                .reason
                .contains("different targets (base: everything; change: every target but"),
            "{v:?}"
        );
        // The same narrowing on both sides: the finding stands, and what was left out is
        // named.
        let change = vec![seen("a.py", 1, "'os' imported but unused", "import os")];
        let mut r = result(Vec::new(), change, &[1]);
        r.base.scope = Some("every target but the benches".into());
        r.change.scope = r.base.scope.clone();
        let v = judge_tool(&r, None);
        assert_eq!(v.findings.len(), 1, "{v:?}");
        assert!(
            v.not_seen[0]
                .reason
                .contains("on both sides it analysed every target but the benches"),
            "{v:?}"
        );
        let v = judge_tool(&ToolResult::not_run(Analyzer::GoVet, "no sandbox"), None);
        assert_eq!(v.not_seen[0].what, "tool evidence (go vet)");
    }

    #[test]
    fn added_lines_are_the_inserted_and_replaced_lines_of_the_change() {
        let base = "a\nb\nc\n";
        let head = "a\nB\nc\nd\n";
        assert_eq!(added_lines(base, head), [2, 4]);
        assert_eq!(added_lines("", "x\n"), [1]);
        assert!(added_lines(base, base).is_empty());
    }

    #[test]
    fn a_refutation_holds_only_with_the_analyzers_own_suppression_on_the_line() {
        let says = |refutation| ToolSays {
            finding: "x".into(),
            said: crate::core::wire::SkepticSays {
                verdict: "refuted".into(),
                reason: "it is meant".into(),
                artifact: None,
            },
            refutation,
        };
        let suppressed = seen("a.py", 1, "'os' imported but unused", "import os  # noqa");
        let plain = seen("a.py", 1, "'os' imported but unused", "import os");
        let fp = says(Some(ToolRefutation::FalsePositive));
        let v = settle(Analyzer::Pyflakes, &suppressed, Some(&fp), &[]);
        assert_eq!(v.verdict, SkepticVerdict::Refuted);
        assert!(v.reason.contains("# noqa"), "{v:?}");
        let v = settle(
            Analyzer::Pyflakes,
            &plain,
            Some(&says(Some(ToolRefutation::Intended))),
            &[],
        );
        assert_eq!(v.verdict, SkepticVerdict::RefutedWithoutEvidence);
        let v = settle(
            Analyzer::Pyflakes,
            &suppressed,
            Some(&says(Some(ToolRefutation::Other))),
            &[],
        );
        assert_eq!(v.verdict, SkepticVerdict::RefutedWithoutEvidence);
        // A concession counts only naming a run it was shown.
        let mut c = says(None);
        c.said.verdict = "conceded".into();
        c.said.artifact = Some("run r-change".into());
        let shown = ["r-change".to_string()];
        assert_eq!(
            settle(Analyzer::Pyflakes, &plain, Some(&c), &shown).verdict,
            SkepticVerdict::Conceded
        );
        let other = ["r-base".to_string()];
        assert_eq!(
            settle(Analyzer::Pyflakes, &plain, Some(&c), &other).verdict,
            SkepticVerdict::Unresolved
        );
        assert_eq!(
            settle(Analyzer::Pyflakes, &plain, None, &shown).verdict,
            SkepticVerdict::Unresolved
        );
    }

    #[test]
    fn a_shown_refutation_makes_the_finding_unproven_and_any_other_word_is_shown_with_it() {
        let change = vec![seen(
            "a.py",
            1,
            "'os' imported but unused",
            "import os  # noqa",
        )];
        let r = result(Vec::new(), change, &[1]);
        let id = judge_tool(&r, None).findings[0].id.clone();
        let refuted = SkepticResult {
            verdict: SkepticVerdict::Refuted,
            reason: "shown".into(),
            artifact: None,
            test: None,
            refutation: Some("false_positive".into()),
            needs: None,
        };
        let both = |v: SkepticResult| SkepticToolResult {
            verdicts: vec![(id.clone(), v)],
        };
        let v = judge_tool(&r, Some(&both(refuted.clone())));
        assert!(v.findings.is_empty());
        assert!(v.unproven[0].reason.contains("false_positive"), "{v:?}");
        let word = SkepticResult {
            verdict: SkepticVerdict::RefutedWithoutEvidence,
            ..refuted
        };
        let v = judge_tool(&r, Some(&both(word)));
        let shown = v.findings[0].skeptic.as_ref().map(|s| s.verdict.as_str());
        assert_eq!(shown, Some("refuted_without_evidence"));
    }

    #[test]
    fn a_false_positive_on_eslint_s_finding_holds_with_the_line_before_s_directive() {
        use crate::core::wire::{SkepticSays, SkepticVerdict};
        use crate::flows::tool::wire::{ToolRefutation, ToolSays};
        let says = ToolSays {
            finding: "x".into(),
            said: SkepticSays {
                verdict: "refuted".into(),
                reason: "a global the page defines".into(),
                artifact: None,
            },
            refutation: Some(ToolRefutation::FalsePositive),
        };
        let code = "return undefinedThing;";
        let eslint_seen = |previous: &str| {
            let mut s = seen("lib/a.js", 3, "'undefinedThing' is not defined.", code);
            s.diagnostic.code = "no-undef".into();
            s.previous = previous.into();
            s
        };
        let shown = eslint_seen("// eslint-disable-next-line no-undef");
        let v = settle(Analyzer::Eslint, &shown, Some(&says), &[]);
        assert_eq!(v.verdict, SkepticVerdict::Refuted);
        assert!(
            v.reason.contains("eslint-disable-next-line no-undef"),
            "{v:?}"
        );
        let bare = eslint_seen("");
        let v = settle(Analyzer::Eslint, &bare, Some(&says), &[]);
        assert_eq!(v.verdict, SkepticVerdict::RefutedWithoutEvidence);
    }
}
