//! The accept loop: HTTP/1.1 over hyper with a header read timeout and a connection limit.
//!
//! Not `axum::serve`: it gives hyper no timer, so hyper's header read timeout never runs and
//! a client trickling its headers holds its connection forever; nor does it bound
//! connections. This is the same loop with both (hyper's own timeout, a semaphore of
//! connections as mini-redis bounds its own) and hyper-util's graceful shutdown.
//! HTTP/2 is not served: the API's clients are HTTP/1.1 (a proxy in front may speak h2).

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
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let (stream, _peer) = tokio::select! {
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
