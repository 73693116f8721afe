//! Go: module versions as golang.org/x/mod/semver reads them.
//!
//! Written here because there is no Rust port of x/mod/semver; it is small, and its rules
//! differ from SemVer 2.0 crates in ways that matter: the `v` prefix is required, `v1` and
//! `v1.2` are valid shorthands for `v1.0.0` and `v1.2.0`, numbers have no size limit, and
//! build metadata (`+incompatible`) never affects order. Pseudo-versions
//! (`v0.0.0-20191109021931-daa7c04131f5`) are ordinary pre-releases and need nothing
//! special. OSV writes Go versions without the `v`; it is added before parsing. The Go
//! toolchain's own tags (`go1.21.3`, `go1.21rc2`), which OSV writes as `1.21.3` and
//! `1.21.0-rc.2` for the `stdlib` and `toolchain` packages, are mapped the same way.

use std::cmp::Ordering;
use std::fmt;

/// A valid Go module version. Order is x/mod's `semver.Compare`.
#[derive(Debug, Clone)]
pub struct GoVersion {
    major: String,
    minor: String,
    patch: String,
    /// With its leading `-`, or empty.
    prerelease: String,
    /// With its leading `+`, or empty.
    build: String,
}

impl GoVersion {
    /// Parses `v1.2.3`, `1.2.3`, `v1.2` or a toolchain tag (`go1.21rc2`).
    pub fn parse(input: &str) -> Result<GoVersion, String> {
        if let Some(tag) = input.strip_prefix("go") {
            return Self::parse_toolchain(tag);
        }
        if input.starts_with('v') {
            Self::parse_canonical(input)
        } else {
            Self::parse_canonical(&format!("v{input}"))
        }
    }

    /// x/mod's `parse`: the input must start with `v`.
    pub fn parse_canonical(v: &str) -> Result<GoVersion, String> {
        let rest = v.strip_prefix('v').ok_or("it does not start with 'v'")?;
        let (major, rest) =
            parse_int(rest).ok_or("its major version is not a number without leading zeros")?;
        if rest.is_empty() {
            return Ok(GoVersion::short(major, "0"));
        }
        let rest = rest
            .strip_prefix('.')
            .ok_or("its major version is followed by something other than '.'")?;
        let (minor, rest) =
            parse_int(rest).ok_or("its minor version is not a number without leading zeros")?;
        if rest.is_empty() {
            return Ok(GoVersion::short(major, minor));
        }
        let rest = rest
            .strip_prefix('.')
            .ok_or("its minor version is followed by something other than '.'")?;
        let (patch, mut rest) =
            parse_int(rest).ok_or("its patch version is not a number without leading zeros")?;
        let mut prerelease = "";
        if rest.starts_with('-') {
            let end = rest.find('+').unwrap_or(rest.len());
            prerelease = &rest[..end];
            if !valid_prerelease(&prerelease[1..]) {
                return Err(
                    "its pre-release is not dot-separated [0-9A-Za-z-] identifiers \
                            (numeric ones without leading zeros)"
                        .into(),
                );
            }
            rest = &rest[end..];
        }
        let mut build = "";
        if rest.starts_with('+') {
            build = rest;
            if !valid_build(&build[1..]) {
                return Err(
                    "its build metadata is not dot-separated [0-9A-Za-z-] identifiers".into(),
                );
            }
            rest = "";
        }
        if !rest.is_empty() {
            return Err(format!("unexpected text {rest:?} after the patch version"));
        }
        Ok(GoVersion {
            major: major.into(),
            minor: minor.into(),
            patch: patch.into(),
            prerelease: prerelease.into(),
            build: build.into(),
        })
    }

    fn short(major: &str, minor: &str) -> GoVersion {
        GoVersion {
            major: major.into(),
            minor: minor.into(),
            patch: "0".into(),
            prerelease: String::new(),
            build: String::new(),
        }
    }

    /// `go1`, `go1.21`, `go1.21.3`, `go1.21rc2`, `go1.9beta1` → the semver the Go
    /// vulnerability database uses for them.
    fn parse_toolchain(tag: &str) -> Result<GoVersion, String> {
        let (nums, pre) = match tag.find(|c: char| c.is_ascii_alphabetic()) {
            Some(i) => (&tag[..i], Some(&tag[i..])),
            None => (tag, None),
        };
        let mut parts = nums.split('.');
        let mut next = || {
            parts
                .next()
                .map(|p| parse_int(p).filter(|(_, r)| r.is_empty()).map(|(n, _)| n))
        };
        let major = next()
            .flatten()
            .ok_or("it is not a Go release tag such as go1.21.3")?;
        let minor = next()
            .map_or(Some("0"), |m| m)
            .ok_or("its minor number is not a number")?;
        let patch = next()
            .map_or(Some("0"), |p| p)
            .ok_or("its patch number is not a number")?;
        if next().is_some() {
            return Err("a Go release tag has at most three numbers".into());
        }
        let prerelease = match pre {
            None => String::new(),
            Some(p) => {
                let (kind, n) = if let Some(n) = p.strip_prefix("rc") {
                    ("rc", n)
                } else if let Some(n) = p.strip_prefix("beta") {
                    ("beta", n)
                } else {
                    return Err("only rc and beta pre-releases exist for Go release tags".into());
                };
                let n = parse_int(n)
                    .filter(|(_, r)| r.is_empty())
                    .ok_or("its rc/beta number is not a number")?
                    .0;
                format!("-{kind}.{n}")
            }
        };
        Ok(GoVersion {
            major: major.into(),
            minor: minor.into(),
            patch: patch.into(),
            prerelease,
            build: String::new(),
        })
    }

