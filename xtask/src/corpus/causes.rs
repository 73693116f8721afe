//! Every miss of a case by cause, and whose cause it is: the world's (what no reviewer of
//! the project could have had in a sandbox: the network, Python 2, a GPU or a browser, a
//! release the registry no longer serves) or Proven's (everything else, the harness's own
//! failures included: a cause is Proven's unless the data or the run's own words show the
//! world's).
//!
//! The world's causes are read from data, never decided by hand: the dataset's metadata
//! (BugsInPy's bug.info python_version 2.x), the project's own declarations as the run
//! record names them (Trove classifiers that name only Python 2), and the words the run
//! printed (a name that does not resolve, a CUDA device, a browser that does not start, a
//! pinned release the index does not serve).

use std::fmt::Write as _;

use super::CaseResult;

/// One case's miss: the first stage that missed and its cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    /// `fidelity`, `reproduce`, `fix`, `false proof`, `harness`.
    pub stage: &'static str,
    /// The cause, in a few words (the row of the table of causes).
    pub class: String,
    /// A cause of the world (else Proven's).
    pub world: bool,
}

/// The words of a harness error when the dataset's own runs name no test of the bug.
pub(super) const DATASET_NAMES_NO_TEST: &str = "the dataset names no test of the bug";

/// The case's miss, or None when nothing missed (or its review has not run yet).
pub(super) fn miss_of(r: &CaseResult) -> Option<Miss> {
    let text_of = |prefix: &str| -> String {
        r.causes
            .iter()
            .filter(|c| c.starts_with(prefix))
            .cloned()
            .collect::<Vec<_>>()
            .join("; ")
    };
    let (stage, text, class) = if let Some(h) = r.causes.iter().find(|c| c.starts_with("harness:"))
    {
        (
            "harness",
            h.clone(),
            "the harness could not run the case".to_string(),
        )
    } else if !r.fidelity {
        (
            "fidelity",
            text_of("fidelity:"),
            r.env_cause
                .clone()
                .unwrap_or_else(|| "no cause recorded".into()),
        )
    } else if r.reproduced == Some(false) {
        let t = text_of("reproduce:");
        let class = if t.contains("no finding") {
            "no finding".to_string()
        } else {
            "the finding is not reproduced".to_string()
        };
        ("reproduce", t, class)
    } else if r.fix_proved == Some(false) {
        let t = text_of("fix:");
        let class = fix_class(&t);
        ("fix", t, class)
    } else if r.false_proof == Some(true) {
        (
            "false proof",
            String::new(),
            "a control came out reproduced".into(),
        )
    } else {
        return None;
    };
    // A dataset whose own runs name no test of the bug (the same failures with and
    // without the fix's tests, no test file in the test commit) gives no case to run:
    // the dataset's gap, not the harness's.
    if stage == "harness" && text.contains(DATASET_NAMES_NO_TEST) {
        return Some(Miss {
            stage,
            class: DATASET_NAMES_NO_TEST.to_string(),
            world: true,
        });
    }
    if stage != "harness"
        && let Some(world) = world_cause(r.world.as_deref(), &text)
    {
        return Some(Miss {
            stage,
            class: world,
            world: true,
        });
    }
    Some(Miss {
        stage,
        class,
        world: false,
    })
}

/// A fix miss in a few words: the suite's state, or the reason's head.
fn fix_class(text: &str) -> String {
    let t = text.trim_start_matches("fix: ");
    // A try that repeated an earlier try's edits says that try's reason after its own words.
    let t = match t.find(", not run again: ") {
        Some(at) if t.starts_with("the same edits as try ") => &t[at + ", not run again: ".len()..],
        _ => t,
    };
    if t.contains("ran past suite_timeout") {
        "the package's suite ran past suite_timeout".into()
    } else if t.contains("killed at the timeout") {
        "the package's suite was killed at the timeout".into()
    } else if t.contains("collection error") {
        "the package's suite does not collect".into()
    } else if t.contains("printed no summary") {
        "the package's suite printed no summary".into()
    } else if t.contains("do not pass") {
        "with the patch the package's tests do not pass".into()
    } else {
        t.split([':', '('])
            .next()
            .unwrap_or(t)
            .trim()
            .chars()
            .take(80)
            .collect()
    }
}

