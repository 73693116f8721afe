//! Admission: reviews wait in the store and enter the queues a few at a time, so Redis
//! stays short and every tenant gets its turn.
//!
//! What is considered: each tenant's oldest pending reviews (a window per tenant, see
//! [`Store::pending_reviews`]), so no tenant's queue, however long, can hide another
//! tenant's reviews. Order: strict priority (interactive < re-review < batch, so a batch
//! never delays an interactive review), then, inside a priority, tenants in turn — the
//! tenant with the fewest running reviews first, oldest review first — each within its
//! own limit.

use std::collections::{BTreeMap, HashMap, VecDeque};

use proven_store::{NewStep, PendingReview, Store, StoreError};

use crate::metrics_names as m;

#[derive(Debug, Clone)]
pub struct AdmissionConfig {
    /// Reviews running at once across all tenants (keeps the queues short).
    pub max_running: i64,
    /// The first step of an admitted review.
    pub first_step: &'static str,
    pub first_queue: &'static str,
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        AdmissionConfig {
            max_running: 64,
            first_step: "intake",
            first_queue: "evidence",
        }
    }
}

/// The order in which pending reviews are admitted, given running counts and limits.
pub fn order(
    pending: &[PendingReview],
    running: &HashMap<String, (i64, i64)>,
    free_slots: i64,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut used: HashMap<String, i64> = HashMap::new();
    let mut by_priority: BTreeMap<i64, Vec<&PendingReview>> = BTreeMap::new();
    for p in pending {
        by_priority.entry(p.priority).or_default().push(p);
    }
    for (_, reviews) in by_priority {
        // One FIFO per tenant; tenants served round-robin, least busy first.
        let mut queues: BTreeMap<String, VecDeque<&PendingReview>> = BTreeMap::new();
        for r in reviews {
            queues
                .entry(r.tenant_id.clone().unwrap_or_default())
                .or_default()
                .push_back(r);
        }
        loop {
            if out.len() as i64 >= free_slots {
                return out;
            }
            let mut tenants: Vec<(&String, i64)> = queues
                .iter()
                .filter(|(_, q)| !q.is_empty())
                .map(|(t, _)| {
                    (
                        t,
                        running.get(t).map_or(0, |r| r.0) + used.get(t).copied().unwrap_or(0),
                    )
                })
                .filter(|(t, n)| running.get(*t).is_none_or(|(_, limit)| *n < *limit))
                .collect();
            if tenants.is_empty() {
                break;
            }
            tenants.sort_by_key(|(t, n)| (*n, queues[*t].front().map_or(0, |r| r.created_us)));
            let tenant = tenants[0].0.clone();
            if let Some(r) = queues.get_mut(&tenant).and_then(VecDeque::pop_front) {
                out.push(r.id.clone());
                *used.entry(tenant).or_default() += 1;
            }
        }
    }
    out
}

/// Admits what fits now and returns the ids admitted, in the order they were. Safe to run
/// in many processes at once: admitting is a conditional update, so a review is admitted
/// once.
pub async fn admit(store: &Store, config: &AdmissionConfig) -> Result<Vec<String>, StoreError> {
    // What waits first: most passes find nothing, in one cheap query (the pending reviews'
    // partial index); only then the room for it. No tenant can be given more than the free
    // slots, at most `max_running`, so that is each tenant's window.
    let pending = store.pending_reviews(config.max_running).await?;
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    let running_total = store.running_reviews().await?;
    let free = config.max_running - running_total;
    if free <= 0 {
        return Ok(Vec::new());
    }
    let running: HashMap<String, (i64, i64)> = store
        .running_by_tenant()
        .await?
        .into_iter()
        .map(|(t, n, limit)| (t, (n, limit)))
        .collect();
    let mut admitted = Vec::new();
    for id in order(&pending, &running, free) {
        if store
            .admit_review(&id, &NewStep::new(config.first_step, config.first_queue))
            .await?
        {
            admitted.push(id);
        }
    }
    if !admitted.is_empty() {
        metrics::counter!(m::REVIEWS_ADMITTED_TOTAL).increment(admitted.len() as u64);
    }
    Ok(admitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: &str, tenant: &str, priority: i64, created: i64) -> PendingReview {
        PendingReview {
            id: id.into(),
            tenant_id: Some(tenant.into()),
            priority,
            created_us: created,
        }
    }

    #[test]
    fn priorities_are_strict_and_tenants_take_turns() {
        let pending = vec![
            p("a1", "a", 0, 1),
            p("a2", "a", 0, 2),
            p("a3", "a", 0, 3),
            p("b1", "b", 0, 4),
            p("batch", "c", 2, 0),
            p("rerun", "b", 1, 5),
        ];
        let running = HashMap::from([
            ("a".to_string(), (0, 10)),
            ("b".to_string(), (0, 10)),
            ("c".to_string(), (0, 10)),
        ]);
        assert_eq!(
            order(&pending, &running, 10),
            vec!["a1", "b1", "a2", "a3", "rerun", "batch"]
        );
        assert_eq!(order(&pending, &running, 2), vec!["a1", "b1"]);
    }

    #[test]
    fn a_tenant_at_its_limit_waits_and_others_go_on() {
        let pending = vec![p("a1", "a", 0, 1), p("b1", "b", 0, 2)];
        let running = HashMap::from([("a".to_string(), (2, 2)), ("b".to_string(), (5, 10))]);
        assert_eq!(order(&pending, &running, 10), vec!["b1"]);
    }

    #[test]
    fn the_least_busy_tenant_goes_first() {
        let pending = vec![p("a1", "a", 0, 1), p("b1", "b", 0, 2)];
        let running = HashMap::from([("a".to_string(), (3, 10)), ("b".to_string(), (0, 10))]);
        assert_eq!(order(&pending, &running, 1), vec!["b1"]);
    }
}
