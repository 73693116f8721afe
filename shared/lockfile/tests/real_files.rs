//! Every real dependency file under shared/data/lockfiles, read through `FsTree`.
//!
//! Expected counts were computed independently of this crate with Python one-offs (tomllib /
//! json / re over the same files), as noted beside each; the (name, version, kind, dev, line)
//! facts were looked up in the files by hand (`sed -n Np`, `grep -n`).

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};

use proven_lockfile::{
    Dependency, DependencyFile, DependencyKind, FsTree, Limits, Origin, read, version_sources,
};

const ROOT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/lockfiles"
);

fn load(path: &str) -> DependencyFile {
    read(&FsTree::new(ROOT), path, &Limits::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn find<'a>(file: &'a DependencyFile, name: &str, version: &str) -> &'a Dependency {
    file.dependencies
        .iter()
        .find(|d| d.name == name && d.version == version)
        .unwrap_or_else(|| panic!("{name} {version} not in {}", file.path))
}

/// Checks (kind, dev, line) of one dependency.
fn check(
    file: &DependencyFile,
    name: &str,
    version: &str,
    kind: DependencyKind,
    dev: bool,
    line: u32,
) {
    let d = find(file, name, version);
    assert_eq!(
        (d.kind, d.dev, d.line),
        (kind, dev, Some(line)),
        "{name} {version} in {}",
        file.path
    );
}

fn count(file: &DependencyFile, pred: impl Fn(&Dependency) -> bool) -> usize {
    file.dependencies.iter().filter(|d| pred(d)).count()
}

use DependencyKind::{Direct, Transitive, Unknown};

#[test]
fn cargo_ripgrep_v1_with_metadata() {
    let f = load("cargo/BurntSushi__ripgrep__e14f9195e5/Cargo.lock");
    // python: len(tomllib.load(f)["package"]) == 63; 53 with a registry source, 10 without.
    assert_eq!(f.dependencies.len(), 63);
    assert_eq!(count(&f, |d| d.origin == Origin::Registry), 53);
    assert_eq!(count(&f, |d| d.origin == Origin::Path), 10);
    check(&f, "regex", "1.2.1", Direct, false, 353);
    check(&f, "bitflags", "1.1.0", Transitive, false, 29);
    assert_eq!(find(&f, "ignore", "0.4.10").origin, Origin::Path);
}

#[test]
fn cargo_zero_to_production_v3_with_dev_dependencies() {
    let f = load("cargo/LukeMathWalker__zero-to-production__970987c5f7/Cargo.lock");
    // python: 349 packages, 348 from the registry, 1 workspace crate.
    assert_eq!(f.dependencies.len(), 349);
    assert_eq!(count(&f, |d| d.origin == Origin::Registry), 348);
    // Cargo.toml lists claims and wiremock under [dev-dependencies] only.
    check(&f, "claims", "0.7.1", Direct, true, 562);
    check(&f, "wiremock", "0.6.1", Direct, true, 3470);
    check(&f, "actix-web", "4.9.0", Direct, false, 153);
}

#[test]
fn cargo_rust_analyzer_v4_workspace() {
    let f = load("cargo/rust-lang__rust-analyzer__d2e55da491/Cargo.lock");
    // python: 377 packages, 333 registry, 44 workspace crates (no source).
    assert_eq!(f.dependencies.len(), 377);
    assert_eq!(count(&f, |d| d.origin == Origin::Registry), 333);
    assert_eq!(count(&f, |d| d.origin == Origin::Path), 44);
    check(&f, "addr2line", "0.25.1", Transitive, false, 6);
    check(&f, "hir", "0.0.0", Direct, false, 810);
}

#[test]
fn cargo_mini_redis_v2() {
    let f = load("cargo/tokio-rs__mini-redis__0fb264826d/Cargo.lock");
    // python: 88 packages, 87 registry.
    assert_eq!(f.dependencies.len(), 88);
    // tokio is in [dependencies] and [dev-dependencies]: it ships.
    check(&f, "tokio", "1.0.0", Direct, false, 628);
}

