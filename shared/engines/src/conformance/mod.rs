//! The engines' conformance cases, kept in the repository so they run with the project's
//! tests (`cargo test -p proven-engines`), without a Meterless checkout: each case follows a
//! check of Meterless's runner for that engine (its id where the runner has one; Markovian and
//! H-MEM's runners, Scout Intent's eval harness over a registry of Proven's own, since the
//! harness's corpus stays in Meterless), plus the checks `docs/conformance/README.md` says
//! the runners miss. Every case drives the engine through [`crate::serve`], the same JSON
//! operations `proven conformance-serve` answers the runners with.
//!
//! The runners themselves still run unmodified through `scripts/conformance/run`.

mod hmem;
mod markovian;
mod scout_intent;

pub use hmem::hmem;
pub use markovian::markovian;
pub use scout_intent::scout_intent;

/// One case and how it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub id: &'static str,
    pub description: &'static str,
    /// Why it failed, when it did.
    pub failure: Option<String>,
}

/// An engine's cases, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scorecard {
    pub engine: &'static str,
    pub cases: Vec<Case>,
}

impl Scorecard {
    fn new(engine: &'static str) -> Scorecard {
        Scorecard {
            engine,
            cases: Vec::new(),
        }
    }

    fn record(
        &mut self,
        id: &'static str,
        description: &'static str,
        check: impl FnOnce() -> Result<(), String>,
    ) {
        self.cases.push(Case {
            id,
            description,
            failure: check().err(),
        });
    }

    /// The ids of the cases that failed.
    pub fn failed(&self) -> Vec<&'static str> {
        self.cases
            .iter()
            .filter(|c| c.failure.is_some())
            .map(|c| c.id)
            .collect()
    }
}

impl std::fmt::Display for Scorecard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for c in &self.cases {
            match &c.failure {
                None => writeln!(f, "  PASS {} {}", c.id, c.description)?,
                Some(why) => writeln!(f, "  FAIL {} {}\n       {why}", c.id, c.description)?,
            }
        }
        let passed = self.cases.len() - self.failed().len();
        write!(
            f,
            "  {}: {passed}/{} checks passed",
            self.engine,
            self.cases.len()
        )
    }
}

/// Fails with `what` unless `cond`.
fn ensure(cond: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if cond { Ok(()) } else { Err(what()) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_engine_passes_its_conformance_cases() {
        for card in [super::markovian(), super::hmem(), super::scout_intent()] {
            assert!(card.failed().is_empty(), "{card}");
            assert!(card.cases.len() >= 7, "{card}");
        }
    }
}
