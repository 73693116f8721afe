//! npm: versions and ranges as node-semver (the library npm itself uses) reads them.
//!
//! Why not the `nodejs-semver` crate: npm's answers depend on node-semver's options
//! (`loose`, `includePrerelease`), on its exact desugaring of `^ ~ x * -` ranges (the
//! `range_parse` vectors compare the canonical text) and on `intersects`/`outside`, which
//! that crate does not reproduce. This is a port of node-semver's `classes/` and
//! `ranges/outside.js` at the commit the vectors come from, regular expressions included
//! (compiled once), checked against every row of `npm-node-semver.jsonl`.
//!
//! Versions themselves are parsed by a hand-written strict parser (the hot path for OSV
//! matching); the regex path is only used for `loose` parsing and for ranges.

use std::cmp::Ordering;
use std::fmt;
use std::sync::LazyLock;

use regex::{Captures, Regex};

const MAX_LENGTH: usize = 256;
const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// node-semver's options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub loose: bool,
    pub include_prerelease: bool,
}

/// A pre-release identifier: numbers sort below strings and compare numerically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ident {
    Num(u64),
    Str(String),
}

impl Ident {
    fn parse(s: &str) -> Ident {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            match s.parse::<u64>() {
                Ok(n) if n < MAX_SAFE_INTEGER => return Ident::Num(n),
                _ => {}
            }
        }
        Ident::Str(s.to_string())
    }

    /// node-semver's `compareIdentifiers`.
    fn compare(&self, other: &Ident) -> Ordering {
        let num = |i: &Ident| -> Option<f64> {
            match i {
                // Identifiers are below 2^53, exactly representable.
                #[allow(clippy::cast_precision_loss)]
                Ident::Num(n) => Some(*n as f64),
                Ident::Str(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                    s.parse::<f64>().ok()
                }
                Ident::Str(_) => None,
            }
        };
        match (num(self), num(other)) {
            (Some(a), Some(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => {
                let (Ident::Str(a), Ident::Str(b)) = (self, other) else {
                    return Ordering::Equal;
                };
                // JavaScript compares strings by UTF-16 code units.
                a.encode_utf16().cmp(b.encode_utf16())
            }
        }
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ident::Num(n) => write!(f, "{n}"),
            Ident::Str(s) => f.write_str(s),
        }
    }
}

/// A node-semver `SemVer`. Order ignores build metadata, as node-semver's `compare` does.
#[derive(Debug, Clone)]
pub struct NpmVersion {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub prerelease: Vec<Ident>,
    pub build: Vec<String>,
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

fn strict_number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse::<u64>().ok()
}

impl NpmVersion {
    /// `new SemVer(s, { loose })`.
    pub fn parse(input: &str, loose: bool) -> Result<NpmVersion, String> {
        if input.len() > MAX_LENGTH {
            return Err(format!("it is longer than {MAX_LENGTH} characters"));
        }
        let s = input.trim();
        if !loose {
            return Self::parse_strict(s);
        }
        let caps = RE
            .loose
            .captures(s)
            .ok_or_else(|| "it is not a version, even read loosely".to_string())?;
        Self::from_captures(&caps)
    }

    fn from_captures(c: &Captures<'_>) -> Result<NpmVersion, String> {
        let num = |i: usize, what: &str| -> Result<u64, String> {
            let t = c.get(i).map_or("", |m| m.as_str());
            match t.parse::<u64>() {
                Ok(n) if n <= MAX_SAFE_INTEGER => Ok(n),
                _ => Err(format!("its {what} version is too large")),
            }
        };
        Ok(NpmVersion {
            major: num(1, "major")?,
            minor: num(2, "minor")?,
            patch: num(3, "patch")?,
            prerelease: c.get(4).map_or_else(Vec::new, |m| {
                m.as_str().split('.').map(Ident::parse).collect()
            }),
            build: c.get(5).map_or_else(Vec::new, |m| {
                m.as_str().split('.').map(str::to_string).collect()
            }),
        })
    }

