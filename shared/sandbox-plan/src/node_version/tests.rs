use super::*;

fn images(majors: &[&str]) -> Vec<(String, String)> {
    majors
        .iter()
        .map(|m| (m.to_string(), format!("node{m}")))
        .collect()
}

use crate::testing::tree;

const OLD_AND_NEW: &[&str] = &["4", "6", "8", "10", "12", "14", "16", "18", "22"];

#[test]
fn versions_are_read_as_projects_write_them() {
    assert_eq!(version("8"), Some(vec![8]));
    assert_eq!(version("v8.9.0"), Some(vec![8, 9, 0]));
    assert_eq!(version("'0.10'"), Some(vec![0, 10]));
    assert_eq!(version("16.x"), Some(vec![16]));
    assert_eq!(version("lts/carbon"), Some(vec![8]));
    assert_eq!(version("Dubnium"), Some(vec![10]));
    for none in ["node", "stable", "lts/*", "iojs", ">=18", "", "0"] {
        assert_eq!(version(none), None, "{none}");
    }
}

#[test]
fn a_project_runs_on_the_newest_node_its_ci_tests_that_the_sandbox_has() {
    let dir = tree(&[
        (
            ".travis.yml",
            "language: node_js\nnode_js:\n  - \"4\"\n  - \"6\"\n  - \"7\"\n",
        ),
        ("package.json", r#"{"engines": {"node": ">=4"}}"#),
    ]);
    let wants = node_wants(dir.path());
    let choice =
        choose_node(&wants, &images(OLD_AND_NEW), Some("2017-01-10T00:00:00Z")).expect("a choice");
    assert_eq!(
        (choice.version.as_str(), choice.image.as_str()),
        ("6", "node6")
    );
    assert!(
        choice.because.contains(".travis.yml node_js"),
        "{}",
        choice.because
    );
}

#[test]
fn a_ci_of_versions_older_than_every_image_gets_the_nearest_newer_one() {
    // Express and bower of 2014: Travis tests 0.10 and 0.11, engines >= 0.10.
    let dir = tree(&[
        (".travis.yml", "node_js:\n  - '0.10'\n  - '0.11'\n"),
        ("package.json", r#"{"engines": {"node": ">= 0.10.0"}}"#),
    ]);
    let choice =
        choose_node(&node_wants(dir.path()), &images(OLD_AND_NEW), None).expect("a choice");
    assert_eq!(choice.image, "node4");
    assert!(
        choice.because.contains("nearest newer"),
        "{}",
        choice.because
    );
}

#[test]
fn an_engines_range_no_image_meets_is_set_aside() {
    // karma of 2015: `>=0.10 <=0.12 || >=1 <=2`, tested on 0.10, 0.12 and io.js.
    let dir = tree(&[
        (
            ".travis.yml",
            "node_js:\n  - \"iojs\"\n  - \"0.12\"\n  - \"0.10\"\n",
        ),
        (
            "package.json",
            r#"{"engines": {"node": ">=0.10 <=0.12 || >=1 <=2"}}"#,
        ),
    ]);
    let choice =
        choose_node(&node_wants(dir.path()), &images(OLD_AND_NEW), None).expect("a choice");
    assert_eq!(choice.image, "node4");
}

#[test]
fn a_pinned_version_wins_and_is_met_by_its_own_or_the_nearest_newer_image() {
    let dir = tree(&[
        (".nvmrc", "lts/dubnium\n"),
        (".travis.yml", "node_js: [6, 8]\n"),
    ]);
    let choice =
        choose_node(&node_wants(dir.path()), &images(OLD_AND_NEW), None).expect("a choice");
    assert_eq!(choice.image, "node10");
    assert!(
        choice.because.contains(".nvmrc lts/dubnium"),
        "{}",
        choice.because
    );
    let dir = tree(&[(".node-version", "v9.2.0\n")]);
    let choice =
        choose_node(&node_wants(dir.path()), &images(OLD_AND_NEW), None).expect("a choice");
    assert_eq!(choice.image, "node10");
    assert!(choice.because.contains("no image of"), "{}", choice.because);
}

#[test]
fn an_open_range_takes_the_newest_node_released_before_the_base() {
    let dir = tree(&[("package.json", r#"{"engines": {"node": ">=4"}}"#)]);
    let wants = node_wants(dir.path());
    let choice =
        choose_node(&wants, &images(OLD_AND_NEW), Some("2017-03-01T00:00:00Z")).expect("a choice");
    assert_eq!(choice.image, "node6");
    assert!(choice.because.contains("2017-03-01"), "{}", choice.because);
    // A young base (no date): the newest the range allows.
    let choice = choose_node(&wants, &images(OLD_AND_NEW), None).expect("a choice");
    assert_eq!(choice.image, "node22");
    // A base older than every image: the oldest.
    let choice = choose_node(&wants, &images(&["8", "22"]), Some("2016-01-01")).expect("a choice");
    assert_eq!(choice.image, "node8");
}

#[test]
fn nothing_declared_on_a_young_base_is_the_default_image() {
    let dir = tree(&[("package.json", "{}")]);
    assert_eq!(
        choose_node(&node_wants(dir.path()), &images(OLD_AND_NEW), None),
        None
    );
    // An old base with nothing declared: of its era.
    let choice = choose_node(
        &node_wants(dir.path()),
        &images(OLD_AND_NEW),
        Some("2019-06-01"),
    )
    .expect("a choice");
    assert_eq!(choice.image, "node12");
}

#[test]
fn a_workflow_matrix_is_read_and_the_engines_range_bounds_it() {
    let dir = tree(&[
        (
            ".github/workflows/ci.yml",
            "jobs:\n  t:\n    strategy:\n      matrix:\n        node-version: [14.x, 16.x, 18.x]\n",
        ),
        ("package.json", r#"{"engines": {"node": "^14 || ^16"}}"#),
    ]);
    let choice =
        choose_node(&node_wants(dir.path()), &images(OLD_AND_NEW), None).expect("a choice");
    assert_eq!(choice.image, "node16");
}

#[test]
fn release_days_follow_the_table_then_the_schedule() {
    assert_eq!(released(&[8, 1]), "2017-05-30");
    assert_eq!(released(&[0, 10, 4]), "2013-03-11");
    assert_eq!(released(&[26]), "2026-04-30");
    assert_eq!(released(&[27]), "2026-10-30");
}

#[test]
fn a_dependency_this_node_cannot_parse_is_named_and_the_projects_own_files_are_not() {
    let out = "(node) child_process: options.customFds option is deprecated.\n/deps/node_modules/tough-cookie/dist/index.cjs:70\nfunction getPublicSuffix(domain, options = {}) {\n                                         ^\n\nSyntaxError: Unexpected token =\n    at exports.runInThisContext (vm.js:53:16)\n";
    assert_eq!(
        unparsed_dependency(out).as_deref(),
        Some("tough-cookie (SyntaxError: Unexpected token =)")
    );
    let scoped = "/deps/node_modules/a/node_modules/@scope/b/index.js:3\n  ...x\n  ^^^\nSyntaxError: Unexpected token ...\n";
    assert_eq!(
        unparsed_dependency(scoped).as_deref(),
        Some("@scope/b (SyntaxError: Unexpected token ...)")
    );
    let caught = "TAP version 13\n/deps/node_modules/psl/dist/psl.cjs\n\nSyntaxError: Unexpected token ...\n    at exports.runInThisContext (vm.js:53:16)\n";
    assert_eq!(
        unparsed_dependency(caught).as_deref(),
        Some("psl (SyntaxError: Unexpected token ...)")
    );
    let own = "/work/lib/index.js:3\nconst f = async () => 1;\n          ^^^^^\nSyntaxError: Unexpected identifier\n";
    assert_eq!(unparsed_dependency(own), None);
    assert_eq!(
        unparsed_dependency("AssertionError: expected 1 to equal 2\n"),
        None
    );
}

#[test]
fn the_next_newer_image_is_one_the_engines_allow() {
    let dir = tree(&[("package.json", r#"{"engines": {"node": ">=4 <10"}}"#)]);
    let wants = node_wants(dir.path());
    let next = next_newer(&wants, &images(OLD_AND_NEW), "4");
    assert_eq!(next, Some(("6".to_string(), "node6".to_string())));
    assert_eq!(
        next_newer(&wants, &images(OLD_AND_NEW), "8"),
        None,
        "10 is outside >=4 <10"
    );
}
