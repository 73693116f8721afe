//! pip requirement files: `requirements*.txt`, `requirements/*.txt`, `*-requirements.txt`.
//!
//! Only `name==version` and `name===version` pins are exact; everything else (ranges, bare
//! names, editable installs, URLs, VCS references) gives no version and becomes a note.
//! `-r`/`--requirement` and `-c`/`--constraint` files are read through the same tree, relative
//! to the file that names them, each once (a cycle of includes ends there). Dependencies from
//! included files carry no line (their line would be in another file); a note names the file.
//! pip-compile's `# via` annotations tell direct from transitive: a requirement annotated only
//! with other packages is transitive; one with no annotation or `via -r ...` is direct.

use std::collections::{BTreeMap, HashSet};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::Deps;
use crate::error::ReadError;
use crate::text::{load, to_u32};
use crate::tree::{dir_of, join};

/// A requirement line as pip reads it, after joining continuations and dropping comments.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Requirement {
    pub(crate) name: String,
    /// The exact version, when a `==`/`===` pin gives one.
    pub(crate) version: Option<String>,
    /// The specifier text as written (`>=2,<3`), for notes.
    pub(crate) specifier: String,
    pub(crate) marker: Option<String>,
    /// `name @ url`: a direct reference, not the registry's package.
    pub(crate) url: Option<String>,
}

/// Parses one requirement (PEP 508 with pip's per-requirement options); `None` when the line
/// is not `name ...` (a bare URL or path).
pub(crate) fn parse_requirement(line: &str) -> Option<Requirement> {
    // Per-requirement options (`--hash=...`, `--config-settings ...`) start at ` --`.
    let mut spec = line;
    if let Some(i) = find_option(spec) {
        spec = spec.get(..i).unwrap_or(spec);
    }
    let (spec, marker) = match spec.split_once(';') {
        Some((s, m)) => (
            s.trim(),
            Some(m.trim().to_string()).filter(|m| !m.is_empty()),
        ),
        None => (spec.trim(), None),
    };
    let name_len = spec
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .map_or(spec.len(), |(i, _)| i);
    let name = spec.get(..name_len)?;
    if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return None;
    }
    let mut rest = spec.get(name_len..)?.trim_start();
    // After a PEP 508 name come extras, a version, a URL or nothing; anything else (`+https:`,
    // `/dir`, `.whl`) means the line is a URL or a path, not a name.
    let follows_name =
        rest.is_empty() || rest.starts_with(['[', '@', '(', '=', '<', '>', '!', '~', ',']);
    if !follows_name
        || name.ends_with(".whl")
        || name.ends_with(".tar.gz")
        || name.ends_with(".zip")
    {
        return None;
    }
    if let Some(after) = rest.strip_prefix('[') {
        rest = after.split_once(']').map_or("", |(_, r)| r).trim_start();
    }
    if let Some(url) = rest.strip_prefix('@') {
        return Some(Requirement {
            name: name.to_string(),
            url: Some(url.trim().to_string()),
            marker,
            ..Requirement::default()
        });
    }
    let rest = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or(rest)
        .trim();
    let mut version = None;
    for clause in rest.split(',') {
        let clause = clause.trim();
        let pinned = clause
            .strip_prefix("===")
            .or_else(|| clause.strip_prefix("=="))
            .map(str::trim);
        if let Some(v) = pinned
            && !v.is_empty()
            && !v.contains(['*', '$', ' '])
        {
            version = Some(v.to_string());
        }
    }
    Some(Requirement {
        name: name.to_string(),
        version,
        specifier: rest.to_string(),
        marker,
        url: None,
    })
}

/// The start of pip's per-requirement options: `--` after whitespace.
fn find_option(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    (1..b.len()).find(|&i| {
        b.get(i) == Some(&b'-')
            && b.get(i + 1) == Some(&b'-')
            && b.get(i - 1).is_some_and(|c| c.is_ascii_whitespace())
    })
}

/// A logical line: its first physical line, its content without the comment, its comment.
struct Logical {
    line: usize,
    content: String,
    comment: Option<String>,
}

/// Joins `\` continuations and splits off comments (`#` at the start or after whitespace).
fn logical_lines(text: &str) -> Vec<Logical> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let raw = raw.trim_end_matches('\r');
        let (start, mut joined) = match pending.take() {
            Some((start, mut acc)) => {
                acc.push_str(raw);
                (start, acc)
            }
            None => (i + 1, raw.to_string()),
        };
        if joined.ends_with('\\') {
            joined.pop();
            pending = Some((start, joined));
            continue;
        }
        let (content, comment) = split_comment(&joined);
        out.push(Logical {
            line: start,
            content: content.trim().to_string(),
            comment,
        });
    }
    if let Some((start, joined)) = pending {
        let (content, comment) = split_comment(&joined);
        out.push(Logical {
            line: start,
            content: content.trim().to_string(),
            comment,
        });
    }
    out
}

