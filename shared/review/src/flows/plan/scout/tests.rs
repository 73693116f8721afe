use proven_config::{PlanSpec, ReviewClass, ScoutSettings};

use super::plan::choose;
use super::*;
use crate::core::trace::Trace;
use crate::core::wire::FileFacts;

fn f(path: &str) -> FileFacts {
    FileFacts {
        path: path.into(),
        old_path: None,
        executable: false,
        shebang: Some(false),
        pure_rename: false,
        binary: false,
    }
}

fn scout() -> ScoutSettings {
    ScoutSettings::default()
}

fn with(settings: &[(&str, &str)]) -> ScoutSettings {
    let mut s = ScoutSettings::default();
    for (key, value) in settings {
        match *key {
            "path_rules" => {
                s.path_rules = proven_config::parse_path_rules(value).expect("as built")
            }
            kind => {
                let spec = PlanSpec::parse(value).expect("as built");
                let at = s
                    .plans
                    .iter()
                    .position(|(k, _)| *k == kind)
                    .expect("as built");
                s.plans[at].1 = spec;
            }
        }
    }
    s
}

const ALL: PlanOptions = PlanOptions {
    dependencies: true,
    agents: true,
    agents_off: false,
    fix_attempts: 2,
    autofix: false,
    second_reviewer: false,
    scout_intent: true,
    fixes: true,
    analyzers: [false; 4],
};

fn planned(files: &[FileFacts], options: PlanOptions, s: &ScoutSettings) -> (Planned, Trace) {
    let mut trace = Trace::new("t".to_string());
    (plan(files, options, s, &mut trace), trace)
}

fn runs(p: &Planned, stage: &str) -> bool {
    p.plan.runs.iter().any(|r| r == stage)
}

#[test]
fn one_security_signal_makes_the_whole_change_security() {
    let c = classify(
        &[f("README.md"), f("src/auth/login.rs"), f("lib.rs")],
        &scout(),
    );
    assert_eq!(c.kind, ChangeKind::Security);
    let choice = choose(&c, true, &scout());
    assert_eq!(choice.spec, PlanSpec::full(ReviewClass::Security));
    // A plan_security below class security is not believed: security is never outvoted.
    let low = with(&[(
        "security",
        "class=standard, agents=all, tools=all, sources=all, doubled=no",
    )]);
    let choice = choose(&classify(&[f("src/auth.rs")], &low), true, &low);
    assert_eq!(choice.spec.class, ReviewClass::Security);
    assert!(choice.decided_by.starts_with("security is never outvoted"));
}

#[test]
fn only_verified_prose_is_docs() {
    assert_eq!(
        classify(&[f("docs/a.md"), f("CHANGES.txt")], &scout()).kind,
        ChangeKind::Docs
    );
    let not_prose = |file: FileFacts| {
        let c = classify(&[file], &scout());
        (c.kind, c.signals[0].why.clone())
    };
    let mut script = f("docs/run.md");
    script.shebang = Some(true);
    assert_eq!(not_prose(script).0, ChangeKind::Feature);
    let mut exec = f("notes.txt");
    exec.executable = true;
    assert!(not_prose(exec).1.contains("executable"));
    let mut unread = f("big.md");
    unread.shebang = None;
    assert!(not_prose(unread).1.contains("could not be read"));
    // A name proves nothing: a build file, a requirements file, a renamed script.
    assert_ne!(not_prose(f("CMakeLists.txt")).0, ChangeKind::Docs);
    assert_ne!(not_prose(f("ci/constraints.txt")).0, ChangeKind::Docs);
    assert_ne!(not_prose(f("docs/run.go")).0, ChangeKind::Docs);
    let mut renamed = f("docs/notes.md");
    renamed.old_path = Some("tools/notes.py".into());
    assert_eq!(not_prose(renamed).0, ChangeKind::Feature);
    // The plan runs no model for verified prose, and every agent for a script under docs/.
    let (docs, _) = planned(&[f("README.md")], ALL, &scout());
    assert!(!docs.models && !runs(&docs, "planner"), "{:?}", docs.plan);
    let mut script = f("docs/build.md");
    script.shebang = Some(true);
    let (code, _) = planned(&[script], ALL, &scout());
    assert!(code.models && runs(&code, "prover (tests in the sandbox)"));
}

