//! Must-show 3: the code under test can do nothing outside its container — no network,
//! no runner environment, bounded processes, disk, memory, output and time — and no
//! container is left after any of it. Each case runs twice: in a container started for
//! the run (cold) and in one the warm pool started before it (pooled): the pool changes
//! when a container starts, never what it allows.

use std::collections::HashMap;
use std::net::TcpListener;
use std::time::Duration;

use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{CreateContainerOptions, InspectNetworkOptions};
use futures_util::StreamExt;
use proven_change::testing::TestRepo;
use proven_sandbox::{KillReason, Language, Outcome, RunRecord, RunRequest, Sandbox};

use crate::support::{self, assert_container_gone};

fn tree() -> (TestRepo, String) {
    let repo = TestRepo::new();
    repo.write("README.md", "nothing to see\n");
    let commit = repo.commit("a tree");
    (repo, commit)
}

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

async fn run(
    sandbox: &Sandbox,
    command: Vec<String>,
    timeout: Duration,
    pooled: bool,
) -> RunRecord {
    let (repo, commit) = tree();
    let request = RunRequest::new(repo.path(), commit, Language::Python, command)
        .with_timeout(timeout)
        .as_command();
    if pooled {
        assert_eq!(
            sandbox.prewarm(Language::Python).await.expect("prewarm"),
            1,
            "one warm container"
        );
    }
    let record = sandbox.run(&request).await.expect("the run makes a record");
    assert_eq!(
        record.pooled, pooled,
        "the run took the container asked for"
    );
    assert_container_gone(sandbox, &record).await;
    support::assert_no_container_left(sandbox).await;
    record
}

/// A sandbox for one case: with a warm pool of one when `pooled`.
async fn sandbox(pooled: bool, tweak: impl FnOnce(&mut proven_sandbox::SandboxConfig)) -> Sandbox {
    support::sandbox(&[Language::Python], |config| {
        config.pool_size = usize::from(pooled);
        tweak(config);
    })
    .await
}

/// Each case as two tests: `case::cold` and `case::pooled`.
macro_rules! cold_and_pooled {
    ($($case:ident),* $(,)?) => {$(
        mod $case {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn cold() {
                super::$case(false).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn pooled() {
                super::$case(true).await
            }
        }
    )*};
}

cold_and_pooled!(
    the_code_under_test_has_no_network,
    the_runners_environment_does_not_reach_the_code,
    a_fork_bomb_ends_at_the_pids_limit,
    writing_10_gb_fails_at_the_scratch_limit,
    allocating_past_the_memory_limit_is_killed,
    printing_1_gb_is_capped,
    a_test_that_sleeps_forever_is_killed_at_the_timeout,
    the_code_runs_as_a_non_root_user_without_capabilities,
    a_privileged_port_is_refused_to_the_code_as_on_a_ci_runner,
    service_and_protocol_names_resolve_as_on_a_ci_runner,
    a_flood_of_output_is_still_killed_at_the_timeout,
    localhost_names_the_loopback_interface_and_nothing_else_resolves,
);

/// The default bridge's gateway: the host's address as a container on the bridge sees it.
async fn bridge_gateway(sandbox: &Sandbox) -> String {
    let network = sandbox
        .docker()
        .inspect_network("bridge", None::<InspectNetworkOptions>)
        .await
        .expect("the default bridge network");
    let config = network
        .ipam
        .and_then(|ipam| ipam.config)
        .and_then(|configs| configs.into_iter().next())
        .expect("the bridge has an address range");
    if let Some(gateway) = config.gateway {
        return gateway;
    }
    // Docker 20.10 leaves the default bridge's gateway out: it is the subnet's first host.
    let subnet = config.subnet.expect("the bridge has a subnet");
    let base: std::net::Ipv4Addr = subnet
        .split('/')
        .next()
        .and_then(|a| a.parse().ok())
        .expect("an IPv4 subnet");
    std::net::Ipv4Addr::from(u32::from(base) + 1).to_string()
}

const PROBE: &str = r#"
import json, os, socket, sys
results = {}
for name, host, port in [("loopback", "127.0.0.1", int(sys.argv[1])), ("gateway", sys.argv[2], int(sys.argv[1])), ("public", "1.1.1.1", 53)]:
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, port))
        results[name] = "connected"
    except OSError as e:
        results[name] = type(e).__name__
    finally:
        s.close()
