//! Comparisons per second per ecosystem, and matching every package of real lock files
//! against all advisories of their ecosystem.
//!
//! Inputs are the shared data: version pairs from `shared/data/vectors` (every `cmp` row
//! both sides of which parse), lock files from `shared/data/lockfiles` (read crudely here,
//! name/version pairs only: the lock-file crate is someone else's), advisories from
//! `shared/data/advisories` as `proven_osv::Record`s. The peer for comparisons is the
//! `semver` crate's own `Version::cmp`, measured in the same run.
//!
//! `cargo bench -p proven-version`

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use proven_osv::{Affected, Record};
use proven_version::{Ecosystem, Version, is_affected_version};
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data")).join(rel)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(data(rel)).unwrap_or_else(|e| panic!("bench input {rel}: {e}"))
}

/// Every `cmp` pair of an ecosystem in the vector files, as raw strings.
fn pairs(eco: Ecosystem) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for file in [
        "osv-scalibr-semantic.jsonl",
        "maven-comparableversion.jsonl",
        "go-x-mod-semver.jsonl",
        "rubygems-rubygems.jsonl",
        "osv-dev-ecosystems.jsonl",
        "pypi-packaging.jsonl",
        "packagist-composer-semver.jsonl",
    ] {
        for line in read(&format!("vectors/{file}")).lines() {
            let Ok(row) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if row["ecosystem"].as_str() != Some(eco.osv_name())
                || !matches!(row["kind"].as_str(), Some("cmp" | "cmp_op"))
            {
                continue;
            }
            if let (Some(a), Some(b)) = (row["a"].as_str(), row["b"].as_str())
                && Version::parse(eco, a).is_ok()
                && Version::parse(eco, b).is_ok()
            {
                out.push((a.to_string(), b.to_string()));
            }
        }
    }
    out
}

fn comparisons(c: &mut Criterion) {
    let mut group = c.benchmark_group("compare");
    for eco in Ecosystem::ALL {
        let raw = pairs(eco);
        let parsed: Vec<(Version, Version)> = raw
            .iter()
            .filter_map(|(a, b)| Some((Version::parse(eco, a).ok()?, Version::parse(eco, b).ok()?)))
            .collect();
        group.throughput(Throughput::Elements(parsed.len() as u64));
        group.bench_function(format!("{}/parsed", eco.osv_name()), |b| {
            b.iter(|| {
                parsed
                    .iter()
                    .map(|(x, y)| black_box(x).cmp(black_box(y)) as i32)
                    .sum::<i32>()
            })
        });
        group.bench_function(format!("{}/parse+compare", eco.osv_name()), |b| {
            b.iter(|| {
                raw.iter()
                    .filter_map(|(x, y)| {
                        proven_version::compare(eco, black_box(x), black_box(y)).ok()
                    })
                    .map(|o| o as i32)
                    .sum::<i32>()
            })
        });
        if eco == Ecosystem::CratesIo {
            // The peer: the semver crate's own order on the same pairs.
            let peer: Vec<(semver::Version, semver::Version)> = raw
                .iter()
                .filter_map(|(a, b)| {
                    Some((
                        semver::Version::parse(a).ok()?,
                        semver::Version::parse(b).ok()?,
                    ))
                })
                .collect();
            group.bench_function("crates.io/peer-semver-crate", |b| {
                b.iter(|| {
                    peer.iter()
                        .map(|(x, y)| black_box(x).cmp(black_box(y)) as i32)
                        .sum::<i32>()
                })
            });
        }
    }
    group.finish();
}

/// `name = "x"` / `version = "y"` pairs of a TOML lock file (Cargo.lock, uv.lock).
fn toml_lock_packages(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut name: Option<String> = None;
    for line in text.lines() {
        if line.starts_with("[[package]]") {
            name = None;
        } else if let Some(v) = line
            .strip_prefix("name = \"")
            .and_then(|r| r.strip_suffix('"'))
        {
            name = Some(v.to_string());
        } else if let Some(v) = line
            .strip_prefix("version = \"")
            .and_then(|r| r.strip_suffix('"'))
            && let Some(n) = name.take()
        {
            out.push((n, v.to_string()));
        }
    }
    out
}

