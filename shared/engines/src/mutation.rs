//! A test's knob that breaks one rule of one engine, on the calling thread only, until the
//! guard it returns is dropped. It exists so one test can show that breaking a rule moves
//! both the engine's conformance cases ([`crate::conformance`]) and the review code that runs
//! the engine. Compiled only for this crate's tests and the `mutation` feature (which only
//! dev-dependencies enable); the rule is off unless a test turns it on.

use std::cell::Cell;

/// The one rule per engine a mutation breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Markovian: a carried state is held to its budget ([`crate::markov::within_budget`]
    /// answers yes whatever the size).
    MarkovCarryBudget,
    /// H-MEM: retrieval ranks best first ([`crate::hmem::rank`] keeps the order it was given).
    HmemBestFirst,
    /// Scout Intent: the canonical bands ([`crate::intent::band`] lowers the Medium floor to
    /// the Low one, so nothing is Low).
    IntentBands,
}

thread_local! {
    static BROKEN: Cell<Option<Rule>> = const { Cell::new(None) };
}

pub(crate) fn on(rule: Rule) -> bool {
    BROKEN.with(|b| b.get() == Some(rule))
}

/// Mends the rule when dropped.
#[must_use = "the rule is mended when the guard is dropped"]
pub struct Broken(());

impl Drop for Broken {
    fn drop(&mut self) {
        BROKEN.with(|b| b.set(None));
    }
}

/// Breaks `rule` on this thread until the guard is dropped.
pub fn breaking(rule: Rule) -> Broken {
    BROKEN.with(|b| b.set(Some(rule)));
    Broken(())
}
