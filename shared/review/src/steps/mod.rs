//! One module per review step, each with the same parts: its input, its handler, and its
//! outcome. The embedded runner calls them in order; the service (later) runs each as a job.

pub mod depfix;
pub mod deps;
pub mod intake;
pub mod pin;
pub mod scout;
pub mod writer;
