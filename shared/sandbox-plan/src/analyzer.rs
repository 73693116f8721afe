//! The tool evidence's analyzers: deterministic checkers run in the sandbox like tests, on
//! the base and on the change, each pinned by the image (pyflakes by `scripts/sandbox-images`
//! and `deploy/sandbox/python.Dockerfile`, `go vet` with the Go toolchain, clippy with the
//! Rust toolchain; ESLint the project's own, a dev dependency its Node preparation installs,
//! with its own configuration), and what their output says: the analyzer's version, asked in
//! the same container, and its diagnostics, read from its machine-readable output (clippy's
//! JSON messages, ESLint's `--format json`, `file:line:col: message` lines of pyflakes and
//! go vet).
//!
//! A run's command prints two marker lines around the analyzer: its version first
//! ([`VERSION_MARKER`]) and its exit code last ([`EXIT_MARKER`]); a run without the exit
//! marker did not finish (killed, cut off) and shows nothing. A run that finds no analyzer
//! to run (ESLint: a tree without its configuration or without eslint installed) prints
//! why ([`SKIPPED_MARKER`]) and shows nothing.

use serde::{Deserialize, Serialize};

use crate::Language;

/// The line a run prints first: the analyzer's own `--version` answer.
pub const VERSION_MARKER: &str = "proven-tool-version: ";
/// The line a run prints last: the analyzer's exit code.
pub const EXIT_MARKER: &str = "proven-tool-exit: ";
/// The line a run prints when the tree has no analyzer to run: why.
pub const SKIPPED_MARKER: &str = "proven-tool-skipped: ";
/// The line a run prints when it analysed less than its whole unit: what it analysed, and
/// why (clippy on a tree whose benches need a nightly feature).
pub const SCOPE_MARKER: &str = "proven-tool-scope: ";
/// The line an ESLint run prints before its JSON: the tree's root in the container (its
/// JSON names files by absolute path).
pub const ROOT_MARKER: &str = "proven-tool-root: ";

/// What clippy analysed when a target needs a nightly feature.
const NO_BENCHES: &str =
    "every target but the benches (a target uses #![feature], which stable Rust refuses: E0554)";

/// The files ESLint reads (JavaScript and TypeScript).
const ESLINT_EXTENSIONS: [&str; 8] = ["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"];

/// ESLint's configuration files, flat (`eslint.config.*`) first, then the legacy ones
/// (read with `ESLINT_USE_FLAT_CONFIG=false`, which ESLint 9 needs for them).
const ESLINT_FLAT: &str = "eslint.config.js eslint.config.mjs eslint.config.cjs eslint.config.ts";
const ESLINT_LEGACY: &str =
    ".eslintrc .eslintrc.js .eslintrc.cjs .eslintrc.json .eslintrc.yml .eslintrc.yaml";

/// An analyzer of the tool evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Analyzer {
    Pyflakes,
    GoVet,
    Clippy,
    Eslint,
}

impl Analyzer {
    pub const ALL: [Analyzer; 4] = [
        Analyzer::Pyflakes,
        Analyzer::GoVet,
        Analyzer::Clippy,
        Analyzer::Eslint,
    ];

