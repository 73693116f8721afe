//! The container of one run: created hardened, attached before it starts (no output is
//! missed), watched until it exits or is killed (timeout, output limit), inspected, and
//! removed — including when the caller stops waiting (a drop guard removes it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::container::LogOutput;
use bollard::errors::Error as DockerError;
use bollard::models::{ContainerCreateBody, HostConfig, HostConfigLogConfig};
use bollard::query_parameters::{
    AttachContainerOptions, CreateContainerOptions, KillContainerOptions, RemoveContainerOptions,
};
use futures_util::StreamExt;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::sync::watch;

use crate::record::{KillReason, OutputRecord};
use crate::{Language, Limits, OutputLimits, SandboxError};
use proven_sandbox_plan::output::Capture;

/// Every sandbox container carries this label (value "1"): the sweep looks for it.
pub const LABEL: &str = "proven.sandbox";
/// The run key the container belongs to.
pub const LABEL_KEY: &str = "proven.sandbox.key";
/// The runner process that owns it (see [`crate::sweep::RunnerIdentity`]).
pub const LABEL_RUNNER: &str = "proven.sandbox.runner";
/// Unix seconds after which no live runner still waits for it.
pub const LABEL_DEADLINE: &str = "proven.sandbox.deadline";
/// Container names are this prefix and the run key.
pub const NAME_PREFIX: &str = "proven-sbx-";

/// Where the tree is mounted (read-only) and where the run works (a tmpfs copy of it).
const SRC: &str = "/src";
const WORK: &str = "/work";
const ENTRY: &str = "/usr/local/bin/proven-entry";
/// After a kill or an exit, how long output may still arrive before the runner stops
/// reading: the stream normally ends at once, this only bounds a stuck daemon.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(10);
/// After a kill, how long the exit may take to be reported before the runner stops waiting.
const KILL_GRACE: Duration = Duration::from_secs(30);
/// How often the pids limit's event counter is read while the container runs.
const PIDS_POLL: Duration = Duration::from_millis(100);
/// A deadline label leaves this much beyond the run's own timeout before a sweep may
/// remove the container of a runner it cannot see (another host).
pub(crate) const DEADLINE_GRACE: Duration = Duration::from_secs(120);

/// A host directory (or file) bound into a container.
#[derive(Debug, Clone)]
pub(crate) struct Mount {
    pub host: PathBuf,
    pub target: String,
    pub writable: bool,
}

impl Mount {
    pub fn read_only(host: &Path, target: &str) -> Mount {
        Mount {
            host: host.to_path_buf(),
            target: target.to_string(),
            writable: false,
        }
    }
}

/// Everything one container needs.
pub(crate) struct ContainerSpec<'a> {
    pub name: String,
    pub key: String,
    pub runner: String,
    pub language: Language,
    pub image: String,
    pub command: Vec<String>,
    pub env: Vec<String>,
    /// The tree, read-only at /src (the entry script copies it into /work).
    pub src: &'a Path,
    /// Anything else bound in: prepared dependencies (read-only at /deps in a test run), a
    /// preparation's output and its proxy socket.
    pub mounts: Vec<Mount>,
    pub limits: Limits,
    pub user: (u32, u32),
    pub timeout: Duration,
    pub output: OutputLimits,
}

/// How a container ran.
pub(crate) struct Execution {
    pub image_id: String,
    pub started_at: String,
    pub duration: Duration,
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub killed: Option<KillReason>,
    pub pids_limit_reached: bool,
    pub output: OutputRecord,
    pub markers: Vec<&'static str>,
    /// The test runner's counts, when it printed a summary.
    pub tests: Option<crate::tally::TestCounts>,
    /// The tests it named as failing or erroring.
    pub failing: Vec<String>,
    /// The output stream broke before the container ended: part of the output is missing.
    pub stream_broken: bool,
    /// The runner printed its summary and its process had not ended
    /// `quiet_after_summary_ms` after: stopped, the summary its outcome.
    pub stopped_after_summary: bool,
}

