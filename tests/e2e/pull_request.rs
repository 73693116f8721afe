//! A pull request as GitHub shows it: the change is what the head's branch did since it left
//! the base branch (the merge base), never what the base branch did after. Reviewed through
//! the CLI, the Action (run as a runner runs it) and the App (a signed delivery), the same
//! branch gives the same answer: no finding, and the report names the merge base.

use proven_change::testing::TestRepo;
use proven_store::testing::Backend;
use serde_json::Value;

use crate::common::{Env, data, import, json, text};

/// The scenario of the issue: `main` pins pyyaml 5.3 (in advisories' ranges) when `feature`
/// leaves it; `feature` changes only `app.py`; `main` then raises pyyaml to 5.4. Two-dot,
/// the review would blame `feature` for "lowering" pyyaml from 5.4 to 5.3.
pub struct Branches {
    pub repo: TestRepo,
    /// Where `feature` left `main`.
    pub fork_point: String,
    /// `main`'s tip, after the raise.
    pub main: String,
    /// `feature`'s tip.
    pub feature: String,
}

pub fn pyyaml_branches() -> Branches {
    let repo = TestRepo::new();
    repo.write("requirements.txt", "pyyaml==5.3\nflask==2.3.3\n")
        .write(
            "app.py",
            "import yaml\n\n\ndef load(text):\n    return yaml.safe_load(text)\n",
        );
    let fork_point = repo.commit("main: the app");
    repo.branch("main").branch("feature").checkout("feature");
    repo.write(
        "app.py",
        "import yaml\n\n\ndef load(text):\n    return yaml.safe_load(text) or {}\n",
    );
    let feature = repo.commit("feature: an empty document loads as {}");
    repo.checkout("main");
    repo.write("requirements.txt", "pyyaml==5.4\nflask==2.3.3\n");
    let main = repo.commit("main: raise pyyaml to 5.4");
    // The working copy is the feature branch, as a pull request's checkout is.
    repo.checkout("feature");
    Branches {
        repo,
        fork_point,
        main,
        feature,
    }
}

fn pypi() -> Vec<String> {
    vec![data("advisories/osv-pypi-pypa.jsonl").display().to_string()]
}