/// What a miss says when the bug's test failed on the change and passed on the base only
/// under the C locale (`locale_check` in the harness ran both sides there).
pub const NOT_UTF8_ONLY: &str = "under the C locale (not UTF-8) the change failed and the base passed: the bug shows only where the locale's encoding is not UTF-8";

/// What a miss says when the bug's test failed on the change and passed on the base only
/// with the optional accelerators hidden (`accelerator_check` in the harness).
pub const WITHOUT_ACCELERATORS_ONLY: &str = "with the optional accelerators hidden (uvloop, ujson, ...) the change failed and the base passed: the bug's test runs only without them";

/// The world's cause that `data` (the dataset's) or `text` (the miss's words) shows.
pub fn world_cause(data: Option<&str>, text: &str) -> Option<String> {
    if let Some(d) = data {
        return Some(d.to_string());
    }
    let lower = text.to_lowercase();
    // What the run itself showed, before the packages the preparation named as not
    // prepared: an install script that wanted the network (phantomjs' download,
    // puppeteer's Chromium) explains no failing test by itself (Eslint-5's
    // `ReferenceError: f is not defined`, Karma-1's SyntaxError).
    let shown = &lower[..lower.find("not prepared: ").unwrap_or(lower.len())];
    let any = |words: &[&str]| words.iter().any(|w| shown.contains(&w.to_lowercase()));
    if any(&[
        "temporary failure in name resolution",
        "name or service not known",
        "nodename nor servname",
        "getaddrinfo enotfound",
        "getaddrinfo eai_again",
        "network is unreachable",
        "no address associated with hostname",
        "the run needed the network",
    ]) {
        return Some("needs the network".into());
    }
    if only_python2_declared(text) {
        return Some("needs Python 2 (the project declares only Python 2)".into());
    }
    if any(&[
        "no cuda-capable device",
        "cuda driver",
        "cudnn",
        "libcuda",
        "cuda_error",
    ]) {
        return Some("needs a GPU".into());
    }
    if any(&[
        "chromedriver",
        "geckodriver",
        "cannot start chrome",
        "cannot start firefox",
        "no usable sandbox",
        "phantomjs",
        "cannot open display",
        "selenium",
    ]) {
        return Some("needs a browser".into());
    }
    if let Some(at) = lower.find(" not started: the project's ci starts it") {
        let service = lower[..at].rsplit([';', ' ']).next().unwrap_or_default();
        return Some(format!(
            "needs a service its CI starts that the sandbox has not ({service})"
        ));
    }
    if deleted_release(&lower) {
        return Some("a release the registry no longer serves".into());
    }
    if lower.contains(&WITHOUT_ACCELERATORS_ONLY.to_lowercase()) {
        return Some(
            "a test that runs only without an optional accelerator (its CI's environment without it; the sandbox installs what the project declares)"
                .into(),
        );
    }
    if lower.contains(&NOT_UTF8_ONLY.to_lowercase()) {
        return Some(
            "needs a locale whose encoding is not UTF-8 (Windows', POSIX's C): CI runners and the sandbox run in UTF-8"
                .into(),
        );
    }
    None
}

/// pip: "No matching distribution found for NAME==VERSION", or the line it prints before it,
/// "Could not find a version that satisfies the requirement NAME==VERSION" (an exact pin
/// the index does not serve: a release deleted from PyPI); npm: `E404` / `404 Not Found`
/// for a package. Where the preparation named it as not prepared and installed the rest
/// (`not prepared: metrics (… E404)`), it is the miss's cause only when the run shows the
/// package missing (`No module named 'NAME'`, `Cannot find module 'NAME'`): node_redis'
/// benchmark tool `metrics`, gone from npm, explains no failing test.
fn deleted_release(lower: &str) -> bool {
    let mut found: Vec<usize> = Vec::new();
    for words in [
        "no matching distribution found for ",
        "could not find a version that satisfies the requirement ",
    ] {
        for (at, _) in lower.match_indices(words) {
            let requirement: String = lower[at + words.len()..]
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != ')' && *c != ';')
                .collect();
            if requirement.contains("==") && !requirement.contains('*') {
                found.push(at);
            }
        }
    }
    for words in ["npm err! 404", "npm error 404", "e404"] {
        found.extend(lower.match_indices(words).map(|(at, _)| at));
    }
    found
        .into_iter()
        .any(|at| match named_not_prepared(lower, at) {
            // The install stopped at it: nothing ran.
            None => true,
            // A distribution's name is not its module's (`requests-async` installs
            // `requests_async`).
            Some(name) => {
                let module = name.replace(['-', '.'], "_");
                [
                    format!("no module named '{name}"),
                    format!("no module named {name}"),
                    format!("no module named '{module}"),
                    format!("no module named {module}"),
                    format!("cannot find module '{name}"),
                ]
                .iter()
                .any(|missing| lower.contains(missing.as_str()))
            }
        })
}

