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

pub fn is_test_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    TEST_NAMES.contains(&n.as_str())
        || n.starts_with("test")
        || n.ends_with("-test")
        || n.ends_with("_test")
}