    /// The strict grammar (`^v?N.N.N(-pre)?(+build)?$`), written out for speed.
    fn parse_strict(s: &str) -> Result<NpmVersion, String> {
        let body = s.strip_prefix('v').unwrap_or(s);
        let (rest, build) = match body.split_once('+') {
            Some((r, b)) => {
                if b.split('.')
                    .any(|p| p.is_empty() || !p.bytes().all(is_ident_char))
                {
                    return Err(
                        "its build metadata is not dot-separated [0-9A-Za-z-] identifiers".into(),
                    );
                }
                (r, b.split('.').map(str::to_string).collect())
            }
            None => (body, Vec::new()),
        };
        let (main, pre) = match rest.split_once('-') {
            Some((m, p)) => (m, Some(p)),
            None => (rest, None),
        };
        let mut parts = main.split('.');
        let mut next = |what: &str| -> Result<u64, String> {
            let p = parts
                .next()
                .ok_or_else(|| "it does not have the form MAJOR.MINOR.PATCH".to_string())?;
            let n = strict_number(p).ok_or_else(|| {
                format!("its {what} version {p:?} is not a number without leading zeros")
            })?;
            if n > MAX_SAFE_INTEGER {
                return Err(format!("its {what} version is too large"));
            }
            Ok(n)
        };
        let major = next("major")?;
        let minor = next("minor")?;
        let patch = next("patch")?;
        if parts.next().is_some() {
            return Err("it has more than three version numbers".into());
        }
        let mut prerelease = Vec::new();
        if let Some(p) = pre {
            for id in p.split('.') {
                if id.is_empty() || !id.bytes().all(is_ident_char) {
                    return Err(
                        "its pre-release is not dot-separated [0-9A-Za-z-] identifiers".into(),
                    );
                }
                if id.bytes().all(|b| b.is_ascii_digit()) && strict_number(id).is_none() {
                    return Err(format!(
                        "its numeric pre-release identifier {id:?} has a leading zero"
                    ));
                }
                prerelease.push(Ident::parse(id));
            }
        }
        Ok(NpmVersion {
            major,
            minor,
            patch,
            prerelease,
            build,
        })
    }

    fn compare_main(&self, o: &NpmVersion) -> Ordering {
        (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch))
    }

    fn compare_pre(&self, o: &NpmVersion) -> Ordering {
        match (self.prerelease.is_empty(), o.prerelease.is_empty()) {
            (true, true) => return Ordering::Equal,
            (false, true) => return Ordering::Less,
            (true, false) => return Ordering::Greater,
            (false, false) => {}
        }
        let mut i = 0;
        loop {
            match (self.prerelease.get(i), o.prerelease.get(i)) {
                (None, None) => return Ordering::Equal,
                (Some(_), None) => return Ordering::Greater,
                (None, Some(_)) => return Ordering::Less,
                (Some(a), Some(b)) => {
                    if a != b {
                        let c = a.compare(b);
                        if c != Ordering::Equal {
                            return c;
                        }
                    }
                }
            }
            i += 1;
        }
    }

    pub fn is_prerelease(&self) -> bool {
        !self.prerelease.is_empty()
    }

    /// Same major, minor and patch.
    fn same_tuple(&self, o: &NpmVersion) -> bool {
        self.major == o.major && self.minor == o.minor && self.patch == o.patch
    }
}

impl PartialEq for NpmVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for NpmVersion {}
impl PartialOrd for NpmVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for NpmVersion {
    fn cmp(&self, o: &Self) -> Ordering {
        self.compare_main(o).then_with(|| self.compare_pre(o))
    }
}

