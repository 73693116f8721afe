//! Meterless's engines as their specifications write them, with no IO: each keeps its state
//! in a value the caller holds (and serialises between calls), so the conformance runners
//! (`proven conformance-serve`, scripts/conformance) can drive them a call at a time.
//!
//! - [`markov`]: the Markovian engine's generic loop (engines/markovian). Proven's own use
//!   of bounded steps, the Planner's, is `proven_review::bounded`.
//! - [`hmem`]: H-MEM's record model (engines/hmem). Proven's memory of evidenced
//!   refutations is the store's `memory` table, written by the Judge, with stricter rules.
//! - [`intent`]: Scout Intent's Sense stage over an intent registry (engines/scout-intent).
//!   Proven's change classifier is `proven_review::steps::scout`.
//!
//! The World Model is the store's own (`proven_store::world`).

pub mod hmem;
pub mod intent;
pub mod markov;
