//! Gradle: version catalogs (`gradle/libs.versions.toml`) and build scripts
//! (`build.gradle.kts`, and Groovy `build.gradle`, whose literal coordinates read the same).
//!
//! Maven names are `group:artifact`. A catalog library's version is a string, a
//! `version.ref` into `[versions]`, or a rich version (`strictly`, `require`, `prefer`): the
//! first of those that is a single version is taken; ranges and dynamic versions (`1.+`,
//! `latest.release`) are not versions and become notes, as do libraries without a version
//! (managed by a platform/BOM). Plugins and bundles are not libraries.
//!
//! In a build script, a dependency is a literal `"group:artifact:version"` passed to a
//! configuration (`implementation("...")`, `testImplementation '...'`, also inside
//! `platform(...)`), or the named form `(group = "g", name = "a", version = "v")`. Catalog
//! references (`libs.x.y`) are not versions: their versions are in the catalog. Configurations
//! whose name starts with `test` or contains `Test` are development-only.

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::collect::Deps;
use crate::error::ReadError;
use crate::text::{LineIndex, TomlDoc, TomlShape, TomlValue, decode, parse_toml, toml_str};
use crate::{Ctx, Limits, Tree};

pub(crate) fn read_catalog(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let index = LineIndex::new(text);
    let doc = parse_toml(ctx.path, text, &index)?;
    let sh = TomlShape {
        path: ctx.path,
        index: &index,
    };
    let empty = TomlDoc::default();
    let versions = sh.table(&doc, "versions")?.unwrap_or(&empty);
    let mut deps = Deps::default();
    let mut unversioned = Vec::new();
    if let Some(libraries) = sh.table(&doc, "libraries")? {
        for (alias, value) in libraries.iter() {
            let line = sh.line_of(alias);
            let alias = alias.get_ref();
            let (module, version) = match value.get_ref() {
                TomlValue::String(s) => {
                    let mut parts = s.splitn(3, ':');
                    let (g, a, v) = (parts.next(), parts.next(), parts.next());
                    match (g, a) {
                        (Some(g), Some(a)) => {
                            (format!("{g}:{a}"), v.map(|v| Version::Text(v.to_string())))
                        }
                        _ => {
                            ctx.note(format!("line {line}: library `{alias}` = `{s}` is not `group:artifact:version`"));
                            continue;
                        }
                    }
                }
                TomlValue::Table(t) => {
                    let module = match (
                        sh.string(t, "module")?,
                        sh.string(t, "group")?,
                        sh.string(t, "name")?,
                    ) {
                        (Some(m), _, _) => m.to_string(),
                        (None, Some(g), Some(n)) => format!("{g}:{n}"),
                        _ => {
                            ctx.note(format!("line {line}: library `{alias}` has neither `module` nor `group` and `name`"));
                            continue;
                        }
                    };
                    let version = t.get("version").map(|v| version_of(v.get_ref(), versions));
                    (module, version)
                }
                _ => {
                    return Err(ReadError::shape(
                        ctx.path,
                        Some(line),
                        &format!("libraries.{alias}"),
                        "a string or a table",
                    ));
                }
            };
            match version.map(|v| v.resolve()) {
                Some(Ok(v)) => deps.push(Dependency {
                    ecosystem: Ecosystem::Maven,
                    name: module,
                    version: v,
                    kind: DependencyKind::Direct,
                    origin: Origin::Registry,
                    dev: false,
                    line: Some(line),
                }),
                Some(Err(why)) => {
                    ctx.note(format!("line {line}: library `{alias}` ({module}): {why}"))
                }
                None => unversioned.push(alias.to_string()),
            }
        }
    }
    if !unversioned.is_empty() {
        ctx.note(format!(
            "{} libraries have no version (a platform or BOM manages it): {}",
            unversioned.len(),
            unversioned.join(", ")
        ));
    }
    if let Some(plugins) = sh.table(&doc, "plugins")? {
        ctx.note(format!(
            "{} plugins are not libraries and were not read",
            plugins.len()
        ));
    }
    Ok(deps.into_vec())
}

