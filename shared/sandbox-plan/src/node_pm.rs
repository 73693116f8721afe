//! Which package manager a Node project's CI installs with, read from what the project says
//! of itself (issue 30): package.json's `packageManager` first (`pnpm@9.15.0`,
//! `yarn@1.22.22`, `yarn@4.5.0`), else the lock file it keeps (pnpm-lock.yaml: pnpm;
//! yarn.lock: yarn, classic unless it is a berry lock file; package-lock.json or none: npm).
//! A manager whose version the project does not declare is installed at the newest release
//! of the major its lock file's format belongs to (as of the base's date, when the run has
//! one). Also what pnpm-workspace.yaml says (its `catalog:` ranges), for the preparation
//! that has to translate them for npm.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The package managers the preparation knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Manager {
    Npm,
    Pnpm,
    /// Yarn 1 (classic).
    Yarn,
    /// Yarn 2 and newer (berry), published on npm as `@yarnpkg/cli-dist`.
    YarnBerry,
}

impl Manager {
    pub fn as_str(self) -> &'static str {
        match self {
            Manager::Npm => "npm",
            Manager::Pnpm => "pnpm",
            Manager::Yarn => "yarn",
            Manager::YarnBerry => "yarn",
        }
    }

    /// The npm package the manager is installed from.
    fn package(self) -> &'static str {
        match self {
            Manager::Npm => "npm",
            Manager::Pnpm => "pnpm",
            Manager::Yarn => "yarn",
            Manager::YarnBerry => "@yarnpkg/cli-dist",
        }
    }

    /// The major installed when nothing says which.
    fn default_major(self) -> &'static str {
        match self {
            Manager::Npm => "10",
            Manager::Pnpm => "9",
            Manager::Yarn => "1",
            Manager::YarnBerry => "4",
        }
    }

    /// Its lock file.
    pub fn lock_file(self) -> &'static str {
        match self {
            Manager::Npm => "package-lock.json",
            Manager::Pnpm => "pnpm-lock.yaml",
            Manager::Yarn | Manager::YarnBerry => "yarn.lock",
        }
    }
}

/// The manager a project is prepared with, and the declaration that chose it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    pub manager: Manager,
    /// What is installed from the registry (`pnpm@9.15.0`, `yarn@1`); None: the image's
    /// own npm.
    pub install: Option<String>,
    /// The declaration that chose it, in words.
    pub because: String,
    /// What is installed when `install` does not run on the image's Node (pnpm 11 needs
    /// Node 22): the major its lock file's format belongs to, else the manager's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// The manager `files` (a tree's files by path, small ones only) asks for.
