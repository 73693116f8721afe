//! pyproject.toml, read once for every user: PEP 621 `[project]`, PEP 735
//! `[dependency-groups]`, Poetry's `[tool.poetry]`, the dev-dependencies of uv, rye and pdm,
//! hatch's environments, flit's `[tool.flit.metadata]` and setuptools' dynamic metadata.
//! [`manifest`] keeps what each declares, with its line; the dependency scan
//! (`poetry.rs`) takes names and exact pins from it, the sandbox's preparation what a
//! project's tests need.
//!
//! Only TOML syntax fails the read. A section of the wrong shape (`[project] dependencies =
//! "x"`) is left out and named in [`Pyproject::problems`]: the scan refuses the file by the
//! first of them, the preparation goes on with the rest.

use crate::error::ReadError;
use crate::text::{LineIndex, TomlDoc, TomlShape, TomlValue, parse_toml, toml_str, toml_table};

/// A PEP 508 requirement as written, and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub text: String,
    pub line: u32,
}

/// A named list of requirements (an extra, a group, an environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named<T> {
    pub name: String,
    pub items: Vec<T>,
}

/// What a pyproject.toml declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pyproject {
    /// `[build-system]` is there: the project is a package.
    pub build_system: bool,
    pub project: Option<Project>,
    /// `[dependency-groups]`, in table order.
    pub dependency_groups: Vec<Named<GroupItem>>,
    pub poetry: Option<Poetry>,
    /// `[tool.uv] dev-dependencies`.
    pub uv_dev: Vec<Spec>,
    /// `[tool.rye] dev-dependencies`.
    pub rye_dev: Vec<Spec>,
    /// `[tool.pdm.dev-dependencies]`, by group.
    pub pdm_dev: Vec<Named<Spec>>,
    /// `[tool.hatch.envs.*]`.
    pub hatch_envs: Vec<HatchEnv>,
    pub flit: Option<Flit>,
    /// `[tool.setuptools.dynamic]`: the files `dependencies` and each optional extra name.
    pub setuptools_dynamic: Option<Dynamic>,
    /// Sections of the wrong shape, left out (in the order read).
    pub problems: Vec<ReadError>,
}

/// PEP 621 `[project]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Project {
    pub requires_python: Option<String>,
    pub dependencies: Vec<Spec>,
    /// `[project.optional-dependencies]`, by extra.
    pub optional: Vec<Named<Spec>>,
}

/// One entry of a dependency group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupItem {
    Spec(Spec),
    /// `{include-group = "name"}`.
    Include(String),
}

/// `[tool.poetry]`: its dependency tables, `dependencies` and `dev-dependencies` first, then
/// each `[tool.poetry.group.NAME.dependencies]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Poetry {
    pub tables: Vec<PoetryTable>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoetryTable {
    /// `dependencies`, `dev-dependencies` or `group.NAME`.
    pub label: String,
    /// The group's name, for a group's table.
    pub group: Option<String>,
    pub dependencies: Vec<PoetryDependency>,
}

/// One entry of a Poetry dependency table (`python` included: the project's Python).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoetryDependency {
    pub name: String,
    pub wants: PoetryWants,
    pub line: u32,
}

/// What a Poetry dependency asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoetryWants {
    /// A bare constraint in Poetry's language (`^1.2`).
    Version(String),
    /// A table from the registry: its `version` when it gives one, its extras.
    Table {
        version: Option<String>,
        extras: Vec<String>,
    },
    /// `{git = ...}` or `{url = ...}`.
    GitOrUrl,
    /// `{path = ...}`.
    Path,
    /// A list of constraints for several Pythons.
    Several(Vec<PoetryWants>),
    /// Anything else.
    Unreadable,
}

/// One hatch environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HatchEnv {
    pub name: String,
    pub dependencies: Vec<Spec>,
    pub extra_dependencies: Vec<Spec>,
    /// The project's extras it installs.
    pub features: Vec<String>,
}

/// flit's metadata before PEP 621.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flit {
    pub requires_python: Option<String>,
    pub requires: Vec<Spec>,
    pub dev_requires: Vec<Spec>,
    pub requires_extra: Vec<Named<Spec>>,
}

/// setuptools' requirements read from files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dynamic {
    pub dependencies: Vec<String>,
    /// Each optional extra's files.
    pub optional: Vec<Named<String>>,
}

