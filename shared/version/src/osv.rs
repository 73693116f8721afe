//! OSV range evaluation: is a version affected, and what is the smallest fix.
//!
//! This follows the OSV schema's evaluation pseudocode (`IsVulnerable`): a version is
//! affected when the `versions` list names it or a range contains it. A range's events are
//! sorted by version and walked in order: `introduced` at or below the version makes it
//! affected, `fixed` at or below makes it unaffected, `last_affected` below makes it
//! unaffected; `limit` events bound the whole range from above. `introduced: "0"` sorts
//! before every version. When two events name the same version, `introduced` is walked
//! first, so `fixed: X` wins at X (the reading the OSV reference evaluators agree on, see
//! `docs/versions.md`).
//!
//! Two ecosystems need more than plain order:
//!
//! * Packagist: bounds are read the way Composer reads the constraint they come from
//!   (`introduced: X` is `>=X`, `fixed: X` and `limit: X` are `<X`, `last_affected: X` is
//!   `<=X`). Composer extends `>=X` and `<X` to X's dev/alpha/beta/RC releases unless X names
//!   a stability itself, so `1.2.0-beta1` is *not* affected by `fixed: 1.2.0`: that is what
//!   `composer audit` and the FriendsOfPHP data mean. A branch (`dev-foo`) has no place on
//!   the version line and is only matched through the `versions` list, as in Composer.
//! * Every other ecosystem: plain order, pre-releases included (`1.2.0-rc.1` is affected by
//!   `fixed: 1.2.0`), which is also what `includePrerelease` does in npm and what PEP 440's
//!   order says. Cargo's opt-in rule for pre-releases applies to Cargo requirements, not to
//!   OSV events; see `docs/versions.md` for where cargo-audit therefore differs.
//!
//! GIT ranges name commits, which only the git evidence can place; they are counted and
//! left out, as are range types this build does not know.

use std::cmp::Ordering;

use proven_domain::Ecosystem;
use proven_osv::{Affected, Event, Range, RangeType};

use crate::{Parsed, Version, VersionError};

/// The answer to "is this version affected by this `affected[]` entry?".
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Affectedness {
    /// The `versions` list names it, or a SEMVER/ECOSYSTEM range contains it.
    pub affected: bool,
    /// The `versions` list names it (compared with the ecosystem's equality).
    pub by_versions_list: bool,
    /// The index in `ranges` of the first SEMVER/ECOSYSTEM range containing it.
    pub by_range: Option<usize>,
    /// GIT ranges left to the git evidence (they name commits, not versions).
    pub ignored_git_ranges: usize,
    /// Ranges of a type this build does not know, never evaluated.
    pub ignored_unknown_ranges: usize,
}

/// The smallest version that fixes every given entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// The version as the advisory spells it.
    Version(String),
    /// No `fixed` event at or above the current version clears every entry.
    NoFixPublished,
}

/// OSV's rule for one `affected[]` entry: affected if the `versions` list names the
/// version (by the ecosystem's equality) or any SEMVER/ECOSYSTEM range contains it.
/// GIT and unknown range types are not evaluated; the result counts them.
///
/// Withdrawn advisories are the caller's to skip (`Record::is_withdrawn`): this looks at
/// one entry, not at the record around it.
pub fn is_affected(
    eco: Ecosystem,
    affected: &Affected,
    version: &str,
) -> Result<Affectedness, VersionError> {
    is_affected_version(affected, &Version::parse(eco, version)?)
}

