//! The sandbox's integration tests, against a real Docker engine (scripts/test starts
//! one; without one every test fails naming what to install). One binary, one module per
//! concern; every container a test makes has a unique name and the sandbox labels, and
//! is removed by the run itself (asserted) or by the test.

mod containment;
mod counts;
mod crash;
mod go;
mod node;
mod poison;
mod pool;
mod python;
mod rust;
mod support;
mod tool;
mod tree;
