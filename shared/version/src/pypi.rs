//! PyPI: PEP 440 versions and specifiers, as pypa/packaging implements them.
//!
//! Why not `pep440_rs`: packaging 26 (the reference the vectors were scored with) decides
//! specifier membership on an interval engine with "boundary" points (`>1.0` starts after
//! every `1.0.postN`, `<=1.0` ends after every `1.0+local`) and a pre-release policy that
//! differs between `Specifier` and `SpecifierSet`. Reproducing that needs the parts of a
//! version and the ability to build neighbours (`1.0.post0.dev0`, `1.3.dev0`) cheaply,
//! which a direct port gives us without a dependency whose own (uv) pre-release semantics
//! we would then have to undo. The port is checked against every row of
//! `pypi-packaging.jsonl` (pypa/packaging's own tests) by the vectors test.
//!
//! Numbers are kept as `u64`; a number that does not fit is reported as an invalid
//! version instead of being compared wrongly (packaging uses Python's unbounded ints).

use std::cmp::Ordering;
use std::fmt;

/// The pre-release phase: `a` < `b` < `rc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PreKind {
    A,
    B,
    Rc,
}

impl PreKind {
    fn as_str(self) -> &'static str {
        match self {
            PreKind::A => "a",
            PreKind::B => "b",
            PreKind::Rc => "rc",
        }
    }
    fn rank(self) -> i128 {
        match self {
            PreKind::A => 0,
            PreKind::B => 1,
            PreKind::Rc => 2,
        }
    }
}

/// One segment of a local version label (`+ubuntu.1`): numbers sort above strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LocalSegment {
    Num(u64),
    Str(Box<str>),
}

impl LocalSegment {
    fn cmp_seg(&self, other: &LocalSegment) -> Ordering {
        match (self, other) {
            (LocalSegment::Num(a), LocalSegment::Num(b)) => a.cmp(b),
            (LocalSegment::Str(a), LocalSegment::Str(b)) => a.cmp(b),
            (LocalSegment::Str(_), LocalSegment::Num(_)) => Ordering::Less,
            (LocalSegment::Num(_), LocalSegment::Str(_)) => Ordering::Greater,
        }
    }
}

/// A parsed PEP 440 version. Equality and order are PEP 440's (`1.0 == 1.0.0`).
#[derive(Debug, Clone)]
pub struct PyVersion {
    epoch: u64,
    release: Vec<u64>,
    pre: Option<(PreKind, u64)>,
    post: Option<u64>,
    dev: Option<u64>,
    local: Option<Vec<LocalSegment>>,
}

const PRE_SPELLINGS: [(&str, PreKind); 8] = [
    // Same order as packaging's regex alternation: the first spelling that matches wins.
    ("alpha", PreKind::A),
    ("a", PreKind::A),
    ("beta", PreKind::B),
    ("b", PreKind::B),
    ("preview", PreKind::Rc),
    ("pre", PreKind::Rc),
    ("c", PreKind::Rc),
    ("rc", PreKind::Rc),
];

fn is_sep(b: u8) -> bool {
    matches!(b, b'.' | b'_' | b'-')
}

fn digits_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn parse_u64(digits: &[u8]) -> Result<u64, String> {
    let mut n: u64 = 0;
    for &d in digits {
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(d - b'0')))
            .ok_or_else(|| "a number in it is larger than 18446744073709551615".to_string())?;
    }
    Ok(n)
}

fn starts_with_ci(b: &[u8], i: usize, word: &str) -> bool {
    let w = word.as_bytes();
    b.len() >= i + w.len() && b[i..i + w.len()].eq_ignore_ascii_case(w)
}

/// `[._-]? word [._-]? N?` at `i`, for the first of `spellings` whose word is there (any
/// letter case): its value, the number (0 when none is written) and where it ends.
fn spelled_number<T: Copy>(
    b: &[u8],
    i: usize,
    spellings: &[(&str, T)],
) -> Result<Option<(T, u64, usize)>, String> {
    let mut j = i;
    if j < b.len() && is_sep(b[j]) {
        j += 1;
    }
    let Some((word, value)) = spellings.iter().find(|(w, _)| starts_with_ci(b, j, w)) else {
        return Ok(None);
    };
    j += word.len();
    if j < b.len() && is_sep(b[j]) {
        j += 1;
    }
    let e = digits_end(b, j);
    let n = if e > j { parse_u64(&b[j..e])? } else { 0 };
    Ok(Some((*value, n, e)))
}