/// The container's host name.
const HOSTNAME: &str = "sandbox";

/// The names a run resolves with no network: `localhost` on the loopback interface (a
/// test server the suite starts and reaches by name). Docker writes no /etc/hosts into a
/// container whose network is disabled, and glibc without one fails `localhost` as a
/// temporary DNS failure (psf/requests' own test server was unreachable). The machine's
/// own name resolves too, to a loopback address as Debian's installer writes it: it does
/// on a CI runner, and tests ask for it (`gethostbyname(gethostname())`, a server bound to
/// `gethostname()`).
const HOSTS: &str =
    "127.0.0.1\tlocalhost\n127.0.1.1\tsandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n";

/// Where the /etc/hosts a container mounts read-only is kept: beside its tree (a run's
/// directory; the work directory for a warm container).
fn hosts_path(src: &Path) -> PathBuf {
    src.parent().unwrap_or(src).join(".proven-hosts")
}

/// Writes [`HOSTS`] at [`hosts_path`] unless it is there already (renamed into place, so a
/// container never mounts half of it).
fn write_hosts(src: &Path) -> Result<(), SandboxError> {
    use std::io::Write as _;
    let path = hosts_path(src);
    if std::fs::read(&path).is_ok_and(|b| b == HOSTS.as_bytes()) {
        return Ok(());
    }
    let dir = path.parent().unwrap_or(src);
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(SandboxError::io("create", dir))?;
    file.write_all(HOSTS.as_bytes())
        .map_err(SandboxError::io("write", &path))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644))
            .map_err(SandboxError::io("set permissions of", &path))?;
    }
    file.persist(&path)
        .map_err(|e| SandboxError::io("write", &path)(e.error))?;
    Ok(())
}

/// The container name of a run key.
pub fn container_name(key: &str) -> String {
    format!("{NAME_PREFIX}{key}")
}

