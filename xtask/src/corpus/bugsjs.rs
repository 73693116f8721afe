//! Reading BugsJS (github.com/BugsJS: the bug-dataset repository and one repository per
//! project) and its cases.
//!
//! A project's repository carries tags per bug: `Bug-N` (the buggy revision), `Bug-N-test`
//! (the buggy revision with the fix's tests), `Bug-N-fix` (the buggy revision with the fix
//! of the code only), `Bug-N-full` (fix and tests) and `Bug-N-original` (the upstream fix
//! commit). A case: base = `Bug-N-full`'s tree; change = the files `Bug-N-test` and
//! `Bug-N-full` differ in (the fix: non-test files only) brought back to `Bug-N-test`'s
//! version, so the bug's tests exist on both sides; both commits carry `Bug-N-original`'s
//! time.
//!
//! The bug's tests are read from the dataset's own results
//! (`Projects/P/P-N.zip`: mocha's JSON of the `fixed-only-test-change` revision and of the
//! buggy one): the tests that fail with the fix's tests on the buggy code and did not fail
//! on the buggy revision itself, by mocha's full title. They run with the dataset's own
//! test command (`P_commands.csv`), its reporter replaced by mocha's `spec`, selected with
//! `--grep` (the command's own test files are kept: a project whose entry file requires the
//! others runs as the dataset ran it). Where the results do not read, the test files the
//! fix's test commit touched run whole.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::case::{self, CaseRepo, CaseSpec, Edit, git};
use super::{Case, Control, ProverTest};

/// BugsJS's ten projects (the dataset's name, the repository the BugsJS organisation
/// keeps): the default selection is the first [`LIMIT`] bugs by number of each (Bower
/// has 3, Shields 4: 47 cases), fixed here before any run.
pub const PROJECTS: [(&str, &str); 10] = [
    ("Bower", "https://github.com/BugsJS/bower"),
    ("Eslint", "https://github.com/BugsJS/eslint"),
    ("Express", "https://github.com/BugsJS/express"),
    ("Hessian.js", "https://github.com/BugsJS/hessian.js"),
    ("Hexo", "https://github.com/BugsJS/hexo"),
    ("Karma", "https://github.com/BugsJS/karma"),
    ("Mongoose", "https://github.com/BugsJS/mongoose"),
    ("Node-redis", "https://github.com/BugsJS/node_redis"),
    ("Pencilblue", "https://github.com/BugsJS/pencilblue"),
    ("Shields", "https://github.com/BugsJS/shields"),
];

/// The cases sessions studied (ran, read the misses of and changed Proven for: the trial's
/// three, then those docs/corpus-bugsjs.md names with a family found on them): the rest is
/// the held-out measure, reported apart ([`super::Case::studied`]). A case's measure taken
/// before it was studied stays a held-out one; a run after, studied.
pub const STUDIED: &[&str] = &[
    "Express-1",
    "Express-2",
    "Hessian.js-1",
    "Bower-1",
    "Bower-2",
    "Eslint-1",
    "Eslint-2",
    "Hexo-4",
    "Karma-1",
    "Karma-2",
    "Karma-3",
    "Karma-4",
    "Mongoose-1",
    "Mongoose-2",
    "Node-redis-1",
    "Node-redis-2",
    "Node-redis-3",
    "Node-redis-4",
    "Pencilblue-2",
    "Shields-2",
];

/// Bugs per project in the default selection.
pub const LIMIT: usize = 5;

/// The Node majors offered to the cases (images built by the corpus when
/// PROVEN_SANDBOX_IMAGES names none): from the oldest its projects' CI matrices allow to
/// today's; each case runs on the one its own declarations choose.
pub const NODE_ERAS: &[&str] = &["4", "6", "8", "10", "12", "14", "16", "18", "22"];

/// The Node version BugsJS's framework uses when a bug names none (myTest.py: `n 8.0.0`).
const DEFAULT_NODE: &str = "8.0.0";

/// A checkout or a git directory of BugsJS/bug-dataset.
pub struct Dataset {
    path: PathBuf,
    git: bool,
}

impl Dataset {
    pub fn open(path: &Path) -> Result<Dataset, String> {
        if path.join("Projects.csv").is_file() {
            return Ok(Dataset {
                path: path.to_path_buf(),
                git: false,
            });
        }
        for dir in [path.to_path_buf(), path.join(".git")] {
            if git(&dir, &["cat-file", "-e", "HEAD:Projects.csv"]).is_ok() {
                return Ok(Dataset {
                    path: dir,
                    git: true,
                });
            }
        }
        Err(format!(
            "{}: neither a BugsJS bug-dataset checkout (no Projects.csv) nor its git directory",
            path.display()
        ))
    }

    pub fn revision(&self) -> String {
        let dir = if self.git {
            self.path.clone()
        } else {
            self.path.join(".git")
        };
        git(&dir, &["rev-parse", "HEAD"])
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown (not a git checkout)".into())
    }

    fn read_bytes(&self, rel: &str) -> Option<Vec<u8>> {
        if self.git {
            let out = std::process::Command::new("git")
                .arg("--git-dir")
                .arg(&self.path)
                .args(["show", &format!("HEAD:{rel}")])
                .output()
                .ok()?;
            out.status.success().then_some(out.stdout)
        } else {
            std::fs::read(self.path.join(rel)).ok()
        }
    }

