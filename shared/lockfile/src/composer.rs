//! composer.lock and composer.json.
//!
//! `packages` ship; `packages-dev` are development-only. Versions are kept as spelled
//! (`v1.2.3` and `1.2.3` both occur). Branch versions (`dev-master`, `1.0.x-dev`) are not
//! releases: they are reported, with a note. A `path` dist is the project's own code. Direct
//! means listed in composer.json's `require` or `require-dev` (platform requirements such as
//! `php` and `ext-*` are not packages); names compare case-insensitively, as Packagist does.

use std::collections::HashSet;

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};
use serde_json::Value;

use crate::Ctx;
use crate::collect::Deps;
use crate::error::ReadError;
use crate::text::{JsonLines, Seg, Shape, parse_json};

/// Platform requirements: PHP itself, extensions, system libraries, Composer's APIs.
fn is_platform(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "php"
        || n.starts_with("php-")
        || n.starts_with("ext-")
        || n.starts_with("lib-")
        || n == "hhvm"
        || n == "composer"
        || n.starts_with("composer-")
}

fn is_branch(version: &str) -> bool {
    version.starts_with("dev-") || version.ends_with("-dev")
}

/// Lowercased names composer.json requires (require and require-dev), when it reads.
fn sibling_manifest(ctx: &mut Ctx<'_>) -> Option<HashSet<String>> {
    let (path, text) = ctx.sibling("composer.json")?;
    let parsed = parse_json(&path, &text, ctx.limits).and_then(|v| {
        let sh = Shape { path: &path };
        let mut names = HashSet::new();
        for section in ["require", "require-dev"] {
            if let Some(obj) = sh.object(&v, section, None)? {
                names.extend(
                    obj.keys()
                        .filter(|k| !is_platform(k))
                        .map(|k| k.to_ascii_lowercase()),
                );
            }
        }
        Ok(names)
    });
    match parsed {
        Ok(n) => Some(n),
        Err(e) => {
            ctx.note(format!("{e} (so direct marks are not applied)"));
            None
        }
    }
}

pub(crate) fn read_lock(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let path = ctx.path;
    let value = parse_json(path, text, ctx.limits)?;
    let sh = Shape { path };
    sh.root_object(&value)?;
    let lines = JsonLines::scan(
        text,
        |p| matches!(p, [Seg::Key(s)] | [Seg::Key(s), Seg::Index(_), _] if s == "packages" || s == "packages-dev"),
    );
    let direct = sibling_manifest(ctx);
    let mut deps = Deps::default();
    let mut branches = Vec::new();
    for (section, dev) in [("packages", false), ("packages-dev", true)] {
        let section_line = lines.get(&[Seg::Key(section.into())]);
        let Some(list) = sh.array(&value, section, section_line)? else {
            continue;
        };
        for (i, entry) in list.iter().enumerate() {
            let at = |key: &str| {
                lines.get(&[
                    Seg::Key(section.into()),
                    Seg::Index(i),
                    Seg::Key(key.into()),
                ])
            };
            let line = at("name");
            let where_ = format!("{section}[{i}]");
            if !entry.is_object() {
                return Err(ReadError::shape(path, section_line, &where_, "an object"));
            }
            let missing = |key: &str| {
                ReadError::new(
                    path,
                    line.or(section_line),
                    crate::ReadErrorKind::Shape,
                    format!("`{where_}` has no `{key}`"),
                )
            };
            let name = sh
                .string(entry, "name", line)?
                .ok_or_else(|| missing("name"))?;
            let version = sh
                .string(entry, "version", at("version"))?
                .ok_or_else(|| missing("version"))?;
            let dist_type = entry
                .get("dist")
                .and_then(|d| d.get("type"))
                .and_then(Value::as_str);
            let origin = if dist_type == Some("path") {
                Origin::Path
            } else {
                Origin::Registry
            };
            if is_branch(&version) {
                branches.push(format!("{name} {version}"));
            }
            let kind = match &direct {
                Some(d) if d.contains(&name.to_ascii_lowercase()) => DependencyKind::Direct,
                Some(_) => DependencyKind::Transitive,
                None => DependencyKind::Unknown,
            };
            deps.push(Dependency {
                ecosystem: Ecosystem::Packagist,
                name,
                version,
                kind,
                origin,
                dev,
                line,
            });
        }
    }
    if !branches.is_empty() {
        ctx.note(format!(
            "branch versions, not releases (advisory ranges may not order them): {}",
            branches.join(", ")
        ));
    }
    Ok(deps.into_vec())
}

