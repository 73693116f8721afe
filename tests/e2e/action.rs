//! The Action as a clean runner runs it: every step of `action.yml` in order, each under
//! `env -i` with an empty home and only the variables a runner gives (the `uses:` cache step
//! emulated as actions/cache restores and saves by key), against a stand-in of GitHub's API,
//! a loopback release server holding Proven's archive, and a loopback stand-in of the
//! advisory sources (an OSV per-ecosystem export, CISA KEV, FIRST EPSS gzipped). It never
//! compiles Proven; a second run the same day syncs nothing (the cache holds the day's
//! advisories). Prints the time from start to posted review of each run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{FileServer, data, text};
use crate::github_standin::{GitHubStandIn, StandInConfig, app_key};

const REPO: &str = "acme/app";
const VERSION: &str = "0.1.0";
const ARCHIVE: &str = "proven-0.1.0-x86_64-unknown-linux-gnu.tar.gz";

fn sh(cmd: &mut Command) {
    let out = cmd.output().expect("run");
    assert!(out.status.success(), "{cmd:?}: {:?}", text(&out));
}

/// The release as the release workflow publishes it: `vVERSION/ARCHIVE` holding `proven`,
/// and its sum (what the action's `release/SHA256SUMS` pins).
fn release(root: &Path) -> String {
    let dir = root.join(format!("v{VERSION}"));
    std::fs::create_dir_all(&dir).expect("release dir");
    let stage = root.join("stage");
    std::fs::create_dir_all(&stage).expect("stage");
    std::fs::copy(env!("CARGO_BIN_EXE_proven"), stage.join("proven")).expect("binary");
    sh(Command::new("tar")
        .args(["-I", "gzip -1", "-cf"])
        .arg(dir.join(ARCHIVE))
        .arg("-C")
        .arg(&stage)
        .arg("proven"));
    std::fs::remove_dir_all(&stage).expect("stage");
    let out = Command::new("sha256sum")
        .arg(dir.join(ARCHIVE))
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("sum")
        .to_string()
}

/// OSV's PyPI export (`PyPI/all.zip`, one record a file), CISA KEV, and FIRST EPSS as
/// FIRST publishes it (`.csv.gz`), from the data kit.
fn advisory_sources(root: &Path) {
    std::fs::create_dir_all(root.join("PyPI")).expect("dir");
    sh(Command::new("python3")
        .arg("-c")
        .arg(
            "import json, sys, zipfile\n\
         with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z:\n\
         \x20   for line in open(sys.argv[1]):\n\
         \x20       if line.strip():\n\
         \x20           z.writestr(json.loads(line)['id'] + '.json', line)\n",
        )
        .arg(data("advisories/osv-pypi-pypa.jsonl"))
        .arg(root.join("PyPI/all.zip")));
    std::fs::copy(
        data("advisories/kev.json"),
        root.join("known_exploited_vulnerabilities.json"),
    )
    .expect("kev");
    let epss = std::fs::read_to_string(data("advisories/epss.csv")).expect("epss");
    let head: String = epss
        .lines()
        .take(20_000)
        .map(|l| format!("{l}\n"))
        .collect();
    let path = root.join("epss_scores-current.csv");
    std::fs::write(&path, head).expect("epss");
    sh(Command::new("gzip").arg("-f").arg(&path));
}

/// A runner: what each step sees, the action's checkout, the cache service's store.
struct Runner {
    action: PathBuf,
    workspace: PathBuf,
    temp: PathBuf,
    home: PathBuf,
    cache: PathBuf,
    inputs: HashMap<String, String>,
    vars: Vec<(String, String)>,
}

