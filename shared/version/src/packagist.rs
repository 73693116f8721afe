//! Packagist: Composer's version normalisation, constraints and ordering.
//!
//! A port of composer/semver (`VersionParser`, `Constraint`, `MultiConstraint`, `Semver`,
//! `Comparator`) and of PHP's `version_compare`, which Composer delegates ordering to. No
//! Rust crate implements Composer's rules. Composer's PCRE patterns are translated to the
//! `regex` crate: possessive quantifiers become greedy ones (equivalent here, as nothing
//! after them can start with what they would give back), and the one pattern that needs
//! look-around (splitting `a, b` / `a b` into AND-ed constraints) is written out by hand.
//!
//! Order: a version is normalised first (`v1.0` = `1.0.0` = `1.0.0.0`), then compared with
//! `version_compare`, as `Semver::sort` does. Branches (`dev-foo`) sort below releases and
//! are equal only to themselves.

use std::cmp::Ordering;
use std::fmt;
use std::sync::LazyLock;

use regex::{Captures, Regex};

const MODIFIER: &str =
    r"[._-]?(?:(stable|beta|b|RC|alpha|a|patch|pl|p)((?:[.-]?[0-9]+)*)?)?([.-]?dev)?";
/// PCRE's `\s` without `/u`: ASCII whitespace.
const WS: &str = r"[ \t\n\x0B\x0C\r]";

struct Res {
    alias: Regex,
    at_stability: Regex,
    build: Regex,
    classical: Regex,
    date: Regex,
    dev_suffix: Regex,
    branch: Regex,
    stability: Regex,
    constraint_at: Regex,
    hash_ref: Regex,
    x_any: Regex,
    tilde: Regex,
    caret: Regex,
    x_range: Regex,
    hyphen: Regex,
    basic: Regex,
    dev_chars: Regex,
    has_modifier: Regex,
    or_split: Regex,
}

fn compile(src: &str) -> Regex {
    // The patterns are constants; a failure here is a bug caught by every test.
    #[allow(clippy::expect_used)]
    Regex::new(&src.replace(r"\s", WS)).expect("composer pattern compiles")
}

static RE: LazyLock<Res> = LazyLock::new(|| {
    let version = format!(
        r"v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:\.([0-9]+))?(?:{MODIFIER}|\.([xX*][.-]?dev))(?:\+[^\s]+)?"
    );
    Res {
        alias: compile(r"^([^,\s]+) +as +([^,\s]+)$"),
        at_stability: compile(r"(?i)@(?:stable|RC|beta|alpha|dev)$"),
        build: compile(r"^([^,\s+]+)\+[^\s]+$"),
        classical: compile(&format!(
            r"(?i)^v?([0-9]{{1,5}})(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?{MODIFIER}$"
        )),
        date: compile(&format!(
            r"(?i)^v?([0-9]{{4}}(?:[.:-]?[0-9]{{2}}){{1,6}}(?:[.:-]?[0-9]{{1,3}}){{0,2}}){MODIFIER}$"
        )),
        dev_suffix: compile(r"(?i)^(.*?)[.-]?dev$"),
        branch: compile(
            r"(?i)^v?([0-9]+)(\.(?:[0-9]+|[xX*]))?(\.(?:[0-9]+|[xX*]))?(\.(?:[0-9]+|[xX*]))?$",
        ),
        stability: compile(&format!(r"(?i){MODIFIER}(?:\+.*)?$")),
        constraint_at: compile(r"(?i)^([^,\s]*?)@(stable|RC|beta|alpha|dev)$"),
        hash_ref: compile(r"(?i)^(dev-[^,\s@]+?|[^,\s@]+?\.x-dev)#.+$"),
        x_any: compile(r"(?i)^(v)?[xX*](\.[xX*])*$"),
        tilde: compile(&format!(r"(?i)^~>?{version}$")),
        caret: compile(&format!(r"(?i)^\^{version}($)")),
        x_range: compile(r"^v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:\.[xX*])+$"),
        hyphen: compile(&format!(
            r"(?i)^(?P<from>{version}) +- +(?P<to>{version})($)"
        )),
        basic: compile(r"^(<>|!=|>=?|<=?|==?)?\s*(.*)"),
        dev_chars: compile(r"^[0-9a-zA-Z./-]+$"),
        has_modifier: compile(&format!("-{MODIFIER}$")),
        or_split: compile(r"\s*\|\|?\s*"),
    }
});

fn php_trim(s: &str) -> &str {
    s.trim_matches([' ', '\t', '\n', '\r', '\0', '\x0B'])
}

/// A capture group that took part in the match and is not empty (PHP's `isset && !== ''`).
fn set<'t>(c: &Captures<'t>, i: usize) -> Option<&'t str> {
    c.get(i).map(|m| m.as_str()).filter(|s| !s.is_empty())
}

