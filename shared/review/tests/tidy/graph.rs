//! The crate's module graph at file granularity: which source file names which, read from
//! every `crate::`, `super::` and `self::` path (and a path through a child module the file
//! declares), in `use` trees with their groups and in code, at every depth.
//!
//! A path is resolved to the deepest file module it reaches: `crate::pipeline::registry::x`
//! names `pipeline/registry.rs`, `super::INTAKE` in `pipeline/plan.rs` names
//! `pipeline/mod.rs`, `crate::Trace` names `lib.rs` (the re-export). A `mod` declaration is
//! not an import; an inline module (`mod tests { use super::*; }`) is part of its file.

use std::collections::{BTreeMap, BTreeSet};

/// A source file by its path under `src/`, and its text.
pub type Sources = [(String, String)];

/// Each file and the files it names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// The module path of a file: `pipeline/judge.rs` → `pipeline::judge`, `pipeline/mod.rs` →
/// `pipeline`, `lib.rs` → the crate root.
pub fn module_path(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The text with comments (and, unless `keep_strings`, the contents of string and char
/// literals) blanked out, lengths and line breaks kept.
pub fn code_only(text: &str, keep_strings: bool) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == '"' || (c == 'r' && matches!(next, Some('"' | '#')) && raw_start(&b, i)) {
            // A string, raw or not: kept or blanked up to its closing quote.
            let hashes = if c == 'r' {
                b[i + 1..].iter().take_while(|&&h| h == '#').count()
            } else {
                0
            };
            let open = if c == 'r' { hashes + 2 } else { 1 };
            let raw = c == 'r';
            for k in 0..open {
                out.push(b[i + k]);
            }
            i += open;
            while i < b.len() {
                if !raw && b[i] == '\\' {
                    let kept = if keep_strings { b[i] } else { ' ' };
                    out.push(kept);
                    if let Some(&e) = b.get(i + 1) {
                        out.push(if keep_strings { e } else { blank(e) });
                    }
                    i += 2;
                    continue;
                }
                let closes = b[i] == '"' && (0..hashes).all(|h| b.get(i + 1 + h) == Some(&'#'));
                if closes {
                    out.push('"');
                    out.extend(std::iter::repeat_n('#', hashes));
                    i += 1 + hashes;
                    break;
                }
                out.push(if keep_strings { b[i] } else { blank(b[i]) });
                i += 1;
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '"') is blanked; a lifetime ('a) is code.
            let end = if next == Some('\\') {
                b[i + 2..]
                    .iter()
                    .position(|&q| q == '\'')
                    .map(|p| i + 2 + p)
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.extend(std::iter::repeat_n(' ', end - i + 1));
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(if c.is_ascii() { c } else { ' ' });
            i += 1;
        }
    }
    out
}

/// `r"` or `r#` starts a raw string only where `r` is not the end of an identifier.
fn raw_start(b: &[char], i: usize) -> bool {
    i == 0 || !is_ident(b[i - 1])
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A scanner over one file's code (comments and literals blanked).
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn at(&self, s: &str) -> bool {
        self.b[self.i..].starts_with(s.as_bytes())
    }

    fn ident(&mut self) -> Option<String> {
        let start = self.i;
        while self.i < self.b.len() && is_ident(self.b[self.i] as char) {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.b[start..self.i]).into_owned())
    }

    /// The rest of a path after its first segment: `::a::{b, c::d}` → each full path.
    fn tree(&mut self, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut prefix = prefix;
        loop {
            let before = self.i;
            self.skip_ws();
            if !self.at("::") {
                self.i = before;
                out.push(prefix);
                return;
            }
            self.i += 2;
            self.skip_ws();
            if self.at("{") {
                self.i += 1;
                self.group(&prefix, out);
                return;
            }
            if self.at("*") {
                self.i += 1;
                out.push(prefix);
                return;
            }
            match self.ident() {
                Some(name) => prefix.push(name),
                None => {
                    out.push(prefix);
                    return;
                }
            }
        }
    }

    /// A `{…}` group of a `use` tree, after its opening brace.
    fn group(&mut self, prefix: &[String], out: &mut Vec<Vec<String>>) {
        loop {
            self.skip_ws();
            if self.i >= self.b.len() || self.at("}") {
                self.i += 1;
                return;
            }
            if self.at(",") {
                self.i += 1;
                continue;
            }
            if self.at("{") {
                self.i += 1;
                self.group(prefix, out);
                continue;
            }
            if self.at("*") {
                self.i += 1;
                out.push(prefix.to_vec());
                continue;
            }
            match self.ident() {
                // `self` in a group names the group's own path.
                Some(name) if name == "self" => self.tree(prefix.to_vec(), out),
                Some(name) => {
                    let mut path = prefix.to_vec();
                    path.push(name);
                    self.tree(path, out);
                    // `x as y`: the alias names nothing.
                    self.skip_ws();
                    if self.at("as ") {
                        self.i += 3;
                        self.skip_ws();
                        self.ident();
                    }
                }
                None => self.i += 1,
            }
        }
    }
}

/// Every module path one file names, resolved against the module it is written in.
fn named_paths(here: &[String], text: &str) -> Vec<Vec<String>> {
    let code = code_only(text, false);
    let b = code.as_bytes();
    let here = here.to_vec();
    let children = declared_modules(&code);
    let mut scan = Scan { b, i: 0 };
    let mut out = Vec::new();
    // The inline modules the scan is inside, with the brace depth each opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_mod: Option<String> = None;
    while scan.i < b.len() {
        let c = b[scan.i] as char;
        let starts_word = is_ident(c) && (scan.i == 0 || !is_ident(b[scan.i - 1] as char));
        if c == '{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                inline.push((name, depth));
            }
            scan.i += 1;
            continue;
        }
        if c == '}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            scan.i += 1;
            continue;
        }
        if c == ';' {
            pending_mod = None;
        }
        if !starts_word || (scan.i >= 1 && b[scan.i - 1] == b':') {
            scan.i += 1;
            continue;
        }
        let Some(word) = scan.ident() else {
            scan.i += 1;
            continue;
        };
        if word == "mod" {
            scan.skip_ws();
            pending_mod = scan.ident();
            continue;
        }
        let before = scan.i;
        scan.skip_ws();
        let is_path = scan.at("::");
        scan.i = before;
        if !is_path {
            continue;
        }
        let mut module = here.clone();
        module.extend(inline.iter().map(|(n, _)| n.clone()));
        let base = match word.as_str() {
            "crate" => Vec::new(),
            "self" => module,
            "super" => {
                module.pop();
                module
            }
            w if inline.is_empty() && children.contains(w) => {
                module.push(w.to_string());
                module
            }
            _ => continue,
        };
        let mut found = Vec::new();
        scan.tree(base, &mut found);
        for mut path in found {
            // `super::super::x`: each further `super` climbs one more level.
            while path.len() > 1 && path.iter().any(|s| s == "super") {
                let at = path.iter().position(|s| s == "super").expect("present");
                path.remove(at);
                if at > 0 {
                    path.remove(at - 1);
                }
            }
            out.push(path);
        }
    }
    out
}

