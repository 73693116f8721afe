//! Mirrors: a bare copy of a remote repository per tenant, cloned on first use and fetched
//! afterwards, with the `git` command under limits.
//!
//! Why the `git` command and not libgit2's https/ssh: libgit2 resolves names itself (no
//! way to pin the checked address), takes one process-wide CA file (no per-host bundle for
//! internal servers), and a libgit2 call on a blocking thread cannot be stopped at a
//! deadline; building it with https and ssh would also add vendored OpenSSL and libssh2 to
//! every build. git is installed wherever git repositories are, a child process is killed
//! when its step is dropped, and it runs here with nothing inherited: a cleared environment,
//! no system or global configuration, a private empty HOME, no terminal prompt, only the
//! one protocol allowed, redirects off, and every connection through [`crate::proxy`].
//! Credentials reach it only as configuration in its environment (`GIT_CONFIG_COUNT`,
//! `http.<url>.extraHeader` for that host), never in a URL, an argument, a file or a log.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use base64::Engine;
use proven_config::{RepoCredential, RepositorySettings};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;

use crate::policy::{Checked, Remote, Scheme};
use crate::proxy::{Cut, Limits, Mode, Proxy};

/// How clones and fetches are made.
#[derive(Clone)]
pub struct FetchSettings {
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub fetch_timeout: Duration,
    pub max_bytes: u64,
    pub credentials: Vec<RepoCredential>,
    pub ca_file: Option<PathBuf>,
    pub ssh_key: Option<PathBuf>,
    pub ssh_known_hosts: Option<PathBuf>,
}

impl FetchSettings {
    pub fn new(settings: &RepositorySettings) -> FetchSettings {
        FetchSettings {
            connect_timeout: settings.connect_timeout,
            read_timeout: settings.read_timeout,
            fetch_timeout: settings.fetch_timeout,
            max_bytes: settings.max_fetch_bytes,
            credentials: settings.credentials.clone(),
            ca_file: settings.ca_file.clone(),
            ssh_key: settings.ssh_key.clone(),
            ssh_known_hosts: settings.ssh_known_hosts.clone(),
        }
    }

    fn credential_for(&self, remote: &Remote) -> Option<&RepoCredential> {
        self.credentials.iter().find(|c| {
            c.host == remote.host
                && match c.port {
                    Some(p) => p == remote.port,
                    None => remote.port == remote.scheme.default_port(),
                }
        })
    }

    /// Replaces every secret (and the header form it travels in) with `***`.
    fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for c in &self.credentials {
            for secret in [c.secret.clone(), basic(c)] {
                if !secret.is_empty() {
                    out = out.replace(&secret, "***");
                }
            }
        }
        out
    }
}

fn basic(c: &RepoCredential) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", c.user, c.secret))
}

impl std::fmt::Debug for FetchSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchSettings")
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("fetch_timeout", &self.fetch_timeout)
            .field("max_bytes", &self.max_bytes)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

/// A clone or fetch that did not complete, by name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error(
        "connecting to {authority} ({addrs}) took longer than {secs} s (PROVEN_REPO_CONNECT_TIMEOUT_SECONDS)"
    )]
    ConnectTimeout {
        authority: String,
        addrs: String,
        secs: u64,
    },
    #[error("{authority} cannot be reached: {message}")]
    Unreachable { authority: String, message: String },
    #[error(
        "{authority} sent nothing for {secs} s during the fetch (PROVEN_REPO_READ_TIMEOUT_SECONDS)"
    )]
    ReadTimeout { authority: String, secs: u64 },
    #[error(
        "the fetch from {authority} took longer than {secs} s (PROVEN_REPO_FETCH_TIMEOUT_SECONDS)"
    )]
    Timeout { authority: String, secs: u64 },
    #[error(
        "the fetch from {authority} passed {max_bytes} bytes (PROVEN_REPO_MAX_FETCH_BYTES): a pack over the cap is refused"
    )]
    TooLarge { authority: String, max_bytes: u64 },
    #[error(
        "git asked to reach {asked}, not {authority}: a redirect to another host is never followed"
    )]
    WrongTarget { authority: String, asked: String },
    #[error("git could not fetch {url}: {message}")]
    Git { url: String, message: String },
    #[error("mirror {path}: {message}")]
    Io { path: String, message: String },
}

impl FetchError {
    /// Worth another attempt later (the host may come back).
    pub fn is_transient(&self) -> bool {
        matches!(self, FetchError::Unreachable { .. })
    }
}