/// [`is_affected`] for an already parsed version (parse once, match many advisories).
pub fn is_affected_version(affected: &Affected, v: &Version) -> Result<Affectedness, VersionError> {
    let eco = v.ecosystem();
    let v_key = if affected.versions.is_empty() {
        None
    } else {
        LeadingNumbers::of(eco, v.as_str())
    };
    let mut out = Affectedness {
        by_versions_list: affected
            .versions
            .iter()
            .any(|listed| listed_equals(eco, listed, v, v_key.as_ref())),
        ..Affectedness::default()
    };
    // A range whose events cannot be read leaves the answer open, unless the versions
    // list or another range already says "affected" (an OR with true is true).
    let mut unreadable: Option<VersionError> = None;
    for (i, range) in affected.ranges.iter().enumerate() {
        match range.kind {
            RangeType::Git => out.ignored_git_ranges += 1,
            RangeType::Unknown => out.ignored_unknown_ranges += 1,
            RangeType::Semver | RangeType::Ecosystem => {
                if out.by_range.is_none() {
                    match range_contains(eco, range, v) {
                        Ok(true) => out.by_range = Some(i),
                        Ok(false) => {}
                        Err(e) => {
                            unreadable.get_or_insert(e);
                        }
                    }
                }
            }
        }
    }
    out.affected = out.by_versions_list || out.by_range.is_some();
    match unreadable {
        Some(e) if !out.affected => Err(e),
        _ => Ok(out),
    }
}

/// A `versions` entry equals `v` by the ecosystem's equality; an entry the ecosystem
/// cannot read only matches the identical text.
///
/// `versions` lists are long (53 entries on average in PyPA's data, over 1,000 for some),
/// so entries are first screened without parsing or allocating: identical text matches,
/// and an entry whose leading numbers differ from the version's cannot be equal to it.
fn listed_equals(
    eco: Ecosystem,
    listed: &str,
    v: &Version,
    v_key: Option<&LeadingNumbers>,
) -> bool {
    let listed = trim(listed);
    if listed.len() == v.as_str().len() && listed.bytes().eq(v.as_str().bytes()) {
        return true;
    }
    if let (Some(k), Some(vk)) = (LeadingNumbers::of(eco, listed), v_key)
        && !k.may_equal(vk, eco)
    {
        return false;
    }
    Version::parse(eco, listed).is_ok_and(|l| l == *v)
}

/// `str::trim`, without decoding characters when the ends are plain ASCII.
fn trim(s: &str) -> &str {
    let plain = |b: Option<&u8>| b.is_some_and(|b| (0x21..0x7f).contains(b));
    if plain(s.as_bytes().first()) && plain(s.as_bytes().last()) {
        s
    } else {
        s.trim()
    }
}

/// The leading `.`-separated numbers of a version text (after an optional `v`, and the
/// epoch on PyPI), up to four of them.
///
/// Equal versions have equal leading numbers, a missing number counting as zero, in every
/// ecosystem here: the rules that make different texts equal only ever add or drop zeros
/// in that run (`1.0` = `1`, `1.0.a` = `1.a` on RubyGems, `1.0-alpha` = `1-alpha` on
/// Maven, leading zeros) or rewrite texts that do not start with a digit (`master`,
/// `go1.21`, `=1.2.3`), which are not screened. Packagist is the exception
/// (`2010-01-02` = `2010.01.02`), so only its first number is compared. The vectors test
/// checks the screen on every pair the references call equal.
struct LeadingNumbers {
    epoch: u64,
    numbers: [u64; 4],
    len: usize,
}

impl LeadingNumbers {
    /// `None` when the text does not start with a digit or a number is too large to
    /// compare cheaply (the entry is then parsed).
    fn of(eco: Ecosystem, text: &str) -> Option<LeadingNumbers> {
        let b = text.as_bytes();
        let mut i = usize::from(matches!(b.first(), Some(b'v' | b'V')));
        let number = |i: &mut usize| -> Option<u64> {
            let start = *i;
            let mut n: u64 = 0;
            while *i < b.len() && b[*i].is_ascii_digit() {
                n = n.checked_mul(10)?.checked_add(u64::from(b[*i] - b'0'))?;
                *i += 1;
            }
            (*i > start).then_some(n)
        };
        let mut first = number(&mut i)?;
        let mut epoch = 0;
        if eco == Ecosystem::PyPI && b.get(i) == Some(&b'!') {
            i += 1;
            epoch = first;
            first = number(&mut i)?;
        }
        let mut out = LeadingNumbers {
            epoch,
            numbers: [first, 0, 0, 0],
            len: 1,
        };
        while out.len < 4 && b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            i += 1;
            out.numbers[out.len] = number(&mut i)?;
            out.len += 1;
        }
        Some(out)
    }

    fn may_equal(&self, other: &LeadingNumbers, eco: Ecosystem) -> bool {
        let n = if eco == Ecosystem::Packagist {
            1
        } else {
            self.len.max(other.len)
        };
        // Missing numbers are zero, and `numbers` is zero-filled.
        self.epoch == other.epoch && self.numbers[..n] == other.numbers[..n]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    // Declaration order is the walk order for events at the same version.
    Introduced,
    LastAffected,
    Fixed,
    Limit,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Introduced => "introduced",
            Kind::LastAffected => "last_affected",
            Kind::Fixed => "fixed",
            Kind::Limit => "limit",
        }
    }
}

