//! Grunt's task aliases, read from a Gruntfile as text: `grunt test` of a 2013–2017 project
//! is often `registerTask('test', ['jshint', 'exec:assets', 'simplemocha:full'])`, a linter
//! first, so a linter of today's release (or one the project's own code no longer
//! satisfies) aborts the run before any test does ("Aborted due to warnings"), on the base
//! and with a patch alike. The suite leaves such tasks out, as it leaves out a linter
//! `&&`-chained in an npm script ([`crate::suite`]).
//!
//! Read as text, as the CI files are ([`crate::ci_matrix`]): evaluating a Gruntfile means
//! running the project's code, and an alias is a literal list in every Gruntfile seen.

/// Grunt plugins' tasks that only read the code (grunt-contrib-jshint, grunt-eslint, ...).
const LINT_TASKS: &[&str] = &[
    "jshint",
    "jscs",
    "eslint",
    "tslint",
    "jsonlint",
    "csslint",
    "htmlhint",
    "htmllint",
    "stylelint",
    "lintspaces",
    "standard",
    "xo",
    "coffeelint",
];

/// The Gruntfiles grunt looks for, in its order.
pub(crate) const GRUNTFILES: &[&str] = &[
    "Gruntfile.js",
    "gruntfile.js",
    "Gruntfile.coffee",
    "gruntfile.coffee",
];

/// `name → tasks` of every `registerTask` whose tasks are a literal: a list
/// (`registerTask('test', ['a', 'b'])`, with or without a description before it) or a
/// string of names (`registerTask('default', 'test')`). A task registered with a function
/// is no alias and is left out.
pub(crate) fn aliases(text: &str) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("registerTask") {
        rest = &rest[at + "registerTask".len()..];
        let mut t = Tokens(rest.trim_start().strip_prefix('(').unwrap_or(rest));
        let Some(Token::Str(name)) = t.next() else {
            continue;
        };
        if t.next() != Some(Token::Comma) {
            continue;
        }
        let tasks = match t.next() {
            Some(Token::List(tasks)) => Some(tasks),
            // The alias' own names, space-separated (grunt 0.4 splits them), where the call
            // ends: `)`, or a CoffeeScript call's line end.
            Some(Token::Str(second)) if t.call_ends() => {
                Some(second.split_whitespace().map(str::to_string).collect())
            }
            // A description, then the list.
            Some(Token::Str(_)) => match (t.next(), t.next()) {
                (Some(Token::Comma), Some(Token::List(tasks))) => Some(tasks),
                _ => None,
            },
            _ => None,
        };
        if let Some(tasks) = tasks
            && !tasks.is_empty()
        {
            found.push((name, tasks));
        }
    }
    found
}

/// A `grunt …` step's program, its flags, and the tasks its task names come to through
/// the Gruntfile's aliases (`default` where it names none); None when it is no grunt step.
fn step_tasks(step: &str, gruntfile: &str) -> Option<(String, Vec<String>, Vec<String>)> {
    let words: Vec<&str> = step.split_whitespace().collect();
    let words = match words.as_slice() {
        ["npx", rest @ ..] => rest,
        rest => rest,
    };
    let (program, args) = words.split_first()?;
    if !(*program == "grunt" || program.ends_with("/grunt")) {
        return None;
    }
    let (flags, mut tasks): (Vec<&str>, Vec<&str>) = args.iter().partition(|a| a.starts_with('-'));
    if tasks.is_empty() {
        tasks.push("default");
    }
    let aliases = aliases(gruntfile);
    let mut leaves = Vec::new();
    for task in tasks {
        expand(task, &aliases, 0, &mut leaves);
    }
    Some((
        program.to_string(),
        flags.iter().map(|f| f.to_string()).collect(),
        leaves,
    ))
}

/// A `grunt …` step of a test script without the lint tasks its tasks come to, and the
/// tasks left out (`grunt jshint`); None when it is no grunt step, lints nothing, or
/// lints only (a lone linter is what the project asked for: kept).
pub(crate) fn without_lint_tasks(step: &str, gruntfile: &str) -> Option<(String, Vec<String>)> {
    let (program, flags, leaves) = step_tasks(step, gruntfile)?;
    let (lints, kept): (Vec<String>, Vec<String>) =
        leaves.into_iter().partition(|t| is_lint(t.as_str()));
    if lints.is_empty() || kept.is_empty() {
        return None;
    }
    let command = std::iter::once(program.to_string())
        .chain(flags.iter().map(|f| f.to_string()))
        .chain(kept)
        .collect::<Vec<_>>()
        .join(" ");
    Some((
        command,
        lints.iter().map(|t| format!("grunt {t}")).collect(),
    ))
}

