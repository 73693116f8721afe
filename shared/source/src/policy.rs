//! The `repository` policy: what a review request may name.
//!
//! A repository is an https:// or ssh:// URL whose host (and port) is on the operator's
//! allow-list and resolves only to public addresses (or to addresses the operator allowed),
//! or a local path under the operator's roots. Everything else is refused with a
//! [`Refusal`] naming the setting that decides it. The check runs when a request is
//! submitted and again at intake, where the addresses it checked are the only ones the
//! fetch connects to ([`Checked::addrs`]).

use std::net::{IpAddr, SocketAddr};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use proven_config::{Config, RepositorySettings};

use crate::address::non_public;

/// The request field every refusal is about.
pub const FIELD: &str = "repository";

pub const HOSTS: &str = "PROVEN_REPO_HOSTS";
pub const ROOTS: &str = "PROVEN_REPO_ROOTS";
pub const PRIVATE_NETS: &str = "PROVEN_REPO_PRIVATE_NETS";
pub const CREDENTIALS: &str = "PROVEN_REPO_CREDENTIALS";
pub const DATA_DIR: &str = "PROVEN_DATA_DIR";

/// Longest wait for a host name to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a `repository` is refused, and which setting decides it. The message never repeats
/// a credential the value carried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{FIELD}: {message} (setting {setting})")]
pub struct Refusal {
    pub setting: &'static str,
    pub message: String,
}

fn refuse(setting: &'static str, message: impl Into<String>) -> Refusal {
    Refusal {
        setting,
        message: message.into(),
    }
}

/// A refusal, or a name that could not be resolved right now (which may pass later).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("{FIELD}: host {host} does not resolve: {message} (setting {HOSTS})")]
    Unresolved { host: String, message: String },
    /// At intake: the local path does not exist (or cannot be read).
    #[error("{FIELD}: {path} cannot be opened: {message}")]
    Missing { path: String, message: String },
}

impl CheckError {
    /// The setting that decides the outcome.
    pub fn setting(&self) -> Option<&'static str> {
        match self {
            CheckError::Refused(r) => Some(r.setting),
            CheckError::Unresolved { .. } => Some(HOSTS),
            CheckError::Missing { .. } => None,
        }
    }
}

/// Where local paths may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalPaths {
    /// `proven review` on one's own machine: any local repository.
    Any,
    /// The service: only under these directories (none when empty).
    Under(Vec<PathBuf>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Https,
    Ssh,
}

impl Scheme {
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Https => 443,
            Scheme::Ssh => 22,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Https => "https",
            Scheme::Ssh => "ssh",
        }
    }
}

/// A remote repository as the policy accepted it: no credentials, no query, a host checked
/// against the allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub scheme: Scheme,
    /// Lower-case name, or an address (IPv6 without brackets).
    pub host: String,
    pub port: u16,
    /// The ssh login name (`git@…`); never a password.
    pub user: Option<String>,
    /// The path on the server, starting with `/`.
    pub path: String,
}

impl Remote {
    /// `host` or `[v6]`, with `:port` when it is not the scheme's default.
    pub fn authority(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == self.scheme.default_port() {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }

    /// The URL, credential-free: what is shown, traced and keyed on.
    pub fn url(&self) -> String {
        let user = match (&self.user, self.scheme) {
            (Some(u), Scheme::Ssh) => format!("{u}@"),
            _ => String::new(),
        };
        format!(
            "{}://{user}{}{}",
            self.scheme.as_str(),
            self.authority(),
            self.path
        )
    }
}

/// What a `repository` names once the policy accepted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A path (at submission as written; at intake, see [`RepoPolicy::open_local`]).
    Local(PathBuf),
    Remote(Remote),
}

/// A remote whose name was resolved and whose every address was checked: the fetch
/// connects to these addresses and no others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub remote: Remote,
    pub addrs: Vec<SocketAddr>,
    /// Some address is non-public (allowed by `PROVEN_REPO_PRIVATE_NETS`): an internal host,
    /// verified against `PROVEN_REPO_CA_FILE` when one is set.
    pub private: bool,
}