impl fmt::Display for NpmVersion {
    /// node-semver's `version` (no build metadata).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, p) in self.prerelease.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// The regular expressions of node-semver's internal/re.js.

struct Res {
    loose: Regex,
    xrange: Regex,
    xrange_loose: Regex,
    tilde: Regex,
    tilde_loose: Regex,
    caret: Regex,
    caret_loose: Regex,
    comparator: Regex,
    comparator_loose: Regex,
    comparator_trim: Regex,
    tilde_trim: Regex,
    caret_trim: Regex,
    hyphen: Regex,
    hyphen_loose: Regex,
    star: Regex,
    gte0: Regex,
    gte0pre: Regex,
    build: Regex,
}

/// node-semver's `makeSafeRegex` bounds `\s*`/`\s+` to one character (whitespace is
/// collapsed before ranges are parsed, so this changes what matches). Its bounds on digit
/// and identifier runs only guard against backtracking, which Rust's regex engine does
/// not do, so they are left out. `\d` becomes `[0-9]` because Rust's `\d` is Unicode.
fn safe(src: &str) -> String {
    src.replace(r"\s*", r"\s{0,1}")
        .replace(r"\s+", r"\s{1,1}")
        .replace(r"\d", "[0-9]")
}

fn compile(src: &str) -> Regex {
    // The patterns are constants; a failure here is a bug caught by every test.
    #[allow(clippy::expect_used)]
    Regex::new(&safe(src)).expect("node-semver pattern compiles")
}

static RE: LazyLock<Res> = LazyLock::new(|| {
    let ldn = "[a-zA-Z0-9-]";
    let ni = r"0|[1-9]\d*";
    let nil = r"\d+";
    let nni = format!(r"\d*[a-zA-Z-]{ldn}*");
    let mainversion = format!(r"({ni})\.({ni})\.({ni})");
    let mainversion_loose = format!(r"({nil})\.({nil})\.({nil})");
    let pri = format!("(?:{nni}|{ni})");
    let pril = format!("(?:{nni}|{nil})");
    let prerelease = format!(r"(?:-({pri}(?:\.{pri})*))");
    let prerelease_loose = format!(r"(?:-?({pril}(?:\.{pril})*))");
    let bi = format!("{ldn}+");
    let build = format!(r"(?:\+({bi}(?:\.{bi})*))");
    let fullplain = format!("v?{mainversion}{prerelease}?{build}?");
    let looseplain = format!(r"[v=\s]*{mainversion_loose}{prerelease_loose}?{build}?");
    let gtlt = "((?:<|>)?=?)";
    let xri_loose = format!(r"{nil}|x|X|\*");
    let xri = format!(r"{ni}|x|X|\*");
    let xrangeplain =
        format!(r"[v=\s]*({xri})(?:\.({xri})(?:\.({xri})(?:{prerelease})?{build}?)?)?");
    let xrangeplain_loose = format!(
        r"[v=\s]*({xri_loose})(?:\.({xri_loose})(?:\.({xri_loose})(?:{prerelease_loose})?{build}?)?)?"
    );
    let lonetilde = "(?:~>?)";
    let lonecaret = r"(?:\^)";
    Res {
        loose: compile(&format!("^{looseplain}$")),
        xrange: compile(&format!(r"^{gtlt}\s*{xrangeplain}$")),
        xrange_loose: compile(&format!(r"^{gtlt}\s*{xrangeplain_loose}$")),
        tilde: compile(&format!("^{lonetilde}{xrangeplain}$")),
        tilde_loose: compile(&format!("^{lonetilde}{xrangeplain_loose}$")),
        caret: compile(&format!("^{lonecaret}{xrangeplain}$")),
        caret_loose: compile(&format!("^{lonecaret}{xrangeplain_loose}$")),
        comparator: compile(&format!(r"^{gtlt}\s*({fullplain})$|^$")),
        comparator_loose: compile(&format!(r"^{gtlt}\s*({looseplain})$|^$")),
        comparator_trim: compile(&format!(r"(\s*){gtlt}\s*({looseplain}|{xrangeplain})")),
        tilde_trim: compile(&format!(r"(\s*){lonetilde}\s+")),
        caret_trim: compile(&format!(r"(\s*){lonecaret}\s+")),
        hyphen: compile(&format!(r"^\s*({xrangeplain})\s+-\s+({xrangeplain})\s*$")),
        hyphen_loose: compile(&format!(
            r"^\s*({xrangeplain_loose})\s+-\s+({xrangeplain_loose})\s*$"
        )),
        star: compile(r"(<|>)?=?\s*\*"),
        gte0: compile(r"^\s*>=\s*0\.0\.0\s*$"),
        gte0pre: compile(r"^\s*>=\s*0\.0\.0-0\s*$"),
        build: compile(&build),
    }
});

/// node-semver's unbounded build-metadata stripper (`BUILDSTRIPRE`, from `src`, global).
static BUILD_STRIP: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"(?:\+([a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*))").expect("build pattern compiles")
});