/// The base the report names: the merge base compared from, and main's own tip.
pub fn assert_names_merge_base(doc: &Value, b: &Branches) {
    assert_eq!(
        doc["base"]["commit"],
        b.fork_point.as_str(),
        "{:#}",
        doc["base"]
    );
    assert_eq!(doc["base"]["diff"], "merge-base");
    assert_eq!(doc["base"]["tip"], b.main.as_str());
    assert_eq!(doc["head"]["commit"], b.feature.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_reviews_a_branch_from_its_merge_base() {
    let env = Env::new(Backend::Sqlite).await;
    import(&env, &pypi());
    let b = pyyaml_branches();
    let out = env.review(
        b.repo.path(),
        "main",
        &["--head", "feature", "--format", "json"],
    );
    let doc = json(&out);
    let findings = doc["findings"].as_array().expect("findings");
    assert!(
        findings.is_empty(),
        "main's raise is not the change's: {findings:#?}"
    );
    assert_names_merge_base(&doc, &b);
    // No model is configured and the operator did not choose the dependency-only plan: a
    // code change whose plan needs the agents is partial, never a clean "no finding".
    assert_eq!(doc["status"], "partial", "{doc:#}");
    assert_eq!(out.status.code(), Some(8), "partial has its own exit code");
    assert!(
        doc["plan"]["partial"]
            .as_str()
            .is_some_and(|p| p.contains("none is configured")),
        "{:#}",
        doc["plan"]
    );
    assert!(
        doc["plan"]["left_out"].to_string().contains("agents = off"),
        "the plan says how to choose the dependency-only plan: {:#}",
        doc["plan"]
    );
    let out = env
        .proven()
        .env("PROVEN_AGENTS", "off")
        .args(["review", "--repo"])
        .arg(b.repo.path())
        .args(["--base", "main", "--head", "feature", "--format", "json"])
        .output()
        .expect("run proven");
    let chosen = json(&out);
    assert_eq!(chosen["status"], "complete", "{chosen:#}");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        chosen["plan"]["left_out"]
            .to_string()
            .contains("as the operator chose"),
        "{:#}",
        chosen["plan"]
    );
    assert!(
        doc["dependency_files"]
            .as_array()
            .is_none_or(|f| f.is_empty()),
        "requirements.txt is not part of the change: {:#}",
        doc["dependency_files"]
    );
    // Every rendering says which base it compared from.
    let out = env.review(b.repo.path(), "main", &["--head", "feature"]);
    let (plain, _) = text(&out);
    assert!(
        plain.contains(&format!(
            "base main ({}, the merge base; main itself is at {})",
            &b.fork_point[..12],
            &b.main[..12]
        )),
        "{plain}"
    );
    let out = env.review(
        b.repo.path(),
        "main",
        &["--head", "feature", "--format", "markdown"],
    );
    let (md, _) = text(&out);
    assert!(md.contains("the merge base; `main` itself is at"), "{md}");

    // Two-dot, asked for by name, keeps the old meaning: main's later raise reads as the
    // change lowering pyyaml into the advisories' ranges.
    let out = env.review(
        b.repo.path(),
        "main",
        &["--head", "feature", "--diff", "two-dot", "--format", "json"],
    );
    let doc = json(&out);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    assert_eq!(doc["base"]["commit"], b.main.as_str());
    assert_eq!(doc["base"]["diff"], "two-dot");
    let findings = doc["findings"].as_array().expect("findings");
    assert!(
        !findings.is_empty()
            && findings
                .iter()
                .all(|f| f["package"]["name"] == "pyyaml" && f["package"]["new_version"] == "5.3"),
        "{findings:#?}"
    );
    env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unrelated_histories_stop_the_review_by_name_never_a_guess() {
    let env = Env::new(Backend::Sqlite).await;
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.commit("one");
    repo.branch("one");
    let other = TestRepo::new();
    other.write("requirements.txt", "pyyaml==5.3\n");
    let two = other.commit("two");
    let status = std::process::Command::new("git")
        .arg("-C")
        .arg(repo.path())
        .args(["fetch", "--quiet"])
        .arg(other.path())
        .arg(format!("{two}:refs/heads/two"))
        .status()
        .expect("git fetch");
    assert!(status.success());
    let out = env.review(repo.path(), "one", &["--head", "two", "--format", "json"]);
    let (stdout, stderr) = text(&out);
    // As a revision that does not exist: the input is named, exit 4, nothing looks clean.
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("no merge base of the base one")
            && stderr.contains("their histories share no commit")
            && stderr.contains("--diff two-dot"),
        "{stderr}"
    );
    // Two-dot, asked for, compares them as they are.
    let out = env.review(
        repo.path(),
        "one",
        &["--head", "two", "--diff", "two-dot", "--format", "json"],
    );
    let doc = json(&out);
    assert_eq!(doc["base"]["diff"], "two-dot", "{doc:#}");
    env.cleanup().await;
}

/// The demo's change: flask lowered from 2.3.3 to 0.12. The fix offered is the base's own
/// 2.3.3 (outside every range), never a 2.2.5 below what the base had; the advisories that
/// share that one edit are listed under one suggestion; how it came in is said in words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lowered_dependency_is_fixed_at_the_bases_own_version_in_one_suggestion() {
    let env = Env::new(Backend::Sqlite).await;
    import(&env, &pypi());
    let repo = TestRepo::new();
    repo.write("requirements.txt", "flask==2.3.3\n");
    let base = repo.commit("base");
    repo.write("requirements.txt", "flask==0.12\n");
    repo.commit("lower flask");
    let out = env
        .proven()
        .env("PROVEN_AGENTS", "off")
        .args(["review", "--repo"])
        .arg(repo.path())
        .args(["--base", &base, "--format", "json"])
        .output()
        .expect("run proven");
    let doc = json(&out);
    let findings = doc["findings"].as_array().expect("findings");
    assert!(findings.len() >= 2, "{findings:#?}");
    for f in findings {
        assert_eq!(f["fix"]["version"], "2.3.3", "{f:#}");
        assert!(
            f["fix"]["note"]
                .as_str()
                .is_some_and(|n| n.contains("the base's own version")),
            "{f:#}"
        );
    }
    let out = env
        .proven()
        .env("PROVEN_AGENTS", "off")
        .args(["review", "--repo"])
        .arg(repo.path())
        .args(["--base", &base, "--format", "github"])
        .output()
        .expect("run proven");
    let review = json(&out);
    let comments = review["comments"].as_array().expect("comments");
    assert_eq!(
        comments.len(),
        1,
        "one suggestion for one edit: {comments:#?}"
    );
    let body = comments[0]["body"].as_str().unwrap_or_default();
    assert!(
        body.contains(&format!("{} findings", findings.len())),
        "{body}"
    );
    assert!(body.contains("```suggestion\nflask==2.3.3\n```"), "{body}");
    let out = env
        .proven()
        .env("PROVEN_AGENTS", "off")
        .args(["review", "--repo"])
        .arg(repo.path())
        .args(["--base", &base])
        .output()
        .expect("run proven");
    let (plain, _) = text(&out);
    // A requirements file cannot tell a direct pin from a transitive one: said in words,
    // never "(unknown dependency; …)", which reads as if flask were unknown.
    assert!(
        plain.contains("(direct or transitive: not known; was 2.3.3)"),
        "{plain}"
    );
    env.cleanup().await;
}