impl Checked {
    /// A remote pinned to addresses chosen by the caller, without resolving or classifying
    /// them: for tests that show the fetch never resolves the name itself.
    #[cfg(any(test, feature = "testing"))]
    pub fn pinned_for_tests(remote: Remote, addrs: Vec<SocketAddr>, private: bool) -> Checked {
        Checked {
            remote,
            addrs,
            private,
        }
    }
}

/// A checked `repository`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Local(PathBuf),
    Remote(Checked),
}

/// The operator's rules for `repository`.
#[derive(Debug, Clone)]
pub struct RepoPolicy {
    hosts: Vec<(String, Option<u16>)>,
    local: LocalPaths,
    private_nets: Vec<ipnet::IpNet>,
    data_dir: PathBuf,
}

impl RepoPolicy {
    pub fn new(settings: &RepositorySettings, data_dir: &Path, local: LocalPaths) -> RepoPolicy {
        RepoPolicy {
            hosts: settings.hosts.clone(),
            local,
            private_nets: settings.private_nets.clone(),
            data_dir: data_dir.to_path_buf(),
        }
    }

    /// The service's policy (API and workers): local paths only under `PROVEN_REPO_ROOTS`.
    pub fn service(config: &Config) -> RepoPolicy {
        RepoPolicy::new(
            &config.repository,
            &config.data_dir,
            LocalPaths::Under(config.repository.roots.clone()),
        )
    }

    /// `proven review`'s policy: any local repository; URLs as in the service.
    pub fn cli(config: &Config) -> RepoPolicy {
        RepoPolicy::new(&config.repository, &config.data_dir, LocalPaths::Any)
    }

    /// Checks how `spec` is written (no IO): scheme, control characters, credentials, the
    /// host allow-list, local paths lexically.
    pub fn parse(&self, spec: &str) -> Result<Source, Refusal> {
        let allowed = "allowed: an https:// or ssh:// URL on PROVEN_REPO_HOSTS, or a path under PROVEN_REPO_ROOTS";
        if spec.trim().is_empty() {
            return Err(refuse(HOSTS, format!("is empty; {allowed}")));
        }
        if let Some(c) = spec.chars().find(|c| c.is_control()) {
            return Err(refuse(
                HOSTS,
                format!(
                    "contains a control character (U+{:04X}); {allowed}",
                    u32::from(c)
                ),
            ));
        }
        if spec.len() > 4096 {
            return Err(refuse(
                HOSTS,
                format!("is longer than 4096 bytes; {allowed}"),
            ));
        }
        if let Some((scheme, _)) = spec.split_once("://") {
            return match scheme.to_ascii_lowercase().as_str() {
                "https" | "ssh" | "git+ssh" | "ssh+git" => self.parse_url(spec).map(Source::Remote),
                "file" => {
                    let url = url::Url::parse(spec)
                        .map_err(|e| refuse(ROOTS, format!("is not a file:// URL: {e}")))?;
                    let local_host = url
                        .host_str()
                        .is_none_or(|h| h.is_empty() || h.eq_ignore_ascii_case("localhost"));
                    let path = url
                        .to_file_path()
                        .ok()
                        .filter(|_| local_host)
                        .ok_or_else(|| refuse(ROOTS, "file:// names a path on another host"))?;
                    self.check_local(&path).map(Source::Local)
                }
                "git" => Err(refuse(
                    HOSTS,
                    format!(
                        "git:// is refused (no authentication, no encryption, any port); {allowed}"
                    ),
                )),
                "http" => Err(refuse(
                    HOSTS,
                    format!("plain http:// is refused; {allowed}"),
                )),
                other => Err(refuse(
                    HOSTS,
                    format!("the scheme {other:?} is refused; {allowed}"),
                )),
            };
        }
        // git's `transport::address` runs a remote helper (`ext::` runs a command).
        if spec.contains("::") {
            return Err(refuse(
                HOSTS,
                format!("a git remote-helper address (`transport::…`) is refused; {allowed}"),
            ));
        }
        if is_scp_like(spec) {
            return self.parse_scp(spec).map(Source::Remote);
        }
        self.check_local(Path::new(spec)).map(Source::Local)
    }

    /// [`RepoPolicy::parse`], then for a remote: resolves its name and refuses any address
    /// that is not public unless `PROVEN_REPO_PRIVATE_NETS` allows it.
    pub async fn check(&self, spec: &str) -> Result<Target, CheckError> {
        match self.parse(spec)? {
            Source::Local(path) => Ok(Target::Local(path)),
            Source::Remote(remote) => self.resolve(remote).await.map(Target::Remote),
        }
    }