/// The package a `not prepared: NAME (REASON)` entry names, when the words at `at` are its
/// reason.
fn named_not_prepared(lower: &str, at: usize) -> Option<String> {
    let before = &lower[..at];
    let note = before.rfind("not prepared: ")? + "not prepared: ".len();
    // Entries are `NAME (REASON)`, joined by `, `: the one `at` is in.
    let start = before[note..]
        .rfind("), ")
        .map_or(note, |i| note + i + "), ".len());
    let name = before[start..].split(" (").next()?.trim();
    let name = name
        .split(['=', '<', '>', '~', '!', '[', ';', ' '])
        .next()
        .unwrap_or(name);
    (!name.is_empty()).then(|| name.to_string())
}

/// The run record's note on the classifiers (`the classifiers name Python ==2.6.* |
/// ==2.7.*`) names only Python 2 versions.
fn only_python2_declared(text: &str) -> bool {
    let Some(at) = text.find("classifiers name Python ") else {
        return false;
    };
    let rest = &text[at + "classifiers name Python ".len()..];
    let versions: Vec<&str> = rest
        .split(';')
        .next()
        .unwrap_or_default()
        .split(['|', ',', ' '])
        .map(|v| v.trim().trim_start_matches(['=', '>', '<', '~', '!']))
        .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    !versions.is_empty() && versions.iter().all(|v| v.starts_with('2'))
}

/// The report's section: the misses by cause, the world's apart from Proven's, and the
/// share of Proven's causes among every case.
pub(super) fn section(results: &[CaseResult]) -> String {
    let mut s = String::new();
    let misses: Vec<(&CaseResult, Miss)> = results
        .iter()
        .filter_map(|r| miss_of(r).map(|m| (r, m)))
        .collect();
    let _ = writeln!(s, "\n## The misses, by cause\n");
    if misses.is_empty() {
        let _ = writeln!(s, "No case missed.");
    } else {
        let _ = writeln!(s, "| whose | stage | cause | cases | which |");
        let _ = writeln!(s, "|---|---|---|---|---|");
        let mut rows: Vec<(bool, &str, String, Vec<String>)> = Vec::new();
        for (r, m) in &misses {
            match rows
                .iter_mut()
                .find(|(w, st, c, _)| *w == m.world && *st == m.stage && *c == m.class)
            {
                Some(row) => row.3.push(r.id.clone()),
                None => rows.push((m.world, m.stage, m.class.clone(), vec![r.id.clone()])),
            }
        }
        rows.sort_by(|a, b| (a.0, b.3.len()).cmp(&(b.0, a.3.len())));
        for (world, stage, class, ids) in &rows {
            let _ = writeln!(
                s,
                "| {} | {stage} | {} | {} | {} |",
                if *world { "the world" } else { "Proven" },
                cell(class),
                ids.len(),
                ids.join(", ")
            );
        }
    }
    let n = results.len();
    let world = misses.iter().filter(|(_, m)| m.world).count();
    let proven = misses.len() - world;
    let pct = |k: usize| {
        if n == 0 {
            "-".to_string()
        } else {
            format!("{:.1}%", 100.0 * k as f64 / n as f64)
        }
    };
    let _ = writeln!(
        s,
        "\nCauses of the world: {world} of {n} cases ({}).\n\nProven's causes: {proven} of {n} cases ({}).",
        pct(world),
        pct(proven)
    );
    // Fidelity over the cases the world lets run: a case the world stops before its
    // fidelity (a server no sandbox has, a dataset naming no test) leaves the count.
    let stopped = misses
        .iter()
        .filter(|(_, m)| m.world && matches!(m.stage, "fidelity" | "harness"))
        .count();
    let faithful = results.iter().filter(|r| r.fidelity).count();
    let allowed = n - stopped;
    if stopped > 0 && allowed > 0 {
        let _ = writeln!(
            s,
            "\nFidelity of the {allowed} cases the world lets run: {faithful}/{allowed} ({:.1}%).",
            100.0 * faithful as f64 / allowed as f64
        );
    }
    s
}