/// `packages` of an npm package-lock.json (v2/v3).
fn npm_lock_packages(text: &str) -> Vec<(String, String)> {
    let json: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let Some(packages) = json["packages"].as_object() else {
        return Vec::new();
    };
    packages
        .iter()
        .filter_map(|(path, p)| {
            let name = path
                .rsplit("node_modules/")
                .next()
                .filter(|n| !n.is_empty())?;
            Some((name.to_string(), p["version"].as_str()?.to_string()))
        })
        .collect()
}

/// The affected entries of an ecosystem's advisories, by normalised package name.
/// Withdrawn advisories are skipped, as the store does.
fn advisories(eco: Ecosystem, files: &[&str]) -> (HashMap<String, Vec<Affected>>, usize) {
    let mut index: HashMap<String, Vec<Affected>> = HashMap::new();
    let mut records = 0;
    for file in files {
        for line in read(&format!("advisories/{file}")).lines() {
            let Ok(record) = serde_json::from_str::<Record>(line) else {
                continue;
            };
            if record.is_withdrawn() {
                continue;
            }
            records += 1;
            for a in record.affected {
                let Some(pkg) = &a.package else { continue };
                if Ecosystem::from_osv(&pkg.ecosystem) == Some(eco) {
                    index
                        .entry(eco.normalize_name(&pkg.name))
                        .or_default()
                        .push(a);
                }
            }
        }
    }
    (index, records)
}

/// One full pass: parse each package's version once, evaluate it against every affected
/// entry naming the package. Returns the number of findings (kept so nothing is elided).
fn match_lock(
    eco: Ecosystem,
    packages: &[(String, String)],
    index: &HashMap<String, Vec<Affected>>,
) -> usize {
    let mut findings = 0;
    for (name, version) in packages {
        let Some(entries) = index.get(&eco.normalize_name(name)) else {
            continue;
        };
        let Ok(v) = Version::parse(eco, version) else {
            continue;
        };
        for a in entries {
            if is_affected_version(a, &v).is_ok_and(|r| r.affected) {
                findings += 1;
            }
        }
    }
    findings
}

/// Up to `n` (name, version) pairs: names with the most advisories first, each at up to
/// three versions its advisories list or introduce.
fn heaviest(
    eco: Ecosystem,
    index: &HashMap<String, Vec<Affected>>,
    n: usize,
) -> Vec<(String, String)> {
    let mut names: Vec<(&String, &Vec<Affected>)> = index.iter().collect();
    names.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    let mut out = Vec::new();
    for (name, entries) in names {
        let mut picked: Vec<String> = Vec::new();
        for a in entries {
            let candidates = a
                .versions
                .iter()
                .cloned()
                .chain(a.ranges.iter().flat_map(|r| {
                    r.events.iter().filter_map(|e| match e {
                        proven_osv::Event::Introduced(v) if v != "0" => Some(v.clone()),
                        _ => None,
                    })
                }));
            for v in candidates {
                if picked.len() < 3 && !picked.contains(&v) && Version::parse(eco, &v).is_ok() {
                    picked.push(v);
                }
            }
        }
        for v in picked {
            out.push((name.clone(), v));
            if out.len() == n {
                return out;
            }
        }
    }
    out
}

