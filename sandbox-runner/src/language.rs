//! The languages the sandbox runs tests for, and the test-runner conventions each brings.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A language with a sandbox image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// pytest.
    Python,
    /// cargo test.
    Rust,
    /// node --test (or jest through `npx jest`).
    Node,
    /// go test.
    Go,
}

impl Language {
    pub const ALL: [Language; 4] = [
        Language::Python,
        Language::Rust,
        Language::Node,
        Language::Go,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
            Language::Node => "node",
            Language::Go => "go",
        }
    }

    /// The name of the locally built image (scripts/sandbox-images).
    pub fn local_image(self) -> String {
        format!("proven-sandbox-{}:local", self.as_str())
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A language name that is not one of [`Language::ALL`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown language {0:?}: expected python, rust, node or go")]
pub struct UnknownLanguage(pub String);

impl FromStr for Language {
    type Err = UnknownLanguage;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "python" | "py" => Ok(Language::Python),
            "rust" | "rs" => Ok(Language::Rust),
            "node" | "javascript" | "js" | "typescript" | "ts" => Ok(Language::Node),
            "go" | "golang" => Ok(Language::Go),
            _ => Err(UnknownLanguage(s.to_string())),
        }
    }
}

/// Whether a repository path names a test file (in any language). A Fixer's patch may not
/// touch one: a patch that edits the proving test proves nothing.
pub fn is_test_path(path: &str) -> bool {
    let mut components = path.split('/').filter(|c| !c.is_empty()).peekable();
    while let Some(component) = components.next() {
        let last = components.peek().is_none();
        let lower = component.to_ascii_lowercase();
        if !last {
            if matches!(
                lower.as_str(),
                "test" | "tests" | "__tests__" | "spec" | "specs" | "testdata" | "testing"
            ) {
                return true;
            }
            continue;
        }
        let stem = lower.split('.').next().unwrap_or_default();
        return lower == "conftest.py"
            || (lower.starts_with("test_") && lower.ends_with(".py"))
            || stem.ends_with("_test")
            || stem.ends_with("_tests")
            || lower.contains(".test.")
            || lower.contains(".spec.");
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths_are_recognised_in_every_language() {
        for path in [
            "tests/test_app.py",
            "pkg/test_util.py",
            "pkg/util_test.py",
            "conftest.py",
            "src/tests/mod.rs",
            "tests/integration.rs",
            "crate/src/parser_test.rs",
            "web/app.test.js",
            "web/app.spec.ts",
            "web/__tests__/app.js",
            "cmd/main_test.go",
            "internal/testdata/input.json",
        ] {
            assert!(is_test_path(path), "{path} is a test path");
        }
        for path in [
            "src/lib.rs",
            "app/contest.py",
            "latest/app.py",
            "src/attestation.rs",
            "web/app.js",
            "main.go",
        ] {
            assert!(!is_test_path(path), "{path} is not a test path");
        }
    }

    #[test]
    fn languages_parse_from_their_names_and_aliases() {
        assert_eq!("Python".parse::<Language>().ok(), Some(Language::Python));
        assert_eq!("rs".parse::<Language>().ok(), Some(Language::Rust));
        assert_eq!("js".parse::<Language>().ok(), Some(Language::Node));
        assert_eq!("golang".parse::<Language>().ok(), Some(Language::Go));
        assert!("cobol".parse::<Language>().is_err());
    }
}
