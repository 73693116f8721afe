//! Rust: RustSec function paths (`crate::module::Type::function`) matched against the paths
//! a file names, each path's first segment resolved through the file's `use` declarations
//! (aliases, lists, globs) and `extern crate … as …`; a method of the vulnerable name called
//! with `.` on any value, in a file that uses the crate, is a site by name.

use std::collections::HashMap;

use tree_sitter::Node;

use super::{FileText, Found, call_or_reference, each_node, is_callee};
use crate::symbols::VulnerableImport;
use crate::verdict::SiteKind;

/// The names a file's `use` declarations bring in.
#[derive(Default)]
struct Uses {
    /// Local name → the full path it stands for.
    names: HashMap<String, Vec<String>>,
    /// `use a::b::*` prefixes.
    globs: Vec<Vec<String>>,
}

impl Uses {
    /// The full path of `path` as written in the file.
    fn resolve(&self, path: &[String]) -> Vec<String> {
        let Some((first, rest)) = path.split_first() else {
            return Vec::new();
        };
        match self.names.get(first) {
            Some(full) => full.iter().chain(rest).cloned().collect(),
            None => path.to_vec(),
        }
    }
}

pub(crate) fn find(file: &FileText<'_>, imports: &[VulnerableImport]) -> Found {
    let mut found = Found::default();
    let mut uses = Uses::default();
    each_node(file.tree.root_node(), |node| match node.kind() {
        "use_declaration" => {
            let mut bound = Vec::new();
            if let Some(argument) = node.child_by_field_name("argument") {
                expand(file, argument, &[], &mut uses, &mut bound);
            }
            use_sites(file, node, &bound, imports, &mut found);
        }
        "extern_crate_declaration" => {
            let name = node.child_by_field_name("name").map(|n| file.text_of(n));
            let alias = node.child_by_field_name("alias").map(|n| file.text_of(n));
            if let (Some(name), Some(alias)) = (name, alias) {
                uses.names.insert(alias.to_string(), vec![name.to_string()]);
            }
        }
        _ => {}
    });
    each_node(file.tree.root_node(), |node| {
        let path = match node.kind() {
            "scoped_identifier" if !nested(node) => flatten(file, node),
            "identifier" if is_callee(node) => flatten(file, node),
            "field_expression" if is_callee(node) => {
                method_by_name(file, node, imports, &mut found);
                None
            }
            "token_tree" => {
                macro_paths(file, node, &uses, imports, &mut found);
                None
            }
            _ => None,
        };
        let Some(path) = path else {
            return;
        };
        for full in candidates(&uses, &path) {
            if let Some(symbol) = vulnerable(imports, &full) {
                let kind = call_or_reference(node);
                found.reaching.push(file.site(node, kind, symbol));
            }
        }
    });
    found
}

/// The paths written among a macro's tokens (its arguments are tokens to the parser, not
/// expressions: `println!("{}", a::b())` holds no call node): a run of `a::b::c` tokens
/// (optionally after a leading `::`) is a call when a `(…)` follows it; a run of one
/// segment counts only as a call, a longer one as a reference too. A run after `.` (a
/// method, whose receiver the tokens do not type) or before `!` (a macro's name) is not a
/// path. Each token tree reads its own tokens; the nested ones are visited on their own.
fn macro_paths(
    file: &FileText<'_>,
    tree: Node<'_>,
    uses: &Uses,
    imports: &[VulnerableImport],
    found: &mut Found,
) {
    let is_segment = |n: Node<'_>| matches!(n.kind(), "identifier" | "self" | "super" | "crate");
    let mut cursor = tree.walk();
    let tokens: Vec<Node<'_>> = tree.children(&mut cursor).collect();
    let mut i = 0;
    while i < tokens.len() {
        let start = i;
        let mut path = Vec::new();
        if tokens[i].kind() == "::" && tokens.get(i + 1).is_some_and(|t| is_segment(*t)) {
            path.push(String::new());
            i += 1;
        }
        while i < tokens.len() && is_segment(tokens[i]) {
            path.push(file.text_of(tokens[i]).to_string());
            i += 1;
            let more = tokens.get(i).is_some_and(|t| t.kind() == "::")
                && tokens.get(i + 1).is_some_and(|t| is_segment(*t));
            if !more {
                break;
            }
            i += 1;
        }
        let named = path.iter().filter(|s| !s.is_empty()).count();
        if named == 0 {
            i = start + 1;
            continue;
        }
        let after_dot = start > 0 && tokens[start - 1].kind() == ".";
        let next = tokens.get(i);
        let is_macro = next.is_some_and(|t| t.kind() == "!");
        let called = next.is_some_and(|t| {
            t.kind() == "token_tree" && t.child(0).is_some_and(|c| c.kind() == "(")
        });
        if after_dot || is_macro || !(called || named > 1) {
            continue;
        }
        let kind = if called {
            SiteKind::Call
        } else {
            SiteKind::Reference
        };
        for full in candidates(uses, &path) {
            if let Some(symbol) = vulnerable(imports, &full) {
                found.reaching.push(file.site(tokens[start], kind, symbol));
                break;
            }
        }
    }
}

/// The full paths a path written in the file may stand for: through a `use` of its first
/// segment, or under a glob when it is a bare name no `use` binds.
fn candidates(uses: &Uses, path: &[String]) -> Vec<Vec<String>> {
    let mut out = vec![uses.resolve(path)];
    if path.len() == 1 && !uses.names.contains_key(&path[0]) {
        out.extend(
            uses.globs
                .iter()
                .map(|glob| glob.iter().chain(path).cloned().collect()),
        );
    }
    out
}