fn split_comment(s: &str) -> (&str, Option<String>) {
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'#' && (i == 0 || b.get(i - 1).is_some_and(|p| p.is_ascii_whitespace())) {
            let comment = s.get(i + 1..).unwrap_or("").trim().to_string();
            return (s.get(..i).unwrap_or(""), Some(comment));
        }
    }
    (s, None)
}

/// `-r x`, `-rx`, `--requirement x`, `--requirement=x` → the option name and its value.
fn split_option(content: &str) -> (&str, &str) {
    if let Some(long) = content.strip_prefix("--") {
        let end = long.find(['=', ' ', '\t']).unwrap_or(long.len());
        let name = content.get(..end + 2).unwrap_or(content);
        let value = long.get(end..).unwrap_or("").trim_start_matches('=').trim();
        return (name, value);
    }
    let name = content.get(..2).unwrap_or(content);
    (name, content.get(2..).unwrap_or("").trim())
}

struct Pending {
    dep: Dependency,
    /// Where the pin was (`line 3` or `other.txt line 3`), for notes.
    via: Vec<String>,
    annotated: bool,
}

pub(crate) fn read(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let top = ctx.path.to_string();
    let mut reader = Reader {
        seen: HashSet::from([top.clone()]),
        queue: vec![(top.clone(), text.to_string())],
        top,
        ..Reader::default()
    };
    while let Some((path, body)) = reader.queue.pop() {
        reader.read_file(ctx, &path, &body)?;
    }
    Ok(reader.finish(ctx))
}

/// The files read and to read, and what they pin, as the includes are followed.
#[derive(Default)]
struct Reader {
    top: String,
    seen: HashSet<String>,
    queue: Vec<(String, String)>,
    pins: Vec<Pending>,
    unpinned: BTreeMap<String, String>,
    pinned_names: HashSet<String>,
    included: usize,
    from_other_files: BTreeMap<String, usize>,
}

/// One file being read: where its lines are, for notes.
struct File<'a> {
    path: &'a str,
    is_top: bool,
}

impl File<'_> {
    fn at(&self, line: usize) -> String {
        if self.is_top {
            format!("line {line}")
        } else {
            format!("{} line {line}", self.path)
        }
    }
}

fn via_names(via: &str) -> impl Iterator<Item = String> + '_ {
    via.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

impl Reader {
    fn read_file(&mut self, ctx: &mut Ctx<'_>, path: &str, body: &str) -> Result<(), ReadError> {
        let file = File {
            path,
            is_top: path == self.top,
        };
        let mut last_pin: Option<usize> = None;
        let lines = logical_lines(body);
        let file_annotated = lines
            .iter()
            .any(|l| l.comment.as_deref().is_some_and(|c| c.starts_with("via")));
        for l in lines {
            if l.content.is_empty() {
                if let (Some(c), Some(i)) = (l.comment.as_deref(), last_pin) {
                    self.annotate(c, i);
                } else if l.comment.is_none() {
                    last_pin = None;
                }
                continue;
            }
            last_pin = None;
            if l.content.starts_with('-') {
                self.option(ctx, &file, &l)?;
                continue;
            }
            if self.requirement(ctx, &file, &l, file_annotated) {
                last_pin = Some(self.pins.len() - 1);
            }
        }
        Ok(())
    }

    /// pip-compile annotations under a requirement: `# via` then `#   name` lines.
    fn annotate(&mut self, comment: &str, pin: usize) {
        let Some(p) = self.pins.get_mut(pin) else {
            return;
        };
        if let Some(v) = comment.strip_prefix("via") {
            p.annotated = true;
            p.via.extend(via_names(v));
        } else if p.annotated && !comment.is_empty() {
            p.via.push(comment.trim().to_string());
        }
    }

    /// A `-r`/`-c` include is queued (once, within the limit); `-e` is noted.
    fn option(&mut self, ctx: &mut Ctx<'_>, file: &File<'_>, l: &Logical) -> Result<(), ReadError> {
        let (option, value) = split_option(&l.content);
        match option {
            "-r" | "--requirement" | "-c" | "--constraint" => {
                if value.contains("://") {
                    ctx.note(format!(
                        "{}: `{}` is a URL and was not fetched",
                        file.at(l.line),
                        l.content
                    ));
                    return Ok(());
                }
                let Some(target) = join(dir_of(file.path), value) else {
                    ctx.note(format!(
                        "{}: `{value}` is outside the tree",
                        file.at(l.line)
                    ));
                    return Ok(());
                };
                if !self.seen.insert(target.clone()) {
                    return Ok(());
                }
                if self.included >= ctx.limits.max_included_files {
                    ctx.note(format!(
                        "{}: `{value}` not read: more than {} included files",
                        file.at(l.line),
                        ctx.limits.max_included_files
                    ));
                    return Ok(());
                }
                self.included += 1;
                match load(ctx.tree, &target, ctx.limits)? {
                    Some(t) => self.queue.push((target, t)),
                    None => ctx.note(format!(
                        "{}: included file `{target}` is not in the tree",
                        file.at(l.line)
                    )),
                }
            }
            "-e" | "--editable" => ctx.note(format!(
                "{}: editable requirement `{value}` is not a registry package",
                file.at(l.line)
            )),
            _ => {}
        }
        Ok(())
    }

