//! Servers for tests, on loopback: a smart-HTTP git server over TLS with its own CA (the
//! `openssl` command makes the CA and certificate; Python's standard library serves
//! `git http-backend`), and tarpits that accept and then stall or trickle.
//!
//! Test code: failures to set up panic with what is missing.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const SERVER: &str = include_str!("git_https_server.py");

/// A git server over https, trusted only through [`GitHttpsServer::ca_file`].
pub struct GitHttpsServer {
    dir: tempfile::TempDir,
    child: Child,
    pub port: u16,
}

impl Drop for GitHttpsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?} ({e}); install it"));
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl GitHttpsServer {
    /// Serves the repositories published with [`GitHttpsServer::publish`] at
    /// `https://NAME:PORT/NAME.git` for each of `names` (and 127.0.0.1). With `auth`
    /// (`user`, `secret`) every request needs that Basic authentication.
    pub fn start(names: &[&str], auth: Option<(&str, &str)>) -> GitHttpsServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::create_dir_all(d.join("repos")).expect("repos dir");
        let sans: Vec<String> = names
            .iter()
            .map(|n| format!("DNS:{n}"))
            .chain(["IP:127.0.0.1".to_string()])
            .collect();
        std::fs::write(
            d.join("server.ext"),
            format!(
                "subjectAltName={}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
                sans.join(",")
            ),
        )
        .expect("extensions");
        let openssl = |args: &[&str]| {
            run(Command::new("openssl").current_dir(d).args(args), "openssl");
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=Proven test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ]);
        openssl(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=proven-test-server",
        ]);
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ]);
        std::fs::write(d.join("server.py"), SERVER).expect("server script");
        let auth = auth.map(|(u, s)| format!("{u}:{s}")).unwrap_or_default();
        let port_file = d.join("port");
        let child = Command::new("python3")
            .arg(d.join("server.py"))
            .arg(d.join("repos"))
            .arg(d.join("server.pem"))
            .arg(d.join("server.key"))
            .arg(auth)
            .arg(&port_file)
            .arg(d.join("requests.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run python3 ({e}); install it"));
        let mut server = GitHttpsServer {
            dir,
            child,
            port: 0,
        };
        let started = Instant::now();
        server.port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().expect("port");
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("the git https server exited: {status}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the git https server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        server
    }

    /// The CA bundle (PEM) that verifies this server.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// Serves `repo` (a working repository) as `NAME.git`.
    pub fn publish(&self, name: &str, repo: &Path) {
        let target = self.dir.path().join("repos").join(format!("{name}.git"));
        run(
            Command::new("git")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .args(["clone", "--quiet", "--bare"])
                .arg(repo)
                .arg(&target),
            "git clone --bare",
        );
    }

    /// One line per request served: method, path and `ok` or `unauthorised`.
    pub fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("requests.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// What a tarpit does with a connection it accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tarpit {
    /// Never sends a byte.
    Stall,
    /// Sends the header of a 16 KiB TLS handshake record, then one byte every 200 ms:
    /// never silent for long, never done.
    Trickle,
}

/// A server on loopback that accepts connections and never completes one.
pub struct TarpitServer {
    pub port: u16,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl TarpitServer {
    pub fn start(mode: Tarpit) -> TarpitServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind tarpit");
        let port = listener.local_addr().expect("addr").port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, stopped) = (accepted.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::Relaxed);
                let stopped = stopped.clone();
                std::thread::spawn(move || {
                    let started = Instant::now();
                    if mode == Tarpit::Trickle {
                        let _ = stream.write_all(&[0x16, 0x03, 0x03, 0x40, 0x00]);
                    }
                    while !stopped.load(Ordering::Relaxed)
                        && started.elapsed() < Duration::from_secs(600)
                    {
                        std::thread::sleep(Duration::from_millis(200));
                        if mode == Tarpit::Trickle && stream.write_all(b"x").is_err() {
                            return;
                        }
                    }
                });
            }
        });
        TarpitServer {
            port,
            accepted,
            stop,
        }
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for TarpitServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop so it sees the stop.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}
