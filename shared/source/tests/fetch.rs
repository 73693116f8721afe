//! Mirrors fetched from servers the tests start on loopback: a TLS smart-HTTP git server
//! with the test's own CA, and tarpits.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use proven_change::testing::TestRepo;
use proven_config::RepoCredential;
use proven_source::testing::{GitHttpsServer, Tarpit, TarpitServer};
use proven_source::{Checked, FetchError, FetchSettings, Remote, Scheme, mirror};
use sha2::Digest;

fn settings(server_ca: Option<&Path>) -> FetchSettings {
    FetchSettings {
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(20),
        fetch_timeout: Duration::from_secs(60),
        max_bytes: 64 << 20,
        credentials: Vec::new(),
        ca_file: server_ca.map(Path::to_path_buf),
        ssh_key: None,
        ssh_known_hosts: None,
    }
}

/// `https://HOST:PORT/NAME.git`, pinned to 127.0.0.1 without resolving HOST.
fn pinned(host: &str, port: u16, name: &str) -> Checked {
    Checked::pinned_for_tests(
        Remote {
            scheme: Scheme::Https,
            host: host.into(),
            port,
            user: None,
            path: format!("/{name}.git"),
        },
        vec![SocketAddr::from(([127, 0, 0, 1], port))],
        true,
    )
}

fn head_of(dir: &Path, rev: &str) -> String {
    proven_change::Repo::open(dir)
        .expect("mirror opens")
        .resolve(rev)
        .expect("revision")
        .commit
}

/// Every file under `dir`, as bytes, holds no `needle`.
fn assert_absent(dir: &Path, needle: &[u8]) {
    for entry in walk(dir) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle),
            "{} holds the secret",
            entry.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test]
async fn a_clone_reaches_only_the_checked_address_and_git_never_resolves_the_name() {
    // `example.invalid` resolves nowhere: the clone works only because git goes through
    // the proxy, which connects to the address the policy checked.
    let server = GitHttpsServer::start(&["example.invalid"], None);
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    let first = repo.commit("first");
    server.publish("app", repo.path());
    let mirrors = tempfile::tempdir().expect("tempdir");
    let dir = mirrors.path().join("t-1").join("app");
    let checked = pinned("example.invalid", server.port, "app");
    let fetched = mirror(&checked, &dir, &settings(Some(&server.ca_file())))
        .await
        .expect("cloned");
    assert!(fetched.cloned);
    assert!(fetched.bytes > 0);
    assert_eq!(fetched.address, Some(checked.addrs[0]));
    assert_eq!(head_of(&dir, "HEAD"), first);

    // A second review fetches into the same mirror.
    repo.write("a.txt", "two\n");
    let second = repo.commit("second");
    server.publish("app2", repo.path());
    std::fs::remove_dir_all(
        server
            .ca_file()
            .parent()
            .expect("dir")
            .join("repos/app.git"),
    )
    .expect("unpublish");
    std::fs::rename(
        server
            .ca_file()
            .parent()
            .expect("dir")
            .join("repos/app2.git"),
        server
            .ca_file()
            .parent()
            .expect("dir")
            .join("repos/app.git"),
    )
    .expect("republish");
    let fetched = mirror(&checked, &dir, &settings(Some(&server.ca_file())))
        .await
        .expect("fetched");
    assert!(!fetched.cloned);
    assert_eq!(head_of(&dir, "HEAD"), second);

    // Without the test's CA the server's certificate is not trusted.
    let other = mirrors.path().join("t-1").join("untrusted");
    let e = mirror(&checked, &other, &settings(None))
        .await
        .expect_err("unknown CA");
    assert!(matches!(e, FetchError::Git { .. }), "{e}");
    assert!(e.to_string().contains("certificate"), "{e}");
    assert!(!other.exists(), "a failed clone leaves nothing behind");
}

#[tokio::test]
async fn fetches_of_one_mirror_take_turns_through_its_lock() {
    let server = GitHttpsServer::start(&["localhost"], None);
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    let head = repo.commit("first");
    server.publish("app", repo.path());
    let mirrors = tempfile::tempdir().expect("tempdir");
    let dir = mirrors.path().join("t-1").join("app");
    std::fs::create_dir_all(mirrors.path().join("t-1")).expect("tenant dir");
    let checked = pinned("localhost", server.port, "app");
    let mut s = settings(Some(&server.ca_file()));
    s.fetch_timeout = Duration::from_secs(1);
    // Another process's fetch holds the mirror.
    let held = std::fs::File::create(dir.with_extension("lock")).expect("lock file");
    held.lock().expect("lock");
    let e = mirror(&checked, &dir, &s)
        .await
        .expect_err("waits its turn");
    assert!(matches!(e, FetchError::Timeout { .. }), "{e}");
    assert!(!dir.exists());
    drop(held);
    // Its turn: the clone itself gets a budget a loaded machine meets (the one second above
    // was only the wait for the lock).
    s.fetch_timeout = Duration::from_secs(60);
    mirror(&checked, &dir, &s).await.expect("its turn");
    assert_eq!(head_of(&dir, "HEAD"), head);
}