/// The modules a file declares (`mod x;`, `mod x { … }`).
fn declared_modules(code: &str) -> BTreeSet<String> {
    let words: Vec<&str> = code
        .split(|c: char| !is_ident(c))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .filter(|w| w[0] == "mod")
        .map(|w| w[1].to_string())
        .collect()
}

/// The import graph of `sources`: each file and the files it names (itself left out).
pub fn graph(sources: &Sources) -> Graph {
    let modules = modules(sources);
    let files: BTreeMap<&[String], &str> = modules
        .iter()
        .map(|(f, m)| (m.as_slice(), f.as_str()))
        .collect();
    let mut graph = Graph::new();
    for (file, text) in sources {
        let named = graph.entry(file.clone()).or_default();
        for path in named_paths(&modules[file], text) {
            let target = (0..=path.len())
                .rev()
                .find_map(|n| files.get(&path[..n]).copied());
            if let Some(target) = target.filter(|t| *t != file) {
                named.insert(target.to_string());
            }
        }
    }
    graph
}

/// Every import cycle: each group of files that reach each other (a strongly connected
/// component of more than one file), as one cycle through it.
pub fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut in_cycle = BTreeSet::new();
    for start in graph.keys() {
        if in_cycle.contains(start) {
            continue;
        }
        if let Some(cycle) = path_back(graph, start) {
            in_cycle.extend(cycle.iter().cloned());
            out.push(cycle);
        }
    }
    out
}

