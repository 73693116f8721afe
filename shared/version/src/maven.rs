//! Maven: `ComparableVersion` ordering and `VersionRange` specs (`[1.0,2.0)`).
//!
//! A port of apache/maven's `ComparableVersion.java` and `VersionRange.java` (there is no
//! maintained Rust crate with Maven's rules). The base is the commit the vectors come from
//! (540897d3), plus upstream's later fixes that make the order total: at 540897d3,
//! `1-ga1 == 1 == 1-ga2` while `1-ga1 < 1-ga2`, and a qualifier against a sub-list ignored
//! the sub-list's first item. Upstream (apache/maven `ComparableVersion.java` at 0288c858)
//! lets the number of `ga1` decide, compares a sub-list with a qualifier item by item,
//! flattens a single nested list, and refuses versions over 256 characters; all 1,146 rows
//! of Maven's ComparableVersionTest at 540897d3 still agree. Any string
//! is a Maven version; the rules split it into numbers, qualifiers and sub-lists and order
//! the known qualifiers `alpha < beta < milestone < rc < snapshot < "" (= ga, final,
//! release) < sp`, unknown ones after them alphabetically.
//!
//! Two small departures from Java, neither reachable by a real version: digits are the
//! ASCII digits only (Java's `Character.isDigit` also takes other scripts' digits), and a
//! version Java would reject with an exception is reported as invalid instead.

use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    /// A number of up to 9 digits (Java's `IntItem`).
    Int(u32),
    /// 10 to 18 digits (`LongItem`).
    Long(u64),
    /// More digits (`BigIntegerItem`): the digits without leading zeros.
    Big(String),
    /// A qualifier, already lower-cased and aliased (`StringItem`).
    Str(String),
    /// A qualifier followed by a number, as in `alpha1` (`CombinationItem`).
    Comb(String, Box<Item>),
    /// A sub-list, started by `-` or a letter/digit transition (`ListItem`).
    List(Vec<Item>),
}

const RELEASE_INDEX: u8 = 5;
const MAX_VERSION_LENGTH: usize = 256;

/// `comparableQualifier` as an order key: known qualifiers by their index, unknown ones
/// after all of them, alphabetically (Java compares UTF-16 code units).
fn qualifier_key(q: &str) -> (u8, &str) {
    match q {
        "ga" | "final" | "release" | "" => (RELEASE_INDEX, ""),
        "alpha" => (0, ""),
        "beta" => (1, ""),
        "milestone" => (2, ""),
        "rc" => (3, ""),
        "snapshot" => (4, ""),
        "sp" => (6, ""),
        other => (7, other),
    }
}

fn cmp_qualifiers(a: &str, b: &str) -> Ordering {
    let (ia, sa) = qualifier_key(a);
    let (ib, sb) = qualifier_key(b);
    ia.cmp(&ib)
        .then_with(|| sa.encode_utf16().cmp(sb.encode_utf16()))
}

fn string_item(value: &str, followed_by_digit: bool) -> String {
    let v = if followed_by_digit && value.chars().count() == 1 {
        match value {
            "a" => "alpha",
            "b" => "beta",
            "m" => "milestone",
            other => other,
        }
    } else {
        value
    };
    if v == "cr" {
        "rc".to_string()
    } else {
        v.to_string()
    }
}

fn number_item(digits: &str) -> Result<Item, String> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("Maven cannot read {digits:?} as a number"));
    }
    let stripped = match digits.find(|c| c != '0') {
        Some(i) => &digits[i..],
        None => "0",
    };
    let len = stripped.len();
    if len <= 9 {
        stripped
            .parse::<u32>()
            .map(Item::Int)
            .map_err(|e| e.to_string())
    } else if len <= 18 {
        stripped
            .parse::<u64>()
            .map(Item::Long)
            .map_err(|e| e.to_string())
    } else {
        let value = stripped.trim_start_matches('0');
        Ok(Item::Big(if value.is_empty() {
            "0".into()
        } else {
            value.into()
        }))
    }
}

