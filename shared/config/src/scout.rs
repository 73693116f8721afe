//! Scout Intent's settings (seeds/architecture.txt, "Five rules"): the review classes, the
//! plan of each change kind (`plan_<kind>`, five fields), the path rules that set a change's
//! floor class (`path_rules`), the suffixes that may be prose (`prose_suffixes`) and the
//! classes a second reviewer doubles (`second_reviewer_classes`). Parsing lives here, with the
//! loader, so a wrong value stops Proven before any review (exit 7) naming what was wrong.

use globset::{GlobBuilder, GlobMatcher};

use crate::entries::list_entries;

/// A review class, lowest first: a plan never runs below the floor the path rules set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReviewClass {
    Docs,
    Dependency,
    Standard,
    Security,
}

impl ReviewClass {
    pub const ALL: [ReviewClass; 4] = [
        ReviewClass::Docs,
        ReviewClass::Dependency,
        ReviewClass::Standard,
        ReviewClass::Security,
    ];
    pub const NAMES: &'static [&'static str] = &["docs", "dependency", "standard", "security"];

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(name: &str) -> Option<ReviewClass> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

/// Which model agents a plan runs: none, only the Skeptic of the evidence that runs without
/// a Planner (the dependency findings), or every agent the configuration has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanAgents {
    None,
    Skeptic,
    All,
}

/// Which tools the agents may use: the Investigator's advisory queries, the Prover's tests
/// in the sandbox, both or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanTools {
    pub queries: bool,
    pub sandbox: bool,
}

/// Whether a connected second reviewer doubles the review: always, never, or as
/// `second_reviewer_classes` says of the plan's class (security is always doubled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doubled {
    Yes,
    No,
    Class,
}

/// One change kind's plan: its five fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanSpec {
    pub class: ReviewClass,
    pub agents: PlanAgents,
    pub tools: PlanTools,
    /// The dependency evidence (lock files and manifests against the advisory tables).
    pub sources: bool,
    pub doubled: Doubled,
}

const FIELDS: [(&str, &[&str]); 5] = [
    ("class", ReviewClass::NAMES),
    ("agents", &["none", "skeptic", "all"]),
    ("tools", &["none", "queries", "sandbox", "all"]),
    ("sources", &["none", "all"]),
    ("doubled", &["yes", "no", "class"]),
];

/// The change kinds a `plan_<kind>` key names (Scout's kinds).
pub const PLAN_KINDS: [&str; 6] = [
    "docs",
    "dependency",
    "refactor",
    "feature",
    "config",
    "security",
];

/// The settings' keys of [`PLAN_KINDS`], in the same order.
pub const PLAN_KEYS: [&str; 6] = [
    "plan_docs",
    "plan_dependency",
    "plan_refactor",
    "plan_feature",
    "plan_config",
    "plan_security",
];

impl PlanSpec {
    /// Everything runs, in `class` (what the floor, an ambiguous change and the guard run).
    pub fn full(class: ReviewClass) -> PlanSpec {
        PlanSpec {
            class,
            agents: PlanAgents::All,
            tools: PlanTools {
                queries: true,
                sandbox: true,
            },
            sources: true,
            doubled: if class == ReviewClass::Security {
                Doubled::Yes
            } else {
                Doubled::Class
            },
        }
    }

    /// Whether the plan leaves anything of a full review out.
    pub fn lightens(&self) -> bool {
        self.agents != PlanAgents::All
            || !self.tools.queries
            || !self.tools.sandbox
            || !self.sources
    }

