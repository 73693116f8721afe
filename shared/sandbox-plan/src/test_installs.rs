//! Packages a Node project's own scripts install from the registry at test time (issue 30,
//! BugsJS Node-redis-4): `"pretest": "optional-dev-dependency hiredis"`, `npm install
//! --no-save sinon` before `mocha`. The run has no network, so such an install fails there
//! and the tests that load the package fail on the base. The preparation installs them
//! beside the declared dependencies (as of the base's date, as those are), and the suite
//! leaves the install step out of the command, both said in the record.
//!
//! Read from the scripts the suite runs (`prepare`, `pretest`, `test`), each `&&`-, `||`-
//! or `;`-separated step read as words; a step with quotes, substitutions or redirections
//! is left alone.

/// One package a script installs at test time.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TestInstall {
    pub name: String,
    /// The range asked for (`optionalDevDependencies`' or the command's `name@range`), `*`
    /// when none is.
    pub range: String,
    /// Where: `package.json scripts.pretest: optional-dev-dependency hiredis`.
    pub source: String,
    /// The installed package whose release this one must pin as its peer, as the tool that
    /// installs it picks (tap installs the plugin release whose `@tapjs/core` peer is the
    /// project's `@tapjs/core`); None for the newest release in `range`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_of: Option<String>,
}

/// Whether package.json (parsed) lists `name` as a dependency of any kind it installs.
fn declared(package: &serde_json::Value, name: &str) -> bool {
    ["dependencies", "devDependencies", "optionalDependencies"]
        .iter()
        .any(|f| package[*f].get(name).is_some())
}

/// The scripts whose test-time installs are prepared: those the suite runs.
pub const SCRIPTS: &[&str] = &["prepare", "pretest", "test"];

/// The packages `package.json` (parsed) has its scripts install at test time, each once,
/// without those it declares as dependencies already.
pub fn node_test_installs(package: &serde_json::Value) -> Vec<TestInstall> {
    let mut out: Vec<TestInstall> = Vec::new();
    for script in SCRIPTS {
        let Some(text) = package["scripts"][*script].as_str() else {
            continue;
        };
        for step in steps(text) {
            for (name, range) in installs(&step, package) {
                if !declared(package, &name) && !out.iter().any(|i| i.name == name) {
                    out.push(TestInstall {
                        name,
                        range,
                        source: format!("package.json scripts.{script}: {}", step.join(" ")),
                        peer_of: None,
                    });
                }
            }
        }
    }
    out
}

