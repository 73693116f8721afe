use super::*;
use crate::{Limits, MemTree, ReadErrorKind, read};

fn get<'a>(deps: &'a [Dependency], name: &str, version: &str) -> &'a Dependency {
    deps.iter()
        .find(|d| d.name == name && d.version == version)
        .unwrap_or_else(|| panic!("{name} {version} not found in {deps:#?}"))
}

#[test]
fn keys_per_version() {
    assert_eq!(
        parse_key("/@babel/core/7.1.0_react@17.0.0", 5),
        Some(("@babel/core".into(), "7.1.0".into()))
    );
    assert_eq!(
        parse_key("/lodash/4.17.21", 5),
        Some(("lodash".into(), "4.17.21".into()))
    );
    assert_eq!(
        parse_key("/@a/b@1.0.0(react@18.0.0)(x@1.0.0)", 6),
        Some(("@a/b".into(), "1.0.0".into()))
    );
    assert_eq!(
        parse_key("lodash@4.17.21", 9),
        Some(("lodash".into(), "4.17.21".into()))
    );
    assert_eq!(
        resolve_ref("str", "/string-width/4.2.3", 5),
        Some(("string-width".into(), "4.2.3".into()))
    );
    assert_eq!(
        resolve_ref("str", "string-width@4.2.3", 9),
        Some(("string-width".into(), "4.2.3".into()))
    );
    assert_eq!(
        resolve_ref("a", "1.0.0(react@18.0.0)", 9),
        Some(("a".into(), "1.0.0".into()))
    );
    assert_eq!(resolve_ref("a", "link:../a", 9), None);
}

const V5: &str = r#"lockfileVersion: 5.4

specifiers:
  lodash: ^4.17.0
  jest: ^29.0.0

dependencies:
  lodash: 4.17.21
  repo: github.com/x/repo/0123abc

devDependencies:
  jest: 29.7.0_@types+node@20.0.0