impl PyVersion {
    /// Parses a version the way `packaging.version.Version(s)` does: surrounding
    /// whitespace, a leading `v`, any letter case and the alternative spellings of PEP 440
    /// are accepted and normalised.
    pub fn parse(input: &str) -> Result<PyVersion, String> {
        let s = input.trim_matches(char::is_whitespace);
        let b = s.as_bytes();
        if b.is_empty() {
            return Err("it is empty".into());
        }
        let mut i = 0;
        if b[0] == b'v' || b[0] == b'V' {
            i = 1;
        }
        // Epoch: digits followed by '!'.
        let mut epoch = 0;
        let e = digits_end(b, i);
        if e > i && e < b.len() && b[e] == b'!' {
            epoch = parse_u64(&b[i..e])?;
            i = e + 1;
        }
        // Release: N(.N)*
        let mut release = Vec::with_capacity(4);
        let e = digits_end(b, i);
        if e == i {
            return Err("it does not start with a release number".into());
        }
        release.push(parse_u64(&b[i..e])?);
        i = e;
        while i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
            let e = digits_end(b, i + 1);
            release.push(parse_u64(&b[i + 1..e])?);
            i = e;
        }
        // Pre-release: [._-]? (alpha|a|beta|b|preview|pre|c|rc) [._-]? N?
        let mut pre = None;
        if let Some((kind, n, e)) = spelled_number(b, i, &PRE_SPELLINGS)? {
            pre = Some((kind, n));
            i = e;
        }
        // Post-release: -N | [._-]? (post|rev|r) [._-]? N?
        let mut post = None;
        if i + 1 < b.len() && b[i] == b'-' && b[i + 1].is_ascii_digit() {
            let e = digits_end(b, i + 1);
            post = Some(parse_u64(&b[i + 1..e])?);
            i = e;
        } else if let Some(((), n, e)) =
            spelled_number(b, i, &[("post", ()), ("rev", ()), ("r", ())])?
        {
            post = Some(n);
            i = e;
        }
        // Development release: [._-]? dev [._-]? N?
        let mut dev = None;
        if let Some(((), n, e)) = spelled_number(b, i, &[("dev", ())])? {
            dev = Some(n);
            i = e;
        }
        // Local version: +[a-z0-9]+([._-][a-z0-9]+)*
        let mut local = None;
        if i < b.len() && b[i] == b'+' {
            let segs = parse_local(&b[i + 1..])?;
            local = Some(segs);
            i = b.len();
        }
        if i != b.len() {
            return Err(format!("unexpected text {:?} after the version", &s[i..]));
        }
        Ok(PyVersion {
            epoch,
            release,
            pre,
            post,
            dev,
            local,
        })
    }

    fn from_parts(
        epoch: u64,
        release: Vec<u64>,
        pre: Option<(PreKind, u64)>,
        post: Option<u64>,
        dev: Option<u64>,
    ) -> PyVersion {
        PyVersion {
            epoch,
            release,
            pre,
            post,
            dev,
            local: None,
        }
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }
    pub fn release(&self) -> &[u64] {
        &self.release
    }
    pub fn pre(&self) -> Option<(PreKind, u64)> {
        self.pre
    }
    pub fn post(&self) -> Option<u64> {
        self.post
    }
    pub fn dev(&self) -> Option<u64> {
        self.dev
    }
    pub fn has_local(&self) -> bool {
        self.local.is_some()
    }
    /// A pre-release in PEP 440's sense: an `a`/`b`/`rc` or a `.dev` release.
    pub fn is_prerelease(&self) -> bool {
        self.pre.is_some() || self.dev.is_some()
    }
    pub fn is_postrelease(&self) -> bool {
        self.post.is_some()
    }
    pub fn is_devrelease(&self) -> bool {
        self.dev.is_some()
    }

    fn trimmed_release(&self) -> &[u64] {
        trim_release(&self.release)
    }

    /// packaging's `_cmpkey` suffix: (pre rank, pre n, post rank, post n, dev rank, dev n).
    fn suffix(&self) -> [i128; 6] {
        let (pre_rank, pre_n) = match (self.pre, self.post, self.dev) {
            (None, None, Some(_)) => (-1, 0),
            (None, _, _) => (3, 0),
            (Some((k, n)), _, _) => (k.rank(), i128::from(n)),
        };
        let (post_rank, post_n) = match self.post {
            None => (0, 0),
            Some(n) => (1, i128::from(n)),
        };
        let (dev_rank, dev_n) = match self.dev {
            None => (1, 0),
            Some(n) => (0, i128::from(n)),
        };
        [pre_rank, pre_n, post_rank, post_n, dev_rank, dev_n]
    }

    fn cmp_public(&self, other: &PyVersion) -> Ordering {
        self.epoch
            .cmp(&other.epoch)
            .then_with(|| self.trimmed_release().cmp(other.trimmed_release()))
            .then_with(|| self.suffix().cmp(&other.suffix()))
    }

    fn without_local(&self) -> PyVersion {
        PyVersion {
            local: None,
            ..self.clone()
        }
    }

    /// `self` is `other` with a different (or no) local label, or `other` itself.
    fn same_public_family(&self, other: &PyVersion) -> bool {
        self.epoch == other.epoch
            && same_trimmed(&other.release, self.trimmed_release())
            && self.pre == other.pre
            && self.post == other.post
            && self.dev == other.dev
    }
}

fn trim_release(r: &[u64]) -> &[u64] {
    let mut end = r.len();
    while end > 1 && r[end - 1] == 0 {
        end -= 1;
    }
    &r[..end]
}

/// `release` equals `trimmed` once trailing zeros are ignored.
fn same_trimmed(release: &[u64], trimmed: &[u64]) -> bool {
    release.len() >= trimmed.len()
        && release[..trimmed.len()] == *trimmed
        && release[trimmed.len()..].iter().all(|&x| x == 0)
}