/// Grunt plugins' tasks that run the tests (grunt-simple-mocha, grunt-mocha-test,
/// grunt-karma, grunt-contrib-nodeunit, ...).
const RUNNER_TASKS: &[&str] = &[
    "simplemocha",
    "mochaTest",
    "mochacli",
    "mocha",
    "mocha_istanbul",
    "mocha_phantomjs",
    "karma",
    "nodeunit",
    "jasmine",
    "jasmine_node",
    "jasmine_nodejs",
    "qunit",
    "tape",
    "ava",
    "jest",
    "vows",
    "intern",
    "protractor",
    "casperjs",
];

/// What a `grunt …` test step runs before its test runner's task: `grunt exec:assets` of
/// `grunt exec:assets simplemocha:full`, and those tasks (`exec:assets`); lint tasks are
/// not among them. None when the step is no grunt step, names no runner task grunt's
/// plugins are known by (a task of the project's own may run anything), or runs nothing
/// before it.
pub(crate) fn setup_tasks(step: &str, gruntfile: &str) -> Option<(String, Vec<String>)> {
    let (program, flags, leaves) = step_tasks(step, gruntfile)?;
    let runner = leaves
        .iter()
        .position(|t| RUNNER_TASKS.contains(&t.split(':').next().unwrap_or(t)))?;
    let before: Vec<String> = leaves[..runner]
        .iter()
        .filter(|t| !is_lint(t))
        .cloned()
        .collect();
    if before.is_empty() {
        return None;
    }
    let args = flags
        .iter()
        .map(|f| f.to_string())
        .chain(before.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    // grunt 0.4 has no command of its own: the preparation puts one on the run's PATH
    // (prepare-node.js `gruntCommand`), as the CI's global grunt-cli was.
    let command = format!("{program} {args}");
    Some((command, before))
}

/// The tasks `task` runs, in order: an alias' tasks in turn (to a depth of five, as a
/// Gruntfile's aliases nest), any other task itself.
fn expand(task: &str, aliases: &[(String, Vec<String>)], depth: usize, into: &mut Vec<String>) {
    match aliases.iter().find(|(name, _)| name == task) {
        Some((_, tasks)) if depth < 5 => {
            for t in tasks {
                expand(t, aliases, depth + 1, into);
            }
        }
        _ => into.push(task.to_string()),
    }
}

/// A task of a lint plugin, whole or one target of it (`jshint:files`).
fn is_lint(task: &str) -> bool {
    LINT_TASKS.contains(&task.split(':').next().unwrap_or(task))
}

#[derive(Debug, PartialEq)]
enum Token {
    Str(String),
    List(Vec<String>),
    Comma,
    /// `)`.
    End,
    /// Anything else (a function, a variable).
    Other,
}

/// The few JavaScript (or CoffeeScript) tokens a `registerTask` call's literals are made of.
struct Tokens<'a>(&'a str);

impl<'a> Tokens<'a> {
    /// The call ends here: `)` next, or (CoffeeScript) the line's end or the text's.
    fn call_ends(&self) -> bool {
        let s = self.0.trim_start_matches([' ', '\t', ';']);
        s.is_empty() || s.starts_with([')', '\n', '\r'])
    }

    fn next(&mut self) -> Option<Token> {
        let s = self.0.trim_start();
        let mut chars = s.chars();
        let token = match chars.next()? {
            q @ ('\'' | '"') => {
                let end = s[1..].find(q)? + 1;
                self.0 = &s[end + 1..];
                return Some(Token::Str(s[1..end].to_string()));
            }
            '[' => {
                let end = s.find(']')?;
                let mut items = Vec::new();
                let mut inner = Tokens(&s[1..end]);
                loop {
                    match inner.next() {
                        Some(Token::Str(item)) => items.push(item),
                        Some(Token::Comma) => {}
                        None => break,
                        Some(_) => return self.skip(s, Token::Other),
                    }
                }
                self.0 = &s[end + 1..];
                return Some(Token::List(items));
            }
            ',' => Token::Comma,
            ')' => Token::End,
            _ => return self.skip(s, Token::Other),
        };
        self.0 = &s[1..];
        Some(token)
    }

