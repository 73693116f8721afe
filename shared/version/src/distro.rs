//! Debian and Alpine package versions: ordering only.
//!
//! These are not ecosystems Proven reads lock files for (there is no `Ecosystem` variant),
//! but their advisories share the OSV format, so their orderings are here and checked
//! against the vectors: Debian's is dpkg's `verrevcmp`; Alpine's follows osv-scalibr's
//! reading of apk-tools, which is what the Alpine vectors were scored with.

use std::cmp::Ordering;

/// Digits without leading zeros compare by length, then as text.
fn cmp_digits(a: &str, b: &str) -> Ordering {
    let a = a.trim_start_matches('0');
    let b = b.trim_start_matches('0');
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// dpkg's character order in the non-digit parts: `~` before the end of the string,
/// which is before letters, which are before everything else.
fn dpkg_order(c: Option<u8>) -> i32 {
    match c {
        None => 0,
        Some(b'~') => -1,
        Some(c) if c.is_ascii_digit() => 0,
        Some(c) if c.is_ascii_alphabetic() => i32::from(c),
        // dpkg reads `char`, which is signed: bytes above 127 rank below ASCII symbols.
        #[allow(clippy::cast_possible_wrap)]
        Some(c) => i32::from(c as i8) + 256,
    }
}

/// dpkg's `verrevcmp` on one part (upstream version or revision).
fn verrevcmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let mut first_diff = 0;
        while (i < a.len() && !a[i].is_ascii_digit()) || (j < b.len() && !b[j].is_ascii_digit()) {
            let ac = dpkg_order(a.get(i).copied().filter(|c| !c.is_ascii_digit()));
            let bc = dpkg_order(b.get(j).copied().filter(|c| !c.is_ascii_digit()));
            if ac != bc {
                return ac.cmp(&bc);
            }
            if i < a.len() && !a[i].is_ascii_digit() {
                i += 1;
            }
            if j < b.len() && !b[j].is_ascii_digit() {
                j += 1;
            }
        }
        let si = i;
        while i < a.len() && a[i].is_ascii_digit() {
            i += 1;
        }
        let sj = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        let da = std::str::from_utf8(&a[si..i]).unwrap_or("");
        let db = std::str::from_utf8(&b[sj..j]).unwrap_or("");
        let c = cmp_digits(da, db);
        if c != Ordering::Equal {
            first_diff = if c == Ordering::Less { -1 } else { 1 };
        }
        if first_diff != 0 {
            return first_diff.cmp(&0);
        }
    }
    Ordering::Equal
}

/// Splits `[epoch:]upstream[-revision]`.
fn debian_parts(v: &str) -> Result<(&str, &str, &str), String> {
    let v = v.trim();
    if v.is_empty() {
        return Err("it is empty".into());
    }
    let (epoch, rest) = match v.split_once(':') {
        Some((e, r)) => {
            if e.is_empty() || !e.bytes().all(|c| c.is_ascii_digit()) {
                return Err(format!("its epoch {e:?} is not a number"));
            }
            (e, r)
        }
        None => ("0", v),
    };
    let (upstream, revision) = match rest.rfind('-') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    Ok((epoch, upstream, revision))
}

/// Compares two Debian versions as dpkg does.
pub fn compare_debian(a: &str, b: &str) -> Result<Ordering, String> {
    let (ea, ua, ra) = debian_parts(a).map_err(|e| format!("invalid Debian version {a:?}: {e}"))?;
    let (eb, ub, rb) = debian_parts(b).map_err(|e| format!("invalid Debian version {b:?}: {e}"))?;
    Ok(cmp_digits(ea, eb)
        .then_with(|| verrevcmp(ua, ub))
        .then_with(|| verrevcmp(ra, rb)))
}

#[derive(Debug)]
struct Alpine<'a> {
    original: &'a str,
    invalid: bool,
    remainder: &'a str,
    /// (text, position) of each dot-separated number.
    components: Vec<(&'a str, usize)>,
    letter: Option<u8>,
    suffixes: Vec<(usize, &'a str)>,
    build: &'a str,
}

const ALPINE_SUFFIXES: [&str; 9] = ["alpha", "beta", "pre", "rc", "", "cvs", "svn", "git", "hg"];
const SUFFIX_WORDS: [&str; 9] = ["alpha", "beta", "pre", "rc", "cvs", "svn", "git", "hg", "p"];

fn suffix_weight(s: &str) -> usize {
    ALPINE_SUFFIXES
        .iter()
        .position(|x| *x == s)
        .unwrap_or(ALPINE_SUFFIXES.len())
}

/// Finds every `_(alpha|beta|pre|rc|cvs|svn|git|hg|p)(\d*)` in `s`, left to right.
fn find_suffixes(s: &str) -> Vec<(&str, &str, &str)> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'_'
            && let Some(word) = SUFFIX_WORDS.iter().find(|w| s[i + 1..].starts_with(**w))
        {
            let ws = i + 1 + word.len();
            let mut e = ws;
            while e < b.len() && b[e].is_ascii_digit() {
                e += 1;
            }
            out.push((&s[i..e], &s[i + 1..ws], &s[ws..e]));
            i = e;
            continue;
        }
        i += 1;
    }
    out
}