    fn read(&self, rel: &str) -> Option<String> {
        self.read_bytes(rel)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// The project's bug numbers (its `_bugs.csv`), ascending.
    pub fn bugs(&self, project: &str) -> Vec<u32> {
        let mut n: Vec<u32> = self
            .read(&format!("Projects/{project}/{project}_bugs.csv"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split(';').next()?.trim().parse().ok())
            .collect();
        n.sort_unstable();
        n.dedup();
        n
    }

    pub fn bug(&self, project: &str, number: u32) -> Result<JsBug, String> {
        let github_url = PROJECTS
            .iter()
            .find(|(p, _)| *p == project)
            .map(|(_, u)| u.to_string())
            .ok_or_else(|| format!("BugsJS has no project {project:?}"))?;
        let commands = self
            .read(&format!("Projects/{project}/{project}_commands.csv"))
            .ok_or_else(|| format!("Projects/{project}/{project}_commands.csv is missing"))?;
        let row = commands
            .lines()
            .map(|l| l.split(';').collect::<Vec<_>>())
            .find(|cols| cols.first().and_then(|c| c.trim().parse::<u32>().ok()) == Some(number))
            .ok_or_else(|| format!("{project}_commands.csv has no bug {number}"))?;
        let col = |i: usize| row.get(i).map(|s| s.trim().to_string()).unwrap_or_default();
        let names = self
            .read_bytes(&format!("Projects/{project}/{project}-{number}.zip"))
            .map(|z| bug_tests(&z))
            .unwrap_or_default();
        Ok(JsBug {
            project: project.to_string(),
            number,
            github_url,
            command: col(1),
            node: col(3),
            pre_command: col(4),
            names,
            test_files: OnceLock::new(),
            setup_files: OnceLock::new(),
            declared: OnceLock::new(),
            requires: OnceLock::new(),
        })
    }
}

/// One bug of BugsJS.
pub struct JsBug {
    pub project: String,
    pub number: u32,
    pub github_url: String,
    /// The dataset's test command (mocha, its JSON reporter).
    pub command: String,
    /// The dataset's Node version for the bug ("" for its default).
    pub node: String,
    /// A command the dataset runs before the tests (an extra `npm install`).
    pub pre_command: String,
    /// The bug's tests by mocha full title (empty when the dataset's results do not read).
    pub names: Vec<String>,
    /// The test files the fix's test commit touched (read when the case is built).
    test_files: OnceLock<Vec<String>>,
    /// The files of the dataset's command that declare no test (mocha globals, helpers),
    /// loaded before the test files where those run whole (read when the case is built).
    setup_files: OnceLock<Vec<String>>,
    /// The `it` titles the fix's test files declare (read when the case is built).
    declared: OnceLock<Vec<String>>,
    /// The modules the project's own mocha configuration requires (read when the case is
    /// built; [`gruntfile_mocha_requires`]).
    requires: OnceLock<Vec<String>>,
}

/// The cases: the first `limit` bugs by number of each project (`projects`, or every one
/// of [`PROJECTS`]), in rounds.
pub fn selection(data: &Dataset, projects: &[String], limit: usize) -> Result<Vec<JsBug>, String> {
    let projects: Vec<String> = if projects.is_empty() {
        PROJECTS.iter().map(|(p, _)| p.to_string()).collect()
    } else {
        // Named as the dataset does, case-insensitively (`express` is Express).
        projects
            .iter()
            .map(|p| {
                PROJECTS
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(p))
                    .map(|(name, _)| name.to_string())
                    .ok_or_else(|| format!("BugsJS has no project {p:?}"))
            })
            .collect::<Result<_, _>>()?
    };
    let mut per_project = Vec::new();
    for p in &projects {
        let numbers = data.bugs(p);
        if numbers.is_empty() {
            return Err(format!("BugsJS has no bugs of project {p:?}"));
        }
        let bugs = numbers
            .into_iter()
            .take(limit)
            .map(|n| data.bug(p, n))
            .collect::<Result<Vec<_>, _>>()?;
        per_project.push(bugs);
    }
    Ok(super::in_rounds(per_project))
}

/// The bug's tests from the dataset's zip of a bug: the full titles that fail on the
/// fix's tests with the buggy code (`only_test_changes/`) and not on the buggy revision
/// (`buggy/`); hooks are not tests.
pub fn bug_tests(zip_bytes: &[u8]) -> Vec<String> {
    let Some(with_tests) = inner_results(zip_bytes, "only_test_changes/test_results.json.zip")
    else {
        return Vec::new();
    };
    let buggy = inner_results(zip_bytes, "buggy/test_results.json.zip").unwrap_or_default();
    let before: Vec<String> = failures(&buggy).into_iter().map(|f| f.title).collect();
    let new: Vec<Failure> = failures(&with_tests)
        .into_iter()
        .filter(|f| !before.contains(&f.title) && !f.title.contains("\" hook"))
        .collect();
    // A test the dataset's run stopped at mocha's time limit shows the load of that run,
    // not the bug (Hessian.js-1: binary.test.js's Java round trips timed out beside the
    // bug's own assertion): where the bug shows otherwise, such failures are left out.
    let shown = new.iter().any(|f| !f.timeout);
    new.into_iter()
        .filter(|f| !(shown && f.timeout))
        .map(|f| f.title)
        .collect()
}

/// A failure of mocha's JSON report.
#[derive(Debug, PartialEq)]
struct Failure {
    /// Its full title.
    title: String,
    /// Whether mocha stopped it at its time limit ("Timeout of 2000ms exceeded").
    timeout: bool,
}

/// test_results.json inside the zip inside the bug's zip.
fn inner_results(zip_bytes: &[u8], name: &str) -> Option<String> {
    let mut outer = zip::ZipArchive::new(std::io::Cursor::new(zip_bytes)).ok()?;
    let mut inner_bytes = Vec::new();
    outer
        .by_name(name)
        .ok()?
        .read_to_end(&mut inner_bytes)
        .ok()?;
    let mut inner = zip::ZipArchive::new(std::io::Cursor::new(inner_bytes)).ok()?;
    let mut text = String::new();
    inner
        .by_name("test_results.json")
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// The full titles of mocha's JSON `failures`. The report may sit among what the tests
/// printed (log lines before it, a coverage reporter's output after it): it is the first
/// object that parses and has `failures`; where none does, it is read by the `"fullTitle"`
/// lines of its `"failures": [` array.
fn failures(text: &str) -> Vec<Failure> {
    let mut out: Vec<Failure> = Vec::new();
    let mut push = |t: &str, message: &str| {
        if !out.iter().any(|o| o.title == t) {
            out.push(Failure {
                title: t.to_string(),
                timeout: message.starts_with("Timeout of ") && message.contains("ms exceeded"),
            });
        }
    };
    // The first object (of the first few that open with a key) that parses and has
    // `failures`: mocha's report.
    let report = text
        .match_indices('{')
        .map(|(i, _)| i)
        .filter(|&i| text[i + 1..].trim_start().starts_with('"'))
        .take(50)
        .find_map(|i| {
            serde_json::Deserializer::from_str(&text[i..])
                .into_iter::<serde_json::Value>()
                .next()
                .and_then(Result::ok)
                .filter(|doc| doc.get("failures").is_some_and(|f| f.is_array()))
        });
    if let Some(doc) = report {
        for f in doc["failures"].as_array().into_iter().flatten() {
            if let Some(t) = f["fullTitle"].as_str() {
                push(t, f["err"]["message"].as_str().unwrap_or_default());
            }
        }
        return out;
    }
    let Some(at) = text.find("\"failures\": [") else {
        return out;
    };
    let section = &text[at..];
    let section = &section[..section.find("\"passes\": [").unwrap_or(section.len())];
    for line in section.lines() {
        if let Some(rest) = line.trim().strip_prefix("\"fullTitle\": ")
            && let Ok(t) = serde_json::from_str::<String>(rest.trim_end_matches(','))
        {
            push(&t, "");
        }
    }
    out
}

/// Escapes what a JavaScript regular expression treats specially.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The modules a Gruntfile's `mochaTest` options require (`require: ['babel/register']`
/// or one name), as the project's own runner loads them before its tests: Karma-1's
/// specs are ES modules its Gruntfile compiles through `babel/register`, which the
/// dataset's command for it (unlike Karma-2's) leaves out, so no spec loads. Read as text,
/// as [`proven_sandbox::suite`] reads a Gruntfile's aliases.
pub fn gruntfile_mocha_requires(gruntfile: &str) -> Vec<String> {
    let Some(at) = gruntfile.find("mochaTest") else {
        return Vec::new();
    };
    let block = &gruntfile[at..];
    let block = &block[..block.len().min(1500)];
    let Some(key) = block.find("require") else {
        return Vec::new();
    };
    let value = block[key + "require".len()..]
        .trim_start_matches(['\'', '"'])
        .trim_start();
    let Some(value) = value.strip_prefix(':') else {
        return Vec::new();
    };
    let value = value.trim_start();
    let list = match value.strip_prefix('[') {
        Some(rest) => &rest[..rest.find(']').unwrap_or(0)],
        None => value.split([',', '\n', '}']).next().unwrap_or_default(),
    };
    list.split(',')
        .map(|w| w.trim().trim_matches(['\'', '"']).trim())
        .filter(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./@".contains(c))
        })
        .map(str::to_string)
        .collect()
}

/// The dataset's command with `--require M` for each of `requires` it does not load
/// already, after the runner.
pub fn with_requires(dataset_command: &str, requires: &[String]) -> String {
    let missing: Vec<&String> = requires
        .iter()
        .filter(|m| {
            !dataset_command.split_whitespace().any(|w| {
                w == m.as_str() || w.ends_with(&format!(":{m}")) || w.ends_with(&format!("={m}"))
            })
        })
        .collect();
    if missing.is_empty() {
        return dataset_command.to_string();
    }
    let mut words: Vec<String> = Vec::new();
    let mut added = false;
    for w in dataset_command.split_whitespace() {
        words.push(w.to_string());
        if !added && w.contains("mocha") {
            for m in &missing {
                words.extend(["--require".to_string(), m.to_string()]);
            }
            added = true;
        }
    }
    words.join(" ")
}

/// A word quoted for `sh -c`.
fn sh_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The dataset's command made to run `grep` (a regular expression over full titles;
/// None: every test) with mocha's `spec` reporter, and `files` in place of the command's
/// own test files when given.
pub fn mocha_command(dataset_command: &str, grep: Option<&str>, files: &[String]) -> String {
    let (mut out, own) = command_parts(dataset_command);
    if files.is_empty() {
        out.extend(own);
    }
    out.extend(["--reporter".to_string(), "spec".to_string()]);
    if let Some(g) = grep {
        out.extend(["--grep".to_string(), sh_quote(g)]);
    }
    out.extend(files.iter().cloned());
    out.join(" ")
}

/// The dataset's command in two parts: the runner with its options (the reporter and the
/// grep left out), and its own test files or patterns.
fn command_parts(dataset_command: &str) -> (Vec<String>, Vec<String>) {
    let words: Vec<&str> = dataset_command.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    let mut own: Vec<String> = Vec::new();
    let mut i = 0;
    let mut seen_runner = false;
    while i < words.len() {
        let w = words[i];
        i += 1;
        if !seen_runner {
            seen_runner = w.contains("mocha");
            out.push(w.to_string());
            continue;
        }
        if matches!(w, "-R" | "--reporter" | "-g" | "--grep") {
            i += 1;
            continue;
        }
        if w.starts_with("--reporter=") || w.starts_with("--grep=") {
            continue;
        }
        if w.starts_with('-') {
            out.push(w.to_string());
            // Options whose value is the next word.
            if matches!(
                w,
                "--require"
                    | "-r"
                    | "--timeout"
                    | "-t"
                    | "--compilers"
                    | "--ui"
                    | "-u"
                    | "--slow"
                    | "-s"
                    | "--globals"
                    | "--opts"
            ) && i < words.len()
            {
                out.push(words[i].to_string());
                i += 1;
            }
            continue;
        }
        own.push(w.to_string());
    }
    (out, own)
}

/// The files the dataset's command loads that declare no test, in the order mocha loads
/// them: a file named, or matched by a pattern, or in a folder named or matched (mocha
/// loads a folder's own files, not its subfolders'). Karma's `./test/unit/*` loads
/// `mocha-globals.js`, which makes `sinon` and `expect` globals every spec uses: a spec run
/// alone without it fails on the fixed code too. `paths` are the tree's files; `read` gives
/// one's source.
///
/// A bug's test file that itself reads as declaring no test (ESLint's rule tests, whose
/// `ruleTester.run(…)` declares them) shows the reading blind to the project's tests: its
/// every rule test would be taken for a helper and run beside the bug's (Eslint-5 ran the
/// whole rules suite so). No file is then taken for setup.
pub fn setup_files(
    dataset_command: &str,
    paths: &[String],
    tests: &[String],
    read: impl Fn(&str) -> Option<String>,
) -> Vec<String> {
    let declares_tests = |source: &str| {
        !declared_titles(source).is_empty()
            || ["describe(", "describe (", "suite("]
                .iter()
                .any(|w| source.contains(w))
    };
    if tests
        .iter()
        .any(|t| read(t).is_some_and(|source| !declares_tests(&source)))
    {
        return Vec::new();
    }
    let loadable = |p: &str| p.ends_with(".js") || p.ends_with(".coffee");
    let parent = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let mut out: Vec<String> = Vec::new();
    for word in command_parts(dataset_command).1 {
        let pattern = word.trim_start_matches("./").trim_end_matches('/');
        let Ok(glob) = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher())
        else {
            continue;
        };
        let mut loaded: Vec<&String> = paths
            .iter()
            .filter(|p| loadable(p) && (glob.is_match(p.as_str()) || glob.is_match(parent(p))))
            .collect();
        loaded.sort();
        for path in loaded {
            if out.contains(path) {
                continue;
            }
            let Some(source) = read(path) else { continue };
            if !declares_tests(&source) {
                out.push(path.clone());
            }
        }
    }
    out
}

