//! The only road from git to a remote: a proxy on loopback that connects to the addresses
//! the policy checked, and to nothing else, under the fetch's limits.
//!
//! git is told to use it (`http.proxy` for https, the URL's host and port for ssh), so git
//! never resolves the remote's name itself: there is no DNS-rebinding gap between the check
//! and the connection. The proxy also holds the limits git has no setting for: a connect
//! timeout, a read timeout (the longest silence from the server), and one byte cap across
//! every connection of a fetch.
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
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((client, _)) = accepted else { continue };
                        connections.spawn(relay(client, addrs.clone(), mode.clone(), limits, shared.clone()));
                    }
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        Ok(Proxy { addr, state, task })
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

async fn relay(
    mut client: TcpStream,
    addrs: Vec<SocketAddr>,
    mode: Mode,
    limits: Limits,
    state: Arc<State>,
) {
    let mut early = Vec::new();
    if let Mode::Connect { authority } = &mode {
        let Ok((asked, rest)) = read_connect(&mut client, limits.read_timeout).await else {
            return;
        };
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

/// Reads curl's `CONNECT host:port HTTP/1.1` request; returns the target and any bytes
/// after the request head.
async fn read_connect(client: &mut TcpStream, timeout: Duration) -> Result<(String, Vec<u8>), ()> {
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
    let text = String::from_utf8_lossy(&head[..end]);
    let mut words = text.lines().next().unwrap_or_default().split_whitespace();
    match (words.next(), words.next()) {
        (Some("CONNECT"), Some(target)) => Ok((target.to_string(), head[end..].to_vec())),
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
        let mut client = TcpStream::connect(proxy.addr).await.expect("connect");
        client
            .write_all(b"CONNECT metadata.internal:80 HTTP/1.1\r\nHost: x\r\n\r\n")
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
                format!("CONNECT GIT.internal:{} HTTP/1.1\r\n\r\nhello", addr.port()).as_bytes(),
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
}