pub(crate) fn create_body(spec: &ContainerSpec<'_>, deadline_unix: i64) -> ContainerCreateBody {
    let (uid, gid) = spec.user;
    let limits = spec.limits;
    let mut binds = vec![
        format!("{}:{SRC}:ro", spec.src.display()),
        format!("{}:/etc/hosts:ro", hosts_path(spec.src).display()),
    ];
    for m in &spec.mounts {
        binds.push(format!(
            "{}:{}:{}",
            m.host.display(),
            m.target,
            if m.writable { "rw" } else { "ro" }
        ));
    }
    // Docker keeps an existing directory's mode for a tmpfs and ignores `mode=` there
    // (uid/gid do apply); tmpfs is noexec unless told: builds and tests execute from both.
    let tmpfs = HashMap::from([
        (
            WORK.to_string(),
            format!(
                "rw,exec,nosuid,nodev,size={},uid={uid},gid={gid},mode=0755",
                limits.scratch_bytes
            ),
        ),
        (
            "/tmp".to_string(),
            format!("rw,exec,nosuid,nodev,size={},mode=1777", limits.tmp_bytes),
        ),
    ]);
    let labels = HashMap::from([
        (LABEL.to_string(), "1".to_string()),
        (LABEL_KEY.to_string(), spec.key.clone()),
        (LABEL_RUNNER.to_string(), spec.runner.clone()),
        (LABEL_DEADLINE.to_string(), deadline_unix.to_string()),
        (
            "proven.sandbox.language".to_string(),
            spec.language.as_str().to_string(),
        ),
    ]);
    let mut cmd = vec![ENTRY.to_string()];
    cmd.extend(spec.command.iter().cloned());
    // Only these variables, on top of the image's: nothing of the runner's environment.
    let mut env = vec!["HOME=/tmp".to_string()];
    env.extend(spec.env.iter().cloned());
    ContainerCreateBody {
        image: Some(spec.image.clone()),
        cmd: Some(cmd),
        entrypoint: Some(Vec::new()),
        env: Some(env),
        user: Some(format!("{uid}:{gid}")),
        working_dir: Some(WORK.to_string()),
        hostname: Some(HOSTNAME.to_string()),
        labels: Some(labels),
        network_disabled: Some(true),
        attach_stdin: Some(false),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        open_stdin: Some(false),
        tty: Some(false),
        host_config: Some(HostConfig {
            network_mode: Some("none".to_string()),
            readonly_rootfs: Some(true),
            cap_drop: Some(vec!["ALL".to_string()]),
            security_opt: Some(vec!["no-new-privileges".to_string()]),
            pids_limit: Some(limits.pids),
            memory: Some(limits.memory_bytes),
            // Equal to memory: no swap, so the memory limit is the limit.
            memory_swap: Some(limits.memory_bytes),
            nano_cpus: Some((limits.cpus * 1e9) as i64),
            tmpfs: Some(tmpfs),
            binds: Some(binds),
            ipc_mode: Some("private".to_string()),
            // Ports below 1024 are a privileged user's, as on a CI runner: Docker gives them
            // to any user of a container (`ip_unprivileged_port_start` 0), and a project's
            // tests that expect a bind or a connect from one to be refused (tornado's
            // `test_source_port_fail`) then fail in the sandbox alone.
            sysctls: Some(HashMap::from([(
                "net.ipv4.ip_unprivileged_port_start".to_string(),
                "1024".to_string(),
            )])),
            // An init reaps orphans, as a test runner expects of PID 1.
            init: Some(true),
            // Output is read from the attach stream; a log driver would copy all of it
            // (a 1 GB print) to the host's disk.
            log_config: Some(HostConfigLogConfig {
                typ: Some("none".to_string()),
                config: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Creates and starts a container that idles for a later exec (the warm pool's); its id.
/// Its command runs as given, without the entry script: the run's exec runs that, once,
/// with the tree in place, exactly as a cold container would.
pub(crate) async fn launch(
    docker: &Docker,
    spec: &ContainerSpec<'_>,
) -> Result<String, SandboxError> {
    let deadline_unix = OffsetDateTime::now_utc().unix_timestamp()
        + (spec.timeout + DEADLINE_GRACE).as_secs() as i64;
    write_hosts(spec.src)?;
    let mut body = create_body(spec, deadline_unix);
    body.cmd = Some(spec.command.clone());
    let options = CreateContainerOptions {
        name: Some(spec.name.clone()),
        ..Default::default()
    };
    let created = docker
        .create_container(Some(options), body)
        .await
        .map_err(|e| match e {
            DockerError::DockerResponseServerError {
                status_code: 404, ..
            } => SandboxError::ImageMissing {
                language: spec.language,
                image: spec.image.clone(),
            },
            e => docker_error("create", &spec.name)(e),
        })?;
    if let Err(e) = docker.start_container(&spec.name, None).await {
        let _ = remove(docker, &spec.name).await;
        return Err(docker_error("start", &spec.name)(e));
    }
    Ok(created.id)
}

/// Runs one container to its end and removes it.
pub(crate) async fn execute(
    docker: &Docker,
    spec: ContainerSpec<'_>,
) -> Result<Execution, SandboxError> {
    let name = spec.name.clone();
    // A container of the same key is an orphan of an earlier attempt (a crashed runner):
    // it goes before this attempt starts, so a redelivered job never runs twice at once.
    if remove(docker, &name).await? {
        metrics::counter!(crate::metrics::SWEPT_TOTAL).increment(1);
        tracing::warn!(container = %name, "removed the container of an earlier attempt");
    }
    let deadline_unix = OffsetDateTime::now_utc().unix_timestamp()
        + (spec.timeout + DEADLINE_GRACE).as_secs() as i64;
    write_hosts(spec.src)?;
    let body = create_body(&spec, deadline_unix);
    let options = CreateContainerOptions {
        name: Some(name.clone()),
        ..Default::default()
    };
    let created = match docker
        .create_container(Some(options.clone()), body.clone())
        .await
    {
        // Another attempt created it between the removal and now, or another runner's
        // sweep is still removing the predecessor: remove, wait until the name is free,
        // retry once.
        Err(DockerError::DockerResponseServerError {
            status_code: 409, ..
        }) => {
            remove(docker, &name).await?;
            wait_gone(docker, &name, NAME_FREED_WITHIN).await;
            docker.create_container(Some(options), body).await
        }
        other => other,
    };
    let created = created.map_err(|e| match e {
        DockerError::DockerResponseServerError {
            status_code: 404, ..
        } => SandboxError::ImageMissing {
            language: spec.language,
            image: spec.image.clone(),
        },
        e => docker_error("create", &name)(e),
    })?;
    let mut guard = Removal {
        docker: docker.clone(),
        name: name.clone(),
        armed: true,
    };
    let result = drive(docker, &spec, &created.id).await;
    let removed = remove(docker, &name).await;
    guard.armed = false;
    let execution = result?;
    if let Err(e) = removed {
        // The record stands; the next sweep removes what is left.
        tracing::warn!(container = %name, error = %e, "could not remove a finished container");
    }
    Ok(execution)
}

async fn drive(
    docker: &Docker,
    spec: &ContainerSpec<'_>,
    id: &str,
) -> Result<Execution, SandboxError> {
    let name = spec.name.as_str();
    let attach = docker
        .attach_container(
            name,
            Some(AttachContainerOptions {
                stream: true,
                stdout: true,
                stderr: true,
                // Attached before the start, so nothing is missed; and the log driver is
                // `none`, which cannot replay logs.
                logs: false,
                ..Default::default()
            }),
        )
        .await
        .map_err(docker_error("attach to", name))?;
    let output = attach.output;
    let started_at = OffsetDateTime::now_utc();
    let started = Instant::now();
    docker
        .start_container(name, None)
        .await
        .map_err(docker_error("start", name))?;
    let wait = Box::pin(docker.wait_container(name, None));
    let watched = Watched {
        name,
        id,
        language: spec.language,
        timeout: spec.timeout,
        output: spec.output,
        started,
        started_at,
    };
    let pumped = pump(docker, &watched, output, Some(wait)).await?;
    finish(docker, &watched, pumped, None).await
}

/// What the output loop watches: one container's process (its main one, or an exec).
struct Watched<'a> {
    name: &'a str,
    id: &'a str,
    language: Language,
    timeout: Duration,
    output: OutputLimits,
    started: Instant,
    started_at: OffsetDateTime,
}

type OutputStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<LogOutput, DockerError>> + Send>>;
type WaitStream<'a> = std::pin::Pin<
    Box<
        dyn futures_util::Stream<Item = Result<bollard::models::ContainerWaitResponse, DockerError>>
            + Send
            + 'a,
    >,
>;

/// How the output loop ended.
struct Pumped {
    capture: Capture,
    exit: Option<i64>,
    exited_at: Option<tokio::time::Instant>,
    killed: Option<KillReason>,
    timed_out: bool,
    stream_broken: bool,
    pids_limit_reached: bool,
    /// Stopped after the runner's summary: whether that summary said a test failed.
    after_summary: Option<bool>,
}

/// Reads the output to its end (or until the container exits, with `wait`; without one the
/// end of the output is the end of the process, as for an exec), killing the container at
/// the timeout or past the output limit while still draining it.
async fn pump(
    docker: &Docker,
    w: &Watched<'_>,
    mut output: OutputStream,
    mut wait: Option<WaitStream<'_>>,
) -> Result<Pumped, SandboxError> {
    let name = w.name;
    let mut capture = Capture::new(
        w.output.head_bytes,
        w.output.tail_bytes,
        crate::record::markers(w.language),
        w.language,
    );
    let deadline = tokio::time::Instant::from_std(w.started + w.timeout);
    let (stop_pids, pids) = watch_pids(w.id);
    let ends_with_output = wait.is_none();
    let mut exit: Option<i64> = None;
    let mut exited_at: Option<tokio::time::Instant> = None;
    // Bounds the loop once the container exited or was killed, should the daemon never
    // close the stream or answer the wait.
    let mut give_up_at: Option<tokio::time::Instant> = None;
    // Kills run beside the loop: the output must keep draining while Docker kills, or
    // the container's full stdout pipe blocks the kill and the wait (measured).
    let mut killing: Option<tokio::task::JoinHandle<Result<(), SandboxError>>> = None;
    let mut output_open = true;
    let mut stream_broken = false;
    let mut killed: Option<KillReason> = None;
    let mut timed_out = false;
    // When the output ends with the runner's summary: when to stop a process still running
    // by then, and what the summary said.
    let quiet = Duration::from_millis(w.output.quiet_after_summary_ms);
    let mut summary_quiet_until: Option<(tokio::time::Instant, bool)> = None;
    let mut after_summary: Option<bool> = None;
    loop {
        if !output_open && (exit.is_some() || ends_with_output) {
            break;
        }
        // Not biased: a flood of output must not starve the timer or the wait.
        tokio::select! {
            frame = output.next(), if output_open => match frame {
                Some(Ok(LogOutput::StdOut { message } | LogOutput::StdErr { message } | LogOutput::Console { message })) => {
                    capture.push(&message);
                    summary_quiet_until = capture
                        .final_summary()
                        .map(|failed| (tokio::time::Instant::now() + quiet, failed));
                    // Past the limit the runner kills but keeps reading: a reader that
                    // stops leaves kill and wait blocked on a full pipe.
                    if killed.is_none() && capture.total() > w.output.kill_after_bytes {
                        killed = Some(KillReason::OutputLimit);
                        killing = Some(spawn_kill(docker, name));
                        give_up_at = Some(tokio::time::Instant::now() + KILL_GRACE);
                    } else if killed.is_none() && tokio::time::Instant::now() >= deadline {
                        killed = Some(KillReason::Timeout);
                        timed_out = true;
                        killing = Some(spawn_kill(docker, name));
                        give_up_at = Some(tokio::time::Instant::now() + KILL_GRACE);
                    }
                }
                Some(Ok(LogOutput::StdIn { .. })) => {}
                Some(Err(e)) => {
                    tracing::warn!(container = %name, error = %e, "the output stream broke");
                    output_open = false;
                    stream_broken = true;
                }
                None => {
                    output_open = false;
                    if ends_with_output {
                        exited_at = Some(tokio::time::Instant::now());
                    }
                }
            },
            status = next_wait(&mut wait), if exit.is_none() && !ends_with_output => {
                exit = Some(exit_code(status, name)?);
                let now = tokio::time::Instant::now();
                exited_at = Some(now);
                give_up_at = Some(now + DRAIN_AFTER_EXIT);
            },
            _ = sleep_until_opt(summary_quiet_until.map(|(at, _)| at)), if summary_quiet_until.is_some() && killed.is_none() && exit.is_none() && after_summary.is_none() => {
                // The tests are over by the runner's own word; what still runs is what they
                // left behind. Stopped, and the summary stands as the outcome.
                after_summary = summary_quiet_until.map(|(_, failed)| failed);
                killing = Some(spawn_kill(docker, name));
                give_up_at = Some(tokio::time::Instant::now() + KILL_GRACE);
            },
            _ = tokio::time::sleep_until(deadline), if killed.is_none() && exit.is_none() => {
                killed = Some(KillReason::Timeout);
                timed_out = true;
                killing = Some(spawn_kill(docker, name));
                give_up_at = Some(tokio::time::Instant::now() + KILL_GRACE);
            },
            done = join_kill(&mut killing), if killing.is_some() => {
                killing = None;
                done?;
            },
            _ = sleep_until_opt(give_up_at), if give_up_at.is_some() => {
                tracing::warn!(container = %name, "no end of output or exit after the kill or exit; stopped waiting");
                // Output not read to its end is not the whole output.
                stream_broken |= output_open;
                break;
            },
        }
    }
    drop(output);
    let _ = stop_pids.send(true);
    let pids_limit_reached = pids.await.unwrap_or(false);
    Ok(Pumped {
        capture,
        exit,
        exited_at,
        killed,
        timed_out,
        stream_broken,
        pids_limit_reached,
        after_summary,
    })
}

/// The exit code a container's wait reported.
fn exit_code(
    status: Option<Result<bollard::models::ContainerWaitResponse, DockerError>>,
    name: &str,
) -> Result<i64, SandboxError> {
    match status {
        Some(Ok(response)) => Ok(response.status_code),
        // bollard reports a non-zero exit as an error carrying the code.
        Some(Err(DockerError::DockerContainerWaitError { code, .. })) => Ok(code),
        // The container may still run: the run cannot be judged (the caller
        // removes the container and may retry).
        Some(Err(e)) => Err(docker_error("wait for", name)(e)),
        None => Err(SandboxError::Docker {
            action: "wait for",
            container: name.to_string(),
            message: "the wait ended without a status".into(),
        }),
    }
}

async fn next_wait(
    wait: &mut Option<WaitStream<'_>>,
) -> Option<Result<bollard::models::ContainerWaitResponse, DockerError>> {
    match wait {
        Some(w) => w.next().await,
        None => std::future::pending().await,
    }
}

/// The run's record from how its loop ended: the kernel's OOM kill and the exit code from
/// the container (or the exec's `exec_exit`, when the run was an exec).
async fn finish(
    docker: &Docker,
    w: &Watched<'_>,
    pumped: Pumped,
    exec_exit: Option<Option<i64>>,
) -> Result<Execution, SandboxError> {
    let Pumped {
        capture,
        exit,
        exited_at,
        mut killed,
        timed_out,
        stream_broken,
        pids_limit_reached,
        after_summary,
    } = pumped;
    let duration = exited_at.map_or_else(|| w.started.elapsed(), |at| at.into_std() - w.started);
    let inspected = docker
        .inspect_container(w.name, None)
        .await
        .map_err(docker_error("inspect", w.name))?;
    let state = inspected.state.unwrap_or_default();
    // An exec's process killed by the kernel leaves the container running: its cgroup's
    // counter says so where Docker's flag may not.
    let oom = state.oom_killed == Some(true) || (exec_exit.is_some() && oom_kills(w.id) > 0);
    if oom && killed.is_none() {
        killed = Some(KillReason::OutOfMemory);
    }
    let mut exit_code = match exec_exit {
        Some(code) => code,
        None => exit.or(state.exit_code),
    };
    // Stopped after its summary (by the runner, not a limit): the exit the runner would
    // have made, from its own words (unittest's and pytest's: 1 when a test failed).
    let stopped_after_summary = after_summary.is_some() && killed.is_none() && !oom;
    if let (true, Some(failed)) = (stopped_after_summary, after_summary) {
        exit_code = Some(i64::from(failed));
    }
    let (output, seen) = capture.finish();
    if let Some(reason) = killed {
        metrics::counter!(crate::metrics::KILLS_TOTAL, "reason" => reason.as_str()).increment(1);
    }
    Ok(Execution {
        image_id: inspected.image.unwrap_or_default(),
        started_at: w.started_at.format(&Rfc3339).unwrap_or_default(),
        duration,
        exit_code,
        timed_out,
        killed,
        pids_limit_reached,
        output,
        markers: seen.markers,
        tests: seen.tests,
        failing: seen.failing,
        stream_broken,
        stopped_after_summary,
    })
}

/// A started container a run's command is executed in (a warm one of the pool).
pub(crate) struct Started<'a> {
    pub name: &'a str,
    pub id: &'a str,
    pub language: Language,
}

/// Runs the run's command in a started (pooled) container as an exec: the entry script,
/// then the command, as the run's user, in /work, with the run's variables. The container
/// is the run's alone; its limits, its network (none) and its mounts are the container's.
pub(crate) async fn exec_run(
    docker: &Docker,
    started_container: Started<'_>,
    command: &[String],
    env: &[String],
    user: (u32, u32),
    timeout: Duration,
    limits: OutputLimits,
) -> Result<Execution, SandboxError> {
    let name = started_container.name;
    let mut cmd = vec![ENTRY.to_string()];
    cmd.extend(command.iter().cloned());
    let mut all_env = vec!["HOME=/tmp".to_string()];
    all_env.extend(env.iter().cloned());
    let created = docker
        .create_exec(
            name,
            bollard::exec::CreateExecOptions {
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                attach_stdin: Some(false),
                tty: Some(false),
                env: Some(all_env),
                cmd: Some(cmd),
                user: Some(format!("{}:{}", user.0, user.1)),
                working_dir: Some(WORK.to_string()),
                ..Default::default()
            },
        )
        .await
        .map_err(docker_error("create an exec in", name))?;
    let started_at = OffsetDateTime::now_utc();
    let started = Instant::now();
    let output = match docker
        .start_exec(&created.id, None)
        .await
        .map_err(docker_error("start an exec in", name))?
    {
        bollard::exec::StartExecResults::Attached { output, .. } => output,
        bollard::exec::StartExecResults::Detached => {
            return Err(SandboxError::Docker {
                action: "attach to an exec in",
                container: name.to_string(),
                message: "the exec started detached".into(),
            });
        }
    };
    let watched = Watched {
        name,
        id: started_container.id,
        language: started_container.language,
        timeout,
        output: limits,
        started,
        started_at,
    };
    let pumped = pump(docker, &watched, output, None).await?;
    let exec_exit = docker
        .inspect_exec(&created.id)
        .await
        .ok()
        .filter(|i| i.running != Some(true))
        .and_then(|i| i.exit_code);
    finish(docker, &watched, pumped, Some(exec_exit)).await
}

fn spawn_kill(docker: &Docker, name: &str) -> tokio::task::JoinHandle<Result<(), SandboxError>> {
    let docker = docker.clone();
    let name = name.to_string();
    tokio::spawn(async move { kill(&docker, &name).await })
}

async fn join_kill(
    killing: &mut Option<tokio::task::JoinHandle<Result<(), SandboxError>>>,
) -> Result<(), SandboxError> {
    match killing {
        Some(handle) => handle.await.unwrap_or_else(|e| {
            Err(SandboxError::Docker {
                action: "kill",
                container: String::new(),
                message: format!("the kill task failed: {e}"),
            })
        }),
        None => std::future::pending().await,
    }
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// SIGKILL; a container that already stopped is fine.
async fn kill(docker: &Docker, name: &str) -> Result<(), SandboxError> {
    match docker
        .kill_container(
            name,
            Some(KillContainerOptions {
                signal: "KILL".to_string(),
            }),
        )
        .await
    {
        Ok(()) => Ok(()),
        Err(DockerError::DockerResponseServerError {
            status_code: 404 | 409,
            ..
        }) => Ok(()),
        Err(e) => Err(docker_error("kill", name)(e)),
    }
}

/// How long a removal another process has begun may take before the name is free.
const NAME_FREED_WITHIN: Duration = Duration::from_secs(30);

/// Waits until no container has `name` (a removal in progress elsewhere, which answers
/// 409 to a second one), for at most `within`.
async fn wait_gone(docker: &Docker, name: &str, within: Duration) {
    let started = Instant::now();
    while started.elapsed() < within {
        match docker.inspect_container(name, None).await {
            Err(DockerError::DockerResponseServerError {
                status_code: 404, ..
            }) => return,
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Removes a container (running or not); whether there was one.
pub(crate) async fn remove(docker: &Docker, name: &str) -> Result<bool, SandboxError> {
    match docker
        .remove_container(
            name,
            Some(RemoveContainerOptions {
                force: true,
                v: true,
                ..Default::default()
            }),
        )
        .await
    {
        Ok(()) => Ok(true),
        Err(DockerError::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(false),
        // "removal already in progress": someone else is removing it.
        Err(DockerError::DockerResponseServerError {
            status_code: 409, ..
        }) => Ok(false),
        Err(e) => Err(docker_error("remove", name)(e)),
    }
}

pub(crate) fn docker_error(
    action: &'static str,
    container: &str,
) -> impl FnOnce(DockerError) -> SandboxError {
    let container = container.to_string();
    move |e| match e {
        DockerError::DockerResponseServerError {
            status_code,
            message,
        } => SandboxError::Docker {
            action,
            container,
            message: format!("{message} (HTTP {status_code})"),
        },
        e => SandboxError::DockerUnavailable {
            endpoint: "the Docker socket".into(),
            message: format!("{action} {container}: {e}"),
        },
    }
}

/// Watches the container's pids cgroup while it runs: whether the kernel refused a fork
/// at the limit. The cgroup disappears with the container, so it is read during the run;
/// where it cannot be found (a remote daemon) the answer is false.
/// The container cgroup's files, wherever this host's Docker puts them (cgroup v1 or v2,
/// cgroupfs or systemd driver).
fn cgroup_files(controller: &str, id: &str, file: &str) -> Vec<PathBuf> {
    [
        format!("/sys/fs/cgroup/{controller}/docker/{id}/{file}"),
        format!("/sys/fs/cgroup/{controller}/system.slice/docker-{id}.scope/{file}"),
        format!("/sys/fs/cgroup/system.slice/docker-{id}.scope/{file}"),
        format!("/sys/fs/cgroup/docker/{id}/{file}"),
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// How many processes the kernel's OOM killer took in the container so far (0 when the
/// counter cannot be read).
fn oom_kills(id: &str) -> u64 {
    cgroup_files("memory", id, "memory.events")
        .iter()
        .chain(&cgroup_files("memory", id, "memory.oom_control"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| l.strip_prefix("oom_kill "))
                .filter_map(|n| n.trim().parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap_or(0)
}

fn watch_pids(id: &str) -> (watch::Sender<bool>, tokio::task::JoinHandle<bool>) {
    let (stop, mut stopped) = watch::channel(false);
    let candidates = cgroup_files("pids", id, "pids.events");
    let task = tokio::spawn(async move {
        loop {
            for path in &candidates {
                if let Ok(text) = tokio::fs::read_to_string(path).await
                    && text
                        .lines()
                        .any(|l| l.strip_prefix("max ").is_some_and(|n| n.trim() != "0"))
                {
                    return true;
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(PIDS_POLL) => {}
                _ = stopped.changed() => return false,
            }
        }
    });
    (stop, task)
}

/// Removes the container if the run is dropped before it removed it (the caller gave up
/// waiting); the sweep covers a runner that died outright.
pub(crate) struct Removal {
    docker: Docker,
    name: String,
    armed: bool,
}

impl Removal {
    pub fn new(docker: &Docker, name: &str) -> Removal {
        Removal {
            docker: docker.clone(),
            name: name.to_string(),
            armed: true,
        }
    }

    /// The container was removed: nothing left to do.
    pub fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for Removal {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let docker = self.docker.clone();
            let name = std::mem::take(&mut self.name);
            handle.spawn(async move {
                let _ = remove(&docker, &name).await;
            });
        }
    }
}