fn parse_alpine(original: &str) -> Alpine<'_> {
    let mut v = Alpine {
        original,
        invalid: false,
        remainder: "",
        components: Vec::new(),
        letter: None,
        suffixes: Vec::new(),
        build: "0",
    };
    // ^((\d+)\.?)*
    let b = original.as_bytes();
    let mut end = 0;
    loop {
        let s = end;
        let mut e = s;
        while e < b.len() && b[e].is_ascii_digit() {
            e += 1;
        }
        if e == s {
            break;
        }
        end = if e < b.len() && b[e] == b'.' {
            e + 1
        } else {
            e
        };
        if end == e {
            break;
        }
    }
    let numbers = &original[..end];
    for (i, d) in numbers.split('.').enumerate() {
        if d.is_empty() {
            break;
        }
        v.components.push((d, i));
    }
    let mut rest = &original[end..];
    if let Some(&c) = rest.as_bytes().first()
        && c.is_ascii_lowercase()
    {
        v.letter = Some(c);
        rest = &rest[1..];
    }
    for (whole, word, number) in find_suffixes(rest) {
        v.suffixes.push((
            suffix_weight(word),
            if number.is_empty() { "0" } else { number },
        ));
        if let Some(r) = rest.strip_prefix(whole) {
            rest = r;
        }
    }
    // ^~([0-9a-f]+)
    if let Some(h) = rest.strip_prefix('~') {
        let n = h
            .bytes()
            .take_while(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
            .count();
        if n > 0 {
            rest = &h[n..];
        }
    }
    if !rest.is_empty() {
        match rest.strip_prefix("-r") {
            Some(r) => {
                let n = r.bytes().take_while(u8::is_ascii_digit).count();
                v.build = if n == 0 { "0" } else { &r[..n] };
                rest = &r[n..];
            }
            None => v.invalid = true,
        }
    }
    v.remainder = rest;
    v
}

/// Compares two Alpine (apk) versions.
pub fn compare_alpine(a: &str, b: &str) -> Ordering {
    let (v, w) = (parse_alpine(a), parse_alpine(b));
    if v.invalid && w.invalid {
        return v.original.cmp(w.original);
    }
    let n = v.components.len().max(w.components.len());
    for i in 0..n {
        let x = v.components.get(i).copied().unwrap_or(("0", 0));
        let y = w.components.get(i).copied().unwrap_or(("0", 0));
        // A later component with a leading zero compares as text (apk's rule for
        // fractional parts such as 1.05 < 1.5).
        let c = if x.1 != 0 && y.1 != 0 && (x.0.starts_with('0') || y.0.starts_with('0')) {
            x.0.cmp(y.0)
        } else {
            cmp_digits(x.0, y.0)
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    let c = match (v.letter, w.letter) {
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (x, y) => x.cmp(&y),
    };
    if c != Ordering::Equal {
        return c;
    }
    let n = v.suffixes.len().max(w.suffixes.len());
    for i in 0..n {
        // osv-scalibr weighs a missing suffix 5 (between "" and "cvs" in its list).
        let x = v.suffixes.get(i).copied().unwrap_or((5, "0"));
        let y = w.suffixes.get(i).copied().unwrap_or((5, "0"));
        let c = x.0.cmp(&y.0).then_with(|| cmp_digits(x.1, y.1));
        if c != Ordering::Equal {
            return c;
        }
    }
    let c = cmp_digits(v.build, w.build);
    if c != Ordering::Equal {
        return c;
    }
    match (v.remainder.is_empty(), w.remainder.is_empty()) {
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debian_tilde_sorts_before_everything() {
        assert_eq!(compare_debian("1.0~rc1-1", "1.0-1"), Ok(Ordering::Less));
        assert_eq!(compare_debian("1:0.9", "2.0"), Ok(Ordering::Greater));
        assert_eq!(compare_debian("0:1.0", "1.0"), Ok(Ordering::Equal));
        assert!(compare_debian("a:1", "1").is_err());
    }

    #[test]
    fn alpine_orders_suffixes_and_revisions() {
        assert_eq!(compare_alpine("1.0_rc1", "1.0"), Ordering::Less);
        assert_eq!(compare_alpine("1.0_p1", "1.0"), Ordering::Greater);
        assert_eq!(compare_alpine("1.0-r2", "1.0-r10"), Ordering::Less);
        assert_eq!(compare_alpine("1-r1", "1-r01"), Ordering::Equal);
    }
}
