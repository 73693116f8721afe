//! The accept loop: HTTP/1.1 over hyper with a header read timeout, a connection limit and
//! a limit per client address.
//!
//! Not `axum::serve`: it gives hyper no timer, so hyper's header read timeout never runs and
//! a client trickling its headers holds its connection forever; nor does it bound
//! connections. This is the same loop with both (hyper's own timeout, a semaphore of
//! connections as mini-redis bounds its own) and hyper-util's graceful shutdown. One
//! address may hold at most `max_per_address` connections: a further one is closed as soon
//! as it is accepted, before it takes one of the shared slots, so a client opening a
//! thousand connections and sending half their headers leaves the others' slots free.
//! HTTP/2 is not served: the API's clients are HTTP/1.1 (a proxy in front may speak h2).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How the listener treats connections.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// A connection whose request headers are not all in this long after the server began
    /// waiting for them (a new connection, or a kept-alive one between requests) is closed.
    pub header_timeout: Duration,
    /// Connections served at once; more wait in the kernel's listen backlog.
    pub max_connections: usize,
    /// Connections one client address may hold at once; more are closed when accepted.
    pub max_per_address: usize,
}

/// Open connections per client address.
#[derive(Default)]
struct Addresses {
    open: std::sync::Mutex<HashMap<IpAddr, usize>>,
}

/// One connection's place in its address's count, given back when dropped.
struct AddressSlot {
    ip: IpAddr,
    table: Arc<Addresses>,
}

/// The client an address counts for: an IPv4 address (an IPv4-mapped IPv6 one included)
/// is itself; an IPv6 address is its /64, since one subscriber is given a whole /64 and
/// could otherwise open its connections from as many addresses as it likes.
fn client(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(std::net::Ipv6Addr::from(bits))
            }
        },
    }
}

impl Addresses {
    /// A slot for one more connection from `ip` (counted by [`client`]), or None when it
    /// holds `max` already.
    fn take(table: &Arc<Addresses>, ip: IpAddr, max: usize) -> Option<AddressSlot> {
        let ip = client(ip);
        let mut open = table.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(ip).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(AddressSlot {
            ip,
            table: table.clone(),
        })
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut open = self.table.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then lets requests in flight
/// finish (for at most `grace`).
pub async fn serve(
    router: Router,
    listener: TcpListener,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let addresses = Arc::new(Addresses::default());
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off, never spin or stop.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let Some(slot) = Addresses::take(&addresses, peer.ip(), limits.max_per_address.max(1))
        else {
            // Closed at once (the shared slot goes back with `permit`): the client holds
            // its own connections, never anyone else's.
            tracing::debug!(peer = %peer.ip(), "connection refused: the address holds its limit");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout);
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let watched = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = watched.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(slot);
            drop(permit);
        });
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(grace) => {
            tracing::warn!("requests still in flight after the shutdown grace period");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holds_at_most_its_limit_and_a_closed_connection_gives_its_place_back() {
        let table = Arc::new(Addresses::default());
        let (one, two): (IpAddr, IpAddr) = (
            "10.0.0.1".parse().expect("ip"),
            "10.0.0.2".parse().expect("ip"),
        );
        let held: Vec<AddressSlot> = (0..3)
            .map(|_| Addresses::take(&table, one, 3).expect("within the limit"))
            .collect();
        assert!(
            Addresses::take(&table, one, 3).is_none(),
            "a fourth is refused"
        );
        assert!(
            Addresses::take(&table, two, 3).is_some(),
            "another address is not held back"
        );
        drop(held);
        assert!(Addresses::take(&table, one, 3).is_some());
        assert!(
            table.open.lock().expect("lock").is_empty(),
            "no entry is left for addresses with no connection"
        );
    }

    #[test]
    fn an_ipv6_client_is_counted_by_its_64_and_a_mapped_ipv4_as_itself() {
        let table = Arc::new(Addresses::default());
        let ip = |s: &str| -> IpAddr { s.parse().expect("ip") };
        let held: Vec<AddressSlot> = ["2001:db8:1:2::1", "2001:db8:1:2::ffff"]
            .iter()
            .map(|a| Addresses::take(&table, ip(a), 2).expect("within the limit"))
            .collect();
        assert!(
            Addresses::take(&table, ip("2001:db8:1:2:abcd::9"), 2).is_none(),
            "another address of the same /64 is the same client"
        );
        assert!(Addresses::take(&table, ip("2001:db8:1:3::1"), 2).is_some());
        let v4: Vec<AddressSlot> = (0..2)
            .map(|_| Addresses::take(&table, ip("192.0.2.7"), 2).expect("v4"))
            .collect();
        assert!(
            Addresses::take(&table, ip("::ffff:192.0.2.7"), 2).is_none(),
            "an IPv4-mapped address is that IPv4 client"
        );
        drop((held, v4));
    }
}