static WHITESPACE: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"\s+").expect("whitespace pattern compiles")
});

fn group<'t>(c: &Captures<'t>, i: usize) -> &'t str {
    c.get(i).map_or("", |m| m.as_str())
}

fn is_x(id: &str) -> bool {
    id.is_empty() || id.eq_ignore_ascii_case("x") || id == "*"
}

/// `+id + 1` on a numeric identifier. Saturates instead of overflowing; node-semver would
/// produce a float there, for numbers no real version has.
fn plus1(id: &str) -> String {
    id.parse::<u64>()
        .map_or_else(|_| id.to_string(), |n| n.saturating_add(1).to_string())
}

fn replace_first(re: &Regex, s: &str, f: impl Fn(&Captures<'_>) -> String) -> String {
    match re.captures(s) {
        Some(c) => {
            let m = c.get(0).map_or(0..0, |m| m.range());
            let mut out = String::with_capacity(s.len() + 16);
            out.push_str(&s[..m.start]);
            out.push_str(&f(&c));
            out.push_str(&s[m.end..]);
            out
        }
        None => s.to_string(),
    }
}

fn split_ws(s: &str) -> Vec<&str> {
    WHITESPACE.split(s).collect()
}

fn replace_caret(comp: &str, o: Options) -> String {
    let re = if o.loose { &RE.caret_loose } else { &RE.caret };
    let z = if o.include_prerelease { "-0" } else { "" };
    replace_first(re, comp, |c| {
        let (mj, mn, p, pr) = (group(c, 1), group(c, 2), group(c, 3), group(c, 4));
        if is_x(mj) {
            String::new()
        } else if is_x(mn) {
            format!(">={mj}.0.0{z} <{}.0.0-0", plus1(mj))
        } else if is_x(p) {
            if mj == "0" {
                format!(">={mj}.{mn}.0{z} <{mj}.{}.0-0", plus1(mn))
            } else {
                format!(">={mj}.{mn}.0{z} <{}.0.0-0", plus1(mj))
            }
        } else if !pr.is_empty() {
            if mj == "0" {
                if mn == "0" {
                    format!(">={mj}.{mn}.{p}-{pr} <{mj}.{mn}.{}-0", plus1(p))
                } else {
                    format!(">={mj}.{mn}.{p}-{pr} <{mj}.{}.0-0", plus1(mn))
                }
            } else {
                format!(">={mj}.{mn}.{p}-{pr} <{}.0.0-0", plus1(mj))
            }
        } else if mj == "0" {
            if mn == "0" {
                format!(">={mj}.{mn}.{p} <{mj}.{mn}.{}-0", plus1(p))
            } else {
                format!(">={mj}.{mn}.{p} <{mj}.{}.0-0", plus1(mn))
            }
        } else {
            format!(">={mj}.{mn}.{p} <{}.0.0-0", plus1(mj))
        }
    })
}

fn replace_tilde(comp: &str, o: Options) -> String {
    let re = if o.loose { &RE.tilde_loose } else { &RE.tilde };
    let z = if o.include_prerelease { "-0" } else { "" };
    replace_first(re, comp, |c| {
        let (mj, mn, p, pr) = (group(c, 1), group(c, 2), group(c, 3), group(c, 4));
        if is_x(mj) {
            String::new()
        } else if is_x(mn) {
            format!(">={mj}.0.0{z} <{}.0.0-0", plus1(mj))
        } else if is_x(p) {
            format!(">={mj}.{mn}.0{z} <{mj}.{}.0-0", plus1(mn))
        } else if !pr.is_empty() {
            format!(">={mj}.{mn}.{p}-{pr} <{mj}.{}.0-0", plus1(mn))
        } else {
            format!(">={mj}.{mn}.{p} <{mj}.{}.0-0", plus1(mn))
        }
    })
}

fn replace_xrange(comp: &str, o: Options) -> String {
    let comp = comp.trim();
    let re = if o.loose {
        &RE.xrange_loose
    } else {
        &RE.xrange
    };
    replace_first(re, comp, |c| {
        let whole = group(c, 0);
        let mut gtlt = group(c, 1).to_string();
        let (mut mj, mut mn, mut p) = (
            group(c, 2).to_string(),
            group(c, 3).to_string(),
            group(c, 4).to_string(),
        );
        // invalidXRangeOrder: `x.1`, `1.x.2` are left as they are (and fail later).
        if (is_x(&mj) && !is_x(&mn)) || (is_x(&mn) && !p.is_empty() && !is_x(&p)) {
            return comp.to_string();
        }
        let xmj = is_x(&mj);
        let xmn = xmj || is_x(&mn);
        let xp = xmn || is_x(&p);
        let any_x = xp;
        if gtlt == "=" && any_x {
            gtlt.clear();
        }
        let mut pr = if o.include_prerelease { "-0" } else { "" };
        if xmj {
            if gtlt == ">" || gtlt == "<" {
                "<0.0.0-0".to_string()
            } else {
                "*".to_string()
            }
        } else if !gtlt.is_empty() && any_x {
            if xmn {
                mn = "0".into();
            }
            p = "0".into();
            if gtlt == ">" {
                gtlt = ">=".into();
                if xmn {
                    mj = plus1(&mj);
                    mn = "0".into();
                } else {
                    mn = plus1(&mn);
                }
                p = "0".into();
            } else if gtlt == "<=" {
                gtlt = "<".into();
                if xmn {
                    mj = plus1(&mj);
                } else {
                    mn = plus1(&mn);
                }
            }
            if gtlt == "<" {
                pr = "-0";
            }
            format!("{gtlt}{mj}.{mn}.{p}{pr}")
        } else if xmn {
            format!(">={mj}.0.0{pr} <{}.0.0-0", plus1(&mj))
        } else if xp {
            format!(">={mj}.{mn}.0{pr} <{mj}.{}.0-0", plus1(&mn))
        } else {
            whole.to_string()
        }
    })
}

fn hyphen_replace(c: &Captures<'_>, inc_pr: bool) -> String {
    let from_all = group(c, 1);
    let (fmj, fmn, fp, fpr) = (group(c, 2), group(c, 3), group(c, 4), group(c, 5));
    // Groups of the second XRANGEPLAIN: 7 = whole, 8..=11 = M, m, p, pre.
    let to_all = group(c, 7);
    let (tmj, tmn, tp, tpr) = (group(c, 8), group(c, 9), group(c, 10), group(c, 11));
    let z = if inc_pr { "-0" } else { "" };
    let from = if is_x(fmj) {
        String::new()
    } else if is_x(fmn) {
        format!(">={fmj}.0.0{z}")
    } else if is_x(fp) {
        format!(">={fmj}.{fmn}.0{z}")
    } else if !fpr.is_empty() {
        format!(">={from_all}")
    } else {
        format!(">={from_all}{z}")
    };
    let to = if is_x(tmj) {
        String::new()
    } else if is_x(tmn) {
        format!("<{}.0.0-0", plus1(tmj))
    } else if is_x(tp) {
        format!("<{tmj}.{}.0-0", plus1(tmn))
    } else if !tpr.is_empty() {
        format!("<={tmj}.{tmn}.{tp}-{tpr}")
    } else if inc_pr {
        format!("<{tmj}.{tmn}.{}-0", plus1(tp))
    } else {
        format!("<={to_all}")
    };
    format!("{from} {to}").trim().to_string()
}

fn parse_comparator_text(comp: &str, o: Options) -> String {
    let comp = RE.build.replace(comp, "").into_owned();
    let comp = split_ws(comp.trim())
        .into_iter()
        .map(|c| replace_caret(c, o))
        .collect::<Vec<_>>()
        .join(" ");
    let comp = split_ws(comp.trim())
        .into_iter()
        .map(|c| replace_tilde(c, o))
        .collect::<Vec<_>>()
        .join(" ");
    let comp = split_ws(&comp)
        .into_iter()
        .map(|c| replace_xrange(c, o))
        .collect::<Vec<_>>()
        .join(" ");
    RE.star.replace(comp.trim(), "").into_owned()
}

/// One comparator: an operator (`""` means equality) and a version, or "any".
#[derive(Debug, Clone)]
pub struct Comparator {
    op: &'static str,
    semver: Option<NpmVersion>,
    value: String,
}

impl Comparator {
    pub fn parse(comp: &str, o: Options) -> Result<Comparator, String> {
        let comp = split_ws(comp.trim()).join(" ");
        let re = if o.loose {
            &RE.comparator_loose
        } else {
            &RE.comparator
        };
        let c = re
            .captures(&comp)
            .ok_or_else(|| format!("invalid comparator {comp:?}"))?;
        let op = match c.get(1).map(|m| m.as_str()) {
            Some("<") => "<",
            Some("<=") => "<=",
            Some(">") => ">",
            Some(">=") => ">=",
            _ => "",
        };
        match c.get(2) {
            None => Ok(Comparator {
                op,
                semver: None,
                value: String::new(),
            }),
            Some(m) => {
                let v = NpmVersion::parse(m.as_str(), o.loose)?;
                let value = format!("{op}{v}");
                Ok(Comparator {
                    op,
                    semver: Some(v),
                    value,
                })
            }
        }
    }

    fn is_any(&self) -> bool {
        self.semver.is_none()
    }

    fn is_null_set(&self) -> bool {
        self.value == "<0.0.0-0"
    }

    pub fn test(&self, v: &NpmVersion) -> bool {
        let Some(s) = &self.semver else {
            return true;
        };
        cmp_op(v, self.op, s)
    }

    /// `Comparator.intersects`.
    pub fn intersects(&self, other: &Comparator, o: Options) -> Result<bool, String> {
        if self.op.is_empty() {
            if self.value.is_empty() {
                return Ok(true);
            }
            let r = Range::parse(&other.value, o)?;
            return Ok(self.semver.as_ref().is_some_and(|v| r.test(v)));
        } else if other.op.is_empty() {
            if other.value.is_empty() {
                return Ok(true);
            }
            let r = Range::parse(&self.value, o)?;
            return Ok(other.semver.as_ref().is_some_and(|v| r.test(v)));
        }
        if o.include_prerelease && (self.value == "<0.0.0-0" || other.value == "<0.0.0-0") {
            return Ok(false);
        }
        if !o.include_prerelease
            && (self.value.starts_with("<0.0.0") || other.value.starts_with("<0.0.0"))
        {
            return Ok(false);
        }
        let (Some(a), Some(b)) = (&self.semver, &other.semver) else {
            return Ok(true);
        };
        if self.op.starts_with('>') && other.op.starts_with('>') {
            return Ok(true);
        }
        if self.op.starts_with('<') && other.op.starts_with('<') {
            return Ok(true);
        }
        if a.to_string() == b.to_string() && self.op.contains('=') && other.op.contains('=') {
            return Ok(true);
        }
        if a < b && self.op.starts_with('>') && other.op.starts_with('<') {
            return Ok(true);
        }
        if a > b && self.op.starts_with('<') && other.op.starts_with('>') {
            return Ok(true);
        }
        Ok(false)
    }
}

impl fmt::Display for Comparator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.value)
    }
}

