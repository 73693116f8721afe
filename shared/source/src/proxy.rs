//! The only road from git to a remote: a proxy on loopback that connects to the addresses
//! the policy checked, and to nothing else, under the fetch's limits.
//!
//! git is told to use it (`http.proxy` for https, the URL's host and port for ssh), so git
//! never resolves the remote's name itself: there is no DNS-rebinding gap between the check
//! and the connection. The proxy also holds the limits git has no setting for: a connect
//! timeout, a read timeout (the longest silence from the server), and one byte cap across
//! every connection of a fetch.
//!
//! It serves the one git process of its fetch and no other local user: an https fetch's
//! proxy holds a random secret of its own, handed to git in its environment (the proxy
//! URL's userinfo, sent preemptively as `Proxy-Authorization: Basic`), and refuses (407)
//! every CONNECT without it, before it connects anywhere; an ssh fetch's proxy (raw TCP,
//! where ssh can send nothing of the sort) accepts only connections whose socket belongs to
//! this process's own user (the kernel's socket table, `/proc/net/tcp`).
//!
//! Written here rather than taken from a crate: it is a small HTTP CONNECT (or plain TCP)
//! relay whose whole point is those limits and the single allowed target, which general
//! proxies do not offer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// How git's connections arrive.
#[derive(Debug, Clone)]
pub(crate) enum Mode {
    /// curl's `CONNECT host:port` (https): only `authority` is accepted.
    Connect { authority: String },
    /// ssh connects straight to the proxy.
    Raw,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub max_bytes: u64,
}

/// Why the proxy cut a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cut {
    ConnectTimeout,
    Unreachable(String),
    ReadTimeout,
    TooLarge,
    WrongTarget(String),
}

#[derive(Default)]
struct State {
    received: AtomicU64,
    cut: std::sync::Mutex<Option<Cut>>,
    connected: std::sync::Mutex<Option<SocketAddr>>,
    over_cap: Notify,
}

impl State {
    fn record(&self, cut: Cut) {
        let too_large = cut == Cut::TooLarge;
        if let Ok(mut slot) = self.cut.lock() {
            // A cap reached outranks anything recorded before it.
            if slot.is_none() || too_large {
                *slot = Some(cut);
            }
        }
        if too_large {
            self.over_cap.notify_waiters();
            self.over_cap.notify_one();
        }
    }
}

pub(crate) struct Proxy {
    pub addr: SocketAddr,
    /// The secret git must present (https): the password of the proxy URL's userinfo.
    pub secret: String,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // Aborting the accept loop drops its set of connections, which aborts them too.
        self.task.abort();
    }
}

impl Proxy {
    pub async fn start(
        addrs: Vec<SocketAddr>,
        mode: Mode,
        limits: Limits,
    ) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State::default());
        let shared = state.clone();
        let secret = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let expected = proxy_authorization(&secret);
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((client, peer)) = accepted else { continue };
                        if matches!(mode, Mode::Raw) && !own_socket(peer, addr) {
                            tracing::warn!(%peer, "the fetch proxy refused a connection of another user");
                            continue;
                        }
                        let gate = Gate { expected: expected.clone() };
                        connections.spawn(relay(client, addrs.clone(), (mode.clone(), gate), limits, shared.clone()));
                    }
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        Ok(Proxy {
            addr,
            secret,
            state,
            task,
        })
    }

    pub fn received(&self) -> u64 {
        self.state.received.load(Ordering::Relaxed)
    }

    pub fn cut(&self) -> Option<Cut> {
        self.state.cut.lock().ok().and_then(|c| c.clone())
    }

    /// The checked address the last connection reached.
    pub fn connected(&self) -> Option<SocketAddr> {
        self.state.connected.lock().ok().and_then(|c| *c)
    }

    /// Resolves once the byte cap is passed.
    pub async fn over_cap(&self) {
        loop {
            let notified = self.state.over_cap.notified();
            if self.cut() == Some(Cut::TooLarge) {
                return;
            }
            notified.await;
        }
    }
}

/// The user name git presents to the proxy (the secret is the password).
pub(crate) const PROXY_USER: &str = "git";

/// The `Proxy-Authorization` value the fetch's git sends.
fn proxy_authorization(secret: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{PROXY_USER}:{secret}"))
    )
}

/// What a CONNECT must carry.
struct Gate {
    expected: String,
}

impl Gate {
    /// The request head carries the fetch's secret (compared in constant time).
    fn admits(&self, head: &str) -> bool {
        let given = head.lines().skip(1).find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("proxy-authorization")
                .then(|| value.trim().to_string())
        });
        given.is_some_and(|g| {
            g.len() == self.expected.len()
                && g.bytes()
                    .zip(self.expected.bytes())
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                    == 0
        })
    }
}