    /// Its name in settings and step keys.
    pub const fn name(self) -> &'static str {
        match self {
            Analyzer::Pyflakes => "pyflakes",
            Analyzer::GoVet => "go-vet",
            Analyzer::Clippy => "clippy",
            Analyzer::Eslint => "eslint",
        }
    }

    /// Its name as its users write it (the plan line, the report).
    pub const fn words(self) -> &'static str {
        match self {
            Analyzer::Pyflakes => "pyflakes",
            Analyzer::GoVet => "go vet",
            Analyzer::Clippy => "clippy",
            Analyzer::Eslint => "ESLint",
        }
    }

    pub fn parse(name: &str) -> Option<Analyzer> {
        Analyzer::ALL.into_iter().find(|a| a.name() == name)
    }

    pub const fn language(self) -> Language {
        match self {
            Analyzer::Pyflakes => Language::Python,
            Analyzer::GoVet => Language::Go,
            Analyzer::Clippy => Language::Rust,
            Analyzer::Eslint => Language::Node,
        }
    }

    /// Whether it reads the file at `path` (by its extension): the files of its language, and
    /// for ESLint the TypeScript ones too.
    pub fn reads(self, path: &str) -> bool {
        let Some(ext) = std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
        else {
            return false;
        };
        match self {
            Analyzer::Pyflakes => ext == "py",
            Analyzer::GoVet => ext == "go",
            Analyzer::Clippy => ext == "rs",
            Analyzer::Eslint => ESLINT_EXTENSIONS.contains(&ext),
        }
    }

    /// The command run in the tree (`paths`: the files of its language the change adds or
    /// modifies; pyflakes and ESLint read those alone, go vet and clippy build the whole
    /// module or workspace, as a package is their unit). None: nothing to analyse.
    pub fn command(self, paths: &[String]) -> Option<Vec<String>> {
        let script = match self {
            Analyzer::Pyflakes | Analyzer::Eslint if paths.is_empty() => return None,
            // Every path is an argument of its own ("$@"), never part of the script.
            Analyzer::Pyflakes => format!(
                "echo \"{VERSION_MARKER}pyflakes $(pyflakes --version 2>&1)\"; pyflakes \"$@\" 2>&1; echo \"{EXIT_MARKER}$?\""
            ),
            Analyzer::GoVet => format!(
                "echo \"{VERSION_MARKER}$(go version 2>&1)\"; go vet ./... 2>&1; echo \"{EXIT_MARKER}$?\""
            ),
            // The JSON messages only (the build's artifacts would fill the output). A tree
            // whose benches (or other targets) use `#![feature]`, which stable Rust refuses
            // (E0554: `#![feature(test)]` in the benches of many crates), is analysed again
            // without its benches, as its CI's stable `cargo test` builds it, and says so.
            Analyzer::Clippy => format!(
                "echo \"{VERSION_MARKER}$(cargo clippy --version 2>&1)\"; \
                 clippy() {{ cargo clippy \"$@\" --message-format=json >/tmp/proven-clippy.json 2>/tmp/proven-clippy.err; }}; \
                 clippy --all-targets; code=$?; \
                 if [ \"$code\" != 0 ] && grep -q '\"code\":\"E0554\"' /tmp/proven-clippy.json; then \
                   echo \"{SCOPE_MARKER}{NO_BENCHES}\"; clippy --lib --bins --tests --examples; code=$?; fi; \
                 grep '\"reason\":\"compiler-message\"' /tmp/proven-clippy.json; \
                 [ \"$code\" = 0 ] || tail -n 20 /tmp/proven-clippy.err; echo \"{EXIT_MARKER}$code\""
            ),
            Analyzer::Eslint => eslint_script(),
        };
        let mut command = vec!["sh".to_string(), "-c".to_string(), script, "tool".into()];
        if matches!(self, Analyzer::Pyflakes | Analyzer::Eslint) {
            command.extend(paths.iter().cloned());
        }
        Some(command)
    }

    /// What a run's output says: the version, the diagnostics, and whether it finished
    /// analysing (clippy: only when the build succeeded; a tree that does not build was not
    /// analysed).
    pub fn read(self, output: &str) -> Analysis {
        let mut analysis = Analysis::default();
        let mut root = None;
        for line in output.lines() {
            if let Some(v) = line.strip_prefix(VERSION_MARKER) {
                analysis.version = Some(v.trim().to_string());
            } else if let Some(why) = line.strip_prefix(SKIPPED_MARKER) {
                analysis.skipped = Some(why.trim().to_string());
            } else if let Some(scope) = line.strip_prefix(SCOPE_MARKER) {
                analysis.scope = Some(scope.trim().to_string());
            } else if let Some(r) = line.strip_prefix(ROOT_MARKER) {
                root = Some(r.trim().trim_end_matches('/').to_string());
            } else if let Some(code) = line.strip_prefix(EXIT_MARKER) {
                analysis.exit_code = code.trim().parse().ok();
            } else if let Some(d) = match self {
                Analyzer::Clippy => clippy_line(line),
                Analyzer::Pyflakes | Analyzer::GoVet => text_line(self, line),
                // One line holds every file's diagnostics.
                // One line holds every file's diagnostics, by absolute path: read only
                // under the root the run named.
                Analyzer::Eslint => {
                    if let Some(root) = &root {
                        analysis.diagnostics.extend(eslint_json(root, line));
                    }
                    None
                }
            } {
                analysis.diagnostics.push(d);
            }
        }
        analysis
    }
}