fn parse_local(b: &[u8]) -> Result<Vec<LocalSegment>, String> {
    let mut segs = Vec::new();
    if b.is_empty() {
        return Err("its local label after '+' is empty".into());
    }
    for part in b.split(|&c| is_sep(c)) {
        if part.is_empty() || !part.iter().all(u8::is_ascii_alphanumeric) {
            return Err(
                "its local label may only hold letters and digits separated by '.', '-' or '_'"
                    .into(),
            );
        }
        if part.iter().all(u8::is_ascii_digit) {
            segs.push(LocalSegment::Num(parse_u64(part)?));
        } else {
            let lower = part.to_ascii_lowercase();
            // Letters and digits only, so this is valid UTF-8.
            segs.push(LocalSegment::Str(String::from_utf8_lossy(&lower).into()));
        }
    }
    Ok(segs)
}

impl PartialEq for PyVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for PyVersion {}
impl PartialOrd for PyVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for PyVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_public(other)
            .then_with(|| match (&self.local, &other.local) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some(a), Some(b)) => {
                    for (x, y) in a.iter().zip(b.iter()) {
                        let c = x.cmp_seg(y);
                        if c != Ordering::Equal {
                            return c;
                        }
                    }
                    a.len().cmp(&b.len())
                }
            })
    }
}

impl fmt::Display for PyVersion {
    /// The normalised form (`str(Version(s))`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.epoch != 0 {
            write!(f, "{}!", self.epoch)?;
        }
        for (i, r) in self.release.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{r}")?;
        }
        if let Some((k, n)) = self.pre {
            write!(f, "{}{}", k.as_str(), n)?;
        }
        if let Some(n) = self.post {
            write!(f, ".post{n}")?;
        }
        if let Some(n) = self.dev {
            write!(f, ".dev{n}")?;
        }
        if let Some(local) = &self.local {
            f.write_str("+")?;
            for (i, s) in local.iter().enumerate() {
                if i > 0 {
                    f.write_str(".")?;
                }
                match s {
                    LocalSegment::Num(n) => write!(f, "{n}")?,
                    LocalSegment::Str(s) => f.write_str(s)?,
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// The interval engine (packaging/_ranges.py).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BoundaryKind {
    /// After `V` and every `V+local`, before `V.post0`.
    AfterLocals,
    /// After `V` and every `V.postN`, before the next release.
    AfterPosts,
}

/// A point on the version line: a real version or a boundary between real versions.
#[derive(Debug, Clone)]
enum Point {
    Version(PyVersion),
    Boundary(PyVersion, BoundaryKind),
}

impl Point {
    fn boundary_key(v: &PyVersion, kind: BoundaryKind) -> (u64, &[u64], [i128; 6]) {
        let mut suffix = v.suffix();
        if kind == BoundaryKind::AfterPosts {
            suffix = [suffix[0], suffix[1], 1, i128::MAX, 1, 0];
        }
        (v.epoch, v.trimmed_release(), suffix)
    }

    /// Is `other` in the family this boundary sorts above?
    fn is_family(base: &PyVersion, kind: BoundaryKind, other: &PyVersion) -> bool {
        if other.epoch != base.epoch
            || !same_trimmed(&other.release, base.trimmed_release())
            || other.pre != base.pre
        {
            return false;
        }
        match kind {
            BoundaryKind::AfterLocals => other.post == base.post && other.dev == base.dev,
            BoundaryKind::AfterPosts => other.dev == base.dev || other.post.is_some(),
        }
    }

    fn cmp(&self, other: &Point) -> Ordering {
        match (self, other) {
            (Point::Version(a), Point::Version(b)) => a.cmp(b),
            (Point::Boundary(a, ka), Point::Boundary(b, kb)) => {
                // Both keys end with the same infinite local component.
                Point::boundary_key(a, *ka).cmp(&Point::boundary_key(b, *kb))
            }
            (Point::Boundary(base, kind), Point::Version(v)) => {
                if base >= v || Point::is_family(base, *kind, v) {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (Point::Version(_), Point::Boundary(..)) => other.cmp(self).reverse(),
        }
    }
}

#[derive(Debug, Clone)]
struct Lower {
    point: Option<Point>,
    inclusive: bool,
}

#[derive(Debug, Clone)]
struct Upper {
    point: Option<Point>,
    inclusive: bool,
}

type Interval = (Lower, Upper);

fn neg_inf() -> Lower {
    Lower {
        point: None,
        inclusive: false,
    }
}
fn pos_inf() -> Upper {
    Upper {
        point: None,
        inclusive: false,
    }
}

impl Lower {
    fn new(point: Point, inclusive: bool) -> Lower {
        Lower {
            point: Some(point),
            inclusive,
        }
    }
    fn cmp(&self, other: &Lower) -> Ordering {
        match (&self.point, &other.point) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(a), Some(b)) => a
                .cmp(b)
                .then_with(|| match (self.inclusive, other.inclusive) {
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                    _ => Ordering::Equal,
                }),
        }
    }
    /// Is `v` at or above this lower bound?
    fn admits(&self, v: &PyVersion) -> bool {
        match &self.point {
            None => true,
            Some(Point::Version(b)) => {
                if self.inclusive {
                    b <= v
                } else {
                    b < v
                }
            }
            Some(Point::Boundary(base, kind)) => base < v && !Point::is_family(base, *kind, v),
        }
    }
}

impl Upper {
    fn new(point: Point, inclusive: bool) -> Upper {
        Upper {
            point: Some(point),
            inclusive,
        }
    }
    fn cmp(&self, other: &Upper) -> Ordering {
        match (&self.point, &other.point) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(a), Some(b)) => a
                .cmp(b)
                .then_with(|| match (self.inclusive, other.inclusive) {
                    (false, true) => Ordering::Less,
                    (true, false) => Ordering::Greater,
                    _ => Ordering::Equal,
                }),
        }
    }
    /// Is `v` at or below this upper bound?
    fn admits(&self, v: &PyVersion) -> bool {
        match &self.point {
            None => true,
            Some(Point::Version(b)) => {
                if self.inclusive {
                    b >= v
                } else {
                    b > v
                }
            }
            Some(Point::Boundary(base, BoundaryKind::AfterLocals)) => {
                base >= v || base.same_public_family(v)
            }
            // Only reached through range algebra (the complement of `>V`).
            Some(Point::Boundary(base, BoundaryKind::AfterPosts)) => {
                Point::Boundary(base.clone(), BoundaryKind::AfterPosts)
                    .cmp(&Point::Version(v.clone()))
                    == Ordering::Greater
            }
        }
    }
}

