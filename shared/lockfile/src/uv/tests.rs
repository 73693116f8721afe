use super::*;
use crate::{Limits, MemTree, read};

fn get<'a>(deps: &'a [Dependency], name: &str, version: &str) -> &'a Dependency {
    deps.iter()
        .find(|d| d.name == name && d.version == version)
        .unwrap_or_else(|| panic!("{name} {version} not found in {deps:#?}"))
}

const LOCK: &str = r#"version = 1
requires-python = ">=3.10"

[[package]]
name = "app"
version = "0.1.0"
source = { editable = "." }
dependencies = [
    { name = "numpy", version = "2.2.6", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version < '3.11'" },
    { name = "requests" },
]

[package.optional-dependencies]
fast = [
    { name = "orjson" },
]

[package.dev-dependencies]
dev = [
    { name = "pytest" },
]

[[package]]
name = "numpy"
version = "2.2.6"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "numpy"
version = "2.4.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "requests"
version = "2.32.3"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "idna" },
]

[[package]]
name = "idna"
version = "3.7"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "orjson"
version = "3.10.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "pytest"
version = "8.2.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "pluggy" },
]

[[package]]
name = "pluggy"
version = "1.5.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "mygit"
version = "0.3.0"
source = { git = "https://github.com/x/mygit?rev=v0.3#abc" }
"#;

#[test]
fn members_sources_direct_and_dev() {
    let tree = MemTree::with("uv.lock", LOCK);
    let file = read(&tree, "uv.lock", &Limits::default()).unwrap();
    let d = &file.dependencies;
    assert_eq!(d.len(), 9);
    let app = get(d, "app", "0.1.0");
    assert_eq!(
        (app.origin.clone(), app.kind),
        (Origin::Path, DependencyKind::Direct)
    );
    let np = get(d, "numpy", "2.2.6");
    assert_eq!((np.kind, np.line), (DependencyKind::Direct, Some(24)));
    assert_eq!(get(d, "numpy", "2.4.0").kind, DependencyKind::Unknown);
    assert_eq!(get(d, "requests", "2.32.3").kind, DependencyKind::Direct);
    assert_eq!(get(d, "idna", "3.7").kind, DependencyKind::Transitive);
    assert_eq!(get(d, "orjson", "3.10.0").kind, DependencyKind::Direct);
    let pytest = get(d, "pytest", "8.2.0");
    assert_eq!((pytest.kind, pytest.dev), (DependencyKind::Direct, true));
    let pluggy = get(d, "pluggy", "1.5.0");
    assert_eq!(
        (pluggy.kind, pluggy.dev),
        (DependencyKind::Transitive, true)
    );
    assert!(matches!(
        get(d, "mygit", "0.3.0").origin,
        Origin::Git { .. }
    ));
}