/// One diagnostic: where, the analyzer's code for it (clippy's lint, ESLint's rule, else the
/// analyzer's name), and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Relative to the tree's root, without `./`.
    pub path: String,
    pub line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    pub code: String,
    pub message: String,
}

/// What one analyzer run said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Analysis {
    /// The analyzer's `--version` answer in that container.
    pub version: Option<String>,
    pub diagnostics: Vec<Diagnostic>,
    /// The analyzer's exit code (None: the run ended before it was printed).
    pub exit_code: Option<i64>,
    /// Why the tree had no analyzer to run (ESLint: no configuration, eslint not installed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// What it analysed, when less than its whole unit (None: all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl Analysis {
    /// Why the run shows nothing, if it does not: no version, no end, or (clippy) a build
    /// that failed.
    pub fn unfinished(&self, analyzer: Analyzer) -> Option<String> {
        if let Some(why) = &self.skipped {
            return Some(why.clone());
        }
        if self.version.is_none() {
            return Some(format!("{} printed no version", analyzer.words()));
        }
        match (analyzer, self.exit_code) {
            (_, None) => Some(format!("{} did not finish", analyzer.words())),
            (Analyzer::Clippy, Some(code)) if code != 0 => Some(format!(
                "the tree does not build: cargo clippy exited with {code}"
            )),
            // 1: lint errors; 2 and above: its configuration or ESLint itself failed.
            (Analyzer::Eslint, Some(code)) if code > 1 => Some(format!(
                "ESLint exited with {code} (its configuration could not be read, or it crashed)"
            )),
            _ => None,
        }
    }
}

/// ESLint's JSON made small (its files' sources and fixes left out: a long file's would cut
/// the output) and one file a line; ES5, for the oldest Node a project may run on.
const ESLINT_COMPACT: &str = r#"var r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
r.forEach(function (f) { console.log(JSON.stringify([{ filePath: f.filePath,
  messages: (f.messages || []).map(function (m) { return { ruleId: m.ruleId, fatal: m.fatal,
    severity: m.severity, message: m.message, line: m.line, column: m.column }; }) }])); });"#;

/// ESLint's run: the tree's own configuration and its own eslint (the dev dependency the
/// Node preparation installed), on the paths given as arguments that exist on this side;
/// without either, the reason (and no version, no diagnostic).
fn eslint_script() -> String {
    format!(
        "cfg=''; legacy=''\n\
         for f in {ESLINT_FLAT}; do [ -z \"$cfg\" ] && [ -f \"$f\" ] && cfg=$f; done\n\
         if [ -z \"$cfg\" ]; then for f in {ESLINT_LEGACY}; do [ -z \"$cfg\" ] && [ -f \"$f\" ] && cfg=$f && legacy=1; done; fi\n\
         if [ -z \"$cfg\" ] && [ -f package.json ] && grep -q '\"eslintConfig\"' package.json; then cfg=package.json; legacy=1; fi\n\
         if [ -z \"$cfg\" ]; then echo \"{SKIPPED_MARKER}the tree has no ESLint configuration (eslint.config.*, .eslintrc*, package.json eslintConfig)\"; exit 0; fi\n\
         e=node_modules/.bin/eslint\n\
         if [ ! -x \"$e\" ]; then echo \"{SKIPPED_MARKER}the tree has an ESLint configuration ($cfg) but no eslint installed (node_modules/.bin/eslint: not among its dev dependencies)\"; exit 0; fi\n\
         [ -z \"$legacy\" ] || export ESLINT_USE_FLAT_CONFIG=false\n\
         v=$(\"$e\" --version 2>/dev/null | head -n 1)\n\
         if [ -z \"$v\" ]; then echo \"{SKIPPED_MARKER}node_modules/.bin/eslint --version answered nothing (does it run on this Node?)\"; exit 0; fi\n\
         echo \"{VERSION_MARKER}ESLint $v\"\n\
         n=$#; while [ \"$n\" -gt 0 ]; do p=$1; shift; n=$((n-1)); [ -f \"$p\" ] && set -- \"$@\" \"./$p\"; done\n\
         if [ $# = 0 ]; then echo \"{EXIT_MARKER}0\"; exit 0; fi\n\
         echo \"{ROOT_MARKER}$(pwd)\"\n\
         rm -f /tmp/proven-eslint.json\n\
         \"$e\" --format json -o /tmp/proven-eslint.json \"$@\" 2>/tmp/proven-eslint.err; code=$?\n\
         [ ! -f /tmp/proven-eslint.json ] || node -e '{ESLINT_COMPACT}' /tmp/proven-eslint.json\n\
         [ \"$code\" -le 1 ] || tail -n 20 /tmp/proven-eslint.err\n\
         echo \"{EXIT_MARKER}$code\""
    )
}