/// The plugins tap 18 and later loads beyond its own (its `plugin` setting, from `.taprc`,
/// which wins, or package.json's `tap`), as configured: `@tapjs/clock`, `!@tapjs/typescript`
/// (a default left out), `./test/plugin.ts`. Empty for none, or for a tap before 18.
///
/// tap builds its Test class for the configured set into its own package the first time it
/// runs with that set, and installs a plugin no manifest lists from the registry first: in a
/// run, with no network and a read-only layer, both fail, so the preparation does both.
pub fn tap_plugins(taprc: Option<&str>, package: &serde_json::Value) -> Vec<String> {
    let options = crate::yaml_options(16);
    let from_rc = taprc
        .and_then(|t| serde_saphyr::from_str_with_options::<serde_json::Value>(t, options).ok());
    let config = match &from_rc {
        Some(rc) => rc,
        None => &package["tap"],
    };
    match &config["plugin"] {
        serde_json::Value::String(one) => vec![one.clone()],
        serde_json::Value::Array(all) => all
            .iter()
            .filter_map(|p| p.as_str())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// The tap plugins the project configures that no manifest field lists: installed for the
/// tests, the release whose `@tapjs/core` peer the project's tap has, as tap picks. tap's own
/// plugins (`@tapjs/…` that tap depends on) are there already when tap is, and a default left
/// out or a path is no package to install.
pub fn tap_plugin_installs(plugins: &[String], package: &serde_json::Value) -> Vec<TestInstall> {
    let mut out: Vec<TestInstall> = Vec::new();
    for plugin in plugins {
        let Some((name, range)) = spec_of(plugin) else {
            continue;
        };
        if declared(package, &name) || TAP_DEFAULT_PLUGINS.contains(&name.as_str()) {
            continue;
        }
        if !out.iter().any(|i| i.name == name) {
            out.push(TestInstall {
                name,
                range: range.unwrap_or_else(|| "*".into()),
                source: format!("tap's plugin setting: {plugin}"),
                peer_of: Some("@tapjs/core".into()),
            });
        }
    }
    out
}

/// The plugins tap 18 and later loads by default, shipped with it (`@tapjs/test`'s
/// `defaultPlugins`).
const TAP_DEFAULT_PLUGINS: &[&str] = &[
    "@tapjs/after",
    "@tapjs/after-each",
    "@tapjs/asserts",
    "@tapjs/before",
    "@tapjs/before-each",
    "@tapjs/chdir",
    "@tapjs/filter",
    "@tapjs/fixture",
    "@tapjs/intercept",
    "@tapjs/mock",
    "@tapjs/node-serialize",
    "@tapjs/snapshot",
    "@tapjs/spawn",
    "@tapjs/stdin",
    "@tapjs/typescript",
    "@tapjs/worker",
];

/// Whether `step` (a script's step, as text) only installs packages at test time: the
/// suite leaves such a step out once the preparation installed them.
pub fn is_test_install(step: &str, package: &serde_json::Value) -> bool {
    let words: Vec<String> = step.split_whitespace().map(str::to_string).collect();
    !words.is_empty() && plain(step) && !installs(&words, package).is_empty()
}

/// A script's steps as words, `&&`, `||` and `;` separating them; a step that is not plain
/// words is none.
fn steps(text: &str) -> Vec<Vec<String>> {
    text.split("&&")
        .flat_map(|s| s.split("||"))
        .flat_map(|s| s.split(';'))
        .filter(|s| plain(s))
        .map(|s| s.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|w| !w.is_empty())
        .collect()
}

fn plain(step: &str) -> bool {
    !step.contains(['\'', '"', '`', '$', '>', '<', '|', '(', ')'])
}

/// The packages one step installs, with their ranges.
fn installs(words: &[String], package: &serde_json::Value) -> Vec<(String, String)> {
    let program = words[0].rsplit('/').next().unwrap_or(&words[0]);
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let optional = &package["optionalDevDependencies"];
    match (program, args.first().copied()) {
        // optional-dev-dependency installs the packages it names, or with none those
        // package.json's `optionalDevDependencies` lists, and goes on when one fails.
        ("optional-dev-dependency", _) => {
            let named: Vec<&str> = args
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect();
            if named.is_empty() {
                optional
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(n, r)| (n.clone(), r.as_str().unwrap_or("*").to_string()))
                    .collect()
            } else {
                named
                    .into_iter()
                    .filter_map(|spec| {
                        let (name, range) = spec_of(spec)?;
                        let range = range
                            .or_else(|| optional[&name].as_str().map(str::to_string))
                            .unwrap_or_else(|| "*".into());
                        Some((name, range))
                    })
                    .collect()
            }
        }
        ("npm", Some("install" | "i" | "add")) | ("yarn" | "pnpm", Some("add")) => {
            // A global install is a tool of the machine, not of the tree.
            if args.iter().any(|a| matches!(*a, "-g" | "--global")) {
                return Vec::new();
            }
            args[1..]
                .iter()
                .filter(|a| !a.starts_with('-'))
                .filter_map(|spec| spec_of(spec).map(|(n, r)| (n, r.unwrap_or_else(|| "*".into()))))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// A registry package spec (`hiredis`, `hiredis@^0.4`, `@scope/name@1`): its name and range;
/// None for a path, a URL or git.
fn spec_of(spec: &str) -> Option<(String, Option<String>)> {
    if spec.starts_with(['.', '/', '~']) || spec.contains(':') {
        return None;
    }
    // The `@` after the first character: a scope's `@` is part of the name.
    let (name, range) = match spec.char_indices().skip(1).find(|(_, c)| *c == '@') {
        Some((at, _)) => (&spec[..at], Some(spec[at + 1..].to_string())),
        None => (spec, None),
    };
    let bare = name.strip_prefix('@').unwrap_or(name);
    let valid = !bare.is_empty()
        && bare.matches('/').count() == usize::from(name.starts_with('@'))
        && bare
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._/".contains(c));
    valid.then(|| (name.to_string(), range.filter(|r| !r.is_empty())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(text: &str) -> serde_json::Value {
        serde_json::from_str(text).expect("json")
    }

    /// node_redis' pretest, and the usual `npm install` forms, give the packages the tests
    /// need; declared dependencies, global tools, paths and URLs are not test-time installs.
    #[test]
    fn the_packages_a_projects_scripts_install_at_test_time_are_read() {
        let node_redis = package(
            r#"{"scripts": {"test": "nyc ./node_modules/.bin/_mocha ./test/*.js", "pretest": "optional-dev-dependency hiredis", "posttest": "jshint ."},
                "devDependencies": {"optional-dev-dependency": "^1.0.1", "mocha": "^2.2.5"}}"#,
        );
        assert_eq!(
            node_test_installs(&node_redis),
            [TestInstall {
                name: "hiredis".into(),
                range: "*".into(),
                source: "package.json scripts.pretest: optional-dev-dependency hiredis".into(),
                peer_of: None,
            }]
        );
        assert!(is_test_install(
            "optional-dev-dependency hiredis",
            &node_redis
        ));
        assert!(!is_test_install(
            "nyc ./node_modules/.bin/_mocha ./test/*.js",
            &node_redis
        ));

        let listed = package(
            r#"{"scripts": {"pretest": "optional-dev-dependency"}, "optionalDevDependencies": {"hiredis": "^0.4.1"}}"#,
        );
        let found = node_test_installs(&listed);
        assert_eq!(
            (found[0].name.as_str(), found[0].range.as_str()),
            ("hiredis", "^0.4.1")
        );

        let npm = package(
            r#"{"scripts": {"prepare": "npm install -g grunt-cli", "test": "npm i --no-save sinon@1.17 @types/node@^8 ./local git+https://x/y.git mocha && mocha"},
                "devDependencies": {"mocha": "*"}}"#,
        );
        let found: Vec<(String, String)> = node_test_installs(&npm)
            .into_iter()
            .map(|i| (i.name, i.range))
            .collect();
        assert_eq!(
            found,
            [
                ("sinon".to_string(), "1.17".to_string()),
                ("@types/node".to_string(), "^8".to_string()),
            ]
        );
        // A plain `npm install` is the preparation's own work, and quoted steps are left alone.
        let plain =
            package(r#"{"scripts": {"pretest": "npm install && node -e 'require(\"x\")'"}}"#);
        assert!(node_test_installs(&plain).is_empty());
    }

    /// node-lru-cache's `.taprc` (`plugin: ["@tapjs/clock"]`): the plugin no manifest lists
    /// is installed pinned to tap's core; `.taprc` wins over package.json's `tap`; a default
    /// left out, a default named, a path and a declared plugin install nothing, but all are
    /// the configured set tap is built with.
    #[test]
    fn the_tap_plugins_a_project_configures_are_installed_and_built() {
        let taprc = "# vim: set filetype=yaml :\nnode-arg:\n  - --expose-gc\nplugin:\n  - \"@tapjs/clock\"\n";
        let lru = package(
            r#"{"scripts": {"test": "tap"}, "devDependencies": {"tap": "^21.1.0"}, "tap": {"plugin": ["@tapjs/other"]}}"#,
        );
        let plugins = tap_plugins(Some(taprc), &lru);
        assert_eq!(plugins, ["@tapjs/clock"]);
        assert_eq!(
            tap_plugin_installs(&plugins, &lru),
            [TestInstall {
                name: "@tapjs/clock".into(),
                range: "*".into(),
                source: "tap's plugin setting: @tapjs/clock".into(),
                peer_of: Some("@tapjs/core".into()),
            }]
        );
        // Without a .taprc, package.json's `tap` is the setting; one string is a list of one.
        assert_eq!(tap_plugins(None, &lru), ["@tapjs/other"]);
        let one = package(r#"{"tap": {"plugin": "@tapjs/nock@2"}}"#);
        let installs = tap_plugin_installs(&tap_plugins(None, &one), &one);
        assert_eq!(
            (installs[0].name.as_str(), installs[0].range.as_str()),
            ("@tapjs/nock", "2")
        );

        let mixed = package(
            r#"{"devDependencies": {"tap": "18", "@tapjs/sinon": "1"},
                "tap": {"plugin": ["!@tapjs/typescript", "@tapjs/mock", "./test/plugin.ts", "@tapjs/sinon"]}}"#,
        );
        let plugins = tap_plugins(None, &mixed);
        assert_eq!(plugins.len(), 4);
        assert!(tap_plugin_installs(&plugins, &mixed).is_empty());
        // A tap before 18 (or none) has no plugin setting; a .taprc that is no YAML map is none.
        assert!(tap_plugins(Some("check-coverage: false\n"), &package("{}")).is_empty());
        assert!(tap_plugins(Some("- [unclosed"), &package("{}")).is_empty());
    }
}
