//! ESLint in the tool evidence, end to end with the real Docker sandbox: a Node project with
//! its own `eslint.config.js` and eslint as a dev dependency; the change's new unused
//! variable and undefined name are one `tool` finding each (the rule's id as code, both
//! runs at one ESLint version), and the same diagnostics already on the base give none.

use proven_change::testing::TestRepo;
use proven_report::Level;

const PACKAGE: &str = r#"{"name":"lint-me","version":"1.0.0","private":true,"devDependencies":{"eslint":"9.39.1","@eslint/js":"9.39.1"}}
"#;
const CONFIG: &str = "const js = require('@eslint/js');\n\nmodule.exports = [\n  js.configs.recommended,\n  { languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },\n];\n";
const CLEAN: &str =
    "function total(items) {\n  return items.length;\n}\n\nmodule.exports = total;\n";
const FLAGGED: &str = "const unused = 1;\n\nfunction total(items) {\n  return items.length + missing;\n}\n\nmodule.exports = total;\n";

fn node_repository(base: &str, head: &str) -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("package.json", PACKAGE)
        .write("eslint.config.js", CONFIG)
        .write("lib/total.js", base);
    let base = repo.commit("base");
    repo.write("lib/total.js", head);
    let head = repo.commit("change");
    (repo, base, head)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eslint_s_new_diagnostics_are_tool_findings_by_rule_and_the_base_own_give_none() {
    let (repo, base, head) = node_repository(CLEAN, FLAGGED);
    let report = super::run(&repo, &base, &head).await;
    let mut found: Vec<(String, u32, String)> = report
        .findings
        .iter()
        .filter(|f| f.proof_level == Level::Tool)
        .map(|f| {
            let tools: Vec<_> = f.evidence.iter().filter_map(|e| e.tool.as_ref()).collect();
            assert_eq!(tools.len(), 2, "{f:#?}");
            assert_eq!(tools[0].version, tools[1].version);
            assert!(tools[1].version.starts_with("ESLint v9."), "{tools:?}");
            assert_eq!(tools[1].analyzer, "ESLint");
            (
                f.location.path.clone(),
                f.location.line.unwrap_or(0),
                tools[1].code.clone(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("lib/total.js".to_string(), 1, "no-unused-vars".to_string()),
            ("lib/total.js".to_string(), 4, "no-undef".to_string()),
        ],
        "{:#?}",
        report.not_seen
    );

    // Already on the base: the change adds a clean line beside them.
    let (repo, base, head) = node_repository(FLAGGED, &format!("{FLAGGED}// Two.\n"));
    let report = super::run(&repo, &base, &head).await;
    assert!(
        !report.findings.iter().any(|f| f.proof_level == Level::Tool),
        "{:#?}",
        report.findings
    );
    assert!(
        !report
            .not_seen
            .iter()
            .any(|n| n.what.starts_with("tool evidence")),
        "{:#?}",
        report.not_seen
    );
}
