//! What a review fixes for all its steps: how long the Planner waits for the dependency
//! evidence, and the instant unpinned requirements resolve as of.

/// How long (from its creation) the Planner waits for unfinished dependency steps before it
/// plans without their findings. Waiting spends neither an attempt nor a rate-limit deferral.
pub const PLANNER_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// A review whose base is older than this many days prepares what its project does not pin
/// as of the base's commit time (the releases its code was written against), for both
/// sides; a younger base takes today's releases (and the cached preparation of its
/// declarations).
pub const RESOLVE_AS_OF_BASE_AFTER_DAYS: i64 = 30;

/// The instant a review resolves unpinned requirements as of, from its base's commit time.
pub fn resolve_before(base_committed_at: i64, now: i64) -> Option<i64> {
    (now - base_committed_at > RESOLVE_AS_OF_BASE_AFTER_DAYS * 86_400).then_some(base_committed_at)
}

#[cfg(test)]
mod tests {
    use super::resolve_before;

    #[test]
    fn a_review_of_an_old_base_resolves_as_of_the_base() {
        let day = 86_400;
        let now = 1_800_000_000;
        assert_eq!(resolve_before(now - 400 * day, now), Some(now - 400 * day));
        assert_eq!(resolve_before(now - 31 * day, now), Some(now - 31 * day));
        assert_eq!(
            resolve_before(now - 29 * day, now),
            None,
            "a young base: today's"
        );
        assert_eq!(
            resolve_before(now + day, now),
            None,
            "a base dated ahead: today's"
        );
    }
}
