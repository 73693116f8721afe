//! `cargo xtask`: the project's chores, in Rust so they run wherever cargo does.
//!
//! ```text
//! cargo xtask docs [--check]   regenerate docs/configuration.md from the settings table
//! cargo xtask lint             cargo fmt --check and clippy -D warnings, as a commit needs
//! cargo xtask bench [NAME…]    the benchmarks that measure Proven against a peer, in turn
//! cargo xtask bench tool --bugsinpy PATH | --bugsjs PATH | --commits, then --repos DIR
//!                              [--case ID…] [--rounds N] [--out FILE]
//!                              a review's wall time with the tool evidence against the
//!                              same review without it, on BugsInPy cases (pyflakes), BugsJS
//!                              cases (ESLint) or Go and Rust commits (go vet, clippy)
//!                              (corpus/toolbench.rs)
//! cargo xtask suites --repos DIR [--only NAME…] [--out FILE]   real projects' own suites
//!                              at their heads, in the sandbox (issue 16)
//! cargo xtask gomirror --repos DIR --out DIR SOURCE…
//!                              a static Go module proxy built from the modules' git
//!                              repositories, each zip checked against go.sum (gomirror.rs)
//! cargo xtask corpus bugsinpy --bugsinpy PATH --repos DIR [--project NAME…] [--limit N] [--out FILE]
//! cargo xtask corpus bugsjs --bugsjs PATH --repos DIR [--project NAME…] [--limit N] [--out FILE]
//!                              Proven on real bugs of BugsInPy or BugsJS: sandbox fidelity,
//!                              reproduced, fix proved, false proofs, every miss by cause
//!                              (the world's or Proven's) (see corpus/mod.rs)
//! cargo xtask reach --repos DIR [--govulndb PATH] [--out FILE] [--order Go,Rust,Python]
//!                              reachability verdicts of dependency findings over fixed
//!                              real repositories' lock files, at head and as of a fixed
//!                              earlier date (see reach.rs)
//! ```
//!
//! The test suite is not here: `scripts/test` is the one command (CI runs exactly it).

mod corpus;
mod gomirror;
mod reach;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod suites;

/// Each benchmark that reports a ratio against a peer measured in the same run:
/// (name, package, bench target, what it compares).
const BENCHES: &[(&str, &str, &str, &str)] = &[
    (
        "deps",
        "proven-cli",
        "deps",
        "dependency evidence on real lock files against cargo-audit and osv-scanner",
    ),
    (
        "versions",
        "proven-version",
        "versions",
        "version comparisons and range matching per ecosystem against the semver crate",
    ),
    (
        "queue",
        "proven-worker",
        "queue",
        "the durable pipeline's no-op steps/s against pgbench -N at 1, 2 and 4 clients, and a no-op review's latency (embedded and service) against one store round trip",
    ),
    (
        "sandbox",
        "proven-sandbox",
        "overhead",
        "a sandbox run against `docker run --rm` and a bare process",
    ),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("docs") => docs(args.iter().any(|a| a == "--check")),
        Some("lint") => lint(),
        // The tool evidence's bench reviews real projects: it takes the corpus's arguments.
        Some("bench") if args.get(1).is_some_and(|a| a == "tool") => {
            corpus::run(&tool_bench_args(&args[2..]), &root())
        }
        Some("bench") => bench(&args[1..]),
        Some("suites") => suites::run(&args[1..]),
        Some("corpus") => corpus::run(&args[1..], &root()),
        Some("gomirror") => gomirror::run(&args[1..]),
        Some("reach") => reach::run(&args[1..], &root()),
        _ => Err(usage()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `bench tool ARGS` as the corpus's arguments: the corpus its dataset flag names
/// (`--bugsjs`, `--commits`; else BugsInPy's), with `--tool-bench`.
fn tool_bench_args(args: &[String]) -> Vec<String> {
    let corpus = if args.iter().any(|a| a == "--bugsjs") {
        "bugsjs"
    } else if args.iter().any(|a| a == "--commits") {
        "commits"
    } else {
        "bugsinpy"
    };
    let mut out = vec![corpus.to_string(), "--tool-bench".to_string()];
    out.extend(args.iter().filter(|a| *a != "--commits").cloned());
    out
}

fn usage() -> String {
    let names: Vec<&str> = BENCHES.iter().map(|b| b.0).collect();
    format!(
        "usage: cargo xtask docs [--check] | lint | bench [{}] | bench tool --bugsinpy PATH|--bugsjs PATH|--commits --repos DIR [--case ID…] [--rounds N] [--out FILE] | suites --repos DIR [--only NAME…] [--out FILE] | {} | {}",
        names.join("|"),
        gomirror::usage().trim_start_matches("cargo xtask "),
        corpus::usage().trim_start_matches("cargo xtask ")
    )
}

/// The repository's root (this crate lives in `xtask/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// docs/configuration.md is generated from the settings table; `--check` fails when the
/// committed file is not what the table generates (the config crate's test checks it too).
fn docs(check: bool) -> Result<(), String> {
    let path = root().join("docs/configuration.md");
    let generated = proven_config::reference_markdown();
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == generated {
        eprintln!("xtask: {} is current", path.display());
        return Ok(());
    }
    if check {
        return Err(format!(
            "{} is stale: run `cargo xtask docs`",
            path.display()
        ));
    }
    std::fs::write(&path, generated).map_err(|e| format!("write {}: {e}", path.display()))?;
    eprintln!("xtask: wrote {}", path.display());
    Ok(())
}

fn lint() -> Result<(), String> {
    cargo(&["fmt", "--all", "--", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])
}

fn bench(names: &[String]) -> Result<(), String> {
    for name in names {
        if !BENCHES.iter().any(|b| b.0 == name) {
            return Err(format!("no benchmark {name:?}; {}", usage()));
        }
    }
    for (name, package, target, what) in BENCHES {
        if !names.is_empty() && !names.iter().any(|n| n == name) {
            continue;
        }
        eprintln!("xtask: bench {name}: {what}");
        cargo(&["bench", "-p", package, "--bench", target])?;
    }
    Ok(())
}

fn cargo(args: &[&str]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .args(args)
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_tool_bench_runs_the_corpus_its_dataset_flag_names() {
        assert_eq!(
            tool_bench_args(&strings(&["--bugsinpy", "B", "--repos", "R"])),
            strings(&[
                "bugsinpy",
                "--tool-bench",
                "--bugsinpy",
                "B",
                "--repos",
                "R"
            ])
        );
        assert_eq!(
            tool_bench_args(&strings(&["--bugsjs", "J", "--case", "Hexo-1"]))[..2],
            strings(&["bugsjs", "--tool-bench"])
        );
        assert_eq!(
            tool_bench_args(&strings(&["--commits", "--repos", "R", "--rounds", "2"])),
            strings(&["commits", "--tool-bench", "--repos", "R", "--rounds", "2"])
        );
    }
}
