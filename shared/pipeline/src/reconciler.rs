//! The loop every process runs beside its work: push due jobs, admit reviews, re-enqueue
//! what the queue lost, judge overdue reviews, publish queue depth.

use std::sync::Arc;
use std::time::Duration;

use proven_store::Store;

use crate::Queue;
use crate::admission::{AdmissionConfig, admit};
use crate::metrics_names as m;
use crate::pusher::push_due;

/// The shortest time between two admission runs a review's end asks for.
const ADMISSION_GAP: Duration = Duration::from_millis(10);

/// The longest the tick lets the outbox go undrained while drains keep finding nothing (a
/// retry falls due at most this late; a local commit's jobs never wait for the tick).
const MAX_DRAIN_GAP: Duration = Duration::from_millis(800);

#[derive(Debug, Clone)]
pub struct ReconcilerConfig {
    /// How often the outbox is drained (the per-hop latency floor when a commit happens
    /// elsewhere; a local commit pushes at once through [`wake`]).
    pub push_every: Duration,
    /// How often lost jobs are looked for.
    pub reconcile_every: Duration,
    /// A queued step whose job was pushed longer ago than this (and not started) is
    /// pushed again: the queue may have lost it.
    pub stale_after: Duration,
    pub admission: AdmissionConfig,
}

impl Default for ReconcilerConfig {
    fn default() -> Self {
        ReconcilerConfig {
            push_every: Duration::from_millis(50),
            reconcile_every: Duration::from_secs(2),
            stale_after: Duration::from_secs(45),
            admission: AdmissionConfig::default(),
        }
    }
}

/// A handle to wake the reconciler early: [`Wake::wake`] after a local commit (its jobs
/// leave at once instead of at the next tick), [`Wake::wake_admission`] when a review ended
/// (its slot is free). A plain wake only pushes: admission's queries run on the tick and
/// when a slot frees, never once per step.
#[derive(Clone, Default)]
pub struct Wake(Arc<WakeInner>);

#[derive(Default)]
struct WakeInner {
    notify: tokio::sync::Notify,
    admit: std::sync::atomic::AtomicBool,
    push: std::sync::atomic::AtomicBool,
}

impl Wake {
    pub fn wake(&self) {
        self.0
            .push
            .store(true, std::sync::atomic::Ordering::Release);
        self.0.notify.notify_one();
    }

    /// Whether a push was asked for (a local commit wrote jobs).
    fn take_push(&self) -> bool {
        self.0.push.swap(false, std::sync::atomic::Ordering::AcqRel)
    }

    pub fn wake_admission(&self) {
        self.0
            .admit
            .store(true, std::sync::atomic::Ordering::Release);
        self.0.notify.notify_one();
    }

    /// Whether admission was asked for; the ask stays for later when `now` is not yet.
    fn take_admission(&self, now: bool) -> bool {
        if !now {
            return false;
        }
        self.0
            .admit
            .swap(false, std::sync::atomic::Ordering::AcqRel)
    }
}