#[test]
fn npm_piston_v2_root_and_api() {
    let f = load("npm/engineer-man__piston__0a844d0a3c/package-lock.json");
    assert_eq!(f.dependencies.len(), 1);
    check(&f, "prettier", "2.4.1", Direct, true, 11);

    let f = load("npm/engineer-man__piston__0a844d0a3c/api/package-lock.json");
    // python: 62 entries besides "" in `packages`, none linked; 2 are git (no version).
    assert_eq!(f.dependencies.len(), 62);
    assert_eq!(count(&f, |d| d.origin == Origin::Registry), 60);
    let nocamel = find(&f, "nocamel", "89a5bfbbd07c72c302d968b967d0f4fe54846544");
    assert!(matches!(nocamel.origin, Origin::Git { .. }));
    assert_eq!(nocamel.line, Some(374));
    check(&f, "express", "4.17.3", Direct, false, 157);
}

#[test]
fn npm_codereviewbench_v3() {
    let f = load("npm/kodustech__codereviewbench__cbedb953ac/package-lock.json");
    // python: 481 entries besides "", 477 distinct (name, version); 363 only ever `dev`.
    assert_eq!(f.dependencies.len(), 477);
    assert_eq!(count(&f, |d| d.dev), 363);
    check(&f, "next", "16.1.6", Direct, false, 5367);
    check(&f, "typescript", "5.9.3", Direct, true, 6814);
}

#[test]
fn npm_rust_analyzer_v3() {
    let f = load("npm/rust-lang__rust-analyzer__d2e55da491/editors/code/package-lock.json");
    // python: 568 entries besides "", 538 distinct (name, version); 472 only ever `dev`.
    assert_eq!(f.dependencies.len(), 538);
    assert_eq!(count(&f, |d| d.dev), 472);
    check(&f, "d3", "7.9.0", Direct, false, 2840);
}

#[test]
fn yarn_classic_apalis_board() {
    let f = load("yarn/apalis-dev__apalis-board__fbcaeb4105/yarn.lock");
    // python: 153 entry headers (unindented, non-comment lines), one version each.
    assert_eq!(f.dependencies.len(), 153);
    // No package.json beside it: the lock alone does not tell direct from transitive.
    assert!(f.dependencies.iter().all(|d| d.kind == Unknown));
    check(&f, "@alloc/quick-lru", "5.2.0", Unknown, false, 5);
    check(
        &f,
        "@jridgewell/sourcemap-codec",
        "1.5.5",
        Unknown,
        false,
        31,
    );
}

#[test]
fn poetry_neon_v2_groups_and_pyproject() {
    let f = load("pypi/neondatabase__neon__6a35a3e9f1/poetry.lock");
    // python: 132 packages; 3 whose groups do not include "main".
    assert_eq!(f.dependencies.len(), 132);
    assert_eq!(count(&f, |d| d.dev), 3);
    check(&f, "aiohttp", "3.12.14", Direct, false, 16);
    check(&f, "mypy", "1.13.0", Direct, true, 1992);
}

#[test]
fn uv_swe_bench() {
    let f = load("pypi/SWE-bench__SWE-bench__7a21e05772/uv.lock");
    // python: 166 packages, 165 with a version (the editable project itself has none).
    assert_eq!(f.dependencies.len(), 165);
    check(&f, "requests", "2.34.2", Direct, false, 3160);
    check(&f, "accelerate", "1.14.0", Transitive, false, 18);
    // numpy is locked at several versions for different Python versions.
    find(&f, "numpy", "2.2.6");
    find(&f, "numpy", "2.4.6");
}