#[test]
fn the_floor_keeps_its_class_and_its_work() {
    // By default the rules call every manifest security: a lock file runs the Prover, deep
    // and doubled.
    let options = PlanOptions {
        second_reviewer: true,
        ..ALL
    };
    let (p, trace) = planned(&[f("Cargo.lock")], options, &scout());
    assert_eq!(
        (
            p.plan.change_kind.as_str(),
            p.plan.class.as_str(),
            p.plan.band.as_str()
        ),
        ("dependency", "security", "deep")
    );
    assert!(runs(&p, "prover (tests in the sandbox)") && runs(&p, "planner"));
    assert!(runs(&p, "coverage auditor") && p.second_reviewer);
    let line = &trace.lines()[0].1;
    assert!(
        line["decided_by"]
            .as_str()
            .expect("as built")
            .starts_with("floor: path rule manifests=security on Cargo.lock"),
        "{line}"
    );
    // Rules that leave manifests lower let the dependency plan cut the Planner.
    let no_rules = with(&[("path_rules", "")]);
    let (p, _) = planned(&[f("Cargo.lock")], options, &no_rules);
    assert_eq!(p.plan.class, "dependency");
    assert!(!p.models && p.skeptic && p.dependency_evidence);
    assert!(runs(&p, "skeptic (dependency findings)") && !runs(&p, "planner"));
    // A rule of a custom glob raises a docs change to its class, in full.
    let rules = with(&[("path_rules", "handbook/**=standard")]);
    let (p, _) = planned(&[f("handbook/ops/run.md")], ALL, &rules);
    assert_eq!(p.plan.class, "standard");
    assert!(p.models && runs(&p, "fixer"));
}

#[test]
fn an_ambiguous_change_runs_its_rules_class_in_full() {
    let c = classify(&[f("docs/a.md"), f("src/main.rs")], &scout());
    assert_eq!((c.kind, c.ambiguous), (ChangeKind::Feature, true));
    assert_eq!((c.confidence, c.confidence_band()), (0.5, "low"));
    let choice = choose(&c, true, &scout());
    assert_eq!(choice.spec, PlanSpec::full(ReviewClass::Standard));
    assert!(choice.decided_by.starts_with("ambiguity"));
    // A manifest beside new code: the floor (security) runs in full.
    let c = classify(&[f("package.json"), f("src/new.js")], &scout());
    let choice = choose(&c, true, &scout());
    assert_eq!(choice.spec.class, ReviewClass::Security);
    let c = classify(&[f("Cargo.lock"), f("Cargo.toml")], &scout());
    assert!(!c.ambiguous && c.confidence == 1.0 && c.confidence_band() == "high");
}

#[test]
fn a_lightening_plan_for_an_unverified_kind_runs_security_doubled() {
    let light_features = with(&[(
        "feature",
        "class=docs, agents=none, tools=none, sources=none, doubled=no",
    )]);
    let options = PlanOptions {
        second_reviewer: true,
        ..ALL
    };
    let (p, trace) = planned(&[f("src/calc.py")], options, &light_features);
    assert_eq!(p.plan.class, "security");
    assert!(p.models && p.second_reviewer, "{:?}", p.plan);
    assert!(
        trace.lines()[0].1["decided_by"]
            .as_str()
            .expect("as built")
            .starts_with("guard: plan_feature leaves parts out")
    );
}

#[test]
fn a_plan_without_the_sandbox_leaves_the_prover_and_the_fixer_out() {
    let queries_only = with(&[
        (
            "feature",
            "class=standard, agents=all, tools=queries, sources=all, doubled=class",
        ),
        ("path_rules", ""),
    ]);
    // A lighter plan of an unverified kind is refused by the guard…
    let (p, _) = planned(&[f("calc.py")], ALL, &queries_only);
    assert_eq!(p.plan.class, "security");
    // …and kept for a dependency change, where it is allowed.
    let deps = with(&[
        (
            "dependency",
            "class=dependency, agents=all, tools=queries, sources=all, doubled=class",
        ),
        ("path_rules", ""),
    ]);
    let (p, _) = planned(&[f("Cargo.lock")], ALL, &deps);
    assert!(p.models && !p.tools.sandbox && p.tools.queries);
    assert!(!runs(&p, "prover (tests in the sandbox)") && !runs(&p, "fixer"));
    assert!(
        p.plan.left_out.iter().any(
            |l| l.starts_with("prover (tests in the sandbox): the plan leaves out the sandbox")
        ),
        "{:?}",
        p.plan
    );
}

