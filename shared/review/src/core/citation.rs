//! A model's citation of a file: the lines it says it opened and what it says they hold.
//! Proven checks every citation against the file itself (never the model's word): the
//! lines exist at the revision and hold the quoted text. A second reviewer's refutation and
//! an answer's claims count only through this check.

use serde::{Deserialize, Serialize};

/// Lines of one file a model cites, with the text it says they hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    pub path: String,
    /// 1-based, inclusive.
    pub line_start: u32,
    pub line_end: u32,
    /// What the lines say, in the model's quotation (compared with white space folded).
    #[serde(default)]
    pub quote: String,
}

/// The most lines one citation may span (a citation of a whole file shows nothing).
pub const MAX_CITED_LINES: u32 = 80;

/// The fewest characters other than white space a quote holds unless it is whole lines of
/// the cited range: a fragment such as `open(` is in almost any file, so it shows nothing.
pub const MIN_QUOTE_CHARS: usize = 12;

/// Runs of white space as one space, trimmed: a quote reflowed by a model still matches.
fn folded(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Citation {
    /// `PATH:A-B` (or `PATH:A`).
    pub fn place(&self) -> String {
        if self.line_start == self.line_end {
            format!("{}:{}", self.path, self.line_start)
        } else {
            format!("{}:{}-{}", self.path, self.line_start, self.line_end)
        }
    }

    /// Whether `text` (the cited file at the revision; None when it is not there) holds
    /// the citation: the lines exist and hold the quote. The error names what is wrong.
    pub fn check(&self, text: Option<&str>) -> Result<(), String> {
        let place = self.place();
        let Some(text) = text else {
            return Err(format!(
                "{place}: the file {:?} is not at the revision",
                self.path
            ));
        };
        if self.line_start == 0 || self.line_end < self.line_start {
            return Err(format!("{place}: not a range of lines"));
        }
        if self.line_end - self.line_start >= MAX_CITED_LINES {
            return Err(format!(
                "{place}: spans more than {MAX_CITED_LINES} lines, so it shows nothing in particular"
            ));
        }
        let lines: Vec<&str> = text.lines().collect();
        if self.line_end as usize > lines.len() {
            return Err(format!(
                "{place}: the file has {} lines, so these lines do not exist",
                lines.len()
            ));
        }
        let quote = folded(&self.quote);
        if quote.is_empty() {
            return Err(format!(
                "{place}: quotes nothing the lines could be checked against"
            ));
        }
        let cited = folded(&lines[self.line_start as usize - 1..self.line_end as usize].join("\n"));
        if !cited.contains(&quote) {
            return Err(format!(
                "{place}: the lines do not say {:?}; they say {:?}",
                clip(&self.quote),
                clip(&cited)
            ));
        }
        let range = &lines[self.line_start as usize - 1..self.line_end as usize];
        let shown = quote.chars().filter(|c| !c.is_whitespace()).count();
        if shown < MIN_QUOTE_CHARS && !whole_lines(range, &quote) {
            return Err(format!(
                "{place}: the quote {:?} is neither whole lines of the range nor {MIN_QUOTE_CHARS} \
                 characters, so it shows nothing in particular",
                clip(&self.quote)
            ));
        }
        Ok(())
    }
}

/// Whether the (folded) quote is some run of whole lines of `range`, folded the same way.
fn whole_lines(range: &[&str], quote: &str) -> bool {
    (0..range.len())
        .any(|i| (i + 1..=range.len()).any(|j| folded(&range[i..j].join("\n")) == quote))
}

/// A file's text as a model reads it before citing it: each line numbered, at most
/// `budget` bytes, said so where it stops.
pub fn numbered(text: &str, budget: usize) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if out.len() + line.len() > budget {
            out.push_str("[the rest of the file is not shown]\n");
            break;
        }
        out.push_str(&format!("{:>5}  {line}\n", i + 1));
    }
    out
}

fn clip(text: &str) -> String {
    const MAX: usize = 160;
    if text.chars().count() <= MAX {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cite(path: &str, a: u32, b: u32, quote: &str) -> Citation {
        Citation {
            path: path.into(),
            line_start: a,
            line_end: b,
            quote: quote.into(),
        }
    }

    const CALC: &str = "def add(a, b):\n    # a comment\n    return a - b\n";

    #[test]
    fn a_citation_holds_only_where_its_lines_say_its_quote() {
        assert_eq!(
            cite("calc.py", 3, 3, "return a - b").check(Some(CALC)),
            Ok(())
        );
        assert_eq!(
            cite("calc.py", 1, 3, "def add(a, b): # a comment").check(Some(CALC)),
            Ok(()),
            "white space folded across lines"
        );
        let why = |c: Citation, text: Option<&str>| c.check(text).expect_err("refused");
        assert!(why(cite("calc.py", 1, 1, "return a - b"), Some(CALC)).contains("do not say"));
        assert!(why(cite("calc.py", 4, 9, "x"), Some(CALC)).contains("has 3 lines"));
        assert!(why(cite("calc.py", 0, 1, "def"), Some(CALC)).contains("not a range"));
        assert!(why(cite("calc.py", 2, 1, "def"), Some(CALC)).contains("not a range"));
        assert!(why(cite("calc.py", 1, 2, "  "), Some(CALC)).contains("quotes nothing"));
        assert!(why(cite("gone.py", 1, 1, "x"), None).contains("not at the revision"));
        assert!(why(cite("calc.py", 1, 500, "def"), Some(CALC)).contains("more than 80 lines"));
        assert_eq!(cite("a.py", 2, 2, "").place(), "a.py:2");
    }

    #[test]
    fn a_short_quote_counts_only_as_whole_lines_of_the_range() {
        let text = "with open(path) as f:\n    data = f.read()\n}\n";
        let why = |c: Citation| c.check(Some(text)).expect_err("refused");
        let short = why(cite("io.py", 1, 2, "open("));
        assert!(
            short.contains("neither whole lines of the range nor 12 characters"),
            "{short}"
        );
        assert!(why(cite("io.py", 1, 1, "as f:")).contains("neither whole lines"));
        assert_eq!(
            cite("io.py", 3, 3, "}").check(Some(text)),
            Ok(()),
            "a whole line"
        );
        assert_eq!(
            cite("io.py", 1, 2, "open(path) as").check(Some(text)),
            Ok(()),
            "12 characters besides white space"
        );
        assert_eq!(
            cite("io.py", 2, 3, "data = f.read() }").check(Some(text)),
            Ok(()),
            "whole lines across the range"
        );
        assert_eq!(cite("a.py", 2, 5, "").place(), "a.py:2-5");
    }
}