fn min_version() -> PyVersion {
    PyVersion::from_parts(0, vec![0], None, None, Some(0))
}

/// Smallest real version strictly above a boundary, if there is one.
fn least_version_above(base: &PyVersion, kind: BoundaryKind) -> Option<PyVersion> {
    match kind {
        BoundaryKind::AfterLocals => {
            let mut v = base.without_local();
            if let Some(d) = base.dev {
                v.dev = Some(d.saturating_add(1));
            } else {
                v.post = Some(base.post.map_or(0, |p| p.saturating_add(1)));
                v.dev = Some(0);
            }
            Some(v)
        }
        BoundaryKind::AfterPosts => base.pre.map(|(k, n)| {
            PyVersion::from_parts(
                base.epoch,
                base.release.clone(),
                Some((k, n.saturating_add(1))),
                None,
                Some(0),
            )
        }),
    }
}

fn range_is_empty(lower: &Lower, upper: &Upper) -> bool {
    let Some(up) = &upper.point else {
        return false;
    };
    let Some(lo) = &lower.point else {
        return !upper.inclusive && matches!(up, Point::Version(v) if *v <= min_version());
    };
    if let Point::Boundary(base, kind) = lo
        && let Some(successor) = least_version_above(base, *kind)
    {
        let succ = Point::Version(successor);
        return match up.cmp(&succ) {
            Ordering::Equal => !upper.inclusive,
            Ordering::Less => true,
            Ordering::Greater => false,
        };
    }
    match lo.cmp(up) {
        Ordering::Equal => !(lower.inclusive && upper.inclusive),
        Ordering::Greater => true,
        Ordering::Less => false,
    }
}

fn intersect_ranges(left: &[Interval], right: &[Interval]) -> Vec<Interval> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        let (ll, lu) = &left[i];
        let (rl, ru) = &right[j];
        let lower = if ll.cmp(rl) == Ordering::Less { rl } else { ll };
        let upper = if ru.cmp(lu) == Ordering::Less { ru } else { lu };
        if !range_is_empty(lower, upper) {
            out.push((lower.clone(), upper.clone()));
        }
        if lu.cmp(ru) == Ordering::Less {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The versions outside `ranges` (sorted, non-overlapping), as sorted intervals.
fn complement(ranges: &[Interval]) -> Vec<Interval> {
    let mut out = Vec::new();
    let mut prev: Lower = neg_inf();
    for (lo, up) in ranges {
        if let Some(p) = &lo.point {
            let gap_upper = Upper::new(p.clone(), !lo.inclusive);
            if !range_is_empty(&prev, &gap_upper) {
                out.push((prev.clone(), gap_upper));
            }
        }
        prev = match &up.point {
            None => return out,
            Some(p) => Lower::new(p.clone(), !up.inclusive),
        };
    }
    if !range_is_empty(&prev, &pos_inf()) {
        out.push((prev, pos_inf()));
    }
    out
}

fn matches_ranges(ranges: &[Interval], v: &PyVersion) -> bool {
    for (lo, up) in ranges {
        if !lo.admits(v) {
            return false;
        }
        if up.admits(v) {
            return true;
        }
    }
    false
}

fn nearest_release_above_prerelease(v: &PyVersion) -> PyVersion {
    if v.pre.is_some() {
        PyVersion::from_parts(v.epoch, v.release.clone(), None, None, None)
    } else {
        PyVersion::from_parts(v.epoch, v.release.clone(), None, v.post, None)
    }
}

fn lowest_release_at_or_above(p: Option<&Point>) -> PyVersion {
    match p {
        None => PyVersion::from_parts(0, vec![0], None, None, None),
        Some(Point::Boundary(inner, _)) => {
            if inner.is_prerelease() {
                nearest_release_above_prerelease(inner)
            } else {
                let mut v = inner.without_local();
                v.post = Some(inner.post.map_or(0, |p| p.saturating_add(1)));
                v
            }
        }
        Some(Point::Version(v)) => {
            if v.is_prerelease() {
                nearest_release_above_prerelease(v)
            } else {
                v.clone()
            }
        }
    }
}

fn ranges_are_prerelease_only(ranges: &[Interval]) -> bool {
    for (lo, up) in ranges {
        let nearest = Point::Version(lowest_release_at_or_above(lo.point.as_ref()));
        let Some(u) = &up.point else {
            return false;
        };
        match nearest.cmp(u) {
            Ordering::Less => return false,
            Ordering::Equal if up.inclusive => return false,
            _ => {}
        }
    }
    true
}

// ---------------------------------------------------------------------------------------
// Specifiers (packaging/specifiers.py).

/// A specifier operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Compatible,
    Equal,
    NotEqual,
    LessEqual,
    GreaterEqual,
    Less,
    Greater,
    Arbitrary,
}