    /// The default plan of a change kind (its `plan_<kind>` key's default value).
    pub fn default_text(kind: &str) -> &'static str {
        match kind {
            "docs" => "class=docs, agents=none, tools=none, sources=none, doubled=class",
            "dependency" => {
                "class=dependency, agents=skeptic, tools=queries, sources=all, doubled=class"
            }
            "security" => "class=security, agents=all, tools=all, sources=all, doubled=yes",
            _ => "class=standard, agents=all, tools=all, sources=all, doubled=class",
        }
    }

    /// Reads `class=…, agents=…, tools=…, sources=…, doubled=…`: every field once, each
    /// value one of those allowed; the error names the field and the values allowed.
    pub fn parse(raw: &str) -> Result<PlanSpec, String> {
        let mut values: [Option<&str>; 5] = [None; 5];
        for entry in list_entries(raw) {
            let (name, value) = entry
                .split_once('=')
                .map(|(n, v)| (n.trim(), v.trim()))
                .ok_or_else(|| format!("{entry:?} is not field=value"))?;
            let Some(at) = FIELDS.iter().position(|(f, _)| *f == name) else {
                return Err(format!(
                    "unknown field {name:?}; the fields are {}",
                    field_names()
                ));
            };
            let allowed = FIELDS[at].1;
            if !allowed.contains(&value) {
                return Err(format!(
                    "field {name} is {value:?}; allowed: {}",
                    allowed.join(", ")
                ));
            }
            if values[at].replace(value).is_some() {
                return Err(format!("field {name} is set twice"));
            }
        }
        if let Some(missing) = values.iter().position(Option::is_none) {
            let (name, allowed) = FIELDS[missing];
            return Err(format!(
                "field {name} is missing (all five are needed: {}); allowed: {}",
                field_names(),
                allowed.join(", ")
            ));
        }
        let [class, agents, tools, sources, doubled] = values.map(Option::unwrap_or_default);
        Ok(PlanSpec {
            class: ReviewClass::parse(class).unwrap_or(ReviewClass::Security),
            agents: match agents {
                "none" => PlanAgents::None,
                "skeptic" => PlanAgents::Skeptic,
                _ => PlanAgents::All,
            },
            tools: PlanTools {
                queries: matches!(tools, "queries" | "all"),
                sandbox: matches!(tools, "sandbox" | "all"),
            },
            sources: sources == "all",
            doubled: match doubled {
                "yes" => Doubled::Yes,
                "no" => Doubled::No,
                _ => Doubled::Class,
            },
        })
    }

    /// The plan in its key's own syntax (what the plan line prints).
    pub fn text(&self) -> String {
        let tools = match (self.tools.queries, self.tools.sandbox) {
            (true, true) => "all",
            (true, false) => "queries",
            (false, true) => "sandbox",
            (false, false) => "none",
        };
        format!(
            "class={}, agents={}, tools={tools}, sources={}, doubled={}",
            self.class.as_str(),
            match self.agents {
                PlanAgents::None => "none",
                PlanAgents::Skeptic => "skeptic",
                PlanAgents::All => "all",
            },
            if self.sources { "all" } else { "none" },
            match self.doubled {
                Doubled::Yes => "yes",
                Doubled::No => "no",
                Doubled::Class => "class",
            }
        )
    }
}

fn field_names() -> String {
    FIELDS.map(|(f, _)| f).join(", ")
}

/// The word a path rule uses for every dependency manifest and lock file Proven reads.
pub const MANIFESTS: &str = "manifests";

/// One path rule: a glob over the change's paths (or `manifests`) and the class it sets.
#[derive(Debug, Clone)]
pub struct PathRule {
    pub pattern: String,
    pub class: ReviewClass,
    matcher: Option<GlobMatcher>,
}

impl PartialEq for PathRule {
    fn eq(&self, other: &Self) -> bool {
        (&self.pattern, self.class) == (&other.pattern, other.class)
    }
}

impl Eq for PathRule {}

impl PathRule {
    /// Whether the rule matches `path` (`manifest`: the path is a dependency manifest or
    /// lock file).
    pub fn matches(&self, path: &str, manifest: bool) -> bool {
        match &self.matcher {
            None => manifest,
            Some(m) => m.is_match(path),
        }
    }
}

/// Reads `GLOB=CLASS, …` (`manifests=CLASS` for every manifest and lock file). A glob
/// matches whole repository paths: `*` stays inside one directory, `**` crosses them.
pub fn parse_path_rules(raw: &str) -> Result<Vec<PathRule>, String> {
    list_entries(raw)
        .map(|entry| {
            let (pattern, class) = entry
                .rsplit_once('=')
                .map(|(p, c)| (p.trim(), c.trim()))
                .ok_or_else(|| format!("{entry:?} is not GLOB=CLASS"))?;
            let class = ReviewClass::parse(class).ok_or_else(|| {
                format!(
                    "the class of {pattern:?} is {class:?}; allowed: {}",
                    ReviewClass::NAMES.join(", ")
                )
            })?;
            let matcher = if pattern == MANIFESTS {
                None
            } else {
                let glob = GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| format!("{pattern:?} is not a glob: {}", e.kind()))?;
                Some(glob.compile_matcher())
            };
            Ok(PathRule {
                pattern: pattern.to_string(),
                class,
                matcher,
            })
        })
        .collect()
}

