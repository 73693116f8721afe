//! Gemfile.lock (and `gems.locked`) and Gemfile (and `gems.rb`).
//!
//! Gemfile.lock lists resolved gems under `specs:` of its GEM (registry), GIT and PATH
//! sections, four spaces in: `name (version)` or `name (version-platform)`. Like Bundler, the
//! version ends at the first `-`; the platform is dropped and noted. DEPENDENCIES lists the
//! direct gems. The Gemfile beside the lock says which direct gems are in development or test
//! groups only; the six-space dependency lines under each spec make the graph that carries
//! that to transitive gems.

use std::collections::{BTreeMap, HashMap, HashSet};

use proven_domain::{Dependency, DependencyKind, Ecosystem, Origin};

use crate::Ctx;
use crate::collect::{Deps, dev_only};
use crate::error::{ReadError, ReadErrorKind};
use crate::text::to_u32;

const DEV_GROUPS: [&str; 3] = ["development", "test", "dev"];

struct Spec {
    name: String,
    version: String,
    origin: Origin,
    line: u32,
    deps: Vec<String>,
}

/// `name (version)` → (name, Some(version), platform); `name` → (name, None, None).
fn name_version(body: &str) -> (String, Option<String>, Option<String>) {
    let body = body.trim_end_matches('!');
    match body.split_once(" (") {
        Some((name, rest)) => {
            let inner = rest.trim_end_matches(')');
            let (version, platform) = match inner.split_once('-') {
                Some((v, p)) => (v, Some(p.to_string())),
                None => (inner, None),
            };
            (
                name.trim().to_string(),
                Some(version.trim().to_string()),
                platform,
            )
        }
        None => (body.trim().to_string(), None, None),
    }
}

pub(crate) fn read_lock(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let lock = Lock::parse(ctx.path, text)?;
    for ((name, version), list) in &lock.platforms {
        ctx.note(format!(
            "{name} {version} is locked for platforms {}: the platform was dropped from the version",
            list.join(", ")
        ));
    }
    for r in &lock.other_remotes {
        ctx.note(format!(
            "gems from `{r}` are not from rubygems.org: an advisory for a RubyGems gem of the same \
             name may not apply to them"
        ));
    }
    let dev = lock.dev_only(sibling_gemfile(ctx).as_ref());
    let direct: HashSet<String> = lock.direct.into_iter().collect();
    let mut deps = Deps::default();
    for (i, s) in lock.specs.into_iter().enumerate() {
        let kind = if !lock.has_dependencies {
            DependencyKind::Unknown
        } else if direct.contains(&s.name) {
            DependencyKind::Direct
        } else {
            DependencyKind::Transitive
        };
        deps.push(Dependency {
            ecosystem: Ecosystem::RubyGems,
            name: s.name,
            version: s.version,
            kind,
            origin: s.origin,
            dev: dev.get(i).copied().unwrap_or(false),
            line: Some(s.line),
        });
    }
    Ok(deps.into_vec())
}

/// What a Gemfile.lock says, as written.
#[derive(Default)]
struct Lock {
    specs: Vec<Spec>,
    /// The DEPENDENCIES section's names.
    direct: Vec<String>,
    has_dependencies: bool,
    platforms: BTreeMap<(String, String), Vec<String>>,
    other_remotes: HashSet<String>,
}

/// Where the reader is in a Gemfile.lock: its section and that section's source.
#[derive(Default)]
struct Place {
    section: String,
    remote: String,
    revision: String,
    in_specs: bool,
}

impl Place {
    fn origin(&self) -> Origin {
        match self.section.as_str() {
            "GIT" => Origin::Git {
                url: if self.revision.is_empty() {
                    self.remote.clone()
                } else {
                    format!("{}#{}", self.remote, self.revision)
                },
            },
            "PATH" => Origin::Path,
            _ => Origin::Registry,
        }
    }
}