/// One PEP 440 specifier such as `>=1.0` or `==1.2.*`.
#[derive(Debug, Clone)]
pub struct Specifier {
    op: Op,
    /// The version text as written after the operator (for `===` and wildcards).
    version_text: String,
    /// The parsed version (the wildcard's base for `==1.2.*`); `None` only for `===`
    /// text that is not a version.
    version: Option<PyVersion>,
    wildcard: bool,
    /// `prereleases=` given when the specifier was built.
    prereleases: Option<bool>,
}

fn is_ws(c: char) -> bool {
    c.is_whitespace()
}

/// `v?(N!)?N(.N)*` exactly, the base of a wildcard specifier.
fn is_plain_release(s: &str) -> bool {
    let s = s.strip_prefix(['v', 'V']).unwrap_or(s);
    let s = match s.split_once('!') {
        Some((e, rest)) => {
            if e.is_empty() || !e.bytes().all(|c| c.is_ascii_digit()) {
                return false;
            }
            rest
        }
        None => s,
    };
    !s.is_empty()
        && s.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
}

impl Specifier {
    pub fn parse(spec: &str, prereleases: Option<bool>) -> Result<Specifier, String> {
        let s = spec.trim_matches(is_ws);
        let (op, rest) = if let Some(r) = s.strip_prefix("===") {
            (Op::Arbitrary, r)
        } else if let Some(r) = s.strip_prefix("~=") {
            (Op::Compatible, r)
        } else if let Some(r) = s.strip_prefix("==") {
            (Op::Equal, r)
        } else if let Some(r) = s.strip_prefix("!=") {
            (Op::NotEqual, r)
        } else if let Some(r) = s.strip_prefix("<=") {
            (Op::LessEqual, r)
        } else if let Some(r) = s.strip_prefix(">=") {
            (Op::GreaterEqual, r)
        } else if let Some(r) = s.strip_prefix('<') {
            (Op::Less, r)
        } else if let Some(r) = s.strip_prefix('>') {
            (Op::Greater, r)
        } else {
            return Err("it does not start with one of ~= == != <= >= < > ===".into());
        };
        let text = rest.trim_matches(is_ws);
        if op == Op::Arbitrary {
            if text.contains(|c: char| c.is_whitespace() || c == ';' || c == ')') {
                return Err(
                    "an arbitrary (===) version may not hold whitespace, ';' or ')'".into(),
                );
            }
            return Ok(Specifier {
                op,
                version_text: text.to_string(),
                version: PyVersion::parse(text).ok(),
                wildcard: false,
                prereleases,
            });
        }
        if text.is_empty() {
            return Err("the version after the operator is missing".into());
        }
        if let Some(base) = text.strip_suffix(".*") {
            if !matches!(op, Op::Equal | Op::NotEqual) {
                return Err("only == and != accept a .* wildcard".into());
            }
            if !is_plain_release(base) {
                return Err("a .* wildcard may only follow a plain release such as 1.2".into());
            }
            let v = PyVersion::parse(base)?;
            return Ok(Specifier {
                op,
                version_text: text.to_string(),
                version: Some(v),
                wildcard: true,
                prereleases,
            });
        }
        if text.contains(char::is_whitespace) {
            return Err("the version may not hold whitespace".into());
        }
        let v = PyVersion::parse(text)?;
        if v.local.is_some() && !matches!(op, Op::Equal | Op::NotEqual) {
            return Err("only == and != accept a local version label".into());
        }
        if op == Op::Compatible && v.release.len() < 2 {
            // Parsing keeps every written release part, so this is the written count.
            return Err("~= needs a release with at least two parts, such as ~=1.0".into());
        }
        Ok(Specifier {
            op,
            version_text: text.to_string(),
            version: Some(v),
            wildcard: false,
            prereleases,
        })
    }

    pub fn op(&self) -> Op {
        self.op
    }

    /// The specifier's own pre-release preference (packaging's `Specifier.prereleases`).
    fn auto_prereleases(&self) -> Option<bool> {
        if self.prereleases.is_some() {
            return self.prereleases;
        }
        if self.op == Op::NotEqual {
            return Some(false);
        }
        if self.op == Op::Equal && self.wildcard {
            return Some(false);
        }
        // `===` with text that is not a version: unknown.
        self.version.as_ref().map(PyVersion::is_prerelease)
    }