/// composer.json alone: only an exact version (`1.2.3`, `v1.2.3`, `=1.2.3`) is one.
pub(crate) fn read_manifest(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let path = ctx.path;
    let value = parse_json(path, text, ctx.limits)?;
    let sh = Shape { path };
    sh.root_object(&value)?;
    let lines = JsonLines::scan(
        text,
        |p| matches!(p, [Seg::Key(s), _] if s == "require" || s == "require-dev"),
    );
    let prod: HashSet<String> = sh
        .object(&value, "require", None)?
        .map(|o| o.keys().map(|k| k.to_ascii_lowercase()).collect())
        .unwrap_or_default();
    let mut deps = Deps::default();
    let mut ranges = 0usize;
    for (section, dev) in [("require", false), ("require-dev", true)] {
        let Some(obj) = sh.object(&value, section, None)? else {
            continue;
        };
        for (name, constraint) in obj {
            if is_platform(name) {
                continue;
            }
            let c = constraint.as_str().unwrap_or("").trim();
            let c = c
                .strip_prefix("==")
                .or_else(|| c.strip_prefix('='))
                .unwrap_or(c)
                .trim();
            let bare = c.strip_prefix('v').unwrap_or(c);
            let exact = bare.starts_with(|ch: char| ch.is_ascii_digit())
                && bare
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
                && !bare.contains(".x")
                && !is_branch(bare)
                && bare.split('.').count() >= 3;
            if exact {
                deps.push(Dependency {
                    ecosystem: Ecosystem::Packagist,
                    name: name.clone(),
                    version: c.to_string(),
                    kind: DependencyKind::Direct,
                    origin: Origin::Registry,
                    dev: dev && !prod.contains(&name.to_ascii_lowercase()),
                    line: lines.get(&[Seg::Key(section.into()), Seg::Key(name.clone())]),
                });
            } else {
                ranges += 1;
            }
        }
    }
    if ranges > 0 {
        ctx.note(format!(
            "{ranges} requirements are constraints, not exact versions: composer.lock holds the \
             versions"
        ));
    }
    Ok(deps.into_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, MemTree, ReadErrorKind, read};

    const LOCK: &str = r#"{
    "_readme": ["x"],
    "packages": [
        {
            "name": "laravel/framework",
            "version": "v5.5.44",
            "dist": {"type": "zip", "url": "https://api.github.com/x"}
        },
        {
            "name": "Monolog/Monolog",
            "version": "1.0.x-dev"
        },
        {
            "name": "my/local",
            "version": "dev-main",
            "dist": {"type": "path", "url": "../local"}
        }
    ],
    "packages-dev": [
        {
            "name": "phpunit/phpunit",
            "version": "6.5.14"
        }
    ]
}"#;

    #[test]
    fn sections_versions_branches_and_manifest() {
        let mut tree = MemTree::with("composer.lock", LOCK);
        tree.insert(
            "composer.json",
            r#"{"require": {"php": ">=7", "laravel/framework": "~5.5"}, "require-dev": {"phpunit/phpunit": "~6.0"}}"#,
        );
        let file = read(&tree, "composer.lock", &Limits::default()).unwrap();
        let d: Vec<_> = file
            .dependencies
            .iter()
            .map(|x| (x.name.as_str(), x.version.as_str(), x.kind, x.dev, x.line))
            .collect();
        assert_eq!(
            d,
            vec![
                (
                    "laravel/framework",
                    "v5.5.44",
                    DependencyKind::Direct,
                    false,
                    Some(5)
                ),
                (
                    "Monolog/Monolog",
                    "1.0.x-dev",
                    DependencyKind::Transitive,
                    false,
                    Some(10)
                ),
                (
                    "my/local",
                    "dev-main",
                    DependencyKind::Transitive,
                    false,
                    Some(14)
                ),
                (
                    "phpunit/phpunit",
                    "6.5.14",
                    DependencyKind::Direct,
                    true,
                    Some(21)
                ),
            ]
        );
        assert_eq!(file.dependencies[2].origin, Origin::Path);
        assert!(
            file.notes
                .iter()
                .any(|n| n.contains("1.0.x-dev") && n.contains("dev-main")),
            "{:?}",
            file.notes
        );
    }

    #[test]
    fn wrong_shape_names_the_key() {
        let tree = MemTree::with("composer.lock", r#"{"packages": {"a": 1}}"#);
        let err = read(&tree, "composer.lock", &Limits::default()).unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::Shape);
        assert!(err.message.contains("`packages`"), "{err}");
        let tree = MemTree::with(
            "composer.lock",
            "{\"packages\": [\n{\"version\": \"1.0.0\"}]}",
        );
        let err = read(&tree, "composer.lock", &Limits::default()).unwrap_err();
        assert!(
            err.message.contains("packages[0]") && err.message.contains("`name`"),
            "{err}"
        );
    }

    #[test]
    fn manifest_alone() {
        let tree = MemTree::with(
            "composer.json",
            r#"{"require": {"php": "^8", "a/b": "1.2.3", "c/d": "^2.0", "e/f": "v3.0.1"}, "require-dev": {"g/h": "4.0.0"}}"#,
        );
        let file = read(&tree, "composer.json", &Limits::default()).unwrap();
        let d: Vec<_> = file
            .dependencies
            .iter()
            .map(|x| (x.name.as_str(), x.version.as_str(), x.dev))
            .collect();
        assert_eq!(
            d,
            vec![
                ("a/b", "1.2.3", false),
                ("e/f", "v3.0.1", false),
                ("g/h", "4.0.0", true)
            ]
        );
    }
}