packages:

  /lodash/4.17.21:
    resolution: {integrity: sha512-abc}
    dev: false

  /jest/29.7.0_@types+node@20.0.0:
    resolution: {integrity: sha512-def}
    dependencies:
      '@jest/core': 29.7.0
    dev: true

  /@jest/core/29.7.0:
    resolution: {integrity: sha512-ghi}
    dev: true

  github.com/x/repo/0123abc:
    resolution: {tarball: https://codeload.github.com/x/repo/tar.gz/0123abc}
    name: repo
    version: 1.0.0
    dev: false
"#;

#[test]
fn v5_keys_dev_and_lines() {
    let tree = MemTree::with("pnpm-lock.yaml", V5);
    let file = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap();
    let d = &file.dependencies;
    assert_eq!(d.len(), 4);
    let l = get(d, "lodash", "4.17.21");
    assert_eq!(
        (l.kind, l.dev, l.line),
        (DependencyKind::Direct, false, Some(16))
    );
    let j = get(d, "jest", "29.7.0");
    assert_eq!((j.kind, j.dev), (DependencyKind::Direct, true));
    let c = get(d, "@jest/core", "29.7.0");
    assert_eq!((c.kind, c.dev), (DependencyKind::Transitive, true));
    let repo = get(d, "repo", "1.0.0");
    assert!(matches!(repo.origin, Origin::Git { .. }));
    assert_eq!(repo.kind, DependencyKind::Direct);
}

const V6: &str = r#"lockfileVersion: '6.0'

importers:
  .:
    dependencies:
      react-dom:
        specifier: ^18.0.0
        version: 18.2.0(react@18.2.0)
      react:
        specifier: ^18.0.0
        version: 18.2.0

packages:

  /react-dom@18.2.0(react@18.2.0):
    resolution: {integrity: sha512-a}
    peerDependencies:
      react: ^18.2.0
    dependencies:
      loose-envify: 1.4.0
      react: 18.2.0
    dev: false

  /react@18.2.0:
    resolution: {integrity: sha512-b}
    dependencies:
      loose-envify: 1.4.0
    dev: false

  /loose-envify@1.4.0:
    resolution: {integrity: sha512-c}
    dev: false
"#;

#[test]
fn v6_peers_and_importers() {
    let tree = MemTree::with("pnpm-lock.yaml", V6);
    let file = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap();
    let d = &file.dependencies;
    assert_eq!(d.len(), 3);
    assert_eq!(get(d, "react-dom", "18.2.0").kind, DependencyKind::Direct);
    assert_eq!(get(d, "react-dom", "18.2.0").line, Some(15));
    assert_eq!(
        get(d, "loose-envify", "1.4.0").kind,
        DependencyKind::Transitive
    );
}

const V9: &str = r#"lockfileVersion: '9.0'

settings:
  autoInstallPeers: true

importers:

  .:
    dependencies:
      str:
        specifier: npm:string-width@^4
        version: string-width@4.2.3
    devDependencies:
      typescript:
        specifier: ^5.0.0
        version: 5.4.5
      vitest:
        specifier: ^1.0.0
        version: 1.6.0(@types/node@20.0.0)

  packages/a:
    dependencies:
      local:
        specifier: link:../local
        version: link:../local

packages:

  string-width@4.2.3:
    resolution: {integrity: sha512-a}
    engines: {node: '>=8'}

  typescript@5.4.5:
    resolution: {integrity: sha512-b}

  vitest@1.6.0:
    resolution: {integrity: sha512-c}

  tinypool@0.8.4:
    resolution: {integrity: sha512-d}

  '@types/node@20.0.0':
    resolution: {integrity: sha512-e}

snapshots:

  string-width@4.2.3: {}

  typescript@5.4.5: {}

  vitest@1.6.0(@types/node@20.0.0):
    dependencies:
      tinypool: 0.8.4
      '@types/node': 20.0.0

  tinypool@0.8.4: {}

  '@types/node@20.0.0': {}
"#;

#[test]
fn v9_snapshots_graph_dev_and_aliases() {
    let tree = MemTree::with("pnpm-lock.yaml", V9);
    let file = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap();
    let d = &file.dependencies;
    assert_eq!(d.len(), 5);
    let s = get(d, "string-width", "4.2.3");
    assert_eq!(
        (s.kind, s.dev, s.line),
        (DependencyKind::Direct, false, Some(29))
    );
    let t = get(d, "tinypool", "0.8.4");
    assert_eq!((t.kind, t.dev), (DependencyKind::Transitive, true));
    assert_eq!(get(d, "@types/node", "20.0.0").line, Some(42));
}

#[test]
fn yaml_bomb_is_refused_by_budget() {
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let mut prev = 'a';
    for c in 'b'..='j' {
        bomb.push_str(&format!(
            "{c}: &{c} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
        ));
        prev = c;
    }
    let tree = MemTree::with("pnpm-lock.yaml", bomb);
    let err = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap_err();
    assert!(
        matches!(err.kind, ReadErrorKind::Budget | ReadErrorKind::TooDeep),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("pnpm-lock.yaml"), "{err}");
}

#[test]
fn deep_yaml_is_refused() {
    let deep = format!("a: {}{}\n", "[".repeat(5000), "]".repeat(5000));
    let tree = MemTree::with("pnpm-lock.yaml", deep);
    let err = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap_err();
    assert!(
        matches!(
            err.kind,
            ReadErrorKind::TooDeep | ReadErrorKind::Budget | ReadErrorKind::Syntax
        ),
        "{err:?}"
    );
}

#[test]
fn wrong_shape_names_the_key() {
    let tree = MemTree::with("pnpm-lock.yaml", "lockfileVersion: '9.0'\npackages: nope\n");
    let err = read(&tree, "pnpm-lock.yaml", &Limits::default()).unwrap_err();
    assert_eq!(err.kind, ReadErrorKind::Shape);
    assert!(err.message.contains("`packages`"), "{err}");
}