    fn ranges(&self) -> Vec<Interval> {
        let Some(v) = &self.version else {
            return vec![(neg_inf(), pos_inf())];
        };
        if self.op == Op::Arbitrary {
            return vec![(neg_inf(), pos_inf())];
        }
        if self.wildcard {
            let lower = PyVersion::from_parts(v.epoch, v.release.clone(), None, None, Some(0));
            let upper = next_prefix_dev0(v.epoch, &v.release);
            return if self.op == Op::Equal {
                vec![(
                    Lower::new(Point::Version(lower), true),
                    Upper::new(Point::Version(upper), false),
                )]
            } else {
                vec![
                    (neg_inf(), Upper::new(Point::Version(lower), false)),
                    (Lower::new(Point::Version(upper), true), pos_inf()),
                ]
            };
        }
        let has_local = self.version_text.contains('+');
        match self.op {
            Op::GreaterEqual => vec![(Lower::new(Point::Version(v.clone()), true), pos_inf())],
            Op::LessEqual => vec![(
                neg_inf(),
                Upper::new(Point::Boundary(v.clone(), BoundaryKind::AfterLocals), true),
            )],
            Op::Greater => {
                if let Some(d) = v.dev {
                    let mut lb = v.without_local();
                    lb.dev = Some(d.saturating_add(1));
                    vec![(Lower::new(Point::Version(lb), true), pos_inf())]
                } else if let Some(p) = v.post {
                    let mut lb = v.without_local();
                    lb.post = Some(p.saturating_add(1));
                    lb.dev = Some(0);
                    vec![(Lower::new(Point::Version(lb), true), pos_inf())]
                } else {
                    vec![(
                        Lower::new(Point::Boundary(v.clone(), BoundaryKind::AfterPosts), false),
                        pos_inf(),
                    )]
                }
            }
            Op::Less => {
                // <V excludes V's own pre-releases unless V is one.
                let bound = if v.is_prerelease() {
                    v.clone()
                } else {
                    let mut b = v.without_local();
                    b.dev = Some(0);
                    b
                };
                if bound <= min_version() {
                    return vec![];
                }
                vec![(neg_inf(), Upper::new(Point::Version(bound), false))]
            }
            Op::Equal | Op::NotEqual => {
                let upper = if has_local {
                    Point::Version(v.clone())
                } else {
                    Point::Boundary(v.clone(), BoundaryKind::AfterLocals)
                };
                if self.op == Op::Equal {
                    vec![(
                        Lower::new(Point::Version(v.clone()), true),
                        Upper::new(upper, true),
                    )]
                } else {
                    vec![
                        (neg_inf(), Upper::new(Point::Version(v.clone()), false)),
                        (Lower::new(upper, false), pos_inf()),
                    ]
                }
            }
            Op::Compatible => {
                let prefix = &v.release[..v.release.len().saturating_sub(1)];
                vec![(
                    Lower::new(Point::Version(v.clone()), true),
                    Upper::new(Point::Version(next_prefix_dev0(v.epoch, prefix)), false),
                )]
            }
            Op::Arbitrary => vec![(neg_inf(), pos_inf())],
        }
    }

    /// packaging's `_fast_match`: `None` when the interval path must decide.
    fn fast_match(&self, v: &PyVersion) -> Option<bool> {
        if self.wildcard || v.local.is_some() {
            return None;
        }
        let sv = self.version.as_ref()?;
        match self.op {
            Op::GreaterEqual => Some(v >= sv),
            Op::LessEqual => Some(v <= sv),
            Op::Equal => Some(v == sv),
            Op::NotEqual => Some(v != sv),
            Op::Less | Op::Greater => {
                if v.epoch != sv.epoch || v.trimmed_release() != sv.trimmed_release() {
                    Some(if self.op == Op::Less { v < sv } else { v > sv })
                } else {
                    None
                }
            }
            Op::Compatible | Op::Arbitrary => None,
        }
    }

    /// `Specifier.contains(item, prereleases)`.
    pub fn contains(&self, item: &str, prereleases: Option<bool>) -> bool {
        if self.op == Op::Arbitrary {
            return !self.filter(&[item], prereleases).is_empty();
        }
        let Ok(parsed) = PyVersion::parse(item) else {
            return false;
        };
        self.contains_parsed(&parsed, prereleases)
    }

    pub fn contains_parsed(&self, parsed: &PyVersion, prereleases: Option<bool>) -> bool {
        let pre =
            prereleases.or_else(|| resolve_prereleases(self.prereleases, self.auto_prereleases()));
        if pre == Some(false) && parsed.is_prerelease() {
            return false;
        }
        if let Some(m) = self.fast_match(parsed) {
            return m;
        }
        matches_ranges(&self.ranges(), parsed)
    }

    /// `Specifier.filter(items, prereleases)`.
    pub fn filter<'a>(&self, items: &[&'a str], prereleases: Option<bool>) -> Vec<&'a str> {
        let pre =
            prereleases.or_else(|| resolve_prereleases(self.prereleases, self.auto_prereleases()));
        if self.op == Op::Arbitrary {
            let want = self.version_text.to_lowercase();
            let matches: Vec<&str> = items
                .iter()
                .copied()
                .filter(|i| i.to_lowercase() == want)
                .collect();
            return apply_prereleases_filter(&matches, pre);
        }
        filter_by_ranges(&self.ranges(), items, pre)
    }
}

fn next_prefix_dev0(epoch: u64, release: &[u64]) -> PyVersion {
    let mut r = release.to_vec();
    if let Some(last) = r.last_mut() {
        *last = last.saturating_add(1);
    }
    PyVersion::from_parts(epoch, r, None, None, Some(0))
}

fn resolve_prereleases(configured: Option<bool>, autodetected: Option<bool>) -> Option<bool> {
    if configured.is_some() {
        return configured;
    }
    if autodetected == Some(true) {
        return Some(true);
    }
    None
}