/// Whether the dataset's command loads `path`: a file it names, or one its patterns or
/// named folders match (mocha loads a folder's own files).
pub fn command_loads(dataset_command: &str, path: &str) -> bool {
    let parent = path.rsplit_once('/').map_or("", |(d, _)| d);
    command_parts(dataset_command).1.iter().any(|word| {
        let pattern = word.trim_start_matches("./").trim_end_matches('/');
        globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher())
            .is_ok_and(|glob| glob.is_match(path) || glob.is_match(parent))
    })
}

/// The titles of the `it(...)` tests a mocha file declares (string literals), in order.
pub fn declared_titles(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in source.lines() {
        let t = line.trim_start();
        let Some(rest) = t
            .strip_prefix("it(")
            .or_else(|| t.strip_prefix("it ("))
            .or_else(|| t.strip_prefix("test("))
        else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(q) = rest
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"' | '`'))
        else {
            continue;
        };
        let body = &rest[1..];
        if let Some(end) = body.find(q) {
            let title = &body[..end];
            if !title.is_empty() && !title.contains('\\') && !out.iter().any(|o| o == title) {
                out.push(title.to_string());
            }
        }
    }
    out
}

impl JsBug {
    fn tag(&self, kind: &str) -> String {
        if kind.is_empty() {
            format!("Bug-{}", self.number)
        } else {
            format!("Bug-{}-{kind}", self.number)
        }
    }