impl Runner {
    /// Resolves every `${{ … }}` in `s` (the expressions `action.yml` uses).
    fn resolve(&self, s: &str, outputs: &HashMap<String, String>, defaults: &Value) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("closed expression") + start;
            let expr = rest[start + 3..end].trim();
            let value = if let Some(name) = expr.strip_prefix("inputs.") {
                self.inputs.get(name).cloned().unwrap_or_else(|| {
                    let d = defaults[name]["default"].as_str().unwrap_or_default();
                    self.resolve(d, outputs, defaults)
                })
            } else if let Some(key) = expr.strip_prefix("steps.") {
                outputs.get(key).cloned().unwrap_or_default()
            } else {
                match expr {
                    "github.action_path" => self.action.display().to_string(),
                    "github.action_repository" => "acme/proven".into(),
                    "github.workspace" => self.workspace.display().to_string(),
                    "github.token" => "ghs_workflow".into(),
                    "runner.temp" => self.temp.display().to_string(),
                    other => {
                        panic!("action.yml uses an expression the runner stand-in lacks: {other}")
                    }
                }
            };
            out.push_str(&value);
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// Runs every step; returns each `run` step's output and the last one's exit code.
    fn run(&self) -> (Option<i32>, String) {
        let action: Value = serde_saphyr::from_str(
            &std::fs::read_to_string(self.action.join("action.yml")).expect("action.yml"),
        )
        .expect("YAML");
        let defaults = &action["inputs"];
        let mut outputs: HashMap<String, String> = HashMap::new();
        let mut env_file_vars: Vec<(String, String)> = Vec::new();
        let mut saves: Vec<(PathBuf, String)> = Vec::new();
        let mut log = String::new();
        let mut code = None;
        for (i, step) in action["runs"]["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .enumerate()
        {
            if let Some(uses) = step["uses"].as_str() {
                assert!(
                    uses.starts_with("actions/cache@"),
                    "an unexpected action: {uses}"
                );
                let with = &step["with"];
                let path = PathBuf::from(self.resolve(
                    with["path"].as_str().expect("path"),
                    &outputs,
                    defaults,
                ));
                let key = self.resolve(with["key"].as_str().expect("key"), &outputs, defaults);
                let prefix = with["restore-keys"]
                    .as_str()
                    .map(|k| self.resolve(k, &outputs, defaults));
                let mut hit = self.cache.join(&key);
                if !hit.exists()
                    && let Some(prefix) = prefix
                {
                    let mut keys: Vec<PathBuf> = std::fs::read_dir(&self.cache)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .map(|e| e.path())
                        .filter(|p| {
                            p.file_name()
                                .and_then(|n| n.to_str())
                                .is_some_and(|n| n.starts_with(&prefix))
                        })
                        .collect();
                    keys.sort();
                    if let Some(latest) = keys.pop() {
                        hit = latest;
                    }
                }
                if hit.exists() {
                    std::fs::create_dir_all(path.parent().expect("parent")).expect("parent");
                    sh(Command::new("cp").arg("-a").arg(&hit).arg(&path));
                    log.push_str(&format!("cache restored from {}\n", hit.display()));
                }
                saves.push((path, key));
                continue;
            }
            let output_file = self.temp.join(format!("output-{i}"));
            let env_file = self.temp.join(format!("env-{i}"));
            std::fs::write(&output_file, "").expect("output file");
            std::fs::write(&env_file, "").expect("env file");
            let mut cmd = Command::new("/usr/bin/bash");
            cmd.env_clear()
                .arg("-c")
                .arg(step["run"].as_str().expect("run"))
                .current_dir(match step["working-directory"].as_str() {
                    Some(d) => PathBuf::from(self.resolve(d, &outputs, defaults)),
                    None => self.workspace.clone(),
                })
                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                .env("HOME", &self.home)
                .env("RUNNER_TEMP", &self.temp)
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", "X64")
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_ENV", &env_file)
                .envs(self.vars.iter().map(|(k, v)| (k, v)))
                .envs(env_file_vars.iter().map(|(k, v)| (k, v)));
            for (k, v) in step["env"].as_object().into_iter().flatten() {
                cmd.env(
                    k,
                    self.resolve(v.as_str().unwrap_or_default(), &outputs, defaults),
                );
            }
            let out = cmd.output().expect("run the step");
            let (stdout, stderr) = text(&out);
            log.push_str(&format!(
                "== {}\n{stdout}{stderr}",
                step["name"].as_str().unwrap_or("?")
            ));
            code = out.status.code();
            for line in std::fs::read_to_string(&output_file)
                .unwrap_or_default()
                .lines()
            {
                if let (Some(id), Some((k, v))) = (step["id"].as_str(), line.split_once('=')) {
                    outputs.insert(format!("{id}.outputs.{k}"), v.to_string());
                }
            }
            for line in std::fs::read_to_string(&env_file)
                .unwrap_or_default()
                .lines()
            {
                if let Some((k, v)) = line.split_once('=') {
                    env_file_vars.push((k.to_string(), v.to_string()));
                }
            }
            if code != Some(0) {
                break;
            }
        }
        // The cache's post step: a key not yet stored is saved.
        for (path, key) in saves {
            if path.exists() && !self.cache.join(&key).exists() {
                sh(Command::new("cp")
                    .arg("-a")
                    .arg(&path)
                    .arg(self.cache.join(&key)));
            }
        }
        (code, log)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_action_runs_a_released_proven_on_a_clean_runner_with_synced_cached_advisories() {
    let root = tempfile::tempdir().expect("tempdir");
    let releases = root.path().join("releases");
    let sum = release(&releases);
    let sources = root.path().join("sources");
    advisory_sources(&sources);
    let release_server = FileServer::start(&releases);
    let source_server = FileServer::start(&sources);
    // The action's checkout at a released tag: action.yml and the sums it pins.
    let action = root.path().join("action");
    std::fs::create_dir_all(action.join("release")).expect("action dir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../action.yml"),
        action.join("action.yml"),
    )
    .expect("action.yml");
    std::fs::write(
        action.join("release/SHA256SUMS"),
        format!("{sum}  {ARCHIVE}\n"),
    )
    .expect("sums");

    let (key, public) = app_key(root.path());
    let _ = key;
    let standin = GitHubStandIn::start(StandInConfig {
        app_id: 1,
        app_public_key: public,
        installations: HashMap::new(),
        workflow_token: Some("ghs_workflow".into()),
        read_only_token: None,
        token_ttl_secs: 3600,
    })
    .await;
    standin.set_diff(REPO, 5, &[("requirements.txt", 1)]);
    // The pull request lowers flask into three advisories' ranges.
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", "flask==2.3.3\n");
    let base = repo.commit("base");
    repo.write("requirements.txt", "flask==0.12\n");
    let head = repo.commit("lower flask");
    let event = root.path().join("event.json");
    std::fs::write(
        &event,
        json!({"action": "opened", "number": 5,
               "repository": {"full_name": REPO},
               "pull_request": {"number": 5, "base": {"ref": "main", "sha": base},
                                "head": {"ref": "feature", "sha": head}}})
        .to_string(),
    )
    .expect("event");
    let temp = root.path().join("runner-temp");
    let home = root.path().join("home");
    let cache = root.path().join("cache-service");
    for d in [&temp, &home, &cache] {
        std::fs::create_dir_all(d).expect("dir");
    }
    let src = format!("http://127.0.0.1:{}", source_server.port);
    let runner = Runner {
        action,
        workspace: repo.path().to_path_buf(),
        temp: temp.clone(),
        home,
        cache,
        inputs: HashMap::from([
            (
                "release-url".to_string(),
                format!("http://127.0.0.1:{}", release_server.port),
            ),
            (
                "advisory-sources".to_string(),
                format!(
                    "{src}/PyPI/all.zip {src}/known_exploited_vulnerabilities.json {src}/epss_scores-current.csv.gz"
                ),
            ),
            ("agents".to_string(), "off".to_string()),
        ]),
        vars: vec![
            ("GITHUB_ACTIONS".into(), "true".into()),
            ("GITHUB_EVENT_NAME".into(), "pull_request".into()),
            ("GITHUB_EVENT_PATH".into(), event.display().to_string()),
            ("GITHUB_REPOSITORY".into(), REPO.into()),
            ("GITHUB_API_URL".into(), standin.url.clone()),
            ("GITHUB_SERVER_URL".into(), "https://github.com".into()),
            ("GITHUB_WORKSPACE".into(), repo.path().display().to_string()),
            ("GITHUB_REF".into(), "refs/pull/5/merge".into()),
            ("GITHUB_SHA".into(), head.clone()),
            ("GITHUB_RUN_ID".into(), "77".into()),
        ],
    };
    let mut timings = Vec::new();
    for round in 0..2 {
        // A new job: the runner's temporary directory starts empty.
        let _ = std::fs::remove_dir_all(&temp);
        std::fs::create_dir_all(&temp).expect("temp");
        let started = Instant::now();
        let (code, log) = runner.run();
        timings.push(started.elapsed());
        assert_eq!(
            code,
            Some(1),
            "round {round}: findings fail the job:\n{log}"
        );
        assert!(!log.contains("Compiling"), "never compiled:\n{log}");
        if round == 0 {
            assert!(log.contains("change set "), "the first run syncs:\n{log}");
        } else {
            assert!(
                log.contains("cache restored") && log.contains("already synced today"),
                "the second run the same day uses the cache:\n{log}"
            );
        }
        let posted = standin.reviews(REPO, 5);
        assert_eq!(
            posted.len(),
            1,
            "round {round}: one review, updated in place: {posted:#?}"
        );
        let body = posted[0]["body"].as_str().unwrap_or_default();
        assert!(
            body.contains("PYSEC-2023-62") || body.contains("PYSEC-2018-66"),
            "{body}"
        );
    }
    let runs: Vec<Value> = standin
        .check_runs()
        .into_iter()
        .filter(|r| r["head_sha"] == head.as_str())
        .collect();
    assert!(
        runs.iter()
            .all(|r| r["status"] == "completed" && r["conclusion"] == "failure"),
        "{runs:#?}"
    );
    assert_eq!(standin.sarifs().len(), 2, "one SARIF a run");
    let violations = standin.violations();
    assert!(violations.is_empty(), "{violations:#?}");
    eprintln!(
        "the Action, start to posted review: first run {:.1} s (download, sync), second run {:.1} s (cached)",
        timings[0].as_secs_f64(),
        timings[1].as_secs_f64()
    );
    assert!(timings.iter().all(|t| *t < Duration::from_secs(600)));
}

/// A sum that does not match the archive: the action refuses to run it, by name.
#[test]
fn an_archive_whose_sum_does_not_match_is_never_run() {
    let root = tempfile::tempdir().expect("tempdir");
    let releases = root.path().join("releases");
    release(&releases);
    let server = FileServer::start(&releases);
    let action = root.path().join("action");
    std::fs::create_dir_all(action.join("release")).expect("dir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../action.yml"),
        action.join("action.yml"),
    )
    .expect("action.yml");
    std::fs::write(
        action.join("release/SHA256SUMS"),
        format!("{}  {ARCHIVE}\n", "0".repeat(64)),
    )
    .expect("sums");
    let temp = root.path().join("temp");
    let home = root.path().join("home");
    let cache = root.path().join("cache");
    for d in [&temp, &home, &cache] {
        std::fs::create_dir_all(d).expect("dir");
    }
    let runner = Runner {
        action,
        workspace: root.path().to_path_buf(),
        temp,
        home,
        cache,
        inputs: HashMap::from([(
            "release-url".to_string(),
            format!("http://127.0.0.1:{}", server.port),
        )]),
        vars: Vec::new(),
    };
    let (code, log) = runner.run();
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains("does not match the sum pinned in this action: refusing to run it"),
        "{log}"
    );
}