/// Whether the connection from `peer` to the proxy at `local` was opened by a socket of
/// this process's own user: the kernel's table of TCP sockets names each socket's owner.
/// Anything it cannot tell (no such line, no `/proc`) is refused.
fn own_socket(peer: SocketAddr, local: SocketAddr) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(me) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
        return false;
    };
    let hex = |a: SocketAddr| match a {
        SocketAddr::V4(v4) => Some(format!(
            "{:08X}:{:04X}",
            u32::from_le_bytes(v4.ip().octets()),
            v4.port()
        )),
        SocketAddr::V6(_) => None,
    };
    let (Some(from), Some(to)) = (hex(peer), hex(local)) else {
        return false;
    };
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return false;
    };
    table.lines().skip(1).any(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        f.len() > 7 && f[1] == from && f[2] == to && f[7].parse::<u32>() == Ok(me)
    })
}

async fn relay(
    mut client: TcpStream,
    addrs: Vec<SocketAddr>,
    (mode, gate): (Mode, Gate),
    limits: Limits,
    state: Arc<State>,
) {
    let mut early = Vec::new();
    if let Mode::Connect { authority } = &mode {
        let Ok((asked, head, rest)) = read_connect(&mut client, limits.read_timeout).await else {
            return;
        };
        // Refused before anything is connected; not a cut of the fetch (whoever knocked
        // is not its git).
        if !gate.admits(&head) {
            tracing::warn!("the fetch proxy refused a CONNECT without the fetch's secret");
            let _ = client
                .write_all(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\n\
                      Proxy-Authenticate: Basic realm=\"proven-fetch\"\r\nContent-Length: 0\r\n\r\n",
                )
                .await;
            return;
        }
        if !asked.eq_ignore_ascii_case(authority) {
            state.record(Cut::WrongTarget(asked));
            let _ = client
                .write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                .await;
            return;
        }
        early = rest;
    }
    let upstream = match connect(&addrs, limits.connect_timeout).await {
        Ok((stream, addr)) => {
            if let Ok(mut c) = state.connected.lock() {
                *c = Some(addr);
            }
            stream
        }
        Err(cut) => {
            state.record(cut);
            if matches!(mode, Mode::Connect { .. }) {
                let _ = client
                    .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                    .await;
            }
            return;
        }
    };
    if matches!(mode, Mode::Connect { .. })
        && client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
            .is_err()
    {
        return;
    }
    let (mut client_read, mut client_write) = client.into_split();
    let (mut up_read, mut up_write) = upstream.into_split();
    let up = async {
        if !early.is_empty() && up_write.write_all(&early).await.is_err() {
            return;
        }
        let _ = tokio::io::copy(&mut client_read, &mut up_write).await;
        let _ = up_write.shutdown().await;
    };
    let down = async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match tokio::time::timeout(limits.read_timeout, up_read.read(&mut buf)).await {
                Err(_) => {
                    state.record(Cut::ReadTimeout);
                    return;
                }
                Ok(Err(_) | Ok(0)) => return,
                Ok(Ok(n)) => n,
            };
            let total = state.received.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
            if total > limits.max_bytes {
                state.record(Cut::TooLarge);
                return;
            }
            if client_write.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    };
    // The connection lives as long as the server side does (or until it is cut); git
    // closing its side only ends the way up.
    tokio::pin!(up, down);
    let mut up_done = false;
    loop {
        tokio::select! {
            _ = &mut down => return,
            _ = &mut up, if !up_done => up_done = true,
        }
    }
}

/// Reads curl's `CONNECT host:port HTTP/1.1` request; returns the target, the request head
/// and any bytes after it.
async fn read_connect(
    client: &mut TcpStream,
    timeout: Duration,
) -> Result<(String, String, Vec<u8>), ()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let end = loop {
        if let Some(i) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if head.len() > 8 * 1024 {
            return Err(());
        }
        match tokio::time::timeout(timeout, client.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => head.extend_from_slice(&buf[..n]),
            _ => return Err(()),
        }
    };
    let text = String::from_utf8_lossy(&head[..end]).into_owned();
    let mut words = text.lines().next().unwrap_or_default().split_whitespace();
    match (words.next(), words.next().map(str::to_string)) {
        (Some("CONNECT"), Some(target)) => Ok((target, text.clone(), head[end..].to_vec())),
        _ => Err(()),
    }
}