fn parse_item(is_combination: bool, is_digit: bool, buf: &str) -> Result<Item, String> {
    if is_combination {
        let value = buf.replace('-', "");
        let index = value.find(|c: char| c.is_ascii_digit()).unwrap_or(0);
        let digits = number_item(&value[index..])?;
        Ok(Item::Comb(
            string_item(&value[..index], true),
            Box::new(digits),
        ))
    } else if is_digit {
        number_item(buf)
    } else {
        Ok(Item::Str(string_item(buf, false)))
    }
}

impl Item {
    fn is_null(&self) -> bool {
        match self {
            Item::Int(v) => *v == 0,
            Item::Long(v) => *v == 0,
            Item::Big(v) => v == "0",
            Item::Str(s) => s.is_empty(),
            Item::Comb(..) => false,
            Item::List(l) => l.is_empty(),
        }
    }

    fn is_number(&self) -> bool {
        matches!(self, Item::Int(_) | Item::Long(_) | Item::Big(_))
    }

    /// `Item.compareTo(item)`, with `None` for Java's `null` (a missing item).
    fn compare(&self, other: Option<&Item>) -> Ordering {
        use Ordering::{Equal, Greater, Less};
        match self {
            Item::Int(_) | Item::Long(_) | Item::Big(_) => match other {
                None => {
                    if self.is_null() {
                        Equal
                    } else {
                        Greater
                    }
                }
                Some(o) if o.is_number() => cmp_numbers(self, o),
                Some(_) => Greater,
            },
            Item::Str(s) => match other {
                None => cmp_qualifiers(s, ""),
                Some(o) if o.is_number() => Less,
                Some(Item::Str(t)) => cmp_qualifiers(s, t),
                Some(Item::Comb(t, digits)) => match cmp_qualifiers(s, t) {
                    // `ga` against `ga1`: the number decides.
                    Equal if cmp_qualifiers(s, "") == Equal => digits.compare(None).reverse(),
                    Equal => Less,
                    r => r,
                },
                Some(list @ Item::List(_)) => list.compare(Some(self)).reverse(),
                Some(_) => Less,
            },
            Item::Comb(s, digits) => match other {
                None => match cmp_qualifiers(s, "") {
                    Equal => digits.compare(None),
                    r => r,
                },
                Some(o) if o.is_number() => Less,
                Some(Item::Str(t)) => match cmp_qualifiers(s, t) {
                    Equal if cmp_qualifiers(s, "") == Equal => digits.compare(None),
                    Equal => Greater,
                    r => r,
                },
                Some(list @ Item::List(_)) => list.compare(Some(self)).reverse(),
                Some(Item::Comb(t, d)) => match cmp_qualifiers(s, t) {
                    Equal => digits.compare(Some(d)),
                    r => r,
                },
                Some(_) => Equal,
            },
            Item::List(items) => match other {
                None => {
                    for i in items {
                        let r = i.compare(None);
                        if r != Equal {
                            return r;
                        }
                    }
                    Equal
                }
                Some(o) if o.is_number() => Less,
                Some(scalar @ (Item::Str(_) | Item::Comb(..))) => {
                    // A list against a qualifier: its first item against the qualifier, the
                    // rest against nothing.
                    let mut r = match items.first() {
                        None => scalar.compare(None).reverse(),
                        Some(first) => first.compare(Some(scalar)),
                    };
                    for i in items.iter().skip(1) {
                        if r != Equal {
                            break;
                        }
                        r = i.compare(None);
                    }
                    r
                }
                Some(Item::List(others)) => cmp_lists(items, others),
                Some(_) => Equal,
            },
        }
    }
}

/// `ListItem.compareTo(ListItem)`: item by item, a missing item compared as `null`.
fn cmp_lists(items: &[Item], others: &[Item]) -> Ordering {
    let n = items.len().max(others.len());
    for k in 0..n {
        let r = match (items.get(k), others.get(k)) {
            (None, None) => Ordering::Equal,
            (None, Some(r)) => r.compare(None).reverse(),
            (Some(l), r) => l.compare(r),
        };
        if r != Ordering::Equal {
            return r;
        }
    }
    Ordering::Equal
}