/// A table cell: one line, no pipes, no terminal colour sequences or control characters.
pub(crate) fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() {
                            break;
                        }
                    }
                }
            }
            '|' => out.push_str("\\|"),
            '\n' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(fidelity: bool, causes: &[&str], env: Option<&str>) -> CaseResult {
        CaseResult {
            id: "p-1".into(),
            project: "p".into(),
            fidelity,
            causes: causes.iter().map(|c| c.to_string()).collect(),
            env_cause: env.map(str::to_string),
            ..CaseResult::default()
        }
    }

    #[test]
    fn misses_are_the_worlds_only_when_the_data_or_the_run_shows_it() {
        // The network, read from the run's words.
        let m = miss_of(&case(
            false,
            &["fidelity: base environment_error; E   urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>"],
            Some("collection error"),
        ))
        .expect("a miss");
        assert_eq!(
            (m.stage, m.class.as_str(), m.world),
            ("fidelity", "needs the network", true)
        );
        // A service the project's CI starts that the sandbox has not, from the record's
        // setup line.
        let m = miss_of(&case(
            false,
            &["fidelity: base test_failed; Error: connect ECONNREFUSED 127.0.0.1:27017; mongodb not started: the project's CI starts it (.travis.yml services), the sandbox has no mongodb; tests that need it cannot pass here"],
            Some("test failed on the base"),
        ))
        .expect("a miss");
        assert_eq!(
            (m.class.as_str(), m.world),
            (
                "needs a service its CI starts that the sandbox has not (mongodb)",
                true
            )
        );
        // A bug that shows only under a locale that is not UTF-8, from the harness's runs
        // of both sides under the C locale; the change passing there too is Proven's.
        let m = miss_of(&case(
            false,
            &[&format!("fidelity: change passed; no lock file pins the Python requirements; {NOT_UTF8_ONLY}")],
            Some("test passed on the change"),
        ))
        .expect("a miss");
        assert!(
            m.world
                && m.class
                    .starts_with("needs a locale whose encoding is not UTF-8"),
            "{}",
            m.class
        );
        assert!(
            !miss_of(&case(
                false,
                &["fidelity: change passed; under the C locale the change passed too"],
                Some("test passed on the change"),
            ))
            .expect("a miss")
            .world
        );
        // A test that runs only without an optional accelerator (sanic-2's `if not
        // uvloop_installed():`), from the harness's runs of both sides with them hidden;
        // the change passing there too is Proven's.
        let m = miss_of(&case(
            false,
            &[&format!("fidelity: change passed; under the C locale the change passed too; {WITHOUT_ACCELERATORS_ONLY}")],
            Some("test passed on the change"),
        ))
        .expect("a miss");
        assert!(
            m.world
                && m.class
                    .starts_with("a test that runs only without an optional accelerator"),
            "{}",
            m.class
        );
        assert!(
            !miss_of(&case(
                false,
                &["fidelity: change passed; under the C locale the change passed too; without the optional accelerators the change passed too"],
                Some("test passed on the change"),
            ))
            .expect("a miss")
            .world
        );
        // A pinned release the registry no longer serves, named as not prepared, whose
        // module the run then missed under its own name (sanic-4).
        let m = miss_of(&case(
            false,
            &["fidelity: base environment_error (exit 1 without the test runner's summary: nothing shows that a test failed); ModuleNotFoundError: No module named 'requests_async'; not prepared: requests-async==0.5.0 (ERROR: Could not find a version that satisfies the requirement requests-async==0.5.0 (from -r requirements)); no lock file pins the Python requirements"],
            Some("missing module requests_async"),
        ))
        .expect("a miss");
        assert_eq!(
            (m.class.as_str(), m.world),
            ("a release the registry no longer serves", true)
        );
        // A Fixer's try that repeated the first's edits says the first's reason: the suite's
        // budget, Proven's.
        let mut r = case(
            true,
            &[
                "fix: the same edits as try 1, not run again: with the patch the package's tests ran past suite_timeout (900 s) and were killed: a suite that did not finish proves nothing",
            ],
            None,
        );
        r.reproduced = Some(true);
        r.fix_proved = Some(false);
        let m = miss_of(&r).expect("a miss");
        assert_eq!(
            (m.stage, m.class.as_str(), m.world),
            ("fix", "the package's suite ran past suite_timeout", false)
        );
        // Python 2 from bug.info, whatever the run said.
        let mut r = case(
            false,
            &["fidelity: base environment_error; SyntaxError"],
            Some("python version"),
        );
        r.world = Some("needs Python 2 (bug.info: python_version 2.7.16)".into());
        assert!(miss_of(&r).expect("a miss").world);
        // Classifiers that name only Python 2; one that names a 3.x too is an image Proven lacks.
        assert!(
            miss_of(&case(
                false,
                &["fidelity: base environment_error; the classifiers name Python ==2.6.* | ==2.7.*; the sandbox's image has Python 3.6.15"],
                Some("import error")
            ))
            .expect("a miss")
            .world
        );
        let httpie = miss_of(&case(
            false,
            &["fidelity: base environment_error; E   ImportError: cannot import name 'is_py26'; the classifiers name Python ==2.6.* | ==2.7.* | ==3.1.* | ==3.2.*; the sandbox's image has Python 3.6.15"],
            Some("import error"),
        ))
        .expect("a miss");
        assert_eq!(
            (httpie.class.as_str(), httpie.world),
            ("import error", false)
        );
        // A GPU, a browser, a deleted release.
        for (words, class) in [
            (
                "RuntimeError: no CUDA-capable device is detected",
                "needs a GPU",
            ),
            ("ERROR [launcher]: Cannot start Chrome", "needs a browser"),
            (
                "ModuleNotFoundError: No module named 'tensorflow'; not prepared: tensorflow (ERROR: No matching distribution found for tensorflow==1.3.0rc1)",
                "a release the registry no longer serves",
            ),
            (
                "npm ERR! 404 Not Found: left-pad@0.0.9",
                "a release the registry no longer serves",
            ),
            (
                "preparing python dependencies failed: ERROR: Could not find a version that satisfies the requirement requests-async==0.5.0",
                "a release the registry no longer serves",
            ),
        ] {
            let m = miss_of(&case(
                false,
                &[&format!("fidelity: base {words}")],
                Some("x"),
            ))
            .expect("a miss");
            assert_eq!((m.class.as_str(), m.world), (class, true), "{words}");
        }
        // A release gone from the registry that the run does not miss: Proven's (node_redis'
        // failing tests beside its benchmark tool `metrics`, gone from npm).
        for words in [
            "test_failed; Uncaught Error: ERR AUTH <password> called without any password configured; not prepared: metrics (the registry does not serve it (E404))",
            "test_failed; AssertionError; not prepared: sphinx (ERROR: No matching distribution found for sphinx==1.0.0), foo (x)",
        ] {
            let m = miss_of(&case(
                false,
                &[&format!("fidelity: base {words}")],
                Some("x"),
            ))
            .expect("a miss");
            assert!(!m.world, "{words}");
        }
        // One the run misses, among others named: the world's.
        let m = miss_of(&case(
            false,
            &["fidelity: base test_failed; Error: Cannot find module 'hiredis'; not prepared: metrics (the registry does not serve it (E404)), hiredis (the registry does not serve it (E404))"],
            Some("x"),
        ))
        .expect("a miss");
        assert!(m.world);
        // A requirement that merely does not resolve is Proven's (no exact pin).
        assert!(
            !miss_of(&case(
                false,
                &["fidelity: base not prepared: foo (No matching distribution found for foo>=2)"],
                Some("import error")
            ))
            .expect("a miss")
            .world
        );
        // The change passing, a harness failure: Proven's.
        let m = miss_of(&case(
            false,
            &["fidelity: change passed"],
            Some("test passed on the change"),
        ))
        .expect("a miss");
        assert_eq!(
            (m.class.as_str(), m.world),
            ("test passed on the change", false)
        );
        // A package named as not prepared for want of the network, beside a failure of
        // its own: Proven's.
        let m = miss_of(&case(
            false,
            &["fidelity: base environment_error (exit 1 without the test runner's summary); ReferenceError: f is not defined; not prepared: phantomjs-prebuilt (it failed: Error: getaddrinfo EAI_AGAIN github.com)"],
            Some("environment: exit 1"),
        ))
        .expect("a miss");
        assert!(!m.world, "{m:?}");
        let m = miss_of(&case(
            false,
            &["harness: no git directory has it (needs the network)"],
            Some("case not built"),
        ))
        .expect("a miss");
        assert_eq!((m.stage, m.world), ("harness", false));
        // A dataset that names no test of its bug: the dataset's gap, the world's.
        let m = miss_of(&case(
            false,
            &[&format!(
                "harness: Pencilblue-4: {DATASET_NAMES_NO_TEST} (no new failure in its results, no test file in Bug-4-test)"
            )],
            Some("case not built"),
        ))
        .expect("a miss");
        assert_eq!(
            (m.stage, m.class.as_str(), m.world),
            ("harness", DATASET_NAMES_NO_TEST, true)
        );
    }

    #[test]
    fn later_stages_and_the_share_of_provens_causes() {
        let mut fix = case(
            true,
            &[
                "fix: with the patch the package's tests do not pass (with the patch 0 test(s) pass, on the base 0): environment_error: pytest was interrupted: a collection error (exit 2): raise URLError: Temporary failure in name resolution",
            ],
            None,
        );
        fix.reproduced = Some(true);
        fix.fix_proved = Some(false);
        let m = miss_of(&fix).expect("a miss");
        assert_eq!((m.stage, m.world), ("fix", true));
        let mut hang = case(
            true,
            &[
                "fix: with the patch the package's tests do not pass: environment_error: killed at the timeout",
            ],
            None,
        );
        hang.id = "p-2".into();
        hang.reproduced = Some(true);
        hang.fix_proved = Some(false);
        let m = miss_of(&hang).expect("a miss");
        assert_eq!(
            (m.stage, m.class.as_str(), m.world),
            (
                "fix",
                "the package's suite was killed at the timeout",
                false
            )
        );
        let mut good = case(true, &[], None);
        good.id = "p-3".into();
        good.reproduced = Some(true);
        good.fix_proved = Some(true);
        good.false_proof = Some(false);
        assert_eq!(miss_of(&good), None);
        // Faithful but not reviewed yet: no miss.
        let mut pending = case(true, &[], None);
        pending.id = "p-4".into();
        assert_eq!(miss_of(&pending), None);
        let text = section(&[fix, hang, good, pending]);
        assert!(
            text.contains("Causes of the world: 1 of 4 cases (25.0%)."),
            "{text}"
        );
        assert!(
            text.contains("Proven's causes: 1 of 4 cases (25.0%)."),
            "{text}"
        );
        assert!(
            text.contains("| the world | fix | needs the network | 1 | p-1 |"),
            "{text}"
        );
        // No case stopped by the world before its fidelity: no such line.
        assert!(!text.contains("cases the world lets run"), "{text}");
        let mut served = case(
            false,
            &["fidelity: base environment_error"],
            Some("environment"),
        );
        served.id = "p-5".into();
        served.world = Some("needs a service the dataset starts (mongodb)".into());
        let text = section(&[faithful_case(), served]);
        assert!(
            text.contains("Fidelity of the 1 cases the world lets run: 1/1 (100.0%)."),
            "{text}"
        );
    }

    fn faithful_case() -> CaseResult {
        let mut r = case(true, &[], None);
        r.id = "p-6".into();
        r
    }
}
