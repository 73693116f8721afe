//! Shared plumbing: loading a file's text within the limits, turning parser errors into
//! [`ReadError`]s with lines, and finding the line of a JSON key.

use std::collections::HashMap;

use crate::Limits;
use crate::error::{ReadError, ReadErrorKind};
use crate::tree::Tree;

/// Loads a file as text, refusing it before parsing when it is too large, binary or not
/// UTF-8. `Ok(None)` when the tree has no such file.
pub(crate) fn load(
    tree: &dyn Tree,
    path: &str,
    limits: &Limits,
) -> Result<Option<String>, ReadError> {
    let io_err = |e: std::io::Error| ReadError::new(path, None, ReadErrorKind::Io, e.to_string());
    // The size is asked first so an oversized file is refused from metadata, unread.
    match tree.size(path).map_err(io_err)? {
        None => return Ok(None),
        Some(size) if size > limits.max_bytes => return Err(too_large(path, size, limits)),
        Some(_) => {}
    }
    let Some(bytes) = tree.read(path).map_err(io_err)? else {
        return Ok(None);
    };
    // The tree may have changed (or lied) between the two calls: check what was read too.
    if bytes.len() as u64 > limits.max_bytes {
        return Err(too_large(path, bytes.len() as u64, limits));
    }
    decode(path, bytes).map(Some)
}

fn too_large(path: &str, size: u64, limits: &Limits) -> ReadError {
    ReadError::new(
        path,
        None,
        ReadErrorKind::TooLarge,
        format!(
            "file is {size} bytes, over the limit of {} bytes; not parsed",
            limits.max_bytes
        ),
    )
}

/// Bytes to text: refuses NUL bytes (binary files) and invalid UTF-8, naming where; drops a
/// leading byte-order mark, which some Windows editors write and no parser here expects.
pub(crate) fn decode(path: &str, bytes: Vec<u8>) -> Result<String, ReadError> {
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        let line = line_at_bytes(&bytes, at);
        return Err(ReadError::new(
            path,
            Some(line),
            ReadErrorKind::NotText,
            format!("binary file: NUL byte at offset {at}"),
        ));
    }
    match String::from_utf8(bytes) {
        Ok(mut s) => {
            if s.starts_with('\u{feff}') {
                s.drain(..'\u{feff}'.len_utf8());
            }
            Ok(s)
        }
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let line = line_at_bytes(e.as_bytes(), at);
            Err(ReadError::new(
                path,
                Some(line),
                ReadErrorKind::NotText,
                format!("not UTF-8: invalid byte at offset {at}"),
            ))
        }
    }
}

fn line_at_bytes(bytes: &[u8], offset: usize) -> u32 {
    let end = offset.min(bytes.len());
    let newlines = bytes
        .get(..end)
        .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
    to_u32(newlines + 1)
}