/// A line of ESLint's `--format json` (one file a line, [`ESLINT_COMPACT`]): per file (by
/// absolute path, made relative to `root`), its messages of severity 1 (warn) and 2 (error), each by its rule; a parse error (no
/// rule, fatal) is code `eslint`. Other messages without a rule (a file its configuration
/// ignores, an unused disable directive) are not diagnostics of the code.
fn eslint_json(root: &str, line: &str) -> Vec<Diagnostic> {
    let line = line.trim();
    if !line.starts_with('[') {
        return Vec::new();
    }
    let Ok(serde_json::Value::Array(files)) = serde_json::from_str(line) else {
        return Vec::new();
    };
    let prefix = format!("{root}/");
    let mut out = Vec::new();
    for file in &files {
        let Some(path) = file["filePath"].as_str() else {
            continue;
        };
        let Some(path) = path.strip_prefix(&prefix) else {
            continue;
        };
        for m in file["messages"].as_array().into_iter().flatten() {
            let code = match (m["ruleId"].as_str(), m["fatal"] == true) {
                (Some(rule), _) => rule.to_string(),
                (None, true) => "eslint".to_string(),
                (None, false) => continue,
            };
            let (Some(number), Some(message)) = (m["line"].as_u64(), m["message"].as_str()) else {
                continue;
            };
            if !matches!(m["severity"].as_u64(), Some(1 | 2)) {
                continue;
            }
            out.push(Diagnostic {
                path: path.trim_start_matches("./").to_string(),
                line: u32::try_from(number).unwrap_or(u32::MAX),
                column: m["column"].as_u64().and_then(|c| u32::try_from(c).ok()),
                code,
                message: message.to_string(),
            });
        }
    }
    out
}

/// `path:line:col: message` (pyflakes, go vet; go vet's `vet: ` prefix taken off).
fn text_line(analyzer: Analyzer, line: &str) -> Option<Diagnostic> {
    let line = line.strip_prefix("vet: ").unwrap_or(line);
    let mut parts = line.splitn(4, ':');
    let path = parts.next()?.trim();
    let number: u32 = parts.next()?.trim().parse().ok()?;
    let third = parts.next()?;
    let (column, message) = match third.trim().parse::<u32>() {
        Ok(col) => (Some(col), parts.next()?.trim()),
        // pyflakes before 2.2 names no column: `path:line: message`.
        Err(_) => (
            None,
            line.splitn(3, ':')
                .nth(2)
                .map(str::trim)
                .unwrap_or_default(),
        ),
    };
    let ext = match analyzer {
        Analyzer::Pyflakes => ".py",
        _ => ".go",
    };
    if path.is_empty() || !path.ends_with(ext) || message.is_empty() {
        return None;
    }
    Some(Diagnostic {
        path: path.trim_start_matches("./").to_string(),
        line: number,
        column,
        code: analyzer.name().to_string(),
        message: message.to_string(),
    })
}

