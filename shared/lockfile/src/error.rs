//! The one error type every reader returns.
//!
//! A reader's error must let a person fix the input without opening the code: it always names
//! the file, and the line where the format has lines (design, section 5).

use std::fmt;

/// Why a dependency file could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadErrorKind {
    /// The file is bigger than [`crate::Limits::max_bytes`]; it was not parsed.
    TooLarge,
    /// The file is binary (a NUL byte) or not UTF-8.
    NotText,
    /// The file is not valid JSON, TOML, YAML, XML or line format (truncated, bad token, ...).
    Syntax,
    /// The file parses but a key holds the wrong kind of value (e.g. `packages` is a string).
    Shape,
    /// The file nests deeper than [`crate::Limits::max_depth`] (refused before any recursion
    /// could exhaust the stack).
    TooDeep,
    /// A parser budget was exceeded (YAML aliases, events, nodes; too many included files).
    Budget,
    /// The tree could not be read (permissions, a path refused by the tree, ...).
    Io,
    /// The file is not in the tree.
    NotFound,
    /// The path is not a dependency file this crate reads.
    Unsupported,
}

impl ReadErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadErrorKind::TooLarge => "too large",
            ReadErrorKind::NotText => "not text",
            ReadErrorKind::Syntax => "syntax",
            ReadErrorKind::Shape => "shape",
            ReadErrorKind::TooDeep => "too deep",
            ReadErrorKind::Budget => "budget",
            ReadErrorKind::Io => "io",
            ReadErrorKind::NotFound => "not found",
            ReadErrorKind::Unsupported => "unsupported",
        }
    }
}

impl fmt::Display for ReadErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A dependency file that could not be read. Displays as `Cargo.lock line 12: expected ...`
/// (or `Cargo.lock: ...` where no line applies).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ReadError {
    /// The file's path in the tree.
    pub path: String,
    /// 1-based line of the problem, where the format has lines and the parser told.
    pub line: Option<u32>,
    pub kind: ReadErrorKind,
    /// What was wrong, for a person.
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{} line {}: {}", self.path, line, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

impl ReadError {
    pub fn new(
        path: impl Into<String>,
        line: Option<u32>,
        kind: ReadErrorKind,
        message: impl Into<String>,
    ) -> Self {
        ReadError {
            path: path.into(),
            line,
            kind,
            message: message.into(),
        }
    }

    /// A wrong-shape error: `key` names where in the document the wrong value sits.
    pub(crate) fn shape(path: &str, line: Option<u32>, key: &str, expected: &str) -> Self {
        ReadError::new(
            path,
            line,
            ReadErrorKind::Shape,
            format!("`{key}` should be {expected}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_file_and_the_line() {
        let e = ReadError::new(
            "Cargo.lock",
            Some(12),
            ReadErrorKind::Syntax,
            "expected `=`",
        );
        assert_eq!(e.to_string(), "Cargo.lock line 12: expected `=`");
        let e = ReadError::new("a/yarn.lock", None, ReadErrorKind::TooLarge, "too big");
        assert_eq!(e.to_string(), "a/yarn.lock: too big");
    }
}
