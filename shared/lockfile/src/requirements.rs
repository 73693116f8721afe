//! pip requirement files: `requirements*.txt`, `requirements/*.txt`, `*-requirements.txt`.
//!
//! Only `name==version` and `name===version` pins are exact; everything else (ranges, bare
//! names, editable installs, URLs, VCS references) gives no version and becomes a note.
//! `-r`/`--requirement` and `-c`/`--constraint` files are read through the same tree, relative
//! to the file that names them, each once (a cycle of includes ends there). Dependencies from
//! included files carry no line (their line would be in another file); a note names the file.
//! pip-compile's `# via` annotations tell direct from transitive: a requirement annotated only
//! with other packages is transitive; one with no annotation or `via -r ...` is direct.
//!
//! [`lines`] is the one reader of the format's lines ([`Line`], [`LineKind`]): this crate's
//! dependency scan and the sandbox's preparation (which decides what to install and what to
//! refuse) both read requirement files through it.

use std::collections::{BTreeMap, HashSet};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::Deps;
use crate::error::ReadError;
use crate::text::{load, to_u32};
use crate::tree::{dir_of, join};

/// A requirement as PEP 508 writes it, with pip's per-requirement options cut off.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub name: String,
    /// The exact version, when a `==`/`===` pin gives one.
    pub version: Option<String>,
    /// The specifier text as written (`>=2,<3`), for notes.
    pub specifier: String,
    /// The environment marker after `;`, when there is one.
    pub marker: Option<String>,
    /// `name @ url`: a direct reference, not the registry's package.
    pub url: Option<String>,
}

/// Parses one requirement (PEP 508 with pip's per-requirement options); `None` when the line
/// is not `name ...` (a bare URL or path).
pub(crate) fn parse_requirement(line: &str) -> Option<Requirement> {
    // Per-requirement options (`--hash=...`, `--config-settings ...`) start at ` --`.
    let spec = without_options(line);
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

/// The text before pip's per-requirement options (`--hash=...`): `--` after whitespace.
fn without_options(s: &str) -> &str {
    let b = s.as_bytes();
    let at = (1..b.len()).find(|&i| {
        b.get(i) == Some(&b'-')
            && b.get(i + 1) == Some(&b'-')
            && b.get(i - 1).is_some_and(|c| c.is_ascii_whitespace())
    });
    at.and_then(|i| s.get(..i)).unwrap_or(s)
}

/// One logical line of a requirements file, as pip reads it: `\` continuations joined,
/// the comment (`#` at the start or after whitespace) split off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Its first physical line (from 1).
    pub number: usize,
    /// What it says, without the comment, trimmed.
    pub content: String,
    pub comment: Option<String>,
    pub kind: LineKind,
}

/// What a requirements line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKind {
    /// Nothing (a blank line or only a comment).
    Blank,
    /// `-r FILE`, `--requirement FILE`: another requirements file.
    Include(String),
    /// `-c FILE`, `--constraint FILE`: a constraints file.
    Constraint(String),
    /// `-e TARGET`, `--editable TARGET`.
    Editable(String),
    /// Any other option line (`--index-url URL`, `--pre`), its name as written (`-i`,
    /// `--index-url`) and its value.
    Option { name: String, value: String },
    /// A requirement: `spec` is the line without pip's per-requirement options (`--hash`),
    /// its environment marker kept; `parsed` is None when it does not start with a name (a
    /// URL, a VCS reference, a path or an archive).
    Requirement {
        spec: String,
        parsed: Option<Requirement>,
    },
}

/// What one line says (`content`: already without its comment and continuations).
pub fn classify(content: &str) -> LineKind {
    let content = content.trim();
    if content.is_empty() {
        return LineKind::Blank;
    }
    if content.starts_with('-') {
        let (name, value) = split_option(content);
        let value = value.to_string();
        return match name {
            "-r" | "--requirement" => LineKind::Include(value),
            "-c" | "--constraint" => LineKind::Constraint(value),
            "-e" | "--editable" => LineKind::Editable(value),
            _ => LineKind::Option {
                name: name.to_string(),
                value,
            },
        };
    }
    let spec = without_options(content)
        .trim()
        .trim_end_matches('\\')
        .trim()
        .to_string();
    LineKind::Requirement {
        parsed: parse_requirement(&spec),
        spec,
    }
}

