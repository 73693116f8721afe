//! nox's sessions, read for the suite a Python project documents: the `session.run` calls
//! of its test session, each read as the Python call it is.
//!
//! A noxfile is a Python program, and Proven never runs a tree's code to learn its suite.
//! What is read: the top-level functions, which of them are sessions (`@nox.session`), the
//! sessions `nox.options.sessions` names, the calls of a session's body in order (helpers
//! of the file followed, as urllib3's `test` session runs `tests_impl(session)`), and each
//! `session.run`'s arguments split as Python splits them (brackets and strings nest). An
//! argument that is not a string literal is left out, except `*(session.posargs or
//! (DEFAULT…))`, which nox runs with no arguments as its DEFAULT. Written here: no crate
//! reads Python calls without an interpreter, and a whole Python parser for this would be
//! one of the heaviest crates of the build.

use crate::python::{call_args, string_literal};

/// The command lines a session runs, the session's name, in the order nox would be asked
/// for them: the sessions `nox.options.sessions` names, then those named for tests
/// (`test`, `tests`, `test_…`), then the others in the file's order. A session's lines
/// stop where it changes directory (what it runs after is another tree's: urllib3's
/// `downstream_requests` runs requests' suite in a clone).
pub fn sessions(text: &str) -> Vec<(String, Vec<String>)> {
    let defs = functions(text);
    let named = chosen_sessions(text);
    let rank = |name: &str| {
        if let Some(at) = named.iter().position(|n| n == name) {
            return at;
        }
        let testy = name == "test" || name == "tests";
        named.len()
            + if testy {
                0
            } else if name.starts_with("test") {
                1
            } else {
                2
            }
    };
    // A file that decorates none (a decorator of its own, `nox.session(f)` called) is read
    // with every function of a session's parameter a session.
    let any = defs.iter().any(|f| f.session);
    let mut sessions: Vec<&Function> = defs
        .iter()
        .filter(|f| f.session || (!any && f.takes_session))
        .collect();
    sessions.sort_by_key(|f| rank(&f.name));
    sessions
        .into_iter()
        .map(|f| {
            let mut lines = Vec::new();
            runs(f, &defs, 0, &mut lines);
            (f.name.clone(), lines)
        })
        .collect()
}

/// A top-level function of the file: its name, whether nox runs it as a session, its body.
struct Function {
    name: String,
    session: bool,
    /// Its first parameter is `session`.
    takes_session: bool,
    body: String,
}

/// The top-level `def`s, each with the decorators written over it.
fn functions(text: &str) -> Vec<Function> {
    let mut out: Vec<Function> = Vec::new();
    let mut decorated = false;
    let mut current: Option<Function> = None;
    for line in text.lines() {
        let top = !line.is_empty() && !line.starts_with([' ', '\t', '#', ')', ']', '}']);
        if !top {
            if let Some(f) = current.as_mut() {
                f.body.push_str(line);
                f.body.push('\n');
            }
            continue;
        }
        if let Some(f) = current.take() {
            out.push(f);
        }
        if line.starts_with('@') {
            decorated |= line.starts_with("@nox.session") || line.starts_with("@session");
            continue;
        }
        let def = line
            .strip_prefix("def ")
            .or_else(|| line.strip_prefix("async def "));
        if let Some(rest) = def {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let params = rest[name.len()..].trim_start_matches('(').trim_start();
            current = Some(Function {
                takes_session: params.starts_with("session"),
                name,
                session: decorated,
                body: String::new(),
            });
        }
        decorated = false;
    }
    out.extend(current);
    out
}

/// The names `nox.options.sessions = [...]` gives, in its order.
fn chosen_sessions(text: &str) -> Vec<String> {
    let Some(at) = text.find("nox.options.sessions") else {
        return Vec::new();
    };
    let rest = &text[at..];
    let Some(open) = rest.find(['[', '(']) else {
        return Vec::new();
    };
    let inner = &rest[open + 1..];
    let Some(close) = inner.find([']', ')']) else {
        return Vec::new();
    };
    call_args(&format!("{})", &inner[..close]))
        .into_iter()
        .filter_map(string_literal)
        .map(str::to_string)
        .collect()
}