/// What a clone or fetch did.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub dir: PathBuf,
    /// Bytes received from the server.
    pub bytes: u64,
    /// A first clone (else a fetch into an existing mirror).
    pub cloned: bool,
    /// The checked address the fetch reached.
    pub address: Option<SocketAddr>,
}

/// Where mirrors live: one directory per tenant, one mirror per URL inside it.
#[derive(Debug, Clone)]
pub struct Mirrors {
    root: PathBuf,
}

impl Mirrors {
    pub fn new(root: impl Into<PathBuf>) -> Mirrors {
        Mirrors { root: root.into() }
    }

    /// The mirror of `remote` for `tenant` (`None`: the local user of `proven review`). A
    /// tenant never reads another's mirror, even of the same URL.
    pub fn dir(&self, tenant: Option<&str>, remote: &Remote) -> PathBuf {
        let key = |s: &str, n: usize| hex::encode(&Sha256::digest(s.as_bytes())[..n]);
        let tenant = match tenant {
            Some(t) => format!("t-{}", key(t, 8)),
            None => "local".to_string(),
        };
        self.root.join(tenant).join(key(&remote.url(), 12))
    }
}

/// Clones `checked` into `dir` (first use) or fetches every ref into it, and returns it.
/// Revisions are resolved in the mirror after the fetch, so workers on any machine review
/// the same commits.
pub async fn mirror(
    checked: &Checked,
    dir: &Path,
    settings: &FetchSettings,
) -> Result<Fetched, FetchError> {
    let remote = &checked.remote;
    let io = |path: &Path, e: std::io::Error| FetchError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    let proxy = start_proxy(checked, settings)
        .await
        .map_err(|e| io(parent, e))?;
    // A private, empty HOME: nothing of the worker's (git or ssh configuration, .netrc,
    // credential stores) is read.
    let home = tempfile::Builder::new()
        .prefix(".git-home-")
        .tempdir_in(parent)
        .map_err(|e| io(parent, e))?;
    // One clone or fetch per mirror at a time, across worker processes on this host: two
    // fetches into one repository would fight over its ref locks.
    let _lock = lock_mirror(dir, settings.fetch_timeout)
        .await
        .map_err(|e| match e {
            None => FetchError::Timeout {
                authority: remote.authority(),
                secs: settings.fetch_timeout.as_secs(),
            },
            Some(e) => io(dir, e),
        })?;
    let existing = dir.join("HEAD").exists();
    // A first clone goes next to its final place and is renamed, so a half-done clone is
    // never used.
    let clone_to = clone_place(parent, dir);
    let url = git_url(remote, proxy.addr);
    let mut cmd = git_command(checked, settings, &proxy, home.path());
    if existing {
        cmd.arg("-C")
            .arg(dir)
            .args(["fetch", "--quiet", "--prune", "--no-write-fetch-head"])
            .arg(&url)
            .arg("+refs/*:refs/*");
    } else {
        cmd.args(["clone", "--quiet", "--mirror"])
            .arg(&url)
            .arg(&clone_to);
    }
    let mut child = cmd.spawn().map_err(|e| FetchError::Git {
        url: remote.url(),
        message: format!("cannot run git: {e}"),
    })?;
    let stderr_tail = stderr_tail(child.stderr.take());
    let authority = remote.authority();
    let cleanup = |e: FetchError| {
        let _ = std::fs::remove_dir_all(&clone_to);
        e
    };
    let status = tokio::select! {
        status = child.wait() => status.map_err(|e| cleanup(io(dir, e)))?,
        _ = tokio::time::sleep(settings.fetch_timeout) => {
            let _ = child.kill().await;
            return Err(cleanup(FetchError::Timeout {
                authority,
                secs: settings.fetch_timeout.as_secs(),
            }));
        }
        _ = proxy.over_cap() => {
            let _ = child.kill().await;
            return Err(cleanup(FetchError::TooLarge { authority, max_bytes: settings.max_bytes }));
        }
    };
    let stderr = stderr_tail.await.unwrap_or_default();
    let cut = proxy.cut();
    if cut == Some(Cut::TooLarge) || !status.success() {
        let error = failure(cut, checked, settings, &proxy.secret, &url, &stderr);
        return Err(cleanup(error));
    }
    let fetched = |dir: &Path| Fetched {
        dir: dir.to_path_buf(),
        bytes: proxy.received(),
        cloned: !existing,
        address: proxy.connected(),
    };
    if existing {
        return Ok(fetched(dir));
    }
    match std::fs::rename(&clone_to, dir) {
        Ok(()) => Ok(fetched(dir)),
        // Another worker finished first: use theirs.
        Err(_) if dir.join("HEAD").exists() => {
            let _ = std::fs::remove_dir_all(&clone_to);
            Ok(fetched(dir))
        }
        Err(e) => Err(cleanup(io(dir, e))),
    }
}

