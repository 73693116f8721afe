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
}

/// The scripts whose test-time installs are prepared: those the suite runs.
pub const SCRIPTS: &[&str] = &["prepare", "pretest", "test"];

/// The packages `package.json` (parsed) has its scripts install at test time, each once,
/// without those it declares as dependencies already.
pub fn node_test_installs(package: &serde_json::Value) -> Vec<TestInstall> {
    let declared = |name: &str| {
        ["dependencies", "devDependencies", "optionalDependencies"]
            .iter()
            .any(|f| package[*f].get(name).is_some())
    };
    let mut out: Vec<TestInstall> = Vec::new();
    for script in SCRIPTS {
        let Some(text) = package["scripts"][*script].as_str() else {
            continue;
        };
        for step in steps(text) {
            for (name, range) in installs(&step, package) {
                if !declared(&name) && !out.iter().any(|i| i.name == name) {
                    out.push(TestInstall {
                        name,
                        range,
                        source: format!("package.json scripts.{script}: {}", step.join(" ")),
                    });
                }
            }
        }
    }
    out
}

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
}