/// PHP's `empty()` on a capture: unset, `""` and `"0"` are empty.
fn php_empty(c: &Captures<'_>, i: usize) -> bool {
    matches!(c.get(i).map(|m| m.as_str()), None | Some("" | "0"))
}

fn expand_stability(s: &str) -> String {
    match s.to_lowercase().as_str() {
        "a" => "alpha".into(),
        "b" => "beta".into(),
        "p" | "pl" => "patch".into(),
        "rc" => "RC".into(),
        other => other.into(),
    }
}

/// `1.2.3` / `v1.2`: up to four dot-separated numbers, the first of at most five digits.
/// The commonest spelling by far, and exactly what the classical pattern accepts without
/// a modifier, so it is normalised without the regular expressions.
fn plain_numbers(s: &str) -> Option<&str> {
    let body = s.strip_prefix(['v', 'V']).unwrap_or(s);
    let mut count = 0;
    for (i, p) in body.split('.').enumerate() {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || (i == 0 && p.len() > 5) {
            return None;
        }
        count += 1;
    }
    (count <= 4).then_some(body)
}

/// `VersionParser::normalize`.
pub fn normalize(input: &str) -> Result<String, String> {
    if let Some(body) = plain_numbers(php_trim(input)) {
        // Room for the padding and a `-dev` a bound may get.
        let mut out = String::with_capacity(body.len() + 10);
        out.push_str(body);
        for _ in body.split('.').count()..4 {
            out.push_str(".0");
        }
        return Ok(out);
    }
    let mut version = php_trim(input).to_string();
    if let Some(c) = RE.alias.captures(&version) {
        version = c[1].to_string();
    }
    if let Some(m) = RE.at_stability.find(&version) {
        version.truncate(m.start());
    }
    if matches!(version.as_str(), "master" | "trunk" | "default") {
        version = format!("dev-{version}");
    }
    if version.len() >= 4
        && version.is_char_boundary(4)
        && version[..4].eq_ignore_ascii_case("dev-")
    {
        return Ok(format!("dev-{}", &version[4..]));
    }
    if let Some(c) = RE.build.captures(&version) {
        version = c[1].to_string();
    }
    let (caps, index, mut out) = if let Some(c) = RE.classical.captures(&version) {
        let v = format!(
            "{}{}{}{}",
            &c[1],
            set(&c, 2).unwrap_or(".0"),
            set(&c, 3).unwrap_or(".0"),
            set(&c, 4).unwrap_or(".0")
        );
        (Some(c), 5, v)
    } else if let Some(c) = RE.date.captures(&version) {
        let v: String = c[1]
            .chars()
            .map(|ch| if ch.is_ascii_digit() { ch } else { '.' })
            .collect();
        (Some(c), 2, v)
    } else {
        (None, 0, String::new())
    };
    if let Some(c) = caps {
        if let Some(stability) = set(&c, index) {
            if stability == "stable" {
                return Ok(out);
            }
            out.push('-');
            out.push_str(&expand_stability(stability));
            if let Some(n) = set(&c, index + 1) {
                out.push_str(n.trim_start_matches(['.', '-']));
            }
        }
        if !php_empty(&c, index + 2) {
            out.push_str("-dev");
        }
        return Ok(out);
    }
    if let Some(c) = RE.dev_suffix.captures(&version) {
        let n = normalize_branch(&c[1]);
        if !n.contains("dev-") {
            return Ok(n);
        }
    }
    Err(format!("Composer cannot normalise {:?}", php_trim(input)))
}

/// `VersionParser::normalizeBranch`: `1.x` → `1.9999999.9999999.9999999-dev`.
pub fn normalize_branch(name: &str) -> String {
    let name = php_trim(name);
    if let Some(c) = RE.branch.captures(name) {
        let mut v = String::new();
        for i in 1..5 {
            match c.get(i) {
                Some(m) => v.push_str(&m.as_str().replace(['*', 'X'], "x")),
                None => v.push_str(".x"),
            }
        }
        return format!("{}-dev", v.replace('x', "9999999"));
    }
    format!("dev-{name}")
}

/// `VersionParser::normalizeDefaultBranch`.
fn normalize_default_branch(name: &str) -> &str {
    match name {
        "dev-master" | "dev-default" | "dev-trunk" => "9999999-dev",
        other => other,
    }
}

/// `VersionParser::parseStability`: `stable`, `RC`, `beta`, `alpha` or `dev`.
pub fn parse_stability(version: &str) -> &'static str {
    let version = match version.find('#') {
        Some(i) if i + 1 < version.len() => &version[..i],
        _ => version,
    };
    if version.starts_with("dev-") || version.ends_with("-dev") {
        return "dev";
    }
    let lower = version.to_lowercase();
    let Some(c) = RE.stability.captures(&lower) else {
        return "stable";
    };
    if !php_empty(&c, 3) {
        return "dev";
    }
    match c.get(1).map(|m| m.as_str()) {
        Some("beta" | "b") => "beta",
        Some("alpha" | "a") => "alpha",
        Some("rc") => "RC",
        _ => "stable",
    }
}