    /// `token` for the character `s` starts with, past it.
    fn skip(&mut self, s: &'a str, token: Token) -> Option<Token> {
        self.0 = &s[s.chars().next().map_or(0, char::len_utf8)..];
        Some(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bower's Gruntfile of 2014, as BugsJS' Bower-2 has it.
    const BOWER: &str = r#"
    grunt.registerTask('assets', ['exec:assets-force']);
    grunt.registerTask('test', ['jshint', 'exec:assets', 'simplemocha:full']);
    grunt.registerTask('cover', 'exec:cover');
    grunt.registerTask('default', 'test');
    grunt.registerTask('build', 'Builds it', function () { grunt.task.run(['jshint']); });
"#;

    #[test]
    fn aliases_are_the_literal_task_lists_and_names() {
        assert_eq!(
            aliases(BOWER),
            [
                ("assets".to_string(), vec!["exec:assets-force".to_string()]),
                (
                    "test".into(),
                    vec![
                        "jshint".into(),
                        "exec:assets".into(),
                        "simplemocha:full".into()
                    ]
                ),
                ("cover".into(), vec!["exec:cover".into()]),
                ("default".into(), vec!["test".into()]),
            ]
        );
        let coffee = "grunt.registerTask 'test', 'Runs the tests', ['coffeelint', 'mochaTest']\ngrunt.registerTask 'default', ['test']\n";
        assert_eq!(
            aliases(coffee),
            [
                (
                    "test".to_string(),
                    vec!["coffeelint".to_string(), "mochaTest".to_string()]
                ),
                ("default".into(), vec!["test".into()]),
            ]
        );
        assert_eq!(
            aliases("grunt.registerTask(\"ci\", \"jshint  mochaTest\")"),
            [(
                "ci".to_string(),
                vec!["jshint".to_string(), "mochaTest".to_string()]
            )]
        );
    }

    #[test]
    fn what_a_grunt_step_runs_before_its_runner_task_is_its_setup() {
        // Bower: the fixtures' task, after the linter and before the mocha task.
        let setup = |step: &str, file: &str| setup_tasks(step, file);
        let assets = "grunt exec:assets";
        assert_eq!(
            setup("grunt test", BOWER),
            Some((assets.to_string(), vec!["exec:assets".to_string()]))
        );
        assert_eq!(
            setup("grunt exec:assets simplemocha:full", BOWER),
            Some((assets.to_string(), vec!["exec:assets".to_string()]))
        );
        // Nothing before the runner, or no runner grunt's plugins are known by: no setup.
        let lint_then_test = "grunt.registerTask('test', ['jshint', 'mochaTest']);";
        assert_eq!(setup("grunt test", lint_then_test), None);
        let own = "grunt.registerTask('test', ['build', 'test:unit']);";
        assert_eq!(setup("grunt test", own), None);
        assert_eq!(setup("mocha test/", BOWER), None);
    }

    #[test]
    fn a_grunt_step_runs_its_tasks_without_the_lint_tasks_through_its_aliases() {
        assert_eq!(
            without_lint_tasks("grunt test", BOWER),
            Some((
                "grunt exec:assets simplemocha:full".to_string(),
                vec!["grunt jshint".to_string()]
            ))
        );
        // The default task, through an alias of an alias; flags kept.
        assert_eq!(
            without_lint_tasks("npx grunt --stack", BOWER),
            Some((
                "grunt --stack exec:assets simplemocha:full".to_string(),
                vec!["grunt jshint".to_string()]
            ))
        );
        let targets = "grunt.registerTask('test', ['jshint:lib', 'jscs', 'mochaTest:unit']);";
        assert_eq!(
            without_lint_tasks("grunt test", targets),
            Some((
                "grunt mochaTest:unit".to_string(),
                vec!["grunt jshint:lib".to_string(), "grunt jscs".to_string()]
            ))
        );
        // Nothing to leave out, only lints, or no grunt: None.
        assert_eq!(without_lint_tasks("grunt cover", BOWER), None);
        assert_eq!(
            without_lint_tasks("grunt lint", "grunt.registerTask('lint', ['jshint']);"),
            None
        );
        assert_eq!(without_lint_tasks("mocha test", BOWER), None);
        // A task defined by a function is not looked into: kept as it is.
        assert_eq!(without_lint_tasks("grunt build", BOWER), None);
    }
}
