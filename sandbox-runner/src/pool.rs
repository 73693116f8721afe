//! The warm pool: containers created and started ahead of the runs that will use them, each
//! with exactly the hardening and limits of a run's own container (no network, read-only
//! root, tmpfs scratch, cap_drop ALL, no-new-privileges, pids/memory/CPU limits, the sandbox
//! user), idling until a run takes it. A run takes one container exactly once: its tree is
//! moved into the directory bound at /src, its command runs as an exec (the entry script
//! first), and the container is removed after; the pool starts a replacement in the
//! background. When no warm container fits, the run starts cold, as without a pool.
//!
//! A container is warm for one key: its image and its dependencies' directory (bound at
//! /deps when it is created). Base, change and patched trees never share a container: each
//! run takes its own. A runner that dies leaves its idle containers to the sweep (they
//! carry its identity and a deadline).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bollard::Docker;

use crate::container::{self, ContainerSpec, Mount};
use crate::{Language, SandboxConfig, SandboxError};

/// Longest a container idles in the pool; an older one is replaced rather than used.
pub(crate) const MAX_IDLE: Duration = Duration::from_secs(600);
/// Prefix of a warm container's directory under the work directory (the sweep's too).
pub(crate) const DIR_PREFIX: &str = "pool-";

/// What a warm container is warm for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PoolKey {
    pub image: String,
    pub language: Language,
    /// The prepared dependencies bound at /deps.
    pub deps: Option<PathBuf>,
    /// The environment the dependencies need (part of the key: the container was created
    /// with nothing of it, but a run of another key must not take it).
    pub env: Vec<String>,
}

/// A started container waiting for a run.
pub(crate) struct Warm {
    pub name: String,
    pub id: String,
    pub language: Language,
    /// The host directory bound read-only at /src: the run's tree is moved into it.
    pub dir: tempfile::TempDir,
    born: Instant,
    /// Removes the container should the run holding it be dropped (its caller gave up).
    removal: container::Removal,
    /// The prepared layer it mounts, held while it lives: eviction never removes a layer
    /// under an idle warm container.
    _layer: Option<crate::deps::layer::InUse>,
}

pub(crate) struct Pool {
    docker: Docker,
    config: SandboxConfig,
    runner_label: String,
    owner_tag: String,
    warm: Mutex<HashMap<PoolKey, Vec<Warm>>>,
    /// Keys in the order they were last used (the least recent is dropped first).
    recent: Mutex<Vec<PoolKey>>,
    /// Set by `drain`: no container is started any more, and one started meanwhile goes.
    closed: AtomicBool,
    /// Refills and removals under way (`drain` waits for them).
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// One fill at a time: two would each count the same gap and overfill it.
    filling: tokio::sync::Mutex<()>,
}

impl Pool {
    pub fn new(
        docker: Docker,
        config: SandboxConfig,
        runner_label: String,
        owner_tag: String,
    ) -> Arc<Pool> {
        Arc::new(Pool {
            docker,
            config,
            runner_label,
            owner_tag,
            warm: Mutex::new(HashMap::new()),
            recent: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
            tasks: Mutex::new(Vec::new()),
            filling: tokio::sync::Mutex::new(()),
        })
    }

    /// A warm container for `key`, if one is ready (and young enough), renamed to `name`
    /// (the run's container name: a redelivered job finds its orphan by it).
    pub async fn take(&self, key: &PoolKey, name: &str) -> Option<Warm> {
        loop {
            let candidate = self
                .warm
                .lock()
                .ok()
                .and_then(|mut w| w.get_mut(key).and_then(|v| v.pop()));
            self.publish();
            let mut warm = candidate?;
            if warm.born.elapsed() >= MAX_IDLE {
                self.discard(warm).await;
                continue;
            }
            let renamed = self
                .docker
                .rename_container(
                    &warm.name,
                    bollard::query_parameters::RenameContainerOptions {
                        name: name.to_string(),
                    },
                )
                .await;
            match renamed {
                Ok(()) => {
                    warm.name = name.to_string();
                    warm.removal = container::Removal::new(&self.docker, name);
                    return Some(warm);
                }
                Err(e) => {
                    tracing::warn!(error = %e, container = %warm.name, "a warm container could not be renamed; the run starts cold");
                    self.discard(warm).await;
                    return None;
                }
            }
        }
    }

    /// Removes a container the pool will not use (and its directory).
    pub async fn discard(&self, mut warm: Warm) {
        if container::remove(&self.docker, &warm.name).await.is_ok() {
            warm.removal.disarm();
        }
        // The tree in its directory: deleting it is blocking file IO.
        let _ = tokio::task::spawn_blocking(move || drop(warm)).await;
    }

    /// Refills `key` and removes a used container, both in the background (its run's
    /// record does not wait for the kill and removal; `drain` does).
    pub fn retire(self: &Arc<Self>, warm: Warm, key: PoolKey) {
        self.refill(key);
        let pool = self.clone();
        let task = tokio::spawn(async move { pool.discard(warm).await });
        self.track(task);
    }

    fn track(&self, task: tokio::task::JoinHandle<()>) {
        if let Ok(mut tasks) = self.tasks.lock() {
            tasks.retain(|t| !t.is_finished());
            tasks.push(task);
        }
    }