/// An event's position on the version line; `None` is `introduced: "0"`, before all.
struct Bound {
    kind: Kind,
    at: Option<Version>,
}

fn event_parts(e: &Event) -> (Kind, &str) {
    match e {
        Event::Introduced(v) => (Kind::Introduced, v),
        Event::Fixed(v) => (Kind::Fixed, v),
        Event::LastAffected(v) => (Kind::LastAffected, v),
        Event::Limit(v) => (Kind::Limit, v),
    }
}

/// Parses an event's version. Packagist bounds get Composer's `-dev` extension for the
/// `>=`/`<` operators they stand for.
fn bound_version(eco: Ecosystem, kind: Kind, text: &str) -> Result<Version, VersionError> {
    let invalid = |e: VersionError| match e {
        VersionError::Invalid {
            ecosystem,
            version,
            reason,
        } => VersionError::InvalidEvent {
            ecosystem,
            event: kind.name(),
            version,
            reason,
        },
        other => other,
    };
    if eco == Ecosystem::Packagist && kind != Kind::LastAffected {
        return crate::packagist::bound_for_operator(text)
            .map_err(|reason| VersionError::InvalidEvent {
                ecosystem: eco,
                event: kind.name(),
                version: text.to_string(),
                reason,
            })
            .map(Version::packagist_normalized);
    }
    Version::parse_untexted(eco, text).map_err(invalid)
}

fn range_bounds(eco: Ecosystem, range: &Range) -> Result<Vec<Bound>, VersionError> {
    let mut bounds = Vec::with_capacity(range.events.len());
    for e in &range.events {
        let (kind, text) = event_parts(e);
        let text = text.trim();
        if kind == Kind::Introduced && text == "0" {
            bounds.push(Bound { kind, at: None });
        } else if kind == Kind::Limit && text.contains('*') {
            // `limit: "*"` is infinity, the same as no limit.
        } else {
            bounds.push(Bound {
                kind,
                at: Some(bound_version(eco, kind, text)?),
            });
        }
    }
    crate::insertion_sort_by(&mut bounds, |a, b| {
        match (&a.at, &b.at) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => x.cmp(y),
        }
        .then(a.kind.cmp(&b.kind))
    });
    Ok(bounds)
}

fn range_contains(eco: Ecosystem, range: &Range, v: &Version) -> Result<bool, VersionError> {
    let bounds = range_bounds(eco, range)?;
    if let Parsed::Packagist(p) = &v.parsed
        && p.is_branch()
    {
        return Ok(false);
    }
    let mut limits = bounds.iter().filter(|b| b.kind == Kind::Limit).peekable();
    if limits.peek().is_some() && !limits.any(|b| b.at.as_ref().is_some_and(|l| v < l)) {
        return Ok(false);
    }
    let mut vulnerable = false;
    for b in &bounds {
        let Some(at) = &b.at else {
            // introduced: "0"
            vulnerable = true;
            continue;
        };
        match b.kind {
            Kind::Introduced if v >= at => vulnerable = true,
            Kind::Fixed if v >= at => vulnerable = false,
            Kind::LastAffected if v > at => vulnerable = false,
            _ => {}
        }
    }
    Ok(vulnerable)
}

