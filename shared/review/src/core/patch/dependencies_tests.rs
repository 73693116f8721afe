use super::*;

/// One file before a patch, the packages the kept findings name, and what each patched
/// text must be refused for (a part of the refusal), or None for a patch that holds.
struct Case {
    path: &'static str,
    before: &'static str,
    named: &'static [&'static str],
    patches: &'static [(&'static str, Option<&'static str>)],
}

fn check(case: &Case) {
    let named: Vec<String> = case.named.iter().map(|n| n.to_string()).collect();
    for (after, why) in case.patches {
        let got = change_refusal(case.path, case.before, after, &named);
        match (why, &got) {
            (None, None) => {}
            (Some(why), Some(got)) if got.contains(why) => {
                assert!(got.starts_with(case.path), "{got}");
            }
            _ => panic!("{}: {after:?}: expected {why:?}, got {got:?}", case.path),
        }
    }
}

#[test]
fn a_requirements_file_may_only_raise_a_named_package() {
    check(&Case {
        path: "requirements.txt",
        before: "# pinned\nrequests==2.25.0\nidna==2.10\n",
        named: &["Requests"],
        patches: &[
            ("# pinned\nrequests==2.31.0\nidna==2.10\n", None),
            (
                "# pinned\nrequests==2.25.0\nidna==2.10\nurllib3==1.26.5\n",
                Some("requirements.txt adds urllib3, a package no finding names"),
            ),
            (
                "# pinned\nrequests==2.25.0\nidna==2.10\nurllib3\n",
                Some("adds urllib3, a package no finding names"),
            ),
            (
                "--extra-index-url https://evil.example/simple\n# pinned\nrequests==2.31.0\nidna==2.10\n",
                Some("adds the source"),
            ),
            (
                "# pinned\nrequests @ https://evil.example/requests.whl\nidna==2.10\n",
                Some("takes requests from the address https://evil.example/requests.whl"),
            ),
            (
                "# pinned\nrequests==2.25.0\nidna==2.10\ngit+https://evil.example/x.git#egg=x\n",
                Some("adds the source"),
            ),
            (
                "# pinned\nrequests==2.20.0\nidna==2.10\n",
                Some("lowers requests from 2.25.0 to 2.20.0"),
            ),
            (
                "# pinned\nrequests==2.25.0\nidna==3.7\n",
                Some("changes the version of idna, a package no finding names"),
            ),
            (
                "# pinned\nrequests>=2.25.0\nidna==2.10\n",
                Some("beyond its version"),
            ),
            ("# pinned\nidna==2.10\n", Some("removes requests")),
        ],
    });
}

#[test]
fn a_pyproject_may_only_raise_a_named_package() {
    check(&Case {
        path: "pyproject.toml",
        before: "[project]\nname = \"app\"\nversion = \"1.0\"\ndependencies = [\"jinja2>=2.10\", \"click==7.0\"]\n",
        named: &["jinja2"],
        patches: &[
            (
                "[project]\nname = \"app\"\nversion = \"1.0\"\ndependencies = [\"jinja2>=3.1.4\", \"click==7.0\"]\n",
                None,
            ),
            (
                "[project]\nname = \"app\"\nversion = \"1.0\"\ndependencies = [\"jinja2>=2.10\", \"click==7.0\", \"urllib3>=2\"]\n",
                Some("adds urllib3, a package no finding names"),
            ),
            (
                "[project]\nname = \"app\"\nversion = \"1.0\"\ndependencies = [\"jinja2>=2.10\", \"click==7.0\"]\n[[tool.uv.index]]\nurl = \"https://evil.example/simple\"\n",
                Some("adds the source"),
            ),
            (
                "[project]\nname = \"app\"\nversion = \"1.0\"\ndependencies = [\"jinja2>=2.9\", \"click==7.0\"]\n",
                Some("lowers jinja2 from 2.10 to 2.9"),
            ),
            (
                "[project]\nname = \"app\"\nversion = \"1.0\"\ndependencies = [\"jinja2>=2.10\", \"click==8.1.7\"]\n",
                Some("changes the version of click, a package no finding names"),
            ),
        ],
    });
}

#[test]
fn a_package_json_may_only_raise_a_named_package() {
    check(&Case {
        path: "package.json",
        before: "{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"lodash\": \"^4.17.15\",\n    \"ms\": \"2.1.2\"\n  }\n}\n",
        named: &["lodash"],
        patches: &[
            (
                "{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"lodash\": \"^4.17.21\",\n    \"ms\": \"2.1.2\"\n  }\n}\n",
                None,
            ),
            (
                "{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"lodash\": \"^4.17.15\",\n    \"ms\": \"2.1.2\",\n    \"left-pad\": \"^1.3.0\"\n  }\n}\n",
                Some("adds left-pad, a package no finding names"),
            ),
            (
                "{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"lodash\": \"git+https://evil.example/lodash.git\",\n    \"ms\": \"2.1.2\"\n  }\n}\n",
                Some("takes lodash from \"git+https://evil.example/lodash.git\""),
            ),
            (
                "{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"lodash\": \"^4.17.11\",\n    \"ms\": \"2.1.2\"\n  }\n}\n",
                Some("lowers lodash from 4.17.15 to 4.17.11"),
            ),
            (
                "{\n  \"name\": \"app\",\n  \"dependencies\": {\n    \"lodash\": \"^4.17.15\",\n    \"ms\": \"2.1.3\"\n  }\n}\n",
                Some("changes the version of ms, a package no finding names"),
            ),
        ],
    });
}

