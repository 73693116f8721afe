//! The dependency evidence flow: `deps.collect` finds the dependency files the change
//! touches and starts one finding pipeline for each; `deps.file` evaluates one against the
//! advisory rows ([`crate::core::deps`]), writes what the head depends on to the World
//! Model, and proposes each finding's fix, proved by evaluating the patched file again.
//!
//! A flow imports `core/` (and the data and services not yet moved there) only: never
//! another flow, the registry or control (`tests/tidy` checks it).

pub mod evidence;
mod fixes;
pub mod judge;
mod reach;
pub mod skeptic;
mod trees;
pub mod wire;
mod world;
