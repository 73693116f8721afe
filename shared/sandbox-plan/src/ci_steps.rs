//! The steps a GitHub workflow's job runs, in order, read as text (as [`crate::ci_matrix`]
//! reads matrices): a Node project's CI often builds before it tests (`pnpm run build`,
//! then `pnpm run test`: vite's, vue's, many a TypeScript package's tests load what the
//! build writes), a step `npm test` does not run by itself. The suite runs the build its
//! CI runs before the tests ([`crate::suite`]).

/// One job of a workflow: its name, where it runs, and its `run:` commands in order (a
/// block's lines each, `&&` chains split).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub name: String,
    pub runs_on: String,
    pub commands: Vec<String>,
    /// The Rust toolchains its steps set up, as written: `dtolnay/rust-toolchain@nightly`'s
    /// `nightly`, a `toolchain:` input's value (`${{ matrix.rust }}` too).
    pub toolchains: Vec<String>,
    /// The variables its `env:` sets, as written (`${{ … }}` values too).
    pub env: Vec<(String, String)>,
    /// The actions its steps use, in order: each one's name without its `@` reference
    /// (`shogo82148/actions-setup-mysql`) and its `with:` inputs as written.
    pub actions: Vec<Action>,
}

/// A step's action and its inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    pub name: String,
    pub with: Vec<(String, String)>,
}

/// The jobs of a workflow, in the file's order.
pub fn jobs(text: &str) -> Vec<Job> {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let Some(start) = lines.iter().position(|l| l.trim_end() == "jobs:") else {
        return Vec::new();
    };
    let mut jobs: Vec<Job> = Vec::new();
    let mut job_indent = None;
    let mut key_at: Option<usize> = None;
    // The column of the last `uses:` key, while its step goes on: a `with:` there is its.
    let mut uses_at: Option<usize> = None;
    let mut i = start + 1;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        i += 1;
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let at = indent(line);
        if at == 0 {
            break;
        }
        let job_at = *job_indent.get_or_insert(at);
        if at == job_at {
            if let Some(name) = trimmed.strip_suffix(':') {
                jobs.push(Job {
                    name: name.trim_matches(['"', '\'']).to_string(),
                    runs_on: String::new(),
                    commands: Vec::new(),
                    toolchains: Vec::new(),
                    env: Vec::new(),
                    actions: Vec::new(),
                });
                key_at = None;
                uses_at = None;
            }
            continue;
        }
        let Some(job) = jobs.last_mut() else { continue };
        // The job's own keys are at the indent of its first; `env:` there is the job's.
        if *key_at.get_or_insert(at) == at && trimmed == "env:" {
            let (vars, next) = mapping(&lines, i, at);
            job.env = vars;
            i = next;
            continue;
        }
        let key_line = trimmed.strip_prefix("- ").unwrap_or(trimmed);
        let key_col = at + (trimmed.len() - key_line.len());
        if trimmed.starts_with("- ") || uses_at.is_some_and(|u| key_col < u) {
            uses_at = None;
        }
        if let Some(value) = key_line.strip_prefix("uses:") {
            let value = value.split(" #").next().unwrap_or_default().trim();
            let value = value.trim_matches(['"', '\'']);
            job.actions.push(Action {
                name: value.split('@').next().unwrap_or(value).to_string(),
                with: Vec::new(),
            });
            uses_at = Some(key_col);
        }
        if key_line == "with:"
            && uses_at == Some(key_col)
            && let Some(action) = job.actions.last_mut()
        {
            let (inputs, next) = mapping(&lines, i, key_col);
            action.with = inputs;
            i = next;
            continue;
        }
        if let Some(value) = key_line.strip_prefix("runs-on:") {
            job.runs_on = value.trim().trim_matches(['"', '\'']).to_string();
            continue;
        }
        if let Some(value) = key_line.strip_prefix("uses:")
            && let Some((action, at)) = value.trim().split_once('@')
            && action.ends_with("rust-toolchain")
            && at != "master"
            && at != "v1"
        {
            job.toolchains
                .push(at.trim_matches(['"', '\'']).to_string());
            continue;
        }
        if let Some(value) = key_line.strip_prefix("toolchain:") {
            job.toolchains
                .push(value.trim().trim_matches(['"', '\'']).to_string());
            continue;
        }
        let Some(value) = key_line.strip_prefix("run:") else {
            continue;
        };
        let value = value.trim();
        let run_at = at + (trimmed.len() - key_line.len());
        let mut raw: Vec<String> = Vec::new();
        if value.starts_with(['|', '>']) {
            // A block: the lines indented past the `run:` key.
            while i < lines.len() {
                let next = lines[i];
                if !next.trim().is_empty() && indent(next) <= run_at {
                    break;
                }
                raw.push(next.trim().to_string());
                i += 1;
            }
        } else {
            raw.push(value.trim_matches(['"', '\'']).to_string());
        }
        for line in raw {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            job.commands.extend(
                line.split("&&")
                    .map(|c| c.trim().to_string())
                    .filter(|c| !c.is_empty()),
            );
        }
    }
    jobs
}