// ---------------------------------------------------------------------------------------
// PHP's version_compare (ext/standard/versioning.c).

fn canonicalize(v: &[u8]) -> Vec<u8> {
    let isdig = |c: u8| c.is_ascii_digit();
    let isndig = |c: u8| !c.is_ascii_digit() && c != b'.';
    let mut q: Vec<u8> = Vec::with_capacity(v.len() * 2);
    let Some((&first, rest)) = v.split_first() else {
        return q;
    };
    q.push(first);
    let mut lp = first;
    for &p in rest {
        let last = q.last().copied().unwrap_or(0);
        if matches!(p, b'-' | b'_' | b'+') {
            if last != b'.' {
                q.push(b'.');
            }
        } else if (isndig(lp) && isdig(p)) || (isdig(lp) && isndig(p)) {
            if last != b'.' {
                q.push(b'.');
            }
            q.push(p);
        } else if !p.is_ascii_alphanumeric() {
            if last != b'.' {
                q.push(b'.');
            }
        } else {
            q.push(p);
        }
        lp = p;
    }
    q
}

fn special_form(s: &[u8]) -> i32 {
    const FORMS: [(&[u8], i32); 10] = [
        (b"dev", 0),
        (b"alpha", 1),
        (b"a", 1),
        (b"beta", 2),
        (b"b", 2),
        (b"RC", 3),
        (b"rc", 3),
        (b"#", 4),
        (b"pl", 5),
        (b"p", 5),
    ];
    FORMS
        .iter()
        .find(|(name, _)| s.starts_with(name))
        .map_or(-1, |(_, order)| *order)
}

fn compare_special(a: &[u8], b: &[u8]) -> Ordering {
    special_form(a).cmp(&special_form(b))
}

/// C's `strtol` on a run of digits, saturating like it does.
fn strtol(s: &[u8]) -> i64 {
    let mut n: i64 = 0;
    for &d in s.iter().take_while(|c| c.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(i64::from(d - b'0'));
    }
    n
}

/// PHP's `version_compare($a, $b)`.
pub fn php_version_compare(a: &str, b: &str) -> Ordering {
    compare_bytes(a.as_bytes(), b.as_bytes())
}

/// PHP's form of a version before comparison: canonicalised unless it starts with `#`.
fn php_canonical(v: &[u8]) -> Vec<u8> {
    if v.first() == Some(&b'#') {
        v.to_vec()
    } else {
        canonicalize(v)
    }
}

fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    if a.is_empty() || b.is_empty() {
        return (!a.is_empty()).cmp(&!b.is_empty());
    }
    compare_canonical(&php_canonical(a), &php_canonical(b))
}

/// The element-by-element loop of `php_version_compare`, on canonical forms.
fn compare_canonical(v1: &[u8], v2: &[u8]) -> Ordering {
    if v1.is_empty() || v2.is_empty() {
        return (!v1.is_empty()).cmp(&!v2.is_empty());
    }
    let mut p1: &[u8] = v1;
    let mut p2: &[u8] = v2;
    let mut more1 = true;
    let mut more2 = true;
    let mut compare = Ordering::Equal;
    while !p1.is_empty() && !p2.is_empty() && more1 && more2 {
        let (e1, r1) = match p1.iter().position(|&c| c == b'.') {
            Some(i) => (&p1[..i], Some(&p1[i + 1..])),
            None => (p1, None),
        };
        let (e2, r2) = match p2.iter().position(|&c| c == b'.') {
            Some(i) => (&p2[..i], Some(&p2[i + 1..])),
            None => (p2, None),
        };
        let d1 = e1.first().is_some_and(u8::is_ascii_digit);
        let d2 = e2.first().is_some_and(u8::is_ascii_digit);
        compare = match (d1, d2) {
            (true, true) => strtol(e1).cmp(&strtol(e2)),
            (false, false) => compare_special(e1, e2),
            (true, false) => compare_special(b"#N#", e2),
            (false, true) => compare_special(e1, b"#N#"),
        };
        more1 = r1.is_some();
        more2 = r2.is_some();
        if compare != Ordering::Equal {
            break;
        }
        if let Some(r) = r1 {
            p1 = r;
        }
        if let Some(r) = r2 {
            p2 = r;
        }
    }
    if compare == Ordering::Equal {
        if more1 {
            compare = if p1.first().is_some_and(u8::is_ascii_digit) {
                Ordering::Greater
            } else {
                compare_bytes(p1, b"#N#")
            };
        } else if more2 {
            compare = if p2.first().is_some_and(u8::is_ascii_digit) {
                Ordering::Less
            } else {
                compare_bytes(b"#N#", p2)
            };
        }
    }
    compare
}

