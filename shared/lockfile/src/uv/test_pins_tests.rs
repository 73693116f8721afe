use super::*;

fn specs(text: &str) -> Vec<String> {
    let pins = test_pins(text, &Wanted::default()).expect("parses");
    assert!(pins.project);
    pins.pinned.into_iter().map(|p| p.spec).collect()
}

/// The shape of python-attrs/attrs' uv.lock: a docs group with one pin per Python, a
/// lint group, a test group reaching pytest and pytest-xdist[psutil].
const ATTRS_LIKE: &str = r#"
version = 1
requires-python = ">=3.10"

[[package]]
name = "attrs"
source = { editable = "." }

[package.dev-dependencies]
docs = [
    { name = "sphinx", version = "8.1.3", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version < '3.11'" },
    { name = "sphinx", version = "9.1.0", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version >= '3.12'" },
]
lint = [{ name = "ruff" }]
tests = [
    { name = "cloudpickle", marker = "platform_python_implementation == 'CPython'" },
    { name = "pytest" },
    { name = "pytest-xdist", extra = ["psutil"] },
]

[[package]]
name = "cloudpickle"
version = "3.1.2"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "exceptiongroup"
version = "1.3.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "pytest"
version = "9.0.1"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "exceptiongroup", marker = "python_full_version < '3.11'" },
    { name = "pluggy" },
    { name = "tomli", version = "2.0.1", marker = "python_full_version < '3.11'" },
]

[[package]]
name = "pluggy"
version = "1.6.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "tomli"
version = "2.0.1"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version < '3.11'"]

[[package]]
name = "tomli"
version = "2.3.0"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version >= '3.11'"]

[[package]]
name = "pytest-xdist"
version = "3.8.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [{ name = "execnet" }]

[package.optional-dependencies]
psutil = [{ name = "psutil" }]
setproctitle = [{ name = "setproctitle" }]

[[package]]
name = "execnet"
version = "2.1.1"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "psutil"
version = "7.0.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "setproctitle"
version = "1.3.6"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "ruff"
version = "0.16.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "sphinx"
version = "8.1.3"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version < '3.11'"]

[[package]]
name = "sphinx"
version = "9.1.0"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version >= '3.12'"]
"#;

#[test]
fn only_what_the_tests_reach_is_taken_with_the_markers_that_say_when() {
    let got = specs(ATTRS_LIKE);
    assert_eq!(
        got,
        [
            "cloudpickle==3.1.2 ; platform_python_implementation == 'CPython'",
            "exceptiongroup==1.3.0 ; python_full_version < '3.11'",
            "pytest==9.0.1",
            "pluggy==1.6.0",
            // the edge names one version of the fork: only that one is reached.
            "tomli==2.0.1 ; python_full_version < '3.11'",
            "pytest-xdist==3.8.0",
            "execnet==2.1.1",
            // the extra the test group asks of pytest-xdist; not its other extras.
            "psutil==7.0.0",
        ]
    );
    // docs and lint groups are not the tests': neither sphinx pin, nor ruff.
    assert!(
        !got.iter()
            .any(|s| s.starts_with("sphinx") || s.starts_with("ruff"))
    );
}

#[test]
fn a_fork_reached_by_name_keeps_every_pin_each_for_its_python() {
    let got = specs(
        r#"
[[package]]
name = "mine"
source = { virtual = "." }
dependencies = [{ name = "tomli" }]

[[package]]
name = "tomli"
version = "2.0.1"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version < '3.11'", "python_full_version == '3.11.*'"]

[[package]]
name = "tomli"
version = "2.3.0"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version >= '3.12'"]
"#,
    );
    assert_eq!(
        got,
        [
            "tomli==2.0.1 ; (python_full_version < '3.11') or (python_full_version == '3.11.*')",
            "tomli==2.3.0 ; python_full_version >= '3.12'",
        ]
    );
}

#[test]
fn a_package_from_elsewhere_is_refused_by_name() {
    let pins = test_pins(
        r#"
[[package]]
name = "mine"
source = { editable = "." }
dependencies = [{ name = "theirs" }]

[[package]]
name = "theirs"
version = "1.0"
source = { git = "https://example.com/theirs?rev=1#abc" }
"#,
        &Wanted::default(),
    )
    .expect("parses");
    assert!(pins.pinned.is_empty());
    assert_eq!(pins.elsewhere[0].what, "theirs");
}

/// fastapi's shape: CI runs `uv sync --group tests --extra all`; `all` is no test name, so
/// only what CI asks for brings its packages, and a group CI names (`lint`) likewise.
const CI_ASKS: &str = r#"
version = 1

[[package]]
name = "app"
source = { editable = "." }
dependencies = [{ name = "core" }]

[package.optional-dependencies]
all = [{ name = "uvicorn" }]
docs = [{ name = "mkdocs" }]

[package.dev-dependencies]
lint = [{ name = "ruff" }]
tests = [{ name = "pytest" }]

[[package]]
name = "core"
version = "1.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "uvicorn"
version = "0.30.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "mkdocs"
version = "1.6.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "ruff"
version = "0.5.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "pytest"
version = "8.0.0"
source = { registry = "https://pypi.org/simple" }
"#;

fn names(wanted: &Wanted) -> Vec<String> {
    let mut out: Vec<String> = test_pins(CI_ASKS, wanted)
        .expect("parses")
        .pinned
        .into_iter()
        .map(|p| p.spec)
        .collect();
    out.sort();
    out
}

#[test]
fn the_extras_and_groups_ci_asks_for_are_pinned_beside_the_test_named_ones() {
    assert_eq!(names(&Wanted::default()), ["core==1.0", "pytest==8.0.0"]);
    let mut wanted = Wanted::default();
    wanted.extras.insert("all".into());
    wanted.groups.insert("lint".into());
    assert_eq!(
        names(&wanted),
        [
            "core==1.0",
            "pytest==8.0.0",
            "ruff==0.5.0",
            "uvicorn==0.30.0"
        ]
    );
    let every = Wanted {
        all_extras: true,
        all_groups: true,
        ..Wanted::default()
    };
    assert_eq!(
        names(&every),
        [
            "core==1.0",
            "mkdocs==1.6.0",
            "pytest==8.0.0",
            "ruff==0.5.0",
            "uvicorn==0.30.0"
        ]
    );
}