struct Reader<'a> {
    sh: TomlShape<'a>,
    problems: Vec<ReadError>,
}

impl<'a> Reader<'a> {
    /// `t[key]` when it is a table; a problem when it is something else.
    fn table<'t, 'i>(&mut self, t: &'t TomlDoc<'i>, key: &str) -> Option<&'t TomlDoc<'i>> {
        self.sh.table(t, key).unwrap_or_else(|e| {
            self.problems.push(e);
            None
        })
    }

    /// `t[key]` when it is an array: its strings (other items skipped); a problem when it is
    /// something else.
    fn specs(&mut self, t: &TomlDoc<'_>, key: &str) -> Vec<Spec> {
        match self.sh.array(t, key) {
            Ok(list) => list.map(|l| self.array(l)).unwrap_or_default(),
            Err(e) => {
                self.problems.push(e);
                Vec::new()
            }
        }
    }

    /// The strings of an array value, leniently (no problem for another shape).
    fn strings(&self, v: Option<&TomlValue<'_>>) -> Vec<Spec> {
        match v {
            Some(TomlValue::Array(list)) => self.array(list),
            _ => Vec::new(),
        }
    }

    /// An array's strings, each with its line.
    fn array(&self, list: &toml::de::DeArray<'_>) -> Vec<Spec> {
        list.iter()
            .filter_map(|item| {
                toml_str(item.get_ref()).map(|s| Spec {
                    text: s.to_string(),
                    line: self.sh.line_of(item),
                })
            })
            .collect()
    }

    /// Each key of a table, with the strings of its array (none for another value).
    fn named_lists(&self, t: &TomlDoc<'_>) -> Vec<Named<Spec>> {
        t.iter()
            .map(|(name, v)| Named {
                name: name.get_ref().to_string(),
                items: self.strings(Some(v.get_ref())),
            })
            .collect()
    }
}

fn get<'t, 'i>(t: &'t TomlDoc<'i>, key: &str) -> Option<&'t TomlValue<'i>> {
    t.get(key).map(|v| v.get_ref())
}

fn text(t: &TomlDoc<'_>, key: &str) -> Option<String> {
    get(t, key).and_then(toml_str).map(str::to_string)
}

/// Reads a pyproject.toml; only TOML syntax is an error.
pub fn manifest(path: &str, text_: &str) -> Result<Pyproject, ReadError> {
    let index = LineIndex::new(text_);
    let doc = parse_toml(path, text_, &index)?;
    let mut r = Reader {
        sh: TomlShape {
            path,
            index: &index,
        },
        problems: Vec::new(),
    };
    let mut out = Pyproject {
        build_system: doc.contains_key("build-system"),
        ..Pyproject::default()
    };
    if let Some(project) = r.table(&doc, "project") {
        let dependencies = r.specs(project, "dependencies");
        let optional = r
            .table(project, "optional-dependencies")
            .map(|o| r.named_lists(o))
            .unwrap_or_default();
        out.project = Some(Project {
            requires_python: text(project, "requires-python"),
            dependencies,
            optional,
        });
    }
    if let Some(groups) = r.table(&doc, "dependency-groups") {
        for (name, v) in groups.iter() {
            let TomlValue::Array(list) = v.get_ref() else {
                continue;
            };
            let items = list
                .iter()
                .filter_map(|item| match item.get_ref() {
                    TomlValue::String(s) => Some(GroupItem::Spec(Spec {
                        text: s.to_string(),
                        line: r.sh.line_of(item),
                    })),
                    TomlValue::Table(t) => text(t, "include-group").map(GroupItem::Include),
                    _ => None,
                })
                .collect();
            out.dependency_groups.push(Named {
                name: name.get_ref().to_string(),
                items,
            });
        }
    }
    if let Some(tool) = r.table(&doc, "tool") {
        tools(&mut r, tool, &mut out);
    }
    out.problems = r.problems;
    Ok(out)
}