// ---------------------------------------------------------------------------------------
// Constraints.

/// A constraint operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
    Ne,
}

impl Op {
    pub fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "=" | "==" => Op::Eq,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "<>" | "!=" => Op::Ne,
            _ => return None,
        })
    }
    fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Ne => "!=",
        }
    }
    /// The operator with its `=` removed (`str_replace('=', '', op)`).
    fn without_equal(self) -> &'static str {
        match self {
            Op::Eq => "",
            Op::Ne => "!",
            Op::Lt | Op::Le => "<",
            Op::Gt | Op::Ge => ">",
        }
    }
}

fn op_holds(o: Ordering, op: Op) -> bool {
    match op {
        Op::Eq => o == Ordering::Equal,
        Op::Ne => o != Ordering::Equal,
        Op::Lt => o == Ordering::Less,
        Op::Le => o != Ordering::Greater,
        Op::Gt => o == Ordering::Greater,
        Op::Ge => o != Ordering::Less,
    }
}

/// One `op version` constraint on a normalised version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    pub op: Op,
    pub version: String,
}

impl Constraint {
    pub fn new(op: Op, version: impl Into<String>) -> Constraint {
        Constraint {
            op,
            version: version.into(),
        }
    }

    /// `Constraint::versionCompare`.
    fn version_compare(a: &str, b: &str, op: Op, compare_branches: bool) -> bool {
        let a_branch = a.starts_with("dev-");
        let b_branch = b.starts_with("dev-");
        if op == Op::Ne && (a_branch || b_branch) {
            return a != b;
        }
        if a_branch && b_branch {
            return op == Op::Eq && a == b;
        }
        if !compare_branches && (a_branch || b_branch) {
            return false;
        }
        op_holds(php_version_compare(a, b), op)
    }

    /// `Constraint::matchSpecific`: do `self` and `provider` have a version in common?
    pub fn match_specific(&self, provider: &Constraint, compare_branches: bool) -> bool {
        let no_eq = self.op.without_equal();
        let provider_no_eq = provider.op.without_equal();
        let is_eq = self.op == Op::Eq;
        let is_ne = self.op == Op::Ne;
        let p_is_eq = provider.op == Op::Eq;
        let p_is_ne = provider.op == Op::Ne;
        if is_ne || p_is_ne {
            if is_ne && !p_is_ne && !p_is_eq && provider.version.starts_with("dev-") {
                return false;
            }
            if p_is_ne && !is_ne && !is_eq && self.version.starts_with("dev-") {
                return false;
            }
            if !is_eq && !p_is_eq {
                return true;
            }
            return Self::version_compare(
                &provider.version,
                &self.version,
                Op::Ne,
                compare_branches,
            );
        }
        if self.op != Op::Eq && no_eq == provider_no_eq {
            return !(self.version.starts_with("dev-") || provider.version.starts_with("dev-"));
        }
        let (v1, v2, op) = if is_eq {
            (&self.version, &provider.version, provider.op)
        } else {
            (&provider.version, &self.version, self.op)
        };
        if Self::version_compare(v1, v2, op, compare_branches) {
            // `>= 1.0` against `< 1.0`: 1.0 >= 1.0 but 1.0 is outside the provided interval.
            let provider_strict = matches!(provider.op, Op::Lt | Op::Gt);
            let self_has_equal = matches!(self.op, Op::Eq | Op::Le | Op::Ge | Op::Ne);
            return !(provider_strict
                && self_has_equal
                && php_version_compare(&provider.version, &self.version) == Ordering::Equal);
        }
        false
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.op.as_str(), self.version)
    }
}

/// A parsed Composer constraint: one comparison, all of several (AND), any of several
/// (OR), or anything (`*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConstraintSet {
    One(Constraint),
    All(Vec<ConstraintSet>),
    Any(Vec<ConstraintSet>),
    Everything,
}

impl ConstraintSet {
    /// `ConstraintInterface::matches`.
    pub fn matches(&self, provider: &ConstraintSet) -> bool {
        match self {
            ConstraintSet::Everything => true,
            ConstraintSet::One(c) => match provider {
                ConstraintSet::One(p) => c.match_specific(p, false),
                other => other.matches(self),
            },
            ConstraintSet::Any(items) => items.iter().any(|c| provider.matches(c)),
            ConstraintSet::All(items) => {
                if let ConstraintSet::Any(_) = provider {
                    return provider.matches(self);
                }
                items.iter().all(|c| provider.matches(c))
            }
        }
    }

