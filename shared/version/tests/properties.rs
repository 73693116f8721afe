//! Property tests: every ecosystem's order is a total order on generated versions, range
//! evaluation agrees with the order, and no parser panics on any input.
//!
//! The fuzzing tests run `PROVEN_FUZZ_CASES` inputs each (20,000 by default, so the suite
//! stays quick); each input goes through every ecosystem's parser. The million-input run:
//!
//! ```text
//! PROVEN_FUZZ_CASES=1000000 cargo test -p proven-version --test properties fuzz -- --nocapture
//! ```

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use proptest::prelude::*;
use proven_osv::Affected;
use proven_version::{Ecosystem, Requirement, Version, distro, is_affected};

fn fuzz_cases() -> u32 {
    std::env::var("PROVEN_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000)
}

fn order_cases() -> u32 {
    std::env::var("PROVEN_ORDER_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

// ---------------------------------------------------------------------------------------
// Generators of plausible versions, per ecosystem.

fn num() -> impl Strategy<Value = String> {
    prop_oneof![4 => (0u32..4).prop_map(|n| n.to_string()), 1 => (0u32..20).prop_map(|n| n.to_string())]
}

fn semver_like(v_prefix: bool) -> impl Strategy<Value = String> {
    let pre_id = prop_oneof![
        Just("alpha".to_string()),
        Just("beta".to_string()),
        Just("rc".to_string()),
        Just("x-1".to_string()),
        (0u32..12).prop_map(|n| n.to_string()),
    ];
    (
        num(),
        num(),
        num(),
        prop::option::of(prop::collection::vec(pre_id, 1..4)),
        prop::option::of(prop::sample::select(vec![
            "build",
            "b.1",
            "incompatible",
            "sha.5114f85",
        ])),
        any::<bool>(),
    )
        .prop_map(move |(a, b, c, pre, build, v)| {
            let mut s = format!("{}{a}.{b}.{c}", if v_prefix && v { "v" } else { "" });
            if let Some(p) = pre {
                s.push('-');
                s.push_str(&p.join("."));
            }
            if let Some(b) = build {
                s.push('+');
                s.push_str(b);
            }
            s
        })
}

fn pypi_version() -> impl Strategy<Value = String> {
    (
        prop_oneof![8 => Just(String::new()), 1 => Just("1!".to_string())],
        prop::collection::vec(num(), 1..4),
        prop::option::of((
            prop::sample::select(vec!["a", "b", "rc", "c", "alpha", "pre"]),
            0u32..3,
        )),
        prop::option::of(0u32..3),
        prop::option::of(0u32..3),
        prop::option::of(prop::sample::select(vec![
            "ubuntu.1", "1", "abc", "1.a", "a.1",
        ])),
    )
        .prop_map(|(epoch, release, pre, post, dev, local)| {
            let mut s = format!("{epoch}{}", release.join("."));
            if let Some((l, n)) = pre {
                s.push_str(&format!("{l}{n}"));
            }
            if let Some(n) = post {
                s.push_str(&format!(".post{n}"));
            }
            if let Some(n) = dev {
                s.push_str(&format!(".dev{n}"));
            }
            if let Some(l) = local {
                s.push('+');
                s.push_str(l);
            }
            s
        })
}

fn maven_version() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        3 => num(),
        1 => prop::sample::select(vec![
            "alpha", "beta", "milestone", "rc", "cr", "snapshot", "ga", "final", "release", "sp", "foo", "bar",
        ])
        .prop_map(str::to_string),
        1 => (prop::sample::select(vec!["a", "b", "m", "ga", "rc", "x"]), 0u32..3).prop_map(|(q, n)| format!("{q}{n}")),
    ];
    (
        num(),
        prop::collection::vec((prop::sample::select(vec![".", "-"]), token), 0..4),
    )
        .prop_map(|(first, rest)| {
            let mut s = first;
            for (sep, t) in rest {
                s.push_str(sep);
                s.push_str(&t);
            }
            s
        })
}

fn packagist_version() -> impl Strategy<Value = String> {
    prop_oneof![
        9 => (
            any::<bool>(),
            prop::collection::vec(num(), 1..5),
            prop::option::of((prop::sample::select(vec!["alpha", "beta", "RC", "b", "a", "patch", "pl", "stable"]), prop::option::of(0u32..3))),
            any::<bool>(),
        )
            .prop_map(|(v, nums, stability, dev)| {
                let mut s = format!("{}{}", if v { "v" } else { "" }, nums.join("."));
                if let Some((word, n)) = stability {
                    s.push('-');
                    s.push_str(word);
                    if let Some(n) = n {
                        s.push_str(&n.to_string());
                    }
                }
                if dev {
                    s.push_str("-dev");
                }
                s
            }),
        1 => prop::sample::select(vec!["dev-master", "dev-main", "dev-feature/x", "1.x-dev", "2.0.x-dev"]).prop_map(str::to_string),
    ]
}

fn rubygems_version() -> impl Strategy<Value = String> {
    let seg = prop_oneof![3 => num(), 1 => prop::sample::select(vec!["a", "b", "pre", "rc", "beta"]).prop_map(str::to_string)];
    (num(), prop::collection::vec(seg, 0..5)).prop_map(|(first, rest)| {
        let mut s = first;
        for t in rest {
            s.push('.');
            s.push_str(&t);
        }
        s
    })
}

fn debian_version() -> impl Strategy<Value = String> {
    (
        prop::option::of(0u32..3),
        prop::collection::vec(
            prop_oneof![
                num(),
                Just("~rc1".to_string()),
                Just("+dfsg".to_string()),
                Just("a".to_string())
            ],
            1..4,
        ),
        prop::option::of(num()),
    )
        .prop_map(|(epoch, up, rev)| {
            let mut s = epoch.map(|e| format!("{e}:")).unwrap_or_default();
            s.push_str(&up.join("."));
            if let Some(r) = rev {
                s.push('-');
                s.push_str(&r);
            }
            s
        })
}

fn strategy_for(eco: Ecosystem) -> BoxedStrategy<String> {
    match eco {
        Ecosystem::CratesIo => semver_like(false).boxed(),
        Ecosystem::Npm | Ecosystem::Go => semver_like(true).boxed(),
        Ecosystem::PyPI => pypi_version().boxed(),
        Ecosystem::Maven => maven_version().boxed(),
        Ecosystem::Packagist => packagist_version().boxed(),
        Ecosystem::RubyGems => rubygems_version().boxed(),
    }
}

/// Reflexive, antisymmetric, transitive, and equality substitutes in comparisons.
fn assert_total_order(a: &Version, b: &Version, c: &Version) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.cmp(a), Ordering::Equal, "reflexive: {}", a);
    prop_assert_eq!(
        a.cmp(b),
        b.cmp(a).reverse(),
        "antisymmetric: {} vs {}",
        a,
        b
    );
    if a <= b && b <= c {
        prop_assert!(
            a <= c,
            "transitive: {} <= {} <= {} but not {} <= {}",
            a,
            b,
            c,
            a,
            c
        );
    }
    if a == b {
        prop_assert_eq!(
            a.cmp(c),
            b.cmp(c),
            "equal versions compare alike: {} = {} against {}",
            a,
            b,
            c
        );
    }
    Ok(())
}

