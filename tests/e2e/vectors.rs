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
    assert!(summary.to_string().len() > 100);
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
}