    /// `Semver::satisfies` for an already normalised version.
    pub fn matches_version(&self, normalized: &str) -> bool {
        self.matches(&ConstraintSet::One(Constraint::new(Op::Eq, normalized)))
    }

    /// `MultiConstraint::create`.
    fn create(mut items: Vec<ConstraintSet>, conjunctive: bool) -> ConstraintSet {
        if items.is_empty() {
            return ConstraintSet::Everything;
        }
        if items.len() == 1 {
            return items.swap_remove(0);
        }
        if !conjunctive {
            // Merge `[>= a < b] || [>= b < c]` into `[>= a < c]`.
            let mut merged = Vec::new();
            let mut optimized = false;
            let mut iter = items.into_iter();
            let Some(mut left) = iter.next() else {
                return ConstraintSet::Everything;
            };
            for right in iter {
                let joined = match (&left, &right) {
                    (ConstraintSet::All(l), ConstraintSet::All(r))
                        if l.len() == 2 && r.len() == 2 =>
                    {
                        let (l0, l1, r0, r1) = (
                            l[0].to_string(),
                            l[1].to_string(),
                            r[0].to_string(),
                            r[1].to_string(),
                        );
                        if l0.starts_with(">=")
                            && l1.starts_with('<')
                            && r0.starts_with(">=")
                            && r1.starts_with('<')
                            && l1.get(2..) == r0.get(3..)
                        {
                            Some(ConstraintSet::All(vec![l[0].clone(), r[1].clone()]))
                        } else {
                            None
                        }
                    }
                    _ => None,
                };
                match joined {
                    Some(j) => {
                        optimized = true;
                        left = j;
                    }
                    None => {
                        merged.push(left);
                        left = right;
                    }
                }
            }
            merged.push(left);
            if optimized && merged.len() == 1 {
                return merged.swap_remove(0);
            }
            return ConstraintSet::Any(merged);
        }
        ConstraintSet::All(items)
    }
}

impl fmt::Display for ConstraintSet {
    /// Composer's `__toString` (`[a b]` for AND, `[a || b]` for OR, `*`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstraintSet::Everything => f.write_str("*"),
            ConstraintSet::One(c) => write!(f, "{c}"),
            ConstraintSet::All(items) | ConstraintSet::Any(items) => {
                let sep = if matches!(self, ConstraintSet::All(_)) {
                    " "
                } else {
                    " || "
                };
                f.write_str("[")?;
                for (i, c) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(sep)?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// Splits an OR-branch into AND-ed parts on `,` or ` `, as Composer's
/// `(?<!^|as|[=>< ,]) *(?<!-)[, ](?!-) *(?!,|as|$)` does (written out: the regex crate
/// has no look-around).
fn and_split(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let n = b.len();
    let mut parts = Vec::new();
    let mut last = 0;
    let mut p = 0;
    while p < n {
        if let Some(end) = and_separator_at(b, p) {
            parts.push(&s[last..p]);
            last = end;
            p = end;
        } else {
            p += 1;
        }
    }
    parts.push(&s[last..]);
    parts
}

fn and_separator_at(b: &[u8], p: usize) -> Option<usize> {
    let n = b.len();
    // (?<!^|as|[=>< ,])
    if p == 0
        || (p >= 2 && &b[p - 2..p] == b"as")
        || matches!(b[p - 1], b'=' | b'>' | b'<' | b' ' | b',')
    {
        return None;
    }
    let mut spaces = 0;
    while p + spaces < n && b[p + spaces] == b' ' {
        spaces += 1;
    }
    // Backtrack the leading ` *` from greedy to none.
    for k in (0..=spaces).rev() {
        let sep = p + k;
        if sep >= n || !matches!(b[sep], b',' | b' ') {
            continue;
        }
        if sep > 0 && b[sep - 1] == b'-' {
            continue;
        }
        if sep + 1 < n && b[sep + 1] == b'-' {
            continue;
        }
        let mut trailing = 0;
        while sep + 1 + trailing < n && b[sep + 1 + trailing] == b' ' {
            trailing += 1;
        }
        for j in (0..=trailing).rev() {
            let end = sep + 1 + j;
            let ok = end < n && b[end] != b',' && !b[end..].starts_with(b"as");
            if ok {
                return Some(end);
            }
        }
    }
    None
}

fn manipulate(parts: [&str; 4], position: usize, increment: bool) -> Option<String> {
    let mut m: [String; 4] = parts.map(str::to_string);
    let mut position = position;
    for i in (1..=4).rev() {
        if i > position {
            m[i - 1] = "0".into();
        } else if i == position && increment {
            let n = m[i - 1].parse::<i64>().unwrap_or(0).saturating_add(1);
            if n < 0 {
                m[i - 1] = "0".into();
                position -= 1;
                if i == 1 {
                    return None;
                }
            } else {
                m[i - 1] = n.to_string();
            }
        }
    }
    Some(format!("{}.{}.{}.{}", m[0], m[1], m[2], m[3]))
}

fn group<'t>(c: &Captures<'t>, i: usize) -> &'t str {
    c.get(i).map_or("", |m| m.as_str())
}

