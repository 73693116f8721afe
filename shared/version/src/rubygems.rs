//! RubyGems: `Gem::Version` and `Gem::Requirement` (`~>` and friends).
//!
//! A port of rubygems' `lib/rubygems/version.rb` and `requirement.rb` at the commit the
//! vectors come from; no Rust crate implements them. A version is dot-separated segments,
//! numbers and letter runs alike (`1.2.rc1` = 1, 2, "rc", 1); any letter makes it a
//! pre-release, and pre-releases sort before the release (`1.0.a < 1.0`). A `-` becomes
//! `.pre.` as in RubyGems.

use std::cmp::Ordering;
use std::fmt;

/// One segment: a number or a run of letters.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Num(u64),
    /// A number too large for `u64`, as digits without leading zeros (Ruby has bignums).
    Big(String),
    Str(String),
}

impl Segment {
    fn is_str(&self) -> bool {
        matches!(self, Segment::Str(_))
    }
    fn is_zero(&self) -> bool {
        matches!(self, Segment::Num(0))
    }
    fn cmp_seg(&self, other: &Segment) -> Ordering {
        match (self, other) {
            (Segment::Str(a), Segment::Str(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Segment::Str(_), _) => Ordering::Less,
            (_, Segment::Str(_)) => Ordering::Greater,
            (Segment::Num(a), Segment::Num(b)) => a.cmp(b),
            (Segment::Num(_), Segment::Big(_)) => Ordering::Less,
            (Segment::Big(_), Segment::Num(_)) => Ordering::Greater,
            (Segment::Big(a), Segment::Big(b)) => a.len().cmp(&b.len()).then_with(|| a.cmp(b)),
        }
    }
    fn succ(&self) -> Segment {
        match self {
            Segment::Num(n) => n.checked_add(1).map_or_else(
                || Segment::Big(u128::from(*n).saturating_add(1).to_string()),
                Segment::Num,
            ),
            other => other.clone(),
        }
    }
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Num(n) => write!(f, "{n}"),
            Segment::Big(s) | Segment::Str(s) => f.write_str(s),
        }
    }
}

/// `String#scan(/\d+|[a-z]+/i)` turned into segments.
fn partition(v: &str) -> Vec<Segment> {
    let b = v.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let digits = &v[s..i];
            out.push(match digits.parse::<u64>() {
                Ok(n) => Segment::Num(n),
                Err(_) => Segment::Big(digits.trim_start_matches('0').to_string()),
            });
        } else if b[i].is_ascii_alphabetic() {
            let s = i;
            while i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            }
            out.push(Segment::Str(v[s..i].to_string()));
        } else {
            i += 1;
        }
    }
    out
}

fn is_ruby_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | '\x0B' | '\x0C')
}

fn is_alnum_run(s: &str, extra: &[u8]) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(&c))
}

/// `Gem::Version.correct?`: `\A\s*([0-9]+(?>\.[0-9a-zA-Z]+)*(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?)?\s*\z`.
fn correct(v: &str) -> bool {
    let v = v.trim_matches(is_ruby_space);
    if v.is_empty() {
        return true;
    }
    let (main, pre) = match v.find('-') {
        Some(i) => (&v[..i], Some(&v[i + 1..])),
        None => (v, None),
    };
    let mut parts = main.split('.');
    let first = parts.next().unwrap_or("");
    if first.is_empty() || !first.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    if !parts.all(|p| is_alnum_run(p, b"")) {
        return false;
    }
    match pre {
        None => true,
        Some(p) => p.split('.').all(|s| is_alnum_run(s, b"-")),
    }
}

/// A `Gem::Version`.
#[derive(Debug, Clone)]
pub struct GemVersion {
    /// The version text after RubyGems' clean-up (`-` → `.pre.`).
    version: String,
    segments: Vec<Segment>,
    canonical: Vec<Segment>,
}

impl GemVersion {
    pub fn parse(input: &str) -> Result<GemVersion, String> {
        if !correct(input) {
            return Err("it is not digits followed by dot-separated letters and digits".into());
        }
        let trimmed = input.trim_matches(is_ruby_space);
        let version = if trimmed.is_empty() {
            "0".to_string()
        } else {
            trimmed.replace('-', ".pre.")
        };
        let segments = partition(&version);
        let canonical = partition(&canonical_text(&version));
        Ok(GemVersion {
            version,
            segments,
            canonical,
        })
    }