/// Where a first clone is made before it is renamed to `dir`: beside it, named for this
/// process and a random part.
fn clone_place(parent: &Path, dir: &Path) -> PathBuf {
    parent.join(format!(
        ".{}.{}.{}",
        dir.file_name().and_then(|n| n.to_str()).unwrap_or("repo"),
        std::process::id(),
        uuid_like()
    ))
}

/// The proxy git goes through: CONNECT for https, raw for ssh, to the checked addresses
/// only, within the fetch's limits.
async fn start_proxy(checked: &Checked, settings: &FetchSettings) -> std::io::Result<Proxy> {
    let remote = &checked.remote;
    let mode = match remote.scheme {
        Scheme::Https => Mode::Connect {
            authority: connect_authority(remote),
        },
        Scheme::Ssh => Mode::Raw,
    };
    let limits = Limits {
        connect_timeout: settings.connect_timeout,
        read_timeout: settings.read_timeout,
        max_bytes: settings.max_bytes,
    };
    Proxy::start(checked.addrs.clone(), mode, limits).await
}

/// What stopped git: the proxy's cut (too large, a timeout, an unreachable or wrong
/// target) or, without one, git's own message with the URL and secrets redacted.
fn failure(
    cut: Option<Cut>,
    checked: &Checked,
    settings: &FetchSettings,
    secret: &str,
    url: &str,
    stderr: &str,
) -> FetchError {
    let remote = &checked.remote;
    let authority = remote.authority();
    match cut {
        Some(Cut::TooLarge) => FetchError::TooLarge {
            authority,
            max_bytes: settings.max_bytes,
        },
        Some(Cut::ReadTimeout) => FetchError::ReadTimeout {
            authority,
            secs: settings.read_timeout.as_secs(),
        },
        Some(Cut::ConnectTimeout) => FetchError::ConnectTimeout {
            authority,
            addrs: addr_list(&checked.addrs),
            secs: settings.connect_timeout.as_secs(),
        },
        Some(Cut::Unreachable(message)) => FetchError::Unreachable { authority, message },
        Some(Cut::WrongTarget(asked)) => FetchError::WrongTarget { authority, asked },
        None => FetchError::Git {
            url: remote.url(),
            message: settings
                .redact(&git_message(stderr, url, &remote.url()))
                .replace(secret, "***"),
        },
    }
}

/// git with nothing of the worker's environment: a private HOME, no system or global
/// configuration, only the remote's protocol, the proxy and its secret through
/// `GIT_CONFIG_*`; its stderr piped, and killed when dropped.
fn git_command(
    checked: &Checked,
    settings: &FetchSettings,
    proxy: &Proxy,
    home: &Path,
) -> tokio::process::Command {
    let remote = &checked.remote;
    let mut cmd = tokio::process::Command::new("git");
    cmd.env_clear()
        .env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
        )
        .env("HOME", home)
        .env("LC_ALL", "C")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ALLOW_PROTOCOL", remote.scheme.as_str())
        .env("GIT_PROTOCOL_FROM_USER", "0");
    let config = git_config(checked, settings, (proxy.addr, &proxy.secret));
    cmd.env("GIT_CONFIG_COUNT", config.len().to_string());
    for (i, (key, value)) in config.iter().enumerate() {
        cmd.env(format!("GIT_CONFIG_KEY_{i}"), key)
            .env(format!("GIT_CONFIG_VALUE_{i}"), value);
    }
    if remote.scheme == Scheme::Ssh {
        cmd.env("GIT_SSH_VARIANT", "ssh")
            .env("GIT_SSH_COMMAND", ssh_command(remote, settings));
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Dropping this future (its step stopped) takes git with it.
        .kill_on_drop(true);
    cmd
}

/// The last 64 KiB of git's stderr, read as it runs.
fn stderr_tail(mut stderr: Option<tokio::process::ChildStderr>) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let mut text = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let mut buf = [0u8; 4096];
            while let Ok(n) = s.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                text.extend_from_slice(&buf[..n]);
                if text.len() > 64 * 1024 {
                    text.drain(..text.len() - 64 * 1024);
                }
            }
        }
        String::from_utf8_lossy(&text).into_owned()
    })
}