/// `VersionParser::parseConstraints`.
pub fn parse_constraints(constraints: &str) -> Result<ConstraintSet, String> {
    let trimmed = php_trim(constraints);
    let mut or_groups = Vec::new();
    for or_part in RE.or_split.split(trimmed) {
        let and_parts = and_split(or_part);
        let mut objects = Vec::new();
        for part in &and_parts {
            objects.extend(parse_constraint(part)?);
        }
        let c = if objects.len() == 1 {
            objects.swap_remove(0)
        } else {
            ConstraintSet::All(objects)
        };
        or_groups.push(c);
    }
    Ok(ConstraintSet::create(or_groups, false))
}

fn parse_constraint(input: &str) -> Result<Vec<ConstraintSet>, String> {
    let err = |why: String| format!("Composer cannot parse the constraint {input:?}: {why}");
    let mut constraint = input.to_string();
    if let Some(c) = RE.alias.captures(&constraint) {
        constraint = c[1].to_string();
    }
    let mut stability_modifier: Option<String> = None;
    if let Some(c) = RE.constraint_at.captures(&constraint) {
        let (base, stab) = (c[1].to_string(), c[2].to_string());
        if stab != "stable" {
            stability_modifier = Some(stab);
        }
        constraint = if base.is_empty() { "*".into() } else { base };
    }
    if let Some(c) = RE.hash_ref.captures(&constraint) {
        constraint = c[1].to_string();
    }
    if let Some(c) = RE.x_any.captures(&constraint) {
        if c.get(1).is_some() || c.get(2).is_some() {
            return Ok(vec![ConstraintSet::One(Constraint::new(
                Op::Ge,
                "0.0.0.0-dev",
            ))]);
        }
        return Ok(vec![ConstraintSet::Everything]);
    }
    if let Some(m) = RE.tilde.captures(&constraint) {
        return tilde_range(&constraint, &m, &err);
    }
    if let Some(m) = RE.caret.captures(&constraint) {
        return caret_range(&constraint, &m, &err);
    }
    if let Some(m) = RE.x_range.captures(&constraint) {
        return wildcard_range(&m, &err);
    }
    if let Some(m) = RE.hyphen.captures(&constraint) {
        return hyphen_range(&m, &err);
    }
    if let Some(m) = RE.basic.captures(&constraint) {
        let op_text = group(&m, 1);
        let rest = group(&m, 2);
        let version = match normalize(rest) {
            Ok(v) => Some(v),
            Err(_) if rest.ends_with("-dev") && RE.dev_chars.is_match(rest) => {
                normalize(&format!("dev-{}", &rest[..rest.len() - 4])).ok()
            }
            Err(_) => None,
        };
        if let Some(mut version) = version {
            let op = Op::parse(if op_text.is_empty() { "=" } else { op_text }).unwrap_or(Op::Eq);
            if let Some(modifier) = stability_modifier.as_deref()
                && op != Op::Eq
                && parse_stability(&version) == "stable"
            {
                version.push('-');
                version.push_str(modifier);
            } else if matches!(op, Op::Lt | Op::Ge)
                && !RE.has_modifier.is_match(&rest.to_lowercase())
                && !rest.starts_with("dev-")
            {
                version.push_str("-dev");
            }
            return Ok(vec![ConstraintSet::One(Constraint::new(op, version))]);
        }
    }
    Err(err(
        "it is not a version or a constraint Composer knows".into()
    ))
}

/// `~1.2.3`: at least 1.2.3, below the next version of the one before the last part given.
fn tilde_range(
    constraint: &str,
    m: &Captures<'_>,
    err: &dyn Fn(String) -> String,
) -> Result<Vec<ConstraintSet>, String> {
    if constraint.starts_with("~>") {
        return Err(err(
            "the operator ~> does not exist; ~ was probably meant".into()
        ));
    }
    let mut position = if set(m, 4).is_some() {
        4
    } else if set(m, 3).is_some() {
        3
    } else if set(m, 2).is_some() {
        2
    } else {
        1
    };
    if !php_empty(m, 8) {
        position += 1;
    }
    let suffix = if php_empty(m, 5) && php_empty(m, 7) && php_empty(m, 8) {
        "-dev"
    } else {
        ""
    };
    let low = normalize(&format!("{}{suffix}", &constraint[1..])).map_err(err)?;
    let high_position = position.max(2) - 1;
    let high = manipulate(
        [group(m, 1), group(m, 2), group(m, 3), group(m, 4)],
        high_position,
        true,
    )
    .ok_or_else(|| err("its upper bound is out of range".into()))?;
    Ok(vec![
        ConstraintSet::One(Constraint::new(Op::Ge, low)),
        ConstraintSet::One(Constraint::new(Op::Lt, format!("{high}-dev"))),
    ])
}

