//! Meterless's engines as their specifications write them, with no IO: each keeps its state
//! in a value the caller holds (and serialises between calls), so the conformance runners
//! (`proven conformance-serve`, scripts/conformance) can drive them a call at a time.
//!
//! Reviews run these engines; there is no second implementation of any of them:
//! - [`markov`]: the Markovian engine's generic loop (engines/markovian). The Planner's
//!   bounded steps (`proven_review::core::bounded`) count tokens, bound their carried state and end
//!   their runs with it ([`markov::pinned`] is Proven's carryover of a structured state).
//! - [`hmem`]: H-MEM's record model (engines/hmem). Proven's memory of evidenced refutations
//!   is kept by the store (its `memory` table, written by the Judge, matched by fingerprint
//!   first); the refutations like a claim are scored, ranked and bounded by
//!   [`hmem::retrieval`] (`proven_store`'s `memory_similar`).
//! - [`intent`]: Scout Intent's Sense stage over an intent registry (engines/scout-intent).
//!   Proven's change classifier (`proven_review::flows::plan::scout`) routes its kinds of change
//!   through [`intent::route`] and [`intent::band`].
//!
//! Where Proven's rule differs from the spec's, the engine takes it as configuration
//! ([`markov::pinned`], [`hmem::Retrieval`], [`intent::Routing`]); the spec's rule stays what
//! the conformance runners and [`conformance`]'s cases check. [`serve`] is the JSON the
//! runners speak; [`conformance`] holds the cases that run with the project's tests.
//!
//! The World Model is the store's own (`proven_store::world`).

pub mod conformance;
pub mod hmem;
pub mod intent;
pub mod markov;
#[cfg(any(test, feature = "mutation"))]
pub mod mutation;
pub mod serve;
