//! The egress proxy of a preparation: the only way out of a preparation container.
//!
//! A preparation (pip, npm, cargo, go reading files the change controls, setup.py running)
//! needs the package registries and nothing else. Its container has no network interface
//! at all (`network_mode: none`); inside it, a forwarder (our own binary, mounted
//! read-only) listens on 127.0.0.1 and passes each connection through a Unix socket to
//! this proxy on the runner, which lets through only the hosts on the operator's allow-list
//! (`PROVEN_SANDBOX_REGISTRIES`): HTTPS tunnels (`CONNECT host:port`) and plain HTTP
//! requests in absolute form. Everything else — another host, a private service, the
//! runner's own ports — gets 403, and is named in the preparation's record. No host
//! address is reachable from the container, so nothing can route around the proxy.
//!
//! A proxy ecosystem crate would bring a server framework for two verbs; this is the small
//! HTTP/1 head parser and a byte splice, written here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

pub use proven_sandbox_plan::registries::{AllowList, DEFAULT_REGISTRIES, authority};

/// The request head a client may send before its request line and headers end.
const MAX_HEAD: usize = 16 * 1024;
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// A tunnel with no byte either way for this long is closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// What went through the proxy during one preparation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressLog {
    /// `host:port` reached.
    pub reached: BTreeSet<String>,
    /// `host:port` refused (not on the allow-list), or requests that did not read.
    pub refused: BTreeSet<String>,
    /// Bytes carried both ways.
    pub bytes: u64,
}

struct Shared {
    allow: AllowList,
    log: Mutex<EgressLog>,
    bytes: AtomicU64,
    byte_cap: u64,
}

/// A running proxy: its socket, and the task serving it (stopped on drop).
pub(crate) struct EgressProxy {
    #[cfg_attr(not(test), allow(dead_code))]
    socket: PathBuf,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl EgressProxy {
    /// Listens on `dir/proxy.sock` (the directory is mounted into the container).
    pub async fn start(
        dir: &Path,
        allow: AllowList,
        byte_cap: u64,
    ) -> std::io::Result<EgressProxy> {
        use std::os::unix::fs::PermissionsExt;
        let socket = dir.join("proxy.sock");
        let _ = std::fs::remove_file(&socket);
        let listener = UnixListener::bind(&socket)?;
        // The container's user is not the runner's.
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777))?;
        let shared = Arc::new(Shared {
            allow,
            log: Mutex::new(EgressLog::default()),
            bytes: AtomicU64::new(0),
            byte_cap,
        });
        let serving = shared.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    break;
                };
                let shared = serving.clone();
                tokio::spawn(async move { serve(stream, shared).await });
            }
        });
        Ok(EgressProxy {
            socket,
            shared,
            task,
        })
    }

    #[cfg(test)]
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Stops serving and returns what went through.
    pub fn stop(self) -> EgressLog {
        self.task.abort();
        let mut log = self
            .shared
            .log
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default();
        log.bytes = self.shared.bytes.load(Ordering::Relaxed);
        log
    }
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn note(shared: &Shared, reached: bool, what: String) {
    if let Ok(mut log) = shared.log.lock() {
        let set = if reached {
            &mut log.reached
        } else {
            &mut log.refused
        };
        if set.len() < 200 {
            set.insert(what);
        }
    }
}