/// The logical lines of a requirements file, blank ones included (their comments carry
/// pip-compile's `# via` annotations).
pub fn lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    let mut push = |number: usize, joined: &str| {
        let (content, comment) = split_comment(joined);
        out.push(Line {
            number,
            content: content.trim().to_string(),
            comment,
            kind: classify(content),
        });
    };
    for (i, raw) in text.lines().enumerate() {
        let raw = raw.trim_end_matches('\r');
        // A comment line never continues, and ends a continued line (as pip reads it).
        let is_comment = raw.trim_start().starts_with('#');
        let (start, mut joined) = match pending.take() {
            Some((start, mut acc)) => {
                if is_comment {
                    acc.push(' ');
                }
                acc.push_str(raw);
                (start, acc)
            }
            None => (i + 1, raw.to_string()),
        };
        if !is_comment && joined.ends_with('\\') {
            joined.pop();
            pending = Some((start, joined));
            continue;
        }
        push(start, &joined);
    }
    if let Some((start, joined)) = pending {
        push(start, &joined);
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
        let lines = lines(body);
        let file_annotated = lines
            .iter()
            .any(|l| l.comment.as_deref().is_some_and(|c| c.starts_with("via")));
        for l in &lines {
            match &l.kind {
                LineKind::Blank => {
                    if let (Some(c), Some(i)) = (l.comment.as_deref(), last_pin) {
                        self.annotate(c, i);
                    } else if l.comment.is_none() {
                        last_pin = None;
                    }
                }
                LineKind::Requirement { parsed, .. } => {
                    last_pin = self
                        .requirement(ctx, &file, l, parsed.as_ref(), file_annotated)
                        .then(|| self.pins.len() - 1);
                }
                LineKind::Include(value) | LineKind::Constraint(value) => {
                    last_pin = None;
                    self.include(ctx, &file, l, value)?;
                }
                LineKind::Editable(value) => {
                    last_pin = None;
                    ctx.note(format!(
                        "{}: editable requirement `{value}` is not a registry package",
                        file.at(l.number)
                    ));
                }
                LineKind::Option { .. } => last_pin = None,
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

    /// A `-r`/`-c` include is queued (once, within the limit).
    fn include(
        &mut self,
        ctx: &mut Ctx<'_>,
        file: &File<'_>,
        l: &Line,
        value: &str,
    ) -> Result<(), ReadError> {
        if value.contains("://") {
            ctx.note(format!(
                "{}: `{}` is a URL and was not fetched",
                file.at(l.number),
                l.content
            ));
            return Ok(());
        }
        let Some(target) = join(dir_of(file.path), value) else {
            ctx.note(format!(
                "{}: `{value}` is outside the tree",
                file.at(l.number)
            ));
            return Ok(());
        };
        if !self.seen.insert(target.clone()) {
            return Ok(());
        }
        if self.included >= ctx.limits.max_included_files {
            ctx.note(format!(
                "{}: `{value}` not read: more than {} included files",
                file.at(l.number),
                ctx.limits.max_included_files
            ));
            return Ok(());
        }
        self.included += 1;
        match load(ctx.tree, &target, ctx.limits)? {
            Some(t) => self.queue.push((target, t)),
            None => ctx.note(format!(
                "{}: included file `{target}` is not in the tree",
                file.at(l.number)
            )),
        }
        Ok(())
    }

    /// A requirement line: a pin is kept (true), anything else is noted.
    fn requirement(
        &mut self,
        ctx: &mut Ctx<'_>,
        file: &File<'_>,
        l: &Line,
        parsed: Option<&Requirement>,
        file_annotated: bool,
    ) -> bool {
        let Some(req) = parsed else {
            ctx.note(format!(
                "{}: `{}` is a URL or a path, not a registry package",
                file.at(l.number),
                l.content
            ));
            return false;
        };
        let key = Ecosystem::PyPI.normalize_name(&req.name);
        if let Some(url) = &req.url {
            ctx.note(format!(
                "{}: `{}` comes from `{url}`, not from the registry",
                file.at(l.number),
                req.name
            ));
            return false;
        }
        let Some(version) = req.version.clone() else {
            self.unpinned.entry(key).or_insert_with(|| {
                format!(
                    "{}: requirement `{}` is not pinned: no exact version",
                    file.at(l.number),
                    l.content
                )
            });
            return false;
        };
        if let Some(marker) = &req.marker {
            ctx.note(format!(
                "{}: `{}=={version}` applies only when `{marker}`",
                file.at(l.number),
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
                line: file.is_top.then(|| to_u32(l.number)),
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

    fn req(spec: &str) -> LineKind {
        LineKind::Requirement {
            spec: spec.to_string(),
            parsed: parse_requirement(spec),
        }
    }

    /// The lines both the dependency scan and the sandbox's preparation read: comments,
    /// continuations, options with their values, per-requirement hashes, markers, and line
    /// numbers of a joined line's first physical line.
    #[test]
    fn requirement_lines_are_read_once_for_every_user() {
        let text = "# top comment
flask==2.0.1 \\
    --hash=sha256:aaa \\
    --hash=sha256:bbb
Django[argon2]==3.2.4  # pinned
importlib-metadata==4.0.0 ; python_version < \"3.8\"
requests==2.31.0 --hash=sha256:abc
    # via -r requirements.in
-r base.txt
-rglued.txt
--requirement=long.txt
-c constraints.txt
--constraint=constraints/c.txt
-e ./local
-e .
git+https://github.com/x/y.git#egg=y
pkg @ https://x.example/pkg.whl
--index-url https://pypi.example/simple
-i https://pypi.example/simple
--pre
pytest>=7 \\
# a comment line ends a continued line
.[test]
";
        let read = lines(text);
        let kinds: Vec<(usize, LineKind)> =
            read.iter().map(|l| (l.number, l.kind.clone())).collect();
        let option = |name: &str, value: &str| LineKind::Option {
            name: name.into(),
            value: value.into(),
        };
        assert_eq!(
            kinds,
            [
                (1, LineKind::Blank),
                (2, req("flask==2.0.1")),
                (5, req("Django[argon2]==3.2.4")),
                (
                    6,
                    req("importlib-metadata==4.0.0 ; python_version < \"3.8\"")
                ),
                (7, req("requests==2.31.0")),
                (8, LineKind::Blank),
                (9, LineKind::Include("base.txt".into())),
                (10, LineKind::Include("glued.txt".into())),
                (11, LineKind::Include("long.txt".into())),
                (12, LineKind::Constraint("constraints.txt".into())),
                (13, LineKind::Constraint("constraints/c.txt".into())),
                (14, LineKind::Editable("./local".into())),
                (15, LineKind::Editable(".".into())),
                (16, req("git+https://github.com/x/y.git#egg=y")),
                (17, req("pkg @ https://x.example/pkg.whl")),
                (18, option("--index-url", "https://pypi.example/simple")),
                (19, option("-i", "https://pypi.example/simple")),
                (20, option("--pre", "")),
                (21, req("pytest>=7")),
                (23, req(".[test]")),
            ]
        );
        // Comments: a whole line, after whitespace; never a URL's fragment.
        assert_eq!(read[0].comment.as_deref(), Some("top comment"));
        assert_eq!(read[2].comment.as_deref(), Some("pinned"));
        assert_eq!(read[5].comment.as_deref(), Some("via -r requirements.in"));
        assert_eq!(read[13].comment, None);
        // What each requirement is: a pin, its marker, a direct reference, or no name.
        let parsed = |i: usize| match &read[i].kind {
            LineKind::Requirement { parsed, .. } => parsed.clone(),
            other => panic!("{other:?}"),
        };
        let flask = parsed(1).unwrap();
        assert_eq!(
            (flask.name.as_str(), flask.version.as_deref()),
            ("flask", Some("2.0.1"))
        );
        assert_eq!(
            parsed(3).unwrap().marker.as_deref(),
            Some("python_version < \"3.8\"")
        );
        assert_eq!(
            parsed(14).unwrap().url.as_deref(),
            Some("https://x.example/pkg.whl")
        );
        assert_eq!(parsed(13), None, "a VCS reference has no name");
        assert_eq!(parsed(19), None, "the project itself has no name");
        assert_eq!(parsed(18).unwrap().specifier, ">=7");
        // One line on its own reads the same as in a file.
        assert_eq!(
            classify("  -r base.txt "),
            LineKind::Include("base.txt".into())
        );
        assert_eq!(classify("six==1.16.0 \\"), req("six==1.16.0"));
        assert_eq!(classify(""), LineKind::Blank);
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
