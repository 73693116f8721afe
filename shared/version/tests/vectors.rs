//! Runs every row of every file in `shared/data/vectors` through Proven's version rules.
//!
//! One test per file. Each fails on any difference that is not a written decision in
//! `known-differences.jsonl`, and on a decision whose row now agrees (the list must shrink
//! when the code improves). Agreement floors depend on who scored the file:
//!
//! * an ecosystem's own test suite (pypa/packaging, node-semver, Maven's
//!   ComparableVersionTest, x/mod/semver, composer/semver, rubygems, dpkg): 100% of the
//!   understood rows must agree, with no decision needed;
//! * real advisory ranges scored with the ecosystem's reference library: at least 99.9% per
//!   (ecosystem, kind);
//! * osv-scalibr's and osv.dev's own comparators (third-party reimplementations): every
//!   difference must be a written decision, but no floor applies, because following the
//!   reference implementation (Maven's ComparableVersion, Composer's normalisation, strict
//!   PEP 440) is itself the decision those rows record. The numbers are printed.
//!
//! Kinds that are not about versions are counted as "not understood", with the reason.
//! `PROVEN_VECTORS_DUMP=DIR` writes each file's differences (known or not) as JSON Lines
//! into DIR, which is how `known-differences.jsonl` is reviewed and refreshed. The totals
//! per ecosystem and kind over all files:
//! `cargo test -p proven-version --test vectors -- --ignored --nocapture summary`.

use std::path::{Path, PathBuf};

use proven_version::vectors::{KnownDecisions, VectorsReport, check_files, fingerprint};

fn vectors_dir() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/vectors"
    ))
    .to_path_buf()
}

fn known_path() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/known-differences.jsonl"
    ))
    .to_path_buf()
}