/// The smallest fixed version: the lowest `fixed` event at or above `current`, among the
/// SEMVER/ECOSYSTEM ranges of `entries`, that none of the entries affects.
/// `NoFixPublished` when there is none (no fix yet, only `last_affected`, or every later
/// fix is itself inside another entry's range).
pub fn smallest_fix(
    eco: Ecosystem,
    entries: &[&Affected],
    current: &str,
) -> Result<Fix, VersionError> {
    let current = Version::parse(eco, current)?;
    let mut candidates: Vec<(Version, &str)> = Vec::new();
    for entry in entries {
        for range in entry
            .ranges
            .iter()
            .filter(|r| matches!(r.kind, RangeType::Semver | RangeType::Ecosystem))
        {
            for e in &range.events {
                if let Event::Fixed(text) = e {
                    let fixed = Version::parse(eco, text).map_err(|err| match err {
                        VersionError::Invalid {
                            ecosystem,
                            version,
                            reason,
                        } => VersionError::InvalidEvent {
                            ecosystem,
                            event: "fixed",
                            version,
                            reason,
                        },
                        other => other,
                    })?;
                    if fixed >= current {
                        candidates.push((fixed, text.as_str()));
                    }
                }
            }
        }
    }
    crate::insertion_sort_by(&mut candidates, |a, b| a.0.cmp(&b.0));
    candidates.dedup_by(|a, b| a.0 == b.0);
    for (candidate, text) in candidates {
        let mut clear = true;
        for entry in entries {
            if is_affected_version(entry, &candidate)?.affected {
                clear = false;
                break;
            }
        }
        if clear {
            return Ok(Fix::Version(text.trim().to_string()));
        }
    }
    Ok(Fix::NoFixPublished)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(json: &str) -> Affected {
        serde_json::from_str(json).expect("valid affected entry")
    }

    fn check(eco: Ecosystem, a: &Affected, v: &str) -> bool {
        is_affected(eco, a, v).expect("evaluates").affected
    }

    #[test]
    fn introduced_zero_and_fixed() {
        let a = entry(
            r#"{"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.2.0"}]}]}"#,
        );
        assert!(check(Ecosystem::CratesIo, &a, "0.0.1"));
        assert!(
            check(Ecosystem::CratesIo, &a, "1.2.0-rc.1"),
            "pre-releases of the fix are before it"
        );
        assert!(!check(Ecosystem::CratesIo, &a, "1.2.0"));
    }

    #[test]
    fn last_affected_and_limit() {
        let a = entry(
            r#"{"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"1.0"},{"last_affected":"1.4"}]}]}"#,
        );
        assert!(check(Ecosystem::PyPI, &a, "1.4"));
        assert!(!check(Ecosystem::PyPI, &a, "1.4.post1"));
        let l = entry(
            r#"{"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"1.0"},{"limit":"2.0"}]}]}"#,
        );
        assert!(check(Ecosystem::PyPI, &l, "1.9"));
        assert!(!check(Ecosystem::PyPI, &l, "2.0"));
    }

    #[test]
    fn unsorted_events_are_sorted_and_fixed_wins_a_tie() {
        // pyspark PYSEC-2022-236: the OSV reference evaluators say 3.1.1 is outside.
        let a = entry(
            r#"{"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"3.1.1"},
            {"introduced":"3.2.0"},{"fixed":"3.2.2"},{"introduced":"3.1.1"},{"fixed":"3.1.3"}]}]}"#,
        );
        assert!(!check(Ecosystem::PyPI, &a, "3.1.1"));
        assert!(check(Ecosystem::PyPI, &a, "3.0.0"));
        assert!(check(Ecosystem::PyPI, &a, "3.2.1"));
    }

    #[test]
    fn versions_list_uses_ecosystem_equality_and_git_is_reported() {
        let a = entry(
            r#"{"versions":["1.0"],"ranges":[{"type":"GIT","repo":"https://x","events":[{"introduced":"abc"}]},
            {"type":"NEW_KIND","events":[{"introduced":"0"}]}]}"#,
        );
        let r = is_affected(Ecosystem::PyPI, &a, "1.0.0").expect("evaluates");
        assert!(r.affected && r.by_versions_list && r.by_range.is_none());
        assert_eq!((r.ignored_git_ranges, r.ignored_unknown_ranges), (1, 1));
        assert!(
            !check(Ecosystem::PyPI, &a, "1.1"),
            "a GIT range is never evaluated here"
        );
    }

    #[test]
    fn versions_list_screening_never_hides_an_equal_version() {
        let cases = [
            (Ecosystem::PyPI, "0!1.0", "1.0.0"),
            (Ecosystem::PyPI, "01.0", "1"),
            (Ecosystem::Go, "v1.2.3", "1.2.3+incompatible"),
            (Ecosystem::Maven, "0-ga", "0"),
            (Ecosystem::Maven, "1.0.0", "1-final"),
            (Ecosystem::RubyGems, "00.a", "0.0.a"),
            (Ecosystem::Packagist, "v1.0", "1.0.0.0"),
            (Ecosystem::Npm, "01.2.3", "1.2.3"),
        ];
        for (eco, listed, version) in cases {
            let v = Version::parse(eco, version).expect("valid");
            let k = LeadingNumbers::of(eco, v.as_str());
            assert!(
                listed_equals(eco, listed, &v, k.as_ref()),
                "{eco}: {listed} = {version}"
            );
        }
        let v = Version::parse(Ecosystem::PyPI, "2.0").expect("valid");
        let k = LeadingNumbers::of(Ecosystem::PyPI, v.as_str());
        assert!(!listed_equals(Ecosystem::PyPI, "1.0", &v, k.as_ref()));
        assert!(!listed_equals(Ecosystem::PyPI, "1!2.0", &v, k.as_ref()));
        assert!(!listed_equals(Ecosystem::PyPI, "2.1", &v, k.as_ref()));
    }

    #[test]
    fn packagist_reads_bounds_as_composer_does() {
        let a = entry(
            r#"{"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"2"},{"fixed":"2.0.6"}]}]}"#,
        );
        assert!(
            check(Ecosystem::Packagist, &a, "2.0.0-beta1"),
            ">=2 admits 2's pre-releases"
        );
        assert!(
            !check(Ecosystem::Packagist, &a, "2.0.6-beta1"),
            "<2.0.6 stops before 2.0.6's"
        );
        assert!(check(Ecosystem::Packagist, &a, "v2.0.5"));
        assert!(
            !check(Ecosystem::Packagist, &a, "dev-main"),
            "branches only match by name"
        );
    }

    #[test]
    fn invalid_input_is_an_error_naming_it() {
        let a = entry(
            r#"{"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.x"}]}]}"#,
        );
        let e = is_affected(Ecosystem::CratesIo, &a, "1.0.0").expect_err("bad event");
        assert!(
            matches!(e, VersionError::InvalidEvent { event: "fixed", .. }),
            "{e}"
        );
        assert!(is_affected(Ecosystem::CratesIo, &a, "not a version").is_err());
        // Another source saying "affected" settles it despite the unreadable range.
        let listed = entry(
            r#"{"versions":["1.0.0"],"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.x"}]}]}"#,
        );
        assert!(check(Ecosystem::CratesIo, &listed, "1.0.0"));
        assert!(is_affected(Ecosystem::CratesIo, &listed, "2.0.0").is_err());
    }

    #[test]
    fn smallest_fix_skips_fixes_inside_other_ranges() {
        let a = entry(
            r#"{"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"1.5"}]}]}"#,
        );
        let b = entry(
            r#"{"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"1.4"},{"fixed":"1.6"}]}]}"#,
        );
        assert_eq!(
            smallest_fix(Ecosystem::PyPI, &[&a, &b], "1.0"),
            Ok(Fix::Version("1.6".into()))
        );
        assert_eq!(
            smallest_fix(Ecosystem::PyPI, &[&a], "1.0"),
            Ok(Fix::Version("1.5".into()))
        );
        let open = entry(r#"{"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"}]}]}"#);
        assert_eq!(
            smallest_fix(Ecosystem::PyPI, &[&open], "1.0"),
            Ok(Fix::NoFixPublished)
        );
    }
}