    fn from_segments(segments: &[Segment]) -> GemVersion {
        let text = segments
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(".");
        // Segments of a valid version re-joined form a valid version.
        GemVersion::parse(&text).unwrap_or_else(|_| GemVersion {
            version: text.clone(),
            segments: segments.to_vec(),
            canonical: segments.to_vec(),
        })
    }

    /// Any letter makes a pre-release.
    pub fn is_prerelease(&self) -> bool {
        self.version.bytes().any(|c| c.is_ascii_alphabetic())
    }

    /// `Gem::Version#release`: the version without its pre-release part.
    pub fn release(&self) -> GemVersion {
        if !self.is_prerelease() {
            return self.clone();
        }
        let mut s = self.segments.clone();
        while s.iter().any(Segment::is_str) {
            s.pop();
        }
        GemVersion::from_segments(&s)
    }

    /// `Gem::Version#bump`: `1.2.3` → `1.3`, the upper bound of `~> 1.2.3`.
    pub fn bump(&self) -> GemVersion {
        let mut s = self.segments.clone();
        while s.iter().any(Segment::is_str) {
            s.pop();
        }
        if s.len() > 1 {
            s.pop();
        }
        if let Some(last) = s.last_mut() {
            *last = last.succ();
        }
        GemVersion::from_segments(&s)
    }

    /// `Gem::Version#approximate_recommendation`: `1.2.3` → `~> 1.2`.
    pub fn approximate_recommendation(&self) -> String {
        let mut s = self.segments.clone();
        while s.iter().any(Segment::is_str) {
            s.pop();
        }
        s.truncate(2);
        while s.len() < 2 {
            s.push(Segment::Num(0));
        }
        let mut r = format!(
            "~> {}",
            s.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(".")
        );
        if self.is_prerelease() {
            r.push_str(".a");
        }
        r
    }

    /// `eql?`: the same text, not merely the same position (`1.0` is not `eql?` `1`).
    pub fn eql(&self, other: &GemVersion) -> bool {
        self.version == other.version
    }

    pub fn as_str(&self) -> &str {
        &self.version
    }
}

/// `canonical_segments`' text clean-up: trailing zeros go (`1.0.0` = `1`), and so do
/// zeros just before a pre-release word (`1.0.a` = `1.a`).
fn canonical_text(v: &str) -> String {
    let b = v.as_bytes();
    // sub(/(?<=[a-zA-Z.])[.0]+\z/, "")
    let mut end = b.len();
    while end > 0 && matches!(b[end - 1], b'.' | b'0') {
        end -= 1;
    }
    let mut cut = b.len();
    for i in end.max(1)..b.len() {
        if b[i - 1].is_ascii_alphabetic() || b[i - 1] == b'.' {
            cut = i;
            break;
        }
    }
    let mut out = v[..cut].to_string();
    if out.bytes().any(|c| c.is_ascii_alphabetic()) {
        // sub!(/(?<=\.|\A)[0.]+(?=[a-zA-Z])/, "")
        let ob = out.as_bytes();
        for i in 0..ob.len() {
            if i != 0 && ob[i - 1] != b'.' {
                continue;
            }
            let mut j = i;
            while j < ob.len() && matches!(ob[j], b'0' | b'.') {
                j += 1;
            }
            if j > i && j < ob.len() && ob[j].is_ascii_alphabetic() {
                out.replace_range(i..j, "");
                break;
            }
        }
    }
    out
}

impl PartialEq for GemVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for GemVersion {}
impl PartialOrd for GemVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for GemVersion {
    /// `Gem::Version#<=>`.
    fn cmp(&self, other: &Self) -> Ordering {
        if self.version == other.version || self.canonical == other.canonical {
            return Ordering::Equal;
        }
        let (l, r) = (&self.canonical, &other.canonical);
        let limit = l.len().min(r.len());
        for i in 0..limit {
            if l[i] == r[i] {
                continue;
            }
            return l[i].cmp_seg(&r[i]);
        }
        // The longer one decides: a word makes it smaller, a non-zero number larger.
        if l.len() < r.len() {
            for s in &r[limit..] {
                if s.is_str() {
                    return Ordering::Greater;
                }
                if !s.is_zero() {
                    return Ordering::Less;
                }
            }
        } else {
            for s in &l[limit..] {
                if s.is_str() {
                    return Ordering::Less;
                }
                if !s.is_zero() {
                    return Ordering::Greater;
                }
            }
        }
        Ordering::Equal
    }
}