#[test]
fn requirements_dvpwa_pip_compile() {
    let f = load("pypi/anxolerd__dvpwa__a1d8f89fac/requirements.txt");
    // python: 18 lines containing `==`; 10 of them carry a `# via` annotation.
    assert_eq!(f.dependencies.len(), 18);
    assert_eq!(count(&f, |d| d.kind == Transitive), 10);
    check(&f, "aiohttp", "3.5.3", Direct, false, 3);
    check(&f, "attrs", "18.2.0", Transitive, false, 7);
}

#[test]
fn go_mod_faktory_and_river() {
    let f = load("go/contribsys__faktory__cf9073fe16/go.mod");
    // python: 8 requirement lines, 5 of them `// indirect`.
    assert_eq!(f.dependencies.len(), 8);
    assert_eq!(count(&f, |d| d.kind == Transitive), 5);
    check(&f, "github.com/BurntSushi/toml", "v1.5.0", Direct, false, 6);
    check(&f, "gopkg.in/yaml.v3", "v3.0.1", Transitive, false, 19);

    let f = load("go/riverqueue__river__fdf6cdf125/go.mod");
    // python: 21 requirement lines, 9 `// indirect`.
    assert_eq!(f.dependencies.len(), 21);
    assert_eq!(count(&f, |d| d.kind == Transitive), 9);
    check(&f, "github.com/jackc/pgx/v5", "v5.10.0", Direct, false, 9);
    check(&f, "golang.org/x/text", "v0.40.0", Transitive, false, 30);
}

#[test]
fn go_sum_alone() {
    let f = load("go/contribsys__faktory__cf9073fe16/go.sum");
    // python: 11 distinct (module, version) with a content hash (not `/go.mod`).
    assert_eq!(f.dependencies.len(), 11);
    let f = load("go/riverqueue__river__fdf6cdf125/go.sum");
    assert_eq!(f.dependencies.len(), 25);
}

#[test]
fn composer_bookstack() {
    let f = load("composer/BookStackApp__BookStack__ba0af9214e/composer.lock");
    // python: 64 in `packages`, 48 in `packages-dev`.
    assert_eq!(f.dependencies.len(), 112);
    assert_eq!(count(&f, |d| d.dev), 48);
    check(&f, "aws/aws-sdk-php", "3.86.2", Transitive, false, 10);
    check(&f, "laravel/framework", "v5.5.44", Direct, false, 1325);
    check(&f, "phpunit/phpunit", "6.5.13", Direct, true, 5279);
    assert!(
        f.notes
            .iter()
            .any(|n| n.contains("laravel/socialite 3.0.x-dev")),
        "{:?}",
        f.notes
    );
}

#[test]
fn gemfile_lock_judge0() {
    let f = load("rubygems/judge0__judge0__47dfd633b8/Gemfile.lock");
    // python: 82 distinct specs (4-space `name (version)` lines); DEPENDENCIES lists 15.
    assert_eq!(f.dependencies.len(), 82);
    assert_eq!(count(&f, |d| d.kind == Direct), 15);
    check(&f, "nokogiri", "1.14.5", Transitive, false, 129);
    check(&f, "rails", "6.1.7.7", Direct, false, 152);
    // The Gemfile puts listen in `group :development`.
    check(&f, "listen", "3.7.1", Direct, true, 98);
}

#[test]
fn gradle_nowinandroid() {
    let f = load("maven/android__nowinandroid__d6abd6d3e5/gradle/libs.versions.toml");
    // python: 103 libraries, 88 with a version (15 managed by a BOM).
    assert_eq!(f.dependencies.len(), 88);
    check(
        &f,
        "com.google.accompanist:accompanist-permissions",
        "0.37.0",
        Direct,
        false,
        72,
    );
    check(&f, "javax.inject:javax.inject", "1", Direct, false, 138);
    assert!(
        f.notes
            .iter()
            .any(|n| n.starts_with("15 libraries have no version")),
        "{:?}",
        f.notes
    );

    // The build scripts use catalog references only: no literal versions.
    let app = load("maven/android__nowinandroid__d6abd6d3e5/app/build.gradle.kts");
    assert!(app.dependencies.is_empty());
    assert!(
        app.notes.iter().any(|n| n.contains("version catalog")),
        "{:?}",
        app.notes
    );
    assert!(
        load("maven/android__nowinandroid__d6abd6d3e5/build.gradle.kts")
            .dependencies
            .is_empty()
    );
}

