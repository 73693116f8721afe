//! Maven pom.xml.
//!
//! Dependencies come from `<dependencies>`, `<dependencyManagement>` and the same two inside
//! `<profiles>`; names are `groupId:artifactId`. `${name}` is resolved from `<properties>`
//! (recursively; a cycle or an undefined property leaves the dependency unresolved, with a
//! note), from `project.version`/`project.groupId` (falling back to the parent's) and
//! `project.parent.version`, and from the parent pom's properties when the parent is in the
//! tree (`<relativePath>`, default `../pom.xml`). A dependency without a version takes the one
//! this pom's dependencyManagement gives; otherwise a parent or BOM manages it (a note).
//! `<scope>test</scope>` is development-only. Managed versions that no dependency of this pom
//! uses are reported with unknown kind: they apply only if something brings the artifact in.

use std::collections::{HashMap, HashSet};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};
use roxmltree::{Document, Node, ParsingOptions};

use crate::Ctx;
use crate::collect::Deps;
use crate::error::{ReadError, ReadErrorKind};
use crate::gradle::is_single_version;
use crate::text::load;
use crate::tree::{dir_of, join};

fn parse_xml<'t>(path: &str, text: &'t str) -> Result<Document<'t>, ReadError> {
    let options = ParsingOptions {
        // A pom has no use for a DTD; refusing it rules out entity expansion entirely.
        allow_dtd: false,
        nodes_limit: 5_000_000,
        ..ParsingOptions::default()
    };
    Document::parse_with_options(text, options).map_err(|e| {
        ReadError::new(
            path,
            Some(e.pos().row),
            ReadErrorKind::Syntax,
            format!("invalid XML: {e}"),
        )
    })
}

fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    node.children()
        .find(|c| c.is_element() && c.tag_name().name() == name)
}