    /// Resolves `remote`'s host once and checks every address it gave.
    pub async fn resolve(&self, remote: Remote) -> Result<Checked, CheckError> {
        let addrs: Vec<SocketAddr> = match remote.host.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, remote.port)],
            Err(_) => {
                let lookup = tokio::net::lookup_host((remote.host.as_str(), remote.port));
                let unresolved = |message: String| CheckError::Unresolved {
                    host: remote.host.clone(),
                    message,
                };
                match tokio::time::timeout(RESOLVE_TIMEOUT, lookup).await {
                    Ok(Ok(addrs)) => addrs.collect(),
                    Ok(Err(e)) => return Err(unresolved(e.to_string())),
                    Err(_) => {
                        return Err(unresolved(format!(
                            "no answer within {} s",
                            RESOLVE_TIMEOUT.as_secs()
                        )));
                    }
                }
            }
        };
        if addrs.is_empty() {
            return Err(CheckError::Unresolved {
                host: remote.host.clone(),
                message: "no address".into(),
            });
        }
        let mut private = false;
        for addr in &addrs {
            let ip = addr.ip();
            if let Some(kind) = non_public(ip) {
                if !self.private_nets.iter().any(|n| n.contains(&ip)) {
                    return Err(refuse(
                        PRIVATE_NETS,
                        format!(
                            "host {} resolves to {ip}, a {kind} address; only public addresses are \
                             reached unless PROVEN_REPO_PRIVATE_NETS allows it",
                            remote.host
                        ),
                    )
                    .into());
                }
                private = true;
            }
        }
        Ok(Checked {
            remote,
            addrs,
            private,
        })
    }

    /// At intake: the local path as it really is (symlinks resolved), checked again, so a
    /// link cannot lead outside the roots or into the data directory.
    pub fn open_local(&self, path: &Path) -> Result<PathBuf, CheckError> {
        let real = std::fs::canonicalize(path).map_err(|e| CheckError::Missing {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        self.check_local(&real)?;
        Ok(real)
    }

    fn check_local(&self, path: &Path) -> Result<PathBuf, Refusal> {
        if self.under_data_dir(path) {
            return Err(refuse(
                DATA_DIR,
                "is under Proven's data directory (its own state, every tenant's mirrors \
                 included), which is never reviewed",
            ));
        }
        match &self.local {
            LocalPaths::Any => Ok(path.to_path_buf()),
            LocalPaths::Under(roots) if roots.is_empty() => Err(refuse(
                ROOTS,
                "a local path or file:// URL is refused: PROVEN_REPO_ROOTS names no directory; \
                 use an https:// or ssh:// URL on PROVEN_REPO_HOSTS",
            )),
            LocalPaths::Under(roots) => {
                let lexical = path.is_absolute()
                    && !path.components().any(|c| matches!(c, Component::ParentDir));
                let under = |root: &Path| {
                    path.starts_with(root)
                        || std::fs::canonicalize(root).is_ok_and(|r| path.starts_with(r))
                };
                if lexical && roots.iter().any(|r| under(r)) {
                    Ok(path.to_path_buf())
                } else {
                    Err(refuse(
                        ROOTS,
                        "a local path must be absolute, without `..`, under a directory of \
                         PROVEN_REPO_ROOTS",
                    ))
                }
            }
        }
    }

    fn under_data_dir(&self, path: &Path) -> bool {
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|d| d.join(path))
                .unwrap_or_else(|_| path.to_path_buf())
        };
        absolute.starts_with(&self.data_dir)
            || std::fs::canonicalize(&self.data_dir).is_ok_and(|d| {
                absolute.starts_with(&d)
                    || std::fs::canonicalize(&absolute).is_ok_and(|p| p.starts_with(&d))
            })
    }

    fn parse_url(&self, spec: &str) -> Result<Remote, Refusal> {
        // Whitespace would be percent-encoded by the parser: refuse it instead.
        if spec.chars().any(char::is_whitespace) {
            return Err(refuse(HOSTS, "a URL with whitespace is refused"));
        }
        let url = url::Url::parse(spec).map_err(|e| refuse(HOSTS, format!("is not a URL: {e}")))?;
        let scheme = if url.scheme() == "https" {
            Scheme::Https
        } else {
            Scheme::Ssh
        };
        if url.password().is_some() || (scheme == Scheme::Https && !url.username().is_empty()) {
            return Err(refuse(
                CREDENTIALS,
                "the URL carries credentials; they are never accepted in a URL (nor stored): \
                 the operator configures them per host with PROVEN_REPO_CREDENTIALS",
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(refuse(HOSTS, "a URL with a query or fragment is refused"));
        }
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_ascii_lowercase(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            None => return Err(refuse(HOSTS, "the URL names no host")),
        };
        let port = url.port().unwrap_or(scheme.default_port());
        let user = Some(url.username().to_string()).filter(|u| !u.is_empty());
        let path = url.path().to_string();
        self.remote(scheme, host, port, user, path)
    }

    /// `[user@]host:path`, as git reads it.
    fn parse_scp(&self, spec: &str) -> Result<Remote, Refusal> {
        let (login, path) = spec.split_once(':').unwrap_or((spec, ""));
        let (user, host) = match login.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_string()), h),
            None => (None, login),
        };
        let path = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("/{path}")
        };
        self.remote(Scheme::Ssh, host.to_ascii_lowercase(), 22, user, path)
    }

    fn remote(
        &self,
        scheme: Scheme,
        host: String,
        port: u16,
        user: Option<String>,
        path: String,
    ) -> Result<Remote, Refusal> {
        // A leading `-` would reach ssh as an option (`-oProxyCommand=…`).
        let word = |s: &str| {
            !s.is_empty()
                && !s.starts_with('-')
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b))
        };
        if !word(&host) {
            return Err(refuse(HOSTS, format!("{host:?} is not a host name")));
        }
        if let Some(u) = &user
            && !word(u)
        {
            return Err(refuse(HOSTS, "the ssh login name is not a plain name"));
        }
        if path.len() < 2 || path.starts_with("/-") {
            return Err(refuse(HOSTS, "the URL names no repository path"));
        }
        let allowed = self.hosts.iter().any(|(h, p)| {
            *h == host
                && match p {
                    Some(p) => *p == port,
                    None => port == scheme.default_port(),
                }
        });
        let remote = Remote {
            scheme,
            host,
            port,
            user,
            path,
        };
        if !allowed {
            return Err(refuse(
                HOSTS,
                format!(
                    "host {} is not on the allow-list of repository hosts",
                    remote.authority()
                ),
            ));
        }
        Ok(remote)
    }
}