pub fn choose(files: &dyn Fn(&str) -> Option<String>) -> Choice {
    let declared = files("package.json")
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|p| {
            p["packageManager"]
                .as_str()
                .map(str::trim)
                .map(str::to_string)
        })
        .filter(|s| !s.is_empty());
    let mut ignored = None;
    if let Some(field) = &declared {
        // `pnpm@9.15.0+sha512.…`: the hash is corepack's, the version is what matters.
        let spec = field.split('+').next().unwrap_or(field);
        if let Some((name, version)) = spec.rsplit_once('@').filter(|(n, _)| !n.is_empty()) {
            let major: Option<u64> = version.split('.').next().and_then(|m| m.parse().ok());
            let manager = match (name, major) {
                ("pnpm", _) => Some(Manager::Pnpm),
                ("yarn", Some(1) | Some(0)) => Some(Manager::Yarn),
                ("yarn", Some(_)) => Some(Manager::YarnBerry),
                ("npm", _) => Some(Manager::Npm),
                _ => None,
            };
            if let Some(manager) = manager {
                // A version that is not a registry's is never passed on: the major's newest.
                let version = if valid_version(version) {
                    version
                } else {
                    manager.default_major()
                };
                let install =
                    (manager != Manager::Npm).then(|| format!("{}@{version}", manager.package()));
                let because = if manager == Manager::Npm {
                    format!("package.json packageManager \"{field}\" (the image's npm prepares it)")
                } else {
                    format!("package.json packageManager \"{field}\"")
                };
                let fallback = install.as_ref().and_then(|i| {
                    let major = lock_major(manager, files).unwrap_or(manager.default_major());
                    let spec = format!("{}@{major}", manager.package());
                    (&spec != i).then_some(spec)
                });
                return Choice {
                    manager,
                    install,
                    because,
                    fallback,
                };
            }
        }
        ignored = Some(format!(
            "package.json packageManager \"{field}\" is no manager the sandbox installs; "
        ));
    }
    let ignored = ignored.unwrap_or_default();
    if let Some(lock) = files("pnpm-lock.yaml") {
        let version = lock_version(&lock);
        let major = version.as_deref().and_then(pnpm_major).unwrap_or("9");
        // The pnpm its CI sets up, where that major also writes the lock file's format
        // (pnpm 9, 10 and 11 all write `9.0`): nanoid's CI sets up pnpm 11, whose
        // workspace file pnpm 9 refuses ("packages field missing or empty").
        let writes_it = |v: &str| {
            let m = |s: &str| s.split('.').next().and_then(|m| m.parse::<u64>().ok());
            m(v).zip(m(major))
                .is_some_and(|(ci, lock)| ci == lock || (lock == 9 && ci > 9))
        };
        if let Some((ci, from)) = ci_pnpm(files).filter(|(v, _)| writes_it(v)) {
            let install = format!("pnpm@{ci}");
            let fallback = format!("pnpm@{major}");
            return Choice {
                manager: Manager::Pnpm,
                fallback: (fallback != install).then_some(fallback),
                install: Some(install),
                because: format!(
                    "{ignored}pnpm-lock.yaml (lockfileVersion {}) and {from}",
                    version.as_deref().unwrap_or("unread")
                ),
            };
        }
        return Choice {
            manager: Manager::Pnpm,
            install: Some(format!("pnpm@{major}")),
            because: format!(
                "{ignored}pnpm-lock.yaml (lockfileVersion {}: pnpm {major})",
                version.as_deref().unwrap_or("unread")
            ),
            fallback: None,
        };
    }
    if let Some(lock) = files("yarn.lock") {
        let berry_rc = files(".yarnrc.yml").is_some();
        let metadata = berry_metadata(&lock);
        if metadata.is_some() || (berry_rc && !lock.contains("# yarn lockfile v1")) {
            let major = metadata.and_then(berry_major).unwrap_or("4");
            return Choice {
                manager: Manager::YarnBerry,
                install: Some(format!("@yarnpkg/cli-dist@{major}")),
                because: format!(
                    "{ignored}yarn.lock (a berry lock file{}: yarn {major})",
                    metadata
                        .map(|m| format!(", __metadata version {m}"))
                        .unwrap_or_default()
                ),
                fallback: None,
            };
        }
        return Choice {
            manager: Manager::Yarn,
            install: Some("yarn@1".into()),
            because: format!("{ignored}yarn.lock (a yarn 1 lock file)"),
            fallback: None,
        };
    }
    let because = if files("package-lock.json").is_some() {
        "package-lock.json".to_string()
    } else if files("npm-shrinkwrap.json").is_some() {
        "npm-shrinkwrap.json".to_string()
    } else {
        "no packageManager and no lock file of another manager: npm".to_string()
    };
    Choice {
        manager: Manager::Npm,
        install: None,
        because: format!("{ignored}{because}"),
        fallback: None,
    }
}

/// The pnpm version the tree's GitHub workflows set up (`pnpm/action-setup` or
/// `pnpm/setup` with `version: 11`), with where: the first workflow by name that says one.
/// `files(".github/workflows/")` lists the folder's files.
fn ci_pnpm(files: &dyn Fn(&str) -> Option<String>) -> Option<(String, String)> {
    crate::suite::workflows(files)?
        .into_iter()
        .find_map(|(path, text)| {
            let (action, version) = pnpm_setup_version(&text)?;
            Some((
                version.clone(),
                format!("{path} {action} version {version}"),
            ))
        })
}

/// The action and the `version:` input of a workflow's first pnpm setup step that names
/// one a registry has (`11`, `9.15.0`; `10.x` as `10`); read as text, as
/// [`crate::ci_matrix`] reads matrices.
fn pnpm_setup_version(text: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let (dash, key) = match body.strip_prefix("- ") {
            Some(rest) => (indent(line), rest.trim_start()),
            None => (indent(line).saturating_sub(2), body),
        };
        let Some(uses) = key.strip_prefix("uses:") else {
            continue;
        };
        let action = uses.trim().trim_matches(['"', '\'']);
        let action = action.split('@').next().unwrap_or(action);
        if !["pnpm/action-setup", "pnpm/setup"].contains(&action) {
            continue;
        }
        // The step's lines: those after `uses:` indented past its `-`.
        let step = lines[i + 1..]
            .iter()
            .filter(|l| !l.trim().is_empty())
            .take_while(|l| indent(l) > dash);
        for l in step {
            let Some(value) = l.trim().strip_prefix("version:") else {
                continue;
            };
            let value = value.split(" #").next().unwrap_or(value).trim();
            let value = value.trim_matches(['"', '\'']);
            let value = value.strip_suffix(".x").unwrap_or(value);
            if valid_version(value) {
                return Some((action.to_string(), value.to_string()));
            }
        }
    }
    None
}

