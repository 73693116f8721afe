//! `proven vectors check` over the data kit's vectors and over a file with a wrong row.

use std::process::Command;

use crate::common::{data, text};

fn proven() -> Command {
    Command::new(env!("CARGO_BIN_EXE_proven"))
}

#[test]
fn every_vectors_file_agrees_or_is_a_known_decision() {
    let dir = data("vectors");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("vectors dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert!(files.len() >= 17, "{files:?}");
    let out = proven()
        .args(["vectors", "check", "--json"])
        .args(&files)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stderr}\n{}",
        &stdout[..stdout.len().min(4000)]
    );
    let summary: serde_json::Value = serde_json::from_str(&stdout).expect("json summary");
    assert_eq!(summary["all_agree"], true);
    assert_eq!(summary["disagreements"].as_array().map(Vec::len), Some(0));
    let groups = summary["groups"].as_array().expect("groups");
    assert!(groups.len() > 50, "one group per file, ecosystem and kind");
    for g in groups {
        let n = |k: &str| g[k].as_u64().unwrap_or_else(|| panic!("{k} in {g}"));
        assert_eq!(
            n("rows"),
            n("agree") + n("disagree") + n("known") + n("not_understood"),
            "{g}"
        );
        assert_eq!(n("disagree"), 0, "{g}");
        // The ecosystems' own test suites agree in full, with no decision needed.
        let own = [
            "pypi-packaging.jsonl",
            "npm-node-semver.jsonl",
            "maven-comparableversion.jsonl",
            "go-x-mod-semver.jsonl",
            "packagist-composer-semver.jsonl",
            "rubygems-rubygems.jsonl",
            "debian-dpkg.jsonl",
        ];
        if own.contains(&g["file"].as_str().unwrap_or_default()) && n("agree") > 0 {
            assert_eq!((n("known"), g["agreement"].as_f64()), (0, Some(1.0)), "{g}");
        }
    }
    // Real advisory ranges scored with the reference libraries: every group at 99.9%+.
    let pypi_ranges = groups
        .iter()
        .find(|g| g["file"] == "pypi-osv-ranges-real.jsonl")
        .expect("the PyPI real ranges");
    assert!(
        pypi_ranges["agreement"]
            .as_f64()
            .is_some_and(|a| a >= 0.999)
    );
}

#[test]
fn a_disagreeing_row_is_listed_and_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("mine.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"kind":"cmp","ecosystem":"PyPI","a":"1.0","b":"1.0.post1","expect":"<","src":"mine:1"}"#,
            "\n",
            r#"{"kind":"cmp","ecosystem":"PyPI","a":"1.0rc1","b":"1.0","expect":">","src":"mine:2"}"#,
            "\n"
        ),
    )
    .expect("write");
    let out = proven()
        .args(["vectors", "check"])
        .arg(&file)
        .output()
        .expect("run");
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("mine:2"),
        "the wrong row is listed with its source: {stdout}"
    );
    assert!(!stdout.contains("mine:1\""), "{stdout}");
    let out = proven()
        .args(["vectors", "check", "--json"])
        .arg(&file)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let summary: serde_json::Value = serde_json::from_str(&text(&out).0).expect("json");
    assert_eq!(summary["all_agree"], false);
    assert_eq!(summary["groups"][0]["rows"], 2);
    assert_eq!(summary["groups"][0]["agree"], 1);
    assert_eq!(summary["groups"][0]["disagree"], 1);
    assert_eq!(summary["groups"][0]["agreement"], 0.5);
    let listed = summary["disagreements"].to_string();
    assert!(
        listed.contains("mine:2") && !listed.contains("mine:1"),
        "{listed}"
    );
}