fn cmp_numbers(a: &Item, b: &Item) -> Ordering {
    match (a, b) {
        (Item::Int(x), Item::Int(y)) => x.cmp(y),
        (Item::Long(x), Item::Long(y)) => x.cmp(y),
        (Item::Big(x), Item::Big(y)) => x.len().cmp(&y.len()).then_with(|| x.cmp(y)),
        // Different kinds: the kind with more digits is larger (Java compares by type).
        (Item::Int(_), _) | (Item::Long(_), Item::Big(_)) => Ordering::Less,
        _ => Ordering::Greater,
    }
}

/// `ListItem.normalize`: drop trailing nulls ("1.0" = "1") and nulls before qualifiers.
fn normalize(items: &mut Vec<Item>) {
    let mut i = items.len();
    while i > 0 {
        i -= 1;
        if !items[i].is_null() {
            continue;
        }
        let remove = match items.get(i + 1) {
            None | Some(Item::Str(_)) => true,
            Some(Item::List(next)) => matches!(next.first(), Some(Item::Comb(..) | Item::Str(_))),
            Some(_) => false,
        };
        if remove {
            items.remove(i);
        }
    }
    // Removing a zero prefix must not leave an extra level of nesting.
    if items.len() == 1
        && let Some(Item::List(inner)) = items.first_mut()
    {
        let inner = std::mem::take(inner);
        *items = inner;
    }
}

/// A Maven version with `ComparableVersion`'s order.
#[derive(Debug, Clone)]
pub struct MavenVersion {
    items: Vec<Item>,
}

impl MavenVersion {
    /// `new ComparableVersion(s)`.
    pub fn parse(version: &str) -> Result<MavenVersion, String> {
        // Maven bounds the input: nesting depth and number sizes grow with the length.
        if version.encode_utf16().count() > MAX_VERSION_LENGTH {
            return Err(format!(
                "it is longer than Maven's limit of {MAX_VERSION_LENGTH} characters"
            ));
        }
        let lower: Vec<char> = version.to_lowercase().chars().collect();
        let text = |a: usize, b: usize| -> String { lower[a..b].iter().collect() };
        // Each new sub-list is the last element of the previous one, so the nesting is a
        // chain: one Vec per depth, folded together at the end.
        let mut levels: Vec<Vec<Item>> = vec![Vec::new()];
        let mut is_digit = false;
        let mut is_combination = false;
        let mut start = 0;
        let n = lower.len();
        let mut i = 0;
        while i < n {
            let c = lower[i];
            let depth = levels.len() - 1;
            if c == '.' {
                let item = if i == start {
                    Item::Int(0)
                } else {
                    parse_item(is_combination, is_digit, &text(start, i))?
                };
                levels[depth].push(item);
                is_combination = false;
                start = i + 1;
            } else if c == '-' {
                if i == start {
                    levels[depth].push(Item::Int(0));
                } else {
                    // X-1 is read as X1.
                    if !is_digit && i != n - 1 && lower[i + 1].is_ascii_digit() {
                        is_combination = true;
                        i += 1;
                        continue;
                    }
                    let item = parse_item(is_combination, is_digit, &text(start, i))?;
                    levels[depth].push(item);
                }
                start = i + 1;
                if !levels[depth].is_empty() {
                    levels.push(Vec::new());
                }
                is_combination = false;
            } else if c.is_ascii_digit() {
                if !is_digit && i > start {
                    is_combination = true;
                    if !levels[depth].is_empty() {
                        levels.push(Vec::new());
                    }
                }
                is_digit = true;
            } else {
                if is_digit && i > start {
                    let item = parse_item(is_combination, true, &text(start, i))?;
                    levels[depth].push(item);
                    start = i;
                    levels.push(Vec::new());
                    is_combination = false;
                }
                is_digit = false;
            }
            i += 1;
        }
        if n > start {
            // 1.0.0.X1 < 1.0.0-X2: a trailing qualifier after '.' starts a sub-list.
            if !is_digit && levels.last().is_some_and(|l| !l.is_empty()) {
                levels.push(Vec::new());
            }
            let item = parse_item(is_combination, is_digit, &text(start, n))?;
            if let Some(last) = levels.last_mut() {
                last.push(item);
            }
        }
        let mut child: Option<Vec<Item>> = None;
        while let Some(mut level) = levels.pop() {
            if let Some(c) = child.take() {
                level.push(Item::List(c));
            }
            normalize(&mut level);
            child = Some(level);
        }
        Ok(MavenVersion {
            items: child.unwrap_or_default(),
        })
    }