impl Lock {
    fn parse(path: &str, text: &str) -> Result<Lock, ReadError> {
        let mut lock = Lock::default();
        let mut place = Place::default();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.trim_end();
            if line.trim().is_empty() {
                continue;
            }
            let indent = line.len() - line.trim_start().len();
            let body = line.trim_start();
            if indent == 0 {
                place = Place {
                    section: body.to_string(),
                    ..Place::default()
                };
                lock.has_dependencies |= place.section == "DEPENDENCIES";
                continue;
            }
            let source_section = matches!(place.section.as_str(), "GEM" | "GIT" | "PATH");
            match (place.section.as_str(), indent) {
                (_, 2) if source_section => lock.source_line(&mut place, body),
                (_, 4) if source_section && place.in_specs => {
                    lock.spec_line(path, &place, body, n)?
                }
                (_, 6) if source_section && place.in_specs => {
                    if let Some(s) = lock.specs.last_mut() {
                        s.deps.push(name_version(body).0);
                    }
                }
                ("DEPENDENCIES", 2) => lock.direct.push(name_version(body).0),
                _ => {}
            }
        }
        Ok(lock)
    }

    /// A source section's `remote:`, `revision:` or `specs:` line.
    fn source_line(&mut self, place: &mut Place, body: &str) {
        place.in_specs = body == "specs:";
        if let Some(r) = body.strip_prefix("remote:") {
            place.remote = r.trim().to_string();
            if place.section == "GEM"
                && !place.remote.trim_end_matches('/').ends_with("rubygems.org")
            {
                self.other_remotes.insert(place.remote.clone());
            }
        } else if let Some(r) = body.strip_prefix("revision:") {
            place.revision = r.trim().to_string();
        }
    }

    /// A `name (version)` spec at line `n`.
    fn spec_line(
        &mut self,
        path: &str,
        place: &Place,
        body: &str,
        n: usize,
    ) -> Result<(), ReadError> {
        let (name, version, platform) = name_version(body);
        let Some(version) = version else {
            return Err(ReadError::new(
                path,
                Some(to_u32(n)),
                ReadErrorKind::Syntax,
                format!("a spec should be `name (version)`, got `{body}`"),
            ));
        };
        if let Some(p) = platform {
            self.platforms
                .entry((name.clone(), version.clone()))
                .or_default()
                .push(format!("{p} (line {n})"));
        }
        self.specs.push(Spec {
            name,
            version,
            origin: place.origin(),
            line: to_u32(n),
            deps: Vec::new(),
        });
        Ok(())
    }

    /// Each spec's development-only status, from the Gemfile's groups carried through the
    /// graph; all shipped when there is no Gemfile.
    fn dev_only(&self, groups: Option<&HashMap<String, bool>>) -> Vec<bool> {
        let Some(groups) = groups else {
            return vec![false; self.specs.len()];
        };
        // Graph by name (a lock holds one version of each gem; platform variants share it).
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, s) in self.specs.iter().enumerate() {
            by_name.entry(s.name.as_str()).or_default().push(i);
        }
        let edges: Vec<Vec<usize>> = self
            .specs
            .iter()
            .map(|s| {
                s.deps
                    .iter()
                    .flat_map(|d| by_name.get(d.as_str()).cloned().unwrap_or_default())
                    .collect()
            })
            .collect();
        let mut prod_roots = Vec::new();
        let mut dev_roots = Vec::new();
        for name in &self.direct {
            let targets = by_name.get(name.as_str()).cloned().unwrap_or_default();
            if groups.get(name).copied().unwrap_or(false) {
                dev_roots.extend(targets)
            } else {
                prod_roots.extend(targets)
            }
        }
        dev_only(&edges, &prod_roots, &dev_roots)
    }
}

/// One `gem` line of a Gemfile.
struct GemLine {
    name: String,
    requirements: Vec<String>,
    groups: Vec<String>,
    line: u32,
    registry: bool,
}