/// git's rule: a colon before any slash makes `[user@]host:path` an ssh address.
fn is_scp_like(spec: &str) -> bool {
    match (spec.find(':'), spec.find('/')) {
        (Some(colon), Some(slash)) => colon < slash,
        (Some(_), None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(local: LocalPaths) -> RepoPolicy {
        RepoPolicy {
            hosts: vec![
                ("github.com".into(), None),
                ("git.internal".into(), Some(8443)),
                ("localhost".into(), Some(4443)),
            ],
            local,
            private_nets: vec![],
            data_dir: PathBuf::from("/var/lib/proven"),
        }
    }

    fn refused(p: &RepoPolicy, spec: &str) -> Refusal {
        p.parse(spec).expect_err(spec)
    }

    #[test]
    fn hostile_repositories_are_refused_naming_the_setting() {
        let p = policy(LocalPaths::Under(vec![PathBuf::from("/srv/git")]));
        for (spec, setting, says) in [
            (
                "git://127.0.0.1:6379/x\r\nFLUSHALL\r\n",
                HOSTS,
                "control character (U+000D)",
            ),
            ("git://127.0.0.1:6379/x", HOSTS, "git:// is refused"),
            ("http://github.com/a/b.git", HOSTS, "plain http://"),
            ("ftp://github.com/a/b.git", HOSTS, "scheme \"ftp\""),
            (
                "https://evil.example/a/b.git",
                HOSTS,
                "evil.example is not on the allow-list",
            ),
            (
                "https://github.com:8443/a/b.git",
                HOSTS,
                "github.com:8443 is not on the allow-list",
            ),
            ("https://git.internal/a.git", HOSTS, "not on the allow-list"),
            ("https://github.com/a/b.git?x=1", HOSTS, "query"),
            ("https://github.com/", HOSTS, "no repository path"),
            ("https://github.com/a b", HOSTS, "whitespace"),
            ("ext::sh -c touch% /tmp/pwned", HOSTS, "remote-helper"),
            ("-oProxyCommand=touch:a/b", HOSTS, "not a host name"),
            (
                "git@github.com:-oProxyCommand=x",
                HOSTS,
                "no repository path",
            ),
            ("file:///etc/passwd", ROOTS, "PROVEN_REPO_ROOTS"),
            ("/etc", ROOTS, "under a directory"),
            ("/srv/git/../../etc", ROOTS, "without `..`"),
            ("srv/git/x", ROOTS, "absolute"),
            ("/var/lib/proven/repos/abc/def", DATA_DIR, "data directory"),
            ("file:///var/lib/proven/repos/x", DATA_DIR, "data directory"),
        ] {
            let r = refused(&p, spec);
            assert_eq!(r.setting, setting, "{spec}: {r}");
            assert!(r.to_string().contains(says), "{spec}: {r}");
            assert!(r.to_string().starts_with("repository: "), "{r}");
        }
    }

    #[test]
    fn credentials_in_a_url_are_refused_without_being_repeated() {
        let p = policy(LocalPaths::Any);
        for spec in [
            "https://user:hunter2-secret@github.com/a/b.git",
            "https://hunter2-secret@github.com/a/b.git",
            "ssh://git:hunter2-secret@github.com/a/b.git",
            "ssh://:hunter2-secret@github.com/a/b.git",
        ] {
            let r = refused(&p, spec);
            assert_eq!(r.setting, CREDENTIALS, "{spec}: {r}");
            assert!(!r.to_string().contains("hunter2"), "{r}");
        }
    }

    #[test]
    fn allowed_remotes_parse_into_credential_free_urls() {
        let p = policy(LocalPaths::Any);
        let remote = |spec: &str| match p.parse(spec).expect(spec) {
            Source::Remote(r) => r,
            other => panic!("{spec}: {other:?}"),
        };
        let r = remote("https://GitHub.com/rust-lang/regex.git");
        assert_eq!(
            (r.scheme, r.host.as_str(), r.port, r.url().as_str()),
            (
                Scheme::Https,
                "github.com",
                443,
                "https://github.com/rust-lang/regex.git"
            )
        );
        assert_eq!(
            remote("https://git.internal:8443/team/app.git").url(),
            "https://git.internal:8443/team/app.git"
        );
        let r = remote("git@github.com:rust-lang/regex.git");
        assert_eq!(
            (r.scheme, r.user.as_deref(), r.port, r.url().as_str()),
            (
                Scheme::Ssh,
                Some("git"),
                22,
                "ssh://git@github.com/rust-lang/regex.git"
            )
        );
        assert_eq!(
            remote("ssh://git@github.com/a/b.git").url(),
            "ssh://git@github.com/a/b.git"
        );
        // The CLI reviews local repositories anywhere but the data directory.
        assert_eq!(
            p.parse("some/relative/dir").expect("local"),
            Source::Local(PathBuf::from("some/relative/dir"))
        );
    }

    #[tokio::test]
    async fn a_private_address_is_refused_even_when_its_name_is_allow_listed() {
        let mut p = policy(LocalPaths::Any);
        let e = p
            .check("https://localhost:4443/a.git")
            .await
            .expect_err("loopback");
        assert_eq!(e.setting(), Some(PRIVATE_NETS), "{e}");
        assert!(e.to_string().contains("loopback address"), "{e}");
        p.hosts.push(("169.254.169.254".into(), None));
        let e = p
            .check("https://169.254.169.254/latest/meta-data")
            .await
            .expect_err("link-local");
        assert!(e.to_string().contains("link-local"), "{e}");
        p.private_nets = vec![
            "127.0.0.0/8".parse().expect("net"),
            "::1/128".parse().expect("net"),
        ];
        let Target::Remote(checked) = p
            .check("https://localhost:4443/a.git")
            .await
            .expect("allowed by PROVEN_REPO_PRIVATE_NETS")
        else {
            panic!("a remote");
        };
        assert!(checked.private);
        assert!(
            checked
                .addrs
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 4443)
        );
    }
}
