//! What an installer takes from a Python lock file for a project's tests (the sandbox's
//! dependency preparation): each package pinned as a PEP 508 requirement, with the markers
//! that say when it applies, and each package it cannot take from the registry, by name.
//! The readers live beside the format's other reader: [`pipfile_lock`] in `pipfile.rs`,
//! [`poetry_lock`] in `poetry.rs`, [`uv_lock`] in `uv.rs`.

pub use crate::pipfile::lock_pins as pipfile_lock;
pub use crate::poetry::lock_pins as poetry_lock;
pub use crate::uv::test_pins as uv_lock;

/// What a lock file pins for a project's tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pins {
    /// The lock holds the project itself (uv's `editable`/`virtual` source).
    pub project: bool,
    /// In file order.
    pub pinned: Vec<Pin>,
    /// Packages from a git repository, a path or a URL: never fetched from the registry.
    pub elsewhere: Vec<Elsewhere>,
}

/// One package pinned: `name==version`, with ` ; markers` when it applies only sometimes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub spec: String,
    /// The file (and section) that pinned it.
    pub source: String,
}

/// A package the lock takes from elsewhere than the registry, and why that is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elsewhere {
    pub what: String,
    pub source: String,
    pub reason: String,
}

/// Extras and groups that name what tests need.
const TEST_NAMES: &[&str] = &[
    "test",
    "tests",
    "testing",
    "dev",
    "develop",
    "development",
    "devel",
    "check",
    "ci",
];

/// The extras and dependency groups a project's tests are run with: those named for tests
/// ([`is_test_name`]) and those its own CI asks for (`uv sync --extra all --group tests`,
/// `poetry install --with docs`, `pip install --group lint`), which can name anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wanted {
    /// Extras asked by name, normalised ([`normalise_name`]).
    pub extras: std::collections::BTreeSet<String>,
    /// Dependency groups asked by name, normalised.
    pub groups: std::collections::BTreeSet<String>,
    /// `--all-extras`.
    pub all_extras: bool,
    /// `--all-groups`.
    pub all_groups: bool,
}

impl Wanted {
    /// Whether the tests run with the project's extra `name`.
    pub fn extra(&self, name: &str) -> bool {
        self.all_extras || is_test_name(name) || self.extras.contains(&normalise_name(name))
    }

    /// Whether the tests run with the project's dependency group `name`.
    pub fn group(&self, name: &str) -> bool {
        self.all_groups || is_test_name(name) || self.groups.contains(&normalise_name(name))
    }

    /// What `other` asks besides.
    pub fn extend(&mut self, other: Wanted) {
        self.extras.extend(other.extras);
        self.groups.extend(other.groups);
        self.all_extras |= other.all_extras;
        self.all_groups |= other.all_groups;
    }
}

/// An extra's or a group's name as PEP 685 and PEP 735 compare them: lower case, runs of
/// `-`, `_` and `.` as one `-`.
pub fn normalise_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

pub fn is_test_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    TEST_NAMES.contains(&n.as_str())
        || n.starts_with("test")
        || n.ends_with("-test")
        || n.ends_with("_test")
}