    /// A requirement line: a pin is kept (true), anything else is noted.
    fn requirement(
        &mut self,
        ctx: &mut Ctx<'_>,
        file: &File<'_>,
        l: &Logical,
        file_annotated: bool,
    ) -> bool {
        let Some(req) = parse_requirement(&l.content) else {
            ctx.note(format!(
                "{}: `{}` is a URL or a path, not a registry package",
                file.at(l.line),
                l.content
            ));
            return false;
        };
        let key = Ecosystem::PyPI.normalize_name(&req.name);
        if let Some(url) = &req.url {
            ctx.note(format!(
                "{}: `{}` comes from `{url}`, not from the registry",
                file.at(l.line),
                req.name
            ));
            return false;
        }
        let Some(version) = req.version.clone() else {
            self.unpinned.entry(key).or_insert_with(|| {
                format!(
                    "{}: requirement `{}` is not pinned: no exact version",
                    file.at(l.line),
                    l.content
                )
            });
            return false;
        };
        if let Some(marker) = &req.marker {
            ctx.note(format!(
                "{}: `{}=={version}` applies only when `{marker}`",
                file.at(l.line),
                req.name
            ));
        }
        if !file.is_top {
            *self
                .from_other_files
                .entry(file.path.to_string())
                .or_default() += 1;
        }
        self.pinned_names.insert(key);
        let mut p = Pending {
            dep: Dependency {
                ecosystem: Ecosystem::PyPI,
                name: req.name.clone(),
                version,
                kind: DependencyKind::Unknown,
                origin: Origin::Registry,
                dev: false,
                line: file.is_top.then(|| to_u32(l.line)),
            },
            via: Vec::new(),
            annotated: file_annotated,
        };
        if let Some(v) = l.comment.as_deref().and_then(|c| c.strip_prefix("via")) {
            p.via.extend(via_names(v));
        }
        self.pins.push(p);
        true
    }

    /// The notes on what other files pinned and what was never pinned; the pins as
    /// dependencies, direct or transitive by their annotations.
    fn finish(self, ctx: &mut Ctx<'_>) -> Vec<Dependency> {
        for (file, n) in self.from_other_files {
            ctx.note(format!(
                "{n} pinned requirements come from `{file}` (no line given here)"
            ));
        }
        for (name, note) in self.unpinned {
            if !self.pinned_names.contains(&name) {
                ctx.note(note);
            }
        }
        let mut deps = Deps::default();
        for mut p in self.pins {
            if p.annotated {
                // `via -r requirements.in` (or no annotation at all in an annotated file): the
                // person asked for it. Only other packages: it came along.
                let asked = p.via.is_empty()
                    || p.via
                        .iter()
                        .any(|v| v.starts_with("-r") || v.starts_with("-c"));
                p.dep.kind = if asked {
                    DependencyKind::Direct
                } else {
                    DependencyKind::Transitive
                };
            }
            deps.push(p.dep);
        }
        deps.into_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, MemTree, ReadErrorKind, read};

    fn get<'a>(deps: &'a [Dependency], name: &str, version: &str) -> &'a Dependency {
        deps.iter()
            .find(|d| d.name == name && d.version == version)
            .unwrap_or_else(|| panic!("{name} {version} not found in {deps:#?}"))
    }

    #[test]
    fn requirement_syntax() {
        let r = parse_requirement(
            "requests[security,socks] == 2.31.0 ; python_version < \"3.8\" --hash=sha256:abc",
        )
        .unwrap();
        assert_eq!(r.name, "requests");
        assert_eq!(r.version.as_deref(), Some("2.31.0"));
        assert_eq!(r.marker.as_deref(), Some("python_version < \"3.8\""));
        assert_eq!(
            parse_requirement("a===1.0-custom")
                .unwrap()
                .version
                .as_deref(),
            Some("1.0-custom")
        );
        assert_eq!(
            parse_requirement("a>=1,==1.2.3")
                .unwrap()
                .version
                .as_deref(),
            Some("1.2.3")
        );
        assert_eq!(parse_requirement("a==1.*").unwrap().version, None);
        assert_eq!(
            parse_requirement("a (==1.0)").unwrap().version.as_deref(),
            Some("1.0")
        );
        assert!(
            parse_requirement("pkg @ https://x/pkg.whl")
                .unwrap()
                .url
                .is_some()
        );
        assert_eq!(parse_requirement("./local/dir"), None);
        assert_eq!(parse_requirement("https://x.example/a.whl"), None);
    }

    const MAIN: &str = "# top comment