/// Suffixes of source, script, build and template files: never prose, whatever
/// `prose_suffixes` says (the loader refuses them by name, and Scout does not believe one
/// set in code either).
pub const BUILT_SUFFIXES: &[&str] = &[
    // source
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".cxx",
    ".hpp",
    ".hh",
    ".cs",
    ".go",
    ".rs",
    ".py",
    ".pyw",
    ".pyx",
    ".pxd",
    ".pyi",
    ".js",
    ".mjs",
    ".cjs",
    ".jsx",
    ".ts",
    ".mts",
    ".cts",
    ".tsx",
    ".java",
    ".kt",
    ".kts",
    ".scala",
    ".groovy",
    ".rb",
    ".php",
    ".pl",
    ".pm",
    ".lua",
    ".swift",
    ".m",
    ".mm",
    ".r",
    ".jl",
    ".dart",
    ".ex",
    ".exs",
    ".erl",
    ".hs",
    ".ml",
    ".clj",
    ".vue",
    ".svelte",
    ".sql",
    ".ipynb",
    ".wasm",
    ".zig",
    ".nim",
    ".v",
    ".f90",
    ".asm",
    ".s",
    // script
    ".sh",
    ".bash",
    ".zsh",
    ".fish",
    ".ksh",
    ".csh",
    ".ps1",
    ".psm1",
    ".bat",
    ".cmd",
    ".vbs",
    ".awk",
    ".sed",
    ".tcl",
    ".command",
    // build
    ".mk",
    ".make",
    ".mak",
    ".cmake",
    ".bzl",
    ".bazel",
    ".ninja",
    ".gradle",
    ".sbt",
    ".nix",
    ".dockerfile",
    ".csproj",
    ".sln",
    ".vcxproj",
    ".am",
    ".in",
    ".ac",
    ".m4",
    ".spec",
    // template
    ".j2",
    ".jinja",
    ".jinja2",
    ".tmpl",
    ".tpl",
    ".tera",
    ".hbs",
    ".handlebars",
    ".mustache",
    ".erb",
    ".ejs",
    ".njk",
    ".liquid",
    ".twig",
    ".haml",
    ".pug",
    ".jade",
    ".slim",
    ".html",
    ".htm",
    ".xhtml",
    ".xsl",
    ".xslt",
    ".svg",
    ".php3",
    ".jsp",
    ".asp",
    ".aspx",
];

/// File names that decide how a project builds or runs, whatever their suffix: never prose.
pub const BUILD_FILE_NAMES: &[&str] = &[
    "cmakelists.txt",
    "makefile",
    "gnumakefile",
    "dockerfile",
    "containerfile",
    "jenkinsfile",
    "vagrantfile",
    "rakefile",
    "justfile",
    "procfile",
    "meson.build",
    "sconstruct",
    "sconscript",
    "build",
    "build.bazel",
    "workspace",
];

/// Reads `prose_suffixes`: each entry a suffix starting with `.`, none of [`BUILT_SUFFIXES`].
pub fn parse_prose_suffixes(raw: &str) -> Result<Vec<String>, String> {
    list_entries(raw)
        .map(|entry| {
            let suffix = entry.to_ascii_lowercase();
            if !suffix.starts_with('.') || suffix.len() < 2 || suffix.contains(['/', '\\']) {
                return Err(format!("{entry:?} is not a file suffix such as .md"));
            }
            if BUILT_SUFFIXES.contains(&suffix.as_str()) {
                return Err(format!(
                    "{entry:?} is a source, script, build or template suffix: such a file is never prose"
                ));
            }
            Ok(suffix)
        })
        .collect()
}

/// Scout Intent's settings, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoutSettings {
    /// Each kind of [`PLAN_KINDS`] with its plan.
    pub plans: Vec<(&'static str, PlanSpec)>,
    pub path_rules: Vec<PathRule>,
    pub prose_suffixes: Vec<String>,
    pub second_reviewer_classes: Vec<ReviewClass>,
    /// The classes whose reviews run the tool evidence's analyzers
    /// (`tool_analyzer_classes`).
    pub tool_analyzer_classes: Vec<ReviewClass>,
}

impl ScoutSettings {
    /// The plan of a change kind (a kind with no key: the standard full plan).
    pub fn plan(&self, kind: &str) -> PlanSpec {
        self.plans
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(PlanSpec::full(ReviewClass::Standard), |(_, p)| *p)
    }

    /// The highest class the path rules set for `path`, with the rule that set it.
    pub fn floor_of(&self, path: &str, manifest: bool) -> Option<&PathRule> {
        self.path_rules
            .iter()
            .filter(|r| r.matches(path, manifest))
            .max_by_key(|r| r.class)
    }