    /// Starts containers for `key` in the background until it has `pool_size` ready; the
    /// least recently used keys beyond `pool_keys` lose theirs.
    pub fn refill(self: &Arc<Self>, key: PoolKey) {
        if self.config.pool_size == 0 || self.closed.load(Ordering::SeqCst) {
            return;
        }
        let evicted = self.touch(&key);
        let pool = self.clone();
        let task = tokio::spawn(async move {
            for old in evicted {
                pool.discard(old).await;
            }
            if let Err(e) = pool.fill(&key).await {
                tracing::warn!(error = %e, "the warm pool could not start a container");
            }
        });
        self.track(task);
    }

    /// Starts containers for `key` until it has `pool_size` ready; returns how many are.
    pub async fn fill(&self, key: &PoolKey) -> Result<usize, SandboxError> {
        let _one = self.filling.lock().await;
        loop {
            let have = self.count(key);
            if have >= self.config.pool_size || self.closed.load(Ordering::SeqCst) {
                return Ok(have);
            }
            let warm = self.launch(key).await?;
            if self.closed.load(Ordering::SeqCst) {
                self.discard(warm).await;
                return Ok(0);
            }
            if let Ok(mut w) = self.warm.lock() {
                w.entry(key.clone()).or_default().push(warm);
            }
            self.publish();
        }
    }

    /// Publishes how many containers are ready (after any change to the map).
    fn publish(&self) {
        metrics::gauge!(crate::metrics::POOL_READY).set(self.ready() as f64);
    }

    fn count(&self, key: &PoolKey) -> usize {
        self.warm
            .lock()
            .map(|w| w.get(key).map_or(0, Vec::len))
            .unwrap_or(usize::MAX)
    }

    /// Marks `key` used now; returns the containers of keys pushed out of the pool.
    pub fn touch(&self, key: &PoolKey) -> Vec<Warm> {
        let Ok(mut recent) = self.recent.lock() else {
            return Vec::new();
        };
        recent.retain(|k| k != key);
        recent.push(key.clone());
        let mut evicted = Vec::new();
        while recent.len() > self.config.pool_keys.max(1) {
            let old = recent.remove(0);
            if let Ok(mut w) = self.warm.lock()
                && let Some(v) = w.remove(&old)
            {
                evicted.extend(v);
            }
        }
        evicted
    }

    async fn launch(&self, key: &PoolKey) -> Result<Warm, SandboxError> {
        let work_dir = self.config.work_dir.clone();
        std::fs::create_dir_all(&work_dir).map_err(SandboxError::io("create", &work_dir))?;
        let dir = tempfile::Builder::new()
            .prefix(&format!("{DIR_PREFIX}{}-", self.owner_tag))
            .tempdir_in(&work_dir)
            .map_err(SandboxError::io("create a pool directory in", &work_dir))?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                .map_err(SandboxError::io("set permissions of", dir.path()))?;
        }
        let key_name = format!("pool-{}", uuid::Uuid::now_v7().simple());
        let name = container::container_name(&key_name);
        let spec = ContainerSpec {
            name: name.clone(),
            key: key_name,
            runner: self.runner_label.clone(),
            language: key.language,
            image: key.image.clone(),
            // The entry script runs once at start too (linking the dependencies, seeding
            // caches), then idles until the run's exec.
            command: vec!["sleep".into(), "infinity".into()],
            env: key.env.clone(),
            src: dir.path(),
            mounts: key
                .deps
                .as_deref()
                .map(|d| Mount::read_only(d, proven_sandbox_plan::deps::MOUNT))
                .into_iter()
                .collect(),
            limits: self.config.limits_for(key.language),
            user: self.config.user,
            timeout: MAX_IDLE + self.config.max_run_timeout(),
            output: self.config.output,
        };
        let layer = match key.deps.as_deref() {
            Some(d) => Some(crate::deps::layer::hold(d)?),
            None => None,
        };
        let id = container::launch(&self.docker, &spec).await?;
        Ok(Warm {
            _layer: layer,
            removal: container::Removal::new(&self.docker, &name),
            name,
            id,
            language: key.language,
            dir,
            born: Instant::now(),
        })
    }

    /// Removes every idle container and starts no more (a runner stopping): waits for the
    /// refills under way, whose containers go too.
    pub async fn drain(&self) {
        self.closed.store(true, Ordering::SeqCst);
        loop {
            let tasks: Vec<_> = self
                .tasks
                .lock()
                .map(|mut t| t.drain(..).collect())
                .unwrap_or_default();
            if tasks.is_empty() {
                break;
            }
            for task in tasks {
                let _ = task.await;
            }
        }
        let all: Vec<Warm> = self
            .warm
            .lock()
            .map(|mut w| w.drain().flat_map(|(_, v)| v).collect())
            .unwrap_or_default();
        self.publish();
        for warm in all {
            self.discard(warm).await;
        }
    }

    /// Containers ready now (for tests and metrics).
    pub fn ready(&self) -> usize {
        self.warm
            .lock()
            .map(|w| w.values().map(Vec::len).sum())
            .unwrap_or(0)
    }
}

/// Moves a materialised tree's entries into a warm container's directory (same filesystem:
/// renames), where the container sees them at /src.
pub(crate) fn move_tree(src: &Path, into: &Path) -> Result<(), SandboxError> {
    for entry in std::fs::read_dir(src).map_err(SandboxError::io("list", src))? {
        let entry = entry.map_err(SandboxError::io("list", src))?;
        let to = into.join(entry.file_name());
        std::fs::rename(entry.path(), &to).map_err(SandboxError::io("move into", &to))?;
    }
    Ok(())
}