macro_rules! total_order_tests {
    ($($name:ident => $eco:expr),* $(,)?) => {$(
        proptest! {
            #![proptest_config(ProptestConfig { cases: order_cases(), failure_persistence: None, ..ProptestConfig::default() })]
            #[test]
            fn $name(a in strategy_for($eco), b in strategy_for($eco), c in strategy_for($eco)) {
                let parse = |s: &str| Version::parse($eco, s).map_err(|e| TestCaseError::fail(e.to_string()));
                assert_total_order(&parse(&a)?, &parse(&b)?, &parse(&c)?)?;
            }
        }
    )*};
}

total_order_tests! {
    order_is_total_crates_io => Ecosystem::CratesIo,
    order_is_total_npm => Ecosystem::Npm,
    order_is_total_pypi => Ecosystem::PyPI,
    order_is_total_go => Ecosystem::Go,
    order_is_total_maven => Ecosystem::Maven,
    order_is_total_packagist => Ecosystem::Packagist,
    order_is_total_rubygems => Ecosystem::RubyGems,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: order_cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn order_is_total_debian(a in debian_version(), b in debian_version(), c in debian_version()) {
        let cmp = |x: &str, y: &str| distro::compare_debian(x, y).map_err(TestCaseError::fail);
        prop_assert_eq!(cmp(&a, &b)?, cmp(&b, &a)?.reverse());
        if cmp(&a, &b)? != Ordering::Greater && cmp(&b, &c)? != Ordering::Greater {
            prop_assert_ne!(cmp(&a, &c)?, Ordering::Greater);
        }
    }

    /// One `[introduced, fixed)` range contains exactly the versions the order puts there.
    #[test]
    fn a_range_contains_what_the_order_says(
        (eco, intro, fixed, v) in prop::sample::select(vec![
            Ecosystem::CratesIo, Ecosystem::Npm, Ecosystem::PyPI, Ecosystem::Go, Ecosystem::Maven, Ecosystem::RubyGems,
        ])
        .prop_flat_map(|eco| (Just(eco), strategy_for(eco), strategy_for(eco), strategy_for(eco)))
    ) {
        let parse = |x: &str| Version::parse(eco, x).map_err(|e| TestCaseError::fail(e.to_string()));
        let (mut intro, mut fixed) = (intro, fixed);
        let (mut pi, mut pf, pv) = (parse(&intro)?, parse(&fixed)?, parse(&v)?);
        if pi > pf {
            std::mem::swap(&mut intro, &mut fixed);
            std::mem::swap(&mut pi, &mut pf);
        }
        let affected: Affected = serde_json::from_value(serde_json::json!({
            "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": intro}, {"fixed": fixed}]}]
        })).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let got = is_affected(eco, &affected, &v).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // `introduced: "0"` is before every version, pre-releases of 0 included; when
        // both events name the same version the range is empty (`fixed` wins the tie).
        let above = intro == "0" || pi <= pv;
        prop_assert_eq!(got.affected, above && pv < pf, "{} in [{}, {})", v, intro, fixed);
    }

    /// Packagist reads ranges Composer's way (docs/versions.md): a bound without a stability
    /// reaches its own dev/alpha/beta/RC releases, so plain order and range differ there by
    /// decision. On stable versions the range is exactly what the order says.
    #[test]
    fn a_packagist_range_contains_what_the_order_says_on_stable_versions(
        intro in stable_packagist(), fixed in stable_packagist(), v in stable_packagist()
    ) {
        let eco = Ecosystem::Packagist;
        let parse = |x: &str| Version::parse(eco, x).map_err(|e| TestCaseError::fail(e.to_string()));
        let (mut intro, mut fixed) = (intro, fixed);
        let (mut pi, mut pf, pv) = (parse(&intro)?, parse(&fixed)?, parse(&v)?);
        if pi > pf {
            std::mem::swap(&mut intro, &mut fixed);
            std::mem::swap(&mut pi, &mut pf);
        }
        let affected: Affected = serde_json::from_value(serde_json::json!({
            "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": intro}, {"fixed": fixed}]}]
        })).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let got = is_affected(eco, &affected, &v).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(got.affected, pi <= pv && pv < pf, "{} in [{}, {})", v, intro, fixed);
    }
}