    /// Whether `path` may be prose by its name: a configured suffix, none of the built
    /// suffixes, and not a build file's name.
    pub fn prose_name(&self, path: &str) -> bool {
        let lower = path.to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or(&lower);
        self.prose_suffixes.iter().any(|s| name.ends_with(s.as_str()))
            && !BUILT_SUFFIXES.iter().any(|s| name.ends_with(s))
            && !BUILD_FILE_NAMES.contains(&name)
            // pip's requirement and constraint files are read by installers, whatever
            // their name ends with.
            && !(name.ends_with(".txt") && (name.contains("requirement") || name.contains("constraint")))
    }
}

impl Default for ScoutSettings {
    fn default() -> Self {
        ScoutSettings {
            plans: PLAN_KINDS
                .iter()
                .map(|k| {
                    (
                        *k,
                        PlanSpec::parse(PlanSpec::default_text(k))
                            .unwrap_or(PlanSpec::full(ReviewClass::Standard)),
                    )
                })
                .collect(),
            path_rules: parse_path_rules("manifests=security").unwrap_or_default(),
            prose_suffixes: parse_prose_suffixes(DEFAULT_PROSE_SUFFIXES).unwrap_or_default(),
            second_reviewer_classes: ReviewClass::ALL.to_vec(),
            tool_analyzer_classes: vec![ReviewClass::Standard, ReviewClass::Security],
        }
    }
}

pub const DEFAULT_PROSE_SUFFIXES: &str = ".md, .markdown, .rst, .txt, .adoc, .asciidoc";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_needs_its_five_fields_each_with_an_allowed_value() {
        let p = PlanSpec::parse("class=docs, agents=none, tools=none, sources=none, doubled=class")
            .expect("as built");
        assert_eq!(
            (p.class, p.agents, p.lightens()),
            (ReviewClass::Docs, PlanAgents::None, true)
        );
        assert_eq!(
            p.text(),
            "class=docs, agents=none, tools=none, sources=none, doubled=class"
        );
        let e = PlanSpec::parse("class=docs, agents=some, tools=none, sources=none, doubled=class")
            .expect_err("refused");
        assert_eq!(e, "field agents is \"some\"; allowed: none, skeptic, all");
        let e = PlanSpec::parse("class=docs, agents=none").expect_err("refused");
        assert!(e.starts_with("field tools is missing"), "{e}");
        let e = PlanSpec::parse("class=docs, agents=none, tools=none, sources=none, double=yes")
            .expect_err("refused");
        assert!(e.starts_with("unknown field \"double\""), "{e}");
        let e = PlanSpec::parse(
            "class=docs, class=security, agents=none, tools=none, sources=none, doubled=no",
        )
        .expect_err("refused");
        assert_eq!(e, "field class is set twice");
        for kind in PLAN_KINDS {
            assert!(
                PlanSpec::parse(PlanSpec::default_text(kind)).is_ok(),
                "{kind}"
            );
        }
        assert!(!PlanSpec::full(ReviewClass::Standard).lightens());
    }

    #[test]
    fn path_rules_set_the_highest_class_that_matches() {
        let s = ScoutSettings {
            path_rules: parse_path_rules("manifests=security, docs/**=docs, vendor/*=standard")
                .expect("as built"),
            ..ScoutSettings::default()
        };
        assert_eq!(
            s.floor_of("go.mod", true).expect("as built").class,
            ReviewClass::Security
        );
        assert_eq!(
            s.floor_of("docs/a/b.md", false).expect("as built").class,
            ReviewClass::Docs
        );
        assert_eq!(
            s.floor_of("vendor/x.c", false).expect("as built").class,
            ReviewClass::Standard
        );
        // `*` stays inside its directory.
        assert!(s.floor_of("vendor/a/x.c", false).is_none());
        assert!(
            parse_path_rules("src/**=urgent")
                .expect_err("refused")
                .contains("allowed: docs")
        );
        assert!(
            parse_path_rules("src/[=docs")
                .expect_err("refused")
                .contains("is not a glob")
        );
    }

    #[test]
    fn no_source_script_build_or_template_suffix_is_prose() {
        assert!(
            parse_prose_suffixes(".md, .py")
                .expect_err("refused")
                .contains("\".py\" is a source")
        );
        assert!(
            parse_prose_suffixes("md")
                .expect_err("refused")
                .contains("not a file suffix")
        );
        let s = ScoutSettings::default();
        assert!(s.prose_name("docs/guide.md") && s.prose_name("NOTES.TXT"));
        assert!(!s.prose_name("CMakeLists.txt") && !s.prose_name("requirements-dev.txt"));
        // A suffix set in code past the loader is not believed either.
        let forced = ScoutSettings {
            prose_suffixes: vec![".sh".into()],
            ..ScoutSettings::default()
        };
        assert!(!forced.prose_name("docs/run.sh"));
    }
}