print("RESULTS " + json.dumps(results, sort_keys=True))
print("INTERFACES " + json.dumps(sorted(os.listdir("/sys/class/net"))))
"#;

async fn the_code_under_test_has_no_network(pooled: bool) {
    let sandbox = sandbox(pooled, |_| {}).await;
    // A server on the host, on every address: the loopback and the bridge's gateway.
    let listener = TcpListener::bind("0.0.0.0:0").expect("listen");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("address").port().to_string();
    let gateway = bridge_gateway(&sandbox).await;
    let probe = vec![
        "python3".to_string(),
        "-c".to_string(),
        PROBE.to_string(),
        port.clone(),
        gateway.clone(),
    ];

    // Control: the same probe in a container on the default bridge reaches the host, so
    // the sandbox's refusal below is its own doing, not this machine's.
    let control = format!("proven-sbx-control-{}", support::unique());
    let image = sandbox.config().image(Language::Python);
    sandbox
        .docker()
        .create_container(
            Some(CreateContainerOptions {
                name: Some(control.clone()),
                ..Default::default()
            }),
            ContainerCreateBody {
                image: Some(image),
                cmd: Some(probe.clone()),
                labels: Some(HashMap::from([(
                    "proven.sandbox.test".into(),
                    "control".into(),
                )])),
                host_config: Some(HostConfig {
                    network_mode: Some("bridge".into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
        )
        .await
        .expect("create the control container");
    sandbox
        .docker()
        .start_container(&control, None)
        .await
        .expect("start the control container");
    let _ = sandbox.docker().wait_container(&control, None).next().await;
    let logs: Vec<String> = sandbox
        .docker()
        .logs(
            &control,
            Some(bollard::query_parameters::LogsOptions {
                stdout: true,
                stderr: true,
                ..Default::default()
            }),
        )
        .filter_map(|l| async move { l.ok().map(|l| l.to_string()) })
        .collect()
        .await;
    support::remove_container(&sandbox, &control).await;
    let logs = logs.concat();
    assert!(
        logs.contains("\"gateway\": \"connected\""),
        "the control container on the bridge should reach the host: {logs}"
    );
    // Drain the control's connection so only the sandbox's attempts remain.
    while listener.accept().is_ok() {}

    let record = run(&sandbox, probe, Duration::from_secs(60), pooled).await;
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}");
    assert!(
        out.contains(r#"RESULTS {"gateway": "OSError", "loopback": "ConnectionRefusedError", "public": "OSError"}"#),
        "no connection may succeed: {out}"
    );
    assert!(
        out.contains(r#"INTERFACES ["lo"]"#),
        "only a loopback: {out}"
    );
    assert!(
        listener.accept().is_err(),
        "nothing reached the host's server"
    );
}

async fn the_runners_environment_does_not_reach_the_code(pooled: bool) {
    // The runner is a child process given secrets in its environment, as a real runner
    // would have them (tokens, keys); the code under test prints its whole environment.
    let (repo, commit) = tree();
    let canary = format!("canary-{}", support::unique());
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_proven-sandbox"))
        .args(["run", "--lang", "python", "--rev", &commit, "--repo"])
        .arg(repo.path())
        .args(["--plain"])
        .args(pooled.then_some("--warm"))
        .args(["--", "env"])
        .env("PROVEN_TEST_SECRET", &canary)
        .env("GITHUB_TOKEN", &canary)
        .env("AWS_SECRET_ACCESS_KEY", &canary)
        .output()
        .await
        .expect("run proven-sandbox");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let record: RunRecord = serde_json::from_str(&stdout).expect("the record is JSON");
    assert_eq!(
        record.pooled, pooled,
        "the run took the container asked for"
    );
    let env = support::output(&record);
    assert!(!env.contains(&canary), "a secret leaked: {env}");
    let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
    let allowed = [
        "PATH",
        "HOSTNAME",
        "HOME",
        "LANG",
        "PYTHONDONTWRITEBYTECODE",
        "PWD",
        // The image's trust store, named for each language's HTTP client.
        "SSL_CERT_FILE",
        "PIP_CERT",
        "NODE_EXTRA_CA_CERTS",
        "CARGO_HTTP_CAINFO",
    ];
    for name in &names {
        assert!(
            allowed.contains(name),
            "{name} is not the image's or the run's own: {env}"
        );
    }
    assert!(names.contains(&"PATH"));
    let sandbox = sandbox(pooled, |_| {}).await;
    assert_container_gone(&sandbox, &record).await;
}

async fn a_fork_bomb_ends_at_the_pids_limit(pooled: bool) {
    let sandbox = sandbox(pooled, |config| {
        config.limits.pids = 64;
    })
    .await;
    let bomb =
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n";
    let record = run(
        &sandbox,
        vec!["python3".into(), "-c".into(), bomb.into()],
        Duration::from_secs(5),
        pooled,
    )
    .await;
    assert!(record.pids_limit_reached, "{record:#?}");
    assert!(record.timed_out, "the bomb runs until the timeout kills it");
    assert!(matches!(record.outcome, Outcome::EnvironmentError { .. }));
}

/// once_cell's family: a concurrency test starts a thousand threads at once, while the
/// harness runs other tests beside it ("failed to spawn thread: Resource temporarily
/// unavailable" at the old bound of 1024). The default bound leaves room for them; a fork
/// bomb still ends at a bound ([`a_fork_bomb_ends_at_the_pids_limit`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_threads_at_once_run_within_the_default_limits() {
    let sandbox = sandbox(false, |_| {}).await;
    let script = "import threading\nn = 1500\nb = threading.Barrier(n + 1)\nts = [threading.Thread(target=b.wait) for _ in range(n)]\nfor t in ts:\n    t.start()\nb.wait()\nfor t in ts:\n    t.join()\nprint('all', n, 'threads ran at once')\n";
    let record = run(
        &sandbox,
        vec!["python3".into(), "-c".into(), script.into()],
        Duration::from_secs(60),
        false,
    )
    .await;
    let out = support::output(&record);
    assert!(out.contains("all 1500 threads ran at once"), "{out}");
    assert!(!record.pids_limit_reached, "{record:#?}");
}

/// rust-lang/glob's family: a test reads the superuser's home as the runner's user and
/// expects to be refused, as on every Linux system; the images had no /root at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_superusers_home_is_there_and_refuses_the_runs_user() {
    let sandbox = sandbox(false, |_| {}).await;
    let script = "import os\ntry:\n    os.listdir('/root')\n    print('listed')\nexcept PermissionError:\n    print('refused, as on a CI runner')\nprint('home', os.path.isdir('/home'))\n";
    let record = run(
        &sandbox,
        vec!["python3".into(), "-c".into(), script.into()],
        Duration::from_secs(60),
        false,
    )
    .await;
    let out = support::output(&record);
    assert!(out.contains("refused, as on a CI runner"), "{out}");
    assert!(out.contains("home True"), "{out}");
}

/// What a shell script prints in a cold run of the Python image: a fact of the image a CI
/// runner has too.
async fn image_answers(script: &str) -> String {
    let sandbox = sandbox(false, |_| {}).await;
    let record = run(&sandbox, sh(script), Duration::from_secs(60), false).await;
    support::output(&record)
}

/// go-homedir's family: a test asks `getent passwd UID` for the user's home (with HOME
/// unset), and "getent: executable file not found"; suites also unpack their fixtures with
/// the archivers a CI runner has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_commands_of_a_ci_runner_are_there() {
    let out = image_answers(
        "getent passwd \"$(id -u)\" | cut -d: -f6\nfor c in bzip2 xz unzip; do command -v $c >/dev/null && echo \"has $c\"; done",
    )
    .await;
    assert!(
        out.lines().any(|l| l.trim() == "/tmp"),
        "the user's home: {out}"
    );
    for c in ["bzip2", "xz", "unzip"] {
        assert!(out.contains(&format!("has {c}")), "{c}: {out}");
    }
}

/// trio's family: `ctypes.util.find_library` reads the dynamic linker's cache (`ldconfig
/// -p`), which every CI runner has; without it libpthread is not found, and the tests
/// that expect it on Linux fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dynamic_linkers_cache_names_the_systems_libraries() {
    let out = image_answers(
        "python3 -c 'import ctypes.util; print(\"found:\", ctypes.util.find_library(\"pthread\"))'",
    )
    .await;
    assert!(out.contains("found: libpthread.so.0"), "{out}");
}

/// zerolog's family: a test writes to the system journal's socket, which every Ubuntu CI
/// runner has (systemd-journald's), and failed with "no such file or directory"; the run
/// has a sink there that takes each message and keeps nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_journals_socket_takes_a_message() {
    let out = image_answers("python3 -c 'import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); print(\"sent:\", s.sendto(b\"MESSAGE=hello\\n\", \"/run/systemd/journal/socket\"))'").await;
    assert!(out.contains("sent: 14"), "{out}");
}

