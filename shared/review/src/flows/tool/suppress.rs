//! The analyzers' own suppression rules, as their users write them: what Proven shows before
//! it lets the Skeptic refute a tool finding as `intended` or `false_positive`.

use proven_sandbox::analyzer::Analyzer;

use super::wire::Seen;

/// The analyzer's own suppression of a diagnostic, as its users write it (the comment), if
/// its line (or, for ESLint's `eslint-disable-next-line`, the line before) carries one.
pub fn suppression(analyzer: Analyzer, seen: &Seen) -> Option<String> {
    match analyzer {
        Analyzer::Eslint => eslint(&seen.diagnostic.code, &seen.text, &seen.previous),
        _ => on_line(analyzer, &seen.text),
    }
}

/// The analyzer's own suppression comment on a diagnostic's line, if it carries one: `# noqa` (bare, or naming a pyflakes `F` code) as
/// flake8 reads it around pyflakes; `//nolint` (bare, or naming `govet`) as golangci-lint
/// reads it around vet. None for clippy: it applies `#[allow]` and `#[expect]` itself, so a
/// lint it reported is not suppressed.
fn on_line(analyzer: Analyzer, line: &str) -> Option<String> {
    let (at, marker) = match analyzer {
        Analyzer::Pyflakes => (line.find('#')?, "noqa"),
        Analyzer::GoVet => (line.find("//")?, "nolint"),
        Analyzer::Clippy | Analyzer::Eslint => return None,
    };
    let comment = line[at..].trim_start_matches(['#', '/']).trim_start();
    let rest = comment.get(..marker.len())?;
    if !rest.eq_ignore_ascii_case(marker) {
        return None;
    }
    let after = &comment[marker.len()..];
    let names = match after.strip_prefix(':') {
        None if after.is_empty() || after.starts_with(char::is_whitespace) => {
            return Some(line[at..].trim().to_string());
        }
        None => return None,
        Some(names) => names,
    };
    let applies = names
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|n| !n.is_empty())
        .take_while(|n| !n.starts_with("//"))
        .any(|n| match analyzer {
            Analyzer::Pyflakes => n.starts_with(['F', 'f']),
            _ => n == "govet" || n == "all",
        });
    applies.then(|| line[at..].trim().to_string())
}

/// ESLint's disable directives for `rule`: `eslint-disable-line` in a comment on the
/// diagnostic's line, or `eslint-disable-next-line` in one on the line before, each bare
/// (every rule) or naming the rule (`// eslint-disable-line no-undef, no-console -- why`,
/// `/* eslint-disable-line */`). A parse error (code `eslint`) is never suppressed.
fn eslint(rule: &str, line: &str, previous: &str) -> Option<String> {
    if rule == "eslint" {
        return None;
    }
    directive(line, "eslint-disable-line", rule)
        .or_else(|| directive(previous, "eslint-disable-next-line", rule))
}

/// The comment on `line` that is directive `name` and applies to `rule`, if any.
fn directive(line: &str, name: &str, rule: &str) -> Option<String> {
    let starts = line.match_indices("//").chain(line.match_indices("/*"));
    for (at, opener) in starts {
        let Some(after) = line[at + 2..].trim_start().strip_prefix(name) else {
            continue;
        };
        if !(after.is_empty() || after.starts_with(char::is_whitespace) || after.starts_with("*/"))
        {
            continue;
        }
        let mut rules = after;
        if opener == "/*" {
            rules = rules.split("*/").next().unwrap_or_default();
        }
        // A description follows `--`.
        let rules = rules.split("--").next().unwrap_or_default();
        let mut names = rules.split(',').map(str::trim).filter(|n| !n.is_empty());
        let all = rules.trim().is_empty();
        if all || names.any(|n| n == rule) {
            return Some(line[at..].trim().to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use proven_sandbox::analyzer::Diagnostic;

    use super::*;

    #[test]
    fn noqa_and_nolint_on_the_line_are_pyflakes_and_go_vets_own() {
        assert_eq!(
            on_line(Analyzer::Pyflakes, "import os  # noqa").as_deref(),
            Some("# noqa")
        );
        assert!(on_line(Analyzer::Pyflakes, "import os  # noqa: F401").is_some());
        assert!(on_line(Analyzer::Pyflakes, "import os  # noqa: E501").is_none());
        assert!(on_line(Analyzer::Pyflakes, "import os  # noqa-ish").is_none());
        assert!(on_line(Analyzer::Pyflakes, "import os").is_none());
        assert!(on_line(Analyzer::GoVet, "fmt.Printf(\"%d\", s) //nolint:govet").is_some());
        assert!(on_line(Analyzer::GoVet, "fmt.Printf(\"%d\", s) //nolint:errcheck").is_none());
        assert!(on_line(Analyzer::GoVet, "fmt.Printf(\"%d\", s) // nolint").is_some());
        assert!(
            on_line(
                Analyzer::Clippy,
                "return 7; // #[allow(clippy::needless_return)]"
            )
            .is_none()
        );
    }

    fn eslint_seen(rule: &str, text: &str, previous: &str) -> Seen {
        Seen {
            diagnostic: Diagnostic {
                path: "lib/a.js".into(),
                line: 3,
                column: Some(10),
                code: rule.into(),
                message: "'undefinedThing' is not defined.".into(),
            },
            text: text.into(),
            previous: previous.into(),
        }
    }

    #[test]
    fn eslint_disable_line_and_next_line_bare_or_naming_the_rule_are_eslints_own() {
        let on = |rule: &str, text: &str, previous: &str| {
            suppression(Analyzer::Eslint, &eslint_seen(rule, text, previous))
        };
        let code = "return undefinedThing;";
        assert_eq!(
            on("no-undef", &format!("{code} // eslint-disable-line"), "").as_deref(),
            Some("// eslint-disable-line")
        );
        assert!(on("no-undef", &format!("{code} /* eslint-disable-line */"), "").is_some());
        assert!(
            on(
                "no-undef",
                &format!("{code} // eslint-disable-line no-console, no-undef -- global"),
                ""
            )
            .is_some()
        );
        assert!(
            on(
                "no-undef",
                &format!("{code} // eslint-disable-line no-console"),
                ""
            )
            .is_none()
        );
        assert!(on("no-undef", &format!("{code} // eslint-disable-line-x"), "").is_none());
        assert!(on("no-undef", code, "").is_none());
        // The line before: `eslint-disable-next-line`, not `eslint-disable-line`.
        assert_eq!(
            on("no-undef", code, "// eslint-disable-next-line no-undef").as_deref(),
            Some("// eslint-disable-next-line no-undef")
        );
        assert!(on("no-undef", code, "/* eslint-disable-next-line */").is_some());
        assert!(on("no-undef", code, "// eslint-disable-next-line no-console").is_none());
        assert!(on("no-undef", code, "x(); // eslint-disable-line").is_none());
        assert!(
            on(
                "no-undef",
                &format!("{code} // eslint-disable-next-line"),
                ""
            )
            .is_none()
        );
        // A parse error is never suppressed; nor is another analyzer's line by ESLint's rules.
        assert!(on("eslint", &format!("{code} // eslint-disable-line"), "").is_none());
        let mut py = eslint_seen("pyflakes", "import os  # eslint-disable-line", "");
        py.diagnostic.path = "a.py".into();
        assert!(suppression(Analyzer::Pyflakes, &py).is_none());
    }
}
