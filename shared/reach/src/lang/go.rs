//! Go: an import of the vulnerable package path, then selectors through the import's local
//! name (`pkg.Func`, `pkg.Type.Method`), or a method of the vulnerable name called on any
//! receiver in a file that imports the package (the receiver's type is not resolved).

use tree_sitter::Node;

use super::{FileText, Found, call_or_reference, each_node, is_callee};
use crate::symbols::VulnerableImport;
use crate::verdict::SiteKind;

/// How a file names one vulnerable import.
struct Binding<'v> {
    import: &'v VulnerableImport,
    /// The identifier the file uses for the package; `None` for `_` and `.` imports, and
    /// for an unnamed import none of whose guessed names the file qualifies with.
    local: Option<String>,
    /// For an import without a name: the names its package may declare.
    guesses: Vec<String>,
    dot: bool,
}

pub(crate) fn find(file: &FileText<'_>, imports: &[VulnerableImport]) -> Found {
    let mut found = Found::default();
    let mut bindings = Vec::new();
    each_node(file.tree.root_node(), |node| {
        if node.kind() != "import_spec" {
            return;
        }
        let Some(path) = node.child_by_field_name("path") else {
            return;
        };
        let path = file.text_of(path).trim_matches(|c| c == '"' || c == '`');
        let Some(import) = imports.iter().find(|i| i.path == path) else {
            return;
        };
        let name = node.child_by_field_name("name").map(|n| file.text_of(n));
        let site = file.site(node, SiteKind::Import, &import.path);
        if import.symbols.is_empty() {
            // The Go database lists no symbols when every symbol of the package is affected.
            found.reaching.push(site.clone());
        }
        found.imports.push(site);
        bindings.push(Binding {
            import,
            local: match name {
                Some("_") | Some(".") => None,
                Some(name) => Some(name.to_string()),
                // Settled below, from the names the file qualifies with.
                None => None,
            },
            guesses: match name {
                None => package_names(path),
                Some(_) => Vec::new(),
            },
            dot: name == Some("."),
        });
    });
    if bindings.iter().all(|b| b.import.symbols.is_empty()) {
        return found;
    }
    settle_names(file, &mut bindings, &mut found);
    each_node(file.tree.root_node(), |node| match node.kind() {
        "selector_expression" => selector(file, node, &bindings, &mut found),
        "identifier" => dot_imported(file, node, &bindings, &mut found),
        _ => {}
    });
    found
}

/// An unnamed import is named by its package clause, which the file does not show: the
/// first guess the file qualifies something with (`x.F`, `x.T`) is taken. Go refuses an
/// unused import, so an import none of whose guesses is used has a name this crate cannot
/// tell: the file is marked, and an empty search over it is no proof.
fn settle_names(file: &FileText<'_>, bindings: &mut [Binding<'_>], found: &mut Found) {
    let mut qualifiers = std::collections::HashSet::new();
    each_node(file.tree.root_node(), |node| {
        let qualifier = match node.kind() {
            "selector_expression" => node.child_by_field_name("operand"),
            "qualified_type" => node.child_by_field_name("package"),
            _ => None,
        };
        if let Some(q) = qualifier.filter(|q| q.kind() != "selector_expression") {
            qualifiers.insert(file.text_of(q));
        }
    });
    for binding in bindings.iter_mut().filter(|b| !b.guesses.is_empty()) {
        binding.local = binding
            .guesses
            .iter()
            .find(|g| qualifiers.contains(g.as_str()))
            .cloned();
        if binding.local.is_none() && !binding.import.symbols.is_empty() {
            found.unresolved.push(binding.import.path.clone());
        }
    }
}