    /// Java's `getCanonical()`.
    pub fn canonical(&self) -> String {
        fn write(items: &[Item], out: &mut String) {
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(if matches!(item, Item::List(_)) {
                        '-'
                    } else {
                        '.'
                    });
                }
                match item {
                    Item::Int(v) => out.push_str(&v.to_string()),
                    Item::Long(v) => out.push_str(&v.to_string()),
                    Item::Big(v) | Item::Str(v) => out.push_str(v),
                    Item::Comb(s, d) => {
                        out.push_str(s);
                        write(std::slice::from_ref(d), out);
                    }
                    Item::List(l) => write(l, out),
                }
            }
        }
        let mut out = String::new();
        write(&self.items, &mut out);
        out
    }

    /// Whether the first qualifier sorts before a release (alpha, beta, milestone, rc,
    /// snapshot), i.e. the version precedes the release it names.
    pub fn is_prerelease(&self) -> bool {
        fn first_qualifier(items: &[Item]) -> Option<&str> {
            for i in items {
                match i {
                    Item::Str(s) | Item::Comb(s, _) => return Some(s),
                    Item::List(l) => return first_qualifier(l),
                    _ => {}
                }
            }
            None
        }
        first_qualifier(&self.items).is_some_and(|q| qualifier_key(q).0 < RELEASE_INDEX)
    }
}

impl PartialEq for MavenVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for MavenVersion {}
impl PartialOrd for MavenVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for MavenVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_lists(&self.items, &other.items)
    }
}

/// One `[lower,upper)` restriction of a Maven version range.
#[derive(Debug, Clone)]
struct Restriction {
    lower: Option<MavenVersion>,
    lower_inclusive: bool,
    upper: Option<MavenVersion>,
    upper_inclusive: bool,
}

impl Restriction {
    fn contains(&self, v: &MavenVersion) -> bool {
        if let Some(l) = &self.lower {
            match l.cmp(v) {
                Ordering::Equal if !self.lower_inclusive => return false,
                Ordering::Greater => return false,
                _ => {}
            }
        }
        if let Some(u) = &self.upper {
            return match u.cmp(v) {
                Ordering::Equal => self.upper_inclusive,
                o => o == Ordering::Greater,
            };
        }
        true
    }
}

/// A Maven version range (`VersionRange.createFromVersionSpec`): `[1.0,2.0)`,
/// `(,1.0],[1.2,)`, `[1.5]`, or a plain `1.0`, which is only a recommendation and
/// restricts nothing.
#[derive(Debug, Clone)]
pub struct MavenRange {
    restrictions: Vec<Restriction>,
}