fn filter_by_ranges<'a>(
    ranges: &[Interval],
    items: &[&'a str],
    prereleases: Option<bool>,
) -> Vec<&'a str> {
    let mut out = Vec::new();
    match prereleases {
        None => {
            // PEP 440 default: pre-releases only when no final release matches.
            let mut buffer = Vec::new();
            let mut found_final = false;
            for item in items {
                let Ok(parsed) = PyVersion::parse(item) else {
                    continue;
                };
                if !matches_ranges(ranges, &parsed) {
                    continue;
                }
                if !parsed.is_prerelease() {
                    found_final = true;
                    out.push(*item);
                } else if !found_final {
                    buffer.push(*item);
                }
            }
            if !found_final {
                out.extend(buffer);
            }
        }
        Some(allow) => {
            for item in items {
                let Ok(parsed) = PyVersion::parse(item) else {
                    continue;
                };
                if !allow && parsed.is_prerelease() {
                    continue;
                }
                if matches_ranges(ranges, &parsed) {
                    out.push(*item);
                }
            }
        }
    }
    out
}

fn apply_prereleases_filter<'a>(matches: &[&'a str], prereleases: Option<bool>) -> Vec<&'a str> {
    match prereleases {
        None => pep440_filter_prereleases(matches),
        Some(true) => matches.to_vec(),
        Some(false) => matches
            .iter()
            .copied()
            .filter(|m| PyVersion::parse(m).map_or(true, |v| !v.is_prerelease()))
            .collect(),
    }
}

fn pep440_filter_prereleases<'a>(items: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut all_nonfinal = Vec::new();
    let mut arbitrary = Vec::new();
    let mut found_final = false;
    for item in items {
        match PyVersion::parse(item) {
            Err(_) => {
                if found_final {
                    out.push(*item);
                } else {
                    arbitrary.push(*item);
                    all_nonfinal.push(*item);
                }
            }
            Ok(v) if !v.is_prerelease() => {
                if !found_final {
                    out.append(&mut arbitrary);
                    found_final = true;
                }
                out.push(*item);
            }
            Ok(_) => {
                if !found_final {
                    all_nonfinal.push(*item);
                }
            }
        }
    }
    if !found_final {
        return all_nonfinal;
    }
    out
}

/// A comma-separated set of specifiers (`>=1.0,!=1.3.*,<2`): all must hold.
#[derive(Debug, Clone)]
pub struct SpecifierSet {
    specs: Vec<Specifier>,
    has_arbitrary: bool,
    prereleases: Option<bool>,
}

impl SpecifierSet {
    pub fn parse(text: &str, prereleases: Option<bool>) -> Result<SpecifierSet, String> {
        let mut specs = Vec::new();
        for part in text.split(',') {
            let part = part.trim_matches(is_ws);
            if part.is_empty() {
                continue;
            }
            specs.push(Specifier::parse(part, None).map_err(|e| format!("{part:?}: {e}"))?);
        }
        Ok(SpecifierSet {
            specs,
            has_arbitrary: text.contains("==="),
            prereleases,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    fn auto_prereleases(&self) -> Option<bool> {
        if self.prereleases.is_some() {
            return self.prereleases;
        }
        if self.specs.is_empty() {
            return None;
        }
        if self
            .specs
            .iter()
            .any(|s| s.auto_prereleases() == Some(true))
        {
            return Some(true);
        }
        None
    }

    fn ranges(&self) -> Vec<Interval> {
        let mut it = self.specs.iter();
        let Some(first) = it.next() else {
            return vec![(neg_inf(), pos_inf())];
        };
        let mut acc = first.ranges();
        for s in it {
            if acc.is_empty() {
                break;
            }
            acc = intersect_ranges(&acc, &s.ranges());
        }
        acc
    }

    /// `SpecifierSet.contains(item, prereleases, installed)`.
    pub fn contains(&self, item: &str, prereleases: Option<bool>, installed: Option<bool>) -> bool {
        let version = PyVersion::parse(item).ok();
        let mut prereleases = prereleases;
        if let Some(v) = &version
            && installed == Some(true)
            && v.is_prerelease()
        {
            prereleases = Some(true);
        }
        if let Some(v) = &version
            && !self.has_arbitrary
            && v.local.is_none()
            && !self.specs.is_empty()
        {
            if v.is_prerelease()
                && (prereleases == Some(false)
                    || (prereleases.is_none() && self.prereleases == Some(false)))
            {
                return false;
            }
            let mut all_fast = true;
            for spec in &self.specs {
                match spec.fast_match(v) {
                    None => {
                        all_fast = false;
                        break;
                    }
                    Some(false) => return false,
                    Some(true) => {}
                }
            }
            if all_fast {
                return true;
            }
            return matches_ranges(&self.ranges(), v);
        }
        !self.filter(&[item], prereleases).is_empty()
    }

    /// Whether a parsed version satisfies the set, with PEP 440's default policy for a
    /// single installed version (a pre-release matches when the set allows it).
    pub fn contains_version(&self, v: &PyVersion) -> bool {
        if self.specs.is_empty() {
            return true;
        }
        if !self.has_arbitrary {
            if v.is_prerelease() && self.prereleases == Some(false) {
                return false;
            }
            return matches_ranges(&self.ranges(), v);
        }
        let text = v.to_string();
        self.contains(&text, None, None)
    }

    /// `SpecifierSet.filter(items, prereleases)`.
    pub fn filter<'a>(&self, items: &[&'a str], prereleases: Option<bool>) -> Vec<&'a str> {
        let mut pre = prereleases;
        if pre.is_none() && self.auto_prereleases().is_some() {
            pre = self.auto_prereleases();
        }
        if self.specs.is_empty() {
            return apply_prereleases_filter(items, pre);
        }
        if self.has_arbitrary {
            let matches: Vec<&str> = items
                .iter()
                .copied()
                .filter(|i| self.specs.iter().all(|s| s.contains(i, Some(true))))
                .collect();
            return apply_prereleases_filter(&matches, pre);
        }
        filter_by_ranges(&self.ranges(), items, pre)
    }