/// The major of `manager` that writes the tree's lock file, as its format says.
fn lock_major(manager: Manager, files: &dyn Fn(&str) -> Option<String>) -> Option<&'static str> {
    match manager {
        Manager::Pnpm => pnpm_major(&lock_version(&files("pnpm-lock.yaml")?)?),
        Manager::YarnBerry => berry_major(berry_metadata(&files("yarn.lock")?)?),
        Manager::Yarn => Some("1"),
        Manager::Npm => None,
    }
}

/// A version as a registry names one (`9.15.0`, `4.0.0-rc.1`): nothing the shell or npm
/// would read as anything else.
fn valid_version(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 64
        && v.starts_with(|c: char| c.is_ascii_digit())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
}

/// pnpm-lock.yaml's `lockfileVersion` (`9.0`, `5.4`), read from its first lines.
fn lock_version(lock: &str) -> Option<String> {
    lock.lines().take(5).find_map(|l| {
        let v = l.strip_prefix("lockfileVersion:")?;
        Some(v.trim().trim_matches(['\'', '"']).to_string())
    })
}

/// The pnpm major that writes a lock file of this version.
fn pnpm_major(version: &str) -> Option<&'static str> {
    Some(match version {
        "9.0" => "9",
        "6.0" | "6.1" => "8",
        "5.4" => "7",
        "5.3" => "6",
        "5.2" | "5.1" | "5" => "5",
        _ => return None,
    })
}

/// A berry yarn.lock's `__metadata` `version` (a number), None for a classic one.
fn berry_metadata(lock: &str) -> Option<&str> {
    let at = lock.find("__metadata:")?;
    lock[at..].lines().skip(1).take(4).find_map(|l| {
        let v = l.trim().strip_prefix("version:")?;
        Some(v.trim().trim_matches(['\'', '"']))
    })
}

/// The yarn major that writes a berry lock file of this `__metadata` version.
fn berry_major(version: &str) -> Option<&'static str> {
    Some(match version {
        "4" => "2",
        "5" | "6" => "3",
        "8" => "4",
        _ => return None,
    })
}

/// What pnpm-workspace.yaml says: the workspace's package globs and its catalogs (the
/// default one under `default`).
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Workspace {
    pub packages: Vec<String>,
    pub catalogs: BTreeMap<String, BTreeMap<String, String>>,
    /// The patch files of `patchedDependencies` (`sirv@3.0.2: patches/sirv@3.0.2.patch`).
    pub patches: Vec<String>,
}

#[derive(Deserialize)]
struct WorkspaceFile {
    #[serde(default)]
    packages: Vec<String>,
    #[serde(default)]
    catalog: BTreeMap<String, String>,
    #[serde(default)]
    catalogs: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default, rename = "patchedDependencies")]
    patched: BTreeMap<String, String>,
}

/// The workspace packages a pnpm lock file names (its `importers:` keys, the root `.` left
/// out), as folders within the tree; read as text, as a lock file of any size is.
pub fn pnpm_importers(lock: &str) -> Vec<String> {
    let mut dirs = Vec::new();
    let mut inside = false;
    for line in lock.lines() {
        if !line.starts_with(' ') && !line.trim().is_empty() {
            inside = line.trim_end() == "importers:";
            continue;
        }
        // `  packages/app:`, or `  packages/app/fixtures/dep: {}` for one with nothing.
        let Some(key) = line
            .strip_prefix("  ")
            .filter(|k| !k.starts_with(' '))
            .map(str::trim_end)
            .and_then(|k| k.strip_suffix(':').or_else(|| k.strip_suffix(": {}")))
        else {
            continue;
        };
        let dir = key.trim_matches(['"', '\'']);
        if inside
            && dir != "."
            && std::path::Path::new(dir)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
        {
            dirs.push(dir.to_string());
        }
    }
    dirs
}