#[test]
fn manifests_alone_give_only_exact_pins() {
    assert!(
        load("cargo/tokio-rs__mini-redis__0fb264826d/Cargo.toml")
            .dependencies
            .is_empty()
    );
    assert!(
        load("composer/BookStackApp__BookStack__ba0af9214e/composer.json")
            .dependencies
            .is_empty()
    );
    assert!(
        load("rubygems/judge0__judge0__47dfd633b8/Gemfile")
            .dependencies
            .is_empty()
    );
    // pyproject.toml pins aiohttp = "3.12.14" (Poetry: exact) and mypy = "==1.13.0".
    let py = load("pypi/neondatabase__neon__6a35a3e9f1/pyproject.toml");
    assert_eq!(py.dependencies.len(), 2);
    check(&py, "aiohttp", "3.12.14", Direct, false, 35);
    check(&py, "mypy", "1.13.0", Direct, true, 56);
}

#[test]
fn version_sources_on_the_real_tree() {
    let tree = FsTree::new(ROOT);
    let s = |p: &str| version_sources(&tree, p).unwrap();
    assert_eq!(
        s("cargo/tokio-rs__mini-redis__0fb264826d/Cargo.toml"),
        vec!["cargo/tokio-rs__mini-redis__0fb264826d/Cargo.lock"]
    );
    assert_eq!(
        s("npm/engineer-man__piston__0a844d0a3c/api/package.json"),
        vec!["npm/engineer-man__piston__0a844d0a3c/api/package-lock.json"]
    );
    assert_eq!(
        s("go/riverqueue__river__fdf6cdf125/go.sum"),
        vec!["go/riverqueue__river__fdf6cdf125/go.mod"]
    );
    assert_eq!(
        s("pypi/anxolerd__dvpwa__a1d8f89fac/requirements.txt"),
        vec!["pypi/anxolerd__dvpwa__a1d8f89fac/requirements.txt"]
    );
    assert_eq!(
        s("pypi/neondatabase__neon__6a35a3e9f1/pyproject.toml"),
        vec!["pypi/neondatabase__neon__6a35a3e9f1/poetry.lock"]
    );
    assert_eq!(
        s("rubygems/judge0__judge0__47dfd633b8/Gemfile"),
        vec!["rubygems/judge0__judge0__47dfd633b8/Gemfile.lock"]
    );
    assert_eq!(
        s("maven/android__nowinandroid__d6abd6d3e5/app/build.gradle.kts"),
        vec!["maven/android__nowinandroid__d6abd6d3e5/gradle/libs.versions.toml"]
    );
    assert!(s("README.md").is_empty());
}

/// Every (package, version) a peer tool (cargo-audit, a reference matcher) found in a lock file
/// is among what the reader returns for that file.
#[test]
fn expected_jsonl_pairs_are_found() {
    let text = std::fs::read_to_string(format!("{ROOT}/EXPECTED.jsonl")).unwrap();
    let mut wanted: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let file = v["lockfile"].as_str().unwrap().to_string();
        let pair = (
            v["package"].as_str().unwrap().to_string(),
            v["version"].as_str().unwrap().to_string(),
        );
        wanted.entry(file).or_default().insert(pair);
    }
    assert!(wanted.len() >= 7, "{:?}", wanted.keys());
    for (file, pairs) in wanted {
        let got: BTreeSet<(String, String)> = load(&file)
            .dependencies
            .into_iter()
            .map(|d| (d.name, d.version))
            .collect();
        let missing: Vec<_> = pairs.difference(&got).collect();
        assert!(missing.is_empty(), "{file}: missing {missing:?}");
    }
}