    /// `SpecifierSet.is_unsatisfiable()`.
    pub fn is_unsatisfiable(&self) -> bool {
        if self.specs.is_empty() {
            return false;
        }
        let ranges = self.ranges();
        if ranges.is_empty() || self.arbitrary_unsatisfiable() {
            return true;
        }
        self.auto_prereleases() == Some(false) && ranges_are_prerelease_only(&ranges)
    }

    fn arbitrary_unsatisfiable(&self) -> bool {
        let arbitrary: Vec<&Specifier> = self
            .specs
            .iter()
            .filter(|s| s.op == Op::Arbitrary)
            .collect();
        let Some(first) = arbitrary.first() else {
            return false;
        };
        let want = first.version_text.to_lowercase();
        if arbitrary
            .iter()
            .any(|s| s.version_text.to_lowercase() != want)
        {
            return true;
        }
        let candidate = PyVersion::parse(&first.version_text).ok();
        if self.auto_prereleases() == Some(false)
            && candidate.as_ref().is_some_and(PyVersion::is_prerelease)
        {
            return true;
        }
        let standard: Vec<&Specifier> = self
            .specs
            .iter()
            .filter(|s| s.op != Op::Arbitrary)
            .collect();
        if standard.is_empty() {
            return false;
        }
        let Some(candidate) = candidate else {
            return true;
        };
        !standard.iter().all(|s| s.contains_parsed(&candidate, None))
    }

    /// Every version matching `self` also matches `other`. `None` when either set uses
    /// `===` (packaging refuses set relations there).
    pub fn is_subset(&self, other: &SpecifierSet) -> Option<bool> {
        if self.has_arbitrary || other.has_arbitrary {
            return None;
        }
        Some(intersect_ranges(&self.ranges(), &complement(&other.ranges())).is_empty())
    }

    pub fn is_superset(&self, other: &SpecifierSet) -> Option<bool> {
        other.is_subset(self)
    }

    pub fn is_disjoint(&self, other: &SpecifierSet) -> Option<bool> {
        if self.has_arbitrary || other.has_arbitrary {
            return None;
        }
        Some(intersect_ranges(&self.ranges(), &other.ranges()).is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> PyVersion {
        PyVersion::parse(s).expect(s)
    }

    #[test]
    fn normalises_alternative_spellings() {
        assert_eq!(v("1.0-1").to_string(), "1.0.post1");
        assert_eq!(v("v1.0RC1").to_string(), "1.0rc1");
        assert_eq!(v(" 1!2.0.0-preview.3_dev ").to_string(), "1!2.0.0rc3.dev0");
        assert_eq!(v("1.0+Ubuntu-01").to_string(), "1.0+ubuntu.1");
        assert_eq!(v("1.0a.").to_string(), "1.0a0");
    }

    #[test]
    fn rejects_what_packaging_rejects() {
        for bad in [
            "",
            "1..2",
            "french toast",
            "1.0+",
            "1.0+a..b",
            "1.0-",
            "1.0 a1",
            "99999999999999999999999",
        ] {
            assert!(PyVersion::parse(bad).is_err(), "{bad:?} should be invalid");
        }
    }

    #[test]
    fn orders_like_pep440() {
        let order = [
            "1.0.dev456",
            "1.0a1",
            "1.0a2.dev456",
            "1.0a12",
            "1.0b1.dev456",
            "1.0b2",
            "1.0rc1",
            "1.0",
            "1.0+abc.5",
            "1.0+5",
            "1.0.post456.dev34",
            "1.0.post456",
            "1.1.dev1",
            "1!0.1",
        ];
        for w in order.windows(2) {
            assert!(v(w[0]) < v(w[1]), "{} < {}", w[0], w[1]);
        }
        assert_eq!(v("1.0"), v("1.0.0"));
        assert!(
            v("1.0+abc") < v("1.0+1"),
            "numeric local segments sort above strings"
        );
    }

    #[test]
    fn greater_than_excludes_post_releases_and_less_than_excludes_own_prereleases() {
        let gt = SpecifierSet::parse(">1.0", None).expect("spec");
        assert!(!gt.contains("1.0.post1", None, None));
        assert!(gt.contains("1.1", None, None));
        let lt = SpecifierSet::parse("<2.0", None).expect("spec");
        assert!(!lt.contains("2.0rc1", None, None));
        assert!(lt.contains("1.9rc1", None, None));
    }

    #[test]
    fn unsatisfiable_sets_are_detected() {
        assert!(
            SpecifierSet::parse(">1.0,<1.0.post0.dev0", None)
                .expect("spec")
                .is_unsatisfiable()
        );
        assert!(
            !SpecifierSet::parse(">=1.0,<2.0", None)
                .expect("spec")
                .is_unsatisfiable()
        );
    }
}