/// Splits a Ruby argument list on top-level commas.
fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0i32;
    for c in s.chars() {
        match quote {
            Some(q) => {
                cur.push(c);
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    cur.push(c);
                }
                '[' | '(' | '{' => {
                    depth += 1;
                    cur.push(c);
                }
                ']' | ')' | '}' => {
                    depth -= 1;
                    cur.push(c);
                }
                ',' if depth == 0 => {
                    out.push(cur.trim().to_string());
                    cur.clear();
                }
                '#' => break,
                _ => cur.push(c),
            },
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn string_literal(s: &str) -> Option<String> {
    let s = s.trim();
    let q = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    s.strip_prefix(q)?.strip_suffix(q).map(str::to_string)
}

/// Symbols and strings in a group value: `:test`, `[:development, :test]`, `"test"`.
fn group_names(v: &str) -> Vec<String> {
    v.split([',', '[', ']', ' '])
        .map(|t| t.trim().trim_start_matches(':').trim_matches(['\'', '"']))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

fn parse_gemfile(text: &str) -> Vec<GemLine> {
    let mut out = Vec::new();
    // Open `do` blocks; a `group` block carries its groups.
    let mut blocks: Vec<Vec<String>> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let code = line.split(" #").next().unwrap_or(line).trim();
        let opens = code.ends_with(" do") || code.contains(" do |") || code == "do";
        if code == "end" {
            blocks.pop();
            continue;
        }
        if let Some(args) = code
            .strip_prefix("group ")
            .or_else(|| code.strip_prefix("group("))
        {
            if opens {
                let args = args.trim_end_matches(" do").trim_end_matches(')');
                blocks.push(group_names(args));
            }
            continue;
        }
        if opens {
            blocks.push(Vec::new());
        }
        let Some(args) = code
            .strip_prefix("gem ")
            .or_else(|| code.strip_prefix("gem("))
        else {
            continue;
        };
        let args = split_args(args.trim_end_matches(')'));
        let mut it = args.iter();
        let Some(name) = it.next().and_then(|a| string_literal(a)) else {
            continue;
        };
        let mut requirements = Vec::new();
        let mut groups: Vec<String> = blocks.iter().flatten().cloned().collect();
        let mut registry = true;
        for a in it {
            if let Some(req) = string_literal(a) {
                requirements.push(req);
                continue;
            }
            let (key, value) = match a.split_once("=>") {
                Some((k, v)) => (k.trim().trim_start_matches(':').to_string(), v.trim()),
                None => match a.split_once(':') {
                    Some((k, v)) => (k.trim().to_string(), v.trim()),
                    None => continue,
                },
            };
            match key.as_str() {
                "group" | "groups" => groups.extend(group_names(value)),
                "git" | "github" | "path" | "gitlab" | "bitbucket" => registry = false,
                _ => {}
            }
        }
        out.push(GemLine {
            name,
            requirements,
            groups,
            line: to_u32(i + 1),
            registry,
        });
    }
    out
}

/// Gem name → development/test only, from the Gemfile beside the lock.
fn sibling_gemfile(ctx: &mut Ctx<'_>) -> Option<HashMap<String, bool>> {
    let name = if crate::tree::file_name(ctx.path) == "gems.locked" {
        "gems.rb"
    } else {
        "Gemfile"
    };
    let (_, text) = ctx.sibling(name)?;
    let mut out: HashMap<String, bool> = HashMap::new();
    for g in parse_gemfile(&text) {
        let dev = !g.groups.is_empty() && g.groups.iter().all(|x| DEV_GROUPS.contains(&x.as_str()));
        let e = out.entry(g.name).or_insert(true);
        *e = *e && dev;
    }
    Some(out)
}

/// A Gemfile alone: a requirement is exact only as a single `'1.2.3'` or `'= 1.2.3'`.
pub(crate) fn read_gemfile(ctx: &mut Ctx<'_>, text: &str) -> Result<Vec<Dependency>, ReadError> {
    let mut deps = Deps::default();
    let mut ranges = 0usize;
    for g in parse_gemfile(text) {
        if !g.registry {
            continue;
        }
        let exact = match g.requirements.as_slice() {
            [one] => {
                let r = one.trim();
                let v = r.strip_prefix('=').unwrap_or(r).trim();
                let plain = v.starts_with(|c: char| c.is_ascii_digit())
                    && v.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
                plain.then(|| v.to_string())
            }
            _ => None,
        };
        match exact {
            Some(version) => deps.push(Dependency {
                ecosystem: Ecosystem::RubyGems,
                name: g.name,
                version,
                kind: DependencyKind::Direct,
                origin: Origin::Registry,
                dev: !g.groups.is_empty()
                    && g.groups.iter().all(|x| DEV_GROUPS.contains(&x.as_str())),
                line: Some(g.line),
            }),
            None => ranges += 1,
        }
    }
    if ranges > 0 {
        ctx.note(format!(
            "{ranges} gems have ranges or no version: Gemfile.lock holds their versions"
        ));
    }
    Ok(deps.into_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, MemTree, read};

    fn get<'a>(deps: &'a [Dependency], name: &str, version: &str) -> &'a Dependency {
        deps.iter()
            .find(|d| d.name == name && d.version == version)
            .unwrap_or_else(|| panic!("{name} {version} not found in {deps:#?}"))
    }

    const LOCK: &str = "GIT
  remote: https://github.com/x/mygem.git
  revision: 0123abc
  branch: main
  specs:
    mygem (0.1.0)
      rack

