//! The sandbox's metrics, through the `metrics` facade (the process that embeds the
//! runner installs the exporter). One catalogue of names; label values are bounded.

/// Counter, label `outcome`: passed, test_failed, environment_error, runner_error.
pub const RUNS_TOTAL: &str = "proven_sandbox_runs_total";
/// Histogram: seconds from the container's start to its exit.
pub const RUN_DURATION_SECONDS: &str = "proven_sandbox_run_duration_seconds";
/// Histogram: seconds a whole run took (tree, dependencies, container, removal).
pub const RUN_TOTAL_SECONDS: &str = "proven_sandbox_run_total_seconds";
/// Counter, label `reason`: timeout, out_of_memory, output_limit.
pub const KILLS_TOTAL: &str = "proven_sandbox_kills_total";
/// Gauge: runs holding a slot now (pool utilisation = busy / slots).
pub const SLOTS_BUSY: &str = "proven_sandbox_slots_busy";
/// Gauge: slots of this runner.
pub const SLOTS: &str = "proven_sandbox_slots";
/// Counter: containers a sweep (or a retried run) removed.
pub const SWEPT_TOTAL: &str = "proven_sandbox_swept_containers_total";
/// Counter, label `result`: hit, prepared, failed.
pub const DEPENDENCIES_TOTAL: &str = "proven_sandbox_dependency_preparations_total";

/// Gauge: warm containers ready in this runner's pool.
pub const POOL_READY: &str = "proven_sandbox_pool_ready";
/// Counter, label `result`: warm (the run took a warm container), cold (none was ready).
pub const POOL_TAKES_TOTAL: &str = "proven_sandbox_pool_takes_total";

/// Registers the descriptions (call once after installing an exporter).
pub fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(RUNS_TOTAL, "Sandbox runs by outcome.");
    describe_histogram!(
        RUN_DURATION_SECONDS,
        Unit::Seconds,
        "Container time of a sandbox run."
    );
    describe_histogram!(
        RUN_TOTAL_SECONDS,
        Unit::Seconds,
        "Whole sandbox run: tree, dependencies, container, removal."
    );
    describe_counter!(KILLS_TOTAL, "Sandbox runs killed, by reason.");
    describe_gauge!(SLOTS_BUSY, "Sandbox runs holding a slot.");
    describe_gauge!(SLOTS, "Sandbox run slots of this runner.");
    describe_counter!(SWEPT_TOTAL, "Leftover sandbox containers removed.");
    describe_gauge!(POOL_READY, "Warm sandbox containers ready.");
    describe_counter!(
        POOL_TAKES_TOTAL,
        "Sandbox runs by the container they ran in (warm from the pool, or cold)."
    );
    describe_counter!(
        crate::deps::layer::CACHE_LOOKUPS_TOTAL,
        "Prepared-layer cache lookups by result (hit, miss)."
    );
    describe_counter!(
        crate::deps::layer::CACHE_EVICTIONS_TOTAL,
        "Prepared layers removed to keep the cache under its size cap (least recently used first)."
    );
    describe_counter!(
        crate::deps::layer::CACHE_ALTERED_TOTAL,
        "Prepared layers found altered on disk (removed; the run failed by name)."
    );
    describe_gauge!(
        crate::deps::layer::CACHE_BYTES,
        Unit::Bytes,
        "Bytes the prepared layers of this runner's cache take on disk."
    );
    describe_counter!(
        DEPENDENCIES_TOTAL,
        "Dependency preparations by result (hit, prepared, failed)."
    );
}

/// Exports as 0 the counters of events that may not have happened yet in this runner, and
/// an empty pool. Call once after installing an exporter.
pub fn register_zeros() {
    for name in [
        KILLS_TOTAL,
        SWEPT_TOTAL,
        POOL_TAKES_TOTAL,
        DEPENDENCIES_TOTAL,
        crate::deps::layer::CACHE_LOOKUPS_TOTAL,
        crate::deps::layer::CACHE_EVICTIONS_TOTAL,
        crate::deps::layer::CACHE_ALTERED_TOTAL,
    ] {
        metrics::counter!(name).increment(0);
    }
    metrics::gauge!(POOL_READY).set(0.0);
}