pub(crate) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Maps byte offsets to 1-based lines.
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    pub(crate) fn line(&self, offset: usize) -> u32 {
        // partition_point gives the number of line starts at or before the offset.
        to_u32(self.starts.partition_point(|&s| s <= offset).max(1))
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

/// Parses JSON, refusing nesting deeper than the limit before serde_json recurses into it.
pub(crate) fn parse_json(
    path: &str,
    text: &str,
    limits: &Limits,
) -> Result<serde_json::Value, ReadError> {
    check_json_depth(path, text, limits.max_depth)?;
    serde_json::from_str(text).map_err(|e| {
        let line = (e.line() > 0).then(|| to_u32(e.line()));
        let message = match e.classify() {
            serde_json::error::Category::Eof => {
                format!("unexpected end of file (truncated?): {e}")
            }
            _ => format!("invalid JSON: {e}"),
        };
        ReadError::new(path, line, ReadErrorKind::Syntax, message)
    })
}

/// A cheap iterative scan for `[`/`{` nesting outside strings. serde_json has its own limit
/// (128), but this one is ours, is reported as [`ReadErrorKind::TooDeep`], and keeps the
/// limit the same for every format.
fn check_json_depth(path: &str, text: &str, max_depth: usize) -> Result<(), ReadError> {
    let mut depth = 0usize;
    let mut line = 1u32;
    let mut in_string = false;
    let mut escaped = false;
    for b in text.bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'\n' => line = line.saturating_add(1),
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return Err(ReadError::new(
                        path,
                        Some(line),
                        ReadErrorKind::TooDeep,
                        format!("JSON nests deeper than {max_depth} levels"),
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// One step of a JSON path: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// Lines of object keys in a JSON text, by path, for the paths a filter wants.
///
/// serde_json forgets positions; lock files need the line of each package's key for reports.
/// The text has already been parsed by serde_json, so this scanner may assume valid JSON; on
/// anything unexpected it simply stops recording (a missing line is harmless, a panic is not).
pub(crate) struct JsonLines {
    lines: HashMap<Vec<Seg>, u32>,
}

impl JsonLines {
    pub(crate) fn scan(text: &str, want: impl Fn(&[Seg]) -> bool) -> Self {
        #[derive(Debug)]
        enum Frame {
            Object { key: Option<String> },
            Array { index: usize },
        }
        let mut lines = HashMap::new();
        let mut stack: Vec<Frame> = Vec::new();
        let mut path: Vec<Seg> = Vec::new();
        let mut line = 1u32;
        let bytes = text.as_bytes();
        let mut i = 0usize;
        // After a value completes inside an object, the next string is a key again.
        let mut expect_key = false;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'\n' => {
                    line = line.saturating_add(1);
                    i += 1;
                }
                b'{' => {
                    stack.push(Frame::Object { key: None });
                    expect_key = true;
                    i += 1;
                }
                b'[' => {
                    stack.push(Frame::Array { index: 0 });
                    expect_key = false;
                    i += 1;
                }
                b'}' | b']' => {
                    stack.pop();
                    expect_key = false;
                    i += 1;
                }
                b',' => {
                    match stack.last_mut() {
                        Some(Frame::Object { key }) => {
                            *key = None;
                            expect_key = true;
                        }
                        Some(Frame::Array { index }) => *index += 1,
                        None => {}
                    }
                    i += 1;
                }
                b'"' => {
                    let start_line = line;
                    let Some((s, next)) = read_json_string(text, i) else {
                        break;
                    };
                    i = next;
                    if expect_key {
                        if let Some(Frame::Object { key }) = stack.last_mut() {
                            *key = Some(s.clone());
                        }
                        expect_key = false;
                        // Build the full path of this key and record it when wanted.
                        path.clear();
                        for f in &stack {
                            match f {
                                Frame::Object { key: Some(k) } => path.push(Seg::Key(k.clone())),
                                Frame::Object { key: None } => {}
                                Frame::Array { index } => path.push(Seg::Index(*index)),
                            }
                        }
                        if want(&path) {
                            lines.entry(path.clone()).or_insert(start_line);
                        }
                    }
                }
                _ => i += 1,
            }
        }
        JsonLines { lines }
    }

    pub(crate) fn get(&self, path: &[Seg]) -> Option<u32> {
        self.lines.get(path).copied()
    }
}

/// Reads a JSON string starting at the opening quote; returns its decoded text and the index
/// after the closing quote.
fn read_json_string(text: &str, start: usize) -> Option<(String, usize)> {
    let rest = text.get(start + 1..)?;
    let mut out = String::new();
    let mut chars = rest.char_indices();
    while let Some((off, c)) = chars.next() {
        match c {
            '"' => return Some((out, start + 1 + off + 1)),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'u' => {
                        let hex: String = (0..4)
                            .filter_map(|_| chars.next().map(|(_, h)| h))
                            .collect();
                        let code = u32::from_str_radix(&hex, 16).ok()?;
                        if (0xD800..0xDC00).contains(&code) {
                            // A surrogate pair: `\uD83D\uDE00`.
                            let (_, bs) = chars.next()?;
                            let (_, u) = chars.next()?;
                            if bs != '\\' || u != 'u' {
                                return None;
                            }
                            let hex2: String = (0..4)
                                .filter_map(|_| chars.next().map(|(_, h)| h))
                                .collect();
                            let low = u32::from_str_radix(&hex2, 16).ok()?;
                            let combined =
                                0x10000 + ((code - 0xD800) << 10) + (low.checked_sub(0xDC00)?);
                            out.push(char::from_u32(combined)?);
                        } else {
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                    }
                    other => out.push(other),
                }
            }
            other => out.push(other),
        }
    }
    None
}

/// Shape helpers over serde_json values: each names the key that holds the wrong value.
pub(crate) struct Shape<'a> {
    pub(crate) path: &'a str,
}