/// The patch files a project's install applies to its dependencies, relative to the tree's
/// root: pnpm's `patchedDependencies` (pnpm-workspace.yaml, or package.json's `pnpm` field)
/// and yarn berry's `patch:` protocol (`patch:sirv@npm%3A3.0.2#./.yarn/patches/sirv.patch`
/// in a range or a resolution). The install fails without them (vite: `ENOENT
/// patches/sirv@3.0.2.patch`): they are data the preparation reads, as the lock file is.
/// Paths that leave the tree are not named.
pub fn patch_files(package: &serde_json::Value, workspace: Option<&Workspace>) -> Vec<String> {
    let mut found: Vec<String> = workspace.map(|w| w.patches.clone()).unwrap_or_default();
    if let Some(patched) = package["pnpm"]["patchedDependencies"].as_object() {
        found.extend(
            patched
                .values()
                .filter_map(|v| v.as_str())
                .map(str::to_string),
        );
    }
    for field in [
        "dependencies",
        "devDependencies",
        "optionalDependencies",
        "resolutions",
    ] {
        for value in package[field]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(_, v)| v)
        {
            if let Some(path) = value
                .as_str()
                .filter(|v| v.starts_with("patch:"))
                .and_then(|v| v.rsplit_once('#'))
                .map(|(_, path)| path.trim_start_matches("~/").to_string())
            {
                found.push(path);
            }
        }
    }
    let mut files: Vec<String> = found
        .into_iter()
        .map(|p| p.trim_start_matches("./").to_string())
        .filter(|p| {
            !p.is_empty()
                && !p.starts_with('/')
                && std::path::Path::new(p)
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
        })
        .collect();
    files.sort();
    files.dedup();
    files
}