fn known() -> KnownDecisions {
    KnownDecisions::load(&known_path()).expect("known-differences.jsonl loads")
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scored {
    /// The ecosystem's own test suite.
    OwnSuite,
    /// Real advisory data scored with the ecosystem's reference library.
    Reference,
    /// osv-scalibr's or osv.dev's own comparators.
    ThirdParty,
    /// Nothing in the file is about versions.
    NotVersions,
}

/// Runs one file; returns the report after asserting what every file must meet.
fn check(name: &str, scored: Scored) -> VectorsReport {
    let path = vectors_dir().join(name);
    let report = check_files(std::slice::from_ref(&path), &known()).expect("vectors file reads");
    println!("{report}");
    if let Ok(dir) = std::env::var("PROVEN_VECTORS_DUMP") {
        let mut out = String::new();
        for d in report.disagreements.iter().chain(&report.known_differences) {
            out.push_str(&serde_json::to_string(d).expect("serialises"));
            out.push('\n');
        }
        std::fs::write(Path::new(&dir).join(name), out).expect("dump written");
    }
    assert!(report.rows_checked() > 0, "{name}: no rows");
    assert!(
        report.all_agree(),
        "{name}: {} unexplained differences (see above)",
        report.disagreements.len()
    );
    assert!(
        report.stale_decisions.is_empty(),
        "{name}: known decisions whose rows now agree: {:?}",
        report.stale_decisions
    );
    let floor = match scored {
        Scored::OwnSuite => 1.0,
        Scored::Reference => 0.999,
        Scored::ThirdParty | Scored::NotVersions => return report,
    };
    for ((eco, kind), g) in report.by_ecosystem_and_kind() {
        if let Some(agreement) = g.agreement() {
            assert!(
                agreement >= floor,
                "{name} [{eco} {kind}]: agreement {:.4}% below {:.1}%",
                agreement * 100.0,
                floor * 100.0
            );
        }
    }
    report
}

fn not_understood(report: &VectorsReport) -> usize {
    report.groups.values().map(|g| g.not_understood).sum()
}

#[test]
fn pypi_packaging_test_suite() {
    let r = check("pypi-packaging.jsonl", Scored::OwnSuite);
    assert_eq!(not_understood(&r), 0);
}

#[test]
fn npm_node_semver_test_suite() {
    let r = check("npm-node-semver.jsonl", Scored::OwnSuite);
    // Two `valid` rows pass a JavaScript regexp/object, which a string API cannot receive.
    assert_eq!(not_understood(&r), 2);
}

#[test]
fn maven_comparable_version_test_suite() {
    let r = check("maven-comparableversion.jsonl", Scored::OwnSuite);
    assert_eq!(not_understood(&r), 0);
}

#[test]
fn go_x_mod_semver_test_suite() {
    let r = check("go-x-mod-semver.jsonl", Scored::OwnSuite);
    assert_eq!(not_understood(&r), 0);
}

#[test]
fn packagist_composer_semver_test_suite() {
    let r = check("packagist-composer-semver.jsonl", Scored::OwnSuite);
    assert_eq!(not_understood(&r), 0);
}

#[test]
fn rubygems_test_suite() {
    let r = check("rubygems-rubygems.jsonl", Scored::OwnSuite);
    assert_eq!(not_understood(&r), 0);
}

#[test]
fn debian_dpkg_test_suite() {
    let r = check("debian-dpkg.jsonl", Scored::OwnSuite);
    assert_eq!(not_understood(&r), 0);
}

#[test]
fn crates_rustsec_real_ranges() {
    let r = check("crates-rustsec-ranges-real.jsonl", Scored::Reference);
    assert_eq!(
        not_understood(&r),
        0,
        "every row of real advisory data is evaluated"
    );
}

#[test]
fn maven_osv_real_ranges() {
    let r = check("maven-osv-ranges-real.jsonl", Scored::Reference);
    assert_eq!(
        not_understood(&r),
        0,
        "every row of real advisory data is evaluated"
    );
}

#[test]
fn npm_security_wg_real_ranges() {
    let r = check("npm-securitywg-ranges-real.jsonl", Scored::Reference);
    assert_eq!(
        not_understood(&r),
        0,
        "every row of real advisory data is evaluated"
    );
}

#[test]
fn packagist_friendsofphp_real_ranges() {
    let r = check("packagist-fop-ranges-real.jsonl", Scored::Reference);
    assert_eq!(
        not_understood(&r),
        0,
        "every row of real advisory data is evaluated"
    );
}

#[test]
fn pypi_osv_real_ranges() {
    let r = check("pypi-osv-ranges-real.jsonl", Scored::Reference);
    assert_eq!(
        not_understood(&r),
        0,
        "every row of real advisory data is evaluated"
    );
}

#[test]
fn pypi_osv_real_range_disagreements() {
    let r = check(
        "pypi-osv-ranges-real-disagreements.jsonl",
        Scored::Reference,
    );
    assert_eq!(
        not_understood(&r),
        0,
        "every row of real advisory data is evaluated"
    );
}

#[test]
fn osv_scalibr_semantic_test_data() {
    let r = check("osv-scalibr-semantic.jsonl", Scored::ThirdParty);
    // Ecosystems outside Proven's set (NuGet, Hex, Pub, CRAN, Hackage, Red Hat) are
    // counted, not evaluated.
    assert!(not_understood(&r) > 0);
}

#[test]
fn osv_dev_ecosystem_tests() {
    check("osv-dev-ecosystems.jsonl", Scored::ThirdParty);
}

#[test]
fn osv_api_querybatch_cassettes_are_not_understood() {
    // Answers recorded from the live OSV API at an unknown date: not reproducible offline.
    let r = check("osv-api-querybatch-cassettes.jsonl", Scored::NotVersions);
    assert_eq!(not_understood(&r), r.rows_checked());
}

#[test]
fn osv_schema_fixtures_are_not_about_versions() {
    for name in [
        "osv-schema-ghsa-conversion.jsonl",
        "osv-schema-linter-fixtures.jsonl",
    ] {
        let r = check(name, Scored::NotVersions);
        assert_eq!(not_understood(&r), r.rows_checked(), "{name}");
    }
}

#[test]
fn every_vectors_file_has_a_test() {
    let tested = [
        "crates-rustsec-ranges-real.jsonl",
        "debian-dpkg.jsonl",
        "go-x-mod-semver.jsonl",
        "maven-comparableversion.jsonl",
        "maven-osv-ranges-real.jsonl",
        "npm-node-semver.jsonl",
        "npm-securitywg-ranges-real.jsonl",
        "osv-api-querybatch-cassettes.jsonl",
        "osv-dev-ecosystems.jsonl",
        "osv-scalibr-semantic.jsonl",
        "osv-schema-ghsa-conversion.jsonl",
        "osv-schema-linter-fixtures.jsonl",
        "packagist-composer-semver.jsonl",
        "packagist-fop-ranges-real.jsonl",
        "pypi-osv-ranges-real-disagreements.jsonl",
        "pypi-osv-ranges-real.jsonl",
        "pypi-packaging.jsonl",
        "rubygems-rubygems.jsonl",
    ];
    let mut present: Vec<String> = std::fs::read_dir(vectors_dir())
        .expect("vectors dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    present.sort();
    assert_eq!(
        present, tested,
        "a vectors file was added or removed: add a test for it"
    );
}

#[test]
fn every_known_decision_names_a_row_that_exists() {
    let text = std::fs::read_to_string(known_path()).expect("known-differences.jsonl");
    let mut by_file: std::collections::HashMap<String, std::collections::HashSet<String>> =
        Default::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let d: serde_json::Value = serde_json::from_str(line).expect("entry is JSON");
        let file = d["file"]
            .as_str()
            .expect("entry names its file")
            .to_string();
        let fp = d["fingerprint"]
            .as_str()
            .expect("entry has a fingerprint")
            .to_string();
        assert!(
            !d["reason"].as_str().unwrap_or("").trim().is_empty(),
            "entry without reason: {line}"
        );
        by_file.entry(file).or_default().insert(fp);
    }
    for (file, fps) in by_file {
        let rows = std::fs::read_to_string(vectors_dir().join(&file))
            .expect("the named vectors file exists");
        let present: std::collections::HashSet<String> = rows.lines().map(fingerprint).collect();
        let missing: Vec<&String> = fps.iter().filter(|f| !present.contains(*f)).collect();
        assert!(
            missing.is_empty(),
            "{file}: decisions for rows that no longer exist: {missing:?}"
        );
    }
}

#[test]
#[ignore = "prints the totals over all files; run explicitly"]
fn summary() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("vectors dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    paths.sort();
    let report = check_files(&paths, &known()).expect("vectors read");
    println!("{report}");
    println!(
        "{:<14} {:<28} {:>7} {:>7} {:>6} {:>6} {:>7}  agreement",
        "ecosystem", "kind", "rows", "agree", "known", "differ", "not-und"
    );
    for ((eco, kind), g) in report.by_ecosystem_and_kind() {
        let pct = g
            .agreement()
            .map_or_else(|| "-".to_string(), |a| format!("{:.3}%", a * 100.0));
        println!(
            "{eco:<14} {kind:<28} {:>7} {:>7} {:>6} {:>6} {:>7}  {pct}",
            g.rows, g.agree, g.known, g.disagree, g.not_understood
        );
    }
    assert!(report.all_agree());
}
