//! Finding the containers a dead runner left behind.
//!
//! Every container is labelled with the runner process that owns it and a deadline. A
//! sweep removes a labelled container when its owner is provably gone (same machine and
//! process namespace, and that process no longer exists, or exists with another start
//! time: the pid was reused), or when its deadline passed (an owner the sweep cannot see,
//! on another machine, would have killed it by then). A live runner's containers —
//! created, running or just exited — are never touched, so any number of runners and
//! tests can sweep at once.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use bollard::Docker;
use bollard::query_parameters::ListContainersOptions;
use time::OffsetDateTime;

use crate::SandboxError;
use crate::container::{LABEL, LABEL_DEADLINE, LABEL_RUNNER, docker_error, remove};

/// Who owns a container: `boot-id:pid-namespace:pid:start-time`. The boot id and the pid
/// namespace say whether a sweeper can check the pid at all; the start time (clock ticks
/// since boot) tells a reused pid from the owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerIdentity {
    pub boot_id: String,
    pub pid_namespace: String,
    pub pid: u32,
    pub start_time: u64,
}

impl RunnerIdentity {
    /// This process.
    pub fn current() -> RunnerIdentity {
        let pid = std::process::id();
        RunnerIdentity {
            boot_id: boot_id(),
            pid_namespace: pid_namespace(),
            pid,
            start_time: start_time(pid).unwrap_or(0),
        }
    }

    pub fn label(&self) -> String {
        format!(
            "{}:{}:{}:{}",
            self.boot_id, self.pid_namespace, self.pid, self.start_time
        )
    }

    pub fn parse(label: &str) -> Option<RunnerIdentity> {
        let mut parts = label.split(':');
        let identity = RunnerIdentity {
            boot_id: parts.next()?.to_string(),
            pid_namespace: parts.next()?.to_string(),
            pid: parts.next()?.parse().ok()?,
            start_time: parts.next()?.parse().ok()?,
        };
        parts.next().is_none().then_some(identity)
    }

    /// The same identity as a file-name part (`BOOT.PIDNS.PID.START`, the boot id cut
    /// to 8 characters): run directories and dependency staging directories carry it,
    /// so a sweep can remove what a dead runner left on disk too.
    pub fn tag(&self) -> String {
        let boot: String = self.boot_id.chars().take(8).collect();
        format!(
            "{boot}.{}.{}.{}",
            self.pid_namespace, self.pid, self.start_time
        )
    }

    /// Judges the owner named by a [`RunnerIdentity::tag`].
    pub fn judge_tag(&self, tag: &str) -> Liveness {
        let mut parts = tag.split('.');
        let (Some(boot), Some(pidns), Some(pid), Some(start), None) = (
            parts.next(),
            parts.next(),
            parts.next().and_then(|p| p.parse().ok()),
            parts.next().and_then(|s| s.parse().ok()),
            parts.next(),
        ) else {
            return Liveness::Unknown;
        };
        if boot.len() < 8 || !self.boot_id.starts_with(boot) {
            return Liveness::Unknown;
        }
        self.judge(&RunnerIdentity {
            boot_id: self.boot_id.clone(),
            pid_namespace: pidns.to_string(),
            pid,
            start_time: start,
        })
    }