/// The repository's ignore list (in the base's `proven.yaml`): an accepted advisory (named
/// by an alias) is shown apart with its reason in every format and fails nothing; an
/// expired entry ignores nothing and says so; an entry that matches nothing is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignore_entries_are_shown_apart_expire_and_name_what_matches_nothing() {
    let env = Env::new(Backend::Sqlite).await;
    import(&env, &pypi());
    let repo = TestRepo::new();
    repo.write("requirements.txt", "flask==2.3.3\n").write(
        "proven.yaml",
        "ignore:\n\
         \x20 - id: CVE-2023-30861\n\
         \x20   package: Flask\n\
         \x20   reason: send_file is never given user paths\n\
         \x20   expires: 2999-01-01\n\
         \x20 - id: PYSEC-2019-179\n\
         \x20   reason: accepted until the upgrade\n\
         \x20   expires: 2020-01-01\n\
         \x20 - id: GHSA-0000-0000-0000\n\
         \x20   reason: an advisory of another package\n",
    );
    let base = repo.commit("base");
    repo.write("requirements.txt", "flask==0.12\n");
    repo.commit("lower flask");
    let run = |format: &str| {
        env.proven()
            .env("PROVEN_AGENTS", "off")
            .args(["review", "--repo"])
            .arg(repo.path())
            .args(["--base", &base, "--format", format])
            .output()
            .expect("run proven")
    };
    let out = run("json");
    let doc = json(&out);
    assert_eq!(out.status.code(), Some(1), "the others still fail: {doc:#}");
    let ids = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|f| f["advisory"]["id"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let mut kept = ids(&doc["findings"]);
    kept.sort();
    assert_eq!(kept, ["PYSEC-2018-66", "PYSEC-2019-179"], "{doc:#}");
    let ignored = doc["ignored"].as_array().expect("ignored");
    assert_eq!(ignored.len(), 1, "{doc:#}");
    assert_eq!(ignored[0]["finding"]["advisory"]["id"], "PYSEC-2023-62");
    assert_eq!(ignored[0]["entry"], "CVE-2023-30861");
    assert_eq!(ignored[0]["reason"], "send_file is never given user paths");
    assert_eq!(
        doc["proof_counts"]["advisory"], 2,
        "an ignored finding is not counted"
    );
    let notes = doc["ignore_notes"].as_array().expect("notes");
    let status_of = |entry: &str| {
        notes
            .iter()
            .find(|n| n["entry"] == entry)
            .map(|n| n["status"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(status_of("PYSEC-2019-179").as_deref(), Some("expired"));
    assert_eq!(
        status_of("GHSA-0000-0000-0000").as_deref(),
        Some("unmatched")
    );

    let (plain, _) = text(&run("text"));
    assert!(
        plain.contains(
            "ignored by CVE-2023-30861, until 2999-01-01: send_file is never given user paths"
        ) && plain.contains("ignore entry PYSEC-2019-179 expired")
            && plain.contains("ignore entry GHSA-0000-0000-0000 unmatched"),
        "{plain}"
    );
    let (md, _) = text(&run("markdown"));
    assert!(
        md.contains("### Ignored by the repository's ignore list")
            && md.contains("`CVE-2023-30861`")
            && md.contains("`PYSEC-2019-179` expired")
            && md.contains("`GHSA-0000-0000-0000` unmatched"),
        "{md}"
    );
    let (html, _) = text(&run("html"));
    assert!(
        html.contains("<h2>Ignored by the repository&#x27;s ignore list")
            || html.contains("<h2>Ignored by the repository's ignore list"),
        "{html}"
    );
    assert!(
        html.contains("<code>GHSA-0000-0000-0000</code> unmatched"),
        "{html}"
    );
    let sarif = json(&run("sarif"));
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let suppressed: Vec<&Value> = results
        .iter()
        .filter(|r| r["suppressions"].is_array())
        .collect();
    assert_eq!(suppressed.len(), 1, "{results:#?}");
    assert_eq!(suppressed[0]["ruleId"], "PYSEC-2023-62");
    assert_eq!(suppressed[0]["suppressions"][0]["kind"], "external");
    assert!(
        suppressed[0]["suppressions"][0]["justification"]
            .as_str()
            .is_some_and(|j| j.contains("send_file is never given user paths"))
    );
    assert_eq!(
        sarif["runs"][0]["properties"]["ignore_notes"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let review = json(&run("github"));
    let body = review["body"].as_str().unwrap_or_default();
    assert!(
        body.contains("### Ignored by the repository's ignore list"),
        "{body}"
    );
    env.cleanup().await;
}