/// The command lines of `f`'s `session.run` calls in order, a helper of the file it calls
/// read in its place (three deep at most); none after it changes directory.
fn runs(f: &Function, defs: &[Function], depth: usize, lines: &mut Vec<String>) -> bool {
    let body = f.body.as_str();
    let mut events: Vec<(usize, Event)> = Vec::new();
    for (at, _) in body.match_indices("session.run(") {
        events.push((at, Event::Run));
    }
    for call in ["session.cd(", "session.chdir(", "os.chdir("] {
        events.extend(body.match_indices(call).map(|(at, _)| (at, Event::Cd)));
    }
    for (i, d) in defs.iter().enumerate() {
        let call = format!("{}(", d.name);
        for (at, _) in body.match_indices(&call) {
            let before = body[..at].chars().next_back();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                events.push((at, Event::Helper(i)));
            }
        }
    }
    events.sort_by_key(|(at, _)| *at);
    for (at, event) in events {
        match event {
            Event::Cd => return false,
            Event::Run => {
                let args = call_args(&body[at + "session.run(".len()..]);
                let words: Vec<String> = args.into_iter().flat_map(argument).collect();
                if !words.is_empty() {
                    lines.push(
                        words
                            .iter()
                            .map(|w| crate::suite::sh_quote(w))
                            .collect::<Vec<_>>()
                            .join(" "),
                    );
                }
            }
            Event::Helper(i) => {
                if depth < 3 && !runs(&defs[i], defs, depth + 1, lines) {
                    return false;
                }
            }
        }
    }
    true
}

enum Event {
    Run,
    Cd,
    Helper(usize),
}

/// The words one argument of `session.run` gives a run with no arguments: a string
/// literal itself; `*(session.posargs or (DEFAULT…))` its DEFAULT; nothing for a keyword
/// argument, a name, a call or any other starred expression (a conditional's choice is not
/// known without running the file).
fn argument(arg: &str) -> Vec<String> {
    if let Some(text) = string_literal(arg) {
        return vec![text.to_string()];
    }
    let Some(starred) = arg.strip_prefix('*') else {
        return Vec::new();
    };
    let inner = starred
        .trim()
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(starred)
        .trim();
    let Some(default) = inner.strip_prefix("session.posargs or") else {
        return Vec::new();
    };
    let default = default.trim();
    let Some(open) = default.strip_prefix(['(', '[']) else {
        return Vec::new();
    };
    call_args(&format!("{open})"))
        .into_iter()
        .filter_map(string_literal)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// urllib3's shape: the test session runs a helper whose one pytest call spans lines,
    /// with conditional and starred arguments, calls of its own inside strings, and
    /// `session.posargs or (…)`; a later session runs another project's suite in a clone.
    #[test]
    fn a_sessions_runs_are_read_as_python_calls_through_its_helpers() {
        let text = r#"import nox

def tests_impl(session, extras=None, integration=False):
    session.run(
        "python",
        "-c",
        "import sys; print(getattr(sys, '_is_gil_enabled', lambda: True)())",
        silent=True,
    ).strip()
    session.run(
        "python",
        *(("-bb",) if extras else ()),
        "-m",
        "pytest",
        *("--memray", "--hide-memray-summary") if extras else (),
        "-v",
        "--allow-hosts=localhost,127.0.0.1",
        *(session.posargs or ("test/",)),
        env={"PYTHONWARNINGS": "always"},
    )


@nox.session(
    python=["3.10", "3.11"]
)
def test(session):
    tests_impl(session)


@nox.session()
def downstream_requests(session):
    session.cd(tmp_dir)
    session.run("pytest", "tests")


@nox.session()
def lint(session):
    session.run("pre-commit", "run", "--all-files")
"#;
        let sessions = sessions(text);
        let names: Vec<&str> = sessions.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["test", "downstream_requests", "lint"]);
        assert_eq!(
            sessions[0].1,
            [
                "python -c 'import sys; print(getattr(sys, '\\''_is_gil_enabled'\\'', lambda: True)())'",
                "python -m pytest -v --allow-hosts=localhost,127.0.0.1 test/",
            ]
        );
        assert!(
            sessions[1].1.is_empty(),
            "what runs after a change of directory is another tree's: {:?}",
            sessions[1].1
        );
    }

    #[test]
    fn the_sessions_nox_options_names_come_first() {
        let text = "import nox\nnox.options.sessions = [\"unit\"]\n\n@nox.session\ndef tests(session):\n    session.run(\"pytest\", \"tests/all\")\n\n@nox.session\ndef unit(session):\n    session.run(\"pytest\", *session.posargs, \"tests/unit\")\n\ndef helper():\n    pass\n";
        let sessions = sessions(text);
        assert_eq!(
            sessions[0],
            ("unit".into(), vec!["pytest tests/unit".into()])
        );
        assert_eq!(sessions[1].0, "tests");
        assert_eq!(
            sessions.len(),
            2,
            "a function without @nox.session is no session"
        );
        // A file that decorates none: its functions of a session.
        let sessions = super::sessions("def tests(session):\n    session.run(\"pytest\")\n");
        assert_eq!(sessions, [("tests".into(), vec!["pytest".into()])]);
    }
}