/// Stable Packagist versions: one to four numbers, sometimes with a `v`.
fn stable_packagist() -> impl Strategy<Value = String> {
    (prop::collection::vec(0u32..12, 1..=4), any::<bool>()).prop_map(|(parts, v)| {
        let text = parts
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(".");
        if v { format!("v{text}") } else { text }
    })
}

// ---------------------------------------------------------------------------------------
// Fuzzing: no parser panics on any input.

/// Arbitrary text, biased towards the characters version grammars care about so that the
/// parsers' deeper paths are reached, not only their first rejection.
fn fuzz_input() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => any::<String>(),
        3 => "[0-9a-zA-Z.+_~^*<>=!|,@#: -]{0,40}",
        3 => "[v=~^<>]{0,2}[0-9]{1,3}(\\.[0-9x*]{1,3}){0,4}([-._+][a-zA-Z0-9]{1,6}){0,3}( ?(\\|\\||,| - | )[~^<>=]{0,2}[0-9]{1,3}(\\.[0-9x*]{1,3}){0,3}){0,3}",
        1 => "[(\\[][0-9.a-z]{0,8},[0-9.a-z]{0,8}[)\\]](,[(\\[][0-9.,]{0,8}[)\\]]){0,2}",
    ]
}

static VERSION_INPUTS: AtomicU64 = AtomicU64::new(0);
static REQUIREMENT_INPUTS: AtomicU64 = AtomicU64::new(0);

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz_cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Each input goes through every ecosystem's version parser and comparison.
    #[test]
    fn fuzz_version_parsers_never_panic(s in fuzz_input(), t in fuzz_input()) {
        for eco in Ecosystem::ALL {
            if let (Ok(a), Ok(b)) = (Version::parse(eco, &s), Version::parse(eco, &t)) {
                let _ = a.cmp(&b);
                let _ = a.is_prerelease();
            }
        }
        let _ = distro::compare_debian(&s, &t);
        let _ = distro::compare_alpine(&s, &t);
        let _ = proven_version::go::compare_lenient(&s, &t);
        let n = VERSION_INPUTS.fetch_add(1, AtomicOrdering::Relaxed) + 1;
        if n == u64::from(fuzz_cases()) {
            println!("fuzzed every version parser with {n} inputs");
        }
    }

    /// Each input goes through every ecosystem's requirement parser, and is matched
    /// against a version.
    #[test]
    fn fuzz_requirement_parsers_never_panic(s in fuzz_input(), v in fuzz_input()) {
        for eco in Ecosystem::ALL {
            if let Ok(r) = Requirement::parse(eco, &s)
                && let Ok(v) = Version::parse(eco, &v)
            {
                let _ = r.matches(&v);
            }
        }
        let _ = proven_version::npm::Range::parse(&s, proven_version::npm::Options { loose: true, include_prerelease: true });
        let _ = proven_version::pypi::SpecifierSet::parse(&s, None).map(|set| set.is_unsatisfiable());
        let n = REQUIREMENT_INPUTS.fetch_add(1, AtomicOrdering::Relaxed) + 1;
        if n == u64::from(fuzz_cases()) {
            println!("fuzzed every requirement parser with {n} inputs");
        }
    }
}
