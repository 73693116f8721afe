//! The API fuzzed from its own document by a peer tool: Schemathesis (from PyPI, pinned)
//! runs every operation of `api/openapi.json` against `proven serve` (a fresh Postgres
//! database, a Redis prefix of its own) with generated, boundary and malformed inputs,
//! and checks every answer: no 5xx, no dropped connection, status codes, content types,
//! headers and bodies as documented, invalid input refused and valid input accepted, and
//! authentication never ignored.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::service::Service;

/// The Schemathesis release the run is pinned to.
const SCHEMATHESIS: &str = "4.32.5";

/// Its whole dependency set, pinned too: a seed gives the same cases only from the same
/// generator, and Hypothesis releases several times a week. Raise them together, with a
/// passing run (`pip freeze` of a fresh install).
const PINNED: &[&str] = &[
    "anyio==4.16.0",
    "certifi==2026.10.19.post1",
    "charset-normalizer==3.5.3",
    "click==8.5.1",
    "graphql-core==3.3.2",
    "harfile==0.6.0",
    "hypothesis==6.170.27",
    "hypothesis-graphql==0.13.5",
    "idna==3.21",
    "iniconfig==2.3.1",
    "jsonschema_rs==0.60.3",
    "markdown-it-py==4.3.0",
    "MarkupSafe==3.0.4",
    "mdurl==0.1.2",
    "packaging==26.4",
    "pluggy==1.7.0",
    "Pygments==2.21.0",
    "pyrate-limiter==4.6.0",
    "pytest==9.2.0",
    "PyYAML==6.0.4",
    "requests==2.34.2",
    "rich==15.0.0",
    "sortedcontainers==2.4.0",
    "typing_extensions==4.16.0",
    "urllib3==2.8.0",
    "Werkzeug==3.1.9",
];

/// Schemathesis's `st`, installed on first use into a virtual environment under
/// `~/.cache/proven` (the target directory when there is no home), so a machine installs
/// it once per version. A missing python3, venv or pip fails naming what to install.
fn schemathesis() -> PathBuf {
    let root = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/proven"))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    // The pins are part of the name: a changed set installs afresh beside the old one.
    let pins = PINNED.join("\n") + "\n";
    let digest = pins
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(b.into()));
    let venv = root.join(format!("schemathesis-{SCHEMATHESIS}-{digest:08x}"));
    let st = venv.join("bin/st");
    // Written last: a half-finished install is never taken for a whole one.
    let installed = venv.join(".installed");
    if installed.exists() && st.exists() {
        return st;
    }
    let _ = std::fs::remove_dir_all(&venv);
    std::fs::create_dir_all(&root).expect("create the Schemathesis cache directory");
    let run = |cmd: &mut Command, what: &str, install: &str| {
        let out = cmd.output().unwrap_or_else(|e| {
            panic!("the Schemathesis run needs {what}, which did not start ({e}): {install}")
        });
        assert!(
            out.status.success(),
            "{what} failed: {}{}\n{install}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(
        Command::new("python3").arg("-m").arg("venv").arg(&venv),
        "python3 -m venv",
        "install python3 with venv and pip (Debian: apt-get install python3 python3-venv; scripts/test does)",
    );
    let constraints = venv.join("constraints.txt");
    std::fs::write(&constraints, pins).expect("write the pins");
    run(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .arg("--constraint")
            .arg(&constraints)
            .arg(format!("schemathesis=={SCHEMATHESIS}")),
        "pip install schemathesis",
        "PyPI must be reachable to install schemathesis into the cache once",
    );
    std::fs::write(&installed, SCHEMATHESIS).expect("mark the install finished");
    st
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_answers_every_schemathesis_case_as_its_openapi_document_says() {
    let st = schemathesis();
    // The fuzzer submits thousands of reviews: a cap and a rate as high as it needs keep
    // it exercising the accepting paths (the 429s have their own tests).
    let mut service = Service::start_api_with(&[("PROVEN_MAX_QUEUED_REVIEWS", "1000000")]).await;
    let token = service.tenant("fuzz");
    let document = Path::new(env!("CARGO_MANIFEST_DIR")).join("../api/openapi.json");
    let scratch = tempfile::tempdir().expect("a directory for Schemathesis's files");
    // A `repository` of the document's shape is not always one the operator allows (a host
    // off PROVEN_REPO_HOSTS, a path outside PROVEN_REPO_ROOTS): for the three operations that
    // take one, 422 (repository_refused, as the document says) answers valid data too.
    std::fs::write(
        scratch.path().join("schemathesis.toml"),
        "[[operations]]\ninclude-method = \"POST\"\ninclude-path = [\"/v1/reviews\", \"/v1/batches\", \"/v1/questions\"]\n\
         checks.positive_data_acceptance.expected-statuses = [\"2XX\", \"401\", \"403\", \"404\", \"409\", \"422\", \"429\"]\n",
    )
    .expect("write schemathesis.toml");
    let base_url = service.base_url.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(&st)
            .current_dir(scratch.path())
            .arg("run")
            .arg(&document)
            .args(["--url", &base_url])
            .args(["--header", &format!("Authorization: Bearer {token}")])
            .args(["--checks", "all"])
            .args(["--max-examples", "100"])
            // Reproducible: the same cases every run (found failures are fixed, not hoped away).
            .args(["--seed", "20240601"])
            .args(["--generation-database", "none"])
            .args(["--workers", "2", "--no-color"])
            .output()
            .expect("run schemathesis")
    })
    .await
    .expect("schemathesis finished");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // What the server logged of its own failures (a 5xx names its cause only there).
    let server_errors: String = std::fs::read_to_string(service.data_dir.path().join("serve.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("ERROR") || l.contains("WARN"))
        .take(40)
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        out.status.success(),
        "Schemathesis found failures:\n{stdout}\n{stderr}\nthe server's errors and warnings:\n{server_errors}"
    );
    // Every operation of the document was run, and cases were generated for them.
    assert!(
        stdout.contains("Selected: 13/13") && stdout.contains("Tested: 13"),
        "{stdout}"
    );
    assert!(stdout.contains(" generated, "), "{stdout}");
    // The server is still up: nothing it was sent took it down.
    assert!(
        service
            .api
            .0
            .try_wait()
            .expect("poll proven serve")
            .is_none(),
        "proven serve exited during the run:\n{stdout}"
    );
    let summary: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.contains("SUMMARY"))
        .collect();
    println!("{}", summary.join("\n"));
    service.stop().await;
}