fn lock_files(c: &mut Criterion) {
    let cases: [(&str, Ecosystem, &str, &[&str]); 3] = [
        // The largest lock file by size.
        (
            "pypi/SWE-bench__SWE-bench__7a21e05772/uv.lock",
            Ecosystem::PyPI,
            "toml",
            &["osv-pypi-pypa.jsonl"],
        ),
        // The largest by package count.
        (
            "npm/rust-lang__rust-analyzer__d2e55da491/editors/code/package-lock.json",
            Ecosystem::Npm,
            "npm",
            &[
                "osv-npm-nodejs-securitywg.jsonl",
                "osv-testdata-scalibr-osvscanner.jsonl",
            ],
        ),
        (
            "cargo/rust-lang__rust-analyzer__d2e55da491/Cargo.lock",
            Ecosystem::CratesIo,
            "toml",
            &[
                "osv-crates-rustsec.jsonl",
                "osv-testdata-scalibr-osvscanner.jsonl",
            ],
        ),
    ];
    let mut group = c.benchmark_group("lockfile");
    for (path, eco, format, files) in cases {
        let text = read(&format!("lockfiles/{path}"));
        let packages = if format == "npm" {
            npm_lock_packages(&text)
        } else {
            toml_lock_packages(&text)
        };
        let (index, records) = advisories(eco, files);
        let findings = match_lock(eco, &packages, &index);
        let entries: usize = index.values().map(Vec::len).sum();
        println!(
            "{path}: {} packages, {records} advisories ({entries} affected entries) of {}, {findings} findings",
            packages.len(),
            eco.osv_name()
        );
        group.throughput(Throughput::Elements(packages.len() as u64));
        group.bench_function(format!("{}/indexed-by-name", eco.osv_name()), |b| {
            b.iter(|| match_lock(eco, black_box(&packages), &index))
        });
        // A 1,000-package lock file: the packages above repeated to 1,000.
        let thousand: Vec<(String, String)> = packages.iter().cycle().take(1000).cloned().collect();
        group.throughput(Throughput::Elements(1000));
        group.bench_function(format!("{}/1000-packages", eco.osv_name()), |b| {
            b.iter(|| match_lock(eco, black_box(&thousand), &index))
        });
    }
    // The heaviest 1,000-package lock files the advisory data allows: the packages with
    // the most advisories, at versions those advisories list or introduce.
    for (eco, files) in [
        (Ecosystem::PyPI, &["osv-pypi-pypa.jsonl"][..]),
        (
            Ecosystem::Maven,
            &["osv-testdata-scalibr-osvscanner.jsonl"][..],
        ),
        (
            Ecosystem::Packagist,
            &["osv-packagist-friendsofphp.jsonl"][..],
        ),
        (Ecosystem::Go, &["osv-go-vulndb.jsonl"][..]),
        (Ecosystem::RubyGems, &["osv-rubygems-rubysec.jsonl"][..]),
    ] {
        let (index, records) = advisories(eco, files);
        let packages = heaviest(eco, &index, 1000);
        let findings = match_lock(eco, &packages, &index);
        let evaluated: usize = packages
            .iter()
            .map(|(n, _)| index.get(&eco.normalize_name(n)).map_or(0, Vec::len))
            .sum();
        println!(
            "heaviest {}: {} packages, {records} advisories, {evaluated} (package, advisory) evaluations, {findings} findings",
            eco.osv_name(),
            packages.len()
        );
        group.throughput(Throughput::Elements(packages.len() as u64));
        group.bench_function(format!("{}/1000-heaviest-packages", eco.osv_name()), |b| {
            b.iter(|| match_lock(eco, black_box(&packages), &index))
        });
    }
    // Pessimistic stress: every package's version against every range of every advisory
    // of its ecosystem, whatever the name (the work without the name index).
    let text = read("lockfiles/pypi/SWE-bench__SWE-bench__7a21e05772/uv.lock");
    let packages = toml_lock_packages(&text);
    let (index, _) = advisories(Ecosystem::PyPI, &["osv-pypi-pypa.jsonl"]);
    let all: Vec<&Affected> = index.values().flatten().collect();
    let versions: Vec<Version> = packages
        .iter()
        .filter_map(|(_, v)| Version::parse(Ecosystem::PyPI, v).ok())
        .collect();
    group.throughput(Throughput::Elements((versions.len() * all.len()) as u64));
    group.bench_function("PyPI/every-package-x-every-advisory", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for v in &versions {
                for a in &all {
                    n += usize::from(is_affected_version(a, v).is_ok_and(|r| r.affected));
                }
            }
            n
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! { name = benches; config = config(); targets = comparisons, lock_files }
criterion_main!(benches);