impl<'a> Shape<'a> {
    /// An optional object member: absent or `null` → `None`; present but not an object → error.
    pub(crate) fn object<'v>(
        &self,
        value: &'v serde_json::Value,
        key: &str,
        line: Option<u32>,
    ) -> Result<Option<&'v serde_json::Map<String, serde_json::Value>>, ReadError> {
        match value.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::Object(m)) => Ok(Some(m)),
            Some(_) => Err(ReadError::shape(self.path, line, key, "an object")),
        }
    }

    pub(crate) fn array<'v>(
        &self,
        value: &'v serde_json::Value,
        key: &str,
        line: Option<u32>,
    ) -> Result<Option<&'v Vec<serde_json::Value>>, ReadError> {
        match value.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::Array(a)) => Ok(Some(a)),
            Some(_) => Err(ReadError::shape(self.path, line, key, "an array")),
        }
    }

    /// An optional string member; a number is accepted and spelled as JSON spells it (YAML
    /// turns unquoted `5.4` into a number).
    pub(crate) fn string(
        &self,
        value: &serde_json::Value,
        key: &str,
        line: Option<u32>,
    ) -> Result<Option<String>, ReadError> {
        match value.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
            Some(serde_json::Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(ReadError::shape(self.path, line, key, "a string")),
        }
    }

    pub(crate) fn root_object<'v>(
        &self,
        value: &'v serde_json::Value,
    ) -> Result<&'v serde_json::Map<String, serde_json::Value>, ReadError> {
        value.as_object().ok_or_else(|| {
            ReadError::new(
                self.path,
                Some(1),
                ReadErrorKind::Shape,
                "the document should be an object",
            )
        })
    }
}

pub(crate) fn json_bool(value: &serde_json::Value, key: &str) -> bool {
    value
        .get(key)
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

// ---------------------------------------------------------------------------------------------
// TOML

/// A parsed TOML document with spans (byte ranges) for every key and value.
pub(crate) type TomlDoc<'i> = toml::de::DeTable<'i>;
pub(crate) type TomlValue<'i> = toml::de::DeValue<'i>;
pub(crate) type Spanned<T> = toml::Spanned<T>;

/// Parses TOML keeping spans. The toml crate guards its own recursion (80 levels); an error
/// from that guard is reported as [`ReadErrorKind::TooDeep`].
pub(crate) fn parse_toml<'i>(
    path: &str,
    text: &'i str,
    index: &LineIndex,
) -> Result<TomlDoc<'i>, ReadError> {
    match toml::de::DeTable::parse(text) {
        Ok(doc) => Ok(doc.into_inner()),
        Err(e) => {
            let line = e.span().map(|s| index.line(s.start));
            let message = e.message().trim().to_string();
            let kind = if message.contains("recursion") {
                ReadErrorKind::TooDeep
            } else {
                ReadErrorKind::Syntax
            };
            Err(ReadError::new(
                path,
                line,
                kind,
                format!("invalid TOML: {message}"),
            ))
        }
    }
}