/// The `[tool.*]` tables.
fn tools(r: &mut Reader<'_>, tool: &TomlDoc<'_>, out: &mut Pyproject) {
    if let Some(uv) = r.table(tool, "uv") {
        out.uv_dev = r.specs(uv, "dev-dependencies");
    }
    if let Some(rye) = get(tool, "rye").and_then(toml_table) {
        out.rye_dev = r.strings(get(rye, "dev-dependencies"));
    }
    if let Some(pdm) = get(tool, "pdm")
        .and_then(toml_table)
        .and_then(|p| get(p, "dev-dependencies"))
        .and_then(toml_table)
    {
        out.pdm_dev = r.named_lists(pdm);
    }
    if let Some(poetry) = r.table(tool, "poetry") {
        out.poetry = Some(poetry_tables(r, poetry));
    }
    if let Some(envs) = get(tool, "hatch")
        .and_then(toml_table)
        .and_then(|h| get(h, "envs"))
        .and_then(toml_table)
    {
        for (name, env) in envs.iter() {
            let Some(env) = toml_table(env.get_ref()) else {
                continue;
            };
            out.hatch_envs.push(HatchEnv {
                name: name.get_ref().to_string(),
                dependencies: r.strings(get(env, "dependencies")),
                extra_dependencies: r.strings(get(env, "extra-dependencies")),
                features: r
                    .strings(get(env, "features"))
                    .into_iter()
                    .map(|s| s.text)
                    .collect(),
            });
        }
    }
    if let Some(meta) = get(tool, "flit")
        .and_then(toml_table)
        .and_then(|f| get(f, "metadata"))
        .and_then(toml_table)
    {
        out.flit = Some(Flit {
            requires_python: text(meta, "requires-python"),
            requires: r.strings(get(meta, "requires")),
            dev_requires: r.strings(get(meta, "dev-requires")),
            requires_extra: get(meta, "requires-extra")
                .and_then(toml_table)
                .map(|e| r.named_lists(e))
                .unwrap_or_default(),
        });
    }
    if let Some(dynamic) = get(tool, "setuptools")
        .and_then(toml_table)
        .and_then(|s| get(s, "dynamic"))
        .and_then(toml_table)
    {
        out.setuptools_dynamic = Some(Dynamic {
            dependencies: dynamic_files(get(dynamic, "dependencies")),
            optional: get(dynamic, "optional-dependencies")
                .and_then(toml_table)
                .map(|o| {
                    o.iter()
                        .map(|(name, v)| Named {
                            name: name.get_ref().to_string(),
                            items: dynamic_files(Some(v.get_ref())),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        });
    }
}

/// The files of a `{file = "a.txt"}` or `{file = ["a.txt", "b.txt"]}` value.
fn dynamic_files(value: Option<&TomlValue<'_>>) -> Vec<String> {
    match value.and_then(toml_table).and_then(|t| get(t, "file")) {
        Some(TomlValue::String(one)) => vec![one.to_string()],
        Some(TomlValue::Array(list)) => list
            .iter()
            .filter_map(|i| toml_str(i.get_ref()).map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

fn poetry_tables(r: &mut Reader<'_>, poetry: &TomlDoc<'_>) -> Poetry {
    let mut out = Poetry::default();
    for label in ["dependencies", "dev-dependencies"] {
        if let Some(t) = r.table(poetry, label) {
            out.tables.push(PoetryTable {
                label: label.to_string(),
                group: None,
                dependencies: poetry_dependencies(r, t),
            });
        }
    }
    if let Some(groups) = r.table(poetry, "group") {
        for (name, g) in groups.iter() {
            if let Some(t) = toml_table(g.get_ref())
                .and_then(|g| get(g, "dependencies"))
                .and_then(toml_table)
            {
                out.tables.push(PoetryTable {
                    label: format!("group.{}", name.get_ref()),
                    group: Some(name.get_ref().to_string()),
                    dependencies: poetry_dependencies(r, t),
                });
            }
        }
    }
    out
}

fn poetry_dependencies(r: &Reader<'_>, t: &TomlDoc<'_>) -> Vec<PoetryDependency> {
    t.iter()
        .map(|(name, v)| PoetryDependency {
            name: name.get_ref().to_string(),
            wants: poetry_wants(v.get_ref()),
            line: r.sh.line_of(name),
        })
        .collect()
}

fn poetry_wants(v: &TomlValue<'_>) -> PoetryWants {
    match v {
        TomlValue::String(s) => PoetryWants::Version(s.to_string()),
        TomlValue::Table(t) if t.contains_key("git") || t.contains_key("url") => {
            PoetryWants::GitOrUrl
        }
        TomlValue::Table(t) if t.contains_key("path") => PoetryWants::Path,
        TomlValue::Table(t) => PoetryWants::Table {
            version: text(t, "version"),
            extras: match get(t, "extras") {
                Some(TomlValue::Array(list)) => list
                    .iter()
                    .filter_map(|i| toml_str(i.get_ref()).map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            },
        },
        TomlValue::Array(list) => {
            PoetryWants::Several(list.iter().map(|i| poetry_wants(i.get_ref())).collect())
        }
        _ => PoetryWants::Unreadable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReadErrorKind;

    fn texts(list: &[Spec]) -> Vec<(&str, u32)> {
        list.iter().map(|s| (s.text.as_str(), s.line)).collect()
    }

    /// What both users read: PEP 621's dependencies and extras, dependency groups with
    /// their includes, Poetry's tables (a version, a table, git and path sources), uv's
    /// dev-dependencies, each with its line; a section of the wrong shape is a problem
    /// named by line, and the rest is still read.
    #[test]
    fn a_pyproject_is_read_once_for_every_user() {
        let text = r#"[build-system]
requires = ["setuptools"]
[project]
name = "demo"
requires-python = ">=3.8"
dependencies = ["click>=8", "requests==2.31.0"]
[project.optional-dependencies]
test = ["pytest"]
[dependency-groups]
dev = ["ruff", {include-group = "typing"}]
typing = ["mypy"]
[tool.uv]
dev-dependencies = ["coverage"]
[tool.poetry.dependencies]
python = "^3.8"
rich = "^13.1"
[tool.poetry.group.test.dependencies]
hypothesis = {version = "~6.8", extras = ["cli"]}
local = {path = "../local"}
remote = {git = "https://x/r.git"}
"#;
        let p = manifest("pyproject.toml", text).unwrap();
        assert!(p.build_system && p.problems.is_empty(), "{:?}", p.problems);
        let project = p.project.as_ref().unwrap();
        assert_eq!(project.requires_python.as_deref(), Some(">=3.8"));
        assert_eq!(
            texts(&project.dependencies),
            [("click>=8", 6), ("requests==2.31.0", 6)]
        );
        assert_eq!(project.optional[0].name, "test");
        assert_eq!(texts(&project.optional[0].items), [("pytest", 8)]);
        let groups: Vec<(&str, &[GroupItem])> = p
            .dependency_groups
            .iter()
            .map(|g| (g.name.as_str(), g.items.as_slice()))
            .collect();
        assert_eq!(groups[0].0, "dev");
        assert_eq!(groups[0].1[1], GroupItem::Include("typing".into()));
        assert_eq!(texts(&p.uv_dev), [("coverage", 13)]);
        let poetry: Vec<(&str, Option<&str>, &str, &PoetryWants, u32)> = p
            .poetry
            .as_ref()
            .unwrap()
            .tables
            .iter()
            .flat_map(|t| {
                t.dependencies.iter().map(move |d| {
                    (
                        t.label.as_str(),
                        t.group.as_deref(),
                        d.name.as_str(),
                        &d.wants,
                        d.line,
                    )
                })
            })
            .collect();
        let table = PoetryWants::Table {
            version: Some("~6.8".into()),
            extras: vec!["cli".into()],
        };
        assert_eq!(
            poetry,
            [
                (
                    "dependencies",
                    None,
                    "python",
                    &PoetryWants::Version("^3.8".into()),
                    15
                ),
                (
                    "dependencies",
                    None,
                    "rich",
                    &PoetryWants::Version("^13.1".into()),
                    16
                ),
                ("group.test", Some("test"), "hypothesis", &table, 18),
                ("group.test", Some("test"), "local", &PoetryWants::Path, 19),
                (
                    "group.test",
                    Some("test"),
                    "remote",
                    &PoetryWants::GitOrUrl,
                    20
                ),
            ]
        );
        let p = manifest(
            "pyproject.toml",
            "[project]\ndependencies = \"click\"\n[tool.uv]\ndev-dependencies = [\"coverage\"]\n",
        )
        .unwrap();
        assert_eq!(
            p.problems
                .iter()
                .map(|e| (e.kind, e.line))
                .collect::<Vec<_>>(),
            [(ReadErrorKind::Shape, Some(2))]
        );
        assert_eq!(texts(&p.uv_dev), [("coverage", 4)]);
        assert_eq!(
            manifest("pyproject.toml", "[project\n").unwrap_err().kind,
            ReadErrorKind::Syntax
        );
    }
}
