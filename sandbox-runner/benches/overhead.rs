//! Per-run overhead of the sandbox against its peers, measured in the same run (medians of
//! 50 after 2 warm-up runs each), all running `true` in the Python image:
//!
//! - a bare process (fork/exec of /bin/true): the floor every overhead is counted from;
//! - `docker run --rm IMAGE true` (the Docker CLI, defaults);
//! - `docker run --rm` with the sandbox's own flags (no network, read-only root, tmpfs,
//!   cap-drop ALL, no-new-privileges, limits, user, init, the tree bind-mounted, no log);
//! - `docker exec` into a started container (the floor of any warm pool);
//! - `Sandbox::run`, cold (pool size 0: tree from git objects, container, record, removal);
//! - `Sandbox::run`, pooled (pool size 1: the same, in a warm container taken once and
//!   removed after; the pool refills between runs, untimed, as it does between a real
//!   runner's runs).
//!
//! It prints every median and the ratios: the pooled run's added overhead (over the bare
//! process) and the pooled run against `docker run --rm`.
//!
//! `cargo bench -p proven-sandbox --bench overhead` (needs Docker and the Python image).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proven_change::testing::TestRepo;
use proven_sandbox::{Language, Limits, Outcome, RunRequest, Sandbox, SandboxConfig};

const RUNS: usize = 50;
const WARMUP: usize = 2;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn measure(name: &str, mut f: impl FnMut()) -> Duration {
    measure_with(name, || {}, |()| f())
}

/// Like `measure`, with an untimed `setup` before each timed run.
fn measure_with<T>(name: &str, mut setup: impl FnMut() -> T, mut f: impl FnMut(T)) -> Duration {
    for _ in 0..WARMUP {
        let t = setup();
        f(t);
    }
    let samples: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = setup();
            let start = Instant::now();
            f(t);
            start.elapsed()
        })
        .collect();
    let m = median(samples.clone());
    let (min, max) = (
        samples.iter().min().copied().unwrap_or_default(),
        samples.iter().max().copied().unwrap_or_default(),
    );
    println!(
        "{name:<38} median {:>9.2} ms   (min {:>8.2}, max {:>8.2})",
        ms(m),
        ms(min),
        ms(max)
    );
    m
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn docker(args: &[&str]) {
    let status = Command::new("docker")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run the docker CLI");
    assert!(status.success(), "docker {args:?} failed");
}

/// `docker run --rm` with the sandbox's own flags (no network, read-only root, the limits,
/// the entry script): what a cold run costs Docker alone.
fn measure_hardened(image: &str, limits: &Limits, mount: &str) -> Duration {
    let memory = limits.memory_bytes.to_string();
    let pids = limits.pids.to_string();
    let cpus = limits.cpus.to_string();
    let scratch = format!(
        "/work:rw,exec,nosuid,nodev,size={},uid=10001,gid=10001",
        limits.scratch_bytes
    );
    let tmp = format!(
        "/tmp:rw,exec,nosuid,nodev,size={},mode=1777",
        limits.tmp_bytes
    );

    measure("docker run --rm, sandbox flags", || {
        docker(&[
            "run",
            "--rm",
            "--network",
            "none",
            "--read-only",
            "--tmpfs",
            &scratch,
            "--tmpfs",
            &tmp,
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--pids-limit",
            &pids,
            "--memory",
            &memory,
            "--memory-swap",
            &memory,
            "--cpus",
            &cpus,
            "--user",
            "10001:10001",
            "--init",
            "--log-driver",
            "none",
            "-v",
            mount,
            image,
            "/usr/local/bin/proven-entry",
            "true",
        ])
    })
}

/// `docker exec` into a started container: the floor of a pooled run.
fn measure_exec(image: &str) -> Duration {
    let warm = format!("proven-sbx-bench-warm-{}", std::process::id());
    docker(&[
        "run",
        "-d",
        "--name",
        &warm,
        "--label",
        "proven.sandbox.bench=1",
        "--network",
        "none",
        "--read-only",
        "--init",
        image,
        "sleep",
        "infinity",
    ]);
    let exec = measure("docker exec into a started container", || {
        docker(&["exec", &warm, "true"])
    });
    docker(&["rm", "-f", &warm]);
    exec
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let sandbox = match runtime.block_on(Sandbox::connect(SandboxConfig::default())) {
        Ok(sandbox) => sandbox,
        Err(e) => {
            eprintln!("the benchmark needs Docker: {e}");
            std::process::exit(1);
        }
    };
    let image = sandbox.config().image(Language::Python);
    let repo = TestRepo::new();
    repo.write("README.md", "benchmark tree\n");
    let commit = repo.commit("tree");
    let tree = tempfile::tempdir().expect("tree directory");
    let mount = format!("{}:/src:ro", tree.path().display());
    println!("per-run overhead, `true` in {image}, median of {RUNS}\n");
    let bare = measure("bare process (/bin/true)", || {
        let status = Command::new("/bin/true").status().expect("true");
        assert!(status.success());
    });
    let plain = measure("docker run --rm", || {
        docker(&["run", "--rm", &image, "true"])
    });
    let hardened = measure_hardened(&image, &sandbox.config().limits, &mount);
    let exec = measure_exec(&image);

    let request = RunRequest::new(repo.path(), &commit, Language::Python, ["true"]).as_command();
    let cold_sandbox = runtime
        .block_on(Sandbox::connect(SandboxConfig {
            pool_size: 0,
            ..SandboxConfig::default()
        }))
        .expect("connect");
    let cold = measure("Sandbox::run, cold", || {
        let record = runtime
            .block_on(cold_sandbox.run(&request))
            .expect("sandbox run");
        assert_eq!(record.outcome, Outcome::Passed);
        assert!(!record.pooled);
    });
    let pooled_sandbox = runtime
        .block_on(Sandbox::connect(SandboxConfig {
            pool_size: 1,
            ..SandboxConfig::default()
        }))
        .expect("connect");
    let pooled = measure_with(
        "Sandbox::run, pooled",
        || {
            // Untimed: the pool refills between runs, as between a runner's runs.
            runtime
                .block_on(pooled_sandbox.prewarm(Language::Python))
                .expect("warm the pool");
        },
        |()| {
            let record = runtime
                .block_on(pooled_sandbox.run(&request))
                .expect("sandbox run");
            assert_eq!(record.outcome, Outcome::Passed);
            assert!(record.pooled, "the run took a warm container");
        },
    );
    runtime.block_on(pooled_sandbox.drain_pool());

    println!();
    let ratio = |name: &str, a: Duration, b: Duration| {
        println!("{name:<52} {:>6.2}x", ms(a) / ms(b));
    };
    let added = |name: &str, a: Duration| {
        println!("{name:<52} {:>6.1} ms", ms(a) - ms(bare));
    };
    added("added overhead, pooled run (over the bare process)", pooled);
    added("added overhead, cold run", cold);
    added("added overhead, docker run --rm", plain);
    added("added overhead, docker exec (the pool's floor)", exec);
    ratio("pooled run / docker run --rm", pooled, plain);
    ratio("pooled run / docker run --rm, same flags", pooled, hardened);
    ratio("pooled run / cold run", pooled, cold);
    ratio("cold run / docker run --rm, same flags", cold, hardened);
    ratio("pooled run / docker exec", pooled, exec);
}