/// `^1.2.3`: at least 1.2.3, below the next version of the first non-zero part.
fn caret_range(
    constraint: &str,
    m: &Captures<'_>,
    err: &dyn Fn(String) -> String,
) -> Result<Vec<ConstraintSet>, String> {
    let position = if group(m, 1) != "0" || set(m, 2).is_none() {
        1
    } else if group(m, 2) != "0" || set(m, 3).is_none() {
        2
    } else {
        3
    };
    let suffix = if php_empty(m, 5) && php_empty(m, 7) && php_empty(m, 8) {
        "-dev"
    } else {
        ""
    };
    let low = normalize(&format!("{}{suffix}", &constraint[1..])).map_err(err)?;
    let high = manipulate(
        [group(m, 1), group(m, 2), group(m, 3), group(m, 4)],
        position,
        true,
    )
    .ok_or_else(|| err("its upper bound is out of range".into()))?;
    Ok(vec![
        ConstraintSet::One(Constraint::new(Op::Ge, low)),
        ConstraintSet::One(Constraint::new(Op::Lt, format!("{high}-dev"))),
    ])
}

/// `1.2.*` (or `1.2.x`): the wildcard's range.
fn wildcard_range(
    m: &Captures<'_>,
    err: &dyn Fn(String) -> String,
) -> Result<Vec<ConstraintSet>, String> {
    let position = if set(m, 3).is_some() {
        3
    } else if set(m, 2).is_some() {
        2
    } else {
        1
    };
    let parts = [group(m, 1), group(m, 2), group(m, 3), ""];
    let low =
        manipulate(parts, position, false).ok_or_else(|| err("out of range".into()))? + "-dev";
    let high =
        manipulate(parts, position, true).ok_or_else(|| err("out of range".into()))? + "-dev";
    if low == "0.0.0.0-dev" {
        return Ok(vec![ConstraintSet::One(Constraint::new(Op::Lt, high))]);
    }
    Ok(vec![
        ConstraintSet::One(Constraint::new(Op::Ge, low)),
        ConstraintSet::One(Constraint::new(Op::Lt, high)),
    ])
}

/// `1.0 - 2.0`: an inclusive range, whose partial upper bound admits that whole version.
fn hyphen_range(
    m: &Captures<'_>,
    err: &dyn Fn(String) -> String,
) -> Result<Vec<ConstraintSet>, String> {
    let low_suffix = if php_empty(m, 6) && php_empty(m, 8) && php_empty(m, 9) {
        "-dev"
    } else {
        ""
    };
    let low = normalize(group(m, 1)).map_err(err)?;
    let lower = Constraint::new(Op::Ge, format!("{low}{low_suffix}"));
    let empty = |i: usize| matches!(m.get(i).map(|x| x.as_str()), None | Some(""));
    let upper = if (!empty(12) && !empty(13))
        || !php_empty(m, 15)
        || !php_empty(m, 17)
        || !php_empty(m, 18)
    {
        Constraint::new(Op::Le, normalize(group(m, 10)).map_err(err)?)
    } else {
        normalize(group(m, 10)).map_err(err)?;
        let parts = [group(m, 11), group(m, 12), group(m, 13), group(m, 14)];
        let high = manipulate(parts, if empty(12) { 1 } else { 2 }, true)
            .ok_or_else(|| err("its upper bound is out of range".into()))?;
        Constraint::new(Op::Lt, format!("{high}-dev"))
    };
    Ok(vec![ConstraintSet::One(lower), ConstraintSet::One(upper)])
}

/// The normalised bound Composer compares against for `>=X` and `<X`: unless `X` names a
/// stability itself, `-dev` is appended, so that `>=2` admits `2.0.0-beta1` and `<2.0.6`
/// stops before `2.0.6-beta1` (`VersionParser::parseConstraint`).
pub fn bound_for_operator(text: &str) -> Result<String, String> {
    let mut v = normalize(text)?;
    let plain = plain_numbers(php_trim(text)).is_some();
    if plain || (!RE.has_modifier.is_match(&text.to_lowercase()) && !text.starts_with("dev-")) {
        v.push_str("-dev");
    }
    Ok(v)
}

/// `Semver::satisfies(version, constraints)`.
pub fn satisfies(version: &str, constraints: &str) -> Result<bool, String> {
    let v = normalize(version)?;
    Ok(parse_constraints(constraints)?.matches_version(&v))
}