PATH
  remote: engines/local
  specs:
    local (1.0.0)

GEM
  remote: https://rubygems.org/
  specs:
    mini_portile2 (2.8.0)
    nokogiri (1.13.3)
      mini_portile2 (~> 2.8.0)
      racc (~> 1.4)
    nokogiri (1.13.3-x86_64-linux)
      racc (~> 1.4)
    nokogiri (1.13.3-arm64-darwin)
      racc (~> 1.4)
    racc (1.6.0)
    rack (2.2.3)
    rspec (3.12.0)
      rspec-core (~> 3.12.0)
    rspec-core (3.12.0)

PLATFORMS
  ruby
  x86_64-linux

DEPENDENCIES
  local!
  mygem!
  nokogiri (~> 1.13)
  rspec

BUNDLED WITH
   2.3.7
";

    const GEMFILE: &str = "source 'https://rubygems.org'

gem 'nokogiri', '~> 1.13'
gem 'mygem', git: 'https://github.com/x/mygem.git'
gem 'local', path: 'engines/local'

group :development, :test do
  gem 'rspec'
  gem \"pry\", \"0.14.1\"
end
gem 'rails', '6.1.7', group: :production
gem 'byebug', '= 11.1.3', groups: [:development]
";

    #[test]
    fn sections_platforms_direct_and_dev() {
        let mut tree = MemTree::with("Gemfile.lock", LOCK);
        let file = read(&tree, "Gemfile.lock", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert_eq!(d.len(), 8);
        let noko = get(d, "nokogiri", "1.13.3");
        assert_eq!((noko.kind, noko.line), (DependencyKind::Direct, Some(18)));
        assert!(
            file.notes
                .iter()
                .any(|n| n.contains("x86_64-linux (line 21)")),
            "{:?}",
            file.notes
        );
        assert!(matches!(
            get(d, "mygem", "0.1.0").origin,
            Origin::Git { .. }
        ));
        assert_eq!(get(d, "local", "1.0.0").origin, Origin::Path);
        assert_eq!(get(d, "racc", "1.6.0").kind, DependencyKind::Transitive);
        assert!(d.iter().all(|x| !x.dev));

        tree.insert("Gemfile", GEMFILE);
        let file = read(&tree, "Gemfile.lock", &Limits::default()).unwrap();
        let d = &file.dependencies;
        assert!(get(d, "rspec", "3.12.0").dev);
        assert!(get(d, "rspec-core", "3.12.0").dev);
        assert!(!get(d, "nokogiri", "1.13.3").dev);
        assert!(!get(d, "racc", "1.6.0").dev);
    }

    #[test]
    fn gemfile_alone_gives_exact_pins() {
        let tree = MemTree::with("Gemfile", GEMFILE);
        let file = read(&tree, "Gemfile", &Limits::default()).unwrap();
        let d: Vec<_> = file
            .dependencies
            .iter()
            .map(|x| (x.name.as_str(), x.version.as_str(), x.dev, x.line))
            .collect();
        assert_eq!(
            d,
            vec![
                ("pry", "0.14.1", true, Some(9)),
                ("rails", "6.1.7", false, Some(11)),
                ("byebug", "11.1.3", true, Some(12)),
            ]
        );
    }

    #[test]
    fn bad_spec_is_a_syntax_error_with_line() {
        let tree = MemTree::with(
            "Gemfile.lock",
            "GEM\n  remote: https://rubygems.org/\n  specs:\n    rack\n",
        );
        let err = read(&tree, "Gemfile.lock", &Limits::default()).unwrap_err();
        assert_eq!((err.kind, err.line), (ReadErrorKind::Syntax, Some(4)));
    }
}