/// The shortest way from `start` back to itself, if any (breadth first).
fn path_back(graph: &Graph, start: &str) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut todo = std::collections::VecDeque::from([start]);
    while let Some(at) = todo.pop_front() {
        for next in graph.get(at).into_iter().flatten() {
            if next == start {
                let mut cycle = vec![at.to_string()];
                let mut back = at;
                while back != start {
                    back = came_from[back];
                    cycle.push(back.to_string());
                }
                cycle.reverse();
                cycle.push(start.to_string());
                return Some(cycle);
            }
            if !came_from.contains_key(next.as_str()) {
                came_from.insert(next, at);
                todo.push_back(next);
            }
        }
    }
    None
}

/// A `mod NAME;` declaration: whether it sits under `#[cfg(test)]`, and its `#[path]`.
struct Declaration {
    name: String,
    test: bool,
    path: Option<String>,
}

/// The out-of-line modules a file declares, with the attributes before each.
fn declarations(text: &str) -> Vec<Declaration> {
    let code = code_only(text, true);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("mod ") {
        let at = from + at;
        from = at + 4;
        if at > 0 && is_ident(code.as_bytes()[at - 1] as char) {
            continue;
        }
        let rest = &code[at + 4..];
        let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        if name.is_empty() || !rest[name.len()..].trim_start().starts_with(';') {
            continue;
        }
        let head_start = code[..at].rfind([';', '{', '}']).map_or(0, |p| p + 1);
        let head = &code[head_start..at];
        let path = head.find("#[path").and_then(|p| {
            let quoted = &head[p..];
            let open = quoted.find('"')? + 1;
            let close = quoted[open..].find('"')? + open;
            Some(quoted[open..close].to_string())
        });
        out.push(Declaration {
            name,
            test: head.contains("#[cfg(test)]"),
            path,
        });
    }
    out
}

/// Each file's module path, `#[path]` attributes followed.
pub fn modules(sources: &Sources) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = sources
        .iter()
        .map(|(f, _)| (f.clone(), module_path(f)))
        .collect();
    for (file, text) in sources {
        for d in declarations(text) {
            if let Some(path) = d.path {
                let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
                let target = if dir.is_empty() {
                    path
                } else {
                    format!("{dir}/{path}")
                };
                let mut module = module_path(file);
                module.push(d.name);
                out.insert(target, module);
            }
        }
    }
    out
}

/// The files that are test code: declared under `#[cfg(test)]` (`#[cfg(test)] mod tests;`),
/// and the files below them.
pub fn test_files(sources: &Sources) -> BTreeSet<String> {
    let modules = modules(sources);
    let mut tests = BTreeSet::new();
    for (file, text) in sources {
        for d in declarations(text).into_iter().filter(|d| d.test) {
            let mut path = modules[file].clone();
            path.push(d.name);
            tests.insert(path);
        }
    }
    modules
        .into_iter()
        .filter(|(_, path)| (1..=path.len()).any(|n| tests.contains(&path[..n])))
        .map(|(f, _)| f)
        .collect()
}