#[test]
fn a_cargo_manifest_may_only_raise_a_named_package() {
    check(&Case {
        path: "Cargo.toml",
        before: "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nsmallvec = \"1.6.0\"\nserde = { version = \"1.0.100\" }\n",
        named: &["smallvec"],
        patches: &[
            (
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nsmallvec = \"1.6.1\"\nserde = { version = \"1.0.100\" }\n",
                None,
            ),
            (
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nsmallvec = \"1.6.0\"\nserde = { version = \"1.0.100\" }\nlibc = \"0.2\"\n",
                Some("adds libc, a package no finding names"),
            ),
            (
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nsmallvec = { git = \"https://evil.example/smallvec\" }\nserde = { version = \"1.0.100\" }\n",
                Some("takes smallvec from git"),
            ),
            (
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nsmallvec = \"1.6.0\"\nserde = { version = \"1.0.100\" }\n\n[patch.crates-io]\nserde = { path = \"../serde\" }\n",
                Some("adds the source"),
            ),
            (
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nsmallvec = \"1.4.0\"\nserde = { version = \"1.0.100\" }\n",
                Some("lowers smallvec from 1.6.0 to 1.4.0"),
            ),
            (
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nsmallvec = \"1.6.0\"\nserde = { version = \"1.0.200\" }\n",
                Some("changes the version of serde, a package no finding names"),
            ),
        ],
    });
}

#[test]
fn a_go_mod_may_only_raise_a_named_package() {
    check(&Case {
        path: "go.mod",
        before: "module example.com/app\n\ngo 1.21\n\nrequire (\n\tgolang.org/x/text v0.3.7\n\tgithub.com/pkg/errors v0.9.1\n)\n",
        named: &["golang.org/x/text"],
        patches: &[
            (
                "module example.com/app\n\ngo 1.21\n\nrequire (\n\tgolang.org/x/text v0.3.8\n\tgithub.com/pkg/errors v0.9.1\n)\n",
                None,
            ),
            (
                "module example.com/app\n\ngo 1.21\n\nrequire (\n\tgolang.org/x/text v0.3.7\n\tgithub.com/pkg/errors v0.9.1\n\tgithub.com/evil/x v1.0.0\n)\n",
                Some("adds github.com/evil/x, a package no finding names"),
            ),
            (
                "module example.com/app\n\ngo 1.21\n\nrequire (\n\tgolang.org/x/text v0.3.8\n\tgithub.com/pkg/errors v0.9.1\n)\n\nreplace golang.org/x/text => github.com/evil/text v0.3.8\n",
                Some("adds the source"),
            ),
            (
                "module example.com/app\n\ngo 1.21\n\nrequire (\n\tgolang.org/x/text v0.3.6\n\tgithub.com/pkg/errors v0.9.1\n)\n",
                Some("lowers golang.org/x/text from v0.3.7 to v0.3.6"),
            ),
            (
                "module example.com/app\n\ngo 1.21\n\nrequire (\n\tgolang.org/x/text v0.3.7\n\tgithub.com/pkg/errors v0.9.2\n)\n",
                Some("changes the version of github.com/pkg/errors, a package no finding names"),
            ),
        ],
    });
}

#[test]
fn a_lock_file_may_raise_a_named_package_but_not_move_its_address() {
    let lock = |version: &str, host: &str| {
        format!(
            "{{\n  \"name\": \"app\",\n  \"lockfileVersion\": 3,\n  \"packages\": {{\n    \"\": {{ \"name\": \"app\" }},\n    \"node_modules/ms\": {{\n      \"version\": \"{version}\",\n      \"resolved\": \"https://{host}/ms/-/ms-{version}.tgz\"\n    }}\n  }}\n}}\n"
        )
    };
    let before = lock("2.1.2", "registry.npmjs.org");
    let named = ["ms".to_string()];
    let raised = lock("2.1.3", "registry.npmjs.org");
    assert_eq!(
        change_refusal("package-lock.json", &before, &raised, &named),
        None
    );
    let moved = lock("2.1.3", "evil.example");
    let why = change_refusal("package-lock.json", &before, &moved, &named).unwrap_or_default();
    assert!(
        why.contains("adds the source \"https://evil.example\""),
        "{why}"
    );
    let why = change_refusal("package-lock.json", &before, &raised, &[]).unwrap_or_default();
    assert!(
        why.contains("changes the version of ms, a package no finding names"),
        "{why}"
    );
}

#[test]
fn a_file_that_is_no_dependency_file_is_not_judged_here() {
    assert_eq!(change_refusal("calc.py", "a", "b", &[]), None);
}

#[test]
fn text_around_an_address_of_any_script_is_read_without_panicking() {
    assert_eq!(
        hosts("é://x ünï+https://évil.example/a \"ftp://h\""),
        ["+https://évil.example", "://x", "ftp://h"]
            .map(String::from)
            .into_iter()
            .collect()
    );
}
