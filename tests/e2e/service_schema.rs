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

/// Schemathesis's `st`, installed on first use into a virtual environment under
/// `~/.cache/proven` (the target directory when there is no home), so a machine installs
/// it once per version. A missing python3, venv or pip fails naming what to install.
fn schemathesis() -> PathBuf {
    let root = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/proven"))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    let venv = root.join(format!("schemathesis-{SCHEMATHESIS}"));
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
    run(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
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
    assert!(
        out.status.success(),
        "Schemathesis found failures:\n{stdout}\n{stderr}"
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