    /// x/mod's `Canonical`: `vMAJOR.MINOR.PATCH[-PRE]`, build metadata dropped.
    pub fn canonical(&self) -> String {
        format!(
            "v{}.{}.{}{}",
            self.major, self.minor, self.patch, self.prerelease
        )
    }

    pub fn is_prerelease(&self) -> bool {
        !self.prerelease.is_empty()
    }

    /// `+incompatible`: a v2+ module without a go.mod.
    pub fn is_incompatible(&self) -> bool {
        self.build == "+incompatible"
    }
}

fn parse_int(v: &str) -> Option<(&str, &str)> {
    let end = v
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(v.len());
    if end == 0 || (v.as_bytes()[0] == b'0' && end != 1) {
        return None;
    }
    Some((&v[..end], &v[end..]))
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

fn is_bad_num(s: &str) -> bool {
    s.len() > 1 && s.bytes().all(|b| b.is_ascii_digit()) && s.starts_with('0')
}

fn valid_prerelease(p: &str) -> bool {
    p.split('.')
        .all(|id| !id.is_empty() && id.bytes().all(is_ident_char) && !is_bad_num(id))
}

fn valid_build(b: &str) -> bool {
    b.split('.')
        .all(|id| !id.is_empty() && id.bytes().all(is_ident_char))
}

/// Numbers without leading zeros: longer is larger, equal length compares as text.
fn compare_int(x: &str, y: &str) -> Ordering {
    x.len().cmp(&y.len()).then_with(|| x.cmp(y))
}

fn compare_prerelease(x: &str, y: &str) -> Ordering {
    if x == y {
        return Ordering::Equal;
    }
    if x.is_empty() {
        return Ordering::Greater;
    }
    if y.is_empty() {
        return Ordering::Less;
    }
    let mut xs = x[1..].split('.');
    let mut ys = y[1..].split('.');
    loop {
        match (xs.next(), ys.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(dx), Some(dy)) => {
                if dx == dy {
                    continue;
                }
                let ix = dx.bytes().all(|b| b.is_ascii_digit());
                let iy = dy.bytes().all(|b| b.is_ascii_digit());
                return match (ix, iy) {
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                    (true, true) => compare_int(dx, dy),
                    (false, false) => dx.cmp(dy),
                };
            }
        }
    }
}

/// x/mod's `semver.Compare` on raw strings: invalid versions are equal to each other
/// and below every valid one. Used for the x/mod vectors; Proven itself refuses invalid
/// versions instead of ordering them.
pub fn compare_lenient(a: &str, b: &str) -> Ordering {
    match (GoVersion::parse_canonical(a), GoVersion::parse_canonical(b)) {
        (Err(_), Err(_)) => Ordering::Equal,
        (Err(_), Ok(_)) => Ordering::Less,
        (Ok(_), Err(_)) => Ordering::Greater,
        (Ok(x), Ok(y)) => x.cmp(&y),
    }
}

impl PartialEq for GoVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for GoVersion {}
impl PartialOrd for GoVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for GoVersion {
    fn cmp(&self, o: &Self) -> Ordering {
        compare_int(&self.major, &o.major)
            .then_with(|| compare_int(&self.minor, &o.minor))
            .then_with(|| compare_int(&self.patch, &o.patch))
            .then_with(|| compare_prerelease(&self.prerelease, &o.prerelease))
    }
}

impl fmt::Display for GoVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.canonical(), self.build)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> GoVersion {
        GoVersion::parse(s).expect(s)
    }

    #[test]
    fn accepts_go_and_osv_spellings() {
        assert_eq!(v("1.2.3").canonical(), "v1.2.3");
        assert_eq!(v("v1.2").canonical(), "v1.2.0");
        assert_eq!(v("go1.21rc2").canonical(), "v1.21.0-rc.2");
        assert_eq!(v("go1.21.3").canonical(), "v1.21.3");
        assert!(GoVersion::parse("v1.2-pre").is_err());
        assert!(GoVersion::parse("v01.2.3").is_err());
    }

    #[test]
    fn incompatible_and_pseudo_versions_order_naturally() {
        assert_eq!(v("v2.0.0+incompatible"), v("v2.0.0"));
        assert!(v("v2.0.0+incompatible").is_incompatible());
        assert!(v("v0.0.0-20191109021931-daa7c04131f5") < v("v0.0.1"));
        assert!(v("v1.2.4-0.20191109021931-daa7c04131f5") > v("v1.2.3"));
        assert!(v("999999999999999999999.0.0") > v("99999999999999999999.0.0"));
    }

    #[test]
    fn lenient_compare_puts_invalid_first() {
        assert_eq!(compare_lenient("bad", "v1-alpha"), Ordering::Equal);
        assert_eq!(compare_lenient("bad", "v0.0.0"), Ordering::Less);
    }
}