    fn test_files(&self) -> &[String] {
        self.test_files.get().map(Vec::as_slice).unwrap_or_default()
    }

    /// The grep of the bug's tests: their full titles, exactly.
    fn grep(&self) -> Option<String> {
        let names = self.bug_names();
        if names.is_empty() {
            return None;
        }
        let names: Vec<String> = names.iter().map(|n| regex_escape(n)).collect();
        Some(format!("^(?:{})$", names.join("|")))
    }

    /// The command of the bug's tests: by name, else the test commit's files whole.
    fn command_of(&self, grep: Option<&str>) -> String {
        let requires = self.requires.get().map(Vec::as_slice).unwrap_or_default();
        let command = with_requires(&self.command, requires);
        if grep.is_some() {
            mocha_command(&command, grep, &[])
        } else {
            let setup = self
                .setup_files
                .get()
                .map(Vec::as_slice)
                .unwrap_or_default();
            let files: Vec<String> = setup.iter().chain(self.test_files()).cloned().collect();
            mocha_command(&command, None, &files)
        }
    }

    /// The bug's tests: the dataset's new failures, less those no file of the fix's test
    /// commit declares where some such file does declare one. The dataset's run of the
    /// fix's tests fails a test of an untouched file now and then, as any run may (Hexo-2:
    /// `Post render()` of test/scripts/hexo/post.js, beside the four tests of the
    /// test/scripts/box/file.js it changed; that test fails on the fixed code too): the
    /// tests the fix's test commit wrote show the bug, a test it did not touch does not.
    fn bug_names(&self) -> Vec<&str> {
        let declared = self.declared.get().map(Vec::as_slice).unwrap_or_default();
        let own = |name: &str| {
            declared
                .iter()
                .any(|t| name == t || name.ends_with(&format!(" {t}")))
        };
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        if names.iter().any(|n| own(n)) {
            names.into_iter().filter(|n| own(n)).collect()
        } else {
            names
        }
    }

    /// The first `it(…)` title of a test file that is none of the bug's tests.
    fn control_title(&self, source: &str) -> Option<String> {
        declared_titles(source).into_iter().find(|t| {
            !self
                .names
                .iter()
                .any(|n| n == t || n.ends_with(&format!(" {t}")))
        })
    }

    /// A node:test file beside the bug's first test file that runs `command` (the
    /// project's mocha) from the tree's root and passes when it does. Written for Node 4 and
    /// newer (no destructuring): the project runs on the Node of its era.
    fn prover_test(&self, tag: &str, command: &str) -> Result<ProverTest, String> {
        let first = self
            .test_files()
            .first()
            .ok_or_else(|| format!("{}: the fix's test commit touches no test file", self.id()))?;
        let dir = first.rsplit_once('/').map_or("", |(d, _)| d);
        let project = self.project.to_lowercase().replace('.', "-");
        let name = format!("proven-{tag}-{project}-{}.test.js", self.number);
        let path = if dir.is_empty() {
            name
        } else {
            format!("{dir}/{name}")
        };
        let up = dir.split('/').filter(|s| !s.is_empty()).count();
        let js = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let root = js(&if up == 0 {
            ".".to_string()
        } else {
            vec![".."; up].join("/")
        });
        let title = format!("BugsJS {} {tag}", self.id());
        // The project's mocha may load every file of the test directory, this one too: loaded
        // by the mocha it starts (PROVEN_BUGSJS_INNER set), it declares nothing, so it never
        // runs itself again.
        let code = format!(
            "'use strict';\n\
             // BugsJS {id}: the bug's own tests, run by the project's mocha as the dataset runs them.\n\
             if (!process.env.PROVEN_BUGSJS_INNER) {{\n\
             const test = require('node:test');\n\
             const assert = require('node:assert');\n\
             const path = require('node:path');\n\
             const spawnSync = require('node:child_process').spawnSync;\n\
             \n\
             test({title}, () => {{\n  \
               const root = path.resolve(__dirname, {root});\n  \
               const env = Object.assign({{}}, process.env, {{ PROVEN_BUGSJS_INNER: '1' }});\n  \
               delete env.NODE_TEST_CONTEXT;\n  \
               const run = spawnSync('sh', ['-c', {command}], {{ cwd: root, env, encoding: 'utf8', timeout: 240000 }});\n  \
               const output = (run.stdout || '') + (run.stderr || '');\n  \
               assert.strictEqual(run.status, 0, output.slice(-4000));\n  \
               assert.ok(/[1-9]\\d* passing/.test(output), 'no test of the selection ran:\\n' + output.slice(-4000));\n\
             }});\n\
             }}\n",
            id = self.id(),
            title = js(&title),
            command = js(command),
        );
        Ok(ProverTest {
            path,
            code,
            tests: vec![title],
        })
    }
}

impl Case for JsBug {
    fn id(&self) -> String {
        format!("{}-{}", self.project, self.number)
    }

    fn project(&self) -> &str {
        &self.project
    }

    fn toolchain(&self) -> String {
        let node = if self.node.is_empty() {
            format!("node {DEFAULT_NODE} (the dataset's default)")
        } else {
            format!("node {}", self.node)
        };
        if self.pre_command.is_empty() {
            node
        } else {
            format!("{node}; before the tests: {}", self.pre_command)
        }
    }