/// The names a package imported without one may declare: the path's last element less a
/// major-version suffix, and that element without the usual `go-`, `go.`, `-go`, `.go`
/// decorations (`go-sqlite3` declares `sqlite3`, `nats.go` declares `nats`).
fn package_names(path: &str) -> Vec<String> {
    let base = package_name(path);
    let mut names = vec![base.to_string()];
    let mut bare = base;
    for prefix in ["go-", "go."] {
        bare = bare.strip_prefix(prefix).unwrap_or(bare);
    }
    for suffix in ["-go", ".go", "_go"] {
        bare = bare.strip_suffix(suffix).unwrap_or(bare);
    }
    for name in [bare.to_string(), bare.replace(['-', '.'], "")] {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The last element of an import path, less a major-version suffix (`/v2`, gopkg.in's
/// `.v2`).
fn package_name(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let mut last = parts.next().unwrap_or(path);
    if is_major(last) {
        last = parts.next().unwrap_or(last);
    }
    match last.rsplit_once(".v") {
        Some((name, major)) if major.chars().all(|c| c.is_ascii_digit()) => name,
        _ => last,
    }
}

fn is_major(element: &str) -> bool {
    element
        .strip_prefix('v')
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

fn selector(file: &FileText<'_>, node: Node<'_>, bindings: &[Binding<'_>], found: &mut Found) {
    let (Some(operand), Some(field)) = (
        node.child_by_field_name("operand"),
        node.child_by_field_name("field"),
    ) else {
        return;
    };
    let field = file.text_of(field);
    for binding in bindings {
        let local = binding.local.as_deref();
        let blank = local.is_none() && !binding.dot && binding.guesses.is_empty();
        if blank {
            continue; // `import _ "path"`: nothing can be named through it.
        }
        let through_package =
            operand.kind() == "identifier" && Some(file.text_of(operand)) == local;
        for symbol in &binding.import.symbols {
            let kind = match symbol.segments.as_slice() {
                // pkg.Func
                [function] if through_package && field == function => Some(call_or_reference(node)),
                // pkg.Type.Method (a method expression), else value.Method(…) by name.
                [type_name, method] if field == method => {
                    if is_qualified(file, operand, binding, type_name) {
                        Some(call_or_reference(node))
                    } else if is_callee(node) && symbol.is_method() && !through_package {
                        Some(SiteKind::MethodByName)
                    } else {
                        None
                    }
                }
                _ => None,
            };
            if let Some(kind) = kind {
                found.reaching.push(file.site(node, kind, &symbol.name));
            }
        }
    }
}

/// `operand` is `local.type_name` (or `type_name` itself under a dot import).
fn is_qualified(file: &FileText<'_>, operand: Node<'_>, binding: &Binding<'_>, name: &str) -> bool {
    let local = binding.local.as_deref();
    match operand.kind() {
        "selector_expression" => {
            let inner = operand.child_by_field_name("operand");
            let field = operand.child_by_field_name("field");
            local.is_some()
                && inner.is_some_and(|i| Some(file.text_of(i)) == local)
                && field.is_some_and(|f| file.text_of(f) == name)
        }
        "identifier" | "type_identifier" => binding.dot && file.text_of(operand) == name,
        _ => false,
    }
}

/// Under `import . "path"`, a function symbol is called by its bare name.
fn dot_imported(file: &FileText<'_>, node: Node<'_>, bindings: &[Binding<'_>], found: &mut Found) {
    if node
        .parent()
        .is_some_and(|p| p.kind() == "selector_expression")
    {
        return;
    }
    let name = file.text_of(node);
    for binding in bindings.iter().filter(|b| b.dot) {
        for symbol in &binding.import.symbols {
            if symbol.segments.len() == 1 && symbol.segments[0] == name {
                let kind = call_or_reference(node);
                found.reaching.push(file.site(node, kind, &symbol.name));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{package_name, package_names};

    #[test]
    fn package_name_drops_major_version_suffixes() {
        assert_eq!(package_name("github.com/gin-gonic/gin"), "gin");
        assert_eq!(package_name("github.com/go-chi/chi/v5"), "chi");
        assert_eq!(package_name("gopkg.in/yaml.v2"), "yaml");
        assert_eq!(package_name("net/http"), "http");
    }

    #[test]
    fn package_names_drop_go_decorations() {
        assert_eq!(
            package_names("github.com/mattn/go-sqlite3"),
            ["go-sqlite3", "sqlite3"]
        );
        assert_eq!(
            package_names("github.com/nats-io/nats.go"),
            ["nats.go", "nats"]
        );
        assert_eq!(package_names("github.com/gin-gonic/gin"), ["gin"]);
    }
}