/// Typed access to a TOML table with errors that name the key.
pub(crate) struct TomlShape<'a> {
    pub(crate) path: &'a str,
    pub(crate) index: &'a LineIndex,
}

impl<'a> TomlShape<'a> {
    pub(crate) fn line_of<T>(&self, s: &Spanned<T>) -> u32 {
        self.index.line(s.span().start)
    }

    fn wrong<T>(&self, v: &Spanned<T>, key: &str, expected: &str) -> ReadError {
        ReadError::shape(self.path, Some(self.line_of(v)), key, expected)
    }

    pub(crate) fn table<'t, 'i>(
        &self,
        t: &'t TomlDoc<'i>,
        key: &str,
    ) -> Result<Option<&'t TomlDoc<'i>>, ReadError> {
        match t.get(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                TomlValue::Table(inner) => Ok(Some(inner)),
                _ => Err(self.wrong(v, key, "a table")),
            },
        }
    }

    pub(crate) fn array<'t, 'i>(
        &self,
        t: &'t TomlDoc<'i>,
        key: &str,
    ) -> Result<Option<&'t toml::de::DeArray<'i>>, ReadError> {
        match t.get(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                TomlValue::Array(a) => Ok(Some(a)),
                _ => Err(self.wrong(v, key, "an array")),
            },
        }
    }

    pub(crate) fn string<'t>(
        &self,
        t: &'t TomlDoc<'_>,
        key: &str,
    ) -> Result<Option<&'t str>, ReadError> {
        match t.get(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                TomlValue::String(s) => Ok(Some(s.as_ref())),
                _ => Err(self.wrong(v, key, "a string")),
            },
        }
    }

    /// The line of a key in a table (where the key is written).
    pub(crate) fn key_line(&self, t: &TomlDoc<'_>, key: &str) -> Option<u32> {
        t.get_key_value(key).map(|(k, _)| self.line_of(k))
    }
}

pub(crate) fn toml_str<'v>(v: &'v TomlValue<'_>) -> Option<&'v str> {
    match v {
        TomlValue::String(s) => Some(s.as_ref()),
        _ => None,
    }
}

pub(crate) fn toml_table<'v, 'i>(v: &'v TomlValue<'i>) -> Option<&'v TomlDoc<'i>> {
    match v {
        TomlValue::Table(t) => Some(t),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// YAML

/// The key of a block-mapping line (`key: value`, `"key": value`, `'key':`), unquoted; `None`
/// when the line holds no key. Used to find the line of a lock entry, which the generic parse
/// forgets.
pub(crate) fn yaml_line_key(line: &str) -> Option<String> {
    let line = line.trim();
    if let Some(rest) = line.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.push(chars.next()?),
                '"' => return chars.as_str().starts_with(':').then_some(out),
                c => out.push(c),
            }
        }
        return None;
    }
    if let Some(rest) = line.strip_prefix('\'') {
        let end = rest.find("':")?;
        return Some(rest.get(..end)?.replace("''", "'"));
    }
    if let Some(key) = line.strip_suffix(':') {
        return Some(key.to_string());
    }
    line.split_once(": ").map(|(k, _)| k.to_string())
}

/// The deepest YAML nesting read, whatever the limits say. serde-saphyr deserialises
/// recursively and, in debug builds, uses about 28 KiB of stack per level: 32 levels stay under
/// 1 MiB (pnpm and yarn lock files nest 4 to 6 levels).
const YAML_MAX_DEPTH: usize = 32;