impl MavenRange {
    pub fn parse(spec: &str) -> Result<MavenRange, String> {
        let mut restrictions: Vec<Restriction> = Vec::new();
        let mut process = spec;
        let mut upper_bound: Option<MavenVersion> = None;
        while process.starts_with('[') || process.starts_with('(') {
            let i1 = process.find(')');
            let i2 = process.find(']');
            let index = match (i1, i2) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
                (None, None) => return Err("a range is not closed by ']' or ')'".into()),
            };
            let r = parse_restriction(&process[..=index])?;
            if upper_bound.is_some() {
                match (&r.lower, &upper_bound) {
                    (Some(l), Some(u)) if l >= u => {}
                    _ => return Err("its ranges overlap".into()),
                }
            }
            upper_bound.clone_from(&r.upper);
            restrictions.push(r);
            process = process[index + 1..].trim();
            if let Some(p) = process.strip_prefix(',') {
                process = p.trim();
            }
        }
        if !process.is_empty() {
            if !restrictions.is_empty() {
                return Err("only bracketed ranges may be listed together".into());
            }
            MavenVersion::parse(process)?;
            restrictions.push(Restriction {
                lower: None,
                lower_inclusive: false,
                upper: None,
                upper_inclusive: false,
            });
        }
        Ok(MavenRange { restrictions })
    }

    /// `VersionRange.containsVersion`: any restriction holds.
    pub fn contains(&self, v: &MavenVersion) -> bool {
        self.restrictions.iter().any(|r| r.contains(v))
    }
}

fn parse_restriction(spec: &str) -> Result<Restriction, String> {
    let lower_inclusive = spec.starts_with('[');
    let upper_inclusive = spec.ends_with(']');
    let inner = spec
        .get(1..spec.len().saturating_sub(1))
        .unwrap_or("")
        .trim();
    match inner.find(',') {
        None => {
            if !lower_inclusive || !upper_inclusive {
                return Err("a single version must be written [1.0]".into());
            }
            let v = MavenVersion::parse(inner)?;
            Ok(Restriction {
                lower: Some(v.clone()),
                lower_inclusive,
                upper: Some(v),
                upper_inclusive,
            })
        }
        Some(i) => {
            let lo = inner[..i].trim();
            let hi = inner[i + 1..].trim();
            let lower = if lo.is_empty() {
                None
            } else {
                Some(MavenVersion::parse(lo)?)
            };
            let upper = if hi.is_empty() {
                None
            } else {
                Some(MavenVersion::parse(hi)?)
            };
            if let (Some(l), Some(u)) = (&lower, &upper) {
                let c = u.cmp(l);
                if c == Ordering::Less
                    || (c == Ordering::Equal && (!lower_inclusive || !upper_inclusive))
                {
                    return Err("its upper bound is below its lower bound".into());
                }
            }
            Ok(Restriction {
                lower,
                lower_inclusive,
                upper,
                upper_inclusive,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> MavenVersion {
        MavenVersion::parse(s).expect(s)
    }

    #[test]
    fn qualifiers_order_as_maven_documents() {
        let order = [
            "1-alpha1",
            "1-beta1",
            "1-milestone1",
            "1-rc1",
            "1-snapshot",
            "1",
            "1-sp1",
            "1-abc",
            "1.0.1",
        ];
        for w in order.windows(2) {
            assert!(v(w[0]) < v(w[1]), "{} < {}", w[0], w[1]);
        }
        assert_eq!(v("1.0"), v("1"));
        assert_eq!(v("1-ga"), v("1"));
        assert_eq!(v("1.0.CR1"), v("1.0-rc1"));
        assert!(v("1.0.RC2") < v("1.0-RC3"));
    }

    #[test]
    fn canonical_form_matches_maven() {
        assert_eq!(v("1.0alpha1").canonical(), "1-alpha1");
        assert_eq!(v("1.0.0-SNAPSHOT").canonical(), "1-snapshot");
    }

    #[test]
    fn ranges_follow_version_range() {
        let r = MavenRange::parse("[1.0,2.0),[3.0,)").expect("range");
        assert!(r.contains(&v("1.5")) && !r.contains(&v("2.0")) && r.contains(&v("3.1")));
        assert!(MavenRange::parse("[2.0,1.0]").is_err());
        assert!(MavenRange::parse("(1.0]").is_err());
        assert!(MavenRange::parse("1.0").expect("soft").contains(&v("9")));
    }
}