/// The `NAME: value` lines of a block mapping from line `from`, those indented past `at`;
/// the values unquoted; and the line after the block.
fn mapping(lines: &[&str], from: usize, at: usize) -> (Vec<(String, String)>, usize) {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut vars = Vec::new();
    let mut i = from;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if !trimmed.is_empty() && indent(line) <= at {
            break;
        }
        i += 1;
        if trimmed.starts_with('#') {
            continue;
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            let value = value.split(" #").next().unwrap_or_default().trim();
            vars.push((
                name.trim().trim_matches(['"', '\'']).to_string(),
                value.trim_matches(['"', '\'']).to_string(),
            ));
        }
    }
    (vars, i)
}

/// The variables a workflow's top-level `env:` sets, for every job.
pub fn workflow_env(text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .position(|l| l.trim_end() == "env:")
        .map(|at| mapping(&lines, at + 1, 0).0)
        .unwrap_or_default()
}

/// The name of the package script a command runs through npm, pnpm or yarn (`npm test`,
/// `npm run build --if-present`, `pnpm -r build`, `CI=true yarn test:unit`), if it runs one.
pub fn script_of(command: &str) -> Option<&str> {
    let mut words = command
        .split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'));
    let manager = words.next()?;
    if !["npm", "pnpm", "yarn"].contains(&manager) {
        return None;
    }
    // Options left out, with the value of those that take one (`--filter ./packages/a`).
    let mut rest = Vec::new();
    while let Some(w) = words.next() {
        if [
            "--filter",
            "-F",
            "--dir",
            "-C",
            "--workspace",
            "-w",
            "--cwd",
            "--prefix",
        ]
        .contains(&w)
        {
            words.next();
        } else if !w.starts_with('-') {
            rest.push(w);
        }
    }
    let mut rest = rest.into_iter();
    let first = rest.next()?;
    match (manager, first) {
        ("npm", "test" | "t") => Some("test"),
        (_, "run" | "run-script") => rest.next(),
        ("npm", _) => None,
        (_, "install" | "i" | "add" | "exec" | "dlx" | "x" | "ci") => None,
        (_, name) => Some(name),
    }
}

/// A script name of the family `family` (`test`, `test:unit`, `test-e2e`, `build`,
/// `build:types`).
fn of_family(name: &str, family: &str) -> bool {
    name.strip_prefix(family)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '-', '_']))
}

/// The build commands the first job (on Linux) that tests runs before its first test step,
/// with that job's name: `pnpm run build` before `pnpm run test-unit`. None when no job
/// builds before it tests.
pub fn build_before_tests(job: &Job) -> Option<Vec<String>> {
    if !on_linux(job) {
        return None;
    }
    let tests_at = job
        .commands
        .iter()
        .position(|c| script_of(c).is_some_and(|s| of_family(s, "test")))?;
    let builds: Vec<String> = job.commands[..tests_at]
        .iter()
        .filter(|c| !c.contains("${{") && script_of(c).is_some_and(|s| of_family(s, "build")))
        .cloned()
        .collect();
    (!builds.is_empty()).then_some(builds)
}

