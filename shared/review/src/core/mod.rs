//! What every step shares, below them all: the steps' names and the settings a review fixes
//! for all its steps. A step module, the Judge and the registry import from here; nothing
//! here imports them (`tests/tidy` checks it).

pub mod review;
pub mod step_name;