/// The advisory's spelling of the vulnerable symbol `full` is, if any.
fn vulnerable<'v>(imports: &'v [VulnerableImport], full: &[String]) -> Option<&'v str> {
    let full: Vec<&str> = full
        .iter()
        .map(String::as_str)
        .skip_while(|s| s.is_empty())
        .collect();
    let (root, rest) = full.split_first()?;
    imports
        .iter()
        .filter(|i| i.path == *root)
        .flat_map(|i| &i.symbols)
        .find(|s| {
            s.segments
                .iter()
                .map(String::as_str)
                .eq(rest.iter().copied())
        })
        .map(|s| s.name.as_str())
}

/// An import site for a `use` of an affected crate, and a reference site when it names a
/// vulnerable symbol itself.
fn use_sites(
    file: &FileText<'_>,
    node: Node<'_>,
    bound: &[Vec<String>],
    imports: &[VulnerableImport],
    found: &mut Found,
) {
    let mut imported = None;
    for path in bound {
        if let Some(import) = imports.iter().find(|i| path.first() == Some(&i.path)) {
            imported = Some(import);
        }
        if let Some(symbol) = vulnerable(imports, path) {
            found
                .reaching
                .push(file.site(node, SiteKind::Reference, symbol));
        }
    }
    if let Some(import) = imported {
        found
            .imports
            .push(file.site(node, SiteKind::Import, &import.path));
    }
}

/// Expands a use tree under `prefix`, recording each bound name and glob, and every full
/// path named (in `bound`).
fn expand(
    file: &FileText<'_>,
    node: Node<'_>,
    prefix: &[String],
    uses: &mut Uses,
    bound: &mut Vec<Vec<String>>,
) {
    let joined =
        |tail: Vec<String>| -> Vec<String> { prefix.iter().cloned().chain(tail).collect() };
    match node.kind() {
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                expand(file, child, prefix, uses, bound);
            }
        }
        "scoped_use_list" => {
            let path = node
                .child_by_field_name("path")
                .and_then(|p| flatten(file, p))
                .unwrap_or_default();
            if let Some(list) = node.child_by_field_name("list") {
                expand(file, list, &joined(path), uses, bound);
            }
        }
        "use_as_clause" => {
            let path = node
                .child_by_field_name("path")
                .and_then(|p| flatten(file, p));
            let alias = node.child_by_field_name("alias").map(|a| file.text_of(a));
            if let (Some(path), Some(alias)) = (path, alias) {
                let mut full = joined(path);
                if full.last().is_some_and(|s| s == "self") {
                    full.pop();
                }
                bound.push(full.clone());
                uses.names.insert(alias.to_string(), full);
            }
        }
        "use_wildcard" => {
            let mut cursor = node.walk();
            let path = node
                .named_children(&mut cursor)
                .next()
                .and_then(|p| flatten(file, p));
            let full = joined(path.unwrap_or_default());
            bound.push(full.clone());
            uses.globs.push(full);
        }
        _ => {
            let Some(path) = flatten(file, node) else {
                return;
            };
            let mut full = joined(path);
            if full.last().is_some_and(|s| s == "self") {
                full.pop();
            }
            if let Some(name) = full.last().cloned() {
                bound.push(full.clone());
                uses.names.insert(name, full);
            }
        }
    }
}

/// The segments of a path node (`a::b::C`, `C::<T>::f`, `::a::b`); `None` for a qualified
/// path (`<T as Trait>::f`) or anything else.
fn flatten(file: &FileText<'_>, node: Node<'_>) -> Option<Vec<String>> {
    match node.kind() {
        "scoped_identifier" | "scoped_type_identifier" => {
            let mut path = match node.child_by_field_name("path") {
                Some(path) => flatten(file, path)?,
                None => Vec::new(),
            };
            path.push(file.text_of(node.child_by_field_name("name")?).to_string());
            Some(path)
        }
        "generic_type" => flatten(file, node.child_by_field_name("type")?),
        "identifier" | "type_identifier" | "crate" | "self" | "super" => {
            Some(vec![file.text_of(node).to_string()])
        }
        _ => None,
    }
}

/// A scoped identifier that is the path of another, or inside a `use`, is read as part of
/// its parent.
fn nested(node: Node<'_>) -> bool {
    let mut parent = node.parent();
    if parent.is_some_and(|p| matches!(p.kind(), "scoped_identifier" | "generic_type")) {
        return true;
    }
    while let Some(p) = parent {
        if p.kind() == "use_declaration" {
            return true;
        }
        parent = p.parent();
    }
    false
}

/// `value.method(…)` where a vulnerable symbol is a method of that name, in a file that
/// uses the crate.
fn method_by_name(
    file: &FileText<'_>,
    node: Node<'_>,
    imports: &[VulnerableImport],
    found: &mut Found,
) {
    let Some(field) = node.child_by_field_name("field") else {
        return;
    };
    let name = file.text_of(field);
    for import in imports {
        if !found.imports.iter().any(|site| site.symbol == import.path) {
            continue;
        }
        for symbol in import.symbols.iter().filter(|s| s.is_method()) {
            if symbol.last() == name {
                let site = file.site(node, SiteKind::MethodByName, &symbol.name);
                found.reaching.push(site);
            }
        }
    }
}