/// One of cargo's `compiler-message` JSON lines: a warning or an error with a primary span
/// in the tree (a dependency's, with an absolute path, is not the change's).
fn clippy_line(line: &str) -> Option<Diagnostic> {
    if !line.starts_with('{') {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    if v["reason"] != "compiler-message" {
        return None;
    }
    let m = &v["message"];
    if !matches!(m["level"].as_str(), Some("warning" | "error")) {
        return None;
    }
    let span = m["spans"]
        .as_array()?
        .iter()
        .find(|s| s["is_primary"] == true)?;
    let path = span["file_name"].as_str()?;
    if path.starts_with('/') {
        return None;
    }
    Some(Diagnostic {
        path: path.trim_start_matches("./").to_string(),
        line: u32::try_from(span["line_start"].as_u64()?).ok()?,
        column: span["column_start"]
            .as_u64()
            .and_then(|c| u32::try_from(c).ok()),
        code: m["code"]["code"]
            .as_str()
            .unwrap_or(m["level"].as_str().unwrap_or("clippy"))
            .to_string(),
        message: m["message"].as_str()?.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pyflakes_lines_the_version_and_the_end_are_read() {
        let out = "proven-tool-version: pyflakes 3.2.0 Python 3.11.7 on Linux\n\
                   app/util.py:1:1: 'os' imported but unused\n\
                   app/util.py:5:12: undefined name 'undefined_thing'\n\
                   missing.py: No such file or directory\n\
                   proven-tool-exit: 1\n";
        let a = Analyzer::Pyflakes.read(out);
        assert_eq!(
            a.version.as_deref(),
            Some("pyflakes 3.2.0 Python 3.11.7 on Linux")
        );
        assert_eq!(a.exit_code, Some(1));
        assert_eq!(a.unfinished(Analyzer::Pyflakes), None);
        assert_eq!(a.diagnostics.len(), 2, "{a:?}");
        assert_eq!(a.diagnostics[1].path, "app/util.py");
        assert_eq!(
            (a.diagnostics[1].line, a.diagnostics[1].column),
            (5, Some(12))
        );
        assert_eq!(a.diagnostics[1].message, "undefined name 'undefined_thing'");
    }

    #[test]
    fn go_vet_lines_lose_their_dot_slash_and_a_cut_run_is_unfinished() {
        let out = "proven-tool-version: go version go1.26.0 linux/amd64\n# example.com/app\n\
                   ./main.go:7:2: fmt.Printf format %d has arg name of wrong type string\n";
        let a = Analyzer::GoVet.read(out);
        assert_eq!(a.diagnostics[0].path, "main.go");
        assert_eq!(a.diagnostics[0].code, "go-vet");
        assert!(a.unfinished(Analyzer::GoVet).is_some());
    }

    #[test]
    fn clippy_messages_in_the_tree_are_read_and_a_failed_build_shows_nothing() {
        let msg = r#"{"reason":"compiler-message","message":{"code":{"code":"clippy::needless_return"},"level":"warning","message":"unneeded `return` statement","spans":[{"file_name":"src/lib.rs","line_start":3,"column_start":5,"is_primary":true}]}}"#;
        let dep = r#"{"reason":"compiler-message","message":{"code":null,"level":"warning","message":"x","spans":[{"file_name":"/deps/vendor/a/src/lib.rs","line_start":1,"column_start":1,"is_primary":true}]}}"#;
        let out = format!(
            "proven-tool-version: clippy 0.1.95 (59807616e1 2026-04-14)\n{msg}\n{dep}\nproven-tool-exit: 0\n"
        );
        let a = Analyzer::Clippy.read(&out);
        assert_eq!(a.diagnostics.len(), 1);
        assert_eq!(a.diagnostics[0].code, "clippy::needless_return");
        assert_eq!(a.unfinished(Analyzer::Clippy), None);
        let failed = Analyzer::Clippy.read(&out.replace("exit: 0", "exit: 101"));
        assert!(failed.unfinished(Analyzer::Clippy).is_some());
        assert_eq!(a.scope, None);
        let narrowed = Analyzer::Clippy.read(&out.replace(
            "\nproven-tool-exit",
            "\nproven-tool-scope: every target but the benches\nproven-tool-exit",
        ));
        assert_eq!(
            narrowed.scope.as_deref(),
            Some("every target but the benches")
        );
    }

    #[test]
    fn clippy_runs_again_without_the_benches_only_where_a_target_needs_a_nightly_feature() {
        let c = Analyzer::Clippy.command(&[]).expect("a command");
        let script = &c[2];
        let all = script
            .find("clippy --all-targets")
            .expect("every target first");
        let retry = script.find("E0554").expect("the retry's condition");
        let narrow = script
            .find("clippy --lib --bins --tests --examples")
            .expect("then without the benches");
        assert!(all < retry && retry < narrow, "{script}");
        assert!(script.contains(SCOPE_MARKER), "{script}");
    }

    #[test]
    fn pyflakes_with_no_file_runs_nothing_and_paths_are_arguments() {
        assert_eq!(Analyzer::Pyflakes.command(&[]), None);
        let c = Analyzer::Pyflakes
            .command(&["a b.py".to_string()])
            .expect("a command");
        assert_eq!(c.last().map(String::as_str), Some("a b.py"));
        assert!(!c[2].contains("a b.py"));
    }

    /// A real ESLint 9.39.5 run's JSON (`eslint --format json`, recommended rules,
    /// `prefer-const` as a warning, `gen/**` ignored), its root rewritten to the container's.
    const ESLINT_JSON: &str = include_str!("../testdata/eslint/eslint-9.39.5.json");

    #[test]
    fn eslint_json_reads_errors_and_warnings_by_rule_relative_to_the_root() {
        let out = format!(
            "proven-tool-version: ESLint v9.39.5\nproven-tool-root: /work\n{}\nproven-tool-exit: 1\n",
            ESLINT_JSON.trim()
        );
        let a = Analyzer::Eslint.read(&out);
        assert_eq!(a.version.as_deref(), Some("ESLint v9.39.5"));
        assert_eq!(a.unfinished(Analyzer::Eslint), None);
        let found: Vec<(&str, u32, &str)> = a
            .diagnostics
            .iter()
            .map(|d| (d.path.as_str(), d.line, d.code.as_str()))
            .collect();
        // The parse error is `eslint`; the ignored file's and the unused directive's notes
        // (no rule) are not diagnostics; the warning (severity 1) is.
        assert_eq!(
            found,
            [
                ("bad.js", 1, "eslint"),
                ("lib/a.js", 1, "no-unused-vars"),
                ("lib/a.js", 3, "no-undef"),
                ("lib/b.js", 1, "prefer-const"),
            ]
        );
        assert_eq!(a.diagnostics[2].message, "'undefinedThing' is not defined.");
        assert_eq!(a.diagnostics[2].column, Some(10));
        // Without the root's line, absolute paths are not the tree's: nothing is read.
        let rootless = out.replace("proven-tool-root: /work\n", "");
        assert!(Analyzer::Eslint.read(&rootless).diagnostics.is_empty());
        // A configuration ESLint could not read (exit 2) shows nothing.
        let failed = Analyzer::Eslint.read(&out.replace("exit: 1", "exit: 2"));
        assert!(failed.unfinished(Analyzer::Eslint).is_some());
    }

    #[test]
    fn a_tree_without_eslint_or_its_configuration_shows_why_and_nothing_else() {
        let out = "proven-tool-skipped: the tree has no ESLint configuration (eslint.config.*)\n";
        let a = Analyzer::Eslint.read(out);
        assert!(a.diagnostics.is_empty());
        let why = a.unfinished(Analyzer::Eslint).unwrap_or_default();
        assert!(why.contains("no ESLint configuration"), "{why}");
    }

    #[test]
    fn eslint_reads_the_changed_js_and_ts_files_given_as_arguments() {
        assert!(Analyzer::Eslint.reads("src/a.tsx") && Analyzer::Eslint.reads("b.mjs"));
        assert!(!Analyzer::Eslint.reads("a.py") && !Analyzer::Pyflakes.reads("a.js"));
        assert_eq!(Analyzer::Eslint.command(&[]), None);
        let c = Analyzer::Eslint
            .command(&["src/$(rm -rf x).js".to_string()])
            .expect("a command");
        assert_eq!(c.last().map(String::as_str), Some("src/$(rm -rf x).js"));
        assert!(!c[2].contains("rm -rf"));
        assert!(c[2].contains("node_modules/.bin/eslint") && c[2].contains("--format json"));
    }
}