fn cmp_op(a: &NpmVersion, op: &str, b: &NpmVersion) -> bool {
    let c = a.cmp(b);
    match op {
        ">" => c == Ordering::Greater,
        ">=" => c != Ordering::Less,
        "<" => c == Ordering::Less,
        "<=" => c != Ordering::Greater,
        "!=" => c != Ordering::Equal,
        _ => c == Ordering::Equal,
    }
}

/// A node-semver `Range`: alternatives (`||`) of comparator sets (all must hold).
#[derive(Debug, Clone)]
pub struct Range {
    set: Vec<Vec<Comparator>>,
    options: Options,
}

impl Range {
    pub fn parse(range: &str, o: Options) -> Result<Range, String> {
        let raw = WHITESPACE.replace_all(range.trim(), " ").into_owned();
        let mut set = Vec::new();
        for part in raw.split("||") {
            let comps = Self::parse_range(part.trim(), o)?;
            if !comps.is_empty() {
                set.push(comps);
            }
        }
        if set.is_empty() {
            return Err(format!("invalid range {raw:?}"));
        }
        if set.len() > 1 {
            let first = set[0].clone();
            set.retain(|c| !c[0].is_null_set());
            if set.is_empty() {
                set = vec![first];
            } else if set.len() > 1
                && let Some(any) = set.iter().find(|c| c.len() == 1 && c[0].is_any())
            {
                set = vec![any.clone()];
            }
        }
        Ok(Range { set, options: o })
    }