    fn language(&self) -> &'static str {
        "node"
    }

    /// The dataset's own pre-command starts a service the sandbox has not: its tests need a
    /// server no sandbox image carries (Mongoose's `/work/start_mongo.sh 24`, MongoDB 2.4;
    /// Redis, which every image carries and starts when a CI names it, is no such case).
    fn world(&self) -> Option<String> {
        missing_service(&self.pre_command).map(|service| {
            format!(
                "needs a service the dataset starts before the tests that the sandbox has not \
                 ({service}: {})",
                self.pre_command
                    .split("&&")
                    .next()
                    .unwrap_or_default()
                    .trim()
            )
        })
    }

    fn build(&self, repos: &Path, dir: &Path) -> Result<CaseRepo, String> {
        let full = self.tag("full");
        let upstream = case::upstream(repos, &self.github_url, &full, &self.id())?;
        let names = |a: &str, b: &str| -> Result<Vec<String>, String> {
            Ok(git(&upstream, &["diff", "--name-only", a, b, "--"])?
                .lines()
                .map(str::to_string)
                .filter(|l| !l.is_empty())
                .collect())
        };
        let tests: Vec<String> = names(&self.tag(""), &self.tag("test"))?
            .into_iter()
            .filter(|f| f.ends_with(".js") || f.ends_with(".coffee"))
            .collect();
        // The files of those the dataset's command loads: Eslint-5's test commit also edits
        // a fixture (tests/fixtures/rules/indent/indent-valid-fixture-1.js), source its test
        // reads, which mocha cannot load as a test (`ReferenceError: f is not defined`).
        let loaded: Vec<String> = tests
            .iter()
            .filter(|f| command_loads(&self.command, f))
            .cloned()
            .collect();
        let tests = if loaded.is_empty() { tests } else { loaded };
        let declared = tests
            .iter()
            .filter_map(|f| git(&upstream, &["show", &format!("{}:{f}", self.tag("test"))]).ok())
            .flat_map(|source| declared_titles(&source))
            .collect();
        let _ = self.declared.set(declared);
        let requires = [
            "Gruntfile.js",
            "gruntfile.js",
            "Gruntfile.coffee",
            "gruntfile.coffee",
        ]
        .iter()
        .find_map(|f| git(&upstream, &["show", &format!("{full}:{f}")]).ok())
        .map(|text| gruntfile_mocha_requires(&text))
        .unwrap_or_default();
        let _ = self.requires.set(requires);
        let _ = self.test_files.set(tests);
        let tree: Vec<String> = git(&upstream, &["ls-tree", "-r", "--name-only", &full])?
            .lines()
            .map(str::to_string)
            .collect();
        let _ = self.setup_files.set(setup_files(
            &self.command,
            &tree,
            self.test_files(),
            |path| git(&upstream, &["show", &format!("{full}:{path}")]).ok(),
        ));
        let original = self.tag("original");
        let dated = if git(
            &upstream,
            &["cat-file", "-e", &format!("{original}^{{commit}}")],
        )
        .is_ok()
        {
            original
        } else {
            self.tag("")
        };
        let spec = CaseSpec {
            id: self.id(),
            fixed: full.clone(),
            buggy: self.tag("test"),
            dated,
            files: names(&self.tag("test"), &full)?,
        };
        case::build_case(&upstream, &spec, dir)
    }

    fn bug_command(&self, _case: &CaseRepo) -> Result<Vec<String>, String> {
        if self.bug_names().is_empty() && self.test_files().is_empty() {
            // Pencilblue-4: its results show the same failures with and without the fix's
            // tests, and Bug-N-test changes no test file: nothing says which test is the bug's.
            return Err(format!(
                "{}: {} (no new failure in its results, no test file in Bug-{}-test)",
                self.id(),
                super::causes::DATASET_NAMES_NO_TEST,
                self.number
            ));
        }
        let grep = self.grep();
        Ok(vec![
            "sh".into(),
            "-c".into(),
            self.command_of(grep.as_deref()),
        ])
    }

    fn bug_test(&self, _case: &CaseRepo) -> Result<ProverTest, String> {
        let grep = self.grep();
        self.prover_test("bug", &self.command_of(grep.as_deref()))
    }

    fn control(&self, case: &CaseRepo) -> Result<Option<Control>, String> {
        for file in self.test_files() {
            let Ok(source) = std::fs::read_to_string(case.dir.join(file)) else {
                continue;
            };
            if let Some(title) = self.control_title(&source) {
                let grep = format!("{}$", regex_escape(&title));
                let requires = self.requires.get().map(Vec::as_slice).unwrap_or_default();
                let command =
                    mocha_command(&with_requires(&self.command, requires), Some(&grep), &[]);
                return Ok(Some(Control {
                    test: self.prover_test("control", &command)?,
                    command: vec!["sh".into(), "-c".into(), command],
                    name: title,
                }));
            }
        }
        Ok(None)
    }

    /// The fix as the case repository has it: the change → base diff of the reverted files.
    fn fix(&self, case: &CaseRepo) -> Vec<Edit> {
        let mut args = vec![
            "diff".to_string(),
            case.change.clone(),
            case.base.clone(),
            "--".to_string(),
        ];
        args.extend(case.reverted.iter().map(|(p, _, _)| p.clone()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let patch = git(&case.dir.join(".git"), &args).unwrap_or_default();
        case::fix_edits(&patch, &case.reverted)
    }

    fn available(&self, repos: &Path) -> Result<(), String> {
        case::upstream(repos, &self.github_url, &self.tag("full"), &self.id()).map(|_| ())
    }

    fn studied(&self) -> bool {
        STUDIED.contains(&self.id().as_str())
    }

    fn tool_ready(&self, repos: &Path) -> Result<(), String> {
        let full = self.tag("full");
        let upstream = case::upstream(repos, &self.github_url, &full, &self.id())?;
        let top: Vec<String> = git(&upstream, &["ls-tree", "--name-only", &full])?
            .lines()
            .map(str::to_string)
            .collect();
        let package = case::show(&upstream, &full, "package.json").unwrap_or_default();
        eslint_ready(&package, &top)
    }

    fn describe(&self) -> String {
        let names = self.bug_names();
        let tests = if names.is_empty() {
            format!("the tests of {}", self.test_files().join(", "))
        } else {
            format!("its tests {}", names.join(", "))
        };
        format!("BugsJS {} ({tests} fail on the change)", self.id())
    }
}

/// Whether the project's own ESLint would run in a tree (`top`: its top-level names):
/// an ESLint configuration (`eslint.config.*`, `.eslintrc*`, package.json's
/// `eslintConfig`) and eslint among package.json's dev dependencies (the analyzer runs the
/// project's `node_modules/.bin/eslint`, which its preparation installs); else why not.
pub fn eslint_ready(package_json: &str, top: &[String]) -> Result<(), String> {
    let package: serde_json::Value = serde_json::from_str(package_json)
        .map_err(|e| format!("package.json does not read: {e}"))?;
    let configured = top
        .iter()
        .any(|f| f.starts_with("eslint.config.") || f.starts_with(".eslintrc"))
        || package.get("eslintConfig").is_some();
    if !configured {
        return Err("no ESLint configuration".into());
    }
    if package["devDependencies"].get("eslint").is_none() {
        return Err("eslint is not among the dev dependencies".into());
    }
    Ok(())
}

/// The service a BugsJS pre-command starts with the dataset's own scripts
/// (`/work/start_NAME.sh`) that no sandbox image carries, if any.
fn missing_service(pre_command: &str) -> Option<&'static str> {
    const SCRIPTS: [(&str, &str); 3] = [
        ("start_mongo", "mongodb"),
        ("start_mysql", "mysql"),
        ("start_postgres", "postgresql"),
    ];
    SCRIPTS
        .iter()
        .find(|(script, _)| pre_command.contains(&format!("/{script}.sh")))
        .map(|(_, service)| *service)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eslint_runs_where_the_tree_has_its_configuration_and_eslint_as_a_dev_dependency() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let dev = r#"{"devDependencies": {"eslint": "^2.12.0", "mocha": "*"}}"#;
        assert_eq!(eslint_ready(dev, &names(&[".eslintrc", "lib"])), Ok(()));
        assert_eq!(eslint_ready(dev, &names(&[".eslintrc.yml"])), Ok(()));
        assert_eq!(eslint_ready(dev, &names(&["eslint.config.js"])), Ok(()));
        let in_package = r#"{"eslintConfig": {}, "devDependencies": {"eslint": "4"}}"#;
        assert_eq!(eslint_ready(in_package, &names(&["lib"])), Ok(()));
        // ESLint's own repository: configured, but it lints itself with bin/eslint.js.
        let own = r#"{"devDependencies": {"mocha": "*"}}"#;
        assert_eq!(
            eslint_ready(own, &names(&[".eslintrc.yml"])),
            Err("eslint is not among the dev dependencies".into())
        );
        assert_eq!(
            eslint_ready(dev, &names(&["lib"])),
            Err("no ESLint configuration".into())
        );
        assert!(eslint_ready("{", &names(&[".eslintrc"])).is_err());
    }
    use std::io::Write as _;

    fn zip_of(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut buf);
            for (name, bytes) in files {
                w.start_file(*name, zip::write::SimpleFileOptions::default())
                    .expect("start");
                w.write_all(bytes).expect("write");
            }
            w.finish().expect("finish");
        }
        buf.into_inner()
    }

    fn results(failures: &[&str]) -> Vec<u8> {
        let f: Vec<serde_json::Value> = failures
            .iter()
            .map(|t| serde_json::json!({"title": t, "fullTitle": t}))
            .collect();
        let doc = serde_json::json!({"stats": {}, "failures": f, "passes": []}).to_string();
        zip_of(&[("test_results.json", doc.into_bytes())])
    }

    #[test]
    fn the_bugs_tests_are_the_new_failures_of_the_fixs_tests() {
        let z = zip_of(&[
            (
                "only_test_changes/test_results.json.zip",
                results(&[
                    "OPTIONS should only include each method once",
                    "auth POST /login should fail",
                    "app \"before all\" hook",
                ]),
            ),
            (
                "buggy/test_results.json.zip",
                results(&["auth POST /login should fail"]),
            ),
        ]);
        assert_eq!(
            bug_tests(&z),
            ["OPTIONS should only include each method once"]
        );
        // What the tests printed before the report (Bower: tag names; Pencilblue: log
        // lines with braces) and a coverage reporter's output after it.
        let report = "{\n  \"stats\": {\"failures\": 1, \"passes\": 1},\n  \"tests\": [{\"fullTitle\": \"a b x\"}, {\"fullTitle\": \"a b y\"}],\n  \"failures\": [{\"fullTitle\": \"a b x\"}],\n  \"passes\": [{\"fullTitle\": \"a b y\"}]\n}";
        let mixed = format!("v0.0.1\nlog {{x}} Completed\n{report}\ncoverage {{ \"lines\": 1 }}\n");
        let titles =
            |text: &str| -> Vec<String> { failures(text).into_iter().map(|f| f.title).collect() };
        assert_eq!(titles(&mixed), ["a b x"]);
        // A report that does not parse at all is read by its failures array's lines, never
        // by the tests array (every test's title) before it.
        let bad = "{\n\"stats\": {\n\"failures\": 1,\n},\n\"tests\": [\n {\n  \"fullTitle\": \"a b y\",\n }\n],\n\"failures\": [\n {\n  \"title\": \"x\",\n  \"fullTitle\": \"a b x\",\n }\n],\n\"passes\": [\n {\n  \"fullTitle\": \"a b y\",\n }\n]}";
        assert_eq!(titles(bad), ["a b x"]);
        assert!(bug_tests(b"not a zip").is_empty());
    }

    /// Hessian.js-1: the dataset's run of the fix's tests timed out on two Java round
    /// trips of binary.test.js, which its buggy run passed; the bug's own test failed by
    /// its assertion. The timeouts show that run's load, not the bug.
    #[test]
    fn timeouts_of_the_datasets_run_are_not_the_bugs_tests_where_the_bug_shows_otherwise() {
        let doc = |failures: &[(&str, &str)]| {
            let f: Vec<serde_json::Value> = failures
                .iter()
                .map(|(t, m)| serde_json::json!({"fullTitle": t, "err": {"message": m}}))
                .collect();
            zip_of(&[(
                "test_results.json",
                serde_json::json!({"stats": {}, "failures": f, "passes": []})
                    .to_string()
                    .into_bytes(),
            )])
        };
        let timeout =
            "Timeout of 2000ms exceeded. For async tests and hooks, ensure \"done()\" is called";
        let z = zip_of(&[
            (
                "only_test_changes/test_results.json.zip",
                doc(&[
                    ("binary.test.js should write and read as java impl", timeout),
                    (
                        "string.test.js should read and write utf8 string as java",
                        timeout,
                    ),
                    (
                        "hessian v2 v2 list encode should ok",
                        "java.revert is not a function",
                    ),
                ]),
            ),
            (
                "buggy/test_results.json.zip",
                doc(&[(
                    "string.test.js should read and write utf8 string as java",
                    timeout,
                )]),
            ),
        ]);
        assert_eq!(bug_tests(&z), ["hessian v2 v2 list encode should ok"]);
        // A bug whose only new failure is a timeout (a hang the fix ends) keeps it.
        let z = zip_of(&[
            (
                "only_test_changes/test_results.json.zip",
                doc(&[("server should close", timeout)]),
            ),
            ("buggy/test_results.json.zip", doc(&[])),
        ]);
        assert_eq!(bug_tests(&z), ["server should close"]);
    }

    #[test]
    fn the_datasets_command_runs_the_selection_with_the_spec_reporter() {
        let c = "node_modules/.bin/_mocha --require test/support/env --reporter json test/ test/acceptance/";
        assert_eq!(
            mocha_command(c, Some("^(?:OPTIONS x)$"), &[]),
            "node_modules/.bin/_mocha --require test/support/env test/ test/acceptance/ --reporter spec --grep '^(?:OPTIONS x)$'"
        );
        assert_eq!(
            mocha_command(
                "node_modules/.bin/_mocha -R json -t 10000 -c tests/lib/*.js",
                None,
                &["tests/lib/a.js".into()]
            ),
            "node_modules/.bin/_mocha -t 10000 -c --reporter spec tests/lib/a.js"
        );
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
        assert_eq!(regex_escape("a.b (c)"), "a\\.b \\(c\\)");
    }

    /// Karma-2: the dataset's results do not read, so the fix's test file runs whole, and
    /// the globals file the command's `./test/unit/*` loads comes first.
    #[test]
    fn a_spec_run_whole_loads_the_files_of_the_command_that_declare_no_test_first() {
        let paths: Vec<String> = [
            "lib/x.js",
            "test/unit/browser.spec.js",
            "test/unit/mocha-globals.js",
            "test/unit/middleware/proxy.spec.js",
            "test/unit/middleware/helpers.js",
            "test/unit/mocks/timer.js",
            "test/unit/fixtures/deep/data.js",
            "test/unit/README.md",
        ]
        .map(String::from)
        .to_vec();
        let read = |p: &str| {
            Some(
                if p.ends_with(".spec.js") {
                    "describe('x', () => { it('y', () => {}) })"
                } else {
                    "global.sinon = require('sinon')"
                }
                .to_string(),
            )
        };
        let c = "node_modules/.bin/_mocha --require babel/register --reporter json ./test/unit/*";
        let spec = ["test/unit/browser.spec.js".to_string()];
        assert_eq!(
            setup_files(c, &paths, &spec, read),
            [
                "test/unit/middleware/helpers.js",
                "test/unit/mocha-globals.js",
                "test/unit/mocks/timer.js"
            ],
            "the files and folders `*` matches, never a folder's subfolders"
        );
        // Eslint-5: the bug's own test declares its tests through a tester, not `it(`; the
        // reading cannot tell a helper from a test there, so it takes none.
        let tester = |p: &str| {
            Some(
                if p.ends_with("helpers.js") {
                    "global.sinon = require('sinon')"
                } else {
                    "ruleTester.run('indent', rule, { valid: [], invalid: [] });"
                }
                .to_string(),
            )
        };
        let indent = ["test/unit/middleware/proxy.spec.js".to_string()];
        assert_eq!(
            setup_files(c, &paths, &indent, tester),
            Vec::<String>::new()
        );
        let bug = express_1();
        let _ = bug
            .setup_files
            .set(vec!["test/unit/mocha-globals.js".into()]);
        let _ = bug.test_files.set(vec!["test/app.options.js".into()]);
        let bug = JsBug {
            names: Vec::new(),
            ..bug
        };
        assert!(
            bug.command_of(None)
                .ends_with("--reporter spec test/unit/mocha-globals.js test/app.options.js"),
            "{}",
            bug.command_of(None)
        );
    }

    #[test]
    fn a_pre_command_starting_a_server_no_image_carries_is_the_worlds() {
        let mut bug = express_1();
        assert_eq!(bug.world(), None);
        bug.pre_command = "npm install istanbul".into();
        assert_eq!(bug.world(), None);
        bug.pre_command =
            "/work/start_mongo.sh 24 && npm install mocha@1.21 && node test/dropdb.js".into();
        assert_eq!(
            bug.world().as_deref(),
            Some(
                "needs a service the dataset starts before the tests that the sandbox has not \
                 (mongodb: /work/start_mongo.sh 24)"
            )
        );
    }

    /// Hexo-2: the dataset's run of the fix's tests failed four tests of the file the fix's
    /// test commit changed and one of a file it did not touch; the bug is the four.
    #[test]
    fn a_new_failure_of_a_file_the_fix_did_not_touch_is_not_the_bugs_where_its_own_show_it() {
        let mut bug = express_1();
        bug.names = vec![
            "Hexo Box File read() - escape BOM".into(),
            "Hexo Core Post render() - wrap variable with raw block".into(),
        ];
        let _ = bug
            .declared
            .set(vec!["read() - escape BOM".into(), "read()".into()]);
        assert_eq!(bug.bug_names(), ["Hexo Box File read() - escape BOM"]);
        assert_eq!(
            bug.grep().as_deref(),
            Some("^(?:Hexo Box File read\\(\\) - escape BOM)$")
        );
        assert!(
            bug.describe()
                .contains("its tests Hexo Box File read() - escape BOM fail on")
        );

        // Where no test of its own files failed, every new failure is the bug's.
        let mut bug = express_1();
        let _ = bug.declared.set(vec!["something else".into()]);
        bug.names.push("Other test".into());
        assert_eq!(bug.bug_names().len(), 2);
    }

    /// Karma-1: the dataset's command leaves out the `babel/register` its Gruntfile's
    /// mochaTest loads, and its ES-module specs cannot load; Karma-2's names it already.
    #[test]
    fn the_projects_own_mocha_requires_are_loaded_where_the_datasets_command_leaves_them_out() {
        let gruntfile = "    mochaTest: {\n      options: {\n        require: [\n          'babel/register'\n        ],\n        reporter: 'dot',\n      },\n      unit: { src: ['test/unit/*.spec.js'] }\n    },\n";
        let requires = gruntfile_mocha_requires(gruntfile);
        assert_eq!(requires, ["babel/register"]);
        assert_eq!(
            gruntfile_mocha_requires(
                "mochaTest: { options: { require: 'coffee-script/register', timeout: 5 } }"
            ),
            ["coffee-script/register"]
        );
        assert!(gruntfile_mocha_requires("simplemocha: { options: { timeout: 5 } }").is_empty());
        assert_eq!(
            with_requires(
                "node_modules/.bin/_mocha --reporter json ./test/unit/* --compilers coffee:coffee-script/register",
                &requires
            ),
            "node_modules/.bin/_mocha --require babel/register --reporter json ./test/unit/* --compilers coffee:coffee-script/register"
        );
        let karma_2 =
            "node_modules/.bin/_mocha --require babel/register --reporter json-cov ./test/unit/*";
        assert_eq!(with_requires(karma_2, &requires), karma_2);
        let mut bug = express_1();
        bug.command = "node_modules/.bin/_mocha --reporter json test/".into();
        let _ = bug.requires.set(requires);
        assert!(
            bug.command_of(bug.grep().as_deref())
                .starts_with("node_modules/.bin/_mocha --require babel/register "),
            "{}",
            bug.command_of(None)
        );
    }

    /// Eslint-5's test commit edits its rule test and a fixture that test reads: only the
    /// file the dataset's command loads is a test file.
    #[test]
    fn a_file_the_datasets_command_does_not_load_is_no_test_file() {
        let c = "node_modules/.bin/_mocha -R json -t 10000 -c tests/lib/rules/**/*.js tests/lib/*.js tests/bin/**/*.js";
        assert!(command_loads(c, "tests/lib/rules/indent.js"));
        assert!(command_loads(c, "tests/lib/eslint.js"));
        assert!(!command_loads(
            c,
            "tests/fixtures/rules/indent/indent-valid-fixture-1.js"
        ));
        let karma = "node_modules/.bin/_mocha --reporter json ./test/unit/*";
        assert!(command_loads(karma, "test/unit/reporter.spec.js"));
        assert!(command_loads(karma, "test/unit/middleware/proxy.spec.js"));
    }

    #[test]
    fn a_mocha_files_titles_are_its_it_strings() {
        let src = "describe('OPTIONS', function(){\n  it('should default', function(done){\n  it(\"should only include\", function(){\n  it('should default', x);\n  it(name, f);\n";
        assert_eq!(
            declared_titles(src),
            ["should default", "should only include"]
        );
    }

    fn express_1() -> JsBug {
        let bug = JsBug {
            project: "Express".into(),
            number: 1,
            github_url: PROJECTS[2].1.into(),
            command: "node_modules/.bin/_mocha --require test/support/env --reporter json test/ test/acceptance/".into(),
            node: String::new(),
            pre_command: String::new(),
            names: vec!["OPTIONS should only include each method once".into()],
            test_files: OnceLock::new(),
            setup_files: OnceLock::new(),
            declared: OnceLock::new(),
            requires: OnceLock::new(),
        };
        let _ = bug.test_files.set(vec!["test/app.options.js".into()]);
        bug
    }

    /// The Prover's test sits where the project's mocha loads every file (`test/`): loaded
    /// by the mocha it starts, it must declare nothing, or it runs itself without end (the
    /// trial on Express hit the sandbox's pids limit so).
    #[test]
    fn the_provers_test_runs_the_projects_mocha_and_never_itself() {
        let bug = express_1();
        let t = bug
            .prover_test("bug", &bug.command_of(bug.grep().as_deref()))
            .expect("a test");
        assert_eq!(t.path, "test/proven-bug-express-1.test.js");
        assert_eq!(t.tests, ["BugsJS Express-1 bug"]);
        assert!(t.code.contains("\"BugsJS Express-1 bug\""), "{}", t.code);
        assert!(
            t.code
                .contains("--grep '^(?:OPTIONS should only include each method once)$'"),
            "{}",
            t.code
        );
        assert!(
            t.code.contains("path.resolve(__dirname, \"..\")"),
            "{}",
            t.code
        );
        // Where Node is at hand: the file parses, and loaded from inside declares nothing.
        let dir = std::env::temp_dir().join(format!("bugsjs-prover-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let file = dir.join("t.test.js");
        std::fs::write(&file, &t.code).expect("write");
        if let Ok(out) = std::process::Command::new("node")
            .env("PROVEN_BUGSJS_INNER", "1")
            .arg(&file)
            .output()
        {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.stdout.is_empty(),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        let control = bug.control_title("  it('should default to the routes defined', f)\n  it('should only include each method once', g)\n");
        assert_eq!(
            control.as_deref(),
            Some("should default to the routes defined")
        );
    }

    /// A tiny layout of the bug-dataset: the default selection is at least 30 bugs of at
    /// least 5 projects, in rounds.
    #[test]
    fn the_default_selection_is_at_least_thirty_bugs_of_five_projects() {
        let dir = std::env::temp_dir().join(format!("bugsjs-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join("Projects.csv"),
            "Name;Repository url;Number of bugs\n",
        )
        .expect("write");
        // The dataset's bug counts.
        let counts = [
            ("Bower", 3),
            ("Eslint", 333),
            ("Express", 27),
            ("Hessian.js", 9),
            ("Hexo", 12),
            ("Karma", 22),
            ("Mongoose", 29),
            ("Node-redis", 7),
            ("Pencilblue", 7),
            ("Shields", 4),
        ];
        for (p, n) in counts {
            let d = dir.join("Projects").join(p);
            std::fs::create_dir_all(&d).expect("mkdir");
            let ids: String = (1..=n).map(|i| format!("{i};1;1\n")).collect();
            std::fs::write(
                d.join(format!("{p}_bugs.csv")),
                format!("ID;Number of tests;x\n{ids}"),
            )
            .expect("write");
            let cmds: String = (1..=n)
                .map(|i| format!("{i};node_modules/.bin/_mocha --reporter json test/;cov;;;\n"))
                .collect();
            std::fs::write(
                d.join(format!("{p}_commands.csv")),
                format!(
                    "ID;Test command;Coverage command;Node version;Pre-command;Post-command\n{cmds}"
                ),
            )
            .expect("write");
        }
        let data = Dataset::open(&dir).expect("opens");
        let cases = selection(&data, &[], LIMIT).expect("selects");
        let mut projects: Vec<&str> = cases.iter().map(|c| c.project.as_str()).collect();
        assert!(cases.len() >= 30, "{}", cases.len());
        assert_eq!(cases.len(), 47);
        // In rounds: every project's first bug comes first.
        assert!(cases[..10].iter().all(|c| c.number == 1));
        projects.sort_unstable();
        projects.dedup();
        assert!(projects.len() >= 5);
        assert_eq!(projects.len(), PROJECTS.len());
        // --project names a subset, case-insensitively; --limit cuts each project.
        let two = selection(&data, &["express".into()], 2).expect("selects");
        assert_eq!(
            two.iter().map(|c| c.id()).collect::<Vec<_>>(),
            ["Express-1", "Express-2"]
        );
        assert!(selection(&data, &["nope".into()], 2).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
