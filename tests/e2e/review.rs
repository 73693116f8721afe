//! `proven review`, `proven trace`, exit codes and configuration errors, end to end.

use proven_change::testing::TestRepo;
use proven_store::testing::Backend;

use crate::common::{Env, FileServer, data, import, json, text};

fn lock(regex: &str) -> String {
    format!(
        "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"regex\"]\n\n\
         [[package]]\nname = \"regex\"\nversion = \"{regex}\"\n\
         source = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
    )
}

fn rustsec() -> Vec<String> {
    vec![
        data("advisories/osv-crates-rustsec.jsonl")
            .display()
            .to_string(),
        data("advisories/kev.json").display().to_string(),
    ]
}

async fn review_in_every_format(backend: Backend) {
    let env = Env::new(backend).await;
    import(&env, &rustsec());
    let repo = TestRepo::new();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\n[dependencies]\nregex = \"1\"\n",
    )
    .write("Cargo.lock", lock("1.5.5"));
    let base = repo.commit("base");
    repo.write("Cargo.lock", lock("1.5.4"));
    repo.commit("lower regex into RUSTSEC-2022-0013");
    let repo_path = repo.path().display().to_string();

    let out = env.run(&[
        "review", "--repo", &repo_path, "--base", &base, "--head", "HEAD", "--format", "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "findings exit 1: {:?}",
        text(&out)
    );
    let doc = json(&out);
    let findings = doc["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["advisory"]["id"], "RUSTSEC-2022-0013");
    assert_eq!(findings[0]["package"]["old_version"], "1.5.5");
    assert_eq!(findings[0]["package"]["new_version"], "1.5.4");
    assert_eq!(findings[0]["fix"]["version"], "1.5.5");
    assert_eq!(findings[0]["package"]["dependency"], "direct");
    assert_eq!(doc["status"], "complete");
    let review_id = doc["review_id"].as_str().expect("review id").to_string();

    // What the review saw is kept in the World Model, and `proven world` reads it back.
    let out = env.run(&["world", &repo_path, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let (edges, _) = text(&out);
    let kinds: std::collections::BTreeSet<String> = edges
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("one edge a line"))
        .filter_map(|e| e["kind"].as_str().map(str::to_string))
        .collect();
    for kind in [
        "contains",
        "depends_on",
        "declares",
        "affected_by",
        "has_finding",
        "about",
    ] {
        assert!(kinds.contains(kind), "no {kind} edge in {edges}");
    }
    assert!(
        edges.contains("regex@1.5.4") && edges.contains("RUSTSEC-2022-0013"),
        "{edges}"
    );

    let out = env.run(&[
        "review", "--repo", &repo_path, "--base", &base, "--format", "sarif",
    ]);
    let sarif = json(&out);
    assert_eq!(
        sarif["runs"][0]["results"][0]["ruleId"],
        "RUSTSEC-2022-0013"
    );
    let out = env.run(&[
        "review", "--repo", &repo_path, "--base", &base, "--format", "markdown",
    ]);
    let (md, _) = text(&out);
    assert!(
        md.contains("### `advisory` regex 1.5.4 — RUSTSEC-2022-0013"),
        "{md}"
    );
    let out = env.run(&["review", "--repo", &repo_path, "--base", &base]);
    let (plain, _) = text(&out);
    assert!(
        plain.contains("[advisory] regex 1.5.4 (crates.io) — RUSTSEC-2022-0013"),
        "{plain}"
    );
    assert!(!plain.contains('\u{1b}'), "no colour when not a terminal");
    let file = env.data_dir.path().join("out.sarif");
    let out = env.run(&[
        "review",
        "--repo",
        &repo_path,
        "--base",
        &base,
        "--format",
        "sarif",
        "--output",
        &file.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        std::fs::read_to_string(&file)
            .expect("written")
            .contains("RUSTSEC-2022-0013")
    );

    // The trace of the first review, as JSON Lines.
    let out = env.run(&["trace", &review_id]);
    assert!(out.status.success());
    let (jsonl, _) = text(&out);
    let lines: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSONL"))
        .collect();
    let kinds: Vec<&str> = lines
        .iter()
        .map(|l| l["kind"].as_str().unwrap_or_default())
        .collect();
    for k in [
        "intake",
        "plan",
        "dependency_file",
        "package",
        "match",
        "finding",
        "result",
    ] {
        assert!(kinds.contains(&k), "{k} missing from {kinds:?}");
    }
    assert!(lines.iter().all(|l| l["review_id"] == review_id.as_str()));
    let out = env.run(&["trace", "no-such-review"]);
    assert_eq!(out.status.code(), Some(4));
    env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_in_every_format_on_sqlite() {
    review_in_every_format(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_in_every_format_on_postgres() {
    review_in_every_format(Backend::Postgres).await;
}

#[tokio::test]
async fn a_clean_change_exits_0_and_a_missing_revision_exits_4() {
    let env = Env::new(Backend::Sqlite).await;
    import(&env, &rustsec());
    let repo = TestRepo::new();
    repo.write("Cargo.lock", lock("1.5.4"));
    let base = repo.commit("base");
    repo.write("Cargo.lock", lock("1.10.0"));
    repo.commit("raise regex out of the range");
    let path = repo.path().display().to_string();
    let out = env.run(&["review", "--repo", &path, "--base", &base]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let out = env.run(&["review", "--repo", &path, "--base", "no-such-branch"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(text(&out).1.contains("no-such-branch"));
    let out = env.run(&["review", "--repo", "/nonexistent/repo", "--base", "HEAD"]);
    assert_eq!(out.status.code(), Some(4));
    env.cleanup().await;
}

#[tokio::test]
async fn bad_configuration_exits_7_naming_the_key_and_the_values_allowed() {
    let env = Env::new(Backend::Sqlite).await;
    let out = env
        .proven()
        .env("PROVEN_COLOR", "blue")
        .args(["db", "stats"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(7));
    let (_, err) = text(&out);
    assert!(
        err.contains("PROVEN_COLOR") && err.contains("auto, always, never"),
        "{err}"
    );

    let out = env
        .proven()
        .env("PROVEN_DATABASE_URL", "mysql://x")
        .args(["db", "stats"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(7));

    // A Skeptic of the generator's model family is refused before any work.
    let out = env
        .proven()
        .env("PROVEN_AGENTS", "on")
        .env("PROVEN_GENERATOR_MODEL", "nvidia/nemotron-nano-9b-v2")
        .args(["db", "stats"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(7));
    let (_, err) = text(&out);
    assert!(
        err.contains("PROVEN_SKEPTIC_MODEL") && err.contains("nemotron"),
        "{err}"
    );

    // proven.yaml is read from the base revision: a change cannot choose its own review.
    let repo = TestRepo::new();
    repo.write("proven.yaml", "dependencies:\n  informational: sometimes\n")
        .write("a.txt", "a\n");
    let base = repo.commit("base with a bad setting");
    repo.write("a.txt", "b\n");
    repo.commit("head");
    let out = env.run(&[
        "review",
        "--repo",
        &repo.path().display().to_string(),
        "--base",
        &base,
    ]);
    assert_eq!(out.status.code(), Some(7), "{:?}", text(&out));
    let (_, err) = text(&out);
    assert!(
        err.contains("dependencies.informational") && err.contains("report, ignore"),
        "{err}"
    );

    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    let base = repo.commit("base without config");
    repo.write("proven.yaml", "dependencies:\n  informational: sometimes\n");
    repo.commit("the change adds a bad setting: not read");
    let out = env.run(&[
        "review",
        "--repo",
        &repo.path().display().to_string(),
        "--base",
        &base,
    ]);
    // Not 7: the change's own proven.yaml is never read. Partial (8): no model reviewed it.
    assert_eq!(out.status.code(), Some(8), "{:?}", text(&out));
    env.cleanup().await;
}

#[tokio::test]
async fn import_is_idempotent_and_reads_kev_and_epss() {
    let env = Env::new(Backend::Sqlite).await;
    let rustsec = data("advisories/osv-crates-rustsec.jsonl")
        .display()
        .to_string();
    let out = env.run(&["db", "import", &rustsec]);
    let (_, first) = text(&out);
    assert!(
        first.contains("records read (inserted 1206, updated 0, unchanged 0"),
        "{first}"
    );
    let out = env.run(&["db", "import", &rustsec]);
    let (_, second) = text(&out);
    assert!(
        second.contains("(inserted 0, updated 0, unchanged 1206"),
        "{second}"
    );
    let out = env.run(&[
        "db",
        "import",
        &data("advisories/kev.json").display().to_string(),
        &data("advisories/epss.csv").display().to_string(),
    ]);
    assert!(out.status.success(), "{:?}", text(&out));
    let out = env.run(&["db", "stats"]);
    let (stats, _) = text(&out);
    assert_eq!(stats, "advisories 1206\nkev 1404\nepss 360142\n");
    let out = env.run(&["db", "import", "/nonexistent/advisories"]);
    assert_eq!(out.status.code(), Some(4));
    env.cleanup().await;
}

/// An OSV record of PyPI `flask`, fixed in `fixed`.
fn osv_record(id: &str, modified: &str, fixed: &str, withdrawn: bool) -> String {
    let withdrawn = if withdrawn {
        format!(r#""withdrawn":"{modified}","#)
    } else {
        String::new()
    };
    format!(
        r#"{{"id":"{id}","modified":"{modified}",{withdrawn}"aliases":[],"summary":"{id}",
        "affected":[{{"package":{{"ecosystem":"PyPI","name":"flask"}},
        "ranges":[{{"type":"ECOSYSTEM","events":[{{"introduced":"0"}},{{"fixed":"{fixed}"}}]}}]}}]}}"#
    )
}

/// Writes `dir/PyPI/all.zip` (OSV's per-ecosystem export layout) holding `records`.
fn write_all_zip(dir: &std::path::Path, records: &[(&str, String)]) {
    use std::io::Write;
    std::fs::create_dir_all(dir.join("PyPI")).expect("mkdir");
    let file = std::fs::File::create(dir.join("PyPI/all.zip")).expect("all.zip");
    let mut zip = zip::ZipWriter::new(file);
    for (id, record) in records {
        zip.start_file(
            format!("{id}.json"),
            zip::write::SimpleFileOptions::default(),
        )
        .expect("zip entry");
        zip.write_all(record.as_bytes()).expect("zip write");
    }
    zip.finish().expect("zip finish");
}

#[tokio::test]
async fn db_sync_reads_sources_and_urls_as_one_change_set_and_says_what_changed() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let env = Env::new(backend).await;
        let osv = tempfile::tempdir().expect("tempdir");
        let served = tempfile::tempdir().expect("tempdir");
        let kev = |cves: &[&str]| {
            let rows: Vec<String> = cves
                .iter()
                .map(|c| format!(r#"{{"cveID":"{c}","dateAdded":"2026-01-01"}}"#))
                .collect();
            let body = format!(
                r#"{{"catalogVersion":"1","vulnerabilities":[{}]}}"#,
                rows.join(",")
            );
            std::fs::write(
                served.path().join("known_exploited_vulnerabilities.json"),
                body,
            )
            .expect("kev");
        };
        write_all_zip(
            osv.path(),
            &[
                (
                    "PYSEC-1",
                    osv_record("PYSEC-1", "2024-01-01T00:00:00Z", "1.0", false),
                ),
                (
                    "PYSEC-2",
                    osv_record("PYSEC-2", "2024-01-01T00:00:00Z", "2.0", false),
                ),
            ],
        );
        kev(&["CVE-2024-1"]);
        let server = FileServer::start(served.path());
        let url = format!(
            "http://127.0.0.1:{}/known_exploited_vulnerabilities.json",
            server.port
        );
        let dir = osv.path().display().to_string();
        let sync = |args: &[&str]| {
            let mut all = vec!["db", "sync", "--json"];
            all.extend_from_slice(args);
            let out = env.run(&all);
            assert!(out.status.success(), "{:?}", text(&out));
            json(&out)
        };

        // The first sync of a directory and a URL: one change set, everything new.
        let first = sync(&[&dir, &url]);
        assert_eq!(
            first["new"],
            serde_json::json!(["PYSEC-1", "PYSEC-2"]),
            "{first:#}"
        );
        assert_eq!(first["kev"], serde_json::json!(["CVE-2024-1"]));
        assert!(first["id"].as_str().is_some_and(|id| !id.is_empty()));

        // The same sources again: an empty change set (another id).
        let again = sync(&[&dir, &url]);
        for kind in ["new", "modified", "withdrawn", "kev"] {
            assert_eq!(again[kind], serde_json::json!([]), "{kind}: {again:#}");
        }
        assert_ne!(again["id"], first["id"]);

        // A newer record, a withdrawal and a new KEV entry, said by kind (and as text).
        write_all_zip(
            osv.path(),
            &[
                (
                    "PYSEC-1",
                    osv_record("PYSEC-1", "2024-06-01T00:00:00Z", "1.1", false),
                ),
                (
                    "PYSEC-2",
                    osv_record("PYSEC-2", "2024-06-01T00:00:00Z", "2.0", true),
                ),
            ],
        );
        kev(&["CVE-2024-1", "CVE-2024-2"]);
        let out = env.run(&["db", "sync", &dir, &url]);
        let (stdout, _) = text(&out);
        assert!(out.status.success(), "{stdout}");
        assert!(
            stdout.contains(": 0 new, 1 modified, 1 withdrawn advisories; 1 new in KEV"),
            "{stdout}"
        );

        // A source that is neither a path nor an http(s) URL, or is missing, is named.
        let out = env.run(&["db", "sync", "ftp://example.org/all.zip"]);
        assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
        assert!(text(&out).1.contains("ftp://example.org/all.zip"));
        let out = env.run(&["db", "sync", "/nonexistent/osv"]);
        assert_eq!(out.status.code(), Some(4), "{:?}", text(&out));
        drop(server);
        env.cleanup().await;
    }
}