/// Connects to the first checked address that answers in time.
async fn connect(addrs: &[SocketAddr], timeout: Duration) -> Result<(TcpStream, SocketAddr), Cut> {
    let mut last = Cut::Unreachable("no address".into());
    for addr in addrs {
        match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok((stream, *addr)),
            Ok(Err(e)) => last = Cut::Unreachable(format!("{addr}: {e}")),
            Err(_) => last = Cut::ConnectTimeout,
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            connect_timeout: Duration::from_secs(2),
            read_timeout: Duration::from_secs(2),
            max_bytes: 1 << 20,
        }
    }

    #[tokio::test]
    async fn a_connect_to_any_other_target_is_refused() {
        let target = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let addr = target.local_addr().expect("addr");
        let proxy = Proxy::start(
            vec![addr],
            Mode::Connect {
                authority: format!("git.internal:{}", addr.port()),
            },
            limits(),
        )
        .await
        .expect("proxy");
        let auth = proxy_authorization(&proxy.secret);
        let mut client = TcpStream::connect(proxy.addr).await.expect("connect");
        client
            .write_all(
                format!("CONNECT metadata.internal:80 HTTP/1.1\r\nHost: x\r\nProxy-Authorization: {auth}\r\n\r\n")
                    .as_bytes(),
            )
            .await
            .expect("write");
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.expect("read");
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert_eq!(
            proxy.cut(),
            Some(Cut::WrongTarget("metadata.internal:80".into()))
        );
        assert_eq!(proxy.connected(), None, "nothing was reached");

        // The checked target is relayed to the checked address.
        let mut client = TcpStream::connect(proxy.addr).await.expect("connect");
        client
            .write_all(
                format!(
                    "CONNECT GIT.internal:{} HTTP/1.1\r\nProxy-Authorization: {auth}\r\n\r\nhello",
                    addr.port()
                )
                .as_bytes(),
            )
            .await
            .expect("write");
        let (mut upstream, _) = target.accept().await.expect("relayed");
        let mut hello = [0u8; 5];
        upstream
            .read_exact(&mut hello)
            .await
            .expect("bytes relayed");
        assert_eq!(&hello, b"hello");
        assert_eq!(proxy.connected(), Some(addr));
    }

    #[tokio::test]
    async fn a_connect_without_the_fetchs_secret_is_refused_before_anything_is_reached() {
        let target = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let addr = target.local_addr().expect("addr");
        let authority = format!("git.internal:{}", addr.port());
        let proxy = Proxy::start(
            vec![addr],
            Mode::Connect {
                authority: authority.clone(),
            },
            limits(),
        )
        .await
        .expect("proxy");
        let other = Proxy::start(vec![addr], Mode::Raw, limits())
            .await
            .expect("another fetch's proxy");
        assert_ne!(proxy.secret, other.secret, "a secret per fetch");
        for auth in [
            String::new(),
            format!(
                "Proxy-Authorization: {}\r\n",
                proxy_authorization("guessed")
            ),
            format!(
                "Proxy-Authorization: {}\r\n",
                proxy_authorization(&other.secret)
            ),
            format!("Proxy-Authorization: Basic {}\r\n", proxy.secret),
        ] {
            let mut client = TcpStream::connect(proxy.addr).await.expect("connect");
            client
                .write_all(format!("CONNECT {authority} HTTP/1.1\r\n{auth}\r\nhello").as_bytes())
                .await
                .expect("write");
            let mut answer = String::new();
            client.read_to_string(&mut answer).await.expect("read");
            assert!(answer.starts_with("HTTP/1.1 407"), "{auth}: {answer}");
        }
        assert_eq!(proxy.connected(), None, "nothing was reached");
        assert_eq!(
            proxy.cut(),
            None,
            "a stranger's knock does not fail the fetch"
        );
        let reached = tokio::time::timeout(Duration::from_millis(200), target.accept()).await;
        assert!(reached.is_err(), "the target saw no connection");
    }

    #[tokio::test]
    async fn a_raw_connection_of_this_user_is_relayed() {
        // The other side of `own_socket` (another user's socket) needs a second user; here
        // the table lookup itself is held: this process's own connection is found as its.
        let target = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let addr = target.local_addr().expect("addr");
        let proxy = Proxy::start(vec![addr], Mode::Raw, limits())
            .await
            .expect("proxy");
        let mut client = TcpStream::connect(proxy.addr).await.expect("connect");
        assert!(own_socket(client.local_addr().expect("local"), proxy.addr));
        client.write_all(b"SSH-2.0-x\r\n").await.expect("write");
        let (mut upstream, _) = tokio::time::timeout(Duration::from_secs(5), target.accept())
            .await
            .expect("relayed in time")
            .expect("relayed");
        let mut hello = [0u8; 9];
        upstream
            .read_exact(&mut hello)
            .await
            .expect("bytes relayed");
        assert_eq!(&hello, b"SSH-2.0-x");
        // A peer the table does not hold (no such socket) is not this user's.
        assert!(!own_socket(
            "127.0.0.1:1".parse().expect("addr"),
            proxy.addr
        ));
    }
}