#[test]
fn the_second_reviewer_doubles_the_classes_it_is_given() {
    let options = PlanOptions {
        second_reviewer: true,
        ..ALL
    };
    let mut s = scout();
    s.second_reviewer_classes = vec![ReviewClass::Security];
    let (p, _) = planned(&[f("calc.py")], options, &s);
    assert!(!p.second_reviewer && !runs(&p, "second reviewer"));
    assert!(
        p.plan
            .left_out
            .iter()
            .any(|l| l.starts_with("second reviewer: the plan does not double class standard"))
    );
    let (p, _) = planned(&[f("src/auth.py")], options, &s);
    assert!(p.second_reviewer);
    let (p, _) = planned(&[f("calc.py")], options, &scout());
    assert!(p.second_reviewer);
}

#[test]
fn the_plan_line_names_each_part_field_by_field() {
    let mut script = f("docs/setup.md");
    script.shebang = Some(true);
    let (p, trace) = planned(&[f("docs/guide.md"), script], ALL, &scout());
    let (kind, line) = &trace.lines()[0];
    assert_eq!(kind, "plan");
    assert_eq!(
        line["plan"],
        "chosen by Scout Intent: class=standard, agents=all, tools=all, sources=all, doubled=class"
    );
    assert_eq!(line["change_kind"], "feature");
    assert_eq!(line["class"], "standard");
    assert_eq!(line["confidence"], 0.5);
    assert_eq!(line["confidence_band"], "low");
    assert_eq!(line["band"], "light");
    assert_eq!(line["ambiguous"], true);
    assert_eq!(line["signals"][0]["signal"], "docs: verified prose");
    assert_eq!(line["signals"][1]["path"], "docs/setup.md");
    assert!(
        line["signals"][1]["signal"]
            .as_str()
            .expect("as built")
            .contains("starts with #!")
    );
    assert_eq!(line["runs"], serde_json::json!(p.plan.runs));
    // Each part left out has a line of its own, after the plan line.
    let parts: Vec<&serde_json::Value> = trace
        .lines()
        .iter()
        .filter(|(k, _)| k == "plan_left_out")
        .map(|(_, e)| &e["part"])
        .collect();
    assert_eq!(parts.len(), p.plan.left_out.len());
    assert!(!parts.is_empty());
    // Off: no plan chosen, every review in full.
    let (p, trace) = planned(
        &[f("README.md")],
        PlanOptions {
            scout_intent: false,
            ..ALL
        },
        &scout(),
    );
    assert!(p.models && runs(&p, "planner"));
    assert_eq!(
        trace.lines()[0].1["plan"],
        "no plan chosen (scout_intent is off): the review runs in full"
    );
}

#[test]
fn the_plan_lists_exactly_what_the_options_let_run() {
    let (p, _) = planned(&[f("calc.py"), f("Cargo.lock")], ALL, &scout());
    assert!(runs(&p, "fixer") && runs(&p, "skeptic (dependency findings)"));
    assert!(!runs(&p, "autofix"));
    // What runs of the Fixer and the autofix attempt, and the line that says why not.
    let cases = [
        (
            PlanOptions {
                fix_attempts: 0,
                ..ALL
            },
            false,
            "fixer: switched off (fix_attempts = 0)",
        ),
        (
            PlanOptions {
                fix_attempts: 0,
                fixes: false,
                ..ALL
            },
            false,
            "fixer: switched off (fixes = off)",
        ),
        // The autofix attempt is the one fix: no per-finding Fixer beside it.
        (
            PlanOptions {
                autofix: true,
                ..ALL
            },
            true,
            "fixer: the autofix attempt makes the one fix of the whole change (autofix = on)",
        ),
    ];
    for (options, autofix, line) in cases {
        let p = planned(&[f("calc.py")], options, &scout()).0;
        assert!(!runs(&p, "fixer"), "{line}");
        assert_eq!(runs(&p, "autofix"), autofix, "{line}");
        assert!(p.plan.left_out.iter().any(|l| l == line), "{line}");
    }
    // Every step the pipeline runs belongs to one plan entry.
    for step in [
        "intake",
        "plan",
        "judge",
        "deps.collect",
        "deps.file",
        "skeptic.deps",
        "planner",
        "prover",
        "sandbox.reproduce",
        "investigator",
        "skeptic",
        "sandbox.refute",
        "skeptic.query",
        "fixer",
        "sandbox.fix",
        "autofix",
        "sandbox.autofix",
        "auditor",
        "second-reviewer",
    ] {
        assert!(plan_entry(step).is_some(), "{step} has no plan entry");
    }
}

