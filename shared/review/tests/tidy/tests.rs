//! The tidy checks' own tests: small planted trees, each crossing one rule, are caught.

use super::graph::{code_only, cycles, graph, test_files};
use super::{crossings, display_text_branches, unplaced};

fn tree(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect()
}

#[test]
fn a_planted_super_cycle_is_caught() {
    let planted = tree(&[
        ("lib.rs", "pub mod pipeline;\n"),
        ("pipeline/mod.rs", "mod depfixes;\nmod evidence;\n"),
        (
            "pipeline/evidence.rs",
            "use super::{depfixes, other};\npub fn on_trees() { depfixes::propose() }\n",
        ),
        (
            "pipeline/depfixes.rs",
            "pub fn propose() {\n    let (t, _) = super::evidence::on_trees();\n}\n",
        ),
    ]);
    let found = cycles(&graph(&planted));
    assert_eq!(
        found,
        [vec![
            "pipeline/depfixes.rs".to_string(),
            "pipeline/evidence.rs".into(),
            "pipeline/depfixes.rs".into(),
        ]]
    );
}

#[test]
fn a_cycle_through_a_parent_and_a_nested_group_is_caught() {
    // `mod.rs` re-exports its child; the child takes a constant from `super`, two levels
    // up through `super::super`, and through a nested `use` group.
    let planted = tree(&[
        ("lib.rs", "pub mod a;\n"),
        (
            "a/mod.rs",
            "mod b;\npub use b::run;\npub const X: u8 = 1;\n",
        ),
        ("a/b/mod.rs", "mod c;\npub use self::c::run;\n"),
        ("a/b/c.rs", "use crate::{a::{X as Y}};\npub fn run() {}\n"),
    ]);
    let g = graph(&planted);
    assert!(g["a/b/c.rs"].contains("a/mod.rs"), "{g:?}");
    assert!(g["a/b/mod.rs"].contains("a/b/c.rs"), "{g:?}");
    assert_eq!(cycles(&g).len(), 1, "{g:?}");
    let twice_up = tree(&[
        ("a/mod.rs", "mod b;\npub use b::c::run;\n"),
        ("a/b/mod.rs", "mod c;\n"),
        ("a/b/c.rs", "pub fn run() { super::super::X }\n"),
    ]);
    assert_eq!(cycles(&graph(&twice_up)).len(), 1);
}

#[test]
fn what_is_not_an_import_makes_no_edge() {
    let planted = tree(&[
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        (
            "a.rs",
            "// crate::b::x in a comment\npub(crate) fn f(&self) -> &str {\n    \"super::b\"\n}\n\
             mod tests {\n    use super::*;\n}\n",
        ),
        ("b.rs", "pub(super) fn g() {}\n"),
    ]);
    let g = graph(&planted);
    assert!(g["a.rs"].is_empty(), "{g:?}");
    assert!(g["b.rs"].is_empty(), "{g:?}");
    assert!(code_only("let c = '\"'; x", false).ends_with("; x"));
}

#[test]
fn a_planted_cross_flow_import_is_caught() {
    let planted = tree(&[
        (
            "lib.rs",
            "pub mod core;\npub mod flows;\npub mod control;\n",
        ),
        ("core/mod.rs", "pub mod trace;\n"),
        ("core/trace.rs", "pub struct Trace;\n"),
        ("flows/mod.rs", "pub mod deps;\npub mod query;\n"),
        ("flows/query/mod.rs", "pub mod wire;\n"),
        ("flows/query/wire.rs", "pub struct Q;\n"),
        (
            "flows/deps/mod.rs",
            "use crate::{core::trace::Trace, flows::{query::wire::Q}};\n\
             fn f() { crate::control::plan::go() }\n",
        ),
        ("control/mod.rs", "pub mod plan;\n"),
        (
            "control/plan.rs",
            "pub fn go() { crate::flows::deps::run() }\n",
        ),
    ]);
    let crossed = crossings(&graph(&planted));
    assert_eq!(
        crossed,
        [
            "flows/deps/mod.rs -> control/plan.rs (a flow imports control)",
            "flows/deps/mod.rs -> flows/query/wire.rs (a flow imports another flow)",
        ]
    );
}

#[test]
fn a_flow_reaching_past_core_and_a_file_outside_the_layers_are_caught() {
    // A flow reaches the registry through `super::super`, another flow through `super`, and
    // a top-level module that sits in no layer; core reaches up into a flow.
    let planted = tree(&[
        (
            "lib.rs",
            "pub mod bounded;\npub mod core;\npub mod flows;\npub mod pipeline;\n",
        ),
        ("bounded.rs", "pub fn steps() {}\n"),
        ("core/mod.rs", "pub mod trace;\n"),
        (
            "core/trace.rs",
            "pub fn t() { crate::flows::deps::run() }\n",
        ),
        ("flows/mod.rs", "pub mod autofix;\npub mod deps;\n"),
        ("flows/autofix/mod.rs", "use super::deps::run;\n"),
        (
            "flows/deps/mod.rs",
            "use crate::bounded::steps;\nuse super::super::pipeline::go;\npub fn run() {}\n",
        ),
        ("pipeline/mod.rs", "pub fn go() {}\n"),
    ]);
    let crossed = crossings(&graph(&planted));
    assert_eq!(
        crossed,
        [
            "core/trace.rs -> flows/deps/mod.rs (core imports a layer above it)",
            "flows/autofix/mod.rs -> flows/deps/mod.rs (a flow imports another flow)",
            "flows/deps/mod.rs -> bounded.rs (a file outside every layer)",
            "flows/deps/mod.rs -> pipeline/mod.rs (a flow imports the registry)",
        ]
    );
    assert_eq!(unplaced(&planted), ["bounded.rs"]);
}

#[test]
fn a_branch_on_display_text_is_caught_and_a_format_token_is_not() {
    let code = "fn f(line: &str, path: &str) {\n\
                if line.starts_with(\"not prepared: \") {}\n\
                if message.contains(\"could not be read\") {}\n\
                if shown == \"the test is flaky\" {}\n\
                if path.ends_with(\".rs\") || line.starts_with(\"--hash\") {}\n\
                }\n";
    let found = display_text_branches("x.rs", code);
    assert_eq!(
        found,
        [
            "x.rs:2: if line.starts_with(\"not prepared: \") {}",
            "x.rs:3: if message.contains(\"could not be read\") {}",
            "x.rs:4: if shown == \"the test is flaky\" {}",
        ]
    );
}

#[test]
fn a_file_declared_under_cfg_test_is_test_code() {
    let planted = tree(&[
        ("lib.rs", "pub mod a;\n"),
        (
            "a/mod.rs",
            "#[cfg(test)]\nmod tests;\n#[cfg(test)]\n#[path = \"b_tests.rs\"]\nmod b;\n",
        ),
        ("a/tests.rs", ""),
        ("a/b_tests.rs", "use super::super::x;\n"),
    ]);
    let tests: Vec<String> = test_files(&planted).into_iter().collect();
    assert_eq!(tests, ["a/b_tests.rs", "a/tests.rs"]);
}
