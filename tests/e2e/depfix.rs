//! Dependency fixes on repositories the tests build, against the real advisory data: for
//! each of Cargo.lock, package-lock.json, poetry.lock, go.mod/go.sum and composer.lock, a
//! change that brings in a vulnerable version gets a fix to the version that leaves every
//! one of its advisories, proved by the dependency evidence run again on the patched file
//! (a lock file with checksums names the command the user runs); a requirements pin gets
//! the exact edit; a fixed version another advisory affects is said not proved, naming it.

use proven_change::testing::TestRepo;
use proven_store::testing::Backend;
use serde_json::{Value, json};

use crate::common::{Env, data, import, json as parse};

/// The review's findings of `package` (dependency evidence only: no model configured).
fn findings_of(env: &Env, repo: &TestRepo, base: &str, package: &str) -> Vec<Value> {
    let out = env.review(repo.path(), base, &["--format", "json"]);
    let doc = parse(&out);
    doc["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings array: {doc:#}"))
        .iter()
        .filter(|f| f["package"]["name"] == package)
        .cloned()
        .collect()
}

/// A repository whose base holds `files` and whose head writes `changed` over them.
fn change(files: &[(&str, String)], changed: &[(&str, String)]) -> (TestRepo, String) {
    let repo = TestRepo::new();
    for (path, text) in files {
        repo.write(path, text);
    }
    let base = repo.commit("base");
    for (path, text) in changed {
        repo.write(path, text);
    }
    repo.commit("bring a package in");
    (repo, base)
}

fn cargo_lock(regex: bool) -> String {
    let mut s = String::from("version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n");
    if regex {
        s.push_str("dependencies = [\n \"regex\",\n]\n\n[[package]]\nname = \"regex\"\nversion = \"1.5.4\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"d07a8629359eb56f1e2fb1652bb04212c072a87ba68546a04065d525673ac461\"\n");
    }
    s
}

fn package_lock(lodash: bool) -> String {
    let mut packages = json!({"": {"name": "app", "version": "1.0.0"}});
    if lodash {
        packages[""]["dependencies"] = json!({"lodash": "^4.17.10"});
        packages["node_modules/lodash"] = json!({"version": "4.17.10",
            "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.10.tgz",
            "integrity": "sha512-UejweD1pDoXu+AD825lWwp4ZGtSwgnpZxb3JDViD7StjQz+Nb/6l093lx4OQ0foGWNRoc19mWy7BzL+UAK2iVg=="});
    }
    serde_json::to_string_pretty(
        &json!({"name": "app", "version": "1.0.0", "lockfileVersion": 3,
        "requires": true, "packages": packages}),
    )
    .expect("json")
}

fn poetry_lock(requests: bool) -> String {
    let mut s = String::new();
    if requests {
        s.push_str("[[package]]\nname = \"requests\"\nversion = \"2.19.0\"\ndescription = \"HTTP for Humans.\"\noptional = false\npython-versions = \"*\"\nfiles = [\n    {file = \"requests-2.19.0-py2.py3-none-any.whl\", hash = \"sha256:421cfc8ae318bca6d4d9d2e1c0ea3bf6c7e62a9a0d63d2e0bbcac45bd2ca2d4f\"},\n]\n\n");
    }
    s.push_str(
        "[metadata]\nlock-version = \"2.0\"\npython-versions = \"^3.8\"\ncontent-hash = \"0\"\n",
    );
    s
}

fn go_files(text: bool) -> Vec<(&'static str, String)> {
    let mut gomod = String::from("module example.com/app\n\ngo 1.21\n");
    let mut gosum = String::new();
    if text {
        gomod.push_str("\nrequire golang.org/x/text v0.3.0\n");
        gosum.push_str("golang.org/x/text v0.3.0 h1:g61tztE5qeGQ89tm6NTjjM9VPIm088od1l6aSorWRWg=\ngolang.org/x/text v0.3.0/go.mod h1:NqM8EUOU14njkJ3fqMW+pc6Ldnwhi/IjpwHt7yyuwOQ=\n");
    }
    vec![("go.mod", gomod), ("go.sum", gosum)]
}

fn composer_lock(twig: bool) -> String {
    let packages = if twig {
        json!([{"name": "twig/twig", "version": "v2.6.0",
                "source": {"type": "git", "url": "https://github.com/twigphp/Twig.git", "reference": "a11dd39f5b6589e14f0ff3b36675d06047c589b1"},
                "type": "library"}])
    } else {
        json!([])
    };
    serde_json::to_string_pretty(
        &json!({"content-hash": "0", "packages": packages, "packages-dev": []}),
    )
    .expect("json")
}