/// go-sql-driver's family: the machine's time zone is a file a CI runner has
/// (/etc/localtime, UTC); without it Go names its local zone "UTC" instead of "Local" and a
/// DSN written with `loc=Local` reads back otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_machines_time_zone_is_utc_from_its_zone_file() {
    let out = image_answers("test -f /etc/localtime && echo zone-file; date +zone=%Z").await;
    assert!(
        out.contains("zone-file") && out.contains("zone=UTC"),
        "{out}"
    );
}

async fn writing_10_gb_fails_at_the_scratch_limit(pooled: bool) {
    let sandbox = sandbox(pooled, |config| {
        config.limits.scratch_bytes = 128 << 20;
        config.limits.tmp_bytes = 64 << 20;
    })
    .await;
    let script = "for p in /x /usr/x /src/x; do touch $p 2>&1 | sed 's/^/refused: /'; done
dd if=/dev/zero of=/work/big bs=1M count=10240 2>&1; echo work-dd-exit=$?
dd if=/dev/zero of=/tmp/big bs=1M count=10240 2>&1; echo tmp-dd-exit=$?
du -sm /work/big /tmp/big";
    let record = run(&sandbox, sh(script), Duration::from_secs(60), pooled).await;
    let out = support::output(&record);
    assert_eq!(out.matches("Read-only file system").count(), 3, "{out}");
    assert_eq!(out.matches("No space left on device").count(), 2, "{out}");
    assert!(
        out.contains("work-dd-exit=1") && out.contains("tmp-dd-exit=1"),
        "{out}"
    );
    assert!(out.contains("128\t/work/big"), "stopped at 128 MiB: {out}");
    assert!(out.contains("64\t/tmp/big"), "stopped at 64 MiB: {out}");
    assert!(!record.timed_out, "fails fast at the limit");
}