    fn parse_range(range: &str, o: Options) -> Result<Vec<Comparator>, String> {
        let range = BUILD_STRIP.replace_all(range, "").into_owned();
        let hr = if o.loose {
            &RE.hyphen_loose
        } else {
            &RE.hyphen
        };
        let range = replace_first(hr, &range, |c| hyphen_replace(c, o.include_prerelease));
        let range = RE
            .comparator_trim
            .replace_all(&range, "$1$2$3")
            .into_owned();
        let range = RE.tilde_trim.replace_all(&range, "${1}~").into_owned();
        let range = RE.caret_trim.replace_all(&range, "${1}^").into_owned();
        let joined = range
            .split(' ')
            .map(|c| parse_comparator_text(c, o))
            .collect::<Vec<_>>()
            .join(" ");
        let gte0 = if o.include_prerelease {
            &RE.gte0pre
        } else {
            &RE.gte0
        };
        let mut list: Vec<String> = split_ws(&joined)
            .into_iter()
            .map(|c| gte0.replace(c.trim(), "").into_owned())
            .collect();
        if o.loose {
            list.retain(|c| RE.comparator_loose.is_match(c));
        }
        let mut out: Vec<Comparator> = Vec::new();
        for text in &list {
            let c = Comparator::parse(text, o)?;
            if c.is_null_set() {
                return Ok(vec![c]);
            }
            if let Some(existing) = out.iter_mut().find(|e| e.value == c.value) {
                *existing = c;
            } else {
                out.push(c);
            }
        }
        if out.len() > 1 {
            out.retain(|c| !c.value.is_empty());
        }
        Ok(out)
    }