/// A catalog version before it is checked for exactness.
enum Version {
    Text(String),
    Rich {
        strictly: Option<String>,
        require: Option<String>,
        prefer: Option<String>,
    },
    MissingRef(String),
    Invalid,
}

fn version_of(v: &TomlValue<'_>, versions: &TomlDoc<'_>) -> Version {
    match v {
        TomlValue::String(s) => Version::Text(s.to_string()),
        TomlValue::Table(t) => {
            if let Some(r) = t.get("ref").and_then(|r| toml_str(r.get_ref())) {
                return match versions.get(r) {
                    // A `[versions]` entry is a string or a rich table, never another ref.
                    Some(target) => match target.get_ref() {
                        TomlValue::Table(rt) if rt.contains_key("ref") => Version::Invalid,
                        other => version_of(other, versions),
                    },
                    None => Version::MissingRef(r.to_string()),
                };
            }
            let field = |k: &str| {
                t.get(k)
                    .and_then(|x| toml_str(x.get_ref()))
                    .map(str::to_string)
            };
            Version::Rich {
                strictly: field("strictly"),
                require: field("require"),
                prefer: field("prefer"),
            }
        }
        _ => Version::Invalid,
    }
}

impl Version {
    fn resolve(self) -> Result<String, String> {
        match self {
            Version::Text(v) if is_single_version(&v) => Ok(v),
            Version::Text(v) => Err(format!(
                "`{v}` is a range or dynamic version, not an exact one"
            )),
            Version::Rich {
                strictly,
                require,
                prefer,
            } => [strictly, require, prefer]
                .into_iter()
                .flatten()
                .find(|v| is_single_version(v))
                .ok_or_else(|| "its rich version holds no single version".to_string()),
            Version::MissingRef(r) => Err(format!(
                "`version.ref = \"{r}\"` names no entry of [versions]"
            )),
            Version::Invalid => Err("its version is neither a string nor a table".to_string()),
        }
    }
}

/// A Maven/Gradle version that is one version: not a range (`[1,2)`), not dynamic (`1.+`,
/// `latest.release`), not a variable.
pub(crate) fn is_single_version(v: &str) -> bool {
    let v = v.trim();
    !v.is_empty()
        && !v.contains(['[', ']', '(', ')', ',', '+', '$', '{', '}', ' ', '*'])
        && !v.starts_with("latest.")
}

// ---------------------------------------------------------------------------------------------
// Build scripts

/// A string literal in a build script, with the code before it on its line.
struct Literal {
    line: u32,
    text: String,
    prefix: String,
    templated: bool,
}