async fn allocating_past_the_memory_limit_is_killed(pooled: bool) {
    let sandbox = sandbox(pooled, |config| {
        config.limits.memory_bytes = 128 << 20;
    })
    .await;
    let hog = "blocks = []\nwhile True:\n    blocks.append(bytearray(16 << 20))\n";
    let record = run(
        &sandbox,
        vec!["python3".into(), "-c".into(), hog.into()],
        Duration::from_secs(60),
        pooled,
    )
    .await;
    assert_eq!(record.killed, Some(KillReason::OutOfMemory), "{record:#?}");
    assert!(matches!(record.outcome, Outcome::EnvironmentError { .. }));
}

/// A package's whole suite gets the suite's memory (`suite_memory_bytes`) and CPUs
/// (`suite_cpus`), a test run one test's: the same 300 MiB that kill a test run at 128 MiB are a suite's to use. A
/// warm container has one test's limits, so a suite starts its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_suite_gets_the_suites_memory_and_a_test_one_tests() {
    let sandbox = sandbox(true, |config| {
        config.limits.memory_bytes = 128 << 20;
        config.suite_memory_bytes = 512 << 20;
    })
    .await;
    let (repo, commit) = tree();
    let script = "b = bytearray(300 << 20)\nb[::4096] = b'x' * len(b[::4096])\nprint('held', len(b) >> 20)\n";
    let request = RunRequest::new(
        repo.path(),
        commit,
        Language::Python,
        ["python3", "-c", script],
    )
    .with_timeout(Duration::from_secs(60))
    .as_command();
    let test = sandbox.run(&request).await.expect("a record");
    assert_eq!(test.killed, Some(KillReason::OutOfMemory), "{test:#?}");
    assert_eq!(test.limits.memory_bytes, 128 << 20);
    assert_eq!(
        sandbox.prewarm(Language::Python).await.expect("prewarm"),
        1,
        "one warm container"
    );
    let suite = sandbox
        .run(&request.clone().as_whole_suite())
        .await
        .expect("a record");
    assert_eq!(suite.outcome, Outcome::Passed, "{suite:#?}");
    assert!(support::output(&suite).contains("held 300"), "{suite:#?}");
    assert_eq!(suite.limits.memory_bytes, 512 << 20, "the record says so");
    let host = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    assert_eq!(
        suite.limits.cpus,
        host.clamp(1.0, 2.0),
        "a CI runner's CPUs"
    );
    assert_eq!(test.limits.cpus, 1.0);
    assert!(!suite.pooled, "a warm container has one test's memory");
    assert_container_gone(&sandbox, &suite).await;
    sandbox.drain_pool().await;
    support::assert_no_container_left(&sandbox).await;
}

