//! Python: imports of the affected modules (`import a.b`, `import a.b as x`, `from a import
//! b`, `from a import *`), then calls whose callee, resolved through those imports, is a
//! vulnerable symbol (`module.function`, `module.Class.method`); a method of the vulnerable
//! name called on any value, in a file that imports the module, is a site by name.

use std::collections::HashMap;

use tree_sitter::Node;

use super::{FileText, Found, each_node};
use crate::symbols::VulnerableImport;
use crate::verdict::SiteKind;

#[derive(Default)]
struct Bindings {
    /// Local name → the dotted path it stands for.
    names: HashMap<String, Vec<String>>,
    /// `from a import *` modules.
    globs: Vec<Vec<String>>,
}

pub(crate) fn find(file: &FileText<'_>, imports: &[VulnerableImport]) -> Found {
    let mut found = Found::default();
    let mut bindings = Bindings::default();
    each_node(file.tree.root_node(), |node| {
        let named = match node.kind() {
            "import_statement" => import(file, node, &mut bindings),
            "import_from_statement" => import_from(file, node, &mut bindings),
            _ => return,
        };
        for import in imports {
            let module = dotted(&import.path);
            if named.iter().any(|path| path.starts_with(&module)) {
                let site = file.site(node, SiteKind::Import, &import.path);
                if import.symbols.is_empty() {
                    found.reaching.push(site.clone());
                }
                found.imports.push(site);
            }
        }
    });
    if found.imports.is_empty() {
        return found;
    }
    each_node(file.tree.root_node(), |node| {
        if node.kind() == "call"
            && let Some(function) = node.child_by_field_name("function")
        {
            call(file, function, &bindings, imports, &mut found);
        }
    });
    found
}

fn dotted(path: &str) -> Vec<String> {
    path.split('.').map(str::to_string).collect()
}

/// `import a.b.c` binds `a`; `import a.b as x` binds `x` to `a.b`. Returns the modules named.
fn import(file: &FileText<'_>, node: Node<'_>, bindings: &mut Bindings) -> Vec<Vec<String>> {
    let mut named = Vec::new();
    let mut cursor = node.walk();
    for child in node.children_by_field_name("name", &mut cursor) {
        match child.kind() {
            "dotted_name" => {
                let path = dotted(file.text_of(child));
                bindings
                    .names
                    .insert(path[0].clone(), vec![path[0].clone()]);
                named.push(path);
            }
            "aliased_import" => {
                let name = child.child_by_field_name("name").map(|n| file.text_of(n));
                let alias = child.child_by_field_name("alias").map(|n| file.text_of(n));
                if let (Some(name), Some(alias)) = (name, alias) {
                    bindings.names.insert(alias.to_string(), dotted(name));
                    named.push(dotted(name));
                }
            }
            _ => {}
        }
    }
    named
}

/// `from a import b as c` binds `c` to `a.b`; `from a import *` adds a glob. Relative
/// imports name the project's own modules and are skipped. Returns the paths named (`a`
/// and each `a.b`).
fn import_from(file: &FileText<'_>, node: Node<'_>, bindings: &mut Bindings) -> Vec<Vec<String>> {
    let Some(module) = node.child_by_field_name("module_name") else {
        return Vec::new();
    };
    if module.kind() != "dotted_name" {
        return Vec::new();
    }
    let module = dotted(file.text_of(module));
    let mut named = vec![module.clone()];
    let mut cursor = node.walk();
    for child in node.children_by_field_name("name", &mut cursor) {
        let (name, local) = match child.kind() {
            "dotted_name" => (file.text_of(child), file.text_of(child)),
            "aliased_import" => {
                let name = child.child_by_field_name("name").map(|n| file.text_of(n));
                let alias = child.child_by_field_name("alias").map(|n| file.text_of(n));
                let (Some(name), Some(alias)) = (name, alias) else {
                    continue;
                };
                (name, alias)
            }
            _ => continue,
        };
        let full: Vec<String> = module.iter().cloned().chain(dotted(name)).collect();
        bindings.names.insert(local.to_string(), full.clone());
        named.push(full);
    }
    let mut cursor = node.walk();
    if node
        .children(&mut cursor)
        .any(|c| c.kind() == "wildcard_import")
    {
        bindings.globs.push(module);
    }
    named
}

/// The dotted path a callee names (`a.b.f`), before resolution; `None` for a callee that is
/// not a plain name chain (`f()()`, `x[0].f`).
fn chain(file: &FileText<'_>, node: Node<'_>) -> Option<Vec<String>> {
    match node.kind() {
        "identifier" => Some(vec![file.text_of(node).to_string()]),
        "attribute" => {
            let mut path = chain(file, node.child_by_field_name("object")?)?;
            path.push(
                file.text_of(node.child_by_field_name("attribute")?)
                    .to_string(),
            );
            Some(path)
        }
        _ => None,
    }
}

fn call(
    file: &FileText<'_>,
    function: Node<'_>,
    bindings: &Bindings,
    imports: &[VulnerableImport],
    found: &mut Found,
) {
    let mut candidates = Vec::new();
    if let Some(path) = chain(file, function) {
        match bindings.names.get(&path[0]) {
            Some(full) => candidates.push(full.iter().chain(&path[1..]).cloned().collect()),
            None if path.len() == 1 => candidates.extend(
                bindings
                    .globs
                    .iter()
                    .map(|g| g.iter().chain(&path).cloned().collect::<Vec<_>>()),
            ),
            None => {}
        }
    }
    let method = (function.kind() == "attribute")
        .then(|| function.child_by_field_name("attribute"))
        .flatten()
        .map(|a| file.text_of(a));
    for import in imports {
        let module = dotted(&import.path);
        let imported = found.imports.iter().any(|s| s.symbol == import.path);
        for symbol in &import.symbols {
            let full: Vec<String> = module.iter().chain(&symbol.segments).cloned().collect();
            if candidates.contains(&full) {
                found
                    .reaching
                    .push(file.site(function, SiteKind::Call, &symbol.name));
            } else if imported && symbol.is_method() && method == Some(symbol.last()) {
                found
                    .reaching
                    .push(file.site(function, SiteKind::MethodByName, &symbol.name));
            }
        }
    }
}