#[tokio::test]
async fn credentials_travel_as_a_header_for_their_host_and_are_never_written() {
    let secret = "tok-5ecret-for-fetch-test";
    let server = GitHttpsServer::start(&["localhost"], Some(("x-access-token", secret)));
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    let head = repo.commit("first");
    server.publish("private", repo.path());
    let mirrors = tempfile::tempdir().expect("tempdir");
    let checked = pinned("localhost", server.port, "private");

    let e = mirror(
        &checked,
        &mirrors.path().join("anon"),
        &settings(Some(&server.ca_file())),
    )
    .await
    .expect_err("no credentials");
    // git asks for a user name, and with prompts disabled stops there.
    assert!(e.to_string().contains("could not read Username"), "{e}");
    assert!(
        server
            .requests()
            .iter()
            .all(|l| l.ends_with(" unauthorised"))
    );

    let mut with = settings(Some(&server.ca_file()));
    with.credentials = vec![
        RepoCredential {
            host: "localhost".into(),
            port: Some(server.port + 1),
            user: "x-access-token".into(),
            secret: "wrong-port-secret".into(),
        },
        RepoCredential {
            host: "localhost".into(),
            port: Some(server.port),
            user: "x-access-token".into(),
            secret: secret.into(),
        },
    ];
    let dir = mirrors.path().join("ok");
    mirror(&checked, &dir, &with).await.expect("authorised");
    assert_eq!(head_of(&dir, "HEAD"), head);
    assert!(server.requests().iter().any(|l| l.ends_with(" ok")));
    assert_absent(mirrors.path(), secret.as_bytes());
    assert_absent(mirrors.path(), b"wrong-port-secret");
}

#[tokio::test]
async fn a_stalling_server_fails_by_the_read_timeout() {
    let tarpit = TarpitServer::start(Tarpit::Stall);
    let mirrors = tempfile::tempdir().expect("tempdir");
    let mut s = settings(None);
    s.read_timeout = Duration::from_secs(1);
    let e = mirror(
        &pinned("localhost", tarpit.port, "x"),
        &mirrors.path().join("x"),
        &s,
    )
    .await
    .expect_err("stalled");
    assert!(matches!(e, FetchError::ReadTimeout { secs: 1, .. }), "{e}");
    assert!(
        e.to_string().contains("PROVEN_REPO_READ_TIMEOUT_SECONDS"),
        "{e}"
    );
    assert!(tarpit.accepted() >= 1, "the fetch reached the tarpit");
    let left: Vec<_> = walk(mirrors.path())
        .into_iter()
        .filter(|p| p.extension().is_none_or(|e| e != "lock"))
        .collect();
    assert!(
        left.is_empty(),
        "nothing left behind but the lock file: {left:?}"
    );
}

#[tokio::test]
async fn a_trickling_server_fails_by_the_fetch_timeout() {
    let tarpit = TarpitServer::start(Tarpit::Trickle);
    let mirrors = tempfile::tempdir().expect("tempdir");
    let mut s = settings(None);
    s.read_timeout = Duration::from_secs(5);
    s.fetch_timeout = Duration::from_secs(2);
    let e = mirror(
        &pinned("localhost", tarpit.port, "x"),
        &mirrors.path().join("x"),
        &s,
    )
    .await
    .expect_err("trickled");
    assert!(matches!(e, FetchError::Timeout { secs: 2, .. }), "{e}");
    assert!(
        e.to_string().contains("PROVEN_REPO_FETCH_TIMEOUT_SECONDS"),
        "{e}"
    );
}

#[tokio::test]
async fn a_pack_over_the_cap_fails_by_name() {
    let server = GitHttpsServer::start(&["localhost"], None);
    let repo = TestRepo::new();
    // 2 MiB that do not compress.
    let mut noise = Vec::with_capacity(2 << 20);
    let mut block = sha2::Sha256::digest(b"seed");
    while noise.len() < 2 << 20 {
        block = sha2::Sha256::digest(block);
        noise.extend_from_slice(&block);
    }
    repo.write("noise.bin", &noise);
    repo.commit("noise");
    server.publish("big", repo.path());
    let mirrors = tempfile::tempdir().expect("tempdir");
    let mut s = settings(Some(&server.ca_file()));
    s.max_bytes = 256 * 1024;
    let dir = mirrors.path().join("big");
    let e = mirror(&pinned("localhost", server.port, "big"), &dir, &s)
        .await
        .expect_err("over the cap");
    assert!(
        matches!(
            e,
            FetchError::TooLarge {
                max_bytes: 262144,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("PROVEN_REPO_MAX_FETCH_BYTES"), "{e}");
    assert!(!dir.exists());
    // Under a cap it fits, the same clone works.
    s.max_bytes = 8 << 20;
    mirror(&pinned("localhost", server.port, "big"), &dir, &s)
        .await
        .expect("under the cap");
}

#[tokio::test]
async fn a_closed_port_is_unreachable_and_worth_retrying() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mirrors = tempfile::tempdir().expect("tempdir");
    let e = mirror(
        &pinned("localhost", port, "x"),
        &mirrors.path().join("x"),
        &settings(None),
    )
    .await
    .expect_err("closed");
    assert!(matches!(e, FetchError::Unreachable { .. }), "{e}");
    assert!(e.is_transient());
}