fn children<'a, 'i>(node: Node<'a, 'i>, name: &'a str) -> impl Iterator<Item = Node<'a, 'i>> + 'a {
    node.children()
        .filter(move |c| c.is_element() && c.tag_name().name() == name)
}

fn text_of(node: Option<Node<'_, '_>>) -> Option<String> {
    node.and_then(|n| n.text())
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// Properties in scope for one pom: its own, then its parents'.
struct Props {
    values: HashMap<String, String>,
}

impl Props {
    /// Replaces every `${name}`; `Err(name)` for the first that cannot be resolved.
    fn resolve(&self, s: &str) -> Result<String, String> {
        self.resolve_in(s, &mut Vec::new())
    }

    fn resolve_in(&self, s: &str, stack: &mut Vec<String>) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            out.push_str(rest.get(..start).unwrap_or(""));
            let after = rest.get(start + 2..).unwrap_or("");
            let Some(end) = after.find('}') else {
                out.push_str(rest.get(start..).unwrap_or(""));
                return Ok(out);
            };
            let name = after.get(..end).unwrap_or("").to_string();
            // A property that refers back to itself (directly or not) has no value.
            if stack.contains(&name) || stack.len() > 32 {
                return Err(name);
            }
            let raw = self.values.get(&name).ok_or_else(|| name.clone())?;
            stack.push(name);
            let value = self.resolve_in(raw, stack)?;
            stack.pop();
            out.push_str(&value);
            rest = after.get(end + 1..).unwrap_or("");
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// The properties a pom defines for itself (and the project.* names it answers).
fn own_properties(project: Node<'_, '_>) -> HashMap<String, String> {
    let mut values = HashMap::new();
    if let Some(props) = child(project, "properties") {
        for p in props.children().filter(Node::is_element) {
            values.insert(
                p.tag_name().name().to_string(),
                p.text().unwrap_or("").trim().to_string(),
            );
        }
    }
    let parent = child(project, "parent");
    let parent_version = text_of(parent.and_then(|p| child(p, "version")));
    let parent_group = text_of(parent.and_then(|p| child(p, "groupId")));
    let version = text_of(child(project, "version")).or(parent_version.clone());
    let group = text_of(child(project, "groupId")).or(parent_group.clone());
    let artifact = text_of(child(project, "artifactId"));
    let mut set = |keys: &[&str], v: &Option<String>| {
        if let Some(v) = v {
            for k in keys {
                values.entry((*k).to_string()).or_insert_with(|| v.clone());
            }
        }
    };
    set(&["project.version", "pom.version", "version"], &version);
    set(&["project.groupId", "pom.groupId", "groupId"], &group);
    set(
        &["project.artifactId", "pom.artifactId", "artifactId"],
        &artifact,
    );
    set(
        &["project.parent.version", "parent.version"],
        &parent_version,
    );
    set(&["project.parent.groupId", "parent.groupId"], &parent_group);
    values
}

/// Adds the properties of the pom's parents found in the tree (nearest first wins).
fn parent_properties(
    ctx: &mut Ctx<'_>,
    project: Node<'_, '_>,
    values: &mut HashMap<String, String>,
) {
    let mut seen: HashSet<String> = HashSet::from([ctx.path.to_string()]);
    let mut current_path = ctx.path.to_string();
    let mut relative = child(project, "parent")
        .map(|p| text_of(child(p, "relativePath")).unwrap_or_else(|| "../pom.xml".to_string()));
    let mut hops = 0usize;
    while let Some(rel) = relative.take() {
        if hops >= ctx.limits.max_included_files || rel.is_empty() {
            break;
        }
        hops += 1;
        let rel = if rel.ends_with(".xml") {
            rel
        } else {
            format!("{}/pom.xml", rel.trim_end_matches('/'))
        };
        let Some(parent_path) = join(dir_of(&current_path), &rel) else {
            break;
        };
        if !seen.insert(parent_path.clone()) {
            break;
        }
        let text = match load(ctx.tree, &parent_path, ctx.limits) {
            Ok(Some(t)) => t,
            Ok(None) => break,
            Err(e) => {
                ctx.note(format!("{e} (its properties are not used)"));
                break;
            }
        };
        let doc = match parse_xml(&parent_path, &text) {
            Ok(d) => d,
            Err(e) => {
                ctx.note(format!("{e} (its properties are not used)"));
                break;
            }
        };
        let parent_project = doc.root_element();
        for (k, v) in own_properties(parent_project) {
            // project.* of the parent are the parent's, not this pom's.
            if !k.starts_with("project.")
                && !k.starts_with("pom.")
                && !matches!(k.as_str(), "version" | "groupId" | "artifactId")
            {
                values.entry(k).or_insert(v);
            }
        }
        relative = child(parent_project, "parent")
            .map(|p| text_of(child(p, "relativePath")).unwrap_or_else(|| "../pom.xml".to_string()));
        current_path = parent_path;
    }
}

struct Declared {
    name: Result<String, String>,
    version: Option<Result<String, String>>,
    dev: bool,
    line: u32,
}

fn declared(doc: &Document<'_>, node: Node<'_, '_>, props: &Props) -> Declared {
    let field = |n: &str| text_of(child(node, n)).map(|v| props.resolve(&v));
    let name = match (field("groupId"), field("artifactId")) {
        (Some(Ok(g)), Some(Ok(a))) => Ok(format!("{g}:{a}")),
        (Some(Err(p)), _) | (_, Some(Err(p))) => Err(format!("undefined property `${{{p}}}`")),
        _ => Err("no groupId or artifactId".to_string()),
    };
    Declared {
        name,
        version: field("version"),
        dev: text_of(child(node, "scope")).as_deref() == Some("test"),
        line: doc.text_pos_at(node.range().start).row,
    }
}

pub(crate) fn read(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let doc = parse_xml(ctx.path, text)?;
    let project = doc.root_element();
    if project.tag_name().name() != "project" {
        return Err(ReadError::new(
            ctx.path,
            Some(doc.text_pos_at(project.range().start).row),
            ReadErrorKind::Shape,
            format!(
                "the root element should be <project>, not <{}>",
                project.tag_name().name()
            ),
        ));
    }
    let mut values = own_properties(project);
    parent_properties(ctx, project, &mut values);
    let props = Props { values };

    // Where dependencies are declared: the project and each profile.
    let mut scopes = vec![project];
    if let Some(profiles) = child(project, "profiles") {
        scopes.extend(children(profiles, "profile"));
    }
    let mut direct = Vec::new();
    let mut managed = Vec::new();
    for scope in scopes {
        if let Some(list) = child(scope, "dependencies") {
            direct.extend(children(list, "dependency").map(|d| declared(&doc, d, &props)));
        }
        if let Some(list) =
            child(scope, "dependencyManagement").and_then(|m| child(m, "dependencies"))
        {
            managed.extend(children(list, "dependency").map(|d| declared(&doc, d, &props)));
        }
    }
    let managed_versions: HashMap<String, String> = managed
        .iter()
        .filter_map(|m| match (&m.name, &m.version) {
            (Ok(n), Some(Ok(v))) => Some((n.clone(), v.clone())),
            _ => None,
        })
        .collect();

    let mut deps = Deps::default();
    let mut used: HashSet<String> = HashSet::new();
    for (list, kind) in [
        (direct, DependencyKind::Direct),
        (managed, DependencyKind::Unknown),
    ] {
        for d in list {
            let line = d.line;
            let name = match d.name {
                Ok(n) => n,
                Err(why) => {
                    ctx.note(format!("line {line}: dependency skipped: {why}"));
                    continue;
                }
            };
            if kind == DependencyKind::Unknown && used.contains(&name) {
                continue;
            }
            let version = match d.version {
                Some(Ok(v)) => v,
                Some(Err(p)) => {
                    ctx.note(format!(
                        "line {line}: {name}: version uses the undefined property `${{{p}}}`"
                    ));
                    continue;
                }
                None => match managed_versions.get(&name) {
                    Some(v) if kind == DependencyKind::Direct => v.clone(),
                    _ => {
                        ctx.note(format!(
                            "line {line}: {name} has no version here (a parent or an imported BOM manages it)"
                        ));
                        continue;
                    }
                },
            };
            if !is_single_version(&version) {
                ctx.note(format!(
                    "line {line}: {name}: `{version}` is a range, not an exact version"
                ));
                continue;
            }
            used.insert(name.clone());
            deps.push(Dependency {
                ecosystem: Ecosystem::Maven,
                name,
                version,
                kind,
                origin: Origin::Registry,
                dev: d.dev,
                line: Some(line),
            });
        }
    }
    Ok(deps.into_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, MemTree, read};

    const POM: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>com.example</groupId>
    <artifactId>parent</artifactId>
    <version>7.1.0</version>
  </parent>
  <artifactId>app</artifactId>
  <properties>
    <jackson.version>${jackson.major}.15.2</jackson.version>
    <jackson.major>2</jackson.major>
    <loop.a>${loop.b}</loop.a>
    <loop.b>${loop.a}</loop.b>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>org.slf4j</groupId>
        <artifactId>slf4j-api</artifactId>
        <version>2.0.9</version>
      </dependency>
      <dependency>
        <groupId>org.unused</groupId>
        <artifactId>managed-only</artifactId>
        <version>1.0.0</version>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>com.fasterxml.jackson.core</groupId>
      <artifactId>jackson-databind</artifactId>
      <version>${jackson.version}</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-api</artifactId>
    </dependency>
    <dependency>
      <groupId>${project.groupId}</groupId>
      <artifactId>sibling</artifactId>
      <version>${project.version}</version>
    </dependency>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
    <dependency>
      <groupId>x</groupId>
      <artifactId>looped</artifactId>
      <version>${loop.a}</version>
    </dependency>
    <dependency>
      <groupId>x</groupId>
      <artifactId>undefined</artifactId>
      <version>${nope}</version>
    </dependency>
    <dependency>
      <groupId>x</groupId>
      <artifactId>ranged</artifactId>
      <version>[1.0,2.0)</version>
    </dependency>
    <dependency>
      <groupId>x</groupId>
      <artifactId>from-parent-prop</artifactId>
      <version>${parent.prop}</version>
    </dependency>
  </dependencies>
</project>
"#;

    #[test]
    fn properties_management_scopes_and_lines() {
        let mut tree = MemTree::with("app/pom.xml", POM);
        tree.insert(
            "pom.xml",
            "<project><groupId>com.example</groupId><artifactId>parent</artifactId><version>7.1.0</version><properties><parent.prop>3.3.3</parent.prop></properties></project>",
        );
        let file = read(&tree, "app/pom.xml", &Limits::default()).unwrap();
        let d: Vec<_> = file
            .dependencies
            .iter()
            .map(|x| (x.name.as_str(), x.version.as_str(), x.kind, x.dev, x.line))
            .collect();
        assert_eq!(
            d,
            vec![
                (
                    "org.unused:managed-only",
                    "1.0.0",
                    DependencyKind::Unknown,
                    false,
                    Some(23)
                ),
                (
                    "com.fasterxml.jackson.core:jackson-databind",
                    "2.15.2",
                    DependencyKind::Direct,
                    false,
                    Some(31)
                ),
                (
                    "org.slf4j:slf4j-api",
                    "2.0.9",
                    DependencyKind::Direct,
                    false,
                    Some(36)
                ),
                (
                    "com.example:sibling",
                    "7.1.0",
                    DependencyKind::Direct,
                    false,
                    Some(40)
                ),
                (
                    "junit:junit",
                    "4.13.2",
                    DependencyKind::Direct,
                    true,
                    Some(45)
                ),
                (
                    "x:from-parent-prop",
                    "3.3.3",
                    DependencyKind::Direct,
                    false,
                    Some(66)
                ),
            ]
        );
        let notes = file.notes.join("\n");
        assert!(
            notes.contains("line 51: x:looped: version uses the undefined property"),
            "{notes}"
        );
        assert!(
            notes.contains("line 56: x:undefined: version uses the undefined property `${nope}`"),
            "{notes}"
        );
        assert!(
            notes.contains("line 61: x:ranged: `[1.0,2.0)` is a range"),
            "{notes}"
        );
    }

    #[test]
    fn bad_xml_and_wrong_root() {
        let tree = MemTree::with("pom.xml", "<project>\n<dependencies>\n</project>");
        let err = read(&tree, "pom.xml", &Limits::default()).unwrap_err();
        assert_eq!((err.kind, err.line), (ReadErrorKind::Syntax, Some(3)));
        let tree = MemTree::with("pom.xml", "<settings/>");
        let err = read(&tree, "pom.xml", &Limits::default()).unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::Shape);
        let tree = MemTree::with(
            "pom.xml",
            "<!DOCTYPE lolz [<!ENTITY lol \"lol\">]><project>&lol;</project>",
        );
        let err = read(&tree, "pom.xml", &Limits::default()).unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::Syntax);
    }
}