impl fmt::Display for GemVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.version)
    }
}

/// A requirement operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemOp {
    Eq,
    Ne,
    Gt,
    Lt,
    Ge,
    Le,
    /// `~>`: at least this version, below its `bump`.
    Pessimistic,
}

/// A `Gem::Requirement`: every listed condition must hold.
#[derive(Debug, Clone)]
pub struct GemRequirement {
    requirements: Vec<(GemOp, GemVersion)>,
}

impl GemRequirement {
    /// `Gem::Requirement.new(*parts)`; each part is `[op] version`, and a single string
    /// may list several separated by commas (as advisories write them).
    pub fn parse<S: AsRef<str>>(parts: &[S]) -> Result<GemRequirement, String> {
        let mut requirements = Vec::new();
        for part in parts {
            for piece in part.as_ref().split(',') {
                requirements.push(parse_one(piece)?);
            }
        }
        if requirements.is_empty() {
            requirements.push((GemOp::Ge, GemVersion::parse("0")?));
        }
        Ok(GemRequirement { requirements })
    }

    /// `satisfied_by?`.
    pub fn satisfied_by(&self, v: &GemVersion) -> bool {
        self.requirements.iter().all(|(op, r)| match op {
            GemOp::Eq => v == r,
            GemOp::Ne => v != r,
            GemOp::Gt => v > r,
            GemOp::Lt => v < r,
            GemOp::Ge => v >= r,
            GemOp::Le => v <= r,
            GemOp::Pessimistic => v >= r && v.release() < r.bump(),
        })
    }
}

fn parse_one(piece: &str) -> Result<(GemOp, GemVersion), String> {
    let s = piece.trim_matches(is_ruby_space);
    let (op, rest) = [
        ("~>", GemOp::Pessimistic),
        ("!=", GemOp::Ne),
        (">=", GemOp::Ge),
        ("<=", GemOp::Le),
        ("=", GemOp::Eq),
        (">", GemOp::Gt),
        ("<", GemOp::Lt),
    ]
    .iter()
    .find_map(|(t, op)| s.strip_prefix(t).map(|r| (*op, r)))
    .unwrap_or((GemOp::Eq, s));
    let rest = rest.trim_matches(is_ruby_space);
    if rest.is_empty() {
        return Err(format!("ill-formed requirement {piece:?}: no version"));
    }
    let v =
        GemVersion::parse(rest).map_err(|e| format!("ill-formed requirement {piece:?}: {e}"))?;
    Ok((op, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> GemVersion {
        GemVersion::parse(s).expect(s)
    }

    #[test]
    fn orders_like_gem_version() {
        assert!(v("1.0.a") < v("1.0"));
        assert!(v("1.0.rc1") < v("1.0.rc2"));
        assert!(v("3.10") > v("3.2"));
        assert_eq!(v("1.0.0"), v("1"));
        assert_eq!(v("1.2.b1"), v("1.2.b.1"));
        assert_eq!(v("1.0.a"), v("1.a"));
        assert!(v("1.0-1").is_prerelease(), "a dash means .pre.");
        assert!(GemVersion::parse("1.0 beta").is_err());
        assert!(GemVersion::parse("junk").is_err());
    }

    #[test]
    fn pessimistic_operator_stops_at_bump() {
        let r = GemRequirement::parse(&["~> 1.2.3"]).expect("req");
        assert!(r.satisfied_by(&v("1.2.9")));
        assert!(!r.satisfied_by(&v("1.3")));
        assert_eq!(v("5.2.4.a").bump().to_string(), "5.3");
        assert_eq!(v("1.1.rc10").release().to_string(), "1.1");
        assert_eq!(v("1.2.0").approximate_recommendation(), "~> 1.2");
    }
}