/// Parses YAML into a generic value with serde-saphyr's budgets: nesting depth from the limits
/// (at most [`YAML_MAX_DEPTH`]), alias and anchor counts capped (lock files use neither, so a
/// bomb of them is refused early), node and event counts generous enough for the largest real
/// lock files.
pub(crate) fn parse_yaml(
    path: &str,
    text: &str,
    limits: &Limits,
) -> Result<serde_json::Value, ReadError> {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = limits.max_depth.min(YAML_MAX_DEPTH);
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_recorded_anchor_events = 100_000;
    budget.max_nodes = 50_000_000;
    budget.max_events = 100_000_000;
    budget.max_documents = 1;
    let options = serde_saphyr::options! { budget: Some(budget) };
    serde_saphyr::from_str_with_options::<serde_json::Value>(text, options).map_err(|e| {
        let line = e
            .location()
            .map(|l| l.line())
            .filter(|&l| l > 0)
            .map(|l| u32::try_from(l).unwrap_or(u32::MAX));
        let rendered = e.to_string();
        // The rendered error may carry a source snippet; the first line is the message.
        let first = rendered.lines().next().unwrap_or("").trim();
        let first = first.strip_prefix("error: ").unwrap_or(first).to_string();
        let kind = yaml_error_kind(&e, &first);
        let message = match kind {
            ReadErrorKind::TooDeep => format!(
                "YAML nests deeper than {} levels: {first}",
                limits.max_depth.min(YAML_MAX_DEPTH)
            ),
            ReadErrorKind::Budget => format!(
                "YAML over budget (anchors and aliases expanding too far, or too many nodes): \
                 {first}"
            ),
            _ => format!("invalid YAML: {first}"),
        };
        ReadError::new(path, line, kind, message)
    })
}

/// Classifies a serde-saphyr error from its variant (not its text, which quotes the input).
fn yaml_error_kind(e: &serde_saphyr::Error, message: &str) -> ReadErrorKind {
    use serde_saphyr::Error;
    use serde_saphyr::budget::BudgetBreach;
    let mut e = e;
    while let Error::WithSnippet { error, .. } | Error::AliasError { error, .. } = e {
        e = error;
    }
    match e {
        Error::Budget {
            breach: BudgetBreach::Depth { .. },
            ..
        } => ReadErrorKind::TooDeep,
        Error::Budget { .. } => ReadErrorKind::Budget,
        // The parser's own guard on flow collections (`[[[[...`).
        _ if message.contains("recursion limit") => ReadErrorKind::TooDeep,
        _ => ReadErrorKind::Syntax,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_counts_from_one() {
        let idx = LineIndex::new("a\nbc\n\nd");
        assert_eq!(idx.line(0), 1);
        assert_eq!(idx.line(1), 1);
        assert_eq!(idx.line(2), 2);
        assert_eq!(idx.line(5), 3);
        assert_eq!(idx.line(6), 4);
    }

    #[test]
    fn json_key_lines_follow_paths() {
        let text = "{\n \"a\": {\n  \"b\": 1,\n  \"c\\u00e9\": [\n   {\"d\": 2},\n   {\"d\": 3}\n  ]\n },\n \"e\": \"}\"\n}";
        let lines = JsonLines::scan(text, |_| true);
        let k = |s: &str| Seg::Key(s.to_string());
        assert_eq!(lines.get(&[k("a")]), Some(2));
        assert_eq!(lines.get(&[k("a"), k("b")]), Some(3));
        assert_eq!(lines.get(&[k("a"), k("cé")]), Some(4));
        assert_eq!(
            lines.get(&[k("a"), k("cé"), Seg::Index(1), k("d")]),
            Some(6)
        );
        assert_eq!(lines.get(&[k("e")]), Some(9));
    }

    #[test]
    fn deep_json_is_refused_before_parsing() {
        let text = "[".repeat(100_000);
        let err = parse_json("x.json", &text, &Limits::default()).unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::TooDeep);
    }

    #[test]
    fn decode_refuses_binary_and_bad_utf8() {
        let e = decode("f", b"ab\ncd\0".to_vec()).unwrap_err();
        assert_eq!((e.kind, e.line), (ReadErrorKind::NotText, Some(2)));
        let e = decode("f", vec![b'a', 0xff]).unwrap_err();
        assert_eq!(e.kind, ReadErrorKind::NotText);
        assert_eq!(decode("f", "\u{feff}x".as_bytes().to_vec()).unwrap(), "x");
    }
}