async fn printing_1_gb_is_capped(pooled: bool) {
    let sandbox = sandbox(pooled, |config| {
        config.output.kill_after_bytes = 32 << 20;
    })
    .await;
    let record = run(
        &sandbox,
        sh("yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 1073741824"),
        Duration::from_secs(60),
        pooled,
    )
    .await;
    let output = &record.output;
    assert_eq!(record.killed, Some(KillReason::OutputLimit), "{record:#?}");
    assert!(
        output.bytes > 32 << 20 && output.bytes < 1 << 30,
        "{}",
        output.bytes
    );
    assert!(output.head.len() <= 64 << 10 && output.tail.len() <= 64 << 10);
    assert!(
        output
            .head
            .starts_with("0123456789abcdefghijklmnopqrstuvwxyz\n")
    );
    assert!(output.truncated);
    assert!(
        !record.timed_out,
        "stopped by the output limit, not the clock"
    );
    assert!(matches!(record.outcome, Outcome::EnvironmentError { .. }));
}

async fn a_test_that_sleeps_forever_is_killed_at_the_timeout(pooled: bool) {
    let sandbox = sandbox(pooled, |_| {}).await;
    let record = run(
        &sandbox,
        vec!["sleep".into(), "infinity".into()],
        Duration::from_secs(2),
        pooled,
    )
    .await;
    assert!(record.timed_out);
    assert_eq!(record.killed, Some(KillReason::Timeout));
    assert!(
        (2_000..12_000).contains(&record.duration_ms),
        "killed at 2 s: {} ms",
        record.duration_ms
    );
    assert_eq!(record.exit_code, Some(137), "SIGKILL");
    assert!(matches!(record.outcome, Outcome::EnvironmentError { .. }));
}

async fn the_code_runs_as_a_non_root_user_without_capabilities(pooled: bool) {
    let sandbox = sandbox(pooled, |_| {}).await;
    let record = run(
        &sandbox,
        sh("id -u; id -g; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status"),
        Duration::from_secs(30),
        pooled,
    )
    .await;
    let out = support::output(&record);
    assert!(out.starts_with("10001\n10001\n"), "{out}");
    assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
    assert!(out.contains("CapBnd:\t0000000000000000"), "{out}");
    assert!(out.contains("NoNewPrivs:\t1"), "{out}");
}

const PRIVILEGED_PORT: &str = r#"
import socket
s = socket.socket()
try:
    s.bind(("127.0.0.1", 1))
    print("BOUND 1")
except PermissionError:
    print("REFUSED 1")
s.close()
"#;