    /// Whether `owner` can be judged from here, and if so whether it is alive.
    pub fn judge(&self, owner: &RunnerIdentity) -> Liveness {
        if owner.boot_id != self.boot_id
            || owner.pid_namespace != self.pid_namespace
            || owner.boot_id.is_empty()
            || owner.pid_namespace.is_empty()
        {
            return Liveness::Unknown;
        }
        match (start_time(owner.pid), process_state(owner.pid)) {
            // A zombie has exited; only its parent has not reaped it yet.
            (_, Some('Z' | 'X')) => Liveness::Dead,
            (Some(start), _) if start == owner.start_time => Liveness::Alive,
            _ => Liveness::Dead,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    Dead,
    /// Another machine or process namespace: only the deadline can tell.
    Unknown,
}

/// Whether a labelled container is a leftover, from its labels alone.
pub(crate) fn is_leftover(
    me: &RunnerIdentity,
    labels: &HashMap<String, String>,
    now_unix: i64,
) -> bool {
    let deadline = labels
        .get(LABEL_DEADLINE)
        .and_then(|d| d.parse::<i64>().ok());
    // Without a readable deadline nobody can be waiting on it by contract.
    let Some(deadline) = deadline else {
        return true;
    };
    if deadline < now_unix {
        return true;
    }
    match labels
        .get(LABEL_RUNNER)
        .and_then(|r| RunnerIdentity::parse(r))
    {
        Some(owner) => me.judge(&owner) == Liveness::Dead,
        None => false,
    }
}

/// Removes every leftover sandbox container; returns how many.
pub(crate) async fn sweep(docker: &Docker, me: &RunnerIdentity) -> Result<usize, SandboxError> {
    let filters = HashMap::from([("label".to_string(), vec![format!("{LABEL}=1")])]);
    let containers = docker
        .list_containers(Some(ListContainersOptions {
            all: true,
            filters: Some(filters),
            ..Default::default()
        }))
        .await
        .map_err(docker_error("list", "sandbox containers"))?;
    let now = OffsetDateTime::now_utc().unix_timestamp();
    let mut removed = 0;
    for container in containers {
        let labels = container.labels.unwrap_or_default();
        if !is_leftover(me, &labels, now) {
            continue;
        }
        let Some(id) = container.id else { continue };
        let name = container
            .names
            .and_then(|n| n.into_iter().next())
            .unwrap_or_else(|| id.clone());
        if remove(docker, &id).await? {
            removed += 1;
            tracing::info!(container = %name.trim_start_matches('/'), "swept a leftover sandbox container");
        }
    }
    metrics::counter!(crate::metrics::SWEPT_TOTAL).increment(removed as u64);
    Ok(removed)
}

/// Removes the entries of `parent` named `PREFIX TAG-…` whose runner is dead (a run's
/// tree, a half-prepared dependency directory); returns how many.
pub(crate) fn sweep_dirs(me: &RunnerIdentity, parent: &Path, prefix: &str) -> usize {
    let Ok(entries) = fs::read_dir(parent) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(tag) = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if me.judge_tag(tag) == Liveness::Dead && fs::remove_dir_all(entry.path()).is_ok() {
            tracing::info!(path = %entry.path().display(), "swept a leftover directory");
            removed += 1;
        }
    }
    removed
}

fn boot_id() -> String {
    fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn pid_namespace() -> String {
    fs::read_link("/proc/self/ns/pid")
        .map(|p| {
            p.to_string_lossy()
                .trim_start_matches("pid:[")
                .trim_end_matches(']')
                .to_string()
        })
        .unwrap_or_default()
}

/// Fields of /proc/PID/stat after the command name (which may hold spaces and parens).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    Some(after.split_whitespace().map(str::to_string).collect())
}

fn process_state(pid: u32) -> Option<char> {
    stat_fields(pid)?.first()?.chars().next()
}

/// The start time field (the 22nd of stat; the 20th after the command name).
fn start_time(pid: u32) -> Option<u64> {
    stat_fields(pid)?.get(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(runner: &str, deadline: i64) -> HashMap<String, String> {
        HashMap::from([
            (LABEL.to_string(), "1".to_string()),
            (LABEL_RUNNER.to_string(), runner.to_string()),
            (LABEL_DEADLINE.to_string(), deadline.to_string()),
        ])
    }

    #[test]
    fn identity_round_trips_through_its_label() {
        let me = RunnerIdentity::current();
        assert!(me.start_time > 0, "this process has a start time");
        assert_eq!(RunnerIdentity::parse(&me.label()), Some(me.clone()));
        assert_eq!(me.judge(&me), Liveness::Alive);
    }

    #[test]
    fn directories_of_dead_runners_are_swept_and_live_ones_kept() {
        let me = RunnerIdentity::current();
        assert_eq!(me.judge_tag(&me.tag()), Liveness::Alive);
        // A runner that ran and exited: its pid no longer names it.
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        let _ = child.wait();
        let dead = RunnerIdentity { pid, ..me.clone() };
        let dir = tempfile::tempdir().expect("temporary directory");
        for name in [
            format!("run-{}-abc", me.tag()),
            format!("run-{}-def", dead.tag()),
            "run-not-a-tag".to_string(),
            format!("other-{}-x", dead.tag()),
        ] {
            fs::create_dir(dir.path().join(name)).expect("create");
        }
        assert_eq!(sweep_dirs(&me, dir.path(), "run-"), 1);
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .expect("list")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            vec![
                format!("other-{}-x", dead.tag()),
                format!("run-{}-abc", me.tag()),
                "run-not-a-tag".to_string(),
            ]
        );
    }

    #[test]
    fn leftovers_are_containers_of_dead_runners_or_past_their_deadline() {
        let me = RunnerIdentity::current();
        let now = 1_000_000;
        assert!(!is_leftover(&me, &labels(&me.label(), now + 60), now));
        assert!(is_leftover(&me, &labels(&me.label(), now - 1), now));
        let reused = RunnerIdentity {
            start_time: me.start_time + 1,
            ..me.clone()
        };
        assert!(is_leftover(&me, &labels(&reused.label(), now + 60), now));
        let elsewhere = RunnerIdentity {
            boot_id: "another-machine".into(),
            ..me.clone()
        };
        assert!(!is_leftover(
            &me,
            &labels(&elsewhere.label(), now + 60),
            now
        ));
        assert!(is_leftover(&me, &labels(&elsewhere.label(), now - 1), now));
        assert!(is_leftover(&me, &HashMap::new(), now));
    }
}