/// Whether a job runs on Linux (a job on Windows or macOS runs what the sandbox cannot:
/// vue's `unit-test-windows`). A runner chosen by a matrix (`${{ matrix.os }}`) may be.
pub fn on_linux(job: &Job) -> bool {
    let runner = job.runs_on.to_ascii_lowercase();
    !runner.contains("windows") && !runner.contains("macos")
}

/// The package scripts of the test family a job runs (`pnpm run test-unit`, `npm test`),
/// in order, each once; none run under a value the workflow chooses (`${{ … }}`).
pub fn test_scripts(job: &Job) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for command in job.commands.iter().filter(|c| !c.contains("${{")) {
        if let Some(name) = script_of(command).filter(|s| of_family(s, "test"))
            && !out.contains(&name)
        {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// vite's workflow, in short: install, build, then its test scripts.
    const VITE: &str = r#"name: CI
on:
  push:
jobs:
  test:
    timeout-minutes: 20
    runs-on: ${{ matrix.os }}
    steps:
      - uses: actions/checkout@v4
      - name: Install deps
        run: pnpm install
      # Install playwright's binary under custom directory to cache
      - name: Build
        run: pnpm run build
      - name: Test unit
        run: pnpm run test-unit
      - name: Test serve
        run: |
          pnpm run test-serve
          pnpm run test-build
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: pnpm install && pnpm run lint
"#;

    #[test]
    fn a_workflows_jobs_are_their_run_commands_in_order() {
        let jobs = jobs(VITE);
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].name, "test");
        assert_eq!(
            jobs[0].commands,
            [
                "pnpm install",
                "pnpm run build",
                "pnpm run test-unit",
                "pnpm run test-serve",
                "pnpm run test-build"
            ]
        );
        assert_eq!(jobs[1].runs_on, "ubuntu-latest");
        assert_eq!(jobs[1].commands, ["pnpm install", "pnpm run lint"]);
    }

    #[test]
    fn the_build_a_job_runs_before_its_first_test_step() {
        let jobs = jobs(VITE);
        assert_eq!(
            build_before_tests(&jobs[0]),
            Some(vec!["pnpm run build".to_string()])
        );
        assert_eq!(build_before_tests(&jobs[1]), None, "no test step");
        let windows = Job {
            name: "w".into(),
            runs_on: "windows-latest".into(),
            commands: vec!["npm run build".into(), "npm test".into()],
            toolchains: Vec::new(),
            env: Vec::new(),
            actions: Vec::new(),
        };
        assert_eq!(build_before_tests(&windows), None);
        let after = Job {
            name: "a".into(),
            runs_on: "ubuntu-latest".into(),
            commands: vec!["npm ci".into(), "npm test".into(), "npm run build".into()],
            toolchains: Vec::new(),
            env: Vec::new(),
            actions: Vec::new(),
        };
        assert_eq!(build_before_tests(&after), None, "a build after the tests");
    }

    #[test]
    fn the_script_a_command_runs() {
        for (command, script) in [
            ("npm test", Some("test")),
            ("npm t", Some("test")),
            ("npm run build --if-present", Some("build")),
            ("npm run-script test:unit", Some("test:unit")),
            ("pnpm -r build", Some("build")),
            (
                "pnpm --filter ./packages/a run build:types",
                Some("build:types"),
            ),
            ("CI=true yarn test", Some("test")),
            ("yarn build", Some("build")),
            ("pnpm install --frozen-lockfile", None),
            ("npm ci", None),
            ("npx tsc", None),
            ("node scripts/build.js", None),
        ] {
            assert_eq!(script_of(command), script, "{command}");
        }
        assert!(of_family("test-e2e", "test") && of_family("build", "build"));
        assert!(!of_family("testing", "test") && !of_family("builder", "build"));
    }
}