/// A CI runner's user cannot bind a port below 1024, and projects test that (tornado's
/// `test_source_port_fail` expects a connect from source port 1 to fail unless it runs as
/// root); Docker lets any user of a container bind them (`ip_unprivileged_port_start` 0)
/// unless told otherwise.
async fn a_privileged_port_is_refused_to_the_code_as_on_a_ci_runner(pooled: bool) {
    let sandbox = sandbox(pooled, |_| {}).await;
    let record = run(
        &sandbox,
        vec!["python3".into(), "-c".into(), PRIVILEGED_PORT.into()],
        Duration::from_secs(30),
        pooled,
    )
    .await;
    let out = support::output(&record);
    assert!(out.contains("REFUSED 1"), "{out}");
}

const NAMES: &str = r#"
import socket
print("SERVICE http", socket.getservbyname("http", "tcp"))
print("PROTOCOL tcp", socket.getprotobyname("tcp"))
print("ADDRESS", socket.getaddrinfo("127.0.0.1", "https", type=socket.SOCK_STREAM)[0][4])
"#;

/// A CI runner has netbase's /etc/services and /etc/protocols: a test that names a port by
/// its service (waitress' `listen="127.0.0.1:http"`) or looks a protocol up by name runs.
async fn service_and_protocol_names_resolve_as_on_a_ci_runner(pooled: bool) {
    let sandbox = sandbox(pooled, |_| {}).await;
    let record = run(
        &sandbox,
        vec!["python3".into(), "-c".into(), NAMES.into()],
        Duration::from_secs(30),
        pooled,
    )
    .await;
    let out = support::output(&record);
    assert!(out.contains("SERVICE http 80"), "{out}");
    assert!(out.contains("PROTOCOL tcp 6"), "{out}");
    assert!(out.contains("ADDRESS ('127.0.0.1', 443)"), "{out}");
}

async fn a_flood_of_output_is_still_killed_at_the_timeout(pooled: bool) {
    // An output limit out of reach: only the clock can stop this run, and reading the
    // flood must not keep the runner from looking at the clock.
    let sandbox = sandbox(pooled, |config| {
        config.output.kill_after_bytes = u64::MAX;
    })
    .await;
    let record = run(&sandbox, vec!["yes".into()], Duration::from_secs(2), pooled).await;
    assert_eq!(
        record.killed,
        Some(KillReason::Timeout),
        "{}",
        record.output.bytes
    );
    assert!(record.duration_ms < 12_000, "{} ms", record.duration_ms);
    assert!(record.output.bytes > 1 << 20, "the flood was read");
    assert!(record.output.head.len() <= 64 << 10 && record.output.tail.len() <= 64 << 10);
}

const LOCALHOST: &str = r#"
import socket, threading
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
port = server.getsockname()[1]
threading.Thread(target=lambda: server.accept()[0].sendall(b"hello"), daemon=True).start()
client = socket.create_connection(("localhost", port), timeout=5)
print("LOCALHOST " + client.recv(5).decode())
own = socket.socket()
own.bind((socket.gethostname(), 0))
own.listen(1)
threading.Thread(target=lambda: own.accept()[0].sendall(b"hello"), daemon=True).start()
client = socket.create_connection((socket.gethostname(), own.getsockname()[1]), timeout=5)
print("OWN NAME " + client.recv(5).decode() + " at " + socket.gethostbyname(socket.gethostname()))
try:
    socket.getaddrinfo("pypi.org", 443)
    print("PUBLIC resolved")
except OSError as e:
    print("PUBLIC " + type(e).__name__)
"#;

/// Issue 16: a suite that starts a test server on the loopback interface and reaches it
/// as `localhost` (psf/requests) runs, as does one that serves on the machine's own name
/// (a CI runner's resolves); a public name still resolves to nothing.
async fn localhost_names_the_loopback_interface_and_nothing_else_resolves(pooled: bool) {
    let sandbox = sandbox(pooled, |_| {}).await;
    let record = run(
        &sandbox,
        vec!["python3".into(), "-c".into(), LOCALHOST.into()],
        Duration::from_secs(60),
        pooled,
    )
    .await;
    let output = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{output}");
    assert!(output.contains("LOCALHOST hello"), "{output}");
    assert!(output.contains("OWN NAME hello at 127.0.1.1"), "{output}");
    assert!(output.contains("PUBLIC gaierror"), "{output}");
}