async fn respond(stream: &mut UnixStream, status: &str, body: &str) {
    let _ = stream
        .write_all(
            format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await;
}

/// The request head: up to the blank line, and whatever of the body came with it.
async fn read_head(stream: &mut UnixStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return String::from_utf8(buf).ok().map(|h| (h, rest));
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The request as the origin expects it: origin-form, one request per connection, without
/// the proxy's own headers.
fn origin_form<'a>(method: &str, path: &str, headers: impl Iterator<Item = &'a str>) -> String {
    let mut out = format!("{method} {path} HTTP/1.1\r\n");
    for line in headers.filter(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if name == "proxy-connection" || name == "connection" || name == "proxy-authorization" {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("connection: close\r\n\r\n");
    out
}

async fn serve(mut client: UnixStream, shared: Arc<Shared>) {
    let Ok(Some((head, early))) = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await
    else {
        note(&shared, false, "a request that did not read".into());
        return;
    };
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (method, target) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let (host, port, forward) = if method == "CONNECT" {
        match authority(target, 443) {
            Some((h, p)) => (h, p, None),
            None => {
                respond(&mut client, "400 Bad Request", "not an authority\n").await;
                return;
            }
        }
    } else if let Some(rest) = target.strip_prefix("http://") {
        let (auth, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        let Some((h, p)) = authority(auth, 80) else {
            respond(&mut client, "400 Bad Request", "not an absolute URL\n").await;
            return;
        };
        (h, p, Some(origin_form(method, path, lines)))
    } else {
        note(&shared, false, format!("{method} {target}"));
        respond(
            &mut client,
            "405 Method Not Allowed",
            "only CONNECT and absolute http:// requests\n",
        )
        .await;
        return;
    };
    let shown = format!("{host}:{port}");
    let Some(address) = shared.allow.target(&host, port) else {
        note(&shared, false, shown.clone());
        respond(
            &mut client,
            "403 Forbidden",
            &format!("Proven: {shown} is not one of the operator's registries (PROVEN_SANDBOX_REGISTRIES)\n"),
        )
        .await;
        return;
    };
    let upstream =
        tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address.as_str())).await;
    let mut upstream = match upstream {
        Ok(Ok(s)) => s,
        _ => {
            note(&shared, false, format!("{shown} (unreachable)"));
            respond(
                &mut client,
                "502 Bad Gateway",
                &format!("{shown} did not answer\n"),
            )
            .await;
            return;
        }
    };
    note(&shared, true, shown);
    match forward {
        None => {
            if client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
                .is_err()
            {
                return;
            }
        }
        Some(request) => {
            if upstream.write_all(request.as_bytes()).await.is_err() {
                return;
            }
        }
    }
    if !early.is_empty() && upstream.write_all(&early).await.is_err() {
        return;
    }
    splice(client, upstream, &shared).await;
}

/// Copies both ways until either side ends, the tunnel idles, or the preparation's bytes
/// reach their cap.
async fn splice(client: UnixStream, upstream: TcpStream, shared: &Shared) {
    let (mut cr, mut cw) = client.into_split();
    let (mut ur, mut uw) = upstream.into_split();
    let up = async {
        let mut buf = vec![0u8; 32 * 1024];
        loop {
            let n = match tokio::time::timeout(IDLE_TIMEOUT, cr.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => n,
                _ => break,
            };
            if shared.bytes.fetch_add(n as u64, Ordering::Relaxed) + n as u64 > shared.byte_cap {
                break;
            }
            if uw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = uw.shutdown().await;
    };
    let down = async {
        let mut buf = vec![0u8; 32 * 1024];
        loop {
            let n = match tokio::time::timeout(IDLE_TIMEOUT, ur.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => n,
                _ => break,
            };
            if shared.bytes.fetch_add(n as u64, Ordering::Relaxed) + n as u64 > shared.byte_cap {
                break;
            }
            if cw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = cw.shutdown().await;
    };
    tokio::join!(up, down);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_allowed_hosts_are_reached() {
        // An upstream on loopback, allowed on its port; anything else is refused by name.
        let upstream = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = upstream.local_addr().expect("addr").port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = upstream.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    let _ = s.read(&mut buf).await;
                    let _ = s
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello")
                        .await;
                });
            }
        });
        let dir = tempfile::tempdir().expect("tempdir");
        let proxy = EgressProxy::start(
            dir.path(),
            AllowList::parse(&[format!("127.0.0.1:{port}")]).expect("allow"),
            1 << 20,
        )
        .await
        .expect("start");
        let ask = |request: String| {
            let socket = proxy.socket().to_path_buf();
            async move {
                let mut s = UnixStream::connect(socket).await.expect("connect");
                s.write_all(request.as_bytes()).await.expect("write");
                let mut out = String::new();
                let _ = s.read_to_string(&mut out).await;
                out
            }
        };
        let ok = ask(format!(
            "GET http://127.0.0.1:{port}/simple/six/ HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\r\n"
        ))
        .await;
        assert!(ok.ends_with("hello"), "{ok}");
        let refused = ask("CONNECT 127.0.0.1:6379 HTTP/1.1\r\nhost: x\r\n\r\n".into()).await;
        assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
        assert!(refused.contains("127.0.0.1:6379 is not one of the operator's registries"));
        let other = ask("GET /x HTTP/1.1\r\n\r\n".into()).await;
        assert!(other.starts_with("HTTP/1.1 405"), "{other}");
        let log = proxy.stop();
        assert!(log.reached.contains(&format!("127.0.0.1:{port}")));
        assert!(log.refused.contains("127.0.0.1:6379"));
        assert!(log.bytes > 0);
    }
}