/// Lexes Kotlin/Groovy just enough to find string literals outside comments: `//` and nested
/// `/* */` comments, `"..."`, `'...'` and `"""..."""` strings. Works on bytes: every delimiter
/// is ASCII, so no UTF-8 sequence is ever split.
fn literals(text: &str) -> Vec<Literal> {
    let b = text.as_bytes();
    let at = |i: usize| b.get(i).copied();
    let lossy = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
    let mut out = Vec::new();
    let mut line = 1u32;
    let mut code: Vec<u8> = Vec::new();
    let mut i = 0usize;
    while let Some(c) = at(i) {
        match c {
            b'\n' => {
                line = line.saturating_add(1);
                code.clear();
                i += 1;
            }
            b'/' if at(i + 1) == Some(b'/') => {
                while at(i).is_some_and(|d| d != b'\n') {
                    i += 1;
                }
            }
            b'/' if at(i + 1) == Some(b'*') => {
                let mut depth = 0usize;
                while let Some(d) = at(i) {
                    if d == b'/' && at(i + 1) == Some(b'*') {
                        depth += 1;
                        i += 2;
                    } else if d == b'*' && at(i + 1) == Some(b'/') {
                        depth = depth.saturating_sub(1);
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if d == b'\n' {
                            line = line.saturating_add(1);
                            code.clear();
                        }
                        i += 1;
                    }
                }
            }
            b'"' | b'\'' => {
                let start_line = line;
                let triple = c == b'"' && at(i + 1) == Some(b'"') && at(i + 2) == Some(b'"');
                let mut s: Vec<u8> = Vec::new();
                let mut templated = false;
                i += if triple { 3 } else { 1 };
                while let Some(d) = at(i) {
                    if triple && d == b'"' && at(i + 1) == Some(b'"') && at(i + 2) == Some(b'"') {
                        i += 3;
                        break;
                    }
                    if !triple && d == c {
                        i += 1;
                        break;
                    }
                    if !triple && d == b'\\' {
                        if let Some(e) = at(i + 1) {
                            s.push(e);
                        }
                        i += 2;
                        continue;
                    }
                    if d == b'\n' {
                        line = line.saturating_add(1);
                        if !triple {
                            // An unterminated one-line string: stop at the line's end.
                            break;
                        }
                    }
                    if d == b'$' && c == b'"' {
                        templated = true;
                    }
                    s.push(d);
                    i += 1;
                }
                out.push(Literal {
                    line: start_line,
                    text: lossy(&s),
                    prefix: lossy(&code),
                    templated,
                });
                code.extend_from_slice(b"\"\"");
            }
            _ => {
                code.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Calls whose string argument is not a dependency coordinate.
const NOT_CONFIGURATIONS: [&str; 14] = [
    "id", "exclude", "include", "println", "print", "maven", "url", "uri", "file", "files",
    "project", "apply", "from", "named",
];
/// Wrappers inside a configuration call: `implementation(platform("g:a:v"))`.
const WRAPPERS: [&str; 4] = ["platform", "enforcedPlatform", "testFixtures", "variantOf"];

/// The configuration a literal is passed to, from the code before it on its line:
/// `implementation(`, `implementation(platform(`, `implementation ` (Groovy).
fn configuration(prefix: &str) -> Option<String> {
    let mut rest = prefix.trim_end();
    let mut names = Vec::new();
    loop {
        let had_paren = rest.ends_with('(');
        rest = rest.trim_end_matches('(').trim_end();
        let start = rest
            .char_indices()
            .rev()
            .take_while(|&(_, c)| c.is_ascii_alphanumeric() || c == '_')
            .last()
            .map(|(i, _)| i)?;
        let name = rest.get(start..)?.to_string();
        rest = rest.get(..start)?;
        let wrapper = WRAPPERS.contains(&name.as_str()) && had_paren;
        names.push(name);
        if !wrapper {
            break;
        }
    }
    let config = names.pop()?;
    let before = rest.trim_end();
    // `x.implementation(` is a method on something else; `foo = "..."` is an assignment.
    if before.ends_with('.')
        || before.ends_with('=')
        || NOT_CONFIGURATIONS.contains(&config.as_str())
    {
        return None;
    }
    config
        .starts_with(|c: char| c.is_ascii_lowercase())
        .then_some(config)
}

fn is_dev_configuration(config: &str) -> bool {
    config.starts_with("test") || config.contains("Test")
}

/// `group:artifact:version[:classifier][@ext]` with plain Maven identifiers.
fn coordinate(s: &str) -> Option<(String, String)> {
    let s = s.split('@').next().unwrap_or(s);
    let mut parts = s.split(':');
    let (g, a, v) = (parts.next()?, parts.next()?, parts.next()?);
    let ident = |x: &str| {
        !x.is_empty()
            && x.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    (ident(g) && ident(a) && !v.is_empty() && !v.contains('/'))
        .then(|| (format!("{g}:{a}"), v.to_string()))
}

/// What a build script declares: (name, version or why not, dev, line), and catalog reference
/// count.
struct ScriptDeps {
    found: Vec<(String, Result<String, String>, bool, u32)>,
    catalog_refs: usize,
}

fn scan_script(text: &str) -> ScriptDeps {
    let mut found = Vec::new();
    let lits = literals(text);
    for (k, lit) in lits.iter().enumerate() {
        // Named form: group = "g", name = "a", version = "v" (Kotlin `=`, Groovy `:`).
        if lit.prefix.trim_end().ends_with("group =") || lit.prefix.trim_end().ends_with("group:") {
            let name = lits.get(k + 1).filter(|l| {
                l.prefix.trim_end().ends_with("name =") || l.prefix.trim_end().ends_with("name:")
            });
            let version = lits.get(k + 2).filter(|l| {
                l.prefix.trim_end().ends_with("version =")
                    || l.prefix.trim_end().ends_with("version:")
            });
            if let (Some(n), Some(v)) = (name, version)
                && let Some(config) = configuration(
                    lit.prefix
                        .trim_end()
                        .trim_end_matches("group =")
                        .trim_end_matches("group:"),
                )
            {
                let module = format!("{}:{}", lit.text, n.text);
                let version = if v.templated || !is_single_version(&v.text) {
                    Err(format!(
                        "version `{}` is not a literal single version",
                        v.text
                    ))
                } else {
                    Ok(v.text.clone())
                };
                found.push((module, version, is_dev_configuration(&config), lit.line));
            }
            continue;
        }
        let Some((module, version)) = coordinate(&lit.text) else {
            continue;
        };
        let Some(config) = configuration(&lit.prefix) else {
            continue;
        };
        let version = if lit.templated || !is_single_version(&version) {
            Err(format!(
                "version `{version}` is not a literal single version"
            ))
        } else {
            Ok(version)
        };
        found.push((module, version, is_dev_configuration(&config), lit.line));
    }
    // Catalog references passed to a configuration: `implementation(libs.x.y)`.
    let catalog_refs = text
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !t.starts_with("//")
                && (t.contains("(libs.") || t.contains(" libs."))
                && !t.contains("plugins.")
        })
        .count();
    ScriptDeps {
        found,
        catalog_refs,
    }
}

pub(crate) fn read_script(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let scanned = scan_script(text);
    let mut deps = Deps::default();
    for (name, version, dev, line) in scanned.found {
        match version {
            Ok(version) => deps.push(Dependency {
                ecosystem: Ecosystem::Maven,
                name,
                version,
                kind: DependencyKind::Direct,
                origin: Origin::Registry,
                dev,
                line: Some(line),
            }),
            Err(why) => ctx.note(format!("line {line}: {name}: {why}")),
        }
    }
    if scanned.catalog_refs > 0 {
        ctx.note(format!(
            "{} dependencies come from the version catalog (`libs.…`): their versions are in \
             gradle/libs.versions.toml",
            scanned.catalog_refs
        ));
    }
    Ok(deps.into_vec())
}

/// Whether a build script declares at least one literal `group:artifact:version` (so it is a
/// source of versions itself). A file that cannot be read as text counts as one, so the
/// caller reads it and reports why it cannot.
pub(crate) fn script_has_literal_versions(
    tree: &dyn Tree,
    path: &str,
) -> Result<bool, std::io::Error> {
    let limits = Limits::default();
    match tree.size(path)? {
        None => return Ok(false),
        Some(size) if size > limits.max_bytes => return Ok(true),
        Some(_) => {}
    }
    let Some(bytes) = tree.read(path)? else {
        return Ok(false);
    };
    match decode(path, bytes) {
        Ok(text) => Ok(scan_script(&text)
            .found
            .iter()
            .any(|(_, v, _, _)| v.is_ok())),
        Err(_) => Ok(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemTree, read, version_sources};

    fn get<'a>(deps: &'a [Dependency], name: &str, version: &str) -> &'a Dependency {
        deps.iter()
            .find(|d| d.name == name && d.version == version)
            .unwrap_or_else(|| panic!("{name} {version} not found in {deps:#?}"))
    }

    const CATALOG: &str = r#"[versions]
kotlin = "2.0.0"
okhttp = { strictly = "[4.0, 5.0)", prefer = "4.12.0" }
guava = { require = "33.0.0-jre" }
dyn = "1.+"

[libraries]
kotlin-stdlib = { module = "org.jetbrains.kotlin:kotlin-stdlib", version.ref = "kotlin" }
okhttp = { group = "com.squareup.okhttp3", name = "okhttp", version.ref = "okhttp" }
guava = { module = "com.google.guava:guava", version.ref = "guava" }
junit = "junit:junit:4.13.2"
bom-managed = { group = "androidx.compose.ui", name = "ui" }
strict = { module = "a:b", version = { strictly = "1.0.0" } }
dynamic = { module = "c:d", version.ref = "dyn" }
missing = { module = "e:f", version.ref = "nope" }

[plugins]
android = { id = "com.android.application", version = "8.0.0" }
"#;

    #[test]
    fn catalog_versions_refs_and_rich_versions() {
        let tree = MemTree::with("gradle/libs.versions.toml", CATALOG);
        let file = read(&tree, "gradle/libs.versions.toml", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 5, "{d:#?}");
        assert_eq!(
            get(d, "org.jetbrains.kotlin:kotlin-stdlib", "2.0.0").line,
            Some(8)
        );
        assert_eq!(
            get(d, "com.squareup.okhttp3:okhttp", "4.12.0").line,
            Some(9)
        );
        get(d, "com.google.guava:guava", "33.0.0-jre");
        assert_eq!(get(d, "junit:junit", "4.13.2").line, Some(11));
        get(d, "a:b", "1.0.0");
        let notes = file.notes.join("\n");
        assert!(notes.contains("line 14: library `dynamic`"), "{notes}");
        assert!(notes.contains("line 15: library `missing`"), "{notes}");
        assert!(notes.contains("bom-managed"), "{notes}");
        assert!(notes.contains("1 plugins"), "{notes}");
    }

    const SCRIPT: &str = r#"/*
 * header "a:b:1.0" in a comment
 */
plugins {
    id("com.android.application") version "8.0.0"
}
val ktorVersion = "2.3.0"
dependencies {
    implementation("com.squareup.retrofit2:retrofit:2.11.0")
    implementation(platform("com.google.firebase:firebase-bom:33.7.0"))
    testImplementation("junit:junit:4.13.2") // unit tests
    androidTestImplementation(group = "androidx.test", name = "runner", version = "1.5.2")
    implementation("io.ktor:ktor-client:$ktorVersion")
    implementation(libs.androidx.core.ktx)
    // implementation("commented:out:1.0")
    classpath 'com.android.tools.build:gradle:8.0.0'
}
repositories { maven("https://example.com:8080/repo") }
"#;

    #[test]
    fn script_literals_configurations_and_notes() {
        let tree = MemTree::with("app/build.gradle.kts", SCRIPT);
        let file = read(&tree, "app/build.gradle.kts", &Limits::default()).unwrap();
        let d: Vec<_> = file
            .dependencies
            .iter()
            .map(|x| (x.name.as_str(), x.version.as_str(), x.dev, x.line))
            .collect();
        assert_eq!(
            d,
            vec![
                ("com.squareup.retrofit2:retrofit", "2.11.0", false, Some(9)),
                (
                    "com.google.firebase:firebase-bom",
                    "33.7.0",
                    false,
                    Some(10)
                ),
                ("junit:junit", "4.13.2", true, Some(11)),
                ("androidx.test:runner", "1.5.2", true, Some(12)),
                ("com.android.tools.build:gradle", "8.0.0", false, Some(16)),
            ]
        );
        let notes = file.notes.join("\n");
        assert!(notes.contains("line 13: io.ktor:ktor-client"), "{notes}");
        assert!(
            notes.contains("1 dependencies come from the version catalog"),
            "{notes}"
        );
    }

    #[test]
    fn version_sources_for_scripts() {
        let mut tree = MemTree::with("app/build.gradle.kts", SCRIPT);
        tree.insert("gradle/libs.versions.toml", CATALOG);
        tree.insert(
            "lib/build.gradle.kts",
            "dependencies { implementation(libs.x) }\n",
        );
        assert_eq!(
            version_sources(&tree, "app/build.gradle.kts").unwrap(),
            vec![
                "app/build.gradle.kts".to_string(),
                "gradle/libs.versions.toml".to_string()
            ]
        );
        assert_eq!(
            version_sources(&tree, "lib/build.gradle.kts").unwrap(),
            vec!["gradle/libs.versions.toml".to_string()]
        );
    }
}