/// Takes the mirror's lock file (`<mirror>.lock`), waiting at most `wait`; `Err(None)` when
/// another fetch held it all that time. The lock is released when the file is dropped.
async fn lock_mirror(dir: &Path, wait: Duration) -> Result<std::fs::File, Option<std::io::Error>> {
    let path = dir.with_extension("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(Some)?;
    let started = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < wait => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(std::fs::TryLockError::WouldBlock) => return Err(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(Some(e)),
        }
    }
}

/// A short random-enough suffix for a temporary directory name.
fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{nanos:x}")
}

fn addr_list(addrs: &[SocketAddr]) -> String {
    addrs
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `host:port` as curl writes it in `CONNECT` (the port always, IPv6 in brackets).
fn connect_authority(remote: &Remote) -> String {
    if remote.host.contains(':') {
        format!("[{}]:{}", remote.host, remote.port)
    } else {
        format!("{}:{}", remote.host, remote.port)
    }
}

/// The URL git is given: https as it is (it goes through the proxy); ssh aimed at the
/// proxy, the real host kept for the host-key check (`HostKeyAlias`).
fn git_url(remote: &Remote, proxy: SocketAddr) -> String {
    match remote.scheme {
        Scheme::Https => remote.url(),
        Scheme::Ssh => {
            let user = remote
                .user
                .as_deref()
                .map(|u| format!("{u}@"))
                .unwrap_or_default();
            format!("ssh://{user}{proxy}{}", remote.path)
        }
    }
}

/// The configuration git runs with, passed in its environment (never in argv).
fn git_config(
    checked: &Checked,
    settings: &FetchSettings,
    (proxy, secret): (SocketAddr, &str),
) -> Vec<(String, String)> {
    let remote = &checked.remote;
    let mut config: Vec<(String, String)> = [
        ("credential.helper", String::new()),
        ("core.hooksPath", "/dev/null".into()),
        ("core.askPass", String::new()),
        ("gc.auto", "0".into()),
        ("maintenance.auto", "false".into()),
        ("transfer.bundleURI", "false".into()),
        ("fetch.recurseSubmodules", "false".into()),
        ("http.followRedirects", "false".into()),
        ("http.sslVerify", "true".into()),
        ("http.lowSpeedLimit", "1".into()),
        (
            "http.lowSpeedTime",
            settings.read_timeout.as_secs().max(1).to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if remote.scheme == Scheme::Https {
        // The proxy's secret in the proxy URL (the environment, never argv), sent at once.
        config.push((
            "http.proxy".into(),
            format!("http://{}:{secret}@{proxy}", crate::proxy::PROXY_USER),
        ));
        config.push(("http.proxyAuthMethod".into(), "basic".into()));
        if checked.private
            && let Some(ca) = &settings.ca_file
        {
            config.push(("http.sslCAInfo".into(), ca.display().to_string()));
        }
        if let Some(c) = settings.credential_for(remote) {
            config.push((
                format!("http.https://{}/.extraHeader", remote.authority()),
                format!("Authorization: Basic {}", basic(c)),
            ));
        }
    }
    config
}

/// ssh with nothing of the host's: no config file, strict host keys from the operator's
/// file only, no agent, batch mode (never a prompt), timeouts.
fn ssh_command(remote: &Remote, settings: &FetchSettings) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let alias = if remote.port == 22 {
        remote.host.clone()
    } else {
        format!("[{}]:{}", remote.host, remote.port)
    };
    let known_hosts = settings
        .ssh_known_hosts
        .as_ref()
        .map_or("/dev/null".to_string(), |p| p.display().to_string());
    let mut cmd = format!(
        "ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile={} \
         -o GlobalKnownHostsFile=/dev/null -o HostKeyAlias={} -o ConnectTimeout={} \
         -o ServerAliveInterval={} -o ServerAliveCountMax=3 -o IdentitiesOnly=yes -o IdentityAgent=none",
        quote(&known_hosts),
        quote(&alias),
        settings.connect_timeout.as_secs().max(1),
        (settings.read_timeout.as_secs() / 3).max(1),
    );
    if let Some(key) = &settings.ssh_key {
        cmd.push_str(&format!(" -i {}", quote(&key.display().to_string())));
    }
    cmd
}

/// git's own words, without its progress noise, with the proxy's address put back to the
/// repository's URL.
fn git_message(stderr: &str, given: &str, url: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let wanted: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .collect();
    let text = if wanted.is_empty() {
        lines
            .iter()
            .rev()
            .take(3)
            .rev()
            .copied()
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        wanted.join("; ")
    };
    let text = text.replace(given, url);
    let mut text: String = text.chars().take(2000).collect();
    if text.is_empty() {
        text = "git ended without a message".into();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> FetchSettings {
        FetchSettings {
            connect_timeout: Duration::from_secs(3),
            read_timeout: Duration::from_secs(9),
            fetch_timeout: Duration::from_secs(60),
            max_bytes: 1 << 20,
            credentials: vec![RepoCredential {
                host: "git.internal".into(),
                port: Some(8443),
                user: "ci".into(),
                secret: "s3cr3t".into(),
            }],
            ca_file: Some(PathBuf::from("/etc/proven/ca.pem")),
            ssh_key: Some(PathBuf::from("/etc/proven/it's a key")),
            ssh_known_hosts: None,
        }
    }

    fn remote(scheme: Scheme, host: &str, port: u16) -> Remote {
        Remote {
            scheme,
            host: host.into(),
            port,
            user: (scheme == Scheme::Ssh).then(|| "git".into()),
            path: "/team/app.git".into(),
        }
    }

    #[test]
    fn credentials_go_to_their_host_only_as_a_header_in_the_environment() {
        let proxy: SocketAddr = "127.0.0.1:5000".parse().expect("addr");
        let checked = Checked::pinned_for_tests(
            remote(Scheme::Https, "git.internal", 8443),
            vec!["10.0.0.5:8443".parse().expect("addr")],
            true,
        );
        let config = git_config(&checked, &settings(), (proxy, "s3cret"));
        let get = |k: &str| {
            config
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("http.proxy"), Some("http://git:s3cret@127.0.0.1:5000"));
        assert_eq!(get("http.proxyAuthMethod"), Some("basic"));
        assert_eq!(get("http.followRedirects"), Some("false"));
        assert_eq!(get("http.sslCAInfo"), Some("/etc/proven/ca.pem"));
        let header = get("http.https://git.internal:8443/.extraHeader").expect("header");
        assert_eq!(
            header,
            format!("Authorization: Basic {}", basic(&settings().credentials[0]))
        );
        // Another host (or port) gets no header, and a public host no private CA.
        let other = Checked::pinned_for_tests(
            remote(Scheme::Https, "git.internal", 443),
            vec!["140.82.112.3:443".parse().expect("addr")],
            false,
        );
        let config = git_config(&other, &settings(), (proxy, "s3cret"));
        assert!(
            config
                .iter()
                .all(|(k, _)| !k.contains("extraHeader") && k != "http.sslCAInfo")
        );
        assert_eq!(
            git_url(&checked.remote, proxy),
            "https://git.internal:8443/team/app.git"
        );
        let redacted = settings().redact(&format!(
            "fatal: s3cr3t {}",
            basic(&settings().credentials[0])
        ));
        assert_eq!(redacted, "fatal: *** ***");
    }

    #[test]
    fn ssh_goes_to_the_proxy_and_checks_the_real_hosts_key_strictly() {
        let proxy: SocketAddr = "127.0.0.1:5000".parse().expect("addr");
        let r = remote(Scheme::Ssh, "github.com", 22);
        assert_eq!(git_url(&r, proxy), "ssh://git@127.0.0.1:5000/team/app.git");
        let cmd = ssh_command(&r, &settings());
        for part in [
            "-F /dev/null",
            "BatchMode=yes",
            "StrictHostKeyChecking=yes",
            "UserKnownHostsFile='/dev/null'",
            "HostKeyAlias='github.com'",
            "ConnectTimeout=3",
            "ServerAliveInterval=3",
            "IdentityAgent=none",
            "-i '/etc/proven/it'\\''s a key'",
        ] {
            assert!(cmd.contains(part), "{part} in {cmd}");
        }
        let cmd = ssh_command(&remote(Scheme::Ssh, "git.internal", 2222), &settings());
        assert!(cmd.contains("HostKeyAlias='[git.internal]:2222'"), "{cmd}");
    }

    #[test]
    fn each_tenant_has_its_own_mirror_of_a_url() {
        let m = Mirrors::new("/data/repos");
        let r = remote(Scheme::Https, "github.com", 443);
        let a = m.dir(Some("tenant-a"), &r);
        let b = m.dir(Some("tenant-b"), &r);
        assert_ne!(a, b);
        assert_eq!(
            a.file_name(),
            b.file_name(),
            "same URL key, different tenant directory"
        );
        assert!(a.starts_with("/data/repos"));
        assert_eq!(
            m.dir(None, &r).parent().expect("parent"),
            Path::new("/data/repos/local")
        );
    }
}