    /// `Range.test`: any alternative whose comparators all hold, with node-semver's rule
    /// that a pre-release only matches a set naming a pre-release of the same x.y.z
    /// (unless `includePrerelease`).
    pub fn test(&self, v: &NpmVersion) -> bool {
        self.set.iter().any(|s| test_set(s, v, self.options))
    }

    /// `Range.intersects`.
    pub fn intersects(&self, other: &Range, o: Options) -> Result<bool, String> {
        for a in &self.set {
            if !is_satisfiable(a, o)? {
                continue;
            }
            for b in &other.set {
                if !is_satisfiable(b, o)? {
                    continue;
                }
                let mut all = true;
                'outer: for x in a {
                    for y in b {
                        if !x.intersects(y, o)? {
                            all = false;
                            break 'outer;
                        }
                    }
                }
                if all {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// `ranges/outside.js`: is `v` above (`hilo` = `>`) or below (`<`) every version the
    /// range admits?
    pub fn outside(&self, v: &NpmVersion, high_side: bool) -> Result<bool, String> {
        let (comp, ecomp) = if high_side { (">", ">=") } else { ("<", "<=") };
        if self.test(v) {
            return Ok(false);
        }
        let gtfn = |a: &NpmVersion, b: &NpmVersion| if high_side { a > b } else { a < b };
        let ltfn = |a: &NpmVersion, b: &NpmVersion| if high_side { a < b } else { a > b };
        let ltefn = |a: &NpmVersion, b: &NpmVersion| if high_side { a <= b } else { a >= b };
        let zero = Comparator::parse(">=0.0.0", Options::default())?;
        for comparators in &self.set {
            let mut high: Option<&Comparator> = None;
            let mut low: Option<&Comparator> = None;
            for c in comparators {
                let c = if c.is_any() { &zero } else { c };
                let h = *high.get_or_insert(c);
                let l = *low.get_or_insert(c);
                let (Some(cs), Some(hs), Some(ls)) = (&c.semver, &h.semver, &l.semver) else {
                    continue;
                };
                if gtfn(cs, hs) {
                    high = Some(c);
                } else if ltfn(cs, ls) {
                    low = Some(c);
                }
            }
            let (Some(high), Some(low)) = (high, low) else {
                continue;
            };
            if high.op == comp || high.op == ecomp {
                return Ok(false);
            }
            let Some(ls) = &low.semver else {
                continue;
            };
            if ((low.op.is_empty() || low.op == comp) && ltefn(v, ls))
                || (low.op == ecomp && ltfn(v, ls))
            {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl fmt::Display for Range {
    /// node-semver's canonical `range` text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, set) in self.set.iter().enumerate() {
            if i > 0 {
                f.write_str("||")?;
            }
            for (k, c) in set.iter().enumerate() {
                if k > 0 {
                    f.write_str(" ")?;
                }
                f.write_str(c.value.trim())?;
            }
        }
        Ok(())
    }
}

fn is_satisfiable(comparators: &[Comparator], o: Options) -> Result<bool, String> {
    let mut remaining: Vec<&Comparator> = comparators.iter().collect();
    let mut test = remaining.pop();
    let mut result = true;
    while result && !remaining.is_empty() {
        if let Some(t) = test {
            for other in &remaining {
                if !t.intersects(other, o)? {
                    result = false;
                    break;
                }
            }
        }
        test = remaining.pop();
    }
    Ok(result)
}

fn test_set(set: &[Comparator], v: &NpmVersion, o: Options) -> bool {
    if !set.iter().all(|c| c.test(v)) {
        return false;
    }
    if v.is_prerelease() && !o.include_prerelease {
        return set.iter().any(|c| {
            c.semver
                .as_ref()
                .is_some_and(|a| a.is_prerelease() && a.same_tuple(v))
        });
    }
    true
}

/// `semver.satisfies(version, range, options)`: an unreadable range or version is `false`.
pub fn satisfies(version: &str, range: &str, o: Options) -> bool {
    let Ok(r) = Range::parse(range, o) else {
        return false;
    };
    NpmVersion::parse(version, o.loose).is_ok_and(|v| r.test(&v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> NpmVersion {
        NpmVersion::parse(s, false).expect(s)
    }

    #[test]
    fn strict_parse_follows_semver_2() {
        assert!(NpmVersion::parse("1.2.3-alpha.1+build.5", false).is_ok());
        assert!(NpmVersion::parse(" v1.2.3 ", false).is_ok());
        for bad in [
            "1.2", "01.2.3", "1.2.3-01", "1.2.3-", "1.2.3+", "=1.2.3", "1.2.3.4",
        ] {
            assert!(NpmVersion::parse(bad, false).is_err(), "{bad}");
        }
        assert!(
            NpmVersion::parse("=1.2.3beta", true).is_ok(),
            "loose accepts what npm accepts"
        );
    }

    #[test]
    fn orders_prereleases_below_releases_and_ignores_build() {
        assert!(v("1.0.0-alpha") < v("1.0.0-alpha.1"));
        assert!(v("1.0.0-alpha.1") < v("1.0.0-alpha.beta"));
        assert!(v("1.0.0-rc.1") < v("1.0.0"));
        assert_eq!(v("1.0.0+a"), v("1.0.0+b"));
    }

    #[test]
    fn desugars_ranges_like_node_semver() {
        let r = |s: &str, o: Options| Range::parse(s, o).expect(s).to_string();
        assert_eq!(r("^1.2.3", Options::default()), ">=1.2.3 <2.0.0-0");
        assert_eq!(r("~0.1", Options::default()), ">=0.1.0 <0.2.0-0");
        assert_eq!(
            r(
                "1 - 2",
                Options {
                    loose: false,
                    include_prerelease: true
                }
            ),
            ">=1.0.0-0 <3.0.0-0"
        );
        assert_eq!(r(">=*", Options::default()), "");
    }

    #[test]
    fn prereleases_need_an_opt_in_on_the_same_tuple() {
        let o = Options::default();
        assert!(!satisfies("1.3.0-beta", "^1.2.3", o));
        assert!(satisfies("1.2.4-beta", "^1.2.4-alpha", o));
        assert!(satisfies(
            "1.3.0-beta",
            "^1.2.3",
            Options {
                loose: false,
                include_prerelease: true
            }
        ));
    }
}