/// pnpm-workspace.yaml read (None when it does not parse).
pub fn workspace(text: &str) -> Option<Workspace> {
    if text.len() > 512 * 1024 {
        return None;
    }
    let options = crate::yaml_options(16);
    let file: WorkspaceFile = serde_saphyr::from_str_with_options(text, options).ok()?;
    let mut catalogs = file.catalogs;
    if !file.catalog.is_empty() {
        catalogs
            .entry("default".into())
            .or_default()
            .extend(file.catalog);
    }
    Some(Workspace {
        packages: file.packages,
        catalogs,
        patches: file.patched.into_values().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pnpm_lock_names_its_workspace_packages() {
        let lock = "lockfileVersion: '9.0'\n\nimporters:\n\n  .:\n    dependencies:\n      a:\n        specifier: ^1\n\n  packages/vite:\n    devDependencies: {}\n\n  'packages/vite/src/node/__tests__/fixtures/cjs':\n    dependencies: {}\n\n  packages/vite/src/node/__tests__/fixtures/empty: {}\n\n  ../outside:\n    {}\n\npackages:\n\n  a@1.0.0:\n    resolution: {integrity: x}\n";
        assert_eq!(
            pnpm_importers(lock),
            [
                "packages/vite",
                "packages/vite/src/node/__tests__/fixtures/cjs",
                "packages/vite/src/node/__tests__/fixtures/empty"
            ]
        );
    }

    #[test]
    fn the_patch_files_the_install_applies_are_named_within_the_tree() {
        let workspace = workspace(
            "packages:\n  - 'packages/*'\npatchedDependencies:\n  \"sirv@3.0.2\": \"patches/sirv@3.0.2.patch\"\n  chokidar@3.6.0: ./patches/chokidar.patch\n",
        )
        .expect("parses");
        let package = serde_json::json!({
            "pnpm": {"patchedDependencies": {"ms@2.1.3": "patches/ms.patch", "x@1": "../outside.patch"}},
            "dependencies": {"left-pad": "patch:left-pad@npm%3A1.1.3#~/.yarn/patches/left-pad-npm-1.1.3.patch"},
            "resolutions": {"debug": "patch:debug@npm%3A4.3.4#./.yarn/patches/debug.patch", "a": "^1"},
        });
        assert_eq!(
            patch_files(&package, Some(&workspace)),
            [
                ".yarn/patches/debug.patch",
                ".yarn/patches/left-pad-npm-1.1.3.patch",
                "patches/chokidar.patch",
                "patches/ms.patch",
                "patches/sirv@3.0.2.patch",
            ]
        );
        assert!(patch_files(&serde_json::json!({}), None).is_empty());
    }
    fn choice(files: &[(&str, &str)]) -> Choice {
        choose(&|p: &str| {
            files
                .iter()
                .find(|(n, _)| *n == p)
                .map(|(_, t)| t.to_string())
        })
    }

    #[test]
    fn the_package_manager_field_chooses_the_manager_and_its_version() {
        let c = choice(&[(
            "package.json",
            r#"{"packageManager": "pnpm@9.15.0+sha512.76e2379760a4328ec4415815bcd6628dee727af3779aaa4c914e3944156c4299921a89f976381ee107d41f12cfa4b66681ca9c718f0668fa0831ed4c6d8ba56c"}"#,
        )]);
        assert_eq!(c.manager, Manager::Pnpm);
        assert_eq!(c.install.as_deref(), Some("pnpm@9.15.0"));
        assert!(
            c.because
                .starts_with("package.json packageManager \"pnpm@9.15.0+sha512.")
        );
        // The field wins over a lock file of another manager.
        let c = choice(&[
            ("package.json", r#"{"packageManager": "yarn@1.22.22"}"#),
            ("package-lock.json", "{}"),
        ]);
        assert_eq!(c.manager, Manager::Yarn);
        assert_eq!(c.install.as_deref(), Some("yarn@1.22.22"));
        // pnpm 11 needs Node 22: where it cannot run, the major of its lock file's format.
        let c = choice(&[
            ("package.json", r#"{"packageManager": "pnpm@11.19.0"}"#),
            ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n"),
        ]);
        assert_eq!(c.install.as_deref(), Some("pnpm@11.19.0"));
        assert_eq!(c.fallback.as_deref(), Some("pnpm@9"));
        let c = choice(&[("package.json", r#"{"packageManager": "yarn@4.5.0"}"#)]);
        assert_eq!(c.manager, Manager::YarnBerry);
        assert_eq!(c.install.as_deref(), Some("@yarnpkg/cli-dist@4.5.0"));
        let c = choice(&[("package.json", r#"{"packageManager": "npm@10.9.0"}"#)]);
        assert_eq!((c.manager, c.install), (Manager::Npm, None));
    }

    #[test]
    fn without_the_field_the_lock_file_chooses_and_its_format_the_major() {
        let pkg = ("package.json", r#"{"name": "x"}"#);
        let c = choice(&[
            pkg,
            ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n\nsettings:\n"),
        ]);
        assert_eq!(c.manager, Manager::Pnpm);
        assert_eq!(c.install.as_deref(), Some("pnpm@9"));
        assert_eq!(c.because, "pnpm-lock.yaml (lockfileVersion 9.0: pnpm 9)");
        let c = choice(&[pkg, ("pnpm-lock.yaml", "lockfileVersion: 5.4\n")]);
        assert_eq!(c.install.as_deref(), Some("pnpm@7"));
        let classic = "# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n\n\nis-number@^7.0.0:\n  version \"7.0.0\"\n";
        let c = choice(&[pkg, ("yarn.lock", classic)]);
        assert_eq!(
            (c.manager, c.install.as_deref()),
            (Manager::Yarn, Some("yarn@1"))
        );
        let berry = "# This file is generated by running \"yarn install\" inside your project.\n\n__metadata:\n  version: 8\n  cacheKey: 10c0\n";
        let c = choice(&[pkg, ("yarn.lock", berry)]);
        assert_eq!(c.manager, Manager::YarnBerry);
        assert_eq!(c.install.as_deref(), Some("@yarnpkg/cli-dist@4"));
        assert!(c.because.contains("__metadata version 8"), "{}", c.because);
        let c = choice(&[pkg, ("package-lock.json", "{}"), ("yarn.lock", classic)]);
        assert_eq!(
            c.manager,
            Manager::Yarn,
            "yarn.lock comes before package-lock.json"
        );
        let c = choice(&[pkg, ("package-lock.json", "{}")]);
        assert_eq!(
            (c.manager, c.because.as_str()),
            (Manager::Npm, "package-lock.json")
        );
        let c = choice(&[pkg]);
        assert_eq!(c.manager, Manager::Npm);
    }

    #[test]
    fn the_pnpm_its_ci_sets_up_is_chosen_where_it_writes_the_lock_files_format() {
        let pkg = ("package.json", r#"{"name": "x"}"#);
        let lock = ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n");
        let listing = (".github/workflows/", "release.yml\ntest.yml\nREADME.md");
        let release = (
            ".github/workflows/release.yml",
            "jobs:\n  release:\n    steps:\n      - uses: actions/checkout@v4\n",
        );
        // nanoid's: the step named first, `uses:` after, a pinned action with a comment.
        let test = (
            ".github/workflows/test.yml",
            "jobs:\n  full:\n    steps:\n      - name: Install Node.js & pnpm\n        uses: pnpm/setup@5d160c5bc68a09337ad0d5654e237e03253b5879 # v1.0.0\n        with:\n          version: 11\n          runtime: node@26\n      - name: Install\n        run: pnpm ci\n",
        );
        let c = choice(&[pkg, lock, listing, release, test]);
        assert_eq!(c.manager, Manager::Pnpm);
        assert_eq!(c.install.as_deref(), Some("pnpm@11"));
        assert_eq!(c.fallback.as_deref(), Some("pnpm@9"));
        assert_eq!(
            c.because,
            "pnpm-lock.yaml (lockfileVersion 9.0) and .github/workflows/test.yml pnpm/setup version 11"
        );
        // action-setup, the step begun by `uses:`, a quoted `10.x`.
        let setup = (
            ".github/workflows/test.yml",
            "jobs:\n  t:\n    steps:\n      - uses: pnpm/action-setup@v4\n        with:\n          version: '10.x'\n      - run: pnpm test\n",
        );
        let c = choice(&[pkg, lock, listing, setup]);
        assert_eq!(c.install.as_deref(), Some("pnpm@10"));
        // A version the step of another action names is not pnpm's.
        let other = (
            ".github/workflows/test.yml",
            "jobs:\n  t:\n    steps:\n      - uses: pnpm/action-setup@v4\n      - uses: actions/setup-node@v4\n        with:\n          version: 22\n",
        );
        let c = choice(&[pkg, lock, listing, other]);
        assert_eq!(c.install.as_deref(), Some("pnpm@9"));
        // A CI pnpm older than the lock file's format is not the one that wrote it.
        let old = (
            ".github/workflows/test.yml",
            "jobs:\n  t:\n    steps:\n      - uses: pnpm/action-setup@v2\n        with:\n          version: 8\n",
        );
        let c = choice(&[pkg, lock, listing, old]);
        assert_eq!(c.install.as_deref(), Some("pnpm@9"));
        assert_eq!(c.because, "pnpm-lock.yaml (lockfileVersion 9.0: pnpm 9)");
        // Nor one newer than the format's own majors (pnpm 9 writes `9.0`, not `6.0`).
        let newer = (
            ".github/workflows/test.yml",
            "jobs:\n  t:\n    steps:\n      - uses: pnpm/action-setup@v4\n        with:\n          version: 9\n",
        );
        let six = ("pnpm-lock.yaml", "lockfileVersion: '6.0'\n");
        let c = choice(&[pkg, six, listing, newer]);
        assert_eq!(c.install.as_deref(), Some("pnpm@8"));
    }

    #[test]
    fn a_manager_the_sandbox_does_not_install_is_named_and_the_lock_file_chooses() {
        let c = choice(&[
            ("package.json", r#"{"packageManager": "bun@1.1.0"}"#),
            ("pnpm-lock.yaml", "lockfileVersion: '6.0'\n"),
        ]);
        assert_eq!(c.manager, Manager::Pnpm);
        assert_eq!(c.install.as_deref(), Some("pnpm@8"));
        assert!(
            c.because
                .starts_with("package.json packageManager \"bun@1.1.0\" is no manager")
        );
        // A version that is not a registry's is never passed on.
        let c = choice(&[("package.json", r#"{"packageManager": "pnpm@9; rm -rf /"}"#)]);
        assert_eq!(c.manager, Manager::Pnpm);
        assert_eq!(c.install.as_deref(), Some("pnpm@9"));
    }

    #[test]
    fn pnpm_workspace_catalogs_are_read() {
        let ws = workspace(
            "packages:\n  - 'packages/*'\n  - '!**/test/**'\ncatalog:\n  '@babel/parser': ^7.28.0\n  is-number: ^7.0.0\ncatalogs:\n  legacy:\n    is-number: ^6.0.0\n",
        )
        .expect("parses");
        assert_eq!(ws.packages, ["packages/*", "!**/test/**"]);
        assert_eq!(ws.catalogs["default"]["is-number"], "^7.0.0");
        assert_eq!(ws.catalogs["default"]["@babel/parser"], "^7.28.0");
        assert_eq!(ws.catalogs["legacy"]["is-number"], "^6.0.0");
        assert_eq!(workspace("packages: [a\n"), None);
    }
}
