//! go.mod and go.sum.
//!
//! go.mod's `require` directives (blocks and single lines) are the build list's versions: Go's
//! minimal version selection builds exactly the highest required version of each module, and
//! since Go 1.17 go.mod lists every module the build needs (`// indirect` marks those the main
//! module does not import itself). `replace` directives are applied: a replacement by a local
//! path makes the module a path dependency; a replacement by another module@version reports
//! that module and version. `exclude` and `retract` do not change what is built and are
//! ignored.
//!
//! go.sum is used only when go.mod's `go` directive is below 1.17 (or absent, which Go reads
//! as 1.16): such a go.mod may omit indirect modules, so every module that has a content hash
//! (`h1:` on a line without `/go.mod`) in go.sum but no requirement in go.mod is added as
//! transitive, at the highest such version (the one minimal version selection kept, in a tidy
//! go.sum); and each requirement missing from go.sum is noted. Read alone, go.sum lists every
//! version with a content hash, of unknown kind.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::Deps;
use crate::error::{ReadError, ReadErrorKind};
use crate::text::to_u32;

struct Require {
    path: String,
    version: String,
    indirect: bool,
    line: u32,
}

struct Replace {
    old: String,
    old_version: Option<String>,
    new: String,
    new_version: Option<String>,
    line: u32,
}

#[derive(Default)]
struct GoMod {
    module: Option<String>,
    go: Option<String>,
    requires: Vec<Require>,
    replaces: Vec<Replace>,
}

/// Splits a line into its tokens and its `//` comment; quoted tokens are unquoted.
fn tokens(line: &str) -> (Vec<String>, Option<String>) {
    let mut out = Vec::new();
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '/' if line.get(i..).is_some_and(|r| r.starts_with("//")) => {
                return (
                    out,
                    Some(line.get(i + 2..).unwrap_or("").trim().to_string()),
                );
            }
            '"' | '`' => {
                let mut tok = String::new();
                let mut escaped = false;
                for (_, d) in chars.by_ref() {
                    if escaped {
                        tok.push(d);
                        escaped = false;
                    } else if d == '\\' && c == '"' {
                        escaped = true;
                    } else if d == c {
                        break;
                    } else {
                        tok.push(d);
                    }
                }
                out.push(tok);
            }
            _ => {
                let mut tok = String::from(c);
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_whitespace()
                        || (d == '/' && line.get(j..).is_some_and(|r| r.starts_with("//")))
                    {
                        break;
                    }
                    tok.push(d);
                    chars.next();
                }
                out.push(tok);
            }
        }
    }
    (out, None)
}

fn parse(path: &str, text: &str) -> Result<GoMod, ReadError> {
    let mut m = GoMod::default();
    let mut block: Option<String> = None;
    let syntax = |line: usize, msg: String| {
        ReadError::new(path, Some(to_u32(line)), ReadErrorKind::Syntax, msg)
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let (toks, comment) = tokens(raw);
        let Some(first) = toks.first() else {
            continue;
        };
        let (verb, args): (String, &[String]) = match &block {
            Some(_) if first == ")" => {
                block = None;
                continue;
            }
            Some(b) => (b.clone(), &toks[..]),
            None => {
                if toks.get(1).map(String::as_str) == Some("(") && toks.len() == 2 {
                    block = Some(first.clone());
                    continue;
                }
                (first.clone(), toks.get(1..).unwrap_or(&[]))
            }
        };
        match verb.as_str() {
            "module" => m.module = args.first().cloned(),
            "go" => m.go = args.first().cloned(),
            "require" => {
                let [module, version] = args else {
                    return Err(syntax(
                        n,
                        format!(
                            "`require` needs a module path and a version, got `{}`",
                            raw.trim()
                        ),
                    ));
                };
                let indirect = comment.as_deref().is_some_and(|c| {
                    c == "indirect" || c.starts_with("indirect;") || c.starts_with("indirect ")
                });
                m.requires.push(Require {
                    path: module.clone(),
                    version: version.clone(),
                    indirect,
                    line: to_u32(n),
                });
            }
            "replace" => {
                let arrow = args.iter().position(|t| t == "=>").ok_or_else(|| {
                    syntax(n, format!("`replace` needs `=>`, got `{}`", raw.trim()))
                })?;
                let (left, right) = (
                    args.get(..arrow).unwrap_or(&[]),
                    args.get(arrow + 1..).unwrap_or(&[]),
                );
                let (Some(old), Some(new)) = (left.first(), right.first()) else {
                    return Err(syntax(
                        n,
                        format!(
                            "`replace` needs a module on each side of `=>`, got `{}`",
                            raw.trim()
                        ),
                    ));
                };
                m.replaces.push(Replace {
                    old: old.clone(),
                    old_version: left.get(1).cloned(),
                    new: new.clone(),
                    new_version: right.get(1).cloned(),
                    line: to_u32(n),
                });
            }
            // exclude, retract, toolchain, godebug, tool, ignore: nothing built changes.
            _ => {}
        }
    }
    Ok(m)
}

