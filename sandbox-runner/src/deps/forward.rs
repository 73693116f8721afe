//! The forwarder inside a preparation container: the container has no network interface,
//! so this process (our own binary, mounted read-only) listens on the container's
//! loopback and carries each connection through the mounted Unix socket to the runner's
//! egress proxy ([`super::proxy`]), then runs the preparation command and exits with its
//! code. The package managers are pointed at it with `HTTPS_PROXY`.

use std::path::PathBuf;

use tokio::net::{TcpListener, UnixStream};

/// Runs `command` while forwarding `127.0.0.1:port` to `socket`; its exit code (128 plus
/// the signal when it was killed by one).
pub async fn forward(socket: PathBuf, port: u16, command: Vec<String>) -> std::io::Result<i32> {
    let Some((program, args)) = command.split_first() else {
        return Err(std::io::Error::other("no command to run"));
    };
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let accept = tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let socket = socket.clone();
            tokio::spawn(async move {
                if let Ok(mut unix) = UnixStream::connect(&socket).await {
                    let _ = tokio::io::copy_bidirectional(&mut tcp, &mut unix).await;
                }
            });
        }
    });
    let status = tokio::process::Command::new(program)
        .args(args)
        .kill_on_drop(true)
        .status()
        .await;
    accept.abort();
    let status = status?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