/// A package, its files on the base and the head, and the fix's version and command.
type Case = (
    &'static str,
    Vec<(&'static str, String)>,
    Vec<(&'static str, String)>,
    &'static str,
    &'static str,
);

/// Each lock format Proven reads with checksums or a resolver: the fix is a command, and
/// the evidence re-run with the package at its version finds no advisory of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_lock_format_gets_a_fix_the_evidence_proves() {
    let env = Env::new(Backend::Sqlite).await;
    let mut files = crate::common::advisory_files();
    files.push(data("advisories/osv-go-vulndb.jsonl").display().to_string());
    import(&env, &files);
    let cases: Vec<Case> = vec![
        (
            "regex",
            vec![("Cargo.lock", cargo_lock(false))],
            vec![("Cargo.lock", cargo_lock(true))],
            "1.5.5",
            "cargo update -p regex@1.5.4 --precise 1.5.5",
        ),
        (
            "lodash",
            vec![
                ("package.json", json!({"name": "app"}).to_string()),
                ("package-lock.json", package_lock(false)),
            ],
            vec![
                (
                    "package.json",
                    json!({"name": "app", "dependencies": {"lodash": "^4.17.10"}}).to_string(),
                ),
                ("package-lock.json", package_lock(true)),
            ],
            "4.17.11",
            "npm install lodash@4.17.11",
        ),
        (
            "requests",
            vec![("poetry.lock", poetry_lock(false))],
            vec![("poetry.lock", poetry_lock(true))],
            "2.31.0",
            "poetry",
        ),
        (
            "golang.org/x/text",
            go_files(false),
            go_files(true),
            "0.39.0",
            "go get golang.org/x/text@v0.39.0 && go mod tidy",
        ),
        (
            "twig/twig",
            vec![("composer.lock", composer_lock(false))],
            vec![("composer.lock", composer_lock(true))],
            // 2.x has advisories no 2.x release fixes: the fix leaves the major version.
            "3.27.0",
            "composer update twig/twig --with-dependencies",
        ),
    ];
    for (package, base_files, head_files, version, command) in cases {
        let (repo, base) = change(&base_files, &head_files);
        let found = findings_of(&env, &repo, &base, package);
        assert!(!found.is_empty(), "{package}: no finding");
        for f in &found {
            let p = &f["fix"]["proposed"];
            assert_eq!(p["proved"], true, "{package}: {f:#}");
            assert_eq!(p["version"], version, "{package}: {f:#}");
            let said = p["command"].as_str().unwrap_or_default();
            assert!(said.starts_with(command), "{package}: {said:?} {f:#}");
            assert!(
                p.get("edits").is_none(),
                "{package}: a command, no edit: {f:#}"
            );
            assert!(
                p["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("no advisory matches it")),
                "{f:#}"
            );
        }
    }
    env.cleanup().await;
}

/// An OSV record of a made-up PyPI package affected over `events`.
fn advisory(id: &str, events: Value) -> String {
    json!({"schema_version": "1.6.0", "id": id, "modified": "2026-11-01T00:00:00Z",
           "published": "2026-11-01T00:00:00Z", "summary": "proven-fix-widget mishandles input",
           "affected": [{"package": {"ecosystem": "PyPI", "name": "proven-fix-widget"},
                         "ranges": [{"type": "ECOSYSTEM", "events": events}]}]})
    .to_string()
}

/// A requirements pin is the one line to change: the fix is that edit. A fixed version
/// another advisory affects is not proved, and the fix names that advisory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_gets_its_edit_and_a_fix_another_advisory_affects_is_not_proved() {
    let env = Env::new(Backend::Sqlite).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("widget.jsonl");
    std::fs::write(
        &path,
        format!(
            "{}\n{}\n",
            advisory(
                "PYSEC-9999-21",
                json!([{"introduced": "0"}, {"fixed": "2.0.0"}])
            ),
            advisory(
                "PYSEC-9999-22",
                json!([{"introduced": "2.0.0"}, {"fixed": "2.1.0"}])
            ),
        ),
    )
    .expect("write");
    import(&env, &[path.display().to_string()]);
    for (head, fixed, proved) in [("1.4.0", "2.0.0", false), ("2.0.3", "2.1.0", true)] {
        let (repo, base) = change(
            &[("requirements.txt", "six==1.16.0\n".to_string())],
            &[(
                "requirements.txt",
                format!("six==1.16.0\nproven-fix-widget=={head}\n"),
            )],
        );
        let found = findings_of(&env, &repo, &base, "proven-fix-widget");
        assert_eq!(found.len(), 1, "{found:#?}");
        let p = &found[0]["fix"]["proposed"];
        assert_eq!(
            (p["version"].as_str(), p["proved"].as_bool()),
            (Some(fixed), Some(proved)),
            "{p:#}"
        );
        assert_eq!(p["edits"][0]["path"], "requirements.txt");
        assert_eq!(
            p["edits"][0]["old_text"],
            format!("proven-fix-widget=={head}")
        );
        assert_eq!(
            p["edits"][0]["new_text"],
            format!("proven-fix-widget=={fixed}")
        );
        assert_eq!(p["edits"][0]["lines"]["start"], 2);
        assert!(p.get("command").is_none(), "{p:#}");
        if !proved {
            assert_eq!(
                p["reason"], "at proven-fix-widget 2.0.0 still matches PYSEC-9999-22",
                "{p:#}"
            );
        }
        // Every format says it.
        let text =
            crate::common::text(&env.review(repo.path(), &base, &["--format", "markdown"])).0;
        assert!(text.contains(&format!("Fix to {fixed}")), "{text}");
    }
    env.cleanup().await;
}