fn is_local_path(p: &str) -> bool {
    p.starts_with("./")
        || p.starts_with("../")
        || p.starts_with('/')
        || p == "."
        || p == ".."
        || p.get(1..3) == Some(":\\")
}

/// Go's `go` directive below 1.17 (an absent directive reads as 1.16).
fn before_1_17(go: Option<&str>) -> bool {
    let Some(go) = go else {
        return true;
    };
    let mut parts = go.split('.');
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(1);
    let minor: u32 = parts
        .next()
        .map(|p| {
            p.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    (major, minor) < (1, 17)
}

pub(crate) fn read_mod(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let m = parse(ctx.path, text)?;
    let mut deps = Deps::default();
    for r in &m.requires {
        deps.push(required(ctx, &m, r));
    }
    if before_1_17(m.go.as_deref())
        && let Some((sum_path, sum_text)) = ctx.sibling("go.sum")
    {
        from_go_sum(ctx, &m, &sum_path, &sum_text, &mut deps);
    }
    Ok(deps.into_vec())
}

/// A `require` line as a dependency, with its `replace` applied (and noted).
fn required(ctx: &mut Ctx<'_>, m: &GoMod, r: &Require) -> Dependency {
    let replacement = m
        .replaces
        .iter()
        .find(|p| p.old == r.path && p.old_version.as_deref() == Some(r.version.as_str()))
        .or_else(|| {
            m.replaces
                .iter()
                .find(|p| p.old == r.path && p.old_version.is_none())
        });
    let kind = if r.indirect {
        DependencyKind::Transitive
    } else {
        DependencyKind::Direct
    };
    let (name, version, origin) = match replacement {
        Some(p) if is_local_path(&p.new) => {
            ctx.note(format!(
                "line {}: `{} {}` is replaced by the local folder `{}` (line {})",
                r.line, r.path, r.version, p.new, p.line
            ));
            (r.path.clone(), r.version.clone(), Origin::Path)
        }
        Some(p) => {
            let version = p.new_version.clone().unwrap_or_else(|| r.version.clone());
            ctx.note(format!(
                "line {}: `{} {}` is replaced by `{} {}` (line {})",
                r.line, r.path, r.version, p.new, version, p.line
            ));
            (p.new.clone(), version, Origin::Registry)
        }
        None => (r.path.clone(), r.version.clone(), Origin::Registry),
    };
    Dependency {
        ecosystem: Ecosystem::Go,
        name,
        version,
        kind,
        origin,
        dev: false,
        line: Some(r.line),
    }
}

/// Before Go 1.17 go.mod may omit indirect modules: each module go.sum hashes the content
/// of is added at its highest such version; requirements go.sum lacks are noted.
fn from_go_sum(ctx: &mut Ctx<'_>, m: &GoMod, sum_path: &str, sum_text: &str, deps: &mut Deps) {
    let sums = parse_sum(sum_text);
    let mut seen_versions: HashSet<(String, String)> = HashSet::new();
    let mut highest: BTreeMap<String, String> = BTreeMap::new();
    for (module, version, content, _) in &sums {
        seen_versions.insert((module.clone(), version.clone()));
        if *content {
            let e = highest
                .entry(module.clone())
                .or_insert_with(|| version.clone());
            if compare_versions(version, e) == Ordering::Greater {
                *e = version.clone();
            }
        }
    }
    for r in &m.requires {
        let replaced_locally = m
            .replaces
            .iter()
            .any(|p| p.old == r.path && is_local_path(&p.new));
        if !replaced_locally && !seen_versions.contains(&(r.path.clone(), r.version.clone())) {
            ctx.note(format!(
                "line {}: `{} {}` has no entry in {sum_path}",
                r.line, r.path, r.version
            ));
        }
    }
    let required: HashSet<&str> = m.requires.iter().map(|r| r.path.as_str()).collect();
    let mut added = 0usize;
    for (module, version) in highest {
        if required.contains(module.as_str()) || m.module.as_deref() == Some(module.as_str()) {
            continue;
        }
        added += 1;
        deps.push(Dependency {
            ecosystem: Ecosystem::Go,
            name: module,
            version,
            kind: DependencyKind::Transitive,
            origin: Origin::Registry,
            dev: false,
            line: None,
        });
    }
    ctx.note(format!(
        "go {}: before Go 1.17 go.mod may omit indirect modules; {added} modules were added \
         from {sum_path} at the highest version with a content hash there",
        m.go.as_deref().unwrap_or("directive absent")
    ));
}

/// go.sum lines: (module, version, whether it is a content hash rather than a go.mod hash,
/// line). Malformed lines are skipped: go.sum is a cache of hashes, not a declaration.
fn parse_sum(text: &str) -> Vec<(String, String, bool, u32)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut parts = line.split_whitespace();
        let (Some(module), Some(version), Some(hash)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if !hash.contains(':') {
            continue;
        }
        let (version, content) = match version.strip_suffix("/go.mod") {
            Some(v) => (v, false),
            None => (version, true),
        };
        out.push((
            module.to_string(),
            version.to_string(),
            content,
            to_u32(i + 1),
        ));
    }
    out
}

pub(crate) fn read_sum(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let mut deps = Deps::default();
    for (module, version, content, line) in parse_sum(text) {
        if content {
            deps.push(Dependency {
                ecosystem: Ecosystem::Go,
                name: module,
                version,
                kind: DependencyKind::Unknown,
                origin: Origin::Registry,
                dev: false,
                line: Some(line),
            });
        }
    }
    ctx.note(
        "go.sum holds hashes of every version the module graph touched, not the build list: \
         go.mod holds the selected versions",
    );
    Ok(deps.into_vec())
}

/// Orders Go module versions (semantic versions with a `v`): numeric core, then a release
/// above its pre-releases (pseudo-versions are pre-releases), pre-release identifiers compared
/// as SemVer does; `+incompatible` and other build metadata do not order.
pub(crate) fn compare_versions(a: &str, b: &str) -> Ordering {
    fn split(v: &str) -> (Vec<u64>, Option<&str>) {
        let v = v.trim_start_matches('v');
        let v = v.split('+').next().unwrap_or(v);
        let (core, pre) = match v.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (v, None),
        };
        (
            core.split('.').map(|p| p.parse().unwrap_or(0)).collect(),
            pre,
        )
    }
    let (ca, pa) = split(a);
    let (cb, pb) = split(b);
    let by_core = ca.cmp(&cb);
    if by_core != Ordering::Equal {
        return by_core;
    }
    match (pa, pb) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => {
            let mut xs = x.split('.');
            let mut ys = y.split('.');
            loop {
                match (xs.next(), ys.next()) {
                    (None, None) => return Ordering::Equal,
                    (None, Some(_)) => return Ordering::Less,
                    (Some(_), None) => return Ordering::Greater,
                    (Some(p), Some(q)) => {
                        let o = match (p.parse::<u64>(), q.parse::<u64>()) {
                            (Ok(m), Ok(n)) => m.cmp(&n),
                            (Ok(_), Err(_)) => Ordering::Less,
                            (Err(_), Ok(_)) => Ordering::Greater,
                            (Err(_), Err(_)) => p.cmp(q),
                        };
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, MemTree, read};

    fn get<'a>(deps: &'a [Dependency], name: &str, version: &str) -> &'a Dependency {
        deps.iter()
            .find(|d| d.name == name && d.version == version)
            .unwrap_or_else(|| panic!("{name} {version} not found in {deps:#?}"))
    }

    const MOD: &str = r#"module example.com/app

go 1.21

require github.com/single/line v1.0.0 // indirect

require (
	github.com/a/b v1.2.3
	github.com/c/d v2.0.0+incompatible // indirect
	golang.org/x/pseudo v0.0.0-20200823014737-9f7001d12a5f
	"github.com/quoted/mod" v0.1.0
	github.com/local/x v1.0.0
	github.com/old/y v1.0.0
)

exclude github.com/a/b v1.2.2

replace github.com/local/x => ../x

replace (
	github.com/old/y v1.0.0 => github.com/new/y v1.1.0
)

retract v0.9.0
"#;

    #[test]
    fn requires_indirect_replaces_and_lines() {
        let tree = MemTree::with("go.mod", MOD);
        let file = read(&tree, "go.mod", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 7);
        let single = get(d, "github.com/single/line", "v1.0.0");
        assert_eq!(
            (single.kind, single.line),
            (DependencyKind::Transitive, Some(5))
        );
        let ab = get(d, "github.com/a/b", "v1.2.3");
        assert_eq!((ab.kind, ab.line), (DependencyKind::Direct, Some(8)));
        assert_eq!(
            get(d, "github.com/c/d", "v2.0.0+incompatible").kind,
            DependencyKind::Transitive
        );
        assert_eq!(
            get(
                d,
                "golang.org/x/pseudo",
                "v0.0.0-20200823014737-9f7001d12a5f"
            )
            .line,
            Some(10)
        );
        assert_eq!(get(d, "github.com/quoted/mod", "v0.1.0").line, Some(11));
        assert_eq!(get(d, "github.com/local/x", "v1.0.0").origin, Origin::Path);
        let y = get(d, "github.com/new/y", "v1.1.0");
        assert_eq!((y.origin.clone(), y.line), (Origin::Registry, Some(13)));
        assert!(
            file.notes
                .iter()
                .any(|n| n.contains("github.com/new/y v1.1.0")),
            "{:?}",
            file.notes
        );
    }

    #[test]
    fn old_go_fills_from_go_sum() {
        let gomod = "module example.com/app\n\ngo 1.16\n\nrequire github.com/a/b v1.2.3\nrequire github.com/missing/sum v1.0.0\n";
        let gosum = "github.com/a/b v1.2.3 h1:x=\ngithub.com/a/b v1.2.3/go.mod h1:y=\ngithub.com/t/u v1.0.0 h1:z=\ngithub.com/t/u v1.10.0 h1:z=\ngithub.com/t/u v1.9.0 h1:z=\ngithub.com/t/u v2.0.0/go.mod h1:z=\n";
        let mut tree = MemTree::with("go.mod", gomod);
        tree.insert("go.sum", gosum);
        let file = read(&tree, "go.mod", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 3);
        let tu = get(d, "github.com/t/u", "v1.10.0");
        assert_eq!((tu.kind, tu.line), (DependencyKind::Transitive, None));
        assert!(
            file.notes
                .iter()
                .any(|n| n.contains("line 6: `github.com/missing/sum v1.0.0` has no entry")),
            "{:?}",
            file.notes
        );
        // From 1.17 on, go.sum is not read.
        tree.insert("go.mod", gomod.replace("go 1.16", "go 1.17"));
        let file = read(&tree, "go.mod", &Limits::default()).unwrap();
        assert_eq!(file.dependencies.len(), 2);
    }

    #[test]
    fn go_sum_alone() {
        let tree = MemTree::with(
            "go.sum",
            "github.com/a/b v1.2.3 h1:x=\ngithub.com/a/b v1.2.3/go.mod h1:y=\ngithub.com/a/b v1.2.2/go.mod h1:y=\n",
        );
        let file = read(&tree, "go.sum", &Limits::default()).unwrap();
        assert_eq!(file.dependencies.len(), 1);
        assert_eq!(file.dependencies[0].line, Some(1));
    }

    #[test]
    fn version_order() {
        assert_eq!(compare_versions("v1.10.0", "v1.9.0"), Ordering::Greater);
        assert_eq!(compare_versions("v1.0.0-rc.1", "v1.0.0"), Ordering::Less);
        assert_eq!(
            compare_versions("v0.0.0-20200101000000-abc", "v0.0.0-20190101000000-def"),
            Ordering::Greater
        );
        assert_eq!(
            compare_versions("v2.0.0+incompatible", "v2.0.0"),
            Ordering::Equal
        );
    }

    #[test]
    fn malformed_require_is_a_syntax_error_with_line() {
        let tree = MemTree::with("go.mod", "module x\n\nrequire (\n\tgithub.com/a/b\n)\n");
        let err = read(&tree, "go.mod", &Limits::default()).unwrap_err();
        assert_eq!((err.kind, err.line), (ReadErrorKind::Syntax, Some(4)));
    }
}