#[test]
fn the_plan_line_names_the_analyzers_of_the_languages_the_change_touches() {
    let files = [f("app/util.py"), f("src/lib.rs"), f("README.md")];
    let on = PlanOptions {
        analyzers: [true, true, false, false],
        ..ALL
    };
    let (p, trace) = planned(&files, on, &scout());
    assert!(runs(&p, "tool evidence"), "{:?}", p.plan.runs);
    let chosen: Vec<_> = p
        .analyzers
        .iter()
        .map(|(a, paths)| (a.name(), paths.clone()))
        .collect();
    assert_eq!(chosen, [("pyflakes", vec!["app/util.py".to_string()])]);
    let line = trace
        .into_lines()
        .into_iter()
        .find(|(kind, _)| kind == "plan")
        .expect("the plan line");
    assert_eq!(line.1["analyzers"], serde_json::json!(["pyflakes"]));
    assert!(
        p.plan
            .left_out
            .iter()
            .any(|l| l == "tool evidence (clippy): switched off (tool_analyzers)"),
        "{:?}",
        p.plan.left_out
    );
    // None of the change's languages has one on: no tool evidence.
    let (p, _) = planned(&[f("README.md"), f("src/lib.rs")], on, &scout());
    assert!(!runs(&p, "tool evidence") && p.analyzers.is_empty());
}

/// Which analyzers run is also a matter of the review's class (`tool_analyzer_classes`):
/// a standard review runs them by default; one whose class the setting leaves out does
/// not, and the plan says why, naming the setting; a security review still does.
#[test]
fn the_analyzers_run_for_the_classes_the_setting_names() {
    let code = [f("app/util.py")];
    let on = PlanOptions {
        analyzers: [true, true, true, true],
        ..ALL
    };
    let (p, _) = planned(&code, on, &scout());
    assert_eq!(p.plan.class, "standard");
    assert!(runs(&p, "tool evidence"), "{:?}", p.plan);
    let security_only = ScoutSettings {
        tool_analyzer_classes: vec![ReviewClass::Security],
        ..scout()
    };
    let (p, _) = planned(&code, on, &security_only);
    assert!(
        !runs(&p, "tool evidence") && p.analyzers.is_empty(),
        "{:?}",
        p.plan
    );
    assert!(
        p.plan
            .left_out
            .iter()
            .any(|l| l
                == "tool evidence (pyflakes): not for a standard review (tool_analyzer_classes)"),
        "{:?}",
        p.plan.left_out
    );
    // A manifest floors the review at security: the analyzers run there.
    let (p, _) = planned(
        &[f("app/util.py"), f("requirements.txt")],
        on,
        &security_only,
    );
    assert_eq!(p.plan.class, "security");
    assert!(runs(&p, "tool evidence"), "{:?}", p.plan);
}

#[test]
fn the_plan_line_names_eslint_for_the_javascript_and_typescript_files_the_change_touches() {
    let files = [
        f("web/app.ts"),
        f("lib/a.js"),
        f("app/util.py"),
        f("README.md"),
    ];
    let on = PlanOptions {
        analyzers: [false, false, false, true],
        ..ALL
    };
    let (p, trace) = planned(&files, on, &scout());
    let chosen: Vec<_> = p
        .analyzers
        .iter()
        .map(|(a, paths)| (a.name(), paths.clone()))
        .collect();
    assert_eq!(
        chosen,
        [(
            "eslint",
            vec!["web/app.ts".to_string(), "lib/a.js".to_string()]
        )]
    );
    let line = trace
        .into_lines()
        .into_iter()
        .find(|(kind, _)| kind == "plan")
        .expect("the plan line");
    assert_eq!(line.1["analyzers"], serde_json::json!(["ESLint"]));
}