flask==2.0.1 \\
    --hash=sha256:aaa \\
    --hash=sha256:bbb
Django[argon2]==3.2.4  # pinned
importlib-metadata==4.0.0 ; python_version < \"3.8\"
requests>=2
-r base.txt
--constraint=constraints/c.txt
-e ./local
git+https://github.com/x/y.git#egg=y
--index-url https://pypi.example/simple
";

    #[test]
    fn pins_includes_constraints_markers_and_notes() {
        let mut tree = MemTree::with("reqs/requirements.txt", MAIN);
        tree.insert("reqs/base.txt", "-r requirements.txt\nsix==1.16.0\n");
        tree.insert("reqs/constraints/c.txt", "requests==2.31.0\n");
        let file = read(&tree, "reqs/requirements.txt", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 5, "{d:#?}");
        assert_eq!(get(d, "flask", "2.0.1").line, Some(2));
        assert_eq!(get(d, "Django", "3.2.4").line, Some(5));
        assert_eq!(get(d, "importlib-metadata", "4.0.0").line, Some(6));
        assert_eq!(get(d, "six", "1.16.0").line, None);
        assert_eq!(get(d, "requests", "2.31.0").line, None);
        let notes = file.notes.join("\n");
        assert!(
            notes.contains(
                "line 6: `importlib-metadata==4.0.0` applies only when `python_version < \"3.8\"`"
            ),
            "{notes}"
        );
        assert!(
            notes.contains("line 10: editable requirement `./local`"),
            "{notes}"
        );
        assert!(
            notes.contains("line 11: `git+https://github.com/x/y.git#egg=y` is a URL or a path"),
            "{notes}"
        );
        assert!(notes.contains("`reqs/base.txt`"), "{notes}");
        // `requests>=2` is pinned by the constraints file: no "not pinned" note.
        assert!(!notes.contains("not pinned"), "{notes}");
    }

    #[test]
    fn unpinned_and_missing_include_are_notes() {
        let tree = MemTree::with("requirements.txt", "flask>=2\n-r missing.txt\n");
        let file = read(&tree, "requirements.txt", &Limits::default()).unwrap();
        assert!(file.dependencies.is_empty());
        assert!(
            file.notes.contains(
                &"line 1: requirement `flask>=2` is not pinned: no exact version".to_string()
            ),
            "{:?}",
            file.notes
        );
        assert!(
            file.notes.iter().any(|n| n.contains("missing.txt")),
            "{:?}",
            file.notes
        );
    }

    #[test]
    fn pip_compile_annotations_tell_direct_from_transitive() {
        let text = "attrs==23.1.0\n    # via\n    #   -r requirements.in\n    #   aiohttp\nidna==3.4\n    # via yarl\nyarl==1.9.2  # via aiohttp\nflask==2.0.0\n";
        let tree = MemTree::with("requirements.txt", text);
        let file = read(&tree, "requirements.txt", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(get(d, "attrs", "23.1.0").kind, DependencyKind::Direct);
        assert_eq!(get(d, "idna", "3.4").kind, DependencyKind::Transitive);
        assert_eq!(get(d, "yarl", "1.9.2").kind, DependencyKind::Transitive);
        assert_eq!(get(d, "flask", "2.0.0").kind, DependencyKind::Direct);
        // Without annotations the file does not tell.
        let tree = MemTree::with("requirements.txt", "flask==2.0.0\n");
        let file = read(&tree, "requirements.txt", &Limits::default()).unwrap();
        assert_eq!(file.dependencies[0].kind, DependencyKind::Unknown);
    }

    #[test]
    fn include_cycles_end() {
        let mut tree = MemTree::with("requirements.txt", "-r a.txt\nx==1\n");
        tree.insert("a.txt", "-r requirements.txt\n-r a.txt\ny==2\n");
        let file = read(&tree, "requirements.txt", &Limits::default()).unwrap();
        assert_eq!(file.dependencies.len(), 2);
    }

    #[test]
    fn binary_include_is_an_error_naming_it() {
        let mut tree = MemTree::with("requirements.txt", "-r bin.txt\n");
        tree.insert("bin.txt", vec![0u8, 1, 2]);
        let err = read(&tree, "requirements.txt", &Limits::default()).unwrap_err();
        assert_eq!(
            (err.kind, err.path.as_str()),
            (ReadErrorKind::NotText, "bin.txt")
        );
    }
}