/// Runs until `stop` resolves. Errors are logged and retried on the next tick: a store or
/// queue outage delays work, never wedges it.
pub async fn run(
    store: Store,
    queue: Arc<dyn Queue>,
    config: ReconcilerConfig,
    wake: Wake,
    stop: impl std::future::Future<Output = ()> + Send,
) {
    tokio::pin!(stop);
    let mut reconcile = tokio::time::interval(config.reconcile_every);
    let mut push = tokio::time::interval(config.push_every);
    push.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    reconcile.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Reviews that end in quick succession (short reviews under load) ask for one admission
    // run each: at most one run per ADMISSION_GAP answers them all (the tick runs it anyway).
    let mut admitted_at = tokio::time::Instant::now();
    // The tick's drains back off while they find nothing (doubling up to MAX_DRAIN_GAP) and
    // come back to every tick as soon as one finds jobs.
    let mut drain_gap = config.push_every;
    let mut drained_at = tokio::time::Instant::now();
    loop {
        // The outbox is drained on the tick, when a local commit wrote jobs, and when
        // admission admitted reviews (their first steps' jobs): a wake that only asks for
        // admission and admits nothing leaves it alone (on a busy store an empty outbox
        // still costs a scan over the rows drained before vacuum took them).
        let mut push_now: bool;
        let admit_now = tokio::select! {
            _ = &mut stop => return,
            _ = push.tick() => {
                push_now = drained_at.elapsed() >= drain_gap;
                true
            }
            _ = wake.0.notify.notified() => {
                push_now = wake.take_push();
                wake.take_admission(admitted_at.elapsed() >= ADMISSION_GAP)
            }
            _ = reconcile.tick() => {
                let stale = i64::try_from(config.stale_after.as_micros()).unwrap_or(i64::MAX);
                match store.requeue_lost(stale).await {
                    Ok(n) if n > 0 => {
                        tracing::info!(requeued = n, "re-enqueued steps the queue lost");
                        metrics::counter!(m::REQUEUED_TOTAL).increment(n);
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "reconcile failed"),
                }
                if let Err(e) = store.judge_overdue().await {
                    tracing::warn!(error = %e, "overdue check failed");
                }
                match store.pipeline_depth().await {
                    Ok(depth) => {
                        for (queue, state, n) in depth_series(depth) {
                            metrics::gauge!(m::QUEUE_DEPTH, "queue" => queue, "state" => state).set(n as f64);
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "queue depth count failed"),
                }
                if let Ok(oldest) = store.queue_oldest().await {
                    let now = proven_store::now_us();
                    for family in crate::QUEUES {
                        let age = oldest
                            .iter()
                            .filter(|(q, _)| q.as_str() == *family || q.strip_suffix(proven_store::ISOLATED_SUFFIX) == Some(family))
                            .map(|(_, us)| now.saturating_sub(*us))
                            .max()
                            .unwrap_or(0);
                        metrics::gauge!(m::QUEUE_OLDEST_SECONDS, "queue" => *family).set(age as f64 / 1e6);
                    }
                }
                push_now = true;
                true
            }
        };
        if admit_now {
            admitted_at = tokio::time::Instant::now();
            match admit(&store, &config.admission).await {
                Ok(admitted) => push_now |= !admitted.is_empty(),
                Err(e) => tracing::warn!(error = %e, "admission failed"),
            }
        }
        if push_now {
            drained_at = tokio::time::Instant::now();
            match push_due(&store, queue.as_ref(), 500).await {
                Ok(0) => drain_gap = (drain_gap * 2).min(MAX_DRAIN_GAP.max(config.push_every)),
                Ok(_) => drain_gap = config.push_every,
                Err(e) => tracing::warn!(error = %e, "push failed"),
            }
        }
    }
}

/// The states a queue's depth counts: what waits and what runs.
pub const DEPTH_STATES: &[&str] = &["queued", "running"];

/// Every series of the queue-depth gauge from the store's count: each queue of
/// [`crate::ALL_QUEUES`] (and any other the store names) in each of [`DEPTH_STATES`], 0 where
/// the count lists none. A gauge keeps the last value it was set to: a queue that empties
/// must be set to 0, not left out, or it would go on exporting its last depth.
pub fn depth_series(counted: Vec<(String, String, i64)>) -> Vec<(String, String, i64)> {
    let mut series: std::collections::BTreeMap<(String, String), i64> = crate::ALL_QUEUES
        .iter()
        .flat_map(|q| {
            DEPTH_STATES
                .iter()
                .map(move |s| ((q.to_string(), s.to_string()), 0))
        })
        .collect();
    for (queue, state, n) in counted {
        if !DEPTH_STATES.contains(&state.as_str()) {
            continue;
        }
        *series.entry((queue, state)).or_default() += n;
    }
    series.into_iter().map(|((q, s), n)| (q, s, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_queue_is_exported_as_zero_not_left_at_its_last_depth() {
        let busy = depth_series(vec![("evidence".into(), "queued".into(), 3)]);
        assert!(busy.contains(&("evidence".into(), "queued".into(), 3)));
        // The store lists nothing once the queue is drained: every series still comes out, at 0.
        let drained = depth_series(Vec::new());
        assert_eq!(drained.len(), crate::ALL_QUEUES.len() * DEPTH_STATES.len());
        assert!(drained.contains(&("evidence".into(), "queued".into(), 0)));
        assert!(drained.iter().all(|(_, _, n)| *n == 0), "{drained:?}");
        // A finished state is no depth.
        let done = depth_series(vec![("model".into(), "done".into(), 40)]);
        assert!(
            done.iter().all(|(_, s, n)| s != "done" && *n == 0),
            "{done:?}"
        );
    }
}