/// `Comparator::compare(a, op, b)`: raw `version_compare` with branches compared.
pub fn comparator(a: &str, op: Op, b: &str) -> bool {
    Constraint::new(op, b).match_specific(&Constraint::new(Op::Eq, a), true)
}

/// A Packagist version: the text as given and Composer's normalised form.
#[derive(Debug, Clone)]
pub struct ComposerVersion {
    normalized: String,
    /// PHP's canonical form of `normalized`, kept so comparing allocates nothing.
    canonical: Vec<u8>,
}

impl ComposerVersion {
    pub fn parse(input: &str) -> Result<ComposerVersion, String> {
        Ok(ComposerVersion::from_normalized(normalize(input)?))
    }

    /// From text `normalize` already produced.
    pub(crate) fn from_normalized(n: String) -> ComposerVersion {
        let normalized = if normalize_default_branch(&n) == n {
            n
        } else {
            normalize_default_branch(&n).to_string()
        };
        let canonical = php_canonical(normalized.as_bytes());
        ComposerVersion {
            normalized,
            canonical,
        }
    }

    /// `VersionParser::normalize` of the input (`dev-master` becomes `9999999-dev`).
    pub fn normalized(&self) -> &str {
        &self.normalized
    }

    pub fn is_branch(&self) -> bool {
        self.normalized.starts_with("dev-")
    }

    pub fn stability(&self) -> &'static str {
        parse_stability(&self.normalized)
    }
}

impl PartialEq for ComposerVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for ComposerVersion {}
impl PartialOrd for ComposerVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ComposerVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        // version_compare calls different texts equal when they only differ in words it
        // does not know (two branch names); the text then decides, so that equality means
        // "the same version" and the order stays total.
        compare_canonical(&self.canonical, &other.canonical)
            .then_with(|| self.normalized.cmp(&other.normalized))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_like_composer() {
        assert_eq!(normalize("v1.0").as_deref(), Ok("1.0.0.0"));
        assert_eq!(
            normalize("1.0.0-rC15-dev").as_deref(),
            Ok("1.0.0.0-RC15-dev")
        );
        assert_eq!(normalize("2010-01-02").as_deref(), Ok("2010.01.02"));
        assert_eq!(normalize("master").as_deref(), Ok("dev-master"));
        assert!(normalize("1.0.1-SNAPSHOT").is_err());
        assert_eq!(normalize_branch("v1.x"), "1.9999999.9999999.9999999-dev");
    }

    #[test]
    fn version_compare_matches_php() {
        use Ordering::*;
        assert_eq!(php_version_compare("1.0.0", "1.0"), Greater);
        assert_eq!(php_version_compare("1.0-dev", "1.0-alpha"), Less);
        assert_eq!(php_version_compare("1.0rc1", "1.0"), Less);
        assert_eq!(php_version_compare("1.0pl1", "1.0"), Greater);
        assert_eq!(php_version_compare("", "1"), Less);
    }

    #[test]
    fn constraints_follow_composer_stability_rules() {
        // `<X` stops before X's pre-releases; `>=X` starts at X's dev releases.
        assert_eq!(satisfies("5.20.12-beta1", "<5.20.12"), Ok(false));
        assert_eq!(satisfies("2.0.0-beta1", ">=2,<2.0.6"), Ok(true));
        assert_eq!(satisfies("1.2.3", "^1.2 || ~2.0"), Ok(true));
        assert_eq!(
            parse_constraints("~2.5.9|~2.6,>=2.6.2")
                .map(|c| c.to_string())
                .as_deref(),
            Ok("[[>= 2.5.9.0-dev < 2.6.0.0-dev] || [>= 2.6.0.0-dev < 3.0.0.0-dev >= 2.6.2.0-dev]]")
        );
        assert!(parse_constraints(">2.0 ,, <=3.0").is_err());
    }

    #[test]
    fn and_split_respects_hyphen_ranges_and_aliases() {
        assert_eq!(and_split(">=1.0 <2.0"), vec![">=1.0", "<2.0"]);
        assert_eq!(and_split(">=1.0, <2.0"), vec![">=1.0", "<2.0"]);
        assert_eq!(and_split("1.0 - 2.0"), vec!["1.0 - 2.0"]);
    }

    #[test]
    fn default_branches_sort_last() {
        for b in ["dev-master", "dev-default", "dev-trunk", "master"] {
            assert_eq!(
                ComposerVersion::parse(b).expect("branch").normalized(),
                "9999999-dev",
                "{b}"
            );
        }
    }

    #[test]
    fn branches_are_equal_only_to_themselves() {
        let a = ComposerVersion::parse("dev-foo").expect("branch");
        let b = ComposerVersion::parse("dev-bar").expect("branch");
        assert_ne!(a, b);
        assert!(a < ComposerVersion::parse("1.0").expect("release"));
    }
}
